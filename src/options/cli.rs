//! The command line of the run options: clap arguments made from [`super::OPTIONS`], and the
//! values read back into [`RunArgs`] with [`Source::Typed`]. Nothing here parses a value
//! itself: each option's own parser does, so the command line, job files and sweeps accept
//! exactly the same values. Which commands take which options is the table's
//! [`super::COMMANDS`]; every command shows an option with the same help, only its default
//! may be the command's own.

use clap::builder::{PossibleValuesParser, ValueParser};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::{Command as Cmd, OPTIONS, Opt, RunArgs, Source};
use crate::workload::Test;

/// The clap argument of option `o` on a command that takes `takes`: the table's row, with
/// the command's own default and help where [`super::Takes`] gives them.
pub fn arg(o: &'static Opt, takes: &super::Takes) -> Arg {
    // The tests of `dbio run` it shapes are said with the table's help, not with a
    // command's own (`dbio pg run --depth` is not the depth of those tests).
    let help = match (takes.help(o), o.applies) {
        (own, _) if own != o.help => own.to_string(),
        (help, super::Applies::All) => help.to_string(),
        (help, super::Applies::Tests(t)) => format!(
            "{help} [tests: {}]",
            t.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
        ),
    };
    let mut a = Arg::new(o.name)
        .long(o.name)
        .help(help)
        .help_heading(o.heading);
    if let Some(c) = o.short {
        a = a.short(c);
    }
    match o.value {
        None => a = a.action(ArgAction::SetTrue),
        Some(v) => {
            let parse = o.set;
            // An option of [`super::REPEATABLE`] may be given more than once.
            let action = if super::REPEATABLE.contains(&o.name) {
                ArgAction::Append
            } else {
                ArgAction::Set
            };
            a = a
                .value_name(v)
                .action(action)
                .allow_hyphen_values(true)
                // Checked by the option's own parser, so clap's message names the flag.
                .value_parser(ValueParser::new(move |s: &str| -> Result<String, String> {
                    let mut scratch = RunArgs::defaults(None);
                    parse(&mut scratch, s).map(|()| s.to_string())
                }));
            if let Some(d) = takes.default(o) {
                a = a.default_value(d);
            }
            // An option of [`super::OPTIONAL_VALUE`] given alone takes its value there.
            if let Some((_, bare)) = super::OPTIONAL_VALUE.iter().find(|(n, _)| *n == o.name) {
                // A flag after it is the next option, not its value.
                a = a
                    .num_args(0..=1)
                    .default_missing_value(*bare)
                    .allow_hyphen_values(false);
            }
        }
    }
    for c in o.conflicts {
        a = a.conflicts_with(*c);
    }
    if let Some(r) = o.requires {
        a = a.requires(r);
    }
    a
}

/// Adds the options `command` takes to `cmd`, in table order.
pub fn augment(mut cmd: Command, command: Cmd) -> Command {
    let takes = command.takes();
    for o in OPTIONS.iter().filter(|o| takes.has(o)) {
        cmd = cmd.arg(arg(o, takes));
    }
    cmd
}

/// Reads the options `command` takes from `m` into `a`: what was typed, as typed.
pub fn read(m: &ArgMatches, command: Cmd, a: &mut RunArgs) -> Result<(), clap::Error> {
    let takes = command.takes();
    for o in OPTIONS.iter().filter(|o| takes.has(o)) {
        if m.value_source(o.name) != Some(ValueSource::CommandLine) {
            continue;
        }
        // Each value of a repeatable option in turn.
        let texts: Vec<String> = match o.value {
            None => vec!["true".to_string()],
            Some(_) => m
                .get_many::<String>(o.name)
                .map(|v| v.cloned().collect())
                .expect("a value was given"),
        };
        for text in texts {
            a.set(o.name, &text, Source::Typed)
                .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e))?;
        }
    }
    Ok(())
}

/// The arguments of `dbio run` and `dbio sweep`: a test (or `--job`), and every run option.
#[derive(Debug, Clone)]
pub struct RunCommand(pub RunArgs);

impl clap::Args for RunCommand {
    fn augment_args(cmd: Command) -> Command {
        let tests: Vec<&'static str> = Test::CLASSIC.iter().map(|t| t.name()).collect();
        let cmd = cmd
            .arg(
                Arg::new("test")
                    .value_name("TEST")
                    .help("The test to run (not with --job).")
                    .value_parser(PossibleValuesParser::new(tests))
                    .required_unless_present("job")
                    .conflicts_with("job"),
            )
            .arg(
                Arg::new("job")
                    .long("job")
                    .value_name("FILE")
                    .help("Run the I/O classes of a job file (TOML): events, sizes, sessions, rates, limits. Options typed here win over the job file.")
                    .value_parser(clap::value_parser!(std::path::PathBuf)),
            )
            .arg(
                Arg::new("save-job")
                    .long("save-job")
                    .value_name("FILE")
                    .help("Write the job file equivalent to this run (a new file), then run it.")
                    .value_parser(clap::value_parser!(std::path::PathBuf)),
            );
        augment(cmd, Cmd::Run)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for RunCommand {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let test = m
            .get_one::<String>("test")
            .map(|t| Test::from_name(t).expect("a possible value"));
        let mut a = RunArgs::defaults(test);
        a.job = m.get_one::<std::path::PathBuf>("job").cloned();
        a.save_job = m.get_one::<std::path::PathBuf>("save-job").cloned();
        read(m, Cmd::Run, &mut a)?;
        Ok(RunCommand(a))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// The options of the table one command takes, as clap arguments to flatten into the
/// command's own: `$name(RunArgs)` holds them, at the command's defaults unless typed.
macro_rules! table_options {
    ($(#[$doc:meta])* $name:ident, $command:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(pub RunArgs);

        impl clap::Args for $name {
            fn augment_args(cmd: Command) -> Command {
                augment(cmd, $command)
            }

            fn augment_args_for_update(cmd: Command) -> Command {
                Self::augment_args(cmd)
            }
        }

        impl clap::FromArgMatches for $name {
            fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
                let mut a = RunArgs::defaults_for($command);
                read(m, $command, &mut a)?;
                Ok($name(a))
            }

            fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
                *self = Self::from_arg_matches(m)?;
                Ok(())
            }
        }
    };
}

table_options!(
    /// The options of the table `dbio prepare` takes.
    PrepareOptions,
    Cmd::Prepare
);
table_options!(
    /// The options of the table `dbio calibrate` takes.
    CalibrateOptions,
    Cmd::Calibrate
);
table_options!(
    /// The options of the table `dbio matrix` takes.
    MatrixOptions,
    Cmd::Matrix
);
table_options!(
    /// The options of the table `dbio mem` takes.
    MemOptions,
    Cmd::Mem
);
table_options!(
    /// The options of the table `dbio map` takes.
    MapOptions,
    Cmd::Map
);
table_options!(
    /// The options of the table `dbio runs` takes.
    RunsOptions,
    Cmd::Runs
);
table_options!(
    /// The options of the table `dbio show` takes.
    ShowOptions,
    Cmd::Show
);
table_options!(
    /// The options of the table `dbio size` takes.
    SizeOptions,
    Cmd::Size
);
table_options!(
    /// The options of the table `dbio compare` takes.
    CompareOptions,
    Cmd::Compare
);
table_options!(
    /// The options of the table `dbio doctor` takes.
    DoctorOptions,
    Cmd::Doctor
);
table_options!(
    /// The options of the table `dbio clean` takes.
    CleanOptions,
    Cmd::Clean
);
table_options!(
    /// The options of the table `dbio verify` takes.
    VerifyOptions,
    Cmd::Verify
);
table_options!(
    /// The options of the table `dbio report` takes.
    ReportOptions,
    Cmd::Report
);
table_options!(
    /// The options of the table `dbio precondition` takes.
    PreconditionOptions,
    Cmd::Precondition
);
table_options!(
    /// The options of the table `dbio pg clean` takes.
    PgCleanOptions,
    Cmd::PgClean
);
table_options!(
    /// The options of the table `dbio pg observe` takes.
    PgObserveOptions,
    Cmd::PgObserve
);
table_options!(
    /// The options of the table `dbio job from-…` takes (how the summary of a job written
    /// with `-o` is printed).
    JobFromOptions,
    Cmd::JobFrom
);
table_options!(
    /// The options of the table `dbio mysql clean` takes.
    MysqlCleanOptions,
    Cmd::MysqlClean
);
