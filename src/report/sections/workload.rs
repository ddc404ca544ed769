//! The sections about what the workload did: redo and the log writer, the OLTP mix, temp
//! spills, a job's classes and its verdict, and `--verify`.

use super::format::{clip, thousands};
use super::model::{Block, Cell, Column, Mark, Section, Table, cells};
use crate::report::result::RunResult;
use crate::units::{human_bytes, size_label};

/// Redo and the log writer: settings, group commit over the window, whole-run accounting.
pub fn redo(r: &RunResult) -> Option<Section> {
    let redo = r.redo.as_ref()?;
    let a = &redo.accounting;
    let fields = vec![
        (
            "Settings".to_string(),
            format!(
                "redo per commit {}{}, redo block {}, {} x {} log files, {}",
                redo.redo_per_commit,
                redo.think
                    .as_ref()
                    .map_or(String::new(), |t| format!(", think {t}")),
                size_label(redo.redo_block),
                redo.redo_files,
                human_bytes(redo.redo_file_size),
                redo.sync
            ),
        ),
        (
            "Group commit".to_string(),
            format!(
                "{} commits / {} LGWR writes = {:.2} commits per write; mean LGWR write {}{}",
                thousands(redo.commits),
                thousands(redo.lgwr_writes),
                redo.commits_per_lgwr_write,
                human_bytes(redo.mean_lgwr_write_bytes.round() as u64),
                match (redo.group_commit, &redo.group_commit_wait) {
                    (Some(n), Some(w)) => format!(
                        "; LGWR waited for {n} commits (or {w}) before a write (--group-commit)"
                    ),
                    _ => String::new(),
                }
            ),
        ),
        (
            "Whole run".to_string(),
            format!(
                "{} generated + {} wastage = {} written in {} writes ({} pieces, largest {}), {} log switches",
                human_bytes(a.redo_generated_bytes),
                human_bytes(a.wastage_bytes),
                human_bytes(a.bytes_written),
                thousands(a.lgwr_writes),
                thousands(a.pieces),
                human_bytes(a.largest_write_bytes),
                a.log_switches
            ),
        ),
    ];
    Some(Section::new("redo", "Redo").with(Block::Fields(fields)))
}

/// The OLTP transaction mix and the buffer cache.
pub fn oltp(r: &RunResult) -> Option<Section> {
    let ol = r.oltp.as_ref()?;
    let fields = vec![
        (
            "Transactions".to_string(),
            format!(
                "work unit {} blocks, {}% updates{}{}, {} DBWR; {} transactions, {} commits",
                ol.work_unit,
                ol.update_pct,
                if ol.hotspot_pct > 0 {
                    format!(
                        ", {}% of accesses to a {} hot spot",
                        ol.hotspot_pct,
                        human_bytes(ol.hotspot_size_bytes)
                    )
                } else {
                    String::new()
                },
                if ol.async_reads { ", async reads" } else { "" },
                ol.writers,
                thousands(ol.transactions),
                thousands(ol.commits)
            ),
        ),
        (
            "Reads".to_string(),
            format!(
                "logical {}, physical {}, buffer hit {:.1}%{}",
                thousands(ol.logical_reads),
                thousands(ol.physical_reads),
                ol.buffer_hit_pct,
                match (ol.cache_buffers, ol.cache_loaded_blocks) {
                    (Some(b), Some(l)) => format!(
                        " (cache of {} buffers, {} loaded before the run)",
                        thousands(b as u64),
                        thousands(l)
                    ),
                    (Some(b), None) =>
                        format!(" (cache of {} buffers, started cold)", thousands(b as u64)),
                    _ => " (no buffer cache: every read is physical)".into(),
                }
            ),
        ),
    ];
    Some(Section::new("oltp", "OLTP").with(Block::Fields(fields)))
}

/// Temp spills.
pub fn temp(r: &RunResult) -> Option<Section> {
    let t = r.temp.as_ref()?;
    Some(Section::new("temp", "Temp").with(Block::Fields(vec![(
        "Spill".into(),
        format!(
            "each session spills {} in {} requests, then reads it back",
            human_bytes(t.spill_size_bytes),
            size_label(t.temp_io_bytes)
        ),
    )])))
}

/// A job's classes: target and achieved rate, lateness, service time; the size mixes below.
pub fn classes(r: &RunResult) -> Option<Section> {
    if r.classes.is_empty() {
        return None;
    }
    let mut t = Table::new(vec![
        Column::left("Class", 24),
        Column::left("Event", 24),
        Column::right("Size", 7),
        Column::right("Sessions", 8),
        Column::left("Submission", 10),
        Column::right("Target/s", 11),
        Column::right("Achieved/s", 11),
        Column::right("Late (ms)", 11),
        Column::right("Svc p99 ms", 11),
    ]);
    for c in &r.classes {
        t.row(cells![
            clip(&c.name, 24),
            clip(&c.event, 24),
            match &c.sizes {
                // A mix or a range: its mean, listed in full below the table.
                Some(_) => format!("~{}K", (c.size_bytes + 512) / 1024),
                None => size_label(c.size_bytes),
            },
            c.sessions.to_string(),
            c.submission.as_str(),
            c.rate_target
                .map_or("closed".to_string(), |r| format!("{r:.1}")),
            format!("{:.1}", c.rate_achieved),
            c.lateness_mean_us
                .map_or("-".to_string(), |v| format!("{:.3}", v / 1000.0)),
            c.service_us
                .as_ref()
                .map_or("-".to_string(), |l| format!("{:.3}", l.p99 / 1000.0)),
        ]);
    }
    let mut s = Section::new("classes", "I/O classes").with(Block::Table(t));
    for c in r.classes.iter().filter(|c| c.sizes.is_some()) {
        s.push(Block::Note(format!(
            "{}: sizes {}; mean {} expected{}",
            c.name,
            c.sizes.as_deref().unwrap_or_default(),
            human_bytes(c.size_bytes),
            c.mean_request_bytes.map_or(String::new(), |b| format!(
                ", {} measured",
                human_bytes(b.round() as u64)
            ))
        )));
    }
    Some(s)
}

/// Requirement vs Actual: every limit of every class, PASS or FAIL.
pub fn verdict(r: &RunResult) -> Option<Section> {
    let v = r.verdict.as_ref()?;
    let mark = |pass: bool| {
        if pass {
            Cell::marked("PASS", Mark::Pass)
        } else {
            Cell::marked("FAIL", Mark::Fail)
        }
    };
    let mut t = Table::new(vec![
        Column::left("Class", 24),
        Column::left("Event", 24).detail(),
        Column::left("Limit", 12),
        Column::right("Required", 14),
        Column::right("Actual", 12),
        Column::right("Result", 6),
    ]);
    for c in &v.classes {
        for l in &c.limits {
            let (what, unit) = limit_words(&l.limit);
            let op = match l.op.as_str() {
                "<=" => "≤",
                ">=" => "≥",
                other => other,
            };
            let mut row = cells![
                clip(&c.class, 24),
                c.event.as_str(),
                what,
                format!("{op} {}{unit}", figure(l.required)),
                format!("{:.3}{unit}", l.measured),
            ];
            row.push(mark(l.result == "PASS"));
            t.row(row);
        }
    }
    // What failed the run besides the classes' limits (steady state not reached).
    for f in &v.failed {
        let mut row = cells!["(run)", "", f.as_str(), "", ""];
        row.push(mark(false));
        t.row(row);
    }
    let mut section = Section::new(
        "verdict",
        format!(
            "Requirement vs Actual — {}",
            if v.pass { "PASS" } else { "FAIL" }
        ),
    )
    .with(Block::Table(t))
    .with(Block::Note(
        "Latency limits are per request (a log file parallel write class per LGWR write), \
         from the scheduled time for classes with a rate; IOPS and MiB/s are per second. \
         result.json names each limit by its key (p99_ms, iops)."
            .into(),
    ));
    if let Some(t) = observed(r, v) {
        section.push(Block::Table(t));
        section.push(Block::Note(
            "What the database's own report said of each class (`[class.observed]`, written by \
             `dbio job from-awr`), beside what this storage gave the same load."
                .into(),
        ));
    }
    Some(section)
}

/// A limit's key (result.json's `p99_ms`, `iops`) in a DBA's words, and its unit:
/// ("p99", " ms"), ("IOPS", "").
fn limit_words(key: &str) -> (String, &'static str) {
    match key {
        "iops" => ("IOPS".into(), ""),
        "mib_per_s" => ("MiB/s".into(), ""),
        _ => match key.strip_suffix("_ms") {
            Some(stat) => (stat.replace('_', "."), " ms"),
            None => (key.to_string(), ""),
        },
    }
}

/// A limit as typed, without the binary fraction's tail (`0.946`, not `0.9460000000000001`).
fn figure(v: f64) -> String {
    let s = format!("{v:.6}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The classes whose job says what the database's report saw: that, and what this run
/// measured for the class, and its verdict.
fn observed(r: &RunResult, v: &crate::report::result::VerdictJson) -> Option<Table> {
    let job_classes = r.job.as_ref()?.get("class")?.as_array()?;
    let mut t = Table::new(vec![
        Column::left("Class", 24),
        Column::left("In the report", 30),
        Column::left("Here", 30),
        Column::right("Result", 6),
        Column::left("Report", 24).detail(),
    ]);
    let ms = |m: f64| super::format::latency_label(m * 1000.0);
    for jc in job_classes {
        let Some(o) = jc.get("observed") else {
            continue;
        };
        let name = jc.get("name").and_then(|n| n.as_str()).unwrap_or_default();
        let (Some(c), Some(cv)) = (
            r.classes.iter().find(|c| c.name == name),
            v.classes.iter().find(|c| c.class == name),
        ) else {
            continue;
        };
        let said_rate = o.get("rate").and_then(|x| x.as_f64()).unwrap_or(0.0);
        let said_ms = |key: &str| {
            o.get(key)
                .and_then(|x| x.as_str())
                .and_then(|t| crate::units::parse_latency(t).ok())
                .map(|d| d.as_secs_f64() * 1000.0)
        };
        let rate = |v: f64| {
            if v < 100.0 {
                super::format::number(v)
            } else {
                thousands(v.round() as u64)
            }
        };
        let mut said = format!("{}/s", rate(said_rate));
        if let Some(m) = said_ms("mean") {
            said.push_str(&format!(" at {}", ms(m)));
        }
        if let Some(p) = said_ms("p99") {
            said.push_str(&format!(", p99 {}", ms(p)));
        }
        let measured = |limit: &str| {
            cv.limits
                .iter()
                .find(|l| l.limit == limit)
                .map(|l| l.measured)
        };
        let mut here = format!("{}/s", rate(c.rate_achieved));
        if let Some(m) = measured("mean_ms") {
            here.push_str(&format!(" at {}", ms(m)));
        }
        if let Some(p) = measured("p99_ms") {
            here.push_str(&format!(", p99 {}", ms(p)));
        }
        let from = o.get("from").and_then(|x| x.as_str()).unwrap_or_default();
        let mut row = cells![clip(name, 24), said, here];
        row.push(if cv.pass {
            Cell::marked("PASS", Mark::Pass)
        } else {
            Cell::marked("FAIL", Mark::Fail)
        });
        row.push(Cell::from(from));
        t.row(row);
    }
    (!t.rows.is_empty()).then_some(t)
}

/// What `--verify` checked and found.
pub fn verify(r: &RunResult) -> Option<Section> {
    let v = r.verify.as_ref()?;
    let mut s = Section::new("verify", "Data verification (--verify)").with(Block::Fields(vec![(
        "Verify".into(),
        format!(
            "{} blocks read and checked, {} bad; {} blocks written with headers{}",
            thousands(v.blocks_checked),
            thousands(v.blocks_bad),
            thousands(v.blocks_written),
            if v.sequences_saved {
                "; write sequences saved for `dbio verify`"
            } else {
                ""
            }
        ),
    )]));
    if !v.bad_blocks.is_empty() {
        s.push(Block::List {
            items: v.bad_blocks.iter().map(|b| format!("bad: {b}")).collect(),
            alert: true,
        });
    }
    Some(s)
}
