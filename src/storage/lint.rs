//! Configuration findings about the storage stack, each with its reason: what is set, why it
//! matters to a database, and what to do.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::map::{BlockNode, StorageMap};
use super::sysfs::SysRoot;

/// One configuration finding: what is set, why it matters to a database, what to do.
/// result.json carries them as `lint`, `dbio map --json` as `lint`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// Short rule name, e.g. "max_sectors_kb".
    pub rule: String,
    /// "warning" or "info".
    pub severity: String,
    /// Device or file the finding is about.
    pub subject: String,
    pub message: String,
}

/// Everything a finding may depend on besides the map.
pub struct LintContext {
    /// The database block size of the data set, when known.
    pub block_size: Option<u64>,
    /// NUMA nodes of the CPUs dbio may run on (empty when unknown).
    pub run_nodes: BTreeSet<i64>,
}

impl LintContext {
    /// The context of this process on the running system.
    pub fn current(sys: &SysRoot, block_size: Option<u64>) -> LintContext {
        LintContext {
            block_size,
            run_nodes: cpu_nodes(sys, &allowed_cpus()),
        }
    }
}

fn finding(rule: &str, severity: &str, subject: &str, message: String) -> Finding {
    Finding {
        rule: rule.into(),
        severity: severity.into(),
        subject: subject.into(),
        message,
    }
}

/// The findings for `map`, most important first.
pub fn lint(map: &StorageMap, ctx: &LintContext) -> Vec<Finding> {
    let mut out = Vec::new();
    if map.memory_backed {
        out.push(finding(
            "memory_backed",
            "warning",
            &map.path,
            format!(
                "{} is memory-backed ({}): reads and writes never reach storage, so results say nothing about a disk; put the data set on the storage you want to measure",
                map.path,
                map.mount
                    .as_ref()
                    .map(|m| m.fs_type.clone())
                    .unwrap_or_else(|| "RAM disk".into())
            ),
        ));
    }
    let devices = map.all_devices();
    if let (Some(bs), Some(top)) = (ctx.block_size, devices.first())
        && let Some(lbs) = top.queue.logical_block_size
        && bs < lbs
    {
        out.push(finding(
            "block_size",
            "warning",
            &top.name,
            format!(
                "the database block size {bs} is below the device's logical block size {lbs}: every block write is a read-modify-write of a larger sector (or fails with O_DIRECT); use a block size of at least {lbs}"
            ),
        ));
    }
    for n in &devices {
        lint_node(n, ctx, &mut out);
    }
    out
}

fn lint_node(n: &BlockNode, ctx: &LintContext, out: &mut Vec<Finding>) {
    let q = &n.queue;
    if n.layer != "partition"
        && let Some(kb) = q.max_sectors_kb
        && kb < 1024
    {
        let hw = q
            .max_hw_sectors_kb
            .map(|h| format!(" (the hardware allows {h})"))
            .unwrap_or_default();
        out.push(finding(
            "max_sectors_kb",
            "warning",
            &n.name,
            format!(
                "max_sectors_kb is {kb}{hw}: 1 MiB multiblock reads and direct path writes are split into smaller requests; raise it to 1024 or more (echo 1024 > /sys/block/{}/queue/max_sectors_kb, and a udev rule to keep it)",
                n.name
            ),
        ));
    }
    if n.layer != "partition"
        && let Some(segs) = q.max_segments
        && segs * 4 < 1024
        && q.max_sectors_kb.is_none_or(|kb| kb >= 1024)
    {
        out.push(finding(
            "max_segments",
            "info",
            &n.name,
            format!(
                "max_segments is {segs}: a 1 MiB request in {segs} pieces of 4 KiB memory pages does not fit, so 1 MiB reads and writes whose buffers are not physically contiguous are split in two; the device sees more, smaller requests than the database issues"
            ),
        ));
    }
    if let Some(p) = &n.partition {
        let disk = n.lower.first();
        let pbs = disk
            .and_then(|d| d.queue.physical_block_size)
            .or(q.physical_block_size)
            .unwrap_or(512);
        let opt = disk
            .and_then(|d| d.queue.optimal_io_size)
            .or(q.optimal_io_size)
            .unwrap_or(0);
        if p.start_bytes % pbs != 0 {
            out.push(finding(
                "partition_alignment",
                "warning",
                &n.name,
                format!(
                    "partition starts at byte {} which is not a multiple of the physical block size {pbs}: every block straddles two physical blocks (read-modify-write on writes); recreate it starting at 1 MiB",
                    p.start_bytes
                ),
            ));
        } else if opt > 0 && p.start_bytes % opt != 0 {
            out.push(finding(
                "partition_alignment",
                "warning",
                &n.name,
                format!(
                    "partition starts at byte {} which is not a multiple of the optimal I/O size {opt} (the array's stripe or chunk): large requests cross stripe boundaries; align it to {opt}",
                    p.start_bytes
                ),
            ));
        }
    }
    if let Some(d) = &n.disk {
        let volatile_device = d
            .device_cache
            .as_deref()
            .is_some_and(|c| c.starts_with("write back"));
        let kernel_flushes = q.write_cache.as_deref() == Some("write back");
        if volatile_device && !kernel_flushes {
            out.push(finding(
                "write_cache",
                "warning",
                &n.name,
                format!(
                    "the device reports a volatile write cache ({}) but the kernel treats it as write through, so it sends no cache flushes: committed writes (redo, O_DSYNC) can be lost on power failure and latencies look better than they are; unless the cache is battery-backed, set /sys/block/{}/queue/write_cache to \"write back\"",
                    d.device_cache.as_deref().unwrap_or(""),
                    n.name
                ),
            ));
        } else if kernel_flushes && q.fua == Some(false) {
            out.push(finding(
                "write_cache",
                "info",
                &n.name,
                format!(
                    "volatile write cache without FUA: every O_DSYNC write (redo, data files in setall/directio) is followed by a separate cache flush of {}, which adds to log file parallel write",
                    n.name
                ),
            ));
        }
        if q.rotational == Some(false)
            && let Some(s) = &q.scheduler
            && s != "none"
            && s != "mq-deadline"
        {
            out.push(finding(
                "scheduler",
                "warning",
                &n.name,
                format!(
                    "I/O scheduler {s} on a non-rotational device: it adds CPU and latency per request for no gain on flash; use none or mq-deadline (echo none > /sys/block/{}/queue/scheduler)",
                    n.name
                ),
            ));
        }
        if let Some(node) = d.numa_node
            && !ctx.run_nodes.is_empty()
            && !ctx.run_nodes.contains(&node)
        {
            out.push(finding(
                "numa",
                "warning",
                &n.name,
                format!(
                    "{} hangs off an HBA/controller ({}) on NUMA node {node}, but dbio runs on CPUs of node(s) {}: every completion crosses the interconnect; run dbio (and the database) on node {node}, e.g. numactl --cpunodebind={node}",
                    n.name,
                    d.hba_pci.as_deref().unwrap_or("?"),
                    ctx.run_nodes
                        .iter()
                        .map(|x| x.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            ));
        }
    }
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: zeroed cpu_set_t is valid; sched_getaffinity fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// NUMA nodes of `cpus` (from the `nodeN` entry in each CPU's sysfs directory).
pub fn cpu_nodes(sys: &SysRoot, cpus: &[usize]) -> BTreeSet<i64> {
    cpus.iter()
        .filter_map(|c| {
            sys.list(&format!("sys/devices/system/cpu/cpu{c}"))
                .into_iter()
                .find_map(|e| e.strip_prefix("node").and_then(|n| n.parse::<i64>().ok()))
        })
        .collect()
}

/// One stderr line per finding.
pub fn line(l: &Finding) -> String {
    format!(
        "dbio: {} [{}] {}: {}",
        l.severity, l.rule, l.subject, l.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::map::tests::fixture;

    fn rules(case: &str, path: &str, dev: &str, bs: u64, nodes: &[i64]) -> Vec<(String, String)> {
        let ctx = LintContext {
            block_size: Some(bs),
            run_nodes: nodes.iter().copied().collect(),
        };
        lint(&fixture(case, path, dev), &ctx)
            .into_iter()
            .map(|l| (l.rule, l.subject))
            .collect()
    }

    fn has(v: &[(String, String)], rule: &str, subject: &str) -> bool {
        v.iter().any(|(r, s)| r == rule && s == subject)
    }

    #[test]
    fn small_max_sectors_and_remote_numa_node() {
        let v = rules("fc_mpath", "/u01", "253:0", 8192, &[0]);
        assert!(has(&v, "max_sectors_kb", "dm-0"), "{v:?}");
        assert!(has(&v, "max_sectors_kb", "sdb"), "{v:?}");
        assert!(has(&v, "numa", "sdb") && has(&v, "numa", "sdc"), "{v:?}");
        let v = rules("fc_mpath", "/u01", "253:0", 8192, &[1]);
        assert!(!v.iter().any(|(r, _)| r == "numa"), "{v:?}");
    }

    #[test]
    fn block_size_below_logical_block_and_scheduler_on_flash() {
        let v = rules("nvme", "/data", "259:1", 2048, &[0]);
        assert!(has(&v, "block_size", "nvme0n1p1"), "{v:?}");
        assert!(has(&v, "scheduler", "nvme0n1"), "{v:?}");
        assert!(has(&v, "max_sectors_kb", "nvme0n1"), "{v:?}");
        let v = rules("nvme", "/data", "259:1", 8192, &[0]);
        assert!(!has(&v, "block_size", "nvme0n1p1"), "{v:?}");
    }

    #[test]
    fn misaligned_partition() {
        let v = rules("md_raid", "/u03", "9:0", 8192, &[]);
        assert!(has(&v, "partition_alignment", "sdb1"), "{v:?}");
        assert!(!has(&v, "partition_alignment", "sdc1"), "{v:?}");
    }

    #[test]
    fn volatile_cache_treated_as_write_through() {
        // The iSCSI LUN is fine: write back with FUA.
        let v = rules("iscsi", "/u02", "8:0", 8192, &[]);
        assert!(!v.iter().any(|(r, _)| r == "write_cache"), "{v:?}");
        // The SATA SSD has a volatile cache; the kernel flushes it, but has no FUA.
        let v = rules("lvm_partition", "/u04", "253:1", 8192, &[]);
        assert!(has(&v, "write_cache", "sda"), "{v:?}");
        // The same disk with the kernel told "write through": no flushes at all.
        let mut m = fixture("lvm_partition", "/u04", "253:1");
        m.devices[0].lower[0].lower[0].queue.write_cache = Some("write through".into());
        let ctx = LintContext {
            block_size: None,
            run_nodes: BTreeSet::new(),
        };
        let found = lint(&m, &ctx);
        let w = found.iter().find(|l| l.rule == "write_cache").unwrap();
        assert_eq!(w.severity, "warning");
        assert!(w.message.contains("no cache flushes"), "{}", w.message);
    }

    #[test]
    fn memory_backed_target() {
        let m = StorageMap {
            path: "/dev/shm/x".into(),
            memory_backed: true,
            ..Default::default()
        };
        let ctx = LintContext {
            block_size: None,
            run_nodes: BTreeSet::new(),
        };
        assert_eq!(lint(&m, &ctx)[0].rule, "memory_backed");
    }
}
