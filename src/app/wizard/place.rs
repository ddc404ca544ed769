//! Where the data set goes: what the wizard says about a place before the user settles on
//! it — the free space there, what `dbio map` finds under it (file system, device,
//! rotational or not, findings) and the data set it already holds. Reads only.

use crate::units::Shown;
use std::path::Path;

use crate::storage::map::BlockNode;
use crate::units::{human_bytes, size_label};

/// What the wizard knows of a place.
#[derive(Debug, Default)]
pub struct Place {
    /// Lines to show, each complete.
    pub lines: Vec<String>,
    /// Bytes free to unprivileged users there (None: unknown, or not accounted: ramfs).
    pub free: Option<u64>,
    /// The data set dbio made there before, if any.
    pub existing: Option<Existing>,
}

/// A data set found at the place (its manifest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Existing {
    pub size: u64,
    pub block_size: u64,
    pub files: u32,
}

/// Looks at `target` (an existing directory, or one to be made in an existing parent).
pub fn look(target: &Path, block_size: u64) -> Place {
    let at = crate::dataset::space_path(target);
    let mut place = Place {
        free: crate::sys::free_bytes(&at).ok().flatten(),
        existing: existing(target),
        ..Place::default()
    };
    let (map, findings) = crate::storage::survey(&at, Some(block_size));
    let made = if target.exists() {
        String::new()
    } else {
        format!(" (a new directory in {})", at.shown())
    };
    let free = match place.free {
        Some(b) => format!("{} free", human_bytes(b)),
        None => "free space not accounted (in memory)".to_string(),
    };
    place
        .lines
        .push(format!("{}{made}: {free}", target.shown()));
    if let Some(m) = &map.mount {
        place.lines.push(format!(
            "file system {} on {} (from {})",
            m.fs_type, m.mount_point, m.source
        ));
    }
    if map.memory_backed {
        place.lines.push(
            "in memory (tmpfs, ramfs or a RAM disk): no storage is measured there".to_string(),
        );
    }
    let mut disks = Vec::new();
    leaf_disks(&map.devices, &mut disks);
    for d in disks {
        place.lines.push(disk_line(d));
    }
    match findings.len() {
        0 => place.lines.push("no configuration findings".to_string()),
        n => {
            place.lines.push(format!(
                "{n} configuration finding(s) (`dbio map {}` explains them):",
                crate::units::shell_word(&at.display().to_string())
            ));
            for f in &findings {
                place.lines.push(format!(
                    "  {} [{}] {}: {}",
                    f.severity,
                    f.rule,
                    f.subject,
                    first_clause(&f.message)
                ));
            }
        }
    }
    if let Some(e) = &place.existing {
        place.lines.push(format!(
            "it holds a dbio data set: {} in {} file(s) of block size {} (reused when the run fits it)",
            size_label(e.size),
            e.files,
            size_label(e.block_size)
        ));
    }
    place
}

/// A finding's message up to its first colon or semicolon: what, without the why.
fn first_clause(message: &str) -> &str {
    let end = [": ", "; "]
        .iter()
        .filter_map(|sep| message.find(sep))
        .min()
        .unwrap_or(message.len());
    &message[..end]
}

/// The disks at the bottom of the stack (what holds the data).
fn leaf_disks<'a>(nodes: &'a [BlockNode], out: &mut Vec<&'a BlockNode>) {
    for n in nodes {
        if n.lower.is_empty() {
            out.push(n);
        } else {
            leaf_disks(&n.lower, out);
        }
    }
}

/// "device vda: virtio disk, 256.0 GiB, rotational".
fn disk_line(n: &BlockNode) -> String {
    let mut what = vec![
        format!(
            "{} {}",
            n.disk.as_ref().map_or("", |d| d.transport.as_str()),
            n.layer
        )
        .trim()
        .to_string(),
    ];
    what.push(human_bytes(n.size_bytes));
    if let Some(model) = n.disk.as_ref().and_then(|d| d.model.as_deref()) {
        what.push(model.trim().to_string());
    }
    what.push(
        match n.disk.as_ref().and_then(|d| d.rotational) {
            Some(true) => "rotational (a spinning disk, or a virtual disk that says it is one)",
            Some(false) => "not rotational (flash)",
            None => "rotational or not: unknown",
        }
        .to_string(),
    );
    format!("device {}: {}", n.name, what.join(", "))
}

/// The data set at `target`, from its manifest (read, never locked or changed).
fn existing(target: &Path) -> Option<Existing> {
    let dir = crate::safety::fs::Dir::open(target).ok()?;
    let (m, _) = crate::dataset::Manifest::read(&dir).ok()??;
    if m.files.is_empty() {
        return None;
    }
    Some(Existing {
        size: m.size_bytes,
        block_size: m.block_size,
        files: m.files.len() as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_says_its_free_space_and_device() {
        let dir = tempfile::tempdir().unwrap();
        let p = look(&dir.path().join("dbio-data"), 8192);
        assert!(p.lines[0].contains("a new directory in"), "{:?}", p.lines);
        assert!(p.lines[0].contains("free"), "{:?}", p.lines);
        assert!(p.existing.is_none());
    }
}
