//! Steady state (`--steady-state`): the judgement, each round's figure, and a chart of the
//! rounds.

use super::model::{
    Axis, Block, Cell, Chart, Color, Column, Lines, Mark, Measure, Point, Section, Series, Table,
    cells,
};
use crate::report::result::{RunResult, SteadyStateJson};

/// The y axis of the rounds' figure.
fn measure(s: &SteadyStateJson) -> Measure {
    match s.metric.as_str() {
        "mean" => Measure::LatencyUs("mean latency per round"),
        "p99" => Measure::LatencyUs("p99 per round"),
        "mibps" => Measure::Amount("MiB/s per round"),
        _ => Measure::Amount("IOPS per round"),
    }
}

fn figure(s: &SteadyStateJson, v: f64) -> String {
    match s.metric.as_str() {
        "mean" | "p99" => crate::units::latency_label(v),
        "mibps" => format!("{v:.1} MiB/s"),
        _ => format!("{v:.0} IOPS"),
    }
}

fn pct(v: Option<f64>) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.2} %"),
        Some(_) => "∞".into(),
        None => "-".into(),
    }
}

/// Whether the run reached steady state, on what, and the rounds.
pub fn steady_state(r: &RunResult) -> Option<Section> {
    let s = r.steady_state.as_ref()?;
    let verdict = match s.reached_round {
        Some(n) => format!("reached after round {n}"),
        None => "not reached".to_string(),
    };
    let mut section = Section::new("steady-state", format!("Steady state — {verdict}"));
    section.push(Block::Fields(vec![
        (
            "Rule".to_string(),
            format!(
                "{} over the last 5 rounds of {}: range within {} % and slope within {} % of their average",
                s.metric,
                crate::units::duration_label(std::time::Duration::from_secs_f64(s.round_s)),
                s.range_pct,
                s.slope_pct
            ),
        ),
        ("Range of the last 5 rounds".to_string(), pct(s.window_range_pct)),
        ("Slope of the last 5 rounds".to_string(), pct(s.window_slope_pct)),
        ("Rounds".to_string(), s.rounds.len().to_string()),
    ]));
    let mut t = Table::new(vec![
        Column::right("Round", 6),
        Column::right(s.metric.as_str(), 16),
        Column::right("", 8),
    ]);
    for (i, v) in s.rounds.iter().enumerate() {
        let mut row = cells![(i + 1).to_string(), figure(s, *v)];
        row.push(if Some(i + 1) == s.reached_round {
            Cell::marked("steady", Mark::Pass)
        } else {
            Cell::from("")
        });
        t.row(row);
    }
    section.push(Block::Table(t));
    if !s.reached {
        section.push(Block::Note(format!(
            "Steady state was not reached in {} rounds: the figures are of a window that was still moving.",
            s.rounds.len()
        )));
    }
    let points = (s.rounds.iter().enumerate())
        .map(|(i, v)| Point::at(i as f64, Some(*v)))
        .collect();
    let series = Series {
        label: s.metric.clone(),
        color: Color::Palette(0),
        dashed: false,
        points,
    };
    let x = Axis::Labels {
        caption: "round".into(),
        labels: (1..=s.rounds.len()).map(|n| n.to_string()).collect(),
    };
    let c = Lines::new(x, measure(s), vec![series]).title("Rounds");
    section.push(Block::Chart(Chart::Lines(c)));
    Some(section)
}
