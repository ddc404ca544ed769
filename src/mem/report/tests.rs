use super::*;
use crate::mem::bench::{Cell, Matrix};
use crate::mem::chase::Sample;
use crate::mem::result::{self, tests::seed_001_latency};
use crate::report::summary::text;

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

/// The four-node fixture machine (a published NUMA latency matrix) as `dbio mem` would report it: the topology from the fixture,
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

/// The text of a section alone, as summary.txt shows it.
fn section_text(s: Section) -> String {
    text(&Report {
        title: String::new(),
        sections: vec![s],
    })
}

#[test]
fn a_four_node_matrix_shows_distances_and_flags_the_hidden_hop() {
    let (_, n) = four_node_numa();
    assert_eq!(n.interleave_ns, Some(183.2));
    assert_eq!(n.placement_pct[1][1], Some(100.0));
    let s = numa(&n);
    let tables: Vec<&Table> = (s.blocks.iter())
        .filter_map(|b| match b {
            Block::Table(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(tables.len(), 2, "latency and bandwidth");
    let row3: Vec<&str> = tables[0].rows[3].iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        row3,
        [
            "CPU node 3",
            "!248 (21)",
            "217 (21)",
            "211 (21)",
            "53.9 (10)",
            "183"
        ]
    );
    let o = section_text(s);
    stderr_line!("{o}");
    assert!(o.contains("!248 (21)"), "{o}");
    assert!(o.contains("53.7 (10)"), "{o}");
    assert_eq!(o.matches("\n- CPU node").count(), 4, "{o}");
    assert!(
        o.contains(
            "CPU node 0 → memory node 3: 248.3 ns, 14 % above the 217.0 ns typical of distance 21"
        ),
        "{o}"
    );
    let page = crate::report::html::page(&Report {
        title: "t".into(),
        sections: vec![numa(&n)],
    });
    assert_eq!(page.matches("<table>").count(), 2, "{page}");
    assert_eq!(page.matches(">!24").count(), 4, "{page}");
    let t = text(&topology(
        &read_topology(),
        &MemInfo::default(),
        Some("always"),
    ));
    assert!(t.contains("NUMA: 4 node(s)"), "{t}");
    assert!(t.contains("\nDistances"), "{t}");
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
