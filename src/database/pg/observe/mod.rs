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

/// What the run asked for, so the findings can tell what was asked from what was done.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The test (`read-iops`, `redo`, ...).
    pub test: String,
    pub asynchronous: bool,
    pub depth: u32,
    pub sessions: u32,
    /// The SET commands each session ran: (name, value).
    pub session_set: Vec<(String, String)>,
    /// How the page cache was kept out.
    pub cache: CacheControl,
    /// The sessions' own mean read latency (µs), when the test reads.
    pub mean_read_us: Option<f64>,
    /// The load goes on after sampling stops (a server dbio only watches): the statistics
    /// are then rates over the time between the two snapshots, the flush pause included.
    /// Otherwise the load ended with the sampling, and the pause only lets its counters in.
    pub load_continues: bool,
}

/// How the operating system's page cache was kept out of the reads.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheControl {
    /// The server reads with direct I/O (`debug_io_direct=data`).
    DirectIo,
    /// dbio dropped the table's pages with posix_fadvise(DONTNEED).
    Fadvise,
    /// Not kept out, and why.
    NotControlled(String),
}

impl CacheControl {
    pub fn describe(&self) -> String {
        match self {
            CacheControl::DirectIo => "direct I/O (debug_io_direct=data)".into(),
            CacheControl::Fadvise => {
                "the table's pages dropped from the page cache with posix_fadvise(DONTNEED)".into()
            }
            CacheControl::NotControlled(why) => format!("not controlled: {why}"),
        }
    }
}

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

/// Watches a server while a test runs.
pub struct Observer {
    hz: u32,
    server: ServerFacts,
    columns: stats::Columns,
    first: stats::Snapshot,
    stop: Arc<AtomicBool>,
    sampler: JoinHandle<Sampled>,
}

impl Observer {
    /// Connects on its own connection (application_name 'dbio observer'), reads the server
    /// facts, takes the first statistics snapshot, and starts sampling `pg_stat_activity`
    /// at `hz` (held to 100..=1000) in a thread.
    pub fn start(config: &postgres::Config, hz: u32) -> Result<Observer> {
        let hz = hz.clamp(MIN_HZ, MAX_HZ);
        let mut config = config.clone();
        config.application_name("dbio observer");
        let mut client = config
            .connect(postgres::NoTls)
            .map_err(|e| pg_error("connecting the observer", &e))?;
        let server = server_facts(&mut client)?;
        let columns = stats::columns(&mut client, server.version_num)
            .map_err(|e| pg_error("reading the statistics views' columns", &e))?;
        let first = stats::snapshot(&mut client, &columns)
            .map_err(|e| pg_error("reading the statistics", &e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let sampler = std::thread::Builder::new()
            .name("dbio-pg-sampler".into())
            .spawn(move || sampler::sample(client, hz, flag))
            .map_err(|e| Error::other(format!("starting the wait sampler: {e}")))?;
        Ok(Observer {
            hz,
            server,
            columns,
            first,
            stop,
            sampler,
        })
    }

    /// Stops sampling, takes the last snapshot (after a pause that lets the backends flush
    /// their statistics: close the sessions' connections first, a backend flushes when it
    /// exits), and returns everything as the result's pg section.
    pub fn finish(self, ctx: &RunContext) -> Result<PgSection> {
        self.stop.store(true, Ordering::Relaxed);
        let stopped = Instant::now();
        let (mut client, tally, seconds, failure) = self
            .sampler
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
        let deltas = stats::scalar_deltas(&self.first, &last);
        let interval_s = if ctx.load_continues {
            (last.at - self.first.at).as_secs_f64()
        } else {
            (stopped - self.first.at).as_secs_f64()
        };
        let io = stats::io_figures(&self.columns, &self.first, &last, interval_s);
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
