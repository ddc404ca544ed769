//! What a run is, validated: the data set, the classes of I/O and the tests' options, the
//! timing, and how requests are issued. The command line, job files and sweeps build it
//! (`crate::options`); everything below reads it and knows nothing of where it came from.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use crate::dataset::DataSetSpec;
use crate::engine::{EngineChoice, IoMode, Submission};
use crate::error::{Error, Result};
use crate::units::{DurationRange, SizeRange, size_label};
use crate::workload::sizes::RequestSizes;
use crate::workload::{Event, Test};

/// How LGWR makes redo durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RedoDurability {
    /// Redo files opened O_DSYNC: each write is durable when it returns.
    Dsync,
    /// Plain writes followed by fdatasync.
    Fdatasync,
}

impl RedoDurability {
    pub fn name(self) -> &'static str {
        match self {
            RedoDurability::Dsync => "dsync",
            RedoDurability::Fdatasync => "fdatasync",
        }
    }
}

/// Redo, commits and the log writer (tests redo and oltp).
#[derive(Debug, Clone)]
pub struct RedoOptions {
    pub per_commit: SizeRange,
    pub think: Option<DurationRange>,
    pub block: u64,
    pub files: u32,
    pub file_size: u64,
    pub durability: RedoDurability,
    pub lgwr_cpu: Option<usize>,
    pub noise_cpu: Option<usize>,
    pub writers: usize,
    /// How LGWR submits the pieces of a write over 1 MiB: together (async) or one after
    /// another (sync). Synchronous io modes always write them one after another.
    pub submission: Submission,
    /// Group commit as a database was seen to do it: LGWR waits for this many commits
    /// before it writes. `None`: it writes as soon as a commit waits.
    pub group_commit: Option<GroupCommit>,
}

/// LGWR waits until `commits` commits wait (a mean: 1.4 waits for 1 and 2 in turn, 1.4 a
/// write on average), or until the first of them has waited `wait`, before it writes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupCommit {
    pub commits: f64,
    pub wait: Duration,
}

/// The OLTP mix.
#[derive(Debug, Clone)]
pub struct OltpOptions {
    pub work_unit: usize,
    pub update_pct: u32,
    pub hotspot_pct: u32,
    pub hotspot_size: u64,
    pub async_reads: bool,
    pub cache_size: Option<u64>,
    pub warm_cache: bool,
}

/// Temp spills.
#[derive(Debug, Clone)]
pub struct TempOptions {
    pub spill_size: u64,
    pub temp_io: u64,
}

impl TempOptions {
    /// Bytes each session spills (and of its temp file): the spill in whole requests.
    pub fn spill_bytes(&self) -> u64 {
        self.spill_size / self.temp_io * self.temp_io
    }
}

/// Latency limits and minimum throughput of a class: a run passes when every one holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    /// (statistic — "mean", "p50", ... — and the most it may be).
    pub latency: Vec<(&'static str, Duration)>,
    pub min_iops: Option<f64>,
    pub min_mib_per_s: Option<f64>,
}

impl Limits {
    pub fn is_empty(&self) -> bool {
        self.latency.is_empty() && self.min_iops.is_none() && self.min_mib_per_s.is_none()
    }
}

/// What a class's sessions do. Job files give classes of requests; the other kinds are what
/// some classic tests do that one event's requests do not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClassKind {
    /// Requests of the class's event (every class of a job file).
    #[default]
    Requests,
    /// `--keep-inflight`: the batch event's blocks kept in flight, a constant queue depth of
    /// `batch` random blocks, instead of batches submitted and waited for together.
    KeepInflight,
    /// The temp test: write a spill ("direct path write temp"), read it back ("direct path
    /// read temp"), start over.
    Spills,
    /// The oltp test: transactions that read a work unit (the class's event), update some
    /// blocks and commit ("log file sync"), with DBWR writing what they dirtied.
    Transactions,
}

/// One I/O class: an event issued by its own sessions, at a rate or as fast as they can.
#[derive(Debug, Clone)]
pub struct ClassSpec {
    pub name: String,
    pub event: Event,
    pub kind: ClassKind,
    /// Bytes per request: one size, weighted sizes, or (redo) a uniform range. For
    /// "log file sync", the redo each commit carries.
    pub sizes: RequestSizes,
    /// The job file gave no `size`: the event's natural one (one block, MBRC blocks, the
    /// redo per commit, the temp request size) is filled in with the options.
    pub default_size: bool,
    pub sessions: usize,
    pub submission: Submission,
    /// Requests per second over all the class's sessions (open loop), if any; commits per
    /// second for "log file sync".
    pub rate: Option<f64>,
    pub poisson: bool,
    pub think: Option<DurationRange>,
    pub batch: Option<usize>,
    pub depth: Option<usize>,
    /// Temp classes: bytes of each session's temp file (default `--spill-size`).
    pub spill: Option<u64>,
    pub limits: Limits,
    /// Where a job file wrote the class, for what is checked later against the data set.
    pub source: Option<ClassSource>,
}

/// Where in its job file a class's keys are: "FILE (line N)".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassSource {
    /// The class itself (its `event`).
    pub at: String,
    pub size_at: Option<String>,
    pub spill_at: Option<String>,
    pub rate_at: Option<String>,
}

impl ClassSpec {
    /// Whether the class's sessions commit (and wait for the log writer): a commit event's
    /// class, the oltp test's transactions, or PostgreSQL's COPY (its WAL).
    pub fn commits(&self) -> bool {
        self.kind == ClassKind::Transactions
            || (self.kind == ClassKind::Requests
                && matches!(
                    self.event,
                    Event::LogFileSync
                        | Event::InnodbTrxCommit
                        | Event::PgCommit
                        | Event::PgDataFileExtend
                ))
    }

    /// A usage error about the class's `key` ("size" or "spill"), at its line in the job
    /// file when the class came from one.
    pub fn bad_value(&self, key: &str, why: String) -> Error {
        let at = self.source.as_ref().map(|s| {
            match key {
                "spill" => s.spill_at.as_ref(),
                "rate" => s.rate_at.as_ref(),
                "size" => s.size_at.as_ref(),
                _ => None,
            }
            .unwrap_or(&s.at)
        });
        match at {
            Some(at) => Error::usage(format!(
                "{at}: invalid value for 'class.{key}': class '{}': {why}",
                self.name
            )),
            None => Error::usage(format!("class '{}': {why}", self.name)),
        }
    }
}

impl ClassSpec {
    /// A class whose requests all have one size.
    pub fn fixed(
        name: &str,
        event: Event,
        size: u64,
        sessions: usize,
        submission: Submission,
    ) -> ClassSpec {
        ClassSpec {
            name: name.into(),
            event,
            kind: ClassKind::Requests,
            sizes: RequestSizes::Fixed(size),
            default_size: false,
            sessions,
            submission,
            rate: None,
            poisson: false,
            think: None,
            batch: None,
            depth: None,
            spill: None,
            limits: Limits::default(),
            source: None,
        }
    }
}

/// Everything that shapes one run, validated.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub test: Test,
    pub dataset: DataSetSpec,
    pub sessions: usize,
    pub duration: Duration,
    pub warmup: Duration,
    /// What the user asked for (`--sync`/`--async`); names the events.
    pub submission: Submission,
    pub io_mode: IoMode,
    pub engine: EngineChoice,
    pub batch: usize,
    /// Async read-iops/write-iops keep `batch` requests in flight instead of waiting for
    /// whole batches.
    pub keep_inflight: bool,
    pub depth: usize,
    /// Blocks per multiblock request.
    pub mbrc: usize,
    pub out: PathBuf,
    pub json: bool,
    /// No live progress display.
    pub quiet: bool,
    /// `--progress`: when the live progress is drawn.
    pub progress: crate::progress::When,
    pub seed: u64,
    pub ash_hz: u32,
    /// `--destructive` and `--yes`: a write test may overwrite a block device (checked).
    pub destructive: bool,
    pub yes: bool,
    /// Keep going after I/O errors, counting them per event.
    pub continue_on_error: bool,
    pub redo: RedoOptions,
    pub oltp: OltpOptions,
    pub temp: TempOptions,
    /// The I/O classes of a job file (test `job`); empty otherwise.
    pub classes: Vec<ClassSpec>,
    /// The job file as JSON, embedded in result.json.
    pub job: Option<serde_json::Value>,
    /// `--save-job FILE`.
    pub save_job: Option<PathBuf>,
    /// `--span`: requests fall in this first part of each data file.
    pub span: crate::workload::span::Span,
    /// Which options a job file set, and where (for errors found later, with the data set).
    pub origins: Origins,
    /// `--steady-state`: end the window once the last rounds hold steady (None: run it all).
    pub steady: Option<SteadySpec>,
    /// `--like`: whose shapes and event names the classic test has (docs/events.md).
    pub like: crate::workload::event::Like,
    /// `--doublewrite` (`--like innodb` write-iops): each flush batch goes through the
    /// doublewrite file first.
    pub doublewrite: bool,
}

/// The figure steady state is judged on, per round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteadyMetric {
    /// Requests per second, every event together.
    Iops,
    /// MiB per second, every event together.
    Mibps,
    /// Mean latency (µs) over every request of the round.
    Mean,
    /// The seconds' p99 (µs; the worst event's each second), averaged over the round.
    P99,
}

impl SteadyMetric {
    pub fn name(self) -> &'static str {
        match self {
            SteadyMetric::Iops => "iops",
            SteadyMetric::Mibps => "mibps",
            SteadyMetric::Mean => "mean",
            SteadyMetric::P99 => "p99",
        }
    }
}

/// Steady state: over the last [`SteadySpec::WINDOW`] rounds of `round`, the round figures'
/// max − min is at most `range_pct` % of their average, and their least-squares line
/// rises or falls by at most `slope_pct` % of the average across those rounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadySpec {
    pub metric: SteadyMetric,
    pub range_pct: f64,
    pub slope_pct: f64,
    pub round: Duration,
}

impl SteadySpec {
    /// Rounds judged together.
    pub const WINDOW: usize = 5;

    /// `METRIC:RANGE%:SLOPE%` (the `%` signs optional), e.g. `iops:20:10`.
    pub fn parse(text: &str, round: Duration) -> std::result::Result<SteadySpec, String> {
        let parts: Vec<&str> = text.split(':').collect();
        let [metric, range, slope] = parts[..] else {
            return Err("expected METRIC:RANGE%:SLOPE%, e.g. iops:20:10".into());
        };
        let metric = match metric.trim() {
            "iops" => SteadyMetric::Iops,
            "mibps" => SteadyMetric::Mibps,
            "mean" => SteadyMetric::Mean,
            "p99" => SteadyMetric::P99,
            m => return Err(format!("unknown metric '{m}': iops, mibps, mean or p99")),
        };
        let pct = |what: &str, t: &str| -> std::result::Result<f64, String> {
            let t = t.trim().trim_end_matches('%');
            match t.parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v <= 100.0 => Ok(v),
                _ => Err(format!(
                    "the {what} must be a percentage above 0 and at most 100, not '{t}'"
                )),
            }
        };
        Ok(SteadySpec {
            metric,
            range_pct: pct("range", range)?,
            slope_pct: pct("slope", slope)?,
            round,
        })
    }
}

/// Which options a job file set, and where: errors found after the options were read name
/// an option as the user wrote it.
#[derive(Debug, Clone, Default)]
pub struct Origins {
    /// Option name (`span`) → (`FILE (line N)`, job-file key `dataset.span`).
    pub job: std::collections::BTreeMap<String, (String, &'static str)>,
}

impl Origins {
    /// The usage error for option `name`'s `value`: at its job file line and key when the
    /// job file set it, else as the `--name` flag.
    pub fn invalid(&self, name: &str, value: &str, why: impl std::fmt::Display) -> Error {
        match self.job.get(name) {
            Some((at, key)) => {
                Error::usage(format!("{at}: invalid value '{value}' for '{key}': {why}"))
            }
            None => Error::usage(format!("invalid value '{value}' for '--{name}': {why}")),
        }
    }
}

impl RunConfig {
    /// The events of the run's classes (job files, --rate); empty for a classic test.
    fn class_events(&self) -> impl Iterator<Item = crate::workload::Event> + '_ {
        self.classes.iter().map(|c| c.event)
    }

    /// How the run submits its I/O, as run directories and headers say it: `sync` or
    /// `async`, or `mixed` for a job whose classes differ.
    pub fn submission_label(&self) -> &'static str {
        let mut classes = self.classes.iter().map(|c| c.submission);
        match classes.next() {
            None => self.submission.name(),
            Some(first) if classes.all(|s| s == first) => first.name(),
            Some(_) => "mixed",
        }
    }

    /// Whether the run reads or writes the data files.
    pub fn uses_data_files(&self) -> bool {
        if self.classes.is_empty() {
            return self.test.uses_data_files();
        }
        self.class_events().any(Event::uses_data_files)
    }

    /// Whether the run writes redo log files.
    pub fn uses_redo(&self) -> bool {
        if self.classes.is_empty() {
            // PostgreSQL's COPY logs its rows (--like postgres write-mbps). (The preset
            // classes are not asked: presets imports this module.)
            return self.test.uses_redo()
                || (self.test == Test::WriteMbps
                    && self.like == crate::workload::event::Like::Postgres);
        }
        // A class that commits, or a log writer's class of its own.
        self.classes
            .iter()
            .any(|c| c.commits() || c.event.is_redo())
    }

    /// `--like innodb` write-iops with `--doublewrite on`: the bytes of the doublewrite file
    /// each session writes its batches through (one of the run's temp files).
    pub fn doublewrite_bytes(&self) -> Option<u64> {
        let innodb = self.like == crate::workload::event::Like::Innodb;
        (innodb && self.doublewrite && self.test == Test::WriteIops)
            .then_some(self.batch as u64 * self.dataset.block_size)
    }

    /// Whether the run makes temp files: spills, or doublewrite files.
    pub fn uses_temp(&self) -> bool {
        if self.doublewrite_bytes().is_some() {
            return true;
        }
        if self.classes.is_empty() {
            return self.test == Test::Temp;
        }
        self.class_events().any(Event::is_temp)
    }

    /// Whether the run writes anything (data, redo or temp files), and so needs a data set
    /// directory dbio created.
    pub fn writes(&self) -> bool {
        if self.test != Test::Job {
            return self.test.writes();
        }
        self.class_events().any(|e| e.writes()) || self.uses_temp() || self.uses_redo()
    }

    /// Whether the run writes data blocks (and so changes their verify sequences).
    pub fn writes_data(&self) -> bool {
        if self.test != Test::Job {
            return self.test.writes_data();
        }
        self.class_events()
            .any(|e| e.writes() && e.uses_data_files())
    }

    /// Bytes per multiblock request (MBRC × block size).
    pub fn multiblock_bytes(&self) -> u64 {
        self.mbrc as u64 * self.dataset.block_size
    }

    /// The most bytes the run asks of one data file's active part: its largest request — for
    /// `write-mbps`, one request for each session writing its own region of a file.
    fn largest_request(&self) -> Option<(u64, String)> {
        if !self.classes.is_empty() {
            return self
                .classes
                .iter()
                .filter(|c| c.event.uses_data_files())
                .map(|c| (c.sizes.max(), format!("a request of class '{}'", c.name)))
                .max_by_key(|(size, _)| *size);
        }
        let multiblock = self.multiblock_bytes();
        let (bytes, what) = match self.test {
            Test::Redo | Test::Temp | Test::Job => return None,
            Test::ReadMbps => (multiblock, "one multiblock read".to_string()),
            Test::WriteMbps => {
                let per_file = self.sessions.div_ceil(self.dataset.files as usize) as u64;
                (
                    multiblock.saturating_mul(per_file),
                    format!(
                        "{per_file} session(s) per file, each writing {} requests in its own region",
                        size_label(multiblock)
                    ),
                )
            }
            Test::ReadIops | Test::WriteIops | Test::Oltp => {
                (self.dataset.block_size, "one block".to_string())
            }
        };
        Some((bytes, what))
    }

    /// Checks the span of a run whose data files hold `file_size` bytes each: it must leave
    /// room for the run's largest request, and the run must have data files to span.
    /// `origin` names the option (`--span`, or the job file's `dataset.span` and line).
    pub fn check_span(&self, file_size: u64) -> Result<()> {
        if self.span.is_full() {
            return Ok(());
        }
        let bad = |why: String| self.origins.invalid("span", &self.span.label(), why);
        let Some((need, what)) = self.largest_request() else {
            return Err(bad(format!(
                "the {} run uses no data files (redo logs and temp files are always used whole), so a span would be ignored",
                self.test.name()
            )));
        };
        let active = self.span.of(file_size, self.dataset.block_size);
        if active < need {
            return Err(bad(format!(
                "the first {} of each data file is {}, which cannot hold {} ({what}); use a larger span or --size",
                self.span.label(),
                size_label(active),
                size_label(need)
            )));
        }
        Ok(())
    }
}

/// A seed for runs that did not ask for one; recorded in the result so runs can be repeated.
pub fn rand_seed() -> u64 {
    let t = crate::sys::now_ns();
    t ^ (u64::from(std::process::id()) << 32) ^ fastrand::u64(..)
}
