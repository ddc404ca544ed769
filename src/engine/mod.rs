//! How I/O is issued. A test (in `workload/`) builds [`IoRequest`]s; an [`Engine`] performs
//! them and reports [`Completion`]s. Every request of a run goes through an engine — the
//! synchronous events' preads as much as the asynchronous batches — so that an engine that
//! wraps another (`fault`) or does no I/O at all (`null`) reaches all of them. One file per
//! engine behind the one trait: `sync` (pread/pwrite/preadv/pwritev as raw syscalls), `aio`
//! (Linux native AIO over raw syscalls), `uring` (io_uring), `null` (no I/O: dbio's own cost)
//! and `fault` (a test engine around any of them). Each thread owns its own engine instance:
//! no sharing, no locks.
//!
//! Two ways in, as a database has:
//! - [`Engine::execute`]: one request as a synchronous call, completed when it returns —
//!   what fio calls `FIO_SYNCIO` (its queue hook returns `FIO_Q_COMPLETED`). A database
//!   issues its synchronous events (db file sequential read, scattered read) with pread and
//!   preadv whatever its asynchronous engine, so the kernel engines all execute with the
//!   raw syscall; the null engine completes at once.
//! - [`Engine::submit`] and [`Engine::reap`]: requests in flight together. The sync engine
//!   performs them inside `submit`, one after another, and `reap` hands them back.
//!
//! Contract for every engine:
//! - `tag` of a submitted request must be below the engine's capacity and unique among
//!   requests in flight (sessions use their buffer slot number);
//! - buffers stay valid and untouched until the request's completion is reaped;
//! - a completion carries the request's start and completion times (`sys::now_ns`), so that
//!   latency is what the request itself took, whatever the engine.

pub mod aio;
pub mod fault;
pub mod null;
pub mod sync;
pub mod uring;

use std::io;
use std::os::fd::RawFd;

use serde::Serialize;

/// How the database opens and syncs its files (docs/commands.md, `--io-mode`): Oracle's
/// `filesystemio_options` (open flags and whether asynchronous submission is allowed), or
/// InnoDB's `innodb_flush_method` (open flags of data and log files and which of them are
/// fdatasync'ed; docs/events.md, "Flush methods"), or PostgreSQL's `wal_sync_method` (data
/// files buffered and fsync'ed at checkpoint, the WAL buffered and fdatasync'ed or opened
/// O_DSYNC; docs/events.md, "PostgreSQL's shapes and names").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum IoMode {
    /// O_DSYNC, synchronous calls.
    #[serde(rename = "none")]
    None,
    /// O_DIRECT + O_DSYNC, synchronous calls.
    #[serde(rename = "directio")]
    Directio,
    /// O_DSYNC (buffered), asynchronous submission.
    #[serde(rename = "asynch")]
    Asynch,
    /// O_DIRECT + O_DSYNC, asynchronous submission.
    #[serde(rename = "setall")]
    Setall,
    /// innodb_flush_method=fsync: buffered data files, fdatasync after writes; redo O_DIRECT.
    #[serde(rename = "fsync")]
    Fsync,
    /// innodb_flush_method=O_DSYNC: data files O_DIRECT and fdatasync'ed; redo O_DIRECT|O_DSYNC
    /// with no fdatasync.
    #[serde(rename = "O_DSYNC")]
    ODsync,
    /// innodb_flush_method=O_DIRECT (MariaDB's default): data files and redo O_DIRECT, both
    /// fdatasync'ed.
    #[serde(rename = "O_DIRECT")]
    ODirect,
    /// innodb_flush_method=O_DIRECT_NO_FSYNC: as O_DIRECT, but data files are never
    /// fdatasync'ed.
    #[serde(rename = "O_DIRECT_NO_FSYNC")]
    ODirectNoFsync,
    /// wal_sync_method=fdatasync (PostgreSQL's default on Linux): data files and WAL
    /// buffered; the WAL fdatasync'ed after each write, the data files at checkpoint.
    #[serde(rename = "fdatasync")]
    Fdatasync,
    /// wal_sync_method=open_datasync: the WAL opened O_DSYNC (buffered), no fdatasync of it;
    /// data files as with fdatasync.
    #[serde(rename = "open_datasync")]
    OpenDatasync,
}

impl IoMode {
    pub const ALL: [IoMode; 10] = [
        IoMode::None,
        IoMode::Directio,
        IoMode::Asynch,
        IoMode::Setall,
        IoMode::Fsync,
        IoMode::ODsync,
        IoMode::ODirect,
        IoMode::ODirectNoFsync,
        IoMode::Fdatasync,
        IoMode::OpenDatasync,
    ];

    /// The flush methods (`innodb_flush_method`), the io modes of `--like innodb`.
    pub const FLUSH_METHODS: [IoMode; 4] = [
        IoMode::Fsync,
        IoMode::ODsync,
        IoMode::ODirect,
        IoMode::ODirectNoFsync,
    ];

    /// The WAL sync methods (`wal_sync_method`), the io modes of `--like postgres`.
    pub const WAL_SYNC_METHODS: [IoMode; 2] = [IoMode::Fdatasync, IoMode::OpenDatasync];

    /// Parses `none`, `directio`, `asynch`, `setall`, a flush method (`fsync`, `O_DSYNC`,
    /// `O_DIRECT`, `O_DIRECT_NO_FSYNC`) or a WAL sync method (`fdatasync`, `open_datasync`);
    /// any case.
    pub fn parse(text: &str) -> Result<IoMode, String> {
        IoMode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                format!(
                    "'{text}'; accepted: none, directio, asynch, setall (filesystemio_options), or with --like innodb fsync, O_DSYNC, O_DIRECT, O_DIRECT_NO_FSYNC (innodb_flush_method), or with --like postgres fdatasync, open_datasync (wal_sync_method)"
                )
            })
    }

    pub fn name(self) -> &'static str {
        match self {
            IoMode::None => "none",
            IoMode::Directio => "directio",
            IoMode::Asynch => "asynch",
            IoMode::Setall => "setall",
            IoMode::Fsync => "fsync",
            IoMode::ODsync => "O_DSYNC",
            IoMode::ODirect => "O_DIRECT",
            IoMode::ODirectNoFsync => "O_DIRECT_NO_FSYNC",
            IoMode::Fdatasync => "fdatasync",
            IoMode::OpenDatasync => "open_datasync",
        }
    }

    /// An InnoDB flush method, not an Oracle io mode.
    pub fn is_flush_method(self) -> bool {
        IoMode::FLUSH_METHODS.contains(&self)
    }

    /// A PostgreSQL WAL sync method, not an Oracle io mode.
    pub fn is_wal_sync_method(self) -> bool {
        IoMode::WAL_SYNC_METHODS.contains(&self)
    }

    /// Oracle's `filesystemio_options`: every data file O_DSYNC, redo as `--redo-sync` says.
    pub fn is_oracles(self) -> bool {
        !self.is_flush_method() && !self.is_wal_sync_method()
    }

    /// Data files are opened with O_DIRECT.
    pub fn direct(self) -> bool {
        matches!(
            self,
            IoMode::Directio
                | IoMode::Setall
                | IoMode::ODsync
                | IoMode::ODirect
                | IoMode::ODirectNoFsync
        )
    }

    /// Asynchronous submission is allowed (every flush method: InnoDB's native AIO is the
    /// engine's choice; PostgreSQL 15 calls pread and pwrite, one at a time).
    pub fn asynchronous(self) -> bool {
        !matches!(self, IoMode::None | IoMode::Directio) && !self.is_wal_sync_method()
    }

    /// Data files are opened with O_DSYNC (Oracle's modes; no flush or WAL sync method does).
    pub fn data_dsync(self) -> bool {
        self.is_oracles()
    }

    /// Data files (and the doublewrite file) are synced after a flush batch: every flush
    /// method but O_DIRECT_NO_FSYNC, and PostgreSQL's checkpoint whatever its WAL sync method.
    pub fn data_fdatasync(self) -> bool {
        (self.is_flush_method() && self != IoMode::ODirectNoFsync) || self.is_wal_sync_method()
    }

    /// Redo log files are opened with O_DIRECT: in Oracle's direct modes, and with every
    /// flush method (MariaDB decides the log apart: `innodb_log_file_buffering=OFF`).
    pub fn redo_direct(self) -> bool {
        self.direct() || self.is_flush_method()
    }

    /// The flush method opens the redo log O_DSYNC instead of fdatasync'ing it (O_DSYNC,
    /// open_datasync); `None` for Oracle's modes, where `--redo-sync` says.
    pub fn redo_dsync(self) -> Option<bool> {
        (!self.is_oracles()).then_some(matches!(self, IoMode::ODsync | IoMode::OpenDatasync))
    }
}

/// How a test asks for its I/O: the `--sync`/`--async` choice. It picks the events
/// (docs/events.md, "Which test issues which events"); whether the calls really are
/// asynchronous also depends on io mode and engine.
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

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    /// fdatasync of the request's file (no buffer, no bytes): LGWR's `--redo-sync fdatasync`.
    Datasync,
    /// fsync of the request's file: PostgreSQL's checkpointer syncing a data file it wrote.
    Fsync,
}

impl Op {
    /// The operation as a failure message names it.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Datasync => "fdatasync",
            Op::Fsync => "fsync",
        }
    }
}

/// One I/O request. Plain data, built on the stack of a session; no allocation.
#[derive(Debug, Clone, Copy)]
pub struct IoRequest {
    pub op: Op,
    /// Index into the engine's file table.
    pub file: u32,
    pub offset: u64,
    /// Contiguous buffer (when `iov_count == 0`).
    pub buf: *mut u8,
    pub len: u32,
    /// Vectored buffer list (preadv/pwritev) when `iov_count > 0`.
    pub iov: *const libc::iovec,
    pub iov_count: u32,
    pub tag: u64,
}

impl IoRequest {
    pub fn contiguous(
        op: Op,
        file: u32,
        offset: u64,
        buf: *mut u8,
        len: u32,
        tag: u64,
    ) -> IoRequest {
        IoRequest {
            op,
            file,
            offset,
            buf,
            len,
            iov: std::ptr::null(),
            iov_count: 0,
            tag,
        }
    }

    pub fn vectored(op: Op, file: u32, offset: u64, iov: &[libc::iovec], tag: u64) -> IoRequest {
        let len = iov.iter().map(|v| v.iov_len).sum::<usize>() as u32;
        IoRequest {
            op,
            file,
            offset,
            buf: std::ptr::null_mut(),
            len,
            iov: iov.as_ptr(),
            iov_count: iov.len() as u32,
            tag,
        }
    }

    /// An fdatasync of `file`: it completes with result 0.
    pub fn datasync(file: u32, tag: u64) -> IoRequest {
        IoRequest::contiguous(Op::Datasync, file, 0, std::ptr::null_mut(), 0, tag)
    }

    /// An fsync of `file`: it completes with result 0.
    pub fn fsync(file: u32, tag: u64) -> IoRequest {
        IoRequest::contiguous(Op::Fsync, file, 0, std::ptr::null_mut(), 0, tag)
    }

    /// Bytes this request moves when it completes in full.
    #[inline]
    pub fn bytes(&self) -> u64 {
        u64::from(self.len)
    }
}

/// A finished request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Completion {
    pub tag: u64,
    /// Bytes transferred, or a negative errno.
    pub result: i64,
    pub start_ns: u64,
    pub done_ns: u64,
}

/// The interface every engine implements.
pub trait Engine {
    fn kind(&self) -> EngineKind;

    /// Performs one request now, as a synchronous call, and returns its completion (the
    /// request's `tag` is returned as is and need not be below the capacity). Nothing may be
    /// in flight from `submit` on the same buffers.
    fn execute(&mut self, req: &IoRequest) -> Completion;

    /// Submits all `reqs` (one call into the kernel where the engine can). A synchronous
    /// engine performs them here, one after another.
    fn submit(&mut self, reqs: &[IoRequest]) -> io::Result<()>;

    /// Waits until at least `min` requests have completed or `timeout_ms` passed, and writes
    /// up to `out.len()` completions into `out`. Returns how many were written.
    fn reap(&mut self, min: usize, out: &mut [Completion], timeout_ms: u32) -> io::Result<usize>;

    /// The kernel interfaces and optimisations this engine uses, in words (`config.engine_features`):
    /// asked once when the session ends, never per request.
    fn features(&self) -> Vec<&'static str>;
}

/// What the user asked for with `--engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// io_uring, else Linux AIO, else synchronous calls.
    Auto,
    /// io_uring.
    Uring,
    /// Linux native AIO (io_submit/io_getevents), what Oracle uses.
    Aio,
    /// Synchronous pread/pwrite/preadv/pwritev.
    Sync,
    /// No I/O: every request completes at once, without a system call. A measuring aid for
    /// dbio's own cost per request (pacing, timing, histograms, ASH); never the default,
    /// never chosen by auto.
    Null,
}

impl EngineChoice {
    pub const ALL: [EngineChoice; 5] = [
        EngineChoice::Auto,
        EngineChoice::Uring,
        EngineChoice::Aio,
        EngineChoice::Sync,
        EngineChoice::Null,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EngineChoice::Auto => "auto",
            EngineChoice::Uring => "uring",
            EngineChoice::Aio => "aio",
            EngineChoice::Sync => "sync",
            EngineChoice::Null => "null",
        }
    }

    /// Parses `auto`, `uring`, `aio`, `sync` or `null`.
    pub fn parse(text: &str) -> Result<EngineChoice, String> {
        EngineChoice::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                let all: Vec<&str> = EngineChoice::ALL.iter().map(|c| c.name()).collect();
                format!("'{text}'; accepted: {}", all.join(", "))
            })
    }
}

/// The engine actually used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    Uring,
    Aio,
    Sync,
    Null,
}

impl EngineKind {
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Uring => "uring",
            EngineKind::Aio => "aio",
            EngineKind::Sync => "sync",
            EngineKind::Null => "null",
        }
    }
}

/// Why `--engine null` is chosen, as the result records it.
pub const NULL_REASON: &str = "--engine null: no I/O — every request completes at once without a system call, so the figures are dbio's own cost per request (pacing, timing, histograms, ASH), not the storage's";

/// The engine chosen for a run and why.
#[derive(Debug, Clone)]
pub struct Selection {
    pub kind: EngineKind,
    pub reason: String,
}

/// Picks the engine for a run, recording why: `--engine null` whatever the submission (it
/// measures dbio, not I/O); synchronous submission or a synchronous io mode use plain calls;
/// otherwise the requested engine, and `auto` tries uring, aio, sync in turn. An explicitly
/// requested engine that is unavailable is an error, not a silent fallback.
pub fn select(
    choice: EngineChoice,
    io_mode: IoMode,
    submission: Submission,
) -> Result<Selection, String> {
    if choice == EngineChoice::Null {
        return Ok(Selection {
            kind: EngineKind::Null,
            reason: NULL_REASON.into(),
        });
    }
    if submission == Submission::Sync {
        return Ok(Selection {
            kind: EngineKind::Sync,
            reason: "--sync: synchronous calls (pread/pwrite/preadv), as a database issues its synchronous events".into(),
        });
    }
    if !io_mode.asynchronous() {
        return Ok(Selection {
            kind: EngineKind::Sync,
            reason: format!(
                "io mode {} is synchronous (like filesystemio_options={}): asynchronous requests are issued as synchronous calls",
                io_mode.name(),
                io_mode.name()
            ),
        });
    }
    match choice {
        EngineChoice::Null => unreachable!("chosen above"),
        EngineChoice::Sync => Ok(Selection { kind: EngineKind::Sync, reason: "--engine sync".into() }),
        EngineChoice::Uring => uring::probe()
            .map(|()| Selection { kind: EngineKind::Uring, reason: "--engine uring".into() })
            .map_err(|why| format!("--engine uring: io_uring is not available here: {why}; use --engine aio or --engine auto")),
        EngineChoice::Aio => aio::probe()
            .map(|()| Selection { kind: EngineKind::Aio, reason: "--engine aio".into() })
            .map_err(|why| format!("--engine aio: Linux AIO is not available here: {why}; use --engine sync or --engine auto")),
        EngineChoice::Auto => match uring::probe() {
            Ok(()) => Ok(Selection { kind: EngineKind::Uring, reason: "auto: io_uring is available".into() }),
            Err(uring_why) => match aio::probe() {
                Ok(()) => Ok(Selection {
                    kind: EngineKind::Aio,
                    reason: format!("auto: io_uring unavailable ({uring_why}); Linux AIO is available"),
                }),
                Err(aio_why) => Ok(Selection {
                    kind: EngineKind::Sync,
                    reason: format!(
                        "auto: io_uring unavailable ({uring_why}) and Linux AIO unavailable ({aio_why}); synchronous calls"
                    ),
                }),
            },
        },
    }
}

/// Bytes an engine of `kind` opened by [`open`] over `files` files with `capacity` takes at
/// most: its tables per request in flight, and the rings the kernel maps for it (Linux AIO's
/// completion ring, io_uring's submission and completion queues).
pub fn footprint(kind: EngineKind, files: usize, capacity: usize) -> u64 {
    let capacity = capacity.max(1);
    let fds = files * std::mem::size_of::<RawFd>();
    // The box, and the fault engine that may wrap it.
    let boxed = 256;
    let own = match kind {
        EngineKind::Sync => sync::SyncEngine::footprint(capacity),
        EngineKind::Null => null::NullEngine::footprint(capacity),
        EngineKind::Aio => aio::AioEngine::footprint(capacity),
        EngineKind::Uring => uring::UringEngine::footprint(capacity),
    };
    (fds + boxed) as u64 + own
}

/// Opens an engine of `kind` for one session.
///
/// `files` is the run's file table; `capacity` the most requests the session keeps in flight;
/// `buffers` the session's I/O buffer region, which engines may register with the kernel.
/// Returns the engine and, when it had to do without an optimisation, a note saying why.
pub fn open(
    kind: EngineKind,
    files: &[RawFd],
    capacity: usize,
    buffers: Option<(*mut u8, usize)>,
) -> io::Result<(Box<dyn Engine>, Option<String>)> {
    let (engine, note): (Box<dyn Engine>, Option<String>) = match kind {
        EngineKind::Sync => (Box::new(sync::SyncEngine::new(files, capacity)), None),
        EngineKind::Null => (Box::new(null::NullEngine::new(capacity)), None),
        EngineKind::Aio => (Box::new(aio::AioEngine::new(files, capacity)?), None),
        EngineKind::Uring => {
            let (e, note) = uring::UringEngine::new(files, capacity, buffers)?;
            (Box::new(e), note)
        }
    };
    let eio_after = fault::eio_after();
    let stall =
        fault::Stall::from_env().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let panic_after = fault::panic_after();
    if eio_after.is_none() && stall.is_none() && panic_after.is_none() {
        return Ok((engine, note));
    }
    let mut notes: Vec<String> = note.into_iter().collect();
    if let Some(good) = eio_after {
        notes.push(format!(
            "{}: completions after the first {good} fail with EIO (testing)",
            fault::ENV
        ));
    }
    if let Some(s) = stall {
        notes.push(format!(
            "{}: the device stalls {} ms every {} ms (testing)",
            fault::STALL_ENV,
            s.length_ns / 1_000_000,
            s.every_ns / 1_000_000
        ));
    }
    if let Some(n) = panic_after {
        notes.push(format!(
            "{}: each thread panics after {n} completions (testing)",
            fault::PANIC_ENV
        ));
    }
    Ok((
        Box::new(fault::FaultEngine::new(
            engine,
            eio_after,
            stall,
            panic_after,
        )),
        Some(notes.join("; ")),
    ))
}
