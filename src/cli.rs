//! The command line, exactly as users type it (clap derive). Nothing here is used by the
//! core directly: `config.rs` turns these raw arguments into a validated [`crate::config::RunConfig`].

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::IoMode;
use crate::engine::EngineChoice;
use crate::units;
use crate::workload::Test;

#[derive(Debug, Parser)]
#[command(
    name = "dbio",
    version,
    about = "What does this storage deliver to a database? Database-shaped I/O tests, reported as wait events.",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// The results store every run is recorded in (default:
    /// $XDG_DATA_HOME/dbio/dbio.db, else ~/.local/share/dbio/dbio.db).
    #[arg(long, global = true, env = "DBIO_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one test and write result.json and summary.txt into a new run directory.
    Run(RunArgs),
    /// Create the data set (or check that the existing one fits) without running a test.
    Prepare(PrepareArgs),
    /// Remove a data set that dbio created (only the files its manifest lists).
    Clean(CleanArgs),
    /// Draw report.html, timeseries.csv and histograms.csv of a run again from its result.json.
    Report(ReportArgs),
    /// List the runs recorded in the results store, oldest first.
    Runs(RunsArgs),
    /// Print a recorded run's summary (or its result.json), even if its directory is gone.
    Show(ShowArgs),
    /// Compare recorded runs event by event: IOPS, MiB/s, p50, p99 and the ratio to the first.
    Compare(CompareArgs),
}

/// Where the data set lives and what it looks like.
#[derive(Debug, Clone, Args)]
pub struct DataSetArgs {
    /// Directory holding the data set (created if its parent exists). Read tests also
    /// accept an existing file or block device, which is only read.
    #[arg(long, default_value = "./dbio-data", value_name = "PATH")]
    pub target: PathBuf,
    /// Total data set size (K, M, G, T are binary).
    #[arg(long, default_value = "1G", value_parser = parse_size_arg, allow_hyphen_values = true)]
    pub size: u64,
    /// Database block size: a power of two from 512 to 1M.
    #[arg(long, default_value = "8K", value_parser = parse_block_size_arg, allow_hyphen_values = true)]
    pub block_size: u64,
    /// Number of data files the data set is spread over.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub files: u32,
    /// Recreate the data set even if a matching one exists.
    #[arg(long)]
    pub fresh: bool,
    /// Seed for the random block choices and the data fill (default: random).
    #[arg(long)]
    pub seed: Option<u64>,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The test to run.
    #[arg(value_enum)]
    pub test: Test,

    #[command(flatten)]
    pub dataset: DataSetArgs,

    /// Concurrent sessions (database foreground processes; writers for write-iops).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub sessions: u32,
    /// Measured window.
    #[arg(long, default_value = "60s", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub duration: std::time::Duration,
    /// Unmeasured warm-up before the measured window.
    #[arg(long, default_value = "5s", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub warmup: std::time::Duration,
    /// Synchronous submission: the sync events ("db file sequential read", ...).
    #[arg(long, conflicts_with = "async_")]
    pub sync: bool,
    /// Asynchronous submission (the default): the async events ("db file parallel read", ...).
    #[arg(long = "async")]
    pub async_: bool,
    /// Open flags and submission, like the database's filesystemio_options.
    #[arg(long, value_enum, default_value = "setall")]
    pub io_mode: IoMode,
    /// How asynchronous I/O is submitted.
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineChoice,
    /// Blocks per "db file parallel read"/"db file parallel write" batch.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub batch: u32,
    /// Async read-iops/write-iops: keep --batch random blocks in flight continuously (a
    /// storage benchmark's constant queue depth) instead of the database's submit-all,
    /// wait-for-all batches.
    #[arg(long)]
    pub keep_inflight: bool,
    /// Requests in flight per session for "direct path read"/"direct path write".
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub depth: u32,
    /// Multiblock read count: blocks per multiblock request (default: 1 MiB / block size).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub mbrc: Option<u32>,
    /// Directory the run directory is created in.
    #[arg(long, default_value = "./dbio-runs", value_name = "DIR")]
    pub out: PathBuf,
    /// Print result.json to stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub dataset: DataSetArgs,
    /// Fill with buffered writes instead of O_DIRECT (for file systems without direct I/O).
    #[arg(long)]
    pub buffered: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CleanArgs {
    /// The data set directory to remove.
    #[arg(default_value = "./dbio-data")]
    pub path: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The run directory (the one holding result.json).
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct RunsArgs {
    /// Only runs of this test.
    #[arg(long, value_enum, value_name = "NAME")]
    pub test: Option<Test>,
    /// Only the N most recent runs.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub last: Option<u32>,
    /// Print the list as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The run's id, as `dbio runs` lists it.
    pub id: i64,
    /// Print the run's result.json instead of its summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Two or more run ids, as `dbio runs` lists them; ratios are to the first.
    #[arg(required = true, num_args = 2.., value_name = "ID")]
    pub ids: Vec<i64>,
    /// Also write the comparison as a self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

fn parse_size_arg(s: &str) -> Result<u64, String> {
    let v = units::parse_size(s)?;
    if v == 0 {
        return Err("must be larger than 0".into());
    }
    Ok(v)
}

fn parse_block_size_arg(s: &str) -> Result<u64, String> {
    let v = units::parse_size(s)?;
    if !v.is_power_of_two() || !(512..=1 << 20).contains(&v) {
        return Err("must be a power of two from 512 to 1M, e.g. 8K".into());
    }
    Ok(v)
}

fn parse_duration_arg(s: &str) -> Result<std::time::Duration, String> {
    units::parse_duration(s)
}

/// Renders a clap error as the single line SPEC §7.4 asks for: the offending option and,
/// where clap knows them, the accepted values.
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
    if joined.starts_with("error:") {
        joined
    } else {
        format!("error: {joined}")
    }
}
