//! Configuration findings about the storage stack, each with its reason: what is set, why it
//! matters to a database, and what to do.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::map::{BlockNode, QueueJson, StorageMap};
use super::sysfs::SysRoot;
use crate::units::size_label;

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
    /// Whose requests the device's request limits are judged against.
    pub requests: Requests,
}

/// Whose requests a device's request limits (max_sectors_kb, max_segments) are judged
/// against: a limit is a finding only when a request exceeds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requests {
    /// A database's in general (`dbio map`, the wizard): multiblock reads and direct path
    /// writes of up to 1 MiB.
    Database,
    /// A run's, not known until it has run (LGWR's writes grow with the commit rate): the
    /// run adds them at its end ([`request_limits`] with [`Requests::Run`]).
    Later,
    /// This run's: its largest request, in bytes.
    Run(u64),
}

/// The largest request a database issues, which [`Requests::Database`] judges against.
pub const DATABASE_REQUEST: u64 = 1 << 20;

impl LintContext {
    /// The context of this process on the running system.
    pub fn current(sys: &SysRoot, block_size: Option<u64>, requests: Requests) -> LintContext {
        LintContext {
            block_size,
            run_nodes: cpu_nodes(sys, &allowed_cpus()),
            requests,
        }
    }
}

/// The request limits of a queue that a request of `bytes` exceeds, in words
/// ("max_sectors_kb 128"): the block layer splits such a request. max_segments counts 4 KiB
/// memory pages, one segment each unless they happen to be physically contiguous.
pub fn limits_exceeded(q: &QueueJson, bytes: u64) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(kb) = q.max_sectors_kb
        && bytes > kb * 1024
    {
        out.push(format!("max_sectors_kb {kb}"));
    }
    if let Some(segs) = q.max_segments
        && bytes.div_ceil(4096) > segs
    {
        out.push(format!("max_segments {segs}"));
    }
    out
}

/// The findings about request limits of every device of `map` (but partitions, which show
/// their disk's) that `requests` exceed.
pub fn request_limits(map: &StorageMap, requests: Requests) -> Vec<Finding> {
    let mut out = Vec::new();
    for n in map.all_devices() {
        request_limits_of(n, requests, &mut out);
    }
    out
}

fn request_limits_of(n: &BlockNode, requests: Requests, out: &mut Vec<Finding>) {
    let q = &n.queue;
    let largest = match requests {
        Requests::Later => return,
        Requests::Database => DATABASE_REQUEST,
        Requests::Run(bytes) => bytes,
    };
    if n.layer == "partition" {
        return;
    }
    let exceeded = limits_exceeded(q, largest);
    if let Some(kb) = q.max_sectors_kb
        && exceeded.iter().any(|l| l.starts_with("max_sectors_kb"))
    {
        let hw = q
            .max_hw_sectors_kb
            .map(|h| format!(" (the hardware allows {h})"))
            .unwrap_or_default();
        let message = match requests {
            Requests::Run(bytes) => format!(
                "max_sectors_kb is {kb}{hw}: this run's requests of up to {} were split into requests of at most {kb} KiB, so the device saw more, smaller requests than dbio issued; raise it to {} or more (echo {} > /sys/block/{}/queue/max_sectors_kb, and a udev rule to keep it)",
                size_label(bytes),
                bytes.div_ceil(1024),
                bytes.div_ceil(1024).max(1024),
                n.name
            ),
            _ => format!(
                "max_sectors_kb is {kb}{hw}: 1 MiB multiblock reads and direct path writes are split into smaller requests; raise it to 1024 or more (echo 1024 > /sys/block/{}/queue/max_sectors_kb, and a udev rule to keep it)",
                n.name
            ),
        };
        out.push(finding("max_sectors_kb", "warning", &n.name, message));
    }
    // A request max_sectors_kb splits anyway: max_segments adds nothing to say.
    if let Some(segs) = q.max_segments
        && exceeded.iter().any(|l| l.starts_with("max_segments"))
        && exceeded.len() == 1
    {
        let message = match requests {
            Requests::Run(bytes) => format!(
                "max_segments is {segs}: this run's requests of up to {} take {} pages of 4 KiB, so those whose buffers are not physically contiguous were split; the device saw more, smaller requests than dbio issued",
                size_label(bytes),
                bytes.div_ceil(4096)
            ),
            _ => format!(
                "max_segments is {segs}: a 1 MiB request in {segs} pieces of 4 KiB memory pages does not fit, so 1 MiB reads and writes whose buffers are not physically contiguous are split in two; the device sees more, smaller requests than the database issues"
            ),
        };
        out.push(finding("max_segments", "info", &n.name, message));
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
    request_limits_of(n, ctx.requests, out);
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
    use crate::storage::probe::tests::fixture;

    fn rules(case: &str, path: &str, dev: &str, bs: u64, nodes: &[i64]) -> Vec<(String, String)> {
        let ctx = LintContext {
            block_size: Some(bs),
            run_nodes: nodes.iter().copied().collect(),
            requests: Requests::Database,
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
            requests: Requests::Database,
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
            requests: Requests::Database,
        };
        assert_eq!(lint(&m, &ctx)[0].rule, "memory_backed");
    }
}
