//! The synchronous engine: pread/pwrite for contiguous buffers, preadv/pwritev for vectored
//! ones, fdatasync (pread/pwrite as raw syscalls, the instruction itself on x86_64: glibc's
//! wrappers add a cancellation-point toggle per call in multi-threaded programs, and its
//! `syscall()` an errno round trip, measurable on a 1.5 µs read). Like fio's
//! `FIO_SYNCIO` engines it completes a request where it is issued: `execute` is the call
//! itself, timed; `submit` performs the requests one after another, each timed on its own,
//! and `reap` hands back what `submit` finished. [`call`] is also how the asynchronous
//! engines execute a synchronous call, as a database does beside its asynchronous I/O.

use std::io;
use std::os::fd::RawFd;

use super::{Completion, Engine, EngineKind, IoRequest, Op};
use crate::sys::now_ns;

/// A system call of four arguments. Returns its result, or a negative errno.
///
/// # Safety
/// The arguments must be valid for system call `nr`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn raw4(nr: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> i64 {
    let ret: i64;
    // SAFETY: the x86_64 system call convention: number and result in rax, arguments in
    // rdi, rsi, rdx, r10; the kernel clobbers rcx and r11. Memory is read or written only
    // as the call's arguments say, which the caller vouches for.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            in("r10") d,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn raw4(nr: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> i64 {
    // SAFETY: forwarded from the caller.
    let r = unsafe { libc::syscall(nr, a, b, c, d) };
    if r < 0 { -i64::from(errno()) } else { r as i64 }
}

/// One pread. Returns bytes read or a negative errno.
///
/// # Safety
/// `buf` must be valid for writes of `len` bytes.
#[inline]
pub unsafe fn read_at(fd: RawFd, buf: *mut u8, len: usize, offset: u64) -> i64 {
    // SAFETY: the caller owns `buf` for `len` bytes.
    unsafe {
        raw4(
            libc::SYS_pread64,
            fd as usize,
            buf as usize,
            len,
            offset as usize,
        )
    }
}

/// One pwrite. Returns bytes written or a negative errno.
///
/// # Safety
/// `buf` must be valid for reads of `len` bytes.
#[inline]
pub unsafe fn write_at(fd: RawFd, buf: *const u8, len: usize, offset: u64) -> i64 {
    // SAFETY: the caller owns `buf` for `len` bytes.
    unsafe {
        raw4(
            libc::SYS_pwrite64,
            fd as usize,
            buf as usize,
            len,
            offset as usize,
        )
    }
}

/// One preadv into separate buffers. Returns bytes read or a negative errno.
///
/// # Safety
/// `iov` must point at `count` iovecs whose buffers are valid for writes.
#[inline]
pub unsafe fn readv_at(fd: RawFd, iov: *const libc::iovec, count: u32, offset: u64) -> i64 {
    // SAFETY: the caller owns the iovecs and the buffers they point to.
    let r = unsafe { libc::preadv(fd, iov, count as libc::c_int, offset as libc::off_t) };
    if r < 0 { -i64::from(errno()) } else { r as i64 }
}

/// One pwritev from separate buffers. Returns bytes written or a negative errno.
///
/// # Safety
/// `iov` must point at `count` iovecs whose buffers are valid for reads.
#[inline]
pub unsafe fn writev_at(fd: RawFd, iov: *const libc::iovec, count: u32, offset: u64) -> i64 {
    // SAFETY: the caller owns the iovecs and the buffers they point to.
    let r = unsafe { libc::pwritev(fd, iov, count as libc::c_int, offset as libc::off_t) };
    if r < 0 { -i64::from(errno()) } else { r as i64 }
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// One fdatasync. Returns 0 or a negative errno.
pub fn datasync(fd: RawFd) -> i64 {
    // SAFETY: fdatasync takes any descriptor; a bad one fails with EBADF.
    if unsafe { libc::fdatasync(fd) } == 0 {
        0
    } else {
        -i64::from(errno())
    }
}

/// fsync(2) of `fd`: 0, or a negative errno.
pub fn fsync(fd: RawFd) -> i64 {
    // SAFETY: fsync takes any descriptor; a bad one fails with EBADF.
    if unsafe { libc::fsync(fd) } == 0 {
        0
    } else {
        -i64::from(errno())
    }
}

/// Performs one request synchronously. Returns bytes transferred (0 for a datasync) or a
/// negative errno.
///
/// # Safety
/// The request's buffers must be valid as the engine contract requires.
#[inline]
pub unsafe fn perform(fd: RawFd, r: &IoRequest) -> i64 {
    // SAFETY: forwarded from the caller.
    unsafe {
        match (r.op, r.iov_count) {
            (Op::Read, 0) => read_at(fd, r.buf, r.len as usize, r.offset),
            (Op::Write, 0) => write_at(fd, r.buf, r.len as usize, r.offset),
            (Op::Read, n) => readv_at(fd, r.iov, n, r.offset),
            (Op::Write, n) => writev_at(fd, r.iov, n, r.offset),
            (Op::Datasync, _) => datasync(fd),
            (Op::Fsync, _) => fsync(fd),
        }
    }
}

/// Performs one request synchronously on `fd` and times it: one clock reading before the
/// call, one after.
///
/// # Safety
/// The request's buffers must be valid for the call.
#[inline(always)]
pub unsafe fn call(fd: RawFd, r: &IoRequest) -> Completion {
    let start_ns = now_ns();
    // SAFETY: forwarded from the caller.
    let result = unsafe { perform(fd, r) };
    Completion {
        tag: r.tag,
        result,
        start_ns,
        done_ns: now_ns(),
    }
}

pub struct SyncEngine {
    fds: Vec<RawFd>,
    /// Completions performed by `submit`, not yet reaped (a FIFO in a fixed array).
    done: Vec<Completion>,
    head: usize,
    len: usize,
}

impl SyncEngine {
    /// Bytes of its table of `capacity` completions (see [`super::footprint`]).
    pub fn footprint(capacity: usize) -> u64 {
        (capacity.max(1) * std::mem::size_of::<Completion>()) as u64
    }

    pub fn new(files: &[RawFd], capacity: usize) -> SyncEngine {
        SyncEngine {
            fds: files.to_vec(),
            done: vec![Completion::default(); capacity.max(1)],
            head: 0,
            len: 0,
        }
    }
}

impl Engine for SyncEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Sync
    }

    fn features(&self) -> Vec<&'static str> {
        vec!["pread/pwrite (preadv/pwritev for multiblock requests), one call per request"]
    }

    #[inline]
    fn execute(&mut self, r: &IoRequest) -> Completion {
        // SAFETY: the caller's buffers are valid for the call (engine contract).
        unsafe { call(self.fds[r.file as usize], r) }
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> io::Result<()> {
        if self.len + reqs.len() > self.done.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "more requests than the engine's capacity",
            ));
        }
        for r in reqs {
            let slot = (self.head + self.len) % self.done.len();
            // SAFETY: buffers are valid until reaped (engine contract).
            self.done[slot] = unsafe { call(self.fds[r.file as usize], r) };
            self.len += 1;
        }
        Ok(())
    }

    fn reap(&mut self, _min: usize, out: &mut [Completion], _timeout_ms: u32) -> io::Result<usize> {
        let n = self.len.min(out.len());
        for o in out.iter_mut().take(n) {
            *o = self.done[self.head];
            self.head = (self.head + 1) % self.done.len();
        }
        self.len -= n;
        Ok(n)
    }
}
