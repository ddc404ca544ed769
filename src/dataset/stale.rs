//! The health of a data set, as `dbio doctor` reports it, and `dbio clean --stale`.
//!
//! Whether a run is using a data set is told by trying its lock, never by a PID written
//! into a file: a killed run's lock went away with it. What a killed run can leave is
//! named temporary files (only on file systems without `O_TMPFILE`) and an unfinished
//! preparation; a changed manifest or a listed file that is no longer dbio's is reported
//! and left alone.

use std::path::{Path, PathBuf};

use super::manifest::{Manifest, Rejected, State};
use super::remove_group;
use crate::error::{Error, Result};
use crate::safety::fs::Dir;
use crate::safety::lock::{Holder, Mode};

/// The state of one data set directory.
#[derive(Debug, Clone)]
pub struct Health {
    pub dir: PathBuf,
    pub state: State,
    pub data_files: usize,
    pub redo_files: usize,
    /// Bytes on disk of the listed files that are dbio's (data, redo, temp, verify).
    pub bytes: u64,
    /// A run that writes holds the data set now (its lock is held exclusively).
    pub busy: bool,
    /// The processes holding its lock now.
    pub holders: Vec<Holder>,
    /// Named temporary files listed in the manifest while no run holds the data set.
    pub stray_temp_files: Vec<PathBuf>,
    /// Listed files that are missing.
    pub missing: usize,
    /// Listed files that are there and dbio's.
    pub present: usize,
    /// Manifest entries that are not dbio's (a changed manifest): never acted on.
    pub rejected: Vec<Rejected>,
    /// Listed names where a file that is not dbio's is now, and why: left alone.
    pub foreign: Vec<(PathBuf, &'static str)>,
}

impl Health {
    /// Whether a killed run left something `dbio clean --stale` removes.
    pub fn is_stale(&self) -> bool {
        !self.stray_temp_files.is_empty() || self.unfinished_files()
    }

    /// Whether it holds files of a preparation that was killed (named, where the file
    /// system has no `O_TMPFILE`) and no run holds it now.
    pub fn unfinished_files(&self) -> bool {
        self.state == State::Preparing && !self.busy && self.holders.is_empty() && self.present > 0
    }

    /// Whether something needs the user: stale files, or a manifest or files that are not
    /// what dbio wrote.
    pub fn needs_attention(&self) -> bool {
        self.is_stale() || !self.rejected.is_empty() || !self.foreign.is_empty()
    }
}

/// The health of the data set in `path`; None when it holds no manifest. Takes the lock
/// shared for a moment to tell whether a run that writes holds it; changes nothing.
pub fn inspect(path: &Path) -> Result<Option<Health>> {
    let dir = Dir::open(path).map_err(|e| Error::io("cannot open", path, &e))?;
    let Some((m, rejected)) = Manifest::read(&dir)? else {
        return Ok(None);
    };
    let lock = super::Lock::existing(&dir)?;
    let busy = lock.busy();
    let holders = lock.holders();
    let (mut bytes, mut missing, mut present, mut foreign) = (0, 0, 0, Vec::new());
    for f in m.all_files() {
        match dir.entry(&f.name) {
            Ok(Some(e)) if e.is_ours(&f.id()) => {
                bytes += e.size;
                present += 1;
            }
            Ok(Some(e)) => {
                // The file dbio created, of another user: on disk all the same.
                if f.id().same_file(&e.id) {
                    bytes += e.size;
                }
                let why = e.why_not_ours(&f.id()).unwrap_or("it is not dbio's");
                foreign.push((dir.join(&f.name), why));
            }
            _ => missing += 1,
        }
    }
    let stray_temp_files = if busy {
        Vec::new()
    } else {
        m.temp_files
            .iter()
            .filter(|f| matches!(dir.entry(&f.name), Ok(Some(e)) if e.is_ours(&f.id())))
            .map(|f| dir.join(&f.name))
            .collect()
    };
    Ok(Some(Health {
        dir: path.to_path_buf(),
        state: m.state,
        data_files: m.files.len(),
        redo_files: m.redo_files.len(),
        bytes,
        busy,
        holders,
        stray_temp_files,
        missing,
        present,
        rejected,
        foreign,
    }))
}

/// What [`clear_stale`] did.
#[derive(Debug, Default)]
pub struct Repair {
    /// Temporary files (and files of a killed preparation) removed.
    pub removed: Vec<PathBuf>,
}

/// Removes the temporary files a killed run left in `path` (only those the manifest lists
/// that are still the files dbio created). Takes the data set's lock exclusively, so a
/// data set in use is refused rather than touched.
pub fn clear_stale(path: &Path) -> Result<Repair> {
    let dir = Dir::open(path).map_err(|e| Error::io("cannot open", path, &e))?;
    let lock = super::Lock::open(&dir, false)?;
    lock.take(Mode::Exclusive)?;
    let Some(mut m) = super::read_manifest(&dir)? else {
        return Ok(Repair::default());
    };
    let mut repair = Repair::default();
    if m.state == State::Preparing {
        // A killed preparation: its files were never usable; the next run rebuilds them.
        let ours =
            |f: &&super::FileEntry| matches!(dir.entry(&f.name), Ok(Some(e)) if e.is_ours(&f.id()));
        repair.removed = m
            .all_files()
            .filter(ours)
            .map(|f| dir.join(&f.name))
            .collect();
        let listed: Vec<super::FileEntry> = m.all_files().cloned().collect();
        remove_group(&dir, &listed)?;
        m.files.clear();
        m.redo_files.clear();
        m.temp_files.clear();
        m.verify_seq = None;
        (m.size_bytes, m.block_size, m.redo_file_size, m.verify) = (0, 0, 0, false);
        m.write(&dir)?;
        return Ok(repair);
    }
    if !m.temp_files.is_empty() {
        repair.removed = m
            .temp_files
            .iter()
            .filter(|f| matches!(dir.entry(&f.name), Ok(Some(e)) if e.is_ours(&f.id())))
            .map(|f| dir.join(&f.name))
            .collect();
        remove_group(&dir, &m.temp_files)?;
        m.temp_files.clear();
        m.write(&dir)?;
    }
    Ok(repair)
}
