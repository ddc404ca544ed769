//! `dbio precondition`: a data set (or, with `--destructive`, a block device) written over
//! in sequential 128 KiB writes before it is measured, with a progress bar, a line per pass
//! and what was done as a line of text (or Markdown), or with `--json` as JSON on stdout.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use serde_json::json;

use crate::cli::PreconditionArgs;
use crate::dataset::TargetKind;
use crate::dataset::precondition::{self, Counters, Pass, Preconditioned};
use crate::error::{Error, ExitCode, Result};
use crate::progress::{self, Progress};
use crate::units::{Shown, human_bytes};

/// What the command is called in refusals and questions.
const NAME: &str = "precondition";

/// Runs `dbio precondition`.
pub fn precondition(a: &PreconditionArgs, stop: &AtomicBool) -> Result<ExitCode> {
    let path = &a.target;
    let kind = crate::dataset::target_kind(path)?;
    let counters = Counters::default();
    let on_pass = |n: u32, p: &Pass| {
        stderr_line!(
            "dbio: pass {n} of {}: {} in {:.1} s, {:.1} MiB/s{}",
            a.options.0.passes,
            human_bytes(p.bytes),
            p.seconds,
            p.mib_s,
            if p.complete {
                ""
            } else {
                " — PARTIAL (stopped by a signal)"
            }
        );
    };
    let show = progress::wanted(a.options.0.progress, a.options.0.quiet);
    let (done, kind_name) = match kind {
        Some(TargetKind::Directory) => {
            let done = follow(show, &counters, || {
                precondition::data_set(path, a.options.0.passes, stop, &counters, &on_pass)
            })?;
            (done, "directory")
        }
        Some(TargetKind::BlockDevice) => {
            // Every check a write test makes before it overwrites a device (mounted,
            // holders, partitions, swap, open by others, aliases, O_EXCL, signatures),
            // then --destructive, then asked (or --yes).
            let consent = crate::safety::device::Consent {
                destructive: a.options.0.destructive,
                yes: a.options.0.yes,
                option: "",
            };
            let claim = crate::safety::device::claim(path, NAME, consent)?;
            crate::safety::device::confirm(&claim.info, NAME, a.options.0.yes)?;
            let done = follow(show, &counters, || {
                precondition::device(&claim, a.options.0.passes, stop, &counters, &on_pass)
            })?;
            stderr_line!(
                "dbio: note: a device has no manifest; the preconditioning is recorded only in this output (keep it with the results: `--json`)"
            );
            (done, "block_device")
        }
        Some(TargetKind::File) => {
            return Err(Error::usage(format!(
                "{} is a file; dbio preconditions a data set directory it prepared, or a block device with --destructive",
                path.shown()
            )));
        }
        None => {
            return Err(Error::usage(format!(
                "{} does not exist; give a data set directory dbio prepared (`dbio prepare`), or a block device with --destructive",
                path.shown()
            )));
        }
    };
    // The bytes of one pass: the whole target.
    let size = counters.total.load(Relaxed) / u64::from(a.options.0.passes.max(1));
    let report = crate::report::Report::lines([format!("{}: {}", path.display(), done.describe())]);
    crate::report::Output::new(a.options.0.json, a.options.0.format)
        .emit(&report, &json_value(path, kind_name, size, &done))?;
    if !done.complete() {
        stderr_line!(
            "dbio: stopped by a signal: {} of {} pass(es) complete{}",
            done.complete_passes(),
            done.passes_asked,
            if kind_name == "directory" && done.complete_passes() == 0 {
                "; the data set is not marked preconditioned"
            } else {
                ""
            }
        );
        return Ok(ExitCode::Interrupted);
    }
    Ok(ExitCode::Ok)
}

/// The JSON `--json` prints.
fn json_value(
    path: &std::path::Path,
    kind: &str,
    size: u64,
    done: &Preconditioned,
) -> serde_json::Value {
    json!({
        "target": path.display().to_string(),
        "kind": kind,
        "size_bytes": size,
        "request_bytes": done.request_bytes,
        "passes_asked": done.passes_asked,
        "passes_complete": done.complete_passes(),
        "complete": done.complete(),
        "bytes_written": done.bytes,
        "direct": done.direct,
        "at": done.at,
        "passes": done.passes,
    })
}

/// Runs `work` while a byte bar follows the counters (drawn once the total is known).
fn follow<T>(enabled: bool, c: &Counters, work: impl FnOnce() -> T) -> T {
    if !enabled {
        return work();
    }
    let finished = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut bar: Option<Progress> = None;
            while !finished.load(Relaxed) {
                let total = c.total.load(Relaxed);
                if bar.is_none() && total > 0 {
                    bar = Some(Progress::bytes(true, total, "preconditioning"));
                }
                if let Some(b) = &bar {
                    b.set_position(c.written.load(Relaxed));
                }
                std::thread::sleep(progress::TICK);
            }
        });
        let out = work();
        finished.store(true, Relaxed);
        out
    })
}
