//! The data set: the files dbio reads and writes (SPEC §2, §7.1, §7.5).
//!
//! A data set is a directory holding `--files` data files and a manifest that records what
//! dbio created. It is created once (`dbio prepare`, or automatically by `dbio run`), reused
//! by later runs with the same size, block size and file count, and removed by `dbio clean`,
//! which deletes only what the manifest lists. Read tests may instead use an existing file
//! or block device, which is opened read-only.

pub mod fill;
pub mod manifest;
pub mod stale;

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};

use serde::Serialize;

use crate::config::DataSetSpec;
use crate::error::{Error, Result};
use crate::sys::{self, FileId};
use crate::units::{human_bytes, size_label};
pub use manifest::{FileEntry, InUse, Manifest, State};

/// What kind of thing the target is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A directory holding a data set dbio created.
    Directory,
    /// An existing regular file (read tests only).
    File,
    /// An existing block device (read tests only).
    BlockDevice,
}

/// One data file of a data set.
#[derive(Debug, Clone)]
pub struct DataFile {
    pub path: PathBuf,
    pub size: u64,
    /// Identity recorded when dbio created it (None for targets dbio did not create).
    pub id: Option<FileId>,
}

/// A data set ready for a run. Holds an exclusive lock on its directory while alive, so two
/// dbio processes never use the same data set at once.
#[derive(Debug)]
pub struct DataSet {
    /// The data set directory, or the file/device itself.
    pub path: PathBuf,
    pub kind: TargetKind,
    pub files: Vec<DataFile>,
    /// Redo log files (tests redo and oltp), written in turn by LGWR.
    pub redo_files: Vec<DataFile>,
    /// Temporary files of this run (test temp), removed when the run ends.
    pub temp_files: Vec<DataFile>,
    pub block_size: u64,
    /// True when a matching data set was found and reused.
    pub reused: bool,
    /// Seconds spent creating and filling (0 when reused).
    pub prepare_seconds: f64,
    /// How the data set was filled, e.g. "O_DIRECT, 4 writers".
    pub fill_method: Option<String>,
    /// What the data files hold (`--fill`: random, zero, compress=R, dedupe=R); None for
    /// targets dbio did not create.
    pub fill: Option<String>,
    /// A block device claimed for a write test with `--destructive` (see [`claimed_device`]).
    pub destructive: bool,
    manifest: Option<Manifest>,
    _lock: Option<File>,
}

/// How to fill a new data set.
pub struct FillOptions<'a> {
    pub seed: u64,
    /// Use buffered writes even if O_DIRECT works.
    pub buffered: bool,
    /// Bytes written so far (for progress displays).
    pub written: &'a AtomicU64,
    pub stop: &'a AtomicBool,
}

/// How to open the data files for a run.
#[derive(Debug, Clone, Copy)]
pub struct OpenFlags {
    pub write: bool,
    pub direct: bool,
    pub dsync: bool,
}

impl OpenFlags {
    pub fn names(&self) -> Vec<String> {
        let mut v = vec![if self.write { "O_RDWR" } else { "O_RDONLY" }.to_string()];
        if self.direct {
            v.push("O_DIRECT".into());
        }
        if self.dsync {
            v.push("O_DSYNC".into());
        }
        v
    }
}

/// The name of data file `i` (from 0) of a data set.
pub fn data_file_name(i: u32) -> String {
    format!("dbio-data-{:03}.dbf", i + 1)
}

/// What `--target` names.
pub fn target_kind(path: &Path) -> Result<Option<TargetKind>> {
    match std::fs::metadata(path) {
        Ok(md) if md.is_dir() => Ok(Some(TargetKind::Directory)),
        Ok(md) if md.file_type().is_block_device() => Ok(Some(TargetKind::BlockDevice)),
        Ok(md) if md.is_file() => Ok(Some(TargetKind::File)),
        Ok(_) => Err(Error::usage(format!(
            "--target {} is neither a directory, a regular file nor a block device",
            path.display()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("cannot access --target", path, &e)),
    }
}

/// The directory for a data set: `target` itself, created when its parent exists.
fn data_set_dir(target: &Path) -> Result<(PathBuf, bool)> {
    match target_kind(target)? {
        Some(TargetKind::Directory) => Ok((target.to_path_buf(), false)),
        Some(_) => Err(Error::usage(format!(
            "--target {} is not a directory; dbio creates its data set in a directory (only read tests accept an existing file or device)",
            target.display()
        ))),
        None => {
            let parent = match target.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if !parent.is_dir() {
                return Err(Error::usage(format!(
                    "--target {} does not exist and neither does {}; create it or choose another --target",
                    target.display(),
                    parent.display()
                )));
            }
            std::fs::create_dir(target)
                .map_err(|e| Error::io("cannot create the data set directory", target, &e))?;
            Ok((target.to_path_buf(), true))
        }
    }
}

fn lock_dir(dir: &Path) -> Result<File> {
    let f = File::open(dir).map_err(|e| Error::io("cannot open", dir, &e))?;
    match sys::try_lock_exclusive(&f) {
        Ok(true) => Ok(f),
        Ok(false) => {
            let who = Manifest::read(dir)
                .ok()
                .flatten()
                .and_then(|m| m.in_use)
                .map(|u| format!(" (pid {}, {})", u.pid, u.test))
                .unwrap_or_default();
            Err(Error::usage(format!(
                "the data set in {} is in use by another dbio{who}; wait for it to finish or use another --target",
                dir.display()
            )))
        }
        Err(e) => Err(Error::io("cannot lock", dir, &e)),
    }
}

/// Removes the files `m` lists that are still the files dbio created (same device, inode
/// and birth time). Returns (files removed, bytes removed, files skipped because they changed).
fn remove_listed(dir: &Path, m: &Manifest) -> (usize, u64, Vec<PathBuf>) {
    let (mut n, mut bytes, mut skipped) = (0, 0, Vec::new());
    for f in m.all_files() {
        let path = dir.join(&f.name);
        let Ok((id, len)) = sys::file_id(&path) else {
            continue;
        };
        // A file whose creation was not recorded yet (interrupted prepare) is still ours:
        // the manifest was written before it was created with O_EXCL.
        let ours = f.id().is_none_or(|recorded| recorded.same_file(&id));
        if !ours {
            skipped.push(path);
        } else if std::fs::remove_file(&path).is_ok() {
            n += 1;
            bytes += len;
        }
    }
    (n, bytes, skipped)
}

fn remove_manifest_files(dir: &Path) {
    crate::verify::seq::remove(dir);
    let _ = std::fs::remove_file(Manifest::path_in(dir));
    let _ = std::fs::remove_file(dir.join(format!(".{}.tmp", manifest::MANIFEST_NAME)));
}

/// What a run (or `dbio prepare`) needs from the data set directory.
pub struct Prepare<'a> {
    pub target: &'a Path,
    /// Data files wanted; None keeps whatever data files are there (redo-only tests).
    pub data: Option<&'a DataSetSpec>,
    /// Redo log files wanted: (count, size of each).
    pub redo: Option<(u32, u64)>,
    /// Recreate what is wanted even if it matches.
    pub fresh: bool,
    pub fill: &'a FillOptions<'a>,
}

/// Opens or creates the data set (the `prepare` step): reuses data files and redo logs that
/// match, recreates those that do not, and removes temporary files a killed run left.
pub fn prepare(p: &Prepare) -> Result<DataSet> {
    let (dir, created_now) = data_set_dir(p.target)?;
    let result = prepare_in(p, &dir, created_now);
    if result.is_err() && created_now {
        // Leave no empty directory behind (remove_dir fails if anything is in it).
        let _ = std::fs::remove_dir(&dir);
    }
    result
}

fn new_manifest(created_dir: bool, seed: u64) -> Manifest {
    Manifest {
        schema: manifest::SCHEMA.into(),
        created_by: format!("dbio {}", env!("CARGO_PKG_VERSION")),
        id: format!("{:016x}", seed ^ sys::now_ns()),
        created_at: sys::utc_now_rfc3339(),
        state: State::Ready,
        size_bytes: 0,
        block_size: 0,
        fill: "random".into(),
        created_dir,
        files: Vec::new(),
        redo_files: Vec::new(),
        redo_file_size: 0,
        temp_files: Vec::new(),
        prepare_seconds: 0.0,
        in_use: None,
        verify: false,
    }
}

fn prepare_in(p: &Prepare, dir: &Path, created_now: bool) -> Result<DataSet> {
    let dir = dir.to_path_buf();
    let lock = lock_dir(&dir)?;
    let existing = Manifest::read(&dir)?;
    let had_manifest = existing.is_some();
    let mut m = existing.unwrap_or_else(|| new_manifest(created_now, p.fill.seed));
    if !m.temp_files.is_empty() {
        remove_group(&dir, &m.temp_files)?;
        m.temp_files.clear();
        m.write(&dir)?;
    }
    let incomplete = m.state != State::Ready;
    let started = std::time::Instant::now();
    let mut methods = Vec::new();

    // With --verify, the blocks must carry headers and the last write of each be known.
    let verify_unusable = |m: &Manifest, spec: &DataSetSpec| -> Option<String> {
        if !spec.verify {
            None
        } else if !m.verify {
            Some("its blocks carry no verify headers, this run wants --verify".into())
        } else {
            crate::verify::seq::unusable(
                &dir,
                crate::verify::dataset_number(&m.id),
                spec.size / spec.block_size,
            )
        }
    };
    let data_ok = |m: &Manifest, spec: &DataSetSpec| {
        !p.fresh
            && m.matches(spec.size, spec.block_size, spec.files)
            && m.fill == spec.fill.name()
            && intact(&dir, &m.files)
            && verify_unusable(m, spec).is_none()
    };
    match p.data {
        Some(spec) if !data_ok(&m, spec) => {
            if !m.files.is_empty() {
                let why = if p.fresh {
                    "--fresh".to_string()
                } else if incomplete {
                    "its preparation did not finish".to_string()
                } else if !intact(&dir, &m.files) {
                    "some of its files are missing or changed".to_string()
                } else if let Some(why) = m
                    .matches(spec.size, spec.block_size, spec.files)
                    .then(|| verify_unusable(&m, spec))
                    .flatten()
                {
                    why
                } else if m.matches(spec.size, spec.block_size, spec.files) {
                    format!(
                        "it was filled with {}, this run wants --fill {}",
                        m.fill,
                        spec.fill.name()
                    )
                } else {
                    format!(
                        "it has {} in {} files of block size {}, this run wants {} in {} files of {}",
                        size_label(m.size_bytes),
                        m.files.len(),
                        size_label(m.block_size),
                        size_label(spec.size),
                        spec.files,
                        size_label(spec.block_size)
                    )
                };
                eprintln!(
                    "dbio: recreating the data files in {} ({why})",
                    dir.display()
                );
                remove_group(&dir, &m.files)?;
                m.files.clear();
            }
            // Headers go away with the old files; the new ones get them if asked for.
            m.verify = false;
            crate::verify::seq::remove(&dir);
            let names: Vec<String> = (0..spec.files).map(data_file_name).collect();
            let seal = spec
                .verify
                .then(|| (crate::verify::dataset_number(&m.id), spec.block_size));
            let method = build_group(
                &dir,
                &mut m,
                Group::Data,
                &names,
                spec.file_size(),
                spec.fill,
                p.fill,
                seal,
            )?;
            if let Some((id, bs)) = seal {
                crate::verify::seq::write_new(&dir, id, spec.size / bs).map_err(|e| {
                    Error::io("cannot write", &dir.join(crate::verify::seq::SEQ_NAME), &e)
                })?;
                m.verify = true;
            }
            m.fill = spec.fill.name();
            m.size_bytes = spec.size;
            m.block_size = spec.block_size;
            methods.push(format!("data files: {method}"));
        }
        Some(_) => {}
        None if incomplete && !m.files.is_empty() => {
            remove_group(&dir, &m.files)?;
            m.files.clear();
            m.size_bytes = 0;
        }
        None => {}
    }
    if let Some((count, size)) = p.redo {
        let ok =
            !p.fresh && !incomplete && m.redo_matches(count, size) && intact(&dir, &m.redo_files);
        if !ok {
            if !m.redo_files.is_empty() {
                eprintln!("dbio: recreating the redo logs in {}", dir.display());
                remove_group(&dir, &m.redo_files)?;
                m.redo_files.clear();
            }
            let names: Vec<String> = (0..count)
                .map(|i| format!("dbio-redo-{:02}.log", i + 1))
                .collect();
            let method = build_group(
                &dir,
                &mut m,
                Group::Redo,
                &names,
                size,
                fill::Content::Random,
                p.fill,
                None,
            )?;
            m.redo_file_size = size;
            methods.push(format!("redo logs: {method}"));
        }
    }
    let created = !methods.is_empty();
    m.state = State::Ready;
    if created {
        m.prepare_seconds = started.elapsed().as_secs_f64();
    }
    if created || !had_manifest || incomplete {
        m.write(&dir)?;
    }
    let mut ds = from_manifest(dir, m, lock, !created);
    if created {
        ds.fill_method = Some(methods.join("; "));
    }
    Ok(ds)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Data,
    Redo,
}

fn group_mut(m: &mut Manifest, g: Group) -> &mut Vec<FileEntry> {
    match g {
        Group::Data => &mut m.files,
        Group::Redo => &mut m.redo_files,
    }
}

/// Creates and fills the files `names` of `size` bytes as group `g` of the manifest. The
/// manifest lists them before they exist, so an interrupted prepare is still recognised as
/// dbio's. On failure or interruption the group's files are removed again. `seal`: (data set
/// number, block size) to give every block a verify header.
#[allow(clippy::too_many_arguments)]
fn build_group(
    dir: &Path,
    m: &mut Manifest,
    g: Group,
    names: &[String],
    size: u64,
    content: fill::Content,
    fill: &FillOptions,
    seal: Option<(u64, u64)>,
) -> Result<String> {
    for name in names {
        let p = dir.join(name);
        if p.exists() {
            return Err(Error::usage(format!(
                "{} exists and was not created by dbio; dbio never overwrites files it did not create — remove it yourself or choose another --target",
                p.display()
            )));
        }
    }
    let total = size * names.len() as u64;
    let free = sys::free_bytes(dir).map_err(|e| Error::io("cannot read free space of", dir, &e))?;
    if let Some(free) = free
        && free < total
    {
        return Err(Error::usage(format!(
            "{} of {} does not fit in {}: only {} free; use a smaller --size or another --target",
            if g == Group::Data {
                "the data set"
            } else {
                "the redo logs"
            },
            size_label(total),
            dir.display(),
            human_bytes(free)
        )));
    }
    m.state = State::Preparing;
    *group_mut(m, g) = names
        .iter()
        .map(|n| FileEntry {
            name: n.clone(),
            size_bytes: size,
            dev: 0,
            ino: 0,
            btime_ns: None,
        })
        .collect();
    m.write(dir)?;
    // Partial files go even when a second Ctrl-C ends dbio at once (safety::cleanup).
    let paths: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    crate::safety::cleanup::register(paths.iter().cloned());
    let filled = create_and_fill(dir, m, g, size, content, fill, seal);
    crate::safety::cleanup::forget(&paths);
    match filled {
        Ok(method) => Ok(method),
        Err(e) => {
            let listed = std::mem::take(group_mut(m, g));
            let _ = remove_group(dir, &listed);
            m.state = State::Ready;
            if m.all_files().next().is_none() {
                remove_manifest_files(dir);
            } else {
                let _ = m.write(dir);
            }
            Err(e)
        }
    }
}

/// Removes the files of one group, only those still the files dbio created.
fn remove_group(dir: &Path, entries: &[FileEntry]) -> Result<()> {
    for f in entries {
        let path = dir.join(&f.name);
        let Ok((id, _)) = sys::file_id(&path) else {
            continue;
        };
        if f.id().is_some_and(|recorded| !recorded.same_file(&id)) {
            return Err(Error::usage(format!(
                "{} was replaced since dbio created it; dbio never writes to files it did not create — remove it yourself or choose another --target",
                path.display()
            )));
        }
        std::fs::remove_file(&path).map_err(|e| Error::io("cannot remove", &path, &e))?;
    }
    Ok(())
}

/// Whether every file listed exists with its recorded identity and size.
fn intact(dir: &Path, entries: &[FileEntry]) -> bool {
    entries
        .iter()
        .all(|f| match (f.id(), sys::file_id(&dir.join(&f.name))) {
            (Some(recorded), Ok((id, len))) => recorded.same_file(&id) && len >= f.size_bytes,
            _ => false,
        })
}

fn data_files(dir: &Path, entries: &[FileEntry]) -> Vec<DataFile> {
    entries
        .iter()
        .map(|f| DataFile {
            path: dir.join(&f.name),
            size: f.size_bytes,
            id: f.id(),
        })
        .collect()
}

fn from_manifest(dir: PathBuf, m: Manifest, lock: File, reused: bool) -> DataSet {
    DataSet {
        files: data_files(&dir, &m.files),
        redo_files: data_files(&dir, &m.redo_files),
        temp_files: Vec::new(),
        kind: TargetKind::Directory,
        block_size: m.block_size,
        reused,
        prepare_seconds: if reused { 0.0 } else { m.prepare_seconds },
        fill_method: None,
        fill: (!m.files.is_empty()).then(|| m.fill.clone()),
        destructive: false,
        path: dir,
        manifest: Some(m),
        _lock: Some(lock),
    }
}

fn create_and_fill(
    dir: &Path,
    m: &mut Manifest,
    g: Group,
    file_size: u64,
    content: fill::Content,
    fill: &FillOptions,
    seal: Option<(u64, u64)>,
) -> Result<String> {
    let mut direct = !fill.buffered;
    let mut files = Vec::new();
    for entry in group_mut(m, g).iter_mut() {
        let path = dir.join(&entry.name);
        let open = |direct: bool| {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(if direct { libc::O_DIRECT } else { 0 })
                .open(&path)
        };
        let f = match open(direct) {
            Ok(f) => f,
            Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
                // No O_DIRECT here: the create may have happened before the flag was refused.
                let _ = std::fs::remove_file(&path);
                direct = false;
                open(false).map_err(|e| Error::io("cannot create", &path, &e))?
            }
            Err(e) => return Err(Error::io("cannot create", &path, &e)),
        };
        let (id, _) = sys::file_id_of(&f).map_err(|e| Error::io("cannot stat", &path, &e))?;
        entry.dev = id.dev;
        entry.ino = id.ino;
        entry.btime_ns = id.btime_ns;
        files.push(f);
    }
    // Identities recorded before any byte is written.
    m.write(dir)?;
    for (f, entry) in files.iter().zip(group_mut(m, g).iter()) {
        // Reserve the space up front: ENOSPC shows now, not halfway through.
        // SAFETY: fallocate on a valid fd.
        let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, file_size as libc::off_t) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOSPC) {
                return Err(Error::io("cannot allocate", &dir.join(&entry.name), &e));
            }
        }
    }
    let writers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 8)
        .min(files.len() * 4);
    let complete = fill::fill(
        &files,
        file_size,
        content,
        writers,
        fill.seed ^ g as u64,
        seal,
        fill.written,
        fill.stop,
    )
    .map_err(|e| {
        Error::Io(format!(
            "cannot fill the data set in {}: {}",
            dir.display(),
            crate::error::io_advice(&e)
        ))
    })?;
    if !complete {
        return Err(Error::Interrupted(
            "interrupted while preparing the data set; partial files removed".into(),
        ));
    }
    for (f, entry) in files.iter().zip(group_mut(m, g).iter()) {
        f.sync_all()
            .map_err(|e| Error::io("cannot sync", &dir.join(&entry.name), &e))?;
    }
    Ok(format!(
        "{}, {writers} writers",
        if direct {
            "O_DIRECT"
        } else {
            "buffered + fsync"
        }
    ))
}

/// Uses an existing file or block device as a read-only data set of one file: all of it,
/// or the first `--size` bytes.
pub fn existing_target(path: &Path, kind: TargetKind, spec: &DataSetSpec) -> Result<DataSet> {
    let f = File::open(path).map_err(|e| Error::io("cannot open --target", path, &e))?;
    let size = match kind {
        TargetKind::BlockDevice => sys::block_device_size(&f)
            .map_err(|e| Error::io("cannot read the size of", path, &e))?,
        _ => f
            .metadata()
            .map_err(|e| Error::io("cannot stat", path, &e))?
            .len(),
    };
    one_file_data_set(path, kind, size, spec, None, None)
}

/// A block device a write test may overwrite, checked and claimed by
/// [`crate::safety::device::claim`]: a one-file data set written only within its size (or
/// the first `--size` bytes), with nothing of dbio's — no manifest — written onto it.
/// `claim` (the device opened with O_EXCL) is held until the data set is dropped.
pub fn claimed_device(path: &Path, claim: File, size: u64, spec: &DataSetSpec) -> Result<DataSet> {
    let (id, _) = sys::file_id(path).map_err(|e| Error::io("cannot stat", path, &e))?;
    one_file_data_set(
        path,
        TargetKind::BlockDevice,
        size,
        spec,
        Some(id),
        Some(claim),
    )
}

fn one_file_data_set(
    path: &Path,
    kind: TargetKind,
    size: u64,
    spec: &DataSetSpec,
    id: Option<FileId>,
    claim: Option<File>,
) -> Result<DataSet> {
    let block_size = spec.block_size;
    let wanted = match spec.size_given {
        Some(want) if want > size => {
            return Err(Error::usage(format!(
                "--size {} is larger than --target {} ({} bytes, {}); use at most its size, or leave --size out to use all of it",
                size_label(want),
                path.display(),
                size,
                human_bytes(size)
            )));
        }
        Some(want) => want,
        None => size,
    };
    let usable = wanted / block_size * block_size;
    if usable < block_size {
        return Err(Error::usage(format!(
            "--target {} holds {} bytes, less than one block of {}",
            path.display(),
            wanted,
            size_label(block_size)
        )));
    }
    Ok(DataSet {
        path: path.to_path_buf(),
        kind,
        files: vec![DataFile {
            path: path.to_path_buf(),
            size: usable,
            id,
        }],
        redo_files: Vec::new(),
        temp_files: Vec::new(),
        block_size,
        reused: true,
        prepare_seconds: 0.0,
        fill_method: None,
        fill: None,
        destructive: claim.is_some(),
        manifest: None,
        _lock: claim,
    })
}

/// Opens one file with `flags`; for writing, checks it is still the file dbio created.
fn open_checked(f: &DataFile, flags: OpenFlags) -> Result<File> {
    let mut custom = 0;
    if flags.direct {
        custom |= libc::O_DIRECT;
    }
    if flags.dsync {
        custom |= libc::O_DSYNC;
    }
    let file = OpenOptions::new()
        .read(true)
        .write(flags.write)
        .custom_flags(custom)
        .open(&f.path)
        .map_err(|e| {
            if flags.direct && e.raw_os_error() == Some(libc::EINVAL) {
                Error::Io(format!(
                    "cannot open {} with O_DIRECT: the file system does not support direct I/O; use --io-mode none or --io-mode asynch (buffered), or a --target on a file system with direct I/O",
                    f.path.display()
                ))
            } else {
                Error::io("cannot open", &f.path, &e)
            }
        })?;
    if flags.write {
        let (id, _) = sys::file_id_of(&file).map_err(|e| Error::io("cannot stat", &f.path, &e))?;
        if !f.id.is_some_and(|recorded| recorded.same_file(&id)) {
            return Err(Error::usage(format!(
                "{} is no longer the file dbio created (it was replaced); dbio never writes to files it did not create — remove it yourself or run `dbio clean`",
                f.path.display()
            )));
        }
    }
    Ok(file)
}

impl DataSet {
    pub fn size_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Whether dbio created this data set, or was allowed to overwrite it (and so may
    /// write to it).
    pub fn owned(&self) -> bool {
        self.manifest.is_some() || self.destructive
    }

    /// Opens every data file with `flags`. Writing requires a data set dbio created, and each
    /// file is checked to still be the one dbio created.
    pub fn open(&self, flags: OpenFlags) -> Result<Vec<File>> {
        self.open_files(&self.files, flags)
    }

    /// Opens the redo log files for LGWR (always for writing).
    pub fn open_redo(&self, flags: OpenFlags) -> Result<Vec<File>> {
        self.open_files(
            &self.redo_files,
            OpenFlags {
                write: true,
                ..flags
            },
        )
    }

    fn open_files(&self, files: &[DataFile], flags: OpenFlags) -> Result<Vec<File>> {
        if flags.write && !self.owned() {
            return Err(Error::usage(format!(
                "{} was not created by dbio; write tests only write into data sets dbio created (give a directory as --target)",
                self.path.display()
            )));
        }
        files.iter().map(|f| open_checked(f, flags)).collect()
    }

    /// Creates temporary files of `sizes` bytes for this run (test temp, temp classes). They are
    /// listed in the manifest before they exist, so a killed run's files are recognised and
    /// removed by the next `prepare` or `dbio clean`.
    pub fn create_temp_files(&mut self, sizes: &[u64], flags: OpenFlags) -> Result<Vec<File>> {
        let dir = self.path.clone();
        let Some(m) = self.manifest.as_mut() else {
            return Err(Error::usage(format!(
                "{} was not created by dbio; temp files are written only into data sets dbio created (give a directory as --target)",
                dir.display()
            )));
        };
        let total: u64 = sizes.iter().sum();
        if let Ok(Some(free)) = sys::free_bytes(&dir)
            && free < total
        {
            return Err(Error::usage(format!(
                "the temp spills ({}) do not fit in {}: only {} free; use a smaller --spill-size (or class spill) or fewer sessions",
                size_label(total),
                dir.display(),
                human_bytes(free)
            )));
        }
        m.temp_files = (sizes.iter().enumerate())
            .map(|(i, &size)| FileEntry {
                name: format!("dbio-temp-{:03}.tmp", i + 1),
                size_bytes: size,
                dev: 0,
                ino: 0,
                btime_ns: None,
            })
            .collect();
        m.write(&dir)?;
        // A second Ctrl-C exits at once: it removes these first (safety::cleanup).
        crate::safety::cleanup::register(m.temp_files.iter().map(|e| dir.join(&e.name)));
        let mut out = Vec::with_capacity(sizes.len());
        for entry in m.temp_files.iter_mut() {
            let size = entry.size_bytes;
            let path = dir.join(&entry.name);
            let mut custom = 0;
            if flags.direct {
                custom |= libc::O_DIRECT;
            }
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .custom_flags(custom)
                .open(&path)
                .map_err(|e| Error::io("cannot create", &path, &e))?;
            let (id, _) = sys::file_id_of(&f).map_err(|e| Error::io("cannot stat", &path, &e))?;
            (entry.dev, entry.ino, entry.btime_ns) = (id.dev, id.ino, id.btime_ns);
            // SAFETY: fallocate on a valid fd. Space reserved now, so ENOSPC shows before the run.
            let rc = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, size as libc::off_t) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOSPC) {
                    return Err(Error::io("cannot allocate", &path, &e));
                }
            }
            out.push(f);
        }
        m.write(&dir)?;
        self.temp_files = data_files(&dir, &m.temp_files);
        Ok(out)
    }

    /// Removes this run's temporary files (those still dbio's) and forgets them.
    pub fn remove_temp_files(&mut self) -> Result<()> {
        let Some(m) = self.manifest.as_mut() else {
            return Ok(());
        };
        if m.temp_files.is_empty() {
            return Ok(());
        }
        let r = remove_group(&self.path, &m.temp_files);
        let paths: Vec<PathBuf> = m
            .temp_files
            .iter()
            .map(|e| self.path.join(&e.name))
            .collect();
        crate::safety::cleanup::forget(&paths);
        m.temp_files.clear();
        self.temp_files.clear();
        m.write(&self.path)?;
        r
    }

    /// The data set number verify headers carry, when every data block has one (`--verify`).
    pub fn verify_id(&self) -> Option<u64> {
        self.manifest
            .as_ref()
            .filter(|m| m.verify)
            .map(|m| crate::verify::dataset_number(&m.id))
    }

    /// A run is about to write without `--verify`: the blocks will no longer all carry
    /// headers, so the data set stops being one `dbio verify` can check.
    pub fn drop_verify(&mut self) -> Result<()> {
        let Some(m) = self.manifest.as_mut().filter(|m| m.verify) else {
            return Ok(());
        };
        m.verify = false;
        m.write(&self.path)?;
        crate::verify::seq::remove(&self.path);
        Ok(())
    }

    /// Records in the manifest that a run is using the data set (so a killed run can be
    /// recognised later), or clears it with `None`.
    pub fn set_in_use(&mut self, test: Option<&str>) -> Result<()> {
        let Some(m) = self.manifest.as_mut() else {
            return Ok(());
        };
        m.in_use = test.map(|t| InUse {
            pid: std::process::id(),
            test: t.to_string(),
            since: sys::utc_now_rfc3339(),
        });
        m.write(&self.path)
    }

    /// One line saying where the data set lives and how big it is (SPEC §7.5).
    pub fn describe(&self) -> String {
        match self.kind {
            TargetKind::Directory => {
                let mut parts = Vec::new();
                if !self.files.is_empty() {
                    parts.push(format!(
                        "{} in {} files, block {}",
                        human_bytes(self.size_bytes()),
                        self.files.len(),
                        size_label(self.block_size)
                    ));
                }
                if let Some(fill) = self.fill.as_deref().filter(|f| *f != "random") {
                    parts.push(format!("fill {fill}"));
                }
                if let Some(r) = self.redo_files.first() {
                    parts.push(format!(
                        "{} redo logs of {}",
                        self.redo_files.len(),
                        human_bytes(r.size)
                    ));
                }
                format!(
                    "data set: {} ({}, {}; remove with `dbio clean {}`)",
                    self.path.display(),
                    parts.join(", "),
                    if self.reused { "reused" } else { "created now" },
                    self.path.display()
                )
            }
            TargetKind::BlockDevice if self.destructive => format!(
                "data set: {} ({} of the block device, overwritten with --destructive)",
                self.path.display(),
                human_bytes(self.size_bytes())
            ),
            TargetKind::File | TargetKind::BlockDevice => format!(
                "data set: {} ({}, read-only, not created by dbio)",
                self.path.display(),
                human_bytes(self.size_bytes())
            ),
        }
    }
}

/// Locks the data set in `dir` (so no run changes it meanwhile) and reads its manifest, for
/// `dbio verify`. Nothing is written.
pub fn lock_existing(dir: &Path) -> Result<(Manifest, File)> {
    if target_kind(dir)? != Some(TargetKind::Directory) {
        return Err(Error::usage(format!(
            "{} is not a data set directory",
            dir.display()
        )));
    }
    let lock = lock_dir(dir)?;
    let m = Manifest::read(dir)?.ok_or_else(|| {
        Error::usage(format!(
            "{} holds no dbio data set (no {})",
            dir.display(),
            manifest::MANIFEST_NAME
        ))
    })?;
    if m.state != State::Ready || m.files.is_empty() {
        return Err(Error::usage(format!(
            "the data set in {} has no complete data files; run `dbio prepare --verify --target {}`",
            dir.display(),
            dir.display()
        )));
    }
    Ok((m, lock))
}

/// What `dbio clean` did.
#[derive(Debug)]
pub struct CleanReport {
    pub files: usize,
    pub bytes: u64,
    pub removed_dir: bool,
    pub skipped: Vec<PathBuf>,
}

/// Removes the data set in `dir`: the files its manifest lists (if unchanged), the manifest,
/// and the directory if dbio created it and it is now empty. Nothing else.
pub fn clean(dir: &Path) -> Result<CleanReport> {
    match target_kind(dir)? {
        None => {
            return Err(Error::usage(format!(
                "nothing to clean: {} does not exist",
                dir.display()
            )));
        }
        Some(TargetKind::Directory) => {}
        Some(_) => {
            return Err(Error::usage(format!(
                "{} is not a data set directory; dbio clean only removes data sets dbio created",
                dir.display()
            )));
        }
    }
    let lock = lock_dir(dir)?;
    let Some(m) = Manifest::read(dir)? else {
        return Err(Error::usage(format!(
            "{} holds no dbio data set (no {}); nothing removed",
            dir.display(),
            manifest::MANIFEST_NAME
        )));
    };
    let (files, bytes, skipped) = remove_listed(dir, &m);
    remove_manifest_files(dir);
    drop(lock);
    let removed_dir = m.created_dir && std::fs::remove_dir(dir).is_ok();
    Ok(CleanReport {
        files,
        bytes,
        removed_dir,
        skipped,
    })
}
