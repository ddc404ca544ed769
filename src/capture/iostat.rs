//! The requests devices served, from the `iostat -x` output of Linux sysstat (the layouts
//! of versions 9 to 12: `rrqm/s ... r/s w/s rkB/s wkB/s avgrq-sz ... await r_await w_await`
//! and `r/s rkB/s ... r_await rareq-sz w/s ...`, in sectors, kB or MB). The OS cannot tell a
//! database's events apart, so the classes are named by request size — reads up to 16K are
//! single-block reads, larger ones multiblock; writes likewise — and said to be guessed.

use super::{Capture, Class, Figure, Origin};
use crate::error::{Error, Result};
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

/// The column of `heading` in a device table's heading row.
fn col(head: &[&str], names: &[&str]) -> Option<usize> {
    head.iter().position(|h| names.contains(h))
}

/// Reads `iostat -x` output: one capture per interval report. When there are several,
/// the first (averages since boot) is left out. `devices` keeps only those devices.
pub fn read(file: &str, text: &str, devices: &[String]) -> Result<Vec<Capture>> {
    let missing = |what: &str| {
        Error::usage(format!(
            "{file}: not `iostat -x` output dbio can read: {what}"
        ))
    };
    let mut reports: Vec<Vec<Device>> = Vec::new();
    let mut head: Option<Vec<String>> = None;
    for (k, l) in text.lines().enumerate() {
        let words: Vec<&str> = l.split_whitespace().collect();
        let Some(first) = words.first() else {
            head = None;
            continue;
        };
        if *first == "Device:" || *first == "Device" {
            head = Some(words.iter().map(|w| w.to_string()).collect());
            reports.push(Vec::new());
            continue;
        }
        let Some(h) = &head else { continue };
        let h: Vec<&str> = h.iter().map(String::as_str).collect();
        if words.len() != h.len() {
            continue;
        }
        let num = |names: &[&str]| -> Option<f64> {
            col(&h, names).and_then(|c| words[c].replace(',', ".").parse::<f64>().ok())
        };
        let (Some(r), Some(w)) = (num(&["r/s"]), num(&["w/s"])) else {
            return Err(missing("a device table without r/s and w/s"));
        };
        // Bytes per second from whichever unit the table uses.
        let bytes = |kb: &str, mb: &str, sec: &str| -> Option<f64> {
            num(&[kb])
                .map(|v| v * 1024.0)
                .or_else(|| num(&[mb]).map(|v| v * 1048576.0))
                .or_else(|| num(&[sec]).map(|v| v * 512.0))
        };
        let rb = bytes("rkB/s", "rMB/s", "rsec/s");
        let wb = bytes("wkB/s", "wMB/s", "wsec/s");
        let (Some(rb), Some(wb)) = (rb, wb) else {
            return Err(missing("no rkB/s, rMB/s or rsec/s column (run iostat -x)"));
        };
        let any_wait = num(&["await"]);
        let dev = Device {
            name: first.to_string(),
            line: k + 1,
            reads_per_s: r,
            read_bytes_per_s: rb,
            read_ms: num(&["r_await"]).or(any_wait),
            writes_per_s: w,
            write_bytes_per_s: wb,
            write_ms: num(&["w_await"]).or(any_wait),
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
        for d in devs {
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
                        origin: origin(format!("{} {dir}/s (report {})", d.name, n + 1)),
                    },
                    bytes: Some(Figure {
                        value: size,
                        origin: origin(format!("{} {dir} bytes/s ÷ {dir}/s", d.name)),
                    }),
                    batch: None,
                    mean_ms: ms.map(|m| Figure {
                        value: m,
                        origin: origin(format!("{} {dir}_await", d.name)),
                    }),
                    p99_ms: None,
                    guessed: true,
                };
                // Devices that serve the same class add up (the job is one data set).
                match classes.iter_mut().find(|c| c.event == event) {
                    Some(c) => {
                        let (a, b) = (c.per_s.value, add.per_s.value);
                        let mix = |x: Option<&Figure>, y: Option<&Figure>| match (x, y) {
                            (Some(x), Some(y)) => Some((x.value * a + y.value * b) / (a + b)),
                            (x, y) => x.or(y).map(|f| f.value),
                        };
                        let bytes = mix(c.bytes.as_ref(), add.bytes.as_ref());
                        let mean = mix(c.mean_ms.as_ref(), add.mean_ms.as_ref());
                        c.per_s.value = a + b;
                        c.per_s.origin.what =
                            format!("{} + {}", c.per_s.origin.what, add.per_s.origin.what);
                        if let (Some(f), Some(v)) = (c.bytes.as_mut(), bytes) {
                            f.value = v;
                            f.origin.what = format!("{} (weighted by requests)", f.origin.what);
                        }
                        if let (Some(f), Some(v)) = (c.mean_ms.as_mut(), mean) {
                            f.value = v;
                        }
                    }
                    None => classes.push(add),
                }
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
        });
    }
    if captures.iter().all(|c| c.classes.is_empty()) {
        return Err(missing("no device did any I/O"));
    }
    Ok(captures)
}
