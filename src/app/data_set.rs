//! The commands on one data set: `dbio prepare`, `dbio verify` and `dbio clean PATH`. Each
//! says what it did as a report of a few lines, or with `--json` as the JSON value
//! docs/outputs.md describes, through [`Output`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use serde::Serialize;

use super::record::{in_present_store, register};
use crate::cli::{CleanArgs, PrepareArgs};
use crate::dataset::{self, FillOptions};
use crate::error::{Error, ExitCode, Result};
use crate::report::{Output, Report};
use crate::units::{Shown, human_bytes};
use crate::workload::spec::rand_seed;

/// What `dbio prepare --json` prints.
#[derive(Serialize)]
struct Prepared {
    schema: &'static str,
    path: String,
    size_bytes: u64,
    files: usize,
    redo_files: usize,
    block_size: u64,
    disk_bytes: u64,
    reused: bool,
    prepare_seconds: f64,
    /// The rate it was filled at; null when it was reused.
    mib_per_s: Option<f64>,
    fill_method: Option<String>,
    fill: Option<String>,
}

pub(super) fn prepare(
    a: &PrepareArgs,
    stop: &Arc<AtomicBool>,
    db: Option<&Path>,
) -> Result<ExitCode> {
    let spec = crate::options::check::data_set(&a.options.0)?;
    crate::safety::places::check_target(&spec.target)?;
    let written = AtomicU64::new(0);
    let seed = a.options.0.seed.unwrap_or_else(rand_seed);
    let fill = FillOptions {
        seed,
        buffered: a.options.0.buffered,
        written: &written,
        stop,
    };
    let ds = crate::progress::follow_bytes(
        crate::progress::wanted(a.options.0.progress, a.options.0.quiet),
        spec.size,
        "preparing the data set",
        &written,
        || {
            dataset::prepare(&dataset::Prepare {
                target: &spec.target,
                data: Some(&spec),
                redo: None,
                fresh: spec.fresh,
                writes: true,
                region_writer: false,
                space: Default::default(),
                fill: &fill,
            })
        },
    )?;
    register(db, &ds, "prepare");
    let filled = !ds.reused && ds.prepare_seconds > 0.0;
    let mib_per_s =
        filled.then(|| ds.size_bytes() as f64 / (1u64 << 20) as f64 / ds.prepare_seconds);
    let mut lines = Vec::new();
    if let Some(rate) = mib_per_s {
        lines.push(format!(
            "prepared {} in {:.1} s ({rate:.0} MiB/s, {})",
            human_bytes(ds.size_bytes()),
            ds.prepare_seconds,
            ds.fill_method.as_deref().unwrap_or("")
        ));
    }
    lines.push(ds.describe());
    let json = Prepared {
        schema: "dbio.prepare.v1",
        path: ds.path.display().to_string(),
        size_bytes: ds.size_bytes(),
        files: ds.files.len(),
        redo_files: ds.redo_files.len(),
        block_size: ds.block_size,
        disk_bytes: ds.disk_bytes(),
        reused: ds.reused,
        prepare_seconds: ds.prepare_seconds,
        mib_per_s,
        fill_method: ds.fill_method.clone(),
        fill: ds.fill.clone(),
    };
    Output::new(a.options.0.json, a.options.0.format).emit(&Report::lines(lines), &json)?;
    Ok(ExitCode::Ok)
}

/// What `dbio verify --json` prints.
#[derive(Serialize)]
struct Verified<'a> {
    schema: &'static str,
    path: String,
    files: usize,
    blocks: u64,
    bytes: u64,
    seconds: f64,
    /// How block sequences were checked: `exact`, `lower_bound` (a killed run's table: a
    /// block may be newer, never older) or `none` (lost writes cannot be found; why in
    /// `sequence_note`).
    sequence: &'static str,
    sequence_note: Option<&'a str>,
    /// Bad blocks, one line each (file, block, problem).
    bad: &'a [String],
    /// Files that could not be read to the end, one line each.
    io_errors: &'a [String],
    interrupted: bool,
    /// The summary line of the text.
    summary: String,
}

/// `dbio verify PATH`: every bad block on a line of its own, then one summary line.
pub(super) fn verify(a: &crate::cli::VerifyArgs, stop: &AtomicBool) -> Result<ExitCode> {
    let path = &a.path;
    let r = crate::dataset::scan::scan(path, stop)?;
    let (sequence, sequence_note) = match &r.seq {
        crate::dataset::scan::SeqCheck::Exact => ("exact", None),
        crate::dataset::scan::SeqCheck::LowerBound => {
            stderr_line!(
                "dbio: note: the last run on this data set did not end (killed?): a block older than recorded is still found, a lost write of that run is not"
            );
            ("lower_bound", None)
        }
        crate::dataset::scan::SeqCheck::None(why) => {
            stderr_line!(
                "dbio: note: {why}: checksums and places are checked, lost writes cannot be"
            );
            ("none", Some(why.as_str()))
        }
    };
    let summary = crate::dataset::scan::summary_line(path, &r);
    let lines = (r.bad.iter().chain(&r.io_errors).cloned()).chain([summary.clone()]);
    let json = Verified {
        schema: "dbio.verify.v1",
        path: path.display().to_string(),
        files: r.files,
        blocks: r.blocks,
        bytes: r.bytes,
        seconds: r.seconds,
        sequence,
        sequence_note,
        bad: &r.bad,
        io_errors: &r.io_errors,
        interrupted: r.interrupted,
        summary,
    };
    Output::new(a.options.0.json, a.options.0.format).emit(&Report::lines(lines), &json)?;
    Ok(if !r.io_errors.is_empty() {
        ExitCode::IoError
    } else if !r.bad.is_empty() {
        ExitCode::Failure
    } else if r.interrupted {
        ExitCode::Interrupted
    } else {
        ExitCode::Ok
    })
}

/// A file and why it is where it is (`dbio clean --json`).
#[derive(Serialize)]
struct Why {
    path: String,
    why: String,
}

/// What `dbio clean PATH --json` prints.
#[derive(Serialize, Default)]
struct Cleaned {
    schema: &'static str,
    path: String,
    /// What was done: `removed` (the data set's files), `unfinished` (the lock file a
    /// killed first preparation left), `forgotten` (the registry's record only: the
    /// manifest is gone) or `gone` (the directory is gone: forgotten).
    done: &'static str,
    files: usize,
    bytes: u64,
    removed_dir: bool,
    /// Listed files that are not dbio's any more: left alone.
    left_alone: Vec<Why>,
    /// Files of dbio's that could not be removed.
    remaining: Vec<Why>,
    /// What was wrong in a changed manifest (ignored; nothing of it was touched).
    ignored: Vec<String>,
}

pub(crate) fn clean(a: &CleanArgs, db: Option<&Path>) -> Result<ExitCode> {
    let out = Output::new(a.options.0.json, a.options.0.format);
    let path = match a.paths.as_slice() {
        [] => PathBuf::from("./dbio-data"),
        [p] => p.clone(),
        _ => {
            return Err(Error::usage(
                "dbio clean takes one data set directory (or several with --stale)",
            ));
        }
    };
    let registered = std::fs::canonicalize(&path).unwrap_or_else(|_| {
        std::env::current_dir()
            .map(|d| d.join(&path))
            .unwrap_or_else(|_| path.clone())
    });
    let forget = || -> bool {
        in_present_store(db, |s| s.forget_data_set(&registered.display().to_string()))
            .is_ok_and(|forgot| forgot == Some(true))
    };
    let mut json = Cleaned {
        schema: "dbio.clean.v1",
        path: path.display().to_string(),
        ..Default::default()
    };
    // Registered, but its manifest is gone (deleted by hand): forgotten, nothing removed.
    if dataset::holds_no_data_set(&path) && forget() {
        json.done = "forgotten";
        let line = format!(
            "{} holds no dbio data set any more (its {} is gone); forgotten by the results store, nothing removed",
            path.display(),
            dataset::manifest::MANIFEST_NAME
        );
        out.emit(&Report::lines([line]), &json)?;
        return Ok(ExitCode::Ok);
    }
    if !path.exists() && forget() {
        json.done = "gone";
        let line = format!(
            "{} is gone (moved or deleted by hand); forgotten by the results store",
            path.display()
        );
        out.emit(&Report::lines([line]), &json)?;
        return Ok(ExitCode::Ok);
    }
    let r = dataset::clean(&path)?;
    let line = if r.unfinished {
        json.done = "unfinished";
        format!(
            "removed the lock file a killed first preparation left in {}{}",
            path.display(),
            if r.removed_dir {
                ", and the directory it had created"
            } else {
                " (the directory was there before: it stays)"
            }
        )
    } else {
        json.done = "removed";
        format!(
            "removed {} file(s), {} from {}{}",
            r.files,
            human_bytes(r.bytes),
            path.display(),
            if r.removed_dir {
                " and the directory"
            } else {
                ""
            }
        )
    };
    let why = |v: &[(PathBuf, String)]| -> Vec<Why> {
        (v.iter())
            .map(|(p, why)| Why {
                path: p.display().to_string(),
                why: why.clone(),
            })
            .collect()
    };
    json.files = r.files;
    json.bytes = r.bytes;
    json.removed_dir = r.removed_dir;
    json.left_alone = why(&r.left_alone);
    json.remaining = why(&r.remaining);
    json.ignored = r.ignored.clone();
    out.emit(&Report::lines([line]), &json)?;
    for why in &r.ignored {
        stderr_line!(
            "dbio: note: the manifest was changed: {why} (ignored; nothing of it was touched)"
        );
    }
    for (p, why) in &r.left_alone {
        stderr_line!("dbio: left {} alone: {why}", p.shown());
    }
    for (p, why) in &r.remaining {
        stderr_line!("dbio: could not remove {}: {why}", p.shown());
    }
    if r.remaining.is_empty() {
        forget();
    }
    Ok(if !r.remaining.is_empty() {
        stderr_line!(
            "dbio: the data set in {} is not removed: {} of its files remain; run `dbio clean {}` as a user allowed to remove them",
            path.shown(),
            r.remaining.len(),
            crate::units::shell_word(&path.display().to_string())
        );
        ExitCode::IoError
    } else if !r.left_alone.is_empty() {
        ExitCode::Failure
    } else {
        ExitCode::Ok
    })
}
