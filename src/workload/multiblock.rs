//! Multiblock I/O: where full scans and sequential writers are in the data set ([`Cursor`]),
//! and "db file scattered read" (synchronous `preadv` of MBRC blocks into separate block
//! buffers). The asynchronous multiblock events run in `stream.rs`.

use crate::engine::{IoRequest, Op};
use crate::sys::now_ns;

use super::session::{IoFailure, Session, SessionShape};

/// Where a session reads or writes next, moving front to back in request-sized steps.
#[derive(Debug, Clone)]
pub struct Cursor {
    file: usize,
    offset: u64,
    step: u64,
    /// Scans move on to the next file at the end of one; writers wrap inside their region.
    wrap_files: bool,
    files: usize,
    region_start: u64,
    region_end: u64,
}

impl Cursor {
    /// A scan for session `id`: it starts in file `id % files`, at a point staggered by the
    /// sessions sharing that file (as if each scanned its own segment), then goes through
    /// every file in turn.
    pub fn scan(shape: &SessionShape, id: usize, step: u64) -> Cursor {
        let file = id % shape.files;
        let sharing = shape.sessions.div_ceil(shape.files).max(1) as u64;
        let steps = shape.file_size / step;
        let offset = (id / shape.files) as u64 * steps / sharing * step;
        Cursor {
            file,
            offset,
            step,
            wrap_files: true,
            files: shape.files,
            region_start: 0,
            region_end: steps * step,
        }
    }

    /// The session's own region for sequential writes: sessions are spread over the files,
    /// and the sessions on one file split it evenly.
    pub fn region(shape: &SessionShape, id: usize, step: u64) -> Cursor {
        let file = id % shape.files;
        let sharing = (shape.sessions / shape.files
            + usize::from(file < shape.sessions % shape.files))
        .max(1) as u64;
        let per = shape.file_size / sharing / step * step;
        let start = (id / shape.files) as u64 * per;
        Cursor {
            file,
            offset: start,
            step,
            wrap_files: false,
            files: shape.files,
            region_start: start,
            region_end: start + per,
        }
    }

    /// Where the cursor moves: its file (the first, for a scan) and the bytes
    /// `start..end` of it.
    pub fn bounds(&self) -> (usize, u64, u64) {
        (self.file, self.region_start, self.region_end)
    }

    /// The next request: (file, offset).
    #[inline]
    pub fn advance(&mut self) -> (usize, u64) {
        self.advance_by(self.step)
    }

    /// The next request of `len` bytes (at most the cursor's step): (file, offset).
    #[inline]
    pub fn advance_by(&mut self, len: u64) -> (usize, u64) {
        if self.offset + len > self.region_end {
            if self.wrap_files {
                self.file = (self.file + 1) % self.files;
            }
            self.offset = self.region_start;
        }
        let at = (self.file, self.offset);
        self.offset += len;
        at
    }
}

/// db file scattered read: one synchronous `preadv` (through the session's engine) of MBRC
/// blocks into MBRC separate block buffers, scanning front to back.
pub fn scattered_read(s: &mut Session) -> Result<(), IoFailure> {
    let bs = s.shape.block_size as usize;
    let mbrc = s.shape.mbrc;
    let most = (bs * mbrc) as u64;
    let slot = s.slot;
    // Every other block of the region: separate, non-adjacent buffers.
    let iov: Vec<libc::iovec> = (0..mbrc)
        .map(|i| libc::iovec {
            iov_base: s.buf_at(2 * i * bs).cast(),
            iov_len: bs,
        })
        .collect();
    let mut cursor = Cursor::scan(s.shape, s.local_id, most);
    let mut now = now_ns();
    while !s.should_stop(now) {
        let bytes = s.request_len(most);
        let blocks = bytes as usize / bs;
        let (file, offset) = cursor.advance_by(bytes);
        let sched = s.pace();
        let r = IoRequest::vectored(Op::Read, file as u32, offset, &iov[..blocks], 0);
        let c = s.call(slot, &r);
        now = c.done_ns;
        // SAFETY: the preadv filled the iovecs, which point into the session's own region.
        unsafe { s.complete(slot, &c, &r, None, sched) }?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(sessions: usize, files: usize) -> SessionShape {
        SessionShape {
            sessions,
            files,
            file_size: 16 << 20,
            block_size: 8192,
            batch: 32,
            depth: 8,
            mbrc: 128,
            sizes: None,
        }
    }

    #[test]
    fn regions_do_not_overlap() {
        let sh = shape(8, 4);
        let mut owner = std::collections::HashMap::new();
        for id in 0..8 {
            let mut c = Cursor::region(&sh, id, 1 << 20);
            let first = c.advance();
            for _ in 0..100 {
                let (f, off) = c.advance();
                assert_eq!(f, first.0, "a writer stays in its file");
                assert!(off + (1 << 20) <= sh.file_size);
                assert_eq!(
                    *owner.entry((f, off)).or_insert(id),
                    id,
                    "two writers share {f}:{off}"
                );
            }
        }
        // Sessions 0 and 4 share file 0 and split it in two halves.
        let a = Cursor::region(&sh, 0, 1 << 20);
        let b = Cursor::region(&sh, 4, 1 << 20);
        assert_eq!((a.region_start, a.region_end), (0, 8 << 20));
        assert_eq!((b.region_start, b.region_end), (8 << 20, 16 << 20));
    }

    #[test]
    fn scans_visit_every_file_front_to_back() {
        let sh = shape(1, 2);
        let mut c = Cursor::scan(&sh, 0, 1 << 20);
        let visits: Vec<_> = (0..33).map(|_| c.advance()).collect();
        assert_eq!(visits[0], (0, 0));
        assert_eq!(visits[15], (0, 15 << 20));
        assert_eq!(visits[16], (1, 0));
        assert_eq!(visits[32], (0, 0));
    }
}
