//! Every command takes the options of the table from the table: the same flag shows the
//! same help on every command that has it (only its default may be the command's own), and
//! a command's own default is what it runs with unless one is typed.

use std::collections::BTreeMap;
use std::time::Duration;

use clap::Parser;
use dbio::cli::{Cli, Command};
use dbio::engine::{EngineChoice, IoMode};

use crate::util::Env;

/// One option as `--help` shows it: its help text and its default (clap's `[default: X]`).
#[derive(Debug, Clone, PartialEq)]
struct Shown {
    help: String,
    default: Option<String>,
}

/// The options `dbio <command> --help` lists, by long name. Works for both of clap's
/// layouts (help beside the flag, or below it with the default as its own paragraph).
fn help_of(command: &str) -> BTreeMap<String, Shown> {
    let env = Env::new();
    let mut args: Vec<&str> = command.split(' ').collect();
    args.push("--help");
    let out = env.output(&args);
    assert_eq!(out.status.code(), Some(0), "dbio {command} --help");
    let text = String::from_utf8(out.stdout).expect("UTF-8 help");
    let mut blocks: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indented = line.len() > trimmed.len();
        // `  -q, --quiet  ...` or `      --out <DIR>  ...`
        let flag = trimmed
            .strip_prefix("--")
            .or_else(|| {
                let b = trimmed.as_bytes();
                (b.len() > 6 && b[0] == b'-' && &trimmed[2..6] == ", --").then(|| &trimmed[6..])
            })
            .filter(|_| indented);
        if let Some(rest) = flag {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            let mut after = rest[name.len()..].trim_start();
            if after.starts_with('<') {
                let close = after.find('>').expect("a value name closes");
                after = &after[close + 1..];
            }
            blocks.push((name, after.to_string()));
        } else if !indented {
            // A heading (`Test:`) or the end: the block before it is complete.
            blocks.push((String::new(), String::new()));
        } else if let Some((_, help)) = blocks.last_mut() {
            help.push(' ');
            help.push_str(trimmed);
        }
    }
    let mut out = BTreeMap::new();
    for (name, help) in blocks {
        if name.is_empty() {
            continue;
        }
        let mut help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut default = None;
        if help.ends_with(']')
            && let Some(at) = help.rfind("[default: ")
        {
            default = Some(help[at + "[default: ".len()..help.len() - 1].to_string());
            help.truncate(at);
            help = help.trim_end().to_string();
        }
        out.insert(name, Shown { help, default });
    }
    out
}

/// The options `a` and `b` both list (but `--help` and `--version`, which are clap's):
/// each with the same help text. Returns their names.
fn same_help(a: &str, b: &str) -> Vec<String> {
    let (ha, hb) = (help_of(a), help_of(b));
    let mut both = Vec::new();
    for (name, sa) in &ha {
        if name == "help" || name == "version" {
            continue;
        }
        if let Some(sb) = hb.get(name) {
            assert_eq!(
                sa.help, sb.help,
                "--{name}: `dbio {a} --help` and `dbio {b} --help` say different things"
            );
            both.push(name.clone());
        }
    }
    both
}

#[test]
fn calibrate_and_matrix_show_runs_help_for_the_options_they_share() {
    let calibrate = same_help("calibrate", "run");
    for name in [
        "io-mode", "engine", "warmup", "out", "json", "target", "size", "span", "hosts",
    ] {
        assert!(
            calibrate.iter().any(|n| n == name),
            "--{name} on calibrate and run: {calibrate:?}"
        );
    }
    let matrix = same_help("matrix", "sweep");
    for name in [
        "io-mode", "engine", "warmup", "out", "json", "target", "fill",
    ] {
        assert!(
            matrix.iter().any(|n| n == name),
            "--{name} on matrix and sweep: {matrix:?}"
        );
    }
    let prepare = same_help("prepare", "run");
    assert!(prepare.iter().any(|n| n == "quiet"), "{prepare:?}");
    same_help("sweep", "run");
    same_help("matrix", "calibrate");
    // The commands that only print or write results take `--out`, `--json`, `--quiet` and
    // `--block-size` from the table too.
    for (command, names) in [
        ("mem", &["seed", "out", "json", "quiet"][..]),
        ("map", &["json", "block-size"][..]),
        ("runs", &["json"][..]),
        ("show", &["json"][..]),
    ] {
        let shared = same_help(command, "run");
        for name in names {
            assert!(
                shared.iter().any(|n| n == name),
                "--{name} on {command} and run: {shared:?}"
            );
        }
    }
}

#[test]
fn a_command_shows_its_own_default_and_run_keeps_its_own() {
    let (run, calibrate, matrix) = (help_of("run"), help_of("calibrate"), help_of("matrix"));
    let default = |h: &BTreeMap<String, Shown>, name: &str| {
        h.get(name)
            .unwrap_or_else(|| panic!("--{name} listed"))
            .default
            .clone()
    };
    // A calibration's or a matrix's points warm up for less time than a run.
    assert_eq!(default(&run, "warmup").as_deref(), Some("5s"));
    assert_eq!(default(&calibrate, "warmup").as_deref(), Some("2s"));
    assert_eq!(default(&matrix, "warmup").as_deref(), Some("2s"));
    for h in [&run, &calibrate, &matrix] {
        assert_eq!(default(h, "io-mode").as_deref(), Some("setall"));
        assert_eq!(default(h, "engine").as_deref(), Some("auto"));
        assert_eq!(default(h, "out").as_deref(), Some("./dbio-runs"));
        assert_eq!(default(h, "json"), None);
    }
    // Calibrate's and matrix's own options are still theirs.
    assert_eq!(
        default(&calibrate, "point-duration").as_deref(),
        Some("10s")
    );
    assert_eq!(
        default(&calibrate, "max-latency").as_deref(),
        Some("p95=10ms")
    );
    assert_eq!(default(&matrix, "point-duration").as_deref(), Some("10s"));
    assert_eq!(
        default(&calibrate, "max-outstanding").as_deref(),
        Some("1024")
    );
    for (name, d) in [
        ("matrix", "basic"),
        ("small-size", "8K"),
        ("large-size", "1M"),
        ("num-small", "32"),
        ("num-large", "8"),
        ("large-access", "stream"),
        ("large-outstanding", "1"),
        ("small-outstanding", "1"),
        ("write-pct", "0"),
    ] {
        assert_eq!(default(&matrix, name).as_deref(), Some(d), "--{name}");
        assert!(!run.contains_key(name), "--{name} is matrix's own");
    }
}

#[test]
fn calibrate_and_matrix_run_with_their_defaults_unless_typed() {
    let parse = |args: &[&str]| {
        Cli::try_parse_from(std::iter::once("dbio").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .command
    };
    let Command::Calibrate(c) = parse(&["calibrate"]) else {
        panic!("calibrate")
    };
    let o = &c.options.0;
    assert_eq!(o.warmup, Duration::from_secs(2));
    assert_eq!(o.io_mode, IoMode::Setall);
    assert_eq!(o.engine, EngineChoice::Auto);
    assert_eq!(o.out, std::path::PathBuf::from("./dbio-runs"));
    assert!(!o.json);
    assert_eq!(o.point_duration, Duration::from_secs(10));
    assert_eq!(o.max_outstanding, 1024);
    assert_eq!(
        (o.max_latency.stat.name(), o.max_latency.us),
        ("p95", 10_000.0)
    );
    let Command::Calibrate(c) = parse(&[
        "calibrate",
        "--warmup",
        "0s",
        "--io-mode",
        "none",
        "--engine",
        "sync",
        "--out",
        "x",
        "--json",
    ]) else {
        panic!("calibrate")
    };
    let o = &c.options.0;
    assert_eq!(o.warmup, Duration::ZERO);
    assert_eq!(o.io_mode, IoMode::None);
    assert_eq!(o.engine, EngineChoice::Sync);
    assert_eq!(o.out, std::path::PathBuf::from("x"));
    assert!(o.json);
    assert!(o.typed("warmup") && o.typed("io-mode") && !o.typed("target"));

    let Command::Matrix(m) = parse(&["matrix"]) else {
        panic!("matrix")
    };
    assert_eq!(m.options.0.warmup, Duration::from_secs(2));
    assert_eq!(m.options.0.io_mode, IoMode::Setall);
    let Command::Matrix(m) = parse(&["matrix", "--warmup", "1s", "--engine", "aio"]) else {
        panic!("matrix")
    };
    assert_eq!(m.options.0.warmup, Duration::from_secs(1));
    assert_eq!(m.options.0.engine, EngineChoice::Aio);
    let Command::Matrix(m) = parse(&["matrix"]) else {
        panic!("matrix")
    };
    let o = &m.options.0;
    assert_eq!(o.matrix.name(), "basic");
    assert_eq!((o.small_size, o.large_size), (8 << 10, 1 << 20));
    assert_eq!((o.num_small, o.num_large, o.write_pct), (32, 8, 0));
    assert_eq!(o.large_access.name(), "stream");
    assert_eq!((o.large_outstanding, o.small_outstanding), (1, 1));

    // `dbio run` keeps its own.
    let Command::Run(r) = parse(&["run", "read-iops"]) else {
        panic!("run")
    };
    assert_eq!(r.0.warmup, Duration::from_secs(5));
}

#[test]
fn a_bad_value_of_their_own_options_is_refused_in_one_line() {
    for args in [
        &["calibrate", "--max-latency", "p97=1ms"][..],
        &["calibrate", "--max-outstanding", "0"][..],
        &["matrix", "--matrix", "diagonal"][..],
        &["matrix", "--num-small", "2000"][..],
        &["matrix", "--write-pct", "101"][..],
        &["matrix", "--large-access", "sideways"][..],
        &["matrix", "--small-size", "0"][..],
    ] {
        let env = Env::new();
        let out = env.output(args);
        crate::util::refusal_line(&format!("{args:?}"), &out, &[args[1]]);
        assert!(
            crate::util::tree(env.path()).is_empty(),
            "{args:?}: nothing made"
        );
    }
}

#[test]
fn a_bad_value_on_calibrate_or_matrix_is_refused_as_on_run() {
    for command in ["calibrate", "matrix"] {
        for (flag, value, accepted) in [
            ("--io-mode", "fast", "none, directio, asynch, setall"),
            ("--engine", "io_uring", "auto, uring, aio, sync"),
            ("--warmup", "-5s", "--warmup"),
            ("--point-duration", "soon", "--point-duration"),
        ] {
            let env = Env::new();
            let out = env.output(&[command, flag, value]);
            crate::util::refusal_line(&format!("{command} {flag} {value}"), &out, &[accepted]);
            assert!(
                crate::util::tree(env.path()).is_empty(),
                "{command} {flag} {value}: nothing made"
            );
        }
    }
}

/// Every (sub)command of `dbio`, named as typed after `dbio` (`pg run`; `` for `dbio`).
fn every_command(cmd: &clap::Command, path: &str, out: &mut Vec<(String, clap::Command)>) {
    out.push((path.to_string(), cmd.clone()));
    for sub in cmd.get_subcommands() {
        let p = format!("{path} {}", sub.get_name());
        every_command(sub, p.trim_start(), out);
    }
}

/// A clap argument's whole definition (clap's `Arg` has no equality; its Debug shows every
/// field), but where the command put it: its place in the help and the heading it is under
/// (clap marks the command's current heading on it, said once here).
fn definition(a: &clap::Arg) -> String {
    let debug = format!("{a:?}");
    let mut kept: Vec<&str> = debug
        .split(", ")
        .filter(|f| !f.starts_with("disp_ord: ") && !f.starts_with("help_heading: "))
        .collect();
    let heading = format!("heading {:?}", a.get_help_heading());
    kept.push(&heading);
    kept.join(", ")
}

#[test]
fn every_flag_of_every_command_comes_from_the_table() {
    use clap::CommandFactory;
    use dbio::options::{Command as Cmd, OPTIONS};
    let mut commands = Vec::new();
    every_command(&Cli::command(), "", &mut commands);
    let mut flags = 0;
    let mut not_from_table = Vec::new();
    for (path, cmd) in &commands {
        for a in cmd.get_arguments() {
            // Positional arguments are no flags; --help and --version are clap's.
            let Some(long) = a.get_long() else { continue };
            if matches!(long, "help" | "version") {
                continue;
            }
            flags += 1;
            // The row of the table the command takes with this flag, made into clap's
            // argument the one way the table's rows are.
            let made = Cmd::at(path).and_then(|c| {
                let takes = c.takes();
                OPTIONS
                    .iter()
                    .find(|o| o.long() == long && takes.has(o))
                    .map(|o| dbio::options::cli::arg(o, takes))
            });
            match made {
                Some(m) if m.get_id() == a.get_id() && definition(&m) == definition(a) => {}
                Some(m) => not_from_table.push(format!(
                    "dbio {path} --{long}: differs from the table's row\n  clap:  {}\n  table: {}",
                    definition(a),
                    definition(&m)
                )),
                None => not_from_table.push(format!("dbio {path} --{long}: no row of the table")),
            }
        }
    }
    assert!(flags > 100, "the walk saw the flags ({flags})");
    assert!(
        not_from_table.is_empty(),
        "flags declared outside the option table:\n{}",
        not_from_table.join("\n")
    );
}

#[test]
fn a_shared_option_reads_the_same_on_every_command_that_takes_it() {
    use dbio::options::{COMMANDS, OPTIONS};
    // `--json` of a run and of a map, `--pg` of a run through PostgreSQL and of its clean-up.
    assert!(same_help("run", "map").contains(&"json".to_string()));
    assert!(same_help("pg run", "pg clean").contains(&"pg".to_string()));
    // Every pair of commands: an option both take reads the same on both, unless the table
    // gives one of them its own words for it (`dbio pg run --size`: a table's size).
    let helps: Vec<(&str, &dbio::options::Takes, BTreeMap<String, Shown>)> = COMMANDS
        .iter()
        .flat_map(|t| t.command.paths().iter().map(move |p| (*p, t)))
        .filter(|(p, _)| !p.is_empty())
        .map(|(p, t)| (p, t, help_of(p)))
        .collect();
    let mut compared = 0;
    for (i, (a, ta, ha)) in helps.iter().enumerate() {
        for (b, tb, hb) in &helps[i + 1..] {
            for o in OPTIONS.iter().filter(|o| ta.has(o) && tb.has(o)) {
                if ta.help(o) != o.help || tb.help(o) != o.help {
                    continue;
                }
                let name = o.long();
                let (sa, sb) = (&ha[name], &hb[name]);
                assert_eq!(
                    sa.help, sb.help,
                    "--{name}: `dbio {a} --help` and `dbio {b} --help` say different things"
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 300, "{compared} options compared");
}
