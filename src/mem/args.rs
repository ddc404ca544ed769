//! `dbio mem` as typed ([`MemArgs`]) and as validated against the machine ([`MemTest`]):
//! every size checked against free memory and every CPU against the ones dbio may use,
//! before anything is allocated or created.

use clap::Args;

use super::bench::{CpuNode, Load, Memory};
use super::buffer::THP_BYTES;
use super::chase::Budget;
use super::topology::{MemInfo, Topology, format_cpu_list};
use crate::error::{Error, Result};
use crate::options::cli::MemOptions;
pub use crate::options::mem::{MemValues, PageKind, Part};
use crate::units::{human_bytes, size_label};

/// Memory latency by working-set size, the NUMA matrix, loaded latency — or where shared
/// memory lives (`--shm`, `--pid`).
#[derive(Debug, Clone, Args)]
pub struct MemArgs {
    /// The options of the table it takes: its own (`--min-size` ... `--topology`, read as
    /// the fields of [`MemValues`] through this struct), `--seed` (of the random cycles),
    /// `--out`, `--json`, `--quiet`.
    #[command(flatten)]
    pub options: MemOptions,
}

/// `a.min_size`: the command's own options, as the table's rows read them.
impl std::ops::Deref for MemArgs {
    type Target = MemValues;

    fn deref(&self) -> &MemValues {
        &self.options.0.mem
    }
}

/// What the planner needs to know about the machine.
#[derive(Debug, Clone)]
pub struct Machine {
    pub topology: Topology,
    pub meminfo: MemInfo,
    /// CPUs dbio may run on.
    pub allowed_cpus: Vec<usize>,
    /// Transparent huge pages: "always", "madvise", "never".
    pub thp: Option<String>,
}

/// A measurement, validated: what to measure, on what, with what memory.
#[derive(Debug, Clone)]
pub struct MemTest {
    pub parts: Vec<Part>,
    pub sizes: Vec<u64>,
    pub memory: Memory,
    pub pages_requested: PageKind,
    pub fallback: Option<String>,
    pub cpu: usize,
    pub numa_size: u64,
    pub cpu_nodes: Vec<CpuNode>,
    pub mem_nodes: Vec<u32>,
    pub load: Load,
    pub warnings: Vec<String>,
}

/// Memory left to everything else while dbio measures.
const RESERVE: u64 = 256 << 20;
/// The smallest working set: 16 lines of the largest line size.
const MIN_SIZE: u64 = 1 << 10;

impl MemTest {
    pub fn new(a: &MemArgs, m: &Machine) -> Result<MemTest> {
        let cpu = match a.cpu {
            Some(c) if !m.allowed_cpus.contains(&c) => {
                return Err(Error::usage(format!(
                    "--cpu {c}: dbio may run on CPUs {} only",
                    format_cpu_list(&m.allowed_cpus)
                )));
            }
            Some(c) => c,
            None => *m
                .allowed_cpus
                .first()
                .ok_or_else(|| Error::other("dbio may run on no CPU at all"))?,
        };
        let topo = &m.topology;
        let line = topo.line_bytes();
        let llc = topo.llc_bytes().unwrap_or(0);
        let mut warnings = Vec::new();
        let parts = if a.only.is_empty() {
            vec![Part::Curve, Part::Numa, Part::Loaded]
        } else {
            let mut p = a.only.clone();
            p.sort();
            p.dedup();
            p
        };
        let has = |p: Part| parts.contains(&p);
        let usable = m.meminfo.available_bytes.saturating_sub(RESERVE);
        // A chase needs its buffer and, while it is built, 4 bytes per line.
        let need = |bytes: u64| bytes + bytes / line * 4;

        let sizes = match &a.sizes {
            Some(list) => {
                let mut v: Vec<u64> = list.iter().map(|&s| s / line * line).collect();
                v.sort_unstable();
                v.dedup();
                if let Some(&s) = list.iter().find(|&&s| s < MIN_SIZE) {
                    return Err(Error::usage(format!(
                        "--sizes: {} is too small (at least {})",
                        size_label(s),
                        size_label(MIN_SIZE)
                    )));
                }
                if v.len() > 256 {
                    return Err(Error::usage("--sizes: at most 256 sizes"));
                }
                v
            }
            None => {
                let default_max = (4 * llc).max(1 << 30).next_power_of_two();
                let max = match a.max_size {
                    Some(s) => s,
                    None if need(default_max) > usable && has(Part::Curve) => {
                        let fit = largest_power_of_two_within(usable * line / (line + 4));
                        warnings.push(format!(
                            "the curve stops at {} instead of {}: MemAvailable is {}",
                            size_label(fit),
                            size_label(default_max),
                            human_bytes(m.meminfo.available_bytes)
                        ));
                        fit
                    }
                    None => default_max,
                };
                if a.min_size < MIN_SIZE {
                    return Err(Error::usage(format!(
                        "--min-size {}: at least {}",
                        size_label(a.min_size),
                        size_label(MIN_SIZE)
                    )));
                }
                if a.min_size > max {
                    return Err(Error::usage(format!(
                        "--min-size {} is larger than --max-size {}",
                        size_label(a.min_size),
                        size_label(max)
                    )));
                }
                sizes_between(a.min_size, max, a.points_per_doubling, line)
            }
        };
        let largest = sizes.last().copied().unwrap_or(0);
        if has(Part::Curve) {
            if largest / line > u32::MAX as u64 {
                return Err(Error::usage(format!(
                    "{}: a working set of at most {} lines",
                    size_option(a),
                    u32::MAX
                )));
            }
            fits(size_option(a), need(largest), usable, m)?;
            if largest <= llc * 4 {
                warnings.push(format!(
                    "the curve stops at {}, not beyond 4 × the last-level cache ({}): its last points may not be memory latency",
                    size_label(largest),
                    size_label(4 * llc)
                ));
            }
        }

        let numa_size = a
            .numa_size
            .unwrap_or_else(|| (4 * llc).max(256 << 20).next_power_of_two());
        let loaded_size = a.loaded_size.unwrap_or(numa_size);
        for (opt, v) in [("--numa-size", numa_size), ("--loaded-size", loaded_size)] {
            if v < 1 << 20 {
                return Err(Error::usage(format!(
                    "{opt} {}: at least 1M",
                    size_label(v)
                )));
            }
            if v / line > u32::MAX as u64 {
                return Err(Error::usage(format!(
                    "{opt} {}: a working set of at most {} lines",
                    size_label(v),
                    u32::MAX
                )));
            }
        }
        if has(Part::Numa) {
            fits("--numa-size", need(numa_size), usable, m)?;
        }

        // Loaded latency: readers on the CPUs nearest the chaser's node first.
        let node_of = |c: usize| topo.node_of_cpu(c).and_then(|n| topo.node_index(n));
        let home = node_of(cpu);
        let mut reader_cpus: Vec<usize> = m
            .allowed_cpus
            .iter()
            .copied()
            .filter(|&c| c != cpu)
            .collect();
        reader_cpus.sort_by_key(|&c| {
            let d = match (home, node_of(c)) {
                (Some(h), Some(n)) => topo
                    .distance
                    .get(h)
                    .and_then(|r| r.get(n))
                    .copied()
                    .unwrap_or(255),
                _ => 255,
            };
            (d, c)
        });
        let reader_bytes = loaded_size;
        let mut most = reader_cpus.len();
        if let Some(t) = a.load_threads {
            if t as usize > reader_cpus.len() {
                return Err(Error::usage(format!(
                    "--load-threads {t}: only {} CPU(s) besides the chasing one (CPU {cpu}) may be used",
                    reader_cpus.len()
                )));
            }
            most = t as usize;
        }
        if has(Part::Loaded) {
            let total = |k: usize| need(loaded_size) + reader_bytes * k as u64;
            if a.load_threads.is_some() {
                fits("--load-threads/--loaded-size", total(most), usable, m)?;
            } else {
                while most > 0 && total(most) > usable {
                    most -= 1;
                }
                if most < reader_cpus.len() {
                    warnings.push(format!(
                        "loaded latency uses {most} reading thread(s), not {}: each reads {} of its own and MemAvailable is {}",
                        reader_cpus.len(),
                        size_label(reader_bytes),
                        human_bytes(m.meminfo.available_bytes)
                    ));
                }
                fits("--loaded-size", total(most), usable, m)?;
            }
            if reader_cpus.is_empty() {
                warnings.push(
                    "loaded latency: dbio may use one CPU only, so no thread can load memory beside the chasing one".into(),
                );
            }
        }
        let mut thread_counts: Vec<usize> = std::iter::once(0)
            .chain((0..).map(|k| 1usize << k).take_while(|&k| k < most))
            .chain(std::iter::once(most))
            .collect();
        thread_counts.dedup();

        // Pages: what was asked, or the next smaller kind when allowed.
        let (pages, fallback) = choose_pages(
            a,
            m,
            &parts,
            [largest, numa_size, loaded_size + reader_bytes * most as u64],
        )?;
        let huge_page_bytes = match pages {
            PageKind::Huge => m.meminfo.huge_page_bytes as usize,
            PageKind::Thp => THP_BYTES,
            PageKind::Base => crate::sys::page_size(),
        };
        if let Some(f) = &fallback {
            warnings.push(f.clone());
        }

        let cpu_nodes: Vec<CpuNode> = topo
            .nodes
            .iter()
            .filter_map(|n| {
                let cpus: Vec<usize> = n
                    .cpus
                    .iter()
                    .copied()
                    .filter(|c| m.allowed_cpus.contains(c))
                    .collect();
                (!cpus.is_empty()).then_some(CpuNode { id: n.id, cpus })
            })
            .collect();
        let mut mem_nodes: Vec<u32> = topo
            .nodes
            .iter()
            .filter(|n| n.memory_bytes > 0 || !topo.numa_in_sysfs)
            .map(|n| n.id)
            .collect();
        if has(Part::Numa) && topo.numa_in_sysfs && pages != PageKind::Huge {
            // Memory bound to a node short of it would be taken by reclaim or the OOM
            // killer, not from another node: leave such a node's column empty.
            mem_nodes.retain(|&id| {
                let Some(n) = topo.nodes.iter().find(|n| n.id == id) else {
                    return false;
                };
                let room = n.available_bytes.saturating_sub(RESERVE / 4);
                if need(numa_size) > room {
                    warnings.push(format!(
                        "NUMA matrix: memory node {id} is left out: it has about {} free and each figure needs {}",
                        human_bytes(n.available_bytes),
                        human_bytes(need(numa_size))
                    ));
                }
                need(numa_size) <= room
            });
        }
        if has(Part::Numa) && topo.nodes.len() > cpu_nodes.len() {
            warnings.push(format!(
                "NUMA rows of nodes without CPUs dbio may use are empty (CPUs allowed: {})",
                format_cpu_list(&m.allowed_cpus)
            ));
        }
        Ok(MemTest {
            parts,
            sizes,
            memory: Memory {
                pages,
                huge_page_bytes,
                line: line as usize,
                budget: Budget::new(a.budget.as_nanos() as u64),
                seed: a
                    .options
                    .0
                    .seed
                    .unwrap_or_else(crate::workload::spec::rand_seed),
            },
            pages_requested: a.pages,
            fallback,
            cpu,
            numa_size,
            cpu_nodes,
            mem_nodes,
            load: Load {
                size: loaded_size,
                cpu,
                reader_cpus: reader_cpus[..most].to_vec(),
                reader_bytes,
                thread_counts,
            },
            warnings,
        })
    }

    pub fn has(&self, p: Part) -> bool {
        self.parts.contains(&p)
    }
}

fn size_option(a: &MemArgs) -> &'static str {
    if a.sizes.is_some() {
        "--sizes"
    } else {
        "--max-size"
    }
}

/// Refuses `need` bytes beyond what can be allocated without swapping.
fn fits(option: &str, need: u64, usable: u64, m: &Machine) -> Result<()> {
    if need > usable {
        return Err(Error::usage(format!(
            "{option}: needs {} of memory, but only {} can be used (MemAvailable {} less {} kept free)",
            human_bytes(need),
            human_bytes(usable),
            human_bytes(m.meminfo.available_bytes),
            human_bytes(RESERVE)
        )));
    }
    Ok(())
}

/// The page kind to use: `--pages`, unless it cannot be had and `--allow-fallback` allows
/// the next smaller one. `largest` are the biggest buffers each part maps at once.
fn choose_pages(
    a: &MemArgs,
    m: &Machine,
    parts: &[Part],
    largest: [u64; 3],
) -> Result<(PageKind, Option<String>)> {
    let measured = [Part::Curve, Part::Numa, Part::Loaded];
    let need = measured
        .iter()
        .zip(largest)
        .filter(|(p, _)| parts.contains(p))
        .map(|(_, b)| b)
        .max()
        .unwrap_or(0);
    let thp_off = m.thp.as_deref() == Some("never") || m.thp.is_none();
    let mut kind = a.pages;
    let mut why = None;
    if kind == PageKind::Huge {
        let page = m.meminfo.huge_page_bytes.max(1);
        let pages = need.div_ceil(page);
        if m.meminfo.huge_pages_free < pages {
            let reason = format!(
                "--pages huge: needs {pages} free hugetlb pages of {} ({}) but {} are free; reserve them as root with `sysctl -w vm.nr_hugepages={}`",
                size_label(page),
                size_label(pages * page),
                m.meminfo.huge_pages_free,
                m.meminfo.huge_pages_total - m.meminfo.huge_pages_free + pages
            );
            if !a.allow_fallback {
                return Err(Error::usage(format!(
                    "{reason}, or add --allow-fallback to use transparent huge pages instead"
                )));
            }
            kind = PageKind::Thp;
            why = Some(format!(
                "{reason}; used {} pages instead",
                if thp_off { "4k" } else { "thp" }
            ));
        }
    }
    if kind == PageKind::Thp && thp_off {
        let reason = format!(
            "--pages thp: transparent huge pages are {} (/sys/kernel/mm/transparent_hugepage/enabled); set it to madvise or always",
            m.thp.as_deref().unwrap_or("not available")
        );
        if !a.allow_fallback {
            return Err(Error::usage(format!(
                "{reason}, or add --allow-fallback to use 4k pages"
            )));
        }
        kind = PageKind::Base;
        why = why.or(Some(format!("{reason}; used 4k pages instead")));
    }
    Ok((kind, why))
}

/// `min`, then `points` sizes per doubling up to `max` (included), multiples of `line`.
pub fn sizes_between(min: u64, max: u64, points: u32, line: u64) -> Vec<u64> {
    let mut v = Vec::new();
    for k in 0.. {
        let s = (min as f64 * 2f64.powf(k as f64 / points as f64)) as u64 / line * line;
        if s >= max {
            break;
        }
        if v.last() != Some(&s) {
            v.push(s);
        }
    }
    v.push(max / line * line);
    v.dedup();
    v
}

fn largest_power_of_two_within(bytes: u64) -> u64 {
    if bytes < 2 {
        return 1;
    }
    1 << (63 - bytes.leading_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_double_with_points_between() {
        let v = sizes_between(4 << 10, 1 << 30, 2, 64);
        assert_eq!(v.first(), Some(&(4 << 10)));
        assert_eq!(v.last(), Some(&(1 << 30)));
        assert_eq!(v.len(), 37);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        assert!(v.iter().all(|s| s % 64 == 0));
        assert_eq!(v[1], 5760, "4K × √2, down to a whole line");
        assert_eq!(sizes_between(4096, 4096, 2, 64), [4096]);
        assert_eq!(
            sizes_between(4096, 20_000, 1, 64),
            [4096, 8192, 16384, 19968]
        );
        assert_eq!(largest_power_of_two_within(3 << 30), 2 << 30);
    }
}
