//! dbio: what storage delivers to a database, measured without one and through a real one.
//!
//! Where things are:
//! - what I/O a test issues: [`workload`] (tests, events, session patterns);
//! - how it is issued: [`engine`] (sync, aio, uring behind one trait);
//! - how it is measured: [`measure`]; how results are reported: [`report`];
//! - the data files: [`dataset`]; one run end to end: [`run`]; what keeps data safe: [`safety`];
//! - every run recorded, listed and compared: [`store`] (SQLite);
//! - the storage under a data set and the health of dbio's files: [`storage`], [`doctor`];
//! - one run across many hosts over OpenSSH: [`cluster`] (`--hosts`, `dbio agent`);
//! - many runs as one answer: [`sweep`] (sweeps over a parameter, `dbio calibrate`);
//! - from requirements to devices and arrays: [`sizing`] (`dbio size`);
//! - what memory gives a database (latency curve, NUMA matrix, shared memory): [`mem`];
//! - run options, job files and their checks: [`options`] (one table of options);
//! - the tests through a real database: [`database`] (the adapter a database plugs into;
//!   PostgreSQL in `database::pg`, `dbio pg run|compare|clean`);
//! - the command line: [`cli`] (as typed) → [`app`] (the commands; `app::wizard`, `dbio
//!   wizard`: the same run, asked for; `app::shell`, completions and the man page).
//!
//! Lower layers never import higher ones (ARCHITECTURE.md; `tests/layers.rs` checks it).

/// `eprintln!` that never panics. When stderr is closed (`dbio … 2>&1 | head -c 250`),
/// `eprintln!` panics and the run ends with exit 101 where it stood; this drops the line and
/// the run goes on to its end and its clean-up (a data set's lock, a throwaway server).
/// Defined before the modules, so every module calls it as `stderr_line!`.
#[macro_export]
macro_rules! stderr_line {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

pub mod app;
pub mod capture;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod database;
pub mod dataset;
pub mod doctor;
pub mod engine;
pub mod error;
pub mod measure;
pub mod mem;
pub mod options;
pub mod progress;
pub mod report;
pub mod run;
pub mod safety;
pub mod sizing;
pub mod storage;
pub mod store;
pub mod sweep;
pub mod sys;
pub mod units;
pub mod verify;
pub mod warnings;
pub mod workload;
