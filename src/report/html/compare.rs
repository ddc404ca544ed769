//! Several runs on one page (for `dbio compare --html`): per event, each run's IOPS, MiB/s,
//! p50 and p99 with its ratio to the first run, and the runs' latency histograms on one axis.

use std::fmt::Write;

use super::chart::{self, Bars};
use super::{Page, decimal, escape, event_color, legend, trimmed, us};
use crate::report::result::{EventResult, RunResult};

/// Renders a self-contained HTML page comparing `runs`, each given with its label; the
/// first run is the baseline every ratio is taken against. Events are listed in the order
/// they first appear; a run without an event shows a dash.
pub fn compare_html(runs: &[(String, &RunResult)]) -> String {
    let mut page = Page::new("dbio — comparison of runs");
    let o = &mut page.body;
    let _ = write!(
        o,
        "<h1>dbio — {} run(s) compared</h1><p class=\"sub\">Ratios are to the first run, \
         {}.</p>",
        runs.len(),
        runs.first()
            .map_or_else(|| "none".to_string(), |(l, _)| escape(l))
    );
    runs_table(o, runs);

    let mut names: Vec<&str> = Vec::new();
    for (_, r) in runs {
        for e in &r.events {
            if !names.contains(&e.name.as_str()) {
                names.push(&e.name);
            }
        }
    }
    o.push_str("<h2 id=\"events\">Events</h2>");
    legend(
        o,
        runs.iter()
            .enumerate()
            .map(|(i, (label, _))| (label.as_str(), event_color(i))),
    );
    for name in &names {
        let events: Vec<Option<&EventResult>> = runs
            .iter()
            .map(|(_, r)| r.events.iter().find(|e| e.name == *name))
            .collect();
        let _ = write!(
            o,
            "<h3>{}</h3><div class=\"wide\"><table><tr><th>Run</th><th>IOPS</th><th>×</th>\
             <th>MiB/s</th><th>×</th><th>p50 (µs)</th><th>×</th><th>p99 (µs)</th><th>×</th></tr>",
            escape(name)
        );
        let base = events.first().copied().flatten();
        let figures = |e: &EventResult| [e.iops, e.mib_per_s, e.latency_us.p50, e.latency_us.p99];
        for ((label, _), e) in runs.iter().zip(&events) {
            let _ = write!(o, "<tr><td>{}</td>", escape(label));
            match e {
                None => o.push_str("<td colspan=\"8\" class=\"l\">not in this run</td>"),
                Some(e) => {
                    let f = figures(e);
                    let b = base.map(figures);
                    for (k, v) in f.iter().enumerate() {
                        let shown = if k < 2 { decimal(*v) } else { us(*v) };
                        let _ = write!(
                            o,
                            "<td>{shown}</td><td>{}</td>",
                            ratio_label(*v, b.map(|b| b[k]))
                        );
                    }
                }
            }
            o.push_str("</tr>");
        }
        o.push_str("</table></div>");
        let series: Vec<Vec<(u64, u64)>> = events
            .iter()
            .map(|e| {
                e.map(|e| {
                    e.histogram_micro
                        .iter()
                        .map(|b| (b.lt_us, b.count))
                        .collect()
                })
                .unwrap_or_default()
            })
            .collect();
        if let Some((lt_us, counts)) = trimmed(&series) {
            let bars: Vec<Bars> = runs
                .iter()
                .zip(counts)
                .enumerate()
                .map(|(i, ((label, _), counts))| Bars {
                    label: label.clone(),
                    color: event_color(i),
                    counts,
                })
                .collect();
            o.push_str(&chart::histogram(&lt_us, &bars, &[]));
        }
    }
    page.finish()
}

fn runs_table(o: &mut String, runs: &[(String, &RunResult)]) {
    o.push_str(
        "<h2 id=\"runs\">Runs</h2><div class=\"wide\"><table><tr><th>Run</th>\
         <th class=\"l\">Test</th><th class=\"l\">Started</th><th class=\"l\">Host</th>\
         <th>Sessions</th><th class=\"l\">I/O mode</th><th class=\"l\">Engine</th>\
         <th>Measured (s)</th></tr>",
    );
    for (label, r) in runs {
        let c = &r.config;
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"l\">{} ({})</td><td class=\"l\">{}</td>\
             <td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>\
             <td>{:.1}{}</td></tr>",
            escape(label),
            escape(&r.test),
            escape(&c.submission),
            escape(&r.started_at),
            escape(&r.host.hostname),
            c.sessions,
            escape(&c.io_mode),
            escape(&c.engine),
            r.measured_seconds,
            if r.partial { " (partial)" } else { "" }
        );
    }
    o.push_str("</table></div>");
}

/// `v / base` as `1.23×`; a dash when there is no baseline or it is zero.
fn ratio_label(v: f64, base: Option<f64>) -> String {
    match base {
        Some(b) if b > 0.0 && v.is_finite() => format!("{:.2}×", v / b),
        _ => "—".into(),
    }
}
