//! Snapshots of PostgreSQL's cumulative statistics and their deltas, turned into figures per
//! backend type: operations/s, MiB/s, average I/O size and mean wait per operation, plus WAL
//! and commits. Which views and columns exist depends on the version, so the columns are
//! read from the catalog first: `pg_stat_io` from 16 (`op_bytes` on 16/17, `read_bytes`,
//! `write_bytes`, `extend_bytes` and WAL rows from 18); on 15 `pg_stat_database`,
//! `pg_stat_bgwriter` and `pg_stat_wal`. Nothing is ever reset: only deltas.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::report::result_pg::{PgIo, PgWait, PgWal};

/// The cumulative counters read as scalars, view by view (the database counters summed
/// over every database, the shared row included).
const SCALARS: &[(&str, &[&str])] = &[
    (
        "pg_stat_database",
        &[
            "xact_commit",
            "xact_rollback",
            "blks_read",
            "blks_hit",
            "blk_read_time",
            "blk_write_time",
        ],
    ),
    (
        "pg_stat_bgwriter",
        &[
            "checkpoints_timed",
            "checkpoints_req",
            "checkpoint_write_time",
            "checkpoint_sync_time",
            "buffers_checkpoint",
            "buffers_clean",
            "maxwritten_clean",
            "buffers_backend",
            "buffers_backend_fsync",
            "buffers_alloc",
        ],
    ),
    (
        "pg_stat_checkpointer",
        &[
            "num_timed",
            "num_requested",
            "write_time",
            "sync_time",
            "buffers_written",
        ],
    ),
    (
        "pg_stat_wal",
        &[
            "wal_records",
            "wal_fpi",
            "wal_bytes",
            "wal_buffers_full",
            "wal_write",
            "wal_sync",
            "wal_write_time",
            "wal_sync_time",
        ],
    ),
];

/// The operations of `pg_stat_io`: (name, count column, time column, bytes column on 18).
const IO_OPS: &[(&str, &str, &str, Option<&str>)] = &[
    ("read", "reads", "read_time", Some("read_bytes")),
    ("write", "writes", "write_time", Some("write_bytes")),
    ("extend", "extends", "extend_time", Some("extend_bytes")),
    ("writeback", "writebacks", "writeback_time", None),
    ("fsync", "fsyncs", "fsync_time", None),
];

/// What this server's statistics views hold, read once from the catalog.
#[derive(Debug, Clone, Default)]
pub struct Columns {
    pub version_num: u32,
    /// view → its columns.
    pub views: BTreeMap<String, Vec<String>>,
    /// The block size (8192 unless built otherwise).
    pub block_size: u64,
    /// The run's schema, whose tables other than `blocks` the run only writes (set by a
    /// run, not by `pg observe` or `job from-pg`): before 16 a page added to a relation
    /// counts as a block read in `pg_stat_database`, and these tables' reads in
    /// `pg_statio_user_tables` are those extends.
    pub written_in: Option<String>,
}

/// The key of the server's WAL insert position (bytes since 0/0; not on a standby).
pub const WAL_POSITION_KEY: &str = "pg_current_wal_insert_lsn";

/// The server's WAL insert position in bytes; NULL on a standby (in recovery it inserts none).
pub const WAL_POSITION_SQL: &str = "SELECT CASE WHEN pg_catalog.pg_is_in_recovery() THEN NULL \
     ELSE (pg_catalog.pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::float8 END";

/// Reads the WAL insert position (None on a standby).
pub fn wal_position(client: &mut postgres::Client) -> Result<Option<f64>, postgres::Error> {
    Ok(client.query_one(WAL_POSITION_SQL, &[])?.get(0))
}

/// The key of the pages added to the tables a run only writes (before 16).
pub const EXTENDS_KEY: &str = "pg_statio_user_tables.written_tables_blks_read";

/// The blocks "read" (fetched, not found in shared_buffers) of a schema's tables other than
/// `blocks`, their indexes and TOAST included: what a run that only writes them added.
const WRITTEN_READS_SQL: &str = "SELECT coalesce(sum(coalesce(heap_blks_read, 0) \
     + coalesce(idx_blks_read, 0) + coalesce(toast_blks_read, 0) + coalesce(tidx_blks_read, 0)), 0)::float8 \
     FROM pg_catalog.pg_statio_user_tables WHERE schemaname = $1 AND relname <> 'blocks'";

impl Columns {
    pub fn has(&self, view: &str, column: &str) -> bool {
        self.views
            .get(view)
            .is_some_and(|c| c.iter().any(|x| x == column))
    }

    /// The query reading every scalar counter this server has, and their keys in order.
    pub fn scalar_sql(&self) -> (String, Vec<String>) {
        let mut exprs = Vec::new();
        let mut keys = Vec::new();
        let mut froms = Vec::new();
        for (i, (view, columns)) in SCALARS.iter().enumerate() {
            let present: Vec<&str> = (columns.iter().copied())
                .filter(|c| self.has(view, c))
                .collect();
            if present.is_empty() {
                continue;
            }
            let alias = format!("v{i}");
            froms.push(format!(
                "(SELECT {} FROM pg_catalog.{view}) {alias}",
                (present.iter())
                    .map(|c| format!("coalesce(sum({c}), 0)::float8 AS {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            for c in present {
                exprs.push(format!("{alias}.{c}"));
                keys.push(format!("{view}.{c}"));
            }
        }
        if exprs.is_empty() {
            return ("SELECT".into(), keys);
        }
        (
            format!(
                "SELECT {} FROM {}",
                exprs.join(", "),
                froms.join(" CROSS JOIN ")
            ),
            keys,
        )
    }

    /// The query reading `pg_stat_io` (None before 16): backend type, object, then per
    /// operation count, time and bytes (bytes from the `*_bytes` columns on 18, from
    /// count × `op_bytes` on 16 and 17), all summed over the contexts.
    pub fn io_sql(&self) -> Option<String> {
        let view = "pg_stat_io";
        if !self.views.contains_key(view) {
            return None;
        }
        let mut cols = Vec::new();
        for (_, count, time, bytes) in IO_OPS {
            let c = |name: &str| {
                if self.has(view, name) {
                    format!("coalesce(sum({name}), 0)::float8")
                } else {
                    "0::float8".into()
                }
            };
            cols.push(c(count));
            cols.push(c(time));
            cols.push(match bytes {
                Some(b) if self.has(view, b) => format!("coalesce(sum({b}), 0)::float8"),
                Some(_) if self.has(view, "op_bytes") => {
                    format!("coalesce(sum({count} * op_bytes), 0)::float8")
                }
                _ => "NULL::float8".into(),
            });
        }
        Some(format!(
            "SELECT backend_type, object, {} FROM pg_catalog.pg_stat_io \
             GROUP BY backend_type, object ORDER BY backend_type, object",
            cols.join(", ")
        ))
    }
}

/// One (backend type, object) of `pg_stat_io`: per operation, count, time (ms), bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct IoRow {
    pub backend_type: String,
    pub object: String,
    pub ops: [(f64, f64, Option<f64>); 5],
}

/// The counters at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub at: Instant,
    pub scalars: BTreeMap<String, f64>,
    pub io: Vec<IoRow>,
}

/// Reads the catalog: which statistics views and columns exist.
pub fn columns(
    client: &mut postgres::Client,
    version_num: u32,
) -> Result<Columns, postgres::Error> {
    let mut views: Vec<String> = SCALARS.iter().map(|(v, _)| v.to_string()).collect();
    views.push("pg_stat_io".into());
    let rows = client.query(
        "SELECT c.relname::text, a.attname::text FROM pg_catalog.pg_attribute a \
         JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
         WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relname = ANY($1) \
         AND a.attnum > 0 AND NOT a.attisdropped ORDER BY c.relname, a.attnum",
        &[&views],
    )?;
    let mut out = Columns {
        version_num,
        block_size: 8192,
        ..Columns::default()
    };
    for r in rows {
        let (view, column): (String, String) = (r.get(0), r.get(1));
        out.views.entry(view).or_default().push(column);
    }
    let bs = client.query_one("SELECT current_setting('block_size')::int8", &[])?;
    out.block_size = bs.get::<_, i64>(0).max(1) as u64;
    Ok(out)
}

/// Takes a snapshot. Each query runs on its own (autocommit), so it sees fresh values.
pub fn snapshot(client: &mut postgres::Client, c: &Columns) -> Result<Snapshot, postgres::Error> {
    let at = Instant::now();
    let (sql, keys) = c.scalar_sql();
    let mut scalars = BTreeMap::new();
    if !keys.is_empty() {
        let row = client.query_one(sql.as_str(), &[])?;
        for (i, k) in keys.into_iter().enumerate() {
            scalars.insert(k, row.get::<_, f64>(i));
        }
    }
    if let Some(schema) = c.written_in.as_deref().filter(|_| c.io_sql().is_none()) {
        let row = client.query_one(WRITTEN_READS_SQL, &[&schema])?;
        scalars.insert(EXTENDS_KEY.to_string(), row.get::<_, f64>(0));
    }
    if let Some(p) = wal_position(client)? {
        scalars.insert(WAL_POSITION_KEY.to_string(), p);
    }
    let mut io = Vec::new();
    if let Some(sql) = c.io_sql() {
        for r in client.query(sql.as_str(), &[])? {
            let mut ops = [(0.0, 0.0, None); 5];
            for (k, op) in ops.iter_mut().enumerate() {
                *op = (r.get(2 + 3 * k), r.get(3 + 3 * k), r.get(4 + 3 * k));
            }
            io.push(IoRow {
                backend_type: r.get::<_, Option<String>>(0).unwrap_or_default(),
                object: r.get::<_, Option<String>>(1).unwrap_or_default(),
                ops,
            });
        }
    }
    Ok(Snapshot { at, scalars, io })
}

/// `after - before` per counter read both times, never below zero (a counter reset by
/// someone else reads as nothing happened, not as a negative rate).
pub fn scalar_deltas(before: &Snapshot, after: &Snapshot) -> BTreeMap<String, f64> {
    (after.scalars.iter())
        .filter_map(|(k, v)| {
            let b = before.scalars.get(k)?;
            Some((k.clone(), (v - b).max(0.0)))
        })
        .collect()
}

/// `who` is (backend type, object, operation).
fn io_figure(
    (backend_type, object, op): (&str, &str, &str),
    ops: f64,
    time_ms: f64,
    bytes: Option<f64>,
    seconds: f64,
    source: &str,
) -> PgIo {
    let per_s = |v: f64| if seconds > 0.0 { v / seconds } else { 0.0 };
    PgIo {
        backend_type: backend_type.into(),
        object: object.into(),
        op: op.into(),
        ops: ops.round() as u64,
        ops_per_s: per_s(ops),
        bytes: bytes.map(|b| b.round() as u64),
        mib_per_s: bytes.map(|b| per_s(b) / 1048576.0),
        avg_io_bytes: bytes.filter(|_| ops > 0.0).map(|b| b / ops),
        // No time with operations means timing was off, not that they took no time.
        mean_wait_ms: (ops > 0.0 && time_ms > 0.0).then(|| time_ms / ops),
        source: source.into(),
    }
}

/// The I/O figures over the interval, per backend type, object and operation (operations
/// that did not happen are left out); rates are per second of `seconds`, the time the
/// activity counted took (the last snapshot may come a pause later, to let counters flush).
pub fn io_figures(c: &Columns, before: &Snapshot, after: &Snapshot, seconds: f64) -> Vec<PgIo> {
    let d = scalar_deltas(before, after);
    let get = |k: &str| d.get(k).copied().unwrap_or(0.0);
    let mut out = Vec::new();
    if c.views.contains_key("pg_stat_io") {
        for a in &after.io {
            let b = before
                .io
                .iter()
                .find(|b| b.backend_type == a.backend_type && b.object == a.object);
            for (k, (name, ..)) in IO_OPS.iter().enumerate() {
                let (n1, t1, by1) = a.ops[k];
                let (n0, t0, by0) = b.map_or((0.0, 0.0, None), |b| b.ops[k]);
                let ops = (n1 - n0).max(0.0);
                if ops <= 0.0 {
                    continue;
                }
                let bytes = by1.map(|v| (v - by0.unwrap_or(0.0)).max(0.0));
                out.push(io_figure(
                    (&a.backend_type, &a.object, name),
                    ops,
                    (t1 - t0).max(0.0),
                    bytes,
                    seconds,
                    "pg_stat_io",
                ));
            }
        }
    } else {
        // 15: reads and their wait from the database counters (every backend reading for
        // a database), writes per writer from the background writer's counters.
        let bs = c.block_size as f64;
        let db = "pg_stat_database";
        // A page added to a relation is counted as a block read (a fetch not found in
        // shared_buffers) on 15: the pages added to the tables the run only writes are
        // writes (extends), not reads.
        let fetched = get("pg_stat_database.blks_read");
        let extends = get(EXTENDS_KEY).min(fetched);
        let reads = fetched - extends;
        if reads > 0.0 {
            out.push(io_figure(
                ("client backend", "relation", "read"),
                reads,
                get("pg_stat_database.blk_read_time"),
                Some(reads * bs),
                seconds,
                db,
            ));
        }
        if extends > 0.0 {
            out.push(io_figure(
                ("client backend", "relation", "extend"),
                extends,
                0.0,
                Some(extends * bs),
                seconds,
                "pg_statio_user_tables",
            ));
        }
        let bg = "pg_stat_bgwriter";
        for (who, key) in [
            ("client backend", "buffers_backend"),
            ("checkpointer", "buffers_checkpoint"),
            ("background writer", "buffers_clean"),
        ] {
            let mut n = get(&format!("{bg}.{key}"));
            let mut time_ms = 0.0;
            if key == "buffers_backend" {
                // A backend's extend counts in buffers_backend too (md.c mdextend →
                // register_dirty_segment → ForwardSyncRequest counts every backend write):
                // the extends are their own row, the writes are the rest.
                n = (n - extends).max(0.0);
                // The backends' writes are timed into pg_stat_database (track_io_timing;
                // an extend is not timed, and the background writer and checkpointer do
                // not report there).
                time_ms = get("pg_stat_database.blk_write_time");
            }
            if n > 0.0 {
                out.push(io_figure(
                    (who, "relation", "write"),
                    n,
                    time_ms,
                    Some(n * bs),
                    seconds,
                    bg,
                ));
            }
        }
        let n = get("pg_stat_bgwriter.buffers_backend_fsync");
        if n > 0.0 {
            out.push(io_figure(
                ("client backend", "relation", "fsync"),
                n,
                0.0,
                None,
                seconds,
                bg,
            ));
        }
    }
    // Before 18 WAL writes and flushes are counted for the whole server in pg_stat_wal.
    if c.has("pg_stat_wal", "wal_write") {
        let w = "pg_stat_wal";
        let writes = get("pg_stat_wal.wal_write");
        if writes > 0.0 {
            out.push(io_figure(
                ("all", "wal", "write"),
                writes,
                get("pg_stat_wal.wal_write_time"),
                Some(get("pg_stat_wal.wal_bytes")),
                seconds,
                w,
            ));
        }
        let syncs = get("pg_stat_wal.wal_sync");
        if syncs > 0.0 {
            out.push(io_figure(
                ("all", "wal", "fsync"),
                syncs,
                get("pg_stat_wal.wal_sync_time"),
                None,
                seconds,
                w,
            ));
        }
    }
    out
}

/// WAL and commits over the interval: commits per WAL flush is the group commit. The WAL's
/// bytes are the advance of the insert position where both ends were read (what the WAL
/// files received: records with their alignment and page headers), else pg_stat_wal's
/// `wal_bytes` (the records alone: small records' padding is left out, 10 % of an update's
/// WAL).
pub fn wal_figures(c: &Columns, deltas: &BTreeMap<String, f64>, io: &[PgIo]) -> PgWal {
    let get = |k: &str| deltas.get(k).copied().unwrap_or(0.0);
    let wal_rows = |op: &str| {
        let rows: Vec<&PgIo> = (io.iter())
            .filter(|i| i.object == "wal" && i.op == op)
            .collect();
        let ops: u64 = rows.iter().map(|i| i.ops).sum();
        let time: f64 = (rows.iter())
            .map(|i| i.mean_wait_ms.unwrap_or(0.0) * i.ops as f64)
            .sum();
        (ops, (ops > 0 && time > 0.0).then(|| time / ops as f64))
    };
    let (writes, mean_write_ms) = wal_rows("write");
    let (syncs, mean_sync_ms) = wal_rows("fsync");
    let commits = get("pg_stat_database.xact_commit").round() as u64;
    PgWal {
        commits,
        records: get("pg_stat_wal.wal_records").round() as u64,
        bytes: deltas
            .get(WAL_POSITION_KEY)
            .copied()
            .unwrap_or_else(|| get("pg_stat_wal.wal_bytes"))
            .round() as u64,
        writes,
        syncs,
        mean_write_ms,
        mean_sync_ms,
        commits_per_flush: (syncs > 0).then(|| commits as f64 / syncs as f64),
        sync_event: sync_event(c.version_num).into(),
    }
}

/// Puts beside the sampled waits the time PostgreSQL timed itself (track_io_timing), where
/// a wait event and a timer cover the same call: a session's DataFileRead (when reads are
/// synchronous: `io_method` absent or `sync`) and its DataFileWrite. A timed wait that no
/// sample caught gets a row of its own (no samples) when it lasted at least `interval_s`, the
/// time between two samples (less could not have been caught: page-cache reads in a write
/// test).
pub fn timed_waits(waits: &mut Vec<PgWait>, io: &[PgIo], io_method: Option<&str>, interval_s: f64) {
    let session = "client backend";
    let synchronous = io_method.is_none_or(|m| m == "sync");
    for (event, op) in [("DataFileRead", "read"), ("DataFileWrite", "write")] {
        if op == "read" && !synchronous {
            continue;
        }
        let timed_s: f64 = (io.iter())
            .filter(|i| i.backend_type == session && i.object == "relation" && i.op == op)
            .filter_map(|i| Some(i.mean_wait_ms? * i.ops as f64 / 1000.0))
            .sum();
        if timed_s <= 0.0 {
            continue;
        }
        match (waits.iter_mut()).find(|w| w.backend_type == session && w.wait_event == event) {
            Some(w) => w.timed_s = Some(timed_s),
            None if timed_s < interval_s => {}
            None => waits.push(PgWait {
                backend_type: session.into(),
                wait_event_type: "IO".into(),
                wait_event: event.into(),
                timed_s: Some(timed_s),
                ..PgWait::default()
            }),
        }
    }
}

/// The wait event of a WAL flush: `WALSync` until 16, `WalSync` from 17.
pub fn sync_event(version_num: u32) -> &'static str {
    if version_num >= 170000 {
        "WalSync"
    } else {
        "WALSync"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn columns(version_num: u32, views: &[(&str, &[&str])]) -> Columns {
        Columns {
            version_num,
            views: (views.iter())
                .map(|(v, c)| (v.to_string(), c.iter().map(|c| c.to_string()).collect()))
                .collect(),
            block_size: 8192,
            written_in: None,
        }
    }

    fn snap(at: Instant, scalars: &[(&str, f64)], io: Vec<IoRow>) -> Snapshot {
        Snapshot {
            at,
            scalars: scalars.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            io,
        }
    }

    const PG15: &[(&str, &[&str])] = &[
        (
            "pg_stat_database",
            &["xact_commit", "blks_read", "blk_read_time"],
        ),
        (
            "pg_stat_bgwriter",
            &["buffers_checkpoint", "buffers_clean", "buffers_backend"],
        ),
        (
            "pg_stat_wal",
            &["wal_bytes", "wal_write", "wal_sync", "wal_sync_time"],
        ),
    ];

    #[test]
    fn fifteen_reads_writes_and_group_commit_from_deltas() {
        let c = columns(150018, PG15);
        let (sql, keys) = c.scalar_sql();
        assert!(sql.contains("coalesce(sum(blks_read), 0)::float8"), "{sql}");
        assert!(!sql.contains("checkpointer"));
        assert_eq!(keys.len(), 10);
        assert!(c.io_sql().is_none());
        let t0 = Instant::now();
        let before = snap(
            t0,
            &[
                ("pg_stat_database.xact_commit", 100.0),
                ("pg_stat_database.blks_read", 1000.0),
                ("pg_stat_database.blk_read_time", 50.0),
                ("pg_stat_bgwriter.buffers_checkpoint", 10.0),
                ("pg_stat_wal.wal_sync", 7.0),
                ("pg_stat_wal.wal_sync_time", 1.0),
            ],
            vec![],
        );
        let after = snap(
            t0 + Duration::from_secs(2),
            &[
                ("pg_stat_database.xact_commit", 1100.0),
                ("pg_stat_database.blks_read", 3000.0),
                ("pg_stat_database.blk_read_time", 2050.0),
                ("pg_stat_bgwriter.buffers_checkpoint", 10.0),
                ("pg_stat_wal.wal_sync", 407.0),
                ("pg_stat_wal.wal_sync_time", 113.0),
            ],
            vec![],
        );
        let io = io_figures(&c, &before, &after, 2.0);
        let read = &io[0];
        assert_eq!(
            (read.backend_type.as_str(), read.op.as_str()),
            ("client backend", "read")
        );
        assert_eq!(read.ops, 2000);
        assert!((read.ops_per_s - 1000.0).abs() < 1e-6);
        assert!((read.mib_per_s.unwrap() - 1000.0 * 8192.0 / 1048576.0).abs() < 1e-6);
        assert_eq!(read.avg_io_bytes, Some(8192.0));
        assert_eq!(read.mean_wait_ms, Some(1.0));
        // No checkpointer writes happened: no row for them.
        assert!(!io.iter().any(|i| i.backend_type == "checkpointer"));
        let sync = io.iter().find(|i| i.op == "fsync").unwrap();
        assert_eq!(sync.ops, 400);
        assert!((sync.mean_wait_ms.unwrap() - 0.28).abs() < 1e-9);
        let wal = wal_figures(&c, &scalar_deltas(&before, &after), &io);
        assert_eq!(wal.commits, 1000);
        assert_eq!(wal.syncs, 400);
        assert_eq!(wal.commits_per_flush, Some(2.5));
        assert_eq!(wal.sync_event, "WALSync");
    }

    #[test]
    fn the_wals_bytes_are_the_insert_positions_advance_where_both_ends_were_read() {
        let c = columns(150018, PG15);
        let t0 = Instant::now();
        let wal = |before: &[(&str, f64)], after: &[(&str, f64)]| {
            let (b, a) = (snap(t0, before, vec![]), snap(t0, after, vec![]));
            wal_figures(&c, &scalar_deltas(&b, &a), &[]).bytes
        };
        let records = ("pg_stat_wal.wal_bytes", 1000.0);
        let more_records = ("pg_stat_wal.wal_bytes", 91_000.0);
        // 90,000 bytes of records took 100,000 bytes of WAL (alignment, page headers).
        assert_eq!(
            wal(
                &[records, (WAL_POSITION_KEY, 5e9)],
                &[more_records, (WAL_POSITION_KEY, 5e9 + 100_000.0)]
            ),
            100_000
        );
        // A standby (no position) or a position read at one end only: the records.
        assert_eq!(wal(&[records], &[more_records]), 90_000);
        assert_eq!(
            wal(&[records], &[more_records, (WAL_POSITION_KEY, 5e9)]),
            90_000
        );
    }

    #[test]
    fn the_sessions_reads_and_writes_carry_the_time_postgresql_timed() {
        let io = |op: &str, ops: u64, mean_wait_ms: Option<f64>| PgIo {
            backend_type: "client backend".into(),
            object: "relation".into(),
            op: op.into(),
            ops,
            mean_wait_ms,
            ..PgIo::default()
        };
        let sampled = PgWait {
            backend_type: "client backend".into(),
            wait_event_type: "IO".into(),
            wait_event: "DataFileRead".into(),
            samples: 120,
            time_s: 1.2,
            ..PgWait::default()
        };
        let rows = vec![io("read", 13000, Some(0.118)), io("write", 500, Some(0.2))];
        let mut waits = vec![sampled.clone()];
        timed_waits(&mut waits, &rows, None, 0.01);
        assert!((waits[0].timed_s.unwrap() - 1.534).abs() < 1e-9);
        // The writes were timed but never sampled: a row of their own.
        assert_eq!(
            (waits[1].wait_event.as_str(), waits[1].samples),
            ("DataFileWrite", 0)
        );
        assert!((waits[1].timed_s.unwrap() - 0.1).abs() < 1e-9);
        // Less than a sample interval of writes, never sampled: no row.
        let mut waits = vec![sampled.clone()];
        timed_waits(&mut waits, &rows, None, 0.2);
        assert_eq!(waits.len(), 1, "{waits:?}");
        // Asynchronous reads (io_method worker) wait elsewhere; untimed reads have no time.
        let mut waits = vec![sampled.clone()];
        timed_waits(&mut waits, &rows, Some("worker"), 0.01);
        assert_eq!(waits[0].timed_s, None);
        let mut waits = vec![sampled];
        timed_waits(&mut waits, &[io("read", 13000, None)], Some("sync"), 0.01);
        assert_eq!(waits, vec![waits[0].clone()]);
        assert_eq!(waits[0].timed_s, None);
    }

    #[test]
    fn fifteens_relation_extends_are_writes_not_reads() {
        let mut c = columns(150018, PG15);
        c.written_in = Some("dbio_x".into());
        let t0 = Instant::now();
        let before = snap(
            t0,
            &[
                ("pg_stat_database.blks_read", 100.0),
                (EXTENDS_KEY, 40.0),
                ("pg_stat_bgwriter.buffers_backend", 0.0),
                ("pg_stat_database.blk_write_time", 20.0),
            ],
            vec![],
        );
        // A COPY added 900 pages (counted as blocks fetched and not found) and read 10; its
        // backend wrote 600 filled pages back from its ring, and buffers_backend counts the
        // extends too (1500).
        let after = snap(
            t0 + Duration::from_secs(1),
            &[
                ("pg_stat_database.blks_read", 1010.0),
                (EXTENDS_KEY, 940.0),
                ("pg_stat_bgwriter.buffers_backend", 1500.0),
                ("pg_stat_database.blk_write_time", 320.0),
            ],
            vec![],
        );
        let io = io_figures(&c, &before, &after, 1.0);
        let op = |op: &str| io.iter().find(|i| i.op == op).map(|i| i.ops);
        assert_eq!(op("read"), Some(10));
        assert_eq!(op("extend"), Some(900));
        assert_eq!(op("write"), Some(600), "the extends are not counted twice");
        // The backends' writes were timed (300 ms), their extends not.
        let write = io.iter().find(|i| i.op == "write").unwrap();
        assert_eq!(write.mean_wait_ms, Some(0.5));
        assert_eq!(
            io.iter().find(|i| i.op == "extend").unwrap().mean_wait_ms,
            None
        );
        // Only writes: no read row at all.
        let after = snap(
            t0 + Duration::from_secs(1),
            &[("pg_stat_database.blks_read", 1000.0), (EXTENDS_KEY, 940.0)],
            vec![],
        );
        let io = io_figures(&c, &before, &after, 1.0);
        assert!(!io.iter().any(|i| i.op == "read"), "{io:?}");
    }

    #[test]
    fn a_counter_that_went_back_reads_as_nothing() {
        let t0 = Instant::now();
        let before = snap(t0, &[("pg_stat_wal.wal_sync", 50.0)], vec![]);
        let after = snap(t0, &[("pg_stat_wal.wal_sync", 3.0)], vec![]);
        assert_eq!(scalar_deltas(&before, &after)["pg_stat_wal.wal_sync"], 0.0);
    }

    fn row(bt: &str, obj: &str, reads: (f64, f64, Option<f64>), fsyncs: f64) -> IoRow {
        IoRow {
            backend_type: bt.into(),
            object: obj.into(),
            ops: [
                reads,
                (0.0, 0.0, Some(0.0)),
                (0.0, 0.0, Some(0.0)),
                (0.0, 0.0, None),
                (fsyncs, fsyncs * 0.5, None),
            ],
        }
    }

    #[test]
    fn eighteen_bytes_columns_and_wal_rows() {
        let c = columns(
            180004,
            &[
                ("pg_stat_database", &["xact_commit"]),
                ("pg_stat_wal", &["wal_records", "wal_bytes"]),
                (
                    "pg_stat_io",
                    &[
                        "backend_type",
                        "object",
                        "context",
                        "reads",
                        "read_bytes",
                        "read_time",
                        "writes",
                        "write_bytes",
                        "write_time",
                        "extends",
                        "extend_bytes",
                        "extend_time",
                        "writebacks",
                        "writeback_time",
                        "fsyncs",
                        "fsync_time",
                    ],
                ),
            ],
        );
        let sql = c.io_sql().unwrap();
        assert!(sql.contains("sum(read_bytes)"), "{sql}");
        assert!(!sql.contains("op_bytes"), "{sql}");
        let t0 = Instant::now();
        let before = snap(
            t0,
            &[("pg_stat_database.xact_commit", 0.0)],
            vec![
                row("io worker", "relation", (10.0, 5.0, Some(81920.0)), 0.0),
                row("client backend", "wal", (0.0, 0.0, Some(0.0)), 100.0),
            ],
        );
        let after = snap(
            t0 + Duration::from_secs(1),
            &[("pg_stat_database.xact_commit", 250.0)],
            vec![
                // A combined read: 100 operations carried 4 blocks each.
                row(
                    "io worker",
                    "relation",
                    (110.0, 105.0, Some(81920.0 + 100.0 * 32768.0)),
                    0.0,
                ),
                row("client backend", "wal", (0.0, 0.0, Some(0.0)), 200.0),
            ],
        );
        let io = io_figures(&c, &before, &after, 1.0);
        let r = io.iter().find(|i| i.op == "read").unwrap();
        assert_eq!(r.backend_type, "io worker");
        assert_eq!(r.ops, 100);
        assert_eq!(r.avg_io_bytes, Some(32768.0));
        assert_eq!(r.mean_wait_ms, Some(1.0));
        assert_eq!(r.source, "pg_stat_io");
        let wal = wal_figures(&c, &scalar_deltas(&before, &after), &io);
        assert_eq!(wal.syncs, 100);
        assert_eq!(wal.commits_per_flush, Some(2.5));
        assert_eq!(wal.mean_sync_ms, Some(0.5));
        assert_eq!(wal.sync_event, "WalSync");
    }

    #[test]
    fn sixteen_bytes_from_op_bytes() {
        let c = columns(
            160004,
            &[(
                "pg_stat_io",
                &[
                    "backend_type",
                    "object",
                    "reads",
                    "read_time",
                    "writes",
                    "op_bytes",
                ],
            )],
        );
        let sql = c.io_sql().unwrap();
        assert!(sql.contains("sum(reads * op_bytes)"), "{sql}");
        // Columns this version lacks read as zero, not as an error.
        assert!(sql.contains("0::float8"), "{sql}");
    }
}
