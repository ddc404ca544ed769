//! Flash preconditioning: the workload-independent preconditioning of the SNIA Solid State
//! Storage Performance Test Specification — sequential 128 KiB writes over the whole target,
//! a number of times over (twice by default) — so that later results are taken on flash
//! that has been written over (garbage collection and write amplification at work), not on
//! fresh flash that flatters them.
//!
//! The target is a data set dbio prepared (every data file its manifest lists, each checked
//! to still be the file dbio created, the data set held exclusively; the manifest then
//! records the preconditioning) or a block device already checked and claimed by
//! [`crate::safety::device::claim`] (nothing of dbio's is written onto it).
//!
//! Writes use O_DIRECT where the target allows it. The content is the data set's own
//! (`--fill`: random unless it was prepared otherwise), new in every pass.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::fill::Content;
use super::manifest::{Manifest, State};
pub use super::manifest::{Pass, Preconditioned};
use super::{DataSet, lock_existing};
use crate::error::{Error, Result};
use crate::safety::device::Claim;
use crate::safety::fs::Dir;
use crate::safety::lock::Mode;
use crate::sys::{self, AlignedBuf};
use crate::units::Shown;

/// Bytes per sequential write.
pub const REQUEST_BYTES: u64 = 128 << 10;
/// The passes asked for when none are given.
pub const DEFAULT_PASSES: u32 = 2;
/// The most passes one command makes.
pub const MAX_PASSES: u32 = 100;

/// Where the bytes go: open files and their sizes.
struct Targets {
    files: Vec<(File, u64, PathBuf)>,
    direct: bool,
}

/// What a pass reports as it ends (pass number from 1, the pass): for a line per pass.
pub type OnPass<'a> = &'a dyn Fn(u32, &Pass);

/// What a progress display follows: the bytes all passes will write (0 until the target is
/// open) and the bytes written so far.
#[derive(Debug, Default)]
pub struct Counters {
    pub total: AtomicU64,
    pub written: AtomicU64,
}

/// Preconditions the data set in `path`: held exclusively, every data file written over
/// `passes` times, the manifest updated when at least one pass is complete. `counters`
/// follow the bytes as they land (progress). A signal (`stop`) ends it between writes; the
/// result then says which pass was partial.
pub fn data_set(
    path: &Path,
    passes: u32,
    stop: &AtomicBool,
    counters: &Counters,
    on_pass: OnPass,
) -> Result<Preconditioned> {
    let (_, dir, lock) = lock_existing(path)?;
    // Nobody reads or writes it while it is written over.
    lock.take(Mode::Exclusive)?;
    let mut m = read_checked(&dir)?;
    if m.verify {
        return Err(Error::usage(format!(
            "the data set in {} was prepared with --verify: preconditioning would overwrite every block's verify header; prepare it without --verify",
            path.shown()
        )));
    }
    let content = Content::parse(&m.fill).unwrap_or(Content::Random);
    let done = write_passes(
        &mut || open_files(&dir, &m),
        passes,
        content,
        m.id_seed(),
        stop,
        counters,
        on_pass,
    )?;
    if done.complete_passes() > 0 {
        m.preconditioned = Some(done.clone());
        m.write(&dir)?;
    }
    drop(lock);
    Ok(done)
}

/// Preconditions a block device `claim` holds (checked, confirmed): the whole device,
/// `passes` times. Before each pass the device is opened for writing through its claim,
/// proved to be the device claimed as it was, and proved once more after the last: a
/// change stops it (exit 1) with nothing further written.
pub fn device(
    claim: &Claim,
    passes: u32,
    stop: &AtomicBool,
    counters: &Counters,
    on_pass: OnPass,
) -> Result<Preconditioned> {
    let path = &claim.info.path;
    let mut open = || {
        let mut direct = true;
        let file = claim.held.open_for_writing(|p| {
            let (f, d) = open_for_writing(|flags| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(flags)
                    .open(p)
            })
            .map_err(|e| Error::io("cannot open for writing", p, &e))?;
            direct = d;
            Ok(f)
        })?;
        Ok(Targets {
            files: vec![(file, claim.info.size, path.clone())],
            direct,
        })
    };
    let done = write_passes(
        &mut open,
        passes,
        Content::Random,
        sys::now_ns(),
        stop,
        counters,
        on_pass,
    )?;
    // A change during the last pass is not a preconditioned device.
    claim.held.prove().map_err(Error::other)?;
    Ok(done)
}

/// The manifest, re-read under the exclusive lock, refused when it lists anything that is
/// not dbio's.
fn read_checked(dir: &Dir) -> Result<Manifest> {
    match Manifest::read(dir)? {
        Some((m, rejected))
            if rejected.is_empty() && !m.files.is_empty() && m.state == State::Ready =>
        {
            Ok(m)
        }
        _ => Err(Error::usage(format!(
            "{} holds no complete dbio data set, or its manifest was changed; see `dbio doctor`",
            dir.path().shown()
        ))),
    }
}

/// Opens `open` with O_DIRECT, or without where the file system refuses it.
fn open_for_writing(
    open: impl Fn(libc::c_int) -> std::io::Result<File>,
) -> std::io::Result<(File, bool)> {
    match open(libc::O_DIRECT) {
        Ok(f) => Ok((f, true)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => Ok((open(0)?, false)),
        Err(e) => Err(e),
    }
}

/// Every data file of the manifest, open for writing, each the file dbio created.
fn open_files(dir: &Dir, m: &Manifest) -> Result<Targets> {
    let mut files = Vec::with_capacity(m.files.len());
    let mut direct = true;
    for e in &m.files {
        let id = e.id();
        let (f, d) =
            open_for_writing(|flags| dir.open_file(&e.name, libc::O_WRONLY | flags, Some(&id)))
                .map_err(|err| Error::io("cannot open for writing", &dir.join(&e.name), &err))?;
        let (_, size) = sys::file_id_of(&f)
            .map_err(|err| Error::io("cannot stat", &dir.join(&e.name), &err))?;
        if size != e.size_bytes {
            return Err(Error::usage(format!(
                "{} is {size} bytes, not the {} its manifest records; run `dbio prepare` on it again",
                dir.join(&e.name).shown(),
                e.size_bytes
            )));
        }
        direct &= d;
        files.push((f, e.size_bytes, dir.join(&e.name)));
    }
    Ok(Targets { files, direct })
}

/// Writes every target whole, sequentially in [`REQUEST_BYTES`] writes, `passes` times;
/// each pass opens the targets anew (`open`: each proved to be what dbio checked) and ends
/// with a flush to stable storage.
fn write_passes(
    open: &mut dyn FnMut() -> Result<Targets>,
    passes: u32,
    content: Content,
    seed: u64,
    stop: &AtomicBool,
    counters: &Counters,
    on_pass: OnPass,
) -> Result<Preconditioned> {
    let mut buf = AlignedBuf::new(REQUEST_BYTES as usize, 4096)
        .map_err(|e| Error::other(format!("cannot allocate the write buffer: {e}")))?;
    let mut done = Vec::new();
    let mut direct = true;
    for pass in 1..=passes {
        let t = open()?;
        direct &= t.direct;
        let total: u64 = t.files.iter().map(|f| f.1).sum();
        counters
            .total
            .store(total.saturating_mul(u64::from(passes)), Ordering::Relaxed);
        let pass_seed = seed ^ u64::from(pass).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let started = Instant::now();
        let mut bytes = 0u64;
        let mut complete = true;
        'files: for (file, size, path) in &t.files {
            let mut pos = 0u64;
            while pos < *size {
                if stop.load(Ordering::Relaxed) {
                    complete = false;
                    break 'files;
                }
                let n = REQUEST_BYTES.min(size - pos) as usize;
                let chunk = &mut buf.as_mut_slice()[..n];
                content.generate(chunk, pos, *size, pass_seed);
                file.write_all_at(chunk, pos)
                    .map_err(|e| Error::io("cannot write", path, &e))?;
                pos += n as u64;
                bytes += n as u64;
                counters.written.fetch_add(n as u64, Ordering::Relaxed);
            }
        }
        for (file, _, path) in &t.files {
            file.sync_data()
                .map_err(|e| Error::io("cannot flush", path, &e))?;
        }
        let seconds = started.elapsed().as_secs_f64();
        let p = Pass {
            bytes,
            seconds,
            mib_s: if seconds > 0.0 {
                bytes as f64 / (1 << 20) as f64 / seconds
            } else {
                0.0
            },
            complete: complete && bytes == total,
        };
        on_pass(pass, &p);
        let stopped = !p.complete;
        if bytes > 0 || !stopped {
            done.push(p);
        }
        if stopped {
            break;
        }
    }
    Ok(Preconditioned {
        at: sys::utc_now_rfc3339(),
        request_bytes: REQUEST_BYTES,
        passes_asked: passes,
        bytes: done.iter().map(|p| p.bytes).sum(),
        passes: done,
        direct,
    })
}

impl DataSet {
    /// How the data set was preconditioned, as its manifest records it.
    pub fn preconditioned(&self) -> Option<&Preconditioned> {
        self.manifest.as_ref()?.preconditioned.as_ref()
    }
}

impl Manifest {
    /// A seed from the data set's id, so that two data sets are not written alike.
    fn id_seed(&self) -> u64 {
        u64::from_str_radix(&self.id, 16).unwrap_or(0) ^ sys::now_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A manifest written before preconditioning existed still reads, unmarked; an
    /// unmarked one is written without the field, a marked one keeps it.
    #[test]
    fn manifests_without_the_mark_still_read_and_the_mark_round_trips() {
        let old = r#"{"schema":"dbio.dataset.v1","created_by":"dbio 0.1.0","id":"00ff",
            "created_at":"2026-01-01T00:00:00Z","state":"ready","size_bytes":8192,
            "block_size":8192,"fill":"random","created_dir":true,
            "files":[{"name":"dbio-data-001.dbf","size_bytes":8192,"dev":1,"ino":2}]}"#;
        let mut m: Manifest = serde_json::from_str(old).unwrap();
        assert!(m.preconditioned.is_none());
        assert!(
            !serde_json::to_string(&m)
                .unwrap()
                .contains("preconditioned")
        );
        let pass = |complete| Pass {
            bytes: 8192,
            seconds: 0.5,
            mib_s: 8192.0 / 1048576.0 / 0.5,
            complete,
        };
        m.preconditioned = Some(Preconditioned {
            at: "2026-01-02T00:00:00Z".into(),
            request_bytes: REQUEST_BYTES,
            passes_asked: 2,
            passes: vec![pass(true), pass(false)],
            bytes: 16384,
            direct: true,
        });
        let back: Manifest = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        let p = back.preconditioned.unwrap();
        assert_eq!(Some(&p), m.preconditioned.as_ref());
        assert_eq!(p.complete_passes(), 1);
        assert!(!p.complete());
        let line = p.describe();
        assert!(
            line.starts_with("1 of 2 pass(es) (stopped) of sequential 128K writes"),
            "{line}"
        );
        assert!(line.contains("0.0, 0.0 (partial) MiB/s"), "{line}");
    }
}
