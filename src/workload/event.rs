//! The wait events (docs/events.md) and every fact about them, in one table ([`FACTS`]). Every
//! measurement belongs to exactly one event, named as a DBA knows it. Adding an event is one
//! variant, one row here, and its I/O pattern (a file in `workload/`).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Event {
    /// One random block, `pread`, one at a time.
    DbFileSequentialRead,
    /// A batch of random blocks submitted together, waited for together.
    DbFileParallelRead,
    /// MBRC contiguous blocks read with one `preadv` into separate block buffers.
    DbFileScatteredRead,
    /// Multiblock scan into one contiguous buffer per request, asynchronous.
    DirectPathRead,
    /// DBWR: a batch of dirty random blocks, submitted together.
    DbFileParallelWrite,
    /// Sequential multiblock writes into the session's own region.
    DirectPathWrite,
    DirectPathWriteTemp,
    DirectPathReadTemp,
    /// LGWR's redo write.
    LogFileParallelWrite,
    /// A session's commit, waiting for LGWR.
    LogFileSync,
    /// Waiting for DBWR to clean a buffer.
    FreeBufferWaits,
    /// InnoDB (`--like innodb`, docs/events.md): a 16 KiB page read in the session, `pread`.
    InnodbDataFileRead,
    /// InnoDB's linear read-ahead: one request per page, an extent of them in flight.
    InnodbReadAhead,
    /// InnoDB's page flush batch, timed whole: doublewrite write and sync, the page writes,
    /// the data files' sync.
    InnodbFlushBatch,
    /// The batch written sequentially into the doublewrite file.
    InnodbDblwrWrite,
    /// fdatasync of the doublewrite file.
    InnodbDblwrSync,
    /// A flush batch's pages written in place, submitted together.
    InnodbDataFileWrite,
    /// fdatasync of each data file a flush batch wrote.
    InnodbDataFileSync,
    /// A commit waiting until its redo is written and synced.
    InnodbTrxCommit,
    /// The log write: the redo since the last one, in whole log blocks.
    InnodbLogFileWrite,
    /// The log write's fdatasync.
    InnodbLogFileSync,
    /// PostgreSQL (`--like postgres`, docs/events.md): an 8 KiB page read into the page
    /// cache's care, `pread` on a buffered file.
    PgDataFileRead,
    /// A sequential scan's 8 KiB page reads, `pread` front to back on a buffered file: the
    /// kernel's read-ahead serves them (PostgreSQL's wait is DataFileRead).
    PgDataFileScan,
    /// A backend adding a page to a relation (COPY, `--like postgres` write-mbps): an 8 KiB
    /// `pwrite` past the relation's end, into the page cache (mdextend).
    PgDataFileExtend,
    /// A page written into the page cache with its own `pwrite`, one page at a time: the
    /// checkpointer's (write-iops), or a COPY's ring buffer written back when the ring
    /// wraps (write-mbps, the backend's own).
    PgDataFileWrite,
    /// The checkpointer's fsync of each data file it wrote.
    PgDataFileSync,
    /// A commit waiting until the WAL holding it is written and flushed (PostgreSQL names no
    /// wait for it: the backend flushes its own WAL, waiting WALWrite and WALSync).
    PgCommit,
    /// The WAL write: the WAL since the last one, in whole 8 KiB WAL blocks, buffered.
    PgWalWrite,
    /// The WAL write's fdatasync (`wal_sync_method=fdatasync`).
    PgWalSync,
}

/// Whose I/O shapes and event names a run has (`--like`): Oracle's (the default), InnoDB's
/// (MariaDB, MySQL) or PostgreSQL's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Like {
    #[default]
    Oracle,
    Innodb,
    Postgres,
}

impl Like {
    pub const ALL: [Like; 3] = [Like::Oracle, Like::Innodb, Like::Postgres];

    pub fn name(self) -> &'static str {
        match self {
            Like::Oracle => "oracle",
            Like::Innodb => "innodb",
            Like::Postgres => "postgres",
        }
    }

    /// The database, as a report names it ("InnoDB's I/O shapes").
    pub fn database(self) -> &'static str {
        match self {
            Like::Oracle => "Oracle",
            Like::Innodb => "InnoDB",
            Like::Postgres => "PostgreSQL",
        }
    }

    /// The classic tests this database's shapes cover: `--like` is refused with the others,
    /// and a compare's storage side runs the plain test's own (Oracle's) shapes for them.
    pub fn tests(self) -> &'static [crate::workload::Test] {
        use crate::workload::Test;
        match self {
            Like::Oracle | Like::Innodb => {
                &[Test::ReadIops, Test::ReadMbps, Test::WriteIops, Test::Redo]
            }
            Like::Postgres => &[
                Test::ReadIops,
                Test::ReadMbps,
                Test::WriteIops,
                Test::WriteMbps,
                Test::Redo,
            ],
        }
    }

    /// Parses `oracle`, `innodb` or `postgres`.
    pub fn parse(text: &str) -> Result<Like, String> {
        Like::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| format!("'{text}'; accepted: oracle, innodb, postgres"))
    }
}

/// Who issues an event's requests (or waits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Issuer {
    /// A foreground session.
    Session,
    /// The database writer (DBWR), or a session standing in for it.
    Dbwr,
    /// The log writer (LGWR).
    Lgwr,
}

/// Whether an event is synchronous, asynchronous, or either.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submits {
    /// One request at a time, the session blocked in the call.
    Sync,
    /// Requests submitted together and waited for.
    Async,
    /// Either: writes and temp I/O, whose `--sync`/`submission` chooses.
    Either,
}

/// What a request of the event moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// One data block (its size by default: `--block-size`).
    Block,
    /// MBRC contiguous data blocks (by default MBRC × `--block-size`).
    Multiblock,
    /// Redo: any number of bytes, written in whole redo blocks (by default `--redo-per-commit`).
    Redo,
    /// A temp request (by default `--temp-io`).
    Temp,
    /// Nothing: a wait, not I/O.
    None,
}

/// Read, write, or neither (a wait).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
    Wait,
}

/// Everything dbio knows about one event.
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    pub event: Event,
    /// The name, exactly as the database reports it.
    pub name: &'static str,
    pub issuer: Issuer,
    pub submits: Submits,
    pub unit: Unit,
    pub direction: Direction,
    /// Each request is its own wait (synchronous events, commits): threads record only the
    /// request and the wait figures are the request's.
    pub waits_are_requests: bool,
    /// Its class takes `batch` (requests submitted together).
    pub batch: bool,
    /// Its class takes `depth` (requests in flight per session).
    pub depth: bool,
    /// A job file may have a class of it (free buffer waits is a wait for DBWR, not I/O).
    pub class: bool,
    /// A `min_mib_per_s` limit makes sense (commits carry no bytes of their own).
    pub bandwidth_limit: bool,
    /// Whose event it is (and so whose runs issue it).
    pub like: Like,
}

/// The table: one row per event, in report order.
pub const FACTS: [Facts; 29] = [
    Facts {
        event: Event::DbFileSequentialRead,
        name: "db file sequential read",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Block,
        direction: Direction::Read,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::DbFileParallelRead,
        name: "db file parallel read",
        issuer: Issuer::Session,
        submits: Submits::Async,
        unit: Unit::Block,
        direction: Direction::Read,
        waits_are_requests: false,
        batch: true,
        depth: false,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::DbFileScatteredRead,
        name: "db file scattered read",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Multiblock,
        direction: Direction::Read,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::DirectPathRead,
        name: "direct path read",
        issuer: Issuer::Session,
        submits: Submits::Async,
        unit: Unit::Multiblock,
        direction: Direction::Read,
        waits_are_requests: false,
        batch: false,
        depth: true,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::DbFileParallelWrite,
        name: "db file parallel write",
        issuer: Issuer::Dbwr,
        submits: Submits::Either,
        unit: Unit::Block,
        direction: Direction::Write,
        waits_are_requests: false,
        batch: true,
        depth: false,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::DirectPathWrite,
        name: "direct path write",
        issuer: Issuer::Session,
        submits: Submits::Either,
        unit: Unit::Multiblock,
        direction: Direction::Write,
        waits_are_requests: false,
        batch: false,
        depth: true,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::DirectPathWriteTemp,
        name: "direct path write temp",
        issuer: Issuer::Session,
        submits: Submits::Either,
        unit: Unit::Temp,
        direction: Direction::Write,
        waits_are_requests: false,
        batch: false,
        depth: true,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::DirectPathReadTemp,
        name: "direct path read temp",
        issuer: Issuer::Session,
        submits: Submits::Either,
        unit: Unit::Temp,
        direction: Direction::Read,
        waits_are_requests: false,
        batch: false,
        depth: true,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::LogFileParallelWrite,
        name: "log file parallel write",
        issuer: Issuer::Lgwr,
        submits: Submits::Either,
        unit: Unit::Redo,
        direction: Direction::Write,
        waits_are_requests: false,
        batch: false,
        depth: false,
        class: true,
        bandwidth_limit: true,
        like: Like::Oracle,
    },
    Facts {
        event: Event::LogFileSync,
        name: "log file sync",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Redo,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: true,
        bandwidth_limit: false,
        like: Like::Oracle,
    },
    Facts {
        event: Event::FreeBufferWaits,
        name: "free buffer waits",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::None,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Oracle,
    },
    Facts {
        event: Event::InnodbDataFileRead,
        name: "innodb_data_file read",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Block,
        direction: Direction::Read,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbReadAhead,
        name: "innodb_data_file read-ahead",
        issuer: Issuer::Session,
        submits: Submits::Async,
        unit: Unit::Block,
        direction: Direction::Read,
        waits_are_requests: false,
        batch: false,
        depth: true,
        class: false,
        bandwidth_limit: true,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbFlushBatch,
        name: "innodb flush batch",
        issuer: Issuer::Dbwr,
        submits: Submits::Either,
        unit: Unit::None,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: true,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbDblwrWrite,
        name: "innodb_dblwr_file write",
        issuer: Issuer::Dbwr,
        submits: Submits::Sync,
        unit: Unit::Multiblock,
        direction: Direction::Write,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbDblwrSync,
        name: "innodb_dblwr_file sync",
        issuer: Issuer::Dbwr,
        submits: Submits::Sync,
        unit: Unit::None,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbDataFileWrite,
        name: "innodb_data_file write",
        issuer: Issuer::Dbwr,
        submits: Submits::Either,
        unit: Unit::Block,
        direction: Direction::Write,
        waits_are_requests: false,
        batch: true,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbDataFileSync,
        name: "innodb_data_file sync",
        issuer: Issuer::Dbwr,
        submits: Submits::Sync,
        unit: Unit::None,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbTrxCommit,
        name: "innodb trx commit",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Redo,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbLogFileWrite,
        name: "innodb_log_file write",
        issuer: Issuer::Lgwr,
        submits: Submits::Either,
        unit: Unit::Redo,
        direction: Direction::Write,
        waits_are_requests: false,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Innodb,
    },
    Facts {
        event: Event::InnodbLogFileSync,
        name: "innodb_log_file sync",
        issuer: Issuer::Lgwr,
        submits: Submits::Sync,
        unit: Unit::None,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Innodb,
    },
    Facts {
        event: Event::PgDataFileRead,
        name: "DataFileRead",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Block,
        direction: Direction::Read,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Postgres,
    },
    Facts {
        event: Event::PgDataFileScan,
        name: "DataFileRead (scan)",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Block,
        direction: Direction::Read,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Postgres,
    },
    Facts {
        event: Event::PgDataFileExtend,
        name: "DataFileExtend",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Block,
        direction: Direction::Write,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Postgres,
    },
    Facts {
        event: Event::PgDataFileWrite,
        name: "DataFileWrite",
        issuer: Issuer::Dbwr,
        submits: Submits::Sync,
        unit: Unit::Block,
        direction: Direction::Write,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Postgres,
    },
    Facts {
        event: Event::PgDataFileSync,
        name: "DataFileSync",
        issuer: Issuer::Dbwr,
        submits: Submits::Sync,
        unit: Unit::None,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Postgres,
    },
    Facts {
        event: Event::PgCommit,
        name: "commit (WAL flush)",
        issuer: Issuer::Session,
        submits: Submits::Sync,
        unit: Unit::Redo,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Postgres,
    },
    Facts {
        event: Event::PgWalWrite,
        name: "WALWrite",
        issuer: Issuer::Lgwr,
        submits: Submits::Either,
        unit: Unit::Redo,
        direction: Direction::Write,
        waits_are_requests: false,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: true,
        like: Like::Postgres,
    },
    Facts {
        event: Event::PgWalSync,
        name: "WALSync",
        issuer: Issuer::Lgwr,
        submits: Submits::Sync,
        unit: Unit::None,
        direction: Direction::Wait,
        waits_are_requests: true,
        batch: false,
        depth: false,
        class: false,
        bandwidth_limit: false,
        like: Like::Postgres,
    },
];

impl Event {
    pub const ALL: [Event; 29] = {
        let mut all = [Event::FreeBufferWaits; 29];
        let mut i = 0;
        while i < FACTS.len() {
            all[i] = FACTS[i].event;
            i += 1;
        }
        all
    };

    /// Everything known about the event (its row of [`FACTS`]).
    pub fn facts(self) -> &'static Facts {
        FACTS
            .iter()
            .find(|f| f.event == self)
            .expect("every event has its row")
    }

    /// The event's name, exactly as the database reports it.
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    pub fn from_name(name: &str) -> Option<Event> {
        FACTS.iter().find(|f| f.name == name).map(|f| f.event)
    }

    /// Whether the event's requests read data.
    pub fn reads(self) -> bool {
        self.facts().direction == Direction::Read
    }

    /// Whether the event's requests write data.
    pub fn writes(self) -> bool {
        self.facts().direction == Direction::Write
    }

    /// Redo (log file sync, log file parallel write): sizes are bytes of any count.
    pub fn is_redo(self) -> bool {
        self.facts().unit == Unit::Redo
    }

    /// Temp (direct path write/read temp): each session's own temp file.
    pub fn is_temp(self) -> bool {
        self.facts().unit == Unit::Temp
    }

    /// Whether the event's requests go to the data files.
    pub fn uses_data_files(self) -> bool {
        matches!(self.facts().unit, Unit::Block | Unit::Multiblock)
    }

    /// The submission the event has by definition (sync or async), or None when its class
    /// chooses.
    pub fn fixed_submission(self) -> Option<crate::engine::Submission> {
        match self.facts().submits {
            Submits::Sync => Some(crate::engine::Submission::Sync),
            Submits::Async => Some(crate::engine::Submission::Async),
            Submits::Either => None,
        }
    }

    /// The events a job file's class may issue.
    pub fn class_events() -> impl Iterator<Item = Event> {
        FACTS.iter().filter(|f| f.class).map(|f| f.event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_every_event_has_one_row() {
        for e in Event::ALL {
            assert_eq!(Event::from_name(e.name()), Some(e));
            assert_eq!(FACTS.iter().filter(|f| f.event == e).count(), 1);
        }
    }

    #[test]
    fn the_table_says_what_the_spec_says() {
        // Synchronous events are their own waits; async ones batch or queue.
        for f in FACTS {
            if f.submits == Submits::Sync {
                assert!(f.waits_are_requests, "{}", f.name);
                assert!(!f.batch && !f.depth, "{}", f.name);
            }
        }
        assert!(Event::DbFileScatteredRead.uses_data_files());
        assert!(Event::LogFileSync.is_redo() && !Event::LogFileSync.writes());
        assert!(!Event::FreeBufferWaits.facts().class);
        assert_eq!(Event::class_events().count(), 10);
    }
}
