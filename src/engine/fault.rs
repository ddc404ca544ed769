//! A test engine: wraps a real one and fails completions with EIO after a number of good
//! ones, so dbio's handling of a device that starts failing mid-run can be tested for real
//! (SPEC §7.4). Enabled only by the environment variable `DBIO_FAULT_EIO_AFTER=N`.

use std::io;

use super::{Completion, Engine, EngineKind, IoRequest};

/// The variable that turns fault injection on: completions after the first N fail with EIO.
pub const ENV: &str = "DBIO_FAULT_EIO_AFTER";

/// How many completions pass before failures start, if fault injection is on.
pub fn eio_after() -> Option<u64> {
    std::env::var(ENV).ok()?.parse().ok()
}

pub struct FaultEngine {
    inner: Box<dyn Engine>,
    good_left: u64,
}

impl FaultEngine {
    pub fn new(inner: Box<dyn Engine>, good: u64) -> FaultEngine {
        FaultEngine {
            inner,
            good_left: good,
        }
    }
}

impl Engine for FaultEngine {
    fn kind(&self) -> EngineKind {
        self.inner.kind()
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> io::Result<()> {
        self.inner.submit(reqs)
    }

    fn reap(&mut self, min: usize, out: &mut [Completion], timeout_ms: u32) -> io::Result<usize> {
        let n = self.inner.reap(min, out, timeout_ms)?;
        for c in &mut out[..n] {
            if self.good_left > 0 {
                self.good_left -= 1;
            } else {
                c.result = -i64::from(libc::EIO);
            }
        }
        Ok(n)
    }
}
