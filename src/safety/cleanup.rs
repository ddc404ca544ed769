//! Files that must not outlive the process, even when a second Ctrl-C ends it at once: the
//! named files of a run or a preparation on a file system without `O_TMPFILE` (elsewhere
//! such files have no name until they are complete, and vanish by themselves).
//!
//! Whoever creates such files registers them here with their identity and forgets them
//! once they are removed (or complete); the signal thread in `app.rs` removes whatever is
//! registered — each only if it is still that file — before it exits. Registering is rare
//! (once per file per run), so a mutex is fine.
//!
//! What must outlive even a SIGKILL in a record — a throwaway server's data and socket
//! directories, a schema on a user's server, a disk's I/O scheduler a sweep changed — is
//! noted as a [`Leftover`] *before* it is made or changed, in the book the front end keeps
//! (the results store: [`keep_leftovers_in`]), and forgotten once it is undone. `dbio
//! doctor` lists each whose process is gone with the command that undoes it; `dbio clean
//! --stale` undoes it, after checking it is still what dbio made.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::sys::FileId;

static PATHS: Mutex<Vec<(PathBuf, FileId)>> = Mutex::new(Vec::new());

fn paths() -> std::sync::MutexGuard<'static, Vec<(PathBuf, FileId)>> {
    PATHS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remember the file at `path` with identity `id` for removal on an abrupt exit.
pub fn register(path: PathBuf, id: FileId) {
    paths().push((path, id));
}

/// The file at `path` was removed or is complete: no longer remove it on exit.
pub fn forget(path: &Path) {
    paths().retain(|(p, _)| p != path);
}

/// The files registered now.
pub fn registered() -> Vec<PathBuf> {
    paths().iter().map(|(p, _)| p.clone()).collect()
}

/// Removes every registered file that is still the file registered (a regular file with
/// one link and the same identity; anything else at the name is left alone) and forgets
/// them all. Returns how many were removed.
pub fn remove_registered() -> usize {
    let mut p = paths();
    let n = p
        .iter()
        .filter(|(path, id)| {
            let Ok(md) = std::fs::symlink_metadata(path) else {
                return false;
            };
            use std::os::unix::fs::MetadataExt;
            md.file_type().is_file()
                && md.nlink() == 1
                && crate::sys::file_id(path).is_ok_and(|(now, _)| id.same_file(&now))
                && std::fs::remove_file(path).is_ok()
        })
        .count();
    p.clear();
    n
}

/// Something a command makes or changes outside its results directory that a kill would
/// leave behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leftover {
    /// What it is: [`PG_DATA_DIR`], [`PG_SOCKET_DIR`], [`PG_SCHEMA`], [`MYSQL_DATA_DIR`],
    /// [`MYSQL_SOCKET_DIR`], [`MYSQL_DATABASE`], [`SCHEDULER`].
    pub kind: &'static str,
    /// Which: a path, `schema at user@host:port/db`, a disk.
    pub what: String,
    /// The command that removes or restores it by hand (no secret in it).
    pub undo: String,
    /// What undoing it needs to prove it is still dbio's (JSON of the kind's own record).
    pub detail: String,
}

impl Leftover {
    /// A directory a command makes (`kind`), removed by hand with `rm -rf`: owned by `uid`
    /// once handed over; `id`: its device and inode once made (None before).
    pub fn directory(
        kind: &'static str,
        path: &Path,
        uid: u32,
        id: Option<(u64, u64)>,
    ) -> Leftover {
        let text = path.display().to_string();
        Leftover {
            kind,
            what: text.clone(),
            undo: format!("rm -rf {}", crate::units::shell_word(&text)),
            detail: serde_json::json!({
                "path": text,
                "uid": uid,
                "dev": id.map(|i| i.0),
                "ino": id.map(|i| i.1),
            })
            .to_string(),
        }
    }
}

/// A directory's leftover record ([`Leftover::directory`]), read back.
#[derive(Debug, serde::Deserialize)]
pub struct DirectoryDetail {
    pub path: PathBuf,
    /// Who owns it once handed over.
    pub uid: u32,
    pub dev: Option<u64>,
    pub ino: Option<u64>,
}

impl DirectoryDetail {
    pub fn parse(detail: &str) -> Result<DirectoryDetail, String> {
        serde_json::from_str(detail).map_err(|e| format!("its record is unreadable ({e})"))
    }
}

/// A throwaway server's directory (data directory and log).
pub const PG_DATA_DIR: &str = "pg-data-dir";
/// A throwaway server's socket directory.
pub const PG_SOCKET_DIR: &str = "pg-socket-dir";
/// A run's schema on a user's server.
pub const PG_SCHEMA: &str = "pg-schema";
/// A throwaway MariaDB server's directory (data directory, logs, tmpdir).
pub const MYSQL_DATA_DIR: &str = "mysql-data-dir";
/// A throwaway MariaDB server's socket directory.
pub const MYSQL_SOCKET_DIR: &str = "mysql-socket-dir";
/// A run's database on a user's MariaDB/MySQL server.
pub const MYSQL_DATABASE: &str = "mysql-database";
/// A disk's I/O scheduler, changed by a sweep.
pub const SCHEDULER: &str = "scheduler";

/// Where leftovers are noted: the results store, kept by the front end. Each call must not
/// fail the command (a store that cannot be written costs the record, not the run).
pub trait LeftoverBook: Send + Sync {
    /// Notes `l` as this process's; its id in the book.
    fn note(&self, l: &Leftover) -> Option<i64>;
    /// `l` changed (a new identity, a new value set).
    fn update(&self, id: i64, l: &Leftover);
    /// Undone: no longer a leftover.
    fn forget(&self, id: i64);
    /// Every record of `kind` and `what` is undone (by `dbio pg clean`, say).
    fn forget_what(&self, kind: &str, what: &str);
}

static BOOK: std::sync::OnceLock<Box<dyn LeftoverBook>> = std::sync::OnceLock::new();

/// Sets where leftovers are noted (once per process; later calls are ignored).
pub fn keep_leftovers_in(book: Box<dyn LeftoverBook>) {
    let _ = BOOK.set(book);
}

/// A leftover noted in the book, until [`Recorded::undone`] says it is gone. Dropped
/// without that, the record stays: something is left, and `dbio doctor` names it.
#[derive(Debug)]
pub struct Recorded {
    id: Option<i64>,
}

impl Recorded {
    /// Notes `l` — call it before making or changing what it names.
    pub fn note(l: &Leftover) -> Recorded {
        Recorded {
            id: BOOK.get().and_then(|b| b.note(l)),
        }
    }

    /// The record now says `l`.
    pub fn update(&self, l: &Leftover) {
        if let (Some(b), Some(id)) = (BOOK.get(), self.id) {
            b.update(id, l);
        }
    }

    /// It is undone (removed, restored) or was never made: the record goes.
    pub fn undone(self) {
        if let (Some(b), Some(id)) = (BOOK.get(), self.id) {
            b.forget(id);
        }
    }
}

/// The record `id` (of a process that is gone) is undone, by `dbio clean --stale`.
pub fn undone_record(id: i64) {
    if let Some(b) = BOOK.get() {
        b.forget(id);
    }
}

/// Every record of `kind` and `what` is undone.
pub fn undone_elsewhere(kind: &str, what: &str) {
    if let Some(b) = BOOK.get() {
        b.forget_what(kind, what);
    }
}

static MOUNTS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn mounts() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    MOUNTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remember the private mount point `path` (a file system sweep's) for detaching on an
/// abrupt exit.
pub fn register_mount(path: PathBuf) {
    mounts().push(path);
}

/// The mount point `path` is unmounted: no longer detach it on exit.
pub fn forget_mount(path: &Path) {
    mounts().retain(|p| p != path);
}

/// Detaches whatever is mounted on the registered mount points (the file system, then the
/// private mount point beneath it: lazily, as the process is about to end and close what
/// it holds there) and removes the directories. Returns how many mount points were freed.
pub fn detach_registered_mounts() -> usize {
    let mut m = mounts();
    let n = m
        .iter()
        .filter(|path| {
            let Ok(c) = super::fs::cstr(path) else {
                return false;
            };
            // MNT_DETACH on a path with nothing mounted fails harmlessly.
            while crate::sys::umount(&c, libc::MNT_DETACH).is_ok() {}
            std::fs::remove_dir(path).is_ok()
        })
        .count();
    m.clear();
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_files_are_removed_only_if_still_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a.tmp"),
            dir.path().join("b.tmp"),
            dir.path().join("c.tmp"),
        );
        for p in [&a, &b, &c] {
            std::fs::write(p, b"x").unwrap();
        }
        let id = |p: &Path| crate::sys::file_id(p).unwrap().0;
        register(a.clone(), id(&a));
        register(b.clone(), id(&b));
        register(c.clone(), id(&c));
        forget(&b);
        // c is replaced by another file after it was registered: left alone.
        std::fs::write(dir.path().join("other"), b"foreign").unwrap();
        std::fs::rename(dir.path().join("other"), &c).unwrap();
        assert!(registered().contains(&a) && !registered().contains(&b));
        assert!(remove_registered() >= 1);
        assert!(!a.exists() && b.exists());
        assert_eq!(std::fs::read(&c).unwrap(), b"foreign");
        assert!(!registered().contains(&a));
    }
}
