//! The tests through SQL on MariaDB/MySQL, one session per thread with its own connection.
//! A request is one lookup, one batch, one scan chunk, one update, one bulk insert or one
//! commit, each timed into dbio's own recorder like a `dbio run` request. Statements are
//! prepared once per session; every statement autocommits.

use mysql::prelude::Queryable;
use mysql::{Conn, Statement};

use crate::database::{CHUNK_PAGES, Shape, Spec};
use crate::error::{Error, Result};
use crate::measure::recorder::Recorder;
use crate::run::requester::{Halt, Lost, Requester};
use crate::sys::now_ns;

use super::connect::{error_text, server_code};
use super::load::{PAD, ROWS_PER_PAGE, numbers};

/// The session settings every session makes (`SET SESSION name = value`): never a server
/// setting.
pub fn session_set(_spec: &Spec) -> Vec<(String, String)> {
    vec![("autocommit".into(), "1".into())]
}

/// One session, ready to run.
pub struct Session {
    conn: Conn,
    id: u32,
    spec: Spec,
    stmt: Statement,
    /// Empties the session's bulk table (write-mbps).
    empty: Option<Statement>,
    ids: Vec<u32>,
    rng: fastrand::Rng,
}

fn prep(c: &mut Conn, sql: &str) -> Result<Statement> {
    c.prep(sql)
        .map_err(|e| Error::other(format!("preparing a session: {}", error_text(&e))))
}

impl Session {
    pub fn new(mut conn: Conn, spec: &Spec, db: &str, id: u32) -> Result<Session> {
        for (n, v) in session_set(spec) {
            conn.query_drop(format!("SET SESSION {n} = {v}"))
                .map_err(|e| Error::other(format!("SET {n}: {}", error_text(&e))))?;
        }
        let (stmt, empty) = match spec.shape {
            Shape::Lookup => (
                // Not `id = ?`: InnoDB searches inner pages for "less than" the key, so an
                // equality search for a page's first key reads the page before it too.
                prep(
                    &mut conn,
                    &format!(
                        "SELECT LENGTH(pad) FROM {db}.blocks WHERE id <= ? ORDER BY id DESC LIMIT 1"
                    ),
                )?,
                None,
            ),
            Shape::Batch => {
                let marks = vec!["?"; spec.batch as usize].join(",");
                (
                    prep(
                        &mut conn,
                        &format!("SELECT SUM(LENGTH(pad)) FROM {db}.blocks WHERE id IN ({marks})"),
                    )?,
                    None,
                )
            }
            Shape::Scan => (
                prep(
                    &mut conn,
                    &format!("SELECT SUM(LENGTH(pad)) FROM {db}.blocks WHERE id >= ? AND id < ?"),
                )?,
                None,
            ),
            Shape::Update => (
                prep(
                    &mut conn,
                    &format!("UPDATE {db}.blocks SET n = n + 1 WHERE id = ?"),
                )?,
                None,
            ),
            Shape::Copy => (
                prep(
                    &mut conn,
                    &format!(
                        "INSERT INTO {db}.bulk_{id} SELECT n, REPEAT('x', {PAD}) FROM {}",
                        numbers(CHUNK_PAGES * ROWS_PER_PAGE)
                    ),
                )?,
                Some(prep(&mut conn, &format!("TRUNCATE TABLE {db}.bulk_{id}"))?),
            ),
            Shape::Commit => (
                prep(
                    &mut conn,
                    &format!("INSERT INTO {db}.commits (session, n) VALUES (?, ?)"),
                )?,
                None,
            ),
        };
        Ok(Session {
            conn,
            id,
            spec: spec.clone(),
            stmt,
            empty,
            ids: Vec::with_capacity(spec.batch as usize),
            rng: fastrand::Rng::with_seed(
                spec.seed ^ (u64::from(id) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        })
    }

    /// One statement of the session's shape; `next`: the next row of its scan stripe.
    fn one(&mut self, next: &mut u64, stripe: (u64, u64), copied: &mut u64) -> mysql::Result<bool> {
        let spec = &self.spec;
        let rows = (spec.rows * ROWS_PER_PAGE).max(1) as u32;
        match spec.shape {
            Shape::Lookup => {
                let id = self.rng.u32(1..=rows);
                self.conn
                    .exec_first::<Option<u64>, _, _>(&self.stmt, (id,))?;
            }
            Shape::Update => {
                let id = self.rng.u32(0..rows);
                self.conn.exec_drop(&self.stmt, (id,))?;
            }
            Shape::Batch => {
                self.ids.clear();
                for _ in 0..spec.batch {
                    self.ids.push(self.rng.u32(0..rows));
                }
                let params: Vec<mysql::Value> = self.ids.iter().map(|&i| i.into()).collect();
                self.conn
                    .exec_first::<Option<u64>, _, _>(&self.stmt, params)?;
            }
            Shape::Scan => {
                let a = *next;
                let b = a + CHUNK_PAGES * ROWS_PER_PAGE;
                *next = if b + CHUNK_PAGES * ROWS_PER_PAGE > stripe.1 {
                    stripe.0
                } else {
                    b
                };
                self.conn
                    .exec_first::<Option<u64>, _, _>(&self.stmt, (a, b))?;
            }
            Shape::Copy => {
                if *copied + CHUNK_PAGES > spec.bulk_rows {
                    let empty = self.empty.as_ref().expect("a bulk session's TRUNCATE");
                    self.conn.exec_drop(empty, ())?;
                    *copied = 0;
                    return Ok(false);
                }
                *copied += CHUNK_PAGES;
                self.conn.exec_drop(&self.stmt, ())?;
            }
            Shape::Commit => {
                *next += 1;
                self.conn.exec_drop(&self.stmt, (self.id, *next))?;
            }
        }
        Ok(true)
    }

    fn statements(&mut self, rec: &Recorder, halt: &Halt) -> std::result::Result<(), Lost> {
        let spec = self.spec.clone();
        let bytes = spec.request_bytes();
        let rows = spec.rows * ROWS_PER_PAGE;
        let per = (rows / u64::from(spec.sessions.max(1))).max(CHUNK_PAGES * ROWS_PER_PAGE);
        let start_row = (u64::from(self.id) * per).min(rows.saturating_sub(per));
        let stripe = (start_row, start_row + per);
        let mut next = if spec.shape == Shape::Commit {
            0
        } else {
            start_row
        };
        let mut copied = 0u64;
        loop {
            if rec.window_over(now_ns()) || halt.halted() {
                return Ok(());
            }
            let start = now_ns();
            let r = self.one(&mut next, stripe, &mut copied);
            let done = now_ns();
            match r {
                Ok(true) => {}
                // Outside any timed request (a bulk table emptied).
                Ok(false) => continue,
                Err(e) => return self.failed(rec, halt, &e),
            }
            rec.request(0, start, done, bytes);
            if spec.shape == Shape::Commit {
                rec.transaction(done);
                rec.commit(done);
            }
        }
    }

    fn failed(
        &self,
        rec: &Recorder,
        halt: &Halt,
        e: &mysql::Error,
    ) -> std::result::Result<(), Lost> {
        if halt.user_stopped() {
            return Ok(());
        }
        rec.error(0);
        // 1927 connection killed, 1053 shutdown in progress, 2006/2013 server gone.
        let code = server_code(e);
        Err(Lost {
            at_ns: now_ns(),
            text: error_text(e),
            closed: matches!(code, Some(1053 | 1927 | 2006 | 2013))
                || matches!(e, mysql::Error::IoError(_) | mysql::Error::DriverError(_)),
            server_said: code.is_some(),
        })
    }
}

impl Requester for Session {
    fn run(&mut self, rec: &Recorder, halt: &Halt) -> std::result::Result<(), Lost> {
        self.statements(rec, halt)
    }
}
