//! Filling a new data set: large parallel writes, O_DIRECT where the file system allows, so
//! that preparing runs at about the device's sequential write speed. What is written is
//! [`Content`]: incompressible random data by default, or data an array can compress or
//! deduplicate by a known ratio (`--fill`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::sys::{AlignedBuf, fill_random};

/// Bytes per fill write.
pub const CHUNK: u64 = 4 << 20;

/// What data sets are filled with (`--fill`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Content {
    /// Incompressible, never repeating: arrays cannot flatter the result (the default).
    Random,
    /// All zeros: what thin provisioning and compression like best.
    Zero,
    /// Compresses about RATIO:1: in every 4 KiB unit, 4096/RATIO random bytes then zeros.
    Compress(f64),
    /// Only 1 in RATIO 4 KiB units is unique; the rest repeat them.
    Dedupe(u32),
}

/// The unit compressible and deduplicated content is made of (the finest granularity arrays
/// compress or deduplicate at; coarser ones see the same ratio for aligned units).
pub const UNIT: usize = 4096;

impl Content {
    /// Parses `random`, `zero`, `compress=RATIO` (1 to 64, e.g. 2 or 1.5) or
    /// `dedupe=RATIO` (a whole number, 1 to 1024).
    pub fn parse(s: &str) -> Result<Content, String> {
        let bad = || {
            format!(
                "'{s}' is not a fill; use random, zero, compress=RATIO (1 to 64, e.g. compress=2) or dedupe=RATIO (1 to 1024, e.g. dedupe=4)"
            )
        };
        match s.trim().split_once('=') {
            None if s.trim() == "random" => Ok(Content::Random),
            None if s.trim() == "zero" => Ok(Content::Zero),
            Some(("compress", r)) => match r.parse::<f64>() {
                Ok(r) if (1.0..=64.0).contains(&r) => Ok(Content::Compress(r)),
                _ => Err(bad()),
            },
            Some(("dedupe", r)) => match r.parse::<u32>() {
                Ok(r) if (1..=1024).contains(&r) => Ok(Content::Dedupe(r)),
                _ => Err(bad()),
            },
            _ => Err(bad()),
        }
    }

    /// The name recorded in the manifest and the result, as typed: `compress=2`.
    pub fn name(&self) -> String {
        match self {
            Content::Random => "random".into(),
            Content::Zero => "zero".into(),
            Content::Compress(r) => format!("compress={r}"),
            Content::Dedupe(r) => format!("dedupe={r}"),
        }
    }

    /// Fills a session's write buffer: as compressible as the data set. Writes are stamped
    /// to be unique (so arrays cannot skip them), so dedupe writes stay random.
    pub fn write_buffer(&self, buf: &mut [u8], seed: u64) {
        match self {
            Content::Zero | Content::Compress(_) => self.generate(buf, 0, buf.len() as u64, seed),
            Content::Random | Content::Dedupe(_) => fill_random(buf, &mut { seed }),
        }
    }

    /// Fills `buf`, which holds the data set's bytes from `pos` on (both multiples of
    /// [`UNIT`] except at the very end). `total` is the data set's size; `seed` makes
    /// different data sets differ.
    pub fn generate(&self, buf: &mut [u8], pos: u64, total: u64, seed: u64) {
        let unit_state = |id: u64| seed ^ (id + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        match *self {
            Content::Random => {
                let mut state = unit_state(pos / CHUNK) ^ pos;
                fill_random(buf, &mut state);
            }
            Content::Zero => buf.fill(0),
            Content::Compress(ratio) => {
                let random = ((UNIT as f64 / ratio).round() as usize).clamp(1, UNIT);
                for (i, unit) in buf.chunks_mut(UNIT).enumerate() {
                    let id = pos / UNIT as u64 + i as u64;
                    let n = random.min(unit.len());
                    fill_random(&mut unit[..n], &mut unit_state(id));
                    unit[n..].fill(0);
                }
            }
            Content::Dedupe(ratio) => {
                // Unit k repeats unit k mod U: U unique units, each RATIO times over.
                let unique = total
                    .div_ceil(UNIT as u64)
                    .div_ceil(u64::from(ratio))
                    .max(1);
                for (i, unit) in buf.chunks_mut(UNIT).enumerate() {
                    let id = (pos / UNIT as u64 + i as u64) % unique;
                    fill_random(unit, &mut unit_state(id));
                }
            }
        }
    }
}

/// Writes `file_size` bytes of `content` into each of `files` using `writers` threads.
/// `seal`: (data set number, block size) to start every block with a verify header, write
/// sequence 0. `written` counts bytes as they land (for progress). Stops early, returning
/// `Ok(false)`, when `stop` is set.
#[allow(clippy::too_many_arguments)]
pub fn fill(
    files: &[File],
    file_size: u64,
    content: Content,
    writers: usize,
    seed: u64,
    seal: Option<(u64, u64)>,
    written: &AtomicU64,
    stop: &AtomicBool,
) -> std::io::Result<bool> {
    let chunks_per_file = file_size.div_ceil(CHUNK);
    let total = chunks_per_file * files.len() as u64;
    let next = AtomicU64::new(0);
    let done_chunks = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let failed: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..writers.max(1) {
            s.spawn(|| {
                let mut buf = match AlignedBuf::new(CHUNK as usize, 4096) {
                    Ok(b) => b,
                    Err(e) => {
                        *failed.lock().unwrap() = Some(e);
                        abort.store(true, Ordering::Relaxed);
                        return;
                    }
                };
                loop {
                    if stop.load(Ordering::Relaxed) || abort.load(Ordering::Relaxed) {
                        return;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= total {
                        return;
                    }
                    // Interleave: every file advances together.
                    let file = (k % files.len() as u64) as usize;
                    let offset = (k / files.len() as u64) * CHUNK;
                    let len = CHUNK.min(file_size - offset) as usize;
                    let pos = file as u64 * file_size + offset;
                    let total = file_size * files.len() as u64;
                    content.generate(&mut buf.as_mut_slice()[..len], pos, total, seed);
                    if let Some((dataset, bs)) = seal {
                        let chunk = &mut buf.as_mut_slice()[..len];
                        for (k, block) in chunk.chunks_exact_mut(bs as usize).enumerate() {
                            let h = crate::verify::header::Header {
                                dataset,
                                file: file as u32,
                                block: offset / bs + k as u64,
                                seq: 0,
                            };
                            crate::verify::header::seal(block, h);
                        }
                    }
                    if let Err(e) = files[file].write_all_at(&buf.as_slice()[..len], offset) {
                        let mut f = failed.lock().unwrap();
                        if f.is_none() {
                            *f = Some(e);
                        }
                        abort.store(true, Ordering::Relaxed);
                        return;
                    }
                    written.fetch_add(len as u64, Ordering::Relaxed);
                    done_chunks.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().unwrap() {
        return Err(e);
    }
    Ok(done_chunks.load(Ordering::Relaxed) == total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn data(content: Content, total: usize) -> Vec<u8> {
        let mut v = vec![0xAAu8; total];
        // In two pieces, as parallel writers would: the result must not depend on it.
        let half = total / 2 / UNIT * UNIT;
        let (a, b) = v.split_at_mut(half);
        content.generate(a, 0, total as u64, 7);
        content.generate(b, half as u64, total as u64, 7);
        v
    }

    /// How well `d` compresses, estimated from the runs of zero bytes a compressor would
    /// squeeze out (random bytes do not compress at all).
    fn compress_ratio(d: &[u8]) -> f64 {
        let zeros = d.iter().filter(|&&b| b == 0).count() as f64;
        // Random bytes are zero 1/256 of the time; those do not compress.
        let random = d.len() as f64 - zeros;
        let squeezable = zeros - random / 255.0;
        d.len() as f64 / (d.len() as f64 - squeezable)
    }

    fn dedupe_ratio(d: &[u8]) -> f64 {
        let units: HashSet<&[u8]> = d.chunks(UNIT).collect();
        d.chunks(UNIT).count() as f64 / units.len() as f64
    }

    #[test]
    fn names_parse_back() {
        for c in [
            Content::Random,
            Content::Zero,
            Content::Compress(2.0),
            Content::Compress(1.5),
            Content::Dedupe(4),
        ] {
            assert_eq!(Content::parse(&c.name()), Ok(c));
        }
        assert_eq!(Content::Compress(2.0).name(), "compress=2");
        for bad in [
            "",
            "compress",
            "compress=0.5",
            "compress=x",
            "dedupe=0",
            "dedupe=2.5",
            "ones",
        ] {
            let e = Content::parse(bad).unwrap_err();
            assert!(e.contains("compress=RATIO"), "{bad}: {e}");
        }
    }

    #[test]
    fn random_neither_compresses_nor_dedupes() {
        let d = data(Content::Random, 4 << 20);
        assert!(compress_ratio(&d) < 1.01);
        assert_eq!(dedupe_ratio(&d), 1.0);
    }

    #[test]
    fn zero_is_zero() {
        assert!(data(Content::Zero, 1 << 20).iter().all(|&b| b == 0));
    }

    #[test]
    fn compress_gives_the_ratio_asked_for() {
        for ratio in [1.0, 1.5, 2.0, 4.0, 10.0] {
            let d = data(Content::Compress(ratio), 4 << 20);
            let got = compress_ratio(&d);
            assert!(
                (got - ratio).abs() / ratio < 0.02,
                "compress={ratio}: measured {got:.3}"
            );
            assert!(
                dedupe_ratio(&d) < 1.001,
                "compressible data still does not dedupe"
            );
        }
    }

    #[test]
    fn dedupe_gives_the_ratio_asked_for() {
        for ratio in [1u32, 2, 4, 7] {
            let d = data(Content::Dedupe(ratio), 4 << 20);
            let got = dedupe_ratio(&d);
            assert!(
                (got - f64::from(ratio)).abs() / f64::from(ratio) < 0.01,
                "dedupe={ratio}: measured {got:.3}"
            );
            assert!(
                compress_ratio(&d) < 1.01,
                "deduplicable data does not compress"
            );
        }
    }
}
