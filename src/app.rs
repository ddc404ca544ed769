//! The commands: each turns validated arguments into work and decides what to print.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::cli::{
    CalibrateArgs, CleanArgs, Cli, Command, CompareArgs, MapArgs, PrepareArgs, ReportArgs, RunArgs,
    RunsArgs, ShowArgs, SweepArgs,
};
use crate::config::{DataSetSpec, RunConfig, rand_seed};
use crate::dataset::{self, FillOptions};
use crate::error::{Error, ExitCode, Result};
use crate::report::summary::thousands;
use crate::run::RunOutcome;
use crate::store::{RunFilter, RunListing, Store};
use crate::units::human_bytes;

/// Runs the command line. Returns the exit status.
pub fn main(cli: Cli) -> Result<ExitCode> {
    let stop = install_signal_handlers()?;
    match cli.command {
        Command::Run(a) => run(&a, &stop, cli.db.as_deref()),
        Command::Prepare(a) => prepare(&a, &stop),
        Command::Clean(a) if a.stale => crate::doctor::clean_stale(&a.paths),
        Command::Clean(a) => clean(&a),
        Command::Report(a) => report(&a),
        Command::Runs(a) => runs(&a, cli.db.as_deref()),
        Command::Show(a) => show(&a, cli.db.as_deref()),
        Command::Compare(a) => compare(&a, cli.db.as_deref()),
        Command::Map(a) => map(&a),
        Command::Matrix(a) => crate::matrix::matrix(&a, &stop),
        Command::Doctor(a) => crate::doctor::doctor(&a.paths),
        Command::Sweep(a) => sweep(&a, &stop, cli.db.as_deref()),
        Command::Calibrate(a) => calibrate(&a, &stop, cli.db.as_deref()),
        Command::Verify(a) => verify(&a.path, &stop),
        Command::Mem(a) => mem(&a, &stop, cli.db.as_deref()),
    }
}

/// `dbio mem`: the summary (or result.json), recorded in the store like a run.
fn mem(a: &crate::mem::MemArgs, stop: &AtomicBool, db: Option<&Path>) -> Result<ExitCode> {
    let outcome = match crate::mem::run(a, stop)? {
        crate::mem::Output::Topology { text, json } => {
            let _ = write!(
                std::io::stdout().lock(),
                "{}",
                if a.json { json } else { text }
            );
            return Ok(ExitCode::Ok);
        }
        crate::mem::Output::Run(o) => o,
    };
    let mut out = std::io::stdout().lock();
    if a.json {
        let _ = write!(out, "{}", crate::mem::json_text(&outcome.result)?);
    } else {
        let _ = write!(out, "{}", outcome.summary);
    }
    eprintln!("dbio: results in {}", outcome.run_dir.display());
    record_in_store(db, "memory run", &outcome.run_dir, |store| {
        store.record_mem(&outcome.result, &outcome.run_dir)
    });
    Ok(outcome.exit)
}

/// SIGINT, SIGTERM and SIGHUP set the stop flag (runs end within 2 s and keep their partial
/// result); a second one exits at once, after removing the files registered in
/// [`crate::safety::cleanup`] (a run's temporary files, a preparation's partial files).
fn install_signal_handlers() -> Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static RECEIVED: AtomicUsize = AtomicUsize::new(0);
    let sigs = [SIGINT, SIGTERM, SIGHUP];
    let stop = Arc::new(AtomicBool::new(false));
    let fail = |e: std::io::Error| Error::other(format!("cannot install signal handlers: {e}"));
    for sig in sigs {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(fail)?;
        // SAFETY: the action only increments an atomic, which is async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, || {
                RECEIVED.fetch_add(1, Ordering::SeqCst);
            })
        }
        .map_err(fail)?;
    }
    // The second signal is handled on a thread, not in the handler: removing files is not
    // something a signal handler may do.
    let mut signals = signal_hook::iterator::Signals::new(sigs).map_err(fail)?;
    std::thread::Builder::new()
        .name("dbio-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if RECEIVED.load(Ordering::SeqCst) >= 2 {
                    let n = crate::safety::cleanup::remove_registered();
                    if n > 0 {
                        eprintln!("dbio: stopped at once; removed {n} temporary file(s)");
                    }
                    // SAFETY: _exit ends the process without running anything else.
                    unsafe { libc::_exit(ExitCode::Interrupted as i32) };
                }
            }
        })
        .map_err(fail)?;
    Ok(stop)
}

fn run(a: &RunArgs, stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    let cfg = RunConfig::from_args(a)?;
    if let Some(path) = &cfg.save_job {
        let text = crate::job::equivalent(&cfg)?;
        std::fs::write(path, text).map_err(|e| Error::io("cannot write the job file", path, &e))?;
        eprintln!("dbio: wrote the equivalent job file {}", path.display());
    }
    let outcome = crate::run::run(&cfg, stop)?;
    let mut out = std::io::stdout().lock();
    if cfg.json {
        let json = serde_json::to_string_pretty(&outcome.result)
            .map_err(|e| Error::other(e.to_string()))?;
        let _ = writeln!(out, "{json}");
    } else {
        let _ = write!(out, "{}", outcome.summary);
    }
    eprintln!("dbio: results in {}", outcome.run_dir.display());
    record(db, &outcome);
    Ok(outcome.exit)
}

/// `dbio sweep`: every point is recorded like a run; the table (or sweep.json) at the end.
fn sweep(a: &SweepArgs, stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    let s = crate::sweep::run(a, stop, &mut |o| record(db, o))?;
    let mut out = std::io::stdout().lock();
    if a.run.json {
        let json =
            serde_json::to_string_pretty(&s.result).map_err(|e| Error::other(e.to_string()))?;
        let _ = writeln!(out, "{json}");
    } else {
        let _ = write!(out, "{}", s.table);
    }
    eprintln!(
        "dbio: sweep.json, sweep.csv and sweep.html in {}",
        s.dir.display()
    );
    Ok(s.exit)
}

/// `dbio calibrate`: every point is recorded like a run; the curves and answers at the end.
fn calibrate(a: &CalibrateArgs, stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    let c = crate::sweep::calibrate::run(a, stop, &mut |o| record(db, o))?;
    let mut out = std::io::stdout().lock();
    if a.json {
        let json =
            serde_json::to_string_pretty(&c.result).map_err(|e| Error::other(e.to_string()))?;
        let _ = writeln!(out, "{json}");
    } else {
        let _ = write!(out, "{}", c.text);
    }
    eprintln!("dbio: calibrate.json in {}", c.dir.display());
    Ok(c.exit)
}

/// Records a finished run in the results store. Its run directory is already written, so a
/// store that cannot be written costs one warning line, never the run.
fn record(db: Option<&Path>, outcome: &RunOutcome) {
    record_in_store(db, "run", &outcome.run_dir, |store| {
        store.record(&outcome.result, &outcome.run_dir)
    });
}

/// Records with `insert` and says so (as "recorded as `what` ID"), or warns.
fn record_in_store(
    db: Option<&Path>,
    what: &str,
    run_dir: &Path,
    insert: impl FnOnce(&mut Store) -> Result<i64>,
) {
    let recorded = store_path(db).and_then(|path| {
        let id = insert(&mut Store::open(&path)?)?;
        Ok((id, path))
    });
    match recorded {
        Ok((id, path)) => eprintln!("dbio: recorded as {what} {id} in {}", path.display()),
        Err(e) => eprintln!(
            "dbio: warning: the run was not recorded ({e}); its results are in {}",
            run_dir.display()
        ),
    }
}

/// `--db`/`DBIO_DB`, else the default place of the results store.
fn store_path(db: Option<&Path>) -> Result<PathBuf> {
    match db {
        Some(p) => Ok(p.to_path_buf()),
        None => crate::store::default_path(),
    }
}

fn runs(a: &RunsArgs, db: Option<&Path>) -> Result<ExitCode> {
    let path = store_path(db)?;
    let store = Store::open_existing(&path)?;
    let runs = store.runs(&RunFilter {
        test: a.test.map(|t| t.name().to_string()),
        last: a.last.map(|n| n as usize),
    })?;
    // Memory runs (`dbio mem`) have their own table and numbering; listed after the I/O
    // runs when no test is asked for.
    let mem_runs = match a.test {
        None if !a.json => store.mem_runs(a.last.map(|n| n as usize))?,
        _ => Vec::new(),
    };
    let mut out = std::io::stdout().lock();
    if a.json {
        let json = serde_json::to_string_pretty(&runs).map_err(|e| Error::other(e.to_string()))?;
        let _ = writeln!(out, "{json}");
    } else if runs.is_empty() && mem_runs.is_empty() {
        let _ = writeln!(out, "no runs recorded in {}", path.display());
    } else {
        if !runs.is_empty() {
            let _ = write!(out, "{}", runs_table(&runs));
        }
        if !mem_runs.is_empty() {
            let _ = write!(
                out,
                "{}Memory runs (dbio mem)\n{}",
                if runs.is_empty() { "" } else { "\n" },
                crate::mem::summary::runs_table(&mem_runs)
            );
        }
    }
    Ok(ExitCode::Ok)
}

/// `dbio runs` as a table: one line per run, the main event's headline figures last.
fn runs_table(runs: &[RunListing]) -> String {
    let whole = |v: Option<f64>| v.map_or("-".to_string(), |v| thousands(v.round() as u64));
    let header = [
        "ID",
        "Started",
        "Test",
        "Mode",
        "Block",
        "Sess",
        "Engine",
        "Main event",
        "IOPS",
        "MiB/s",
        "p99 (µs)",
    ]
    .map(String::from);
    let rows = runs.iter().map(|r| {
        let cells = [
            r.id.to_string(),
            r.started_at.clone(),
            r.test.clone(),
            r.submission.clone(),
            crate::units::size_label(r.block_size),
            r.sessions.to_string(),
            r.engine.clone(),
            r.main_event.clone().unwrap_or_else(|| "-".into()),
            whole(r.iops),
            r.mib_per_s.map_or("-".to_string(), |v| format!("{v:.1}")),
            whole(r.p99_us),
        ];
        (cells, r.partial)
    });
    let mut o = String::new();
    for (cells, partial) in std::iter::once((header, false)).chain(rows) {
        let [
            id,
            started,
            test,
            mode,
            block,
            sessions,
            engine,
            event,
            iops,
            mib,
            p99,
        ] = cells;
        o += &format!(
            "{id:>5}  {started:<20}  {test:<10} {mode:<5} {block:>5} {sessions:>4}  {engine:<6} {event:<26} {iops:>11} {mib:>9} {p99:>9}{}\n",
            if partial { "  partial" } else { "" }
        );
    }
    o
}

fn show(a: &ShowArgs, db: Option<&Path>) -> Result<ExitCode> {
    let store = Store::open_existing(&store_path(db)?)?;
    let run = store.run_or_usage_error(a.id)?;
    let mut out = std::io::stdout().lock();
    if a.json {
        let _ = write!(out, "{}", run.result_json);
    } else {
        // Made from the stored result, not summary.txt: the directory may be gone.
        let _ = write!(out, "{}", crate::report::summary::render(&run.result));
    }
    Ok(ExitCode::Ok)
}

fn compare(a: &CompareArgs, db: Option<&Path>) -> Result<ExitCode> {
    let store = Store::open_existing(&store_path(db)?)?;
    let stored = a
        .ids
        .iter()
        .map(|&id| store.run_or_usage_error(id))
        .collect::<Result<Vec<_>>>()?;
    let runs: Vec<(String, &crate::report::RunResult)> = stored
        .iter()
        .map(|s| (format!("run {}", s.id), &s.result))
        .collect();
    if let Some(file) = &a.html {
        std::fs::write(file, crate::report::html::compare_html(&runs))
            .map_err(|e| Error::Io(format!("cannot write {}: {e}", file.display())))?;
        eprintln!("dbio: comparison written to {}", file.display());
    }
    let _ = write!(
        std::io::stdout().lock(),
        "{}",
        crate::report::compare::render(&runs)
    );
    Ok(ExitCode::Ok)
}

fn prepare(a: &PrepareArgs, stop: &Arc<AtomicBool>) -> Result<ExitCode> {
    let spec = DataSetSpec::from_args(&a.dataset)?;
    let written = AtomicU64::new(0);
    let seed = a.dataset.seed.unwrap_or_else(rand_seed);
    let fill = FillOptions {
        seed,
        buffered: a.buffered,
        written: &written,
        stop,
    };
    let ds = crate::progress::follow_bytes(
        crate::progress::wanted(a.quiet),
        spec.size,
        "preparing the data set",
        &written,
        || {
            dataset::prepare(&dataset::Prepare {
                target: &spec.target,
                data: Some(&spec),
                redo: None,
                fresh: spec.fresh,
                fill: &fill,
            })
        },
    )?;
    if !ds.reused && ds.prepare_seconds > 0.0 {
        println!(
            "prepared {} in {:.1} s ({:.0} MiB/s, {})",
            human_bytes(ds.size_bytes()),
            ds.prepare_seconds,
            ds.size_bytes() as f64 / (1u64 << 20) as f64 / ds.prepare_seconds,
            ds.fill_method.as_deref().unwrap_or("")
        );
    }
    println!("{}", ds.describe());
    Ok(ExitCode::Ok)
}

/// `dbio verify PATH`: every bad block on a line of its own, then one summary line.
fn verify(path: &Path, stop: &AtomicBool) -> Result<ExitCode> {
    let r = crate::verify::scan::scan(path, stop)?;
    let mut out = std::io::stdout().lock();
    for line in &r.bad {
        let _ = writeln!(out, "{line}");
    }
    for line in &r.io_errors {
        let _ = writeln!(out, "{line}");
    }
    match &r.seq {
        crate::verify::scan::SeqCheck::Exact => {}
        crate::verify::scan::SeqCheck::LowerBound => eprintln!(
            "dbio: note: the last run on this data set did not end (killed?): a block older than recorded is still found, a lost write of that run is not"
        ),
        crate::verify::scan::SeqCheck::None(why) => {
            eprintln!("dbio: note: {why}: checksums and places are checked, lost writes cannot be")
        }
    }
    let _ = writeln!(out, "{}", crate::verify::scan::summary_line(path, &r));
    Ok(if !r.io_errors.is_empty() {
        ExitCode::IoError
    } else if !r.bad.is_empty() {
        ExitCode::Failure
    } else if r.interrupted {
        ExitCode::Interrupted
    } else {
        ExitCode::Ok
    })
}

fn clean(a: &CleanArgs) -> Result<ExitCode> {
    let path = match a.paths.as_slice() {
        [] => std::path::PathBuf::from("./dbio-data"),
        [p] => p.clone(),
        _ => {
            return Err(Error::usage(
                "dbio clean takes one data set directory (or several with --stale)",
            ));
        }
    };
    let r = dataset::clean(&path)?;
    println!(
        "removed {} data file(s), {} from {}{}",
        r.files,
        human_bytes(r.bytes),
        path.display(),
        if r.removed_dir {
            " and the directory"
        } else {
            ""
        }
    );
    for p in &r.skipped {
        eprintln!(
            "dbio: left {} alone: it changed since dbio created it",
            p.display()
        );
    }
    Ok(ExitCode::Ok)
}

fn report(a: &ReportArgs) -> Result<ExitCode> {
    let r = crate::report::read_run(&a.run_dir)?;
    for p in crate::report::write_derived(&a.run_dir, &r)? {
        println!("wrote {}", p.display());
    }
    Ok(ExitCode::Ok)
}

/// `dbio map PATH`: the storage stack and its findings.
fn map(a: &MapArgs) -> Result<ExitCode> {
    std::fs::metadata(&a.path).map_err(|e| Error::io("cannot map", &a.path, &e))?;
    let (map, findings) = crate::storage::survey(&a.path, Some(a.block_size));
    let mut out = std::io::stdout().lock();
    if a.json {
        #[derive(serde::Serialize)]
        struct MapOutput<'a> {
            map: &'a crate::storage::StorageMap,
            lint: &'a [crate::report::result::LintJson],
        }
        let json = MapOutput {
            map: &map,
            lint: &findings,
        };
        let text = serde_json::to_string_pretty(&json).map_err(|e| Error::other(e.to_string()))?;
        let _ = writeln!(out, "{text}");
    } else {
        let _ = write!(out, "{}", crate::storage::map::render(&map));
        if !findings.is_empty() {
            let _ = writeln!(out, "\nFindings");
            for l in &findings {
                let _ = writeln!(
                    out,
                    "- {} [{}] {}: {}",
                    l.severity, l.rule, l.subject, l.message
                );
            }
        }
    }
    Ok(ExitCode::Ok)
}
