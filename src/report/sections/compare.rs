//! `dbio compare`: recorded runs side by side. The runs, then per event (in the order events
//! first appear) each run's IOPS, MiB/s, p50 and p99 per request with its ratio to the first
//! run, and the runs' latency histograms on one axis.

use super::events::{pairs, trimmed};
use super::format::{number, ratio};
use super::model::{
    Bars, Block, Chart, Color, Column, Histogram, Level, Report, Section, Table, cells,
};
use crate::report::result::{EventResult, RunResult, Spread, Stability};
use crate::units::size_label;

/// How a compared figure is read from an event.
type Figure = fn(&EventResult) -> f64;

/// Which per-second spread (`events[].stability`) a figure varies with: the rate's for
/// IOPS and MiB/s, the p99's for p99; none for p50.
type Noise = fn(&Stability) -> Option<&Spread>;

/// The figures compared, with how each is read from an event and its per-second spread.
const FIGURES: [(&str, Figure, Option<Noise>); 4] = [
    ("IOPS", |e| e.iops, Some(|s| Some(&s.rate))),
    ("MiB/s", |e| e.mib_per_s, Some(|s| Some(&s.rate))),
    ("p50 (µs)", |e| e.latency_us.p50, None),
    (
        "p99 (µs)",
        |e| e.latency_us.p99,
        Some(|s| s.p99_us.as_ref()),
    ),
];

/// Marks a ratio whose difference lies within the two runs' own per-second spread.
pub const WITHIN_NOISE: &str = "~";

/// Whether `b`'s figure differs from `a`'s by no more than the larger of their per-second
/// standard deviations (each run's variation applied to its figure): a difference the runs'
/// own second-to-second noise covers. None when either run has no spread for it.
fn within_noise(a: &EventResult, b: &EventResult, of: Figure, noise: Noise) -> Option<bool> {
    let sd = |e: &EventResult| {
        let s = e.stability.as_ref().and_then(noise)?;
        Some(s.cv_pct / 100.0 * of(e))
    };
    let (sa, sb) = (sd(a)?, sd(b)?);
    Some((of(b) - of(a)).abs() <= sa.max(sb))
}

/// The comparison of `runs` (a label such as "run 7" and the run's result). Ratios are to
/// the first run; `-` where a run lacks the event or the first run's figure is zero.
pub fn compare(runs: &[(String, &RunResult)]) -> Report {
    let first = runs.first().map_or("none", |(l, _)| l.as_str());
    let mut report = Report {
        title: format!("Compared runs (ratios are to {first})"),
        sections: vec![runs_section(runs)],
    };
    let mut names: Vec<&str> = Vec::new();
    for (_, r) in runs {
        for e in &r.events {
            if !names.contains(&e.name.as_str()) {
                names.push(&e.name);
            }
        }
    }
    let width = |label: &str, least: usize| (label.chars().count() + 2).max(least);
    let value_width = runs.iter().map(|(l, _)| width(l, 12)).max().unwrap_or(12);
    let ratio_labels: Vec<String> = (runs.iter().skip(1))
        .map(|(l, _)| format!("{l}/{first}"))
        .collect();
    let ratio_width = ratio_labels
        .iter()
        .map(|l| width(l, 10))
        .max()
        .unwrap_or(10);
    for (k, name) in names.iter().enumerate() {
        let found: Vec<Option<&EventResult>> = runs
            .iter()
            .map(|(_, r)| r.events.iter().find(|e| e.name == *name))
            .collect();
        let mut columns = vec![Column::left("", 26)];
        columns.extend(runs.iter().map(|(l, _)| Column::right(l, value_width)));
        columns.extend(ratio_labels.iter().map(|l| Column::right(l, ratio_width)));
        let mut t = Table::new(columns);
        let mut noisy = false;
        for (figure, of, noise) in FIGURES {
            let mut row = cells![figure];
            row.extend(
                found
                    .iter()
                    .map(|e| e.map_or("-".to_string(), |e| number(of(e))).into()),
            );
            let base = found[0].map(of);
            row.extend(found[1..].iter().map(|e| {
                let text = ratio(e.map(of), base);
                let within = match (found[0], e, noise) {
                    (Some(a), Some(b), Some(n)) if text != "-" => {
                        within_noise(a, b, of, n).unwrap_or(false)
                    }
                    _ => false,
                };
                noisy |= within;
                if within {
                    format!("{text} {WITHIN_NOISE}").into()
                } else {
                    text.into()
                }
            }));
            t.row(row);
        }
        let mut s = Section::new(&format!("event-{}", k + 1), *name)
            .level(Level::Sub)
            .with(Block::Table(t));
        if noisy {
            s.push(Block::Note(format!(
                "{WITHIN_NOISE} within noise: the difference is no larger than the two runs' own per-second spread (the larger standard deviation of the figure from second to second)."
            )));
        }
        for ((label, _), e) in runs.iter().zip(&found) {
            let Some(e) = e else {
                s.push(Block::Note(format!("{label}: not in this run")));
                continue;
            };
            let st = e.stability.as_ref();
            let moved: Vec<&str> = [
                ("requests", st.is_some_and(|s| s.rate.unstable)),
                (
                    "p99",
                    st.and_then(|s| s.p99_us.as_ref())
                        .is_some_and(|p| p.unstable),
                ),
            ]
            .into_iter()
            .filter_map(|(what, unstable)| unstable.then_some(what))
            .collect();
            if !moved.is_empty() {
                s.push(Block::Caution(format!(
                    "{label}: its {} moved or swung over its window (see its Stability), so its figure here describes no moment of it",
                    moved.join(" and ")
                )));
            }
        }
        let series: Vec<Vec<(u64, u64)>> = found
            .iter()
            .map(|e| e.map(|e| pairs(&e.histogram_micro)).unwrap_or_default())
            .collect();
        if let Some((lt_us, counts)) = trimmed(&series) {
            s.push(Block::Chart(Chart::Histogram(Histogram {
                title: None,
                lt_us,
                series: runs
                    .iter()
                    .zip(counts)
                    .enumerate()
                    .map(|(i, ((label, _), counts))| Bars {
                        label: label.clone(),
                        color: i,
                        counts,
                    })
                    .collect(),
                marks: Vec::new(),
            })));
        }
        report.sections.push(s);
    }
    report
}

/// One row per run telling it apart from the others: when, which test, its key parameters.
fn runs_section(runs: &[(String, &RunResult)]) -> Section {
    let mut t = Table::new(vec![
        Column::left("Run", 6),
        Column::left("Started", 20),
        Column::left("Test", 16),
        Column::left("Host", 8).detail(),
        Column::right("Block", 5),
        Column::right("Sessions", 8),
        Column::left("I/O mode", 8),
        Column::left("Engine", 6),
        Column::right("Measured (s)", 12),
    ]);
    for (label, r) in runs {
        let c = &r.config;
        t.row(cells![
            label.as_str(),
            r.started_at.as_str(),
            format!("{} ({})", r.test, r.submission_label()),
            r.host.hostname.as_str(),
            size_label(c.block_size),
            c.sessions.to_string(),
            c.io_mode.as_str(),
            c.engine.as_str(),
            format!(
                "{:.1}{}",
                r.measured_seconds,
                if r.partial { " PARTIAL" } else { "" }
            ),
        ]);
    }
    let labels = (runs.iter().enumerate())
        .map(|(i, (l, _))| (l.clone(), Color::Palette(i)))
        .collect();
    Section::new("runs", "Runs")
        .level(Level::Lead)
        .with(Block::Table(t))
        .with(Block::Chart(Chart::Legend(labels)))
}
