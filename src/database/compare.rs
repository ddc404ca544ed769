//! `dbio <db> compare TEST` (`dbio pg compare`): the same test twice, once through the
//! database and once as the matching plain dbio test ([`super::shape`]) on the file system
//! of the data directory, in one report — what the storage gives, what the database gets,
//! their ratio — with the database's findings in words and what it saw.
//!
//! The comparison is a model ([`Compared`], `compare.json`: both sides, the ratios, the
//! findings), built once; its text, Markdown and HTML come from one [`Report`] made of it
//! ([`report`]), its `--json` is the model itself. It is recorded in the results store
//! (`dbio runs` lists it, `dbio show c<ID>` shows it again) beside its two runs.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::options::RunArgs;
use crate::report::result::{EventResult, RunResult};
use crate::report::sections::format::{number, ratio};
use crate::report::sections::{Block, Column, Level, Report, Section, Table};
use crate::run::RunOutcome;
use crate::units::human_bytes;

/// `compare.json`'s `schema`.
pub const SCHEMA: &str = "dbio.db-compare.v1";

/// The files a compare writes into its directory (its two runs' directories are in it).
pub const COMPARE_DIR_FILES: &[&str] = &["compare.json", "summary.txt"];

/// What the results store registers a compare's directory as.
pub const DIR_KIND: &str = "db compare";

/// The event a side is judged by: the one its sessions waited on longest (the first of Top
/// Timed Events), among those with requests.
pub fn main_event(r: &RunResult) -> Option<&EventResult> {
    r.events_by_wait_time().into_iter().find(|e| e.requests > 0)
}

/// What the compared figures of a shape are: blocks with blocks, waits with waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Single-block reads (lookups, prefetched batches): blocks/s and the read wait.
    Blocks,
    /// Sequential reads: MiB/s.
    Scan,
    /// Single-block writes: blocks/s.
    Writes,
    /// Bulk writes: MiB/s.
    Bulk,
    /// Commits: commits/s, the log flush's wait.
    Commits,
}

/// The shape a compare's storage side stands for (from its plain test and submission).
fn kind(storage: &RunResult) -> Option<(Kind, &'static super::ShapeRow)> {
    let test = crate::workload::Test::from_name(&storage.test)?;
    let row = super::shape::row(test, storage.submission_label() == "sync")?;
    let kind = match row.shape {
        super::Shape::Lookup | super::Shape::Batch => Kind::Blocks,
        super::Shape::Scan => Kind::Scan,
        super::Shape::Update => Kind::Writes,
        super::Shape::Copy => Kind::Bulk,
        super::Shape::Commit => Kind::Commits,
    };
    Some((kind, row))
}

/// The label of the read wait by the database's own timing ("Read wait, PG's timing (µs)",
/// "Read wait, InnoDB's timing (µs)").
fn read_wait_label(short: &str) -> String {
    if short.is_empty() {
        "Read wait (µs)".into()
    } else {
        format!("Read wait, {short}'s timing (µs)")
    }
}

/// One side of a compare: its run, where it is, and its whole result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Side {
    /// Its id in the results store (`dbio show ID`), once recorded.
    #[serde(default)]
    pub run_id: Option<i64>,
    pub run_dir: String,
    /// The event it is judged by: the database's [`main_event`], the storage's event of the
    /// shape's figures ([`storage_event`]).
    pub event: Option<String>,
    pub result: RunResult,
}

/// One row of the side-by-side table: a figure of each side and their ratio (database /
/// storage).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FigureRow {
    pub figure: String,
    pub storage: Option<f64>,
    pub database: Option<f64>,
    pub ratio: Option<f64>,
}

/// One finding, in words: a note, or a caution that puts the figures in doubt.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// `note` or `caution`.
    pub level: String,
    pub text: String,
}

impl Finding {
    fn note(text: String) -> Finding {
        Finding {
            level: "note".into(),
            text,
        }
    }

    fn caution(text: String) -> Finding {
        Finding {
            level: "caution".into(),
            text,
        }
    }
}

/// A compare: both sides, the ratios, the findings (`compare.json`, `--json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Compared {
    pub schema: String,
    pub dbio_version: String,
    /// The command (`pg compare`).
    pub command: String,
    /// The test (`read-iops`) and its submission (`sync`, `async`).
    pub test: String,
    pub submission: String,
    pub started_at: String,
    /// Its id in the results store (`dbio show c<ID>`), once recorded.
    #[serde(default)]
    pub id: Option<i64>,
    pub storage: Side,
    pub database: Side,
    /// Whose I/O shapes the storage side ran, with the server's settings, in words
    /// ("InnoDB's (--like innodb --io-mode O_DIRECT: the server's innodb_flush_method)").
    #[serde(default)]
    pub storage_shape: Option<String>,
    /// The side-by-side table, ratio = database / storage.
    pub figures: Vec<FigureRow>,
    /// What the table cannot show by itself (no event to compare, another file system).
    pub table_cautions: Vec<String>,
    pub findings: Vec<Finding>,
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

/// What the database saw, from whichever database's section the result carries.
fn seen(database: &RunResult) -> Option<super::Seen> {
    super::seen(database)
}

fn side(r: &RunResult, run_dir: &Path, event: Option<&EventResult>) -> Side {
    Side {
        run_id: None,
        run_dir: std::fs::canonicalize(run_dir)
            .unwrap_or_else(|_| run_dir.to_path_buf())
            .display()
            .to_string(),
        event: event.map(|e| e.name.clone()),
        result: r.clone(),
    }
}

fn event<'a>(r: &'a RunResult, name: &str) -> Option<&'a EventResult> {
    r.events.iter().find(|e| e.name == name && e.requests > 0)
}

/// The storage side's event a shape's figures are taken from: its reads for a read shape,
/// its data page writes for single-block writes (not a doublewrite's, not the syncs after
/// them, which may wait longer), its writes for bulk writes, its commits; else its main
/// event.
fn storage_event(storage: &RunResult) -> Option<&EventResult> {
    use crate::workload::Event;
    use crate::workload::event::{Direction, Unit};
    let facts = |e: &EventResult| Event::from_name(&e.name).map(Event::facts);
    let pick = |want: &dyn Fn(&crate::workload::event::Facts) -> bool| {
        storage
            .events_by_wait_time()
            .into_iter()
            .find(|e| e.requests > 0 && facts(e).is_some_and(want))
    };
    let found = match kind(storage).map(|k| k.0) {
        Some(Kind::Blocks | Kind::Scan) => pick(&|f| f.direction == Direction::Read),
        Some(Kind::Writes) => pick(&|f| f.direction == Direction::Write && f.unit == Unit::Block),
        Some(Kind::Bulk) => pick(&|f| f.direction == Direction::Write),
        Some(Kind::Commits) => event(storage, roles(storage).commit.name()),
        None => None,
    };
    found.or_else(|| main_event(storage))
}

/// A bulk load's data file writes on the storage side: MiB/s of every event writing data
/// file pages (PostgreSQL's COPY: the pages added, DataFileExtend, and the ring's pages
/// written back, DataFileWrite — as PostgreSQL 15 counts a backend's extends and writes),
/// and their names.
fn data_writes(storage: &RunResult) -> Option<(f64, Vec<&str>)> {
    use crate::workload::Event;
    let writes: Vec<&EventResult> = (storage.events.iter())
        .filter(|e| e.requests > 0)
        .filter(|e| Event::from_name(&e.name).is_some_and(|v| v.writes() && v.uses_data_files()))
        .collect();
    (!writes.is_empty()).then(|| {
        (
            writes.iter().map(|e| e.mib_per_s).sum(),
            writes.iter().map(|e| e.name.as_str()).collect(),
        )
    })
}

/// The events of the storage side's database roles (a commit's wait, the log write and its
/// sync), by whose shapes it ran.
fn roles(storage: &RunResult) -> crate::workload::RoleEvents {
    let like = (storage.config.like.as_deref())
        .and_then(|l| crate::workload::event::Like::parse(l).ok())
        .unwrap_or_default();
    crate::workload::RoleEvents::of(like)
}

/// The side-by-side figures (ratio = database / storage): the storage's requests beside
/// the database's own counters of the same thing (blocks with blocks, waits with waits,
/// commits with commits); then the database's statements, which have no storage twin.
fn figures(storage: &RunResult, database: &RunResult) -> Vec<FigureRow> {
    let (s, d) = (storage_event(storage), main_event(database));
    let seen = seen(database).unwrap_or_default();
    let row = |figure: &str, sv: Option<f64>, dv: Option<f64>| FigureRow {
        figure: figure.into(),
        storage: sv,
        database: dv,
        ratio: match (sv, dv) {
            (Some(sv), Some(dv)) if sv != 0.0 => Some(dv / sv),
            _ => None,
        },
    };
    let iops = s.map(|e| e.iops);
    let mib = s.map(|e| e.mib_per_s);
    let mean = s.map(|e| e.latency_us.mean);
    let mut rows = Vec::new();
    match kind(storage).map(|k| k.0) {
        Some(Kind::Blocks) => {
            rows.push(row("Blocks read/s", iops, seen.reads_per_s));
            rows.push(row(&read_wait_label(seen.short), mean, seen.read_wait_us));
        }
        Some(Kind::Scan) => {
            rows.push(row("MiB/s read", mib, seen.read_mib_per_s));
        }
        Some(Kind::Writes) => {
            rows.push(row("Blocks written/s", iops, seen.writes_per_s));
            rows.push(row("MiB/s written", mib, seen.write_mib_per_s));
        }
        Some(Kind::Bulk) => {
            let written = data_writes(storage).map(|(mib, _)| mib).or(mib);
            rows.push(row("MiB/s written", written, seen.write_mib_per_s));
        }
        Some(Kind::Commits) => {
            // The log flush: its sync where it is an event of its own (InnoDB's,
            // PostgreSQL's with fdatasync), else the write that syncs (O_DSYNC).
            let roles = roles(storage);
            let flush = (roles.log_sync)
                .and_then(|e| event(storage, e.name()))
                .or_else(|| event(storage, roles.log_write.name()))
                .map(|e| e.latency_us.mean);
            rows.push(row(
                "Commits/s",
                storage.totals.commits_per_s,
                seen.commits_per_s,
            ));
            rows.push(row("Log flush wait (µs)", flush, seen.flush_wait_us));
        }
        None => {}
    }
    // The statements: what a session of the database waited for, end to end.
    if let Some(d) = d {
        rows.push(row(
            &format!("Statements/s: {}", d.name),
            None,
            Some(d.iops),
        ));
        rows.push(row(
            &format!("Statement (µs): {}", d.name),
            (kind(storage).is_some_and(|k| k.0 == Kind::Commits))
                .then(|| event(storage, roles(storage).commit.name()).map(|e| e.latency_us.mean))
                .flatten(),
            Some(d.latency_us.mean),
        ));
    }
    rows
}

/// What the device under the data directory read over the database's window: requests/s
/// and bytes per request, at the top layer (the first device sampled).
fn device_reads(r: &RunResult) -> Option<(f64, f64)> {
    let os = r.os.as_ref()?;
    let top = &os.devices.first()?.device;
    let rows: Vec<_> = os.devices.iter().filter(|d| &d.device == top).collect();
    let n = rows.len() as f64;
    let r_s = rows.iter().map(|d| d.r_s).sum::<f64>() / n;
    let mib_s = rows.iter().map(|d| d.rmib_s).sum::<f64>() / n;
    (r_s > 0.0).then(|| (r_s, mib_s * 1048576.0 / r_s))
}

/// The findings, in words: the database's own figures against the storage's, where a
/// statement's time went, busy CPUs, the kernel's read-ahead, then the database's own
/// cautions and findings.
fn findings(storage: &RunResult, database: &RunResult) -> Vec<Finding> {
    use crate::database::pg::observe::findings::latency_words;
    let (s, d) = (storage_event(storage), main_event(database));
    let seen_now = seen(database);
    let name = seen_now.as_ref().map_or("The database", |x| x.name);
    let mut out = Vec::new();
    let k = kind(storage).map(|k| k.0);
    if let (Some(s), Some(seen)) = (s, &seen_now) {
        match k {
            Some(Kind::Blocks) => {
                if let (Some(reads), Some(w)) = (seen.reads_per_s, seen.read_wait_us)
                    && s.iops > 0.0
                    && s.latency_us.mean > 0.0
                {
                    out.push(Finding::note(format!(
                        "{name} read {reads:.0} blocks/s, {:.2}× the storage's {:.0}/s, each waiting {} against {} raw ({:.2}×)",
                        reads / s.iops,
                        s.iops,
                        latency_words(w),
                        latency_words(s.latency_us.mean),
                        w / s.latency_us.mean
                    )));
                }
            }
            Some(Kind::Scan) => {
                if let Some(mib) = seen.read_mib_per_s.filter(|_| s.mib_per_s > 0.0) {
                    out.push(Finding::note(format!(
                        "{name} read {mib:.1} MiB/s, {:.2}× the storage's {:.1} MiB/s",
                        mib / s.mib_per_s,
                        s.mib_per_s
                    )));
                }
            }
            Some(Kind::Bulk) => {
                if let (Some(mib), Some((written, names))) =
                    (seen.write_mib_per_s, data_writes(storage))
                    && written > 0.0
                {
                    out.push(Finding::note(format!(
                        "{name} wrote {mib:.1} MiB/s of data file blocks (pages added and pages written), {:.2}× the storage's {written:.1} MiB/s ({} together)",
                        mib / written,
                        names.join(" and ")
                    )));
                }
            }
            Some(Kind::Writes) => {
                if let Some(mib) = seen.write_mib_per_s.filter(|_| s.mib_per_s > 0.0) {
                    out.push(Finding::note(format!(
                        "{name} wrote {mib:.1} MiB/s of data file blocks, {:.2}× the storage's {:.1} MiB/s",
                        mib / s.mib_per_s,
                        s.mib_per_s
                    )));
                }
            }
            Some(Kind::Commits) => {
                if let (Some(c), Some(sc)) = (seen.commits_per_s, storage.totals.commits_per_s)
                    && sc > 0.0
                {
                    out.push(Finding::note(format!(
                        "{name} committed {c:.0}/s, {:.2}× the storage's {sc:.0}/s",
                        c / sc
                    )));
                }
            }
            None => {}
        }
    }
    // Where a statement's time went: its blocks read at their wait, its buffer hits, and
    // the rest (CPU, SQL, the client round trip).
    if let (Some(Kind::Blocks), Some(d), Some(seen)) = (k, d, &seen_now)
        && let (Some(reads), Some(w)) = (seen.reads_per_s, seen.read_wait_us)
        && d.iops > 0.0
    {
        let per = reads / d.iops;
        let waited = per * w;
        let hits = seen.hits_per_s.map_or(0.0, |h| h / d.iops);
        out.push(Finding::note(format!(
            "one {} took {} end to end: {per:.2} blocks read per statement at {} each ({} of read wait), {hits:.1} buffer hits, and {} of CPU, SQL and the client round trip",
            d.name,
            latency_words(d.latency_us.mean),
            latency_words(w),
            latency_words(waited),
            latency_words((d.latency_us.mean - waited).max(0.0)),
        )));
    }
    // The kernel's read-ahead: the database read blocks, the device read more at a time.
    if k == Some(Kind::Scan)
        && let (Some((r_s, bytes)), Some(saw)) = (device_reads(database), &seen_now)
        && let Some(reads) = saw.reads_per_s.filter(|r| *r > 0.0)
        && bytes >= 2.0 * database.config.block_size.max(1) as f64
    {
        let name = seen(database).map_or("the database", |s| s.name);
        out.push(Finding::note(format!(
            "the kernel's read-ahead served the scan: {name} read {} blocks ({reads:.0}/s), the device read {} per request ({r_s:.0}/s)",
            human_bytes(database.config.block_size),
            human_bytes(bytes.round() as u64)
        )));
    }
    // Waits measured inside the database include the time a backend waits for a CPU once
    // its read is done: on busy CPUs the database's figures say so.
    if let Some(busy) = cpu_busy_pct(database)
        && busy >= 80.0
    {
        out.push(Finding::caution(format!(
            "the CPUs were {busy:.0}% busy during the database's run: its backends, dbio's sessions and the sampler shared them, and every wait measured there includes waiting to be scheduled; fewer --sessions (or more CPUs) separate the storage from the CPU"
        )));
    }
    match seen(database) {
        Some(seen) => {
            out.extend(seen.cautions.into_iter().map(Finding::caution));
            out.extend(seen.findings.into_iter().map(Finding::note));
        }
        None => out.push(Finding::note(format!(
            "The database run recorded no {} section: no findings of its own.",
            if database.test.starts_with("mysql") {
                "MariaDB/MySQL"
            } else {
                "PostgreSQL"
            }
        ))),
    }
    out
}

/// The compare of two finished runs, in their directories.
pub fn compared(
    command: &str,
    (storage, storage_dir): (&RunResult, &Path),
    (database, database_dir): (&RunResult, &Path),
) -> Compared {
    let (s, d) = (storage_event(storage), main_event(database));
    let mut table_cautions = Vec::new();
    if s.is_none() || d.is_none() {
        table_cautions.push(format!(
            "The {} run has no event with requests: nothing to compare.",
            if s.is_none() { "storage" } else { "database" }
        ));
    }
    Compared {
        schema: SCHEMA.into(),
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        command: command.into(),
        test: storage.test.clone(),
        submission: storage.submission_label().into(),
        started_at: database.started_at.clone(),
        id: None,
        storage: side(storage, storage_dir, storage_event(storage)),
        database: side(database, database_dir, d),
        storage_shape: shape_said(storage),
        figures: figures(storage, database),
        table_cautions,
        findings: findings(storage, database),
    }
}

fn cell(figure: &str, v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if figure == "Request size" => human_bytes(v.round() as u64),
        Some(v) => number(v),
    }
}

/// The one report of a compare: the runs, the side-by-side table, the findings, then what
/// the database saw. Text, Markdown and HTML render it.
pub fn report(c: &Compared) -> Report {
    let (storage, database) = (&c.storage.result, &c.database.result);
    let mut runs = Table::new(vec![
        Column::left("Side", 9),
        Column::right("Run", 5),
        Column::left("Test", 22),
        Column::right("Sessions", 8),
        Column::left("Event", 24),
        Column::right("Measured (s)", 12),
        Column::left("Started", 20).detail(),
    ]);
    for (name, side) in [("storage", &c.storage), ("database", &c.database)] {
        let r = &side.result;
        runs.row(vec![
            name.into(),
            side.run_id.map_or("-".into(), |id| id.to_string()).into(),
            format!("{} ({})", r.test, r.submission_label()).into(),
            r.config.sessions.to_string().into(),
            side.event.as_deref().unwrap_or("-").into(),
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
    for f in &c.figures {
        t.row(vec![
            f.figure.as_str().into(),
            cell(&f.figure, f.storage).into(),
            cell(&f.figure, f.database).into(),
            ratio(f.database, f.storage).into(),
        ]);
    }
    let mut side = Section::new("side-by-side", "The storage gives, the database gets")
        .with(Block::Table(t))
        .with(Block::Note(
            "Ratio: the database's figure over the storage's (same sessions, size class and depth, same file system). The database's blocks, waits and commits are its own counters over the measured window; its statements have no storage twin: the gap between a statement and its reads is in the findings.".into(),
        ));
    if let Some(shape) = &c.storage_shape {
        side.push(Block::Note(format!("The storage side ran {shape}.")));
    }
    for caution in &c.table_cautions {
        side.push(Block::Caution(caution.clone()));
    }
    sections.push(side);
    let mut found = Section::new("findings", "Findings");
    for f in &c.findings {
        found.push(if f.level == "caution" {
            Block::Caution(f.text.clone())
        } else {
            Block::Note(f.text.clone())
        });
    }
    sections.push(found);
    if let Some(seen) = seen(database) {
        sections.extend(seen.sections);
    }
    Report {
        title: format!(
            "dbio {} — {} {} ({}): the storage beside the database",
            database.dbio_version,
            c.command,
            storage.test,
            storage.submission_label()
        ),
        sections,
    }
}

/// The report of two runs (what [`report`] makes of their [`compared`]).
pub fn compare_report(storage: &RunResult, database: &RunResult) -> Report {
    report(&compared(
        "pg compare",
        (storage, Path::new("")),
        (database, Path::new("")),
    ))
}

/// Where the plain test keeps its data set: under `--out`, the file system the throwaway
/// server's data directory lives on (it is made in the run directory).
pub const STORAGE_DIR: &str = "dbio-compare-data";

/// Whose shapes the storage side `r` ran, in words (none: the plain test's own, Oracle's).
fn shape_said(r: &RunResult) -> Option<String> {
    let like = r.config.like.as_deref()?;
    let mut s = format!(
        "{}'s I/O shapes (--like {like} --io-mode {}",
        crate::workload::event::Like::parse(like).map_or(like, |l| l.database()),
        r.config.io_mode
    );
    if let Some(on) = r.config.doublewrite {
        s.push_str(if on {
            " --doublewrite on"
        } else {
            " --doublewrite off"
        });
    }
    s.push_str(", as the server ran)");
    Some(s)
}

/// `dbio <db> run` as a function, given the directory its run directory goes in.
pub type RunDb<'a> =
    &'a dyn Fn(&RunArgs, Option<Arc<crate::safety::fs::Dir>>) -> Result<RunOutcome>;

/// Both runs of a compare, and the compare.
pub struct Done {
    pub database: RunOutcome,
    pub storage: RunOutcome,
    pub compared: Compared,
    /// The compare's directory (its runs' directories are in it).
    pub dir: std::path::PathBuf,
}

/// Runs the database test (`run_db`: `dbio <db> run` as a function, given the directory to
/// make its run directory in), then the plain test on the file system of its data
/// directory, both in one compare directory, and compares them. The plain test's
/// arguments are checked before the database test starts, so a refusal comes before
/// anything is created.
pub fn compare_runs(
    a: &RunArgs,
    (command, page, like): (&str, u64, crate::workload::event::Like),
    stop: &Arc<AtomicBool>,
    run_db: RunDb,
) -> Result<Done> {
    // Checked with the shapes' defaults; run with the server's settings (see `both`).
    let shape = super::StorageShape {
        like,
        ..super::StorageShape::default()
    };
    let plain = super::shape::storage_args(a, &a.out.join(STORAGE_DIR), page, &shape)?;
    let cfg = crate::options::check::run_config(&plain)?;
    let test = a.test.map_or("", |t| t.name());
    let started_at = crate::sys::utc_now_rfc3339();
    let tail = format!(
        "{command}-compare_{test}_{}",
        if a.sync { "sync" } else { "async" }
    );
    let place = crate::report::RunPlace::make(&a.out, None, &started_at, &tail, DIR_KIND)?;
    let done = both(a, (&cfg, command, page), stop, run_db, &place);
    match &done {
        Ok(_) => place.finish(),
        Err(_) => {
            place.close();
        }
    }
    done
}

fn both(
    a: &RunArgs,
    (checked, command, page): (&crate::options::RunConfig, &str, u64),
    stop: &Arc<AtomicBool>,
    run_db: RunDb,
    place: &crate::report::RunPlace,
) -> Result<Done> {
    let database = run_db(a, Some(place.dir.clone()))?;
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(Error::Interrupted(
            "interrupted after the database's run; the storage's test was not run".into(),
        ));
    }
    // The storage side issues the database's shapes as the server ran them (its flush
    // method, its doublewrite), now that the server said.
    let shape = seen(&database.result)
        .map(|s| s.storage)
        .unwrap_or_default();
    let mut shape_cautions = shape.cautions.clone();
    let server_cfg = super::shape::storage_args(a, &a.out.join(STORAGE_DIR), page, &shape)
        .and_then(|p| crate::options::check::run_config(&p));
    let cfg = match &server_cfg {
        Ok(c) => c,
        Err(e) => {
            shape_cautions.push(format!(
                "the storage side ran the shapes' defaults, not the server's settings: {e}"
            ));
            checked
        }
    };
    let mut pre = crate::options::environment::check(cfg)?;
    pre.out = Some(place.dir.clone());
    let storage = crate::run::run(cfg, &pre, stop, &|_| {})?;
    let mut compared = compared(
        &format!("{command} compare"),
        (&storage.result, &storage.run_dir),
        (&database.result, &database.run_dir),
    );
    let data_dir = seen(&database.result)
        .and_then(|s| s.data_directory)
        .map(std::path::PathBuf::from);
    if let Some(caution) = elsewhere(&cfg.dataset.target, data_dir.as_deref()) {
        compared.table_cautions.push(caution);
    }
    compared.table_cautions.extend(shape_cautions);
    Ok(Done {
        database,
        storage,
        compared,
        dir: place.path().to_path_buf(),
    })
}

/// Writes `compare.json` and `summary.txt` into the compare's directory `dir` (again, once
/// the store gave the ids).
pub fn write(dir: &Path, c: &Compared) -> Result<()> {
    let d = crate::safety::fs::Dir::open(dir)
        .map_err(|e| Error::io("cannot open the compare's directory", dir, &e))?;
    let json = serde_json::to_string_pretty(c)
        .map_err(|e| Error::other(format!("cannot serialize the compare: {e}")))?;
    let text = crate::report::summary::text(&report(c));
    for (name, body) in COMPARE_DIR_FILES.iter().zip([json + "\n", text]) {
        crate::report::write_file(&d, name, &body, true)?;
    }
    Ok(())
}

/// The compares recorded in the store, as `dbio runs` lists them after the runs.
pub fn listing(compares: &[crate::store::CompareListing]) -> Report {
    Report {
        title: COMPARES.into(),
        sections: vec![listing_section(compares).level(Level::Lead)],
    }
}

/// The title of the compares' listing.
const COMPARES: &str = "Compares through a database (dbio show c<ID>)";

/// The compares as a section of their own, after the runs of `dbio runs`.
pub fn listing_section(compares: &[crate::store::CompareListing]) -> Section {
    let mut t = Table::new(vec![
        Column::right("ID", 5),
        Column::left("Started", 20),
        Column::left("Compare", 28),
        Column::right("Storage run", 11),
        Column::right("Database run", 12),
    ]);
    let id = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
    for c in compares {
        let r = &c.record;
        t.row(vec![
            format!("c{}", c.id).into(),
            r.started_at.as_str().into(),
            format!("{} {} ({})", r.command, r.test, r.submission).into(),
            id(r.storage_run_id).into(),
            id(r.database_run_id).into(),
        ]);
    }
    Section::new("compares", COMPARES).with(Block::Table(t))
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
        let mut database = run_result(3, &["prefetched batch"], false);
        database.test = "pg read-iops".into();
        let s = &storage.events[0];
        let (s_iops, s_mean) = (s.iops, s.latency_us.mean);
        let e = &mut database.events[0];
        // One statement reads 24 blocks: 0.37× the storage's blocks/s.
        e.iops = s_iops * 0.37 / 24.0;
        e.mib_per_s = s.mib_per_s * 0.37;
        e.latency_us.mean = s_mean * 30.0;
        database.pg = Some(PgSection {
            interval_s: 2.0,
            io: vec![crate::report::result_pg::PgIo {
                backend_type: "client backend".into(),
                object: "relation".into(),
                op: "read".into(),
                ops: (s_iops * 0.37 * 2.0) as u64,
                ops_per_s: s_iops * 0.37,
                mib_per_s: Some(s.mib_per_s * 0.37),
                mean_wait_ms: Some(s_mean * 1.5 / 1000.0),
                ..Default::default()
            }],
            deltas: [("pg_stat_database.blks_hit".to_string(), 100.0)].into(),
            findings: vec!["index lookups are always synchronous in PostgreSQL".into()],
            cautions: vec!["Reads averaged 8.3 µs, under 50 µs".into()],
            ..PgSection::default()
        });
        (storage, database)
    }

    fn row_of(text: &str, label: &str) -> String {
        (text.lines())
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {text}"))
            .to_string()
    }

    #[test]
    fn blocks_with_blocks_waits_with_waits_and_the_statements_apart() {
        let (storage, database) = pair();
        let report = compare_report(&storage, &database);
        let text = crate::report::summary::text(&report);
        // The database's own blocks against the storage's, not its 24-block statements.
        assert!(row_of(&text, "Blocks read/s").ends_with("0.370×"), "{text}");
        assert!(
            row_of(&text, "Read wait, PG's timing (µs)").ends_with("1.500×"),
            "{text}"
        );
        // The statements have no storage twin: no ratio.
        let st = row_of(&text, "Statements/s: prefetched batch");
        assert!(st.trim_end().ends_with('-'), "{st}");
        assert!(!text.contains("IOPS"), "{text}");
        assert!(
            text.contains("PostgreSQL read") && text.contains("0.37× the storage's"),
            "{text}"
        );
        // The gap: 24 blocks per statement at their wait, the hits, the rest.
        assert!(
            text.contains("one prefetched batch took")
                && text.contains("24.00 blocks read per statement"),
            "{text}"
        );
        assert!(!text.contains("outside the read"), "{text}");
        assert!(text.contains("index lookups are always synchronous in PostgreSQL"));
        assert!(text.contains("Reads averaged 8.3 µs"));
        // The HTML of the same report carries the same table.
        let html = crate::report::html::page(&report);
        assert!(html.contains("Database gets") && html.contains("0.370×"));
    }

    #[test]
    fn a_write_test_has_no_read_rows_and_busy_cpus_are_said() {
        let (mut storage, mut database) = pair();
        storage.test = "write-iops".into();
        database.test = "pg write-iops".into();
        database.events[0].name = "row update".into();
        database.os = Some(crate::measure::os::OsStats {
            cpu: vec![crate::measure::os::CpuSecond {
                t: 1,
                cpu: "all".into(),
                idle_pct: 5.0,
                ..Default::default()
            }],
            ..Default::default()
        });
        let text = crate::report::summary::text(&compare_report(&storage, &database));
        assert!(!text.contains("Read wait"), "{text}");
        assert!(!text.contains("Blocks read"), "{text}");
        assert!(!text.contains("blocks read per statement"), "{text}");
        assert!(text.contains("Blocks written/s"), "{text}");
        assert!(text.contains("the CPUs were 95% busy"), "{text}");
    }

    #[test]
    fn a_copy_is_compared_by_its_extends_and_write_backs_together() {
        let (_, mut database) = pair();
        let mut storage = run_result(3, &["DataFileExtend", "DataFileWrite"], false);
        storage.test = "write-mbps".into();
        storage.config.like = Some("postgres".into());
        storage.events[0].mib_per_s = 100.0;
        storage.events[1].mib_per_s = 60.0;
        database.test = "pg write-mbps".into();
        database.events[0].name = "bulk load chunk".into();
        let io = |op: &str, mib: f64| crate::report::result_pg::PgIo {
            backend_type: "client backend".into(),
            object: "relation".into(),
            op: op.into(),
            ops: 1,
            ops_per_s: mib * 128.0,
            mib_per_s: Some(mib),
            ..Default::default()
        };
        database.pg.as_mut().unwrap().io = vec![io("extend", 80.0), io("write", 40.0)];
        let text = crate::report::summary::text(&compare_report(&storage, &database));
        // 120 MiB/s of PostgreSQL's extends and writes against the storage's 100 + 60.
        assert!(row_of(&text, "MiB/s written").ends_with("0.750×"), "{text}");
        assert!(
            text.contains("(DataFileExtend and DataFileWrite together)"),
            "{text}"
        );
        assert!(!text.contains("Blocks read"), "{text}");
    }

    #[test]
    fn the_kernels_read_ahead_serving_a_scan_is_named() {
        let (mut storage, mut database) = pair();
        storage.test = "read-mbps".into();
        database.config.block_size = 8192;
        let disk = |t| crate::measure::os::DiskSecond {
            t,
            device: "sda".into(),
            r_s: 100.0,
            rmib_s: 50.0,
            ..Default::default()
        };
        database.os = Some(crate::measure::os::OsStats {
            devices: vec![disk(1), disk(2)],
            ..Default::default()
        });
        let text = crate::report::summary::text(&compare_report(&storage, &database));
        assert!(
            text.contains("the kernel's read-ahead served the scan")
                && text.contains("the device read 512.0 KiB per request (100/s)"),
            "{text}"
        );
        assert!(row_of(&text, "MiB/s read").ends_with("0.370×"), "{text}");
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
        assert!(!text.contains("PostgreSQL read"), "{text}");
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
}
