//! Block devices a write test may overwrite (docs/safety.md, "Block devices").
//!
//! A write test on a block device needs `--destructive`, and even then only a device that
//! is not mounted (itself or any partition), has no holders (device mapper, md, ...), can be
//! opened exclusively (O_EXCL: nothing else has claimed it), and carries no signature: none
//! of those whose magic bytes dbio checks ([`super::signatures`]), and none that util-linux's libblkid knows
//! ([`super::blkid`]: oracleasm, zfs_member, ceph, bcache, drbd, VMFS, ... — the database
//! `wipefs` uses). Without a probe there is no write. The exclusive descriptor is kept for
//! the whole run, so nothing can mount the device while dbio writes to it.

use crate::units::Shown;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, IsTerminal, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::units::human_bytes;

use super::identity::{self, Held};
use super::signatures::{DeviceImage, signatures};

/// What will be overwritten, as shown before asking.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub path: PathBuf,
    /// Kernel name, e.g. `loop0`, `sdb`, `nvme0n1p2`.
    pub name: String,
    pub size: u64,
    /// Vendor and model, or what backs a loop or device-mapper device.
    pub model: String,
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}, {}, {})",
            self.path.shown(),
            self.name,
            human_bytes(self.size),
            self.model
        )
    }
}

/// A device dbio checked and may write to; `file` holds it open with O_EXCL for the run.
/// `held` is what it was when claimed, proved again before every write
/// ([`Held::open_for_writing`]).
#[derive(Debug)]
pub struct Claim {
    pub file: File,
    pub info: DeviceInfo,
    pub held: Arc<Held>,
}

/// What the user said on the command line.
#[derive(Debug, Clone, Copy)]
pub struct Consent {
    pub destructive: bool,
    pub yes: bool,
    /// How the device was given, for the refusals: `--target`, `--device`, or "" (the
    /// command's argument).
    pub option: &'static str,
}

/// Checks that `path` may be overwritten by `test` and claims it: not mounted, no holders,
/// exclusive, no signature, no alias in use, then `--destructive`. Refusals are usage errors (exit 2) that name the
/// reason. The caller asks for confirmation ([`confirm`]) once everything else is checked.
///
/// The device's identity is taken then and the device held for the rest of the process
/// ([`identity::hold`]). A path this process claimed before (the next point of a sweep)
/// must still be that device, as it was: a change is a failure (exit 1), before anything
/// else is looked at.
pub fn claim(path: &Path, test: &str, consent: Consent) -> Result<Claim> {
    let before = identity::held(path);
    if let Some(h) = &before {
        // A failure (exit 1): the device was fine when it was claimed.
        h.prove().map_err(Error::other)?;
    }
    let given = if consent.option.is_empty() {
        path.shown().to_string()
    } else {
        format!("{} {}", consent.option, path.shown())
    };
    let refuse = |why: String| {
        Error::usage(format!(
            "{given}: {test} would overwrite this block device, but {why}; dbio does not write to it"
        ))
    };
    let md = std::fs::metadata(path).map_err(|e| Error::io("cannot access", path, &e))?;
    let rdev = md.rdev();
    let sys = sysfs_dir(rdev).map_err(|e| Error::io("cannot find in /sys the device", path, &e))?;
    let name = sys
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(why) = in_use(rdev, &sys, &name) {
        return Err(refuse(why));
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => refuse(
                "it is in use (opening it exclusively failed with EBUSY: mounted, swap, RAID, device mapper or another program holds it)".into(),
            ),
            _ => Error::io("cannot open", path, &e),
        })?;
    // What was opened is the device whose use was just checked (the name could have been
    // pointed elsewhere in between).
    let opened = file
        .metadata()
        .map_err(|e| Error::io("cannot stat", path, &e))?;
    if opened.rdev() != rdev {
        return Err(refuse(
            "its name led to another device while dbio checked it".into(),
        ));
    }
    let size = crate::sys::block_device_size(&file)
        .map_err(|e| Error::io("cannot read the size of", path, &e))?;
    let found = signatures(&DeviceImage { file: &file, size }).map_err(|e| {
        Error::io(
            "cannot read the start and end of the device to check it is blank:",
            path,
            &e,
        )
    })?;
    if !found.is_empty() {
        let what: Vec<String> = found.iter().map(|s| s.to_string()).collect();
        let erase = if found.iter().all(|f| f.offset == 0) {
            format!(
                "(e.g. `wipefs -a {}`)",
                crate::units::shell_word(&path.display().to_string())
            )
        } else {
            "(`wipefs` looks at the start of the device only: zero those bytes)".to_string()
        };
        return Err(refuse(format!(
            "it holds {} — erase that yourself {erase} if it really is unused",
            what.join(" and "),
        )));
    }
    // The system's own signature database, beside dbio's checks: no probe, no write.
    match super::blkid::probe(&file, path) {
        Err(why) => {
            return Err(refuse(format!(
                "it cannot be checked for signatures: {why}"
            )));
        }
        Ok((types, prober)) if !types.is_empty() => {
            return Err(refuse(format!(
                "{prober} finds {} on it — erase that yourself (e.g. `wipefs -a {}`) if it really is unused",
                types
                    .iter()
                    .map(|t| format!("a {t} signature"))
                    .collect::<Vec<_>>()
                    .join(" and "),
                path.shown()
            )));
        }
        Ok(_) => {}
    }
    let info = DeviceInfo {
        path: path.to_path_buf(),
        name,
        size,
        model: model(&sys),
    };
    if !consent.destructive {
        return Err(Error::usage(format!(
            "{given} is a block device: {test} overwrites {info}; add --destructive to allow it"
        )));
    }
    // What was checked through `file` is the identity recorded (or proved again).
    let held = match before {
        Some(h) => {
            h.same(&file).map_err(Error::other)?;
            h
        }
        None => identity::hold(path, &file)
            .map_err(|why| refuse(format!("what it is cannot be told: {why}")))?,
    };
    Ok(Claim { file, info, held })
}

/// Why the device `rdev` (its /sys directory `sys`, kernel name `name`) may not be written
/// now: mounted, held, partitioned, swap, open elsewhere, or another name for bytes in use.
fn in_use(rdev: u64, sys: &Path, name: &str) -> Option<String> {
    let parts = partitions(sys);
    if let Some(m) = mounted(rdev, &parts) {
        return Some(format!("{m} is mounted"));
    }
    let mut holders = holders(sys);
    for (p, _) in &parts {
        holders.extend(self::holders(&sys.join(p)));
    }
    if !holders.is_empty() {
        return Some(format!(
            "it is in use by {} (see /sys/block/{name}/holders)",
            holders.join(", ")
        ));
    }
    if let Some((p, _)) = parts.first() {
        return Some(format!("it has partitions ({p})"));
    }
    if let Some(s) = in_swap(rdev) {
        return Some(format!("it is in use as swap ({s})"));
    }
    // A database opens its raw devices without O_EXCL: who has it (or a partition) open or
    // mapped?
    let devs: Vec<u64> = std::iter::once(rdev)
        .chain(parts.iter().map(|p| p.1))
        .collect();
    if let Some(user) = super::holders::opened_by(&devs).into_iter().next() {
        return Some(format!(
            "it is in use: {}, a database or another program",
            user.how()
        ));
    }
    // Another name for the same bytes: a second loop device over the same file, a loop
    // device over this one, the disk of this partition, a device-mapper table over it.
    let host = crate::storage::sysfs::SysRoot::host();
    match super::alias::conflict(&host, &super::alias::Host, name) {
        Ok(None) => {}
        Ok(Some(c)) => return Some(c.to_string()),
        Err(why) => return Some(why),
    }
    None
}

/// Whether the device at `path` is still the one claimed (`rdev`) and nothing has taken it
/// since dbio let go of it (mkfs and mount need it exclusively): the reason when not.
pub fn still_free(path: &Path, rdev: u64) -> std::result::Result<(), String> {
    let md = std::fs::metadata(path).map_err(|e| format!("cannot access it: {e}"))?;
    if !std::os::unix::fs::FileTypeExt::is_block_device(&md.file_type()) || md.rdev() != rdev {
        return Err("it is no longer the device it was (the path names another one now)".into());
    }
    let sys = sysfs_dir(rdev).map_err(|e| format!("it is no longer in /sys: {e}"))?;
    let name = sys
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    in_use(rdev, &sys, &name).map_or(Ok(()), Err)
}

/// Shows what will be overwritten and asks on the terminal, unless `--yes`; refuses when
/// it cannot ask (stdin is not a terminal).
pub fn confirm(info: &DeviceInfo, test: &str, yes: bool) -> Result<()> {
    let what = format!("{test} will overwrite {info}; whatever it holds is lost");
    if yes {
        stderr_line!("dbio: --destructive --yes: {what}");
        return Ok(());
    }
    if !io::stdin().is_terminal() {
        return Err(Error::usage(format!(
            "--destructive: {what}; confirm on a terminal, or add --yes (stdin is not a terminal)"
        )));
    }
    let _ = write!(io::stderr(), "dbio: {what}.\nType 'yes' to continue: ");
    let _ = io::stderr().flush();
    let mut answer = String::new();
    io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Error::other(format!("cannot read the answer: {e}")))?;
    if answer.trim() != "yes" {
        return Err(Error::usage(format!(
            "not confirmed; nothing written to {}",
            info.path.shown()
        )));
    }
    Ok(())
}

/// The device's directory in /sys (`/sys/devices/.../block/sdb`, or `.../sdb/sdb1`).
fn sysfs_dir(rdev: u64) -> io::Result<PathBuf> {
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}"))
}

/// Partitions of a whole disk: (name, device number).
fn partitions(sys: &Path) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(sys) else {
        return out;
    };
    for e in dir.flatten() {
        let p = e.path();
        if p.join("partition").exists()
            && let Some(dev) = read_devno(&p.join("dev"))
        {
            out.push((e.file_name().to_string_lossy().into_owned(), dev));
        }
    }
    out.sort();
    out
}

fn read_devno(path: &Path) -> Option<u64> {
    let s = std::fs::read_to_string(path).ok()?;
    let (ma, mi) = s.trim().split_once(':')?;
    Some(libc::makedev(ma.parse().ok()?, mi.parse().ok()?))
}

fn holders(sys: &Path) -> Vec<String> {
    std::fs::read_dir(sys.join("holders"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the device or one of its partitions is mounted: by device number, or by source
/// path (btrfs reports an anonymous device number). Returns what is mounted where.
fn mounted(rdev: u64, parts: &[(String, u64)]) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let devs: Vec<u64> = std::iter::once(rdev)
        .chain(parts.iter().map(|p| p.1))
        .collect();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let (Some(devno), Some(point)) = (fields.get(2), fields.get(4)) else {
            continue;
        };
        let by_number = read_devno_str(devno).is_some_and(|d| devs.contains(&d));
        // After " - ": file system type, then the source.
        let source = line
            .split(" - ")
            .nth(1)
            .and_then(|rest| rest.split(' ').nth(1));
        let by_source = source.is_some_and(|s| {
            s.starts_with('/')
                && std::fs::metadata(s)
                    .is_ok_and(|m| m.file_type_is_block() && devs.contains(&m.rdev()))
        });
        if by_number || by_source {
            let what = source.unwrap_or(devno);
            return Some(format!("{what} (on {point})"));
        }
    }
    None
}

trait BlockType {
    fn file_type_is_block(&self) -> bool;
}

impl BlockType for std::fs::Metadata {
    fn file_type_is_block(&self) -> bool {
        use std::os::unix::fs::FileTypeExt;
        self.file_type().is_block_device()
    }
}

fn read_devno_str(s: &str) -> Option<u64> {
    let (ma, mi) = s.split_once(':')?;
    Some(libc::makedev(ma.parse().ok()?, mi.parse().ok()?))
}

/// The swap entry of /proc/swaps that is this device.
fn in_swap(rdev: u64) -> Option<String> {
    let text = std::fs::read_to_string("/proc/swaps").ok()?;
    text.lines().skip(1).find_map(|l| {
        let dev = l.split_whitespace().next()?;
        let m = std::fs::metadata(dev).ok()?;
        (m.file_type_is_block() && m.rdev() == rdev).then(|| dev.to_string())
    })
}

/// Vendor and model from /sys, or what a loop or device-mapper device stands for.
fn model(sys: &Path) -> String {
    let read = |rel: &str| {
        std::fs::read_to_string(sys.join(rel))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
    };
    if let Some(b) = read("loop/backing_file") {
        return format!("loop device backed by {b}");
    }
    if let Some(n) = read("dm/name") {
        return format!("device mapper {n}");
    }
    let vendor = read("device/vendor").unwrap_or_default();
    match read("device/model") {
        Some(m) if vendor.is_empty() => m,
        Some(m) => format!("{vendor} {m}"),
        None => "model unknown".into(),
    }
}
