//! The thread harness of a run: who a thread is, the start gate, the one life every thread
//! of the run has ([`live`], elbencho's `Worker`: set up, wait at the start gate until all are
//! set up, run, stop the run when it failed, and leak — never free — what the kernel may still
//! use when it left requests outstanding), and how a thread ended.

use std::os::fd::RawFd;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::engine::{Engine, EngineKind};
use crate::measure::stall::StallWatch;
use crate::sys::{self, now_ns};
use crate::workload::redo::LgwrStats;
use crate::workload::spec::RunConfig;
use crate::workload::{Instance, IoFailure, Workload};

/// The file descriptors each kind of thread uses.
pub struct Fds {
    pub data: Vec<RawFd>,
    pub redo: Vec<RawFd>,
    pub temp: Vec<RawFd>,
}

/// Who a thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Session(usize),
    /// A session whose requests a [`super::requester::Requester`] issues (a database
    /// session running SQL).
    Requester(usize),
    Lgwr,
    Dbwr(usize),
    /// The noise thread of the log-writer starvation experiment, on this CPU.
    Noise(usize),
    /// Drops the data files' pages from the page cache every [`crate::sys::DROP_PAGES_EVERY`]
    /// (`--like postgres` reads: PostgreSQL's run keeps its table's pages out the same way).
    CacheDrop,
}

impl Role {
    pub(super) fn name(self) -> String {
        match self {
            Role::Session(i) | Role::Requester(i) => format!("session {i}"),
            Role::Lgwr => "LGWR".into(),
            Role::Dbwr(k) => format!("DBWR {k}"),
            Role::Noise(_) => "noise thread".into(),
            Role::CacheDrop => "page cache dropper".into(),
        }
    }

    /// As `top -H` shows it: `dbio-session-3`, `dbio-lgwr`.
    pub(super) fn thread_name(self) -> String {
        format!("dbio-{}", self.name().to_lowercase().replace(' ', "-"))
    }

    /// Whether the thread ends by itself when the sessions do (the noise thread and the
    /// page cache dropper run until the window is over).
    pub(super) fn ends_by_itself(self) -> bool {
        !matches!(self, Role::Noise(_) | Role::CacheDrop)
    }
}

/// Holds threads until all are set up, then lets them go together.
pub(super) struct StartGate {
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    pub(super) ready: usize,
    pub(super) failed: usize,
    pub(super) open: Option<bool>,
}

impl StartGate {
    pub(super) fn new() -> StartGate {
        StartGate {
            state: Mutex::new(GateState::default()),
            cv: Condvar::new(),
        }
    }
    /// A thread is set up (or failed to be); waits for the gate. True means go.
    pub(super) fn arrive(&self, ok: bool) -> bool {
        let mut s = self.state.lock().unwrap();
        s.ready += 1;
        if !ok {
            s.failed += 1;
        }
        self.cv.notify_all();
        while s.open.is_none() {
            s = self.cv.wait(s).unwrap();
        }
        s.open == Some(true)
    }
    /// Waits for `n` threads to arrive; returns how many failed.
    pub(super) fn wait_ready(&self, n: usize) -> usize {
        let mut s = self.state.lock().unwrap();
        while s.ready < n {
            s = self.cv.wait(s).unwrap();
        }
        s.failed
    }
    pub(super) fn open(&self, go: bool) {
        self.state.lock().unwrap().open = Some(go);
        self.cv.notify_all();
    }
}

/// How a thread ended.
#[derive(Default)]
pub(super) struct ThreadEnd {
    pub(super) failure: Option<IoFailure>,
    /// The first failed request of a session that went on (`--continue-on-error`).
    pub(super) continued: Option<IoFailure>,
    pub(super) setup_error: Option<String>,
    /// About the engine (fallbacks, test engines): `config.engine_notes`.
    pub(super) note: Option<String>,
    /// What the engine used of the kernel (`config.engine_features`).
    pub(super) features: Vec<&'static str>,
    /// Something that did not happen as asked (a thread not pinned): a warning.
    pub(super) warning: Option<String>,
    pub(super) abandoned: bool,
    pub(super) lgwr: Option<LgwrStats>,
    /// A session that issues its own requests ([`super::requester::Requester`]) ended
    /// early: why, and when.
    pub(super) lost: Option<(String, super::requester::Lost)>,
}

impl ThreadEnd {
    /// A thread that could not be set up; `why` names it and says what failed.
    pub(super) fn setup_failed(why: String) -> ThreadEnd {
        ThreadEnd {
            setup_error: Some(why),
            ..Default::default()
        }
    }
}

/// What every thread of a measured window shares, whoever issues its requests.
pub(super) struct Harness<'a> {
    pub(super) gate: StartGate,
    pub(super) window_start: AtomicU64,
    pub(super) window_end: AtomicU64,
    pub(super) stop: &'a AtomicBool,
    /// The threads stop issuing requests: the window ended (planned, steady, or because of
    /// `stop`, which the main thread watches and passes on here).
    pub(super) halt: AtomicBool,
    /// The measured window is over (or never started): threads that do not end by
    /// themselves (noise) end now.
    pub(super) over: AtomicBool,
    /// A thread failed and set `stop` for the run (set before `stop`): a stop that is not
    /// the user's.
    pub(super) failed: AtomicBool,
}

impl<'a> Harness<'a> {
    pub(super) fn new(stop: &'a AtomicBool) -> Harness<'a> {
        Harness {
            gate: StartGate::new(),
            window_start: AtomicU64::new(0),
            window_end: AtomicU64::new(0),
            stop,
            halt: AtomicBool::new(false),
            over: AtomicBool::new(false),
            failed: AtomicBool::new(false),
        }
    }

    /// A thread's failure stops the run for all.
    pub(super) fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// What the threads of dbio's own engines share besides the harness.
pub(super) struct Shared<'a> {
    pub(super) h: &'a Harness<'a>,
    pub(super) cfg: &'a RunConfig,
    pub(super) plan: &'a Workload,
    pub(super) inst: &'a Instance,
    pub(super) fds: &'a Fds,
    pub(super) kind: EngineKind,
    pub(super) buffer_align: usize,
}

/// Sleeps until `deadline_ns` or until `stop` or `done()` — checking every 20 ms, and
/// telling `watch` (the measured window's) each time it looks at the clock.
pub(super) fn sleep_until(
    deadline_ns: u64,
    stop: &AtomicBool,
    done: &impl Fn() -> bool,
    watch: Option<&StallWatch>,
) {
    loop {
        let now = now_ns();
        if let Some(w) = watch {
            w.look(now);
        }
        if now >= deadline_ns || stop.load(Ordering::Relaxed) || done() {
            return;
        }
        let nap = (deadline_ns - now).min(20_000_000);
        if let Some(w) = watch {
            w.sleeping_until(now + nap);
        }
        std::thread::sleep(Duration::from_nanos(nap));
    }
}
/// Starts the thread of `role` running `body`. Every thread of the run has the same small
/// stack ([`super::memory::STACK_RESERVED`]): nothing on a request's path needs more (a
/// session is many; a small stack each keeps thousands of them cheap).
pub(super) fn spawn<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    role: Role,
    body: impl FnOnce() -> ThreadEnd + Send + 'scope,
) -> std::io::Result<std::thread::ScopedJoinHandle<'scope, ThreadEnd>> {
    std::thread::Builder::new()
        .name(role.thread_name())
        .stack_size(super::memory::STACK_RESERVED)
        .spawn_scoped(scope, body)
}

/// What the kernel may still use when a thread leaves requests outstanding: its engine first,
/// then the memory its requests point into, in the order they are let go.
#[derive(Default)]
pub(super) struct InFlight(Vec<Box<dyn std::any::Any>>);

impl InFlight {
    pub(super) fn of(engine: Box<dyn Engine>) -> InFlight {
        InFlight(vec![Box::new(engine)])
    }

    pub(super) fn and(mut self, memory: impl std::any::Any) -> InFlight {
        self.0.push(Box::new(memory));
        self
    }
}

/// How a thread's work ended, and what it used for I/O.
pub(super) struct Finished {
    pub(super) end: ThreadEnd,
    pub(super) io: InFlight,
}

/// The one life of every thread of the run: a descriptor table of its own, as a database
/// process has; `prepare` (buffers, engine: whatever may fail or take time) before the start
/// gate; when every thread is ready and none failed, `run`. A failure stops the run for
/// all; a thread that gave up on outstanding requests leaks its engine and buffers, since
/// the kernel may still write into them.
pub(super) fn live<R>(
    sh: &Harness,
    who: &str,
    prepare: impl FnOnce() -> std::io::Result<R>,
    run: impl FnOnce(R) -> Finished,
) -> ThreadEnd {
    live_in(sh, who, true, prepare, run)
}

/// [`live`], with a descriptor table of its own (`own_fds`) or the process's.
pub(super) fn live_in<R>(
    sh: &Harness,
    who: &str,
    own_fds: bool,
    prepare: impl FnOnce() -> std::io::Result<R>,
    run: impl FnOnce(R) -> Finished,
) -> ThreadEnd {
    // Every descriptor the run uses is open by now. Without a table of its own (a
    // seccomp policy may refuse it) the thread works the same, a little slower.
    if own_fds {
        let _ = sys::private_fd_table();
    }
    // A panic (a bug) must not hang the run: one in preparation still arrives at the gate
    // (failed), one in the run stops the run for all, as an I/O failure does.
    let ready = catch_unwind(AssertUnwindSafe(prepare)).unwrap_or_else(|_| {
        Err(std::io::Error::other(
            "it panicked (a bug in dbio: please report it)",
        ))
    });
    let go = sh.gate.arrive(ready.is_ok());
    let ready = match ready {
        Ok(r) => r,
        Err(e) => {
            return ThreadEnd::setup_failed(format!(
                "{who}: cannot set up: {}",
                crate::error::io_advice(&e)
            ));
        }
    };
    if !go {
        return ThreadEnd::default();
    }
    let Finished { end, io } = match catch_unwind(AssertUnwindSafe(|| run(ready))) {
        Ok(f) => f,
        Err(_) => {
            sh.fail();
            // What it had in flight unwound with it; the run ends with this error.
            return ThreadEnd::setup_failed(format!(
                "{who} panicked (a bug in dbio: please report it); the run was stopped"
            ));
        }
    };
    if end.failure.is_some() || end.lost.is_some() {
        sh.fail();
    }
    if end.abandoned {
        std::mem::forget(io);
    }
    end
}
