//! The command line of the run options: clap arguments made from [`super::OPTIONS`], and the
//! values read back into [`RunArgs`] with [`Source::Typed`]. Nothing here parses a value
//! itself: each option's own parser does, so the command line, job files and sweeps accept
//! exactly the same values. Which commands take which options is the table's
//! [`super::COMMANDS`]; every command shows an option with the same help, only its default
//! may be the command's own.

use clap::builder::{PossibleValuesParser, ValueParser};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::{Command as Cmd, Group, Many, OPTIONS, Opt, RunArgs, Source, Takes};
use crate::workload::Test;

/// The clap argument of option `o` on a command that takes `takes`: the table's row, with
/// the command's own default and help where [`Takes`] gives them. Every flag of every
/// command is made here.
pub fn arg(o: &'static Opt, takes: &Takes) -> Arg {
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
    let mut a = Arg::new(o.name).long(o.long()).help(help);
    if !o.heading.is_empty() {
        a = a.help_heading(o.heading);
    }
    if let Some(c) = o.short {
        a = a.short(c);
    }
    match o.value {
        None => a = a.action(ArgAction::SetTrue),
        Some(v) => {
            a = a
                .value_name(v)
                .action(match o.many {
                    Many::Once => ArgAction::Set,
                    Many::Repeat | Many::List => ArgAction::Append,
                })
                .allow_hyphen_values(true)
                // Clap carries the text; the row's parser reads it, once, in [`read`].
                .value_parser(ValueParser::string());
            if o.many == Many::List {
                // Values up to the next flag.
                a = a.num_args(1..).allow_hyphen_values(false);
            }
            if let Some(d) = takes.default(o) {
                a = a.default_value(d);
            }
            if let Some(bare) = o.bare {
                // A flag after it is the next option, not its value. Nor is a test typed
                // after it: refused while clap reads the line, before it would complain of
                // the missing test instead (the row's parser reads the value, once, later).
                let name = o.name;
                a = a
                    .num_args(0..=1)
                    .default_missing_value(bare)
                    .allow_hyphen_values(false)
                    .value_parser(move |t: &str| -> Result<String, String> {
                        if crate::workload::Test::from_name(t.trim()).is_some() {
                            return Err(format!(
                                "'{t}' is a test: put the test before --{name}, or give its value with '=' (--{name}={bare})"
                            ));
                        }
                        Ok(t.to_string())
                    });
            }
        }
    }
    // What the command has of them: an option shared by commands may conflict with one
    // only some of them take (`--pg` with `--pg-bin`).
    for c in o.conflicts.iter().filter(|c| takes.has_name(c)) {
        a = a.conflicts_with(*c);
    }
    if let Some(r) = o.requires {
        a = a.requires(r);
    }
    if let Some(r) = o.required_unless.filter(|r| takes.has_name(r)) {
        a = a.required_unless_present(r);
    }
    if let Some(e) = o.env {
        a = a.env(e);
    }
    if o.group == Group::Global {
        a = a.global(true);
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

/// Reads the options `command` takes from `m` into `a`: what was typed (or set in the
/// environment), as typed.
pub fn read(m: &ArgMatches, command: Cmd, a: &mut RunArgs) -> Result<(), clap::Error> {
    let takes = command.takes();
    for o in OPTIONS.iter().filter(|o| takes.has(o)) {
        if !matches!(
            m.value_source(o.name),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        ) {
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
                .map_err(|e| invalid_value(o, &text, &e))?;
        }
    }
    Ok(())
}

/// A value the row's parser refused, in the words clap uses for a value it refuses
/// (`invalid value 'X' for '--flag <V>': why`).
fn invalid_value(o: &Opt, text: &str, why: &str) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let arg = format!("{} <{}>", o.flag(), o.value.unwrap_or_default());
    let mut e = clap::Error::raw(
        ErrorKind::ValueValidation,
        format!("invalid value '{text}' for '{arg}': {why}\n"),
    );
    e.insert(ContextKind::InvalidArg, ContextValue::String(arg));
    e.insert(ContextKind::InvalidValue, ContextValue::String(text.into()));
    e
}

/// The arguments of `command` (`dbio run`, `dbio sweep`): a test (or `--job`), and every
/// option of the table it takes.
fn run_arguments(cmd: Command, command: Cmd) -> Command {
    let tests: Vec<&'static str> = Test::CLASSIC.iter().map(|t| t.name()).collect();
    let cmd = cmd.arg(
        Arg::new("test")
            .value_name("TEST")
            .help("The test to run (not with --job).")
            .value_parser(PossibleValuesParser::new(tests))
            .required_unless_present("job")
            .conflicts_with("job"),
    );
    augment(cmd, command)
}

/// The test and the options `command` takes, from `m`.
fn run_values(m: &ArgMatches, command: Cmd) -> Result<RunArgs, clap::Error> {
    let test = m
        .get_one::<String>("test")
        .map(|t| Test::from_name(t).expect("a possible value"));
    let mut a = RunArgs::defaults(test);
    read(m, command, &mut a)?;
    Ok(a)
}

/// The arguments of `dbio run`: a test (or `--job`), and every run option.
#[derive(Debug, Clone)]
pub struct RunCommand(pub RunArgs);

impl clap::Args for RunCommand {
    fn augment_args(cmd: Command) -> Command {
        run_arguments(cmd, Cmd::Run)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for RunCommand {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        run_values(m, Cmd::Run).map(RunCommand)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// The arguments of `dbio sweep`: those of `dbio run`, and the sweep's own (`--param`,
/// `--device`, `--curve`, in [`RunArgs`] too).
#[derive(Debug, Clone)]
pub struct SweepCommand(pub RunArgs);

impl clap::Args for SweepCommand {
    fn augment_args(cmd: Command) -> Command {
        run_arguments(cmd, Cmd::Sweep)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for SweepCommand {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        run_values(m, Cmd::Sweep).map(SweepCommand)
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
    /// `--db`, which every command takes.
    GlobalOptions,
    Cmd::Global
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
    /// The options of the table `dbio mysql clean` takes.
    MysqlCleanOptions,
    Cmd::MysqlClean
);
table_options!(
    /// The options of the table `dbio agent` takes.
    AgentOptions,
    Cmd::Agent
);
table_options!(
    /// The options of the table `dbio job from-awr` takes.
    FromAwrOptions,
    Cmd::JobFromAwr
);
table_options!(
    /// The options of the table `dbio job from-iostat` takes.
    FromIostatOptions,
    Cmd::JobFromIostat
);
table_options!(
    /// The options of the table `dbio job from-pg` takes.
    FromPgOptions,
    Cmd::JobFromPg
);
