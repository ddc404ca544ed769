//! The report of `dbio mem`, made from the result alone: the machine, the latency curve
//! (a chart on a log size axis with the cache levels marked, and its table), the NUMA
//! matrix, the loaded-latency curve, or where shared memory lives. Only figures and their
//! order are decided here; `summary.txt` and `report.html` are the shared renderers'
//! ([`crate::report::summary`], [`crate::report::html`]). The `--topology` text and the
//! memory runs of `dbio runs` are reports too.

use super::result::{LevelJson, MemResult, NumaJson, ShmJson};
use super::topology::{MemInfo, Topology, format_cpu_list};
use crate::report::sections::{
    Axis, Block, Chart, Color, Column, Level, Lines, Measure, Point, Report, Section, Series,
    Table, cells,
};
use crate::units::{human_bytes, size_label, thousands};

/// The report of one `dbio mem` run: what `summary.txt` and `report.html` show.
pub fn report(r: &MemResult) -> Report {
    let mut sections = vec![machine(r)];
    if let Some(s) = &r.shm {
        sections.push(shm(r, s));
    } else {
        sections.extend(curve(r));
        sections.extend(r.numa.as_ref().map(numa));
        sections.extend(loaded(r));
    }
    if !r.warnings.is_empty() {
        sections.push(Section::new("warnings", "Warnings").with(Block::List {
            items: r.warnings.clone(),
            alert: false,
        }));
    }
    Report {
        title: format!(
            "dbio {} — mem — {} — {} — {} (kernel {}, {} CPUs)",
            r.dbio_version,
            match &r.shm {
                Some(_) => "shared memory placement",
                None => "memory latency",
            },
            r.started_at,
            r.host.hostname,
            r.host.kernel,
            r.host.cpus
        ),
        sections,
    }
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

/// The caches of the CPU the chase runs on, each with the CPUs that share it.
fn caches(t: &Topology) -> (String, String) {
    let caches: Vec<String> = (t.caches.iter())
        .map(|c| {
            let shared = if c.shared_cpus.len() > 1 {
                format!(" (shared by CPUs {})", format_cpu_list(&c.shared_cpus))
            } else {
                String::new()
            };
            format!("{} {}{shared}", c.name(), human_bytes(c.size_bytes))
        })
        .collect();
    (
        format!("Caches of CPU {}", t.cache_cpu),
        if caches.is_empty() {
            "not in sysfs".to_string()
        } else {
            caches.join(", ")
        },
    )
}

fn cpus(v: &[usize]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        format_cpu_list(v)
    }
}

/// The NUMA nodes, their CPUs and memory, in one line.
fn nodes(t: &Topology) -> (String, String) {
    let nodes: Vec<String> = (t.nodes.iter())
        .map(|n| {
            format!(
                "node {}: CPUs {}, {}",
                n.id,
                cpus(&n.cpus),
                human_bytes(n.memory_bytes)
            )
        })
        .collect();
    (
        "NUMA".to_string(),
        format!(
            "{} node(s){}: {}",
            t.nodes.len(),
            if t.numa_in_sysfs {
                ""
            } else {
                " (none in sysfs: one assumed)"
            },
            nodes.join("; ")
        ),
    )
}

/// How the run went and on what: pages, CPU, budget, seed, caches and nodes.
fn machine(r: &MemResult) -> Section {
    let mut s = Section::new("machine", "Machine and configuration").level(Level::Lead);
    if r.partial {
        s.push(Block::List {
            items: vec![format!(
                "PARTIAL: {} after {:.1} s",
                r.stop_reason, r.elapsed_s
            )],
            alert: true,
        });
    }
    let c = &r.config;
    let mut f = Vec::new();
    if r.shm.is_none() {
        let p = &r.page_size;
        f.push((
            "Pages".to_string(),
            format!(
                "{} ({}), asked for {}{}",
                p.used,
                size_label(p.bytes),
                p.requested,
                p.huge_backed_pct.map_or(String::new(), |h| format!(
                    ", {h:.0} % backed by huge pages"
                ))
            ),
        ));
        f.push((
            "Chase".to_string(),
            format!("on CPU {}, {}-byte lines", c.cpu, c.line_bytes),
        ));
        f.push((
            "Budget per figure".to_string(),
            format!("{:.0} ms", c.budget_s * 1000.0),
        ));
        f.push(("Seed".to_string(), c.seed.to_string()));
    }
    f.push(caches(&r.topology));
    f.push(nodes(&r.topology));
    f.push(("Clock".to_string(), c.clock.clone()));
    f.push(("Elapsed".to_string(), format!("{:.1} s", r.elapsed_s)));
    s.with(Block::Fields(f))
}

/// Latency by working set: the curve drawn on a log size axis, the table, the levels.
fn curve(r: &MemResult) -> Option<Section> {
    let curve = r.curve.as_ref()?;
    let mut s = Section::new("curve", "Latency by working set").with(Block::Note(format!(
        "Dependent loads over a random cycle of {}-byte lines on {} pages, chased on CPU {}; \
         each figure is the median repetition (whiskers: fastest and slowest).",
        r.config.line_bytes, r.pages, r.config.cpu
    )));
    let points = (curve.iter())
        .map(|p| Point {
            x: p.size_bytes as f64,
            y: Some(p.ns),
            whisker: Some((p.min_ns, p.max_ns)),
            tip: Some(format!(
                "{}: {:.2} ns per load ({}; spread {:.1} %, {} reps)",
                human_bytes(p.size_bytes),
                p.ns,
                p.level,
                p.spread_pct,
                p.reps
            )),
        })
        .collect();
    let mut chart = Lines::new(
        Axis::LogBytes {
            caption: "working set (log scale)".into(),
        },
        Measure::Amount("ns per load"),
        vec![Series {
            label: "ns per load".into(),
            color: Color::Palette(0),
            dashed: false,
            points,
        }],
    );
    chart.log_y = true;
    chart.legend = true;
    chart.marks = (r.topology.caches.iter())
        .map(|c| {
            (
                c.size_bytes as f64,
                format!("{} {}", c.name(), size_label(c.size_bytes)),
            )
        })
        .collect();
    s.push(Block::Chart(Chart::Caption(
        "Dashed lines: cache sizes from sysfs.".into(),
    )));
    s.push(Block::Chart(Chart::Lines(chart)));
    let mut t = Table::new(vec![
        Column::right("Size", 0),
        Column::right("ns/load", 0),
        Column::right("spread", 0),
        Column::right("min ns", 0),
        Column::right("max ns", 0),
        Column::right("reps", 0),
        Column::left("level", 0),
    ]);
    for p in curve {
        let flag = match (p.stable, p.preempted_reps) {
            (_, n) if n == p.reps => "  (preempted)",
            (false, _) => "  (not stable)",
            _ => "",
        };
        t.row(cells![
            human_bytes(p.size_bytes),
            ns(p.ns),
            format!("{:.1}%", p.spread_pct),
            ns(p.min_ns),
            ns(p.max_ns),
            p.reps.to_string(),
            format!("{}{flag}", p.level),
        ]);
    }
    s.push(Block::Table(t));
    if !r.levels.is_empty() {
        s.push(Block::Fields(vec![(
            "Levels".to_string(),
            levels_line(&r.levels),
        )]));
    }
    Some(s)
}

/// Each level's latency and the working set it was read at; a level without a working set
/// inside it shows "—" and why, rather than a figure taken from a neighbouring level.
fn levels_line(levels: &[LevelJson]) -> String {
    (levels.iter())
        .map(|l| match (l.ns, l.at_size_bytes, &l.note) {
            (Some(v), Some(at), _) => format!("{} {} ns (at {})", l.name, ns(v), human_bytes(at)),
            (_, _, Some(note)) => format!("{} — ({note})", l.name),
            _ => format!("{} —", l.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The NUMA matrix: latency (with the distance sysfs gives, `!` on a pair out of line with
/// its distance) and bandwidth, every CPU node against every memory node and interleaved.
fn numa(n: &NumaJson) -> Section {
    let mut s = Section::new("numa", "NUMA matrix").with(Block::Note(format!(
        "{} per figure. Rows: the CPU node the thread ran on; columns: the node the memory \
         was bound to, then memory interleaved over every node. Latency from one CPU of the \
         row's node, with the distance sysfs gives in brackets; bandwidth of all of its CPUs. \
         ! marks a pair slower than the other pairs at its distance by more than 10 %.",
        size_label(n.size_bytes)
    )));
    let columns = |title: &str| {
        let mut c = vec![Column::left(title, 0)];
        c.extend(
            n.nodes
                .iter()
                .map(|id| Column::right(format!("node {id}"), 0)),
        );
        c.push(Column::right("interleaved", 0));
        c
    };
    let flagged = |i: usize, j: usize| {
        (n.out_of_line.iter()).any(|f| f.cpu_node == n.nodes[i] && f.mem_node == n.nodes[j])
    };
    let cell = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("-".to_string(), f);
    let mut lat = Table::new(columns("Latency (ns)"));
    for (i, row) in n.latency_ns.iter().enumerate() {
        if row.iter().all(Option::is_none) {
            continue;
        }
        let mut cells = cells![format!("CPU node {}", n.nodes[i])];
        for (j, v) in row.iter().enumerate() {
            let d = n.distance[i][j];
            let mark = if flagged(i, j) { "!" } else { "" };
            cells.push(cell(*v, &|v| format!("{mark}{} ({d})", ns(v))).into());
        }
        let il = n.interleave_ns_by_cpu_node.get(i).copied().flatten();
        cells.push(cell(il, &ns).into());
        lat.row(cells);
    }
    let mut bw = Table::new(columns("Read GiB/s"));
    for (i, row) in n.bandwidth_gib_s.iter().enumerate() {
        if row.iter().all(Option::is_none) {
            continue;
        }
        let mut cells = cells![format!(
            "CPU node {} ×{}",
            n.nodes[i], n.threads_per_node[i]
        )];
        for v in row {
            cells.push(cell(*v, &|v| format!("{v:.2}")).into());
        }
        let il = n.interleave_gib_s_by_cpu_node.get(i).copied().flatten();
        cells.push(cell(il, &|v| format!("{v:.2}")).into());
        bw.row(cells);
    }
    s.push(Block::Table(lat));
    s.push(Block::Table(bw));
    if n.out_of_line.is_empty() && n.nodes.len() > 2 {
        s.push(Block::Note(
            "Every pair's latency is in line with its distance (within 10 % of the pairs at \
             the same distance)."
                .into(),
        ));
    }
    if !n.out_of_line.is_empty() {
        s.push(Block::List {
            items: n.out_of_line.iter().map(|f| f.message.clone()).collect(),
            alert: false,
        });
    }
    s
}

/// Loaded latency: the chase while other threads read, against the bandwidth they reach.
fn loaded(r: &MemResult) -> Option<Section> {
    let l = r.loaded.as_ref()?;
    let c = &r.config;
    let mut s = Section::new("loaded", "Loaded latency").with(Block::Note(format!(
        "The chase ({} on CPU {}) while 0, 1, 2, … other threads read {} of their own each, \
         front to back; rounds alternate over the thread counts.",
        size_label(c.loaded_size_bytes),
        c.cpu,
        size_label(c.reader_bytes)
    )));
    let points = (l.iter())
        .map(|p| Point {
            x: p.bandwidth_gib_s,
            y: Some(p.latency_ns),
            whisker: None,
            tip: Some(format!(
                "{} reading thread(s): {:.2} GiB/s, {:.1} ns per load",
                p.threads, p.bandwidth_gib_s, p.latency_ns
            )),
        })
        .collect();
    let mut chart = Lines::new(
        Axis::Linear {
            caption: "read bandwidth of the other threads (GiB/s)".into(),
        },
        Measure::Amount("ns per load"),
        vec![Series {
            label: "loaded latency".into(),
            color: Color::Palette(1),
            dashed: false,
            points,
        }],
    );
    chart.legend = true;
    s.push(Block::Chart(Chart::Lines(chart)));
    let mut t = Table::new(vec![
        Column::right("Threads", 0),
        Column::right("Read GiB/s", 0),
        Column::right("Latency ns", 0),
        Column::right("spread", 0),
        Column::left("rounds (ns)", 0),
        Column::right("others busy", 0),
        Column::left("reading CPUs", 0),
    ]);
    for p in l {
        let rounds: Vec<String> = p.round_ns.iter().map(|&v| ns(v)).collect();
        t.row(cells![
            p.threads.to_string(),
            format!("{:.2}", p.bandwidth_gib_s),
            ns(p.latency_ns),
            format!("{:.1}%", p.spread_pct),
            rounds.join(", "),
            (p.other_cpus_busy_pct).map_or("-".to_string(), |b| format!("{b:.0}%")),
            if p.cpus.is_empty() {
                "-".to_string()
            } else {
                format_cpu_list(&p.cpus)
            },
        ]);
    }
    s.push(Block::Table(t));
    Some(s)
}

/// Where the pages of a shared memory file or of a process are, node by node.
fn shm(r: &MemResult, s: &ShmJson) -> Section {
    let mut out = Section::new("shm", "Where the pages are");
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
        out.push(Block::Fields(vec![(
            "File".to_string(),
            format!(
                "{}: {}, {} page(s) of {}{mount}",
                f.path,
                human_bytes(f.size_bytes),
                thousands(f.pages),
                size_label(f.page_bytes)
            ),
        )]));
        let share = |n: u64| format!("{:.1}%", n as f64 / f.pages.max(1) as f64 * 100.0);
        let mut t = Table::new(vec![
            Column::left("Pages", 0),
            Column::right("count", 0),
            Column::right("share", 0),
            Column::right("bytes", 0),
        ]);
        for (node, n) in &f.pages_by_node {
            t.row(cells![
                format!("node {node}"),
                thousands(*n),
                share(*n),
                human_bytes(n * f.page_bytes),
            ]);
        }
        t.row(cells![
            "not in memory",
            thousands(f.pages_not_in_memory),
            share(f.pages_not_in_memory),
            "",
        ]);
        if f.pages_unknown > 0 {
            t.row(cells!["unknown", thousands(f.pages_unknown), "", ""]);
        }
        out.push(Block::Table(t));
    }
    if let Some(p) = &s.process {
        out.push(Block::Note(format!(
            "Process {} ({}): {} shared memory object(s), the pages it has mapped.",
            p.pid,
            p.command,
            p.segments.len()
        )));
        let nodes: Vec<u32> = r.topology.nodes.iter().map(|n| n.id).collect();
        let mut columns = vec![
            Column::left("Object", 0),
            Column::left("Kind", 0),
            Column::left("Policy", 0),
            Column::right("Page", 0),
        ];
        columns.extend(
            nodes
                .iter()
                .map(|id| Column::right(format!("node {id}"), 0)),
        );
        let mut t = Table::new(columns);
        for seg in &p.segments {
            let mut row = cells![
                seg.name.as_str(),
                seg.kind.as_str(),
                seg.policies.join(","),
                size_label(seg.page_bytes),
            ];
            for id in &nodes {
                row.push(thousands(seg.pages_by_node.get(id).copied().unwrap_or(0)).into());
            }
            t.row(row);
        }
        out.push(Block::Table(t));
    }
    let by_node: Vec<String> = (s.bytes_by_node.iter())
        .map(|(n, b)| format!("node {n} {}", human_bytes(*b)))
        .collect();
    let mut f = Vec::new();
    if !by_node.is_empty() {
        f.push(("In memory".to_string(), by_node.join(", ")));
    }
    f.push(("Verdict".to_string(), s.verdict.clone()));
    out.with(Block::Fields(f))
}

/// `dbio mem --topology`: the caches and nodes, memory and huge pages, the distances.
pub fn topology(t: &Topology, m: &MemInfo, thp: Option<&str>) -> Report {
    let mut lead = Section::new("machine", "Machine").level(Level::Lead);
    lead.push(Block::Fields(vec![
        caches(t),
        nodes(t),
        (
            "Memory".to_string(),
            format!(
                "{} available of {}; huge pages {} free of {} ({} each); transparent huge \
                 pages: {}",
                human_bytes(m.available_bytes),
                human_bytes(m.total_bytes),
                m.huge_pages_free,
                m.huge_pages_total,
                size_label(m.huge_page_bytes),
                thp.unwrap_or("not available")
            ),
        ),
    ]));
    let mut sections = vec![lead];
    if t.nodes.len() > 1 {
        let mut columns = vec![Column::left("", 0)];
        columns.extend(
            t.nodes
                .iter()
                .map(|n| Column::right(format!("node {}", n.id), 0)),
        );
        let mut d = Table::new(columns);
        for (i, row) in t.distance.iter().enumerate() {
            let mut cells = cells![format!("node {}", t.nodes[i].id)];
            cells.extend(row.iter().map(|d| d.to_string().into()));
            d.row(cells);
        }
        sections.push(Section::new("distances", "Distances").with(Block::Table(d)));
        let mut n = Table::new(vec![
            Column::left("Node", 0),
            Column::right("CPUs", 0),
            Column::right("memory", 0),
            Column::right("free", 0),
            Column::right("huge free", 0),
        ]);
        for node in &t.nodes {
            n.row(cells![
                format!("node {}", node.id),
                node.cpus.len().to_string(),
                human_bytes(node.memory_bytes),
                human_bytes(node.free_bytes),
                node.huge_pages_free.to_string(),
            ]);
        }
        sections.push(Section::new("nodes", "Nodes").with(Block::Table(n)));
    }
    Report {
        title: "dbio mem — topology".to_string(),
        sections,
    }
}

/// `dbio runs`: the memory runs, one a row.
pub fn runs(runs: &[crate::store::MemRunListing]) -> Report {
    Report {
        title: MEM_RUNS.to_string(),
        sections: vec![runs_section(runs).level(Level::Lead)],
    }
}

/// The memory runs as a section of its own, after the I/O runs of `dbio runs`.
pub fn runs_section(runs: &[crate::store::MemRunListing]) -> Section {
    let opt = |v: Option<f64>, f: fn(f64) -> String| v.map_or("-".to_string(), f);
    let mut t = Table::new(vec![
        Column::right("ID", 0),
        Column::left("Started", 0),
        Column::left("Kind", 0),
        Column::left("Pages", 0),
        Column::right("Max size", 0),
        Column::right("L1 ns", 0),
        Column::right("Memory ns", 0),
        Column::right("Nodes", 0),
        Column::right("Interleave", 0),
        Column::right("Load GiB/s", 0),
        Column::left("Shared memory", 0),
    ]);
    for listed in runs {
        let r = &listed.figures;
        let shm = match (&r.shm_target, r.shm_pages) {
            (Some(t), Some(p)) => format!("{t}: {} pages", thousands(p)),
            _ => "-".to_string(),
        };
        t.row(cells![
            listed.id.to_string(),
            r.started_at.as_str(),
            r.kind.as_str(),
            r.pages.as_str(),
            r.max_size_bytes.map_or("-".to_string(), size_label),
            opt(r.l1_ns, ns),
            opt(r.memory_ns, ns),
            r.nodes.to_string(),
            opt(r.interleave_ns, ns),
            opt(r.loaded_max_gib_s, |v| format!("{v:.2}")),
            if r.partial {
                format!("{shm}  partial")
            } else {
                shm
            },
        ]);
    }
    Section::new("mem-runs", MEM_RUNS).with(Block::Table(t))
}

/// The title of the memory runs' listing.
const MEM_RUNS: &str = "Memory runs (dbio mem)";

#[cfg(test)]
pub(crate) mod tests;
