//! What the database saw while a test ran: an [`Observer`] on a connection of its own reads
//! the server's facts, snapshots PostgreSQL's cumulative I/O statistics before and after,
//! samples `pg_stat_activity` in between, and turns it all into the result's `pg` section
//! with findings in words. It only reads: no setting changed, no statistics reset.

pub mod command;
pub mod facts;
pub mod findings;
pub mod sampler;
pub mod stats;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

pub use crate::report::result_pg::PgSection;
pub use crate::report::result_pg::PgServer as ServerFacts;
pub use command::{ObserveArgs, observe};

/// The sampler's rate: at least 100 a second (the wait profile's resolution), at most 1,000
/// (each sample copies the server's whole backend-status array).
pub const MIN_HZ: u32 = 100;
pub const MAX_HZ: u32 = 1000;

/// How long the backends get to flush their statistics before the last snapshot (they
/// flush when idle, at most once a second, and when they exit).
const FLUSH_PAUSE: Duration = Duration::from_millis(1100);

/// What the run asked for (the same for every database).
pub type RunContext = crate::database::Asked;
pub use crate::database::CacheControl;

/// A PostgreSQL error as one line.
pub(crate) fn pg_error(what: &str, e: &postgres::Error) -> Error {
    let text = match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    };
    Error::other(format!(
        "PostgreSQL: {what}: {}",
        crate::safety::secret::redact(&text.replace('\n', " "))
    ))
}

/// Reads the server's facts: version, io_method and the values this build allows, and the
/// settings that shape I/O.
pub fn server_facts(client: &mut postgres::Client) -> Result<ServerFacts> {
    facts::read(client).map_err(|e| pg_error("reading the server's settings", &e))
}

type Sampled = (postgres::Client, sampler::Tally, f64, Option<String>);

/// The meeting point of a run's sessions and its observer at the measured window's start.
/// PostgreSQL's backends publish their counters at most once a second (and when idle or
/// exiting): read at the edge as they stand, the first snapshot would leave up to a second
/// of each session's warm-up to be counted in the window. So each session, as the window
/// starts, has its backend flush its counters (`pg_stat_force_next_flush()`, then one
/// round trip) and arrives; the first snapshot waits for every session (bounded), and the
/// window's counters start there. At the end, each session flushes again before it
/// returns, and the last snapshot is read after the threads are joined.
#[derive(Debug)]
pub struct Edges {
    arrived: AtomicU32,
    sessions: u32,
}

/// How long the first snapshot waits for the sessions' flushes (a session's statement in
/// flight at the edge ends first: a chunk of a scan or a COPY, a commit).
const EDGE_WAIT: Duration = Duration::from_secs(10);

/// What a session runs to flush its backend's counters: PostgreSQL flushes them when the
/// backend goes idle, before the statement's end reaches the client.
pub const FLUSH_SQL: &str = "SELECT pg_catalog.pg_stat_force_next_flush()";

impl Edges {
    pub fn new(sessions: u32) -> Arc<Edges> {
        Arc::new(Edges {
            arrived: AtomicU32::new(0),
            sessions,
        })
    }

    /// A session flushed its warm-up's counters (or ended before it could: never waited for).
    pub fn arrive(&self) {
        self.arrived.fetch_add(1, Ordering::SeqCst);
    }

    /// Waits until every session arrived, at most `bound`; returns how many did.
    fn wait(&self, bound: Duration) -> u32 {
        let until = Instant::now() + bound;
        loop {
            let n = self.arrived.load(Ordering::SeqCst);
            if n >= self.sessions || Instant::now() >= until {
                return n.min(self.sessions);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

/// Seconds since the Unix epoch, now.
fn epoch_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Watches a server while a test runs: connected first ([`Observer::connect`]), then from
/// [`Observer::begin`] (the first statistics snapshot, the sampler started) to
/// [`Observer::end`] (the sampler stopped), then [`Observer::finish`] (the last snapshot
/// and the section). A run's observer begins and ends at the measured window's edges
/// ([`crate::run::requester::Observer`]).
pub struct Observer {
    hz: u32,
    server: ServerFacts,
    columns: stats::Columns,
    /// The connection, until the sampler takes it.
    client: Option<postgres::Client>,
    first: Option<stats::Snapshot>,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<Sampled>>,
    /// When sampling stopped.
    stopped: Option<Instant>,
    /// What failed at an edge, kept for `finish`.
    failed: Option<Error>,
    /// A run's sessions, met at the window's start.
    edges: Option<Arc<Edges>>,
    /// When the counters were read, as far as known.
    times: crate::report::result_pg::PgEdges,
}

impl Observer {
    /// Connects on its own connection (application_name 'dbio observer') and reads the
    /// server facts; samples at `hz` (held to 100..=1000) once begun.
    pub fn connect(config: &postgres::Config, hz: u32) -> Result<Observer> {
        let hz = hz.clamp(MIN_HZ, MAX_HZ);
        let mut config = config.clone();
        config.application_name("dbio observer");
        let mut client = config
            .connect(postgres::NoTls)
            .map_err(|e| pg_error("connecting the observer", &e))?;
        let server = server_facts(&mut client)?;
        let columns = stats::columns(&mut client, server.version_num)
            .map_err(|e| pg_error("reading the statistics views' columns", &e))?;
        Ok(Observer {
            hz,
            server,
            columns,
            client: Some(client),
            first: None,
            stop: Arc::new(AtomicBool::new(false)),
            sampler: None,
            stopped: None,
            failed: None,
            edges: None,
            times: Default::default(),
        })
    }

    /// A run's observer: the first snapshot waits for `edges` (the sessions' flushes), and
    /// on 15 the pages added to `schema`'s written tables are counted as extends.
    pub fn for_run(mut self, edges: Arc<Edges>, schema: &str) -> Observer {
        self.times.sessions = edges.sessions;
        self.edges = Some(edges);
        self.columns.written_in = Some(schema.to_string());
        self
    }

    /// [`Observer::connect`], then [`Observer::begin`] at once (`dbio pg observe`,
    /// `dbio job from-pg`).
    pub fn start(config: &postgres::Config, hz: u32) -> Result<Observer> {
        let mut o = Observer::connect(config, hz)?;
        o.try_begin()?;
        Ok(o)
    }

    /// Takes the first statistics snapshot and starts sampling `pg_stat_activity` in a
    /// thread.
    fn try_begin(&mut self) -> Result<()> {
        let mut client = self
            .client
            .take()
            .ok_or_else(|| Error::other("the observer began twice"))?;
        self.times.start_s = epoch_s();
        if let Some(edges) = &self.edges {
            self.times.sessions_flushed = edges.wait(EDGE_WAIT);
        }
        self.times.first_s = epoch_s();
        let first = stats::snapshot(&mut client, &self.columns)
            .map_err(|e| pg_error("reading the statistics", &e))?;
        self.first = Some(first);
        let (hz, flag) = (self.hz, Arc::clone(&self.stop));
        let sampler = std::thread::Builder::new()
            .name("dbio-pg-sampler".into())
            .spawn(move || sampler::sample(client, hz, flag))
            .map_err(|e| Error::other(format!("starting the wait sampler: {e}")))?;
        self.sampler = Some(sampler);
        Ok(())
    }

    /// Begins (at the measured window's start); a failure is kept for `finish`.
    pub fn begin(&mut self) {
        if let Err(e) = self.try_begin() {
            self.failed = Some(e);
        }
    }

    /// Stops sampling (at the measured window's end).
    pub fn end(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if self.stopped.is_none() {
            self.stopped = Some(Instant::now());
            self.times.end_s = epoch_s();
        }
    }

    /// Stops sampling, takes the last snapshot (after a pause that lets the backends flush
    /// their statistics: close the sessions' connections first, a backend flushes when it
    /// exits), and returns everything as the result's pg section.
    pub fn finish(mut self, ctx: &RunContext) -> Result<PgSection> {
        self.end();
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let stopped = self.stopped.unwrap_or_else(Instant::now);
        let (Some(handle), Some(first)) = (self.sampler.take(), self.first.take()) else {
            return Err(Error::other(
                "PostgreSQL: the observer never began (the measured window never started)",
            ));
        };
        let (mut client, tally, seconds, failure) = handle
            .join()
            .map_err(|_| Error::other("the wait sampler panicked"))?;
        if let Some(f) = failure {
            return Err(Error::other(format!(
                "PostgreSQL: sampling pg_stat_activity: {f}"
            )));
        }
        // Our own pending counters; the other backends' come with the pause.
        if self.server.version_num >= 150000 {
            let _ = client.batch_execute("SELECT pg_catalog.pg_stat_force_next_flush()");
        }
        std::thread::sleep(FLUSH_PAUSE);
        self.times.last_s = epoch_s();
        let mut last = stats::snapshot(&mut client, &self.columns)
            .map_err(|e| pg_error("reading the statistics", &e))?;
        if !ctx.load_continues {
            // The WAL's end is the window's: its position needs no flush, and the pause
            // after the window is not the run's.
            match tally.wal_at_end {
                Some(p) => last.scalars.insert(stats::WAL_POSITION_KEY.into(), p),
                None => last.scalars.remove(stats::WAL_POSITION_KEY),
            };
        }
        let (mut waits, ash, sampler) = tally.finish(self.hz, seconds);
        let deltas = stats::scalar_deltas(&first, &last);
        let interval_s = if ctx.load_continues {
            (last.at - first.at).as_secs_f64()
        } else {
            (stopped - first.at).as_secs_f64()
        };
        let io = stats::io_figures(&self.columns, &first, &last, interval_s);
        let sample_interval_s = seconds / sampler.samples.max(1) as f64;
        stats::timed_waits(
            &mut waits,
            &io,
            self.server.io_method.as_deref(),
            sample_interval_s,
        );
        let mut wal = stats::wal_figures(&self.columns, &deltas, &io);
        // Each sample was a transaction of the observer's own (and so was the flush call):
        // they are not the load's commits.
        // So were the sessions' flushes at the window's end.
        let flushes = u64::from(self.times.sessions);
        wal.commits = wal.commits.saturating_sub(sampler.samples + 1 + flushes);
        wal.commits_per_flush = (wal.syncs > 0).then(|| wal.commits as f64 / wal.syncs as f64);
        let mut section = PgSection {
            server: self.server,
            session_set: (ctx.session_set.iter())
                .map(|(k, v)| format!("{k} = {v}"))
                .collect(),
            cache: ctx.cache.describe(),
            interval_s,
            sampler,
            waits,
            ash,
            io,
            wal,
            deltas,
            findings: Vec::new(),
            cautions: Vec::new(),
            edges: Some(self.times),
        };
        let (found, cautions) = findings::findings(&section, ctx);
        section.findings = found;
        section.cautions = cautions;
        Ok(section)
    }
}

/// A run's observer: begins and ends at the measured window's edges.
impl crate::run::requester::Observer for Observer {
    fn window_started(&mut self) {
        self.begin();
    }

    fn window_ended(&mut self) {
        self.end();
    }
}

/// What a run through PostgreSQL saw goes into its result's `pg` section.
impl crate::database::DbObserver for Observer {
    fn finish(
        self: Box<Self>,
        asked: &crate::database::Asked,
        result: &mut crate::report::RunResult,
    ) -> Result<()> {
        result.pg = Some(Observer::finish(*self, asked)?);
        Ok(())
    }
}
