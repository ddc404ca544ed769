//! The last write sequence of every block: in memory during a run ([`SeqTable`], one atomic
//! u32 per block), and on disk between runs (`dbio-verify.seq` in the data set directory).
//!
//! An entry is `sequence << 2 | UNCERTAIN | IN_FLIGHT`:
//! - IN_FLIGHT: a write of the block is out. A writer claims the block (compare-and-swap,
//!   which also keeps two writes of one block from being in flight together — a database
//!   never does that either) and bumps its sequence; a read meanwhile may see either.
//! - UNCERTAIN: a write of the block failed or never completed, so what the block holds is
//!   unknown; its sequence is not checked until it is written again.
//!
//! The file: a 32-byte head (magic, data set id, block count, state) and one entry per
//! block, little-endian. A run that writes marks it `running` before its first write and
//! writes the whole table, `clean`, when it ends. A table left `running` (a killed run) only
//! gives lower bounds: a block may be newer than it says, never older.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;

use crate::safety::fs::Dir;
use crate::sys::FileId;
use std::sync::atomic::{AtomicU32, Ordering::AcqRel, Ordering::Acquire, Ordering::Release};

use super::header::Problem;

/// The sequence file in the data set directory.
pub const SEQ_NAME: &str = "dbio-verify.seq";
const MAGIC: &[u8; 8] = b"DBIOSEQ1";
const HEAD: usize = 32;
const STATE_AT: u64 = 24;

pub const IN_FLIGHT: u32 = 1;
pub const UNCERTAIN: u32 = 2;
const SHIFT: u32 = 2;
/// Sequences count modulo 2^30 (a billion writes of one block before they wrap).
const MASK: u32 = (1 << 30) - 1;

/// The sequence in an entry.
#[inline]
pub fn seq_of(entry: u32) -> u64 {
    u64::from(entry >> SHIFT)
}

/// Whether a block reading `found` is what the table allows: `before` is the block's entry
/// when the read was issued, `after` when it completed. A write in flight or completed in
/// between may or may not be in what was read.
#[inline]
pub fn check(found: u64, before: u32, after: u32) -> Result<(), Problem> {
    if (before | after) & UNCERTAIN != 0 {
        return Ok(());
    }
    let lo = (before >> SHIFT).wrapping_sub(before & IN_FLIGHT) & MASK;
    let hi = after >> SHIFT;
    let span = hi.wrapping_sub(lo) & MASK;
    let f = (found as u32) & MASK;
    if found <= u64::from(MASK) && f.wrapping_sub(lo) & MASK <= span {
        return Ok(());
    }
    // Older than the oldest acceptable write (half the sequence space back) is stale.
    if lo.wrapping_sub(f) & MASK < (1 << 29) {
        Err(Problem::Stale {
            found,
            expected: u64::from(lo),
        })
    } else {
        Err(Problem::Newer {
            found,
            expected: u64::from(hi),
        })
    }
}

/// The last write sequence of every block of the data set, shared by all threads of a run.
pub struct SeqTable {
    entries: Box<[AtomicU32]>,
}

impl SeqTable {
    /// A table of `entries` (all zero for a newly filled data set).
    pub fn from_entries(entries: Vec<u32>) -> SeqTable {
        SeqTable {
            entries: entries.into_iter().map(AtomicU32::new).collect(),
        }
    }

    pub fn len(&self) -> u64 {
        self.entries.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[inline]
    pub fn load(&self, block: u64) -> u32 {
        self.entries[block as usize].load(Acquire)
    }

    /// Claims `block` for a write: returns (the entry before, the sequence the write
    /// carries), or None when another write of the block is in flight.
    #[inline]
    pub fn claim(&self, block: u64) -> Option<(u32, u64)> {
        let e = &self.entries[block as usize];
        let mut old = e.load(Acquire);
        loop {
            if old & IN_FLIGHT != 0 {
                return None;
            }
            let seq = ((old >> SHIFT) + 1) & MASK;
            match e.compare_exchange_weak(
                old,
                seq << SHIFT | (old & UNCERTAIN) | IN_FLIGHT,
                AcqRel,
                Acquire,
            ) {
                Ok(_) => return Some((old, u64::from(seq))),
                Err(now) => old = now,
            }
        }
    }

    /// Gives back a claim whose write was never issued: the entry as it was before.
    #[inline]
    pub fn unclaim(&self, block: u64) {
        let e = &self.entries[block as usize];
        let v = e.load(Acquire);
        if v & IN_FLIGHT != 0 {
            let prev = ((v >> SHIFT).wrapping_sub(1) & MASK) << SHIFT;
            e.store(prev | (v & UNCERTAIN), Release);
        }
    }

    /// The claimed write of `block` completed (`ok`), or failed: its contents are unknown.
    #[inline]
    pub fn written(&self, block: u64, ok: bool) {
        let e = &self.entries[block as usize];
        let v = e.load(Acquire);
        if v & IN_FLIGHT == 0 {
            return; // not claimed (cannot happen) — leave it
        }
        let new = if ok {
            v & !(IN_FLIGHT | UNCERTAIN)
        } else {
            (v & !IN_FLIGHT) | UNCERTAIN
        };
        // Only the claimant changes an entry in flight.
        e.store(new, Release);
    }

    /// The entries as they are to be kept: a write still in flight (never completed) makes
    /// its block uncertain.
    fn snapshot(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().map(|e| {
            let v = e.load(Acquire);
            if v & IN_FLIGHT != 0 {
                (v & !IN_FLIGHT) | UNCERTAIN
            } else {
                v
            }
        })
    }
}

/// Whether the table on disk is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Written when the last run ended: exact.
    Clean,
    /// A run was writing and did not end (killed): lower bounds only.
    Running,
}

/// The table as read from `dbio-verify.seq`.
pub struct Stored {
    pub dataset: u64,
    pub state: State,
    pub entries: Vec<u32>,
}

/// Opens `dir/dbio-verify.seq` for reading (never through a symlink), checking it is the
/// file the manifest recorded (`recorded`) when there is a record. `Ok(None)` when there
/// is none.
fn open(dir: &Dir, recorded: Option<&FileId>) -> std::io::Result<Option<File>> {
    let f = match dir.open_file(SEQ_NAME, libc::O_RDONLY, None) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if let Some(r) = recorded {
        let now = crate::safety::fs::entry_of(&f)?;
        if !now.is_ours(r) {
            return Err(std::io::Error::other(format!(
                "{SEQ_NAME} is not the file dbio wrote (it was replaced)"
            )));
        }
    }
    Ok(Some(f))
}

/// Reads `dir/dbio-verify.seq`; `Ok(None)` when there is none.
pub fn read(dir: &Dir, recorded: Option<&FileId>) -> std::io::Result<Option<Stored>> {
    let Some(mut f) = open(dir, recorded)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    let bad = || std::io::Error::other(format!("{SEQ_NAME} is damaged"));
    if bytes.len() < HEAD || &bytes[..8] != MAGIC {
        return Err(bad());
    }
    let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
    let (dataset, blocks) = (word(8), word(16));
    let state = match u32::from_le_bytes(bytes[24..28].try_into().expect("4 bytes")) {
        1 => State::Clean,
        2 => State::Running,
        _ => return Err(bad()),
    };
    if (bytes.len() - HEAD) as u64 != blocks.saturating_mul(4) {
        return Err(bad());
    }
    let entries = bytes[HEAD..]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    Ok(Some(Stored {
        dataset,
        state,
        entries,
    }))
}

/// Reads only the head of `dir/dbio-verify.seq`: (data set, blocks, state), checking that
/// the file is as long as it says.
fn read_head(dir: &Dir, recorded: Option<&FileId>) -> std::io::Result<Option<(u64, u64, State)>> {
    let Some(f) = open(dir, recorded)? else {
        return Ok(None);
    };
    let mut head = [0u8; HEAD];
    let bad = || std::io::Error::other(format!("{SEQ_NAME} is damaged"));
    f.read_exact_at(&mut head, 0).map_err(|_| bad())?;
    let word = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"));
    let state = match u32::from_le_bytes(head[24..28].try_into().expect("4 bytes")) {
        1 => State::Clean,
        2 => State::Running,
        _ => return Err(bad()),
    };
    if &head[..8] != MAGIC
        || f.metadata()?.len() != (HEAD as u64).saturating_add(word(16).saturating_mul(4))
    {
        return Err(bad());
    }
    Ok(Some((word(8), word(16), state)))
}

/// Writes the table (clean) to `dir/dbio-verify.seq`, whole (see [`crate::safety::fs`]).
/// Returns its identity and size, for the manifest.
fn write_entries(
    dir: &Dir,
    dataset: u64,
    blocks: u64,
    entries: impl Iterator<Item = u32>,
) -> std::io::Result<(FileId, u64)> {
    let mut id = None;
    dir.replace_with(SEQ_NAME, |f| {
        let mut w = BufWriter::with_capacity(1 << 20, &*f);
        let mut head = [0u8; HEAD];
        head[..8].copy_from_slice(MAGIC);
        head[8..16].copy_from_slice(&dataset.to_le_bytes());
        head[16..24].copy_from_slice(&blocks.to_le_bytes());
        head[24..28].copy_from_slice(&1u32.to_le_bytes());
        w.write_all(&head)?;
        for e in entries {
            w.write_all(&e.to_le_bytes())?;
        }
        w.flush()?;
        drop(w);
        id = Some(crate::safety::fs::entry_of(&*f)?.id);
        Ok(())
    })?;
    let id = id.expect("written");
    Ok((id, HEAD as u64 + blocks * 4))
}

/// Writes the table of a newly filled data set: every block at sequence 0.
pub fn write_new(dir: &Dir, dataset: u64, blocks: u64) -> std::io::Result<(FileId, u64)> {
    write_entries(dir, dataset, blocks, (0..blocks).map(|_| 0))
}

/// Writes `table` as it stands at the end of a run.
pub fn write(dir: &Dir, dataset: u64, table: &SeqTable) -> std::io::Result<(FileId, u64)> {
    write_entries(dir, dataset, table.len(), table.snapshot())
}

/// Marks the table on disk `running` before a run's first write: if the run never ends
/// cleanly, the table is known to be behind. Written in place, into the file the
/// manifest recorded only.
pub fn mark_running(dir: &Dir, recorded: &FileId) -> std::io::Result<()> {
    let f = dir.open_file(SEQ_NAME, libc::O_WRONLY, Some(recorded))?;
    f.write_all_at(&2u32.to_le_bytes(), STATE_AT)?;
    f.sync_data()
}

/// Why the table in `dir` cannot serve a run on data set `dataset` of `blocks` blocks, or
/// None when it can.
pub fn unusable(dir: &Dir, recorded: Option<&FileId>, dataset: u64, blocks: u64) -> Option<String> {
    if recorded.is_none() {
        return Some(format!("its {SEQ_NAME} is not recorded in its manifest"));
    }
    match read_head(dir, recorded) {
        Ok(Some((d, b, state))) if d == dataset && b == blocks => {
            (state == State::Running).then(|| {
                format!("its {SEQ_NAME} is from a run that did not end (killed?), so the last write of each block is not known")
            })
        }
        Ok(Some(_)) => Some(format!("its {SEQ_NAME} belongs to another data set")),
        Ok(None) => Some(format!("its {SEQ_NAME} is missing")),
        Err(e) => Some(format!("its {SEQ_NAME} cannot be read ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_bump_the_sequence_and_exclude_each_other() {
        let t = SeqTable::from_entries(vec![0; 4]);
        let (old, seq) = t.claim(1).unwrap();
        assert_eq!((old, seq), (0, 1));
        assert!(t.claim(1).is_none(), "one write of a block in flight");
        assert_eq!(
            check(0, t.load(1), t.load(1)),
            Ok(()),
            "old data while in flight"
        );
        assert_eq!(
            check(1, t.load(1), t.load(1)),
            Ok(()),
            "new data while in flight"
        );
        t.written(1, true);
        assert_eq!(seq_of(t.load(1)), 1);
        assert_eq!(check(1, t.load(1), t.load(1)), Ok(()));
        assert_eq!(
            check(0, t.load(1), t.load(1)),
            Err(Problem::Stale {
                found: 0,
                expected: 1
            })
        );
        assert_eq!(
            check(2, t.load(1), t.load(1)).unwrap_err().kind(),
            "newer than recorded"
        );
        t.claim(2).unwrap();
        t.unclaim(2);
        assert_eq!(t.load(2), 0);
    }

    #[test]
    fn a_read_racing_a_write_may_see_either() {
        let t = SeqTable::from_entries(vec![0; 1]);
        let before = t.load(0);
        t.claim(0).unwrap();
        t.written(0, true);
        t.claim(0).unwrap();
        t.written(0, true);
        let after = t.load(0);
        for found in 0..=2 {
            assert_eq!(check(found, before, after), Ok(()), "{found}");
        }
        assert!(check(3, before, after).is_err());
    }

    #[test]
    fn a_failed_write_leaves_the_block_unchecked_until_written_again() {
        let t = SeqTable::from_entries(vec![0; 1]);
        t.claim(0).unwrap();
        t.written(0, false);
        assert_eq!(check(7, t.load(0), t.load(0)), Ok(()));
        t.claim(0).unwrap();
        t.written(0, true);
        assert_eq!(seq_of(t.load(0)), 2);
        assert!(check(7, t.load(0), t.load(0)).is_err());
    }

    #[test]
    fn the_table_survives_a_round_trip_and_marks_unfinished_writes_uncertain() {
        let t = tempfile::tempdir().unwrap();
        let dir = Dir::open(t.path()).unwrap();
        let (e, _) = write_new(&dir, 42, 3).unwrap();
        assert_eq!(unusable(&dir, Some(&e), 42, 3), None);
        assert!(unusable(&dir, Some(&e), 43, 3).unwrap().contains("another"));
        assert!(
            unusable(&dir, None, 42, 3)
                .unwrap()
                .contains("not recorded")
        );
        let table = SeqTable::from_entries(read(&dir, Some(&e)).unwrap().unwrap().entries);
        table.claim(0).unwrap();
        table.written(0, true);
        table.claim(2).unwrap(); // never completes
        mark_running(&dir, &e).unwrap();
        assert!(
            unusable(&dir, Some(&e), 42, 3)
                .unwrap()
                .contains("did not end")
        );
        let (e2, _) = write(&dir, 42, &table).unwrap();
        assert!(
            read(&dir, Some(&e)).is_err(),
            "the old record no longer matches"
        );
        let s = read(&dir, Some(&e2)).unwrap().unwrap();
        assert_eq!(s.state, State::Clean);
        assert_eq!(seq_of(s.entries[0]), 1);
        assert_eq!(s.entries[2] & (IN_FLIGHT | UNCERTAIN), UNCERTAIN);
        // A table put in place behind dbio's back is never written into.
        std::fs::remove_file(t.path().join(SEQ_NAME)).unwrap();
        std::fs::write(t.path().join(SEQ_NAME), b"foreign").unwrap();
        assert!(mark_running(&dir, &e2).is_err());
        assert_eq!(std::fs::read(t.path().join(SEQ_NAME)).unwrap(), b"foreign");
    }
}
