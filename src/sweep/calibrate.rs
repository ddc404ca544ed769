//! `dbio calibrate`: three answers a storage conversation starts from, found by walking.
//!
//! 1. **Maximum small-read IOPS within a latency limit** (`--max-latency`, default
//!    p95 ≤ 10 ms): `read-iops --async --keep-inflight` (random 8K blocks at a constant
//!    queue depth) with outstanding I/O = sessions × batch doubled from 1 until a point's
//!    latency crosses the limit or IOPS rose by at most 5 % at two points in a row; when the
//!    limit was crossed, one more point halfway between the last two. The answer is the
//!    best point that kept the limit — never one that crossed it.
//! 2. **Maximum large-read MiB/s**: `read-mbps --async` (direct path read, 1 MiB requests)
//!    with outstanding = sessions × depth doubled from 1 until MiB/s rose by at most 5 % at
//!    two points in a row.
//! 3. **Single-session large-read MiB/s**: `read-mbps --async` with one session at the
//!    default depth — what one scanning session gets.
//!
//! Every point is an ordinary run (its own run directory inside the calibration's).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::{Error, ExitCode, Result};
use crate::options::RunArgs;
use crate::options::cli::CalibrateOptions;
pub use crate::options::points::{LatencyLimit, Stat, parse_limit};
use crate::report::html::chart::duration_label;
use crate::report::result::LatencyJson;
use crate::run::RunOutcome;
use crate::workload::Test;
use crate::workload::spec::RunConfig;

pub const SCHEMA: &str = "dbio.calibrate.v1";
/// A walk goes on while its figure rises by more than this share.
pub(super) const RISE: f64 = 0.05;
/// A walk stops when this many points in a row did not rise by more than [`RISE`]: one
/// flat point on a noisy device is not yet the top.
const FLAT_POINTS: u32 = 2;

/// Whether a walked figure has stopped rising: `FLAT_POINTS` points in a row gained no
/// more than `RISE` over the best so far.
#[derive(Default)]
struct Plateau {
    best: f64,
    flat: u32,
}

impl Plateau {
    /// Takes the next point's figure; true once the walk has flattened out.
    fn reached(&mut self, value: f64) -> bool {
        self.flat = if self.best > 0.0 && value <= self.best * (1.0 + RISE) {
            self.flat + 1
        } else {
            0
        };
        self.best = self.best.max(value);
        self.flat == FLAT_POINTS
    }
}
/// Large reads are 1 MiB each: more outstanding than this only fills memory.
const LARGE_OUTSTANDING_CAP: u32 = 256;

impl Stat {
    /// The statistic of per-request latencies `l`, in µs.
    pub fn of(self, l: &LatencyJson) -> f64 {
        match self {
            Stat::Mean => l.mean,
            Stat::P50 => l.p50,
            Stat::P90 => l.p90,
            Stat::P95 => l.p95,
            Stat::P99 => l.p99,
        }
    }
}

impl LatencyLimit {
    pub fn holds(&self, l: &LatencyJson) -> bool {
        self.stat.of(l) <= self.us
    }
    pub fn label(&self) -> String {
        format!("{} ≤ {}", self.stat.name(), duration_label(self.us))
    }
}

/// `dbio calibrate`.
#[derive(Debug, Clone, clap::Args)]
pub struct CalibrateArgs {
    /// The options of the table it takes: the data set, `--point-duration` and `--warmup`
    /// of each point, `--max-latency`, `--max-outstanding` (a shorter warm-up than a run's), `--io-mode`, `--engine`, `--out`
    /// (where the calibration directory is made), `--json` (calibrate.json on stdout), and
    /// `--hosts` and its options (every point one run across those hosts, figures merged).
    #[command(flatten)]
    pub options: CalibrateOptions,
}

/// One point of a walk.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CurvePoint {
    /// Requests kept outstanding: sessions × per_session.
    pub outstanding: u32,
    pub sessions: u32,
    /// Batch (small reads, kept in flight) or depth (large reads) of each session.
    pub per_session: u32,
    pub iops: f64,
    pub mib_per_s: f64,
    /// Per-request latency of the point's event.
    pub latency_us: LatencyJson,
    /// Whether the point kept `--max-latency` (small reads only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_limit: Option<bool>,
    /// The extra point between the last two of the walk.
    #[serde(default)]
    pub bisected: bool,
    pub partial: bool,
    /// The point's run directory, relative to the calibration directory.
    pub run_dir: String,
}

/// One walk: its event, the points in the order they ran, and why it stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Walk {
    pub test: String,
    pub event: String,
    pub request_bytes: u64,
    pub curve: Vec<CurvePoint>,
    pub stopped_because: String,
}

/// `calibrate.json` (schema `dbio.calibrate.v1`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CalibrateResult {
    pub schema: String,
    pub dbio_version: String,
    pub started_at: String,
    pub target: String,
    pub io_mode: String,
    pub limit: LatencyLimit,
    pub point_seconds: f64,
    pub warmup_seconds: f64,
    pub max_outstanding: u32,
    /// False when the calibration stopped before all three answers were measured.
    pub complete: bool,
    pub small_reads: Walk,
    pub large_reads: Walk,
    pub single_session: Walk,
    /// The answers: the points they come from.
    pub max_iops: Option<CurvePoint>,
    pub max_mib_per_s: Option<CurvePoint>,
    pub single_session_mib_per_s: Option<f64>,
}

/// What a calibration produced.
pub struct CalibrateOutcome {
    pub result: CalibrateResult,
    pub dir: PathBuf,
    pub exit: ExitCode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    SmallReads,
    LargeReads,
    SingleSession,
}

struct Calibrator<'a> {
    a: &'a CalibrateArgs,
    dir: PathBuf,
    /// The calibration directory, once created.
    held: Option<std::sync::Arc<crate::safety::fs::Dir>>,
    seed: u64,
    fresh: bool,
    stop: &'a Arc<AtomicBool>,
    on_data_set: &'a dyn Fn(&crate::dataset::DataSet),
    on_point: &'a mut dyn FnMut(&RunOutcome),
    exit: ExitCode,
    result: CalibrateResult,
}

/// Runs the three walks, rewriting `calibrate.json` after every point.
pub fn run(
    a: &CalibrateArgs,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&crate::dataset::DataSet),
    on_point: &mut dyn FnMut(&RunOutcome),
) -> Result<CalibrateOutcome> {
    let started_at = crate::sys::utc_now_rfc3339();
    let seed = a
        .options
        .0
        .seed
        .unwrap_or_else(crate::workload::spec::rand_seed);
    let mut c = Calibrator {
        a,
        dir: PathBuf::new(),
        held: None,
        seed,
        fresh: a.options.0.fresh,
        stop,
        on_data_set,
        on_point,
        exit: ExitCode::Ok,
        result: CalibrateResult {
            schema: SCHEMA.into(),
            dbio_version: env!("CARGO_PKG_VERSION").into(),
            started_at,
            target: a.options.0.target.display().to_string(),
            io_mode: a.options.0.io_mode.name().into(),
            limit: a.options.0.max_latency,
            point_seconds: a.options.0.point_duration.as_secs_f64(),
            warmup_seconds: a.options.0.warmup.as_secs_f64(),
            max_outstanding: a.options.0.max_outstanding,
            complete: false,
            small_reads: Walk::default(),
            large_reads: Walk::default(),
            single_session: Walk::default(),
            max_iops: None,
            max_mib_per_s: None,
            single_session_mib_per_s: None,
        },
    };
    // Every point's configuration is checked before anything runs or a directory appears
    // (across hosts: everything that can be checked before a host is reached).
    for kind in [Kind::SmallReads, Kind::LargeReads, Kind::SingleSession] {
        if c.across_hosts() {
            crate::cluster::coordinator::plan(&c.args(kind, 1, 1))?;
        } else {
            crate::options::environment::check(&c.config(kind, 1, 1)?)?;
        }
    }
    // Made, proved writable, registered and locked while the calibration goes; removed
    // again if no point left anything in it.
    let place = crate::report::RunPlace::make(
        &a.options.0.out,
        None,
        &c.result.started_at,
        "calibrate",
        "calibrate",
    )?;
    c.dir = place.dir.path().to_path_buf();
    c.held = Some(place.dir.clone());
    let walked = c
        .walk_small_reads()
        .and_then(|()| c.walk_large_reads())
        .and_then(|()| c.single_session())
        .and_then(|()| {
            c.result.complete = c.exit == ExitCode::Ok && !c.stopped();
            c.write()
        });
    c.held = None;
    place.close();
    walked?;
    Ok(CalibrateOutcome {
        result: c.result,
        dir: c.dir,
        exit: c.exit,
    })
}

impl Calibrator<'_> {
    fn stopped(&self) -> bool {
        self.exit != ExitCode::Ok || self.stop.load(Ordering::Relaxed)
    }

    /// Sessions × per-session for `outstanding`: one session per CPU at most (more threads
    /// only add switching; each session keeps many requests in flight), whole numbers only.
    fn split(outstanding: u32) -> (u32, u32) {
        let cpus = std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1);
        let mut sessions = 1u32 << (31 - cpus.max(1).leading_zeros());
        sessions = sessions.min(outstanding);
        while sessions > 1 && !outstanding.is_multiple_of(sessions) {
            sessions /= 2;
        }
        (sessions, outstanding / sessions)
    }

    fn across_hosts(&self) -> bool {
        !self.a.options.0.hosts.is_empty()
    }

    fn config(&self, kind: Kind, sessions: u32, per_session: u32) -> Result<RunConfig> {
        crate::options::check::run_config(&self.args(kind, sessions, per_session))
    }

    /// A point's run as `dbio run` options.
    fn args(&self, kind: Kind, sessions: u32, per_session: u32) -> RunArgs {
        let test = match kind {
            Kind::SmallReads => Test::ReadIops,
            Kind::LargeReads | Kind::SingleSession => Test::ReadMbps,
        };
        // `dbio run`'s defaults: points differ from a plain run only where calibrate says so.
        let mut r = RunArgs::defaults(Some(test));
        r.take_data_set(&self.a.options.0);
        r.seed = Some(self.seed);
        r.fresh = self.fresh;
        r.io_mode = self.a.options.0.io_mode;
        r.engine = self.a.options.0.engine;
        r.duration = self.a.options.0.point_duration;
        r.warmup = self.a.options.0.warmup;
        r.out = self.dir.clone();
        r.sync = false;
        r.sessions = sessions;
        match kind {
            Kind::SmallReads => {
                r.keep_inflight = true;
                r.batch = per_session;
            }
            Kind::LargeReads => r.depth = per_session,
            Kind::SingleSession => {}
        }
        let c = &self.a.options.0;
        r.hosts = c.hosts.clone();
        r.ssh = c.ssh.clone();
        r.remote_dbio = c.remote_dbio.clone();
        r.push = c.push;
        r.shared = c.shared;
        r
    }

    /// Runs one point; `None` when the calibration was stopped before it.
    fn point(&mut self, kind: Kind, outstanding: u32) -> Result<Option<CurvePoint>> {
        if self.stopped() {
            return Ok(None);
        }
        let (sessions, per_session) = match kind {
            Kind::SingleSession => (1, 0),
            _ => Self::split(outstanding),
        };
        let cfg = self.config(kind, sessions, per_session.max(1))?;
        let per_session = match kind {
            Kind::SmallReads => cfg.batch,
            _ => cfg.depth,
        } as u32;
        stderr_line!(
            "dbio: calibrate: {} with {sessions} session(s) × {per_session}",
            cfg.test.name()
        );
        let outcome = if self.across_hosts() {
            // One run across the hosts; its run directory is the coordinator's, in ours.
            let plan =
                crate::cluster::coordinator::plan(&self.args(kind, sessions, per_session.max(1)))?;
            crate::cluster::coordinator::run(&plan, self.stop, &Default::default())?
        } else {
            let mut pre = crate::options::environment::check(&cfg)?;
            pre.out = self.held.clone();
            crate::run::run(&cfg, &pre, self.stop, self.on_data_set)?
        };
        self.fresh = false;
        (self.on_point)(&outcome);
        if outcome.exit != ExitCode::Ok {
            self.exit = outcome.exit;
        }
        let r = &outcome.result;
        let main = r.main_event();
        let latency_us = main.map(|e| e.latency_us).unwrap_or_default();
        let p = CurvePoint {
            outstanding: sessions * per_session,
            sessions,
            per_session,
            iops: main.map_or(0.0, |e| e.iops),
            mib_per_s: main.map_or(0.0, |e| e.mib_per_s),
            latency_us,
            within_limit: (kind == Kind::SmallReads)
                .then(|| self.a.options.0.max_latency.holds(&latency_us)),
            bisected: false,
            partial: r.partial,
            run_dir: outcome
                .run_dir
                .strip_prefix(&self.dir)
                .unwrap_or(&outcome.run_dir)
                .display()
                .to_string(),
        };
        let walk = self.walk_mut(kind);
        if walk.event.is_empty() {
            walk.test = r.test.clone();
            walk.event = main.map(|e| e.name.clone()).unwrap_or_default();
            walk.request_bytes = r.config.request_bytes;
        }
        walk.curve.push(p.clone());
        self.write()?;
        Ok(Some(p))
    }

    fn walk_mut(&mut self, kind: Kind) -> &mut Walk {
        match kind {
            Kind::SmallReads => &mut self.result.small_reads,
            Kind::LargeReads => &mut self.result.large_reads,
            Kind::SingleSession => &mut self.result.single_session,
        }
    }

    fn interrupted(&self) -> String {
        if self.exit == ExitCode::IoError {
            "a point hit I/O errors".into()
        } else {
            "interrupted".into()
        }
    }

    fn walk_small_reads(&mut self) -> Result<()> {
        let limit = self.a.options.0.max_latency;
        let mut outstanding = 1u32;
        let mut plateau = Plateau::default();
        let mut crossed = false;
        let because = loop {
            let Some(p) = self.point(Kind::SmallReads, outstanding)? else {
                break self.interrupted();
            };
            if self.stopped() {
                break self.interrupted();
            }
            if p.within_limit == Some(false) {
                crossed = true;
                break format!(
                    "{} {} crossed the limit ({}) at {outstanding} outstanding",
                    limit.stat.name(),
                    duration_label(limit.stat.of(&p.latency_us)),
                    limit.label()
                );
            }
            if plateau.reached(p.iops) {
                break format!(
                    "IOPS rose by no more than {:.0} % over the last {FLAT_POINTS} points",
                    RISE * 100.0
                );
            }
            if outstanding.saturating_mul(2) > self.a.options.0.max_outstanding {
                break format!(
                    "reached --max-outstanding {}",
                    self.a.options.0.max_outstanding
                );
            }
            outstanding *= 2;
        };
        self.result.small_reads.stopped_because = because;
        // The limit lies between the last two points: one more halfway (if there is room).
        let curve = &self.result.small_reads.curve;
        if crossed && curve.len() >= 2 {
            let (lo, hi) = (curve[curve.len() - 2].outstanding, outstanding);
            let mid = (lo + hi) / 2;
            if mid > lo
                && mid < hi
                && let Some(_) = self.point(Kind::SmallReads, mid)?
                && let Some(last) = self.result.small_reads.curve.last_mut()
            {
                last.bisected = true;
                self.result.small_reads.stopped_because += &format!("; bisected at {mid}");
            }
        }
        self.result.max_iops = self
            .result
            .small_reads
            .curve
            .iter()
            .filter(|p| p.within_limit == Some(true) && !p.partial)
            .max_by(|a, b| a.iops.total_cmp(&b.iops))
            .cloned();
        self.write()
    }

    fn walk_large_reads(&mut self) -> Result<()> {
        let cap = self.a.options.0.max_outstanding.min(LARGE_OUTSTANDING_CAP);
        let mut outstanding = 1u32;
        let mut plateau = Plateau::default();
        let because = loop {
            let Some(p) = self.point(Kind::LargeReads, outstanding)? else {
                break self.interrupted();
            };
            if self.stopped() {
                break self.interrupted();
            }
            if plateau.reached(p.mib_per_s) {
                break format!(
                    "MiB/s rose by no more than {:.0} % over the last {FLAT_POINTS} points",
                    RISE * 100.0
                );
            }
            if outstanding.saturating_mul(2) > cap {
                break format!("reached {cap} outstanding 1 MiB requests");
            }
            outstanding *= 2;
        };
        self.result.large_reads.stopped_because = because;
        self.result.max_mib_per_s = self
            .result
            .large_reads
            .curve
            .iter()
            .filter(|p| !p.partial)
            .max_by(|a, b| a.mib_per_s.total_cmp(&b.mib_per_s))
            .cloned();
        self.write()
    }

    fn single_session(&mut self) -> Result<()> {
        if let Some(p) = self.point(Kind::SingleSession, 0)? {
            self.result.single_session.stopped_because = "one point".into();
            if !p.partial {
                self.result.single_session_mib_per_s = Some(p.mib_per_s);
            }
        } else {
            self.result.single_session.stopped_because = self.interrupted();
        }
        self.write()
    }

    fn write(&self) -> Result<()> {
        match &self.held {
            Some(dir) => write_json(dir, &self.result),
            None => Ok(()),
        }
    }
}

/// The file a calibration writes into its directory (beside its points' run directories):
/// all that `dbio clean --stale` may remove there, besides those.
pub const CALIBRATE_DIR_FILES: &[&str] = &["calibrate.json"];

fn write_json(dir: &crate::safety::fs::Dir, r: &CalibrateResult) -> Result<()> {
    let json = serde_json::to_string_pretty(r)
        .map_err(|e| Error::other(format!("cannot serialize the calibration: {e}")))?;
    crate::report::write_file(dir, CALIBRATE_DIR_FILES[0], &(json + "\n"), true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse() {
        let l = parse_limit("p95=10ms").unwrap();
        assert_eq!((l.stat, l.us), (Stat::P95, 10_000.0));
        assert_eq!(parse_limit("p99=500us").unwrap().us, 500.0);
        assert_eq!(parse_limit("mean=0.5ms").unwrap().us, 500.0);
        assert_eq!(parse_limit("p50=1s").unwrap().us, 1e6);
        assert!(
            parse_limit("p97=1ms")
                .unwrap_err()
                .contains("mean, p50, p90, p95, p99")
        );
        assert!(parse_limit("p95").is_err());
        assert!(parse_limit("p95=10").unwrap_err().contains("unit"));
        assert!(parse_limit("p95=0ms").is_err());
        let l = LatencyLimit {
            stat: Stat::P99,
            us: 100.0,
        };
        let mut lat = LatencyJson {
            p99: 100.0,
            ..Default::default()
        };
        assert!(l.holds(&lat));
        lat.p99 = 100.5;
        assert!(!l.holds(&lat));
        assert_eq!(l.label(), "p99 ≤ 100µs");
    }

    #[test]
    fn outstanding_splits_into_whole_sessions() {
        for o in [1u32, 2, 3, 4, 6, 8, 12, 1024] {
            let (s, b) = Calibrator::split(o);
            assert_eq!(s * b, o, "{o}");
            assert!(s >= 1 && b >= 1);
        }
        assert_eq!(Calibrator::split(1), (1, 1));
    }
}
