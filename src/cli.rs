//! The command line, exactly as users type it (clap derive): the subcommands and their
//! arguments. Run options come from the option table (`crate::options`), which also turns
//! them into a validated [`crate::workload::spec::RunConfig`]; nothing below the options
//! layer sees this.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::options::cli::{
    AgentOptions, CleanOptions, CompareOptions, DoctorOptions, GlobalOptions, MapOptions,
    PreconditionOptions, PrepareOptions, ReportOptions, RunCommand, RunsOptions, ShowOptions,
    VerifyOptions,
};

/// The command line: the command, and `--db` (the table's, which every command takes).
#[derive(Debug)]
pub struct Cli {
    pub command: Command,
    /// The results store every run is recorded in (default:
    /// $XDG_DATA_HOME/dbio/dbio.db, else ~/.local/share/dbio/dbio.db).
    pub db: Option<PathBuf>,
}

impl clap::CommandFactory for Cli {
    fn command() -> clap::Command {
        let cmd = clap::Command::new("dbio")
            .version(crate::sys::VERSION_LINE)
            .about("What does this storage deliver to a database? Database-shaped I/O tests, reported as wait events.")
            .after_help(crate::error::exit_status_help())
            .propagate_version(true);
        let cmd = <Command as Subcommand>::augment_subcommands(cmd)
            .subcommand_required(true)
            .arg_required_else_help(true);
        <GlobalOptions as Args>::augment_args(cmd)
    }

    fn command_for_update() -> clap::Command {
        Self::command()
    }
}

impl clap::FromArgMatches for Cli {
    fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Ok(Cli {
            command: Command::from_arg_matches(m)?,
            db: GlobalOptions::from_arg_matches(m)?.0.db,
        })
    }

    fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Parser for Cli {}

impl Cli {
    /// Parses the command line (which run options were typed is kept with their values).
    pub fn parse_with_sources<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Cli::try_parse_from(args)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one test and write result.json, summary.txt, report.html and CSV exports into a
    /// new run directory.
    Run(Box<RunCommand>),
    /// Create the data set (or check that the existing one fits) without running a test.
    Prepare(PrepareArgs),
    /// Remove a data set that dbio created (only the files its manifest lists).
    Clean(CleanArgs),
    /// Precondition flash: write a data set (or, with --destructive, a block device) over
    /// in sequential 128 KiB writes, twice by default, so later results are not taken on
    /// fresh flash; the data set's manifest and every later result say so.
    Precondition(PreconditionArgs),
    /// Draw report.html, timeseries.csv and histograms.csv of a run again from its result.json.
    Report(ReportArgs),
    /// List the runs recorded in the results store, oldest first.
    Runs(RunsArgs),
    /// Print a recorded run's summary (or its result.json), even if its directory is gone.
    Show(ShowArgs),
    /// Compare recorded runs event by event: IOPS, MiB/s, p50, p99 and the ratio to the first.
    Compare(CompareArgs),
    /// Show the storage stack under a path: file system, dm/md/partitions, disks, HBA, ports, queue settings.
    Map(MapArgs),
    /// ORION-style grid: small random reads × large I/O at rising outstanding counts.
    Matrix(crate::sweep::matrix::MatrixArgs),
    /// Check for other dbio processes, data sets, run directories and what killed runs left behind.
    Doctor(DoctorArgs),
    /// Run one test at several values of one parameter (--param NAME=V1,V2,...): a table,
    /// sweep.json, sweep.csv and sweep.html, plus each point's own run directory.
    Sweep(Box<crate::sweep::SweepArgs>),
    /// Find the maximum small-read IOPS within a latency limit, the maximum large-read MiB/s
    /// and a single session's large-read MiB/s; prints the curves walked, writes calibrate.json.
    Calibrate(Box<crate::sweep::calibrate::CalibrateArgs>),
    /// Size storage from the database's requirements (a TOML plan): devices for IOPS (with
    /// the RAID write penalty), bandwidth and capacity at the usable surface, spares, arrays;
    /// the device's figures stated or measured by runs made with --span.
    Size(crate::sizing::SizeArgs),
    /// Write a job file from what a database or host did: `from-awr` (AWR and Statspack
    /// reports), `from-iostat` (iostat -x output).
    Job(crate::capture::JobArgs),
    /// Check every block of a data set prepared with --verify: checksum, place and last
    /// write. Exit 0 when all are good, 1 with one line per bad block.
    Verify(VerifyArgs),
    /// Memory latency by working-set size (cache levels marked), the NUMA node × node
    /// matrix and loaded latency; or where shared memory lives (--shm PATH, --pid PID).
    Mem(Box<crate::mem::MemArgs>),
    /// Ask, in a terminal, what to measure, where, how big, how and for how long; show the
    /// equivalent job file and `dbio run` command, save the job file, run it.
    Wizard,
    /// The tests through a real PostgreSQL: `dbio pg run TEST` (a throwaway server with
    /// --pg-bin, or an existing one with --pg), `dbio pg clean`.
    #[command(subcommand)]
    Pg(crate::database::pg::PgCommand),
    /// The tests through a real MariaDB or MySQL: `dbio mysql run TEST` (a throwaway MariaDB
    /// with --mysql-bin, or an existing server with --mysql), `dbio mysql compare`, `dbio mysql
    /// clean`.
    #[command(subcommand, alias = "mariadb")]
    Mysql(crate::database::mariadb::MysqlCommand),
    /// Print the completion script of a shell to stdout (see the README for where it goes).
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to stdout: `dbio man | man -l -`.
    Man,
    /// One host's part of a run across hosts, started by the coordinator over ssh: speaks
    /// JSON lines on stdin/stdout and ends when stdin closes.
    #[command(hide = true)]
    Agent(AgentArgs),
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Args)]
pub struct AgentArgs {
    /// The options of the table it takes: `--pushed`.
    #[command(flatten)]
    pub options: AgentOptions,
}

#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// The data set directory.
    #[arg(default_value = "./dbio-data")]
    pub path: PathBuf,
    /// The options of the table it takes: `--json`, `--format`.
    #[command(flatten)]
    pub options: VerifyOptions,
}

#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    /// The options of the table it takes: the data set, `--buffered` and `--quiet`.
    #[command(flatten)]
    pub options: PrepareOptions,
}

#[derive(Debug, Clone, Args)]
pub struct PreconditionArgs {
    /// A data set directory dbio prepared, or (with --destructive) a block device.
    #[arg(default_value = "./dbio-data", value_name = "TARGET")]
    pub target: PathBuf,
    /// The options of the table it takes: `--passes`, `--destructive`, `--yes`, `--json`,
    /// `--format`, `--quiet`, `--progress`.
    #[command(flatten)]
    pub options: PreconditionOptions,
}

#[derive(Debug, Clone, Args)]
pub struct CleanArgs {
    /// The data set directory to remove (with --stale: data sets, run directories or
    /// directories holding them; default ./dbio-data and ./dbio-runs).
    pub paths: Vec<PathBuf>,
    /// The options of the table it takes: `--stale`, `--json`, `--format`.
    #[command(flatten)]
    pub options: CleanOptions,
}

#[derive(Debug, Clone, Args)]
pub struct MapArgs {
    /// A file, directory or block device.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// The options of the table it takes: `--block-size` (checked against the devices'
    /// logical block size) and `--json` (the map and findings).
    #[command(flatten)]
    pub options: MapOptions,
}

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Data sets, run directories, or directories holding them (default ./dbio-data and
    /// ./dbio-runs).
    pub paths: Vec<PathBuf>,
    /// The options of the table it takes: `--json`, `--format`.
    #[command(flatten)]
    pub options: DoctorOptions,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The run directory (the one holding result.json).
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
    /// The options of the table it takes: `--json`, `--format`.
    #[command(flatten)]
    pub options: ReportOptions,
}

#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    /// The options of the table it takes: `--test`, `--last`, `--json`, `--format`.
    #[command(flatten)]
    pub options: RunsOptions,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The run's id, as `dbio runs` lists it (`c<ID>`: a compare through a database).
    #[arg(value_parser = parse_shown)]
    pub id: Shown,
    /// The options of the table it takes: `--json` (the run's result.json, as written).
    #[command(flatten)]
    pub options: ShowOptions,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Two or more runs, ratios to the first: run ids as `dbio runs` lists them, run
    /// directories or their result.json, mixed (a directory named like an id: ./3).
    #[arg(required = true, num_args = 2.., value_name = "RUN", value_parser = parse_run_ref)]
    pub ids: Vec<RunRef>,
    /// The options of the table it takes: `--html`, `--format`.
    #[command(flatten)]
    pub options: CompareOptions,
}

/// A run named on the command line: its id in the store, or its directory (or result.json).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunRef {
    Id(i64),
    Dir(PathBuf),
}

fn parse_run_ref(s: &str) -> Result<RunRef, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse()
            .map(RunRef::Id)
            .map_err(|_| format!("'{s}': not a run id dbio could have given"));
    }
    if s.is_empty() {
        return Err("an empty run: give a run id (3), a run directory or its result.json".into());
    }
    Ok(RunRef::Dir(PathBuf::from(s)))
}

/// What `dbio show` shows: a run, or a compare through a database (`c3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Run(i64),
    Compare(i64),
}

fn parse_shown(s: &str) -> Result<Shown, String> {
    let bad = || {
        format!("'{s}'; accepted: a run's id (3) or a compare's (c3), as `dbio runs` lists them")
    };
    match s.strip_prefix('c') {
        Some(n) => n.parse().map(Shown::Compare).map_err(|_| bad()),
        None => s.parse().map(Shown::Run).map_err(|_| bad()),
    }
}

/// Renders a clap error as one line: the offending option and, where clap knows them, the
/// accepted values (bad input is one line on stderr, never clap's usage block).
pub fn one_line_error(err: &clap::Error) -> String {
    let text = err.to_string();
    let mut parts: Vec<&str> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with("Usage:") || line.starts_with("For more information")
        {
            continue;
        }
        parts.push(line);
    }
    let joined = parts.join(" ");
    let value = match err.get(clap::error::ContextKind::InvalidValue) {
        Some(clap::error::ContextValue::String(v)) => v.as_str(),
        _ => "",
    };
    let line = crate::units::one_line(&joined, &[value]);
    if line.starts_with("error:") {
        line
    } else {
        format!("error: {line}")
    }
}
