//! The values of `dbio sweep --param NAME=V1,V2,...`: which option is swept and over what,
//! each value checked as `dbio run --NAME VALUE` checks it (`scheduler` and `fs`, which are
//! no option of a run, by their own rules), when the command line is read.

use serde::{Deserialize, Serialize};

use super::RunArgs;
use super::Source;
use super::fs_spec;
use crate::engine::{EngineChoice, IoMode};
use crate::units::{Shown, size_label};
use crate::workload::span::Span;

/// A parameter a sweep can vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Param {
    Sessions,
    BlockSize,
    TempIo,
    Depth,
    Batch,
    /// Requests per second, open loop.
    Rate,
    /// The active surface (`--span`); values in parts per million of each data file.
    Span,
    /// Open flags and submission (`--io-mode`), like the database's filesystemio_options.
    IoMode,
    /// How asynchronous I/O is submitted (`--engine`).
    Engine,
    /// InnoDB's doublewrite on or off (`--doublewrite`, with `--like innodb`).
    Doublewrite,
    /// The block I/O scheduler of the disks under the data set (not a `dbio run` option:
    /// the sweep writes it to sysfs before each point and puts the original back).
    Scheduler,
    /// The file system the data set lives on, made on `--device` for each point (not a
    /// `dbio run` option either), with its mount options: `ext4:data=writeback`.
    Fs,
}

/// One value of a swept parameter: a number (sessions, sizes, rates, spans in parts per
/// million) or a word (an io mode, an engine). In `sweep.json` a number stays a number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Number(u64),
    Word(String),
}

impl Param {
    pub const ALL: [Param; 12] = [
        Param::Sessions,
        Param::BlockSize,
        Param::TempIo,
        Param::Depth,
        Param::Batch,
        Param::Rate,
        Param::Span,
        Param::IoMode,
        Param::Engine,
        Param::Doublewrite,
        Param::Scheduler,
        Param::Fs,
    ];

    /// The name on the command line, which is also the `dbio run` option it sets.
    pub fn name(self) -> &'static str {
        match self {
            Param::Sessions => "sessions",
            Param::BlockSize => "block-size",
            Param::TempIo => "temp-io",
            Param::Depth => "depth",
            Param::Batch => "batch",
            Param::Rate => "rate",
            Param::Span => "span",
            Param::IoMode => "io-mode",
            Param::Engine => "engine",
            Param::Doublewrite => "doublewrite",
            Param::Scheduler => "scheduler",
            Param::Fs => "fs",
        }
    }

    fn is_size(self) -> bool {
        matches!(self, Param::BlockSize | Param::TempIo)
    }

    /// One value, checked as `dbio run --NAME VALUE` would check it.
    fn parse_value(self, text: &str) -> Result<Value, String> {
        // The parsers of the options swept (a rate is a whole number of requests here).
        let count = |max: u64| super::parse::count(text, 1, max);
        let word = |v: String| Value::Word(v);
        match self {
            Param::Sessions => count(65536).map(Value::Number),
            Param::Depth | Param::Batch => count(4096).map(Value::Number),
            Param::Rate => count(10_000_000).map(Value::Number),
            Param::BlockSize => crate::options::block_size(text).map(Value::Number),
            Param::TempIo => crate::options::temp_io(text).map(Value::Number),
            Param::Span => Span::parse(text).map(|s| Value::Number(u64::from(s.ppm()))),
            Param::IoMode => IoMode::parse(text).map(|m| word(m.name().into())),
            Param::Engine => EngineChoice::parse(text).and_then(|e| match e {
                EngineChoice::Auto => Err(
                    "auto is whichever of the others the system offers; name the engines to compare (sync, aio, uring)".into(),
                ),
                e => Ok(word(e.name().into())),
            }),
            Param::Scheduler => scheduler_name(text).map(word),
            Param::Doublewrite => match text.trim() {
                "on" | "off" => Ok(word(text.trim().into())),
                _ => Err("accepted: on, off".into()),
            },
            Param::Fs => fs_spec::parse(text).map(|_| word(text.to_string())),
        }
        .map_err(|e| format!("{}={text}: {e}", self.name()))
    }

    /// A value as people write it: `4`, `8K`, `setall`.
    pub fn label(self, v: &Value) -> String {
        let n = match v {
            Value::Word(w) => return w.clone(),
            Value::Number(n) => *n,
        };
        if self.is_size() {
            size_label(n)
        } else if self == Param::Span {
            Span::from_ppm(n as u32).label()
        } else {
            n.to_string()
        }
    }

    /// A value for sweep.csv: spans as the fraction of each file (0.25), words as they are.
    pub fn csv_value(self, v: &Value) -> String {
        match (self, v) {
            (_, Value::Word(w)) => w.clone(),
            (Param::Span, Value::Number(n)) => Span::from_ppm(*n as u32).fraction().to_string(),
            (_, Value::Number(n)) => n.to_string(),
        }
    }

    /// Sets the value in the arguments of one point through the option's own definition,
    /// as swept (which counts as typed): it wins over a job file, and what a typed option
    /// may not be combined with is refused.
    pub fn apply(self, a: &mut RunArgs, v: &Value) {
        if matches!(self, Param::Scheduler | Param::Fs) {
            return; // set up before the point runs, not an option of the run
        }
        // The option's own text: what sweep.csv shows.
        a.set(self.name(), &self.csv_value(v), Source::Swept)
            .expect("a swept value was checked when the sweep was parsed");
    }
}

/// `--param NAME=V1,V2,...`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepParam {
    pub param: Param,
    pub values: Vec<Value>,
}

fn accepted_names() -> String {
    Param::ALL.map(Param::name).join(", ")
}

/// Parses `NAME=V1,V2,...` (clap value parser of `--param`).
pub fn parse_param(text: &str) -> Result<SweepParam, String> {
    let Some((name, list)) = text.split_once('=') else {
        return Err(format!(
            "expected NAME=V1,V2,... with NAME one of {}, e.g. sessions=1,2,4,8",
            accepted_names()
        ));
    };
    let name = name.trim();
    let Some(param) = Param::ALL.into_iter().find(|p| p.name() == name) else {
        return Err(format!(
            "unknown parameter '{name}': accepted names are {}",
            accepted_names()
        ));
    };
    let mut values = Vec::new();
    for v in list.split(',').map(str::trim) {
        let v = param.parse_value(v)?;
        if values.contains(&v) {
            return Err(format!(
                "{name}={} is listed twice; give each value once",
                param.label(&v)
            ));
        }
        values.push(v);
    }
    Ok(SweepParam { param, values })
}

/// A scheduler's name as sysfs lists them (`mq-deadline`): a short word of lowercase
/// letters, digits, `-` and `_`.
pub fn scheduler_name(text: &str) -> Result<String, String> {
    if !text.is_empty()
        && text.len() <= 32
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        Ok(text.to_string())
    } else {
        Err(format!(
            "'{}' is not a scheduler name (none, mq-deadline, bfq, kyber, ...)",
            text.shown()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(v: &[u64]) -> Vec<Value> {
        v.iter().copied().map(Value::Number).collect()
    }

    #[test]
    fn params_parse_like_run_options() {
        let p = parse_param("sessions=1,2,4").unwrap();
        assert_eq!(p.param, Param::Sessions);
        assert_eq!(p.values, nums(&[1, 2, 4]));
        let p = parse_param("block-size=4K, 8K,16K").unwrap();
        assert_eq!(p.values, nums(&[4096, 8192, 16384]));
        assert_eq!(p.param.label(&Value::Number(8192)), "8K");
        assert!(parse_param("temp-io=48K,1M").is_ok());
        let e = parse_param("bogus=1").unwrap_err();
        assert!(
            e.contains("sessions, block-size, temp-io, depth, batch"),
            "{e}"
        );
        let s = parse_param("span=25%,0.5,100%").unwrap();
        assert_eq!(s.values, nums(&[250_000, 500_000, 1_000_000]));
        assert_eq!(s.param.label(&Value::Number(250_000)), "25%");
        assert!(parse_param("span=0").unwrap_err().contains("span=0"));
        assert!(parse_param("span=25%,0.25").unwrap_err().contains("twice"));
        let r = parse_param("rate=100,2000").unwrap();
        assert_eq!((r.param, r.values), (Param::Rate, nums(&[100, 2000])));
        assert!(parse_param("sessions").is_err());
        assert!(
            parse_param("sessions=0")
                .unwrap_err()
                .contains("sessions=0")
        );
        assert!(
            parse_param("block-size=3K")
                .unwrap_err()
                .contains("power of two")
        );
        assert!(parse_param("depth=2,2").unwrap_err().contains("twice"));
        assert!(parse_param("batch=").is_err());
    }

    #[test]
    fn words_parse_like_run_options() {
        let words = |v: &[&str]| {
            v.iter()
                .map(|w| Value::Word(w.to_string()))
                .collect::<Vec<_>>()
        };
        let m = parse_param("io-mode=none, directio,asynch,setall").unwrap();
        assert_eq!(m.param, Param::IoMode);
        assert_eq!(m.values, words(&["none", "directio", "asynch", "setall"]));
        assert_eq!(m.param.label(&m.values[1]), "directio");
        assert_eq!(m.param.csv_value(&m.values[3]), "setall");
        let e = parse_param("engine=sync,aio,uring,null").unwrap();
        assert_eq!(e.values, words(&["sync", "aio", "uring", "null"]));
        assert!(
            parse_param("io-mode=fast")
                .unwrap_err()
                .starts_with("io-mode=fast: ")
        );
        assert!(
            parse_param("engine=auto")
                .unwrap_err()
                .contains("name the engines")
        );
        assert!(
            parse_param("engine=sync,sync")
                .unwrap_err()
                .contains("twice")
        );
        // In sweep.json a number stays a number and a word is a string.
        let json = serde_json::to_string(&vec![Value::Number(8), Value::Word("aio".into())]);
        assert_eq!(json.unwrap(), r#"[8,"aio"]"#);
    }
}
