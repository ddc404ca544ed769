//! `dbio compare`: recorded runs side by side, event by event — IOPS, MiB/s, p50 and p99
//! per request of each run, and each run's ratio to the first. The rows are
//! [`crate::report::sections::compare`]'s; this prints them as text.

use super::result::RunResult;

/// Renders `runs` (a label such as "run 7" and the run's result) as text: the runs, then
/// one table per event in the order events first appear. Ratios are to the first run; `-`
/// where a run lacks the event or the first run's figure is zero.
pub fn render(runs: &[(String, &RunResult)]) -> String {
    if runs.is_empty() {
        return String::new();
    }
    super::summary::text(&super::sections::compare(runs))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::result::{EventResult, LatencyJson};

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
            [
                "1,000.0", "1,500.0", "500.0", "1.500×", "better", "0.500×", "worse"
            ]
        );
        assert_eq!(
            row(&text, "db file sequential read", "p99 (µs)"),
            [
                "200.0", "100.0", "400.0", "0.500×", "better", "2.000×", "worse"
            ]
        );
        assert_eq!(
            row(&text, "db file sequential read", "MiB/s"),
            [
                "7.81", "11.72", "3.91", "1.500×", "better", "0.500×", "worse"
            ]
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
            ["100.0", "200.0", "2.000×", "better"]
        );
        assert_eq!(
            row(&text, "log file parallel write", "IOPS"),
            ["-", "80.00", "-"]
        );
    }
}
