//! The once-a-second reader of all sessions' counters: per-second history (requests, bytes,
//! mean and p99 latency per event; docs/measurement.md, "The per-second series") and
//! the final totals. It runs on the main thread; sessions never wait for it.

use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use super::histogram::Counts;
use super::recorder::{EventSlot, SessionCounters};

/// Everything recorded for one event, summed over sessions.
#[derive(Debug, Clone, Default)]
pub struct EventTotals {
    pub requests: u64,
    pub bytes: u64,
    pub latency_sum_ns: u64,
    pub latency_max_ns: u64,
    pub latency: Counts,
    pub waits: u64,
    pub wait_sum_ns: u64,
    pub wait_max_ns: u64,
    pub wait_latency: Counts,
    pub submit_calls: u64,
    pub submit_ns: u64,
    pub errors: u64,
    pub service_sum_ns: u64,
    pub service_max_ns: u64,
    pub service: Counts,
    pub late_sum_ns: u64,
    pub late_max_ns: u64,
}

impl EventTotals {
    /// For synchronous events, where every request is a wait: the wait figures are the
    /// request figures (sessions record them once).
    pub fn waits_are_requests(&mut self) {
        self.waits = self.requests;
        self.wait_sum_ns = self.latency_sum_ns;
        self.wait_max_ns = self.latency_max_ns;
        self.wait_latency = self.latency.clone();
    }
}

/// Database-level activity summed over sessions (see `recorder::DbCounters`).
#[derive(Debug, Clone, Copy, Default)]
pub struct DbTotals {
    pub transactions: u64,
    pub commits: u64,
    pub logical_reads: u64,
    pub physical_reads: u64,
    pub redo_bytes: u64,
    pub redo_bytes_all: u64,
    pub commits_all: u64,
}

/// How long second `t` of a window of `measured_seconds` lasted: 1, or less for a last
/// partial second (a run stopped early, a `--duration` that is not whole seconds).
pub fn second_length_s(t: u32, measured_seconds: f64) -> f64 {
    let len = measured_seconds - f64::from(t.saturating_sub(1));
    if len > 0.0 && len < 1.0 { len } else { 1.0 }
}

/// One event in one second of the measured window.
#[derive(Debug, Clone)]
pub struct SecondPoint {
    /// Second of the measured window, from 1.
    pub t: u32,
    pub event: EventSlot,
    pub requests: u64,
    pub bytes: u64,
    /// None when the event completed nothing in that second.
    pub mean_us: Option<f64>,
    pub p99_us: Option<f64>,
}

/// One event in one second, with the second's own histogram: what a caller that merges
/// seconds of several runs needs (histograms add up; percentiles do not).
#[derive(Debug, Clone, Default)]
pub struct Interval {
    pub requests: u64,
    pub bytes: u64,
    pub errors: u64,
    pub latency_sum_ns: u64,
    pub latency: Counts,
}

#[derive(Clone, Default)]
struct Snap {
    requests: u64,
    bytes: u64,
    errors: u64,
    latency_sum_ns: u64,
    latency: Counts,
}

pub struct Sampler {
    sessions: Vec<Arc<SessionCounters>>,
    events: usize,
    prev: Vec<Snap>,
    /// Per-second points so far, in order of `t` then event.
    pub history: Vec<SecondPoint>,
    /// Keep each closed second's [`Interval`]s (see [`Sampler::intervals`]).
    pub keep_intervals: bool,
    intervals: Vec<Interval>,
}

impl Sampler {
    pub fn new(sessions: Vec<Arc<SessionCounters>>, events: usize) -> Sampler {
        Sampler {
            sessions,
            events,
            prev: vec![Snap::default(); events],
            history: Vec::new(),
            keep_intervals: false,
            intervals: Vec::new(),
        }
    }

    /// The last closed second, per event (empty unless `keep_intervals`).
    pub fn intervals(&self) -> &[Interval] {
        &self.intervals
    }

    fn snap(&self, ev: EventSlot) -> Snap {
        let mut s = Snap::default();
        for session in &self.sessions {
            let e = &session.events[ev];
            s.requests += e.requests.load(Relaxed);
            s.bytes += e.bytes.load(Relaxed);
            s.errors += e.errors.load(Relaxed);
            s.latency_sum_ns += e.latency_sum_ns.load(Relaxed);
            e.latency.add_to(&mut s.latency);
        }
        s
    }

    /// Closes second `t`: everything recorded since the previous call belongs to it.
    /// Returns the new points (one per event).
    pub fn close_second(&mut self, t: u32) -> &[SecondPoint] {
        let first = self.history.len();
        self.intervals.clear();
        for ev in 0..self.events {
            let now = self.snap(ev);
            let prev = &self.prev[ev];
            let requests = now.requests.saturating_sub(prev.requests);
            let bytes = now.bytes.saturating_sub(prev.bytes);
            let sum = now.latency_sum_ns.saturating_sub(prev.latency_sum_ns);
            let delta =
                (requests > 0 || self.keep_intervals).then(|| now.latency.minus(&prev.latency));
            let (mean_us, p99_us) = match &delta {
                Some(d) if requests > 0 => {
                    let p99 = d.to_hdr().value_at_quantile(0.99) as f64 / 1000.0;
                    (Some(sum as f64 / requests as f64 / 1000.0), Some(p99))
                }
                _ => (None, None),
            };
            if self.keep_intervals {
                self.intervals.push(Interval {
                    requests,
                    bytes,
                    errors: now.errors.saturating_sub(prev.errors),
                    latency_sum_ns: sum,
                    latency: delta.unwrap_or_default(),
                });
            }
            self.history.push(SecondPoint {
                t,
                event: ev,
                requests,
                bytes,
                mean_us,
                p99_us,
            });
            self.prev[ev] = now;
        }
        &self.history[first..]
    }

    /// Sums every session's database-level counters.
    pub fn db_totals(&self) -> DbTotals {
        let mut t = DbTotals::default();
        for s in &self.sessions {
            let d = &s.db;
            t.transactions += d.transactions.load(Relaxed);
            t.commits += d.commits.load(Relaxed);
            t.logical_reads += d.logical_reads.load(Relaxed);
            t.physical_reads += d.physical_reads.load(Relaxed);
            t.redo_bytes += d.redo_bytes.load(Relaxed);
            t.redo_bytes_all += d.redo_bytes_all.load(Relaxed);
            t.commits_all += d.commits_all.load(Relaxed);
        }
        t
    }

    /// Sums every session's counters (call after the sessions have stopped).
    pub fn totals(&self) -> Vec<EventTotals> {
        (0..self.events)
            .map(|ev| {
                let mut t = EventTotals::default();
                for session in &self.sessions {
                    let e = &session.events[ev];
                    t.requests += e.requests.load(Relaxed);
                    t.bytes += e.bytes.load(Relaxed);
                    t.latency_sum_ns += e.latency_sum_ns.load(Relaxed);
                    t.latency_max_ns = t.latency_max_ns.max(e.latency_max_ns.load(Relaxed));
                    e.latency.add_to(&mut t.latency);
                    t.waits += e.waits.load(Relaxed);
                    t.wait_sum_ns += e.wait_sum_ns.load(Relaxed);
                    t.wait_max_ns = t.wait_max_ns.max(e.wait_max_ns.load(Relaxed));
                    e.wait_latency.add_to(&mut t.wait_latency);
                    t.submit_calls += e.submit_calls.load(Relaxed);
                    t.submit_ns += e.submit_ns.load(Relaxed);
                    t.errors += e.errors.load(Relaxed);
                    t.service_sum_ns += e.service_sum_ns.load(Relaxed);
                    t.service_max_ns = t.service_max_ns.max(e.service_max_ns.load(Relaxed));
                    e.service.add_to(&mut t.service);
                    t.late_sum_ns += e.late_sum_ns.load(Relaxed);
                    t.late_max_ns = t.late_max_ns.max(e.late_max_ns.load(Relaxed));
                }
                t
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::recorder::{Recorder, Window};

    #[test]
    fn seconds_add_up_to_totals() {
        let a = SessionCounters::new(1);
        let b = SessionCounters::new(1);
        let w = Window {
            start_ns: 1_000,
            end_ns: 1_000_000_000_000,
        };
        let ra = Recorder::new(a.clone(), w);
        let rb = Recorder::new(b.clone(), w);
        let mut s = Sampler::new(vec![a, b], 1);
        ra.request(0, 500, 900, 8192); // warm-up: not counted
        ra.request(0, 1_000, 2_000, 8192);
        rb.request(0, 1_000, 3_000, 8192);
        let p = s.close_second(1).to_vec();
        assert_eq!(p[0].requests, 2);
        assert_eq!(p[0].bytes, 16384);
        assert!((p[0].mean_us.unwrap() - 1.5).abs() < 1e-9);
        let p = s.close_second(2).to_vec();
        assert_eq!(p[0].requests, 0);
        assert!(p[0].p99_us.is_none());
        rb.request(0, 1_000, 5_000, 8192);
        s.close_second(3);
        let t = s.totals();
        assert_eq!(t[0].requests, 3);
        assert_eq!(s.history.iter().map(|p| p.requests).sum::<u64>(), 3);
        assert_eq!(t[0].latency.total(), 3);
        assert_eq!(t[0].latency_max_ns, 4_000);
    }
}
