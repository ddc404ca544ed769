//! `dbio verify PATH`: reads a whole `--verify` data set — 1 MiB sequential reads, one thread
//! per file (up to the CPUs) — and checks every block's header, checksum and, from
//! `dbio-verify.seq`, its last write sequence.

use crate::units::Shown;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use crate::error::{Error, Result};
use crate::sys::AlignedBuf;
use crate::verify::header::{self, Problem};
use crate::verify::seq::{self, State, UNCERTAIN};
use crate::verify::{BadBlock, dataset_number};

const READ: usize = 1 << 20;

/// How much `dbio-verify.seq` could tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeqCheck {
    /// The table of the last run: every block's sequence is checked exactly.
    Exact,
    /// A table a killed run left: a block may be newer, never older.
    LowerBound,
    /// No usable table: sequences are not checked (lost writes go unnoticed). Why.
    None(String),
}

/// What `dbio verify` found.
#[derive(Debug)]
pub struct ScanReport {
    pub files: usize,
    pub blocks: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub seq: SeqCheck,
    /// Bad blocks as one line each (file name, block, problem), in file and block order.
    pub bad: Vec<String>,
    /// Files that could not be read to the end, one line each.
    pub io_errors: Vec<String>,
    pub interrupted: bool,
}

/// Checks every block of the data set in `dir`.
pub fn scan(dir: &Path, stop: &AtomicBool) -> Result<ScanReport> {
    let (m, held, _lock) = super::lock_existing(dir)?;
    if !m.verify {
        return Err(Error::usage(format!(
            "the data set in {} carries no verify headers (it was prepared without --verify, or written without it since); recreate it with `{}`",
            dir.shown(),
            super::prepare_command(dir, m.size_bytes, m.block_size, m.files.len(), true)
        )));
    }
    let dataset = dataset_number(&m.id);
    let bs = m.block_size;
    let per_file = m.files.first().map_or(0, |f| f.size_bytes / bs);
    let blocks = per_file * m.files.len() as u64;
    let (entries, seq_check) =
        match seq::read(&held, m.verify_seq.as_ref().map(|e| e.id()).as_ref()) {
            Ok(Some(s)) if s.dataset == dataset && s.entries.len() as u64 == blocks => {
                let how = match s.state {
                    State::Clean => SeqCheck::Exact,
                    State::Running => SeqCheck::LowerBound,
                };
                (s.entries, how)
            }
            Ok(Some(_)) => (
                Vec::new(),
                SeqCheck::None(format!("{} belongs to another data set", seq::SEQ_NAME)),
            ),
            Ok(None) => (
                Vec::new(),
                SeqCheck::None(format!("{} is missing", seq::SEQ_NAME)),
            ),
            Err(e) => (
                Vec::new(),
                SeqCheck::None(format!("{} cannot be read: {e}", seq::SEQ_NAME)),
            ),
        };
    let started = std::time::Instant::now();
    let next = AtomicUsize::new(0);
    let found: Mutex<Vec<(usize, BadBlock)>> = Mutex::new(Vec::new());
    let io_errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let checked = std::sync::atomic::AtomicU64::new(0);
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(m.files.len())
        .max(1);
    let ctx = (entries, seq_check.clone());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut buf = match AlignedBuf::new(READ, 4096) {
                    Ok(b) => b,
                    Err(e) => {
                        io_errors
                            .lock()
                            .unwrap()
                            .push(format!("cannot allocate: {e}"));
                        return;
                    }
                };
                loop {
                    let i = next.fetch_add(1, Relaxed);
                    let Some(entry) = m.files.get(i) else { return };
                    let path = dir.join(&entry.name);
                    let r = open(&held, &entry.name).and_then(|f| {
                        check_file(&f, i, per_file, bs, dataset, &ctx, &mut buf, stop)
                    });
                    match r {
                        Ok((n, bad)) => {
                            checked.fetch_add(n, Relaxed);
                            found
                                .lock()
                                .unwrap()
                                .extend(bad.into_iter().map(|b| (i, b)));
                        }
                        Err(e) => io_errors.lock().unwrap().push(format!(
                            "{}: {}",
                            path.shown(),
                            crate::error::io_advice(&e)
                        )),
                    }
                }
            });
        }
    });
    let mut found = found.into_inner().unwrap();
    found.sort_by_key(|(i, b)| (*i, b.block));
    let bad = found
        .iter()
        .map(|(i, b)| b.line(&m.files[*i].name))
        .collect();
    let blocks_checked = checked.into_inner();
    Ok(ScanReport {
        files: m.files.len(),
        blocks: blocks_checked,
        bytes: blocks_checked * bs,
        seconds: started.elapsed().as_secs_f64(),
        seq: seq_check,
        bad,
        io_errors: io_errors.into_inner().unwrap(),
        interrupted: stop.load(Relaxed),
    })
}

/// Reads file `index` front to back; returns the blocks checked and the bad ones.
#[allow(clippy::too_many_arguments)]
fn check_file(
    f: &File,
    index: usize,
    blocks: u64,
    bs: u64,
    dataset: u64,
    ctx: &(Vec<u32>, SeqCheck),
    buf: &mut AlignedBuf,
    stop: &AtomicBool,
) -> std::io::Result<(u64, Vec<BadBlock>)> {
    let (entries, how) = ctx;
    let mut bad = Vec::new();
    let per_read = (READ as u64 / bs).max(1);
    let mut block = 0;
    while block < blocks && !stop.load(Relaxed) {
        let n = per_read.min(blocks - block);
        let len = (n * bs) as usize;
        let data = &mut buf.as_mut_slice()[..len];
        f.read_exact_at(data, block * bs)?;
        for (k, b) in data.chunks_exact(bs as usize).enumerate() {
            let in_file = block + k as u64;
            let global = index as u64 * blocks + in_file;
            let r = header::read(b).and_then(|h| {
                header::expect(&h, dataset, index as u32, in_file)?;
                let Some(&e) = entries.get(global as usize) else {
                    return Ok(());
                };
                match how {
                    SeqCheck::Exact => seq::check(h.seq, e, e),
                    SeqCheck::LowerBound if e & UNCERTAIN == 0 && h.seq < seq::seq_of(e) => {
                        Err(Problem::Stale {
                            found: h.seq,
                            expected: seq::seq_of(e),
                        })
                    }
                    _ => Ok(()),
                }
            });
            if let Err(problem) = r {
                bad.push(BadBlock {
                    file: index,
                    block: in_file,
                    problem,
                });
            }
        }
        block += n;
    }
    Ok((block, bad))
}

/// Opens data file `name` for reading with O_DIRECT (what is on the device, not in the
/// page cache), or buffered where the file system has no direct I/O.
fn open(dir: &crate::safety::fs::Dir, name: &str) -> std::io::Result<File> {
    match dir.open_file(name, libc::O_RDONLY | libc::O_DIRECT, None) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            dir.open_file(name, libc::O_RDONLY, None)
        }
        r => r,
    }
}

/// The one-line summary `dbio verify` ends with.
pub fn summary_line(dir: &Path, r: &ScanReport) -> String {
    let mib = r.bytes as f64 / (1u64 << 20) as f64;
    let rate = if r.seconds > 0.0 {
        mib / r.seconds
    } else {
        0.0
    };
    let verdict = match (r.bad.len(), r.io_errors.len()) {
        (0, 0) => "no bad blocks".to_string(),
        (b, 0) => format!("{b} bad block(s)"),
        (b, e) => format!("{b} bad block(s), {e} file(s) not read to the end"),
    };
    format!(
        "verified {}: {} file(s), {} blocks ({}) in {:.2} s, {:.0} MiB/s{}: {verdict}",
        dir.shown(),
        r.files,
        crate::units::thousands(r.blocks),
        crate::units::human_bytes(r.bytes),
        r.seconds,
        rate,
        if r.interrupted { ", interrupted" } else { "" }
    )
}
