//! Time dbio did not run is not storage time. When the process is stopped (SIGSTOP, a
//! debugger), starved of CPU, or its virtual machine paused, the requests in flight then
//! complete late and look slow; when the machine is suspended, the monotonic clock stands
//! still while the devices do not. The main thread, which wakes every few milliseconds to
//! keep the window's time, notices both: a wake-up more than a second after it was due, or
//! CLOCK_BOOTTIME running ahead of CLOCK_MONOTONIC by more than a second. What it finds is
//! reported, never corrected: the result says which seconds hold that time.

use std::cell::RefCell;

/// A wake-up (or a suspend) this much late is time dbio did not run. Below it, a loaded
/// machine's scheduling delays are normal and not reported.
pub const LATE_NS: u64 = 1_000_000_000;

/// A stretch of the measured window in which dbio did not run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stall {
    /// Where it began, in nanoseconds from the start of the measured window.
    pub from_ns: u64,
    /// How long dbio did not run.
    pub ns: u64,
    /// The machine was suspended (CLOCK_BOOTTIME ran ahead of CLOCK_MONOTONIC), rather
    /// than the process stopped or starved.
    pub suspended: bool,
    /// How long the same stretch had already lasted in the warm-up, before the window
    /// began (not part of `ns`: the warm-up is not measured).
    pub warmup_ns: u64,
}

/// The least part of a second, in seconds, that a stall marks that second with.
pub const MARKED_S: f64 = 0.001;

impl Stall {
    /// Seconds of the measured window (from 1) this stall lies in, first and last: those it
    /// takes at least a millisecond of, as the per-second history marks them (a stall that
    /// ends a few microseconds into a second does not name that second). A suspend takes
    /// no monotonic time: it lies in the second it was noticed in.
    pub fn seconds(&self) -> (u32, u32) {
        let first = (self.from_ns / 1_000_000_000) as u32 + 1;
        if self.suspended {
            return (first, first);
        }
        let last = ((self.from_ns + self.ns).saturating_sub(1) / 1_000_000_000) as u32 + 1;
        let marked = |t: &u32| self.in_second(*t) >= MARKED_S;
        match (
            (first..=last).find(marked),
            (first..=last).rev().find(marked),
        ) {
            (Some(a), Some(b)) => (a, b),
            _ => (first, last),
        }
    }

    /// How much of second `t` (from 1) of the window this stall takes, in seconds.
    pub fn in_second(&self, t: u32) -> f64 {
        if self.suspended {
            return if self.seconds().0 == t {
                self.ns as f64 / 1e9
            } else {
                0.0
            };
        }
        let (lo, hi) = (
            u64::from(t.saturating_sub(1)) * 1_000_000_000,
            u64::from(t) * 1_000_000_000,
        );
        let (a, b) = (self.from_ns.max(lo), (self.from_ns + self.ns).min(hi));
        b.saturating_sub(a) as f64 / 1e9
    }
}

/// Watches the main thread's wake-ups over the measured window — from the start of the
/// warm-up, so that a stretch that begins there and lasts into the window is seen. Used by
/// that thread alone.
#[derive(Debug)]
pub struct StallWatch {
    start_ns: u64,
    end_ns: u64,
    state: RefCell<State>,
}

#[derive(Debug)]
struct State {
    /// When the thread last looked at the clock, or the end of the sleep it then began:
    /// when it should look next, at the earliest.
    due_ns: u64,
    /// CLOCK_BOOTTIME − CLOCK_MONOTONIC at the last look: grows only while suspended.
    suspended_ns: u64,
    stalls: Vec<Stall>,
}

impl StallWatch {
    /// Watches the window `start_ns..end_ns` (on the `now_ns` scale).
    pub fn new(start_ns: u64, end_ns: u64) -> StallWatch {
        StallWatch {
            start_ns,
            end_ns,
            state: RefCell::new(State {
                due_ns: 0,
                suspended_ns: suspended_ns(),
                stalls: Vec::new(),
            }),
        }
    }

    /// The thread looks at the clock: it is `now_ns`. Time since it was due to look again
    /// (its last look, or the end of the sleep it took since) is time it did not run.
    pub fn look(&self, now_ns: u64) {
        let mut s = self.state.borrow_mut();
        let suspended = suspended_ns();
        let slept_through = suspended.saturating_sub(s.suspended_ns);
        s.suspended_ns = suspended;
        let due = std::mem::replace(&mut s.due_ns, now_ns);
        if due == 0 || due >= self.end_ns || now_ns <= self.start_ns {
            return;
        }
        if slept_through > LATE_NS {
            s.stalls.push(Stall {
                from_ns: now_ns.min(self.end_ns - 1).saturating_sub(self.start_ns),
                ns: slept_through,
                suspended: true,
                warmup_ns: 0,
            });
        } else if now_ns.saturating_sub(due) > LATE_NS {
            // Only what lies inside the window counts; what lay in the warm-up is kept apart.
            let from = due.max(self.start_ns);
            let to = now_ns.min(self.end_ns);
            s.stalls.push(Stall {
                from_ns: from - self.start_ns,
                ns: to.saturating_sub(from),
                suspended: false,
                warmup_ns: self.start_ns.saturating_sub(due),
            });
        }
    }

    /// The thread sleeps until `due_ns`.
    pub fn sleeping_until(&self, due_ns: u64) {
        let mut s = self.state.borrow_mut();
        s.due_ns = s.due_ns.max(due_ns);
    }

    /// What was found.
    pub fn stalls(&self) -> Vec<Stall> {
        self.state.borrow().stalls.clone()
    }
}

/// CLOCK_BOOTTIME − CLOCK_MONOTONIC: the time the machine spent suspended since boot.
fn suspended_ns() -> u64 {
    let read = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out pointer; both clocks exist on Linux.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    let mono = read(libc::CLOCK_MONOTONIC);
    read(libc::CLOCK_BOOTTIME).saturating_sub(mono)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_late_wake_up_is_a_stall_in_its_seconds() {
        let w = StallWatch::new(10 * S, 16 * S);
        // On time, and late by less than a second: nothing.
        w.look(10 * S + 10_000_000);
        w.sleeping_until(11 * S);
        w.look(11 * S + 20_000_000);
        w.sleeping_until(12 * S);
        w.look(12 * S + 900_000_000);
        assert!(w.stalls().is_empty());
        // Stopped from 2.0 s to 5.2 s of the window (after a look, while working).
        w.look(12 * S);
        w.look(15 * S + S / 5);
        let st = w.stalls();
        assert_eq!(st.len(), 1);
        assert_eq!(st[0].ns, 3 * S + S / 5);
        assert_eq!(st[0].seconds(), (3, 6));
        assert!((st[0].in_second(3) - 1.0).abs() < 1e-9);
        assert!((st[0].in_second(6) - 0.2).abs() < 1e-9);
        assert_eq!(st[0].in_second(2), 0.0);
        let total: f64 = (1..=6).map(|t| st[0].in_second(t)).sum();
        assert!((total - 3.2).abs() < 1e-9);
        // After the window: not its business.
        w.sleeping_until(16 * S);
        w.look(19 * S);
        assert_eq!(w.stalls().len(), 1);
    }

    /// A stall that ends a few microseconds into a second names only the seconds the
    /// per-second history marks (at least a millisecond of them).
    #[test]
    fn a_stall_names_only_the_seconds_it_marks() {
        let st = Stall {
            from_ns: 0,
            ns: 2 * S + 300_000,
            suspended: false,
            warmup_ns: S,
        };
        assert_eq!(st.seconds(), (1, 2));
        assert!(st.in_second(3) < MARKED_S);
        let st = Stall {
            from_ns: S - 200_000,
            ns: S + 400_000,
            suspended: false,
            warmup_ns: 0,
        };
        assert_eq!(st.seconds(), (2, 2));
    }

    /// A stretch that begins in the warm-up and lasts into the window: the part inside the
    /// window is the stall, the part before it is kept apart; one wholly in the warm-up is
    /// nothing.
    #[test]
    fn a_stall_from_the_warm_up_counts_from_the_window_start() {
        // Warm-up 8 s – 10 s, window 10 s – 16 s.
        let w = StallWatch::new(10 * S, 16 * S);
        w.look(8 * S);
        w.sleeping_until(8 * S + 20_000_000);
        // Stopped in the warm-up from 8.02 s until 8.9 s, then from 9.0 s until 12.0 s.
        w.look(8 * S + 900_000_000);
        assert!(w.stalls().is_empty());
        w.look(9 * S);
        w.sleeping_until(9 * S + 20_000_000);
        w.look(12 * S);
        let st = w.stalls();
        assert_eq!(st.len(), 1, "{st:?}");
        assert_eq!((st[0].from_ns, st[0].ns), (0, 2 * S));
        assert_eq!(st[0].warmup_ns, S - 20_000_000);
        assert_eq!(st[0].seconds(), (1, 2));
        // Wholly in the warm-up: nothing.
        let w = StallWatch::new(10 * S, 16 * S);
        w.look(5 * S);
        w.look(9 * S);
        w.sleeping_until(10 * S);
        w.look(10 * S + 10_000_000);
        assert!(w.stalls().is_empty());
    }
}
