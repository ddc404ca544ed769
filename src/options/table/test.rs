//! The options of the test itself: sessions, times, submission, rates.

use crate::engine::EngineChoice;
use crate::engine::IoMode;
use crate::options::parse::*;
use crate::options::{Applies, Opt, heading};
use crate::units;
use crate::workload::Arrival;
use crate::workload::Test;
use crate::workload::event::Like;

/// Every row of this part: what its rows share.
const ROW: Opt = Opt {
    heading: heading::TEST,
    ..Opt::DEFAULT
};

pub(super) const TEST: &[Opt] = &[
    Opt {
        name: "sessions",
        key: Some("run.sessions"),
        value: Some("N"),
        default: Some("8"),
        help: "Concurrent sessions (database foreground processes; writers for write-iops), 1 to 65536 and what the machine allows.",
        set: |a, t| {
            a.sessions = count(t, 1, 65536)? as u32;
            Ok(())
        },
        get: |a| Some(a.sessions.to_string()),
        ..ROW
    },
    Opt {
        name: "duration",
        key: Some("run.duration"),
        value: Some("DURATION"),
        default: Some("60s"),
        help: "Measured window, e.g. 60s, 1.5s, 1m30s.",
        with_classes: true,
        set: |a, t| {
            let d = units::parse_duration(t)?;
            if d.is_zero() {
                return Err("the measured window must be longer than 0, e.g. 60s".into());
            }
            a.duration = d;
            Ok(())
        },
        get: |a| Some(units::duration_label(a.duration)),
        ..ROW
    },
    Opt {
        name: "warmup",
        key: Some("run.warmup"),
        value: Some("DURATION"),
        default: Some("5s"),
        help: "Unmeasured warm-up before each measured window (of the run, or of each point of a sweep, calibration or matrix).",
        with_classes: true,
        set: |a, t| {
            a.warmup = units::parse_duration(t)?;
            Ok(())
        },
        get: |a| Some(units::duration_label(a.warmup)),
        ..ROW
    },
    Opt {
        name: "steady-state",
        bare: Some("iops:20:10"),
        key: Some("run.steady_state"),
        value: Some("METRIC:RANGE%:SLOPE%"),
        help: "End the measured window once it is steady: over the last 5 rounds (--round), the round figures' max - min is within RANGE% of their average and their least-squares line moves by at most SLOPE% of it. METRIC: iops, mibps, mean or p99; given alone: iops:20:10.",
        with_classes: true,
        set: |a, t| {
            // The value is optional, so a test name typed after it is taken as its value.
            if crate::workload::Test::from_name(t.trim()).is_some() {
                return Err(format!(
                    "'{t}' is a test: put the test before --steady-state, or give its value with '=' (--steady-state=iops:20:10)"
                ));
            }
            crate::workload::spec::SteadySpec::parse(t, a.round)?;
            a.steady_state = Some(t.to_string());
            Ok(())
        },
        get: |a| a.steady_state.clone(),
        ..ROW
    },
    Opt {
        name: "round",
        key: Some("run.round"),
        value: Some("DURATION"),
        default: Some("10s"),
        help: "One round of --steady-state; --duration must hold at least 5 of them.",
        with_classes: true,
        set: |a, t| {
            let d = units::parse_duration(t)?;
            if d.is_zero() {
                return Err("a round must be longer than 0, e.g. 10s".into());
            }
            a.round = d;
            Ok(())
        },
        get: |a| Some(units::duration_label(a.round)),
        ..ROW
    },
    Opt {
        name: "sync",
        help: "Synchronous submission: the sync events (\"db file sequential read\", ...).",
        conflicts: &["async"],
        set: |a, t| {
            a.sync = switch(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "async",
        help: "Asynchronous submission (the default): the async events (\"db file parallel read\", ...).",
        conflicts: &["sync"],
        set: |a, t| {
            a.sync = !switch(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "submission",
        key: Some("run.submission"),
        value: Some("sync|async"),
        help: "",
        set: |a, t| {
            a.sync = one_of(t, &[("sync", true), ("async", false)])?;
            Ok(())
        },
        get: |a| Some(if a.sync { "sync" } else { "async" }.into()),
        ..ROW
    },
    Opt {
        name: "io-mode",
        key: Some("run.io_mode"),
        value: Some("MODE"),
        default: Some("setall"),
        help: "Open flags and submission, like the database's filesystemio_options: none (O_DSYNC, sync calls), directio (+O_DIRECT), asynch (O_DSYNC, async), setall (O_DIRECT+O_DSYNC, async). With --like innodb, innodb_flush_method's values: fsync, O_DSYNC, O_DIRECT (its default there), O_DIRECT_NO_FSYNC. With --like postgres, wal_sync_method's values: fdatasync (its default there), open_datasync.",
        with_classes: true,
        set: |a, t| {
            a.io_mode = IoMode::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.io_mode.name().into()),
        ..ROW
    },
    Opt {
        name: "like",
        key: Some("run.like"),
        value: Some("DATABASE"),
        default: Some("oracle"),
        help: "Whose I/O shapes and event names: oracle, innodb (MariaDB/MySQL: 16 KiB pages, the page read, read-ahead, the flush batch with doublewrite, redo with innodb_flush_method's syncs), or postgres (8 KiB buffered page reads, random or a scan's, the checkpointer's page writes and fsync, a COPY's page extends and ring write-backs, WAL with wal_sync_method's syncs); docs/events.md. write-mbps is PostgreSQL's only.",
        applies: Applies::Tests(super::ONE_KIND_TESTS),
        conflicts: &["keep-inflight"],
        set: |a, t| {
            a.like = Like::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.like.name().into()),
        ..ROW
    },
    Opt {
        name: "doublewrite",
        key: Some("run.doublewrite"),
        value: Some("on|off"),
        default: Some("on"),
        help: "--like innodb write-iops: each flush batch is written to a doublewrite file and synced before its pages (innodb_doublewrite); off writes the pages alone.",
        applies: Applies::Tests(&[Test::WriteIops]),
        requires: Some("like"),
        set: |a, t| {
            a.doublewrite = one_of(t, &[("on", true), ("off", false)])?;
            Ok(())
        },
        // Only InnoDB's shapes have a doublewrite: a job written from an Oracle-shaped
        // write-iops (--save-job, the job a run across hosts sends) must not name it.
        get: |a| (a.like == Like::Innodb).then(|| if a.doublewrite { "on" } else { "off" }.into()),
        ..ROW
    },
    Opt {
        name: "engine",
        key: Some("run.engine"),
        value: Some("ENGINE"),
        default: Some("auto"),
        help: "How asynchronous I/O is submitted: auto (io_uring, else Linux AIO, else sync), uring, aio (Linux native AIO, what Oracle uses), sync; null issues no I/O at all (a measuring aid for dbio's own cost per request, never the default).",
        with_classes: true,
        set: |a, t| {
            a.engine = EngineChoice::parse(t)?;
            Ok(())
        },
        get: |a| Some(a.engine.name().into()),
        ..ROW
    },
    Opt {
        name: "batch",
        key: Some("run.batch"),
        value: Some("N"),
        default: Some("32"),
        help: "Blocks per \"db file parallel read\"/\"db file parallel write\" batch (1 to 4096).",
        applies: Applies::Tests(&[Test::ReadIops, Test::WriteIops, Test::Oltp]),
        set: |a, t| {
            a.batch = count(t, 1, 4096)? as u32;
            Ok(())
        },
        get: |a| Some(a.batch.to_string()),
        ..ROW
    },
    Opt {
        name: "keep-inflight",
        key: Some("run.keep_inflight"),
        help: "Async read-iops/write-iops: keep --batch random blocks in flight continuously (a storage benchmark's constant queue depth) instead of the database's submit-all, wait-for-all batches.",
        applies: Applies::Tests(&[Test::ReadIops, Test::WriteIops]),
        set: |a, t| {
            a.keep_inflight = switch(t)?;
            Ok(())
        },
        get: |a| Some(a.keep_inflight.to_string()),
        ..ROW
    },
    Opt {
        name: "depth",
        key: Some("run.depth"),
        value: Some("N"),
        default: Some("8"),
        help: "Requests in flight per session for \"direct path read\"/\"direct path write\" and temp (1 to 4096).",
        applies: Applies::Tests(&[Test::ReadMbps, Test::WriteMbps, Test::Temp]),
        set: |a, t| {
            a.depth = count(t, 1, 4096)? as u32;
            Ok(())
        },
        get: |a| Some(a.depth.to_string()),
        ..ROW
    },
    Opt {
        name: "mbrc",
        key: Some("run.mbrc"),
        value: Some("N"),
        help: "Multiblock read count: blocks per multiblock request, 1 to 1024 [default: 1 MiB / block size].",
        applies: Applies::Tests(&[Test::ReadMbps, Test::WriteMbps]),
        set: |a, t| {
            a.mbrc = Some(count(t, 1, 1024)? as u32);
            Ok(())
        },
        get: |a| a.mbrc.map(|m| m.to_string()),
        ..ROW
    },
    Opt {
        name: "rate",
        value: Some("REQUESTS_PER_S"),
        help: "Open loop: issue this many requests per second over all sessions, on a schedule, whatever the storage does; latency then runs from each request's scheduled time (classic tests; job files set `rate` per class).",
        applies: Applies::Tests(super::ONE_KIND_TESTS),
        conflicts: &["keep-inflight"],
        set: |a, t| {
            a.rate = Some(rate(t)?);
            Ok(())
        },
        get: |a| a.rate.map(|r| r.to_string()),
        ..ROW
    },
    Opt {
        name: "arrival",
        value: Some("fixed|poisson"),
        default: Some("fixed"),
        help: "Arrivals of --rate: at fixed intervals, or as a Poisson process.",
        requires: Some("rate"),
        set: |a, t| {
            a.arrival = one_of(
                t,
                &[("fixed", Arrival::Fixed), ("poisson", Arrival::Poisson)],
            )?;
            Ok(())
        },
        get: |a| Some(a.arrival.name().into()),
        ..ROW
    },
    Opt {
        name: "ash-hz",
        key: Some("run.ash_hz"),
        value: Some("N"),
        default: Some("10"),
        help: "Active Session History samples per second (1 to 1000).",
        with_classes: true,
        set: |a, t| {
            a.ash_hz = count(t, 1, 1000)? as u32;
            Ok(())
        },
        get: |a| Some(a.ash_hz.to_string()),
        ..ROW
    },
];
