//! The test shapes a database runs, and the ONE table that says, for each, which dbio test
//! and `--sync`/`--async` select it, what its statement is called, and which plain dbio
//! test (with which options) is its storage side in a compare. A new database's adapter
//! runs these shapes with its own SQL ([`super::Database::session`]); a new shape is one
//! row here.

use std::path::Path;

use crate::options::RunArgs;
use crate::workload::Test;

/// What one session of a test through a database does, whatever the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Random single-page reads by primary-key lookup (an index scan).
    Lookup,
    /// Prefetched batches: one statement reads `batch` random pages, `depth` ahead.
    Batch,
    /// Sequential reads: range scans over the session's stripe, a chunk at a time.
    Scan,
    /// Random single-row updates (the writes follow from the pages they dirty).
    Update,
    /// Bulk loads: a chunk of rows into the session's own table.
    Copy,
    /// Small committing transactions, each commit waiting for its log flush.
    Commit,
}

/// How the storage side of a compare submits: as the database run was asked, or always so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submission {
    /// `--sync`/`--async` as given.
    AsGiven,
    Sync,
    Async,
}

/// The plain dbio test a shape is compared with: same sessions, size, duration and depth
/// as the database run; the request of one page (`--block-size` = the database's page);
/// the io mode and the rest as the plain test's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plain {
    pub test: Test,
    pub submission: Submission,
    /// `--block-size` is the database's page.
    pub page_blocks: bool,
}

/// One row of [`SHAPES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShapeRow {
    pub shape: Shape,
    /// The test that runs it (`dbio pg run read-iops`).
    pub test: Test,
    /// Only with `--sync` (true), only without (false), or either (None).
    pub sync: Option<bool>,
    /// What one timed statement is, in words ("index lookup").
    pub statement: &'static str,
    /// Whether it reads the loaded table (its cache is kept out), or writes.
    pub reads: bool,
    pub writes: bool,
    /// Its storage side in a compare.
    pub plain: Plain,
}

/// Every shape: the table the next adapter extends.
pub const SHAPES: &[ShapeRow] = &[
    ShapeRow {
        shape: Shape::Lookup,
        test: Test::ReadIops,
        sync: Some(true),
        statement: "index lookup",
        reads: true,
        writes: false,
        plain: Plain {
            test: Test::ReadIops,
            submission: Submission::Sync,
            page_blocks: true,
        },
    },
    ShapeRow {
        shape: Shape::Batch,
        test: Test::ReadIops,
        sync: Some(false),
        statement: "prefetched batch",
        reads: true,
        writes: false,
        plain: Plain {
            test: Test::ReadIops,
            submission: Submission::Async,
            page_blocks: true,
        },
    },
    ShapeRow {
        shape: Shape::Scan,
        test: Test::ReadMbps,
        sync: None,
        statement: "range scan chunk",
        reads: true,
        writes: false,
        plain: Plain {
            test: Test::ReadMbps,
            submission: Submission::AsGiven,
            page_blocks: false,
        },
    },
    ShapeRow {
        shape: Shape::Update,
        test: Test::WriteIops,
        sync: None,
        statement: "row update",
        reads: false,
        writes: true,
        plain: Plain {
            test: Test::WriteIops,
            submission: Submission::AsGiven,
            page_blocks: true,
        },
    },
    ShapeRow {
        shape: Shape::Copy,
        test: Test::WriteMbps,
        sync: None,
        statement: "bulk load chunk",
        reads: false,
        writes: true,
        plain: Plain {
            test: Test::WriteMbps,
            submission: Submission::AsGiven,
            page_blocks: false,
        },
    },
    ShapeRow {
        shape: Shape::Commit,
        test: Test::Redo,
        sync: None,
        statement: "row insert + commit",
        reads: false,
        writes: false,
        plain: Plain {
            test: Test::Redo,
            submission: Submission::AsGiven,
            page_blocks: false,
        },
    },
];

/// The tests a database runs (each once, in table order).
pub fn tests() -> Vec<Test> {
    let mut t: Vec<Test> = Vec::new();
    for r in SHAPES {
        if !t.contains(&r.test) {
            t.push(r.test);
        }
    }
    t
}

/// The row of `test` with `--sync` (`sync`).
pub fn row(test: Test, sync: bool) -> Option<&'static ShapeRow> {
    SHAPES
        .iter()
        .find(|r| r.test == test && r.sync.is_none_or(|s| s == sync))
}

impl Shape {
    /// This shape's row.
    pub fn row(self) -> &'static ShapeRow {
        SHAPES
            .iter()
            .find(|r| r.shape == self)
            .expect("every shape has its row")
    }
}

/// The plain dbio test matching `db_run` (a database run of `row`), on `dir` (a directory
/// on the data directory's file system), for a database of `page`-byte pages: the row's
/// test and submission, the run's sessions, size, depth, duration and warm-up.
pub fn plain_args(row: &ShapeRow, db_run: &RunArgs, dir: &Path, page: u64) -> RunArgs {
    let mut a = db_run.clone();
    a.target = dir.to_path_buf();
    a.test = Some(row.plain.test);
    match row.plain.submission {
        Submission::AsGiven => {}
        Submission::Sync => a.sync = true,
        Submission::Async => a.sync = false,
    }
    if row.plain.page_blocks {
        a.block_size = page;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_test_and_submission_has_one_shape_and_every_shape_one_row() {
        for test in tests() {
            for sync in [true, false] {
                assert!(row(test, sync).is_some(), "{test:?} sync={sync}");
            }
        }
        assert_eq!(row(Test::ReadIops, true).unwrap().shape, Shape::Lookup);
        assert_eq!(row(Test::ReadIops, false).unwrap().shape, Shape::Batch);
        for r in SHAPES {
            assert_eq!(r.shape.row(), r);
        }
    }

    #[test]
    fn the_storage_side_is_the_matching_plain_test_with_the_runs_options() {
        let mut a = RunArgs::defaults(Some(Test::ReadIops));
        a.sessions = 4;
        a.depth = 16;
        a.sync = false;
        let p = plain_args(
            row(Test::ReadIops, true).unwrap(),
            &a,
            Path::new("/x"),
            8192,
        );
        assert_eq!(p.test, Some(Test::ReadIops));
        assert!(p.sync, "an index lookup is compared with synchronous reads");
        assert_eq!((p.sessions, p.depth, p.block_size), (4, 16, 8192));
        assert_eq!(p.target, Path::new("/x"));
        let p = plain_args(Shape::Batch.row(), &a, Path::new("/x"), 16384);
        assert!(!p.sync);
        assert_eq!(p.block_size, 16384, "InnoDB's pages");
    }
}
