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

/// How open-loop arrivals are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Arrival {
    Fixed,
    Poisson,
}

fn parse_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && v <= 10_000_000.0 => Ok(v),
        _ => Err("requests per second, above 0 and at most 10,000,000, e.g. 2000".into()),
    }
}

impl RunArgs {
    /// `dbio run TEST` with every other option at its default: the start of each run of a
    /// command made of runs (matrix, calibrate).
    pub fn defaults(test: Test) -> RunArgs {
        #[derive(Parser)]
        #[command(no_binary_name = true)]
        struct Defaults {
            #[command(flatten)]
            run: RunArgs,
        }
        Defaults::try_parse_from([test.name()])
            .expect("dbio run's defaults parse")
            .run
    }
}

impl RunArgs {
    /// The defaults with one option set as typed (`flag value`, or a switch when `value` is
    /// `None`): how a job file's option is checked by the very parser of the command line.
    /// The error is clap's message without its `error:` prefix.
    pub fn parse_option(flag: &str, value: Option<&str>) -> Result<RunArgs, String> {
        #[derive(Parser)]
        #[command(no_binary_name = true)]
        struct One {
            #[command(flatten)]
            run: RunArgs,
        }
        let mut argv = vec![Test::ReadIops.name(), flag];
        argv.extend(value);
        One::try_parse_from(argv).map(|o| o.run).map_err(|e| {
            let line = one_line_error(&e);
            line.trim_start_matches("error: ").to_string()
        })
    }
}

impl Cli {
    /// Parses the command line, remembering which `run` options were typed: a job file
    /// fills in only the others.
    pub fn parse_with_sources<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        use clap::{CommandFactory, FromArgMatches, parser::ValueSource};
        let matches = Cli::command().try_get_matches_from(args)?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        let typed = |sub: &clap::ArgMatches| -> Vec<String> {
            sub.ids()
                .filter(|id| sub.value_source(id.as_str()) == Some(ValueSource::CommandLine))
                .map(|id| id.to_string())
                .collect()
        };
        match (&mut cli.command, matches.subcommand()) {
            (Command::Run(a), Some(("run", sub))) => a.typed = typed(sub),
            // A sweep's points are runs: the same rules for what was typed.
            (Command::Sweep(s), Some(("sweep", sub))) => s.run.typed = typed(sub),
            _ => {}
        }
        Ok(cli)
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one test and write result.json, summary.txt, report.html and CSV exports into a
    /// new run directory.
    Run(Box<RunArgs>),
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
    /// Show the storage stack under a path: file system, dm/md/partitions, disks, HBA, ports, queue settings.
    Map(MapArgs),
    /// ORION-style grid: small random reads × large I/O at rising outstanding counts.
    Matrix(crate::matrix::MatrixArgs),
    /// Check for other dbio processes, data sets, run directories and what killed runs left behind.
    Doctor(DoctorArgs),
    /// Run one test at several values of one parameter (--param NAME=V1,V2,...): a table,
    /// sweep.json, sweep.csv and sweep.html, plus each point's own run directory.
    Sweep(Box<SweepArgs>),
    /// Find the maximum small-read IOPS within a latency limit, the maximum large-read MiB/s
    /// and a single session's large-read MiB/s; prints the curves walked, writes calibrate.json.
    Calibrate(Box<CalibrateArgs>),
    /// Check every block of a data set prepared with --verify: checksum, place and last
    /// write. Exit 0 when all are good, 1 with one line per bad block.
    Verify(VerifyArgs),
    /// Memory latency by working-set size (cache levels marked), the NUMA node × node
    /// matrix and loaded latency; or where shared memory lives (--shm PATH, --pid PID).
    Mem(Box<crate::mem::MemArgs>),
}

#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// The data set directory.
    #[arg(default_value = "./dbio-data")]
    pub path: PathBuf,
}

/// Where the data set lives and what it looks like.
#[derive(Debug, Clone, Args)]
pub struct DataSetArgs {
    /// Directory holding the data set (created if its parent exists). Read tests also
    /// accept an existing file or block device, which is only read.
    #[arg(long, default_value = "./dbio-data", value_name = "PATH")]
    pub target: PathBuf,
    /// Total data set size (K, M, G, T are binary) [default: 1G; for an existing file or
    /// block device as --target: all of it, or the first SIZE bytes].
    #[arg(long, value_parser = parse_size_arg, allow_hyphen_values = true)]
    pub size: Option<u64>,
    /// Database block size: a power of two from 512 to 1M.
    #[arg(long, default_value = "8K", value_parser = parse_block_size_arg, allow_hyphen_values = true)]
    pub block_size: u64,
    /// Number of data files the data set is spread over.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub files: u32,
    /// Recreate the data set even if a matching one exists.
    #[arg(long)]
    pub fresh: bool,
    /// What the data files hold: random (incompressible), zero, compress=RATIO (e.g.
    /// compress=2: compresses about 2:1) or dedupe=RATIO (e.g. dedupe=4: 1 in 4 blocks
    /// unique). A data set filled otherwise is recreated.
    #[arg(long, default_value = "random", value_parser = crate::dataset::fill::Content::parse, value_name = "random|zero|compress=RATIO|dedupe=RATIO")]
    pub fill: crate::dataset::fill::Content,
    /// Seed for the random block choices and the data fill (default: random).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Every block written carries a header (data set, file, block, write sequence,
    /// checksum) and every block read is checked: torn, misdirected and lost writes are
    /// failed requests naming file and block. Check a data set later with `dbio verify`.
    #[arg(long)]
    pub verify: bool,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The test to run (not with --job).
    #[arg(value_enum, required_unless_present = "job", conflicts_with = "job")]
    pub test: Option<Test>,
    /// Run the I/O classes of a job file (TOML): events, sizes, sessions, rates, limits.
    /// Options typed here win over the job file.
    #[arg(long, value_name = "FILE")]
    pub job: Option<PathBuf>,
    /// Write the job file equivalent to this run (classic tests), then run it.
    #[arg(long, value_name = "FILE")]
    pub save_job: Option<PathBuf>,
    /// Options given on the command line (filled by `Cli::parse_with_sources`).
    #[arg(skip)]
    pub typed: Vec<String>,

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
    /// Open loop: issue this many requests per second over all sessions, on a schedule,
    /// whatever the storage does; latency then runs from each request's scheduled time
    /// (classic tests; job files set `rate` per class).
    #[arg(long, value_name = "REQUESTS_PER_S", value_parser = parse_rate)]
    pub rate: Option<f64>,
    /// Arrivals of --rate: at fixed intervals, or as a Poisson process.
    #[arg(long, value_enum, default_value = "fixed", requires = "rate")]
    pub arrival: Arrival,
    /// Requests in flight per session for "direct path read"/"direct path write".
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub depth: u32,
    /// Multiblock read count: blocks per multiblock request (default: 1 MiB / block size).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub mbrc: Option<u32>,
    /// Directory the run directory is created in.
    #[arg(long, default_value = "./dbio-runs", value_name = "DIR")]
    pub out: PathBuf,
    /// Active Session History samples per second.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub ash_hz: u32,

    #[command(flatten)]
    pub redo: RedoArgs,
    #[command(flatten)]
    pub oltp: OltpArgs,
    #[command(flatten)]
    pub temp: TempArgs,
    /// Print result.json to stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// No live progress line (it is only drawn when stdout and stderr are terminals).
    #[arg(long, short)]
    pub quiet: bool,
    /// Allow write-iops/write-mbps on a block device as --target, overwriting it. Refused
    /// anyway when it is mounted, in use, or holds a file system, partition table, LVM,
    /// RAID, swap or LUKS signature.
    #[arg(long)]
    pub destructive: bool,
    /// With --destructive: do not ask for confirmation on the terminal.
    #[arg(long, requires = "destructive")]
    pub yes: bool,
    /// Keep going after an I/O error, counting errors per event (default: stop at the first,
    /// keep the partial result, exit 4).
    #[arg(long)]
    pub continue_on_error: bool,
}

/// Redo and commits (tests `redo` and `oltp`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Redo and commits (redo, oltp)")]
pub struct RedoArgs {
    /// Redo generated per commit: a size, or a range drawn uniformly (512..8K).
    #[arg(long, default_value = "2K", value_parser = units::parse_size_range, value_name = "SIZE|LO..HI")]
    pub redo_per_commit: units::SizeRange,
    /// Think time before each commit (redo) or transaction (oltp): a duration or a range (1ms..5ms).
    #[arg(long, value_parser = units::parse_duration_range, value_name = "DURATION|LO..HI")]
    pub think: Option<units::DurationRange>,
    /// Redo block size: LGWR writes whole redo blocks (512 or 4K).
    #[arg(long, default_value = "512", value_parser = parse_redo_block, value_name = "512|4K")]
    pub redo_block: u64,
    /// Redo log files, written in turn (a log switch when one is full).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=64))]
    pub redo_files: u32,
    /// Size of each redo log file.
    #[arg(long, default_value = "256M", value_parser = parse_size_arg)]
    pub redo_file_size: u64,
    /// How LGWR makes redo durable: O_DSYNC writes, or plain writes then fdatasync.
    #[arg(long, value_enum, default_value = "dsync")]
    pub redo_sync: crate::config::RedoSync,
    /// Pin the log writer to this CPU.
    #[arg(long, value_name = "CPU")]
    pub lgwr_cpu: Option<usize>,
    /// Run a noise thread on this CPU: ~3 ms of computation, 1 ms of sleep, repeated.
    #[arg(long, value_name = "CPU")]
    pub noise_cpu: Option<usize>,
    /// Database writer threads (oltp).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub writers: u32,
    /// How LGWR submits the pieces of one write, set by a job file's `[redo] submission`
    /// (on the command line, the redo test's --sync / --async say it).
    #[arg(skip)]
    pub lgwr_submission: Option<crate::config::Submission>,
}

/// The OLTP mix (test `oltp`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "OLTP mix (oltp)")]
pub struct OltpArgs {
    /// Blocks each transaction reads.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub work_unit: u32,
    /// Percentage of transactions that update their blocks and commit.
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub update_pct: u32,
    /// Percentage of block accesses that go to the hot spot.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100))]
    pub hotspot_pct: u32,
    /// Size of the hot spot (the first bytes of the data set).
    #[arg(long, value_parser = parse_size_arg)]
    pub hotspot_size: Option<u64>,
    /// Read each transaction's blocks as one batch ("db file parallel read").
    #[arg(long)]
    pub async_reads: bool,
    /// Buffer cache size (CLOCK, shared by all sessions); none: every read is physical.
    #[arg(long, value_parser = parse_size_arg)]
    pub cache_size: Option<u64>,
    /// Do not load the buffer cache before the run starts (it warms up during the run).
    #[arg(long)]
    pub cold_cache: bool,
}

/// Sorts and hashes spilling to temp (test `temp`).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Temp spills (temp)")]
pub struct TempArgs {
    /// Spill written and read back by each session, per round.
    #[arg(long, default_value = "64M", value_parser = parse_size_arg)]
    pub spill_size: u64,
    /// Temp I/O request size, 48K to 4M.
    #[arg(long, default_value = "240K", value_parser = parse_temp_io)]
    pub temp_io: u64,
}

#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub dataset: DataSetArgs,
    /// Fill with buffered writes instead of O_DIRECT (for file systems without direct I/O).
    #[arg(long)]
    pub buffered: bool,
    /// No progress bar (it is only drawn when stdout and stderr are terminals).
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CleanArgs {
    /// The data set directory to remove (with --stale: data sets, run directories or
    /// directories holding them; default ./dbio-data and ./dbio-runs).
    pub paths: Vec<PathBuf>,
    /// Only repair what `dbio doctor` reports as stale: clear the in-use mark a killed run
    /// left and remove its temporary files. Data files stay.
    #[arg(long)]
    pub stale: bool,
}

#[derive(Debug, Clone, Args)]
pub struct MapArgs {
    /// A file, directory or block device.
    #[arg(default_value = ".")]
    pub path: PathBuf,
    /// Print the map (and findings) as JSON.
    #[arg(long)]
    pub json: bool,
    /// Database block size to check against the devices' logical block size.
    #[arg(long, default_value = "8K", value_parser = parse_block_size_arg)]
    pub block_size: u64,
}

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Data sets, run directories, or directories holding them (default ./dbio-data and
    /// ./dbio-runs).
    pub paths: Vec<PathBuf>,
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

/// `dbio sweep`: every option of `dbio run` applies to every point.
#[derive(Debug, Clone, Args)]
pub struct SweepArgs {
    /// The parameter swept and its values, e.g. sessions=1,2,4,8 or block-size=4K,8K,16K.
    /// NAME is one of: sessions, block-size, temp-io, depth, batch, rate (requests/s, open
    /// loop).
    #[arg(long, value_name = "NAME=V1,V2,...", value_parser = crate::sweep::parse_param, required_unless_present = "curve")]
    pub param: Option<crate::sweep::SweepParam>,
    /// A latency-vs-load curve: find the maximum rate (closed loop), then run open loop at
    /// 10, 50, 70, 80, 90 and 100 % of it.
    #[arg(long, conflicts_with = "param")]
    pub curve: bool,
    #[command(flatten)]
    pub run: RunArgs,
}

/// `dbio calibrate`.
#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub dataset: DataSetArgs,
    /// The latency the maximum IOPS must keep: STAT=DURATION, STAT one of mean, p50, p90,
    /// p95, p99 (per request), e.g. p99=2ms.
    #[arg(long, default_value = "p95=10ms", value_parser = crate::sweep::calibrate::parse_limit, value_name = "STAT=DURATION")]
    pub max_latency: crate::sweep::calibrate::LatencyLimit,
    /// Measured window of each point.
    #[arg(long, default_value = "10s", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub point_duration: std::time::Duration,
    /// Unmeasured warm-up before each point.
    #[arg(long, default_value = "2s", value_parser = parse_duration_arg, allow_hyphen_values = true)]
    pub warmup: std::time::Duration,
    /// The most I/O requests kept outstanding while walking up (sessions × batch or depth).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_outstanding: u32,
    /// Open flags and submission, like the database's filesystemio_options.
    #[arg(long, value_enum, default_value = "setall")]
    pub io_mode: IoMode,
    /// How asynchronous I/O is submitted.
    #[arg(long, value_enum, default_value = "auto")]
    pub engine: EngineChoice,
    /// Directory the calibration directory (calibrate.json and each point's run) is created in.
    #[arg(long, default_value = "./dbio-runs", value_name = "DIR")]
    pub out: PathBuf,
    /// Print calibrate.json to stdout instead of the curves.
    #[arg(long)]
    pub json: bool,
}

pub fn parse_size_arg(s: &str) -> Result<u64, String> {
    let v = units::parse_size(s)?;
    if v == 0 {
        return Err("must be larger than 0".into());
    }
    Ok(v)
}

pub(crate) fn parse_block_size_arg(s: &str) -> Result<u64, String> {
    let v = units::parse_size(s)?;
    if !v.is_power_of_two() || !(512..=1 << 20).contains(&v) {
        return Err("must be a power of two from 512 to 1M, e.g. 8K".into());
    }
    Ok(v)
}

pub(crate) fn parse_redo_block(s: &str) -> Result<u64, String> {
    match units::parse_size(s)? {
        v @ (512 | 4096) => Ok(v),
        _ => Err("must be 512 or 4K".into()),
    }
}

pub(crate) fn parse_temp_io(s: &str) -> Result<u64, String> {
    let v = units::parse_size(s)?;
    if !(48 << 10..=4 << 20).contains(&v) || v % 512 != 0 {
        return Err("must be from 48K to 4M, a multiple of 512, e.g. 240K".into());
    }
    Ok(v)
}

pub fn parse_duration_arg(s: &str) -> Result<std::time::Duration, String> {
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
