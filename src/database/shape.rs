//! The test shapes a database runs, and the ONE table that says, for each, which dbio test
//! and `--sync`/`--async` select it, what its statement is called, and which plain dbio
//! test (with which options) is its storage side in a compare. A new database's adapter
//! runs these shapes with its own SQL ([`super::Database::session`]); a new shape is one
//! row here.

use std::path::Path;

use crate::error::{Error, Result};
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

/// How a compare's storage side issues a database's I/O: its shapes (`--like`, where the
/// plain test has them) with the settings the server ran with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StorageShape {
    pub like: crate::workload::event::Like,
    /// `--io-mode`: the server's flush method, when dbio models it.
    pub io_mode: Option<crate::engine::IoMode>,
    /// `--doublewrite` (write-iops): as the server had it.
    pub doublewrite: Option<bool>,
    /// `--redo-per-commit` (a COPY's WAL, `--like postgres` write-mbps): the bytes of WAL
    /// the server logged per commit.
    pub wal_per_commit: Option<u64>,
    /// What the storage side cannot do as the server did, in words.
    pub cautions: Vec<String>,
}

/// The plain dbio test matching a database test (the shape table's row), on `dir` (a
/// directory on the data directory's file system), with the database's own shapes
/// (`shape.like`: `--like innodb` with the server's flush method and doublewrite, `--like
/// postgres` with its WAL sync method) where the plain test has them.
pub fn storage_args(
    db_run: &RunArgs,
    dir: &Path,
    page: u64,
    shape: &super::StorageShape,
) -> Result<RunArgs> {
    use crate::options::{Source, find};
    use crate::workload::event::Like;
    let test = db_run
        .test
        .ok_or_else(|| Error::usage("TEST: one of the tests is needed"))?;
    let row = row(test, db_run.sync).ok_or_else(|| {
        Error::usage(format!(
            "TEST {}: not a test through a database",
            test.name()
        ))
    })?;
    let mut a = plain_args(row, db_run, dir, page);
    let plain = row.plain.test;
    let applies = |name: &str| find(name).is_some_and(|o| o.applies.to(plain));
    if shape.like != Like::Oracle && shape.like.tests().contains(&plain) {
        // A COPY adds one page at a time at every --depth (the database run's depth is a
        // read-ahead distance): PostgreSQL's write-mbps takes neither it nor --mbrc.
        if shape.like == Like::Postgres && plain == Test::WriteMbps {
            a.sources.remove("depth");
            a.sources.remove("mbrc");
            a.mbrc = None;
        }
        let mut set = |name: &str, text: &str| {
            a.set(name, text, Source::Typed)
                .map_err(|e| Error::other(format!("the storage side's --{name}: {e}")))
        };
        set("like", shape.like.name())?;
        if let Some(m) = shape.io_mode {
            set("io-mode", m.name())?;
        }
        if let Some(on) = shape.doublewrite
            && applies("doublewrite")
        {
            set("doublewrite", if on { "on" } else { "off" })?;
        }
        if let Some(bytes) = shape.wal_per_commit
            && shape.like == Like::Postgres
            && plain == Test::WriteMbps
        {
            set("redo-per-commit", &bytes.to_string())?;
        }
    }
    Ok(a)
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

    #[test]
    fn the_plain_test_runs_where_the_data_directory_is() {
        let mut a = RunArgs::defaults(Some(crate::workload::Test::ReadIops));
        a.sessions = 4;
        let none = crate::database::StorageShape::default();
        let s = storage_args(&a, Path::new("/srv/pg/dbio-compare"), 8192, &none).unwrap();
        assert_eq!(s.target, Path::new("/srv/pg/dbio-compare"));
        assert_eq!(s.sessions, 4);
        assert_eq!(s.like, crate::workload::event::Like::Oracle);
        // InnoDB's: --like innodb with the server's flush method, and its doublewrite where
        // the test has one, as typed options (the shapes' defaults do not override them).
        let innodb = crate::database::StorageShape {
            like: crate::workload::event::Like::Innodb,
            io_mode: Some(crate::engine::IoMode::Fsync),
            doublewrite: Some(false),
            wal_per_commit: None,
            cautions: vec![],
        };
        let mut w = RunArgs::defaults(Some(crate::workload::Test::WriteIops));
        w.sessions = 2;
        let s = storage_args(&w, Path::new("/d"), 16384, &innodb).unwrap();
        assert_eq!(s.like, crate::workload::event::Like::Innodb);
        assert_eq!(s.io_mode, crate::engine::IoMode::Fsync);
        assert!(!s.doublewrite);
        assert!(s.typed("io-mode") && s.typed("doublewrite"));
        let cfg = crate::options::check::run_config(&s).unwrap();
        assert_eq!(cfg.io_mode, crate::engine::IoMode::Fsync);
        // read-iops has no doublewrite; write-mbps has no InnoDB shape: plain.
        let s = storage_args(&a, Path::new("/d"), 16384, &innodb).unwrap();
        assert!(s.typed("like") && !s.typed("doublewrite"));
        let wm = RunArgs::defaults(Some(crate::workload::Test::WriteMbps));
        let s = storage_args(&wm, Path::new("/d"), 16384, &innodb).unwrap();
        assert_eq!(s.like, crate::workload::event::Like::Oracle);
        // PostgreSQL's: --like postgres with the server's WAL sync method, checked whole,
        // for every test, write-mbps (a COPY) included.
        let pg = crate::database::StorageShape {
            like: crate::workload::event::Like::Postgres,
            io_mode: Some(crate::engine::IoMode::OpenDatasync),
            doublewrite: None,
            wal_per_commit: None,
            cautions: vec![],
        };
        for test in [
            crate::workload::Test::ReadIops,
            crate::workload::Test::ReadMbps,
            crate::workload::Test::WriteIops,
            crate::workload::Test::WriteMbps,
            crate::workload::Test::Redo,
        ] {
            let mut a = RunArgs::defaults(Some(test));
            a.sessions = 2;
            let s = storage_args(&a, Path::new("/d"), 8192, &pg).unwrap();
            assert_eq!(s.like, crate::workload::event::Like::Postgres, "{test:?}");
            assert!(s.typed("io-mode") && !s.typed("doublewrite"), "{test:?}");
            let cfg = crate::options::check::run_config(&s).unwrap();
            assert_eq!(cfg.io_mode, crate::engine::IoMode::OpenDatasync);
            assert_eq!(cfg.dataset.block_size, 8192);
        }
        // The COPY's storage side: 8 KiB extends, whatever --depth the database run had.
        let mut a = RunArgs::defaults(Some(crate::workload::Test::WriteMbps));
        a.set("depth", "16", crate::options::Source::Typed).unwrap();
        let s = storage_args(&a, Path::new("/d"), 8192, &pg).unwrap();
        assert!(!s.typed("depth"));
        let cfg = crate::options::check::run_config(&s).unwrap();
        let c = crate::workload::presets::classes(&cfg);
        assert_eq!(c[0].event, crate::workload::Event::PgDataFileExtend);
        assert_eq!(c[0].sizes.max(), 8192);
    }
}
