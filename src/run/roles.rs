//! What each thread of a run does: a session's or a DBWR's loop, a log writer, a redo
//! writer class, the noise thread. The per-request loops live here.

use std::os::fd::RawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use super::requester::{Halt, Requester};
use super::threads::{Finished, Harness, InFlight, Role, Shared, ThreadEnd, live, live_in};
use crate::engine::{self, Engine};
use crate::measure::{Recorder, SessionCounters, Window};
use crate::sys::{self, AlignedBuf, now_ns};
use crate::workload::redo::{Lgwr, MAX_PIECES};
use crate::workload::spec::RunConfig;
use crate::workload::{self, Event, Session};

/// One thread: its role's preparation and loop.
pub(super) fn role_thread(role: Role, sh: &Shared, counters: Arc<SessionCounters>) -> ThreadEnd {
    match role {
        Role::Lgwr => lgwr_thread(sh, counters),
        Role::Session(id) => match sh.plan.class_of(id) {
            (c, local) if c.pattern == workload::Pattern::RedoWrite => {
                redo_writer_thread(id, c, local, sh, counters)
            }
            _ => session_thread(role, id, sh, counters),
        },
        Role::Dbwr(k) => session_thread(role, sh.cfg.sessions + 1 + k, sh, counters),
        Role::Requester(_) => ThreadEnd::setup_failed(format!(
            "{}: an engine run has no requester (a bug in dbio: please report it)",
            role.name()
        )),
        Role::CacheDrop => live(
            sh.h,
            &role.name(),
            || Ok(None),
            |warning| {
                sys::drop_cached_pages_until(&sh.fds.data, &sh.h.over);
                Finished {
                    end: ThreadEnd {
                        warning,
                        ..Default::default()
                    },
                    io: InFlight::default(),
                }
            },
        ),
        Role::Noise(cpu) => {
            let prepare = || Ok(pin(cpu, "the noise thread"));
            live(sh.h, &role.name(), prepare, |warning| {
                noise(&sh.h.over);
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
    window_of(sh.h)
}

fn window_of(h: &Harness) -> Window {
    Window {
        start_ns: h.window_start.load(Ordering::Relaxed),
        end_ns: h.window_end.load(Ordering::Relaxed),
    }
}

/// A session whose requests `requester` issues: the same life as an engine session (start
/// gate, a failure stops the run), its requests timed into slot 0 of `counters`. It keeps
/// the process's descriptor table: its connection was opened before, and must close for
/// everyone when the session ends.
pub(super) fn requester_thread(
    role: Role,
    mut requester: Box<dyn Requester + '_>,
    h: &Harness,
    counters: Arc<SessionCounters>,
) -> ThreadEnd {
    live_in(
        h,
        &role.name(),
        false,
        || Ok(()),
        |()| {
            let rec = Recorder::new(counters, window_of(h));
            let halt = Halt {
                halt: &h.halt,
                stop: h.stop,
                failed: &h.failed,
            };
            let lost = requester.run(&rec, &halt).err().map(|l| (role.name(), l));
            // The connection closes now, with the session.
            drop(requester);
            Finished {
                end: ThreadEnd {
                    lost,
                    ..Default::default()
                },
                io: InFlight::default(),
            }
        },
    )
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
    // A flush batch's session writes its doublewrite file (its temp file) after the data files.
    let with_doublewrite: Vec<RawFd>;
    let fds: &[RawFd] = match class.pattern {
        workload::Pattern::Temp => &sh.fds.temp,
        workload::Pattern::FlushBatch if !sh.fds.temp.is_empty() => {
            with_doublewrite = (sh.fds.data.iter().copied())
                .chain([sh.fds.temp[class.temp_first_file + local]])
                .collect();
            &with_doublewrite
        }
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
    live(sh.h, &who, prepare, |(buffers, engine, note)| {
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
            stop: &sh.h.halt,
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
                features: engine.features(),
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
        Event::DbFileParallelRead | Event::DbFileParallelWrite | Event::InnodbFlushBatch => {
            c.shape.batch as f64
        }
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
        sh.h,
        &who,
        prepare,
        |(log, mut redo, engine, note, warning)| {
            let running = AtomicUsize::new(1);
            let ash = sh.inst.session_ash(id);
            let mut writer = Lgwr::new(
                &log,
                &sh.fds.redo,
                cfg.redo.file_size,
                cfg.redo.durability,
                (engine, c.one_by_one),
                Recorder::new(counters, window(sh)),
                ash,
                c.slot,
                &running,
            );
            writer.stop = Some(&sh.h.halt);
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
                    features: engine.features(),
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
    live(sh.h, &who, prepare, |(engine, note, warning)| {
        // Multi-piece writes go out together through the engine; synchronous modes write the
        // pieces one after another.
        let mut lgwr = Lgwr::new(
            log,
            &sh.fds.redo,
            sh.cfg.redo.file_size,
            sh.cfg.redo.durability,
            (engine, sh.plan.lgwr_one_by_one),
            Recorder::new(counters, window(sh)),
            sh.inst.lgwr_ash(),
            sh.plan.slot(sh.plan.roles.log_write),
            &sh.inst.sessions_running,
        );
        lgwr.event = sh.plan.roles.log_write;
        lgwr.sync_slot = (sh.plan.roles.log_sync)
            .map(|e| sh.plan.slot(e))
            .filter(|&s| s != usize::MAX);
        lgwr.stop = Some(&sh.h.halt);
        lgwr.group = sh.cfg.redo.group_commit;
        let outcome = lgwr.run();
        Finished {
            end: ThreadEnd {
                failure: outcome.err(),
                note,
                features: lgwr.engine.features(),
                warning,
                abandoned: lgwr.abandoned,
                lgwr: Some(lgwr.stats),
                ..Default::default()
            },
            io: InFlight::of(lgwr.engine),
        }
    })
}
