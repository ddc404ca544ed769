//! `pg` in result.json: what PostgreSQL itself saw while a `dbio pg` test ran — the server
//! and every setting that shaped the run, the wait events sampled from `pg_stat_activity`
//! (Top Timed Events and ASH under PostgreSQL's own event names), the deltas of its I/O
//! statistics per backend type, WAL and commits, and findings in words.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Everything PostgreSQL saw during the run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgSection {
    pub server: PgServer,
    /// The SET commands each session ran, as `name = value`.
    #[serde(default)]
    pub session_set: Vec<String>,
    /// How the operating system's page cache was kept out of the reads ("direct I/O
    /// (debug_io_direct=data)", "posix_fadvise(DONTNEED) ...", "not controlled: ...").
    pub cache: String,
    /// Seconds from the first statistics snapshot to the end of observing (the last
    /// snapshot follows after a pause that lets the backends flush their counters).
    pub interval_s: f64,
    pub sampler: PgSampler,
    /// Samples per (backend type, wait event), most first: the Top Timed Events.
    pub waits: Vec<PgWait>,
    /// Active sessions per second, by wait event ("CPU" for active without one).
    pub ash: Vec<PgAshSecond>,
    /// I/O per backend type, object and operation, from the statistics deltas.
    pub io: Vec<PgIo>,
    /// WAL and commits over the interval.
    pub wal: PgWal,
    /// The raw counter deltas the figures come from (`view.column` → delta).
    #[serde(default)]
    pub deltas: BTreeMap<String, f64>,
    /// What the figures mean, in words.
    pub findings: Vec<String>,
    /// Findings that put the figures in doubt (reads served by the page cache).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cautions: Vec<String>,
    /// When the counters were read, in Unix seconds: the window's edges as the database's
    /// counters saw them (absent in results of older dbio versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<PgEdges>,
}

/// When the statistics deltas begin and end, in Unix seconds (the machine's clock, the
/// server's `extract(epoch from clock_timestamp())` on the same host): the first snapshot
/// is read at the measured window's start, once every session flushed the counters of its
/// warm-up (`pg_stat_force_next_flush()`); the sessions stop at the window's end and flush
/// theirs, and the last snapshot follows after the background processes flushed too.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgEdges {
    /// The measured window started (the sessions flush their warm-up's counters now).
    pub start_s: f64,
    /// The first snapshot was read, once the sessions flushed.
    pub first_s: f64,
    /// Sampling stopped: the window's end.
    pub end_s: f64,
    /// The last snapshot was read.
    pub last_s: f64,
    /// Sessions that flushed their counters before the first snapshot, of those that ran.
    pub sessions_flushed: u32,
    pub sessions: u32,
}

/// The server: its version, its `io_method` with the values this build allows, and the
/// settings that shape I/O.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgServer {
    /// `server_version_num`, e.g. 150018 or 180004.
    pub version_num: u32,
    /// `version()`.
    pub version: String,
    /// `io_method` (18+); None where the server has no asynchronous I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_method: Option<String>,
    /// The values `io_method` takes in this build (`pg_settings.enumvals`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_method_allowed: Vec<String>,
    /// The data directory, when this user may read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_directory: Option<String>,
    /// Settings that shape the run: name → value with its unit, and where it came from.
    pub settings: Vec<PgSetting>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgSetting {
    pub name: String,
    /// The value as `SHOW` writes it (`128MB`, `on`, `fdatasync`).
    pub value: String,
    /// `pg_settings.source`: default, configuration file, command line, ...
    pub source: String,
}

/// The wait-event sampler.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgSampler {
    /// The rate asked for.
    pub hz: u32,
    /// Samples taken (reads of `pg_stat_activity`).
    pub samples: u64,
    /// Seconds sampled.
    pub seconds: f64,
    /// Mean time one sample took (µs).
    pub mean_sample_us: f64,
    /// Rows counted: active sessions and background processes that were not idle.
    pub active_rows: u64,
}

/// One (backend type, wait event) of the Top Timed Events.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgWait {
    /// `client backend`, `io worker`, `checkpointer`, ...
    pub backend_type: String,
    /// `IO`, `LWLock`, `IPC`, ...; "CPU" for active without a wait event.
    pub wait_event_type: String,
    /// PostgreSQL's name (`DataFileRead`, `WalSync`, ...); "CPU" for active without one.
    pub wait_event: String,
    pub samples: u64,
    /// Share of every counted sample row (DB time), in percent.
    pub pct: f64,
    /// Estimated seconds: samples × the time between samples.
    pub time_s: f64,
    /// Seconds PostgreSQL itself timed in this wait, where it times it (track_io_timing): a
    /// session's synchronous DataFileRead and its DataFileWrite (the I/O table's time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_s: Option<f64>,
}

/// One second of the wait profile: average active sessions per wait event.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgAshSecond {
    pub t: u32,
    pub active: BTreeMap<String, f64>,
}

/// One operation of one backend type on one object, over the interval.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgIo {
    pub backend_type: String,
    /// `relation`, `temp relation`, `wal`.
    pub object: String,
    /// `read`, `write`, `extend`, `writeback`, `fsync`.
    pub op: String,
    pub ops: u64,
    pub ops_per_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mib_per_s: Option<f64>,
    /// Bytes per operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub avg_io_bytes: Option<f64>,
    /// Mean wait per operation in ms (needs track_io_timing, track_wal_io_timing for WAL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_wait_ms: Option<f64>,
    /// Where the figures come from (`pg_stat_io`, `pg_stat_database`, ...).
    pub source: String,
}

/// WAL and commits over the interval.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PgWal {
    pub commits: u64,
    pub records: u64,
    pub bytes: u64,
    pub writes: u64,
    /// WAL flushes (fsync / fdatasync).
    pub syncs: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_write_ms: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_sync_ms: Option<f64>,
    /// Commits per WAL flush (group commit); None without flushes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_per_flush: Option<f64>,
    /// The flush's wait event in this version (`WALSync` or `WalSync`).
    pub sync_event: String,
}

impl PgSection {
    /// The session's reads: the client backends' relation reads, if any were counted.
    pub fn session_reads(&self) -> Option<&PgIo> {
        self.io.iter().find(|i| {
            i.backend_type == "client backend" && i.object == "relation" && i.op == "read"
        })
    }

    /// A setting's value.
    pub fn setting(&self, name: &str) -> Option<&str> {
        self.server
            .settings
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.value.as_str())
    }
}
