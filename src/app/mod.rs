//! The commands: each turns validated arguments into work and decides what to print.
//! `dbio wizard` ([`wizard`]) asks for a run and runs it through the same path as `dbio run`;
//! [`shell`] makes the completion scripts and the man page.

mod data_set;
mod database;
mod files;
mod metrics;
pub mod precondition;
mod record;
pub mod shell;
pub mod wizard;

use crate::units::Shown;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::cli::{Cli, Command, CompareArgs, MapArgs, ReportArgs, RunsArgs, ShowArgs};
use crate::dataset;
use crate::error::{Error, ExitCode, Result};
use crate::options::cli::RunCommand;
use crate::options::{RunArgs, RunConfig};
use crate::report::Output;
use crate::run::RunOutcome;
use crate::store::{RunFilter, Store};
use crate::sweep::SweepArgs;
use crate::sweep::calibrate::CalibrateArgs;
use crate::sweep::matrix::MatrixArgs;
pub(crate) use data_set::clean;
pub(crate) use files::{check_user_file, write_private_user_file, write_user_file};
use record::{
    LeftoverBook, forget_run_dir, in_present_store, known, note_new_data_set, note_run_dir, record,
    record_in_store, register, store_path,
};

/// Runs the command line. Returns the exit status.
pub fn main(cli: Cli) -> Result<ExitCode> {
    let stop = install_signal_handlers()?;
    let command = match &cli.command {
        Command::Run(_) => "run",
        Command::Pg(_) => "pg",
        Command::Mysql(_) => "mysql",
        Command::Prepare(_) => "prepare",
        Command::Matrix(_) => "matrix",
        Command::Sweep(_) => "sweep",
        Command::Calibrate(_) => "calibrate",
        Command::Wizard => "wizard",
        _ => "dbio",
    };
    crate::store::stop_waiting_on(Arc::clone(&stop));
    let db = cli.db.clone();
    dataset::on_new_data_set(Box::new(move |path, in_use| {
        note_new_data_set(db.as_deref(), path, in_use, command)
    }));
    let db = cli.db.clone();
    crate::run::on_run_dir(Box::new(move |path, event| {
        note_run_dir(db.as_deref(), path, event)
    }));
    crate::safety::cleanup::keep_leftovers_in(Box::new(LeftoverBook(cli.db.clone())));
    // A store dbio must not open (a link, someone else's file) is refused before anything
    // is created or measured, by every command that records into it.
    let records = matches!(
        cli.command,
        Command::Run(_)
            | Command::Pg(crate::database::pg::PgCommand::Run(_))
            | Command::Pg(crate::database::pg::PgCommand::Compare(_))
            | Command::Mysql(crate::database::mariadb::MysqlCommand::Run(_))
            | Command::Mysql(crate::database::mariadb::MysqlCommand::Compare(_))
            | Command::Prepare(_)
            | Command::Matrix(_)
            | Command::Sweep(_)
            | Command::Calibrate(_)
            | Command::Mem(_)
            | Command::Wizard
            | Command::Clean(_)
            | Command::Doctor(_)
    );
    if records && let Ok(path) = store_path(cli.db.as_deref()) {
        crate::store::preflight(&path)?;
    }
    // A command that makes a run checks the store it was given can take it, first.
    let makes = records && !matches!(cli.command, Command::Clean(_) | Command::Doctor(_));
    if makes && let Some(given) = cli.db.as_deref() {
        crate::store::check_given(given)?;
    }
    match cli.command {
        Command::Run(a) => run(&a, &stop, cli.db.as_deref()),
        Command::Prepare(a) => data_set::prepare(&a, &stop, cli.db.as_deref()),
        Command::Pg(crate::database::pg::PgCommand::Run(a)) => {
            let outcome = crate::database::pg::run(&a.0, &stop)?;
            finish_run(&outcome, a.0.json, a.0.format, cli.db.as_deref())
        }
        Command::Pg(crate::database::pg::PgCommand::Clean(a)) => crate::database::pg::clean(&a),
        Command::Pg(crate::database::pg::PgCommand::Observe(a)) => {
            crate::database::pg::observe::observe(&a, &stop)
        }
        Command::Pg(crate::database::pg::PgCommand::Compare(a)) => {
            database::compare(&a.0, &stop, cli.db.as_deref(), database::PG)
        }
        Command::Mysql(crate::database::mariadb::MysqlCommand::Run(a)) => {
            let outcome = crate::database::mariadb::run(&a.0, &stop)?;
            finish_run(&outcome, a.0.json, a.0.format, cli.db.as_deref())
        }
        Command::Mysql(crate::database::mariadb::MysqlCommand::Clean(a)) => {
            crate::database::mariadb::clean(&a)
        }
        Command::Mysql(crate::database::mariadb::MysqlCommand::Compare(a)) => {
            database::compare(&a.0, &stop, cli.db.as_deref(), database::MYSQL)
        }
        Command::Clean(a) if a.options.0.stale => {
            let known = known(cli.db.as_deref());
            if let Some(problem) = &known.store_problem {
                stderr_line!(
                    "dbio: note: {problem}; only the paths given and the default places are looked at"
                );
            }
            let db = cli.db.as_deref();
            crate::doctor::clean_stale(
                &a.paths,
                &known,
                &|path| forget_run_dir(db, path),
                Output::new(a.options.0.json, a.options.0.format),
            )
        }
        Command::Clean(a) => clean(&a, cli.db.as_deref()),
        Command::Precondition(a) => precondition::precondition(&a, &stop),
        Command::Report(a) => report(&a),
        Command::Runs(a) => runs(&a, cli.db.as_deref()),
        Command::Show(a) => show(&a, cli.db.as_deref()),
        Command::Compare(a) => compare(&a, cli.db.as_deref()),
        Command::Map(a) => map(&a),
        Command::Matrix(a) => matrix(&a, &stop, cli.db.as_deref()),
        Command::Doctor(a) => crate::doctor::doctor(
            &a.paths,
            &known(cli.db.as_deref()),
            Output::new(a.options.0.json, a.options.0.format),
        ),
        Command::Sweep(a) => sweep(&a, &stop, cli.db.as_deref()),
        Command::Calibrate(a) => calibrate(&a, &stop, cli.db.as_deref()),
        Command::Verify(a) => data_set::verify(&a, &stop),
        Command::Size(a) => crate::sizing::size(&a, cli.db.as_deref()),
        Command::Job(a) => job(&a, &stop),
        Command::Mem(a) => mem(&a, &stop, cli.db.as_deref()),
        Command::Wizard => crate::app::wizard::wizard(&stop, cli.db.as_deref()),
        Command::Completions(a) => print_bytes(&crate::app::shell::completions(a.shell)),
        Command::Man => print_bytes(&crate::app::shell::man_page()?),
        Command::Agent(a) => {
            crate::cluster::agent::main(a.options.0.pushed.as_deref(), &stop, &|ds, test| {
                register(cli.db.as_deref(), ds, test)
            })
        }
    }
}

/// `dbio mem`: the summary (or result.json), recorded in the store like a run.
fn mem(a: &crate::mem::MemArgs, stop: &AtomicBool, db: Option<&Path>) -> Result<ExitCode> {
    let out = Output::new(a.options.0.json, a.options.0.format);
    let outcome = match crate::mem::run(a, stop)? {
        crate::mem::Output::Topology { report, json } => {
            out.emit(&report, &json)?;
            return Ok(ExitCode::Ok);
        }
        crate::mem::Output::Run(o) => o,
    };
    out.emit(
        &crate::mem::report::report(&outcome.result),
        &outcome.result,
    )?;
    stderr_line!("dbio: results in {}", outcome.run_dir.shown());
    let recorded = record_in_store(db, "memory run", &outcome.run_dir, |store| {
        store.record_mem(&outcome.result.record()?, &outcome.run_dir)
    });
    if !recorded && outcome.exit == ExitCode::Ok {
        return Ok(ExitCode::Interrupted);
    }
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
                        stderr_line!("dbio: stopped at once; removed {n} temporary file(s)");
                    }
                    if crate::safety::cleanup::detach_registered_mounts() > 0 {
                        stderr_line!(
                            "dbio: stopped at once; the file system sweep's mount is detached, but its last file system is still on the device (`wipefs -a` it, then {})",
                            crate::sweep::filesystem::zero_by_hand("DEV")
                        );
                    }
                    // SAFETY: _exit ends the process without running anything else.
                    unsafe { libc::_exit(ExitCode::Interrupted as i32) };
                }
            }
        })
        .map_err(fail)?;
    Ok(stop)
}

fn run(cmd: &RunCommand, stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    if crate::cluster::coordinator::wanted(&cmd.0)? {
        return run_across_hosts(&cmd.0, stop, db);
    }
    let (cfg, pre) = check_run(&cmd.0)?;
    run_checked(&cmd.0, &cfg, &pre, stop, db)
}

/// Validates the run `a` describes in two stages before anything is created: the input,
/// then the machine.
pub fn check_run(a: &RunArgs) -> Result<(RunConfig, crate::run::Preflight)> {
    let cfg = crate::options::check::run_config(a)?;
    let pre = crate::options::environment::check(&cfg)?;
    Ok((cfg, pre))
}

/// A run validated by [`check_run`]: its `--save-job` file written, the run made (with live
/// progress on a terminal), its summary printed and the run recorded in the results store.
/// `dbio run` and `dbio wizard` both run through here.
pub fn run_checked(
    a: &RunArgs,
    cfg: &RunConfig,
    pre: &crate::run::Preflight,
    stop: &Arc<AtomicBool>,
    db: Option<&Path>,
) -> Result<ExitCode> {
    // Every file the run names is checked before anything is created: --save-job must be
    // new, the metrics file new or an earlier one of dbio's. Whatever happens next, the
    // metrics file goes again at the end (unless kept).
    if let Some(path) = &cfg.save_job {
        check_user_file(path, "--save-job")?;
    }
    let metrics = match &a.metrics {
        Some(path) => Some(metrics::Metrics::claim(
            path,
            a.metrics_keep,
            cfg.test.name(),
        )?),
        None => None,
    };
    if let Some(m) = &metrics {
        m.start()?;
    }
    let mut with_metrics = pre.clone();
    if let Some(m) = &metrics {
        with_metrics.hooks = Arc::new(m.hooks());
    }
    let outcome = (|| {
        if let Some(path) = &cfg.save_job {
            let text = crate::options::save::job_file(cfg, a)?;
            write_user_file(path, text.as_bytes(), "--save-job")?;
            stderr_line!("dbio: wrote the equivalent job file {}", path.shown());
        }
        crate::run::run(cfg, &with_metrics, stop, &|ds| {
            register(db, ds, cfg.test.name())
        })
    })();
    if let Some(m) = metrics {
        m.finish();
    }
    finish_run(&outcome?, cfg.json, a.format, db)
}

/// `dbio run --hosts ...`: validated here before any host is reached, then run by the
/// coordinator; printed and recorded as one run.
fn run_across_hosts(a: &RunArgs, stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    let plan = crate::cluster::coordinator::plan(a)?;
    // The files it names, checked before anything is created (as `dbio run` does).
    if let Some(path) = &plan.first.save_job {
        check_user_file(path, "--save-job")?;
    }
    // The merged seconds, as they complete, in the metrics file.
    let metrics = match &a.metrics {
        Some(path) => Some(metrics::Metrics::claim(
            path,
            a.metrics_keep,
            plan.first.test.name(),
        )?),
        None => None,
    };
    if let Some(m) = &metrics {
        m.start()?;
    }
    let hooks = metrics
        .as_ref()
        .map(metrics::Metrics::hooks)
        .unwrap_or_default();
    let outcome = (|| {
        if let Some(path) = &plan.first.save_job {
            write_user_file(path, plan.job.as_bytes(), "--save-job")?;
            stderr_line!("dbio: wrote the job file every host runs {}", path.shown());
        }
        crate::cluster::coordinator::run(&plan, stop, &hooks)
    })();
    if let Some(m) = metrics {
        m.finish();
    }
    finish_run(&outcome?, plan.first.json, a.format, db)
}

/// Prints a finished run (its summary in `format`, or result.json with `--json`) and
/// records it.
fn finish_run(
    outcome: &RunOutcome,
    json: bool,
    format: crate::report::Format,
    db: Option<&Path>,
) -> Result<ExitCode> {
    Output::new(json, format).emit(
        &crate::report::sections::run(&outcome.result),
        &outcome.result,
    )?;
    let recorded = record(db, outcome);
    if let Some(e) = &outcome.write_error {
        stderr_line!("error: {}", crate::units::one_line(&e.to_string(), &[]));
        return Ok(ExitCode::IoError);
    }
    stderr_line!("dbio: results in {}", outcome.run_dir.shown());
    if !recorded && outcome.exit == ExitCode::Ok {
        return Ok(ExitCode::Interrupted);
    }
    Ok(outcome.exit)
}

/// `dbio sweep`: every point is recorded like a run; the table (or sweep.json) at the end.
fn sweep(a: &SweepArgs, stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    if a.run.0.metrics.is_some() {
        return Err(Error::usage(
            "--metrics: live metrics are written by dbio run; a sweep is many runs",
        ));
    }
    if crate::cluster::coordinator::wanted(&a.run.0)? {
        return Err(Error::usage(
            "--hosts: dbio sweep runs on this host; a run across hosts is dbio run --hosts (or dbio calibrate --hosts)",
        ));
    }
    let test = a.run.0.test.map_or("job", |t| t.name());
    let forget = |path: &Path| {
        let _ = in_present_store(db, |s| s.forget_data_set(&path.display().to_string()));
    };
    let s = crate::sweep::run(a, stop, &|ds| register(db, ds, test), &forget, &mut |o| {
        record(db, o);
    })?;
    Output::new(a.run.0.json, a.run.0.format).emit(&s.report, &s.result)?;
    stderr_line!(
        "dbio: sweep.json, sweep.csv and sweep.html in {}",
        s.dir.shown()
    );
    Ok(s.exit)
}

/// `dbio matrix`: every point is recorded like a run; the table (or matrix.json) at the end.
fn matrix(a: &MatrixArgs, stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    let m = crate::sweep::matrix::run(a, stop, &|ds| register(db, ds, "matrix"), &mut |o| {
        record(db, o);
    })?;
    Output::new(a.options.0.json, a.options.0.format).emit(&m.report, &m.result)?;
    stderr_line!("dbio: matrix in {}", m.dir.shown());
    Ok(m.exit)
}

/// `dbio calibrate`: every point is recorded like a run; the curves and answers at the end.
fn calibrate(a: &CalibrateArgs, stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    let c = crate::sweep::calibrate::run(a, stop, &|ds| register(db, ds, "calibrate"), &mut |o| {
        record(db, o);
    })?;
    Output::new(a.options.0.json, a.options.0.format)
        .emit(&crate::sweep::report::calibrate(&c.result), &c.result)?;
    stderr_line!("dbio: calibrate.json in {}", c.dir.shown());
    Ok(c.exit)
}

/// `dbio job from-…`: the job file on stdout, or into the new file `--output` names with
/// its summary on stdout (text, `--format md` or `--json`).
fn job(a: &crate::capture::JobArgs, stop: &AtomicBool) -> Result<ExitCode> {
    let shown = a.options();
    let summary = Output::new(shown.json, shown.format);
    // The file it will write is checked before any report is read or server sampled.
    match &a.shaping().output {
        Some(out) => check_user_file(out, "--output")?,
        None if summary != Output::Report(crate::report::Format::Text) => {
            return Err(Error::usage(
                "--json and --format print the summary of a job written to a file: add -o FILE (without it, the job file itself is printed)",
            ));
        }
        None => {}
    }
    // The command line goes into the job file: a password in it never does.
    let command = std::env::args()
        .map(|w| crate::units::shell_word(&crate::safety::secret::redact(&w)))
        .collect::<Vec<_>>()
        .join(" ");
    let text = crate::capture::job(a, command, stop)?;
    match &a.shaping().output {
        Some(out) => {
            // It may hold where a database is and who connects: only its owner reads it.
            write_private_user_file(out, text.as_bytes(), "--output")?;
            stderr_line!("dbio: wrote {}", out.shown());
            let s = crate::capture::summary::summary(&text, out)?;
            summary.emit(&crate::capture::summary::report(&s), &s)?;
            Ok(ExitCode::Ok)
        }
        None => print_bytes(text.as_bytes()),
    }
}

/// Prints a document that is the command's result (a job file, the man page, a completion
/// script) to stdout as it is.
fn print_bytes(bytes: &[u8]) -> Result<ExitCode> {
    crate::report::output::document(bytes);
    Ok(ExitCode::Ok)
}

fn runs(a: &RunsArgs, db: Option<&Path>) -> Result<ExitCode> {
    let path = store_path(db)?;
    let store = Store::open_existing(&path)?;
    let runs = store.runs(&RunFilter {
        test: a.options.0.only_test.map(|t| t.name().to_string()),
        last: a.options.0.last.map(|n| n as usize),
    })?;
    // Memory runs (`dbio mem`) have their own table and numbering; listed after the I/O
    // runs when no test is asked for.
    let mem_runs = match a.options.0.only_test {
        None if !a.options.0.json => store.mem_runs(a.options.0.last.map(|n| n as usize))?,
        _ => Vec::new(),
    };
    let compares = database::compares(&store, a)?;
    let mut report = match (runs.is_empty(), mem_runs.is_empty()) {
        (true, true) => crate::report::Report::default(),
        (true, false) => crate::mem::report::runs(&mem_runs),
        (false, true) => crate::store::report::runs(&runs),
        (false, false) => {
            let mut r = crate::store::report::runs(&runs);
            r.sections.push(crate::mem::report::runs_section(&mem_runs));
            r
        }
    };
    if !compares.is_empty() {
        if report.sections.is_empty() {
            report = crate::database::compare::listing(&compares);
        } else {
            (report.sections).push(crate::database::compare::listing_section(&compares));
        }
    }
    if report.sections.is_empty() {
        report = crate::report::Report::lines([format!("no runs recorded in {}", path.display())]);
    }
    // The JSON lists the I/O runs (its shape since the first version: an array).
    Output::new(a.options.0.json, a.options.0.format).emit(&report, &runs)?;
    Ok(ExitCode::Ok)
}

fn show(a: &ShowArgs, db: Option<&Path>) -> Result<ExitCode> {
    let store = Store::open_existing(&store_path(db)?)?;
    let id = match a.id {
        crate::cli::Shown::Run(id) => id,
        crate::cli::Shown::Compare(id) => return database::show_compare(&store, id, a),
    };
    let run = store.run_or_usage_error(id)?;
    // Made from the stored result, not summary.txt: the directory may be gone. Its JSON is
    // the result.json stored, as written.
    let stored: Box<serde_json::value::RawValue> = serde_json::from_str(&run.result_json)
        .map_err(|e| Error::other(format!("run {id}: {e}")))?;
    Output::new(a.options.0.json, a.options.0.format)
        .emit(&crate::report::sections::run(&run.result), &stored)?;
    Ok(ExitCode::Ok)
}

fn compare(a: &CompareArgs, db: Option<&Path>) -> Result<ExitCode> {
    let loaded = record::runs_named(&a.ids, db)?;
    let runs: Vec<(String, &crate::report::RunResult)> =
        loaded.iter().map(|(name, r)| (name.clone(), r)).collect();
    if let Some(file) = &a.options.0.html {
        write_user_file(
            file,
            crate::report::html::compare_html(&runs).as_bytes(),
            "--html",
        )?;
        stderr_line!("dbio: comparison written to {}", file.shown());
    }
    Output::new(a.options.0.json, a.options.0.format).emit(
        &crate::report::sections::compare(&runs),
        &crate::report::sections::comparison(&runs),
    )?;
    Ok(ExitCode::Ok)
}

fn report(a: &ReportArgs) -> Result<ExitCode> {
    let r = crate::report::read_run(&a.run_dir)?;
    let dir = crate::safety::fs::Dir::open(&a.run_dir)
        .map_err(|e| Error::io("cannot open", &a.run_dir, &e))?;
    let written = crate::report::write_derived(&dir, &r)?;
    #[derive(serde::Serialize)]
    struct Redrawn {
        schema: &'static str,
        run_dir: String,
        written: Vec<String>,
    }
    let json = Redrawn {
        schema: "dbio.report.v1",
        run_dir: a.run_dir.display().to_string(),
        written: written.iter().map(|p| p.display().to_string()).collect(),
    };
    let lines = json.written.iter().map(|p| format!("wrote {p}"));
    Output::new(a.options.0.json, a.options.0.format)
        .emit(&crate::report::Report::lines(lines), &json)?;
    Ok(ExitCode::Ok)
}

/// `dbio map PATH`: the storage stack and its findings.
fn map(a: &MapArgs) -> Result<ExitCode> {
    std::fs::metadata(&a.path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::usage(format!(
                "cannot map {}: it does not exist; give a data file, a directory or a block device",
                a.path.shown()
            ))
        } else {
            Error::io("cannot map", &a.path, &e)
        }
    })?;
    let (map, findings) = crate::storage::survey(&a.path, Some(a.options.0.block_size));
    #[derive(serde::Serialize)]
    struct MapOutput<'a> {
        map: &'a crate::storage::StorageMap,
        lint: &'a [crate::storage::lint::Finding],
    }
    let json = MapOutput {
        map: &map,
        lint: &findings,
    };
    Output::new(a.options.0.json, a.options.0.format).emit(
        &crate::report::sections::storage::map(&map, &findings),
        &json,
    )?;
    Ok(ExitCode::Ok)
}
