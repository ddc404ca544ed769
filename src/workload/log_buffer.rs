//! The log buffer: the instance's ring of redo that sessions copy their redo into and LGWR
//! writes out, with the commit handshake — a committing session publishes how far the log
//! must be written and parks; LGWR wakes every session whose target it has passed. No locks.
//! (LGWR itself and the commit of a session are in `redo.rs`.)

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::thread::Thread;
use std::time::Duration;

use crate::sys::{AlignedBuf, now_ns};

#[repr(align(64))]
struct Waiter {
    /// Redo offset this session's commit waits for; 0 when not waiting.
    target: AtomicU64,
    thread: OnceLock<Thread>,
}

/// The log buffer and the commit/LGWR handshake, shared by all sessions and LGWR.
pub struct RedoLog {
    /// Redo reserved so far: the byte offset in the redo stream the next session starts at.
    pub(super) generated: AtomicU64,
    /// LGWR has durably written the stream up to here.
    written: AtomicU64,
    ring: AlignedBuf,
    pub(super) ring_mask: u64,
    pub(super) block: u64,
    lgwr: OnceLock<Thread>,
    waiters: Box<[Waiter]>,
    /// LGWR stopped on an error: commits must not wait forever.
    failed: AtomicBool,
}

impl RedoLog {
    /// Bytes of the log buffer for `sessions` sessions generating at most `max_per_commit`
    /// bytes each before they commit: room for four commits of each (at least 16 MiB), in a
    /// power of two. None when that cannot be counted.
    pub fn ring_bytes(sessions: usize, block: u64, max_per_commit: u64) -> u64 {
        let need = (4 * sessions as u64)
            .saturating_mul(max_per_commit.saturating_add(block))
            .max(16 << 20);
        need.checked_next_power_of_two().unwrap_or(u64::MAX)
    }

    /// Bytes [`RedoLog::new`] takes: the log buffer (aligned) and a waiter per session.
    pub fn footprint(sessions: usize, block: u64, max_per_commit: u64, align: usize) -> u64 {
        RedoLog::ring_bytes(sessions, block, max_per_commit)
            .saturating_add(crate::sys::AlignedBuf::overhead(align.max(4096)))
            .saturating_add((sessions * std::mem::size_of::<Waiter>()) as u64)
    }

    /// A log buffer for `sessions` sessions generating at most `max_per_commit` bytes each
    /// before they commit, aligned to `align` for O_DIRECT writes.
    pub fn new(
        sessions: usize,
        block: u64,
        max_per_commit: u64,
        align: usize,
    ) -> std::io::Result<RedoLog> {
        let size = RedoLog::ring_bytes(sessions, block, max_per_commit);
        Ok(RedoLog {
            generated: AtomicU64::new(0),
            written: AtomicU64::new(0),
            ring: AlignedBuf::new(
                usize::try_from(size)
                    .map_err(|_| std::io::Error::from_raw_os_error(libc::ENOMEM))?,
                align.max(4096),
            )?,
            ring_mask: size - 1,
            block,
            lgwr: OnceLock::new(),
            waiters: (0..sessions)
                .map(|_| Waiter {
                    target: AtomicU64::new(0),
                    thread: OnceLock::new(),
                })
                .collect(),
            failed: AtomicBool::new(false),
        })
    }

    /// The log buffer's memory (LGWR registers it with its engine).
    pub fn ring_region(&self) -> (*mut u8, usize) {
        (self.ring.as_mut_ptr(), self.ring.len())
    }

    /// Called by each session thread before the run starts.
    pub fn register_session(&self, session: usize) {
        let _ = self.waiters[session].thread.set(std::thread::current());
    }

    /// Called by the LGWR thread before the run starts.
    pub fn register_lgwr(&self) {
        let _ = self.lgwr.set(std::thread::current());
    }

    /// Copies `redo` into the log buffer (the session's redo generation) and returns the
    /// redo offset its commit must wait for.
    pub fn generate(&self, redo: &[u8]) -> u64 {
        let n = redo.len() as u64;
        let start = self.generated.fetch_add(n, SeqCst);
        let end = start + n;
        // The buffer holds several commits per session; only a stalled LGWR could let it fill.
        while end.saturating_sub(self.written.load(SeqCst)) > self.ring_mask + 1
            && !self.failed.load(Relaxed)
        {
            std::thread::yield_now();
        }
        let at = (start & self.ring_mask) as usize;
        let first = redo.len().min(self.ring.len() - at);
        // SAFETY: [at, at+first) and [0, rest) lie inside the ring; this range of the redo
        // stream was reserved by this session alone (LGWR only reads it).
        unsafe {
            std::ptr::copy_nonoverlapping(redo.as_ptr(), self.ring.as_mut_ptr().add(at), first);
            std::ptr::copy_nonoverlapping(
                redo.as_ptr().add(first),
                self.ring.as_mut_ptr(),
                redo.len() - first,
            );
        }
        end
    }

    /// A commit: posts LGWR and waits until the log is written up to `end`. False when LGWR
    /// failed, or when the run is stopping and LGWR has not answered for 2 s (a redo log
    /// device that never completes must not hang dbio).
    pub fn wait_written(&self, session: usize, end: u64, stop: &AtomicBool) -> bool {
        if self.written.load(SeqCst) >= end {
            return true;
        }
        let mut stop_seen: Option<u64> = None;
        let w = &self.waiters[session];
        w.target.store(end, SeqCst);
        if let Some(t) = self.lgwr.get() {
            t.unpark();
        }
        let ok = loop {
            if self.written.load(SeqCst) >= end {
                break true;
            }
            if self.failed.load(SeqCst) {
                break false;
            }
            if stop.load(Relaxed) {
                let now = now_ns();
                if now - *stop_seen.get_or_insert(now) > 2_000_000_000 {
                    break false;
                }
            }
            std::thread::park_timeout(Duration::from_millis(100));
        };
        w.target.store(0, Relaxed);
        ok
    }

    /// How many sessions wait for redo beyond `written` (commits LGWR must serve), counted
    /// up to `most` (the count stops there).
    pub(super) fn commits_waiting(&self, written: u64, most: usize) -> usize {
        (self.waiters.iter())
            .filter(|w| w.target.load(SeqCst) > written)
            .take(most)
            .count()
    }

    pub(super) fn publish_written(&self, upto: u64) {
        self.written.store(upto, SeqCst);
        for w in self.waiters.iter() {
            let t = w.target.load(SeqCst);
            if t != 0
                && t <= upto
                && let Some(th) = w.thread.get()
            {
                th.unpark();
            }
        }
    }

    pub(super) fn fail(&self) {
        self.failed.store(true, SeqCst);
        for w in self.waiters.iter() {
            if let Some(th) = w.thread.get() {
                th.unpark();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generate_and_commit_round_trip() {
        let log = RedoLog::new(1, 512, 8192, 4096).unwrap();
        log.register_session(0);
        let end = log.generate(&[7u8; 1000]);
        assert_eq!(end, 1000);
        // Pretend LGWR wrote it: closed on a redo block boundary, so the next redo starts
        // in a new block.
        log.generated.store(1024, SeqCst);
        log.publish_written(1024);
        assert!(log.wait_written(0, end, &AtomicBool::new(false)));
        let end2 = log.generate(&[1u8; 10]);
        assert_eq!(end2, 1034);
    }
}
