//! Running one test: data set → engine → instance → threads → measured window → result
//! (SPEC §5.2).
//!
//! Phases: prepare (unmeasured) → all threads set up and start together → warm-up
//! (unmeasured) → measured window → stop. The main thread does the timing and samples the
//! counters once a second; sessions and background threads only issue I/O and record it.
//!
//! - `mod.rs` (here): the data set, files, engine choice and the instance a run needs;
//! - [`measure`]: the threads (sessions, LGWR, DBWR, noise, ASH sampler) and the window;
//! - [`assemble`]: the [`RunResult`] made of what was measured.

mod assemble;
mod measure;

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::config::{RedoSync, RunConfig};
use crate::dataset::{self, DataSet, FillOptions, OpenFlags, Prepare, TargetKind};
use crate::engine::{self, Selection};
use crate::error::{Error, ExitCode, Result};
use crate::progress::{self, Progress};
use crate::report::{self, RunResult};
use crate::safety::limits::SpaceNeeds;
use crate::sys::{self, DioAlignment};
use crate::units::{duration_label, size_label};
use crate::workload::cache::{BufferCache, DirtyQueue};
use crate::workload::redo::RedoLog;
use crate::workload::{self, Instance, Plan, Test};

/// What a finished run produced.
pub struct RunOutcome {
    pub result: RunResult,
    pub run_dir: PathBuf,
    pub summary: String,
    pub exit: ExitCode,
}

/// Opens (or creates) the data set a run needs: data files for tests that read or write
/// them, redo logs for redo and oltp. `space`: what else the run will write (temp files,
/// its run directory), checked with the data set's before anything is created.
pub fn open_data_set(cfg: &RunConfig, stop: &AtomicBool, space: SpaceNeeds) -> Result<DataSet> {
    let target = &cfg.dataset.target;
    match dataset::target_kind(target)? {
        Some(TargetKind::BlockDevice) if matches!(cfg.test, Test::WriteIops | Test::WriteMbps) => {
            space.check().map_err(Error::usage)?;
            // Checked (mounted, holders, O_EXCL, signatures), then --destructive, then asked.
            let consent = crate::safety::device::Consent {
                destructive: cfg.destructive,
                yes: cfg.yes,
            };
            let claim = crate::safety::device::claim(target, cfg.test.name(), consent)?;
            let info = claim.info.clone();
            let ds = dataset::claimed_device(target, claim.file, info.size, &cfg.dataset)?;
            crate::safety::device::confirm(&info, cfg.test.name(), cfg.yes)?;
            Ok(ds)
        }
        Some(kind @ (TargetKind::File | TargetKind::BlockDevice)) => {
            refuse_writes_to(cfg, kind)?;
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
                space,
                fill: &fill,
            };
            let total = prepare.data.map_or(0, |d| d.size)
                + prepare.redo.map_or(0, |(n, size)| u64::from(n) * size);
            progress::follow_bytes(
                progress::wanted(cfg.quiet),
                total,
                "preparing the data set",
                &written,
                || dataset::prepare(&prepare),
            )
        }
    }
}

/// A run that writes may not use an existing file, nor a block device unless it is
/// write-iops or write-mbps (which then go through the device checks).
fn refuse_writes_to(cfg: &RunConfig, kind: TargetKind) -> Result<()> {
    let device_test = matches!(cfg.test, Test::WriteIops | Test::WriteMbps);
    if !cfg.writes() || (kind == TargetKind::BlockDevice && device_test) {
        return Ok(());
    }
    let what = if kind == TargetKind::BlockDevice {
        "on a block device only write-iops and write-mbps may write (with --destructive)"
    } else {
        "dbio writes only into data sets it created"
    };
    Err(Error::usage(format!(
        "--target {}: {} writes, and {what}; give a directory as --target",
        cfg.dataset.target.display(),
        cfg.test.name()
    )))
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

/// Runs `cfg` to the end (or until `stop`), writes the run directory, returns the outcome.
///
/// Everything is checked before anything is created, deleted or measured: what the
/// machine allows ([`preflight`]), then `--out` (the run directory is created first, so
/// that results cannot be lost at the end), then the data set and the space everything
/// needs. `on_data_set` hears of the data set as soon as it is ready (the results store's
/// registry of data sets), so a run killed later still leaves it known.
pub fn run(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&DataSet),
) -> Result<RunOutcome> {
    let started_at = sys::utc_now_rfc3339();
    crate::clock::calibrate();
    let checked = preflight(cfg)?;
    let out_at = report::check_out(&cfg.out)?;
    let mut space = SpaceNeeds::default();
    space
        .add(
            &out_at,
            run_dir_bytes(cfg),
            0,
            "the run directory",
            "choose an --out with free space",
        )
        .map_err(|e| Error::io("cannot read the free space of", &out_at, &e))?;
    if cfg.uses_temp() {
        let spills = temp_file_sizes(cfg)
            .iter()
            .try_fold(0u64, |sum, &s| sum.checked_add(s))
            .ok_or_else(|| {
                Error::usage("the temp spills add up to more bytes than can be counted; use a smaller --spill-size or fewer sessions")
            })?;
        let at = dataset::space_path(&cfg.dataset.target);
        space
            .add(
                &at,
                spills,
                0,
                "the temp spills",
                "use a smaller --spill-size (or class spill) or fewer sessions",
            )
            .map_err(|e| Error::io("cannot read the free space of", &at, &e))?;
    }
    let ds = open_data_set(cfg, stop, space)?;
    on_data_set(&ds);
    // The run directory now, before anything is measured, so results cannot be lost at
    // the end for want of a place.
    let out = report::open_out(&cfg.out)?;
    let tail = format!(
        "{}_{}_{}s_{}_{}",
        cfg.test.name(),
        cfg.submission.name(),
        cfg.sessions,
        size_label(checked.size_bytes),
        duration_label(cfg.duration)
    );
    let run_dir = report::create_run_dir(&out, &started_at, &tail)?;
    let result = run_in(cfg, stop, ds, &run_dir, &checked.selection, started_at);
    if result.is_err() {
        // Nothing was measured: the empty run directory goes.
        if let Some(name) = run_dir.path().file_name().and_then(|n| n.to_str()) {
            let _ = out.remove_empty_dir(name);
        }
    }
    result
}

fn run_in(
    cfg: &RunConfig,
    stop: &Arc<AtomicBool>,
    mut ds: DataSet,
    run_dir: &crate::safety::fs::Dir,
    selection: &Selection,
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
        dsync: true,
    };
    let temp = if cfg.uses_temp() {
        ds.create_temp_files(&temp_file_sizes(cfg), data_flags)?
    } else {
        Vec::new()
    };
    eprintln!("dbio: {}", ds.describe());
    let outcome = run_on(cfg, &mut ds, temp, data_flags, selection, stop, started_at);
    // Whatever happened: this run's named temp files go (unnamed ones went with their
    // descriptors).
    let removed = ds.remove_temp_files();
    let mut outcome = outcome?;
    if let Err(e) = removed {
        outcome
            .result
            .warnings
            .push(format!("could not remove the run's temp files: {e}"));
    }
    let summary = report::write_run(run_dir, &outcome.result)?;
    Ok(RunOutcome {
        run_dir: run_dir.path().to_path_buf(),
        summary,
        ..outcome
    })
}

/// What [`preflight`] found.
struct Preflight {
    /// The size the run works on, for the run directory's name.
    size_bytes: u64,
    /// The engine, chosen and checked.
    selection: Selection,
}

/// Checks what needs the machine rather than the command line, before anything is
/// created: the target can be used, and the machine can run this many sessions (threads,
/// memory maps, process limits, memory for their buffers and histograms).
fn preflight(cfg: &RunConfig) -> Result<Preflight> {
    let target = &cfg.dataset.target;
    let existing = match dataset::target_kind(target)? {
        Some(kind @ (TargetKind::File | TargetKind::BlockDevice)) => Some(kind),
        _ => {
            dataset::check_target_dir(target)?;
            None
        }
    };
    if let Some(kind) = existing {
        refuse_writes_to(cfg, kind)?;
    }
    let (files, file_size) = match existing {
        Some(kind) => {
            let f =
                File::open(target).map_err(|e| Error::io("cannot open --target", target, &e))?;
            let size = if kind == TargetKind::BlockDevice {
                sys::block_device_size(&f)
                    .map_err(|e| Error::io("cannot read the size of", target, &e))?
            } else {
                f.metadata()
                    .map_err(|e| Error::io("cannot stat", target, &e))?
                    .len()
            };
            (1, cfg.dataset.size_given.map_or(size, |s| s.min(size)))
        }
        None => (cfg.dataset.files as usize, cfg.dataset.file_size()),
    };
    let bs = cfg.dataset.block_size;
    let file_size = file_size / bs * bs;
    let selection =
        engine::select(cfg.engine, cfg.io_mode, cfg.submission).map_err(Error::usage)?;
    check_aio_contexts(cfg, &selection)?;
    if file_size >= bs {
        let plan = workload::plan(cfg, files, file_size, bs)?;
        check_sessions(cfg, &plan, &selection)?;
    }
    let size_bytes = if cfg.uses_data_files() {
        file_size * files as u64
    } else if cfg.uses_redo() {
        u64::from(cfg.redo.files).saturating_mul(cfg.redo.file_size)
    } else {
        temp_file_sizes(cfg)
            .iter()
            .fold(0u64, |s, &b| s.saturating_add(b))
    };
    Ok(Preflight {
        size_bytes,
        selection,
    })
}

/// Threads besides the sessions: LGWR, DBWR, noise, the ASH sampler, progress, signals.
const OTHER_THREADS: u64 = 16;

/// Refuses more sessions than the machine can run, naming the limit that binds.
fn check_sessions(cfg: &RunConfig, plan: &Plan, selection: &Selection) -> Result<()> {
    let uring = selection.kind == engine::EngineKind::Uring;
    let per = crate::safety::limits::PerSession {
        threads: if uring { 2 } else { 1 },
        maps: if uring { 8 } else { 5 },
        bytes: per_session_bytes(plan),
    };
    let limits = crate::safety::limits::ThreadLimits::read();
    let (most, why) = limits.max_sessions(per, OTHER_THREADS + plan.dbwr as u64);
    if cfg.sessions as u64 <= most {
        return Ok(());
    }
    let what = if cfg.classes.is_empty() || cfg.job.is_none() {
        format!("--sessions {}", cfg.sessions)
    } else {
        format!(
            "the job's classes have {} sessions in all, and",
            cfg.sessions
        )
    };
    Err(Error::usage(format!(
        "{what}: this machine can run at most {most} sessions of this test, limited by {why}; use fewer sessions"
    )))
}

/// Memory one session takes: its I/O buffer (the largest of the run's classes) and its
/// histograms (three per event).
fn per_session_bytes(plan: &Plan) -> u64 {
    let buffer = plan
        .classes
        .iter()
        .map(|c| c.plan.buffer_bytes())
        .chain(std::iter::once(plan.buffer_bytes()))
        .max()
        .unwrap_or(0) as u64;
    let histograms = plan.events.len() as u64 * 3 * crate::measure::histogram::LEN as u64 * 8;
    buffer + histograms + (64 << 10)
}

/// Linux AIO contexts are limited system-wide (`fs.aio-max-nr`): refuse a run that would
/// run out of them half-way through setting up its sessions.
fn check_aio_contexts(cfg: &RunConfig, selection: &Selection) -> Result<()> {
    if selection.kind != engine::EngineKind::Aio {
        return Ok(());
    }
    let read = |p: &str| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let (Some(max), Some(now)) = (read("/proc/sys/fs/aio-max-nr"), read("/proc/sys/fs/aio-nr"))
    else {
        return Ok(());
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    // The kernel reserves at least 4 per CPU, doubled, per context (ioctx_alloc).
    let per = (cfg.batch.max(cfg.depth).max(32) as u64).max(4 * cpus) * 2;
    let need = (cfg.sessions as u64 + 2).saturating_mul(per);
    if now.saturating_add(need) > max {
        return Err(Error::usage(format!(
            "--engine aio: {} sessions need about {need} AIO events, and fs.aio-max-nr leaves {}; raise it (`sysctl -w fs.aio-max-nr={}`), use fewer --sessions, or --engine uring",
            cfg.sessions,
            max.saturating_sub(now),
            now.saturating_add(need).next_power_of_two()
        )));
    }
    Ok(())
}

/// Space a run directory may take: summary, report and exports, growing with the measured
/// seconds (per-second history, OS samples).
fn run_dir_bytes(cfg: &RunConfig) -> u64 {
    (2 << 20) + cfg.duration.as_secs().saturating_mul(8 << 10)
}

/// The size of each temp file: one per session of the temp test, or per session of each
/// temp class of a job, in class order.
fn temp_file_sizes(cfg: &RunConfig) -> Vec<u64> {
    if cfg.classes.is_empty() {
        return vec![cfg.temp.spill_bytes(); cfg.sessions];
    }
    (cfg.classes.iter())
        .filter(|c| crate::job::is_temp(c.event))
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
    for c in cfg.classes.iter().filter(|c| crate::job::is_temp(c.event)) {
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
    selection: &Selection,
    stop: &Arc<AtomicBool>,
    started_at: String,
) -> Result<RunOutcome> {
    let files = RunFiles {
        data: if cfg.uses_data_files() {
            ds.open(data_flags)?
        } else {
            Vec::new()
        },
        redo_flags: cfg.uses_redo().then_some(OpenFlags {
            write: true,
            direct: cfg.io_mode.direct(),
            dsync: cfg.redo.sync == RedoSync::Dsync,
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
    let mut inst = instance(cfg, &plan, buffer_align)?;
    let verify_writes = cfg.writes_data();
    if let (Some(id), Some((dir, seq))) = (
        ds.verify_id().filter(|_| cfg.dataset.verify),
        ds.verify_table(),
    ) {
        inst.verify = Some(crate::verify::start(
            dir,
            seq,
            id,
            block_size,
            file_size / block_size,
            ds.files.len(),
            verify_writes,
        )?);
    }
    let survey = storage_survey(cfg, ds);

    let data_fds = RunFiles::fds(&files.data);
    let mut warmed = None;
    if let Some(cache) = inst.cache.as_ref()
        && cfg.oltp.warm_cache
    {
        let t0 = std::time::Instant::now();
        let blocks =
            workload::oltp::warm_cache(cache, &data_fds, &plan.shape, stop).map_err(|e| {
                Error::Io(format!(
                    "cannot load the buffer cache: {}",
                    crate::error::io_advice(&e)
                ))
            })?;
        warmed = Some(blocks);
        eprintln!(
            "dbio: buffer cache loaded with {blocks} blocks in {:.1} s",
            t0.elapsed().as_secs_f64()
        );
    }
    let fds = measure::Fds {
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
    let display = Progress::line(progress::wanted(cfg.quiet));
    let mut m = measure::measure(
        cfg,
        &plan,
        &inst,
        &fds,
        selection.kind,
        buffer_align,
        stop,
        &display,
        os_devices,
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
    let directions = plan
        .events
        .iter()
        .zip(&m.totals)
        .filter(|(_, t)| t.requests > 0)
        .fold((false, false), |(r, w), (e, _)| {
            (r || e.reads(), w || e.writes())
        });
    // The null engine issues nothing: the block layer has nothing to agree with.
    let cross_check = data_flags.direct && selection.kind != engine::EngineKind::Null;
    add_storage(&mut result, survey, os, cross_check, directions);
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
        let (json, warning) = crate::verify::finish(v, saved, &names);
        result.warnings.extend(warning);
        result.verify = Some(json);
    }
    // Errors a run went on after (--continue-on-error) still make the exit status 4.
    let exit = if !m.failures.is_empty() || !m.setup_errors.is_empty() || !m.continued.is_empty() {
        ExitCode::IoError
    } else if m.interrupted {
        ExitCode::Interrupted
    } else if result.verdict.as_ref().is_some_and(|v| !v.pass) {
        ExitCode::VerdictFailed
    } else {
        ExitCode::Ok
    };
    Ok(RunOutcome {
        result,
        run_dir: PathBuf::new(),
        summary: String::new(),
        exit,
    })
}

/// `--verify` needs a data set dbio filled with headers and a test that reads or writes its
/// data files. Without `--verify`, a test that writes data blocks leaves them without
/// headers: the data set stops being verifiable.
fn check_verify(cfg: &RunConfig, ds: &mut DataSet) -> Result<()> {
    if cfg.dataset.verify {
        if !cfg.uses_data_files() {
            return Err(Error::usage(format!(
                "--verify checks data blocks, and {} does not use the data files; leave --verify out",
                cfg.test.name()
            )));
        }
        if ds.verify_id().is_none() {
            return Err(Error::usage(format!(
                "--verify needs a data set directory dbio created with --verify; {} is not one (give a directory as --target)",
                ds.path.display()
            )));
        }
    } else if cfg.writes_data() && ds.verify_id().is_some() {
        eprintln!(
            "dbio: {} writes without --verify: the data set's blocks no longer all carry verify headers (`dbio prepare --verify --fresh` to have them again)",
            cfg.test.name()
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
    let requests = cfg.classes.iter().filter(|c| {
        !matches!(
            c.event,
            crate::workload::Event::LogFileSync | crate::workload::Event::LogFileParallelWrite
        )
    });
    for c in requests {
        for size in c.sizes.sizes() {
            if files.data_flags.direct && size % need != 0 {
                return Err(Error::usage(format!(
                    "class '{}': size {} is not a multiple of the direct-I/O alignment of {} ({need} bytes, from {})",
                    c.name,
                    size_label(size),
                    first.display(),
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
                    first.display(),
                    align.source,
                    size_label(need)
                )));
            }
        }
    }
    Ok(align)
}

/// The instance's shared memory for the plan: log buffer, dirty queue, buffer cache.
fn instance(cfg: &RunConfig, plan: &Plan, buffer_align: usize) -> Result<Instance> {
    let n = cfg.sessions;
    let mut inst = Instance::new(n, n + usize::from(plan.lgwr) + plan.dbwr);
    if plan.lgwr {
        inst.redo = Some(
            RedoLog::new(n, cfg.redo.block, plan.redo.per_commit.hi, buffer_align)
                .map_err(|e| Error::Io(format!("cannot allocate the log buffer: {e}")))?,
        );
    }
    if plan.dbwr > 0 {
        let bs = plan.shape.block_size;
        let data_blocks = plan.shape.data_blocks();
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
) -> (crate::storage::StorageMap, Vec<report::result::LintJson>) {
    let (map, findings) = crate::storage::survey(&ds.path, Some(cfg.dataset.block_size));
    for l in &findings {
        eprintln!("{}", crate::storage::lint::line(l));
    }
    (map, findings)
}

/// Puts the storage map, the findings and the OS statistics into the result; for direct
/// I/O, cross-checks dbio's requests against the block layer's.
fn add_storage(
    result: &mut RunResult,
    (map, findings): (crate::storage::StorageMap, Vec<report::result::LintJson>),
    os: Option<crate::measure::os::OsSampler>,
    direct: bool,
    (reads, writes): (bool, bool),
) {
    // The top layer (the device the file system sits on) sees the file system's requests
    // before dm/md split them across members or paths; see README "What the OS saw".
    let top = map.devices.first().map(|d| d.name.clone());
    let check = if direct && !map.memory_backed {
        top.as_deref()
    } else {
        None
    };
    let t = &result.totals;
    let os = os.map(|o| {
        o.finish(check.map(|d| crate::measure::os::CrossCheck {
            device: d.to_string(),
            dbio_requests: t.requests,
            dbio_bytes: t.bytes,
            reads,
            writes,
        }))
    });
    if let Some(c) = os.as_ref().and_then(|o| o.cross_check.as_ref())
        && c.dbio_requests > 0
        && (c.ratio - 1.0).abs() > 0.10
    {
        result.warnings.push(
            crate::warnings::Warning::BlockLayerMismatch {
                device: c.device.clone(),
                dbio_requests: c.dbio_requests,
                device_requests: c.device_requests,
                dbio_bytes: c.dbio_bytes,
                device_bytes: c.device_bytes,
            }
            .to_string(),
        );
    }
    result.os = os;
    result.storage = serde_json::to_value(&map).ok();
    result.lint = findings;
}
