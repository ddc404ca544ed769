//! The main thread of a measured run: it starts one thread per session, LGWR and DBWR when
//! the test has them, an optional noise thread and the ASH sampler (each with the one life
//! [`super::threads`] gives it), opens the start gate, keeps time through the warm-up and the
//! measured window, closes each second of history, draws the progress line, and gathers
//! what the threads measured.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use super::requester::{Lost, Observer, Requester};
use super::roles::{requester_thread, role_thread};
use super::threads::{Fds, Harness, Role, Shared, ThreadEnd, sleep_until, spawn};
use crate::engine::EngineKind;
use crate::measure::ash::{self, AshHistory};
use crate::measure::os::OsSampler;
use crate::measure::stall::{Stall, StallWatch};
use crate::measure::{DbTotals, EventTotals, Sampler, SecondPoint, SessionCounters};
use crate::progress::Progress;
use crate::sys::{self, now_ns};
use crate::workload::redo::LgwrStats;
use crate::workload::spec::{RunConfig, SteadySpec};
use crate::workload::{Instance, IoFailure, Workload};

/// Who issues the requests of a measured window.
pub enum Crew<'a> {
    /// dbio's own engines: a thread per session of the plan, LGWR and DBWR when the test
    /// has them, the noise thread, and the ASH sampler over the instance's sessions.
    Engine {
        cfg: &'a RunConfig,
        plan: &'a Workload,
        inst: &'a Instance,
        fds: &'a Fds,
        kind: EngineKind,
        buffer_align: usize,
    },
    /// Sessions that issue their own requests (a database's sessions running SQL), one
    /// thread each, recording into slot 0.
    Requesters(Vec<Box<dyn Requester + 'a>>),
}

/// What a measured window is, whoever issues its requests.
pub struct WindowPlan {
    pub warmup: Duration,
    pub duration: Duration,
    /// `--steady-state`: end the window once the last rounds hold steady.
    pub steady: Option<SteadySpec>,
    /// The name of each slot the threads record into (the progress line's).
    pub events: Vec<&'static str>,
    /// Per slot: each request is a wait of its own (the wait histograms are the requests').
    pub waits_are_requests: Vec<bool>,
}

impl WindowPlan {
    /// The window of a run of `cfg` with `plan`'s events.
    pub fn of(cfg: &RunConfig, plan: &Workload) -> WindowPlan {
        WindowPlan {
            warmup: cfg.warmup,
            duration: cfg.duration,
            steady: cfg.steady,
            events: plan.events.iter().map(|e| e.name()).collect(),
            waits_are_requests: (plan.events.iter())
                .map(|e| Workload::waits_are_requests(*e))
                .collect(),
        }
    }
}

/// What the threads measured.
pub struct Measurement {
    pub totals: Vec<EventTotals>,
    pub db: DbTotals,
    pub history: Vec<SecondPoint>,
    pub ash: AshHistory,
    pub lgwr: Option<LgwrStats>,
    pub measured_seconds: f64,
    /// When the warm-up began (`sys::now_ns`; 0 when the window never started).
    pub t0_ns: u64,
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    pub failures: Vec<IoFailure>,
    /// Sessions of a [`Crew::Requesters`] that ended early ("session 2"), and why.
    pub lost: Vec<(String, Lost)>,
    /// Sessions that went on after failed requests (`--continue-on-error`): the first each.
    pub continued: Vec<IoFailure>,
    pub setup_errors: Vec<String>,
    pub engine_notes: Vec<String>,
    /// What the engines used of the kernel, each with how many of the threads' engines
    /// used it when not all did.
    pub engine_features: Vec<String>,
    pub interrupted: bool,
    pub abandoned: usize,
    /// Why LGWR could not be pinned, or the noise thread not started.
    pub pinning_notes: Vec<String>,
    /// What the OS saw over the measured window (None when it never started).
    pub os: Option<OsSampler>,
    /// Stretches of the measured window in which dbio did not run (stopped, starved,
    /// suspended).
    pub stalls: Vec<Stall>,
    /// `--steady-state`: the rounds and whether they held steady (the window then ended
    /// there, cleanly).
    pub steady: Option<crate::report::result::SteadyStateJson>,
    /// The window ended early because it was steady.
    pub ended_steady: bool,
}

/// The live progress line: phase, elapsed/remaining, and per event the last complete
/// second's IOPS, MiB/s and p99 (events that did nothing that second are left out).
fn progress_line(
    phase: &str,
    elapsed_s: f64,
    total_s: f64,
    events: &[&'static str],
    last: &[SecondPoint],
) -> String {
    let mut line = format!(
        "{phase} {:.1}/{:.0} s ({:.0} s left)",
        elapsed_s.min(total_s),
        total_s,
        (total_s - elapsed_s).max(0.0).ceil()
    );
    for p in last.iter().filter(|p| p.requests > 0).take(3) {
        line.push_str(&format!(
            " | {}: {} IOPS",
            events[p.event],
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

/// The threads of `crew` through warm-up and the measured window: the one measured-window
/// loop of dbio. `observer` hears of the window's two edges. `os_devices` are the block
/// devices under the data set, (kernel name, layer), sampled once a second.
#[allow(clippy::too_many_arguments)]
pub fn measure(
    w: &WindowPlan,
    crew: Crew,
    mut observer: Option<&mut dyn Observer>,
    stop: &Arc<AtomicBool>,
    progress: &Progress,
    os_devices: Vec<(String, String)>,
    hooks: &super::RunHooks,
) -> Measurement {
    let harness = Harness::new(stop);
    let (roles, mut requesters, engine) = match crew {
        Crew::Engine {
            cfg,
            plan,
            inst,
            fds,
            kind,
            buffer_align,
        } => {
            let mut roles: Vec<Role> = (0..cfg.sessions).map(Role::Session).collect();
            if plan.lgwr {
                roles.push(Role::Lgwr);
            }
            roles.extend((0..plan.dbwr).map(Role::Dbwr));
            roles.extend(cfg.redo.noise_cpu.map(Role::Noise));
            if plan.drops_page_cache {
                roles.push(Role::CacheDrop);
            }
            let shared = Shared {
                h: &harness,
                cfg,
                plan,
                inst,
                fds,
                kind,
                buffer_align,
            };
            (roles, Vec::new(), Some(shared))
        }
        Crew::Requesters(r) => (
            (0..r.len()).map(Role::Requester).collect(),
            r.into_iter().map(Some).collect::<Vec<_>>(),
            None,
        ),
    };
    let counters = SessionCounters::many(roles.len(), w.events.len());
    let finished = AtomicUsize::new(0);
    let mut sampler = Sampler::new(counters.clone(), w.events.len());
    sampler.keep_intervals = hooks.on_second.is_some();
    let on_second = |t: u32, sampler: &Sampler| {
        if let Some(f) = &hooks.on_second {
            f(t, sampler.intervals());
        }
    };
    let warmup_ns = w.warmup.as_nanos() as u64;
    let duration_ns = w.duration.as_nanos() as u64;
    let ash_done = AtomicBool::new(false);
    let mut pinning_notes = Vec::new();

    let mut ends: Vec<ThreadEnd> = Vec::with_capacity(roles.len());
    let mut interrupted = false;
    let mut measured_ns = 0u64;
    let mut t0_ns = 0u64;
    let mut cpu = (0.0, 0.0);
    let mut ash_history = AshHistory::default();
    let mut os: Option<OsSampler> = None;
    let mut stalls = Vec::new();
    let mut steady = w.steady.map(super::steady::Steady::new);
    let mut ended_steady = false;
    let (shared, harness) = (engine.as_ref(), &harness);
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(roles.len());
        for (i, &role) in roles.iter().enumerate() {
            let counters = counters[i].clone();
            let finished = &finished;
            let requester = match role {
                Role::Requester(k) => requesters[k].take(),
                _ => None,
            };
            let spawned = spawn(scope, role, move || {
                let end = match (requester, shared) {
                    (Some(r), _) => requester_thread(role, r, harness, counters),
                    (None, Some(shared)) => {
                        let end = role_thread(role, shared, counters);
                        if let Role::Session(_) = role {
                            shared.inst.sessions_running.fetch_sub(1, Ordering::SeqCst);
                        }
                        end
                    }
                    (None, None) => unreachable!("a requester role has its requester"),
                };
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
        let failed = harness.gate.wait_ready(handles.len());
        let set_up = failed == 0 && !ends.iter().any(|e| e.setup_error.is_some());
        // The caller may hold the start (every host of a cluster starts at one instant).
        let start_at = match (&hooks.wait_for_start, set_up) {
            (_, false) => None,
            (None, true) => Some(now_ns()),
            (Some(wait), true) => wait().inspect(|&at| sleep_until(at, stop, &|| false, None)),
        };
        if start_at.is_none() || stop.load(Ordering::Relaxed) {
            interrupted = set_up;
            harness.halt.store(true, Ordering::Relaxed);
            harness.gate.open(false);
        } else {
            let t0 = now_ns();
            t0_ns = t0;
            if let Some(f) = &hooks.on_start {
                f(t0);
            }
            let start = t0 + warmup_ns;
            let end = start + duration_ns;
            harness.window_start.store(start, Ordering::Relaxed);
            harness.window_end.store(end, Ordering::Relaxed);
            harness.gate.open(true);
            let ash_thread = shared.and_then(|sh| {
                let (board, ash_done) = (&sh.inst.ash, &ash_done);
                let (states, hz) = (2 + sh.plan.events.len(), sh.cfg.ash_hz);
                std::thread::Builder::new()
                    .name("dbio-ash".into())
                    .spawn_scoped(scope, move || {
                        ash::sample(board, states, hz, start, end, ash_done)
                    })
                    .ok()
            });
            let all_done = || finished.load(Ordering::Relaxed) == ending;
            let (warmup_s, duration_s) = (w.warmup.as_secs_f64(), w.duration.as_secs_f64());
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
                    progress_line("warm-up", elapsed, warmup_s, &w.events, &[])
                },
                Some(&watch),
            );
            if let Some(o) = observer.as_mut() {
                o.window_started();
            }
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
                        progress_line("measuring", elapsed, duration_s, &w.events, &last)
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
                if steady.as_mut().is_some_and(|s| s.second(&last)) {
                    // Steady: the window ends here, as if planned so.
                    break;
                }
            }
            // However the window ended, the threads stop now.
            harness.halt.store(true, Ordering::Relaxed);
            if let Some(o) = observer.as_mut() {
                o.window_ended();
            }
            if progress.is_drawn() {
                progress.set_message("stopping: waiting for the last requests".into());
            }
            stalls = watch.stalls();
            let cpu1 = sys::process_cpu_seconds();
            cpu = (cpu1.0 - cpu0.0, cpu1.1 - cpu0.1);
            ash_done.store(true, Ordering::Relaxed);
            harness.over.store(true, Ordering::Relaxed);
            for h in handles.drain(..) {
                ends.push(h.join().unwrap_or_else(|_| ThreadEnd {
                    setup_error: Some("a dbio thread panicked".into()),
                    ..Default::default()
                }));
            }
            let joined = now_ns();
            // Ended steady: a clean end, however early.
            ended_steady = steady.as_ref().is_some_and(|s| s.reached());
            interrupted = joined < end && !ended_steady;
            measured_ns = joined.min(end).saturating_sub(start);
            if measured_ns > 0 {
                let points = sampler.close_second(t);
                // The window's last second, whole when it ran to its planned end, ends
                // the last round.
                if let Some(s) = steady.as_mut().filter(|_| joined >= end && !ended_steady) {
                    s.second(points);
                }
                on_second(t, &sampler);
            }
            if let Some(h) = ash_thread {
                ash_history = h.join().unwrap_or_default();
            }
        }
        harness.over.store(true, Ordering::Relaxed);
        for h in handles {
            ends.push(h.join().unwrap_or_default());
        }
    });
    pinning_notes.extend(ends.iter().filter_map(|e| e.warning.clone()));

    let mut engine_notes: Vec<String> = ends.iter().filter_map(|e| e.note.clone()).collect();
    engine_notes.sort();
    engine_notes.dedup();
    let engine_features = engine_features(ends.iter().map(|e| e.features.as_slice()));
    let mut totals = sampler.totals();
    for (t, &each) in totals.iter_mut().zip(&w.waits_are_requests) {
        if each {
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
        t0_ns,
        cpu_user_s: cpu.0,
        cpu_system_s: cpu.1,
        failures: ends.iter().filter_map(|e| e.failure.clone()).collect(),
        lost: ends.iter().filter_map(|e| e.lost.clone()).collect(),
        continued: ends.iter().filter_map(|e| e.continued.clone()).collect(),
        setup_errors: ends.iter().filter_map(|e| e.setup_error.clone()).collect(),
        engine_notes,
        engine_features,
        interrupted: interrupted && stop.load(Ordering::Relaxed),
        abandoned: ends.iter().filter(|e| e.abandoned).count(),
        pinning_notes,
        os,
        stalls,
        steady: steady.map(|s| s.json()),
        ended_steady,
    }
}

/// The features the threads' engines used, in the order first seen: "registered files", or
/// "registered files (3 of 4 engines)" where only some did.
fn engine_features<'a>(each: impl Iterator<Item = &'a [&'static str]>) -> Vec<String> {
    let mut seen: Vec<(&'static str, usize)> = Vec::new();
    let mut engines = 0;
    for features in each.filter(|f| !f.is_empty()) {
        engines += 1;
        for f in features {
            match seen.iter_mut().find(|(x, _)| x == f) {
                Some((_, n)) => *n += 1,
                None => seen.push((f, 1)),
            }
        }
    }
    (seen.into_iter())
        .map(|(f, n)| {
            if n == engines {
                f.to_string()
            } else {
                format!("{f} ({n} of {engines} engines)")
            }
        })
        .collect()
}

#[cfg(test)]
mod engine_feature_tests {
    #[test]
    fn features_of_some_engines_say_how_many() {
        let a: &[&'static str] = &["ring", "registered files"];
        let b: &[&'static str] = &["ring"];
        let none: &[&'static str] = &[];
        assert_eq!(
            super::engine_features([a, b, none].into_iter()),
            vec![
                "ring".to_string(),
                "registered files (1 of 2 engines)".into()
            ]
        );
    }
}
