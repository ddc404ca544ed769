//! Many runs as one answer.
//!
//! - `mod.rs` (here): `dbio sweep TEST --param NAME=V1,V2,...` — one ordinary run per value,
//!   every other option of `dbio run` applying to all of them, summed up as a table,
//!   `sweep.json`, `sweep.csv` and `sweep.html`;
//! - [`calibrate`]: `dbio calibrate` — walks outstanding I/O up to find the maximum IOPS
//!   within a latency limit and the maximum MiB/s;
//! - `page`: the sweep's HTML page.
//!
//! Every point is a plain [`crate::run::run`] with a changed [`RunConfig`], so a point's run
//! directory is exactly what `dbio run` would have written. `rate` sweeps run open loop
//! (`dbio run --rate`); `--curve` first measures the maximum rate closed loop, then runs at
//! 10, 50, 70, 80, 90 and 100 % of it: a latency-vs-load curve.

pub mod calibrate;
pub mod filesystem;
pub mod matrix;
pub mod report;
pub mod scheduler;

pub use crate::options::swept::{Param, SweepParam, Value, parse_param};

use crate::units::Shown;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ExitCode, Result};
use crate::options::cli::SweepCommand;
use crate::options::{RunArgs, Source};
use crate::report::RunResult;
use crate::report::result::{LatencyJson, Totals};
use crate::run::Preflight;
use crate::run::RunOutcome;
use crate::workload::spec::RunConfig;

pub const SCHEMA: &str = "dbio.sweep.v1";

/// `dbio sweep`: every option of `dbio run` applies to every point; the sweep's own
/// (`--param`, `--device`, `--curve`) are the table's too.
#[derive(Debug, Clone, clap::Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub run: SweepCommand,
}

/// One measured point of a sweep: the main event's figures, the totals, and where its run
/// directory is (relative to the sweep directory).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepPoint {
    pub value: Value,
    pub label: String,
    pub run_dir: String,
    pub partial: bool,
    /// The test's own event, first of its events (`RunResult::main_event`): the same in
    /// every point.
    pub main_event: Option<String>,
    /// The main event's requests per second and MiB per second.
    pub iops: f64,
    pub mib_per_s: f64,
    /// The main event's per-request latency.
    pub latency_us: LatencyJson,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_per_s: Option<f64>,
    pub totals: Totals,
    /// The engine the point used ("uring", "aio" or "sync") and its open flags, from its
    /// result.
    #[serde(default)]
    pub engine: String,
    #[serde(default)]
    pub open_flags: Vec<String>,
    /// A scheduler sweep: the scheduler of each disk while the point ran ("loop3=bfq").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// A file system sweep: the file system the point ran on and its options as the
    /// kernel reported them once mounted ("ext4 rw,nosuid,nodev,noexec,relatime,...").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_system: Option<String>,
    /// With `--steady-state`: whether the point's run held steady, and after which round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<PointSteady>,
}

/// Whether a point held steady (`--steady-state`), after which round, of how many.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PointSteady {
    pub reached: bool,
    pub reached_round: Option<usize>,
    pub rounds: usize,
}

impl SweepPoint {
    fn new(value: Value, label: String, run_dir: String, r: &RunResult) -> SweepPoint {
        let main = r.main_event();
        SweepPoint {
            value,
            label,
            run_dir,
            partial: r.partial,
            main_event: main.map(|e| e.name.clone()),
            iops: main.map_or(0.0, |e| e.iops),
            mib_per_s: main.map_or(0.0, |e| e.mib_per_s),
            latency_us: main.map(|e| e.latency_us).unwrap_or_default(),
            commits_per_s: r.totals.commits_per_s,
            totals: r.totals.clone(),
            engine: r.config.engine.clone(),
            open_flags: r.config.open_flags.clone(),
            scheduler: None,
            file_system: None,
            steady_state: r.steady_state.as_ref().map(|s| PointSteady {
                reached: s.reached,
                reached_round: s.reached_round,
                rounds: s.rounds.len(),
            }),
        }
    }
}

/// `sweep.json` (schema `dbio.sweep.v1`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepResult {
    pub schema: String,
    pub dbio_version: String,
    pub test: String,
    pub submission: String,
    pub param: Param,
    /// Every value asked for, in order; `points` holds those measured so far.
    pub values: Vec<Value>,
    pub started_at: String,
    /// False while points are missing (the sweep was stopped or a point failed).
    pub complete: bool,
    pub points: Vec<SweepPoint>,
}

/// What a finished (or stopped) sweep produced.
pub struct SweepOutcome {
    pub result: SweepResult,
    pub dir: PathBuf,
    /// What is printed at the end ([`report::sweep`]).
    pub report: crate::report::Report,
    pub exit: ExitCode,
}

/// The arguments every point starts from: the sweep's, with one seed for all points.
fn base_args(a: &SweepArgs) -> RunArgs {
    let mut base = a.run.0.clone();
    base.seed = Some(base.seed.unwrap_or_else(crate::workload::spec::rand_seed));
    base.json = false;
    base
}

/// What is swept: `--param`, or for `--curve` the rate (values found by the first point).
fn swept(a: &SweepArgs) -> SweepParam {
    a.run.0.param.clone().unwrap_or(SweepParam {
        param: Param::Rate,
        values: Vec::new(),
    })
}

/// The share of the maximum rate each `--curve` point runs at.
pub const CURVE_PCT: [u64; 6] = [10, 50, 70, 80, 90, 100];

/// One configuration per value, all checked before the first one runs; `first` is the index
/// of the first of them among all points (only the very first point may recreate the data
/// set). The machine's checks of a point whose file system is made for it wait until it is
/// mounted (`--param fs`).
fn plan_values(base: &RunArgs, p: Param, values: &[Value], first: usize) -> Result<Vec<Point>> {
    if p == Param::BlockSize && values.len() > 1 && !base.fresh {
        return Err(Error::usage(format!(
            "--param block-size: every point needs a data set of its own block size, so each one replaces the last; add --fresh to allow that (the data set in {} is replaced at every point)",
            base.target.shown()
        )));
    }
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut args = base.clone();
            p.apply(&mut args, v);
            // Only the first point replaces the data set, but for block sizes every one must.
            args.fresh = base.fresh && (first + i == 0 || p == Param::BlockSize);
            // Both stages of validation for every point, before the first one runs.
            let cfg = crate::options::check::run_config(&args).map_err(|e| named(p, v, e))?;
            let pre = match p {
                Param::Fs => None,
                _ => Some(crate::options::environment::check(&cfg).map_err(|e| named(p, v, e))?),
            };
            Ok((v.clone(), cfg, pre))
        })
        .collect()
}

/// A refusal of one point, named after its value.
fn named(p: Param, v: &Value, e: Error) -> Error {
    match e {
        Error::Usage(m) => Error::Usage(format!("--param {}={}: {m}", p.name(), p.label(v))),
        e => e,
    }
}

/// One point of a sweep: its value and its run, checked (the machine's checks later for a
/// file system sweep, once the point's file system is mounted).
pub type Point = (Value, RunConfig, Option<Preflight>);

/// The bytes of data files, redo logs and temp spills a run makes (what a file system made
/// for it must hold).
fn data_set_bytes(cfg: &RunConfig) -> u64 {
    let data = if cfg.uses_data_files() {
        cfg.dataset.size
    } else {
        0
    };
    let redo = if cfg.uses_redo() {
        u64::from(cfg.redo.files).saturating_mul(cfg.redo.file_size)
    } else {
        0
    };
    let temp = if cfg.uses_temp() {
        crate::run::temp_file_sizes(cfg)
            .iter()
            .fold(0u64, |s, &b| s.saturating_add(b))
    } else {
        0
    };
    data.saturating_add(redo).saturating_add(temp)
}

/// `--device` and `--param fs` go together; with them, every point's data set is made on
/// the file system of the point, never at a `--target`. Returns the private mount point
/// for a file system sweep.
fn file_system_place(a: &SweepArgs, p: Param) -> Result<Option<PathBuf>> {
    let fs = p == Param::Fs && !a.run.0.curve;
    match (&a.run.0.device, fs) {
        (Some(_), false) => Err(Error::usage(
            "--device is the block device a file system sweep (--param fs=...) makes its file systems on; other sweeps take their data set from --target",
        )),
        (None, true) => Err(Error::usage(
            "--param fs needs --device DEV: the blank block device each file system is made on (and --destructive)",
        )),
        (Some(_), true) if a.run.0.typed("target") => Err(Error::usage(
            "--param fs: every point's data set is made on the file system the sweep makes on --device; leave out --target",
        )),
        (Some(_), true) => Ok(Some(filesystem::FileSystems::place())),
        (None, false) => Ok(None),
    }
}

/// Runs every point in turn, calling `on_point` after each, and rewrites `sweep.json`,
/// `sweep.csv` and `sweep.html` after each so a stopped sweep keeps what it measured. Stops
/// at the first point that was interrupted or hit I/O errors and returns its exit status.
///
/// A file system sweep's data sets vanish with their file systems: `forget` is told their
/// paths once they are gone.
pub fn run(
    a: &SweepArgs,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&crate::dataset::DataSet),
    forget: &dyn Fn(&Path),
    on_point: &mut dyn FnMut(&RunOutcome),
) -> Result<SweepOutcome> {
    let sp = swept(a);
    let place = file_system_place(a, sp.param)?;
    let mut base = base_args(a);
    if let Some(place) = &place {
        let data = filesystem::FileSystems::data_dir(place);
        base.set("target", &data.display().to_string(), Source::Swept)
            .map_err(Error::usage)?;
        // --destructive and --yes are for the device; the points write into a directory.
        // Not typed for the points either: beside a --job file they would be refused as
        // options the job's classes set themselves.
        base.destructive = false;
        base.yes = false;
        base.sources.remove("destructive");
        base.sources.remove("yes");
    }
    let mut points = if a.run.0.curve {
        if a.run.0.typed("depth") {
            return Err(Error::usage(
                "--curve with --depth: the curve's points run open loop, where each arrival is one request and --sessions sets how many can be in flight; leave out --depth",
            ));
        }
        // First the closed-loop maximum, as an ordinary point of its own.
        let cfg = crate::options::check::run_config(&RunArgs {
            rate: None,
            ..base.clone()
        })?;
        if cfg.test.name() == "job"
            || !matches!(
                cfg.test.name(),
                "read-iops" | "read-mbps" | "write-iops" | "write-mbps"
            )
        {
            return Err(Error::usage(format!(
                "--curve needs open-loop rates, which classic tests have (read-iops, read-mbps, write-iops, write-mbps), not {}",
                cfg.test.name()
            )));
        }
        let pre = crate::options::environment::check(&cfg)?;
        vec![(Value::Number(0), cfg, Some(pre))]
    } else {
        plan_values(&base, sp.param, &sp.values, 0)?
    };
    // The disks' schedulers, checked before anything is made; put back when this is
    // dropped, however the sweep ends.
    let schedulers = match (&sp.param, a.run.0.curve) {
        (Param::Scheduler, false) => {
            let names: Vec<String> = sp.values.iter().map(|v| sp.param.label(v)).collect();
            Some(scheduler::Schedulers::prepare(
                &a.run.0.target,
                &names,
                a.run.0.yes,
            )?)
        }
        _ => None,
    };
    // The device, checked and confirmed before the first mkfs; left blank when this is
    // dropped, however the sweep ends.
    let mut filesystems = match (&place, &a.run.0.device) {
        (Some(place), Some(device)) => {
            let specs: Vec<filesystem::Spec> = sp
                .values
                .iter()
                .map(|v| filesystem::parse(&sp.param.label(v)).map_err(Error::usage))
                .collect::<Result<_>>()?;
            let need = points.iter().map(|(_, cfg, _)| data_set_bytes(cfg)).max();
            let consent = crate::safety::device::Consent {
                destructive: a.run.0.destructive,
                yes: a.run.0.yes,
                option: "--device",
            };
            Some(filesystem::FileSystems::prepare(
                device,
                place.clone(),
                &specs,
                need.unwrap_or(0),
                consent,
            )?)
        }
        _ => None,
    };
    let started_at = crate::sys::utc_now_rfc3339();
    let p = sp.param;
    // The test as the points run it (`job` with --job).
    let test = points.first().map_or("job", |(_, cfg, _)| cfg.test.name());
    let tail = format!("sweep_{}_{}", test, p.name());
    // Made, proved writable, registered and locked while the sweep goes; removed again if
    // no point left anything in it.
    let run_place = crate::report::RunPlace::make(&a.run.0.out, None, &started_at, &tail, "sweep")?;
    let setup = Setup {
        schedulers: schedulers.as_ref(),
        filesystems: filesystems.as_mut(),
        on_data_set,
        forget,
    };
    let outcome = run_points(
        (a, &base),
        setup,
        stop,
        on_point,
        &mut points,
        &run_place,
        started_at,
    );
    run_place.close();
    drop(schedulers);
    // The device left as it was found; when it could not be (it changed, someone took it),
    // the sweep failed (exit 1) even if every point ran.
    match (
        outcome,
        filesystems.map_or(Ok(()), filesystem::FileSystems::close),
    ) {
        (Err(e), Err(left)) => {
            stderr_line!("dbio: warning: {left}");
            Err(e)
        }
        (Ok(_), Err(left)) => Err(left),
        (outcome, Ok(())) => outcome,
    }
}

/// What a sweep sets up around its points, and whom it tells of data sets.
struct Setup<'a> {
    schedulers: Option<&'a scheduler::Schedulers>,
    filesystems: Option<&'a mut filesystem::FileSystems>,
    on_data_set: &'a dyn Fn(&crate::dataset::DataSet),
    forget: &'a dyn Fn(&Path),
}

/// The points of a sweep, in its directory `place`.
fn run_points(
    (a, base): (&SweepArgs, &RunArgs),
    mut setup: Setup,
    stop: &Arc<AtomicBool>,
    on_point: &mut dyn FnMut(&RunOutcome),
    points: &mut Vec<Point>,
    place: &crate::report::RunPlace,
    started_at: String,
) -> Result<SweepOutcome> {
    let sp = swept(a);
    let p = sp.param;
    let test = points.first().map_or("job", |(_, cfg, _)| cfg.test.name());
    let test = test.to_string();
    let held = place.dir.clone();
    let dir = held.path().to_path_buf();
    let mut result = SweepResult {
        schema: SCHEMA.into(),
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        test,
        submission: if a.run.0.sync { "sync" } else { "async" }.into(),
        param: p,
        values: sp.values.clone(),
        started_at,
        complete: false,
        points: Vec::new(),
    };
    let mut exit = ExitCode::Ok;
    let mut n = if a.run.0.curve {
        1 + CURVE_PCT.len()
    } else {
        points.len()
    };
    let mut i = 0;
    while i < points.len() {
        let (v, mut cfg, pre) = points[i].clone();
        if stop.load(Ordering::Relaxed) {
            exit = ExitCode::Interrupted;
            break;
        }
        let curve_max = a.run.0.curve && i == 0;
        let label = if curve_max {
            "max".to_string()
        } else {
            p.label(&v)
        };
        stderr_line!("dbio: sweep point {}/{n}: {}={label}", i + 1, p.name());
        cfg.out = dir.clone();
        if let Some(s) = setup.schedulers {
            s.set(&label)?;
        }
        let mut file_system = None;
        if let Some(fs) = setup.filesystems.as_deref_mut() {
            let spec = filesystem::parse(&label).map_err(Error::usage)?;
            match fs.make(&spec) {
                Ok(mounted) => file_system = Some(mounted),
                // Ctrl-C reached mkfs too (the terminal signals the whole process group).
                Err(_) if stop.load(Ordering::Relaxed) => {
                    exit = ExitCode::Interrupted;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        // Once a file system is made the device has been written: a refusal now is no
        // longer "bad input, nothing written" (exit 2) but a failed sweep (exit 1).
        let made = setup.filesystems.is_some();
        let written = move |e: Error| match e {
            Error::Usage(m) if made => Error::other(m),
            e => e,
        };
        let mut pre = match pre {
            Some(pre) => pre,
            None => {
                crate::options::environment::check(&cfg).map_err(|e| written(named(p, &v, e)))?
            }
        };
        pre.out = Some(held.clone());
        let outcome = crate::run::run(&cfg, &pre, stop, setup.on_data_set);
        if let Some(fs) = setup.filesystems.as_deref_mut() {
            // The data set goes with its file system, whatever became of the run.
            let data = &cfg.dataset.target;
            let registered = std::fs::canonicalize(data).unwrap_or_else(|_| data.clone());
            fs.unmount()?;
            (setup.forget)(&registered);
        }
        let outcome = outcome.map_err(written)?;
        on_point(&outcome);
        let run_dir = relative(&outcome.run_dir, &dir);
        let mut point = SweepPoint::new(v, label, run_dir, &outcome.result);
        point.scheduler = setup.schedulers.map(scheduler::Schedulers::current);
        point.file_system = file_system;
        if curve_max {
            // The rate to load: the main event's requests/s, closed loop.
            let max = point.iops.round() as u64;
            point.value = Value::Number(max);
            let values: Vec<Value> = CURVE_PCT
                .iter()
                .map(|pct| Value::Number((max * pct / 100).max(1)))
                .collect();
            result.values = std::iter::once(Value::Number(max))
                .chain(values.iter().cloned())
                .collect();
            if max == 0 {
                stderr_line!("dbio: the closed-loop point measured nothing; no curve");
            } else {
                points.extend(plan_values(base, Param::Rate, &values, 1)?);
            }
            n = points.len();
        }
        result.points.push(point);
        write_files(&held, &result)?;
        match outcome.exit {
            ExitCode::Ok => {}
            // A point that missed its job's limits is a finding, not a reason to stop: a
            // sweep over span looks for the largest span that passes. The sweep exits 3.
            ExitCode::VerdictFailed => exit = ExitCode::VerdictFailed,
            e => {
                exit = e;
                break;
            }
        }
        i += 1;
    }
    result.complete = result.points.len() == n && result.points.iter().all(|p| !p.partial);
    write_files(&held, &result)?;
    Ok(SweepOutcome {
        report: report::sweep(&result),
        result,
        dir,
        exit,
    })
}

/// `child` relative to `base` when it lies inside it (the usual case), else as given.
fn relative(child: &Path, base: &Path) -> String {
    child
        .strip_prefix(base)
        .unwrap_or(child)
        .display()
        .to_string()
}

/// The files a sweep writes into its directory (beside its points' run directories): all
/// that `dbio clean --stale` may remove there, besides those.
pub const SWEEP_DIR_FILES: &[&str] = &["sweep.json", "sweep.csv", "sweep.html"];

fn write_files(dir: &crate::safety::fs::Dir, r: &SweepResult) -> Result<()> {
    let json = serde_json::to_string_pretty(r)
        .map_err(|e| Error::other(format!("cannot serialize the sweep: {e}")))?;
    for (name, text) in SWEEP_DIR_FILES.iter().zip([
        json + "\n",
        csv(r),
        crate::report::html::page(&report::sweep(r)),
    ]) {
        crate::report::write_file(dir, name, &text, true)?;
    }
    Ok(())
}

/// `sweep.csv`: one row per point; latencies of the main event in µs.
pub fn csv(r: &SweepResult) -> String {
    let mut o = crate::report::export::Csv::new([r.param.name()].into_iter().chain([
        "iops",
        "mib_per_s",
        "mean_us",
        "p50_us",
        "p95_us",
        "p99_us",
        "max_us",
        "commits_per_s",
        "read_iops",
        "write_iops",
        "read_mib_per_s",
        "write_mib_per_s",
        "main_event",
        "partial",
        "run_dir",
        "engine",
        "open_flags",
    ]));
    for p in &r.points {
        let l = &p.latency_us;
        let t = &p.totals;
        o.row([
            r.param.csv_value(&p.value),
            p.iops.to_string(),
            p.mib_per_s.to_string(),
            l.mean.to_string(),
            l.p50.to_string(),
            l.p95.to_string(),
            l.p99.to_string(),
            l.max.to_string(),
            p.commits_per_s.map_or(String::new(), |c| c.to_string()),
            t.read_iops.to_string(),
            t.write_iops.to_string(),
            t.read_mib_per_s.to_string(),
            t.write_mib_per_s.to_string(),
            p.main_event.clone().unwrap_or_default(),
            p.partial.to_string(),
            p.run_dir.clone(),
            p.engine.to_string(),
            p.open_flags.join("|"),
        ]);
    }
    o.finish()
}
