//! `dbio clean`: removing only what the manifest lists, each file only while it is still
//! the one dbio created.

use std::path::{Path, PathBuf};

use super::TargetKind;
use super::lock::{LOCK_NAME, Lock, lock_dir};
use super::manifest::{self, Manifest};
use super::target::target_kind;
use crate::error::{Error, Result};
use crate::safety::fs::Dir;
use crate::safety::lock::Mode;
use crate::units::Shown;

/// What `dbio clean` did, and what it could not do.
#[derive(Debug, Default)]
pub struct CleanReport {
    pub files: usize,
    pub bytes: u64,
    pub removed_dir: bool,
    /// What was cleaned was a directory a killed first preparation left (no data set in it).
    pub unfinished: bool,
    /// Files dbio created that are still there, and why (permission, I/O error).
    pub remaining: Vec<(PathBuf, String)>,
    /// Names listed whose file is no longer dbio's, and manifest entries that were never
    /// dbio's (tampered): left alone.
    pub left_alone: Vec<(PathBuf, String)>,
    /// What was wrong in a changed manifest that leaves nothing behind (a field, an entry
    /// that is a path), one clause each as [`Rejected`] says it.
    pub ignored: Vec<String>,
}

/// The lock file's identity, and whether dbio created the directory, when `dir` has no
/// manifest but a lock file a preparation made (it says so): what a first preparation
/// killed before writing its manifest leaves (its data files were still unnamed, and went
/// with it).
fn unfinished_lock(dir: &Dir, lock: &Lock) -> Result<Option<(crate::sys::FileId, bool)>> {
    let Some(created_dir) = lock.marker() else {
        return Ok(None);
    };
    let entry = dir
        .entry(LOCK_NAME)
        .map_err(|e| Error::io("cannot look at", &dir.join(LOCK_NAME), &e))?;
    let me = crate::safety::fs::effective_uid();
    Ok(entry
        .filter(|e| e.kind == crate::safety::fs::Kind::File && e.nlink == 1 && e.uid == me)
        .map(|e| (e.id, created_dir)))
}

/// `dbio clean` of a directory without a manifest: the lock file a killed first
/// preparation left (and the directory, if dbio created it and it is empty), or nothing and
/// a usage error. Makes no lock file of its own.
fn clean_unfinished(path: &Path, dir: Dir) -> Result<CleanReport> {
    let lock = Lock::existing(&dir)?;
    lock.take(Mode::Exclusive)?;
    let Some((id, created_dir)) = unfinished_lock(&dir, &lock)? else {
        return Err(Error::usage(format!(
            "{} holds no dbio data set (no {}); nothing removed",
            path.shown(),
            manifest::MANIFEST_NAME
        )));
    };
    // Held exclusively by us: no preparation is running. The lock file is dbio's, and the
    // directory too if the lock file says so (removed only if empty).
    dir.remove_file(LOCK_NAME, &id)
        .map_err(|e| Error::io("cannot remove", &dir.join(LOCK_NAME), &e))?;
    drop(lock);
    drop(dir);
    Ok(CleanReport {
        files: 1,
        removed_dir: created_dir && std::fs::remove_dir(path).is_ok(),
        unfinished: true,
        ..CleanReport::default()
    })
}

/// Whether `path` is a directory a first preparation left unfinished (killed before its
/// manifest was written: its lock file is left) and no preparation holds it now.
/// Changes nothing (`dbio doctor`).
pub fn is_unfinished(path: &Path) -> bool {
    first_preparation(path) == Some(false)
}

/// For a directory without a manifest whose lock file a preparation made: whether that
/// first preparation is running now (`Some(true)`) or was killed (`Some(false)`, see
/// [`is_unfinished`]). None otherwise. Changes nothing.
pub fn first_preparation(path: &Path) -> Option<bool> {
    let dir = Dir::open(path).ok()?;
    if !matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None)) {
        return None;
    }
    let lock = Lock::existing(&dir).ok()?;
    matches!(unfinished_lock(&dir, &lock), Ok(Some(_))).then(|| lock.busy())
}

/// Whether `path` is a directory that holds nothing of a dbio data set: no manifest, and
/// no lock file a preparation made. Changes nothing (`dbio clean` of a registered data set
/// whose manifest is gone).
pub fn holds_no_data_set(path: &Path) -> bool {
    let Ok(dir) = Dir::open(path) else {
        return false;
    };
    matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None)) && first_preparation(path).is_none()
}

/// Removes the data set in `path`: the files its manifest lists (each only if still the
/// file dbio created), then the manifest, then the directory if dbio created it and it is
/// now empty. Nothing else. The manifest stays while any file dbio created remains, so
/// that a `dbio clean` by someone allowed to can finish the job.
pub fn clean(path: &Path) -> Result<CleanReport> {
    match target_kind(path) {
        Ok(None) => {
            return Err(Error::usage(format!(
                "nothing to clean: {} does not exist",
                path.shown()
            )));
        }
        Ok(Some(TargetKind::Directory)) => {}
        Err(e @ Error::Io(_)) => return Err(e),
        Ok(Some(_)) | Err(_) => {
            return Err(Error::usage(format!(
                "{} is not a data set directory; dbio clean only removes data sets dbio created",
                path.shown()
            )));
        }
    }
    let dir = Dir::open(path).map_err(|e| Error::io("cannot open", path, &e))?;
    if matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None)) {
        return clean_unfinished(path, dir);
    }
    let lock = lock_dir(&dir, Mode::Exclusive, false)?;
    let manifest_entry = dir
        .entry(manifest::MANIFEST_NAME)
        .map_err(|e| Error::io("cannot look at", &dir.join(manifest::MANIFEST_NAME), &e))?;
    let Some((m, rejected)) = Manifest::read(&dir)? else {
        drop(lock);
        return clean_unfinished(path, dir);
    };
    let mut r = CleanReport::default();
    for x in rejected {
        // A wrong field names no file; an entry that is a path or not one of dbio's names
        // is never looked up. Only a file at such a name in the directory is left there.
        let in_dir = !x.is_field()
            && !x.name.contains('/')
            && !matches!(x.name.as_str(), "" | "." | "..")
            && matches!(dir.entry(&x.name), Ok(Some(_)));
        if in_dir {
            r.left_alone
                .push((dir.join(&x.name), format!("its manifest entry {}", x.why)));
        } else {
            r.ignored.push(x.to_string());
        }
    }
    for f in m.all_files() {
        let p = dir.join(&f.name);
        match dir.entry(&f.name) {
            Ok(None) => {}
            Ok(Some(e)) if !e.is_ours(&f.id()) => {
                let why = e.why_not_ours(&f.id()).unwrap_or("it is not dbio's");
                r.left_alone.push((p, why.into()));
            }
            Ok(Some(e)) => match dir.remove_file(&f.name, &f.id()) {
                Ok(_) => {
                    r.files += 1;
                    r.bytes += e.size;
                }
                Err(err) => r.remaining.push((p, crate::error::io_advice(&err))),
            },
            Err(err) => r.remaining.push((p, crate::error::io_advice(&err))),
        }
    }
    if r.remaining.is_empty()
        && let Some(me) = manifest_entry
        && let Err(err) = dir.remove_file(manifest::MANIFEST_NAME, &me.id)
    {
        r.remaining.push((
            dir.join(manifest::MANIFEST_NAME),
            crate::error::io_advice(&err),
        ));
    }
    // The lock file goes with the manifest (a file of dbio's user, empty or saying that
    // dbio created the directory, held by us now).
    if r.remaining.is_empty()
        && let Ok(Some(e)) = dir.entry(LOCK_NAME)
        && (e.size == 0 || lock.marker().is_some())
    {
        let _ = dir.remove_file(LOCK_NAME, &e.id);
    }
    drop(lock);
    drop(dir);
    r.removed_dir = r.remaining.is_empty() && m.created_dir && std::fs::remove_dir(path).is_ok();
    Ok(r)
}
