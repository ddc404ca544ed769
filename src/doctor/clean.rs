//! `dbio clean --stale`: removes what the survey found stale — killed runs' directories
//! (only dbio's own files in them), killed preparations' and runs' temporary files — after
//! the leftovers of commands outside their results directories ([`super::leftovers`]).

use std::path::{Path, PathBuf};

use super::leftovers;
use super::report::{self, Cleaned};
use super::survey::{DirKind, KilledRun, Known, not_own_file, survey};
use crate::dataset::stale;
use crate::error::{ExitCode, Result};
use crate::report::Output;
use crate::safety::fs::Dir;

/// `dbio clean --stale [PATH...]`: removes what doctor reports as stale. `forget` hears of
/// each run directory removed (or found gone), for the results store to forget it.
pub fn clean_stale(
    paths: &[PathBuf],
    known: &Known,
    forget: &dyn Fn(&str),
    out: Output,
) -> Result<ExitCode> {
    let mut done = Cleaned {
        schema: "dbio.clean-stale.v1",
        actions: Vec::new(),
    };
    let f = survey(paths, known);
    let mut repaired = 0;
    // What commands made outside their results directories first: a throwaway server's
    // directory inside a killed run's must go before that run's directory can.
    let (undone, left) = leftovers::clean(&mut done.actions, paths, known);
    let mut did = |path: &str, what: String| {
        done.actions.push(report::Action {
            path: path.to_string(),
            done: what,
            left: false,
        })
    };
    repaired += undone;
    if paths.is_empty() {
        for r in &known.unfinished_run_dirs {
            if std::fs::symlink_metadata(&r.path).is_err() {
                forget(&r.path);
            }
        }
    }
    // Innermost first: a killed point's directory before the sweep's that holds it.
    let mut killed: Vec<&KilledRun> = f.killed_runs.iter().collect();
    killed.sort_by(|a, b| b.record.path.cmp(&a.record.path));
    for k in killed {
        let path = Path::new(&k.record.path);
        let Ok(dir) = Dir::open(path) else {
            forget(&k.record.path);
            continue;
        };
        let kind = DirKind::of(&k.record.test);
        let mut removed_files = 0;
        for rel in &k.own {
            if remove_own_file(&dir, rel, &kind)? {
                removed_files += 1;
            }
        }
        let mut removed_points = 0;
        for rel in &k.points {
            let (parent, name) = match rel.rsplit_once('/') {
                Some((parent, name)) => (dir.open_dir(parent).ok(), name),
                None => (None, rel.as_str()),
            };
            let parent = parent.as_ref().unwrap_or(&dir);
            if parent.remove_empty_dir(name).is_ok() {
                forget(&path.join(rel).display().to_string());
                if kind.points.is_none_or(|sub| sub.is_empty() || rel != sub) {
                    removed_points += 1;
                }
            }
        }
        let removed = match (path.parent(), path.file_name().and_then(|n| n.to_str())) {
            (Some(parent), Some(name)) => Dir::open(parent)
                .and_then(|p| p.remove_empty_dir(name))
                .is_ok(),
            _ => false,
        };
        let points = if kind.points.is_some() {
            format!(", {removed_points} point run directory(ies)")
        } else {
            String::new()
        };
        if removed {
            forget(&k.record.path);
            did(
                &k.record.path,
                format!(
                    "removed the directory of {} that was killed ({removed_files} file(s) of dbio's{points})",
                    report::what(&k.record.test),
                ),
            );
        } else {
            did(
                &k.record.path,
                format!(
                    "removed {removed_files} file(s) of dbio's{points}; the directory stays: it holds what is not dbio's ({})",
                    (k.foreign.iter().map(|(n, _)| n.as_str()))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        repaired += 1;
    }
    for h in f
        .data_sets
        .iter()
        .map(|x| &x.health)
        .filter(|h| h.is_stale())
    {
        let r = stale::clear_stale(&h.dir)?;
        for p in &r.removed {
            did(
                &h.dir.display().to_string(),
                format!(
                    "removed {} {}",
                    if h.unfinished_files() {
                        "the file of a killed preparation"
                    } else {
                        "temporary file"
                    },
                    p.display()
                ),
            );
        }
        repaired += 1;
    }
    out.emit(&report::cleaned(&done, repaired == 0 && left == 0), &done)?;
    Ok(if left > 0 {
        ExitCode::Failure
    } else {
        ExitCode::Ok
    })
}

/// Removes `rel` (a file, or `POINT/file`, `points/POINT/file`) from the results directory
/// `dir` of `kind` if it is still a plain file of dbio's of a name dbio writes there, as it
/// is looked at now. True when it was removed.
fn remove_own_file(dir: &Dir, rel: &str, kind: &DirKind) -> Result<bool> {
    let mut parts: Vec<&str> = rel.split('/').collect();
    let Some(name) = parts.pop() else {
        return Ok(false);
    };
    let files = if parts.is_empty() {
        kind.files
    } else {
        crate::run::RUN_DIR_FILES
    };
    let mut at: Option<Dir> = None;
    for p in parts {
        match at.as_ref().unwrap_or(dir).open_dir(p) {
            Ok(d) => at = Some(d),
            Err(_) => return Ok(false),
        }
    }
    let at = at.as_ref().unwrap_or(dir);
    let Ok(Some(e)) = at.entry(name) else {
        return Ok(false);
    };
    if not_own_file(&e, name, files).is_some() {
        return Ok(false);
    }
    at.remove_file(name, &e.id)
        .map_err(|err| crate::error::Error::io("cannot remove", &at.join(name), &err))
}
