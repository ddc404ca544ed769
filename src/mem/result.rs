//! `result.json` of `dbio mem` (schema `dbio.mem.v1`), made from the measurements' plain
//! figures, and what is read out of them: cache levels on the curve, NUMA pairs whose
//! latency is out of line with their distance, and whether shared memory sits on one node.
//!
//! Fields tools rely on: `curve: [{size_bytes, ns}]`; `numa: {nodes, distance, latency_ns,
//! bandwidth_gib_s, interleave_ns}`; `loaded: [{threads, bandwidth_gib_s, latency_ns}]`;
//! `pages`; with `--shm`/`--pid`: `pages_by_node: {"0": n, ...}`. New fields may be added.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::bench::{Cell, Curve, Loaded, Matrix, Placement};
use super::shm::{FilePlacement, ProcessPlacement};
use super::topology::Topology;
use crate::report::result::HostJson;
use crate::units::size_label;

pub const SCHEMA: &str = "dbio.mem.v1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemResult {
    pub schema: String,
    pub dbio_version: String,
    pub started_at: String,
    /// Wall time of the whole run, allocation included.
    pub elapsed_s: f64,
    /// True when stopped by a signal before every part was measured.
    pub partial: bool,
    pub stop_reason: String,
    pub host: HostJson,
    /// The 1-minute load average when the run started and ended (/proc/loadavg): other
    /// work on the machine moves every figure beyond the caches.
    pub load_average: [f64; 2],
    pub config: MemConfig,
    /// The pages behind the measured memory: "4k", "thp" or "huge".
    pub pages: String,
    pub page_size: PageSize,
    pub topology: Topology,
    /// Latency by working-set size, sizes ascending; null when not measured.
    pub curve: Option<Vec<CurvePointJson>>,
    /// The cache levels marked on the curve, and memory.
    pub levels: Vec<LevelJson>,
    pub numa: Option<NumaJson>,
    pub loaded: Option<Vec<LoadedJson>>,
    /// `--shm` / `--pid`: where shared memory lives.
    pub shm: Option<ShmJson>,
    /// `--shm` / `--pid`: pages per node ({"0": n}); null otherwise.
    pub pages_by_node: Option<BTreeMap<String, u64>>,
    pub warnings: Vec<String>,
}

/// Every choice that shaped the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemConfig {
    /// What was measured: "curve", "numa", "loaded", or "shm".
    pub parts: Vec<String>,
    pub sizes: Vec<u64>,
    pub budget_s: f64,
    pub pages_requested: String,
    pub allow_fallback: bool,
    pub numa_size_bytes: u64,
    pub loaded_size_bytes: u64,
    pub reader_bytes: u64,
    pub thread_counts: Vec<usize>,
    pub cpu: usize,
    pub line_bytes: u64,
    pub seed: u64,
    pub clock: String,
    pub out: String,
    pub shm: Option<String>,
    pub pid: Option<u32>,
}

/// The page size asked for and the one used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageSize {
    pub requested: String,
    pub used: String,
    /// Bytes of the pages used: the base page, or the huge page size for thp and huge.
    pub bytes: u64,
    /// For thp and huge: how much of the curve's buffer the kernel really backed with huge
    /// pages (always all of it for hugetlb).
    pub huge_backed_pct: Option<f64>,
    /// Why the pages used differ from those asked for.
    pub fallback: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurvePointJson {
    pub size_bytes: u64,
    /// ns per load: the median repetition.
    pub ns: f64,
    pub min_ns: f64,
    pub max_ns: f64,
    pub p25_ns: f64,
    pub p75_ns: f64,
    /// (p75 - p25) / median, %.
    pub spread_pct: f64,
    pub reps: usize,
    /// Repetitions left out because the chasing thread lost its CPU during them. Equal to
    /// `reps` when no repetition was clean: `ns` is then the least disturbed one.
    pub preempted_reps: usize,
    pub loads: u64,
    /// The middle half of the repetitions agreed within 2 % before the budget ran out.
    pub stable: bool,
    /// The smallest level that holds this working set: "L1d", "L2", "L3" or "memory".
    pub level: String,
}

/// A cache level (or memory) with the latency measured for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelJson {
    pub name: String,
    /// The level's size (None for memory).
    pub size_bytes: Option<u64>,
    /// The latency at the curve point that stands for the level: a working set inside it
    /// (larger than the level below, at most this level's size), the one nearest the middle
    /// on a log scale, preferring those well inside (from twice the level below to half of
    /// this one); for memory, the largest size beyond the last cache. None when no point of
    /// the curve lies inside the level: no figure is borrowed from another level.
    pub ns: Option<f64>,
    pub at_size_bytes: Option<u64>,
    /// Why `ns` is missing: which working sets would lie inside the level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NumaJson {
    /// Every online node; rows are CPU nodes, columns memory nodes, in this order.
    pub nodes: Vec<u32>,
    /// From sysfs: the firmware's distances (10 = local).
    pub distance: Vec<Vec<u32>>,
    /// Idle latency, ns per load, from one CPU of the row's node to memory bound to the
    /// column's node; null for a node without CPUs (row) or memory (column).
    pub latency_ns: Vec<Vec<Option<f64>>>,
    pub latency_spread_pct: Vec<Vec<Option<f64>>>,
    /// Read bandwidth of all of the row node's CPUs, GiB/s.
    pub bandwidth_gib_s: Vec<Vec<Option<f64>>>,
    /// Memory interleaved over every memory node: the mean latency over the CPU nodes.
    pub interleave_ns: Option<f64>,
    /// Interleaved memory from each CPU node, in `nodes` order (null for nodes without
    /// CPUs): the matrix's extra column.
    pub interleave_ns_by_cpu_node: Vec<Option<f64>>,
    pub interleave_gib_s_by_cpu_node: Vec<Option<f64>>,
    /// Share of the sampled pages found on the node they were bound to, %.
    pub placement_pct: Vec<Vec<Option<f64>>>,
    pub threads_per_node: Vec<usize>,
    pub size_bytes: u64,
    /// Pairs whose latency is out of line with their distance.
    pub out_of_line: Vec<OutOfLine>,
    pub notes: Vec<String>,
}

/// A NUMA pair slower than the distance table says: a hidden second hop (docs/mem.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutOfLine {
    pub cpu_node: u32,
    pub mem_node: u32,
    pub distance: u32,
    pub latency_ns: f64,
    /// The median latency of all pairs at this distance.
    pub typical_ns: f64,
    pub excess_pct: f64,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedJson {
    /// Threads reading memory beside the chasing one.
    pub threads: usize,
    /// What they read, GiB/s.
    pub bandwidth_gib_s: f64,
    /// The chasing thread's ns per load: the middle one of the rounds.
    pub latency_ns: f64,
    /// Each round's ns per load (rounds alternate over the thread counts, forth and back).
    pub round_ns: Vec<f64>,
    /// How busy the other CPUs were meanwhile (with 0 threads: other work only).
    pub other_cpus_busy_pct: Option<f64>,
    pub spread_pct: f64,
    pub stable: bool,
    pub reps: usize,
    pub preempted_reps: usize,
    pub cpus: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShmJson {
    /// "file" (`--shm`) or "process" (`--pid`).
    pub kind: String,
    pub file: Option<FilePlacement>,
    pub process: Option<ProcessPlacement>,
    /// Bytes per node (pages of a process can have several sizes).
    pub bytes_by_node: BTreeMap<String, u64>,
    /// One line: where the memory is, and whether that is a problem.
    pub verdict: String,
}

/// A latency in ns is out of line when it exceeds the median of its distance class by this.
pub const OUT_OF_LINE: f64 = 0.10;

/// Remote pairs slower than the other pairs at the same distance by more than
/// [`OUT_OF_LINE`]: the distance table calls them equal, the memory does not. A class needs
/// three pairs for its median to mean something.
pub fn out_of_line(
    nodes: &[u32],
    distance: &[Vec<u32>],
    latency: &[Vec<Option<f64>>],
) -> Vec<OutOfLine> {
    let mut classes: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    let pairs = || (0..nodes.len()).flat_map(move |i| (0..nodes.len()).map(move |j| (i, j)));
    for (i, j) in pairs() {
        if let (Some(&d), Some(Some(l))) = (
            distance.get(i).and_then(|r| r.get(j)),
            latency.get(i).and_then(|r| r.get(j)),
        ) && i != j
        {
            classes.entry(d).or_default().push(*l);
        }
    }
    let medians: BTreeMap<u32, f64> = classes
        .into_iter()
        .filter(|(_, v)| v.len() >= 3)
        .map(|(d, mut v)| {
            v.sort_by(f64::total_cmp);
            (d, v[v.len() / 2])
        })
        .collect();
    let mut out = Vec::new();
    for (i, j) in pairs() {
        let (Some(&d), Some(Some(l))) = (
            distance.get(i).and_then(|r| r.get(j)),
            latency.get(i).and_then(|r| r.get(j)),
        ) else {
            continue;
        };
        let Some(&typical) = medians.get(&d) else {
            continue;
        };
        if i == j || *l <= typical * (1.0 + OUT_OF_LINE) {
            continue;
        }
        let excess_pct = (l / typical - 1.0) * 100.0;
        out.push(OutOfLine {
            cpu_node: nodes[i],
            mem_node: nodes[j],
            distance: d,
            latency_ns: *l,
            typical_ns: typical,
            excess_pct,
            message: format!(
                "CPU node {} → memory node {}: {:.1} ns, {:.0} % above the {:.1} ns typical of distance {d}: a hop the distance table does not show",
                nodes[i], nodes[j], l, excess_pct, typical
            ),
        });
    }
    out
}

/// The level of the memory hierarchy that holds a working set of `size` bytes.
pub fn level_of(size: u64, topo: &Topology) -> String {
    topo.caches
        .iter()
        .find(|c| size <= c.size_bytes)
        .map_or_else(|| "memory".to_string(), |c| c.name())
}

/// The cache levels (and memory) with the latency the curve shows for each, each read only
/// from a working set inside that level (see [`LevelJson::ns`]).
pub fn levels(curve: &[CurvePointJson], topo: &Topology) -> Vec<LevelJson> {
    let smallest = curve.first().map_or(1, |p| p.size_bytes.max(1));
    let mut below = 0u64;
    let mut out: Vec<LevelJson> = topo
        .caches
        .iter()
        .map(|c| {
            let (lo, hi) = (below, c.size_bytes);
            below = below.max(c.size_bytes);
            let p = point_inside(curve, lo, hi, smallest);
            LevelJson {
                name: c.name(),
                size_bytes: Some(c.size_bytes),
                ns: p.map(|p| p.ns),
                at_size_bytes: p.map(|p| p.size_bytes),
                note: p.is_none().then(|| match lo {
                    0 => format!("no working set of the curve fits in {}", size_label(hi)),
                    _ => format!(
                        "no working set of the curve is above {} and within {}",
                        size_label(lo),
                        size_label(hi)
                    ),
                }),
            }
        })
        .collect();
    let llc = topo.llc_bytes();
    let last = curve
        .last()
        .filter(|p| llc.is_none_or(|llc| p.size_bytes > llc));
    out.push(LevelJson {
        name: "memory".into(),
        size_bytes: None,
        ns: last.map(|p| p.ns),
        at_size_bytes: last.map(|p| p.size_bytes),
        note: last.is_none().then(|| {
            format!(
                "no working set of the curve is larger than the last cache ({})",
                llc.map_or("?".into(), size_label)
            )
        }),
    });
    out
}

/// The curve point that stands for a level holding working sets in `lo` (excluded) ..
/// `hi` (included): among the points inside, those well inside (2 × `lo` .. `hi` / 2) first,
/// then the one nearest the level's middle on a log scale (for the first level, the middle
/// between the curve's smallest size and `hi`). None when no point lies inside.
fn point_inside(
    curve: &[CurvePointJson],
    lo: u64,
    hi: u64,
    smallest: u64,
) -> Option<&CurvePointJson> {
    let middle = ((lo.max(smallest) as f64) * hi as f64).sqrt().ln();
    let distance = |p: &CurvePointJson| ((p.size_bytes as f64).ln() - middle).abs();
    let nearest = |well: bool| {
        curve
            .iter()
            .filter(|p| lo < p.size_bytes && p.size_bytes <= hi)
            .filter(|p| {
                !well
                    || (lo.saturating_mul(2) <= p.size_bytes
                        && p.size_bytes.saturating_mul(2) <= hi)
            })
            .min_by(|a, b| distance(a).total_cmp(&distance(b)))
    };
    nearest(true).or_else(|| nearest(false))
}

pub fn curve_json(c: &Curve, topo: &Topology) -> Vec<CurvePointJson> {
    c.points
        .iter()
        .map(|p| {
            let s = &p.sample;
            CurvePointJson {
                size_bytes: p.size_bytes,
                ns: s.median,
                min_ns: s.min,
                max_ns: s.max,
                p25_ns: s.p25,
                p75_ns: s.p75,
                spread_pct: s.spread_pct(),
                reps: s.reps,
                preempted_reps: s.preempted,
                loads: p.loads,
                stable: s.stable,
                level: level_of(p.size_bytes, topo),
            }
        })
        .collect()
}

/// The matrix over every online node (rows and columns in `topo.nodes` order).
pub fn numa_json(m: &Matrix, topo: &Topology) -> NumaJson {
    let nodes: Vec<u32> = topo.nodes.iter().map(|n| n.id).collect();
    let n = nodes.len();
    let row_of = |id: u32| m.cpu_nodes.iter().position(|&c| c == id);
    let col_of = |id: u32| m.mem_nodes.iter().position(|&c| c == id);
    let grid = |f: &dyn Fn(&Cell, u32) -> Option<f64>| -> Vec<Vec<Option<f64>>> {
        nodes
            .iter()
            .map(|&r| {
                nodes
                    .iter()
                    .map(|&c| {
                        let cell = m.cells.get(row_of(r)?)?.get(col_of(c)?)?.as_ref()?;
                        f(cell, c)
                    })
                    .collect()
            })
            .collect()
    };
    let latency_ns = grid(&|c, _| Some(c.latency.median));
    let row = |f: &dyn Fn(&Cell) -> Option<f64>| -> Vec<Option<f64>> {
        nodes
            .iter()
            .map(|&r| m.interleave.get(row_of(r)?)?.as_ref().and_then(f))
            .collect()
    };
    let interleave_ns_by_cpu_node = row(&|c| Some(c.latency.median));
    let measured: Vec<f64> = interleave_ns_by_cpu_node
        .iter()
        .flatten()
        .copied()
        .collect();
    let out_of_line = out_of_line(&nodes, &topo.distance, &latency_ns);
    NumaJson {
        latency_spread_pct: grid(&|c, _| Some(c.latency.spread_pct())),
        bandwidth_gib_s: grid(&|c, _| c.bandwidth.map(|b| b.median)),
        placement_pct: grid(&|c, node| Some(share_on(&c.placement, node))),
        interleave_ns: (!measured.is_empty())
            .then(|| measured.iter().sum::<f64>() / measured.len() as f64),
        interleave_gib_s_by_cpu_node: row(&|c| c.bandwidth.map(|b| b.median)),
        interleave_ns_by_cpu_node,
        threads_per_node: nodes
            .iter()
            .map(|&r| {
                row_of(r)
                    .and_then(|i| m.cells[i].iter().flatten().next())
                    .map_or(0, |c| c.threads)
            })
            .collect(),
        size_bytes: m.size_bytes,
        distance: if topo.distance.len() == n {
            topo.distance.clone()
        } else {
            vec![vec![10; n]; n]
        },
        latency_ns,
        out_of_line,
        notes: m.notes.clone(),
        nodes,
    }
}

/// Share of sampled pages found on `node`, %.
pub fn share_on(p: &Placement, node: u32) -> f64 {
    let total: u64 = p.values().sum();
    if total == 0 {
        return 0.0;
    }
    p.get(&(node as i32)).copied().unwrap_or(0) as f64 / total as f64 * 100.0
}

pub fn loaded_json(l: &Loaded) -> Vec<LoadedJson> {
    l.points
        .iter()
        .map(|p| LoadedJson {
            threads: p.threads,
            bandwidth_gib_s: p.bandwidth_gib_s,
            latency_ns: p.latency.median,
            round_ns: p.round_ns.clone(),
            other_cpus_busy_pct: p.other_cpus_busy_pct,
            spread_pct: p.latency.spread_pct(),
            stable: p.latency.stable,
            reps: p.latency.reps,
            preempted_reps: p.latency.preempted,
            cpus: p.cpus.clone(),
        })
        .collect()
}

/// Pages and bytes per node of a file or a process, and the verdict on them.
pub fn shm_json(
    file: Option<FilePlacement>,
    process: Option<ProcessPlacement>,
    memory_nodes: usize,
) -> (ShmJson, BTreeMap<String, u64>) {
    let mut pages: BTreeMap<u32, u64> = BTreeMap::new();
    let mut bytes: BTreeMap<u32, u64> = BTreeMap::new();
    let mut add = |node: u32, n: u64, page: u64| {
        *pages.entry(node).or_insert(0) += n;
        *bytes.entry(node).or_insert(0) += n * page;
    };
    if let Some(f) = &file {
        for (&node, &n) in &f.pages_by_node {
            add(node, n, f.page_bytes);
        }
    }
    if let Some(p) = &process {
        for s in &p.segments {
            for (&node, &n) in &s.pages_by_node {
                add(node, n, s.page_bytes);
            }
        }
    }
    let mpol = file
        .as_ref()
        .and_then(|f| f.mount.as_ref())
        .and_then(|m| m.mpol.clone());
    let verdict = verdict(&bytes, memory_nodes, mpol.as_deref());
    let strings = |m: &BTreeMap<u32, u64>| m.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let by_node = strings(&pages);
    (
        ShmJson {
            kind: if file.is_some() { "file" } else { "process" }.into(),
            file,
            process,
            bytes_by_node: strings(&bytes),
            verdict,
        },
        by_node,
    )
}

/// Whether memory shared by processes on every node sits on one of them.
fn verdict(bytes: &BTreeMap<u32, u64>, memory_nodes: usize, mpol: Option<&str>) -> String {
    let total: u64 = bytes.values().sum();
    if total == 0 {
        return "no pages in memory".into();
    }
    let (&top, &most) = bytes.iter().max_by_key(|(_, b)| **b).expect("not empty");
    let share = most as f64 / total as f64 * 100.0;
    if memory_nodes <= 1 {
        return format!(
            "all in memory on node {top} (the only node with memory: nothing can be remote)"
        );
    }
    if share >= 90.0 {
        let policy = match mpol {
            Some(p) if p.starts_with("interleave") => format!(
                "; the mount asks for mpol={p} but the pages are not interleaved (were they allocated before the policy was set, or by a process with its own policy?)"
            ),
            _ => String::new(),
        };
        format!(
            "{share:.0} % on node {top}: processes on the other nodes read it remotely (the \"Cyclops\" case){policy}"
        )
    } else {
        let parts: Vec<String> = bytes
            .iter()
            .map(|(n, b)| format!("node {n} {:.0} %", *b as f64 / total as f64 * 100.0))
            .collect();
        format!("spread over nodes: {}", parts.join(", "))
    }
}

impl MemResult {
    /// What the results store keeps of this run: headline figures and the result.json.
    pub fn record(&self) -> crate::error::Result<crate::store::MemRecord> {
        let level = |name: &str| {
            self.levels
                .iter()
                .find(|l| l.name == name)
                .and_then(|l| l.ns)
        };
        Ok(crate::store::MemRecord {
            figures: crate::store::MemFigures {
                started_at: self.started_at.clone(),
                kind: if self.pages_by_node.is_some() {
                    "placement"
                } else {
                    "latency"
                }
                .into(),
                pages: self.pages.clone(),
                max_size_bytes: self
                    .curve
                    .as_ref()
                    .and_then(|c| c.last())
                    .map(|p| p.size_bytes),
                l1_ns: self.levels.first().and_then(|l| l.ns),
                memory_ns: level("memory"),
                nodes: self.topology.nodes.len() as u64,
                interleave_ns: self.numa.as_ref().and_then(|n| n.interleave_ns),
                loaded_max_gib_s: self
                    .loaded
                    .as_ref()
                    .and_then(|l| l.iter().map(|p| p.bandwidth_gib_s).reduce(f64::max)),
                shm_target: self
                    .config
                    .shm
                    .clone()
                    .or_else(|| self.config.pid.map(|p| format!("pid {p}"))),
                shm_pages: self.pages_by_node.as_ref().map(|m| m.values().sum::<u64>()),
                partial: self.partial,
            },
            hostname: self.host.hostname.clone(),
            dbio_version: self.dbio_version.clone(),
            schema: self.schema.clone(),
            json: super::json_text(self)?,
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The lat_mem_rd figures of a 4-socket machine with a hidden second hop (docs/mem.md,
    /// "More than one node"; 20 MB working set, ns) from CPU node 0, completed
    /// symmetrically for the other rows: node 3 is two hops from node 0 and node 2 from
    /// node 1, though every remote distance is 21.
    pub(crate) fn seed_001_latency() -> Vec<Vec<Option<f64>>> {
        [
            [53.7, 211.5, 217.2, 248.3],
            [211.0, 53.5, 247.9, 216.8],
            [216.9, 248.6, 53.6, 211.2],
            [248.1, 217.0, 211.4, 53.9],
        ]
        .iter()
        .map(|r| r.iter().map(|&v| Some(v)).collect())
        .collect()
    }

    /// A made-up machine with caches of `sizes` (first L1d, then unified L2, L3, ...).
    fn caches(sizes: &[u64]) -> Topology {
        Topology {
            cache_cpu: 0,
            caches: sizes
                .iter()
                .enumerate()
                .map(|(i, &s)| crate::mem::topology::Cache {
                    level: i as u32 + 1,
                    kind: if i == 0 { "Data" } else { "Unified" }.into(),
                    size_bytes: s,
                    line_bytes: 64,
                    shared_cpus: vec![0],
                })
                .collect(),
            nodes: Vec::new(),
            distance: Vec::new(),
            numa_in_sysfs: false,
        }
    }

    /// A made-up curve: at each working set of `sizes`, the latency of the level that holds it
    /// (1, 4, 15 ns for the caches, 90 ns for memory), so a figure read from the wrong level
    /// shows.
    fn curve(sizes: &[u64], topo: &Topology) -> Vec<CurvePointJson> {
        sizes
            .iter()
            .map(|&s| {
                let level = level_of(s, topo);
                let ns = match level.as_str() {
                    "L1d" => 1.0,
                    "L2" => 4.0,
                    "L3" => 15.0,
                    _ => 90.0,
                };
                CurvePointJson {
                    size_bytes: s,
                    ns,
                    min_ns: ns,
                    max_ns: ns,
                    p25_ns: ns,
                    p75_ns: ns,
                    spread_pct: 0.0,
                    reps: 3,
                    preempted_reps: 0,
                    loads: 1000,
                    stable: true,
                    level,
                }
            })
            .collect()
    }

    const K: u64 = 1 << 10;
    const M: u64 = 1 << 20;

    #[test]
    fn each_level_is_read_well_inside_itself() {
        // 48K L1d, 1.25M L2, 30M L3 (sizes that are not powers of two), points 4K..256M
        // at four per doubling.
        let topo = caches(&[48 * K, 1280 * K, 30 * M]);
        let sizes = crate::mem::args::sizes_between(4 * K, 256 * M, 4, 64);
        let c = curve(&sizes, &topo);
        let l = levels(&c, &topo);
        let names: Vec<&str> = l.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["L1d", "L2", "L3", "memory"]);
        let bounds = [(0, 48 * K), (48 * K, 1280 * K), (1280 * K, 30 * M)];
        for ((level, (lo, hi)), want) in l.iter().zip(bounds).zip([1.0, 4.0, 15.0]) {
            let at = level.at_size_bytes.unwrap();
            assert!(
                2 * lo <= at && 2 * at <= hi,
                "{level:?}: well inside {lo}..{hi}"
            );
            assert_eq!(level.ns, Some(want), "{level:?}");
            assert!(level.note.is_none());
        }
        // The middle of L2 on a log scale is √(48K × 1.25M) ≈ 245K.
        let l2 = l[1].at_size_bytes.unwrap();
        assert!((200 * K..=300 * K).contains(&l2), "{l2}");
        assert_eq!(l[3].at_size_bytes, Some(256 * M));
        assert_eq!(l[3].ns, Some(90.0));
    }

    #[test]
    fn a_level_without_a_point_inside_gets_no_figure_from_another() {
        // A coarse curve (--sizes 8K,16K,32K,512K,8M): nothing between L1d (32K) and L2
        // (256K), and nothing beyond L3 (8M). The L2 figure is not taken from 32K (L1d)
        // nor from 512K (L3), and memory's not from 8M (L3).
        let topo = caches(&[32 * K, 256 * K, 8 * M]);
        let c = curve(&[8 * K, 16 * K, 32 * K, 512 * K, 8 * M], &topo);
        let l = levels(&c, &topo);
        assert_eq!(l[0].ns, Some(1.0));
        assert!(l[0].at_size_bytes.unwrap() <= 16 * K, "{:?}", l[0]);
        assert_eq!((l[1].ns, l[1].at_size_bytes), (None, None), "{:?}", l[1]);
        let note = l[1].note.as_deref().unwrap();
        assert!(note.contains("32K") && note.contains("256K"), "{note}");
        // Only points inside L3: 512K is well inside (≥ 2 × 256K, ≤ 4M).
        assert_eq!((l[2].ns, l[2].at_size_bytes), (Some(15.0), Some(512 * K)));
        assert_eq!((l[3].ns, l[3].at_size_bytes), (None, None));
        assert!(l[3].note.as_deref().unwrap().contains("8M"), "{:?}", l[3]);
    }

    #[test]
    fn a_point_just_inside_a_level_is_used_when_none_is_well_inside() {
        // L2 is 64K over a 48K L1d: 56K and 64K are inside but not well inside (2 × 48K is
        // more than 64K); the figure comes from one of them, never from 48K or 128K.
        let topo = caches(&[48 * K, 64 * K, 4 * M]);
        let c = curve(&[16 * K, 48 * K, 56 * K, 64 * K, 128 * K, M, 16 * M], &topo);
        let l = levels(&c, &topo);
        let at = l[1].at_size_bytes.unwrap();
        assert!(at == 56 * K || at == 64 * K, "{:?}", l[1]);
        assert_eq!(l[1].ns, Some(4.0));
        // L3: 128K and 1M are well inside (128K..2M); on a log scale 1M is twice the middle
        // √(64K × 4M) = 512K away, 128K four times: 1M.
        assert_eq!(l[2].at_size_bytes, Some(M));
    }

    #[test]
    fn the_hidden_second_hop_is_flagged() {
        let d: Vec<Vec<u32>> = (0..4)
            .map(|i| (0..4).map(|j| if i == j { 10 } else { 21 }).collect())
            .collect();
        let flags = out_of_line(&[0, 1, 2, 3], &d, &seed_001_latency());
        let pairs: Vec<(u32, u32)> = flags.iter().map(|f| (f.cpu_node, f.mem_node)).collect();
        assert_eq!(pairs, [(0, 3), (1, 2), (2, 1), (3, 0)]);
        let f = &flags[0];
        assert_eq!((f.distance, f.latency_ns), (21, 248.3));
        assert!((f.excess_pct - 14.3).abs() < 0.5, "{}", f.excess_pct);
        assert!(f.message.contains("distance table"), "{}", f.message);
    }

    #[test]
    fn pairs_in_line_with_their_distance_are_not_flagged() {
        // Two sockets: too few remote pairs to judge; a uniform four-node box: nothing.
        let two = vec![vec![10, 21], vec![21, 10]];
        let lat2 = vec![vec![Some(90.0), Some(140.0)], vec![Some(200.0), Some(90.0)]];
        assert!(out_of_line(&[0, 1], &two, &lat2).is_empty());
        let d: Vec<Vec<u32>> = (0..4)
            .map(|i| (0..4).map(|j| if i == j { 10 } else { 21 }).collect())
            .collect();
        let flat: Vec<Vec<Option<f64>>> = (0..4)
            .map(|i| {
                (0..4)
                    .map(|j| Some(if i == j { 90.0 } else { 140.0 + j as f64 }))
                    .collect()
            })
            .collect();
        assert!(out_of_line(&[0, 1, 2, 3], &d, &flat).is_empty());
        // A missing cell (a node without memory) is skipped.
        let mut holes = flat.clone();
        holes[0][3] = None;
        assert!(out_of_line(&[0, 1, 2, 3], &d, &holes).is_empty());
    }

    #[test]
    fn shared_memory_on_one_node_is_called_out() {
        let one = BTreeMap::from([(1, 4096 * 4096)]);
        let v = verdict(&one, 4, Some("interleave:0-3"));
        assert!(v.starts_with("100 % on node 1"), "{v}");
        assert!(v.contains("mpol=interleave:0-3"), "{v}");
        let spread = BTreeMap::from([(0, 100), (1, 100)]);
        assert_eq!(
            verdict(&spread, 2, None),
            "spread over nodes: node 0 50 %, node 1 50 %"
        );
        assert!(verdict(&one, 1, None).contains("only node"));
        assert_eq!(verdict(&BTreeMap::new(), 2, None), "no pages in memory");
    }
}
