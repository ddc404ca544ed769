//! The five tests through SQL, one session per thread with its own connection. A request is
//! one lookup, one batch, one scan chunk, one update, one COPY or one commit; each is timed
//! into dbio's own recorder (HDR histograms, per-second history) like a `dbio run` request.
//! Statements are prepared and buffers made once per session.

use std::io::Write;

use postgres::{Client, Statement};

use crate::database::{CHUNK_PAGES, Shape, Spec};
use crate::error::{Error, Result};
use crate::measure::recorder::Recorder;
use crate::run::requester::{Halt, Lost, Requester};
use crate::sys::now_ns;

use super::connect::error_text;
use super::observe::{Edges, FLUSH_SQL};

/// The session-level settings every session makes (`SET name = value`): planner choices
/// that force the access path, and the prefetch depth; never a server setting.
pub fn session_set(spec: &Spec) -> Vec<(String, String)> {
    let mut s: Vec<(&str, String)> = vec![("max_parallel_workers_per_gather", "0".into())];
    match spec.shape {
        Shape::Lookup => {
            s.push(("enable_seqscan", "off".into()));
            s.push(("enable_bitmapscan", "off".into()));
            s.push(("enable_indexonlyscan", "off".into()));
        }
        Shape::Batch => {
            s.push(("enable_seqscan", "off".into()));
            s.push(("enable_indexscan", "off".into()));
            s.push(("enable_indexonlyscan", "off".into()));
            s.push(("effective_io_concurrency", spec.depth.to_string()));
        }
        Shape::Scan => {}
        Shape::Update => s.push(("synchronous_commit", "off".into())),
        Shape::Copy => {}
        Shape::Commit => s.push(("synchronous_commit", "on".into())),
    }
    s.into_iter().map(|(n, v)| (n.to_string(), v)).collect()
}

/// One session, ready to run: its connection, statements and buffers.
pub struct Session {
    client: Client,
    id: u32,
    spec: Spec,
    stmt: Statement,
    /// TRUNCATE of the session's bulk table (write-mbps), sent as text like the COPY.
    empty: Option<String>,
    ids: Vec<i64>,
    /// The COPY (write-mbps), sent as text each time, and its rows.
    copy_sql: String,
    copy_text: Vec<u8>,
    rng: fastrand::Rng,
    /// Where the session meets the observer at the window's start.
    edges: std::sync::Arc<Edges>,
    /// Its warm-up's counters are flushed (the window started).
    flushed: bool,
}

fn prep(c: &mut Client, sql: &str) -> Result<Statement> {
    c.prepare(sql)
        .map_err(|e| Error::other(format!("preparing a session: {}", error_text(&e))))
}

impl Session {
    /// Sets the session's settings and prepares its statements.
    pub fn new(
        mut client: Client,
        spec: &Spec,
        schema: &str,
        id: u32,
        edges: std::sync::Arc<Edges>,
    ) -> Result<Session> {
        for (n, v) in session_set(spec) {
            client
                .batch_execute(&format!("SET {n} = '{v}'"))
                .map_err(|e| Error::other(format!("SET {n}: {}", error_text(&e))))?;
        }
        let s = schema;
        let copy_sql = format!("COPY {s}.bulk_{id} FROM STDIN");
        let (stmt, empty) = match spec.shape {
            Shape::Lookup => (
                prep(
                    &mut client,
                    &format!("SELECT length(pad) FROM {s}.blocks WHERE id = $1"),
                )?,
                None,
            ),
            Shape::Batch => (
                prep(
                    &mut client,
                    &format!("SELECT count(pad) FROM {s}.blocks WHERE id = ANY($1::bigint[])"),
                )?,
                None,
            ),
            Shape::Scan => (
                prep(
                    &mut client,
                    &format!(
                        "SELECT count(pad) FROM {s}.blocks \
                         WHERE ctid >= ('(' || $1::bigint || ',0)')::tid \
                         AND ctid < ('(' || $2::bigint || ',0)')::tid"
                    ),
                )?,
                None,
            ),
            Shape::Update => (
                prep(
                    &mut client,
                    &format!("UPDATE {s}.blocks SET pad = pad WHERE id = $1"),
                )?,
                None,
            ),
            // Prepared once to fail early; run from its text (see `copy_chunk`).
            Shape::Copy => (
                prep(&mut client, &copy_sql)?,
                Some(format!("TRUNCATE {s}.bulk_{id}")),
            ),
            Shape::Commit => (
                prep(
                    &mut client,
                    &format!("INSERT INTO {s}.commits VALUES ($1, $2)"),
                )?,
                None,
            ),
        };
        let mut copy_text = Vec::new();
        if spec.shape == Shape::Copy {
            let pad = "x".repeat(1000);
            for n in 0..CHUNK_PAGES {
                let _ = writeln!(copy_text, "{n}\t{pad}");
            }
        }
        Ok(Session {
            client,
            id,
            spec: spec.clone(),
            stmt,
            empty,
            ids: Vec::with_capacity(spec.batch as usize),
            copy_sql,
            copy_text,
            rng: fastrand::Rng::with_seed(
                spec.seed ^ (u64::from(id) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
            edges,
            flushed: false,
        })
    }

    /// Runs statements until the recorder's window is over or the run halts. An error
    /// ends the session (unless the user stopped the run: then it is the interruption's).
    fn statements(&mut self, rec: &Recorder, halt: &Halt) -> std::result::Result<(), Lost> {
        let shape = self.spec.clone();
        let rows = shape.rows.max(1) as i64;
        let bytes = shape.request_bytes();
        // The session's stripe of the table for scans.
        let per = (shape.rows / u64::from(shape.sessions.max(1))).max(CHUNK_PAGES);
        let stripe_start = (u64::from(self.id) * per).min(shape.rows.saturating_sub(per));
        let mut next_block = stripe_start;
        let mut copied: u64 = 0;
        let mut n: i64 = 0;
        loop {
            let now = now_ns();
            if rec.window_over(now) || halt.halted() {
                return Ok(());
            }
            if !self.flushed && rec.window_started(now) {
                // The warm-up's counters go out before the window's first statement (the
                // observer's first snapshot waits for them): untimed, once.
                self.flushed = true;
                let r = self.client.batch_execute(FLUSH_SQL);
                self.edges.arrive();
                if let Err(e) = r {
                    return self.failed(rec, halt, &e);
                }
                continue;
            }
            let start = now_ns();
            let r = match shape.shape {
                Shape::Lookup | Shape::Update => {
                    let id = self.rng.i64(1..=rows);
                    if shape.shape == Shape::Lookup {
                        self.client.query_one(&self.stmt, &[&id]).map(|_| ())
                    } else {
                        self.client.execute(&self.stmt, &[&id]).map(|_| ())
                    }
                }
                Shape::Batch => {
                    self.ids.clear();
                    for _ in 0..shape.batch {
                        self.ids.push(self.rng.i64(1..=rows));
                    }
                    self.client.query_one(&self.stmt, &[&self.ids]).map(|_| ())
                }
                Shape::Scan => {
                    let a = next_block as i64;
                    let b = (next_block + CHUNK_PAGES) as i64;
                    next_block += CHUNK_PAGES;
                    if next_block + CHUNK_PAGES > stripe_start + per {
                        next_block = stripe_start;
                    }
                    self.client.query_one(&self.stmt, &[&a, &b]).map(|_| ())
                }
                Shape::Copy => {
                    if copied + CHUNK_PAGES > shape.bulk_rows {
                        // Emptied outside any timed request.
                        let empty = self.empty.as_ref().expect("a COPY session's TRUNCATE");
                        if let Err(e) = self.client.batch_execute(empty) {
                            return self.failed(rec, halt, &e);
                        }
                        copied = 0;
                        continue;
                    }
                    copied += CHUNK_PAGES;
                    self.copy_chunk()
                }
                Shape::Commit => {
                    n += 1;
                    let session = self.id as i32;
                    self.client.execute(&self.stmt, &[&session, &n]).map(|_| ())
                }
            };
            let done = now_ns();
            if let Err(e) = r {
                return self.failed(rec, halt, &e);
            }
            rec.request(0, start, done, bytes);
            if shape.shape == Shape::Commit {
                rec.transaction(done);
                rec.commit(done);
            }
        }
    }

    /// One COPY of a chunk, in a transaction of its own. Its statement is sent as text each
    /// time, as psql's `\copy` and pg_restore send theirs: PostgreSQL 15's
    /// pg_stat_statements counts a prepared utility statement at its first execution only,
    /// so a prepared COPY would hide the run's COPYs (their blocks written and WAL) from a
    /// DBA reading it. Inside BEGIN ... COMMIT the statement's preparation is not a
    /// transaction of its own: one commit per COPY, as before.
    fn copy_chunk(&mut self) -> std::result::Result<(), postgres::Error> {
        let mut t = self.client.transaction()?;
        let mut w = t.copy_in(self.copy_sql.as_str())?;
        if let Err(e) = w.write_all(&self.copy_text) {
            // The writer's own error carries the server's message, if any, at finish.
            drop(e);
        }
        w.finish()?;
        t.commit()
    }

    fn failed(
        &self,
        rec: &Recorder,
        halt: &Halt,
        e: &postgres::Error,
    ) -> std::result::Result<(), Lost> {
        if halt.user_stopped() {
            return Ok(());
        }
        rec.error(0);
        Err(Lost {
            at_ns: now_ns(),
            text: error_text(e),
            // A FATAL message ends the session: the server closes the connection after it.
            closed: e.is_closed()
                || self.client.is_closed()
                || e.as_db_error()
                    .is_some_and(|d| matches!(d.severity(), "FATAL" | "PANIC")),
            server_said: e.as_db_error().is_some(),
        })
    }
}

impl Requester for Session {
    fn run(&mut self, rec: &Recorder, halt: &Halt) -> std::result::Result<(), Lost> {
        let r = self.statements(rec, halt);
        if !self.flushed {
            // Ended before the window (or never reached it): not waited for.
            self.flushed = true;
            self.edges.arrive();
        }
        if r.is_ok() {
            // The window's counters go out before the observer's last snapshot.
            let _ = self.client.batch_execute(FLUSH_SQL);
        }
        r
    }
}
