//! A stand-in for `pg::observe` (what the database saw: wait-event sampling, statistics
//! deltas, server facts), with the same interface, until that module is merged. It
//! observes nothing and returns an empty section.

use serde::Serialize;

use crate::error::Result;

/// How the page cache was kept out of the reads.
#[derive(Debug, Clone, Serialize)]
pub enum CacheControl {
    /// The server reads with direct I/O (`debug_io_direct=data`).
    DirectIo,
    /// dbio drops the table's pages from the page cache (`posix_fadvise(DONTNEED)`).
    Fadvise,
    /// Not kept out, and why.
    NotControlled(String),
}

/// What the run asked for.
#[allow(dead_code)]
#[derive(Debug, Clone)]
pub struct RunContext {
    pub test: String,
    pub asynchronous: bool,
    pub depth: u32,
    pub sessions: u32,
    pub session_set: Vec<(String, String)>,
    pub cache: CacheControl,
    pub mean_read_us: Option<f64>,
}

/// The result's `pg` section (the stand-in holds what the run itself knows).
#[derive(Debug, Clone, Serialize)]
pub struct PgSection {
    pub test: String,
    pub cache: CacheControl,
    pub session_set: Vec<(String, String)>,
}

pub struct Observer;

impl Observer {
    pub fn start(_config: &postgres::Config, _hz: u32) -> Result<Observer> {
        Ok(Observer)
    }

    pub fn finish(self, ctx: &RunContext) -> Result<PgSection> {
        Ok(PgSection {
            test: ctx.test.clone(),
            cache: ctx.cache.clone(),
            session_set: ctx.session_set.clone(),
        })
    }
}
