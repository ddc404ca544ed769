//! Output, safety, and a run across many hosts.

use crate::options::parse::*;
use crate::options::{Group, Opt, heading};

/// An output option: what its rows share.
const OUTPUT_ROW: Opt = Opt {
    heading: heading::OUTPUT,
    with_classes: true,
    ..Opt::DEFAULT
};
/// A safety option: what its rows share.
const SAFETY_ROW: Opt = Opt {
    heading: heading::SAFETY,
    with_classes: true,
    ..Opt::DEFAULT
};
/// An option of a run across hosts: what its rows share.
const CLUSTER_ROW: Opt = Opt {
    heading: heading::CLUSTER,
    group: Group::Cluster,
    with_classes: true,
    ..Opt::DEFAULT
};

pub(super) const OUTPUT: &[Opt] = &[
    Opt {
        name: "out",
        value: Some("DIR"),
        default: Some("./dbio-runs"),
        help: "Directory the results are created in: the run directory, or the directory of a sweep, calibration or matrix (with each point's run directory inside).",
        set: |a, t| {
            a.out = path(t, "a directory (e.g. ./dbio-runs)")?;
            Ok(())
        },
        ..OUTPUT_ROW
    },
    Opt {
        name: "metrics",
        value: Some("FILE"),
        help: "Write the run's live figures in the Prometheus text format to FILE every second (replaced whole; for the node_exporter textfile collector, which reads only *.prom files); removed at the end unless --metrics-keep. dbio run only.",
        set: |a, t| {
            a.metrics = Some(path(t, "a file name (e.g. dbio.prom)")?);
            Ok(())
        },
        ..OUTPUT_ROW
    },
    Opt {
        name: "metrics-keep",
        help: "Leave the --metrics file in place at the end of the run.",
        requires: Some("metrics"),
        set: |a, t| {
            a.metrics_keep = switch(t)?;
            Ok(())
        },
        ..OUTPUT_ROW
    },
    Opt {
        name: "json",
        help: "Print JSON to stdout instead of text: a run's result.json (a sweep's sweep.json, a calibration's calibrate.json, a matrix's matrix.json), or what else the command shows (a list of runs, a run, a map, a sizing, what was done).",
        set: |a, t| {
            a.json = switch(t)?;
            Ok(())
        },
        ..OUTPUT_ROW
    },
    Opt {
        name: "quiet",
        short: Some('q'),
        help: "No live progress line or bar (--progress never).",
        set: |a, t| {
            a.quiet = switch(t)?;
            Ok(())
        },
        ..OUTPUT_ROW
    },
    Opt {
        name: "progress",
        value: Some("WHEN"),
        default: Some("auto"),
        help: "Live progress on stderr: auto (when stderr is a terminal, whatever stdout is), always, never.",
        conflicts: &["quiet"],
        set: |a, t| {
            a.progress = crate::progress::When::parse(t)?;
            Ok(())
        },
        ..OUTPUT_ROW
    },
    // ---- safety
    Opt {
        name: "destructive",
        help: "Allow write-iops/write-mbps on a block device as --target, overwriting it. Refused anyway when it is mounted, in use, or holds any signature libblkid or dbio knows (file system, partition table, LVM, RAID, ASM, ...).",
        with_classes: false,
        set: |a, t| {
            a.destructive = switch(t)?;
            Ok(())
        },
        ..SAFETY_ROW
    },
    Opt {
        name: "yes",
        help: "With --destructive: do not ask for confirmation on the terminal. With --job: allow the job file's [hosts] table to start programs (ssh, and dbio on the hosts); each command is printed before it runs.",
        set: |a, t| {
            a.yes = switch(t)?;
            Ok(())
        },
        ..SAFETY_ROW
    },
    Opt {
        name: "continue-on-error",
        help: "Keep going after an I/O error, counting errors per event (default: stop at the first, keep the partial result, exit 4).",
        set: |a, t| {
            a.continue_on_error = switch(t)?;
            Ok(())
        },
        ..SAFETY_ROW
    },
    // ---- a run across many hosts
    Opt {
        name: "hosts",
        key: Some("hosts.names"),
        value: Some("H1,H2,..."),
        help: "Run on these hosts at once, each an ssh destination as ssh takes it (user@host, an ~/.ssh/config alias): one synchronized run, histograms merged, a row per host. `{host}` in --target is each host's name.",
        set: |a, t| {
            a.hosts = hosts(t)?;
            Ok(())
        },
        get: |a| (!a.hosts.is_empty()).then(|| a.hosts.join(",")),
        ..CLUSTER_ROW
    },
    Opt {
        name: "ssh",
        key: Some("hosts.ssh"),
        value: Some("CMD"),
        default: Some("ssh"),
        help: "The command that reaches a host, with its options (e.g. \"ssh -F ./cluster.conf\"); dbio adds -o BatchMode=yes (never a password prompt) and -o ConnectTimeout=10 unless given.",
        set: |a, t| {
            if shlex::split(t).is_none_or(|w| w.is_empty()) {
                return Err("a command, e.g. \"ssh\" or \"ssh -F FILE\" (quotes balanced)".into());
            }
            a.ssh = t.to_string();
            Ok(())
        },
        get: |a| Some(a.ssh.clone()),
        ..CLUSTER_ROW
    },
    Opt {
        name: "remote-dbio",
        key: Some("hosts.remote_dbio"),
        value: Some("PATH"),
        default: Some("dbio"),
        help: "The dbio binary on the hosts (default: dbio on the remote PATH); its version must be this one's.",
        conflicts: &["push"],
        set: |a, t| {
            if t.is_empty() || t.bytes().any(|b| b.is_ascii_control()) {
                return Err("a path without control characters, e.g. /usr/local/bin/dbio".into());
            }
            a.remote_dbio = t.to_string();
            Ok(())
        },
        get: |a| Some(a.remote_dbio.clone()),
        ..CLUSTER_ROW
    },
    Opt {
        name: "push",
        key: Some("hosts.push"),
        help: "Copy this dbio binary to a private temporary directory on each host and run it from there; it is removed as soon as it has started.",
        set: |a, t| {
            a.push = switch(t)?;
            Ok(())
        },
        get: |a| a.push.then(|| "true".into()),
        ..CLUSTER_ROW
    },
    Opt {
        name: "shared",
        key: Some("hosts.shared"),
        help: "One data set on storage every host sees (cluster file system, NFS, a shared device): prepared once by the first host, then read by all (tests that only read).",
        set: |a, t| {
            a.shared = switch(t)?;
            Ok(())
        },
        get: |a| a.shared.then(|| "true".into()),
        ..CLUSTER_ROW
    },
    // One self-contained row: every command that prints a report takes it (Group::Report).
    Opt {
        name: "format",
        value: Some("FORMAT"),
        default: Some("text"),
        help: "How the report printed to stdout is written: text (aligned columns) or md (Markdown: headings and pipe tables, to paste into a ticket or a wiki).",
        group: Group::Report,
        set: |a, t| {
            a.format = crate::report::Format::parse(t)?;
            Ok(())
        },
        ..OUTPUT_ROW
    },
];
