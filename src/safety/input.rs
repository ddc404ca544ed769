//! What dbio reads at the paths a user names — reports (`dbio job from-awr|from-iostat`),
//! job files (`--job`), sizing plans (`dbio size`) — read bounded: regular files only, at
//! most their limit in bytes whatever the file claims, given up on a signal.

use std::fs::File;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::fs::{Kind, cstr, entry_of};

/// Why a file the user named as input (a report, a job file, a sizing plan, a result) was
/// not read.
#[derive(Debug)]
pub enum InputError {
    /// It is not a regular file: what it is.
    NotAFile(&'static str),
    /// It holds more than the limit; its size when it says so.
    TooLarge {
        limit: u64,
        size: Option<u64>,
    },
    /// A signal came while it was read.
    Stopped,
    Io(io::Error),
}

impl InputError {
    /// The error the user sees, `label` naming the file (`--job FILE`, `FILE`) and `what`
    /// what it should have been (`a report`): bad input (exit 2) for what is not a file or
    /// too large, the stop (exit 130), an I/O error (exit 4) only for a failing device.
    pub fn into_error(self, label: &str, what: &str) -> crate::error::Error {
        use crate::error::Error;
        match self {
            InputError::NotAFile(kind) => Error::usage(format!(
                "{label}: {kind}, not a regular file (give {what} as a file)"
            )),
            InputError::TooLarge { limit, size } => Error::usage(format!(
                "{label}: {} is too large for {what} (at most {})",
                match size {
                    Some(s) => format!("{s} bytes"),
                    None => format!("more than {limit} bytes"),
                },
                crate::units::human_bytes(limit)
            )),
            InputError::Stopped => Error::Interrupted(format!(
                "interrupted while reading {label}; nothing written"
            )),
            InputError::Io(e) => match e.raw_os_error() {
                Some(libc::ENOENT) => Error::usage(format!("{label}: no such file")),
                Some(libc::EACCES | libc::EPERM | libc::ENOTDIR | libc::ENAMETOOLONG) => {
                    Error::usage(format!("{label}: {}", crate::error::io_advice(&e)))
                }
                // A file of the kernel's (/proc, /sys) that cannot be read as a file is.
                Some(libc::EINVAL | libc::EAGAIN | libc::ELOOP | libc::ENXIO) => {
                    Error::usage(format!("{label}: cannot be read as {what} ({e})"))
                }
                _ => Error::Io(format!(
                    "cannot read {label}: {}",
                    crate::error::io_advice(&e)
                )),
            },
        }
    }
}

/// What a file type is, for a refusal; None for a regular file.
fn not_a_file(t: std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else {
        Some("not a file")
    }
}

/// How much [`read_input`] reads between two looks at the stop flag.
const INPUT_PIECE: u64 = 1 << 20;

/// Reads the file the user named at `path` as input, bounded: a regular file — a
/// directory, FIFO, socket or device is refused before it is opened (and one put there
/// since is never waited on) — of at most `limit` bytes whatever its size says (`/proc`
/// files say 0): a larger one is refused by its size, or after `limit` bytes, never read
/// whole. Read in pieces, giving up as soon as `stop` is set. The path is resolved as
/// any program resolves a path.
pub fn read_input(
    path: &Path,
    limit: u64,
    stop: Option<&AtomicBool>,
) -> Result<Vec<u8>, InputError> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(path).map_err(InputError::Io)?;
    if let Some(kind) = not_a_file(md.file_type()) {
        return Err(InputError::NotAFile(kind));
    }
    if md.len() > limit {
        return Err(InputError::TooLarge {
            limit,
            size: Some(md.len()),
        });
    }
    let c = cstr(path).map_err(InputError::Io)?;
    // SAFETY: a valid C string; O_NONBLOCK keeps the open from waiting on a FIFO.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(InputError::Io(io::Error::last_os_error()));
    }
    // SAFETY: a new descriptor we own.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let now = entry_of(&file).map_err(InputError::Io)?;
    if now.kind != Kind::File || now.id.dev != md.dev() || now.id.ino != md.ino() {
        return Err(InputError::NotAFile("replaced while dbio opened it"));
    }
    let mut buf = Vec::with_capacity(now.size.min(limit) as usize);
    let mut rest = (&file).take(limit + 1);
    loop {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err(InputError::Stopped);
        }
        let n = rest
            .by_ref()
            .take(INPUT_PIECE)
            .read_to_end(&mut buf)
            .map_err(InputError::Io)?;
        if n == 0 {
            break;
        }
    }
    if buf.len() as u64 > limit {
        return Err(InputError::TooLarge { limit, size: None });
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(path: &Path) {
        let c = cstr(path).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    }

    #[test]
    fn input_is_read_bounded_and_only_from_regular_files() {
        let t = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let f = t.path().join("report.txt");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read_input(&f, 10, Some(&stop)).unwrap(), b"0123456789");
        assert!(matches!(
            read_input(&f, 9, None),
            Err(InputError::TooLarge { size: Some(10), .. })
        ));
        // A sparse file of 10 GiB: refused by its size, nothing read.
        let sparse = t.path().join("sparse");
        File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
        assert!(matches!(
            read_input(&sparse, 1 << 20, None),
            Err(InputError::TooLarge { .. })
        ));
        // A file that says it is empty and is not: at most the limit is read.
        if let Ok(md) = std::fs::metadata("/proc/self/status") {
            assert_eq!(md.len(), 0);
            assert!(matches!(
                read_input(Path::new("/proc/self/status"), 16, None),
                Err(InputError::TooLarge { size: None, .. })
            ));
        }
        let p = t.path().join("fifo");
        fifo(&p);
        assert!(matches!(
            read_input(&p, 10, None),
            Err(InputError::NotAFile(_))
        ));
        assert!(matches!(
            read_input(Path::new("/dev/null"), 10, None),
            Err(InputError::NotAFile("a device"))
        ));
        assert!(matches!(
            read_input(t.path(), 10, None),
            Err(InputError::NotAFile(_))
        ));
        stop.store(true, Ordering::Relaxed);
        assert!(matches!(
            read_input(&f, 10, Some(&stop)),
            Err(InputError::Stopped)
        ));
    }
}
