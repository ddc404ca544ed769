//! The wait events (SPEC §3). Every measurement belongs to exactly one of them, named as a
//! DBA knows it.

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
}

impl Event {
    pub const ALL: [Event; 11] = [
        Event::DbFileSequentialRead,
        Event::DbFileParallelRead,
        Event::DbFileScatteredRead,
        Event::DirectPathRead,
        Event::DbFileParallelWrite,
        Event::DirectPathWrite,
        Event::DirectPathWriteTemp,
        Event::DirectPathReadTemp,
        Event::LogFileParallelWrite,
        Event::LogFileSync,
        Event::FreeBufferWaits,
    ];

    /// The event's name, exactly as the database reports it.
    pub fn name(self) -> &'static str {
        match self {
            Event::DbFileSequentialRead => "db file sequential read",
            Event::DbFileParallelRead => "db file parallel read",
            Event::DbFileScatteredRead => "db file scattered read",
            Event::DirectPathRead => "direct path read",
            Event::DbFileParallelWrite => "db file parallel write",
            Event::DirectPathWrite => "direct path write",
            Event::DirectPathWriteTemp => "direct path write temp",
            Event::DirectPathReadTemp => "direct path read temp",
            Event::LogFileParallelWrite => "log file parallel write",
            Event::LogFileSync => "log file sync",
            Event::FreeBufferWaits => "free buffer waits",
        }
    }

    pub fn from_name(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether the event's requests read data.
    pub fn reads(self) -> bool {
        matches!(
            self,
            Event::DbFileSequentialRead
                | Event::DbFileParallelRead
                | Event::DbFileScatteredRead
                | Event::DirectPathRead
                | Event::DirectPathReadTemp
        )
    }

    /// Whether the event's requests write data.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Event::DbFileParallelWrite
                | Event::DirectPathWrite
                | Event::DirectPathWriteTemp
                | Event::LogFileParallelWrite
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for e in Event::ALL {
            assert_eq!(Event::from_name(e.name()), Some(e));
        }
    }
}
