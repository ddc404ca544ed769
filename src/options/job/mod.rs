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

use crate::error::{Error, Result};
use crate::units;

use crate::workload::Test;
use crate::workload::spec::{ClassSource, ClassSpec};

mod class;
pub mod write;

use class::{check_values, parse_class, second_log_writer};

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

/// The most a job file may hold: far more than any job needs (a job is a page of TOML),
/// little enough to read and check at once.
pub const MAX_JOB_BYTES: u64 = 1 << 20;

/// Reads a job file or sizing plan the user named (`label` names it in messages, `what`
/// says what it should be): a regular file of at most [`MAX_JOB_BYTES`], read bounded
/// whatever its size claims ([`crate::safety::input::read_input`]), in UTF-8.
pub(crate) fn read_toml_file(path: &Path, label: &str, what: &str) -> Result<String> {
    let bytes = crate::safety::input::read_input(path, MAX_JOB_BYTES, None)
        .map_err(|e| e.into_error(label, what))?;
    String::from_utf8(bytes).map_err(|_| Error::usage(format!("{label}: not a text (UTF-8) file")))
}

/// Reads and checks a job file.
pub fn load(path: &Path) -> Result<Job> {
    let label = format!("--job {}", path.shown());
    let text = read_toml_file(path, &label, "a job file")?;
    parse(&text, &path.shown().to_string())
}

/// The line (from 1) of byte `offset` of a TOML file's `text` (job files, sizing plans).
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    Lines::new(text).line_of(offset)
}

/// Where each line of a text starts: the line of any byte offset by a binary search, so
/// that naming the line of every key of a file costs no rescan of the text before it.
pub(crate) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Lines { starts }
    }

    /// The line (from 1) of byte `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset)
    }
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
    let lines = Lines::new(text);
    let at =
        |span: std::ops::Range<usize>| format!("{origin} (line {})", lines.line_of(span.start));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Submission;
    use crate::workload::Event;
    use crate::workload::sizes::RequestSizes;
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

    #[test]
    fn lines_are_found_without_rescanning_the_text() {
        let text = "a\nbb\n\nccc";
        let lines = Lines::new(text);
        for (offset, line) in [
            (0, 1),
            (1, 1),
            (2, 2),
            (4, 2),
            (5, 3),
            (6, 4),
            (9, 4),
            (99, 4),
        ] {
            assert_eq!(lines.line_of(offset), line, "offset {offset}");
            assert_eq!(line_of(text, offset), line, "offset {offset}");
        }
        // A job file of thousands of classes (each one's lines named): read at once.
        let many = "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n".repeat(10_000);
        let j = parse(&many, "many.toml").unwrap();
        assert_eq!(j.classes.len(), 10_000);
        let last = j.classes[9_999].source.as_ref().unwrap();
        assert_eq!(last.at, "many.toml (line 29999)");
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
                    "group-commit" => "1.5".into(),
                    "think" => "\"1ms\"".into(),
                    "submission" | "lgwr-submission" => "\"sync\"".into(),
                    "hosts" => "\"db1,db2\"".into(),
                    "steady-state" => "\"iops:20:10\"".into(),
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
