//! `dbio mem`'s own options: memory latency by working-set size, the NUMA matrix, loaded
//! latency, or where shared memory lives.

use crate::options::mem::{PageKind, Part};
use crate::options::parse::*;
use crate::options::{Group, Many, Opt};

/// Every row of this part: what its rows share.
const ROW: Opt = Opt {
    group: Group::Mem,
    with_classes: true,
    ..Opt::DEFAULT
};

/// The options that measure, and `more`: none of them goes with `--shm`, `--pid` or
/// `--topology`, which only look.
macro_rules! measuring_and {
    ($($more:literal),*) => {
        &[
            "min-size",
            "max-size",
            "sizes",
            "points-per-doubling",
            "budget",
            "pages",
            "allow-fallback",
            "numa-size",
            "loaded-size",
            "load-threads",
            "only",
            "cpu",
            "seed",
            $($more),*
        ]
    };
}

pub(super) const MEM: &[Opt] = &[
    Opt {
        name: "min-size",
        value: Some("SIZE"),
        default: Some("4K"),
        help: "Smallest working set of the latency curve.",
        set: |a, t| {
            a.mem.min_size = positive_size(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "max-size",
        value: Some("SIZE"),
        help: "Largest working set [default: 1G, or 4 × the last-level cache if that is larger].",
        set: |a, t| {
            a.mem.max_size = Some(positive_size(t)?);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "points-per-doubling",
        value: Some("N"),
        default: Some("2"),
        help: "Curve points per doubling of the working set.",
        set: |a, t| {
            a.mem.points_per_doubling = count(t, 1, 8)? as u32;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "sizes",
        value: Some("SIZE,..."),
        help: "Exactly these working-set sizes instead of --min-size..--max-size (e.g. 16K,1G).",
        many: Many::Repeat,
        conflicts: &["min-size", "max-size", "points-per-doubling"],
        set: |a, t| {
            let sizes = list(t, positive_size)?;
            a.mem.sizes.get_or_insert_with(Vec::new).extend(sizes);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "budget",
        value: Some("DURATION"),
        default: Some("300ms"),
        help: "Time budget of each figure: repetitions go on until their middle half agrees within 2 % or this is spent.",
        set: |a, t| {
            a.mem.budget = budget(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "pages",
        value: Some("PAGES"),
        default: Some("4k"),
        help: "The pages behind the measured memory: 4k (base pages), thp (transparent huge pages), huge (reserved hugetlb pages, vm.nr_hugepages).",
        set: |a, t| {
            a.mem.pages = PageKind::parse(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "allow-fallback",
        help: "When the pages asked for are not available (no free hugetlb pages, THP off), use the next smaller kind (huge → thp → 4k) instead of refusing.",
        set: |a, t| {
            a.mem.allow_fallback = switch(t)?;
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "numa-size",
        value: Some("SIZE"),
        help: "Working set of each NUMA matrix measurement [default: 4 × the last-level cache, at least 256M].",
        set: |a, t| {
            a.mem.numa_size = Some(positive_size(t)?);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "loaded-size",
        value: Some("SIZE"),
        help: "Working set of the chasing thread in loaded latency, and of each reading thread [default: as --numa-size].",
        set: |a, t| {
            a.mem.loaded_size = Some(positive_size(t)?);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "load-threads",
        value: Some("N"),
        help: "Most threads reading memory in loaded latency [default: one per other CPU].",
        set: |a, t| {
            a.mem.load_threads = Some(count(t, 0, 4096)? as u32);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "only",
        value: Some("PART,..."),
        help: "Only these parts: curve, numa, loaded (comma-separated) [default: all].",
        many: Many::Repeat,
        set: |a, t| {
            let parts = list(t, Part::parse)?;
            a.mem.only.extend(parts);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "cpu",
        value: Some("CPU"),
        help: "The CPU the latency chase runs on [default: the first CPU dbio may use].",
        set: |a, t| {
            a.mem.cpu = Some(cpu(t)?);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "shm",
        value: Some("PATH"),
        help: "Instead of measuring: where the pages of this shared-memory file (a /dev/shm segment, a tmpfs or hugetlbfs file) are, per NUMA node, and the mount's policy.",
        conflicts: measuring_and!("pid", "topology"),
        set: |a, t| {
            a.mem.shm = Some(path(t, "a shared-memory file (e.g. /dev/shm/segment)")?);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "pid",
        value: Some("PID"),
        help: "Instead of measuring: where the shared memory (SysV, /dev/shm, hugetlbfs, shared anonymous) process PID has mapped is, per NUMA node.",
        conflicts: measuring_and!("topology"),
        set: |a, t| {
            a.mem.pid = Some(count(t, 1, u64::from(u32::MAX))? as u32);
            Ok(())
        },
        ..ROW
    },
    Opt {
        name: "topology",
        help: "Only print the topology as the kernel describes it (caches, NUMA nodes, distances).",
        conflicts: measuring_and!("out"),
        set: |a, t| {
            a.mem.topology = switch(t)?;
            Ok(())
        },
        ..ROW
    },
];
