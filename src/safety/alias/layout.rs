//! How a block device maps storage: down through partitions, loop devices and device-mapper
//! tables to a disk, or to a file by device and inode.

use std::collections::BTreeSet;

use crate::storage::sysfs::{SysRoot, parse_mountinfo};

use super::{Backing, Extent, Machine, Store};

/// Devices deeper than this are a loop of layers, not a stack.
const MAX_DEPTH: usize = 16;

/// The storage a device maps, in its own byte order when `exact` (a concatenation: a
/// partition, a loop device, linear device-mapper segments), or only which storage it
/// touches (striped, RAID, anything else: every lower device whole).
#[derive(Debug, Clone, Default)]
pub struct Mapping {
    pub extents: Vec<Extent>,
    pub exact: bool,
}

impl Mapping {
    /// Bytes `start..start+len` of this device, in the storage below it.
    fn slice(&self, start: u64, len: u64) -> Mapping {
        if !self.exact {
            return self.clone();
        }
        let end = start.saturating_add(len);
        let mut out = Vec::new();
        let mut at = 0u64;
        for e in &self.extents {
            let n = e.end.saturating_sub(e.start);
            let (s, t) = (start.max(at), end.min(at.saturating_add(n)));
            if s < t {
                out.push(Extent {
                    start: e.start + (s - at),
                    end: e.start.saturating_add(t - at),
                    ..e.clone()
                });
            }
            at = at.saturating_add(n);
        }
        Mapping {
            extents: out,
            exact: true,
        }
    }
}

/// Reads the layout of block devices.
pub struct Layout<'a, M: Machine> {
    pub sys: &'a SysRoot,
    pub machine: &'a M,
}

fn last(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

fn parent(p: &str) -> &str {
    p.rsplit_once('/').map_or("", |(a, _)| a)
}

pub fn parse_devno(s: &str) -> Option<u64> {
    let (ma, mi) = s.trim().split_once(':')?;
    Some(libc::makedev(ma.parse().ok()?, mi.parse().ok()?))
}

fn devno_str(d: u64) -> String {
    format!("{}:{}", libc::major(d), libc::minor(d))
}

impl<M: Machine> Layout<'_, M> {
    /// The device's directory under sys/devices, relative to the root.
    pub(super) fn dir(&self, name: &str) -> Option<String> {
        self.sys.resolve(&format!("sys/class/block/{name}"))
    }

    /// The kernel name of device number `devno`.
    pub fn name_of(&self, devno: u64) -> Option<String> {
        let dir = self
            .sys
            .resolve(&format!("sys/dev/block/{}", devno_str(devno)))?;
        Some(last(&dir).to_string())
    }

    pub fn devno(&self, name: &str) -> Option<u64> {
        parse_devno(&self.sys.read(&format!("{}/dev", self.dir(name)?))?)
    }

    /// Every block device, disks and partitions, by kernel name.
    pub fn all(&self) -> Vec<String> {
        self.sys.list("sys/class/block")
    }

    /// What `name` maps, and every device passed on the way down (into `chain`).
    pub fn mapping(
        &self,
        name: &str,
        depth: usize,
        chain: &mut BTreeSet<String>,
    ) -> Result<Mapping, String> {
        if depth > MAX_DEPTH {
            return Err(format!(
                "more than {MAX_DEPTH} layers of devices under it (a loop?)"
            ));
        }
        chain.insert(name.to_string());
        let dir = self
            .dir(name)
            .ok_or_else(|| format!("/sys/class/block/{name} is missing"))?;
        let at = |rel: &str| format!("{dir}/{rel}");
        let bytes = self
            .sys
            .read_u64(&at("size"))
            .unwrap_or(0)
            .saturating_mul(512);
        if self.sys.exists(&at("partition")) {
            let disk = last(parent(&dir)).to_string();
            let start = self
                .sys
                .read_u64(&at("start"))
                .ok_or_else(|| format!("/sys/class/block/{name}/start cannot be read"))?
                .saturating_mul(512);
            let below = self.mapping(&disk, depth + 1, chain)?;
            return Ok(below.slice(start, bytes));
        }
        if self.sys.exists(&at("loop")) {
            if !self.sys.exists(&at("loop/backing_file")) {
                return Ok(Mapping::default()); // detached: maps nothing
            }
            let st = self
                .machine
                .loop_status(self.sys, name)
                .ok_or_else(|| format!("what loop device {name} is attached to cannot be read"))?;
            // Without a size limit, a loop device grows with its file (`losetup -c`).
            let len = if st.sizelimit == 0 {
                u64::MAX
            } else {
                st.sizelimit
            };
            return match st.backing {
                Backing::File { dev, ino } => Ok(Mapping {
                    extents: vec![Extent {
                        store: Store::File { dev, ino },
                        start: st.offset,
                        end: st.offset.saturating_add(len),
                        label: st.file_name,
                    }],
                    exact: true,
                }),
                Backing::Block(devno) => {
                    let below = self.name_of(devno).ok_or_else(|| {
                        format!(
                            "loop device {name} is attached to device {}, which /sys does not show",
                            devno_str(devno)
                        )
                    })?;
                    Ok(self
                        .mapping(&below, depth + 1, chain)?
                        .slice(st.offset, len))
                }
            };
        }
        let slaves = self.sys.list(&at("slaves"));
        if !slaves.is_empty() {
            if self.sys.exists(&at("dm"))
                && let Some(segments) = self
                    .machine
                    .dm_table(self.sys, name)
                    .and_then(|t| linear_segments(&t))
            {
                let mut out = Vec::new();
                for (devno, offset, len) in segments {
                    let below = self.name_of(devno).ok_or_else(|| {
                        format!(
                            "the table of {name} maps device {}, which /sys does not show",
                            devno_str(devno)
                        )
                    })?;
                    let m = self.mapping(&below, depth + 1, chain)?;
                    if !m.exact {
                        return self.whole(&slaves, depth, chain);
                    }
                    out.extend(m.slice(offset, len).extents);
                }
                return Ok(Mapping {
                    extents: out,
                    exact: true,
                });
            }
            return self.whole(&slaves, depth, chain);
        }
        let devno = self
            .sys
            .read(&at("dev"))
            .and_then(|d| parse_devno(&d))
            .ok_or_else(|| format!("/sys/class/block/{name}/dev cannot be read"))?;
        let wwid = ["device/wwid", "wwid"]
            .iter()
            .find_map(|r| self.sys.read(&at(r)))
            .filter(|w| !w.is_empty());
        let label = match &wwid {
            Some(w) => format!("/dev/{name}, WWID {w}"),
            None => format!("/dev/{name}"),
        };
        Ok(Mapping {
            extents: vec![Extent {
                store: wwid.map_or(Store::Disk(devno), Store::Lun),
                start: 0,
                end: bytes,
                label,
            }],
            exact: true,
        })
    }

    /// Every lower device whole: which storage a layer touches, not where.
    fn whole(
        &self,
        slaves: &[String],
        depth: usize,
        chain: &mut BTreeSet<String>,
    ) -> Result<Mapping, String> {
        let mut out = Vec::new();
        for s in slaves {
            out.extend(self.mapping(s, depth + 1, chain)?.extents);
        }
        Ok(Mapping {
            extents: out,
            exact: false,
        })
    }

    /// Where device `devno` is mounted or used as swap.
    fn mounted(&self, devno: u64) -> Option<String> {
        let text = self.sys.read("proc/self/mountinfo").unwrap_or_default();
        for m in parse_mountinfo(&text) {
            let by_source =
                m.source.starts_with('/') && self.machine.block_devno(&m.source) == Some(devno);
            if parse_devno(&m.dev) == Some(devno) || by_source {
                return Some(format!("is mounted at {}", m.mount_point));
            }
        }
        let swaps = self.sys.read("proc/swaps").unwrap_or_default();
        swaps.lines().skip(1).find_map(|l| {
            let dev = l.split_whitespace().next()?;
            (self.machine.block_devno(dev) == Some(devno))
                .then(|| format!("is in use as swap ({dev})"))
        })
    }

    /// Why device `name` is in use, if it is. `chain` holds the target and the devices
    /// under it. One of those held by the target's own layers (a volume group's physical
    /// volume) is shared with their siblings, which are judged by what they map; any other
    /// holder (a multipath or device-mapper device over a partition's disk) is a user. A
    /// disk with partitions is claimed whenever one of them is, so only its own use counts.
    pub(super) fn in_use(
        &self,
        name: &str,
        devno: u64,
        chain: &BTreeSet<String>,
    ) -> Option<String> {
        if let Some(m) = self.mounted(devno) {
            return Some(m);
        }
        let lower = chain.contains(name);
        let dir = self.dir(name)?;
        let holders = self.sys.list(&format!("{dir}/holders"));
        let has_parts = self
            .sys
            .list(&dir)
            .iter()
            .any(|p| self.sys.exists(&format!("{dir}/{p}/partition")));
        let shared = lower && holders.iter().any(|h| chain.contains(h));
        if !shared && !holders.is_empty() {
            return Some(format!(
                "is in use by {} (see /sys/class/block/{name}/holders)",
                holders.join(", ")
            ));
        }
        if let Some(user) = self.machine.device_opened_by(devno) {
            return Some(user.to_string());
        }
        if !lower && !has_parts && self.machine.claimed(name) {
            return Some(
                "is claimed by another program (opening it exclusively fails with EBUSY)".into(),
            );
        }
        None
    }
}

/// The linear segments of a device-mapper table (`start len linear maj:min offset`, in
/// 512-byte sectors), in order, as (device, byte offset, byte length); None when the table
/// has any other kind of target (striped, crypt, thin, ...: mapped as whole devices).
pub fn linear_segments(table: &str) -> Option<Vec<(u64, u64, u64)>> {
    let mut segs: Vec<(u64, u64, u64, u64)> = Vec::new();
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() != 5 || f[2] != "linear" {
            return None;
        }
        let start: u64 = f[0].parse().ok()?;
        let len: u64 = f[1].parse().ok()?;
        let dev = parse_devno(f[3])?;
        let off: u64 = f[4].parse().ok()?;
        segs.push((start, dev, off.checked_mul(512)?, len.checked_mul(512)?));
    }
    segs.sort();
    // Contiguous from sector 0, or the order of bytes is not what the lines say.
    let mut at = 0u64;
    for s in &segs {
        if s.0.checked_mul(512)? != at {
            return None;
        }
        at += s.3;
    }
    (!segs.is_empty()).then(|| segs.into_iter().map(|s| (s.1, s.2, s.3)).collect())
}
