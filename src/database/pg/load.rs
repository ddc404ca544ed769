//! The data a test works on, loaded into the run's schema, and what keeps the OS page cache
//! out of its reads.
//!
//! `blocks` holds one row per 8 KiB page (a 1,000-byte row in a table with fillfactor 10),
//! so `--size` is the table's size and a row lookup is one block read. After loading,
//! `VACUUM (FREEZE, ANALYZE)` (dbio's own table), and `CHECKPOINT` on a throwaway server
//! only: without them a read test sets hint bits and writes. A checkpoint is server-wide,
//! so on a user's server (`--pg`) it is not done, and the result says so
//! ([`NO_CHECKPOINT`]).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use postgres::Client;

use crate::error::{Error, Result};

use super::connect::error_text;

/// The page size of the tables (PostgreSQL's default build).
pub const PAGE: u64 = 8192;
/// Rows inserted per statement while loading (64 MiB): a signal is heard between them.
const LOAD_CHUNK: i64 = 8192;

fn sql(c: &mut Client, text: &str) -> Result<()> {
    c.batch_execute(text)
        .map_err(|e| Error::other(format!("{}: {}", first_words(text), error_text(&e))))
}

fn first_words(text: &str) -> String {
    text.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn interrupted() -> Error {
    Error::Interrupted("interrupted while loading the table; nothing measured".into())
}

/// Creates `<schema>.blocks` with `rows` rows (one per page), frozen and analyzed (the
/// caller checkpoints where the server is dbio's). Stops between chunks when `stop` is set.
pub fn blocks(c: &mut Client, schema: &str, rows: u64, stop: &AtomicBool) -> Result<()> {
    sql(
        c,
        &format!(
            "CREATE TABLE {schema}.blocks (id bigint PRIMARY KEY, pad char(1000) NOT NULL) \
             WITH (fillfactor = 10, autovacuum_enabled = off)"
        ),
    )?;
    let insert = c
        .prepare(&format!(
            "INSERT INTO {schema}.blocks SELECT g, 'x' FROM generate_series($1::bigint, $2::bigint) g"
        ))
        .map_err(|e| Error::other(error_text(&e)))?;
    let rows = rows as i64;
    let mut first = 1i64;
    while first <= rows {
        if stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        let last = (first + LOAD_CHUNK - 1).min(rows);
        c.execute(&insert, &[&first, &last])
            .map_err(|e| Error::other(format!("loading the table: {}", error_text(&e))))?;
        first = last + 1;
    }
    if stop.load(Ordering::Relaxed) {
        return Err(interrupted());
    }
    sql(c, &format!("VACUUM (FREEZE, ANALYZE) {schema}.blocks"))?;
    Ok(())
}

/// What a run on a user's server says in place of the checkpoint it does not make.
pub const NO_CHECKPOINT: &str = "--pg: no CHECKPOINT on your server: the table's load may still be written out during the run, and reads may set hint bits (writes counted in the database's figures)";

/// `CHECKPOINT`, on a throwaway server only (dbio's own: a checkpoint is server-wide).
pub fn checkpoint(c: &mut Client) -> bool {
    c.batch_execute("CHECKPOINT").is_ok()
}

/// The tables of the write tests: `commits` (redo) and one `bulk_<n>` per session
/// (write-mbps, one row per page like `blocks`).
pub fn write_tables(c: &mut Client, schema: &str, sessions: u32, bulk: bool) -> Result<()> {
    if bulk {
        for n in 0..sessions {
            sql(
                c,
                &format!(
                    "CREATE TABLE {schema}.bulk_{n} (id bigint NOT NULL, pad char(1000) NOT NULL) \
                     WITH (fillfactor = 10, autovacuum_enabled = off)"
                ),
            )?;
        }
    } else {
        sql(
            c,
            &format!(
                "CREATE TABLE {schema}.commits (session int NOT NULL, n bigint NOT NULL) \
                 WITH (autovacuum_enabled = off)"
            ),
        )?;
    }
    Ok(())
}

/// The files of `<schema>.blocks` (its main fork's segments) under `data_dir`, opened for
/// dropping their pages from the page cache; None when they are not readable here.
pub fn relation_files(c: &mut Client, schema: &str, data_dir: &Path) -> Option<Vec<File>> {
    let rel: String = c
        .query_one(
            &format!("SELECT pg_relation_filepath('{schema}.blocks')"),
            &[],
        )
        .ok()?
        .get(0);
    let base = data_dir.join(rel);
    let mut files = vec![File::open(&base).ok()?];
    for seg in 1.. {
        let p = PathBuf::from(format!("{}.{seg}", base.display()));
        match File::open(&p) {
            Ok(f) => files.push(f),
            Err(_) => break,
        }
    }
    Some(files)
}

/// The server's data directory when this role may read the setting.
pub fn data_directory(c: &mut Client) -> Option<PathBuf> {
    c.query_one("SELECT current_setting('data_directory')", &[])
        .ok()
        .map(|r| PathBuf::from(r.get::<_, String>(0)))
}

/// Drops the pages of `files` from the page cache every [`crate::sys::DROP_PAGES_EVERY`]
/// until `over` is set: reads of the table then come from the storage, not from memory (the
/// server reads through the page cache on 15, which has no direct I/O).
pub fn drop_pages_until(files: &[File], over: &AtomicBool) {
    let fds: Vec<std::os::fd::RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
    crate::sys::drop_cached_pages_until(&fds, over);
}

/// One pass of `posix_fadvise(DONTNEED)` over `files`.
pub fn drop_pages(files: &[File]) {
    for f in files {
        crate::sys::drop_cached_pages(f.as_raw_fd());
    }
}
