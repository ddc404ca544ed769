//! Charts as inline SVG drawn in Rust, so `report.html` needs no script and no network:
//! per-second lines, per-second stacked areas, and the power-of-two latency histogram.
//!
//! A one-hour run has 3,600 points per series, more than a chart has pixel columns, so long
//! series are reduced to one column per pixel: lines keep each column's minimum and maximum
//! (a one-second stall still shows), stacked areas keep its mean (they show averages
//! anyway). Coordinates carry at most one decimal. Together this keeps a one-hour report
//! well under 2 MB.

use std::fmt::{self, Write};

use super::escape;
use crate::report::sections::format::bucket_label;
/// Latencies (axis ticks, histogram bounds, markers) are written as every report writes them.
pub use crate::report::sections::format::latency_label as duration_label;

/// Every chart is drawn in a viewBox this wide and scaled to the page width.
pub(super) const WIDTH: f64 = 960.0;
pub(super) const LEFT: f64 = 58.0;
/// Room for the last time or latency label, centred on the plot's right edge.
pub(super) const RIGHT: f64 = 30.0;
pub(super) const TOP: f64 = 22.0;
pub(super) const BOTTOM: f64 = 28.0;
pub(super) const PLOT_W: f64 = WIDTH - LEFT - RIGHT;
/// At most one drawn point (or min/max pair) per pixel column.
pub(super) const COLUMNS: usize = PLOT_W as usize;
/// Short series get a dot per second, so a 5-second run does not look like three lines.
pub(super) const DOTS_UP_TO: usize = 60;

/// What a y axis measures (the model's): decides its unit, its tick labels and its caption.
pub use crate::report::sections::Measure;
/// One line of a per-second chart: `values[i]` is second `i + 1`; `None` draws a gap.
pub struct Line {
    pub label: String,
    pub color: &'static str,
    pub dashed: bool,
    pub values: Vec<Option<f64>>,
}

/// One layer of a stacked per-second chart: `values[i]` is second `i + 1`.
pub struct Layer {
    pub label: String,
    pub color: &'static str,
    pub values: Vec<f64>,
}

/// A horizontal reference line, e.g. the number of sessions on the ASH chart.
pub struct Reference {
    pub value: f64,
    pub label: String,
}

/// A stretch of seconds shaded behind the lines (`from`..`to` seconds into the window), with
/// what it marks as its tooltip.
pub struct Shade {
    pub from: f64,
    pub to: f64,
    pub color: &'static str,
    pub label: String,
}

/// Per-second lines over `seconds` seconds, over `shades`.
pub fn lines(measure: Measure, seconds: usize, lines: &[Line], shades: &[Shade]) -> String {
    let height = 230.0;
    let max = lines
        .iter()
        .flat_map(|l| l.values.iter().flatten())
        .fold(0.0f64, |m, &v| if v.is_finite() { m.max(v) } else { m });
    let y = YAxis::new(measure, max, height);
    let x = TimeAxis::new(seconds);
    let mut s = open(height, &format!("{} per second", y.caption));
    for b in shades {
        let (a, z) = (x.pos(b.from.max(0.0)), x.pos(b.to.min(seconds as f64)));
        let _ = write!(
            s,
            r#"<rect class="band" fill="{}" x="{}" y="{}" width="{}" height="{}"><title>{}</title></rect>"#,
            b.color,
            N(a),
            N(TOP),
            N((z - a).max(1.0)),
            N(height - BOTTOM - TOP),
            escape(&b.label)
        );
    }
    y.draw(&mut s);
    x.draw(&mut s, height);
    for line in lines {
        draw_line(&mut s, line, &x, &y);
    }
    s.push_str("</svg>");
    s
}

/// Per-second layers stacked on each other (the first at the bottom).
pub fn stacked(
    measure: Measure,
    seconds: usize,
    layers: &[Layer],
    reference: Option<&Reference>,
    min_top: f64,
) -> String {
    let height = 250.0;
    let cols = columns(seconds);
    // Mean per column, stacked.
    let mut tops: Vec<Vec<f64>> = Vec::with_capacity(layers.len());
    let mut below = vec![0.0; cols.len()];
    for layer in layers {
        let top: Vec<f64> = cols
            .iter()
            .zip(&below)
            .map(|(&(a, b), base)| base + mean(&layer.values, a, b))
            .collect();
        below.clone_from(&top);
        tops.push(top);
    }
    let max = below.iter().copied().fold(min_top, f64::max);
    let y = YAxis::new(measure, max, height);
    let x = TimeAxis::new(seconds);
    let mut s = open(height, &y.caption);
    y.draw(&mut s);
    x.draw(&mut s, height);
    let zero = vec![0.0; cols.len()];
    for (i, layer) in layers.iter().enumerate() {
        let bottom = if i == 0 { &zero } else { &tops[i - 1] };
        let top = &tops[i];
        if top.iter().zip(bottom).all(|(t, b)| t - b <= 0.0) {
            continue;
        }
        let _ = write!(s, r#"<path class="s" fill="{}" d=""#, layer.color);
        // Along the top, left to right, one flat step per column ...
        let mut last = f64::NAN;
        for (c, &(a, b)) in cols.iter().enumerate() {
            let yy = y.pos(top[c]);
            if c == 0 {
                let _ = write!(s, "M{} {}", N(x.pos(a as f64)), N(yy));
            } else if N(yy) != N(last) {
                let _ = write!(s, "V{}", N(yy));
            }
            let _ = write!(s, "H{}", N(x.pos(b as f64)));
            last = yy;
        }
        // ... and back along the layer below, right to left.
        for (c, &(a, _)) in cols.iter().enumerate().rev() {
            let yy = y.pos(bottom[c]);
            if N(yy) != N(last) {
                let _ = write!(s, "V{}", N(yy));
            }
            let _ = write!(s, "H{}", N(x.pos(a as f64)));
            last = yy;
        }
        let _ = write!(s, r#"Z"><title>{}</title></path>"#, escape(&layer.label));
    }
    // The reference is drawn where it falls on the scale; above it, it is left out.
    if let Some(r) = reference.filter(|r| r.value <= y.top * y.divisor) {
        let yy = y.pos(r.value);
        let _ = write!(
            s,
            r#"<path class="ref" d="M{} {}H{}"/><text class="ref" x="{}" y="{}" text-anchor="end">{}</text>"#,
            N(LEFT),
            N(yy),
            N(LEFT + PLOT_W),
            N(LEFT + PLOT_W - 4.0),
            N(yy - 4.0),
            escape(&r.label)
        );
    }
    s.push_str("</svg>");
    s
}

/// Lines over a row of values rather than seconds (a sweep's swept values, evenly spaced
/// whatever their size, since sweeps usually double): `lines[k].values[i]` belongs to
/// `x_labels[i]`; `None` draws a gap. Every point gets a dot with its value as tooltip.
pub fn by_value(measure: Measure, x_caption: &str, x_labels: &[String], lines: &[Line]) -> String {
    let height = 240.0;
    let max = lines
        .iter()
        .flat_map(|l| l.values.iter().flatten())
        .fold(0.0f64, |m, &v| if v.is_finite() { m.max(v) } else { m });
    let y = YAxis::new(measure, max, height);
    let n = x_labels.len().max(1);
    let pos = |i: usize| LEFT + PLOT_W * (i as f64 + 0.5) / n as f64;
    let mut s = open(height, &format!("{} by {x_caption}", y.caption));
    y.draw(&mut s);
    let base = height - BOTTOM;
    let _ = write!(
        s,
        r#"<g class="ax"><path d="M{} {}H{}"/>"#,
        N(LEFT),
        N(base),
        N(LEFT + PLOT_W)
    );
    for (i, label) in x_labels.iter().enumerate() {
        let _ = write!(
            s,
            r#"<path d="M{} {}v4"/><text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            N(pos(i)),
            N(base),
            N(pos(i)),
            N(base + 16.0),
            escape(label)
        );
    }
    let _ = write!(
        s,
        r#"<text class="cap" x="{}" y="{}" text-anchor="end">{}</text></g>"#,
        N(LEFT + PLOT_W),
        N(TOP - 8.0),
        escape(x_caption)
    );
    for line in lines {
        let mut d = String::new();
        let mut dots = String::new();
        let mut in_segment = false;
        for (i, v) in line.values.iter().enumerate().take(n) {
            let Some(v) = v.filter(|v| v.is_finite()) else {
                in_segment = false;
                continue;
            };
            let (xx, yy) = (N(pos(i)), N(y.pos(v)));
            let _ = write!(d, "{}{xx} {yy}", if in_segment { " " } else { "M" });
            in_segment = true;
            let _ = write!(
                dots,
                r#"<circle cx="{xx}" cy="{yy}" r="3"><title>{}: {} at {} {}</title></circle>"#,
                escape(&line.label),
                y.measure.value_label(v),
                escape(x_caption),
                escape(x_labels.get(i).map_or("", String::as_str))
            );
        }
        if d.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            r#"<path class="ln{}" stroke="{}" d="{d}"><title>{}</title></path><g fill="{}">{dots}</g>"#,
            if line.dashed { " dash" } else { "" },
            line.color,
            escape(&line.label),
            line.color
        );
    }
    s.push_str("</svg>");
    s
}

/// One series of a latency histogram: `counts[i]` belongs to the bucket `< lt_us[i]`.
pub struct Bars {
    pub label: String,
    pub color: &'static str,
    pub counts: Vec<u64>,
}

/// A latency histogram over power-of-two microsecond buckets: one band per bucket, so the
/// latency axis is logarithmic; the y axis is each series' share of its own requests.
/// Several series (runs being compared) stand side by side in each band. `lt_us` are the
/// upper bounds of the buckets to draw; `markers` are percentiles (label, µs) drawn as
/// vertical lines.
pub fn histogram(lt_us: &[u64], series: &[Bars], markers: &[(&str, f64)]) -> String {
    let height = 210.0;
    let pcts: Vec<Vec<f64>> = series
        .iter()
        .map(|b| {
            let total: u64 = b.counts.iter().sum();
            b.counts
                .iter()
                .map(|&c| {
                    if total > 0 {
                        100.0 * c as f64 / total as f64
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect();
    let max = pcts.iter().flatten().copied().fold(0.0f64, f64::max);
    let y = YAxis::new(Measure::Percent("% of requests", false), max, height);
    let mut s = open(height, &y.caption);
    y.draw(&mut s);
    let n = lt_us.len().max(1);
    let band = PLOT_W / n as f64;
    let base = height - BOTTOM;
    // Bucket i spans [lt/2, lt): its left edge is the previous bucket's bound.
    let label_every = if band >= 44.0 {
        1
    } else {
        (44.0 / band).ceil() as usize
    };
    let _ = write!(
        s,
        r#"<g class="ax"><path d="M{} {}H{}"/>"#,
        N(LEFT),
        N(base),
        N(LEFT + PLOT_W)
    );
    for i in 0..=n {
        let xx = LEFT + band * i as f64;
        let bound = match (i, lt_us.first()) {
            (0, Some(&lt)) => lt / 2,
            (0, None) => 0,
            _ => lt_us[i - 1],
        };
        let _ = write!(s, r#"<path d="M{} {}v4"/>"#, N(xx), N(base));
        if i % label_every == 0 && !(i == 0 && bound == 0) {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                N(xx),
                N(base + 16.0),
                bucket_label(bound)
            );
        }
    }
    s.push_str("</g>");
    let k = series.len().max(1) as f64;
    let bar_w = ((band - 2.0) / k).max(1.0);
    for (j, (b, pct)) in series.iter().zip(&pcts).enumerate() {
        for (i, (&lt, &count)) in lt_us.iter().zip(&b.counts).enumerate() {
            if count == 0 {
                continue;
            }
            let p = pct[i];
            let top = y.pos(p);
            let x0 = LEFT + band * i as f64 + 1.0 + bar_w * j as f64;
            let who = if series.len() > 1 {
                format!("{}: ", b.label)
            } else {
                String::new()
            };
            let _ = write!(
                s,
                r#"<rect fill="{}" x="{}" y="{}" width="{}" height="{}"><title>{}{} to {}: {} requests ({:.2}%)</title></rect>"#,
                b.color,
                N(x0),
                N(top),
                N(bar_w),
                N((base - top).max(0.5)),
                escape(&who),
                bucket_label(lt / 2),
                bucket_label(lt),
                super::thousands(count),
                p
            );
            if series.len() == 1 && band >= 30.0 && p >= 0.05 {
                // Inside a tall bar (in white), above a short one: clear of the markers.
                let inside = base - top > 18.0;
                let _ = write!(
                    s,
                    r#"<text class="val{}" x="{}" y="{}" text-anchor="middle">{}</text>"#,
                    if inside { " in" } else { "" },
                    N(x0 + bar_w / 2.0),
                    N(if inside { top + 13.0 } else { top - 3.0 }),
                    percent_label(p)
                );
            }
        }
    }
    // Percentile markers: position on the log2 axis, inside the bucket it falls in.
    if let Some(&first_lt) = lt_us.first() {
        let lo = (first_lt as f64).log2() - 1.0;
        for (k, &(label, us)) in markers.iter().enumerate() {
            if us.is_nan() || us <= 0.0 {
                continue;
            }
            let pos = (us.log2() - lo).clamp(0.0, n as f64);
            let xx = LEFT + band * pos;
            let ty = TOP + 10.0 + 12.0 * k as f64;
            // Right of its line, or left of it where the label would leave the chart.
            let text = format!("{label} {}", duration_label(us));
            let (tx, anchor) = if xx + 3.0 + text_width(&text) <= WIDTH - 2.0 {
                (xx + 3.0, "start")
            } else {
                (xx - 3.0, "end")
            };
            let _ = write!(
                s,
                r#"<path class="mark" d="M{} {}V{}"/><text class="mark" x="{}" y="{}" text-anchor="{anchor}">{}</text>"#,
                N(xx),
                N(TOP),
                N(base),
                N(tx),
                N(ty),
                escape(&text),
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// The width a chart label takes at most: 11 px text, about 0.6 em a character.
pub(super) fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * 6.6
}

/// The opening tag; `caption` names the y axis for screen readers too.
pub(super) fn open(height: f64, caption: &str) -> String {
    let mut s = String::with_capacity(16 * 1024);
    let _ = write!(
        s,
        r#"<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}">"#,
        N(WIDTH),
        N(height),
        escape(caption)
    );
    s
}

pub(super) fn draw_line(s: &mut String, line: &Line, x: &TimeAxis, y: &YAxis) {
    let cols = columns(line.values.len());
    let dotted = line.values.len() <= DOTS_UP_TO;
    let mut d = String::with_capacity(cols.len() * 12);
    let mut dots = String::new();
    let mut in_segment = false;
    let mut segment_points = 0;
    let mut peak: Option<(f64, usize)> = None;
    for &(a, b) in &cols {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for (i, v) in line.values[a..b].iter().enumerate() {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                lo = lo.min(v);
                hi = hi.max(v);
                if peak.is_none_or(|(p, _)| v > p) {
                    peak = Some((v, a + i + 1));
                }
            }
        }
        if lo > hi {
            if in_segment && segment_points == 1 {
                d.push_str("h0");
            }
            in_segment = false;
            continue;
        }
        let xx = N(x.pos((a + b) as f64 / 2.0));
        let (ylo, yhi) = (N(y.pos(lo)), N(y.pos(hi)));
        if in_segment {
            let _ = write!(d, " {xx} {ylo}");
        } else {
            let _ = write!(d, "M{xx} {ylo}");
            segment_points = 0;
        }
        segment_points += 1;
        if ylo != yhi {
            let _ = write!(d, " {xx} {yhi}");
            segment_points += 1;
        }
        in_segment = true;
        if dotted {
            let _ = write!(dots, r#"<circle cx="{xx}" cy="{yhi}" r="2.5"/>"#);
        }
    }
    if in_segment && segment_points == 1 {
        d.push_str("h0");
    }
    if d.is_empty() {
        return;
    }
    let title = match peak {
        Some((v, t)) => format!(
            "{}: peak {} at second {t}",
            line.label,
            y.measure.value_label(v)
        ),
        None => line.label.clone(),
    };
    let _ = write!(
        s,
        r#"<path class="ln{}" stroke="{}" d="{d}"><title>{}</title></path>"#,
        if line.dashed { " dash" } else { "" },
        line.color,
        escape(&title)
    );
    if !dots.is_empty() {
        let _ = write!(s, r#"<g fill="{}">{dots}</g>"#, line.color);
    }
}

/// The index ranges `[a, b)` drawn as one column each: one per second when they fit,
/// else evenly spread over the plot's pixel columns.
pub(super) fn columns(n: usize) -> Vec<(usize, usize)> {
    let cols = n.min(COLUMNS);
    (0..cols)
        .map(|c| (c * n / cols, (c + 1) * n / cols))
        .collect()
}

pub(super) fn mean(values: &[f64], a: usize, b: usize) -> f64 {
    let slice = values.get(a..b.min(values.len())).unwrap_or(&[]);
    let finite = slice.iter().filter(|v| v.is_finite());
    let n = b.saturating_sub(a).max(1);
    finite.sum::<f64>() / n as f64
}

/// The time axis: seconds of the measured window; second `t` covers `(t-1, t]`.
pub(super) struct TimeAxis {
    seconds: usize,
}

impl TimeAxis {
    fn new(seconds: usize) -> TimeAxis {
        TimeAxis {
            seconds: seconds.max(1),
        }
    }

    /// Position of time `t` seconds into the window.
    fn pos(&self, t: f64) -> f64 {
        LEFT + t / self.seconds as f64 * PLOT_W
    }

    fn draw(&self, s: &mut String, height: f64) {
        let n = self.seconds;
        let step = [
            1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400,
        ]
        .into_iter()
        .find(|&st| n / st <= 10)
        .unwrap_or(n.div_ceil(10).max(1));
        let base = height - BOTTOM;
        let _ = write!(
            s,
            r#"<g class="ax"><path d="M{} {}H{}"/>"#,
            N(LEFT),
            N(base),
            N(LEFT + PLOT_W)
        );
        for t in (0..=n).step_by(step) {
            let xx = self.pos(t as f64);
            let _ = write!(
                s,
                r#"<path d="M{} {}v4"/><text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                N(xx),
                N(base),
                N(xx),
                N(base + 16.0),
                clock_label(t)
            );
        }
        s.push_str("</g>");
    }
}

/// A linear y axis from 0 with "nice" ticks.
pub(super) struct YAxis {
    measure: Measure,
    /// Values are divided by this before they are labelled (µs → ms).
    divisor: f64,
    step: f64,
    top: f64,
    height: f64,
    caption: String,
}

impl YAxis {
    fn new(measure: Measure, max: f64, height: f64) -> YAxis {
        let (divisor, caption) = match measure {
            Measure::Amount(c) => (1.0, c.to_string()),
            Measure::Percent(c, _) => (1.0, c.to_string()),
            Measure::LatencyUs(c) => {
                let (d, unit) = latency_unit(max);
                (d, format!("{c} ({unit})"))
            }
        };
        let scaled = max / divisor;
        let (step, top) = match measure {
            Measure::Percent(_, true) => (25.0, 100.0f64.max(nice_top(scaled).1)),
            _ => nice_top(scaled),
        };
        YAxis {
            measure,
            divisor,
            step,
            top,
            height,
            caption,
        }
    }

    /// Position of raw value `v` (before division).
    fn pos(&self, v: f64) -> f64 {
        let plot_h = self.height - TOP - BOTTOM;
        let f = (v / self.divisor / self.top).clamp(0.0, 1.0);
        TOP + plot_h * (1.0 - f)
    }

    fn draw(&self, s: &mut String) {
        let _ = write!(
            s,
            r#"<g class="ax"><text class="cap" x="{}" y="{}">{}</text>"#,
            N(LEFT),
            N(TOP - 8.0),
            escape(&self.caption)
        );
        let mut k = 0.0;
        while k <= self.top * (1.0 + 1e-9) {
            grid_line(s, self.pos(k * self.divisor), &tick_label(k, self.step));
            k += self.step;
        }
        s.push_str("</g>");
    }
}

impl Measure {
    /// A value with its unit, for tooltips.
    pub(super) fn value_label(&self, v: f64) -> String {
        match self {
            Measure::Amount(unit) => format!("{} {unit}", tick_label(v, 0.01)),
            Measure::Percent(..) => format!("{v:.1}%"),
            Measure::LatencyUs(_) => duration_label(v),
        }
    }
}

/// Divisor and unit for latencies up to `max_us`.
pub(super) fn latency_unit(max_us: f64) -> (f64, &'static str) {
    if max_us >= 1e6 {
        (1e6, "s")
    } else if max_us >= 1e3 {
        (1e3, "ms")
    } else {
        (1.0, "µs")
    }
}

/// A tick step of 1, 2, 2.5 or 5 × 10^k giving about four intervals, and the top tick.
pub(super) fn nice_top(max: f64) -> (f64, f64) {
    if max.is_nan() || max <= 0.0 || !max.is_finite() {
        return (0.25, 1.0);
    }
    let raw = max / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let step = mag
        * if norm <= 1.0 {
            1.0
        } else if norm <= 2.0 {
            2.0
        } else if norm <= 2.5 {
            2.5
        } else if norm <= 5.0 {
            5.0
        } else {
            10.0
        };
    (step, (max / step).ceil().max(1.0) * step)
}

/// `20000` → `20k`, `1500000` → `1.5M`, `0.25` → `0.25`.
/// A horizontal grid line across the plot at `yy`, with its value `label` on the left
/// (`label` is text, escaped here).
pub(super) fn grid_line(s: &mut String, yy: f64, label: &str) {
    let _ = write!(
        s,
        r#"<path class="grid" d="M{} {}H{}"/><text x="{}" y="{}" text-anchor="end">{}</text>"#,
        N(LEFT),
        N(yy),
        N(LEFT + PLOT_W),
        N(LEFT - 6.0),
        N(yy + 4.0),
        escape(label)
    );
}

pub(super) fn tick_label(v: f64, step: f64) -> String {
    let trim = |x: f64, decimals: usize| {
        let s = format!("{x:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", trim(v / 1e6, 2))
    } else if a >= 1e4 || (a >= 1e3 && step >= 100.0) {
        format!("{}k", trim(v / 1e3, 2))
    } else {
        let decimals = if step >= 1.0 {
            if a >= 100.0 { 0 } else { 1 }
        } else {
            2
        };
        trim(v, decimals)
    }
}

pub(super) fn percent_label(p: f64) -> String {
    if p >= 10.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// Seconds into the window as a clock: `45s`, `10m`, `1h`, `1h30m`.
pub(super) fn clock_label(t: usize) -> String {
    if t < 120 && !t.is_multiple_of(60) || t == 0 {
        return format!("{t}s");
    }
    let (h, m, s) = (t / 3600, t % 3600 / 60, t % 60);
    let mut out = String::new();
    if h > 0 {
        let _ = write!(out, "{h}h");
    }
    if m > 0 {
        let _ = write!(out, "{m}m");
    }
    if s > 0 {
        let _ = write!(out, "{s}s");
    }
    out
}

/// A coordinate with at most one decimal: `12`, `12.5`.
#[derive(PartialEq)]
pub(super) struct N(pub(super) f64);

impl fmt::Display for N {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tenths = (self.0 * 10.0).round() as i64;
        if tenths % 10 == 0 {
            write!(f, "{}", tenths / 10)
        } else {
            let sign = if tenths < 0 { "-" } else { "" };
            write!(f, "{sign}{}.{}", tenths.abs() / 10, tenths.abs() % 10)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_at_the_right_edge_keeps_its_label_inside() {
        let bars = Bars {
            label: "x".into(),
            color: "#000",
            counts: vec![10, 80, 10],
        };
        // p50 on the left keeps its label right of its line; p99.9 at the last bucket's
        // upper end would run past the chart, so its label ends left of the line.
        let svg = histogram(
            &[1024, 2048, 4096],
            &[bars],
            &[("p50", 600.0), ("p99.9", 4095.0)],
        );
        let marks: Vec<(f64, &str, &str)> = svg
            .split(r#"<text class="mark" x=""#)
            .skip(1)
            .map(|t| {
                let x: f64 = t.split('"').next().unwrap().parse().unwrap();
                let anchor = t
                    .split(r#"text-anchor=""#)
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                let text = t.split('>').nth(1).unwrap().split('<').next().unwrap();
                (x, anchor, text)
            })
            .collect();
        assert_eq!(marks.len(), 2, "{svg}");
        let (x, anchor, text) = marks[0];
        assert_eq!((anchor, text), ("start", "p50 600µs"));
        assert!(x + text_width(text) <= WIDTH);
        let (x, anchor, text) = marks[1];
        assert_eq!((anchor, text), ("end", "p99.9 4.09ms"));
        assert!(x <= WIDTH && x - text_width(text) >= LEFT, "{x}");
    }

    #[test]
    fn coordinates_are_short() {
        assert_eq!(N(12.0).to_string(), "12");
        assert_eq!(N(12.04).to_string(), "12");
        assert_eq!(N(12.46).to_string(), "12.5");
        assert_eq!(N(-0.26).to_string(), "-0.3");
    }

    #[test]
    fn labels_read_well() {
        assert_eq!(duration_label(512.0), "512µs");
        assert_eq!(duration_label(1024.0), "1.02ms");
        assert_eq!(duration_label(16384.0), "16.4ms");
        assert_eq!(duration_label(1_048_576.0), "1.05s");
        assert_eq!(duration_label(0.5), "0.5µs");
        assert_eq!(tick_label(20000.0, 10000.0), "20k");
        assert_eq!(tick_label(2500.0, 500.0), "2.5k");
        assert_eq!(tick_label(0.25, 0.25), "0.25");
        assert_eq!(tick_label(1_500_000.0, 500_000.0), "1.5M");
        assert_eq!(clock_label(45), "45s");
        assert_eq!(clock_label(600), "10m");
        assert_eq!(clock_label(3600), "1h");
        assert_eq!(clock_label(5400), "1h30m");
        assert_eq!(nice_top(56_750.0), (20_000.0, 60_000.0));
        assert_eq!(nice_top(0.0), (0.25, 1.0));
    }

    #[test]
    fn gaps_break_the_line_and_long_series_are_reduced() {
        let values: Vec<Option<f64>> = (0..3600)
            .map(|i| {
                if (100..200).contains(&i) {
                    None
                } else {
                    Some(i as f64)
                }
            })
            .collect();
        let line = Line {
            label: "x".into(),
            color: "#000",
            dashed: false,
            values,
        };
        let svg = lines(Measure::Amount("requests/s"), 3600, &[line], &[]);
        let d = svg.split(r#" d=""#).last().unwrap();
        assert_eq!(d.matches('M').count(), 2, "one gap, two segments");
        assert!(
            svg.len() < 40_000,
            "3600 points reduced: {} bytes",
            svg.len()
        );
    }

    #[test]
    fn values_on_the_x_axis_each_get_a_dot() {
        let line = Line {
            label: "IOPS".into(),
            color: "#00a",
            dashed: false,
            values: vec![Some(100.0), None, Some(300.0)],
        };
        let labels: Vec<String> = ["1", "2", "4"].map(String::from).to_vec();
        let svg = by_value(Measure::Amount("requests/s"), "sessions", &labels, &[line]);
        assert_eq!(svg.matches("<circle").count(), 2);
        let d = svg
            .split(r##"class="ln" stroke="#00a" d=""##)
            .nth(1)
            .unwrap();
        let d = &d[..d.find('"').unwrap()];
        assert_eq!(d.matches('M').count(), 2, "a gap breaks the line: {d}");
        assert!(svg.contains(">4</text>") && svg.contains("sessions"));
    }

    #[test]
    fn stacked_layers_close_and_skip_empty_ones() {
        let layers = vec![
            Layer {
                label: "ON CPU".into(),
                color: "#0a0",
                values: vec![1.0; 10],
            },
            Layer {
                label: "nothing".into(),
                color: "#00a",
                values: vec![0.0; 10],
            },
        ];
        let r = Reference {
            value: 2.0,
            label: "2 sessions".into(),
        };
        let svg = stacked(Measure::Amount("sessions"), 10, &layers, Some(&r), r.value);
        assert_eq!(svg.matches(r#"class="s""#).count(), 1);
        assert!(svg.contains("2 sessions"));
    }
}
