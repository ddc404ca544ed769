//! How steady each event was over the measured window, judged on every run (docs/measurement.md,
//! "Stability"): from the per-second series, the rate's and the p99's minimum, median,
//! maximum, coefficient of variation and trend, and whether either moved beyond the bounds
//! below — then a warning in words.
//!
//! The trend is the steady-state rule's slope ([`trend_pct`], which `--steady-state` judges
//! its rounds with): the least-squares line's slope × the number of points, in % of their
//! average — how far the line moves over the window.

use serde::{Deserialize, Serialize};

use crate::warnings::{Moved, Warning};

/// The bound on an event's rate (requests per second): a variation (standard deviation over
/// mean) or a trend over the window beyond 20 %. Quiet runs stay inside it — read-iops on
/// /dev/shm, on a 2-core machine other builds kept busy, varied 5–17 % from second to second
/// (one run's line moved 26 %, with no lasting move) — while a rate a fifth off its average
/// in a typical second is one no single figure describes.
pub const RATE_BOUND_PCT: f64 = 20.0;

/// The bound on the per-second p99 latency, looser: a second's p99 rests on its slowest 1 %
/// of requests — a handful at a few hundred requests a second — so it moves far more than
/// the rate from second to second on a steady device (the same quiet runs: 5–31 % variation,
/// single seconds many times the rest on CPU-bound ones).
pub const P99_BOUND_PCT: f64 = 50.0;

/// Seconds below which a series is not judged: a line or a spread through fewer than 5
/// points says little (a run shorter than that keeps its figures, without a verdict).
pub const MIN_SECONDS: usize = 5;

/// How long a second must have lasted (its part of the window in which dbio ran) to count:
/// the last second of a run stopped early, or of a `--duration` that is not whole seconds, is
/// rated over its own length, but a rate over a fraction of a second is mostly the luck of
/// which requests completed in it, so a second shorter than half is left out. A second in
/// which dbio did not run for a while (`not_running_s`) is rated over the time it ran.
pub const MIN_SECOND_S: f64 = 0.5;

/// The rate is judged only for events averaging at least 100 requests a second: counting
/// alone makes a steady rate vary by 1/√n (Poisson), 10 % at 100 a second — half the bound.
pub const MIN_RATE: f64 = 100.0;

/// A second's p99 counts only when at least 100 requests completed in it: with fewer, the
/// p99 is the slowest request, not a percentile.
pub const MIN_P99_REQUESTS: u64 = 100;

/// A move must last: a series is unstable only when, beside its variation or trend, either
/// its first and last tenths differ by more than the bound (it moved), or more than a
/// quarter of its seconds lie off its median by more than the bound (it swung: between two
/// levels, or up and down). One odd second — a spike, a one-second stall — moves the
/// variation and the line, but neither of these.
pub const NEAR_MEDIAN_MIN_PCT: f64 = 75.0;

/// One second of one event, as the judgement needs it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Second {
    /// The second of the measured window, from 1.
    pub t: u32,
    pub requests: u64,
    pub p99_us: Option<f64>,
    /// How long dbio ran in it: the second's length (shorter for a last partial second)
    /// less the time dbio did not run.
    pub length_s: f64,
}

/// How steady one event was: its rate and its p99, per second.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Stability {
    /// Requests per second.
    pub rate: Spread,
    /// The p99 latency per second (µs), over the seconds with at least
    /// [`MIN_P99_REQUESTS`] requests; absent when fewer than two had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<Spread>,
}

/// The spread of one per-second figure over the window.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    /// Seconds the figures are made of.
    pub seconds: u32,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub mean: f64,
    /// Coefficient of variation: the standard deviation in % of the mean.
    pub cv_pct: f64,
    /// The least-squares line's slope × the seconds, in % of the mean (signed): how far the
    /// line moves over the window, as `--steady-state` computes its slope.
    pub trend_pct: f64,
    /// The seconds of each edge (a tenth of them, at least 3, at most a third) and the
    /// median of the first and of the last ones.
    pub edge_s: u32,
    pub first: f64,
    pub last: f64,
    /// The share of the seconds within the bound of the median, in %.
    pub near_median_pct: f64,
    /// The bound it was judged against, in %.
    pub bound_pct: f64,
    /// Enough seconds (and, for the rate, requests) to judge.
    pub judged: bool,
    /// Judged, and moved or swung beyond the bound.
    pub unstable: bool,
    /// Unstable: the stretches of seconds (first, last) past the bound from the run's
    /// opening level (`first`) in the direction it moved, or off its median either way (it
    /// swung).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stretches: Vec<(u32, u32)>,
}

/// The least-squares line's slope × the number of points, in % of their average (signed):
/// the steady-state rule's slope (`run/steady.rs`) and every run's trend. 0 for fewer than
/// two points; infinite when the average is not above 0 and the points are not all 0.
pub fn trend_pct(w: &[f64]) -> f64 {
    let n = w.len();
    if n < 2 {
        return 0.0;
    }
    let avg = w.iter().sum::<f64>() / n as f64;
    let xm = (n as f64 - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in w.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (y - avg);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    if avg <= 0.0 {
        return if slope == 0.0 { 0.0 } else { f64::INFINITY };
    }
    slope * n as f64 / avg * 100.0
}

/// The seconds of each edge compared in words: a tenth, at least 3 (one second alone is
/// noise), at most a third (the edges never overlap), at least 1.
fn edge(n: usize) -> usize {
    n.div_ceil(10).max(3).min(n / 3).max(1)
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The spread of `points` (second, value) against `bound_pct`; `judge` says whether there
/// is enough to judge. None for no points.
fn spread(points: &[(u32, f64)], bound_pct: f64, judge: bool) -> Option<Spread> {
    let n = points.len();
    if n == 0 {
        return None;
    }
    let v: Vec<f64> = points.iter().map(|p| p.1).collect();
    let mean = v.iter().sum::<f64>() / n as f64;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
    let (cv_pct, trend) = if mean > 0.0 {
        (var.sqrt() / mean * 100.0, trend_pct(&v))
    } else {
        // Every second 0: nothing moved.
        (0.0, 0.0)
    };
    let med = median(&v);
    let e = edge(n);
    let (first, last) = (median(&v[..e]), median(&v[n - e..]));
    let bound = bound_pct / 100.0;
    let near = v.iter().filter(|x| (*x - med).abs() <= bound * med).count();
    let near_median_pct = 100.0 * near as f64 / n as f64;
    let judged = judge && n >= MIN_SECONDS;
    let moved = (last - first).abs() > bound * mean;
    let swung = near_median_pct < NEAR_MEDIAN_MIN_PCT;
    let unstable = judged && (cv_pct > bound_pct || trend.abs() > bound_pct) && (moved || swung);
    // The seconds past the bound from the opening level in the direction it moved (it
    // fell: below it), or off the median either way (it swung).
    // (Told as a move, as [`Spread::moved`] says, when its line moved beyond the bound too.)
    let told_moved = moved && trend.abs() > bound_pct;
    let stretches = match (unstable, told_moved, last < first) {
        (false, _, _) => Vec::new(),
        (true, true, true) => stretches(points, |x| x < first * (1.0 - bound)),
        (true, true, false) => stretches(points, |x| x > first * (1.0 + bound)),
        (true, false, _) => stretches(points, |x| (x - med).abs() > bound * med),
    };
    Some(Spread {
        seconds: n as u32,
        min: v.iter().copied().fold(f64::INFINITY, f64::min),
        median: med,
        max: v.iter().copied().fold(0.0, f64::max),
        mean,
        cv_pct,
        trend_pct: trend,
        edge_s: e as u32,
        first,
        last,
        near_median_pct,
        bound_pct,
        judged,
        unstable,
        stretches,
    })
}

/// The runs of consecutive seconds whose value is `off`, as (first, last).
fn stretches(points: &[(u32, f64)], off: impl Fn(f64) -> bool) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &(t, _) in points.iter().filter(|p| off(p.1)) {
        match out.last_mut() {
            Some(s) if s.1 + 1 == t => s.1 = t,
            _ => out.push((t, t)),
        }
    }
    out
}

impl Spread {
    /// Its first and last edge differ by more than the bound and its line moved beyond it:
    /// an unstable spread is told as a move (fell, rose), otherwise as swings.
    pub fn moved(&self) -> bool {
        (self.last - self.first).abs() > self.bound_pct / 100.0 * self.mean
            && self.trend_pct.abs() > self.bound_pct
    }

    /// The warning of an unstable spread of `event`'s `figure`.
    fn warning(&self, event: &str, figure: Moved) -> Option<Warning> {
        self.unstable.then(|| Warning::Unstable {
            event: event.to_string(),
            figure,
            moved: self.moved(),
            first: self.first,
            last: self.last,
            edge_s: self.edge_s,
            min: self.min,
            median: self.median,
            max: self.max,
            cv_pct: self.cv_pct,
            trend_pct: self.trend_pct,
            near_median_pct: self.near_median_pct,
            bound_pct: self.bound_pct,
        })
    }
}

/// How steady `event` was over `seconds` (in order), with a warning for each of its rate
/// and p99 that moved or swung beyond its bound. None when no second lasted long enough.
pub fn judge(event: &str, seconds: &[Second]) -> (Option<Stability>, Vec<Warning>) {
    let long = || seconds.iter().filter(|s| s.length_s >= MIN_SECOND_S);
    let rate: Vec<(u32, f64)> = long()
        .map(|s| (s.t, s.requests as f64 / s.length_s))
        .collect();
    let p99: Vec<(u32, f64)> = long()
        .filter(|s| s.requests >= MIN_P99_REQUESTS)
        .filter_map(|s| s.p99_us.map(|p| (s.t, p)))
        .collect();
    let busy =
        !rate.is_empty() && rate.iter().map(|r| r.1).sum::<f64>() / rate.len() as f64 >= MIN_RATE;
    let Some(rate) = spread(&rate, RATE_BOUND_PCT, busy) else {
        return (None, Vec::new());
    };
    let p99 = (p99.len() >= 2)
        .then(|| spread(&p99, P99_BOUND_PCT, true))
        .flatten();
    let warnings = (rate.warning(event, Moved::Rate).into_iter())
        .chain(p99.as_ref().and_then(|p| p.warning(event, Moved::P99)))
        .collect();
    (Some(Stability { rate, p99_us: p99 }), warnings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seconds(rates: &[f64], p99: f64) -> Vec<Second> {
        (rates.iter().enumerate())
            .map(|(i, &r)| Second {
                t: i as u32 + 1,
                requests: r as u64,
                p99_us: (r > 0.0).then_some(p99),
                length_s: 1.0,
            })
            .collect()
    }

    #[test]
    fn the_trend_is_the_steady_state_slope() {
        // 90..110: a slope of 5 per point × 5 points = 25 % of 100.
        assert!((trend_pct(&[90.0, 95.0, 100.0, 105.0, 110.0]) - 25.0).abs() < 1e-9);
        assert!((trend_pct(&[110.0, 105.0, 100.0, 95.0, 90.0]) + 25.0).abs() < 1e-9);
        assert_eq!(trend_pct(&[90.0, 110.0, 100.0, 110.0, 90.0]), 0.0);
        assert_eq!(trend_pct(&[0.0; 5]), 0.0);
        assert_eq!(trend_pct(&[7.0]), 0.0);
    }

    #[test]
    fn a_collapse_is_unstable_and_said_in_words() {
        // 57,000/s for 30 s, then 13,000/s for 30 s.
        let mut rates = vec![57_000.0; 30];
        rates.extend([13_000.0; 30]);
        let (s, w) = judge("db file sequential read", &seconds(&rates, 500.0));
        let s = s.unwrap();
        let r = &s.rate;
        assert!(r.judged && r.unstable, "{r:?}");
        assert_eq!(
            (r.min, r.median, r.max, r.mean),
            (13_000.0, 35_000.0, 57_000.0, 35_000.0)
        );
        assert!(
            (r.cv_pct - 22_000.0 / 35_000.0 * 100.0).abs() < 1e-6,
            "{}",
            r.cv_pct
        );
        assert!(r.trend_pct < -100.0, "{}", r.trend_pct);
        assert_eq!((r.edge_s, r.first, r.last), (6, 57_000.0, 13_000.0));
        // The stretch off the opening level: the second half.
        assert_eq!(r.stretches, [(31, 60)]);
        // The p99 held: steady.
        let p = s.p99_us.unwrap();
        assert!(p.judged && !p.unstable && p.cv_pct == 0.0);
        assert_eq!(w.len(), 1);
        let text = w[0].to_string();
        assert!(
            text.contains("\"db file sequential read\": requests fell from 57,000/s in the first 6 s to 13,000/s in the last 6 s"),
            "{text}"
        );
        assert!(
            text.contains("the average describes no moment of this run"),
            "{text}"
        );
    }

    #[test]
    fn a_steady_series_with_noise_is_steady() {
        // ±8 % noise around 40,000/s, and one second's p99 15 times the others'.
        let rates: Vec<f64> = (0..20)
            .map(|i| 40_000.0 * (1.0 + 0.08 * ((i * 7 % 5) as f64 - 2.0) / 2.0))
            .collect();
        let mut s = seconds(&rates, 200.0);
        s[17].p99_us = Some(3_000.0);
        let (st, w) = judge("e", &s);
        let st = st.unwrap();
        assert!(st.rate.judged && !st.rate.unstable, "{:?}", st.rate);
        assert!(st.rate.cv_pct < 8.0, "{}", st.rate.cv_pct);
        let p = st.p99_us.unwrap();
        // The spike moves the variation and the line beyond the bound, not the edges or
        // the median: one odd second, not an unstable run.
        assert!(p.cv_pct > 50.0 && p.trend_pct > 50.0, "{p:?}");
        assert!(p.judged && !p.unstable, "{p:?}");
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn swings_without_a_trend_are_unstable() {
        let rates: Vec<f64> = (0..11)
            .map(|i| if i % 2 == 0 { 10_000.0 } else { 50_000.0 })
            .collect();
        let (s, w) = judge("e", &seconds(&rates, 100.0));
        let r = s.unwrap().rate;
        assert!(r.unstable && r.near_median_pct < 75.0, "{r:?}");
        assert_eq!(w.len(), 1);
        assert!(
            w[0].to_string()
                .contains("swung between 10,000/s and 50,000/s"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn a_short_last_second_does_not_fake_a_collapse() {
        let mut s = seconds(&[50_000.0; 10], 100.0);
        // A run of 9.3 s: its last second lasted 0.3 s and completed 15,000 requests.
        s[9].requests = 15_000;
        s[9].length_s = 0.3;
        let (st, w) = judge("e", &s);
        let r = st.unwrap().rate;
        assert_eq!(r.seconds, 9);
        assert!(!r.unstable && r.min == 50_000.0, "{r:?}");
        // A last second of 0.6 s counts, over its length.
        s[9].requests = 30_000;
        s[9].length_s = 0.6;
        let (st, _) = judge("e", &s);
        let r = st.unwrap().rate;
        assert_eq!((r.seconds, r.min), (10, 50_000.0));
        assert!(w.is_empty());
    }

    #[test]
    fn all_zero_seconds_and_short_or_quiet_series_are_not_judged() {
        let (s, w) = judge("e", &seconds(&[0.0; 10], 0.0));
        let s = s.unwrap();
        assert!(!s.rate.judged && !s.rate.unstable && s.rate.cv_pct == 0.0);
        assert_eq!(s.rate.trend_pct, 0.0);
        assert!(s.p99_us.is_none() && w.is_empty());
        // Four seconds collapsing: too short to judge.
        let (s, w) = judge(
            "e",
            &seconds(&[50_000.0, 40_000.0, 5_000.0, 1_000.0], 100.0),
        );
        assert!(!s.unwrap().rate.judged && w.is_empty());
        // 20 requests a second swinging: too few to judge the rate (or any p99).
        let (s, w) = judge("e", &seconds(&[10.0, 30.0, 10.0, 30.0, 10.0, 30.0], 100.0));
        let s = s.unwrap();
        assert!(!s.rate.judged && s.p99_us.is_none() && w.is_empty());
        assert_eq!(judge("e", &[]).0, None);
    }

    #[test]
    fn a_p99_that_rose_is_unstable() {
        let mut s = seconds(&[1_000.0; 12], 200.0);
        for x in &mut s[6..] {
            x.p99_us = Some(2_700.0);
        }
        let (st, w) = judge("log file parallel write", &s);
        let p = st.unwrap().p99_us.unwrap();
        assert!(p.unstable, "{p:?}");
        assert_eq!(p.stretches, [(7, 12)]);
        assert_eq!(w.len(), 1);
        let text = w[0].to_string();
        assert!(
            text.contains(
                "p99 latency rose from 200 µs in the first 3 s to 2.7 ms in the last 3 s"
            ),
            "{text}"
        );
    }
}
