//! The tests through SQL on MariaDB/MySQL, one session per thread with its own connection.
//! A request is one lookup, one batch, one scan chunk, one update, one bulk insert or one
//! commit, each timed into dbio's own recorder like a `dbio run` request. Every statement
//! autocommits.
//!
//! Statements go as text (COM_QUERY), as sysbench, Connector/J and PDO send them by
//! default: a session writes each statement into the one buffer it holds ([`Text`]), so a
//! statement allocates nothing in dbio (a prepared statement's parameters would be a new
//! `Vec` per execution in the client crate).

use std::fmt::Write;

use mysql::Conn;
use mysql::prelude::Queryable;

use crate::database::{CHUNK_PAGES, Shape, Spec};
use crate::error::{Error, Result};
use crate::measure::recorder::Recorder;
use crate::run::requester::{Halt, Lost, Requester};
use crate::sys::now_ns;

use super::connect::{error_text, server_code};
use super::load::{COMMIT_K, PAD, ROWS_PER_PAGE, numbers};

/// The session settings every session makes (`SET SESSION name = value`): never a server
/// setting.
pub fn session_set(_spec: &Spec) -> Vec<(String, String)> {
    vec![("autocommit".into(), "1".into())]
}

/// Groups of 11 random digits in a commit's `c` and `pad` (sysbench's templates
/// `###########-...`: 119 and 59 characters).
const C_GROUPS: usize = 10;
const PAD_GROUPS: usize = 5;

/// A session's statement text: the part every statement of its shape shares, written
/// once, then each statement's values written after it into the same buffer (cleared back
/// to the shared part, never grown: its capacity is the longest statement's).
pub struct Text {
    sql: String,
    head: usize,
    shape: Shape,
}

impl Text {
    /// The text of `shape`'s statements on database `db` (`batch` ids a batch, session `id`).
    pub fn new(shape: Shape, db: &str, batch: u32, id: u32) -> Text {
        let head = match shape {
            // Not `id = ?`: InnoDB searches inner pages for "less than" the key, so an
            // equality search for a page's first key reads the page before it too.
            Shape::Lookup => format!("SELECT LENGTH(pad) FROM {db}.blocks WHERE id <= "),
            Shape::Batch => format!("SELECT SUM(LENGTH(pad)) FROM {db}.blocks WHERE id IN ("),
            Shape::Scan => format!("SELECT SUM(LENGTH(pad)) FROM {db}.blocks WHERE id >= "),
            Shape::Update => format!("UPDATE {db}.blocks SET n = n + 1 WHERE id = "),
            Shape::Copy => format!(
                "INSERT INTO {db}.bulk_{id} SELECT n, REPEAT('x', {PAD}) FROM {}",
                numbers(CHUNK_PAGES * ROWS_PER_PAGE)
            ),
            // sysbench oltp_insert's statement: one row, an auto-increment id, a random k
            // (a secondary index), 119 and 59 random characters.
            Shape::Commit => format!("INSERT INTO {db}.commits (k, c, pad) VALUES ("),
        };
        // The longest tail: a batch's ids (10 digits and a comma each), or a commit's
        // values, or two ids and the words between them.
        let tail = 64 + 11 * batch as usize + 12 * (C_GROUPS + PAD_GROUPS);
        let mut sql = String::with_capacity(head.len() + tail);
        sql.push_str(&head);
        Text {
            head: sql.len(),
            sql,
            shape,
        }
    }

    fn restart(&mut self) -> &mut String {
        self.sql.truncate(self.head);
        &mut self.sql
    }

    /// A lookup or an update of row `id`.
    pub fn one(&mut self, id: u32) -> &str {
        let tail = if self.shape == Shape::Lookup {
            " ORDER BY id DESC LIMIT 1"
        } else {
            ""
        };
        let s = self.restart();
        let _ = write!(s, "{id}{tail}");
        &self.sql
    }

    /// A batch of the ids `ids` yields.
    pub fn batch(&mut self, ids: impl Iterator<Item = u32>) -> &str {
        let s = self.restart();
        for (n, id) in ids.enumerate() {
            if n > 0 {
                s.push(',');
            }
            let _ = write!(s, "{id}");
        }
        s.push(')');
        &self.sql
    }

    /// The rows from `a` to `b` (excluded).
    pub fn range(&mut self, a: u64, b: u64) -> &str {
        let s = self.restart();
        let _ = write!(s, "{a} AND id < {b}");
        &self.sql
    }

    /// The statement as written once (a bulk insert's).
    pub fn fixed(&self) -> &str {
        &self.sql
    }

    /// A commit's row: `k` and random digits from `rng`.
    pub fn commit(&mut self, k: u32, rng: &mut fastrand::Rng) -> &str {
        let s = self.restart();
        let _ = write!(s, "{k}, '");
        digits(s, rng, C_GROUPS);
        s.push_str("', '");
        digits(s, rng, PAD_GROUPS);
        s.push_str("')");
        &self.sql
    }

    /// The buffer's address and capacity (unchanged from statement to statement).
    pub fn buffer(&self) -> (*const u8, usize) {
        (self.sql.as_ptr(), self.sql.capacity())
    }
}

/// `groups` groups of 11 random digits joined by '-'.
fn digits(s: &mut String, rng: &mut fastrand::Rng, groups: usize) {
    for g in 0..groups {
        if g > 0 {
            s.push('-');
        }
        for _ in 0..11 {
            s.push(rng.digit(10));
        }
    }
}

/// One session, ready to run.
pub struct Session {
    conn: Conn,
    id: u32,
    spec: Spec,
    text: Text,
    /// Empties the session's bulk table (write-mbps).
    empty: Option<String>,
    rng: fastrand::Rng,
}

impl Session {
    pub fn new(mut conn: Conn, spec: &Spec, db: &str, id: u32) -> Result<Session> {
        for (n, v) in session_set(spec) {
            conn.query_drop(format!("SET SESSION {n} = {v}"))
                .map_err(|e| Error::other(format!("SET {n}: {}", error_text(&e))))?;
        }
        Ok(Session {
            conn,
            id,
            spec: spec.clone(),
            text: Text::new(spec.shape, db, spec.batch, id),
            empty: (spec.shape == Shape::Copy).then(|| format!("TRUNCATE TABLE {db}.bulk_{id}")),
            rng: fastrand::Rng::with_seed(
                spec.seed ^ (u64::from(id) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        })
    }

    /// One statement of the session's shape; `next`: the next row of its scan stripe.
    fn one(&mut self, next: &mut u64, stripe: (u64, u64), copied: &mut u64) -> mysql::Result<bool> {
        let spec = &self.spec;
        let rows = (spec.rows * ROWS_PER_PAGE).max(1) as u32;
        let sql = match spec.shape {
            Shape::Lookup | Shape::Update => self.text.one(self.rng.u32(1..=rows)),
            Shape::Batch => {
                let rng = &mut self.rng;
                self.text.batch((0..spec.batch).map(|_| rng.u32(1..=rows)))
            }
            Shape::Scan => {
                let a = *next;
                let b = a + CHUNK_PAGES * ROWS_PER_PAGE;
                *next = if b + CHUNK_PAGES * ROWS_PER_PAGE > stripe.1 {
                    stripe.0
                } else {
                    b
                };
                self.text.range(a, b)
            }
            Shape::Copy => {
                if *copied + CHUNK_PAGES > spec.bulk_rows {
                    let empty = self.empty.as_deref().expect("a bulk session's TRUNCATE");
                    self.conn.query_drop(empty)?;
                    *copied = 0;
                    return Ok(false);
                }
                *copied += CHUNK_PAGES;
                self.text.fixed()
            }
            Shape::Commit => {
                let k = self.rng.u32(1..=COMMIT_K);
                self.text.commit(k, &mut self.rng)
            }
        };
        self.conn.query_drop(sql)?;
        Ok(true)
    }

    fn statements(&mut self, rec: &Recorder, halt: &Halt) -> std::result::Result<(), Lost> {
        let spec = self.spec.clone();
        let bytes = spec.request_bytes();
        let rows = spec.rows * ROWS_PER_PAGE;
        let per = (rows / u64::from(spec.sessions.max(1))).max(CHUNK_PAGES * ROWS_PER_PAGE);
        let start_row = (u64::from(self.id) * per).min(rows.saturating_sub(per));
        let stripe = (start_row, start_row + per);
        let mut next = start_row;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_is_written_into_the_sessions_buffer_without_growing_it() {
        let mut t = Text::new(Shape::Lookup, "dbio_r1", 1, 0);
        let at = t.buffer();
        assert_eq!(
            t.one(7),
            "SELECT LENGTH(pad) FROM dbio_r1.blocks WHERE id <= 7 ORDER BY id DESC LIMIT 1"
        );
        for id in [u32::MAX, 0, 12345] {
            t.one(id);
            assert_eq!(t.buffer(), at);
        }
        // The largest batch (--depth 256: 1,024 ids), ids of ten digits.
        let mut t = Text::new(Shape::Batch, "dbio_r1", 1024, 0);
        let at = t.buffer();
        assert_eq!(
            t.batch([3, 1, 2].into_iter()),
            "SELECT SUM(LENGTH(pad)) FROM dbio_r1.blocks WHERE id IN (3,1,2)"
        );
        for _ in 0..3 {
            let s = t.batch(std::iter::repeat_n(u32::MAX, 1024));
            assert_eq!(s.matches(',').count(), 1023);
            assert_eq!(t.buffer(), at);
        }
        let mut t = Text::new(Shape::Scan, "d", 1, 0);
        let at = t.buffer();
        assert_eq!(
            t.range(10, 74),
            "SELECT SUM(LENGTH(pad)) FROM d.blocks WHERE id >= 10 AND id < 74"
        );
        t.range(u64::MAX - 1, u64::MAX);
        assert_eq!(t.buffer(), at);
        let mut t = Text::new(Shape::Update, "d", 1, 0);
        assert_eq!(t.one(5), "UPDATE d.blocks SET n = n + 1 WHERE id = 5");
        // A commit: sysbench oltp_insert's row.
        let mut t = Text::new(Shape::Commit, "d", 1, 3);
        let at = t.buffer();
        let mut rng = fastrand::Rng::with_seed(1);
        for k in [1, u32::MAX] {
            let s = t.commit(k, &mut rng).to_string();
            let values = s
                .strip_prefix(&format!("INSERT INTO d.commits (k, c, pad) VALUES ({k}, '"))
                .and_then(|v| v.strip_suffix("')"))
                .unwrap_or_else(|| panic!("{s}"));
            let (c, pad) = values.split_once("', '").unwrap();
            for (v, len) in [(c, 119), (pad, 59)] {
                assert_eq!(v.len(), len, "{v}");
                assert!(
                    v.split('-')
                        .all(|g| g.len() == 11 && g.bytes().all(|b| b.is_ascii_digit())),
                    "{v}"
                );
            }
            assert_eq!(t.buffer(), at);
        }
    }
}
