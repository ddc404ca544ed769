//! The classes of a job file (`[[class]]`: event, sizes, sessions, rate, limits) and the
//! checks of the job as a whole: values it would read and then ignore, and a second log
//! writer.

use super::{Job, JobClass, Value, bad_at};
use crate::engine::Submission;
use crate::error::{Error, Result};
use crate::units;
use crate::workload::Event;
use crate::workload::sizes::{RequestSizes, WeightedSizes};
use crate::workload::spec::{ClassKind, ClassSpec, Limits};
use toml::Spanned;

/// Whether a class of this event uses a value.
type EventTest = fn(Event) -> bool;

/// Values the job would read and then ignore are refused: a test's options beside classes,
/// options the named test does not use, `[redo]`/`[temp]` keys no class uses.
pub(super) fn check_values(job: &Job) -> Result<()> {
    for v in &job.values {
        let o = v.option;
        let key = o.key.expect("set from a key");
        match job.test {
            Some(t) if !o.applies.to(t) => {
                return Err(bad_at(
                    &v.at,
                    key,
                    format!("the {} test does not use it", t.name()),
                ));
            }
            Some(_) => {}
            None if !o.with_classes => {
                return Err(bad_at(
                    &v.at,
                    key,
                    "goes with run.test (a test with its options); [[class]] entries set this per class".into(),
                ));
            }
            None => {
                // Beside classes, [redo] and [temp] shape only redo and temp classes (the
                // noise thread runs beside any run: it competes with whatever runs there).
                let uses: Option<(EventTest, &str)> = match key {
                    "redo.noise_cpu" => None,
                    "redo.submission" => Some((
                        |e| e == Event::LogFileSync,
                        "\"log file sync\" (a \"log file parallel write\" class sets its own submission)",
                    )),
                    k if k.starts_with("redo.") => Some((
                        Event::is_redo,
                        "redo (log file sync, log file parallel write)",
                    )),
                    k if k.starts_with("temp.") => Some((
                        Event::is_temp,
                        "temp (direct path write temp, direct path read temp)",
                    )),
                    _ => None,
                };
                if let Some((uses, what)) = uses
                    && !job.classes.iter().any(|c| uses(c.event))
                {
                    return Err(bad_at(
                        &v.at,
                        key,
                        format!("no class of this job issues {what}, so nothing would use it"),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// A job has one log writer: committing sessions' LGWR, or one class writing redo at a set
/// size and rate — not both. The index of the first class that makes a second one.
pub(super) fn second_log_writer(classes: &[ClassSpec]) -> Option<usize> {
    let mut writer = None;
    for (i, c) in classes.iter().enumerate() {
        let kind = match c.event {
            Event::LogFileParallelWrite => 1,
            Event::LogFileSync => 2,
            _ => continue,
        };
        match writer {
            None => writer = Some(kind),
            // Committing classes share their LGWR; anything else is a second writer.
            Some(2) if kind == 2 => {}
            Some(_) => return Some(i),
        }
    }
    None
}

/// Parses one `[[class]]` (the `i`th).
pub(super) fn parse_class(
    i: usize,
    c: &JobClass,
    bad: &dyn Fn(&str, std::ops::Range<usize>, String) -> Error,
) -> Result<ClassSpec> {
    let event = Event::from_name(c.event.get_ref())
        .filter(|e| e.facts().class)
        .ok_or_else(|| {
            let why = if c.event.get_ref() == Event::FreeBufferWaits.name() {
                "\"free buffer waits\" is a wait for DBWR to clean a buffer, not I/O a class issues; the oltp test with --cache-size shows it".to_string()
            } else {
                let names: Vec<&str> = Event::class_events().map(|e| e.name()).collect();
                format!("'{}'; accepted: {}", c.event.get_ref(), names.join(", "))
            };
            bad("class.event", c.event.span(), why)
        })?;
    let facts = event.facts();
    let natural = event.fixed_submission().unwrap_or(Submission::Async);
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
            if event.fixed_submission().is_some_and(|f| f != s) {
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
        Some(v) if event == Event::LogFileParallelWrite && *v.get_ref() != 1 => {
            return Err(bad(
                "class.sessions",
                v.span(),
                "\"log file parallel write\" is the one log writer's: sessions = 1".into(),
            ));
        }
        Some(v) if (1..=4096).contains(v.get_ref()) => *v.get_ref() as usize,
        Some(v) => return Err(bad("class.sessions", v.span(), "from 1 to 4096".into())),
    };
    let rate = match &c.rate {
        None => None,
        Some(v) => Some(
            crate::options::rate(&v.get_ref().to_string())
                .map_err(|e| bad("class.rate", v.span(), e))?,
        ),
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
    let sizes = match &c.size {
        Some(v) => Some(class_sizes(event, v).map_err(|why| bad("class.size", v.span(), why))?),
        None => None,
    };
    let think = c
        .think
        .as_ref()
        .map(|v| {
            units::parse_duration_range(v.get_ref()).map_err(|e| bad("class.think", v.span(), e))
        })
        .transpose()?;
    // An open loop's schedule sets when requests start: a think time or a queue depth
    // beside it would be ignored, so it is refused instead.
    if rate.is_some() {
        if let Some(v) = &c.think {
            return Err(bad(
                "class.think",
                v.span(),
                "a class with a rate starts each request on its schedule; think is for classes without a rate (closed loop)".into(),
            ));
        }
        if let Some(v) = &c.depth {
            return Err(bad(
                "class.depth",
                v.span(),
                "a class with a rate issues one request per arrival and its sessions set how many can be in flight; leave out depth, or the rate".into(),
            ));
        }
    }
    let takes = |key: &str,
                 v: &Option<Spanned<u32>>,
                 uses: bool,
                 which: fn(&crate::workload::event::Facts) -> bool|
     -> Result<Option<usize>> {
        match v {
            None => Ok(None),
            Some(v) if !uses => Err(bad(
                key,
                v.span(),
                format!(
                    "\"{}\" does not use it (only {})",
                    event.name(),
                    crate::workload::event::FACTS
                        .iter()
                        .filter(|f| which(f))
                        .map(|f| f.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
            Some(v) if (1..=1024).contains(v.get_ref()) => Ok(Some(*v.get_ref() as usize)),
            Some(v) => Err(bad(key, v.span(), "from 1 to 1024".into())),
        }
    };
    let batch = takes("class.batch", &c.batch, facts.batch, |f| f.batch)?;
    let depth = takes("class.depth", &c.depth, facts.depth, |f| f.depth)?;
    let spill = match &c.spill {
        None => None,
        Some(v) if !event.is_temp() => {
            return Err(bad(
                "class.spill",
                v.span(),
                "only temp classes (direct path write temp, direct path read temp) have a spill"
                    .into(),
            ));
        }
        Some(v) => {
            let bytes =
                units::parse_size(v.get_ref()).map_err(|e| bad("class.spill", v.span(), e))?;
            if let Some(s) = &sizes
                && bytes < s.max()
            {
                return Err(bad(
                    "class.spill",
                    v.span(),
                    format!("smaller than one request ({})", units::size_label(s.max())),
                ));
            }
            Some(bytes)
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
                let key = format!("class.limits.{stat}");
                let d = units::parse_latency(v.get_ref()).map_err(|e| bad(&key, v.span(), e))?;
                limits.latency.push((stat, d));
            }
        }
        let minimum = |key: &str, v: &Option<Spanned<f64>>| -> Result<Option<f64>> {
            match v {
                None => Ok(None),
                Some(v) if v.get_ref().is_finite() && *v.get_ref() >= 0.0 => Ok(Some(*v.get_ref())),
                Some(v) => Err(bad(key, v.span(), "a number, 0 or more".into())),
            }
        };
        limits.min_iops = minimum("class.limits.min_iops", &l.min_iops)?;
        limits.min_mib_per_s = minimum("class.limits.min_mib_per_s", &l.min_mib_per_s)?;
        if let (false, Some(v)) = (facts.bandwidth_limit, &l.min_mib_per_s) {
            return Err(bad(
                "class.limits.min_mib_per_s",
                v.span(),
                "a commit's wait moves no bytes of its own (its redo is LGWR's write); limit commits per second with min_iops".into(),
            ));
        }
    }
    Ok(ClassSpec {
        name: c
            .name
            .clone()
            .unwrap_or_else(|| format!("class {} ({})", i + 1, event.name())),
        event,
        kind: ClassKind::Requests,
        sizes: sizes.unwrap_or(RequestSizes::Fixed(0)),
        default_size: sizes.is_none(),
        sessions,
        submission,
        rate,
        poisson,
        think,
        batch,
        depth,
        spill,
        limits,
        source: None,
    })
}

/// A class's `size`: `"16K"`, weighted `{ "1M" = 80, "256K" = 20 }`, or for redo a range
/// `"512..3000"`. Sizes that depend on the data set are checked with it.
fn class_sizes(event: Event, v: &Value) -> std::result::Result<RequestSizes, String> {
    let one = |text: &str| -> std::result::Result<u64, String> {
        let b = units::parse_size(text)?;
        if b == 0 {
            return Err("a size must be above 0".into());
        }
        if b > 64 << 20 {
            return Err(format!("{text}: at most 64M per request"));
        }
        Ok(b)
    };
    let sizes = match v.get_ref() {
        toml::Value::String(s) => match s.split_once("..") {
            None => RequestSizes::Fixed(one(s)?),
            Some(_) if !event.is_redo() => {
                return Err(format!(
                    "a range ('{s}') is for redo bytes (log file sync, log file parallel write); \"{}\" takes one size or weighted sizes, e.g. {{ \"1M\" = 80, \"256K\" = 20 }}",
                    event.name()
                ));
            }
            Some((lo, hi)) => {
                let (lo, hi) = (one(lo)?, one(hi)?);
                if lo > hi {
                    return Err(format!("'{s}': the range runs backwards; write LOW..HIGH"));
                }
                RequestSizes::Uniform { lo, hi }
            }
        },
        toml::Value::Table(t) => {
            let mut pairs = Vec::with_capacity(t.len());
            for (k, w) in t {
                let weight = match w {
                    toml::Value::Integer(i) => *i as f64,
                    toml::Value::Float(f) => *f,
                    _ => return Err(format!("the weight of '{k}' must be a number")),
                };
                pairs.push((one(k)?, weight));
            }
            RequestSizes::Weighted(WeightedSizes::new(&pairs)?)
        }
        _ => {
            return Err(
                "a size (\"16K\") or weighted sizes ({ \"1M\" = 80, \"256K\" = 20 })".into(),
            );
        }
    };
    if event.is_temp() {
        for s in sizes.sizes() {
            crate::options::temp_io(&s.to_string())
                .map_err(|e| format!("{}: temp requests {e}", units::size_label(s)))?;
        }
    }
    Ok(sizes)
}
