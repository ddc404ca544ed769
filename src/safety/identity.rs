//! Who a claimed block device is, proved again before every step that writes it
//! (docs/safety.md, "The same device at every step").
//!
//! A device number names a slot, not the storage behind it: a loop device can be detached
//! and attached to another file, a partition table rewritten, a device-mapper table
//! reloaded, between two steps of one command. So when dbio claims a device
//! ([`super::device::claim`]) it takes the device's [`Identity`] — for every device its
//! number, size and logical block size; for a loop device its backing file (device and
//! inode, from the kernel's LOOP_GET_STATUS64 on the open device, not from sysfs names),
//! offset, size limit and flags; for a partition its disk, start and length; for a device
//! mapper device its table; for a disk its WWID or serial — and keeps the device open for
//! the rest of the process ([`Held`]). That descriptor alone keeps a loop device attached
//! to its file: `losetup -d` only marks it to be detached once dbio lets go.
//!
//! Before each step that writes (each point's writes, each `mkfs`, each preconditioning
//! pass, the final erase) [`Held::prove`] or [`Held::open_for_writing`] reads the identity
//! again, through the descriptor that is written, and a difference stops the command: exit
//! 1, the difference in words, nothing further written. A later claim of the same path in
//! the same process (every point of a sweep, matrix or calibrate claims again) is proved
//! against the first ([`held`]).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::storage::sysfs::SysRoot;
use crate::units::{Shown, human_bytes};

/// What a loop device is attached to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backing {
    /// A regular file: its file system's device and its inode.
    File { dev: u64, ino: u64 },
    /// A block device, by device number.
    Block(u64),
}

/// "8:2" as a device number.
fn parse_devno(s: &str) -> Option<u64> {
    let (ma, mi) = s.trim().split_once(':')?;
    Some(libc::makedev(ma.parse().ok()?, mi.parse().ok()?))
}

/// The device-mapper table of device `devno` as `dmsetup table` prints it (None: unknown,
/// no dmsetup). Secrets in it (a crypt key) stay in memory: messages use [`table_summary`].
pub(super) fn dm_table(devno: u64) -> Option<String> {
    // Not there, or refused (another user could have written it): no table, and the
    // device counts as all of the devices below it, which asks more of them, not less.
    let dmsetup = crate::safety::exec::Program::find("dmsetup").ok()??;
    let out = dmsetup
        .command()
        .args(["table", "-j"])
        .arg(libc::major(devno).to_string())
        .arg("-m")
        .arg(libc::minor(devno).to_string())
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The major number of every loop device.
const LOOP_MAJOR: u32 = 7;

/// What a block device is, as far as the bytes it gives access to go.
#[derive(Debug, Clone)]
pub struct Identity {
    pub rdev: u64,
    /// Bytes (BLKGETSIZE64).
    pub size: u64,
    /// Bytes (BLKSSZGET).
    pub logical_block: u32,
    pub kind: Kind,
}

/// The storage behind the device.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A loop device: what it is attached to (None: nothing, "not bound").
    Loop(Option<Bound>),
    /// A partition: its disk's device number, start and length in 512-byte sectors.
    Partition { disk: u64, start: u64, sectors: u64 },
    /// A device-mapper device: its name, UUID and table (None: the table cannot be read,
    /// no dmsetup).
    Mapper {
        name: String,
        uuid: String,
        table: Option<String>,
    },
    /// Anything else (a disk, md, nbd, ...): its WWID or serial where the kernel shows one.
    Disk { id: Option<String> },
}

/// What a loop device is attached to, from LOOP_GET_STATUS64.
#[derive(Debug, Clone)]
pub struct Bound {
    pub backing: Backing,
    pub offset: u64,
    /// 0: no limit.
    pub sizelimit: u64,
    pub flags: u32,
    /// The backing file's name, for people only: a rename is no change.
    pub file_name: String,
}

/// The kernel's `struct loop_info64`.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// The kernel's encoding of a device number in loop_info64 (`huge_encode_dev`).
fn decode_dev(d: u64) -> u64 {
    libc::makedev(
        ((d >> 8) & 0xfff) as u32,
        ((d & 0xff) | ((d >> 12) & 0xfff00)) as u32,
    )
}

/// What the open loop device `file` is attached to, from the kernel (LOOP_GET_STATUS64):
/// None when it is attached to nothing (ENXIO). `file_name` is the kernel's first 63 bytes
/// of the name.
pub(super) fn loop_status(file: &File) -> io::Result<Option<Bound>> {
    // SAFETY: an all-zero loop_info64 is valid; the ioctl fills it (its size is the
    // kernel's struct loop_info64) and reads nothing from it.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a pointer to a struct of the size the ioctl writes.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::ENXIO) => Ok(None),
            _ => Err(e),
        };
    }
    let name_len = info.lo_file_name.iter().position(|&b| b == 0).unwrap_or(64);
    Ok(Some(Bound {
        // A regular file has no rdev; a block device is known by it.
        backing: if info.lo_rdevice != 0 {
            Backing::Block(decode_dev(info.lo_rdevice))
        } else {
            Backing::File {
                dev: decode_dev(info.lo_device),
                ino: info.lo_inode,
            }
        },
        offset: info.lo_offset,
        sizelimit: info.lo_sizelimit,
        flags: info.lo_flags,
        file_name: String::from_utf8_lossy(&info.lo_file_name[..name_len]).into_owned(),
    }))
}

fn devno(d: u64) -> String {
    format!("{}:{}", libc::major(d), libc::minor(d))
}

/// The loop flags by name (linux/loop.h).
fn flag_names(flags: u32) -> String {
    const NAMES: [(u32, &str); 4] = [
        (1, "read-only"),
        (4, "autoclear"),
        (8, "partscan"),
        (16, "direct-io"),
    ];
    let mut out: Vec<String> = NAMES
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, n)| n.to_string())
        .collect();
    let other = flags & !NAMES.iter().fold(0, |a, (b, _)| a | b);
    if other != 0 {
        out.push(format!("{other:#x}"));
    }
    if out.is_empty() {
        "none".into()
    } else {
        out.join(",")
    }
}

/// A device-mapper table as compared: its lines, words separated by one space.
pub fn normal_table(text: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A table for messages: linear and striped lines whole; of any other line its start,
/// length, target type and the devices it names — never its other words (a crypt target's
/// key).
fn table_summary(table: &str) -> String {
    table
        .lines()
        .map(|l| {
            let words: Vec<&str> = l.split(' ').collect();
            if matches!(words.get(2), Some(&"linear" | &"striped")) {
                return l.to_string();
            }
            let head = words.iter().take(3).copied();
            let devs = words
                .iter()
                .skip(3)
                .copied()
                .filter(|w| parse_devno(w).is_some());
            head.chain(devs).collect::<Vec<_>>().join(" ")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl Bound {
    /// "/work/a.img (device 254:1 inode 1234)".
    fn store(&self) -> String {
        match self.backing {
            Backing::File { dev, ino } => format!(
                "{} (device {} inode {ino})",
                self.file_name.shown(),
                devno(dev)
            ),
            Backing::Block(rdev) => {
                format!("{} (block device {})", self.file_name.shown(), devno(rdev))
            }
        }
    }
}

impl Identity {
    /// The identity of the open block device `file`, asked of the running system.
    pub fn of(file: &File) -> io::Result<Identity> {
        Identity::read(file, &SysRoot::host(), &|devno| {
            dm_table(devno).map(|t| normal_table(&t))
        })
    }

    /// [`Identity::of`] with sysfs under `sys` and device-mapper tables (by device number)
    /// from `dm_table`.
    fn read(
        file: &File,
        sys: &SysRoot,
        dm_table: &dyn Fn(u64) -> Option<String>,
    ) -> io::Result<Identity> {
        let md = file.metadata()?;
        if !md.file_type().is_block_device() {
            return Err(io::Error::other("it is not a block device"));
        }
        let rdev = md.rdev();
        let size = crate::sys::block_device_size(file)?;
        let logical_block = crate::sys::block_device_logical_size(file)?;
        let kind = if libc::major(rdev) == LOOP_MAJOR {
            let mut bound = loop_status(file)?;
            // sysfs has the whole name (for messages only; the kernel's record has 63 bytes).
            if let Some(b) = &mut bound
                && let Some(full) =
                    sys.read(&format!("sys/dev/block/{}/loop/backing_file", devno(rdev)))
            {
                b.file_name = full;
            }
            Kind::Loop(bound)
        } else {
            kind_in_sysfs(sys, rdev, dm_table)?
        };
        Ok(Identity {
            rdev,
            size,
            logical_block,
            kind,
        })
    }

    /// Every way `now` differs from `self`, in words; empty when it is the same device.
    pub fn differences(&self, now: &Identity) -> Vec<String> {
        let mut out = Vec::new();
        if self.rdev != now.rdev {
            out.push(format!(
                "it is another device now ({} → {})",
                devno(self.rdev),
                devno(now.rdev)
            ));
        }
        match (&self.kind, &now.kind) {
            (Kind::Loop(Some(_)), Kind::Loop(None)) => {
                out.push("it is no longer attached to a backing file (someone detached it)".into())
            }
            (Kind::Loop(None), Kind::Loop(Some(b))) => {
                out.push(format!("it is attached to {} now", b.store()))
            }
            (Kind::Loop(Some(a)), Kind::Loop(Some(b))) => {
                if a.backing != b.backing {
                    out.push(format!(
                        "its backing file changed ({} → {})",
                        a.store(),
                        b.store()
                    ));
                }
                if a.offset != b.offset {
                    out.push(format!(
                        "its offset in the backing file changed ({} → {} bytes)",
                        a.offset, b.offset
                    ));
                }
                if a.sizelimit != b.sizelimit {
                    let limit = |l: u64| {
                        if l == 0 {
                            "none".to_string()
                        } else {
                            format!("{l} bytes")
                        }
                    };
                    out.push(format!(
                        "its size limit changed ({} → {})",
                        limit(a.sizelimit),
                        limit(b.sizelimit)
                    ));
                }
                if a.flags != b.flags {
                    let detached = b.flags & 4 != 0 && a.flags & 4 == 0;
                    out.push(format!(
                        "its loop flags changed ({} → {}){}",
                        flag_names(a.flags),
                        flag_names(b.flags),
                        if detached {
                            ": someone detached it (losetup -d), and the kernel detaches it when dbio lets go of it"
                        } else {
                            ""
                        }
                    ));
                }
            }
            (Kind::Loop(None), Kind::Loop(None)) => {}
            (
                Kind::Partition {
                    disk: d0,
                    start: s0,
                    sectors: n0,
                },
                Kind::Partition {
                    disk: d1,
                    start: s1,
                    sectors: n1,
                },
            ) => {
                if d0 != d1 {
                    out.push(format!(
                        "it is a partition of another disk now ({} → {})",
                        devno(*d0),
                        devno(*d1)
                    ));
                }
                if s0 != s1 {
                    out.push(format!(
                        "its start on the disk changed (sector {s0} → {s1}: the partition table was rewritten)"
                    ));
                }
                if n0 != n1 {
                    out.push(format!("its length changed ({n0} → {n1} sectors)"));
                }
            }
            (
                Kind::Mapper {
                    name: n0,
                    uuid: u0,
                    table: t0,
                },
                Kind::Mapper {
                    name: n1,
                    uuid: u1,
                    table: t1,
                },
            ) => {
                if n0 != n1 || u0 != u1 {
                    out.push(format!(
                        "it is another device-mapper device now ({} → {})",
                        n0.shown(),
                        n1.shown()
                    ));
                }
                match (t0, t1) {
                    (Some(a), Some(b)) if a != b => out.push(format!(
                        "its device-mapper table changed ({} → {})",
                        table_summary(a).shown(),
                        table_summary(b).shown()
                    )),
                    (Some(_), None) => out.push(
                        "its device-mapper table can no longer be read (dmsetup table), so it cannot be proved unchanged".into(),
                    ),
                    _ => {}
                }
            }
            (Kind::Disk { id: a }, Kind::Disk { id: b }) => {
                if a != b {
                    let id = |i: &Option<String>| {
                        i.as_deref()
                            .map_or("none".to_string(), |s| s.shown().to_string())
                    };
                    out.push(format!(
                        "its WWID or serial changed ({} → {}): another disk is in its place",
                        id(a),
                        id(b)
                    ));
                }
            }
            (a, b) => out.push(format!("it is {} now, not {}", b.what(), a.what())),
        }
        if self.size != now.size {
            out.push(format!(
                "its size changed ({} bytes, {} → {} bytes, {})",
                self.size,
                human_bytes(self.size),
                now.size,
                human_bytes(now.size)
            ));
        }
        if self.logical_block != now.logical_block {
            out.push(format!(
                "its logical block size changed ({} → {} bytes)",
                self.logical_block, now.logical_block
            ));
        }
        out
    }

    /// Where the bytes dbio claimed lie, for advice once the device no longer shows them:
    /// "the backing file /work/a.img (device 254:1 inode 1234) from byte 0".
    pub fn storage(&self) -> String {
        match &self.kind {
            Kind::Loop(Some(b)) => format!(
                "the backing file {} from byte {}{}",
                b.store(),
                b.offset,
                if b.sizelimit == 0 {
                    String::new()
                } else {
                    format!(" (size limit {} bytes)", b.sizelimit)
                }
            ),
            Kind::Loop(None) => "no backing file (the loop device was detached)".into(),
            Kind::Partition {
                disk,
                start,
                sectors,
            } => format!(
                "sectors {start} to {} of the disk {}",
                start + sectors,
                devno(*disk)
            ),
            Kind::Mapper { name, table, .. } => format!(
                "the device-mapper device {}{}",
                name.shown(),
                table.as_deref().map_or(String::new(), |t| format!(
                    " (table {})",
                    table_summary(t).shown()
                ))
            ),
            Kind::Disk { id } => format!(
                "the disk {}{}",
                devno(self.rdev),
                id.as_deref()
                    .map_or(String::new(), |i| format!(" ({})", i.shown()))
            ),
        }
    }
}

impl Kind {
    fn what(&self) -> &'static str {
        match self {
            Kind::Loop(_) => "a loop device",
            Kind::Partition { .. } => "a partition",
            Kind::Mapper { .. } => "a device-mapper device",
            Kind::Disk { .. } => "a disk",
        }
    }
}

/// What sysfs says of device `rdev` (not a loop device): a partition, a device-mapper
/// device, or a disk.
fn kind_in_sysfs(
    sys: &SysRoot,
    rdev: u64,
    dm_table: &dyn Fn(u64) -> Option<String>,
) -> io::Result<Kind> {
    let missing =
        |what: &str| io::Error::other(format!("/sys shows no {what} for device {}", devno(rdev)));
    let dir = sys
        .resolve(&format!("sys/dev/block/{}", devno(rdev)))
        .ok_or_else(|| missing("directory"))?;
    let at = |rel: &str| format!("{dir}/{rel}");
    if sys.exists(&at("partition")) {
        let parent = dir.rsplit_once('/').map_or("", |(p, _)| p);
        let disk = sys
            .read(&format!("{parent}/dev"))
            .and_then(|d| parse_devno(&d))
            .ok_or_else(|| missing("disk of the partition"))?;
        return Ok(Kind::Partition {
            disk,
            start: sys.read_u64(&at("start")).ok_or_else(|| missing("start"))?,
            sectors: sys.read_u64(&at("size")).ok_or_else(|| missing("size"))?,
        });
    }
    if sys.exists(&at("dm")) {
        return Ok(Kind::Mapper {
            name: sys.read(&at("dm/name")).unwrap_or_default(),
            uuid: sys.read(&at("dm/uuid")).unwrap_or_default(),
            table: dm_table(rdev),
        });
    }
    let id = ["device/wwid", "wwid", "device/serial", "serial"]
        .iter()
        .find_map(|rel| sys.read(&at(rel)).filter(|s| !s.is_empty()));
    Ok(Kind::Disk { id })
}

/// A device changed under dbio: what it is and how it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub path: PathBuf,
    pub what: Vec<String>,
}

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is no longer the device dbio claimed: {}; the run stops and touches nothing further",
            self.path.shown(),
            self.what.join("; ")
        )
    }
}

/// A device dbio claimed, held open for the rest of the process (not exclusively: `mkfs`
/// and `mount` need it so), with the identity it had when claimed.
#[derive(Debug)]
pub struct Held {
    path: PathBuf,
    /// Keeps a loop device attached to its file while dbio runs.
    file: File,
    identity: Identity,
}

/// The devices this process claimed, by the path they were claimed by.
static HELD: Mutex<Vec<Arc<Held>>> = Mutex::new(Vec::new());

/// The device this process claimed at `path` before, if any.
pub fn held(path: &Path) -> Option<Arc<Held>> {
    let all = HELD.lock().unwrap_or_else(|e| e.into_inner());
    all.iter().find(|h| h.path == path).cloned()
}

/// Takes the identity of the device at `path`, open as `opened` (checked by the claim),
/// and holds the device for the rest of the process.
pub fn hold(path: &Path, opened: &File) -> Result<Arc<Held>, String> {
    let identity = Identity::of(opened).map_err(|e| format!("cannot tell what it is: {e}"))?;
    let file = File::open(path).map_err(|e| format!("cannot open it again: {e}"))?;
    let again = Identity::of(&file).map_err(|e| format!("cannot tell what it is: {e}"))?;
    let changed = identity.differences(&again);
    if !changed.is_empty() {
        return Err(format!(
            "it changed while dbio checked it: {}",
            changed.join("; ")
        ));
    }
    let held = Arc::new(Held {
        path: path.to_path_buf(),
        file,
        identity,
    });
    HELD.lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(held.clone());
    Ok(held)
}

impl Held {
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    fn changed(&self, what: Vec<String>) -> Changed {
        Changed {
            path: self.path.clone(),
            what,
        }
    }

    /// Whether `file`, open on the device, is what was claimed (the differences if not).
    pub fn same(&self, file: &File) -> Result<(), Changed> {
        let now = Identity::of(file).map_err(|e| {
            self.changed(vec![format!("whether it is the same cannot be told ({e})")])
        })?;
        let what = self.identity.differences(&now);
        if what.is_empty() {
            Ok(())
        } else {
            Err(self.changed(what))
        }
    }

    /// Right before a step that hands the device's path to a program (`mkfs`): the path
    /// still names the claimed device, and the device is still what it was.
    pub fn prove(&self) -> Result<(), Changed> {
        let md = std::fs::metadata(&self.path)
            .map_err(|e| self.changed(vec![format!("it cannot be reached by its name ({e})")]))?;
        if !md.file_type().is_block_device() || md.rdev() != self.identity.rdev {
            return Err(self.changed(vec![format!(
                "its name now leads to {} (it was the block device {})",
                if md.file_type().is_block_device() {
                    format!("the block device {}", devno(md.rdev()))
                } else {
                    "something that is no block device".to_string()
                },
                devno(self.identity.rdev)
            )]));
        }
        self.same(&self.file)
    }

    /// The one way a claimed device is opened for writing: `open` opens its path (with
    /// the flags the step needs), then what was opened is proved to be the claimed device,
    /// as it was — so the proof and the writes are about the same open device.
    pub fn open_for_writing(
        &self,
        open: impl FnOnce(&Path) -> crate::error::Result<File>,
    ) -> crate::error::Result<File> {
        // A change is a failure (exit 1): the device was fine when it was claimed.
        self.prove().map_err(crate::error::Error::other)?;
        let file = open(&self.path)?;
        self.same(&file).map_err(crate::error::Error::other)?;
        Ok(file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn looped(ino: u64, offset: u64, sizelimit: u64, flags: u32) -> Identity {
        Identity {
            rdev: libc::makedev(7, 3),
            size: 400 * MIB,
            logical_block: 512,
            kind: Kind::Loop(Some(Bound {
                backing: Backing::File {
                    dev: libc::makedev(254, 1),
                    ino,
                },
                offset,
                sizelimit,
                flags,
                file_name: format!("/work/{ino}.img"),
            })),
        }
    }

    #[test]
    fn a_loop_device_attached_elsewhere_is_named_in_words() {
        let a = looped(1234, 0, 0, 0);
        assert!(a.differences(&a.clone()).is_empty());
        // The same file by another name: no change.
        let mut renamed = a.clone();
        if let Kind::Loop(Some(b)) = &mut renamed.kind {
            b.file_name = "/work/moved.img".into();
        }
        assert!(a.differences(&renamed).is_empty());
        assert_eq!(
            a.differences(&looped(5678, 0, 0, 0)),
            [
                "its backing file changed (/work/1234.img (device 254:1 inode 1234) → /work/5678.img (device 254:1 inode 5678))"
            ]
        );
        assert_eq!(
            a.differences(&looped(1234, MIB, 0, 0)),
            ["its offset in the backing file changed (0 → 1048576 bytes)"]
        );
        assert_eq!(
            a.differences(&looped(1234, 0, 380 * MIB, 0)),
            ["its size limit changed (none → 398458880 bytes)"]
        );
        let detached = a.differences(&looped(1234, 0, 0, 4));
        assert_eq!(detached.len(), 1);
        assert!(
            detached[0]
                .starts_with("its loop flags changed (none → autoclear): someone detached it"),
            "{detached:?}"
        );
        let mut unbound = a.clone();
        unbound.kind = Kind::Loop(None);
        unbound.size = 0;
        let d = a.differences(&unbound);
        assert_eq!(
            d[0],
            "it is no longer attached to a backing file (someone detached it)"
        );
        assert!(d[1].starts_with("its size changed (419430400 bytes, 400.0 MiB → 0 bytes"));
        assert_eq!(
            unbound.differences(&a)[0],
            "it is attached to /work/1234.img (device 254:1 inode 1234) now"
        );
        // Several at once, each said.
        let mut b = looped(5678, MIB, 0, 0);
        b.logical_block = 4096;
        assert_eq!(a.differences(&b).len(), 3);
        let c = Changed {
            path: "/dev/loop3".into(),
            what: a.differences(&looped(5678, 0, 0, 0)),
        };
        assert_eq!(
            c.to_string(),
            "/dev/loop3 is no longer the device dbio claimed: its backing file changed (/work/1234.img (device 254:1 inode 1234) → /work/5678.img (device 254:1 inode 5678)); the run stops and touches nothing further"
        );
        assert_eq!(
            a.storage(),
            "the backing file /work/1234.img (device 254:1 inode 1234) from byte 0"
        );
    }

    #[test]
    fn partitions_mappers_and_disks_compare_what_places_their_bytes() {
        let part = |start, sectors| Identity {
            rdev: libc::makedev(8, 1),
            size: sectors * 512,
            logical_block: 512,
            kind: Kind::Partition {
                disk: libc::makedev(8, 0),
                start,
                sectors,
            },
        };
        let d = part(2048, 4096).differences(&part(4096, 4096));
        assert_eq!(
            d,
            [
                "its start on the disk changed (sector 2048 → 4096: the partition table was rewritten)"
            ]
        );
        assert_eq!(part(2048, 4096).differences(&part(2048, 8192)).len(), 2);
        let dm = |table: Option<&str>| Identity {
            rdev: libc::makedev(253, 0),
            size: MIB,
            logical_block: 512,
            kind: Kind::Mapper {
                name: "vg-lv".into(),
                uuid: "LVM-x".into(),
                table: table.map(normal_table),
            },
        };
        let one = dm(Some("0 2048 linear 8:2 0\n"));
        assert!(
            one.differences(&dm(Some("0  2048 linear 8:2 0")))
                .is_empty()
        );
        assert_eq!(
            one.differences(&dm(Some("0 2048 linear 8:2 4096"))),
            ["its device-mapper table changed (0 2048 linear 8:2 0 → 0 2048 linear 8:2 4096)"]
        );
        // A crypt target's key never reaches a message.
        let crypt = dm(Some("0 2048 crypt aes-xts-plain64 deadbeefcafe 0 8:2 4096"));
        let said = one.differences(&crypt).join(" ");
        assert!(!said.contains("deadbeef"), "{said}");
        assert!(said.contains("0 2048 crypt 8:2"), "{said}");
        assert!(one.differences(&dm(None))[0].contains("can no longer be read"));
        let disk = |id: Option<&str>| Identity {
            rdev: libc::makedev(8, 16),
            size: MIB,
            logical_block: 512,
            kind: Kind::Disk {
                id: id.map(str::to_string),
            },
        };
        assert!(
            disk(Some("naa.1"))
                .differences(&disk(Some("naa.1")))
                .is_empty()
        );
        assert!(disk(Some("naa.1")).differences(&disk(Some("naa.2")))[0].contains("another disk"));
        assert_eq!(
            disk(None).differences(&part(0, 2048))[0],
            "it is another device now (8:16 → 8:1)"
        );
        assert_eq!(
            disk(None).differences(&part(0, 2048))[1],
            "it is a partition now, not a disk"
        );
    }

    #[test]
    fn sysfs_says_what_a_device_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        let link = |devno: &str, to: &str| {
            std::fs::create_dir_all(root.join("sys/dev/block")).unwrap();
            std::os::unix::fs::symlink(root.join(to), root.join("sys/dev/block").join(devno))
                .unwrap();
        };
        write("sys/devices/pci/block/sda/dev", "8:0\n");
        write("sys/devices/pci/block/sda/device/wwid", "naa.600a0b80\n");
        write("sys/devices/pci/block/sda/sda1/dev", "8:1\n");
        write("sys/devices/pci/block/sda/sda1/partition", "1\n");
        write("sys/devices/pci/block/sda/sda1/start", "2048\n");
        write("sys/devices/pci/block/sda/sda1/size", "4096\n");
        write("sys/devices/virtual/block/dm-0/dev", "253:0\n");
        write("sys/devices/virtual/block/dm-0/dm/name", "vg-lv\n");
        write("sys/devices/virtual/block/dm-0/dm/uuid", "LVM-abc\n");
        link("8:0", "sys/devices/pci/block/sda");
        link("8:1", "sys/devices/pci/block/sda/sda1");
        link("253:0", "sys/devices/virtual/block/dm-0");
        let sys = SysRoot::at(root);
        let none = |_: u64| None;
        match kind_in_sysfs(&sys, libc::makedev(8, 1), &none).unwrap() {
            Kind::Partition {
                disk,
                start,
                sectors,
            } => assert_eq!((disk, start, sectors), (libc::makedev(8, 0), 2048, 4096)),
            k => panic!("{k:?}"),
        }
        match kind_in_sysfs(&sys, libc::makedev(8, 0), &none).unwrap() {
            Kind::Disk { id } => assert_eq!(id.as_deref(), Some("naa.600a0b80")),
            k => panic!("{k:?}"),
        }
        let table =
            |d: u64| (d == libc::makedev(253, 0)).then(|| normal_table("0 8 linear 8:1 0\n"));
        match kind_in_sysfs(&sys, libc::makedev(253, 0), &table).unwrap() {
            Kind::Mapper { name, uuid, table } => {
                assert_eq!((name.as_str(), uuid.as_str()), ("vg-lv", "LVM-abc"));
                assert_eq!(table.as_deref(), Some("0 8 linear 8:1 0"));
            }
            k => panic!("{k:?}"),
        }
        assert!(kind_in_sysfs(&sys, libc::makedev(9, 9), &none).is_err());
    }

    #[test]
    fn the_kernel_encoding_of_device_numbers_is_read() {
        // huge_encode_dev(MKDEV(259, 300)): minor's low byte, major, then minor's high bits.
        let (major, minor) = (259u64, 300u64);
        let enc = (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12);
        assert_eq!(decode_dev(enc), libc::makedev(259, 300));
    }
}
