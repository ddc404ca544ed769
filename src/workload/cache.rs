//! The database's shared memory for data blocks: an optional buffer cache (CLOCK
//! replacement, shared by all sessions, written back by DBWR), and the dirty-block queue DBWR
//! takes its work from.
//!
//! Everything here is lock-free: buffer headers are one atomic state word each (pin count,
//! reference, dirty and I/O bits), the block → buffer map is an array of atomics, the
//! replacement hand is an atomic counter, and the dirty queue is a bounded lock-free queue.

use std::sync::atomic::{
    AtomicU32, AtomicU64, AtomicUsize, Ordering::AcqRel, Ordering::Acquire, Ordering::Relaxed,
    Ordering::Release,
};

use crossbeam_queue::ArrayQueue;

use crate::sys::AlignedBuf;

/// Blocks (without a cache) or buffers (with one) that DBWR must write. A bit per item makes
/// sure each is queued at most once until DBWR takes it.
pub struct DirtyQueue {
    queue: ArrayQueue<u64>,
    queued: Box<[AtomicU64]>,
}

impl DirtyQueue {
    /// A queue for items `0..items`.
    /// Bytes [`DirtyQueue::new`] takes for `items`: a queue slot (value and stamp) per
    /// item up to 16 Mi, and a bit per item.
    pub fn footprint(items: u64) -> u64 {
        DirtyQueue::capacity(items) as u64 * 16 + items.div_ceil(64) * 8
    }

    fn capacity(items: u64) -> usize {
        items.clamp(1, 16 << 20) as usize
    }

    pub fn new(items: u64) -> DirtyQueue {
        let cap = DirtyQueue::capacity(items);
        DirtyQueue {
            queue: ArrayQueue::new(cap),
            queued: (0..items.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Marks `item` dirty. Returns false when the queue is full (DBWR is behind), in which case
    /// the caller waits and tries again.
    pub fn push(&self, item: u64) -> bool {
        let (word, bit) = ((item / 64) as usize, 1u64 << (item % 64));
        if self.queued[word].fetch_or(bit, AcqRel) & bit != 0 {
            return true; // already queued
        }
        if self.queue.push(item).is_err() {
            self.queued[word].fetch_and(!bit, AcqRel);
            return false;
        }
        true
    }

    /// Takes one item to write. Clearing its bit first means a block dirtied again while DBWR
    /// writes it is queued again.
    pub fn pop(&self) -> Option<u64> {
        let item = self.queue.pop()?;
        self.queued[(item / 64) as usize].fetch_and(!(1u64 << (item % 64)), AcqRel);
        Some(item)
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

const PIN_MASK: u32 = 0xffff;
/// Used since the replacement hand last passed.
const REF: u32 = 1 << 16;
/// Changed in memory, not yet written by DBWR.
const DIRTY: u32 = 1 << 17;
/// A read into the buffer is in progress.
const IO: u32 = 1 << 18;
const NO_BLOCK: u64 = u64::MAX;

#[repr(align(16))]
struct BufferHeader {
    block: AtomicU64,
    state: AtomicU32,
}

/// What `BufferCache::get` found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// In the cache: a logical read. The buffer is pinned.
    Hit(usize),
    /// Not cached: the buffer was claimed for the block (pinned, I/O in progress); the caller
    /// reads the block into it, then calls `read_done`.
    Miss(usize),
    /// Another session is reading this block right now: read it privately.
    Busy,
    /// No clean, unpinned buffer: the session must wait for DBWR ("free buffer waits").
    NoFreeBuffer,
}

/// A CLOCK buffer cache of `buffers` blocks.
pub struct BufferCache {
    pub block_size: usize,
    memory: AlignedBuf,
    headers: Box<[BufferHeader]>,
    /// For every data set block: buffer index + 1, or 0 when not cached.
    map: Box<[AtomicU32]>,
    hand: AtomicUsize,
}

impl BufferCache {
    /// Bytes [`BufferCache::new`] takes: the buffers, a header each, a map entry per block.
    pub fn footprint(buffers: usize, block_size: usize, data_blocks: u64, align: usize) -> u64 {
        crate::sys::AlignedBuf::footprint(buffers * block_size, align.max(4096))
            + (buffers * std::mem::size_of::<BufferHeader>()) as u64
            + data_blocks * std::mem::size_of::<AtomicU32>() as u64
    }

    pub fn new(
        buffers: usize,
        block_size: usize,
        data_blocks: u64,
        align: usize,
    ) -> std::io::Result<BufferCache> {
        Ok(BufferCache {
            block_size,
            memory: AlignedBuf::new(buffers * block_size, align.max(4096))?,
            headers: (0..buffers)
                .map(|_| BufferHeader {
                    block: AtomicU64::new(NO_BLOCK),
                    state: AtomicU32::new(0),
                })
                .collect(),
            map: (0..data_blocks).map(|_| AtomicU32::new(0)).collect(),
            hand: AtomicUsize::new(0),
        })
    }

    pub fn buffers(&self) -> usize {
        self.headers.len()
    }

    /// The memory of buffer `b`.
    pub fn buffer_ptr(&self, b: usize) -> *mut u8 {
        // SAFETY: b < buffers, so the offset is inside the region.
        unsafe { self.memory.as_mut_ptr().add(b * self.block_size) }
    }

    /// The block buffer `b` holds.
    pub fn block_of(&self, b: usize) -> u64 {
        self.headers[b].block.load(Acquire)
    }

    /// Finds `block` in the cache, pinning its buffer, or claims a buffer to read it into.
    pub fn get(&self, block: u64) -> Lookup {
        let idx = self.map[block as usize].load(Acquire);
        if idx != 0 {
            let b = idx as usize - 1;
            let h = &self.headers[b];
            let mut s = h.state.load(Acquire);
            loop {
                if s & IO != 0 {
                    return Lookup::Busy;
                }
                match h
                    .state
                    .compare_exchange_weak(s, (s + 1) | REF, AcqRel, Acquire)
                {
                    Ok(_) => break,
                    Err(now) => s = now,
                }
            }
            // Pinned; make sure the buffer was not reused for another block meanwhile.
            if h.block.load(Acquire) == block {
                return Lookup::Hit(b);
            }
            h.state.fetch_sub(1, AcqRel);
        }
        let Some(b) = self.claim_victim() else {
            return Lookup::NoFreeBuffer;
        };
        let h = &self.headers[b];
        let old = h.block.swap(block, AcqRel);
        if old != NO_BLOCK {
            let _ = self.map[old as usize].compare_exchange(b as u32 + 1, 0, AcqRel, Acquire);
        }
        if self.map[block as usize]
            .compare_exchange(0, b as u32 + 1, AcqRel, Acquire)
            .is_err()
        {
            // Another session cached it meanwhile: give the buffer back empty.
            h.block.store(NO_BLOCK, Release);
            h.state.store(0, Release);
            return Lookup::Busy;
        }
        Lookup::Miss(b)
    }

    /// The read into buffer `b` (from a `Miss`) finished; it stays pinned.
    pub fn read_done(&self, b: usize) {
        self.headers[b].state.fetch_and(!IO, AcqRel);
    }

    /// The read into buffer `b` failed: forget the block.
    pub fn read_failed(&self, b: usize) {
        let h = &self.headers[b];
        let block = h.block.swap(NO_BLOCK, AcqRel);
        if block != NO_BLOCK {
            let _ = self.map[block as usize].compare_exchange(b as u32 + 1, 0, AcqRel, Acquire);
        }
        h.state.store(0, Release);
    }

    /// Unpins buffer `b`; `dirty` marks it changed. Returns true when it became dirty now
    /// (the caller queues it for DBWR).
    pub fn release(&self, b: usize, dirty: bool) -> bool {
        let h = &self.headers[b];
        if dirty {
            let before = h.state.fetch_or(DIRTY, AcqRel);
            h.state.fetch_sub(1, AcqRel);
            before & DIRTY == 0
        } else {
            h.state.fetch_sub(1, AcqRel);
            false
        }
    }

    /// DBWR: pins dirty buffer `b` for writing and marks it clean (a change made during the
    /// write dirties it again). False when it is no longer dirty.
    pub fn begin_write(&self, b: usize) -> bool {
        let h = &self.headers[b];
        let mut s = h.state.load(Acquire);
        loop {
            if s & DIRTY == 0 {
                return false;
            }
            match h
                .state
                .compare_exchange_weak(s, (s + 1) & !DIRTY, AcqRel, Acquire)
            {
                Ok(_) => return true,
                Err(now) => s = now,
            }
        }
    }

    /// DBWR finished writing buffer `b`.
    pub fn end_write(&self, b: usize) {
        self.headers[b].state.fetch_sub(1, AcqRel);
    }

    /// CLOCK: move the hand over the buffers, giving referenced ones a second chance and
    /// skipping dirty, pinned or busy ones, until a clean unreferenced buffer is claimed.
    fn claim_victim(&self) -> Option<usize> {
        let n = self.headers.len();
        for _ in 0..2 * n + 1 {
            let b = self.hand.fetch_add(1, Relaxed) % n;
            let h = &self.headers[b];
            let s = h.state.load(Acquire);
            if s & (PIN_MASK | DIRTY | IO) != 0 {
                continue;
            }
            if s & REF != 0 {
                let _ = h.state.compare_exchange(s, s & !REF, AcqRel, Acquire);
                continue;
            }
            if h.state.compare_exchange(s, 1 | IO, AcqRel, Acquire).is_ok() {
                return Some(b);
            }
        }
        None
    }

    /// Clears every reference bit (after loading the cache, so the run's own accesses
    /// decide what stays).
    pub fn clear_references(&self) {
        for h in self.headers.iter() {
            h.state.fetch_and(!REF, AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirty_queue_queues_each_item_once() {
        let q = DirtyQueue::new(100);
        assert!(q.push(5));
        assert!(q.push(5));
        assert!(q.push(7));
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some(5));
        assert!(q.push(5), "queued again once taken");
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn cache_hits_after_a_miss_and_evicts_clean_buffers() {
        let c = BufferCache::new(4, 512, 100, 512).unwrap();
        let Lookup::Miss(b) = c.get(10) else {
            panic!("miss expected")
        };
        c.read_done(b);
        c.release(b, false);
        assert_eq!(c.get(10), Lookup::Hit(b));
        c.release(b, false);
        // Fill with other blocks: 10 gets evicted eventually (CLOCK second chance).
        for block in 20..30 {
            match c.get(block) {
                Lookup::Miss(x) => {
                    c.read_done(x);
                    c.release(x, false);
                }
                other => panic!("{other:?}"),
            }
        }
        assert!(matches!(c.get(10), Lookup::Miss(_)));
    }

    #[test]
    fn dirty_buffers_are_not_reused_until_written() {
        let c = BufferCache::new(2, 512, 10, 512).unwrap();
        let mut bufs = vec![];
        for block in 0..2 {
            let Lookup::Miss(b) = c.get(block) else {
                panic!()
            };
            c.read_done(b);
            assert!(c.release(b, true), "became dirty");
            bufs.push(b);
        }
        assert_eq!(c.get(5), Lookup::NoFreeBuffer);
        assert!(c.begin_write(bufs[0]));
        c.end_write(bufs[0]);
        assert!(matches!(c.get(5), Lookup::Miss(_)), "clean now");
    }
}
