//! Linux native AIO (what Oracle uses on Linux): io_setup / io_submit / io_getevents /
//! io_destroy, called directly as raw syscalls (no libaio). One AIO context per session.
//!
//! Linux AIO is truly asynchronous only for O_DIRECT files; on buffered files io_submit
//! performs the I/O before returning. dbio times the submit call so the result can say so.

use std::io;
use std::os::fd::RawFd;

use super::{Completion, Engine, EngineKind, IoRequest, Op};
use crate::sys::now_ns;

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;
const IOCB_CMD_PREADV: u16 = 7;
const IOCB_CMD_PWRITEV: u16 = 8;

/// `struct iocb` from linux/aio_abi.h (little-endian layout).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event` from linux/aio_abi.h.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

type AioContext = libc::c_ulong;

fn io_setup(nr: u32) -> io::Result<AioContext> {
    let mut ctx: AioContext = 0;
    // SAFETY: io_setup writes the new context id into ctx.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_io_setup,
            nr as libc::c_long,
            &mut ctx as *mut AioContext,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ctx)
    }
}

fn io_destroy(ctx: AioContext) {
    // SAFETY: ctx came from io_setup and is destroyed once.
    unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
}

/// Checks that Linux AIO can be used here (a context of one can be created).
pub fn probe() -> Result<(), String> {
    match io_setup(1) {
        Ok(ctx) => {
            io_destroy(ctx);
            Ok(())
        }
        Err(e) => Err(match e.raw_os_error() {
            Some(libc::ENOSYS) => "the kernel has no AIO support (CONFIG_AIO off)".into(),
            Some(libc::EAGAIN) => {
                "fs.aio-max-nr is exhausted; raise it (sysctl -w fs.aio-max-nr=1048576)".into()
            }
            Some(libc::EPERM) => "blocked by a seccomp or security policy".into(),
            _ => format!("io_setup failed: {e}"),
        }),
    }
}

pub struct AioEngine {
    ctx: AioContext,
    fds: Vec<RawFd>,
    iocbs: Vec<Iocb>,
    ptrs: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    /// Submit time of the request in flight in each slot (tag).
    starts: Vec<u64>,
}

impl AioEngine {
    /// Bytes of its tables for `capacity` requests and of the completion ring the kernel
    /// maps into the process: at least 4 events per CPU, doubled (the kernel's ioctx_alloc),
    /// of 32 bytes each after a 32-byte header, in whole pages.
    pub fn footprint(capacity: usize) -> u64 {
        let capacity = capacity.max(1);
        let per_request = std::mem::size_of::<Iocb>()
            + std::mem::size_of::<*mut Iocb>()
            + std::mem::size_of::<IoEvent>()
            + std::mem::size_of::<u64>();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let events = capacity.max(4 * cpus) * 2;
        let ring = ((events + 1) * 32).div_ceil(4096) * 4096;
        (capacity * per_request + ring) as u64
    }

    pub fn new(files: &[RawFd], capacity: usize) -> io::Result<AioEngine> {
        let capacity = capacity.max(1);
        let ctx = io_setup(capacity as u32).map_err(|e| {
            if e.raw_os_error() == Some(libc::EAGAIN) {
                io::Error::new(
                    e.kind(),
                    format!(
                        "io_setup({capacity}) failed: fs.aio-max-nr is exhausted ({e}); raise it (sysctl -w fs.aio-max-nr=1048576) or use fewer --sessions or a smaller --batch/--depth"
                    ),
                )
            } else {
                e
            }
        })?;
        Ok(AioEngine {
            ctx,
            fds: files.to_vec(),
            iocbs: vec![Iocb::default(); capacity],
            ptrs: vec![std::ptr::null_mut(); capacity],
            events: vec![IoEvent::default(); capacity],
            starts: vec![0; capacity],
        })
    }
}

impl Drop for AioEngine {
    fn drop(&mut self) {
        // io_destroy waits for requests still in flight, so buffers are not written after.
        io_destroy(self.ctx);
    }
}

impl Engine for AioEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Aio
    }

    fn features(&self) -> Vec<&'static str> {
        vec![
            "io_submit/io_getevents as raw system calls, one context per session, a batch in one io_submit",
        ]
    }

    /// A synchronous call beside the asynchronous ones, as the database makes for its
    /// synchronous events.
    #[inline]
    fn execute(&mut self, r: &IoRequest) -> Completion {
        // SAFETY: the caller's buffers are valid for the call (engine contract).
        unsafe { super::sync::call(self.fds[r.file as usize], r) }
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> io::Result<()> {
        if reqs.len() > self.iocbs.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "more requests than the engine's capacity",
            ));
        }
        let start = now_ns();
        for (i, r) in reqs.iter().enumerate() {
            let slot = r.tag as usize;
            let (opcode, buf, nbytes) = match (r.op, r.iov_count) {
                (Op::Read, 0) => (IOCB_CMD_PREAD, r.buf as u64, u64::from(r.len)),
                (Op::Write, 0) => (IOCB_CMD_PWRITE, r.buf as u64, u64::from(r.len)),
                (Op::Read, n) => (IOCB_CMD_PREADV, r.iov as u64, u64::from(n)),
                (Op::Write, n) => (IOCB_CMD_PWRITEV, r.iov as u64, u64::from(n)),
                (Op::Datasync, _) => (IOCB_CMD_FDSYNC, 0, 0),
                (Op::Fsync, _) => (IOCB_CMD_FSYNC, 0, 0),
            };
            self.iocbs[i] = Iocb {
                aio_data: r.tag,
                aio_lio_opcode: opcode,
                aio_fildes: self.fds[r.file as usize] as u32,
                aio_buf: buf,
                aio_nbytes: nbytes,
                aio_offset: r.offset as i64,
                ..Iocb::default()
            };
            self.ptrs[i] = &mut self.iocbs[i];
            self.starts[slot] = start;
        }
        let mut done = 0;
        while done < reqs.len() {
            // SAFETY: ptrs[done..len] point at initialised iocbs that live in self; the
            // kernel copies them during the call.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    (reqs.len() - done) as libc::c_long,
                    self.ptrs[done..].as_mut_ptr(),
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // Queue full: the caller keeps no more than capacity in flight, so this is
                    // transient; let completions drain.
                    Some(libc::EAGAIN) => std::thread::yield_now(),
                    _ => return Err(e),
                }
            } else {
                done += rc as usize;
            }
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut [Completion], timeout_ms: u32) -> io::Result<usize> {
        let max = out.len().min(self.events.len());
        let mut ts = libc::timespec {
            tv_sec: (timeout_ms / 1000) as libc::time_t,
            tv_nsec: ((timeout_ms % 1000) as libc::c_long) * 1_000_000,
        };
        let rc = loop {
            // SAFETY: events has room for `max` entries; ts is a valid timespec.
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_io_getevents,
                    self.ctx,
                    min.min(max) as libc::c_long,
                    max as libc::c_long,
                    self.events.as_mut_ptr(),
                    &mut ts as *mut libc::timespec,
                )
            };
            if rc < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break rc;
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let done_ns = now_ns();
        let n = rc as usize;
        for (o, ev) in out.iter_mut().zip(&self.events[..n]) {
            *o = Completion {
                tag: ev.data,
                result: ev.res,
                start_ns: self.starts[ev.data as usize],
                done_ns,
            };
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iocb_layout_matches_the_kernel() {
        assert_eq!(std::mem::size_of::<Iocb>(), 64);
        assert_eq!(std::mem::size_of::<IoEvent>(), 32);
        assert_eq!(std::mem::offset_of!(Iocb, aio_lio_opcode), 16);
        assert_eq!(std::mem::offset_of!(Iocb, aio_fildes), 20);
        assert_eq!(std::mem::offset_of!(Iocb, aio_buf), 24);
        assert_eq!(std::mem::offset_of!(Iocb, aio_offset), 40);
        assert_eq!(std::mem::offset_of!(Iocb, aio_flags), 56);
    }
}
