//! The results store: every run recorded in an embedded SQLite database, so that runs can be
//! listed, shown and compared long after their run directories are gone.
//!
//! One row per run in `runs` holds the columns lists filter and sort on plus the whole
//! result.json; `run_events` holds each event's statistics and its power-of-two histogram.
//! Several dbio processes may finish at once: the database is in WAL mode, waits for a busy
//! lock instead of failing, and every write is one short immediate transaction.

mod compare;
mod guard;
mod mem;
mod query;
mod registry;
pub mod report;
pub mod schema;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, TransactionBehavior, params};

use crate::error::{Error, Result};
use crate::report::RunResult;
use crate::units::Shown;
pub use compare::{CompareListing, CompareRecord};
pub use mem::{MemFigures, MemRecord, MemRunListing};
pub use query::{RunFilter, RunListing, StoredRun};
pub use registry::{DataSetRecord, LeftoverRecord, RunDirRecord};
use schema::{MIGRATIONS, MigrateError, Migration};

/// How long a writer waits for another dbio process to finish its write.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a wait for the store looks at the stop flag: a signal ends dbio within 2 s
/// even while another process holds the store.
const BUSY_POLL: Duration = Duration::from_millis(10);

/// A wait for the store longer than this is said on stderr, once.
const SAY_WAIT_AFTER: Duration = Duration::from_secs(1);

/// An open results store.
pub struct Store {
    // Declared before the waiter: the connection (whose busy handler points at the
    // waiter) is closed first.
    conn: Connection,
    path: PathBuf,
    _waiter: Box<Waiter>,
}

/// The flag SIGINT, SIGTERM and SIGHUP set, which every wait for the store looks at.
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Makes waits for a locked store end when `flag` is set (once per process).
pub fn stop_waiting_on(flag: Arc<AtomicBool>) {
    let _ = STOP.set(flag);
}

/// Whether dbio was told to stop (a wait for the store then gives up).
pub fn stopped() -> bool {
    STOP.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// One store's waits for a lock another process holds: polled in short steps so that a
/// signal is heard, given up after [`BUSY_TIMEOUT`], said once when longer than a second.
struct Waiter {
    path: PathBuf,
    since: Cell<Option<Instant>>,
    said: Cell<bool>,
    /// The last wait ran out (or was stopped): the statement failed as busy after it.
    gave_up: Cell<bool>,
}

impl Waiter {
    fn new(path: &Path) -> Box<Waiter> {
        Box::new(Waiter {
            path: path.to_path_buf(),
            since: Cell::new(None),
            said: Cell::new(false),
            gave_up: Cell::new(false),
        })
    }

    /// Called while the store is busy (`first`: a new wait begins). Sleeps a moment and
    /// says whether to try again.
    fn keep_waiting(&self, first: bool) -> bool {
        let now = Instant::now();
        let since = match self.since.get() {
            Some(t) if !first => t,
            _ => {
                self.since.set(Some(now));
                now
            }
        };
        self.gave_up.set(false);
        if stopped() || now.duration_since(since) >= BUSY_TIMEOUT {
            self.gave_up.set(true);
            return false;
        }
        if now.duration_since(since) >= SAY_WAIT_AFTER && !self.said.replace(true) {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "dbio: waiting for the results store {}, locked by another dbio process (or another program using it); up to {} s, Ctrl-C stops",
                self.path.shown(),
                BUSY_TIMEOUT.as_secs()
            );
        }
        std::thread::sleep(BUSY_POLL);
        true
    }

    /// Makes `conn` wait through this waiter whenever the database is busy.
    fn install(&self, conn: &Connection) {
        unsafe extern "C" fn on_busy(
            ctx: *mut std::ffi::c_void,
            count: std::ffi::c_int,
        ) -> std::ffi::c_int {
            // SAFETY: ctx is the Waiter the Store owns, alive as long as its connection.
            let w = unsafe { &*(ctx as *const Waiter) };
            std::ffi::c_int::from(w.keep_waiting(count == 0))
        }
        // SAFETY: a valid connection handle; the context outlives the connection (the
        // Store drops its connection first).
        unsafe {
            rusqlite::ffi::sqlite3_busy_handler(
                conn.handle(),
                Some(on_busy),
                self as *const Waiter as *mut std::ffi::c_void,
            );
        }
    }
}

/// Where the store lives unless `--db` or `DBIO_DB` say otherwise:
/// `$XDG_DATA_HOME/dbio/dbio.db`, else `~/.local/share/dbio/dbio.db`.
pub fn default_path() -> Result<PathBuf> {
    let from_env = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            // The XDG spec says relative paths are invalid and must be ignored.
            .filter(|p| p.is_absolute())
    };
    let data_home = from_env("XDG_DATA_HOME")
        .or_else(|| from_env("HOME").map(|h| h.join(".local/share")))
        .ok_or_else(|| {
            Error::usage(
                "cannot tell where the results store lives: HOME is not set; give --db PATH or set DBIO_DB",
            )
        })?;
    Ok(data_home.join("dbio").join("dbio.db"))
}

/// The text of result.json for `r`, exactly as `report::write_run` writes it.
pub fn result_json_text(r: &RunResult) -> Result<String> {
    serde_json::to_string_pretty(r)
        .map(|s| s + "\n")
        .map_err(|e| Error::other(format!("cannot serialize the result: {e}")))
}

/// Refuses, before anything is created, deleted or measured, a store dbio must not open:
/// a link, FIFO, hard link or another user's file at its name or beside it, or a file dbio
/// did not create. Creates and changes nothing; a store that is missing, or that cannot be
/// read, is left to the command's own open (which says so).
pub fn preflight(path: &Path) -> Result<()> {
    guard::check_files(path)?;
    match guard::classify(path) {
        guard::Found::Foreign(e) => Err(e),
        _ => Ok(()),
    }
}

/// Refuses, creating nothing, a store named by `--db` or `DBIO_DB` that this user cannot
/// write — the file, or the nearest directory of its path that exists (where it would be
/// made) — as bad input (exit 2), before anything is measured: a run would otherwise be
/// made and then not recorded. (The default store, nobody's choice, only warns then.)
pub fn check_given(path: &Path) -> Result<()> {
    let mut at = path.to_path_buf();
    while !guard::present(&at) {
        at = match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
    }
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(at.as_os_str()))
        .map_err(|_| Error::usage(format!("--db {}: the path holds a NUL byte", path.shown())))?;
    let mode = if at == path {
        libc::R_OK | libc::W_OK
    } else {
        libc::W_OK | libc::X_OK
    };
    // SAFETY: a valid C string; faccessat only reads it (AT_EACCESS: as this process's user).
    if unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), mode, libc::AT_EACCESS) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::io(
            &format!("--db {}: cannot write", path.shown()),
            &at,
            &e,
        ));
    }
    Ok(())
}

impl Store {
    /// Opens the store at `path`, creating it (and its directory) if needed and bringing
    /// its schema up to date.
    pub fn open(path: &Path) -> Result<Store> {
        Store::open_with(path, MIGRATIONS)
    }

    /// Opens the store at `path` if it exists; otherwise an empty store in memory, so that
    /// looking at runs never creates a file.
    pub fn open_existing(path: &Path) -> Result<Store> {
        if let Some(store) = Store::open_present(path)? {
            return Ok(store);
        }
        let mut conn = Connection::open_in_memory().map_err(|e| sqlite_error(path, e))?;
        schema::migrate(&mut conn, MIGRATIONS).map_err(|e| migrate_error(path, e))?;
        let waiter = Waiter::new(path);
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            _waiter: waiter,
        })
    }

    /// Opens the store at `path` only if it exists: forgetting or finishing something in a
    /// store that is not there has nothing to do, and must not make a new one (a command
    /// whose store was removed while it ran, or was never made, leaves no store behind).
    pub fn open_present(path: &Path) -> Result<Option<Store>> {
        guard::check_files(path)?;
        if !guard::present(path) {
            return Ok(None);
        }
        Store::open(path).map(Some)
    }

    fn open_with(path: &Path, steps: &[Migration]) -> Result<Store> {
        guard::check_files(path)?;
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                Error::usage(format!(
                    "results store {}: give a file name (--db PATH or DBIO_DB), not a directory",
                    path.shown()
                ))
            })?;
        let mut created = false;
        loop {
            match guard::classify(path) {
                guard::Found::Dbio => break,
                guard::Found::Missing if !created => {
                    let dir = guard::store_dir(path)?;
                    guard::check_files(path)?;
                    // Lost the race to another dbio: its store is there now; use it.
                    guard::create(&dir, name, steps)?;
                    created = true;
                }
                guard::Found::Missing => {
                    return Err(Error::other(format!(
                        "results store {}: it was created and is gone again",
                        path.shown()
                    )));
                }
                guard::Found::Foreign(e) | guard::Found::Unreadable(e) => return Err(e),
            }
        }
        // Opened by its resolved path with no link followed: what was checked is what
        // SQLite opens (a symbolic link put there since is refused, not followed).
        let real = guard::store_dir(path)?.join(name);
        let mut conn = Connection::open_with_flags(
            &real,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_NOFOLLOW
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| sqlite_error(path, e))?;
        // Opening reads nothing yet; the first statement below opens the -wal and -shm.
        // Looked at once more just before it, which leaves the smallest moment for a link to
        // be put there (the private directory is what shuts other users out).
        guard::check_files(&real)?;
        let waiter = Waiter::new(path);
        waiter.install(&conn);
        // Several dbio processes opening a new store at once: switching it to WAL can be
        // refused as busy without SQLite waiting for the lock, so try again, through the
        // same waiter (a signal ends the wait).
        let mut first = true;
        loop {
            match prepare(&mut conn, steps) {
                // Busy after SQLite's own wait through the waiter ran out: not a second
                // wait of the same length.
                Err(e) if is_busy(&e) && !waiter.gave_up.get() && waiter.keep_waiting(first) => {
                    first = false
                }
                Err(e) => return Err(migrate_error(path, e)),
                Ok(mode) if !mode.eq_ignore_ascii_case("wal") => {
                    return Err(Error::other(format!(
                        "results store {}: cannot switch to WAL mode (got {mode})",
                        path.shown()
                    )));
                }
                Ok(_) => break,
            }
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            _waiter: waiter,
        })
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a run whose results are in `run_dir` (kept as an absolute path). Returns
    /// the run's id.
    pub fn record(&mut self, r: &RunResult, run_dir: &Path) -> Result<i64> {
        let json = result_json_text(r)?;
        let run_dir = std::fs::canonicalize(run_dir).unwrap_or_else(|_| run_dir.to_path_buf());
        let path = self.path.clone();
        self.insert(r, &json, &run_dir)
            .map_err(|e| sqlite_error(&path, e))
    }

    fn insert(&mut self, r: &RunResult, json: &str, run_dir: &Path) -> rusqlite::Result<i64> {
        let c = &r.config;
        let main = r.main_event();
        // Immediate: take the write lock up front, so a busy database is waited for
        // (busy_timeout) instead of failing when a read would have to become a write.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO runs (started_at, test, submission, io_mode, engine, sessions,
                block_size, request_bytes, size_bytes, files, duration_s, measured_seconds,
                partial, stop_reason, target, run_dir, hostname, dbio_version, result_schema,
                requests, bytes, read_iops, write_iops, read_mib_per_s, write_mib_per_s,
                main_event, main_p99_us, result_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
            params![
                r.started_at,
                r.test,
                r.submission_label(),
                c.io_mode,
                c.engine,
                c.sessions as i64,
                c.block_size as i64,
                c.request_bytes as i64,
                c.size_bytes as i64,
                c.files,
                c.duration_s,
                r.measured_seconds,
                r.partial,
                r.stop_reason,
                c.target,
                run_dir.display().to_string(),
                r.host.hostname,
                r.dbio_version,
                r.schema,
                r.totals.requests as i64,
                r.totals.bytes as i64,
                r.totals.read_iops,
                r.totals.write_iops,
                r.totals.read_mib_per_s,
                r.totals.write_mib_per_s,
                main.map(|e| e.name.as_str()),
                main.map(|e| e.latency_us.p99),
                json,
            ],
        )?;
        let id = tx.last_insert_rowid();
        for e in &r.events {
            let (l, w) = (&e.latency_us, &e.wait_latency_us);
            let json = |buckets| {
                serde_json::to_string(buckets)
                    .map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))
            };
            tx.execute(
                "INSERT INTO run_events VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
                    ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26,
                    ?27, ?28)",
                params![
                    id,
                    e.name,
                    e.requests as i64,
                    e.waits as i64,
                    e.bytes as i64,
                    e.errors as i64,
                    e.iops,
                    e.mib_per_s,
                    e.wait_time_s,
                    e.inflight_avg,
                    l.mean,
                    l.p50,
                    l.p90,
                    l.p95,
                    l.p99,
                    l.p99_9,
                    l.p99_99,
                    l.max,
                    w.mean,
                    w.p50,
                    w.p90,
                    w.p95,
                    w.p99,
                    w.p99_9,
                    w.p99_99,
                    w.max,
                    json(&e.histogram_micro)?,
                    json(&e.wait_histogram_micro)?,
                ],
            )?;
        }
        for (seq, h) in r.hosts.iter().enumerate() {
            let e = main.and_then(|m| h.events.iter().find(|e| e.name == m.name));
            tx.execute(
                "INSERT INTO run_hosts (run_id, seq, host, hostname, clock_offset_us,
                    clock_uncertainty_us, partial, requests, iops, mib_per_s, p99_us, data_set)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    id,
                    seq as i64,
                    h.host,
                    h.hostname,
                    h.clock_offset_us,
                    h.clock_uncertainty_us,
                    h.partial,
                    h.totals.requests as i64,
                    e.map(|e| e.iops),
                    e.map(|e| e.mib_per_s),
                    e.map(|e| e.latency_us.p99),
                    h.dataset.path,
                ],
            )?;
        }
        for e in &r.events {
            let Some(st) = &e.stability else {
                continue;
            };
            let p99 = st.p99_us.as_ref();
            let judged = st.rate.judged || p99.is_some_and(|p| p.judged);
            let unstable = st.rate.unstable || p99.is_some_and(|p| p.unstable);
            tx.execute(
                "INSERT INTO run_stability (run_id, event, rate_cv_pct, rate_trend_pct,
                    p99_cv_pct, p99_trend_pct, unstable, stability)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    id,
                    e.name,
                    st.rate.cv_pct,
                    st.rate.trend_pct,
                    p99.map(|p| p.cv_pct),
                    p99.map(|p| p.trend_pct),
                    judged.then_some(unstable),
                    serde_json::to_string(st)
                        .map_err(|err| rusqlite::Error::ToSqlConversionFailure(Box::new(err)))?,
                ],
            )?;
        }
        if let Some(c) = r.os.as_ref().and_then(|o| o.cross_check.as_ref()) {
            tx.execute(
                "INSERT INTO run_cross_checks (run_id, device, ratio, ratio_of, not_dbio_pct)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, c.device, c.ratio, c.ratio_of, c.not_dbio_pct],
            )?;
        }
        for (seq, warning) in r.warnings.iter().enumerate() {
            tx.execute(
                "INSERT INTO run_warnings (run_id, seq, warning) VALUES (?1, ?2, ?3)",
                params![id, seq as i64, warning.to_string()],
            )?;
        }
        tx.commit()?;
        Ok(id)
    }
}

/// A count or size read back from the store, which is a file anyone may have written: a
/// negative value is refused (naming `whose` row and the column), never wrapped into a
/// huge one.
pub(crate) fn unsigned(
    row: &rusqlite::Row<'_>,
    i: usize,
    whose: impl FnOnce() -> String,
) -> rusqlite::Result<u64> {
    let value: i64 = row.get(i)?;
    u64::try_from(value).map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Integer,
            Box::new(OutOfRange {
                whose: whose(),
                column: row.as_ref().column_name(i).unwrap_or("?").to_string(),
                value,
            }),
        )
    })
}

/// A value in the store that no run of dbio's can have.
#[derive(Debug)]
struct OutOfRange {
    whose: String,
    column: String,
    value: i64,
}

impl std::fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} has {} = {}, which dbio never records",
            self.whose.shown(),
            self.column.shown(),
            self.value
        )
    }
}

impl std::error::Error for OutOfRange {}

fn sqlite_error(path: &Path, e: rusqlite::Error) -> Error {
    if let rusqlite::Error::FromSqlConversionFailure(_, _, why) = &e
        && let Some(bad) = why.downcast_ref::<OutOfRange>()
    {
        return Error::usage(format!(
            "results store {}: {bad}; the store was changed by something other than dbio: correct or delete that row, or use another store with --db PATH or DBIO_DB",
            path.shown()
        ));
    }
    let code = match &e {
        rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
        _ => None,
    };
    match code {
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
            damaged(path, e.to_string())
        }
        Some(rusqlite::ErrorCode::DatabaseBusy) if stopped() => Error::Interrupted(format!(
            "stopped while waiting for the results store {} (another process holds it)",
            path.shown()
        )),
        Some(rusqlite::ErrorCode::DatabaseBusy) => Error::other(format!(
            "results store {}: {LOCKED} for over {} s: a dbio paused (Ctrl-Z, SIGSTOP) or hung in the middle of a write holds it; `dbio doctor` names the stopped ones: resume it (`fg`, `kill -CONT PID`) or end it, and try again",
            path.shown(),
            BUSY_TIMEOUT.as_secs()
        )),
        _ => Error::other(format!("results store {}: {e}", path.shown())),
    }
}

/// What a store error says when another process held the store's lock too long.
const LOCKED: &str = "locked by another process";

/// Whether `e` is the store held by another process for longer than dbio waits (nothing
/// is wrong with the store itself).
pub fn is_locked(e: &Error) -> bool {
    matches!(e, Error::Other(m) if m.contains(LOCKED))
}

/// The file is damaged or not a database: dbio never repairs or replaces it.
fn damaged(path: &Path, e: String) -> Error {
    let p = path.shown().to_string();
    Error::usage(format!(
        "results store {p}: {e}; it is damaged or not dbio's. Move it aside (`mv {} {}`) and dbio starts a new store there, or use another with --db PATH or DBIO_DB",
        crate::units::shell_word(&p),
        crate::units::shell_word(&format!("{p}.bad"))
    ))
}

/// Sets the store's connection up: WAL (readers never block the writer and a crash
/// mid-write cannot corrupt the file), foreign keys, migrations. Returns the journal mode.
fn prepare(
    conn: &mut Connection,
    steps: &[Migration],
) -> std::result::Result<String, MigrateError> {
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    conn.execute_batch("PRAGMA foreign_keys = ON")?;
    schema::migrate(conn, steps)?;
    Ok(mode)
}

/// SQLite said "database is locked".
fn is_busy(e: &MigrateError) -> bool {
    matches!(e, MigrateError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) if f.code == rusqlite::ErrorCode::DatabaseBusy)
}

fn migrate_error(path: &Path, e: MigrateError) -> Error {
    match e {
        MigrateError::Sqlite(e) => sqlite_error(path, e),
        e => Error::usage(format!(
            "cannot use {} as the results store: {e}",
            path.shown()
        )),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A complete result of one event, as a run would produce it.
    pub(crate) fn sample(test: &str, event: &str, iops: f64, p99: f64) -> RunResult {
        let latency = serde_json::json!({
            "mean": p99 / 2.0, "p50": p99 / 2.0, "p90": p99 * 0.8, "p95": p99 * 0.9,
            "p99": p99, "p99_9": p99 * 1.5, "p99_99": p99 * 2.0, "max": p99 * 3.0
        });
        serde_json::from_value(serde_json::json!({
            "schema": "dbio.result.v1", "dbio_version": "0.1.0", "test": test,
            "started_at": "2026-11-22T01:30:35Z", "measured_seconds": 2.0,
            "partial": false, "stop_reason": "completed",
            "config": {
                "target": "./dbio-data", "size_bytes": 268435456u64, "block_size": 8192,
                "files": 4, "sessions": 2, "submission": "async", "io_mode": "setall",
                "engine_requested": "auto", "engine": "uring", "engine_reason": "auto",
                "engine_notes": [], "open_flags": ["O_RDONLY", "O_DIRECT", "O_DSYNC"],
                "duration_s": 2.0, "warmup_s": 0.0, "batch": 32, "depth": 8, "mbrc": 128,
                "request_bytes": 8192, "seed": 1, "dio_mem_align": 512,
                "dio_offset_align": 512, "dio_align_source": "statx", "buffer_align": 4096,
                "out": "./dbio-runs"
            },
            "dataset": {
                "path": "./dbio-data", "kind": "directory", "size_bytes": 268435456u64,
                "files": 4, "block_size": 8192, "reused": true, "prepare_seconds": 0.0,
                "fill_method": null
            },
            "host": { "hostname": "db1", "kernel": "6.18", "cpus": 2 },
            "events": [{
                "name": event, "requests": (iops * 2.0) as u64, "waits": 10, "bytes": 8192,
                "errors": 0, "iops": iops, "mib_per_s": iops / 128.0,
                "latency_us": latency, "wait_latency_us": latency, "wait_time_s": 3.5,
                "inflight_avg": 1.0, "submit_calls": 0, "submit_mean_us": 0.0,
                "histogram_micro": [{ "lt_us": 1, "count": 0 }, { "lt_us": 2, "count": 5 }],
                "wait_histogram_micro": [{ "lt_us": 2, "count": 3 }]
            }],
            "totals": { "requests": 10, "bytes": 8192, "read_iops": iops, "write_iops": 0.0,
                        "read_mib_per_s": iops / 128.0, "write_mib_per_s": 0.0 },
            "cpu": { "user_s": 0.1, "system_s": 0.2, "cpu_s_per_1k_requests": 0.01 },
            "timeseries": [], "warnings": ["a warning"], "errors": []
        }))
        .expect("sample result")
    }

    fn temp_store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("sub/dir/dbio.db")).unwrap();
        (dir, store)
    }

    #[test]
    fn a_recorded_run_comes_back_whole() {
        let (_dir, mut store) = temp_store();
        let r = sample("read-iops", "db file parallel read", 1000.0, 250.0);
        let id = store.record(&r, Path::new("/runs/a")).unwrap();
        let back = store.run(id).unwrap().expect("recorded run");
        assert_eq!(back.run_dir, "/runs/a");
        assert_eq!(back.result_json, result_json_text(&r).unwrap());
        assert_eq!(
            crate::report::summary::render(&back.result),
            crate::report::summary::render(&r)
        );
        let (hist, wait_hist, p99, warning): (String, String, f64, String) = store
            .conn
            .query_row(
                "SELECT e.histogram_micro, e.wait_histogram_micro, e.p99_us, w.warning
                 FROM run_events e JOIN run_warnings w USING (run_id) WHERE run_id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .unwrap();
        assert_eq!(hist, r#"[{"lt_us":1,"count":0},{"lt_us":2,"count":5}]"#);
        assert_eq!(wait_hist, r#"[{"lt_us":2,"count":3}]"#);
        assert_eq!(p99, 250.0);
        assert_eq!(warning, "a warning");
        assert!(store.run(id + 1).unwrap().is_none());
        let err = store.run_or_usage_error(id + 1).unwrap_err();
        assert_eq!(err.exit_code(), crate::error::ExitCode::Usage);
        assert!(err.to_string().contains(&format!("no run {}", id + 1)));
    }

    /// What a run judged of itself — each event's stability, the cross-check, the warnings
    /// they gave — is kept with it.
    #[test]
    fn a_runs_stability_and_cross_check_are_kept() {
        let (_dir, mut store) = temp_store();
        let mut r = crate::report::fixture::run_result(20, &["db file sequential read"], true);
        // The second half at a tenth of the rate: unstable, with its warning.
        for p in r.timeseries.iter_mut().filter(|p| p.t > 10) {
            p.requests /= 10;
        }
        r.warnings.clear();
        r.judge_stability();
        let c = r.os.as_mut().unwrap().cross_check.as_mut().unwrap();
        (c.ratio, c.ratio_of, c.not_dbio_pct) = (2.4, "read bytes".into(), 58.0);
        let id = store.record(&r, Path::new("/runs/s")).unwrap();
        let st = r.events[0].stability.as_ref().unwrap();
        assert!(st.rate.unstable);
        let (cv, trend, unstable, json): (f64, f64, bool, String) = store
            .conn
            .query_row(
                "SELECT rate_cv_pct, rate_trend_pct, unstable, stability FROM run_stability
                 WHERE run_id = ?1 AND event = 'db file sequential read'",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            (cv, trend, unstable),
            (st.rate.cv_pct, st.rate.trend_pct, true)
        );
        assert_eq!(
            serde_json::from_str::<crate::report::result::Stability>(&json).unwrap(),
            *st
        );
        let (device, ratio, of, pct): (String, f64, String, f64) = store
            .conn
            .query_row(
                "SELECT device, ratio, ratio_of, not_dbio_pct FROM run_cross_checks WHERE run_id = ?1",
                [id],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            (device.as_str(), ratio, of.as_str(), pct),
            ("vda", 2.4, "read bytes", 58.0)
        );
        let warnings: Vec<String> = store
            .conn
            .prepare("SELECT warning FROM run_warnings WHERE run_id = ?1 ORDER BY seq")
            .unwrap()
            .query_map([id], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("requests fell from"), "{warnings:?}");
        // Shown again from the store, with its stability.
        let back = store.run(id).unwrap().unwrap();
        assert_eq!(back.result.events[0].stability.as_ref(), Some(st));
    }

    #[test]
    fn runs_are_listed_with_their_main_event_and_filtered() {
        let (_dir, mut store) = temp_store();
        let a = sample("read-iops", "db file parallel read", 1000.0, 250.0);
        let b = sample("write-iops", "db file parallel write", 500.0, 900.0);
        let c = sample("read-iops", "db file parallel read", 2000.0, 125.0);
        let ids: Vec<i64> = [&a, &b, &c]
            .iter()
            .map(|r| store.record(r, Path::new("/runs/x")).unwrap())
            .collect();
        let all = store.runs(&RunFilter::default()).unwrap();
        assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), ids);
        assert_eq!(all[1].test, "write-iops");
        assert_eq!(all[1].main_event.as_deref(), Some("db file parallel write"));
        assert_eq!(
            (all[1].iops, all[1].p99_us, all[1].block_size),
            (Some(500.0), Some(900.0), 8192)
        );

        let reads = store
            .runs(&RunFilter {
                test: Some("read-iops".into()),
                last: None,
            })
            .unwrap();
        assert_eq!(
            reads.iter().map(|r| r.id).collect::<Vec<_>>(),
            [ids[0], ids[2]]
        );
        let last_two = store
            .runs(&RunFilter {
                test: None,
                last: Some(2),
            })
            .unwrap();
        assert_eq!(last_two.iter().map(|r| r.id).collect::<Vec<_>>(), &ids[1..]);
        let last_write = store
            .runs(&RunFilter {
                test: Some("write-iops".into()),
                last: Some(1),
            })
            .unwrap();
        assert_eq!(last_write.len(), 1);
        assert_eq!(last_write[0].id, ids[1]);
    }

    /// A database written by the first schema version — with a run in it — is upgraded by
    /// a later migration when opened, and the run can still be listed and shown.
    #[test]
    fn a_v1_database_is_upgraded_and_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        let r = sample("read-mbps", "direct path read", 300.0, 4000.0);
        let id = {
            let mut v1 = Store::open_with(&path, &MIGRATIONS[..1]).unwrap();
            v1.record(&r, Path::new("/runs/old")).unwrap()
        };
        let mut upgraded_steps = MIGRATIONS.to_vec();
        upgraded_steps.push(Migration {
            version: schema::current_version() + 1,
            sql: "ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
                  CREATE TABLE run_tags (run_id INTEGER NOT NULL, tag TEXT NOT NULL);",
        });
        let upgraded = Store::open_with(&path, &upgraded_steps).unwrap();
        let version: u32 = upgraded
            .conn
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap();
        assert_eq!(version, schema::current_version() + 1);
        let listed = upgraded.runs(&RunFilter::default()).unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].main_event.as_deref(), Some("direct path read"));
        let back = upgraded.run(id).unwrap().expect("run survives the upgrade");
        assert_eq!(back.result.test, "read-mbps");
        assert_eq!(back.result_json, result_json_text(&r).unwrap());
    }

    /// A store of an older dbio, made before stores carried dbio's application id, is known
    /// by its exact schema and upgraded; a file with tables of the same names, the same
    /// schema version and other columns is someone's, and is left as it was.
    #[test]
    fn an_older_store_is_known_by_its_exact_schema_only() {
        let dir = tempfile::tempdir().unwrap();
        // Stores without the id had schema versions 1 to 4 (the id came with version 5).
        for version in 1..MIGRATIONS.len() {
            let path = dir.path().join(format!("v{version}.db"));
            let r = sample("read-iops", "db file sequential read", 700.0, 90.0);
            {
                let mut old = Store::open_with(&path, &MIGRATIONS[..version]).unwrap();
                old.record(&r, Path::new("/runs/old")).unwrap();
                old.conn.execute_batch("PRAGMA application_id = 0").unwrap();
            }
            let store = Store::open(&path).unwrap();
            let listed = store.runs(&RunFilter::default()).unwrap();
            assert_eq!(listed.len(), 1, "v{version}");
            assert_eq!(listed[0].iops, Some(700.0), "v{version}");
            let (v, id): (u32, i32) = store
                .conn
                .query_row("PRAGMA user_version", [], |row| row.get(0))
                .and_then(|v| {
                    store
                        .conn
                        .query_row("PRAGMA application_id", [], |row| row.get(0))
                        .map(|id| (v, id))
                })
                .unwrap();
            assert_eq!((v, id), (schema::current_version(), schema::APPLICATION_ID));
        }

        let fake = dir.path().join("ci.db");
        Connection::open(&fake)
            .unwrap()
            .execute_batch(
                "CREATE TABLE runs (id INTEGER PRIMARY KEY, x);
                 CREATE TABLE run_events (a); CREATE TABLE run_warnings (b);
                 PRAGMA user_version = 1;",
            )
            .unwrap();
        let before = std::fs::read(&fake).unwrap();
        let err = Store::open(&fake).err().expect("refused");
        assert_eq!(err.exit_code(), crate::error::ExitCode::Usage);
        assert!(err.to_string().contains("did not create"), "{err}");
        assert_eq!(std::fs::read(&fake).unwrap(), before);
        // dbio's own first tables with one column changed are not dbio's either.
        let near = dir.path().join("near.db");
        let conn = Connection::open(&near).unwrap();
        conn.execute_batch(&MIGRATIONS[0].sql.replace(
            "sessions         INTEGER NOT NULL,",
            "sessions         TEXT    NOT NULL,",
        ))
        .unwrap();
        conn.execute_batch("PRAGMA user_version = 1").unwrap();
        drop(conn);
        let before = std::fs::read(&near).unwrap();
        assert!(Store::open(&near).is_err());
        assert_eq!(std::fs::read(&near).unwrap(), before);
    }

    /// Two processes finishing at once: each has its own connection and writes while the
    /// other holds the lock. Every run must land, none may fail with "database is locked".
    #[test]
    fn concurrent_writers_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dbio.db");
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let mut store = Store::open(&path).unwrap();
                    let r = sample(
                        "read-iops",
                        "db file sequential read",
                        100.0 + w as f64,
                        9.0,
                    );
                    for _ in 0..25 {
                        store.record(&r, Path::new("/runs/w")).unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().expect("writer succeeded");
        }
        let store = Store::open(&path).unwrap();
        assert_eq!(store.runs(&RunFilter::default()).unwrap().len(), 100);
        let check: String = store
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(check, "ok");
    }

    /// What only forgets or finishes opens the store if it is there, and never makes one
    /// (nor its directories); a store that is there is opened as always.
    #[test]
    fn forgetting_in_a_missing_store_makes_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone/dbio.db");
        assert!(Store::open_present(&path).unwrap().is_none());
        assert!(!dir.path().join("gone").exists());
        let mut made = Store::open(&path).unwrap();
        made.record(
            &sample("read-iops", "db file sequential read", 100.0, 50.0),
            dir.path(),
        )
        .unwrap();
        drop(made);
        let store = Store::open_present(&path).unwrap().expect("there");
        assert_eq!(store.runs(&RunFilter::default()).unwrap().len(), 1);
    }

    #[test]
    fn looking_at_a_missing_store_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none/dbio.db");
        let store = Store::open_existing(&path).unwrap();
        assert!(store.runs(&RunFilter::default()).unwrap().is_empty());
        assert!(!dir.path().join("none").exists());
    }

    /// "database is locked" after the wait says what holds the store and what to do, and
    /// is known as a lock (the store is not damaged: nobody should move it aside).
    #[test]
    fn a_store_held_too_long_is_said_as_locked_with_what_to_do() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        let e = sqlite_error(Path::new("/x/dbio.db"), busy);
        assert!(is_locked(&e), "{e}");
        let m = e.to_string();
        assert!(m.contains("/x/dbio.db") && m.contains("kill -CONT"), "{m}");
        let corrupt = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
            None,
        );
        assert!(!is_locked(&sqlite_error(Path::new("/x/dbio.db"), corrupt)));
    }

    #[test]
    fn a_file_that_is_not_a_store_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.db");
        Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE customers (id INTEGER)")
            .unwrap();
        let err = Store::open(&path).err().expect("refused");
        assert_eq!(err.exit_code(), crate::error::ExitCode::Usage);
        assert!(err.to_string().contains("--db"), "{err}");
    }
}
