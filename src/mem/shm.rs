//! Where shared memory really lives (a whole /dev/shm SGA can end up allocated on one
//! socket, and a mount's `mpol=interleave` may not take; docs/mem.md).
//!
//! - A file (`--shm PATH`: a tmpfs or hugetlbfs file, a /dev/shm segment): mapped read-only,
//!   `mincore` says which pages are in memory, only those are mapped in (nothing is
//!   allocated, read from disk or swapped in), and `move_pages` says on which node each is.
//! - A process (`--pid PID`): its SysV shared memory, shared anonymous memory and files on
//!   tmpfs or hugetlbfs, per node, from `/proc/PID/numa_maps` (the pages it has mapped),
//!   with the memory policy of each mapping.
//!
//! And the memory policy of the mount a file lives on (`mpol=` in `/proc/self/mountinfo`).

use crate::units::Shown;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::numa;
use crate::storage::sysfs::{SysRoot, parse_mountinfo, unescape};

/// The mount a file lives on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mount {
    pub mount_point: String,
    pub fs_type: String,
    /// The tmpfs memory policy (`mpol=interleave:0-3`), None when the mount sets none: pages
    /// then go where the writing process's own policy puts them (by default, the node it
    /// ran on).
    pub mpol: Option<String>,
    pub options: String,
}

/// Pages of a file per node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilePlacement {
    pub path: String,
    pub size_bytes: u64,
    /// The unit pages are counted in: the base page, or the huge page of a hugetlbfs file.
    pub page_bytes: u64,
    /// Pages the file's size spans.
    pub pages: u64,
    /// Pages in memory, per node.
    pub pages_by_node: BTreeMap<u32, u64>,
    /// Pages not in memory: holes never written, or swapped out.
    pub pages_not_in_memory: u64,
    /// Pages move_pages could not place (raced with truncation or reclaim).
    pub pages_unknown: u64,
    pub mount: Option<Mount>,
}

/// Pages of a file (or of a part of it) mapped per call: bounds the memory dbio uses for
/// a file of any size.
const WINDOW_PAGES: usize = 1 << 16;

/// Why a placement cannot be read; the command turns these into usage or I/O errors.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    #[error("{0}")]
    Usage(String),
    #[error("{what}: {err}")]
    Io { what: String, err: io::Error },
}

fn io_err(what: impl Into<String>) -> impl FnOnce(io::Error) -> ShmError {
    let what = what.into();
    move |err| ShmError::Io { what, err }
}

/// Where the pages of the file at `path` are.
pub fn file_placement(path: &Path, root: &SysRoot) -> Result<FilePlacement, ShmError> {
    // O_NONBLOCK: a FIFO put in the file's place must not hang dbio; it is refused below.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => {
                ShmError::Usage(format!("--shm {}: no such file", path.shown()))
            }
            _ => ShmError::Io {
                what: format!("cannot open {}", path.shown()),
                err: e,
            },
        })?;
    let meta = file
        .metadata()
        .map_err(io_err(format!("cannot stat {}", path.shown())))?;
    if !meta.is_file() {
        return Err(ShmError::Usage(format!(
            "--shm {}: not a regular file (give a file in a tmpfs such as /dev/shm, or a hugetlbfs file)",
            path.shown()
        )));
    }
    // SAFETY: zeroed statfs is valid; fstatfs fills it for an open descriptor.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } != 0 {
        return Err(ShmError::Io {
            what: format!("cannot statfs {}", path.shown()),
            err: io::Error::last_os_error(),
        });
    }
    let hugetlbfs = st.f_type as i64 == libc::HUGETLBFS_MAGIC;
    let base = crate::sys::page_size() as u64;
    let page = if hugetlbfs {
        (st.f_bsize as u64).max(base)
    } else {
        base
    };
    let size = meta.len();
    let pages = size.div_ceil(page);
    if hugetlbfs && {
        use std::os::unix::fs::MetadataExt;
        meta.blocks() * 512 < pages * page
    } {
        // Mapping a hole of a hugetlbfs file allocates a huge page: dbio would change what
        // it is asked to look at.
        return Err(ShmError::Usage(format!(
            "--shm {}: a hugetlbfs file with unallocated pages cannot be inspected without allocating them; use --pid with a process that maps it",
            path.shown()
        )));
    }
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = FilePlacement {
        path: path.display().to_string(),
        size_bytes: size,
        page_bytes: page,
        pages,
        pages_by_node: BTreeMap::new(),
        pages_not_in_memory: 0,
        pages_unknown: 0,
        mount: mount_of(root, &canonical),
    };
    let mut start = 0u64;
    while start < pages {
        let n = (pages - start).min(WINDOW_PAGES as u64) as usize;
        window(&file, start * page, n, page as usize, hugetlbfs, &mut out)
            .map_err(io_err(format!("cannot inspect {}", path.shown())))?;
        start += n as u64;
    }
    Ok(out)
}

/// Places `n` pages of `page` bytes from `offset`.
fn window(
    file: &std::fs::File,
    offset: u64,
    n: usize,
    page: usize,
    hugetlbfs: bool,
    out: &mut FilePlacement,
) -> io::Result<()> {
    let len = n * page;
    // SAFETY: a new read-only shared mapping of an open file; unmapped below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            offset as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let base = p as *mut u8;
    let result = (|| {
        let resident: Vec<bool> = if hugetlbfs {
            // Every page is allocated (checked by the caller).
            vec![true; n]
        } else {
            let mut v = vec![0u8; len.div_ceil(crate::sys::page_size())];
            // SAFETY: v has one byte per base page of the mapping.
            if unsafe { libc::mincore(p, len, v.as_mut_ptr()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            v.iter().map(|b| b & 1 == 1).collect()
        };
        // Map in the resident pages (runs of them at a time), so move_pages can see them.
        let mut i = 0;
        while i < n {
            if !resident[i] {
                i += 1;
                continue;
            }
            let j = (i..n).find(|&k| !resident[k]).unwrap_or(n);
            populate_read(base, i * page, (j - i) * page, page)?;
            i = j;
        }
        let addrs: Vec<*mut libc::c_void> = (0..n)
            .filter(|&k| resident[k])
            .map(|k| base.wrapping_add(k * page) as *mut libc::c_void)
            .collect();
        let mut status = vec![0; addrs.len()];
        numa::page_nodes(&addrs, &mut status)?;
        out.pages_not_in_memory += (n - addrs.len()) as u64;
        for s in status {
            match s {
                s if s >= 0 => *out.pages_by_node.entry(s as u32).or_insert(0) += 1,
                s if -s == libc::ENOENT => out.pages_not_in_memory += 1,
                _ => out.pages_unknown += 1,
            }
        }
        Ok(())
    })();
    // SAFETY: mapped above.
    unsafe { libc::munmap(p, len) };
    result
}

/// Maps `[base + off, base + off + len)` in without writing. MADV_POPULATE_READ (Linux
/// 5.14) reports a page gone meanwhile as an error instead of a SIGBUS; older kernels get
/// one read per page.
fn populate_read(base: *mut u8, off: usize, len: usize, page: usize) -> io::Result<()> {
    // SAFETY: the range lies inside the caller's mapping.
    let rc = unsafe {
        libc::madvise(
            base.add(off) as *mut libc::c_void,
            len,
            libc::MADV_POPULATE_READ,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::EINVAL) {
        return Err(e);
    }
    for k in (off..off + len).step_by(page) {
        // SAFETY: inside the mapping; the page was resident a moment ago.
        unsafe { std::ptr::read_volatile(base.add(k)) };
    }
    Ok(())
}

/// The mount holding `path` (already canonical), from `proc/self/mountinfo`.
pub fn mount_of(root: &SysRoot, path: &Path) -> Option<Mount> {
    let text = root.read("proc/self/mountinfo")?;
    // The longest mount point wins; a later line on the same point mounts over it.
    let m = parse_mountinfo(&text)
        .into_iter()
        .filter(|m| path.starts_with(&m.mount_point))
        .max_by_key(|m| m.mount_point.len())?;
    Some(Mount {
        mpol: m
            .super_options
            .split(',')
            .find_map(|o| o.strip_prefix("mpol="))
            .map(str::to_string),
        mount_point: m.mount_point,
        fs_type: m.fs_type,
        options: m.super_options,
    })
}

/// One shared-memory object a process maps (all its mappings together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Segment {
    /// "/SYSV0000abcd (deleted)" for SysV shared memory, the file for a mapped file,
    /// "/dev/zero (deleted)" for shared anonymous memory.
    pub name: String,
    /// "sysv", "tmpfs", "hugetlbfs", "shared anonymous".
    pub kind: String,
    /// The memory policies of its mappings as numa_maps shows them ("interleave:0-3").
    pub policies: Vec<String>,
    pub page_bytes: u64,
    pub pages_by_node: BTreeMap<u32, u64>,
    pub mappings: u64,
}

/// The shared memory of one process per node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessPlacement {
    pub pid: u32,
    pub command: String,
    pub segments: Vec<Segment>,
}

/// The shared memory of process `pid` (read under `root`, `/` on a live system).
pub fn process_placement(root: &SysRoot, pid: u32) -> Result<ProcessPlacement, ShmError> {
    let dir = format!("proc/{pid}");
    if !root.exists(&dir) {
        return Err(ShmError::Usage(format!("--pid {pid}: no such process")));
    }
    let maps = std::fs::read_to_string(root.path(&format!("{dir}/numa_maps"))).map_err(|e| {
        ShmError::Io {
            what: format!(
                "cannot read /proc/{pid}/numa_maps (run dbio as the process's owner or root)"
            ),
            err: e,
        }
    })?;
    let mounts =
        std::fs::read_to_string(root.path(&format!("{dir}/mountinfo"))).unwrap_or_default();
    let shared_fs: Vec<(String, String)> = parse_mountinfo(&mounts)
        .into_iter()
        .filter(|m| matches!(m.fs_type.as_str(), "tmpfs" | "hugetlbfs"))
        .map(|m| (m.mount_point, m.fs_type))
        .collect();
    Ok(ProcessPlacement {
        pid,
        command: root
            .read(&format!("{dir}/comm"))
            .unwrap_or_else(|| "?".into()),
        segments: parse_numa_maps(&maps, &shared_fs),
    })
}

/// The shared-memory mappings of a numa_maps text, grouped by object. `shared_fs` lists
/// (mount point, type) of the process's tmpfs and hugetlbfs mounts.
fn parse_numa_maps(text: &str, shared_fs: &[(String, String)]) -> Vec<Segment> {
    let mut by_name: BTreeMap<String, Segment> = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let (Some(_addr), Some(policy)) = (words.next(), words.next()) else {
            continue;
        };
        let mut file = None;
        let mut huge = false;
        let mut page_kb = 4u64;
        let mut nodes = BTreeMap::new();
        for w in words {
            if let Some(f) = w.strip_prefix("file=") {
                file = Some(unescape(f));
            } else if w == "huge" {
                huge = true;
            } else if let Some(kb) = w.strip_prefix("kernelpagesize_kB=") {
                page_kb = kb.parse().unwrap_or(4);
            } else if let Some((n, count)) = w.strip_prefix('N').and_then(|r| r.split_once('='))
                && let (Ok(n), Ok(count)) = (n.parse::<u32>(), count.parse::<u64>())
            {
                nodes.insert(n, count);
            }
        }
        let Some(name) = file else { continue };
        let kind = if name.starts_with("/SYSV") {
            "sysv"
        } else if name.starts_with("/dev/zero") {
            "shared anonymous"
        } else if let Some((_, fs)) = shared_fs
            .iter()
            .filter(|(point, _)| Path::new(&name).starts_with(point))
            .max_by_key(|(point, _)| point.len())
        {
            fs.as_str()
        } else if huge {
            "hugetlbfs"
        } else {
            continue;
        };
        let seg = by_name.entry(name.clone()).or_insert_with(|| Segment {
            name,
            kind: kind.to_string(),
            policies: Vec::new(),
            page_bytes: page_kb << 10,
            pages_by_node: BTreeMap::new(),
            mappings: 0,
        });
        seg.mappings += 1;
        if !seg.policies.iter().any(|p| p == policy) {
            seg.policies.push(policy.to_string());
        }
        for (n, c) in nodes {
            *seg.pages_by_node.entry(n).or_insert(0) += c;
        }
    }
    by_name.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> SysRoot {
        SysRoot::at(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mem-sysfs/four_node_2hop"),
        )
    }

    #[test]
    fn the_mount_and_its_policy_are_found() {
        let m = mount_of(&fixture(), Path::new("/dev/shm/ora_orcl_1")).unwrap();
        assert_eq!(m.mount_point, "/dev/shm");
        assert_eq!(m.fs_type, "tmpfs");
        assert_eq!(m.mpol.as_deref(), Some("interleave:0-3"));
        let root = mount_of(&fixture(), Path::new("/u01/app")).unwrap();
        assert_eq!((root.mount_point.as_str(), root.mpol), ("/", None));
        // /dev/shmx is not under /dev/shm.
        assert_eq!(
            mount_of(&fixture(), Path::new("/dev/shmx"))
                .unwrap()
                .mount_point,
            "/"
        );
    }

    /// Both cases of docs/mem.md in one process: an SGA in SysV shared memory on huge pages,
    /// interleaved by mbind over 4 nodes, and AMM-style /dev/shm granules all on node 1.
    #[test]
    fn numa_maps_group_shared_memory_by_object() {
        let text = r"00400000 default file=/u01/app/oracle/bin/oracle mapped=100 N0=100 kernelpagesize_kB=4
60000000 interleave:0-3 file=/SYSV00000000\040(deleted) huge dirty=2048 N0=512 N1=512 N2=512 N3=512 kernelpagesize_kB=2048
a0000000 interleave:0-3 file=/SYSV00000000\040(deleted) huge dirty=4 N0=1 N1=1 N2=1 N3=1 kernelpagesize_kB=2048
7f0000000000 default file=/dev/shm/ora_orcl_1_0 dirty=4096 N1=4096 kernelpagesize_kB=4
7f0001000000 default file=/dev/shm/ora_orcl_1_1 dirty=4096 N1=4000 N0=96 kernelpagesize_kB=4
7f0002000000 default anon=10 dirty=10 N0=10 kernelpagesize_kB=4
7f0003000000 default file=/dev/zero\040(deleted) dirty=3 N2=3 kernelpagesize_kB=4
";
        let segs = parse_numa_maps(text, &[("/dev/shm".into(), "tmpfs".into())]);
        let names: Vec<&str> = segs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "/SYSV00000000 (deleted)",
                "/dev/shm/ora_orcl_1_0",
                "/dev/shm/ora_orcl_1_1",
                "/dev/zero (deleted)"
            ]
        );
        let sga = &segs[0];
        assert_eq!(sga.kind, "sysv");
        assert_eq!(sga.mappings, 2);
        assert_eq!(sga.page_bytes, 2 << 20);
        assert_eq!(sga.policies, ["interleave:0-3"]);
        assert_eq!(
            sga.pages_by_node,
            BTreeMap::from([(0, 513), (1, 513), (2, 513), (3, 513)])
        );
        assert_eq!(segs[1].kind, "tmpfs");
        assert_eq!(segs[1].pages_by_node, BTreeMap::from([(1, 4096)]));
        assert_eq!(segs[3].kind, "shared anonymous");
    }

    #[test]
    fn a_missing_process_is_a_usage_error() {
        let e = process_placement(&fixture(), 99_999_999).unwrap_err();
        assert!(matches!(e, ShmError::Usage(_)), "{e}");
        assert!(e.to_string().contains("--pid 99999999"));
    }
}
