//! Every option of a run, defined once (issue 13).
//!
//! [`OPTIONS`] is the table: for each option its flag, its job-file key, the parser of its
//! value, its default, its help, the tests it applies to and whether a job of classes uses
//! it. The one definition serves:
//! - the command line ([`cli`]: clap arguments built from the table, so help, completions and
//!   the man page never drift from what is parsed);
//! - job files ([`job`]: `[dataset]`, `[run]`, `[redo]`, `[oltp]`, `[temp]` keys);
//! - `--save-job` ([`save`]: the values written back as a job file) — and remote agents,
//!   which receive a run as a job file;
//! - sweeps (a swept value is set like a typed one).
//!
//! Every value remembers where it came from ([`Source`]: default, job file, typed, swept):
//! typed and swept values win over a job file's, and errors found later name the option as
//! the user wrote it. Validation happens in two stages, as ripgrep's `LowArgs`/`HiArgs`:
//! [`check`] decides what the input alone decides (ranges, combinations) and builds the
//! [`RunConfig`]; [`environment`] checks what needs the machine (the target, the engine,
//! system limits, `--out`) before anything is created.

pub mod check;
pub mod cli;
pub mod environment;
pub mod job;
pub mod save;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::dataset::fill::Content;
use crate::engine::{EngineChoice, IoMode};
use crate::units::{self, DurationRange, SizeRange};
use crate::workload::span::Span;
use crate::workload::spec::RedoDurability;
use crate::workload::{Arrival, Test};

pub use crate::workload::spec::RunConfig;

/// Where an option's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Source {
    #[default]
    Default,
    /// A job file, at `FILE (line N)`.
    Job(String),
    /// Typed on the command line.
    Typed,
    /// Set by a sweep for one point (counts as typed).
    Swept,
}

impl Source {
    /// Typed on the command line or swept: it wins over a job file.
    pub fn is_typed(&self) -> bool {
        matches!(self, Source::Typed | Source::Swept)
    }
}

/// The values of every run option, each with where it came from. Built from the defaults,
/// then a job file, then what was typed (or swept).
#[derive(Debug, Clone)]
pub struct RunArgs {
    /// The test (positional), unless `--job` names a job file.
    pub test: Option<Test>,
    pub job: Option<PathBuf>,
    pub save_job: Option<PathBuf>,
    pub target: PathBuf,
    pub size: Option<u64>,
    pub block_size: u64,
    pub files: u32,
    pub fresh: bool,
    pub fill: Content,
    pub seed: Option<u64>,
    pub verify: bool,
    pub span: Span,
    pub sessions: u32,
    pub duration: Duration,
    pub warmup: Duration,
    /// `--sync` (else asynchronous, the default).
    pub sync: bool,
    pub io_mode: IoMode,
    pub engine: EngineChoice,
    pub batch: u32,
    pub keep_inflight: bool,
    pub rate: Option<f64>,
    pub arrival: Arrival,
    pub depth: u32,
    pub mbrc: Option<u32>,
    pub ash_hz: u32,
    pub redo_per_commit: SizeRange,
    pub think: Option<DurationRange>,
    pub redo_block: u64,
    pub redo_files: u32,
    pub redo_file_size: u64,
    pub redo_sync: RedoDurability,
    pub lgwr_cpu: Option<usize>,
    pub noise_cpu: Option<usize>,
    /// How LGWR writes the pieces of one write beside "log file sync" classes (a job
    /// file's `[redo] submission`); on the command line the redo test's `--sync` says it.
    pub lgwr_submission: Option<crate::engine::Submission>,
    pub writers: u32,
    pub work_unit: u32,
    pub update_pct: u32,
    pub hotspot_pct: u32,
    pub hotspot_size: Option<u64>,
    pub async_reads: bool,
    pub cache_size: Option<u64>,
    pub cold_cache: bool,
    pub spill_size: u64,
    pub temp_io: u64,
    pub out: PathBuf,
    pub json: bool,
    pub quiet: bool,
    pub destructive: bool,
    pub yes: bool,
    pub continue_on_error: bool,
    /// `--hosts`: the ssh destinations of a cluster run, as typed (empty: this host alone).
    pub hosts: Vec<String>,
    /// `--ssh`: the command (and its options) that reaches a host.
    pub ssh: String,
    /// `--remote-dbio`: the dbio binary on the hosts.
    pub remote_dbio: String,
    /// `--push`: copy this binary to each host for the run.
    pub push: bool,
    /// `--shared`: one data set on storage every host sees.
    pub shared: bool,
    /// Where each value that is not a default came from, by option name.
    pub sources: BTreeMap<&'static str, Source>,
}

impl RunArgs {
    /// Every option at its default (`test` as given).
    pub fn defaults(test: Option<Test>) -> RunArgs {
        let mut a = RunArgs {
            test,
            job: None,
            save_job: None,
            target: PathBuf::new(),
            size: None,
            block_size: 0,
            files: 0,
            fresh: false,
            fill: Content::Random,
            seed: None,
            verify: false,
            span: Span::FULL,
            sessions: 0,
            duration: Duration::ZERO,
            warmup: Duration::ZERO,
            sync: false,
            io_mode: IoMode::Setall,
            engine: EngineChoice::Auto,
            batch: 0,
            keep_inflight: false,
            rate: None,
            arrival: Arrival::Fixed,
            depth: 0,
            mbrc: None,
            ash_hz: 0,
            redo_per_commit: SizeRange::fixed(0),
            think: None,
            redo_block: 0,
            redo_files: 0,
            redo_file_size: 0,
            redo_sync: RedoDurability::Dsync,
            lgwr_cpu: None,
            noise_cpu: None,
            lgwr_submission: None,
            writers: 0,
            work_unit: 0,
            update_pct: 0,
            hotspot_pct: 0,
            hotspot_size: None,
            async_reads: false,
            cache_size: None,
            cold_cache: false,
            spill_size: 0,
            temp_io: 0,
            out: PathBuf::new(),
            json: false,
            quiet: false,
            destructive: false,
            yes: false,
            continue_on_error: false,
            hosts: Vec::new(),
            ssh: String::new(),
            remote_dbio: String::new(),
            push: false,
            shared: false,
            sources: BTreeMap::new(),
        };
        // The defaults are the table's, through the same parsers as any value.
        for o in OPTIONS {
            if let Some(d) = o.default {
                (o.set)(&mut a, d).expect("every default parses");
            }
        }
        a
    }

    /// Where option `name`'s value came from.
    pub fn source(&self, name: &str) -> Source {
        self.sources.get(name).cloned().unwrap_or_default()
    }

    /// Whether option `name` was typed (or swept): it wins over a job file.
    pub fn typed(&self, name: &str) -> bool {
        self.source(name).is_typed()
    }

    /// Sets option `name` from `text` as coming from `source`. The error is the parser's.
    pub fn set(&mut self, name: &str, text: &str, source: Source) -> Result<(), String> {
        let o = find(name).expect("a known option");
        (o.set)(self, text)?;
        self.sources.insert(o.name, source);
        Ok(())
    }

    /// The data set's options (and where they came from) from `other`: a command made of
    /// runs (calibrate, matrix) gives its points the data set it was given.
    pub fn take_data_set(&mut self, other: &RunArgs) {
        for o in OPTIONS.iter().filter(|o| o.group == Group::DataSet) {
            if let Some(text) = (o.get)(other) {
                (o.set)(self, &text).expect("a value written back parses");
            } else if o.is_switch() {
                (o.set)(self, "false").expect("a switch parses");
            }
            match other.sources.get(o.name) {
                Some(s) => self.sources.insert(o.name, s.clone()),
                None => self.sources.remove(o.name),
            };
        }
        self.size = other.size;
        self.seed = other.seed;
    }

    /// The options typed (or swept), as `--flag`s, in table order.
    pub fn typed_flags(&self) -> impl Iterator<Item = &'static Opt> + '_ {
        OPTIONS.iter().filter(|o| self.typed(o.name))
    }
}

/// Which part of the help an option is listed under.
pub mod heading {
    pub const DATA_SET: &str = "Data set";
    pub const TEST: &str = "Test";
    pub const REDO: &str = "Redo and commits (redo, oltp)";
    pub const OLTP: &str = "OLTP mix (oltp)";
    pub const TEMP: &str = "Temp spills (temp)";
    pub const OUTPUT: &str = "Output";
    pub const SAFETY: &str = "Safety";
    pub const CLUSTER: &str = "Cluster (one run across many hosts over OpenSSH)";
}

/// Which subcommands take an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    /// The data set's options: `run`, `sweep`, `prepare`, `calibrate`, `matrix`.
    DataSet,
    /// The options of one run: `run`, `sweep`.
    Run,
    /// A run across many hosts: `run`, `calibrate`.
    Cluster,
}

/// The tests an option applies to.
#[derive(Debug, Clone, Copy)]
pub enum Applies {
    /// Every test.
    All,
    /// Only these tests.
    Tests(&'static [Test]),
}

impl Applies {
    pub fn to(self, test: Test) -> bool {
        match self {
            Applies::All => true,
            Applies::Tests(t) => t.contains(&test),
        }
    }
}

/// One option: everything about it in one place.
#[derive(Debug)]
pub struct Opt {
    /// The long flag without `--`; also its name in [`RunArgs::sources`].
    pub name: &'static str,
    pub short: Option<char>,
    /// `table.key` in job files; None when a job file cannot set it.
    pub key: Option<&'static str>,
    /// What the value is called in help (`SIZE`); None for a switch.
    pub value: Option<&'static str>,
    /// The default, as typed.
    pub default: Option<&'static str>,
    /// What `--help` says; empty for a job-file key that has no flag (`run.submission`: on
    /// the command line `--sync`/`--async` say it).
    pub help: &'static str,
    pub heading: &'static str,
    pub group: Group,
    /// The classic tests it shapes.
    pub applies: Applies,
    /// A job of classes uses it too (otherwise each class sets it, or only a test has it).
    pub with_classes: bool,
    /// Options it cannot be given with (by name).
    pub conflicts: &'static [&'static str],
    /// An option it needs (by name).
    pub requires: Option<&'static str>,
    /// Parses `text` into the arguments (a switch gets "true" or "false").
    pub set: fn(&mut RunArgs, &str) -> Result<(), String>,
    /// The value as typed, for a job file (`--save-job`, agents); None when unset.
    pub get: fn(&RunArgs) -> Option<String>,
}

impl Opt {
    /// `--name`.
    pub fn flag(&self) -> String {
        format!("--{}", self.name)
    }

    pub fn is_switch(&self) -> bool {
        self.value.is_none()
    }
}

/// The option called `name`.
pub fn find(name: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// The option a job file sets with `key`.
pub fn by_key(key: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.key == Some(key))
}

fn switch(text: &str) -> Result<bool, String> {
    match text {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("'{text}': true or false")),
    }
}

/// A whole number in `lo..=hi`.
fn count(text: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("'{text}' is not a whole number from {lo} to {hi}")),
    }
}

/// A size above 0.
pub fn positive_size(text: &str) -> Result<u64, String> {
    match units::parse_size(text)? {
        0 => Err("must be larger than 0".into()),
        v => Ok(v),
    }
}

/// A database block size: a power of two from 512 to 1M.
pub fn block_size(text: &str) -> Result<u64, String> {
    let v = units::parse_size(text)?;
    if !v.is_power_of_two() || !(512..=1 << 20).contains(&v) {
        return Err("must be a power of two from 512 to 1M, e.g. 8K".into());
    }
    Ok(v)
}

/// A temp request size: 48K to 4M, in 512-byte units.
pub fn temp_io(text: &str) -> Result<u64, String> {
    let v = units::parse_size(text)?;
    if !(48 << 10..=4 << 20).contains(&v) || v % 512 != 0 {
        return Err("must be from 48K to 4M, a multiple of 512, e.g. 240K".into());
    }
    Ok(v)
}

/// Requests per second, open loop.
pub fn rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && v <= 10_000_000.0 => Ok(v),
        _ => Err("requests per second, above 0 and at most 10,000,000, e.g. 2000".into()),
    }
}

/// One of `names` (case-insensitive); the error lists them.
fn one_of<T: Copy>(text: &str, names: &[(&str, T)]) -> Result<T, String> {
    names
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(text.trim()))
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let all: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
            format!("'{text}'; accepted: {}", all.join(", "))
        })
}

/// `--hosts h1,h2,...`: ssh destinations, each at most once.
pub fn hosts(text: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for h in text.split(',').map(str::trim) {
        if h.is_empty() {
            return Err(
                "a comma-separated list of ssh destinations, e.g. db1,db2 (no empty names)".into(),
            );
        }
        if h.starts_with('-') || h.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "'{h}' is not an ssh destination (no leading '-', spaces or control characters)"
            ));
        }
        if out.iter().any(|o| o == h) {
            return Err(format!("'{h}' is given twice"));
        }
        out.push(h.to_string());
    }
    if out.len() > 1024 {
        return Err("at most 1024 hosts".into());
    }
    Ok(out)
}

fn size_text(v: u64) -> String {
    units::size_label(v)
}

const DATA_TESTS: &[Test] = &[
    Test::ReadIops,
    Test::ReadMbps,
    Test::WriteIops,
    Test::WriteMbps,
    Test::Oltp,
];
const REDO_TESTS: &[Test] = &[Test::Redo, Test::Oltp];

/// Every run option, in help order.
pub static OPTIONS: &[Opt] = &[
    // ---- the data set
    Opt {
        name: "target",
        short: None,
        key: Some("dataset.target"),
        value: Some("PATH"),
        default: Some("./dbio-data"),
        help: "Directory holding the data set (created if its parent exists). Read tests also accept an existing file or block device, which is only read.",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.target = PathBuf::from(t);
            Ok(())
        },
        get: |a| Some(a.target.display().to_string()),
    },
    Opt {
        name: "size",
        short: None,
        key: Some("dataset.size"),
        value: Some("SIZE"),
        default: None,
        help: "Total data set size (K, M, G, T are binary) [default: 1G; for an existing file or block device as --target: all of it, or the first SIZE bytes].",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.size = Some(positive_size(t)?);
            Ok(())
        },
        get: |a| a.size.map(size_text),
    },
    Opt {
        name: "block-size",
        short: None,
        key: Some("dataset.block_size"),
        value: Some("SIZE"),
        default: Some("8K"),
        help: "Database block size: a power of two from 512 to 1M.",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.block_size = block_size(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.block_size)),
    },
    Opt {
        name: "files",
        short: None,
        key: Some("dataset.files"),
        value: Some("N"),
        default: Some("4"),
        help: "Number of data files the data set is spread over (1 to 4096).",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.files = count(t, 1, 4096)? as u32;
            Ok(())
        },
        get: |a| Some(a.files.to_string()),
    },
    Opt {
        name: "fill",
        short: None,
        key: Some("dataset.fill"),
        value: Some("random|zero|compress=RATIO|dedupe=RATIO"),
        default: Some("random"),
        help: "What the data files hold: random (incompressible), zero, compress=RATIO (e.g. compress=2: compresses about 2:1) or dedupe=RATIO (e.g. dedupe=4: 1 in 4 blocks unique).",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.fill = Content::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.fill.name()),
    },
    Opt {
        name: "span",
        short: None,
        key: Some("dataset.span"),
        value: Some("FRACTION"),
        default: Some("100%"),
        help: "The active surface: every request falls in the first FRACTION of each data file or device, as on a drive filled to that level (e.g. 33% or 0.33).",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::Tests(DATA_TESTS),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.span = Span::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.span.label()),
    },
    Opt {
        name: "fresh",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Replace the data set, even if it matches (needed when it does not match the run: another size, block size, fill or --verify).",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.fresh = switch(t)?;
            Ok(())
        },
        get: |a| a.fresh.then(|| "true".into()),
    },
    Opt {
        name: "seed",
        short: None,
        key: Some("run.seed"),
        value: Some("N"),
        default: None,
        help: "Seed for the random block choices and the data fill [default: random; recorded in the result].",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.seed = Some(
                t.trim()
                    .parse()
                    .map_err(|_| format!("'{t}' is not a whole number from 0 to 2^64-1"))?,
            );
            Ok(())
        },
        get: |a| a.seed.map(|s| s.to_string()),
    },
    Opt {
        name: "verify",
        short: None,
        key: Some("dataset.verify"),
        value: None,
        default: None,
        help: "Every block written carries a header (data set, file, block, write sequence, checksum) and every block read is checked: torn, misdirected and lost writes are failed requests naming file and block. Check a data set later with `dbio verify`.",
        heading: heading::DATA_SET,
        group: Group::DataSet,
        applies: Applies::Tests(DATA_TESTS),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.verify = switch(t)?;
            Ok(())
        },
        get: |a| a.verify.then(|| "true".into()),
    },
    // ---- the test
    Opt {
        name: "sessions",
        short: None,
        key: Some("run.sessions"),
        value: Some("N"),
        default: Some("8"),
        help: "Concurrent sessions (database foreground processes; writers for write-iops), 1 to 65536 and what the machine allows.",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.sessions = count(t, 1, 65536)? as u32;
            Ok(())
        },
        get: |a| Some(a.sessions.to_string()),
    },
    Opt {
        name: "duration",
        short: None,
        key: Some("run.duration"),
        value: Some("DURATION"),
        default: Some("60s"),
        help: "Measured window, e.g. 60s, 1.5s, 1m30s.",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            let d = units::parse_duration(t)?;
            if d.is_zero() {
                return Err("the measured window must be longer than 0, e.g. 60s".into());
            }
            a.duration = d;
            Ok(())
        },
        get: |a| Some(units::duration_label(a.duration)),
    },
    Opt {
        name: "warmup",
        short: None,
        key: Some("run.warmup"),
        value: Some("DURATION"),
        default: Some("5s"),
        help: "Unmeasured warm-up before the measured window.",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.warmup = units::parse_duration(t)?;
            Ok(())
        },
        get: |a| Some(units::duration_label(a.warmup)),
    },
    Opt {
        name: "sync",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Synchronous submission: the sync events (\"db file sequential read\", ...).",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: false,
        conflicts: &["async"],
        requires: None,
        set: |a, t| {
            a.sync = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "async",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Asynchronous submission (the default): the async events (\"db file parallel read\", ...).",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: false,
        conflicts: &["sync"],
        requires: None,
        set: |a, t| {
            a.sync = !switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "submission",
        short: None,
        key: Some("run.submission"),
        value: Some("sync|async"),
        default: None,
        help: "",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.sync = one_of(t, &[("sync", true), ("async", false)])?;
            Ok(())
        },
        get: |a| Some(if a.sync { "sync" } else { "async" }.into()),
    },
    Opt {
        name: "io-mode",
        short: None,
        key: Some("run.io_mode"),
        value: Some("MODE"),
        default: Some("setall"),
        help: "Open flags and submission, like the database's filesystemio_options: none (O_DSYNC, sync calls), directio (+O_DIRECT), asynch (O_DSYNC, async), setall (O_DIRECT+O_DSYNC, async).",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.io_mode = IoMode::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.io_mode.name().into()),
    },
    Opt {
        name: "engine",
        short: None,
        key: Some("run.engine"),
        value: Some("ENGINE"),
        default: Some("auto"),
        help: "How asynchronous I/O is submitted: auto (io_uring, else Linux AIO, else sync), uring, aio (Linux native AIO, what Oracle uses), sync; null issues no I/O at all (a measuring aid for dbio's own cost per request, never the default).",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.engine = EngineChoice::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.engine.name().into()),
    },
    Opt {
        name: "batch",
        short: None,
        key: Some("run.batch"),
        value: Some("N"),
        default: Some("32"),
        help: "Blocks per \"db file parallel read\"/\"db file parallel write\" batch (1 to 4096).",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::Tests(&[Test::ReadIops, Test::WriteIops, Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.batch = count(t, 1, 4096)? as u32;
            Ok(())
        },
        get: |a| Some(a.batch.to_string()),
    },
    Opt {
        name: "keep-inflight",
        short: None,
        key: Some("run.keep_inflight"),
        value: None,
        default: None,
        help: "Async read-iops/write-iops: keep --batch random blocks in flight continuously (a storage benchmark's constant queue depth) instead of the database's submit-all, wait-for-all batches.",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::Tests(&[Test::ReadIops, Test::WriteIops]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.keep_inflight = switch(t)?;
            Ok(())
        },
        get: |a| Some(a.keep_inflight.to_string()),
    },
    Opt {
        name: "depth",
        short: None,
        key: Some("run.depth"),
        value: Some("N"),
        default: Some("8"),
        help: "Requests in flight per session for \"direct path read\"/\"direct path write\" and temp (1 to 4096).",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::Tests(&[Test::ReadMbps, Test::WriteMbps, Test::Temp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.depth = count(t, 1, 4096)? as u32;
            Ok(())
        },
        get: |a| Some(a.depth.to_string()),
    },
    Opt {
        name: "mbrc",
        short: None,
        key: Some("run.mbrc"),
        value: Some("N"),
        default: None,
        help: "Multiblock read count: blocks per multiblock request, 1 to 1024 [default: 1 MiB / block size].",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::Tests(&[Test::ReadMbps, Test::WriteMbps]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.mbrc = Some(count(t, 1, 1024)? as u32);
            Ok(())
        },
        get: |a| a.mbrc.map(|m| m.to_string()),
    },
    Opt {
        name: "rate",
        short: None,
        key: None,
        value: Some("REQUESTS_PER_S"),
        default: None,
        help: "Open loop: issue this many requests per second over all sessions, on a schedule, whatever the storage does; latency then runs from each request's scheduled time (classic tests; job files set `rate` per class).",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::Tests(&[
            Test::ReadIops,
            Test::ReadMbps,
            Test::WriteIops,
            Test::WriteMbps,
            Test::Redo,
        ]),
        with_classes: false,
        conflicts: &["keep-inflight"],
        requires: None,
        set: |a, t| {
            a.rate = Some(rate(t)?);
            Ok(())
        },
        get: |a| a.rate.map(|r| r.to_string()),
    },
    Opt {
        name: "arrival",
        short: None,
        key: None,
        value: Some("fixed|poisson"),
        default: Some("fixed"),
        help: "Arrivals of --rate: at fixed intervals, or as a Poisson process.",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: false,
        conflicts: &[],
        requires: Some("rate"),
        set: |a, t| {
            a.arrival = one_of(
                t,
                &[("fixed", Arrival::Fixed), ("poisson", Arrival::Poisson)],
            )?;
            Ok(())
        },
        get: |a| Some(a.arrival.name().into()),
    },
    Opt {
        name: "ash-hz",
        short: None,
        key: Some("run.ash_hz"),
        value: Some("N"),
        default: Some("10"),
        help: "Active Session History samples per second (1 to 1000).",
        heading: heading::TEST,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.ash_hz = count(t, 1, 1000)? as u32;
            Ok(())
        },
        get: |a| Some(a.ash_hz.to_string()),
    },
    // ---- redo and commits
    Opt {
        name: "redo-per-commit",
        short: None,
        key: Some("redo.per_commit"),
        value: Some("SIZE|LO..HI"),
        default: Some("2K"),
        help: "Redo generated per commit: a size, or a range drawn uniformly (512..8K), up to 64M.",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(REDO_TESTS),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            let r = units::parse_size_range(t)?;
            if r.lo == 0 {
                return Err("redo per commit must be at least 1 byte, e.g. 2K or 512..8K".into());
            }
            if r.hi > 64 << 20 {
                return Err("at most 64M of redo per commit".into());
            }
            a.redo_per_commit = r;
            Ok(())
        },
        get: |a| Some(a.redo_per_commit.label()),
    },
    Opt {
        name: "think",
        short: None,
        key: Some("redo.think"),
        value: Some("DURATION|LO..HI"),
        default: None,
        help: "Think time before each commit (redo) or transaction (oltp): a duration or a range (1ms..5ms).",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(REDO_TESTS),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.think = Some(units::parse_duration_range(t)?);
            Ok(())
        },
        get: |a| a.think.map(|t| t.label()),
    },
    Opt {
        name: "redo-block",
        short: None,
        key: Some("redo.block"),
        value: Some("512|4K"),
        default: Some("512"),
        help: "Redo block size: LGWR writes whole redo blocks (512 or 4K).",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(REDO_TESTS),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.redo_block = match units::parse_size(t)? {
                v @ (512 | 4096) => v,
                _ => return Err("must be 512 or 4K".into()),
            };
            Ok(())
        },
        get: |a| Some(size_text(a.redo_block)),
    },
    Opt {
        name: "redo-files",
        short: None,
        key: Some("redo.files"),
        value: Some("N"),
        default: Some("3"),
        help: "Redo log files, written in turn (a log switch when one is full), 2 to 64.",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(REDO_TESTS),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.redo_files = count(t, 2, 64)? as u32;
            Ok(())
        },
        get: |a| Some(a.redo_files.to_string()),
    },
    Opt {
        name: "redo-file-size",
        short: None,
        key: Some("redo.file_size"),
        value: Some("SIZE"),
        default: Some("256M"),
        help: "Size of each redo log file (at least 4M, whole redo blocks).",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(REDO_TESTS),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.redo_file_size = positive_size(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.redo_file_size)),
    },
    Opt {
        name: "redo-sync",
        short: None,
        key: Some("redo.sync"),
        value: Some("dsync|fdatasync"),
        default: Some("dsync"),
        help: "How LGWR makes redo durable: O_DSYNC writes, or plain writes then fdatasync.",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(REDO_TESTS),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.redo_sync = one_of(
                t,
                &[
                    ("dsync", RedoDurability::Dsync),
                    ("fdatasync", RedoDurability::Fdatasync),
                ],
            )?;
            Ok(())
        },
        get: |a| Some(a.redo_sync.name().into()),
    },
    Opt {
        name: "lgwr-cpu",
        short: None,
        key: Some("redo.lgwr_cpu"),
        value: Some("CPU"),
        default: None,
        help: "Pin the log writer to this CPU.",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(REDO_TESTS),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.lgwr_cpu = Some(count(t, 0, 1 << 20)? as usize);
            Ok(())
        },
        get: |a| a.lgwr_cpu.map(|c| c.to_string()),
    },
    Opt {
        name: "noise-cpu",
        short: None,
        key: Some("redo.noise_cpu"),
        value: Some("CPU"),
        default: None,
        help: "Run a noise thread on this CPU: ~3 ms of computation, 1 ms of sleep, repeated.",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.noise_cpu = Some(count(t, 0, 1 << 20)? as usize);
            Ok(())
        },
        get: |a| a.noise_cpu.map(|c| c.to_string()),
    },
    Opt {
        name: "lgwr-submission",
        short: None,
        key: Some("redo.submission"),
        value: Some("sync|async"),
        default: None,
        help: "",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Redo]),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.lgwr_submission = Some(one_of(
                t,
                &[
                    ("sync", crate::engine::Submission::Sync),
                    ("async", crate::engine::Submission::Async),
                ],
            )?);
            Ok(())
        },
        get: |a| a.lgwr_submission.map(|s| s.name().into()),
    },
    Opt {
        name: "writers",
        short: None,
        key: Some("redo.writers"),
        value: Some("N"),
        default: Some("1"),
        help: "Database writer (DBWR) threads (oltp), 1 to 64.",
        heading: heading::REDO,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.writers = count(t, 1, 64)? as u32;
            Ok(())
        },
        get: |a| Some(a.writers.to_string()),
    },
    // ---- the OLTP mix
    Opt {
        name: "work-unit",
        short: None,
        key: Some("oltp.work_unit"),
        value: Some("N"),
        default: Some("16"),
        help: "Blocks each transaction reads (1 to 1024).",
        heading: heading::OLTP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.work_unit = count(t, 1, 1024)? as u32;
            Ok(())
        },
        get: |a| Some(a.work_unit.to_string()),
    },
    Opt {
        name: "update-pct",
        short: None,
        key: Some("oltp.update_pct"),
        value: Some("PCT"),
        default: Some("25"),
        help: "Percentage of transactions that update their blocks and commit.",
        heading: heading::OLTP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.update_pct = count(t, 0, 100)? as u32;
            Ok(())
        },
        get: |a| Some(a.update_pct.to_string()),
    },
    Opt {
        name: "hotspot-pct",
        short: None,
        key: Some("oltp.hotspot_pct"),
        value: Some("PCT"),
        default: Some("0"),
        help: "Percentage of block accesses that go to the hot spot.",
        heading: heading::OLTP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.hotspot_pct = count(t, 0, 100)? as u32;
            Ok(())
        },
        get: |a| Some(a.hotspot_pct.to_string()),
    },
    Opt {
        name: "hotspot-size",
        short: None,
        key: Some("oltp.hotspot_size"),
        value: Some("SIZE"),
        default: None,
        help: "Size of the hot spot (the first bytes of the data set).",
        heading: heading::OLTP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.hotspot_size = Some(positive_size(t)?);
            Ok(())
        },
        get: |a| a.hotspot_size.map(size_text),
    },
    Opt {
        name: "async-reads",
        short: None,
        key: Some("oltp.async_reads"),
        value: None,
        default: None,
        help: "Read each transaction's blocks as one batch (\"db file parallel read\").",
        heading: heading::OLTP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.async_reads = switch(t)?;
            Ok(())
        },
        get: |a| Some(a.async_reads.to_string()),
    },
    Opt {
        name: "cache-size",
        short: None,
        key: Some("oltp.cache_size"),
        value: Some("SIZE"),
        default: None,
        help: "Buffer cache size (CLOCK, shared by all sessions) [default: none: every read is physical].",
        heading: heading::OLTP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.cache_size = Some(positive_size(t)?);
            Ok(())
        },
        get: |a| a.cache_size.map(size_text),
    },
    Opt {
        name: "cold-cache",
        short: None,
        key: Some("oltp.cold_cache"),
        value: None,
        default: None,
        help: "Do not load the buffer cache before the run starts (it warms up during the run).",
        heading: heading::OLTP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Oltp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.cold_cache = switch(t)?;
            Ok(())
        },
        get: |a| Some(a.cold_cache.to_string()),
    },
    // ---- temp
    Opt {
        name: "spill-size",
        short: None,
        key: Some("temp.spill_size"),
        value: Some("SIZE"),
        default: Some("64M"),
        help: "Spill written and read back by each session, per round.",
        heading: heading::TEMP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Temp]),
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.spill_size = positive_size(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.spill_size)),
    },
    Opt {
        name: "temp-io",
        short: None,
        key: Some("temp.temp_io"),
        value: Some("SIZE"),
        default: Some("240K"),
        help: "Temp I/O request size, 48K to 4M.",
        heading: heading::TEMP,
        group: Group::Run,
        applies: Applies::Tests(&[Test::Temp]),
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.temp_io = temp_io(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.temp_io)),
    },
    // ---- output
    Opt {
        name: "out",
        short: None,
        key: None,
        value: Some("DIR"),
        default: Some("./dbio-runs"),
        help: "Directory the run directory is created in.",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.out = PathBuf::from(t);
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "json",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Print result.json to stdout instead of the summary.",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.json = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "quiet",
        short: Some('q'),
        key: None,
        value: None,
        default: None,
        help: "No live progress line (it is only drawn when stdout and stderr are terminals).",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.quiet = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    // ---- safety
    Opt {
        name: "destructive",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Allow write-iops/write-mbps on a block device as --target, overwriting it. Refused anyway when it is mounted, in use, or holds any signature libblkid or dbio knows (file system, partition table, LVM, RAID, ASM, ...).",
        heading: heading::SAFETY,
        group: Group::Run,
        applies: Applies::All,
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.destructive = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "yes",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "With --destructive: do not ask for confirmation on the terminal. With --job: allow the job file's [hosts] table to start programs (ssh, and dbio on the hosts); each command is printed before it runs.",
        heading: heading::SAFETY,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.yes = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "continue-on-error",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Keep going after an I/O error, counting errors per event (default: stop at the first, keep the partial result, exit 4).",
        heading: heading::SAFETY,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.continue_on_error = switch(t)?;
            Ok(())
        },
        get: |_| None,
    }, // ---- a run across many hosts
    Opt {
        name: "hosts",
        short: None,
        key: Some("hosts.names"),
        value: Some("H1,H2,..."),
        default: None,
        help: "Run on these hosts at once, each an ssh destination as ssh takes it (user@host, an ~/.ssh/config alias): one synchronized run, histograms merged, a row per host. `{host}` in --target is each host's name.",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.hosts = hosts(t)?;
            Ok(())
        },
        get: |a| (!a.hosts.is_empty()).then(|| a.hosts.join(",")),
    },
    Opt {
        name: "ssh",
        short: None,
        key: Some("hosts.ssh"),
        value: Some("CMD"),
        default: Some("ssh"),
        help: "The command that reaches a host, with its options (e.g. \"ssh -F ./cluster.conf\"); dbio adds -o BatchMode=yes (never a password prompt) and -o ConnectTimeout=10 unless given.",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            if shlex::split(t).is_none_or(|w| w.is_empty()) {
                return Err("a command, e.g. \"ssh\" or \"ssh -F FILE\" (quotes balanced)".into());
            }
            a.ssh = t.to_string();
            Ok(())
        },
        get: |a| Some(a.ssh.clone()),
    },
    Opt {
        name: "remote-dbio",
        short: None,
        key: Some("hosts.remote_dbio"),
        value: Some("PATH"),
        default: Some("dbio"),
        help: "The dbio binary on the hosts (default: dbio on the remote PATH); its version must be this one's.",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &["push"],
        requires: None,
        set: |a, t| {
            if t.is_empty() || t.bytes().any(|b| b.is_ascii_control()) {
                return Err("a path without control characters, e.g. /usr/local/bin/dbio".into());
            }
            a.remote_dbio = t.to_string();
            Ok(())
        },
        get: |a| Some(a.remote_dbio.clone()),
    },
    Opt {
        name: "push",
        short: None,
        key: Some("hosts.push"),
        value: None,
        default: None,
        help: "Copy this dbio binary to a private temporary directory on each host and run it from there; it is removed as soon as it has started.",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.push = switch(t)?;
            Ok(())
        },
        get: |a| a.push.then(|| "true".into()),
    },
    Opt {
        name: "shared",
        short: None,
        key: Some("hosts.shared"),
        value: None,
        default: None,
        help: "One data set on storage every host sees (cluster file system, NFS, a shared device): prepared once by the first host, then read by all (tests that only read).",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.shared = switch(t)?;
            Ok(())
        },
        get: |a| a.shared.then(|| "true".into()),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_set_defaults_are_the_tables() {
        // The data set layer names them in hints (`dbio prepare ...`), without the table.
        let a = RunArgs::defaults(None);
        assert_eq!(a.block_size, crate::dataset::DEFAULT_BLOCK_SIZE);
        assert_eq!(a.files as usize, crate::dataset::DEFAULT_FILES);
        assert_eq!(a.size, None);
    }

    #[test]
    fn every_option_is_defined_once_and_its_default_parses() {
        let mut names = std::collections::HashSet::new();
        let mut keys = std::collections::HashSet::new();
        for o in OPTIONS {
            assert!(names.insert(o.name), "{} twice", o.name);
            if let Some(k) = o.key {
                assert!(keys.insert(k), "{k} twice");
            }
            if let Some(d) = o.default {
                let mut a = RunArgs::defaults(None);
                (o.set)(&mut a, d).unwrap_or_else(|e| panic!("{}: {e}", o.name));
            }
            if let Some(r) = o.requires {
                assert!(find(r).is_some(), "{} requires an unknown option", o.name);
            }
            assert!(
                o.key.is_some() || !o.help.is_empty(),
                "{}: neither a flag nor a key",
                o.name
            );
        }
    }

    #[test]
    fn a_value_written_back_parses_to_the_same_value() {
        let a = RunArgs::defaults(Some(Test::ReadIops));
        for o in OPTIONS {
            if let Some(text) = (o.get)(&a) {
                let mut b = RunArgs::defaults(Some(Test::ReadIops));
                (o.set)(&mut b, &text).unwrap_or_else(|e| panic!("{}: {e}", o.name));
                assert_eq!((o.get)(&b), Some(text), "{}", o.name);
            }
        }
    }
}
