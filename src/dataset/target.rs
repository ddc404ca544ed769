//! Where a data set lives: what the target is, its directory, and an existing file or
//! block device used as a one-file data set.

use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use super::{DataFile, DataSet, DataSetSpec, TargetKind};
use crate::error::{Error, Result};
use crate::safety::device::Claim;
use crate::safety::fs::Dir;
use crate::safety::lock::Mode;
use crate::sys::{self, FileId};
use crate::units::{Shown, human_bytes, size_label};

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
pub(super) fn open_dir(target: &Path) -> Result<(Dir, bool)> {
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
/// `claim` (the device opened with O_EXCL) is held until the data set is dropped, and the
/// device is opened for writing only through it ([`crate::safety::identity::Held`]).
pub fn claimed_device(path: &Path, claim: Claim, spec: &DataSetSpec) -> Result<DataSet> {
    // The device node the claim holds (the path may be a symlink, /dev/disk/by-id/...).
    let (id, _) = sys::file_id_of(&claim.file).map_err(|e| Error::io("cannot stat", path, &e))?;
    one_file_data_set(
        path,
        TargetKind::BlockDevice,
        claim.info.size,
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
    claim: Option<Claim>,
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
        claim,
    })
}
