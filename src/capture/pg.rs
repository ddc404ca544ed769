//! A live PostgreSQL, sampled read-only: `--samples` intervals of `--interval` each, the
//! statistics PostgreSQL keeps (`pg_stat_io` on 16+, else `pg_stat_database`,
//! `pg_stat_bgwriter`, `pg_stat_wal`) turned into the classes of a job: data file reads as
//! single-block reads, data file writes as DBWR's batches, commits as log file sync with
//! their WAL. Nothing is created or changed on the server: the observer of `dbio pg` only
//! reads views (and asks its own backend to flush its counters).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{Capture, Class, Figure, Origin};
use crate::database::pg::observe::{CacheControl, Observer, RunContext};
use crate::error::{Error, Result};
use crate::report::result_pg::PgSection;
use crate::workload::Event;

/// How often a wait for the server looks at the stop flag.
const LOOK: Duration = Duration::from_millis(50);

/// Runs `step` (which may wait on the server: connecting, a first query) on a thread of
/// its own, waiting for it while no signal came: a signal ends the wait at once, with the
/// step left to end with the process. `what` says what was being done.
fn unless_stopped<T: Send + 'static>(
    stop: &AtomicBool,
    what: &str,
    step: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("dbio-from-pg".into())
        .spawn(move || {
            let _ = tx.send(step());
        })
        .map_err(|e| Error::other(format!("cannot start a thread: {e}")))?;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(stopped(what));
        }
        match rx.recv_timeout(LOOK) {
            Ok(r) => return r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(Error::other(format!("{what}: the thread doing it ended")));
            }
        }
    }
}

/// The error of a signal: no job is written (exit 130).
fn stopped(what: &str) -> Error {
    Error::Interrupted(format!("interrupted {what}; no job written"))
}

/// Samples the server `url` names (`None`: the PG* environment alone). A signal stops it
/// within a fraction of a second while it samples (starting and ending each sample
/// included; the first connection is bounded by the connect timeout), and no job is
/// written: a sample cut short is not one.
pub fn read(
    url: Option<&str>,
    interval: Duration,
    samples: u32,
    stop: &AtomicBool,
) -> Result<Vec<Capture>> {
    let mut config = crate::database::pg::connect::config(url.unwrap_or(""))?;
    let name = crate::database::pg::connect::describe(&config);
    // An unreachable server or an old one is bad input, refused before anything is sampled.
    // On this thread: connecting may ask for a password on the terminal (which a signal
    // must not leave without echo); the server's connect timeout bounds it.
    let mut client = crate::database::pg::connect::connect(&mut config, "--pg")?;
    let version: i32 = client
        .query_one("SELECT current_setting('server_version_num')::int", &[])
        .map_err(|e| {
            Error::usage(format!(
                "--pg {name}: {}",
                crate::database::pg::connect::error_text(&e)
            ))
        })?
        .get(0);
    drop(client);
    if version < crate::database::pg::connect::MIN_VERSION_NUM {
        return Err(Error::usage(format!(
            "--pg {name}: PostgreSQL {version} is older than 15, whose statistics dbio reads"
        )));
    }
    if stop.load(Ordering::Relaxed) {
        return Err(stopped("while connecting to the server"));
    }
    let ctx = RunContext {
        test: "from-pg".into(),
        asynchronous: false,
        depth: 0,
        sessions: 0,
        session_set: Vec::new(),
        cache: CacheControl::NotControlled("a server dbio only watches".into()),
        mean_read_us: None,
        load_continues: true,
    };
    let mut captures = Vec::new();
    for n in 1..=samples {
        let at = format!("in sample {n} of {samples}");
        let c = config.clone();
        let observer = unless_stopped(stop, &at, move || Observer::start(&c, 100))?;
        let started = Instant::now();
        let end = started + interval;
        while Instant::now() < end {
            if stop.load(Ordering::Relaxed) {
                // Cut short: not a sample. The observer's connection ends with the process.
                return Err(stopped(&format!(
                    "{at} after {:.1} s of {}",
                    started.elapsed().as_secs_f64(),
                    crate::units::duration_label(interval)
                )));
            }
            std::thread::sleep(LOOK.min(end.saturating_duration_since(Instant::now())));
        }
        let ctx = ctx.clone();
        let section = unless_stopped(stop, &at, move || observer.finish(&ctx))?;
        eprintln!(
            "dbio: sample {n} of {samples}: {:.0} s of {name}",
            section.interval_s
        );
        captures.push(capture(&name, n, &section));
    }
    if captures.iter().all(|c| c.classes.is_empty()) {
        return Err(Error::usage(format!(
            "--pg {name}: the server did no I/O and committed nothing while it was sampled"
        )));
    }
    Ok(captures)
}

/// One sample as a capture.
fn capture(name: &str, n: u32, s: &PgSection) -> Capture {
    let origin = |what: String| Origin {
        file: name.to_string(),
        line: 0,
        what,
    };
    let secs = s.interval_s.max(1e-9);
    let mut classes = Vec::new();
    // Data file reads and writes, summed over the backend types that did them.
    for (op, event) in [
        ("read", Event::DbFileSequentialRead),
        ("write", Event::DbFileParallelWrite),
    ] {
        let rows: Vec<_> = (s.io.iter())
            .filter(|i| i.object == "relation" && i.op == op && i.ops > 0)
            .collect();
        let ops: u64 = rows.iter().map(|i| i.ops).sum();
        if ops == 0 {
            continue;
        }
        let who = rows
            .iter()
            .map(|i| format!("{} {}", i.backend_type, i.source))
            .collect::<Vec<_>>()
            .join(", ");
        let bytes: Option<f64> = {
            let known: Vec<_> = rows.iter().filter_map(|i| i.bytes).collect();
            (known.len() == rows.len()).then(|| known.iter().sum::<u64>() as f64 / ops as f64)
        };
        let waited: Vec<(u64, f64)> = (rows.iter())
            .filter_map(|i| i.mean_wait_ms.map(|m| (i.ops, m)))
            .collect();
        let mean = (!waited.is_empty()).then(|| {
            let n: u64 = waited.iter().map(|w| w.0).sum();
            waited.iter().map(|(o, m)| *o as f64 * m).sum::<f64>() / n as f64
        });
        classes.push(Class {
            event,
            per_s: Figure {
                value: ops as f64 / secs,
                origin: origin(format!("sample {n}: relation {op}s ({who}) / {secs:.1} s")),
            },
            bytes: Some(Figure {
                value: bytes.unwrap_or(8192.0),
                origin: origin(if bytes.is_some() {
                    format!("sample {n}: bytes per {op}")
                } else {
                    format!("sample {n}: PostgreSQL's page, 8K")
                }),
            }),
            batch: None,
            mean_ms: mean.map(|m| Figure {
                value: m,
                origin: origin(format!("sample {n}: {op} time / {op}s (track_io_timing)")),
            }),
            p99_ms: None,
            guessed: false,
        });
    }
    // Commits and their WAL.
    let w = &s.wal;
    if w.commits > 0 {
        classes.push(Class {
            event: Event::LogFileSync,
            per_s: Figure {
                value: w.commits as f64 / secs,
                origin: origin(format!(
                    "sample {n}: pg_stat_database.xact_commit (read-only transactions included) / {secs:.1} s"
                )),
            },
            bytes: (w.bytes > 0).then(|| Figure {
                value: w.bytes as f64 / w.commits as f64,
                origin: origin(format!("sample {n}: WAL bytes / commits")),
            }),
            batch: None,
            mean_ms: w.mean_sync_ms.map(|m| Figure {
                value: m,
                origin: origin(format!("sample {n}: {} time / WAL flushes", w.sync_event)),
            }),
            p99_ms: None,
            guessed: false,
        });
    }
    Capture {
        file: name.to_string(),
        kind: format!("PostgreSQL {}, sample {n}", s.server.version),
        seconds: Some(Figure {
            value: secs,
            origin: origin(format!("sample {n}")),
        }),
        block_size: Some(Figure {
            value: 8192.0,
            origin: origin("PostgreSQL's page".into()),
        }),
        classes,
    }
}
