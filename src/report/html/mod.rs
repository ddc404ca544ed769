//! `report.html`: a report as one self-contained page — the sections of a
//! [`Report`] ([`crate::report::sections`]) as HTML tables, and its charts drawn as inline
//! SVG from the points they carry ([`chart`]). No script, no font, no style sheet and no
//! image is loaded from anywhere: the file opens offline, and mailed or attached to a
//! ticket it still shows everything. A run's page is made only from its [`RunResult`], so
//! `dbio report RUN_DIR` can draw it again from `result.json`; [`compare_html`] sets
//! several runs side by side; `dbio mem` draws its own report with [`page`].

pub mod chart;
mod compare;
pub mod xy;

use std::fmt::Write;

pub use compare::compare_html;

use super::result::RunResult;
pub(crate) use super::sections::format::thousands;
use super::sections::{self, Align, Block, Chart, Color, Level, Mark, Report, Section, Table};

/// Colours for events (and runs), in order; distinguishable and readable on white.
const PALETTE: [&str; 10] = [
    "#1f77b4", "#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#bcbd22",
    "#7f7f7f", "#393b79",
];

/// Renders the report page of one run.
pub fn render(r: &RunResult) -> String {
    page(&sections::run(r))
}

/// Any report as a page of its own (the run's, `dbio mem`'s).
pub fn page(report: &Report) -> String {
    let mut page = Page::new(&report.title);
    page.report(report);
    page.finish()
}

/// The HTML skeleton shared by the run report, the comparison and the sweep page.
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

    /// Writes `report`: its title, then every section with its blocks, charts drawn from
    /// the points they carry.
    pub fn report(&mut self, report: &Report) {
        let _ = write!(self.body, "<h1>{}</h1>", escape(&report.title));
        self.sections(&report.sections);
    }

    /// Writes `sections` (of a report whose title is written), each with its blocks: a
    /// page may add what the report model does not hold (a sweep's charts) between them.
    pub fn sections(&mut self, sections: &[Section]) {
        let o = &mut self.body;
        for s in sections {
            // A part of a section gets a smaller heading, without an anchor of its own;
            // a section without a title (a sweep's lead) follows what is before it directly.
            if s.title.is_empty() {
            } else if s.level == Level::Sub {
                let _ = write!(o, "<h3>{}</h3>", escape(&s.title));
            } else {
                let _ = write!(o, "<h2 id=\"{}\">{}</h2>", escape(&s.id), escape(&s.title));
            }
            for b in &s.blocks {
                block(o, b);
            }
        }
    }
}

fn block(o: &mut String, b: &Block) {
    match b {
        Block::Fields(fields) => {
            o.push_str("<table class=\"kv\">");
            for (k, v) in fields {
                let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(v));
            }
            o.push_str("</table>");
        }
        Block::Table(t) => table(o, t),
        Block::Note(n) => {
            let _ = write!(o, "<p class=\"note\">{}</p>", escape(n));
        }
        Block::Caution(c) => {
            let _ = write!(o, "<p class=\"alert\">{}</p>", escape(c));
        }
        Block::List { items, alert: true } => {
            for i in items {
                let _ = write!(o, "<p class=\"alert\">{}</p>", escape(i));
            }
        }
        Block::List { items, .. } => {
            o.push_str("<ul class=\"warn\">");
            for i in items {
                let _ = write!(o, "<li>{}</li>", escape(i));
            }
            o.push_str("</ul>");
        }
        Block::Outline(items) => {
            o.push_str("<ul>");
            for i in items {
                let _ = write!(o, "<li>{}", escape(&i.text));
                if !i.details.is_empty() {
                    o.push_str("<ul>");
                    for d in &i.details {
                        let _ = write!(o, "<li>{}</li>", escape(d));
                    }
                    o.push_str("</ul>");
                }
                o.push_str("</li>");
            }
            o.push_str("</ul>");
        }
        Block::Tree(t) => {
            let _ = write!(o, "<pre class=\"tree\">{}</pre>", escape(t));
        }
        Block::Options(v) => {
            o.push_str("<details><summary>Every option as used</summary><div class=\"tree\">");
            json_tree(o, v);
            o.push_str("</div></details>");
        }
        Block::Chart(c) => chart_block(o, c),
    }
}

fn chart_block(o: &mut String, c: &Chart) {
    match c {
        Chart::Histogram(h) => {
            if let Some(t) = &h.title {
                let _ = write!(o, "<h3>{}</h3>", escape(t));
            }
            let bars: Vec<chart::Bars> = (h.series.iter())
                .map(|b| chart::Bars {
                    label: b.label.clone(),
                    color: event_color(b.color),
                    counts: b.counts.clone(),
                })
                .collect();
            o.push_str(&chart::histogram(&h.lt_us, &bars, &h.marks));
        }
        Chart::Legend(keys) => legend(o, (keys.iter()).map(|(l, c)| (l.as_str(), color(*c)))),
        Chart::Caption(text) => {
            let _ = write!(o, "<p class=\"note\">{}</p>", escape(text));
        }
        Chart::Lines(l) => {
            if let Some(t) = &l.title {
                let h = if l.minor { "h4" } else { "h3" };
                let _ = write!(o, "<{h}>{}</{h}>", escape(t));
            }
            if l.legend {
                legend(
                    o,
                    (l.series.iter()).map(|s| (s.label.as_str(), color(s.color))),
                );
            }
            o.push_str(&xy::plot(l));
        }
    }
}

/// A table: names left-aligned, figures right-aligned; a short row's last cell spans the
/// remaining columns; PASS and FAIL coloured.
fn table(o: &mut String, t: &Table) {
    let class = |a: Align| {
        if a == Align::Right {
            ""
        } else {
            " class=\"l\""
        }
    };
    o.push_str("<div class=\"wide\"><table><tr>");
    for c in &t.columns {
        let _ = write!(o, "<th{}>{}</th>", class(c.align), escape(&c.label));
    }
    o.push_str("</tr>");
    for row in &t.rows {
        o.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let span = t.columns.len().saturating_sub(row.len());
            let (align, colspan) = if i + 1 == row.len() && span > 0 {
                (Align::Left, format!(" colspan=\"{}\"", span + 1))
            } else {
                (
                    t.columns.get(i).map_or(Align::Left, |c| c.align),
                    String::new(),
                )
            };
            let mark = match cell.mark {
                Mark::Plain => class(align),
                Mark::Pass => " class=\"pass\"",
                Mark::Fail => " class=\"fail\"",
            };
            let _ = match &cell.link {
                Some(href) => write!(
                    o,
                    "<td{mark}{colspan}><a href=\"{}\">{}</a></td>",
                    escape(href),
                    escape(&cell.text)
                ),
                None => write!(o, "<td{mark}{colspan}>{}</td>", escape(&cell.text)),
            };
        }
        o.push_str("</tr>");
    }
    o.push_str("</table></div>");
}

const STYLE: &str = "\
body{margin:0;background:#fff;color:#222;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}\
main{max-width:1100px;margin:0 auto;padding:16px 24px 40px}\
h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:3px}\
h3{font-size:15px;margin:16px 0 4px}h4{font-size:13px;margin:10px 0 2px;color:#444}.sub{color:#666;margin:0 0 12px}\
table{border-collapse:collapse;margin:6px 0 10px;font-variant-numeric:tabular-nums}\
th,td{padding:3px 7px;border-bottom:1px solid #eee;text-align:right;vertical-align:top}\
th{background:#f6f6f6;font-weight:600}th:first-child,td:first-child{text-align:left;white-space:nowrap}\
table.kv td{text-align:left}table.kv td:first-child{color:#555;white-space:nowrap}\
td.l,th.l{text-align:left}.wide{overflow-x:auto}\
.alert{background:#fde8e8;border:1px solid #e0a0a0;padding:6px 10px;border-radius:3px}\
ul.warn li{margin:2px 0}.note{color:#666;font-size:13px}\
svg.chart{width:100%;height:auto;display:block;margin:2px 0 4px}\
svg.chart text{font-size:11px;fill:#555}svg.chart .cap{font-size:12px;fill:#333}\
.ax path{stroke:#999;fill:none}.ax path.grid{stroke:#e6e6e6}\
.ln{fill:none;stroke-width:1.5;stroke-linejoin:round}.dash{stroke-dasharray:5 3}\
.ref{stroke:#333;stroke-dasharray:2 3;fill:none}.band{opacity:.15}.mark{stroke:#444;stroke-dasharray:3 2;fill:none}\
svg.chart text.ref,svg.chart text.mark{fill:#222;stroke:#fff;stroke-width:3px;stroke-dasharray:none;paint-order:stroke}\
svg.chart text.val{fill:#444}svg.chart text.val.in{fill:#fff}\
svg.chart rect:hover,svg.chart path.ln:hover{opacity:.75}svg.chart rect.band:hover{opacity:.3}\
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;margin:2px 0 6px}\
.legend i{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-1px;border-radius:2px}\
.tree ul{margin:2px 0;padding-left:20px}.tree li{margin:1px 0}.tree b{font-weight:600}\
details summary{cursor:pointer;color:#555}\
pre.tree{background:#f8f8f8;border:1px solid #eee;padding:8px 10px;white-space:pre-wrap;font-size:12.5px;line-height:1.4}\
td.pass{color:#17702a;font-weight:600}td.fail{color:#b3001b;font-weight:600}\
footer{margin-top:32px;color:#888;font-size:12px}";

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

/// A model colour as drawn.
pub(crate) fn color(c: Color) -> &'static str {
    match c {
        Color::Palette(i) => event_color(i),
        Color::Fixed(c) => c,
    }
}

/// The colour of the `i`-th event (or run).
pub(crate) fn event_color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Text made safe for HTML element content and attribute values, control characters
/// escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters from names and paths show escaped, as on a terminal;
            // a line break stays one (trees and notes are preformatted).
            '\n' => out.push('\n'),
            c => out.push_str(&crate::units::shown(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

#[cfg(test)]
mod tests;
