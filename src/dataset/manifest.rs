//! The manifest beside a data set: the record of which files dbio created (SPEC §7.1).
//! dbio writes only into files listed here whose inode still matches.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::sys::FileId;

pub const MANIFEST_NAME: &str = "dbio-manifest.json";
pub const SCHEMA: &str = "dbio.dataset.v1";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Files are being created or filled; not usable.
    Preparing,
    /// Complete and usable.
    Ready,
}

/// One data file dbio created.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileEntry {
    /// File name, relative to the data set directory.
    pub name: String,
    pub size_bytes: u64,
    /// Device, inode and birth time at creation: a file replaced behind dbio's back is not
    /// dbio's, even if it got the same inode number.
    pub dev: u64,
    pub ino: u64,
    #[serde(default)]
    pub btime_ns: Option<u64>,
}

impl FileEntry {
    /// The identity recorded at creation (None until the file was created).
    pub fn id(&self) -> Option<FileId> {
        (self.ino != 0).then_some(FileId {
            dev: self.dev,
            ino: self.ino,
            btime_ns: self.btime_ns,
        })
    }
}

/// The run currently using the data set (cleared when it ends; left behind if it was killed).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InUse {
    pub pid: u32,
    pub test: String,
    pub since: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: String,
    pub created_by: String,
    pub id: String,
    pub created_at: String,
    pub state: State,
    pub size_bytes: u64,
    pub block_size: u64,
    pub fill: String,
    /// Whether dbio created the directory itself (then `dbio clean` removes it when empty).
    pub created_dir: bool,
    /// Data files (empty when only redo logs were asked for so far).
    pub files: Vec<FileEntry>,
    /// Redo log files (tests redo, oltp), each `redo_file_size` bytes.
    #[serde(default)]
    pub redo_files: Vec<FileEntry>,
    #[serde(default)]
    pub redo_file_size: u64,
    /// Temporary files of a run in progress (test temp); removed when it ends. Any listed
    /// here while no run holds the data set are left over from a killed run.
    #[serde(default)]
    pub temp_files: Vec<FileEntry>,
    /// How the data set was filled and how fast.
    #[serde(default)]
    pub prepare_seconds: f64,
    #[serde(default)]
    pub in_use: Option<InUse>,
    /// Every data block carries a verify header (`--verify`); its write sequences are in
    /// `dbio-verify.seq`. Cleared when a run writes without `--verify`.
    #[serde(default)]
    pub verify: bool,
}

impl Manifest {
    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(MANIFEST_NAME)
    }

    /// Reads the manifest in `dir`; `Ok(None)` when there is none.
    pub fn read(dir: &Path) -> Result<Option<Manifest>> {
        let path = Self::path_in(dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io("cannot read", &path, &e)),
        };
        let m: Manifest = serde_json::from_str(&text).map_err(|e| {
            Error::usage(format!(
                "{} is not a valid dbio manifest ({e}); dbio will not touch this directory — move the file away or choose another --target",
                path.display()
            ))
        })?;
        if m.schema != SCHEMA {
            return Err(Error::usage(format!(
                "{} has schema '{}', this dbio understands '{SCHEMA}'; use the matching dbio version or `dbio clean` it",
                path.display(),
                m.schema
            )));
        }
        Ok(Some(m))
    }

    /// Writes the manifest atomically (temporary file + rename), then syncs it.
    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = Self::path_in(dir);
        let tmp = dir.join(format!(".{MANIFEST_NAME}.tmp"));
        let text = serde_json::to_string_pretty(self).expect("manifest serializes");
        let write = || -> std::io::Result<()> {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io("cannot write", &path, &e)
        })
    }

    /// Whether this data set can serve a run that wants `size`, `block_size` and `files`.
    pub fn matches(&self, size: u64, block_size: u64, files: u32) -> bool {
        self.state == State::Ready
            && self.size_bytes == size
            && self.block_size == block_size
            && self.files.len() == files as usize
    }

    /// Whether the redo logs are `count` files of `size` bytes.
    pub fn redo_matches(&self, count: u32, size: u64) -> bool {
        self.redo_files.len() == count as usize && self.redo_file_size == size
    }

    /// Every file this manifest lists.
    pub fn all_files(&self) -> impl Iterator<Item = &FileEntry> {
        self.files
            .iter()
            .chain(&self.redo_files)
            .chain(&self.temp_files)
    }
}
