//! The OLTP mix (SLOB-like). Each session loops over transactions:
//!
//! 1. optionally think (idle, not DB time);
//! 2. pick `--work-unit` blocks, uniformly or with `--hotspot-pct` of them in the hot spot
//!    (the first `--hotspot-size` bytes of the data set);
//! 3. read them: from the buffer cache when there is one and they are cached (logical
//!    reads), else from the data files, one by one ("db file sequential read") or as one
//!    batch with `--async-reads` ("db file parallel read"). A session that finds no clean
//!    buffer waits for DBWR ("free buffer waits");
//! 4. with probability `--update-pct`: mark the blocks dirty for DBWR, generate redo and
//!    commit ("log file sync").

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use crate::engine::{IoRequest, Op, sync};
use crate::sys::{AlignedBuf, now_ns};

use super::cache::{BufferCache, DirtyQueue, Lookup};
use super::random_blocks::submit_and_wait;
use super::session::{IoFailure, Session, SessionShape};
use super::{Event, Workload, redo};

/// Where a block of the work unit is held while the transaction uses it.
#[derive(Debug, Clone, Copy)]
enum Held {
    /// Pinned buffer of the cache.
    Buffer(usize),
    /// Read into the session's own memory (no cache, or another session is reading it).
    Private,
}

/// The transaction loop of one session.
pub fn transactions(plan: &Workload, s: &mut Session) -> Result<(), IoFailure> {
    let o = &plan.oltp;
    let inst = s.inst;
    let n = o.work_unit;
    let bs = s.shape.block_size;
    let read_slot = s.slot;
    let lfs = plan.slot(Event::LogFileSync);
    let fbw = plan.slot(Event::FreeBufferWaits);
    let data_blocks = s.shape.data_blocks();
    let hot_blocks = (o.hotspot_size / bs).clamp(1, data_blocks);
    let redo_at = n * bs as usize;
    // Per-transaction scratch, allocated once.
    let mut blocks = vec![0u64; n];
    let mut held = vec![Held::Private; n];
    let mut reqs: Vec<IoRequest> = Vec::with_capacity(n);
    let mut misses: Vec<usize> = Vec::with_capacity(n);
    let mut now = now_ns();
    while !s.should_stop(now) {
        if let Some(think) = plan.redo.think {
            super::think(s, think);
        }
        for b in blocks.iter_mut() {
            *b = if o.hotspot_pct > 0 && s.rng.u32(0..100) < o.hotspot_pct {
                s.rng.u64(..hot_blocks)
            } else {
                s.rng.u64(..data_blocks)
            };
        }
        let update = o.update_pct > 0 && s.rng.u32(0..100) < o.update_pct;

        // Find the blocks in the cache; what is not there is read from the data files.
        reqs.clear();
        misses.clear();
        for i in 0..n {
            held[i] = match inst.cache.as_ref() {
                None => Held::Private,
                Some(cache) => match lookup(s, cache, blocks[i], fbw) {
                    Lookup::Hit(b) => Held::Buffer(b),
                    Lookup::Miss(b) => {
                        misses.push(b);
                        Held::Buffer(b)
                    }
                    Lookup::Busy | Lookup::NoFreeBuffer => Held::Private,
                },
            };
            let into = match held[i] {
                Held::Buffer(b) if misses.last() == Some(&b) => {
                    inst.cache.as_ref().map(|c| c.buffer_ptr(b))
                }
                Held::Buffer(_) => None, // a logical read: nothing to read
                Held::Private => Some(s.buf_at(i * bs as usize)),
            };
            if let Some(buf) = into {
                let (file, offset) = s.shape.locate(blocks[i]);
                let tag = reqs.len();
                reqs.push(IoRequest::contiguous(
                    Op::Read,
                    file as u32,
                    offset,
                    buf,
                    bs as u32,
                    tag as u64,
                ));
            }
        }
        let physical = reqs.len() as u64;
        let read = if o.async_reads {
            submit_and_wait(s, read_slot, None, &reqs).map(|done| done.is_some())
        } else {
            read_one_by_one(s, read_slot, &reqs)
        };
        let finished = match read {
            Ok(finished) => finished,
            Err(f) => {
                forget_misses(s, &misses);
                return Err(f);
            }
        };
        if let Some(cache) = inst.cache.as_ref() {
            misses.iter().for_each(|&b| cache.read_done(b));
        }
        now = now_ns();
        s.rec.block_reads(now, n as u64, physical);

        if update && finished {
            mark_dirty(s, &blocks, &held);
            let size = plan.redo.per_commit.pick(&mut s.rng) as usize;
            let end = redo::generate_at(s, redo_at, size);
            now = redo::commit(s, lfs, end, size as u64, None)?;
        } else if let Some(cache) = inst.cache.as_ref() {
            for h in &held {
                if let Held::Buffer(b) = *h {
                    cache.release(b, false);
                }
            }
        }
        if !finished {
            break;
        }
        s.rec.transaction(now);
    }
    Ok(())
}

/// Looks `block` up in the cache; when no buffer is free, waits for DBWR to clean one
/// ("free buffer waits"). Gives up (returns NoFreeBuffer: read privately) only when the run
/// is stopping.
fn lookup(s: &mut Session, cache: &BufferCache, block: u64, fbw: usize) -> Lookup {
    let first = cache.get(block);
    if first != Lookup::NoFreeBuffer {
        return first;
    }
    s.ash.wait(fbw);
    let t0 = now_ns();
    let found = loop {
        std::thread::sleep(std::time::Duration::from_micros(100));
        let r = cache.get(block);
        if r != Lookup::NoFreeBuffer || s.stop.load(Relaxed) || s.rec.window_over(now_ns()) {
            break r;
        }
    };
    let t1 = now_ns();
    s.ash.on_cpu();
    s.rec.request(fbw, t0, t1, 0);
    found
}

/// db file sequential read of each request in turn, each a synchronous call.
fn read_one_by_one(s: &mut Session, slot: usize, reqs: &[IoRequest]) -> Result<bool, IoFailure> {
    for r in reqs {
        // --verify: DBWR may write the block while it is read; remember where it was.
        let before = (s.verify.as_ref()).map(|v| v.entry(r.file as usize, r.offset));
        let c = s.call(slot, r);
        // SAFETY: the buffer is a pinned cache buffer or the session's own region, filled by
        // the read.
        unsafe { s.complete(slot, &c, r, before, None) }?;
    }
    Ok(true)
}

/// A failed read leaves its cache buffers unusable: drop the blocks from the cache.
fn forget_misses(s: &Session, misses: &[usize]) {
    if let Some(cache) = s.inst.cache.as_ref() {
        misses.iter().for_each(|&b| cache.read_failed(b));
    }
}

/// The update: the work unit's blocks become dirty, queued for DBWR once each. Blocks read
/// privately because another session was reading them are left alone (that session's
/// buffer holds the block).
fn mark_dirty(s: &Session, blocks: &[u64], held: &[Held]) {
    let dirty = s.inst.dirty.as_ref().expect("oltp has a dirty queue");
    match s.inst.cache.as_ref() {
        None => blocks.iter().for_each(|&b| queue(dirty, b, s.stop)),
        Some(cache) => {
            for h in held {
                if let Held::Buffer(b) = *h
                    && cache.release(b, true)
                {
                    queue(dirty, b as u64, s.stop);
                }
            }
        }
    }
}

/// Queues `item` for DBWR; the queue holds every item once, so it is full only while DBWR
/// falls behind by the whole data set — then wait.
fn queue(dirty: &DirtyQueue, item: u64, stop: &AtomicBool) {
    while !dirty.push(item) && !stop.load(Relaxed) {
        std::thread::yield_now();
    }
}

/// Loads the cache before the run (unmeasured): the first blocks of the data set — the hot
/// spot first — until the cache is full or the data set is in. Reads 1 MiB at a time,
/// straight from the kernel like the data set's fill: preparation, not requests of the run,
/// so no engine (and no test engine) is involved. Returns the blocks loaded.
pub fn warm_cache(
    cache: &BufferCache,
    fds: &[RawFd],
    shape: &SessionShape,
    stop: &AtomicBool,
) -> std::io::Result<u64> {
    let bs = shape.block_size;
    let per_chunk = (1u64 << 20).div_ceil(bs).max(1);
    let mut chunk = AlignedBuf::new((per_chunk * bs) as usize, 4096)?;
    let want = shape.data_blocks().min(cache.buffers() as u64);
    let mut loaded = 0;
    let mut block = 0;
    while block < want && !stop.load(Relaxed) {
        let (file, offset) = shape.locate(block);
        // Stay within one file.
        let in_file = (shape.file_size / bs - offset / bs)
            .min(per_chunk)
            .min(want - block);
        let len = (in_file * bs) as usize;
        // SAFETY: the chunk buffer holds `len` bytes.
        let got = unsafe { sync::read_at(fds[file], chunk.as_mut_ptr(), len, offset) };
        if got != len as i64 {
            return Err(if got < 0 {
                std::io::Error::from_raw_os_error(-got as i32)
            } else {
                std::io::Error::other("short read")
            });
        }
        for k in 0..in_file {
            if let Lookup::Miss(b) = cache.get(block + k) {
                let src = &chunk.as_mut_slice()[(k * bs) as usize..((k + 1) * bs) as usize];
                // SAFETY: buffer b holds one block and is ours (pinned, I/O in progress).
                unsafe {
                    std::ptr::copy_nonoverlapping(src.as_ptr(), cache.buffer_ptr(b), bs as usize)
                };
                cache.read_done(b);
                cache.release(b, false);
                loaded += 1;
            }
        }
        block += in_file;
    }
    cache.clear_references();
    Ok(loaded)
}
