//! The NUMA system calls, raw (no libnuma): memory policy of a range (`mbind`), where pages
//! are (`move_pages` without target nodes only asks), and which CPUs a thread may run on
//! (`sched_setaffinity`).

use std::collections::BTreeMap;
use std::io;

const MPOL_DEFAULT: libc::c_long = 0;
const MPOL_BIND: libc::c_long = 2;
const MPOL_INTERLEAVE: libc::c_long = 3;

/// Where the pages of a range are allocated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Policy {
    /// The thread's own policy: by default the node of the CPU that first touches a page.
    Local,
    /// Only these nodes.
    Bind(Vec<u32>),
    /// Round robin over these nodes, page by page.
    Interleave(Vec<u32>),
}

impl Policy {
    /// How the result names it: "local", "bind:1", "interleave:0-3".
    pub fn describe(&self) -> String {
        let list = |v: &[u32]| {
            super::topology::format_cpu_list(&v.iter().map(|&n| n as usize).collect::<Vec<_>>())
        };
        match self {
            Policy::Local => "local".into(),
            Policy::Bind(n) => format!("bind:{}", list(n)),
            Policy::Interleave(n) => format!("interleave:{}", list(n)),
        }
    }
}

/// A node mask as the kernel reads it: bits in unsigned longs, and the bit count plus one
/// (the kernel has always read one bit fewer than `maxnode` says; libnuma passes +1 too).
fn nodemask(nodes: &[u32]) -> (Vec<libc::c_ulong>, libc::c_ulong) {
    let bits = libc::c_ulong::BITS as usize;
    let highest = nodes.iter().copied().max().unwrap_or(0) as usize;
    let mut mask = vec![0 as libc::c_ulong; highest / bits + 1];
    for &n in nodes {
        mask[n as usize / bits] |= 1 << (n as usize % bits);
    }
    let maxnode = (mask.len() * bits + 1) as libc::c_ulong;
    (mask, maxnode)
}

/// Sets the policy of `[addr, addr + len)` (page-aligned); pages touched afterwards follow it.
pub fn mbind(addr: *mut u8, len: usize, policy: &Policy) -> io::Result<()> {
    let (mode, nodes): (libc::c_long, &[u32]) = match policy {
        Policy::Local => (MPOL_DEFAULT, &[]),
        Policy::Bind(n) => (MPOL_BIND, n),
        Policy::Interleave(n) => (MPOL_INTERLEAVE, n),
    };
    let (mask, maxnode) = nodemask(nodes);
    let (mask_ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), maxnode)
    };
    // SAFETY: mbind only reads the mask (valid for maxnode - 1 bits) and changes the policy
    // of a range the caller owns.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            addr as libc::c_ulong,
            len as libc::c_ulong,
            mode,
            mask_ptr,
            maxnode,
            0 as libc::c_uint,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The node of each page in `pages` (addresses in this process), or `-errno` for a page
/// that is not there (-ENOENT: not allocated; -EFAULT: not mapped).
pub fn page_nodes(pages: &[*mut libc::c_void], status: &mut [libc::c_int]) -> io::Result<()> {
    assert_eq!(pages.len(), status.len());
    if pages.is_empty() {
        return Ok(());
    }
    // SAFETY: with a null node list move_pages only reports; both arrays hold `len` items.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as libc::c_int,
            pages.len() as libc::c_ulong,
            pages.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0 as libc::c_int,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Counts, per node, `samples` pages spread evenly over `[addr, addr + len)`. Pages not
/// present are counted under their negative errno.
pub fn sample_nodes(
    addr: *const u8,
    len: usize,
    page: usize,
    samples: usize,
) -> BTreeMap<i32, u64> {
    let pages = (len / page).max(1);
    let n = samples.clamp(1, pages);
    let addrs: Vec<*mut libc::c_void> = (0..n)
        .map(|i| addr.wrapping_add(i * pages / n * page) as *mut libc::c_void)
        .collect();
    let mut status = vec![0; n];
    let mut counts = BTreeMap::new();
    if page_nodes(&addrs, &mut status).is_ok() {
        for s in status {
            *counts.entry(s).or_insert(0) += 1;
        }
    }
    counts
}

/// Restricts the calling thread to `cpus`.
pub fn pin_to_cpus(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET stays within it (checked), and
    // sched_setaffinity reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
        for &c in cpus {
            if c >= capacity {
                return Err(io::Error::from_raw_os_error(libc::EINVAL));
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The CPUs this process may run on (its affinity, e.g. a cgroup's cpuset or `taskset`).
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    // SAFETY: sched_getaffinity fills the zeroed set; CPU_ISSET reads within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(io::Error::last_os_error());
        }
        let capacity = 8 * std::mem::size_of::<libc::cpu_set_t>();
        Ok((0..capacity)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_masks_carry_the_extra_bit() {
        let (mask, maxnode) = nodemask(&[0, 3]);
        assert_eq!(mask, [0b1001]);
        assert_eq!(maxnode, 65);
        let (mask, maxnode) = nodemask(&[64]);
        assert_eq!(mask, [0, 1]);
        assert_eq!(maxnode, 129);
    }

    #[test]
    fn policies_describe_themselves_as_numa_maps_does() {
        assert_eq!(Policy::Local.describe(), "local");
        assert_eq!(Policy::Bind(vec![1]).describe(), "bind:1");
        assert_eq!(
            Policy::Interleave(vec![0, 1, 2, 3]).describe(),
            "interleave:0-3"
        );
    }

    /// On the running machine: memory bound to the first node lands there, and
    /// move_pages finds every sampled page on it.
    #[test]
    fn bound_memory_lands_on_its_node() {
        let page = crate::sys::page_size();
        let len = 64 * page;
        // SAFETY: a fresh anonymous mapping, unmapped at the end.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        } as *mut u8;
        assert_ne!(p as *mut libc::c_void, libc::MAP_FAILED);
        let node =
            crate::mem::topology::read(&crate::storage::sysfs::SysRoot::host(), 0).nodes[0].id;
        mbind(p, len, &Policy::Bind(vec![node])).expect("mbind");
        let untouched = sample_nodes(p, len, page, 8);
        assert_eq!(untouched.values().sum::<u64>(), 8);
        assert!(!untouched.contains_key(&(node as i32)), "{untouched:?}");
        // SAFETY: p is valid for len bytes.
        unsafe { std::ptr::write_bytes(p, 1, len) };
        let counts = sample_nodes(p, len, page, 64);
        assert_eq!(counts.get(&(node as i32)), Some(&64), "{counts:?}");
        // SAFETY: mapped above.
        unsafe { libc::munmap(p as *mut libc::c_void, len) };
    }

    #[test]
    fn this_process_may_run_somewhere() {
        let cpus = allowed_cpus().unwrap();
        assert!(!cpus.is_empty());
    }
}
