//! Running one test: data set → engine → instance → threads → measured window → result.
//!
//! Phases: prepare (unmeasured) → all threads set up and start together → warm-up
//! (unmeasured) → measured window → stop. The main thread does the timing and samples the
//! counters once a second; sessions and background threads only issue I/O and record it.
//!
//! - `mod.rs` (here): the data set, files, engine choice and the instance a run needs;
//! - [`window`]: the main thread: starts the threads, keeps time through warm-up and the
//!   measured window, draws the progress line;
//! - [`threads`]: the harness every thread of the run shares (start gate, one life);
//! - [`roles`]: what each thread does (sessions, LGWR, DBWR, redo writers, noise);
//! - [`assemble`]: the [`RunResult`] made of what was measured.

pub mod assemble;
pub mod memory;
pub mod requester;
mod roles;
mod steady;
mod threads;
pub mod window;

use crate::units::Shown;
use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::dataset::{self, DataSet, FillOptions, OpenFlags, Prepare, TargetKind};
use crate::engine::Selection;
use crate::error::{Error, ExitCode, Result};
use crate::progress::{self, Progress};
use crate::report::{self, RunResult};
use crate::safety::limits::SpaceNeeds;
use crate::sys::{self, DioAlignment};
use crate::units::{duration_label, size_label};
use crate::workload::cache::{BufferCache, DirtyQueue};
use crate::workload::redo::RedoLog;
use crate::workload::spec::{RedoDurability, RunConfig};
use crate::workload::{self, Instance, Test, Workload};

/// What a finished run produced.
pub struct RunOutcome {
    pub result: RunResult,
    pub run_dir: PathBuf,
    pub summary: String,
    pub exit: ExitCode,
    /// The run directory could not be written (a full `--out`, ...): what was measured is
    /// still here, to be recorded in the store and printed, and the run exits 4.
    pub write_error: Option<Error>,
    /// Every event's totals with its histograms, in the order of `result.events`: what a
    /// caller merging several runs adds up (histograms, never percentiles).
    pub totals: Vec<crate::measure::EventTotals>,
}

/// What a caller of [`run`] hears of, and decides, while the run goes: generic moments of
/// any run (a run across many hosts is made of them; nothing here knows of hosts).
#[derive(Default)]
pub struct RunHooks {
    /// Called once the data set is ready and every thread is set up, before any request:
    /// blocks until the run may start and returns the instant (`sys::now_ns`) its warm-up
    /// begins, or None for "do not start" (the run ends as interrupted, measuring nothing).
    #[allow(clippy::type_complexity)]
    pub wait_for_start: Option<Box<dyn Fn() -> Option<u64> + Send + Sync>>,
    /// The warm-up began, at this instant.
    #[allow(clippy::type_complexity)]
    pub on_start: Option<Box<dyn Fn(u64) + Send + Sync>>,
    /// Second `t` of the measured window closed: every event's figures and histogram of
    /// that second (the last second of a run may be short).
    #[allow(clippy::type_complexity)]
    pub on_second: Option<Box<dyn Fn(u32, &[crate::measure::Interval]) + Send + Sync>>,
    /// Write no run directory: the caller keeps the result (`--out` is not this run's).
    pub no_run_dir: bool,
    /// The run directory was made, here (before anything is measured).
    #[allow(clippy::type_complexity)]
    pub on_run_dir: Option<Box<dyn Fn(&std::path::Path) + Send + Sync>>,
    /// The run's events, in the order of the slots `on_second` gives their figures in.
    #[allow(clippy::type_complexity)]
    pub on_events: Option<Box<dyn Fn(&[&'static str]) + Send + Sync>>,
}

impl std::fmt::Debug for RunHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunHooks")
            .field("wait_for_start", &self.wait_for_start.is_some())
            .field("on_start", &self.on_start.is_some())
            .field("on_second", &self.on_second.is_some())
            .field("no_run_dir", &self.no_run_dir)
            .field("on_run_dir", &self.on_run_dir.is_some())
            .field("on_events", &self.on_events.is_some())
            .finish()
    }
}

/// A region of a data set: the data files `i` with `i % of == index`. Runs given the
/// `of` regions of one data set write disjoint files, and so may hold it together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub index: usize,
    pub of: usize,
}

/// Opens (or creates) the data set a run needs: data files for tests that read or write
/// them, redo logs for redo and oltp. `space`: what else the run will write (temp files,
/// its run directory), checked with the data set's before anything is created.
pub fn open_data_set(cfg: &RunConfig, stop: &AtomicBool, space: SpaceNeeds) -> Result<DataSet> {
    open_data_set_in(cfg, stop, space, None)
}

/// Prepares the data set as a run of `cfg` would find it, then lets it go: made or
/// checked, and, for a run that writes data blocks without `--verify`, its verify headers
/// given up — so that runs of its regions ([`Preflight::region`]) find it ready and
/// change nothing.
pub fn prepare_data_set(cfg: &RunConfig, stop: &AtomicBool, space: SpaceNeeds) -> Result<()> {
    let mut ds = open_data_set(cfg, stop, space)?;
    check_verify(cfg, &mut ds)
}

/// [`open_data_set`], or with `region` the data set's region only: a data set directory
/// prepared before, held shared beside the runs of its other regions, of which this run
/// opens (and writes) only its own data files.
fn open_data_set_in(
    cfg: &RunConfig,
    stop: &AtomicBool,
    space: SpaceNeeds,
    region: Option<Region>,
) -> Result<DataSet> {
    let target = &cfg.dataset.target;
    let kind = dataset::target_kind(target).map_err(|e| e.named("--target"))?;
    if region.is_some() && matches!(kind, Some(TargetKind::File | TargetKind::BlockDevice)) {
        return Err(Error::usage(format!(
            "--target {}: a region of a data set is a share of its data files, and this is one file or device; give a data set directory",
            target.shown()
        )));
    }
    match kind {
        Some(TargetKind::BlockDevice) if matches!(cfg.test, Test::WriteIops | Test::WriteMbps) => {
            space.check().map_err(Error::usage)?;
            // Checked (mounted, holders, O_EXCL, signatures), then --destructive, then asked.
            let consent = crate::safety::device::Consent {
                destructive: cfg.destructive,
                yes: cfg.yes,
                option: "--target",
            };
            let claim = crate::safety::device::claim(target, cfg.test.name(), consent)?;
            let info = claim.info.clone();
            let ds = dataset::claimed_device(target, claim, &cfg.dataset)?;
            crate::safety::device::confirm(&info, cfg.test.name(), cfg.yes)?;
            Ok(ds)
        }
        Some(kind @ (TargetKind::File | TargetKind::BlockDevice)) => {
            space.check().map_err(Error::usage)?;
            dataset::existing_target(target, kind, &cfg.dataset)
        }
        _ => {
            let written = AtomicU64::new(0);
            let fill = FillOptions {
                seed: cfg.seed,
                buffered: false,
                written: &written,
                stop,
            };
            let prepare = Prepare {
                target,
                data: cfg.uses_data_files().then_some(&cfg.dataset),
                redo: cfg
                    .uses_redo()
                    .then_some((cfg.redo.files, cfg.redo.file_size)),
                fresh: cfg.dataset.fresh,
                writes: cfg.writes(),
                region_writer: region.is_some() && cfg.writes(),
                space,
                fill: &fill,
            };
            let total = prepare.data.map_or(0, |d| d.size)
                + prepare.redo.map_or(0, |(n, size)| u64::from(n) * size);
            progress::follow_bytes(
                progress::wanted(cfg.progress, cfg.quiet),
                total,
                "preparing the data set",
                &written,
                || dataset::prepare(&prepare),
            )
        }
    }
}

/// The files a run's threads use, open.
pub(crate) struct RunFiles {
    pub data: Vec<File>,
    pub redo: Vec<File>,
    pub temp: Vec<File>,
    pub data_flags: OpenFlags,
    pub redo_flags: Option<OpenFlags>,
}

impl RunFiles {
    fn fds(files: &[File]) -> Vec<RawFd> {
        files.iter().map(|f| f.as_raw_fd()).collect()
    }
}

/// What the environment check ([`crate::options::environment`]) found, which a run needs:
/// it can only be made there, so a run never starts unchecked.
#[derive(Debug, Clone)]
pub struct Preflight {
    /// The size the run works on, for the run directory's name.
    pub(crate) size_bytes: u64,
    /// The engine, chosen and checked.
    pub(crate) selection: Selection,
    /// Space the run needs besides the data set (temp spills, its run directory), checked
    /// with the data set's before anything is created.
    pub(crate) space: SpaceNeeds,
    /// The directory the run directory goes into, held open by a command made of runs
    /// (sweep, matrix, calibrate), so a point's results go below it, never through a path
    /// someone could swap; None: `--out`, opened by its path.
    pub out: Option<std::sync::Arc<crate::safety::fs::Dir>>,
    /// What the caller hears of while the run goes (nothing by default).
    pub hooks: Arc<RunHooks>,
    /// Use only this region of the data set's files, beside runs of its other regions
    /// (None: all of it). A run that writes then holds the data set shared with them and
    /// changes nothing in it but its own files' blocks: it must have been prepared before
    /// ([`prepare_data_set`]).
    pub region: Option<Region>,
}

/// The name of a run's directory after its UTC start: `<test>_<sync|async|mixed>_` then, for a
/// run across hosts, `<N>hosts_`, then `<N>sessions_<size>_<duration>`. A run on one host and
/// one across hosts are named alike.
pub fn run_dir_name(cfg: &RunConfig, hosts: Option<usize>, size_bytes: u64) -> String {
    dir_name(
        cfg.test.name(),
        cfg.submission_label(),
        hosts,
        cfg.sessions,
        size_bytes,
        cfg.duration,
    )
}

/// [`run_dir_name`] of any run: `<test>_<submission>_[<N>hosts_]<N>sessions_<size>_<duration>`
/// (a test through a database names its test `pg-read-iops`, ...).
pub fn dir_name(
    test: &str,
    submission: &str,
    hosts: Option<usize>,
    sessions: usize,
    size_bytes: u64,
    duration: std::time::Duration,
) -> String {
    let hosts = hosts.map_or(String::new(), |n| format!("{n}hosts_"));
    format!(
        "{test}_{submission}_{hosts}{sessions}sessions_{}_{}",
        size_label(size_bytes),
        duration_label(duration)
    )
}

/// The exit status of a run, the worst thing first: an I/O error (a failed request or thread,
/// a lost host) 4, interrupted 130, a failed verdict 3, else 0. One ladder for a run on one
/// host and one across hosts.
pub fn exit_code(io_error: bool, interrupted: bool, result: &RunResult) -> ExitCode {
    if io_error {
        ExitCode::IoError
    } else if interrupted {
        ExitCode::Interrupted
    } else if result.verdict.as_ref().is_some_and(|v| !v.pass) {
        ExitCode::VerdictFailed
    } else {
        ExitCode::Ok
    }
}

/// Runs `cfg` to the end (or until `stop`), writes the run directory, returns the outcome.
///
/// Everything was checked before (`pre`): the options, the machine, `--out`. The run
/// directory is made first and proved writable (a file created, written and removed in
/// it), so that no preparation or measurement happens for results that could not be kept.
/// Then the data set is opened (or made), only after its own checks and the free space for
/// everything the run writes. `on_data_set` hears of the data set as soon as it is ready
/// (the results store's registry of data sets), so a run killed later still leaves it known.
/// A run that fails before writing its results removes its run directory again, and the
/// `--out` directories it made.
pub fn run(
    cfg: &RunConfig,
    pre: &Preflight,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&DataSet),
) -> Result<RunOutcome> {
    let started_at = sys::utc_now_rfc3339();
    crate::clock::calibrate();
    if pre.hooks.no_run_dir {
        let ds = open_for_run(cfg, pre, stop, on_data_set)?;
        return run_in(cfg, stop, ds, pre, started_at).map(|o| written(o, None));
    }
    let place = Place {
        out: &cfg.out,
        held: pre.out.clone(),
        started_at: &started_at,
        tail: &run_dir_name(cfg, None, pre.size_bytes),
        kind: cfg.test.name(),
        on_made: pre.hooks.on_run_dir.as_deref(),
    };
    in_run_dir(place, |_| {
        open_for_run(cfg, pre, stop, on_data_set)
            .and_then(|ds| run_in(cfg, stop, ds, pre, started_at.clone()))
    })
}

/// Where a run's directory is made, and what it is called.
pub struct Place<'a> {
    /// `--out`, or the directory a command made of runs holds (`held`).
    pub out: &'a std::path::Path,
    pub held: Option<Arc<crate::safety::fs::Dir>>,
    pub started_at: &'a str,
    /// The name after the start instant ([`dir_name`]).
    pub tail: &'a str,
    /// What the registry records it as (the test's name).
    pub kind: &'a str,
    /// Who hears of it once it is made.
    #[allow(clippy::type_complexity)]
    pub on_made: Option<&'a (dyn Fn(&std::path::Path) + Send + Sync)>,
}

/// One run in a run directory of its own, whoever issues its requests: the directory is
/// made, proved writable, registered and locked before `body` prepares or measures
/// anything; `body` (which writes nothing there) runs; a failed body removes the directory
/// again, and the `--out` directories made for it; a finished one's result is written
/// into it ([`written`]).
pub fn in_run_dir(
    place: Place,
    body: impl FnOnce(&report::RunPlace) -> Result<RunOutcome>,
) -> Result<RunOutcome> {
    let made = report::RunPlace::make(
        place.out,
        place.held,
        place.started_at,
        place.tail,
        place.kind,
    )?;
    if let Some(f) = place.on_made {
        f(made.dir.path());
    }
    match body(&made) {
        Ok(outcome) => Ok(written(outcome, Some(&made.dir))),
        Err(e) => {
            // Nothing was written: the run directory goes, and what was made for it.
            made.remove();
            Err(e)
        }
    }
}

pub use crate::report::{RunDirEvent, RunDirHook, on_run_dir};

/// The names of the files a run writes into its run directory: what `dbio clean --stale`
/// may remove from the directory of a run that was killed (with the temporary names they
/// are written under first).
pub const RUN_DIR_FILES: &[&str] = &[
    "result.json",
    "summary.txt",
    "report.html",
    "timeseries.csv",
    "histograms.csv",
];

/// The data set of a run, opened (or made), heard of, and cut to the run's region.
fn open_for_run(
    cfg: &RunConfig,
    pre: &Preflight,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&DataSet),
) -> Result<DataSet> {
    let mut ds = open_data_set_in(cfg, stop, pre.space.clone(), pre.region)?;
    on_data_set(&ds);
    if let Some(r) = pre.region {
        ds.keep_region(r.index, r.of)?;
    }
    Ok(ds)
}

fn run_in(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
    mut ds: DataSet,
    pre: &Preflight,
    started_at: String,
) -> Result<RunOutcome> {
    check_verify(cfg, &mut ds)?;
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted(
            "interrupted before the run started; nothing measured".into(),
        ));
    }
    let data_flags = OpenFlags {
        write: cfg.writes(),
        direct: cfg.io_mode.direct(),
        dsync: cfg.io_mode.data_dsync(),
    };
    let temp = if cfg.uses_temp() {
        match ds.create_temp_files(&temp_file_sizes(cfg), data_flags) {
            Ok(t) => t,
            Err(e) => {
                let _ = ds.remove_temp_files();
                return Err(e);
            }
        }
    } else {
        Vec::new()
    };
    stderr_line!("dbio: {}", crate::units::shown(&ds.describe()));
    let outcome = run_on(cfg, &mut ds, temp, data_flags, pre, stop, started_at);
    // Whatever happened: this run's named temp files go (unnamed ones went with their
    // descriptors).
    let removed = ds.remove_temp_files();
    let mut outcome = outcome?;
    if let Err(e) = removed {
        outcome
            .result
            .warnings
            .push(crate::warnings::Warning::TempFilesLeft {
                error: e.to_string(),
            });
    }
    Ok(outcome)
}

/// The outcome with its result written into `run_dir` (result.json, summary, report,
/// exports): a result that could not all be written is still printed and recorded, and
/// the run exits 4. Without a run directory, only its summary.
pub fn written(outcome: RunOutcome, run_dir: Option<&crate::safety::fs::Dir>) -> RunOutcome {
    let Some(run_dir) = run_dir else {
        let summary = crate::report::summary::render(&outcome.result);
        return RunOutcome { summary, ..outcome };
    };
    let (summary, write_error) = match report::write_run(run_dir, &outcome.result) {
        Ok(s) => (s, None),
        Err(e) => (
            crate::report::summary::render(&outcome.result),
            Some(Error::Io(format!(
                "the results could not all be written into {} ({e}); nothing there is half-written, and what was measured is printed and recorded in the results store",
                run_dir.path().shown()
            ))),
        ),
    };
    let exit = if write_error.is_some() {
        ExitCode::IoError
    } else {
        outcome.exit
    };
    RunOutcome {
        run_dir: run_dir.path().to_path_buf(),
        summary,
        write_error,
        exit,
        ..outcome
    }
}

/// The size of each temp file: one per session of the temp test, or per session of each
/// temp class of a job, in class order.
pub(crate) fn temp_file_sizes(cfg: &RunConfig) -> Vec<u64> {
    if let Some(bytes) = cfg.doublewrite_bytes() {
        return vec![bytes; cfg.sessions];
    }
    if cfg.classes.is_empty() {
        return vec![cfg.temp.spill_bytes(); cfg.sessions];
    }
    (cfg.classes.iter())
        .filter(|c| c.event.is_temp())
        .flat_map(|c| {
            let spill = c.spill.unwrap_or(cfg.temp.spill_bytes());
            std::iter::repeat_n(spill, c.sessions)
        })
        .collect()
}

/// A "direct path read temp" class reads a spill: its temp files are written before the run
/// (unmeasured), as a sort writes its spill before reading it back — a fresh file's
/// unwritten extents would be read as zeros without touching the device.
fn write_read_temp_files(cfg: &RunConfig, temp: &[File], stop: &AtomicBool) -> Result<()> {
    let mut first = 0;
    for c in cfg.classes.iter().filter(|c| c.event.is_temp()) {
        let files = &temp[first..first + c.sessions];
        first += c.sessions;
        if c.event != crate::workload::Event::DirectPathReadTemp {
            continue;
        }
        let spill = c.spill.unwrap_or(cfg.temp.spill_bytes());
        let written = AtomicU64::new(0);
        crate::dataset::fill::fill(
            files,
            spill,
            cfg.dataset.fill,
            2,
            cfg.seed,
            None,
            &written,
            stop,
        )
        .map_err(|e| {
            Error::Io(format!(
                "cannot write the spill class '{}' reads: {}",
                c.name,
                crate::error::io_advice(&e)
            ))
        })?;
    }
    Ok(())
}

/// Everything between an open data set and a result.
fn run_on(
    cfg: &RunConfig,
    ds: &mut DataSet,
    temp: Vec<File>,
    data_flags: OpenFlags,
    pre: &Preflight,
    stop: &Arc<AtomicBool>,
    started_at: String,
) -> Result<RunOutcome> {
    let selection = &pre.selection;
    let files = RunFiles {
        data: if cfg.uses_data_files() {
            ds.open(data_flags)?
        } else {
            Vec::new()
        },
        redo_flags: cfg.uses_redo().then_some(OpenFlags {
            write: true,
            direct: cfg.io_mode.redo_direct(),
            dsync: cfg.redo.durability == RedoDurability::Dsync,
        }),
        redo: Vec::new(),
        temp,
        data_flags,
    };
    let files = RunFiles {
        redo: match files.redo_flags {
            Some(f) => ds.open_redo(f)?,
            None => Vec::new(),
        },
        ..files
    };
    let align = check_alignment(cfg, ds, &files)?;
    write_read_temp_files(cfg, &files.temp, stop)?;
    let buffer_align = (align.mem_align as usize).max(sys::page_size());
    let block_size = cfg.dataset.block_size;
    let file_size = ds.files.iter().map(|f| f.size).min().unwrap_or(0);
    let plan = workload::plan(cfg, ds.files.len(), file_size, block_size)?;
    if let Some(f) = &pre.hooks.on_events {
        let names: Vec<&'static str> = plan.events.iter().map(|e| e.name()).collect();
        f(&names);
    }
    let mut inst = instance(cfg, &plan, buffer_align)?;
    let verify_writes = cfg.writes_data();
    if let (Some(id), Some((dir, seq))) = (
        ds.verify_id().filter(|_| cfg.dataset.verify),
        ds.verify_table(),
    ) {
        inst.verify = Some(crate::verify::start(
            dir,
            seq.as_ref(),
            id,
            block_size,
            file_size / block_size,
            ds.files.len(),
            verify_writes,
            &crate::dataset::prepare_command(
                &ds.path,
                ds.size_bytes(),
                ds.block_size,
                ds.files.len(),
                true,
            ),
        )?);
    }
    let survey = storage_survey(cfg, ds);

    let data_fds = RunFiles::fds(&files.data);
    let mut warmed = None;
    if let Some(cache) = inst.cache.as_ref()
        && cfg.oltp.warm_cache
    {
        let t0 = std::time::Instant::now();
        let shape = &plan
            .transactions()
            .expect("a buffer cache is the oltp test's")
            .shape;
        let blocks = workload::oltp::warm_cache(cache, &data_fds, shape, stop).map_err(|e| {
            Error::Io(format!(
                "cannot load the buffer cache: {}",
                crate::error::io_advice(&e)
            ))
        })?;
        warmed = Some(blocks);
        stderr_line!(
            "dbio: buffer cache loaded with {blocks} blocks in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
    }
    let fds = threads::Fds {
        data: data_fds,
        redo: RunFiles::fds(&files.redo),
        temp: RunFiles::fds(&files.temp),
    };
    let os_devices = survey
        .0
        .all_devices()
        .iter()
        .map(|n| (n.name.clone(), n.layer.clone()))
        .collect();
    let display = Progress::line(progress::wanted(cfg.progress, cfg.quiet));
    let crew = window::Crew::Engine {
        cfg,
        plan: &plan,
        inst: &inst,
        fds: &fds,
        kind: selection.kind,
        buffer_align,
    };
    let mut m = window::measure(
        &window::WindowPlan::of(cfg, &plan),
        crew,
        None,
        stop,
        &display,
        os_devices,
        &pre.hooks,
    );
    display.clear();
    drop(files);
    let os = m.os.take();
    let mut result = assemble::assemble(&assemble::Inputs {
        cfg,
        ds,
        selection,
        plan: &plan,
        data_flags: &data_flags,
        align: &align,
        buffer_align,
        m: &m,
        warmed,
        cache_buffers: inst.cache.as_ref().map(BufferCache::buffers),
        memory_backed: survey.0.memory_backed,
        started_at,
    });
    // The null engine issues nothing: the block layer has nothing to agree with.
    let cross_check = data_flags.direct && selection.kind != crate::engine::EngineKind::Null;
    add_storage(&mut result, survey, os, cross_check, &plan);
    if let Some(v) = inst.verify.as_ref() {
        let names: Vec<String> = (ds.files.iter())
            .map(|f| {
                f.path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        let saved = verify_writes.then(|| ds.save_verify(|d| v.save(d)).map_err(|e| e.to_string()));
        if let Some(Err(error)) = &saved {
            result
                .warnings
                .push(crate::warnings::Warning::SequencesNotSaved {
                    error: error.clone(),
                });
        }
        result.verify = Some(crate::verify::finish(
            v,
            matches!(saved, Some(Ok(()))),
            &names,
        ));
    }
    // Errors a run went on after (--continue-on-error) still make the exit status 4.
    let io_error = !m.failures.is_empty() || !m.setup_errors.is_empty() || !m.continued.is_empty();
    let exit = exit_code(io_error, m.interrupted, &result);
    Ok(RunOutcome {
        result,
        run_dir: PathBuf::new(),
        summary: String::new(),
        exit,
        write_error: None,
        totals: m.totals,
    })
}

/// `--verify` needs a data set dbio filled with headers and a test that reads or writes its
/// data files. Without `--verify`, a test that writes data blocks leaves them without
/// headers: the data set stops being verifiable.
fn check_verify(cfg: &RunConfig, ds: &mut DataSet) -> Result<()> {
    if cfg.dataset.verify {
        // What the options alone decide was checked before (options::check).
        if ds.verify_id().is_none() {
            return Err(Error::usage(format!(
                "--verify needs a data set directory dbio created with --verify; {} is not one (give a directory as --target)",
                ds.path.shown()
            )));
        }
    } else if cfg.writes_data() && ds.verify_id().is_some() {
        stderr_line!(
            "dbio: {} writes without --verify: the data set's blocks no longer all carry verify headers (`{}` to have them again)",
            cfg.test.name(),
            crate::dataset::prepare_command(
                &ds.path,
                ds.size_bytes(),
                ds.block_size,
                ds.files.len(),
                true
            )
        );
        ds.drop_verify()?;
    }
    Ok(())
}

/// The direct-I/O alignment of the files the test uses, checked against its request sizes.
fn check_alignment(cfg: &RunConfig, ds: &DataSet, files: &RunFiles) -> Result<DioAlignment> {
    let (first, open) = [
        (ds.files.first(), files.data.first()),
        (ds.redo_files.first(), files.redo.first()),
        (ds.temp_files.first(), files.temp.first()),
    ]
    .into_iter()
    .find_map(|(f, open)| Some((f?.path.clone(), open?)))
    .map_or((ds.path.clone(), None), |(p, f)| (p, Some(f)));
    let align = match open {
        Some(f) => sys::dio_alignment_of(f, &first),
        None => sys::dio_alignment(&first),
    };
    let need = u64::from(align.offset_align);
    // Data and temp classes' requests (redo is written in whole redo blocks, checked below).
    let requests = cfg.classes.iter().filter(|c| !c.event.is_redo());
    for c in requests {
        for size in c.sizes.sizes() {
            if files.data_flags.direct && size % need != 0 {
                return Err(Error::usage(format!(
                    "class '{}': size {} is not a multiple of the direct-I/O alignment of {} ({need} bytes, from {})",
                    c.name,
                    size_label(size),
                    first.shown(),
                    align.source
                )));
            }
        }
    }
    let checks: [(bool, &str, u64, &str); 3] = [
        (
            !files.data.is_empty(),
            "--block-size",
            cfg.dataset.block_size,
            "or a buffered --io-mode (none, asynch)",
        ),
        (
            !files.redo.is_empty(),
            "--redo-block",
            cfg.redo.block,
            "e.g. --redo-block 4K, or a buffered --io-mode (none, asynch)",
        ),
        (
            !files.temp.is_empty() && cfg.classes.is_empty(),
            "--temp-io",
            cfg.temp.temp_io,
            "or a buffered --io-mode (none, asynch)",
        ),
    ];
    if files.data_flags.direct {
        for (used, opt, value, advice) in checks {
            if used && value % need != 0 {
                return Err(Error::usage(format!(
                    "{opt} {} is not a multiple of the direct-I/O alignment of {} ({need} bytes, from {}); use a multiple of {}, {advice}",
                    size_label(value),
                    first.shown(),
                    align.source,
                    size_label(need)
                )));
            }
        }
    }
    Ok(align)
}

/// The instance's shared memory for the plan: log buffer, dirty queue, buffer cache.
fn instance(cfg: &RunConfig, plan: &Workload, buffer_align: usize) -> Result<Instance> {
    let n = cfg.sessions;
    let mut inst = Instance::new(n, n + usize::from(plan.lgwr) + plan.dbwr);
    if plan.lgwr {
        inst.redo = Some(
            RedoLog::new(n, cfg.redo.block, plan.redo.per_commit.hi, buffer_align)
                .map_err(|e| Error::Io(format!("cannot allocate the log buffer: {e}")))?,
        );
    }
    if plan.dbwr > 0 {
        let shape = &plan
            .transactions()
            .expect("DBWR writes for transactions")
            .shape;
        let bs = shape.block_size;
        let data_blocks = shape.data_blocks();
        match cfg.oltp.cache_size {
            Some(size) => {
                let buffers = (size / bs).min(data_blocks.max(1)) as usize;
                inst.cache = Some(
                    BufferCache::new(buffers, bs as usize, data_blocks, buffer_align)
                        .map_err(|e| Error::Io(format!("cannot allocate the buffer cache: {e}")))?,
                );
                inst.dirty = Some(DirtyQueue::new(buffers as u64));
            }
            None => inst.dirty = Some(DirtyQueue::new(data_blocks)),
        }
    }
    Ok(inst)
}

/// The storage map and findings of the data set, each finding printed now (the start of the
/// run) as one stderr line.
fn storage_survey(
    cfg: &RunConfig,
    ds: &DataSet,
) -> (
    crate::storage::StorageMap,
    Vec<crate::storage::lint::Finding>,
) {
    let (map, findings) = crate::storage::survey_run(&ds.path, Some(cfg.dataset.block_size));
    // In full in the summary and the report; on stderr one line, once per process (a sweep
    // or a matrix says it once, not at every point).
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !findings.is_empty() && !SAID.swap(true, Ordering::Relaxed) {
        let warnings = findings.iter().filter(|f| f.severity != "info").count();
        stderr_line!(
            "dbio: {} configuration finding(s){}, see the summary",
            findings.len(),
            if warnings > 0 {
                format!(" ({warnings} warning(s))")
            } else {
                String::new()
            }
        );
    }
    (map, findings)
}

/// Puts the storage map, the findings and the OS statistics into the result: the findings
/// about request limits this run's largest request exceeds, and, for direct I/O, dbio's
/// requests and bytes against the block layer's (the neighbours judgement).
fn add_storage(
    result: &mut RunResult,
    (map, mut findings): (
        crate::storage::StorageMap,
        Vec<crate::storage::lint::Finding>,
    ),
    os: Option<crate::measure::os::OsSampler>,
    direct: bool,
    plan: &Workload,
) {
    use crate::measure::os::{Counts, CrossCheck};
    use crate::storage::lint;
    let lgwr_largest = (result.redo.as_ref()).map_or(0, |r| r.accounting.largest_write_bytes);
    let largest = plan.largest_request(lgwr_largest);
    findings.extend(lint::request_limits(&map, lint::Requests::Run(largest)));
    let (mut reads, mut writes) = (Counts::default(), Counts::default());
    for (ev, e) in plan.events.iter().zip(&result.events) {
        for (on, c) in [(ev.reads(), &mut reads), (ev.writes(), &mut writes)] {
            if on {
                c.dbio_requests += e.requests;
                c.dbio_bytes += e.bytes;
            }
        }
    }
    // Judged at the layer the run measured: the top one (the device the file system sits
    // on, or the target device), which sees the file system's requests before dm or md
    // split them over paths or members; see docs/outputs.md "What the machine and the
    // storage saw". A partition is judged with its disk too, which counts every request of
    // the partition once and those of the disk's other partitions: whichever shows more
    // work that was not dbio's is kept (never the two added up).
    let mut checks = Vec::new();
    if let Some(top) = map.devices.first().filter(|_| direct && !map.memory_backed) {
        let disk = (top.layer == "partition")
            .then(|| top.lower.first())
            .flatten();
        for n in std::iter::once(top).chain(disk) {
            checks.push(CrossCheck {
                device: n.name.clone(),
                reads,
                writes,
                largest,
                split_by: lint::limits_exceeded(&n.queue, largest),
            });
        }
    }
    let (os, warning) = match os {
        Some(o) => {
            let (os, w) = o.finish(checks);
            (Some(os), w)
        }
        None => (None, None),
    };
    result.warnings.extend(warning);
    result.os = os;
    result.storage = Some(report::result::StorageJson::Map(map));
    result.lint = findings;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::RunArgs;
    use crate::report::result::VerdictJson;

    #[test]
    fn the_exit_status_is_the_worst_thing_that_happened() {
        let mut r = crate::report::fixture::run_result(3, &["db file sequential read"], false);
        r.verdict = None;
        assert_eq!(exit_code(false, false, &r), ExitCode::Ok);
        r.verdict = Some(VerdictJson {
            pass: false,
            classes: Vec::new(),
            failed: Vec::new(),
        });
        assert_eq!(exit_code(false, false, &r), ExitCode::VerdictFailed);
        assert_eq!(exit_code(false, true, &r), ExitCode::Interrupted);
        assert_eq!(exit_code(true, true, &r), ExitCode::IoError);
        r.verdict.as_mut().unwrap().pass = true;
        assert_eq!(exit_code(false, false, &r), ExitCode::Ok);
    }

    #[test]
    fn a_run_across_hosts_is_named_like_one_on_one_host_with_its_host_count() {
        let mut a = RunArgs::defaults(Some(Test::ReadIops));
        a.target = std::env::temp_dir().join("dbio-run-dir-name");
        a.sessions = 8;
        let cfg = crate::options::check::run_config(&a).expect("valid options");
        let one = run_dir_name(&cfg, None, 1 << 30);
        let many = run_dir_name(&cfg, Some(3), 1 << 30);
        assert!(one.starts_with("read-iops_"), "{one}");
        assert!(one.contains("_8sessions_1G_"), "{one}");
        assert_eq!(many, one.replace("_8sessions_", "_3hosts_8sessions_"));
    }
}
