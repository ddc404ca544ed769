//! Every section of a report, computed once from a [`RunResult`]: which rows a table has,
//! in what order, with which figures written how. The formats are thin renderers over
//! these sections, as hyperfine's `MarkupExporter` computes a table that its Markdown and
//! AsciiDoc exporters only dress in syntax:
//!
//! - `summary.txt` and `dbio show`: [`crate::report::summary`] (fixed-width text);
//! - `report.html`: [`crate::report::html`] (tables, plus the charts text cannot draw);
//! - `timeseries.csv`, `histograms.csv`: [`crate::report::export`], from [`second_rows`]
//!   and [`bucket_rows`];
//! - `dbio compare` (text and `--html`): [`compare`];
//! - `dbio map` and the storage tree of every run: [`storage`].
//! - `--format md` of every command that prints a report: [`crate::report::markdown`];
//!   [`crate::report::render`] picks the renderer of a [`crate::report::Format`].
//!
//! A new format renders a [`Report`]: it walks the sections and writes each [`Block`].

mod charts;
mod cluster;
mod compare;
mod events;
pub mod format;
mod model;
mod mysql;
mod pg;
mod run;
mod stability;
mod steady;
pub mod storage;
mod system;
mod workload;

pub use compare::{Comparison, compare, comparison};
pub use events::{
    BucketRow, DbTime, SecondRow, bucket_rows, latency_table, second_length_s, second_rows, trimmed,
};
pub use model::*;
pub use mysql::mysql_sections;
pub use pg::pg_sections;

use crate::report::result::RunResult;

/// The report of one run, section by section.
pub fn run(r: &RunResult) -> Report {
    // A job with requirements answers its question first: PASS or FAIL, limit by limit.
    let mut sections: Vec<Section> = workload::verdict(r).into_iter().collect();
    sections.push(run::configuration(r));
    sections.extend(run::errors(r));
    sections.extend(cluster::hosts(r));
    sections.push(events::top_timed_events(r));
    sections.push(events::load_profile(r));
    sections.extend(stability::stability(r));
    sections.extend(workload::redo(r));
    sections.extend(workload::oltp(r));
    sections.extend(workload::classes(r));
    sections.extend(steady::steady_state(r));
    sections.extend(workload::temp(r));
    if let Some(p) = &r.pg {
        sections.extend(pg_sections(p));
    }
    if let Some(m) = &r.mysql {
        sections.extend(mysql_sections(m));
    }
    sections.push(events::latency(r));
    sections.push(events::histograms(r));
    let mut seconds = Section::new("seconds", "Per second");
    seconds.blocks = charts::per_second(r);
    sections.push(seconds);
    if r.ash.is_some() {
        let mut ash = Section::new("ash", "Active sessions by state (ASH)");
        ash.blocks = charts::ash(r);
        sections.push(ash);
    }
    sections.extend(workload::verify(r));
    sections.extend(system::operating_system(r));
    sections.extend(system::block_devices(r));
    sections.extend(system::storage(r));
    sections.extend(system::findings(r));
    sections.extend(system::warnings(r));
    Report {
        title: run::title(r),
        sections,
    }
}

#[cfg(test)]
mod tests;
