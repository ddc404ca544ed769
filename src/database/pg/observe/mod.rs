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
use std::sync::atomic::{AtomicBool, Ordering};
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
        })
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
        self.stopped.get_or_insert_with(Instant::now);
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
        let last = stats::snapshot(&mut client, &self.columns)
            .map_err(|e| pg_error("reading the statistics", &e))?;
        let (waits, ash, sampler) = tally.finish(self.hz, seconds);
        let deltas = stats::scalar_deltas(&first, &last);
        let interval_s = if ctx.load_continues {
            (last.at - first.at).as_secs_f64()
        } else {
            (stopped - first.at).as_secs_f64()
        };
        let io = stats::io_figures(&self.columns, &first, &last, interval_s);
        let mut wal = stats::wal_figures(&self.columns, &deltas, &io);
        // Each sample was a transaction of the observer's own (and so was the flush call):
        // they are not the load's commits.
        wal.commits = wal.commits.saturating_sub(sampler.samples + 1);
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
