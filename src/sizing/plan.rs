//! The sizing plan (TOML), read and checked: every bad or missing value is one line naming
//! the key and its line, as job files do.
//!
//! ```toml
//! [requirements]
//! capacity = "10T"          # usable, growth included
//! growth = 2.0              # multiplies the performance requirements (today → tomorrow)
//! [[requirements.class]]
//! name = "multiblock reads"
//! event = "direct path read"
//! size = "764K"
//! peak_iops = 2000          # or peak_mib_per_s
//! p99 = "30ms"              # mean, p50, p90, p95, p99
//! [device]
//! name = "146GB 15K FC"
//! capacity = "146G"
//! raid = "raid1"            # none, raid1, raid10, raid5, raid6 (raid_group = devices per group)
//! iops = 167                # per device within the limits, or runs = [ids]
//! mib_per_s = 73
//! usable_surface = "33%"
//! [array]
//! name = "AMS1000"
//! max_mib_per_s = 750
//! max_devices = 450
//! spares = "10%"
//! ```

use crate::units::Shown;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::arith::Raid;
use crate::error::{Error, Result};
use crate::units;
use crate::workload::Event;
use crate::workload::span::Span;

type Value = Spanned<toml::Value>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    requirements: Option<Spanned<RequirementsTable>>,
    device: Option<Spanned<DeviceTable>>,
    array: Option<Spanned<ArrayTable>>,
    // A job file that carries the requirements (`dbio job from-awr --requirements`) is a
    // plan too: its run sections are the job's, not the sizing's.
    #[serde(default, rename = "dataset")]
    _dataset: Option<toml::Value>,
    #[serde(default, rename = "run")]
    _run: Option<toml::Value>,
    #[serde(default, rename = "redo")]
    _redo: Option<toml::Value>,
    #[serde(default, rename = "temp")]
    _temp: Option<toml::Value>,
    #[serde(default, rename = "oltp")]
    _oltp: Option<toml::Value>,
    #[serde(default, rename = "class")]
    _class: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequirementsTable {
    capacity: Option<Value>,
    growth: Option<Value>,
    #[serde(default)]
    class: Vec<ClassTable>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ClassTable {
    name: Option<String>,
    event: Spanned<String>,
    size: Option<Value>,
    peak_iops: Option<Value>,
    peak_mib_per_s: Option<Value>,
    mean: Option<Value>,
    p50: Option<Value>,
    p90: Option<Value>,
    p95: Option<Value>,
    p99: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceTable {
    name: Option<String>,
    capacity: Option<Value>,
    raid: Option<Value>,
    raid_group: Option<Value>,
    iops: Option<Value>,
    mib_per_s: Option<Value>,
    usable_surface: Option<Value>,
    runs: Option<Spanned<Vec<Value>>>,
    runs_devices: Option<Value>,
    runs_raid: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArrayTable {
    name: Option<String>,
    max_mib_per_s: Option<Value>,
    max_devices: Option<Value>,
    spares: Option<Value>,
}

/// One I/O class of the requirements: an event at its peak rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    pub name: String,
    pub event: Event,
    pub size_bytes: u64,
    pub peak_iops: f64,
    pub peak_mib_per_s: f64,
    /// (statistic, the most it may be): the latency the per-device figures must keep.
    pub limits: Vec<(&'static str, Duration)>,
}

/// The device as the plan gives it. Its capabilities come from the plan, or from `runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct DevicePlan {
    pub name: String,
    pub capacity_bytes: u64,
    pub raid: Raid,
    pub iops: Option<Keyed<f64>>,
    pub mib_per_s: Option<Keyed<f64>>,
    pub usable_surface: Option<Keyed<f64>>,
    pub runs: Option<Keyed<Vec<i64>>>,
    /// Devices under the target the runs were made on (default 1).
    pub runs_devices: u32,
    /// The RAID under the runs (default: none for one device, else the plan's `raid`).
    pub runs_raid: Raid,
    /// Where `[device]` starts: "FILE (line N)".
    pub at: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ArrayPlan {
    pub name: String,
    pub max_mib_per_s: f64,
    pub max_devices: u64,
    pub spares: f64,
}

/// A plan read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SizingPlan {
    pub origin: String,
    pub capacity_bytes: u64,
    pub growth: f64,
    pub classes: Vec<Class>,
    pub device: DevicePlan,
    pub array: ArrayPlan,
}

/// A value with where it was written ("FILE (line N)").
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed<T> {
    pub value: T,
    pub at: String,
}

/// Reads and checks the plan at `path`.
pub fn load(path: &Path) -> Result<SizingPlan> {
    let label = path.shown().to_string();
    let text = crate::options::job::read_toml_file(path, &label, "a sizing plan")?;
    parse(&text, &label)
}

/// A key the plan must have is missing from the table at `at` ("FILE (line N)").
pub fn missing(at: &str, key: &str, why: &str) -> Error {
    Error::usage(format!("{at}: missing '{key}': {why}"))
}

/// Reads values of a plan, each error naming its key and line.
struct Reader<'a> {
    lines: crate::options::job::Lines,
    origin: &'a str,
}

impl Reader<'_> {
    fn at(&self, span: Range<usize>) -> String {
        format!("{} (line {})", self.origin, self.lines.line_of(span.start))
    }

    fn bad(&self, key: &str, span: Range<usize>, why: impl std::fmt::Display) -> Error {
        Error::usage(format!(
            "{}: invalid value for '{key}': {why}",
            self.at(span)
        ))
    }

    /// A key the plan must have, missing from the table that starts at `table`.
    fn missing(&self, key: &str, table: Range<usize>, why: &str) -> Error {
        missing(&self.at(table), key, why)
    }

    /// The value of a key the plan must have, read by `read`.
    fn required<T>(
        &self,
        v: &Option<Value>,
        (key, table): (&str, Range<usize>),
        why: &str,
        read: impl Fn(&str, &Value) -> Result<T>,
    ) -> Result<T> {
        match v {
            Some(v) => read(key, v),
            None => Err(self.missing(key, table, why)),
        }
    }

    /// A number above 0 (and at most `max`).
    fn positive(&self, key: &str, v: &Value, max: f64) -> Result<f64> {
        let n = match v.get_ref() {
            toml::Value::Integer(i) => *i as f64,
            toml::Value::Float(f) => *f,
            _ => return Err(self.bad(key, v.span(), "expected a number")),
        };
        if !(n.is_finite() && n > 0.0 && n <= max) {
            return Err(self.bad(
                key,
                v.span(),
                format!("a number above 0 and at most {max:e}"),
            ));
        }
        Ok(n)
    }

    /// A whole number from 1 to `max`.
    fn count(&self, key: &str, v: &Value, max: i64) -> Result<u64> {
        match v.get_ref() {
            toml::Value::Integer(i) if (1..=max).contains(i) => Ok(*i as u64),
            _ => Err(self.bad(key, v.span(), format!("a whole number from 1 to {max}"))),
        }
    }

    fn string<'v>(&self, key: &str, v: &'v Value) -> Result<&'v str> {
        v.get_ref()
            .as_str()
            .ok_or_else(|| self.bad(key, v.span(), "expected a string"))
    }

    /// A size above 0: `"146G"`.
    fn size(&self, key: &str, v: &Value) -> Result<u64> {
        let s = self.string(key, v)?;
        match units::parse_size(s) {
            Ok(0) => Err(self.bad(key, v.span(), "must be above 0")),
            Ok(b) => Ok(b),
            Err(e) => Err(self.bad(key, v.span(), e)),
        }
    }

    /// A fraction: `"33%"` or `0.33`; 0 only when `zero` is allowed.
    fn fraction(&self, key: &str, v: &Value, zero: bool) -> Result<f64> {
        let text = match v.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            _ => {
                return Err(self.bad(key, v.span(), "a percentage (\"33%\") or a fraction (0.33)"));
            }
        };
        let t = text.trim();
        if zero && matches!(t.trim_end_matches('%').trim(), "0" | "0.0") {
            return Ok(0.0);
        }
        Span::parse(t).map(Span::fraction).map_err(|_| {
            let range = if zero {
                "from 0 to 100 %"
            } else {
                "above 0 and at most 100 %"
            };
            self.bad(
                key,
                v.span(),
                format!("'{t}': a percentage {range}, e.g. \"33%\", or a fraction (0.33)"),
            )
        })
    }
}

/// Parses plan `text` (`origin` names it in errors).
pub fn parse(text: &str, origin: &str) -> Result<SizingPlan> {
    let file: PlanFile =
        toml::from_str(text).map_err(|e| crate::options::job::toml_error(text, origin, &e))?;
    let r = Reader {
        lines: crate::options::job::Lines::new(text),
        origin,
    };
    let table =
        |name: &str, what: &str| Error::usage(format!("{origin}: no [{name}] table: {what}"));
    let req = file.requirements.as_ref().ok_or_else(|| {
        table(
            "requirements",
            "the plan starts from what the database needs (capacity and [[requirements.class]])",
        )
    })?;
    let dev = file.device.as_ref().ok_or_else(|| {
        table(
            "device",
            "the plan needs the device's capacity, RAID and capabilities (iops, mib_per_s or runs)",
        )
    })?;
    let arr = file.array.as_ref().ok_or_else(|| {
        table(
            "array",
            "the plan needs the array's max_mib_per_s and max_devices",
        )
    })?;
    let (req_span, req) = (req.span(), req.get_ref());
    let capacity_bytes = r.required(
        &req.capacity,
        ("requirements.capacity", req_span.clone()),
        "the usable capacity needed, growth included, e.g. \"10T\"",
        |k, v| r.size(k, v),
    )?;
    let growth = match &req.growth {
        Some(v) => r.positive("requirements.growth", v, 1e6)?,
        None => 1.0,
    };
    if req.class.is_empty() {
        return Err(r.missing(
            "requirements.class",
            req_span,
            "no [[requirements.class]]: the devices are sized for the database's I/O classes (event, size, peak_iops)",
        ));
    }
    let classes = req
        .class
        .iter()
        .enumerate()
        .map(|(i, c)| class(&r, i, c))
        .collect::<Result<Vec<_>>>()?;
    let device = device(&r, dev.span(), dev.get_ref())?;
    let (arr_span, arr) = (arr.span(), arr.get_ref());
    let max_mib_per_s = r.required(
        &arr.max_mib_per_s,
        ("array.max_mib_per_s", arr_span.clone()),
        "the bandwidth constraint on arrays needs the MiB/s one array delivers to hosts (realistic, not the data sheet's)",
        |k, v| r.positive(k, v, 1e12),
    )?;
    let max_devices = r.required(
        &arr.max_devices,
        ("array.max_devices", arr_span),
        "arrays for the devices needed: the most devices one array holds",
        |k, v| r.count(k, v, 1_000_000),
    )?;
    let spares = match &arr.spares {
        Some(v) => r.fraction("array.spares", v, true)?,
        None => 0.0,
    };
    Ok(SizingPlan {
        origin: origin.to_string(),
        capacity_bytes,
        growth,
        classes,
        device,
        array: ArrayPlan {
            name: arr.name.clone().unwrap_or_else(|| "array".into()),
            max_mib_per_s,
            max_devices,
            spares,
        },
    })
}

/// The events a requirement class may name: I/O the devices see. "log file sync" is a
/// commit (its I/O is LGWR's "log file parallel write"), "free buffer waits" a wait for DBWR.
fn class_event(name: &str) -> Option<Event> {
    Event::from_name(name).filter(|e| e.reads() || e.writes())
}

fn class(r: &Reader, i: usize, c: &ClassTable) -> Result<Class> {
    let event = class_event(c.event.get_ref()).ok_or_else(|| {
        let names: Vec<&str> = crate::workload::Event::class_events()
            .filter_map(|e| class_event(e.name()))
            .map(|e| e.name())
            .collect();
        r.bad(
            "requirements.class.event",
            c.event.span(),
            format!(
                "'{}'; accepted: {} (log file sync is a commit: size its redo as log file parallel write)",
                c.event.get_ref(),
                names.join(", ")
            ),
        )
    })?;
    let name = c
        .name
        .clone()
        .unwrap_or_else(|| format!("class {} ({})", i + 1, event.name()));
    let size_bytes = r.required(
        &c.size,
        ("requirements.class.size", c.event.span()),
        &format!("class '{name}': the average request size, e.g. \"764K\""),
        |k, v| r.size(k, v),
    )?;
    let mib = |bytes_per_s: f64| bytes_per_s / (1u64 << 20) as f64;
    let (peak_iops, peak_mib_per_s) = match (&c.peak_iops, &c.peak_mib_per_s) {
        (Some(v), None) => {
            let iops = r.positive("requirements.class.peak_iops", v, 1e12)?;
            (iops, mib(iops * size_bytes as f64))
        }
        (None, Some(v)) => {
            let m = r.positive("requirements.class.peak_mib_per_s", v, 1e12)?;
            (m * (1u64 << 20) as f64 / size_bytes as f64, m)
        }
        (Some(_), Some(v)) => {
            return Err(r.bad(
                "requirements.class.peak_mib_per_s",
                v.span(),
                format!(
                    "class '{name}' gives peak_iops too: one follows from the other and the size; give one"
                ),
            ));
        }
        (None, None) => {
            return Err(r.missing(
                "requirements.class.peak_iops",
                c.event.span(),
                &format!("class '{name}' needs its peak rate: peak_iops (or peak_mib_per_s)"),
            ));
        }
    };
    let mut limits = Vec::new();
    for (stat, v) in [
        ("mean", &c.mean),
        ("p50", &c.p50),
        ("p90", &c.p90),
        ("p95", &c.p95),
        ("p99", &c.p99),
    ] {
        if let Some(v) = v {
            let key = format!("requirements.class.{stat}");
            let d =
                units::parse_duration(r.string(&key, v)?).map_err(|e| r.bad(&key, v.span(), e))?;
            if d.is_zero() {
                return Err(r.bad(&key, v.span(), "a latency limit above 0, e.g. \"30ms\""));
            }
            limits.push((stat, d));
        }
    }
    Ok(Class {
        name,
        event,
        size_bytes,
        peak_iops,
        peak_mib_per_s,
        limits,
    })
}

fn device(r: &Reader, span: Range<usize>, d: &DeviceTable) -> Result<DevicePlan> {
    let capacity_bytes = r.required(
        &d.capacity,
        ("device.capacity", span.clone()),
        "the capacity constraint needs each device's capacity, e.g. \"146G\"",
        |k, v| r.size(k, v),
    )?;
    let group = d
        .raid_group
        .as_ref()
        .map(|v| r.count("device.raid_group", v, 64).map(|g| g as u32))
        .transpose()?;
    let raid = match &d.raid {
        Some(v) => Raid::parse(r.string("device.raid", v)?, group)
            .map_err(|e| r.bad("device.raid", v.span(), e))?,
        None if group.is_some() => {
            let v = d.raid_group.as_ref().expect("set");
            return Err(r.bad(
                "device.raid_group",
                v.span(),
                "goes with raid = \"raid5\" or \"raid6\"",
            ));
        }
        None => Raid::None,
    };
    let keyed = |key: &str, v: &Option<Value>, read: &dyn Fn(&str, &Value) -> Result<f64>| {
        v.as_ref()
            .map(|v| {
                Ok(Keyed {
                    value: read(key, v)?,
                    at: r.at(v.span()),
                })
            })
            .transpose()
    };
    let iops = keyed("device.iops", &d.iops, &|k, v| r.positive(k, v, 1e12))?;
    let mib_per_s = keyed("device.mib_per_s", &d.mib_per_s, &|k, v| {
        r.positive(k, v, 1e12)
    })?;
    let usable_surface = keyed("device.usable_surface", &d.usable_surface, &|k, v| {
        r.fraction(k, v, false)
    })?;
    let runs = match &d.runs {
        None => None,
        Some(list) => {
            let ids = list
                .get_ref()
                .iter()
                .map(|v| r.count("device.runs", v, i64::MAX).map(|id| id as i64))
                .collect::<Result<Vec<_>>>()?;
            if ids.is_empty() {
                return Err(r.bad(
                    "device.runs",
                    list.span(),
                    "an empty list: give the ids of the runs (`dbio runs` lists them)",
                ));
            }
            // The runs measure what the plan would otherwise state: not both.
            for (key, given) in [
                ("device.iops", &d.iops),
                ("device.mib_per_s", &d.mib_per_s),
                ("device.usable_surface", &d.usable_surface),
            ] {
                if let Some(v) = given {
                    return Err(r.bad(
                        key,
                        v.span(),
                        "device.runs measures it: leave out one of them",
                    ));
                }
            }
            Some(Keyed {
                value: ids,
                at: r.at(list.span()),
            })
        }
    };
    let runs_devices = d
        .runs_devices
        .as_ref()
        .map(|v| {
            r.count("device.runs_devices", v, 1_000_000)
                .map(|n| n as u32)
        })
        .transpose()?
        .unwrap_or(1);
    let runs_raid = match &d.runs_raid {
        Some(v) => Raid::parse(r.string("device.runs_raid", v)?, None)
            .map_err(|e| r.bad("device.runs_raid", v.span(), e))?,
        None if runs_devices == 1 => Raid::None,
        None => raid,
    };
    Ok(DevicePlan {
        name: d.name.clone().unwrap_or_else(|| "device".into()),
        capacity_bytes,
        raid,
        iops,
        mib_per_s,
        usable_surface,
        runs,
        runs_devices,
        runs_raid,
        at: r.at(span),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub const GOOD: &str = r#"
[requirements]
capacity = "10T"
growth = 2
[[requirements.class]]
name = "scans"
event = "direct path read"
size = "1M"
peak_iops = 100
p99 = "30ms"
[[requirements.class]]
event = "db file parallel write"
size = "16K"
peak_mib_per_s = 16

[device]
capacity = "100G"
raid = "raid5"
raid_group = 9
iops = 200
mib_per_s = 100
usable_surface = "50%"

[array]
max_mib_per_s = 1000
max_devices = 100
spares = "10%"
"#;

    fn err(text: &str) -> String {
        parse(text, "p.toml").unwrap_err().to_string()
    }

    #[test]
    fn a_plan_is_read_with_its_rates_and_limits() {
        let p = parse(GOOD, "p.toml").unwrap();
        assert_eq!(p.capacity_bytes, 10 << 40);
        assert_eq!(p.growth, 2.0);
        assert_eq!(p.classes[0].name, "scans");
        assert_eq!(p.classes[0].peak_mib_per_s, 100.0);
        assert_eq!(
            p.classes[0].limits,
            vec![("p99", Duration::from_millis(30))]
        );
        // 16 MiB/s of 16K requests: 1,024 IOPS.
        assert_eq!(p.classes[1].peak_iops, 1024.0);
        assert_eq!(p.device.raid, Raid::Raid5 { group: 9 });
        assert_eq!(p.device.iops.as_ref().unwrap().value, 200.0);
        assert_eq!(p.device.usable_surface.as_ref().unwrap().value, 0.5);
        assert_eq!(p.device.runs_raid, Raid::None);
        assert_eq!(p.array.spares, 0.1);
    }

    #[test]
    fn bad_and_missing_values_name_key_and_line() {
        let cases: [(&str, &str, &str); 10] = [
            (
                "iops = 200",
                "iops = 0",
                "line 20): invalid value for 'device.iops'",
            ),
            (
                "iops = 200",
                "iops = -5",
                "line 20): invalid value for 'device.iops'",
            ),
            (
                "capacity = \"100G\"\n",
                "",
                "line 16): missing 'device.capacity'",
            ),
            (
                "max_devices = 100\n",
                "",
                "line 24): missing 'array.max_devices'",
            ),
            (
                "capacity = \"10T\"\n",
                "",
                "line 2): missing 'requirements.capacity'",
            ),
            (
                "peak_iops = 100\n",
                "",
                "line 7): missing 'requirements.class.peak_iops'",
            ),
            (
                "raid = \"raid5\"",
                "raid = \"raid4\"",
                "line 18): invalid value for 'device.raid'",
            ),
            (
                "\"50%\"",
                "\"150%\"",
                "line 22): invalid value for 'device.usable_surface'",
            ),
            ("iops = 200", "iopz = 200", "line 20): unknown field `iopz`"),
            (
                "spares = \"10%\"",
                "spares = \"-1%\"",
                "line 27): invalid value for 'array.spares'",
            ),
        ];
        for (from, to, want) in cases {
            let text = GOOD.replacen(from, to, 1);
            assert_ne!(text, GOOD, "{from}");
            let e = err(&text);
            assert!(
                e.starts_with("p.toml (") && e.contains(want),
                "{from} → {to}: {e}"
            );
        }
        assert!(err("[device]\ncapacity = \"1G\"\n").contains("no [requirements] table"));
        assert!(
            err(&GOOD.replacen("size = \"16K\"", "size = \"0\"", 1))
                .contains("'requirements.class.size': must be above 0")
        );
        assert!(
            err(&GOOD.replacen(
                "peak_mib_per_s = 16",
                "peak_mib_per_s = 16\npeak_iops = 3",
                1
            ))
            .contains("give one")
        );
        assert!(
            err(&GOOD.replacen("\"db file parallel write\"", "\"log file sync\"", 1))
                .contains("'requirements.class.event'")
        );
    }

    /// What the toml crate refuses (numbers it cannot hold, a table without a key it must
    /// have) is said as the plan's own checks say it: the key and its line.
    #[test]
    fn what_toml_refuses_names_key_and_line() {
        let big = "99999999999999999999999";
        let cases: [(&str, String, &str); 5] = [
            (
                "iops = 200",
                format!("iops = {big}"),
                "p.toml (line 20): invalid value for 'device.iops': the number is out of range",
            ),
            (
                "peak_iops = 100",
                format!("peak_iops = -{big}"),
                "p.toml (line 9): invalid value for 'requirements.class.peak_iops': the number is out of range",
            ),
            (
                "max_devices = 100",
                "max_devices = 1e999".into(),
                "p.toml (line 26): invalid value for 'array.max_devices'",
            ),
            (
                "usable_surface = \"50%\"",
                format!("runs = [{big}]"),
                "invalid value for 'device.runs': the number is out of range",
            ),
            (
                "event = \"direct path read\"\n",
                String::new(),
                "p.toml (line 5): missing 'requirements.class.event'",
            ),
        ];
        for (from, to, want) in cases {
            let text = GOOD.replacen(from, &to, 1);
            let e = err(&text);
            assert!(e.contains(want), "{from} → {to}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn runs_replace_the_stated_figures() {
        let text = GOOD.replacen(
            "iops = 200\nmib_per_s = 100\nusable_surface = \"50%\"\n",
            "runs = [3, 4]\nruns_devices = 4\n",
            1,
        );
        let p = parse(&text, "p.toml").unwrap();
        assert_eq!(p.device.runs.as_ref().unwrap().value, vec![3, 4]);
        assert_eq!(p.device.runs_devices, 4);
        // Several devices under the runs: the plan's own RAID, unless told otherwise.
        assert_eq!(p.device.runs_raid, Raid::Raid5 { group: 9 });
        let both = GOOD.replacen("iops = 200", "iops = 200\nruns = [3]", 1);
        assert!(err(&both).contains("'device.iops': device.runs measures it"));
        let zero = text.replacen("runs = [3, 4]", "runs = [0]", 1);
        assert!(err(&zero).contains("'device.runs'"));
    }
}
