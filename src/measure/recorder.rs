//! What a session records per request and per wait, and nothing more.
//!
//! Each session owns one [`SessionCounters`] (one [`EventCounters`] per event of the test),
//! shared through an `Arc` with the sampler that reads it once a second. The session is the
//! only writer: every update is a relaxed load + store, so recording takes no lock, does no
//! read-modify-write and allocates nothing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::histogram::LiveHistogram;

/// Index of an event within the test's event list (see `workload::Workload::events`).
pub type EventSlot = usize;

#[inline]
fn bump(a: &AtomicU64, n: u64) {
    a.store(a.load(Relaxed) + n, Relaxed);
}

#[inline]
fn raise(a: &AtomicU64, v: u64) {
    if v > a.load(Relaxed) {
        a.store(v, Relaxed);
    }
}

/// Live counters of one event in one session.
pub struct EventCounters {
    pub requests: AtomicU64,
    pub bytes: AtomicU64,
    pub latency_sum_ns: AtomicU64,
    pub latency_max_ns: AtomicU64,
    pub latency: LiveHistogram,
    pub waits: AtomicU64,
    pub wait_sum_ns: AtomicU64,
    pub wait_max_ns: AtomicU64,
    pub wait_latency: LiveHistogram,
    /// Calls into the engine's submit, and the time spent inside them.
    pub submit_calls: AtomicU64,
    pub submit_ns: AtomicU64,
    pub errors: AtomicU64,
    /// Open-loop classes: service time (issue to completion; `latency` then runs from the
    /// scheduled time) and lateness (how long after its scheduled time a request was issued).
    pub service_sum_ns: AtomicU64,
    pub service_max_ns: AtomicU64,
    pub service: LiveHistogram,
    pub late_sum_ns: AtomicU64,
    pub late_max_ns: AtomicU64,
}

/// Database-level activity of one session (tests redo and oltp), as the database's own
/// statistics count it. Window counters count only the measured window; `*_all` the whole
/// run, for the redo accounting that must balance to the byte.
#[derive(Default)]
pub struct DbCounters {
    pub transactions: AtomicU64,
    pub commits: AtomicU64,
    /// Blocks looked at (every block a transaction touches, from the cache or not).
    pub logical_reads: AtomicU64,
    /// Blocks read from the data files.
    pub physical_reads: AtomicU64,
    pub redo_bytes: AtomicU64,
    pub redo_bytes_all: AtomicU64,
    pub commits_all: AtomicU64,
}

/// All counters of one session (or background thread).
pub struct SessionCounters {
    pub events: Box<[EventCounters]>,
    pub db: DbCounters,
}

/// Latency histograms per event: latency, wait latency, service time.
const HISTOGRAMS_PER_EVENT: usize = 3;

impl EventCounters {
    /// Counters at zero, recording into the given histograms.
    fn new(latency: LiveHistogram, wait_latency: LiveHistogram, service: LiveHistogram) -> Self {
        let zero = || AtomicU64::new(0);
        EventCounters {
            requests: zero(),
            bytes: zero(),
            latency_sum_ns: zero(),
            latency_max_ns: zero(),
            latency,
            waits: zero(),
            wait_sum_ns: zero(),
            wait_max_ns: zero(),
            wait_latency,
            submit_calls: zero(),
            submit_ns: zero(),
            errors: zero(),
            service_sum_ns: zero(),
            service_max_ns: zero(),
            service,
            late_sum_ns: zero(),
            late_max_ns: zero(),
        }
    }
}

impl SessionCounters {
    pub fn new(events: usize) -> Arc<SessionCounters> {
        SessionCounters::many(1, events).pop().expect("one thread")
    }

    /// The counters of `threads` threads, each with `events` events; their histograms share
    /// one memory map.
    pub fn many(threads: usize, events: usize) -> Vec<Arc<SessionCounters>> {
        let mut h = LiveHistogram::many(threads * events * HISTOGRAMS_PER_EVENT).into_iter();
        let mut next = || h.next().expect("histograms for every event");
        (0..threads)
            .map(|_| {
                Arc::new(SessionCounters {
                    events: (0..events)
                        .map(|_| EventCounters::new(next(), next(), next()))
                        .collect(),
                    db: DbCounters::default(),
                })
            })
            .collect()
    }

    /// Bytes [`SessionCounters::many`] takes at most for `threads` threads of `events`
    /// events (every histogram counter written).
    pub fn footprint(threads: usize, events: usize) -> u64 {
        // An Arc's two reference counts precede its value.
        let per_thread = 2 * std::mem::size_of::<usize>()
            + std::mem::size_of::<SessionCounters>()
            + events * std::mem::size_of::<EventCounters>();
        LiveHistogram::footprint(threads * events * HISTOGRAMS_PER_EVENT)
            + (threads * per_thread) as u64
    }
}

/// The measured window, in `sys::now_ns()` time: completions in `[start, end)` count.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A session's handle for recording. Cheap to call on every request.
pub struct Recorder {
    counters: Arc<SessionCounters>,
    window: Window,
}

impl Recorder {
    pub fn new(counters: Arc<SessionCounters>, window: Window) -> Recorder {
        Recorder { counters, window }
    }

    /// True once `now` is past the measured window: the session should stop.
    #[inline]
    pub fn window_over(&self, now_ns: u64) -> bool {
        now_ns >= self.window.end_ns
    }

    /// True once `now` is in (or past) the measured window: the warm-up is over.
    #[inline]
    pub fn window_started(&self, now_ns: u64) -> bool {
        now_ns >= self.window.start_ns
    }

    #[inline]
    fn counts(&self, done_ns: u64) -> bool {
        done_ns >= self.window.start_ns && done_ns < self.window.end_ns
    }

    /// One request of `bytes` that started at `start_ns` and completed at `done_ns`.
    /// Ignored outside the measured window (warm-up, or after the end).
    #[inline]
    pub fn request(&self, ev: EventSlot, start_ns: u64, done_ns: u64, bytes: u64) {
        if !self.counts(done_ns) {
            return;
        }
        let e = &self.counters.events[ev];
        let lat = done_ns.saturating_sub(start_ns);
        bump(&e.requests, 1);
        bump(&e.bytes, bytes);
        bump(&e.latency_sum_ns, lat);
        raise(&e.latency_max_ns, lat);
        e.latency.record(lat);
    }

    /// One request of an open-loop class: scheduled at `sched_ns`, issued at `start_ns`,
    /// completed at `done_ns`. Its latency runs from the schedule (a stalled device cannot
    /// hide its stall by delaying the next request); service time from the issue.
    #[inline]
    pub fn scheduled_request(
        &self,
        ev: EventSlot,
        sched_ns: u64,
        start_ns: u64,
        done_ns: u64,
        bytes: u64,
    ) {
        if !self.counts(done_ns) {
            return;
        }
        self.request(ev, sched_ns.min(start_ns), done_ns, bytes);
        let e = &self.counters.events[ev];
        let service = done_ns.saturating_sub(start_ns);
        bump(&e.service_sum_ns, service);
        raise(&e.service_max_ns, service);
        e.service.record(service);
        let late = start_ns.saturating_sub(sched_ns);
        bump(&e.late_sum_ns, late);
        raise(&e.late_max_ns, late);
    }

    /// A request, open-loop (`sched_ns` given) or not.
    #[inline]
    pub fn request_from(
        &self,
        ev: EventSlot,
        sched_ns: Option<u64>,
        start_ns: u64,
        done_ns: u64,
        bytes: u64,
    ) {
        match sched_ns {
            Some(sched) => self.scheduled_request(ev, sched, start_ns, done_ns, bytes),
            None => self.request(ev, start_ns, done_ns, bytes),
        }
    }

    /// One wait: a period the session was blocked, covering one or more requests.
    #[inline]
    pub fn wait(&self, ev: EventSlot, start_ns: u64, done_ns: u64) {
        if !self.counts(done_ns) {
            return;
        }
        let e = &self.counters.events[ev];
        let lat = done_ns.saturating_sub(start_ns);
        bump(&e.waits, 1);
        bump(&e.wait_sum_ns, lat);
        raise(&e.wait_max_ns, lat);
        e.wait_latency.record(lat);
    }

    /// Time spent inside one engine submit call.
    #[inline]
    pub fn submit(&self, ev: EventSlot, start_ns: u64, done_ns: u64) {
        if !self.counts(done_ns) {
            return;
        }
        let e = &self.counters.events[ev];
        bump(&e.submit_calls, 1);
        bump(&e.submit_ns, done_ns.saturating_sub(start_ns));
    }

    /// A transaction ended at `now_ns` (committed or not).
    #[inline]
    pub fn transaction(&self, now_ns: u64) {
        if self.counts(now_ns) {
            bump(&self.counters.db.transactions, 1);
        }
    }

    /// A commit finished at `now_ns`.
    #[inline]
    pub fn commit(&self, now_ns: u64) {
        bump(&self.counters.db.commits_all, 1);
        if self.counts(now_ns) {
            bump(&self.counters.db.commits, 1);
        }
    }

    /// `bytes` of redo generated at `now_ns`.
    #[inline]
    pub fn redo(&self, now_ns: u64, bytes: u64) {
        bump(&self.counters.db.redo_bytes_all, bytes);
        if self.counts(now_ns) {
            bump(&self.counters.db.redo_bytes, bytes);
        }
    }

    /// `logical` blocks looked at, `physical` of them read from the data files.
    #[inline]
    pub fn block_reads(&self, now_ns: u64, logical: u64, physical: u64) {
        if self.counts(now_ns) {
            bump(&self.counters.db.logical_reads, logical);
            bump(&self.counters.db.physical_reads, physical);
        }
    }

    /// A failed request. Errors count whenever they happen, warm-up included.
    pub fn error(&self, ev: EventSlot) {
        bump(&self.counters.events[ev].errors, 1);
    }
}
