//! The sections about the machine and the storage: what the operating system and the block
//! devices saw (averages over the measured window), the storage stack under the data set
//! (the tree `dbio map` prints), its configuration findings, and the run's warnings.

use super::format::thousands;
use super::model::{Block, Column, Section, Table, cells};
use crate::report::result::{OsStats, RunResult, StorageJson};

fn mean<'a, T: 'a>(rows: impl Iterator<Item = &'a T>, f: impl Fn(&T) -> f64) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for r in rows {
        sum += f(r);
        n += 1;
    }
    if n > 0 { sum / n as f64 } else { 0.0 }
}

/// CPU, dbio's own CPU, memory and I/O pressure, averaged; then their charts.
pub fn operating_system(r: &RunResult) -> Option<Section> {
    let os = r.os.as_ref()?;
    let mut f = Vec::new();
    let all = || os.cpu.iter().filter(|c| c.cpu == "all");
    if all().next().is_some() {
        f.push((
            "CPU (all)".to_string(),
            format!(
                "user {:.1}%  system {:.1}%  iowait {:.1}%  steal {:.1}%  idle {:.1}%",
                mean(all(), |c| c.user_pct),
                mean(all(), |c| c.system_pct),
                mean(all(), |c| c.iowait_pct),
                mean(all(), |c| c.steal_pct),
                mean(all(), |c| c.idle_pct)
            ),
        ));
    }
    if !os.dbio_cpu.is_empty() {
        f.push((
            "dbio CPU".to_string(),
            format!(
                "user {:.1}%  system {:.1}% (of one CPU)",
                mean(os.dbio_cpu.iter(), |c| c.user_pct),
                mean(os.dbio_cpu.iter(), |c| c.system_pct)
            ),
        ));
    }
    if !os.memory.is_empty() {
        let m = || os.memory.iter();
        f.push((
            "Memory".to_string(),
            format!(
                "free {:.0} MiB  dirty {:.1} MiB  writeback {:.1} MiB  pgpgin {:.0} KiB/s  pgpgout {:.0} KiB/s",
                mean(m(), |x| x.free_mib),
                mean(m(), |x| x.dirty_mib),
                mean(m(), |x| x.writeback_mib),
                mean(m(), |x| x.pgpgin_kib_s),
                mean(m(), |x| x.pgpgout_kib_s)
            ),
        ));
    }
    if !os.io_pressure.is_empty() {
        f.push((
            "I/O pressure".to_string(),
            format!(
                "some {:.1}%  full {:.1}% of the time",
                mean(os.io_pressure.iter(), |p| p.some_pct),
                mean(os.io_pressure.iter(), |p| p.full_pct)
            ),
        ));
    }
    let mut s = Section::new("os", "Operating system (averages over the measured window)")
        .with(Block::Fields(f));
    s.blocks.extend(super::charts::os(r));
    Some(s)
}

/// Every block device under the data set, as `iostat -x` would average it; the block-layer
/// cross-check; then their charts.
pub fn block_devices(r: &RunResult) -> Option<Section> {
    let os: &OsStats = r.os.as_ref()?;
    let mut names: Vec<(&str, &str)> = Vec::new();
    for d in &os.devices {
        if !names.iter().any(|(n, _)| *n == d.device) {
            names.push((&d.device, &d.layer));
        }
    }
    if names.is_empty() && os.cross_check.is_none() {
        return None;
    }
    let mut s = Section::new(
        "devices",
        "Block devices (averages over the measured window)",
    );
    if !names.is_empty() {
        let mut t = Table::new(vec![
            Column::left("Device", 12),
            Column::left("Layer", 9),
            Column::right("r/s", 10),
            Column::right("w/s", 10),
            Column::right("rMiB/s", 8),
            Column::right("wMiB/s", 8),
            Column::right("r_await", 8),
            Column::right("w_await", 8),
            Column::right("aqu-sz", 7),
            Column::right("%util", 6),
        ]);
        for (name, layer) in names {
            let rows = || os.devices.iter().filter(move |d| d.device == name);
            t.row(cells![
                name,
                layer,
                format!("{:.1}", mean(rows(), |d| d.r_s)),
                format!("{:.1}", mean(rows(), |d| d.w_s)),
                format!("{:.1}", mean(rows(), |d| d.rmib_s)),
                format!("{:.1}", mean(rows(), |d| d.wmib_s)),
                format!("{:.2}", mean(rows(), |d| d.r_await_ms)),
                format!("{:.2}", mean(rows(), |d| d.w_await_ms)),
                format!("{:.2}", mean(rows(), |d| d.aqu_sz)),
                format!("{:.1}", mean(rows(), |d| d.util_pct)),
            ]);
        }
        s.push(Block::Table(t));
    }
    if let Some(c) = &os.cross_check {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        let mut note = format!(
            "Cross-check: {} completed {} requests ({:.1} MiB), dbio {} ({:.1} MiB), in the directions dbio issued; ratio {:.3}",
            c.device,
            thousands(c.device_requests),
            mib(c.device_bytes),
            thousands(c.dbio_requests),
            mib(c.dbio_bytes),
            c.ratio
        );
        if !c.ratio_of.is_empty() {
            note.push_str(&format!(
                " (the device's {} against dbio's); {:.0} % of the device's bytes over the window were not dbio's",
                c.ratio_of, c.not_dbio_pct
            ));
        }
        s.push(Block::Note(note));
    }
    s.blocks.extend(super::charts::devices(r));
    Some(s)
}

/// The storage stack under the data set, drawn as `dbio map` draws it.
pub fn storage(r: &RunResult) -> Option<Section> {
    let tree = match r.storage.as_ref()? {
        StorageJson::Map(map) => super::storage::tree(map),
        // A map this dbio cannot read back: as it was written.
        StorageJson::Other(v) => serde_json::to_string_pretty(v).unwrap_or_default(),
    };
    Some(Section::new("storage", "Storage").with(Block::Tree(tree)))
}

/// Configuration findings about that stack, each with its reason.
pub fn findings(r: &RunResult) -> Option<Section> {
    if r.lint.is_empty() {
        return None;
    }
    let mut t = Table::new(vec![
        Column::left("Severity", 8),
        Column::left("Rule", 14),
        Column::left("Subject", 7),
        Column::left("Finding", 0),
    ]);
    for l in &r.lint {
        t.row(cells![
            l.severity.as_str(),
            l.rule.as_str(),
            l.subject.as_str(),
            l.message.as_str()
        ]);
    }
    Some(Section::new("lint", "Configuration findings").with(Block::Table(t)))
}

/// Everything dbio advises about the run.
pub fn warnings(r: &RunResult) -> Option<Section> {
    (!r.warnings.is_empty()).then(|| {
        Section::new("warnings", "Warnings").with(Block::List {
            items: r.warnings.iter().map(|w| w.to_string()).collect(),
            alert: false,
        })
    })
}
