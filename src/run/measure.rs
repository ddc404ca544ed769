//! The measured run: one thread per session, LGWR and DBWR when the test has them, an
//! optional noise thread, and the ASH sampler. Every thread of the run but the sampler has
//! the one life [`live`] gives it (elbencho's `Worker`): set up, wait at the start gate until
//! all are set up, run, stop the run when it failed, and leak — never free — what the kernel
//! may still use when it left requests outstanding. The main thread keeps time and closes
//! each second of history.

use std::os::fd::RawFd;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::engine::{self, Engine, EngineKind};
use crate::measure::ash::{self, AshHistory};
use crate::measure::os::OsSampler;
use crate::measure::stall::{Stall, StallWatch};
use crate::measure::{
    DbTotals, EventTotals, Recorder, Sampler, SecondPoint, SessionCounters, Window,
};
use crate::progress::Progress;
use crate::sys::{self, AlignedBuf, now_ns};
use crate::workload::redo::{Lgwr, LgwrStats, MAX_PIECES};
use crate::workload::spec::RunConfig;
use crate::workload::{self, Event, Instance, IoFailure, Plan, Session};

/// The file descriptors each kind of thread uses.
pub struct Fds {
    pub data: Vec<RawFd>,
    pub redo: Vec<RawFd>,
    pub temp: Vec<RawFd>,
}

/// What the threads measured.
pub struct Measurement {
    pub totals: Vec<EventTotals>,
    pub db: DbTotals,
    pub history: Vec<SecondPoint>,
    pub ash: AshHistory,
    pub lgwr: Option<LgwrStats>,
    pub measured_seconds: f64,
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    pub failures: Vec<IoFailure>,
    /// Sessions that went on after failed requests (`--continue-on-error`): the first each.
    pub continued: Vec<IoFailure>,
    pub setup_errors: Vec<String>,
    pub engine_notes: Vec<String>,
    pub interrupted: bool,
    pub abandoned: usize,
    /// Why LGWR could not be pinned, or the noise thread not started.
    pub pinning_notes: Vec<String>,
    /// What the OS saw over the measured window (None when it never started).
    pub os: Option<OsSampler>,
    /// Stretches of the measured window in which dbio did not run (stopped, starved,
    /// suspended).
    pub stalls: Vec<Stall>,
}

/// Who a thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Session(usize),
    Lgwr,
    Dbwr(usize),
    /// The noise thread of the log-writer starvation experiment, on this CPU.
    Noise(usize),
}

impl Role {
    fn name(self) -> String {
        match self {
            Role::Session(i) => format!("session {i}"),
            Role::Lgwr => "LGWR".into(),
            Role::Dbwr(k) => format!("DBWR {k}"),
            Role::Noise(_) => "noise thread".into(),
        }
    }

    /// As `top -H` shows it: `dbio-session-3`, `dbio-lgwr`.
    fn thread_name(self) -> String {
        format!("dbio-{}", self.name().to_lowercase().replace(' ', "-"))
    }

    /// Whether the thread ends by itself when the sessions do (the noise thread runs until
    /// the window is over).
    fn ends_by_itself(self) -> bool {
        !matches!(self, Role::Noise(_))
    }
}

/// Holds threads until all are set up, then lets them go together.
struct StartGate {
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    ready: usize,
    failed: usize,
    open: Option<bool>,
}

impl StartGate {
    fn new() -> StartGate {
        StartGate {
            state: Mutex::new(GateState::default()),
            cv: Condvar::new(),
        }
    }
    /// A thread is set up (or failed to be); waits for the gate. True means go.
    fn arrive(&self, ok: bool) -> bool {
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
    fn wait_ready(&self, n: usize) -> usize {
        let mut s = self.state.lock().unwrap();
        while s.ready < n {
            s = self.cv.wait(s).unwrap();
        }
        s.failed
    }
    fn open(&self, go: bool) {
        self.state.lock().unwrap().open = Some(go);
        self.cv.notify_all();
    }
}

/// How a thread ended.
#[derive(Default)]
struct ThreadEnd {
    failure: Option<IoFailure>,
    /// The first failed request of a session that went on (`--continue-on-error`).
    continued: Option<IoFailure>,
    setup_error: Option<String>,
    /// About the engine (fallbacks, test engines): `config.engine_notes`.
    note: Option<String>,
    /// Something that did not happen as asked (a thread not pinned): a warning.
    warning: Option<String>,
    abandoned: bool,
    lgwr: Option<LgwrStats>,
}

impl ThreadEnd {
    /// A thread that could not be set up; `why` names it and says what failed.
    fn setup_failed(why: String) -> ThreadEnd {
        ThreadEnd {
            setup_error: Some(why),
            ..Default::default()
        }
    }
}

/// What every thread shares.
struct Shared<'a> {
    cfg: &'a RunConfig,
    plan: &'a Plan,
    inst: &'a Instance,
    fds: &'a Fds,
    kind: EngineKind,
    buffer_align: usize,
    gate: StartGate,
    window_start: AtomicU64,
    window_end: AtomicU64,
    stop: &'a AtomicBool,
    /// The measured window is over (or never started): threads that do not end by
    /// themselves (noise) end now.
    over: AtomicBool,
}

/// Sleeps until `deadline_ns` or until `stop` or `done()` — checking every 20 ms, and
/// telling `watch` (the measured window's) each time it looks at the clock.
fn sleep_until(
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

/// The live progress line: phase, elapsed/remaining, and per event the last complete
/// second's IOPS, MiB/s and p99 (events that did nothing that second are left out).
fn progress_line(
    phase: &str,
    elapsed_s: f64,
    total_s: f64,
    plan: &Plan,
    last: &[SecondPoint],
) -> String {
    let mut line = format!(
        "{phase} {:.1}/{:.0} s ({:.0} s left)",
        elapsed_s.min(total_s),
        total_s,
        (total_s - elapsed_s).max(0.0).ceil()
    );
    for p in last.iter().filter(|p| p.requests > 0).take(3) {
        let ev = plan.events[p.event];
        line.push_str(&format!(
            " | {}: {} IOPS",
            ev.name(),
            crate::report::summary::thousands(p.requests)
        ));
        if p.bytes > 0 {
            line.push_str(&format!(
                " {:.1} MiB/s",
                p.bytes as f64 / (1u64 << 20) as f64
            ));
        }
        if let Some(p99) = p.p99_us {
            line.push_str(&format!(" p99 {}", crate::units::latency_label(p99)));
        }
    }
    line
}

/// Sleeps until `deadline_ns` like [`sleep_until`], redrawing the progress line every
/// `progress::TICK` with `draw()`.
fn wait_drawing(
    deadline_ns: u64,
    stop: &AtomicBool,
    done: impl Fn() -> bool,
    progress: &Progress,
    draw: impl Fn() -> String,
    watch: Option<&StallWatch>,
) {
    loop {
        let now = now_ns();
        if now >= deadline_ns || stop.load(Ordering::Relaxed) || done() {
            return;
        }
        if progress.is_drawn() {
            progress.set_message(draw());
        }
        let tick = crate::progress::TICK.as_nanos() as u64;
        sleep_until(deadline_ns.min(now + tick), stop, &done, watch);
    }
}

/// Runs the plan's threads through warm-up and the measured window. `os_devices` are the
/// block devices under the data set, (kernel name, layer), sampled once a second.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    cfg: &RunConfig,
    plan: &Plan,
    inst: &Instance,
    fds: &Fds,
    kind: EngineKind,
    buffer_align: usize,
    stop: &Arc<AtomicBool>,
    progress: &Progress,
    os_devices: Vec<(String, String)>,
    hooks: &super::RunHooks,
) -> Measurement {
    let n = cfg.sessions;
    let mut roles: Vec<Role> = (0..n).map(Role::Session).collect();
    if plan.lgwr {
        roles.push(Role::Lgwr);
    }
    roles.extend((0..plan.dbwr).map(Role::Dbwr));
    roles.extend(cfg.redo.noise_cpu.map(Role::Noise));
    let counters = SessionCounters::many(roles.len(), plan.events.len());
    let shared = Shared {
        cfg,
        plan,
        inst,
        fds,
        kind,
        buffer_align,
        gate: StartGate::new(),
        window_start: AtomicU64::new(0),
        window_end: AtomicU64::new(0),
        stop,
        over: AtomicBool::new(false),
    };
    let finished = AtomicUsize::new(0);
    let mut sampler = Sampler::new(counters.clone(), plan.events.len());
    sampler.keep_intervals = hooks.on_second.is_some();
    let on_second = |t: u32, sampler: &Sampler| {
        if let Some(f) = &hooks.on_second {
            f(t, sampler.intervals());
        }
    };
    let warmup_ns = cfg.warmup.as_nanos() as u64;
    let duration_ns = cfg.duration.as_nanos() as u64;
    let ash_done = AtomicBool::new(false);
    let mut pinning_notes = Vec::new();

    let mut ends: Vec<ThreadEnd> = Vec::with_capacity(roles.len());
    let mut interrupted = false;
    let mut measured_ns = 0u64;
    let mut cpu = (0.0, 0.0);
    let mut ash_history = AshHistory::default();
    let mut os: Option<OsSampler> = None;
    let mut stalls = Vec::new();
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(roles.len());
        for (i, &role) in roles.iter().enumerate() {
            let counters = counters[i].clone();
            let (shared, finished) = (&shared, &finished);
            let spawned = spawn(scope, role, move || {
                let end = role_thread(role, shared, counters);
                if let Role::Session(_) = role {
                    shared.inst.sessions_running.fetch_sub(1, Ordering::SeqCst);
                }
                if role.ends_by_itself() {
                    finished.fetch_add(1, Ordering::Relaxed);
                }
                end
            });
            match spawned {
                Ok(h) => handles.push(h),
                // The run goes on without its noise (a warning says so).
                Err(e) if !role.ends_by_itself() => {
                    pinning_notes.push(format!("cannot start the {}: {e}", role.name()))
                }
                Err(e) => {
                    ends.push(ThreadEnd::setup_failed(format!(
                        "cannot start the {} thread: {e} (use fewer --sessions)",
                        role.name()
                    )));
                    break;
                }
            }
        }
        let ending = roles.iter().filter(|r| r.ends_by_itself()).count();
        let failed = shared.gate.wait_ready(handles.len());
        let set_up = failed == 0 && !ends.iter().any(|e| e.setup_error.is_some());
        // The caller may hold the start (every host of a cluster starts at one instant).
        let start_at = match (&hooks.wait_for_start, set_up) {
            (_, false) => None,
            (None, true) => Some(now_ns()),
            (Some(wait), true) => wait().inspect(|&at| sleep_until(at, stop, &|| false, None)),
        };
        if start_at.is_none() || stop.load(Ordering::Relaxed) {
            interrupted = set_up;
            shared.gate.open(false);
        } else {
            let t0 = now_ns();
            if let Some(f) = &hooks.on_start {
                f(t0);
            }
            let start = t0 + warmup_ns;
            let end = start + duration_ns;
            shared.window_start.store(start, Ordering::Relaxed);
            shared.window_end.store(end, Ordering::Relaxed);
            shared.gate.open(true);
            let ash_thread = {
                let (board, ash_done) = (&inst.ash, &ash_done);
                let states = 2 + plan.events.len();
                std::thread::Builder::new()
                    .name("dbio-ash".into())
                    .spawn_scoped(scope, move || {
                        ash::sample(board, states, cfg.ash_hz, start, end, ash_done)
                    })
                    .ok()
            };
            let all_done = || finished.load(Ordering::Relaxed) == ending;
            let (warmup_s, duration_s) = (cfg.warmup.as_secs_f64(), cfg.duration.as_secs_f64());
            // Watched from the start of the warm-up: a stretch in which dbio did not run
            // that begins in the warm-up and lasts into the window is seen when the thread
            // wakes up, and the part of it inside the window is reported.
            let watch = StallWatch::new(start, end);
            wait_drawing(
                start,
                stop,
                all_done,
                progress,
                || {
                    let elapsed = now_ns().saturating_sub(t0) as f64 / 1e9;
                    progress_line("warm-up", elapsed, warmup_s, plan, &[])
                },
                Some(&watch),
            );
            let cpu0 = sys::process_cpu_seconds();
            let os = os.insert(OsSampler::start(os_devices));
            let mut t = 1u32;
            let mut last: Vec<SecondPoint> = Vec::new();
            loop {
                let boundary = (start + u64::from(t) * 1_000_000_000).min(end);
                wait_drawing(
                    boundary,
                    stop,
                    all_done,
                    progress,
                    || {
                        let elapsed = now_ns().saturating_sub(start) as f64 / 1e9;
                        progress_line("measuring", elapsed, duration_s, plan, &last)
                    },
                    Some(&watch),
                );
                let now = now_ns();
                watch.look(now);
                if now < boundary || now >= end {
                    // Stopped early, or the window is over: the OS's last (partial) second
                    // ends here, before the threads are joined, to match the window.
                    if now > start {
                        os.sample(t);
                    }
                    break;
                }
                last = sampler.close_second(t).to_vec();
                on_second(t, &sampler);
                os.sample(t);
                t += 1;
            }
            if progress.is_drawn() {
                progress.set_message("stopping: waiting for the last requests".into());
            }
            stalls = watch.stalls();
            let cpu1 = sys::process_cpu_seconds();
            cpu = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
            ash_done.store(true, Ordering::Relaxed);
            shared.over.store(true, Ordering::Relaxed);
            for h in handles.drain(..) {
                ends.push(h.join().unwrap_or_else(|_| ThreadEnd {
                    setup_error: Some("a dbio thread panicked".into()),
                    ..Default::default()
                }));
            }
            let joined = now_ns();
            interrupted = joined < end;
            measured_ns = joined.min(end).saturating_sub(start);
            if measured_ns > 0 {
                sampler.close_second(t);
                on_second(t, &sampler);
            }
            if let Some(h) = ash_thread {
                ash_history = h.join().unwrap_or_default();
            }
        }
        shared.over.store(true, Ordering::Relaxed);
        for h in handles {
            ends.push(h.join().unwrap_or_default());
        }
    });
    pinning_notes.extend(ends.iter().filter_map(|e| e.warning.clone()));

    let mut engine_notes: Vec<String> = ends.iter().filter_map(|e| e.note.clone()).collect();
    engine_notes.sort();
    engine_notes.dedup();
    let mut totals = sampler.totals();
    for (t, ev) in totals.iter_mut().zip(&plan.events) {
        if Plan::waits_are_requests(*ev) {
            t.waits_are_requests();
        }
    }
    Measurement {
        totals,
        db: sampler.db_totals(),
        history: std::mem::take(&mut sampler.history),
        ash: ash_history,
        lgwr: ends.iter_mut().find_map(|e| e.lgwr.take()),
        measured_seconds: measured_ns as f64 / 1e9,
        cpu_user_s: cpu.0,
        cpu_system_s: cpu.1,
        failures: ends.iter().filter_map(|e| e.failure.clone()).collect(),
        continued: ends.iter().filter_map(|e| e.continued.clone()).collect(),
        setup_errors: ends.iter().filter_map(|e| e.setup_error.clone()).collect(),
        engine_notes,
        interrupted: interrupted && stop.load(Ordering::Relaxed),
        abandoned: ends.iter().filter(|e| e.abandoned).count(),
        pinning_notes,
        os,
        stalls,
    }
}

/// Starts the thread of `role` running `body`. Every thread of the run has the same small
/// stack ([`super::memory::STACK_RESERVED`]): nothing on a request's path needs more (a
/// session is many; a small stack each keeps thousands of them cheap).
fn spawn<'scope, 'env>(
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
struct InFlight(Vec<Box<dyn std::any::Any>>);

impl InFlight {
    fn of(engine: Box<dyn Engine>) -> InFlight {
        InFlight(vec![Box::new(engine)])
    }

    fn and(mut self, memory: impl std::any::Any) -> InFlight {
        self.0.push(Box::new(memory));
        self
    }
}

/// How a thread's work ended, and what it used for I/O.
struct Finished {
    end: ThreadEnd,
    io: InFlight,
}

/// The one life of every thread of the run: a descriptor table of its own, as a database
/// process has; `prepare` (buffers, engine: whatever may fail or take time) before the start
/// gate; when every thread is ready and none failed, `run`. A failure stops the run for
/// all; a thread that gave up on outstanding requests leaks its engine and buffers, since
/// the kernel may still write into them.
fn live<R>(
    sh: &Shared,
    who: &str,
    prepare: impl FnOnce() -> std::io::Result<R>,
    run: impl FnOnce(R) -> Finished,
) -> ThreadEnd {
    // Every descriptor the run uses is open by now. Without a table of its own (a
    // seccomp policy may refuse it) the thread works the same, a little slower.
    let _ = sys::private_fd_table();
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
            sh.stop.store(true, Ordering::Relaxed);
            // What it had in flight unwound with it; the run ends with this error.
            return ThreadEnd::setup_failed(format!(
                "{who} panicked (a bug in dbio: please report it); the run was stopped"
            ));
        }
    };
    if end.failure.is_some() {
        sh.stop.store(true, Ordering::Relaxed);
    }
    if end.abandoned {
        std::mem::forget(io);
    }
    end
}

/// One thread: its role's preparation and loop.
fn role_thread(role: Role, sh: &Shared, counters: Arc<SessionCounters>) -> ThreadEnd {
    match role {
        Role::Lgwr => lgwr_thread(sh, counters),
        Role::Session(id) => match sh.plan.class_of(id) {
            (c, local) if c.pattern == workload::Pattern::RedoWrite => {
                redo_writer_thread(id, c, local, sh, counters)
            }
            _ => session_thread(role, id, sh, counters),
        },
        Role::Dbwr(k) => session_thread(role, sh.cfg.sessions + 1 + k, sh, counters),
        Role::Noise(cpu) => {
            let prepare = || Ok(pin(cpu, "the noise thread"));
            live(sh, &role.name(), prepare, |warning| {
                noise(&sh.over);
                let end = ThreadEnd {
                    warning,
                    ..Default::default()
                };
                Finished {
                    end,
                    io: InFlight::default(),
                }
            })
        }
    }
}

/// Pins the calling thread to `cpu`; a warning when that failed.
fn pin(cpu: usize, who: &str) -> Option<String> {
    sys::pin_to_cpu(cpu)
        .err()
        .map(|e| format!("{who} could not be pinned to CPU {cpu}: {e}"))
}

/// The noise thread of the log-writer starvation experiment: ~3 ms of computation, 1 ms of
/// sleep, until the run is over.
fn noise(over: &AtomicBool) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    while !over.load(Ordering::Relaxed) {
        let until = now_ns() + 3_000_000;
        while now_ns() < until {
            for _ in 0..1000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
            }
            std::hint::black_box(x);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn window(sh: &Shared) -> Window {
    Window {
        start_ns: sh.window_start.load(Ordering::Relaxed),
        end_ns: sh.window_end.load(Ordering::Relaxed),
    }
}

/// The seed of thread `id`'s random choices.
fn rng_seed(cfg: &RunConfig, id: usize) -> u64 {
    cfg.seed ^ (id as u64).wrapping_mul(0xd134_2543_de82_ef95)
}

/// The state of thread `id`'s data to write (`--fill`).
fn fill_state(cfg: &RunConfig, id: usize) -> u64 {
    cfg.seed ^ (id as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// A foreground session or a DBWR: both are a [`Session`] running a loop.
fn session_thread(role: Role, id: usize, sh: &Shared, counters: Arc<SessionCounters>) -> ThreadEnd {
    let cfg = sh.cfg;
    let plan = sh.plan;
    let is_dbwr = matches!(role, Role::Dbwr(_));
    // A session runs its class's pattern and records into the class's slot; a DBWR writes
    // what the transactions' class dirtied.
    let (class, local) = match role {
        Role::Session(i) => plan.class_of(i),
        _ => (
            plan.transactions().expect("DBWR writes for transactions"),
            0,
        ),
    };
    let fds: &[RawFd] = match class.pattern {
        workload::Pattern::Temp => &sh.fds.temp,
        _ => &sh.fds.data,
    };
    let (buffer_bytes, capacity) = if is_dbwr {
        (
            class.shape.batch * class.shape.block_size as usize,
            class.shape.batch,
        )
    } else {
        (class.buffer_bytes(plan), class.capacity(plan))
    };
    if let (Role::Session(i), Some(log)) = (role, sh.inst.redo.as_ref()) {
        log.register_session(i);
    }
    let who = format!("{} ({} engine)", role.name(), sh.kind.name());
    let prepare = || {
        let mut buffers = AlignedBuf::new(buffer_bytes.max(1), sh.buffer_align)?;
        cfg.dataset
            .fill
            .write_buffer(buffers.as_mut_slice(), fill_state(cfg, id));
        let region = (buffers.as_mut_ptr(), buffers.len());
        let (engine, note) = engine::open(sh.kind, fds, capacity, Some(region))?;
        Ok((buffers, engine, note))
    };
    live(sh, &who, prepare, |(buffers, engine, note)| {
        let ash = match role {
            Role::Dbwr(k) => sh.inst.dbwr_ash(k),
            _ => sh.inst.session_ash(id),
        };
        let mut session = Session {
            id,
            local_id: local,
            slot: if is_dbwr {
                plan.slot(Event::DbFileParallelWrite)
            } else {
                class.slot
            },
            pacer: (!is_dbwr).then(|| class_pacer(sh, class, local)).flatten(),
            event: if is_dbwr {
                Event::DbFileParallelWrite
            } else {
                class.spec.event
            },
            // A committing class thinks between its redo and its commit (redo.rs), and the
            // oltp test between its transactions (oltp.rs), not here.
            think: class
                .spec
                .think
                .filter(|_| class.pattern != workload::Pattern::Commit && !is_dbwr),
            shape: &class.shape,
            blocks_per_file: class.shape.file_size / class.shape.block_size,
            rec: Recorder::new(counters, window(sh)),
            ash,
            inst: sh.inst,
            stop: sh.stop,
            rng: fastrand::Rng::with_seed(rng_seed(cfg, id)),
            engine,
            buffers,
            completions: vec![engine::Completion::default(); capacity.max(1)],
            write_seq: 0,
            abandoned: false,
            continue_on_error: cfg.continue_on_error,
            first_error: None,
            // Temp and commit loops do not touch the data files.
            verify: (sh.inst.verify.as_ref())
                .filter(|_| {
                    is_dbwr
                        || !matches!(
                            class.pattern,
                            workload::Pattern::Temp | workload::Pattern::Commit
                        )
                })
                .map(|v| v.session(capacity)),
        };
        let outcome = if is_dbwr {
            workload::dbwr::dbwr(plan, &mut session)
        } else {
            workload::run_session(plan, class, &mut session)
        };
        let continued = session.first_error.take();
        let abandoned = session.abandoned;
        let Session {
            engine, buffers, ..
        } = session;
        Finished {
            end: ThreadEnd {
                failure: outcome.err(),
                continued,
                note,
                abandoned,
                ..Default::default()
            },
            io: InFlight::of(engine).and(buffers),
        }
    })
}

/// The open-loop schedule of session `local` of class `c`, if the class has a rate. It starts
/// with the warm-up, so the window starts in steady state.
fn class_pacer(
    sh: &Shared,
    c: &workload::ClassPlan,
    local: usize,
) -> Option<workload::session::Pacer> {
    let spec = &c.spec;
    // A batch event's arrival is a whole batch: arrivals/s = requests/s ÷ batch.
    let per_arrival = match spec.event {
        Event::DbFileParallelRead | Event::DbFileParallelWrite => c.shape.batch as f64,
        _ => 1.0,
    };
    spec.rate.map(|rate| {
        let start = window(sh)
            .start_ns
            .saturating_sub(sh.cfg.warmup.as_nanos() as u64);
        workload::session::Pacer::new(
            rate / per_arrival,
            spec.sessions,
            local,
            spec.poisson,
            start,
        )
    })
}

/// The engine of a log writer, over the redo log files and its log buffer.
fn log_writer_engine(
    sh: &Shared,
    log: &workload::redo::RedoLog,
) -> std::io::Result<(Box<dyn Engine>, Option<String>)> {
    engine::open(
        sh.kind,
        &sh.fds.redo,
        MAX_PIECES + 1,
        Some(log.ring_region()),
    )
}

/// A "log file parallel write" class: a log writer of its own, writing redo of the class's
/// sizes at its rate into the redo log files. No session commits; its ASH slot is the
/// class session's.
fn redo_writer_thread(
    id: usize,
    c: &workload::ClassPlan,
    local: usize,
    sh: &Shared,
    counters: Arc<SessionCounters>,
) -> ThreadEnd {
    let cfg = sh.cfg;
    let sizes = c.shape.sizes.expect("a redo write class has its sizes");
    let most = sizes.max();
    let who = format!("session {id} (log writer of class '{}')", c.spec.name);
    let prepare = || {
        let warning = cfg.redo.lgwr_cpu.and_then(|cpu| pin(cpu, "LGWR"));
        // The log buffer holds a few writes; the redo copied into it comes from `redo`.
        let log = workload::redo::RedoLog::new(1, cfg.redo.block, most, sh.buffer_align)?;
        let mut redo = vec![0u8; most as usize];
        cfg.dataset
            .fill
            .write_buffer(&mut redo, fill_state(cfg, id));
        let (engine, note) = log_writer_engine(sh, &log)?;
        Ok((log, redo, engine, note, warning))
    };
    live(
        sh,
        &who,
        prepare,
        |(log, mut redo, engine, note, warning)| {
            let running = AtomicUsize::new(1);
            let ash = sh.inst.session_ash(id);
            let mut writer = Lgwr::new(
                &log,
                &sh.fds.redo,
                cfg.redo.file_size,
                cfg.redo.sync,
                (engine, c.sync),
                Recorder::new(counters, window(sh)),
                ash,
                c.slot,
                &running,
            );
            writer.stop = Some(sh.stop);
            let mut rng = fastrand::Rng::with_seed(rng_seed(cfg, id));
            ash.on_cpu();
            let outcome = writer.paced_writes(
                &mut redo,
                &sizes,
                class_pacer(sh, c, local),
                c.spec.think,
                &mut rng,
            );
            ash.idle();
            let Lgwr {
                engine,
                stats,
                abandoned,
                ..
            } = writer;
            Finished {
                end: ThreadEnd {
                    failure: outcome.err(),
                    note,
                    warning,
                    abandoned,
                    lgwr: Some(stats),
                    ..Default::default()
                },
                // The log buffer is what the redo writes are written from.
                io: InFlight::of(engine).and(log),
            }
        },
    )
}

/// The log writer.
fn lgwr_thread(sh: &Shared, counters: Arc<SessionCounters>) -> ThreadEnd {
    let log = sh
        .inst
        .redo
        .as_ref()
        .expect("plan with LGWR has a log buffer");
    let who = format!("LGWR ({} engine)", sh.kind.name());
    let prepare = || {
        let warning = sh.cfg.redo.lgwr_cpu.and_then(|cpu| pin(cpu, "LGWR"));
        log.register_lgwr();
        let (engine, note) = log_writer_engine(sh, log)?;
        Ok((engine, note, warning))
    };
    live(sh, &who, prepare, |(engine, note, warning)| {
        // Multi-piece writes go out together through the engine; synchronous modes write the
        // pieces one after another.
        let mut lgwr = Lgwr::new(
            log,
            &sh.fds.redo,
            sh.cfg.redo.file_size,
            sh.cfg.redo.sync,
            (engine, sh.plan.lgwr_sync),
            Recorder::new(counters, window(sh)),
            sh.inst.lgwr_ash(),
            sh.plan.slot(Event::LogFileParallelWrite),
            &sh.inst.sessions_running,
        );
        lgwr.stop = Some(sh.stop);
        let outcome = lgwr.run();
        Finished {
            end: ThreadEnd {
                failure: outcome.err(),
                note,
                warning,
                abandoned: lgwr.abandoned,
                lgwr: Some(lgwr.stats),
                ..Default::default()
            },
            io: InFlight::of(lgwr.engine),
        }
    })
}
