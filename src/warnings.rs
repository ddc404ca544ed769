//! Every piece of advice dbio gives about a run, in one place (SPEC §5.4: honesty about
//! what happened).

use std::fmt;

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
                        "the bytes agree, so the block layer split or merged requests (dbio's average {:.0} KiB, the device's {:.0} KiB): check max_sectors_kb and max_segments of {device} (`dbio map`)",
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
        }
    }
}
