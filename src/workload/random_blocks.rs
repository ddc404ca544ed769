//! Random single-block I/O: "db file sequential read" (one `pread` at a time) and the batch
//! events "db file parallel read" / "db file parallel write" (`--batch` random blocks
//! submitted in one call and waited for together, as a foreground reading ahead or DBWR
//! writing dirty buffers does).

use crate::engine::{IoRequest, Op};
use crate::sys::now_ns;

use super::session::{IoFailure, REAP_TIMEOUT_MS, Session};

/// db file sequential read: pick a random block, read it with one synchronous call (`pread`
/// through the session's engine), repeat.
pub fn sequential_read(s: &mut Session) -> Result<(), IoFailure> {
    let block = s.shape.block_size;
    let buf = s.buf_at(0);
    let slot = s.slot;
    let mut now = now_ns();
    while !s.should_stop(now) {
        let bs = s.request_len(block);
        let (file, offset) = s.random_extent(bs);
        let sched = s.pace();
        let r = IoRequest::contiguous(Op::Read, file as u32, offset, buf, bs as u32, 0);
        let c = s.call(slot, &r);
        now = c.done_ns;
        // SAFETY: the read filled `buf`, the session's own region of at least one request.
        unsafe { s.complete(slot, &c, &r, None, sched) }?;
    }
    Ok(())
}

/// db file parallel read / db file parallel write: `--batch` random blocks, one submit call,
/// wait for all. Each request is timed from the submit to its own completion; the wait from
/// the submit to the last completion.
pub fn batch(s: &mut Session, op: Op) -> Result<(), IoFailure> {
    let block = s.shape.block_size;
    // Each request has its own buffer slot, as large as the largest request.
    let stride = s.shape.sizes.map_or(block, |m| m.max()) as usize;
    let n = s.shape.batch;
    let mut reqs: Vec<IoRequest> = Vec::with_capacity(n);
    let mut now = now_ns();
    while !s.should_stop(now) {
        reqs.clear();
        for slot in 0..n {
            let bs = s.request_len(block);
            let (mut file, mut offset) = s.random_extent(bs);
            // With --verify, a block being written by another session is not written again
            // at the same time: pick another.
            while op == Op::Write && !s.prepare_write(slot * stride, bs as usize, file, offset) {
                (file, offset) = s.random_extent(bs);
            }
            let buf = s.buf_at(slot * stride);
            reqs.push(IoRequest::contiguous(
                op,
                file as u32,
                offset,
                buf,
                bs as u32,
                slot as u64,
            ));
        }
        let sched = s.pace();
        match submit_and_wait(s, s.slot, sched, &reqs)? {
            Some(last) => now = last,
            None => return Ok(()),
        }
    }
    Ok(())
}

/// Submits `reqs` in one call and waits for all of them: one wait on event `slot`, one
/// request each. `reqs[tag]` is the request with that tag; `sched` the batch's scheduled time
/// in an open loop. Returns the time the last one completed, or
/// `None` when the run stopped while some were still out (they were drained).
pub fn submit_and_wait(
    s: &mut Session,
    slot: usize,
    sched: Option<u64>,
    reqs: &[IoRequest],
) -> Result<Option<u64>, IoFailure> {
    let Some(first) = reqs.first() else {
        return Ok(Some(now_ns()));
    };
    let fail = |s: &Session, detail: String| {
        let (file, offset) = (first.file as usize, first.offset);
        s.failure(first.op, file, offset, first.bytes(), None, Some(detail))
    };
    if first.op == Op::Read
        && let Some(v) = s.verify.as_mut()
    {
        // Writes (DBWR) may land while these reads are out: remember where each block was.
        for r in reqs {
            v.before_read(r.tag as usize, r.file as usize, r.offset);
        }
    }
    // The wait, as the database times it, starts before the submit call.
    s.ash.wait(slot);
    let t0 = now_ns();
    if let Err(e) = s.engine().submit(reqs) {
        s.rec.error(slot);
        return Err(fail(s, format!("submit failed: {e}")));
    }
    let t_submitted = now_ns();
    s.rec.submit(slot, t0, t_submitted);
    let mut comps = std::mem::take(&mut s.completions);
    let mut outcome = Ok(());
    let mut left = reqs.len();
    let mut last = t_submitted;
    while left > 0 {
        let got = match s.engine().reap(1, &mut comps, REAP_TIMEOUT_MS) {
            Ok(got) => got,
            Err(e) => {
                s.rec.error(slot);
                outcome = Err(fail(s, format!("wait failed: {e}")));
                break;
            }
        };
        for c in &comps[..got] {
            let r = &reqs[c.tag as usize];
            let before = s.verify.as_ref().map(|v| v.before[c.tag as usize]);
            // SAFETY: a completed request's buffer holds what it transferred.
            let settled = unsafe { s.complete(slot, c, r, before, sched) };
            outcome = outcome.and(settled);
            last = last.max(c.done_ns);
        }
        left -= got;
        if got == 0 && s.stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    s.completions = comps;
    s.ash.on_cpu();
    if left > 0 {
        // Stopped while requests were still out: wait for them before buffers go away.
        s.drain(slot, left, 2_000, reqs);
        return outcome.map(|()| None);
    }
    s.rec.wait(slot, sched.map_or(t0, |at| at.min(t0)), last);
    outcome.map(|()| Some(last))
}
