//! The registry: the data sets and run directories this store knows of, so that `dbio
//! doctor` and `dbio clean --stale` find what runs left behind even when no run was
//! recorded.

use serde::Serialize;

use rusqlite::params;

use super::{Store, sqlite_error, unsigned};
use crate::error::Result;

/// A data set as the registry knows it: where it is, when it was made and last used, by
/// which test and run, and what it holds on disk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataSetRecord {
    /// The data set directory, absolute.
    pub path: String,
    /// When this store first saw it.
    pub created_at: String,
    pub last_used_at: String,
    /// The test of the last run that used it.
    pub last_test: String,
    /// The last recorded run on it (None while that run has not ended).
    pub last_run_id: Option<i64>,
    /// Data, redo and temp bytes on disk when it was last used.
    pub disk_bytes: u64,
    pub data_files: u64,
    pub redo_files: u64,
}

/// A run directory the store knows of whose run was not recorded (yet).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunDirRecord {
    /// The run directory, absolute.
    pub path: String,
    pub created_at: String,
    pub test: String,
}

/// Something a command made or changed outside its results directory, as the store noted
/// it (see [`crate::safety::cleanup::Leftover`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftoverRecord {
    pub id: i64,
    pub kind: String,
    pub what: String,
    pub undo: String,
    pub detail: String,
    /// The dbio process that made it.
    pub pid: u32,
    /// That process's identity ([`crate::sys::process_identity`]).
    pub pid_start: String,
    pub created_at: String,
}

impl LeftoverRecord {
    /// Whether the process that made it still runs (then it is in use, not left).
    pub fn owner_alive(&self) -> bool {
        crate::sys::process_identity(self.pid).is_some_and(|now| now == self.pid_start)
    }
}

impl Store {
    /// Notes a leftover of this process's; returns its id.
    pub fn note_leftover(&mut self, l: &crate::safety::cleanup::Leftover) -> Result<i64> {
        let pid = std::process::id();
        self.conn
            .execute(
                "INSERT INTO leftovers (kind, what, undo, detail, pid, pid_start, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    l.kind,
                    l.what,
                    l.undo,
                    l.detail,
                    pid,
                    crate::sys::process_identity(pid).unwrap_or_default(),
                    crate::sys::utc_now_rfc3339()
                ],
            )
            .map(|_| self.conn.last_insert_rowid())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// The leftover `id` now says `l`.
    pub fn update_leftover(&mut self, id: i64, l: &crate::safety::cleanup::Leftover) -> Result<()> {
        self.conn
            .execute(
                "UPDATE leftovers SET what = ?2, undo = ?3, detail = ?4 WHERE id = ?1",
                params![id, l.what, l.undo, l.detail],
            )
            .map(|_| ())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// Forgets the leftover `id` (undone).
    pub fn forget_leftover(&mut self, id: i64) -> Result<()> {
        self.conn
            .execute("DELETE FROM leftovers WHERE id = ?1", [id])
            .map(|_| ())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// Forgets every leftover of `kind` and `what` (undone by another command).
    pub fn forget_leftovers(&mut self, kind: &str, what: &str) -> Result<()> {
        self.conn
            .execute(
                "DELETE FROM leftovers WHERE kind = ?1 AND what = ?2",
                [kind, what],
            )
            .map(|_| ())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// Every leftover noted, oldest first.
    pub fn leftovers(&self) -> Result<Vec<LeftoverRecord>> {
        let query = || -> rusqlite::Result<Vec<LeftoverRecord>> {
            let mut stmt = self.conn.prepare(
                "SELECT id, kind, what, undo, detail, pid, pid_start, created_at
                 FROM leftovers ORDER BY id",
            )?;
            stmt.query_map([], |row| {
                Ok(LeftoverRecord {
                    id: row.get(0)?,
                    kind: row.get(1)?,
                    what: row.get(2)?,
                    undo: row.get(3)?,
                    detail: row.get(4)?,
                    pid: row.get(5)?,
                    pid_start: row.get(6)?,
                    created_at: row.get(7)?,
                })
            })?
            .collect()
        };
        query().map_err(|e| sqlite_error(&self.path, e))
    }

    /// Notes that a run (of `r.last_test`) is using the data set at `r.path`: added to the
    /// registry, or brought up to date (its first `created_at` kept).
    pub fn note_data_set(&mut self, r: &DataSetRecord) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO data_sets (path, created_at, last_used_at, last_test, last_run_id,
                    disk_bytes, data_files, redo_files)
                 VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7)
                 ON CONFLICT (path) DO UPDATE SET last_used_at = excluded.last_used_at,
                    last_test = excluded.last_test, last_run_id = NULL,
                    disk_bytes = excluded.disk_bytes, data_files = excluded.data_files,
                    redo_files = excluded.redo_files",
                params![
                    r.path,
                    r.created_at,
                    r.last_used_at,
                    r.last_test,
                    r.disk_bytes as i64,
                    r.data_files as i64,
                    r.redo_files as i64
                ],
            )
            .map(|_| ())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// Records that run `id` was the last run on the data set at `path`.
    pub fn link_data_set_run(&mut self, path: &str, id: i64) -> Result<()> {
        self.conn
            .execute(
                "UPDATE data_sets SET last_run_id = ?2 WHERE path = ?1",
                params![path, id],
            )
            .map(|_| ())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// Forgets the data set at `path` (removed by `dbio clean`). Returns whether it was known.
    pub fn forget_data_set(&mut self, path: &str) -> Result<bool> {
        self.conn
            .execute("DELETE FROM data_sets WHERE path = ?1", [path])
            .map(|n| n > 0)
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// Registers the run directory `path` (absolute) of a run of `test` the moment it is
    /// created, before anything is measured.
    pub fn note_run_dir(&mut self, path: &str, test: &str) -> Result<()> {
        self.conn
            .execute(
                "INSERT INTO run_dirs (path, created_at, test) VALUES (?1, ?2, ?3)
                 ON CONFLICT (path) DO UPDATE SET created_at = excluded.created_at,
                    test = excluded.test, finished = 0",
                params![path, crate::sys::utc_now_rfc3339(), test],
            )
            .map(|_| ())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// Marks the run directory `path` finished (its run is recorded).
    pub fn finish_run_dir(&mut self, path: &str) -> Result<()> {
        self.conn
            .execute("UPDATE run_dirs SET finished = 1 WHERE path = ?1", [path])
            .map(|_| ())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// Forgets the run directory `path` (removed, or never used).
    pub fn forget_run_dir(&mut self, path: &str) -> Result<bool> {
        self.conn
            .execute("DELETE FROM run_dirs WHERE path = ?1", [path])
            .map(|n| n > 0)
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// The run directories whose run was never recorded, by path.
    pub fn unfinished_run_dirs(&self) -> Result<Vec<RunDirRecord>> {
        let query = || -> rusqlite::Result<Vec<RunDirRecord>> {
            let mut stmt = self.conn.prepare(
                "SELECT path, created_at, test FROM run_dirs WHERE finished = 0 ORDER BY path",
            )?;
            stmt.query_map([], |row| {
                Ok(RunDirRecord {
                    path: row.get(0)?,
                    created_at: row.get(1)?,
                    test: row.get(2)?,
                })
            })?
            .collect()
        };
        query().map_err(|e| sqlite_error(&self.path, e))
    }

    /// Every data set in the registry, by path.
    pub fn data_sets(&self) -> Result<Vec<DataSetRecord>> {
        let query = || -> rusqlite::Result<Vec<DataSetRecord>> {
            let mut stmt = self.conn.prepare(
                "SELECT path, created_at, last_used_at, last_test, last_run_id, disk_bytes,
                        data_files, redo_files
                 FROM data_sets ORDER BY path",
            )?;
            stmt.query_map([], |row| {
                let path: String = row.get(0)?;
                let count = |i| unsigned(row, i, || format!("data set {path}"));
                Ok(DataSetRecord {
                    created_at: row.get(1)?,
                    last_used_at: row.get(2)?,
                    last_test: row.get(3)?,
                    last_run_id: row.get(4)?,
                    disk_bytes: count(5)?,
                    data_files: count(6)?,
                    redo_files: count(7)?,
                    path,
                })
            })?
            .collect()
        };
        query().map_err(|e| sqlite_error(&self.path, e))
    }
}
