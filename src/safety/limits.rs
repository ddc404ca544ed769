//! What the machine allows, read before anything is created, deleted or measured: how many
//! threads a run may start (`kernel.threads-max`, `kernel.pid_max`, `vm.max_map_count`,
//! `RLIMIT_NPROC`), how much memory their buffers and histograms may take
//! (`MemAvailable`), and how much space files may take on each file system.

use crate::units::Shown;
use std::path::Path;

/// What one session takes of the machine's limits, as measured (README: Safety): its
/// thread (with io_uring on a file system that cannot do direct I/O without blocking, such
/// as tmpfs, a kernel worker too), its memory maps (stack, guard page, buffer, allocator
/// arena; an io_uring ring maps three more). Memory is checked for the run as a whole
/// (`run::memory`), not per session.
#[derive(Debug, Clone, Copy)]
pub struct PerSession {
    pub threads: u64,
    pub maps: u64,
}

/// The limits that bound the number of threads, as read now.
#[derive(Debug, Clone, Default)]
pub struct ThreadLimits {
    /// `kernel.threads-max` minus the threads that exist now (system-wide).
    pub threads_left: Option<u64>,
    /// `kernel.pid_max` minus the threads that exist now.
    pub pids_left: Option<u64>,
    /// `vm.max_map_count` minus this process's mappings now.
    pub maps_left: Option<u64>,
    /// `RLIMIT_NPROC` minus this user's threads now (None when unlimited, or for root,
    /// whom the kernel does not hold to it).
    pub nproc_left: Option<u64>,
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Threads that exist now, system-wide: the denominator of /proc/loadavg's 4th field.
fn threads_now() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/loadavg").ok()?;
    s.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok()
}

/// `MemAvailable` in bytes.
pub fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
}

/// Threads of processes owned by `uid` (what RLIMIT_NPROC counts).
fn threads_of_user(uid: u32) -> u64 {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return 0;
    };
    rd.flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|v| v.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u32>().ok())
                == Some(uid)
        })
        .filter_map(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
        .sum()
}

impl ThreadLimits {
    /// Reads the limits now.
    pub fn read() -> ThreadLimits {
        let threads = threads_now();
        let maps_now = std::fs::read_to_string("/proc/self/maps")
            .map(|s| s.lines().count() as u64)
            .ok();
        let euid = super::fs::effective_uid();
        let nproc_left = (euid != 0)
            .then(|| {
                // SAFETY: zeroed rlimit is valid; getrlimit fills it.
                let mut rl: libc::rlimit = unsafe { std::mem::zeroed() };
                let rc = unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) };
                (rc == 0 && rl.rlim_cur != libc::RLIM_INFINITY)
                    .then(|| rl.rlim_cur.saturating_sub(threads_of_user(euid)))
            })
            .flatten();
        ThreadLimits {
            threads_left: read_u64("/proc/sys/kernel/threads-max")
                .zip(threads)
                .map(|(max, now)| max.saturating_sub(now)),
            pids_left: read_u64("/proc/sys/kernel/pid_max")
                .zip(threads)
                .map(|(max, now)| max.saturating_sub(now)),
            maps_left: read_u64("/proc/sys/vm/max_map_count")
                .zip(maps_now)
                .map(|(max, now)| max.saturating_sub(now)),
            nproc_left,
        }
    }

    /// The most sessions a run may start when each takes `per` and `extra_threads` other
    /// threads run beside them, and the limit that sets it (with what to do about it).
    pub fn max_sessions(&self, per: PerSession, extra_threads: u64) -> (u64, String) {
        let mut best = (u64::MAX, String::new());
        let mut consider = |n: Option<u64>, why: String| {
            if let Some(n) = n
                && n < best.0
            {
                best = (n, why);
            }
        };
        let threads =
            |v: Option<u64>| v.map(|v| v.saturating_sub(extra_threads) / per.threads.max(1));
        consider(
            threads(self.threads_left),
            "kernel.threads-max (threads left on this machine; raise it with sysctl)".into(),
        );
        consider(
            threads(self.pids_left),
            "kernel.pid_max (process ids left on this machine; raise it with sysctl)".into(),
        );
        consider(
            self.maps_left
                .map(|m| m.saturating_sub(extra_threads * 2) / per.maps.max(1)),
            format!(
                "vm.max_map_count (each session needs about {} memory maps; raise it with `sysctl -w vm.max_map_count=N`)",
                per.maps
            ),
        );
        consider(
            threads(self.nproc_left),
            "the user's process limit (RLIMIT_NPROC, `ulimit -u`)".into(),
        );
        best
    }
}

/// Free bytes for unprivileged users on the file system holding `path`, with the file
/// system's device (to add up what goes onto one file system); None when it keeps no
/// account of space (ramfs).
pub fn free_space(path: &Path) -> std::io::Result<(Option<u64>, u64)> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path)?.dev();
    Ok((crate::sys::free_bytes(path)?, dev))
}

/// `64M` for whole MiB (as typed), else `2.0 MiB`.
fn label(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        crate::units::size_label(bytes)
    } else {
        crate::units::human_bytes(bytes)
    }
}

/// Space needed on file systems, added up per file system before anything is written.
#[derive(Debug, Default, Clone)]
pub struct SpaceNeeds {
    items: Vec<Need>,
}

#[derive(Debug, Clone)]
struct Need {
    /// The file system's device, and a path on it.
    dev: u64,
    path: std::path::PathBuf,
    bytes: u64,
    /// Bytes of dbio's own files there removed first.
    freed: u64,
    what: String,
    /// What to do when it does not fit.
    advice: &'static str,
}

impl SpaceNeeds {
    /// `bytes` will be written on the file system of `path` for `what`, after `freed`
    /// bytes of dbio's own files there are removed; `advice` says what to do when they do
    /// not fit (e.g. "use a smaller --size").
    pub fn add(
        &mut self,
        path: &Path,
        bytes: u64,
        freed: u64,
        what: impl Into<String>,
        advice: &'static str,
    ) -> std::io::Result<()> {
        let (_, dev) = free_space(path)?;
        self.items.push(Need {
            dev,
            path: path.to_path_buf(),
            bytes,
            freed,
            what: what.into(),
            advice,
        });
        Ok(())
    }

    /// Adds the needs of `other`.
    pub fn merge(&mut self, other: &SpaceNeeds) {
        self.items.extend(other.items.iter().cloned());
    }

    /// Checks every file system: the needs on it, minus what is freed first, fit in its free
    /// space. The error names what does not fit and what to do.
    pub fn check(&self) -> Result<(), String> {
        let mut devs: Vec<u64> = self.items.iter().map(|i| i.dev).collect();
        devs.sort_unstable();
        devs.dedup();
        for dev in devs {
            let on: Vec<&Need> = self.items.iter().filter(|i| i.dev == dev).collect();
            let mut need: u64 = 0;
            let mut freed: u64 = 0;
            for i in &on {
                need = need.checked_add(i.bytes).ok_or_else(|| {
                    format!(
                        "{} and the rest need more bytes than can be counted; {}",
                        i.what, i.advice
                    )
                })?;
                freed = freed.saturating_add(i.freed);
            }
            let Ok((Some(free), _)) = free_space(&on[0].path) else {
                continue;
            };
            if need > free.saturating_add(freed) {
                let what: Vec<String> = on
                    .iter()
                    .filter(|i| i.bytes > 0)
                    .map(|i| format!("{} ({})", i.what, label(i.bytes)))
                    .collect();
                let biggest = on
                    .iter()
                    .max_by_key(|i| i.bytes)
                    .expect("one need at least");
                return Err(format!(
                    "{} {} not fit in {}: {} free{}; {}",
                    what.join(" + "),
                    if what.len() == 1 { "does" } else { "do" },
                    on[0].path.shown(),
                    crate::units::human_bytes(free),
                    if freed > 0 {
                        format!(
                            " (+ {} of dbio's files it would replace)",
                            crate::units::human_bytes(freed)
                        )
                    } else {
                        String::new()
                    },
                    biggest.advice
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tightest_limit_sets_the_maximum_and_is_named() {
        let l = ThreadLimits {
            threads_left: Some(100_000),
            pids_left: Some(4_000_000),
            maps_left: Some(65_000),
            nproc_left: None,
        };
        let per = PerSession {
            threads: 2,
            maps: 8,
        };
        let (n, why) = l.max_sessions(per, 10);
        assert_eq!(n, (65_000 - 20) / 8);
        assert!(why.contains("vm.max_map_count"), "{why}");
        assert_eq!(ThreadLimits::default().max_sessions(per, 0).0, u64::MAX);
    }

    #[test]
    fn this_machine_has_readable_limits() {
        let l = ThreadLimits::read();
        assert!(l.threads_left.is_some_and(|n| n > 0));
        assert!(l.maps_left.is_some_and(|n| n > 0));
        assert!(mem_available().is_some_and(|n| n > 0));
    }

    #[test]
    fn space_on_one_file_system_adds_up() {
        let t = tempfile::tempdir().unwrap();
        let mut s = SpaceNeeds::default();
        s.add(t.path(), 1 << 20, 0, "data", "use less").unwrap();
        assert!(s.check().is_ok());
        s.add(t.path(), u64::MAX, 0, "spill", "use less").unwrap();
        let e = s.check().unwrap_err();
        assert!(e.contains("spill") || e.contains("counted"), "{e}");
    }
}
