//! What the database's own figures mean, in words: whether "async" was asynchronous, whether
//! the reads came from the storage or from the page cache, what a commit cost, what this
//! build cannot do.

use super::{CacheControl, RunContext};
use crate::report::result_pg::PgSection;

/// Reads averaging less than this came from memory, not from storage.
pub const CACHE_HIT_US: f64 = 50.0;

/// A latency in µs as a finding writes it: `8.3 µs`, `412 µs`, `1.16 ms`.
pub fn latency_words(us: f64) -> String {
    if us < 10.0 {
        format!("{us:.1} µs")
    } else if us < 1000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.2} ms", us / 1000.0)
    }
}

/// Samples of `backend_type` (any when None) waiting on `event`.
fn samples(p: &PgSection, backend_type: Option<&str>, event: &str) -> u64 {
    (p.waits.iter())
        .filter(|w| backend_type.is_none_or(|b| w.backend_type == b) && w.wait_event == event)
        .map(|w| w.samples)
        .sum()
}

/// Before 16 the backends' writes (`pg_stat_bgwriter.buffers_backend`) are counted by the
/// checkpointer as it takes the sync request a backend queues with each write: when its
/// queue (one entry per shared buffer) is half full, or at a checkpoint. Over a window, the
/// count may be off by up to half of shared_buffers' pages: said when that is over 5 %.
fn late_backend_writes(p: &PgSection) -> Option<String> {
    if p.server.version_num >= 160000 {
        return None;
    }
    let written = (p.io.iter())
        .find(|i| i.backend_type == "client backend" && i.object == "relation" && i.op == "write")
        .map_or(0, |i| i.ops);
    // PostgreSQL shows sizes as `16MB`, `512kB` or bytes: dbio's own size parser reads them.
    let size = |name: &str| crate::units::parse_size(p.setting(name)?).ok();
    let page = size("block_size").unwrap_or(8192);
    let late = (size("shared_buffers")? / page.max(1) / 2) as f64;
    let share = 100.0 * late / written as f64;
    (written > 0 && share > 5.0).then(|| {
        format!(
            "PostgreSQL {} counts the backends' writes when its checkpointer takes their sync requests, up to {late:.0} late here (half of shared_buffers' pages): the {written} of this window may be off by {share:.0} %; a longer window narrows it.",
            p.server.version_num / 10000
        )
    })
}

/// The sessions' sampled DataFileRead beside what PostgreSQL timed (`stats::timed_waits`),
/// said when they are more than 10 % apart and further than sampling alone would put them
/// (two standard deviations of a count of `n` samples: 2/√n).
fn sampled_against_timed(p: &PgSection) -> Option<String> {
    let w = (p.waits.iter())
        .find(|w| w.backend_type == "client backend" && w.wait_event == "DataFileRead")?;
    let (sampled_s, timed_s) = (w.time_s, w.timed_s?);
    let noise = 2.0 / (w.samples.max(1) as f64).sqrt();
    let apart = (sampled_s / timed_s - 1.0).abs();
    (sampled_s > 0.0 && timed_s > 0.0 && apart > noise.max(0.10)).then(|| {
        format!(
            "the sampler saw {sampled_s:.2} s of DataFileRead where PostgreSQL timed {timed_s:.2} s of reads ({:.2}×; track_io_timing): the sampled waits are estimates ({} samples at {} Hz), the timed ones measured",
            sampled_s / timed_s,
            p.sampler.samples,
            p.sampler.hz
        )
    })
}

fn pct(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// The findings and the cautions (findings that put the figures in doubt) of a run.
pub fn findings(p: &PgSection, ctx: &RunContext) -> (Vec<String>, Vec<String>) {
    let mut found = Vec::new();
    let mut cautions = Vec::new();
    let major = p.server.version_num / 10000;
    let session = Some("client backend");
    let read_test = ctx.test.contains("read");

    // The page cache: a read that fast did not reach the storage.
    let session_reads = p.session_reads().filter(|r| r.ops > 0);
    let mean_read_us = ctx.mean_read_us.or_else(|| {
        session_reads
            .and_then(|r| r.mean_wait_ms)
            .map(|ms| ms * 1000.0)
    });
    if let Some(us) = mean_read_us.filter(|us| read_test && *us > 0.0 && *us < CACHE_HIT_US) {
        found.push(format!(
            "reads averaged {}: the page cache answered, not the storage",
            latency_words(us)
        ));
        cautions.push(format!(
            "Reads averaged {}, under {CACHE_HIT_US:.0} µs: these were page-cache hits, not storage reads ({}).",
            latency_words(us),
            p.cache
        ));
    }
    if let CacheControl::NotControlled(why) = &ctx.cache
        && read_test
    {
        found.push(format!("the page cache was not kept out: {why}"));
    }

    found.extend(sampled_against_timed(p));

    // Asynchronous reads: asked, and done?
    let dfr = samples(p, session, "DataFileRead");
    let aio = samples(p, session, "AioIoCompletion");
    let prefetch = samples(p, session, "DataFilePrefetch");
    let worker_reads = samples(p, Some("io worker"), "DataFileRead");
    let waits = dfr + aio + prefetch;
    if read_test && ctx.asynchronous {
        match p.server.io_method.as_deref() {
            None => found.push(format!(
                "async asked, prefetch advice only: PostgreSQL {major} has no asynchronous reads; \
                 effective_io_concurrency={} gives posix_fadvise(WILLNEED) hints{}, and the session \
                 still waited DataFileRead in {:.0}% of its read waits",
                ctx.depth,
                if prefetch > 0 {
                    format!(" (DataFilePrefetch {:.0}%)", pct(prefetch, waits))
                } else {
                    String::new()
                },
                pct(dfr, waits)
            )),
            Some("sync") if aio == 0 && worker_reads == 0 && dfr > 0 => found.push(
                "async asked, sync done: io_method=sync, every read waited DataFileRead in the session"
                    .into(),
            ),
            Some("sync") => found.push(format!(
                "async asked, sync done: io_method=sync, {:.0}% of the session's read waits were DataFileRead",
                pct(dfr, waits)
            )),
            Some(m) if aio > 0 => found.push(format!(
                "async used: io_method={m}, the sessions waited AioIoCompletion in {:.0}% of their read waits{}",
                pct(aio, waits),
                if worker_reads > 0 {
                    format!("; io workers read (DataFileRead) in {worker_reads} samples")
                } else {
                    String::new()
                }
            )),
            Some(m) if dfr > 0 => found.push(format!(
                "async asked, sync done: io_method={m}, yet every read waited DataFileRead in the session"
            )),
            Some(_) => {}
        }
    }
    if read_test && !ctx.asynchronous && ctx.test.contains("iops") {
        found.push(if dfr > 0 {
            format!(
                "index lookups are always synchronous in PostgreSQL: {:.0}% of the session's read waits were DataFileRead in the session",
                pct(dfr, waits)
            )
        } else {
            "index lookups are always synchronous in PostgreSQL".into()
        });
    }

    // Commits: group commit and the flush's cost, where commits wait for the flush (a
    // test's sessions set synchronous_commit = on; a watched server's setting is not off).
    let w = &p.wal;
    let commits_wait = if ctx.load_continues {
        p.setting("synchronous_commit")
            .is_none_or(|v| v != "off" && v != "local")
    } else {
        (ctx.session_set.iter()).any(|(n, v)| n == "synchronous_commit" && v == "on")
    };
    if let Some(per_flush) = w.commits_per_flush
        && commits_wait
        && w.syncs > 0
    {
        found.push(format!(
            "{per_flush:.1} commits per WAL flush{}",
            w.mean_sync_ms
                .map_or(String::new(), |ms| format!("; {} {ms:.2} ms", w.sync_event))
        ));
    }

    // Who wrote the data files.
    if ctx.test.contains("write") {
        let writers: Vec<String> = (p.io.iter())
            .filter(|i| i.object == "relation" && i.op == "write" && i.ops > 0)
            .map(|i| format!("{} {}", i.backend_type, i.ops))
            .collect();
        if !writers.is_empty() {
            found.push(format!("data file writes: {}", writers.join(", ")));
        }
    }
    cautions.extend(late_backend_writes(p));

    // What this build cannot do.
    if p.server.io_method.is_some() && !p.server.io_method_allowed.iter().any(|v| v == "io_uring") {
        found.push(format!(
            "io_uring not in this build: io_method allows {}",
            p.server.io_method_allowed.join(", ")
        ));
    }

    // The sampler: a busy machine makes it fall behind.
    let s = &p.sampler;
    if s.seconds >= 1.0 && (s.samples as f64) < 0.5 * f64::from(s.hz) * s.seconds {
        found.push(format!(
            "the wait sampler took {:.0} samples/s of the {} asked (a busy machine): the wait profile is coarser",
            s.samples as f64 / s.seconds,
            s.hz
        ));
    }
    (found, cautions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::result_pg::{PgIo, PgServer, PgWait, PgWal};

    fn ctx(test: &str, asynchronous: bool) -> RunContext {
        RunContext {
            test: test.into(),
            asynchronous,
            depth: 16,
            sessions: 4,
            session_set: Vec::new(),
            cache: CacheControl::DirectIo,
            mean_read_us: None,
            load_continues: false,
        }
    }

    fn wait(backend_type: &str, event: &str, samples: u64) -> PgWait {
        PgWait {
            backend_type: backend_type.into(),
            wait_event_type: "IO".into(),
            wait_event: event.into(),
            samples,
            ..PgWait::default()
        }
    }

    fn section(version_num: u32, io_method: Option<&str>, waits: Vec<PgWait>) -> PgSection {
        PgSection {
            server: PgServer {
                version_num,
                io_method: io_method.map(str::to_string),
                io_method_allowed: vec!["sync".into(), "worker".into()],
                ..PgServer::default()
            },
            cache: "direct I/O (debug_io_direct=data)".into(),
            waits,
            ..PgSection::default()
        }
    }

    #[test]
    fn fifteens_backend_writes_are_counted_late_by_up_to_half_the_buffers() {
        let with = |version_num: u32, shared_buffers: &str, written: u64| {
            let mut p = section(version_num, None, vec![]);
            p.server.settings = vec![crate::report::result_pg::PgSetting {
                name: "shared_buffers".into(),
                value: shared_buffers.into(),
                source: "command line".into(),
            }];
            p.io = vec![PgIo {
                backend_type: "client backend".into(),
                object: "relation".into(),
                op: "write".into(),
                ops: written,
                ..PgIo::default()
            }];
            findings(&p, &ctx("write-iops", false)).1
        };
        // 16 MB: 2,048 buffers, up to 1,024 late; 7,000 writes: 15 %.
        let c = with(150018, "16MB", 7000);
        assert_eq!(c.len(), 1, "{c:?}");
        assert!(
            c[0].contains("up to 1024 late")
                && c[0].contains("the 7000 of this window may be off by 15 %"),
            "{c:?}"
        );
        // Under 5 %: nothing to say; 16+ counts per backend (pg_stat_io); nothing written.
        assert!(with(150018, "16MB", 30000).is_empty());
        assert!(with(150018, "4096kB", 7000).is_empty());
        assert!(with(160000, "16MB", 7000).is_empty());
        assert!(with(150018, "16MB", 0).is_empty());
    }

    #[test]
    fn sampled_read_waits_far_from_the_timed_ones_are_said_to_be_estimates() {
        let with = |sampled_s: f64, timed_s: Option<f64>| {
            let mut w = wait("client backend", "DataFileRead", 120);
            w.time_s = sampled_s;
            w.timed_s = timed_s;
            let mut p = section(150018, None, vec![w]);
            p.sampler.samples = 300;
            p.sampler.hz = 100;
            findings(&p, &ctx("read-iops", false)).0
        };
        let f = with(1.2, Some(1.534));
        assert!(
            f.iter().any(|f| f.starts_with("the sampler saw 1.20 s of DataFileRead where PostgreSQL timed 1.53 s of reads (0.78×")),
            "{f:?}"
        );
        // Within 10 %, within what 120 samples can tell (18 %), or not timed (track_io_timing
        // off, asynchronous reads): nothing said.
        assert!(
            !with(1.3, Some(1.534))
                .iter()
                .any(|f| f.contains("sampler saw"))
        );
        assert!(
            !with(1.45, Some(1.534))
                .iter()
                .any(|f| f.contains("sampler saw"))
        );
        assert!(!with(1.2, None).iter().any(|f| f.contains("sampler saw")));
    }

    #[test]
    fn async_asked_sync_done() {
        let p = section(
            180004,
            Some("sync"),
            vec![wait("client backend", "DataFileRead", 900)],
        );
        let (f, c) = findings(&p, &ctx("read-iops", true));
        assert!(
            f.contains(&"async asked, sync done: io_method=sync, every read waited DataFileRead in the session".to_string()),
            "{f:?}"
        );
        assert!(
            f.contains(&"io_uring not in this build: io_method allows sync, worker".to_string())
        );
        assert!(c.is_empty());
    }

    #[test]
    fn async_used_with_workers() {
        let p = section(
            180004,
            Some("worker"),
            vec![
                wait("client backend", "AioIoCompletion", 90),
                wait("client backend", "DataFileRead", 10),
                wait("io worker", "DataFileRead", 200),
            ],
        );
        let (f, _) = findings(&p, &ctx("read-iops", true));
        assert!(
            f[0].starts_with(
                "async used: io_method=worker, the sessions waited AioIoCompletion in 90%"
            ),
            "{f:?}"
        );
        assert!(f[0].ends_with("io workers read (DataFileRead) in 200 samples"));
    }

    #[test]
    fn index_lookups_and_the_page_cache() {
        let mut p = section(
            150018,
            None,
            vec![wait("client backend", "DataFileRead", 50)],
        );
        p.io.push(PgIo {
            backend_type: "client backend".into(),
            object: "relation".into(),
            op: "read".into(),
            ops: 1000,
            mean_wait_ms: Some(0.0083),
            ..PgIo::default()
        });
        let (f, c) = findings(&p, &ctx("read-iops", false));
        assert_eq!(
            f[0],
            "reads averaged 8.3 µs: the page cache answered, not the storage"
        );
        assert!(f[1].starts_with("index lookups are always synchronous in PostgreSQL: 100%"));
        assert_eq!(c.len(), 1);
        assert!(c[0].contains("under 50 µs"), "{c:?}");
        // PostgreSQL 15 has no io_method: nothing said about io_uring.
        assert!(!f.iter().any(|f| f.contains("io_uring")));
        // The session's own figure wins over PostgreSQL's.
        let mut cx = ctx("read-iops", false);
        cx.mean_read_us = Some(412.0);
        let (f, c) = findings(&p, &cx);
        assert!(!f.iter().any(|f| f.contains("page cache")), "{f:?}");
        assert!(c.is_empty());
    }

    #[test]
    fn group_commit_in_words() {
        let mut p = section(180004, Some("worker"), vec![]);
        p.server.io_method_allowed.push("io_uring".into());
        p.wal = PgWal {
            commits: 12_532,
            syncs: 5_013,
            commits_per_flush: Some(12_532.0 / 5_013.0),
            mean_sync_ms: Some(0.28),
            sync_event: "WalSync".into(),
            ..PgWal::default()
        };
        let mut redo = ctx("redo", false);
        redo.session_set = vec![("synchronous_commit".into(), "on".into())];
        let (f, _) = findings(&p, &redo);
        assert_eq!(f, ["2.5 commits per WAL flush; WalSync 0.28 ms"]);
        // Updates that commit without waiting for the flush: no group commit to speak of.
        let mut updates = ctx("write-iops", false);
        updates.session_set = vec![("synchronous_commit".into(), "off".into())];
        let (f, _) = findings(&p, &updates);
        assert!(!f.iter().any(|f| f.contains("per WAL flush")), "{f:?}");
        // Read tests commit read-only transactions: none waits for a flush.
        let (f, _) = findings(&p, &ctx("read-iops", false));
        assert!(!f.iter().any(|f| f.contains("per WAL flush")), "{f:?}");
    }

    #[test]
    fn fifteen_has_only_prefetch_advice() {
        let p = section(
            150018,
            None,
            vec![
                wait("client backend", "DataFileRead", 75),
                wait("client backend", "DataFilePrefetch", 25),
            ],
        );
        let (f, _) = findings(&p, &ctx("read-iops", true));
        assert!(
            f[0].starts_with("async asked, prefetch advice only: PostgreSQL 15"),
            "{f:?}"
        );
        assert!(f[0].contains("DataFilePrefetch 25%"));
        assert!(f[0].ends_with("DataFileRead in 75% of its read waits"));
    }
}
