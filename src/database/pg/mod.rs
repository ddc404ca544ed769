//! `dbio pg run|compare|clean`: PostgreSQL, the first [`Database`] adapter — a throwaway
//! server (`--pg-bin`) or an existing one (`--pg`) — run by the shared driver
//! ([`crate::database::run`]): each session's statements timed into dbio's own histograms
//! by the same measured window as `dbio run`, and the result a normal run result.
//!
//! - [`connect`]: where the server is, and what is checked before anything is created;
//! - [`server`]: the throwaway server; [`schema`]: the run's one schema;
//! - [`load`]: the tables, and keeping the page cache out; [`workloads`]: the sessions;
//! - [`observe`]: the waits sampled and the statistics read at the window's edges.

pub mod connect;
pub mod leftovers;
pub mod load;
pub mod observe;
pub mod schema;
pub mod server;
pub mod workloads;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Subcommand;

use crate::database::{CacheControl, Database, DbObserver, Facts, Loaded, Shape, Spec};
use crate::error::{Error, ExitCode, Result};
use crate::options::RunArgs;
use crate::run::RunOutcome;
use crate::run::requester::Requester;
use crate::units::Shown;

use self::observe::Observer;
use self::workloads::Session;

/// `dbio pg ...`.
#[derive(Debug, Subcommand)]
pub enum PgCommand {
    /// Run one test through PostgreSQL: a throwaway server (--pg-bin) or an existing one
    /// (--pg), every object in one schema dbio_<run id> dropped at the end.
    Run(Box<PgRun>),
    /// Run the test through PostgreSQL, then the same plain test on the file system of the
    /// data directory: one table of what the storage gives and what the database gets.
    Compare(Box<PgRun>),
    #[command(hide = true)]
    Observe(observe::ObserveArgs),
    /// Drop the dbio_* schemas a killed run left (only those carrying dbio's mark).
    Clean(PgClean),
}

#[derive(Debug, Clone, clap::Args)]
pub struct PgClean {
    /// The options of the table it takes: `--pg`, as `dbio pg run` says it, `--json`, `--format`.
    #[command(flatten)]
    pub options: crate::options::cli::PgCleanOptions,
}

/// `dbio pg run TEST [options]`: the arguments every database's run takes, with the
/// options `options::Command::PgRun` has in the table.
pub type PgRun = crate::database::DbRun<PgRunCommand>;

#[derive(Debug, Clone)]
pub struct PgRunCommand;

impl crate::database::RunCommand for PgRunCommand {
    const COMMAND: crate::options::Command = crate::options::Command::PgRun;
}

/// Which server a run goes through, as checked before anything was created.
enum Where {
    Throwaway {
        bins: server::Binaries,
        major: u32,
        who: server::RunAs,
    },
    Existing {
        config: Box<postgres::Config>,
    },
}

/// `dbio pg clean`: drops the marked schemas no running run holds, one line each, and
/// names each one it left and why (exit 1 when it left any).
pub fn clean(a: &PgClean) -> Result<ExitCode> {
    let out = crate::report::Output::new(a.options.0.json, a.options.0.format);
    let mut config = connect::config(a.options.0.pg.as_deref().unwrap_or(""))?;
    let mut c = connect::connect(&mut config, "--pg")?;
    let done = schema::clean(&mut c)?;
    for name in &done.dropped {
        crate::safety::cleanup::undone_elsewhere(
            crate::safety::cleanup::PG_SCHEMA,
            &schema::what(name, &config),
        );
    }
    crate::database::print_cleaned(
        out,
        "dbio.pg-clean.v1",
        "schema",
        &connect::describe(&config),
        &done.dropped,
        &done.left,
    )?;
    Ok(if done.left.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Failure
    })
}

/// `dbio pg run`: the shared driver with PostgreSQL; the outcome is printed and recorded
/// by the caller like a `dbio run`.
pub fn run(a: &RunArgs, stop: &Arc<AtomicBool>) -> Result<RunOutcome> {
    run_in(a, None, stop)
}

/// [`run`], its run directory made in `held` (a compare's directory) when given.
pub fn run_in(
    a: &RunArgs,
    held: Option<Arc<crate::safety::fs::Dir>>,
    stop: &Arc<AtomicBool>,
) -> Result<RunOutcome> {
    if a.pg.is_none()
        && a.pg_bin.is_none()
        && std::env::var_os("PGHOST").is_none()
        && std::env::var_os("PGDATABASE").is_none()
    {
        return Err(Error::usage(
            "--pg or --pg-bin: say which server to run through (an existing one, or a throwaway one started from these binaries)",
        ));
    }
    crate::database::run(&mut Pg::default(), a, held, stop)
}

/// PostgreSQL as a [`Database`]: what a run made, in the order it was made (dropped in
/// reverse: the schema before the server).
#[derive(Default)]
pub struct Pg {
    place: Option<Where>,
    server: Option<server::Server>,
    config: Option<postgres::Config>,
    client: Option<postgres::Client>,
    major: u32,
    version: String,
    io_method: Option<String>,
    schema: Option<schema::Schema>,
    data_dir: Option<PathBuf>,
    /// Whether the --pg-bin option named the server (the target is its data directory).
    throwaway: bool,
    /// Where the sessions meet the observer at the window's start (made at loading).
    edges: Option<Arc<observe::Edges>>,
}

impl Pg {
    fn config(&mut self) -> &mut postgres::Config {
        self.config.as_mut().expect("opened before")
    }

    fn client(&mut self) -> &mut postgres::Client {
        self.client.as_mut().expect("opened before")
    }

    fn schema_name(&self) -> String {
        self.schema
            .as_ref()
            .map_or(String::new(), |s| s.name.clone())
    }

    /// The loaded table must not be in shared_buffers at the start: a throwaway server is
    /// restarted; a user's is not (a note says so for a read test).
    fn make_cold(&mut self, reads: bool, notes: &mut Vec<String>) -> Result<()> {
        if let Some(s) = self.server.as_mut() {
            self.client = None;
            s.stop();
            s.start()?;
            let c = connect::connect(self.config.as_mut().expect("opened"), "--pg-bin")?;
            self.client = Some(c);
        } else if reads {
            notes.push(
                "the server is not restarted (not dbio's): part of the table may be in shared_buffers at the start".into(),
            );
        }
        Ok(())
    }

    /// How the page cache is kept out of the reads, and the files whose pages are dropped.
    fn cache_control(&mut self, reads: bool) -> (CacheControl, Option<Vec<std::fs::File>>) {
        let direct: bool = self
            .client()
            .query_one(
                "SELECT coalesce(current_setting('debug_io_direct', true), '')",
                &[],
            )
            .ok()
            .map(|r| r.get::<_, String>(0))
            .is_some_and(|v| v.split(',').any(|x| x.trim() == "data"));
        self.data_dir = match &self.server {
            Some(s) => Some(s.data_directory()),
            None => load::data_directory(self.client()),
        };
        if direct {
            return (CacheControl::DirectIo, None);
        }
        if !reads {
            return (
                CacheControl::NotControlled(
                    "a write test: writes go through the page cache".into(),
                ),
                None,
            );
        }
        let (schema, dir) = (self.schema_name(), self.data_dir.clone());
        match dir.and_then(|d| load::relation_files(self.client(), &schema, &d)) {
            Some(files) => {
                load::drop_pages(&files);
                (CacheControl::Fadvise, Some(files))
            }
            None => (
                CacheControl::NotControlled(
                    "no direct I/O, and the table's files are not readable here".into(),
                ),
                None,
            ),
        }
    }
}

impl Database for Pg {
    fn command(&self) -> &'static str {
        "pg"
    }

    fn engine(&self) -> &'static str {
        "postgresql"
    }

    fn page(&self) -> u64 {
        load::PAGE
    }

    fn check(&mut self, a: &RunArgs) -> Result<()> {
        self.throwaway = a.pg_bin.is_some();
        self.place = Some(if let Some(bin) = &a.pg_bin {
            let bins = server::Binaries::of(bin)?;
            let who = server::run_as(&bins)?;
            let major = server::check_version(&bins, &who)?;
            let out = std::path::absolute(&a.out).unwrap_or_else(|_| a.out.clone());
            if let Err(at) = server::reachable_by(&who, &out) {
                return Err(Error::usage(format!(
                    "--out {}: user {} (who runs the throwaway server) cannot enter {}; choose an --out under directories others may enter, e.g. /var/tmp/dbio-runs",
                    a.out.shown(),
                    who.name,
                    at.shown()
                )));
            }
            Where::Throwaway { bins, major, who }
        } else {
            let mut config = connect::config(a.pg.as_deref().unwrap_or(""))?;
            let mut c = connect::connect(&mut config, "--pg")?;
            connect::check_server(&mut c, &config, "--pg")?;
            Where::Existing {
                config: Box::new(config),
            }
        });
        Ok(())
    }

    fn open(&mut self, a: &RunArgs, run_dir: &Path, run_id: &str) -> Result<()> {
        let (mut config, major) = match self.place.take().expect("checked before") {
            Where::Throwaway { bins, major, who } => {
                let mut s = server::Server::create(
                    &bins,
                    major,
                    who,
                    &run_dir.join("pg"),
                    a.sessions,
                    &a.pg_set,
                )?;
                s.start()?;
                let c = s.config();
                self.server = Some(s);
                (c, major)
            }
            Where::Existing { config } => (*config, 0),
        };
        let mut client = connect::connect(&mut config, "--pg")?;
        let checked = connect::check_server(&mut client, &config, "--pg")?;
        self.major = if major > 0 {
            major
        } else {
            (checked.version_num / 10_000) as u32
        };
        self.version = checked.version;
        self.io_method = client
            .query_one("SELECT current_setting('io_method', true)", &[])
            .ok()
            .and_then(|r| r.get(0));
        self.schema = Some(schema::Schema::create(&config, run_id)?);
        self.config = Some(config);
        self.client = Some(client);
        Ok(())
    }

    fn load(&mut self, spec: &Spec, stop: &AtomicBool) -> Result<Loaded> {
        let row = spec.shape.row();
        let schema = self.schema_name();
        let owned = self.server.is_some();
        self.edges = Some(observe::Edges::new(spec.sessions));
        let mut notes = Vec::new();
        if matches!(spec.shape, Shape::Commit | Shape::Copy) {
            let copy = spec.shape == Shape::Copy;
            load::write_tables(self.client(), &schema, spec.sessions, copy)?;
        } else {
            load::blocks(self.client(), &schema, spec.rows, stop)?;
            // A checkpoint is a server-wide act: only on a server dbio owns.
            if owned {
                load::checkpoint(self.client());
            } else {
                notes.push(load::NO_CHECKPOINT.into());
            }
        }
        self.make_cold(row.reads, &mut notes)?;
        let (cache, files) = self.cache_control(row.reads);
        Ok(Loaded {
            cache,
            notes,
            alongside: files.map(|files| {
                Box::new(move |over: &AtomicBool| load::drop_pages_until(&files, over))
                    as crate::database::Alongside
            }),
        })
    }

    fn observer(&mut self) -> Result<Box<dyn DbObserver>> {
        let config = self.config.as_ref().expect("opened before");
        let edges = self.edges.clone().expect("loaded before");
        let schema = self.schema_name();
        Ok(Box::new(
            Observer::connect(config, 100)?.for_run(edges, &schema),
        ))
    }

    fn session(&mut self, spec: &Spec, id: u32) -> Result<Box<dyn Requester>> {
        let schema = self.schema_name();
        let c = connect::connect(self.config(), "--pg")?;
        let edges = self.edges.clone().expect("loaded before");
        Ok(Box::new(Session::new(c, spec, &schema, id, edges)?))
    }

    fn event(&self, shape: Shape) -> &'static str {
        event_name(shape, self.major, self.io_method.as_deref())
    }

    fn session_settings(&self, spec: &Spec) -> Vec<(String, String)> {
        workloads::session_set(spec)
    }

    fn facts(&self) -> Facts {
        let config = self.config.as_ref();
        let target = match &self.data_dir {
            Some(d) if self.throwaway => d.display().to_string(),
            _ => config.map(connect::describe).unwrap_or_default(),
        };
        let mut settings = vec![format!("server: PostgreSQL {}", self.version)];
        if let Some(m) = &self.io_method {
            settings.push(format!("io_method = {m}"));
        }
        Facts {
            target,
            settings,
            table: format!("{}.blocks", self.schema_name()),
            fill_method: "INSERT ... generate_series".into(),
            data_directory: self.data_dir.clone(),
        }
    }

    fn close(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        self.client = None;
        // The schema goes before the server.
        if let Some(mut schema) = self.schema.take()
            && let Err(e) = schema.drop_now()
        {
            if self.server.is_some() {
                schema.goes_with_the_server();
                notes.push(format!(
                    "schema {} could not be dropped ({e}); it goes with the throwaway server",
                    schema.name
                ));
            } else {
                notes.push(format!(
                "schema {} could not be dropped ({e}); it is noted as left behind: `dbio doctor` names it, `dbio clean --stale` or `dbio pg clean` drops it",
                schema.name
            ));
            }
        }
        self.server = None;
        notes
    }
}

/// What PostgreSQL saw, for a compare: read from the database side's `pg` section.
pub fn seen(r: &crate::report::RunResult) -> Option<crate::database::Seen> {
    let pg = r.pg.as_ref()?;
    let read_wait_us = (pg.io.iter())
        .find(|i| i.backend_type == "client backend" && i.object == "relation" && i.op == "read")
        .and_then(|i| i.mean_wait_ms)
        .filter(|ms| *ms > 0.0)
        .map(|ms| ms * 1000.0);
    // Every process's data file operations (io workers read for the sessions on 18).
    let sum = |ops: &[&str]| {
        let rows: Vec<_> = (pg.io.iter())
            .filter(|i| i.object == "relation" && ops.contains(&i.op.as_str()))
            .collect();
        let per_s: f64 = rows.iter().map(|i| i.ops_per_s).sum();
        let mib: f64 = rows.iter().filter_map(|i| i.mib_per_s).sum();
        (per_s, mib)
    };
    let (reads, read_mib) = sum(&["read"]);
    let (writes, write_mib) = sum(&["write", "extend"]);
    let per_s = |n: f64| (pg.interval_s > 0.0).then(|| n / pg.interval_s);
    Some(crate::database::Seen {
        name: "PostgreSQL",
        short: "PG",
        read_wait_us,
        reads_per_s: Some(reads),
        read_mib_per_s: Some(read_mib),
        writes_per_s: Some(writes),
        write_mib_per_s: Some(write_mib),
        hits_per_s: pg
            .deltas
            .get("pg_stat_database.blks_hit")
            .and_then(|h| per_s(*h)),
        commits_per_s: per_s(pg.wal.commits as f64),
        flush_wait_us: pg.wal.mean_sync_ms.map(|ms| ms * 1000.0),
        cautions: pg.cautions.clone(),
        findings: pg.findings.clone(),
        data_directory: pg.server.data_directory.clone(),
        sections: crate::report::sections::pg_sections(pg),
        storage: storage_shape(pg, shape_of(r)),
    })
}

/// The shape a database run ran (its test, `pg write-mbps`, and its submission).
fn shape_of(r: &crate::report::RunResult) -> Option<Shape> {
    let test = crate::workload::Test::from_name(r.test.rsplit(' ').next()?)?;
    crate::database::shape::row(test, r.config.submission == "sync").map(|row| row.shape)
}

/// PostgreSQL's shapes (`--like postgres`) with the server's `wal_sync_method` as the io
/// mode: what a compare's storage side runs, for the database side's `shape` (what the
/// storage side does otherwise is said: prefetched batches read page by page).
pub fn storage_shape(
    pg: &crate::report::result_pg::PgSection,
    shape: Option<Shape>,
) -> crate::database::StorageShape {
    use crate::engine::IoMode;
    let mut cautions = Vec::new();
    let method = pg.setting("wal_sync_method").unwrap_or("");
    let io_mode = match method.to_ascii_lowercase().as_str() {
        "fdatasync" => Some(IoMode::Fdatasync),
        "open_datasync" => Some(IoMode::OpenDatasync),
        _ => {
            cautions.push(format!(
                "wal_sync_method={method}: dbio does not model it; the storage side ran PostgreSQL's default on Linux, fdatasync"
            ));
            None
        }
    };
    if pg
        .setting("fsync")
        .is_some_and(|v| v.eq_ignore_ascii_case("off"))
    {
        cautions.push(
            "fsync=off: the server synced neither WAL nor data files; the storage side syncs them as PostgreSQL does with fsync on".into(),
        );
    }
    if let Some(v) = pg.setting("debug_io_direct")
        && v.split(',').any(|x| x.trim() == "data")
    {
        cautions.push(format!(
            "debug_io_direct={v}: the server read and wrote its data files with direct I/O; the storage side's --like postgres goes through the page cache, as PostgreSQL does by default"
        ));
    }
    if shape == Some(Shape::Batch) {
        cautions.push(
            "the database prefetched its batches (posix_fadvise WILLNEED, then pread); the storage side reads each page with its own pread, not prefetched".into(),
        );
    }
    // A COPY's WAL as the server logged it: bytes per commit (a COPY of 128 pages), within
    // what the storage side takes (a byte a page to a page of WAL a page).
    let pages = crate::workload::bulk_load::PAGES_PER_COMMIT;
    let wal_per_commit = (shape == Some(Shape::Copy) && pg.wal.commits > 0)
        .then(|| (pg.wal.bytes / pg.wal.commits).clamp(pages, pages * 8192));
    crate::database::StorageShape {
        like: crate::workload::event::Like::Postgres,
        io_mode,
        doublewrite: None,
        wal_per_commit,
        cautions,
    }
}

/// The wait event a shape's statements are named after, on major version `major` with
/// `io_method` (18+).
fn event_name(shape: Shape, major: u32, io_method: Option<&str>) -> &'static str {
    match shape {
        Shape::Lookup | Shape::Scan => "DataFileRead",
        Shape::Batch if major >= 18 && io_method.is_some_and(|m| m != "sync") => "AioIoCompletion",
        Shape::Batch if major >= 18 => "DataFileRead",
        Shape::Batch => "DataFilePrefetch",
        Shape::Update => "DataFileWrite",
        Shape::Copy => "DataFileExtend",
        Shape::Commit if major >= 18 => "WalSync",
        Shape::Commit => "WALSync",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Test;

    #[test]
    fn the_storage_side_runs_postgres_shapes_with_the_servers_wal_sync_method() {
        use crate::engine::IoMode;
        use crate::report::result_pg::{PgSection, PgSetting};
        let server = |settings: &[(&str, &str)]| {
            let mut pg = PgSection::default();
            pg.server.settings = (settings.iter())
                .map(|(n, v)| PgSetting {
                    name: (*n).into(),
                    value: (*v).into(),
                    source: "default".into(),
                })
                .collect();
            pg
        };
        let s = storage_shape(
            &server(&[("wal_sync_method", "fdatasync")]),
            Some(Shape::Lookup),
        );
        assert_eq!(s.like, crate::workload::event::Like::Postgres);
        assert_eq!((s.io_mode, s.doublewrite), (Some(IoMode::Fdatasync), None));
        assert!(s.cautions.is_empty(), "{:?}", s.cautions);
        let s = storage_shape(&server(&[("wal_sync_method", "open_datasync")]), None);
        assert_eq!(s.io_mode, Some(IoMode::OpenDatasync));
        // A COPY's storage side writes the data file pages and the WAL the server logged
        // per COPY (173.4 MiB in 1,336 commits: 136,096 bytes each): nothing to say.
        let mut copy = server(&[("wal_sync_method", "fdatasync")]);
        copy.wal.bytes = 181_824_256;
        copy.wal.commits = 1_336;
        let s = storage_shape(&copy, Some(Shape::Copy));
        assert!(s.cautions.is_empty(), "{:?}", s.cautions);
        assert_eq!(s.wal_per_commit, Some(136_096));
        let mut a = crate::options::RunArgs::defaults(Some(Test::WriteMbps));
        a.sessions = 2;
        let plain =
            crate::database::shape::storage_args(&a, std::path::Path::new("/d"), 8192, &s).unwrap();
        let cfg = crate::options::check::run_config(&plain).unwrap();
        assert_eq!(cfg.redo.per_commit.lo, 136_096);
        assert!(cfg.uses_redo());
        // Other shapes log no COPY: nothing set.
        assert_eq!(
            storage_shape(&copy, Some(Shape::Update)).wal_per_commit,
            None
        );
        // A method dbio does not model is said, and the default is run.
        let s = storage_shape(
            &server(&[("wal_sync_method", "open_sync"), ("fsync", "off")]),
            Some(Shape::Batch),
        );
        assert_eq!(s.io_mode, None);
        assert!(
            s.cautions[0].contains("wal_sync_method=open_sync"),
            "{:?}",
            s.cautions
        );
        assert!(s.cautions[1].starts_with("fsync=off"), "{:?}", s.cautions);
        assert!(s.cautions[2].contains("prefetched"), "{:?}", s.cautions);
    }

    #[test]
    fn events_are_named_after_the_wait_events_of_the_version() {
        assert_eq!(event_name(Shape::Lookup, 15, None), "DataFileRead");
        assert_eq!(event_name(Shape::Batch, 15, None), "DataFilePrefetch");
        assert_eq!(
            event_name(Shape::Batch, 18, Some("worker")),
            "AioIoCompletion"
        );
        assert_eq!(event_name(Shape::Batch, 18, Some("sync")), "DataFileRead");
        assert_eq!(event_name(Shape::Commit, 15, None), "WALSync");
        assert_eq!(event_name(Shape::Commit, 18, None), "WalSync");
        let shape = |t, sync| crate::database::shape::row(t, sync).unwrap().shape;
        assert_eq!(shape(Test::ReadIops, true), Shape::Lookup);
        assert_eq!(shape(Test::ReadIops, false), Shape::Batch);
    }
}
