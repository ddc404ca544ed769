//! The requests devices served, from the `iostat -x` output of Linux sysstat (the layouts
//! of versions 9 to 12: `rrqm/s ... r/s w/s rkB/s wkB/s avgrq-sz ... await r_await w_await`
//! and `r/s rkB/s ... r_await rareq-sz w/s ...`, in sectors, kB or MB). The OS cannot tell a
//! database's events apart, so the classes are named by request size — reads up to 16K are
//! single-block reads, larger ones multiblock; writes likewise — and said to be guessed.

use std::fmt::Write;
use std::sync::atomic::AtomicBool;

use super::tables::Scan;
use super::{Capture, Class, Figure, Measure, Origin, checked};
use crate::error::{Error, Result};
use crate::units::echoed;
use crate::workload::Event;

/// Largest request counted as single-block.
const SINGLE_BLOCK_MAX: f64 = 16384.0;

/// What one device did in one interval.
#[derive(Debug, Clone)]
struct Device {
    name: String,
    line: usize,
    reads_per_s: f64,
    read_bytes_per_s: f64,
    read_ms: Option<f64>,
    writes_per_s: f64,
    write_bytes_per_s: f64,
    write_ms: Option<f64>,
}

/// The columns of a device table, found once per heading line.
struct Columns {
    reads: usize,
    writes: usize,
    /// The read and write bytes columns, with bytes per unit.
    read_bytes: (usize, f64),
    write_bytes: (usize, f64),
    read_wait: Option<usize>,
    write_wait: Option<usize>,
}

impl Columns {
    /// The columns of heading line `head`, or why they cannot be used.
    fn of(head: &[&str]) -> std::result::Result<Columns, &'static str> {
        let col = |names: &[&str]| head.iter().position(|h| names.contains(h));
        let bytes = |kb: &str, mb: &str, sec: &str| {
            col(&[kb])
                .map(|c| (c, 1024.0))
                .or_else(|| col(&[mb]).map(|c| (c, 1048576.0)))
                .or_else(|| col(&[sec]).map(|c| (c, 512.0)))
        };
        let (Some(reads), Some(writes)) = (col(&["r/s"]), col(&["w/s"])) else {
            return Err("a device table without r/s and w/s");
        };
        let (Some(read_bytes), Some(write_bytes)) = (
            bytes("rkB/s", "rMB/s", "rsec/s"),
            bytes("wkB/s", "wMB/s", "wsec/s"),
        ) else {
            return Err("no rkB/s, rMB/s or rsec/s column (run iostat -x)");
        };
        let any_wait = col(&["await"]);
        Ok(Columns {
            reads,
            writes,
            read_bytes,
            write_bytes,
            read_wait: col(&["r_await"]).or(any_wait),
            write_wait: col(&["w_await"]).or(any_wait),
        })
    }
}

/// Reads `iostat -x` output: one capture per interval report. When there are several,
/// the first (averages since boot) is left out. `devices` keeps only those devices. One
/// pass over the lines; every figure used is checked ([`checked`]); a signal stops it.
pub fn read(file: &str, text: &str, devices: &[String], stop: &AtomicBool) -> Result<Vec<Capture>> {
    let mut scan = Scan::new(file, stop);
    let missing = |what: &str| {
        Error::usage(format!(
            "{file}: not `iostat -x` output dbio can read: {what}"
        ))
    };
    let mut reports: Vec<Vec<Device>> = Vec::new();
    // The columns of the current device table, found when its heading was read.
    let mut head: Option<(usize, std::result::Result<Columns, &'static str>)> = None;
    for (k, l) in text.lines().enumerate() {
        scan.tick()?;
        let Some(first) = l.split_whitespace().next() else {
            head = None;
            continue;
        };
        if first == "Device:" || first == "Device" {
            scan.take(l.split_whitespace().count(), k + 1)?;
            let all: Vec<&str> = l.split_whitespace().collect();
            head = Some((all.len(), Columns::of(&all)));
            reports.push(Vec::new());
            continue;
        }
        let Some((heading_words, h)) = &head else {
            continue;
        };
        // Only lines with as many words as the heading are devices (counted no further).
        if l.split_whitespace().take(*heading_words + 1).count() != *heading_words {
            continue;
        }
        let words: Vec<&str> = l.split_whitespace().collect();
        let h = h.as_ref().map_err(|why| missing(why))?;
        // A device costs a cell more than its figures (what keeps it).
        scan.take(words.len() + 1, k + 1)?;
        let origin = |what: String| Origin {
            file: file.into(),
            line: k + 1,
            what: format!("{} {what}", echoed(first)),
        };
        let num = |c: usize, scale: f64, measure: Measure, what: &str| -> Result<Option<f64>> {
            match words[c].replace(',', ".").parse::<f64>() {
                Ok(v) => checked(
                    v * scale,
                    measure,
                    &origin(format!("{what} ({})", echoed(words[c]))),
                )
                .map(Some),
                Err(_) => Ok(None),
            }
        };
        let (Some(r), Some(w)) = (
            num(h.reads, 1.0, Measure::Rate, "r/s")?,
            num(h.writes, 1.0, Measure::Rate, "w/s")?,
        ) else {
            return Err(missing("a device table without r/s and w/s"));
        };
        let (Some(rb), Some(wb)) = (
            num(
                h.read_bytes.0,
                h.read_bytes.1,
                Measure::BytesRate,
                "read bytes/s",
            )?,
            num(
                h.write_bytes.0,
                h.write_bytes.1,
                Measure::BytesRate,
                "write bytes/s",
            )?,
        ) else {
            return Err(missing("no rkB/s, rMB/s or rsec/s column (run iostat -x)"));
        };
        let wait = |c: Option<usize>, what: &str| -> Result<Option<f64>> {
            match c {
                Some(c) => num(c, 1.0, Measure::Millis, what),
                None => Ok(None),
            }
        };
        let dev = Device {
            name: first.to_string(),
            line: k + 1,
            reads_per_s: r,
            read_bytes_per_s: rb,
            read_ms: wait(h.read_wait, "r_await")?,
            writes_per_s: w,
            write_bytes_per_s: wb,
            write_ms: wait(h.write_wait, "w_await")?,
        };
        if devices.is_empty() || devices.iter().any(|d| d == &dev.name) {
            reports.last_mut().expect("a heading came first").push(dev);
        }
    }
    if reports.is_empty() {
        return Err(missing("no \"Device\" heading line"));
    }
    if let Some(d) = devices
        .iter()
        .find(|d| !reports.iter().flatten().any(|x| &&x.name == d))
    {
        return Err(Error::usage(format!(
            "--device {d}: no such device in {file}"
        )));
    }
    let skip_first = reports.len() > 1;
    let mut captures = Vec::new();
    for (n, devs) in reports.iter().enumerate().skip(usize::from(skip_first)) {
        let mut classes: Vec<Class> = Vec::new();
        // How many more devices each class adds up (said once, at the end).
        let mut more: Vec<usize> = Vec::new();
        for d in devs {
            scan.tick()?;
            let name = echoed(&d.name);
            for (reads, per_s, bytes_s, ms) in [
                (true, d.reads_per_s, d.read_bytes_per_s, d.read_ms),
                (false, d.writes_per_s, d.write_bytes_per_s, d.write_ms),
            ] {
                if per_s <= 0.0 {
                    continue;
                }
                let size = bytes_s / per_s;
                let single = size <= SINGLE_BLOCK_MAX;
                let event = match (reads, single) {
                    (true, true) => Event::DbFileSequentialRead,
                    (true, false) => Event::DirectPathRead,
                    (false, true) => Event::DbFileParallelWrite,
                    (false, false) => Event::DirectPathWrite,
                };
                let dir = if reads { "r" } else { "w" };
                let origin = |what: String| Origin {
                    file: file.into(),
                    line: d.line,
                    what,
                };
                let add = Class {
                    event,
                    per_s: Figure {
                        value: per_s,
                        origin: origin(format!("{name} {dir}/s (report {})", n + 1)),
                    },
                    bytes: Some(Figure {
                        value: size,
                        origin: origin(format!("{name} {dir} bytes/s ÷ {dir}/s")),
                    }),
                    batch: None,
                    mean_ms: ms.map(|m| Figure {
                        value: m,
                        origin: origin(format!("{name} {dir}_await")),
                    }),
                    p99_ms: None,
                    guessed: true,
                    sessions: None,
                };
                // Devices that serve the same class add up (the job is one data set).
                match classes.iter().position(|c| c.event == event) {
                    Some(i) => {
                        let c = &mut classes[i];
                        let (a, b) = (c.per_s.value, add.per_s.value);
                        let mix = |x: Option<&Figure>, y: Option<&Figure>| match (x, y) {
                            (Some(x), Some(y)) => Some((x.value * a + y.value * b) / (a + b)),
                            (x, y) => x.or(y).map(|f| f.value),
                        };
                        let bytes = mix(c.bytes.as_ref(), add.bytes.as_ref());
                        let mean = mix(c.mean_ms.as_ref(), add.mean_ms.as_ref());
                        c.per_s.value = a + b;
                        if more[i] == 0 {
                            c.per_s.origin.what.push_str(" + ");
                            c.per_s.origin.what.push_str(&add.per_s.origin.what);
                            if let Some(f) = c.bytes.as_mut() {
                                f.origin.what.push_str(" (weighted by requests)");
                            }
                        }
                        more[i] += 1;
                        if let (Some(f), Some(v)) = (c.bytes.as_mut(), bytes) {
                            f.value = v;
                        }
                        if let (Some(f), Some(v)) = (c.mean_ms.as_mut(), mean) {
                            f.value = v;
                        }
                    }
                    None => {
                        classes.push(add);
                        more.push(0);
                    }
                }
            }
        }
        for (c, more) in classes.iter_mut().zip(more) {
            if more > 1 {
                let _ = write!(c.per_s.origin.what, " + {} more device(s)", more - 1);
            }
        }
        captures.push(Capture {
            file: file.into(),
            kind: format!("iostat, report {}", n + 1),
            seconds: Some(Figure {
                value: 1.0,
                origin: Origin {
                    file: file.into(),
                    line: 0,
                    what: "one interval".into(),
                },
            }),
            block_size: None,
            classes,
            redo_sync: None,
            group_commit: None,
        });
    }
    if captures.iter().all(|c| c.classes.is_empty()) {
        return Err(missing("no device did any I/O"));
    }
    Ok(captures)
}
