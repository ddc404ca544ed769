//! Steady state: the measured window cut into rounds, each round's figure, and after each
//! round the judgement of the last rounds together (their spread and the slope of their
//! least-squares line, both against their average). Fed once a second by the main thread.

use crate::measure::{SecondPoint, stability};
use crate::report::result::SteadyStateJson;
use crate::workload::spec::{SteadyMetric, SteadySpec};

/// The rounds so far and whether they held steady.
pub struct Steady {
    spec: SteadySpec,
    round_s: u32,
    /// The current round's sums: requests, bytes, Σ mean × requests, Σ p99, seconds.
    requests: u64,
    bytes: u64,
    latency: f64,
    p99: f64,
    p99_seconds: u32,
    seconds: u32,
    rounds: Vec<f64>,
    reached_round: Option<usize>,
    last: Option<(f64, f64)>,
}

impl Steady {
    pub fn new(spec: SteadySpec) -> Steady {
        Steady {
            spec,
            round_s: (spec.round.as_secs_f64().round() as u32).max(1),
            requests: 0,
            bytes: 0,
            latency: 0.0,
            p99: 0.0,
            p99_seconds: 0,
            seconds: 0,
            rounds: Vec::new(),
            reached_round: None,
            last: None,
        }
    }

    /// Second closed with these points (one per event): true when it closed a round and
    /// the last rounds are steady.
    pub fn second(&mut self, points: &[SecondPoint]) -> bool {
        for p in points {
            self.requests += p.requests;
            self.bytes += p.bytes;
            self.latency += p.mean_us.unwrap_or(0.0) * p.requests as f64;
        }
        let worst = points
            .iter()
            .filter_map(|p| p.p99_us)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
        if let Some(v) = worst {
            self.p99 += v;
            self.p99_seconds += 1;
        }
        self.seconds += 1;
        if self.seconds < self.round_s {
            return false;
        }
        let secs = f64::from(self.seconds);
        let figure = match self.spec.metric {
            SteadyMetric::Iops => self.requests as f64 / secs,
            SteadyMetric::Mibps => self.bytes as f64 / (1u64 << 20) as f64 / secs,
            SteadyMetric::Mean if self.requests > 0 => self.latency / self.requests as f64,
            SteadyMetric::P99 if self.p99_seconds > 0 => self.p99 / f64::from(self.p99_seconds),
            _ => 0.0,
        };
        self.rounds.push(figure);
        (self.requests, self.bytes, self.latency) = (0, 0, 0.0);
        (self.p99, self.p99_seconds, self.seconds) = (0.0, 0, 0);
        let Some((range, slope)) = judge(&self.rounds) else {
            return false;
        };
        self.last = Some((range, slope));
        let steady = range <= self.spec.range_pct && slope <= self.spec.slope_pct;
        if steady {
            self.reached_round = Some(self.rounds.len());
        }
        steady
    }

    pub fn reached(&self) -> bool {
        self.reached_round.is_some()
    }

    /// What result.json says of it.
    pub fn json(&self) -> SteadyStateJson {
        SteadyStateJson {
            metric: self.spec.metric.name().into(),
            range_pct: self.spec.range_pct,
            slope_pct: self.spec.slope_pct,
            round_s: self.spec.round.as_secs_f64(),
            rounds: self.rounds.clone(),
            reached: self.reached(),
            reached_round: self.reached_round,
            window_range_pct: self.last.map(|l| l.0),
            window_slope_pct: self.last.map(|l| l.1),
        }
    }
}

/// The last [`SteadySpec::WINDOW`] rounds' range (max − min) and slope excursion (|slope of
/// the least-squares line| × the rounds), each in % of their average; None before there
/// are that many rounds. An average of 0 is never steady (infinite %). The slope is
/// [`stability::trend_pct`], the trend every run's stability is judged by.
pub fn judge(rounds: &[f64]) -> Option<(f64, f64)> {
    let n = SteadySpec::WINDOW;
    let w = rounds.get(rounds.len().checked_sub(n)?..)?;
    let avg = w.iter().sum::<f64>() / n as f64;
    let max = w.iter().copied().fold(f64::MIN, f64::max);
    let min = w.iter().copied().fold(f64::MAX, f64::min);
    if avg <= 0.0 {
        return Some((f64::INFINITY, f64::INFINITY));
    }
    Some(((max - min) / avg * 100.0, stability::trend_pct(w).abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_rounds_are_steady_and_a_ramp_is_not() {
        assert_eq!(judge(&[1.0, 1.0, 1.0, 1.0]), None);
        let (r, s) = judge(&[9.0, 100.0, 100.0, 100.0, 100.0, 100.0]).unwrap();
        assert_eq!((r, s), (0.0, 0.0));
        // 90..110: range 20 % of 100, slope 5 per round × 5 = 25 %.
        let (r, s) = judge(&[90.0, 95.0, 100.0, 105.0, 110.0]).unwrap();
        assert!(
            (r - 20.0).abs() < 1e-9 && (s - 25.0).abs() < 1e-9,
            "{r} {s}"
        );
        // Up and down: range 20 %, a slope of 2 per round (10 % over 5 rounds).
        let (r, s) = judge(&[90.0, 110.0, 90.0, 110.0, 100.0]).unwrap();
        assert!(
            (r - 20.0).abs() < 1e-9 && (s - 10.0).abs() < 1e-9,
            "{r} {s}"
        );
        // Symmetric: range 20 %, no slope at all.
        let (r, s) = judge(&[90.0, 110.0, 100.0, 110.0, 90.0]).unwrap();
        assert!((r - 20.0).abs() < 1e-9 && s.abs() < 1e-9, "{r} {s}");
        assert_eq!(judge(&[0.0; 5]), Some((f64::INFINITY, f64::INFINITY)));
    }
}
