//! `sweep.html`: a sweep on one self-contained page — the table of points, IOPS (and MiB/s)
//! and latency against the swept value as inline SVG, and a link to each point's report.

use std::fmt::Write;

use super::SweepResult;
use crate::report::html::chart::{self, Line, Measure};
use crate::report::html::{Page, decimal, escape, event_color, legend, us};

/// Renders the page from `sweep.json` alone.
pub fn render(r: &SweepResult) -> String {
    let name = r.param.name();
    let mut page = Page::new(&format!("dbio — sweep of {} over {name}", r.test));
    let o = &mut page.body;
    let _ = write!(
        o,
        "<h1>dbio — sweep of {} ({}) over {name}</h1><p class=\"sub\">{} of {} point(s), \
         started {}{}. Figures are the main event's: the test's own, first of its \
         events, the same in every point.</p>",
        escape(&r.test),
        escape(&r.submission),
        r.points.len(),
        r.values.len(),
        escape(&r.started_at),
        if r.complete { "" } else { " — incomplete" }
    );
    let commits = r.points.iter().any(|p| p.commits_per_s.is_some());
    let _ = write!(
        o,
        "<h2 id=\"points\">Points</h2><div class=\"wide\"><table><tr><th>{}</th><th>IOPS</th>\
         <th>MiB/s</th><th>mean (µs)</th><th>p50 (µs)</th><th>p95 (µs)</th><th>p99 (µs)</th>{}\
         <th class=\"l\">Main event</th><th class=\"l\">Run</th></tr>",
        escape(name),
        if commits { "<th>commits/s</th>" } else { "" }
    );
    for p in &r.points {
        let l = &p.latency_us;
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            escape(&p.label),
            decimal(p.iops),
            decimal(p.mib_per_s),
            us(l.mean),
            us(l.p50),
            us(l.p95),
            us(l.p99)
        );
        if commits {
            let _ = write!(
                o,
                "<td>{}</td>",
                p.commits_per_s.map_or("—".into(), decimal)
            );
        }
        let _ = write!(
            o,
            "<td class=\"l\">{}{}</td><td class=\"l\"><a href=\"{}/report.html\">{}</a></td></tr>",
            escape(p.main_event.as_deref().unwrap_or("—")),
            if p.partial { " (partial)" } else { "" },
            escape(&p.run_dir),
            escape(&p.run_dir)
        );
    }
    o.push_str("</table></div>");
    if r.points.is_empty() {
        return page.finish();
    }
    let labels: Vec<String> = r.points.iter().map(|p| p.label.clone()).collect();
    let line = |label: &str, i: usize, dashed: bool, f: &dyn Fn(&super::SweepPoint) -> f64| Line {
        label: label.to_string(),
        color: event_color(i),
        dashed,
        values: r.points.iter().map(|p| Some(f(p))).collect(),
    };
    o.push_str("<h2 id=\"throughput\">Throughput</h2>");
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
    o.push_str("<h2 id=\"latency\">Latency</h2>");
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
