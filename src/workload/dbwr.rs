//! The database writer (DBWR): takes dirty blocks from the instance's dirty queue and writes
//! them in batches of up to `--batch` ("db file parallel write": one submit, wait for all;
//! in synchronous io modes the engine writes them one by one). Without a buffer cache the
//! queue holds block numbers and DBWR writes from its own memory; with one it holds cache
//! buffers, which DBWR writes from the cache and marks clean so they can be reused.
//!
//! A DBWR is a [`Session`] (its own engine, buffers, recorder and ASH slot) that runs this
//! loop instead of a transaction loop. It stops when every session has stopped.

use std::sync::atomic::Ordering::SeqCst;

use crate::engine::{IoRequest, Op};

use super::random_blocks::submit_and_wait;
use super::session::{IoFailure, Session};
use super::{Event, Workload};

/// Writes dirty blocks until every session has stopped.
pub fn dbwr(plan: &Workload, s: &mut Session) -> Result<(), IoFailure> {
    let slot = plan.slot(Event::DbFileParallelWrite);
    let inst = s.inst;
    let dirty = inst.dirty.as_ref().expect("oltp has a dirty queue");
    let cache = inst.cache.as_ref();
    let bs = s.shape.block_size;
    let batch = s.shape.batch;
    let mut buffers = vec![0usize; batch];
    let mut reqs: Vec<IoRequest> = Vec::with_capacity(batch);
    s.ash.idle();
    loop {
        reqs.clear();
        while reqs.len() < batch {
            let Some(item) = dirty.pop() else { break };
            let k = reqs.len();
            let (block, buf) = match cache {
                None => {
                    let (file, offset) = s.shape.locate(item);
                    if !s.prepare_write(k * bs as usize, bs as usize, file, offset) {
                        continue; // --verify: another DBWR is writing it right now
                    }
                    (item, s.buf_at(k * bs as usize))
                }
                Some(c) => {
                    let b = item as usize;
                    if !c.begin_write(b) {
                        continue; // written already
                    }
                    let block = c.block_of(b);
                    if let Some(v) = s.verify.as_mut() {
                        let (file, offset) = s.shape.locate(block);
                        // SAFETY: DBWR has the buffer pinned for writing; sessions do not
                        // change a buffer's bytes while it is cached.
                        let data =
                            unsafe { std::slice::from_raw_parts_mut(c.buffer_ptr(b), bs as usize) };
                        if !v.seal(data, file, offset) {
                            c.end_write(b);
                            continue; // another DBWR is writing the block right now
                        }
                    }
                    buffers[k] = b;
                    (block, c.buffer_ptr(b))
                }
            };
            let (file, offset) = s.shape.locate(block);
            reqs.push(IoRequest::contiguous(
                Op::Write,
                file as u32,
                offset,
                buf,
                bs as u32,
                k as u64,
            ));
        }
        if reqs.is_empty() {
            if inst.sessions_running.load(SeqCst) == 0 {
                return Ok(());
            }
            s.ash.idle();
            std::thread::sleep(std::time::Duration::from_millis(1));
            continue;
        }
        s.ash.on_cpu();
        let written = submit_and_wait(s, slot, None, &reqs);
        if let Some(c) = cache {
            buffers[..reqs.len()].iter().for_each(|&b| c.end_write(b));
        }
        if written?.is_none() {
            return Ok(()); // stopped with writes out; they were drained
        }
    }
}
