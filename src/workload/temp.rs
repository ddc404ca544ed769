//! Temp spills: a sort or hash join that does not fit in memory writes its spill to temp
//! ("direct path write temp") and reads it back ("direct path read temp"). Each session
//! spills `--spill-size` to its own temp file in `--temp-io` requests, `--depth` in flight
//! (one at a time in synchronous modes), then reads it back, and starts over. Comparing
//! runs with different `--temp-io` finds the temp I/O size the storage likes best.

use crate::engine::Op;

use super::session::{IoFailure, Session};
use super::stream::pump;
use super::{Event, Plan};

/// The spill loop of one session; session `id` uses temp file `id`.
pub fn spills(plan: &Plan, s: &mut Session) -> Result<(), IoFailure> {
    let io = plan.temp.temp_io;
    let requests = plan.temp.spill_size / io;
    let file = s.id;
    let passes = [
        (Op::Write, Event::DirectPathWriteTemp),
        (Op::Read, Event::DirectPathReadTemp),
    ];
    loop {
        for (op, event) in passes {
            s.event = event;
            let mut next = 0u64;
            let done = pump(s, op, plan.slot(event), io, |_| {
                (next < requests).then(|| {
                    next += 1;
                    (file, (next - 1) * io)
                })
            })?;
            if !done {
                return Ok(());
            }
        }
    }
}
