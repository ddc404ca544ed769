//! What the server saw while a test ran: an [`Observer`] on connections of its own takes a
//! snapshot of the counters at the measured window's two edges — SHOW GLOBAL STATUS,
//! INNODB_METRICS, performance_schema's file summaries, and `/proc/<pid>/io` of a
//! throwaway server — and samples performance_schema's threads and current waits in
//! between (the ASH). It only reads: no setting changed, no counter reset, no consumer
//! switched on (a server without `events_waits_current` is said to have no wait profile).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Instant;

use mysql::Conn;
use mysql::prelude::Queryable;

use crate::database::pg::observe::sampler::Tally;
use crate::error::{Error, Result};
use crate::report::result_mysql::{MysqlFileIo, MysqlSection, MysqlServer, MysqlWait};

use super::connect::{Target, error_text};

/// Samples per second.
const HZ: u32 = 100;

/// The global variables recorded with every run (those the server has).
pub const SETTINGS: &[&str] = &[
    "innodb_page_size",
    "innodb_buffer_pool_size",
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_use_native_aio",
    "innodb_linux_aio",
    "innodb_flush_log_at_trx_commit",
    "innodb_log_file_size",
    "innodb_log_write_ahead_size",
    "innodb_log_file_buffering",
    "innodb_data_file_buffering",
    "innodb_read_ahead_threshold",
    "innodb_random_read_ahead",
    "innodb_io_capacity",
    "innodb_flush_neighbors",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    "innodb_use_fdatasync",
    "performance_schema",
    "datadir",
    "max_connections",
];

/// The status counters kept (deltas).
const STATUS: &[&str] = &[
    "Innodb_data_reads",
    "Innodb_data_read",
    "Innodb_data_writes",
    "Innodb_data_written",
    "Innodb_data_fsyncs",
    "Innodb_pages_read",
    "Innodb_pages_written",
    "Innodb_pages_created",
    "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_read_requests",
    "Innodb_buffer_pool_read_ahead",
    "Innodb_buffer_pool_pages_flushed",
    "Innodb_buffer_pool_pages_lru_flushed",
    "Innodb_dblwr_pages_written",
    "Innodb_dblwr_writes",
    "Innodb_log_writes",
    "Innodb_log_write_requests",
    "Innodb_log_waits",
    "Innodb_os_log_written",
    "Innodb_os_log_fsyncs",
    "Com_insert",
    "Com_update",
    "Com_delete",
    "Com_commit",
    "Com_select",
];

/// The INNODB_METRICS counters kept (when enabled and readable).
const METRICS: &[&str] = &[
    "trx_rw_commits",
    "innodb_dblwr_pages_written",
    "innodb_dblwr_writes",
    "os_data_reads",
    "os_data_writes",
    "os_data_fsyncs",
    "log_writes",
];

/// The sampler's query: every thread but the sampler's own, with its current waits,
/// innermost last.
const SAMPLE_SQL: &str = "SELECT t.THREAD_ID, t.NAME, t.TYPE, t.PROCESSLIST_COMMAND, t.PROCESSLIST_STATE, \
     w.EVENT_NAME, w.END_EVENT_ID IS NULL \
     FROM performance_schema.threads t LEFT JOIN performance_schema.events_waits_current w USING (THREAD_ID) \
     WHERE t.PROCESSLIST_ID IS NULL OR t.PROCESSLIST_ID <> CONNECTION_ID() \
     ORDER BY t.THREAD_ID, w.EVENT_ID";

/// Every counter at one instant: `status.X`, `metrics.X`, `pfs.<instrument>.<column>`,
/// `proc.<field>`.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub at: Option<Instant>,
    pub values: BTreeMap<String, f64>,
}

/// Reads every counter on `c`; `pid`: the server's process when dbio may read its I/O.
fn snapshot(c: &mut Conn, pid: Option<u32>, pfs: bool) -> std::result::Result<Snapshot, String> {
    let mut values = BTreeMap::new();
    let status: Vec<(String, String)> =
        c.query("SHOW GLOBAL STATUS").map_err(|e| error_text(&e))?;
    for (n, v) in status {
        if let Some(k) = STATUS.iter().find(|k| k.eq_ignore_ascii_case(&n))
            && let Ok(v) = v.parse::<f64>()
        {
            values.insert(format!("status.{k}"), v);
        }
    }
    // MariaDB says whether a counter is enabled in ENABLED (1), MySQL in STATUS.
    let names = METRICS
        .iter()
        .map(|m| format!("'{m}'"))
        .collect::<Vec<_>>()
        .join(",");
    let metrics: std::result::Result<Vec<(String, i64)>, _> = c
        .query(format!(
            "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE NAME IN ({names}) AND ENABLED = 1"
        ))
        .or_else(|_| {
            c.query(format!(
                "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS WHERE NAME IN ({names}) AND STATUS = 'enabled'"
            ))
        });
    if let Ok(rows) = metrics {
        for (n, count) in rows {
            values.insert(format!("metrics.{n}"), count as f64);
        }
    }
    if pfs {
        type Row = (String, u64, u64, u64, u64, u64, u64, u64);
        let rows: Vec<Row> = c
            .query(
                "SELECT EVENT_NAME, COUNT_READ, COUNT_WRITE, COUNT_MISC, SUM_NUMBER_OF_BYTES_READ, \
                 SUM_NUMBER_OF_BYTES_WRITE, SUM_TIMER_READ, SUM_TIMER_WRITE \
                 FROM performance_schema.file_summary_by_event_name WHERE EVENT_NAME LIKE 'wait/io/file/innodb/%'",
            )
            .map_err(|e| error_text(&e))?;
        for (n, r, w, m, rb, wb, tr, tw) in rows {
            for (col, v) in [
                ("count_read", r),
                ("count_write", w),
                ("count_misc", m),
                ("bytes_read", rb),
                ("bytes_write", wb),
                ("timer_read", tr),
                ("timer_write", tw),
            ] {
                values.insert(format!("pfs.{n}.{col}"), v as f64);
            }
        }
    }
    if let Some(pid) = pid
        && let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/io"))
    {
        for l in text.lines() {
            if let Some((k, v)) = l.split_once(':')
                && let Ok(v) = v.trim().parse::<f64>()
            {
                values.insert(format!("proc.{k}"), v);
            }
        }
    }
    Ok(Snapshot {
        at: Some(Instant::now()),
        values,
    })
}

/// One thread's row of a sample, reduced to what it counts under: None for an idle
/// session or a background thread with no wait in progress; else (thread, kind, event).
pub fn classify<'a>(
    name: &'a str,
    foreground: bool,
    command: Option<&str>,
    state: Option<&'a str>,
    waiting: Option<&'a str>,
) -> Option<(&'a str, &'static str, &'a str)> {
    let thread = if foreground { "connection" } else { name };
    if foreground && matches!(command, None | Some("Sleep" | "Daemon" | "Binlog Dump")) {
        return None;
    }
    match waiting {
        Some(e) if e != "idle" => Some((thread, "wait", e)),
        _ if foreground => Some((
            thread,
            "state",
            state.filter(|s| !s.is_empty()).unwrap_or("CPU"),
        )),
        _ => None,
    }
}

type SampleRow = (
    u64,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
);

/// Samples on `c` at `hz` until `stop`; returns the tally, the seconds sampled and a
/// failure's text.
fn sample(mut c: Conn, hz: u32, stop: Arc<AtomicBool>) -> (Tally, f64, Option<String>) {
    let mut tally = Tally::default();
    let start = Instant::now();
    let stmt = match c.prep(SAMPLE_SQL) {
        Ok(s) => s,
        Err(e) => return (tally, 0.0, Some(error_text(&e))),
    };
    let (seconds, failure) = crate::database::sample_until(start, hz, &stop, |taken| {
        let rows: Vec<SampleRow> = c.exec(&stmt, ()).map_err(|e| error_text(&e))?;
        tally.sample_ns += taken.elapsed().as_nanos() as u64;
        tally.begin_sample((taken - start).as_secs() as u32);
        let mut i = 0;
        while i < rows.len() {
            let id = rows[i].0;
            let mut j = i;
            let mut waiting: Option<&str> = None;
            while j < rows.len() && rows[j].0 == id {
                if rows[j].6 == Some(1) {
                    waiting = rows[j].5.as_deref();
                }
                j += 1;
            }
            let r = &rows[i];
            if let Some((thread, kind, event)) = classify(
                &r.1,
                r.2 == "FOREGROUND",
                r.3.as_deref(),
                r.4.as_deref(),
                waiting,
            ) {
                tally.row(thread, Some(kind), Some(event), Some("active"));
            }
            i = j;
        }
        Ok(())
    });
    (tally, seconds, failure)
}

/// Watches a server while a test runs.
pub struct Observer {
    main: Conn,
    sampler_conn: Option<Conn>,
    server: MysqlServer,
    pid: Option<u32>,
    pfs: bool,
    /// Why there is no wait profile, when there is none.
    no_waits: Option<String>,
    first: Option<Snapshot>,
    last: Option<Snapshot>,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<(Tally, f64, Option<String>)>>,
    failed: Option<String>,
}

impl Observer {
    /// Connects twice (snapshots, samples) and reads the server's facts. `pid`: a
    /// throwaway server's process; `aio`: what its log said of asynchronous I/O.
    pub fn connect(
        target: &Target,
        pid: Option<u32>,
        throwaway: bool,
        aio: Option<String>,
    ) -> Result<Observer> {
        let mut t = target.clone();
        let mut main = t.connect("--mysql")?;
        let server = facts(&mut main, throwaway, aio)?;
        let pfs = server
            .settings
            .iter()
            .any(|(n, v)| n == "performance_schema" && (v == "ON" || v == "1"));
        let mut no_waits = None;
        let mut sampler_conn = None;
        if !pfs {
            no_waits = Some("performance_schema is off on this server: no wait profile and no file I/O by instrument".into());
        } else {
            let consumer: std::result::Result<Option<String>, _> = main.query_first(
                "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'events_waits_current'",
            );
            match consumer {
                Ok(Some(v)) if v == "YES" => sampler_conn = Some(t.connect("--mysql")?),
                Ok(_) => no_waits = Some("performance_schema's events_waits_current consumer is off: no wait profile (dbio does not switch it on)".into()),
                Err(e) => no_waits = Some(format!("performance_schema is not readable by this user ({}): no wait profile", error_text(&e))),
            }
        }
        Ok(Observer {
            main,
            sampler_conn,
            server,
            pid,
            pfs: pfs
                && no_waits
                    .as_deref()
                    .is_none_or(|w| !w.contains("not readable")),
            no_waits,
            first: None,
            last: None,
            stop: Arc::new(AtomicBool::new(false)),
            sampler: None,
            failed: None,
        })
    }

    fn begin(&mut self) {
        match snapshot(&mut self.main, self.pid, self.pfs) {
            Ok(s) => self.first = Some(s),
            Err(e) => {
                self.failed = Some(format!("reading the counters: {e}"));
                return;
            }
        }
        if let Some(c) = self.sampler_conn.take() {
            let flag = Arc::clone(&self.stop);
            match std::thread::Builder::new()
                .name("dbio-mysql-sampler".into())
                .spawn(move || sample(c, HZ, flag))
            {
                Ok(h) => self.sampler = Some(h),
                Err(e) => self.failed = Some(format!("starting the wait sampler: {e}")),
            }
        }
    }

    fn end(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if self.first.is_some() && self.last.is_none() {
            match snapshot(&mut self.main, self.pid, self.pfs) {
                Ok(s) => self.last = Some(s),
                Err(e) => self.failed = Some(format!("reading the counters: {e}")),
            }
        }
    }

    fn section(mut self, asked: &crate::database::Asked) -> Result<MysqlSection> {
        self.end();
        if let Some(f) = self.failed.take() {
            return Err(Error::other(format!("MariaDB: {f}")));
        }
        let (Some(first), Some(last)) = (self.first.take(), self.last.take()) else {
            return Err(Error::other("MariaDB: the observer never began"));
        };
        let (tally, seconds, failure) = match self.sampler.take() {
            Some(h) => h
                .join()
                .map_err(|_| Error::other("the wait sampler panicked"))?,
            None => (Tally::default(), 0.0, None),
        };
        let (waits, ash, sampler) = tally.finish(HZ, seconds);
        let waits = waits
            .into_iter()
            .map(|w| MysqlWait {
                thread: w.backend_type,
                kind: w.wait_event_type,
                event: w.wait_event,
                samples: w.samples,
                pct: w.pct,
                time_s: w.time_s,
            })
            .collect();
        let interval_s = match (first.at, last.at) {
            (Some(a), Some(b)) => (b - a).as_secs_f64(),
            _ => 0.0,
        };
        let deltas: BTreeMap<String, f64> = last
            .values
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    (v - first.values.get(k).copied().unwrap_or(0.0)).max(0.0),
                )
            })
            .collect();
        let mut section = MysqlSection {
            server: self.server,
            session_set: asked
                .session_set
                .iter()
                .map(|(k, v)| format!("{k} = {v}"))
                .collect(),
            cache: asked.cache.describe(),
            interval_s,
            sampler,
            waits,
            ash,
            files: files(&deltas, interval_s),
            innodb: super::findings::innodb(&deltas, interval_s),
            deltas,
            findings: Vec::new(),
            cautions: Vec::new(),
        };
        let (found, mut cautions) = super::findings::findings(&section, asked);
        if let Some(w) = self.no_waits {
            cautions.push(w);
        }
        if let Some(f) = failure {
            cautions.push(format!("sampling performance_schema stopped: {f}"));
        }
        section.findings = found;
        section.cautions = cautions;
        Ok(section)
    }
}

/// The file I/O per instrument, from the deltas.
fn files(d: &BTreeMap<String, f64>, interval_s: f64) -> Vec<MysqlFileIo> {
    let mut names: Vec<&str> = d
        .keys()
        .filter_map(|k| k.strip_prefix("pfs.")?.strip_suffix(".count_read"))
        .collect();
    names.sort_unstable();
    let per_s = |v: u64| {
        if interval_s > 0.0 {
            v as f64 / interval_s
        } else {
            0.0
        }
    };
    names
        .into_iter()
        .map(|n| {
            let get = |c: &str| d.get(&format!("pfs.{n}.{c}")).copied().unwrap_or(0.0) as u64;
            let (reads, writes) = (get("count_read"), get("count_write"));
            // Timers are picoseconds.
            let mean = |t: u64, n: u64| (n > 0).then(|| t as f64 / n as f64 / 1e6);
            MysqlFileIo {
                event: n.to_string(),
                reads,
                writes,
                misc: get("count_misc"),
                read_bytes: get("bytes_read"),
                write_bytes: get("bytes_write"),
                reads_per_s: per_s(reads),
                writes_per_s: per_s(writes),
                mean_read_us: mean(get("timer_read"), reads),
                mean_write_us: mean(get("timer_write"), writes),
            }
        })
        .filter(|f| f.reads + f.writes + f.misc > 0)
        .collect()
}

/// The server's version and the settings that shape a run.
fn facts(c: &mut Conn, throwaway: bool, aio: Option<String>) -> Result<MysqlServer> {
    let version: Option<String> = c
        .query_first("SELECT VERSION()")
        .map_err(|e| Error::other(format!("MariaDB: {}", error_text(&e))))?;
    let version = version.unwrap_or_default();
    let rows: Vec<(String, String)> = c
        .query(format!(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN ({})",
            SETTINGS
                .iter()
                .map(|m| format!("'{m}'"))
                .collect::<Vec<_>>()
                .join(",")
        ))
        .map_err(|e| Error::other(format!("MariaDB: reading the settings: {}", error_text(&e))))?;
    let mut settings: Vec<(String, String)> = Vec::new();
    let mut data_directory = None;
    for name in SETTINGS {
        if let Some((n, v)) = rows.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
            if *name == "datadir" {
                data_directory = Some(v.trim_end_matches('/').to_string());
            } else {
                settings.push((n.to_ascii_lowercase(), v.clone()));
            }
        }
    }
    Ok(MysqlServer {
        mariadb: version.to_ascii_lowercase().contains("mariadb"),
        version,
        throwaway,
        data_directory,
        aio_in_use: aio,
        settings,
    })
}

impl crate::run::requester::Observer for Observer {
    fn window_started(&mut self) {
        self.begin();
    }

    fn window_ended(&mut self) {
        self.end();
    }
}

impl crate::database::DbObserver for Observer {
    fn finish(
        self: Box<Self>,
        asked: &crate::database::Asked,
        result: &mut crate::report::RunResult,
    ) -> Result<()> {
        result.mysql = Some(self.section(asked)?);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_sessions_and_idle_background_threads_are_not_db_time() {
        assert_eq!(
            classify("thread/sql/one_connection", true, Some("Sleep"), None, None),
            None
        );
        assert_eq!(
            classify("thread/innodb/page_cleaner_thread", false, None, None, None),
            None
        );
        assert_eq!(
            classify(
                "thread/sql/one_connection",
                true,
                Some("Execute"),
                Some("Statistics"),
                Some("wait/io/file/innodb/innodb_data_file")
            ),
            Some(("connection", "wait", "wait/io/file/innodb/innodb_data_file"))
        );
        assert_eq!(
            classify(
                "thread/sql/one_connection",
                true,
                Some("Execute"),
                Some("Commit"),
                None
            ),
            Some(("connection", "state", "Commit"))
        );
        assert_eq!(
            classify(
                "thread/innodb/page_cleaner_thread",
                false,
                None,
                None,
                Some("wait/io/file/innodb/innodb_data_file")
            ),
            Some((
                "thread/innodb/page_cleaner_thread",
                "wait",
                "wait/io/file/innodb/innodb_data_file"
            ))
        );
        assert_eq!(
            classify(
                "thread/sql/one_connection",
                true,
                Some("Query"),
                None,
                Some("idle")
            ),
            Some(("connection", "state", "CPU"))
        );
    }
}
