//! Who holds a file open: other processes, read from /proc/PID/fd. A device or file another
//! program has open is not dbio's to write (the device checks and the alias checks both ask).

use std::os::unix::fs::{FileTypeExt, MetadataExt};

/// Other processes holding one of the block devices `devs` open, from /proc/PID/fd: (pid,
/// command line).
pub(super) fn opened_by(devs: &[u64]) -> Vec<(u32, String)> {
    opened_where(|m| m.file_type().is_block_device() && devs.contains(&m.rdev()))
}

/// Other processes holding the regular file `dev`/`ino` open: (pid, command line).
pub(super) fn opened_by_file(dev: u64, ino: u64) -> Vec<(u32, String)> {
    opened_where(|m| m.is_file() && m.dev() == dev && m.ino() == ino)
}

/// Other processes with an open file `holds` says yes to, from /proc/PID/fd.
fn opened_where(holds: impl Fn(&std::fs::Metadata) -> bool) -> Vec<(u32, String)> {
    let me = std::process::id();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        let holds = fds
            .flatten()
            .any(|fd| std::fs::metadata(fd.path()).is_ok_and(|m| holds(&m)));
        if holds {
            out.push((pid, crate::safety::lock::cmdline(pid)));
        }
    }
    out.sort();
    out
}
