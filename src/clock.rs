//! The clock every timestamp in dbio comes from: nanoseconds on a monotonic scale.
//!
//! When the kernel itself uses the TSC as its clock source (so it is invariant and in step
//! across CPUs), dbio reads the TSC directly and scales it, calibrated against
//! CLOCK_MONOTONIC: about 10 ns per reading instead of about 25 ns for the vDSO
//! `clock_gettime` — which matters when a request takes 1.5 µs. Otherwise, or before
//! [`calibrate`] ran, it uses `clock_gettime(CLOCK_MONOTONIC)`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// ns per TSC tick × 2^32; 0 = use clock_gettime.
static TSC_MULT: AtomicU64 = AtomicU64::new(0);
static TSC_BASE: AtomicU64 = AtomicU64::new(0);
static NS_BASE: AtomicU64 = AtomicU64::new(0);

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid out pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn tsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn tsc() -> u64 {
    0
}

/// Nanoseconds on the monotonic scale.
#[inline]
pub fn now_ns() -> u64 {
    let mult = TSC_MULT.load(Relaxed);
    if mult == 0 {
        return monotonic_ns();
    }
    let ticks = tsc().wrapping_sub(TSC_BASE.load(Relaxed));
    NS_BASE.load(Relaxed) + ((u128::from(ticks) * u128::from(mult)) >> 32) as u64
}

/// Which clock is in use, for the result: "tsc (2994.4 MHz)" or "clock_gettime".
pub fn describe() -> String {
    let mult = TSC_MULT.load(Relaxed);
    if mult == 0 {
        "clock_gettime(CLOCK_MONOTONIC)".into()
    } else {
        format!(
            "tsc ({:.1} MHz, calibrated against CLOCK_MONOTONIC)",
            (1u64 << 32) as f64 / mult as f64 * 1000.0
        )
    }
}

fn kernel_trusts_tsc() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or("");
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    source.trim() == "tsc" && has("constant_tsc") && has("nonstop_tsc")
}

/// Switches to the TSC when the kernel trusts it. Call once, before any thread takes a
/// timestamp that will be compared with another's. Takes about 20 ms.
pub fn calibrate() {
    if TSC_MULT.load(Relaxed) != 0
        || std::env::var_os("DBIO_CLOCK_MONOTONIC").is_some()
        || !kernel_trusts_tsc()
    {
        return;
    }
    let (t0, c0) = (monotonic_ns(), tsc());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (t1, c1) = (monotonic_ns(), tsc());
    if c1 <= c0 || t1 <= t0 {
        return;
    }
    let mult = (u128::from(t1 - t0) << 32) / u128::from(c1 - c0);
    if mult == 0 || mult > u128::from(u64::MAX) {
        return;
    }
    // Continue the monotonic scale from the last calibration point.
    NS_BASE.store(t1, Relaxed);
    TSC_BASE.store(c1, Relaxed);
    TSC_MULT.store(mult as u64, Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
