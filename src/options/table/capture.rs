//! `dbio job from-*`'s own options (what the job is shaped by, what is sampled) and
//! `dbio pg observe`'s.

use crate::options::parse::*;
use crate::options::{Group, Many, Opt};

/// Every row of this part: what its rows share.
const ROW: Opt = Opt {
    group: Group::Shaping,
    with_classes: true,
    ..Opt::DEFAULT
};

pub(super) const CAPTURE: &[Opt] = &[
    // ---- from-iostat
    Opt {
        name: "iostat-device",
        long: Some("device"),
        value: Some("NAME"),
        help: "Only these devices (as iostat names them: sda, nvme0n1, dm-3); repeatable.",
        group: Group::FromIostat,
        many: Many::Repeat,
        set: |a, t| {
            a.shaping.devices.push(t.to_string());
            Ok(())
        },
        ..ROW
    },
    // ---- from-pg
    Opt {
        name: "interval",
        value: Some("DURATION"),
        default: Some("60s"),
        help: "How long each sample watches the server.",
        group: Group::FromPg,
        set: |a, t| {
            a.shaping.interval = interval(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "samples",
        value: Some("N"),
        default: Some("1"),
        help: "How many samples (the job's rate is their average, or the busiest with --peak).",
        group: Group::FromPg,
        set: |a, t| {
            a.shaping.samples = count(t, 1, 10000)? as u32;
            Ok(())
        },
        ..ROW
    },
    // ---- every from-*
    Opt {
        name: "peak",
        help: "The busiest report's rate per class instead of the average over the reports.",
        set: |a, t| {
            a.shaping.peak = switch(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "growth",
        value: Some("X"),
        default: Some("1"),
        help: "Multiply every rate (e.g. 1.5 for half again the load).",
        set: |a, t| {
            a.shaping.growth = growth(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "requirements",
        help: "Also write the [requirements] block `dbio size` reads.",
        set: |a, t| {
            a.shaping.requirements = switch(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "job-size",
        long: Some("size"),
        value: Some("SIZE"),
        help: "The data set size the job names (else an assumed 4G, marked as such).",
        set: |a, t| {
            a.shaping.size = Some(job_size(t)?);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "job-target",
        long: Some("target"),
        value: Some("DIR"),
        help: "The data set directory the job names (else ./dbio-data, marked as assumed).",
        set: |a, t| {
            // As `dbio run --target` takes it: an empty path is no directory.
            path(t, "a directory for the data set, e.g. ./dbio-data")?;
            a.shaping.target = Some(t.to_string());
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "output",
        short: Some('o'),
        value: Some("FILE"),
        help: "Write the job here (a new file; an existing one is never replaced) instead of stdout.",
        set: |a, t| {
            a.shaping.output = Some(path(t, "a file name for the job (e.g. job.toml)")?);
            Ok(())
        },
        ..ROW
    },
    // ---- pg observe
    Opt {
        name: "seconds",
        value: Some("N"),
        default: Some("5"),
        help: "How long to watch.",
        group: Group::Observe,
        set: |a, t| {
            a.observe.seconds = count(t, 1, 86400)? as u32;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "hz",
        value: Some("N"),
        default: Some("100"),
        help: "Samples of pg_stat_activity a second (100 to 1000).",
        group: Group::Observe,
        set: |a, t| {
            a.observe.hz = count(t, 100, 1000)? as u32;
            Ok(())
        },
        ..ROW
    },
];
