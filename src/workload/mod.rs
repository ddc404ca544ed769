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

pub mod event;
pub mod multiblock;
pub mod random_blocks;
pub mod session;
pub mod stream;

use clap::ValueEnum;
use serde::Serialize;

use crate::config::{RunConfig, Submission};
use crate::engine::Op;
use crate::error::{Error, Result};
pub use event::Event;
pub use session::{IoFailure, Session, SessionShape};
pub use stream::Access;

/// The tests of SPEC §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
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
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::ReadIops => "read-iops",
            Test::ReadMbps => "read-mbps",
            Test::WriteIops => "write-iops",
            Test::WriteMbps => "write-mbps",
        }
    }

    /// Whether the test writes to the data set.
    pub fn writes(self) -> bool {
        matches!(self, Test::WriteIops | Test::WriteMbps)
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
}

/// A test made concrete for one run.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The events measured, in report order; sessions record into slot = index here.
    pub events: Vec<Event>,
    pub pattern: Pattern,
    pub shape: SessionShape,
}

/// Builds the plan for `cfg` on a data set of `files` files of `file_size` bytes.
pub fn plan(cfg: &RunConfig, files: usize, file_size: u64, block_size: u64) -> Result<Plan> {
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
    })
}

impl Plan {
    /// Most requests one session keeps in flight.
    pub fn capacity(&self) -> usize {
        match self.pattern {
            Pattern::SequentialRead | Pattern::ScatteredRead => 1,
            Pattern::Batch(_) => self.shape.batch,
            Pattern::Stream(_, _) => self.shape.depth,
        }
    }

    /// Bytes of I/O buffer one session needs.
    pub fn buffer_bytes(&self) -> usize {
        let s = &self.shape;
        let bs = s.block_size as usize;
        match self.pattern {
            Pattern::SequentialRead => bs,
            Pattern::Batch(_) => s.batch * bs,
            // Every other block buffer is used, so the MBRC buffers are not adjacent in
            // memory — as a buffer cache's are not.
            Pattern::ScatteredRead => 2 * s.mbrc * bs,
            Pattern::Stream(_, Access::Sequential) => s.depth * s.mbrc * bs,
            Pattern::Stream(_, Access::Random) => s.depth * bs,
        }
    }

    /// Whether each request is its own wait (synchronous patterns). Sessions then record only
    /// the request; the wait figures are copied from it (see `EventTotals::waits_are_requests`).
    pub fn waits_are_requests(&self) -> bool {
        matches!(
            self.pattern,
            Pattern::SequentialRead | Pattern::ScatteredRead
        )
    }

    /// Whether the pattern submits through an engine (rather than calling pread/preadv itself).
    pub fn uses_engine(&self) -> bool {
        matches!(self.pattern, Pattern::Batch(_) | Pattern::Stream(_, _))
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
        }
    }
}

/// Runs one session's loop until the window ends or `stop` is set.
pub fn run_session(plan: &Plan, s: &mut Session) -> std::result::Result<(), IoFailure> {
    match plan.pattern {
        Pattern::SequentialRead => random_blocks::sequential_read(s),
        Pattern::Batch(op) => random_blocks::batch(s, op),
        Pattern::ScatteredRead => multiblock::scattered_read(s),
        Pattern::Stream(op, access) => stream::stream(s, op, access),
    }
}
