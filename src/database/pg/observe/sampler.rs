//! The wait-event sampler: `pg_stat_activity` read at a fixed rate on a connection of its
//! own, with one prepared statement, every row counted per (backend type, wait event type,
//! wait event). Active sessions without a wait event count as "CPU"; idle sessions and the
//! idle main loops of background processes (wait event type `Activity`) are not counted.
//! Counting looks rows up among the keys already seen, so a sample allocates nothing that
//! stays: memory grows with new keys and with each second of the wait profile only.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use crate::report::result_pg::{PgAshSecond, PgSampler, PgWait};

/// Every backend but the sampler's own.
pub const SAMPLE_SQL: &str = "SELECT backend_type, wait_event_type, wait_event, state \
     FROM pg_stat_activity WHERE pid <> pg_backend_pid()";

/// The `Timeout` waits that are a background process's deliberate sleeps.
pub const BACKGROUND_SLEEPS: &[&str] = &[
    "CheckpointWriteDelay",
    "VacuumDelay",
    "VacuumTruncate",
    "BaseBackupThrottle",
    "RecoveryApplyDelay",
    "RecoveryRetrieveRetryInterval",
];

/// The name a sampled row counts under: None for a row that is not DB time (an idle
/// session, a background process in its idle main loop), else (wait event type, wait event)
/// with ("CPU", "CPU") for an active row without a wait event.
pub fn classify<'a>(
    wait_event_type: Option<&'a str>,
    wait_event: Option<&'a str>,
    state: Option<&str>,
) -> Option<(&'a str, &'a str)> {
    if state.is_some_and(|s| s != "active") || wait_event_type == Some("Activity") {
        return None;
    }
    // A background process sleeping on purpose (a spread checkpoint between its writes,
    // a vacuum's cost delay) is not waiting for anything: not DB time.
    if wait_event_type == Some("Timeout")
        && wait_event.is_some_and(|e| BACKGROUND_SLEEPS.contains(&e))
    {
        return None;
    }
    match (wait_event_type, wait_event) {
        (Some(t), Some(e)) => Some((t, e)),
        _ => Some(("CPU", "CPU")),
    }
}

/// The counts of a sampling run.
#[derive(Debug, Default)]
pub struct Tally {
    /// (backend type, wait event type, wait event) and its samples.
    keys: Vec<(String, String, String, u64)>,
    /// Wait event names of the per-second profile ("CPU" included).
    names: Vec<String>,
    /// The current second: its number, samples taken in it, counts per name.
    second: u32,
    second_samples: u64,
    second_counts: Vec<u64>,
    seconds: Vec<PgAshSecond>,
    pub samples: u64,
    pub active_rows: u64,
    pub sample_ns: u64,
    /// The server's WAL insert position as sampling stopped (the window's end; None on a
    /// standby).
    pub wal_at_end: Option<f64>,
}

impl Tally {
    /// A sample taken in second `t` (from the start) begins.
    pub fn begin_sample(&mut self, t: u32) {
        if t != self.second {
            self.close_second();
            self.second = t;
        }
        self.samples += 1;
        self.second_samples += 1;
    }

    /// One row of the current sample.
    pub fn row(
        &mut self,
        backend_type: &str,
        wait_event_type: Option<&str>,
        wait_event: Option<&str>,
        state: Option<&str>,
    ) {
        let Some((wtype, event)) = classify(wait_event_type, wait_event, state) else {
            return;
        };
        self.active_rows += 1;
        match (self.keys.iter_mut()).find(|k| k.0 == backend_type && k.1 == wtype && k.2 == event) {
            Some(k) => k.3 += 1,
            None => self
                .keys
                .push((backend_type.into(), wtype.into(), event.into(), 1)),
        }
        match self.names.iter().position(|n| n == event) {
            Some(i) => self.second_counts[i] += 1,
            None => {
                self.names.push(event.into());
                self.second_counts.push(1);
            }
        }
    }

    fn close_second(&mut self) {
        if self.second_samples > 0 {
            let n = self.second_samples as f64;
            let active: BTreeMap<String, f64> = (self.names.iter())
                .zip(&self.second_counts)
                .filter(|(_, c)| **c > 0)
                .map(|(name, c)| (name.clone(), *c as f64 / n))
                .collect();
            self.seconds.push(PgAshSecond {
                t: self.second,
                active,
            });
        }
        self.second_samples = 0;
        self.second_counts.iter_mut().for_each(|c| *c = 0);
    }

    /// The Top Timed Events (most samples first), the wait profile per second, and the
    /// sampler's own figures, for `seconds` of sampling at `hz`.
    pub fn finish(mut self, hz: u32, seconds: f64) -> (Vec<PgWait>, Vec<PgAshSecond>, PgSampler) {
        self.close_second();
        let per_sample_s = if self.samples > 0 {
            seconds / self.samples as f64
        } else {
            0.0
        };
        let total: u64 = self.keys.iter().map(|k| k.3).sum();
        let mut waits: Vec<PgWait> = (self.keys.into_iter())
            .map(
                |(backend_type, wait_event_type, wait_event, samples)| PgWait {
                    backend_type,
                    wait_event_type,
                    wait_event,
                    samples,
                    pct: if total > 0 {
                        100.0 * samples as f64 / total as f64
                    } else {
                        0.0
                    },
                    time_s: samples as f64 * per_sample_s,
                    timed_s: None,
                },
            )
            .collect();
        waits.sort_by(|a, b| {
            (b.samples.cmp(&a.samples))
                .then_with(|| a.backend_type.cmp(&b.backend_type))
                .then_with(|| a.wait_event.cmp(&b.wait_event))
        });
        let sampler = PgSampler {
            hz,
            samples: self.samples,
            seconds,
            mean_sample_us: if self.samples > 0 {
                self.sample_ns as f64 / self.samples as f64 / 1000.0
            } else {
                0.0
            },
            active_rows: self.active_rows,
        };
        (waits, self.seconds, sampler)
    }
}

/// Samples on `client` at `hz` until `stop` is set; returns the client (for the last
/// statistics snapshot), the tally and the seconds sampled. A failed sample ends sampling
/// with the error's text.
pub fn sample(
    mut client: postgres::Client,
    hz: u32,
    stop: Arc<AtomicBool>,
) -> (postgres::Client, Tally, f64, Option<String>) {
    let mut tally = Tally::default();
    let start = Instant::now();
    let statement = match client.prepare(SAMPLE_SQL) {
        Ok(s) => s,
        Err(e) => return (client, tally, 0.0, Some(e.to_string())),
    };
    let (seconds, failure) = crate::database::sample_until(start, hz, &stop, |taken| {
        let rows = (client.query(&statement, &[]))
            .map_err(|e| crate::database::pg::connect::error_text(&e))?;
        tally.sample_ns += taken.elapsed().as_nanos() as u64;
        tally.begin_sample((taken - start).as_secs() as u32);
        for r in &rows {
            let backend_type: Option<&str> = r.get(0);
            tally.row(backend_type.unwrap_or(""), r.get(1), r.get(2), r.get(3));
        }
        Ok(())
    });
    if failure.is_none() {
        match super::stats::wal_position(&mut client) {
            Ok(p) => tally.wal_at_end = p,
            Err(e) => return (client, tally, seconds, Some(e.to_string())),
        }
    }
    (client, tally, seconds, failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_sessions_and_idle_main_loops_are_not_db_time() {
        assert_eq!(
            classify(Some("Client"), Some("ClientRead"), Some("idle")),
            None
        );
        assert_eq!(
            classify(Some("Activity"), Some("CheckpointerMain"), None),
            None
        );
        assert_eq!(classify(None, None, Some("active")), Some(("CPU", "CPU")));
        assert_eq!(classify(None, None, None), Some(("CPU", "CPU")));
        assert_eq!(
            classify(Some("IO"), Some("DataFileRead"), Some("active")),
            Some(("IO", "DataFileRead"))
        );
        assert_eq!(
            classify(Some("IO"), Some("DataFileWrite"), None),
            Some(("IO", "DataFileWrite"))
        );
        // A spread checkpoint sleeping between its writes, a vacuum's cost delay.
        assert_eq!(
            classify(Some("Timeout"), Some("CheckpointWriteDelay"), None),
            None
        );
        assert_eq!(classify(Some("Timeout"), Some("VacuumDelay"), None), None);
        // A session's own pg_sleep is its DB time.
        assert_eq!(
            classify(Some("Timeout"), Some("PgSleep"), Some("active")),
            Some(("Timeout", "PgSleep"))
        );
    }

    #[test]
    fn counts_per_backend_type_and_per_second() {
        let mut t = Tally::default();
        // Second 0: two samples; a session reads in both, the checkpointer writes once.
        t.begin_sample(0);
        t.row(
            "client backend",
            Some("IO"),
            Some("DataFileRead"),
            Some("active"),
        );
        t.row("checkpointer", Some("IO"), Some("DataFileWrite"), None);
        t.row("walwriter", Some("Activity"), Some("WalWriterMain"), None);
        t.begin_sample(0);
        t.row(
            "client backend",
            Some("IO"),
            Some("DataFileRead"),
            Some("active"),
        );
        t.row("client backend", None, None, Some("idle"));
        // Second 1: one sample, the session on CPU.
        t.begin_sample(1);
        t.row("client backend", None, None, Some("active"));
        let (waits, ash, sampler) = t.finish(100, 1.5);
        assert_eq!(sampler.samples, 3);
        assert_eq!(sampler.active_rows, 4);
        assert_eq!(waits.len(), 3);
        assert_eq!(waits[0].wait_event, "DataFileRead");
        assert_eq!(waits[0].samples, 2);
        assert!((waits[0].pct - 50.0).abs() < 1e-9);
        assert!((waits[0].time_s - 1.0).abs() < 1e-9);
        assert_eq!(ash.len(), 2);
        assert_eq!(ash[0].active["DataFileRead"], 1.0);
        assert_eq!(ash[0].active["DataFileWrite"], 0.5);
        assert_eq!(ash[1].active.len(), 1);
        assert_eq!(ash[1].active["CPU"], 1.0);
    }
}
