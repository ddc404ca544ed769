//! Job files (TOML): what the database needs per I/O class, generated exactly and checked
//! against limits. `dbio run --job FILE`:
//!
//! ```toml
//! [dataset]                 # target, size, block_size, files, fill, span, verify
//! [run]                     # duration, warmup, io_mode, engine, seed, ash_hz
//! [redo]                    # block, files, file_size, sync (log file sync / parallel write classes)
//! [[class]]
//! name = "single-block reads"
//! event = "db file sequential read"
//! size = "16K"              # optional: one block, MBRC blocks, the redo or temp size by default;
//!                           # or weighted: { "16K" = 90, "32K" = 10 }; redo: "512..3000"
//! sessions = 4
//! rate = 406                # requests/s (commits/s for log file sync), optional: open loop
//! arrival = "poisson"       # or "fixed" (default)
//! [class.limits]
//! p99 = "10ms"              # mean, p50, p90, p95, p99 (500us, 1.5ms, ...); min_iops, min_mib_per_s
//! ```
//!
//! A job file may instead name a test (`[run] test = "oltp"`) with its options in the tables:
//! that is what `--save-job` writes for runs no set of classes expresses (oltp, temp,
//! --keep-inflight). Every key of `[dataset]`, `[run]`, `[redo]`, `[oltp]` and `[temp]` is a
//! run option of [`super::OPTIONS`], read by that option's own parser: options typed on the
//! command line win over the job file, and the job file wins over defaults. Unknown keys,
//! bad values and values the job would read and then ignore are errors naming the key and
//! its line.

use crate::units::Shown;
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::{RunArgs, Source};
use crate::engine::Submission;
use crate::error::{Error, Result};
use crate::units;
use crate::workload::sizes::{RequestSizes, WeightedSizes};
use crate::workload::spec::{ClassKind, ClassSource, ClassSpec, Limits};
use crate::workload::{Event, Test};

type Value = Spanned<toml::Value>;
type Table = BTreeMap<String, Spanned<Scalar>>;

/// A value of the option tables: TOML's, plus whole numbers above i64 (seeds are u64).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
enum Scalar {
    Int(i64),
    Big(u64),
    Float(f64),
    Bool(bool),
    Str(String),
    Other(toml::Value),
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobFile {
    #[serde(default)]
    dataset: Option<Table>,
    #[serde(default)]
    run: Option<Table>,
    #[serde(default)]
    redo: Option<Table>,
    #[serde(default)]
    oltp: Option<Table>,
    #[serde(default)]
    temp: Option<Table>,
    /// A run across many hosts: names, ssh, remote_dbio, push, shared.
    #[serde(default)]
    hosts: Option<Table>,
    /// What `dbio size` reads (`dbio job from-awr --requirements` writes it beside the
    /// classes, so one file is the job and the sizing plan's requirements); a run leaves it.
    #[serde(default, rename = "requirements")]
    _requirements: Option<toml::Value>,
    #[serde(default, rename = "device")]
    _device: Option<toml::Value>,
    #[serde(default, rename = "array")]
    _array: Option<toml::Value>,
    #[serde(default)]
    class: Vec<JobClass>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobClass {
    name: Option<String>,
    event: Spanned<String>,
    size: Option<Value>,
    sessions: Option<Spanned<u32>>,
    submission: Option<Spanned<String>>,
    rate: Option<Spanned<f64>>,
    arrival: Option<Spanned<String>>,
    think: Option<Spanned<String>>,
    batch: Option<Spanned<u32>>,
    depth: Option<Spanned<u32>>,
    /// Temp classes: bytes each session's temp file holds.
    spill: Option<Spanned<String>>,
    limits: Option<JobLimits>,
    /// What the database's own report said of this class (`dbio job from-awr` writes it):
    /// shown beside the verdict, never used to shape the I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    observed: Option<JobObserved>,
}

#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct JobObserved {
    /// The report (file name) and line.
    from: String,
    /// Requests (waits) per second there.
    rate: f64,
    mean: Option<String>,
    p99: Option<String>,
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

/// One option value a job file sets: the option, its value as text, and where it is.
#[derive(Debug, Clone)]
pub struct JobValue {
    pub option: &'static super::Opt,
    pub text: String,
    /// `FILE (line N)`.
    pub at: String,
}

/// What a job file says.
#[derive(Debug, Clone, Default)]
pub struct Job {
    /// A test run with options (`[run] test`) instead of classes.
    pub test: Option<Test>,
    /// The run options its tables set.
    pub values: Vec<JobValue>,
    pub classes: Vec<ClassSpec>,
    /// The job as JSON, embedded in result.json.
    pub json: serde_json::Value,
}

impl Job {
    /// Sets in `a` every option the job file sets that was not typed (typed values win).
    /// A value that would make dbio start a program (the `[hosts]` keys: ssh, the hosts it
    /// reaches, the binary it starts there, `push`) is refused unless the command line allows
    /// it: the same option typed (the job's value is then not used) or `--yes`. Job files are
    /// shared like documents, and a document runs nothing by itself.
    pub fn apply(&self, a: &mut RunArgs) -> Result<()> {
        for v in &self.values {
            if a.typed(v.option.name) {
                continue;
            }
            if let Some(what) = starts_program(v)
                && !a.yes
            {
                return Err(Error::usage(format!(
                    "{}: '{}' {what}, and a job file starts no program by itself: give {} on the command line, or add --yes to allow what the job file runs",
                    v.at,
                    v.option.key.unwrap_or(""),
                    v.option.flag()
                )));
            }
            a.set(v.option.name, &v.text, Source::Job(v.at.clone()))
                .map_err(|e| bad_at(&v.at, v.option.key.unwrap_or(""), e))?;
        }
        Ok(())
    }
}

/// What a job file's value would start, for the keys that start programs.
fn starts_program(v: &JobValue) -> Option<String> {
    let shown = units::echoed(&v.text);
    match v.option.key? {
        "hosts.names" => Some(format!(
            "would start the ssh command on this machine to reach {shown}"
        )),
        "hosts.ssh" => Some(format!("would run '{shown}' on this machine")),
        "hosts.remote_dbio" => Some(format!("would run '{shown}' on every host")),
        "hosts.push" if v.text == "true" => {
            Some("would copy this dbio binary to every host through ssh and run it there".into())
        }
        _ => None,
    }
}

/// Reads and checks a job file.
pub fn load(path: &Path) -> Result<Job> {
    let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::usage(format!("--job {}: no such file", path.shown()))
        }
        std::io::ErrorKind::InvalidData => {
            Error::usage(format!("--job {}: not a text (UTF-8) file", path.shown()))
        }
        _ => Error::io("cannot read the job file", path, &e),
    })?;
    parse(&text, &path.shown().to_string())
}

/// The line (from 1) of byte `offset` of a TOML file's `text` (job files, sizing plans).
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A TOML error of job file (or sizing plan) `text` as one line naming the key and its
/// line: the toml crate names neither (`invalid type: integer ... as i128` for a number out of range).
pub(crate) fn toml_error(text: &str, origin: &str, e: &toml::de::Error) -> Error {
    let msg = units::echoed(e.message().trim());
    let Some(span) = e.span() else {
        return Error::usage(format!("{origin}: {msg}"));
    };
    let line = line_of(text, span.start);
    // A table without a key it must have: the span is the table's.
    if let Some(field) = msg
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    {
        let end = text[span.start.min(text.len())..]
            .find('\n')
            .map_or(text.len(), |i| span.start + i);
        let key = match table_above(&text[..end]) {
            Some(t) => format!("{t}.{field}"),
            None => field.to_string(),
        };
        return Error::usage(format!("{origin} (line {line}): missing '{key}'"));
    }
    let why = if msg.contains("integer") && (msg.contains("i128") || msg.contains("expected u")) {
        format!("the number is out of range ({msg})")
    } else {
        msg
    };
    match key_at(text, span.start) {
        // The key itself is what is wrong: said as the toml crate says it.
        Some(_) if why.starts_with("unknown field") => {
            Error::usage(format!("{origin} (line {line}): {why}"))
        }
        Some(key) => Error::usage(format!(
            "{origin} (line {line}): invalid value for '{key}': {why}"
        )),
        None => Error::usage(format!("{origin} (line {line}): {why}")),
    }
}

/// The name of the last table header (`[table]`, `[[table]]`) in `text`.
fn table_above(text: &str) -> Option<&str> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim())
}

/// The key (`table.key`) set on the line of byte `offset`, from the text: the line's
/// `key =` and the table header above it.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("");
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') {
        return None;
    }
    Some(match table_above(&text[..start]) {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

fn bad_at(at: &str, key: &str, why: String) -> Error {
    Error::usage(format!("{at}: invalid value for '{key}': {why}"))
}

/// A value as an option's text: strings as they are, numbers and `true`. None for `false`
/// (a switch left off) — refused for options that are not switches.
fn as_text(v: &Scalar) -> std::result::Result<Option<String>, String> {
    match v {
        Scalar::Str(s) => Ok(Some(s.clone())),
        Scalar::Int(i) => Ok(Some(i.to_string())),
        Scalar::Big(u) => Ok(Some(u.to_string())),
        Scalar::Float(f) => Ok(Some(f.to_string())),
        Scalar::Bool(true) => Ok(Some("true".into())),
        Scalar::Bool(false) => Ok(None),
        Scalar::Other(_) => Err("expected a string, a number or true/false".into()),
    }
}

/// Parses job file `text` (`origin` names it in errors).
pub fn parse(text: &str, origin: &str) -> Result<Job> {
    let file: JobFile = toml::from_str(text).map_err(|e| toml_error(text, origin, &e))?;
    let at =
        |span: std::ops::Range<usize>| format!("{origin} (line {})", line_of(text, span.start));
    let bad = |key: &str, span: std::ops::Range<usize>, why: String| bad_at(&at(span), key, why);
    let mut job = Job {
        json: serde_json::to_value(&file).unwrap_or(serde_json::Value::Null),
        ..Job::default()
    };
    if let Some(v) = file.run.as_ref().and_then(|r| r.get("test")) {
        let name = match v.get_ref() {
            Scalar::Str(s) => s.as_str(),
            _ => "",
        };
        job.test = Some(
            Test::from_name(name)
                .filter(|t| Test::CLASSIC.contains(t))
                .ok_or_else(|| {
                    bad(
                        "run.test",
                        v.span(),
                        format!(
                            "'{name}'; accepted: {}",
                            Test::CLASSIC.map(Test::name).join(", ")
                        ),
                    )
                })?,
        );
    }
    let tables = [
        ("dataset", &file.dataset),
        ("run", &file.run),
        ("redo", &file.redo),
        ("oltp", &file.oltp),
        ("temp", &file.temp),
        ("hosts", &file.hosts),
    ];
    for (table, values) in tables {
        for (k, v) in values.iter().flatten() {
            if table == "run" && k == "test" {
                continue;
            }
            let key = format!("{table}.{k}");
            let Some(o) = super::by_key(&key) else {
                return Err(Error::usage(format!(
                    "{}: unknown key '{key}'",
                    at(v.span())
                )));
            };
            let text = match as_text(v.get_ref()).map_err(|e| bad(&key, v.span(), e))? {
                Some(t) => t,
                None if o.is_switch() => "false".into(),
                None => {
                    let flag = if o.help.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", o.flag())
                    };
                    return Err(bad(
                        &key,
                        v.span(),
                        format!("false is for switches; {key}{flag} takes a value"),
                    ));
                }
            };
            let mut scratch = RunArgs::defaults(None);
            (o.set)(&mut scratch, &text)
                .map_err(|e| bad(&key, v.span(), units::value_cut(e, &text)))?;
            job.values.push(JobValue {
                option: o,
                text,
                at: at(v.span()),
            });
        }
    }
    match (job.test, file.class.is_empty()) {
        (Some(_), false) => {
            return Err(Error::usage(format!(
                "{origin}: run.test and [[class]] entries exclude each other: a job runs either a test or its classes"
            )));
        }
        (None, true) => {
            return Err(Error::usage(format!(
                "{origin}: no [[class]]: a job needs at least one I/O class (or run.test)"
            )));
        }
        _ => {}
    }
    for (i, c) in file.class.iter().enumerate() {
        let mut class = parse_class(i, c, &bad)?;
        class.source = Some(ClassSource {
            at: at(c.event.span()),
            size_at: c.size.as_ref().map(|v| at(v.span())),
            spill_at: c.spill.as_ref().map(|v| at(v.span())),
            rate_at: c.rate.as_ref().map(|v| at(v.span())),
        });
        job.classes.push(class);
    }
    check_values(&job)?;
    if let Some(second) = second_log_writer(&job.classes) {
        return Err(bad(
            "class.event",
            file.class[second].event.span(),
            "a job has one log writer: either \"log file sync\" classes (commits; their LGWR's writes are reported as \"log file parallel write\") or one \"log file parallel write\" class (redo writes of a set size and rate)".into(),
        ));
    }
    Ok(job)
}

/// Whether a class of this event uses a value.
type EventTest = fn(Event) -> bool;

/// Values the job would read and then ignore are refused: a test's options beside classes,
/// options the named test does not use, `[redo]`/`[temp]` keys no class uses.
fn check_values(job: &Job) -> Result<()> {
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
fn second_log_writer(classes: &[ClassSpec]) -> Option<usize> {
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
fn parse_class(
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
            super::rate(&v.get_ref().to_string()).map_err(|e| bad("class.rate", v.span(), e))?,
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
            super::temp_io(&s.to_string())
                .map_err(|e| format!("{}: temp requests {e}", units::size_label(s)))?;
        }
    }
    Ok(sizes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
        let mut a = RunArgs::defaults(None);
        j.apply(&mut a).unwrap();
        assert_eq!(a.size, Some(64 << 20));
        assert_eq!(a.block_size, 16 << 10);
        assert_eq!(a.duration, Duration::from_secs(2));
        assert_eq!(j.classes.len(), 2);
        let c = &j.classes[0];
        assert_eq!(
            (c.event, c.sizes, c.sessions, c.rate, c.poisson),
            (
                Event::DbFileSequentialRead,
                RequestSizes::Fixed(16 << 10),
                2,
                Some(100.0),
                true
            )
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
            "[[class]]\nevent = \"log file wait\"\nsize = \"8K\"\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("class.event") && e.contains("line 2") && e.contains("log file sync"),
            "{e}"
        );
        let e = parse(
            "[[class]]\nevent = \"free buffer waits\"\nsize = \"8K\"\n",
            "j.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("wait for DBWR") && e.contains("oltp"), "{e}");
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

    fn err(text: &str) -> String {
        parse(text, "j.toml").unwrap_err().to_string()
    }

    #[test]
    fn weighted_sizes_and_redo_ranges() {
        let j = parse(
            "[[class]]\nevent = \"direct path read\"\nsize = { \"1M\" = 80, \"256K\" = 20 }\n[[class]]\nevent = \"log file sync\"\nsize = \"512..3000\"\nsessions = 4\nrate = 500\n",
            "j.toml",
        )
        .unwrap();
        let scan = &j.classes[0].sizes;
        assert_eq!(scan.sizes(), vec![1 << 20, 256 << 10], "in the order given");
        assert_eq!(scan.label(), "1M 80% + 256K 20%");
        assert_eq!(
            j.classes[1].sizes,
            RequestSizes::Uniform { lo: 512, hi: 3000 }
        );
        assert_eq!(j.classes[1].submission, Submission::Sync);
        let e = err("[[class]]\nevent = \"direct path read\"\nsize = \"64K..1M\"\n");
        assert!(
            e.contains("class.size") && e.contains("line 3") && e.contains("redo"),
            "{e}"
        );
        let e = err("[[class]]\nevent = \"direct path read\"\nsize = { \"1M\" = 0 }\n");
        assert!(e.contains("class.size") && e.contains("above 0"), "{e}");
        let e = err("[[class]]\nevent = \"direct path read\"\nsize = 8192\n");
        assert!(e.contains("class.size") && e.contains("weighted"), "{e}");
        let e = err("[[class]]\nevent = \"direct path write temp\"\nsize = \"8K\"\n");
        assert!(e.contains("class.size") && e.contains("48K"), "{e}");
    }

    #[test]
    fn per_event_keys_are_checked() {
        let e =
            err("[[class]]\nevent = \"log file parallel write\"\nsize = \"16K\"\nsessions = 2\n");
        assert!(
            e.contains("class.sessions") && e.contains("sessions = 1"),
            "{e}"
        );
        let e = err(
            "[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\n[[class]]\nevent = \"log file parallel write\"\nsize = \"16K\"\n",
        );
        assert!(e.contains("one log writer"), "{e}");
        let e = err("[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\ndepth = 4\n");
        assert!(
            e.contains("class.depth") && e.contains("line 4") && e.contains("does not use"),
            "{e}"
        );
        let e = err("[[class]]\nevent = \"direct path read\"\nsize = \"1M\"\nspill = \"64M\"\n");
        assert!(e.contains("class.spill") && e.contains("temp"), "{e}");
        let e =
            err("[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\nsubmission = \"async\"\n");
        assert!(e.contains("sync by definition"), "{e}");
        let j = parse(
            "[[class]]\nevent = \"direct path read temp\"\nsize = \"256K\"\nspill = \"16M\"\n",
            "j.toml",
        )
        .unwrap();
        assert_eq!(j.classes[0].spill, Some(16 << 20));
    }

    #[test]
    fn a_test_with_its_options() {
        let j = parse(
            "[run]\ntest = \"oltp\"\nsessions = 4\nsubmission = \"sync\"\n[redo]\nper_commit = \"512..8K\"\nblock = \"4K\"\n[oltp]\nupdate_pct = 50\nasync_reads = true\ncache_size = \"64M\"\n",
            "j.toml",
        )
        .unwrap();
        assert_eq!(j.test, Some(Test::Oltp));
        let mut args = RunArgs::defaults(None);
        j.apply(&mut args).unwrap();
        assert_eq!(args.sessions, 4);
        assert!(args.sync);
        assert_eq!(args.redo_per_commit, units::SizeRange { lo: 512, hi: 8192 });
        assert_eq!(args.redo_block, 4096);
        assert_eq!(args.update_pct, 50);
        assert!(args.async_reads);
        assert_eq!(args.cache_size, Some(64 << 20));
        assert_eq!(
            args.source("sessions"),
            Source::Job("j.toml (line 3)".into())
        );
        // Typed values win over the job file's.
        let mut typed = RunArgs::defaults(None);
        typed.set("sessions", "2", Source::Typed).unwrap();
        j.apply(&mut typed).unwrap();
        assert_eq!(typed.sessions, 2);
        // Values are checked by the options' own parsers, named by key and line.
        let e = err("[run]\ntest = \"redo\"\n[redo]\nblock = \"1K\"\n");
        assert!(
            e.contains("redo.block") && e.contains("line 4") && e.contains("512 or 4K"),
            "{e}"
        );
        let e = err("[run]\ntest = \"oltp\"\n[oltp]\nupdate_pct = 101\n");
        assert!(e.contains("oltp.update_pct") && e.contains("line 4"), "{e}");
        let e = err("[run]\ntest = \"oltp\"\n[oltp]\nupdate = 10\n");
        assert!(e.contains("oltp.update") && e.contains("line 4"), "{e}");
        let e = err("[run]\ntest = \"sort\"\n");
        assert!(e.contains("run.test") && e.contains("oltp"), "{e}");
        // What the named test does not use is refused, not ignored.
        let e = err("[run]\ntest = \"read-iops\"\n[oltp]\nwork_unit = 4\n");
        assert!(
            e.contains("oltp.work_unit") && e.contains("does not use"),
            "{e}"
        );
        // Options of a test do not go with classes, nor a test with classes.
        let e = err(
            "[oltp]\nupdate_pct = 10\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
        );
        assert!(
            e.contains("oltp.update_pct") && e.contains("run.test"),
            "{e}"
        );
        let e = err(
            "[run]\ntest = \"redo\"\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
        );
        assert!(e.contains("exclude each other"), "{e}");
        let e = err(
            "[run]\nsubmission = \"sync\"\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
        );
        assert!(e.contains("run.submission"), "{e}");
        // Redo log options do go with classes.
        let j = parse(
            "[redo]\nblock = \"4K\"\nfile_size = \"64M\"\n[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\n",
            "j.toml",
        )
        .unwrap();
        assert_eq!(j.values.len(), 2);
    }

    #[test]
    fn every_key_of_the_option_table_parses_in_a_job_file() {
        // Each key with a value of the table, for a test it applies to (or beside classes).
        let sample = |o: &super::super::Opt| -> String {
            match (o.default, o.is_switch()) {
                (_, true) => "true".into(),
                (Some(d), _) => format!("{d:?}"),
                (None, _) => match o.name {
                    "size" | "hotspot-size" | "cache-size" => "\"64M\"".into(),
                    "mbrc" | "seed" | "lgwr-cpu" | "noise-cpu" => "0".into(),
                    "think" => "\"1ms\"".into(),
                    "submission" | "lgwr-submission" => "\"sync\"".into(),
                    "hosts" => "\"db1,db2\"".into(),
                    other => panic!("no sample value for {other}"),
                },
            }
        };
        let mut keys = 0;
        for o in super::super::OPTIONS.iter().filter(|o| o.key.is_some()) {
            let (table, key) = o.key.unwrap().split_once('.').unwrap();
            let value = match o.name {
                "mbrc" => "16".to_string(),
                _ => sample(o),
            };
            let test = Test::CLASSIC
                .into_iter()
                .find(|t| o.applies.to(*t))
                .expect("an option applies to some test");
            let text = if table == "run" {
                format!("[run]\ntest = \"{}\"\n{key} = {value}\n", test.name())
            } else {
                format!(
                    "[run]\ntest = \"{}\"\n[{table}]\n{key} = {value}\n",
                    test.name()
                )
            };
            let j = parse(&text, "j.toml").unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(j.values.len(), 1, "{text}");
            let mut a = RunArgs::defaults(None);
            // The [hosts] keys that start programs need --yes (or the option typed).
            if table == "hosts" && key != "shared" {
                let e = j.apply(&mut a).expect_err(&text).to_string();
                assert!(e.contains(o.key.unwrap()) && e.contains("--yes"), "{e}");
                a.yes = true;
            }
            j.apply(&mut a).unwrap();
            assert!(matches!(a.source(o.name), Source::Job(_)), "{text}");
            keys += 1;
        }
        assert!(keys >= 35, "{keys} keys");
    }
}
