//! Keeping requests in flight: "direct path read" (a scan, `--depth` multiblock requests in
//! flight, each into its own contiguous buffer), "direct path write" (the same, writing the
//! session's own region), and, with `--keep-inflight`, random single blocks at a constant
//! queue depth (the way fio or ORION drive a device). A wait lasts from a submit to the
//! next completion(s).

use crate::engine::{IoRequest, Op};
use crate::sys::now_ns;

use super::multiblock::Cursor;
use super::session::{IoFailure, REAP_TIMEOUT_MS, Session};

const EV: usize = 0;

/// Where a stream's requests go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Front to back in multiblock steps (scans; writers in their own region).
    Sequential,
    /// Uniformly random single blocks.
    Random,
}

/// Keeps `depth` requests in flight until the window ends.
pub fn stream(s: &mut Session, op: Op, access: Access) -> Result<(), IoFailure> {
    let depth = s.shape.depth;
    let bytes = match access {
        Access::Sequential => s.shape.mbrc as u64 * s.shape.block_size,
        Access::Random => s.shape.block_size,
    };
    let mut cursor = match op {
        Op::Read => Cursor::scan(s.shape, s.id, bytes),
        Op::Write => Cursor::region(s.shape, s.id, bytes),
    };
    let mut free: Vec<usize> = (0..depth).rev().collect();
    let mut targets: Vec<(usize, u64)> = vec![(0, 0); depth];
    let mut reqs: Vec<IoRequest> = Vec::with_capacity(depth);
    let mut comps = std::mem::take(&mut s.completions);
    let mut inflight = 0;
    let mut outcome = Ok(());
    let mut now = now_ns();
    while !s.should_stop(now) {
        reqs.clear();
        while let Some(slot) = free.pop() {
            let (file, offset) = match access {
                Access::Sequential => cursor.advance(),
                Access::Random => s.random_block(),
            };
            targets[slot] = (file, offset);
            let at = slot * bytes as usize;
            if op == Op::Write {
                s.stamp(at, bytes as usize);
            }
            reqs.push(IoRequest::contiguous(
                op,
                file as u32,
                offset,
                s.buf_at(at),
                bytes as u32,
                slot as u64,
            ));
        }
        let t0 = now_ns();
        if !reqs.is_empty() {
            if let Err(e) = s.engine().submit(&reqs) {
                s.rec.error(EV);
                outcome = Err(s.failure(
                    op,
                    reqs[0].file as usize,
                    reqs[0].offset,
                    bytes,
                    None,
                    Some(format!("submit failed: {e}")),
                ));
                break;
            }
            inflight += reqs.len();
            s.rec.submit(EV, t0, now_ns());
        }
        let got = match s.engine().reap(1, &mut comps, REAP_TIMEOUT_MS) {
            Ok(got) => got,
            Err(e) => {
                s.rec.error(EV);
                outcome = Err(s.failure(
                    op,
                    targets[0].0,
                    targets[0].1,
                    bytes,
                    None,
                    Some(format!("wait failed: {e}")),
                ));
                break;
            }
        };
        let mut last = t0;
        for c in &comps[..got] {
            if c.result == bytes as i64 {
                s.rec.request(EV, c.start_ns, c.done_ns, bytes);
            } else if outcome.is_ok() {
                s.rec.error(EV);
                let (file, offset) = targets[c.tag as usize];
                outcome = Err(s.failure(op, file, offset, bytes, Some(c.result), None));
            }
            free.push(c.tag as usize);
            last = last.max(c.done_ns);
        }
        inflight -= got;
        if got > 0 {
            s.rec.wait(EV, t0, last);
            now = last;
        } else {
            now = now_ns();
        }
        if outcome.is_err() {
            break;
        }
    }
    s.completions = comps;
    if inflight > 0 {
        s.drain(inflight, bytes, 2_000);
    }
    outcome
}
