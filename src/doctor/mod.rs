//! `dbio doctor` and `dbio clean --stale`: what dbio has left on this machine.
//!
//! Looked at: other dbio processes running now; every data set in the results store's
//! registry, wherever it is (present, gone, in use, or left with something to repair), and
//! the run directories the store knows; plus the default places (`./dbio-data`,
//! `./dbio-runs`) — or only the paths given, each a data set, a directory of runs, or a
//! directory holding them one level down. Whether a run is using a data set is told by its
//! lock, never by a PID in a file. Doctor exits 1 when something needs attention and says
//! what to do.

use crate::units::Shown;
use std::path::{Path, PathBuf};

use crate::dataset::State;
use crate::dataset::stale::{self, Health};
use crate::error::{ExitCode, Result};
use crate::safety::fs::{Dir, Kind};
use crate::safety::lock::{self, Holder, Mode};
use crate::store::{DataSetRecord, LeftoverRecord, RunDirRecord};
use crate::units::shell_word;

mod leftovers;
pub mod report;

use crate::report::Output;
use report::{Checkup, Cleaned};

/// The kinds of results directory dbio makes, and what each may hold: the explicit list of
/// file names dbio writes there (all that `dbio clean --stale` may remove from one whose
/// command was killed), and where the run directories of its points are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirKind {
    /// The files dbio writes into it.
    pub files: &'static [&'static str],
    /// Its points' run directories: None (it has none), `Some("")` (directly in it), or
    /// `Some(sub)` (in its subdirectory `sub`).
    pub points: Option<&'static str>,
    /// Whether its results are complete once `result.json` is there (a directory rewritten
    /// as its command goes, as a sweep's, is complete only when the command says so).
    pub result_json_ends_it: bool,
}

impl DirKind {
    /// The kind registered as `kind`: `sweep`, `matrix`, `calibrate`, `mem`, else a run's
    /// (of the test of that name, on one host or across hosts).
    pub fn of(kind: &str) -> DirKind {
        let (files, points, result_json_ends_it) = match kind {
            "sweep" => (crate::sweep::SWEEP_DIR_FILES, Some(""), false),
            "matrix" => (
                crate::sweep::matrix::MATRIX_DIR_FILES,
                Some("points"),
                false,
            ),
            "calibrate" => (
                crate::sweep::calibrate::CALIBRATE_DIR_FILES,
                Some(""),
                false,
            ),
            "mem" => (crate::mem::MEM_DIR_FILES, None, true),
            crate::database::compare::DIR_KIND => {
                (crate::database::compare::COMPARE_DIR_FILES, Some(""), false)
            }
            _ => (crate::run::RUN_DIR_FILES, None, true),
        };
        DirKind {
            files,
            points,
            result_json_ends_it,
        }
    }
}

/// One other dbio process.
#[derive(Debug, Clone)]
pub struct Process {
    pub pid: u32,
    pub cmdline: String,
    /// Stopped (Ctrl-Z, SIGSTOP) or traced: it holds its locks, and perhaps the results
    /// store, until resumed.
    pub stopped: bool,
}

/// The state letter of `pid` ("S", "T", ...), empty when it is gone.
fn state(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The state follows the parenthesised command name: "1234 (dbio) S ...".
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("")
        .to_string()
}

/// `pid` if it is a running (not zombie) process named dbio.
fn running_dbio(pid: u32) -> Option<Process> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let state = state(pid);
    (comm.trim() == "dbio" && !matches!(state.as_str(), "Z" | "X" | "")).then(|| Process {
        pid,
        cmdline: crate::safety::lock::cmdline(pid),
        stopped: matches!(state.as_str(), "T" | "t"),
    })
}

/// Running dbio processes other than this one.
pub fn other_dbio_processes() -> Vec<Process> {
    let me = std::process::id();
    let mut out: Vec<Process> = std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|&pid| pid != me)
                .filter_map(running_dbio)
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

/// One data set found.
#[derive(Debug)]
pub struct Found {
    pub health: Health,
    /// What the registry knows of it.
    pub record: Option<DataSetRecord>,
}

/// What was found.
#[derive(Debug, Default)]
pub struct Findings {
    pub data_sets: Vec<Found>,
    /// Data sets in the registry whose directory (or manifest) is gone.
    pub gone: Vec<DataSetRecord>,
    pub runs: Vec<Runs>,
    /// Directories where a first preparation was killed before writing its manifest: its
    /// lock file is left.
    pub unfinished: Vec<PathBuf>,
    /// Paths that were given but hold nothing of dbio's, or could not be read.
    pub notes: Vec<String>,
    /// Directories of runs that were killed before they wrote their results.
    pub killed_runs: Vec<KilledRun>,
    /// Directories of runs going on now, and who holds them.
    pub running: Vec<(RunDirRecord, Vec<Holder>)>,
}

/// The directory of a command (a run, a sweep, `dbio mem`, ...) that was killed before it
/// finished.
#[derive(Debug)]
pub struct KilledRun {
    pub record: RunDirRecord,
    /// dbio's own files in it: what its command writes there (or their temporary names),
    /// and its points' (`POINT/result.json`, ...), relative to it.
    pub own: Vec<String>,
    /// Its points' run directories that hold nothing but dbio's files, relative to it,
    /// innermost first: removed with it.
    pub points: Vec<String>,
    /// Everything else in it, and why it is not dbio's: left alone.
    pub foreign: Vec<(String, &'static str)>,
}

impl KilledRun {
    /// How many of its points' run directories it holds.
    fn point_dirs(&self) -> usize {
        let kind = DirKind::of(&self.record.test);
        (self.points.iter())
            .filter(|p| kind.points.is_none_or(|sub| sub.is_empty() || *p != sub))
            .count()
    }
}

/// What is in a registered results directory.
enum RunDirState {
    /// Gone, or complete (its result.json is there): nothing to say.
    Nothing,
    Running(Vec<Holder>),
    Killed {
        own: Vec<String>,
        points: Vec<String>,
        foreign: Vec<(String, &'static str)>,
    },
}

/// Whether `name` is one of `files`, or one of them under the temporary name it is written
/// as first (`.NAME.PID-RANDOM.tmp`), or the probe file a results directory is proved
/// writable with (`.dbio-probe-PID`).
fn is_own_name(name: &str, files: &[&str]) -> bool {
    let listed = |n: &str| files.contains(&n);
    listed(name)
        || name
            .strip_prefix('.')
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|rest| rest.rsplit_once('.'))
            .is_some_and(|(file, _)| listed(file))
        || name
            .strip_prefix(".dbio-probe-")
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Why the entry `name` is not a file of dbio's named in `files`, or None when it is one:
/// a plain file (one link, this user's) of such a name.
fn not_own_file(e: &crate::safety::fs::Entry, name: &str, files: &[&str]) -> Option<&'static str> {
    match e.kind {
        Kind::File if e.nlink == 1 && e.uid == crate::safety::fs::effective_uid() => {
            (!is_own_name(name, files)).then_some("dbio writes no file of that name")
        }
        Kind::File => Some("it is a hard link or another user's file"),
        Kind::Dir => Some("it is a directory"),
        Kind::Symlink => Some("it is a symbolic link"),
        Kind::Other => Some("it is not a regular file"),
    }
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The files of the point run directory `name` in `parent`, when it holds nothing but the
/// files a run writes (None when it holds anything else, or is not a plain directory).
fn point_files(parent: &Dir, name: &str) -> Option<Vec<String>> {
    let dir = parent.open_dir(name).ok()?;
    let mut files = Vec::new();
    for n in names_in(dir.path()) {
        let e = dir.entry(&n).ok()??;
        if not_own_file(&e, &n, crate::run::RUN_DIR_FILES).is_some() {
            return None;
        }
        files.push(n);
    }
    Some(files)
}

/// Sorts what is in the results directory `dir` of `kind` into dbio's own files, its
/// points' run directories (with their files) and the rest. `prefix`: where `dir` is in
/// the registered directory ("" or "points/").
#[allow(clippy::type_complexity)]
fn sort_contents(
    dir: &Dir,
    kind: &DirKind,
    prefix: &str,
    (own, points, foreign): (
        &mut Vec<String>,
        &mut Vec<String>,
        &mut Vec<(String, &'static str)>,
    ),
) {
    for name in names_in(dir.path()) {
        let Ok(Some(e)) = dir.entry(&name) else {
            continue;
        };
        let rel = format!("{prefix}{name}");
        let files = if prefix.is_empty() {
            kind.files
        } else {
            &[][..]
        };
        let Some(mut why) = not_own_file(&e, &name, files) else {
            own.push(rel);
            continue;
        };
        if e.kind == Kind::Dir {
            match kind.points {
                // Its points' run directories are here (directly, or in `points/`).
                Some(sub) if sub.is_empty() || !prefix.is_empty() => {
                    if let Some(inside) = point_files(dir, &name) {
                        own.extend(inside.iter().map(|f| format!("{rel}/{f}")));
                        points.push(rel);
                        continue;
                    }
                    why = "a directory holding what is not dbio's";
                }
                Some(sub) if name == sub => {
                    if let Ok(d) = dir.open_dir(&name) {
                        let sub_kind = DirKind {
                            files: &[],
                            ..*kind
                        };
                        sort_contents(&d, &sub_kind, &format!("{rel}/"), (own, points, foreign));
                        points.push(rel);
                        continue;
                    }
                }
                _ => {}
            }
        }
        foreign.push((rel, why));
    }
}

/// Looks at the registered results directory `path` of `kind`: whether its command holds
/// it now (its lock), is complete, or was killed, and what is in it.
fn inspect_run_dir(path: &Path, kind: &str) -> RunDirState {
    let Ok(dir) = Dir::open(path) else {
        return RunDirState::Nothing;
    };
    if let Ok(fd) = dir.dup()
        && let Ok(false) = lock::try_lock(&fd, Mode::Shared)
    {
        return RunDirState::Running(dir.id().map(|id| lock::holders(&id)).unwrap_or_default());
    }
    let kind = DirKind::of(kind);
    if kind.result_json_ends_it && matches!(dir.entry("result.json"), Ok(Some(_))) {
        return RunDirState::Nothing;
    }
    let (mut own, mut points, mut foreign) = (Vec::new(), Vec::new(), Vec::new());
    sort_contents(&dir, &kind, "", (&mut own, &mut points, &mut foreign));
    RunDirState::Killed {
        own,
        points,
        foreign,
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

pub(crate) fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl Findings {
    fn has_data_set(&self, p: &Path) -> bool {
        let c = canonical(p);
        self.data_sets.iter().any(|f| canonical(&f.health.dir) == c)
            || self.unfinished.iter().any(|u| canonical(u) == c)
    }

    fn has_runs(&self, p: &Path) -> bool {
        let c = canonical(p);
        self.runs.iter().any(|r| canonical(&r.dir) == c)
    }

    /// Looks at `path`: a data set, a directory of runs, or (at depth 0) a directory
    /// holding them. Returns whether it found anything of dbio's.
    fn look(&mut self, path: &Path, depth: usize, record: Option<DataSetRecord>) -> bool {
        if self.has_data_set(path) || self.has_runs(path) {
            return true;
        }
        match stale::inspect(path) {
            Ok(Some(health)) => {
                self.data_sets.push(Found { health, record });
                return true;
            }
            Ok(None) if crate::dataset::is_unfinished(path) => {
                self.unfinished.push(path.to_path_buf());
                return true;
            }
            Ok(None) => {}
            Err(e) => {
                self.notes.push(format!("{}: {e}", path.shown()));
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
            self.runs.push(Runs {
                dir: path.to_path_buf(),
                runs,
                bytes: dir_bytes(path),
            });
            return true;
        }
        let mut found = false;
        if depth == 0 {
            for c in &children {
                found |= self.look(c, 1, None);
            }
        }
        found
    }
}

/// What the results store knows: its registry of data sets, the directories its runs
/// were written to, and the run directories whose run was never recorded.
#[derive(Debug, Default)]
pub struct Known {
    pub data_sets: Vec<DataSetRecord>,
    pub run_parents: Vec<PathBuf>,
    pub unfinished_run_dirs: Vec<RunDirRecord>,
    /// Why the store could not be read, when it could not.
    pub store_problem: Option<String>,
    /// It could not be read because another process held it (it is not damaged).
    pub store_locked: bool,
    /// What commands made or changed outside their results directories and have not
    /// undone (yet): a throwaway server's directories, a schema on a user's server, a
    /// disk's I/O scheduler.
    pub leftovers: Vec<LeftoverRecord>,
}

/// Finds data sets and run directories: those the store knows and the default places, or
/// only `paths` when given.
pub fn survey(paths: &[PathBuf], known: &Known) -> Findings {
    let mut f = Findings::default();
    if paths.is_empty() {
        for r in &known.data_sets {
            let p = PathBuf::from(&r.path);
            let manifest = p.join(crate::dataset::manifest::MANIFEST_NAME);
            if std::fs::symlink_metadata(&manifest).is_ok() {
                f.look(&p, 1, Some(r.clone()));
            } else if let Some(running) = crate::dataset::first_preparation(&p) {
                if running {
                    f.notes.push(format!(
                        "{}: a first preparation is running here (no manifest yet)",
                        p.shown()
                    ));
                } else if !f.has_data_set(&p) {
                    f.unfinished.push(p);
                }
            } else {
                f.gone.push(r.clone());
            }
        }
        for p in [PathBuf::from("./dbio-data"), PathBuf::from("./dbio-runs")] {
            if p.exists() {
                f.look(&p, 0, None);
            }
        }
        for p in &known.run_parents {
            // A sweep's (or matrix's, calibration's) directory whose command did not end is
            // listed as such below, not as a directory of runs.
            let unended = (known.unfinished_run_dirs.iter())
                .any(|r| Path::new(&r.path) == p || Path::new(&r.path).join("points") == *p);
            if p.is_dir() && !unended {
                f.look(p, 1, None);
            }
        }
        for r in &known.unfinished_run_dirs {
            match inspect_run_dir(Path::new(&r.path), &r.test) {
                RunDirState::Nothing => {}
                RunDirState::Running(holders) => f.running.push((r.clone(), holders)),
                RunDirState::Killed {
                    own,
                    points,
                    foreign,
                } => f.killed_runs.push(KilledRun {
                    record: r.clone(),
                    own,
                    points,
                    // A throwaway server's directory inside it is a leftover of its own,
                    // listed (and removed) as such.
                    foreign: (foreign.into_iter())
                        .filter(|(name, _)| {
                            let p = Path::new(&r.path).join(name).display().to_string();
                            !known.leftovers.iter().any(|l| l.what == p)
                        })
                        .collect(),
                }),
            }
        }
        return f;
    }
    for p in paths {
        if !p.exists() {
            f.notes.push(format!("{} does not exist", p.shown()));
            continue;
        }
        let record = known
            .data_sets
            .iter()
            .find(|r| Path::new(&r.path) == canonical(p))
            .cloned();
        if !f.look(p, 0, record) {
            f.notes.push(format!(
                "{} holds no dbio data set or run directory",
                p.shown()
            ));
        }
    }
    f
}

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
