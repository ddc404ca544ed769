//! The three measurements of `dbio mem`, each on threads of its own (pinning never leaks to
//! the caller): latency by working-set size, the NUMA node × node matrix, and latency under
//! load. They take plain plans and return plain figures; what is made of them is the
//! report's business ([`super::result`]).

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::buffer::{Buffer, PageKind};
use super::chase::{self, Budget, Chain, Chaser, Sample};
use super::now_ns;
use super::numa::{self, Policy};
use super::stream;

/// Pages sampled with move_pages to see where a buffer really is.
const PLACEMENT_SAMPLES: usize = 1024;

/// What every measurement's buffers are made of.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Memory {
    pub pages: PageKind,
    pub huge_page_bytes: usize,
    /// Bytes per chased line (the cache line).
    pub line: usize,
    pub budget: Budget,
    pub seed: u64,
}

impl Memory {
    /// A filled buffer; None when `stop` was set meanwhile.
    fn buffer(&self, len: u64, policy: &Policy, stop: &AtomicBool) -> io::Result<Option<Buffer>> {
        Buffer::new(len as usize, self.pages, self.huge_page_bytes, policy, stop)
    }

    /// A chain over the first `bytes` of `buf`; None when `stop` was set meanwhile.
    fn chain(&self, buf: &Buffer, bytes: u64, salt: u64, stop: &AtomicBool) -> Option<Chain> {
        let lines = (bytes as usize / self.line).max(1);
        Chain::build(buf, lines, self.line, self.seed ^ salt, stop)
    }
}

/// Where a measurement is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Step {
    /// Mapping and faulting in a buffer of this many bytes.
    Allocating(u64),
    /// Latency curve point `index` of `of`.
    Curve {
        index: usize,
        of: usize,
        size_bytes: u64,
    },
    /// A NUMA matrix cell; `mem_node` None is the interleaved row.
    Numa {
        cpu_node: u32,
        mem_node: Option<u32>,
    },
    /// Loaded latency with this many reading threads.
    Loaded { threads: usize },
    /// The figure just taken (ns per load).
    Latency(f64),
}

/// Receives [`Step`]s; called between repetitions, never while one is timed.
pub type Observer<'a> = &'a mut (dyn FnMut(Step) + Send);

/// One point of the latency curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    pub size_bytes: u64,
    /// ns per load.
    pub sample: Sample,
    pub loads: u64,
}

/// Where a buffer's pages were, from [`PLACEMENT_SAMPLES`] pages: node → pages (negative:
/// -errno for a page not present).
pub type Placement = BTreeMap<i32, u64>;

#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub cpu: usize,
    pub points: Vec<CurvePoint>,
    pub buffer_bytes: u64,
    pub huge_backed_bytes: u64,
    pub placement: Placement,
    /// False when stopped before the last size.
    pub complete: bool,
}

/// Latency at each size in `sizes` (ascending), chased on `cpu` over one buffer of the
/// largest size, each point over the first `size` bytes of it.
pub fn curve(
    m: &Memory,
    sizes: &[u64],
    cpu: usize,
    stop: &AtomicBool,
    obs: Observer,
) -> io::Result<Curve> {
    on_thread(&[cpu], || {
        let largest = sizes.iter().copied().max().unwrap_or(0);
        obs(Step::Allocating(largest));
        let Some(buf) = m.buffer(largest, &Policy::Local, stop)? else {
            // Stopped before there was anything to measure on.
            return Ok(Curve {
                cpu,
                points: Vec::new(),
                buffer_bytes: 0,
                huge_backed_bytes: 0,
                placement: Placement::new(),
                complete: false,
            });
        };
        let mut points = Vec::with_capacity(sizes.len());
        for (i, &size) in sizes.iter().enumerate() {
            if stop.load(Relaxed) {
                break;
            }
            obs(Step::Curve {
                index: i,
                of: sizes.len(),
                size_bytes: size,
            });
            let Some(chain) = m.chain(&buf, size, size, stop) else {
                break;
            };
            let Some((sample, loads)) = chase::latency(&chain, &m.budget, stop) else {
                break;
            };
            obs(Step::Latency(sample.median));
            points.push(CurvePoint {
                size_bytes: size,
                sample,
                loads,
            });
        }
        Ok(Curve {
            cpu,
            complete: points.len() == sizes.len(),
            points,
            buffer_bytes: buf.len() as u64,
            huge_backed_bytes: buf.huge_backed_bytes(),
            placement: buf.placement(PLACEMENT_SAMPLES),
        })
    })
}

/// A CPU node with the CPUs of it dbio may use.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuNode {
    pub id: u32,
    pub cpus: Vec<usize>,
}

/// One cell of the matrix: latency from one CPU of the CPU node, bandwidth of all of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// ns per load.
    pub latency: Sample,
    /// GiB/s read by `threads` threads.
    pub bandwidth: Option<Sample>,
    pub threads: usize,
    pub placement: Placement,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Matrix {
    pub size_bytes: u64,
    pub cpu_nodes: Vec<u32>,
    pub mem_nodes: Vec<u32>,
    /// `cells[i][j]`: CPU node `cpu_nodes[i]`, memory bound to `mem_nodes[j]`.
    pub cells: Vec<Vec<Option<Cell>>>,
    /// Memory interleaved over every memory node, from each CPU node.
    pub interleave: Vec<Option<Cell>>,
    /// Why a cell is missing.
    pub notes: Vec<String>,
    pub complete: bool,
}

/// The NUMA matrix: for every CPU node × memory node, and for memory interleaved over all
/// memory nodes, the idle latency at `size` bytes and the read bandwidth of the node's CPUs.
pub fn matrix(
    m: &Memory,
    size: u64,
    cpu_nodes: &[CpuNode],
    mem_nodes: &[u32],
    stop: &AtomicBool,
    obs: Observer,
) -> Matrix {
    let mut out = Matrix {
        size_bytes: size,
        cpu_nodes: cpu_nodes.iter().map(|c| c.id).collect(),
        mem_nodes: mem_nodes.to_vec(),
        cells: vec![vec![None; mem_nodes.len()]; cpu_nodes.len()],
        interleave: vec![None; cpu_nodes.len()],
        notes: Vec::new(),
        complete: false,
    };
    for (i, c) in cpu_nodes.iter().enumerate() {
        let targets = mem_nodes
            .iter()
            .map(|&n| (Some(n), Policy::Bind(vec![n])))
            .chain((!mem_nodes.is_empty()).then(|| (None, Policy::Interleave(mem_nodes.to_vec()))));
        for (j, (mem_node, policy)) in targets.enumerate() {
            if stop.load(Relaxed) {
                return out;
            }
            obs(Step::Numa {
                cpu_node: c.id,
                mem_node,
            });
            match cell(m, size, c, &policy, stop, obs) {
                Ok(Some(cell)) => {
                    obs(Step::Latency(cell.latency.median));
                    match mem_node {
                        Some(_) => out.cells[i][j] = Some(cell),
                        None => out.interleave[i] = Some(cell),
                    }
                }
                Ok(None) => return out,
                Err(e) => out.notes.push(format!(
                    "CPU node {} with memory {}: {e}",
                    c.id,
                    policy.describe()
                )),
            }
        }
    }
    out.complete = true;
    out
}

fn cell(
    m: &Memory,
    size: u64,
    c: &CpuNode,
    policy: &Policy,
    stop: &AtomicBool,
    obs: Observer,
) -> io::Result<Option<Cell>> {
    on_thread(&c.cpus[..1], || {
        obs(Step::Allocating(size));
        let Some(buf) = m.buffer(size, policy, stop)? else {
            return Ok(None);
        };
        let placement = buf.placement(PLACEMENT_SAMPLES);
        let Some(chain) = m.chain(&buf, size, size ^ u64::from(c.id), stop) else {
            return Ok(None);
        };
        let Some((latency, _)) = chase::latency(&chain, &m.budget, stop) else {
            return Ok(None);
        };
        // SAFETY: the buffer is mapped for its whole length and outlives the readers.
        let data = unsafe { std::slice::from_raw_parts(buf.as_ptr(), buf.len()) };
        let parts = stream::split(data, c.cpus.len());
        let work: Vec<(usize, &[u8])> = c.cpus.iter().copied().zip(parts).collect();
        let bandwidth =
            stream::with_readers(&work, stop, |bytes| read_rate(&m.budget, stop, bytes))?;
        Ok(Some(Cell {
            latency,
            bandwidth,
            threads: work.len(),
            placement,
        }))
    })
}

/// GiB/s of running readers, one repetition per `rep_ns` of sleep, until stable. A
/// repetition in which the readers read nothing (other work held their CPUs) is not a clean
/// figure, and a sample of nothing but those is no figure at all (None, not 0 GiB/s).
fn read_rate(budget: &Budget, stop: &AtomicBool, bytes: &dyn Fn() -> u64) -> Option<Sample> {
    let rep = std::time::Duration::from_nanos(budget.bandwidth_rep_ns());
    let budget = Budget {
        rep_ns: rep.as_nanos() as u64,
        ..*budget
    };
    chase::repeat(&budget, stop, || {
        let (b0, t0) = (bytes(), now_ns());
        std::thread::sleep(rep);
        let (b1, t1) = (bytes(), now_ns());
        chase::Rep {
            value: stream::gib_per_s(b1 - b0, t1 - t0),
            clean: b1 > b0,
        }
    })
    .filter(|s| s.max > 0.0)
}

/// Latency with `threads` other threads reading memory.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedPoint {
    pub threads: usize,
    /// ns per load of the chasing thread.
    pub latency: Sample,
    /// What the reading threads read meanwhile, GiB/s (mean of the rounds).
    pub bandwidth_gib_s: f64,
    /// The latency of each round (sorted); `latency` is the middle round's.
    pub round_ns: Vec<f64>,
    /// How busy the CPUs that may read (all but the chasing one) were meanwhile, by the
    /// readers or anything else (/proc/stat); None when there are none.
    pub other_cpus_busy_pct: Option<f64>,
    pub cpus: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    pub cpu: usize,
    pub size_bytes: u64,
    pub reader_bytes: u64,
    pub points: Vec<LoadedPoint>,
    pub complete: bool,
}

/// What loaded latency runs: a chase of `size` bytes on `cpu` while 0, 1, 2, ... threads
/// (`thread_counts`, on `reader_cpus` in order) each read `reader_bytes` of their own.
#[derive(Debug, Clone, PartialEq)]
pub struct Load {
    pub size: u64,
    pub cpu: usize,
    pub reader_cpus: Vec<usize>,
    pub reader_bytes: u64,
    pub thread_counts: Vec<usize>,
}

/// Loaded latency (as Intel MLC measures it). All memory is allocated from the chasing
/// CPU, so it sits on its node.
pub fn loaded(m: &Memory, l: &Load, stop: &AtomicBool, obs: Observer) -> io::Result<Loaded> {
    let Load {
        size,
        cpu,
        ref reader_cpus,
        reader_bytes,
        ref thread_counts,
    } = *l;
    on_thread(&[cpu], || {
        let most = thread_counts.iter().copied().max().unwrap_or(0);
        obs(Step::Allocating(size + reader_bytes * most as u64));
        let stopped = || Loaded {
            cpu,
            size_bytes: size,
            reader_bytes,
            points: Vec::new(),
            complete: false,
        };
        let Some(chase_buf) = m.buffer(size, &Policy::Local, stop)? else {
            return Ok(stopped());
        };
        let mut readers = Vec::with_capacity(most);
        for _ in 0..most {
            let Some(b) = m.buffer(reader_bytes, &Policy::Local, stop)? else {
                return Ok(stopped());
            };
            readers.push(b);
        }
        let Some(chain) = m.chain(&chase_buf, size, size ^ 0x10ad, stop) else {
            return Ok(stopped());
        };
        // Rounds over the thread counts, forth and back, each with a share of the budget:
        // what else the machine runs drifts, and alternating spreads it over every count.
        let budget = Budget {
            time_ns: m.budget.time_ns / LOADED_ROUNDS as u64,
            ..m.budget
        };
        let mut rounds: Vec<Vec<(Sample, f64)>> = vec![Vec::new(); thread_counts.len()];
        // Busy and total ticks of the readers' CPUs during each count's points.
        let mut ticks = vec![(0u64, 0u64); thread_counts.len()];
        'rounds: for round in 0..LOADED_ROUNDS {
            let mut order: Vec<usize> = (0..thread_counts.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for i in order {
                let k = thread_counts[i];
                if stop.load(Relaxed) {
                    break 'rounds;
                }
                obs(Step::Loaded { threads: k });
                let work: Vec<(usize, &[u8])> = reader_cpus[..k]
                    .iter()
                    .zip(&readers)
                    // SAFETY: each buffer is mapped for its whole length and outlives the
                    // readers.
                    .map(|(&c, b)| {
                        (c, unsafe {
                            std::slice::from_raw_parts(b.as_ptr(), b.len())
                        })
                    })
                    .collect();
                let before = cpu_ticks(reader_cpus);
                let measured = stream::with_readers(&work, stop, |bytes| {
                    let mut c = Chaser::new(&chain, budget.rep_ns, stop)?;
                    let (b0, t0) = (bytes(), now_ns());
                    let s = chase::repeat(&budget, stop, || c.rep());
                    let (b1, t1) = (bytes(), now_ns());
                    s.map(|s| (s, stream::gib_per_s(b1 - b0, t1 - t0)))
                })?;
                let Some((latency, bandwidth)) = measured else {
                    break 'rounds;
                };
                let after = cpu_ticks(reader_cpus);
                ticks[i].0 += after.0.saturating_sub(before.0);
                ticks[i].1 += after.1.saturating_sub(before.1);
                obs(Step::Latency(latency.median));
                rounds[i].push((latency, bandwidth));
            }
        }
        let points: Vec<LoadedPoint> = thread_counts
            .iter()
            .zip(rounds)
            .zip(ticks)
            .filter(|((_, r), _)| r.len() == LOADED_ROUNDS)
            .map(|((&k, mut r), (busy, total))| {
                r.sort_by(|a, b| a.0.median.total_cmp(&b.0.median));
                let mut latency = r[r.len() / 2].0;
                latency.reps = r.iter().map(|x| x.0.reps).sum();
                latency.preempted = r.iter().map(|x| x.0.preempted).sum();
                latency.stable = r.iter().all(|x| x.0.stable);
                LoadedPoint {
                    threads: k,
                    latency,
                    bandwidth_gib_s: r.iter().map(|x| x.1).sum::<f64>() / r.len() as f64,
                    round_ns: r.iter().map(|x| x.0.median).collect(),
                    other_cpus_busy_pct: (total > 0).then(|| busy as f64 / total as f64 * 100.0),
                    cpus: reader_cpus[..k].to_vec(),
                }
            })
            .collect();
        Ok(Loaded {
            cpu,
            size_bytes: size,
            reader_bytes,
            complete: points.len() == thread_counts.len(),
            points,
        })
    })
}

/// Rounds of loaded latency over the thread counts.
pub const LOADED_ROUNDS: usize = 3;

/// Busy (not idle, not iowait) and total ticks of `cpus` so far, from /proc/stat.
fn cpu_ticks(cpus: &[usize]) -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    crate::measure::os::parse_stat(&text)
        .iter()
        .filter(|(name, _)| {
            name.strip_prefix("cpu")
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|n| cpus.contains(&n))
        })
        .fold((0, 0), |(b, t), (_, c)| {
            (b + c.total.saturating_sub(c.idle + c.iowait), t + c.total)
        })
}

/// Runs `f` on a new thread restricted to `cpus`, so the caller's affinity never changes.
fn on_thread<T: Send>(cpus: &[usize], f: impl FnOnce() -> io::Result<T> + Send) -> io::Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            numa::pin_to_cpus(cpus)?;
            f()
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("a measuring thread panicked")))
    })
}
