//! The memory a run takes, added up before anything is created: every structure that grows
//! with the options says its own size (`footprint`), and both its allocation and this sum
//! use that, so the two cannot drift apart. The sum is checked against the memory the
//! machine has available.

use crate::engine::{self, EngineKind};
use crate::measure::SessionCounters;
use crate::measure::histogram;
use crate::sys::AlignedBuf;
use crate::workload::cache::{BufferCache, DirtyQueue};
use crate::workload::redo::{MAX_PIECES, RedoLog};
use crate::workload::spec::RunConfig;
use crate::workload::{Pattern, Workload};

/// The stack every thread of a run is started with (reserved, not committed): nothing on a
/// request's path recurses or keeps large arrays on the stack.
pub const STACK_RESERVED: usize = 256 << 10;

/// Memory one thread commits beyond the structures counted one by one: the pages of its
/// stack it touches (with the thread's descriptor and thread-local storage at its top), its
/// allocator's per-thread cache, and the kernel's stack and task structures for it.
/// Measured: about 40 KiB per session thread of `read-iops --sync`; counted with room.
pub const THREAD_COMMITTED: u64 = 64 << 10;

/// The variable a test sets to make the machine seem to have this many bytes available
/// (MemAvailable), to see the refusal without filling the machine.
pub const MEM_AVAILABLE_ENV: &str = "DBIO_FAULT_MEM_AVAILABLE";

/// One kind of memory a run takes.
#[derive(Debug, Clone)]
pub struct Part {
    pub what: &'static str,
    pub bytes: u64,
    /// The options that lower it.
    pub lower: &'static str,
}

/// What a run takes, part by part.
#[derive(Debug, Clone, Default)]
pub struct MemoryNeed {
    pub parts: Vec<Part>,
}

impl MemoryNeed {
    fn add(&mut self, what: &'static str, bytes: u64, lower: &'static str) {
        match self.parts.iter_mut().find(|p| p.what == what) {
            Some(p) => p.bytes = p.bytes.saturating_add(bytes),
            None => self.parts.push(Part { what, bytes, lower }),
        }
    }

    pub fn total(&self) -> u64 {
        self.parts
            .iter()
            .fold(0u64, |s, p| s.saturating_add(p.bytes))
    }

    /// Bytes of the part called `what` (0 when the run has none).
    pub fn part(&self, what: &str) -> u64 {
        self.parts
            .iter()
            .find(|p| p.what == what)
            .map_or(0, |p| p.bytes)
    }

    /// Refuses a run that needs more than half of `available` (the rest is left to the page
    /// cache, the kernel and everything else running): the message names what is needed,
    /// what is available, the largest part and the options that lower it.
    pub fn check(&self, available: u64, source: &str) -> Result<(), String> {
        let total = self.total();
        if total <= available / 2 {
            return Ok(());
        }
        let mut parts: Vec<&Part> = self.parts.iter().filter(|p| p.bytes > 0).collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
        let list: Vec<String> = parts
            .iter()
            .take(3)
            .map(|p| format!("{} {}", p.what, crate::units::human_bytes(p.bytes)))
            .collect();
        let lower = parts.first().map_or("--sessions", |p| p.lower);
        Err(format!(
            "memory: this run needs {} ({}), and {} is available ({source}), of which a run uses at most half; lower {lower}",
            crate::units::human_bytes(total),
            list.join(", "),
            crate::units::human_bytes(available),
        ))
    }
}

/// The memory available to a run: `DBIO_FAULT_MEM_AVAILABLE` (bytes, or a size such as
/// `512M`) when set, else MemAvailable; with where the figure comes from.
pub fn available() -> Result<Option<(u64, &'static str)>, String> {
    match std::env::var(MEM_AVAILABLE_ENV) {
        Ok(v) => crate::units::parse_size(v.trim())
            .map(|b| Some((b, "DBIO_FAULT_MEM_AVAILABLE, testing")))
            .map_err(|e| format!("{MEM_AVAILABLE_ENV}={v}: {e}")),
        Err(_) => Ok(crate::safety::limits::mem_available().map(|b| (b, "MemAvailable"))),
    }
}

/// Threads of a run besides its sessions, LGWR and DBWRs, that commit a stack: the main
/// thread, the ASH sampler, the noise thread, the signal and progress threads.
const OTHER_THREADS: u64 = 5;

/// Adds up what a run of `cfg` following `plan` takes with the engine `kind` over
/// `data_files` data files.
pub fn estimate(
    cfg: &RunConfig,
    plan: &Workload,
    kind: EngineKind,
    data_files: usize,
) -> MemoryNeed {
    let mut m = MemoryNeed::default();
    // Direct I/O aligns buffers to the device's logical block, at most a page in practice;
    // a larger alignment only adds to the slack counted per buffer.
    let align = crate::sys::page_size().max(4096);
    let completion = std::mem::size_of::<engine::Completion>() as u64;
    let temp_files: usize = (plan.classes.iter())
        .filter(|c| c.pattern == Pattern::Temp)
        .map(|c| c.spec.sessions)
        .sum();
    const SESSIONS: &str = "--sessions";
    const BUFFERS: &str = "--sessions, --depth, --batch or --block-size (request size × requests in flight × sessions)";
    for c in &plan.classes {
        let n = c.spec.sessions as u64;
        if c.pattern == Pattern::RedoWrite {
            // A log writer of its own: its log buffer, the redo it copies, its engine.
            let most = c.shape.sizes.map_or(c.shape.block_size, |s| s.max());
            let log = RedoLog::footprint(1, cfg.redo.block, most, align) + most;
            m.add("log buffers", n.saturating_mul(log), SESSIONS);
            let e = engine::footprint(kind, cfg.redo.files as usize, MAX_PIECES + 1)
                + (MAX_PIECES as u64 + 1) * completion;
            m.add("engines", n.saturating_mul(e), SESSIONS);
            continue;
        }
        let capacity = c.capacity(plan);
        let buffer = AlignedBuf::footprint(c.buffer_bytes(plan), align);
        m.add("I/O buffers", n.saturating_mul(buffer), BUFFERS);
        let files = if c.pattern == Pattern::Temp {
            temp_files
        } else {
            data_files
        };
        // The session's engine and its own table of completions (and of what it verifies).
        let mut e = engine::footprint(kind, files, capacity) + capacity.max(1) as u64 * completion;
        if cfg.dataset.verify {
            e += capacity.max(1) as u64 * 8;
        }
        m.add("engines", n.saturating_mul(e), BUFFERS);
    }
    let mut threads = cfg.sessions as u64 + OTHER_THREADS;
    if let Some(t) = plan.transactions().filter(|_| plan.dbwr > 0) {
        let (bs, batch) = (t.shape.block_size as usize, t.shape.batch);
        let per = AlignedBuf::footprint(batch * bs, align)
            + engine::footprint(kind, data_files, batch)
            + batch.max(1) as u64 * completion;
        m.add("I/O buffers", plan.dbwr as u64 * per, BUFFERS);
        threads += plan.dbwr as u64;
        let data_blocks = t.shape.data_blocks();
        match cfg.oltp.cache_size {
            Some(size) => {
                let buffers = (size / t.shape.block_size).min(data_blocks.max(1));
                m.add(
                    "buffer cache",
                    BufferCache::footprint(buffers as usize, bs, data_blocks, align)
                        + DirtyQueue::footprint(buffers),
                    "--cache-size",
                );
            }
            None => m.add(
                "dirty block queue",
                DirtyQueue::footprint(data_blocks),
                "--size (or a larger --block-size)",
            ),
        }
    }
    if plan.lgwr {
        threads += 1;
        m.add(
            "log buffer",
            RedoLog::footprint(cfg.sessions, cfg.redo.block, plan.redo.per_commit.hi, align),
            "--redo-per-commit or --sessions",
        );
        m.add(
            "engines",
            engine::footprint(kind, cfg.redo.files as usize, MAX_PIECES + 1)
                + (MAX_PIECES as u64 + 1) * completion,
            SESSIONS,
        );
    }
    let roles = cfg.sessions + usize::from(plan.lgwr) + plan.dbwr + 1;
    m.add(
        "latency histograms",
        SessionCounters::footprint(roles, plan.events.len()),
        SESSIONS,
    );
    m.add(
        "thread stacks",
        threads.saturating_mul(THREAD_COMMITTED),
        SESSIONS,
    );
    if cfg.dataset.verify {
        // The table of last write sequences, as read from its file and as kept.
        let blocks = plan.classes.first().map_or(0, |c| c.shape.data_blocks());
        m.add(
            "verify map",
            blocks.saturating_mul(2 * 4),
            "--size (or a larger --block-size)",
        );
    }
    // The sampler's snapshots and totals (a few whole histograms per event), and the
    // per-second history, which grows with the measured seconds.
    let events = plan.events.len() as u64;
    let seconds = cfg.duration.as_secs() + 1;
    m.add(
        "per-second history",
        events * 8 * histogram::BYTES as u64
            + seconds.saturating_mul(events * 96 + 64 * u64::from(cfg.ash_hz.max(1))),
        "--duration",
    );
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::RunArgs;
    use crate::workload::Test;

    /// A run's configuration and plan from the command line's defaults, changed by `set`.
    fn planned(test: Test, set: impl Fn(&mut RunArgs)) -> (RunConfig, Workload) {
        let mut a = RunArgs::defaults(Some(test));
        a.target = std::env::temp_dir().join("dbio-memory-estimate");
        a.size = Some(256 << 20);
        set(&mut a);
        let cfg = crate::options::check::run_config(&a).expect("valid options");
        let files = cfg.dataset.files as usize;
        let bs = cfg.dataset.block_size;
        let plan =
            crate::workload::plan(&cfg, files, cfg.dataset.file_size() / bs * bs, bs).unwrap();
        (cfg, plan)
    }

    /// Allocates what the run allocates (as run/roles.rs and run/mod.rs do, for one
    /// thread of each kind and counted for all) and returns, per part, the bytes the
    /// allocations themselves report.
    fn allocated(cfg: &RunConfig, plan: &Workload) -> Vec<(&'static str, u64)> {
        let align = 4096;
        let roles = cfg.sessions + usize::from(plan.lgwr) + plan.dbwr + 1;
        let counters = SessionCounters::many(roles, plan.events.len());
        let histograms = counters[0].events[0].latency.mapped_bytes() as u64;
        let mut buffers = 0u64;
        for c in plan
            .classes
            .iter()
            .filter(|c| c.pattern != Pattern::RedoWrite)
        {
            let b = AlignedBuf::new(c.buffer_bytes(plan).max(1), align).unwrap();
            buffers += b.len() as u64 * c.spec.sessions as u64;
        }
        let mut out = vec![("latency histograms", histograms), ("I/O buffers", buffers)];
        if plan.lgwr {
            let log =
                RedoLog::new(cfg.sessions, cfg.redo.block, plan.redo.per_commit.hi, align).unwrap();
            out.push(("log buffer", log.ring_region().1 as u64));
        }
        out
    }

    #[test]
    fn the_estimate_covers_what_is_allocated() {
        let configs: Vec<(RunConfig, Workload)> = vec![
            planned(Test::ReadIops, |a| {
                a.sync = true;
                a.sessions = 4;
            }),
            planned(Test::ReadIops, |a| {
                a.sessions = 3;
                a.batch = 64;
            }),
            planned(Test::ReadMbps, |a| {
                a.sessions = 2;
                a.depth = 16;
                a.block_size = 1 << 20;
            }),
            planned(Test::Redo, |a| a.sessions = 8),
            planned(Test::Oltp, |a| a.sessions = 5),
        ];
        for (cfg, plan) in &configs {
            let need = estimate(cfg, plan, EngineKind::Sync, cfg.dataset.files as usize);
            let parts = allocated(cfg, plan);
            for (what, bytes) in &parts {
                assert!(
                    need.part(what) >= *bytes && *bytes > 0,
                    "{:?} {what}: estimated {}, allocated {bytes}",
                    cfg.test,
                    need.part(what)
                );
            }
            let sum: u64 = parts.iter().map(|p| p.1).sum();
            assert!(need.total() >= sum, "{:?}", cfg.test);
        }
    }

    #[test]
    fn estimates_grow_with_the_options_that_scale_memory() {
        let need = |set: &dyn Fn(&mut RunArgs)| {
            let (cfg, plan) = planned(Test::ReadMbps, set);
            estimate(&cfg, &plan, EngineKind::Sync, 4)
        };
        let base = need(&|a| {
            a.sessions = 2;
            a.depth = 4;
        });
        let more = need(&|a| {
            a.sessions = 20;
            a.depth = 4;
        });
        let deeper = need(&|a| {
            a.sessions = 2;
            a.depth = 64;
        });
        assert!(more.part("latency histograms") >= 10 * base.part("latency histograms") / 2);
        assert!(more.part("I/O buffers") >= 10 * base.part("I/O buffers"));
        assert!(deeper.part("I/O buffers") >= 8 * base.part("I/O buffers"));
        assert!(
            base.part("thread stacks") >= (2 + OTHER_THREADS) * THREAD_COMMITTED,
            "{base:?}"
        );
    }

    #[test]
    fn the_refusal_names_memory_the_need_and_what_to_lower() {
        let (cfg, plan) = planned(Test::ReadIops, |a| {
            a.sync = true;
            a.sessions = 100;
        });
        let need = estimate(&cfg, &plan, EngineKind::Sync, 4);
        assert!(need.check(2 * need.total(), "test").is_ok());
        let e = need.check(need.total(), "test").unwrap_err();
        assert!(e.starts_with("memory: this run needs "), "{e}");
        assert!(e.contains("--sessions"), "{e}");
        assert!(e.contains(&crate::units::human_bytes(need.total())), "{e}");
    }
}
