//! `report.html` of `dbio mem`: one self-contained page (inline SVG, no script) made from
//! the result alone — the latency curve on a log size axis with the cache levels marked,
//! the NUMA matrix as heat tables, the loaded-latency curve, or where shared memory lives.
//! The page skeleton and style are the run report's ([`crate::report::html`]).

use std::fmt::Write;

use super::result::{MemResult, NumaJson, ShmJson};
use super::topology::format_cpu_list;
use crate::report::html::{Page, escape, event_color, legend, thousands};
use crate::units::{human_bytes, size_label};

pub fn render(r: &MemResult) -> String {
    let title = match &r.shm {
        Some(_) => "shared memory placement",
        None => "memory latency",
    };
    let mut page = Page::new(&format!("dbio mem — {title} — {}", r.started_at));
    let o = &mut page.body;
    let _ = write!(
        o,
        "<h1>dbio mem — {title}</h1><p class=\"sub\">{} · {} · kernel {} · {} CPUs · dbio {}</p>",
        escape(&r.started_at),
        escape(&r.host.hostname),
        escape(&r.host.kernel),
        r.host.cpus,
        escape(&r.dbio_version)
    );
    if r.partial {
        let _ = write!(
            o,
            "<p class=\"alert\">Partial result: {} after {:.1} s.</p>",
            escape(&r.stop_reason),
            r.elapsed_s
        );
    }
    machine(o, r);
    if let Some(curve) = &r.curve {
        o.push_str("<h2 id=\"curve\">Latency by working set</h2>");
        let _ = write!(
            o,
            "<p class=\"note\">Dependent loads over a random cycle of {}-byte lines on {} pages, \
             chased on CPU {}; each point is the median repetition (whiskers: fastest and slowest). \
             Dashed lines: cache sizes from sysfs.</p>",
            r.config.line_bytes,
            escape(&r.pages),
            r.config.cpu
        );
        let marks: Vec<(f64, String)> = r
            .topology
            .caches
            .iter()
            .map(|c| {
                (
                    c.size_bytes as f64,
                    format!("{} {}", c.name(), size_label(c.size_bytes)),
                )
            })
            .collect();
        let points: Vec<Point> = curve
            .iter()
            .map(|p| Point {
                x: p.size_bytes as f64,
                y: p.ns,
                lo: p.min_ns,
                hi: p.max_ns,
                tip: format!(
                    "{}: {:.2} ns per load ({}; spread {:.1} %, {} reps)",
                    human_bytes(p.size_bytes),
                    p.ns,
                    p.level,
                    p.spread_pct,
                    p.reps
                ),
            })
            .collect();
        o.push_str(&xy_chart(
            &Axis::log_size(&points),
            &Axis::log_ns(&points),
            &[Series {
                label: "ns per load".into(),
                color: event_color(0),
                points,
            }],
            &marks,
        ));
        o.push_str("<table><tr><th>Level</th><th>Size</th><th>ns per load</th><th>at working set</th></tr>");
        for l in &r.levels {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&l.name),
                l.size_bytes.map_or("—".into(), human_bytes),
                l.ns.map_or("—".into(), |v| format!("{v:.2}")),
                l.at_size_bytes
                    .map_or_else(|| escape(l.note.as_deref().unwrap_or("—")), size_label)
            );
        }
        o.push_str("</table>");
    }
    if let Some(n) = &r.numa {
        numa(o, n);
    }
    if let Some(l) = &r.loaded {
        o.push_str("<h2 id=\"loaded\">Loaded latency</h2>");
        let _ = write!(
            o,
            "<p class=\"note\">The chase ({} on CPU {}) while 0, 1, 2, … other threads read {} of \
             their own each, front to back: latency against the bandwidth they reach.</p>",
            size_label(r.config.loaded_size_bytes),
            r.config.cpu,
            size_label(r.config.reader_bytes)
        );
        let points: Vec<Point> = l
            .iter()
            .map(|p| Point {
                x: p.bandwidth_gib_s,
                y: p.latency_ns,
                lo: p.latency_ns,
                hi: p.latency_ns,
                tip: format!(
                    "{} reading thread(s): {:.2} GiB/s, {:.1} ns per load",
                    p.threads, p.bandwidth_gib_s, p.latency_ns
                ),
            })
            .collect();
        o.push_str(&xy_chart(
            &Axis::linear(
                &points,
                |p| p.x,
                "read bandwidth of the other threads (GiB/s)",
            ),
            &Axis::linear(&points, |p| p.hi, "ns per load"),
            &[Series {
                label: "loaded latency".into(),
                color: event_color(1),
                points,
            }],
            &[],
        ));
        o.push_str("<table><tr><th>Reading threads</th><th>Read GiB/s</th><th>ns per load</th><th>spread</th><th class=\"l\">CPUs</th></tr>");
        for p in l {
            let _ = write!(
                o,
                "<tr><td>{}</td><td>{:.2}</td><td>{:.1}</td><td>{:.1} %</td><td class=\"l\">{}</td></tr>",
                p.threads,
                p.bandwidth_gib_s,
                p.latency_ns,
                p.spread_pct,
                escape(&format_cpu_list(&p.cpus))
            );
        }
        o.push_str("</table>");
    }
    if let Some(s) = &r.shm {
        shm(o, r, s);
    }
    if !r.warnings.is_empty() {
        o.push_str("<h2 id=\"warnings\">Warnings</h2><ul class=\"warn\">");
        for w in &r.warnings {
            let _ = write!(o, "<li>{}</li>", escape(w));
        }
        o.push_str("</ul>");
    }
    page.finish()
}

fn machine(o: &mut String, r: &MemResult) {
    o.push_str("<h2 id=\"machine\">Machine and configuration</h2><table class=\"kv\">");
    let mut row = |k: &str, v: String| {
        let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(&v));
    };
    let t = &r.topology;
    let caches: Vec<String> = t
        .caches
        .iter()
        .map(|c| format!("{} {}", c.name(), human_bytes(c.size_bytes)))
        .collect();
    row(&format!("caches of CPU {}", t.cache_cpu), caches.join(", "));
    for n in &t.nodes {
        row(
            &format!("node {}", n.id),
            format!(
                "CPUs {}, {} ({} free)",
                if n.cpus.is_empty() {
                    "none".into()
                } else {
                    format_cpu_list(&n.cpus)
                },
                human_bytes(n.memory_bytes),
                human_bytes(n.free_bytes)
            ),
        );
    }
    if r.shm.is_none() {
        let p = &r.page_size;
        row(
            "pages",
            format!(
                "{} ({}), asked for {}{}",
                p.used,
                size_label(p.bytes),
                p.requested,
                p.huge_backed_pct.map_or(String::new(), |h| format!(
                    "; {h:.0} % backed by huge pages"
                ))
            ),
        );
        row(
            "budget per figure",
            format!("{:.0} ms", r.config.budget_s * 1000.0),
        );
        row("seed", r.config.seed.to_string());
    }
    row("clock", r.config.clock.clone());
    row("elapsed", format!("{:.1} s", r.elapsed_s));
    o.push_str("</table>");
}

/// A colour from white (at `lo`) to `hot` (at `hi`) for a heat table cell.
fn heat(v: f64, lo: f64, hi: f64, hot: (u8, u8, u8)) -> String {
    let f = if hi > lo {
        ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |c: u8| (255.0 - (255.0 - c as f64) * f * 0.85).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(hot.0), mix(hot.1), mix(hot.2))
}

fn numa(o: &mut String, n: &NumaJson) {
    let _ = write!(
        o,
        "<h2 id=\"numa\">NUMA matrix</h2><p class=\"note\">Rows: the CPU node the thread ran on; \
         columns: the node the memory was bound to ({} per figure), and memory interleaved over \
         every node. Latency from one CPU of the row's node; bandwidth of all of its CPUs. In \
         brackets: the distance sysfs gives. \
         <b>!</b> marks a pair slower than the other pairs at its distance by more than 10 %.</p>",
        size_label(n.size_bytes)
    );
    let table = |o: &mut String,
                 title: &str,
                 grid: &[Vec<Option<f64>>],
                 interleaved: &[Option<f64>],
                 hot: (u8, u8, u8),
                 with_distance: bool| {
        let all: Vec<f64> = grid.iter().flatten().flatten().copied().collect();
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let _ = write!(
            o,
            "<h3>{}</h3><table><tr><th>CPU node ↓ memory node →</th>",
            escape(title)
        );
        for id in &n.nodes {
            let _ = write!(o, "<th>node {id}</th>");
        }
        o.push_str("<th>interleaved</th></tr>");
        for (i, r) in grid.iter().enumerate() {
            let _ = write!(o, "<tr><td>node {}</td>", n.nodes[i]);
            for (j, v) in r.iter().enumerate() {
                let flag = n.out_of_line.iter().find(|f| {
                    with_distance && f.cpu_node == n.nodes[i] && f.mem_node == n.nodes[j]
                });
                match v {
                    Some(v) => {
                        let _ = write!(
                            o,
                            "<td style=\"background:{}\"{}>{}{v:.1}{}</td>",
                            heat(*v, lo, hi, hot),
                            flag.map_or(String::new(), |f| format!(
                                " title=\"{}\"",
                                escape(&f.message)
                            )),
                            if flag.is_some() { "<b>!</b> " } else { "" },
                            if with_distance {
                                format!(" <span class=\"note\">({})</span>", n.distance[i][j])
                            } else {
                                String::new()
                            }
                        );
                    }
                    None => o.push_str("<td>—</td>"),
                }
            }
            match interleaved.get(i).copied().flatten() {
                Some(v) => {
                    let _ = write!(
                        o,
                        "<td style=\"background:{}\">{v:.1}</td>",
                        heat(v, lo, hi, hot)
                    );
                }
                None => o.push_str("<td>—</td>"),
            }
            o.push_str("</tr>");
        }
        o.push_str("</table>");
    };
    table(
        o,
        "Idle latency (ns per load)",
        &n.latency_ns,
        &n.interleave_ns_by_cpu_node,
        (0xd6, 0x27, 0x28),
        true,
    );
    table(
        o,
        "Read bandwidth (GiB/s)",
        &n.bandwidth_gib_s,
        &n.interleave_gib_s_by_cpu_node,
        (0x2c, 0xa0, 0x2c),
        false,
    );
    if !n.out_of_line.is_empty() {
        o.push_str("<ul class=\"warn\">");
        for f in &n.out_of_line {
            let _ = write!(o, "<li>{}</li>", escape(&f.message));
        }
        o.push_str("</ul>");
    }
}

fn shm(o: &mut String, r: &MemResult, s: &ShmJson) {
    o.push_str("<h2 id=\"shm\">Where the pages are</h2>");
    if let Some(f) = &s.file {
        let _ = write!(
            o,
            "<p>{}: {}, {} page(s) of {}{}</p>",
            escape(&f.path),
            human_bytes(f.size_bytes),
            thousands(f.pages),
            size_label(f.page_bytes),
            f.mount.as_ref().map_or(String::new(), |m| format!(
                " on {} {} (memory policy {})",
                escape(&m.fs_type),
                escape(&m.mount_point),
                escape(m.mpol.as_deref().unwrap_or("none"))
            ))
        );
    }
    if let Some(p) = &s.process {
        let _ = write!(
            o,
            "<p>Process {} ({}): the shared memory it has mapped.</p><table><tr><th>Object</th><th class=\"l\">Kind</th><th class=\"l\">Policy</th><th>Page</th>",
            p.pid,
            escape(&p.command)
        );
        for n in &r.topology.nodes {
            let _ = write!(o, "<th>node {}</th>", n.id);
        }
        o.push_str("</tr>");
        for seg in &p.segments {
            let _ = write!(
                o,
                "<tr><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>",
                escape(&seg.name),
                escape(&seg.kind),
                escape(&seg.policies.join(",")),
                size_label(seg.page_bytes)
            );
            for n in &r.topology.nodes {
                let _ = write!(
                    o,
                    "<td>{}</td>",
                    thousands(seg.pages_by_node.get(&n.id).copied().unwrap_or(0))
                );
            }
            o.push_str("</tr>");
        }
        o.push_str("</table>");
    }
    let total: u64 = s.bytes_by_node.values().sum();
    o.push_str("<table><tr><th>Node</th><th>In memory</th><th class=\"l\">Share</th></tr>");
    for (node, b) in &s.bytes_by_node {
        let share = *b as f64 / total.max(1) as f64 * 100.0;
        let _ = write!(
            o,
            "<tr><td>node {}</td><td>{}</td><td class=\"l\"><svg width=\"200\" height=\"12\"><rect width=\"{:.0}\" height=\"12\" fill=\"{}\"/></svg> {share:.1} %</td></tr>",
            escape(node),
            human_bytes(*b),
            share * 2.0,
            event_color(0)
        );
    }
    o.push_str("</table>");
    let _ = write!(o, "<p><b>Verdict:</b> {}</p>", escape(&s.verdict));
}

/// A point of an x–y chart, with a whisker from `lo` to `hi`.
struct Point {
    x: f64,
    y: f64,
    lo: f64,
    hi: f64,
    tip: String,
}

struct Series {
    label: String,
    color: &'static str,
    points: Vec<Point>,
}

/// An axis: linear or log10, its range and labelled ticks.
struct Axis {
    log: bool,
    min: f64,
    max: f64,
    caption: String,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// Working-set sizes on a log axis, ticks every power of 4 from 1 KiB.
    fn log_size(points: &[Point]) -> Axis {
        let (min, max) = range(points.iter().map(|p| p.x));
        let ticks = (0..40)
            .map(|k| 1024.0 * 4f64.powi(k))
            .filter(|&v| v >= min / 1.01 && v <= max * 1.01)
            .map(|v| (v, size_label(v as u64)))
            .collect();
        Axis {
            log: true,
            min: min / 1.15,
            max: max * 1.15,
            caption: "working set (log scale)".into(),
            ticks,
        }
    }

    /// ns on a log axis, ticks at 1, 2, 5 × 10^k.
    fn log_ns(points: &[Point]) -> Axis {
        let (min, max) = range(points.iter().flat_map(|p| [p.lo, p.hi]));
        let (min, max) = (min.max(0.1) / 1.3, max * 1.3);
        let ticks = (-1..6)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .filter(|&v| v >= min && v <= max)
            .map(|v| (v, trim(v)))
            .collect();
        Axis {
            log: true,
            min,
            max,
            caption: "ns per load (log scale)".into(),
            ticks,
        }
    }

    /// From 0 to a round top, four or five ticks.
    fn linear(points: &[Point], f: impl Fn(&Point) -> f64, caption: &str) -> Axis {
        let max = points
            .iter()
            .map(f)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let max = if max > 0.0 { max } else { 1.0 };
        let step = nice_step(max.max(1e-9) / 4.0);
        let top = (max / step).ceil().max(1.0) * step;
        let ticks = (0..=((top / step).round() as usize))
            .map(|k| (k as f64 * step, trim(k as f64 * step)))
            .collect();
        Axis {
            log: false,
            min: 0.0,
            max: top,
            caption: caption.into(),
            ticks,
        }
    }

    /// Where `v` lies, 0..1.
    fn frac(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(1e-12).ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
        } else {
            (v - self.min) / (self.max - self.min)
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if lo > hi {
        (1.0, 2.0)
    } else if lo == hi {
        (lo / 2.0, hi * 2.0 + 1.0)
    } else {
        (lo, hi)
    }
}

fn nice_step(raw: f64) -> f64 {
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    mag * [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|&s| n <= s)
        .unwrap_or(10.0)
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

const W: f64 = 960.0;
const H: f64 = 300.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 22.0;
const BOTTOM: f64 = 34.0;

/// An x–y chart in the run report's chart style: lines with dots (tooltips), whiskers,
/// and dashed vertical marks at `marks` (x, label).
fn xy_chart(x: &Axis, y: &Axis, series: &[Series], marks: &[(f64, String)]) -> String {
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let px = |v: f64| LEFT + pw * x.frac(v);
    let py = |v: f64| TOP + ph * (1.0 - y.frac(v));
    let mut s = format!(
        r#"<svg class="chart" viewBox="0 0 {W} {H}" role="img" aria-label="{}">"#,
        escape(&y.caption)
    );
    let _ = write!(
        s,
        r#"<g class="ax"><text class="cap" x="{LEFT}" y="{:.1}">{}</text><text class="cap" x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
        TOP - 8.0,
        escape(&y.caption),
        LEFT + pw,
        H - 2.0,
        escape(&x.caption)
    );
    for (v, label) in &y.ticks {
        let yy = py(*v);
        let _ = write!(
            s,
            r#"<path class="grid" d="M{LEFT} {yy:.1}H{:.1}"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            LEFT + pw,
            LEFT - 6.0,
            yy + 4.0,
            escape(label)
        );
    }
    let base = TOP + ph;
    let _ = write!(s, r#"<path d="M{LEFT} {base:.1}H{:.1}"/>"#, LEFT + pw);
    for (v, label) in &x.ticks {
        let xx = px(*v);
        let _ = write!(
            s,
            r#"<path d="M{xx:.1} {base:.1}v4"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            base + 16.0,
            escape(label)
        );
    }
    s.push_str("</g>");
    for (v, label) in marks {
        if *v < x.min || *v > x.max {
            continue;
        }
        let xx = px(*v);
        let _ = write!(
            s,
            r#"<path class="mark" d="M{xx:.1} {TOP}V{base:.1}"/><text class="mark" x="{:.1}" y="{:.1}">{}</text>"#,
            xx + 3.0,
            TOP + 12.0,
            escape(label)
        );
    }
    for se in series {
        let mut d = String::new();
        let mut dots = String::new();
        for (i, p) in se.points.iter().enumerate() {
            let (xx, yy) = (px(p.x), py(p.y));
            let _ = write!(d, "{}{xx:.1} {yy:.1}", if i == 0 { "M" } else { " " });
            if p.hi > p.lo {
                let _ = write!(
                    dots,
                    r#"<path class="ln" stroke="{}" d="M{xx:.1} {:.1}V{:.1}"/>"#,
                    se.color,
                    py(p.lo),
                    py(p.hi)
                );
            }
            let _ = write!(
                dots,
                r#"<circle cx="{xx:.1}" cy="{yy:.1}" r="3"><title>{}</title></circle>"#,
                escape(&p.tip)
            );
        }
        let _ = write!(
            s,
            r#"<path class="ln" stroke="{}" d="{d}"><title>{}</title></path><g fill="{}">{dots}</g>"#,
            se.color,
            escape(&se.label),
            se.color
        );
    }
    s.push_str("</svg>");
    let mut out = String::new();
    legend(&mut out, series.iter().map(|s| (s.label.as_str(), s.color)));
    out + &s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_place_values() {
        let pts: Vec<Point> = [4096.0, 1073741824.0]
            .iter()
            .map(|&x| Point {
                x,
                y: 1.0,
                lo: 1.0,
                hi: 300.0,
                tip: String::new(),
            })
            .collect();
        let a = Axis::log_size(&pts);
        assert!(a.frac(4096.0) > 0.0 && a.frac(4096.0) < 0.05);
        assert!(a.frac(1073741824.0) > 0.95 && a.frac(1073741824.0) < 1.0);
        let mid = a.frac(2f64.powf(21.0));
        assert!((mid - 0.5).abs() < 0.02, "{mid}");
        assert_eq!(a.ticks.first().map(|t| t.1.as_str()), Some("4K"));
        assert_eq!(a.ticks.last().map(|t| t.1.as_str()), Some("1G"));
        let y = Axis::log_ns(&pts);
        assert!(y.ticks.iter().any(|t| t.1 == "100"));
        let l = Axis::linear(&pts, |p| p.hi, "x");
        assert_eq!((l.min, l.max), (0.0, 300.0));
        assert_eq!(heat(1.0, 1.0, 2.0, (0, 0, 0)), "#ffffff");
    }

    #[test]
    fn the_numa_heat_tables_mark_the_hidden_hop() {
        let (_, n) = crate::mem::summary::tests::four_node_numa();
        let mut o = String::new();
        numa(&mut o, &n);
        assert_eq!(o.matches("<table>").count(), 2);
        assert_eq!(o.matches("<b>!</b> 24").count(), 4, "{o}");
        assert!(o.contains("<th>interleaved</th>"));
        assert!(o.contains("248.3 <span class=\"note\">(21)</span>"), "{o}");
        assert!(
            o.contains("title=\"CPU node 0 → memory node 3: 248.3 ns"),
            "{o}"
        );
    }
}
