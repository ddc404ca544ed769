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
use crate::workload::spec::RedoDurability;

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
    let (devices, cache) = data_devices(&mut client);
    // The server's processes, when it runs here: their share of the device's bytes.
    let postmaster = (!devices.is_empty())
        .then(|| postmaster_of(&mut client))
        .flatten();
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
        // The devices' own counters over the same interval: what the storage did.
        let mut os =
            (!devices.is_empty()).then(|| crate::measure::os::OsSampler::start(devices.clone()));
        let io_before = postmaster.map(server_io);
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
        let device = os.as_mut().and_then(|os| {
            os.sample(1);
            let top = &devices[0].0;
            let (r, w, seconds) = os.device_totals(top)?;
            let server = match (postmaster, &io_before) {
                (Some(pm), Some(before)) => Some(io_delta(before, &server_io(pm))),
                _ => None,
            };
            Some(Device {
                name: top.clone(),
                reads: r.device_requests,
                read_bytes: r.device_bytes,
                writes: w.device_requests,
                write_bytes: w.device_bytes,
                seconds,
                server,
                cache,
            })
        });
        let ctx = ctx.clone();
        let section = unless_stopped(stop, &at, move || observer.finish(&ctx))?;
        stderr_line!(
            "dbio: sample {n} of {samples}: {:.0} s of {name}",
            section.interval_s
        );
        captures.push(capture(&name, n, &section, device.as_ref()));
    }
    if captures.iter().all(|c| c.classes.is_empty()) {
        return Err(Error::usage(format!(
            "--pg {name}: the server did no I/O and committed nothing while it was sampled"
        )));
    }
    Ok(captures)
}

/// The block devices under the server's data directory, top layer first, and the top
/// one's cache, when this user may read the setting and the directory is on this machine;
/// else none.
fn data_devices(client: &mut postgres::Client) -> (Vec<(String, String)>, Option<Cache>) {
    let dir: Option<String> = client
        .query_one("SELECT current_setting('data_directory', true)", &[])
        .ok()
        .and_then(|r| r.get(0));
    let Some(dir) = dir.map(std::path::PathBuf::from).filter(|d| d.is_dir()) else {
        return (Vec::new(), None);
    };
    let (map, _) = crate::storage::survey(&dir, Some(8192));
    let nodes = map.all_devices();
    let cache = nodes.first().and_then(|n| {
        Some(Cache {
            volatile: n.queue.write_cache.as_deref()? == "write back",
            fua: n.queue.fua.unwrap_or(false),
        })
    });
    let devices = (nodes.iter())
        .map(|n| (n.name.clone(), n.layer.clone()))
        .collect();
    (devices, cache)
}

/// What the device's queue says of its cache (`/sys/block/<dev>/queue`): `write_cache`
/// "write back" (volatile: the kernel sends it flushes) and `fua`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cache {
    pub volatile: bool,
    pub fua: bool,
}

/// What the device under the data directory did over a sample (/proc/diskstats).
#[derive(Debug, Clone)]
pub struct Device {
    pub name: String,
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
    pub seconds: f64,
    /// The bytes the server's processes had read from and written to storage meanwhile
    /// (`/proc/<pid>/io` `read_bytes`, `write_bytes`), when they could be read: the device
    /// may serve others too, and only the server's share is the server's.
    pub server: Option<(u64, u64)>,
    /// Its cache, when its queue could be read: what a synchronous write costs it.
    pub cache: Option<Cache>,
}

impl Device {
    /// The server's share of the device's reads and writes (1 when it cannot be told).
    fn share(&self) -> (f64, f64) {
        let part = |server: u64, device: u64| {
            if device == 0 {
                1.0
            } else {
                (server as f64 / device as f64).min(1.0)
            }
        };
        match self.server {
            Some((r, w)) => (part(r, self.read_bytes), part(w, self.write_bytes)),
            None => (1.0, 1.0),
        }
    }
}

/// The postmaster's process id, from the parent of this connection's backend (a server on
/// this machine).
fn postmaster_of(client: &mut postgres::Client) -> Option<u32> {
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .ok()?
        .get(0);
    ppid(pid as u32)
}

/// The parent of process `pid` (/proc/<pid>/stat, the field after the command's `)`).
fn ppid(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// `read_bytes` and `write_bytes` of the postmaster and each of its children, by pid.
fn server_io(postmaster: u32) -> Vec<(u32, u64, u64)> {
    let io = |pid: u32| -> Option<(u32, u64, u64)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
        let field = |name: &str| {
            (text.lines())
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().parse::<u64>().ok())
        };
        Some((pid, field("read_bytes:")?, field("write_bytes:")?))
    };
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid == postmaster || ppid(pid) == Some(postmaster))
        .filter_map(io)
        .collect()
}

/// What the server's processes read and wrote between two looks: a process there at
/// both counts its growth, one that started since counts all of it.
fn io_delta(before: &[(u32, u64, u64)], after: &[(u32, u64, u64)]) -> (u64, u64) {
    let (mut r, mut w) = (0, 0);
    for &(pid, r1, w1) in after {
        let (r0, w0) = before
            .iter()
            .find(|b| b.0 == pid)
            .map_or((0, 0), |b| (b.1, b.2));
        r += r1.saturating_sub(r0);
        w += w1.saturating_sub(w0);
    }
    (r, w)
}

/// The wait events of a log flush a committing session waits on (the flush itself, the
/// write before it, the lock of another session's flush that carries its commit).
const COMMIT_WAITS: &[&str] = &["WALSync", "WalSync", "WALWrite", "WalWrite"];

/// Sessions the sampler saw at once, on average: `client backend` rows (in `events`, or
/// all of them) per sample.
fn at_once(s: &PgSection, events: Option<&[&str]>) -> f64 {
    if s.sampler.samples == 0 {
        return 0.0;
    }
    let rows: u64 = (s.waits.iter())
        .filter(|w| w.backend_type == "client backend")
        .filter(|w| events.is_none_or(|e| e.contains(&w.wait_event.as_str())))
        .map(|w| w.samples)
        .sum();
    rows as f64 / s.sampler.samples as f64
}

/// The data writes a sample's job asks for, and what they were derived from.
///
/// The device's write requests are the WAL's and the data files'. A synchronous write costs
/// a device with a volatile cache more than one request as the kernel counts them: the
/// cache flush it sends is counted as a write of its own (no bytes). PostgreSQL's WAL is
/// written (`wal_write`) and then fdatasync'ed (`wal_sync`): one request per write, and one
/// flush per sync when the cache is volatile. What is left is the data files', written back
/// from the page cache (PostgreSQL's own count of buffers written is what it handed the page
/// cache, not what reached the device: merged, or still dirty). The job's data writes are
/// synchronous when dbio issues them (O_DSYNC, O_DIRECT): one request each, and a flush
/// besides when the cache is volatile and takes no FUA. So the data writes asked for are the
/// device's data requests divided by what one of dbio's costs: replayed beside the commits,
/// they ask of the device the writes it did. (Measured on ext4, both volatile without FUA:
/// 2.00 device writes per synchronous write on a loop device, 2.03–2.19 over virtio, the
/// rest there the file system's metadata; bench/pg-capture-replay.sh prints it per class.)
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DataWrites {
    /// The device's write requests over the interval (the server's share).
    pub device: f64,
    /// PostgreSQL's WAL writes and WAL syncs over it (`pg_stat_wal`).
    pub wal_writes: f64,
    pub wal_syncs: f64,
    /// The device's cache (`None`: unknown, taken as write-through: no flush requests).
    pub cache: Option<Cache>,
    /// The device's requests of the WAL: its writes, and a flush per sync when the cache
    /// is volatile.
    pub wal: f64,
    /// Device write requests one of dbio's synchronous data writes costs: 2 on a volatile
    /// cache without FUA (the write and a flush), else 1.
    pub per_write: f64,
    /// The data-write class's requests over the interval: the device's requests less the
    /// WAL's, divided by `per_write`.
    pub requests: f64,
}

/// [`DataWrites`] of an interval.
pub fn data_writes(
    device: f64,
    wal_writes: f64,
    wal_syncs: f64,
    cache: Option<Cache>,
) -> DataWrites {
    let volatile = cache.is_some_and(|c| c.volatile);
    let wal = wal_writes + if volatile { wal_syncs } else { 0.0 };
    let per_write = if volatile && !cache.is_some_and(|c| c.fua) {
        2.0
    } else {
        1.0
    };
    DataWrites {
        device,
        wal_writes,
        wal_syncs,
        cache,
        wal,
        per_write,
        requests: (device - wal).max(0.0) / per_write,
    }
}

impl DataWrites {
    /// How they were found, for the job's comment.
    fn said(&self, device: &str, share: &str, seconds: f64) -> String {
        let cache = match self.cache {
            Some(Cache {
                volatile: true,
                fua,
            }) => format!(
                "a volatile cache{} (/sys/block/{device}/queue): a flush per synchronous write, counted as a write",
                if fua { " with FUA" } else { " without FUA" }
            ),
            Some(_) => format!("a write-through cache (/sys/block/{device}/queue): no flushes"),
            None => "a cache not known here, taken as write-through: no flushes".into(),
        };
        format!(
            "device {device} writes {:.0}/s (/proc/diskstats){share}, less the WAL's {:.0}/s (its writes {:.0}/s{}, pg_stat_wal), ÷ {} device write{} per synchronous data write; {cache}",
            self.device / seconds,
            self.wal / seconds,
            self.wal_writes / seconds,
            if self.wal > self.wal_writes {
                format!(" and a flush per sync {:.0}/s", self.wal_syncs / seconds)
            } else {
                String::new()
            },
            self.per_write,
            if self.per_write == 1.0 { "" } else { "s" },
        )
    }
}

/// One sample as a capture: what the storage did (the device's own counters when the
/// data directory is on this machine: PostgreSQL counts a page the page cache had as a
/// read; its data writes what the device wrote less the WAL's, at what a synchronous
/// write costs it, [`DataWrites`]),
/// commits with the latency a commit waited, sessions as the sampler saw them.
pub fn capture(name: &str, n: u32, s: &PgSection, device: Option<&Device>) -> Capture {
    let origin = |what: String| Origin {
        file: name.to_string(),
        line: 0,
        what,
    };
    let secs = s.interval_s.max(1e-9);
    let mut classes = Vec::new();
    let w = &s.wal;
    for (op, event) in [
        ("read", Event::DbFileSequentialRead),
        ("write", Event::DbFileParallelWrite),
    ] {
        let rows: Vec<_> = (s.io.iter())
            .filter(|i| i.object == "relation" && i.op == op && i.ops > 0)
            .collect();
        let ops: u64 = rows.iter().map(|i| i.ops).sum();
        let who = rows
            .iter()
            .map(|i| format!("{} {}", i.backend_type, i.source))
            .collect::<Vec<_>>()
            .join(", ");
        let (per_s, bytes, rate_from, bytes_from) = match device {
            Some(d) if d.seconds > 0.0 && op == "read" => {
                // Only the server's share of the device's requests (the device may serve
                // others), at the device's request size.
                let (share, _) = d.share();
                let (count, b) = (d.reads as f64 * share, d.read_bytes as f64 * share);
                if count < 0.5 {
                    continue;
                }
                let pg = if ops > 0 {
                    format!(
                        "; PostgreSQL counted {:.0} reads/s ({who})",
                        ops as f64 / secs
                    )
                } else {
                    String::new()
                };
                let pg = if d.server.is_some() {
                    format!(
                        "; the server's processes' share {:.0}% (/proc/<pid>/io){pg}",
                        100.0 * share
                    )
                } else {
                    pg
                };
                (
                    count / d.seconds,
                    Some(b / count),
                    format!(
                        "sample {n}: device {} reads (/proc/diskstats) / {:.1} s{pg}",
                        d.name, d.seconds
                    ),
                    format!("sample {n}: device {} bytes per read", d.name),
                )
            }
            Some(d) if d.seconds > 0.0 => {
                let (_, share) = d.share();
                let at = d.seconds / secs;
                let dw = data_writes(
                    d.writes as f64 * share,
                    w.writes as f64 * at,
                    w.syncs as f64 * at,
                    d.cache,
                );
                if dw.requests < 0.5 {
                    continue;
                }
                let of_server = if d.server.is_some() {
                    format!(
                        ", the server's processes' share {:.0}% (/proc/<pid>/io)",
                        100.0 * share
                    )
                } else {
                    String::new()
                };
                let pg = if ops > 0 {
                    format!(
                        "; PostgreSQL counted {:.0} buffers written/s ({who})",
                        ops as f64 / secs
                    )
                } else {
                    String::new()
                };
                // The bytes of the device's data requests (the flushes carry none).
                let data_bytes = d.write_bytes as f64 * share - w.bytes as f64 * at;
                let data = dw.device - dw.wal;
                (
                    dw.requests / d.seconds,
                    (data_bytes > 0.0).then(|| data_bytes / data),
                    format!(
                        "sample {n}: {} / {:.1} s{pg}",
                        dw.said(&d.name, &of_server, d.seconds),
                        d.seconds
                    ),
                    format!(
                        "sample {n}: device {} bytes per data write (its bytes less the WAL's)",
                        d.name
                    ),
                )
            }
            _ => {
                if ops == 0 {
                    continue;
                }
                let bytes: Option<f64> = {
                    let known: Vec<_> = rows.iter().filter_map(|i| i.bytes).collect();
                    (known.len() == rows.len())
                        .then(|| known.iter().sum::<u64>() as f64 / ops as f64)
                };
                (
                    ops as f64 / secs,
                    bytes,
                    format!(
                        "sample {n}: relation {op}s ({who}) / {secs:.1} s (page-cache hits included: the data directory's device was not readable here)"
                    ),
                    format!("sample {n}: bytes per {op}"),
                )
            }
        };
        let waited: Vec<(u64, f64)> = (rows.iter())
            .filter_map(|i| i.mean_wait_ms.map(|m| (i.ops, m)))
            .collect();
        // PostgreSQL's read time includes its page-cache hits: a device's reads are
        // slower than its mean, so no limit is derived from it when the device counted.
        let mean = (!waited.is_empty() && (device.is_none() || op == "write")).then(|| {
            let n: u64 = waited.iter().map(|w| w.0).sum();
            waited.iter().map(|(o, m)| *o as f64 * m).sum::<f64>() / n as f64
        });
        let readers = at_once(s, Some(&["DataFileRead"]));
        classes.push(Class {
            event,
            per_s: Figure {
                value: per_s,
                origin: origin(rate_from),
            },
            bytes: Some(Figure {
                value: bytes.unwrap_or(8192.0),
                origin: origin(if bytes.is_some() {
                    bytes_from
                } else {
                    format!("sample {n}: PostgreSQL's page, 8K")
                }),
            }),
            batch: None,
            mean_ms: mean.filter(|m| *m > 0.0).map(|m| Figure {
                value: m,
                origin: origin(format!("sample {n}: {op} time / {op}s (track_io_timing)")),
            }),
            p99_ms: None,
            guessed: false,
            sessions: (op == "read" && readers > 0.0).then(|| Figure {
                value: readers,
                origin: origin(format!(
                    "sample {n}: sessions waiting DataFileRead per sample of pg_stat_activity"
                )),
            }),
        });
    }
    // Commits and their WAL: the latency a commit waited for its flush (the sessions'
    // sampled log waits per commit), the sessions that were active at once.
    if w.commits > 0 {
        let waited_s: f64 = (s.waits.iter())
            .filter(|x| {
                x.backend_type == "client backend" && COMMIT_WAITS.contains(&x.wait_event.as_str())
            })
            .map(|x| x.time_s)
            .sum();
        let commit_ms = (waited_s > 0.0).then(|| 1000.0 * waited_s / w.commits as f64);
        let active = at_once(s, None);
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
            mean_ms: commit_ms.map(|m| Figure {
                value: m,
                origin: origin(format!(
                    "sample {n}: the sessions' sampled time in {} / commits",
                    COMMIT_WAITS.join(", ")
                )),
            }),
            p99_ms: None,
            guessed: false,
            sessions: (active > 0.0).then(|| Figure {
                value: active,
                origin: origin(format!(
                    "sample {n}: active sessions per sample of pg_stat_activity"
                )),
            }),
        });
    }
    // The WAL made durable as PostgreSQL does: written, then fdatasync'ed (fdatasync,
    // fsync), or opened O_DSYNC (open_datasync, open_sync).
    let redo_sync = (classes.iter().any(|k| k.event == Event::LogFileSync))
        .then(|| s.setting("wal_sync_method"))
        .flatten()
        .and_then(|m| {
            let sync = match m {
                "fdatasync" | "fsync" | "fsync_writethrough" => RedoDurability::Fdatasync,
                "open_datasync" | "open_sync" => RedoDurability::Dsync,
                _ => return None,
            };
            Some((sync, origin(format!("sample {n}: wal_sync_method = {m}"))))
        });
    // Group commit: the commits each WAL flush carried. A flush is a WAL sync, or a WAL
    // write where the WAL is opened O_DSYNC (open_datasync, open_sync: no sync calls).
    let (flushes, what) = if w.syncs > 0 {
        (w.syncs, "wal_sync")
    } else {
        (w.writes, "wal_write (the WAL opened O_DSYNC)")
    };
    let group_commit = (redo_sync.is_some() && flushes > 0 && w.commits > 0).then(|| Figure {
        value: w.commits as f64 / flushes as f64,
        origin: origin(format!(
            "sample {n}: commits per WAL flush, pg_stat_database.xact_commit / pg_stat_wal.{what}"
        )),
    });
    Capture {
        file: name.to_string(),
        kind: format!("PostgreSQL {}, sample {n}", s.server.version),
        group_commit,
        seconds: Some(Figure {
            value: secs,
            origin: origin(format!("sample {n}")),
        }),
        block_size: Some(Figure {
            value: 8192.0,
            origin: origin("PostgreSQL's page".into()),
        }),
        redo_sync,
        classes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::result_pg::{PgIo, PgSampler, PgServer, PgSetting, PgWait, PgWal};

    fn wait(event: &str, samples: u64, time_s: f64) -> PgWait {
        PgWait {
            backend_type: "client backend".into(),
            wait_event_type: "IO".into(),
            wait_event: event.into(),
            samples,
            time_s,
            ..PgWait::default()
        }
    }

    /// Ten seconds of a pgbench-like load: PostgreSQL counted 1,000 reads/s (most of them
    /// page-cache hits), 300 buffers written/s, 4 sessions active at once, 500 commits/s
    /// in 200 WAL flushes/s whose flush took 0.5 ms while a commit waited 2 ms.
    fn section() -> PgSection {
        PgSection {
            interval_s: 10.0,
            io: vec![
                PgIo {
                    backend_type: "client backend".into(),
                    object: "relation".into(),
                    op: "read".into(),
                    ops: 10_000,
                    ops_per_s: 1000.0,
                    mean_wait_ms: Some(0.01),
                    source: "pg_stat_database".into(),
                    ..PgIo::default()
                },
                PgIo {
                    backend_type: "checkpointer".into(),
                    object: "relation".into(),
                    op: "write".into(),
                    ops: 3_000,
                    ops_per_s: 300.0,
                    bytes: Some(3_000 * 8192),
                    source: "pg_stat_bgwriter".into(),
                    ..PgIo::default()
                },
            ],
            sampler: PgSampler {
                hz: 100,
                samples: 1000,
                seconds: 10.0,
                ..PgSampler::default()
            },
            waits: vec![
                wait("CPU", 1500, 15.0),
                wait("WALSync", 800, 8.0),
                wait("WALWrite", 200, 2.0),
                wait("DataFileRead", 500, 5.0),
                wait("ClientRead", 1000, 10.0),
            ],
            wal: PgWal {
                commits: 5_000,
                bytes: 5_000 * 600,
                writes: 2_000,
                syncs: 2_000,
                mean_sync_ms: Some(0.5),
                sync_event: "WALSync".into(),
                ..PgWal::default()
            },
            server: PgServer {
                settings: vec![PgSetting {
                    name: "wal_sync_method".into(),
                    value: "fdatasync".into(),
                    source: "default".into(),
                }],
                ..PgServer::default()
            },
            ..PgSection::default()
        }
    }

    /// A disk with a volatile cache and no FUA (a virtio disk, a loop device).
    const VOLATILE: Cache = Cache {
        volatile: true,
        fua: false,
    };

    fn device(reads: u64, writes: u64) -> Device {
        Device {
            name: "sda".into(),
            reads,
            read_bytes: reads * 16384,
            writes,
            write_bytes: 2_000 * 8192 + 1_000 * 65536,
            seconds: 10.0,
            server: None,
            cache: Some(VOLATILE),
        }
    }

    /// The job `dbio job from-pg` writes of one sample.
    fn from_pg() -> super::super::job::Shape {
        super::super::job::Shape {
            peak: false,
            growth: 1.0,
            size: None,
            target: None,
            requirements: false,
            command: "dbio job from-pg".into(),
        }
    }

    #[test]
    fn the_storage_reads_commit_latency_and_sessions_are_what_was_seen() {
        // The device wrote 720/s: the 200 WAL writes/s, a cache flush (counted as a write)
        // for each of the 200 WAL syncs/s, and 320 data requests/s written back from the
        // page cache (PostgreSQL handed it 300 buffers/s).
        let c = capture("pg", 1, &section(), Some(&device(500, 7_200)));
        let class = |e: Event| c.classes.iter().find(|k| k.event == e).unwrap();
        // The device read 50/s of 16K: not PostgreSQL's 1,000 page-cache hits and reads.
        let reads = class(Event::DbFileSequentialRead);
        assert!((reads.per_s.value - 50.0).abs() < 1e-9);
        assert_eq!(reads.bytes.as_ref().unwrap().value, 16384.0);
        assert!(
            reads.mean_ms.is_none(),
            "PostgreSQL's read time is the page cache's"
        );
        assert!((reads.sessions.as_ref().unwrap().value - 0.5).abs() < 1e-9);
        // dbio's data writes are synchronous, a write and a flush each: 160/s, which
        // replayed beside the 200 redo writes/s (2 requests each) ask the device for its
        // 720 writes/s again. (Not the device's writes less one per WAL flush, 520/s,
        // which replayed at 2 requests each made 1,440/s.)
        let writes = class(Event::DbFileParallelWrite);
        assert!(
            (writes.per_s.value - 160.0).abs() < 1e-9,
            "{}",
            writes.per_s.value
        );
        assert!((2.0 * (200.0 + writes.per_s.value) - 720.0).abs() < 1e-9);
        // The bytes of the device's data requests: its bytes less the WAL's, per request.
        let bytes = (2_000.0 * 8192.0 + 1_000.0 * 65536.0 - 5_000.0 * 600.0) / 3_200.0;
        assert!((writes.bytes.as_ref().unwrap().value - bytes).abs() < 1e-6);
        let from = &writes.per_s.origin.what;
        for said in [
            "writes 720/s",
            "less the WAL's 400/s (its writes 200/s and a flush per sync 200/s",
            "÷ 2 device writes per synchronous data write",
            "volatile cache without FUA",
            "PostgreSQL counted 300 buffers written/s",
        ] {
            assert!(from.contains(said), "{said}: {from}");
        }
        // A commit waited (8 + 2 s) / 5,000 = 2 ms, not the flush's 0.5 ms.
        let commits = class(Event::LogFileSync);
        assert!((commits.per_s.value - 500.0).abs() < 1e-9);
        assert!((commits.mean_ms.as_ref().unwrap().value - 2.0).abs() < 1e-9);
        // 4,000 rows of active sessions in 1,000 samples (idle sessions are not tallied).
        assert!((commits.sessions.as_ref().unwrap().value - 4.0).abs() < 1e-9);
        let shape = from_pg();
        let job = super::super::job::job_file(&[c], &shape);
        // The WAL written, then fdatasync'ed: the job's redo too.
        let redo = job.split("[redo]").nth(1).unwrap();
        assert!(
            redo.contains("sync = \"fdatasync\"  # pg: sample 1: wal_sync_method = fdatasync"),
            "{job}"
        );
        let block = job
            .split("[[class]]")
            .find(|b| b.contains("log file sync"))
            .unwrap();
        assert!(block.contains("sessions = 4"), "{block}");
        assert!(block.contains("mean = \"2.00ms\""), "{block}");
        assert!(!block.contains("0.500ms"), "{block}");
        // 5,000 commits in 2,000 WAL flushes: the replay's log writer waits for 2.5 commits
        // a write, at most the 2 ms a commit waited.
        assert!(
            redo.contains("group_commit = 2.5  # pg: sample 1: commits per WAL flush, pg_stat_database.xact_commit / pg_stat_wal.wal_sync"),
            "{job}"
        );
        assert!(redo.contains("group_commit_wait = \"2.00ms\""), "{job}");
    }

    #[test]
    fn the_group_commit_is_the_commits_per_wal_flush_at_most_the_sessions() {
        let shape = from_pg();
        let redo = |s: &PgSection| {
            let c = capture("pg", 1, s, Some(&device(500, 7_200)));
            let job = super::super::job::job_file(&[c], &shape);
            let redo = job.split("[redo]").nth(1).unwrap().to_string();
            redo.split("[[class]]").next().unwrap().to_string()
        };
        // 10 commits per flush, but only 4 sessions commit at once.
        let mut s = section();
        s.wal.syncs = 500;
        let r = redo(&s);
        assert!(r.contains("group_commit = 4  #"), "{r}");
        assert!(r.contains("at most the class's 4 session(s)"), "{r}");
        // open_datasync: no sync calls; each WAL write is a flush (5,000 / 4,000 = 1.25).
        let mut s = section();
        s.wal.syncs = 0;
        s.wal.writes = 4_000;
        s.server.settings[0].value = "open_datasync".into();
        let r = redo(&s);
        assert!(r.contains("group_commit = 1.25  #"), "{r}");
        assert!(
            r.contains("pg_stat_wal.wal_write (the WAL opened O_DSYNC)"),
            "{r}"
        );
        // One commit per flush (or fewer): nothing to wait for, no group commit.
        let mut s = section();
        s.wal.syncs = 5_000;
        assert!(!redo(&s).contains("group_commit"));
    }

    #[test]
    fn only_the_servers_share_of_a_shared_device_is_its() {
        // The server's processes read a quarter of the device's bytes: another process
        // read the rest.
        let mut d = device(400, 3_000);
        d.server = Some((d.read_bytes / 4, d.write_bytes));
        let c = capture("pg", 1, &section(), Some(&d));
        let reads = (c.classes.iter())
            .find(|k| k.event == Event::DbFileSequentialRead)
            .unwrap();
        assert!(
            (reads.per_s.value - 10.0).abs() < 1e-9,
            "{}",
            reads.per_s.value
        );
        assert!(reads.per_s.origin.what.contains("share 25%"));
        // A process there at both looks counts its growth, a new one all of it.
        assert_eq!(
            io_delta(&[(1, 100, 10), (2, 5, 5)], &[(1, 150, 30), (3, 7, 1)]),
            (57, 21)
        );
        assert_eq!(
            ppid(std::process::id()),
            Some(std::os::unix::process::parent_id())
        );
    }

    #[test]
    fn a_synchronous_write_costs_what_the_devices_cache_says() {
        // 1,000 device writes, 200 WAL writes and syncs.
        let at = |cache| data_writes(1_000.0, 200.0, 200.0, cache);
        // Volatile without FUA: each WAL sync a flush too; each of dbio's writes 2.
        let d = at(Some(VOLATILE));
        assert_eq!((d.wal, d.per_write, d.requests), (400.0, 2.0, 300.0));
        // With FUA dbio's O_DSYNC write needs no flush; PostgreSQL's fdatasync still sends one.
        let d = at(Some(Cache {
            volatile: true,
            fua: true,
        }));
        assert_eq!((d.wal, d.per_write, d.requests), (400.0, 1.0, 600.0));
        assert!(d.said("sda", "", 1.0).contains("with FUA"));
        // Write-through: no flushes at all.
        let d = at(Some(Cache {
            volatile: false,
            fua: false,
        }));
        assert_eq!((d.wal, d.per_write, d.requests), (200.0, 1.0, 800.0));
        // Not known: taken as write-through, and said so.
        let d = at(None);
        assert_eq!((d.wal, d.per_write, d.requests), (200.0, 1.0, 800.0));
        assert!(d.said("sda", "", 1.0).contains("not known"));
        // The WAL's requests were all the device wrote: no data writes.
        let c = capture("pg", 1, &section(), Some(&device(500, 4_000)));
        assert!(
            !c.classes
                .iter()
                .any(|k| k.event == Event::DbFileParallelWrite),
            "{:?}",
            c.classes
        );
    }

    #[test]
    fn page_cache_hits_are_no_device_reads() {
        // The device read nothing: every read PostgreSQL counted came from the page cache.
        let c = capture("pg", 1, &section(), Some(&device(0, 3_000)));
        assert!(
            !c.classes
                .iter()
                .any(|k| k.event == Event::DbFileSequentialRead),
            "{:?}",
            c.classes
        );
        // Without the device, PostgreSQL's figure, said to include the hits.
        let c = capture("pg", 1, &section(), None);
        let reads = (c.classes.iter())
            .find(|k| k.event == Event::DbFileSequentialRead)
            .unwrap();
        assert!(reads.per_s.origin.what.contains("page-cache hits included"));
    }
}
