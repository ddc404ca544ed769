//! `dbio matrix`: the ORION-style load grid. Small random reads (`--small-size`, one
//! outstanding per session: "db file sequential read") at rising outstanding counts, crossed
//! with large I/O (`--large-size`, one outstanding per session) as sequential streams
//! ("direct path read") or random large reads ("db file parallel read" of one large block),
//! each point a short run of its own. `--write-pct` turns that share of each kind's
//! outstanding I/Os into writes ("db file parallel write", one by one / "direct path write").
//!
//! `--matrix basic`: small alone, then large alone; `detailed`: every combination; `row`:
//! every small level at `--large-outstanding`; `col`: every large level at
//! `--small-outstanding`; `point`: that one combination.

use crate::units::Shown;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Args;
use serde::Serialize;

use crate::engine::Submission;
use crate::error::{Error, ExitCode, Result};
use crate::options::RunArgs;
use crate::options::cli::MatrixOptions;
pub use crate::options::points::{LargeAccess, Shape};
use crate::units::{duration_label, size_label};
use crate::workload::spec::ClassSpec;
use crate::workload::spec::RunConfig;
use crate::workload::{Event, Test};

#[derive(Debug, Clone, Args)]
pub struct MatrixArgs {
    /// The options of the table it takes: the data set, `--point-duration` and `--warmup`
    /// of each point (a shorter warm-up than a run's), `--io-mode`, `--engine`, `--out`
    /// (where the matrix directory is made), `--json` (matrix.json on stdout), and the
    /// grid's own: `--matrix`, `--small-size`, `--large-size`, `--num-small`, `--num-large`,
    /// `--large-access`, `--large-outstanding`, `--small-outstanding`, `--write-pct`.
    #[command(flatten)]
    pub options: MatrixOptions,
}

/// One measured point of the grid.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub small: u32,
    pub large: u32,
    /// Small I/O per second (reads and writes), mean and p99 latency in µs.
    pub small_iops: f64,
    pub small_mean_us: Option<f64>,
    pub small_p99_us: Option<f64>,
    /// Large I/O MiB per second.
    pub large_mib_per_s: f64,
    pub large_mean_us: Option<f64>,
    pub run_dir: String,
}

#[derive(Debug, Serialize)]
pub struct MatrixResult {
    pub shape: Shape,
    pub small_size: u64,
    pub large_size: u64,
    pub large_access: LargeAccess,
    pub write_pct: u32,
    pub point_duration_s: f64,
    pub points: Vec<Point>,
    /// The best point of each kind.
    pub max_small_iops: Option<Point>,
    pub max_large_mib_per_s: Option<Point>,
    pub min_small_latency: Option<Point>,
}

/// 1, 2, 4, ... up to and including `max`.
fn levels(max: u32) -> Vec<u32> {
    let mut v: Vec<u32> = std::iter::successors(Some(1u32), |x| x.checked_mul(2))
        .take_while(|x| *x < max)
        .collect();
    v.push(max);
    v
}

/// The (small, large) outstanding counts of each point.
pub fn grid(a: &MatrixArgs) -> Vec<(u32, u32)> {
    let (small, large) = (levels(a.options.0.num_small), levels(a.options.0.num_large));
    match a.options.0.matrix {
        Shape::Basic => small
            .iter()
            .map(|&s| (s, 0))
            .chain(large.iter().map(|&l| (0, l)))
            .collect(),
        Shape::Detailed => {
            let mut v = Vec::new();
            for &l in std::iter::once(&0).chain(&large) {
                for &s in std::iter::once(&0).chain(&small) {
                    if s + l > 0 {
                        v.push((s, l));
                    }
                }
            }
            v
        }
        Shape::Row => small
            .iter()
            .map(|&s| (s, a.options.0.large_outstanding))
            .collect(),
        Shape::Col => large
            .iter()
            .map(|&l| (a.options.0.small_outstanding, l))
            .collect(),
        Shape::Point => vec![(a.options.0.small_outstanding, a.options.0.large_outstanding)],
    }
}

fn class(name: &str, event: Event, size: u64, sessions: u32, submission: Submission) -> ClassSpec {
    ClassSpec {
        batch: Some(1),
        depth: Some(1),
        ..ClassSpec::fixed(name, event, size, sessions as usize, submission)
    }
}

/// The classes of one point: `n` outstanding of each kind, `write_pct` of them writes.
fn point_classes(a: &MatrixArgs, small: u32, large: u32) -> Vec<ClassSpec> {
    let split = |n: u32| {
        let writes = (n * a.options.0.write_pct + 50) / 100;
        (n - writes, writes)
    };
    let mut v = Vec::new();
    let (sr, sw) = split(small);
    let (lr, lw) = split(large);
    if sr > 0 {
        v.push(class(
            "small reads",
            Event::DbFileSequentialRead,
            a.options.0.small_size,
            sr,
            Submission::Sync,
        ));
    }
    if sw > 0 {
        v.push(class(
            "small writes",
            Event::DbFileParallelWrite,
            a.options.0.small_size,
            sw,
            Submission::Sync,
        ));
    }
    let large_read = match a.options.0.large_access {
        LargeAccess::Stream => (Event::DirectPathRead, Submission::Async),
        LargeAccess::Random => (Event::DbFileParallelRead, Submission::Async),
    };
    if lr > 0 {
        v.push(class(
            "large reads",
            large_read.0,
            a.options.0.large_size,
            lr,
            large_read.1,
        ));
    }
    if lw > 0 {
        v.push(class(
            "large writes",
            Event::DirectPathWrite,
            a.options.0.large_size,
            lw,
            Submission::Async,
        ));
    }
    v
}

/// A run configuration for one point, from `dbio run`'s defaults and the matrix options.
fn point_config(a: &MatrixArgs, classes: Vec<ClassSpec>, out: &Path) -> Result<RunConfig> {
    let mut run = RunArgs::defaults(Some(Test::ReadIops));
    run.take_data_set(&a.options.0);
    run.duration = a.options.0.point_duration;
    run.warmup = a.options.0.warmup;
    run.io_mode = a.options.0.io_mode;
    run.engine = a.options.0.engine;
    run.out = out.to_path_buf();
    run.quiet = true;
    let mut cfg = crate::options::check::run_config(&run)?;
    cfg.test = Test::Job;
    cfg.sessions = classes.iter().map(|c| c.sessions).sum();
    cfg.classes = classes;
    Ok(cfg)
}

/// What a finished (or stopped) matrix produced.
pub struct MatrixOutcome {
    pub result: MatrixResult,
    /// The matrix directory (CSV files, matrix.txt, matrix.json, `points/`).
    pub dir: PathBuf,
    /// What is printed (and written as matrix.txt, in text).
    pub report: crate::report::Report,
    pub exit: ExitCode,
}

/// Runs the grid, calling `on_data_set` when a point's data set is ready and `on_point`
/// after each point (the results store records it like a run). Stops at the first point
/// that was interrupted or hit I/O errors.
pub fn run(
    a: &MatrixArgs,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&crate::dataset::DataSet),
    on_point: &mut dyn FnMut(&crate::run::RunOutcome),
) -> Result<MatrixOutcome> {
    if !a
        .options
        .0
        .large_size
        .is_multiple_of(a.options.0.block_size)
        && a.options.0.large_access == LargeAccess::Stream
    {
        return Err(Error::usage(format!(
            "--large-size {} must be a multiple of --block-size {} (streams read whole blocks)",
            size_label(a.options.0.large_size),
            size_label(a.options.0.block_size)
        )));
    }
    let tail = format!(
        "matrix_{}_{}_{}",
        a.options.0.matrix.name(),
        size_label(a.options.0.small_size),
        size_label(a.options.0.large_size)
    );
    let grid = grid(a);
    // Every point's run checked (both stages) before the matrix directory appears.
    let mut planned = Vec::with_capacity(grid.len());
    for &(small, large) in &grid {
        let cfg = point_config(a, point_classes(a, small, large), &a.options.0.out)?;
        let pre = crate::options::environment::check(&cfg)?;
        planned.push((cfg, pre));
    }
    // Made, proved writable, registered and locked while the matrix goes; removed again if
    // no point left anything in it.
    let mut place = crate::report::RunPlace::make(
        &a.options.0.out,
        None,
        &crate::sys::utc_now_rfc3339(),
        &tail,
        "matrix",
    )?;
    let outcome = place.make_subdir("points").and_then(|points| {
        run_points(
            a,
            stop,
            on_data_set,
            on_point,
            &grid,
            planned,
            &place,
            points,
        )
    });
    place.close();
    outcome
}

/// The points of a matrix, in its directory `place`, their run directories in `points`.
#[allow(clippy::too_many_arguments)]
fn run_points(
    a: &MatrixArgs,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&crate::dataset::DataSet),
    on_point: &mut dyn FnMut(&crate::run::RunOutcome),
    grid: &[(u32, u32)],
    planned: Vec<(crate::options::RunConfig, crate::run::Preflight)>,
    place: &crate::report::RunPlace,
    points: crate::safety::fs::Dir,
) -> Result<MatrixOutcome> {
    let held = &place.dir;
    let dir = held.path().to_path_buf();
    let points_dir = std::sync::Arc::new(points);
    stderr_line!(
        "dbio: matrix {}: {} points of {} + {} warm-up each, in {}",
        a.options.0.matrix.name(),
        grid.len(),
        duration_label(a.options.0.point_duration),
        duration_label(a.options.0.warmup),
        dir.shown()
    );
    let mut points = Vec::new();
    let mut exit = ExitCode::Ok;
    for (i, &(small, large)) in grid.iter().enumerate() {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        stderr_line!(
            "dbio: point {}/{}: small outstanding {small}, large outstanding {large}",
            i + 1,
            grid.len()
        );
        let (mut cfg, mut pre) = planned[i].clone();
        cfg.out = points_dir.path().to_path_buf();
        pre.out = Some(points_dir.clone());
        let outcome = crate::run::run(&cfg, &pre, stop, on_data_set)?;
        on_point(&outcome);
        let r = &outcome.result;
        let kind = |prefix: &'static str| -> Vec<&crate::report::result::EventResult> {
            r.classes
                .iter()
                .filter(|c| c.name.starts_with(prefix))
                .map(|c| &r.events[c.event_index])
                .collect()
        };
        let small_events = kind("small");
        let large_events = kind("large");
        let mean = |evs: &[&crate::report::result::EventResult]| {
            let n: u64 = evs.iter().map(|e| e.requests).sum();
            (n > 0).then(|| {
                evs.iter()
                    .map(|e| e.latency_us.mean * e.requests as f64)
                    .sum::<f64>()
                    / n as f64
            })
        };
        points.push(Point {
            small,
            large,
            small_iops: small_events.iter().map(|e| e.iops).sum(),
            small_mean_us: mean(&small_events),
            small_p99_us: small_events
                .iter()
                .filter(|e| e.requests > 0)
                .map(|e| e.latency_us.p99)
                .reduce(f64::max),
            large_mib_per_s: large_events.iter().map(|e| e.mib_per_s).sum(),
            large_mean_us: mean(&large_events),
            run_dir: outcome.run_dir.display().to_string(),
        });
        if outcome.exit != ExitCode::Ok {
            exit = outcome.exit;
            stderr_line!(
                "dbio: point {} ended with {:?}; stopping the matrix",
                i + 1,
                outcome.exit
            );
            break;
        }
    }
    let best = |key: &dyn Fn(&Point) -> Option<f64>, max: bool| {
        points
            .iter()
            .filter_map(|p| key(p).map(|v| (v, p)))
            .filter(|(v, _)| *v > 0.0)
            .reduce(|a, b| if (b.0 > a.0) == max { b } else { a })
            .map(|(_, p)| p.clone())
    };
    let result = MatrixResult {
        shape: a.options.0.matrix,
        small_size: a.options.0.small_size,
        large_size: a.options.0.large_size,
        large_access: a.options.0.large_access,
        write_pct: a.options.0.write_pct,
        point_duration_s: a.options.0.point_duration.as_secs_f64(),
        max_small_iops: best(&|p| (p.small > 0).then_some(p.small_iops), true),
        max_large_mib_per_s: best(&|p| (p.large > 0).then_some(p.large_mib_per_s), true),
        min_small_latency: best(&|p| p.small_mean_us, false),
        points,
    };
    write_outputs(held, &result)?;
    if exit == ExitCode::Ok && stop.load(std::sync::atomic::Ordering::Relaxed) {
        exit = ExitCode::Interrupted;
    }
    Ok(MatrixOutcome {
        report: report(&result),
        result,
        dir,
        exit,
    })
}

/// A grid of `value` by small (columns) and large (rows) outstanding counts, as CSV.
/// Small I/O figures leave out the points without small I/O (column 0); large ones the
/// points without large I/O (row 0).
fn grid_csv(r: &MatrixResult, of_small: bool, value: impl Fn(&Point) -> Option<f64>) -> String {
    let mut smalls: Vec<u32> = r
        .points
        .iter()
        .map(|p| p.small)
        .filter(|&s| s > 0 || !of_small)
        .collect();
    let mut larges: Vec<u32> = r
        .points
        .iter()
        .map(|p| p.large)
        .filter(|&l| l > 0 || of_small)
        .collect();
    smalls.sort_unstable();
    smalls.dedup();
    larges.sort_unstable();
    larges.dedup();
    let mut o = crate::report::export::Csv::new(
        ["large\\small".to_string()]
            .into_iter()
            .chain(smalls.iter().map(|s| s.to_string())),
    );
    for l in &larges {
        let cells = smalls.iter().map(|s| {
            (r.points.iter())
                .find(|p| p.small == *s && p.large == *l)
                .and_then(&value)
                .map_or(String::new(), |v| format!("{v:.2}"))
        });
        o.row([l.to_string()].into_iter().chain(cells));
    }
    o.finish()
}

/// The files a matrix writes into its directory (beside `points/`, its points' run
/// directories): all that `dbio clean --stale` may remove there, besides those.
pub const MATRIX_DIR_FILES: &[&str] = &[
    "iops.csv",
    "mbps.csv",
    "lat.csv",
    "matrix.txt",
    "matrix.json",
];

fn write_outputs(dir: &crate::safety::fs::Dir, r: &MatrixResult) -> Result<()> {
    let write = |name: &str, text: String| {
        debug_assert!(MATRIX_DIR_FILES.contains(&name), "{name} is not listed");
        crate::report::write_file(dir, name, &text, true)
    };
    write(
        "iops.csv",
        grid_csv(r, true, |p| (p.small > 0).then_some(p.small_iops)),
    )?;
    write(
        "mbps.csv",
        grid_csv(r, false, |p| (p.large > 0).then_some(p.large_mib_per_s)),
    )?;
    write("lat.csv", grid_csv(r, true, |p| p.small_mean_us))?;
    write("matrix.txt", crate::report::summary::text(&report(r)))?;
    write(
        "matrix.json",
        serde_json::to_string_pretty(r).map_err(|e| Error::other(e.to_string()))?,
    )
}

/// A matrix: the points as a table, then the best of each kind and where it occurred.
/// Figures as a sweep's: whole numbers with thousands separators, MiB/s to one decimal.
pub fn report(r: &MatrixResult) -> crate::report::Report {
    use super::report::{tenth, whole};
    use crate::report::sections::{Block, Column, Section, Table};
    let mut t = Table::new(vec![
        Column::right("small", 6),
        Column::right("large", 6),
        Column::right("small IOPS", 12),
        Column::right("mean (µs)", 11),
        Column::right("p99 (µs)", 10),
        Column::right("large MiB/s", 12),
    ]);
    let cell = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
    for p in &r.points {
        t.row(vec![
            p.small.to_string().into(),
            p.large.to_string().into(),
            cell((p.small > 0).then_some(p.small_iops), &whole).into(),
            cell(p.small_mean_us, &whole).into(),
            cell(p.small_p99_us, &whole).into(),
            cell((p.large > 0).then_some(p.large_mib_per_s), &tenth).into(),
        ]);
    }
    let mut best = Vec::new();
    if let Some(p) = &r.max_small_iops {
        best.push((
            "Maximum small IOPS".to_string(),
            format!(
                "{} at small {} / large {}",
                whole(p.small_iops),
                p.small,
                p.large
            ),
        ));
    }
    if let Some(p) = &r.max_large_mib_per_s {
        best.push((
            "Maximum large MiB/s".to_string(),
            format!(
                "{} at small {} / large {}",
                tenth(p.large_mib_per_s),
                p.small,
                p.large
            ),
        ));
    }
    if let Some(p) = &r.min_small_latency {
        best.push((
            "Minimum small latency".to_string(),
            format!(
                "{} µs at small {} / large {}",
                whole(p.small_mean_us.unwrap_or(0.0)),
                p.small,
                p.large
            ),
        ));
    }
    let mut sections = vec![Section::new("points", "Points").with(Block::Table(t))];
    if !best.is_empty() {
        sections.push(Section::new("best", "Best points").with(Block::Fields(best)));
    }
    crate::report::Report {
        title: format!(
            "Matrix {}: small {} random reads, large {} {}, {}% writes, {} per point",
            r.shape.name(),
            size_label(r.small_size),
            size_label(r.large_size),
            r.large_access.name(),
            r.write_pct,
            crate::units::duration_label(std::time::Duration::from_secs_f64(r.point_duration_s))
        ),
        sections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_double_up_to_the_maximum() {
        assert_eq!(levels(1), vec![1]);
        assert_eq!(levels(8), vec![1, 2, 4, 8]);
        assert_eq!(levels(12), vec![1, 2, 4, 8, 12]);
    }
}
