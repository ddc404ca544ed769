//! A session: one database foreground (or DBWR) thread's state while it issues I/O — its
//! buffers, its engine, its random numbers and its recorder.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use crate::engine::{Completion, Engine, IoRequest, Op};
use crate::measure::Recorder;
use crate::measure::ash::AshSlot;
use crate::sys::{AlignedBuf, now_ns};

use super::{Event, Instance};
use crate::verify::{BadBlock, SessionVerify};

/// The geometry every session of a run shares.
#[derive(Debug, Clone)]
pub struct SessionShape {
    pub sessions: usize,
    pub files: usize,
    pub file_size: u64,
    pub block_size: u64,
    pub batch: usize,
    pub depth: usize,
    /// Blocks per multiblock request.
    pub mbrc: usize,
    /// A job class with weighted sizes: each request's size is drawn from these (at most
    /// the pattern's usual size, in whole blocks). `None`: every request has that size.
    pub sizes: Option<super::sizes::RequestSizes>,
}

impl SessionShape {
    /// Blocks in the data set; block numbers run from 0 through the files in turn.
    #[inline]
    pub fn data_blocks(&self) -> u64 {
        self.file_size / self.block_size * self.files as u64
    }

    /// Data set block number → (file index, byte offset).
    #[inline]
    pub fn locate(&self, block: u64) -> (usize, u64) {
        let per_file = self.file_size / self.block_size;
        (
            (block / per_file) as usize,
            (block % per_file) * self.block_size,
        )
    }
}

/// Why a session stopped early: the first failed request.
#[derive(Debug, Clone)]
pub struct IoFailure {
    pub event: Event,
    pub op: Op,
    pub file: usize,
    pub offset: u64,
    pub expected: u64,
    /// Bytes transferred, or a negative errno; `None` when the engine call itself failed.
    pub result: Option<i64>,
    pub detail: Option<String>,
}

/// How long an engine wait may block before the session re-checks the stop flag.
pub const REAP_TIMEOUT_MS: u32 = 100;

/// The open-loop schedule of one session (a class with a `rate`): arrivals at fixed
/// intervals or as a Poisson process, independent of how long requests take.
#[derive(Debug, Clone)]
pub struct Pacer {
    /// Scheduled time of the next arrival (`sys::now_ns` time).
    pub next_ns: u64,
    /// Mean time between this session's arrivals.
    pub interval_ns: f64,
    pub poisson: bool,
}

impl Pacer {
    /// The schedule of session `index` of `sessions` sharing `rate` arrivals per second,
    /// starting at `start_ns`; sessions are offset so that fixed arrivals interleave.
    pub fn new(rate: f64, sessions: usize, index: usize, poisson: bool, start_ns: u64) -> Pacer {
        let interval_ns = 1e9 * sessions as f64 / rate;
        let offset = interval_ns * index as f64 / sessions as f64;
        Pacer {
            next_ns: start_ns.saturating_add(offset as u64),
            interval_ns,
            poisson,
        }
    }

    /// Waits for the next arrival and returns its time; returns at once when `should_stop`
    /// says so or the arrival is already past. The wait for an arrival is idle time, not
    /// database time, for ASH.
    pub fn wait(
        &mut self,
        rng: &mut fastrand::Rng,
        ash: &AshSlot,
        should_stop: impl Fn(u64) -> bool,
    ) -> u64 {
        let at = self.advance(rng);
        let mut idle = false;
        loop {
            let now = now_ns();
            if now >= at || should_stop(now) {
                if idle {
                    ash.on_cpu();
                }
                return at;
            }
            if !idle {
                ash.idle();
                idle = true;
            }
            let left = at - now;
            if left > 200_000 {
                std::thread::sleep(std::time::Duration::from_nanos(
                    (left - 100_000).min(20_000_000),
                ));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// Takes the next arrival time and schedules the one after.
    fn advance(&mut self, rng: &mut fastrand::Rng) -> u64 {
        let at = self.next_ns;
        let gap = if self.poisson {
            // Exponential inter-arrival times: -ln(U) × mean, U in (0, 1].
            -(1.0 - rng.f64()).ln() * self.interval_ns
        } else {
            self.interval_ns
        };
        // Saturating: a schedule cannot wrap around into "overdue" (and run flat out).
        self.next_ns = at.saturating_add(gap as u64);
        at
    }
}

/// Makes `region` unique before it is written: `tag` and the chunk number in the first 16
/// bytes of every 4 KiB.
#[inline]
pub fn stamp_unique(region: &mut [u8], tag: u64) {
    for (i, chunk) in region.chunks_mut(4096).enumerate() {
        if chunk.len() >= 16 {
            chunk[..8].copy_from_slice(&tag.to_le_bytes());
            chunk[8..16].copy_from_slice(&(i as u64).to_le_bytes());
        }
    }
}

pub struct Session<'a> {
    pub id: usize,
    /// Index of the session within its class (cursors and regions are per class).
    pub local_id: usize,
    pub event: Event,
    /// The event slot the session's pattern records into.
    pub slot: usize,
    /// Open-loop schedule, when the session's class has a rate.
    pub pacer: Option<Pacer>,
    /// Closed-loop think time before each request (job classes).
    pub think: Option<crate::units::DurationRange>,
    pub shape: &'a SessionShape,
    /// `shape.file_size / shape.block_size`, kept to spare a division per request.
    pub blocks_per_file: u64,
    pub rec: Recorder,
    /// Where the session publishes its state for ASH: ON CPU, waiting, or idle (thinking).
    pub ash: &'a AshSlot,
    /// Memory shared with the other sessions and the background threads.
    pub inst: &'a Instance,
    pub stop: &'a AtomicBool,
    pub rng: fastrand::Rng,
    /// How the session's requests are issued, synchronous calls and batches alike. Declared
    /// before `buffers`: the engine (which may have requests in flight into the buffers, or
    /// have them registered) is dropped first.
    pub engine: Box<dyn Engine>,
    pub buffers: AlignedBuf,
    /// Completions scratch space, sized to the engine capacity.
    pub completions: Vec<Completion>,
    /// Sequence stamped into written blocks so no two writes carry the same bytes.
    pub write_seq: u64,
    /// Requests were still outstanding when the session gave up waiting: its engine and
    /// buffers must be leaked, not freed, since the kernel may still write into them.
    pub abandoned: bool,
    /// `--continue-on-error`: a failed request is counted and the session goes on.
    pub continue_on_error: bool,
    /// The first failed request of a session that went on (`--continue-on-error`).
    pub first_error: Option<IoFailure>,
    /// `--verify` (sessions and DBWRs that use the data files): seal what is written, check
    /// what is read. `None` costs one branch per request.
    pub verify: Option<SessionVerify<'a>>,
}

impl Session<'_> {
    /// Open loop: waits for the next scheduled arrival and returns its time (`None` in a
    /// closed loop, where the next request goes out as soon as the last one is done). A
    /// session that is behind its schedule does not wait — and the request's latency, which
    /// runs from the scheduled time, shows it.
    #[inline]
    pub fn pace(&mut self) -> Option<u64> {
        let Some(pacer) = self.pacer.as_mut() else {
            if let Some(t) = self.think {
                super::think(self, t);
            }
            return None;
        };
        let (rec, stop) = (&self.rec, self.stop);
        Some(pacer.wait(&mut self.rng, self.ash, |now| {
            rec.window_over(now) || stop.load(Relaxed)
        }))
    }

    /// True when the session should stop issuing new requests.
    #[inline]
    pub fn should_stop(&self, now_ns: u64) -> bool {
        self.rec.window_over(now_ns) || self.stop.load(Relaxed)
    }

    /// A uniformly random block of the data set: (file index, byte offset). The same block
    /// as `shape.locate` of a random block number, with at most one division.
    #[inline(always)]
    pub fn random_block(&mut self) -> (usize, u64) {
        let per_file = self.blocks_per_file;
        let b = self.rng.u64(..per_file * self.shape.files as u64);
        let (file, block) = if b < per_file {
            (0, b)
        } else {
            (b / per_file, b % per_file)
        };
        (file as usize, block * self.shape.block_size)
    }

    /// The size of the next request: `fixed`, or drawn from a class's weighted sizes.
    #[inline(always)]
    pub fn request_len(&mut self, fixed: u64) -> u64 {
        match self.shape.sizes {
            None => fixed,
            Some(_) => self.drawn_len(),
        }
    }

    /// A size drawn from the class's weighted sizes.
    #[inline(never)]
    fn drawn_len(&mut self) -> u64 {
        let shape = self.shape;
        shape.sizes.as_ref().map_or(0, |s| s.pick(&mut self.rng))
    }

    /// A uniformly random place for a request of `len` bytes (whole blocks) that stays
    /// inside one data file: (file index, byte offset).
    #[inline(always)]
    pub fn random_extent(&mut self, len: u64) -> (usize, u64) {
        if len == self.shape.block_size {
            return self.random_block();
        }
        self.random_multiblock(len)
    }

    /// [`random_extent`](Self::random_extent) of more than one block (weighted sizes).
    #[inline(never)]
    fn random_multiblock(&mut self, len: u64) -> (usize, u64) {
        let bs = self.shape.block_size;
        let file = self.rng.usize(..self.shape.files);
        let block = self.rng.u64(..=self.blocks_per_file - len.div_ceil(bs));
        (file, block * bs)
    }

    /// Pointer to byte `offset` of the session's buffer region.
    #[inline]
    pub fn buf_at(&self, offset: usize) -> *mut u8 {
        debug_assert!(offset < self.buffers.len());
        // SAFETY: offset is within the region (checked in debug builds).
        unsafe { self.buffers.as_mut_ptr().add(offset) }
    }

    /// Makes the `len` bytes at `offset` unique before they are written: 16 bytes per 4 KiB
    /// (session, sequence), so arrays cannot deduplicate repeated writes.
    #[inline]
    pub fn stamp(&mut self, offset: usize, len: usize) {
        self.write_seq += 1;
        let tag = ((self.id as u64) << 48) ^ self.write_seq;
        stamp_unique(&mut self.buffers.as_mut_slice()[offset..offset + len], tag);
    }

    /// Before a write of the `len` bytes at `offset` of the session's buffers to data file
    /// `file` at `file_offset`: stamps them unique and, with `--verify`, claims and seals
    /// each block. False (`--verify` only) when one of the blocks is being written by
    /// another request: write another.
    #[inline]
    pub fn prepare_write(
        &mut self,
        offset: usize,
        len: usize,
        file: usize,
        file_offset: u64,
    ) -> bool {
        self.stamp(offset, len);
        match self.verify.as_mut() {
            None => true,
            Some(v) => v.seal(
                &mut self.buffers.as_mut_slice()[offset..offset + len],
                file,
                file_offset,
            ),
        }
    }

    /// One synchronous call of event `slot` (db file sequential read, scattered read, an
    /// OLTP read): the session waits on `slot` for ASH while it lasts. Returns its
    /// completion, timed by the engine.
    #[inline]
    pub fn call(&mut self, slot: usize, r: &IoRequest) -> Completion {
        self.ash.wait(slot);
        let c = self.engine.execute(r);
        self.ash.on_cpu();
        c
    }

    /// Settles completion `c` of request `r` of event `slot`: a full transfer is checked
    /// (`--verify`) and recorded — from `sched` in an open loop — a short or failed one, or a
    /// bad block, is counted as an error of the event. `before`: a single-block read's
    /// sequence entry when it was issued, if writes may have raced it. Err: the session
    /// must stop (the first failure; under `--continue-on-error` it goes on).
    ///
    /// # Safety
    /// For a read, the request's buffers must hold what the completed request filled.
    #[inline(always)]
    pub unsafe fn complete(
        &mut self,
        slot: usize,
        c: &Completion,
        r: &IoRequest,
        before: Option<u32>,
        sched: Option<u64>,
    ) -> Result<(), IoFailure> {
        let bytes = r.bytes();
        if c.result != bytes as i64 {
            return self.failed(slot, c, r);
        }
        // SAFETY: passed on from the caller.
        if self.verify.is_some() && !unsafe { self.verify_request(slot, r, before) }? {
            return Ok(());
        }
        self.rec
            .request_from(slot, sched, c.start_ns, c.done_ns, bytes);
        Ok(())
    }

    /// A request that failed or transferred less than asked: counted, and the failure kept.
    #[cold]
    #[inline(never)]
    fn failed(&mut self, slot: usize, c: &Completion, r: &IoRequest) -> Result<(), IoFailure> {
        self.rec.error(slot);
        let (file, bytes) = (r.file as usize, r.bytes());
        if r.op == Op::Write {
            self.verify_write_failed(file, r.offset, bytes);
        }
        let f = self.failure(r.op, file, r.offset, bytes, Some(c.result), None);
        self.on_error(f)
    }

    /// `--verify`, for a request that transferred all its bytes: a write's blocks are
    /// recorded as written; a read's are checked. Ok(true): count the request; Ok(false): a
    /// bad block, counted as an error of event `slot`, go on (`--continue-on-error`); Err:
    /// stop.
    ///
    /// # Safety
    /// For a read, the request's buffers must hold what the read filled.
    #[inline(never)]
    unsafe fn verify_request(
        &mut self,
        slot: usize,
        r: &IoRequest,
        before: Option<u32>,
    ) -> Result<bool, IoFailure> {
        let Some(v) = self.verify.as_mut() else {
            return Ok(true);
        };
        let (file, bytes) = (r.file as usize, r.bytes());
        match r.op {
            Op::Write => {
                v.written(file, r.offset, bytes, true);
                return Ok(true);
            }
            Op::Datasync | Op::Fsync => return Ok(true),
            Op::Read => {}
        }
        let mut first = None;
        let mut check = |ptr: *const u8, len: usize, at: u64| {
            // SAFETY: the read filled this buffer, memory the caller owns.
            let data = unsafe { std::slice::from_raw_parts(ptr, len) };
            if let Some(bad) = v.check(data, file, at, before) {
                first = first.or(Some(bad));
            }
        };
        if r.iov_count == 0 {
            check(r.buf, bytes as usize, r.offset);
        } else {
            // SAFETY: a vectored request points at `iov_count` iovecs the caller owns.
            let iov = unsafe { std::slice::from_raw_parts(r.iov, r.iov_count as usize) };
            let mut at = r.offset;
            for io in iov {
                check(io.iov_base as *const u8, io.iov_len, at);
                at += io.iov_len as u64;
            }
        }
        match first {
            None => Ok(true),
            Some(bad) => self.bad_block(slot, file, r.offset, bytes, bad),
        }
    }

    /// `--verify`: a write failed or may never have completed; what its blocks hold is unknown.
    #[cold]
    pub fn verify_write_failed(&mut self, file: usize, offset: u64, len: u64) {
        if let Some(v) = self.verify.as_mut() {
            v.written(file, offset, len, false);
        }
    }

    /// A bad block is a failed request of its event, with one line naming file and block.
    #[cold]
    fn bad_block(
        &mut self,
        slot: usize,
        file: usize,
        offset: u64,
        len: u64,
        bad: BadBlock,
    ) -> Result<bool, IoFailure> {
        self.rec.error(slot);
        let detail = format!("verify: block {}: {}", bad.block, bad.problem);
        let f = self.failure(Op::Read, file, offset, len, Some(len as i64), Some(detail));
        self.on_error(f).map(|()| false)
    }

    /// A request failed (already counted with `rec.error`): `Err` to stop the session, or,
    /// under `--continue-on-error`, `Ok` to go on (the first failure is kept for the result).
    #[inline]
    pub fn on_error(&mut self, f: IoFailure) -> Result<(), IoFailure> {
        if !self.continue_on_error {
            return Err(f);
        }
        if self.first_error.is_none() {
            self.first_error = Some(f);
        }
        Ok(())
    }

    /// The session's engine.
    #[inline]
    pub fn engine(&mut self) -> &mut dyn Engine {
        &mut *self.engine
    }

    pub fn failure(
        &self,
        op: Op,
        file: usize,
        offset: u64,
        expected: u64,
        result: Option<i64>,
        detail: Option<String>,
    ) -> IoFailure {
        IoFailure {
            event: self.event,
            op,
            file,
            offset,
            expected,
            result,
            detail,
        }
    }

    /// Waits for `inflight` outstanding requests so their buffers can be released, recording
    /// those that still complete inside the window. Gives up after `limit_ms` (a device that
    /// never answers must not hang dbio); returns how many are still outstanding.
    /// `reqs[tag]` is the request with that tag.
    pub fn drain(
        &mut self,
        slot: usize,
        mut inflight: usize,
        limit_ms: u64,
        reqs: &[IoRequest],
    ) -> usize {
        let deadline = now_ns() + limit_ms * 1_000_000;
        let mut comps = std::mem::take(&mut self.completions);
        while inflight > 0 && now_ns() < deadline {
            let n = match self.engine().reap(1, &mut comps, REAP_TIMEOUT_MS) {
                Ok(n) => n,
                Err(_) => break,
            };
            for c in &comps[..n] {
                let r = &reqs[c.tag as usize];
                let ok = c.result == r.bytes() as i64;
                if ok {
                    self.rec.request(slot, c.start_ns, c.done_ns, r.bytes());
                }
                if r.op == Op::Write
                    && let Some(v) = self.verify.as_mut()
                {
                    v.written(r.file as usize, r.offset, r.bytes(), ok);
                }
            }
            inflight -= n;
        }
        self.completions = comps;
        if inflight > 0 {
            self.abandoned = true;
        }
        inflight
    }
}
