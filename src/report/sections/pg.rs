//! What PostgreSQL saw (`dbio pg` runs): the server and its settings, findings in words, the
//! wait events sampled from `pg_stat_activity` under PostgreSQL's own names, I/O per backend
//! type from its statistics, WAL and commits, and active sessions per second.

use super::format::{decimal, number, thousands};
use super::model::{Block, Column, Level, Section, Table, cells};
use crate::report::result_pg::PgSection;
use crate::units::human_bytes;

/// The events shown as columns of the per-second table; the rest add up in "other".
const ASH_COLUMNS: usize = 6;

/// The sections of a pg section, in order.
pub fn pg_sections(p: &PgSection) -> Vec<Section> {
    let mut out = vec![server(p), settings(p)];
    out.push(waits(p));
    out.push(io(p));
    out.push(wal(p));
    out.extend(ash(p));
    out
}

fn server(p: &PgSection) -> Section {
    let s = &p.server;
    let mut f: Vec<(String, String)> = Vec::new();
    let mut field = |k: &str, v: String| f.push((k.to_string(), v));
    field("Server", format!("{} ({})", s.version, s.version_num));
    field(
        "io_method",
        match &s.io_method {
            Some(m) => format!("{m} (this build allows {})", s.io_method_allowed.join(", ")),
            None => format!(
                "none: PostgreSQL {} has no asynchronous I/O",
                s.version_num / 10000
            ),
        },
    );
    if let Some(d) = &s.data_directory {
        field("Data directory", d.clone());
    }
    field("Page cache", p.cache.clone());
    if !p.session_set.is_empty() {
        field(
            "Each session ran",
            format!("SET {}", p.session_set.join("; SET ")),
        );
    }
    let sm = &p.sampler;
    field(
        "Wait sampler",
        format!(
            "{} Hz asked, {} samples in {:.1} s ({:.0}/s), {} µs per sample",
            sm.hz,
            thousands(sm.samples),
            sm.seconds,
            if sm.seconds > 0.0 {
                sm.samples as f64 / sm.seconds
            } else {
                0.0
            },
            number(sm.mean_sample_us)
        ),
    );
    field(
        "Statistics",
        format!("deltas over {:.1} s (nothing reset)", p.interval_s),
    );
    let mut sec = Section::new("pg", "PostgreSQL").with(Block::Fields(f));
    for c in &p.cautions {
        sec.push(Block::Caution(c.clone()));
    }
    for finding in &p.findings {
        sec.push(Block::Note(finding.clone()));
    }
    sec
}

fn settings(p: &PgSection) -> Section {
    let mut t = Table::new(vec![
        Column::left("Setting", 30),
        Column::left("Value", 16),
        Column::left("Source", 14),
    ]);
    for s in &p.server.settings {
        t.row(cells![s.name.as_str(), s.value.as_str(), s.source.as_str()]);
    }
    Section::new("pg-settings", "PostgreSQL settings")
        .level(Level::Sub)
        .with(Block::Table(t))
}

fn waits(p: &PgSection) -> Section {
    let mut t = Table::new(vec![
        Column::left("Backend type", 20),
        Column::left("Type", 8),
        Column::left("Wait event", 20),
        Column::right("Samples", 9),
        Column::right("% DB time", 10),
        Column::right("DB time (s)", 11),
        Column::right("Timed (s)", 10),
    ]);
    for w in &p.waits {
        t.row(cells![
            w.backend_type.as_str(),
            w.wait_event_type.as_str(),
            w.wait_event.as_str(),
            thousands(w.samples),
            format!("{:.1}", w.pct),
            decimal(w.time_s),
            w.timed_s.map_or("-".to_string(), decimal),
        ]);
    }
    let mut s = Section::new("pg-waits", "PostgreSQL wait events (Top Timed Events)");
    if p.waits.is_empty() {
        s.push(Block::Note(
            "No session was active and no background process busy in any sample.".into(),
        ));
    } else {
        s.push(Block::Table(t));
        s.push(Block::Note(
            "Sampled from pg_stat_activity: active sessions and busy background processes; CPU is active without a wait event. Timed: what PostgreSQL measured itself (track_io_timing), where it does.".into(),
        ));
    }
    s
}

fn io(p: &PgSection) -> Section {
    let mut t = Table::new(vec![
        Column::left("Backend type", 20),
        Column::left("Object", 9),
        Column::left("Operation", 9),
        Column::right("Operations", 11),
        Column::right("Ops/s", 10),
        Column::right("MiB/s", 9),
        Column::right("Avg size", 9),
        Column::right("Mean wait (ms)", 14),
        Column::left("From", 16).detail(),
    ]);
    for i in &p.io {
        t.row(cells![
            i.backend_type.as_str(),
            i.object.as_str(),
            i.op.as_str(),
            thousands(i.ops),
            decimal(i.ops_per_s),
            i.mib_per_s.map_or("-".into(), decimal),
            i.avg_io_bytes
                .map_or("-".into(), |b| human_bytes(b.round() as u64)),
            i.mean_wait_ms.map_or("-".into(), |m| format!("{m:.3}")),
            i.source.as_str(),
        ]);
    }
    let mut s = Section::new("pg-io", "I/O by backend type");
    if p.io.is_empty() {
        s.push(Block::Note(
            "PostgreSQL counted no I/O in the interval.".into(),
        ));
    } else {
        s.push(Block::Table(t));
        s.push(Block::Note(
            "PostgreSQL's own counters: a read the page cache answered counts as a read; a mean wait needs track_io_timing (track_wal_io_timing for WAL).".into(),
        ));
    }
    s
}

fn wal(p: &PgSection) -> Section {
    let w = &p.wal;
    let mut f = vec![
        ("Commits".to_string(), thousands(w.commits)),
        (
            "WAL".to_string(),
            format!(
                "{} records, {}, {} writes, {} flushes",
                thousands(w.records),
                human_bytes(w.bytes),
                thousands(w.writes),
                thousands(w.syncs)
            ),
        ),
    ];
    // A handful of flushes (a read test's) says nothing of group commit.
    if let Some(c) = w.commits_per_flush
        && w.syncs >= 10
    {
        f.push(("Commits per WAL flush".to_string(), format!("{c:.2}")));
    }
    if let Some(ms) = w.mean_sync_ms {
        f.push((format!("{} (mean)", w.sync_event), format!("{ms:.3} ms")));
    }
    if let Some(ms) = w.mean_write_ms {
        f.push(("WAL write (mean)".to_string(), format!("{ms:.3} ms")));
    }
    Section::new("pg-wal", "WAL and commits")
        .level(Level::Sub)
        .with(Block::Fields(f))
}

fn ash(p: &PgSection) -> Option<Section> {
    if p.ash.is_empty() {
        return None;
    }
    // The events with the most active sessions over the run, then the rest as "other".
    let mut totals: Vec<(&str, f64)> = Vec::new();
    for s in &p.ash {
        for (k, v) in &s.active {
            match totals.iter_mut().find(|(n, _)| n == k) {
                Some(t) => t.1 += v,
                None => totals.push((k, *v)),
            }
        }
    }
    totals.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let shown: Vec<&str> = totals.iter().take(ASH_COLUMNS).map(|t| t.0).collect();
    let other = totals.len() > shown.len();
    let mut columns = vec![Column::right("Second", 6)];
    columns.extend(
        shown
            .iter()
            .map(|n| Column::right(*n, (n.chars().count() + 2).max(8))),
    );
    if other {
        columns.push(Column::right("other", 8));
    }
    let mut t = Table::new(columns);
    for s in &p.ash {
        let mut row = cells![s.t.to_string()];
        for n in &shown {
            row.push(format!("{:.2}", s.active.get(*n).copied().unwrap_or(0.0)).into());
        }
        if other {
            let rest: f64 = (s.active.iter())
                .filter(|(k, _)| !shown.contains(&k.as_str()))
                .map(|(_, v)| v)
                .sum::<f64>()
                .max(0.0);
            row.push(format!("{rest:.2}").into());
        }
        t.row(row);
    }
    Some(
        Section::new("pg-ash", "PostgreSQL active sessions per second (ASH)")
            .with(Block::Table(t))
            .with(Block::Note(
                "Average active sessions per wait event in each second of sampling.".into(),
            )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::result_pg::{PgAshSecond, PgIo, PgServer, PgWait, PgWal};

    pub fn section() -> PgSection {
        PgSection {
            server: PgServer {
                version_num: 180004,
                version: "PostgreSQL 18.4".into(),
                io_method: Some("sync".into()),
                io_method_allowed: vec!["sync".into(), "worker".into()],
                ..PgServer::default()
            },
            cache: "direct I/O (debug_io_direct=data)".into(),
            waits: vec![PgWait {
                backend_type: "client backend".into(),
                wait_event_type: "IO".into(),
                wait_event: "DataFileRead".into(),
                samples: 480,
                pct: 96.0,
                time_s: 4.8,
                timed_s: Some(4.6),
            }],
            ash: vec![PgAshSecond {
                t: 0,
                active: [("DataFileRead".to_string(), 3.9), ("CPU".to_string(), 0.1)]
                    .into_iter()
                    .collect(),
            }],
            io: vec![PgIo {
                backend_type: "client backend".into(),
                object: "relation".into(),
                op: "read".into(),
                ops: 8030,
                ops_per_s: 1606.0,
                bytes: Some(8030 * 8192),
                mib_per_s: Some(12.5),
                avg_io_bytes: Some(8192.0),
                mean_wait_ms: Some(1.16),
                source: "pg_stat_io".into(),
            }],
            wal: PgWal {
                sync_event: "WalSync".into(),
                ..PgWal::default()
            },
            findings: vec!["async asked, sync done: io_method=sync, every read waited DataFileRead in the session".into()],
            cautions: vec!["Reads averaged 8.3 µs".into()],
            ..PgSection::default()
        }
    }

    #[test]
    fn text_shows_findings_waits_and_io() {
        let report = super::super::Report {
            title: "t".into(),
            sections: pg_sections(&section()),
        };
        let text = crate::report::summary::text(&report);
        assert!(
            text.contains("io_method: sync (this build allows sync, worker)"),
            "{text}"
        );
        assert!(text.contains("async asked, sync done"), "{text}");
        assert!(text.contains("Reads averaged 8.3 µs"), "{text}");
        let line = (text.lines())
            .find(|l| l.contains("DataFileRead") && l.contains("480"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(line.contains("96.0"), "{line}");
        let io = (text.lines())
            .find(|l| l.contains("relation") && l.contains("8,030"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(io.contains("1.160") && io.contains("8.0 KiB"), "{io}");
    }

    #[test]
    fn a_run_with_a_pg_section_reports_it() {
        let mut r = crate::report::fixture::run_result(3, &["DataFileRead"], false);
        let plain = crate::report::summary::render(&r);
        assert!(!plain.contains("I/O by backend type"));
        r.pg = Some(section());
        let text = crate::report::summary::render(&r);
        assert!(text.contains("PostgreSQL wait events"), "{text}");
        assert!(text.contains("I/O by backend type"), "{text}");
        let html = crate::report::html::render(&r);
        assert!(html.contains("I/O by backend type"));
        assert!(html.contains("async asked, sync done"));
    }
}
