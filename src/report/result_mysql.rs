//! `mysql` in result.json: what MariaDB/MySQL itself saw while a `dbio mysql` test ran —
//! the server and the settings that shaped the run, the waits sampled from
//! performance_schema (Top Timed Events and ASH under the server's own instrument names),
//! the deltas of its file I/O (performance_schema's file summaries) and InnoDB counters
//! (SHOW GLOBAL STATUS, INNODB_METRICS) and of the server process's own I/O, per second,
//! and findings in words.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::report::result_pg::{PgAshSecond as MysqlAshSecond, PgSampler as MysqlSampler};

/// Everything the server saw during the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MysqlSection {
    pub server: MysqlServer,
    /// The SET SESSION commands each session ran, as `name = value`.
    #[serde(default)]
    pub session_set: Vec<String>,
    /// How the operating system's page cache was kept out of the reads.
    pub cache: String,
    /// Seconds between the two snapshots of the counters.
    pub interval_s: f64,
    pub sampler: MysqlSampler,
    /// Samples per (thread, kind, event), most first: the Top Timed Events.
    pub waits: Vec<MysqlWait>,
    /// Active threads per second, by event.
    pub ash: Vec<MysqlAshSecond>,
    /// File I/O per performance_schema instrument (`wait/io/file/innodb/innodb_data_file`).
    pub files: Vec<MysqlFileIo>,
    /// InnoDB's own figures over the interval.
    pub innodb: MysqlInnodb,
    /// The raw counter deltas (`status.Innodb_data_reads`, `metrics.trx_rw_commits`,
    /// `proc.read_bytes`, `pfs.<instrument>.count_read`, ...).
    #[serde(default)]
    pub deltas: BTreeMap<String, f64>,
    pub findings: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cautions: Vec<String>,
}

/// The server and its settings.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MysqlServer {
    /// `VERSION()`.
    pub version: String,
    pub mariadb: bool,
    /// Whether dbio started it (a throwaway server) or only watched it.
    pub throwaway: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_directory: Option<String>,
    /// The asynchronous I/O InnoDB said it uses (a throwaway server's error log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aio_in_use: Option<String>,
    /// Global variables that shape the run, name → value.
    pub settings: Vec<(String, String)>,
}

/// One (thread, kind, event) of the Top Timed Events.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MysqlWait {
    /// `connection` for a client's session, else the thread's instrument
    /// (`thread/innodb/page_cleaner_thread`).
    pub thread: String,
    /// `wait` (an instrumented wait in progress) or `state` (an active session without
    /// one: its PROCESSLIST_STATE, e.g. `Commit` for the uninstrumented redo write and sync).
    pub kind: String,
    /// The server's name: `wait/io/file/innodb/innodb_data_file`, or the state.
    pub event: String,
    pub samples: u64,
    pub pct: f64,
    pub time_s: f64,
}

/// One file instrument's I/O over the interval.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MysqlFileIo {
    pub event: String,
    pub reads: u64,
    pub writes: u64,
    /// fsync, open, close, stat.
    pub misc: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    /// Mean time of a read and a write (µs): asynchronous I/O is timed at submission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_read_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_write_us: Option<f64>,
}

/// InnoDB's figures over the interval (counts, and per second).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MysqlInnodb {
    pub data_reads: u64,
    pub data_read_bytes: u64,
    pub data_writes: u64,
    pub data_written_bytes: u64,
    /// Data and (in MariaDB) redo file syncs.
    pub data_fsyncs: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    pub read_ahead_pages: u64,
    pub dblwr_pages: u64,
    pub dblwr_batches: u64,
    /// `innodb_dblwr_pages_written` from INNODB_METRICS (the same counter, read apart).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dblwr_pages_metric: Option<u64>,
    pub log_writes: u64,
    pub log_bytes: u64,
    /// Commits, and where they were counted (`INNODB_METRICS trx_rw_commits`, or the
    /// committing statements `Com_insert + Com_update + Com_delete + Com_commit`).
    pub commits: u64,
    pub commits_source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_per_log_write: Option<f64>,
    /// Doublewrite pages over pages written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dblwr_per_page: Option<f64>,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub fsyncs_per_s: f64,
    pub log_writes_per_s: f64,
    pub commits_per_s: f64,
    /// Bytes the server process read from and wrote to storage (`/proc/<pid>/io`), when
    /// dbio could read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_read_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_write_bytes: Option<u64>,
}

impl MysqlSection {
    /// A global variable's value.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.server
            .settings
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The data files' I/O (`wait/io/file/innodb/innodb_data_file`).
    pub fn data_file(&self) -> Option<&MysqlFileIo> {
        self.files
            .iter()
            .find(|f| f.event == "wait/io/file/innodb/innodb_data_file")
    }
}
