//! Data sets in use are held by advisory locks (`flock`), never marked by PIDs written into
//! files (docs/safety.md, "Locks, not marks"): shared while a run only reads, exclusive while one prepares or
//! writes. The lock is taken on the data set's `dbio-lock` file, which only its owner may
//! open (mode 0600, so no other user can hold it to block dbio), or on the directory where
//! that file cannot be made (a read-only mount). A killed run's lock goes away with its
//! process, so nothing is ever stale; who holds a lock is read from `/proc/locks`.

use std::io;
use std::os::fd::AsRawFd;

use crate::sys::FileId;

/// How a data set is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Read tests: others may read at the same time.
    Shared,
    /// Preparation and write tests: nobody else.
    Exclusive,
}

/// A process holding a lock, as `/proc/locks` and `/proc/PID/cmdline` tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    pub writes: bool,
    pub cmdline: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "pid {} ({})", self.pid, printable(&self.cmdline))
    }
}

/// Another process's command line, safe to print on one line: any process can name
/// itself anything, so control characters (newlines, escape sequences) are shown as `?`
/// and the length is capped; a password in it (`dbio pg run --pg postgresql://u:PW@...`)
/// is shown as `****`.
pub fn printable(cmdline: &str) -> String {
    if cmdline.is_empty() {
        return "command unknown".into();
    }
    let redacted = crate::safety::secret::redact(cmdline);
    let shown = crate::units::shown(&redacted);
    let clean: String = shown.chars().take(120).collect();
    if shown.chars().count() > 120 {
        format!("{clean}…")
    } else {
        clean
    }
}

/// Takes the lock on `fd` (a lock file or a directory) without waiting, or converts the one
/// held to `mode`. `Ok(false)` when another process holds it in a way that excludes `mode`.
pub fn try_lock(fd: &impl AsRawFd, mode: Mode) -> io::Result<bool> {
    let op = match mode {
        Mode::Shared => libc::LOCK_SH,
        Mode::Exclusive => libc::LOCK_EX,
    };
    // SAFETY: flock on a valid descriptor.
    if unsafe { libc::flock(fd.as_raw_fd(), op | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// The processes other than this one holding a flock on the file `id`.
pub fn holders(id: &FileId) -> Vec<Holder> {
    let text = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let me = std::process::id();
    let mut out: Vec<Holder> = parse_locks(&text, id)
        .into_iter()
        .filter(|(pid, _)| *pid != me)
        .map(|(pid, writes)| Holder {
            pid,
            writes,
            cmdline: cmdline(pid),
        })
        .collect();
    out.sort_by_key(|h| h.pid);
    out.dedup_by_key(|h| h.pid);
    out
}

/// `(pid, writes)` of every granted FLOCK on the file `id` in the text of `/proc/locks`:
/// `1: FLOCK  ADVISORY  WRITE 3153 fd:01:1316227 0 EOF` (device numbers in hex). Waiters
/// (`->`) hold nothing.
fn parse_locks(text: &str, id: &FileId) -> Vec<(u32, bool)> {
    let (major, minor) = (libc::major(id.dev), libc::minor(id.dev));
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.get(1) == Some(&"->") || f.get(1) != Some(&"FLOCK") {
                return None;
            }
            let writes = *f.get(3)? == "WRITE";
            let pid: u32 = f.get(4)?.parse().ok()?;
            let mut dev = f.get(5)?.split(':');
            let ma = u32::from_str_radix(dev.next()?, 16).ok()?;
            let mi = u32::from_str_radix(dev.next()?, 16).ok()?;
            let ino: u64 = dev.next()?.parse().ok()?;
            (ma == major && mi == minor && ino == id.ino).then_some((pid, writes))
        })
        .collect()
}

/// A process's command line, arguments joined by spaces.
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::fs::Dir;

    #[test]
    fn proc_locks_lines_are_read_for_the_right_file() {
        let id = FileId {
            dev: libc::makedev(0xfd, 1),
            ino: 1316227,
            btime_ns: None,
        };
        let text = "1: FLOCK  ADVISORY  WRITE 3153 fd:01:1316227 0 EOF\n\
                    2: FLOCK  ADVISORY  READ  3154 fd:01:1316227 0 EOF\n\
                    2: -> FLOCK  ADVISORY  WRITE 3155 fd:01:1316227 0 EOF\n\
                    3: POSIX  ADVISORY  WRITE 3156 fd:01:1316227 0 EOF\n\
                    4: FLOCK  ADVISORY  WRITE 3157 fd:01:99 0 EOF\n\
                    5: FLOCK  ADVISORY  WRITE 3158 08:01:1316227 0 EOF\n";
        assert_eq!(parse_locks(text, &id), [(3153, true), (3154, false)]);
    }

    #[test]
    fn a_lock_excludes_another_and_its_holder_is_named() {
        let t = tempfile::tempdir().unwrap();
        let a = Dir::open(t.path()).unwrap();
        let b = Dir::open(t.path()).unwrap();
        assert!(try_lock(&a, Mode::Shared).unwrap());
        assert!(try_lock(&b, Mode::Shared).unwrap());
        assert!(!try_lock(&b, Mode::Exclusive).unwrap(), "a reader holds it");
        drop(a);
        assert!(try_lock(&b, Mode::Exclusive).unwrap());
        let c = Dir::open(t.path()).unwrap();
        assert!(!try_lock(&c, Mode::Shared).unwrap());
        // Our own process is never named as the holder.
        assert!(holders(&c.id().unwrap()).is_empty());
    }
}
