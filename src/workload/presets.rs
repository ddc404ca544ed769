//! Classic tests as presets of classes. A run is classes of sessions (plus LGWR, DBWR and
//! noise beside them); a classic test (`dbio run read-iops`) is one class doing what the test
//! does — the events docs/events.md lists per test, with the test's options as the class's size, sessions,
//! batch and depth. Most are classes a job file can write too ([`ClassKind::Requests`]), so
//! `--save-job` writes them as a class and `--rate` runs them open loop; `--keep-inflight`,
//! the temp test and the oltp test are kinds of their own.

use crate::engine::Submission;
use crate::workload::event::Like;
use crate::workload::sizes::RequestSizes;
use crate::workload::spec::{ClassKind, ClassSpec, RunConfig};
use crate::workload::{Event, Test};

/// The classes a run's sessions form: a job's own, or the classic test's one.
pub fn classes(cfg: &RunConfig) -> Vec<ClassSpec> {
    if cfg.classes.is_empty() {
        preset(cfg).into_iter().collect()
    } else {
        cfg.classes.clone()
    }
}

/// The class a classic test run is, when a job file can say it (`--save-job`, `--rate`):
/// `None` for a job, the oltp and temp tests, `--keep-inflight` and InnoDB's shapes (their
/// events are not a job file's).
pub fn classic_class(cfg: &RunConfig) -> Option<ClassSpec> {
    preset(cfg).filter(|c| c.kind == ClassKind::Requests && cfg.like == Like::Oracle)
}

/// The one class of a classic test; `None` for a job (its classes are its own).
fn preset(cfg: &RunConfig) -> Option<ClassSpec> {
    let bs = cfg.dataset.block_size;
    let multiblock = cfg.multiblock_bytes();
    let sync = cfg.submission == Submission::Sync;
    let class =
        |event, size| ClassSpec::fixed(cfg.test.name(), event, size, cfg.sessions, cfg.submission);
    let batched = |event| ClassSpec {
        batch: Some(cfg.batch),
        ..class(event, bs)
    };
    let streamed = |event| ClassSpec {
        depth: Some(cfg.depth),
        ..class(event, multiblock)
    };
    match cfg.like {
        Like::Innodb => return innodb(cfg),
        Like::Postgres => return postgres(cfg),
        Like::Oracle => {}
    }
    let mut c = match cfg.test {
        Test::ReadIops if sync => class(Event::DbFileSequentialRead, bs),
        Test::ReadIops => batched(Event::DbFileParallelRead),
        Test::ReadMbps if sync => class(Event::DbFileScatteredRead, multiblock),
        Test::ReadMbps => streamed(Event::DirectPathRead),
        Test::WriteIops => batched(Event::DbFileParallelWrite),
        Test::WriteMbps => streamed(Event::DirectPathWrite),
        Test::Redo => {
            // A commit's wait is synchronous, whatever LGWR does with the pieces.
            let r = cfg.redo.per_commit;
            let mut c = ClassSpec::fixed(
                cfg.test.name(),
                Event::LogFileSync,
                r.lo,
                cfg.sessions,
                Submission::Sync,
            );
            if r.lo != r.hi {
                c.sizes = RequestSizes::Uniform { lo: r.lo, hi: r.hi };
            }
            c.think = cfg.redo.think;
            c
        }
        Test::Oltp => {
            let read = if cfg.oltp.async_reads {
                Event::DbFileParallelRead
            } else {
                Event::DbFileSequentialRead
            };
            ClassSpec {
                kind: ClassKind::Transactions,
                // A transaction reads its work unit in one batch; DBWR writes as many.
                batch: Some(cfg.batch.max(cfg.oltp.work_unit)),
                depth: Some(cfg.depth),
                ..class(read, bs)
            }
        }
        Test::Temp => ClassSpec {
            kind: ClassKind::Spills,
            depth: Some(cfg.depth),
            spill: Some(cfg.temp.spill_size),
            ..class(Event::DirectPathWriteTemp, cfg.temp.temp_io)
        },
        Test::Job => return None,
    };
    if cfg.keep_inflight && !sync && c.batch.is_some() && c.kind == ClassKind::Requests {
        c.kind = ClassKind::KeepInflight;
    }
    Some(c)
}

/// A commit test's class under another database's name (`event`): a commit's wait is
/// synchronous, whatever the log writer does with the pieces.
fn commits(cfg: &RunConfig, event: Event) -> ClassSpec {
    let r = cfg.redo.per_commit;
    let mut c = ClassSpec::fixed(cfg.test.name(), event, r.lo, cfg.sessions, Submission::Sync);
    if r.lo != r.hi {
        c.sizes = RequestSizes::Uniform { lo: r.lo, hi: r.hi };
    }
    c.think = cfg.redo.think;
    c
}

/// PostgreSQL's class of a classic test (`--like postgres`, docs/events.md): the page read
/// (8 KiB `pread`s in the session, random or a scan's), the checkpointer's batch of page
/// writes into the page cache, a COPY's relation extends, or commits. Other tests have none (refused with the options).
fn postgres(cfg: &RunConfig) -> Option<ClassSpec> {
    let bs = cfg.dataset.block_size;
    let class = |event| ClassSpec {
        // PostgreSQL 15 reads and writes with one call at a time.
        submission: Submission::Sync,
        ..ClassSpec::fixed(cfg.test.name(), event, bs, cfg.sessions, cfg.submission)
    };
    let c = match cfg.test {
        Test::ReadIops => class(Event::PgDataFileRead),
        // A sequential scan: one page per request, front to back of the session's stripe.
        Test::ReadMbps => class(Event::PgDataFileScan),
        Test::WriteIops => ClassSpec {
            batch: Some(cfg.batch),
            ..class(Event::PgDataFileWrite)
        },
        // COPY: page after page appended to the session's own stripe, the ring's pages
        // written back as it wraps (workload/bulk_load.rs).
        Test::WriteMbps => class(Event::PgDataFileExtend),
        Test::Redo => commits(cfg, Event::PgCommit),
        _ => return None,
    };
    Some(c)
}

/// InnoDB's class of a classic test (`--like innodb`, docs/events.md): the page read, the
/// read-ahead, the flush batch, or commits. Other tests have none (refused with the options).
fn innodb(cfg: &RunConfig) -> Option<ClassSpec> {
    let bs = cfg.dataset.block_size;
    let class =
        |event, size| ClassSpec::fixed(cfg.test.name(), event, size, cfg.sessions, cfg.submission);
    let c = match cfg.test {
        // A buffer-pool miss is read synchronously by the session, whatever --async says.
        Test::ReadIops => ClassSpec {
            submission: Submission::Sync,
            ..class(Event::InnodbDataFileRead, bs)
        },
        // One request per page, an extent in flight.
        Test::ReadMbps => ClassSpec {
            depth: Some(cfg.depth),
            ..class(Event::InnodbReadAhead, bs)
        },
        Test::WriteIops => ClassSpec {
            batch: Some(cfg.batch),
            ..class(Event::InnodbFlushBatch, bs)
        },
        Test::Redo => commits(cfg, Event::InnodbTrxCommit),
        _ => return None,
    };
    Some(c)
}
