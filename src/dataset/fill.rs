//! Filling a new data set: large parallel writes of incompressible data, O_DIRECT where the
//! file system allows, so that preparing runs at about the device's sequential write speed.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::sys::{AlignedBuf, fill_random};

/// Bytes per fill write.
pub const CHUNK: u64 = 4 << 20;

/// Writes `file_size` bytes of random data into each of `files` using `writers` threads.
/// `written` counts bytes as they land (for progress). Stops early, returning
/// `Ok(false)`, when `stop` is set.
pub fn fill(
    files: &[File],
    file_size: u64,
    writers: usize,
    seed: u64,
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
                    let mut state = seed ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    fill_random(&mut buf.as_mut_slice()[..len], &mut state);
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
