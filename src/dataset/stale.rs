//! What a killed run leaves in a data set: the manifest's in-use mark naming a process that
//! no longer runs, and temporary files still listed (SPEC §7.5). `dbio doctor` reports them;
//! `dbio clean --stale` repairs them — only what the manifest lists, never data files.

use std::path::{Path, PathBuf};

use super::manifest::{InUse, Manifest, State};
use super::{lock_dir, remove_group};
use crate::error::Result;

/// The state of one data set directory.
#[derive(Debug, Clone)]
pub struct Health {
    pub dir: PathBuf,
    pub state: State,
    pub data_files: usize,
    pub redo_files: usize,
    /// Bytes of the listed files that exist now.
    pub bytes: u64,
    pub in_use: Option<InUse>,
    /// The in-use mark names a process that is no longer a running dbio.
    pub stale_in_use: bool,
    /// Temporary files listed in the manifest that exist while no run holds the data set.
    pub stray_temp_files: Vec<PathBuf>,
}

impl Health {
    /// Whether a killed run left something to repair.
    pub fn is_stale(&self) -> bool {
        self.stale_in_use || !self.stray_temp_files.is_empty()
    }
}

/// Whether `pid` is a running (not zombie) process named dbio.
pub fn is_running_dbio(pid: u32) -> bool {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the parenthesised command name: "1234 (dbio) S ...".
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("");
    comm.trim() == "dbio" && !matches!(state, "Z" | "X" | "")
}

/// The health of the data set in `dir`; None when `dir` holds no manifest.
pub fn inspect(dir: &Path) -> Result<Option<Health>> {
    let Some(m) = Manifest::read(dir)? else {
        return Ok(None);
    };
    let stale_in_use = m.in_use.as_ref().is_some_and(|u| !is_running_dbio(u.pid));
    let held = m.in_use.is_some() && !stale_in_use;
    let bytes = m
        .all_files()
        .filter_map(|f| std::fs::symlink_metadata(dir.join(&f.name)).ok())
        .filter(|md| md.is_file())
        .map(|md| md.len())
        .sum();
    let stray_temp_files = if held {
        Vec::new()
    } else {
        m.temp_files
            .iter()
            .map(|f| dir.join(&f.name))
            .filter(|p| p.is_file())
            .collect()
    };
    Ok(Some(Health {
        dir: dir.to_path_buf(),
        state: m.state,
        data_files: m.files.len(),
        redo_files: m.redo_files.len(),
        bytes,
        in_use: m.in_use,
        stale_in_use,
        stray_temp_files,
    }))
}

/// What [`clear_stale`] did.
#[derive(Debug, Default)]
pub struct Repair {
    /// The pid whose in-use mark was cleared.
    pub cleared_pid: Option<u32>,
    /// Temporary files removed.
    pub removed: Vec<PathBuf>,
}

/// Clears what a killed run left in `dir`: the in-use mark and the temporary files the
/// manifest lists (only those still the files dbio created). Takes the data set's lock, so a
/// data set in use by a running dbio is refused rather than touched.
pub fn clear_stale(dir: &Path) -> Result<Repair> {
    let _lock = lock_dir(dir)?;
    let Some(mut m) = Manifest::read(dir)? else {
        return Ok(Repair::default());
    };
    // With the lock held, no run is using the data set: any in-use mark is stale.
    let mut repair = Repair {
        cleared_pid: m.in_use.take().map(|u| u.pid),
        ..Default::default()
    };
    if !m.temp_files.is_empty() {
        repair.removed = m
            .temp_files
            .iter()
            .map(|f| dir.join(&f.name))
            .filter(|p| p.is_file())
            .collect();
        remove_group(dir, &m.temp_files)?;
        m.temp_files.clear();
    }
    if repair.cleared_pid.is_some() || !repair.removed.is_empty() {
        m.write(dir)?;
    }
    Ok(repair)
}
