//! What the wizard offers: the questions a user may want answered (each a test, or "does my
//! storage meet these requirements"), how each test's sync and async forms read, the
//! shipped example jobs and the I/O classes a user can state requirements for. Words only:
//! every value is checked by the option table or the job file parser.

use crate::workload::{Event, Test};

/// One answer to "what do you want to learn?".
pub struct Goal {
    /// The test; None: a job of classes with limits.
    pub test: Option<Test>,
    pub label: &'static str,
    /// How the run issues I/O asynchronously, then synchronously.
    pub forms: [&'static str; 2],
}

pub const GOALS: &[Goal] = &[
    Goal {
        test: Some(Test::ReadIops),
        label: "Read IOPS: random single-block reads, as index lookups do (read-iops)",
        forms: [
            "async: batches of random blocks submitted together (db file parallel read)",
            "sync: one block at a time (db file sequential read)",
        ],
    },
    Goal {
        test: Some(Test::ReadMbps),
        label: "Scan throughput: multiblock reads, as full scans do (read-mbps)",
        forms: [
            "async: several multiblock reads in flight (direct path read)",
            "sync: one multiblock read at a time (db file scattered read)",
        ],
    },
    Goal {
        test: Some(Test::WriteIops),
        label: "Write batches: DBWR writing dirty blocks (write-iops)",
        forms: [
            "async: DBWR submits each batch of blocks together (db file parallel write)",
            "sync: DBWR writes the blocks one by one (db file parallel write)",
        ],
    },
    Goal {
        test: Some(Test::WriteMbps),
        label: "Large writes: sequential direct path writes, as loads do (write-mbps)",
        forms: [
            "async: several large writes in flight (direct path write)",
            "sync: one large write at a time (direct path write)",
        ],
    },
    Goal {
        test: Some(Test::Redo),
        label: "Redo and commit latency: log file sync and log file parallel write (redo)",
        forms: [
            "async: LGWR writes the pieces of a large redo write together",
            "sync: LGWR writes them one after another",
        ],
    },
    Goal {
        test: Some(Test::Oltp),
        label: "An OLTP mix: reads, updates, redo and commits together (oltp)",
        forms: [
            "async: DBWR submits its batches together",
            "sync: DBWR writes its blocks one by one",
        ],
    },
    Goal {
        test: Some(Test::Temp),
        label: "Temp spills: sorts and hash joins writing and reading temp (temp)",
        forms: [
            "async: several temp requests in flight (direct path write/read temp)",
            "sync: one temp request at a time",
        ],
    },
    Goal {
        test: None,
        label: "Does my storage meet these requirements? (I/O classes at rates, with latency limits)",
        forms: ["", ""],
    },
];

/// A job file shipped with dbio (examples/), compiled in so the wizard has it wherever it
/// is installed.
pub struct Example {
    pub label: &'static str,
    pub file: &'static str,
    pub text: &'static str,
}

pub const EXAMPLES: &[Example] = &[
    Example {
        label: "An OLTP busy hour: commits, single-block reads, DBWR and a sort's temp spill, with p99 limits",
        file: "examples/oltp-peak.toml",
        text: include_str!("../../../examples/oltp-peak.toml"),
    },
    Example {
        label: "A data warehouse's peak: scans, single-block reads and writes at rates, with p99 limits",
        file: "examples/dw-peak.toml",
        text: include_str!("../../../examples/dw-peak.toml"),
    },
];

/// An I/O class a user can state a requirement for, with the defaults offered.
pub struct Need {
    pub label: &'static str,
    pub event: Event,
    /// What its rate counts.
    pub per_second: &'static str,
    pub rate: &'static str,
    pub sessions: &'static str,
    pub p99: &'static str,
}

pub const NEEDS: &[Need] = &[
    Need {
        label: "single-block reads (db file sequential read)",
        event: Event::DbFileSequentialRead,
        per_second: "reads",
        rate: "500",
        sessions: "8",
        p99: "10ms",
    },
    Need {
        label: "commits (log file sync)",
        event: Event::LogFileSync,
        per_second: "commits",
        rate: "200",
        sessions: "8",
        p99: "5ms",
    },
    Need {
        label: "DBWR writes (db file parallel write)",
        event: Event::DbFileParallelWrite,
        per_second: "blocks written",
        rate: "320",
        sessions: "1",
        p99: "20ms",
    },
    Need {
        label: "scans (direct path read)",
        event: Event::DirectPathRead,
        per_second: "multiblock reads",
        rate: "50",
        sessions: "2",
        p99: "30ms",
    },
    Need {
        label: "large writes (direct path write)",
        event: Event::DirectPathWrite,
        per_second: "multiblock writes",
        rate: "20",
        sessions: "1",
        p99: "20ms",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_is_offered_and_every_example_is_a_job() {
        for t in Test::CLASSIC {
            assert!(GOALS.iter().any(|g| g.test == Some(t)), "{}", t.name());
        }
        for e in EXAMPLES {
            crate::options::job::parse(e.text, e.file).unwrap_or_else(|err| panic!("{err}"));
        }
    }
}
