//! The machine's memory topology as the kernel describes it: the caches of a CPU
//! (`/sys/devices/system/cpu/cpuN/cache/index*`), the NUMA nodes with their CPUs, memory and
//! distances (`/sys/devices/system/node`), and what `/proc/meminfo` says is free. Read
//! through a [`SysRoot`], so tests point it at a fixture tree (`tests/fixtures/mem-sysfs/`).

use serde::{Deserialize, Serialize};

use crate::storage::sysfs::SysRoot;

/// One data or unified cache level as seen from a CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    /// 1, 2, 3, ...
    pub level: u32,
    /// "Data" or "Unified" (instruction caches are left out).
    pub kind: String,
    pub size_bytes: u64,
    pub line_bytes: u64,
    /// The CPUs sharing this cache.
    pub shared_cpus: Vec<usize>,
}

impl Cache {
    /// "L1d", "L2", "L3".
    pub fn name(&self) -> String {
        if self.kind == "Data" {
            format!("L{}d", self.level)
        } else {
            format!("L{}", self.level)
        }
    }
}

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: u32,
    pub cpus: Vec<usize>,
    /// MemTotal of the node; 0 for a node without memory.
    pub memory_bytes: u64,
    pub free_bytes: u64,
    /// What can be allocated on the node without swapping or the OOM killer, roughly:
    /// MemFree plus the inactive page cache (Inactive(file)).
    pub available_bytes: u64,
    /// Free hugetlb pages of the default huge page size on this node.
    pub huge_pages_free: u64,
}

/// What the memory measurements need to know about the machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    /// The CPU whose caches are listed.
    pub cache_cpu: usize,
    /// Its data and unified caches, smallest level first.
    pub caches: Vec<Cache>,
    /// Online NUMA nodes, by id.
    pub nodes: Vec<Node>,
    /// `distance[i][j]`: the firmware's (SLIT) distance from `nodes[i]` to `nodes[j]`;
    /// 10 is local.
    pub distance: Vec<Vec<u32>>,
    /// False when the kernel shows no NUMA nodes (built without NUMA): one node 0 is
    /// assumed, holding every CPU.
    pub numa_in_sysfs: bool,
}

impl Topology {
    /// The cache line size (the smallest level's), 64 when unknown.
    pub fn line_bytes(&self) -> u64 {
        self.caches
            .first()
            .map(|c| c.line_bytes)
            .filter(|&l| l.is_power_of_two() && (16..=4096).contains(&l))
            .unwrap_or(64)
    }

    /// The last-level cache's size, if known.
    pub fn llc_bytes(&self) -> Option<u64> {
        self.caches.last().map(|c| c.size_bytes)
    }

    /// The node `cpu` belongs to.
    pub fn node_of_cpu(&self, cpu: usize) -> Option<u32> {
        self.nodes
            .iter()
            .find(|n| n.cpus.contains(&cpu))
            .map(|n| n.id)
    }

    /// The index of node `id` in [`Topology::nodes`].
    pub fn node_index(&self, id: u32) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }
}

/// Reads the topology; `cpu` is the CPU whose caches are listed.
pub fn read(root: &SysRoot, cpu: usize) -> Topology {
    let caches = caches(root, cpu);
    let online = root
        .read("sys/devices/system/node/online")
        .and_then(|s| parse_cpu_list(&s));
    let (nodes, numa_in_sysfs) = match online {
        Some(ids) if !ids.is_empty() => (
            ids.iter()
                .map(|&id| read_node(root, id as u32))
                .collect::<Vec<_>>(),
            true,
        ),
        _ => (vec![whole_machine_node(root)], false),
    };
    let distance = nodes
        .iter()
        .map(|n| {
            let row = root
                .read(&format!("sys/devices/system/node/node{}/distance", n.id))
                .map(|s| {
                    s.split_whitespace()
                        .filter_map(|v| v.parse::<u32>().ok())
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            // The kernel prints one distance per *online* node, in id order: column k
            // belongs to nodes[k], whatever the ids.
            nodes
                .iter()
                .enumerate()
                .map(|(k, m)| {
                    row.get(k)
                        .copied()
                        .unwrap_or(if m.id == n.id { 10 } else { 20 })
                })
                .collect()
        })
        .collect();
    Topology {
        cache_cpu: cpu,
        caches,
        nodes,
        distance,
        numa_in_sysfs,
    }
}

fn caches(root: &SysRoot, cpu: usize) -> Vec<Cache> {
    let dir = format!("sys/devices/system/cpu/cpu{cpu}/cache");
    let mut out: Vec<Cache> = root
        .list(&dir)
        .into_iter()
        .filter(|name| name.starts_with("index"))
        .filter_map(|index| {
            let f = |name: &str| root.read(&format!("{dir}/{index}/{name}"));
            let kind = f("type")?;
            if kind == "Instruction" {
                return None;
            }
            Some(Cache {
                level: f("level")?.parse().ok()?,
                kind,
                size_bytes: parse_cache_size(&f("size")?)?,
                line_bytes: f("coherency_line_size")
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(64),
                shared_cpus: f("shared_cpu_list")
                    .and_then(|s| parse_cpu_list(&s))
                    .unwrap_or_default(),
            })
        })
        .collect();
    out.sort_by_key(|c| c.level);
    out
}

fn read_node(root: &SysRoot, id: u32) -> Node {
    let dir = format!("sys/devices/system/node/node{id}");
    let cpus = root
        .read(&format!("{dir}/cpulist"))
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_default();
    let meminfo = root.read(&format!("{dir}/meminfo")).unwrap_or_default();
    let field = |name: &str| node_meminfo_field(&meminfo, name).unwrap_or(0);
    let huge_pages_free = default_huge_page_bytes(root)
        .and_then(|b| {
            root.read_u64(&format!(
                "{dir}/hugepages/hugepages-{}kB/free_hugepages",
                b >> 10
            ))
        })
        .unwrap_or(0);
    Node {
        id,
        cpus,
        memory_bytes: field("MemTotal"),
        free_bytes: field("MemFree"),
        available_bytes: field("MemFree") + field("Inactive(file)"),
        huge_pages_free,
    }
}

/// A kernel without NUMA: one node 0 with every online CPU and all memory.
fn whole_machine_node(root: &SysRoot) -> Node {
    let m = meminfo(root);
    Node {
        id: 0,
        cpus: root
            .read("sys/devices/system/cpu/online")
            .and_then(|s| parse_cpu_list(&s))
            .unwrap_or_else(|| vec![0]),
        memory_bytes: m.total_bytes,
        free_bytes: m.free_bytes,
        available_bytes: m.available_bytes,
        huge_pages_free: m.huge_pages_free,
    }
}

/// `Node 0 MemTotal:       32767000 kB` → bytes.
fn node_meminfo_field(text: &str, name: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let mut it = line.split_whitespace();
        let (_node, _id, key, value) = (it.next()?, it.next()?, it.next()?, it.next()?);
        (key.trim_end_matches(':') == name)
            .then(|| value.parse::<u64>().ok().map(|kb| kb << 10))
            .flatten()
    })
}

/// What `/proc/meminfo` says about free memory and huge pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct MemInfo {
    pub total_bytes: u64,
    pub free_bytes: u64,
    /// MemAvailable: what can be allocated without swapping.
    pub available_bytes: u64,
    /// The default huge page size (Hugepagesize).
    pub huge_page_bytes: u64,
    pub huge_pages_total: u64,
    pub huge_pages_free: u64,
}

pub fn meminfo(root: &SysRoot) -> MemInfo {
    let text = root.read("proc/meminfo").unwrap_or_default();
    let field = |name: &str| -> Option<u64> {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| {
                let mut it = v.split_whitespace();
                let n: u64 = it.next()?.parse().ok()?;
                Some(if it.next() == Some("kB") { n << 10 } else { n })
            })?
        })
    };
    MemInfo {
        total_bytes: field("MemTotal").unwrap_or(0),
        free_bytes: field("MemFree").unwrap_or(0),
        available_bytes: field("MemAvailable").unwrap_or(0),
        huge_page_bytes: field("Hugepagesize").unwrap_or(2 << 20),
        huge_pages_total: field("HugePages_Total").unwrap_or(0),
        huge_pages_free: field("HugePages_Free").unwrap_or(0),
    }
}

fn default_huge_page_bytes(root: &SysRoot) -> Option<u64> {
    Some(meminfo(root).huge_page_bytes).filter(|&b| b > 0)
}

/// The transparent huge page mode for anonymous memory: "always", "madvise" or "never".
pub fn thp_mode(root: &SysRoot) -> Option<String> {
    let text = root.read("sys/kernel/mm/transparent_hugepage/enabled")?;
    bracketed(&text)
}

/// The chosen word of a sysfs choice list: `always [madvise] never` → `madvise`.
fn bracketed(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// Parses a kernel CPU or node list: `0-3,8,10-11`. None when malformed; an empty list for
/// an empty string (a node without CPUs).
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                // A sane bound: no machine has a million CPUs, and a fixture typo must not
                // allocate gigabytes.
                if a > b || b >= 1 << 20 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Some(out)
}

/// Formats a list back as the kernel does: `0-3,8,10-11`.
pub fn format_cpu_list(v: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// `32K`, `1024K`, `32768K` (the cache `size` file) → bytes.
fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, shift) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 10),
        b'M' => (&s[..s.len() - 1], 20),
        b'G' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    num.parse::<u64>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(case: &str) -> SysRoot {
        SysRoot::at(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/mem-sysfs")
                .join(case),
        )
    }

    #[test]
    fn cpu_lists_parse_and_print_as_the_kernel_does() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("0-99999999"), None);
        assert_eq!(parse_cpu_list("a"), None);
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn cache_sizes_and_choice_lists_parse() {
        assert_eq!(parse_cache_size("32K"), Some(32 << 10));
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("1M"), Some(1 << 20));
        assert_eq!(parse_cache_size("x"), None);
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("always madvise never"), None);
    }

    /// The published four-node machine: 4 sockets of 8 CPUs, every remote node at distance 21 although
    /// node 3 is two hops from node 0. The topology alone cannot show that hop; it must
    /// still come out exactly as sysfs says.
    #[test]
    fn four_node_machine_is_read_whole() {
        let t = read(&fixture("four_node_2hop"), 0);
        assert!(t.numa_in_sysfs);
        assert_eq!(
            t.nodes.iter().map(|n| n.id).collect::<Vec<_>>(),
            [0, 1, 2, 3]
        );
        assert_eq!(t.nodes[1].cpus, (8..16).collect::<Vec<_>>());
        assert_eq!(t.nodes[3].memory_bytes, 32767 << 20);
        assert_eq!(t.nodes[2].free_bytes, 29796 << 20);
        assert_eq!(t.nodes[2].available_bytes, (29796 << 20) + (1000 << 20));
        assert_eq!(t.nodes[0].huge_pages_free, 512);
        for (i, row) in t.distance.iter().enumerate() {
            for (j, &d) in row.iter().enumerate() {
                assert_eq!(d, if i == j { 10 } else { 21 });
            }
        }
        let names: Vec<String> = t.caches.iter().map(Cache::name).collect();
        assert_eq!(names, ["L1d", "L2", "L3"]);
        assert_eq!(t.llc_bytes(), Some(16 << 20));
        assert_eq!(t.caches[2].shared_cpus, (0..8).collect::<Vec<_>>());
        assert_eq!(t.line_bytes(), 64);
        assert_eq!(t.node_of_cpu(27), Some(3));
        assert_eq!(t.node_index(2), Some(2));
        let m = meminfo(&fixture("four_node_2hop"));
        assert_eq!(m.available_bytes, 120_000_000 << 10);
        assert_eq!((m.huge_page_bytes, m.huge_pages_free), (2 << 20, 2048));
        assert_eq!(
            thp_mode(&fixture("four_node_2hop")).as_deref(),
            Some("always")
        );
    }

    /// Node 1 has memory but no CPUs (a CXL expander), and node 2 is offline: node ids 0, 1,
    /// 3 with distance columns in that order.
    #[test]
    fn memory_only_node_and_offline_node() {
        let t = read(&fixture("cxl_memory_node"), 0);
        assert_eq!(t.nodes.iter().map(|n| n.id).collect::<Vec<_>>(), [0, 1, 3]);
        assert!(t.nodes[1].cpus.is_empty());
        assert_eq!(t.nodes[1].memory_bytes, 64 << 30);
        assert_eq!(t.distance[0], [10, 50, 32]);
        assert_eq!(t.distance[1], [50, 10, 60]);
    }

    #[test]
    fn without_numa_in_sysfs_one_node_holds_every_cpu() {
        let t = read(&fixture("no_numa"), 1);
        assert!(!t.numa_in_sysfs);
        assert_eq!(t.nodes.len(), 1);
        assert_eq!(t.nodes[0].cpus, [0, 1, 2, 3]);
        assert_eq!(t.nodes[0].memory_bytes, 8 << 30);
        assert_eq!(t.distance, [[10]]);
        assert_eq!(t.cache_cpu, 1);
        assert_eq!(t.caches.len(), 2);
        assert_eq!(t.line_bytes(), 128);
    }
}
