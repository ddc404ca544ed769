//! The x–y charts of the report model: lines over seconds, over named values, over sizes on
//! a log axis or over a quantity, with whiskers and marks (`dbio mem`'s curve), drawn from the
//! points each chart carries, with the axes and labels of [`super::chart`].

use std::fmt::Write;

use super::chart::*;
use super::{color, escape};
use crate::report::sections::{Axis, Lines, Point};
use crate::units::size_label;

/// A chart of the model, drawn from the points it carries: per-second lines or stacked
/// areas, lines over named values, or an x–y chart over sizes or a quantity.
pub fn plot(c: &Lines) -> String {
    // The values of a series at x = offset, offset + 1, ...; `None` where it has none.
    let dense = |points: &[Point], n: usize, offset: f64| {
        let mut v = vec![None; n];
        for p in points {
            let i = p.x - offset;
            if i >= 0.0 && (i as usize) < n {
                v[i as usize] = p.y;
            }
        }
        v
    };
    let as_lines = |n: usize, offset: f64| -> Vec<Line> {
        (c.series.iter())
            .map(|s| Line {
                label: s.label.clone(),
                color: color(s.color),
                dashed: s.dashed,
                values: dense(&s.points, n, offset),
            })
            .collect()
    };
    match &c.x {
        Axis::Seconds(n) if c.stacked => {
            let layers: Vec<Layer> = (c.series.iter())
                .map(|s| Layer {
                    label: s.label.clone(),
                    color: color(s.color),
                    values: (dense(&s.points, *n, 1.0).into_iter())
                        .map(|v| v.unwrap_or(0.0))
                        .collect(),
                })
                .collect();
            let reference = (c.reference.as_ref()).map(|(value, label)| Reference {
                value: *value,
                label: label.clone(),
            });
            stacked(c.y, *n, &layers, reference.as_ref(), c.min_top)
        }
        Axis::Seconds(n) => {
            let shades: Vec<Shade> = (c.bands.iter())
                .map(|b| Shade {
                    from: b.from,
                    to: b.to,
                    color: color(b.color),
                    label: b.label.clone(),
                })
                .collect();
            lines(c.y, *n, &as_lines(*n, 1.0), &shades)
        }
        Axis::Labels { caption, labels } => {
            by_value(c.y, caption, labels, &as_lines(labels.len(), 0.0))
        }
        Axis::LogBytes { caption } | Axis::Linear { caption } => xy(c, caption),
    }
}

/// A scale along one axis of an x–y chart: linear from 0, or logarithmic.
struct Scale {
    log: bool,
    min: f64,
    max: f64,
    ticks: Vec<(f64, String)>,
}

impl Scale {
    /// Bytes on a log scale, a tick every power of 4 from 1 KiB.
    fn log_bytes(values: impl Iterator<Item = f64>) -> Scale {
        let (min, max) = range(values);
        let ticks = (0..40)
            .map(|k| 1024.0 * 4f64.powi(k))
            .filter(|&v| v >= min / 1.01 && v <= max * 1.01)
            .map(|v| (v, size_label(v as u64)))
            .collect();
        Scale {
            log: true,
            min: min / 1.15,
            max: max * 1.15,
            ticks,
        }
    }

    /// A quantity on a log scale, ticks at 1, 2 and 5 × 10^k.
    fn log(values: impl Iterator<Item = f64>) -> Scale {
        let (min, max) = range(values);
        let (min, max) = (min.max(0.1) / 1.3, max * 1.3);
        let ticks = (-1..10)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .filter(|&v| v >= min && v <= max)
            .map(|v| (v, tick_label(v, v)))
            .collect();
        Scale {
            log: true,
            min,
            max,
            ticks,
        }
    }

    /// From 0 to a round top over `max`; values are divided by `divisor` for their labels.
    fn linear(max: f64, divisor: f64) -> Scale {
        let (step, top) = nice_top(max / divisor);
        let ticks = (0..=((top / step).round() as usize))
            .map(|k| (k as f64 * step * divisor, tick_label(k as f64 * step, step)))
            .collect();
        Scale {
            log: false,
            min: 0.0,
            max: top * divisor,
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

/// The least and the greatest finite value; a made-up span around one value or none.
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

/// An x–y chart: lines through points placed by value on both axes, with a dot (and its
/// tip) at every point, a whisker over its spread, and dashed vertical marks.
fn xy(c: &Lines, x_caption: &str) -> String {
    let height = 300.0;
    let bottom = 34.0;
    let points = || c.series.iter().flat_map(|s| s.points.iter());
    let x = match c.x {
        Axis::LogBytes { .. } => Scale::log_bytes(points().map(|p| p.x)),
        _ => Scale::linear(points().map(|p| p.x).fold(0.0, f64::max), 1.0),
    };
    let ys = || {
        points().flat_map(|p| {
            let (lo, hi) = p.whisker.unwrap_or((f64::NAN, f64::NAN));
            [p.y.unwrap_or(f64::NAN), lo, hi]
        })
    };
    let (divisor, unit) = match c.y {
        Measure::LatencyUs(_) => latency_unit(ys().filter(|v| v.is_finite()).fold(0.0, f64::max)),
        _ => (1.0, ""),
    };
    let y = if c.log_y {
        Scale::log(ys())
    } else {
        let max = ys().filter(|v| v.is_finite()).fold(c.min_top, f64::max);
        Scale::linear(if max > 0.0 { max } else { 1.0 }, divisor)
    };
    let mut caption = match c.y {
        Measure::Amount(c) | Measure::Percent(c, _) => c.to_string(),
        Measure::LatencyUs(c) => format!("{c} ({unit})"),
    };
    if c.log_y {
        caption.push_str(" (log scale)");
    }
    let ph = height - TOP - bottom;
    let px = |v: f64| LEFT + PLOT_W * x.frac(v);
    let py = |v: f64| TOP + ph * (1.0 - y.frac(v));
    let mut s = open(height, &caption);
    let _ = write!(
        s,
        r#"<g class="ax"><text class="cap" x="{}" y="{}">{}</text><text class="cap" x="{}" y="{}" text-anchor="end">{}</text>"#,
        N(LEFT),
        N(TOP - 8.0),
        escape(&caption),
        N(LEFT + PLOT_W),
        N(height - 2.0),
        escape(x_caption)
    );
    for (v, label) in &y.ticks {
        grid_line(&mut s, py(*v), label);
    }
    let base = TOP + ph;
    let _ = write!(
        s,
        r#"<path d="M{} {}H{}"/>"#,
        N(LEFT),
        N(base),
        N(LEFT + PLOT_W)
    );
    for (v, label) in &x.ticks {
        let xx = px(*v);
        let _ = write!(
            s,
            r#"<path d="M{} {}v4"/><text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            N(xx),
            N(base),
            N(xx),
            N(base + 16.0),
            escape(label)
        );
    }
    s.push_str("</g>");
    for (v, label) in &c.marks {
        if *v < x.min || *v > x.max {
            continue;
        }
        let xx = px(*v);
        let _ = write!(
            s,
            r#"<path class="mark" d="M{} {}V{}"/><text class="mark" x="{}" y="{}">{}</text>"#,
            N(xx),
            N(TOP),
            N(base),
            N(xx + 3.0),
            N(TOP + 12.0),
            escape(label)
        );
    }
    for se in &c.series {
        let stroke = color(se.color);
        let mut d = String::new();
        let mut dots = String::new();
        let mut in_segment = false;
        for p in &se.points {
            let Some(v) = p.y.filter(|v| v.is_finite()) else {
                in_segment = false;
                continue;
            };
            let (xx, yy) = (N(px(p.x)), N(py(v)));
            let _ = write!(d, "{}{xx} {yy}", if in_segment { " " } else { "M" });
            in_segment = true;
            if let Some((lo, hi)) = p.whisker.filter(|(lo, hi)| hi > lo) {
                let _ = write!(
                    dots,
                    r#"<path class="ln" stroke="{stroke}" d="M{xx} {}V{}"/>"#,
                    N(py(lo)),
                    N(py(hi))
                );
            }
            let tip = match &p.tip {
                Some(t) => t.clone(),
                None => format!("{}: {}", se.label, c.y.value_label(v)),
            };
            let _ = write!(
                dots,
                r#"<circle cx="{xx}" cy="{yy}" r="3"><title>{}</title></circle>"#,
                escape(&tip)
            );
        }
        if d.is_empty() {
            continue;
        }
        let _ = write!(
            s,
            r#"<path class="ln{}" stroke="{stroke}" d="{d}"><title>{}</title></path><g fill="{stroke}">{dots}</g>"#,
            if se.dashed { " dash" } else { "" },
            escape(&se.label),
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sections::{Color, Series};

    #[test]
    fn sizes_lie_on_a_log_axis_and_whiskers_span_the_spread() {
        let x = Scale::log_bytes([4096.0, 1073741824.0].into_iter());
        assert!(x.frac(4096.0) > 0.0 && x.frac(4096.0) < 0.05);
        assert!(x.frac(1073741824.0) > 0.95 && x.frac(1073741824.0) < 1.0);
        let mid = x.frac(2f64.powf(21.0));
        assert!((mid - 0.5).abs() < 0.02, "{mid}");
        assert_eq!(x.ticks.first().map(|t| t.1.as_str()), Some("4K"));
        assert_eq!(x.ticks.last().map(|t| t.1.as_str()), Some("1G"));
        let y = Scale::log([1.0, 300.0].into_iter());
        assert!(y.ticks.iter().any(|t| t.1 == "100"), "{:?}", y.ticks);
        let l = Scale::linear(300.0, 1.0);
        assert_eq!((l.min, l.max), (0.0, 300.0));

        let point = |x: f64, y: Option<f64>, lo: f64, hi: f64| Point {
            x,
            y,
            whisker: Some((lo, hi)),
            tip: None,
        };
        let series = Series {
            label: "ns per load".into(),
            color: Color::Palette(0),
            dashed: false,
            points: vec![
                point(16384.0, Some(1.3), 1.2, 1.9),
                point(65536.0, Some(4.0), 4.0, 4.0),
                point(262144.0, None, 0.0, 0.0),
                point(1048576.0, Some(40.0), 30.0, 90.0),
            ],
        };
        let mut c = Lines::new(
            Axis::LogBytes {
                caption: "working set (log scale)".into(),
            },
            Measure::Amount("ns per load"),
            vec![series],
        );
        c.log_y = true;
        c.marks = vec![(32768.0, "L1d 32K".into()), (1e12, "far off".into())];
        let svg = plot(&c);
        assert_eq!(svg.matches("<circle").count(), 3, "no dot for a gap");
        let whiskers = (svg
            .split(r##"<path class="ln" stroke="#1f77b4" d="M"##)
            .skip(1))
        .filter(|p| p.split('>').next().unwrap().ends_with("\"/"))
        .count();
        assert_eq!(whiskers, 2, "none where the spread is nil: {svg}");
        assert!(svg.contains("L1d 32K") && !svg.contains("far off"));
        assert!(svg.contains("ns per load: 40 ns per load"), "{svg}");
        let line = (svg
            .split(r##"<path class="ln" stroke="#1f77b4" d=""##)
            .skip(1))
        .find(|p| p.contains(r#""><title>ns per load</title>"#))
        .unwrap();
        let d = line.split('"').next().unwrap();
        assert_eq!(d.matches('M').count(), 2, "a gap breaks the line: {d}");
    }
}
