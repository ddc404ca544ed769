//! `dbio runs` as a report ([`crate::report::sections::Report`]): one row per recorded
//! run, the main event's headline figures last, rendered by the shared renderers (text
//! or Markdown). Every text in it comes from the store, which anyone may have written:
//! the renderers show it escaped.

use super::RunListing;
use crate::report::sections::{Block, Column, Level, Report, Section, Table, cells};
use crate::units::{size_label, thousands};

/// The recorded runs as a listing: a heading line, then one line per run.
pub fn runs(runs: &[RunListing]) -> Report {
    let whole = |v: Option<f64>| v.map_or("-".to_string(), |v| thousands(v.round() as u64));
    let mut t = Table::new(vec![
        Column::right("ID", 5),
        Column::left("Started", 20),
        Column::left("Test", 10),
        Column::left("Mode", 5),
        Column::right("Block", 5),
        Column::right("Sess", 4),
        Column::left("Engine", 6),
        Column::left("Main event", 26),
        Column::right("IOPS", 11),
        Column::right("MiB/s", 9),
        Column::right("p99 (µs)", 9),
        Column::left("", 0),
    ])
    .bare();
    for r in runs {
        t.row(cells![
            r.id.to_string(),
            r.started_at.as_str(),
            r.test.as_str(),
            r.submission.as_str(),
            size_label(r.block_size),
            r.sessions.to_string(),
            r.engine.as_str(),
            r.main_event.as_deref().unwrap_or("-"),
            whole(r.iops),
            r.mib_per_s.map_or("-".to_string(), |v| format!("{v:.1}")),
            whole(r.p99_us),
            if r.partial { "partial" } else { "" },
        ]);
    }
    Report {
        title: String::new(),
        sections: vec![
            Section::new("runs", "Runs")
                .level(Level::Lead)
                .with(Block::Table(t)),
        ],
    }
}
