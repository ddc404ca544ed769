//! `dbio mem` runs in the results store (table `mem_runs`, schema step 3): recorded whole
//! (result.json) with their headline figures beside it.

use std::path::Path;

use rusqlite::{TransactionBehavior, params};
use serde::Serialize;

use super::{Store, sqlite_error};
use crate::error::Result;

/// The headline figures of a `dbio mem` run: what the store keeps beside its result.json
/// (made by `crate::mem`, which knows the result's shape; the store does not) and what
/// `dbio runs` lists.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MemFigures {
    pub started_at: String,
    /// "latency" or "placement".
    pub kind: String,
    pub pages: String,
    pub max_size_bytes: Option<u64>,
    pub l1_ns: Option<f64>,
    pub memory_ns: Option<f64>,
    pub nodes: u64,
    pub interleave_ns: Option<f64>,
    pub loaded_max_gib_s: Option<f64>,
    pub shm_target: Option<String>,
    pub shm_pages: Option<u64>,
    pub partial: bool,
}

/// One `dbio mem` run as `dbio runs` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemRunListing {
    pub id: i64,
    #[serde(flatten)]
    pub figures: MemFigures,
    pub run_dir: String,
}

/// What the store keeps of a `dbio mem` run: its figures and its result.json.
#[derive(Debug, Clone, Default)]
pub struct MemRecord {
    pub figures: MemFigures,
    pub hostname: String,
    pub dbio_version: String,
    pub schema: String,
    /// The result.json text.
    pub json: String,
}

impl Store {
    /// Records a `dbio mem` run whose files are in `run_dir`. Returns its id (in the
    /// memory runs' own numbering).
    pub fn record_mem(&mut self, record: &MemRecord, run_dir: &Path) -> Result<i64> {
        let r = &record.figures;
        let run_dir = std::fs::canonicalize(run_dir).unwrap_or_else(|_| run_dir.to_path_buf());
        let path = self.path.clone();
        let mut insert = || -> rusqlite::Result<i64> {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO mem_runs (started_at, kind, pages, max_size_bytes, l1_ns, memory_ns,
                    nodes, interleave_ns, loaded_max_gib_s, shm_target, shm_pages, partial,
                    run_dir, hostname, dbio_version, result_schema, result_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                params![
                    r.started_at,
                    r.kind,
                    r.pages,
                    r.max_size_bytes.map(|v| v as i64),
                    r.l1_ns,
                    r.memory_ns,
                    r.nodes as i64,
                    r.interleave_ns,
                    r.loaded_max_gib_s,
                    r.shm_target,
                    r.shm_pages.map(|v| v as i64),
                    r.partial,
                    run_dir.display().to_string(),
                    record.hostname,
                    record.dbio_version,
                    record.schema,
                    record.json,
                ],
            )?;
            let id = tx.last_insert_rowid();
            tx.commit()?;
            Ok(id)
        };
        insert().map_err(|e| sqlite_error(&path, e))
    }

    /// The last `last` memory runs (all when None), oldest first.
    pub fn mem_runs(&self, last: Option<usize>) -> Result<Vec<MemRunListing>> {
        self.select_mem_runs(last)
            .map_err(|e| sqlite_error(&self.path, e))
    }

    fn select_mem_runs(&self, last: Option<usize>) -> rusqlite::Result<Vec<MemRunListing>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, started_at, kind, pages, max_size_bytes, l1_ns, memory_ns, nodes,
                    interleave_ns, loaded_max_gib_s, shm_target, shm_pages, partial, run_dir
             FROM mem_runs ORDER BY id DESC LIMIT ?1",
        )?;
        let mut v = stmt
            .query_map([last.map_or(-1, |n| n as i64)], |row| {
                let id: i64 = row.get(0)?;
                let whose = || format!("memory run {id}");
                let count = |i| -> rusqlite::Result<Option<u64>> {
                    match row.get::<_, Option<i64>>(i)? {
                        None => Ok(None),
                        Some(_) => super::unsigned(row, i, whose).map(Some),
                    }
                };
                Ok(MemRunListing {
                    id,
                    figures: MemFigures {
                        started_at: row.get(1)?,
                        kind: row.get(2)?,
                        pages: row.get(3)?,
                        max_size_bytes: count(4)?,
                        l1_ns: row.get(5)?,
                        memory_ns: row.get(6)?,
                        nodes: super::unsigned(row, 7, whose)?,
                        interleave_ns: row.get(8)?,
                        loaded_max_gib_s: row.get(9)?,
                        shm_target: row.get(10)?,
                        shm_pages: count(11)?,
                        partial: row.get(12)?,
                    },
                    run_dir: row.get(13)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        v.reverse();
        Ok(v)
    }

    /// The result.json of memory run `id`, as recorded.
    pub fn mem_result(&self, id: i64) -> Result<Option<String>> {
        use rusqlite::OptionalExtension;
        self.conn
            .query_row(
                "SELECT result_json FROM mem_runs WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| sqlite_error(&self.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RunFilter;

    /// A memory run as `dbio mem --shm` or a latency run would record it.
    fn sample(shm: bool) -> MemRecord {
        MemRecord {
            figures: MemFigures {
                started_at: "2026-11-23T10:00:00Z".into(),
                kind: if shm { "placement" } else { "latency" }.into(),
                pages: "4k".into(),
                max_size_bytes: (!shm).then_some(4096),
                l1_ns: (!shm).then_some(1.1),
                memory_ns: (!shm).then_some(95.0),
                nodes: 1,
                shm_target: shm.then(|| "/dev/shm/sga".into()),
                shm_pages: shm.then_some(16384),
                ..MemFigures::default()
            },
            hostname: "db1".into(),
            dbio_version: "0.1.0".into(),
            schema: "dbio.mem.v1".into(),
            json: "{\"schema\":\"dbio.mem.v1\"}".into(),
        }
    }

    #[test]
    fn memory_runs_are_recorded_listed_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("dbio.db")).unwrap();
        let a = store
            .record_mem(&sample(false), Path::new("/runs/m1"))
            .unwrap();
        let b = store
            .record_mem(&sample(true), Path::new("/runs/m2"))
            .unwrap();
        let all = store.mem_runs(None).unwrap();
        assert_eq!(all.iter().map(|r| r.id).collect::<Vec<_>>(), [a, b]);
        let (l, p) = (&all[0].figures, &all[1].figures);
        assert_eq!(l.kind, "latency");
        assert_eq!((l.l1_ns, l.memory_ns), (Some(1.1), Some(95.0)));
        assert_eq!(l.max_size_bytes, Some(4096));
        assert_eq!(p.kind, "placement");
        assert_eq!(p.shm_target.as_deref(), Some("/dev/shm/sga"));
        assert_eq!(p.shm_pages, Some(16384));
        assert_eq!(store.mem_runs(Some(1)).unwrap()[0].id, b);
        assert!(
            store
                .mem_result(a)
                .unwrap()
                .unwrap()
                .contains("dbio.mem.v1")
        );
        assert!(store.mem_result(b + 1).unwrap().is_none());
        // I/O runs are untouched by memory runs.
        assert!(store.runs(&RunFilter::default()).unwrap().is_empty());
    }

    /// A store written before memory runs existed (schema step 1 only, with a run) gains
    /// the table when opened, keeps its run, and takes memory runs.
    #[test]
    fn a_store_without_memory_runs_is_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.db");
        let io = crate::store::tests::sample("read-iops", "db file parallel read", 100.0, 50.0);
        {
            let mut old = Store::open_with(&path, &crate::store::schema::MIGRATIONS[..1]).unwrap();
            old.record(&io, Path::new("/runs/old")).unwrap();
            assert!(old.mem_runs(None).is_err(), "no mem_runs table yet");
        }
        let mut store = Store::open(&path).unwrap();
        assert_eq!(store.runs(&RunFilter::default()).unwrap().len(), 1);
        store
            .record_mem(&sample(false), Path::new("/runs/m"))
            .unwrap();
        assert_eq!(store.mem_runs(None).unwrap().len(), 1);
    }
}
