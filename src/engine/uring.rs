//! io_uring (via the tokio-rs `io-uring` crate). One ring per session, created in the
//! session's own thread. Where the kernel allows, the data files are registered (no file
//! lookup per request) and the session's buffer region is registered (no page pinning per
//! O_DIRECT request); both fall back quietly to the plain forms, with a note in the result.

use std::io;
use std::os::fd::RawFd;

use io_uring::{IoUring, opcode, squeue, types};

use super::{Completion, Engine, EngineKind, IoRequest, Op};
use crate::sys::now_ns;

/// Checks that io_uring can be used here.
pub fn probe() -> Result<(), String> {
    match IoUring::new(2) {
        Ok(_) => Ok(()),
        Err(e) => {
            let disabled = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
                .ok()
                .map(|s| s.trim().to_string());
            Err(match (e.raw_os_error(), disabled.as_deref()) {
                (Some(libc::ENOSYS), _) => "the kernel has no io_uring (too old, or CONFIG_IO_URING off)".into(),
                (Some(libc::EPERM), Some("2")) => "disabled by sysctl kernel.io_uring_disabled=2".into(),
                (Some(libc::EPERM), Some("1")) => {
                    "restricted by sysctl kernel.io_uring_disabled=1 (only members of kernel.io_uring_group may use it)".into()
                }
                (Some(libc::EPERM), _) => "blocked by a seccomp or security policy (common in containers)".into(),
                _ => format!("io_uring_setup failed: {e}"),
            })
        }
    }
}

pub struct UringEngine {
    ring: IoUring,
    fds: Vec<RawFd>,
    fixed_files: bool,
    /// The registered buffer region (buffer index 0), if registration worked.
    fixed_buf: Option<(usize, usize)>,
    /// How the ring was set up.
    setup: &'static str,
    /// Submit time of the request in flight in each slot (tag).
    starts: Vec<u64>,
}

/// A ring of `entries`, and how it was set up (`config.engine_features`).
fn build_ring(entries: u32) -> io::Result<(IoUring, &'static str)> {
    // Single issuer + deferred task running cut per-request overhead on 6.1+ kernels; older
    // kernels reject the flags, so retry plainly.
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(entries)
        .map(|r| (r, "io_uring ring: single issuer, deferred task running"))
        .or_else(|_| {
            (IoUring::builder().setup_coop_taskrun().build(entries))
                .map(|r| (r, "io_uring ring: cooperative task running"))
        })
        .or_else(|_| IoUring::new(entries).map(|r| (r, "io_uring ring: plain setup")))
}

impl UringEngine {
    /// Submission queue entries of a ring for `capacity` requests in flight.
    fn entries(capacity: usize) -> u32 {
        (capacity.max(1) as u32).next_power_of_two().max(8)
    }

    /// Bytes of its table for `capacity` requests and of the rings the kernel maps into the
    /// process: 64-byte submission entries with a 4-byte index each, twice as many 16-byte
    /// completion entries, each ring in whole pages after a page of header.
    pub fn footprint(capacity: usize) -> u64 {
        let entries = UringEngine::entries(capacity) as usize;
        let pages = |b: usize| b.div_ceil(4096) * 4096;
        let rings =
            pages(entries * 64) + pages(4096 + entries * 4) + pages(4096 + entries * 2 * 16);
        (capacity.max(1) * std::mem::size_of::<u64>() + rings) as u64
    }

    pub fn new(
        files: &[RawFd],
        capacity: usize,
        buffers: Option<(*mut u8, usize)>,
    ) -> io::Result<(UringEngine, Option<String>)> {
        let capacity = capacity.max(1);
        let (ring, setup) = build_ring(UringEngine::entries(capacity))?;
        let mut notes = Vec::new();
        // A session without files of its own (the redo test's foreground sessions, which
        // only wait on LGWR) has nothing to register: the kernel refuses an empty table
        // with EINVAL, which used to show as a note on every redo run.
        let fixed_files = !files.is_empty()
            && match ring.submitter().register_files(files) {
                Ok(()) => true,
                Err(e) => {
                    notes.push(format!("io_uring: files not registered ({e})"));
                    false
                }
            };
        let mut fixed_buf = None;
        if let Some((ptr, len)) = buffers {
            let iov = [libc::iovec {
                iov_base: ptr.cast(),
                iov_len: len,
            }];
            // SAFETY: the region belongs to the session, outlives the engine (the session
            // drops the engine first) and is not freed while registered.
            match unsafe { ring.submitter().register_buffers(&iov) } {
                Ok(()) => fixed_buf = Some((ptr as usize, len)),
                Err(e) => notes.push(format!(
                    "io_uring: buffers not registered ({e}; RLIMIT_MEMLOCK too low?), plain reads/writes used"
                )),
            }
        }
        let note = if notes.is_empty() {
            None
        } else {
            Some(notes.join("; "))
        };
        Ok((
            UringEngine {
                ring,
                fds: files.to_vec(),
                fixed_files,
                fixed_buf,
                setup,
                starts: vec![0; capacity],
            },
            note,
        ))
    }

    fn entry(&self, r: &IoRequest) -> squeue::Entry {
        let fixed_buf = match self.fixed_buf {
            Some((base, len)) => {
                let p = r.buf as usize;
                r.iov_count == 0 && p >= base && p + r.len as usize <= base + len
            }
            None => false,
        };
        macro_rules! build {
            ($fd:expr) => {
                match (r.op, r.iov_count, fixed_buf) {
                    (Op::Read, 0, true) => opcode::ReadFixed::new($fd, r.buf, r.len, 0)
                        .offset(r.offset)
                        .build(),
                    (Op::Read, 0, false) => opcode::Read::new($fd, r.buf, r.len)
                        .offset(r.offset)
                        .build(),
                    (Op::Write, 0, true) => opcode::WriteFixed::new($fd, r.buf, r.len, 0)
                        .offset(r.offset)
                        .build(),
                    (Op::Write, 0, false) => opcode::Write::new($fd, r.buf, r.len)
                        .offset(r.offset)
                        .build(),
                    (Op::Read, n, _) => opcode::Readv::new($fd, r.iov, n).offset(r.offset).build(),
                    (Op::Write, n, _) => {
                        opcode::Writev::new($fd, r.iov, n).offset(r.offset).build()
                    }
                    (Op::Datasync, _, _) => opcode::Fsync::new($fd)
                        .flags(types::FsyncFlags::DATASYNC)
                        .build(),
                    (Op::Fsync, _, _) => opcode::Fsync::new($fd).build(),
                }
            };
        }
        let e = if self.fixed_files {
            build!(types::Fixed(r.file))
        } else {
            build!(types::Fd(self.fds[r.file as usize]))
        };
        e.user_data(r.tag)
    }
}

impl Engine for UringEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Uring
    }

    fn features(&self) -> Vec<&'static str> {
        let mut f = vec![self.setup];
        if self.fixed_files {
            f.push("registered files");
        }
        if self.fixed_buf.is_some() {
            f.push("registered buffers");
        }
        f
    }

    /// A synchronous call beside the ring, as the database makes for its synchronous events.
    #[inline]
    fn execute(&mut self, r: &IoRequest) -> Completion {
        // SAFETY: the caller's buffers are valid for the call (engine contract).
        unsafe { super::sync::call(self.fds[r.file as usize], r) }
    }

    fn submit(&mut self, reqs: &[IoRequest]) -> io::Result<()> {
        let start = now_ns();
        for r in reqs {
            self.starts[r.tag as usize] = start;
            let e = self.entry(r);
            loop {
                // SAFETY: buffers and iovecs stay valid until completion (engine contract).
                let pushed = unsafe { self.ring.submission().push(&e) };
                if pushed.is_ok() {
                    break;
                }
                self.ring.submit()?;
            }
        }
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e)
                    if e.raw_os_error() == Some(libc::EAGAIN)
                        || e.raw_os_error() == Some(libc::EBUSY) =>
                {
                    std::thread::yield_now()
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn reap(&mut self, min: usize, out: &mut [Completion], timeout_ms: u32) -> io::Result<usize> {
        let mut n = self.drain(out);
        if n >= min.min(out.len()) && n > 0 {
            return Ok(n);
        }
        let ts = types::Timespec::new()
            .sec(u64::from(timeout_ms / 1000))
            .nsec((timeout_ms % 1000) * 1_000_000);
        let args = types::SubmitArgs::new().timespec(&ts);
        let want = min.min(out.len()).saturating_sub(n).max(1);
        match self.ring.submitter().submit_with_args(want, &args) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        n += self.drain(&mut out[n..]);
        Ok(n)
    }
}

impl UringEngine {
    fn drain(&mut self, out: &mut [Completion]) -> usize {
        let done_ns = now_ns();
        let mut n = 0;
        let starts = &self.starts;
        let mut cq = self.ring.completion();
        for slot in out.iter_mut() {
            match cq.next() {
                Some(c) => {
                    let tag = c.user_data();
                    *slot = Completion {
                        tag,
                        result: i64::from(c.result()),
                        start_ns: starts[tag as usize],
                        done_ns,
                    };
                    n += 1;
                }
                None => break,
            }
        }
        n
    }
}
