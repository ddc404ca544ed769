//! `dbio compare`: recorded runs side by side, event by event — IOPS, MiB/s, p50 and p99
//! per request of each run, and each run's ratio to the first.

use std::fmt::Write;

use super::result::{EventResult, RunResult};
use super::summary::thousands;
use crate::units::size_label;

/// How a compared figure is read from an event.
type Figure = fn(&EventResult) -> f64;

/// The figures compared, with how each is read from an event.
const FIGURES: [(&str, Figure); 4] = [
    ("IOPS", |e| e.iops),
    ("MiB/s", |e| e.mib_per_s),
    ("p50 (µs)", |e| e.latency_us.p50),
    ("p99 (µs)", |e| e.latency_us.p99),
];

/// Renders `runs` (a label such as "run 7" and the run's result) as text tables, one per
/// event, in the order events first appear. Ratios are to the first run; `-` where a run
/// lacks the event or the first run's figure is zero.
pub fn render(runs: &[(String, &RunResult)]) -> String {
    let mut o = String::new();
    let Some((first_label, _)) = runs.first() else {
        return o;
    };
    let _ = writeln!(o, "Compared runs (ratios are to {first_label})");
    let label_width = runs
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    for (label, r) in runs {
        let _ = writeln!(o, "{label:<label_width$}  {}", describe(r));
    }

    let mut events: Vec<&str> = Vec::new();
    for (_, r) in runs {
        for e in &r.events {
            if !events.contains(&e.name.as_str()) {
                events.push(&e.name);
            }
        }
    }
    let value_width = runs
        .iter()
        .map(|(l, _)| l.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(12);
    let ratio_labels: Vec<String> = runs[1..]
        .iter()
        .map(|(l, _)| format!("{l}/{first_label}"))
        .collect();
    let ratio_width = ratio_labels
        .iter()
        .map(|l| l.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .max(10);

    for name in events {
        let found: Vec<Option<&EventResult>> = runs
            .iter()
            .map(|(_, r)| r.events.iter().find(|e| e.name == name))
            .collect();
        let _ = write!(o, "\n{name:<26}");
        for (label, _) in runs {
            let _ = write!(o, "{label:>value_width$}");
        }
        for label in &ratio_labels {
            let _ = write!(o, "{label:>ratio_width$}");
        }
        let _ = writeln!(o);
        for (figure, of) in FIGURES {
            let _ = write!(o, "{figure:<26}");
            for e in &found {
                let cell = e.map_or("-".to_string(), |e| number(of(e)));
                let _ = write!(o, "{cell:>value_width$}");
            }
            let base = found[0].map(of);
            for e in &found[1..] {
                let cell = match (base, e.map(of)) {
                    (Some(b), Some(v)) if b > 0.0 => format!("{:.3}×", v / b),
                    _ => "-".to_string(),
                };
                let _ = write!(o, "{cell:>ratio_width$}");
            }
            let _ = writeln!(o);
        }
    }
    o
}

/// One line telling a run apart from the others: when, which test, and its key parameters.
fn describe(r: &RunResult) -> String {
    let c = &r.config;
    format!(
        "{}  {} ({}), block {}, {} session(s), io mode {}, engine {}, {:.1} s{}",
        r.started_at,
        r.test,
        c.submission,
        size_label(c.block_size),
        c.sessions,
        c.io_mode,
        c.engine,
        r.measured_seconds,
        if r.partial { ", PARTIAL" } else { "" }
    )
}

/// A figure with a precision that suits its size: `3.21`, `45.67`, `1,234.5`.
fn number(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.2}")
    } else {
        let tenths = (v * 10.0).round() as u64;
        format!("{}.{}", thousands(tenths / 10), tenths % 10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::result::LatencyJson;

    fn result(events: &[(&str, f64, f64)]) -> RunResult {
        let mut r = crate::store::tests::sample("read-iops", "x", 1.0, 1.0);
        let template = r.events[0].clone();
        r.events = events
            .iter()
            .map(|&(name, iops, p99)| EventResult {
                name: name.to_string(),
                iops,
                mib_per_s: iops / 128.0,
                latency_us: LatencyJson {
                    p50: p99 / 2.0,
                    p99,
                    ..LatencyJson::default()
                },
                ..template.clone()
            })
            .collect();
        r
    }

    /// The cells of the row starting with `figure` in the table of `event`.
    fn row<'a>(text: &'a str, event: &str, figure: &str) -> Vec<&'a str> {
        let table = text.split("\n\n").find(|t| t.starts_with(event)).unwrap();
        let line = table.lines().find(|l| l.starts_with(figure)).unwrap();
        line[figure.len()..].split_whitespace().collect()
    }

    #[test]
    fn ratios_are_to_the_first_run() {
        let a = result(&[("db file sequential read", 1000.0, 200.0)]);
        let b = result(&[("db file sequential read", 1500.0, 100.0)]);
        let c = result(&[("db file sequential read", 500.0, 400.0)]);
        let text = render(&[
            ("run 1".into(), &a),
            ("run 2".into(), &b),
            ("run 5".into(), &c),
        ]);
        assert!(text.contains("ratios are to run 1"), "{text}");
        let table = text.split("\n\n").nth(1).unwrap();
        let header: Vec<&str> = table.lines().next().unwrap().split("  ").collect();
        assert!(header.iter().any(|h| h.trim() == "run 5/run 1"), "{text}");
        assert_eq!(
            row(&text, "db file sequential read", "IOPS"),
            ["1,000.0", "1,500.0", "500.0", "1.500×", "0.500×"]
        );
        assert_eq!(
            row(&text, "db file sequential read", "p99 (µs)"),
            ["200.0", "100.0", "400.0", "0.500×", "2.000×"]
        );
        assert_eq!(
            row(&text, "db file sequential read", "MiB/s"),
            ["7.81", "11.72", "3.91", "1.500×", "0.500×"]
        );
    }

    #[test]
    fn an_event_missing_from_a_run_is_a_dash() {
        let a = result(&[("log file sync", 100.0, 50.0)]);
        let b = result(&[
            ("log file sync", 200.0, 50.0),
            ("log file parallel write", 80.0, 40.0),
        ]);
        let text = render(&[("run 1".into(), &a), ("run 2".into(), &b)]);
        assert_eq!(
            row(&text, "log file sync", "IOPS"),
            ["100.0", "200.0", "2.000×"]
        );
        assert_eq!(
            row(&text, "log file parallel write", "IOPS"),
            ["-", "80.00", "-"]
        );
    }
}
