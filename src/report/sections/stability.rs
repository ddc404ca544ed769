//! How steady each event was over the measured window (every run judges it; result.json
//! `events[].stability`): per event, its rate and its p99 per second — minimum, median,
//! maximum, variation and trend — and whether they held. The per-second charts mark the
//! stretches off (`charts.rs`).

use super::format::{latency_label, number};
use super::model::{Block, Cell, Column, Mark, Section, Table, cells};
use crate::measure::stability::{MIN_P99_REQUESTS, MIN_RATE, MIN_SECONDS};
use crate::report::result::{RunResult, Spread};

/// The verdict on one spread: steady, unstable (moved or swung), or why it was not judged.
fn verdict(s: &Spread, rate: bool) -> Cell {
    if s.unstable {
        let how = match (s.moved(), s.last < s.first) {
            (true, true) => "fell",
            (true, false) => "rose",
            (false, _) => "swung",
        };
        Cell::marked(format!("UNSTABLE: {how}"), Mark::Fail)
    } else if s.judged {
        Cell::from("steady")
    } else if (s.seconds as usize) < MIN_SECONDS {
        Cell::from(format!("not judged: under {MIN_SECONDS} s"))
    } else if rate {
        Cell::from(format!("not judged: under {MIN_RATE:.0}/s"))
    } else {
        Cell::from("not judged")
    }
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.0} %")
    } else {
        "∞".into()
    }
}

/// The stability of every event that has it (results of older versions have none).
pub fn stability(r: &RunResult) -> Option<Section> {
    let mut t = Table::new(vec![
        Column::left("Event", 26),
        Column::left("Per second", 10),
        Column::right("Min", 10),
        Column::right("Median", 10),
        Column::right("Max", 10),
        Column::right("Variation", 9),
        Column::right("Trend", 7),
        Column::left("Verdict", 18),
    ]);
    for e in &r.events {
        let Some(s) = &e.stability else {
            continue;
        };
        let mut row = |what: &str, sp: &Spread, f: &dyn Fn(f64) -> String, rate: bool| {
            let mut cells = cells![
                e.name.as_str(),
                what,
                f(sp.min),
                f(sp.median),
                f(sp.max),
                pct(sp.cv_pct),
                format!("{:+.0} %", sp.trend_pct)
            ];
            cells.push(verdict(sp, rate));
            t.row(cells);
        };
        row("requests", &s.rate, &number, true);
        if let Some(p) = &s.p99_us {
            row("p99", p, &latency_label, false);
        }
    }
    if t.rows.is_empty() {
        return None;
    }
    let unstable = (r.events.iter())
        .filter_map(|e| e.stability.as_ref())
        .any(|s| s.rate.unstable || s.p99_us.as_ref().is_some_and(|p| p.unstable));
    let title = if unstable {
        "Stability — UNSTABLE"
    } else {
        "Stability"
    };
    let bounds = (r.events.iter().find_map(|e| e.stability.as_ref()))
        .map(|s| (s.rate.bound_pct, s.p99_us.as_ref().map(|p| p.bound_pct)));
    let (rate_bound, p99_bound) = bounds.unwrap_or_default();
    Some(
        Section::new("stability", title)
            .with(Block::Table(t))
            .with(Block::Note(format!(
                "Per second over the window: variation is the standard deviation in % of the mean; trend how far the least-squares line moves over the window, in % of the mean (as --steady-state computes its slope). A figure is unstable beyond {rate_bound:.0} % (requests) or {} (p99, of seconds with {MIN_P99_REQUESTS} requests or more) when it also moved (its first and last tenths differ by as much) or swung (over a quarter of its seconds that far off its median).",
                p99_bound.map_or("a looser bound".to_string(), |b| format!("{b:.0} %"))
            ))),
    )
}
