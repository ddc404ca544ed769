//! The sizing as a report: the requirements, the device and the array, then
//! "Requirements to Array & Device Capabilities" — per constraint what is needed, what one
//! device gives and how many devices that makes — the spares, the arrays and why, IOPS/GiB,
//! and the capacity-first answer beside it. Only figures and their order are decided here;
//! the text is the shared renderer's ([`crate::report::summary`]).

use super::SizeReport;
use super::arith::Constraint;
use crate::report::sections::{Block, Cell, Column, Mark, Report, Section, Table, cells};
use crate::units::{human_bytes, size_label, thousands};
use crate::workload::span;

/// A figure as people read it: `19,100`, `46.6`, `0.32`.
fn num(v: f64) -> String {
    if v.abs() >= 1000.0 {
        let text = format!("{:.1}", v.abs());
        let (whole, tenth) = text.split_once('.').unwrap_or((&text, "0"));
        let whole = thousands(whole.parse().unwrap_or(0));
        let sign = if v < 0.0 { "-" } else { "" };
        if tenth == "0" {
            format!("{sign}{whole}")
        } else {
            format!("{sign}{whole}.{tenth}")
        }
    } else if v == v.round() {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        let t = format!("{v:.2}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

fn pct(fraction: f64) -> String {
    span::label(fraction)
}

/// The sizing as a report: what `dbio size` prints.
pub fn report(r: &SizeReport) -> Report {
    let s = &r.sizing;
    let mut sections = vec![requirements(r), device(r), capabilities(r)];
    let cf = &s.capacity_first;
    let h = &s.needs.host;
    sections.push(
        Section::new(
            "capacity-first",
            "Capacity first (the whole surface, performance not considered)",
        )
        .with(Block::Note(format!(
            "{} + {} spares = {} devices, {} {}",
            thousands(cf.before_spares),
            thousands(cf.spares),
            thousands(cf.total),
            cf.arrays,
            if cf.arrays == 1 { "array" } else { "arrays" }
        )))
        .with(Block::Note(format!(
            "It would give {} device IOPS ({:.0}% of the {} needed), {} device MiB/s ({:.0}%), and its arrays {} MiB/s to hosts ({:.0}% of {})",
            num(cf.backend_iops),
            cf.iops_pct_of_needed,
            num(s.needs.backend_iops),
            num(cf.backend_mib_per_s),
            cf.bandwidth_pct_of_needed,
            num(cf.array_mib_per_s),
            cf.array_pct_of_needed,
            num(h.mib_per_s())
        ))),
    );
    if !r.notes.is_empty() {
        sections.push(Section::new("notes", "Notes").with(Block::List {
            items: r.notes.clone(),
            alert: false,
        }));
    }
    Report {
        title: format!("dbio {} — sizing: {}", r.dbio_version, r.plan),
        sections,
    }
}

/// The requirements: each class at its peak, then the peak in total, grown.
fn requirements(r: &SizeReport) -> Section {
    let q = &r.requirements;
    let h = &r.sizing.needs.host;
    let mut t = Table::new(vec![
        Column::left("Class", 0),
        Column::left("Event", 0),
        Column::right("Size", 0),
        Column::right("IOPS", 0),
        Column::right("MiB/s", 0),
        Column::left("Limits", 0),
    ]);
    for c in &q.classes {
        let limits: Vec<String> = (c.limits_ms.iter())
            .map(|(stat, ms)| format!("{stat} ≤ {}ms", num(*ms)))
            .collect();
        t.row(cells![
            c.name.as_str(),
            c.event.as_str(),
            size_label(c.size_bytes),
            num(c.peak_iops),
            num(c.peak_mib_per_s),
            if limits.is_empty() {
                "-".to_string()
            } else {
                limits.join(", ")
            },
        ]);
    }
    Section::new(
        "requirements",
        "Requirements (the peak, as the database issues it)",
    )
    .with(Block::Table(t))
    .with(Block::Fields(vec![(
        "Peak".to_string(),
        format!(
            "reads {} IOPS ({} MiB/s), writes {} IOPS ({} MiB/s); × growth {} = {} IOPS, {} MiB/s; capacity {}",
            num(q.peak.read_iops),
            num(q.peak.read_mib_per_s),
            num(q.peak.write_iops),
            num(q.peak.write_mib_per_s),
            num(q.growth),
            num(h.iops()),
            num(h.mib_per_s()),
            human_bytes(q.capacity_bytes)
        ),
    )]))
}

/// The device (stated, or measured by runs: each run and which one gave the figures) and
/// the array.
fn device(r: &SizeReport) -> Section {
    let d = &r.device;
    let mut s = Section::new("device", "Device and array").with(Block::Fields(vec![
        (
            "Device".to_string(),
            format!(
                "{} — {}, {} (write penalty {}, {} of each device holds data)",
                d.name,
                human_bytes(d.capacity_bytes),
                d.raid,
                num(d.write_penalty),
                pct(d.data_fraction)
            ),
        ),
        (
            "Each device".to_string(),
            format!(
                "{} IOPS and {} MiB/s within the limits, usable surface {} — {}",
                num(d.iops),
                num(d.mib_per_s),
                pct(d.usable_surface),
                match &d.measured {
                    None => "as the plan states them".to_string(),
                    Some(m) => format!(
                        "measured: IOPS and MiB/s from run {}, the usable surface is the largest span that passed",
                        m.figures_from_run
                    ),
                }
            ),
        ),
    ]));
    if let Some(m) = &d.measured {
        s.push(Block::Note(format!(
            "Runs on {} device(s), {}: per device = (reads + writes × {}) / {}",
            m.runs_devices,
            m.runs_raid,
            num(m.runs_write_penalty),
            m.runs_devices
        )));
        let mut t = Table::new(vec![
            Column::right("Run", 0),
            Column::right("Span", 0),
            Column::right("Reads/s", 0),
            Column::right("Writes/s", 0),
            Column::right("IOPS/device", 0),
            Column::right("MiB/s/device", 0),
            Column::left("Verdict", 0),
            Column::left("", 0),
        ]);
        for j in &m.runs {
            let verdict = if j.pass {
                Cell::marked("PASS", Mark::Pass)
            } else {
                Cell::marked(format!("FAIL: {}", j.reasons.join("; ")), Mark::Fail)
            };
            let mark = if j.id == m.figures_from_run {
                "← figures and usable surface"
            } else {
                ""
            };
            let mut row = cells![
                j.id.to_string(),
                pct(j.span),
                num(j.host.read_iops),
                num(j.host.write_iops),
                num(j.iops_per_device),
                num(j.mib_per_s_per_device),
            ];
            row.push(verdict);
            row.push(mark.into());
            t.row(row);
        }
        s.push(Block::Table(t));
        for w in &m.warnings {
            s.push(Block::Caution(w.clone()));
        }
    }
    let a = &r.array;
    s.with(Block::Fields(vec![(
        "Array".to_string(),
        format!(
            "{} — {} MiB/s to hosts, at most {} devices, spares {}",
            a.name,
            num(a.max_mib_per_s),
            thousands(a.max_devices),
            pct(a.spares)
        ),
    )]))
}

/// Per constraint what is needed, what one device gives and how many devices that makes;
/// then the spares, the arrays and why, and IOPS per GiB.
fn capabilities(r: &SizeReport) -> Section {
    let q = &r.requirements;
    let s = &r.sizing;
    let d = &r.device;
    let a = &r.array;
    let h = &s.needs.host;
    let dv = &s.devices;
    let mut t = Table::new(vec![
        Column::left("Constraint", 0),
        Column::left("Needed (growth included)", 0),
        Column::left("Per device", 0),
        Column::right("Devices", 0),
        Column::left("", 0),
    ]);
    let mut row = |c: Constraint, needed: String, per_device: String, devices: u64| {
        t.row(cells![
            c.title(),
            needed,
            per_device,
            thousands(devices),
            if s.binding == c { "← binds" } else { "" },
        ]);
    };
    // (reads + writes OP factor) × growth = total: what the devices must do.
    let formula = |(read, write): (f64, f64), (op, factor): (&str, f64), total: f64, unit: &str| {
        format!(
            "({} + {} {op} {}) × {} = {} {unit}",
            num(read),
            num(write),
            num(factor),
            num(q.growth),
            num(total)
        )
    };
    row(
        Constraint::Iops,
        formula(
            (q.peak.read_iops, q.peak.write_iops),
            ("×", d.write_penalty),
            s.needs.backend_iops,
            "device IOPS",
        ),
        format!("{} IOPS", num(d.iops)),
        dv.for_iops,
    );
    row(
        Constraint::Bandwidth,
        formula(
            (q.peak.read_mib_per_s, q.peak.write_mib_per_s),
            ("/", d.data_fraction),
            s.needs.backend_mib_per_s,
            "device MiB/s",
        ),
        format!("{} MiB/s", num(d.mib_per_s)),
        dv.for_bandwidth,
    );
    row(
        Constraint::Capacity,
        human_bytes(q.capacity_bytes),
        format!(
            "{} × {} × {} = {}",
            human_bytes(d.capacity_bytes),
            pct(d.usable_surface),
            pct(d.data_fraction),
            human_bytes(s.needs.usable_bytes_per_device.round() as u64)
        ),
        dv.for_capacity,
    );
    let group = if d.devices_per_group > 1 {
        format!(", in whole groups of {}", d.devices_per_group)
    } else {
        String::new()
    };
    let ar = &s.arrays;
    let g = &s.iops_per_gib;
    Section::new(
        "capabilities",
        "Requirements to Array & Device Capabilities",
    )
    .with(Block::Table(t))
    .with(Block::Fields(vec![
        (
            "Devices".to_string(),
            format!(
                "{} ({} binds{group}) + {} spares ({}) = {}",
                thousands(dv.before_spares),
                s.binding.name(),
                thousands(dv.spares),
                pct(a.spares),
                thousands(dv.total)
            ),
        ),
        (
            "Arrays".to_string(),
            format!(
                "{} at least — bandwidth {} / {} MiB/s → {}; devices {} / {} → {}",
                ar.min,
                num(h.mib_per_s()),
                num(a.max_mib_per_s),
                ar.for_bandwidth,
                thousands(dv.total),
                thousands(a.max_devices),
                ar.for_devices
            ),
        ),
        (
            "IOPS/GiB".to_string(),
            format!(
                "a device gives {} over its whole capacity, {} over the data it holds at the usable surface; the requirements ask {} device IOPS per GiB",
                num(g.device),
                num(g.usable),
                num(g.required)
            ),
        ),
    ]))
}

#[cfg(test)]
mod tests {
    use super::num;

    #[test]
    fn figures_read_as_written() {
        assert_eq!(num(19_100.0), "19,100");
        assert_eq!(num(4237.56), "4,237.6");
        assert_eq!(num(46.6), "46.6");
        assert_eq!(num(167.0), "167");
        assert_eq!(num(2.0), "2");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(0.314), "0.31");
        assert_eq!(num(4237.96), "4,238");
    }
}
