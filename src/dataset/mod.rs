//! The data set: the files dbio reads and writes (SPEC §2, §7).
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

pub mod fill;
pub mod manifest;
pub mod precondition;
pub mod scan;
pub mod stale;

use crate::units::Shown;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::safety::fs::Dir;
use crate::safety::limits::SpaceNeeds;
use crate::safety::lock::{self, Mode};
use crate::sys::{self, FileId};
use crate::units::{human_bytes, size_label};
pub use manifest::{FileEntry, Manifest, Rejected, State};

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
    /// A claimed block device, held open with O_EXCL for the run.
    _claim: Option<File>,
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

/// What `path` is; None if nothing is there. Its errors start with the path, so that a
/// caller can say how the user named it (`--target`, a job's `target`) in front.
pub fn target_kind(path: &Path) -> Result<Option<TargetKind>> {
    match std::fs::metadata(path) {
        Ok(md) if md.is_dir() => Ok(Some(TargetKind::Directory)),
        Ok(md) if md.file_type().is_block_device() => Ok(Some(TargetKind::BlockDevice)),
        Ok(md) if md.is_file() => Ok(Some(TargetKind::File)),
        Ok(_) => Err(Error::usage(format!(
            "{} is neither a directory, a regular file nor a block device",
            path.shown()
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("cannot access", path, &e)),
    }
}

/// The parent directory `target` would be created in.
fn parent_of(target: &Path) -> PathBuf {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Checks that a data set directory can be made at `target` (it exists, or its parent
/// does), without creating anything.
pub fn check_target_dir(target: &Path) -> Result<()> {
    match target_kind(target).map_err(|e| e.named("--target"))? {
        Some(TargetKind::Directory) => Ok(()),
        Some(_) => Err(Error::usage(format!(
            "--target {} is not a directory; dbio creates its data set in a directory (only read tests accept an existing file or device)",
            target.shown()
        ))),
        None if parent_of(target).is_dir() => Ok(()),
        None => Err(Error::usage(format!(
            "--target {} does not exist and neither does {}; create it or choose another --target",
            target.shown(),
            parent_of(target).shown()
        ))),
    }
}

/// An existing path on the file system the data set lives on: `target`, or the parent it
/// will be created in (for free-space checks before anything is created).
pub fn space_path(target: &Path) -> PathBuf {
    if target.exists() {
        target.to_path_buf()
    } else {
        parent_of(target)
    }
}

/// Opens the data set directory `target`, creating it when its parent exists. Returns it
/// and whether it was created now.
fn open_dir(target: &Path) -> Result<(Dir, bool)> {
    check_target_dir(target)?;
    let created = match std::fs::create_dir(target) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => {
            return Err(Error::io(
                "cannot create the data set directory --target",
                target,
                &e,
            ));
        }
    };
    let dir = Dir::open(target).map_err(|e| Error::io("cannot open", target, &e))?;
    Ok((dir, created))
}

/// The lock file of a data set directory.
pub const LOCK_NAME: &str = "dbio-lock";

/// What a lock file made by a preparation holds, from the moment it is made: a preparation
/// killed before its manifest exists leaves the lock file and nothing else, and `dbio
/// clean` (and `dbio doctor`) know it for dbio's — and whether the directory is too.
const LOCK_CREATED_DIR: &[u8] = b"dbio created this directory for a data set\n";
const LOCK_MADE: &[u8] = b"dbio lock file of a data set\n";

/// What a data set is locked by: its `dbio-lock` file, made with mode 0600 so that no other
/// user can open it to block dbio; or, where that file is missing and cannot be made (a
/// read-only mount), the directory itself.
#[derive(Debug)]
pub struct Lock {
    file: File,
    dir: PathBuf,
    /// This process made the lock file (removed again if no data set comes of it).
    made: Option<crate::sys::FileId>,
}

impl Lock {
    /// Opens the lock of `dir`, making its lock file if it is missing (anyone who may write
    /// the directory makes it; a read-only mount falls back to the directory).
    /// A lock file made now says it is dbio's, and whether dbio created the directory
    /// (`created_dir`), from the moment it exists.
    pub(crate) fn open(dir: &Dir, created_dir: bool) -> Result<Lock> {
        Lock::open_or(dir, Some(created_dir))
    }

    /// Opens the lock of `dir` without making anything (`dbio doctor`).
    pub(crate) fn existing(dir: &Dir) -> Result<Lock> {
        Lock::open_or(dir, None)
    }

    fn open_or(dir: &Dir, make: Option<bool>) -> Result<Lock> {
        let at = dir.join(LOCK_NAME);
        let open = || dir.open_file(LOCK_NAME, libc::O_RDONLY, None);
        let whole_dir = || -> Result<File> {
            Ok(File::from(
                dir.dup()
                    .map_err(|e| Error::io("cannot open", dir.path(), &e))?,
            ))
        };
        let mut made = None;
        let file = match open() {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && make.is_none() => whole_dir()?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                match dir.create_file_mode(LOCK_NAME, 0, 0o600) {
                    Ok(f) => {
                        use std::io::Write;
                        made = crate::safety::fs::entry_of(&f).ok().map(|e| e.id);
                        let marker = if make == Some(true) {
                            LOCK_CREATED_DIR
                        } else {
                            LOCK_MADE
                        };
                        // A lock file that cannot say so is still a lock (the directory
                        // is then not known to be dbio's).
                        let _ = (&f).write_all(marker);
                        f
                    }
                    // Someone made it meanwhile.
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        open().map_err(|e| Error::io("cannot open", &at, &e))?
                    }
                    // Cannot be made here (read-only, full): nobody can write here either.
                    Err(_) => whole_dir()?,
                }
            }
            Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
                return Err(Error::usage(format!(
                    "the data set in {} belongs to another user (its lock file {LOCK_NAME} is theirs); run dbio as that user, or choose another --target",
                    dir.path().shown()
                )));
            }
            Err(e) => return Err(Error::io("cannot open", &at, &e)),
        };
        Ok(Lock {
            file,
            dir: dir.path().to_path_buf(),
            made,
        })
    }

    /// What the lock file says: that dbio made it (`Some(false)`), and created the
    /// directory too (`Some(true)`); None for a lock file that says neither.
    fn marker(&self) -> Option<bool> {
        let mut buf = [0u8; 64];
        let n = std::os::unix::fs::FileExt::read_at(&self.file, &mut buf, 0).unwrap_or(0);
        match &buf[..n] {
            m if m == LOCK_CREATED_DIR => Some(true),
            m if m == LOCK_MADE => Some(false),
            _ => None,
        }
    }

    /// Whether the lock file says dbio created the directory.
    fn says_created_dir(&self) -> bool {
        self.marker() == Some(true)
    }

    /// Removes the lock file this process made, when no data set came of it (a failed
    /// first preparation), so that nothing is left behind.
    fn unmake(&self, dir: &Dir) {
        if let Some(id) = self.made
            && matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None))
        {
            let _ = dir.remove_file(LOCK_NAME, &id);
        }
    }

    /// Takes (or converts) the lock in `mode`, or says who holds it.
    pub(crate) fn take(&self, mode: Mode) -> Result<()> {
        match lock::try_lock(&self.file, mode) {
            Ok(true) => Ok(()),
            Ok(false) => Err(self.in_use()),
            Err(e) => Err(Error::io("cannot lock", &self.dir, &e)),
        }
    }

    /// Whether a run that writes holds it (tried shared, released at once). Changes nothing.
    pub(crate) fn busy(&self) -> bool {
        let taken = lock::try_lock(&self.file, Mode::Shared).unwrap_or(false);
        if taken {
            // SAFETY: flock on a valid descriptor.
            unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&self.file), libc::LOCK_UN) };
        }
        !taken
    }

    /// The processes holding it now.
    pub(crate) fn holders(&self) -> Vec<lock::Holder> {
        crate::safety::fs::entry_of(&self.file)
            .map(|e| lock::holders(&e.id))
            .unwrap_or_default()
    }

    /// The error for a data set another process holds, naming it.
    fn in_use(&self) -> Error {
        in_use_by(&self.dir, &self.holders())
    }
}

/// Locks the data set in `dir` in `mode`, or says who holds it.
fn lock_dir(dir: &Dir, mode: Mode, created_dir: bool) -> Result<Lock> {
    let l = Lock::open(dir, created_dir)?;
    l.take(mode)?;
    Ok(l)
}

/// The error for a data set held by `holders`.
fn in_use_by(dir: &Path, holders: &[lock::Holder]) -> Error {
    let who = match holders {
        [] => "another process".to_string(),
        [h] => format!("{h}"),
        hs => hs
            .iter()
            .map(|h| h.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    };
    Error::usage(format!(
        "the data set in {} is in use by {who}; wait for it to finish or use another --target",
        dir.shown()
    ))
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

/// What a run (or `dbio prepare`) needs from the data set directory.
pub struct Prepare<'a> {
    pub target: &'a Path,
    /// Data files wanted; None keeps whatever data files are there (redo-only tests).
    pub data: Option<&'a DataSetSpec>,
    /// Redo log files wanted: (count, size of each).
    pub redo: Option<(u32, u64)>,
    /// Replace what is there even if it matches (`--fresh`).
    pub fresh: bool,
    /// Whether the run writes into the data set (data, redo or temp files): it then holds
    /// the data set exclusively. A run that only reads holds it shared and changes nothing.
    pub writes: bool,
    /// The run writes only the data files of its own region ([`DataSet::keep_region`]),
    /// beside other such writers of the other regions: it holds the data set shared, may
    /// open its data files for writing, and changes nothing else — no manifest, no file
    /// made or removed. The data set must be ready as the run wants it, prepared before by
    /// a run that held it exclusively.
    pub region_writer: bool,
    /// Other space the run will need: temp files in the data set directory, its run
    /// directory. Checked with the data set's, on the same file systems, before anything
    /// is created or removed.
    pub space: SpaceNeeds,
    pub fill: &'a FillOptions<'a>,
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
        verify_seq: None,
        preconditioned: None,
    }
}

/// What hears that a data set directory is taken into use before anything is built in it
/// (`true`), or that nothing came of it after all (`false`): the results store's registry,
/// so that `dbio doctor` run anywhere lists a first preparation that is killed. It must not
/// fail the preparation (a store that cannot be written is its own business).
pub type RegistryHook = Box<dyn Fn(&Path, bool) + Send + Sync>;

static REGISTRY: std::sync::OnceLock<RegistryHook> = std::sync::OnceLock::new();

/// Sets the [`RegistryHook`] (once per process; later calls are ignored).
pub fn on_new_data_set(hook: RegistryHook) {
    let _ = REGISTRY.set(hook);
}

fn tell_registry(path: &Path, in_use: bool) {
    if let Some(hook) = REGISTRY.get() {
        hook(path, in_use);
    }
}

/// Opens or creates the data set (the `prepare` step). Everything is checked first — the
/// manifest, the files it lists, what the run wants, the free space — and only then is
/// anything removed or created.
pub fn prepare(p: &Prepare) -> Result<DataSet> {
    let (dir, created_now) = open_dir(p.target)?;
    let result = prepare_in(p, dir, created_now);
    if result.is_err() && created_now {
        // Leave no empty directory behind (rmdir fails if anything is in it).
        let _ = std::fs::remove_dir(p.target);
    }
    result
}

/// What preparing will change, decided before anything is changed.
struct Changes {
    /// Why the data files are (re)built; None keeps them.
    data: Option<String>,
    redo: bool,
    /// Named temp files a killed run left (only on file systems without O_TMPFILE).
    stray_temp: bool,
    /// Data files of an interrupted preparation, removed for a redo-only test.
    drop_data: bool,
}

impl Changes {
    fn any(&self) -> bool {
        self.data.is_some() || self.redo || self.stray_temp || self.drop_data
    }
}

fn prepare_in(p: &Prepare, dir: Dir, created_now: bool) -> Result<DataSet> {
    if p.region_writer && created_now {
        return Err(not_ready_for_regions(&dir, "there is none yet"));
    }
    let wanted = if p.region_writer {
        Mode::Shared
    } else if p.writes || created_now {
        Mode::Exclusive
    } else {
        Mode::Shared
    };
    // A directory made just now is registered before it is locked: from the moment its
    // lock can be seen, `dbio doctor` run anywhere finds it, whenever it is killed.
    if created_now {
        tell_registry(p.target, true);
    }
    let lock = match lock_dir(&dir, wanted, created_now) {
        Ok(lock) => lock,
        Err(e) => {
            if created_now {
                tell_registry(p.target, false);
            }
            return Err(e);
        }
    };
    let no_manifest = || matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None));
    // No data set here yet: registered now, before anything is built.
    let first = no_manifest();
    if first && !created_now {
        tell_registry(p.target, true);
    }
    // A directory whose first preparation was killed: dbio's all the same.
    let created_now = created_now || lock.says_created_dir();
    let result = prepare_locked(p, &dir, &lock, wanted, created_now);
    match result {
        Ok(m) => {
            let mut ds = m.into_data_set(dir, lock, wanted);
            ds.region_writer = p.region_writer;
            Ok(ds)
        }
        Err(e) => {
            lock.unmake(&dir);
            if first && no_manifest() && matches!(dir.entry(LOCK_NAME), Ok(None)) {
                tell_registry(p.target, false);
            }
            Err(e)
        }
    }
}

/// A prepared manifest and whether its files were reused (made into a [`DataSet`] with the
/// directory and lock it was prepared under).
struct Prepared {
    m: Manifest,
    reused: bool,
    fill_method: Option<String>,
}

impl Prepared {
    fn into_data_set(self, dir: Dir, lock: Lock, mode: Mode) -> DataSet {
        let mut ds = from_manifest(dir, lock, mode, self.m, self.reused);
        ds.fill_method = self.fill_method;
        ds
    }
}

fn prepare_locked(
    p: &Prepare,
    dir: &Dir,
    lock: &Lock,
    wanted: Mode,
    created_now: bool,
) -> Result<Prepared> {
    let existing = read_manifest(dir)?;
    let had_manifest = existing.is_some();
    let mut m = existing.unwrap_or_else(|| new_manifest(created_now, p.fill.seed));
    let incomplete = m.state != State::Ready;
    let data_audit = audit(dir, &m.files)?;
    let redo_audit = audit(dir, &m.redo_files)?;
    let temp_audit = audit(dir, &m.temp_files)?;
    for a in [&data_audit, &redo_audit, &temp_audit] {
        if !a.foreign.is_empty() {
            return Err(foreign_error(dir, &a.foreign));
        }
        if let Some(name) = a.other_owner.first().filter(|_| p.writes) {
            return Err(Error::usage(format!(
                "{}: the data set was created by another user, and this run writes; run dbio as that user, or choose another --target",
                dir.join(name).shown()
            )));
        }
    }

    let changes = Changes {
        data: match p.data {
            Some(spec) => data_change(p, dir, &m, spec, &data_audit, incomplete)?,
            None => None,
        },
        redo: match p.redo {
            Some((count, size)) => redo_change(p, dir, &m, count, size, &redo_audit, incomplete)?,
            None => false,
        },
        stray_temp: !m.temp_files.is_empty() && p.writes,
        drop_data: p.data.is_none() && incomplete && !m.files.is_empty(),
    };

    // The sequence table's name must be free, or hold dbio's own table.
    if changes.data.is_some() && p.data.is_some_and(|d| d.verify) {
        let seq = crate::verify::seq::SEQ_NAME;
        let at = dir
            .entry(seq)
            .map_err(|e| Error::io("cannot look at", &dir.join(seq), &e))?;
        let ours = |e: &crate::safety::fs::Entry| {
            m.verify_seq.as_ref().is_some_and(|r| e.is_ours(&r.id()))
        };
        if at.is_some_and(|e| !ours(&e)) {
            return Err(Error::usage(format!(
                "{} exists and was not created by dbio; dbio never overwrites files it did not create — remove it yourself or choose another --target",
                dir.join(seq).shown()
            )));
        }
    }
    // Space for everything new, counting what is removed first, before anything changes.
    let mut space = SpaceNeeds::default();
    let on = |e: std::io::Error| Error::io("cannot read the free space of", dir.path(), &e);
    if let (Some(_), Some(spec)) = (&changes.data, p.data) {
        space
            .add(
                dir.path(),
                spec.size,
                data_audit.ours_bytes,
                "the data set",
                "use a smaller --size or another --target",
            )
            .map_err(on)?;
    }
    if let (true, Some((count, size))) = (changes.redo, p.redo) {
        let bytes = u64::from(count).checked_mul(size).ok_or_else(|| {
            Error::usage("--redo-files × --redo-file-size is more bytes than can be counted")
        })?;
        space
            .add(
                dir.path(),
                bytes,
                redo_audit.ours_bytes,
                "the redo logs",
                "use a smaller --redo-file-size or fewer --redo-files, or another --target",
            )
            .map_err(on)?;
    }
    if changes.stray_temp {
        space
            .add(dir.path(), 0, temp_audit.ours_bytes, "", "")
            .map_err(on)?;
    }
    space.merge(&p.space);
    space.check().map_err(Error::usage)?;

    if p.region_writer {
        // Writers of regions hold it together: none may change what the others use.
        let why = if !had_manifest {
            Some("it has no manifest".to_string())
        } else if let Some(why) = &changes.data {
            Some(format!("its data files would be rebuilt ({why})"))
        } else if changes.any() {
            Some("it has redo logs or temp files to change".to_string())
        } else {
            None
        };
        if let Some(why) = why {
            return Err(not_ready_for_regions(dir, &why));
        }
        return Ok(Prepared {
            m,
            reused: true,
            fill_method: None,
        });
    }
    if !changes.any() {
        // Nothing to change: a run that only reads writes nothing at all.
        if !had_manifest && p.writes {
            m.write(dir)?;
        }
        return Ok(Prepared {
            m,
            reused: true,
            fill_method: None,
        });
    }
    if wanted == Mode::Shared {
        // A run that reads needs the data set made first: exclusively, then back to shared.
        lock.take(Mode::Exclusive)?;
    }
    let started = std::time::Instant::now();
    let mut methods = Vec::new();
    if changes.stray_temp {
        remove_group(dir, &m.temp_files)?;
        m.temp_files.clear();
        m.write(dir)?;
    }
    if changes.drop_data {
        remove_group(dir, &m.files)?;
        m.files.clear();
        m.size_bytes = 0;
        m.preconditioned = None;
        m.write(dir)?;
    }
    if let (Some(why), Some(spec)) = (&changes.data, p.data) {
        if !m.files.is_empty() {
            eprintln!(
                "dbio: recreating the data files in {} ({why})",
                dir.path().shown()
            );
            remove_group(dir, &m.files)?;
            m.files.clear();
        }
        // Headers go away with the old files; the new ones get them if asked for.
        let had_headers = m.verify;
        m.verify = false;
        if let Some(seq) = m.verify_seq.take() {
            remove_group(dir, std::slice::from_ref(&seq))?;
        }
        if had_headers {
            m.write(dir)?;
        }
        // The manifest written while preparing describes the data set being built, so
        // that one left by a kill is dbio's own, consistent, and recreated or removed.
        m.preconditioned = None;
        m.fill = spec.fill.name();
        m.size_bytes = spec.size;
        m.block_size = spec.block_size;
        m.verify = spec.verify;
        let names: Vec<String> = (0..spec.files).map(data_file_name).collect();
        let seal = spec
            .verify
            .then(|| (crate::verify::dataset_number(&m.id), spec.block_size));
        let method = build_group(
            dir,
            &mut m,
            Group::Data,
            &names,
            spec.file_size(),
            spec.fill,
            p.fill,
            seal,
        )?;
        if let Some((id, bs)) = seal {
            let (seq, size) =
                crate::verify::seq::write_new(dir, id, spec.size / bs).map_err(|e| {
                    Error::io("cannot write", &dir.join(crate::verify::seq::SEQ_NAME), &e)
                })?;
            m.verify_seq = Some(FileEntry::new(crate::verify::seq::SEQ_NAME, size, seq));
        }
        methods.push(format!("data files: {method}"));
    }
    if let (true, Some((count, size))) = (changes.redo, p.redo) {
        if !m.redo_files.is_empty() {
            eprintln!("dbio: recreating the redo logs in {}", dir.path().shown());
            remove_group(dir, &m.redo_files)?;
            m.redo_files.clear();
            m.write(dir)?;
        }
        m.redo_file_size = size;
        let names: Vec<String> = (0..count).map(redo_file_name).collect();
        let method = build_group(
            dir,
            &mut m,
            Group::Redo,
            &names,
            size,
            fill::Content::Random,
            p.fill,
            None,
        )?;
        methods.push(format!("redo logs: {method}"));
    }
    m.state = State::Ready;
    let built = !methods.is_empty();
    if built {
        m.prepare_seconds = started.elapsed().as_secs_f64();
    }
    m.write(dir)?;
    if wanted == Mode::Shared {
        lock.take(Mode::Shared)?;
    }
    Ok(Prepared {
        m,
        reused: !built,
        fill_method: built.then(|| methods.join("; ")),
    })
}

/// A writer of one region found the data set not ready: it changes nothing itself.
fn not_ready_for_regions(dir: &Dir, why: &str) -> Error {
    Error::usage(format!(
        "the data set in {} is not ready to be written in regions ({why}); it must be prepared first by a run that holds it alone",
        dir.path().shown()
    ))
}

/// Why the data files must be (re)built for `spec`, or None when they serve as they are.
/// A complete data set that does not fit the run is replaced only with `--fresh`.
fn data_change(
    p: &Prepare,
    dir: &Dir,
    m: &Manifest,
    spec: &DataSetSpec,
    a: &Audit,
    incomplete: bool,
) -> Result<Option<String>> {
    if m.files.is_empty() {
        return Ok(Some("new".into()));
    }
    if p.fresh {
        return Ok(Some("--fresh".into()));
    }
    if incomplete {
        return Ok(Some("its preparation did not finish".into()));
    }
    if !a.intact() {
        return Ok(Some(
            "some of its files are missing or not of the size recorded".into(),
        ));
    }
    let shape = m.matches(spec.size, spec.block_size, spec.files);
    let differs = if !shape {
        Some(format!(
            "it holds {} in {} file(s) of block size {}, this run wants {} in {} file(s) of {}",
            size_label(m.size_bytes),
            m.files.len(),
            size_label(m.block_size),
            size_label(spec.size),
            spec.files,
            size_label(spec.block_size)
        ))
    } else if m.fill != spec.fill.name() {
        Some(format!(
            "it was filled with {}, this run wants --fill {}",
            m.fill,
            spec.fill.name()
        ))
    } else if spec.verify && !m.verify {
        Some("its blocks carry no verify headers, this run wants --verify".into())
    } else if spec.verify {
        crate::verify::seq::unusable(
            dir,
            m.verify_seq.as_ref().map(|e| e.id()).as_ref(),
            crate::verify::dataset_number(&m.id),
            spec.size / spec.block_size,
        )
    } else {
        None
    };
    match differs {
        None => Ok(None),
        Some(why) => Err(Error::usage(format!(
            "the data set in {}: {why}; add --fresh to replace it (its {} of data files are removed first), or choose another --target",
            dir.path().shown(),
            human_bytes(a.ours_bytes)
        ))),
    }
}

/// Whether the redo logs must be (re)built: they are new, or missing, or `--fresh`; logs of
/// another count or size are replaced only with `--fresh`.
fn redo_change(
    p: &Prepare,
    dir: &Dir,
    m: &Manifest,
    count: u32,
    size: u64,
    a: &Audit,
    incomplete: bool,
) -> Result<bool> {
    if m.redo_files.is_empty() || p.fresh || incomplete || !a.intact() {
        return Ok(true);
    }
    if m.redo_matches(count, size) {
        return Ok(false);
    }
    Err(Error::usage(format!(
        "the data set in {} has {} redo log(s) of {}, this run wants {count} of {}; add --fresh to replace them, or choose another --target",
        dir.path().shown(),
        m.redo_files.len(),
        size_label(m.redo_file_size),
        size_label(size)
    )))
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

/// A file being created: unnamed until complete, or (where the file system has no
/// `O_TMPFILE`) named and recorded at once.
struct NewFile {
    file: File,
    name: String,
    id: FileId,
    named: bool,
}

/// Creates `name` in `dir` for filling: unnamed when possible. O_DIRECT when asked and
/// the file system takes it. Returns the file and whether O_DIRECT was used.
fn create_for_fill(dir: &Dir, name: &str, direct: bool) -> Result<(NewFile, bool)> {
    let path = dir.join(name);
    let flags = if direct { libc::O_DIRECT } else { 0 };
    let (file, named, direct) = match dir.create_unnamed(flags) {
        Ok(f) => (f, false, direct),
        Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
            return create_for_fill(dir, name, false);
        }
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => match dir.create_file(name, flags)
        {
            Ok(f) => (f, true, direct),
            Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
                // The create may have happened before the flag was refused.
                if let Ok(Some(entry)) = dir.entry(name) {
                    let _ = dir.remove_file(name, &entry.id);
                }
                return create_for_fill(dir, name, false);
            }
            Err(e) => return Err(Error::io("cannot create", &path, &e)),
        },
        Err(e) => return Err(Error::io("cannot create", &path, &e)),
    };
    let id = crate::safety::fs::entry_of(&file)
        .map_err(|e| Error::io("cannot stat", &path, &e))?
        .id;
    Ok((
        NewFile {
            file,
            name: name.to_string(),
            id,
            named,
        },
        direct,
    ))
}

/// Creates and fills the files `names` of `size` bytes as group `g` of the manifest.
/// Files are filled unnamed and linked into their names only when complete (a killed or
/// failed preparation leaves nothing); where the file system cannot do that, they are
/// named and recorded at once, and removed again on failure. `seal`: (data set number,
/// block size) to give every block a verify header.
#[allow(clippy::too_many_arguments)]
fn build_group(
    dir: &Dir,
    m: &mut Manifest,
    g: Group,
    names: &[String],
    size: u64,
    content: fill::Content,
    fill: &FillOptions,
    seal: Option<(u64, u64)>,
) -> Result<String> {
    for name in names {
        if dir
            .entry(name)
            .map_err(|e| Error::io("cannot look at", &dir.join(name), &e))?
            .is_some()
        {
            return Err(Error::usage(format!(
                "{} exists and was not created by dbio; dbio never overwrites files it did not create — remove it yourself or choose another --target",
                dir.join(name).shown()
            )));
        }
    }
    let mut direct = !fill.buffered;
    let mut new = Vec::with_capacity(names.len());
    let created = (|| -> Result<()> {
        for name in names {
            let (f, d) = create_for_fill(dir, name, direct)?;
            direct = d;
            if f.named {
                // Recorded before a byte is written; removed by a second Ctrl-C.
                group_mut(m, g).push(FileEntry::new(name, size, f.id));
                m.state = State::Preparing;
                crate::safety::cleanup::register(dir.join(name), f.id);
            }
            new.push(f);
        }
        if new.iter().any(|f| f.named) {
            m.write(dir)?;
        }
        Ok(())
    })();
    let filled = created.and_then(|()| fill_files(dir, &new, size, content, fill, seal, direct, g));
    for f in new.iter().filter(|f| f.named) {
        crate::safety::cleanup::forget(&dir.join(&f.name));
    }
    let linked = filled.and_then(|method| {
        // Recorded with their identities, then linked: a run killed in between finds
        // them missing (and rebuilds), never unrecorded files with dbio's names.
        m.state = State::Preparing;
        for f in new.iter().filter(|f| !f.named) {
            group_mut(m, g).push(FileEntry::new(&f.name, size, f.id));
        }
        m.write(dir)?;
        for f in new.iter().filter(|f| !f.named) {
            dir.link(&f.file, &f.name)
                .map_err(|e| Error::io("cannot name the new file", &dir.join(&f.name), &e))?;
        }
        Ok(method)
    });
    if linked.is_err() {
        let listed = std::mem::take(group_mut(m, g));
        let _ = remove_group(dir, &listed);
        m.state = State::Ready;
        // What was to be built is not there.
        match g {
            Group::Data => (m.size_bytes, m.block_size, m.verify) = (0, 0, false),
            Group::Redo => m.redo_file_size = 0,
        }
        // The manifest is rewritten if there is one; none is left where there was none.
        if matches!(dir.entry(manifest::MANIFEST_NAME), Ok(Some(_))) {
            if m.all_files().next().is_some() {
                let _ = m.write(dir);
            } else if let Ok(Some(e)) = dir.entry(manifest::MANIFEST_NAME) {
                let _ = dir.remove_file(manifest::MANIFEST_NAME, &e.id);
            }
        }
    }
    linked
}

#[allow(clippy::too_many_arguments)]
fn fill_files(
    dir: &Dir,
    new: &[NewFile],
    file_size: u64,
    content: fill::Content,
    fill: &FillOptions,
    seal: Option<(u64, u64)>,
    direct: bool,
    g: Group,
) -> Result<String> {
    for f in new {
        // Reserve the space up front: ENOSPC shows now, not halfway through.
        // SAFETY: fallocate on a valid fd.
        let rc = unsafe { libc::fallocate(f.file.as_raw_fd(), 0, 0, file_size as libc::off_t) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOSPC) {
                return Err(Error::io("cannot allocate", &dir.join(&f.name), &e));
            }
        }
    }
    let files: Vec<File> = new
        .iter()
        .map(|f| f.file.try_clone())
        .collect::<std::io::Result<_>>()
        .map_err(|e| Error::io("cannot use", dir.path(), &e))?;
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
            dir.path().shown(),
            crate::error::io_advice(&e)
        ))
    })?;
    if !complete {
        return Err(Error::Interrupted(
            "interrupted while preparing the data set; nothing of it is left".into(),
        ));
    }
    for f in new {
        f.file
            .sync_all()
            .map_err(|e| Error::io("cannot sync", &dir.join(&f.name), &e))?;
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

fn data_files(dir: &Dir, entries: &[FileEntry]) -> Vec<DataFile> {
    entries
        .iter()
        .map(|f| DataFile {
            path: dir.join(&f.name),
            name: f.name.clone(),
            size: f.size_bytes,
            id: Some(f.id()),
        })
        .collect()
}

fn from_manifest(dir: Dir, lock: Lock, mode: Mode, m: Manifest, reused: bool) -> DataSet {
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
        path: dir.path().to_path_buf(),
        region: None,
        dir: Some(dir),
        mode,
        region_writer: false,
        manifest: Some(m),
        _lock: Some(lock),
        _claim: None,
    }
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
    // The device node the claim holds (the path may be a symlink, /dev/disk/by-id/...).
    let (id, _) = sys::file_id_of(&claim).map_err(|e| Error::io("cannot stat", path, &e))?;
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
                path.shown(),
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
            path.shown(),
            wanted,
            size_label(block_size)
        )));
    }
    Ok(DataSet {
        path: path.to_path_buf(),
        kind,
        files: vec![DataFile {
            path: path.to_path_buf(),
            name: String::new(),
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
        region: None,
        dir: None,
        mode: Mode::Shared,
        region_writer: false,
        manifest: None,
        _lock: None,
        _claim: claim,
    })
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

    /// Opens the file or device given as `--target`; for writing (a claimed device), checks
    /// it is still the device that was checked.
    fn open_device_or_file(&self, f: &DataFile, flags: OpenFlags) -> Result<File> {
        use std::os::unix::fs::OpenOptionsExt;
        let custom = flags.bits() & !libc::O_ACCMODE;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(flags.write)
            .custom_flags(custom)
            .open(&f.path)
            .map_err(|e| open_error(&f.path, flags, &e))?;
        if flags.write {
            let (id, _) =
                sys::file_id_of(&file).map_err(|e| Error::io("cannot stat", &f.path, &e))?;
            if !f.id.is_some_and(|recorded| recorded.same_file(&id)) {
                return Err(Error::usage(format!(
                    "{} is no longer the device dbio checked; nothing written",
                    f.path.shown()
                )));
            }
        }
        Ok(file)
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

    /// One line saying where the data set lives and how much it takes on disk (SPEC §7.5).
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

/// The data set in `dir`, held shared (so no run writes it meanwhile) with its manifest,
/// for `dbio verify`. Nothing is written.
pub fn lock_existing(path: &Path) -> Result<(Manifest, Dir, Lock)> {
    if target_kind(path)? != Some(TargetKind::Directory) {
        return Err(Error::usage(format!(
            "{} is not a data set directory",
            path.shown()
        )));
    }
    let dir = Dir::open(path).map_err(|e| Error::io("cannot open", path, &e))?;
    // No manifest, no data set: say so before making a lock file in someone's directory.
    let no_data_set = || {
        Error::usage(format!(
            "{} holds no dbio data set (no {})",
            path.shown(),
            manifest::MANIFEST_NAME
        ))
    };
    if matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None)) {
        return Err(no_data_set());
    }
    let lock = lock_dir(&dir, Mode::Shared, false)?;
    let m = read_manifest(&dir)?.ok_or_else(|| {
        Error::usage(format!(
            "{} holds no dbio data set (no {})",
            path.shown(),
            manifest::MANIFEST_NAME
        ))
    })?;
    if m.state != State::Ready || m.files.is_empty() {
        return Err(Error::usage(format!(
            "the data set in {} has no complete data files; run `{}`",
            path.shown(),
            prepare_command(path, m.size_bytes, m.block_size, m.files.len(), true)
        )));
    }
    Ok((m, dir, lock))
}

/// What `dbio clean` did, and what it could not do.
#[derive(Debug, Default)]
pub struct CleanReport {
    pub files: usize,
    pub bytes: u64,
    pub removed_dir: bool,
    /// What was cleaned was a directory a killed first preparation left (no data set in it).
    pub unfinished: bool,
    /// Files dbio created that are still there, and why (permission, I/O error).
    pub remaining: Vec<(PathBuf, String)>,
    /// Names listed whose file is no longer dbio's, and manifest entries that were never
    /// dbio's (tampered): left alone.
    pub left_alone: Vec<(PathBuf, String)>,
    /// What was wrong in a changed manifest that leaves nothing behind (a field, an entry
    /// that is a path), one clause each as [`Rejected`] says it.
    pub ignored: Vec<String>,
}

/// The lock file's identity, and whether dbio created the directory, when `dir` has no
/// manifest but a lock file a preparation made (it says so): what a first preparation
/// killed before writing its manifest leaves (its data files were still unnamed, and went
/// with it).
fn unfinished_lock(dir: &Dir, lock: &Lock) -> Result<Option<(crate::sys::FileId, bool)>> {
    let Some(created_dir) = lock.marker() else {
        return Ok(None);
    };
    let entry = dir
        .entry(LOCK_NAME)
        .map_err(|e| Error::io("cannot look at", &dir.join(LOCK_NAME), &e))?;
    let me = crate::safety::fs::effective_uid();
    Ok(entry
        .filter(|e| e.kind == crate::safety::fs::Kind::File && e.nlink == 1 && e.uid == me)
        .map(|e| (e.id, created_dir)))
}

/// `dbio clean` of a directory without a manifest: the lock file a killed first
/// preparation left (and the directory, if dbio created it and it is empty), or nothing and
/// a usage error. Makes no lock file of its own.
fn clean_unfinished(path: &Path, dir: Dir) -> Result<CleanReport> {
    let lock = Lock::existing(&dir)?;
    lock.take(Mode::Exclusive)?;
    let Some((id, created_dir)) = unfinished_lock(&dir, &lock)? else {
        return Err(Error::usage(format!(
            "{} holds no dbio data set (no {}); nothing removed",
            path.shown(),
            manifest::MANIFEST_NAME
        )));
    };
    // Held exclusively by us: no preparation is running. The lock file is dbio's, and the
    // directory too if the lock file says so (removed only if empty).
    dir.remove_file(LOCK_NAME, &id)
        .map_err(|e| Error::io("cannot remove", &dir.join(LOCK_NAME), &e))?;
    drop(lock);
    drop(dir);
    Ok(CleanReport {
        files: 1,
        removed_dir: created_dir && std::fs::remove_dir(path).is_ok(),
        unfinished: true,
        ..CleanReport::default()
    })
}

/// Whether `path` is a directory a first preparation left unfinished (killed before its
/// manifest was written: its lock file is left) and no preparation holds it now.
/// Changes nothing (`dbio doctor`).
pub fn is_unfinished(path: &Path) -> bool {
    first_preparation(path) == Some(false)
}

/// For a directory without a manifest whose lock file a preparation made: whether that
/// first preparation is running now (`Some(true)`) or was killed (`Some(false)`, see
/// [`is_unfinished`]). None otherwise. Changes nothing.
pub fn first_preparation(path: &Path) -> Option<bool> {
    let dir = Dir::open(path).ok()?;
    if !matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None)) {
        return None;
    }
    let lock = Lock::existing(&dir).ok()?;
    matches!(unfinished_lock(&dir, &lock), Ok(Some(_))).then(|| lock.busy())
}

/// Whether `path` is a directory that holds nothing of a dbio data set: no manifest, and
/// no lock file a preparation made. Changes nothing (`dbio clean` of a registered data set
/// whose manifest is gone).
pub fn holds_no_data_set(path: &Path) -> bool {
    let Ok(dir) = Dir::open(path) else {
        return false;
    };
    matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None)) && first_preparation(path).is_none()
}

/// Removes the data set in `path`: the files its manifest lists (each only if still the
/// file dbio created), then the manifest, then the directory if dbio created it and it is
/// now empty. Nothing else. The manifest stays while any file dbio created remains, so
/// that a `dbio clean` by someone allowed to can finish the job.
pub fn clean(path: &Path) -> Result<CleanReport> {
    match target_kind(path) {
        Ok(None) => {
            return Err(Error::usage(format!(
                "nothing to clean: {} does not exist",
                path.shown()
            )));
        }
        Ok(Some(TargetKind::Directory)) => {}
        Err(e @ Error::Io(_)) => return Err(e),
        Ok(Some(_)) | Err(_) => {
            return Err(Error::usage(format!(
                "{} is not a data set directory; dbio clean only removes data sets dbio created",
                path.shown()
            )));
        }
    }
    let dir = Dir::open(path).map_err(|e| Error::io("cannot open", path, &e))?;
    if matches!(dir.entry(manifest::MANIFEST_NAME), Ok(None)) {
        return clean_unfinished(path, dir);
    }
    let lock = lock_dir(&dir, Mode::Exclusive, false)?;
    let manifest_entry = dir
        .entry(manifest::MANIFEST_NAME)
        .map_err(|e| Error::io("cannot look at", &dir.join(manifest::MANIFEST_NAME), &e))?;
    let Some((m, rejected)) = Manifest::read(&dir)? else {
        drop(lock);
        return clean_unfinished(path, dir);
    };
    let mut r = CleanReport::default();
    for x in rejected {
        // A wrong field names no file; an entry that is a path or not one of dbio's names
        // is never looked up. Only a file at such a name in the directory is left there.
        let in_dir = !x.is_field()
            && !x.name.contains('/')
            && !matches!(x.name.as_str(), "" | "." | "..")
            && matches!(dir.entry(&x.name), Ok(Some(_)));
        if in_dir {
            r.left_alone
                .push((dir.join(&x.name), format!("its manifest entry {}", x.why)));
        } else {
            r.ignored.push(x.to_string());
        }
    }
    for f in m.all_files() {
        let p = dir.join(&f.name);
        match dir.entry(&f.name) {
            Ok(None) => {}
            Ok(Some(e)) if !e.is_ours(&f.id()) => {
                let why = e.why_not_ours(&f.id()).unwrap_or("it is not dbio's");
                r.left_alone.push((p, why.into()));
            }
            Ok(Some(e)) => match dir.remove_file(&f.name, &f.id()) {
                Ok(_) => {
                    r.files += 1;
                    r.bytes += e.size;
                }
                Err(err) => r.remaining.push((p, crate::error::io_advice(&err))),
            },
            Err(err) => r.remaining.push((p, crate::error::io_advice(&err))),
        }
    }
    if r.remaining.is_empty()
        && let Some(me) = manifest_entry
        && let Err(err) = dir.remove_file(manifest::MANIFEST_NAME, &me.id)
    {
        r.remaining.push((
            dir.join(manifest::MANIFEST_NAME),
            crate::error::io_advice(&err),
        ));
    }
    // The lock file goes with the manifest (a file of dbio's user, empty or saying that
    // dbio created the directory, held by us now).
    if r.remaining.is_empty()
        && let Ok(Some(e)) = dir.entry(LOCK_NAME)
        && (e.size == 0 || lock.marker().is_some())
    {
        let _ = dir.remove_file(LOCK_NAME, &e.id);
    }
    drop(lock);
    drop(dir);
    r.removed_dir = r.remaining.is_empty() && m.created_dir && std::fs::remove_dir(path).is_ok();
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

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
