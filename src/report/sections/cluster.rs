//! A run across hosts: one row per host, like a RAC report's per-instance rows — the main
//! event's IOPS, MiB/s, mean and p99, its requests, and the host's clock offset — with the
//! slowest host flagged, and where each host's data set stays.

use super::format::thousands;
use super::model::{Block, Cell, Column, Mark, Section, Table, cells};
use crate::report::result::RunResult;
use crate::units::shell_word;

/// The per-host section (none for a run on one host).
pub fn hosts(r: &RunResult) -> Option<Section> {
    if r.hosts.is_empty() {
        return None;
    }
    let main = r.main_event().map(|e| e.name.clone()).unwrap_or_default();
    let figures: Vec<Option<&crate::report::result::EventResult>> = (r.hosts.iter())
        .map(|h| h.events.iter().find(|e| e.name == main))
        .collect();
    // The slowest host: the highest mean latency of the main event.
    let slowest = (figures.iter().enumerate())
        .filter_map(|(i, e)| e.filter(|e| e.requests > 0).map(|e| (i, e.latency_us.mean)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
        .filter(|_| r.hosts.len() > 1);
    let mut t = Table::new(vec![
        Column::left("Host", 16),
        Column::right("IOPS", 12),
        Column::right("MiB/s", 10),
        Column::right("Mean (µs)", 10),
        Column::right("p99 (µs)", 10),
        Column::right("Requests", 13),
        Column::right("Clock offset (µs)", 20),
        Column::right("Start (ms)", 11),
        Column::left("", 8),
    ]);
    for (i, (h, e)) in r.hosts.iter().zip(&figures).enumerate() {
        let (iops, mib, mean, p99, requests) = match e {
            Some(e) => (
                thousands(e.iops.round() as u64),
                format!("{:.1}", e.mib_per_s),
                format!("{:.1}", e.latency_us.mean),
                format!("{:.1}", e.latency_us.p99),
                thousands(e.requests),
            ),
            None => Default::default(),
        };
        let mut row = cells![
            h.host.clone(),
            iops,
            mib,
            mean,
            p99,
            requests,
            format!(
                "{:.0} ± {:.0}",
                // Rounded first, so a small negative offset is "0", not "-0".
                h.clock_offset_us.round() + 0.0,
                h.clock_uncertainty_us
            ),
            h.start_skew_ms.map_or("-".into(), |s| format!("{s:+.1}")),
        ];
        row.push(if Some(i) == slowest {
            Cell::marked("slowest", Mark::Fail)
        } else if h.partial {
            Cell::marked(h.stop_reason.clone(), Mark::Fail)
        } else {
            Cell::from("")
        });
        t.row(row);
    }
    let mut s = Section::new("hosts", format!("Hosts ({})", r.hosts.len())).with(Block::Table(t));
    s.push(Block::Note(format!(
        "Per host: {main}. The cluster's figures above are merged from every host's histograms (its percentiles are those of all requests). Clock offset: the host's clock minus the coordinator's, ± half the smallest round trip; start: when its warm-up began after the instant given to all."
    )));
    let notes: Vec<String> = (r.hosts.iter())
        .filter(|h| h.dataset.kind == "directory")
        .map(|h| {
            format!(
                "{}: data set kept in {}; remove with `ssh {} dbio clean {}`",
                h.host,
                h.dataset.path,
                shell_word(&h.host),
                shell_word(&h.dataset.path)
            )
        })
        .collect();
    if !notes.is_empty() {
        s.push(Block::List {
            items: notes,
            alert: false,
        });
    }
    Some(s)
}
