//! The one way dbio creates, replaces, opens for writing and removes files (docs/safety.md,
//! "Every file dbio writes goes through one module").
//!
//! Everything dbio writes — data files, redo logs, temp files, the manifest, the verify
//! sequence table, result.json, summaries, reports, CSV exports, job files — goes through a
//! [`Dir`]: a directory held open by its file descriptor. Names below it are single path
//! components, resolved relative to that descriptor and never through a symlink
//! (`openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or `O_NOFOLLOW` where the kernel
//! has no `openat2`).
//!
//! - New files are created exclusively: a symlink, hard link or file planted at the name
//!   makes the creation fail, it is never followed or truncated.
//! - Whole files ([`Dir::write_new`], [`Dir::replace`]) are written to an unnamed file
//!   (`O_TMPFILE`, or an exclusive temporary name), synced, and only then linked or renamed
//!   into place: a reader, a full disk or SIGKILL sees the old file or the new one, never
//!   half of one.
//! - An existing file is opened for writing ([`Dir::open_file`]), replaced or removed
//!   ([`Dir::remove_file`]) only when it is a regular file with one link, owned by the
//!   user dbio runs as, and — for files dbio recorded — has the identity (device, inode,
//!   birth time) dbio recorded when it created it.
//!
//! - A file the user names that dbio replaces or removes later (`--metrics FILE`, the files
//!   `dbio report` draws again) is claimed first ([`Dir::claim`]): the name is free, or holds
//!   a plain file of the user's with one link whose first bytes are what dbio writes there.
//!   Each later write ([`Dir::put`]) replaces only the file dbio put there last, by its
//!   identity; anything else found at the name is moved back untouched and refused.
//! - Files the user names as input are read bounded, by [`super::input`].
//!
//! The directory itself is the one the user named (or the default in the current
//! directory): its path is resolved as any program resolves a path.

use crate::units::Shown;
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};

use crate::sys::FileId;

/// A directory dbio writes into, held open by its descriptor.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// What is at a name in a [`Dir`] (not following a symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub kind: Kind,
    pub id: FileId,
    pub size: u64,
    pub nlink: u32,
    pub uid: u32,
}

/// The file type of an [`Entry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device node.
    Other,
}

impl Entry {
    /// Whether this is the file dbio created with the identity it recorded: a regular file
    /// with one link, that identity, owned by the user dbio runs as (a file moved in from
    /// elsewhere keeps its owner; it is not dbio's to write, replace or remove).
    pub fn is_ours(&self, recorded: &FileId) -> bool {
        self.why_not_ours(recorded).is_none()
    }

    /// Why this entry is not the file dbio recorded, or None when it is.
    pub fn why_not_ours(&self, recorded: &FileId) -> Option<&'static str> {
        self.not_plain().or_else(|| {
            (!recorded.same_file(&self.id))
                .then_some("it is not the file dbio created (it was replaced)")
        })
    }

    /// Why this entry is not a plain file dbio may replace, or None when it is one.
    fn not_plain(&self) -> Option<&'static str> {
        match self.kind {
            Kind::Symlink => Some("it is a symbolic link"),
            Kind::Dir => Some("it is a directory"),
            Kind::Other => Some("it is not a regular file"),
            Kind::File if self.nlink != 1 => Some("it is a hard link to another file"),
            Kind::File if self.uid != effective_uid() => {
                Some("it belongs to another user (run dbio as the user who created it)")
            }
            Kind::File => None,
        }
    }
}

/// The user dbio runs as.
pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// An error saying `name` in `dir` is not dbio's to write, and why.
fn refused(dir: &Path, name: &str, why: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{}: {why}, and dbio never writes through or over what it did not create",
            dir.join(name).shown()
        ),
    )
}

/// Checks that `name` is one plain path component and makes it a C string.
fn component(name: &str) -> io::Result<CString> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{name}' is not a plain file name"),
        ));
    }
    CString::new(name).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// `path` for a system call (EINVAL when it holds a NUL byte).
pub fn cstr(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Whether the kernel has `openat2`: 0 unknown, 1 yes, 2 no.
static OPENAT2: AtomicU8 = AtomicU8::new(0);

/// Opens `name` below `dirfd` without following any symlink: `openat2` with
/// `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, else `openat` with
/// `O_NOFOLLOW` (enough for a single component).
fn open_beneath(
    dirfd: RawFd,
    name: &CString,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let flags = flags | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    let creates = flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE;
    if OPENAT2.load(Ordering::Relaxed) != 2 {
        // SAFETY: a zeroed open_how is valid; we set every field we use.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = flags as u64;
        how.mode = if creates { u64::from(mode) } else { 0 };
        how.resolve =
            libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        // SAFETY: the pointers are valid for the call; the size is open_how's.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dirfd,
                name.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if rc >= 0 {
            OPENAT2.store(1, Ordering::Relaxed);
            // SAFETY: the kernel returned a new descriptor we now own.
            return Ok(unsafe { OwnedFd::from_raw_fd(rc as RawFd) });
        }
        let e = io::Error::last_os_error();
        // ENOSYS: no openat2 (before 5.6); EPERM can be a seccomp filter that denies it.
        if !matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) {
            return Err(e);
        }
        if e.raw_os_error() == Some(libc::ENOSYS) {
            OPENAT2.store(2, Ordering::Relaxed);
        }
    }
    // SAFETY: valid descriptor and C string; mode is only read with O_CREAT/O_TMPFILE.
    let fd = check(unsafe { libc::openat(dirfd, name.as_ptr(), flags, mode) })?;
    // SAFETY: the kernel returned a new descriptor we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn statx_entry(dirfd: RawFd, name: &CString, flags: libc::c_int) -> io::Result<Entry> {
    let mask = libc::STATX_TYPE
        | libc::STATX_INO
        | libc::STATX_SIZE
        | libc::STATX_BTIME
        | libc::STATX_NLINK
        | libc::STATX_UID;
    let stx = crate::sys::statx(dirfd, name, flags, mask)?;
    let kind = match u32::from(stx.stx_mode) & libc::S_IFMT {
        libc::S_IFREG => Kind::File,
        libc::S_IFDIR => Kind::Dir,
        libc::S_IFLNK => Kind::Symlink,
        _ => Kind::Other,
    };
    let btime_ns = (stx.stx_mask & libc::STATX_BTIME != 0)
        .then(|| stx.stx_btime.tv_sec as u64 * 1_000_000_000 + u64::from(stx.stx_btime.tv_nsec));
    Ok(Entry {
        kind,
        id: FileId {
            dev: libc::makedev(stx.stx_dev_major, stx.stx_dev_minor),
            ino: stx.stx_ino,
            btime_ns,
        },
        size: stx.stx_size,
        nlink: stx.stx_nlink,
        uid: stx.stx_uid,
    })
}

/// The [`Entry`] of an open file.
pub fn entry_of(file: &impl AsRawFd) -> io::Result<Entry> {
    statx_entry(file.as_raw_fd(), &CString::default(), libc::AT_EMPTY_PATH)
}

/// A testing aid: `DBIO_TEST_NO_TMPFILE=1` makes dbio behave as on a file system without
/// `O_TMPFILE` (NFS, some FUSE file systems), so that the named-file path is tested too.
fn no_tmpfile() -> bool {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *OFF.get_or_init(|| std::env::var_os("DBIO_TEST_NO_TMPFILE").is_some_and(|v| v == "1"))
}

/// How [`Dir::publish`] puts a finished file at its name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Publish {
    /// The name must be free.
    New,
    /// The name may hold a plain file of dbio's, which is replaced.
    Replace,
}

impl Dir {
    /// Opens the directory at `path` (the user's path, resolved as usual).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = cstr(path)?;
        // SAFETY: valid C string.
        let fd = check(unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_DIRECTORY | libc::O_RDONLY | libc::O_CLOEXEC,
            )
        })?;
        Ok(Dir {
            // SAFETY: a new descriptor we own.
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            path: path.to_path_buf(),
        })
    }

    /// Opens `path`, creating it and its missing parents first (`--out`).
    pub fn create_all(path: &Path) -> io::Result<Dir> {
        std::fs::create_dir_all(path)?;
        Dir::open(path)
    }

    /// [`Dir::create_all`], saying which directories it made, outermost first (to be
    /// removed again, innermost first, with [`remove_made`], when nothing came of them).
    pub fn create_missing(path: &Path) -> io::Result<(Dir, Vec<PathBuf>)> {
        let mut missing = Vec::new();
        let mut at = path.to_path_buf();
        while matches!(std::fs::symlink_metadata(&at), Err(e) if e.kind() == io::ErrorKind::NotFound)
        {
            missing.push(at.clone());
            match at.parent() {
                Some(p) if !p.as_os_str().is_empty() => at = p.to_path_buf(),
                _ => break,
            }
        }
        let mut made = Vec::new();
        for dir in missing.into_iter().rev() {
            match std::fs::create_dir(&dir) {
                Ok(()) => made.push(dir),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    remove_made(&made);
                    return Err(e);
                }
            }
        }
        match Dir::open(path) {
            Ok(d) => Ok((d, made)),
            Err(e) => {
                remove_made(&made);
                Err(e)
            }
        }
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `path()/name`, for messages and for readers that open by path.
    pub fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// What is at `name`, not following a symlink; None when nothing is.
    pub fn entry(&self, name: &str) -> io::Result<Option<Entry>> {
        let c = component(name)?;
        match statx_entry(self.fd.as_raw_fd(), &c, libc::AT_SYMLINK_NOFOLLOW) {
            Ok(e) => Ok(Some(e)),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The identity of this directory.
    pub fn id(&self) -> io::Result<FileId> {
        entry_of(&self.fd).map(|e| e.id)
    }

    /// Creates the directory `name` (it must not exist) and opens it.
    pub fn create_dir(&self, name: &str) -> io::Result<Dir> {
        let c = component(name)?;
        // SAFETY: valid descriptor and C string.
        check(unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o755) })?;
        self.open_dir(name)
    }

    /// Opens the directory `name` below this one (not through a symlink).
    pub fn open_dir(&self, name: &str) -> io::Result<Dir> {
        let c = component(name)?;
        let fd = open_beneath(
            self.fd.as_raw_fd(),
            &c,
            libc::O_DIRECTORY | libc::O_RDONLY,
            0,
        )?;
        Ok(Dir {
            fd,
            path: self.join(name),
        })
    }

    /// Reads at most `limit` bytes from the start of the file `name` (not through a
    /// symlink; a FIFO, device or directory is refused before it is opened, and never
    /// waited on). None when nothing is there.
    pub fn read_head(&self, name: &str, limit: usize) -> io::Result<Option<Vec<u8>>> {
        let Some(entry) = self.entry(name)? else {
            return Ok(None);
        };
        self.read_entry(name, &entry, limit).map(Some)
    }

    /// Reads at most `limit` bytes of `name`, which must still be the regular file `entry`.
    fn read_entry(&self, name: &str, entry: &Entry, limit: usize) -> io::Result<Vec<u8>> {
        match entry.kind {
            Kind::File => {}
            Kind::Symlink => return Err(refused(&self.path, name, "it is a symbolic link")),
            Kind::Dir => return Err(refused(&self.path, name, "it is a directory")),
            Kind::Other => return Err(refused(&self.path, name, "it is not a regular file")),
        }
        let c = component(name)?;
        let fd = open_beneath(
            self.fd.as_raw_fd(),
            &c,
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY,
            0,
        )
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused(&self.path, name, "it is a symbolic link"),
            _ => e,
        })?;
        let file = File::from(fd);
        let now = entry_of(&file)?;
        if now.kind != Kind::File || !now.id.same_file(&entry.id) {
            return Err(refused(
                &self.path,
                name,
                "it was replaced while dbio looked at it",
            ));
        }
        let mut buf = Vec::new();
        use std::io::Read;
        (&file).take(limit as u64).read_to_end(&mut buf)?;
        Ok(buf)
    }

    /// Checks, before anything is written, that dbio may put the file `name` here and later
    /// replace or remove it ([`Dir::put`], [`Dir::remove_file`]): nothing is at the name, or
    /// a file dbio made is — a regular file (not a symlink, FIFO, device or directory) with
    /// one link, owned by the user dbio runs as, whose first `head` bytes `is_dbios`
    /// recognises as what dbio writes there. Anything else is refused and left as it was.
    /// Returns that file's identity (None when the name is free).
    pub fn claim(
        &self,
        name: &str,
        head: usize,
        is_dbios: impl Fn(&[u8]) -> bool,
    ) -> io::Result<Option<FileId>> {
        let Some(entry) = self.entry(name)? else {
            return Ok(None);
        };
        let not_dbios = |why: &str| {
            refused(
                &self.path,
                name,
                &format!("{why} (remove it yourself or choose another name)"),
            )
        };
        if let Some(why) = entry.not_plain() {
            return Err(not_dbios(why));
        }
        let bytes = self.read_entry(name, &entry, head)?;
        if !is_dbios(&bytes) {
            return Err(not_dbios("it exists and is not a file dbio wrote"));
        }
        Ok(Some(entry.id))
    }

    /// Writes the file `name` whole (as [`Dir::replace`] does) where `expected` says what is
    /// at the name: nothing (None: the name must still be free), or the file of dbio's with
    /// that identity ([`Dir::claim`] found it, or the last `put` made it). Whatever else is
    /// at the name by then is left as it was — moved aside and back in one step each, its
    /// bytes untouched — and refused. Returns the identity of the file now at the name.
    pub fn put(&self, name: &str, bytes: &[u8], expected: Option<&FileId>) -> io::Result<FileId> {
        self.put_with(name, expected, |f| f.write_all(bytes))
    }

    /// [`Dir::put`] for a file only its owner may read (mode 0600): it holds connection
    /// details.
    pub fn put_private(
        &self,
        name: &str,
        bytes: &[u8],
        expected: Option<&FileId>,
    ) -> io::Result<FileId> {
        self.put_with(name, expected, |f| private_write(f, bytes))
    }

    fn put_with(
        &self,
        name: &str,
        expected: Option<&FileId>,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<FileId> {
        component(name)?;
        let (tmp, id) = self.stage(name, write)?;
        self.place(&tmp, name, expected)?;
        self.fsync()?;
        Ok(id)
    }

    /// Writes a whole file under a free temporary name beside `name` (unnamed until then
    /// where the file system can), synced. Returns the temporary name and the identity.
    fn stage(
        &self,
        name: &str,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<(String, FileId)> {
        match self.create_unnamed(0) {
            Ok(mut f) => {
                write(&mut f)?;
                f.sync_all()?;
                let id = entry_of(&f)?.id;
                let tmp = self.free_temp_name(name, |t| self.link(&f, t))?;
                Ok((tmp, id))
            }
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                let (tmp, mut f) = self.create_named_temp(name)?;
                let done = write(&mut f)
                    .and_then(|()| f.sync_all())
                    .and_then(|()| entry_of(&f).map(|e| e.id));
                match done {
                    Ok(id) => Ok((tmp, id)),
                    Err(e) => {
                        let _ = self.unlink(&tmp);
                        Err(e)
                    }
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Puts the staged file `tmp` at `name` where `expected` is there (see [`Dir::put`]).
    /// On an error `tmp` is gone and whatever was at `name` is there as it was.
    fn place(&self, tmp: &str, name: &str, expected: Option<&FileId>) -> io::Result<()> {
        let Some(id) = expected else {
            return match self.rename_no_replace(tmp, name) {
                Ok(()) => Ok(()),
                Err(e) => {
                    let _ = self.unlink(tmp);
                    if e.raw_os_error() == Some(libc::EEXIST) {
                        Err(refused(
                            &self.path,
                            name,
                            "something was put at the name after dbio checked it",
                        ))
                    } else {
                        Err(e)
                    }
                }
            };
        };
        let (a, b) = (component(tmp)?, component(name)?);
        let fd = self.fd.as_raw_fd();
        match crate::sys::renameat2(fd, &a, fd, &b, libc::RENAME_EXCHANGE) {
            Ok(()) => {
                // `tmp` now names what was at `name`: removed if it is dbio's file, else
                // put back at once.
                let why = match self.entry(tmp) {
                    Ok(Some(e)) => e.why_not_ours(id),
                    Ok(None) => None,
                    Err(_) => Some("it could not be checked"),
                };
                let Some(why) = why else {
                    let _ = self.unlink(tmp);
                    return Ok(());
                };
                match crate::sys::renameat2(fd, &a, fd, &b, libc::RENAME_EXCHANGE) {
                    Ok(()) => {
                        let _ = self.unlink(tmp);
                        Err(refused(&self.path, name, why))
                    }
                    Err(e) => Err(io::Error::new(
                        io::ErrorKind::PermissionDenied,
                        format!(
                            "{}: {why}; dbio moved it aside to {} and could not put it back ({e}): move it back yourself",
                            self.join(name).shown(),
                            self.join(tmp).shown()
                        ),
                    )),
                }
            }
            // The name went since: the new file takes it, if it is still free.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => self.place(tmp, name, None),
            // No RENAME_EXCHANGE here (EINVAL: this file system; ENOSYS: before 3.15):
            // checked, then renamed over.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {
                match self.entry(name) {
                    Ok(None) => self.place(tmp, name, None),
                    Ok(Some(e)) => match e.why_not_ours(id) {
                        None => self.rename_over(tmp, name),
                        Some(why) => {
                            let _ = self.unlink(tmp);
                            Err(refused(&self.path, name, why))
                        }
                    },
                    Err(e) => {
                        let _ = self.unlink(tmp);
                        Err(e)
                    }
                }
            }
            Err(e) => {
                let _ = self.unlink(tmp);
                Err(e)
            }
        }
    }

    /// Creates the file `name` exclusively (nothing may be at the name) with `flags`
    /// (`O_DIRECT`, ...) and opens it for reading and writing.
    pub fn create_file(&self, name: &str, flags: libc::c_int) -> io::Result<File> {
        self.create_file_mode(name, flags, 0o644)
    }

    /// [`Dir::create_file`] with the permission bits `mode` (before the umask).
    pub fn create_file_mode(&self, name: &str, flags: libc::c_int, mode: u32) -> io::Result<File> {
        let c = component(name)?;
        let fd = open_beneath(
            self.fd.as_raw_fd(),
            &c,
            flags | libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
            mode,
        )?;
        Ok(File::from(fd))
    }

    /// Creates an unnamed file in this directory (`O_TMPFILE`) with `flags`, open for
    /// reading and writing: it vanishes by itself when closed, even after SIGKILL, unless
    /// [`Dir::link`] gives it a name. `Unsupported` where the file system has no
    /// `O_TMPFILE` (NFS, some FUSE file systems).
    pub fn create_unnamed(&self, flags: libc::c_int) -> io::Result<File> {
        if no_tmpfile() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "O_TMPFILE turned off (DBIO_TEST_NO_TMPFILE)",
            ));
        }
        let c = CString::new(".").expect("no NUL");
        match open_beneath(
            self.fd.as_raw_fd(),
            &c,
            flags | libc::O_RDWR | libc::O_TMPFILE,
            0o644,
        ) {
            Ok(fd) => Ok(File::from(fd)),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EOPNOTSUPP) | Some(libc::EISDIR)
                ) =>
            {
                Err(io::Error::new(io::ErrorKind::Unsupported, e))
            }
            Err(e) => Err(e),
        }
    }

    /// Gives the unnamed file `file` (from [`Dir::create_unnamed`]) the name `name`, which
    /// must be free (`EEXIST` otherwise: nothing at the name is touched).
    pub fn link(&self, file: &File, name: &str) -> io::Result<()> {
        let c = component(name)?;
        let proc_path =
            CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).expect("no NUL");
        // SAFETY: valid descriptors and C strings.
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc_path.as_ptr(),
                self.fd.as_raw_fd(),
                c.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ENOENT) {
            return Err(e);
        }
        // No /proc: AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH.
        let empty = CString::default();
        // SAFETY: as above.
        check(unsafe {
            libc::linkat(
                file.as_raw_fd(),
                empty.as_ptr(),
                self.fd.as_raw_fd(),
                c.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        })
        .map(|_| ())
    }

    /// Opens the existing file `name` with `flags` (`O_RDONLY`, or `O_RDWR` and more). For
    /// writing, it must be [`Entry::is_ours`] with identity `recorded`. A symlink is never
    /// followed and a FIFO never waited on.
    pub fn open_file(
        &self,
        name: &str,
        flags: libc::c_int,
        recorded: Option<&FileId>,
    ) -> io::Result<File> {
        let c = component(name)?;
        let fd = open_beneath(self.fd.as_raw_fd(), &c, flags | libc::O_NONBLOCK, 0).map_err(
            |e| match e.raw_os_error() {
                Some(libc::ELOOP) => refused(&self.path, name, "it is a symbolic link"),
                _ => e,
            },
        )?;
        let file = File::from(fd);
        let entry = entry_of(&file)?;
        let writes = flags & libc::O_ACCMODE != libc::O_RDONLY;
        if entry.kind != Kind::File {
            return Err(refused(&self.path, name, "it is not a regular file"));
        }
        if writes {
            match recorded {
                Some(id) => {
                    if let Some(why) = entry.why_not_ours(id) {
                        return Err(refused(&self.path, name, why));
                    }
                }
                None => {
                    return Err(refused(
                        &self.path,
                        name,
                        "dbio has no record of creating it",
                    ));
                }
            }
        }
        // Back to blocking I/O (O_NONBLOCK only kept the open from waiting on a FIFO).
        // SAFETY: fcntl on a valid descriptor.
        let fl = check(unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) })?;
        check(unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl & !libc::O_NONBLOCK) })?;
        Ok(file)
    }

    /// Removes the file `name` if it is still the file dbio created (`recorded`). Returns
    /// false when nothing is there; an error (nothing removed) when something else is.
    pub fn remove_file(&self, name: &str, recorded: &FileId) -> io::Result<bool> {
        let Some(entry) = self.entry(name)? else {
            return Ok(false);
        };
        if let Some(why) = entry.why_not_ours(recorded) {
            return Err(refused(&self.path, name, why));
        }
        self.unlink(name)?;
        Ok(true)
    }

    /// Removes the empty directory `name` (a run directory dbio created and emptied).
    pub fn remove_empty_dir(&self, name: &str) -> io::Result<()> {
        let c = component(name)?;
        // SAFETY: valid descriptor and C string.
        check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), libc::AT_REMOVEDIR) })
            .map(|_| ())
    }

    fn unlink(&self, name: &str) -> io::Result<()> {
        let c = component(name)?;
        // SAFETY: valid descriptor and C string.
        check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) }).map(|_| ())
    }

    /// Writes the new file `name` whole (see the module's rules); `EEXIST` if anything is
    /// at the name already.
    pub fn write_new(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.publish(name, Publish::New, |f| f.write_all(bytes))
    }

    /// [`Dir::write_new`] for a file only its owner may read (mode 0600, set before a byte
    /// is written): it holds connection details.
    pub fn write_new_private(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.publish(name, Publish::New, |f| private_write(f, bytes))
    }

    /// [`Dir::replace`] for a file only its owner may read (mode 0600).
    pub fn replace_private(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.publish(name, Publish::Replace, |f| private_write(f, bytes))
    }

    /// Writes the file `name` whole, replacing the plain file of dbio's at the name, if
    /// any; a symlink, hard link, directory or another user's file there is refused.
    pub fn replace(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        self.publish(name, Publish::Replace, |f| f.write_all(bytes))
    }

    /// [`Dir::replace`] with the content written by `write` (large files).
    pub fn replace_with(
        &self,
        name: &str,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        self.publish(name, Publish::Replace, write)
    }

    /// Writes a whole file: unnamed (or under an exclusive temporary name), synced, then
    /// put at `name` in one step.
    fn publish(
        &self,
        name: &str,
        how: Publish,
        write: impl FnOnce(&mut File) -> io::Result<()>,
    ) -> io::Result<()> {
        component(name)?;
        let existing = self.entry(name)?;
        match (how, existing) {
            (Publish::New, Some(_)) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists already", self.join(name).shown()),
                ));
            }
            (Publish::Replace, Some(e)) => {
                if let Some(why) = e.not_plain() {
                    return Err(refused(&self.path, name, why));
                }
            }
            _ => {}
        }
        match self.create_unnamed(0) {
            Ok(mut f) => {
                write(&mut f)?;
                f.sync_all()?;
                match how {
                    Publish::New => self.link(&f, name)?,
                    Publish::Replace => {
                        let tmp = self.free_temp_name(name, |t| self.link(&f, t))?;
                        self.rename_over(&tmp, name)?;
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                let (tmp, mut f) = self.create_named_temp(name)?;
                let written = write(&mut f)
                    .and_then(|()| f.sync_all())
                    .and_then(|()| match how {
                        Publish::New => self.rename_no_replace(&tmp, name),
                        Publish::Replace => self.rename_over(&tmp, name),
                    });
                if let Err(e) = written {
                    let _ = self.unlink(&tmp);
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
        self.fsync()
    }

    /// Tries `make` at `.NAME.PID-RANDOM.tmp` names until one is free; returns it.
    /// A new file under a free temporary name for `name` (where unnamed files cannot be
    /// made): its name and the open file.
    fn create_named_temp(&self, name: &str) -> io::Result<(String, File)> {
        let mut made = None;
        let tmp = self.free_temp_name(name, |t| {
            made = Some(self.create_file(t, 0)?);
            Ok(())
        })?;
        Ok((tmp, made.expect("created")))
    }

    fn free_temp_name(
        &self,
        name: &str,
        mut make: impl FnMut(&str) -> io::Result<()>,
    ) -> io::Result<String> {
        for _ in 0..16 {
            let tmp = format!(
                ".{name}.{}-{:08x}.tmp",
                std::process::id(),
                fastrand::u32(..)
            );
            match make(&tmp) {
                Ok(()) => return Ok(tmp),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "cannot find a free temporary name beside {}",
                self.join(name).shown()
            ),
        ))
    }

    fn rename_over(&self, from: &str, to: &str) -> io::Result<()> {
        let (a, b) = (component(from)?, component(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: valid descriptors and C strings.
        let rc = check(unsafe { libc::renameat(fd, a.as_ptr(), fd, b.as_ptr()) });
        if rc.is_err() {
            let _ = self.unlink(from);
        }
        rc.map(|_| ())
    }

    fn rename_no_replace(&self, from: &str, to: &str) -> io::Result<()> {
        let (a, b) = (component(from)?, component(to)?);
        let fd = self.fd.as_raw_fd();
        let e = match crate::sys::renameat2(fd, &a, fd, &b, libc::RENAME_NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
            return Err(e);
        }
        // No RENAME_NOREPLACE on this file system (EINVAL) or no renameat2 in this kernel
        // (ENOSYS, before 3.15): a hard link fails just the same if the name is taken.
        // SAFETY: as above.
        check(unsafe { libc::linkat(fd, a.as_ptr(), fd, b.as_ptr(), 0) })?;
        self.unlink(from)
    }

    /// Proves that files can be made and written here, as a run's results will be: a
    /// probe file is created exclusively, one block written into it, and removed again.
    /// A read-only or full file system, or a directory one may not write, fails here.
    pub fn probe_writable(&self) -> io::Result<()> {
        let name = format!(".dbio-probe-{}", std::process::id());
        let mut file = self.create_file(&name, 0)?;
        let id = entry_of(&file)?.id;
        let written = file.write_all(&[0u8; 4096]).and_then(|()| file.sync_data());
        drop(file);
        let removed = self.remove_file(&name, &id);
        written?;
        removed.map(|_| ())
    }

    /// Makes the directory's entries durable (after a rename or link).
    pub fn fsync(&self) -> io::Result<()> {
        // SAFETY: fsync on a valid descriptor.
        check(unsafe { libc::fsync(self.fd.as_raw_fd()) }).map(|_| ())
    }

    /// A second descriptor of this directory (its own open file description: a lock taken
    /// on it is its own).
    pub fn dup(&self) -> io::Result<OwnedFd> {
        let c = CString::new(".").expect("no NUL");
        open_beneath(
            self.fd.as_raw_fd(),
            &c,
            libc::O_DIRECTORY | libc::O_RDONLY,
            0,
        )
    }
}

impl AsRawFd for Dir {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Removes the directories [`Dir::create_missing`] made, innermost first, each only while
/// it is empty (what anyone put there since stays, and so does the directory holding it).
pub fn remove_made(made: &[PathBuf]) {
    for dir in made.iter().rev() {
        let Ok((parent, name)) = split(dir) else {
            return;
        };
        let removed = Dir::open(&parent).and_then(|p| p.remove_empty_dir(&name));
        if removed.is_err() {
            return;
        }
    }
}

/// Writes the new file at the user's `path` (`--save-job`, `compare --html`): in its
/// directory, exclusively and atomically. An existing file is never overwritten.
pub fn write_new_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = split(path)?;
    Dir::open(&dir)?.write_new(&name, bytes)
}

/// Makes the new (still unnamed or temporary) file `f` its owner's alone, then writes
/// `bytes` into it.
fn private_write(f: &mut File, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(bytes)
}

/// [`write_new_file`], mode 0600 (a file that holds connection details).
pub fn write_new_private_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (dir, name) = split(path)?;
    Dir::open(&dir)?.write_new_private(&name, bytes)
}

/// Checks that the user's `path` names a place [`write_new_file`] can write, before any
/// work is done: its directory opens and nothing at all (not even a dangling symlink) is at
/// the name. `AlreadyExists` when something is.
pub fn check_new_file(path: &Path) -> io::Result<()> {
    let (dir, name) = split(path)?;
    match Dir::open(&dir)?.entry(&name)? {
        None => Ok(()),
        Some(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists already", path.shown()),
        )),
    }
}

/// A path's directory and file name.
pub fn split(path: &Path) -> io::Result<(PathBuf, String)> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} does not name a file", path.shown()),
            )
        })?
        .to_string();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

#[cfg(test)]
mod tests;
