//! Active Session History (docs/measurement.md, "ASH"): every session and background thread publishes its state
//! — idle, ON CPU, or the event it waits on — in its own slot; a sampler thread reads all
//! slots `hz` times a second. Publishing is one relaxed store; slots are cache-line padded
//! so threads do not slow each other down.

use std::sync::atomic::{AtomicBool, AtomicU16, Ordering::Relaxed};

use super::recorder::EventSlot;
use crate::sys::now_ns;

/// Not active: thinking, or a background thread with nothing to do.
pub const IDLE: u16 = 0;
/// Active, not waiting.
pub const ON_CPU: u16 = 1;

/// The state value for waiting on event slot `slot`.
#[inline]
pub const fn waiting(slot: EventSlot) -> u16 {
    2 + slot as u16
}

/// One thread's published state.
#[repr(align(64))]
#[derive(Default)]
pub struct AshSlot(AtomicU16);

impl AshSlot {
    #[inline]
    pub fn on_cpu(&self) {
        self.0.store(ON_CPU, Relaxed);
    }
    #[inline]
    pub fn wait(&self, slot: EventSlot) {
        self.0.store(waiting(slot), Relaxed);
    }
    #[inline]
    pub fn idle(&self) {
        self.0.store(IDLE, Relaxed);
    }
    pub fn get(&self) -> u16 {
        self.0.load(Relaxed)
    }
}

/// All threads' slots.
pub struct AshBoard {
    slots: Box<[AshSlot]>,
}

impl AshBoard {
    pub fn new(threads: usize) -> AshBoard {
        AshBoard {
            slots: (0..threads).map(|_| AshSlot::default()).collect(),
        }
    }
    pub fn slot(&self, thread: usize) -> &AshSlot {
        &self.slots[thread]
    }
}

/// Samples counted per state during one second of the measured window.
#[derive(Debug, Clone)]
pub struct AshSecond {
    pub t: u32,
    /// Samples taken in this second (normally `hz`).
    pub ticks: u32,
    /// counts[state] = samples in that state (index: IDLE, ON_CPU, waiting(slot)...).
    pub counts: Vec<u32>,
}

/// What the sampler collected.
#[derive(Debug, Clone, Default)]
pub struct AshHistory {
    pub hz: u32,
    pub samples: u64,
    pub seconds: Vec<AshSecond>,
}

/// Samples `board` `hz` times a second between `start_ns` and `end_ns` (or until `done`),
/// attributing each sample to its second of the measured window. A tick the sampler could
/// not take near its time (the process did not run) is not taken later: the seconds of such
/// a stretch have fewer ticks, and the run fewer samples, than the window's length says.
pub fn sample(
    board: &AshBoard,
    states: usize,
    hz: u32,
    start_ns: u64,
    end_ns: u64,
    done: &AtomicBool,
) -> AshHistory {
    let period = 1_000_000_000 / u64::from(hz.max(1));
    // A tick taken this late samples the threads of another moment: it is skipped. Well
    // above a busy machine's scheduling delays.
    let late_limit = (2 * period).max(250_000_000);
    let mut h = AshHistory {
        hz,
        samples: 0,
        seconds: Vec::new(),
    };
    let mut rng = fastrand::Rng::with_seed(start_ns);
    let mut tick = 0u64;
    let mut next = tick_time(start_ns, period, tick, &mut rng);
    loop {
        let now = now_ns();
        if done.load(Relaxed) || next >= end_ns {
            break;
        }
        if now < next {
            std::thread::sleep(std::time::Duration::from_nanos(
                (next - now).min(20_000_000),
            ));
            continue;
        }
        if now - next > late_limit {
            // dbio did not run when this tick was due (stopped, starved, suspended): no
            // sample is made up for it afterwards from what the threads do now.
            tick += 1;
            next = tick_time(start_ns, period, tick, &mut rng);
            continue;
        }
        let t = ((next - start_ns) / 1_000_000_000) as u32 + 1;
        if h.seconds.last().map(|s| s.t) != Some(t) {
            h.seconds.push(AshSecond {
                t,
                ticks: 0,
                counts: vec![0; states],
            });
        }
        let second = h.seconds.last_mut().expect("second exists");
        second.ticks += 1;
        let counts = &mut second.counts;
        for slot in board.slots.iter() {
            let s = slot.get() as usize;
            if s < counts.len() {
                counts[s] += 1;
            }
        }
        h.samples += 1;
        tick += 1;
        next = tick_time(start_ns, period, tick, &mut rng);
    }
    h
}

/// When tick `k` samples: at a random point of its period. Ticks at a fixed phase would lock
/// onto an open loop's arrivals (40 arrivals/s and 10 samples/s share every tick), and see
/// each session just after it issued — busy in every sample, however short its waits.
fn tick_time(start_ns: u64, period: u64, k: u64, rng: &mut fastrand::Rng) -> u64 {
    start_ns + k * period + rng.u64(..period.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_fall_anywhere_in_their_period() {
        let (start, period) = (1_000_000_000u64, 100_000_000u64);
        let mut rng = fastrand::Rng::with_seed(3);
        let mut deciles = [0u32; 10];
        for k in 0..1000 {
            let t = tick_time(start, period, k, &mut rng);
            assert!((start + k * period..start + (k + 1) * period).contains(&t));
            deciles[((t - start) % period * 10 / period) as usize] += 1;
        }
        assert!(deciles.iter().all(|&n| n > 50), "{deciles:?}");
    }

    #[test]
    fn ticks_missed_while_not_running_are_not_made_up() {
        let board = AshBoard::new(1);
        board.slot(0).on_cpu();
        let done = AtomicBool::new(false);
        // A window that began 3 s ago, as a sampler that was stopped since finds it.
        let start = now_ns() - 3_000_000_000;
        let h = sample(&board, 2, 20, start, start + 3_500_000_000, &done);
        // The last 0.5 s, and at most the 0.25 s before it, are sampled: not 70 ticks.
        assert!((8..=16).contains(&h.samples), "{} samples", h.samples);
        assert_eq!(h.seconds.last().map(|s| s.t), Some(4));
    }

    #[test]
    fn samples_count_states_per_second() {
        let board = AshBoard::new(3);
        board.slot(0).on_cpu();
        board.slot(1).wait(0);
        board.slot(2).idle();
        let done = AtomicBool::new(false);
        let start = now_ns();
        let h = sample(&board, 3, 20, start, start + 1_000_000_000, &done);
        assert_eq!(h.seconds.len(), 1);
        let c = &h.seconds[0].counts;
        assert_eq!(u64::from(c[IDLE as usize]), h.samples);
        assert_eq!(u64::from(c[ON_CPU as usize]), h.samples);
        assert_eq!(u64::from(c[waiting(0) as usize]), h.samples);
        assert!(
            (18..=20).contains(&h.samples),
            "{} samples at 20 Hz over 1 s",
            h.samples
        );
    }
}
