//! `dbio mem` runs in the results store (table `mem_runs`, schema step 3): recorded whole
//! (result.json) with their headline figures beside it.

use std::path::Path;

use rusqlite::{TransactionBehavior, params};
use serde::Serialize;

use super::{Store, sqlite_error};
use crate::error::{Error, Result};
use crate::mem::result::MemResult;

/// One `dbio mem` run as `dbio runs` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemRunListing {
    pub id: i64,
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
    pub run_dir: String,
}

impl Store {
    /// Records a `dbio mem` run whose files are in `run_dir`. Returns its id (in the
    /// memory runs' own numbering).
    pub fn record_mem(&mut self, r: &MemResult, run_dir: &Path) -> Result<i64> {
        let json = crate::mem::json_text(r)?;
        let run_dir = std::fs::canonicalize(run_dir).unwrap_or_else(|_| run_dir.to_path_buf());
        let level = |name: &str| r.levels.iter().find(|l| l.name == name).and_then(|l| l.ns);
        let first = r.levels.first().and_then(|l| l.ns);
        let shm_target = r
            .config
            .shm
            .clone()
            .or_else(|| r.config.pid.map(|p| format!("pid {p}")));
        let shm_pages = r
            .pages_by_node
            .as_ref()
            .map(|m| m.values().sum::<u64>() as i64);
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
                    if r.pages_by_node.is_some() { "placement" } else { "latency" },
                    r.pages,
                    r.curve
                        .as_ref()
                        .and_then(|c| c.last())
                        .map(|p| p.size_bytes as i64),
                    first,
                    level("memory"),
                    r.topology.nodes.len() as i64,
                    r.numa.as_ref().and_then(|n| n.interleave_ns),
                    r.loaded
                        .as_ref()
                        .and_then(|l| l.iter().map(|p| p.bandwidth_gib_s).reduce(f64::max)),
                    shm_target,
                    shm_pages,
                    r.partial,
                    run_dir.display().to_string(),
                    r.host.hostname,
                    r.dbio_version,
                    r.schema,
                    json,
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
                Ok(MemRunListing {
                    id: row.get(0)?,
                    started_at: row.get(1)?,
                    kind: row.get(2)?,
                    pages: row.get(3)?,
                    max_size_bytes: row.get::<_, Option<i64>>(4)?.map(|v| v as u64),
                    l1_ns: row.get(5)?,
                    memory_ns: row.get(6)?,
                    nodes: row.get::<_, i64>(7)? as u64,
                    interleave_ns: row.get(8)?,
                    loaded_max_gib_s: row.get(9)?,
                    shm_target: row.get(10)?,
                    shm_pages: row.get::<_, Option<i64>>(11)?.map(|v| v as u64),
                    partial: row.get(12)?,
                    run_dir: row.get(13)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        v.reverse();
        Ok(v)
    }

    /// The result.json of memory run `id`, as recorded.
    pub fn mem_result(&self, id: i64) -> Result<Option<MemResult>> {
        use rusqlite::OptionalExtension;
        let text: Option<String> = self
            .conn
            .query_row(
                "SELECT result_json FROM mem_runs WHERE id = ?1",
                [id],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| sqlite_error(&self.path, e))?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| {
                Error::other(format!(
                    "results store {}: memory run {id} has a result this dbio cannot read ({e})",
                    self.path.display()
                ))
            })
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RunFilter;

    /// A memory run as `dbio mem --shm` or a latency run would record it.
    fn sample(shm: bool) -> MemResult {
        let node = serde_json::json!({ "id": 0, "cpus": [0, 1], "memory_bytes": 1u64 << 30,
                                       "free_bytes": 1u64 << 29, "available_bytes": 1u64 << 29,
                                       "huge_pages_free": 0 });
        let curve = serde_json::json!([{ "size_bytes": 4096, "ns": 1.1, "min_ns": 1.0,
            "max_ns": 1.2, "p25_ns": 1.05, "p75_ns": 1.15, "spread_pct": 9.0, "reps": 5,
            "preempted_reps": 0, "loads": 100, "stable": true, "level": "L1d" }]);
        serde_json::from_value(serde_json::json!({
            "schema": "dbio.mem.v1", "dbio_version": "0.1.0",
            "started_at": "2026-11-23T10:00:00Z", "elapsed_s": 1.0, "partial": false,
            "stop_reason": "completed",
            "host": { "hostname": "db1", "kernel": "6.18", "cpus": 2 },
            "load_average": [0.5, 0.7],
            "config": { "parts": ["curve"], "sizes": [4096], "budget_s": 0.3,
                "pages_requested": "4k", "allow_fallback": false, "numa_size_bytes": 0,
                "loaded_size_bytes": 0, "reader_bytes": 0, "thread_counts": [], "cpu": 0,
                "line_bytes": 64, "seed": 1, "clock": "x", "out": "./dbio-runs",
                "shm": if shm { serde_json::json!("/dev/shm/sga") } else { serde_json::Value::Null },
                "pid": null },
            "pages": "4k",
            "page_size": { "requested": "4k", "used": "4k", "bytes": 4096,
                           "huge_backed_pct": null, "fallback": null },
            "topology": { "cache_cpu": 0, "caches": [], "nodes": [node],
                          "distance": [[10]], "numa_in_sysfs": true },
            "curve": if shm { serde_json::Value::Null } else { curve },
            "levels": [{ "name": "L1d", "size_bytes": 32768, "ns": 1.1, "at_size_bytes": 4096 },
                       { "name": "memory", "size_bytes": null, "ns": 95.0, "at_size_bytes": 1073741824u64 }],
            "numa": null, "loaded": null, "shm": null,
            "pages_by_node": if shm { serde_json::json!({ "0": 16384 }) } else { serde_json::Value::Null },
            "warnings": []
        }))
        .expect("sample memory result")
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
        assert_eq!(all[0].kind, "latency");
        assert_eq!((all[0].l1_ns, all[0].memory_ns), (Some(1.1), Some(95.0)));
        assert_eq!(all[0].max_size_bytes, Some(4096));
        assert_eq!(all[1].kind, "placement");
        assert_eq!(all[1].shm_target.as_deref(), Some("/dev/shm/sga"));
        assert_eq!(all[1].shm_pages, Some(16384));
        assert_eq!(store.mem_runs(Some(1)).unwrap()[0].id, b);
        assert_eq!(store.mem_result(a).unwrap().unwrap().levels.len(), 2);
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
