//! The figures of one or several captures as a job file dbio runs as it is: one class per I/O
//! event with its request size, rate (the average over the captures, or the busiest one's
//! with `peak`, times `growth`), sessions by Little's law and limits from the waits the
//! database saw — each number followed by the line of the report it came from, and anything
//! the reports do not say marked as an assumption with its default.

use std::fmt::Write;

use super::{Capture, Class, Figure};
use crate::options::job::write::{JobToml, Value};
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

/// A class's sessions, and why: as the capture saw them at once, else by Little's law.
fn sessions_of(c: &Combined, rate: f64) -> (u64, String) {
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
    (sessions, sessions_comment)
}

/// `[redo] group_commit` (and its wait), where a capture saw more than one commit per log
/// flush: the log writer of the replay then waits for as many commits as the database's
/// flushes carried, at most as long as its commits waited (the mean commit latency). Group
/// commit is otherwise left to emerge from the replay's arrivals, which are Poisson, not the
/// database's clients: they group fewer commits per flush, and each extra flush is a device
/// write (and a cache flush) the database did not do.
fn group_commit(out: &mut JobToml, captures: &[Capture], commits: &Combined) {
    let Some(g) = captures.iter().find_map(|c| c.group_commit.as_ref()) else {
        return;
    };
    let per_write = (g.value * 100.0).round() / 100.0;
    if per_write <= 1.0 {
        return;
    }
    // Never more than the sessions that commit can make wait at once.
    let (sessions, _) = sessions_of(commits, commits.rate);
    let (n, capped) = if per_write > sessions as f64 {
        (
            sessions as f64,
            format!("; at most the class's {sessions} session(s)"),
        )
    } else {
        (per_write, String::new())
    };
    out.set(
        "group_commit",
        Value::Num(n),
        &format!("{}{capped}", cite(&g.origin.cite())),
    );
    if let Some((m, from)) = &commits.mean_ms {
        let wait = m.clamp(0.01, 1000.0);
        out.set(
            "group_commit_wait",
            Value::Str(&latency(wait)),
            &format!(
                "a commit waits at most the mean commit latency: {}",
                cite(from)
            ),
        );
    }
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

/// The job file for the captures, written by the one job-file writer ([`JobToml`]): every
/// text in it (a `--target`, a report's file name in a citation) reads back as it was.
pub fn job_file(captures: &[Capture], shape: &Shape) -> String {
    let combined = combine(captures, shape);
    let mut out = JobToml::new();
    out.comment(&format!("Made by `{}`.", cite(&shape.command)));
    let mut k = 0;
    while k < captures.len() {
        let c = &captures[k];
        let same = captures[k..]
            .iter()
            .take_while(|x| x.file == c.file)
            .count();
        if same > 1 {
            // One file of many interval reports (iostat).
            out.comment(&format!("Read: {} ({} reports)", cite(&c.file), same));
        } else {
            let secs = c.seconds.as_ref().map_or(String::new(), |s| {
                format!(", {} s between snapshots", s.value.round())
            });
            out.comment(&format!("Read: {} ({}{secs})", cite(&c.file), c.kind));
        }
        k += same;
    }
    out.comment(&format!(
        "Rates: {}{}. Every figure names the report line it came from; \"assumed\" marks\nwhat the reports do not say, with the default used.",
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
    ));
    if combined.iter().any(|c| c.guessed) {
        out.comment(
            "The classes are guessed from request sizes (the OS cannot tell a database's events\napart): single-block up to 16K, multiblock above.",
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
    out.blank();
    out.table("dataset");
    match &shape.target {
        Some(t) => out.set("target", Value::Str(t), ""),
        None => out.set(
            "target",
            Value::Str("./dbio-data"),
            "assumed: where the data set goes (--target to change)",
        ),
    }
    match shape.size {
        Some(s) => out.set("size", Value::Str(&size_label(s)), ""),
        None => out.set(
            "size",
            Value::Str(&size_label(ASSUMED_SIZE)),
            "assumed: the reports do not say how big the data is (--size to change)",
        ),
    }
    out.set(
        "block_size",
        Value::Str(&size_label(block_size)),
        &cite(&block_from),
    );
    out.blank();
    out.table("run");
    out.set(
        "duration",
        Value::Str("60s"),
        "assumed: long enough for a p99",
    );
    out.set("warmup", Value::Str("5s"), "");

    let has_sync = combined.iter().any(|c| c.event == Event::LogFileSync);
    let has_redo = combined.iter().any(|c| c.event.is_redo());
    let has_temp = combined.iter().any(|c| c.event.is_temp());
    if has_redo {
        out.blank();
        out.table("redo");
        out.set(
            "block",
            Value::Str("512"),
            "assumed: the redo block of most platforms",
        );
        // How the database made its log durable, where a capture says (the first that does).
        if let Some((sync, from)) = captures.iter().find_map(|c| c.redo_sync.as_ref()) {
            out.set("sync", Value::Str(sync.name()), &cite(&from.cite()));
        }
        if let Some(commits) = combined.iter().find(|c| c.event == Event::LogFileSync) {
            group_commit(&mut out, captures, commits);
        }
    }
    if has_temp {
        out.blank();
        out.table("temp");
        out.set(
            "spill_size",
            Value::Str("64M"),
            "assumed: each session's temp file",
        );
    }
    let mut requirements = JobToml::new();
    for c in &combined {
        if c.event == Event::LogFileParallelWrite && has_sync {
            out.blank();
            out.comment(&format!(
                "log file parallel write ({:.0}/s in the report) is not a class here: the commits'\nlog writer issues it (one log writer per job), and the run reports it.",
                c.rate
            ));
            continue;
        }
        if c.event == Event::FreeBufferWaits {
            continue;
        }
        out.blank();
        out.array_table("class");
        out.set("name", Value::Str(c.event.name()), "");
        out.set("event", Value::Str(c.event.name()), "");
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
        out.set("size", Value::Str(&size_text(size)), &size_from);
        let batch = c
            .batch
            .as_ref()
            .map(|(b, from)| ((b.round() as u64).max(1), from));
        if let Some((b, from)) = &batch {
            out.set("batch", Value::Int(*b), &cite(from));
        }
        let rate = c.rate;
        // A batch event's rate counts blocks.
        let rate_value = match &batch {
            Some((b, _)) => rate * *b as f64,
            None => rate,
        };
        // Whole requests from 100/s, else to the hundredth.
        let rate_written = if rate_value >= 100.0 {
            rate_value.round()
        } else {
            (rate_value * 100.0).round() / 100.0
        };
        let rate_comment = match &batch {
            Some((b, _)) => format!(
                "blocks/s: {:.1} batches/s of {b}; {}",
                rate,
                cite(&c.rate_from)
            ),
            None => cite(&c.rate_from),
        };
        let (sessions, sessions_comment) = sessions_of(c, rate);
        out.set("sessions", Value::Int(sessions), &sessions_comment);
        out.set("rate", Value::Num(rate_written), &rate_comment);
        out.set("arrival", Value::Str("poisson"), "");
        let mut limits = Vec::new();
        if let Some((m, from)) = &c.mean_ms {
            limits.push(("mean", latency(*m), cite(from)));
        }
        if let Some((p, from)) = &c.p99_ms {
            limits.push(("p99", latency(*p), cite(from)));
        }
        if !limits.is_empty() {
            out.table("class.limits");
            for (k, v, from) in limits {
                out.set(k, Value::Str(&v), &from);
            }
        }
        out.table("class.observed");
        out.set(
            "from",
            Value::Str(&cite(&c.observed_from)),
            "what the report said, shown beside the verdict",
        );
        out.set(
            "rate",
            Value::Num((c.observed_rate * 100.0).round() / 100.0),
            "waits/s",
        );
        if let Some((m, _)) = &c.mean_ms {
            out.set("mean", Value::Str(&latency(*m)), "");
        }
        if let Some((p, _)) = &c.p99_ms {
            out.set("p99", Value::Str(&latency(*p)), "");
        }
        if shape.requirements && !c.event.is_redo() {
            requirements.blank();
            requirements.array_table("requirements.class");
            requirements.set("name", Value::Str(c.event.name()), "");
            requirements.set("event", Value::Str(c.event.name()), "");
            requirements.set("size", Value::Str(&size_text(size)), "");
            requirements.set(
                "peak_iops",
                Value::Num((rate_value.max(0.01) * 100.0).round() / 100.0),
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
                requirements.set("p99", Value::Str(&latency(p)), &why);
            }
        }
    }
    if shape.requirements {
        out.blank();
        out.comment(
            "For `dbio size`: the same classes as requirements (copy this block with a [device]\nand [array] into a sizing plan).",
        );
        out.table("requirements");
        out.set(
            "capacity",
            Value::Str(&size_label(shape.size.unwrap_or(ASSUMED_SIZE))),
            if shape.size.is_some() {
                ""
            } else {
                "assumed: the reports do not say how big the data is"
            },
        );
        out.set("growth", Value::Num(shape.growth), "");
        out.append(requirements);
    }
    out.finish()
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
