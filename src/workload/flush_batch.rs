//! InnoDB's page flush batch (`--like innodb` write-iops, docs/events.md): what the page
//! cleaner (or an LRU flush) does with a batch of dirty pages. With doublewrite, the batch's
//! pages go first as one sequential write into the doublewrite file ("innodb_dblwr_file
//! write") and that file is synced ("innodb_dblwr_file sync"); then every page is written in
//! place, submitted together ("innodb_data_file write"), and each data file written is
//! synced ("innodb_data_file sync"). The whole is one wait, "innodb flush batch". The flush
//! method decides the syncs: O_DIRECT_NO_FSYNC makes none.
//!
//! The doublewrite write is the batch's page buffers themselves: they lie one after another
//! in the session's buffer region, so the write carries exactly the bytes the page writes
//! carry — twice the pages' bytes in all, as in the database. The whole batch's bytes are
//! its pages' (what the flush cleaned), outside the totals, which count its writes.
//!
//! PostgreSQL's checkpointer (`--like postgres` write-iops) is the same batch without the
//! doublewrite and without a wait of its own: each dirty page is written into the page cache
//! with its own `pwrite` ("DataFileWrite"), then each data file written is fsync'ed
//! ("DataFileSync"), as a checkpoint does.

use crate::engine::{IoRequest, Op};
use crate::sys::now_ns;
use crate::workload::event::Like;
use crate::workload::spec::RunConfig;

use super::random_blocks::submit_and_wait;
use super::session::{IoFailure, Session};
use super::{Event, Workload};

/// The parts of a flush batch a run records beside its class's event, in order: the
/// doublewrite's (with `--doublewrite on`), the page writes, and the syncs the flush method
/// makes. PostgreSQL's class event is the page write; its part is the data files' fsync.
pub fn parts(cfg: &RunConfig) -> Vec<Event> {
    let sync = cfg.io_mode.data_fdatasync();
    if cfg.like == Like::Postgres {
        return sync.then_some(Event::PgDataFileSync).into_iter().collect();
    }
    let mut parts = Vec::with_capacity(4);
    if cfg.doublewrite {
        parts.push(Event::InnodbDblwrWrite);
        if sync {
            parts.push(Event::InnodbDblwrSync);
        }
    }
    parts.push(Event::InnodbDataFileWrite);
    if sync {
        parts.push(Event::InnodbDataFileSync);
    }
    parts
}

/// Flush batches until the window ends: `--batch` random pages each. The session's file
/// table is the data files, then its doublewrite file (when the run has one).
pub fn flush_batches(plan: &Workload, s: &mut Session) -> Result<(), IoFailure> {
    let slot = |e: Event| Some(plan.slot(e)).filter(|&x| x != usize::MAX);
    // InnoDB's batch is a wait of its own, its pages submitted together and fdatasync'ed;
    // PostgreSQL's checkpointer writes page after page (its class's event) and fsyncs.
    let checkpointer = s.event == Event::PgDataFileWrite;
    let whole = (!checkpointer).then_some(s.slot);
    let dblwr = slot(Event::InnodbDblwrWrite);
    let dblwr_sync = slot(Event::InnodbDblwrSync);
    let (write, data_sync, sync_op): (usize, _, fn(u32, u64) -> IoRequest) = if checkpointer {
        (s.slot, slot(Event::PgDataFileSync), IoRequest::fsync)
    } else {
        (
            plan.slot(Event::InnodbDataFileWrite),
            slot(Event::InnodbDataFileSync),
            IoRequest::datasync,
        )
    };
    let dblwr_file = s.shape.files;
    let block = s.shape.block_size as usize;
    let n = s.shape.batch;
    let mut reqs: Vec<IoRequest> = Vec::with_capacity(n);
    // Which data files the batch wrote: each is synced once after the page writes.
    let mut written = vec![false; s.shape.files];
    let mut now = now_ns();
    while !s.should_stop(now) {
        reqs.clear();
        for i in 0..n {
            let (mut file, mut offset) = s.random_block();
            // With --verify, a block another session is writing is not written again now.
            while !s.prepare_write(i * block, block, file, offset) {
                (file, offset) = s.random_block();
            }
            written[file] = true;
            let buf = s.buf_at(i * block);
            reqs.push(IoRequest::contiguous(
                Op::Write,
                file as u32,
                offset,
                buf,
                block as u32,
                i as u64,
            ));
        }
        let sched = s.pace();
        let t0 = now_ns();
        if let Some(dw) = dblwr {
            let all = IoRequest::contiguous(
                Op::Write,
                dblwr_file as u32,
                0,
                s.buf_at(0),
                (n * block) as u32,
                0,
            );
            call(s, dw, &all)?;
            if let Some(sync) = dblwr_sync {
                call(s, sync, &IoRequest::datasync(dblwr_file as u32, 0))?;
            }
        }
        if checkpointer {
            for r in &reqs {
                let c = s.call(write, r);
                // SAFETY: a write's buffer is not read back.
                unsafe { s.complete(write, &c, r, None, None) }?;
            }
        } else if submit_and_wait(s, write, None, &reqs)?.is_none() {
            return Ok(());
        }
        for (file, w) in written.iter_mut().enumerate() {
            if std::mem::take(w)
                && let Some(sync) = data_sync
            {
                call(s, sync, &sync_op(file as u32, 0))?;
            }
        }
        now = now_ns();
        // The batch carries its pages' bytes (the pages cleaned), once: a wait, it is not
        // counted again in the totals, which its parts make.
        if let Some(whole) = whole {
            s.rec
                .request_from(whole, sched, t0, now, (n * block) as u64);
        }
    }
    Ok(())
}

/// One synchronous part of a batch (the doublewrite write, a sync), recorded into `slot`.
/// Not `Session::complete`: the doublewrite file is not a data file, so `--verify` has
/// nothing to record of it.
fn call(s: &mut Session, slot: usize, r: &IoRequest) -> Result<(), IoFailure> {
    let c = s.call(slot, r);
    if c.result == r.bytes() as i64 {
        s.rec.request(slot, c.start_ns, c.done_ns, r.bytes());
        return Ok(());
    }
    s.rec.error(slot);
    let detail = match r.op {
        Op::Datasync | Op::Fsync => format!(
            "{} failed: {}",
            r.op.name(),
            std::io::Error::from_raw_os_error((-c.result) as i32)
        ),
        _ if c.result < 0 => format!(
            "the doublewrite write failed: {}",
            std::io::Error::from_raw_os_error((-c.result) as i32)
        ),
        _ => format!(
            "short doublewrite write: {} of {} bytes",
            c.result,
            r.bytes()
        ),
    };
    let f = s.failure(
        r.op,
        r.file as usize,
        r.offset,
        r.bytes(),
        Some(c.result),
        Some(detail),
    );
    s.on_error(f)
}
