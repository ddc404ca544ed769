//! Every piece of advice dbio gives about a run, in one place (docs/measurement.md,
//! "Honesty about what happened"). A warning stays a typed value until it is rendered: result.json holds
//! its text (`warnings: [strings]`, the contract), reports print the same text.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Active ASH samples below which Top Timed Events is only a rough picture.
pub const FEW_ASH_SAMPLES: u64 = 100;

/// Which per-second figure of an event moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// Requests per second.
    Rate,
    /// The p99 latency of each second.
    P99,
}

/// How the block device's requests differed from dbio's while the bytes agreed (or the bytes
/// fell short).
#[derive(Debug, Clone, PartialEq)]
pub enum Mismatch {
    /// More requests, and dbio's largest request (bytes) exceeds these limits of the device
    /// ("max_sectors_kb 128"): the block layer split it.
    Split { largest: u64, limits: Vec<String> },
    /// More, smaller requests, though dbio's requests fit the device's request limits.
    Smaller,
    /// Fewer, larger requests: the block layer merged dbio's.
    Merged,
    /// Fewer bytes than dbio moved.
    FewerBytes,
}

/// One direction of a device's work over the window beside dbio's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Traffic {
    pub device_mib_s: f64,
    pub dbio_mib_s: f64,
}

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
    /// An event's requests completed in the window, but none of its waits (a whole batch, a
    /// commit) ended inside it: its wait latency and waits per second are not measured.
    NoWholeWait { event: String, requests: u64 },
    /// Requests were still in flight when dbio gave up waiting for them.
    AbandonedRequests { sessions: usize },
    /// `--engine null`: no I/O was done.
    NullEngine,
    /// The block device moved the bytes dbio did (within 10 %) in more than 10 % more or
    /// fewer requests, or moved fewer bytes than dbio did.
    BlockLayerMismatch {
        device: String,
        dbio_requests: u64,
        device_requests: u64,
        dbio_bytes: u64,
        device_bytes: u64,
        how: Mismatch,
    },
    /// The block device did more than 10 % more work over the window than dbio did: someone
    /// else's.
    Neighbour {
        device: String,
        reads: Traffic,
        writes: Traffic,
        /// The share of the device's bytes over the window that were not dbio's, in %.
        not_dbio_pct: f64,
    },
    /// An event's rate or p99 moved or swung beyond its bound over the window
    /// (`measure::stability`).
    Unstable {
        event: String,
        figure: Moved,
        /// Its first and last edge differ by more than the bound (else it swung).
        moved: bool,
        /// The medians of the first and last `edge_s` seconds.
        first: f64,
        last: f64,
        edge_s: u32,
        min: f64,
        median: f64,
        max: f64,
        cv_pct: f64,
        trend_pct: f64,
        near_median_pct: f64,
        bound_pct: f64,
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
            Warning::NoWholeWait { event, requests } => write!(
                f,
                "\"{event}\": {} requests completed inside the measured window, but none of its waits (a whole batch, a commit) ended inside it: its wait latency and waits/s are not measured; use a longer --duration",
                crate::units::thousands(*requests)
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
                how,
            } => {
                let pct = |a: u64, b: u64| 100.0 * (b as f64 / a.max(1) as f64 - 1.0);
                write!(
                    f,
                    "block-layer cross-check: {device} completed {} requests while dbio completed {} ({:+.1} %); ",
                    crate::units::thousands(*device_requests),
                    crate::units::thousands(*dbio_requests),
                    pct(*dbio_requests, *device_requests)
                )?;
                let avg = |b: u64, n: u64| b as f64 / n.max(1) as f64 / 1024.0;
                let sizes = format!(
                    "dbio's average {:.0} KiB, the device's {:.0} KiB",
                    avg(*dbio_bytes, *dbio_requests),
                    avg(*device_bytes, *device_requests)
                );
                match how {
                    Mismatch::Split { largest, limits } => write!(
                        f,
                        "the bytes agree, so the block layer split dbio's requests ({sizes}): dbio's largest request, {}, exceeds {device}'s {} (`dbio map /dev/{device}`)",
                        crate::units::size_label(*largest),
                        limits.join(" and ")
                    ),
                    Mismatch::Smaller => write!(
                        f,
                        "the bytes agree, so the device took dbio's bytes in more, smaller requests ({sizes}), though none of dbio's exceeds its max_sectors_kb or max_segments: the file system (zeroing around a write not aligned to its blocks, a write across extents) or another limit of the device (a chunk or segment size) split them, or another program sent small requests beside dbio's"
                    ),
                    Mismatch::Merged => write!(
                        f,
                        "the bytes agree, so the block layer merged dbio's requests into larger ones before they reached the device ({sizes})"
                    ),
                    Mismatch::FewerBytes => write!(
                        f,
                        "the device moved fewer bytes than dbio did ({} vs {} MiB): some of dbio's requests did not reach it (served by a cache above it), so its figures in `os.devices` are not all of dbio's",
                        device_bytes >> 20,
                        dbio_bytes >> 20
                    ),
                }
            }
            Warning::Neighbour {
                device,
                reads,
                writes,
                not_dbio_pct,
            } => {
                // A direction is named when the device or dbio did anything in it.
                let shown = |t: &Traffic| t.device_mib_s >= 0.05 || t.dbio_mib_s >= 0.05;
                let mib = |v: f64| {
                    if v >= 10.0 {
                        format!("{v:.0}")
                    } else {
                        format!("{v:.1}")
                    }
                };
                let mut did = Vec::new();
                let mut dbio = Vec::new();
                for (t, noun, verb) in [(reads, "reads", "read"), (writes, "writes", "wrote")] {
                    if !shown(t) {
                        continue;
                    }
                    did.push(format!("{} MiB/s of {noun}", mib(t.device_mib_s)));
                    dbio.push(if t.dbio_mib_s >= 0.05 {
                        format!("{verb} {} MiB/s", mib(t.dbio_mib_s))
                    } else {
                        format!("{verb} nothing")
                    });
                }
                write!(
                    f,
                    "the device {device} did {} while dbio {}: {not_dbio_pct:.0} % of its work over the window was not dbio's — another workload shared the disk, so these figures are not the disk's alone",
                    did.join(" and "),
                    dbio.join(" and ")
                )
            }
            Warning::Unstable {
                event,
                figure,
                moved,
                first,
                last,
                edge_s,
                min,
                median,
                max,
                cv_pct,
                trend_pct,
                near_median_pct,
                bound_pct,
            } => {
                let (what, value, whose): (&str, fn(f64) -> String, &str) = match figure {
                    Moved::Rate => (
                        "requests",
                        |v| format!("{}/s", rate_label(v)),
                        "the average describes no moment of this run",
                    ),
                    Moved::P99 => (
                        "p99 latency",
                        crate::units::latency_label,
                        "the run's p99 describes no moment of it",
                    ),
                };
                if *moved {
                    write!(
                        f,
                        "\"{event}\": {what} {} from {} in the first {edge_s} s to {} in the last {edge_s} s (trend {trend_pct:+.0} % of the mean over the window, variation {cv_pct:.0} %): {whose}",
                        if last < first { "fell" } else { "rose" },
                        value(*first),
                        value(*last)
                    )
                } else {
                    write!(
                        f,
                        "\"{event}\": {what} swung between {} and {} from second to second (median {}, only {near_median_pct:.0} % of the seconds within {bound_pct:.0} % of it; variation {cv_pct:.0} % of the mean): {whose}",
                        value(*min),
                        value(*max),
                        value(*median)
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

/// A rate in words: thousands separated, a decimal below 100.
fn rate_label(v: f64) -> String {
    if v < 100.0 {
        format!("{v:.1}")
    } else {
        crate::units::thousands(v.round() as u64)
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
