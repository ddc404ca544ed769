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
pub mod summary;
pub mod tables;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use crate::error::{Error, Result};
use crate::units::{self, Shown};

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

/// What a figure of a capture measures, and so the values a database can report of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Measure {
    /// Waits, requests, transactions: at least 0.
    Count,
    /// Requests, waits, commits or blocks per second: 0 to 10^12 (no storage serves more).
    Rate,
    /// Bytes per second: 0 to 10^15 (a petabyte a second).
    BytesRate,
    /// Bytes of one request: 0 to 1 TiB.
    RequestBytes,
    /// Blocks of one batch: 1 to 10^6.
    Batch,
    /// A wait in milliseconds: 0 to an hour.
    Millis,
    /// A share of the waits: 0 to 100 %.
    Percent,
    /// The seconds a capture covers: above 0, at most a year.
    Seconds,
}

impl Measure {
    /// The values accepted (low and high, inclusive) and how to say them.
    fn accepted(self) -> (f64, f64, &'static str) {
        match self {
            Measure::Count => (0.0, 1e18, "a count is from 0 to 10^18"),
            Measure::Rate => (0.0, 1e12, "a rate is from 0 to 10^12 a second"),
            Measure::BytesRate => (0.0, 1e15, "bytes a second are from 0 to 10^15"),
            Measure::RequestBytes => (0.0, 1099511627776.0, "a request is from 0 to 1 TiB"),
            Measure::Batch => (1.0, 1e6, "a batch is from 1 to 10^6 blocks"),
            Measure::Millis => (0.0, 3_600_000.0, "a wait is from 0 ms to an hour"),
            Measure::Percent => (0.0, 100.0, "a share is from 0 to 100 %"),
            Measure::Seconds => (
                f64::MIN_POSITIVE,
                366.0 * 86400.0,
                "an interval is above 0 s and at most a year",
            ),
        }
    }
}

/// `value`, read at `origin` as a `measure`: an error naming the line and the figure when
/// it is NaN, infinite, or beyond what any database reports (a negative count, a rate
/// beyond any storage, a wait of more than an hour, a share over 100 %). Every figure of a
/// capture passes here ([`Capture::check`]) before it shapes a job.
pub fn checked(value: f64, measure: Measure, origin: &Origin) -> Result<f64> {
    let (lo, hi, accepted) = measure.accepted();
    if value.is_finite() && (lo..=hi).contains(&value) {
        return Ok(value);
    }
    Err(Error::usage(format!(
        "{}: {}: {value} is not a figure a database reports ({accepted})",
        units::echoed(&origin.place()),
        units::echoed(&origin.what)
    )))
}

impl Figure {
    /// The figure, [`checked`] as a `measure`.
    pub fn check(&self, measure: Measure) -> Result<()> {
        checked(self.value, measure, &self.origin).map(|_| ())
    }
}

impl Capture {
    /// Every figure of the capture [`checked`]: the one place a report's figures are
    /// refused before they shape a job.
    pub fn check(&self) -> Result<()> {
        if let Some(s) = &self.seconds {
            s.check(Measure::Seconds)?;
        }
        for c in &self.classes {
            c.per_s.check(Measure::Rate)?;
            let per_request = [
                (&c.bytes, Measure::RequestBytes),
                (&c.batch, Measure::Batch),
                (&c.mean_ms, Measure::Millis),
                (&c.p99_ms, Measure::Millis),
            ];
            for (f, m) in per_request {
                if let Some(f) = f {
                    f.check(m)?;
                }
            }
        }
        Ok(())
    }
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
    /// How many sessions issued it at once, where the capture saw it (a database's sampled
    /// sessions); otherwise the job derives them by Little's law.
    pub sessions: Option<Figure>,
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
    /// How the database made its log durable, where it says (PostgreSQL's
    /// `wal_sync_method`): the job's `[redo] sync`.
    pub redo_sync: Option<(crate::workload::spec::RedoDurability, Origin)>,
    /// Commits per log flush, where the capture counts both (PostgreSQL's commits / WAL
    /// flushes): the job's `[redo] group_commit`.
    pub group_commit: Option<Figure>,
}

/// The most a report (or `iostat -x` output) may hold.
pub const MAX_REPORT_BYTES: u64 = 64 << 20;

/// Reads a file the way `from-awr` and `from-iostat` need it: text, a regular file of at
/// most [`MAX_REPORT_BYTES`] read bounded whatever its size claims (a FIFO, device or
/// directory is refused before it is opened), given up on a signal. One clear line when
/// it cannot be read.
pub fn read_report(path: &Path, stop: &AtomicBool) -> Result<String> {
    let bytes = crate::safety::input::read_input(path, MAX_REPORT_BYTES, Some(stop))
        .map_err(|e| e.into_error(&path.shown().to_string(), "a report"))?;
    // Text as it is (no copy), or with what is not UTF-8 replaced.
    Ok(String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
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
    /// The options of the table it takes: `--interval`, `--samples`, `--pg` and the
    /// shaping.
    #[command(flatten)]
    pub options: crate::options::cli::FromPgOptions,
}

/// What every `dbio job from-*` takes (`--peak`, `--growth`, ...), as the option table
/// reads it.
pub use crate::options::capture::Shaping;

#[derive(Debug, Clone, clap::Args)]
pub struct FromArgs {
    /// The reports: one, or a day of hourly snapshots (averages, or the peak with --peak).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// The options of the table it takes: the shaping.
    #[command(flatten)]
    pub options: crate::options::cli::FromAwrOptions,
}

#[derive(Debug, Clone, clap::Args)]
pub struct FromIostatArgs {
    /// The output of `iostat -x [-k|-m] INTERVAL [COUNT]` (the first report, since boot,
    /// is left out when there are more).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The options of the table it takes: `--device` and the shaping.
    #[command(flatten)]
    pub options: crate::options::cli::FromIostatOptions,
}

impl JobArgs {
    /// The options of the table whichever `from-…` was asked takes (with `-o`, how the
    /// job's summary is printed: `--json`, `--format`).
    pub fn options(&self) -> &crate::options::RunArgs {
        match &self.from {
            From::FromAwr(a) => &a.options.0,
            From::FromIostat(a) => &a.options.0,
            From::FromPg(a) => &a.options.0,
        }
    }

    /// The shaping options of whichever `from-…` was asked.
    pub fn shaping(&self) -> &Shaping {
        &self.options().shaping
    }
}

/// `dbio job from-…`: reads the captures and returns the job file's text.
pub fn job(args: &JobArgs, command: String, stop: &AtomicBool) -> Result<String> {
    let (captures, shaping) = match &args.from {
        From::FromAwr(a) => {
            let mut caps = Vec::new();
            for f in &a.files {
                let text = read_report(f, stop)?;
                caps.push(awr::read(&cited(f), &text, stop)?);
            }
            (caps, &a.options.0.shaping)
        }
        From::FromIostat(a) => {
            let text = read_report(&a.file, stop)?;
            (
                iostat::read(&cited(&a.file), &text, &a.options.0.shaping.devices, stop)?,
                &a.options.0.shaping,
            )
        }
        From::FromPg(a) => (
            pg::read(
                a.options.0.pg.as_deref(),
                a.options.0.shaping.interval,
                a.options.0.shaping.samples,
                stop,
            )?,
            &a.options.0.shaping,
        ),
    };
    for c in &captures {
        c.check()?;
    }
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
