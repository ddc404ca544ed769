//! Validation, stage 1: what the input alone decides. [`run_config`] turns [`RunArgs`] (the
//! defaults, a job file's values, what was typed or swept) into the [`RunConfig`] a run
//! follows, with every rule between options checked once, before any work starts. Errors
//! name each option as the user wrote it: `--mbrc` when typed, `run.mbrc` and its line when
//! a job file set it.

use super::job::Job;
use super::{RunArgs, Source};
use crate::dataset::DataSetSpec;
use crate::engine::{EngineChoice, Submission};
use crate::error::{Error, Result};
use crate::units::Shown;
use crate::units::size_label;
use crate::workload::event::Like;
use crate::workload::spec::{
    ClassSpec, OltpOptions, Origins, RedoOptions, RunConfig, TempOptions, rand_seed,
};
use crate::workload::spec::{GroupCommit, RedoDurability};
use crate::workload::{Event, Test};

/// What `--target` may hold in a run across hosts: each host's name.
pub const HOST_PLACEHOLDER: &str = "{host}";

/// The error for option `name`'s value `value`, named as the user gave it.
pub fn invalid(a: &RunArgs, name: &str, value: &str, why: impl std::fmt::Display) -> Error {
    origins(a).invalid(name, value, why)
}

/// Where each option's value came from, as the run keeps it (for errors found later).
fn origins(a: &RunArgs) -> Origins {
    let mut o = Origins::default();
    for (name, source) in &a.sources {
        let key = super::find(name).and_then(|opt| opt.key);
        if let (Source::Job(at), Some(key)) = (source, key) {
            o.job.insert((*name).to_string(), (at.clone(), key));
        }
    }
    o
}

/// The data set the options describe.
pub fn data_set(a: &RunArgs) -> Result<DataSetSpec> {
    // Each file holds whole 1 MiB units (or whole blocks when blocks are larger), so that
    // multiblock requests never straddle a file's end.
    let unit = a.block_size.max(1 << 20);
    let size = a.size.unwrap_or(crate::dataset::DEFAULT_SIZE);
    let per_file = size / u64::from(a.files) / unit * unit;
    // An existing file or device is one file, as big as it is: checked with it.
    let existing = std::fs::metadata(&a.target).is_ok_and(|m| !m.is_dir());
    if per_file == 0 && !existing {
        return Err(invalid(
            a,
            "size",
            &size_label(size),
            format!(
                "too small for {} file(s): each file needs at least {}; use a larger --size or fewer --files",
                a.files,
                size_label(unit)
            ),
        ));
    }
    if a.verify && matches!(a.fill, crate::dataset::fill::Content::Dedupe(_)) {
        return Err(Error::usage(
            "--verify puts a unique header in every block, so blocks cannot dedupe: use --fill random, zero or compress=RATIO with --verify",
        ));
    }
    Ok(DataSetSpec {
        target: a.target.clone(),
        size: if existing {
            size
        } else {
            per_file * u64::from(a.files)
        },
        block_size: a.block_size,
        files: a.files,
        fresh: a.fresh,
        fill: a.fill,
        size_given: a.size,
        verify: a.verify,
    })
}

/// Stage 1: the run `a` describes, with its job file (`--job`) applied under what was typed.
pub fn run_config(a: &RunArgs) -> Result<RunConfig> {
    let job = a.job.as_deref().map(super::job::load).transpose()?;
    run_config_with(a, job)
}

/// Stage 1 with the job file already read (`dbio wizard` checks a job before it is saved;
/// a host of a cluster run gets its run as a job file's text).
pub fn run_config_with(a: &RunArgs, job: Option<Job>) -> Result<RunConfig> {
    // The test engine's stall, checked before anything is created.
    crate::engine::fault::Stall::from_env().map_err(Error::usage)?;
    if a.yes && !a.destructive && job.is_none() {
        return Err(Error::usage(
            "--yes confirms --destructive (overwriting a block device) or what a --job file runs: give it with --destructive or --job",
        ));
    }
    let mut merged = a.clone();
    if let Some(j) = &job {
        refuse_beside_job(a, j)?;
        j.apply(&mut merged)?;
    }
    let a = &merged;
    if a.hosts.is_empty() && a.target.to_string_lossy().contains(HOST_PLACEHOLDER) {
        return Err(invalid(
            a,
            "target",
            &a.target.shown().to_string(),
            "{host} stands for each host's name in a run across hosts (--hosts); without --hosts give a plain path",
        ));
    }
    let test = match (a.test, &job) {
        (_, Some(j)) => j.test.unwrap_or(Test::Job),
        (Some(t), None) => t,
        (None, None) => {
            return Err(Error::usage(
                "dbio run: name a test (read-iops, ...) or give --job FILE",
            ));
        }
    };
    refuse_unused(a, test)?;
    if test == Test::WriteMbps
        && a.like != Like::Postgres
        && a.source("redo-per-commit") != Source::Default
    {
        return Err(Error::usage(
            "--redo-per-commit with write-mbps: only --like postgres write-mbps logs (a COPY's WAL); leave it out",
        ));
    }
    let shaped;
    let a = if a.like == Like::Oracle {
        refuse_flush_methods(a)?;
        a
    } else {
        shaped = like_database(a, test)?;
        &shaped
    };
    let dataset = data_set(a)?;
    let bs = dataset.block_size;
    let mbrc = match a.mbrc {
        Some(m) => m as usize,
        None => ((1u64 << 20) / bs).max(1) as usize,
    };
    let multiblock = mbrc as u64 * bs;
    if multiblock > 64 << 20 {
        return Err(invalid(
            a,
            "mbrc",
            &mbrc.to_string(),
            format!(
                "{mbrc} blocks of {} make a {} request; at most 64M is accepted",
                size_label(bs),
                size_label(multiblock)
            ),
        ));
    }
    if multiblock > dataset.file_size() && test.uses_data_files() {
        return Err(invalid(
            a,
            "mbrc",
            &mbrc.to_string(),
            format!(
                "a multiblock request of {} does not fit in a data file of {}; use a smaller --mbrc or a larger --size",
                size_label(multiblock),
                size_label(dataset.file_size())
            ),
        ));
    }
    let redo = RedoOptions {
        per_commit: a.redo_per_commit,
        think: a.think,
        block: a.redo_block,
        files: a.redo_files,
        file_size: a.redo_file_size,
        durability: a.redo_sync,
        lgwr_cpu: a.lgwr_cpu,
        noise_cpu: a.noise_cpu,
        writers: a.writers as usize,
        submission: a.lgwr_submission.unwrap_or(if a.sync {
            Submission::Sync
        } else {
            Submission::Async
        }),
        group_commit: a.group_commit.map(|commits| GroupCommit {
            commits,
            wait: a.group_commit_wait,
        }),
    };
    if a.group_commit.is_none() && a.source("group-commit-wait") != Source::Default {
        return Err(Error::usage(
            "--group-commit-wait is how long a commit waits for the group of --group-commit to fill; give --group-commit N too, or leave it out",
        ));
    }
    if redo.file_size < 4 << 20 || !redo.file_size.is_multiple_of(redo.block) {
        return Err(invalid(
            a,
            "redo-file-size",
            &size_label(redo.file_size),
            format!(
                "at least 4M and a multiple of the redo block ({})",
                size_label(redo.block)
            ),
        ));
    }
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    for (opt, cpu) in [("lgwr-cpu", redo.lgwr_cpu), ("noise-cpu", redo.noise_cpu)] {
        if let Some(c) = cpu
            && c >= cpus
        {
            return Err(invalid(
                a,
                opt,
                &c.to_string(),
                format!("this machine has CPUs 0..{}", cpus - 1),
            ));
        }
    }
    let oltp = OltpOptions {
        work_unit: a.work_unit as usize,
        update_pct: a.update_pct,
        hotspot_pct: a.hotspot_pct,
        hotspot_size: a.hotspot_size.unwrap_or(0),
        async_reads: a.async_reads,
        cache_size: a.cache_size,
        warm_cache: !a.cold_cache,
    };
    if oltp.hotspot_pct > 0 && oltp.hotspot_size < bs {
        return Err(Error::usage(
            "--hotspot-pct needs --hotspot-size (the size of the hot spot, e.g. 64M)",
        ));
    }
    if oltp.hotspot_size > dataset.size {
        return Err(invalid(
            a,
            "hotspot-size",
            &size_label(oltp.hotspot_size),
            format!("larger than the data set ({})", size_label(dataset.size)),
        ));
    }
    if let Some(c) = oltp.cache_size
        && (c < 16 * bs || c / bs > u32::MAX as u64 / 2)
    {
        return Err(invalid(
            a,
            "cache-size",
            &size_label(c),
            format!(
                "at least 16 blocks ({}) and at most 2^31 blocks",
                size_label(16 * bs)
            ),
        ));
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
            return Err(invalid(
                a,
                "cache-size",
                &size_label(c),
                format!(
                    "it holds {buffers} blocks; {sessions} sessions with --work-unit {} pin up to {} at once, so the cache needs at least {pinned} blocks ({}); use a larger --cache-size or fewer --sessions",
                    oltp.work_unit,
                    sessions * oltp.work_unit as u64,
                    size_label(pinned * bs)
                ),
            ));
        }
    }
    let temp = TempOptions {
        spill_size: a.spill_size,
        temp_io: a.temp_io,
    };
    if temp.spill_size < temp.temp_io && test == Test::Temp {
        return Err(invalid(
            a,
            "spill-size",
            &size_label(temp.spill_size),
            format!(
                "smaller than one --temp-io request ({})",
                size_label(temp.temp_io)
            ),
        ));
    }
    let mut classes = job.as_ref().map(|j| j.classes.clone()).unwrap_or_default();
    default_sizes(&mut classes, bs, multiblock, &redo, &temp);
    check_classes(&mut classes, &dataset, &redo, &temp)?;
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
        progress: a.progress,
        seed: a.seed.unwrap_or_else(rand_seed),
        ash_hz: a.ash_hz,
        destructive: a.destructive,
        yes: a.yes,
        continue_on_error: a.continue_on_error,
        redo,
        oltp,
        temp,
        classes,
        job: job.as_ref().map(|j| j.json.clone()),
        save_job: a.save_job.clone(),
        span: a.span,
        steady: steady(a)?,
        origins: origins(a),
        like: a.like,
        doublewrite: a.doublewrite,
    };
    if job.as_ref().is_some_and(|j| j.test.is_none()) {
        // A job of classes: its sessions are its classes'.
        cfg.sessions = cfg.classes.iter().map(|c| c.sessions).sum::<usize>().max(1);
    }
    if cfg.engine == EngineChoice::Null && cfg.dataset.verify {
        return Err(Error::usage(
            "--verify with --engine null: the null engine reads and writes nothing, so there is nothing to verify; leave out one of them",
        ));
    }
    if cfg.dataset.verify && cfg.test == Test::Job && cfg.writes_data() {
        let reader = cfg
            .classes
            .iter()
            .find(|c| c.event.reads() && c.event.uses_data_files());
        let writer = cfg
            .classes
            .iter()
            .find(|c| c.event.writes() && c.event.uses_data_files());
        if let (Some(r), Some(w)) = (reader, writer) {
            return Err(Error::usage(format!(
                "--verify: class '{}' reads data blocks while class '{}' writes them, and a read that races a write cannot be told from a lost write; verify the writes and the reads in separate jobs (the data set keeps its write sequences between runs)",
                r.name, w.name
            )));
        }
    }
    if let Some(rate) = a.rate {
        if cfg.keep_inflight {
            return Err(Error::usage(
                "--rate with --keep-inflight: an open loop issues on a schedule, not at a constant queue depth; leave out one of them",
            ));
        }
        // A classic test at a rate is its one class, run open loop.
        let Some(mut class) = crate::workload::presets::classic_class(&cfg) else {
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
        if a.typed("depth") {
            return Err(Error::usage(
                "--depth with --rate: at a rate each arrival is one request and --sessions sets how many can be in flight; leave out one of them",
            ));
        }
        class.depth = None;
        class.rate = Some(rate);
        class.poisson = a.arrival == crate::workload::Arrival::Poisson;
        cfg.classes = vec![class];
    }
    if cfg.dataset.verify && !cfg.uses_data_files() {
        return Err(Error::usage(format!(
            "--verify checks data blocks, and {} does not use the data files; leave --verify out",
            cfg.test.name()
        )));
    }
    check_rates(&cfg)?;
    check_group_commit(a, &cfg)?;
    // Against the planned data set now; against the files themselves when planning.
    cfg.check_span(cfg.dataset.file_size())?;
    Ok(cfg)
}

/// `--like innodb`: InnoDB's sizes where none were given (a 16 KiB page, MariaDB's default
/// flush method O_DIRECT, a full doublewrite batch of 128 pages, an extent of 64 pages in
/// flight, 4 KiB log blocks in one 96 MiB `ib_logfile0`), and the flush method's redo sync.
fn like_innodb(a: &RunArgs, test: Test) -> Result<RunArgs> {
    let given = |name: &str| a.sources.contains_key(name);
    // A job naming a test (one --save-job wrote) runs like the test; its classes are Oracle's.
    if test == Test::Job {
        return Err(Error::usage(
            "--like innodb with a job of classes: the classes' events are Oracle's; run InnoDB's shapes as tests (read-iops, read-mbps, write-iops, redo)",
        ));
    }
    if test == Test::WriteMbps {
        return Err(Error::usage(
            "write-mbps with --like innodb: InnoDB has no shape for it (--like innodb runs read-iops, read-mbps, write-iops, redo)",
        ));
    }
    if !a.io_mode.is_flush_method() && given("io-mode") {
        return Err(invalid(
            a,
            "io-mode",
            a.io_mode.name(),
            "with --like innodb the io mode is innodb_flush_method's: fsync, O_DSYNC, O_DIRECT, O_DIRECT_NO_FSYNC",
        ));
    }
    if given("redo-sync") {
        return Err(Error::usage(
            "--redo-sync with --like innodb: the flush method (--io-mode) says how redo is made durable (O_DSYNC opens the log O_DSYNC, the others fdatasync it)",
        ));
    }
    if a.rate.is_some() {
        return Err(Error::usage(
            "--rate with --like innodb: InnoDB's shapes run closed loop (a session issues its next page read, batch or commit when the last is done)",
        ));
    }
    let mut b = a.clone();
    if !given("io-mode") {
        b.io_mode = crate::engine::IoMode::ODirect;
    }
    if !given("block-size") {
        b.block_size = 16 << 10;
    }
    if test == Test::WriteIops && !given("batch") {
        b.batch = 128;
    }
    if test == Test::ReadMbps && !given("depth") {
        b.depth = 64;
    }
    if !given("redo-block") {
        b.redo_block = 4 << 10;
    }
    if !given("redo-files") {
        b.redo_files = 1;
    }
    if !given("redo-file-size") {
        b.redo_file_size = 96 << 20;
    }
    b.redo_sync = match b.io_mode.redo_dsync() {
        Some(true) => RedoDurability::Dsync,
        _ => RedoDurability::Fdatasync,
    };
    Ok(b)
}

/// `--like` another database than Oracle: its sizes and syncs where none were given (as
/// the run is checked, and as `--save-job` writes it).
pub(super) fn like_database(a: &RunArgs, test: Test) -> Result<RunArgs> {
    match a.like {
        Like::Innodb => like_innodb(a, test),
        Like::Postgres => like_postgres(a, test),
        Like::Oracle => Ok(a.clone()),
    }
}

/// `--like postgres`: PostgreSQL's sizes where none were given (8 KiB pages and WAL blocks,
/// 16 MiB WAL segments, the default wal_sync_method fdatasync, a checkpoint batch of 128
/// pages), and the WAL sync method's redo sync. A COPY (write-mbps) refuses --depth and
/// --mbrc: it writes one page at a time.
fn like_postgres(a: &RunArgs, test: Test) -> Result<RunArgs> {
    let given = |name: &str| a.sources.contains_key(name);
    if test == Test::Job {
        return Err(Error::usage(
            "--like postgres with a job of classes: the classes' events are Oracle's; run PostgreSQL's shapes as tests (read-iops, read-mbps, write-iops, write-mbps, redo)",
        ));
    }
    if !a.io_mode.is_wal_sync_method() && given("io-mode") {
        return Err(invalid(
            a,
            "io-mode",
            a.io_mode.name(),
            "with --like postgres the io mode is wal_sync_method's: fdatasync, open_datasync",
        ));
    }
    if given("redo-sync") {
        return Err(Error::usage(
            "--redo-sync with --like postgres: the WAL sync method (--io-mode) says how the WAL is made durable (open_datasync opens it O_DSYNC, fdatasync fdatasyncs it)",
        ));
    }
    if given("doublewrite") {
        return Err(Error::usage(
            "--doublewrite with --like postgres: PostgreSQL has no doublewrite buffer (full-page writes go into the WAL); it is a shape of --like innodb write-iops",
        ));
    }
    if a.rate.is_some() {
        return Err(Error::usage(
            "--rate with --like postgres: PostgreSQL's shapes run closed loop (a session issues its next page read, batch or commit when the last is done)",
        ));
    }
    if !a.sync && (given("async") || given("submission")) {
        return Err(Error::usage(
            "--async with --like postgres: PostgreSQL 15 reads and writes with one synchronous call at a time (pread, pwrite); leave it out",
        ));
    }
    // A COPY writes one page at a time: --depth 1 (as --save-job writes it) or nothing.
    let refused = [
        ("depth", given("depth") && a.depth != 1),
        ("mbrc", given("mbrc")),
    ];
    if test == Test::WriteMbps
        && let Some((name, _)) = refused.into_iter().find(|(_, r)| *r)
    {
        return Err(Error::usage(format!(
            "--{name} with --like postgres write-mbps: a COPY adds one 8 KiB page at a time with its own pwrite (no requests in flight, no multiblock writes); leave it out"
        )));
    }
    let mut b = a.clone();
    b.sync = true;
    if !given("io-mode") {
        b.io_mode = crate::engine::IoMode::Fdatasync;
    }
    if !given("block-size") {
        b.block_size = 8 << 10;
    }
    if test == Test::WriteIops && !given("batch") {
        b.batch = 128;
    }
    if test == Test::WriteMbps {
        b.depth = 1;
        // A COPY's WAL, committed every PAGES_PER_COMMIT pages: a page of it per page (rows
        // filling their pages), or what --redo-per-commit says, up to that.
        let pages = crate::workload::bulk_load::PAGES_PER_COMMIT;
        let most = b.block_size * pages;
        if !given("redo-per-commit") {
            b.redo_per_commit = crate::units::SizeRange { lo: most, hi: most };
        }
        let r = b.redo_per_commit;
        if r.lo != r.hi || r.lo < pages || r.lo > most {
            return Err(invalid(
                a,
                "redo-per-commit",
                &r.label(),
                format!(
                    "with --like postgres write-mbps it is the WAL each COPY of {pages} pages logs: one size from {pages} bytes to {} (a page of WAL per page)",
                    size_label(most)
                ),
            ));
        }
    }
    if !given("redo-block") {
        b.redo_block = 8 << 10;
    }
    if !given("redo-file-size") {
        b.redo_file_size = 16 << 20;
    }
    b.redo_sync = match b.io_mode.redo_dsync() {
        Some(true) => RedoDurability::Dsync,
        _ => RedoDurability::Fdatasync,
    };
    Ok(b)
}

/// Without `--like innodb` or `--like postgres`, their io modes and InnoDB's doublewrite are
/// refused: they would mean nothing to Oracle's shapes.
fn refuse_flush_methods(a: &RunArgs) -> Result<()> {
    if a.io_mode.is_flush_method() {
        return Err(invalid(
            a,
            "io-mode",
            a.io_mode.name(),
            "that is innodb_flush_method's: give it with --like innodb (Oracle's io modes: none, directio, asynch, setall)",
        ));
    }
    if a.io_mode.is_wal_sync_method() {
        return Err(invalid(
            a,
            "io-mode",
            a.io_mode.name(),
            "that is PostgreSQL's wal_sync_method: give it with --like postgres (Oracle's io modes: none, directio, asynch, setall)",
        ));
    }
    if a.sources.contains_key("doublewrite") {
        return Err(Error::usage(
            "--doublewrite: InnoDB's doublewrite buffer is a shape of --like innodb write-iops; add --like innodb",
        ));
    }
    Ok(())
}

/// Beside a job file, what its classes set themselves cannot be typed: it would be
/// ignored. (A job naming a test takes every option of that test.)
fn refuse_beside_job(a: &RunArgs, j: &Job) -> Result<()> {
    if a.typed("rate") {
        return Err(Error::usage(
            "--rate with --job: set `rate` per class in the job file",
        ));
    }
    if j.test.is_some() {
        return Ok(());
    }
    if let Some(o) = a.typed_flags().find(|o| !o.with_classes) {
        let why = match o.name {
            "sessions" => "each class of the job file has its own `sessions`".to_string(),
            "sync" | "async" => "each class of the job file has its own `submission` (and [redo] submission says how LGWR writes the pieces of a commit's write)".to_string(),
            _ => "the job's classes set this themselves (or it shapes a test, which a job names with run.test), so it would be ignored".to_string(),
        };
        let flag = match o.name {
            "sync" | "async" => "--sync/--async".to_string(),
            _ => o.flag(),
        };
        return Err(Error::usage(format!("{flag} with --job: {why}")));
    }
    Ok(())
}

/// A typed option the test does not use would be read and ignored: it is refused.
fn refuse_unused(a: &RunArgs, test: Test) -> Result<()> {
    if test == Test::Job {
        return Ok(());
    }
    match a.typed_flags().find(|o| !o.applies.to(test)) {
        Some(o) => Err(Error::usage(format!(
            "{}: the {} test does not use it; leave it out (dbio run --help lists what each test takes)",
            o.flag(),
            test.name()
        ))),
        None => Ok(()),
    }
}

/// A class without `size` gets its event's natural size (from the event table): one block,
/// MBRC blocks, the redo per commit, or the temp request size.
fn default_sizes(
    classes: &mut [ClassSpec],
    block: u64,
    multiblock: u64,
    redo: &RedoOptions,
    temp: &TempOptions,
) {
    use crate::workload::event::Unit;
    use crate::workload::sizes::RequestSizes;
    for c in classes.iter_mut().filter(|c| c.default_size) {
        c.sizes = match c.event.facts().unit {
            Unit::Block | Unit::None => RequestSizes::Fixed(block),
            Unit::Multiblock => RequestSizes::Fixed(multiblock),
            Unit::Redo if redo.per_commit.lo == redo.per_commit.hi => {
                RequestSizes::Fixed(redo.per_commit.lo)
            }
            Unit::Redo => RequestSizes::Uniform {
                lo: redo.per_commit.lo,
                hi: redo.per_commit.hi,
            },
            Unit::Temp => RequestSizes::Fixed(temp.temp_io),
        };
    }
}

/// Checks each class against the data set and the redo logs: request sizes that fit,
/// multiblock requests (and mixes of sizes) in whole blocks, spills that hold a request.
fn check_classes(
    classes: &mut [ClassSpec],
    d: &DataSetSpec,
    redo: &RedoOptions,
    temp: &TempOptions,
) -> Result<()> {
    use crate::workload::event::Unit;
    for c in classes {
        if c.event.is_temp() {
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
            if c.sizes.max() > 64 << 20 {
                return Err(c.bad_value(
                    "size",
                    format!(
                        "a \"log file sync\" class's redo per commit ({}) is above 64M",
                        size_label(c.sizes.max())
                    ),
                ));
            }
            continue;
        }
        let multiblock = c.event.facts().unit == Unit::Multiblock;
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

/// `--group-commit N`: LGWR can only wait for as many commits as sessions commit at once;
/// more would make every write wait out `--group-commit-wait`.
fn check_group_commit(a: &RunArgs, cfg: &RunConfig) -> Result<()> {
    let Some(g) = cfg.redo.group_commit else {
        return Ok(());
    };
    let committing: usize = crate::workload::presets::classes(cfg)
        .iter()
        .filter(|c| c.commits())
        .map(|c| c.sessions)
        .sum();
    if g.commits <= committing as f64 {
        return Ok(());
    }
    let why = if committing == 0 {
        "no session of this run commits (a \"log file sync\" class, or the redo or oltp test)"
            .to_string()
    } else {
        format!(
            "at most {committing} commit(s) wait at once here (the sessions that commit); give at most {committing}, or more sessions"
        )
    };
    Err(invalid(a, "group-commit", &g.commits.to_string(), why))
}

/// `--steady-state` with `--round`: the measured window must hold the rounds judged together.
fn steady(a: &RunArgs) -> Result<Option<crate::workload::spec::SteadySpec>> {
    use crate::workload::spec::SteadySpec;
    let Some(text) = &a.steady_state else {
        return Ok(None);
    };
    let spec = SteadySpec::parse(text, a.round)
        .map_err(|e| Error::usage(format!("invalid value '{text}' for '--steady-state': {e}")))?;
    let need = a.round * SteadySpec::WINDOW as u32;
    if a.duration < need {
        return Err(Error::usage(format!(
            "--round {}: --duration {} must hold at least {} rounds ({}); give a longer --duration or a shorter --round",
            crate::units::duration_label(a.round),
            crate::units::duration_label(a.duration),
            SteadySpec::WINDOW,
            crate::units::duration_label(need),
        )));
    }
    Ok(Some(spec))
}
