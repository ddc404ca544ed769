//! Compares of a test through a database with the matching plain test (`dbio pg compare`)
//! in the results store (table `compares`, schema step 8): the compare whole
//! (compare.json) with the ids of its two runs beside it, so that `dbio runs` lists it and
//! `dbio show c<ID>` shows it again after its directory is gone.

use std::path::Path;

use rusqlite::params;
use serde::Serialize;

use super::{Store, sqlite_error};
use crate::error::Result;

/// What the store keeps of a compare (made by the command, which knows its shape).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CompareRecord {
    pub started_at: String,
    /// `pg compare`.
    pub command: String,
    pub test: String,
    pub submission: String,
    pub storage_run_id: Option<i64>,
    pub database_run_id: Option<i64>,
    pub dir: String,
    pub schema: String,
    /// The compare.json text (its `id` is set after it is recorded).
    #[serde(skip)]
    pub json: String,
}

/// One compare as `dbio runs` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareListing {
    pub id: i64,
    #[serde(flatten)]
    pub record: CompareRecord,
}

impl Store {
    /// Records a compare whose files are in `dir`. Returns its id (in the compares' own
    /// numbering: `c<ID>`).
    pub fn record_compare(&mut self, r: &CompareRecord, dir: &Path) -> Result<i64> {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        self.conn
            .execute(
                "INSERT INTO compares (started_at, command, test, submission, storage_run_id,
                     database_run_id, dir, result_schema, result_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    r.started_at,
                    r.command,
                    r.test,
                    r.submission,
                    r.storage_run_id,
                    r.database_run_id,
                    dir.display().to_string(),
                    r.schema,
                    r.json
                ],
            )
            .map_err(|e| sqlite_error(&self.path, e))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Replaces the compare.json of compare `id` (once it carries its own id).
    pub fn update_compare_json(&mut self, id: i64, json: &str) -> Result<()> {
        self.conn
            .execute(
                "UPDATE compares SET result_json = ?2 WHERE id = ?1",
                params![id, json],
            )
            .map(|_| ())
            .map_err(|e| sqlite_error(&self.path, e))
    }

    /// The last `last` compares (all when None), oldest first.
    pub fn compares(&self, last: Option<usize>) -> Result<Vec<CompareListing>> {
        let select = || -> rusqlite::Result<Vec<CompareListing>> {
            let mut stmt = self.conn.prepare(
                "SELECT id, started_at, command, test, submission, storage_run_id,
                        database_run_id, dir, result_schema
                 FROM compares ORDER BY id DESC LIMIT ?1",
            )?;
            let mut v = stmt
                .query_map([last.map_or(-1, |n| n as i64)], |row| {
                    Ok(CompareListing {
                        id: row.get(0)?,
                        record: CompareRecord {
                            started_at: row.get(1)?,
                            command: row.get(2)?,
                            test: row.get(3)?,
                            submission: row.get(4)?,
                            storage_run_id: row.get(5)?,
                            database_run_id: row.get(6)?,
                            dir: row.get(7)?,
                            schema: row.get(8)?,
                            json: String::new(),
                        },
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            v.reverse();
            Ok(v)
        };
        select().map_err(|e| sqlite_error(&self.path, e))
    }

    /// The compare.json of compare `id`, as recorded.
    pub fn compare_json(&self, id: i64) -> Result<Option<String>> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row(
                "SELECT result_json FROM compares WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| sqlite_error(&self.path, e))
    }
}
