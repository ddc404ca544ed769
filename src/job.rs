//! Job files (TOML): what the database needs per I/O class, generated exactly and checked
//! against limits (issue 6). `dbio run --job FILE`:
//!
//! ```toml
//! [dataset]                 # target, size, block_size, files
//! [run]                     # duration, warmup, io_mode, engine, seed
//! [[class]]
//! name = "single-block reads"
//! event = "db file sequential read"
//! size = "16K"
//! sessions = 4
//! rate = 406                # requests/s, optional: open loop
//! arrival = "poisson"       # or "fixed" (default)
//! [class.limits]
//! p99 = "10ms"              # mean, p50, p90, p95, p99; min_iops, min_mib_per_s
//! ```
//!
//! Options typed on the command line win over the job file; the job file wins over
//! defaults. Unknown keys and bad values are errors naming the key and its line.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::config::Submission;
use crate::error::{Error, Result};
use crate::units::{self, DurationRange};
use crate::workload::Event;

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobFile {
    #[serde(default)]
    dataset: Option<JobDataSet>,
    #[serde(default)]
    run: Option<JobRun>,
    #[serde(default)]
    class: Vec<JobClass>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobDataSet {
    target: Option<String>,
    size: Option<Spanned<String>>,
    block_size: Option<Spanned<String>>,
    files: Option<u32>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobRun {
    duration: Option<Spanned<String>>,
    warmup: Option<Spanned<String>>,
    io_mode: Option<Spanned<String>>,
    engine: Option<Spanned<String>>,
    seed: Option<u64>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobClass {
    name: Option<String>,
    event: Spanned<String>,
    size: Spanned<String>,
    sessions: Option<Spanned<u32>>,
    submission: Option<Spanned<String>>,
    rate: Option<Spanned<f64>>,
    arrival: Option<Spanned<String>>,
    think: Option<Spanned<String>>,
    batch: Option<Spanned<u32>>,
    depth: Option<Spanned<u32>>,
    limits: Option<JobLimits>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobLimits {
    mean: Option<Spanned<String>>,
    p50: Option<Spanned<String>>,
    p90: Option<Spanned<String>>,
    p95: Option<Spanned<String>>,
    p99: Option<Spanned<String>>,
    min_iops: Option<Spanned<f64>>,
    min_mib_per_s: Option<Spanned<f64>>,
}

/// Latency limits and minimum throughput of a class: a run passes when every one holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    /// (statistic — "mean", "p50", ... — and the most it may be).
    pub latency: Vec<(&'static str, Duration)>,
    pub min_iops: Option<f64>,
    pub min_mib_per_s: Option<f64>,
}

impl Limits {
    pub fn is_empty(&self) -> bool {
        self.latency.is_empty() && self.min_iops.is_none() && self.min_mib_per_s.is_none()
    }
}

/// One I/O class: an event issued by its own sessions, at a rate or as fast as they can.
#[derive(Debug, Clone)]
pub struct ClassSpec {
    pub name: String,
    pub event: Event,
    /// Bytes per request.
    pub size: u64,
    pub sessions: usize,
    pub submission: Submission,
    /// Requests per second over all the class's sessions (open loop), if any.
    pub rate: Option<f64>,
    pub poisson: bool,
    pub think: Option<DurationRange>,
    pub batch: Option<usize>,
    pub depth: Option<usize>,
    pub limits: Limits,
}

/// What a job file sets, each value with where it came from.
#[derive(Debug, Clone, Default)]
pub struct Job {
    pub target: Option<String>,
    pub size: Option<u64>,
    pub block_size: Option<u64>,
    pub files: Option<u32>,
    pub duration: Option<Duration>,
    pub warmup: Option<Duration>,
    pub io_mode: Option<crate::config::IoMode>,
    pub engine: Option<crate::engine::EngineChoice>,
    pub seed: Option<u64>,
    pub classes: Vec<ClassSpec>,
    /// The job as JSON, embedded in result.json.
    pub json: serde_json::Value,
}

/// The events a class can issue: the data-file events. Redo, commits and temp need the
/// instance around them — use the tests redo, oltp and temp.
pub const CLASS_EVENTS: [Event; 6] = [
    Event::DbFileSequentialRead,
    Event::DbFileParallelRead,
    Event::DbFileScatteredRead,
    Event::DirectPathRead,
    Event::DbFileParallelWrite,
    Event::DirectPathWrite,
];

/// Reads and checks a job file.
pub fn load(path: &Path) -> Result<Job> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::usage(format!("--job {}: no such file", path.display()))
        }
        std::io::ErrorKind::InvalidData => {
            Error::usage(format!("--job {}: not a text (UTF-8) file", path.display()))
        }
        _ => Error::io("cannot read the job file", path, &e),
    })?;
    parse(&text, &path.display().to_string())
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses job file `text` (`origin` names it in errors).
pub fn parse(text: &str, origin: &str) -> Result<Job> {
    let file: JobFile = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" (line {})", line_of(text, s.start)))
            .unwrap_or_default();
        Error::usage(format!("{origin}{at}: {}", e.message()))
    })?;
    let bad = |key: &str, span: std::ops::Range<usize>, why: String| {
        Error::usage(format!(
            "{origin} (line {}): invalid value for '{key}': {why}",
            line_of(text, span.start)
        ))
    };
    let size = |key: &str, v: &Spanned<String>| {
        units::parse_size(v.get_ref()).map_err(|e| bad(key, v.span(), e))
    };
    let duration = |key: &str, v: &Spanned<String>| {
        units::parse_duration(v.get_ref()).map_err(|e| bad(key, v.span(), e))
    };
    let mut job = Job {
        json: serde_json::to_value(&file).unwrap_or(serde_json::Value::Null),
        ..Job::default()
    };
    if let Some(d) = &file.dataset {
        job.target = d.target.clone();
        job.size = d
            .size
            .as_ref()
            .map(|v| size("dataset.size", v))
            .transpose()?;
        job.block_size = d
            .block_size
            .as_ref()
            .map(|v| size("dataset.block_size", v))
            .transpose()?;
        job.files = d.files;
    }
    if let Some(r) = &file.run {
        job.duration = r
            .duration
            .as_ref()
            .map(|v| duration("run.duration", v))
            .transpose()?;
        job.warmup = r
            .warmup
            .as_ref()
            .map(|v| duration("run.warmup", v))
            .transpose()?;
        job.io_mode = r
            .io_mode
            .as_ref()
            .map(|v| {
                clap::ValueEnum::from_str(v.get_ref(), true).map_err(|_| {
                    bad(
                        "run.io_mode",
                        v.span(),
                        "accepted: none, directio, asynch, setall".into(),
                    )
                })
            })
            .transpose()?;
        job.engine = r
            .engine
            .as_ref()
            .map(|v| {
                clap::ValueEnum::from_str(v.get_ref(), true).map_err(|_| {
                    bad(
                        "run.engine",
                        v.span(),
                        "accepted: auto, uring, aio, sync".into(),
                    )
                })
            })
            .transpose()?;
        job.seed = r.seed;
    }
    if file.class.is_empty() {
        return Err(Error::usage(format!(
            "{origin}: no [[class]]: a job needs at least one I/O class"
        )));
    }
    for (i, c) in file.class.iter().enumerate() {
        let event = Event::from_name(c.event.get_ref())
            .filter(|e| CLASS_EVENTS.contains(e))
            .ok_or_else(|| {
                let names: Vec<&str> = CLASS_EVENTS.iter().map(|e| e.name()).collect();
                bad(
                    "class.event",
                    c.event.span(),
                    format!("'{}'; accepted: {}", c.event.get_ref(), names.join(", ")),
                )
            })?;
        let natural = match event {
            Event::DbFileSequentialRead | Event::DbFileScatteredRead => Submission::Sync,
            _ => Submission::Async,
        };
        let submission = match &c.submission {
            None => natural,
            Some(v) => {
                let s = match v.get_ref().as_str() {
                    "sync" => Submission::Sync,
                    "async" => Submission::Async,
                    other => {
                        return Err(bad(
                            "class.submission",
                            v.span(),
                            format!("'{other}'; accepted: sync, async"),
                        ));
                    }
                };
                let fixed = matches!(
                    event,
                    Event::DbFileSequentialRead
                        | Event::DbFileScatteredRead
                        | Event::DbFileParallelRead
                        | Event::DirectPathRead
                );
                if fixed && s != natural {
                    return Err(bad(
                        "class.submission",
                        v.span(),
                        format!("\"{}\" is {} by definition", event.name(), natural.name()),
                    ));
                }
                s
            }
        };
        let sessions = match &c.sessions {
            None => 1,
            Some(v) if (1..=4096).contains(v.get_ref()) => *v.get_ref() as usize,
            Some(v) => return Err(bad("class.sessions", v.span(), "from 1 to 4096".into())),
        };
        let rate = match &c.rate {
            None => None,
            Some(v)
                if *v.get_ref() > 0.0
                    && v.get_ref().is_finite()
                    && *v.get_ref() <= 10_000_000.0 =>
            {
                Some(*v.get_ref())
            }
            Some(v) => {
                return Err(bad(
                    "class.rate",
                    v.span(),
                    "requests per second, above 0 and at most 10,000,000".into(),
                ));
            }
        };
        let poisson = match &c.arrival {
            None => false,
            Some(v) => match v.get_ref().as_str() {
                "fixed" => false,
                "poisson" => true,
                other => {
                    return Err(bad(
                        "class.arrival",
                        v.span(),
                        format!("'{other}'; accepted: fixed, poisson"),
                    ));
                }
            },
        };
        if poisson && rate.is_none() {
            return Err(bad(
                "class.arrival",
                c.arrival.as_ref().expect("set").span(),
                "needs a rate".into(),
            ));
        }
        let size_value = size("class.size", &c.size)?;
        let think = c
            .think
            .as_ref()
            .map(|v| {
                units::parse_duration_range(v.get_ref())
                    .map_err(|e| bad("class.think", v.span(), e))
            })
            .transpose()?;
        let positive = |key: &str, v: &Option<Spanned<u32>>| -> Result<Option<usize>> {
            match v {
                None => Ok(None),
                Some(v) if (1..=1024).contains(v.get_ref()) => Ok(Some(*v.get_ref() as usize)),
                Some(v) => Err(bad(key, v.span(), "from 1 to 1024".into())),
            }
        };
        let mut limits = Limits::default();
        if let Some(l) = &c.limits {
            for (stat, v) in [
                ("mean", &l.mean),
                ("p50", &l.p50),
                ("p90", &l.p90),
                ("p95", &l.p95),
                ("p99", &l.p99),
            ] {
                if let Some(v) = v {
                    limits
                        .latency
                        .push((stat, duration(&format!("class.limits.{stat}"), v)?));
                }
            }
            limits.min_iops = l.min_iops.as_ref().map(|v| *v.get_ref());
            limits.min_mib_per_s = l.min_mib_per_s.as_ref().map(|v| *v.get_ref());
        }
        job.classes.push(ClassSpec {
            name: c
                .name
                .clone()
                .unwrap_or_else(|| format!("class {} ({})", i + 1, event.name())),
            event,
            size: size_value,
            sessions,
            submission,
            rate,
            poisson,
            think,
            batch: positive("class.batch", &c.batch)?,
            depth: positive("class.depth", &c.depth)?,
            limits,
        });
    }
    Ok(job)
}

/// The one class a classic test run is (`--save-job`, `--rate`).
pub fn classic_class(cfg: &crate::config::RunConfig) -> Result<ClassSpec> {
    use crate::workload::Test;
    let (event, size) = match (cfg.test, cfg.submission) {
        (Test::ReadIops, Submission::Sync) => (Event::DbFileSequentialRead, cfg.dataset.block_size),
        (Test::ReadIops, Submission::Async) => (Event::DbFileParallelRead, cfg.dataset.block_size),
        (Test::ReadMbps, Submission::Sync) => (Event::DbFileScatteredRead, cfg.multiblock_bytes()),
        (Test::ReadMbps, Submission::Async) => (Event::DirectPathRead, cfg.multiblock_bytes()),
        (Test::WriteIops, _) => (Event::DbFileParallelWrite, cfg.dataset.block_size),
        (Test::WriteMbps, _) => (Event::DirectPathWrite, cfg.multiblock_bytes()),
        (Test::Job, _) => {
            return Err(Error::usage(
                "--save-job with --job: the job file is already there",
            ));
        }
        (t, _) => {
            return Err(Error::usage(format!(
                "the {} test runs background threads (LGWR, DBWR) or temp files that a job class cannot express yet (--save-job and --rate take read-iops, read-mbps, write-iops, write-mbps)",
                t.name()
            )));
        }
    };
    Ok(ClassSpec {
        name: cfg.test.name().into(),
        event,
        size,
        sessions: cfg.sessions,
        submission: cfg.submission,
        rate: None,
        poisson: false,
        think: None,
        batch: Some(cfg.batch),
        depth: Some(cfg.depth),
        limits: Limits::default(),
    })
}

/// The job file equivalent to a classic test run from the command line (`--save-job`).
pub fn equivalent(cfg: &crate::config::RunConfig) -> Result<String> {
    let c = match cfg.classes.as_slice() {
        [] => classic_class(cfg)?,
        [one] if cfg.job.is_none() => one.clone(),
        _ => {
            return Err(Error::usage(
                "--save-job with --job: the job file is already there",
            ));
        }
    };
    let d = &cfg.dataset;
    let mut o = String::new();
    o.push_str(&format!(
        "# Equivalent of `dbio run {}`\n\n",
        cfg.test.name()
    ));
    o.push_str(&format!(
        "[dataset]\ntarget = {:?}\nsize = \"{}\"\nblock_size = \"{}\"\nfiles = {}\n\n",
        d.target.display().to_string(),
        units::size_label(d.size),
        units::size_label(d.block_size),
        d.files
    ));
    o.push_str(&format!(
        "[run]\nduration = \"{}\"\nwarmup = \"{}\"\nio_mode = \"{}\"\nengine = \"{}\"\nseed = {}\n\n",
        units::duration_label(cfg.duration),
        units::duration_label(cfg.warmup),
        cfg.io_mode.name(),
        format!("{:?}", cfg.engine).to_lowercase(),
        cfg.seed
    ));
    o.push_str(&format!(
        "[[class]]\nname = \"{}\"\nevent = \"{}\"\nsize = \"{}\"\nsessions = {}\nsubmission = \"{}\"\nbatch = {}\ndepth = {}\n",
        c.name,
        c.event.name(),
        units::size_label(c.size),
        c.sessions,
        c.submission.name(),
        c.batch.unwrap_or(cfg.batch),
        c.depth.unwrap_or(cfg.depth)
    ));
    if let Some(rate) = c.rate {
        o.push_str(&format!(
            "rate = {rate}\narrival = \"{}\"\n",
            if c.poisson { "poisson" } else { "fixed" }
        ));
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[dataset]
size = "64M"
block_size = "16K"

[run]
duration = "2s"

[[class]]
name = "reads"
event = "db file sequential read"
size = "16K"
sessions = 2
rate = 100
arrival = "poisson"
[class.limits]
p99 = "10ms"
min_iops = 90

[[class]]
event = "direct path read"
size = "784K"
"#;

    #[test]
    fn a_job_file_reads_into_classes() {
        let j = parse(GOOD, "job.toml").unwrap();
        assert_eq!(j.size, Some(64 << 20));
        assert_eq!(j.block_size, Some(16 << 10));
        assert_eq!(j.duration, Some(Duration::from_secs(2)));
        assert_eq!(j.classes.len(), 2);
        let c = &j.classes[0];
        assert_eq!(
            (c.event, c.size, c.sessions, c.rate, c.poisson),
            (Event::DbFileSequentialRead, 16 << 10, 2, Some(100.0), true)
        );
        assert_eq!(c.submission, Submission::Sync);
        assert_eq!(c.limits.latency, vec![("p99", Duration::from_millis(10))]);
        assert_eq!(c.limits.min_iops, Some(90.0));
        assert_eq!(j.classes[1].submission, Submission::Async);
        assert_eq!(j.classes[1].name, "class 2 (direct path read)");
    }

    #[test]
    fn unknown_keys_and_bad_values_name_the_key_and_line() {
        let e = parse(
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\nsesions = 2\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("sesions") && e.contains("line 4"), "{e}");
        let e = parse(
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8Q\"\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("class.size") && e.contains("line 3"), "{e}");
        let e = parse(
            "[[class]]\nevent = \"log file sync\"\nsize = \"8K\"\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("class.event") && e.contains("line 2") && e.contains("direct path read"),
            "{e}"
        );
        let e = parse("[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\nsubmission = \"async\"\n", "j.toml").unwrap_err().to_string();
        assert!(e.contains("sync by definition"), "{e}");
        let e = parse("[run]\nduration = \"2s\"\n", "j.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no [[class]]"), "{e}");
        let e = parse(
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\nrate = -5\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("class.rate") && e.contains("line 4"), "{e}");
    }
}
