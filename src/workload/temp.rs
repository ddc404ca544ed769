//! Temp spills: a sort or hash join that does not fit in memory writes its spill to temp
//! ("direct path write temp") and reads it back ("direct path read temp"). Each session
//! spills `--spill-size` to its own temp file in `--temp-io` requests, `--depth` in flight
//! (one at a time in synchronous modes), then reads it back, and starts over. Comparing
//! runs with different `--temp-io` finds the temp I/O size the storage likes best.

use crate::engine::Op;

use super::session::{IoFailure, Session};
use super::stream::pump;
use super::{Event, Plan};

/// The spill loop of one session: its temp file is number `plan.temp_first_file +
/// local_id`. A job class issues only its own event: a "direct path write temp" class
/// writes its spill over and over, a "direct path read temp" class reads it (written before
/// the run) over and over.
pub fn spills(plan: &Plan, s: &mut Session) -> Result<(), IoFailure> {
    let io = plan.temp.temp_io;
    let spill = plan.temp.spill_bytes();
    let file = plan.temp_first_file + s.local_id;
    let class = plan.events.len() == 1;
    let passes = [
        (Op::Write, Event::DirectPathWriteTemp),
        (Op::Read, Event::DirectPathReadTemp),
    ];
    loop {
        for (op, event) in passes {
            if !plan.events.contains(&event) {
                continue;
            }
            s.event = event;
            let slot = if class { s.slot } else { plan.slot(event) };
            let mut pos = 0u64;
            let done = pump(s, op, slot, io, |_, len| {
                if pos + len > spill {
                    if !class {
                        return None; // the pass is over
                    }
                    // A class goes round its spill: no drawn size is dropped at the end.
                    pos = 0;
                }
                pos += len;
                Some((file, pos - len))
            })?;
            if !done {
                return Ok(());
            }
        }
    }
}
