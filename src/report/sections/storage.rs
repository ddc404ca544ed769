//! `dbio map` as a report, and the storage tree every run's report draws: the map of
//! `crate::storage` (the model and the probe live there) written as a tree, one device a
//! line, the layers below indented.

use std::fmt::Write;

use super::{Block, Report, Section};
use crate::storage::lint::Finding;
use crate::storage::map::{BlockNode, StorageMap};
use crate::units::{human_bytes, shown};

/// `dbio map PATH`: the tree, then the findings, one a line (`severity [rule] subject:
/// message`).
pub fn map(map: &StorageMap, findings: &[Finding]) -> Report {
    let mut sections = vec![
        Section::new("map", "Storage")
            .level(super::Level::Lead)
            .with(Block::Tree(tree(map))),
    ];
    if !findings.is_empty() {
        sections.push(
            Section::new("findings", "Findings").with(Block::List {
                items: (findings.iter())
                    .map(|l| format!("{} [{}] {}: {}", l.severity, l.rule, l.subject, l.message))
                    .collect(),
                alert: false,
            }),
        );
    }
    Report {
        title: String::new(),
        sections,
    }
}

/// The map as a readable tree (paths and names from the system shown escaped, one a line).
pub fn tree(map: &StorageMap) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} ({})",
        shown(&map.path),
        shown(&map.kind.replace('_', " "))
    );
    if let Some(m) = &map.mount {
        let _ = writeln!(
            o,
            "  file system {} on {} from {} ({}, dev {})",
            shown(&m.fs_type),
            shown(&m.mount_point),
            shown(&m.source),
            shown(&m.options),
            m.dev
        );
    }
    for d in &map.devices {
        render_node(&mut o, d, "  ", true);
    }
    for n in &map.notes {
        let _ = writeln!(o, "  note: {}", shown(n));
    }
    o
}

fn opt<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map(|x| x.to_string())
        .unwrap_or_else(|| "?".into())
}

fn render_node(o: &mut String, n: &BlockNode, indent: &str, last: bool) {
    let branch = if last { "└─ " } else { "├─ " };
    let mut what = match n.layer.as_str() {
        "dm" => {
            let dm = n.dm.clone().unwrap_or_default();
            let kind = if dm.kind.is_empty() {
                "device-mapper".to_string()
            } else {
                format!("dm {}", dm.kind)
            };
            format!("{kind} /dev/mapper/{} (uuid {})", dm.name, dm.uuid)
        }
        "md" => {
            let md = n.md.clone().unwrap_or_default();
            format!(
                "md {}{}{}",
                md.level,
                md.raid_disks
                    .map(|r| format!(", {r} disks"))
                    .unwrap_or_default(),
                md.chunk_bytes
                    .filter(|&c| c > 0)
                    .map(|c| format!(", chunk {}", human_bytes(c)))
                    .unwrap_or_default()
            )
        }
        "partition" => {
            let p = n.partition.clone().unwrap_or_default();
            format!(
                "partition {} starting at sector {} ({} bytes)",
                opt(&p.number),
                p.start_sector,
                p.start_bytes
            )
        }
        "loop" => format!(
            "loop over {}",
            n.loop_
                .as_ref()
                .and_then(|l| l.backing_file.clone())
                .unwrap_or_else(|| "(no backing file)".into())
        ),
        _ => "disk".to_string(),
    };
    let _ = write!(what, ", {}", human_bytes(n.size_bytes));
    let _ = writeln!(o, "{indent}{branch}{} ({}) {what}", n.name, n.dev);
    let child_indent = format!("{indent}{}", if last { "   " } else { "│  " });
    if let Some(d) = &n.disk {
        let mut line = format!("transport {}", d.transport);
        for (k, v) in [
            ("vendor", &d.vendor),
            ("model", &d.model),
            ("serial", &d.serial),
            ("wwid", &d.wwid),
            ("SCSI", &d.scsi_address),
            ("HBA", &d.hba_pci),
        ] {
            if let Some(v) = v {
                let _ = write!(line, ", {k} {v}");
            }
        }
        if let Some(nn) = d.numa_node {
            let _ = write!(line, ", NUMA node {nn}");
        }
        if let Some(r) = d.rotational {
            let _ = write!(
                line,
                ", {}",
                if r { "rotational" } else { "non-rotational" }
            );
        }
        let _ = writeln!(o, "{child_indent}   {line}");
        if let Some(fc) = &d.fc {
            let _ = writeln!(
                o,
                "{child_indent}   FC: local port {} WWPN {} ({}, {}) → remote port {} WWPN {} (port id {})",
                fc.host,
                opt(&fc.local_wwpn),
                opt(&fc.port_state),
                opt(&fc.speed),
                opt(&fc.rport),
                opt(&fc.remote_wwpn),
                opt(&fc.remote_port_id)
            );
        }
        if let Some(nv) = &d.nvme {
            let _ = writeln!(
                o,
                "{child_indent}   NVMe: controller {} over {}{}, subsystem {}",
                opt(&nv.controller),
                opt(&nv.transport),
                nv.address
                    .as_ref()
                    .map(|a| format!(" ({a})"))
                    .unwrap_or_default(),
                opt(&nv.subsystem_nqn)
            );
        }
        if let Some(is) = &d.iscsi {
            let _ = writeln!(
                o,
                "{child_indent}   iSCSI: {} target {} at {}:{}",
                is.session,
                opt(&is.target_name),
                opt(&is.address),
                opt(&is.port)
            );
        }
    }
    if n.layer != "partition" {
        let q = &n.queue;
        let _ = writeln!(
            o,
            "{child_indent}   queue: scheduler {}, nr_requests {}, max_sectors_kb {} (hw {}), max_segments {}, logical/physical block {}/{}, write cache {}{}, read_ahead_kb {}",
            opt(&q.scheduler),
            opt(&q.nr_requests),
            opt(&q.max_sectors_kb),
            opt(&q.max_hw_sectors_kb),
            opt(&q.max_segments),
            opt(&q.logical_block_size),
            opt(&q.physical_block_size),
            opt(&q.write_cache),
            match q.fua {
                Some(true) => " (FUA)",
                _ => "",
            },
            opt(&q.read_ahead_kb)
        );
    }
    for (i, l) in n.lower.iter().enumerate() {
        render_node(o, l, &child_indent, i + 1 == n.lower.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_names_each_layer() {
        let m = crate::storage::probe::tests::fixture("fc_mpath", "/u01/oradata", "253:0");
        let text = tree(&m);
        assert!(text.contains("dm mpath /dev/mapper/mpatha"), "{text}");
        assert!(text.contains("WWPN 0x203500a098b3f6a1"), "{text}");
        let report = crate::report::render(&map(&m, &[]), crate::report::Format::Text);
        assert_eq!(report, text);
    }
}
