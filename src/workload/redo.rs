//! Redo and commits: the log writer (LGWR) that writes the log buffer sessions copy redo
//! into (the buffer itself is in `log_buffer.rs`, the instance's memory), and "log file sync" — a commit waiting until LGWR has written past its redo.
//!
//! Group commit is not programmed; it emerges: while LGWR writes, more sessions commit, and
//! its next write carries all the redo that accumulated meanwhile. Each write ends on a redo
//! block boundary (the rest of the last block is "wasted", as in the database), goes to the
//! current redo log file after the previous one, switches to the next file when the current
//! one is full, and is split into up to 4 pieces in flight together when it exceeds 1 MiB.
//!
//! Waiting is post/wait, as in the database: a committing session publishes how far the log
//! must be written and parks; LGWR wakes every session whose target it has passed. No locks.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::time::Duration;

use crate::engine::{Completion, Engine, IoRequest, Op};
use crate::measure::ash::AshSlot;
use crate::measure::{EventSlot, Recorder};
use crate::sys::now_ns;
use crate::workload::spec::{GroupCommit, RedoDurability};

pub use super::log_buffer::RedoLog;
use super::session::{IoFailure, Pacer, REAP_TIMEOUT_MS, Session, stamp_unique};
use super::sizes::RequestSizes;
use super::{ClassPlan, Event};
use crate::units::DurationRange;

/// Writes larger than this are split into pieces submitted together.
pub const PIECE_THRESHOLD: u64 = 1 << 20;
/// At most this many pieces per write (plus one when the log buffer wraps).
pub const MAX_PIECES: usize = 4;

/// The bytes of each piece an LGWR write of `size` bytes goes out in (the last, or one cut
/// where the log buffer wraps, may be shorter): the whole write up to [`PIECE_THRESHOLD`],
/// else up to [`MAX_PIECES`] equal pieces of whole redo blocks.
pub fn piece_bytes(size: u64, block: u64) -> u64 {
    let pieces = if size > PIECE_THRESHOLD {
        size.div_ceil(PIECE_THRESHOLD).min(MAX_PIECES as u64)
    } else {
        1
    };
    (size / pieces).div_ceil(block.max(1)) * block.max(1)
}

/// The largest request an LGWR write of `size` bytes goes out in.
pub fn largest_piece(size: u64, block: u64) -> u64 {
    piece_bytes(size, block).min(size)
}

/// The redo test's session loop: generate `--redo-per-commit` bytes of redo, optionally
/// think, commit ("log file sync"). Each loop is one transaction.
///
/// A "log file sync" class of a job does the same, with its own redo sizes (weighted ones
/// drawn per commit) and, at a `rate`, commits on a schedule: each commit's wait is then
/// timed from its scheduled time.
pub fn commit_loop(class: &ClassPlan, s: &mut Session) -> Result<(), IoFailure> {
    let lfs = s.slot;
    let sizes = class.shape.sizes.unwrap_or(class.spec.sizes);
    let mut now = now_ns();
    while !s.should_stop(now) {
        let sched = s.pace();
        let size = sizes.pick(&mut s.rng) as usize;
        let end = generate_at(s, 0, size);
        // Closed loop only: at a rate the schedule sets the pace (config refuses both).
        if let (Some(think), None) = (class.spec.think, &s.pacer) {
            super::think(s, think);
        }
        now = commit(s, lfs, end, size as u64, sched)?;
        s.rec.transaction(now);
    }
    Ok(())
}

/// Copies `size` bytes of the session's redo (at byte `at` of its buffer) into the log
/// buffer; returns the redo offset its commit waits for.
pub fn generate_at(s: &mut Session, at: usize, size: usize) -> u64 {
    let log = s.inst.redo.as_ref().expect("test has a log buffer");
    s.stamp(at, size);
    let end = log.generate(&s.buffers.as_slice()[at..at + size]);
    s.rec.redo(now_ns(), size as u64);
    end
}

/// Commits: waits ("log file sync", recorded in `slot`) until LGWR has written the redo up to
/// `end`; in an open loop the wait is timed from `sched`. Returns the time the commit
/// completed.
pub fn commit(
    s: &mut Session,
    slot: usize,
    end: u64,
    size: u64,
    sched: Option<u64>,
) -> Result<u64, IoFailure> {
    let log = s.inst.redo.as_ref().expect("test has a log buffer");
    s.ash.wait(slot);
    let t0 = now_ns();
    let ok = log.wait_written(s.id, end, s.stop);
    let t1 = now_ns();
    s.ash.on_cpu();
    if !ok {
        s.rec.error(slot);
        return Err(IoFailure {
            // A committing session's own event, or (an OLTP transaction's) log file sync.
            event: if s.event.is_redo() {
                s.event
            } else {
                Event::LogFileSync
            },
            op: Op::Write,
            file: 0,
            offset: end,
            expected: size,
            result: None,
            detail: Some("the log writer stopped (see its error) or did not answer; the commit could not complete".into()),
        });
    }
    s.rec.request_from(slot, sched, t0, t1, 0);
    s.rec.commit(t1);
    Ok(t1)
}

/// What LGWR did over the whole run (not only the measured window): the accounting that
/// shows where every redo byte went.
#[derive(Debug, Clone, Default)]
pub struct LgwrStats {
    pub writes: u64,
    pub pieces: u64,
    /// Bytes written to the redo log files.
    pub bytes_written: u64,
    /// Bytes of the last redo block of each write left unused (written as padding).
    pub wastage: u64,
    pub log_switches: u64,
    pub largest_write: u64,
}

impl LgwrStats {
    /// Redo generated by sessions = written - wastage.
    pub fn redo_generated(&self) -> u64 {
        self.bytes_written - self.wastage
    }
}

/// The log writer thread's state.
pub struct Lgwr<'a> {
    pub log: &'a RedoLog,
    /// The redo log files, written in turn.
    pub files: &'a [RawFd],
    pub file_size: u64,
    pub durability: RedoDurability,
    /// How the log writer's requests are issued.
    pub engine: Box<dyn Engine>,
    /// The pieces of a write go out one after another as synchronous calls (`--sync`, a
    /// synchronous io mode, `[redo] submission = "sync"`), instead of submitted together.
    pub one_by_one: bool,
    pub rec: Recorder,
    pub ash: &'a AshSlot,
    pub slot: EventSlot,
    /// The event of its writes (its failures are named after it).
    pub event: Event,
    /// Where the fdatasync after each write is recorded as a request of its own (InnoDB's
    /// "innodb_log_file sync"); `None`: it is part of the write's wait only.
    pub sync_slot: Option<EventSlot>,
    pub sessions_running: &'a AtomicUsize,
    pub stats: LgwrStats,
    /// Group commit as configured (`--group-commit`); `None`: write as soon as a commit waits.
    pub group: Option<GroupCommit>,
    /// The run is stopping: a redo write that does not complete within 2 s after this is
    /// abandoned (a failed log device must not hang dbio).
    pub stop: Option<&'a AtomicBool>,
    /// A write was abandoned: its engine must be leaked, not dropped.
    pub abandoned: bool,
    file: usize,
    file_off: u64,
    completions: Vec<Completion>,
}

impl<'a> Lgwr<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        log: &'a RedoLog,
        files: &'a [RawFd],
        file_size: u64,
        durability: RedoDurability,
        (engine, one_by_one): (Box<dyn Engine>, bool),
        rec: Recorder,
        ash: &'a AshSlot,
        slot: EventSlot,
        sessions_running: &'a AtomicUsize,
    ) -> Lgwr<'a> {
        Lgwr {
            log,
            files,
            file_size,
            durability,
            engine,
            one_by_one,
            rec,
            ash,
            slot,
            event: Event::LogFileParallelWrite,
            sync_slot: None,
            sessions_running,
            stats: LgwrStats::default(),
            group: None,
            stop: None,
            abandoned: false,
            file: 0,
            file_off: 0,
            completions: vec![Completion::default(); MAX_PIECES + 1],
        }
    }

    /// Writes redo until every session has stopped and all their redo is written.
    ///
    /// LGWR writes when a commit waits for it, when 1 MiB of redo has accumulated, or when
    /// nothing was written for 3 s — as the database's log writer does — and then writes
    /// everything accumulated so far. With a group commit ([`GroupCommit`]) it writes for
    /// commits only once the group has formed — that many commits wait — or the first of
    /// them has waited the group's longest wait.
    pub fn run(&mut self) -> Result<(), IoFailure> {
        let log = self.log;
        let mut written = 0u64;
        let mut last_write = now_ns();
        let mut group = Group::new(self.group);
        loop {
            let mut pending = log.generated.load(SeqCst);
            // When LGWR first saw a commit waiting for this write.
            let mut first_commit: Option<u64> = None;
            loop {
                let mut nap = Duration::from_millis(10);
                if pending > written {
                    let now = now_ns();
                    let waiting = log.commits_waiting(written, 1) == 1;
                    if waiting {
                        first_commit.get_or_insert(now);
                    }
                    let running = self.sessions_running.load(SeqCst);
                    let stopping = self.stop.is_some_and(|s| s.load(Relaxed));
                    let group_ready = waiting
                        && match group.wait_ns {
                            None => true,
                            // The run is ending: no group forms while sessions leave.
                            Some(_) if stopping => true,
                            Some(wait) => {
                                let waited = now - first_commit.unwrap_or(now);
                                // No more commits wait than sessions still run.
                                let want = group.want.min(running.max(1));
                                if waited < wait && log.commits_waiting(written, want) < want {
                                    nap = Duration::from_nanos(wait - waited).min(nap);
                                    false
                                } else {
                                    true
                                }
                            }
                        };
                    if group_ready
                        || pending - written >= PIECE_THRESHOLD
                        || now - last_write > 3_000_000_000
                        || running == 0
                    {
                        break;
                    }
                } else if self.sessions_running.load(SeqCst) == 0 {
                    self.ash.idle();
                    return Ok(());
                }
                self.ash.idle();
                std::thread::park_timeout(nap);
                pending = log.generated.load(SeqCst);
            }
            last_write = now_ns();
            self.ash.on_cpu();
            // The commits this write serves (those that wait now).
            let served = match group.wait_ns {
                Some(_) => log.commits_waiting(written, usize::MAX),
                None => 0,
            };
            written = self.write_through(written, pending, None)?;
            group.next(served);
        }
    }

    /// A "log file parallel write" class: the log writer without sessions. At each arrival
    /// (on the pacer's schedule, or back to back after `think`) it generates redo of a size
    /// drawn from `sizes` (from `redo`, stamped unique) and writes it at once: one LGWR write
    /// per arrival, rounded up to the redo block, timed from the arrival in an open loop.
    pub fn paced_writes(
        &mut self,
        redo: &mut [u8],
        sizes: &RequestSizes,
        mut pacer: Option<Pacer>,
        think: Option<DurationRange>,
        rng: &mut fastrand::Rng,
    ) -> Result<(), IoFailure> {
        let stop = self
            .stop
            .expect("a paced log writer has the run's stop flag");
        let mut written = 0u64;
        let mut seq = 0u64;
        let ash = self.ash;
        loop {
            let now = now_ns();
            if self.rec.window_over(now) || stop.load(Relaxed) {
                return Ok(());
            }
            let sched = match pacer.as_mut() {
                Some(p) => {
                    let rec = &self.rec;
                    Some(p.wait(rng, ash, |now| rec.window_over(now) || stop.load(Relaxed)))
                }
                None => {
                    if let Some(t) = think {
                        super::idle_for(t.pick_ns(rng), ash, stop);
                    }
                    None
                }
            };
            let size = sizes.pick(rng) as usize;
            seq += 1;
            stamp_unique(&mut redo[..size], seq);
            let end = self.log.generate(&redo[..size]);
            self.rec.redo(now_ns(), size as u64);
            written = self.write_through(written, end, sched)?;
        }
    }

    /// Writes the redo stream from `written` up to `pending`, closed on a redo block boundary
    /// (later redo starts in a new block), to the current log file — switching to the next
    /// when it cannot take the write. Returns how far the log is written now.
    fn write_through(
        &mut self,
        written: u64,
        pending: u64,
        sched: Option<u64>,
    ) -> Result<u64, IoFailure> {
        let log = self.log;
        let mut g = pending;
        let end = loop {
            let rounded = g.div_ceil(log.block) * log.block;
            if rounded == g {
                break g;
            }
            match log.generated.compare_exchange(g, rounded, SeqCst, SeqCst) {
                Ok(_) => break rounded,
                Err(now) => g = now,
            }
        };
        self.stats.wastage += end - g;
        // Log switch when the current file cannot take the write.
        let mut size = end - written;
        if self.file_off + size > self.file_size && self.file_off > 0 {
            self.file = (self.file + 1) % self.files.len();
            self.file_off = 0;
            self.stats.log_switches += 1;
        }
        size = size.min(self.file_size - self.file_off);
        if let Err(f) = self.write(written, size, sched) {
            log.fail();
            return Err(f);
        }
        self.file_off += size;
        log.publish_written(written + size);
        Ok(written + size)
    }

    /// One LGWR write of `size` bytes of the redo stream starting at `from`, in pieces;
    /// timed from `sched` in an open loop.
    fn write(&mut self, from: u64, size: u64, sched: Option<u64>) -> Result<(), IoFailure> {
        let piece = piece_bytes(size, self.log.block);
        let (ring, ring_len) = self.log.ring_region();
        let mut reqs = [IoRequest::contiguous(Op::Write, 0, 0, ring, 0, 0); MAX_PIECES + 1];
        let mut n = 0;
        let mut done = 0u64;
        while done < size {
            let len = piece.min(size - done);
            // Split where the log buffer wraps.
            let at = ((from + done) & self.log.ring_mask) as usize;
            let len = len.min((ring_len - at) as u64);
            // SAFETY: at + len is within the ring.
            let buf = unsafe { ring.add(at) };
            let file_offset = self.file_off + done;
            reqs[n] = IoRequest::contiguous(
                Op::Write,
                self.file as u32,
                file_offset,
                buf,
                len as u32,
                n as u64,
            );
            n += 1;
            done += len;
        }
        let t0 = now_ns();
        self.ash.wait(self.slot);
        let mut failure = if self.one_by_one {
            self.write_one_by_one(&reqs[..n], sched)
        } else {
            self.write_together(&reqs[..n], sched)
        };
        if failure.is_none() && self.durability == RedoDurability::Fdatasync {
            let c = self
                .engine
                .execute(&IoRequest::datasync(self.file as u32, 0));
            if c.result != 0 {
                let e = std::io::Error::from_raw_os_error((-c.result) as i32);
                failure = Some((0, Some(c.result), Some(format!("fdatasync failed: {e}"))));
            } else if let Some(sync) = self.sync_slot {
                self.rec.request(sync, c.start_ns, c.done_ns, 0);
            }
        }
        let t1 = now_ns();
        self.ash.on_cpu();
        if let Some((offset, result, detail)) = failure {
            self.rec.error(self.slot);
            return Err(IoFailure {
                event: self.event,
                op: Op::Write,
                file: self.file,
                offset,
                expected: size,
                result,
                detail,
            });
        }
        self.rec
            .wait(self.slot, sched.map_or(t0, |at| at.min(t0)), t1);
        self.stats.writes += 1;
        self.stats.pieces += n as u64;
        self.stats.bytes_written += size;
        self.stats.largest_write = self.stats.largest_write.max(size);
        Ok(())
    }
}

/// The commits LGWR waits for before its next write, under a group commit, so that its
/// writes serve `commits` commits each on average (1.4: it waits for 1 or 2). What a write
/// served beyond what it waited for (commits that came while it waited or wrote) is
/// counted: the next writes wait for fewer.
struct Group {
    commits: f64,
    /// Commits asked of the writes so far less those they served, plus the next write's.
    owed: f64,
    want: usize,
    /// The longest the first waiting commit waits for the group; `None`: no group commit.
    wait_ns: Option<u64>,
}

impl Group {
    fn new(g: Option<GroupCommit>) -> Group {
        let commits = g.map_or(1.0, |g| g.commits);
        let mut group = Group {
            commits,
            owed: 0.0,
            want: 1,
            wait_ns: g.map(|g| g.wait.as_nanos().min(u64::MAX as u128) as u64),
        };
        group.next(0);
        group
    }

    /// The next write's group, after a write that served `served` commits. A surplus
    /// served is carried for at most one group (a long burst must not make the log writer
    /// stop grouping for long after).
    fn next(&mut self, served: usize) {
        self.owed = (self.owed - served as f64).max(-self.commits) + self.commits;
        // (A hair over, so that 0.6 + 1.4 is 2, not 1.9999.)
        self.want = (self.owed + 1e-9).floor().max(1.0) as usize;
    }
}

/// Why a write failed: (file offset, result, detail).
type WriteFailure = (u64, Option<i64>, Option<String>);

impl Lgwr<'_> {
    /// The pieces of one write, one synchronous call after another.
    fn write_one_by_one(
        &mut self,
        pieces: &[IoRequest],
        sched: Option<u64>,
    ) -> Option<WriteFailure> {
        for r in pieces {
            let c = self.engine.execute(r);
            if c.result != i64::from(r.len) {
                return Some((r.offset, Some(c.result), None));
            }
            self.rec
                .request_from(self.slot, sched, c.start_ns, c.done_ns, r.bytes());
        }
        None
    }

    /// The pieces of one write submitted together, each timed to its own completion. A run
    /// that stops while pieces are out waits 2 s for them, then abandons them.
    fn write_together(&mut self, pieces: &[IoRequest], sched: Option<u64>) -> Option<WriteFailure> {
        if let Err(e) = self.engine.submit(pieces) {
            return Some((0, None, Some(format!("submit failed: {e}"))));
        }
        let mut failure = None;
        let mut left = pieces.len();
        let mut stop_seen: Option<u64> = None;
        while left > 0 {
            if let Some(stop) = self.stop
                && stop.load(Relaxed)
            {
                let now = now_ns();
                if now - *stop_seen.get_or_insert(now) > 2_000_000_000 {
                    self.abandoned = true;
                    return Some((
                        0,
                        None,
                        Some(format!(
                            "{left} redo write piece(s) did not complete within 2 s of the stop; abandoned"
                        )),
                    ));
                }
            }
            let got = match self.engine.reap(1, &mut self.completions, REAP_TIMEOUT_MS) {
                Ok(g) => g,
                Err(e) => return Some((0, None, Some(format!("wait failed: {e}")))),
            };
            for c in &self.completions[..got] {
                let r = pieces[c.tag as usize];
                if c.result == i64::from(r.len) {
                    self.rec
                        .request_from(self.slot, sched, c.start_ns, c.done_ns, r.bytes());
                } else if failure.is_none() {
                    failure = Some((r.offset, Some(c.result), None));
                }
            }
            left -= got;
        }
        failure
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(commits: f64) -> Group {
        Group::new(Some(GroupCommit {
            commits,
            wait: Duration::from_millis(1),
        }))
    }

    #[test]
    fn a_group_of_1_4_waits_for_1_and_2_in_turn() {
        let mut g = group(1.4);
        let mut asked = 0;
        for _ in 0..10 {
            asked += g.want;
            let served = g.want;
            g.next(served);
        }
        assert_eq!(asked, 14, "10 writes of 1.4 commits");
    }

    #[test]
    fn commits_served_beyond_the_group_make_the_next_groups_smaller() {
        let mut g = group(2.0);
        assert_eq!(g.want, 2);
        // A write served 3 (one came while LGWR waited): the next waits for 1.
        g.next(3);
        assert_eq!(g.want, 1);
        g.next(1);
        assert_eq!(g.want, 2);
        // A long burst: never more than one group's surplus is carried.
        for _ in 0..100 {
            g.next(10);
        }
        assert_eq!(g.want, 1);
        g.next(1);
        assert_eq!(g.want, 1);
        g.next(1);
        assert_eq!(g.want, 2);
    }

    #[test]
    fn without_a_group_commit_a_write_waits_for_one() {
        let mut g = Group::new(None);
        assert_eq!((g.want, g.wait_ns), (1, None));
        g.next(5);
        assert_eq!(g.want, 1);
    }
}
