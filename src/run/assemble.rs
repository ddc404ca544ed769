//! The [`RunResult`] made of what a run measured: events, totals, warnings, ASH, redo and
//! OLTP figures. No I/O happens here.

use std::collections::BTreeMap;

use crate::dataset::{DataSet, OpenFlags, TargetKind};
use crate::engine::Submission;
use crate::engine::{EngineKind, Selection};
use crate::measure::ash::{AshHistory, IDLE, ON_CPU};
use crate::report::{RunResult, result as rj};
use crate::sys::DioAlignment;
use crate::warnings::Warning;
use crate::workload::spec::RunConfig;
use crate::workload::{ClassPlan, Event, IoFailure, Test, Workload};

use super::window::Measurement;

/// Everything the result is made of.
pub struct Inputs<'a> {
    pub cfg: &'a RunConfig,
    pub ds: &'a DataSet,
    pub selection: &'a Selection,
    pub plan: &'a Workload,
    pub data_flags: &'a OpenFlags,
    pub align: &'a DioAlignment,
    pub buffer_align: usize,
    pub m: &'a Measurement,
    /// Blocks loaded into the buffer cache before the run.
    pub warmed: Option<u64>,
    pub cache_buffers: Option<usize>,
    /// The data set is in memory (tmpfs, ramfs), as the storage map found.
    pub memory_backed: bool,
    pub started_at: String,
}

/// One line describing a failed request, with advice.
fn describe_failure(f: &IoFailure, ds: &DataSet) -> String {
    let files = match f.event {
        e if e.is_redo() => &ds.redo_files,
        Event::DirectPathWriteTemp | Event::DirectPathReadTemp => &ds.temp_files,
        _ => &ds.files,
    };
    let path = files
        .get(f.file)
        .map(|d| d.path.display().to_string())
        .unwrap_or_default();
    let what = f.op.name();
    let cause = match (f.result, &f.detail) {
        (_, Some(d)) => d.clone(),
        (Some(r), None) if r < 0 => {
            crate::error::io_advice(&std::io::Error::from_raw_os_error((-r) as i32))
        }
        (Some(r), None) => format!(
            "short {what}: {r} of {} bytes (the file is shorter than the data set says? run `{}`)",
            f.expected,
            crate::dataset::prepare_command(
                &ds.path,
                ds.size_bytes(),
                ds.block_size,
                ds.files.len(),
                ds.verify_id().is_some()
            )
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

/// How long dbio did not run in second `t` of the window, rounded to milliseconds; None
/// when it ran throughout.
fn not_running(stalls: &[crate::measure::stall::Stall], t: u32) -> Option<f64> {
    let s: f64 = stalls.iter().map(|s| s.in_second(t)).sum();
    (s >= crate::measure::stall::MARKED_S).then(|| (s * 1000.0).round() / 1000.0)
}

/// The ASH history as result.json shows it: per second, average active sessions per state.
fn ash_json(plan: &Workload, h: &AshHistory) -> rj::AshJson {
    let state_name = |state: usize| -> Option<String> {
        match state as u16 {
            IDLE => None,
            ON_CPU => Some("ON CPU".to_string()),
            w => plan
                .events
                .get(usize::from(w - 2))
                .map(|e| e.name().to_string()),
        }
    };
    let mut samples_by_state: BTreeMap<String, u64> = BTreeMap::new();
    let seconds = h
        .seconds
        .iter()
        .map(|sec| {
            let mut active = BTreeMap::new();
            for (state, &count) in sec.counts.iter().enumerate() {
                if count == 0 {
                    continue;
                }
                if let Some(name) = state_name(state) {
                    *samples_by_state.entry(name.clone()).or_default() += u64::from(count);
                    active.insert(name, f64::from(count) / f64::from(sec.ticks.max(1)));
                }
            }
            rj::AshSecondJson { t: sec.t, active }
        })
        .collect();
    let mut states: Vec<(String, u64)> = samples_by_state
        .iter()
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    states.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    rj::AshJson {
        hz: h.hz,
        samples: h.samples,
        states: states.into_iter().map(|(k, _)| k).collect(),
        samples_by_state,
        seconds,
    }
}

/// Per class of a job run: target and achieved rate, lateness, service time. A classic
/// test's one class (its preset) is the test itself: not listed.
fn classes_json(
    plan: &Workload,
    events: &[rj::EventResult],
    m: &Measurement,
) -> Vec<rj::ClassResultJson> {
    let shown: &[ClassPlan] = if plan.preset { &[] } else { &plan.classes };
    shown
        .iter()
        .map(|c| {
            let (e, t) = (&events[c.slot], &m.totals[c.slot]);
            let open = c.spec.rate.is_some();
            let us = |ns: u64, n: u64| {
                if n > 0 {
                    ns as f64 / n as f64 / 1000.0
                } else {
                    0.0
                }
            };
            rj::ClassResultJson {
                name: c.spec.name.clone(),
                event: c.spec.event.name().into(),
                event_index: c.slot,
                size_bytes: c.spec.sizes.mean().round() as u64,
                sizes: (!c.spec.sizes.is_fixed()).then(|| c.spec.sizes.label()),
                mean_request_bytes: (e.requests > 0 && e.bytes > 0)
                    .then(|| e.bytes as f64 / e.requests as f64),
                sessions: c.spec.sessions,
                submission: c.spec.submission.name().into(),
                rate_target: c.spec.rate,
                arrival: match (open, c.spec.poisson) {
                    (false, _) => "closed",
                    (true, false) => "fixed",
                    (true, true) => "poisson",
                }
                .into(),
                rate_achieved: if c.spec.event == Event::LogFileParallelWrite {
                    per_s(e.waits as f64, m.measured_seconds)
                } else {
                    e.iops
                },
                lateness_mean_us: open.then(|| us(t.late_sum_ns, t.requests)),
                lateness_max_us: open.then(|| t.late_max_ns as f64 / 1000.0),
                service_us: open
                    .then(|| rj::latency(&t.service, t.service_sum_ns, t.service_max_ns)),
            }
        })
        .collect()
}

/// Required vs measured for every limit of every class (latency from the schedule for open
/// loops: what the database would wait). A "log file parallel write" class is judged per
/// LGWR write, as its rate counts them, not per piece of a split write.
fn verdict_json(
    plan: &Workload,
    events: &[rj::EventResult],
    measured_seconds: f64,
) -> Option<rj::VerdictJson> {
    let mut classes = Vec::new();
    for c in plan.classes.iter().filter(|c| !c.spec.limits.is_empty()) {
        let e = &events[c.slot];
        let per_write = c.spec.event == Event::LogFileParallelWrite;
        let (l, iops) = if per_write {
            (&e.wait_latency_us, per_s(e.waits as f64, measured_seconds))
        } else {
            (&e.latency_us, e.iops)
        };
        let mut limits = Vec::new();
        let mut check = |limit: &str, op: &str, required: f64, measured: f64| {
            let pass = if op == "<=" {
                measured <= required
            } else {
                measured >= required
            };
            limits.push(rj::LimitVerdictJson {
                limit: limit.into(),
                op: op.into(),
                required,
                measured,
                result: if pass { "PASS" } else { "FAIL" }.into(),
            });
        };
        for (stat, max) in &c.spec.limits.latency {
            let measured_us = match *stat {
                "mean" => l.mean,
                "p50" => l.p50,
                "p90" => l.p90,
                "p95" => l.p95,
                _ => l.p99,
            };
            // No request completed: nothing met the limit.
            let measured_ms = if e.requests > 0 {
                measured_us / 1000.0
            } else {
                f64::INFINITY
            };
            check(
                &format!("{stat}_ms"),
                "<=",
                max.as_secs_f64() * 1000.0,
                measured_ms,
            );
        }
        if let Some(v) = c.spec.limits.min_iops {
            check("iops", ">=", v, iops);
        }
        if let Some(v) = c.spec.limits.min_mib_per_s {
            check("mib_per_s", ">=", v, e.mib_per_s);
        }
        classes.push(rj::ClassVerdictJson {
            class: c.spec.name.clone(),
            event: c.spec.event.name().into(),
            pass: limits.iter().all(|l| l.result == "PASS"),
            limits,
        });
    }
    (!classes.is_empty()).then(|| rj::VerdictJson {
        pass: classes.iter().all(|c| c.pass),
        classes,
        failed: Vec::new(),
    })
}

fn per_s(x: f64, secs: f64) -> f64 {
    if secs > 0.0 { x / secs } else { 0.0 }
}

/// The redo section: window figures from the events, accounting from LGWR and the sessions.
fn redo_json(i: &Inputs, events: &[rj::EventResult]) -> Option<rj::RedoJson> {
    let (cfg, m) = (i.cfg, i.m);
    let stats = m.lgwr.as_ref()?;
    let ev = |e: Event| events.iter().find(|r| r.name == e.name());
    let lfpw = ev(i.plan.roles.log_write)?;
    let commits = m.db.commits;
    let writes = lfpw.waits;
    // A job's committing classes carry their own redo per commit (and think).
    let commits_of: Vec<&crate::workload::spec::ClassSpec> = (cfg.classes.iter())
        .filter(|c| c.event == i.plan.roles.commit)
        .collect();
    let (per_commit, think) = if cfg.classes.is_empty() {
        (
            cfg.redo.per_commit.label(),
            cfg.redo.think.map(|t| t.label()),
        )
    } else if commits_of.is_empty() {
        (
            "none: a log file parallel write class writes the redo".into(),
            None,
        )
    } else {
        let label = |f: &dyn Fn(&crate::workload::spec::ClassSpec) -> Option<String>| {
            let v: Vec<String> = commits_of.iter().filter_map(|c| f(c)).collect();
            (!v.is_empty()).then(|| v.join("; "))
        };
        (
            label(&|c| Some(c.sizes.label())).unwrap_or_default(),
            label(&|c| c.think.map(|t| t.label())),
        )
    };
    Some(rj::RedoJson {
        redo_per_commit: per_commit,
        think,
        redo_block: cfg.redo.block,
        redo_files: cfg.redo.files,
        redo_file_size: cfg.redo.file_size,
        sync: format!("{:?}", cfg.redo.durability).to_lowercase(),
        pieces: {
            // The log writer's plan: the run's LGWR, or a "log file parallel write" class.
            let one_by_one = (i.plan.classes.iter())
                .find(|c| c.spec.event == Event::LogFileParallelWrite)
                .map_or(i.plan.lgwr_one_by_one, |c| c.one_by_one);
            if one_by_one { "sync" } else { "async" }.into()
        },
        lgwr_cpu: cfg.redo.lgwr_cpu,
        noise_cpu: cfg.redo.noise_cpu,
        group_commit: cfg.redo.group_commit.map(|g| g.commits),
        group_commit_wait: (cfg.redo.group_commit).map(|g| crate::units::duration_label(g.wait)),
        commits,
        lgwr_writes: writes,
        commits_per_lgwr_write: if writes > 0 {
            commits as f64 / writes as f64
        } else {
            0.0
        },
        mean_lgwr_write_bytes: if writes > 0 {
            lfpw.bytes as f64 / writes as f64
        } else {
            0.0
        },
        redo_bytes: m.db.redo_bytes,
        accounting: rj::RedoAccountingJson {
            commits: m.db.commits_all,
            redo_generated_bytes: m.db.redo_bytes_all,
            bytes_written: stats.bytes_written,
            wastage_bytes: stats.wastage,
            lgwr_writes: stats.writes,
            pieces: stats.pieces,
            log_switches: stats.log_switches,
            largest_write_bytes: stats.largest_write,
        },
    })
}

fn oltp_json(i: &Inputs) -> rj::OltpJson {
    let (o, db) = (&i.cfg.oltp, &i.m.db);
    rj::OltpJson {
        work_unit: o.work_unit,
        update_pct: o.update_pct,
        hotspot_pct: o.hotspot_pct,
        hotspot_size_bytes: o.hotspot_size,
        async_reads: o.async_reads,
        writers: i.plan.dbwr,
        think: i.cfg.redo.think.map(|t| t.label()),
        cache_buffers: i.cache_buffers,
        cache_loaded_blocks: i.warmed,
        transactions: db.transactions,
        commits: db.commits,
        logical_reads: db.logical_reads,
        physical_reads: db.physical_reads,
        buffer_hit_pct: if db.logical_reads > 0 {
            100.0 * (1.0 - db.physical_reads as f64 / db.logical_reads as f64)
        } else {
            0.0
        },
    }
}

/// Every event's result over the measured window, in slot order (`names`).
fn events_of(names: &[&'static str], m: &Measurement) -> Vec<rj::EventResult> {
    (names.iter())
        .zip(&m.totals)
        .map(|(name, t)| rj::event_result(name, t, m.measured_seconds))
        .collect()
}

/// The per-second history, each second marked with the time dbio did not run in it.
fn timeseries(names: &[&'static str], m: &Measurement) -> Vec<rj::SecondJson> {
    (m.history.iter())
        .map(|p| rj::SecondJson {
            t: p.t,
            event: names[p.event].into(),
            requests: p.requests,
            bytes: p.bytes,
            mean_us: p.mean_us,
            p99_us: p.p99_us,
            not_running_s: not_running(&m.stalls, p.t),
        })
        .collect()
}

/// The CPU dbio's process used over the measured window.
fn cpu_json(m: &Measurement, requests: u64) -> rj::CpuJson {
    let total = m.cpu_user_s + m.cpu_system_s;
    rj::CpuJson {
        user_s: m.cpu_user_s,
        system_s: m.cpu_system_s,
        cpu_s_per_1k_requests: (requests > 0).then(|| total / (requests as f64 / 1000.0)),
    }
}

/// What the window itself warns of: at its start, an interruption and an empty window;
/// at its end, the stretches in which dbio did not run.
struct WindowWarnings {
    start: Vec<Warning>,
    stalls: Vec<Warning>,
}

fn window_warnings(m: &Measurement, planned: std::time::Duration, requests: u64) -> WindowWarnings {
    let mut start = Vec::new();
    if m.interrupted {
        start.push(Warning::Interrupted {
            measured_s: m.measured_seconds,
            planned_s: planned.as_secs_f64(),
        });
    }
    let activity = requests + m.db.transactions;
    let failed = !m.failures.is_empty() || !m.lost.is_empty() || !m.setup_errors.is_empty();
    if activity == 0 && !failed {
        start.push(Warning::NothingMeasured);
    }
    let stalls = (m.stalls.iter())
        .map(|s| {
            let (first, last) = s.seconds();
            Warning::NotRunning {
                seconds: s.ns as f64 / 1e9,
                first,
                last,
                suspended: s.suspended,
                warmup_s: s.warmup_ns as f64 / 1e9,
            }
        })
        .collect();
    WindowWarnings { start, stalls }
}

/// The run's errors: threads that could not be set up, failed requests (`describe`d), and
/// sessions that ended early.
fn errors_of(m: &Measurement, describe: impl Fn(&IoFailure) -> String) -> Vec<String> {
    let mut errors: Vec<String> = m.setup_errors.clone();
    errors.extend(m.failures.iter().map(describe));
    errors.extend(m.lost.iter().map(|(who, l)| format!("{who}: {}", l.text)));
    errors.dedup();
    errors
}

/// Whether the result is partial, and why the window ended.
fn ending(errors: &[String], m: &Measurement) -> (bool, &'static str) {
    if !errors.is_empty() {
        (true, "error")
    } else if m.interrupted {
        (true, "interrupted")
    } else if m.ended_steady {
        (false, "steady_state")
    } else {
        (false, "completed")
    }
}

/// What a run whose requests another issues (a database's sessions) says of itself: its
/// test, configuration and data set, its slots' names, and the warnings it had before
/// the window.
pub struct Described {
    pub test: String,
    pub started_at: String,
    pub config: rj::RunConfigJson,
    pub dataset: rj::DataSetJson,
    pub events: Vec<&'static str>,
    /// What its requests are: reads and writes count in `read_iops`/`write_iops`, commits
    /// in `commits_per_s`.
    pub counts: Counts,
    pub warnings: Vec<Warning>,
}

/// What the requests of a run of [`Described`] are, for its totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counts {
    Reads,
    Writes,
    Commits,
}

/// The result of a run of [`super::window::Crew::Requesters`]: the same events, totals,
/// history, warnings, errors and ending as any run's; no engine, plan or ASH of dbio's.
pub fn through(d: Described, m: &Measurement, planned: std::time::Duration) -> RunResult {
    let events = events_of(&d.events, m);
    let mut totals = rj::Totals::default();
    for e in &events {
        totals.requests += e.requests;
        totals.bytes += e.bytes;
        match d.counts {
            Counts::Reads => {
                totals.read_iops += e.iops;
                totals.read_mib_per_s += e.mib_per_s;
            }
            Counts::Writes => {
                totals.write_iops += e.iops;
                totals.write_mib_per_s += e.mib_per_s;
            }
            Counts::Commits => {}
        }
    }
    if d.counts == Counts::Commits {
        let secs = m.measured_seconds;
        totals.commits_per_s = Some(per_s(m.db.commits as f64, secs));
        totals.transactions_per_s = Some(per_s(m.db.transactions as f64, secs));
    }
    let mut warnings = d.warnings;
    let window = window_warnings(m, planned, totals.requests);
    warnings.extend(window.start);
    warnings.extend(window.stalls);
    let errors = errors_of(m, |f| format!("{f:?}"));
    let (partial, stop_reason) = ending(&errors, m);
    let mut result = RunResult {
        schema: rj::SCHEMA.into(),
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        dbio_build: Some(rj::DbioBuildJson::this()),
        test: d.test,
        started_at: d.started_at,
        measured_seconds: m.measured_seconds,
        partial,
        stop_reason: stop_reason.into(),
        config: d.config,
        dataset: d.dataset,
        host: rj::HostJson::current(),
        cpu: cpu_json(m, totals.requests),
        timeseries: timeseries(&d.events, m),
        events,
        totals,
        warnings,
        errors,
        ash: None,
        redo: None,
        oltp: None,
        temp: None,
        job: None,
        classes: Vec::new(),
        verdict: None,
        steady_state: m.steady.clone(),
        os: None,
        storage: None,
        lint: Vec::new(),
        verify: None,
        hosts: Vec::new(),
        pg: None,
        mysql: None,
    };
    // Judged like every run (docs/measurement.md, "Stability").
    result.judge_stability();
    result
}

/// The result of a run.
pub fn assemble(i: &Inputs) -> RunResult {
    let (cfg, ds, selection, plan, m) = (i.cfg, i.ds, i.selection, i.plan, i.m);
    let secs = m.measured_seconds;
    let names: Vec<&'static str> = plan.events.iter().map(|e| e.name()).collect();
    let events = events_of(&names, m);
    let pairs: Vec<_> = plan.events.iter().copied().zip(events.iter()).collect();
    let mut totals = rj::Totals::from_events(&pairs, secs);
    let redo_writer = (plan.classes.iter()).any(|c| c.spec.event == Event::LogFileParallelWrite);
    if plan.lgwr || redo_writer {
        totals.commits_per_s = Some(per_s(m.db.commits as f64, secs));
        totals.transactions_per_s = Some(per_s(m.db.transactions as f64, secs));
        totals.redo_mib_per_s = Some(per_s(m.db.redo_bytes as f64 / (1u64 << 20) as f64, secs));
    }

    let mut warnings: Vec<Warning> = Vec::new();
    if selection.kind == EngineKind::Null {
        warnings.push(Warning::NullEngine);
    }
    if cfg.submission == Submission::Async && selection.kind == EngineKind::Sync {
        let advice = if cfg.io_mode.asynchronous() {
            "use --engine auto to see what asynchronous I/O gives"
        } else {
            "compare with --io-mode setall to see what asynchronous I/O gives"
        };
        // Events that are synchronous by definition (InnoDB's page read) ran as they are.
        let asked_async = |e: &&Event| e.fixed_submission() != Some(Submission::Sync);
        for ev in (plan.events.iter())
            .filter(|e| e.reads() || e.writes())
            .filter(asked_async)
        {
            warnings.push(Warning::RanSynchronously {
                event: ev.name().into(),
                why: selection.reason.clone(),
                advice,
            });
        }
    }
    // Engines that complete requests at submit (sync, null) block in it by design.
    if !matches!(selection.kind, EngineKind::Sync | EngineKind::Null) {
        for e in &events {
            if e.submit_calls > 0 && e.requests > 0 && e.submit_mean_us >= 0.5 * e.latency_us.mean {
                let hint = if selection.kind == EngineKind::Aio && !i.data_flags.direct {
                    "Linux AIO performs buffered I/O inside io_submit; use --io-mode setall (O_DIRECT) for asynchronous I/O"
                } else if !i.data_flags.direct {
                    "buffered I/O is served from the page cache inside the submit call; use --io-mode setall (O_DIRECT) to measure the storage"
                } else if i.memory_backed {
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
    let window = window_warnings(m, cfg.duration, totals.requests);
    warnings.extend(window.start);
    warnings.extend(
        (events.iter())
            .filter(|e| e.requests > 0 && e.waits == 0)
            .map(|e| Warning::NoWholeWait {
                event: e.name.clone(),
                requests: e.requests,
            }),
    );
    if m.abandoned > 0 {
        warnings.push(Warning::AbandonedRequests {
            sessions: m.abandoned,
        });
    }
    if let Some(first) = m.continued.first() {
        warnings.push(Warning::ContinuedAfterErrors {
            count: events.iter().map(|e| e.errors).sum(),
            first: describe_failure(first, ds),
        });
    }
    warnings.extend(m.pinning_notes.iter().cloned().map(Warning::Setup));
    warnings.extend(window.stalls);
    let errors = errors_of(m, |f| describe_failure(f, ds));
    let (partial, stop_reason) = ending(&errors, m);
    let mut open_flags = i.data_flags.names();
    if plan.lgwr && cfg.redo.durability == crate::workload::spec::RedoDurability::Fdatasync {
        open_flags.push("redo: fdatasync after each write (no O_DSYNC)".into());
    } else if plan.lgwr && !i.data_flags.dsync {
        // Data files without O_DSYNC (InnoDB's, PostgreSQL's), the redo log with it.
        open_flags.push("redo: O_DSYNC (no fdatasync)".into());
    }
    if plan.drops_page_cache {
        open_flags.push(format!(
            "data: buffered, page cache dropped (posix_fadvise) every {} ms",
            crate::sys::DROP_PAGES_EVERY.as_millis()
        ));
    }
    // What the run works on: the data files, else the redo logs, else the temp files.
    let size_bytes = if cfg.uses_data_files() {
        ds.size_bytes()
    } else if cfg.uses_redo() {
        u64::from(cfg.redo.files) * cfg.redo.file_size
    } else {
        ds.temp_files.iter().map(|f| f.size).sum()
    };
    let mut result = RunResult {
        schema: rj::SCHEMA.into(),
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        dbio_build: Some(rj::DbioBuildJson::this()),
        test: cfg.test.name().into(),
        started_at: i.started_at.clone(),
        measured_seconds: secs,
        partial,
        stop_reason: stop_reason.into(),
        config: rj::RunConfigJson {
            target: cfg.dataset.target.display().to_string(),
            size_bytes,
            block_size: plan.block_size,
            files: ds.files.len() as u32,
            sessions: cfg.sessions,
            submission: cfg.submission.name().into(),
            io_mode: cfg.io_mode.name().into(),
            like: (cfg.like != crate::workload::event::Like::Oracle)
                .then(|| cfg.like.name().into()),
            doublewrite: (plan.classes.iter())
                .any(|c| c.spec.event == crate::workload::Event::InnodbFlushBatch)
                .then_some(cfg.doublewrite),
            engine_requested: format!("{:?}", cfg.engine).to_lowercase(),
            engine: selection.kind.name().into(),
            engine_reason: selection.reason.clone(),
            engine_notes: m.engine_notes.clone(),
            engine_features: m.engine_features.clone(),
            open_flags,
            duration_s: cfg.duration.as_secs_f64(),
            warmup_s: cfg.warmup.as_secs_f64(),
            batch: plan.main().shape.batch,
            keep_inflight: cfg.keep_inflight,
            depth: plan.main().shape.depth,
            mbrc: plan.main().shape.mbrc,
            request_bytes: plan.main().request_bytes(),
            seed: cfg.seed,
            dio_mem_align: i.align.mem_align,
            dio_offset_align: i.align.offset_align,
            dio_align_source: i.align.source.into(),
            buffer_align: i.buffer_align,
            clock: crate::clock::describe(),
            out: cfg.out.display().to_string(),
            continue_on_error: cfg.continue_on_error,
            destructive: cfg.destructive,
            fill: cfg.dataset.fill.name(),
            verify: cfg.dataset.verify,
            span: cfg.span.fraction(),
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
            fill: ds.fill.clone(),
            disk_bytes: ds.disk_bytes(),
            region: ds.region.map(|(index, of)| rj::RegionJson {
                index,
                of,
                files: ds.files.iter().map(|f| f.name.clone()).collect(),
            }),
            preconditioned: ds.preconditioned().cloned(),
        },
        host: rj::HostJson::current(),
        cpu: cpu_json(m, totals.requests),
        timeseries: timeseries(&names, m),
        ash: (m.ash.samples > 0).then(|| ash_json(plan, &m.ash)),
        redo: redo_json(i, &events),
        oltp: (cfg.test == Test::Oltp).then(|| oltp_json(i)),
        job: cfg.job.clone(),
        classes: classes_json(plan, &events, m),
        verdict: verdict_json(plan, &events, m.measured_seconds).map(|mut v| {
            // A run asked to reach steady state that never did cannot pass.
            if m.steady.as_ref().is_some_and(|s| !s.reached) {
                v.pass = false;
                v.failed.push("steady state not reached".into());
            }
            v
        }),
        steady_state: m.steady.clone(),
        temp: (cfg.test == Test::Temp).then(|| rj::TempJson {
            spill_size_bytes: cfg.temp.spill_bytes(),
            temp_io_bytes: cfg.temp.temp_io,
        }),
        events,
        totals,
        warnings,
        errors,
        os: None,
        storage: None,
        lint: Vec::new(),
        verify: None,
        hosts: Vec::new(),
        pg: None,
        mysql: None,
    };
    // Every run judges how steady each event was (docs/measurement.md, "Stability").
    result.judge_stability();
    result
}
