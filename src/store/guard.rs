//! What dbio agrees to open as its results store, decided before SQLite opens anything.
//!
//! The store is a file dbio writes, so it gets the rules of every file dbio writes: the
//! database and the files SQLite keeps beside it (`-wal`, `-shm`, `-journal`) are opened
//! only when each is (if it is there at all) a regular file with one link, owned by the
//! user dbio runs as — never a symbolic link (dangling or not), a FIFO, a device, a hard
//! link or another user's file. Directories dbio creates for the store are made one at a
//! time, private to the user, and checked.
//!
//! A database that is there is looked at read-only first: it is dbio's when it carries
//! dbio's application id, or (written by an older dbio) dbio's tables. Anything else —
//! someone's own SQLite file given as `--db` — is refused before any statement that could
//! write (a journal mode switch writes the header), and is left byte for byte as it was.
//! A new store is built whole under a temporary name and moved into place without
//! replacing anything, so a store at its name is always recognisably dbio's.

use crate::units::Shown;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

use super::schema::{self, APPLICATION_ID, Migration};
use crate::error::{Error, Result};
use crate::safety::fs::effective_uid;

/// The files SQLite keeps beside a database, by the suffix of their names.
pub(super) const SIDECARS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// `path` with `suffix` added to its file name (`dbio.db-wal`).
pub(super) fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Whether anything is at `path` (a symbolic link counts, dangling or not).
pub(super) fn present(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Refuses the store at `path` when it or a file beside it that SQLite would open is not a
/// plain file of the user's. A directory at the store's own name is left to the open to
/// report (it cannot be read; nothing is at risk).
pub(super) fn check_files(path: &Path) -> Result<()> {
    check_dir(path)?;
    let names = std::iter::once(path.to_path_buf()).chain(SIDECARS.map(|s| sidecar(path, s)));
    for (i, p) in names.enumerate() {
        let Ok(md) = std::fs::symlink_metadata(&p) else {
            // Nothing there, or its directory cannot be looked at: SQLite's open says why.
            continue;
        };
        let t = md.file_type();
        let why = if t.is_symlink() {
            "it is a symbolic link".to_string()
        } else if t.is_dir() {
            if i == 0 {
                continue;
            }
            "it is a directory".to_string()
        } else if !t.is_file() {
            "it is not a regular file (a FIFO, socket or device)".to_string()
        } else if md.nlink() != 1 {
            format!("it is a hard link (one file with {} names)", md.nlink())
        } else if md.uid() != effective_uid() {
            format!(
                "it belongs to another user (uid {}, dbio runs as uid {})",
                md.uid(),
                effective_uid()
            )
        } else {
            continue;
        };
        return Err(refusal(&p, &why));
    }
    Ok(())
}

/// Refuses the store at `path` when its directory (if it is there yet) could be written by
/// another user: group- or world-writable (a sticky `/tmp` too), or owned by someone other
/// than the user or root — the rule ssh's StrictModes applies to `~/.ssh`. Whoever can
/// write there can put a hard link or a symbolic link at the name of the store's -wal or
/// -shm in the moment between dbio's look and SQLite's open, and SQLite would write through
/// it into a file of the user's; no check by name closes that moment, a private directory
/// does. A process of the same user could do the same, but it can write the user's files
/// anyway: that is not a boundary dbio guards.
pub(super) fn check_dir(path: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Followed: what matters is the directory the files end up in. A missing one is made
    // private by `store_dir` and checked again after that.
    let Ok(md) = std::fs::metadata(dir) else {
        return Ok(());
    };
    if !md.is_dir() {
        return Ok(());
    }
    let mode = md.mode() & 0o7777;
    let why = if mode & 0o022 != 0 {
        format!(
            "{} (mode {mode:04o})",
            match (mode & 0o020 != 0, mode & 0o002 != 0) {
                (true, true) => "it can be written by its group and by everyone",
                (true, false) => "it can be written by its group",
                _ => "it can be written by everyone",
            }
        )
    } else if md.uid() != effective_uid() && md.uid() != 0 {
        format!(
            "it belongs to another user (uid {}, dbio runs as uid {})",
            md.uid(),
            effective_uid()
        )
    } else {
        return Ok(());
    };
    Err(Error::usage(format!(
        "results store {}: its directory {}: {why}; another user could put a link there where SQLite opens the store's -wal or -shm: keep the store in a directory only you can write to (the default is $XDG_DATA_HOME/dbio/dbio.db, else ~/.local/share/dbio/dbio.db), or give one with --db PATH or DBIO_DB",
        path.shown(),
        dir.shown()
    )))
}

fn refusal(p: &Path, why: &str) -> Error {
    Error::usage(format!(
        "results store {}: {why}; dbio opens its store and the -wal, -shm and -journal files beside it only as plain files of its own user, never through a link: remove it, or use another store with --db PATH or DBIO_DB",
        p.shown()
    ))
}

/// What is at the store's name.
pub(super) enum Found {
    Missing,
    /// A store dbio made (any schema version; the migration decides the rest).
    Dbio,
    /// Something dbio must not write: the refusal, a usage error.
    Foreign(Error),
    /// Something that cannot be read as a database: the error that says so.
    Unreadable(Error),
}

/// The first bytes of every SQLite database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Looks at what is at `path` without writing anything: its header, and where that does
/// not tell, its tables through a read-only connection that creates no file.
pub(super) fn classify(path: &Path) -> Found {
    let md = match std::fs::symlink_metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::Missing,
        Err(e) => return Found::Unreadable(unreadable(path, &e.to_string())),
    };
    if md.is_dir() {
        return Found::Unreadable(unreadable(path, "it is a directory, not a database file"));
    }
    if !md.is_file() {
        return Found::Foreign(refusal(path, "it is not a regular file"));
    }
    let header = match read_header(path) {
        Ok(h) => h,
        Err(e) => return Found::Unreadable(unreadable(path, &crate::error::io_advice(&e))),
    };
    if header.is_empty() {
        return Found::Foreign(Error::usage(format!(
            "results store {}: it is an empty file that dbio did not create; dbio writes only into a store it made: remove it, or use another store with --db PATH or DBIO_DB",
            path.shown()
        )));
    }
    if header.len() < 100 || &header[..16] != MAGIC {
        return Found::Unreadable(super::damaged(path, "file is not a database".to_string()));
    }
    let app_id = i32::from_be_bytes([header[68], header[69], header[70], header[71]]);
    if app_id == APPLICATION_ID {
        return Found::Dbio;
    }
    match read_only_inspect(path) {
        Ok(true) => Found::Dbio,
        Ok(false) => Found::Foreign(Error::usage(format!(
            "results store {}: it is an SQLite database that dbio did not create (not the schema of a dbio store, application id {app_id:#x}); dbio does not write into it and left it as it was: use another store with --db PATH or DBIO_DB",
            path.shown()
        ))),
        Err(e) => Found::Unreadable(super::sqlite_error(path, e)),
    }
}

fn unreadable(path: &Path, why: &str) -> Error {
    Error::other(format!(
        "results store {} cannot be read: {why}",
        path.shown()
    ))
}

/// Up to the first 100 bytes of the file at `path`, opened without following a link and
/// without waiting on a FIFO.
fn read_header(path: &Path) -> std::io::Result<Vec<u8>> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    let mut header = Vec::with_capacity(100);
    f.take(100).read_to_end(&mut header)?;
    Ok(header)
}

/// Whether the database at `path` holds dbio's schema, read without creating, changing or
/// locking any file: `immutable`, so that SQLite takes no lock and neither reads nor makes
/// nor writes a -wal, -shm or -journal — even when another program left its -wal and -shm
/// beside the database, they stay byte for byte as they were. What is only in such a WAL
/// is not seen: a store of dbio's carries its application id in the database file itself
/// from the moment it is put in place, so only a foreign file can look different.
fn read_only_inspect(path: &Path) -> rusqlite::Result<bool> {
    let uri = format!("file:{}?mode=ro&immutable=1", uri_path(path));
    let conn = Connection::open_with_flags(
        uri,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    schema::is_dbio_schema(&conn)
}

/// `path` for an SQLite URI: everything but plain characters percent-encoded.
fn uri_path(path: &Path) -> String {
    let mut s = String::new();
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The store's directory, made if missing: each missing directory is created on its own,
/// private to the user (0700), and must then be a directory of the user's, not a link
/// someone put there. Returns it resolved (no symbolic link left in it), for SQLite to
/// open the store with no link followed.
pub(super) fn store_dir(path: &Path) -> Result<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut missing = Vec::new();
    let mut at = dir.clone();
    while std::fs::symlink_metadata(&at).is_err() {
        missing.push(at.clone());
        match at.parent() {
            Some(p) if !p.as_os_str().is_empty() => at = p.to_path_buf(),
            _ => break,
        }
    }
    let cannot = |d: &Path, why: String| {
        Error::other(format!(
            "results store {}: cannot create its directory {}: {why}",
            path.shown(),
            d.shown()
        ))
    };
    for d in missing.iter().rev() {
        match std::fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => {}
            // Another dbio made it at the same moment: checked below like ours.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(cannot(d, crate::error::io_advice(&e))),
        }
        let md = std::fs::symlink_metadata(d).map_err(|e| cannot(d, e.to_string()))?;
        if !md.is_dir() || md.uid() != effective_uid() {
            return Err(refusal(
                d,
                "dbio created this directory for the store, and now something else is there",
            ));
        }
    }
    std::fs::canonicalize(&dir).map_err(|e| {
        Error::other(format!(
            "results store {}: its directory {}: {}",
            path.shown(),
            dir.shown(),
            crate::error::io_advice(&e)
        ))
    })
}

/// Builds a new store with `steps` under a temporary name in `dir` and moves it to `name`
/// without replacing anything. Ok(false) when another process put a store there first
/// (then that one is used).
pub(super) fn create(dir: &Path, name: &str, steps: &[Migration]) -> Result<bool> {
    let tmp = dir.join(format!(
        ".{name}.{}-{:08x}.tmp",
        std::process::id(),
        fastrand::u32(..)
    ));
    let built = build(&tmp, steps);
    let placed = built.and_then(|()| {
        rename_noreplace(&tmp, &dir.join(name)).map_err(|e| {
            Error::other(format!(
                "results store {}: cannot put the new store in place: {}",
                dir.join(name).shown(),
                crate::error::io_advice(&e)
            ))
        })
    });
    // By name: `dir` is the store's, writable by this user alone (checked before), and the
    // temporary name is this process's own, so nothing but what `build` made can be there.
    for p in std::iter::once(tmp.clone()).chain(SIDECARS.map(|s| sidecar(&tmp, s))) {
        let _ = std::fs::remove_file(p);
    }
    placed
}

fn build(tmp: &Path, steps: &[Migration]) -> Result<()> {
    let fail = |e: String| {
        Error::other(format!(
            "results store: cannot build a new one at {}: {e}",
            tmp.shown()
        ))
    };
    // Made exclusively here (nothing may be at the name), then filled by SQLite.
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(tmp)
        .map_err(|e| fail(crate::error::io_advice(&e)))?;
    let mut conn = Connection::open_with_flags(
        tmp,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NOFOLLOW
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| fail(e.to_string()))?;
    // No journal and no syncs while it is private: a build that fails is thrown away. It
    // is synced once, whole, before it is put in place.
    conn.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
        .map_err(|e| fail(e.to_string()))?;
    schema::migrate(&mut conn, steps).map_err(|e| fail(e.to_string()))?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(|e| fail(e.to_string()))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(fail(format!("cannot switch it to WAL mode (got {mode})")));
    }
    conn.close().map_err(|(_, e)| fail(e.to_string()))?;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(tmp)
        .and_then(|f| f.sync_all())
        .map_err(|e| fail(crate::error::io_advice(&e)))
}

/// Renames `from` to `to` only if nothing is at `to`: Ok(false) when something is.
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<bool> {
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
    };
    let (f, t) = (c(from)?, c(to)?);
    let e = match crate::sys::renameat2(
        libc::AT_FDCWD,
        &f,
        libc::AT_FDCWD,
        &t,
        libc::RENAME_NOREPLACE,
    ) {
        Ok(()) => return Ok(true),
        Err(e) => e,
    };
    match e.raw_os_error() {
        Some(libc::EEXIST) => Ok(false),
        // A file system (or kernel) without RENAME_NOREPLACE: link, which never replaces.
        Some(libc::EINVAL) | Some(libc::ENOSYS) => match std::fs::hard_link(from, to) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        },
        _ => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_escape_what_a_uri_would_read() {
        assert_eq!(
            uri_path(Path::new("/a b/x?y#z%.db")),
            "/a%20b/x%3Fy%23z%25.db"
        );
        assert_eq!(
            uri_path(Path::new("/tmp/dbio-1/dbio.db")),
            "/tmp/dbio-1/dbio.db"
        );
    }

    #[test]
    fn a_missing_directory_is_made_private() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("a/b/dbio.db");
        let dir = store_dir(&p).unwrap();
        assert_eq!(dir, std::fs::canonicalize(t.path().join("a/b")).unwrap());
        for d in ["a", "a/b"] {
            let mode = std::fs::metadata(t.path().join(d)).unwrap().mode() & 0o777;
            assert_eq!(mode & 0o077, 0, "{d}: {mode:o}");
        }
    }

    #[test]
    fn a_new_store_is_put_in_place_whole_and_never_over_anything() {
        let t = tempfile::tempdir().unwrap();
        assert!(create(t.path(), "dbio.db", schema::MIGRATIONS).unwrap());
        assert!(matches!(classify(&t.path().join("dbio.db")), Found::Dbio));
        std::fs::write(t.path().join("taken.db"), b"mine").unwrap();
        assert!(!create(t.path(), "taken.db", schema::MIGRATIONS).unwrap());
        assert_eq!(std::fs::read(t.path().join("taken.db")).unwrap(), b"mine");
        let left: Vec<_> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".tmp") || n.contains(".tmp-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
