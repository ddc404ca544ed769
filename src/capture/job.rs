//! The figures of one or several captures as a job file dbio runs as it is: one class per I/O
//! event with its request size, rate (the average over the captures, or the busiest one's
//! with `peak`, times `growth`), sessions by Little's law and limits from the waits the
//! database saw — each number followed by the line of the report it came from, and anything
//! the reports do not say marked as an assumption with its default.

use std::fmt::Write;

use super::{Capture, Class, Figure};
use crate::units::{self, size_label};
use crate::workload::Event;

/// How the captures become a job.
#[derive(Debug, Clone)]
pub struct Shape {
    /// The busiest capture's rate per class, not the average.
    pub peak: bool,
    /// Every rate times this (1 = as captured).
    pub growth: f64,
    /// The data set: size and directory (assumptions unless typed).
    pub size: Option<u64>,
    pub target: Option<String>,
    /// Also the `[requirements]` block `dbio size` reads.
    pub requirements: bool,
    /// The command that made it, for the file's first line.
    pub command: String,
}

/// Assumed when no report gives it: Oracle's default block size.
const ASSUMED_BLOCK: u64 = 8192;
/// Assumed multiblock read size: 128 blocks of 8K, the usual db_file_multiblock_read_count.
const ASSUMED_MULTIBLOCK: u64 = 1 << 20;
/// Assumed data set size.
const ASSUMED_SIZE: u64 = 4 << 30;

/// One class of the job: the figures of every capture that shows its event, combined.
struct Combined {
    event: Event,
    rate: f64,
    rate_from: String,
    /// The rate as the reports gave it (before growth) and where, for `[class.observed]`.
    observed_rate: f64,
    observed_from: String,
    bytes: Option<(f64, String)>,
    batch: Option<(f64, String)>,
    mean_ms: Option<(f64, String)>,
    p99_ms: Option<(f64, String)>,
    /// Sessions as the captures saw them at once (the most of any).
    sessions: Option<(f64, String)>,
    guessed: bool,
}

fn combine(captures: &[Capture], shape: &Shape) -> Vec<Combined> {
    let mut events: Vec<Event> = Vec::new();
    for c in captures {
        for k in &c.classes {
            if !events.contains(&k.event) {
                events.push(k.event);
            }
        }
    }
    events.sort_by_key(|e| Event::ALL.iter().position(|x| x == e));
    let total_s: f64 = captures
        .iter()
        .map(|c| c.seconds.as_ref().map_or(0.0, |s| s.value))
        .sum();
    let mut out = Vec::new();
    for event in events {
        let seen: Vec<(&Capture, &Class)> = captures
            .iter()
            .filter_map(|c| c.classes.iter().find(|k| k.event == event).map(|k| (c, k)))
            .collect();
        let secs = |c: &Capture| c.seconds.as_ref().map_or(0.0, |s| s.value);
        let (rate, rate_from, observed_from) = if shape.peak || captures.len() == 1 {
            let (_, k) = seen
                .iter()
                .max_by(|a, b| a.1.per_s.value.total_cmp(&b.1.per_s.value))
                .expect("the event was seen");
            let how = if captures.len() > 1 {
                "the peak of the reports: "
            } else {
                ""
            };
            (
                k.per_s.value,
                format!("{how}{}", k.per_s.origin.cite()),
                k.per_s.origin.place(),
            )
        } else {
            let requests: f64 = seen.iter().map(|(c, k)| k.per_s.value * secs(c)).sum();
            (
                requests / total_s,
                format!(
                    "average of {} reports ({} s): requests ÷ seconds, from {}",
                    captures.len(),
                    total_s.round(),
                    first_of(seen.iter().map(|(_, k)| k.per_s.origin.cite()), seen.len())
                ),
                format!("the average of {} reports", captures.len()),
            )
        };
        // Per-request figures: weighted by each capture's requests.
        let weighted = |get: &dyn Fn(&Class) -> Option<&Figure>| -> Option<(f64, String)> {
            let parts: Vec<(f64, &Figure)> = seen
                .iter()
                .filter_map(|(c, k)| get(k).map(|f| (k.per_s.value * secs(c).max(1.0), f)))
                .collect();
            let w: f64 = parts.iter().map(|p| p.0).sum();
            if parts.is_empty() || w <= 0.0 {
                return None;
            }
            let v = parts.iter().map(|(n, f)| n * f.value).sum::<f64>() / w;
            let from = if parts.len() == 1 {
                parts[0].1.origin.cite()
            } else {
                format!("weighted by requests over {} reports", parts.len())
            };
            Some((v, from))
        };
        let p99 = seen
            .iter()
            .filter_map(|(_, k)| k.p99_ms.as_ref())
            .max_by(|a, b| a.value.total_cmp(&b.value))
            .map(|f| (f.value, f.origin.cite()));
        out.push(Combined {
            event,
            rate: rate * shape.growth,
            rate_from,
            observed_rate: rate,
            observed_from,
            bytes: weighted(&|k| k.bytes.as_ref()),
            batch: weighted(&|k| k.batch.as_ref()),
            mean_ms: weighted(&|k| k.mean_ms.as_ref()),
            p99_ms: p99,
            sessions: seen
                .iter()
                .filter_map(|(_, k)| k.sessions.as_ref())
                .max_by(|a, b| a.value.total_cmp(&b.value))
                .map(|f| (f.value, f.origin.cite())),
            guessed: seen.iter().any(|(_, k)| k.guessed),
        });
    }
    out
}

/// A latency limit as a job file writes it: `2ms`, `0.41ms`, `150us`.
fn latency(ms: f64) -> String {
    if ms >= 100.0 {
        format!("{}ms", ms.round())
    } else if ms >= 10.0 {
        format!("{:.1}ms", ms)
    } else if ms >= 1.0 {
        format!("{:.2}ms", ms)
    } else if ms >= 0.1 {
        format!("{:.3}ms", ms)
    } else {
        format!("{}us", (ms * 1000.0).round().max(1.0))
    }
}

/// A TOML line with its comment, the comment aligned for reading.
fn line(out: &mut String, key_value: &str, comment: &str) {
    if comment.is_empty() {
        let _ = writeln!(out, "{key_value}");
    } else {
        let _ = writeln!(out, "{key_value}  # {comment}");
    }
}

fn quoted(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// The comment text of a citation: one line, no control characters, of bounded length
/// (the middle of a longer one left out, said so).
fn cite(s: &str) -> String {
    let line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    units::one_line(&line, &[])
}

/// How many citations a list names before it says how many more there are.
const CITED: usize = 3;

/// The first [`CITED`] of `n` citations, joined, and how many more.
fn first_of(cites: impl Iterator<Item = String>, n: usize) -> String {
    let mut text = cites.take(CITED).collect::<Vec<_>>().join("; ");
    if n > CITED {
        let _ = write!(text, "; and {} more", n - CITED);
    }
    text
}

/// The job file for the captures.
pub fn job_file(captures: &[Capture], shape: &Shape) -> String {
    let combined = combine(captures, shape);
    let mut out = String::new();
    let _ = writeln!(out, "# Made by `{}`.", cite(&shape.command));
    let mut k = 0;
    while k < captures.len() {
        let c = &captures[k];
        let same = captures[k..]
            .iter()
            .take_while(|x| x.file == c.file)
            .count();
        if same > 1 {
            // One file of many interval reports (iostat).
            let _ = writeln!(out, "# Read: {} ({} reports)", cite(&c.file), same);
        } else {
            let secs = c.seconds.as_ref().map_or(String::new(), |s| {
                format!(", {} s between snapshots", s.value.round())
            });
            let _ = writeln!(out, "# Read: {} ({}{secs})", cite(&c.file), c.kind);
        }
        k += same;
    }
    let _ = writeln!(
        out,
        "# Rates: {}{}. Every figure names the report line it came from; \"assumed\" marks\n# what the reports do not say, with the default used.",
        if shape.peak || captures.len() == 1 {
            "the busiest report's"
        } else {
            "the average over the reports"
        },
        if shape.growth != 1.0 {
            format!(", times growth {}", shape.growth)
        } else {
            String::new()
        }
    );
    if combined.iter().any(|c| c.guessed) {
        let _ = writeln!(
            out,
            "# The classes are guessed from request sizes (the OS cannot tell a database's events\n# apart): single-block up to 16K, multiblock above."
        );
    }
    let block = captures
        .iter()
        .find_map(|c| c.block_size.as_ref())
        .map(|f| (f.value as u64, f.origin.cite()));
    let (block_size, block_from) = match &block {
        Some((b, from)) if *b >= 512 && b.is_power_of_two() => (*b, from.clone()),
        _ => (
            ASSUMED_BLOCK,
            format!(
                "assumed: the reports give no block size; default {}",
                size_label(ASSUMED_BLOCK)
            ),
        ),
    };
    let _ = writeln!(out, "\n[dataset]");
    match &shape.target {
        Some(t) => line(&mut out, &format!("target = {}", quoted(t)), ""),
        None => line(
            &mut out,
            "target = \"./dbio-data\"",
            "assumed: where the data set goes (--target to change)",
        ),
    }
    match shape.size {
        Some(s) => line(&mut out, &format!("size = \"{}\"", size_label(s)), ""),
        None => line(
            &mut out,
            &format!("size = \"{}\"", size_label(ASSUMED_SIZE)),
            "assumed: the reports do not say how big the data is (--size to change)",
        ),
    }
    line(
        &mut out,
        &format!("block_size = \"{}\"", size_label(block_size)),
        &cite(&block_from),
    );
    let _ = writeln!(out, "\n[run]");
    line(
        &mut out,
        "duration = \"60s\"",
        "assumed: long enough for a p99",
    );
    line(&mut out, "warmup = \"5s\"", "");

    let has_sync = combined.iter().any(|c| c.event == Event::LogFileSync);
    let has_redo = combined.iter().any(|c| c.event.is_redo());
    let has_temp = combined.iter().any(|c| c.event.is_temp());
    if has_redo {
        let _ = writeln!(out, "\n[redo]");
        line(
            &mut out,
            "block = \"512\"",
            "assumed: the redo block of most platforms",
        );
    }
    if has_temp {
        let _ = writeln!(out, "\n[temp]");
        line(
            &mut out,
            "spill_size = \"64M\"",
            "assumed: each session's temp file",
        );
    }
    let mut requirements = String::new();
    for c in &combined {
        if c.event == Event::LogFileParallelWrite && has_sync {
            let _ = writeln!(
                out,
                "\n# log file parallel write ({:.0}/s in the report) is not a class here: the commits'\n# log writer issues it (one log writer per job), and the run reports it.",
                c.rate
            );
            continue;
        }
        if c.event == Event::FreeBufferWaits {
            continue;
        }
        let _ = writeln!(out, "\n[[class]]");
        line(&mut out, &format!("name = {}", quoted(c.event.name())), "");
        line(&mut out, &format!("event = {}", quoted(c.event.name())), "");
        // The request size: whole blocks for data files, bytes for redo.
        let (bytes, size_from) = match &c.bytes {
            Some((b, from)) => (*b, cite(from)),
            None => {
                let (d, what) = match c.event {
                    Event::DbFileScatteredRead
                    | Event::DirectPathRead
                    | Event::DirectPathWrite
                    | Event::DirectPathReadTemp
                    | Event::DirectPathWriteTemp => (ASSUMED_MULTIBLOCK, "a multiblock request"),
                    Event::LogFileSync | Event::LogFileParallelWrite => (4096, "redo per write"),
                    _ => (block_size, "one block"),
                };
                (
                    d as f64,
                    format!(
                        "assumed: the reports do not give {what}; default {}",
                        size_label(d)
                    ),
                )
            }
        };
        let size = if c.event.is_redo() {
            (bytes.round() as u64).max(1)
        } else {
            let blocks = (bytes / block_size as f64).round().max(1.0) as u64;
            blocks * block_size
        };
        line(
            &mut out,
            &format!("size = \"{}\"", size_text(size)),
            &size_from,
        );
        let batch = c
            .batch
            .as_ref()
            .map(|(b, from)| ((b.round() as u64).max(1), from));
        if let Some((b, from)) = &batch {
            line(&mut out, &format!("batch = {b}"), &cite(from));
        }
        let rate = c.rate;
        // A batch event's rate counts blocks.
        let rate_value = match &batch {
            Some((b, _)) => rate * *b as f64,
            None => rate,
        };
        let rate_text = if rate_value >= 100.0 {
            format!("{}", rate_value.round())
        } else {
            format!("{:.2}", rate_value)
        };
        let rate_comment = match &batch {
            Some((b, _)) => format!(
                "blocks/s: {:.1} batches/s of {b}; {}",
                rate,
                cite(&c.rate_from)
            ),
            None => cite(&c.rate_from),
        };
        // Sessions by Little's law: requests in flight = rate × mean wait, on average. Twice
        // that, so that a burst of Poisson arrivals finds a free session instead of queueing
        // behind busy ones (at exactly the mean, sessions would be busy nearly all the time and
        // the latency from the schedule would measure the shortage of sessions, not the storage).
        let sessions = if c.event == Event::LogFileParallelWrite {
            1
        } else if let Some((n, _)) = &c.sessions {
            (n.ceil() as u64).max(1)
        } else {
            match &c.mean_ms {
                Some((m, _)) => ((2.0 * rate * m / 1000.0).ceil() as u64).max(1),
                None => 1,
            }
        };
        let sessions_comment = match (&c.mean_ms, c.event) {
            (_, Event::LogFileParallelWrite) => "one log writer".to_string(),
            _ if c.sessions.is_some() => {
                let (n, from) = c.sessions.as_ref().expect("checked");
                format!("{n:.1} at once on average, as observed: {}", cite(from))
            }
            (Some((m, _)), _) => format!(
                "Little's law: {:.1}/s × {} = {:.2} in flight on average; twice that, for bursts",
                rate,
                latency(*m),
                rate * m / 1000.0
            ),
            (None, _) => "assumed: no mean wait to derive sessions from".into(),
        };
        line(
            &mut out,
            &format!("sessions = {sessions}"),
            &sessions_comment,
        );
        line(&mut out, &format!("rate = {rate_text}"), &rate_comment);
        line(&mut out, "arrival = \"poisson\"", "");
        let mut limits = Vec::new();
        if let Some((m, from)) = &c.mean_ms {
            limits.push((format!("mean = \"{}\"", latency(*m)), cite(from)));
        }
        if let Some((p, from)) = &c.p99_ms {
            limits.push((format!("p99 = \"{}\"", latency(*p)), cite(from)));
        }
        if !limits.is_empty() {
            let _ = writeln!(out, "[class.limits]");
            for (kv, from) in limits {
                line(&mut out, &kv, &from);
            }
        }
        let _ = writeln!(out, "[class.observed]");
        line(
            &mut out,
            &format!("from = {}", quoted(&cite(&c.observed_from))),
            "what the report said, shown beside the verdict",
        );
        line(
            &mut out,
            &format!("rate = {}", (c.observed_rate * 100.0).round() / 100.0),
            "waits/s",
        );
        if let Some((m, _)) = &c.mean_ms {
            line(&mut out, &format!("mean = \"{}\"", latency(*m)), "");
        }
        if let Some((p, _)) = &c.p99_ms {
            line(&mut out, &format!("p99 = \"{}\"", latency(*p)), "");
        }
        if shape.requirements && !c.event.is_redo() {
            let _ = writeln!(requirements, "\n[[requirements.class]]");
            line(
                &mut requirements,
                &format!("name = {}", quoted(c.event.name())),
                "",
            );
            line(
                &mut requirements,
                &format!("event = {}", quoted(c.event.name())),
                "",
            );
            line(
                &mut requirements,
                &format!("size = \"{}\"", size_text(size)),
                "",
            );
            line(
                &mut requirements,
                &format!(
                    "peak_iops = {}",
                    (rate_value.max(0.01) * 100.0).round() / 100.0
                ),
                if batch.is_some() { "blocks/s" } else { "" },
            );
            let p = c
                .p99_ms
                .as_ref()
                .map(|p| (p.0, "the histogram's p99".to_string()))
                .or_else(|| {
                    c.mean_ms.as_ref().map(|m| {
                        (
                            m.0 * 4.0,
                            "assumed: 4 × the mean wait (no histogram)".into(),
                        )
                    })
                });
            if let Some((p, why)) = p {
                line(
                    &mut requirements,
                    &format!("p99 = \"{}\"", latency(p)),
                    &why,
                );
            }
        }
    }
    if shape.requirements {
        let _ = writeln!(
            out,
            "\n# For `dbio size`: the same classes as requirements (copy this block with a [device]\n# and [array] into a sizing plan).\n[requirements]"
        );
        line(
            &mut out,
            &format!(
                "capacity = \"{}\"",
                size_label(shape.size.unwrap_or(ASSUMED_SIZE))
            ),
            if shape.size.is_some() {
                ""
            } else {
                "assumed: the reports do not say how big the data is"
            },
        );
        line(&mut out, &format!("growth = {}", shape.growth), "");
        out.push_str(&requirements);
    }
    out
}

/// A size as a job file writes it: `8K`, `1M`, or bytes (redo sizes of any count).
fn size_text(bytes: u64) -> String {
    let l = units::size_label(bytes);
    if l.ends_with(|c: char| c.is_ascii_digit()) {
        bytes.to_string()
    } else {
        l
    }
}
