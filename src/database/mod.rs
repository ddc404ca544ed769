//! Tests through a real database (`dbio pg …`, and the next database's command): the same
//! tests as `dbio run`, issued as SQL by the database's own sessions, measured by the same
//! window ([`crate::run::window`]), assembled into the same result, written into the same
//! run directory and recorded in the same store.
//!
//! What is shared by every database lives here: the driver ([`run`]), the shapes and the
//! table that maps them to plain dbio tests ([`shape`]), what the run asked for
//! ([`Asked`]), how the page cache was kept out ([`CacheControl`]). What a database adds is
//! its adapter, one folder each, implementing [`Database`]: [`pg`] (PostgreSQL) is the
//! first. ARCHITECTURE.md ("Add a database") is the how-to.

pub mod compare;
pub mod mariadb;
pub mod pg;
pub mod shape;
pub mod throwaway;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};
use crate::options::RunArgs;
use crate::report::{RunResult, result as rj};
use crate::run::RunOutcome;
use crate::run::assemble::{Counts, Described};
use crate::run::requester::{Lost, Observer, Requester};
use crate::run::window::{Crew, Measurement, WindowPlan};
use crate::units::size_label;
use crate::warnings::Warning;

pub use shape::{Shape, ShapeRow};

/// How the operating system's page cache was kept out of the reads.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheControl {
    /// The server reads with direct I/O (PostgreSQL's `debug_io_direct=data`).
    DirectIo,
    /// dbio dropped the table's pages with posix_fadvise(DONTNEED) while the test ran.
    Fadvise,
    /// Not kept out, and why.
    NotControlled(String),
    /// Kept out as the adapter says, in its own words: how (`describe`) and result.json's
    /// `config.io_mode`.
    Said { describe: String, io_mode: String },
}

impl CacheControl {
    pub fn describe(&self) -> String {
        match self {
            CacheControl::DirectIo => "direct I/O (debug_io_direct=data)".into(),
            CacheControl::Fadvise => {
                "the table's pages dropped from the page cache with posix_fadvise(DONTNEED)".into()
            }
            CacheControl::NotControlled(why) => format!("not controlled: {why}"),
            CacheControl::Said { describe, .. } => describe.clone(),
        }
    }

    /// result.json's `config.io_mode`.
    pub fn io_mode(&self) -> String {
        match self {
            CacheControl::DirectIo => "direct (debug_io_direct=data)".into(),
            CacheControl::Fadvise => "buffered, page cache dropped (posix_fadvise)".into(),
            CacheControl::NotControlled(why) => format!("buffered ({why})"),
            CacheControl::Said { io_mode, .. } => io_mode.clone(),
        }
    }
}

/// What the run asked for, so the findings can tell what was asked from what was done.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The test (`read-iops`, `redo`, ...).
    pub test: String,
    pub asynchronous: bool,
    pub depth: u32,
    pub sessions: u32,
    /// The session settings each session made: (name, value).
    pub session_set: Vec<(String, String)>,
    /// How the page cache was kept out.
    pub cache: CacheControl,
    /// The sessions' own mean statement latency (µs), when the test reads.
    pub mean_read_us: Option<f64>,
    /// The load goes on after sampling stops (a server dbio only watches): the statistics
    /// are then rates over the time between the two snapshots, the flush pause included.
    /// Otherwise the load ended with the sampling, and the pause only lets its counters in.
    pub load_continues: bool,
}

/// One test's plan through a database, shared by its sessions: the shape and its sizes.
/// The database's private objects (schema, database) are the adapter's.
#[derive(Debug, Clone)]
pub struct Spec {
    pub shape: Shape,
    /// Rows (= pages) of the table the reading and updating shapes work on.
    pub rows: u64,
    pub sessions: u32,
    /// How far ahead a batch reads (`--depth`).
    pub depth: u32,
    /// Ids per batch.
    pub batch: u32,
    /// Pages a session's bulk table may grow to before it is emptied.
    pub bulk_rows: u64,
    /// The database's page size.
    pub page: u64,
    pub seed: u64,
}

/// Pages per scan chunk and per bulk-load chunk (1 MiB of 8 KiB pages).
pub const CHUNK_PAGES: u64 = 128;

/// Ids one prefetched batch reads, at every `--depth`.
pub const BATCH: u32 = 32;

impl Spec {
    /// Bytes one timed statement stands for.
    pub fn request_bytes(&self) -> u64 {
        match self.shape {
            Shape::Lookup | Shape::Update => self.page,
            Shape::Batch => u64::from(self.batch) * self.page,
            Shape::Scan | Shape::Copy => CHUNK_PAGES * self.page,
            Shape::Commit => 0,
        }
    }
}

/// Work that goes on beside the sessions until the window is over, given the flag that
/// ends it.
pub type Alongside = Box<dyn FnOnce(&AtomicBool) + Send>;

/// What loading found: how the page cache is kept out, and what the result should say of
/// the preparation.
pub struct Loaded {
    pub cache: CacheControl,
    /// Notes for the result's warnings (a checkpoint not made on a user's server, ...).
    pub notes: Vec<String>,
    /// Work that goes on beside the sessions until the window is over (dropping the
    /// table's pages from the page cache): given the flag that ends it.
    pub alongside: Option<Alongside>,
}

/// The facts of a run through a database that its result shows (result.json's `config`
/// and `dataset`), as the adapter knows them after loading.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Where the data is (a throwaway server's data directory, or the server's address).
    pub target: String,
    /// "server: PostgreSQL 15.8", then the session settings and the settings that matter,
    /// one line each (result.json's `config.open_flags`).
    pub settings: Vec<String>,
    /// The table the reading shapes read (`dbio_<run id>.blocks`).
    pub table: String,
    /// How it was filled (`INSERT ... generate_series`).
    pub fill_method: String,
    /// The server's data directory, when it is on this machine and known: the block
    /// devices under it are sampled over the window (the result's `os` section).
    pub data_directory: Option<std::path::PathBuf>,
}

/// A database: what it adds to a test. The driver ([`run`]) calls its methods in this
/// order, each once, and undoes what it made on every way out by dropping it:
///
/// 1. [`Database::check`] — everything the input and the server decide, *before anything
///    is created*: which server (a throwaway one started from binaries, or an existing one
///    by URL), reachable, the version supported, the privileges the run needs. Bad input is
///    `Error::usage` (exit 2), naming the option.
/// 2. [`Database::open`] — start the throwaway server under the run directory (as an
///    unprivileged user, listening on a private socket only), or connect to the user's;
///    then make the run's private objects (PostgreSQL: schema `dbio_<run id>`; MariaDB:
///    database `dbio_<run id>`), marked as dbio's and held by the run's lock, noted as
///    leftovers before they are made (`safety::cleanup`).
/// 3. [`Database::load`] — load the data the shape needs, make it cold (restart a
///    throwaway server; never a server-wide act on a user's server — say so instead), and
///    keep the operating system's cache out (direct I/O, or pages dropped while the test
///    runs), saying how ([`CacheControl`]).
/// 4. [`Database::observer`] — the connection that watches the server: it samples the
///    waits (`pg_stat_activity`; `performance_schema`) and reads the statistics
///    (`pg_stat_*`; `SHOW GLOBAL STATUS`) at the measured window's two edges
///    ([`Observer`]), then puts its section into the result ([`DbObserver::finish`]). It
///    only reads: no setting changed, no statistics reset. Keep the database's own
///    counters apart from the sessions' timed statements.
/// 5. [`Database::session`] — one session's connection, settings and prepared statement
///    loop for the shape ([`Requester`]): it times each statement into dbio's recorder.
/// 6. [`Database::close`] — drop the private objects, then stop the throwaway server; a
///    failure is a note (what is left, and the command that removes it), never a lost
///    result.
///
/// It supplies names and facts ([`Database::event`], [`Database::facts`],
/// [`Database::session_settings`]); the command line, the window, the result, the compare
/// table and the report sections are shared.
pub trait Database {
    /// The command (`pg`): the run directory is `<stamp>_<command>-<test>_...`, the result's
    /// test `<command> <test>`.
    fn command(&self) -> &'static str;
    /// result.json's `config.engine` and `dataset.kind` (`postgresql`).
    fn engine(&self) -> &'static str;
    /// The database's page size, in bytes (PostgreSQL 8 KiB, InnoDB 16 KiB).
    fn page(&self) -> u64;
    /// Step 1: checks, before anything is created.
    fn check(&mut self, a: &RunArgs) -> Result<()>;
    /// Step 2: the server started or connected, the private objects made. `run_dir` is the
    /// run's directory (a throwaway server lives under it); `run_id` names the objects.
    fn open(&mut self, a: &RunArgs, run_dir: &std::path::Path, run_id: &str) -> Result<()>;
    /// Step 3: the data loaded and cold, the cache kept out.
    fn load(&mut self, spec: &Spec, stop: &AtomicBool) -> Result<Loaded>;
    /// Step 4: the observer, connected (it starts at the window's start).
    fn observer(&mut self) -> Result<Box<dyn DbObserver>>;
    /// Step 5: session `id` of `spec`, connected and prepared.
    fn session(&mut self, spec: &Spec, id: u32) -> Result<Box<dyn Requester>>;
    /// The wait event the shape's statements are named after (PostgreSQL 15's
    /// `DataFileRead`; on 18 with io workers `AioIoCompletion`).
    fn event(&self, shape: Shape) -> &'static str;
    /// The session settings each session makes for `spec` (never a server setting).
    fn session_settings(&self, spec: &Spec) -> Vec<(String, String)>;
    /// What the result shows of the server and the data.
    fn facts(&self) -> Facts;
    /// Step 6: private objects dropped, the server stopped. Returns notes for what could
    /// not be undone.
    fn close(&mut self) -> Vec<String>;
}

/// What watches a database over the measured window.
pub trait DbObserver: Observer + Send {
    /// After the window and the sessions' end: the last statistics, the findings, and the
    /// database's section put into `result` (PostgreSQL: `result.pg`).
    fn finish(self: Box<Self>, asked: &Asked, result: &mut RunResult) -> Result<()>;
}

/// What the database itself saw, as its adapter reads it from the database side's result
/// (PostgreSQL: its `pg` section): the one place the compare meets a database's own
/// section.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// The database's name in the report ("PostgreSQL").
    pub name: &'static str,
    /// Its short name in a figure's label ("PG", "InnoDB").
    pub short: &'static str,
    /// The mean wait of the sessions' data file reads by the database's own timing (µs).
    pub read_wait_us: Option<f64>,
    /// The database's own counters over the measured window, per second: data file blocks
    /// read and written (pages added included), by every process of the server, and
    /// pages found in its own buffer cache.
    pub reads_per_s: Option<f64>,
    pub read_mib_per_s: Option<f64>,
    pub writes_per_s: Option<f64>,
    pub write_mib_per_s: Option<f64>,
    pub hits_per_s: Option<f64>,
    pub commits_per_s: Option<f64>,
    /// The mean wait of a log flush by the database's own timing (µs).
    pub flush_wait_us: Option<f64>,
    pub cautions: Vec<String>,
    pub findings: Vec<String>,
    /// Its data directory, when it showed it.
    pub data_directory: Option<String>,
    /// The report sections of what it saw.
    pub sections: Vec<crate::report::sections::Section>,
    /// How a compare's storage side issues this database's I/O, as the server ran.
    pub storage: StorageShape,
}

pub use shape::StorageShape;

/// What the database saw in a run's result (for a compare), read by the adapter whose
/// section the result carries.
pub fn seen(r: &RunResult) -> Option<Seen> {
    pg::seen(r).or_else(|| mariadb::seen(r))
}

/// The table size when `--size` is not given.
const DEFAULT_SIZE: u64 = 1 << 30;
/// The smallest table, in pages.
const MIN_PAGES: u64 = 1024;

/// `<db> run TEST`: a test through database `db`: checked before anything is created,
/// then run in a new run directory with the same window, result and exit status as any
/// run; the outcome is printed and recorded by the caller like a `dbio run`'s.
///
/// `held`: the directory its run directory goes in (a compare's), else `--out`.
pub fn run(
    db: &mut dyn Database,
    a: &RunArgs,
    held: Option<Arc<crate::safety::fs::Dir>>,
    stop: &Arc<AtomicBool>,
) -> Result<RunOutcome> {
    let test = a
        .test
        .ok_or_else(|| Error::usage("TEST: one of the tests is needed"))?;
    let row = shape::row(test, a.sync).ok_or_else(|| {
        Error::usage(format!(
            "TEST {}: not a test through a database",
            test.name()
        ))
    })?;
    let size = a.size.unwrap_or(DEFAULT_SIZE);
    let min = MIN_PAGES * db.page();
    if size < min {
        return Err(Error::usage(format!(
            "--size {}: the table must be at least {} ({MIN_PAGES} pages)",
            size_label(size),
            size_label(min)
        )));
    }
    db.check(a)?;
    crate::clock::calibrate();
    let started_at = crate::sys::utc_now_rfc3339();
    let test_dir = format!("{}-{}", db.command(), test.name());
    // The directory says sync or async as asked; a lookup is always sync, a batch async.
    let submission = match row.sync {
        Some(true) => "sync",
        Some(false) => "async",
        None if a.sync => "sync",
        None => "async",
    };
    let tail = crate::run::dir_name(
        &test_dir,
        submission,
        None,
        a.sessions as usize,
        size,
        a.duration,
    );
    let kind = format!("{} {}", db.command(), test.name());
    let place = crate::run::Place {
        out: &a.out,
        held,
        started_at: &started_at,
        tail: &tail,
        kind: &kind,
        on_made: None,
    };
    let run_id = run_id(&started_at);
    let outcome = crate::run::in_run_dir(place, |made| {
        let mut run = Run {
            db: &mut *db,
            a,
            row,
            size,
            stop,
            started_at: &started_at,
        };
        // Absolute: the throwaway server lives under it, and runs from elsewhere.
        let result = run.measure(made.path(), &run_id);
        // Whatever happened: the private objects and the server go.
        let notes = db.close();
        let (mut result, io_error, interrupted, totals) = result?;
        result
            .warnings
            .extend(notes.into_iter().map(Warning::Setup));
        let exit = crate::run::exit_code(io_error, interrupted, &result);
        Ok(RunOutcome {
            result,
            run_dir: std::path::PathBuf::new(),
            summary: String::new(),
            exit,
            write_error: None,
            totals,
        })
    })?;
    Ok(outcome)
}

/// `<yyyymmddThhmmss>_<4 hex digits>`: the run's id, in its private objects' names.
pub fn run_id(started_at: &str) -> String {
    let stamp: String = started_at
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(15)
        .collect();
    format!("{stamp}_{:04x}", fastrand::u16(..))
}

/// One run through a database, between its run directory and its result.
struct Run<'a> {
    db: &'a mut dyn Database,
    a: &'a RunArgs,
    row: &'static ShapeRow,
    size: u64,
    stop: &'a Arc<AtomicBool>,
    started_at: &'a str,
}

/// A refusal by the server once the run has begun (the server started and accepted dbio's
/// connection, [`Database::open`]) is not bad input but a failure mid-run (exit 1, not 2):
/// the server was stopped, killed (a throwaway one while restarted after the load) or ran
/// out of connections; the address and programs given were right. For every adapter.
fn mid_run(e: Error) -> Error {
    match e {
        Error::Usage(m) => Error::other(format!(
            "{m} (mid-run: the server had started and accepted dbio's connection before)"
        )),
        e => e,
    }
}

impl Run<'_> {
    /// Server, objects, data, sessions, observer, the window, the result: returns the
    /// result, whether an I/O error (a session lost) happened, whether interrupted, and
    /// the events' totals.
    #[allow(clippy::type_complexity)]
    fn measure(
        &mut self,
        run_dir: &std::path::Path,
        run_id: &str,
    ) -> Result<(RunResult, bool, bool, Vec<crate::measure::EventTotals>)> {
        let (a, stop) = (self.a, self.stop);
        let load_started = std::time::Instant::now();
        self.db.open(a, run_dir, run_id)?;
        let spec = self.spec();
        // From here the server is up and has accepted dbio: what fails now is no bad input.
        let loaded = self.db.load(&spec, stop).map_err(mid_run)?;
        let prepare_seconds = load_started.elapsed().as_secs_f64();
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted(
                "interrupted before the run started; nothing measured".into(),
            ));
        }
        let mut observer = self.db.observer().map_err(mid_run)?;
        let sessions = (0..a.sessions)
            .map(|id| self.db.session(&spec, id))
            .collect::<Result<Vec<_>>>()
            .map_err(mid_run)?;
        // The sessions' statements are named for what they are ("index lookup"): a
        // statement is more than the wait it may include; the database's own waits,
        // reads and writes are its section's, from its own counters.
        let event = self.row.statement;
        let devices = self.devices();
        let mut m = self.window(event, sessions, &mut *observer, loaded.alongside, devices);
        let mut result = crate::run::assemble::through(
            self.described(&spec, &loaded.cache, event, loaded.notes, prepare_seconds),
            &m,
            a.duration,
        );
        // What the machine saw over the same window: its CPUs, and the devices under the
        // data directory (what the storage did for the database).
        if let Some(os) = m.os.take() {
            let (os, warning) = os.finish(Vec::new());
            result.os = Some(os);
            result.warnings.extend(warning);
        }
        let mean_read_us = (self.row.reads).then(|| result.events[0].latency_us.mean);
        page_cache_answered(&mut result, mean_read_us);
        self.observed(observer, &spec, &loaded.cache, &m, &mut result)?;
        let io_error = !m.lost.is_empty() || !m.setup_errors.is_empty();
        Ok((result, io_error, m.interrupted, m.totals))
    }

    fn spec(&self) -> Spec {
        spec_of(self.a, self.row, self.size, self.db.page())
    }

    /// The block devices under the database's data directory, (kernel name, layer), when
    /// it is on this machine.
    fn devices(&self) -> Vec<(String, String)> {
        let Some(dir) = self.db.facts().data_directory.filter(|d| d.is_dir()) else {
            return Vec::new();
        };
        let (map, _) = crate::storage::survey(&dir, Some(self.db.page()));
        map.all_devices()
            .iter()
            .map(|n| (n.name.clone(), n.layer.clone()))
            .collect()
    }

    /// The measured window, with the work that goes on beside it.
    fn window(
        &self,
        event: &'static str,
        sessions: Vec<Box<dyn Requester>>,
        observer: &mut dyn DbObserver,
        alongside: Option<Alongside>,
        os_devices: Vec<(String, String)>,
    ) -> Measurement {
        let a = self.a;
        let plan = WindowPlan {
            warmup: a.warmup,
            duration: a.duration,
            steady: None,
            events: vec![event],
            // Each statement is a wait of the session's.
            waits_are_requests: vec![true],
        };
        let over = AtomicBool::new(false);
        let display = crate::progress::Progress::line(crate::progress::wanted(a.progress, a.quiet));
        let m = std::thread::scope(|scope| {
            if let Some(work) = alongside {
                let over = &over;
                scope.spawn(move || work(over));
            }
            let m = crate::run::window::measure(
                &plan,
                Crew::Requesters(sessions),
                Some(observer as &mut dyn Observer),
                self.stop,
                &display,
                os_devices,
                &crate::run::RunHooks::default(),
            );
            over.store(true, Ordering::Relaxed);
            m
        });
        display.clear();
        m
    }

    /// What the result says of the run's configuration and data.
    fn described(
        &self,
        spec: &Spec,
        cache: &CacheControl,
        event: &'static str,
        notes: Vec<String>,
        prepare_seconds: f64,
    ) -> Described {
        let (a, row, size, db) = (self.a, self.row, self.size, &*self.db);
        let facts = db.facts();
        let mut settings = facts.settings.clone();
        let set = db.session_settings(spec);
        let at = settings.len().min(1);
        settings.splice(at..at, set.iter().map(|(n, v)| format!("SET {n} = {v}")));
        Described {
            test: format!("{} {}", db.command(), row.test.name()),
            started_at: self.started_at.to_string(),
            config: rj::RunConfigJson {
                target: facts.target.clone(),
                size_bytes: if row.reads || row.shape == Shape::Update {
                    size
                } else {
                    0
                },
                block_size: spec.page,
                files: 1,
                sessions: a.sessions as usize,
                submission: if row.shape == Shape::Batch {
                    "async"
                } else {
                    "sync"
                }
                .into(),
                io_mode: cache.io_mode(),
                engine_requested: db.engine().into(),
                engine: db.engine().into(),
                engine_reason: format!("{} sessions through SQL", a.sessions),
                engine_notes: vec![format!(
                    "each request is one {} statement, timed by its session; the I/O it waits on is the database's {}",
                    row.statement,
                    db.event(row.shape)
                )],
                // The server's own asynchronous I/O is in its section (e.g. MariaDB's
                // "aio_in_use"): dbio's sessions issue SQL, not I/O.
                engine_features: Vec::new(),
                open_flags: settings,
                duration_s: a.duration.as_secs_f64(),
                warmup_s: a.warmup.as_secs_f64(),
                batch: if row.shape == Shape::Batch {
                    spec.batch as usize
                } else {
                    1
                },
                like: None,
                doublewrite: None,
                keep_inflight: false,
                depth: a.depth as usize,
                mbrc: if row.shape == Shape::Scan {
                    CHUNK_PAGES as usize
                } else {
                    1
                },
                request_bytes: spec.request_bytes(),
                seed: spec.seed,
                dio_mem_align: 0,
                dio_offset_align: 0,
                dio_align_source: "default".into(),
                buffer_align: 0,
                clock: crate::clock::describe(),
                out: a.out.display().to_string(),
                continue_on_error: false,
                destructive: false,
                fill: db.engine().into(),
                verify: false,
                span: 1.0,
            },
            dataset: rj::DataSetJson {
                path: facts.table.clone(),
                kind: db.engine().into(),
                size_bytes: size,
                files: 1,
                block_size: spec.page,
                reused: false,
                prepare_seconds,
                fill_method: Some(facts.fill_method.clone()),
                fill: None,
                disk_bytes: size,
                region: None,
                preconditioned: None,
            },
            events: vec![event],
            counts: if row.reads {
                Counts::Reads
            } else if row.writes {
                Counts::Writes
            } else {
                Counts::Commits
            },
            warnings: notes.into_iter().map(Warning::Setup).collect(),
        }
    }

    /// What the database saw, into the result; sessions the server cut off said in words.
    fn observed(
        &self,
        observer: Box<dyn DbObserver>,
        spec: &Spec,
        cache: &CacheControl,
        m: &Measurement,
        result: &mut RunResult,
    ) -> Result<()> {
        let a = self.a;
        let asked = Asked {
            test: self.row.test.name().into(),
            asynchronous: spec.shape == Shape::Batch,
            depth: a.depth,
            sessions: a.sessions,
            session_set: self.db.session_settings(spec),
            cache: cache.clone(),
            mean_read_us: self.row.reads.then(|| result.events[0].latency_us.mean),
            load_continues: false,
        };
        let lost: Vec<&Lost> = m.lost.iter().map(|(_, l)| l).collect();
        let start = m.t0_ns;
        let mut notes: Vec<Warning> = lost_sessions(&lost, start)
            .into_iter()
            .map(Warning::Setup)
            .collect();
        // The database may have gone away, or the run stopped before its window: what was
        // measured is kept without the database's statistics.
        if m.t0_ns == 0 {
            notes.push(Warning::Setup(
                "no statistics of the database for this run: its measured window never started"
                    .into(),
            ));
        } else {
            match observer.finish(&asked, result) {
                Ok(()) => {}
                Err(e) if !lost.is_empty() => notes.push(Warning::Setup(format!(
                    "no statistics of the database for this run: the observer's connection failed too ({e})"
                ))),
                Err(e) if m.interrupted => notes.push(Warning::Setup(format!(
                    "no statistics of the database for this run: it was interrupted ({e})"
                ))),
                Err(e) => return Err(e),
            }
        }
        result.warnings.splice(0..0, notes);
        Ok(())
    }
}

/// The plan of a test through a database: `row`'s shape on a `size`-byte table of
/// `page`-byte pages, with the run's sessions and depth.
fn spec_of(a: &RunArgs, row: &ShapeRow, size: u64, page: u64) -> Spec {
    let rows = size / page;
    Spec {
        shape: row.shape,
        rows,
        sessions: a.sessions,
        depth: a.depth,
        // --depth is how far ahead a session reads (its concurrency), never how much one
        // statement reads: the statement is the same at every depth.
        batch: BATCH,
        bulk_rows: (rows / u64::from(a.sessions)).max(CHUNK_PAGES),
        page,
        seed: fastrand::u64(..),
    }
}

/// A read test whose statements averaged under 50 µs was answered by the page cache.
fn page_cache_answered(result: &mut RunResult, mean_read_us: Option<f64>) {
    if let Some(mean) = mean_read_us
        && result.events[0].requests > 0
        && mean < 50.0
    {
        result.warnings.push(Warning::Setup(format!(
            "reads averaged {mean:.1} µs: the page cache answered, not the storage"
        )));
    }
}

/// What the server did to the sessions it cut off: one line for the connections it closed
/// ("the server closed 4 sessions' connections at 12.3 s: terminating connection due to
/// administrator command" — the server's own words when any session heard them, the time
/// from the start of the run to the first), one per reason for sessions that failed
/// otherwise.
fn lost_sessions(lost: &[&Lost], t0: u64) -> Vec<String> {
    let at = |fs: &[&Lost]| {
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
    let closed: Vec<&Lost> = lost.iter().copied().filter(|f| f.closed).collect();
    if !closed.is_empty() {
        let said: Vec<&Lost> = closed.iter().copied().filter(|f| f.server_said).collect();
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
    let mut others: Vec<(&str, Vec<&Lost>)> = Vec::new();
    for f in lost.iter().copied().filter(|f| !f.closed) {
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

/// What a database's `clean` (`dbio pg clean`, `dbio mysql clean`) did, as `--json` prints
/// it (`dbio.pg-clean.v1`, `dbio.mysql-clean.v1`; docs/outputs.md).
#[derive(serde::Serialize)]
struct Cleaned<'a> {
    schema: &'static str,
    /// The server, as `user@host:port/database` (never a password).
    server: &'a str,
    /// What was dropped: schemas (PostgreSQL) or databases (MariaDB/MySQL).
    dropped: &'a [String],
    /// What was left, and why.
    left: Vec<LeftOne<'a>>,
}

#[derive(serde::Serialize)]
struct LeftOne<'a> {
    name: &'a str,
    why: &'a str,
}

/// Prints what a database's `clean` did through the one output: a line a dropped or left
/// `what` (`schema`, `database`), or that there was none at `server`; `--json` the same
/// as `schema`.
pub fn print_cleaned(
    out: crate::report::Output,
    schema: &'static str,
    what: &str,
    server: &str,
    dropped: &[String],
    left: &[(String, String)],
) -> Result<()> {
    let mut lines: Vec<String> = (dropped.iter())
        .map(|name| format!("dropped {what} {name}"))
        .collect();
    lines.extend((left.iter()).map(|(name, why)| format!("left {what} {name}: {why}")));
    if lines.is_empty() {
        lines.push(format!("no dbio {what} at {server}"));
    }
    let json = Cleaned {
        schema,
        server,
        dropped,
        left: (left.iter())
            .map(|(name, why)| LeftOne { name, why })
            .collect(),
    };
    out.emit(&crate::report::Report::lines(lines), &json)
}

/// A connection that holds a run's private object (PostgreSQL's schema, MariaDB's
/// database) by the server's lock named after it, and drops it only while it carries
/// dbio's mark.
pub trait Holding: Sized {
    /// This connection, if the server still has it.
    fn alive(self) -> Option<Self>;
    /// Takes the lock on `name`; false when another session holds it.
    fn try_lock(&mut self, name: &str) -> Result<bool>;
    /// Who holds the lock on `name`, in words.
    fn holder(&mut self, name: &str) -> String;
    /// Drops `name` if it carries the mark; whether there was one to drop.
    fn drop_marked(&mut self, name: &str) -> std::result::Result<bool, String>;
    /// Lets the lock on `name` go.
    fn unlock(&mut self, name: &str);
}

/// Drops a run's private object `name` (if it still carries the mark) and lets its lock
/// go: on `holder`, the connection that held it, if the server still has it; else on a new
/// one (`connect`) that takes the lock again (the old one's went with it). Dropped, its
/// leftover `record` is undone; what could not be dropped stays a noted leftover.
pub fn drop_private<C: Holding>(
    name: &str,
    holder: Option<C>,
    record: &mut Option<crate::safety::cleanup::Recorded>,
    connect: impl FnOnce() -> Result<C>,
) -> Result<()> {
    let mut c = match holder.and_then(C::alive) {
        Some(c) => c,
        None => {
            let mut c = connect()?;
            if !c.try_lock(name)? {
                return Err(Error::other(format!(
                    "it is held by another session ({})",
                    c.holder(name)
                )));
            }
            c
        }
    };
    let r = c.drop_marked(name);
    c.unlock(name);
    match r {
        Ok(_) => {
            if let Some(rec) = record.take() {
                rec.undone();
            }
            Ok(())
        }
        Err(why) => Err(Error::other(why)),
    }
}

/// Samples a server's waits at `hz` from `start` until `stop` is set: `sample(taken)` at
/// each tick, the time the sample was taken. Behind (a slow sample, a busy machine): the
/// next tick after now, no burst. A failed sample (its error's text) ends sampling.
/// Returns the seconds sampled and the failure.
pub fn sample_until(
    start: std::time::Instant,
    hz: u32,
    stop: &AtomicBool,
    mut sample: impl FnMut(std::time::Instant) -> std::result::Result<(), String>,
) -> (f64, Option<String>) {
    let period = std::time::Duration::from_nanos(1_000_000_000 / u64::from(hz.max(1)));
    let mut next = start;
    let mut failure = None;
    while !stop.load(Ordering::Relaxed) {
        let now = std::time::Instant::now();
        if now < next {
            std::thread::sleep(next - now);
        }
        let taken = std::time::Instant::now();
        next += period;
        if next < taken {
            let behind = (taken - next).as_nanos() / period.as_nanos() + 1;
            next += period * behind as u32;
        }
        if let Err(e) = sample(taken) {
            failure = Some(e);
            break;
        }
    }
    (start.elapsed().as_secs_f64(), failure)
}

/// Which database command a [`DbRun`] is the arguments of: its row in the options table.
pub trait RunCommand {
    /// `options::Command::PgRun`, `options::Command::MysqlRun`, ...
    const COMMAND: crate::options::Command;
}

/// `dbio <database> run|compare TEST [options]`: the test, and the options of a run the
/// database's command takes (the table's COMMANDS says which, and how), for every database.
#[derive(Debug, Clone)]
pub struct DbRun<C>(pub RunArgs, std::marker::PhantomData<C>);

impl<C: RunCommand> clap::Args for DbRun<C> {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let tests: Vec<&'static str> = (shape::tests().iter()).map(|t| t.name()).collect();
        let cmd = cmd.arg(
            clap::Arg::new("test")
                .value_name("TEST")
                .help("The test to run through the database.")
                .value_parser(clap::builder::PossibleValuesParser::new(tests))
                .required(true),
        );
        // The options of a run, some said of a run through the database (the table's
        // COMMANDS says which, and how).
        crate::options::cli::augment(cmd, C::COMMAND)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl<C: RunCommand> clap::FromArgMatches for DbRun<C> {
    fn from_arg_matches(m: &clap::ArgMatches) -> std::result::Result<Self, clap::Error> {
        let test = m
            .get_one::<String>("test")
            .map(|t| crate::workload::Test::from_name(t).expect("a possible value"));
        let mut a = RunArgs::defaults(test);
        crate::options::cli::read(m, C::COMMAND, &mut a)?;
        Ok(DbRun(a, std::marker::PhantomData))
    }

    fn update_from_arg_matches(
        &mut self,
        m: &clap::ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_changes_how_far_ahead_a_session_reads_not_the_statement() {
        let row = shape::row(crate::workload::Test::ReadIops, false).unwrap();
        let mut a = RunArgs::defaults(Some(crate::workload::Test::ReadIops));
        let specs: Vec<Spec> = [1, 8, 64, 256]
            .iter()
            .map(|&d| {
                a.depth = d;
                spec_of(&a, row, 64 << 20, 8192)
            })
            .collect();
        for s in &specs {
            assert_eq!(s.batch, specs[0].batch, "depth {}", s.depth);
            assert_eq!(s.request_bytes(), specs[0].request_bytes());
        }
        assert_eq!(specs[3].depth, 256);
        // The depth is the sessions' prefetch distance.
        let set = pg::workloads::session_set(&specs[3]);
        assert!(set.contains(&("effective_io_concurrency".into(), "256".into())));
    }

    #[test]
    fn sessions_cut_off_are_said_once_per_reason_from_the_first() {
        let f = |at_ns: u64, text: &str, closed: bool, server_said: bool| Lost {
            at_ns,
            text: text.into(),
            closed,
            server_said,
        };
        let admin = "terminating connection due to administrator command";
        let all = [
            f(3_500_000_000, admin, true, true),
            // Another session read the end of its connection before the message.
            f(3_400_000_000, "connection closed", true, false),
            f(9_000_000_000, "deadlock detected", false, true),
        ];
        let lines = lost_sessions(&all.iter().collect::<Vec<_>>(), 1_000_000_000);
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
        let one = f(1_500_000_000, "connection closed", true, false);
        let lines = lost_sessions(&[&one], 0);
        assert!(
            lines[0].starts_with(
                "the server closed 1 session's connection at 1.5 s: connection closed"
            ),
            "{}",
            lines[0]
        );
    }
}
