//! The sizing as text: the requirements, the device and the array, then seed 003's
//! "Requirements to Array & Drive Capabilities" — per constraint what is needed, what one
//! device gives and how many devices that makes — the spares, the arrays and why, IOPS/GiB,
//! and the capacity-first answer beside it.

use std::fmt::Write;

use super::SizeReport;
use super::arith::Constraint;
use crate::report::summary::thousands;
use crate::units::{human_bytes, size_label};
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

/// Rows as aligned columns (`right[i]`: column i is right-aligned), two spaces apart.
fn table(rows: &[Vec<String>], right: &[bool]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width = |i: usize| {
        rows.iter()
            .filter_map(|r| r.get(i))
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let mut o = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, cell) in r.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i > 0 {
                line.push_str("  ");
            }
            if right.get(i).copied().unwrap_or(false) {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            }
        }
        o.push_str(line.trim_end());
        o.push('\n');
    }
    o
}

fn pct(fraction: f64) -> String {
    span::label(fraction)
}

/// The report as text.
pub fn text(r: &SizeReport) -> String {
    let mut o = String::new();
    let q = &r.requirements;
    let s = &r.sizing;
    let d = &r.device;
    let _ = writeln!(o, "dbio {} — sizing: {}\n", r.dbio_version, r.plan);

    let _ = writeln!(o, "Requirements (the peak, as the database issues it)");
    let mut rows = vec![
        ["Class", "Event", "Size", "IOPS", "MiB/s", "Limits"]
            .map(String::from)
            .to_vec(),
    ];
    for c in &q.classes {
        let limits: Vec<String> = c
            .limits_ms
            .iter()
            .map(|(stat, ms)| format!("{stat} ≤ {}ms", num(*ms)))
            .collect();
        rows.push(vec![
            c.name.clone(),
            c.event.clone(),
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
    o.push_str(&table(&rows, &[false, false, true, true, true, false]));
    let h = &s.needs.host;
    let _ = writeln!(
        o,
        "Peak: reads {} IOPS ({} MiB/s), writes {} IOPS ({} MiB/s); × growth {} = {} IOPS, {} MiB/s; capacity {}",
        num(q.peak.read_iops),
        num(q.peak.read_mib_per_s),
        num(q.peak.write_iops),
        num(q.peak.write_mib_per_s),
        num(q.growth),
        num(h.iops()),
        num(h.mib_per_s()),
        human_bytes(q.capacity_bytes)
    );

    let _ = writeln!(
        o,
        "\nDevice: {} — {}, {} (write penalty {}, {} of each device holds data)",
        d.name,
        human_bytes(d.capacity_bytes),
        d.raid,
        num(d.write_penalty),
        pct(d.data_fraction)
    );
    let _ = writeln!(
        o,
        "  each: {} IOPS and {} MiB/s within the limits, usable surface {} — {}",
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
    );
    if let Some(m) = &d.measured {
        let _ = writeln!(
            o,
            "  runs on {} device(s), {}: per device = (reads + writes × {}) / {}",
            m.runs_devices,
            m.runs_raid,
            num(m.runs_write_penalty),
            m.runs_devices
        );
        let mut rows = vec![
            [
                "  Run",
                "Span",
                "Reads/s",
                "Writes/s",
                "IOPS/device",
                "MiB/s/device",
                "Verdict",
            ]
            .map(String::from)
            .to_vec(),
        ];
        for j in &m.runs {
            let mark = if j.id == m.figures_from_run {
                "  ← figures and usable surface"
            } else {
                ""
            };
            let verdict = if j.pass {
                "PASS".to_string()
            } else {
                format!("FAIL: {}", j.reasons.join("; "))
            };
            rows.push(vec![
                j.id.to_string(),
                pct(j.span),
                num(j.host.read_iops),
                num(j.host.write_iops),
                num(j.iops_per_device),
                num(j.mib_per_s_per_device),
                format!("{verdict}{mark}"),
            ]);
        }
        o.push_str(&table(&rows, &[true, true, true, true, true, true, false]));
        for w in &m.warnings {
            let _ = writeln!(o, "  Warning: {w}");
        }
    }
    let a = &r.array;
    let _ = writeln!(
        o,
        "Array: {} — {} MiB/s to hosts, at most {} devices, spares {}",
        a.name,
        num(a.max_mib_per_s),
        thousands(a.max_devices),
        pct(a.spares)
    );

    let dv = &s.devices;
    let _ = writeln!(o, "\nRequirements to Array & Device Capabilities");
    // One row per constraint: what is needed, what one device gives, how many devices.
    let row = |c: Constraint, needed: String, per_device: String, devices: u64| {
        vec![
            c.title().into(),
            needed,
            per_device,
            thousands(devices),
            if s.binding == c { "← binds" } else { "" }.into(),
        ]
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
    let header = [
        "Constraint",
        "Needed (growth included)",
        "Per device",
        "Devices",
        "",
    ];
    let rows = vec![
        header.map(String::from).to_vec(),
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
        ),
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
        ),
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
        ),
    ];
    o.push_str(&table(&rows, &[false, false, false, true, false]));
    let group = if d.devices_per_group > 1 {
        format!(", in whole groups of {}", d.devices_per_group)
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "Devices: {} ({} binds{group}) + {} spares ({}) = {}",
        thousands(dv.before_spares),
        s.binding.name(),
        thousands(dv.spares),
        pct(a.spares),
        thousands(dv.total)
    );
    let ar = &s.arrays;
    let _ = writeln!(
        o,
        "Arrays: {} at least — bandwidth {} / {} MiB/s → {}; devices {} / {} → {}",
        ar.min,
        num(h.mib_per_s()),
        num(a.max_mib_per_s),
        ar.for_bandwidth,
        thousands(dv.total),
        thousands(a.max_devices),
        ar.for_devices
    );
    let g = &s.iops_per_gib;
    let _ = writeln!(
        o,
        "IOPS/GiB: a device gives {} over its whole capacity, {} over the data it holds at the usable surface; the requirements ask {} device IOPS per GiB",
        num(g.device),
        num(g.usable),
        num(g.required)
    );

    let cf = &s.capacity_first;
    let _ = writeln!(
        o,
        "\nCapacity first (the whole surface, performance not considered): {} + {} spares = {} devices, {} {}",
        thousands(cf.before_spares),
        thousands(cf.spares),
        thousands(cf.total),
        cf.arrays,
        if cf.arrays == 1 { "array" } else { "arrays" }
    );
    let _ = writeln!(
        o,
        "  it would give {} device IOPS ({:.0}% of the {} needed), {} device MiB/s ({:.0}%), and its arrays {} MiB/s to hosts ({:.0}% of {})",
        num(cf.backend_iops),
        cf.iops_pct_of_needed,
        num(s.needs.backend_iops),
        num(cf.backend_mib_per_s),
        cf.bandwidth_pct_of_needed,
        num(cf.array_mib_per_s),
        cf.array_pct_of_needed,
        num(h.mib_per_s())
    );
    for n in &r.notes {
        let _ = writeln!(o, "Note: {n}");
    }
    o
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
