//! Reading sysfs and procfs under a root that is `/` on a live system and a fixture
//! directory in tests, so every parser can be checked against captured trees.

use std::path::{Path, PathBuf};

/// The root sysfs and procfs are read under: `/` on a live system, a fixture tree in tests
/// (holding `sys/...` and `proc/...` with only the files the parsers read).
#[derive(Debug, Clone)]
pub struct SysRoot {
    root: PathBuf,
}

impl SysRoot {
    /// The running system.
    pub fn host() -> SysRoot {
        SysRoot {
            root: PathBuf::from("/"),
        }
    }

    /// A captured tree: `dir/sys/...`, `dir/proc/...`.
    pub fn at(dir: impl Into<PathBuf>) -> SysRoot {
        SysRoot { root: dir.into() }
    }

    /// Whether this is the running system (only then do paths outside sysfs mean anything).
    pub fn is_host(&self) -> bool {
        self.root == Path::new("/")
    }

    /// `rel` (like "sys/block/sda") under the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel.trim_start_matches('/'))
    }

    /// A file's contents, trimmed; None when absent or unreadable.
    pub fn read(&self, rel: &str) -> Option<String> {
        read_trimmed(&self.path(rel))
    }

    /// A number file; None when absent or not a number.
    pub fn read_u64(&self, rel: &str) -> Option<u64> {
        self.read(rel)?.parse().ok()
    }

    /// The real location of `rel` with symlinks resolved, relative to the root
    /// (like "sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda").
    pub fn resolve(&self, rel: &str) -> Option<String> {
        let real = std::fs::canonicalize(self.path(rel)).ok()?;
        let root = std::fs::canonicalize(&self.root).ok()?;
        let inner = real.strip_prefix(&root).ok()?;
        Some(inner.to_string_lossy().into_owned())
    }

    /// The file name a symlink points to (like "nvme0" for ".../device").
    pub fn link_name(&self, rel: &str) -> Option<String> {
        let target = std::fs::read_link(self.path(rel)).ok()?;
        Some(target.file_name()?.to_string_lossy().into_owned())
    }

    /// Names in a directory, sorted; empty when absent.
    pub fn list(&self, rel: &str) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(self.path(rel))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort_by(|a, b| natural_cmp(a, b));
        v
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }
}

pub fn read_trimmed(p: &Path) -> Option<String> {
    let s = std::fs::read_to_string(p).ok()?;
    Some(s.trim().to_string())
}

/// Orders "cpu2" before "cpu10".
fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let key = |s: &str| {
        let digits = s.len() - s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (head, tail) = s.split_at(s.len() - digits);
        (head.to_string(), tail.parse::<u64>().unwrap_or(0))
    };
    key(a).cmp(&key(b)).then(a.cmp(b))
}

/// One line of /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// "major:minor" of the file system's device (0:N for tmpfs and other virtual ones).
    pub dev: String,
    /// The directory in the file system that is mounted (usually "/").
    pub root: String,
    pub mount_point: String,
    pub options: String,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

/// Parses /proc/self/mountinfo (proc(5)): `id parent maj:min root mount_point options
/// [optional fields...] - fs_type source super_options`. Octal escapes (`\040`) are decoded.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            if l.len() < 6 || r.len() < 2 {
                return None;
            }
            Some(MountEntry {
                dev: l[2].to_string(),
                root: unescape(l[3]),
                mount_point: unescape(l[4]),
                options: l[5].to_string(),
                fs_type: r[0].to_string(),
                source: unescape(r[1]),
                super_options: r.get(2).copied().unwrap_or("").to_string(),
            })
        })
        .collect()
}

/// Decodes the octal escapes (`\040`) of mountinfo and numa_maps.
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount that holds `path` (absolute, symlinks resolved) on device `dev`: the entry with
/// the longest mount point that is a prefix of `path`, preferring entries of `dev`. Later
/// entries win ties (they are mounted on top).
pub fn find_mount<'a>(mounts: &'a [MountEntry], path: &Path, dev: &str) -> Option<&'a MountEntry> {
    let covers = |m: &MountEntry| path.starts_with(Path::new(&m.mount_point));
    let best = |same_dev: bool| {
        mounts
            .iter()
            .filter(|m| covers(m) && (!same_dev || m.dev == dev))
            .max_by_key(|m| m.mount_point.len())
    };
    // `max_by_key` returns the last maximum, i.e. the mount on top.
    best(true).or_else(|| best(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_parse_with_optional_fields_and_escapes() {
        let text = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard\n\
                    36 27 253:2 / /u01/my\\040data rw,noatime shared:5 master:1 - xfs /dev/mapper/vg01-lv_data rw,attr2\n\
                    25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].mount_point, "/u01/my data");
        assert_eq!(m[1].fs_type, "xfs");
        assert_eq!(m[1].source, "/dev/mapper/vg01-lv_data");
        assert_eq!(m[1].dev, "253:2");
        let f = find_mount(&m, Path::new("/u01/my data/oradata/x.dbf"), "253:2").unwrap();
        assert_eq!(f.mount_point, "/u01/my data");
        let f = find_mount(&m, Path::new("/dev/shm/x"), "0:23").unwrap();
        assert_eq!(f.fs_type, "tmpfs");
        let f = find_mount(&m, Path::new("/home/x"), "254:0").unwrap();
        assert_eq!(f.mount_point, "/");
    }

    #[test]
    fn names_sort_naturally() {
        let mut v = vec!["sdaa", "sdb", "cpu10", "cpu2", "sda"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["cpu2", "cpu10", "sda", "sdaa", "sdb"]);
    }
}
