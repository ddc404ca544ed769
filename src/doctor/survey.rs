//! What `dbio doctor` and `dbio clean --stale` look at, gathered as facts: other dbio
//! processes, the data sets and run directories the results store knows or the paths
//! given hold, and what a killed command left in its results directory ([`Findings`]).

use crate::units::Shown;
use std::path::{Path, PathBuf};

use crate::dataset::stale::{self, Health};
use crate::safety::fs::{Dir, Kind};
use crate::safety::lock::{self, Holder, Mode};
use crate::store::{DataSetRecord, LeftoverRecord, RunDirRecord};

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
    pub(super) fn point_dirs(&self) -> usize {
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
pub(super) fn not_own_file(
    e: &crate::safety::fs::Entry,
    name: &str,
    files: &[&str],
) -> Option<&'static str> {
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
