//! What is under a data set: the storage stack (`dbio map`), configuration findings with
//! their reasons, and the sysfs/procfs reading both are made of.
//!
//! - [`sysfs`]: [`SysRoot`] — sysfs and procfs under `/` or a captured fixture tree;
//! - [`map`]: mount → dm/md/partition → disks with transport, HBA, ports, queue settings;
//! - [`probe`]: that stack read from sysfs and procfs;
//! - [`lint`]: findings about that stack (max_sectors_kb, alignment, write cache, ...).

pub mod lint;
pub mod map;
pub mod probe;
pub mod sysfs;

use crate::units::Shown;
use std::path::Path;

pub use map::StorageMap;
pub use probe::map_path;
pub use sysfs::SysRoot;

use lint::Finding;

/// The map of `path` on this system and its findings (`block_size` is the data set's), the
/// request limits judged against a database's requests of up to 1 MiB (`dbio map`, the
/// wizard). Never fails: what cannot be read is left out and said in the map's notes.
pub fn survey(path: &Path, block_size: Option<u64>) -> (StorageMap, Vec<Finding>) {
    survey_with(path, block_size, lint::Requests::Database)
}

/// [`survey`] at the start of a run: the request limits are left to its end, when its
/// largest request is known ([`lint::request_limits`]).
pub fn survey_run(path: &Path, block_size: Option<u64>) -> (StorageMap, Vec<Finding>) {
    survey_with(path, block_size, lint::Requests::Later)
}

fn survey_with(
    path: &Path,
    block_size: Option<u64>,
    requests: lint::Requests,
) -> (StorageMap, Vec<Finding>) {
    let sys = SysRoot::host();
    let map = map_path(&sys, path).unwrap_or_else(|e| StorageMap {
        path: path.display().to_string(),
        notes: vec![format!("cannot map {}: {e}", path.shown())],
        ..Default::default()
    });
    let findings = lint::lint(
        &map,
        &lint::LintContext::current(&sys, block_size, requests),
    );
    (map, findings)
}
