//! Preparing a data set: everything checked first, then files built unnamed and linked
//! into their names only when complete.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

use super::lock::{LOCK_NAME, Lock, lock_dir};
use super::manifest::{self, FileEntry, Manifest, State};
use super::target::open_dir;
use super::{
    Audit, DataFile, DataSet, DataSetSpec, FillOptions, TargetKind, audit, data_file_name, fill,
    foreign_error, read_manifest, redo_file_name, remove_group,
};
use crate::error::{Error, Result};
use crate::safety::fs::Dir;
use crate::safety::limits::SpaceNeeds;
use crate::safety::lock::Mode;
use crate::sys::{self, FileId};
use crate::units::{Shown, human_bytes, size_label};

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
            stderr_line!(
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
            stderr_line!("dbio: recreating the redo logs in {}", dir.path().shown());
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
        claim: None,
    }
}
