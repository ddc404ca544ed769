//! Redo and commits (redo, oltp), the OLTP mix and temp spills.

use super::REDO_TESTS;
use crate::options::parse::*;
use crate::options::{Applies, Opt, heading};
use crate::units;
use crate::workload::Test;
use crate::workload::spec::RedoDurability;

/// An option of the redo log (redo, oltp): what its rows share.
const REDO_ROW: Opt = Opt {
    heading: heading::REDO,
    applies: Applies::Tests(REDO_TESTS),
    ..Opt::DEFAULT
};
/// An option of the OLTP mix: what its rows share.
const OLTP_ROW: Opt = Opt {
    heading: heading::OLTP,
    applies: Applies::Tests(&[Test::Oltp]),
    ..Opt::DEFAULT
};
/// An option of temp spills: what its rows share.
const TEMP_ROW: Opt = Opt {
    heading: heading::TEMP,
    applies: Applies::Tests(&[Test::Temp]),
    ..Opt::DEFAULT
};

pub(super) const REDO: &[Opt] = &[
    Opt {
        name: "redo-per-commit",
        key: Some("redo.per_commit"),
        value: Some("SIZE|LO..HI"),
        default: Some("2K"),
        help: "Redo generated per commit: a size, or a range drawn uniformly (512..8K), up to 64M. With --like postgres write-mbps: the WAL each COPY of 128 pages logs (default 128 pages' worth).",
        applies: Applies::Tests(&[Test::Redo, Test::Oltp, Test::WriteMbps]),
        set: |a, t| {
            let r = units::parse_size_range(t)?;
            if r.lo == 0 {
                return Err("redo per commit must be at least 1 byte, e.g. 2K or 512..8K".into());
            }
            if r.hi > 64 << 20 {
                return Err("at most 64M of redo per commit".into());
            }
            a.redo_per_commit = r;
            Ok(())
        },
        get: |a| Some(a.redo_per_commit.label()),
        ..REDO_ROW
    },
    Opt {
        name: "think",
        key: Some("redo.think"),
        value: Some("DURATION|LO..HI"),
        help: "Think time before each commit (redo) or transaction (oltp): a duration or a range (1ms..5ms).",
        set: |a, t| {
            a.think = Some(units::parse_duration_range(t)?);
            Ok(())
        },
        get: |a| a.think.map(|t| t.label()),
        ..REDO_ROW
    },
    Opt {
        name: "redo-block",
        key: Some("redo.block"),
        value: Some("512|4K"),
        default: Some("512"),
        help: "Redo block size: LGWR writes whole redo blocks (512 or 4K).",
        with_classes: true,
        set: |a, t| {
            a.redo_block = match units::parse_size(t)? {
                v @ (512 | 4096) => v,
                _ => return Err("must be 512 or 4K".into()),
            };
            Ok(())
        },
        get: |a| Some(size_text(a.redo_block)),
        ..REDO_ROW
    },
    Opt {
        name: "redo-files",
        key: Some("redo.files"),
        value: Some("N"),
        default: Some("3"),
        help: "Redo log files, written in turn (a log switch when one is full), 2 to 64.",
        with_classes: true,
        set: |a, t| {
            a.redo_files = count(t, 2, 64)? as u32;
            Ok(())
        },
        get: |a| Some(a.redo_files.to_string()),
        ..REDO_ROW
    },
    Opt {
        name: "redo-file-size",
        key: Some("redo.file_size"),
        value: Some("SIZE"),
        default: Some("256M"),
        help: "Size of each redo log file (at least 4M, whole redo blocks).",
        with_classes: true,
        set: |a, t| {
            a.redo_file_size = positive_size(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.redo_file_size)),
        ..REDO_ROW
    },
    Opt {
        name: "redo-sync",
        key: Some("redo.sync"),
        value: Some("dsync|fdatasync"),
        default: Some("dsync"),
        help: "How LGWR makes redo durable: O_DSYNC writes, or plain writes then fdatasync.",
        with_classes: true,
        set: |a, t| {
            a.redo_sync = one_of(
                t,
                &[
                    ("dsync", RedoDurability::Dsync),
                    ("fdatasync", RedoDurability::Fdatasync),
                ],
            )?;
            Ok(())
        },
        get: |a| Some(a.redo_sync.name().into()),
        ..REDO_ROW
    },
    Opt {
        name: "lgwr-cpu",
        key: Some("redo.lgwr_cpu"),
        value: Some("CPU"),
        help: "Pin the log writer to this CPU.",
        with_classes: true,
        set: |a, t| {
            a.lgwr_cpu = Some(cpu(t)?);
            Ok(())
        },
        get: |a| a.lgwr_cpu.map(|c| c.to_string()),
        ..REDO_ROW
    },
    Opt {
        name: "noise-cpu",
        key: Some("redo.noise_cpu"),
        value: Some("CPU"),
        help: "Run a noise thread on this CPU: ~3 ms of computation, 1 ms of sleep, repeated.",
        applies: Applies::All,
        with_classes: true,
        set: |a, t| {
            a.noise_cpu = Some(cpu(t)?);
            Ok(())
        },
        get: |a| a.noise_cpu.map(|c| c.to_string()),
        ..REDO_ROW
    },
    Opt {
        name: "lgwr-submission",
        key: Some("redo.submission"),
        value: Some("sync|async"),
        help: "",
        applies: Applies::Tests(&[Test::Redo]),
        with_classes: true,
        set: |a, t| {
            a.lgwr_submission = Some(one_of(
                t,
                &[
                    ("sync", crate::engine::Submission::Sync),
                    ("async", crate::engine::Submission::Async),
                ],
            )?);
            Ok(())
        },
        get: |a| a.lgwr_submission.map(|s| s.name().into()),
        ..REDO_ROW
    },
    Opt {
        name: "group-commit",
        key: Some("redo.group_commit"),
        value: Some("N"),
        help: "Group commit as the database did it: LGWR waits until N commits wait (a mean, e.g. 1.4: 1 and 2 in turn) or --group-commit-wait has passed before it writes. Default: it writes as soon as a commit waits.",
        with_classes: true,
        set: |a, t| {
            a.group_commit = Some(group_commit(t)?);
            Ok(())
        },
        get: |a| a.group_commit.map(|n| n.to_string()),
        ..REDO_ROW
    },
    Opt {
        name: "group-commit-wait",
        key: Some("redo.group_commit_wait"),
        value: Some("DURATION"),
        default: Some("1ms"),
        help: "With --group-commit: the longest a commit waits for the group to fill before LGWR writes (10us to 1s).",
        with_classes: true,
        set: |a, t| {
            let d = units::parse_duration(t)?;
            if d < std::time::Duration::from_micros(10) || d > std::time::Duration::from_secs(1) {
                return Err("from 10us to 1s, e.g. 1ms".into());
            }
            a.group_commit_wait = d;
            Ok(())
        },
        // Only beside a group commit (a saved job without one must run again).
        get: |a| {
            a.group_commit
                .map(|_| units::duration_label(a.group_commit_wait))
        },
        ..REDO_ROW
    },
    Opt {
        name: "writers",
        key: Some("redo.writers"),
        value: Some("N"),
        default: Some("1"),
        help: "Database writer (DBWR) threads (oltp), 1 to 64.",
        applies: Applies::Tests(&[Test::Oltp]),
        set: |a, t| {
            a.writers = count(t, 1, 64)? as u32;
            Ok(())
        },
        get: |a| Some(a.writers.to_string()),
        ..REDO_ROW
    },
    // ---- the OLTP mix
    Opt {
        name: "work-unit",
        key: Some("oltp.work_unit"),
        value: Some("N"),
        default: Some("16"),
        help: "Blocks each transaction reads (1 to 1024).",
        set: |a, t| {
            a.work_unit = count(t, 1, 1024)? as u32;
            Ok(())
        },
        get: |a| Some(a.work_unit.to_string()),
        ..OLTP_ROW
    },
    Opt {
        name: "update-pct",
        key: Some("oltp.update_pct"),
        value: Some("PCT"),
        default: Some("25"),
        help: "Percentage of transactions that update their blocks and commit.",
        set: |a, t| {
            a.update_pct = count(t, 0, 100)? as u32;
            Ok(())
        },
        get: |a| Some(a.update_pct.to_string()),
        ..OLTP_ROW
    },
    Opt {
        name: "hotspot-pct",
        key: Some("oltp.hotspot_pct"),
        value: Some("PCT"),
        default: Some("0"),
        help: "Percentage of block accesses that go to the hot spot.",
        set: |a, t| {
            a.hotspot_pct = count(t, 0, 100)? as u32;
            Ok(())
        },
        get: |a| Some(a.hotspot_pct.to_string()),
        ..OLTP_ROW
    },
    Opt {
        name: "hotspot-size",
        key: Some("oltp.hotspot_size"),
        value: Some("SIZE"),
        help: "Size of the hot spot (the first bytes of the data set).",
        set: |a, t| {
            a.hotspot_size = Some(positive_size(t)?);
            Ok(())
        },
        get: |a| a.hotspot_size.map(size_text),
        ..OLTP_ROW
    },
    Opt {
        name: "async-reads",
        key: Some("oltp.async_reads"),
        help: "Read each transaction's blocks as one batch (\"db file parallel read\").",
        set: |a, t| {
            a.async_reads = switch(t)?;
            Ok(())
        },
        get: |a| Some(a.async_reads.to_string()),
        ..OLTP_ROW
    },
    Opt {
        name: "cache-size",
        key: Some("oltp.cache_size"),
        value: Some("SIZE"),
        help: "Buffer cache size (CLOCK, shared by all sessions) [default: none: every read is physical].",
        set: |a, t| {
            a.cache_size = Some(positive_size(t)?);
            Ok(())
        },
        get: |a| a.cache_size.map(size_text),
        ..OLTP_ROW
    },
    Opt {
        name: "cold-cache",
        key: Some("oltp.cold_cache"),
        help: "Do not load the buffer cache before the run starts (it warms up during the run).",
        set: |a, t| {
            a.cold_cache = switch(t)?;
            Ok(())
        },
        get: |a| Some(a.cold_cache.to_string()),
        ..OLTP_ROW
    },
    // ---- temp
    Opt {
        name: "spill-size",
        key: Some("temp.spill_size"),
        value: Some("SIZE"),
        default: Some("64M"),
        help: "Spill written and read back by each session, per round.",
        with_classes: true,
        set: |a, t| {
            a.spill_size = positive_size(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.spill_size)),
        ..TEMP_ROW
    },
    Opt {
        name: "temp-io",
        key: Some("temp.temp_io"),
        value: Some("SIZE"),
        default: Some("240K"),
        help: "Temp I/O request size, 48K to 4M.",
        set: |a, t| {
            a.temp_io = temp_io(t)?;
            Ok(())
        },
        get: |a| Some(size_text(a.temp_io)),
        ..TEMP_ROW
    },
];

/// `--group-commit N`: commits per log write, a mean from 1 to 1,000.
fn group_commit(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && (1.0..=1000.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{}' is not a number of commits per log write; from 1 to 1000, e.g. 1.4",
            text.trim()
        )),
    }
}
