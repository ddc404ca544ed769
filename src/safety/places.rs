//! Where a data set may be made: never on the kernel's pseudo file systems (`/proc`, `/sys`,
//! `/dev`, cgroups, ...), which hold the kernel's objects rather than storage, and only at a
//! path the system can use. Checked before anything is created, as bad input.
//!
//! `/dev/shm` is tmpfs, memory the way a database's shared memory is: it stays allowed.
//! `/dev` itself is devtmpfs, which reports tmpfs's magic number to `statfs`; the mount
//! table tells the two apart.

use crate::units::Shown;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The longest path the kernel takes, with its terminating NUL (`PATH_MAX`).
const PATH_MAX: usize = 4096;
/// The longest name of one path component (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// The pseudo file systems by `statfs` magic number (linux/magic.h).
const PSEUDO: &[(u32, &str)] = &[
    (0x9fa0, "proc"),
    (0x6265_6572, "sysfs"),
    (0x1cd1, "devpts"),
    (0x0027_e0eb, "cgroup"),
    (0x6367_7270, "cgroup2"),
    (0x6462_6720, "debugfs"),
    (0x7472_6163, "tracefs"),
    (0x7363_6673, "securityfs"),
    (0x6165_676c, "pstore"),
    (0xcafe_4a11, "bpf"),
    (0x6265_6570, "configfs"),
    (0x6573_5543, "fusectl"),
    (0x1980_0202, "mqueue"),
    (0x9584_58f6, "hugetlbfs"),
    (0xde5e_81e4, "efivarfs"),
    (0x4249_4e4d, "binfmt_misc"),
    (0x6e73_6673, "nsfs"),
    (0xf97c_ff8c, "selinuxfs"),
    (0x4341_5d53, "smackfs"),
    (0x0765_5821, "resctrl"),
];

/// tmpfs's magic number, which devtmpfs reports too.
const TMPFS_MAGIC: u32 = 0x0102_1994;

/// Checks that `target` (`--target`) names a place a run can use, creating nothing: a path
/// the kernel accepts (no component over 255 bytes, at most 4095 bytes in all), whose
/// parts that exist are directories, not a symbolic link to nothing, and — a directory, a
/// regular file or a path still to be made — not on a pseudo file system.
pub fn check_target(target: &Path) -> Result<()> {
    let bad = |why: String| {
        Error::usage(format!(
            "--target {}: {why}",
            shorten(&target.display().to_string())
        ))
    };
    let bytes = target.as_os_str().as_bytes();
    if bytes.len() >= PATH_MAX {
        return Err(bad(format!(
            "the path is {} bytes long, and the system takes at most {}; choose a shorter path",
            bytes.len(),
            PATH_MAX - 1
        )));
    }
    if let Some(long) = bytes.split(|&b| b == b'/').find(|c| c.len() > NAME_MAX) {
        return Err(bad(format!(
            "a name in the path is {} bytes long, and the system takes at most {NAME_MAX}; choose shorter names",
            long.len()
        )));
    }
    match std::fs::symlink_metadata(target) {
        Ok(md) if md.file_type().is_symlink() => match std::fs::metadata(target) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let to = std::fs::read_link(target).unwrap_or_default();
                return Err(bad(format!(
                    "it is a symbolic link to {}, which does not exist; give the directory itself",
                    to.shown()
                )));
            }
            Err(e) => return Err(bad(unusable(&e))),
        },
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(bad(unusable(&e))),
    }
    let (at, md) = nearest_existing(target).map_err(|e| bad(unusable(&e)))?;
    // A block device is read (or, checked elsewhere, written) where it is; other special
    // files are refused as what they are by the target's own check.
    if at == target && !md.is_dir() && !md.is_file() {
        return Ok(());
    }
    let advice = "give a directory on the storage to measure (/dev/shm for memory)";
    if let Some(fs) = pseudo_fs(&at, md.dev()) {
        return Err(bad(format!(
            "{} is on {fs}, a pseudo file system of the kernel, not storage; {advice}",
            at.shown()
        )));
    }
    // Whatever is mounted below /proc and /sys (a tmpfs holding cgroup mounts) is the
    // kernel's too.
    let real = std::fs::canonicalize(&at).unwrap_or(at);
    if let Some(top) = ["/proc", "/sys"].iter().find(|t| real.starts_with(t)) {
        return Err(bad(format!(
            "{} is below {top}, the kernel's own tree, not storage; {advice}",
            real.shown()
        )));
    }
    Ok(())
}

/// Why a path cannot be used, for an error from looking it up.
fn unusable(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOTDIR) => {
            "a part of the path is not a directory (a file, FIFO or device stands where a directory should); choose another path".into()
        }
        Some(libc::ENAMETOOLONG) => "the path is too long for the system; choose a shorter path".into(),
        Some(libc::ELOOP) => {
            "its symbolic links form a loop (or are nested too deeply); give the directory itself".into()
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "a part of the path cannot be searched (permission denied); choose a path you can read, or run as a user who can".into()
        }
        _ => format!(
            "cannot look it up ({}); choose another path",
            crate::error::io_advice(e)
        ),
    }
}

/// `path` itself if it exists, else its nearest existing ancestor, with its metadata (a
/// symlink followed).
fn nearest_existing(path: &Path) -> io::Result<(PathBuf, std::fs::Metadata)> {
    let mut at = path.to_path_buf();
    loop {
        match std::fs::metadata(&at) {
            Ok(md) => return Ok((at, md)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                at = match at.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
            }
            Err(e) => return Err(e),
        }
    }
}

/// The name of the pseudo file system `path` (on device `dev`) is on, if it is on one.
fn pseudo_fs(path: &Path, dev: u64) -> Option<String> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statfs is valid; statfs fills it from a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    let magic = st.f_type as u32;
    if let Some((_, name)) = PSEUDO.iter().find(|(m, _)| *m == magic) {
        return Some((*name).to_string());
    }
    (magic == TMPFS_MAGIC && mount_type(dev).as_deref() == Some("devtmpfs"))
        .then(|| "devtmpfs".to_string())
}

/// The file system type of the mount whose device is `dev`, from the mount table.
fn mount_type(dev: u64) -> Option<String> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let want = format!("{}:{}", libc::major(dev), libc::minor(dev));
    table.lines().find_map(|line| {
        let mut fields = line.split(' ');
        if fields.nth(2)? != want {
            return None;
        }
        // After the optional fields, " - " and then the type.
        let (_, tail) = line.split_once(" - ")?;
        tail.split(' ').next().map(str::to_string)
    })
}

/// A path to print: a very long one is cut in the middle, so the error stays one line a
/// reader can take in.
fn shorten(path: &str) -> String {
    if path.len() <= 120 {
        return path.to_string();
    }
    let head: String = path.chars().take(60).collect();
    let tail: String = {
        let t: Vec<char> = path.chars().rev().take(40).collect();
        t.into_iter().rev().collect()
    };
    format!("{head}…{tail} ({} bytes)", path.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pseudo_file_systems_are_known_by_type() {
        // /dev/shm is tmpfs: memory, allowed.
        if let Ok(md) = std::fs::metadata("/dev/shm") {
            assert_eq!(pseudo_fs(Path::new("/dev/shm"), md.dev()), None);
        }
        if let Ok(md) = std::fs::metadata("/proc/self") {
            assert_eq!(
                pseudo_fs(Path::new("/proc/self"), md.dev()).as_deref(),
                Some("proc")
            );
        }
        assert!(check_target(Path::new("/proc/dbio-never")).is_err());
        assert!(check_target(Path::new("/sys/dbio-never")).is_err());
        assert!(check_target(&std::env::temp_dir().join("dbio-x")).is_ok());
    }

    #[test]
    fn names_too_long_are_refused_without_a_lookup() {
        let long = "a".repeat(256);
        let e = check_target(Path::new(&long)).unwrap_err().to_string();
        assert!(e.contains("256 bytes") && e.starts_with("--target "), "{e}");
        let deep = vec!["abcdefgh"; 600].join("/");
        let e = check_target(Path::new(&deep)).unwrap_err().to_string();
        assert!(e.contains("at most 4095"), "{e}");
        assert!(e.len() < 400, "{e}");
    }
}
