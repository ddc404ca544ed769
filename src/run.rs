//! Running one test: data set → engine → sessions → measured window → result (SPEC §5.2).
//!
//! Phases: prepare (unmeasured) → all sessions set up and start together → warm-up
//! (unmeasured) → measured window → stop. The main thread does the timing and samples the
//! counters once a second; sessions only issue I/O and record it.

use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::config::{RunConfig, Submission};
use crate::dataset::{self, DataSet, FillOptions, OpenFlags, TargetKind};
use crate::engine::{self, EngineKind, Selection};
use crate::error::{Error, ExitCode, Result};
use crate::measure::{EventTotals, Recorder, Sampler, SecondPoint, SessionCounters, Window};
use crate::report::{self, RunResult, result as rj};
use crate::sys::{self, AlignedBuf, DioAlignment, now_ns};
use crate::units::{duration_label, size_label};
use crate::warnings::Warning;
use crate::workload::{self, IoFailure, Plan, Session};

/// What a finished run produced.
pub struct RunOutcome {
    pub result: RunResult,
    pub run_dir: PathBuf,
    pub summary: String,
    pub exit: ExitCode,
}

/// Opens (or creates) the data set a run needs.
pub fn open_data_set(cfg: &RunConfig, stop: &AtomicBool) -> Result<DataSet> {
    let target = &cfg.dataset.target;
    match dataset::target_kind(target)? {
        Some(kind @ (TargetKind::File | TargetKind::BlockDevice)) => {
            if cfg.test.writes() {
                return Err(Error::usage(format!(
                    "--target {}: {} writes, and dbio writes only into data sets it created; give a directory as --target",
                    target.display(),
                    cfg.test.name()
                )));
            }
            dataset::existing_target(target, kind, cfg.dataset.block_size)
        }
        _ => {
            let written = AtomicU64::new(0);
            let fill = FillOptions {
                seed: cfg.seed,
                buffered: false,
                written: &written,
                stop,
            };
            dataset::prepare(&cfg.dataset, &fill)
        }
    }
}

/// Runs `cfg` to the end (or until `stop`), writes the run directory, returns the outcome.
pub fn run(cfg: &RunConfig, stop: &Arc<AtomicBool>) -> Result<RunOutcome> {
    let started_at = sys::utc_now_rfc3339();
    crate::clock::calibrate();
    let mut ds = open_data_set(cfg, stop)?;
    eprintln!("dbio: {}", ds.describe());
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted(
            "interrupted before the run started; nothing measured".into(),
        ));
    }
    let selection =
        engine::select(cfg.engine, cfg.io_mode, cfg.submission).map_err(Error::usage)?;
    let flags = OpenFlags {
        write: cfg.test.writes(),
        direct: cfg.io_mode.direct(),
        dsync: true,
    };
    let files = ds.open(flags)?;
    let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
    let align = sys::dio_alignment(&ds.files[0].path);
    if flags.direct && ds.block_size % u64::from(align.offset_align) != 0 {
        return Err(Error::usage(format!(
            "--block-size {} is not a multiple of the direct-I/O alignment of {} ({} bytes, from {}); use --block-size {} or larger, or a buffered --io-mode (none, asynch)",
            size_label(ds.block_size),
            ds.files[0].path.display(),
            align.offset_align,
            align.source,
            size_label(u64::from(align.offset_align))
        )));
    }
    let buffer_align = (align.mem_align as usize).max(sys::page_size());
    let file_size = ds.files.iter().map(|f| f.size).min().unwrap_or(0);
    let plan = workload::plan(cfg, ds.files.len(), file_size, ds.block_size)?;

    ds.set_in_use(Some(cfg.test.name()))?;
    let m = measure(cfg, &plan, &fds, selection.kind, buffer_align, stop);
    let cleared = ds.set_in_use(None);
    drop(files);

    let mut result = assemble(
        cfg,
        &ds,
        &selection,
        &plan,
        &flags,
        &align,
        buffer_align,
        &m,
        started_at,
    );
    if let Err(e) = cleared {
        result
            .warnings
            .push(format!("could not update the data set manifest: {e}"));
    }
    let tail = format!(
        "{}_{}_{}s_{}_{}",
        cfg.test.name(),
        cfg.submission.name(),
        cfg.sessions,
        size_label(ds.size_bytes()),
        duration_label(cfg.duration)
    );
    let run_dir = report::create_run_dir(&cfg.out, &result.started_at, &tail)?;
    let summary = report::write_run(&run_dir, &result)?;
    let exit = if !m.failures.is_empty() || !m.setup_errors.is_empty() {
        ExitCode::IoError
    } else if m.interrupted {
        ExitCode::Interrupted
    } else {
        ExitCode::Ok
    };
    Ok(RunOutcome {
        result,
        run_dir,
        summary,
        exit,
    })
}

/// What the sessions measured.
struct Measurement {
    totals: Vec<EventTotals>,
    history: Vec<SecondPoint>,
    measured_seconds: f64,
    cpu_user_s: f64,
    cpu_system_s: f64,
    failures: Vec<IoFailure>,
    setup_errors: Vec<String>,
    engine_notes: Vec<String>,
    interrupted: bool,
    abandoned: usize,
}

/// Holds sessions until all are set up, then lets them go together.
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
    /// A session is set up (or failed to be); waits for the gate. True means go.
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
    /// Waits for `n` sessions to arrive; returns how many failed.
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

/// A session's buffers, its engine (if its pattern uses one) and the engine's note.
type SessionSetup = (AlignedBuf, Option<Box<dyn engine::Engine>>, Option<String>);

/// How a session thread ended.
#[derive(Default)]
struct SessionEnd {
    failure: Option<IoFailure>,
    setup_error: Option<String>,
    note: Option<String>,
    abandoned: bool,
}

/// Sleeps until `deadline_ns` or until `stop` or `done()` — checking every 20 ms.
fn sleep_until(deadline_ns: u64, stop: &AtomicBool, done: impl Fn() -> bool) {
    loop {
        let now = now_ns();
        if now >= deadline_ns || stop.load(Ordering::Relaxed) || done() {
            return;
        }
        std::thread::sleep(Duration::from_nanos((deadline_ns - now).min(20_000_000)));
    }
}

fn measure(
    cfg: &RunConfig,
    plan: &Plan,
    fds: &[RawFd],
    kind: EngineKind,
    buffer_align: usize,
    stop: &Arc<AtomicBool>,
) -> Measurement {
    let n = cfg.sessions;
    let counters: Vec<Arc<SessionCounters>> = (0..n)
        .map(|_| SessionCounters::new(plan.events.len()))
        .collect();
    let gate = StartGate::new();
    let window_start = AtomicU64::new(0);
    let window_end = AtomicU64::new(0);
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let mut sampler = Sampler::new(counters.clone(), plan.events.len());
    let warmup_ns = cfg.warmup.as_nanos() as u64;
    let duration_ns = cfg.duration.as_nanos() as u64;

    let mut ends: Vec<SessionEnd> = Vec::with_capacity(n);
    let mut interrupted = false;
    let mut measured_ns = 0u64;
    let mut cpu = (0.0, 0.0);
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(n);
        for id in 0..n {
            let counters = counters[id].clone();
            let (gate, window_start, window_end, finished) =
                (&gate, &window_start, &window_end, &finished);
            let stop: &AtomicBool = stop;
            let spawned = std::thread::Builder::new()
                .name(format!("dbio-session-{id}"))
                .stack_size(256 << 10)
                .spawn_scoped(scope, move || {
                    let end = session_thread(
                        id,
                        cfg,
                        plan,
                        fds,
                        kind,
                        buffer_align,
                        counters,
                        gate,
                        window_start,
                        window_end,
                        stop,
                    );
                    finished.fetch_add(1, Ordering::Relaxed);
                    end
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    ends.push(SessionEnd {
                        setup_error: Some(format!(
                            "cannot start session thread {id}: {e} (use fewer --sessions)"
                        )),
                        ..Default::default()
                    });
                    break;
                }
            }
        }
        let failed = gate.wait_ready(handles.len());
        if failed > 0 || handles.len() < n {
            gate.open(false);
        } else {
            let t0 = now_ns();
            window_start.store(t0 + warmup_ns, Ordering::Relaxed);
            window_end.store(t0 + warmup_ns + duration_ns, Ordering::Relaxed);
            gate.open(true);
            let all_done = || finished.load(Ordering::Relaxed) == handles.len();
            let start = t0 + warmup_ns;
            let end = start + duration_ns;
            sleep_until(start, stop, all_done);
            let cpu0 = sys::process_cpu_seconds();
            let mut t = 1u32;
            loop {
                let boundary = (start + u64::from(t) * 1_000_000_000).min(end);
                sleep_until(boundary, stop, all_done);
                let now = now_ns();
                if now < boundary || now >= end {
                    break; // stopped early, or the window is over
                }
                sampler.close_second(t);
                t += 1;
            }
            let cpu1 = sys::process_cpu_seconds();
            cpu = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
            for h in handles.drain(..) {
                ends.push(h.join().unwrap_or_else(|_| SessionEnd {
                    setup_error: Some("a session thread panicked".into()),
                    ..Default::default()
                }));
            }
            let joined = now_ns();
            interrupted = joined < end;
            measured_ns = joined.min(end).saturating_sub(start);
            if measured_ns > 0 {
                sampler.close_second(t);
            }
        }
        for h in handles {
            ends.push(h.join().unwrap_or_default());
        }
    });

    let mut engine_notes: Vec<String> = ends.iter().filter_map(|e| e.note.clone()).collect();
    engine_notes.sort();
    engine_notes.dedup();
    let mut totals = sampler.totals();
    if plan.waits_are_requests() {
        totals.iter_mut().for_each(EventTotals::waits_are_requests);
    }
    Measurement {
        totals,
        history: std::mem::take(&mut sampler.history),
        measured_seconds: measured_ns as f64 / 1e9,
        cpu_user_s: cpu.0,
        cpu_system_s: cpu.1,
        failures: ends.iter().filter_map(|e| e.failure.clone()).collect(),
        setup_errors: ends.iter().filter_map(|e| e.setup_error.clone()).collect(),
        engine_notes,
        interrupted: interrupted && stop.load(Ordering::Relaxed),
        abandoned: ends.iter().filter(|e| e.abandoned).count(),
    }
}

#[allow(clippy::too_many_arguments)]
fn session_thread(
    id: usize,
    cfg: &RunConfig,
    plan: &Plan,
    fds: &[RawFd],
    kind: EngineKind,
    buffer_align: usize,
    counters: Arc<SessionCounters>,
    gate: &StartGate,
    window_start: &AtomicU64,
    window_end: &AtomicU64,
    stop: &AtomicBool,
) -> SessionEnd {
    // Set up everything before the start gate: buffers, data to write, the engine.
    let setup = (|| -> std::io::Result<SessionSetup> {
        let mut buffers = AlignedBuf::new(plan.buffer_bytes(), buffer_align)?;
        let mut state = cfg.seed ^ (id as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        sys::fill_random(buffers.as_mut_slice(), &mut state);
        if plan.uses_engine() {
            let region = (buffers.as_mut_ptr(), buffers.len());
            let (e, note) = engine::open(kind, fds, plan.capacity(), Some(region))?;
            Ok((buffers, Some(e), note))
        } else {
            Ok((buffers, None, None))
        }
    })();
    let go = gate.arrive(setup.is_ok());
    let (buffers, engine, note) = match setup {
        Ok(s) => s,
        Err(e) => {
            return SessionEnd {
                setup_error: Some(format!(
                    "session {id}: cannot set up its {} engine: {}",
                    kind.name(),
                    crate::error::io_advice(&e)
                )),
                ..Default::default()
            };
        }
    };
    if !go {
        return SessionEnd {
            note,
            ..Default::default()
        };
    }
    let window = Window {
        start_ns: window_start.load(Ordering::Relaxed),
        end_ns: window_end.load(Ordering::Relaxed),
    };
    let mut session = Session {
        id,
        event: plan.events[0],
        shape: &plan.shape,
        fds,
        rec: Recorder::new(counters, window),
        stop,
        rng: fastrand::Rng::with_seed(cfg.seed ^ (id as u64).wrapping_mul(0xd134_2543_de82_ef95)),
        engine,
        buffers,
        completions: vec![engine::Completion::default(); plan.capacity()],
        write_seq: 0,
        abandoned: false,
    };
    let outcome = workload::run_session(plan, &mut session);
    if outcome.is_err() {
        stop.store(true, Ordering::Relaxed);
    }
    let abandoned = session.abandoned;
    if abandoned {
        // The kernel may still write into these buffers: never free them.
        std::mem::forget(session.engine.take());
        std::mem::forget(std::mem::replace(
            &mut session.buffers,
            AlignedBuf::new(1, 1).expect("tiny allocation"),
        ));
    }
    SessionEnd {
        failure: outcome.err(),
        setup_error: None,
        note,
        abandoned,
    }
}

/// One line describing a failed request, with advice.
fn describe_failure(f: &IoFailure, fds_paths: &DataSet) -> String {
    let path = fds_paths
        .files
        .get(f.file)
        .map(|d| d.path.display().to_string())
        .unwrap_or_default();
    let what = match f.op {
        engine::Op::Read => "read",
        engine::Op::Write => "write",
    };
    let cause = match (f.result, &f.detail) {
        (_, Some(d)) => d.clone(),
        (Some(r), None) if r < 0 => {
            crate::error::io_advice(&std::io::Error::from_raw_os_error((-r) as i32))
        }
        (Some(r), None) => format!(
            "short {what}: {r} of {} bytes (the file is shorter than the data set says? run `dbio prepare --fresh`)",
            f.expected
        ),
        (None, None) => "failed".into(),
    };
    format!(
        "\"{}\": {what} of {} bytes at offset {} in {path}: {cause}",
        f.event.name(),
        f.expected,
        f.offset
    )
}

fn is_memory_backed(ds: &DataSet) -> bool {
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    let Ok(c) = std::ffi::CString::new(ds.files[0].path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: zeroed statfs is valid; statfs fills it.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    matches!(st.f_type as i64, TMPFS_MAGIC | RAMFS_MAGIC)
}

#[allow(clippy::too_many_arguments)]
fn assemble(
    cfg: &RunConfig,
    ds: &DataSet,
    selection: &Selection,
    plan: &Plan,
    flags: &OpenFlags,
    align: &DioAlignment,
    buffer_align: usize,
    m: &Measurement,
    started_at: String,
) -> RunResult {
    let secs = m.measured_seconds;
    let events: Vec<rj::EventResult> = plan
        .events
        .iter()
        .zip(&m.totals)
        .map(|(ev, t)| rj::event_result(ev.name(), t, secs))
        .collect();
    let pairs: Vec<_> = plan.events.iter().copied().zip(events.iter()).collect();
    let totals = rj::Totals::from_events(&pairs, secs);

    let mut warnings: Vec<Warning> = Vec::new();
    if cfg.submission == Submission::Async && selection.kind == EngineKind::Sync {
        let advice = if cfg.io_mode.asynchronous() {
            "use --engine auto to see what asynchronous I/O gives"
        } else {
            "compare with --io-mode setall to see what asynchronous I/O gives"
        };
        for ev in &plan.events {
            warnings.push(Warning::RanSynchronously {
                event: ev.name().into(),
                why: selection.reason.clone(),
                advice,
            });
        }
    }
    if selection.kind != EngineKind::Sync {
        for e in &events {
            if e.submit_calls > 0 && e.requests > 0 && e.submit_mean_us >= 0.5 * e.latency_us.mean {
                let hint = if selection.kind == EngineKind::Aio && !flags.direct {
                    "Linux AIO performs buffered I/O inside io_submit; use --io-mode setall (O_DIRECT) for asynchronous I/O"
                } else if !flags.direct {
                    "buffered I/O is served from the page cache inside the submit call; use --io-mode setall (O_DIRECT) to measure the storage"
                } else if is_memory_backed(ds) {
                    "the target is in memory (tmpfs), where requests complete inside the submit call"
                } else {
                    "the file system or device completed the requests inside the submit call"
                };
                warnings.push(Warning::SubmitBlocked {
                    event: e.name.clone(),
                    submit_mean_us: e.submit_mean_us,
                    latency_mean_us: e.latency_us.mean,
                    hint,
                });
            }
        }
    }
    if m.interrupted {
        warnings.push(Warning::Interrupted {
            measured_s: secs,
            planned_s: cfg.duration.as_secs_f64(),
        });
    }
    if totals.requests == 0 && m.failures.is_empty() && m.setup_errors.is_empty() {
        warnings.push(Warning::NothingMeasured);
    }
    if m.abandoned > 0 {
        warnings.push(Warning::AbandonedRequests {
            sessions: m.abandoned,
        });
    }
    let mut errors: Vec<String> = m.setup_errors.clone();
    errors.extend(m.failures.iter().map(|f| describe_failure(f, ds)));
    errors.dedup();

    let (partial, stop_reason) = if !errors.is_empty() {
        (true, "error")
    } else if m.interrupted {
        (true, "interrupted")
    } else {
        (false, "completed")
    };
    let cpu_total = m.cpu_user_s + m.cpu_system_s;
    RunResult {
        schema: rj::SCHEMA.into(),
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        test: cfg.test.name().into(),
        started_at,
        measured_seconds: secs,
        partial,
        stop_reason: stop_reason.into(),
        config: rj::RunConfigJson {
            target: cfg.dataset.target.display().to_string(),
            size_bytes: ds.size_bytes(),
            block_size: ds.block_size,
            files: ds.files.len() as u32,
            sessions: cfg.sessions,
            submission: cfg.submission.name().into(),
            io_mode: cfg.io_mode.name().into(),
            engine_requested: format!("{:?}", cfg.engine).to_lowercase(),
            engine: selection.kind.name().into(),
            engine_reason: selection.reason.clone(),
            engine_notes: m.engine_notes.clone(),
            open_flags: flags.names(),
            duration_s: cfg.duration.as_secs_f64(),
            warmup_s: cfg.warmup.as_secs_f64(),
            batch: plan.shape.batch,
            keep_inflight: cfg.keep_inflight,
            depth: plan.shape.depth,
            mbrc: plan.shape.mbrc,
            request_bytes: plan.request_bytes(),
            seed: cfg.seed,
            dio_mem_align: align.mem_align,
            dio_offset_align: align.offset_align,
            dio_align_source: align.source.into(),
            buffer_align,
            clock: crate::clock::describe(),
            out: cfg.out.display().to_string(),
        },
        dataset: rj::DataSetJson {
            path: ds.path.display().to_string(),
            kind: match ds.kind {
                TargetKind::Directory => "directory",
                TargetKind::File => "file",
                TargetKind::BlockDevice => "block_device",
            }
            .into(),
            size_bytes: ds.size_bytes(),
            files: ds.files.len(),
            block_size: ds.block_size,
            reused: ds.reused,
            prepare_seconds: ds.prepare_seconds,
            fill_method: ds.fill_method.clone(),
        },
        host: rj::HostJson::current(),
        cpu: rj::CpuJson {
            user_s: m.cpu_user_s,
            system_s: m.cpu_system_s,
            cpu_s_per_1k_requests: if totals.requests > 0 {
                Some(cpu_total / (totals.requests as f64 / 1000.0))
            } else {
                None
            },
        },
        timeseries: m
            .history
            .iter()
            .map(|p| rj::SecondJson {
                t: p.t,
                event: plan.events[p.event].name().into(),
                requests: p.requests,
                bytes: p.bytes,
                mean_us: p.mean_us,
                p99_us: p.p99_us,
            })
            .collect(),
        events,
        totals,
        warnings: warnings.iter().map(|w| w.to_string()).collect(),
        errors,
        ash: None,
        os: None,
        storage: None,
        lint: Vec::new(),
    }
}
