//! The store's schema and how it is brought up to date.
//!
//! A database written by an older dbio must keep working after an upgrade, so the schema is
//! an ordered list of migrations and `PRAGMA user_version` records how many have been
//! applied. Adding a migration is one line at the end of [`MIGRATIONS`]; never edit one that
//! has been released, because databases in the field have already run it.

use rusqlite::{Connection, TransactionBehavior};

/// `PRAGMA application_id` of a dbio results store ("dbio" in ASCII), so that dbio does not
/// mistake someone else's SQLite file for its own.
pub const APPLICATION_ID: i32 = 0x6462_696f;

/// One schema step: the version it brings the database to and its SQL.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: u32,
    pub sql: &'static str,
}

/// Every schema step, oldest first. Version numbers count up from 1 without gaps.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sql: V1_RUNS_AND_EVENTS,
    },
    Migration {
        version: 2,
        sql: V2_DATA_SETS,
    },
    Migration {
        version: 3,
        sql: V3_MEM_RUNS,
    },
    Migration {
        version: 4,
        sql: V4_RUN_HOSTS,
    },
    Migration {
        version: 5,
        sql: V5_RUN_DIRS,
    },
    Migration {
        version: 6,
        sql: V6_LEFTOVERS,
    },
    Migration {
        version: 7,
        sql: V7_STABILITY,
    },
    Migration {
        version: 8,
        sql: V8_COMPARES,
    },
];

/// The schema version this dbio writes.
pub fn current_version() -> u32 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// The registry of data sets: every data set directory dbio created or used, wherever it
/// is, so that `dbio doctor` run from anywhere finds what a killed run left.
const V2_DATA_SETS: &str = "
CREATE TABLE data_sets (
    path          TEXT    PRIMARY KEY,
    created_at    TEXT    NOT NULL,
    last_used_at  TEXT    NOT NULL,
    last_test     TEXT    NOT NULL,
    last_run_id   INTEGER,
    disk_bytes    INTEGER NOT NULL,
    data_files    INTEGER NOT NULL,
    redo_files    INTEGER NOT NULL
);
";

/// Runs and their events. `runs` keeps the whole result.json so that a run can be shown
/// after its directory is deleted; the columns beside it are what lists and comparisons
/// filter and sort on.
const V1_RUNS_AND_EVENTS: &str = "
CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    recorded_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    started_at       TEXT    NOT NULL,
    test             TEXT    NOT NULL,
    submission       TEXT    NOT NULL,
    io_mode          TEXT    NOT NULL,
    engine           TEXT    NOT NULL,
    sessions         INTEGER NOT NULL,
    block_size       INTEGER NOT NULL,
    request_bytes    INTEGER NOT NULL,
    size_bytes       INTEGER NOT NULL,
    files            INTEGER NOT NULL,
    duration_s       REAL    NOT NULL,
    measured_seconds REAL    NOT NULL,
    partial          INTEGER NOT NULL,
    stop_reason      TEXT    NOT NULL,
    target           TEXT    NOT NULL,
    run_dir          TEXT    NOT NULL,
    hostname         TEXT    NOT NULL,
    dbio_version     TEXT    NOT NULL,
    result_schema    TEXT    NOT NULL,
    requests         INTEGER NOT NULL,
    bytes            INTEGER NOT NULL,
    read_iops        REAL    NOT NULL,
    write_iops       REAL    NOT NULL,
    read_mib_per_s   REAL    NOT NULL,
    write_mib_per_s  REAL    NOT NULL,
    -- The event with the most wait time, and its p99 per request: the run's headline.
    main_event       TEXT,
    main_p99_us      REAL,
    result_json      TEXT    NOT NULL
);
CREATE INDEX runs_by_test ON runs (test, started_at);

CREATE TABLE run_events (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    event           TEXT    NOT NULL,
    requests        INTEGER NOT NULL,
    waits           INTEGER NOT NULL,
    bytes           INTEGER NOT NULL,
    errors          INTEGER NOT NULL,
    iops            REAL    NOT NULL,
    mib_per_s       REAL    NOT NULL,
    wait_time_s     REAL    NOT NULL,
    inflight_avg    REAL    NOT NULL,
    mean_us         REAL    NOT NULL,
    p50_us          REAL    NOT NULL,
    p90_us          REAL    NOT NULL,
    p95_us          REAL    NOT NULL,
    p99_us          REAL    NOT NULL,
    p99_9_us        REAL    NOT NULL,
    p99_99_us       REAL    NOT NULL,
    max_us          REAL    NOT NULL,
    wait_mean_us    REAL    NOT NULL,
    wait_p50_us     REAL    NOT NULL,
    wait_p90_us     REAL    NOT NULL,
    wait_p95_us     REAL    NOT NULL,
    wait_p99_us     REAL    NOT NULL,
    wait_p99_9_us   REAL    NOT NULL,
    wait_p99_99_us  REAL    NOT NULL,
    wait_max_us     REAL    NOT NULL,
    -- result.json's histogram_micro: [{\"lt_us\": 1, \"count\": 0}, ...], and the same
    -- buckets per wait.
    histogram_micro      TEXT NOT NULL,
    wait_histogram_micro TEXT NOT NULL,
    PRIMARY KEY (run_id, event)
);

CREATE TABLE run_warnings (
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    warning TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
);
";

/// `dbio mem` runs (result schema `dbio.mem.v1`): a table of their own, since they have no
/// events, sessions or data set; `runs` and its listing stay as they are.
const V3_MEM_RUNS: &str = "
CREATE TABLE mem_runs (
    id               INTEGER PRIMARY KEY,
    recorded_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    started_at       TEXT    NOT NULL,
    -- 'latency' (curve, NUMA matrix, loaded latency) or 'placement' (--shm, --pid).
    kind             TEXT    NOT NULL,
    pages            TEXT    NOT NULL,
    max_size_bytes   INTEGER,
    -- The headline figures: the first level's and memory's ns per load, the NUMA nodes,
    -- the interleaved latency, the loaded-latency bandwidth reached.
    l1_ns            REAL,
    memory_ns        REAL,
    nodes            INTEGER NOT NULL,
    interleave_ns    REAL,
    loaded_max_gib_s REAL,
    -- --shm PATH or --pid PID, and the pages found.
    shm_target       TEXT,
    shm_pages        INTEGER,
    partial          INTEGER NOT NULL,
    run_dir          TEXT    NOT NULL,
    hostname         TEXT    NOT NULL,
    dbio_version     TEXT    NOT NULL,
    result_schema    TEXT    NOT NULL,
    result_json      TEXT    NOT NULL
);
CREATE INDEX mem_runs_by_time ON mem_runs (started_at);
";

/// The hosts of a run across hosts (`--hosts`): one run in `runs` (its merged figures),
/// one row here per host with its main event's figures and its clock.
const V4_RUN_HOSTS: &str = "
CREATE TABLE run_hosts (
    run_id               INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq                  INTEGER NOT NULL,
    host                 TEXT    NOT NULL,
    hostname             TEXT    NOT NULL,
    clock_offset_us      REAL    NOT NULL,
    clock_uncertainty_us REAL    NOT NULL,
    partial              INTEGER NOT NULL,
    requests             INTEGER NOT NULL,
    iops                 REAL,
    mib_per_s            REAL,
    p99_us               REAL,
    data_set             TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
);
";

/// Run directories from the moment they are created until their run is recorded, so that
/// `dbio doctor` run from anywhere finds the directory of a run that was killed.
const V5_RUN_DIRS: &str = "
CREATE TABLE run_dirs (
    path        TEXT    PRIMARY KEY,
    created_at  TEXT    NOT NULL,
    test        TEXT    NOT NULL,
    -- Set when the run is recorded (its id in runs).
    finished    INTEGER NOT NULL DEFAULT 0
);
";

/// What a command made or changed outside its results directory (a throwaway server's
/// directories, a schema on a user's server, a disk's I/O scheduler), noted before it was
/// made and removed once undone, so that `dbio doctor` names what a killed command left and
/// `dbio clean --stale` undoes it.
const V6_LEFTOVERS: &str = "
CREATE TABLE leftovers (
    id          INTEGER PRIMARY KEY,
    kind        TEXT    NOT NULL,
    what        TEXT    NOT NULL,
    -- The command that undoes it by hand.
    undo        TEXT    NOT NULL,
    -- What undoing it checks first (JSON).
    detail      TEXT    NOT NULL,
    -- The dbio process that made it: pid, and boot id/start time (pids are reused).
    pid         INTEGER NOT NULL,
    pid_start   TEXT    NOT NULL,
    created_at  TEXT    NOT NULL
);
";

/// Every run's judgement of itself (docs/measurement.md): per event, how steady its rate and p99
/// were (result.json's `events[].stability`, with the variations, trends and verdict as
/// columns to sort and filter on), and the block-layer cross-check: the share of the
/// device's work over the window that was not dbio's (`os.cross_check`). Runs recorded
/// before have no rows here.
const V7_STABILITY: &str = "
CREATE TABLE run_stability (
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    event           TEXT    NOT NULL,
    rate_cv_pct     REAL    NOT NULL,
    rate_trend_pct  REAL    NOT NULL,
    p99_cv_pct      REAL,
    p99_trend_pct   REAL,
    -- 1 when the rate or the p99 moved or swung beyond its bound, 0 when steady, NULL when
    -- neither was judged (too short, too few requests).
    unstable        INTEGER,
    -- result.json's events[].stability.
    stability       TEXT    NOT NULL,
    PRIMARY KEY (run_id, event)
);

CREATE TABLE run_cross_checks (
    run_id        INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    device        TEXT    NOT NULL,
    ratio         REAL    NOT NULL,
    ratio_of      TEXT    NOT NULL,
    not_dbio_pct  REAL    NOT NULL
);
";

/// Compares of a test through a database with the matching plain test (`dbio pg
/// compare`): the compare whole, with its two runs' ids (their rows in `runs` may be
/// deleted on their own).
const V8_COMPARES: &str = "
CREATE TABLE compares (
    id               INTEGER PRIMARY KEY,
    recorded_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
    started_at       TEXT    NOT NULL,
    command          TEXT    NOT NULL,
    test             TEXT    NOT NULL,
    submission       TEXT    NOT NULL,
    storage_run_id   INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    database_run_id  INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    dir              TEXT    NOT NULL,
    result_schema    TEXT    NOT NULL,
    result_json      TEXT    NOT NULL
);
CREATE INDEX compares_by_time ON compares (started_at);
";

/// Why a database cannot be brought up to date.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    #[error(
        "it was written by a newer dbio (schema version {found}; this dbio knows up to {known}): upgrade dbio, or choose another file with --db"
    )]
    TooNew { found: u32, known: u32 },
    #[error(
        "it is an SQLite database that dbio did not create: choose another file with --db or DBIO_DB"
    )]
    Foreign,
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
}

/// Applies the migrations of `steps` that `conn` has not seen yet, all in one transaction,
/// and returns the version reached. An up-to-date database is only read. Two processes
/// upgrading an old database at once are serialized by the immediate transaction, and the
/// second finds nothing left to do.
pub fn migrate(conn: &mut Connection, steps: &[Migration]) -> Result<u32, MigrateError> {
    let known = steps.last().map_or(0, |m| m.version);
    // One snapshot for the version, the application id and the tables: read one by one,
    // another process's migration could land in between and make the store look foreign.
    let read = conn.transaction()?;
    let current = check(&read, known)?;
    read.commit()?;
    if current == known {
        return Ok(known);
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let found = check(&tx, known)?;
    for step in steps.iter().filter(|m| m.version > found) {
        tx.execute_batch(step.sql)?;
        // PRAGMA takes no bound parameters; the version is our own integer.
        tx.execute_batch(&format!("PRAGMA user_version = {}", step.version))?;
    }
    tx.execute_batch(&format!("PRAGMA application_id = {APPLICATION_ID}"))?;
    tx.commit()?;
    Ok(known)
}

/// The database's schema version, after checking that it is dbio's and not too new.
fn check(conn: &Connection, known: u32) -> Result<u32, MigrateError> {
    let found: u32 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > known {
        return Err(MigrateError::TooNew { found, known });
    }
    let app_id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    if app_id != APPLICATION_ID {
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        // Empty (a store being made), or an older dbio's store known by its tables.
        if (app_id != 0 || tables > 0) && !is_dbio_schema(conn)? {
            return Err(MigrateError::Foreign);
        }
    }
    Ok(found)
}

/// Whether `conn` holds dbio's schema: its application id, or — a store of an older dbio,
/// made before stores carried the id — exactly the schema dbio's migrations up to its
/// `user_version` make: the same tables, indexes and triggers, and in each the same
/// columns (name, type, NOT NULL, default, key), the same index columns and the same
/// foreign keys. Tables of the same names alone are not enough: that file is someone's.
pub(super) fn is_dbio_schema(conn: &Connection) -> rusqlite::Result<bool> {
    let app_id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    if app_id == APPLICATION_ID {
        return Ok(true);
    }
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if app_id != 0 || version < 1 || version > i64::from(current_version()) {
        return Ok(false);
    }
    let mut expected = Connection::open_in_memory()?;
    let steps = &MIGRATIONS[..version as usize];
    let tx = expected.transaction()?;
    for step in steps {
        tx.execute_batch(step.sql)?;
    }
    let want = schema_shape(&tx)?;
    drop(tx);
    Ok(schema_shape(conn)? == want)
}

/// Every object of the schema and, for each, its columns, index columns and foreign keys,
/// as text rows in a fixed order: two databases with the same rows have the same schema.
fn schema_shape(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    const SHAPE: &str = "
        SELECT 'object', m.type, m.name, m.tbl_name, '', '', '', '', ''
          FROM sqlite_schema m
        UNION ALL
        SELECT 'column', m.name, p.cid, p.name, p.type, p.\"notnull\", quote(p.dflt_value), p.pk,
               p.hidden
          FROM sqlite_schema m, pragma_table_xinfo(m.name) p WHERE m.type = 'table'
        UNION ALL
        SELECT 'index', m.name, p.seqno, p.cid, p.name, p.\"desc\", p.coll, p.key, ''
          FROM sqlite_schema m, pragma_index_xinfo(m.name) p WHERE m.type = 'index'
        UNION ALL
        SELECT 'key', m.name, p.id, p.seq, p.\"table\", p.\"from\", p.\"to\",
               p.on_update || ' ' || p.on_delete, p.match
          FROM sqlite_schema m, pragma_foreign_key_list(m.name) p WHERE m.type = 'table'
        ORDER BY 1, 2, 3, 4, 5, 6, 7, 8, 9";
    let mut stmt = conn.prepare(SHAPE)?;
    stmt.query_map([], |r| {
        let cells = (0..9)
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => "NULL".to_string(),
                    rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                    rusqlite::types::ValueRef::Real(x) => x.to_string(),
                    rusqlite::types::ValueRef::Text(t) | rusqlite::types::ValueRef::Blob(t) => {
                        String::from_utf8_lossy(t).into_owned()
                    }
                })
            })
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(cells.join("\u{1f}"))
    })?
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(conn: &Connection) -> u32 {
        conn.query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn versions_count_up_from_one_without_gaps() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1);
        }
        assert_eq!(current_version() as usize, MIGRATIONS.len());
    }

    #[test]
    fn a_new_database_gets_every_migration() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn, MIGRATIONS).unwrap(), current_version());
        assert_eq!(version(&conn), current_version());
        // Running again changes nothing.
        assert_eq!(migrate(&mut conn, MIGRATIONS).unwrap(), current_version());
    }

    /// An older dbio's database: only the first step applied, one row written. A newer dbio
    /// applies the rest and the row is still there.
    #[test]
    fn an_old_database_is_upgraded_and_keeps_its_rows() {
        const OLD: &[Migration] = &[Migration {
            version: 1,
            sql: "CREATE TABLE runs (id INTEGER PRIMARY KEY, test TEXT NOT NULL);",
        }];
        const NEW: &[Migration] = &[
            Migration {
                version: 1,
                sql: "CREATE TABLE runs (id INTEGER PRIMARY KEY, test TEXT NOT NULL);",
            },
            Migration {
                version: 2,
                sql: "ALTER TABLE runs ADD COLUMN sessions INTEGER NOT NULL DEFAULT 1;",
            },
            Migration {
                version: 3,
                sql: "CREATE TABLE notes (run_id INTEGER, note TEXT);",
            },
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        {
            let mut conn = Connection::open(&path).unwrap();
            assert_eq!(migrate(&mut conn, OLD).unwrap(), 1);
            conn.execute("INSERT INTO runs (test) VALUES ('read-iops')", [])
                .unwrap();
        }
        let mut conn = Connection::open(&path).unwrap();
        assert_eq!(migrate(&mut conn, NEW).unwrap(), 3);
        assert_eq!(version(&conn), 3);
        let (test, sessions): (String, i64) = conn
            .query_row("SELECT test, sessions FROM runs WHERE id = 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!((test.as_str(), sessions), ("read-iops", 1));
        conn.execute("INSERT INTO notes VALUES (1, 'upgraded')", [])
            .unwrap();
    }

    /// A step that fails leaves the database as it was: no half-applied schema.
    #[test]
    fn a_failing_step_changes_nothing() {
        const BROKEN: &[Migration] = &[
            Migration {
                version: 1,
                sql: "CREATE TABLE a (x INTEGER);",
            },
            Migration {
                version: 2,
                sql: "CREATE TABLE b (x INTEGER); THIS IS NOT SQL;",
            },
        ];
        let mut conn = Connection::open_in_memory().unwrap();
        assert!(migrate(&mut conn, BROKEN).is_err());
        assert_eq!(version(&conn), 0);
        let tables: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 0);
    }

    #[test]
    fn a_newer_database_is_refused_with_the_fix() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, MIGRATIONS).unwrap();
        conn.execute_batch(&format!("PRAGMA user_version = {}", current_version() + 1))
            .unwrap();
        let err = migrate(&mut conn, MIGRATIONS).unwrap_err();
        assert!(matches!(err, MigrateError::TooNew { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("newer dbio") && msg.contains("upgrade dbio"),
            "{msg}"
        );
    }

    #[test]
    fn someone_elses_database_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE customers (id INTEGER);")
            .unwrap();
        let err = migrate(&mut conn, MIGRATIONS).unwrap_err();
        assert!(matches!(err, MigrateError::Foreign), "{err}");
    }
}
