//! The data a test works on, loaded into the run's database.
//!
//! `blocks` holds two rows per 16 KiB InnoDB page (a 7,700-byte row: InnoDB keeps at least
//! two rows in a page, so no row layout gives one), so `--size` is the table's size and a
//! row lookup is one page read. Rows are made by the server itself, 500 at a time (a
//! recursive common table expression, which MariaDB and MySQL both have), so a signal is
//! heard between statements.

use std::sync::atomic::{AtomicBool, Ordering};

use mysql::Conn;
use mysql::prelude::Queryable;

use crate::error::{Error, Result};

use super::connect::error_text;

/// InnoDB's default page size.
pub const PAGE: u64 = 16384;
/// Rows per page of `blocks`.
pub const ROWS_PER_PAGE: u64 = 2;
/// The length of a row's pad.
pub const PAD: u32 = 7700;
/// A commit's `k` is drawn from 1..=COMMIT_K (sysbench's default --table-size: its
/// oltp_insert draws k over the table's size).
pub const COMMIT_K: u32 = 10_000;
/// Rows inserted per statement (MariaDB's max_recursive_iterations is 1,000).
const LOAD_ROWS: u64 = 500;

fn sql(c: &mut Conn, text: &str) -> Result<()> {
    c.query_drop(text).map_err(|e| {
        let words: Vec<&str> = text.split_whitespace().take(3).collect();
        Error::other(format!("{}: {}", words.join(" "), error_text(&e)))
    })
}

fn interrupted() -> Error {
    Error::Interrupted("interrupted while loading the table; nothing measured".into())
}

/// `SELECT n FROM` 1..=count, for an INSERT ... SELECT.
pub fn numbers(count: u64) -> String {
    format!(
        "(WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {count}) SELECT n FROM s) q"
    )
}

/// Creates `<db>.blocks` with `pages` pages (two rows each), then its statistics.
pub fn blocks(c: &mut Conn, db: &str, pages: u64, stop: &AtomicBool) -> Result<()> {
    sql(
        c,
        &format!(
            "CREATE TABLE {db}.blocks (id int unsigned NOT NULL PRIMARY KEY, n int NOT NULL DEFAULT 0, \
             pad varchar({PAD}) NOT NULL) ENGINE=InnoDB CHARACTER SET latin1 STATS_AUTO_RECALC=0"
        ),
    )?;
    let rows = pages * ROWS_PER_PAGE;
    let mut first = 0u64;
    while first < rows {
        if stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        let count = LOAD_ROWS.min(rows - first);
        c.exec_drop(
            format!(
                "INSERT INTO {db}.blocks (id, pad) SELECT n + ?, REPEAT('x', {PAD}) FROM {}",
                numbers(count)
            ),
            (first,),
        )
        .map_err(|e| Error::other(format!("loading the table: {}", error_text(&e))))?;
        first += count;
    }
    sql(c, &format!("ANALYZE TABLE {db}.blocks"))
}

/// The tables of the write tests: `commits` (redo: sysbench's `sbtest` table, an
/// auto-increment id, a secondary index on k, c char(120) and pad char(60)) and one
/// `bulk_<n>` per session (write-mbps, rows like `blocks`').
pub fn write_tables(c: &mut Conn, db: &str, sessions: u32, bulk: bool) -> Result<()> {
    if bulk {
        for n in 0..sessions {
            sql(
                c,
                &format!(
                    "CREATE TABLE {db}.bulk_{n} (id int unsigned NOT NULL, pad varchar({PAD}) NOT NULL) \
                     ENGINE=InnoDB CHARACTER SET latin1"
                ),
            )?;
        }
    } else {
        sql(
            c,
            &format!(
                "CREATE TABLE {db}.commits (id int NOT NULL AUTO_INCREMENT, \
                 k int NOT NULL DEFAULT 0, c char(120) NOT NULL DEFAULT '', \
                 pad char(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k)) \
                 ENGINE=InnoDB CHARACTER SET latin1"
            ),
        )?;
    }
    Ok(())
}
