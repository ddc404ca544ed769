//! Latency of dependent loads: a pointer chase over a random cyclic permutation of cache
//! lines. Each line holds the address of the next one, chosen at random (Sattolo's
//! algorithm makes one single cycle through every line), so each load must wait for the
//! previous one and no prefetcher can guess the next address. ns per load = elapsed time of
//! a repetition / loads in it.
//!
//! Also here: [`repeat`], how every figure of `dbio mem` is taken — short repetitions until
//! the middle half of them agree or the point's time budget is spent, with the spread kept.
//! A repetition during which the chasing thread lost its CPU (an involuntary context switch)
//! measured the scheduler, not the memory: it is left out (and counted) while clean ones
//! can be had.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::buffer::Buffer;
use super::now_ns;

/// Lines handled between two looks at the stop flag while a chain is built: about a
/// millisecond of work even in a debug build.
const BUILD_STEP: usize = 1 << 15;

/// Sattolo's algorithm: `next[i]` is the line after line `i`, and following `next` from
/// any line visits every line once before coming back (one cycle, uniformly chosen among
/// all (n-1)! cycles). None when `stop` is set before it is done (a cycle of hundreds of
/// millions of lines takes seconds).
pub fn cycle(lines: usize, rng: &mut fastrand::Rng, stop: &AtomicBool) -> Option<Vec<u32>> {
    assert!(lines <= u32::MAX as usize, "at most 2^32 - 1 lines");
    let mut next: Vec<u32> = Vec::with_capacity(lines);
    while next.len() < lines {
        if stop.load(Relaxed) {
            return None;
        }
        let from = next.len();
        next.extend(from as u32..(from + BUILD_STEP).min(lines) as u32);
    }
    for i in (1..lines).rev() {
        if i % BUILD_STEP == 0 && stop.load(Relaxed) {
            return None;
        }
        let j = rng.usize(0..i);
        next.swap(i, j);
    }
    Some(next)
}

/// A chain of lines written into a buffer, ready to chase.
pub struct Chain {
    start: *const usize,
    lines: usize,
}

// SAFETY: a chain points into a buffer that outlives it; chasing only reads.
unsafe impl Send for Chain {}

impl Chain {
    /// Links the first `lines` lines of `buf` (each `stride` bytes) into one random cycle.
    /// None when `stop` is set before it is done.
    pub fn build(
        buf: &Buffer,
        lines: usize,
        stride: usize,
        seed: u64,
        stop: &AtomicBool,
    ) -> Option<Chain> {
        assert!(
            lines >= 1 && lines.checked_mul(stride).is_some_and(|b| b <= buf.len()),
            "the chain fits its buffer"
        );
        assert!(stride >= std::mem::size_of::<usize>() && stride.is_power_of_two());
        let next = cycle(lines, &mut fastrand::Rng::with_seed(seed), stop)?;
        let base = buf.as_ptr();
        for (i, &n) in next.iter().enumerate() {
            if i % BUILD_STEP == 0 && stop.load(Relaxed) {
                return None;
            }
            // SAFETY: both lines lie inside the buffer (checked above); lines are aligned
            // to `stride`, a power of two at least the size of a pointer.
            unsafe {
                (base.add(i * stride) as *mut usize).write(base.add(n as usize * stride) as usize)
            };
        }
        Some(Chain {
            start: base as *const usize,
            lines,
        })
    }

    pub fn lines(&self) -> usize {
        self.lines
    }
}

/// Follows `loads` pointers from `p` (rounded up to a multiple of 16) and returns where it
/// stopped. Unrolled so that the loop's own counting hides under the loads' latency.
///
/// # Safety
/// `p` must start a cycle of valid pointers.
#[inline(never)]
pub unsafe fn chase(mut p: *const usize, loads: u64) -> *const usize {
    for _ in 0..loads.div_ceil(16) {
        // SAFETY: the caller's promise: every pointer in the cycle is valid.
        unsafe {
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
            p = *p as *const usize;
        }
    }
    p
}

/// How long a figure may take and when it counts as stable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// Most time spent on one figure (repetitions stop when it is spent).
    pub time_ns: u64,
    /// The length one repetition aims at.
    pub rep_ns: u64,
    /// Repetitions before stability is judged.
    pub min_reps: usize,
    /// Stable when the middle half of the repetitions lies within this fraction of their
    /// median: (p75 - p25) / median ≤ tolerance.
    pub tolerance: f64,
}

impl Budget {
    pub fn new(time_ns: u64) -> Budget {
        Budget {
            time_ns,
            // Short, so that a busy machine still leaves whole repetitions uninterrupted
            // (a scheduler's time slice is a few ms).
            rep_ns: (time_ns / 100).clamp(100_000, 500_000),
            min_reps: 5,
            tolerance: 0.02,
        }
    }

    /// Repetitions of a bandwidth figure (read from counters between sleeps) are longer:
    /// the counters move in steps of a chunk.
    pub fn bandwidth_rep_ns(&self) -> u64 {
        (self.time_ns / 10).clamp(self.rep_ns, 50_000_000)
    }

    fn max_reps(&self) -> usize {
        (self.time_ns / self.rep_ns.max(1)) as usize + self.min_reps + 1
    }
}

/// One figure from repetitions: their median, with the spread kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// The median repetition.
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub p25: f64,
    pub p75: f64,
    pub reps: usize,
    /// Repetitions left out because the thread lost its CPU during them. When no
    /// repetition was clean (`preempted == reps`), the figure is the least disturbed of
    /// them, its minimum: losing the CPU only ever adds time.
    pub preempted: usize,
    /// The middle half agreed within the budget's tolerance.
    pub stable: bool,
}

impl Sample {
    /// (p75 - p25) / median, in percent.
    pub fn spread_pct(&self) -> f64 {
        if self.median > 0.0 {
            (self.p75 - self.p25) / self.median * 100.0
        } else {
            0.0
        }
    }

    fn of(sorted: &[f64], preempted: usize, stable: bool) -> Sample {
        let q = |f: f64| sorted[((sorted.len() - 1) as f64 * f).round() as usize];
        Sample {
            median: q(0.5),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            p25: q(0.25),
            p75: q(0.75),
            reps: sorted.len(),
            preempted,
            stable,
        }
    }
}

/// One repetition's figure, and whether the thread kept its CPU throughout.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rep {
    pub value: f64,
    pub clean: bool,
}

impl Rep {
    /// A figure that cannot have been disturbed by preemption (or is not checked).
    pub fn clean(value: f64) -> Rep {
        Rep { value, clean: true }
    }
}

/// Involuntary context switches of the calling thread so far.
pub fn preemptions() -> i64 {
    // SAFETY: zeroed rusage is valid; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    ru.ru_nivcsw
}

/// Calls `rep` (one repetition) until the clean figures are stable, the budget is spent
/// or `stop` is set. None when stopped before the first repetition ended.
pub fn repeat(budget: &Budget, stop: &AtomicBool, mut rep: impl FnMut() -> Rep) -> Option<Sample> {
    let start = now_ns();
    let cap = budget.max_reps();
    let mut clean = Vec::with_capacity(cap);
    let mut preempted = Vec::with_capacity(cap);
    let mut sorted = Vec::with_capacity(cap);
    let mut stable = false;
    while !stop.load(Relaxed) && clean.len() + preempted.len() < cap {
        let r = rep();
        if r.clean {
            clean.push(r.value);
        } else {
            preempted.push(r.value);
        }
        if r.clean && clean.len() >= budget.min_reps {
            sorted.clear();
            sorted.extend_from_slice(&clean);
            sorted.sort_by(f64::total_cmp);
            if Sample::of(&sorted, 0, false).spread_pct() <= budget.tolerance * 100.0 {
                stable = true;
                break;
            }
        }
        if now_ns().saturating_sub(start) >= budget.time_ns {
            break;
        }
    }
    let values = if clean.is_empty() { &preempted } else { &clean };
    if values.is_empty() {
        return None;
    }
    sorted.clear();
    sorted.extend_from_slice(values);
    sorted.sort_by(f64::total_cmp);
    let mut s = Sample::of(&sorted, preempted.len(), stable);
    if clean.is_empty() {
        s.median = s.min;
    }
    Some(s)
}

/// At most this many loads warm a chain up (a whole lap of anything that fits a cache).
const WARM_LOADS: u64 = 1 << 20;

/// Warm-up loads between two looks at the stop flag (a few ms from memory).
const WARM_STEP: u64 = 1 << 14;

/// A chase in progress: where it is, and how many loads a repetition takes.
pub struct Chaser {
    p: *const usize,
    loads_per_rep: u64,
    /// A preempted repetition halves the next ones, down to this.
    fewest_loads: u64,
    /// Every load made, warm-up included.
    pub loads: u64,
}

impl Chaser {
    /// Warms `chain` up (one lap, at most [`WARM_LOADS`]) and sizes a repetition to about
    /// `rep_ns`. None when `stop` is set during the warm-up (a lap over memory with TLB
    /// misses takes a good part of a second).
    pub fn new(chain: &Chain, rep_ns: u64, stop: &AtomicBool) -> Option<Chaser> {
        let warm = (chain.lines() as u64).min(WARM_LOADS).div_ceil(16) * 16;
        let mut p = chain.start;
        let mut done = 0;
        while done < warm {
            if stop.load(Relaxed) {
                return None;
            }
            let n = WARM_STEP.min(warm - done);
            // SAFETY: the chain is a cycle of valid pointers into its live buffer.
            p = unsafe { chase(p, n) };
            done += n;
        }
        let probe = 4096;
        let t0 = now_ns();
        // SAFETY: as above.
        p = unsafe { chase(p, probe) };
        let per_load = ((now_ns() - t0) as f64 / probe as f64).max(0.05);
        let loads_per_rep = ((rep_ns as f64 / per_load) as u64).clamp(1024, 1 << 30) / 16 * 16;
        Some(Chaser {
            p,
            loads_per_rep,
            fewest_loads: (loads_per_rep / 4 / 16 * 16).max(1024),
            loads: warm + probe,
        })
    }

    /// One timed repetition: ns per load, clean when the thread kept its CPU.
    pub fn rep(&mut self) -> Rep {
        let n = self.loads_per_rep;
        let switches = preemptions();
        let t0 = now_ns();
        // SAFETY: `p` is on the chain, which is a cycle of valid pointers.
        self.p = unsafe { chase(self.p, n) };
        let t1 = now_ns();
        self.loads += n;
        std::hint::black_box(self.p);
        let clean = preemptions() == switches;
        if !clean {
            self.loads_per_rep = (n / 2 / 16 * 16).max(self.fewest_loads);
        }
        Rep {
            value: (t1 - t0) as f64 / n as f64,
            clean,
        }
    }
}

/// ns per load over `chain`, repeated until stable or out of budget.
pub fn latency(chain: &Chain, budget: &Budget, stop: &AtomicBool) -> Option<(Sample, u64)> {
    let mut c = Chaser::new(chain, budget.rep_ns, stop)?;
    let s = repeat(budget, stop, || c.rep())?;
    Some((s, c.loads))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::buffer::PageKind;
    use crate::mem::numa::Policy;

    static GO: AtomicBool = AtomicBool::new(false);

    /// Building a chain and warming it up give up when the stop flag is set, and a cycle
    /// checked for the flag is the same cycle as ever.
    #[test]
    fn a_stop_ends_building_and_warming() {
        let stop = AtomicBool::new(true);
        let lines = 3 * BUILD_STEP + 5;
        assert!(cycle(lines, &mut fastrand::Rng::with_seed(1), &stop).is_none());
        let buf = Buffer::new(lines * 64, PageKind::Base, 0, &Policy::Local, &GO)
            .unwrap()
            .unwrap();
        assert!(Chain::build(&buf, lines, 64, 1, &stop).is_none());
        let chain = Chain::build(&buf, lines, 64, 1, &GO).unwrap();
        assert!(Chaser::new(&chain, 100_000, &stop).is_none());
        let c = Chaser::new(&chain, 100_000, &GO).unwrap();
        assert_eq!(c.loads, (lines as u64).div_ceil(16) * 16 + 4096);
        // Sattolo's swaps as written without the checks.
        let mut rng = fastrand::Rng::with_seed(9);
        let mut plain: Vec<u32> = (0..lines as u32).collect();
        for i in (1..lines).rev() {
            let j = rng.usize(0..i);
            plain.swap(i, j);
        }
        assert_eq!(
            cycle(lines, &mut fastrand::Rng::with_seed(9), &GO).unwrap(),
            plain
        );
    }

    /// The permutation is one cycle through every line, for any size and seed.
    #[test]
    fn the_cycle_visits_every_line_once() {
        for (lines, seed) in [(1, 1), (2, 7), (3, 3), (64, 1), (1000, 42), (65_536, 9)] {
            let next = cycle(lines, &mut fastrand::Rng::with_seed(seed), &GO).unwrap();
            assert_eq!(next.len(), lines);
            let mut seen = vec![false; lines];
            let mut at = 0usize;
            for step in 0..lines {
                assert!(
                    !seen[at],
                    "{lines} lines, seed {seed}: line {at} again at step {step}"
                );
                seen[at] = true;
                at = next[at] as usize;
            }
            assert_eq!(at, 0, "back at the start after {lines} steps");
            assert!(seen.iter().all(|&s| s));
        }
    }

    /// Not the identity walk or a fixed stride: consecutive lines rarely follow each other.
    #[test]
    fn the_cycle_is_not_sequential() {
        let next = cycle(4096, &mut fastrand::Rng::with_seed(5), &GO).unwrap();
        let sequential = next
            .iter()
            .enumerate()
            .filter(|&(i, &n)| n as usize == i + 1)
            .count();
        assert!(sequential < 16, "{sequential} sequential steps");
        assert_ne!(
            next,
            cycle(4096, &mut fastrand::Rng::with_seed(6), &GO).unwrap()
        );
        assert_eq!(
            next,
            cycle(4096, &mut fastrand::Rng::with_seed(5), &GO).unwrap()
        );
    }

    /// Written into a buffer, the chain returns to its start after exactly one lap.
    #[test]
    fn a_chain_in_memory_is_one_lap_long() {
        let buf = Buffer::new(64 << 10, PageKind::Base, 0, &Policy::Local, &GO)
            .unwrap()
            .unwrap();
        let chain = Chain::build(&buf, 1000, 64, 3, &GO).unwrap();
        let mut p = chain.start;
        for _ in 0..1000 {
            // SAFETY: a cycle over the buffer.
            p = unsafe { *p as *const usize };
            let off = p as usize - buf.as_ptr() as usize;
            assert!(off.is_multiple_of(64) && off < 1000 * 64);
        }
        assert_eq!(p, chain.start);
        // SAFETY: as above; 1000 × 16 loads is 16 laps.
        assert_eq!(unsafe { chase(chain.start, 16_000) }, chain.start);
    }

    #[test]
    fn repeat_stops_when_stable_and_keeps_the_spread() {
        let stop = AtomicBool::new(false);
        let b = Budget::new(1_000_000_000);
        let s = repeat(&b, &stop, || Rep::clean(10.0)).unwrap();
        assert!(s.stable);
        assert_eq!((s.reps, s.median, s.spread_pct()), (5, 10.0, 0.0));
        // Figures that never agree: repetitions stop at the cap (an hour's budget in
        // repetitions of ten minutes: 6 + 5 + 1), not stable, with their spread.
        let mut k = 0.0;
        let capped = Budget {
            time_ns: 3_600_000_000_000,
            rep_ns: 600_000_000_000,
            ..b
        };
        let noisy = repeat(&capped, &stop, || {
            k += 1.0;
            Rep::clean(k)
        })
        .unwrap();
        assert!(!noisy.stable);
        assert_eq!((noisy.reps, noisy.min, noisy.max), (12, 1.0, 12.0));
        assert!(noisy.min < noisy.median && noisy.median < noisy.max);
        stop.store(true, Relaxed);
        assert!(repeat(&b, &stop, || Rep::clean(1.0)).is_none());
    }

    /// Preempted repetitions are left out while clean ones exist; when none is, the least
    /// disturbed one stands.
    #[test]
    fn preempted_repetitions_are_left_out() {
        let stop = AtomicBool::new(false);
        let mut k = 0;
        let s = repeat(&Budget::new(1_000_000_000), &stop, || {
            k += 1;
            if k % 2 == 0 {
                Rep {
                    value: 1000.0,
                    clean: false,
                }
            } else {
                Rep::clean(10.0)
            }
        })
        .unwrap();
        assert_eq!((s.median, s.max, s.reps, s.preempted), (10.0, 10.0, 5, 4));
        let mut v = 1000.0;
        let all = repeat(&Budget::new(10_000_000), &stop, || {
            v -= 0.5;
            Rep {
                value: v,
                clean: false,
            }
        })
        .unwrap();
        assert_eq!(all.median, all.min, "the least disturbed");
        assert_eq!(all.preempted, all.reps);
        assert!(!all.stable);
    }
}
