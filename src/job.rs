//! Job files (TOML): what the database needs per I/O class, generated exactly and checked
//! against limits (issue 6). `dbio run --job FILE`:
//!
//! ```toml
//! [dataset]                 # target, size, block_size, files, fill, span
//! [run]                     # duration, warmup, io_mode, engine, seed
//! [redo]                    # block, files, file_size, sync (log file sync / parallel write classes)
//! [[class]]
//! name = "single-block reads"
//! event = "db file sequential read"
//! size = "16K"              # or weighted: { "16K" = 90, "32K" = 10 }; redo: "512..3000"
//! sessions = 4
//! rate = 406                # requests/s (commits/s for log file sync), optional: open loop
//! arrival = "poisson"       # or "fixed" (default)
//! [class.limits]
//! p99 = "10ms"              # mean, p50, p90, p95, p99; min_iops, min_mib_per_s
//! ```
//!
//! A job file may instead name a test (`[run] test = "oltp"`) with the options of
//! `dbio run` in its tables: that is what `--save-job` writes for runs no set of classes
//! expresses (oltp, temp, --keep-inflight).
//!
//! Options typed on the command line win over the job file; the job file wins over
//! defaults. Unknown keys and bad values are errors naming the key and its line.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::cli::RunArgs;
use crate::config::{RunConfig, Submission};
use crate::error::{Error, Result};
use crate::units::{self, DurationRange};
use crate::workload::sizes::{RequestSizes, WeightedSizes};
use crate::workload::{Event, Test};

type Value = Spanned<toml::Value>;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobFile {
    #[serde(default)]
    dataset: Option<JobDataSet>,
    #[serde(default)]
    run: Option<JobRun>,
    #[serde(default)]
    redo: Option<JobRedo>,
    #[serde(default)]
    oltp: Option<JobOltp>,
    #[serde(default)]
    temp: Option<JobTemp>,
    #[serde(default)]
    class: Vec<JobClass>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobDataSet {
    target: Option<String>,
    size: Option<Spanned<String>>,
    block_size: Option<Spanned<String>>,
    files: Option<u32>,
    fill: Option<Value>,
    /// The active surface (`--span`).
    span: Option<Value>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobRun {
    duration: Option<Spanned<String>>,
    warmup: Option<Spanned<String>>,
    io_mode: Option<Spanned<String>>,
    engine: Option<Spanned<String>>,
    seed: Option<u64>,
    /// A test instead of classes, and the options that shape it.
    test: Option<Spanned<String>>,
    sessions: Option<Value>,
    submission: Option<Value>,
    batch: Option<Value>,
    depth: Option<Value>,
    mbrc: Option<Value>,
    keep_inflight: Option<Value>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobRedo {
    per_commit: Option<Value>,
    think: Option<Value>,
    block: Option<Value>,
    files: Option<Value>,
    file_size: Option<Value>,
    sync: Option<Value>,
    lgwr_cpu: Option<Value>,
    noise_cpu: Option<Value>,
    writers: Option<Value>,
    /// How LGWR writes the pieces of one write beside "log file sync" classes.
    submission: Option<Spanned<String>>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobOltp {
    work_unit: Option<Value>,
    update_pct: Option<Value>,
    hotspot_pct: Option<Value>,
    hotspot_size: Option<Value>,
    async_reads: Option<Value>,
    cache_size: Option<Value>,
    cold_cache: Option<Value>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobTemp {
    spill_size: Option<Value>,
    temp_io: Option<Value>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobClass {
    name: Option<String>,
    event: Spanned<String>,
    size: Value,
    sessions: Option<Spanned<u32>>,
    submission: Option<Spanned<String>>,
    rate: Option<Spanned<f64>>,
    arrival: Option<Spanned<String>>,
    think: Option<Spanned<String>>,
    batch: Option<Spanned<u32>>,
    depth: Option<Spanned<u32>>,
    /// Temp classes: bytes each session's temp file holds.
    spill: Option<Spanned<String>>,
    limits: Option<JobLimits>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobLimits {
    mean: Option<Spanned<String>>,
    p50: Option<Spanned<String>>,
    p90: Option<Spanned<String>>,
    p95: Option<Spanned<String>>,
    p99: Option<Spanned<String>>,
    min_iops: Option<Spanned<f64>>,
    min_mib_per_s: Option<Spanned<f64>>,
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

/// One I/O class: an event issued by its own sessions, at a rate or as fast as they can.
#[derive(Debug, Clone)]
pub struct ClassSpec {
    pub name: String,
    pub event: Event,
    /// Bytes per request: one size, weighted sizes, or (redo) a uniform range. For
    /// "log file sync", the redo each commit carries.
    pub sizes: RequestSizes,
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
    pub size_at: String,
    pub spill_at: Option<String>,
    pub rate_at: Option<String>,
}

impl ClassSpec {
    /// A usage error about the class's `key` ("size" or "spill"), at its line in the job
    /// file when the class came from one.
    pub fn bad_value(&self, key: &str, why: String) -> Error {
        let at = self.source.as_ref().and_then(|s| match key {
            "spill" => s.spill_at.as_ref(),
            "rate" => s.rate_at.as_ref(),
            _ => Some(&s.size_at),
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
            sizes: RequestSizes::Fixed(size),
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

/// A `dbio run` option a job file sets: the option's id (as `RunArgs::typed` names it) and
/// the arguments with the value parsed into it.
#[derive(Debug, Clone)]
pub struct JobOption {
    pub id: &'static str,
    copy: fn(&mut RunArgs, &RunArgs),
    parsed: Box<RunArgs>,
}

impl JobOption {
    /// Sets the option in `args` to the job file's value.
    pub fn apply(&self, args: &mut RunArgs) {
        (self.copy)(args, &self.parsed)
    }
}

/// What a job file sets, each value with where it came from.
#[derive(Debug, Clone, Default)]
pub struct Job {
    pub target: Option<String>,
    pub size: Option<u64>,
    pub block_size: Option<u64>,
    pub files: Option<u32>,
    pub duration: Option<Duration>,
    pub warmup: Option<Duration>,
    pub io_mode: Option<crate::config::IoMode>,
    pub engine: Option<crate::engine::EngineChoice>,
    pub seed: Option<u64>,
    /// A test run with options (`[run] test`) instead of classes.
    pub test: Option<Test>,
    /// `dbio run` options from the tables ([run] sessions, [redo], [oltp], [temp], ...).
    pub options: Vec<JobOption>,
    pub classes: Vec<ClassSpec>,
    /// The job as JSON, embedded in result.json.
    pub json: serde_json::Value,
    /// Where `dataset.span` is, "FILE (line N)", for checks made with the data set.
    pub span_at: Option<String>,
}

/// The events a class can issue: all of SPEC §3 but "free buffer waits", which is a wait
/// for DBWR and not I/O anyone issues.
pub const CLASS_EVENTS: [Event; 10] = [
    Event::DbFileSequentialRead,
    Event::DbFileParallelRead,
    Event::DbFileScatteredRead,
    Event::DirectPathRead,
    Event::DbFileParallelWrite,
    Event::DirectPathWrite,
    Event::DirectPathWriteTemp,
    Event::DirectPathReadTemp,
    Event::LogFileParallelWrite,
    Event::LogFileSync,
];

/// Whether an event's class issues redo (bytes of any count, so sizes may be a range).
pub fn is_redo(e: Event) -> bool {
    matches!(e, Event::LogFileSync | Event::LogFileParallelWrite)
}

/// Whether an event's class writes and reads temp files.
pub fn is_temp(e: Event) -> bool {
    matches!(e, Event::DirectPathWriteTemp | Event::DirectPathReadTemp)
}

/// A `dbio run` option a job file's tables may set.
struct RunOption {
    /// `table.key` in the job file.
    key: &'static str,
    /// The option on the command line.
    flag: &'static str,
    /// Its id in `RunArgs::typed`.
    id: &'static str,
    /// Also meaningful beside [[class]] (otherwise it needs `[run] test`).
    with_classes: bool,
    copy: fn(&mut RunArgs, &RunArgs),
}

macro_rules! run_option {
    ($key:literal, $flag:literal, $with:literal, $($field:ident).+) => {
        RunOption {
            key: $key,
            flag: $flag,
            id: last_ident!($($field).+),
            with_classes: $with,
            copy: |to, from| to.$($field).+ = from.$($field).+.clone(),
        }
    };
}

macro_rules! last_ident {
    ($first:ident) => {
        stringify!($first)
    };
    ($first:ident . $($rest:ident).+) => {
        last_ident!($($rest).+)
    };
}

const RUN_OPTIONS: &[RunOption] = &[
    run_option!("dataset.fill", "--fill", true, dataset.fill),
    run_option!("dataset.span", "--span", true, span),
    run_option!("run.sessions", "--sessions", false, sessions),
    run_option!("run.batch", "--batch", false, batch),
    run_option!("run.depth", "--depth", false, depth),
    run_option!("run.mbrc", "--mbrc", false, mbrc),
    run_option!("run.keep_inflight", "--keep-inflight", false, keep_inflight),
    run_option!(
        "redo.per_commit",
        "--redo-per-commit",
        false,
        redo.redo_per_commit
    ),
    run_option!("redo.think", "--think", false, redo.think),
    run_option!("redo.block", "--redo-block", true, redo.redo_block),
    run_option!("redo.files", "--redo-files", true, redo.redo_files),
    run_option!(
        "redo.file_size",
        "--redo-file-size",
        true,
        redo.redo_file_size
    ),
    run_option!("redo.sync", "--redo-sync", true, redo.redo_sync),
    run_option!("redo.lgwr_cpu", "--lgwr-cpu", true, redo.lgwr_cpu),
    run_option!("redo.noise_cpu", "--noise-cpu", true, redo.noise_cpu),
    run_option!("redo.writers", "--writers", false, redo.writers),
    run_option!("oltp.work_unit", "--work-unit", false, oltp.work_unit),
    run_option!("oltp.update_pct", "--update-pct", false, oltp.update_pct),
    run_option!("oltp.hotspot_pct", "--hotspot-pct", false, oltp.hotspot_pct),
    run_option!(
        "oltp.hotspot_size",
        "--hotspot-size",
        false,
        oltp.hotspot_size
    ),
    run_option!("oltp.async_reads", "--async-reads", false, oltp.async_reads),
    run_option!("oltp.cache_size", "--cache-size", false, oltp.cache_size),
    run_option!("oltp.cold_cache", "--cold-cache", false, oltp.cold_cache),
    run_option!("temp.spill_size", "--spill-size", true, temp.spill_size),
    run_option!("temp.temp_io", "--temp-io", false, temp.temp_io),
];

/// The first option typed on the command line that a job of classes would ignore (each
/// class sets it, or only a test uses it), as its flag.
pub fn ignored_beside_classes(typed: &[String]) -> Option<&'static str> {
    RUN_OPTIONS
        .iter()
        .find(|o| !o.with_classes && typed.iter().any(|t| t == o.id))
        .map(|o| o.flag)
}

/// Reads and checks a job file.
pub fn load(path: &Path) -> Result<Job> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::usage(format!("--job {}: no such file", path.display()))
        }
        std::io::ErrorKind::InvalidData => {
            Error::usage(format!("--job {}: not a text (UTF-8) file", path.display()))
        }
        _ => Error::io("cannot read the job file", path, &e),
    })?;
    parse(&text, &path.display().to_string())
}

/// The line (from 1) of byte `offset` of a TOML file's `text` (job files, sizing plans).
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The job file's values for the `dbio run` options, by key.
fn option_values(f: &JobFile) -> Vec<(&'static str, &Value)> {
    let d = f.dataset.as_ref();
    let r = f.run.as_ref();
    let redo = f.redo.as_ref();
    let o = f.oltp.as_ref();
    let t = f.temp.as_ref();
    let all: [(&'static str, Option<&Value>); 25] = [
        ("dataset.fill", d.and_then(|d| d.fill.as_ref())),
        ("dataset.span", d.and_then(|d| d.span.as_ref())),
        ("run.sessions", r.and_then(|r| r.sessions.as_ref())),
        ("run.batch", r.and_then(|r| r.batch.as_ref())),
        ("run.depth", r.and_then(|r| r.depth.as_ref())),
        ("run.mbrc", r.and_then(|r| r.mbrc.as_ref())),
        (
            "run.keep_inflight",
            r.and_then(|r| r.keep_inflight.as_ref()),
        ),
        ("redo.per_commit", redo.and_then(|x| x.per_commit.as_ref())),
        ("redo.think", redo.and_then(|x| x.think.as_ref())),
        ("redo.block", redo.and_then(|x| x.block.as_ref())),
        ("redo.files", redo.and_then(|x| x.files.as_ref())),
        ("redo.file_size", redo.and_then(|x| x.file_size.as_ref())),
        ("redo.sync", redo.and_then(|x| x.sync.as_ref())),
        ("redo.lgwr_cpu", redo.and_then(|x| x.lgwr_cpu.as_ref())),
        ("redo.noise_cpu", redo.and_then(|x| x.noise_cpu.as_ref())),
        ("redo.writers", redo.and_then(|x| x.writers.as_ref())),
        ("oltp.work_unit", o.and_then(|x| x.work_unit.as_ref())),
        ("oltp.update_pct", o.and_then(|x| x.update_pct.as_ref())),
        ("oltp.hotspot_pct", o.and_then(|x| x.hotspot_pct.as_ref())),
        ("oltp.hotspot_size", o.and_then(|x| x.hotspot_size.as_ref())),
        ("oltp.async_reads", o.and_then(|x| x.async_reads.as_ref())),
        ("oltp.cache_size", o.and_then(|x| x.cache_size.as_ref())),
        ("oltp.cold_cache", o.and_then(|x| x.cold_cache.as_ref())),
        ("temp.spill_size", t.and_then(|x| x.spill_size.as_ref())),
        ("temp.temp_io", t.and_then(|x| x.temp_io.as_ref())),
    ];
    all.into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

/// Parses job file `text` (`origin` names it in errors).
pub fn parse(text: &str, origin: &str) -> Result<Job> {
    let file: JobFile = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" (line {})", line_of(text, s.start)))
            .unwrap_or_default();
        Error::usage(format!("{origin}{at}: {}", e.message()))
    })?;
    let at =
        |span: std::ops::Range<usize>| format!("{origin} (line {})", line_of(text, span.start));
    let bad = |key: &str, span: std::ops::Range<usize>, why: String| {
        Error::usage(format!("{}: invalid value for '{key}': {why}", at(span)))
    };
    let size = |key: &str, v: &Spanned<String>| {
        units::parse_size(v.get_ref()).map_err(|e| bad(key, v.span(), e))
    };
    let duration = |key: &str, v: &Spanned<String>| {
        units::parse_duration(v.get_ref()).map_err(|e| bad(key, v.span(), e))
    };
    let mut job = Job {
        json: serde_json::to_value(&file).unwrap_or(serde_json::Value::Null),
        ..Job::default()
    };
    if let Some(d) = &file.dataset {
        job.target = d.target.clone();
        job.size = d
            .size
            .as_ref()
            .map(|v| size("dataset.size", v))
            .transpose()?;
        job.block_size = d
            .block_size
            .as_ref()
            .map(|v| size("dataset.block_size", v))
            .transpose()?;
        job.files = d.files;
    }
    if let Some(r) = &file.run {
        job.duration = r
            .duration
            .as_ref()
            .map(|v| duration("run.duration", v))
            .transpose()?;
        job.warmup = r
            .warmup
            .as_ref()
            .map(|v| duration("run.warmup", v))
            .transpose()?;
        job.io_mode = r
            .io_mode
            .as_ref()
            .map(|v| {
                clap::ValueEnum::from_str(v.get_ref(), true).map_err(|_| {
                    bad(
                        "run.io_mode",
                        v.span(),
                        "accepted: none, directio, asynch, setall".into(),
                    )
                })
            })
            .transpose()?;
        job.engine = r
            .engine
            .as_ref()
            .map(|v| {
                clap::ValueEnum::from_str(v.get_ref(), true).map_err(|_| {
                    bad(
                        "run.engine",
                        v.span(),
                        "accepted: auto, uring, aio, sync".into(),
                    )
                })
            })
            .transpose()?;
        job.seed = r.seed;
        job.test = r
            .test
            .as_ref()
            .map(|v| {
                <Test as clap::ValueEnum>::from_str(v.get_ref(), true).map_err(|_| {
                    bad(
                        "run.test",
                        v.span(),
                        format!(
                            "'{}'; accepted: read-iops, read-mbps, write-iops, write-mbps, redo, oltp, temp",
                            v.get_ref()
                        ),
                    )
                })
            })
            .transpose()?;
        if let Some(v) = &r.submission {
            // The --sync / --async choice of a test.
            match v.get_ref().as_str() {
                Some("sync") => job.options.push(JobOption {
                    id: "sync",
                    copy: |to, _| to.sync = true,
                    parsed: Box::new(RunArgs::defaults(Test::ReadIops)),
                }),
                Some("async") => job.options.push(JobOption {
                    id: "sync",
                    copy: |to, _| to.sync = false,
                    parsed: Box::new(RunArgs::defaults(Test::ReadIops)),
                }),
                _ => {
                    return Err(bad(
                        "run.submission",
                        v.span(),
                        "accepted: sync, async".into(),
                    ));
                }
            }
            if job.test.is_none() {
                return Err(bad(
                    "run.submission",
                    v.span(),
                    "goes with run.test; each [[class]] sets its own submission".into(),
                ));
            }
        }
    }
    for (key, v) in option_values(&file) {
        let o = RUN_OPTIONS
            .iter()
            .find(|o| o.key == key)
            .expect("every table key has its option");
        if job.test.is_none() && !o.with_classes {
            return Err(bad(
                key,
                v.span(),
                "goes with run.test (a test with its options); [[class]] entries set this per class".into(),
            ));
        }
        let value = match v.get_ref() {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Integer(i) => Some(i.to_string()),
            toml::Value::Float(f) => Some(f.to_string()),
            toml::Value::Boolean(true) => None,
            toml::Value::Boolean(false) => {
                // A switch left off is its default; any other option needs a value.
                RunArgs::parse_option(o.flag, None).map_err(|_| {
                    bad(
                        key,
                        v.span(),
                        format!("false is for switches; {} takes a value", o.flag),
                    )
                })?;
                continue;
            }
            _ => {
                return Err(bad(
                    key,
                    v.span(),
                    "expected a string, a number or true/false".into(),
                ));
            }
        };
        let parsed =
            RunArgs::parse_option(o.flag, value.as_deref()).map_err(|e| bad(key, v.span(), e))?;
        if key == "dataset.span" {
            job.span_at = Some(at(v.span()));
        }
        job.options.push(JobOption {
            id: o.id,
            copy: o.copy,
            parsed: Box::new(parsed),
        });
    }
    match (job.test, file.class.is_empty()) {
        (Some(_), false) => {
            return Err(Error::usage(format!(
                "{origin}: run.test and [[class]] entries exclude each other: a job runs either a test or its classes"
            )));
        }
        (None, true) => {
            return Err(Error::usage(format!(
                "{origin}: no [[class]]: a job needs at least one I/O class (or run.test)"
            )));
        }
        _ => {}
    }
    for (i, c) in file.class.iter().enumerate() {
        let mut class = parse_class(i, c, &bad)?;
        class.source = Some(ClassSource {
            size_at: at(c.size.span()),
            spill_at: c.spill.as_ref().map(|v| at(v.span())),
            rate_at: c.rate.as_ref().map(|v| at(v.span())),
        });
        job.classes.push(class);
    }
    if let Some(v) = file.redo.as_ref().and_then(|r| r.submission.as_ref()) {
        if !job.classes.iter().any(|c| c.event == Event::LogFileSync) {
            return Err(bad(
                "redo.submission",
                v.span(),
                "says how the LGWR of \"log file sync\" classes writes its pieces; a \"log file parallel write\" class sets its own submission, and run.test uses run.submission".into(),
            ));
        }
        let copy: fn(&mut RunArgs, &RunArgs) = match v.get_ref().as_str() {
            "sync" => |to, _| to.redo.lgwr_submission = Some(Submission::Sync),
            "async" => |to, _| to.redo.lgwr_submission = Some(Submission::Async),
            other => {
                return Err(bad(
                    "redo.submission",
                    v.span(),
                    format!(
                        "'{other}'; accepted: sync (pieces one after another), async (together)"
                    ),
                ));
            }
        };
        job.options.push(JobOption {
            id: "lgwr_submission",
            copy,
            parsed: Box::new(RunArgs::defaults(Test::Redo)),
        });
    }
    // Beside classes, [redo] and [temp] shape only redo and temp classes: without one,
    // their values would be read and then ignored.
    if job.test.is_none() {
        for (key, v) in option_values(&file) {
            let (uses, what): (fn(Event) -> bool, &str) = match key {
                // The noise thread runs beside any run (it competes with whatever runs there).
                "redo.noise_cpu" => continue,
                k if k.starts_with("redo.") => {
                    (is_redo, "redo (log file sync, log file parallel write)")
                }
                k if k.starts_with("temp.") => (
                    is_temp,
                    "temp (direct path write temp, direct path read temp)",
                ),
                _ => continue,
            };
            if !job.classes.iter().any(|c| uses(c.event)) {
                return Err(bad(
                    key,
                    v.span(),
                    format!("no class of this job issues {what}, so nothing would use it"),
                ));
            }
        }
    }
    if let Some(second) = second_log_writer(&job.classes) {
        return Err(bad(
            "class.event",
            file.class[second].event.span(),
            "a job has one log writer: either \"log file sync\" classes (commits; their LGWR's writes are reported as \"log file parallel write\") or one \"log file parallel write\" class (redo writes of a set size and rate)".into(),
        ));
    }
    Ok(job)
}

/// A job has one log writer: committing sessions' LGWR, or one class writing redo at a set
/// size and rate — not both. The index of the first class that makes a second one.
fn second_log_writer(classes: &[ClassSpec]) -> Option<usize> {
    let mut writer = None;
    for (i, c) in classes.iter().enumerate() {
        let kind = match c.event {
            Event::LogFileParallelWrite => 1,
            Event::LogFileSync => 2,
            _ => continue,
        };
        match writer {
            None => writer = Some(kind),
            // Committing classes share their LGWR; anything else is a second writer.
            Some(2) if kind == 2 => {}
            Some(_) => return Some(i),
        }
    }
    None
}

/// Parses one `[[class]]` (the `i`th).
fn parse_class(
    i: usize,
    c: &JobClass,
    bad: &dyn Fn(&str, std::ops::Range<usize>, String) -> Error,
) -> Result<ClassSpec> {
    let event = Event::from_name(c.event.get_ref())
        .filter(|e| CLASS_EVENTS.contains(e))
        .ok_or_else(|| {
            let why = if c.event.get_ref() == Event::FreeBufferWaits.name() {
                "\"free buffer waits\" is a wait for DBWR to clean a buffer, not I/O a class issues; the oltp test with --cache-size shows it".to_string()
            } else {
                let names: Vec<&str> = CLASS_EVENTS.iter().map(|e| e.name()).collect();
                format!("'{}'; accepted: {}", c.event.get_ref(), names.join(", "))
            };
            bad("class.event", c.event.span(), why)
        })?;
    let natural = match event {
        Event::DbFileSequentialRead | Event::DbFileScatteredRead | Event::LogFileSync => {
            Submission::Sync
        }
        _ => Submission::Async,
    };
    let submission = match &c.submission {
        None => natural,
        Some(v) => {
            let s = match v.get_ref().as_str() {
                "sync" => Submission::Sync,
                "async" => Submission::Async,
                other => {
                    return Err(bad(
                        "class.submission",
                        v.span(),
                        format!("'{other}'; accepted: sync, async"),
                    ));
                }
            };
            let fixed = matches!(
                event,
                Event::DbFileSequentialRead
                    | Event::DbFileScatteredRead
                    | Event::DbFileParallelRead
                    | Event::DirectPathRead
                    | Event::LogFileSync
            );
            if fixed && s != natural {
                return Err(bad(
                    "class.submission",
                    v.span(),
                    format!("\"{}\" is {} by definition", event.name(), natural.name()),
                ));
            }
            s
        }
    };
    let sessions = match &c.sessions {
        None => 1,
        Some(v) if event == Event::LogFileParallelWrite && *v.get_ref() != 1 => {
            return Err(bad(
                "class.sessions",
                v.span(),
                "\"log file parallel write\" is the one log writer's: sessions = 1".into(),
            ));
        }
        Some(v) if (1..=4096).contains(v.get_ref()) => *v.get_ref() as usize,
        Some(v) => return Err(bad("class.sessions", v.span(), "from 1 to 4096".into())),
    };
    let rate = match &c.rate {
        None => None,
        Some(v)
            if *v.get_ref() > 0.0 && v.get_ref().is_finite() && *v.get_ref() <= 10_000_000.0 =>
        {
            Some(*v.get_ref())
        }
        Some(v) => {
            return Err(bad(
                "class.rate",
                v.span(),
                "requests per second, above 0 and at most 10,000,000".into(),
            ));
        }
    };
    let poisson = match &c.arrival {
        None => false,
        Some(v) => match v.get_ref().as_str() {
            "fixed" => false,
            "poisson" => true,
            other => {
                return Err(bad(
                    "class.arrival",
                    v.span(),
                    format!("'{other}'; accepted: fixed, poisson"),
                ));
            }
        },
    };
    if poisson && rate.is_none() {
        return Err(bad(
            "class.arrival",
            c.arrival.as_ref().expect("set").span(),
            "needs a rate".into(),
        ));
    }
    let sizes = class_sizes(event, &c.size).map_err(|why| bad("class.size", c.size.span(), why))?;
    let think = c
        .think
        .as_ref()
        .map(|v| {
            units::parse_duration_range(v.get_ref()).map_err(|e| bad("class.think", v.span(), e))
        })
        .transpose()?;
    // An open loop's schedule sets when requests start: a think time or a queue depth
    // beside it would be ignored, so it is refused instead.
    if rate.is_some() {
        if let Some(v) = &c.think {
            return Err(bad(
                "class.think",
                v.span(),
                "a class with a rate starts each request on its schedule; think is for classes without a rate (closed loop)".into(),
            ));
        }
        if let Some(v) = &c.depth {
            return Err(bad(
                "class.depth",
                v.span(),
                "a class with a rate issues one request per arrival and its sessions set how many can be in flight; leave out depth, or the rate".into(),
            ));
        }
    }
    let limited =
        |key: &str, v: &Option<Spanned<u32>>, events: &[Event]| -> Result<Option<usize>> {
            match v {
                None => Ok(None),
                Some(v) if !events.contains(&event) => Err(bad(
                    key,
                    v.span(),
                    format!(
                        "\"{}\" does not use it (only {})",
                        event.name(),
                        events
                            .iter()
                            .map(|e| e.name())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
                Some(v) if (1..=1024).contains(v.get_ref()) => Ok(Some(*v.get_ref() as usize)),
                Some(v) => Err(bad(key, v.span(), "from 1 to 1024".into())),
            }
        };
    let batch = limited(
        "class.batch",
        &c.batch,
        &[Event::DbFileParallelRead, Event::DbFileParallelWrite],
    )?;
    let depth = limited(
        "class.depth",
        &c.depth,
        &[
            Event::DirectPathRead,
            Event::DirectPathWrite,
            Event::DirectPathWriteTemp,
            Event::DirectPathReadTemp,
        ],
    )?;
    let spill = match &c.spill {
        None => None,
        Some(v) if !is_temp(event) => {
            return Err(bad(
                "class.spill",
                v.span(),
                "only temp classes (direct path write temp, direct path read temp) have a spill"
                    .into(),
            ));
        }
        Some(v) => {
            let bytes =
                units::parse_size(v.get_ref()).map_err(|e| bad("class.spill", v.span(), e))?;
            if bytes < sizes.max() {
                return Err(bad(
                    "class.spill",
                    v.span(),
                    format!(
                        "smaller than one request ({})",
                        units::size_label(sizes.max())
                    ),
                ));
            }
            Some(bytes)
        }
    };
    let mut limits = Limits::default();
    if let Some(l) = &c.limits {
        for (stat, v) in [
            ("mean", &l.mean),
            ("p50", &l.p50),
            ("p90", &l.p90),
            ("p95", &l.p95),
            ("p99", &l.p99),
        ] {
            if let Some(v) = v {
                let key = format!("class.limits.{stat}");
                let d = units::parse_duration(v.get_ref()).map_err(|e| bad(&key, v.span(), e))?;
                limits.latency.push((stat, d));
            }
        }
        let minimum = |key: &str, v: &Option<Spanned<f64>>| -> Result<Option<f64>> {
            match v {
                None => Ok(None),
                Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => Ok(Some(*v.get_ref())),
                Some(v) => Err(bad(key, v.span(), "a number, 0 or more".into())),
            }
        };
        limits.min_iops = minimum("class.limits.min_iops", &l.min_iops)?;
        limits.min_mib_per_s = minimum("class.limits.min_mib_per_s", &l.min_mib_per_s)?;
        if let (Event::LogFileSync, Some(v)) = (event, &l.min_mib_per_s) {
            return Err(bad(
                "class.limits.min_mib_per_s",
                v.span(),
                "a commit's wait moves no bytes of its own (its redo is LGWR's write); limit commits per second with min_iops".into(),
            ));
        }
    }
    Ok(ClassSpec {
        name: c
            .name
            .clone()
            .unwrap_or_else(|| format!("class {} ({})", i + 1, event.name())),
        event,
        sizes,
        sessions,
        submission,
        rate,
        poisson,
        think,
        batch,
        depth,
        spill,
        limits,
        source: None,
    })
}

/// A class's `size`: `"16K"`, weighted `{ "1M" = 80, "256K" = 20 }`, or for redo a range
/// `"512..3000"`. Sizes that depend on the data set are checked with it (config.rs).
fn class_sizes(event: Event, v: &Value) -> std::result::Result<RequestSizes, String> {
    let one = |text: &str| -> std::result::Result<u64, String> {
        let b = units::parse_size(text)?;
        if b == 0 {
            return Err("a size must be above 0".into());
        }
        if b > 64 << 20 {
            return Err(format!("{text}: at most 64M per request"));
        }
        Ok(b)
    };
    let sizes = match v.get_ref() {
        toml::Value::String(s) => match s.split_once("..") {
            None => RequestSizes::Fixed(one(s)?),
            Some(_) if !is_redo(event) => {
                return Err(format!(
                    "a range ('{s}') is for redo bytes (log file sync, log file parallel write); \"{}\" takes one size or weighted sizes, e.g. {{ \"1M\" = 80, \"256K\" = 20 }}",
                    event.name()
                ));
            }
            Some((lo, hi)) => {
                let (lo, hi) = (one(lo)?, one(hi)?);
                if lo > hi {
                    return Err(format!("'{s}': the range runs backwards; write LOW..HIGH"));
                }
                RequestSizes::Uniform { lo, hi }
            }
        },
        toml::Value::Table(t) => {
            let mut pairs = Vec::with_capacity(t.len());
            for (k, w) in t {
                let weight = match w {
                    toml::Value::Integer(i) => *i as f64,
                    toml::Value::Float(f) => *f,
                    _ => return Err(format!("the weight of '{k}' must be a number")),
                };
                pairs.push((one(k)?, weight));
            }
            RequestSizes::Weighted(WeightedSizes::new(&pairs)?)
        }
        _ => {
            return Err(
                "a size (\"16K\") or weighted sizes ({ \"1M\" = 80, \"256K\" = 20 })".into(),
            );
        }
    };
    if is_temp(event) {
        for s in sizes.sizes() {
            crate::cli::parse_temp_io(&s.to_string())
                .map_err(|e| format!("{}: temp requests {e}", units::size_label(s)))?;
        }
    }
    Ok(sizes)
}

/// The one class a classic test run is (`--save-job`, `--rate`); `None` for runs no class
/// expresses (oltp, temp, --keep-inflight).
pub fn classic_class(cfg: &RunConfig) -> Option<ClassSpec> {
    let (event, size) = match (cfg.test, cfg.submission) {
        _ if cfg.keep_inflight => return None,
        (Test::ReadIops, Submission::Sync) => (Event::DbFileSequentialRead, cfg.dataset.block_size),
        (Test::ReadIops, Submission::Async) => (Event::DbFileParallelRead, cfg.dataset.block_size),
        (Test::ReadMbps, Submission::Sync) => (Event::DbFileScatteredRead, cfg.multiblock_bytes()),
        (Test::ReadMbps, Submission::Async) => (Event::DirectPathRead, cfg.multiblock_bytes()),
        (Test::WriteIops, _) => (Event::DbFileParallelWrite, cfg.dataset.block_size),
        (Test::WriteMbps, _) => (Event::DirectPathWrite, cfg.multiblock_bytes()),
        (Test::Redo, _) => {
            let r = cfg.redo.per_commit;
            let mut c = ClassSpec::fixed(
                cfg.test.name(),
                Event::LogFileSync,
                r.lo,
                cfg.sessions,
                Submission::Sync,
            );
            if r.lo != r.hi {
                c.sizes = RequestSizes::Uniform { lo: r.lo, hi: r.hi };
            }
            c.think = cfg.redo.think;
            return Some(c);
        }
        _ => return None,
    };
    let mut c = ClassSpec::fixed(cfg.test.name(), event, size, cfg.sessions, cfg.submission);
    match event {
        Event::DbFileParallelRead | Event::DbFileParallelWrite => c.batch = Some(cfg.batch),
        Event::DirectPathRead | Event::DirectPathWrite => c.depth = Some(cfg.depth),
        _ => {}
    }
    Some(c)
}

/// The job file equivalent to a run typed on the command line (`--save-job`): the run's
/// classes where classes express it, else its test with every option that shapes it.
pub fn equivalent(cfg: &RunConfig) -> Result<String> {
    if cfg.job.is_some() {
        return Err(Error::usage(
            "--save-job with --job: the job file is already there",
        ));
    }
    let class = match cfg.classes.as_slice() {
        [] => classic_class(cfg),
        [one] => Some(one.clone()),
        _ => None,
    };
    let d = &cfg.dataset;
    let r = &cfg.redo;
    let mut o = String::new();
    o.push_str(&format!(
        "# Equivalent of `dbio run {}`\n\n",
        cfg.test.name()
    ));
    o.push_str(&format!(
        "[dataset]\ntarget = {:?}\nsize = \"{}\"\nblock_size = \"{}\"\nfiles = {}\nfill = \"{}\"\n\n",
        d.target.display().to_string(),
        units::size_label(d.size),
        units::size_label(d.block_size),
        d.files,
        d.fill.name()
    ));
    if !cfg.span.is_full() {
        // Before the blank line that ends [dataset].
        o.pop();
        o.push_str(&format!("span = \"{}\"\n\n", cfg.span.label()));
    }
    o.push_str(&format!(
        "[run]\nduration = \"{}\"\nwarmup = \"{}\"\nio_mode = \"{}\"\nengine = \"{}\"\nseed = {}\n",
        units::duration_label(cfg.duration),
        units::duration_label(cfg.warmup),
        cfg.io_mode.name(),
        format!("{:?}", cfg.engine).to_lowercase(),
        cfg.seed
    ));
    let test_form = class.is_none();
    if test_form {
        o.push_str(&format!(
            "test = \"{}\"\nsessions = {}\nsubmission = \"{}\"\nbatch = {}\ndepth = {}\nmbrc = {}\nkeep_inflight = {}\n",
            cfg.test.name(),
            cfg.sessions,
            cfg.submission.name(),
            cfg.batch,
            cfg.depth,
            cfg.mbrc,
            cfg.keep_inflight
        ));
    }
    o.push('\n');
    let redo = cfg.test.uses_redo();
    if redo {
        o.push_str("[redo]\n");
        if test_form {
            o.push_str(&format!("per_commit = \"{}\"\n", r.per_commit.label()));
            if let Some(t) = r.think {
                o.push_str(&format!("think = \"{}\"\n", t.label()));
            }
            o.push_str(&format!("writers = {}\n", r.writers));
        } else if r.submission == Submission::Sync {
            // The redo test's --sync: LGWR writes the pieces of a write one by one.
            o.push_str("submission = \"sync\"\n");
        }
        o.push_str(&format!(
            "block = \"{}\"\nfiles = {}\nfile_size = \"{}\"\nsync = \"{}\"\n",
            units::size_label(r.block),
            r.files,
            units::size_label(r.file_size),
            format!("{:?}", r.sync).to_lowercase()
        ));
        if let Some(c) = r.lgwr_cpu {
            o.push_str(&format!("lgwr_cpu = {c}\n"));
        }
        if let Some(c) = r.noise_cpu {
            o.push_str(&format!("noise_cpu = {c}\n"));
        }
        o.push('\n');
    }
    if test_form && cfg.test == Test::Oltp {
        let ol = &cfg.oltp;
        o.push_str(&format!(
            "[oltp]\nwork_unit = {}\nupdate_pct = {}\nhotspot_pct = {}\nasync_reads = {}\ncold_cache = {}\n",
            ol.work_unit, ol.update_pct, ol.hotspot_pct, ol.async_reads, !ol.warm_cache
        ));
        if ol.hotspot_size > 0 {
            o.push_str(&format!(
                "hotspot_size = \"{}\"\n",
                units::size_label(ol.hotspot_size)
            ));
        }
        if let Some(c) = ol.cache_size {
            o.push_str(&format!("cache_size = \"{}\"\n", units::size_label(c)));
        }
        o.push('\n');
    }
    if test_form && cfg.test == Test::Temp {
        o.push_str(&format!(
            "[temp]\nspill_size = \"{}\"\ntemp_io = \"{}\"\n\n",
            units::size_label(cfg.temp.spill_size),
            units::size_label(cfg.temp.temp_io)
        ));
    }
    if let Some(c) = class {
        o.push_str(&class_toml(&c));
    }
    Ok(o)
}

/// One `[[class]]` as a job file writes it.
fn class_toml(c: &ClassSpec) -> String {
    let mut o = format!(
        "[[class]]\nname = {:?}\nevent = \"{}\"\nsize = {}\nsessions = {}\nsubmission = \"{}\"\n",
        c.name,
        c.event.name(),
        c.sizes.toml(),
        c.sessions,
        c.submission.name()
    );
    if let Some(b) = c.batch {
        o.push_str(&format!("batch = {b}\n"));
    }
    if let Some(d) = c.depth {
        o.push_str(&format!("depth = {d}\n"));
    }
    if let Some(s) = c.spill {
        o.push_str(&format!("spill = \"{}\"\n", units::size_label(s)));
    }
    if let Some(t) = c.think {
        o.push_str(&format!("think = \"{}\"\n", t.label()));
    }
    if let Some(rate) = c.rate {
        o.push_str(&format!(
            "rate = {rate}\narrival = \"{}\"\n",
            if c.poisson { "poisson" } else { "fixed" }
        ));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[dataset]
size = "64M"
block_size = "16K"

[run]
duration = "2s"

[[class]]
name = "reads"
event = "db file sequential read"
size = "16K"
sessions = 2
rate = 100
arrival = "poisson"
[class.limits]
p99 = "10ms"
min_iops = 90

[[class]]
event = "direct path read"
size = "784K"
"#;

    #[test]
    fn a_job_file_reads_into_classes() {
        let j = parse(GOOD, "job.toml").unwrap();
        assert_eq!(j.size, Some(64 << 20));
        assert_eq!(j.block_size, Some(16 << 10));
        assert_eq!(j.duration, Some(Duration::from_secs(2)));
        assert_eq!(j.classes.len(), 2);
        let c = &j.classes[0];
        assert_eq!(
            (c.event, c.sizes, c.sessions, c.rate, c.poisson),
            (
                Event::DbFileSequentialRead,
                RequestSizes::Fixed(16 << 10),
                2,
                Some(100.0),
                true
            )
        );
        assert_eq!(c.submission, Submission::Sync);
        assert_eq!(c.limits.latency, vec![("p99", Duration::from_millis(10))]);
        assert_eq!(c.limits.min_iops, Some(90.0));
        assert_eq!(j.classes[1].submission, Submission::Async);
        assert_eq!(j.classes[1].name, "class 2 (direct path read)");
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key_and_line() {
        let e = parse(
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\nsesions = 2\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("sesions") && e.contains("line 4"), "{e}");
        let e = parse(
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8Q\"\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("class.size") && e.contains("line 3"), "{e}");
        let e = parse(
            "[[class]]\nevent = \"log file wait\"\nsize = \"8K\"\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("class.event") && e.contains("line 2") && e.contains("log file sync"),
            "{e}"
        );
        let e = parse(
            "[[class]]\nevent = \"free buffer waits\"\nsize = \"8K\"\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("wait for DBWR") && e.contains("oltp"), "{e}");
        let e = parse("[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\nsubmission = \"async\"\n", "j.toml").unwrap_err().to_string();
        assert!(e.contains("sync by definition"), "{e}");
        let e = parse("[run]\nduration = \"2s\"\n", "j.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no [[class]]"), "{e}");
        let e = parse(
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\nrate = -5\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("class.rate") && e.contains("line 4"), "{e}");
    }

    fn err(text: &str) -> String {
        parse(text, "j.toml").unwrap_err().to_string()
    }

    #[test]
    fn weighted_sizes_and_redo_ranges() {
        let j = parse(
            "[[class]]\nevent = \"direct path read\"\nsize = { \"1M\" = 80, \"256K\" = 20 }\n[[class]]\nevent = \"log file sync\"\nsize = \"512..3000\"\nsessions = 4\nrate = 500\n",
            "j.toml",
        )
        .unwrap();
        let scan = &j.classes[0].sizes;
        assert_eq!(scan.sizes(), vec![1 << 20, 256 << 10], "in the order given");
        assert_eq!(scan.label(), "1M 80% + 256K 20%");
        assert_eq!(
            j.classes[1].sizes,
            RequestSizes::Uniform { lo: 512, hi: 3000 }
        );
        assert_eq!(j.classes[1].submission, Submission::Sync);
        let e = err("[[class]]\nevent = \"direct path read\"\nsize = \"64K..1M\"\n");
        assert!(
            e.contains("class.size") && e.contains("line 3") && e.contains("redo"),
            "{e}"
        );
        let e = err("[[class]]\nevent = \"direct path read\"\nsize = { \"1M\" = 0 }\n");
        assert!(e.contains("class.size") && e.contains("above 0"), "{e}");
        let e = err("[[class]]\nevent = \"direct path read\"\nsize = 8192\n");
        assert!(e.contains("class.size") && e.contains("weighted"), "{e}");
        let e = err("[[class]]\nevent = \"direct path write temp\"\nsize = \"8K\"\n");
        assert!(e.contains("class.size") && e.contains("48K"), "{e}");
    }

    #[test]
    fn per_event_keys_are_checked() {
        let e =
            err("[[class]]\nevent = \"log file parallel write\"\nsize = \"16K\"\nsessions = 2\n");
        assert!(
            e.contains("class.sessions") && e.contains("sessions = 1"),
            "{e}"
        );
        let e = err(
            "[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\n[[class]]\nevent = \"log file parallel write\"\nsize = \"16K\"\n",
        );
        assert!(e.contains("one log writer"), "{e}");
        let e = err("[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\ndepth = 4\n");
        assert!(
            e.contains("class.depth") && e.contains("line 4") && e.contains("does not use"),
            "{e}"
        );
        let e = err("[[class]]\nevent = \"direct path read\"\nsize = \"1M\"\nspill = \"64M\"\n");
        assert!(e.contains("class.spill") && e.contains("temp"), "{e}");
        let e =
            err("[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\nsubmission = \"async\"\n");
        assert!(e.contains("sync by definition"), "{e}");
        let j = parse(
            "[[class]]\nevent = \"direct path read temp\"\nsize = \"256K\"\nspill = \"16M\"\n",
            "j.toml",
        )
        .unwrap();
        assert_eq!(j.classes[0].spill, Some(16 << 20));
    }

    #[test]
    fn a_test_with_its_options() {
        let j = parse(
            "[run]\ntest = \"oltp\"\nsessions = 4\nsubmission = \"sync\"\n[redo]\nper_commit = \"512..8K\"\nblock = \"4K\"\n[oltp]\nupdate_pct = 50\nasync_reads = true\ncache_size = \"64M\"\n",
            "j.toml",
        )
        .unwrap();
        assert_eq!(j.test, Some(Test::Oltp));
        let mut args = RunArgs::defaults(Test::ReadIops);
        for o in &j.options {
            o.apply(&mut args);
        }
        assert_eq!(args.sessions, 4);
        assert!(args.sync);
        assert_eq!(
            args.redo.redo_per_commit,
            units::SizeRange { lo: 512, hi: 8192 }
        );
        assert_eq!(args.redo.redo_block, 4096);
        assert_eq!(args.oltp.update_pct, 50);
        assert!(args.oltp.async_reads);
        assert_eq!(args.oltp.cache_size, Some(64 << 20));
        // Values are checked by the command line's own parsers, named by key and line.
        let e = err("[run]\ntest = \"redo\"\n[redo]\nblock = \"1K\"\n");
        assert!(
            e.contains("redo.block") && e.contains("line 4") && e.contains("512 or 4K"),
            "{e}"
        );
        let e = err("[run]\ntest = \"oltp\"\n[oltp]\nupdate_pct = 101\n");
        assert!(e.contains("oltp.update_pct") && e.contains("line 4"), "{e}");
        let e = err("[run]\ntest = \"oltp\"\n[oltp]\nupdate = 10\n");
        assert!(e.contains("update") && e.contains("line 4"), "{e}");
        let e = err("[run]\ntest = \"sort\"\n");
        assert!(e.contains("run.test") && e.contains("oltp"), "{e}");
        // Options of a test do not go with classes, nor a test with classes.
        let e = err(
            "[oltp]\nupdate_pct = 10\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
        );
        assert!(
            e.contains("oltp.update_pct") && e.contains("run.test"),
            "{e}"
        );
        let e = err(
            "[run]\ntest = \"redo\"\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
        );
        assert!(e.contains("exclude each other"), "{e}");
        let e = err(
            "[run]\nsubmission = \"sync\"\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
        );
        assert!(e.contains("run.submission"), "{e}");
        // Redo log options do go with classes.
        let j = parse(
            "[redo]\nblock = \"4K\"\nfile_size = \"64M\"\n[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\n",
            "j.toml",
        )
        .unwrap();
        assert_eq!(j.options.len(), 2);
    }

    #[test]
    fn every_option_a_job_file_may_set_parses() {
        let j = parse(
            r#"
[dataset]
fill = "compress=2"
span = "50%"
[run]
test = "oltp"
sessions = 3
batch = 8
depth = 4
mbrc = 16
keep_inflight = true
[redo]
per_commit = "1K..4K"
think = "1ms"
block = "4K"
files = 4
file_size = "64M"
sync = "fdatasync"
lgwr_cpu = 0
noise_cpu = 0
writers = 2
[oltp]
work_unit = 8
update_pct = 10
hotspot_pct = 50
hotspot_size = "16M"
async_reads = true
cache_size = "32M"
cold_cache = true
[temp]
spill_size = "16M"
temp_io = "128K"
"#,
            "j.toml",
        )
        .unwrap();
        assert_eq!(j.options.len(), RUN_OPTIONS.len());
        let mut a = RunArgs::defaults(Test::ReadIops);
        for o in &j.options {
            o.apply(&mut a);
        }
        assert_eq!((a.sessions, a.batch, a.depth, a.mbrc), (3, 8, 4, Some(16)));
        assert_eq!(a.span, crate::workload::span::Span::parse("0.5").unwrap());
        assert!(a.keep_inflight && a.oltp.async_reads && a.oltp.cold_cache);
        assert_eq!(a.redo.redo_file_size, 64 << 20);
        assert_eq!(a.redo.redo_sync, crate::config::RedoSync::Fdatasync);
        assert_eq!(
            (a.redo.lgwr_cpu, a.redo.noise_cpu, a.redo.writers),
            (Some(0), Some(0), 2)
        );
        assert_eq!((a.oltp.work_unit, a.oltp.hotspot_pct), (8, 50));
        assert_eq!(a.oltp.hotspot_size, Some(16 << 20));
        assert_eq!((a.temp.spill_size, a.temp.temp_io), (16 << 20, 128 << 10));
        assert_eq!(a.dataset.fill.name(), "compress=2");
    }
}
