//! The data set: the files dbio reads and writes.
//!
//! A data set is a directory holding `--files` data files (and redo logs for the write
//! side) and a manifest that records what dbio created. It is created once (`dbio prepare`,
//! or by the first `dbio run`), reused by later runs, and removed by `dbio clean`, which
//! deletes only what the manifest lists and only while each file is still the one dbio
//! created. Read tests may instead use an existing file or block device, opened read-only.
//!
//! The rules of [`crate::safety`] hold here:
//! - every file is created, opened for writing and removed through the data set's
//!   [`Dir`] (never through a symlink; only with the identity dbio recorded);
//! - the manifest is untrusted input ([`manifest`]): a data set whose manifest lists
//!   something that is not dbio's is refused, and `dbio doctor` shows why;
//! - the directory is locked while in use: shared by runs that only read (they open nothing
//!   for writing and change nothing, so they work on a read-only mount or a full file
//!   system), exclusive to prepare or write;
//! - nothing is removed before everything is checked: a complete data set is replaced only
//!   with `--fresh`, and only after the new one is known to fit;
//! - new files are filled unnamed (`O_TMPFILE`) and linked into their names only when
//!   complete: a preparation that is killed leaves nothing behind.

mod clean;
pub mod fill;
mod lock;
pub mod manifest;
pub mod precondition;
mod prepare;
pub mod scan;
pub mod stale;
mod target;

use crate::units::Shown;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::safety::fs::Dir;
use crate::safety::lock::Mode;
use crate::sys::FileId;
use crate::units::{human_bytes, size_label};
pub use clean::{CleanReport, clean, first_preparation, holds_no_data_set, is_unfinished};
pub use lock::{LOCK_NAME, Lock, lock_existing};
pub use manifest::{FileEntry, Manifest, Rejected, State};
pub use prepare::{Prepare, RegistryHook, on_new_data_set, prepare};
pub use target::{check_target_dir, claimed_device, existing_target, space_path, target_kind};

/// What the data set should look like.
#[derive(Debug, Clone)]
pub struct DataSetSpec {
    pub target: PathBuf,
    pub size: u64,
    pub block_size: u64,
    pub files: u32,
    pub fresh: bool,
    /// What new data files are filled with (`--fill`).
    pub fill: fill::Content,
    /// `--size` as typed (for a file or device target: how much of it to use).
    pub size_given: Option<u64>,
    /// `--verify`: blocks carry verify headers, reads check them.
    pub verify: bool,
}

/// The data set size without `--size`.
pub const DEFAULT_SIZE: u64 = 1 << 30;
/// The block size without `--block-size` (the option table's default says the same).
pub const DEFAULT_BLOCK_SIZE: u64 = 8 << 10;
/// The data files without `--files` (the option table's default says the same).
pub const DEFAULT_FILES: usize = 4;

/// The `dbio prepare` command that makes the data set in `target` again as it is (for
/// hints): `--fresh` replaces the one there; its size, and its block size and file count
/// where they are not the defaults; `--verify` when asked. Quoted for a shell.
pub fn prepare_command(
    target: &Path,
    size: u64,
    block_size: u64,
    files: usize,
    verify: bool,
) -> String {
    use crate::units::{shell_word, size_label};
    let mut c = format!(
        "dbio prepare{} --fresh --target {} --size {}",
        if verify { " --verify" } else { "" },
        shell_word(&target.display().to_string()),
        size_label(size)
    );
    if block_size != DEFAULT_BLOCK_SIZE {
        c.push_str(&format!(" --block-size {}", size_label(block_size)));
    }
    if files > 0 && files != DEFAULT_FILES {
        c.push_str(&format!(" --files {files}"));
    }
    c
}

impl DataSetSpec {
    /// Bytes in each data file.
    pub fn file_size(&self) -> u64 {
        self.size / u64::from(self.files)
    }
}

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

/// One file of a data set.
#[derive(Debug, Clone)]
pub struct DataFile {
    /// Where it is (for messages); unnamed temp files have a descriptive path.
    pub path: PathBuf,
    /// Its name in the data set directory (empty for targets dbio did not create and for
    /// unnamed temp files).
    pub name: String,
    pub size: u64,
    /// Identity recorded when dbio created it (None for targets dbio did not create).
    pub id: Option<FileId>,
}

/// A data set ready for a run. Holds its directory locked while alive (shared for a run
/// that only reads, exclusive for one that writes), so a run that writes never shares it.
#[derive(Debug)]
pub struct DataSet {
    /// The data set directory, or the file/device itself.
    pub path: PathBuf,
    pub kind: TargetKind,
    pub files: Vec<DataFile>,
    /// Redo log files (tests redo and oltp), written in turn by LGWR.
    pub redo_files: Vec<DataFile>,
    /// Temporary files of this run (test temp), gone when the run ends.
    pub temp_files: Vec<DataFile>,
    pub block_size: u64,
    /// True when a matching data set was found and reused.
    pub reused: bool,
    /// Seconds spent creating and filling (0 when reused).
    pub prepare_seconds: f64,
    /// How the data set was filled, e.g. "O_DIRECT, 4 writers".
    pub fill_method: Option<String>,
    /// What the data files hold (`--fill`); None for targets dbio did not create.
    pub fill: Option<String>,
    /// A block device claimed for a write test with `--destructive` (see [`claimed_device`]).
    pub destructive: bool,
    /// The region of the data files this run uses, `(index, of)`: the files `i` with
    /// `i % of == index` ([`DataSet::keep_region`]); None: all of them.
    pub region: Option<(usize, usize)>,
    /// The data set directory, locked (None for a file or device target).
    dir: Option<Dir>,
    mode: Mode,
    /// Held shared beside writers of other regions ([`Prepare::region_writer`]): its data
    /// files may be written, its manifest never.
    region_writer: bool,
    manifest: Option<Manifest>,
    /// The data set's lock, held for the run.
    _lock: Option<Lock>,
    /// A claimed block device, held open with O_EXCL for the run; written only through
    /// it (proved to be the device claimed, as it was).
    claim: Option<crate::safety::device::Claim>,
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

    fn bits(&self) -> libc::c_int {
        let mut f = if self.write {
            libc::O_RDWR
        } else {
            libc::O_RDONLY
        };
        if self.direct {
            f |= libc::O_DIRECT;
        }
        if self.dsync {
            f |= libc::O_DSYNC;
        }
        f
    }
}

pub use crate::verify::header::data_file_name;

fn redo_file_name(i: u32) -> String {
    format!("dbio-redo-{:02}.log", i + 1)
}

fn temp_file_name(i: usize) -> String {
    format!("dbio-temp-{:03}.tmp", i + 1)
}

/// Reads the manifest in `dir`, refusing a data set whose manifest lists anything that is
/// not dbio's.
fn read_manifest(dir: &Dir) -> Result<Option<Manifest>> {
    match Manifest::read(dir)? {
        None => Ok(None),
        Some((m, rejected)) => match rejected.first() {
            None => Ok(Some(m)),
            Some(r) => Err(Error::usage(format!(
                "the manifest in {} was changed: {r}; dbio does not act on such a data set — see `dbio doctor {}`, then move the directory away or remove its files yourself",
                dir.path().shown(),
                crate::units::shell_word(&dir.path().display().to_string())
            ))),
        },
    }
}

/// What the files of one list of the manifest are like on disk.
#[derive(Debug, Default)]
struct Audit {
    /// Listed files that are not there.
    missing: usize,
    /// Listed names where something else is now, and why it is not dbio's.
    foreign: Vec<(String, &'static str)>,
    /// Bytes of the listed files that are dbio's (what replacing them frees).
    ours_bytes: u64,
    /// Listed files whose size is not the one recorded.
    short: usize,
    /// Listed files dbio created as another user (readable, not writable by this one).
    other_owner: Vec<String>,
}

impl Audit {
    fn intact(&self) -> bool {
        self.missing == 0 && self.foreign.is_empty() && self.short == 0
    }
}

fn audit(dir: &Dir, entries: &[FileEntry]) -> Result<Audit> {
    let mut a = Audit::default();
    for f in entries {
        match dir
            .entry(&f.name)
            .map_err(|e| Error::io("cannot look at", &dir.join(&f.name), &e))?
        {
            None => a.missing += 1,
            Some(e) if e.is_ours(&f.id()) => {
                a.ours_bytes += e.size;
                if e.size != f.size_bytes {
                    a.short += 1;
                }
            }
            // The file dbio created, but another user's: fine to read, not to write.
            Some(e)
                if e.kind == crate::safety::fs::Kind::File
                    && e.nlink == 1
                    && f.id().same_file(&e.id) =>
            {
                a.other_owner.push(f.name.clone());
                if e.size != f.size_bytes {
                    a.short += 1;
                }
            }
            Some(e) => a.foreign.push((
                f.name.clone(),
                e.why_not_ours(&f.id()).unwrap_or("it is not dbio's"),
            )),
        }
    }
    Ok(a)
}

/// The error for listed files dbio will not touch because they are no longer its own.
fn foreign_error(dir: &Dir, foreign: &[(String, &str)]) -> Error {
    let (name, why) = &foreign[0];
    Error::usage(format!(
        "{} is listed in the data set's manifest, but {why}; dbio never writes or removes files it did not create — remove it yourself or choose another --target",
        dir.join(name).shown()
    ))
}

/// Removes the files of one list, each only if it is still the file dbio created.
fn remove_group(dir: &Dir, entries: &[FileEntry]) -> Result<()> {
    for f in entries {
        dir.remove_file(&f.name, &f.id())
            .map_err(|e| Error::io("cannot remove", &dir.join(&f.name), &e))?;
    }
    Ok(())
}

/// The error for O_DIRECT refused by the file system.
fn open_error(path: &Path, flags: OpenFlags, e: &std::io::Error) -> Error {
    if flags.direct && e.raw_os_error() == Some(libc::EINVAL) {
        Error::Io(format!(
            "cannot open {} with O_DIRECT: the file system does not support direct I/O; use --io-mode none or --io-mode asynch (buffered), or a --target on a file system with direct I/O",
            path.shown()
        ))
    } else if e.kind() == std::io::ErrorKind::PermissionDenied && e.raw_os_error().is_none() {
        Error::usage(e.to_string())
    } else {
        Error::io("cannot open", path, e)
    }
}

impl DataSet {
    pub fn size_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// Bytes on disk of everything in the data set: data files, redo logs, the verify
    /// sequence table and this run's temp files — what `dbio doctor` and `dbio clean`
    /// count too.
    pub fn disk_bytes(&self) -> u64 {
        let seq = self
            .manifest
            .as_ref()
            .and_then(|m| m.verify_seq.as_ref())
            .map_or(0, |e| e.size_bytes);
        self.files
            .iter()
            .chain(&self.redo_files)
            .chain(&self.temp_files)
            .map(|f| f.size)
            .sum::<u64>()
            + seq
    }

    /// Whether dbio created this data set, or was allowed to overwrite it (and so may
    /// write to it).
    pub fn owned(&self) -> bool {
        self.manifest.is_some() || self.destructive
    }

    /// Keeps only the region `index` of `of` of the data files: the files `i` with
    /// `i % of == index`, in their order. The run then sees a data set of those files
    /// (`of` regions of one data set, each written by one run, are disjoint). Refused for
    /// a data set of fewer files than regions, or of one file dbio did not make.
    pub fn keep_region(&mut self, index: usize, of: usize) -> Result<()> {
        if self.kind != TargetKind::Directory || index >= of || self.files.len() < of {
            return Err(Error::usage(format!(
                "{} cannot be split into {of} regions of whole data files: it has {} data file(s){}",
                self.path.shown(),
                self.files.len(),
                if self.kind == TargetKind::Directory {
                    ""
                } else {
                    " and is not a data set directory dbio made"
                }
            )));
        }
        let files = std::mem::take(&mut self.files);
        self.files = (files.into_iter().enumerate())
            .filter(|(i, _)| i % of == index)
            .map(|(_, f)| f)
            .collect();
        self.region = Some((index, of));
        Ok(())
    }

    /// A writer of one region never writes the manifest: the others hold it too.
    fn manifest_writable(&self) -> Result<()> {
        if self.region_writer {
            return Err(Error::other(format!(
                "internal: the manifest of {} would be written by a writer of one region",
                self.path.shown()
            )));
        }
        Ok(())
    }

    /// Opens every data file with `flags`. Writing requires a data set dbio created, held
    /// exclusively, and each file is checked to still be the one dbio created.
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
                self.path.shown()
            )));
        }
        if flags.write && self.dir.is_some() && self.mode != Mode::Exclusive && !self.region_writer
        {
            return Err(Error::other(
                "internal: a data set held for reading was opened for writing",
            ));
        }
        files
            .iter()
            .map(|f| match &self.dir {
                Some(dir) => dir
                    .open_file(&f.name, flags.bits(), f.id.as_ref().filter(|_| flags.write))
                    .map_err(|e| open_error(&f.path, flags, &e)),
                None => self.open_device_or_file(f, flags),
            })
            .collect()
    }

    /// Opens the file or device given as `--target`; for writing (a claimed device), through
    /// its claim: proved to be the device claimed, as it was when claimed.
    fn open_device_or_file(&self, f: &DataFile, flags: OpenFlags) -> Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        let custom = flags.bits() & !libc::O_ACCMODE;
        let open = |path: &Path| {
            std::fs::OpenOptions::new()
                .read(true)
                .write(flags.write)
                .custom_flags(custom)
                .open(path)
                .map_err(|e| open_error(path, flags, &e))
        };
        if !flags.write {
            return open(&f.path);
        }
        let claim = self.claim.as_ref().ok_or_else(|| {
            Error::other(format!(
                "internal: {} would be opened for writing without its claim",
                f.path.shown()
            ))
        })?;
        claim.held.open_for_writing(open)
    }

    /// Creates the temporary files of `sizes` bytes for this run (test temp, temp classes),
    /// with space reserved. They have no name where the file system allows (they vanish
    /// with the run, even after SIGKILL); elsewhere they are named, recorded in the
    /// manifest, and removed when the run ends (or by the next run that writes, or
    /// `dbio clean --stale`, if it was killed).
    pub fn create_temp_files(&mut self, sizes: &[u64], flags: OpenFlags) -> Result<Vec<File>> {
        self.manifest_writable()?;
        let (Some(dir), Some(m)) = (self.dir.as_ref(), self.manifest.as_mut()) else {
            return Err(Error::usage(format!(
                "{} was not created by dbio; temp files are written only into data sets dbio created (give a directory as --target)",
                self.path.shown()
            )));
        };
        let custom = if flags.direct { libc::O_DIRECT } else { 0 };
        let mut out = Vec::with_capacity(sizes.len());
        for (i, &size) in sizes.iter().enumerate() {
            let (file, name) = match dir.create_unnamed(custom) {
                Ok(f) => (f, String::new()),
                Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                    let name = temp_file_name(i);
                    let f = dir
                        .create_file(&name, custom)
                        .map_err(|e| Error::io("cannot create", &dir.join(&name), &e))?;
                    // Removed with the others if anything below fails or a second Ctrl-C
                    // comes before the manifest records it.
                    if let Ok(entry) = crate::safety::fs::entry_of(&f) {
                        crate::safety::cleanup::register(dir.join(&name), entry.id);
                    }
                    (f, name)
                }
                Err(e) => return Err(Error::io("cannot create a temp file in", dir.path(), &e)),
            };
            let id = crate::safety::fs::entry_of(&file)
                .map_err(|e| Error::io("cannot stat a temp file in", dir.path(), &e))?
                .id;
            let path = if name.is_empty() {
                dir.join(&format!("(temp file {}, unnamed)", i + 1))
            } else {
                m.temp_files.push(FileEntry::new(&name, size, id));
                if let Err(e) = m.write(dir) {
                    // Not recorded: it must not outlive this failure.
                    m.temp_files.pop();
                    let _ = dir.remove_file(&name, &id);
                    crate::safety::cleanup::forget(&dir.join(&name));
                    return Err(e);
                }
                dir.join(&name)
            };
            // SAFETY: fallocate on a valid fd. Space reserved now, so ENOSPC shows before the run.
            let rc = unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) };
            if rc != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOSPC) {
                    return Err(Error::io("cannot allocate", &path, &e));
                }
            }
            self.temp_files.push(DataFile {
                path,
                name,
                size,
                id: Some(id),
            });
            out.push(file);
        }
        Ok(out)
    }

    /// Removes this run's named temporary files (those still dbio's) and forgets them;
    /// unnamed ones vanish when closed.
    pub fn remove_temp_files(&mut self) -> Result<()> {
        let named: Vec<DataFile> = self
            .temp_files
            .drain(..)
            .filter(|f| !f.name.is_empty())
            .collect();
        let (Some(dir), Some(m)) = (self.dir.as_ref(), self.manifest.as_mut()) else {
            return Ok(());
        };
        if named.is_empty() {
            return Ok(());
        }
        let r = remove_group(dir, &m.temp_files);
        for f in &named {
            crate::safety::cleanup::forget(&f.path);
        }
        m.temp_files.clear();
        m.write(dir)?;
        r
    }

    /// The data set number verify headers carry, when every data block has one (`--verify`).
    pub fn verify_id(&self) -> Option<u64> {
        self.manifest
            .as_ref()
            .filter(|m| m.verify)
            .map(|m| crate::verify::dataset_number(&m.id))
    }

    /// The directory and the sequence table's entry of a `--verify` data set.
    pub fn verify_table(&self) -> Option<(&Dir, Option<FileId>)> {
        let m = self.manifest.as_ref().filter(|m| m.verify)?;
        Some((self.dir.as_ref()?, m.verify_seq.as_ref().map(|e| e.id())))
    }

    /// A run that wrote saves the write sequences it kept: the table is replaced whole and
    /// the manifest records its new identity.
    pub fn save_verify(
        &mut self,
        write: impl FnOnce(&Dir) -> std::io::Result<(FileId, u64)>,
    ) -> Result<()> {
        self.manifest_writable()?;
        let (Some(dir), Some(m)) = (self.dir.as_ref(), self.manifest.as_mut()) else {
            return Ok(());
        };
        let path = dir.join(crate::verify::seq::SEQ_NAME);
        let (id, size) = write(dir).map_err(|e| Error::io("cannot write", &path, &e))?;
        m.verify_seq = Some(FileEntry::new(crate::verify::seq::SEQ_NAME, size, id));
        m.write(dir)
    }

    /// A run is about to write without `--verify`: the blocks will no longer all carry
    /// headers, so the data set stops being one `dbio verify` can check.
    pub fn drop_verify(&mut self) -> Result<()> {
        let (Some(dir), Some(m)) = (self.dir.as_ref(), self.manifest.as_mut()) else {
            return Ok(());
        };
        if !m.verify {
            return Ok(());
        }
        if self.region_writer {
            return Err(Error::usage(format!(
                "the data set in {} carries verify headers that writing would end; prepare it without --verify, or write it from one run",
                self.path.shown()
            )));
        }
        m.verify = false;
        let seq = m.verify_seq.take();
        m.write(dir)?;
        if let Some(seq) = seq {
            remove_group(dir, std::slice::from_ref(&seq))?;
        }
        Ok(())
    }

    /// One line saying where the data set lives and how much it takes on disk (printed before
    /// a run starts).
    pub fn describe(&self) -> String {
        match self.kind {
            TargetKind::Directory => {
                let mut parts = Vec::new();
                if !self.files.is_empty() {
                    parts.push(format!(
                        "{} of data in {} file(s), block {}",
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
                        "{} redo log(s) of {}",
                        self.redo_files.len(),
                        human_bytes(r.size)
                    ));
                }
                format!(
                    "data set: {} ({}; {} on disk, {}; remove with `dbio clean {}`)",
                    self.path.shown(),
                    parts.join(", "),
                    human_bytes(self.disk_bytes()),
                    if self.reused { "reused" } else { "created now" },
                    crate::units::shell_word(&self.path.display().to_string())
                )
            }
            TargetKind::BlockDevice if self.destructive => format!(
                "data set: {} ({} of the block device, overwritten with --destructive)",
                self.path.shown(),
                human_bytes(self.size_bytes())
            ),
            TargetKind::File | TargetKind::BlockDevice => format!(
                "data set: {} ({}, read-only, not created by dbio)",
                self.path.shown(),
                human_bytes(self.size_bytes())
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::safety::limits::SpaceNeeds;

    fn spec(target: &Path) -> DataSetSpec {
        DataSetSpec {
            target: target.to_path_buf(),
            size: 4 << 20,
            block_size: 8192,
            files: 4,
            fresh: false,
            fill: fill::Content::Zero,
            size_given: None,
            verify: false,
        }
    }

    fn prepare_as(target: &Path, region_writer: bool) -> Result<DataSet> {
        let (written, stop) = (AtomicU64::new(0), AtomicBool::new(false));
        let fill = FillOptions {
            seed: 1,
            buffered: true,
            written: &written,
            stop: &stop,
        };
        let spec = spec(target);
        prepare(&Prepare {
            target,
            data: Some(&spec),
            redo: None,
            fresh: false,
            writes: true,
            region_writer,
            space: SpaceNeeds::default(),
            fill: &fill,
        })
    }

    const WRITE: OpenFlags = OpenFlags {
        write: true,
        direct: false,
        dsync: false,
    };

    #[test]
    fn region_writers_hold_one_data_set_together_and_change_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("ds");
        // Nothing there yet: a region writer makes nothing.
        let e = prepare_as(&target, true).unwrap_err().to_string();
        assert!(e.contains("not ready to be written in regions"), "{e}");
        assert!(!target.exists());
        drop(prepare_as(&target, false).unwrap());
        let manifest = target.join("dbio-manifest.json");
        let before = std::fs::read(&manifest).unwrap();
        let mut a = prepare_as(&target, true).unwrap();
        let mut b = prepare_as(&target, true).unwrap();
        a.keep_region(0, 2).unwrap();
        b.keep_region(1, 2).unwrap();
        let names = |d: &DataSet| d.files.iter().map(|f| f.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), ["dbio-data-001.dbf", "dbio-data-003.dbf"]);
        assert_eq!(names(&b), ["dbio-data-002.dbf", "dbio-data-004.dbf"]);
        assert_eq!(a.open(WRITE).unwrap().len(), 2);
        assert_eq!(b.open(WRITE).unwrap().len(), 2);
        // A plain writer needs it alone: refused while the region writers hold it.
        let e = prepare_as(&target, false).unwrap_err().to_string();
        assert!(e.contains("in use"), "{e}");
        // Nothing of the manifest is theirs to write.
        assert!(a.create_temp_files(&[8192], WRITE).is_err());
        assert!(a.save_verify(|_| unreachable!()).is_err());
        drop((a, b));
        assert_eq!(std::fs::read(&manifest).unwrap(), before);
        // More regions than files: refused.
        let mut c = prepare_as(&target, true).unwrap();
        let e = c.keep_region(0, 5).unwrap_err().to_string();
        assert!(e.contains("4 data file(s)"), "{e}");
    }
}
