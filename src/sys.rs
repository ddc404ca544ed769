//! Thin, safe wrappers over the Linux calls dbio needs outside the engines: direct-I/O
//! alignment, block device facts, aligned buffers, process CPU time, mount and unmount.

use std::alloc::{self, Layout};
use std::ffi::{CStr, CString};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What this binary is, as `dbio --version` prints it after "dbio ": the version, the git
/// commit it was built from, the target and the oldest glibc it runs on (build.rs).
pub const VERSION_LINE: &str = env!("DBIO_LONG_VERSION");
/// The git commit this binary was built from, or "unknown" (built outside a checkout).
pub const BUILD_COMMIT: &str = env!("DBIO_COMMIT");
/// The target triple this binary was built for.
pub const BUILD_TARGET: &str = env!("DBIO_TARGET");

/// The oldest glibc this binary runs on ("2.17" for the portable build), where known.
pub fn glibc_floor() -> Option<&'static str> {
    Some(env!("DBIO_GLIBC_FLOOR")).filter(|v| !v.is_empty())
}

/// A glibc version ("2.17", "glibc 2.36", "2.35.0") as (major, minor), compared as numbers.
pub fn glibc_version(text: &str) -> Option<(u32, u32)> {
    let v = text.trim().rsplit(' ').next()?;
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Nanoseconds on the monotonic scale. Every timestamp in dbio comes from here: the TSC
/// where the kernel itself keeps time with it, else CLOCK_MONOTONIC (see `clock`).
#[inline(always)]
pub fn now_ns() -> u64 {
    crate::clock::now_ns()
}

/// What O_DIRECT requires of buffers and offsets on a file, and where we learned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DioAlignment {
    /// Required alignment of the memory buffer, bytes.
    pub mem_align: u32,
    /// Required alignment of file offsets and lengths, bytes.
    pub offset_align: u32,
    /// "statx" (STATX_DIOALIGN), "logical_block_size" (the device's), or "default".
    pub source: &'static str,
}

/// Finds the direct-I/O alignment of `path`: statx(STATX_DIOALIGN) when the file system
/// reports it, else the logical block size of the device underneath, else 512.
pub fn dio_alignment(path: &Path) -> DioAlignment {
    if let Some((mem, off)) = statx_dio(path)
        && mem > 0
        && off > 0
    {
        return DioAlignment {
            mem_align: mem,
            offset_align: off,
            source: "statx",
        };
    }
    if let Some(lbs) = logical_block_size(path) {
        return DioAlignment {
            mem_align: lbs,
            offset_align: lbs,
            source: "logical_block_size",
        };
    }
    DioAlignment {
        mem_align: 512,
        offset_align: 512,
        source: "default",
    }
}

/// [`dio_alignment`] of an open file (`path` names it, for the device fallback): an
/// unnamed file has no path to ask about.
pub fn dio_alignment_of(file: &File, path: &Path) -> DioAlignment {
    if let Some((mem, off)) = statx_dio_at(file.as_raw_fd(), c"", libc::AT_EMPTY_PATH)
        && mem > 0
        && off > 0
    {
        return DioAlignment {
            mem_align: mem,
            offset_align: off,
            source: "statx",
        };
    }
    let parent = path.parent().unwrap_or(path);
    let lbs = logical_block_size(path).or_else(|| logical_block_size(parent));
    match lbs {
        Some(lbs) => DioAlignment {
            mem_align: lbs,
            offset_align: lbs,
            source: "logical_block_size",
        },
        None => DioAlignment {
            mem_align: 512,
            offset_align: 512,
            source: "default",
        },
    }
}

fn statx_dio(path: &Path) -> Option<(u32, u32)> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    statx_dio_at(libc::AT_FDCWD, &c, 0)
}

fn statx_dio_at(dirfd: libc::c_int, c: &std::ffi::CStr, flags: libc::c_int) -> Option<(u32, u32)> {
    let stx = statx(dirfd, c, flags, libc::STATX_DIOALIGN).ok()?;
    if stx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return None;
    }
    Some((stx.stx_dio_mem_align, stx.stx_dio_offset_align))
}

/// Logical block size of the block device `path` is (or lives on).
pub fn logical_block_size(path: &Path) -> Option<u32> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let md = std::fs::metadata(path).ok()?;
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let base = format!("/sys/dev/block/{major}:{minor}");
    for rel in ["queue/logical_block_size", "../queue/logical_block_size"] {
        if let Ok(s) = std::fs::read_to_string(format!("{base}/{rel}"))
            && let Ok(v) = s.trim().parse::<u32>()
        {
            return Some(v);
        }
    }
    None
}

/// Who a file is: device, inode and birth time. A file deleted and created again may get
/// the same inode number, but not the same birth time — unless both happened within one
/// tick of the file system's clock (a few ms). Such a file belongs to whoever replaced
/// it, and dbio writes only into files of its own user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
    /// Birth time in ns since the epoch, where the file system records it.
    pub btime_ns: Option<u64>,
}

impl FileId {
    /// Whether `other` is the same file (birth times compared when both are known).
    pub fn same_file(&self, other: &FileId) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && match (self.btime_ns, other.btime_ns) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// The identity of the file at `path` (not following a final symlink), with its size.
pub fn file_id(path: &Path) -> io::Result<(FileId, u64)> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    statx_id(libc::AT_FDCWD, &c, libc::AT_SYMLINK_NOFOLLOW)
}

/// The identity of an open file, with its size.
pub fn file_id_of(file: &File) -> io::Result<(FileId, u64)> {
    statx_id(file.as_raw_fd(), c"", libc::AT_EMPTY_PATH)
}

fn statx_id(
    dirfd: libc::c_int,
    path: &std::ffi::CStr,
    flags: libc::c_int,
) -> io::Result<(FileId, u64)> {
    let mask = libc::STATX_INO | libc::STATX_SIZE | libc::STATX_BTIME;
    let stx = statx(dirfd, path, flags, mask)?;
    let btime_ns = (stx.stx_mask & libc::STATX_BTIME != 0)
        .then(|| stx.stx_btime.tv_sec as u64 * 1_000_000_000 + u64::from(stx.stx_btime.tv_nsec));
    let dev = libc::makedev(stx.stx_dev_major, stx.stx_dev_minor);
    Ok((
        FileId {
            dev,
            ino: stx.stx_ino,
            btime_ns,
        },
        stx.stx_size,
    ))
}

/// statx(2), issued as a system call: glibc wraps it only from 2.28 on, and the portable
/// build needs nothing newer than glibc 2.17. On a kernel without statx (before 4.11) the
/// basic fields come from fstatat instead, with no birth time and no direct-I/O alignment
/// (`stx_mask` says which fields are there, as the kernel's own statx does).
pub fn statx(
    dirfd: libc::c_int,
    path: &std::ffi::CStr,
    flags: libc::c_int,
    mask: u32,
) -> io::Result<libc::statx> {
    // SAFETY: zeroed statx is a valid value; pointers are valid for the call.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    let rc = unsafe {
        libc::syscall(
            libc::SYS_statx,
            dirfd,
            path.as_ptr(),
            flags,
            mask,
            &mut stx as *mut libc::statx,
        )
    };
    if rc == 0 {
        return Ok(stx);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() != Some(libc::ENOSYS) {
        return Err(e);
    }
    statx_from_fstatat(dirfd, path, flags)
}

/// What statx gives, from fstatat: the basic fields, on kernels older than statx.
fn statx_from_fstatat(
    dirfd: libc::c_int,
    path: &std::ffi::CStr,
    flags: libc::c_int,
) -> io::Result<libc::statx> {
    let flags = flags & (libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW);
    // SAFETY: zeroed stat64 is a valid value; pointers are valid for the call.
    let mut st: libc::stat64 = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat64(dirfd, path.as_ptr(), &mut st, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    stx.stx_mask = libc::STATX_BASIC_STATS;
    stx.stx_blksize = st.st_blksize as u32;
    stx.stx_nlink = st.st_nlink as u32;
    stx.stx_uid = st.st_uid;
    stx.stx_gid = st.st_gid;
    stx.stx_mode = st.st_mode as u16;
    stx.stx_ino = st.st_ino;
    stx.stx_size = st.st_size as u64;
    stx.stx_blocks = st.st_blocks as u64;
    stx.stx_atime.tv_sec = st.st_atime;
    stx.stx_atime.tv_nsec = st.st_atime_nsec as u32;
    stx.stx_mtime.tv_sec = st.st_mtime;
    stx.stx_mtime.tv_nsec = st.st_mtime_nsec as u32;
    stx.stx_ctime.tv_sec = st.st_ctime;
    stx.stx_ctime.tv_nsec = st.st_ctime_nsec as u32;
    stx.stx_rdev_major = libc::major(st.st_rdev);
    stx.stx_rdev_minor = libc::minor(st.st_rdev);
    stx.stx_dev_major = libc::major(st.st_dev);
    stx.stx_dev_minor = libc::minor(st.st_dev);
    Ok(stx)
}

/// renameat2(2) with `flags`, issued as a system call (glibc wraps it only from 2.28 on).
/// A kernel without it (before 3.15) answers ENOSYS.
pub fn renameat2(
    olddirfd: libc::c_int,
    old: &std::ffi::CStr,
    newdirfd: libc::c_int,
    new: &std::ffi::CStr,
    flags: libc::c_uint,
) -> io::Result<()> {
    // SAFETY: valid descriptors and C strings for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            olddirfd,
            old.as_ptr(),
            newdirfd,
            new.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Size in bytes of an open block device (BLKGETSIZE64).
pub fn block_device_size(file: &File) -> io::Result<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 into `size`.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKGETSIZE64 as _, &mut size) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size)
}

/// Logical block size in bytes of an open block device (BLKSSZGET): the smallest unit it
/// addresses.
pub fn block_device_logical_size(file: &File) -> io::Result<u32> {
    const BLKSSZGET: libc::c_ulong = 0x1268;
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int into `size`.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKSSZGET as _, &mut size) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(size.max(0) as u32)
}

/// The memory page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if v > 0 { v as usize } else { 4096 }
}

/// A heap buffer with a chosen alignment, for O_DIRECT. Zero-filled on creation.
pub struct AlignedBuf {
    ptr: *mut u8,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Bytes the allocator may take beyond `len` for an alignment of `align`.
    pub fn overhead(align: usize) -> u64 {
        align.max(64) as u64
    }

    /// Bytes [`AlignedBuf::new`] takes for `len` bytes aligned to `align`.
    pub fn footprint(len: usize, align: usize) -> u64 {
        len.max(1) as u64 + AlignedBuf::overhead(align)
    }

    /// Allocates `len` bytes aligned to `align` (a power of two).
    pub fn new(len: usize, align: usize) -> io::Result<AlignedBuf> {
        let layout = Layout::from_size_align(len.max(1), align.max(1))
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad buffer layout"))?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(io::Error::from_raw_os_error(libc::ENOMEM));
        }
        Ok(AlignedBuf { ptr, layout })
    }
    pub fn len(&self) -> usize {
        self.layout.size()
    }
    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }
    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.ptr
    }
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the lifetime of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.layout.size()) }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and we hold &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this layout.
        unsafe { alloc::dealloc(self.ptr, self.layout) }
    }
}

/// Zero-filled memory whose pages take no physical memory until they are written: an
/// anonymous private mapping (the kernel hands out a page on its first write; reads of an
/// untouched page see the shared zero page). For large tables of counters of which a run
/// touches only a few rows (latency histograms), resident memory is what is used, not what
/// could be.
pub struct ZeroedPages {
    ptr: *mut u8,
    len: usize,
    /// The heap fallback rather than a mapping.
    heap: bool,
}

// SAFETY: ZeroedPages owns its mapping exclusively, like a Vec<u8>.
unsafe impl Send for ZeroedPages {}
unsafe impl Sync for ZeroedPages {}

impl ZeroedPages {
    /// Bytes a mapping of `len` bytes takes at most: whole pages.
    pub fn footprint(len: usize) -> usize {
        len.max(1).div_ceil(page_size()) * page_size()
    }

    /// Maps `len` zero bytes (rounded up to whole pages), aligned to the page size. Where
    /// the kernel refuses a mapping, zeroed heap memory instead (resident at once); where
    /// that fails too, the process aborts as on any failed allocation.
    pub fn new(len: usize) -> ZeroedPages {
        let len = ZeroedPages::footprint(len);
        // SAFETY: a fresh anonymous mapping; no address hint, no descriptor.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr != libc::MAP_FAILED {
            return ZeroedPages {
                ptr: ptr.cast(),
                len,
                heap: false,
            };
        }
        let layout = ZeroedPages::heap_layout(len);
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            alloc::handle_alloc_error(layout);
        }
        ZeroedPages {
            ptr,
            len,
            heap: true,
        }
    }

    fn heap_layout(len: usize) -> Layout {
        Layout::from_size_align(len, page_size()).expect("page-aligned layout")
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }
}

impl Drop for ZeroedPages {
    fn drop(&mut self) {
        // SAFETY: mapped (or allocated) in new() with this length.
        unsafe {
            if self.heap {
                alloc::dealloc(self.ptr, ZeroedPages::heap_layout(self.len));
            } else {
                libc::munmap(self.ptr.cast(), self.len);
            }
        }
    }
}

/// CPU seconds (user, system) used by this process so far, all threads.
pub fn process_cpu_seconds() -> (f64, f64) {
    // SAFETY: zeroed rusage is valid; getrusage fills it.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

/// Fills `buf` with pseudo-random bytes (wyrand), fast enough to keep up with any device
/// when preparing a data set. Incompressible for storage arrays.
pub fn fill_random(buf: &mut [u8], state: &mut u64) {
    let mut chunks = buf.chunks_exact_mut(8);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&wyrand(state).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let v = wyrand(state).to_le_bytes();
        let n = rest.len();
        rest.copy_from_slice(&v[..n]);
    }
}

#[inline]
fn wyrand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0xa076_1d64_78bd_642f);
    let t = (*state as u128).wrapping_mul((*state ^ 0xe703_7ed1_a0b4_28db) as u128);
    (t >> 64) as u64 ^ t as u64
}

/// Whether `path` is a block device.
pub fn is_block_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path)
        .map(|m| m.file_type().is_block_device())
        .unwrap_or(false)
}

/// Which process `pid` is, beyond its number (numbers are reused): this boot's id and the
/// process's start time in clock ticks since boot, as `BOOT_ID/TICKS`. None when no such
/// process runs (or it is a zombie).
pub fn process_identity(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the parenthesised command name: state is field 3, start time field 22.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) {
        return None;
    }
    let ticks = fields.get(19)?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    Some(format!("{}/{ticks}", boot.trim()))
}

/// The current UTC time as RFC 3339 with seconds: `2026-11-21T10:00:00Z`.
pub fn utc_now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Bytes available to unprivileged users on the file system holding `path`; `None` when
/// the file system keeps no account of space (ramfs).
pub fn free_bytes(path: &Path) -> io::Result<Option<u64>> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: zeroed statvfs is valid; statvfs fills it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    if st.f_blocks == 0 {
        return Ok(None);
    }
    Ok(Some(st.f_bavail as u64 * st.f_frsize as u64))
}

/// Takes an exclusive, non-blocking flock on `file`. `Ok(false)` when someone else holds it.
pub fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    // SAFETY: flock on a valid fd.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// Gives the calling thread a file descriptor table of its own (a copy of the process's),
/// as each database process has. The kernel then looks a descriptor up without taking a
/// reference to its file on every call, as in a single-threaded program: with a shared
/// table each pread pays an atomic increment and decrement of the file's count.
pub fn private_fd_table() -> io::Result<()> {
    // SAFETY: unshare(CLONE_FILES) affects only the calling thread's descriptor table.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Drops the clean cached pages of the file open as `fd` from the page cache
/// (`posix_fadvise(DONTNEED)` over the whole file): its next reads come from the storage.
/// Advice only; a failure changes nothing and is not reported.
pub fn drop_cached_pages(fd: std::os::fd::RawFd) {
    // SAFETY: advice on a descriptor; a bad one fails with EBADF.
    unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) };
}

/// How often a run drops its files' pages from the page cache while its reads must come
/// from the storage (a database's table under `dbio pg`/`dbio mysql`, a `--like postgres`
/// data set): often enough that few reads find a page another read brought in.
pub const DROP_PAGES_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// One pass of [`drop_cached_pages`] over `fds` every [`DROP_PAGES_EVERY`] until `over`
/// is set (a thread of its own; never per request).
pub fn drop_cached_pages_until(fds: &[std::os::fd::RawFd], over: &std::sync::atomic::AtomicBool) {
    while !over.load(std::sync::atomic::Ordering::Relaxed) {
        for &fd in fds {
            drop_cached_pages(fd);
        }
        std::thread::sleep(DROP_PAGES_EVERY);
    }
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is an empty set; CPU_SET and sched_setaffinity get valid
    // pointers to it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// mount(2): `source` mounted on `target` as a file system of `kind` with `flags` and the
/// file system's own options `data`; each of `source`, `kind` and `data` may be left out
/// (None), as mount(2) allows for a bind or a change of propagation.
pub fn mount(
    source: Option<&CStr>,
    target: &CStr,
    kind: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> io::Result<()> {
    let ptr = |c: Option<&CStr>| c.map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is a valid C string or null, as mount(2) allows.
    let rc = unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(kind),
            flags,
            ptr(data).cast(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// umount2(2): what is mounted on `target` unmounted, with `flags` (0, or `MNT_DETACH`
/// to detach it lazily).
pub fn umount(target: &CStr, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: a valid C string.
    if unsafe { libc::umount2(target.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Processes in a mount namespace other than this process's that still have device
/// `rdev` mounted (a namespace made while it was mounted keeps a copy of the mount, and
/// with it the file system, after it is unmounted here): one "process PID (COMM)" for each
/// such namespace.
pub fn mounts_elsewhere(rdev: u64) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let wanted = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let ns = |pid: &str| std::fs::metadata(format!("/proc/{pid}/ns/mnt")).map(|m| m.ino());
    let Ok(mine) = ns("self") else {
        return Vec::new();
    };
    let mut seen = vec![mine];
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in procs.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(id) = ns(pid) else { continue };
        if seen.contains(&id) {
            continue;
        }
        seen.push(id);
        let info = std::fs::read_to_string(format!("/proc/{pid}/mountinfo")).unwrap_or_default();
        if info
            .lines()
            .any(|l| l.split_whitespace().nth(2) == Some(wanted.as_str()))
        {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            out.push(format!("process {pid} ({})", comm.trim()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tmpfs copied into a mount namespace of its own (a process made while it was
    /// mounted) and then unmounted here is found in that process's namespace. Root only.
    #[test]
    fn a_mount_another_namespace_keeps_is_found() {
        use std::io::BufRead;
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::MetadataExt;
        use std::process::Stdio;
        if crate::safety::fs::effective_uid() != 0 {
            stderr_line!("skipped: mounting needs root");
            return;
        }
        // A new private directory (never a name in /tmp someone could have put a link at),
        // mounted with the syscall: no program is run for it.
        let dir = tempfile::tempdir().unwrap();
        let target = std::ffi::CString::new(dir.path().as_os_str().as_bytes()).unwrap();
        let kind = c"tmpfs";
        mount(
            Some(c"dbio-ns-test"),
            &target,
            Some(kind),
            0,
            Some(c"size=1m"),
        )
        .unwrap();
        let rdev = std::fs::metadata(dir.path()).unwrap().dev();
        assert!(mounts_elsewhere(rdev).is_empty());
        // unshare as every program dbio starts: checked (owner, write bits) before it runs.
        let find = crate::safety::exec::Program::find;
        let (Ok(Some(unshare)), Ok(Some(sh))) = (find("unshare"), find("sh")) else {
            umount(&target, 0).unwrap();
            stderr_line!("skipped: no unshare");
            return;
        };
        // The copies of loop-device mounts (other tests' file systems) are let go of at
        // once, so that this namespace keeps none of them busy.
        let script = "for m in $(awk '$1 ~ /^\\/dev\\/loop/ {print $2}' /proc/self/mounts); do umount -l \"$m\"; done; echo ready; exec sleep 30";
        let mut child = unshare
            .command()
            .args(["--mount", "--propagation", "private", "--"])
            .arg(sh.path())
            .args(["-c", script])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready");
        umount(&target, 0).unwrap();
        let found = mounts_elsewhere(rdev);
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            found
                .iter()
                .any(|p| p.starts_with(&format!("process {} (", child.id()))),
            "{found:?}"
        );
    }

    #[test]
    fn clock_moves_forward() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
    }

    #[test]
    fn aligned_buffers_are_aligned() {
        for align in [512usize, 4096, 65536] {
            let b = AlignedBuf::new(8192, align).unwrap();
            assert_eq!(b.as_mut_ptr() as usize % align, 0);
            assert_eq!(b.len(), 8192);
        }
    }

    #[test]
    fn random_fill_does_not_repeat() {
        let mut state = 1;
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        fill_random(&mut a, &mut state);
        fill_random(&mut b, &mut state);
        assert_ne!(a, b);
        assert!(a.iter().filter(|&&x| x == 0).count() < 100);
    }

    #[test]
    fn dio_alignment_of_tmp_is_sane() {
        let a = dio_alignment(Path::new("/tmp"));
        assert!(a.mem_align.is_power_of_two() && a.offset_align.is_power_of_two());
    }

    #[test]
    fn statx_and_its_fstatat_fallback_agree_on_the_basic_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 12_345]).unwrap();
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        let file = File::open(&path).unwrap();
        let fd = file.as_raw_fd();
        let cases = [
            (libc::AT_FDCWD, c.as_c_str(), libc::AT_SYMLINK_NOFOLLOW),
            (fd, c"", libc::AT_EMPTY_PATH),
        ];
        for (dirfd, name, flags) in cases {
            let a = statx(dirfd, name, flags, libc::STATX_BASIC_STATS).unwrap();
            let b = statx_from_fstatat(dirfd, name, flags).unwrap();
            assert_eq!(a.stx_size, 12_345);
            assert_eq!(b.stx_size, 12_345);
            assert_eq!(
                (a.stx_ino, a.stx_mode, a.stx_nlink),
                (b.stx_ino, b.stx_mode, b.stx_nlink)
            );
            assert_eq!((a.stx_uid, a.stx_gid), (b.stx_uid, b.stx_gid));
            assert_eq!(
                (a.stx_dev_major, a.stx_dev_minor),
                (b.stx_dev_major, b.stx_dev_minor)
            );
            assert_eq!(a.stx_mtime.tv_sec, b.stx_mtime.tv_sec);
            assert_eq!(
                b.stx_mask & libc::STATX_BTIME,
                0,
                "fstatat has no birth time"
            );
        }
        let missing = CString::new(dir.path().join("nothing").as_os_str().as_bytes()).unwrap();
        let e = statx(libc::AT_FDCWD, &missing, 0, libc::STATX_INO).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        let e = statx_from_fstatat(libc::AT_FDCWD, &missing, 0).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn renameat2_no_replace_keeps_an_existing_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), "a").unwrap();
        std::fs::write(dir.path().join("b"), "b").unwrap();
        let d = File::open(dir.path()).unwrap();
        let fd = d.as_raw_fd();
        let e = renameat2(fd, c"a", fd, c"b", libc::RENAME_NOREPLACE).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
        assert_eq!(std::fs::read_to_string(dir.path().join("b")).unwrap(), "b");
        renameat2(fd, c"a", fd, c"c", libc::RENAME_NOREPLACE).unwrap();
        assert!(!dir.path().join("a").exists());
        assert_eq!(std::fs::read_to_string(dir.path().join("c")).unwrap(), "a");
    }

    #[test]
    fn glibc_versions_compare_as_numbers() {
        assert_eq!(glibc_version("2.17"), Some((2, 17)));
        assert_eq!(glibc_version("glibc 2.36"), Some((2, 36)));
        assert_eq!(glibc_version("2.35.0"), Some((2, 35)));
        assert_eq!(glibc_version("ldd (GNU libc) 2.17"), Some((2, 17)));
        assert!(glibc_version("2.9") < glibc_version("2.17"));
        assert_eq!(glibc_version("musl"), None);
        // What this binary says of itself agrees with build.rs.
        if let Some(floor) = glibc_floor() {
            assert!(glibc_version(floor).is_some(), "{floor}");
            assert!(
                VERSION_LINE.ends_with(&format!(", glibc >= {floor})")),
                "{VERSION_LINE}"
            );
        }
        assert!(VERSION_LINE.starts_with(env!("CARGO_PKG_VERSION")));
        assert!(VERSION_LINE.contains(&format!("(commit {BUILD_COMMIT}, ")));
    }
}
