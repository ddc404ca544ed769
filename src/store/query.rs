//! The queries of the recorded runs: the listing of `dbio runs` and one run whole, for
//! `dbio show`, `dbio compare` and `dbio report`.

use serde::Serialize;

use rusqlite::{OptionalExtension, params};

use super::{Store, sqlite_error, unsigned};
use crate::error::{Error, Result};
use crate::report::RunResult;
use crate::units::Shown;

/// One run as `dbio runs` lists it: when, what, the parameters that tell runs apart, and
/// the headline figures of its main event (the test's own, first of its events).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunListing {
    pub id: i64,
    pub started_at: String,
    pub test: String,
    pub submission: String,
    pub io_mode: String,
    pub engine: String,
    pub sessions: u64,
    pub block_size: u64,
    pub request_bytes: u64,
    pub size_bytes: u64,
    pub duration_s: f64,
    pub measured_seconds: f64,
    pub partial: bool,
    pub run_dir: String,
    pub main_event: Option<String>,
    pub iops: Option<f64>,
    pub mib_per_s: Option<f64>,
    pub p99_us: Option<f64>,
}

/// Which runs to list.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    /// Only runs of this test ("read-iops", ...).
    pub test: Option<String>,
    /// Only the most recent N runs.
    pub last: Option<usize>,
}

/// A recorded run, with its result.json as written.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub id: i64,
    pub run_dir: String,
    /// The result.json text, byte for byte what the run directory held.
    pub result_json: String,
    pub result: RunResult,
}

impl Store {
    /// The runs `filter` selects, oldest first.
    pub fn runs(&self, filter: &RunFilter) -> Result<Vec<RunListing>> {
        self.select_runs(filter)
            .map_err(|e| sqlite_error(&self.path, e))
    }

    fn select_runs(&self, filter: &RunFilter) -> rusqlite::Result<Vec<RunListing>> {
        // The newest N that match, then turned back into oldest first.
        let mut stmt = self.conn.prepare(
            "SELECT r.id, r.started_at, r.test, r.submission, r.io_mode, r.engine, r.sessions,
                    r.block_size, r.request_bytes, r.size_bytes, r.duration_s,
                    r.measured_seconds, r.partial, r.run_dir, r.main_event, e.iops,
                    e.mib_per_s, e.p99_us
             FROM runs r
             LEFT JOIN run_events e ON e.run_id = r.id AND e.event = r.main_event
             WHERE ?1 IS NULL OR r.test = ?1
             ORDER BY r.id DESC
             LIMIT ?2",
        )?;
        let limit = filter.last.map_or(-1, |n| n as i64);
        let mut runs = stmt
            .query_map(params![filter.test, limit], |row| {
                let id: i64 = row.get(0)?;
                let count = |i| unsigned(row, i, || format!("run {id}"));
                Ok(RunListing {
                    id,
                    started_at: row.get(1)?,
                    test: row.get(2)?,
                    submission: row.get(3)?,
                    io_mode: row.get(4)?,
                    engine: row.get(5)?,
                    sessions: count(6)?,
                    block_size: count(7)?,
                    request_bytes: count(8)?,
                    size_bytes: count(9)?,
                    duration_s: row.get(10)?,
                    measured_seconds: row.get(11)?,
                    partial: row.get(12)?,
                    run_dir: row.get(13)?,
                    main_event: row.get(14)?,
                    iops: row.get(15)?,
                    mib_per_s: row.get(16)?,
                    p99_us: row.get(17)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        runs.reverse();
        Ok(runs)
    }

    /// The run recorded as `id`, if there is one.
    pub fn run(&self, id: i64) -> Result<Option<StoredRun>> {
        // The store is a file anyone may have written: a stored result is read only when
        // it is no larger than a result file may be, and checked like one.
        let row: Option<(String, Option<String>, i64)> = self
            .conn
            .query_row(
                "SELECT run_dir, CASE WHEN length(CAST(result_json AS BLOB)) <= ?2 THEN result_json END, length(CAST(result_json AS BLOB)) FROM runs WHERE id = ?1",
                rusqlite::params![id, crate::report::result::MAX_RESULT_BYTES as i64],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(|e| sqlite_error(&self.path, e))?;
        let Some((run_dir, result_json, len)) = row else {
            return Ok(None);
        };
        let bad = |why: String| {
            Error::usage(format!(
                "results store {}: run {id} has a result this dbio cannot read: {why}",
                self.path.shown()
            ))
        };
        let Some(result_json) = result_json else {
            return Err(bad(format!(
                "{len} bytes; a result is at most {} bytes",
                crate::report::result::MAX_RESULT_BYTES
            )));
        };
        let result = crate::report::result::from_untrusted(result_json.as_bytes()).map_err(bad)?;
        Ok(Some(StoredRun {
            id,
            run_dir,
            result_json,
            result,
        }))
    }

    /// The run recorded as `id`, or the one-line usage error `dbio` exits 2 with.
    pub fn run_or_usage_error(&self, id: i64) -> Result<StoredRun> {
        self.run(id)?.ok_or_else(|| {
            Error::usage(format!(
                "no run {id} in the results store {}; `dbio runs` lists the recorded runs",
                self.path.shown()
            ))
        })
    }
}
