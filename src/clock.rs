//! The one clock every timestamp in dbio comes from (`sys::now_ns` calls [`now_ns`]):
//! nanoseconds on the CLOCK_MONOTONIC scale.
//!
//! Where the kernel itself keeps time with the TSC (its current clock source is `tsc`, which
//! it chooses only when the TSC is invariant and in step across CPUs, and leaves when its
//! watchdog finds otherwise), dbio reads the TSC directly and scales it, calibrated once
//! against CLOCK_MONOTONIC ([`calibrate`]): no vDSO call and its sequence-lock retry loop per
//! reading, which matters when a request takes a microsecond and is timed twice. The TSC is
//! read as the kernel reads it for its own clock (`lfence; rdtsc`), so that a reading is not
//! taken before the instructions that precede it: sessions compare timestamps taken on
//! different CPUs (open-loop schedules, the measured window). Everywhere else — another
//! clock source, another architecture, `DBIO_CLOCK_MONOTONIC` set, or before calibration —
//! it is `clock_gettime(CLOCK_MONOTONIC)`. [`describe`] says which, for the result.

use std::sync::OnceLock;

/// The TSC's scale, once calibrated.
#[derive(Debug, Clone, Copy)]
struct Scale {
    /// Nanoseconds per tick × 2^32.
    mult: u64,
    /// A TSC reading and the CLOCK_MONOTONIC time it was taken at.
    tsc_base: u64,
    ns_base: u64,
}

/// What [`calibrate`] decided: the TSC's scale, or why clock_gettime is used.
#[derive(Debug, Clone)]
enum Choice {
    Tsc(Scale),
    Monotonic(String),
}

static CHOICE: OnceLock<Choice> = OnceLock::new();
/// The scale when the TSC is in use (set once, with `CHOICE`); read on every timestamp.
static TSC: OnceLock<Scale> = OnceLock::new();

/// The kernel's current clock source.
const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
/// Setting this makes dbio use clock_gettime even where the TSC could be used.
pub const MONOTONIC_ENV: &str = "DBIO_CLOCK_MONOTONIC";

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The TSC, read after every earlier instruction has completed (the kernel's
/// `rdtsc_ordered`).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tsc() -> u64 {
    // SAFETY: lfence and rdtsc have no preconditions on x86_64.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn tsc() -> u64 {
    0
}

/// Nanoseconds on the monotonic scale.
#[inline(always)]
pub fn now_ns() -> u64 {
    match TSC.get() {
        Some(s) => {
            let ticks = tsc().wrapping_sub(s.tsc_base);
            s.ns_base + ((u128::from(ticks) * u128::from(s.mult)) >> 32) as u64
        }
        None => monotonic_ns(),
    }
}

/// Which clock is in use and why, for the result: `tsc (...)` or `clock_gettime(...)`.
pub fn describe() -> String {
    match CHOICE.get() {
        Some(Choice::Tsc(s)) => format!(
            "tsc ({:.1} MHz, calibrated against CLOCK_MONOTONIC; the kernel's clock source is tsc)",
            (1u64 << 32) as f64 / s.mult as f64 * 1000.0
        ),
        Some(Choice::Monotonic(why)) => format!("clock_gettime(CLOCK_MONOTONIC): {why}"),
        None => "clock_gettime(CLOCK_MONOTONIC): not calibrated".into(),
    }
}

/// Why the TSC cannot be used here, if it cannot.
fn tsc_refused() -> Option<String> {
    if !cfg!(target_arch = "x86_64") {
        return Some("the TSC is read on x86_64 only".into());
    }
    if std::env::var_os(MONOTONIC_ENV).is_some() {
        return Some(format!("{MONOTONIC_ENV} is set"));
    }
    let source = std::fs::read_to_string(CLOCKSOURCE).unwrap_or_default();
    match source.trim() {
        "tsc" => None,
        "" => Some(format!("cannot read {CLOCKSOURCE}")),
        other => Some(format!(
            "the kernel's clock source is {other}, not tsc, so the TSC is not trusted here"
        )),
    }
}

/// A (CLOCK_MONOTONIC, TSC) pair taken as close together as possible: the TSC between two
/// clock readings, the tightest of a few tries, paired with their midpoint.
fn pair() -> (u64, u64) {
    let mut best = (u64::MAX, 0, 0);
    for _ in 0..16 {
        let a = monotonic_ns();
        let c = tsc();
        let b = monotonic_ns();
        if b - a < best.0 {
            best = (b - a, a + (b - a) / 2, c);
        }
    }
    (best.1, best.2)
}

/// Chooses the clock, once per process (later calls do nothing): the TSC where the kernel
/// trusts it, scaled against CLOCK_MONOTONIC over about 20 ms; else clock_gettime. Call it
/// before any thread takes a timestamp that will be compared with another's.
pub fn calibrate() {
    CHOICE.get_or_init(|| {
        if let Some(why) = tsc_refused() {
            return Choice::Monotonic(why);
        }
        let (t0, c0) = pair();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let (t1, c1) = pair();
        let mult = if c1 > c0 && t1 > t0 {
            (u128::from(t1 - t0) << 32) / u128::from(c1 - c0)
        } else {
            0
        };
        if mult == 0 || mult > u128::from(u64::MAX) {
            return Choice::Monotonic("the TSC did not advance with CLOCK_MONOTONIC".into());
        }
        // The scale continues CLOCK_MONOTONIC from the last calibration point.
        let scale = Scale {
            mult: mult as u64,
            tsc_base: c1,
            ns_base: t1,
        };
        let _ = TSC.set(scale);
        Choice::Tsc(scale)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn tsc_clock_agrees_with_monotonic() {
        calibrate();
        let (a, m0) = (now_ns(), monotonic_ns());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (b, m1) = (now_ns(), monotonic_ns());
        let ours = (b - a) as f64;
        let kernel = (m1 - m0) as f64;
        assert!(
            (ours - kernel).abs() / kernel < 0.01,
            "{ours} vs {kernel} ({})",
            describe()
        );
        assert!(now_ns() >= b);
        // The TSC is used exactly where the kernel uses it.
        let kernel_tsc = std::fs::read_to_string(CLOCKSOURCE).is_ok_and(|s| s.trim() == "tsc");
        let expected =
            kernel_tsc && cfg!(target_arch = "x86_64") && std::env::var_os(MONOTONIC_ENV).is_none();
        assert_eq!(describe().starts_with("tsc ("), expected, "{}", describe());
        assert_eq!(TSC.get().is_some(), expected);
    }

    /// Readings taken on different CPUs, one after the other as two threads hand a token
    /// back and forth, never go backwards: a session may compare its timestamps with those
    /// another thread took (the window, an open-loop schedule).
    #[test]
    fn readings_on_different_cpus_stay_ordered() {
        calibrate();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        const ROUNDS: u64 = 20_000;
        // The last reading taken, with the round in the low bit: even for A, odd for B.
        let token = AtomicU64::new(0);
        let last = AtomicU64::new(now_ns());
        let player = |me: u64, cpu: usize| {
            let _ = crate::sys::pin_to_cpu(cpu);
            let mut worst = 0i64;
            for round in 0..ROUNDS {
                let turn = 2 * round + me;
                let mut spins = 0u32;
                while token.load(Ordering::Acquire) != turn {
                    spins += 1;
                    if spins > 1000 {
                        std::thread::yield_now(); // one CPU, or a busy machine
                    } else {
                        std::hint::spin_loop();
                    }
                }
                let before = last.load(Ordering::Relaxed);
                let now = now_ns();
                worst = worst.min(now as i64 - before as i64);
                last.store(now, Ordering::Relaxed);
                token.store(turn + 1, Ordering::Release);
            }
            worst
        };
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| player(0, 0));
            let b = s.spawn(|| player(1, 1 % cpus));
            (a.join().unwrap(), b.join().unwrap())
        });
        assert!(
            a >= 0 && b >= 0,
            "a reading went back by {} ns on another CPU ({})",
            -a.min(b),
            describe()
        );
    }
}
