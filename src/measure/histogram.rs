//! Latency histograms (docs/measurement.md, "Histograms, not logs"): HDR layout, 1 ns .. 1 h, 2 significant digits (≤ 1 %
//! relative error), fixed memory whatever the run length.
//!
//! [`LiveHistogram`] is what a session records into: the same bucket layout as
//! `hdrhistogram::Histogram::new_with_bounds(1, 1h, 2)`, but with atomic counters so that the
//! once-a-second sampler can read it while the session runs. Only the owning session writes,
//! with a relaxed load + store (a plain `mov` on x86): no lock, no read-modify-write, no
//! allocation. [`Counts`] is a plain snapshot; it converts to an `hdrhistogram::Histogram`
//! for percentiles and serialization.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use hdrhistogram::Histogram;

/// Highest trackable latency: one hour, in nanoseconds. Longer values are clamped to it.
pub const HIGHEST_NS: u64 = 3_600 * 1_000_000_000;
/// Significant decimal digits kept (2 → relative error ≤ 1 %).
pub const SIGFIG: u8 = 2;

// Layout constants for lowest = 1 ns, sigfig = 2 (see hdrhistogram's `new_with_bounds`):
// sub-bucket count 256 (2^8), half count 128 (2^7), unit magnitude 0.
const SUB_BUCKET_HALF_MAG: u32 = 7;
const SUB_BUCKET_HALF: u64 = 1 << SUB_BUCKET_HALF_MAG;
const SUB_BUCKET_MASK: u64 = (1 << (SUB_BUCKET_HALF_MAG + 1)) - 1;
const LZ_BASE: u32 = 64 - (SUB_BUCKET_HALF_MAG + 1);
/// Number of counters: (buckets + 1) × half count, buckets = 35 for 1 h.
pub const LEN: usize = (bucket_count() as usize + 1) * SUB_BUCKET_HALF as usize;

const fn bucket_count() -> u32 {
    let mut smallest_untrackable = 1u64 << (SUB_BUCKET_HALF_MAG + 1);
    let mut buckets = 1;
    while smallest_untrackable <= HIGHEST_NS {
        smallest_untrackable <<= 1;
        buckets += 1;
    }
    buckets
}

/// Counter index of a value, identical to hdrhistogram's.
#[inline]
pub fn index_of(value_ns: u64) -> usize {
    let v = value_ns.min(HIGHEST_NS);
    let bucket = LZ_BASE - (v | SUB_BUCKET_MASK).leading_zeros();
    let sub = v >> bucket;
    (((bucket as u64 + 1) << SUB_BUCKET_HALF_MAG) + sub - SUB_BUCKET_HALF) as usize
}

/// Lowest value that lands in counter `index`.
pub fn value_at(index: usize) -> u64 {
    let mut bucket = (index as i64 >> SUB_BUCKET_HALF_MAG) - 1;
    let mut sub = (index as u64 & (SUB_BUCKET_HALF - 1)) + SUB_BUCKET_HALF;
    if bucket < 0 {
        sub -= SUB_BUCKET_HALF;
        bucket = 0;
    }
    sub << bucket
}

/// A new, empty `hdrhistogram::Histogram` with dbio's layout.
pub fn new_hdr() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG).expect("valid histogram bounds")
}

/// Counters in one row: one power of two of latencies (the first two rows: 0 .. 255 ns).
const ROW: usize = SUB_BUCKET_HALF as usize;
/// Rows of counters; each has a bit in [`LiveHistogram`]'s `rows`.
const ROWS: usize = LEN / ROW;
const _: () = assert!(ROWS <= 64 && LEN.is_multiple_of(ROW));

/// Bytes of counters one [`LiveHistogram`] has (whole pages of them are taken only once
/// written: see [`LiveHistogram::many`]).
pub const BYTES: usize = LEN * std::mem::size_of::<AtomicU64>();

/// Atomic-counter histogram written by one session, read by the sampler.
///
/// Its counters live in zero pages that take memory only once written
/// ([`crate::sys::ZeroedPages`]): a session's latencies fill a few rows of powers of two,
/// so of the 36 KiB of counters a few KiB are resident, and the many sessions of a large
/// run stay small. A bit per row says which rows were written, so that the reader adds only
/// those.
pub struct LiveHistogram {
    rows: AtomicU64,
    counts: std::ptr::NonNull<AtomicU64>,
    /// The memory `counts` points into (shared by the histograms made together).
    pages: std::sync::Arc<crate::sys::ZeroedPages>,
}

// SAFETY: `counts` points to LEN atomics inside `pages`, which lives as long as self;
// atomics may be shared between threads.
unsafe impl Send for LiveHistogram {}
unsafe impl Sync for LiveHistogram {}

impl Default for LiveHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LiveHistogram {
    pub fn new() -> LiveHistogram {
        LiveHistogram::many(1).pop().expect("one histogram")
    }

    /// Bytes `n` histograms made together take at most (all their counters written).
    pub fn footprint(n: usize) -> u64 {
        (crate::sys::ZeroedPages::footprint(n * BYTES) + n * std::mem::size_of::<LiveHistogram>())
            as u64
    }

    /// `n` histograms whose counters share one mapping (one memory map, however many).
    pub fn many(n: usize) -> Vec<LiveHistogram> {
        let pages = std::sync::Arc::new(crate::sys::ZeroedPages::new(n * BYTES));
        let base = pages.as_ptr().cast::<AtomicU64>();
        (0..n)
            .map(|i| LiveHistogram {
                rows: AtomicU64::new(0),
                // SAFETY: histogram i's counters, [i*LEN, (i+1)*LEN), lie inside the
                // mapping of n*LEN zeroed u64s (zero bits are a valid AtomicU64).
                counts: std::ptr::NonNull::new(unsafe { base.add(i * LEN) })
                    .expect("mapping is not null"),
                pages: pages.clone(),
            })
            .collect()
    }

    /// Bytes of the memory this histogram's counters lie in (shared with the histograms
    /// made together with it).
    pub fn mapped_bytes(&self) -> usize {
        self.pages.len()
    }

    #[inline]
    fn counter(&self, index: usize) -> &AtomicU64 {
        assert!(index < LEN);
        // SAFETY: index < LEN, inside this histogram's counters.
        unsafe { &*self.counts.as_ptr().add(index) }
    }

    /// Records one value. Call only from the owning thread.
    #[inline]
    pub fn record(&self, value_ns: u64) {
        let i = index_of(value_ns);
        let bit = 1u64 << (i / ROW);
        let rows = self.rows.load(Relaxed);
        if rows & bit == 0 {
            self.rows.store(rows | bit, Relaxed);
        }
        let c = self.counter(i);
        c.store(c.load(Relaxed) + 1, Relaxed);
    }

    /// Adds the current counts into `into`. A row written for the first time just now may
    /// be left for the next call; once the writer has stopped (joined), every count is seen.
    pub fn add_to(&self, into: &mut Counts) {
        let mut rows = self.rows.load(Relaxed);
        while rows != 0 {
            let r = rows.trailing_zeros() as usize;
            rows &= rows - 1;
            for i in r * ROW..(r + 1) * ROW {
                into.0[i] += self.counter(i).load(Relaxed);
            }
        }
    }
}

/// A plain snapshot of histogram counts in dbio's layout.
#[derive(Clone, PartialEq, Eq)]
pub struct Counts(pub Vec<u64>);

impl Default for Counts {
    fn default() -> Self {
        Counts(vec![0; LEN])
    }
}

impl std::fmt::Debug for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counts(total={})", self.total())
    }
}

impl Counts {
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// `self - earlier`, counter by counter (counters only grow).
    pub fn minus(&self, earlier: &Counts) -> Counts {
        Counts(
            self.0
                .iter()
                .zip(&earlier.0)
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
        )
    }

    pub fn add(&mut self, other: &Counts) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a += *b;
        }
    }

    /// The same counts as an `hdrhistogram::Histogram`.
    pub fn to_hdr(&self) -> Histogram<u64> {
        let mut h = new_hdr();
        for (i, &c) in self.0.iter().enumerate() {
            if c > 0 {
                h.record_n(value_at(i), c).expect("value within bounds");
            }
        }
        h
    }

    /// Database-style power-of-two microsecond buckets: `(lt_us, count)` for < 1 µs, < 2 µs,
    /// < 4 µs, ... up to the first bucket that holds the largest value. Each HDR counter goes
    /// to the bucket holding its midpoint, so the counts add up to [`Counts::total`].
    pub fn pow2_us_buckets(&self) -> Vec<(u64, u64)> {
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut lt_us = 1u64;
        out.push((lt_us, 0));
        for (i, &c) in self.0.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let lo = value_at(i);
            let hi = if i + 1 < LEN { value_at(i + 1) } else { lo + 1 };
            let mid_ns = lo + (hi - lo) / 2;
            while mid_ns >= lt_us * 1000 {
                lt_us *= 2;
                out.push((lt_us, 0));
            }
            // Find the bucket: the first with mid < lt_us.
            let pos = out
                .iter()
                .position(|(lt, _)| mid_ns < lt * 1000)
                .expect("bucket exists");
            out[pos].1 += c;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_hdrhistogram() {
        let h = new_hdr();
        assert_eq!(h.distinct_values(), LEN);
        let live = LiveHistogram::new();
        let mut reference = new_hdr();
        let mut x: u64 = 1;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = 1 + (x >> 20) % (HIGHEST_NS / (1 + (x & 0xfffff)));
            live.record(v);
            reference.record(v).unwrap();
            assert_eq!(h.lowest_equivalent(v), value_at(index_of(v)), "value {v}");
        }
        let mut c = Counts::default();
        live.add_to(&mut c);
        let back = c.to_hdr();
        assert_eq!(back.len(), reference.len());
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(back.value_at_quantile(q), reference.value_at_quantile(q));
        }
    }

    #[test]
    fn relative_error_is_within_one_percent() {
        for v in [100u64, 999, 12_345, 1_000_000, 987_654_321, HIGHEST_NS] {
            let lo = value_at(index_of(v));
            assert!(lo <= v && (v - lo) as f64 / v as f64 <= 0.01, "{v} -> {lo}");
        }
    }

    #[test]
    fn huge_values_are_clamped() {
        let live = LiveHistogram::new();
        live.record(u64::MAX);
        let mut c = Counts::default();
        live.add_to(&mut c);
        assert_eq!(c.total(), 1);
    }

    #[test]
    fn pow2_buckets_add_up() {
        let live = LiveHistogram::new();
        for v in [500u64, 1_500, 3_000, 3_999, 4_001, 1_000_000, 70_000_000] {
            live.record(v);
        }
        let mut c = Counts::default();
        live.add_to(&mut c);
        let b = c.pow2_us_buckets();
        assert_eq!(b.iter().map(|x| x.1).sum::<u64>(), 7);
        assert_eq!(b[0], (1, 1)); // 500 ns
        assert_eq!(b[1], (2, 1)); // 1.5 µs
        assert_eq!(b[2], (4, 2)); // 3.0, 3.999 µs
        assert_eq!(b[3], (8, 1)); // 4.001 µs
        assert!(b.last().unwrap().0 * 1000 > 70_000_000);
    }
}
