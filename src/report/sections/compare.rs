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
use serde::Serialize;

/// How a compared figure is read from an event.
type Figure = fn(&EventResult) -> f64;

/// Which per-second spread (`events[].stability`) a figure varies with: the rate's for
/// IOPS and MiB/s, the p99's for p99; none for p50.
type Noise = fn(&Stability) -> Option<&Spread>;

/// Whether more of a figure is better (a rate) or worse (a latency).
#[derive(Clone, Copy, PartialEq, Eq)]
enum More {
    Better,
    Worse,
}

/// The figures compared — their label, their name in JSON, how each is read from an event,
/// its per-second spread, and which way is better.
const FIGURES: [(&str, &str, Figure, Option<Noise>, More); 4] = [
    (
        "IOPS",
        "iops",
        |e| e.iops,
        Some(|s| Some(&s.rate)),
        More::Better,
    ),
    (
        "MiB/s",
        "mib_per_s",
        |e| e.mib_per_s,
        Some(|s| Some(&s.rate)),
        More::Better,
    ),
    (
        "p50 (µs)",
        "p50_us",
        |e| e.latency_us.p50,
        None,
        More::Worse,
    ),
    (
        "p99 (µs)",
        "p99_us",
        |e| e.latency_us.p99,
        Some(|s| s.p99_us.as_ref()),
        More::Worse,
    ),
];

/// What a ratio means for its figure: "better", "worse", or "same" (a ratio of exactly 1).
fn verdict(ratio: f64, more: More) -> &'static str {
    if ratio == 1.0 {
        "same"
    } else if (ratio > 1.0) == (more == More::Better) {
        "better"
    } else {
        "worse"
    }
}

/// The figures of a comparison, computed once: what `dbio compare --json` prints
/// (`dbio.compare.v1`) and what its report's tables hold.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema: &'static str,
    /// The runs, in order; ratios are to the first.
    pub runs: Vec<String>,
    /// Per event, in the order events first appear.
    pub events: Vec<ComparedEvent>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ComparedEvent {
    pub event: String,
    pub figures: Vec<ComparedFigure>,
}

/// One figure of an event across the runs.
#[derive(Debug, Clone, Serialize)]
pub struct ComparedFigure {
    /// `iops`, `mib_per_s`, `p50_us` or `p99_us`.
    pub figure: &'static str,
    /// Each run's; null where the run lacks the event.
    pub values: Vec<Option<f64>>,
    /// Each later run's to the first's; null where there is none (no event, a first
    /// figure of zero).
    pub ratios: Vec<Option<f64>>,
    /// Each later run's difference lies within the two runs' own per-second spread.
    pub within_noise: Vec<bool>,
    /// What each ratio means for this figure: "better", "worse" or "same"; null where
    /// there is no ratio.
    pub verdicts: Vec<Option<&'static str>>,
}

/// The figures `runs` (a label such as "run 7" and the run's result) are compared by.
pub fn comparison(runs: &[(String, &RunResult)]) -> Comparison {
    let mut names: Vec<&str> = Vec::new();
    for (_, r) in runs {
        for e in &r.events {
            if !names.contains(&e.name.as_str()) {
                names.push(&e.name);
            }
        }
    }
    let events = (names.iter())
        .map(|name| {
            let found: Vec<Option<&EventResult>> = (runs.iter())
                .map(|(_, r)| r.events.iter().find(|e| e.name == *name))
                .collect();
            let figures = (FIGURES.iter())
                .map(|&(_, figure, of, noise, more)| {
                    let base = found[0].map(of);
                    let ratios: Vec<Option<f64>> = (found[1..].iter())
                        .map(|e| match (e.map(of), base) {
                            (Some(v), Some(b)) if b > 0.0 && v.is_finite() => Some(v / b),
                            _ => None,
                        })
                        .collect();
                    let within_noise = (found[1..].iter().zip(&ratios))
                        .map(|(e, r)| match (found[0], e, noise) {
                            (Some(a), Some(b), Some(n)) if r.is_some() => {
                                within_noise(a, b, of, n).unwrap_or(false)
                            }
                            _ => false,
                        })
                        .collect();
                    ComparedFigure {
                        figure,
                        values: found.iter().map(|e| e.map(of)).collect(),
                        verdicts: ratios.iter().map(|r| r.map(|r| verdict(r, more))).collect(),
                        ratios,
                        within_noise,
                    }
                })
                .collect();
            ComparedEvent {
                event: name.to_string(),
                figures,
            }
        })
        .collect();
    Comparison {
        schema: "dbio.compare.v1",
        runs: runs.iter().map(|(l, _)| l.clone()).collect(),
        events,
    }
}

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
    let figures = comparison(runs);
    let width = |label: &str, least: usize| (label.chars().count() + 2).max(least);
    let value_width = runs.iter().map(|(l, _)| width(l, 12)).max().unwrap_or(12);
    let ratio_labels: Vec<String> = (runs.iter().skip(1))
        .map(|(l, _)| format!("{l}/{first}"))
        .collect();
    let ratio_width = ratio_labels
        .iter()
        .map(|l| width(l, 16))
        .max()
        .unwrap_or(10);
    for (k, compared) in figures.events.iter().enumerate() {
        let name = compared.event.as_str();
        let found: Vec<Option<&EventResult>> = runs
            .iter()
            .map(|(_, r)| r.events.iter().find(|e| e.name == name))
            .collect();
        let mut columns = vec![Column::left("", 26)];
        columns.extend(runs.iter().map(|(l, _)| Column::right(l, value_width)));
        columns.extend(ratio_labels.iter().map(|l| Column::right(l, ratio_width)));
        let mut t = Table::new(columns);
        let mut noisy = false;
        for ((label, ..), f) in FIGURES.iter().zip(&compared.figures) {
            let mut row = cells![*label];
            row.extend((f.values.iter()).map(|v| v.map_or("-".to_string(), number).into()));
            row.extend((f.ratios.iter().zip(&f.within_noise).zip(&f.verdicts)).map(
                |((r, &within), verdict)| {
                    let mut text = ratio(*r, Some(1.0));
                    if let Some(v) = verdict {
                        text = format!("{text} {v}");
                    }
                    noisy |= within;
                    if within {
                        format!("{text} {WITHIN_NOISE}").into()
                    } else {
                        text.into()
                    }
                },
            ));
            t.row(row);
        }
        let mut s = Section::new(&format!("event-{}", k + 1), name)
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
