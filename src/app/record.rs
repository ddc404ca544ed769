//! The results store around a command: a run, a sweep's points, a memory run or a compare
//! recorded once finished; data sets, run directories and leftovers noted the moment they
//! are made (so that `dbio doctor` finds them from anywhere) and forgotten once gone; what
//! the store knows read back for `dbio doctor` and `dbio clean`, and the runs `dbio compare`
//! names found in it (or in their directories).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};
use crate::run::RunOutcome;
use crate::store::{RunFilter, Store};
use crate::units::Shown;

/// Notes in the results store's registry that a run of `test` uses the data set `ds`, so
/// that `dbio doctor` finds it from anywhere, even if the run is killed. A store that
/// cannot be written costs one warning line.
pub(super) fn register(db: Option<&Path>, ds: &crate::dataset::DataSet, test: &str) {
    if ds.kind != crate::dataset::TargetKind::Directory {
        return;
    }
    let now = crate::sys::utc_now_rfc3339();
    let path = std::fs::canonicalize(&ds.path).unwrap_or_else(|_| ds.path.clone());
    let noted = store_path(db).and_then(|p| {
        Store::open(&p)?.note_data_set(&crate::store::DataSetRecord {
            path: path.display().to_string(),
            created_at: now.clone(),
            last_used_at: now,
            last_test: test.to_string(),
            last_run_id: None,
            disk_bytes: ds.disk_bytes(),
            data_files: ds.files.len() as u64,
            redo_files: ds.redo_files.len() as u64,
        })
    });
    if noted.is_err() {
        // Said once, with the run's own record (see `record`).
        UNREGISTERED.store(true, Ordering::Relaxed);
    }
}

/// Registers the data set directory `path` the moment a preparation takes it into use
/// (`in_use`), before anything is built, so that `dbio doctor` lists it from anywhere even
/// if the preparation is killed; forgets it when nothing came of it. A store that cannot be
/// written changes nothing here (the run's own registering says so).
pub(super) fn note_new_data_set(db: Option<&Path>, path: &Path, in_use: bool, command: &str) {
    let Ok(abs) = std::fs::canonicalize(path) else {
        return;
    };
    let abs = abs.display().to_string();
    if !in_use {
        let _ = in_present_store(db, |s| s.forget_data_set(&abs));
        return;
    }
    let _ = store_path(db).and_then(|p| {
        let now = crate::sys::utc_now_rfc3339();
        Store::open(&p)?.note_data_set(&crate::store::DataSetRecord {
            path: abs,
            created_at: now.clone(),
            last_used_at: now,
            last_test: command.to_string(),
            last_run_id: None,
            disk_bytes: 0,
            data_files: 0,
            redo_files: 0,
        })
    });
}

/// Runs `f` on the results store when there is one (`Ok(None)` when there is none): what
/// only forgets or finishes never makes a store.
pub(super) fn in_present_store<T>(
    db: Option<&Path>,
    f: impl FnOnce(&mut Store) -> Result<T>,
) -> Result<Option<T>> {
    match Store::open_present(&store_path(db)?)? {
        Some(mut store) => f(&mut store).map(Some),
        None => Ok(None),
    }
}

/// Registers the results directory `path` in the results store the moment it is created,
/// marks it finished when its command ended, or forgets it when it was removed again, so
/// that `dbio doctor` lists from anywhere the directory of a command that is killed. A
/// store that cannot be written changes nothing here (the run's own record says so).
pub(super) fn note_run_dir(db: Option<&Path>, path: &Path, event: crate::run::RunDirEvent<'_>) {
    use crate::run::RunDirEvent;
    let path = path.display().to_string();
    let _ = match event {
        RunDirEvent::Made(kind) => {
            store_path(db).and_then(|p| Store::open(&p)?.note_run_dir(&path, kind))
        }
        RunDirEvent::Finished => in_present_store(db, |s| s.finish_run_dir(&path)).map(|_| ()),
        RunDirEvent::Removed => in_present_store(db, |s| s.forget_run_dir(&path)).map(|_| ()),
    };
}

/// The results store as the book of leftovers (see [`crate::safety::cleanup::Leftover`]):
/// noted before something is made, forgotten once undone. A store that cannot be written
/// costs the record, never the command.
pub(super) struct LeftoverBook(pub(super) Option<PathBuf>);

impl crate::safety::cleanup::LeftoverBook for LeftoverBook {
    fn note(&self, l: &crate::safety::cleanup::Leftover) -> Option<i64> {
        store_path(self.0.as_deref())
            .and_then(|p| Store::open(&p)?.note_leftover(l))
            .ok()
    }

    fn update(&self, id: i64, l: &crate::safety::cleanup::Leftover) {
        let _ = in_present_store(self.0.as_deref(), |s| s.update_leftover(id, l));
    }

    fn forget(&self, id: i64) {
        let _ = in_present_store(self.0.as_deref(), |s| s.forget_leftover(id));
    }

    fn forget_what(&self, kind: &str, what: &str) {
        let _ = in_present_store(self.0.as_deref(), |s| s.forget_leftovers(kind, what));
    }
}

/// A data set could not be registered in the results store.
static UNREGISTERED: AtomicBool = AtomicBool::new(false);

/// What the results store knows of data sets and run directories, for `dbio doctor` and
/// `dbio clean`. A store that cannot be read is said (doctor then exits 1), not an error.
pub(super) fn known(db: Option<&Path>) -> crate::doctor::Known {
    let read = || -> Result<crate::doctor::Known> {
        let path = store_path(db)?;
        if !path.exists() {
            return Ok(crate::doctor::Known::default());
        }
        let store = Store::open_existing(&path)?;
        let unfinished_run_dirs = store.unfinished_run_dirs()?;
        let mut parents: Vec<PathBuf> = store
            .runs(&RunFilter::default())?
            .iter()
            .filter_map(|r| Path::new(&r.run_dir).parent().map(Path::to_path_buf))
            .collect();
        parents.sort();
        parents.dedup();
        Ok(crate::doctor::Known {
            data_sets: store.data_sets()?,
            run_parents: parents,
            unfinished_run_dirs,
            leftovers: store.leftovers()?,
            store_problem: None,
            store_locked: false,
        })
    };
    read().unwrap_or_else(|e| crate::doctor::Known {
        store_problem: Some(e.to_string()),
        store_locked: crate::store::is_locked(&e),
        ..Default::default()
    })
}

/// Forgets the run directory `path` in the results store (`dbio clean --stale` removed it).
pub(super) fn forget_run_dir(db: Option<&Path>, path: &str) {
    let _ = in_present_store(db, |s| s.forget_run_dir(path));
}

/// Records a finished run in the results store. Its run directory is already written, so a
/// store that cannot be written costs one warning line, never the run. Returns false when
/// a signal ended the wait for a locked store (the run was not recorded).
pub(super) fn record(db: Option<&Path>, outcome: &RunOutcome) -> bool {
    record_id(db, outcome).1
}

/// [`record`], with the run's id in the store (None: not recorded).
pub(super) fn record_id(db: Option<&Path>, outcome: &RunOutcome) -> (Option<i64>, bool) {
    recorded_in_store(db, "run", &outcome.run_dir, |store| {
        let id = store.record(&outcome.result, &outcome.run_dir)?;
        if outcome.result.dataset.kind == "directory" && outcome.result.hosts.is_empty() {
            let ds = std::fs::canonicalize(&outcome.result.dataset.path)
                .unwrap_or_else(|_| PathBuf::from(&outcome.result.dataset.path));
            store.link_data_set_run(&ds.display().to_string(), id)?;
        }
        if let Ok(dir) = std::fs::canonicalize(&outcome.run_dir) {
            store.finish_run_dir(&dir.display().to_string())?;
        }
        Ok(id)
    })
}

/// Records with `insert` and says so (as "recorded as `what` ID"), or warns. Returns false
/// when a signal ended the wait for a locked store.
pub(super) fn record_in_store(
    db: Option<&Path>,
    what: &str,
    run_dir: &Path,
    insert: impl FnOnce(&mut Store) -> Result<i64>,
) -> bool {
    recorded_in_store(db, what, run_dir, insert).1
}

/// [`record_in_store`], with the id (None: not recorded) and false when a signal ended
/// the wait for a locked store.
pub(super) fn recorded_in_store(
    db: Option<&Path>,
    what: &str,
    run_dir: &Path,
    insert: impl FnOnce(&mut Store) -> Result<i64>,
) -> (Option<i64>, bool) {
    let recorded = store_path(db).and_then(|path| {
        let id = insert(&mut Store::open(&path)?)?;
        Ok((id, path))
    });
    let unregistered = UNREGISTERED.swap(false, Ordering::Relaxed);
    if let Ok((id, path)) = &recorded {
        // `what` may place the id itself ("compare c{id}").
        let what = if what.contains("{id}") {
            what.replace("{id}", &id.to_string())
        } else {
            format!("{what} {id}")
        };
        stderr_line!("dbio: recorded as {what} in {}", path.shown());
        if unregistered {
            stderr_line!(
                "dbio: warning: its data set could not be registered in the results store; `dbio doctor` finds it only in the current directory or by its path"
            );
        }
    }
    match recorded {
        Err(e) => {
            stderr_line!(
                "dbio: warning: the run was not recorded ({e}){}; its results are in {}",
                if unregistered {
                    ", nor its data set registered"
                } else {
                    ""
                },
                run_dir.shown()
            );
            (None, !matches!(e, Error::Interrupted(_)))
        }
        Ok((id, _)) => (Some(id), true),
    }
}

/// `--db`/`DBIO_DB`, else the default place of the results store.
pub(super) fn store_path(db: Option<&Path>) -> Result<PathBuf> {
    match db {
        Some(p) => Ok(p.to_path_buf()),
        None => crate::store::default_path(),
    }
}

/// The runs `dbio compare` names, each with its label: an id is read from the results store
/// (opened only then), a run directory or its result.json from the directory.
pub(super) fn runs_named(
    ids: &[crate::cli::RunRef],
    db: Option<&Path>,
) -> Result<Vec<(String, crate::report::RunResult)>> {
    use crate::cli::RunRef;
    // The store is opened only when an id names a run in it: directories need none.
    let store = if ids.iter().any(|r| matches!(r, RunRef::Id(_))) {
        Some(Store::open_existing(&store_path(db)?)?)
    } else {
        None
    };
    (ids.iter())
        .map(|r| match (r, &store) {
            (RunRef::Id(id), Some(store)) => store
                .run_or_usage_error(*id)
                .map(|s| (format!("run {}", s.id), s.result)),
            (RunRef::Dir(path), _) => {
                // Labelled by the run directory's name (it says the test, sessions, size).
                let dir = run_dir_of(path)?;
                let label = (dir.canonicalize().ok().as_deref())
                    .and_then(Path::file_name)
                    .map_or_else(
                        || path.display().to_string(),
                        |n| n.to_string_lossy().into(),
                    );
                crate::report::read_run(&dir).map(|r| (label, r))
            }
            (RunRef::Id(_), None) => unreachable!("the store is open when an id is given"),
        })
        .collect::<Result<Vec<_>>>()
}

/// The run directory a path names: the directory itself, or the one holding a result.json.
fn run_dir_of(path: &Path) -> Result<PathBuf> {
    if path.file_name().is_some_and(|n| n == "result.json") {
        let meta = std::fs::symlink_metadata(path).map_err(|e| {
            Error::usage(format!(
                "cannot read {}: {e} (expected a run id, a run directory or its result.json)",
                path.shown()
            ))
        })?;
        if meta.is_file() {
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
            return Ok(parent.unwrap_or(Path::new(".")).to_path_buf());
        }
    }
    Ok(path.to_path_buf())
}
