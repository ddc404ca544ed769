//! The sections about events: Top Timed Events, Load Profile, latency percentiles and
//! histograms, and the per-second and per-bucket rows the CSV exports and charts are made of.

use super::format::{bucket_label, decimal, share, thousands, us};
use super::model::{Bars, Block, Chart, Column, Histogram, Section, Table, cells};
use crate::report::result::{AshJson, BucketJson, EventResult, LatencyJson, RunResult};
use crate::warnings::{FEW_ASH_SAMPLES, Warning};

const MIB: f64 = (1u64 << 20) as f64;

/// DB time as ASH sampled it: the base of "% of DB time".
pub struct DbTime<'a> {
    ash: &'a AshJson,
    /// Active samples (any state but idle).
    pub samples: u64,
}

impl<'a> DbTime<'a> {
    /// None when the result has no ASH samples.
    pub fn of(r: &'a RunResult) -> Option<DbTime<'a>> {
        let ash = r.ash.as_ref().filter(|a| a.samples > 0)?;
        Some(DbTime {
            ash,
            samples: ash.samples_by_state.values().sum(),
        })
    }

    /// Seconds of DB time (active samples / sampling rate).
    pub fn seconds(&self) -> f64 {
        self.samples as f64 / f64::from(self.ash.hz.max(1))
    }

    /// Seconds spent in `state` ("ON CPU" or an event name), as sampled.
    pub fn seconds_in(&self, state: &str) -> f64 {
        self.count(state) as f64 / f64::from(self.ash.hz.max(1))
    }

    /// Share of DB time in `state`, in percent (all states sum to 100).
    pub fn pct(&self, state: &str) -> f64 {
        100.0 * share(self.count(state) as f64, self.samples as f64)
    }

    pub fn hz(&self) -> u32 {
        self.ash.hz
    }

    fn count(&self, state: &str) -> u64 {
        self.ash.samples_by_state.get(state).copied().unwrap_or(0)
    }
}

/// Whether some class ran open loop (at a rate).
pub fn open_loop(r: &RunResult) -> bool {
    r.classes.iter().any(|c| c.rate_target.is_some())
}

/// The AWR-style table. With ASH, DB time is the sampled active time and "% DB time" each
/// state's share of the samples (the column sums to 100 %), ON CPU a row of its own; an
/// older result without ASH shows % of session time. Rows: most share first.
pub fn top_timed_events(r: &RunResult) -> Section {
    let db = DbTime::of(r);
    let title = match &db {
        Some(db) => format!(
            "Top Timed Events (DB time {:.1} s: {} active samples at {} Hz)",
            db.seconds(),
            thousands(db.samples),
            db.hz()
        ),
        None => "Top Timed Events".into(),
    };
    let mut table = Table::new(vec![
        Column::left("Event", 26),
        Column::right("Waits", 12),
        Column::right("Requests", 14),
        Column::right("Time (s)", 10),
        Column::right("Avg wait (ms)", 14),
        Column::right(
            if db.is_some() {
                "% DB time"
            } else {
                "% Session time"
            },
            10,
        ),
        Column::right("IOPS", 12).detail(),
        Column::right("MiB/s", 10).detail(),
        Column::right("In flight", 9).detail(),
        Column::right("Errors", 7).detail(),
    ]);
    let session_time = r.config.sessions as f64 * r.measured_seconds;
    let pct = |e: &EventResult| match &db {
        Some(db) => db.pct(&e.name),
        None => 100.0 * share(e.wait_time_s, session_time),
    };
    let mut rows: Vec<(f64, f64, Vec<super::Cell>)> = r
        .events
        .iter()
        .map(|e| {
            let p = pct(e);
            (
                p,
                e.wait_time_s,
                cells![
                    e.name.as_str(),
                    thousands(e.waits),
                    thousands(e.requests),
                    format!("{:.2}", e.wait_time_s),
                    format!("{:.3}", share(e.wait_time_s * 1000.0, e.waits as f64)),
                    format!("{p:.1}"),
                    decimal(e.iops),
                    format!("{:.2}", e.mib_per_s),
                    format!("{:.1}", e.inflight_avg),
                    thousands(e.errors),
                ],
            )
        })
        .collect();
    if let Some(db) = &db {
        let (p, s) = (db.pct("ON CPU"), db.seconds_in("ON CPU"));
        rows.push((
            p,
            s,
            cells![
                "ON CPU",
                "",
                "",
                format!("{s:.2}"),
                "",
                format!("{p:.1}"),
                "",
                "",
                "",
                ""
            ],
        ));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.total_cmp(&a.1)));
    table.rows = rows.into_iter().map(|(_, _, c)| c).collect();

    let mut s = Section::new("events", title).with(Block::Table(table));
    if let Some(db) = db.as_ref().filter(|db| db.samples < FEW_ASH_SAMPLES) {
        s.push(Block::Caution(
            Warning::FewAshSamples {
                samples: db.samples,
                hz: db.hz(),
            }
            .to_string(),
        ));
    }
    if open_loop(r) {
        s.push(Block::Note(
            "Open loop: a session waiting for its next scheduled arrival is idle, and idle \
             sessions do not count in DB time; the Time of an open-loop class runs from each \
             request's scheduled time, so its requests overlap and it can exceed the elapsed \
             time."
                .into(),
        ));
    }
    let inflight: Vec<String> = (r.events.iter())
        .map(|e| format!("{} {:.1}", e.name, e.inflight_avg))
        .collect();
    s.push(Block::Note(format!(
        "In flight on average (IOPS × mean latency): {}",
        inflight.join(", ")
    )));
    let cpu = &r.cpu;
    s.push(Block::Note(format!(
        "dbio CPU: {:.2} s user + {:.2} s system{}",
        cpu.user_s,
        cpu.system_s,
        match cpu.cpu_s_per_1k_requests {
            Some(v) => format!(" = {v:.4} CPU s per 1,000 requests"),
            None => String::new(),
        }
    )));
    s
}

/// Per-second rates, as a database's Load Profile shows them.
pub fn load_profile(r: &RunResult) -> Section {
    let t = &r.totals;
    let per_s = |x: u64| share(x as f64, r.measured_seconds);
    let mut rows = vec![
        ("Read requests", t.read_iops),
        ("Write requests", t.write_iops),
        ("Read MiB", t.read_mib_per_s),
        ("Write MiB", t.write_mib_per_s),
        ("Redo MiB", t.redo_mib_per_s.unwrap_or(0.0)),
        ("Commits", t.commits_per_s.unwrap_or(0.0)),
    ];
    if let Some(tx) = t.transactions_per_s {
        rows.push(("Transactions", tx));
    }
    if let Some(ol) = &r.oltp {
        rows.push(("Logical reads (blocks)", per_s(ol.logical_reads)));
        rows.push(("Physical reads (blocks)", per_s(ol.physical_reads)));
    }
    let mut table = Table::new(vec![Column::label("", 28), Column::right("Per Second", 17)]);
    for (label, v) in rows {
        table.row(cells![label, decimal(v)]);
    }
    Section::new("load", "Load Profile").with(Block::Table(table))
}

/// Latency percentiles per request of every event, and per wait of the events whose waits
/// cover several requests.
pub fn latency(r: &RunResult) -> Section {
    let mut s = Section::new("latency", "Latency percentiles").with(Block::Table(latency_table(
        "Per request (µs)",
        r.events
            .iter()
            .map(|e| (e.name.as_str(), &e.latency_us, e.requests)),
    )));
    let waits = r.events_waiting_apart();
    if !waits.is_empty() {
        s.push(Block::Table(latency_table(
            "Per wait (µs)",
            waits
                .iter()
                .map(|e| (e.name.as_str(), &e.wait_latency_us, e.waits)),
        )));
        s.push(Block::Note(
            "A wait is one period a session was blocked; for these asynchronous events it \
             covers several requests."
                .into(),
        ));
    }
    s
}

/// A table of latency percentiles in µs, one row per (name, latencies, count).
pub fn latency_table<'a>(
    first: &str,
    rows: impl Iterator<Item = (&'a str, &'a LatencyJson, u64)>,
) -> Table {
    let mut columns = vec![Column::left(first, 26)];
    for p in ["mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"] {
        columns.push(Column::right(p, 9));
    }
    let mut t = Table::new(columns);
    for (name, l, n) in rows {
        if n == 0 {
            t.row(cells![name, "(no requests)"]);
            continue;
        }
        let mut row = cells![name];
        for v in [l.mean, l.p50, l.p90, l.p95, l.p99, l.p99_9, l.p99_99, l.max] {
            row.push(us(v).into());
        }
        t.row(row);
    }
    t
}

/// The wait event histogram: the share of each event's requests per power-of-two bucket,
/// over the buckets any event fills, then (for formats that draw) a chart per event.
pub fn histograms(r: &RunResult) -> Section {
    let mut s = Section::new(
        "histograms",
        "Latency histograms (% of requests completing in < N µs)",
    );
    let series: Vec<Vec<(u64, u64)>> = r.events.iter().map(|e| pairs(&e.histogram_micro)).collect();
    let Some((lt_us, counts)) = trimmed(&series) else {
        return s;
    };
    let mut columns = vec![Column::left("Event", 26)];
    columns.extend(
        lt_us
            .iter()
            .map(|&b| Column::right(format!("<{}", bucket_label(b)), 6)),
    );
    let mut table = Table::new(columns);
    for (e, c) in r.events.iter().zip(&counts) {
        let total: u64 = c.iter().sum();
        if total == 0 {
            continue;
        }
        let mut row = cells![e.name.as_str()];
        row.extend(
            c.iter()
                .map(|&n| format!("{:.1}", 100.0 * n as f64 / total as f64).into()),
        );
        table.row(row);
    }
    s.push(Block::Table(table));
    for (i, e) in r.events.iter().enumerate() {
        let Some((lt_us, mut counts)) = trimmed(&series[i..=i]) else {
            continue;
        };
        let l = &e.latency_us;
        s.push(Block::Chart(Chart::Histogram(Histogram {
            title: Some(e.name.clone()),
            lt_us,
            series: vec![Bars {
                label: e.name.clone(),
                color: i,
                counts: counts.pop().unwrap_or_default(),
            }],
            marks: vec![("p50", l.p50), ("p99", l.p99), ("p99.9", l.p99_9)],
        })));
    }
    s
}

/// A histogram's buckets as (upper bound µs, count).
pub fn pairs(buckets: &[BucketJson]) -> Vec<(u64, u64)> {
    buckets.iter().map(|b| (b.lt_us, b.count)).collect()
}

/// The buckets from the first to the last that any series fills, the same for all: the
/// bucket bounds and each series' counts. None when every series is empty.
pub fn trimmed(series: &[Vec<(u64, u64)>]) -> Option<(Vec<u64>, Vec<Vec<u64>>)> {
    let longest = series.iter().max_by_key(|s| s.len())?;
    let filled = |i: usize| series.iter().any(|s| s.get(i).is_some_and(|b| b.1 > 0));
    let first = (0..longest.len()).find(|&i| filled(i))?;
    let last = (0..longest.len()).rev().find(|&i| filled(i))?;
    let lt_us = longest[first..=last].iter().map(|b| b.0).collect();
    let counts = series
        .iter()
        .map(|s| {
            (first..=last)
                .map(|i| s.get(i).map_or(0, |b| b.1))
                .collect()
        })
        .collect();
    Some((lt_us, counts))
}

/// One bucket of one event's histogram, per request or per wait (`histograms.csv`).
pub struct BucketRow<'a> {
    pub event: &'a str,
    /// "request", or "wait" (one period a session was blocked).
    pub kind: &'static str,
    /// `[lower_us, upper_us)`: the first bucket starts at 0, every other one at half its
    /// upper bound.
    pub lower_us: u64,
    pub upper_us: u64,
    pub count: u64,
}

/// Every bucket of every event: its request buckets, then its wait buckets.
pub fn bucket_rows(r: &RunResult) -> impl Iterator<Item = BucketRow<'_>> {
    r.events.iter().flat_map(|e| {
        [
            ("request", &e.histogram_micro),
            ("wait", &e.wait_histogram_micro),
        ]
        .into_iter()
        .flat_map(move |(kind, buckets)| {
            buckets.iter().map(move |b| BucketRow {
                event: &e.name,
                kind,
                lower_us: if b.lt_us <= 1 { 0 } else { b.lt_us / 2 },
                upper_us: b.lt_us,
                count: b.count,
            })
        })
    })
}

/// The length of a second of the window (the measure layer's rule, one place).
pub use crate::measure::second_length_s;

/// One second of one event (`timeseries.csv`, the per-second charts): counts completed in
/// it and rates over the second's length.
pub struct SecondRow<'a> {
    /// The second of the measured window, from 1 (second `t` covers `(t-1, t]`).
    pub t: u32,
    pub event: &'a str,
    pub requests: u64,
    pub bytes: u64,
    pub requests_per_s: f64,
    pub mib_per_s: f64,
    /// None when nothing completed.
    pub mean_us: Option<f64>,
    pub p99_us: Option<f64>,
}

/// Every second of every event, in the result's order.
pub fn second_rows(r: &RunResult) -> impl Iterator<Item = SecondRow<'_>> {
    r.timeseries.iter().map(|p| {
        let len = second_length_s(p.t, r.measured_seconds);
        SecondRow {
            t: p.t,
            event: &p.event,
            requests: p.requests,
            bytes: p.bytes,
            requests_per_s: p.requests as f64 / len,
            mib_per_s: p.bytes as f64 / MIB / len,
            mean_us: p.mean_us,
            p99_us: p.p99_us,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_last_second_has_its_own_length() {
        assert_eq!(second_length_s(1, 2.0), 1.0);
        assert_eq!(second_length_s(2, 2.0), 1.0);
        assert!((second_length_s(3, 2.5) - 0.5).abs() < 1e-9);
        assert!((second_length_s(1, 0.25) - 0.25).abs() < 1e-9);
    }

    #[test]
    fn histogram_buckets_are_trimmed_to_the_filled_range() {
        let a = vec![(1, 0), (2, 0), (4, 3), (8, 1), (16, 0)];
        let b = vec![(1, 0), (2, 1), (4, 0)];
        let (lt, counts) = trimmed(&[a, b]).unwrap();
        assert_eq!(lt, [2, 4, 8]);
        assert_eq!(counts, [vec![0, 3, 1], vec![1, 0, 0]]);
        assert!(trimmed(&[vec![(1, 0)]]).is_none());
    }
}
