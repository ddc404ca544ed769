//! What I/O each test issues (docs/events.md). A test is a [`Workload`]: the events it measures and
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
//! The write side of the database adds background threads beside the sessions:
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

pub mod bulk_load;
pub mod cache;
pub mod dbwr;
pub mod event;
pub mod flush_batch;
pub mod instance;
pub mod log_buffer;
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
use spec::{OltpOptions, RedoOptions, RunConfig};
pub use stream::Access;

/// The tests a user can run (`dbio run TEST`).
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
    /// The tests a user names (`dbio run TEST`), in the order the README lists them.
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
    /// InnoDB's page flush batch ([`flush_batch`]): doublewrite write and sync, `--batch`
    /// random page writes submitted together, the data files' sync.
    FlushBatch,
    /// PostgreSQL's COPY ([`bulk_load`]): pages appended one by one to the session's own
    /// stripe, each ring buffer's page written back when the ring comes round to it.
    BulkLoad,
}

/// A run made concrete: classes of sessions, each running one [`Pattern`] into its own
/// event slot, and the background threads beside them (LGWR, DBWR). A classic test is one
/// class, its preset ([`presets`]); a job has its own.
#[derive(Debug, Clone)]
pub struct Workload {
    /// The events measured, in report order; threads record into slot = index here.
    pub events: Vec<Event>,
    /// Every session belongs to one class, in order: sessions `first_session ..` of each.
    pub classes: Vec<ClassPlan>,
    /// The classes are a classic test's preset, not a job's: reports show the test.
    pub preset: bool,
    /// A log writer runs beside the sessions (a class commits).
    pub lgwr: bool,
    /// LGWR writes the pieces of a large write one after another, not together (a
    /// synchronous io mode, or `[redo] submission = "sync"`).
    pub lgwr_one_by_one: bool,
    /// Database writer threads beside the sessions (the oltp test).
    pub dbwr: usize,
    /// The data set's block size.
    pub block_size: u64,
    pub redo: RedoOptions,
    pub oltp: OltpOptions,
    /// The events of the database's roles: a commit's wait, the log write, and the log
    /// write's sync when it is an event of its own (InnoDB's).
    pub roles: RoleEvents,
    /// A thread drops the data files' pages from the page cache while the run goes on: the
    /// sessions read buffered (`--like postgres`), and would otherwise read memory.
    pub drops_page_cache: bool,
}

/// The events the database's threads record into, by role: Oracle's names, InnoDB's
/// (`--like innodb`) or PostgreSQL's (`--like postgres`).
#[derive(Debug, Clone, Copy)]
pub struct RoleEvents {
    pub commit: Event,
    pub log_write: Event,
    pub log_sync: Option<Event>,
}

impl RoleEvents {
    pub fn of(like: event::Like) -> RoleEvents {
        match like {
            event::Like::Oracle => RoleEvents {
                commit: Event::LogFileSync,
                log_write: Event::LogFileParallelWrite,
                log_sync: None,
            },
            event::Like::Innodb => RoleEvents {
                commit: Event::InnodbTrxCommit,
                log_write: Event::InnodbLogFileWrite,
                log_sync: Some(Event::InnodbLogFileSync),
            },
            event::Like::Postgres => RoleEvents {
                commit: Event::PgCommit,
                log_write: Event::PgWalWrite,
                log_sync: Some(Event::PgWalSync),
            },
        }
    }
}

impl Workload {
    /// The largest single request the run issues, in bytes: its classes' largest, a DBWR's
    /// block, and the largest piece of LGWR's largest write (`lgwr_largest_write`, as
    /// measured: LGWR writes what the commits left it).
    pub fn largest_request(&self, lgwr_largest_write: u64) -> u64 {
        let classes = (self.classes.iter())
            .map(|c| c.largest_request(self))
            .max()
            .unwrap_or(0);
        let dbwr = if self.dbwr > 0 { self.block_size } else { 0 };
        let lgwr = if self.lgwr {
            redo::largest_piece(lgwr_largest_write, self.redo.block)
        } else {
            0
        };
        classes.max(dbwr).max(lgwr)
    }
}

/// One class of sessions: what they do (`pattern`, over `shape`) and where they record.
#[derive(Debug, Clone)]
pub struct ClassPlan {
    /// The class as the job file (or the test's preset) gave it.
    pub spec: spec::ClassSpec,
    pub pattern: Pattern,
    pub shape: SessionShape,
    /// The class's calls are synchronous: one request at a time.
    pub one_by_one: bool,
    /// The slot of the class's event in [`Workload::events`].
    pub slot: usize,
    /// Sessions `first_session .. first_session + spec.sessions` belong to the class.
    pub first_session: usize,
    /// Temp classes: the temp file of the class's first session (each session has its own).
    pub temp_first_file: usize,
}

impl Pattern {
    /// What a class's sessions run: its kind, else its event's pattern.
    fn of(c: &spec::ClassSpec) -> Pattern {
        use spec::ClassKind::{KeepInflight, Requests, Spills, Transactions};
        match (c.kind, c.event) {
            (Transactions, _) => Pattern::Oltp,
            (Spills, _) => Pattern::Temp,
            (KeepInflight, Event::DbFileParallelRead) => Pattern::Stream(Op::Read, Access::Random),
            (KeepInflight, _) => Pattern::Stream(Op::Write, Access::Random),
            (Requests, Event::DbFileSequentialRead) => Pattern::SequentialRead,
            (Requests, Event::DbFileParallelRead) => Pattern::Batch(Op::Read),
            (Requests, Event::DbFileScatteredRead) => Pattern::ScatteredRead,
            (Requests, Event::DirectPathRead) => Pattern::Stream(Op::Read, Access::Sequential),
            (Requests, Event::DbFileParallelWrite) => Pattern::Batch(Op::Write),
            (Requests, Event::DirectPathWrite) => Pattern::Stream(Op::Write, Access::Sequential),
            (Requests, Event::LogFileSync | Event::InnodbTrxCommit | Event::PgCommit) => {
                Pattern::Commit
            }
            (Requests, Event::InnodbDataFileRead | Event::PgDataFileRead) => {
                Pattern::SequentialRead
            }
            (Requests, Event::InnodbReadAhead | Event::PgDataFileScan) => {
                Pattern::Stream(Op::Read, Access::Sequential)
            }
            (Requests, Event::InnodbFlushBatch | Event::PgDataFileWrite) => Pattern::FlushBatch,
            (Requests, Event::PgDataFileExtend) => Pattern::BulkLoad,
            (Requests, Event::LogFileParallelWrite) => Pattern::RedoWrite,
            (Requests, Event::DirectPathWriteTemp | Event::DirectPathReadTemp) => Pattern::Temp,
            (Requests, e) => unreachable!("no class issues {} (job files refuse it)", e.name()),
        }
    }

    /// Whether the pattern's requests are multiblock (MBRC blocks each).
    fn multiblock(self) -> bool {
        matches!(
            self,
            Pattern::ScatteredRead | Pattern::Stream(_, Access::Sequential)
        )
    }
}

/// The data files a plan's requests may touch: `files` of `file_size` bytes (the span's
/// part of each), blocks of `block_size`.
#[derive(Debug, Clone, Copy)]
struct DataFiles {
    files: usize,
    file_size: u64,
    block_size: u64,
}

/// Builds the plan for `cfg` on a data set of `files` files of `file_size` bytes.
///
/// `--span` is applied here and nowhere else: the classes' shapes — which every pattern
/// draws its offsets from — see files that end where the span ends.
pub fn plan(cfg: &RunConfig, files: usize, file_size: u64, block_size: u64) -> Result<Workload> {
    cfg.check_span(file_size)?;
    let data = DataFiles {
        files,
        file_size: cfg.span.of(file_size, block_size),
        block_size,
    };
    let specs = presets::classes(cfg);
    let mut classes = Vec::with_capacity(specs.len());
    let (mut first_session, mut temp_first_file) = (0, 0);
    for (slot, c) in specs.into_iter().enumerate() {
        let sessions = c.sessions;
        let class = class_plan(cfg, c, data, slot, first_session, temp_first_file)?;
        // Temp classes and doublewrite files: one temp file per session.
        let doublewrite = class.pattern == Pattern::FlushBatch && cfg.doublewrite_bytes().is_some();
        if class.pattern == Pattern::Temp || doublewrite {
            temp_first_file += sessions;
        }
        first_session += sessions;
        classes.push(class);
    }
    let roles = RoleEvents::of(cfg.like);
    let mut events: Vec<Event> = classes.iter().map(|c| c.spec.event).collect();
    if classes.iter().any(|c| c.pattern == Pattern::FlushBatch) {
        events.extend(flush_batch::parts(cfg));
    }
    if classes.iter().any(|c| c.pattern == Pattern::BulkLoad) {
        events.extend([bulk_load::WRITE_BACK, bulk_load::COMMIT]);
    }
    let oltp = classes.iter().any(|c| c.pattern == Pattern::Oltp);
    let spills = classes
        .iter()
        .any(|c| c.spec.kind == spec::ClassKind::Spills);
    if oltp {
        events.extend([Event::LogFileSync, Event::DbFileParallelWrite]);
    }
    if spills {
        events.push(Event::DirectPathReadTemp);
    }
    let commits: Vec<&ClassPlan> = classes.iter().filter(|c| c.spec.commits()).collect();
    let lgwr = !commits.is_empty();
    let mut redo = cfg.redo.clone();
    if lgwr {
        events.push(roles.log_write);
        events.extend(
            roles
                .log_sync
                .filter(|_| redo.durability == spec::RedoDurability::Fdatasync),
        );
        // The log buffer holds the largest commit of any committing class.
        let sizes = |c: &&ClassPlan| match c.pattern {
            Pattern::Commit => (c.spec.sizes.min(), c.spec.sizes.max()),
            _ => (cfg.redo.per_commit.lo, cfg.redo.per_commit.hi),
        };
        redo.per_commit = crate::units::SizeRange {
            lo: commits.iter().map(|c| sizes(c).0).min().unwrap_or(1),
            hi: commits.iter().map(|c| sizes(c).1).max().unwrap_or(1),
        };
    }
    if oltp && cfg.oltp.cache_size.is_some() {
        events.push(Event::FreeBufferWaits);
    }
    Ok(Workload {
        events,
        preset: cfg.classes.is_empty(),
        lgwr,
        lgwr_one_by_one: redo.submission == Submission::Sync || !cfg.io_mode.asynchronous(),
        dbwr: if oltp { cfg.redo.writers } else { 0 },
        block_size,
        redo,
        oltp: cfg.oltp.clone(),
        roles,
        drops_page_cache: cfg.like == event::Like::Postgres
            && classes.iter().any(|c| c.spec.event.reads()),
        classes,
    })
}

/// What one class's sessions run, on `data`.
fn class_plan(
    cfg: &RunConfig,
    mut c: spec::ClassSpec,
    data: DataFiles,
    slot: usize,
    first_session: usize,
    temp_first_file: usize,
) -> Result<ClassPlan> {
    let pattern = Pattern::of(&c);
    if pattern == Pattern::Temp {
        c.spill = Some(c.spill.unwrap_or(cfg.temp.spill_size));
    }
    let uses_data = c.event.uses_data_files() && pattern != Pattern::Temp;
    // Sizes were checked against the planned data set; an existing file may be smaller.
    if uses_data && c.sizes.max() > data.file_size {
        return Err(c.bad_value(
            "size",
            format!(
                "a request of {} does not fit in the data files (the smallest holds {}); give smaller sizes or a larger target",
                crate::units::size_label(c.sizes.max()),
                crate::units::size_label(data.file_size)
            ),
        ));
    }
    let submits_sync = c.submission == Submission::Sync;
    let one_by_one = submits_sync || !cfg.io_mode.asynchronous();
    let weighted = (!c.sizes.is_fixed()).then_some(c.sizes);
    // A single-block class of one size has its request as its "block" (16K reads of an 8K
    // data set); weighted sizes are whole blocks of the data set.
    let single_block = matches!(
        pattern,
        Pattern::SequentialRead
            | Pattern::Batch(_)
            | Pattern::Stream(_, Access::Random)
            | Pattern::FlushBatch
            | Pattern::BulkLoad
    ) || (pattern == Pattern::Oltp);
    let block_size = if single_block && weighted.is_none() {
        c.sizes.max()
    } else {
        data.block_size
    };
    let whole = data.file_size / block_size * block_size;
    // A scan's request is capped by the file; other patterns only record the MBRC parameter.
    let multiblock = if pattern.multiblock() {
        c.sizes.max().min(whole)
    } else {
        cfg.mbrc as u64 * block_size
    };
    let batch = c.batch.unwrap_or(cfg.batch);
    // Open loop: one request (or batch) per arrival, so every request has its schedule.
    let depth = if c.rate.is_some() {
        1
    } else {
        c.depth.unwrap_or(cfg.depth)
    };
    let depth = match pattern {
        Pattern::Stream(_, _) if submits_sync => 1,
        Pattern::BulkLoad => 1,
        Pattern::Stream(_, Access::Random) => batch,
        Pattern::Commit | Pattern::Oltp | Pattern::Temp | Pattern::RedoWrite if one_by_one => 1,
        _ => depth,
    };
    let shape = SessionShape {
        sessions: c.sessions,
        files: data.files,
        file_size: data.file_size,
        block_size,
        batch,
        depth,
        mbrc: (multiblock / block_size) as usize,
        // Drawn per request: weighted sizes, a commit's redo, a log writer class's writes.
        sizes: match pattern {
            Pattern::Commit | Pattern::RedoWrite => Some(c.sizes),
            _ => weighted,
        },
    };
    let own_region = match pattern {
        Pattern::Stream(Op::Write, Access::Sequential) => Some(multiblock),
        Pattern::BulkLoad => Some(block_size),
        _ => None,
    };
    if let Some(write) = own_region {
        // Each session writes its own region: it must hold at least one request.
        let per_file = c.sessions.div_ceil(data.files) as u64;
        if data.file_size / per_file < write {
            return Err(Error::usage(format!(
                "--sessions {}: each session's region of the data set would be smaller than one {} write; use a larger --size or fewer --sessions",
                c.sessions,
                crate::units::size_label(write)
            )));
        }
    }
    Ok(ClassPlan {
        spec: c,
        pattern,
        shape,
        one_by_one,
        slot,
        first_session,
        temp_first_file,
    })
}

impl ClassPlan {
    /// The largest single request one of the class's sessions issues, in bytes.
    pub fn largest_request(&self, plan: &Workload) -> u64 {
        let s = &self.shape;
        let one = s.sizes.map_or(s.block_size, |m| m.max());
        match self.pattern {
            Pattern::SequentialRead
            | Pattern::Batch(_)
            | Pattern::Oltp
            | Pattern::Stream(_, Access::Random) => one,
            // The doublewrite write carries the whole batch.
            Pattern::FlushBatch if plan.events.contains(&Event::InnodbDblwrWrite) => {
                s.batch as u64 * one
            }
            Pattern::FlushBatch | Pattern::BulkLoad => one,
            Pattern::ScatteredRead | Pattern::Stream(_, Access::Sequential) => {
                s.mbrc as u64 * s.block_size
            }
            Pattern::Temp => self.temp_io(),
            Pattern::Commit => 0,
            Pattern::RedoWrite => redo::largest_piece(one, plan.redo.block),
        }
    }

    /// Most requests one of the class's sessions keeps in flight.
    pub fn capacity(&self, plan: &Workload) -> usize {
        match self.pattern {
            Pattern::SequentialRead
            | Pattern::ScatteredRead
            | Pattern::Commit
            | Pattern::BulkLoad => 1,
            Pattern::RedoWrite => redo::MAX_PIECES + 1,
            Pattern::Batch(_) | Pattern::FlushBatch => self.shape.batch,
            Pattern::Stream(_, _) | Pattern::Temp => self.shape.depth,
            Pattern::Oltp => plan.oltp.work_unit,
        }
    }

    /// Bytes of I/O buffer one of the class's sessions needs.
    pub fn buffer_bytes(&self, plan: &Workload) -> usize {
        let s = &self.shape;
        let bs = s.block_size as usize;
        // Single-block patterns of a class with weighted sizes: room for the largest.
        let one = s.sizes.map_or(bs, |m| m.max() as usize);
        match self.pattern {
            Pattern::SequentialRead | Pattern::BulkLoad => one,
            // The doublewrite write is the batch's pages, contiguous in the buffer.
            Pattern::Batch(_) | Pattern::FlushBatch => s.batch * one,
            // Every other block buffer is used, so the MBRC buffers are not adjacent in
            // memory — as a buffer cache's are not.
            Pattern::ScatteredRead => 2 * s.mbrc * bs,
            Pattern::Stream(_, Access::Sequential) => s.depth * s.mbrc * bs,
            Pattern::Stream(_, Access::Random) => s.depth * bs,
            Pattern::Commit => one,
            Pattern::Oltp => plan.oltp.work_unit * bs + plan.redo.per_commit.hi as usize,
            Pattern::Temp => s.depth * self.temp_io() as usize,
            // The redo a write carries is copied from here into the writer's log buffer.
            Pattern::RedoWrite => one,
        }
    }

    /// Temp classes: bytes per temp request.
    pub fn temp_io(&self) -> u64 {
        self.spec.sizes.max()
    }

    /// Temp classes: bytes each session spills (and of its temp file), in whole requests.
    pub fn spill_bytes(&self) -> u64 {
        let io = self.temp_io();
        self.spec.spill.unwrap_or(0) / io * io
    }

    /// Bytes per request.
    pub fn request_bytes(&self) -> u64 {
        match self.pattern {
            Pattern::SequentialRead
            | Pattern::Batch(_)
            | Pattern::Stream(_, Access::Random)
            | Pattern::FlushBatch
            | Pattern::BulkLoad => self.shape.block_size,
            Pattern::ScatteredRead | Pattern::Stream(_, Access::Sequential) => {
                self.shape.mbrc as u64 * self.shape.block_size
            }
            Pattern::Oltp => self.shape.block_size,
            Pattern::Temp => self.temp_io(),
            Pattern::Commit => 0,
            Pattern::RedoWrite => self.shape.sizes.map_or(0, |m| m.mean() as u64),
        }
    }
}

impl Workload {
    /// The class session `id` belongs to, and its index within the class.
    pub fn class_of(&self, id: usize) -> (&ClassPlan, usize) {
        let c = self
            .classes
            .iter()
            .find(|c| (c.first_session..c.first_session + c.spec.sessions).contains(&id))
            .expect("every session belongs to a class");
        (c, id - c.first_session)
    }

    /// The first class: the test's preset, or a job's first class (its shape is what the
    /// result's configuration shows).
    pub fn main(&self) -> &ClassPlan {
        &self.classes[0]
    }

    /// The class DBWR writes for: the one running transactions.
    pub fn transactions(&self) -> Option<&ClassPlan> {
        self.classes.iter().find(|c| c.pattern == Pattern::Oltp)
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

    /// Most bytes of I/O buffer any session needs.
    pub fn buffer_bytes(&self) -> usize {
        (self.classes.iter())
            .map(|c| c.buffer_bytes(self))
            .max()
            .unwrap_or(0)
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

/// Runs one session of `class` until the window ends or `stop` is set.
pub fn run_session(
    plan: &Workload,
    class: &ClassPlan,
    s: &mut Session,
) -> std::result::Result<(), IoFailure> {
    s.ash.on_cpu();
    let r = match class.pattern {
        Pattern::SequentialRead => random_blocks::sequential_read(s),
        Pattern::Batch(op) => random_blocks::batch(s, op),
        Pattern::ScatteredRead => multiblock::scattered_read(s),
        Pattern::Stream(op, access) => stream::stream(s, op, access),
        Pattern::Commit => redo::commit_loop(class, s),
        Pattern::Oltp => oltp::transactions(plan, s),
        Pattern::Temp => temp::spills(plan, class, s),
        Pattern::FlushBatch => flush_batch::flush_batches(plan, s),
        Pattern::BulkLoad => bulk_load::copy(plan, s),
        Pattern::RedoWrite => {
            unreachable!("a log writer class runs as a log writer (run/roles.rs)")
        }
    };
    s.ash.idle();
    r
}
