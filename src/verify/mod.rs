//! Data verification (`--verify`): every block written carries a [`header`] — data set,
//! file, block, write sequence, checksum — and every block read is checked against it and
//! against the last sequence written ([`seq`]). `dbio verify PATH` ([`scan`]) checks a whole
//! data set after the fact.
//!
//! What it finds, and names by file and block: torn or corrupted blocks (checksum),
//! misdirected writes (a valid block of another place), lost writes (an older sequence than
//! the last write dbio made). During a run a bad block is a failed request of its event.
//!
//! Cost when off: one branch per request (`Session::verify` is `None`). When on: one xxh3
//! over each block read or written, and one atomic per block in the sequence table.

pub mod header;
pub mod seq;

use crate::units::Shown;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use header::{Header, Problem};
use seq::SeqTable;

/// At most this many bad blocks are kept, per session and in a run's result.
pub const KEEP_BAD: usize = 100;

/// A bad block: where, and what is wrong.
#[derive(Debug, Clone, Copy)]
pub struct BadBlock {
    pub file: usize,
    pub block: u64,
    pub problem: Problem,
}

impl BadBlock {
    /// One line: `dbio-data-002.dbf block 17: torn: ...`.
    pub fn line(&self, file_name: &str) -> String {
        format!("{file_name} block {}: {}", self.block, self.problem)
    }
}

/// A run's verification state, shared by all its threads.
pub struct Verifier {
    pub dataset: u64,
    pub block_size: u64,
    pub blocks_per_file: u64,
    pub table: SeqTable,
    checked: AtomicU64,
    written: AtomicU64,
    bad: AtomicU64,
    kept: Mutex<Vec<BadBlock>>,
}

/// What a run's verification counted.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub checked: u64,
    pub written: u64,
    pub bad: u64,
    pub kept: Vec<BadBlock>,
}

impl Verifier {
    pub fn new(dataset: u64, block_size: u64, blocks_per_file: u64, table: SeqTable) -> Verifier {
        Verifier {
            dataset,
            block_size,
            blocks_per_file,
            table,
            checked: AtomicU64::new(0),
            written: AtomicU64::new(0),
            bad: AtomicU64::new(0),
            kept: Mutex::new(Vec::new()),
        }
    }

    /// The state of one session (or DBWR): scratch and counters of its own, merged when it
    /// is dropped. `capacity` is the most requests it has in flight.
    pub fn session(&self, capacity: usize) -> SessionVerify<'_> {
        SessionVerify {
            v: self,
            before: vec![0; capacity.max(1)],
            checked: 0,
            written: 0,
            bad: 0,
            kept: Vec::new(),
        }
    }

    pub fn tally(&self) -> Tally {
        Tally {
            checked: self.checked.load(Relaxed),
            written: self.written.load(Relaxed),
            bad: self.bad.load(Relaxed),
            kept: self.kept.lock().map(|k| k.clone()).unwrap_or_default(),
        }
    }

    /// Data set block number of `offset` in `file`.
    #[inline]
    fn block_at(&self, file: usize, offset: u64) -> (u64, u64) {
        let in_file = offset / self.block_size;
        (file as u64 * self.blocks_per_file + in_file, in_file)
    }
}

/// One session's verification: the entries its reads in flight started from, and its
/// counters (merged into the [`Verifier`] when dropped, so the hot path shares nothing but
/// the sequence table).
pub struct SessionVerify<'a> {
    pub v: &'a Verifier,
    /// Per request tag: the block's sequence entry when the read was issued.
    pub before: Vec<u32>,
    checked: u64,
    written: u64,
    bad: u64,
    kept: Vec<BadBlock>,
}

impl SessionVerify<'_> {
    /// Claims the blocks of a write of `buf` to `file` at `offset` and seals each with its
    /// header. False (nothing claimed) when one of them is being written by another request:
    /// the caller writes something else.
    #[inline]
    pub fn seal(&mut self, buf: &mut [u8], file: usize, offset: u64) -> bool {
        let bs = self.v.block_size as usize;
        let n = buf.len() / bs;
        for i in 0..n {
            let (global, in_file) = self.v.block_at(file, offset + (i * bs) as u64);
            let Some((_, seq)) = self.v.table.claim(global) else {
                // Give back what this request claimed so far.
                for j in 0..i {
                    let (g, _) = self.v.block_at(file, offset + (j * bs) as u64);
                    self.v.table.unclaim(g);
                }
                return false;
            };
            header::seal(
                &mut buf[i * bs..(i + 1) * bs],
                Header {
                    dataset: self.v.dataset,
                    file: file as u32,
                    block: in_file,
                    seq,
                },
            );
        }
        self.written += n as u64;
        true
    }

    /// A write of `len` bytes to `file` at `offset`, sealed by [`seal`](Self::seal),
    /// completed (`ok`) or failed.
    #[inline]
    pub fn written(&mut self, file: usize, offset: u64, len: u64, ok: bool) {
        let bs = self.v.block_size;
        for i in 0..len / bs {
            let (global, _) = self.v.block_at(file, offset + i * bs);
            self.v.table.written(global, ok);
        }
    }

    /// The sequence entry of the block at `offset` in `file` now.
    #[inline]
    pub fn entry(&self, file: usize, offset: u64) -> u32 {
        self.v.table.load(self.v.block_at(file, offset).0)
    }

    /// Remembers the sequence entries of a read about to be issued with tag `tag` (when
    /// blocks may be written while it is out).
    #[inline]
    pub fn before_read(&mut self, tag: usize, file: usize, offset: u64) {
        let (global, _) = self.v.block_at(file, offset);
        self.before[tag] = self.v.table.load(global);
    }

    /// Checks the blocks of `buf` just read from `file` at `offset`. `before`: the entry of
    /// the (single) block when the read was issued; None when no write can have raced the
    /// read. Returns the first bad block.
    #[inline]
    pub fn check(
        &mut self,
        buf: &[u8],
        file: usize,
        offset: u64,
        before: Option<u32>,
    ) -> Option<BadBlock> {
        let bs = self.v.block_size as usize;
        let mut first = None;
        for (i, block) in buf.chunks_exact(bs).enumerate() {
            let (global, in_file) = self.v.block_at(file, offset + (i * bs) as u64);
            let after = self.v.table.load(global);
            let r = header::read(block)
                .and_then(|h| {
                    header::expect(&h, self.v.dataset, file as u32, in_file)?;
                    Ok(h)
                })
                .and_then(|h| seq::check(h.seq, before.unwrap_or(after), after));
            self.checked += 1;
            if let Err(problem) = r {
                let bad = BadBlock {
                    file,
                    block: in_file,
                    problem,
                };
                self.note_bad(bad);
                first = first.or(Some(bad));
            }
        }
        first
    }

    #[cold]
    fn note_bad(&mut self, bad: BadBlock) {
        self.bad += 1;
        if self.kept.len() < KEEP_BAD {
            self.kept.push(bad);
        }
    }
}

impl Drop for SessionVerify<'_> {
    fn drop(&mut self) {
        self.v.checked.fetch_add(self.checked, Relaxed);
        self.v.written.fetch_add(self.written, Relaxed);
        self.v.bad.fetch_add(self.bad, Relaxed);
        if let Ok(mut k) = self.v.kept.lock() {
            let room = KEEP_BAD.saturating_sub(k.len());
            k.extend(self.kept.drain(..).take(room));
        }
    }
}

/// Parses the manifest's data set id (16 hex digits) as the number headers carry.
pub fn dataset_number(id: &str) -> u64 {
    u64::from_str_radix(id, 16).unwrap_or_else(|_| {
        // Not hex (a manifest from elsewhere): any stable number will do.
        twox_hash::XxHash3_64::oneshot(id.as_bytes())
    })
}

/// The verification state of a run on the data set in `dir` (number `dataset`): the last
/// write sequence of every block from `dbio-verify.seq` (`recorded` in the manifest). A run
/// that writes marks that file `running` first, so a run that never ends is not mistaken
/// for a complete record. `recreate` is the command that makes the data set again, for the
/// error when the table does not match it.
#[allow(clippy::too_many_arguments)]
pub fn start(
    dir: &crate::safety::fs::Dir,
    recorded: Option<&crate::sys::FileId>,
    dataset: u64,
    block_size: u64,
    blocks_per_file: u64,
    files: usize,
    writes: bool,
    recreate: &str,
) -> crate::error::Result<Verifier> {
    let path = dir.join(seq::SEQ_NAME);
    let blocks = blocks_per_file * files as u64;
    let mismatch = || {
        crate::error::Error::usage(format!(
            "{} does not match the data set; recreate it with `{recreate}`",
            path.shown()
        ))
    };
    let recorded = recorded.ok_or_else(mismatch)?;
    let stored = seq::read(dir, Some(recorded))
        .map_err(|e| crate::error::Error::io("cannot read", &path, &e))?
        .filter(|s| {
            s.dataset == dataset && s.entries.len() as u64 == blocks && s.state == seq::State::Clean
        })
        .ok_or_else(mismatch)?;
    if writes {
        seq::mark_running(dir, recorded)
            .map_err(|e| crate::error::Error::io("cannot update", &path, &e))?;
    }
    Ok(Verifier::new(
        dataset,
        block_size,
        blocks_per_file,
        SeqTable::from_entries(stored.entries),
    ))
}

impl Verifier {
    /// Writes the sequences as they stand (the end of a run that wrote) to `dir`, whole;
    /// returns the table's manifest entry.
    pub fn save(&self, dir: &crate::safety::fs::Dir) -> std::io::Result<(crate::sys::FileId, u64)> {
        seq::write(dir, self.dataset, &self.table)
    }
}

/// What `--verify` found in a run (result.json `verify`). A bad block is also a failed
/// request of its event (`events[].errors`).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct VerifyResult {
    /// Blocks read and checked (header, checksum, place, last write sequence).
    pub blocks_checked: u64,
    /// Blocks written with a new header and sequence.
    pub blocks_written: u64,
    pub blocks_bad: u64,
    /// The first bad blocks (at most 100), one line each naming file and block.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bad_blocks: Vec<String>,
    /// Whether the last write sequence of every block was saved for `dbio verify`
    /// (dbio-verify.seq) — false when the run did not write, or saving failed.
    pub sequences_saved: bool,
}

/// The end of a run: what was found, with bad blocks named by their file in `file_names`;
/// `sequences_saved` says whether the write sequences were saved.
pub fn finish(v: &Verifier, sequences_saved: bool, file_names: &[String]) -> VerifyResult {
    let t = v.tally();
    VerifyResult {
        blocks_checked: t.checked,
        blocks_written: t.written,
        blocks_bad: t.bad,
        // A bad block read again and again is listed once.
        bad_blocks: t.kept.iter().fold(Vec::new(), |mut lines, b| {
            let line = b.line(file_names.get(b.file).map_or("?", String::as_str));
            if !lines.contains(&line) {
                lines.push(line);
            }
            lines
        }),
        sequences_saved,
    }
}
