//! `dbio doctor` and `dbio clean --stale`: what dbio has left on this machine.
//!
//! Looked at: other dbio processes running now; the data sets and run directories in the
//! default places (`./dbio-data`, `./dbio-runs`) or in the paths given — each path may be a
//! data set, a run directory (holding run directories) or a directory holding either, one
//! level down; and data sets a killed run left marked in use or with temporary files.
//! Doctor exits 1 when something needs attention (a stale data set) and says what to do.

use std::path::{Path, PathBuf};

use crate::dataset::State;
use crate::dataset::stale::{self, Health};
use crate::error::{ExitCode, Result};
use crate::report::summary::thousands;
use crate::units::human_bytes;

/// One other dbio process.
#[derive(Debug, Clone)]
pub struct Process {
    pub pid: u32,
    pub cmdline: String,
}

/// Running dbio processes other than this one.
pub fn other_dbio_processes() -> Vec<Process> {
    let me = std::process::id();
    let mut out: Vec<Process> = std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|&pid| pid != me && stale::is_running_dbio(pid))
                .map(|pid| Process {
                    pid,
                    cmdline: std::fs::read(format!("/proc/{pid}/cmdline"))
                        .map(|b| {
                            b.split(|&c| c == 0)
                                .filter(|a| !a.is_empty())
                                .map(|a| String::from_utf8_lossy(a).into_owned())
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort_by_key(|p| p.pid);
    out
}

/// A directory of run directories.
#[derive(Debug, Clone)]
pub struct Runs {
    pub dir: PathBuf,
    pub runs: usize,
    pub bytes: u64,
}

/// What was found under the paths.
#[derive(Debug, Default)]
pub struct Findings {
    pub data_sets: Vec<Health>,
    pub runs: Vec<Runs>,
    /// Paths that were given but hold nothing of dbio's, or could not be read.
    pub notes: Vec<String>,
}

fn default_paths(paths: &[PathBuf]) -> (Vec<PathBuf>, bool) {
    if paths.is_empty() {
        (
            vec![PathBuf::from("./dbio-data"), PathBuf::from("./dbio-runs")],
            true,
        )
    } else {
        (paths.to_vec(), false)
    }
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| match e.file_type() {
                    Ok(t) if t.is_dir() => dir_bytes(&e.path()),
                    Ok(t) if t.is_file() => e.metadata().map(|m| m.len()).unwrap_or(0),
                    _ => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

/// Looks at `path`: a data set, a directory of runs, or (at depth 0) a directory holding them.
fn look(path: &Path, depth: usize, f: &mut Findings) -> bool {
    match stale::inspect(path) {
        Ok(Some(h)) => {
            f.data_sets.push(h);
            return true;
        }
        Ok(None) => {}
        Err(e) => {
            f.notes.push(format!("{}: {e}", path.display()));
            return true;
        }
    }
    let Ok(rd) = std::fs::read_dir(path) else {
        return false;
    };
    let mut children: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    children.sort();
    let runs = children
        .iter()
        .filter(|c| c.join("result.json").is_file())
        .count();
    if runs > 0 {
        f.runs.push(Runs {
            dir: path.to_path_buf(),
            runs,
            bytes: dir_bytes(path),
        });
        return true;
    }
    let mut found = false;
    if depth == 0 {
        for c in &children {
            found |= look(c, 1, f);
        }
    }
    found
}

/// Finds data sets and run directories under `paths` (default ./dbio-data, ./dbio-runs).
pub fn survey(paths: &[PathBuf]) -> Findings {
    let (paths, defaults) = default_paths(paths);
    let mut f = Findings::default();
    for p in &paths {
        if !p.exists() {
            if !defaults {
                f.notes.push(format!("{} does not exist", p.display()));
            }
            continue;
        }
        if !look(p, 0, &mut f) {
            f.notes.push(format!(
                "{} holds no dbio data set or run directory",
                p.display()
            ));
        }
    }
    f
}

/// `dbio doctor [PATH...]`.
pub fn doctor(paths: &[PathBuf]) -> Result<ExitCode> {
    let procs = other_dbio_processes();
    if procs.is_empty() {
        println!("Other dbio processes: none");
    } else {
        println!(
            "Other dbio processes ({}; they compete for the same storage and CPUs while a test runs):",
            procs.len()
        );
        for p in &procs {
            println!("  pid {}: {}", p.pid, p.cmdline);
        }
    }
    let f = survey(paths);
    println!("\nData sets");
    if f.data_sets.is_empty() {
        println!("  none found");
    }
    for h in &f.data_sets {
        println!("  {}", describe(h));
        if h.stale_in_use
            && let Some(u) = &h.in_use
        {
            println!(
                "    STALE: marked in use by pid {} ({}, since {}), which is no longer running: that run was killed",
                u.pid, u.test, u.since
            );
        }
        for t in &h.stray_temp_files {
            println!("    STRAY temporary file of a killed run: {}", t.display());
        }
    }
    println!("\nRun directories");
    if f.runs.is_empty() {
        println!("  none found");
    }
    for r in &f.runs {
        println!(
            "  {}: {} run(s), {}",
            r.dir.display(),
            thousands(r.runs as u64),
            human_bytes(r.bytes)
        );
    }
    for n in &f.notes {
        println!("  note: {n}");
    }
    let stale: Vec<&Health> = f.data_sets.iter().filter(|h| h.is_stale()).collect();
    if stale.is_empty() {
        println!("\nNothing needs attention.");
        return Ok(ExitCode::Ok);
    }
    let dirs: Vec<String> = stale.iter().map(|h| h.dir.display().to_string()).collect();
    println!(
        "\nNeeds attention: {} data set(s) left behind by killed runs. Run `dbio clean --stale {}` to clear the in-use mark and remove their temporary files (data files stay; `dbio clean PATH` removes a whole data set).",
        stale.len(),
        dirs.join(" ")
    );
    Ok(ExitCode::Failure)
}

fn describe(h: &Health) -> String {
    let mut parts = vec![format!("{} data file(s)", h.data_files)];
    if h.redo_files > 0 {
        parts.push(format!("{} redo log(s)", h.redo_files));
    }
    let state = match (&h.state, &h.in_use, h.stale_in_use) {
        (State::Preparing, _, _) => {
            "incomplete (its preparation was interrupted; the next run recreates it)".to_string()
        }
        (_, Some(u), false) => format!("in use by pid {} ({})", u.pid, u.test),
        _ => "ready".to_string(),
    };
    format!(
        "{}: {} in {}, {}",
        h.dir.display(),
        human_bytes(h.bytes),
        parts.join(", "),
        state
    )
}

/// `dbio clean --stale [PATH...]`: repairs what doctor reports as stale.
pub fn clean_stale(paths: &[PathBuf]) -> Result<ExitCode> {
    let f = survey(paths);
    let mut repaired = 0;
    for h in f.data_sets.iter().filter(|h| h.is_stale()) {
        let r = stale::clear_stale(&h.dir)?;
        if let Some(pid) = r.cleared_pid {
            println!(
                "{}: cleared the in-use mark of pid {pid} (no longer running)",
                h.dir.display()
            );
        }
        for p in &r.removed {
            println!(
                "{}: removed temporary file {}",
                h.dir.display(),
                p.display()
            );
        }
        repaired += 1;
    }
    if repaired == 0 {
        println!("nothing stale found");
    }
    Ok(ExitCode::Ok)
}
