//! Classic tests as classes. A classic test (`dbio run read-iops`) issues what one class of a
//! job file would issue — the events of SPEC §4 with the test's options as the class's size,
//! sessions, batch and depth — so that `--save-job` writes it as a class and `--rate` runs
//! it open loop. The oltp and temp tests, and `--keep-inflight`, issue more than one class
//! expresses; they stay tests with options.

use crate::engine::Submission;
use crate::workload::sizes::RequestSizes;
use crate::workload::spec::{ClassSpec, RunConfig};
use crate::workload::{Event, Test};

/// The one class a classic test run is (`--save-job`, `--rate`); `None` for runs no class
/// expresses (oltp, temp, --keep-inflight).
pub fn classic_class(cfg: &RunConfig) -> Option<ClassSpec> {
    let (event, size) = match (cfg.test, cfg.submission) {
        _ if cfg.keep_inflight => return None,
        (Test::ReadIops, Submission::Sync) => (Event::DbFileSequentialRead, cfg.dataset.block_size),
        (Test::ReadIops, Submission::Async) => (Event::DbFileParallelRead, cfg.dataset.block_size),
        (Test::ReadMbps, Submission::Sync) => (Event::DbFileScatteredRead, cfg.multiblock_bytes()),
        (Test::ReadMbps, Submission::Async) => (Event::DirectPathRead, cfg.multiblock_bytes()),
        (Test::WriteIops, _) => (Event::DbFileParallelWrite, cfg.dataset.block_size),
        (Test::WriteMbps, _) => (Event::DirectPathWrite, cfg.multiblock_bytes()),
        (Test::Redo, _) => {
            let r = cfg.redo.per_commit;
            let mut c = ClassSpec::fixed(
                cfg.test.name(),
                Event::LogFileSync,
                r.lo,
                cfg.sessions,
                Submission::Sync,
            );
            if r.lo != r.hi {
                c.sizes = RequestSizes::Uniform { lo: r.lo, hi: r.hi };
            }
            c.think = cfg.redo.think;
            return Some(c);
        }
        _ => return None,
    };
    let mut c = ClassSpec::fixed(cfg.test.name(), event, size, cfg.sessions, cfg.submission);
    match event {
        Event::DbFileParallelRead | Event::DbFileParallelWrite => c.batch = Some(cfg.batch),
        Event::DirectPathRead | Event::DirectPathWrite => c.depth = Some(cfg.depth),
        _ => {}
    }
    Some(c)
}
