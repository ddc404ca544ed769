//! The validated description of a run. `cli.rs` holds what was typed; this holds what the
//! run will do, with every cross-option rule checked once, before any work starts.

use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum;
use serde::Serialize;

use crate::cli::{DataSetArgs, RunArgs};
use crate::engine::EngineChoice;
use crate::error::{Error, Result};
use crate::units::{DurationRange, SizeRange};
use crate::workload::Test;

/// The database's `filesystemio_options` (SPEC §2): open flags and whether asynchronous
/// submission is allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// O_DSYNC, synchronous calls.
    None,
    /// O_DIRECT + O_DSYNC, synchronous calls.
    Directio,
    /// O_DSYNC (buffered), asynchronous submission.
    Asynch,
    /// O_DIRECT + O_DSYNC, asynchronous submission.
    Setall,
}

impl IoMode {
    pub fn name(self) -> &'static str {
        match self {
            IoMode::None => "none",
            IoMode::Directio => "directio",
            IoMode::Asynch => "asynch",
            IoMode::Setall => "setall",
        }
    }
    /// Data files are opened with O_DIRECT.
    pub fn direct(self) -> bool {
        matches!(self, IoMode::Directio | IoMode::Setall)
    }
    /// Asynchronous submission is allowed.
    pub fn asynchronous(self) -> bool {
        matches!(self, IoMode::Asynch | IoMode::Setall)
    }
}

/// How a test asks for its I/O: the `--sync`/`--async` choice. It picks the events
/// (SPEC §4); whether the calls really are asynchronous also depends on io mode and engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Submission {
    Sync,
    Async,
}

impl Submission {
    pub fn name(self) -> &'static str {
        match self {
            Submission::Sync => "sync",
            Submission::Async => "async",
        }
    }
}

/// How LGWR makes redo durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RedoSync {
    /// Redo files opened O_DSYNC: each write is durable when it returns.
    Dsync,
    /// Plain writes followed by fdatasync.
    Fdatasync,
}

/// Redo, commits and the log writer (tests redo and oltp).
#[derive(Debug, Clone)]
pub struct RedoOptions {
    pub per_commit: SizeRange,
    pub think: Option<DurationRange>,
    pub block: u64,
    pub files: u32,
    pub file_size: u64,
    pub sync: RedoSync,
    pub lgwr_cpu: Option<usize>,
    pub noise_cpu: Option<usize>,
    pub writers: usize,
    /// How LGWR submits the pieces of a write over 1 MiB: together (async) or one after
    /// another (sync). Synchronous io modes always write them one after another.
    pub submission: Submission,
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

/// What the data set should look like.
#[derive(Debug, Clone)]
pub struct DataSetSpec {
    pub target: PathBuf,
    pub size: u64,
    pub block_size: u64,
    pub files: u32,
    pub fresh: bool,
    /// What new data files are filled with (`--fill`).
    pub fill: crate::dataset::fill::Content,
    /// `--size` as typed (for a file or device target: how much of it to use).
    pub size_given: Option<u64>,
    /// `--verify`: blocks carry verify headers, reads check them.
    pub verify: bool,
}

/// The data set size without `--size`.
pub const DEFAULT_SIZE: u64 = 1 << 30;

impl DataSetSpec {
    pub fn from_args(a: &DataSetArgs) -> Result<DataSetSpec> {
        // Each file holds whole 1 MiB units (or whole blocks when blocks are larger), so that
        // multiblock requests never straddle a file's end.
        let unit = a.block_size.max(1 << 20);
        let size = a.size.unwrap_or(DEFAULT_SIZE);
        let per_file = size / u64::from(a.files) / unit * unit;
        if per_file == 0 {
            return Err(Error::usage(format!(
                "--size {} is too small for --files {}: each file needs at least {}; use a larger --size or fewer --files",
                crate::units::size_label(size),
                a.files,
                crate::units::size_label(unit)
            )));
        }
        if a.verify && matches!(a.fill, crate::dataset::fill::Content::Dedupe(_)) {
            return Err(Error::usage(
                "--verify puts a unique header in every block, so blocks cannot dedupe: use --fill random, zero or compress=RATIO with --verify",
            ));
        }
        Ok(DataSetSpec {
            target: a.target.clone(),
            size: per_file * u64::from(a.files),
            block_size: a.block_size,
            files: a.files,
            fresh: a.fresh,
            fill: a.fill,
            size_given: a.size,
            verify: a.verify,
        })
    }

    /// Bytes in each data file.
    pub fn file_size(&self) -> u64 {
        self.size / u64::from(self.files)
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
    pub classes: Vec<crate::job::ClassSpec>,
    /// The job file as JSON, embedded in result.json.
    pub job: Option<serde_json::Value>,
    /// `--save-job FILE`.
    pub save_job: Option<PathBuf>,
    /// `--span`: requests fall in this first part of each data file.
    pub span: crate::workload::span::Span,
    /// Where the span was given (for errors found with the data set).
    pub span_origin: crate::workload::span::SpanOrigin,
}

/// Fills the options the user did not type from the job file.
fn apply_job(a: &RunArgs, j: &crate::job::Job) -> Result<RunArgs> {
    let free = |id: &str| !a.typed.iter().any(|t| t == id);
    if j.test.is_none() && !free("sessions") {
        return Err(Error::usage(
            "--sessions with --job: each class of the job file has its own `sessions`",
        ));
    }
    if j.test.is_none()
        && let Some(flag) = crate::job::ignored_beside_classes(&a.typed)
    {
        return Err(Error::usage(format!(
            "{flag} with --job: the job's classes set this themselves (or it shapes a test, which a job names with run.test), so it would be ignored"
        )));
    }
    if j.test.is_none() && (!free("sync") || !free("async_")) {
        return Err(Error::usage(
            "--sync/--async with --job: each class of the job file has its own `submission` (and [redo] submission says how LGWR writes the pieces of a commit's write)",
        ));
    }
    /// Sets `slot` to the job file's value, if it has one and the option was not typed.
    fn fill<T: Clone>(slot: &mut T, value: Option<T>, typed: bool) {
        if let Some(v) = value.filter(|_| !typed) {
            *slot = v;
        }
    }
    let mut m = a.clone();
    fill(
        &mut m.dataset.target,
        j.target.as_ref().map(PathBuf::from),
        !free("target"),
    );
    fill(&mut m.dataset.size, j.size.map(Some), !free("size"));
    fill(&mut m.dataset.block_size, j.block_size, !free("block_size"));
    fill(&mut m.dataset.files, j.files, !free("files"));
    fill(&mut m.duration, j.duration, !free("duration"));
    fill(&mut m.warmup, j.warmup, !free("warmup"));
    fill(&mut m.io_mode, j.io_mode, !free("io_mode"));
    fill(&mut m.engine, j.engine, !free("engine"));
    fill(&mut m.dataset.seed, j.seed.map(Some), !free("seed"));
    for o in &j.options {
        // --sync and --async are one choice: either typed keeps the job file's off.
        let typed = !free(o.id) || (o.id == "sync" && !free("async_"));
        if !typed {
            o.apply(&mut m);
        }
    }
    if j.test.is_none() {
        m.sessions = j
            .classes
            .iter()
            .map(|c| c.sessions as u32)
            .sum::<u32>()
            .max(1);
    }
    Ok(m)
}

/// Checks each class against the data set and the redo logs: request sizes that fit,
/// multiblock requests (and mixes of sizes) in whole blocks, spills that hold a request.
fn check_classes(
    classes: &mut [crate::job::ClassSpec],
    d: &DataSetSpec,
    redo: &RedoOptions,
    temp: &TempOptions,
) -> Result<()> {
    use crate::units::size_label;
    use crate::workload::Event;
    for c in classes {
        if crate::job::is_temp(c.event) {
            let spill = c.spill.unwrap_or(temp.spill_size);
            let io = c.sizes.max();
            if spill < io {
                return Err(c.bad_value(
                    "spill",
                    format!(
                        "the spill ({}, temp.spill_size or the class's `spill`) is smaller than one request ({})",
                        size_label(spill),
                        size_label(io)
                    ),
                ));
            }
            // Whole requests of the largest size, as the temp test does.
            c.spill = Some(spill / io * io);
            continue;
        }
        if c.event == Event::LogFileParallelWrite {
            let most = c.sizes.max().div_ceil(redo.block) * redo.block;
            if most > redo.file_size {
                return Err(c.bad_value(
                    "size",
                    format!(
                        "a redo write of {} does not fit in a redo log file of {} (redo.file_size)",
                        size_label(most),
                        size_label(redo.file_size)
                    ),
                ));
            }
            continue;
        }
        if c.event == Event::LogFileSync {
            continue;
        }
        let multiblock = matches!(
            c.event,
            Event::DbFileScatteredRead | Event::DirectPathRead | Event::DirectPathWrite
        );
        for size in c.sizes.sizes() {
            if size < 512 || size % 512 != 0 || size > d.file_size() {
                return Err(c.bad_value(
                    "size",
                    format!(
                        "size {} must be a multiple of 512, at most 64M and no larger than a data file ({})",
                        size_label(size),
                        size_label(d.file_size())
                    ),
                ));
            }
            if (multiblock || !c.sizes.is_fixed()) && size % d.block_size != 0 {
                let why = if multiblock {
                    format!("\"{}\" reads or writes whole blocks", c.event.name())
                } else {
                    "weighted sizes are whole blocks".to_string()
                };
                return Err(c.bad_value(
                    "size",
                    format!(
                        "{why}: size {} is not a multiple of the block size {}",
                        size_label(size),
                        size_label(d.block_size)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a rate so low that a class's sessions would not all get one request into the
/// measured window: nothing would be measured (and the schedule's arithmetic would run
/// out of range). Says the least rate that works.
fn check_rates(cfg: &RunConfig) -> Result<()> {
    let window = cfg.duration.as_secs_f64();
    for c in &cfg.classes {
        let Some(rate) = c.rate else { continue };
        let least = c.sessions.max(1) as f64 / window;
        if rate >= least {
            continue;
        }
        let why = format!(
            "{rate}/s gives its {} session(s) fewer than one request each in the measured window of {}; the least rate is {least:.4}/s (or a longer --duration, or fewer sessions)",
            c.sessions,
            crate::units::duration_label(cfg.duration)
        );
        return Err(if cfg.job.is_some() {
            c.bad_value("rate", why)
        } else {
            Error::usage(format!("invalid value '{rate}' for '--rate': {why}"))
        });
    }
    Ok(())
}

impl RunConfig {
    pub fn from_args(a: &RunArgs) -> Result<RunConfig> {
        // The test engine's stall, checked before anything is created.
        crate::engine::fault::Stall::from_env().map_err(Error::usage)?;
        let job = a.job.as_deref().map(crate::job::load).transpose()?;
        let merged;
        let a = match &job {
            Some(j) => {
                merged = apply_job(a, j)?;
                &merged
            }
            None => a,
        };
        let test = match (a.test, &job) {
            (_, Some(j)) => j.test.unwrap_or(Test::Job),
            (Some(t), None) => t,
            (None, None) => {
                return Err(Error::usage(
                    "dbio run: name a test (read-iops, ...) or give --job FILE",
                ));
            }
        };
        let dataset = DataSetSpec::from_args(&a.dataset)?;
        let bs = dataset.block_size;
        let mbrc = match a.mbrc {
            Some(m) => m as usize,
            None => ((1u64 << 20) / bs).max(1) as usize,
        };
        let multiblock = mbrc as u64 * bs;
        if multiblock > 64 << 20 {
            return Err(Error::usage(format!(
                "invalid value '{mbrc}' for '--mbrc': {mbrc} blocks of {} make a {} request; at most 64M is accepted",
                crate::units::size_label(bs),
                crate::units::size_label(multiblock)
            )));
        }
        if multiblock > dataset.file_size() {
            return Err(Error::usage(format!(
                "--mbrc {mbrc}: a multiblock request of {} does not fit in a data file of {}; use a smaller --mbrc or a larger --size",
                crate::units::size_label(multiblock),
                crate::units::size_label(dataset.file_size())
            )));
        }
        if a.duration.is_zero() {
            return Err(Error::usage(
                "invalid value '0s' for '--duration': the measured window must be longer than 0, e.g. 60s",
            ));
        }
        let redo = RedoOptions {
            per_commit: a.redo.redo_per_commit,
            think: a.redo.think,
            block: a.redo.redo_block,
            files: a.redo.redo_files,
            file_size: a.redo.redo_file_size,
            sync: a.redo.redo_sync,
            lgwr_cpu: a.redo.lgwr_cpu,
            noise_cpu: a.redo.noise_cpu,
            writers: a.redo.writers as usize,
            submission: a.redo.lgwr_submission.unwrap_or(if a.sync {
                Submission::Sync
            } else {
                Submission::Async
            }),
        };
        if redo.per_commit.lo == 0 {
            return Err(Error::usage(
                "invalid value for '--redo-per-commit': redo per commit must be at least 1 byte, e.g. 2K or 512..8K",
            ));
        }
        if redo.per_commit.hi > 64 << 20 {
            return Err(Error::usage(
                "invalid value for '--redo-per-commit': at most 64M of redo per commit",
            ));
        }
        if redo.file_size < 4 << 20 || !redo.file_size.is_multiple_of(redo.block) {
            return Err(Error::usage(format!(
                "invalid value '{}' for '--redo-file-size': at least 4M and a multiple of the redo block ({})",
                crate::units::size_label(redo.file_size),
                crate::units::size_label(redo.block)
            )));
        }
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        for (opt, cpu) in [
            ("--lgwr-cpu", redo.lgwr_cpu),
            ("--noise-cpu", redo.noise_cpu),
        ] {
            if let Some(c) = cpu
                && c >= cpus
            {
                return Err(Error::usage(format!(
                    "invalid value '{c}' for '{opt}': this machine has CPUs 0..{}",
                    cpus - 1
                )));
            }
        }
        let oltp = OltpOptions {
            work_unit: a.oltp.work_unit as usize,
            update_pct: a.oltp.update_pct,
            hotspot_pct: a.oltp.hotspot_pct,
            hotspot_size: a.oltp.hotspot_size.unwrap_or(0),
            async_reads: a.oltp.async_reads,
            cache_size: a.oltp.cache_size,
            warm_cache: !a.oltp.cold_cache,
        };
        if oltp.hotspot_pct > 0 && oltp.hotspot_size < bs {
            return Err(Error::usage(
                "--hotspot-pct needs --hotspot-size (the size of the hot spot, e.g. 64M)",
            ));
        }
        if oltp.hotspot_size > dataset.size {
            return Err(Error::usage(format!(
                "--hotspot-size {} is larger than the data set ({})",
                crate::units::size_label(oltp.hotspot_size),
                crate::units::size_label(dataset.size)
            )));
        }
        if let Some(c) = oltp.cache_size
            && (c < 16 * bs || c / bs > u32::MAX as u64 / 2)
        {
            return Err(Error::usage(format!(
                "invalid value '{}' for '--cache-size': at least 16 blocks ({}) and at most 2^31 blocks",
                crate::units::size_label(c),
                crate::units::size_label(16 * bs)
            )));
        }
        if let Some(c) = oltp.cache_size
            && test == Test::Oltp
        {
            // Sessions pin their work unit's buffers; the rest must leave room to replace.
            let sessions = a.sessions as u64;
            let pinned = 2 * sessions * oltp.work_unit as u64;
            let active = a.span.of(dataset.file_size(), bs) * u64::from(dataset.files);
            let buffers = (c / bs).min(active / bs);
            if buffers < pinned {
                return Err(Error::usage(format!(
                    "--cache-size {} holds {buffers} blocks; {sessions} sessions with --work-unit {} pin up to {} at once, so the cache needs at least {pinned} blocks ({}); use a larger --cache-size or fewer --sessions",
                    crate::units::size_label(c),
                    oltp.work_unit,
                    sessions * oltp.work_unit as u64,
                    crate::units::size_label(pinned * bs)
                )));
            }
        }
        let temp = TempOptions {
            spill_size: a.temp.spill_size,
            temp_io: a.temp.temp_io,
        };
        if temp.spill_size < temp.temp_io {
            return Err(Error::usage(format!(
                "--spill-size {} is smaller than one --temp-io request ({})",
                crate::units::size_label(temp.spill_size),
                crate::units::size_label(temp.temp_io)
            )));
        }
        let span_origin = match job.as_ref().and_then(|j| j.span_at.clone()) {
            Some(at) if !a.typed.iter().any(|t| t == "span") => crate::workload::span::SpanOrigin {
                at,
                key: "dataset.span",
            },
            _ => Default::default(),
        };
        let mut classes = job.as_ref().map(|j| j.classes.clone()).unwrap_or_default();
        check_classes(&mut classes, &dataset, &redo, &temp)?;
        if let Some(most) = classes
            .iter()
            .filter(|c| c.event == crate::workload::Event::LogFileSync)
            .map(|c| c.sizes.max())
            .max()
            && most > 64 << 20
        {
            return Err(Error::usage(format!(
                "a \"log file sync\" class's redo per commit ({}) is above 64M",
                crate::units::size_label(most)
            )));
        }
        let mut cfg = RunConfig {
            test,
            dataset,
            sessions: a.sessions as usize,
            duration: a.duration,
            warmup: a.warmup,
            submission: if a.sync {
                Submission::Sync
            } else {
                Submission::Async
            },
            io_mode: a.io_mode,
            engine: a.engine,
            batch: a.batch as usize,
            keep_inflight: a.keep_inflight,
            depth: a.depth as usize,
            mbrc,
            out: a.out.clone(),
            json: a.json,
            quiet: a.quiet,
            seed: a.dataset.seed.unwrap_or_else(rand_seed),
            ash_hz: a.ash_hz,
            destructive: a.destructive,
            yes: a.yes,
            continue_on_error: a.continue_on_error,
            redo,
            oltp,
            temp,
            classes,
            job: job.map(|j| j.json),
            save_job: a.save_job.clone(),
            span: a.span,
            span_origin,
        };
        if let Some(why) = crate::engine::conflicts(cfg.engine, cfg.dataset.verify) {
            return Err(Error::usage(why));
        }
        if cfg.dataset.verify && cfg.test == Test::Job && cfg.writes_data() {
            let reader = cfg
                .classes
                .iter()
                .find(|c| c.event.reads() && !crate::job::is_temp(c.event));
            let writer = cfg.classes.iter().find(|c| {
                matches!(
                    c.event,
                    crate::workload::Event::DbFileParallelWrite
                        | crate::workload::Event::DirectPathWrite
                )
            });
            if let (Some(r), Some(w)) = (reader, writer) {
                return Err(Error::usage(format!(
                    "--verify: class '{}' reads data blocks while class '{}' writes them, and a read that races a write cannot be told from a lost write; verify the writes and the reads in separate jobs (the data set keeps its write sequences between runs)",
                    r.name, w.name
                )));
            }
        }
        if let Some(rate) = a.rate {
            if cfg.job.is_some() {
                return Err(Error::usage(
                    "--rate with --job: set `rate` per class in the job file",
                ));
            }
            if cfg.keep_inflight {
                return Err(Error::usage(
                    "--rate with --keep-inflight: an open loop issues on a schedule, not at a constant queue depth; leave out one of them",
                ));
            }
            // A classic test at a rate is its one class, run open loop.
            let Some(mut class) = crate::job::classic_class(&cfg) else {
                return Err(Error::usage(format!(
                    "--rate: the {} test's sessions do not issue one kind of request on a schedule; --rate takes read-iops, read-mbps, write-iops, write-mbps and redo (commits per second)",
                    cfg.test.name()
                )));
            };
            // As in a job file's class: the schedule sets when requests start.
            if class.think.is_some() {
                return Err(Error::usage(
                    "--think with --rate: at a rate each commit starts on its schedule; think is for runs without a rate (closed loop)",
                ));
            }
            if a.typed.iter().any(|t| t == "depth") {
                return Err(Error::usage(
                    "--depth with --rate: at a rate each arrival is one request and --sessions sets how many can be in flight; leave out one of them",
                ));
            }
            class.depth = None;
            class.rate = Some(rate);
            class.poisson = a.arrival == crate::cli::Arrival::Poisson;
            cfg.classes = vec![class];
        }
        check_rates(&cfg)?;
        // Against the planned data set now; against the files themselves when planning.
        crate::workload::span::check(&cfg, cfg.dataset.file_size())?;
        Ok(cfg)
    }

    /// The events of the run's classes (job files, --rate); empty for a classic test.
    fn class_events(&self) -> impl Iterator<Item = crate::workload::Event> + '_ {
        self.classes.iter().map(|c| c.event)
    }

    /// Whether the run reads or writes the data files.
    pub fn uses_data_files(&self) -> bool {
        if self.classes.is_empty() {
            return self.test.uses_data_files();
        }
        self.class_events().any(|e| {
            !crate::job::is_temp(e)
                && !matches!(
                    e,
                    crate::workload::Event::LogFileSync
                        | crate::workload::Event::LogFileParallelWrite
                )
        })
    }

    /// Whether the run writes redo log files.
    pub fn uses_redo(&self) -> bool {
        if self.classes.is_empty() {
            return self.test.uses_redo();
        }
        self.class_events().any(|e| {
            matches!(
                e,
                crate::workload::Event::LogFileSync | crate::workload::Event::LogFileParallelWrite
            )
        })
    }

    /// Whether the run spills to temp files.
    pub fn uses_temp(&self) -> bool {
        if self.classes.is_empty() {
            return self.test == Test::Temp;
        }
        self.class_events().any(crate::job::is_temp)
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
            return crate::verify::writes_data(self.test);
        }
        self.class_events().any(|e| {
            matches!(
                e,
                crate::workload::Event::DbFileParallelWrite
                    | crate::workload::Event::DirectPathWrite
            )
        })
    }

    /// Bytes per multiblock request (MBRC × block size).
    pub fn multiblock_bytes(&self) -> u64 {
        self.mbrc as u64 * self.dataset.block_size
    }
}

/// A seed for runs that did not ask for one; recorded in the result so runs can be repeated.
pub fn rand_seed() -> u64 {
    let t = crate::sys::now_ns();
    t ^ (u64::from(std::process::id()) << 32) ^ fastrand::u64(..)
}
