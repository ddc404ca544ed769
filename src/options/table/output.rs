//! Output, safety, and a run across many hosts.

use crate::options::parse::*;
use crate::options::{Applies, Group, Opt, heading};

pub(super) const OUTPUT: &[Opt] = &[
    Opt {
        name: "out",
        short: None,
        key: None,
        value: Some("DIR"),
        default: Some("./dbio-runs"),
        help: "Directory the results are created in: the run directory, or the directory of a sweep, calibration or matrix (with each point's run directory inside).",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.out = path(t, "a directory (e.g. ./dbio-runs)")?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "metrics",
        short: None,
        key: None,
        value: Some("FILE"),
        default: None,
        help: "Write the run's live figures in the Prometheus text format to FILE every second (replaced whole; for the node_exporter textfile collector, which reads only *.prom files); removed at the end unless --metrics-keep. dbio run only.",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.metrics = Some(path(t, "a file name (e.g. dbio.prom)")?);
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "metrics-keep",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Leave the --metrics file in place at the end of the run.",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: Some("metrics"),
        set: |a, t| {
            a.metrics_keep = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "json",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Print JSON to stdout instead of text: a run's result.json (a sweep's sweep.json, a calibration's calibrate.json, a matrix's matrix.json), or the list, run or map shown.",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.json = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "quiet",
        short: Some('q'),
        key: None,
        value: None,
        default: None,
        help: "No live progress line or bar (--progress never).",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.quiet = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "progress",
        short: None,
        key: None,
        value: Some("WHEN"),
        default: Some("auto"),
        help: "Live progress on stderr: auto (when stderr is a terminal, whatever stdout is), always, never.",
        heading: heading::OUTPUT,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &["quiet"],
        requires: None,
        set: |a, t| {
            a.progress = crate::progress::When::parse(t)?;
            Ok(())
        },
        get: |_| None,
    },
    // ---- safety
    Opt {
        name: "destructive",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Allow write-iops/write-mbps on a block device as --target, overwriting it. Refused anyway when it is mounted, in use, or holds any signature libblkid or dbio knows (file system, partition table, LVM, RAID, ASM, ...).",
        heading: heading::SAFETY,
        group: Group::Run,
        applies: Applies::All,
        with_classes: false,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.destructive = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "yes",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "With --destructive: do not ask for confirmation on the terminal. With --job: allow the job file's [hosts] table to start programs (ssh, and dbio on the hosts); each command is printed before it runs.",
        heading: heading::SAFETY,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.yes = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    Opt {
        name: "continue-on-error",
        short: None,
        key: None,
        value: None,
        default: None,
        help: "Keep going after an I/O error, counting errors per event (default: stop at the first, keep the partial result, exit 4).",
        heading: heading::SAFETY,
        group: Group::Run,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.continue_on_error = switch(t)?;
            Ok(())
        },
        get: |_| None,
    },
    // ---- a run across many hosts
    Opt {
        name: "hosts",
        short: None,
        key: Some("hosts.names"),
        value: Some("H1,H2,..."),
        default: None,
        help: "Run on these hosts at once, each an ssh destination as ssh takes it (user@host, an ~/.ssh/config alias): one synchronized run, histograms merged, a row per host. `{host}` in --target is each host's name.",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.hosts = hosts(t)?;
            Ok(())
        },
        get: |a| (!a.hosts.is_empty()).then(|| a.hosts.join(",")),
    },
    Opt {
        name: "ssh",
        short: None,
        key: Some("hosts.ssh"),
        value: Some("CMD"),
        default: Some("ssh"),
        help: "The command that reaches a host, with its options (e.g. \"ssh -F ./cluster.conf\"); dbio adds -o BatchMode=yes (never a password prompt) and -o ConnectTimeout=10 unless given.",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            if shlex::split(t).is_none_or(|w| w.is_empty()) {
                return Err("a command, e.g. \"ssh\" or \"ssh -F FILE\" (quotes balanced)".into());
            }
            a.ssh = t.to_string();
            Ok(())
        },
        get: |a| Some(a.ssh.clone()),
    },
    Opt {
        name: "remote-dbio",
        short: None,
        key: Some("hosts.remote_dbio"),
        value: Some("PATH"),
        default: Some("dbio"),
        help: "The dbio binary on the hosts (default: dbio on the remote PATH); its version must be this one's.",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &["push"],
        requires: None,
        set: |a, t| {
            if t.is_empty() || t.bytes().any(|b| b.is_ascii_control()) {
                return Err("a path without control characters, e.g. /usr/local/bin/dbio".into());
            }
            a.remote_dbio = t.to_string();
            Ok(())
        },
        get: |a| Some(a.remote_dbio.clone()),
    },
    Opt {
        name: "push",
        short: None,
        key: Some("hosts.push"),
        value: None,
        default: None,
        help: "Copy this dbio binary to a private temporary directory on each host and run it from there; it is removed as soon as it has started.",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.push = switch(t)?;
            Ok(())
        },
        get: |a| a.push.then(|| "true".into()),
    },
    Opt {
        name: "shared",
        short: None,
        key: Some("hosts.shared"),
        value: None,
        default: None,
        help: "One data set on storage every host sees (cluster file system, NFS, a shared device): prepared once by the first host, then read by all (tests that only read).",
        heading: heading::CLUSTER,
        group: Group::Cluster,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.shared = switch(t)?;
            Ok(())
        },
        get: |a| a.shared.then(|| "true".into()),
    },
    // One self-contained row: every command that prints a report takes it (Group::Report).
    Opt {
        name: "format",
        short: None,
        key: None,
        value: Some("FORMAT"),
        default: Some("text"),
        help: "How the report printed to stdout is written: text (aligned columns) or md (Markdown: headings and pipe tables, to paste into a ticket or a wiki).",
        heading: heading::OUTPUT,
        group: Group::Report,
        applies: Applies::All,
        with_classes: true,
        conflicts: &[],
        requires: None,
        set: |a, t| {
            a.format = crate::report::Format::parse(t)?;
            Ok(())
        },
        get: |_| None,
    },
];
