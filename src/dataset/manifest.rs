//! The manifest beside a data set: the record of which files dbio created, the only files
//! it writes (docs/safety.md, "The manifest is untrusted input").
//!
//! The manifest is untrusted input: anyone who can write the directory can edit it. So every
//! entry is checked when it is read ([`Manifest::read`]): its name must be one of dbio's
//! own file names (`dbio-data-001.dbf`, `dbio-redo-01.log`, `dbio-temp-001.tmp`,
//! `dbio-verify.seq` — never a path) and it must carry a real identity (device, inode,
//! birth time). An entry that fails is set aside as [`Rejected`]: reported by `dbio doctor`,
//! never written, truncated or removed. An entry that passes still only names a file;
//! [`crate::safety::fs`] acts on the file only when its identity matches.

use crate::units::Shown;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::safety::fs::Dir;
use crate::sys::FileId;

pub const MANIFEST_NAME: &str = "dbio-manifest.json";
pub const SCHEMA: &str = "dbio.dataset.v1";
/// A manifest larger than this is not dbio's (4096 files take about 1 MiB).
const MAX_BYTES: usize = 16 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Files are being created or filled; not usable.
    Preparing,
    /// Complete and usable.
    Ready,
}

/// One file dbio created.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileEntry {
    /// File name in the data set directory.
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
    /// An entry for a file dbio just created, with its identity.
    pub fn new(name: impl Into<String>, size_bytes: u64, id: FileId) -> FileEntry {
        FileEntry {
            name: name.into(),
            size_bytes,
            dev: id.dev,
            ino: id.ino,
            btime_ns: id.btime_ns,
        }
    }

    /// The identity recorded at creation.
    pub fn id(&self) -> FileId {
        FileId {
            dev: self.dev,
            ino: self.ino,
            btime_ns: self.btime_ns,
        }
    }
}

/// A run marked in use by an older dbio (PID marks are no longer written or trusted: a data
/// set in use is held by a lock). Read so that old manifests still parse.
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
    /// Named temporary files of a run in progress (only on file systems without
    /// `O_TMPFILE`; elsewhere a run's temp files have no name and vanish with it).
    #[serde(default)]
    pub temp_files: Vec<FileEntry>,
    #[serde(default)]
    pub prepare_seconds: f64,
    /// Never written any more; see [`InUse`].
    #[serde(default, skip_serializing)]
    pub in_use: Option<InUse>,
    /// Every data block carries a verify header (`--verify`); its write sequences are in
    /// `dbio-verify.seq`. Cleared when a run writes without `--verify`.
    #[serde(default)]
    pub verify: bool,
    /// `dbio-verify.seq`, with its identity.
    #[serde(default)]
    pub verify_seq: Option<FileEntry>,
    /// How `dbio precondition` last wrote the data files over (absent: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preconditioned: Option<Preconditioned>,
}

/// One pass over the whole target.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Pass {
    /// Bytes written in this pass.
    pub bytes: u64,
    /// From the first write to the end of the pass's flush.
    pub seconds: f64,
    pub mib_s: f64,
    /// Whether the pass covered the whole target (false: stopped by a signal).
    pub complete: bool,
}

/// What `dbio precondition` did (sequential writes over every data file, a number of
/// times), as the data set's manifest and every later result record it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Preconditioned {
    /// When it ended (UTC, RFC 3339).
    pub at: String,
    /// Bytes per sequential write.
    pub request_bytes: u64,
    /// The passes asked for.
    pub passes_asked: u32,
    /// Every pass made, in order; the last one may be incomplete.
    pub passes: Vec<Pass>,
    /// Bytes written in all passes.
    pub bytes: u64,
    /// Whether the writes bypassed the page cache (O_DIRECT).
    pub direct: bool,
}

impl Preconditioned {
    /// The passes that covered the whole target.
    pub fn complete_passes(&self) -> usize {
        self.passes.iter().filter(|p| p.complete).count()
    }

    /// Whether every pass asked for was made in full.
    pub fn complete(&self) -> bool {
        self.complete_passes() == self.passes_asked as usize
    }

    /// One line: "2 passes of sequential 128K writes (2.0 GiB), ended 2026-…Z: 512.3,
    /// 498.1 MiB/s".
    pub fn describe(&self) -> String {
        let rates: Vec<String> = self
            .passes
            .iter()
            .map(|p| {
                format!(
                    "{:.1}{}",
                    p.mib_s,
                    if p.complete { "" } else { " (partial)" }
                )
            })
            .collect();
        let passes = if self.complete() {
            format!("{} pass(es)", self.passes_asked)
        } else {
            format!(
                "{} of {} pass(es) (stopped)",
                self.complete_passes(),
                self.passes_asked
            )
        };
        format!(
            "{passes} of sequential {} writes{} ({}), ended {}: {} MiB/s",
            crate::units::size_label(self.request_bytes),
            if self.direct { "" } else { ", buffered" },
            crate::units::human_bytes(self.bytes),
            self.at,
            rates.join(", ")
        )
    }
}

/// A manifest entry dbio will not act on, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    /// Which list it was in: "files", "redo_files", "temp_files" or "verify_seq".
    pub list: &'static str,
    pub name: String,
    pub why: String,
}

impl Rejected {
    /// Whether this is a field of the manifest whose value is wrong (`list` "manifest"),
    /// rather than a file entry: its name is a field name, never a file's.
    pub fn is_field(&self) -> bool {
        self.list == "manifest"
    }
}

/// One clause: "its size_bytes is 1, not …", "its files list names '../victim', which is a
/// path, not one of dbio's file names".
impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_field() {
            write!(f, "its {} {}", self.name, self.why)
        } else {
            write!(
                f,
                "its {} list names '{}', which {}",
                self.list, self.name, self.why
            )
        }
    }
}

/// Whether `name` is `prefix` + at least `digits` digits + `suffix`.
fn numbered(name: &str, prefix: &str, digits: usize, suffix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|r| r.strip_suffix(suffix))
        .is_some_and(|n| n.len() >= digits && n.len() <= 6 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `name` is a name dbio gives files of `list`.
pub fn is_dbio_name(list: &str, name: &str) -> bool {
    match list {
        "files" => numbered(name, "dbio-data-", 3, ".dbf"),
        "redo_files" => numbered(name, "dbio-redo-", 2, ".log"),
        "temp_files" => numbered(name, "dbio-temp-", 3, ".tmp"),
        "verify_seq" => name == crate::verify::seq::SEQ_NAME,
        _ => false,
    }
}

impl Manifest {
    /// Reads and checks the manifest in `dir` (not through a symlink); `Ok(None)` when
    /// there is none. Entries that fail the checks are taken out of the lists and
    /// returned as [`Rejected`].
    pub fn read(dir: &Dir) -> Result<Option<(Manifest, Vec<Rejected>)>> {
        let path = dir.join(MANIFEST_NAME);
        // Read at most one byte past the limit: a larger file is refused, never read whole.
        let bytes = match dir.read_head(MANIFEST_NAME, MAX_BYTES + 1) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(e)
                if e.kind() == std::io::ErrorKind::PermissionDenied
                    && e.raw_os_error().is_none() =>
            {
                return Err(Error::usage(format!(
                    "{e}; dbio will not touch this directory — move it away or choose another --target"
                )));
            }
            Err(e) => return Err(Error::io("cannot read", &path, &e)),
        };
        if bytes.len() > MAX_BYTES {
            return Err(Error::usage(format!(
                "{} is over {} bytes, too large to be a dbio manifest; dbio will not touch this directory — move the file away or choose another --target",
                path.shown(),
                MAX_BYTES
            )));
        }
        let mut m: Manifest = serde_json::from_slice(&bytes).map_err(|e| {
            Error::usage(format!(
                "{} is not a valid dbio manifest ({e}); dbio will not touch this directory — move the file away or choose another --target",
                path.shown()
            ))
        })?;
        if m.schema != SCHEMA {
            return Err(Error::usage(format!(
                "{} has schema '{}', this dbio understands '{SCHEMA}'; use the matching dbio version, or move the directory away",
                path.shown(),
                m.schema
            )));
        }
        let rejected = m.check();
        Ok(Some((m, rejected)))
    }

    /// Takes every entry that is not a dbio file name with a real identity out of its list.
    fn check(&mut self) -> Vec<Rejected> {
        let mut rejected = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut keep = |list: &'static str, e: &FileEntry, rejected: &mut Vec<Rejected>| {
            let why = if !is_dbio_name(list, &e.name) {
                Some(if e.name.contains('/') || e.name == ".." || e.name == "." {
                    "is a path, not one of dbio's file names".to_string()
                } else {
                    "is not one of dbio's file names".to_string()
                })
            } else if e.ino == 0 {
                Some("has no identity (inode 0): dbio cannot tell it is the file it created".into())
            } else if !seen.insert(e.name.clone()) {
                Some("is listed twice".into())
            } else {
                None
            };
            match why {
                Some(why) => {
                    rejected.push(Rejected {
                        list,
                        name: e.name.clone(),
                        why,
                    });
                    false
                }
                None => true,
            }
        };
        for (list, entries) in [
            ("files", &mut self.files),
            ("redo_files", &mut self.redo_files),
            ("temp_files", &mut self.temp_files),
        ] {
            entries.retain(|e| keep(list, e, &mut rejected));
        }
        if let Some(e) = self.verify_seq.take()
            && keep("verify_seq", &e, &mut rejected)
        {
            self.verify_seq = Some(e);
        }
        if let Some((field, why)) = self.inconsistent() {
            rejected.push(Rejected {
                list: "manifest",
                name: field.into(),
                why,
            });
        }
        rejected
    }

    /// The first field whose value cannot be what dbio wrote (sizes that do not add up, a
    /// block size dbio never uses), and why: dbio would read or write the files wrongly.
    fn inconsistent(&self) -> Option<(&'static str, String)> {
        if !self.files.is_empty() {
            let bs = self.block_size;
            if !bs.is_power_of_two() || !(512..=1 << 20).contains(&bs) {
                return Some((
                    "block_size",
                    format!("is {bs}, not a power of two from 512 to 1M"),
                ));
            }
            let per = self.files[0].size_bytes;
            if per == 0 || !per.is_multiple_of(bs) || self.files.iter().any(|f| f.size_bytes != per)
            {
                return Some((
                    "files",
                    "have sizes that are not equal whole blocks in every data file".into(),
                ));
            }
            if Some(self.size_bytes) != per.checked_mul(self.files.len() as u64) {
                return Some((
                    "size_bytes",
                    format!(
                        "is {}, not the {} data files' {per} bytes each",
                        self.size_bytes,
                        self.files.len()
                    ),
                ));
            }
        }
        if self.redo_files.iter().any(|f| {
            f.size_bytes != self.redo_file_size
                || f.size_bytes < 4 << 20
                || !f.size_bytes.is_multiple_of(512)
        }) {
            return Some((
                "redo_files",
                format!(
                    "have sizes that are not the redo_file_size {} (at least 4M, whole 512 B blocks)",
                    self.redo_file_size
                ),
            ));
        }
        if self.temp_files.iter().any(|f| f.size_bytes == 0) {
            return Some(("temp_files", "include one of size 0".into()));
        }
        None
    }

    /// Writes the manifest whole (see [`crate::safety::fs`]).
    pub fn write(&self, dir: &Dir) -> Result<()> {
        let text = serde_json::to_string_pretty(self).expect("manifest serializes");
        dir.replace(MANIFEST_NAME, text.as_bytes())
            .map_err(|e| Error::io("cannot write", &dir.join(MANIFEST_NAME), &e))
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
            .chain(&self.verify_seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, ino: u64) -> FileEntry {
        FileEntry {
            name: name.into(),
            size_bytes: if name.contains("redo") { 4 << 20 } else { 8192 },
            dev: 1,
            ino,
            btime_ns: None,
        }
    }

    #[test]
    fn only_dbio_names_with_an_identity_are_kept() {
        let mut m = Manifest {
            schema: SCHEMA.into(),
            created_by: String::new(),
            id: "1".into(),
            created_at: String::new(),
            state: State::Ready,
            size_bytes: 8192,
            block_size: 8192,
            fill: "random".into(),
            created_dir: false,
            files: vec![
                entry("dbio-data-001.dbf", 5),
                entry("../victim", 6),
                entry("/etc/passwd", 7),
                entry("dbio-data-002.dbf", 0),
                entry("notes.txt", 8),
                entry("dbio-data-001.dbf", 9),
            ],
            redo_files: vec![entry("dbio-redo-01.log", 10), entry("dbio-redo-03.log", 11)],
            redo_file_size: 4 << 20,
            temp_files: vec![entry("dbio-temp-001.tmp", 12)],
            prepare_seconds: 0.0,
            in_use: None,
            verify: false,
            verify_seq: Some(entry("dbio-verify.seq/..", 13)),
            preconditioned: None,
        };
        let rejected = m.check();
        let names: Vec<&str> = m.all_files().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "dbio-data-001.dbf",
                "dbio-redo-01.log",
                "dbio-redo-03.log",
                "dbio-temp-001.tmp"
            ]
        );
        assert_eq!(rejected.len(), 6, "{rejected:?}");
        assert!(
            rejected
                .iter()
                .any(|r| r.name == "../victim" && r.why.contains("path"))
        );
        assert!(rejected.iter().any(|r| r.why.contains("inode 0")));
        assert!(rejected.iter().any(|r| r.why.contains("twice")));
        // Sizes that do not add up reject the manifest as a whole.
        m.size_bytes = 1;
        let rejected = m.check();
        assert!(
            rejected
                .iter()
                .any(|r| r.list == "manifest" && r.name == "size_bytes"),
            "{rejected:?}"
        );
    }
}
