//! What `dbio sweep` and `dbio calibrate` print (and `sweep.html` shows): their results as
//! reports ([`crate::report::sections::Report`]) of formatted figures and charts of the
//! chart model, which the shared renderers write as text, Markdown or HTML. Which rows,
//! figures and lines there are is decided here, once for every format.

use super::calibrate::{CalibrateResult, RISE};
use super::{Param, SweepPoint, SweepResult};
use crate::report::html::chart::duration_label;
use crate::report::sections::format::us;
use crate::report::sections::{
    Axis, Block, Cell, Chart, Color, Column, Level, Lines, Measure, Point, Report, Section, Series,
    Table,
};
use crate::units::{size_label, thousands};

/// A figure rounded to a whole number, with thousands separators: `12,345`.
pub(super) fn whole(v: f64) -> String {
    thousands(v.round() as u64)
}

/// MiB/s to one decimal: `812.5`.
pub(super) fn tenth(v: f64) -> String {
    format!("{v:.1}")
}

/// A sweep: one row per point, the main event's figures.
pub fn sweep(r: &SweepResult) -> Report {
    let name = r.param.name();
    let commits = r.points.iter().any(|p| p.commits_per_s.is_some());
    let mut columns = vec![
        Column::right(name, 10),
        Column::right("IOPS", 12),
        Column::right("MiB/s", 10),
        Column::right("mean (µs)", 11),
        Column::right("p50 (µs)", 10),
        Column::right("p95 (µs)", 10).detail(),
        Column::right("p99 (µs)", 10),
    ];
    if commits {
        columns.push(Column::right("commits/s", 10));
    }
    // What each point opened and submitted with: the answer of an io-mode or engine sweep,
    // a detail otherwise.
    let configured = matches!(r.param, Param::IoMode | Param::Engine | Param::Doublewrite);
    let shown = |c: Column| if configured { c } else { c.detail() };
    // With --steady-state: whether each point held steady, and when.
    let steady = r.points.iter().any(|p| p.steady_state.is_some());
    if steady {
        columns.push(Column::left("Steady", 0));
    }
    // A file system sweep: what the kernel mounted (type, mount and super options).
    let file_systems = r.param == Param::Fs;
    if file_systems {
        columns.push(Column::left("Mounted as", 0));
    }
    columns.push(shown(Column::left("Engine", 0)));
    columns.push(shown(Column::left("Open flags", 0)));
    columns.push(Column::left("Main event", 0));
    columns.push(Column::left("Run", 0).detail());
    let mut t = Table::new(columns);
    for p in &r.points {
        let l = &p.latency_us;
        let mut row: Vec<Cell> = vec![
            p.label.clone().into(),
            whole(p.iops).into(),
            tenth(p.mib_per_s).into(),
            us(l.mean).into(),
            us(l.p50).into(),
            us(l.p95).into(),
            us(l.p99).into(),
        ];
        if commits {
            row.push(p.commits_per_s.map_or("-".into(), whole).into());
        }
        if steady {
            row.push(
                match &p.steady_state {
                    Some(s) if s.reached => format!(
                        "round {} of {}",
                        s.reached_round.unwrap_or(s.rounds),
                        s.rounds
                    ),
                    Some(s) => format!("not reached ({} rounds)", s.rounds),
                    None => "-".into(),
                }
                .into(),
            );
        }
        if file_systems {
            row.push(p.file_system.clone().unwrap_or_else(|| "-".into()).into());
        }
        row.push(p.engine.clone().into());
        row.push(
            if p.open_flags.is_empty() {
                "-".to_string()
            } else {
                p.open_flags.join("|")
            }
            .into(),
        );
        row.push(
            format!(
                "{}{}",
                p.main_event.as_deref().unwrap_or("-"),
                if p.partial { " (partial)" } else { "" }
            )
            .into(),
        );
        row.push(Cell::linked(
            p.run_dir.clone(),
            format!("{}/report.html", p.run_dir),
        ));
        t.row(row);
    }
    let mut points = Section::new("points", "Points").with(Block::Table(t));
    let missing = r.values.len().saturating_sub(r.points.len());
    if missing > 0 {
        points.push(Block::Note(format!(
            "{missing} point(s) not measured: the sweep stopped early"
        )));
    }
    let lead = Section::new("sweep", "")
        .level(Level::Lead)
        .with(Block::Note(format!(
            "Started {}{}. Figures are the main event's: the test's own, first of its events, \
         the same in every point.",
            r.started_at,
            if r.complete { "" } else { " — incomplete" }
        )));
    Report {
        title: format!(
            "dbio {} — sweep of {} ({}) over {name}: {} of {} point(s)",
            r.dbio_version,
            r.test,
            r.submission,
            r.points.len(),
            r.values.len()
        ),
        sections: [lead, points].into_iter().chain(charts(r)).collect(),
    }
}

/// IOPS, MiB/s (and commits/s) and latency against the swept value, as the chart model's
/// lines over named values: the page draws them, text and Markdown leave them out (the
/// table holds their figures). None without points.
fn charts(r: &SweepResult) -> Vec<Section> {
    if r.points.is_empty() {
        return Vec::new();
    }
    let x = || Axis::Labels {
        caption: r.param.name().to_string(),
        labels: r.points.iter().map(|p| p.label.clone()).collect(),
    };
    let series = |label: &str, color: usize, dashed: bool, f: &dyn Fn(&SweepPoint) -> f64| Series {
        label: label.to_string(),
        color: Color::Palette(color),
        dashed,
        points: (r.points.iter().enumerate())
            .map(|(i, p)| Point::at(i as f64, Some(f(p))))
            .collect(),
    };
    let chart = |measure, lines| Block::Chart(Chart::Lines(Lines::new(x(), measure, lines)));
    let mut throughput = Section::new("throughput", "Throughput")
        .with(chart(
            Measure::Amount("IOPS"),
            vec![series("IOPS", 0, false, &|p| p.iops)],
        ))
        .with(chart(
            Measure::Amount("MiB/s"),
            vec![series("MiB/s", 1, false, &|p| p.mib_per_s)],
        ));
    if r.points.iter().any(|p| p.commits_per_s.is_some()) {
        throughput.push(chart(
            Measure::Amount("commits/s"),
            vec![series("commits/s", 2, false, &|p| {
                p.commits_per_s.unwrap_or(0.0)
            })],
        ));
    }
    let mut latency = Lines::new(
        x(),
        Measure::LatencyUs("latency"),
        vec![
            series("p99", 1, false, &|p| p.latency_us.p99),
            series("p95", 2, false, &|p| p.latency_us.p95),
            series("p50", 0, false, &|p| p.latency_us.p50),
            series("mean", 3, true, &|p| p.latency_us.mean),
        ],
    );
    latency.legend = true;
    vec![
        throughput,
        Section::new("latency", "Latency").with(Block::Chart(Chart::Lines(latency))),
    ]
}

/// A calibration: the curves walked, then the three answers.
pub fn calibrate(r: &CalibrateResult) -> Report {
    let secs = |s: f64| crate::units::duration_label(std::time::Duration::from_secs_f64(s));
    let walks = [
        (
            "small",
            &r.small_reads,
            "Small random reads, kept in flight",
            "batch",
        ),
        ("large", &r.large_reads, "Large reads", "depth"),
        ("single", &r.single_session, "One session", "depth"),
    ];
    let mut sections = Vec::new();
    for (id, w, title, per) in walks {
        if w.curve.is_empty() {
            continue;
        }
        let mut t = Table::new(vec![
            Column::right("Outstanding", 11),
            Column::right(format!("Sessions×{per}"), 14),
            Column::right("IOPS", 12),
            Column::right("MiB/s", 10),
            Column::right("p95 (µs)", 10),
            Column::right("p99 (µs)", 10),
            Column::left("Notes", 0),
        ]);
        for p in &w.curve {
            let mut notes = Vec::new();
            if p.within_limit == Some(false) {
                notes.push("over the limit");
            }
            if p.bisected {
                notes.push("bisected");
            }
            if p.partial {
                notes.push("partial");
            }
            t.row(vec![
                p.outstanding.to_string().into(),
                format!("{}×{}", p.sessions, p.per_session).into(),
                whole(p.iops).into(),
                tenth(p.mib_per_s).into(),
                whole(p.latency_us.p95).into(),
                whole(p.latency_us.p99).into(),
                notes.join(", ").into(),
            ]);
        }
        let mut s = Section::new(
            id,
            format!(
                "{title}: {} ({}, {})",
                w.event,
                w.test,
                size_label(w.request_bytes)
            ),
        )
        .with(Block::Table(t));
        if w.curve.len() > 1 {
            s.push(Block::Fields(vec![(
                "Stopped".into(),
                w.stopped_because.clone(),
            )]));
        }
        sections.push(s);
    }
    let mut answers = Section::new("answers", "Answers").with(Block::Fields(vec![
        (
            format!("Max small-read IOPS with {}", r.limit.label()),
            match &r.max_iops {
                Some(p) => format!(
                    "{} at {} outstanding ({} {})",
                    whole(p.iops),
                    p.outstanding,
                    r.limit.stat.name(),
                    duration_label(r.limit.stat.of(&p.latency_us))
                ),
                None if r.small_reads.curve.is_empty() => "not measured".into(),
                None => "none: no point kept the limit, not even 1 outstanding request".into(),
            },
        ),
        (
            "Max large-read MiB/s".into(),
            match &r.max_mib_per_s {
                Some(p) => format!("{} at {} outstanding", tenth(p.mib_per_s), p.outstanding),
                None => "not measured".into(),
            },
        ),
        (
            "Single-session large-read MiB/s".into(),
            match (r.single_session_mib_per_s, r.single_session.curve.first()) {
                (Some(m), Some(p)) => format!("{} (depth {})", tenth(m), p.per_session),
                _ => "not measured".into(),
            },
        ),
    ]));
    if let (Some(single), Some(max)) = (r.single_session_mib_per_s, &r.max_mib_per_s)
        && single > max.mib_per_s * (1.0 + RISE)
    {
        answers.push(Block::Note(
            "Note: one session did better than the walk's best: throughput varied between \
             points; a longer --point-duration gives steadier figures."
                .into(),
        ));
    }
    if !r.complete {
        answers.push(Block::Note(
            "The calibration stopped early: the answers cover only what was measured.".into(),
        ));
    }
    sections.push(answers);
    Report {
        title: format!(
            "dbio {} — calibrate {} (io mode {}), {} points after {} warm-up each",
            r.dbio_version,
            r.target,
            r.io_mode,
            secs(r.point_seconds),
            secs(r.warmup_seconds),
        ),
        sections,
    }
}
