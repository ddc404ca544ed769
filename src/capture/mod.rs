//! From the database's own statistics to a job: `dbio job from-awr` (Oracle AWR and
//! Statspack reports, text or AWR HTML) and `dbio job from-iostat` (Linux `iostat -x`) read
//! what a database or host did and write the job file that asks the same of new storage.
//!
//! - [`tables`]: a report read as titled tables of cells (text and HTML alike);
//! - [`awr`]: the I/O an AWR or Statspack report shows (events, load profile, IOStat by
//!   function, histograms, interval);
//! - [`iostat`]: the requests a device served;
//! - [`job`]: the figures of one or several captures as a job file, every number with the
//!   line it came from.

pub mod awr;
pub mod iostat;
pub mod job;
pub mod pg;
pub mod tables;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::units::Shown;

/// Where a figure was read: the report and its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    pub file: String,
    pub line: usize,
    /// What was read there (`Top 5 Timed Events: log file sync`).
    pub what: String,
}

impl Origin {
    pub fn cite(&self) -> String {
        match self.line {
            0 => format!("{}: {}", self.file, self.what),
            n => format!("{} line {n}: {}", self.file, self.what),
        }
    }

    /// Where, without what: `FILE line N` (or the source alone when it has no lines).
    pub fn place(&self) -> String {
        match self.line {
            0 => self.file.clone(),
            n => format!("{} line {n}", self.file),
        }
    }
}

/// A figure and where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub value: f64,
    pub origin: Origin,
}

/// One I/O class the capture shows, per second of its interval: requests (waits) per second,
/// bytes per request, the mean wait and, where a histogram gives it, the 99th percentile.
#[derive(Debug, Clone)]
pub struct Class {
    /// The wait event (dbio's name for it).
    pub event: crate::workload::Event,
    pub per_s: Figure,
    /// Bytes per request; None when the capture does not say (an assumption is made later).
    pub bytes: Option<Figure>,
    /// Blocks per request of a batch (db file parallel write): the rate is in blocks/s.
    pub batch: Option<Figure>,
    pub mean_ms: Option<Figure>,
    pub p99_ms: Option<Figure>,
    /// Whether the class was named by a guess (iostat: by request size).
    pub guessed: bool,
}

/// What one report or capture shows.
#[derive(Debug, Clone)]
pub struct Capture {
    /// The file it was read from, as the user gave it.
    pub file: String,
    /// "AWR", "Statspack", "AWR (HTML)", "iostat".
    pub kind: String,
    /// Seconds between the snapshots (or of the capture).
    pub seconds: Option<Figure>,
    pub block_size: Option<Figure>,
    pub classes: Vec<Class>,
}

/// Reads a file the way `from-awr` and `from-iostat` need it: text, at most 64 MiB, a
/// regular file. One clear line when it cannot be read.
pub fn read_report(path: &Path) -> Result<String> {
    let bad = |why: String| Error::usage(format!("{}: {why}", path.shown()));
    let md = std::fs::metadata(path).map_err(|e| bad(crate::error::io_advice(&e)))?;
    if !md.is_file() {
        return Err(bad("not a regular file".into()));
    }
    if md.len() > 64 << 20 {
        return Err(bad(format!(
            "{} bytes is too large for a report (at most 64 MiB)",
            md.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| bad(crate::error::io_advice(&e)))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The name a file is cited by in the job: as given.
pub fn cited(path: &Path) -> String {
    PathBuf::from(path).display().to_string()
}

/// `dbio job`: a job file from what a database or host did.
#[derive(Debug, Clone, clap::Args)]
pub struct JobArgs {
    #[command(subcommand)]
    pub from: From,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum From {
    /// Read Oracle AWR or Statspack reports (text 10g–19c, or AWR HTML) and write the job
    /// that issues the I/O they show: one class per I/O event with its size, rate, sessions
    /// (Little's law) and limits (the waits the database saw), each figure citing its line.
    FromAwr(FromArgs),
    /// Read `iostat -x` output (Linux sysstat) and write the job of the requests the devices
    /// served, the classes guessed from request sizes.
    FromIostat(FromIostatArgs),
    /// Sample a live PostgreSQL read-only (its I/O and WAL statistics, --samples intervals of
    /// --interval) and write the job of what it did: reads, writes, commits.
    FromPg(FromPgArgs),
}

#[derive(Debug, Clone, clap::Args)]
pub struct FromPgArgs {
    /// The server: a URL or key=value string; PGHOST, PGPORT, PGUSER, PGDATABASE fill the rest.
    #[arg(long, value_name = "URL")]
    pub pg: Option<String>,
    /// How long each sample watches the server.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_interval)]
    pub interval: std::time::Duration,
    /// How many samples (the job's rate is their average, or the busiest with --peak).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub samples: u32,
    #[command(flatten)]
    pub shaping: Shaping,
}

fn parse_interval(s: &str) -> std::result::Result<std::time::Duration, String> {
    let d = crate::units::parse_duration(s)?;
    if d < std::time::Duration::from_secs(1) || d > std::time::Duration::from_secs(86400) {
        return Err(format!("'{s}' must be from 1s to 24h"));
    }
    Ok(d)
}

/// What every `dbio job from-*` takes.
#[derive(Debug, Clone, clap::Args)]
pub struct Shaping {
    /// The busiest report's rate per class instead of the average over the reports.
    #[arg(long)]
    pub peak: bool,
    /// Multiply every rate (e.g. 1.5 for half again the load).
    #[arg(long, value_name = "X", default_value = "1", value_parser = parse_growth)]
    pub growth: f64,
    /// Also write the [requirements] block `dbio size` reads.
    #[arg(long)]
    pub requirements: bool,
    /// The data set size the job names (else an assumed 4G, marked as such).
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub size: Option<u64>,
    /// The data set directory the job names (else ./dbio-data, marked as assumed).
    #[arg(long, value_name = "DIR", value_parser = parse_target)]
    pub target: Option<String>,
    /// Write the job here (a new file; an existing one is never replaced) instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, clap::Args)]
pub struct FromArgs {
    /// The reports: one, or a day of hourly snapshots (averages, or the peak with --peak).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub shaping: Shaping,
}

#[derive(Debug, Clone, clap::Args)]
pub struct FromIostatArgs {
    /// The output of `iostat -x [-k|-m] INTERVAL [COUNT]` (the first report, since boot,
    /// is left out when there are more).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Only these devices (as iostat names them: sda, nvme0n1, dm-3); repeatable.
    #[arg(long, value_name = "NAME")]
    pub device: Vec<String>,
    #[command(flatten)]
    pub shaping: Shaping,
}

/// `--target` as `dbio run` takes it (the same parser: an empty path is no directory).
fn parse_target(s: &str) -> std::result::Result<String, String> {
    crate::options::parse::path(s, "a directory for the data set, e.g. ./dbio-data")
        .map(|_| s.to_string())
}

fn parse_growth(s: &str) -> std::result::Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number (e.g. 1.5)"))?;
    if !v.is_finite() || v <= 0.0 || v > 1000.0 {
        return Err(format!("'{s}' must be above 0 and at most 1000"));
    }
    Ok(v)
}

fn parse_size_arg(s: &str) -> std::result::Result<u64, String> {
    let v = crate::units::parse_size(s)?;
    if v == 0 {
        return Err("a data set of 0 bytes".into());
    }
    Ok(v)
}

/// The shaping options of whichever `from-…` was asked.
impl JobArgs {
    pub fn shaping(&self) -> &Shaping {
        match &self.from {
            From::FromAwr(a) => &a.shaping,
            From::FromIostat(a) => &a.shaping,
            From::FromPg(a) => &a.shaping,
        }
    }
}

/// `dbio job from-…`: reads the captures and returns the job file's text.
pub fn job(
    args: &JobArgs,
    command: String,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<String> {
    let (captures, shaping) = match &args.from {
        From::FromAwr(a) => {
            let mut caps = Vec::new();
            for f in &a.files {
                let text = read_report(f)?;
                caps.push(awr::read(&cited(f), &text)?);
            }
            (caps, &a.shaping)
        }
        From::FromIostat(a) => {
            let text = read_report(&a.file)?;
            (iostat::read(&cited(&a.file), &text, &a.device)?, &a.shaping)
        }
        From::FromPg(a) => (
            pg::read(a.pg.as_deref(), a.interval, a.samples, stop)?,
            &a.shaping,
        ),
    };
    let shape = job::Shape {
        peak: shaping.peak,
        growth: shaping.growth,
        size: shaping.size,
        target: shaping.target.clone(),
        requirements: shaping.requirements,
        command,
    };
    Ok(job::job_file(&captures, &shape))
}
