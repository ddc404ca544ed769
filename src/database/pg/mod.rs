//! `dbio pg run|clean`: the tests through a real PostgreSQL — a throwaway server
//! (`--pg-bin`) or an existing one (`--pg`) — with each session's requests timed into
//! dbio's own histograms, and the result a normal run result (summary, report, store).
//!
//! - [`connect`]: where the server is, and what is checked before anything is created;
//! - [`server`]: the throwaway server; [`schema`]: the run's one schema;
//! - [`load`]: the tables, and keeping the page cache out; [`workloads`]: the sessions.

pub mod compare;
pub mod connect;
pub mod leftovers;
pub mod load;
pub mod observe;
pub mod schema;
pub mod server;
pub mod workloads;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgMatches, Args, Command, Subcommand};

use crate::error::{Error, ExitCode, Result};
use crate::measure::recorder::{Recorder, SessionCounters, Window};
use crate::measure::sampler::Sampler;
use crate::options::RunArgs;
use crate::report::{self, RunResult, result as rj};
use crate::run::RunOutcome;
use crate::sys::now_ns;
use crate::units::{Shown, duration_label, size_label};
use crate::warnings::Warning;
use crate::workload::Test;

use self::observe::{CacheControl, Observer, RunContext};
use self::workloads::{Kind, Session, Shape};

/// `dbio pg ...`.
#[derive(Debug, Subcommand)]
pub enum PgCommand {
    /// Run one test through PostgreSQL: a throwaway server (--pg-bin) or an existing one
    /// (--pg), every object in one schema dbio_<run id> dropped at the end.
    Run(Box<PgRun>),
    /// Run the test through PostgreSQL, then the same plain test on the file system of the
    /// data directory: one table of what the storage gives and what the database gets.
    Compare(Box<PgRun>),
    #[command(hide = true)]
    Observe(observe::ObserveArgs),
    /// Drop the dbio_* schemas a killed run left (only those carrying dbio's mark).
    Clean(PgClean),
}

#[derive(Debug, Clone, clap::Args)]
pub struct PgClean {
    /// The server (a URL or key=value string; PGHOST, PGPORT, PGUSER, PGDATABASE fill the rest).
    #[arg(long, value_name = "URL")]
    pub pg: Option<String>,
}

/// The tests `dbio pg run` has.
const TESTS: &[Test] = &[
    Test::ReadIops,
    Test::ReadMbps,
    Test::WriteIops,
    Test::WriteMbps,
    Test::Redo,
];

/// `dbio pg run TEST [options]`.
#[derive(Debug, Clone)]
pub struct PgRun(pub RunArgs);

impl Args for PgRun {
    fn augment_args(cmd: Command) -> Command {
        let tests: Vec<&'static str> = TESTS.iter().map(|t| t.name()).collect();
        let cmd = cmd.arg(
            Arg::new("test")
                .value_name("TEST")
                .help("The test to run through the database.")
                .value_parser(PossibleValuesParser::new(tests))
                .required(true),
        );
        let mut cmd = crate::options::cli::augment(cmd, crate::options::Command::PgRun);
        // The same options, said of a run through the database.
        for (name, help) in [
            (
                "size",
                "The table's size: one row per 8 KiB page (K, M, G, T are binary; at least 8M) [default: 1G].",
            ),
            (
                "sessions",
                "Concurrent sessions, each a connection of its own (1 to 65536).",
            ),
            (
                "sync",
                "read-iops: index lookups, one block each (DataFileRead).",
            ),
            (
                "async",
                "read-iops (the default): prefetched bitmap heap scans over random ids at effective_io_concurrency = --depth.",
            ),
            (
                "depth",
                "read-iops --async: effective_io_concurrency of each session (SET, session-level).",
            ),
        ] {
            cmd = cmd.mut_arg(name, |a| a.help(help));
        }
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for PgRun {
    fn from_arg_matches(m: &ArgMatches) -> std::result::Result<Self, clap::Error> {
        let test = m
            .get_one::<String>("test")
            .map(|t| Test::from_name(t).expect("a possible value"));
        let mut a = RunArgs::defaults(test);
        crate::options::cli::read(m, crate::options::Command::PgRun, &mut a)?;
        Ok(PgRun(a))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> std::result::Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// The table size when `--size` is not given.
const DEFAULT_SIZE: u64 = 1 << 30;
/// The smallest table: 1,024 pages.
const MIN_SIZE: u64 = 8 << 20;
/// How often the table's pages are dropped from the page cache when the server reads
/// through it.
const DROP_EVERY: Duration = Duration::from_millis(50);

/// Which server a run goes through, as checked before anything was created.
enum Where {
    Throwaway {
        bins: server::Binaries,
        major: u32,
        who: server::RunAs,
    },
    Existing {
        config: Box<postgres::Config>,
    },
}

/// What a test is, from the test and --sync/--async.
fn kind_of(test: Test, sync: bool) -> Kind {
    match test {
        Test::ReadIops if sync => Kind::Lookup,
        Test::ReadIops => Kind::Batch,
        Test::ReadMbps => Kind::Scan,
        Test::WriteIops => Kind::Update,
        Test::WriteMbps => Kind::Copy,
        _ => Kind::Commit,
    }
}

/// The wait event a test's requests are named after, on major version `major` with
/// `io_method` (18+).
fn event_name(kind: Kind, major: u32, io_method: Option<&str>) -> &'static str {
    match kind {
        Kind::Lookup | Kind::Scan => "DataFileRead",
        Kind::Batch if major >= 18 && io_method.is_some_and(|m| m != "sync") => "AioIoCompletion",
        Kind::Batch if major >= 18 => "DataFileRead",
        Kind::Batch => "DataFilePrefetch",
        Kind::Update => "DataFileWrite",
        Kind::Copy => "DataFileExtend",
        Kind::Commit if major >= 18 => "WalSync",
        Kind::Commit => "WALSync",
    }
}

/// `dbio pg clean`: drops the marked schemas no running run holds, one line each, and
/// names each one it left and why (exit 1 when it left any).
pub fn clean(a: &PgClean) -> Result<ExitCode> {
    let mut config = connect::config(a.pg.as_deref().unwrap_or(""))?;
    let mut c = connect::connect(&mut config, "--pg")?;
    let done = schema::clean(&mut c)?;
    for name in &done.dropped {
        crate::safety::cleanup::undone_elsewhere(
            crate::safety::cleanup::PG_SCHEMA,
            &schema::what(name, &config),
        );
        println!("dropped schema {name}");
    }
    for (name, why) in &done.left {
        println!("left schema {name}: {}", crate::units::shown(why));
    }
    if done.dropped.is_empty() && done.left.is_empty() {
        println!("no dbio schema at {}", connect::describe(&config));
    }
    Ok(if done.left.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Failure
    })
}

/// Checks everything the input and the server decide, before anything is created.
fn check(a: &RunArgs) -> Result<(Test, Where, u64)> {
    let test = a
        .test
        .ok_or_else(|| Error::usage("TEST: one of the tests is needed"))?;
    let size = a.size.unwrap_or(DEFAULT_SIZE);
    if size < MIN_SIZE {
        return Err(Error::usage(format!(
            "--size {}: the table must be at least {} (1,024 pages)",
            size_label(size),
            size_label(MIN_SIZE)
        )));
    }
    let place = if let Some(bin) = &a.pg_bin {
        let bins = server::Binaries::of(bin)?;
        let who = server::run_as(&bins)?;
        let major = server::check_version(&bins, &who)?;
        let out = std::path::absolute(&a.out).unwrap_or_else(|_| a.out.clone());
        if let Err(at) = server::reachable_by(&who, &out) {
            return Err(Error::usage(format!(
                "--out {}: user {} (who runs the throwaway server) cannot enter {}; choose an --out under directories others may enter, e.g. /var/tmp/dbio-runs",
                a.out.shown(),
                who.name,
                at.shown()
            )));
        }
        Where::Throwaway { bins, major, who }
    } else {
        let mut config = connect::config(a.pg.as_deref().unwrap_or(""))?;
        let mut c = connect::connect(&mut config, "--pg")?;
        connect::check_server(&mut c, &config, "--pg")?;
        Where::Existing {
            config: Box::new(config),
        }
    };
    Ok((test, place, size))
}

/// `dbio pg run`: checked, then run in a new run directory; the outcome is printed and
/// recorded by the caller like a `dbio run`.
pub fn run(a: &RunArgs, stop: &Arc<AtomicBool>) -> Result<RunOutcome> {
    if a.pg.is_none()
        && a.pg_bin.is_none()
        && std::env::var_os("PGHOST").is_none()
        && std::env::var_os("PGDATABASE").is_none()
    {
        return Err(Error::usage(
            "--pg or --pg-bin: say which server to run through (an existing one, or a throwaway one started from these binaries)",
        ));
    }
    let (test, place, size) = check(a)?;
    crate::clock::calibrate();
    let started_at = crate::sys::utc_now_rfc3339();
    let kind = kind_of(test, a.sync);
    let mode = match kind {
        Kind::Batch => "async",
        Kind::Lookup => "sync",
        _ if a.sync => "sync",
        _ => "async",
    };
    let test_name = format!("pg {}", test.name());
    let tail = format!(
        "pg-{}_{mode}_{}sessions_{}_{}",
        test.name(),
        a.sessions,
        size_label(size),
        duration_label(a.duration)
    );
    let run_place = report::RunPlace::make(&a.out, None, &started_at, &tail, &test_name)?;
    let run_id = run_id(&started_at);
    let measured = measure(a, test, kind, place, size, &run_id, run_place.path(), stop);
    let (result, totals) = match measured {
        Ok(r) => r,
        Err(e) => {
            run_place.remove();
            return Err(e);
        }
    };
    let (summary, write_error) = match report::write_run(&run_place.dir, &result) {
        Ok(s) => (s, None),
        Err(e) => (
            report::summary::render(&result),
            Some(Error::Io(format!(
                "the results could not all be written into {} ({e})",
                run_place.path().shown()
            ))),
        ),
    };
    let exit = if write_error.is_some() || !result.errors.is_empty() {
        ExitCode::IoError
    } else if result.stop_reason == "interrupted" {
        ExitCode::Interrupted
    } else {
        ExitCode::Ok
    };
    let run_dir = run_place.path().to_path_buf();
    run_place.finish();
    Ok(RunOutcome {
        result,
        run_dir,
        summary,
        exit,
        write_error,
        totals,
    })
}

/// `<yyyymmddThhmmss>_<4 hex digits>`: the run's id, in its schema's name.
fn run_id(started_at: &str) -> String {
    let stamp: String = started_at
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(15)
        .collect();
    format!("{stamp}_{:04x}", fastrand::u16(..))
}

/// Everything between the run directory and the result: the server, the schema, the
/// data, the sessions, the observer. Whatever was made is removed on every way out.
#[allow(clippy::too_many_arguments)]
fn measure(
    a: &RunArgs,
    test: Test,
    kind: Kind,
    place: Where,
    size: u64,
    run_id: &str,
    run_dir: &Path,
    stop: &Arc<AtomicBool>,
) -> Result<(RunResult, Vec<crate::measure::EventTotals>)> {
    let load_started = std::time::Instant::now();
    let mut server = None;
    let (mut config, major) = match place {
        Where::Throwaway { bins, major, who } => {
            let mut s = server::Server::create(
                &bins,
                major,
                who,
                &run_dir.join("pg"),
                a.sessions,
                &a.pg_set,
            )?;
            s.start()?;
            let c = s.config();
            server = Some(s);
            (c, major)
        }
        Where::Existing { config } => (*config, 0),
    };
    let owned = server.is_some();
    let mut client = connect::connect(&mut config, "--pg")?;
    let checked = connect::check_server(&mut client, &config, "--pg")?;
    let major = if major > 0 {
        major
    } else {
        (checked.version_num / 10_000) as u32
    };
    let io_method: Option<String> = client
        .query_one("SELECT current_setting('io_method', true)", &[])
        .ok()
        .and_then(|r| r.get(0));
    let mut schema = schema::Schema::create(&config, run_id)?;
    let rows = size / load::PAGE;
    let reads = matches!(kind, Kind::Lookup | Kind::Batch | Kind::Scan);
    let mut notes: Vec<String> = Vec::new();
    if matches!(kind, Kind::Commit | Kind::Copy) {
        load::write_tables(&mut client, &schema.name, a.sessions, kind == Kind::Copy)?;
    } else {
        load::blocks(&mut client, &schema.name, rows, stop)?;
        // A checkpoint is a server-wide act: only on a server dbio owns.
        if owned {
            load::checkpoint(&mut client);
        } else {
            notes.push(load::NO_CHECKPOINT.into());
        }
    }
    // The loaded table must not be in shared_buffers at the start.
    if let Some(s) = server.as_mut() {
        drop(client);
        s.stop();
        s.start()?;
        client = connect::connect(&mut config, "--pg-bin")?;
    } else if reads {
        notes.push(
            "the server is not restarted (not dbio's): part of the table may be in shared_buffers at the start".into(),
        );
    }
    let direct: bool = client
        .query_one(
            "SELECT coalesce(current_setting('debug_io_direct', true), '')",
            &[],
        )
        .ok()
        .map(|r| r.get::<_, String>(0))
        .is_some_and(|v| v.split(',').any(|x| x.trim() == "data"));
    let data_dir = match &server {
        Some(s) => Some(s.data_directory()),
        None => load::data_directory(&mut client),
    };
    let mut fadvise_files = None;
    let cache = if direct {
        CacheControl::DirectIo
    } else if !reads {
        CacheControl::NotControlled("a write test: writes go through the page cache".into())
    } else {
        match data_dir
            .as_deref()
            .and_then(|d| load::relation_files(&mut client, &schema.name, d))
        {
            Some(files) => {
                load::drop_pages(&files);
                fadvise_files = Some(files);
                CacheControl::Fadvise
            }
            None => CacheControl::NotControlled(
                "no direct I/O, and the table's files are not readable here".into(),
            ),
        }
    };
    let shape = Shape {
        kind,
        schema: schema.name.clone(),
        rows,
        sessions: a.sessions,
        depth: a.depth,
        batch: 32.max(a.depth * 4).min(1024),
        bulk_rows: (rows / u64::from(a.sessions)).max(workloads::CHUNK_BLOCKS),
        seed: fastrand::u64(..),
    };
    let prepare_seconds = load_started.elapsed().as_secs_f64();
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted(
            "interrupted before the run started; nothing measured".into(),
        ));
    }
    let observer = Observer::start(&config, 100)?;
    let mut sessions = Vec::with_capacity(a.sessions as usize);
    for id in 0..a.sessions {
        let c = connect::connect(&mut config, "--pg")?;
        sessions.push(Session::new(c, &shape, id)?);
    }
    let event = event_name(kind, major, io_method.as_deref());
    let counters = SessionCounters::many(a.sessions as usize, 1);
    let mut sampler = Sampler::new(counters.clone(), 1);
    let over = AtomicBool::new(false);
    let cpu0 = cpu_times();
    let t0 = now_ns();
    let window = Window {
        start_ns: t0 + a.warmup.as_nanos() as u64,
        end_ns: t0 + (a.warmup + a.duration).as_nanos() as u64,
    };
    let mut failures: Vec<String> = Vec::new();
    let mut lost: Vec<workloads::Failure> = Vec::new();
    let mut last_second_end = window.start_ns;
    std::thread::scope(|scope| {
        if let Some(files) = &fadvise_files {
            let over = &over;
            scope.spawn(move || load::drop_pages_until(files, DROP_EVERY, over));
        }
        let handles: Vec<_> = sessions
            .into_iter()
            .zip(&counters)
            .map(|(s, c)| {
                let rec = Recorder::new(Arc::clone(c), window);
                let (shape, stop) = (&shape, &**stop);
                scope.spawn(move || s.run(shape, &rec, stop))
            })
            .collect();
        // The per-second history, on this thread; sessions never wait for it.
        let seconds = a.duration.as_secs_f64().ceil().max(1.0) as u32;
        'seconds: for t in 1..=seconds {
            let due = (window.start_ns + u64::from(t) * 1_000_000_000).min(window.end_ns);
            loop {
                let now = now_ns();
                if now >= due {
                    break;
                }
                if stop.load(Ordering::Relaxed) || handles.iter().all(|h| h.is_finished()) {
                    if now > window.start_ns {
                        sampler.close_second(t);
                        last_second_end = now;
                    }
                    break 'seconds;
                }
                std::thread::sleep(Duration::from_nanos((due - now).min(50_000_000)));
            }
            sampler.close_second(t);
            last_second_end = due;
        }
        over.store(true, Ordering::Relaxed);
        for (n, h) in handles.into_iter().enumerate() {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(f)) => {
                    failures.push(format!("session {}: {}", n + 1, f.text));
                    lost.push(f);
                }
                Err(_) => failures.push("a session panicked".into()),
            }
        }
    });
    let cpu1 = cpu_times();
    let interrupted = stop.load(Ordering::Relaxed);
    let measured_seconds = (last_second_end.saturating_sub(window.start_ns)) as f64 / 1e9;
    let mut totals = sampler.totals();
    for t in &mut totals {
        // Each request is a wait of the session's.
        t.waits_are_requests();
    }
    let db = sampler.db_totals();
    let events = vec![rj::event_result(event, &totals[0], measured_seconds)];
    let mean_read_us = reads.then_some(events[0].latency_us.mean);
    let ctx = RunContext {
        test: test.name().into(),
        asynchronous: kind == Kind::Batch,
        depth: a.depth,
        sessions: a.sessions,
        session_set: shape.session_set(),
        cache: cache.clone(),
        mean_read_us,
        load_continues: false,
    };
    // Sessions the server cut off: what happened, and when (the result is kept, partial).
    notes.extend(lost_sessions(&lost, t0));
    // The database may have gone away: what was measured is kept without its statistics.
    let section = match observer.finish(&ctx) {
        Ok(s) => Some(s),
        Err(e) if !lost.is_empty() => {
            notes.push(format!(
                "no PostgreSQL statistics for this run: the observer's connection failed too ({e})"
            ));
            None
        }
        Err(e) => return Err(e),
    };
    // The schema goes before the server.
    if let Err(e) = schema.drop_now() {
        notes.push(format!(
            "schema {} could not be dropped ({e}); it is noted as left behind: `dbio doctor` names it, `dbio clean --stale` or `dbio pg clean` drops it",
            schema.name
        ));
    }
    drop(server);
    let per_s = |x: f64| {
        if measured_seconds > 0.0 {
            x / measured_seconds
        } else {
            0.0
        }
    };
    let e = events[0].clone();
    let writes = matches!(kind, Kind::Update | Kind::Copy);
    let mut totals_json = rj::Totals {
        requests: e.requests,
        bytes: e.bytes,
        ..Default::default()
    };
    if reads {
        totals_json.read_iops = e.iops;
        totals_json.read_mib_per_s = e.mib_per_s;
    } else if writes {
        totals_json.write_iops = e.iops;
        totals_json.write_mib_per_s = e.mib_per_s;
    } else {
        totals_json.commits_per_s = Some(per_s(db.commits as f64));
        totals_json.transactions_per_s = Some(per_s(db.transactions as f64));
    }
    let mut warnings: Vec<Warning> = notes.into_iter().map(Warning::Setup).collect();
    if let Some(mean) = mean_read_us
        && e.requests > 0
        && mean < 50.0
    {
        warnings.push(Warning::Setup(format!(
            "reads averaged {mean:.1} µs: the page cache answered, not the storage"
        )));
    }
    if interrupted {
        warnings.push(Warning::Interrupted {
            measured_s: measured_seconds,
            planned_s: a.duration.as_secs_f64(),
        });
    }
    let (partial, stop_reason) = if !failures.is_empty() {
        (true, "error")
    } else if interrupted {
        (true, "interrupted")
    } else {
        (false, "completed")
    };
    let target = match &data_dir {
        Some(d) if a.pg_bin.is_some() => d.display().to_string(),
        _ => connect::describe(&config),
    };
    let cpu_total = (cpu1.0 - cpu0.0) + (cpu1.1 - cpu0.1);
    let mut open_flags = vec![format!("server: PostgreSQL {}", checked.version)];
    open_flags.extend(
        shape
            .session_set()
            .iter()
            .map(|(n, v)| format!("SET {n} = {v}")),
    );
    if let Some(m) = &io_method {
        open_flags.push(format!("io_method = {m}"));
    }
    let mut result = RunResult {
        pg: None,
        schema: rj::SCHEMA.into(),
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        dbio_build: Some(rj::DbioBuildJson::this()),
        test: format!("pg {}", test.name()),
        started_at: crate::sys::utc_now_rfc3339(),
        measured_seconds,
        partial,
        stop_reason: stop_reason.into(),
        config: rj::RunConfigJson {
            target,
            size_bytes: if reads || kind == Kind::Update {
                size
            } else {
                0
            },
            block_size: load::PAGE,
            files: 1,
            sessions: a.sessions as usize,
            submission: if kind == Kind::Batch { "async" } else { "sync" }.into(),
            io_mode: match &cache {
                CacheControl::DirectIo => "direct (debug_io_direct=data)".into(),
                CacheControl::Fadvise => "buffered, page cache dropped (posix_fadvise)".into(),
                CacheControl::NotControlled(why) => format!("buffered ({why})"),
            },
            engine_requested: "postgresql".into(),
            engine: "postgresql".into(),
            engine_reason: format!("{} sessions through SQL", a.sessions),
            engine_notes: Vec::new(),
            open_flags,
            duration_s: a.duration.as_secs_f64(),
            warmup_s: a.warmup.as_secs_f64(),
            batch: if kind == Kind::Batch {
                shape.batch as usize
            } else {
                1
            },
            keep_inflight: false,
            depth: a.depth as usize,
            mbrc: if kind == Kind::Scan {
                workloads::CHUNK_BLOCKS as usize
            } else {
                1
            },
            request_bytes: shape.request_bytes(),
            seed: shape.seed,
            dio_mem_align: 0,
            dio_offset_align: 0,
            dio_align_source: "default".into(),
            buffer_align: 0,
            clock: crate::clock::describe(),
            out: a.out.display().to_string(),
            continue_on_error: false,
            destructive: false,
            fill: "postgresql".into(),
            verify: false,
            span: 1.0,
        },
        dataset: rj::DataSetJson {
            path: format!("{}.blocks", schema.name),
            kind: "postgresql".into(),
            size_bytes: size,
            files: 1,
            block_size: load::PAGE,
            reused: false,
            prepare_seconds,
            fill_method: Some("INSERT ... generate_series".into()),
            fill: None,
            disk_bytes: size,
            region: None,
            preconditioned: None,
        },
        host: rj::HostJson::current(),
        events,
        totals: totals_json,
        cpu: rj::CpuJson {
            user_s: cpu1.0 - cpu0.0,
            system_s: cpu1.1 - cpu0.1,
            cpu_s_per_1k_requests: (e.requests > 0)
                .then(|| cpu_total / (e.requests as f64 / 1000.0)),
        },
        timeseries: sampler
            .history
            .iter()
            .map(|p| rj::SecondJson {
                t: p.t,
                event: event.into(),
                requests: p.requests,
                bytes: p.bytes,
                mean_us: p.mean_us,
                p99_us: p.p99_us,
                not_running_s: None,
            })
            .collect(),
        warnings,
        errors: failures,
        ash: None,
        redo: None,
        oltp: None,
        temp: None,
        job: None,
        classes: Vec::new(),
        verdict: None,
        steady_state: None,
        os: None,
        storage: None,
        lint: Vec::new(),
        verify: None,
        hosts: Vec::new(),
    };
    result.started_at = crate::sys::utc_now_rfc3339();
    if let Some(section) = section {
        attach(&mut result, section);
    }
    Ok((result, totals))
}

/// Puts what the database saw into the result (its `pg` section).
fn attach(result: &mut RunResult, section: observe::PgSection) {
    result.pg = Some(section);
}

/// What the server did to the sessions it cut off: one line for the connections it closed
/// ("the server closed 4 sessions' connections at 12.3 s: terminating connection due to
/// administrator command" — the server's own words when any session heard them, the time
/// from the start of the run to the first), one per reason for sessions that failed
/// otherwise.
fn lost_sessions(lost: &[workloads::Failure], t0: u64) -> Vec<String> {
    let at = |fs: &[&workloads::Failure]| {
        let first = fs.iter().map(|f| f.at_ns).min().unwrap_or(t0);
        first.saturating_sub(t0) as f64 / 1e9
    };
    let sessions = |n: usize, what: &str| {
        if n == 1 {
            format!("1 session's {what}")
        } else {
            format!("{n} sessions' {what}s")
        }
    };
    let mut lines = Vec::new();
    let closed: Vec<&workloads::Failure> = lost.iter().filter(|f| f.closed).collect();
    if !closed.is_empty() {
        let said: Vec<&workloads::Failure> =
            closed.iter().copied().filter(|f| f.server_said).collect();
        let mut reasons: Vec<&str> = Vec::new();
        for f in if said.is_empty() { &closed } else { &said } {
            if !reasons.contains(&f.text.as_str()) {
                reasons.push(&f.text);
            }
        }
        lines.push(format!(
            "the server closed {} at {:.1} s: {}; what was measured until then is kept (partial)",
            sessions(closed.len(), "connection"),
            at(&closed),
            reasons.join("; ")
        ));
    }
    let mut others: Vec<(&str, Vec<&workloads::Failure>)> = Vec::new();
    for f in lost.iter().filter(|f| !f.closed) {
        match others.iter_mut().find(|(t, _)| *t == f.text) {
            Some((_, v)) => v.push(f),
            None => others.push((&f.text, vec![f])),
        }
    }
    for (text, fs) in others {
        lines.push(format!(
            "{} ended at {:.1} s: {text}; what was measured until then is kept (partial)",
            if fs.len() == 1 {
                "1 session".to_string()
            } else {
                format!("{} sessions", fs.len())
            },
            at(&fs)
        ));
    }
    lines
}

/// This process's user and system CPU seconds.
fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(u.ru_utime), s(u.ru_stime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_cut_off_are_said_once_per_reason_from_the_first() {
        let f = |at_ns: u64, text: &str, closed: bool, server_said: bool| workloads::Failure {
            at_ns,
            text: text.into(),
            closed,
            server_said,
        };
        let admin = "terminating connection due to administrator command";
        let lines = lost_sessions(
            &[
                f(3_500_000_000, admin, true, true),
                // Another session read the end of its connection before the message.
                f(3_400_000_000, "connection closed", true, false),
                f(9_000_000_000, "deadlock detected", false, true),
            ],
            1_000_000_000,
        );
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with(&format!(
                "the server closed 2 sessions' connections at 2.4 s: {admin};"
            )),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].starts_with("1 session ended at 8.0 s: deadlock detected"),
            "{}",
            lines[1]
        );
        let lines = lost_sessions(&[f(1_500_000_000, "connection closed", true, false)], 0);
        assert!(
            lines[0].starts_with(
                "the server closed 1 session's connection at 1.5 s: connection closed"
            ),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn events_are_named_after_the_wait_events_of_the_version() {
        assert_eq!(event_name(Kind::Lookup, 15, None), "DataFileRead");
        assert_eq!(event_name(Kind::Batch, 15, None), "DataFilePrefetch");
        assert_eq!(
            event_name(Kind::Batch, 18, Some("worker")),
            "AioIoCompletion"
        );
        assert_eq!(event_name(Kind::Batch, 18, Some("sync")), "DataFileRead");
        assert_eq!(event_name(Kind::Commit, 15, None), "WALSync");
        assert_eq!(event_name(Kind::Commit, 18, None), "WalSync");
        assert_eq!(kind_of(Test::ReadIops, true), Kind::Lookup);
        assert_eq!(kind_of(Test::ReadIops, false), Kind::Batch);
    }
}
