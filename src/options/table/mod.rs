//! The option table, [`OPTIONS`]: every option, in help order, one file per part of the
//! help. Each part is a plain list of [`Opt`] rows; they are joined here once, at compile
//! time. [`COMMANDS`]: which command takes which of them.

mod capture;
mod commands;
mod data_set;
mod mem;
mod mysql;
mod output;
mod pg;
mod points;
mod redo;
mod test;

use crate::options::{Command, Group, Opt, Takes};
use crate::workload::Test;

const DATA_TESTS: &[Test] = &[
    Test::ReadIops,
    Test::ReadMbps,
    Test::WriteIops,
    Test::WriteMbps,
    Test::Oltp,
];
const REDO_TESTS: &[Test] = &[Test::Redo, Test::Oltp];
/// The tests whose sessions issue one kind of request: a database's shapes (`--like`) and
/// an open loop (`--rate`) take them.
const ONE_KIND_TESTS: &[Test] = &[
    Test::ReadIops,
    Test::ReadMbps,
    Test::WriteIops,
    Test::WriteMbps,
    Test::Redo,
];

/// The parts in help order: a command's own options first (under no heading), then the
/// parts of a run's.
const PARTS: &[&[Opt]] = &[
    commands::COMMANDS,
    mem::MEM,
    capture::CAPTURE,
    data_set::DATA_SET,
    test::TEST,
    redo::REDO,
    output::OUTPUT,
    points::POINTS,
    pg::PG,
    mysql::MYSQL,
];

const fn total(parts: &[&[Opt]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

/// The parts, one after the other.
const fn joined<const N: usize>(parts: &[&[Opt]]) -> [Opt; N] {
    let mut out = [parts[0][0]; N];
    let mut k = 0;
    let mut i = 0;
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(k == N);
    out
}

static ALL: [Opt; total(PARTS)] = joined(PARTS);

/// Every run option, in help order.
pub static OPTIONS: &[Opt] = &ALL;

/// Every command and the options of the table it takes. A command's own default (a
/// calibration's points warm up for less time than a run) or help (`dbio pg run --size` is
/// a table's size) is a value here, not a second declaration of the option.
pub static COMMANDS: &[Takes] = &[
    Takes {
        command: Command::Global,
        groups: &[Group::Global],
        also: &[],
    },
    Takes {
        command: Command::Run,
        groups: &[Group::DataSet, Group::Run, Group::Cluster, Group::Report],
        also: &[],
    },
    Takes {
        command: Command::Sweep,
        groups: &[
            Group::DataSet,
            Group::Run,
            Group::Cluster,
            Group::Report,
            Group::Sweep,
        ],
        also: &[],
    },
    Takes {
        command: Command::Prepare,
        groups: &[Group::DataSet, Group::Prepare, Group::Report],
        also: &[
            ("quiet", None, None),
            ("json", None, None),
            ("progress", None, None),
        ],
    },
    Takes {
        command: Command::Clean,
        groups: &[Group::Clean, Group::Report],
        also: &[("json", None, None)],
    },
    Takes {
        command: Command::Precondition,
        groups: &[Group::Precondition, Group::Report],
        also: &[
            (
                "destructive",
                None,
                Some(
                    "Allow writing over a block device (after every check a write test's --destructive makes).",
                ),
            ),
            (
                "yes",
                None,
                Some(
                    "With --destructive: do not ask on the terminal before writing over the device.",
                ),
            ),
            ("json", None, None),
            ("quiet", None, None),
            ("progress", None, None),
        ],
    },
    Takes {
        command: Command::Calibrate,
        groups: &[
            Group::DataSet,
            Group::Points,
            Group::Calibrate,
            Group::Cluster,
            Group::Report,
        ],
        also: &[
            ("warmup", Some("2s"), None),
            ("io-mode", None, None),
            ("engine", None, None),
            ("out", None, None),
            ("json", None, None),
            ("quiet", None, None),
            ("progress", None, None),
        ],
    },
    Takes {
        command: Command::Matrix,
        groups: &[Group::DataSet, Group::Points, Group::Matrix, Group::Report],
        also: &[
            ("warmup", Some("2s"), None),
            ("io-mode", None, None),
            ("engine", None, None),
            ("out", None, None),
            ("json", None, None),
        ],
    },
    Takes {
        command: Command::Mem,
        groups: &[Group::Mem, Group::Report],
        also: &[
            ("seed", None, None),
            ("out", None, None),
            ("json", None, None),
            ("quiet", None, None),
            ("progress", None, None),
        ],
    },
    Takes {
        command: Command::Map,
        groups: &[Group::Report],
        also: &[("block-size", None, None), ("json", None, None)],
    },
    Takes {
        command: Command::Runs,
        groups: &[Group::Report, Group::Runs],
        also: &[("json", None, None)],
    },
    Takes {
        command: Command::Show,
        groups: &[Group::Report],
        also: &[("json", None, None)],
    },
    Takes {
        command: Command::Size,
        groups: &[Group::Report, Group::Size],
        also: &[("json", None, None)],
    },
    Takes {
        command: Command::Compare,
        groups: &[Group::Report, Group::Compare],
        also: &[("json", None, None)],
    },
    // The commands that only report what they found or did: how it is printed.
    Takes {
        command: Command::Doctor,
        groups: &[Group::Report],
        also: &[("json", None, None)],
    },
    Takes {
        command: Command::Verify,
        groups: &[Group::Report],
        also: &[("json", None, None)],
    },
    Takes {
        command: Command::Report,
        groups: &[Group::Report],
        also: &[("json", None, None)],
    },
    Takes {
        command: Command::MysqlClean,
        groups: &[Group::Report],
        also: &[
            (
                "mysql",
                None,
                Some(
                    "The server: mysql://user@host[:port]/db or mysql://user@localhost/db?socket=PATH (the password from MYSQL_PWD, or asked on the terminal).",
                ),
            ),
            ("json", None, None),
        ],
    },
    // A run through PostgreSQL: the options of a run that mean the same there, some said
    // of a run through the database.
    Takes {
        command: Command::PgRun,
        groups: &[Group::Pg, Group::Report],
        also: &[
            (
                "size",
                None,
                Some(
                    "The table's size: one row per 8 KiB page (K, M, G, T are binary; at least 8M) [default: 1G].",
                ),
            ),
            (
                "sessions",
                None,
                Some("Concurrent sessions, each a connection of its own (1 to 65536)."),
            ),
            ("duration", None, None),
            ("warmup", None, None),
            (
                "sync",
                None,
                Some("read-iops: index lookups, one block each (DataFileRead)."),
            ),
            (
                "async",
                None,
                Some(
                    "read-iops (the default): prefetched bitmap heap scans over random ids at effective_io_concurrency = --depth.",
                ),
            ),
            (
                "depth",
                None,
                Some(
                    "read-iops --async: effective_io_concurrency of each session (SET, session-level).",
                ),
            ),
            ("out", None, None),
            ("json", None, None),
            ("quiet", None, None),
            ("progress", None, None),
        ],
    },
    // A run through MariaDB/MySQL: the options of a run that mean the same there, some
    // said of a run through the database.
    Takes {
        command: Command::MysqlRun,
        groups: &[Group::Mysql, Group::Report],
        also: &[
            (
                "size",
                None,
                Some(
                    "The table's size: two rows per 16 KiB InnoDB page (K, M, G, T are binary; at least 16M) [default: 1G].",
                ),
            ),
            (
                "sessions",
                None,
                Some("Concurrent sessions, each a connection of its own (1 to 65536)."),
            ),
            ("duration", None, None),
            ("warmup", None, None),
            (
                "sync",
                None,
                Some(
                    "read-iops: primary-key lookups, one page each (a synchronous read by the session's thread).",
                ),
            ),
            (
                "async",
                None,
                Some(
                    "read-iops (the default): batches of ids in one statement (InnoDB still reads their pages one by one).",
                ),
            ),
            (
                "depth",
                None,
                Some("read-iops --async: ids per batch = 4 × --depth (32 to 1024)."),
            ),
            ("out", None, None),
            ("json", None, None),
            ("quiet", None, None),
        ],
    },
    // `--pg` of a run, said the same way where the server is only cleaned up.
    Takes {
        command: Command::PgClean,
        groups: &[Group::Report],
        also: &[("pg", None, None), ("json", None, None)],
    },
    Takes {
        command: Command::PgObserve,
        groups: &[Group::Observe, Group::Report],
        also: &[
            (
                "pg",
                None,
                Some(
                    "The server: a URL (`postgresql:///db?host=/run/sock&port=5432&user=me`) or `key=value` pairs (`host=/run/sock port=5432 user=me`).",
                ),
            ),
            ("json", None, None),
        ],
    },
    Takes {
        command: Command::JobFromAwr,
        groups: &[Group::Shaping, Group::Report],
        also: &[("json", None, None)],
    },
    Takes {
        command: Command::JobFromIostat,
        groups: &[Group::FromIostat, Group::Shaping, Group::Report],
        also: &[("json", None, None)],
    },
    // The server is only read: `--pg` said without what a run makes there.
    Takes {
        command: Command::JobFromPg,
        groups: &[Group::FromPg, Group::Shaping, Group::Report],
        also: &[
            (
                "pg",
                None,
                Some(
                    "The server: a URL or key=value string; PGHOST, PGPORT, PGUSER, PGDATABASE fill the rest.",
                ),
            ),
            ("json", None, None),
        ],
    },
    Takes {
        command: Command::Agent,
        groups: &[Group::Agent],
        also: &[],
    },
];
