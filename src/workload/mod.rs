//! What I/O each test issues (SPEC §3–4). A test is a [`Plan`]: the events it measures and
//! one [`Pattern`] per session. The patterns live in their own files and drive an engine
//! through `engine::Engine`; they never know which engine it is.
//!
//! | test | `--async` | `--sync` |
//! |---|---|---|
//! | read-iops | [`Pattern::Batch`] reads: db file parallel read | [`Pattern::SequentialRead`]: db file sequential read |
//! | read-mbps | [`Pattern::Stream`] reads: direct path read | [`Pattern::ScatteredRead`]: db file scattered read |
//! | write-iops | [`Pattern::Batch`] writes: db file parallel write | same, written one by one |
//! | write-mbps | [`Pattern::Stream`] writes: direct path write | same, one request at a time |
//!
//! `--keep-inflight` turns the async read-iops/write-iops batches into a constant queue depth
//! of `--batch` random blocks ([`Pattern::Stream`] with [`Access::Random`]).
//!
//! The write side of the database (SPEC §3–4) adds background threads beside the sessions:
//!
//! | test | sessions | background |
//! |---|---|---|
//! | redo | [`Pattern::Commit`]: generate redo, think, commit: log file sync | LGWR ([`redo`]): log file parallel write |
//! | oltp | [`Pattern::Oltp`] ([`oltp`]): read a work unit, maybe update it and commit | LGWR; DBWR ([`dbwr`]): db file parallel write |
//! | temp | [`Pattern::Temp`] ([`temp`]): write a spill, read it back: direct path write/read temp | — |
//!
//! A job file's classes ([`ClassPlan`]) run these patterns side by side, each class with its
//! own sessions, sizes ([`sizes`]) and event slot; a "log file parallel write" class is a
//! log writer of its own ([`Pattern::RedoWrite`]).
//!
//! The memory they share — log buffer, dirty-block queue, buffer cache, ASH slots — is the
//! [`Instance`].

pub mod cache;
pub mod dbwr;
pub mod event;
pub mod instance;
pub mod multiblock;
pub mod oltp;
pub mod presets;
pub mod random_blocks;
pub mod redo;
pub mod session;
pub mod sizes;
pub mod span;
pub mod spec;
pub mod stream;
pub mod temp;

use serde::Serialize;

use crate::engine::Op;
use crate::engine::Submission;
use crate::error::{Error, Result};
pub use event::Event;
pub use instance::Instance;
pub use session::{IoFailure, Session, SessionShape};
use spec::{OltpOptions, RedoOptions, RunConfig, TempOptions};
pub use stream::Access;

/// The tests of SPEC §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Random single-block reads: "db file parallel read" (async) / "db file sequential read" (sync).
    ReadIops,
    /// Multiblock scans: "direct path read" (async) / "db file scattered read" (sync).
    ReadMbps,
    /// DBWR-style batches of random block writes: "db file parallel write".
    WriteIops,
    /// Sequential multiblock writes: "direct path write".
    WriteMbps,
    /// Committing sessions and one log writer: "log file sync", "log file parallel write".
    Redo,
    /// SLOB-like mix of reads, updates, redo and commits, with DBWR and LGWR.
    Oltp,
    /// Sort/hash spills written and read back: "direct path write temp" / "direct path read temp".
    Temp,
    /// The I/O classes of a job file (`--job`).
    Job,
}

/// How open-loop arrivals are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    Fixed,
    Poisson,
}

impl Arrival {
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Fixed => "fixed",
            Arrival::Poisson => "poisson",
        }
    }
}

impl Test {
    /// The tests a user names (`dbio run TEST`), in SPEC order.
    pub const CLASSIC: [Test; 7] = [
        Test::ReadIops,
        Test::ReadMbps,
        Test::WriteIops,
        Test::WriteMbps,
        Test::Redo,
        Test::Oltp,
        Test::Temp,
    ];

    /// The test called `name` (`read-iops`), `job` included.
    pub fn from_name(name: &str) -> Option<Test> {
        Test::CLASSIC
            .into_iter()
            .chain([Test::Job])
            .find(|t| t.name() == name)
    }

    /// Whether the test writes data blocks (and so changes their verify sequences).
    pub fn writes_data(self) -> bool {
        matches!(self, Test::WriteIops | Test::WriteMbps | Test::Oltp)
    }

    pub fn name(self) -> &'static str {
        match self {
            Test::ReadIops => "read-iops",
            Test::ReadMbps => "read-mbps",
            Test::WriteIops => "write-iops",
            Test::WriteMbps => "write-mbps",
            Test::Redo => "redo",
            Test::Oltp => "oltp",
            Test::Temp => "temp",
            Test::Job => "job",
        }
    }

    /// Whether the test writes (to data files, redo logs or temp files), and so needs a data
    /// set directory dbio created.
    pub fn writes(self) -> bool {
        !matches!(self, Test::ReadIops | Test::ReadMbps)
    }

    /// Whether the test reads or writes the data files (redo and temp use only their own).
    pub fn uses_data_files(self) -> bool {
        !matches!(self, Test::Redo | Test::Temp)
    }

    /// Whether the test has LGWR and redo log files.
    pub fn uses_redo(self) -> bool {
        matches!(self, Test::Redo | Test::Oltp)
    }
}

/// What one session does in its loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// One random block at a time with `pread` (db file sequential read).
    SequentialRead,
    /// `--batch` random blocks submitted in one call, waited for together
    /// (db file parallel read / db file parallel write).
    Batch(Op),
    /// MBRC blocks with one `preadv` into separate block buffers, scanning files front to
    /// back (db file scattered read).
    ScatteredRead,
    /// `depth` requests in flight: multiblock requests scanning (reads) or filling the
    /// session's own region (writes) sequentially (direct path read / direct path write), or
    /// random single blocks at a constant queue depth (`--keep-inflight`).
    Stream(Op, Access),
    /// Generate redo, optionally think, commit and wait for LGWR (log file sync).
    Commit,
    /// The OLTP transaction loop.
    Oltp,
    /// Write a spill to the session's temp file, read it back (a job class: one of them).
    Temp,
    /// A "log file parallel write" class: the one log writer, writing redo of the class's
    /// sizes at its rate (or back to back) — no sessions commit.
    RedoWrite,
}

/// A test made concrete for one run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The events measured, in report order; sessions record into slot = index here.
    pub events: Vec<Event>,
    pub pattern: Pattern,
    pub shape: SessionShape,
    /// A log writer runs beside the sessions.
    pub lgwr: bool,
    /// Database writer threads beside the sessions.
    pub dbwr: usize,
    /// Synchronous submission (--sync or a synchronous io mode): DBWR writes one by one,
    /// LGWR writes its pieces one after another, temp I/O one request at a time.
    pub sync: bool,
    pub redo: RedoOptions,
    pub oltp: OltpOptions,
    pub temp: TempOptions,
    /// Job files: the I/O classes, each with its own sessions (in order) and event slot.
    pub classes: Vec<ClassPlan>,
    /// Temp file of the plan's first session (temp classes of a job share the run's temp
    /// files in order; session `local_id` uses `temp_first_file + local_id`).
    pub temp_first_file: usize,
}

/// One I/O class of a job: its sessions run `plan` (a classic test's plan for its event and
/// request size) and record into event slot `slot`.
#[derive(Debug, Clone)]
pub struct ClassPlan {
    pub spec: spec::ClassSpec,
    pub plan: Plan,
    pub slot: usize,
    /// Sessions `first_session .. first_session + spec.sessions` belong to the class.
    pub first_session: usize,
}

/// The classic test that issues `event` (job classes run its pattern).
fn test_for(event: Event) -> Test {
    match event {
        Event::DbFileSequentialRead | Event::DbFileParallelRead => Test::ReadIops,
        Event::DbFileScatteredRead | Event::DirectPathRead => Test::ReadMbps,
        Event::DbFileParallelWrite => Test::WriteIops,
        Event::LogFileSync | Event::LogFileParallelWrite => Test::Redo,
        Event::DirectPathWriteTemp | Event::DirectPathReadTemp => Test::Temp,
        _ => Test::WriteMbps,
    }
}

/// The plan one job class's sessions run: the classic test's plan for its event, with the
/// class's request sizes, sessions, batch and depth.
fn class_plan(
    cfg: &RunConfig,
    c: &spec::ClassSpec,
    (files, file_size, block_size): (usize, u64, u64),
    temp_first_file: usize,
) -> Result<Plan> {
    let data = c.event.uses_data_files();
    // Sizes were checked against the planned data set; an existing file may be smaller.
    if data && c.sizes.max() > file_size {
        return Err(c.bad_value(
            "size",
            format!(
                "a request of {} does not fit in the data files (the smallest holds {}); give smaller sizes or a larger target",
                crate::units::size_label(c.sizes.max()),
                crate::units::size_label(file_size)
            ),
        ));
    }
    let mut ccfg = cfg.clone();
    ccfg.classes.clear();
    ccfg.test = test_for(c.event);
    ccfg.submission = c.submission;
    ccfg.sessions = c.sessions;
    ccfg.keep_inflight = false;
    ccfg.batch = c.batch.unwrap_or(cfg.batch);
    // Open loop: one request (or batch) per arrival, so every request has its schedule.
    ccfg.depth = if c.rate.is_some() {
        1
    } else {
        c.depth.unwrap_or(cfg.depth)
    };
    let weighted = (!c.sizes.is_fixed()).then_some(c.sizes);
    let mut shape_block = block_size;
    match c.event {
        Event::LogFileSync => {
            // A commit's wait is synchronous; LGWR's pieces go out together in async modes.
            ccfg.submission = Submission::Async;
            ccfg.redo.per_commit = crate::units::SizeRange {
                lo: c.sizes.min(),
                hi: c.sizes.max(),
            };
            // Think between generating redo and committing, as the redo test does.
            ccfg.redo.think = c.think;
        }
        Event::DirectPathWriteTemp | Event::DirectPathReadTemp => {
            ccfg.temp.temp_io = c.sizes.max();
            ccfg.temp.spill_size = c.spill.unwrap_or(cfg.temp.spill_size);
        }
        Event::LogFileParallelWrite => {}
        Event::DbFileScatteredRead | Event::DirectPathRead | Event::DirectPathWrite => {
            ccfg.mbrc = (c.sizes.max() / block_size) as usize;
        }
        _ if weighted.is_none() => {
            // One size: the class's "block" is its request (16K reads of an 8K data set).
            ccfg.dataset.block_size = c.sizes.max();
            shape_block = c.sizes.max();
        }
        _ => {} // weighted single-block requests: whole blocks of the data set
    }
    let mut p = plan_within(&ccfg, files, file_size, shape_block)?;
    p.events = vec![c.event];
    p.lgwr = false;
    p.temp_first_file = temp_first_file;
    // A redo write class always draws its sizes (they are not blocks of the data set).
    p.shape.sizes = match c.event {
        Event::LogFileParallelWrite => Some(c.sizes),
        _ => weighted,
    };
    if c.event == Event::LogFileParallelWrite {
        p.pattern = Pattern::RedoWrite;
    }
    Ok(p)
}

/// The plan of a job file's classes (`cfg.classes`): each class's sessions run its own plan
/// and record into its own event slot; committing classes share one LGWR, whose writes are
/// one more event after the classes'.
fn job_plan(cfg: &RunConfig, files: usize, file_size: u64, block_size: u64) -> Result<Plan> {
    let mut classes = Vec::with_capacity(cfg.classes.len());
    let (mut first_session, mut temp_first_file) = (0, 0);
    for (slot, c) in cfg.classes.iter().enumerate() {
        let p = class_plan(cfg, c, (files, file_size, block_size), temp_first_file)?;
        if p.pattern == Pattern::Temp {
            temp_first_file += c.sessions;
        }
        classes.push(ClassPlan {
            spec: c.clone(),
            plan: p,
            slot,
            first_session,
        });
        first_session += c.sessions;
    }
    let commits: Vec<&ClassPlan> = classes
        .iter()
        .filter(|c| c.spec.event == Event::LogFileSync)
        .collect();
    let lgwr = !commits.is_empty();
    let mut redo = cfg.redo.clone();
    if lgwr {
        // The log buffer holds the largest commit of any class.
        let hi = commits
            .iter()
            .map(|c| c.spec.sizes.max())
            .max()
            .unwrap_or(1);
        let lo = commits
            .iter()
            .map(|c| c.spec.sizes.min())
            .min()
            .unwrap_or(1);
        redo.per_commit = crate::units::SizeRange { lo, hi };
    }
    let mut events: Vec<Event> = cfg.classes.iter().map(|c| c.event).collect();
    if lgwr {
        events.push(Event::LogFileParallelWrite);
    }
    // LGWR writes its pieces together unless told otherwise or the io mode is synchronous.
    let sync = if lgwr {
        cfg.redo.submission == Submission::Sync || !cfg.io_mode.asynchronous()
    } else {
        classes.iter().all(|c| c.plan.sync)
    };
    let first = classes.first().expect("a job has classes").plan.clone();
    Ok(Plan {
        events,
        sync,
        lgwr,
        dbwr: 0,
        redo,
        classes,
        temp_first_file: 0,
        ..first
    })
}

/// Builds the plan for `cfg` on a data set of `files` files of `file_size` bytes.
///
/// `--span` is applied here and nowhere else: the plan's shape — which every pattern draws
/// its offsets from — sees files that end where the span ends.
pub fn plan(cfg: &RunConfig, files: usize, file_size: u64, block_size: u64) -> Result<Plan> {
    span::check(cfg, file_size)?;
    plan_within(cfg, files, cfg.span.of(file_size, block_size), block_size)
}

/// The plan on data files whose first `file_size` bytes requests may touch.
fn plan_within(cfg: &RunConfig, files: usize, file_size: u64, block_size: u64) -> Result<Plan> {
    let sync = cfg.submission == Submission::Sync || !cfg.io_mode.asynchronous();
    let mut plan = Plan {
        events: Vec::new(),
        pattern: Pattern::Commit,
        shape: SessionShape {
            sessions: cfg.sessions,
            files,
            file_size,
            block_size,
            batch: cfg.batch,
            depth: if sync { 1 } else { cfg.depth },
            mbrc: 1,
            sizes: None,
        },
        lgwr: false,
        dbwr: 0,
        sync,
        redo: cfg.redo.clone(),
        oltp: cfg.oltp.clone(),
        temp: cfg.temp.clone(),
        classes: Vec::new(),
        temp_first_file: 0,
    };
    if !cfg.classes.is_empty() {
        // Job files, and classic tests at a --rate.
        return job_plan(cfg, files, file_size, block_size);
    }
    match cfg.test {
        Test::Job => unreachable!("a job has classes"),
        Test::Redo => {
            plan.events = vec![Event::LogFileSync, Event::LogFileParallelWrite];
            plan.lgwr = true;
            return Ok(plan);
        }
        Test::Oltp => {
            let read = if cfg.oltp.async_reads {
                Event::DbFileParallelRead
            } else {
                Event::DbFileSequentialRead
            };
            plan.events = vec![
                read,
                Event::LogFileSync,
                Event::DbFileParallelWrite,
                Event::LogFileParallelWrite,
            ];
            if cfg.oltp.cache_size.is_some() {
                plan.events.push(Event::FreeBufferWaits);
            }
            plan.pattern = Pattern::Oltp;
            plan.lgwr = true;
            plan.dbwr = cfg.redo.writers;
            plan.shape.batch = cfg.batch.max(cfg.oltp.work_unit);
            return Ok(plan);
        }
        Test::Temp => {
            plan.events = vec![Event::DirectPathWriteTemp, Event::DirectPathReadTemp];
            plan.pattern = Pattern::Temp;
            return Ok(plan);
        }
        _ => {}
    }
    let sync = cfg.submission == Submission::Sync;
    let (event, pattern) = match (cfg.test, sync) {
        (Test::ReadIops, false) if cfg.keep_inflight => (
            Event::DbFileParallelRead,
            Pattern::Stream(Op::Read, Access::Random),
        ),
        (Test::ReadIops, false) => (Event::DbFileParallelRead, Pattern::Batch(Op::Read)),
        (Test::ReadIops, true) => (Event::DbFileSequentialRead, Pattern::SequentialRead),
        (Test::ReadMbps, false) => (
            Event::DirectPathRead,
            Pattern::Stream(Op::Read, Access::Sequential),
        ),
        (Test::ReadMbps, true) => (Event::DbFileScatteredRead, Pattern::ScatteredRead),
        (Test::WriteIops, false) if cfg.keep_inflight => (
            Event::DbFileParallelWrite,
            Pattern::Stream(Op::Write, Access::Random),
        ),
        (Test::WriteIops, _) => (Event::DbFileParallelWrite, Pattern::Batch(Op::Write)),
        (Test::WriteMbps, _) => (
            Event::DirectPathWrite,
            Pattern::Stream(Op::Write, Access::Sequential),
        ),
        (Test::Redo | Test::Oltp | Test::Temp | Test::Job, _) => unreachable!("planned above"),
    };
    let multiblock = cfg
        .multiblock_bytes()
        .min(file_size / block_size * block_size);
    let depth = match pattern {
        Pattern::Stream(_, _) if sync => 1,
        Pattern::Stream(_, Access::Random) => cfg.batch,
        _ => cfg.depth,
    };
    let shape = SessionShape {
        sessions: cfg.sessions,
        files,
        file_size,
        block_size,
        batch: cfg.batch,
        depth,
        mbrc: (multiblock / block_size) as usize,
        sizes: None,
    };
    if pattern == Pattern::Stream(Op::Write, Access::Sequential) {
        // Each session writes its own region: it must hold at least one request.
        let per_file = cfg.sessions.div_ceil(files) as u64;
        if file_size / per_file < multiblock {
            return Err(Error::usage(format!(
                "--sessions {}: each session's region of the data set would be smaller than one {} write; use a larger --size or fewer --sessions",
                cfg.sessions,
                crate::units::size_label(multiblock)
            )));
        }
    }
    Ok(Plan {
        events: vec![event],
        pattern,
        shape,
        ..plan
    })
}

impl Plan {
    /// Most requests one session keeps in flight.
    pub fn capacity(&self) -> usize {
        match self.pattern {
            Pattern::SequentialRead | Pattern::ScatteredRead | Pattern::Commit => 1,
            Pattern::RedoWrite => redo::MAX_PIECES + 1,
            Pattern::Batch(_) => self.shape.batch,
            Pattern::Stream(_, _) | Pattern::Temp => self.shape.depth,
            Pattern::Oltp => self.oltp.work_unit,
        }
    }

    /// Bytes of I/O buffer one session needs.
    pub fn buffer_bytes(&self) -> usize {
        let s = &self.shape;
        let bs = s.block_size as usize;
        // Single-block patterns of a class with weighted sizes: room for the largest.
        let one = s.sizes.map_or(bs, |m| m.max() as usize);
        match self.pattern {
            Pattern::SequentialRead => one,
            Pattern::Batch(_) => s.batch * one,
            // Every other block buffer is used, so the MBRC buffers are not adjacent in
            // memory — as a buffer cache's are not.
            Pattern::ScatteredRead => 2 * s.mbrc * bs,
            Pattern::Stream(_, Access::Sequential) => s.depth * s.mbrc * bs,
            Pattern::Stream(_, Access::Random) => s.depth * bs,
            Pattern::Commit => self.redo.per_commit.hi as usize,
            Pattern::Oltp => self.oltp.work_unit * bs + self.redo.per_commit.hi as usize,
            Pattern::Temp => s.depth * self.temp.temp_io as usize,
            // The redo a write carries is copied from here into the writer's log buffer.
            Pattern::RedoWrite => s.sizes.map_or(1, |m| m.max() as usize),
        }
    }

    /// The class session `id` belongs to, and its index within the class (job runs).
    pub fn class_of(&self, id: usize) -> Option<(&ClassPlan, usize)> {
        self.classes
            .iter()
            .find(|c| (c.first_session..c.first_session + c.spec.sessions).contains(&id))
            .map(|c| (c, id - c.first_session))
    }

    /// The slot of `event` in `events` (recording into it).
    pub fn slot(&self, event: Event) -> usize {
        self.events
            .iter()
            .position(|e| *e == event)
            .unwrap_or(usize::MAX)
    }

    /// Whether each request of `event` is its own wait (synchronous events, commits). Threads
    /// then record only the request; the wait figures are copied from it (see
    /// `EventTotals::waits_are_requests`).
    pub fn waits_are_requests(event: Event) -> bool {
        event.facts().waits_are_requests
    }

    /// Bytes per request.
    pub fn request_bytes(&self) -> u64 {
        match self.pattern {
            Pattern::SequentialRead | Pattern::Batch(_) | Pattern::Stream(_, Access::Random) => {
                self.shape.block_size
            }
            Pattern::ScatteredRead | Pattern::Stream(_, Access::Sequential) => {
                self.shape.mbrc as u64 * self.shape.block_size
            }
            Pattern::Oltp => self.shape.block_size,
            Pattern::Temp => self.temp.temp_io,
            Pattern::Commit => 0,
            Pattern::RedoWrite => self.shape.sizes.map_or(0, |m| m.mean() as u64),
        }
    }
}

/// Think time: the session is idle (not in DB time) for a duration drawn from `range`,
/// waking early when the run stops.
pub fn think(s: &mut Session, range: crate::units::DurationRange) {
    let ns = range.pick_ns(&mut s.rng);
    idle_for(ns, s.ash, s.stop);
}

/// Idles (for ASH) for `ns`, waking early when `stop` is set.
pub fn idle_for(ns: u64, ash: &crate::measure::ash::AshSlot, stop: &std::sync::atomic::AtomicBool) {
    ash.idle();
    let until = crate::sys::now_ns() + ns;
    loop {
        let now = crate::sys::now_ns();
        if now >= until || stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_nanos(
            (until - now).min(20_000_000),
        ));
    }
    ash.on_cpu();
}

/// Runs one session's loop until the window ends or `stop` is set.
pub fn run_session(plan: &Plan, s: &mut Session) -> std::result::Result<(), IoFailure> {
    s.ash.on_cpu();
    let r = match plan.pattern {
        Pattern::SequentialRead => random_blocks::sequential_read(s),
        Pattern::Batch(op) => random_blocks::batch(s, op),
        Pattern::ScatteredRead => multiblock::scattered_read(s),
        Pattern::Stream(op, access) => stream::stream(s, op, access),
        Pattern::Commit => redo::commit_loop(plan, s),
        Pattern::Oltp => oltp::transactions(plan, s),
        Pattern::Temp => temp::spills(plan, s),
        Pattern::RedoWrite => {
            unreachable!("a log writer class runs as a log writer (run/measure.rs)")
        }
    };
    s.ash.idle();
    r
}
