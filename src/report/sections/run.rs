//! The head of a run's report: its title, its configuration, where its data set stays, and
//! the errors that stopped it.

use super::model::{Block, Level, Section};
use crate::report::result::RunResult;
use crate::units::{human_bytes, shell_word, size_label};

/// `dbio 0.1.0 — read-iops (async) — 2026-11-22T02:08:10Z`.
pub fn title(r: &RunResult) -> String {
    format!(
        "dbio {} — {} ({}) — {}",
        r.dbio_version,
        r.test,
        r.submission_label(),
        r.started_at
    )
}

/// What ran, on what, how, and for how long; where the data set stays.
pub fn configuration(r: &RunResult) -> Section {
    let c = &r.config;
    let d = &r.dataset;
    let mut f: Vec<(String, String)> = Vec::new();
    let mut field = |k: &str, v: String| f.push((k.to_string(), v));
    if d.files == 0 {
        field(
            "Data set",
            format!(
                "{}, {} of {} files only (no data files)",
                d.path,
                human_bytes(c.size_bytes),
                if r.test == "temp" { "temp" } else { "redo log" }
            ),
        );
    } else {
        field(
            "Data set",
            format!(
                "{}{}, {} in {} file(s), block {}, {}",
                d.path,
                match d.kind.as_str() {
                    "directory" => "",
                    "block_device" => " (block device)",
                    "postgresql" => " (PostgreSQL table)",
                    _ => " (file)",
                },
                human_bytes(d.size_bytes),
                d.files,
                size_label(d.block_size),
                match d.kind.as_str() {
                    "directory" if d.reused => "reused".to_string(),
                    "directory" => format!("created in {:.1} s", d.prepare_seconds),
                    "block_device" if c.destructive => "overwritten (--destructive)".into(),
                    // Made for the run in its schema, and dropped after it: a write test
                    // writes it.
                    "postgresql" => format!("loaded in {:.1} s", d.prepare_seconds),
                    _ => "read-only".into(),
                }
            ),
        );
    }
    if let Some(p) = &d.preconditioned {
        f.push(("Preconditioned".into(), p.describe()));
    }
    if c.span < 1.0 && d.files > 0 {
        let per_file = d.size_bytes / d.files as u64;
        let span = crate::workload::span::Span::from_ppm((c.span * 1e6).round() as u32);
        f.push((
            format!("Span {}", span.label()),
            format!(
                "every request falls in the first {} of each data file (of {})",
                human_bytes(span.of(per_file, d.block_size)),
                human_bytes(per_file)
            ),
        ));
    }
    let mut field = |k: &str, v: String| f.push((k.to_string(), v));
    field("Sessions", c.sessions.to_string());
    if let Some(like) = &c.like {
        let doublewrite = match c.doublewrite {
            Some(true) => "; doublewrite on",
            Some(false) => "; doublewrite off",
            None => "",
        };
        field(
            "Like",
            format!("{like}: its shapes and event names{doublewrite}"),
        );
    }
    field(
        "I/O mode",
        format!("{} ({})", c.io_mode, c.open_flags.join(" ")),
    );
    field("Engine", format!("{} — {}", c.engine, c.engine_reason));
    if !c.engine_features.is_empty() {
        field("Engine uses", c.engine_features.join("; "));
    }
    for n in &c.engine_notes {
        field("Engine note", n.clone());
    }
    if c.request_bytes > 0 && r.classes.is_empty() {
        field(
            "Request",
            format!("{}{}", size_label(c.request_bytes), shape(r)),
        );
    }
    field(
        "Measured",
        format!(
            "{:.1} s of {:.1} s asked, after {:.1} s warm-up{}",
            r.measured_seconds,
            c.duration_s,
            c.warmup_s,
            if r.partial {
                format!(" — PARTIAL ({})", r.stop_reason)
            } else {
                String::new()
            }
        ),
    );
    field(
        "Host",
        format!(
            "{}, kernel {}, {} CPU(s)",
            r.host.hostname, r.host.kernel, r.host.cpus
        ),
    );
    field("Seed", c.seed.to_string());

    let mut s = Section::new("config", "Configuration")
        .level(Level::Lead)
        .with(Block::Fields(f));
    if r.partial {
        s.push(Block::Caution(format!(
            "This is a partial result: the run stopped after {:.1} s ({}).",
            r.measured_seconds, r.stop_reason
        )));
    }
    // A run across hosts says where each host's data set stays in its hosts section.
    if d.kind == "directory" && r.hosts.is_empty() {
        s.push(Block::Note(format!(
            "Data set kept in {} ({} on disk: {}); remove with `dbio clean {}`",
            d.path,
            human_bytes(d.disk_bytes.max(d.size_bytes)),
            held_on_disk(r),
            shell_word(&d.path)
        )));
    }
    if let Ok(v) = serde_json::to_value(c) {
        s.push(Block::Options(v));
    }
    s
}

/// What a directory data set holds on disk, as the run saw it: its data files, the redo logs
/// and temp files when the run used them, and what else dbio keeps there (redo logs of
/// earlier runs, the verify table) when a run without either finds more than its data files.
fn held_on_disk(r: &RunResult) -> String {
    let d = &r.dataset;
    let mut held = vec!["data files".to_string()];
    if r.redo.is_some() {
        held.push("redo logs".into());
    }
    if r.temp.is_some() {
        held.push("temp files".into());
    }
    let more = d.disk_bytes.saturating_sub(d.size_bytes);
    if held.len() == 1 && more > 0 {
        held.push(format!(
            "{} of other files dbio keeps there",
            human_bytes(more)
        ));
    }
    match held.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => held.join(""),
    }
}

/// The errors that stopped the run (none: no section).
pub fn errors(r: &RunResult) -> Option<Section> {
    (!r.errors.is_empty()).then(|| {
        Section::new("errors", "Errors").with(Block::List {
            items: r.errors.clone(),
            alert: true,
        })
    })
}

/// The knobs that shaped this run's events: batch for the batch events, depth and MBRC for
/// the multiblock ones.
fn shape(r: &RunResult) -> String {
    let c = &r.config;
    let mut parts = Vec::new();
    for e in &r.events {
        match e.name.as_str() {
            "db file parallel read" | "db file parallel write" if c.keep_inflight => {
                parts.push(format!("{} kept in flight", c.batch))
            }
            "db file parallel read" | "db file parallel write" => {
                parts.push(format!("batch {}", c.batch))
            }
            "direct path read" | "direct path write" => {
                parts.push(format!("depth {}, mbrc {}", c.depth, c.mbrc))
            }
            "db file scattered read" => parts.push(format!("mbrc {}", c.mbrc)),
            _ => {}
        }
    }
    parts.dedup();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}
