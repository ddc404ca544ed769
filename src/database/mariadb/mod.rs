//! `dbio mysql run|compare|clean` (alias `mariadb`): MariaDB/MySQL as a [`Database`] — a
//! throwaway MariaDB server (`--mysql-bin`) or an existing MariaDB 10.6+ / MySQL 8 server
//! (`--mysql`) — run by the shared driver ([`crate::database::run`]).
//!
//! - [`connect`]: where the server is, its password, and what is checked first;
//! - [`server`]: the throwaway server; [`private`]: the run's one database;
//! - [`load`]: the tables; [`workloads`]: the sessions;
//! - [`observe`]: waits sampled from performance_schema and the counters at the window's
//!   edges; [`findings`]: what they mean, in words; [`leftovers`]: what a kill leaves.

pub mod connect;
pub mod findings;
pub mod leftovers;
pub mod load;
pub mod observe;
pub mod private;
pub mod server;
pub mod workloads;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use clap::Subcommand;

use crate::database::throwaway::{RunAs, reachable_by};
use crate::database::{CacheControl, Database, DbObserver, Facts, Loaded, Shape, Spec};
use crate::error::{Error, ExitCode, Result};
use crate::options::RunArgs;
use crate::run::RunOutcome;
use crate::run::requester::Requester;
use crate::units::Shown;

use self::connect::Target;

/// `dbio mysql ...`.
#[derive(Debug, Subcommand)]
pub enum MysqlCommand {
    /// Run one test through MariaDB/MySQL: a throwaway MariaDB server (--mysql-bin) or an
    /// existing server (--mysql), every object in one database dbio_<run id> dropped at the end.
    Run(Box<MysqlRun>),
    /// Run the test through MariaDB/MySQL, then the same plain test on the file system of
    /// the data directory: one table of what the storage gives and what the database gets.
    Compare(Box<MysqlRun>),
    /// Drop the dbio_* databases a killed run left (only those carrying dbio's mark).
    Clean(Box<MysqlClean>),
}

#[derive(Debug, Clone, clap::Args)]
pub struct MysqlClean {
    /// The options of the table it takes: `--mysql` (required), `--json`, `--format`.
    #[command(flatten)]
    pub options: crate::options::cli::MysqlCleanOptions,
}

/// `dbio mysql run TEST [options]`: the arguments every database's run takes, with the
/// options `options::Command::MysqlRun` has in the table.
pub type MysqlRun = crate::database::DbRun<MysqlRunCommand>;

#[derive(Debug, Clone)]
pub struct MysqlRunCommand;

impl crate::database::RunCommand for MysqlRunCommand {
    const COMMAND: crate::options::Command = crate::options::Command::MysqlRun;
}

/// The buffer pool a throwaway server measures reads and updates with: the smallest InnoDB
/// takes with 16 KiB pages, so the table is far larger.
const SMALL_POOL: &str = "6M";

/// Which server a run goes through, as checked before anything was created.
enum Where {
    Throwaway { bins: server::Binaries, who: RunAs },
    Existing { target: Target },
}

/// `dbio mysql clean`: drops the marked databases no running run holds, one line each;
/// exit 1 when it left any.
pub fn clean(a: &MysqlClean) -> Result<ExitCode> {
    let url = a.options.0.mysql.as_deref().ok_or_else(|| {
        Error::usage("--mysql: the server to clean up is required (mysql://user@host[:port]/db)")
    })?;
    let mut t = Target::parse(url)?;
    let mut c = t.connect("--mysql")?;
    let done = private::clean(&mut c)?;
    for name in &done.dropped {
        crate::safety::cleanup::undone_elsewhere(
            crate::safety::cleanup::MYSQL_DATABASE,
            &private::what(name, &t),
        );
    }
    crate::database::print_cleaned(
        crate::report::Output::new(a.options.0.json, a.options.0.format),
        "dbio.mysql-clean.v1",
        "database",
        &t.describe(),
        &done.dropped,
        &done.left,
    )?;
    Ok(if done.left.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Failure
    })
}

/// `dbio mysql run`.
pub fn run(a: &RunArgs, stop: &Arc<AtomicBool>) -> Result<RunOutcome> {
    run_in(a, None, stop)
}

/// [`run`], its run directory made in `held` (a compare's directory) when given.
pub fn run_in(
    a: &RunArgs,
    held: Option<Arc<crate::safety::fs::Dir>>,
    stop: &Arc<AtomicBool>,
) -> Result<RunOutcome> {
    if a.mysql.is_none() && a.mysql_bin.is_none() {
        return Err(Error::usage(
            "--mysql or --mysql-bin: say which server to run through (an existing one by URL, or a throwaway MariaDB started from the mariadbd in DIR)",
        ));
    }
    crate::database::run(&mut Mysql::default(), a, held, stop)
}

/// MariaDB/MySQL as a [`Database`]: what a run made, dropped in reverse (the database
/// before the server).
#[derive(Default)]
pub struct Mysql {
    place: Option<Where>,
    server: Option<server::Server>,
    target: Option<Target>,
    conn: Option<mysql::Conn>,
    checked: Option<connect::Checked>,
    private: Option<private::Private>,
    /// `--mysql-set` as given (wins over dbio's own choices).
    user_set: Vec<(String, String)>,
    data_dir: Option<PathBuf>,
    flush_method: String,
    pool_bytes: u64,
}

impl Mysql {
    fn conn(&mut self) -> &mut mysql::Conn {
        self.conn.as_mut().expect("opened before")
    }

    fn db(&self) -> String {
        self.private
            .as_ref()
            .map_or(String::new(), |p| p.name.clone())
    }

    fn global(&mut self, name: &str) -> Option<String> {
        use mysql::prelude::Queryable;
        self.conn()
            .query_first::<Option<String>, _>(format!("SELECT @@global.{name}"))
            .ok()
            .flatten()
            .flatten()
    }

    /// The table must not be in the buffer pool at the start: a throwaway server is
    /// restarted (with a buffer pool far smaller than the table for reads and updates); a
    /// user's is not (a note says so).
    fn make_cold(&mut self, shape: Shape, notes: &mut Vec<String>) -> Result<()> {
        let user = self.user_set.clone();
        if let Some(s) = self.server.as_mut() {
            self.conn = None;
            s.stop();
            let pool = if matches!(shape, Shape::Commit | Shape::Copy) {
                "64M"
            } else {
                SMALL_POOL
            };
            s.default_setting("innodb_buffer_pool_size", pool, &user);
            s.start()?;
            let mut t = s.target();
            self.conn = Some(t.connect("--mysql-bin")?);
        } else if shape.row().reads {
            notes.push(
                "the server is not restarted (not dbio's): part of the table may be in the buffer pool at the start".into(),
            );
        }
        self.flush_method = self.global("innodb_flush_method").unwrap_or_default();
        self.pool_bytes = self
            .global("innodb_buffer_pool_size")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Ok(())
    }

    /// How the page cache is kept out of the reads, and the table's files whose pages are
    /// dropped while the test runs (a buffered flush method on a server whose files dbio
    /// can read).
    fn cache_control(&mut self, spec: &Spec) -> (CacheControl, Option<Vec<std::fs::File>>) {
        let row = spec.shape.row();
        self.data_dir = match &self.server {
            Some(s) => Some(s.data()),
            None => self
                .global("datadir")
                .map(|d| PathBuf::from(d.trim_end_matches('/'))),
        };
        let table = spec.rows * spec.page;
        let pool = if self.pool_bytes > 0 {
            format!(
                "a buffer pool of {} ({:.1}% of the table's {})",
                crate::units::size_label(self.pool_bytes),
                100.0 * self.pool_bytes as f64 / table.max(1) as f64,
                crate::units::size_label(table)
            )
        } else {
            "the buffer pool".into()
        };
        let direct = self
            .flush_method
            .to_ascii_uppercase()
            .starts_with("O_DIRECT")
            || self.flush_method.eq_ignore_ascii_case("O_DSYNC");
        if direct {
            return (
                CacheControl::Said {
                    describe: format!(
                        "O_DIRECT data files (innodb_flush_method={}) and {pool}",
                        self.flush_method
                    ),
                    io_mode: format!("direct (innodb_flush_method={})", self.flush_method),
                },
                None,
            );
        }
        if !row.reads {
            return (
                CacheControl::NotControlled(format!(
                    "innodb_flush_method={}: writes go through the page cache",
                    self.flush_method
                )),
                None,
            );
        }
        let file = self
            .data_dir
            .as_ref()
            .map(|d| d.join(self.db()).join("blocks.ibd"));
        match file.and_then(|f| std::fs::File::open(f).ok()) {
            Some(f) => {
                crate::database::pg::load::drop_pages(std::slice::from_ref(&f));
                (
                    CacheControl::Said {
                        describe: format!(
                            "innodb_flush_method={} reads through the page cache: the table's pages dropped from it with posix_fadvise(DONTNEED) every 50 ms, and {pool}",
                            self.flush_method
                        ),
                        io_mode: format!(
                            "buffered (innodb_flush_method={}), page cache dropped (posix_fadvise)",
                            self.flush_method
                        ),
                    },
                    Some(vec![f]),
                )
            }
            None => (
                CacheControl::NotControlled(format!(
                    "innodb_flush_method={}, and the table's file is not readable here",
                    self.flush_method
                )),
                None,
            ),
        }
    }
}

impl Database for Mysql {
    fn command(&self) -> &'static str {
        "mysql"
    }

    fn engine(&self) -> &'static str {
        "mariadb"
    }

    fn page(&self) -> u64 {
        load::PAGE
    }

    fn check(&mut self, a: &RunArgs) -> Result<()> {
        self.user_set = a.mysql_set.clone();
        self.place = Some(if let Some(bin) = &a.mysql_bin {
            let bins = server::Binaries::of(bin)?;
            let who = RunAs::find("--mysql-bin", &bins.programs())?;
            server::check_version(&bins, &who)?;
            let out = std::path::absolute(&a.out).unwrap_or_else(|_| a.out.clone());
            if let Err(at) = reachable_by(&who, &out) {
                return Err(Error::usage(format!(
                    "--out {}: user {} (who runs the throwaway server) cannot enter {}; choose an --out under directories others may enter, e.g. /var/tmp/dbio-runs",
                    a.out.shown(),
                    who.name,
                    at.shown()
                )));
            }
            Where::Throwaway { bins, who }
        } else {
            let mut target = Target::parse(a.mysql.as_deref().unwrap_or(""))?;
            let mut c = target.connect("--mysql")?;
            connect::check_server(&mut c, &target, "--mysql")?;
            Where::Existing { target }
        });
        Ok(())
    }

    fn open(&mut self, a: &RunArgs, run_dir: &Path, run_id: &str) -> Result<()> {
        let mut target = match self.place.take().expect("checked before") {
            Where::Throwaway { bins, who } => {
                let mut s = server::Server::create(
                    &bins,
                    who,
                    &run_dir.join("mysql"),
                    a.sessions,
                    &a.mysql_set,
                )?;
                // Updates measure page writes, not each commit's log sync (as PostgreSQL's
                // synchronous_commit = off): the user's setting wins.
                let shape = a.test.and_then(|t| crate::database::shape::row(t, a.sync));
                if shape.is_some_and(|r| r.shape == Shape::Update) {
                    s.default_setting("innodb_flush_log_at_trx_commit", "2", &a.mysql_set);
                }
                s.start()?;
                let t = s.target();
                self.server = Some(s);
                t
            }
            Where::Existing { target } => target,
        };
        let mut conn = target.connect("--mysql")?;
        let checked = connect::check_server(&mut conn, &target, "--mysql")?;
        self.private = Some(private::Private::create(&target, run_id)?);
        self.checked = Some(checked);
        self.target = Some(target);
        self.conn = Some(conn);
        Ok(())
    }

    fn load(&mut self, spec: &Spec, stop: &AtomicBool) -> Result<Loaded> {
        let db = self.db();
        let mut notes = Vec::new();
        if matches!(spec.shape, Shape::Commit | Shape::Copy) {
            let bulk = spec.shape == Shape::Copy;
            load::write_tables(self.conn(), &db, spec.sessions, bulk)?;
        } else {
            load::blocks(self.conn(), &db, spec.rows, stop)?;
        }
        self.make_cold(spec.shape, &mut notes)?;
        if let Some(c) = &self.checked
            && !c.process
            && self.server.is_none()
        {
            notes.push("--mysql: the user has no PROCESS privilege: INNODB_METRICS is not read (commits are counted from the committing statements)".into());
        }
        if spec.shape.row().reads
            && self.pool_bytes > 0
            && self.pool_bytes * 4 > spec.rows * spec.page
        {
            notes.push(format!(
                "the buffer pool ({}) is more than a quarter of the table: many reads are answered from it; a larger --size keeps it out",
                crate::units::size_label(self.pool_bytes)
            ));
        }
        let (cache, files) = self.cache_control(spec);
        Ok(Loaded {
            cache,
            notes,
            alongside: files.map(|files| {
                Box::new(move |over: &AtomicBool| {
                    crate::database::pg::load::drop_pages_until(&files, over)
                }) as crate::database::Alongside
            }),
        })
    }

    fn observer(&mut self) -> Result<Box<dyn DbObserver>> {
        let target = self.target.as_ref().expect("opened before");
        let (pid, aio) = match &self.server {
            Some(s) => (s.pid(), s.aio_in_use()),
            None => (None, None),
        };
        Ok(Box::new(observe::Observer::connect(
            target,
            pid,
            self.server.is_some(),
            aio,
        )?))
    }

    fn session(&mut self, spec: &Spec, id: u32) -> Result<Box<dyn Requester>> {
        let db = self.db();
        let c = self
            .target
            .as_mut()
            .expect("opened before")
            .connect("--mysql")?;
        Ok(Box::new(workloads::Session::new(c, spec, &db, id)?))
    }

    fn event(&self, shape: Shape) -> &'static str {
        event_name(shape)
    }

    fn session_settings(&self, spec: &Spec) -> Vec<(String, String)> {
        workloads::session_set(spec)
    }

    fn facts(&self) -> Facts {
        let target = match (&self.data_dir, &self.server) {
            (Some(d), Some(_)) => d.display().to_string(),
            _ => self
                .target
                .as_ref()
                .map(Target::describe)
                .unwrap_or_default(),
        };
        let mut settings = vec![format!(
            "server: {}",
            self.checked.as_ref().map_or("?", |c| c.version.as_str())
        )];
        if !self.flush_method.is_empty() {
            settings.push(format!("innodb_flush_method = {}", self.flush_method));
        }
        if let Some(s) = &self.server {
            for (n, v) in &s.settings {
                settings.push(format!("--{n}={v}"));
            }
        }
        Facts {
            target,
            settings,
            table: format!("{}.blocks", self.db()),
            fill_method: "INSERT ... SELECT (recursive CTE), 500 rows a statement".into(),
            data_directory: self.data_dir.clone(),
        }
    }

    fn close(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        self.conn = None;
        if let Some(mut p) = self.private.take()
            && let Err(e) = p.drop_now()
        {
            if self.server.is_some() {
                p.goes_with_the_server();
                notes.push(format!(
                    "database {} could not be dropped ({e}); it goes with the throwaway server",
                    p.name
                ));
            } else {
                notes.push(format!(
                "database {} could not be dropped ({e}); it is noted as left behind: `dbio doctor` names it, `dbio clean --stale` or `dbio mysql clean` drops it",
                p.name
            ));
            }
        }
        self.server = None;
        notes
    }
}

/// The event a shape's statements are named after: what MariaDB/MySQL users read in
/// performance_schema (`wait/io/file/innodb/innodb_data_file`, ...), with the operation.
pub fn event_name(shape: Shape) -> &'static str {
    match shape {
        Shape::Lookup | Shape::Batch | Shape::Scan => "wait/io/file/innodb/innodb_data_file read",
        Shape::Update => "wait/io/table/sql/handler update",
        Shape::Copy => "wait/io/table/sql/handler insert",
        Shape::Commit => "wait/io/file/innodb/innodb_log_file sync",
    }
}

/// What MariaDB/MySQL saw, for a compare: read from the database side's `mysql` section.
pub fn seen(r: &crate::report::RunResult) -> Option<crate::database::Seen> {
    let m = r.mysql.as_ref()?;
    let read_wait_us = m
        .data_file()
        .filter(|f| f.reads > 0 && m.innodb.read_ahead_pages * 2 < f.reads)
        .and_then(|f| f.mean_read_us);
    // InnoDB's own counters over the interval, per second: pages read (read-ahead
    // included) and written, buffer pool hits, commits.
    let per_s = |x: f64| (m.interval_s > 0.0).then(|| x / m.interval_s);
    let page = m
        .setting("innodb_page_size")
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(16384.0);
    let i = &m.innodb;
    let requests = m.deltas.get("status.Innodb_buffer_pool_read_requests");
    Some(crate::database::Seen {
        name: if m.server.mariadb { "MariaDB" } else { "MySQL" },
        short: "InnoDB",
        read_wait_us,
        reads_per_s: per_s(i.pages_read as f64),
        read_mib_per_s: per_s(i.pages_read as f64 * page / 1048576.0),
        writes_per_s: per_s(i.pages_written as f64),
        write_mib_per_s: per_s(i.pages_written as f64 * page / 1048576.0),
        hits_per_s: requests.and_then(|r| per_s((r - i.pages_read as f64).max(0.0))),
        commits_per_s: (i.commits > 0).then_some(i.commits_per_s),
        flush_wait_us: None,
        cautions: m.cautions.clone(),
        findings: m.findings.clone(),
        data_directory: m.server.data_directory.clone(),
        sections: crate::report::sections::mysql_sections(m),
        storage: storage_shape(m),
    })
}

/// InnoDB's shapes (`--like innodb`) with the server's flush method as the io mode and its
/// doublewrite: what a compare's storage side runs.
pub fn storage_shape(
    m: &crate::report::result_mysql::MysqlSection,
) -> crate::database::StorageShape {
    use crate::engine::IoMode;
    let mut cautions = Vec::new();
    let method = m.setting("innodb_flush_method").unwrap_or("");
    let io_mode = match method.to_ascii_lowercase().as_str() {
        // littlesync opens and syncs as fsync does (strace, MariaDB 10.11).
        "fsync" | "littlesync" | "0" => Some(IoMode::Fsync),
        "o_dsync" | "1" => Some(IoMode::ODsync),
        "o_direct" | "4" => Some(IoMode::ODirect),
        "o_direct_no_fsync" | "5" => Some(IoMode::ODirectNoFsync),
        _ => {
            cautions.push(format!(
                "innodb_flush_method={method}: dbio does not model it; the storage side ran InnoDB's default, O_DIRECT"
            ));
            None
        }
    };
    if !m.server.mariadb && io_mode.is_some() {
        cautions.push(format!(
            "the storage side opens and syncs files as MariaDB 10.11 does with innodb_flush_method={method}; MySQL 8 keeps its redo log buffered and fsyncs it"
        ));
    }
    let doublewrite = m
        .setting("innodb_doublewrite")
        .map(|v| !matches!(v.to_ascii_lowercase().as_str(), "off" | "0"));
    crate::database::StorageShape {
        like: crate::workload::event::Like::Innodb,
        io_mode,
        doublewrite,
        wal_per_commit: None,
        cautions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_named_after_performance_schemas_instruments() {
        assert_eq!(
            event_name(Shape::Lookup),
            "wait/io/file/innodb/innodb_data_file read"
        );
        assert_eq!(
            event_name(Shape::Commit),
            "wait/io/file/innodb/innodb_log_file sync"
        );
    }

    #[test]
    fn the_storage_side_runs_innodbs_shapes_as_the_server_ran() {
        use crate::engine::IoMode;
        use crate::report::result_mysql::MysqlSection;
        let server = |method: &str, dw: &str| {
            let mut m = MysqlSection::default();
            m.server.mariadb = true;
            m.server.settings = vec![
                ("innodb_flush_method".into(), method.into()),
                ("innodb_doublewrite".into(), dw.into()),
            ];
            storage_shape(&m)
        };
        let s = server("fsync", "OFF");
        assert_eq!(s.like, crate::workload::event::Like::Innodb);
        assert_eq!(
            (s.io_mode, s.doublewrite),
            (Some(IoMode::Fsync), Some(false))
        );
        assert!(s.cautions.is_empty(), "{:?}", s.cautions);
        let s = server("O_DIRECT_NO_FSYNC", "ON");
        assert_eq!(
            (s.io_mode, s.doublewrite),
            (Some(IoMode::ODirectNoFsync), Some(true))
        );
        // A method dbio does not model is said, and the shapes' default is run.
        let s = server("nosync", "ON");
        assert_eq!(s.io_mode, None);
        assert!(
            s.cautions[0].contains("innodb_flush_method=nosync"),
            "{:?}",
            s.cautions
        );
    }
}
