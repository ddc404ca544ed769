//! Keeping requests in flight: "direct path read" (a scan, `--depth` multiblock requests in
//! flight, each into its own contiguous buffer), "direct path write" (the same, writing the
//! session's own region), and, with `--keep-inflight`, random single blocks at a constant
//! queue depth (the way fio or ORION drive a device). A wait lasts from a submit to the
//! next completion(s). [`pump`] is the loop itself; temp spills use it too.

use crate::engine::{IoRequest, Op};
use crate::sys::now_ns;

use super::multiblock::Cursor;
use super::session::{IoFailure, REAP_TIMEOUT_MS, Session};

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
    let bytes = match access {
        Access::Sequential => s.shape.mbrc as u64 * s.shape.block_size,
        Access::Random => s.shape.block_size,
    };
    let mut cursor = if op == Op::Read {
        Cursor::scan(s.shape, s.local_id, bytes)
    } else {
        Cursor::region(s.shape, s.local_id, bytes)
    };
    pump(s, op, s.slot, bytes, |s, len| {
        Some(match access {
            Access::Sequential => cursor.advance_by(len),
            Access::Random => s.random_extent(len),
        })
    })
    .map(|_| ())
}

/// Keeps up to `shape.depth` requests in flight, each of `bytes` (or, for a class with
/// weighted sizes, of a size drawn per request, at most `bytes`) to the (file, offset)
/// `next(session, len)` gives, recording into event `slot`, until `next` runs out (returns
/// Ok(true)), or the window ends or `stop` is set (Ok(false)). Allocates only its slot
/// tables, once.
pub fn pump(
    s: &mut Session,
    op: Op,
    slot: usize,
    bytes: u64,
    mut next: impl FnMut(&mut Session, u64) -> Option<(usize, u64)>,
) -> Result<bool, IoFailure> {
    let depth = s.shape.depth;
    let mut free: Vec<usize> = (0..depth).rev().collect();
    // The request in flight in each buffer slot (its tag).
    let mut slots: Vec<IoRequest> =
        vec![IoRequest::contiguous(op, 0, 0, std::ptr::null_mut(), 0, 0); depth];
    // Open loop (the plan gives rate classes a depth of 1): each request's scheduled time.
    let mut scheds: Vec<Option<u64>> = vec![None; depth];
    let mut reqs: Vec<IoRequest> = Vec::with_capacity(depth);
    let mut comps = std::mem::take(&mut s.completions);
    let mut inflight = 0;
    let mut outcome = Ok(());
    let mut exhausted = false;
    let mut now = now_ns();
    while !s.should_stop(now) {
        reqs.clear();
        while !exhausted && let Some(buf_slot) = free.pop() {
            let len = s.request_len(bytes);
            let Some((file, offset)) = next(s, len) else {
                free.push(buf_slot);
                exhausted = true;
                break;
            };
            scheds[buf_slot] = s.pace();
            let at = buf_slot * bytes as usize;
            if op == Op::Write && !s.prepare_write(at, len as usize, file, offset) {
                // --verify: being written by another request; somewhere else next round.
                free.push(buf_slot);
                break;
            }
            let r = IoRequest::contiguous(
                op,
                file as u32,
                offset,
                s.buf_at(at),
                len as u32,
                buf_slot as u64,
            );
            slots[buf_slot] = r;
            reqs.push(r);
        }
        if reqs.is_empty() && inflight == 0 {
            if exhausted {
                break; // every request of the pass completed
            }
            now = now_ns(); // --verify: every place tried was being written by another session
            continue;
        }
        s.ash.wait(slot); // the wait starts before the submit call, as it is timed
        let t0 = now_ns();
        if !reqs.is_empty() {
            if let Err(e) = s.engine().submit(&reqs) {
                s.rec.error(slot);
                outcome = Err(s.failure(
                    op,
                    reqs[0].file as usize,
                    reqs[0].offset,
                    reqs[0].bytes(),
                    None,
                    Some(format!("submit failed: {e}")),
                ));
                break;
            }
            inflight += reqs.len();
            s.rec.submit(slot, t0, now_ns());
        }
        let reaped = s.engine().reap(1, &mut comps, REAP_TIMEOUT_MS);
        s.ash.on_cpu();
        let got = match reaped {
            Ok(got) => got,
            Err(e) => {
                s.rec.error(slot);
                outcome = Err(s.failure(
                    op,
                    slots[0].file as usize,
                    slots[0].offset,
                    bytes,
                    None,
                    Some(format!("wait failed: {e}")),
                ));
                break;
            }
        };
        let mut last = t0;
        for c in &comps[..got] {
            let tag = c.tag as usize;
            // No test writes blocks a stream reads while it reads them: no race to check.
            // SAFETY: a completed request's buffer slot holds what it transferred.
            let settled = unsafe { s.complete(slot, c, &slots[tag], None, scheds[tag]) };
            outcome = outcome.and(settled);
            free.push(tag);
            last = last.max(c.done_ns);
        }
        inflight -= got;
        if got > 0 {
            s.rec.wait(slot, t0, last);
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
        s.drain(slot, inflight, 2_000, &slots);
    }
    outcome.map(|()| exhausted && inflight == 0)
}
