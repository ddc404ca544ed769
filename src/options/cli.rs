//! The command line of the run options: clap arguments made from [`super::OPTIONS`], and the
//! values read back into [`RunArgs`] with [`Source::Typed`]. Nothing here parses a value
//! itself: each option's own parser does, so the command line, job files and sweeps accept
//! exactly the same values.

use clap::builder::{PossibleValuesParser, ValueParser};
use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

use super::{Group, OPTIONS, Opt, RunArgs, Source};
use crate::workload::Test;

/// The clap argument of option `o`.
fn arg(o: &'static Opt) -> Arg {
    let help = match o.applies {
        super::Applies::All => o.help.to_string(),
        super::Applies::Tests(t) => format!(
            "{} [tests: {}]",
            o.help,
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
            a = a
                .value_name(v)
                .action(ArgAction::Set)
                .allow_hyphen_values(true)
                // Checked by the option's own parser, so clap's message names the flag.
                .value_parser(ValueParser::new(move |s: &str| -> Result<String, String> {
                    let mut scratch = RunArgs::defaults(None);
                    parse(&mut scratch, s).map(|()| s.to_string())
                }));
            if let Some(d) = o.default {
                a = a.default_value(d);
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

/// Whether option `o` is on the command line of a subcommand taking `groups`.
fn on_command_line(o: &Opt, groups: &[Group]) -> bool {
    !o.help.is_empty() && groups.contains(&o.group)
}

/// Adds the options of `groups` to `cmd`.
pub fn augment(mut cmd: Command, groups: &[Group]) -> Command {
    for o in OPTIONS.iter().filter(|o| on_command_line(o, groups)) {
        cmd = cmd.arg(arg(o));
    }
    cmd
}

/// Reads the options of `groups` from `m` into `a`: what was typed, as typed.
pub fn read(m: &ArgMatches, groups: &[Group], a: &mut RunArgs) -> Result<(), clap::Error> {
    for o in OPTIONS.iter().filter(|o| on_command_line(o, groups)) {
        if m.value_source(o.name) != Some(ValueSource::CommandLine) {
            continue;
        }
        let text = match o.value {
            None => "true".to_string(),
            Some(_) => m
                .get_one::<String>(o.name)
                .cloned()
                .expect("a value was given"),
        };
        a.set(o.name, &text, Source::Typed)
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::ValueValidation, e))?;
    }
    Ok(())
}

/// Adds the options called `names` to `cmd` (a command taking some run options beside its
/// own, as `dbio pg run`). An option of [`super::REPEATABLE`] may be given more than once.
pub fn augment_named(mut cmd: Command, names: &[&str]) -> Command {
    for o in OPTIONS.iter().filter(|o| names.contains(&o.name)) {
        let mut a = arg(o);
        if super::REPEATABLE.contains(&o.name) {
            a = a.action(ArgAction::Append);
        }
        cmd = cmd.arg(a);
    }
    cmd
}

/// Reads the options called `names` from `m` into `a`: what was typed, as typed (each value
/// of a repeatable option in turn).
pub fn read_named(m: &ArgMatches, names: &[&str], a: &mut RunArgs) -> Result<(), clap::Error> {
    for o in OPTIONS.iter().filter(|o| names.contains(&o.name)) {
        if m.value_source(o.name) != Some(ValueSource::CommandLine) {
            continue;
        }
        let texts: Vec<String> = match o.value {
            None => vec!["true".to_string()],
            Some(_) => m
                .get_many::<String>(o.name)
                .map(|v| v.cloned().collect())
                .unwrap_or_default(),
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

const RUN_GROUPS: &[Group] = &[Group::DataSet, Group::Run, Group::Cluster, Group::Report];

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
        augment(cmd, RUN_GROUPS)
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
        read(m, RUN_GROUPS, &mut a)?;
        Ok(RunCommand(a))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// The data set's options alone (`dbio prepare`, `calibrate`, `matrix`).
#[derive(Debug, Clone)]
pub struct DataSetCommand(pub RunArgs);

impl clap::Args for DataSetCommand {
    fn augment_args(cmd: Command) -> Command {
        augment(cmd, &[Group::DataSet])
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for DataSetCommand {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut a = RunArgs::defaults(None);
        read(m, &[Group::DataSet], &mut a)?;
        Ok(DataSetCommand(a))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// The options of a run across many hosts alone (`dbio calibrate`).
#[derive(Debug, Clone)]
pub struct ClusterCommand(pub RunArgs);

impl clap::Args for ClusterCommand {
    fn augment_args(cmd: Command) -> Command {
        augment(cmd, &[Group::Cluster])
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for ClusterCommand {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut a = RunArgs::defaults(None);
        read(m, &[Group::Cluster], &mut a)?;
        Ok(ClusterCommand(a))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// `--format` alone: every command that prints a report and takes no run options
/// (`calibrate`, `matrix`, `runs`, `show`, `compare`), from the same row of the table.
#[derive(Debug, Clone, Copy, Default)]
pub struct FormatCommand(pub crate::report::Format);

impl clap::Args for FormatCommand {
    fn augment_args(cmd: Command) -> Command {
        augment(cmd, &[Group::Report])
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for FormatCommand {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut a = RunArgs::defaults(None);
        read(m, &[Group::Report], &mut a)?;
        Ok(FormatCommand(a.format))
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}
