//! A test engine: wraps a real one and makes the device misbehave, so dbio's handling of it
//! can be tested for real. Enabled only by environment variables; it reaches every request
//! of a run, synchronous calls (`execute`) as much as submitted batches:
//!
//! - `DBIO_FAULT_EIO_AFTER=N`: completions after the first N fail with EIO (a device that
//!   starts failing mid-run: the run stops with exit status 4, or counts it with
//!   `--continue-on-error`);
//! - `DBIO_FAULT_STALL=EVERY:LENGTH` (durations, e.g. `500ms:100ms`): the device stalls for
//!   LENGTH at the start of every EVERY of the clock; a request that would complete during a
//!   stall completes when it ends. What an open loop must show (docs/measurement.md,
//!   "Open-loop rates"): the arrivals due
//!   during a stall wait, and their latency from the schedule says so;
//! - `DBIO_FAULT_PANIC_AFTER=N`: the thread panics at its request N+1, as a bug in dbio
//!   would make it — a run must stop, not hang, whichever thread it is (a session, LGWR).

use std::io;

use super::{Completion, Engine, EngineKind, IoRequest};
use crate::sys::now_ns;

/// The variable that fails completions after the first N with EIO.
pub const ENV: &str = "DBIO_FAULT_EIO_AFTER";
/// The variable that makes the device stall periodically.
pub const STALL_ENV: &str = "DBIO_FAULT_STALL";
/// The variable that makes a thread panic after N requests.
pub const PANIC_ENV: &str = "DBIO_FAULT_PANIC_AFTER";

/// How many completions pass before the thread panics, if panic injection is on.
pub fn panic_after() -> Option<u64> {
    std::env::var(PANIC_ENV).ok()?.parse().ok()
}

/// How many completions pass before failures start, if EIO injection is on.
pub fn eio_after() -> Option<u64> {
    std::env::var(ENV).ok()?.parse().ok()
}

/// A periodic stall: `length_ns` at the start of every `every_ns` of the monotonic clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    pub every_ns: u64,
    pub length_ns: u64,
}

impl Stall {
    /// Parses `EVERY:LENGTH`, e.g. `500ms:100ms` (LENGTH shorter than EVERY).
    pub fn parse(text: &str) -> Result<Stall, String> {
        let (every, length) = text.split_once(':').ok_or_else(|| {
            format!("{STALL_ENV}={text}: expected EVERY:LENGTH, e.g. 500ms:100ms")
        })?;
        let ns = |t: &str| {
            crate::units::parse_duration(t.trim())
                .map(|d| d.as_nanos() as u64)
                .map_err(|e| format!("{STALL_ENV}={text}: {e}"))
        };
        let (every_ns, length_ns) = (ns(every)?, ns(length)?);
        // At most 1 s, so that a stop (Ctrl-C, SIGTERM, SIGHUP) still ends the run within 2 s.
        if length_ns == 0 || length_ns >= every_ns || length_ns > 1_000_000_000 {
            return Err(format!(
                "{STALL_ENV}={text}: the stall must be longer than 0, shorter than its period and at most 1s"
            ));
        }
        Ok(Stall {
            every_ns,
            length_ns,
        })
    }

    /// From the environment: None when unset; an error when set but not understood.
    pub fn from_env() -> Result<Option<Stall>, String> {
        match std::env::var(STALL_ENV) {
            Ok(text) => Stall::parse(&text).map(Some),
            Err(_) => Ok(None),
        }
    }

    /// When a completion at `t_ns` happens: at once, or at the end of the stall it falls in.
    pub fn completes_at(&self, t_ns: u64) -> u64 {
        let phase = t_ns % self.every_ns;
        if phase < self.length_ns {
            t_ns - phase + self.length_ns
        } else {
            t_ns
        }
    }
}

pub struct FaultEngine {
    inner: Box<dyn Engine>,
    /// Completions that still pass before EIO; None: no EIO injection.
    good_left: Option<u64>,
    stall: Option<Stall>,
    /// Completions that still pass before the thread panics; None: no panic injection.
    panic_left: Option<u64>,
}

impl FaultEngine {
    pub fn new(
        inner: Box<dyn Engine>,
        eio_after: Option<u64>,
        stall: Option<Stall>,
        panic_after: Option<u64>,
    ) -> FaultEngine {
        FaultEngine {
            inner,
            good_left: eio_after,
            stall,
            panic_left: panic_after,
        }
    }
}

impl FaultEngine {
    /// Makes `done` what the misbehaving device would have returned.
    fn misbehave(&mut self, done: &mut [Completion]) {
        if let Some(left) = self.panic_left.as_mut() {
            let n = done.len() as u64;
            if *left < n {
                panic!("{PANIC_ENV}: a thread panics, as a bug would make it (testing)");
            }
            *left -= n;
        }
        if let Some(stall) = self.stall {
            // Hold the completions until the stall they fell in is over, as a device would.
            let mut until = 0;
            for c in done.iter_mut() {
                c.done_ns = stall.completes_at(c.done_ns);
                until = until.max(c.done_ns);
            }
            let now = now_ns();
            if until > now {
                std::thread::sleep(std::time::Duration::from_nanos(until - now));
            }
        }
        if let Some(good_left) = self.good_left.as_mut() {
            for c in done.iter_mut() {
                if *good_left > 0 {
                    *good_left -= 1;
                } else {
                    c.result = -i64::from(libc::EIO);
                }
            }
        }
    }
}

impl Engine for FaultEngine {
    fn kind(&self) -> EngineKind {
        self.inner.kind()
    }

    fn features(&self) -> Vec<&'static str> {
        self.inner.features()
    }

    fn execute(&mut self, req: &IoRequest) -> Completion {
        let mut c = self.inner.execute(req);
        self.misbehave(std::slice::from_mut(&mut c));
        c
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> io::Result<()> {
        self.inner.submit(reqs)
    }

    fn reap(&mut self, min: usize, out: &mut [Completion], timeout_ms: u32) -> io::Result<usize> {
        let n = self.inner.reap(min, out, timeout_ms)?;
        self.misbehave(&mut out[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_holds_what_completes_inside_it() {
        let s = Stall::parse("500ms:100ms").unwrap();
        assert_eq!(
            s,
            Stall {
                every_ns: 500_000_000,
                length_ns: 100_000_000
            }
        );
        assert_eq!(
            s.completes_at(1_000_000_000),
            1_100_000_000,
            "start of a stall"
        );
        assert_eq!(s.completes_at(1_099_999_999), 1_100_000_000);
        assert_eq!(s.completes_at(1_100_000_000), 1_100_000_000, "just after");
        assert_eq!(s.completes_at(1_300_000_000), 1_300_000_000);
        for bad in ["100ms", "100ms:100ms", "1s:0s", "x:1ms", "10s:2s"] {
            assert!(Stall::parse(bad).is_err(), "{bad}");
        }
    }
}
