//! `dbio mem`: what memory gives a database, before anyone blames the storage for CPU time
//! (seeds 000 and 001).
//!
//! - latency by working-set size, a dependent pointer chase ([`chase`]) with the cache
//!   levels from sysfs ([`topology`]) marked on it, on 4k, transparent huge or hugetlb
//!   pages ([`buffer`]);
//! - the NUMA matrix: every CPU node × memory node, idle latency and read bandwidth
//!   ([`stream`]), threads pinned and memory bound with raw system calls ([`numa`]), and
//!   an interleaved row;
//! - loaded latency: the chase while 0, 1, 2, … other threads stream reads;
//! - `--shm PATH` / `--pid PID`: where shared memory really lives ([`shm`]).
//!
//! The measuring layer ([`bench`]) knows nothing of the command line ([`args`]) or the
//! report ([`result`], [`report`]); this file joins them.

pub mod args;
pub mod bench;
pub mod buffer;
pub mod chase;
pub mod numa;
pub mod report;
pub mod result;
pub mod shm;
pub mod stream;
pub mod topology;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

pub use args::MemArgs;
use args::{Machine, MemTest, Part};
use bench::Step;
use result::{MemConfig, MemResult, PageSize};

use crate::error::{Error, ExitCode, Result};
use crate::progress::Progress;
use crate::report::result::HostJson;
use crate::storage::sysfs::SysRoot;
use crate::units::{human_bytes, size_label};

/// Every timestamp of `dbio mem` comes from here: the clock of the rest of dbio.
#[inline]
pub(crate) fn now_ns() -> u64 {
    crate::sys::now_ns()
}

/// The clock [`now_ns`] reads, for the result.
fn clock_name() -> String {
    "clock_gettime(CLOCK_MONOTONIC)".into()
}

/// Test hook: read the topology under this directory instead of `/` (only with
/// `--topology`: nothing can be measured on a fixture).
const SYSROOT_ENV: &str = "DBIO_MEM_SYSROOT";

/// A finished `dbio mem` run.
pub struct MemOutcome {
    pub result: MemResult,
    pub summary: String,
    pub run_dir: PathBuf,
    pub exit: ExitCode,
}

/// What `dbio mem` produced: a run, or (`--topology`) a description of the machine.
pub enum Output {
    Run(Box<MemOutcome>),
    Topology {
        report: crate::report::Report,
        json: serde_json::Value,
    },
}

pub fn run(a: &MemArgs, stop: &AtomicBool) -> Result<Output> {
    let root = match std::env::var_os(SYSROOT_ENV) {
        Some(dir) if a.topology => SysRoot::at(PathBuf::from(dir)),
        Some(_) => {
            return Err(Error::usage(format!(
                "{SYSROOT_ENV} is set: only --topology can read a captured tree"
            )));
        }
        None => SysRoot::host(),
    };
    let allowed = if root.is_host() {
        numa::allowed_cpus()
            .map_err(|e| Error::other(format!("cannot read the CPU affinity: {e}")))?
    } else {
        topology::read(&root, 0)
            .nodes
            .iter()
            .flat_map(|n| n.cpus.clone())
            .collect()
    };
    let cache_cpu = a.cpu.or(allowed.first().copied()).unwrap_or(0);
    let machine = Machine {
        topology: topology::read(&root, cache_cpu),
        meminfo: topology::meminfo(&root),
        allowed_cpus: allowed,
        thp: topology::thp_mode(&root),
    };
    if a.topology {
        return Ok(Output::Topology {
            report: report::topology(&machine.topology, &machine.meminfo, machine.thp.as_deref()),
            json: serde_json::json!({
                "topology": machine.topology,
                "meminfo": machine.meminfo,
                "thp": machine.thp,
                "allowed_cpus": machine.allowed_cpus,
            }),
        });
    }
    let started_at = crate::sys::utc_now_rfc3339();
    let t0 = now_ns();
    let load_at_start = load_average();
    if a.shm.is_some() || a.pid.is_some() {
        return placement(a, &root, &machine, &started_at, t0).map(|o| Output::Run(Box::new(o)));
    }
    let plan = MemTest::new(a, &machine)?;
    // mem_4k_1G for a curve up to 1 GiB; mem_4k_numa-loaded without a curve.
    let what = match plan.sizes.last() {
        Some(&largest) if plan.has(Part::Curve) => size_label(largest),
        _ => plan
            .parts
            .iter()
            .map(|p| p.name())
            .collect::<Vec<_>>()
            .join("-"),
    };
    // Made, proved writable, registered and locked while it measures; removed again if
    // nothing was written into it.
    let place = crate::report::RunPlace::make(
        &a.options.0.out,
        None,
        &started_at,
        &format!("mem_{}_{what}", plan.memory.pages.name()),
        "mem",
    )?;
    let when = (started_at.as_str(), t0, load_at_start);
    let outcome = measure_into(a, (&plan, &machine), stop, &place.dir, when);
    place.close();
    outcome.map(|o| Output::Run(Box::new(o)))
}

/// Measures `plan` and writes the result into `dir`.
fn measure_into(
    a: &MemArgs,
    (plan, machine): (&MemTest, &Machine),
    stop: &AtomicBool,
    dir: &crate::safety::fs::Dir,
    (started_at, t0, load_at_start): (&str, u64, f64),
) -> Result<MemOutcome> {
    let progress = Progress::line(crate::progress::wanted(
        a.options.0.progress,
        a.options.0.quiet,
    ));
    let figures = measure_all(plan, stop, &progress);
    progress.clear();
    let figures = figures?;
    let stopped = stop.load(Relaxed);
    let mut r = assemble(a, plan, machine, figures, started_at, t0, stopped);
    r.load_average = [load_at_start, load_average()];
    let cpus = r.host.cpus as f64;
    if load_at_start > (cpus / 2.0).max(1.0) {
        r.warnings.push(format!(
            "the machine was busy (load average {load_at_start:.1} on {cpus} CPUs when dbio started): figures beyond the caches vary with what else runs; compare runs made alike"
        ));
    }
    if stopped {
        r.warnings
            .push("stopped by a signal: the result holds what was measured until then".into());
    }
    let summary = write_run(dir, &r)?;
    Ok(MemOutcome {
        result: r,
        summary,
        run_dir: dir.path().to_path_buf(),
        exit: if stopped {
            ExitCode::Interrupted
        } else {
            ExitCode::Ok
        },
    })
}

/// What the measurements returned.
struct Figures {
    curve: Option<bench::Curve>,
    matrix: Option<bench::Matrix>,
    loaded: Option<bench::Loaded>,
}

fn measure_all(plan: &MemTest, stop: &AtomicBool, progress: &Progress) -> Result<Figures> {
    let mut last: Option<f64> = None;
    let mut obs = |s: Step| {
        let msg = match s {
            Step::Latency(ns) => {
                last = Some(ns);
                return;
            }
            Step::Allocating(b) => format!("allocating {}", human_bytes(b)),
            Step::Curve {
                index,
                of,
                size_bytes,
            } => format!(
                "latency curve {}/{of}: {}{}",
                index + 1,
                human_bytes(size_bytes),
                last.map_or(String::new(), |ns| format!(" (last {ns:.1} ns)"))
            ),
            Step::Numa { cpu_node, mem_node } => format!(
                "NUMA matrix: CPU node {cpu_node} → {}",
                mem_node.map_or("interleaved memory".to_string(), |n| format!(
                    "memory node {n}"
                ))
            ),
            Step::Loaded { threads } => {
                format!("loaded latency: {threads} reading thread(s)")
            }
        };
        progress.set_message(format!("dbio mem: {msg}"));
    };
    let m = &plan.memory;
    let fail =
        |what: &str, e: std::io::Error| Error::Io(format!("dbio mem: {what}: {}", advice(&e)));
    let mut f = Figures {
        curve: None,
        matrix: None,
        loaded: None,
    };
    if plan.has(Part::Curve) && !stop.load(Relaxed) {
        f.curve = Some(
            bench::curve(m, &plan.sizes, plan.cpu, stop, &mut obs)
                .map_err(|e| fail("latency curve", e))?,
        );
    }
    if plan.has(Part::Numa) && !stop.load(Relaxed) {
        f.matrix = Some(bench::matrix(
            m,
            plan.numa_size,
            &plan.cpu_nodes,
            &plan.mem_nodes,
            stop,
            &mut obs,
        ));
    }
    if plan.has(Part::Loaded) && !stop.load(Relaxed) {
        f.loaded = Some(
            bench::loaded(m, &plan.load, stop, &mut obs).map_err(|e| fail("loaded latency", e))?,
        );
    }
    Ok(f)
}

/// What to do about an error of allocating or binding memory.
fn advice(e: &std::io::Error) -> String {
    let hint = match e.raw_os_error() {
        Some(libc::ENOMEM) => {
            "out of memory: use a smaller --max-size, --numa-size or --loaded-size (with --pages huge: reserve more pages, vm.nr_hugepages)"
        }
        Some(libc::EPERM) | Some(libc::EACCES) => {
            "not permitted: the system refused a memory policy or CPU affinity (a container's seccomp or cpuset?)"
        }
        Some(libc::EINVAL) => {
            "invalid argument: a CPU or node dbio was not allowed to use, or a page size the kernel does not offer"
        }
        _ => return e.to_string(),
    };
    format!("{e} ({hint})")
}

fn assemble(
    a: &MemArgs,
    plan: &MemTest,
    machine: &Machine,
    f: Figures,
    started_at: &str,
    t0: u64,
    stopped: bool,
) -> MemResult {
    let topo = &machine.topology;
    let mut warnings = plan.warnings.clone();
    let curve = f.curve.as_ref().map(|c| result::curve_json(c, topo));
    let levels = curve
        .as_deref()
        .map(|c| result::levels(c, topo))
        .unwrap_or_default();
    let numa = f.matrix.as_ref().map(|m| result::numa_json(m, topo));
    if let Some(n) = &numa {
        for (i, row) in n.placement_pct.iter().enumerate() {
            for (j, p) in row.iter().enumerate() {
                if let Some(p) = p.filter(|&p| p < 90.0) {
                    warnings.push(format!(
                        "memory bound to node {} was found there for {p:.0} % of its pages only (CPU node {} row): the node may be short of free memory",
                        n.nodes[j], n.nodes[i]
                    ));
                }
            }
        }
        warnings.extend(n.out_of_line.iter().map(|o| o.message.clone()));
        warnings.extend(n.notes.iter().cloned());
    }
    let huge_backed_pct = f
        .curve
        .as_ref()
        // A buffer never filled (stopped while filling it) has no pages to count.
        .filter(|c| plan.memory.pages != buffer::PageKind::Base && c.buffer_bytes > 0)
        .map(|c| c.huge_backed_bytes as f64 / c.buffer_bytes.max(1) as f64 * 100.0);
    if let Some(p) = huge_backed_pct.filter(|&p| p < 90.0) {
        warnings.push(format!(
            "--pages thp: the kernel backed only {p:.0} % of the curve's buffer with huge pages (memory fragmented?): the curve is partly 4k pages"
        ));
    }
    if let Some(c) = f.curve.as_ref().filter(|c| c.buffer_bytes > 0)
        && let Some(node) = topo.node_of_cpu(plan.cpu)
        && topo.nodes.len() > 1
    {
        let local = result::share_on(&c.placement, node);
        if local < 90.0 {
            warnings.push(format!(
                "the curve's memory is only {local:.0} % on node {node}, the chasing CPU's own: its memory latency is partly remote"
            ));
        }
    }
    let busy = curve
        .iter()
        .flatten()
        .filter(|p| p.reps > 0 && p.preempted_reps == p.reps)
        .count()
        + f.loaded
            .iter()
            .flat_map(|l| &l.points)
            .filter(|p| p.latency.preempted == p.latency.reps)
            .count();
    if let Some(idle) = f
        .loaded
        .iter()
        .flat_map(|l| &l.points)
        .find(|p| p.threads == 0)
        && let Some(pct) = idle.other_cpus_busy_pct.filter(|&p| p > 25.0)
    {
        warnings.push(format!(
            "loaded latency: with 0 reading threads the other CPUs were {pct:.0} % busy with other work: the baseline was not idle, and the rise with load is understated"
        ));
    }
    if busy > 0 {
        warnings.push(format!(
            "{busy} figure(s) had no repetition that kept its CPU throughout (the machine is busy): each is its least disturbed repetition, and may still include time spent waiting for a CPU"
        ));
    }
    let parts: Vec<String> = plan.parts.iter().map(|p| p.name().to_string()).collect();
    MemResult {
        schema: result::SCHEMA.into(),
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        started_at: started_at.into(),
        elapsed_s: (now_ns() - t0) as f64 / 1e9,
        partial: stopped,
        stop_reason: if stopped { "interrupted" } else { "completed" }.into(),
        host: HostJson::current(),
        load_average: [0.0; 2],
        config: MemConfig {
            parts,
            sizes: plan.sizes.clone(),
            budget_s: a.budget.as_secs_f64(),
            pages_requested: plan.pages_requested.name().into(),
            allow_fallback: a.allow_fallback,
            numa_size_bytes: plan.numa_size,
            loaded_size_bytes: plan.load.size,
            reader_bytes: plan.load.reader_bytes,
            thread_counts: plan.load.thread_counts.clone(),
            cpu: plan.cpu,
            line_bytes: plan.memory.line as u64,
            seed: plan.memory.seed,
            clock: clock_name(),
            out: a.options.0.out.display().to_string(),
            shm: None,
            pid: None,
        },
        pages: plan.memory.pages.name().into(),
        page_size: PageSize {
            requested: plan.pages_requested.name().into(),
            used: plan.memory.pages.name().into(),
            bytes: plan.memory.huge_page_bytes as u64,
            huge_backed_pct,
            fallback: plan.fallback.clone(),
        },
        topology: topo.clone(),
        curve,
        levels,
        numa,
        loaded: f.loaded.as_ref().map(result::loaded_json),
        shm: None,
        pages_by_node: None,
        warnings,
    }
}

/// `--shm PATH` / `--pid PID`.
fn placement(
    a: &MemArgs,
    root: &SysRoot,
    machine: &Machine,
    started_at: &str,
    t0: u64,
) -> Result<MemOutcome> {
    let shm_error = |e: shm::ShmError| match e {
        shm::ShmError::Usage(m) => Error::usage(m),
        shm::ShmError::Io { what, err } => {
            Error::Io(format!("{what}: {}", crate::error::io_advice(&err)))
        }
    };
    let (file, process, tail) = match (&a.shm, a.pid) {
        (Some(path), _) => (
            Some(shm::file_placement(path, root).map_err(shm_error)?),
            None,
            "mem_shm".to_string(),
        ),
        (None, Some(pid)) => (
            None,
            Some(shm::process_placement(root, pid).map_err(shm_error)?),
            format!("mem_pid{pid}"),
        ),
        (None, None) => unreachable!("called for --shm or --pid"),
    };
    let topo = &machine.topology;
    let memory_nodes = topo
        .nodes
        .iter()
        .filter(|n| n.memory_bytes > 0)
        .count()
        .max(1);
    let page_bytes = file
        .as_ref()
        .map_or(crate::sys::page_size() as u64, |f| f.page_bytes);
    let mut warnings = Vec::new();
    if let Some(p) = &process
        && p.segments.is_empty()
    {
        warnings.push(format!(
            "process {} ({}) maps no SysV, /dev/shm, hugetlbfs or shared anonymous memory",
            p.pid, p.command
        ));
    }
    if let Some(f) = &file
        && f.pages_unknown > 0
    {
        warnings.push(format!(
            "{} page(s) could not be placed (the file changed while dbio looked)",
            f.pages_unknown
        ));
    }
    let (shm_json, pages_by_node) = result::shm_json(file, process, memory_nodes);
    let place = crate::report::RunPlace::make(&a.options.0.out, None, started_at, &tail, "mem")?;
    let r = MemResult {
        schema: result::SCHEMA.into(),
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        started_at: started_at.into(),
        elapsed_s: (now_ns() - t0) as f64 / 1e9,
        partial: false,
        stop_reason: "completed".into(),
        host: HostJson::current(),
        load_average: [load_average(); 2],
        config: MemConfig {
            parts: vec!["shm".into()],
            sizes: Vec::new(),
            budget_s: 0.0,
            pages_requested: String::new(),
            allow_fallback: false,
            numa_size_bytes: 0,
            loaded_size_bytes: 0,
            reader_bytes: 0,
            thread_counts: Vec::new(),
            cpu: 0,
            line_bytes: topo.line_bytes(),
            seed: 0,
            clock: clock_name(),
            out: a.options.0.out.display().to_string(),
            shm: a.shm.as_ref().map(|p| p.display().to_string()),
            pid: a.pid,
        },
        pages: if page_bytes > crate::sys::page_size() as u64 {
            "huge"
        } else {
            "4k"
        }
        .into(),
        page_size: PageSize {
            requested: String::new(),
            used: if page_bytes > crate::sys::page_size() as u64 {
                "huge"
            } else {
                "4k"
            }
            .into(),
            bytes: page_bytes,
            huge_backed_pct: None,
            fallback: None,
        },
        topology: topo.clone(),
        curve: None,
        levels: Vec::new(),
        numa: None,
        loaded: None,
        shm: Some(shm_json),
        pages_by_node: Some(pages_by_node),
        warnings,
    };
    let written = write_run(&place.dir, &r);
    let run_dir = place.dir.path().to_path_buf();
    place.close();
    Ok(MemOutcome {
        result: r,
        summary: written?,
        run_dir,
        exit: ExitCode::Ok,
    })
}

/// The 1-minute load average (0 when unknown).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// The files `dbio mem` writes into its directory: all that `dbio clean --stale` may remove
/// from the directory of one that was killed.
pub const MEM_DIR_FILES: &[&str] = &["result.json", "summary.txt", "report.html"];

/// Writes result.json, summary.txt and report.html; returns the summary.
fn write_run(dir: &crate::safety::fs::Dir, r: &MemResult) -> Result<String> {
    write_output(dir, "result.json", &json_text(r)?)?;
    let report = report::report(r);
    let summary = crate::report::summary::text(&report);
    write_output(dir, "summary.txt", &summary)?;
    write_output(dir, "report.html", &crate::report::html::page(&report))?;
    Ok(summary)
}

/// The one place `dbio mem` writes a file of its output directory: whole and new, as every
/// file of a run directory (`crate::safety::fs`).
fn write_output(dir: &crate::safety::fs::Dir, name: &str, text: &str) -> Result<()> {
    crate::report::write_file(dir, name, text, false)
}

pub fn json_text<T: serde::Serialize>(v: &T) -> Result<String> {
    serde_json::to_string_pretty(v)
        .map(|s| s + "\n")
        .map_err(|e| Error::other(format!("cannot serialize the result: {e}")))
}
