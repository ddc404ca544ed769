//! Who uses a file or a device: other processes holding it open (/proc/PID/fd) or mapped
//! into their memory (/proc/PID/maps, an mmap outlives the descriptor it was made with). A
//! device or file another program uses is not dbio's to write (the device checks and the
//! alias checks both ask).

use std::fmt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// Another process using a device or a file: through an open descriptor, or a mapping
/// (mmap) that outlives the descriptor it was made with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub pid: u32,
    /// Its command line.
    pub cmd: String,
    /// Mapped into its memory, not (or no longer) open.
    pub mapped: bool,
}

impl User {
    /// "open in process 12 (postgres)", "mapped by process 12 (postgres)".
    pub fn how(&self) -> String {
        format!(
            "{} process {} ({})",
            if self.mapped { "mapped by" } else { "open in" },
            self.pid,
            crate::safety::lock::printable(&self.cmd)
        )
    }
}

impl fmt::Display for User {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "is {}", self.how())
    }
}

/// Other processes holding one of the block devices `devs` open or mapped, from
/// /proc/PID/fd and /proc/PID/maps.
pub(super) fn opened_by(devs: &[u64]) -> Vec<User> {
    // What a mapping of the device's node looks like in /proc/PID/maps (the node's file
    // system and inode), for when the mapped file itself cannot be looked at.
    let mut nodes = Vec::new();
    for d in devs {
        let node = format!("/dev/block/{}:{}", libc::major(*d), libc::minor(*d));
        if let Ok(m) = std::fs::metadata(node)
            && m.file_type().is_block_device()
            && m.rdev() == *d
        {
            nodes.push((m.dev(), m.ino()));
        }
    }
    used_where(
        |m| m.file_type().is_block_device() && devs.contains(&m.rdev()),
        &nodes,
    )
}

/// Other processes holding the regular file `dev`/`ino` open or mapped.
pub(super) fn opened_by_file(dev: u64, ino: u64) -> Vec<User> {
    used_where(
        |m| m.is_file() && m.dev() == dev && m.ino() == ino,
        &[(dev, ino)],
    )
}

/// Other processes with an open file or a mapped file `holds` says yes to, from
/// /proc/PID/fd and /proc/PID/maps. A mapping is judged by the file itself (through
/// /proc/PID/map_files, which reaches deleted files too) or, where that cannot be read, by
/// the file system and inode the maps line shows, one of `ids`.
fn used_where(holds: impl Fn(&std::fs::Metadata) -> bool, ids: &[(u64, u64)]) -> Vec<User> {
    let me = std::process::id();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    // The same library is mapped by every process: each mapped file is looked at once.
    let mut judged: std::collections::HashMap<(u64, u64, String), bool> =
        std::collections::HashMap::new();
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let open = std::fs::read_dir(p.path().join("fd")).is_ok_and(|fds| {
            fds.flatten()
                .any(|fd| std::fs::metadata(fd.path()).is_ok_and(|m| holds(&m)))
        });
        let mapped = !open
            && std::fs::read_to_string(p.path().join("maps")).is_ok_and(|maps| {
                maps.lines().any(|l| {
                    let Some(m) = parse_maps_line(l) else {
                        return false;
                    };
                    let key = (m.dev, m.ino, m.path.to_string());
                    if let Some(&yes) = judged.get(&key) {
                        return yes;
                    }
                    let file = p.path().join("map_files").join(m.range);
                    match std::fs::metadata(file) {
                        Ok(md) => {
                            let yes = holds(&md);
                            judged.insert(key, yes);
                            yes
                        }
                        Err(_) => {
                            ids.contains(&(m.dev, m.ino))
                                || std::fs::metadata(m.path)
                                    .is_ok_and(|md| md.ino() == m.ino && holds(&md))
                        }
                    }
                })
            });
        if open || mapped {
            out.push(User {
                pid,
                cmd: crate::safety::lock::cmdline(pid),
                mapped,
            });
        }
    }
    out.sort_by_key(|u| u.pid);
    out
}

/// One line of /proc/PID/maps that maps a file.
#[derive(Debug, PartialEq, Eq)]
struct MapsLine<'a> {
    /// "7f00-7f10": the name of its link in /proc/PID/map_files.
    range: &'a str,
    /// The file's file system (device number) and inode.
    dev: u64,
    ino: u64,
    /// As the kernel shows it ("/x (deleted)" for a deleted file).
    path: &'a str,
}

/// `start-end perms offset major:minor inode path`, the device numbers in hexadecimal;
/// None for an anonymous mapping (inode 0) or a line that is not one.
fn parse_maps_line(line: &str) -> Option<MapsLine<'_>> {
    let mut f = line.splitn(6, ' ');
    let range = f.next()?;
    let (_perms, _offset) = (f.next()?, f.next()?);
    let (ma, mi) = f.next()?.split_once(':')?;
    let ino: u64 = f.next()?.parse().ok()?;
    let path = f.next().unwrap_or("").trim_start();
    if ino == 0 || !range.contains('-') {
        return None;
    }
    let dev = libc::makedev(
        u32::from_str_radix(ma, 16).ok()?,
        u32::from_str_radix(mi, 16).ok()?,
    );
    Some(MapsLine {
        range,
        dev,
        ino,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_lines_parse_and_anonymous_mappings_do_not() {
        assert_eq!(
            parse_maps_line("7f3a00000000-7f3a00100000 rw-s 00000000 00:05 412 /dev/loop1"),
            Some(MapsLine {
                range: "7f3a00000000-7f3a00100000",
                dev: libc::makedev(0, 5),
                ino: 412,
                path: "/dev/loop1"
            })
        );
        let deleted = parse_maps_line(
            "7f3a00000000-7f3a00100000 rw-s 00100000 fd:1a 7340033                    /tmp/x/f (deleted)",
        )
        .unwrap();
        assert_eq!(
            (deleted.dev, deleted.ino, deleted.path),
            (libc::makedev(0xfd, 0x1a), 7340033, "/tmp/x/f (deleted)")
        );
        assert_eq!(
            parse_maps_line("7ffd1000-7ffd2000 rw-p 00000000 00:00 0                  [stack]"),
            None
        );
        assert_eq!(parse_maps_line("garbage"), None);
    }
}
