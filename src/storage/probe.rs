//! Reading the storage stack under a path ([`super::map::StorageMap`]) from sysfs and
//! procfs through a [`SysRoot`] (the running system, or a captured tree in tests).

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use super::map::{
    BlockNode, DiskJson, DmJson, FcJson, IscsiJson, LoopJson, MdJson, MountJson, NvmeJson,
    PartitionJson, QueueJson, StorageMap,
};
use super::sysfs::{self, SysRoot};

/// File systems whose data lives in memory.
const MEMORY_FS: &[&str] = &["tmpfs", "ramfs", "hugetlbfs", "devtmpfs"];

/// Maps `path` (a file, directory or block device) on the running system.
pub fn map_path(sys: &SysRoot, path: &Path) -> std::io::Result<StorageMap> {
    let real = std::fs::canonicalize(path)?;
    let md = std::fs::metadata(&real)?;
    let (kind, dev, block) = if md.file_type().is_block_device() {
        ("block_device", md.rdev(), true)
    } else if md.is_dir() {
        ("directory", md.dev(), false)
    } else {
        ("file", md.dev(), false)
    };
    let dev = format!("{}:{}", libc::major(dev), libc::minor(dev));
    Ok(map_with_dev(sys, &real, kind, &dev, block))
}

/// Maps `path` whose file system (or, for a block device, the device itself) is `dev`
/// ("major:minor"). Separate from [`map_path`] so captured trees can be mapped.
pub fn map_with_dev(sys: &SysRoot, path: &Path, kind: &str, dev: &str, block: bool) -> StorageMap {
    let mut map = StorageMap {
        path: path.display().to_string(),
        kind: kind.to_string(),
        ..Default::default()
    };
    let mounts = sysfs::parse_mountinfo(&sys.read("proc/self/mountinfo").unwrap_or_default());
    let mount = if block {
        mounts.iter().find(|m| m.dev == dev).cloned()
    } else {
        sysfs::find_mount(&mounts, path, dev).cloned()
    };
    let mut top = block_node_by_dev(sys, dev);
    if let Some(m) = &mount {
        map.memory_backed = MEMORY_FS.contains(&m.fs_type.as_str());
        if top.is_none() && !block && m.source.starts_with("/dev/") && sys.is_host() {
            // btrfs and others report an anonymous device; the mount source names the disk.
            if let Ok(smd) = std::fs::metadata(&m.source)
                && smd.file_type().is_block_device()
            {
                let d = smd.rdev();
                top = block_node_by_dev(sys, &format!("{}:{}", libc::major(d), libc::minor(d)));
            }
        }
        map.mount = Some(MountJson {
            mount_point: m.mount_point.clone(),
            fs_type: m.fs_type.clone(),
            source: m.source.clone(),
            options: m.options.clone(),
            dev: m.dev.clone(),
        });
    }
    match top {
        Some(n) => map.devices.push(n),
        None if map.memory_backed => map.notes.push(format!(
            "{} is a memory file system: no block device is under it, and nothing dbio measures there reaches storage",
            map.mount.as_ref().map(|m| m.fs_type.as_str()).unwrap_or("this")
        )),
        None => map.notes.push(format!(
            "no block device found for device {dev}{}",
            map.mount
                .as_ref()
                .map(|m| format!(" ({} from {})", m.fs_type, m.source))
                .unwrap_or_default()
        )),
    }
    if map
        .all_devices()
        .iter()
        .any(|n| n.disk.as_ref().is_some_and(|d| d.transport == "memory"))
    {
        map.memory_backed = true;
    }
    let loops: Vec<String> = map
        .all_devices()
        .iter()
        .filter_map(|n| {
            let l = n.loop_.as_ref()?;
            Some(format!(
                "{} is a loop device over the file {}: its I/O goes through that file's own file system (map it too)",
                n.name,
                l.backing_file.as_deref().unwrap_or("(unknown)")
            ))
        })
        .collect();
    map.notes.extend(loops);
    map
}

/// The block device "major:minor" and everything below it.
pub fn block_node_by_dev(sys: &SysRoot, dev: &str) -> Option<BlockNode> {
    let dir = sys.resolve(&format!("sys/dev/block/{dev}"))?;
    Some(block_node(sys, &dir, 0))
}

fn last(dir: &str) -> &str {
    dir.rsplit('/').next().unwrap_or(dir)
}

fn parent(dir: &str) -> &str {
    dir.rsplit_once('/').map(|(p, _)| p).unwrap_or("")
}

/// The node whose sysfs directory (resolved, relative to the root) is `dir`.
fn block_node(sys: &SysRoot, dir: &str, depth: usize) -> BlockNode {
    let name = last(dir).to_string();
    let at = |f: &str| format!("{dir}/{f}");
    let is_partition = sys.exists(&at("partition"));
    let layer = if name.starts_with("dm-") {
        "dm"
    } else if name.starts_with("md") && sys.exists(&at("md")) {
        "md"
    } else if is_partition {
        "partition"
    } else if name.starts_with("loop") {
        "loop"
    } else {
        "disk"
    };
    let disk_dir = if is_partition { parent(dir) } else { dir };
    let mut node = BlockNode {
        dev: sys.read(&at("dev")).unwrap_or_default(),
        size_bytes: sys.read_u64(&at("size")).unwrap_or(0) * 512,
        layer: layer.to_string(),
        queue: queue(sys, &format!("{disk_dir}/queue")),
        name,
        ..Default::default()
    };
    match layer {
        "dm" => {
            let uuid = sys.read(&at("dm/uuid")).unwrap_or_default();
            node.dm = Some(DmJson {
                name: sys.read(&at("dm/name")).unwrap_or_default(),
                kind: dm_kind(&uuid),
                uuid,
            });
        }
        "md" => {
            node.md = Some(MdJson {
                level: sys.read(&at("md/level")).unwrap_or_default(),
                chunk_bytes: sys.read_u64(&at("md/chunk_size")),
                raid_disks: sys.read_u64(&at("md/raid_disks")),
            })
        }
        "partition" => {
            let start = sys.read_u64(&at("start")).unwrap_or(0);
            node.partition = Some(PartitionJson {
                number: sys.read_u64(&at("partition")),
                start_sector: start,
                start_bytes: start * 512,
            });
        }
        "loop" => {
            node.loop_ = Some(LoopJson {
                backing_file: sys.read(&at("loop/backing_file")),
                offset_bytes: sys.read_u64(&at("loop/offset")),
                direct_io: sys.read(&at("loop/dio")).map(|v| v == "1"),
            });
            node.disk = Some(disk(sys, dir, &node.name));
        }
        _ => node.disk = Some(disk(sys, dir, &node.name)),
    }
    if depth > 16 {
        return node; // a loop in sysfs: never expected
    }
    if is_partition {
        node.lower.push(block_node(sys, parent(dir), depth + 1));
    } else {
        for slave in sys.list(&at("slaves")) {
            if let Some(sdir) = sys.resolve(&at(&format!("slaves/{slave}"))) {
                node.lower.push(block_node(sys, &sdir, depth + 1));
            }
        }
    }
    node
}

/// The device-mapper target type from the uuid prefix ("LVM-...", "mpath-...",
/// "CRYPT-LUKS2-...", "part1-mpath-..." for kpartx partitions).
pub fn dm_kind(uuid: &str) -> String {
    let prefix = uuid.split('-').next().unwrap_or("");
    if prefix.starts_with("part") && prefix[4..].chars().all(|c| c.is_ascii_digit()) {
        return "part".into();
    }
    match prefix {
        "LVM" | "mpath" | "CRYPT" | "VDO" | "stratis" => prefix.to_string(),
        "" => String::new(),
        other => other.to_string(),
    }
}

fn queue(sys: &SysRoot, q: &str) -> QueueJson {
    let r = |f: &str| sys.read(&format!("{q}/{f}"));
    let n = |f: &str| sys.read_u64(&format!("{q}/{f}"));
    QueueJson {
        scheduler: r("scheduler").map(|s| active_scheduler(&s)),
        nr_requests: n("nr_requests"),
        max_sectors_kb: n("max_sectors_kb"),
        max_hw_sectors_kb: n("max_hw_sectors_kb"),
        max_segments: n("max_segments"),
        logical_block_size: n("logical_block_size"),
        physical_block_size: n("physical_block_size"),
        minimum_io_size: n("minimum_io_size"),
        optimal_io_size: n("optimal_io_size"),
        write_cache: r("write_cache"),
        fua: n("fua").map(|v| v == 1),
        read_ahead_kb: n("read_ahead_kb"),
        rotational: n("rotational").map(|v| v == 1),
    }
}

/// "none [mq-deadline] kyber" → "mq-deadline"; "none" → "none".
pub fn active_scheduler(s: &str) -> String {
    match (s.find('['), s.find(']')) {
        (Some(a), Some(b)) if a < b => s[a + 1..b].to_string(),
        _ => s.split_whitespace().next().unwrap_or("").to_string(),
    }
}

fn is_pci_address(s: &str) -> bool {
    // dddd:bb:dd.f
    let b = s.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && s.chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

fn is_hctl(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Everything about one disk (a whole device at the bottom of the stack).
fn disk(sys: &SysRoot, dir: &str, name: &str) -> DiskJson {
    let at = |f: &str| format!("{dir}/{f}");
    let devpath = sys.resolve(&at("device")).unwrap_or_default();
    let comps: Vec<&str> = devpath.split('/').collect();
    let mut d = DiskJson {
        vendor: sys.read(&at("device/vendor")),
        model: sys.read(&at("device/model")),
        serial: sys
            .read(&at("device/serial"))
            .or_else(|| sys.read(&at("serial")))
            .or_else(|| vpd_serial(sys, &at("device/vpd_pg80"))),
        wwid: sys
            .read(&at("wwid"))
            .or_else(|| sys.read(&at("device/wwid"))),
        rotational: sys.read_u64(&at("queue/rotational")).map(|v| v == 1),
        device_cache: sys.read(&at("cache_type")),
        ..Default::default()
    };
    d.serial = d.serial.filter(|s| !s.is_empty());
    if let Some(hctl) = comps.last().filter(|c| is_hctl(c)) {
        d.scsi_address = Some(hctl.to_string());
        d.device_cache = sys
            .read(&format!("sys/class/scsi_disk/{hctl}/cache_type"))
            .or(d.device_cache);
    }
    let has = |prefix: &str| comps.iter().find(|c| c.starts_with(prefix)).copied();
    let nvme = sys.exists(&at("device/subsysnqn")) || name.starts_with("nvme");
    // The PCI function closest to the device: the HBA, NVMe controller or virtio device.
    let mut pci_path = devpath.clone();
    d.transport = if name.starts_with("loop") {
        "loop".into()
    } else if name.starts_with("zram") || name.starts_with("ram") || name.starts_with("pmem") {
        "memory".into()
    } else if nvme {
        let (ctrl, ctrl_dir) = nvme_controller(sys, &devpath);
        let read = |f: &str| {
            sys.read(&at(&format!("device/{f}")))
                .or_else(|| sys.read(&format!("{ctrl_dir}/{f}")))
        };
        d.model = d.model.or_else(|| read("model"));
        d.serial = d.serial.or_else(|| read("serial"));
        d.nvme = Some(NvmeJson {
            controller: ctrl,
            subsystem_nqn: read("subsysnqn"),
            transport: sys.read(&format!("{ctrl_dir}/transport")),
            address: sys
                .read(&format!("{ctrl_dir}/address"))
                .filter(|s| !s.is_empty()),
            firmware: read("firmware_rev"),
        });
        pci_path = ctrl_dir;
        "nvme".into()
    } else if let Some(rport) = has("rport-") {
        let host = has("host").unwrap_or("").to_string();
        let fh = |f: &str| sys.read(&format!("sys/class/fc_host/{host}/{f}"));
        let rp = |f: &str| sys.read(&format!("sys/class/fc_remote_ports/{rport}/{f}"));
        d.fc = Some(FcJson {
            local_wwpn: fh("port_name"),
            local_wwnn: fh("node_name"),
            port_state: fh("port_state"),
            speed: fh("speed"),
            rport: Some(rport.to_string()),
            remote_wwpn: rp("port_name"),
            remote_wwnn: rp("node_name"),
            remote_port_id: rp("port_id"),
            host,
        });
        "fc".into()
    } else if let Some(session) = comps.iter().find(|c| {
        c.strip_prefix("session")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|ch| ch.is_ascii_digit()))
    }) {
        let host = has("host").unwrap_or("");
        let s = |f: &str| sys.read(&format!("sys/class/iscsi_session/{session}/{f}"));
        let conn = format!("connection{}:0", &session["session".len()..]);
        let c = |f: &str| sys.read(&format!("sys/class/iscsi_connection/{conn}/{f}"));
        d.iscsi = Some(IscsiJson {
            session: session.to_string(),
            target_name: s("targetname"),
            address: c("persistent_address").or_else(|| c("address")),
            port: c("persistent_port").or_else(|| c("port")),
            initiator_name: sys
                .read(&format!("sys/class/iscsi_host/{host}/initiatorname"))
                .or_else(|| s("initiatorname")),
        });
        "iscsi".into()
    } else if has("virtio").is_some() {
        "virtio".into()
    } else if has("end_device-").is_some() || has("expander-").is_some() {
        "sas".into()
    } else if has("ata").is_some_and(|c| c[3..].chars().all(|ch| ch.is_ascii_digit())) {
        "sata".into()
    } else if has("usb").is_some() {
        "usb".into()
    } else if d.scsi_address.is_some() {
        "scsi".into()
    } else {
        "unknown".into()
    };
    let pci = pci_path
        .split('/')
        .rfind(|c| is_pci_address(c))
        .map(str::to_string);
    if let Some(p) = &pci {
        let pdir = &pci_path[..pci_path.find(p.as_str()).unwrap_or(0) + p.len()];
        d.numa_node = sys
            .read(&format!("{pdir}/numa_node"))
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|&n| n >= 0);
    }
    d.hba_pci = pci;
    d
}

/// The NVMe controller of a namespace: its `device` is the controller ("nvme0"), or with
/// native multipath the subsystem ("nvme-subsys0"), whose first controller is used.
fn nvme_controller(sys: &SysRoot, devpath: &str) -> (Option<String>, String) {
    let name = last(devpath);
    if name.starts_with("nvme-subsys") {
        for entry in sys.list(devpath) {
            let is_ctrl = entry
                .strip_prefix("nvme")
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
            if is_ctrl && let Some(cdir) = sys.resolve(&format!("{devpath}/{entry}")) {
                return (Some(entry), cdir);
            }
        }
        return (None, devpath.to_string());
    }
    (Some(name.to_string()), devpath.to_string())
}

/// The unit serial number from a SCSI VPD page 0x80: a 4-byte header, then ASCII.
fn vpd_serial(sys: &SysRoot, rel: &str) -> Option<String> {
    let bytes = std::fs::read(sys.path(rel)).ok()?;
    let len = usize::from(*bytes.get(3)?);
    let s = bytes.get(4..4 + len.min(bytes.len().saturating_sub(4)))?;
    let s = String::from_utf8_lossy(s).trim().to_string();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The map of `path` (on device `dev`) in the captured tree `case`.
    pub(crate) fn fixture(case: &str, path: &str, dev: &str) -> StorageMap {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/sysfs")
            .join(case);
        map_with_dev(&SysRoot::at(root), Path::new(path), "directory", dev, false)
    }

    #[test]
    fn fc_multipath_lun_through_two_hba_ports() {
        let m = fixture("fc_mpath", "/u01/oradata", "253:0");
        let mount = m.mount.as_ref().unwrap();
        assert_eq!(
            (mount.fs_type.as_str(), mount.mount_point.as_str()),
            ("xfs", "/u01")
        );
        let dm = &m.devices[0];
        assert_eq!((dm.name.as_str(), dm.layer.as_str()), ("dm-0", "dm"));
        let info = dm.dm.as_ref().unwrap();
        assert_eq!(
            (info.name.as_str(), info.kind.as_str()),
            ("mpatha", "mpath")
        );
        assert_eq!(dm.size_bytes, 209715200 * 512);
        assert_eq!(dm.lower.len(), 2);
        let (b, c) = (&dm.lower[0], &dm.lower[1]);
        assert_eq!((b.name.as_str(), c.name.as_str()), ("sdb", "sdc"));
        let d = b.disk.as_ref().unwrap();
        assert_eq!(d.transport, "fc");
        assert_eq!(d.vendor.as_deref(), Some("NETAPP"));
        assert_eq!(d.model.as_deref(), Some("LUN C-Mode"));
        assert_eq!(
            d.wwid.as_deref(),
            Some("naa.600a098038303053453f463045727a41")
        );
        assert_eq!(d.scsi_address.as_deref(), Some("1:0:0:1"));
        assert_eq!(d.hba_pci.as_deref(), Some("0000:3b:00.0"));
        assert_eq!(d.numa_node, Some(1));
        assert_eq!(d.device_cache.as_deref(), Some("write through"));
        let fc = d.fc.as_ref().unwrap();
        assert_eq!(fc.host, "host1");
        assert_eq!(fc.local_wwpn.as_deref(), Some("0x2100f4e9d4a1b2c3"));
        assert_eq!(fc.port_state.as_deref(), Some("Online"));
        assert_eq!(fc.rport.as_deref(), Some("rport-1:0-0"));
        assert_eq!(fc.remote_wwpn.as_deref(), Some("0x203500a098b3f6a1"));
        assert_eq!(fc.remote_port_id.as_deref(), Some("0x010b00"));
        let fc2 = c.disk.as_ref().unwrap().fc.as_ref().unwrap();
        assert_eq!(fc2.local_wwpn.as_deref(), Some("0x2100f4e9d4a1b2c4"));
        assert_eq!(
            c.disk.as_ref().unwrap().hba_pci.as_deref(),
            Some("0000:3b:00.1")
        );
        assert_eq!(b.queue.scheduler.as_deref(), Some("none"));
        assert_eq!(b.queue.max_sectors_kb, Some(512));
        assert_eq!(m.all_devices().len(), 3);
    }

    #[test]
    fn nvme_namespace_partition() {
        let m = fixture("nvme", "/data", "259:1");
        let p = &m.devices[0];
        assert_eq!(
            (p.name.as_str(), p.layer.as_str()),
            ("nvme0n1p1", "partition")
        );
        let part = p.partition.as_ref().unwrap();
        assert_eq!(
            (part.number, part.start_sector, part.start_bytes),
            (Some(1), 2048, 1 << 20)
        );
        // A partition shows its disk's queue.
        assert_eq!(p.queue.scheduler.as_deref(), Some("bfq"));
        let ns = &p.lower[0];
        assert_eq!(ns.name, "nvme0n1");
        let d = ns.disk.as_ref().unwrap();
        assert_eq!(d.transport, "nvme");
        assert_eq!(d.model.as_deref(), Some("SAMSUNG MZQL23T8HCLS-00A07"));
        assert_eq!(d.serial.as_deref(), Some("S64HNE0R812345"));
        assert_eq!(
            d.wwid.as_deref(),
            Some("eui.36344830528123450025384500000001")
        );
        assert_eq!(d.hba_pci.as_deref(), Some("0000:3d:00.0"));
        assert_eq!(d.numa_node, Some(0));
        assert_eq!(d.rotational, Some(false));
        let nv = d.nvme.as_ref().unwrap();
        assert_eq!(nv.controller.as_deref(), Some("nvme0"));
        assert_eq!(nv.transport.as_deref(), Some("pcie"));
        assert_eq!(nv.firmware.as_deref(), Some("GDC5602Q"));
        assert_eq!(
            nv.subsystem_nqn.as_deref(),
            Some("nqn.1994-11.com.samsung:nvme:PM9A3:2.5-inch:S64HNE0R812345")
        );
        assert_eq!(ns.queue.logical_block_size, Some(4096));
    }

    #[test]
    fn iscsi_session_lun() {
        let m = fixture("iscsi", "/u02", "8:0");
        let sda = &m.devices[0];
        assert_eq!((sda.name.as_str(), sda.layer.as_str()), ("sda", "disk"));
        let d = sda.disk.as_ref().unwrap();
        assert_eq!(d.transport, "iscsi");
        assert_eq!(d.vendor.as_deref(), Some("LIO-ORG"));
        assert_eq!(d.scsi_address.as_deref(), Some("3:0:0:0"));
        assert_eq!(d.hba_pci, None);
        let is = d.iscsi.as_ref().unwrap();
        assert_eq!(is.session, "session1");
        assert_eq!(
            is.target_name.as_deref(),
            Some("iqn.2003-01.org.linux-iscsi.storage1.x8664:sn.6a5b8c7d9e0f")
        );
        assert_eq!(is.address.as_deref(), Some("192.168.10.20"));
        assert_eq!(is.port.as_deref(), Some("3260"));
        assert_eq!(
            is.initiator_name.as_deref(),
            Some("iqn.1994-05.com.redhat:db01")
        );
        assert_eq!(sda.queue.fua, Some(true));
    }

    #[test]
    fn md_raid_over_partitions_of_sas_disks() {
        let m = fixture("md_raid", "/u03/redo", "9:0");
        let md = &m.devices[0];
        assert_eq!((md.name.as_str(), md.layer.as_str()), ("md0", "md"));
        let info = md.md.as_ref().unwrap();
        assert_eq!(info.level, "raid0");
        assert_eq!(info.chunk_bytes, Some(524288));
        assert_eq!(info.raid_disks, Some(2));
        let names: Vec<&str> = m.all_devices().iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["md0", "sdb1", "sdb", "sdc1", "sdc"]);
        let sdb1 = &md.lower[0];
        assert_eq!(sdb1.partition.as_ref().unwrap().start_sector, 63);
        let sdb = &sdb1.lower[0];
        let d = sdb.disk.as_ref().unwrap();
        assert_eq!(d.transport, "sas");
        assert_eq!(d.scsi_address.as_deref(), Some("0:0:0:0"));
        assert_eq!(d.hba_pci.as_deref(), Some("0000:02:00.0"));
        assert_eq!(sdb.queue.physical_block_size, Some(4096));
    }

    #[test]
    fn lvm_on_a_partition_of_a_sata_ssd() {
        let m = fixture("lvm_partition", "/u04", "253:1");
        let lv = &m.devices[0];
        let dm = lv.dm.as_ref().unwrap();
        assert_eq!(
            (dm.name.as_str(), dm.kind.as_str()),
            ("vg_ora-lv_redo", "LVM")
        );
        let sda2 = &lv.lower[0];
        assert_eq!(sda2.layer, "partition");
        assert_eq!(sda2.partition.as_ref().unwrap().number, Some(2));
        let sda = &sda2.lower[0];
        let d = sda.disk.as_ref().unwrap();
        assert_eq!(d.transport, "sata");
        assert_eq!(d.model.as_deref(), Some("Micron_5300_MTFD"));
        assert_eq!(d.numa_node, None, "-1 means no NUMA affinity");
        assert_eq!(d.device_cache.as_deref(), Some("write back"));
    }

    #[test]
    fn unknown_device_is_said_not_guessed() {
        let m = fixture("lvm_partition", "/u04", "253:99");
        assert!(m.devices.is_empty());
        assert!(m.notes[0].contains("253:99"), "{:?}", m.notes);
    }

    #[test]
    fn small_parsers() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber bfq"),
            "mq-deadline"
        );
        assert_eq!(active_scheduler("none"), "none");
        assert_eq!(active_scheduler("[none] mq-deadline"), "none");
        assert_eq!(dm_kind("LVM-abcdef"), "LVM");
        assert_eq!(dm_kind("mpath-3600a0980383"), "mpath");
        assert_eq!(dm_kind("CRYPT-LUKS2-1234-sda2_crypt"), "CRYPT");
        assert_eq!(dm_kind("part1-mpath-3600a"), "part");
        assert_eq!(dm_kind(""), "");
        assert!(is_pci_address("0000:3b:00.1"));
        assert!(!is_pci_address("pci0000:00"));
        assert!(is_hctl("2:0:0:1"));
        assert!(!is_hctl("target2:0:0"));
    }
}
