//! PostgreSQL 15's COPY FROM into a table (`--like postgres` write-mbps, docs/events.md
//! "A COPY's pages"). A backend loading rows fills one page after another at the end of the
//! relation: each new page is added with an 8 KiB `pwrite` of the page past the end into the
//! page cache ("DataFileExtend", md.c mdextend), and is filled in a buffer of the COPY's
//! bulk-write ring (16 MiB, freelist.c BAS_BULKWRITE). When the ring comes round to a buffer,
//! the page it holds — filled, dirty — is written back with its own `pwrite` before the
//! buffer takes the next new page ("DataFileWrite", bufmgr.c FlushBuffer). Nothing is
//! synced by the backend: the checkpointer fsyncs the files later.
//!
//! Each session is one COPY into its own table: its stripe of the data set ([`Cursor::region`])
//! is the table, appended to front to back. When the stripe is full the table is emptied
//! (TRUNCATE, as the database side's session does) and the ring's pages of the old table are
//! dropped unwritten; the next page starts the stripe again.
//!
//! The WAL the COPY logs: the rows of each page it fills (heapam.c heap_multi_insert,
//! XLOG_HEAP2_MULTI_INSERT) — a page of WAL per page where rows fill their pages, 1/128 of
//! `--redo-per-commit` each — copied into the log buffer after the page is added; each COPY commits after [`PAGES_PER_COMMIT`] pages and waits
//! for its WAL to be flushed ("commit (WAL flush)"). The log writer writes the WAL as it
//! accumulates (every 1 MiB, "WALWrite") and syncs it ("WALSync"): in PostgreSQL the backend
//! writes its own WAL when its WAL buffers fill and flushes it at commit; the bytes and the
//! flushes are the same, the thread that waits for the writes is not.

use crate::engine::{IoRequest, Op};
use crate::sys::now_ns;

use super::multiblock::Cursor;
use super::redo;
use super::session::{IoFailure, Session};
use super::{Event, Workload};

/// The event of a ring buffer's page written back, beside the class's extends.
pub const WRITE_BACK: Event = Event::PgDataFileWrite;

/// The event of a COPY's commit, waiting for its WAL.
pub const COMMIT: Event = Event::PgCommit;

/// Pages each COPY loads before it commits: 1 MiB of 8 KiB pages, the database side's
/// bulk-load chunk.
pub const PAGES_PER_COMMIT: u64 = 128;

/// The bulk-write ring's size: 16 MiB of buffers (freelist.c GetAccessStrategy,
/// BAS_BULKWRITE).
pub const RING_BYTES: u64 = 16 << 20;

/// A COPY until the window ends: page after page appended to the session's stripe, each
/// preceded, once the ring is full, by the write-back of the page appended a ring earlier.
/// Allocates nothing.
pub fn copy(plan: &Workload, s: &mut Session) -> Result<(), IoFailure> {
    let page = s.shape.block_size;
    let (extend, write_back, commit) = (s.slot, plan.slot(WRITE_BACK), plan.slot(COMMIT));
    // The WAL each page's rows log: the COPY's WAL spread over its pages.
    let logged = (plan.redo.per_commit.lo / PAGES_PER_COMMIT).clamp(1, page);
    let ring = (RING_BYTES / page).max(1);
    let (file, start, end) = Cursor::region(s.shape, s.local_id, page).bounds();
    let pages = (end - start) / page;
    // Pages appended since the table was last emptied; pages and WAL of this COPY.
    let mut appended = 0u64;
    let (mut in_copy, mut wal) = (0u64, 0u64);
    let mut now = now_ns();
    while !s.should_stop(now) {
        if appended == pages {
            // TRUNCATE: a new, empty table; the old one's ring pages go unwritten.
            appended = 0;
        }
        if appended >= ring {
            write(s, write_back, file, start + (appended - ring) * page)?;
        }
        write(s, extend, file, start + appended * page)?;
        appended += 1;
        // The page's rows logged; the COPY commits every PAGES_PER_COMMIT pages.
        let end = redo::generate_at(s, 0, logged as usize);
        (in_copy, wal) = (in_copy + 1, wal + logged);
        now = now_ns();
        if in_copy == PAGES_PER_COMMIT {
            now = redo::commit(s, commit, end, wal, None)?;
            s.rec.transaction(now);
            (in_copy, wal) = (0, 0);
        }
    }
    Ok(())
}

/// One page written with its own `pwrite`, recorded into `slot`.
fn write(s: &mut Session, slot: usize, file: usize, offset: u64) -> Result<(), IoFailure> {
    let len = s.shape.block_size as usize;
    // With --verify, a page another request is writing is not written now (the stripe is
    // the session's own, so none is).
    if !s.prepare_write(0, len, file, offset) {
        return Ok(());
    }
    let sched = s.pace();
    let r = IoRequest::contiguous(Op::Write, file as u32, offset, s.buf_at(0), len as u32, 0);
    let c = s.call(slot, &r);
    // SAFETY: a write's buffer is not read back.
    unsafe { s.complete(slot, &c, &r, None, sched) }
}
