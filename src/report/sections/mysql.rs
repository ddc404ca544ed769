//! What MariaDB/MySQL saw (`dbio mysql` runs): the server and its settings, findings in
//! words, the waits sampled from performance_schema under the server's own names, file I/O
//! by instrument, and InnoDB's counters per second.

use super::format::{decimal, number, thousands};
use super::model::{Block, Column, Level, Section, Table, cells};
use crate::report::result_mysql::MysqlSection;
use crate::units::human_bytes;

/// The sections of a mysql section, in order.
pub fn mysql_sections(p: &MysqlSection) -> Vec<Section> {
    vec![server(p), settings(p), waits(p), files(p), innodb(p)]
}

fn server(p: &MysqlSection) -> Section {
    let s = &p.server;
    let mut f: Vec<(String, String)> = Vec::new();
    let mut field = |k: &str, v: String| f.push((k.to_string(), v));
    field(
        "Server",
        format!(
            "{} ({})",
            s.version,
            if s.throwaway {
                "a throwaway server dbio started"
            } else {
                "an existing server, only watched"
            }
        ),
    );
    if let Some(d) = &s.data_directory {
        field("Data directory", d.clone());
    }
    if let Some(a) = &s.aio_in_use {
        field("Asynchronous I/O", a.clone());
    }
    field("Page cache", p.cache.clone());
    if !p.session_set.is_empty() {
        field(
            "Each session ran",
            format!("SET SESSION {}", p.session_set.join("; SET SESSION ")),
        );
    }
    let sm = &p.sampler;
    field(
        "Wait sampler",
        format!(
            "{} Hz asked, {} samples in {:.1} s, {} µs per sample",
            sm.hz,
            thousands(sm.samples),
            sm.seconds,
            number(sm.mean_sample_us)
        ),
    );
    field(
        "Counters",
        format!("deltas over {:.1} s (nothing reset)", p.interval_s),
    );
    let name = if s.mariadb { "MariaDB" } else { "MySQL" };
    let mut sec = Section::new("mysql", name).with(Block::Fields(f));
    for c in &p.cautions {
        sec.push(Block::Caution(c.clone()));
    }
    for finding in &p.findings {
        sec.push(Block::Note(finding.clone()));
    }
    sec
}

fn settings(p: &MysqlSection) -> Section {
    let mut t = Table::new(vec![
        Column::left("Variable", 34),
        Column::left("Value", 24),
    ]);
    for (n, v) in &p.server.settings {
        t.row(cells![n.as_str(), v.as_str()]);
    }
    Section::new("mysql-settings", "Server variables")
        .level(Level::Sub)
        .with(Block::Table(t))
}

fn waits(p: &MysqlSection) -> Section {
    let mut t = Table::new(vec![
        Column::left("Thread", 34),
        Column::left("Kind", 6),
        Column::left("Event", 40),
        Column::right("Samples", 9),
        Column::right("% DB time", 10),
        Column::right("DB time (s)", 11),
    ]);
    for w in &p.waits {
        t.row(cells![
            w.thread.as_str(),
            w.kind.as_str(),
            w.event.as_str(),
            thousands(w.samples),
            format!("{:.1}", w.pct),
            decimal(w.time_s),
        ]);
    }
    let mut s = Section::new("mysql-waits", "performance_schema waits (Top Timed Events)");
    if p.waits.is_empty() {
        s.push(Block::Note(
            "No session was active and no background thread waiting in any sample.".into(),
        ));
    } else {
        s.push(Block::Table(t));
        s.push(Block::Note(
            "Sampled from performance_schema.threads and events_waits_current: a wait in progress (innermost), else an active session's state (the redo write and sync of a commit are not instrumented: they show as the state Commit).".into(),
        ));
    }
    s
}

fn files(p: &MysqlSection) -> Section {
    let mut t = Table::new(vec![
        Column::left("Instrument", 40),
        Column::right("Reads", 10),
        Column::right("Reads/s", 9),
        Column::right("Read mean (µs)", 14),
        Column::right("Writes", 10),
        Column::right("Writes/s", 9),
        Column::right("Bytes written", 13),
        Column::right("Misc", 8),
    ]);
    for f in &p.files {
        t.row(cells![
            f.event.as_str(),
            thousands(f.reads),
            decimal(f.reads_per_s),
            f.mean_read_us.map_or("-".into(), number),
            thousands(f.writes),
            decimal(f.writes_per_s),
            human_bytes(f.write_bytes),
            thousands(f.misc),
        ]);
    }
    let mut s = Section::new("mysql-files", "File I/O by instrument").level(Level::Sub);
    if p.files.is_empty() {
        s.push(Block::Note(
            "performance_schema counted no InnoDB file I/O (or it is not readable).".into(),
        ));
    } else {
        s.push(Block::Table(t));
        s.push(Block::Note(
            "performance_schema's file summaries: asynchronous I/O is timed at submission; MariaDB has no redo-log instrument (its writes are in the InnoDB counters below).".into(),
        ));
    }
    s
}

fn innodb(p: &MysqlSection) -> Section {
    let i = &p.innodb;
    let mut f = vec![
        (
            "Data reads".to_string(),
            format!(
                "{} ({}/s), {}",
                thousands(i.data_reads),
                decimal(i.reads_per_s),
                human_bytes(i.data_read_bytes)
            ),
        ),
        (
            "Data writes".to_string(),
            format!(
                "{} ({}/s), {}",
                thousands(i.data_writes),
                decimal(i.writes_per_s),
                human_bytes(i.data_written_bytes)
            ),
        ),
        (
            "Data and log syncs".to_string(),
            format!(
                "{} ({}/s)",
                thousands(i.data_fsyncs),
                decimal(i.fsyncs_per_s)
            ),
        ),
        (
            "Pages read, written".to_string(),
            format!(
                "{}, {} ({} by read-ahead)",
                thousands(i.pages_read),
                thousands(i.pages_written),
                thousands(i.read_ahead_pages)
            ),
        ),
        (
            "Doublewrite".to_string(),
            format!(
                "{} pages in {} batches{}",
                thousands(i.dblwr_pages),
                thousands(i.dblwr_batches),
                i.dblwr_per_page
                    .map_or(String::new(), |r| format!(", {r:.2} per page written"))
            ),
        ),
        (
            "Redo".to_string(),
            format!(
                "{} writes ({}/s), {}",
                thousands(i.log_writes),
                decimal(i.log_writes_per_s),
                human_bytes(i.log_bytes)
            ),
        ),
        (
            "Commits".to_string(),
            format!(
                "{} ({}/s), by {}",
                thousands(i.commits),
                decimal(i.commits_per_s),
                i.commits_source
            ),
        ),
    ];
    if let Some(c) = i.commits_per_log_write
        && i.log_writes >= 10
    {
        f.push(("Commits per log write".to_string(), format!("{c:.2}")));
    }
    if let (Some(r), Some(w)) = (i.process_read_bytes, i.process_write_bytes) {
        f.push((
            "Server process I/O".to_string(),
            format!("read {}, wrote {}", human_bytes(r), human_bytes(w)),
        ));
    }
    Section::new("mysql-innodb", "InnoDB counters")
        .level(Level::Sub)
        .with(Block::Fields(f))
}
