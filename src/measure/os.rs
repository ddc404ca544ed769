//! What the machine saw during the measured window, once a second: CPU (/proc/stat), the
//! block devices under the data set (/proc/diskstats, as iostat -x computes it), memory
//! (/proc/meminfo, /proc/vmstat), I/O pressure (/proc/pressure/io) and dbio's own CPU.
//!
//! The main thread calls [`OsSampler::sample`] where it closes each second: a few small
//! /proc reads, never in the I/O threads, no helper processes.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::sys::{self, now_ns};
use crate::warnings::{Mismatch, Traffic, Warning};

/// What the machine saw over the measured window, one row per second (and per CPU or
/// device where it applies). result.json carries it as `os`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OsStats {
    /// Per second: "all" plus one row per CPU ("cpu0", ...).
    pub cpu: Vec<CpuSecond>,
    /// Per second and block device under the data set (every layer).
    pub devices: Vec<DiskSecond>,
    pub memory: Vec<MemSecond>,
    /// /proc/pressure/io, when the kernel has PSI.
    pub io_pressure: Vec<PressureSecond>,
    /// dbio's own CPU use.
    pub dbio_cpu: Vec<ProcessCpuSecond>,
    /// dbio's completed requests against the device's, over the measured window.
    pub cross_check: Option<BlockLayerCheck>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct CpuSecond {
    pub t: u32,
    pub cpu: String,
    pub user_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
    pub steal_pct: f64,
    pub idle_pct: f64,
}

/// One second of one block device, as `iostat -x` shows it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct DiskSecond {
    pub t: u32,
    pub device: String,
    /// "dm", "md", "partition", "disk", "loop", ...
    pub layer: String,
    pub r_s: f64,
    pub w_s: f64,
    pub rmib_s: f64,
    pub wmib_s: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    pub aqu_sz: f64,
    pub util_pct: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct MemSecond {
    pub t: u32,
    pub free_mib: f64,
    pub dirty_mib: f64,
    pub writeback_mib: f64,
    pub pgpgin_kib_s: f64,
    pub pgpgout_kib_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct PressureSecond {
    pub t: u32,
    /// Share of the second in which some / all runnable tasks were stalled on I/O.
    pub some_pct: f64,
    pub full_pct: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ProcessCpuSecond {
    pub t: u32,
    pub user_pct: f64,
    pub system_pct: f64,
}

/// dbio's completed requests and bytes against the block layer's over the measured window:
/// the neighbours judgement (docs/outputs.md, "What the machine and the storage saw").
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct BlockLayerCheck {
    pub device: String,
    /// Requests dbio completed (in the directions it issued).
    pub dbio_requests: u64,
    /// Requests the device completed in the directions dbio issued (reads for a read test,
    /// writes for a write test, both for a mix).
    pub device_requests: u64,
    /// The device's work against dbio's in the measure that shows work that was not dbio's
    /// (`ratio_of`): when the device moved more than 10 % more bytes than dbio did, the
    /// largest of its bytes against dbio's in reads, in writes and in both; otherwise its
    /// requests against dbio's (in the directions dbio issued), which show requests split
    /// or merged.
    pub ratio: f64,
    /// Bytes both moved, in the directions dbio issued.
    #[serde(default)]
    pub dbio_bytes: u64,
    #[serde(default)]
    pub device_bytes: u64,
    /// What `ratio` compares: "read bytes", "write bytes", "bytes" (reads and writes
    /// together) or "requests" (empty in results of older dbio versions).
    #[serde(default)]
    pub ratio_of: String,
    /// Each direction apart, whether dbio issued it or not.
    #[serde(default)]
    pub reads: Counts,
    #[serde(default)]
    pub writes: Counts,
    /// The share of the device's bytes over the window that were not dbio's, in %.
    #[serde(default)]
    pub not_dbio_pct: f64,
    /// The window the counts cover, in seconds.
    #[serde(default)]
    pub seconds: f64,
}

/// One direction of the cross-check: dbio's completed requests and bytes, and the device's.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    pub dbio_requests: u64,
    pub dbio_bytes: u64,
    pub device_requests: u64,
    pub device_bytes: u64,
}

/// More than this much more (or less) of the device's work than dbio's, in %, is judged:
/// below it lie the few metadata and journal writes of the file system and the requests
/// completing at the window's edges.
pub const CROSS_CHECK_PCT: f64 = 10.0;

impl BlockLayerCheck {
    /// The check of `device` from both directions' counts over `seconds`, and what it finds:
    /// a [`Warning::Neighbour`] when the device moved more than [`CROSS_CHECK_PCT`] % more
    /// bytes than dbio (in reads and writes together, or in a direction dbio issued), else a
    /// [`Warning::BlockLayerMismatch`] when its requests differ by more than that or its
    /// bytes fall short. `split_by`: the device's request limits dbio's largest request
    /// (`largest`, bytes) exceeds, in words — the block layer splits such requests.
    pub fn judge(
        device: &str,
        reads: Counts,
        writes: Counts,
        seconds: f64,
        largest: u64,
        split_by: Vec<String>,
    ) -> (BlockLayerCheck, Option<Warning>) {
        let issued: Vec<&Counts> = [&reads, &writes]
            .into_iter()
            .filter(|c| c.dbio_requests > 0)
            .collect();
        let sum = |f: fn(&Counts) -> u64| issued.iter().map(|c| f(c)).sum::<u64>();
        let (dbio_requests, device_requests) =
            (sum(|c| c.dbio_requests), sum(|c| c.device_requests));
        let (dbio_bytes, device_bytes) = (sum(|c| c.dbio_bytes), sum(|c| c.device_bytes));
        let all_dbio = reads.dbio_bytes + writes.dbio_bytes;
        let all_device = reads.device_bytes + writes.device_bytes;
        let outside = reads.device_bytes.saturating_sub(reads.dbio_bytes)
            + writes.device_bytes.saturating_sub(writes.dbio_bytes);
        let over = |a: u64, b: u64| b as f64 > a as f64 * (1.0 + CROSS_CHECK_PCT / 100.0);
        let ratio_of = |a: u64, b: u64| if a > 0 { b as f64 / a as f64 } else { 0.0 };
        let mut check = BlockLayerCheck {
            device: device.to_string(),
            dbio_requests,
            device_requests,
            dbio_bytes,
            device_bytes,
            ratio: ratio_of(dbio_requests, device_requests),
            ratio_of: "requests".into(),
            reads,
            writes,
            not_dbio_pct: if all_device > 0 {
                100.0 * outside as f64 / all_device as f64
            } else {
                0.0
            },
            seconds,
        };
        if dbio_requests == 0 {
            return (check, None);
        }
        let mib_s = |b: u64| {
            if seconds > 0.0 {
                b as f64 / (1u64 << 20) as f64 / seconds
            } else {
                0.0
            }
        };
        let traffic = |c: &Counts| Traffic {
            device_mib_s: mib_s(c.device_bytes),
            dbio_mib_s: mib_s(c.dbio_bytes),
        };
        // Work that was not dbio's shows in bytes: in a direction dbio issued (its requests
        // may be split or merged, its bytes not), or in both together (another program's
        // writes beside a read test).
        if over(all_dbio, all_dbio + outside) {
            let mut best = ("bytes", ratio_of(all_dbio, all_device));
            for (c, name) in [(&reads, "read bytes"), (&writes, "write bytes")] {
                let r = ratio_of(c.dbio_bytes, c.device_bytes);
                if c.dbio_bytes > 0 && r >= best.1 {
                    best = (name, r);
                }
            }
            (check.ratio_of, check.ratio) = (best.0.to_string(), best.1);
            let w = Warning::Neighbour {
                device: device.to_string(),
                reads: traffic(&reads),
                writes: traffic(&writes),
                not_dbio_pct: check.not_dbio_pct,
            };
            return (check, Some(w));
        }
        let how = if over(device_bytes, dbio_bytes) {
            (check.ratio_of, check.ratio) = ("bytes".into(), ratio_of(dbio_bytes, device_bytes));
            Mismatch::FewerBytes
        } else if over(dbio_requests, device_requests) {
            if split_by.is_empty() {
                Mismatch::Smaller
            } else {
                Mismatch::Split {
                    largest,
                    limits: split_by,
                }
            }
        } else if over(device_requests, dbio_requests) {
            Mismatch::Merged
        } else {
            return (check, None);
        };
        let w = Warning::BlockLayerMismatch {
            device: device.to_string(),
            dbio_requests,
            device_requests,
            dbio_bytes,
            device_bytes,
            how,
        };
        (check, Some(w))
    }
}

/// Cumulative CPU time of one /proc/stat line, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTicks {
    pub user: u64,
    pub system: u64,
    pub iowait: u64,
    pub steal: u64,
    pub idle: u64,
    pub total: u64,
}

/// Parses the `cpu` and `cpuN` lines of /proc/stat. Nice counts as user, irq and softirq as
/// system (as top does); guest time is already inside user.
pub fn parse_stat(text: &str) -> Vec<(String, CpuTicks)> {
    text.lines()
        .filter(|l| l.starts_with("cpu"))
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let name = it.next()?;
            let v: Vec<u64> = it.take(8).map(|x| x.parse().unwrap_or(0)).collect();
            if v.len() < 4 {
                return None;
            }
            let g = |i: usize| v.get(i).copied().unwrap_or(0);
            let name = if name == "cpu" { "all" } else { name };
            Some((
                name.to_string(),
                CpuTicks {
                    user: g(0) + g(1),
                    system: g(2) + g(5) + g(6),
                    idle: g(3),
                    iowait: g(4),
                    steal: g(7),
                    total: v.iter().sum(),
                },
            ))
        })
        .collect()
}

/// Cumulative counters of one /proc/diskstats line.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiskCounters {
    pub reads: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
}

/// Parses /proc/diskstats (Documentation/admin-guide/iostats.rst): major minor name, then
/// reads, merged, sectors, ms, writes, merged, sectors, ms, in flight, io ms, weighted ms.
pub fn parse_diskstats(text: &str) -> HashMap<String, DiskCounters> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 14 {
                return None;
            }
            let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
            Some((
                f[2].to_string(),
                DiskCounters {
                    reads: n(3),
                    read_sectors: n(5),
                    read_ms: n(6),
                    writes: n(7),
                    write_sectors: n(9),
                    write_ms: n(10),
                    io_ticks_ms: n(12),
                    time_in_queue_ms: n(13),
                },
            ))
        })
        .collect()
}

/// A value in kB from /proc/meminfo ("Dirty:  638524 kB").
pub fn meminfo_kib(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(key)?.strip_prefix(':')?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// A counter from /proc/vmstat ("pgpgin 261717709").
pub fn vmstat(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

/// The `total=` microseconds of the "some" and "full" lines of /proc/pressure/io.
pub fn parse_pressure(text: &str) -> Option<(u64, u64)> {
    let total = |kind: &str| {
        text.lines()
            .find(|l| l.starts_with(kind))?
            .split_whitespace()
            .find_map(|f| f.strip_prefix("total="))?
            .parse::<u64>()
            .ok()
    };
    Some((total("some")?, total("full").unwrap_or(0)))
}

#[derive(Debug, Clone, Default)]
struct Snapshot {
    at_ns: u64,
    cpu: Vec<(String, CpuTicks)>,
    disks: HashMap<String, DiskCounters>,
    free_kib: u64,
    dirty_kib: u64,
    writeback_kib: u64,
    pgpgin: u64,
    pgpgout: u64,
    pressure: Option<(u64, u64)>,
    process_cpu: (f64, f64),
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

impl Snapshot {
    fn take() -> Snapshot {
        let mem = read("/proc/meminfo");
        let vm = read("/proc/vmstat");
        Snapshot {
            at_ns: now_ns(),
            cpu: parse_stat(&read("/proc/stat")),
            disks: parse_diskstats(&read("/proc/diskstats")),
            free_kib: meminfo_kib(&mem, "MemFree").unwrap_or(0),
            dirty_kib: meminfo_kib(&mem, "Dirty").unwrap_or(0),
            writeback_kib: meminfo_kib(&mem, "Writeback").unwrap_or(0),
            pgpgin: vmstat(&vm, "pgpgin").unwrap_or(0),
            pgpgout: vmstat(&vm, "pgpgout").unwrap_or(0),
            pressure: parse_pressure(&read("/proc/pressure/io")),
            process_cpu: sys::process_cpu_seconds(),
        }
    }
}

/// What to cross-check against the block layer: the device, and dbio's requests and bytes
/// over the window in each direction (`dbio_*` of [`Counts`]; the device's are filled in).
#[derive(Debug, Clone)]
pub struct CrossCheck {
    pub device: String,
    pub reads: Counts,
    pub writes: Counts,
    /// dbio's largest request, and the device's request limits it exceeds (in words).
    pub largest: u64,
    pub split_by: Vec<String>,
}

/// Samples the OS once a second over the measured window.
pub struct OsSampler {
    /// Block devices under the data set: (kernel name, layer).
    devices: Vec<(String, String)>,
    first: Snapshot,
    prev: Snapshot,
    os: OsStats,
}

/// The rates of one device between two snapshots, as iostat -x computes them.
pub fn disk_rates(
    t: u32,
    device: &str,
    layer: &str,
    a: &DiskCounters,
    b: &DiskCounters,
    secs: f64,
) -> DiskSecond {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let (reads, writes) = (d(a.reads, b.reads), d(a.writes, b.writes));
    let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    let mib = |sectors: f64| sectors * 512.0 / (1u64 << 20) as f64;
    DiskSecond {
        t,
        device: device.to_string(),
        layer: layer.to_string(),
        r_s: per_s(reads),
        w_s: per_s(writes),
        rmib_s: per_s(mib(d(a.read_sectors, b.read_sectors))),
        wmib_s: per_s(mib(d(a.write_sectors, b.write_sectors))),
        r_await_ms: if reads > 0.0 {
            d(a.read_ms, b.read_ms) / reads
        } else {
            0.0
        },
        w_await_ms: if writes > 0.0 {
            d(a.write_ms, b.write_ms) / writes
        } else {
            0.0
        },
        aqu_sz: per_s(d(a.time_in_queue_ms, b.time_in_queue_ms) / 1000.0),
        util_pct: (per_s(d(a.io_ticks_ms, b.io_ticks_ms) / 1000.0) * 100.0).min(100.0),
    }
}

impl OsSampler {
    /// Starts sampling now (the start of the measured window).
    pub fn start(devices: Vec<(String, String)>) -> OsSampler {
        let first = Snapshot::take();
        OsSampler {
            devices,
            prev: first.clone(),
            first,
            os: OsStats::default(),
        }
    }

    /// Closes second `t` of the window: the rates since the previous call.
    pub fn sample(&mut self, t: u32) {
        let now = Snapshot::take();
        let secs = now.at_ns.saturating_sub(self.prev.at_ns) as f64 / 1e9;
        let p = &self.prev;
        for (name, b) in &now.cpu {
            let Some((_, a)) = p.cpu.iter().find(|(n, _)| n == name) else {
                continue;
            };
            let total = b.total.saturating_sub(a.total) as f64;
            let pct = |x: u64, y: u64| {
                if total > 0.0 {
                    100.0 * y.saturating_sub(x) as f64 / total
                } else {
                    0.0
                }
            };
            self.os.cpu.push(CpuSecond {
                t,
                cpu: name.clone(),
                user_pct: pct(a.user, b.user),
                system_pct: pct(a.system, b.system),
                iowait_pct: pct(a.iowait, b.iowait),
                steal_pct: pct(a.steal, b.steal),
                idle_pct: pct(a.idle, b.idle),
            });
        }
        for (name, layer) in &self.devices {
            if let (Some(a), Some(b)) = (p.disks.get(name), now.disks.get(name)) {
                self.os.devices.push(disk_rates(t, name, layer, a, b, secs));
            }
        }
        let per_s = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
        self.os.memory.push(MemSecond {
            t,
            free_mib: now.free_kib as f64 / 1024.0,
            dirty_mib: now.dirty_kib as f64 / 1024.0,
            writeback_mib: now.writeback_kib as f64 / 1024.0,
            pgpgin_kib_s: per_s(now.pgpgin.saturating_sub(p.pgpgin) as f64),
            pgpgout_kib_s: per_s(now.pgpgout.saturating_sub(p.pgpgout) as f64),
        });
        if let (Some(a), Some(b)) = (p.pressure, now.pressure) {
            let us = secs * 1e6;
            let pct = |x: u64, y: u64| {
                if us > 0.0 {
                    (100.0 * y.saturating_sub(x) as f64 / us).min(100.0)
                } else {
                    0.0
                }
            };
            self.os.io_pressure.push(PressureSecond {
                t,
                some_pct: pct(a.0, b.0),
                full_pct: pct(a.1, b.1),
            });
        }
        self.os.dbio_cpu.push(ProcessCpuSecond {
            t,
            user_pct: per_s(100.0 * (now.process_cpu.0 - p.process_cpu.0)),
            system_pct: per_s(100.0 * (now.process_cpu.1 - p.process_cpu.1)),
        });
        self.prev = now;
    }

    /// The device's completed reads and writes (its requests and bytes in each [`Counts`])
    /// from the first to the last sample, and the seconds between them.
    pub fn device_totals(&self, device: &str) -> Option<(Counts, Counts, f64)> {
        let (a, b) = (self.first.disks.get(device)?, self.prev.disks.get(device)?);
        let d = |x: u64, y: u64| y.saturating_sub(x);
        let counts = |requests: u64, sectors: u64| Counts {
            device_requests: requests,
            device_bytes: 512 * sectors,
            ..Counts::default()
        };
        Some((
            counts(d(a.reads, b.reads), d(a.read_sectors, b.read_sectors)),
            counts(d(a.writes, b.writes), d(a.write_sectors, b.write_sectors)),
            self.prev.at_ns.saturating_sub(self.first.at_ns) as f64 / 1e9,
        ))
    }

    /// What was sampled, with the block-layer cross-check of the first of `checks` whose
    /// device was sampled that finds the most work not dbio's, and its warning.
    pub fn finish(mut self, checks: Vec<CrossCheck>) -> (OsStats, Option<Warning>) {
        let mut found: Option<(BlockLayerCheck, Option<Warning>)> = None;
        for c in checks {
            let Some((r, w, seconds)) = self.device_totals(&c.device) else {
                continue;
            };
            let with_dbio = |device: Counts, dbio: Counts| Counts {
                dbio_requests: dbio.dbio_requests,
                dbio_bytes: dbio.dbio_bytes,
                ..device
            };
            let (reads, writes) = (with_dbio(r, c.reads), with_dbio(w, c.writes));
            let judged =
                BlockLayerCheck::judge(&c.device, reads, writes, seconds, c.largest, c.split_by);
            if found
                .as_ref()
                .is_none_or(|f| judged.0.not_dbio_pct > f.0.not_dbio_pct)
            {
                found = Some(judged);
            }
        }
        let (check, warning) = found.map_or((None, None), |(c, w)| (Some(c), w));
        self.os.cross_check = check;
        (self.os, warning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_lines_parse() {
        let text = "cpu  115404 215 105837 2045963 69485 0 5320 1486 0 0\n\
                    cpu0 56761 111 50217 1031250 33811 0 93 705 0 0\n\
                    intr 12345 0 0\n";
        let v = parse_stat(text);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].0, "all");
        assert_eq!(v[0].1.user, 115404 + 215);
        assert_eq!(v[0].1.system, 105837 + 5320);
        assert_eq!(v[0].1.iowait, 69485);
        assert_eq!(v[0].1.steal, 1486);
        assert_eq!(v[1].0, "cpu0");
    }

    #[test]
    fn diskstats_give_iostat_figures() {
        let a = " 254       0 vda 1000 5 80000 2000 500 3 40000 1500 0 900 3500 0 0 0 0 0 0\n";
        let b = " 254       0 vda 3000 5 112000 6000 700 3 56000 2500 2 1900 8500 0 0 0 0 0 0\n";
        let (a, b) = (parse_diskstats(a), parse_diskstats(b));
        let r = disk_rates(1, "vda", "disk", &a["vda"], &b["vda"], 1.0);
        assert_eq!(r.r_s, 2000.0);
        assert_eq!(r.w_s, 200.0);
        assert!((r.rmib_s - 32000.0 * 512.0 / 1048576.0).abs() < 1e-9);
        assert_eq!(r.r_await_ms, 2.0);
        assert_eq!(r.w_await_ms, 5.0);
        assert_eq!(r.aqu_sz, 5.0);
        assert_eq!(r.util_pct, 100.0);
    }

    #[test]
    fn memory_vmstat_and_pressure_parse() {
        let mem = "MemTotal:       49368168 kB\nMemFree:        19074844 kB\nDirty:            638524 kB\nWriteback:             0 kB\n";
        assert_eq!(meminfo_kib(mem, "Dirty"), Some(638524));
        assert_eq!(meminfo_kib(mem, "Writeback"), Some(0));
        assert_eq!(meminfo_kib(mem, "Mem"), None);
        assert_eq!(
            vmstat("pgpgin 261717709\npgpgout 374485192\n", "pgpgout"),
            Some(374485192)
        );
        let psi = "some avg10=16.11 avg60=59.00 avg300=54.30 total=678578757\nfull avg10=9.75 avg60=27.09 avg300=21.14 total=396087467\n";
        assert_eq!(parse_pressure(psi), Some((678578757, 396087467)));
    }
    const MIB: u64 = 1 << 20;

    fn counts(dbio: (u64, u64), device: (u64, u64)) -> Counts {
        Counts {
            dbio_requests: dbio.0,
            dbio_bytes: dbio.1,
            device_requests: device.0,
            device_bytes: device.1,
        }
    }

    #[test]
    fn another_workload_on_the_disk_shows_in_bytes_though_requests_agree() {
        // The case: 60 s of 8 KiB reads at 295 MiB/s; the device read 700 MiB/s in
        // only 6.5 % more requests (the other program read 1 MiB at a time).
        let dbio = (295 * 60 * 128, 295 * 60 * MIB);
        let device = (dbio.0 + dbio.0 * 65 / 1000, 700 * 60 * MIB);
        let (c, w) = BlockLayerCheck::judge(
            "vda",
            counts(dbio, device),
            Counts::default(),
            60.0,
            8192,
            vec![],
        );
        assert!((c.ratio - 700.0 / 295.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.ratio_of, "read bytes");
        assert!((c.not_dbio_pct - 100.0 * 405.0 / 700.0).abs() < 1e-9);
        let text = w.unwrap().to_string();
        assert_eq!(
            text,
            "the device vda did 700 MiB/s of reads while dbio read 295 MiB/s: 58 % of its work over the window was not dbio's — another workload shared the disk, so these figures are not the disk's alone"
        );
    }

    #[test]
    fn writes_beside_a_read_test_are_outside_work_but_a_journal_is_not() {
        let reads = counts((1000, 100 * MIB), (1000, 100 * MIB));
        let (c, w) = BlockLayerCheck::judge(
            "sda",
            reads,
            counts((0, 0), (400, 50 * MIB)),
            10.0,
            8192,
            vec![],
        );
        assert_eq!(c.ratio_of, "bytes");
        assert!((c.ratio - 1.5).abs() < 1e-9 && (c.not_dbio_pct - 100.0 / 3.0).abs() < 1e-9);
        let text = w.unwrap().to_string();
        assert!(text.contains("did 10 MiB/s of reads and 5.0 MiB/s of writes while dbio read 10 MiB/s and wrote nothing: 33 %"), "{text}");
        // A few MiB of journal writes: within 10 % of dbio's work.
        let (c, w) = BlockLayerCheck::judge(
            "sda",
            reads,
            counts((0, 0), (40, 3 * MIB)),
            10.0,
            8192,
            vec![],
        );
        assert!(
            w.is_none() && c.ratio_of == "requests" && c.ratio == 1.0,
            "{c:?} {w:?}"
        );
    }

    #[test]
    fn split_merged_and_short_requests_are_told_apart() {
        let bytes = 1000 * MIB;
        // 1 MiB writes the device took in 128 KiB pieces: its max_sectors_kb is exceeded.
        let w_ = |dev_requests| counts((1000, bytes), (dev_requests, bytes));
        let (c, w) = BlockLayerCheck::judge(
            "loop0",
            Counts::default(),
            w_(8000),
            10.0,
            MIB,
            vec!["max_sectors_kb 128".into()],
        );
        assert_eq!((c.ratio_of.as_str(), c.ratio), ("requests", 8.0));
        let text = w.unwrap().to_string();
        assert!(text.contains("split dbio's requests (dbio's average 1024 KiB, the device's 128 KiB): dbio's largest request, 1M, exceeds loop0's max_sectors_kb 128"), "{text}");
        // The same with no limit exceeded: no limit is named.
        let (_, w) = BlockLayerCheck::judge(
            "loop0",
            Counts::default(),
            w_(8000),
            10.0,
            12 * 1024,
            vec![],
        );
        let text = w.unwrap().to_string();
        assert!(
            text.contains("though none of dbio's exceeds") && !text.contains("max_sectors_kb 128"),
            "{text}"
        );
        // Merged: fewer, larger requests.
        let (_, w) = BlockLayerCheck::judge("loop0", Counts::default(), w_(500), 10.0, MIB, vec![]);
        assert!(w.unwrap().to_string().contains("merged dbio's requests"));
        // Agreeing within 10 %: nothing to say.
        let (c, w) =
            BlockLayerCheck::judge("loop0", Counts::default(), w_(1050), 10.0, MIB, vec![]);
        assert!(w.is_none() && (c.ratio - 1.05).abs() < 1e-9);
        // Fewer bytes than dbio moved.
        let (c, w) = BlockLayerCheck::judge(
            "loop0",
            Counts::default(),
            counts((1000, bytes), (500, bytes / 2)),
            10.0,
            MIB,
            vec![],
        );
        assert_eq!((c.ratio_of.as_str(), c.ratio), ("bytes", 0.5));
        assert!(w.unwrap().to_string().contains("fewer bytes than dbio"));
    }
}
