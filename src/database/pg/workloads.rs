//! The five tests through SQL, one session per thread with its own connection. A request is
//! one lookup, one batch, one scan chunk, one update, one COPY or one commit; each is timed
//! into dbio's own recorder (HDR histograms, per-second history) like a `dbio run` request.
//! Statements are prepared and buffers made once per session.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use postgres::{Client, Statement};

use crate::error::{Error, Result};
use crate::measure::recorder::Recorder;
use crate::sys::now_ns;

use super::connect::error_text;
use super::load::PAGE;

/// What one session of a test does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Random single-block reads by primary-key lookup (index scan).
    Lookup,
    /// Prefetched batches: bitmap heap scans over `batch` random ids at
    /// effective_io_concurrency = depth.
    Batch,
    /// Sequential reads: TID range scans over the session's stripe, a chunk at a time.
    Scan,
    /// Random single-row updates (the writes follow from the buffers they dirty).
    Update,
    /// Bulk loads: COPY of a chunk into the session's own table.
    Copy,
    /// Small committing transactions, each commit waiting for its WAL flush.
    Commit,
}

/// Blocks per scan chunk and per COPY (1 MiB).
pub const CHUNK_BLOCKS: u64 = 128;

/// One test's shape, shared by its sessions.
#[derive(Debug, Clone)]
pub struct Shape {
    pub kind: Kind,
    pub schema: String,
    /// Rows (= pages) of `blocks`.
    pub rows: u64,
    pub sessions: u32,
    pub depth: u32,
    /// Ids per bitmap batch.
    pub batch: u32,
    /// Pages a session's bulk table may grow to before it is emptied.
    pub bulk_rows: u64,
    pub seed: u64,
}

impl Shape {
    /// The session-level settings every session makes (`SET name = value`): planner choices
    /// that force the access path, and the prefetch depth; never a server setting.
    pub fn session_set(&self) -> Vec<(String, String)> {
        let mut s: Vec<(&str, String)> = vec![("max_parallel_workers_per_gather", "0".into())];
        match self.kind {
            Kind::Lookup => {
                s.push(("enable_seqscan", "off".into()));
                s.push(("enable_bitmapscan", "off".into()));
                s.push(("enable_indexonlyscan", "off".into()));
            }
            Kind::Batch => {
                s.push(("enable_seqscan", "off".into()));
                s.push(("enable_indexscan", "off".into()));
                s.push(("enable_indexonlyscan", "off".into()));
                s.push(("effective_io_concurrency", self.depth.to_string()));
            }
            Kind::Scan => {}
            Kind::Update => s.push(("synchronous_commit", "off".into())),
            Kind::Copy => {}
            Kind::Commit => s.push(("synchronous_commit", "on".into())),
        }
        s.into_iter().map(|(n, v)| (n.to_string(), v)).collect()
    }

    /// Bytes one request stands for.
    pub fn request_bytes(&self) -> u64 {
        match self.kind {
            Kind::Lookup | Kind::Update => PAGE,
            Kind::Batch => u64::from(self.batch) * PAGE,
            Kind::Scan | Kind::Copy => CHUNK_BLOCKS * PAGE,
            Kind::Commit => 0,
        }
    }
}

/// Why a session ended early: the error, and when (`now_ns`).
#[derive(Debug, Clone)]
pub struct Failure {
    pub at_ns: u64,
    /// The server's (or the client's) message.
    pub text: String,
    /// The connection is gone (the server closed it, or it broke).
    pub closed: bool,
    /// The text is the server's own message (not the client's "connection closed").
    pub server_said: bool,
}

/// One session, ready to run: its connection, statements and buffers.
pub struct Session {
    client: Client,
    id: u32,
    stmt: Statement,
    /// TRUNCATE of the session's bulk table (write-mbps).
    empty: Option<Statement>,
    ids: Vec<i64>,
    copy_text: Vec<u8>,
    rng: fastrand::Rng,
}

fn prep(c: &mut Client, sql: &str) -> Result<Statement> {
    c.prepare(sql)
        .map_err(|e| Error::other(format!("preparing a session: {}", error_text(&e))))
}

impl Session {
    /// Sets the session's settings and prepares its statements.
    pub fn new(mut client: Client, shape: &Shape, id: u32) -> Result<Session> {
        for (n, v) in shape.session_set() {
            client
                .batch_execute(&format!("SET {n} = '{v}'"))
                .map_err(|e| Error::other(format!("SET {n}: {}", error_text(&e))))?;
        }
        let s = &shape.schema;
        let (stmt, empty) = match shape.kind {
            Kind::Lookup => (
                prep(
                    &mut client,
                    &format!("SELECT length(pad) FROM {s}.blocks WHERE id = $1"),
                )?,
                None,
            ),
            Kind::Batch => (
                prep(
                    &mut client,
                    &format!("SELECT count(pad) FROM {s}.blocks WHERE id = ANY($1::bigint[])"),
                )?,
                None,
            ),
            Kind::Scan => (
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
            Kind::Update => (
                prep(
                    &mut client,
                    &format!("UPDATE {s}.blocks SET pad = pad WHERE id = $1"),
                )?,
                None,
            ),
            Kind::Copy => (
                prep(&mut client, &format!("COPY {s}.bulk_{id} FROM STDIN"))?,
                Some(prep(&mut client, &format!("TRUNCATE {s}.bulk_{id}"))?),
            ),
            Kind::Commit => (
                prep(
                    &mut client,
                    &format!("INSERT INTO {s}.commits VALUES ($1, $2)"),
                )?,
                None,
            ),
        };
        let mut copy_text = Vec::new();
        if shape.kind == Kind::Copy {
            let pad = "x".repeat(1000);
            for n in 0..CHUNK_BLOCKS {
                let _ = writeln!(copy_text, "{n}\t{pad}");
            }
        }
        Ok(Session {
            client,
            id,
            stmt,
            empty,
            ids: Vec::with_capacity(shape.batch as usize),
            copy_text,
            rng: fastrand::Rng::with_seed(
                shape.seed ^ (u64::from(id) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        })
    }

    /// Runs requests until the recorder's window is over or `stop` is set. An error ends
    /// the session (unless a stop is under way, which makes it an interruption).
    pub fn run(
        mut self,
        shape: &Shape,
        rec: &Recorder,
        stop: &AtomicBool,
    ) -> std::result::Result<(), Failure> {
        let rows = shape.rows.max(1) as i64;
        let bytes = shape.request_bytes();
        // The session's stripe of the table for scans.
        let per = (shape.rows / u64::from(shape.sessions.max(1))).max(CHUNK_BLOCKS);
        let stripe_start = (u64::from(self.id) * per).min(shape.rows.saturating_sub(per));
        let mut next_block = stripe_start;
        let mut copied: u64 = 0;
        let mut n: i64 = 0;
        loop {
            let now = now_ns();
            if rec.window_over(now) || stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let start = now_ns();
            let r = match shape.kind {
                Kind::Lookup | Kind::Update => {
                    let id = self.rng.i64(1..=rows);
                    if shape.kind == Kind::Lookup {
                        self.client.query_one(&self.stmt, &[&id]).map(|_| ())
                    } else {
                        self.client.execute(&self.stmt, &[&id]).map(|_| ())
                    }
                }
                Kind::Batch => {
                    self.ids.clear();
                    for _ in 0..shape.batch {
                        self.ids.push(self.rng.i64(1..=rows));
                    }
                    self.client.query_one(&self.stmt, &[&self.ids]).map(|_| ())
                }
                Kind::Scan => {
                    let a = next_block as i64;
                    let b = (next_block + CHUNK_BLOCKS) as i64;
                    next_block += CHUNK_BLOCKS;
                    if next_block + CHUNK_BLOCKS > stripe_start + per {
                        next_block = stripe_start;
                    }
                    self.client.query_one(&self.stmt, &[&a, &b]).map(|_| ())
                }
                Kind::Copy => {
                    if copied + CHUNK_BLOCKS > shape.bulk_rows {
                        // Emptied outside any timed request.
                        let empty = self.empty.as_ref().expect("a COPY session's TRUNCATE");
                        if let Err(e) = self.client.execute(empty, &[]) {
                            return self.failed(rec, stop, &e);
                        }
                        copied = 0;
                        continue;
                    }
                    copied += CHUNK_BLOCKS;
                    self.copy_chunk()
                }
                Kind::Commit => {
                    n += 1;
                    let session = self.id as i32;
                    self.client.execute(&self.stmt, &[&session, &n]).map(|_| ())
                }
            };
            let done = now_ns();
            if let Err(e) = r {
                return self.failed(rec, stop, &e);
            }
            rec.request(0, start, done, bytes);
            if shape.kind == Kind::Commit {
                rec.transaction(done);
                rec.commit(done);
            }
        }
    }

    fn copy_chunk(&mut self) -> std::result::Result<(), postgres::Error> {
        let mut w = self.client.copy_in(&self.stmt)?;
        if let Err(e) = w.write_all(&self.copy_text) {
            // The writer's own error carries the server's message, if any, at finish.
            drop(e);
        }
        w.finish().map(|_| ())
    }

    fn failed(
        &self,
        rec: &Recorder,
        stop: &AtomicBool,
        e: &postgres::Error,
    ) -> std::result::Result<(), Failure> {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        rec.error(0);
        Err(Failure {
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
