//! The "Operating system" and "Block devices" sections of `summary.txt`: averages of the
//! per-second OS statistics over the measured window, and the block-layer cross-check.

use std::fmt::Write;

use super::result::{OsJson, RunResult};

fn mean<'a, T: 'a>(rows: impl Iterator<Item = &'a T>, f: impl Fn(&T) -> f64) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for r in rows {
        sum += f(r);
        n += 1;
    }
    if n > 0 { sum / n as f64 } else { 0.0 }
}

/// Appends the sections to `o` (nothing when the result has no OS statistics).
pub fn render(o: &mut String, r: &RunResult) {
    let Some(os) = &r.os else {
        return;
    };
    operating_system(o, os);
    block_devices(o, os);
}

fn operating_system(o: &mut String, os: &OsJson) {
    let _ = writeln!(o, "\nOperating system (averages over the measured window)");
    let all = || os.cpu.iter().filter(|c| c.cpu == "all");
    if all().next().is_some() {
        let _ = writeln!(
            o,
            "CPU (all):       user {:.1}%  system {:.1}%  iowait {:.1}%  steal {:.1}%  idle {:.1}%",
            mean(all(), |c| c.user_pct),
            mean(all(), |c| c.system_pct),
            mean(all(), |c| c.iowait_pct),
            mean(all(), |c| c.steal_pct),
            mean(all(), |c| c.idle_pct)
        );
    }
    if !os.dbio_cpu.is_empty() {
        let _ = writeln!(
            o,
            "dbio CPU:        user {:.1}%  system {:.1}% (of one CPU)",
            mean(os.dbio_cpu.iter(), |c| c.user_pct),
            mean(os.dbio_cpu.iter(), |c| c.system_pct)
        );
    }
    if !os.memory.is_empty() {
        let m = || os.memory.iter();
        let _ = writeln!(
            o,
            "Memory:          free {:.0} MiB  dirty {:.1} MiB  writeback {:.1} MiB  pgpgin {:.0} KiB/s  pgpgout {:.0} KiB/s",
            mean(m(), |x| x.free_mib),
            mean(m(), |x| x.dirty_mib),
            mean(m(), |x| x.writeback_mib),
            mean(m(), |x| x.pgpgin_kib_s),
            mean(m(), |x| x.pgpgout_kib_s)
        );
    }
    if !os.io_pressure.is_empty() {
        let _ = writeln!(
            o,
            "I/O pressure:    some {:.1}%  full {:.1}% of the time",
            mean(os.io_pressure.iter(), |p| p.some_pct),
            mean(os.io_pressure.iter(), |p| p.full_pct)
        );
    }
}

fn block_devices(o: &mut String, os: &OsJson) {
    let mut names: Vec<(&str, &str)> = Vec::new();
    for d in &os.devices {
        if !names.iter().any(|(n, _)| *n == d.device) {
            names.push((&d.device, &d.layer));
        }
    }
    if !names.is_empty() {
        let _ = writeln!(o, "\nBlock devices (averages over the measured window)");
        let _ = writeln!(
            o,
            "{:<12} {:<9} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6}",
            "Device",
            "Layer",
            "r/s",
            "w/s",
            "rMiB/s",
            "wMiB/s",
            "r_await",
            "w_await",
            "aqu-sz",
            "%util"
        );
        for (name, layer) in names {
            let rows = || os.devices.iter().filter(move |d| d.device == name);
            let _ = writeln!(
                o,
                "{:<12} {:<9} {:>10.1} {:>10.1} {:>8.1} {:>8.1} {:>8.2} {:>8.2} {:>7.2} {:>6.1}",
                name,
                layer,
                mean(rows(), |d| d.r_s),
                mean(rows(), |d| d.w_s),
                mean(rows(), |d| d.rmib_s),
                mean(rows(), |d| d.wmib_s),
                mean(rows(), |d| d.r_await_ms),
                mean(rows(), |d| d.w_await_ms),
                mean(rows(), |d| d.aqu_sz),
                mean(rows(), |d| d.util_pct)
            );
        }
    }
    if let Some(c) = &os.cross_check {
        let _ = writeln!(
            o,
            "Cross-check: {} completed {} requests, dbio {} (ratio {:.3})",
            c.device, c.device_requests, c.dbio_requests, c.ratio
        );
    }
}
