//! The options of one command each (and `--db`, every command's): what a command takes
//! beside the options of a run.

use crate::options::parse::*;
use crate::options::{Group, Many, Opt, heading};

/// A command's own option: listed first in its help, under no heading. Beside a job file
/// it is no run option the job's classes would ignore (`dbio sweep --job J --param ...`).
const OWN: Opt = Opt {
    with_classes: true,
    ..Opt::DEFAULT
};

pub(super) const COMMANDS: &[Opt] = &[
    Opt {
        name: "db",
        value: Some("PATH"),
        help: "The results store every run is recorded in (default: $XDG_DATA_HOME/dbio/dbio.db, else ~/.local/share/dbio/dbio.db).",
        heading: heading::GLOBAL,
        group: Group::Global,
        env: Some("DBIO_DB"),
        set: |a, t| {
            a.db = Some(path(t, "a file for the results store (e.g. ./dbio.db)")?);
            Ok(())
        },
        ..OWN
    },
    // ---- sweep
    Opt {
        name: "param",
        value: Some("NAME=V1,V2,..."),
        help: "The parameter swept and its values, e.g. sessions=1,2,4,8 or block-size=4K,8K,16K. NAME is one of: sessions, block-size, temp-io, depth, batch, rate (requests/s, open loop), span (the active surface: span=25%,50%,100%), io-mode (none,directio,asynch,setall), engine (sync,aio,uring), scheduler (the I/O scheduler of the disks under the data set: none,mq-deadline,bfq,kyber; root only, the original put back at the end), fs (file systems made on --device with --destructive: ext4,xfs,ext4:data=writeback; root only, the device left blank).",
        group: Group::Sweep,
        required_unless: Some("curve"),
        set: |a, t| {
            a.param = Some(crate::options::swept::parse_param(t)?);
            Ok(())
        },
        ..OWN
    },
    Opt {
        name: "device",
        value: Some("DEV"),
        help: "With --param fs: the blank block device each file system is made on (checked like any device dbio overwrites; needs --destructive). Every point's data set lives on it.",
        group: Group::Sweep,
        set: |a, t| {
            a.device = Some(path(t, "a block device (e.g. /dev/sdb)")?);
            Ok(())
        },
        ..OWN
    },
    Opt {
        name: "curve",
        help: "A latency-vs-load curve: find the maximum rate (closed loop), then run open loop at 10, 50, 70, 80, 90 and 100 % of it.",
        group: Group::Sweep,
        conflicts: &["param"],
        set: |a, t| {
            a.curve = switch(t)?;
            Ok(())
        },
        ..OWN
    },
    // ---- run, sweep
    Opt {
        name: "job",
        value: Some("FILE"),
        help: "Run the I/O classes of a job file (TOML): events, sizes, sessions, rates, limits. Options typed here win over the job file.",
        set: |a, t| {
            a.job = Some(path(t, "a job file (e.g. job.toml)")?);
            Ok(())
        },
        ..OWN
    },
    Opt {
        name: "save-job",
        value: Some("FILE"),
        help: "Write the job file equivalent to this run (a new file), then run it.",
        set: |a, t| {
            a.save_job = Some(path(t, "a file name for the job (e.g. job.toml)")?);
            Ok(())
        },
        ..OWN
    },
    // ---- the data set's commands
    Opt {
        name: "buffered",
        help: "Fill with buffered writes instead of O_DIRECT (for file systems without direct I/O).",
        group: Group::Prepare,
        set: |a, t| {
            a.buffered = switch(t)?;
            Ok(())
        },
        ..OWN
    },
    Opt {
        name: "stale",
        help: "Only repair what `dbio doctor` reports as stale: clear the in-use mark a killed run left and remove its temporary files. Data files stay.",
        group: Group::Clean,
        set: |a, t| {
            a.stale = switch(t)?;
            Ok(())
        },
        ..OWN
    },
    Opt {
        name: "passes",
        value: Some("N"),
        default: Some("2"),
        help: "How many times the whole target is written (1 to 100).",
        group: Group::Precondition,
        set: |a, t| {
            a.passes = count(t, 1, u64::from(crate::dataset::precondition::MAX_PASSES))? as u32;
            Ok(())
        },
        ..OWN
    },
    // ---- the results store
    Opt {
        name: "test",
        value: Some("NAME"),
        help: "Only runs of this test.",
        group: Group::Runs,
        set: |a, t| {
            a.only_test = Some(test_name(t)?);
            Ok(())
        },
        ..OWN
    },
    Opt {
        name: "last",
        value: Some("N"),
        help: "Only the N most recent runs.",
        group: Group::Runs,
        set: |a, t| {
            a.last = Some(count(t, 1, u64::from(u32::MAX))? as u32);
            Ok(())
        },
        ..OWN
    },
    Opt {
        name: "html",
        value: Some("FILE"),
        help: "Also write the comparison as a self-contained HTML page to FILE.",
        group: Group::Compare,
        set: |a, t| {
            a.html = Some(path(t, "a file name (e.g. compare.html)")?);
            Ok(())
        },
        ..OWN
    },
    Opt {
        name: "runs",
        value: Some("ID,..."),
        help: "Take the device's IOPS, MiB/s and usable surface from these recorded runs (ids as `dbio runs` lists them) — the requirements' job at several --span values — instead of the plan's figures.",
        group: Group::Size,
        many: Many::List,
        set: |a, t| {
            let ids = list(t, |id| count(id, 1, i64::MAX as u64).map(|v| v as i64))?;
            a.runs.extend(ids);
            Ok(())
        },
        ..OWN
    },
    // ---- a host's part of a run across hosts
    Opt {
        name: "pushed",
        value: Some("DIR"),
        help: "The private directory `--push` copied this binary into: removed at once.",
        group: Group::Agent,
        set: |a, t| {
            a.pushed = Some(path(t, "a directory")?);
            Ok(())
        },
        ..OWN
    },
];
