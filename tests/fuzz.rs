//! Input hardening: arbitrary text into the unit parsers and arbitrary command
//! lines into the parser and validation never panic; sizes never overflow; absurd values
//! are refused with a message. Bounded to a few seconds so it runs in every `cargo test`.

use std::collections::BTreeMap;

use dbio::cli::{Cli, Command};
use dbio::options::{OPTIONS, Opt};
use dbio::units;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use clap::{CommandFactory, Parser};

use crate::util::Env;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Nothing written into the source tree; a failure prints its input.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text that looks like what people type, and text that does not.
fn unit_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[-+ ]?[0-9]{0,25}(\\.[0-9]{0,3})?[a-zA-Z]{0,4}",
        "[0-9]{0,22}[KMGTkmgt]?(\\.\\.[0-9]{0,22}[KMGT]?)?",
        "[0-9]{0,22}(ms|s|m|h|min)?(\\.\\.[0-9]{0,22}(ms|s|m|h)?)?",
    ]
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn unit_parsers_never_panic(s in unit_text()) {
        if let Ok(v) = units::parse_size(&s) {
            // Whatever is accepted round-trips through its label.
            prop_assert_eq!(units::parse_size(&units::size_label(v)), Ok(v));
        }
        if let Ok(d) = units::parse_duration(&s) {
            prop_assert!(d.as_secs() <= 366 * 24 * 3600);
        }
        if let Ok(r) = units::parse_size_range(&s) {
            prop_assert!(r.lo <= r.hi);
        }
        if let Ok(r) = units::parse_duration_range(&s) {
            prop_assert!(r.lo <= r.hi);
        }
    }
}

/// The subcommands that take options of the option table, each with those options: read
/// from the command line clap builds, so an option added to the table (or to a command) is
/// fuzzed without anyone listing it here.
fn table_options_by_command() -> BTreeMap<String, Vec<&'static Opt>> {
    let cli = Cli::command();
    let mut out = BTreeMap::new();
    // `dbio` itself (`--db`), commands and their own subcommands (`pg run`), named as typed.
    let mut subs: Vec<(String, &clap::Command)> = vec![(String::new(), &cli)];
    for sub in cli.get_subcommands() {
        subs.push((sub.get_name().to_string(), sub));
        for inner in sub.get_subcommands() {
            subs.push((format!("{} {}", sub.get_name(), inner.get_name()), inner));
        }
    }
    for (name, sub) in subs {
        let taken: Vec<&'static Opt> = OPTIONS
            .iter()
            .filter(|o| {
                sub.get_arguments()
                    .any(|a| a.get_id() == o.name && a.get_long() == Some(o.long()))
            })
            .collect();
        if !taken.is_empty() {
            out.insert(name, taken);
        }
    }
    out
}

/// The start of a command line of `command` that parses when nothing is added: a test for
/// `run` and `sweep`, and the swept parameter.
fn head(command: &str) -> Vec<String> {
    let c = command;
    let words: &[&str] = match command {
        "run" => &["run", "read-iops"],
        "sweep" => &["sweep", "read-iops", "--param", "sessions=1,2"],
        "pg run" | "pg compare" => &[c, "read-iops"],
        "pg observe" => &[c, "--pg", "host=/tmp"],
        // `--db`, which every command takes.
        "" => &["runs"],
        "show" => &[c, "1"],
        "compare" => &[c, "1", "2"],
        "size" => &[c, "plan.toml"],
        "job from-awr" | "job from-iostat" => &[c, "report.txt"],
        c => &[c],
    };
    std::iter::once("dbio")
        .chain(words.iter().flat_map(|w| w.split(' ')))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// Values, sensible and not, to give options.
const VALUES: &[&str] = &[
    "0",
    "1",
    "7",
    "512",
    "4K",
    "8K",
    "1M",
    "64M",
    "1G",
    "99999999999T",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "1s",
    "0s",
    "500ms",
    "10m",
    "1h",
    "9999999999h",
    "512..8K",
    "8K..512",
    "1ms..5ms",
    "..",
    "random",
    "zero",
    "compress=2",
    "compress=0",
    "dedupe=4",
    "dedupe=99999",
    "setall",
    "none",
    "uring",
    "aio",
    "sync",
    "fdatasync",
    "",
    " ",
    "é",
    "1e9",
    "0x10",
    "4294967296",
    "65536",
    "65537",
    "dsync",
    "50%",
    "101%",
    "a,b",
    "a,,b",
    "/tmp/dbio-fuzz-never-used",
];

/// Parses `args` as dbio would and runs the checks that need nothing but the input: none
/// may panic, and what they accept must hold together.
fn parse_and_check(args: &[String]) -> Result<(), TestCaseError> {
    let Ok(cli) = Cli::try_parse_from(args) else {
        return Ok(());
    };
    match cli.command {
        Command::Run(a) => {
            if let Ok(cfg) = dbio::options::check::run_config(&a.0) {
                prop_assert!(cfg.sessions >= 1 && cfg.sessions <= 65536);
                prop_assert!(cfg.dataset.size >= cfg.dataset.block_size);
                prop_assert!(cfg.multiblock_bytes() <= cfg.dataset.file_size());
            }
        }
        Command::Sweep(a) => {
            let _ = dbio::options::check::run_config(&a.run.0);
        }
        Command::Prepare(a) => {
            let _ = dbio::options::check::data_set(&a.options.0);
        }
        Command::Calibrate(a) => {
            let _ = dbio::options::check::data_set(&a.options.0);
        }
        Command::Matrix(a) => {
            let _ = dbio::options::check::data_set(&a.options.0);
        }
        _ => {}
    }
    Ok(())
}

/// Every option of the table is on the command line of some command, and the commands
/// that take the table's options are the ones its groups name.
#[test]
fn every_table_option_is_on_a_command_and_fuzzed_there() {
    let by_command = table_options_by_command();
    let commands: Vec<&str> = by_command.keys().map(String::as_str).collect();
    for c in ["calibrate", "matrix", "pg run", "prepare", "run", "sweep"] {
        assert!(
            commands.contains(&c),
            "{c} takes table options: {commands:?}"
        );
    }
    for o in OPTIONS.iter().filter(|o| !o.help.is_empty()) {
        assert!(
            by_command
                .values()
                .any(|v| v.iter().any(|t| t.name == o.name)),
            "--{} is in the table but on no command",
            o.name
        );
    }
    // Each command takes exactly the table's options the table says it takes; `run` every
    // option of the data set, the run and the cluster.
    for t in dbio::options::COMMANDS {
        for name in t.command.paths() {
            let taken: Vec<&str> = by_command[*name].iter().map(|o| o.name).collect();
            let said: Vec<&str> = OPTIONS
                .iter()
                .filter(|o| t.has(o))
                .map(|o| o.name)
                .collect();
            assert_eq!(taken, said, "the table options of `dbio {name}`");
        }
    }
    let run: Vec<&str> = by_command["run"].iter().map(|o| o.name).collect();
    for o in OPTIONS.iter().filter(|o| !o.help.is_empty()) {
        let of_a_run = matches!(
            o.group,
            dbio::options::Group::DataSet
                | dbio::options::Group::Run
                | dbio::options::Group::Cluster
                | dbio::options::Group::Report
        );
        assert_eq!(
            run.contains(&o.name),
            of_a_run,
            "--{} on `dbio run`",
            o.name
        );
    }
}

/// Each option of the table, on each command taking it, alone with each value: parsing and
/// checking never panic.
#[test]
fn every_table_option_on_every_command_never_panics() {
    let mut tried = 0;
    for (command, options) in table_options_by_command() {
        for o in options {
            let values: &[&str] = if o.is_switch() { &[""] } else { VALUES };
            for v in values {
                let mut args = head(&command);
                args.push(o.flag());
                if !o.is_switch() {
                    args.push(v.to_string());
                }
                parse_and_check(&args).unwrap_or_else(|e| panic!("{args:?}: {e}"));
                tried += 1;
            }
        }
    }
    assert!(tried > 1000, "{tried} command lines");
}

/// A command taking table options, and words for its command line: its table flags, other
/// flags, values and any text.
fn argv() -> impl Strategy<Value = Vec<String>> {
    let by_command = table_options_by_command();
    let commands: Vec<(String, Vec<String>)> = by_command
        .into_iter()
        .map(|(c, opts)| {
            let mut flags: Vec<String> = opts.iter().map(|o| o.flag()).collect();
            flags.extend(["--json", "--help-not", "-x", "--"].map(String::from));
            (c, flags)
        })
        .collect();
    let mut heads: Vec<(Vec<String>, Vec<String>)> = commands
        .into_iter()
        .flat_map(|(c, flags)| {
            let mut hs = vec![head(&c)];
            if c == "run" {
                for t in ["write-mbps", "redo", "oltp", "temp"] {
                    hs.push(vec!["dbio".into(), "run".into(), t.into()]);
                }
            }
            hs.into_iter().map(move |h| (h, flags.clone()))
        })
        .collect();
    heads.push((vec!["dbio".into()], vec!["--json".into()]));
    prop::sample::select(heads).prop_flat_map(|(h, flags)| {
        let word = prop_oneof![
            prop::sample::select(flags),
            prop::sample::select(VALUES).prop_map(String::from),
            any::<String>(),
        ];
        prop::collection::vec(word, 0..8)
            .prop_map(move |rest| h.iter().cloned().chain(rest).collect::<Vec<String>>())
    })
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn command_lines_never_panic(args in argv()) {
        parse_and_check(&args)?;
    }
}

#[test]
fn absurd_values_are_refused_with_a_message() {
    Env::new()
        .run("read-iops")
        .size("99999999999T")
        .refused(&["--size", "too large"]);
    Env::new()
        .prepare()
        .size("18446744073709551616")
        .refused(&["--size", "too large"]);
    Env::new()
        .run("read-iops")
        .sessions(65537)
        .refused(&["--sessions", "65536"]);
    Env::new()
        .run("read-iops")
        .duration("9999999999h")
        .refused(&["--duration"]);
    Env::new()
        .prepare()
        .size("1000T")
        .refused(&["not fit", "free"]);
    Env::new()
        .run("read-iops")
        .fill("compress=0")
        .refused(&["--fill", "compress=RATIO"]);
    Env::new()
        .run("read-iops")
        .yes()
        .refused(&["--destructive"]);
}
