//! The data set directory's lock: its `dbio-lock` file, who holds it, and the data set
//! held shared for `dbio verify`.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::manifest::{self, Manifest, State};
use super::target::target_kind;
use super::{TargetKind, prepare_command, read_manifest};
use crate::error::{Error, Result};
use crate::safety::fs::Dir;
use crate::safety::lock::{self, Mode};
use crate::units::Shown;

/// The lock file of a data set directory.
pub const LOCK_NAME: &str = "dbio-lock";

/// What a lock file made by a preparation holds, from the moment it is made: a preparation
/// killed before its manifest exists leaves the lock file and nothing else, and `dbio
/// clean` (and `dbio doctor`) know it for dbio's — and whether the directory is too.
const LOCK_CREATED_DIR: &[u8] = b"dbio created this directory for a data set\n";
const LOCK_MADE: &[u8] = b"dbio lock file of a data set\n";

/// What a data set is locked by: its `dbio-lock` file, made with mode 0600 so that no other
/// user can open it to block dbio; or, where that file is missing and cannot be made (a
/// read-only mount), the directory itself.
#[derive(Debug)]
pub struct Lock {
    file: File,
    dir: PathBuf,
    /// This process made the lock file (removed again if no data set comes of it).
    made: Option<crate::sys::FileId>,
}

impl Lock {
    /// Opens the lock of `dir`, making its lock file if it is missing (anyone who may write
    /// the directory makes it; a read-only mount falls back to the directory).
    /// A lock file made now says it is dbio's, and whether dbio created the directory
    /// (`created_dir`), from the moment it exists.
    pub(crate) fn open(dir: &Dir, created_dir: bool) -> Result<Lock> {
        Lock::open_or(dir, Some(created_dir))
    }

    /// Opens the lock of `dir` without making anything (`dbio doctor`).
    pub(crate) fn existing(dir: &Dir) -> Result<Lock> {
        Lock::open_or(dir, None)
    }

    fn open_or(dir: &Dir, make: Option<bool>) -> Result<Lock> {
        let at = dir.join(LOCK_NAME);
        let open = || dir.open_file(LOCK_NAME, libc::O_RDONLY, None);
        let whole_dir = || -> Result<File> {
            Ok(File::from(
                dir.dup()
                    .map_err(|e| Error::io("cannot open", dir.path(), &e))?,
            ))
        };
        let mut made = None;
        let file = match open() {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && make.is_none() => whole_dir()?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match dir.create_file_mode(LOCK_NAME, 0, 0o600) {
                    Ok(f) => {
                        use std::io::Write;
                        made = crate::safety::fs::entry_of(&f).ok().map(|e| e.id);
                        let marker = if make == Some(true) {
                            LOCK_CREATED_DIR
                        } else {
                            LOCK_MADE
                        };
                        // A lock file that cannot say so is still a lock (the directory
                        // is then not known to be dbio's).
                        let _ = (&f).write_all(marker);
                        f
                    }
                    // Someone made it meanwhile.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        open().map_err(|e| Error::io("cannot open", &at, &e))?
                    }
                    // Cannot be made here (read-only, full): nobody can write here either.
                    Err(_) => whole_dir()?,
                }
            }
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
                return Err(Error::usage(format!(
                    "the data set in {} belongs to another user (its lock file {LOCK_NAME} is theirs); run dbio as that user, or choose another --target",
                    dir.path().shown()
                )));
            }
            Err(e) => return Err(Error::io("cannot open", &at, &e)),
        };
        Ok(Lock {
            file,
            dir: dir.path().to_path_buf(),
            made,
        })
    }

    /// What the lock file says: that dbio made it (`Some(false)`), and created the
    /// directory too (`Some(true)`); None for a lock file that says neither.
    pub(super) fn marker(&self) -> Option<bool> {
        let mut buf = [0u8; 64];
        let n = std::os::unix::fs::FileExt::read_at(&self.file, &mut buf, 0).unwrap_or(0);
        match &buf[..n] {
            m if m == LOCK_CREATED_DIR => Some(true),
            m if m == LOCK_MADE => Some(false),
            _ => None,
        }
    }

    /// Whether the lock file says dbio created the directory.
    pub(super) fn says_created_dir(&self) -> bool {
        self.marker() == Some(true)
    }

    /// Removes the lock file this process made, when no data set came of it (a failed
    /// first preparation), so that nothing is left behind.
    pub(super) fn unmake(&self, dir: &Dir) {
        if let Some(id) = self.made
            && matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None))
        {
            let _ = dir.remove_file(LOCK_NAME, &id);
        }
    }

    /// Takes (or converts) the lock in `mode`, or says who holds it.
    pub(crate) fn take(&self, mode: Mode) -> Result<()> {
        match lock::try_lock(&self.file, mode) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.in_use()),
            Err(e) => Err(Error::io("cannot lock", &self.dir, &e)),
        }
    }

    /// Whether a run that writes holds it (tried shared, released at once). Changes nothing.
    pub(crate) fn busy(&self) -> bool {
        let taken = lock::try_lock(&self.file, Mode::Shared).unwrap_or(false);
        if taken {
            // SAFETY: flock on a valid descriptor.
            unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&self.file), libc::LOCK_UN) };
        }
        !taken
    }

    /// The processes holding it now.
    pub(crate) fn holders(&self) -> Vec<lock::Holder> {
        crate::safety::fs::entry_of(&self.file)
            .map(|e| lock::holders(&e.id))
            .unwrap_or_default()
    }

    /// The error for a data set another process holds, naming it.
    fn in_use(&self) -> Error {
        in_use_by(&self.dir, &self.holders())
    }
}

/// Locks the data set in `dir` in `mode`, or says who holds it.
pub(super) fn lock_dir(dir: &Dir, mode: Mode, created_dir: bool) -> Result<Lock> {
    let l = Lock::open(dir, created_dir)?;
    l.take(mode)?;
    Ok(l)
}

/// The error for a data set held by `holders`.
fn in_use_by(dir: &Path, holders: &[lock::Holder]) -> Error {
    let who = match holders {
        [] => "another process".to_string(),
        [h] => format!("{h}"),
        hs => hs
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    Error::usage(format!(
        "the data set in {} is in use by {who}; wait for it to finish or use another --target",
        dir.shown()
    ))
}
/// The data set in `dir`, held shared (so no run writes it meanwhile) with its manifest,
/// for `dbio verify`. Nothing is written.
pub fn lock_existing(path: &Path) -> Result<(Manifest, Dir, Lock)> {
    if target_kind(path)? != Some(TargetKind::Directory) {
        return Err(Error::usage(format!(
            "{} is not a data set directory",
            path.shown()
        )));
    }
    let dir = Dir::open(path).map_err(|e| Error::io("cannot open", path, &e))?;
    // No manifest, no data set: say so before making a lock file in someone's directory.
    let no_data_set = || {
        Error::usage(format!(
            "{} holds no dbio data set (no {})",
            path.shown(),
            manifest::MANIFEST_NAME
        ))
    };
    if matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None)) {
        return Err(no_data_set());
    }
    let lock = lock_dir(&dir, Mode::Shared, false)?;
    let m = read_manifest(&dir)?.ok_or_else(|| {
        Error::usage(format!(
            "{} holds no dbio data set (no {})",
            path.shown(),
            manifest::MANIFEST_NAME
        ))
    })?;
    if m.state != State::Ready || m.files.is_empty() {
        return Err(Error::usage(format!(
            "the data set in {} has no complete data files; run `{}`",
            path.shown(),
            prepare_command(path, m.size_bytes, m.block_size, m.files.len(), true)
        )));
    }
    Ok((m, dir, lock))
}
