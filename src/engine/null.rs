//! The null engine (`--engine null`): every request completes at once, without a system
//! call, as fio's null engine does. What is left of a run is dbio's own cost per request —
//! choosing the block, pacing, the two clock readings, the histograms, ASH — so it can be
//! measured apart from the kernel's. A measuring aid: never the default, never chosen by
//! `auto`, and the result says its figures are not the storage's.
//!
//! Reads leave their buffers as they are (whatever the session's memory held) and writes
//! change nothing on disk, which is why `--verify` is refused beside it
//! ([`super::conflicts`]).

use std::io;

use super::{Completion, Engine, EngineKind, IoRequest};
use crate::sys::now_ns;

/// Completes what it is given; `submit`ted requests wait in a FIFO for `reap`.
pub struct NullEngine {
    done: Vec<Completion>,
    head: usize,
    len: usize,
}

impl NullEngine {
    /// Bytes of its table of `capacity` completions (see [`super::footprint`]).
    pub fn footprint(capacity: usize) -> u64 {
        (capacity.max(1) * std::mem::size_of::<Completion>()) as u64
    }

    pub fn new(capacity: usize) -> NullEngine {
        NullEngine {
            done: vec![Completion::default(); capacity.max(1)],
            head: 0,
            len: 0,
        }
    }
}

/// A request's full result: its bytes (0 for a datasync).
#[inline]
fn full(r: &IoRequest) -> i64 {
    i64::from(r.len)
}

impl Engine for NullEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Null
    }

    fn features(&self) -> Vec<&'static str> {
        vec!["no I/O: requests complete at once, without a system call"]
    }

    /// Timed as a real call is (a clock reading before and after), so that the cost of
    /// timing stays in what is measured.
    #[inline]
    fn execute(&mut self, r: &IoRequest) -> Completion {
        let start_ns = now_ns();
        Completion {
            tag: r.tag,
            result: full(r),
            start_ns,
            done_ns: now_ns(),
        }
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> io::Result<()> {
        if self.len + reqs.len() > self.done.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "more requests than the engine's capacity",
            ));
        }
        let start_ns = now_ns();
        for r in reqs {
            let slot = (self.head + self.len) % self.done.len();
            self.done[slot] = Completion {
                tag: r.tag,
                result: full(r),
                start_ns,
                done_ns: start_ns,
            };
            self.len += 1;
        }
        Ok(())
    }

    fn reap(&mut self, _min: usize, out: &mut [Completion], _timeout_ms: u32) -> io::Result<usize> {
        let n = self.len.min(out.len());
        let done_ns = now_ns();
        for o in out.iter_mut().take(n) {
            *o = Completion {
                done_ns,
                ..self.done[self.head]
            };
            self.head = (self.head + 1) % self.done.len();
        }
        self.len -= n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Op;

    #[test]
    fn completes_everything_in_full_without_touching_buffers() {
        let mut e = NullEngine::new(4);
        let mut buf = [7u8; 16];
        let r = IoRequest::contiguous(Op::Read, 3, 4096, buf.as_mut_ptr(), 16, 9);
        let c = e.execute(&r);
        assert_eq!((c.tag, c.result), (9, 16));
        assert!(c.done_ns >= c.start_ns);
        assert_eq!(buf, [7u8; 16], "a null read leaves the buffer as it was");

        let reqs: Vec<IoRequest> = (0..4)
            .map(|t| IoRequest::contiguous(Op::Write, 0, 0, buf.as_mut_ptr(), 8, t))
            .collect();
        e.submit(&reqs).unwrap();
        assert!(e.submit(&reqs[..1]).is_err(), "beyond the capacity");
        let mut out = [Completion::default(); 3];
        assert_eq!(e.reap(1, &mut out, 0).unwrap(), 3);
        assert_eq!(out.map(|c| (c.tag, c.result)), [(0, 8), (1, 8), (2, 8)]);
        assert_eq!(e.reap(1, &mut out, 0).unwrap(), 1);
        assert_eq!((out[0].tag, out[0].result), (3, 8));
        assert_eq!(e.reap(1, &mut out, 0).unwrap(), 0);
        assert_eq!(e.execute(&IoRequest::datasync(0, 1)).result, 0);
    }
}
