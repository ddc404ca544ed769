//! `dbio doctor` and `dbio clean --stale`: what dbio has left on this machine.
//!
//! Looked at: other dbio processes running now; every data set in the results store's
//! registry, wherever it is (present, gone, in use, or left with something to repair), and
//! the run directories the store knows; plus the default places (`./dbio-data`,
//! `./dbio-runs`) — or only the paths given, each a data set, a directory of runs, or a
//! directory holding them one level down. Whether a run is using a data set is told by its
//! lock, never by a PID in a file. Doctor exits 1 when something needs attention and says
//! what to do.
//!
//! Here: the checkup made of what `survey.rs` gathers (the facts), with the advice;
//! `report.rs` is the checkup's value (printed as it is with `--json`) and its report in
//! words; `clean.rs` removes what is stale; `leftovers.rs` is what commands made outside
//! their results directories, listed and undone.

use std::path::{Path, PathBuf};

use crate::dataset::State;
use crate::dataset::stale::Health;
use crate::error::{ExitCode, Result};
use crate::report::Output;
use crate::safety::lock::Holder;
use crate::units::shell_word;
use report::Checkup;

mod clean;
mod leftovers;
pub mod report;
mod survey;

pub use clean::clean_stale;
pub(crate) use survey::canonical;
pub use survey::{DirKind, Known, Process, other_dbio_processes, survey};

/// `dbio doctor [PATH...]`: what was found, as a report or (`--json`) as [`Checkup`]; exit
/// 1 when something needs attention.
pub fn doctor(paths: &[PathBuf], known: &Known, out: Output) -> Result<ExitCode> {
    let c = checkup(paths, known);
    out.emit(&report::checkup(&c), &c)?;
    Ok(if c.needs_attention.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::Failure
    })
}

/// Everything doctor looks at, and the advice on what needs attention.
fn checkup(paths: &[PathBuf], known: &Known) -> Checkup {
    let processes = (other_dbio_processes().into_iter())
        .map(|p| report::ProcessJson {
            pid: p.pid,
            stopped: p.stopped,
            command: crate::safety::lock::printable(&p.cmdline),
        })
        .collect();
    let f = survey(paths, known);
    let text = |p: &Path| p.display().to_string();
    let holders = |h: &[Holder]| h.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let data_sets = (f.data_sets.iter())
        .map(|found| {
            let h = &found.health;
            report::DataSetJson {
                path: text(&h.dir),
                bytes: h.bytes,
                data_files: h.data_files,
                redo_files: h.redo_files,
                state: match h.state {
                    State::Ready => "ready",
                    State::Preparing => "preparing",
                },
                in_use: if h.busy {
                    Some("writing")
                } else if !h.holders.is_empty() {
                    Some("reading")
                } else {
                    None
                },
                holders: holders(&h.holders),
                missing: h.missing,
                last_used_at: found.record.as_ref().map(|r| r.last_used_at.clone()),
                last_test: found.record.as_ref().map(|r| r.last_test.clone()),
                last_run_id: found.record.as_ref().and_then(|r| r.last_run_id),
                killed_preparation: h.unfinished_files(),
                stray_temp_files: h.stray_temp_files.iter().map(|t| text(t)).collect(),
                manifest_changes: h.rejected.iter().map(|r| r.to_string()).collect(),
                left_alone: (h.foreign.iter())
                    .map(|(p, why)| report::Why {
                        path: text(p),
                        why: why.to_string(),
                    })
                    .collect(),
            }
        })
        .collect();
    let mounts = crate::sweep::filesystem::left_mounted();
    let (leftovers, stale_left) = leftovers::list(known);
    let stale: Vec<&Health> = (f.data_sets.iter())
        .map(|x| &x.health)
        .filter(|h| h.is_stale())
        .collect();
    let changed = f
        .data_sets
        .iter()
        .filter(|x| x.health.needs_attention() && !x.health.is_stale())
        .count();
    let mut advice = Vec::new();
    if known.store_locked {
        advice.push(
            "the results store is held by another process: data sets and run directories it registered are not listed; resume or end that process (a stopped dbio is named above) and run doctor again".to_string(),
        );
    } else if known.store_problem.is_some() {
        advice.push(
            "the results store cannot be read: data sets and run directories it registered are not listed; move it aside or use another with --db PATH or DBIO_DB".to_string(),
        );
    }
    if !mounts.is_empty() {
        advice.push(format!(
            "a file system sweep's mount point: unmount it twice (`umount PATH`: the file system, then the private mount point beneath it), `rmdir PATH`, then erase the device the sweep made its file systems on (`wipefs -a DEV`, then {})",
            crate::sweep::filesystem::zero_by_hand("DEV")
        ));
    }
    if stale_left > 0 {
        advice.push(format!(
            "{stale_left} thing(s) made or changed by commands that are gone: `dbio clean --stale` removes or restores each (only if it is still what dbio made), or run the command shown"
        ));
    }
    if !f.killed_runs.is_empty() {
        advice.push(format!(
            "{} run directory(ies) of killed runs: `dbio clean --stale` removes them (files that are not dbio's stay, and so does their directory; finished points of a sweep are kept in the results store)",
            f.killed_runs.len()
        ));
    }
    if !stale.is_empty() {
        let dirs: Vec<String> = stale
            .iter()
            .map(|h| shell_word(&h.dir.display().to_string()))
            .collect();
        advice.push(format!(
            "{} data set(s) hold temporary files of killed runs or files of killed preparations: `dbio clean --stale {}` removes them (complete data files stay; `dbio clean PATH` removes a whole data set)",
            stale.len(),
            dirs.join(" ")
        ));
    }
    if !f.unfinished.is_empty() {
        let dirs: Vec<String> = (f.unfinished.iter())
            .map(|d| shell_word(&d.display().to_string()))
            .collect();
        advice.push(format!(
            "{} directory(ies) left by killed first preparations: `dbio clean {}` removes them",
            dirs.len(),
            dirs.join(" ")
        ));
    }
    if changed > 0 {
        advice.push(format!(
            "{changed} data set(s) list files that are not dbio's (a changed manifest or replaced files): dbio leaves them alone; look at them and remove them yourself"
        ));
    }
    Checkup {
        schema: "dbio.doctor.v1",
        processes,
        data_sets,
        gone: (f.gone.iter())
            .map(|g| report::GoneJson {
                path: g.path.clone(),
                disk_bytes: g.disk_bytes,
                last_used_at: g.last_used_at.clone(),
            })
            .collect(),
        unfinished: f.unfinished.iter().map(|u| text(u)).collect(),
        data_set_bytes: f.data_sets.iter().map(|x| x.health.bytes).sum(),
        run_dirs: (f.runs.iter())
            .map(|r| report::RunsJson {
                path: text(&r.dir),
                runs: r.runs,
                bytes: r.bytes,
            })
            .collect(),
        running: (f.running.iter())
            .map(|(r, h)| report::RunningJson {
                path: r.path.clone(),
                kind: r.test.clone(),
                holders: holders(h),
            })
            .collect(),
        killed: (f.killed_runs.iter())
            .map(|k| report::KilledJson {
                path: k.record.path.clone(),
                kind: k.record.test.clone(),
                started_at: k.record.created_at.clone(),
                point_dirs: (DirKind::of(&k.record.test).points.is_some()).then(|| k.point_dirs()),
                own_files: k.own.len(),
                left_alone: (k.foreign.iter())
                    .map(|(name, why)| report::Why {
                        path: text(&Path::new(&k.record.path).join(name)),
                        why: why.to_string(),
                    })
                    .collect(),
            })
            .collect(),
        notes: f.notes,
        mounts: mounts.iter().map(|m| m.to_string()).collect(),
        leftovers,
        store_problem: known.store_problem.clone(),
        needs_attention: advice,
    }
}
