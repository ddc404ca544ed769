//! The memory a measurement runs over: an anonymous mapping backed by the page size asked
//! for, placed by a NUMA policy set before any page exists, and faulted in whole before any
//! timing starts (so no page fault is ever timed).

use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::numa::{self, Policy};

/// Transparent huge pages are this size on x86_64 and most arm64 kernels.
pub const THP_BYTES: usize = 2 << 20;

/// Bytes faulted in between two looks at the stop flag: a few ms of work even in a debug
/// build, so that a signal ends the filling of a buffer of many GiB at once.
const FILL_CHUNK: usize = 8 << 20;

/// The pages behind a buffer (`--pages`).
pub use crate::options::mem::PageKind;

/// One mapped, populated buffer. Unmapped when dropped.
pub struct Buffer {
    base: *mut u8,
    len: usize,
    kind: PageKind,
}

// SAFETY: the buffer owns its mapping; threads that share it only read it (or write
// disjoint parts before it is shared).
unsafe impl Send for Buffer {}
unsafe impl Sync for Buffer {}

impl Buffer {
    /// Maps `len` bytes (rounded up to whole pages) of `kind` pages (`huge_page_bytes` for
    /// hugetlb), applies `policy` and faults every page in. None (and nothing left mapped)
    /// when `stop` is set before every page is in.
    pub fn new(
        len: usize,
        kind: PageKind,
        huge_page_bytes: usize,
        policy: &Policy,
        stop: &AtomicBool,
    ) -> io::Result<Option<Buffer>> {
        let page = match kind {
            PageKind::Huge => huge_page_bytes.max(crate::sys::page_size()),
            _ => crate::sys::page_size(),
        };
        let len = len
            .checked_next_multiple_of(page)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        let mut b = match kind {
            PageKind::Huge => {
                let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB;
                Buffer {
                    base: map(len, flags)?,
                    len,
                    kind,
                }
            }
            PageKind::Base => {
                let b = Buffer {
                    base: map(len, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS)?,
                    len,
                    kind,
                };
                // Where THP is "always", keep the base pages that were asked for.
                b.advise(libc::MADV_NOHUGEPAGE)?;
                b
            }
            PageKind::Thp => Buffer::thp_aligned(len)?,
        };
        if *policy != Policy::Local {
            numa::mbind(b.base, b.len, policy)?;
        }
        b.kind = kind;
        if !b.populate(page, stop)? {
            return Ok(None);
        }
        Ok(Some(b))
    }

    /// A mapping aligned to the huge page size (so every 2 MiB of it can be one page),
    /// marked MADV_HUGEPAGE.
    fn thp_aligned(len: usize) -> io::Result<Buffer> {
        let len = len.next_multiple_of(THP_BYTES);
        let raw = map(len + THP_BYTES, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS)?;
        let start = (raw as usize).next_multiple_of(THP_BYTES);
        let head = start - raw as usize;
        let tail = THP_BYTES - head;
        // SAFETY: both pieces lie inside the mapping just made and are not used.
        unsafe {
            if head > 0 {
                libc::munmap(raw as *mut libc::c_void, head);
            }
            if tail > 0 {
                libc::munmap((start + len) as *mut libc::c_void, tail);
            }
        }
        let b = Buffer {
            base: start as *mut u8,
            len,
            kind: PageKind::Thp,
        };
        b.advise(libc::MADV_HUGEPAGE)?;
        Ok(b)
    }

    fn advise(&self, advice: libc::c_int) -> io::Result<()> {
        // SAFETY: the range is this buffer's own mapping.
        if unsafe { libc::madvise(self.base as *mut libc::c_void, self.len, advice) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Faults every page in, writable, a chunk of whole `page`s at a time, looking at `stop`
    /// between chunks: false when stopped. MADV_POPULATE_WRITE (Linux 5.14) reports a
    /// failure (no free huge page on the bound node) as an error instead of a SIGBUS; older
    /// kernels get a write to every page.
    fn populate(&self, page: usize, stop: &AtomicBool) -> io::Result<bool> {
        let chunk = FILL_CHUNK.next_multiple_of(page);
        let mut madvise = true;
        for start in (0..self.len).step_by(chunk) {
            if stop.load(Relaxed) {
                return Ok(false);
            }
            let len = chunk.min(self.len - start);
            if madvise {
                // SAFETY: the range lies inside this buffer's own mapping.
                let rc = unsafe {
                    libc::madvise(
                        self.base.add(start) as *mut libc::c_void,
                        len,
                        libc::MADV_POPULATE_WRITE,
                    )
                };
                if rc == 0 {
                    continue;
                }
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINVAL) {
                    return Err(e);
                }
                madvise = false;
            }
            let step = crate::sys::page_size();
            for off in (start..start + len).step_by(step) {
                // SAFETY: inside the mapping.
                unsafe { self.base.add(off).write_volatile(0) };
            }
        }
        Ok(!stop.load(Relaxed))
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn kind(&self) -> PageKind {
        self.kind
    }

    /// The bytes of the buffer the kernel backs with huge pages: all of it for hugetlb, none
    /// for base pages, and for THP what /proc/self/smaps counts (AnonHugePages).
    pub fn huge_backed_bytes(&self) -> u64 {
        match self.kind {
            PageKind::Huge => self.len as u64,
            PageKind::Base => 0,
            PageKind::Thp => {
                let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
                anon_huge_bytes(
                    &smaps,
                    self.base as u64,
                    (self.base as u64) + self.len as u64,
                )
                .min(self.len as u64)
            }
        }
    }

    /// Pages of the buffer per node, from `samples` pages spread over it.
    pub fn placement(&self, samples: usize) -> std::collections::BTreeMap<i32, u64> {
        numa::sample_nodes(self.base, self.len, crate::sys::page_size(), samples)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // SAFETY: the buffer's own mapping, no longer used.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

fn map(len: usize, flags: libc::c_int) -> io::Result<*mut u8> {
    // SAFETY: a new anonymous mapping; nothing else refers to it.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

/// Sums `AnonHugePages` of the smaps entries overlapping `[start, end)`.
fn anon_huge_bytes(smaps: &str, start: u64, end: u64) -> u64 {
    let mut total = 0;
    let mut inside = false;
    for line in smaps.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = head.split_once('-')
            && let (Ok(a), Ok(b)) = (u64::from_str_radix(a, 16), u64::from_str_radix(b, 16))
        {
            inside = a < end && b > start;
            continue;
        }
        if inside && let Some(v) = line.strip_prefix("AnonHugePages:") {
            let kb: u64 = v
                .split_whitespace()
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            total += kb << 10;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smaps_huge_pages_are_summed_for_the_range_only() {
        let smaps = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0
Size:               4096 kB
AnonHugePages:      4096 kB
7f0000400000-7f0000600000 rw-p 00000000 00:00 0
AnonHugePages:      2048 kB
7f0000600000-7f0000601000 r--p 00000000 fe:00 1 /usr/lib/x
AnonHugePages:         0 kB
";
        assert_eq!(
            anon_huge_bytes(smaps, 0x7f00_0000_0000, 0x7f00_0040_0000),
            4 << 20
        );
        assert_eq!(
            anon_huge_bytes(smaps, 0x7f00_0000_0000, 0x7f00_0060_0000),
            6 << 20
        );
        assert_eq!(anon_huge_bytes(smaps, 0x1000, 0x2000), 0);
    }

    #[test]
    fn buffers_are_populated_and_placed() {
        let go = AtomicBool::new(false);
        let b = Buffer::new(1 << 20, PageKind::Base, 0, &Policy::Local, &go)
            .unwrap()
            .unwrap();
        assert_eq!(b.len(), 1 << 20);
        assert_eq!(b.huge_backed_bytes(), 0);
        let placed = b.placement(16);
        assert_eq!(placed.values().sum::<u64>(), 16);
        assert!(
            placed.keys().all(|&n| n >= 0),
            "every page present: {placed:?}"
        );
        let t = Buffer::new(3 << 20, PageKind::Thp, 0, &Policy::Local, &go)
            .unwrap()
            .unwrap();
        assert_eq!(t.as_ptr() as usize % THP_BYTES, 0);
        assert_eq!(t.len(), 4 << 20);
    }

    /// A stop before or while filling gives no buffer; every page of one not stopped is in.
    #[test]
    fn a_stop_ends_the_filling() {
        let stop = AtomicBool::new(true);
        assert!(
            Buffer::new(64 << 20, PageKind::Base, 0, &Policy::Local, &stop)
                .unwrap()
                .is_none()
        );
        stop.store(false, Relaxed);
        let b = Buffer::new(
            FILL_CHUNK * 2 + 4096,
            PageKind::Base,
            0,
            &Policy::Local,
            &stop,
        )
        .unwrap()
        .unwrap();
        let placed = b.placement(4096);
        assert!(placed.keys().all(|&n| n >= 0), "every page in: {placed:?}");
    }
}
