//! Temp spills: a sort or hash join that does not fit in memory writes its spill to temp
//! ("direct path write temp") and reads it back ("direct path read temp"). Each session
//! spills `--spill-size` to its own temp file in `--temp-io` requests, `--depth` in flight
//! (one at a time in synchronous modes), then reads it back, and starts over. Comparing
//! runs with different `--temp-io` finds the temp I/O size the storage likes best.

use crate::engine::Op;

use super::session::{IoFailure, Session};
use super::spec::ClassKind;
use super::stream::pump;
use super::{ClassPlan, Event, Workload};

/// The spill loop of one session of `class`: its temp file is number
/// `class.temp_first_file + local_id`. The temp test's class writes its spill and reads it
/// back; a job's class issues only its own event: a "direct path write temp" class writes
/// its spill over and over, a "direct path read temp" class reads it (written before the
/// run) over and over.
pub fn spills(plan: &Workload, class: &ClassPlan, s: &mut Session) -> Result<(), IoFailure> {
    let io = class.temp_io();
    let spill = class.spill_bytes();
    let file = class.temp_first_file + s.local_id;
    let both = class.spec.kind == ClassKind::Spills;
    let passes = [
        (Op::Write, Event::DirectPathWriteTemp),
        (Op::Read, Event::DirectPathReadTemp),
    ];
    loop {
        for (op, event) in passes {
            if !both && event != class.spec.event {
                continue;
            }
            s.event = event;
            let slot = if both { plan.slot(event) } else { s.slot };
            let mut pos = 0u64;
            let done = pump(s, op, slot, io, |_, len| {
                if pos + len > spill {
                    if both {
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
