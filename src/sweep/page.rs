//! `sweep.html`: a sweep on one self-contained page — the sweep's report ([`super::report`],
//! the table of points linking to each point's report), then IOPS (and MiB/s) and latency
//! against the swept value as charts.

use super::SweepResult;
use crate::report::html::chart::{self, Line, Measure};
use crate::report::html::{Page, event_color, legend};
use crate::report::sections::Section;

/// Renders the page from `sweep.json` alone.
pub fn render(r: &SweepResult) -> String {
    let name = r.param.name();
    let report = super::report::sweep(r);
    let mut page = Page::new(&report.title);
    page.report(&report);
    if r.points.is_empty() {
        return page.finish();
    }
    let commits = r.points.iter().any(|p| p.commits_per_s.is_some());
    let labels: Vec<String> = r.points.iter().map(|p| p.label.clone()).collect();
    let line = |label: &str, i: usize, dashed: bool, f: &dyn Fn(&super::SweepPoint) -> f64| Line {
        label: label.to_string(),
        color: event_color(i),
        dashed,
        values: r.points.iter().map(|p| Some(f(p))).collect(),
    };
    page.sections(&[Section::new("throughput", "Throughput")]);
    let o = &mut page.body;
    o.push_str(&chart::by_value(
        Measure::Amount("IOPS"),
        name,
        &labels,
        &[line("IOPS", 0, false, &|p| p.iops)],
    ));
    o.push_str(&chart::by_value(
        Measure::Amount("MiB/s"),
        name,
        &labels,
        &[line("MiB/s", 1, false, &|p| p.mib_per_s)],
    ));
    if commits {
        o.push_str(&chart::by_value(
            Measure::Amount("commits/s"),
            name,
            &labels,
            &[line("commits/s", 2, false, &|p| {
                p.commits_per_s.unwrap_or(0.0)
            })],
        ));
    }
    page.sections(&[Section::new("latency", "Latency")]);
    let o = &mut page.body;
    let latency = [
        line("p99", 1, false, &|p| p.latency_us.p99),
        line("p95", 2, false, &|p| p.latency_us.p95),
        line("p50", 0, false, &|p| p.latency_us.p50),
        line("mean", 3, true, &|p| p.latency_us.mean),
    ];
    legend(o, latency.iter().map(|l| (l.label.as_str(), l.color)));
    o.push_str(&chart::by_value(
        Measure::LatencyUs("latency"),
        name,
        &labels,
        &latency,
    ));
    page.finish()
}
