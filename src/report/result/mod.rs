//! `result.json`, schema `dbio.result.v1` (docs/result-json.md): the contract tests and
//! tools rely on.
//! Units are in the field names; MiB = 2^20 bytes. New fields may be added; existing ones
//! keep their meaning.

use serde::{Deserialize, Serialize};

pub use crate::measure::os::{
    BlockLayerCheck, CpuSecond, DiskSecond, MemSecond, OsStats, PressureSecond, ProcessCpuSecond,
};
pub use crate::measure::stability::{Spread, Stability};
use crate::measure::{Counts, EventTotals};
pub use crate::storage::StorageMap;
pub use crate::storage::lint::Finding;
pub use crate::verify::VerifyResult;
use crate::warnings::Warning;

mod untrusted;
pub use untrusted::{MAX_RESULT_BYTES, from_untrusted};

pub const SCHEMA: &str = "dbio.result.v1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub dbio_version: String,
    /// The binary that measured: version, git commit, target, oldest glibc it runs on
    /// (absent in results of older dbio versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dbio_build: Option<DbioBuildJson>,
    pub test: String,
    pub started_at: String,
    pub measured_seconds: f64,
    /// True when the run stopped before its measured window ended (signal or error).
    pub partial: bool,
    /// "completed", "steady_state" (ended early, steady: `--steady-state`), "interrupted" or
    /// "error".
    pub stop_reason: String,
    pub config: RunConfigJson,
    pub dataset: DataSetJson,
    pub host: HostJson,
    pub events: Vec<EventResult>,
    pub totals: Totals,
    pub cpu: CpuJson,
    pub timeseries: Vec<SecondJson>,
    /// Advice about the run; in result.json each is its text (see [`Warning`]).
    pub warnings: Vec<Warning>,
    /// I/O errors that stopped the run, one line each.
    pub errors: Vec<String>,
    /// Active Session History: average active sessions per state, per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ash: Option<AshJson>,
    /// Redo, commits and the log writer (tests redo, oltp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redo: Option<RedoJson>,
    /// The OLTP mix: transactions, logical and physical reads, the buffer cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oltp: Option<OltpJson>,
    /// Temp spills (test temp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temp: Option<TempJson>,
    /// Job runs: the job file as read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<serde_json::Value>,
    /// Job runs: per class, the target and achieved rate, lateness and service time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<ClassResultJson>,
    /// Job runs with limits: required vs measured, PASS/FAIL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<VerdictJson>,
    /// `--steady-state`: the rounds, and whether (and after which round) they held steady.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyStateJson>,
    /// What the machine saw, per second (CPU, block devices, memory, I/O pressure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<OsStats>,
    /// The storage stack under the target (the JSON of `dbio map`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageJson>,
    /// Configuration findings with their reasons (see `dbio map`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lint: Vec<Finding>,
    /// `--verify`: blocks checked and bad (the whole run, warm-up included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyResult>,
    /// A run across hosts (`--hosts`): one object per host, beside the merged figures
    /// above (which are the cluster's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostRunJson>,
    /// What PostgreSQL saw (`dbio pg` runs): the server, its wait events, its I/O statistics
    /// and findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg: Option<crate::report::result_pg::PgSection>,
    /// What MariaDB/MySQL saw (`dbio mysql` runs): the server, its waits, its file I/O and
    /// InnoDB counters, and findings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mysql: Option<crate::report::result_mysql::MysqlSection>,
}

/// One host of a run across hosts: its clock against the coordinator's, when it started,
/// and its own figures (events with the same fields as the merged ones), OS statistics,
/// storage map and findings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostRunJson {
    /// The host as typed in `--hosts` (an ssh destination).
    pub host: String,
    /// Its name for itself (uname).
    pub hostname: String,
    /// Its clock minus the coordinator's, and how far that may be off (half the smallest
    /// round trip over ssh).
    pub clock_offset_us: f64,
    pub clock_uncertainty_us: f64,
    /// When its warm-up began, on the coordinator's clock, after the instant all hosts were
    /// given (ms; None when it never started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_ms: Option<f64>,
    pub partial: bool,
    pub stop_reason: String,
    pub measured_seconds: f64,
    /// Its data set (or its part of a shared one) and the seed its sessions drew with.
    pub dataset: DataSetJson,
    pub seed: u64,
    pub events: Vec<EventResult>,
    pub totals: Totals,
    pub cpu: CpuJson,
    pub warnings: Vec<Warning>,
    pub errors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<OsStats>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageJson>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lint: Vec<Finding>,
}

/// `storage` in result.json: the map `dbio map --json` prints. A map this dbio cannot
/// read back (from another version) is kept as it was written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum StorageJson {
    Map(StorageMap),
    Other(serde_json::Value),
}

/// Redo and the log writer. `commits`, `lgwr_writes`, `commits_per_lgwr_write` and
/// `mean_lgwr_write_bytes` cover the measured window; `accounting` the whole run, where every
/// redo byte is accounted for: `bytes_written = redo_generated_bytes + wastage_bytes`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RedoJson {
    pub redo_per_commit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<String>,
    pub redo_block: u64,
    pub redo_files: u32,
    pub redo_file_size: u64,
    /// dsync (O_DSYNC writes) or fdatasync.
    pub sync: String,
    /// How LGWR submitted the pieces of a write over 1 MiB: "async" (together, through the
    /// run's engine) or "sync" (one after another: --sync, `[redo] submission`, or a
    /// synchronous io mode).
    #[serde(default)]
    pub pieces: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lgwr_cpu: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_cpu: Option<usize>,
    /// `--group-commit`: the commits LGWR waited for before it wrote (a mean); absent when
    /// it wrote as soon as a commit waited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_commit: Option<f64>,
    /// `--group-commit-wait`: the longest a commit waited for its group, e.g. "1ms".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_commit_wait: Option<String>,
    pub commits: u64,
    pub lgwr_writes: u64,
    pub commits_per_lgwr_write: f64,
    pub mean_lgwr_write_bytes: f64,
    pub redo_bytes: u64,
    pub accounting: RedoAccountingJson,
}

/// Whole-run redo accounting (warm-up and the end of the run included).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RedoAccountingJson {
    pub commits: u64,
    /// Redo the sessions copied into the log buffer.
    pub redo_generated_bytes: u64,
    /// Bytes LGWR wrote to the redo log files.
    pub bytes_written: u64,
    /// The unused rest of each write's last redo block.
    pub wastage_bytes: u64,
    pub lgwr_writes: u64,
    /// Requests: a write over 1 MiB goes out in up to 4 pieces.
    pub pieces: u64,
    pub log_switches: u64,
    pub largest_write_bytes: u64,
}

/// The OLTP mix over the measured window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OltpJson {
    pub work_unit: usize,
    pub update_pct: u32,
    pub hotspot_pct: u32,
    pub hotspot_size_bytes: u64,
    pub async_reads: bool,
    pub writers: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<String>,
    /// Buffer cache, if any: its buffers, and the blocks loaded before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_buffers: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_loaded_blocks: Option<u64>,
    pub transactions: u64,
    pub commits: u64,
    pub logical_reads: u64,
    pub physical_reads: u64,
    /// 100 × (1 − physical / logical reads).
    pub buffer_hit_pct: f64,
}

/// One I/O class of a job run. `event_index` points into `events`; its latency there runs
/// from the scheduled time for classes with a rate (open loop), and `service_us` is the time
/// from issue to completion.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassResultJson {
    pub name: String,
    pub event: String,
    pub event_index: usize,
    /// Bytes per request; for weighted sizes or a redo range, the expected mean.
    pub size_bytes: u64,
    /// Weighted sizes or a redo range as the job gave them (`1M 80% + 256K 20%`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<String>,
    /// Bytes per request measured (requests that carry bytes; not commits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_request_bytes: Option<f64>,
    pub sessions: usize,
    pub submission: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_target: Option<f64>,
    /// "fixed", "poisson", or "closed" (no rate: as fast as the sessions go).
    pub arrival: String,
    /// Requests per second achieved (commits for "log file sync", LGWR writes for "log
    /// file parallel write", whose writes above 1 MiB go out in pieces).
    pub rate_achieved: f64,
    /// How late requests were issued after their scheduled time (open loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness_mean_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness_max_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_us: Option<LatencyJson>,
}

/// The verdict: every limit of every class, required vs measured.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct VerdictJson {
    pub pass: bool,
    pub classes: Vec<ClassVerdictJson>,
    /// What else failed the run besides its classes' limits ("steady state not reached").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// Steady state (`--steady-state`): the figure of each round and the judgement of the last
/// rounds together.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SteadyStateJson {
    /// iops, mibps, mean (µs) or p99 (µs).
    pub metric: String,
    pub range_pct: f64,
    pub slope_pct: f64,
    pub round_s: f64,
    /// The figure of each whole round, in order.
    pub rounds: Vec<f64>,
    pub reached: bool,
    /// The round (from 1) after which the run ended steady; None when it never was.
    pub reached_round: Option<usize>,
    /// The last judged rounds' max − min, in % of their average (None: too few rounds).
    pub window_range_pct: Option<f64>,
    /// The last judged rounds' |least-squares slope| × their number, in % of their average.
    pub window_slope_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ClassVerdictJson {
    pub class: String,
    pub event: String,
    pub pass: bool,
    pub limits: Vec<LimitVerdictJson>,
}

/// One limit: e.g. `p99_ms` required ≤ 10, measured 7.3.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LimitVerdictJson {
    /// `mean_ms`, `p50_ms` .. `p99_ms` (at most), `iops`, `mib_per_s` (at least).
    pub limit: String,
    /// "<=" or ">=".
    pub op: String,
    pub required: f64,
    pub measured: f64,
    /// "PASS" or "FAIL".
    pub result: String,
}

/// Temp spills.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TempJson {
    /// Bytes each session spills per round (whole `temp_io` requests).
    pub spill_size_bytes: u64,
    pub temp_io_bytes: u64,
}

/// Active Session History: every session and background thread publishes its
/// state — "ON CPU" or the event it waits on — and a sampler records them `hz` times a
/// second.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AshJson {
    pub hz: u32,
    pub samples: u64,
    /// Every state seen, most time first ("ON CPU" or an event name).
    pub states: Vec<String>,
    /// Samples per state over the measured window (idle threads are not counted): DB time
    /// in samples, the base of "% of DB time".
    #[serde(default)]
    pub samples_by_state: std::collections::BTreeMap<String, u64>,
    pub seconds: Vec<AshSecondJson>,
}

/// One second of ASH: average active sessions per state (states absent were not seen).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct AshSecondJson {
    pub t: u32,
    pub active: std::collections::BTreeMap<String, f64>,
}

/// Every option that shaped the run, as actually used.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfigJson {
    pub target: String,
    pub size_bytes: u64,
    pub block_size: u64,
    pub files: u32,
    pub sessions: usize,
    /// What was asked: "sync" or "async" (names the events).
    pub submission: String,
    pub io_mode: String,
    /// `--like innodb`: the run has InnoDB's shapes and event names (absent: Oracle's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub like: Option<String>,
    /// `--like innodb` write-iops: whether each flush batch went through the doublewrite file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doublewrite: Option<bool>,
    pub engine_requested: String,
    /// The engine used: "uring", "aio" or "sync".
    pub engine: String,
    pub engine_reason: String,
    /// Optimisations the engine had to do without, and why.
    pub engine_notes: Vec<String>,
    /// What the engine used of the kernel: io_uring's ring setup, registered files and
    /// buffers; Linux AIO's calls; the synchronous calls.
    #[serde(default)]
    pub engine_features: Vec<String>,
    pub open_flags: Vec<String>,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub batch: usize,
    /// Async random-block tests kept `batch` requests in flight instead of whole batches.
    #[serde(default)]
    pub keep_inflight: bool,
    pub depth: usize,
    pub mbrc: usize,
    pub request_bytes: u64,
    pub seed: u64,
    pub dio_mem_align: u32,
    pub dio_offset_align: u32,
    /// Where the alignment came from: "statx", "logical_block_size" or "default".
    pub dio_align_source: String,
    pub buffer_align: usize,
    /// The clock latencies were measured with.
    #[serde(default)]
    pub clock: String,
    pub out: String,
    /// `--continue-on-error`: failed requests were counted and the run went on.
    #[serde(default)]
    pub continue_on_error: bool,
    /// `--destructive`: a write test was allowed to overwrite a block device.
    #[serde(default)]
    pub destructive: bool,
    /// `--fill`: what new data files are filled with.
    #[serde(default)]
    pub fill: String,
    /// `--verify`: written blocks carry headers, read blocks are checked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
    /// `--span`: the fraction of each data file requests fell in (1 = all of it; results
    /// from before the option have 1).
    #[serde(default = "whole_span")]
    pub span: f64,
}

fn whole_span() -> f64 {
    1.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DataSetJson {
    pub path: String,
    /// "directory" (created by dbio), "file" or "block_device" (read-only).
    pub kind: String,
    pub size_bytes: u64,
    pub files: usize,
    pub block_size: u64,
    pub reused: bool,
    pub prepare_seconds: f64,
    pub fill_method: Option<String>,
    /// What the data files hold (`--fill`): "random", "zero", "compress=2", "dedupe=4";
    /// null for a file or device dbio did not fill.
    #[serde(default)]
    pub fill: Option<String>,
    /// Everything of the data set on disk during the run: data files, redo logs and temp
    /// files (0 in results of older dbio versions).
    #[serde(default)]
    pub disk_bytes: u64,
    /// The region of the data set this run used, when it used only one (`--shared` runs
    /// that write across hosts: each host its own data files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<RegionJson>,
    /// How `dbio precondition` last wrote the data files over, as the manifest records it
    /// (absent: never, or a file or device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preconditioned: Option<crate::dataset::precondition::Preconditioned>,
}

/// A region of a data set: its data files `i` with `i % of == index`, by name.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RegionJson {
    pub index: usize,
    pub of: usize,
    pub files: Vec<String>,
}

/// The binary that measured, as `dbio --version` names it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DbioBuildJson {
    pub version: String,
    /// The git commit it was built from (short), or "unknown".
    pub commit: String,
    /// The target triple, e.g. "x86_64-unknown-linux-gnu".
    pub target: String,
    /// The oldest glibc it runs on, e.g. "2.17"; null where it was not built for glibc.
    pub glibc_floor: Option<String>,
}

impl DbioBuildJson {
    /// This binary.
    pub fn this() -> DbioBuildJson {
        DbioBuildJson {
            version: env!("CARGO_PKG_VERSION").into(),
            commit: crate::sys::BUILD_COMMIT.into(),
            target: crate::sys::BUILD_TARGET.into(),
            glibc_floor: crate::sys::glibc_floor().map(str::to_string),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostJson {
    pub hostname: String,
    pub kernel: String,
    pub cpus: usize,
}

/// Latency figures in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencyJson {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BucketJson {
    pub lt_us: u64,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventResult {
    pub name: String,
    pub requests: u64,
    pub waits: u64,
    pub bytes: u64,
    pub errors: u64,
    pub iops: f64,
    pub mib_per_s: f64,
    pub latency_us: LatencyJson,
    /// Per wait; equals `latency_us` for synchronous events.
    pub wait_latency_us: LatencyJson,
    /// Total time sessions spent waiting on this event.
    pub wait_time_s: f64,
    /// Requests in flight on average (Little's law: IOPS × mean latency).
    pub inflight_avg: f64,
    /// Mean time inside one engine submit call, and the number of calls (async events).
    pub submit_calls: u64,
    pub submit_mean_us: f64,
    pub histogram_micro: Vec<BucketJson>,
    /// The same buckets per wait (equal to `histogram_micro` for synchronous events).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wait_histogram_micro: Vec<BucketJson>,
    /// How steady its rate and p99 were, per second (absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<Stability>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Totals {
    pub requests: u64,
    pub bytes: u64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mib_per_s: f64,
    pub write_mib_per_s: f64,
    /// Tests with commits (redo, oltp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transactions_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redo_mib_per_s: Option<f64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CpuJson {
    pub user_s: f64,
    pub system_s: f64,
    /// dbio's own CPU seconds per 1,000 requests over the measured window.
    pub cpu_s_per_1k_requests: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SecondJson {
    pub t: u32,
    pub event: String,
    pub requests: u64,
    pub bytes: u64,
    pub mean_us: Option<f64>,
    pub p99_us: Option<f64>,
    /// Seconds of this second in which dbio itself did not run (stopped, starved of CPU,
    /// the machine suspended); absent when it ran throughout. Latencies of requests in
    /// flight then include that time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_running_s: Option<f64>,
}

/// Latency summary of a histogram, with the exact mean and maximum. Percentiles are the
/// HDR bucket's highest equivalent value, capped at the exact maximum so they stay monotone.
pub fn latency(counts: &Counts, sum_ns: u64, max_ns: u64) -> LatencyJson {
    let n = counts.total();
    if n == 0 {
        return LatencyJson::default();
    }
    let h = counts.to_hdr();
    let us = |ns: u64| ns as f64 / 1000.0;
    let q = |quantile: f64| us(h.value_at_quantile(quantile).min(max_ns));
    LatencyJson {
        mean: sum_ns as f64 / n as f64 / 1000.0,
        p50: q(0.50),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        p99_9: q(0.999),
        p99_99: q(0.9999),
        max: us(max_ns),
    }
}

/// The result of one event from its totals over `seconds` of measured window.
pub fn event_result(name: &str, t: &EventTotals, seconds: f64) -> EventResult {
    let per_s = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
    EventResult {
        name: name.to_string(),
        requests: t.requests,
        waits: t.waits,
        bytes: t.bytes,
        errors: t.errors,
        iops: per_s(t.requests as f64),
        mib_per_s: per_s(t.bytes as f64 / (1u64 << 20) as f64),
        latency_us: latency(&t.latency, t.latency_sum_ns, t.latency_max_ns),
        wait_latency_us: latency(&t.wait_latency, t.wait_sum_ns, t.wait_max_ns),
        wait_time_s: t.wait_sum_ns as f64 / 1e9,
        inflight_avg: per_s(t.latency_sum_ns as f64 / 1e9),
        submit_calls: t.submit_calls,
        submit_mean_us: if t.submit_calls > 0 {
            t.submit_ns as f64 / t.submit_calls as f64 / 1000.0
        } else {
            0.0
        },
        histogram_micro: buckets(&t.latency),
        wait_histogram_micro: buckets(&t.wait_latency),
        stability: None,
    }
}

fn buckets(counts: &Counts) -> Vec<BucketJson> {
    counts
        .pow2_us_buckets()
        .into_iter()
        .map(|(lt_us, count)| BucketJson { lt_us, count })
        .collect()
}

impl RunResult {
    /// How the run submitted its I/O: `sync` or `async`, or for a job whose classes differ,
    /// `mixed` (as the run directory's name and the summary's header say it).
    pub fn submission_label(&self) -> &str {
        let mut classes = self.classes.iter().map(|c| c.submission.as_str());
        match classes.next() {
            None => &self.config.submission,
            Some(first) if classes.all(|s| s == first) => first,
            Some(_) => "mixed",
        }
    }

    /// The events, most wait time first: the order of Top Timed Events.
    pub fn events_by_wait_time(&self) -> Vec<&EventResult> {
        let mut v: Vec<&EventResult> = self.events.iter().collect();
        v.sort_by(|a, b| b.wait_time_s.total_cmp(&a.wait_time_s));
        v
    }

    /// The run's headline event: the test's own, first of its events — the sessions'
    /// reads or writes, log file sync for redo, direct path write temp for temp, a job's
    /// first class. A stable rule, not the most wait time: a sweep's rows and the runs of
    /// one test then all name the same event, even where two events take turns at the top
    /// (temp's writes and reads).
    pub fn main_event(&self) -> Option<&EventResult> {
        self.events.first()
    }

    /// Events whose waits each cover several requests (asynchronous ones): they get a
    /// per-wait latency table of their own.
    pub fn events_waiting_apart(&self) -> Vec<&EventResult> {
        self.events
            .iter()
            .filter(|e| e.waits != e.requests && e.waits > 0)
            .collect()
    }
}

impl Totals {
    /// Totals of the I/O events (commits and free buffer waits are not I/O requests).
    pub fn from_events(events: &[(crate::workload::Event, &EventResult)], seconds: f64) -> Totals {
        let mut t = Totals::default();
        let per_s = |x: f64| if seconds > 0.0 { x / seconds } else { 0.0 };
        let (mut rr, mut wr, mut rb, mut wb) = (0u64, 0u64, 0u64, 0u64);
        for (ev, r) in events {
            if !ev.reads() && !ev.writes() {
                continue;
            }
            t.requests += r.requests;
            t.bytes += r.bytes;
            if ev.reads() {
                rr += r.requests;
                rb += r.bytes;
            }
            if ev.writes() {
                wr += r.requests;
                wb += r.bytes;
            }
        }
        t.read_iops = per_s(rr as f64);
        t.write_iops = per_s(wr as f64);
        t.read_mib_per_s = per_s(rb as f64 / (1u64 << 20) as f64);
        t.write_mib_per_s = per_s(wb as f64 / (1u64 << 20) as f64);
        t
    }
}

impl HostJson {
    pub fn current() -> HostJson {
        // SAFETY: zeroed utsname is valid; uname fills it.
        let mut u: libc::utsname = unsafe { std::mem::zeroed() };
        unsafe { libc::uname(&mut u) };
        let field = |f: &[libc::c_char]| {
            let bytes: Vec<u8> = f
                .iter()
                .take_while(|&&c| c != 0)
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        HostJson {
            hostname: field(&u.nodename),
            kernel: field(&u.release),
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        }
    }
}
