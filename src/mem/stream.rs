//! Read bandwidth: threads, each pinned to a CPU, reading their own memory front to back
//! over and over (the hardware prefetchers help, as they help a table scan). Each thread
//! adds what it read to its own counter every [`CHUNK`] bytes; whoever measures reads the
//! counters — no lock, no allocation while streaming.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use super::numa;

/// Bytes read between two counter updates.
pub const CHUNK: usize = 256 << 10;

/// A reader's counter, on a cache line of its own so that readers do not slow each other.
#[repr(align(128))]
#[derive(Default)]
struct Counter(AtomicU64);

/// Reads every byte of `data` once; the result depends on all of them, so no read can be
/// left out.
pub fn read_all(data: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2 (checked); the function reads only inside `data`.
        return unsafe { read_avx2(data) };
    }
    read_portable(data)
}

fn read_portable(data: &[u8]) -> u64 {
    let mut acc = [0u64; 8];
    let mut chunks = data.chunks_exact(64);
    for c in &mut chunks {
        for (k, a) in acc.iter_mut().enumerate() {
            *a ^= u64::from_ne_bytes(c[k * 8..k * 8 + 8].try_into().expect("8 bytes"));
        }
    }
    let rest = chunks.remainder().iter().fold(0u64, |a, &b| a ^ b as u64);
    acc.iter().fold(rest, |a, &b| a ^ b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn read_avx2(data: &[u8]) -> u64 {
    use std::arch::x86_64::*;
    let p = data.as_ptr();
    let whole = data.len() / 128 * 128;
    let mut a = [_mm256_setzero_si256(); 4];
    let mut i = 0;
    while i < whole {
        // SAFETY: i + 128 ≤ data.len(); unaligned loads.
        unsafe {
            for (k, acc) in a.iter_mut().enumerate() {
                let v = _mm256_loadu_si256(p.add(i + 32 * k) as *const __m256i);
                *acc = _mm256_xor_si256(*acc, v);
            }
        }
        i += 128;
    }
    let v = _mm256_xor_si256(_mm256_xor_si256(a[0], a[1]), _mm256_xor_si256(a[2], a[3]));
    let mut lanes = [0u64; 4];
    // SAFETY: lanes holds 32 bytes.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, v) };
    let tail = read_portable(&data[whole..]);
    lanes.iter().fold(tail, |x, &y| x ^ y)
}

/// Runs one reading thread per `(cpu, memory)` pair while `measure` runs, and gives
/// `measure` a function returning the bytes read by all of them so far. `measure` starts
/// once every thread is reading (or `stop` is set); the threads stop when it returns. An
/// error when a thread cannot be pinned to its CPU.
pub fn with_readers<T>(
    work: &[(usize, &[u8])],
    stop: &AtomicBool,
    measure: impl FnOnce(&dyn Fn() -> u64) -> T,
) -> io::Result<T> {
    let done = AtomicBool::new(false);
    let counters: Vec<Counter> = work.iter().map(|_| Counter::default()).collect();
    let started = AtomicU64::new(0);
    let failed = std::sync::Mutex::new(None::<io::Error>);
    let out = std::thread::scope(|s| {
        for ((cpu, data), counter) in work.iter().zip(&counters) {
            let (done, started, failed) = (&done, &started, &failed);
            s.spawn(move || {
                if let Err(e) = numa::pin_to_cpus(&[*cpu]) {
                    *failed.lock().expect("not poisoned") = Some(e);
                    started.fetch_add(1, Relaxed);
                    return;
                }
                started.fetch_add(1, Relaxed);
                let mut sink = 0u64;
                while !done.load(Relaxed) {
                    for chunk in data.chunks(CHUNK) {
                        sink ^= read_all(chunk);
                        counter.0.fetch_add(chunk.len() as u64, Relaxed);
                        if done.load(Relaxed) {
                            break;
                        }
                    }
                }
                std::hint::black_box(sink);
            });
        }
        while started.load(Relaxed) < work.len() as u64 {
            std::thread::yield_now();
        }
        // Measure once every reader is streaming (has read a chunk), not while some still
        // wait for a CPU; on a machine too busy for that, after a second anyway.
        let since = super::now_ns();
        while counters.iter().any(|c| c.0.load(Relaxed) == 0)
            && super::now_ns() - since < 1_000_000_000
            && !stop.load(Relaxed)
            && failed.lock().expect("not poisoned").is_none()
        {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let total = || counters.iter().map(|c| c.0.load(Relaxed)).sum::<u64>();
        let out = if failed.lock().expect("not poisoned").is_some() {
            None
        } else {
            Some(measure(&total))
        };
        done.store(true, Relaxed);
        out
    });
    match (out, failed.into_inner().expect("not poisoned")) {
        (Some(v), None) => Ok(v),
        (_, Some(e)) => Err(e),
        (None, None) => unreachable!("no result without a failure"),
    }
}

/// Splits `data` into `n` parts of whole pages (the last takes the rest).
pub fn split(data: &[u8], n: usize) -> Vec<&[u8]> {
    let page = crate::sys::page_size();
    let part = (data.len() / n.max(1)) / page * page;
    (0..n)
        .map(|i| {
            let end = if i + 1 == n {
                data.len()
            } else {
                (i + 1) * part
            };
            &data[i * part..end]
        })
        .collect()
}

/// GiB/s from bytes over nanoseconds.
pub fn gib_per_s(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        return 0.0;
    }
    bytes as f64 / (1u64 << 30) as f64 / (ns as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_counts() {
        let mut data = vec![0u8; 4096 + 77];
        assert_eq!(read_all(&data), 0);
        for i in [0, 31, 127, 128, 4095, 4096 + 76] {
            data[i] = 1;
            assert_ne!(read_all(&data), 0, "byte {i}");
            assert_eq!(read_portable(&data), read_all(&data));
            data[i] = 0;
        }
    }

    #[test]
    fn parts_cover_the_data() {
        let data = vec![0u8; 10 * 4096 + 5];
        let parts = split(&data, 3);
        assert_eq!(parts.iter().map(|p| p.len()).sum::<usize>(), data.len());
        assert!(parts[..2].iter().all(|p| p.len() % 4096 == 0));
    }

    #[test]
    fn readers_count_what_they_read() {
        let data = vec![1u8; 4 << 20];
        let cpu = numa::allowed_cpus().unwrap()[0];
        let go = AtomicBool::new(false);
        let read = with_readers(&[(cpu, &data[..])], &go, |bytes| {
            let t = std::time::Instant::now();
            while bytes() < (16 << 20) && t.elapsed().as_secs() < 10 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            bytes()
        })
        .unwrap();
        assert!(read >= 16 << 20, "{read}");
        assert_eq!(read % CHUNK as u64, 0);
        assert!(with_readers(&[(1 << 20, &data[..])], &go, |b| b()).is_err());
    }
}
