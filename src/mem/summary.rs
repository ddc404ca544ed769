//! `summary.txt` of `dbio mem`, made from the result alone; and the `--topology` text.

use std::fmt::Write;

use super::result::{LevelJson, MemResult, NumaJson, ShmJson};
use super::topology::{MemInfo, Topology, format_cpu_list};
use crate::report::summary::thousands;
use crate::units::{human_bytes, size_label};

pub fn render(r: &MemResult) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "dbio {} — mem — {} — {} (kernel {}, {} CPUs)",
        r.dbio_version, r.started_at, r.host.hostname, r.host.kernel, r.host.cpus
    );
    if r.partial {
        let _ = writeln!(o, "PARTIAL: {} after {:.1} s", r.stop_reason, r.elapsed_s);
    }
    if let Some(s) = &r.shm {
        shm(&mut o, r, s);
    } else {
        let c = &r.config;
        let _ = writeln!(
            o,
            "Pages {} ({}){}; chase on CPU {}; {}-byte lines; budget {:.0} ms per figure; seed {}",
            r.page_size.used,
            size_label(r.page_size.bytes),
            r.page_size
                .huge_backed_pct
                .map_or(String::new(), |p| format!(
                    ", {p:.0} % backed by huge pages"
                )),
            c.cpu,
            c.line_bytes,
            c.budget_s * 1000.0,
            c.seed
        );
        o.push_str(&machine_lines(&r.topology));
        if let Some(curve) = &r.curve {
            let _ = writeln!(
                o,
                "\nLatency by working set (dependent loads over a random cycle of {}-byte lines)",
                c.line_bytes
            );
            let _ = writeln!(
                o,
                "{:>10} {:>9} {:>8} {:>9} {:>9} {:>5}  level",
                "Size", "ns/load", "spread", "min ns", "max ns", "reps"
            );
            for p in curve {
                let _ = writeln!(
                    o,
                    "{:>10} {:>9} {:>7.1}% {:>9} {:>9} {:>5}  {}{}",
                    human_bytes(p.size_bytes),
                    ns(p.ns),
                    p.spread_pct,
                    ns(p.min_ns),
                    ns(p.max_ns),
                    p.reps,
                    p.level,
                    match (p.stable, p.preempted_reps) {
                        (_, n) if n == p.reps => "  (preempted)",
                        (false, _) => "  (not stable)",
                        _ => "",
                    }
                );
            }
            if !r.levels.is_empty() {
                let _ = writeln!(o, "Levels: {}", levels_line(&r.levels));
            }
        }
        if let Some(n) = &r.numa {
            numa(&mut o, n);
        }
        if let Some(l) = &r.loaded {
            let _ = writeln!(
                o,
                "\nLoaded latency (chase of {} on CPU {}; each reading thread reads {} of its own; rounds alternate over the thread counts)",
                size_label(c.loaded_size_bytes),
                c.cpu,
                size_label(c.reader_bytes)
            );
            let _ = writeln!(
                o,
                "{:>9} {:>12} {:>12} {:>8}  {:<22} {:>11}  reading CPUs",
                "Threads", "Read GiB/s", "Latency ns", "spread", "rounds (ns)", "others busy"
            );
            for p in l {
                let rounds: Vec<String> = p.round_ns.iter().map(|&v| ns(v)).collect();
                let _ = writeln!(
                    o,
                    "{:>9} {:>12.2} {:>12} {:>7.1}%  {:<22} {:>11}  {}",
                    p.threads,
                    p.bandwidth_gib_s,
                    ns(p.latency_ns),
                    p.spread_pct,
                    rounds.join(", "),
                    p.other_cpus_busy_pct
                        .map_or("-".to_string(), |b| format!("{b:.0}%")),
                    if p.cpus.is_empty() {
                        "-".to_string()
                    } else {
                        format_cpu_list(&p.cpus)
                    }
                );
            }
        }
    }
    if !r.warnings.is_empty() {
        o.push_str("\nWarnings\n");
        for w in &r.warnings {
            let _ = writeln!(o, "- {w}");
        }
    }
    let _ = writeln!(o, "\nElapsed {:.1} s", r.elapsed_s);
    o
}

/// ns with sensible precision: `1.12`, `16.2`, `341`.
fn ns(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The caches and nodes in a few lines.
fn machine_lines(t: &Topology) -> String {
    let mut o = String::new();
    let caches: Vec<String> = t
        .caches
        .iter()
        .map(|c| {
            let shared = if c.shared_cpus.len() > 1 {
                format!(" (shared by CPUs {})", format_cpu_list(&c.shared_cpus))
            } else {
                String::new()
            };
            format!("{} {}{shared}", c.name(), human_bytes(c.size_bytes))
        })
        .collect();
    let _ = writeln!(
        o,
        "Caches of CPU {}: {}",
        t.cache_cpu,
        if caches.is_empty() {
            "not in sysfs".to_string()
        } else {
            caches.join(", ")
        }
    );
    let nodes: Vec<String> = t
        .nodes
        .iter()
        .map(|n| {
            format!(
                "node {}: CPUs {}, {}",
                n.id,
                if n.cpus.is_empty() {
                    "none".to_string()
                } else {
                    format_cpu_list(&n.cpus)
                },
                human_bytes(n.memory_bytes)
            )
        })
        .collect();
    let _ = writeln!(
        o,
        "NUMA: {} node(s){}: {}",
        t.nodes.len(),
        if t.numa_in_sysfs {
            ""
        } else {
            " (none in sysfs: one assumed)"
        },
        nodes.join("; ")
    );
    o
}

fn numa(o: &mut String, n: &NumaJson) {
    let _ = writeln!(
        o,
        "\nNUMA matrix ({} per figure; rows: CPU node, columns: memory node, then memory interleaved over all; distance from sysfs in brackets)",
        size_label(n.size_bytes)
    );
    let header = |o: &mut String, title: &str| {
        let _ = write!(o, "{title:<18}");
        for id in &n.nodes {
            let _ = write!(o, "{:>14}", format!("node {id}"));
        }
        let _ = writeln!(o, "{:>14}", "interleaved");
    };
    let flagged = |i: usize, j: usize| {
        n.out_of_line
            .iter()
            .any(|f| f.cpu_node == n.nodes[i] && f.mem_node == n.nodes[j])
    };
    let cell = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
    header(o, "Latency (ns)");
    for (i, row) in n.latency_ns.iter().enumerate() {
        if row.iter().all(Option::is_none) {
            continue;
        }
        let _ = write!(o, "{:<18}", format!("  CPU node {}", n.nodes[i]));
        for (j, v) in row.iter().enumerate() {
            let d = n.distance[i][j];
            let mark = if flagged(i, j) { "!" } else { "" };
            let _ = write!(o, "{:>14}", cell(*v, &|v| format!("{mark}{} ({d})", ns(v))));
        }
        let il = n.interleave_ns_by_cpu_node.get(i).copied().flatten();
        let _ = writeln!(o, "{:>14}", cell(il, &ns));
    }
    header(o, "Read GiB/s");
    for (i, row) in n.bandwidth_gib_s.iter().enumerate() {
        if row.iter().all(Option::is_none) {
            continue;
        }
        let _ = write!(
            o,
            "{:<18}",
            format!("  CPU node {} ×{}", n.nodes[i], n.threads_per_node[i])
        );
        for v in row {
            let _ = write!(o, "{:>14}", cell(*v, &|v| format!("{v:.2}")));
        }
        let il = n.interleave_gib_s_by_cpu_node.get(i).copied().flatten();
        let _ = writeln!(o, "{:>14}", cell(il, &|v| format!("{v:.2}")));
    }
    if n.out_of_line.is_empty() && n.nodes.len() > 2 {
        let _ = writeln!(
            o,
            "Every pair's latency is in line with its distance (within 10 % of the pairs at the same distance)."
        );
    }
    for f in &n.out_of_line {
        let _ = writeln!(o, "! {}", f.message);
    }
}

fn shm(o: &mut String, r: &MemResult, s: &ShmJson) {
    if let Some(f) = &s.file {
        let mount = f.mount.as_ref().map_or(String::new(), |m| {
            let policy = match (m.fs_type.as_str(), m.mpol.as_deref()) {
                (_, Some(p)) => format!("memory policy mpol={p}"),
                ("tmpfs", None) => {
                    "memory policy: none: pages go where the process that first wrote them ran"
                        .to_string()
                }
                _ => "page cache".to_string(),
            };
            format!(" on {} {} ({policy})", m.fs_type, m.mount_point)
        });
        let _ = writeln!(
            o,
            "File {}: {}, {} page(s) of {}{mount}",
            f.path,
            human_bytes(f.size_bytes),
            thousands(f.pages),
            size_label(f.page_bytes)
        );
        let _ = writeln!(
            o,
            "\n{:<16} {:>12} {:>8} {:>12}",
            "Pages", "count", "share", "bytes"
        );
        for (node, n) in &f.pages_by_node {
            let _ = writeln!(
                o,
                "{:<16} {:>12} {:>7.1}% {:>12}",
                format!("node {node}"),
                thousands(*n),
                *n as f64 / f.pages.max(1) as f64 * 100.0,
                human_bytes(n * f.page_bytes)
            );
        }
        let _ = writeln!(
            o,
            "{:<16} {:>12} {:>7.1}%",
            "not in memory",
            thousands(f.pages_not_in_memory),
            f.pages_not_in_memory as f64 / f.pages.max(1) as f64 * 100.0
        );
        if f.pages_unknown > 0 {
            let _ = writeln!(o, "{:<16} {:>12}", "unknown", thousands(f.pages_unknown));
        }
    }
    if let Some(p) = &s.process {
        let _ = writeln!(
            o,
            "Process {} ({}): {} shared memory object(s), pages it has mapped",
            p.pid,
            p.command,
            p.segments.len()
        );
        let nodes: Vec<u32> = r.topology.nodes.iter().map(|n| n.id).collect();
        let _ = write!(
            o,
            "\n{:<36} {:<17} {:<16} {:>5}",
            "Object", "Kind", "Policy", "Page"
        );
        for id in &nodes {
            let _ = write!(o, "{:>12}", format!("node {id}"));
        }
        o.push('\n');
        for seg in &p.segments {
            let _ = write!(
                o,
                "{:<36} {:<17} {:<16} {:>5}",
                seg.name,
                seg.kind,
                seg.policies.join(","),
                size_label(seg.page_bytes)
            );
            for id in &nodes {
                let _ = write!(
                    o,
                    "{:>12}",
                    thousands(seg.pages_by_node.get(id).copied().unwrap_or(0))
                );
            }
            o.push('\n');
        }
    }
    let by_node: Vec<String> = s
        .bytes_by_node
        .iter()
        .map(|(n, b)| format!("node {n} {}", human_bytes(*b)))
        .collect();
    if !by_node.is_empty() {
        let _ = writeln!(o, "In memory: {}", by_node.join(", "));
    }
    let _ = writeln!(o, "Verdict: {}", s.verdict);
}

/// `dbio mem --topology`.
pub fn topology_text(t: &Topology, m: &MemInfo, thp: Option<&str>) -> String {
    let mut o = machine_lines(t);
    let _ = writeln!(
        o,
        "Memory: {} available of {}; huge pages {} free of {} ({} each); transparent huge pages: {}",
        human_bytes(m.available_bytes),
        human_bytes(m.total_bytes),
        m.huge_pages_free,
        m.huge_pages_total,
        size_label(m.huge_page_bytes),
        thp.unwrap_or("not available")
    );
    if t.nodes.len() > 1 {
        let _ = write!(o, "\nDistances{:<5}", "");
        for n in &t.nodes {
            let _ = write!(o, "{:>8}", format!("node {}", n.id));
        }
        o.push('\n');
        for (i, row) in t.distance.iter().enumerate() {
            let _ = write!(o, "{:<14}", format!("  node {}", t.nodes[i].id));
            for d in row {
                let _ = write!(o, "{d:>8}");
            }
            o.push('\n');
        }
        let _ = writeln!(
            o,
            "\n{:<10} {:>10} {:>12} {:>12} {:>10}",
            "Node", "CPUs", "memory", "free", "huge free"
        );
        for n in &t.nodes {
            let _ = writeln!(
                o,
                "{:<10} {:>10} {:>12} {:>12} {:>10}",
                format!("node {}", n.id),
                n.cpus.len(),
                human_bytes(n.memory_bytes),
                human_bytes(n.free_bytes),
                n.huge_pages_free
            );
        }
    }
    o
}

/// `dbio runs`: the memory runs, one line each.
pub fn runs_table(runs: &[crate::store::MemRunListing]) -> String {
    let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".to_string(), f);
    let header = [
        "ID",
        "Started",
        "Kind",
        "Pages",
        "Max size",
        "L1 ns",
        "Memory ns",
        "Nodes",
        "Interleave",
        "Load GiB/s",
        "Shared memory",
    ]
    .map(String::from);
    let rows = runs.iter().map(|listed| {
        let r = &listed.figures;
        // Text from the store, which anyone may have written: shown escaped.
        let text = |s: &str| crate::units::shown(s).into_owned();
        let cells = [
            listed.id.to_string(),
            text(&r.started_at),
            text(&r.kind),
            text(&r.pages),
            r.max_size_bytes.map_or("-".to_string(), size_label),
            opt(r.l1_ns, ns),
            opt(r.memory_ns, ns),
            r.nodes.to_string(),
            opt(r.interleave_ns, ns),
            opt(r.loaded_max_gib_s, |v| format!("{v:.2}")),
            match (&r.shm_target, r.shm_pages) {
                (Some(t), Some(p)) => format!("{}: {} pages", text(t), thousands(p)),
                _ => "-".to_string(),
            },
        ];
        (cells, r.partial)
    });
    let mut o = String::new();
    for (c, partial) in std::iter::once((header, false)).chain(rows) {
        let _ = writeln!(
            o,
            "{:>5}  {:<20}  {:<9} {:<5} {:>8} {:>8} {:>10} {:>5} {:>12} {:>10}  {}{}",
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            c[5],
            c[6],
            c[7],
            c[8],
            c[9],
            c[10],
            if partial { "  partial" } else { "" }
        );
    }
    o
}

/// Each level's latency and the working set it was read at; a level without a working set
/// inside it shows "—" and why, rather than a figure taken from a neighbouring level.
fn levels_line(levels: &[LevelJson]) -> String {
    levels
        .iter()
        .map(|l| match (l.ns, l.at_size_bytes, &l.note) {
            (Some(v), Some(at), _) => format!("{} {} ns (at {})", l.name, ns(v), human_bytes(at)),
            (_, _, Some(note)) => format!("{} — ({note})", l.name),
            _ => format!("{} —", l.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::mem::bench::{Cell, Matrix};
    use crate::mem::chase::Sample;
    use crate::mem::result::{self, tests::seed_001_latency};

    fn sample(v: f64) -> Sample {
        Sample {
            median: v,
            min: v * 0.99,
            max: v * 1.02,
            p25: v * 0.995,
            p75: v * 1.005,
            reps: 12,
            preempted: 0,
            stable: true,
        }
    }

    /// Seed 001's machine as `dbio mem` would report it: the topology from the fixture,
    /// the latencies lat_mem_rd measured there (bandwidths made up, halving per hop).
    pub(crate) fn four_node_numa() -> (Topology, NumaJson) {
        let root = crate::storage::sysfs::SysRoot::at(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/mem-sysfs/four_node_2hop"),
        );
        let topo = crate::mem::topology::read(&root, 0);
        let lat = seed_001_latency();
        let cell = |i: usize, j: usize| {
            let l = lat[i][j].unwrap();
            Some(Cell {
                latency: sample(l),
                bandwidth: Some(sample(if i == j { 38.0 } else { 38.0 * 53.7 / l })),
                threads: 8,
                placement: [(j as i32, 1024)].into(),
            })
        };
        let m = Matrix {
            size_bytes: 256 << 20,
            cpu_nodes: vec![0, 1, 2, 3],
            mem_nodes: vec![0, 1, 2, 3],
            cells: (0..4)
                .map(|i| (0..4).map(|j| cell(i, j)).collect())
                .collect(),
            interleave: (0..4)
                .map(|_| {
                    Some(Cell {
                        latency: sample(183.2),
                        bandwidth: Some(sample(21.5)),
                        threads: 8,
                        placement: [(0, 256), (1, 256), (2, 256), (3, 256)].into(),
                    })
                })
                .collect(),
            notes: Vec::new(),
            complete: true,
        };
        let numa = result::numa_json(&m, &topo);
        (topo, numa)
    }

    #[test]
    fn a_four_node_matrix_shows_distances_and_flags_the_hidden_hop() {
        let (_, n) = four_node_numa();
        assert_eq!(n.interleave_ns, Some(183.2));
        assert_eq!(n.placement_pct[1][1], Some(100.0));
        let mut o = String::new();
        numa(&mut o, &n);
        eprintln!("{o}");
        assert!(o.contains("!248 (21)"), "{o}");
        assert!(o.contains("53.7 (10)"), "{o}");
        assert_eq!(o.matches("\n! CPU node").count(), 4, "{o}");
        assert!(o.contains("CPU node 0 → memory node 3: 248.3 ns, 14 % above the 217.0 ns typical of distance 21"), "{o}");
        assert!(o.contains("  CPU node 3           !248 (21)      217 (21)      211 (21)     53.9 (10)           183"), "{o}");
        let t = topology_text(&read_topology(), &MemInfo::default(), Some("always"));
        assert!(t.contains("NUMA: 4 node(s)"), "{t}");
    }

    #[test]
    fn a_level_without_a_working_set_inside_shows_a_dash_and_why() {
        let level = |name: &str, ns: Option<f64>, at: Option<u64>, note: Option<&str>| LevelJson {
            name: name.into(),
            size_bytes: None,
            ns,
            at_size_bytes: at,
            note: note.map(String::from),
        };
        let line = levels_line(&[
            level("L1d", Some(1.25), Some(16 << 10), None),
            level(
                "L2",
                None,
                None,
                Some("no working set of the curve is above 32K and within 256K"),
            ),
        ]);
        assert!(line.starts_with("L1d 1.25 ns (at 16"), "{line}");
        assert!(
            line.ends_with("L2 — (no working set of the curve is above 32K and within 256K)"),
            "{line}"
        );
    }

    fn read_topology() -> Topology {
        four_node_numa().0
    }
}
