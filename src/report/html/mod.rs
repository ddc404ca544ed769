//! `report.html`: the run as one self-contained page — the tables of `summary.txt` plus
//! charts drawn as inline SVG ([`chart`]). No script, no font, no style sheet and no image
//! is loaded from anywhere: the file opens offline, and mailed or attached to a ticket it
//! still shows everything. Made only from a [`RunResult`], so `dbio report RUN_DIR` can
//! draw it again from `result.json`. [`compare_html`] sets several runs side by side.

pub mod chart;
mod compare;

use std::fmt::Write;

pub use compare::compare_html;

use self::chart::{Bars, Layer, Line, Measure, Reference};
use super::export::second_length_s;
use super::result::{LatencyJson, OsJson, RunResult};
pub(crate) use super::summary::thousands;
use crate::units::{human_bytes, size_label};

/// Colours for events (and runs), in order; distinguishable and readable on white.
const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#bcbd22",
    "#7f7f7f", "#393b79",
];
/// ASH draws time on CPU in green, as database tools do.
const ON_CPU_COLOR: &str = "#2ca02c";
const MIB: f64 = (1u64 << 20) as f64;

/// Renders the report page of one run.
pub fn render(r: &RunResult) -> String {
    let mut page = Page::new(&format!("dbio {} — {}", r.test, r.started_at));
    let c = &r.config;
    let o = &mut page.body;
    let _ = write!(
        o,
        "<h1>dbio {} ({})</h1><p class=\"sub\">{} · {} · dbio {}</p>",
        escape(&r.test),
        escape(&c.submission),
        escape(&r.started_at),
        escape(&r.host.hostname),
        escape(&r.dbio_version)
    );
    if r.partial {
        let _ = write!(
            o,
            "<p class=\"alert\">Partial result: the run stopped after {:.1} s ({}).</p>",
            r.measured_seconds,
            escape(&r.stop_reason)
        );
    }
    for e in &r.errors {
        let _ = write!(o, "<p class=\"alert\">{}</p>", escape(e));
    }
    configuration(o, r);
    top_timed_events(o, r);
    load_profile(o, r);
    percentiles(o, r);
    histograms(o, r);
    per_second(o, r);
    if let Some(ash) = &r.ash {
        ash_section(o, r, ash);
    }
    if let Some(os) = &r.os {
        os_section(o, os);
    }
    if let Some(storage) = &r.storage {
        o.push_str("<h2 id=\"storage\">Storage</h2><div class=\"tree\">");
        json_tree(o, storage);
        o.push_str("</div>");
    }
    lint_and_warnings(o, r);
    page.finish()
}

/// The HTML skeleton shared by the run report and the comparison.
pub(crate) struct Page {
    pub body: String,
}

impl Page {
    pub fn new(title: &str) -> Page {
        let mut body = String::with_capacity(256 * 1024);
        let _ = write!(
            body,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"generator\" content=\"dbio\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{}</title><style>{STYLE}</style></head><body><main>",
            escape(title)
        );
        Page { body }
    }

    pub fn finish(mut self) -> String {
        self.body.push_str(
            "<footer>Made by dbio. This file is self-contained: it loads nothing from the \
             network. Hover over a line or bar for its values.</footer></main></body></html>\n",
        );
        self.body
    }
}

const STYLE: &str = "\
body{margin:0;background:#fff;color:#222;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\
main{max-width:1100px;margin:0 auto;padding:16px 24px 40px}\
h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}\
h3{font-size:15px;margin:16px 0 4px}h4{font-size:13px;margin:10px 0 2px;color:#444}.sub{color:#666;margin:0 0 12px}\
table{border-collapse:collapse;margin:6px 0 10px;font-variant-numeric:tabular-nums}\
th,td{padding:3px 10px;border-bottom:1px solid #eee;text-align:right;vertical-align:top}\
th{background:#f6f6f6;font-weight:600}th:first-child,td:first-child{text-align:left}\
table.kv td{text-align:left}table.kv td:first-child{color:#555;white-space:nowrap}\
td.l,th.l{text-align:left}.wide{overflow-x:auto}\
.alert{background:#fde8e8;border:1px solid #e0a0a0;padding:6px 10px;border-radius:3px}\
ul.warn li{margin:2px 0}.note{color:#666;font-size:13px}\
svg.chart{width:100%;height:auto;display:block;margin:2px 0 4px}\
svg.chart text{font-size:11px;fill:#555}svg.chart .cap{font-size:12px;fill:#333}\
.ax path{stroke:#999;fill:none}.ax path.grid{stroke:#e6e6e6}\
.ln{fill:none;stroke-width:1.5;stroke-linejoin:round}.dash{stroke-dasharray:5 3}\
.ref{stroke:#333;stroke-dasharray:2 3;fill:none}.mark{stroke:#444;stroke-dasharray:3 2;fill:none}\
svg.chart text.ref,svg.chart text.mark{fill:#222;stroke:#fff;stroke-width:3px;stroke-dasharray:none;paint-order:stroke}\
svg.chart text.val{fill:#444}svg.chart text.val.in{fill:#fff}\
svg.chart rect:hover,svg.chart path.ln:hover{opacity:.75}\
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;margin:2px 0 6px}\
.legend i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px;border-radius:2px}\
.tree ul{margin:2px 0;padding-left:20px}.tree li{margin:1px 0}.tree b{font-weight:600}\
details summary{cursor:pointer;color:#555}\
footer{margin-top:32px;color:#888;font-size:12px}";

fn configuration(o: &mut String, r: &RunResult) {
    let c = &r.config;
    let d = &r.dataset;
    o.push_str("<h2 id=\"config\">Configuration</h2><table class=\"kv\">");
    let dataset = format!(
        "{}: {} in {} file(s), block {}, {}{}",
        d.path,
        human_bytes(d.size_bytes),
        d.files,
        size_label(d.block_size),
        d.kind,
        match d.kind.as_str() {
            "directory" if d.reused => ", reused".to_string(),
            "directory" => format!(", created in {:.1} s", d.prepare_seconds),
            _ => ", read-only".to_string(),
        }
    );
    let rows: Vec<(&str, String)> = vec![
        ("Test", format!("{} ({})", r.test, c.submission)),
        ("Data set", dataset),
        ("Sessions", c.sessions.to_string()),
        (
            "I/O mode",
            format!("{} ({})", c.io_mode, c.open_flags.join(" ")),
        ),
        ("Engine", format!("{} — {}", c.engine, c.engine_reason)),
        (
            "Request",
            format!(
                "{}; batch {}{}, depth {}, mbrc {}",
                size_label(c.request_bytes),
                c.batch,
                if c.keep_inflight {
                    " kept in flight"
                } else {
                    ""
                },
                c.depth,
                c.mbrc
            ),
        ),
        (
            "Measured",
            format!(
                "{:.1} s of {:.1} s asked, after {:.1} s warm-up — {}",
                r.measured_seconds, c.duration_s, c.warmup_s, r.stop_reason
            ),
        ),
        (
            "Host",
            format!(
                "{}, kernel {}, {} CPU(s)",
                r.host.hostname, r.host.kernel, r.host.cpus
            ),
        ),
        ("Seed", c.seed.to_string()),
    ];
    for (k, v) in rows {
        let _ = write!(o, "<tr><td>{k}</td><td>{}</td></tr>", escape(&v));
    }
    for n in &c.engine_notes {
        let _ = write!(o, "<tr><td>Engine note</td><td>{}</td></tr>", escape(n));
    }
    o.push_str("</table><details><summary>Every option as used</summary><div class=\"tree\">");
    if let Ok(v) = serde_json::to_value(c) {
        json_tree(o, &v);
    }
    o.push_str("</div></details>");
}

fn top_timed_events(o: &mut String, r: &RunResult) {
    let session_time = r.config.sessions as f64 * r.measured_seconds;
    // With ASH, "% DB time" is each state's share of the sampled active time (ON CPU a row
    // of its own); older results without ASH show % of session time.
    let db = super::summary::DbTime::of(r);
    if let Some(db) = &db {
        let _ = write!(
            o,
            "<h2 id=\"events\">Top Timed Events</h2><p class=\"note\">DB time {:.1} s ({} active \
             samples at {} Hz).</p>",
            db.seconds(),
            thousands(db.samples),
            db.hz()
        );
    } else {
        o.push_str("<h2 id=\"events\">Top Timed Events</h2>");
    }
    let _ = write!(
        o,
        "<div class=\"wide\"><table><tr><th>Event</th>\
         <th>Waits</th><th>Requests</th><th>Time (s)</th><th>Avg wait (ms)</th>\
         <th>{}</th><th>IOPS</th><th>MiB/s</th><th>In flight</th><th>Errors</th></tr>",
        if db.is_some() {
            "% DB time"
        } else {
            "% Session time"
        }
    );
    for e in r.events_by_wait_time() {
        let avg_ms = ratio(e.wait_time_s * 1000.0, e.waits as f64);
        let pct = match &db {
            Some(db) => db.pct(&e.name),
            None => ratio(100.0 * e.wait_time_s, session_time),
        };
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.3}</td><td>{:.1}</td>\
             <td>{}</td><td>{:.2}</td><td>{:.1}</td><td>{}</td></tr>",
            escape(&e.name),
            thousands(e.waits),
            thousands(e.requests),
            e.wait_time_s,
            avg_ms,
            pct,
            decimal(e.iops),
            e.mib_per_s,
            e.inflight_avg,
            thousands(e.errors)
        );
    }
    if let Some(db) = &db {
        let _ = write!(
            o,
            "<tr><td>ON CPU</td><td></td><td></td><td>{:.2}</td><td></td><td>{:.1}</td>\
             <td></td><td></td><td></td><td></td></tr>",
            db.seconds_in("ON CPU"),
            db.pct("ON CPU")
        );
    }
    o.push_str("</table></div>");
    let cpu = &r.cpu;
    let _ = write!(
        o,
        "<p class=\"note\">In flight = IOPS × mean latency (Little's law). dbio's own CPU: \
         {:.2} s user + {:.2} s system{}.</p>",
        cpu.user_s,
        cpu.system_s,
        match cpu.cpu_s_per_1k_requests {
            Some(v) => format!(" = {v:.4} CPU s per 1,000 requests"),
            None => String::new(),
        }
    );
}

fn load_profile(o: &mut String, r: &RunResult) {
    let t = &r.totals;
    o.push_str("<h2 id=\"load\">Load Profile</h2><table><tr><th></th><th>Per second</th></tr>");
    for (label, v) in [
        ("Read requests", t.read_iops),
        ("Write requests", t.write_iops),
        ("Read MiB", t.read_mib_per_s),
        ("Write MiB", t.write_mib_per_s),
        ("Redo MiB", t.redo_mib_per_s.unwrap_or(0.0)),
        ("Commits", t.commits_per_s.unwrap_or(0.0)),
    ] {
        let _ = write!(o, "<tr><td>{label}</td><td>{}</td></tr>", decimal(v));
    }
    if let Some(v) = t.transactions_per_s {
        let _ = write!(o, "<tr><td>Transactions</td><td>{}</td></tr>", decimal(v));
    }
    o.push_str("</table>");
}

fn percentiles(o: &mut String, r: &RunResult) {
    o.push_str("<h2 id=\"latency\">Latency percentiles</h2><h3>Per request (µs)</h3>");
    latency_table(
        o,
        r.events
            .iter()
            .map(|e| (e.name.as_str(), &e.latency_us, e.requests)),
    );
    let waits = r.events_waiting_apart();
    if !waits.is_empty() {
        o.push_str(
            "<h3>Per wait (µs)</h3><p class=\"note\">A wait is one period a session was \
             blocked; for these asynchronous events it covers several requests.</p>",
        );
        latency_table(
            o,
            waits
                .iter()
                .map(|e| (e.name.as_str(), &e.wait_latency_us, e.waits)),
        );
    }
}

/// A table of latency percentiles in µs, one row per (name, latencies, count).
pub(crate) fn latency_table<'a>(
    o: &mut String,
    rows: impl Iterator<Item = (&'a str, &'a LatencyJson, u64)>,
) {
    o.push_str(
        "<div class=\"wide\"><table><tr><th>Event</th><th>mean</th><th>p50</th><th>p90</th>\
         <th>p95</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th></tr>",
    );
    for (name, l, n) in rows {
        if n == 0 {
            let _ = write!(
                o,
                "<tr><td>{}</td><td colspan=\"8\" class=\"l\">no requests</td></tr>",
                escape(name)
            );
            continue;
        }
        let _ = write!(o, "<tr><td>{}</td>", escape(name));
        for v in [l.mean, l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.max] {
            let _ = write!(o, "<td>{}</td>", us(v));
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
}

fn histograms(o: &mut String, r: &RunResult) {
    o.push_str(
        "<h2 id=\"histograms\">Latency histograms</h2><p class=\"note\">Share of requests \
         per power-of-two latency bucket (the latency axis is logarithmic); dashed lines mark \
         percentiles.</p>",
    );
    for (i, e) in r.events.iter().enumerate() {
        let counts: Vec<(u64, u64)> = e
            .histogram_micro
            .iter()
            .map(|b| (b.lt_us, b.count))
            .collect();
        let Some((lt_us, counts)) = trimmed(&[counts]) else {
            continue;
        };
        let l = &e.latency_us;
        let bars = Bars {
            label: e.name.clone(),
            color: event_color(i),
            counts: counts.into_iter().next().unwrap_or_default(),
        };
        let _ = write!(o, "<h3>{}</h3>", escape(&e.name));
        o.push_str(&chart::histogram(
            &lt_us,
            &[bars],
            &[("p50", l.p50), ("p99", l.p99), ("p99.9", l.p99_9)],
        ));
    }
}

/// The buckets from the first to the last that any series fills, the same for all: the
/// bucket bounds and each series' counts. None when every series is empty.
pub(crate) fn trimmed(series: &[Vec<(u64, u64)>]) -> Option<(Vec<u64>, Vec<Vec<u64>>)> {
    let longest = series.iter().max_by_key(|s| s.len())?;
    let filled = |i: usize| series.iter().any(|s| s.get(i).is_some_and(|b| b.1 > 0));
    let first = (0..longest.len()).find(|&i| filled(i))?;
    let last = (0..longest.len()).rev().find(|&i| filled(i))?;
    let lt_us = longest[first..=last].iter().map(|b| b.0).collect();
    let counts = series
        .iter()
        .map(|s| {
            (first..=last)
                .map(|i| s.get(i).map_or(0, |b| b.1))
                .collect()
        })
        .collect();
    Some((lt_us, counts))
}

fn per_second(o: &mut String, r: &RunResult) {
    let seconds = r.timeseries.iter().map(|p| p.t as usize).max().unwrap_or(0);
    if seconds == 0 {
        return;
    }
    let series = |f: &dyn Fn(u64, u64, Option<f64>, Option<f64>, f64) -> Option<f64>| {
        r.events
            .iter()
            .map(|e| {
                let mut v = vec![None; seconds];
                for p in r.timeseries.iter().filter(|p| p.event == e.name) {
                    let len = second_length_s(p.t, r.measured_seconds);
                    if let Some(slot) = v.get_mut((p.t as usize).wrapping_sub(1)) {
                        *slot = f(p.requests, p.bytes, p.mean_us, p.p99_us, len);
                    }
                }
                v
            })
            .collect::<Vec<_>>()
    };
    let lines = |values: Vec<Vec<Option<f64>>>, dashed: bool, suffix: &str| {
        values
            .into_iter()
            .enumerate()
            .map(|(i, values)| Line {
                label: format!("{}{suffix}", r.events[i].name),
                color: event_color(i),
                dashed,
                values,
            })
            .collect::<Vec<_>>()
    };
    o.push_str("<h2 id=\"seconds\">Per second</h2>");
    legend(
        o,
        r.events
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.as_str(), event_color(i))),
    );
    let iops = lines(series(&|n, _, _, _, len| Some(n as f64 / len)), false, "");
    o.push_str("<h3>IOPS</h3>");
    o.push_str(&chart::lines(Measure::Amount("requests/s"), seconds, &iops));
    let mib = lines(
        series(&|_, b, _, _, len| Some(b as f64 / MIB / len)),
        false,
        "",
    );
    o.push_str("<h3>MiB/s</h3>");
    o.push_str(&chart::lines(Measure::Amount("MiB/s"), seconds, &mib));
    let mut lat = lines(series(&|_, _, _, p99, _| p99), false, " p99");
    lat.extend(lines(series(&|_, _, mean, _, _| mean), true, " mean"));
    o.push_str("<h3>Latency per request: p99 (solid) and mean (dashed)</h3>");
    o.push_str(&chart::lines(Measure::LatencyUs("latency"), seconds, &lat));
}

fn ash_section(o: &mut String, r: &RunResult, ash: &super::result::AshJson) {
    let seconds = ash.seconds.iter().map(|s| s.t as usize).max().unwrap_or(0);
    let _ = write!(
        o,
        "<h2 id=\"ash\">Active sessions by state (ASH)</h2><p class=\"note\">Average active \
         sessions per second, sampled {} times a second ({} samples).</p>",
        ash.hz,
        thousands(ash.samples)
    );
    if seconds == 0 {
        return;
    }
    let layers: Vec<Layer> = ash
        .states
        .iter()
        .enumerate()
        .map(|(k, state)| {
            let mut values = vec![0.0; seconds];
            for s in &ash.seconds {
                if let (Some(slot), Some(v)) = (
                    values.get_mut((s.t as usize).wrapping_sub(1)),
                    s.active.get(state),
                ) {
                    *slot = *v;
                }
            }
            Layer {
                label: state.clone(),
                color: state_color(r, state, k),
                values,
            }
        })
        .collect();
    legend(o, layers.iter().map(|l| (l.label.as_str(), l.color)));
    let reference = Reference {
        value: r.config.sessions as f64,
        label: format!("{} sessions", r.config.sessions),
    };
    o.push_str(&chart::stacked(
        Measure::Amount("average active sessions"),
        seconds,
        &layers,
        Some(&reference),
    ));
}

fn os_section(o: &mut String, os: &OsJson) {
    o.push_str("<h2 id=\"os\">Operating system</h2>");
    let all: Vec<_> = os.cpu.iter().filter(|c| c.cpu == "all").collect();
    if let Some(seconds) = all.iter().map(|c| c.t as usize).max().filter(|&n| n > 0) {
        let layer = |label: &str, color, f: &dyn Fn(&super::result::CpuSecondJson) -> f64| {
            let mut values = vec![0.0; seconds];
            for c in &all {
                if let Some(slot) = values.get_mut((c.t as usize).wrapping_sub(1)) {
                    *slot = f(c);
                }
            }
            Layer {
                label: label.to_string(),
                color,
                values,
            }
        };
        let layers = [
            layer("user", "#1f77b4", &|c| c.user_pct),
            layer("system", "#d62728", &|c| c.system_pct),
            layer("iowait", "#ff7f0e", &|c| c.iowait_pct),
            layer("steal", "#7f7f7f", &|c| c.steal_pct),
        ];
        o.push_str("<h3>CPU (all CPUs)</h3>");
        legend(o, layers.iter().map(|l| (l.label.as_str(), l.color)));
        o.push_str(&chart::stacked(
            Measure::Percent("% CPU", true),
            seconds,
            &layers,
            None,
        ));
    }
    let mut devices: Vec<(&str, &str)> = Vec::new();
    for d in &os.devices {
        if !devices.iter().any(|(n, _)| *n == d.device) {
            devices.push((&d.device, &d.layer));
        }
    }
    if let Some(seconds) = os
        .devices
        .iter()
        .map(|d| d.t as usize)
        .max()
        .filter(|&n| n > 0)
    {
        let per_device = |f: &dyn Fn(&super::result::DiskSecondJson) -> f64, dashed, what: &str| {
            devices
                .iter()
                .enumerate()
                .map(|(i, (name, _))| {
                    let mut values = vec![None; seconds];
                    for d in os.devices.iter().filter(|d| d.device == *name) {
                        if let Some(slot) = values.get_mut((d.t as usize).wrapping_sub(1)) {
                            *slot = Some(f(d));
                        }
                    }
                    Line {
                        label: format!("{name} {what}"),
                        color: event_color(i),
                        dashed,
                        values,
                    }
                })
                .collect::<Vec<_>>()
        };
        o.push_str("<h3>Block devices</h3>");
        legend(
            o,
            devices
                .iter()
                .enumerate()
                .map(|(i, (n, _))| (*n, event_color(i))),
        );
        let names: Vec<String> = devices.iter().map(|(n, l)| format!("{n} ({l})")).collect();
        let _ = write!(
            o,
            "<p class=\"note\">Every layer under the data set: {}. Reads solid, writes dashed.</p>",
            escape(&names.join(", "))
        );
        o.push_str("<h4>Requests per second</h4>");
        let mut reqs = per_device(&|d| d.r_s, false, "r/s");
        reqs.extend(per_device(&|d| d.w_s, true, "w/s"));
        o.push_str(&chart::lines(Measure::Amount("requests/s"), seconds, &reqs));
        o.push_str("<h4>MiB per second</h4>");
        let mut mib = per_device(&|d| d.rmib_s, false, "read MiB/s");
        mib.extend(per_device(&|d| d.wmib_s, true, "write MiB/s"));
        o.push_str(&chart::lines(Measure::Amount("MiB/s"), seconds, &mib));
        o.push_str("<h4>Average time per request (await)</h4>");
        let mut wait = per_device(&|d| d.r_await_ms * 1000.0, false, "r_await");
        wait.extend(per_device(&|d| d.w_await_ms * 1000.0, true, "w_await"));
        o.push_str(&chart::lines(Measure::LatencyUs("await"), seconds, &wait));
        o.push_str("<h4>Utilization</h4>");
        let util = per_device(&|d| d.util_pct, false, "util");
        o.push_str(&chart::lines(
            Measure::Percent("% utilization", true),
            seconds,
            &util,
        ));
    }
    if let Some(seconds) = os
        .memory
        .iter()
        .map(|m| m.t as usize)
        .max()
        .filter(|&n| n > 0)
    {
        let line =
            |label: &str, color, dashed, f: &dyn Fn(&super::result::MemSecondJson) -> f64| {
                let mut values = vec![None; seconds];
                for m in &os.memory {
                    if let Some(slot) = values.get_mut((m.t as usize).wrapping_sub(1)) {
                        *slot = Some(f(m));
                    }
                }
                Line {
                    label: label.to_string(),
                    color,
                    dashed,
                    values,
                }
            };
        let lines = [
            line("dirty", "#d62728", false, &|m| m.dirty_mib),
            line("writeback", "#1f77b4", true, &|m| m.writeback_mib),
        ];
        o.push_str("<h3>Memory: dirty and writeback pages</h3>");
        legend(o, lines.iter().map(|l| (l.label.as_str(), l.color)));
        o.push_str(&chart::lines(Measure::Amount("MiB"), seconds, &lines));
    }
    if let Some(seconds) = os
        .io_pressure
        .iter()
        .map(|p| p.t as usize)
        .max()
        .filter(|&n| n > 0)
    {
        let mut some = vec![None; seconds];
        let mut full = vec![None; seconds];
        for p in &os.io_pressure {
            let i = (p.t as usize).wrapping_sub(1);
            if i < seconds {
                some[i] = Some(p.some_pct);
                full[i] = Some(p.full_pct);
            }
        }
        let lines = [
            Line {
                label: "some".into(),
                color: "#ff7f0e",
                dashed: false,
                values: some,
            },
            Line {
                label: "full".into(),
                color: "#d62728",
                dashed: true,
                values: full,
            },
        ];
        o.push_str("<h3>I/O pressure (PSI)</h3>");
        legend(o, lines.iter().map(|l| (l.label.as_str(), l.color)));
        o.push_str(&chart::lines(
            Measure::Percent("% of time stalled on I/O", true),
            seconds,
            &lines,
        ));
    }
    if let Some(seconds) = os
        .dbio_cpu
        .iter()
        .map(|p| p.t as usize)
        .max()
        .filter(|&n| n > 0)
    {
        let mut user = vec![0.0; seconds];
        let mut system = vec![0.0; seconds];
        for p in &os.dbio_cpu {
            let i = (p.t as usize).wrapping_sub(1);
            if i < seconds {
                user[i] = p.user_pct;
                system[i] = p.system_pct;
            }
        }
        let layers = [
            Layer {
                label: "user".into(),
                color: "#1f77b4",
                values: user,
            },
            Layer {
                label: "system".into(),
                color: "#d62728",
                values: system,
            },
        ];
        o.push_str("<h3>dbio's own CPU</h3>");
        legend(o, layers.iter().map(|l| (l.label.as_str(), l.color)));
        o.push_str(&chart::stacked(
            Measure::Percent("% of one CPU", false),
            seconds,
            &layers,
            None,
        ));
    }
    if let Some(x) = &os.cross_check {
        let _ = write!(
            o,
            "<h3>Cross-check</h3><table><tr><th>Device</th><th>dbio requests</th>\
             <th>Device requests</th><th>Ratio</th></tr><tr><td>{}</td><td>{}</td><td>{}</td>\
             <td>{:.3}</td></tr></table>",
            escape(&x.device),
            thousands(x.dbio_requests),
            thousands(x.device_requests),
            x.ratio
        );
    }
}

fn lint_and_warnings(o: &mut String, r: &RunResult) {
    if !r.lint.is_empty() {
        o.push_str(
            "<h2 id=\"lint\">Configuration findings</h2><div class=\"wide\"><table><tr>\
             <th>Severity</th><th class=\"l\">Rule</th><th class=\"l\">Subject</th>\
             <th class=\"l\">Finding</th></tr>",
        );
        for l in &r.lint {
            let _ = write!(
                o,
                "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
                escape(&l.severity),
                escape(&l.rule),
                escape(&l.subject),
                escape(&l.message)
            );
        }
        o.push_str("</table></div>");
    }
    o.push_str("<h2 id=\"warnings\">Warnings</h2>");
    if r.warnings.is_empty() {
        o.push_str("<p class=\"note\">None.</p>");
    } else {
        o.push_str("<ul class=\"warn\">");
        for w in &r.warnings {
            let _ = write!(o, "<li>{}</li>", escape(w));
        }
        o.push_str("</ul>");
    }
}

/// Any JSON value as nested lists: objects as `key: value` items, arrays as numbered ones.
fn json_tree(o: &mut String, v: &serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::Object(map) if map.is_empty() => o.push_str("{}"),
        Value::Array(items) if items.is_empty() => o.push_str("[]"),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            o.push_str(&escape(&parts.join(", ")));
        }
        Value::Object(map) => {
            o.push_str("<ul>");
            for (k, v) in map {
                let _ = write!(o, "<li><b>{}</b>: ", escape(k));
                json_tree(o, v);
                o.push_str("</li>");
            }
            o.push_str("</ul>");
        }
        Value::Array(items) => {
            o.push_str("<ul>");
            for (i, v) in items.iter().enumerate() {
                let _ = write!(o, "<li><b>[{i}]</b> ");
                json_tree(o, v);
                o.push_str("</li>");
            }
            o.push_str("</ul>");
        }
        _ => o.push_str(&escape(&scalar(v))),
    }
}

fn scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "—".into(),
        other => other.to_string(),
    }
}

/// A row of colour swatches naming the series of the charts below it.
pub(crate) fn legend<'a>(o: &mut String, items: impl Iterator<Item = (&'a str, &'a str)>) {
    o.push_str("<div class=\"legend\">");
    for (label, color) in items {
        let _ = write!(
            o,
            "<span><i style=\"background:{color}\"></i>{}</span>",
            escape(label)
        );
    }
    o.push_str("</div>");
}

/// The colour of the `i`-th event (or run).
pub(crate) fn event_color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// ASH colours: ON CPU green; an event the colour it has in the other charts; any other
/// state (a background writer's event, "idle") the next free colour.
fn state_color(r: &RunResult, state: &str, k: usize) -> &'static str {
    if state == "ON CPU" {
        return ON_CPU_COLOR;
    }
    match r.events.iter().position(|e| e.name == state) {
        Some(i) => event_color(i),
        None => event_color(r.events.len() + k),
    }
}

/// Text made safe for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Microseconds with sensible precision: `3.21`, `45.6`, `1,234`.
pub(crate) fn us(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        thousands(v.round() as u64)
    }
}

/// A rate with two decimals and thousands separators: `56,750.63`.
pub(crate) fn decimal(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let cents = (v.abs() * 100.0).round() as u64;
    let sign = if v < 0.0 && cents > 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", thousands(cents / 100), cents % 100)
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

#[cfg(test)]
mod tests;
