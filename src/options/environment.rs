//! Validation, stage 2: what needs the machine rather than the input. Before anything is
//! created, deleted or measured: the target can be used as the run wants; the engine is
//! there; the machine can run this many sessions (threads, memory maps, process limits, AIO
//! contexts, memory for their buffers and histograms); `--out` can hold the run directory;
//! and the space the run's temp files and run directory need is known, to be checked with
//! the data set's. (The data set's own checks — its manifest, its files, whether it fits —
//! run when it is opened, before anything of it changes.)

use crate::units::Shown;
use std::fs::File;

use crate::dataset::{self, TargetKind};
use crate::engine::{self, Selection};
use crate::error::{Error, Result};
use crate::run::{Preflight, temp_file_sizes};
use crate::safety::limits::SpaceNeeds;
use crate::sys;
use crate::workload::spec::RunConfig;
use crate::workload::{self, Test, Workload};

/// Stage 2: checks `cfg` against the machine. Creates nothing.
pub fn check(cfg: &RunConfig) -> Result<Preflight> {
    let target = &cfg.dataset.target;
    crate::safety::places::check_target(target)?;
    let kind = dataset::target_kind(target).map_err(|e| e.named("--target"))?;
    refuse_destructive_on(cfg, kind)?;
    let existing = match kind {
        Some(kind @ (TargetKind::File | TargetKind::BlockDevice)) => Some(kind),
        _ => {
            dataset::check_target_dir(target)?;
            None
        }
    };
    if let Some(kind) = existing {
        refuse_writes_to(cfg, kind)?;
        if cfg.dataset.verify {
            return Err(Error::usage(format!(
                "--verify needs a data set directory dbio created with --verify; {} is not one (give a directory as --target)",
                target.shown()
            )));
        }
    }
    check_alignment(cfg, &dataset::space_path(target))?;
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
        check_batches(&plan)?;
        check_sessions(cfg, &plan, &selection)?;
        check_memory(cfg, &plan, &selection, files)?;
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
    let out_at = crate::report::check_out(&cfg.out)?;
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
    Ok(Preflight {
        size_bytes,
        selection,
        space,
        out: None,
        hooks: Default::default(),
        region: None,
    })
}

/// Direct I/O needs offsets and sizes in whole units of the device's logical block: the
/// block size, redo block, temp request and class sizes are checked against the device
/// under the target before anything is created (and again on the files themselves).
fn check_alignment(cfg: &RunConfig, at: &std::path::Path) -> Result<()> {
    // Redo is direct in more io modes than data (every flush method).
    if !cfg.io_mode.redo_direct() {
        return Ok(());
    }
    let align = sys::dio_alignment(at);
    let need = u64::from(align.offset_align);
    let mut sizes: Vec<(&str, u64)> = Vec::new();
    if cfg.uses_data_files() && cfg.io_mode.direct() {
        sizes.push(("--block-size", cfg.dataset.block_size));
    }
    if cfg.uses_redo() {
        sizes.push(("--redo-block", cfg.redo.block));
    }
    if cfg.test == Test::Temp && cfg.classes.is_empty() {
        sizes.push(("--temp-io", cfg.temp.temp_io));
    }
    for (opt, v) in sizes {
        if v % need != 0 {
            return Err(Error::usage(format!(
                "{opt} {} is not a multiple of the direct-I/O alignment of {} ({need} bytes, from {}); use a multiple of {}, or a buffered --io-mode (none, asynch)",
                crate::units::size_label(v),
                at.shown(),
                align.source,
                crate::units::size_label(need)
            )));
        }
    }
    Ok(())
}

/// `--destructive` lets a write test overwrite a block device, and nothing else: with any
/// other target (a directory, a file, a path that does not exist) the user meant a device
/// that is not there, and the run is refused rather than run on a data set instead.
fn refuse_destructive_on(cfg: &RunConfig, kind: Option<TargetKind>) -> Result<()> {
    if !cfg.destructive || kind == Some(TargetKind::BlockDevice) {
        return Ok(());
    }
    let what = match kind {
        Some(TargetKind::Directory) => "it is a directory",
        Some(TargetKind::File) => "it is a regular file",
        _ => "it does not exist",
    };
    Err(Error::usage(format!(
        "--target {}: with --destructive the target must be an existing block device, and {what}; without --destructive, give a data set directory as --target",
        cfg.dataset.target.shown()
    )))
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
        cfg.dataset.target.shown(),
        cfg.test.name()
    )))
}

/// A batch of random blocks is distinct blocks of the data set: one larger than the data
/// set (`--batch 4096` of 1M blocks on 8 MiB) cannot be drawn, and a run would spin.
fn check_batches(plan: &Workload) -> Result<()> {
    for p in &plan.classes {
        let blocks = p.shape.data_blocks();
        if matches!(p.pattern, workload::Pattern::Batch(_)) && p.shape.batch as u64 > blocks {
            return Err(Error::usage(format!(
                "--batch {}: a batch of distinct random blocks cannot be larger than the data set's {blocks} blocks; use a smaller --batch or a larger --size",
                p.shape.batch
            )));
        }
    }
    Ok(())
}

/// Threads besides the sessions: LGWR, DBWR, noise, the ASH sampler, progress, signals.
const OTHER_THREADS: u64 = 16;

/// Refuses more sessions than the machine can run, naming the limit that binds.
fn check_sessions(cfg: &RunConfig, plan: &Workload, selection: &Selection) -> Result<()> {
    let uring = selection.kind == engine::EngineKind::Uring;
    let per = crate::safety::limits::PerSession {
        threads: if uring { 2 } else { 1 },
        maps: if uring { 8 } else { 5 },
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

/// Refuses a run whose buffers, histograms, rings, stacks and tables do not fit in the
/// memory available, naming what takes it and the option that lowers it.
fn check_memory(
    cfg: &RunConfig,
    plan: &Workload,
    selection: &Selection,
    files: usize,
) -> Result<()> {
    let Some((available, source)) = crate::run::memory::available().map_err(Error::usage)? else {
        return Ok(());
    };
    crate::run::memory::estimate(cfg, plan, selection.kind, files)
        .check(available, source)
        .map_err(Error::usage)
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
