//! `dbio pg compare TEST`: the same test twice, once as a plain dbio test on the file system
//! of the data directory and once through PostgreSQL, in one report — what the storage gives,
//! what the database gets, their ratio — with the database's findings in words and what it
//! saw (its wait events and I/O per backend type).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::error::{Error, Result};
use crate::options::RunArgs;
use crate::report::result::{EventResult, RunResult};
use crate::report::sections::format::{number, ratio};
use crate::report::sections::{Block, Column, Level, Report, Section, Table, pg_sections};
use crate::run::RunOutcome;
use crate::units::human_bytes;

/// The event a side is judged by: the one its sessions waited on longest (the first of Top
/// Timed Events), among those with requests.
pub fn main_event(r: &RunResult) -> Option<&EventResult> {
    r.events_by_wait_time().into_iter().find(|e| e.requests > 0)
}

/// The figures compared, each read from an event (None where it has no meaning).
type Figure = fn(&EventResult) -> Option<f64>;

const FIGURES: [(&str, Figure); 5] = [
    ("IOPS", |e| Some(e.iops)),
    ("MiB/s", |e| (e.bytes > 0).then_some(e.mib_per_s)),
    ("Mean latency (µs)", |e| Some(e.latency_us.mean)),
    ("p99 latency (µs)", |e| Some(e.latency_us.p99)),
    ("Request size", |e| {
        (e.bytes > 0 && e.requests > 0).then(|| e.bytes as f64 / e.requests as f64)
    }),
];

fn cell(figure: &str, v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if figure == "Request size" => human_bytes(v.round() as u64),
        Some(v) => number(v),
    }
}

/// How busy the CPUs were over the run (all CPUs, mean of the seconds), if recorded.
fn cpu_busy_pct(r: &RunResult) -> Option<f64> {
    let all: Vec<f64> =
        r.os.as_ref()?
            .cpu
            .iter()
            .filter(|c| c.cpu == "all")
            .map(|c| 100.0 - c.idle_pct - c.iowait_pct)
            .collect();
    (!all.is_empty()).then(|| all.iter().sum::<f64>() / all.len() as f64)
}

/// The mean wait of the client backends' data file reads by PostgreSQL's own timing (µs),
/// when it timed them.
fn read_wait_us(database: &RunResult) -> Option<f64> {
    let pg = database.pg.as_ref()?;
    pg.io
        .iter()
        .find(|i| i.backend_type == "client backend" && i.object == "relation" && i.op == "read")
        .and_then(|i| i.mean_wait_ms)
        .filter(|ms| *ms > 0.0)
        .map(|ms| ms * 1000.0)
}

/// One report of both runs: the runs, the side-by-side table (ratio = database / storage),
/// the findings, then what PostgreSQL saw.
pub fn compare_report(storage: &RunResult, database: &RunResult) -> Report {
    let s = main_event(storage);
    let d = main_event(database);
    let mut runs = Table::new(vec![
        Column::left("Side", 9),
        Column::left("Test", 22),
        Column::right("Sessions", 8),
        Column::left("Event", 24),
        Column::right("Measured (s)", 12),
        Column::left("Started", 20).detail(),
    ]);
    for (side, r, e) in [("storage", storage, s), ("database", database, d)] {
        runs.row(vec![
            side.into(),
            format!("{} ({})", r.test, r.submission_label()).into(),
            r.config.sessions.to_string().into(),
            e.map_or("-", |e| e.name.as_str()).into(),
            format!(
                "{:.1}{}",
                r.measured_seconds,
                if r.partial { " PARTIAL" } else { "" }
            )
            .into(),
            r.started_at.as_str().into(),
        ]);
    }
    let mut sections = vec![
        Section::new("runs", "Runs")
            .level(Level::Lead)
            .with(Block::Table(runs)),
    ];

    let mut t = Table::new(vec![
        Column::left("Figure", 20),
        Column::right("Storage gives", 14),
        Column::right("Database gets", 14),
        Column::right("Ratio", 9),
    ]);
    for (figure, of) in FIGURES {
        let (sv, dv) = (s.and_then(of), d.and_then(of));
        t.row(vec![
            figure.into(),
            cell(figure, sv).into(),
            cell(figure, dv).into(),
            ratio(dv, sv).into(),
        ]);
        // A request through the database is more than its read: PostgreSQL's own timing of
        // the reads (track_io_timing) beside the storage's latency.
        if figure == "Mean latency (µs)"
            && let Some(w) = read_wait_us(database)
        {
            let sv = s.map(|e| e.latency_us.mean);
            t.row(vec![
                "Read wait, PG's timing (µs)".into(),
                cell(figure, sv).into(),
                cell(figure, Some(w)).into(),
                ratio(Some(w), sv).into(),
            ]);
        }
    }
    let mut side = Section::new("side-by-side", "The storage gives, the database gets")
        .with(Block::Table(t))
        .with(Block::Note(
            "Ratio: the database's figure over the storage's (same sessions, size class and depth, same file system).".into(),
        ));
    if s.is_none() || d.is_none() {
        side.push(Block::Caution(format!(
            "The {} run has no event with requests: nothing to compare.",
            if s.is_none() { "storage" } else { "database" }
        )));
    }
    sections.push(side);

    let mut findings = Section::new("findings", "Findings");
    if let (Some(s), Some(d)) = (s, d)
        && s.iops > 0.0
        && s.latency_us.mean > 0.0
    {
        findings.push(Block::Note(format!(
            "the database got {:.2}× the storage's IOPS at {:.2}× its mean latency ({} against {} raw)",
            d.iops / s.iops,
            d.latency_us.mean / s.latency_us.mean,
            crate::database::pg::observe::findings::latency_words(d.latency_us.mean),
            crate::database::pg::observe::findings::latency_words(s.latency_us.mean)
        )));
    }
    if let (Some(s), Some(d), Some(w)) = (s, d, read_wait_us(database))
        && s.latency_us.mean > 0.0
    {
        findings.push(Block::Note(format!(
            "a read waited {} in PostgreSQL against {} raw ({:.2}×); a request took {} end to end, {} of it outside the read (SQL, executor, client round trip)",
            crate::database::pg::observe::findings::latency_words(w),
            crate::database::pg::observe::findings::latency_words(s.latency_us.mean),
            w / s.latency_us.mean,
            crate::database::pg::observe::findings::latency_words(d.latency_us.mean),
            crate::database::pg::observe::findings::latency_words((d.latency_us.mean - w).max(0.0)),
        )));
    }
    // Waits measured inside the database include the time a backend waits for a CPU once
    // its read is done: on busy CPUs the database's figures say so.
    if let Some(busy) = cpu_busy_pct(database)
        && busy >= 80.0
    {
        findings.push(Block::Caution(format!(
            "the CPUs were {busy:.0}% busy during the database's run: its backends, dbio's sessions and the sampler shared them, and every wait measured there includes waiting to be scheduled; fewer --sessions (or more CPUs) separate the storage from the CPU"
        )));
    }
    match &database.pg {
        Some(pg) => {
            for c in &pg.cautions {
                findings.push(Block::Caution(c.clone()));
            }
            for f in &pg.findings {
                findings.push(Block::Note(f.clone()));
            }
        }
        None => findings.push(Block::Note(
            "The database run recorded no PostgreSQL section: no findings of its own.".into(),
        )),
    }
    sections.push(findings);
    if let Some(pg) = &database.pg {
        sections.extend(pg_sections(pg));
    }
    Report {
        title: format!(
            "dbio {} — pg compare {} ({}): the storage beside the database",
            database.dbio_version,
            storage.test,
            storage.submission_label()
        ),
        sections,
    }
}

/// Where the plain test keeps its data set: under `--out`, the file system the throwaway
/// server's data directory lives on (it is made in the run directory).
pub const STORAGE_DIR: &str = "dbio-compare-data";

/// The plain dbio test matching a pg test, on `dir` (a directory on the data directory's
/// file system): the same arguments (test, sessions, size, depth, duration, submission),
/// only the target differs.
pub fn storage_args(pg_run: &RunArgs, dir: &Path) -> RunArgs {
    let mut a = pg_run.clone();
    a.target = dir.to_path_buf();
    a
}

/// Both runs of `dbio pg compare` and their report.
pub struct Compared {
    pub database: RunOutcome,
    pub storage: RunOutcome,
    pub report: Report,
}

/// Runs the pg test (`run_pg`: `dbio pg run` as a function), then the plain test on the file
/// system of its data directory, and builds the one report. The plain test's arguments are
/// checked before the pg test starts, so a refusal comes before anything is created.
pub fn compare_runs(
    a: &RunArgs,
    stop: &Arc<AtomicBool>,
    run_pg: &dyn Fn(&RunArgs, &Arc<AtomicBool>) -> Result<RunOutcome>,
) -> Result<Compared> {
    let plain = storage_args(a, &a.out.join(STORAGE_DIR));
    let cfg = crate::options::check::run_config(&plain)?;
    let database = run_pg(a, stop)?;
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::Interrupted(
            "interrupted after the database's run; the storage's test was not run".into(),
        ));
    }
    let pre = crate::options::environment::check(&cfg)?;
    let storage = crate::run::run(&cfg, &pre, stop, &|_| {})?;
    let mut report = compare_report(&storage.result, &database.result);
    let data_dir = (database.result.pg.as_ref())
        .and_then(|p| p.server.data_directory.clone())
        .map(std::path::PathBuf::from);
    if let Some(caution) = elsewhere(&plain.target, data_dir.as_deref())
        && let Some(s) = report.sections.iter_mut().find(|s| s.id == "side-by-side")
    {
        s.push(Block::Caution(caution));
    }
    Ok(Compared {
        database,
        storage,
        report,
    })
}

/// The device of `path`, or of its nearest ancestor that exists (a throwaway server's data
/// directory is gone after its run; its run directory stays).
fn device_of(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    path.ancestors()
        .find_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.dev())
}

/// A caution when the plain test's data set was not on the data directory's file system
/// (or that could not be told).
pub fn elsewhere(target: &Path, data_dir: Option<&Path>) -> Option<String> {
    let Some(data_dir) = data_dir else {
        return Some(format!(
            "The server did not show its data directory: the storage's test ran on {}'s file system, which may not be the database's.",
            target.display()
        ));
    };
    if !data_dir.is_absolute() || device_of(data_dir) != device_of(target) {
        return Some(format!(
            "The storage's test ran on {}'s file system, not on that of the data directory {} (another file system, or another host).",
            target.display(),
            data_dir.display()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::run_result;
    use crate::report::result_pg::PgSection;

    fn pair() -> (RunResult, RunResult) {
        let storage = run_result(3, &["db file sequential read"], false);
        let mut database = run_result(3, &["DataFileRead"], false);
        database.test = "pg read-iops".into();
        let e = &mut database.events[0];
        e.iops = storage.events[0].iops / 2.0;
        e.mib_per_s = storage.events[0].mib_per_s / 2.0;
        e.latency_us.mean = storage.events[0].latency_us.mean * 2.0;
        database.pg = Some(PgSection {
            findings: vec!["index lookups are always synchronous in PostgreSQL".into()],
            cautions: vec!["Reads averaged 8.3 µs, under 50 µs".into()],
            ..PgSection::default()
        });
        (storage, database)
    }

    #[test]
    fn side_by_side_with_ratios_and_findings() {
        let (storage, database) = pair();
        let report = compare_report(&storage, &database);
        let text = crate::report::summary::text(&report);
        let row = |label: &str| {
            (text.lines())
                .find(|l| l.starts_with(label))
                .unwrap_or_else(|| panic!("no {label} in {text}"))
                .to_string()
        };
        assert!(row("IOPS").ends_with("0.500×"), "{text}");
        assert!(row("MiB/s").ends_with("0.500×"), "{text}");
        assert!(row("Mean latency (µs)").ends_with("2.000×"), "{text}");
        // Both sides read 8 KiB per request.
        assert!(row("Request size").contains("8.0 KiB"), "{text}");
        assert!(row("Request size").ends_with("1.000×"), "{text}");
        assert!(
            text.contains("the database got 0.50× the storage's IOPS at 2.00× its mean latency"),
            "{text}"
        );
        assert!(text.contains("index lookups are always synchronous in PostgreSQL"));
        assert!(text.contains("Reads averaged 8.3 µs"));
        assert!(text.contains("db file sequential read") && text.contains("DataFileRead"));
        // The HTML of the same report carries the same table.
        let html = crate::report::html::page(&report);
        assert!(html.contains("Database gets") && html.contains("0.500×"));
    }

    #[test]
    fn a_side_without_requests_is_said_not_divided() {
        let (storage, mut database) = pair();
        database.events[0].requests = 0;
        database.pg = None;
        let text = crate::report::summary::text(&compare_report(&storage, &database));
        assert!(
            text.contains("The database run has no event with requests"),
            "{text}"
        );
        assert!(text.contains("recorded no PostgreSQL section"), "{text}");
        assert!(!text.contains("the database got"), "{text}");
    }

    #[test]
    fn the_plain_test_on_another_file_system_is_said() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join(STORAGE_DIR);
        // A data directory already removed, under the same directory: the same file system.
        assert_eq!(
            elsewhere(&target, Some(&dir.path().join("run/pgdata"))),
            None
        );
        if let Some(other) = ["/proc", "/sys"].iter().map(Path::new).find(|p| p.exists()) {
            let c = elsewhere(&target, Some(other)).unwrap();
            assert!(c.contains("not on that of the data directory"), "{c}");
        }
        assert!(
            elsewhere(&target, None)
                .unwrap()
                .contains("did not show its data directory")
        );
    }

    #[test]
    fn the_plain_test_runs_where_the_data_directory_is() {
        let mut a = RunArgs::defaults(None);
        a.sessions = 4;
        let s = storage_args(&a, Path::new("/srv/pg/dbio-compare"));
        assert_eq!(s.target, Path::new("/srv/pg/dbio-compare"));
        assert_eq!(s.sessions, 4);
    }
}
