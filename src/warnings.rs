//! Every piece of advice dbio gives about a run, in one place (docs/measurement.md,
//! "Honesty about what happened"). A warning stays a typed value until it is rendered: result.json holds
//! its text (`warnings: [strings]`, the contract), reports print the same text.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Active ASH samples below which Top Timed Events is only a rough picture.
pub const FEW_ASH_SAMPLES: u64 = 100;

#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// An async test was issued with synchronous calls.
    RanSynchronously {
        event: String,
        why: String,
        advice: &'static str,
    },
    /// The engine's submit call blocked for about as long as the I/O itself.
    SubmitBlocked {
        event: String,
        submit_mean_us: f64,
        latency_mean_us: f64,
        hint: &'static str,
    },
    /// The run stopped early.
    Interrupted { measured_s: f64, planned_s: f64 },
    /// No request completed inside the measured window.
    NothingMeasured,
    /// Requests were still in flight when dbio gave up waiting for them.
    AbandonedRequests { sessions: usize },
    /// `--engine null`: no I/O was done.
    NullEngine,
    /// The block device completed more than 10 % more or fewer requests than dbio did.
    BlockLayerMismatch {
        device: String,
        dbio_requests: u64,
        device_requests: u64,
        dbio_bytes: u64,
        device_bytes: u64,
    },
    /// Requests failed and the run went on (`--continue-on-error`).
    ContinuedAfterErrors { count: u64, first: String },
    /// A background thread could not be set up as asked (LGWR pinning, the noise thread).
    Setup(String),
    /// `--verify` could not save the write sequences at the end of the run.
    SequencesNotSaved { error: String },
    /// The run's named temp files could not be removed.
    TempFilesLeft { error: String },
    /// dbio itself did not run for a stretch of the measured window: the process was
    /// stopped or starved of CPU, or the machine suspended.
    NotRunning {
        seconds: f64,
        /// Seconds of the measured window (from 1) the stretch lies in.
        first: u32,
        last: u32,
        suspended: bool,
        /// How long the same stretch had lasted in the warm-up before the window began.
        warmup_s: f64,
    },
    /// Top Timed Events rests on fewer than [`FEW_ASH_SAMPLES`] active ASH samples.
    FewAshSamples { samples: u64, hz: u32 },
    /// A run across hosts: a host's clock offset is known only within this much, so its
    /// start may differ from the others' by as much.
    ClockUncertain { host: String, uncertainty_ms: f64 },
    /// A run across hosts: a host's own warning, named by host.
    OnHost { host: String, warning: Box<Warning> },
    /// A warning read back from a result.json, as it was written.
    Recorded(String),
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::RanSynchronously { event, why, advice } => write!(
                f,
                "asynchronous test ran synchronously: \"{event}\" was issued with synchronous calls ({why}); {advice}"
            ),
            Warning::SubmitBlocked {
                event,
                submit_mean_us,
                latency_mean_us,
                hint,
            } => write!(
                f,
                "\"{event}\" ran effectively synchronously: the engine's submit call took {submit_mean_us:.1} µs on average against {latency_mean_us:.1} µs per request — {hint}"
            ),
            Warning::Interrupted {
                measured_s,
                planned_s,
            } => write!(
                f,
                "the run was stopped after {measured_s:.1} s of its {planned_s:.1} s measured window: this is a partial result"
            ),
            Warning::NullEngine => write!(
                f,
                "--engine null: nothing was read or written; these figures are dbio's own cost per request (pacing, timing, histograms, ASH), not what the storage delivers"
            ),
            Warning::NothingMeasured => write!(
                f,
                "no request completed inside the measured window; check the target, or use a longer --duration"
            ),
            Warning::AbandonedRequests { sessions } => write!(
                f,
                "{sessions} session(s) stopped waiting for requests the device never completed; the storage may be hung (see dmesg)"
            ),
            Warning::BlockLayerMismatch {
                device,
                dbio_requests,
                device_requests,
                dbio_bytes,
                device_bytes,
            } => {
                let pct = |a: u64, b: u64| 100.0 * (b as f64 / a.max(1) as f64 - 1.0);
                write!(
                    f,
                    "block-layer cross-check: {device} completed {device_requests} requests while dbio completed {dbio_requests} ({:+.1} %); ",
                    pct(*dbio_requests, *device_requests)
                )?;
                if pct(*dbio_bytes, *device_bytes).abs() <= 10.0 {
                    let avg = |b: u64, n: u64| b as f64 / n.max(1) as f64 / 1024.0;
                    write!(
                        f,
                        "the bytes agree, so the block layer split or merged requests (dbio's average {:.0} KiB, the device's {:.0} KiB): check max_sectors_kb and max_segments of {device} (`dbio map /dev/{device}`)",
                        avg(*dbio_bytes, *dbio_requests),
                        avg(*device_bytes, *device_requests)
                    )
                } else {
                    write!(
                        f,
                        "the bytes differ too ({} vs {} MiB): other I/O reached the device (other programs, file system metadata, swap), so its figures in `os.devices` are not dbio's alone",
                        device_bytes >> 20,
                        dbio_bytes >> 20
                    )
                }
            }
            Warning::ContinuedAfterErrors { count, first } => write!(
                f,
                "{count} request(s) failed and the run went on (--continue-on-error; errors per event in events[].errors); the first: {first}"
            ),
            Warning::Setup(what) => f.write_str(what),
            Warning::SequencesNotSaved { error } => write!(
                f,
                "--verify: could not save the write sequences ({error}); `dbio verify` will not find lost writes of this run"
            ),
            Warning::TempFilesLeft { error } => {
                write!(f, "could not remove the run's temp files: {error}")
            }
            Warning::NotRunning {
                seconds,
                first,
                last,
                suspended,
                warmup_s,
            } => {
                let which = if first == last {
                    format!("second {first}")
                } else {
                    format!("seconds {first}–{last}")
                };
                if *suspended {
                    write!(
                        f,
                        "the machine was suspended for {seconds:.1} s (in {which} of the measured window: CLOCK_BOOTTIME ran ahead of CLOCK_MONOTONIC); figures of that second are not the storage's alone"
                    )
                } else {
                    let before = if *warmup_s >= 0.05 {
                        format!(", and {warmup_s:.1} s before it in the warm-up")
                    } else {
                        String::new()
                    };
                    write!(
                        f,
                        "dbio did not run for {seconds:.1} s ({which} of the measured window{before}: stopped or starved of CPU); latencies in those seconds include that time, and ASH took no samples in it"
                    )
                }
            }
            Warning::FewAshSamples { samples, hz } => write!(
                f,
                "Top Timed Events rests on {samples} active ASH sample(s), fewer than {FEW_ASH_SAMPLES}: its times and shares are rough; measure longer (--duration) or sample more often (--ash-hz, now {hz})"
            ),
            Warning::ClockUncertain {
                host,
                uncertainty_ms,
            } => write!(
                f,
                "{host}: its clock offset is known only within ±{uncertainty_ms:.1} ms (slow round trips over ssh), so its start may differ from the other hosts' by as much; a quieter network or a closer coordinator helps"
            ),
            Warning::OnHost { host, warning } => write!(f, "{host}: {warning}"),
            Warning::Recorded(text) => f.write_str(text),
        }
    }
}

/// In result.json a warning is its text.
impl Serialize for Warning {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A warning read from result.json comes back as its text.
impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Warning::Recorded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_its_text_in_json_and_back() {
        let w = Warning::Interrupted {
            measured_s: 1.5,
            planned_s: 10.0,
        };
        let json = serde_json::to_string(&[&w]).unwrap();
        assert_eq!(
            json,
            format!("[{}]", serde_json::to_string(&w.to_string()).unwrap())
        );
        let back: Vec<Warning> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, [Warning::Recorded(w.to_string())]);
        assert_eq!(back[0].to_string(), w.to_string());
    }
}
