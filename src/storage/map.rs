//! The storage stack under a path, as `dbio map` shows it and `--json` writes it: the
//! mount and file system, every block layer (dm, md, partition) down to the disks, and for
//! each disk what a storage engineer needs to find it: vendor, model, serial/WWID, SCSI
//! address, transport, HBA, FC ports, NVMe subsystem, iSCSI target, and the queue settings.
//! Filled in by [`super::probe`]; drawn as text by `report::sections::storage`.

use serde::{Deserialize, Serialize};

/// The storage stack under one path.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StorageMap {
    pub path: String,
    /// "file", "directory" or "block_device".
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<MountJson>,
    /// The data lives in memory (tmpfs, ramfs, zram, brd): no storage is measured.
    pub memory_backed: bool,
    /// The block device under the path (one for a file system or a device), with the
    /// layers below it in `lower`.
    pub devices: Vec<BlockNode>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MountJson {
    pub mount_point: String,
    pub fs_type: String,
    pub source: String,
    pub options: String,
    /// "major:minor" of the file system.
    pub dev: String,
}

/// One block device and the devices it is built on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BlockNode {
    /// Kernel name: "dm-2", "md0", "sda1", "nvme0n1".
    pub name: String,
    /// "major:minor".
    pub dev: String,
    /// "dm", "md", "partition", "disk" or "loop".
    pub layer: String,
    pub size_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dm: Option<DmJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md: Option<MdJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<PartitionJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskJson>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "loop")]
    pub loop_: Option<LoopJson>,
    /// Queue settings (a partition shows its disk's).
    pub queue: QueueJson,
    /// The devices this one is built on (dm/md members, a partition's disk).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lower: Vec<BlockNode>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DmJson {
    /// The name under /dev/mapper.
    pub name: String,
    pub uuid: String,
    /// From the uuid prefix: "LVM", "mpath", "CRYPT", "part" (kpartx), ... or "" if none.
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MdJson {
    pub level: String,
    pub chunk_bytes: Option<u64>,
    pub raid_disks: Option<u64>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PartitionJson {
    pub number: Option<u64>,
    /// First sector, in 512-byte units as sysfs reports it.
    pub start_sector: u64,
    pub start_bytes: u64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct LoopJson {
    pub backing_file: Option<String>,
    pub offset_bytes: Option<u64>,
    /// The loop device itself issues direct I/O to its backing file.
    pub direct_io: Option<bool>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DiskJson {
    pub vendor: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwid: Option<String>,
    pub rotational: Option<bool>,
    /// "fc", "iscsi", "sas", "sata", "nvme", "virtio", "loop", "usb", "memory", "scsi", "unknown".
    pub transport: String,
    /// SCSI host:channel:target:lun.
    pub scsi_address: Option<String>,
    /// PCI address of the HBA / controller.
    pub hba_pci: Option<String>,
    pub numa_node: Option<i64>,
    /// What the device says about its volatile write cache ("write back", "write through").
    pub device_cache: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fc: Option<FcJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvme: Option<NvmeJson>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iscsi: Option<IscsiJson>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FcJson {
    /// Local port: the SCSI host of the HBA port.
    pub host: String,
    pub local_wwpn: Option<String>,
    pub local_wwnn: Option<String>,
    pub port_state: Option<String>,
    pub speed: Option<String>,
    /// Remote (target) port.
    pub rport: Option<String>,
    pub remote_wwpn: Option<String>,
    pub remote_wwnn: Option<String>,
    pub remote_port_id: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NvmeJson {
    pub controller: Option<String>,
    pub subsystem_nqn: Option<String>,
    /// "pcie", "tcp", "rdma", "fc", "loop".
    pub transport: Option<String>,
    pub address: Option<String>,
    pub firmware: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IscsiJson {
    pub session: String,
    pub target_name: Option<String>,
    pub address: Option<String>,
    pub port: Option<String>,
    pub initiator_name: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct QueueJson {
    /// The active I/O scheduler ("none", "mq-deadline", ...).
    pub scheduler: Option<String>,
    pub nr_requests: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    pub max_hw_sectors_kb: Option<u64>,
    /// Scatter-gather entries per request: with 4 KiB pages, a request over
    /// max_segments × 4 KiB may be split.
    pub max_segments: Option<u64>,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
    pub minimum_io_size: Option<u64>,
    pub optimal_io_size: Option<u64>,
    /// "write back" (volatile cache: the kernel sends flushes) or "write through".
    pub write_cache: Option<String>,
    /// The device accepts FUA writes (O_DSYNC needs no separate flush).
    pub fua: Option<bool>,
    pub read_ahead_kb: Option<u64>,
    pub rotational: Option<bool>,
}

impl BlockNode {
    /// This node and every node below it, top first, each device once.
    pub fn flatten(&self) -> Vec<&BlockNode> {
        let mut out: Vec<&BlockNode> = Vec::new();
        fn walk<'a>(n: &'a BlockNode, out: &mut Vec<&'a BlockNode>) {
            if !out.iter().any(|o| o.name == n.name) {
                out.push(n);
            }
            for l in &n.lower {
                walk(l, out);
            }
        }
        walk(self, &mut out);
        out
    }
}

impl StorageMap {
    /// Every block device under the path, top first, each once.
    pub fn all_devices(&self) -> Vec<&BlockNode> {
        let mut out: Vec<&BlockNode> = Vec::new();
        for d in &self.devices {
            for n in d.flatten() {
                if !out.iter().any(|o| o.name == n.name) {
                    out.push(n);
                }
            }
        }
        out
    }
}
