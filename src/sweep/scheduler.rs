//! `dbio sweep --param scheduler=...`: the block I/O scheduler of the disks under the data
//! set, set for each point and always put back.
//!
//! The disks are the whole devices the storage map finds under the target (a partition
//! counts as its disk, whose queue it shares) whose `queue/scheduler` offers a choice. Before
//! anything runs: root, every value offered by every disk, and unless `--yes` neither the
//! root file system under the data set nor another mounted file system on those disks. A [`Schedulers`] value holds the originals and writes them
//! back when dropped: at the end, on an error, and after a stop (the sweep returns through
//! the same path when Ctrl-C or SIGTERM set the stop flag). Before each change a disk's
//! original is noted as a leftover ([`crate::safety::cleanup::Leftover`]) with the value
//! about to be set, so that after a kill `dbio doctor` names it and `dbio clean --stale`
//! puts it back — only while the disk still has the value dbio set.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::safety::cleanup::{Leftover, Recorded, SCHEDULER};
use crate::storage::probe::map_path;
use crate::storage::sysfs::{SysRoot, parse_mountinfo};
use crate::units::Shown;

/// One disk whose scheduler the sweep sets.
#[derive(Debug)]
struct Queue {
    disk: String,
    file: PathBuf,
    original: String,
    /// Its leftover record, from before its first change until the original is back.
    record: std::sync::OnceLock<Recorded>,
}

/// A changed scheduler as recorded: the disk's file, its original, the value dbio set.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Changed {
    file: PathBuf,
    original: String,
    set: String,
}

impl Queue {
    fn leftover(&self, set: &str) -> Leftover {
        Leftover {
            kind: SCHEDULER,
            what: self.disk.clone(),
            undo: format!("echo {} > {}", self.original, self.file.display()),
            detail: serde_json::to_string(&Changed {
                file: self.file.clone(),
                original: self.original.clone(),
                set: set.to_string(),
            })
            .unwrap_or_default(),
        }
    }
}

/// Puts back the scheduler a killed sweep changed (`detail` as recorded), only if the
/// disk still has the value dbio set. Ok: what was done; Err: why it was left alone.
pub fn undo_leftover(detail: &str) -> std::result::Result<String, String> {
    let c: Changed =
        serde_json::from_str(detail).map_err(|e| format!("its record is unreadable ({e})"))?;
    // Only a disk's scheduler file, and only names the kernel spells.
    let disk = c
        .file
        .strip_prefix("/sys/block")
        .ok()
        .and_then(|rest| rest.to_str())
        .and_then(|rest| rest.strip_suffix("/queue/scheduler"))
        .filter(|d| !d.is_empty() && !d.contains('/') && !d.starts_with('.'))
        .ok_or_else(|| format!("{} is not a disk's scheduler file", c.file.shown()))?;
    valid_name(&c.original)?;
    valid_name(&c.set)?;
    let text = std::fs::read_to_string(&c.file)
        .map_err(|e| format!("cannot read {}: {e} (the disk is gone?)", c.file.shown()))?;
    let now = offered(&text).1;
    if now == c.original {
        return Ok(format!(
            "the I/O scheduler of {disk} is {} already",
            c.original
        ));
    }
    if now != c.set {
        return Err(format!(
            "its scheduler is {now}, not the {} dbio set: someone changed it since; left alone",
            c.set
        ));
    }
    // The disk's own scheduler attribute in sysfs, its path checked above.
    std::fs::write(&c.file, &c.original)
        .map_err(|e| format!("cannot write {}: {e}", c.file.shown()))?;
    Ok(format!(
        "the I/O scheduler of {disk} is {} again (it was left at {})",
        c.original, c.set
    ))
}

/// The disks under the data set and their schedulers before the sweep.
#[derive(Debug)]
pub struct Schedulers {
    queues: Vec<Queue>,
}

/// The schedulers a `queue/scheduler` file offers, and the active one:
/// "none [mq-deadline] kyber" → (["none", "mq-deadline", "kyber"], "mq-deadline").
fn offered(text: &str) -> (Vec<String>, String) {
    let all: Vec<String> = text
        .split_whitespace()
        .map(|w| w.trim_matches(['[', ']']).to_string())
        .collect();
    let active = crate::storage::probe::active_scheduler(text);
    (all, active)
}

/// The nearest existing directory at or above `p` (the data set may not exist yet).
fn existing(p: &Path) -> PathBuf {
    let mut p = p.to_path_buf();
    while !p.exists() {
        if !p.pop() {
            return PathBuf::from(".");
        }
    }
    p
}

/// A scheduler name as the kernel spells them (checked before it is written to sysfs): the
/// rule `--param scheduler=...` is read by.
pub use crate::options::swept::scheduler_name as valid_name;

impl Schedulers {
    /// Finds the disks under `target` and checks everything before the first point:
    /// root, each of `values` offered by every disk, no other mounted file system there
    /// unless `yes`.
    pub fn prepare(target: &Path, values: &[String], yes: bool) -> Result<Schedulers> {
        let sys = SysRoot::host();
        let at = existing(target);
        let map = map_path(&sys, &at).map_err(|e| {
            Error::usage(format!(
                "--param scheduler: cannot map the storage under {}: {e}",
                at.shown()
            ))
        })?;
        // Each disk whose scheduler can be chosen, with what it offers (read once).
        let mut queues = Vec::new();
        let mut offers = Vec::new();
        for n in map.all_devices() {
            if n.layer == "partition" {
                continue;
            }
            let file = sys.path(&format!("sys/block/{}/queue/scheduler", n.name));
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let (all, active) = offered(&text);
            if all.len() > 1 {
                queues.push(Queue {
                    disk: n.name.clone(),
                    file,
                    original: active,
                    record: std::sync::OnceLock::new(),
                });
                offers.push(all);
            }
        }
        if queues.is_empty() {
            return Err(Error::usage(format!(
                "--param scheduler: {} is on no block device whose I/O scheduler can be chosen (a memory file system, or a device with one scheduler); put the data set (--target) on a disk",
                at.shown()
            )));
        }
        if crate::safety::fs::effective_uid() != 0 {
            return Err(Error::usage(format!(
                "--param scheduler writes /sys/block/{}/queue/scheduler, which only root may: run dbio as root",
                queues[0].disk
            )));
        }
        for (q, all) in queues.iter().zip(&offers) {
            if let Some(v) = values.iter().find(|v| !all.contains(v)) {
                return Err(Error::usage(format!(
                    "--param scheduler={v}: {} does not offer it; available: {}",
                    q.disk,
                    all.join(", ")
                )));
            }
        }
        if !yes {
            if let Some(m) = map.mount.as_ref().filter(|m| m.mount_point == "/") {
                return Err(Error::usage(format!(
                    "--param scheduler: {} is on the root file system ({}), whose disk {} every point's scheduler would change for the whole system; put the data set (--target) on a file system of its own, or add --yes to go ahead",
                    at.shown(),
                    m.source.shown(),
                    queues[0].disk
                )));
            }
            let own = map.mount.as_ref().map(|m| m.dev.clone());
            let mounts = parse_mountinfo(&sys.read("proc/self/mountinfo").unwrap_or_default());
            for q in &queues {
                let devs = devices_on(&sys, &q.disk);
                if let Some(m) = mounts
                    .iter()
                    .find(|m| devs.contains(&m.dev) && Some(&m.dev) != own.as_ref())
                {
                    return Err(Error::usage(format!(
                        "--param scheduler: {} also holds the file system mounted on {}, which every point's scheduler would change too; add --yes to go ahead",
                        q.disk,
                        m.mount_point.shown()
                    )));
                }
            }
        }
        Ok(Schedulers { queues })
    }

    /// Sets `name` on every disk, each noted as a leftover first.
    pub fn set(&self, name: &str) -> Result<()> {
        for q in &self.queues {
            let l = q.leftover(name);
            match q.record.get() {
                Some(r) => r.update(&l),
                None => {
                    let _ = q.record.set(Recorded::note(&l));
                }
            }
            std::fs::write(&q.file, name).map_err(|e| {
                Error::other(format!(
                    "cannot set the scheduler of {} to {name}: {e}",
                    q.disk
                ))
            })?;
        }
        Ok(())
    }

    /// What is active now, disk by disk: "loop3=bfq".
    pub fn current(&self) -> String {
        self.queues
            .iter()
            .map(|q| {
                let now = std::fs::read_to_string(&q.file).map_or("?".into(), |t| offered(&t).1);
                format!("{}={now}", q.disk)
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// "major:minor" of the disk, its partitions and whatever is built on them (holders).
fn devices_on(sys: &SysRoot, disk: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![format!("sys/class/block/{disk}")];
    for part in sys.list(&format!("sys/block/{disk}")) {
        if sys.exists(&format!("sys/block/{disk}/{part}/partition")) {
            todo.push(format!("sys/class/block/{part}"));
        }
    }
    let mut seen = 0;
    while let Some(dir) = todo.pop() {
        seen += 1;
        if seen > 256 {
            break;
        }
        if let Some(dev) = sys.read(&format!("{dir}/dev")) {
            out.push(dev);
        }
        for h in sys.list(&format!("{dir}/holders")) {
            todo.push(format!("sys/class/block/{h}"));
        }
    }
    out
}

impl Drop for Schedulers {
    /// Puts every disk's original scheduler back, whatever ended the sweep.
    fn drop(&mut self) {
        for q in &mut self.queues {
            match std::fs::write(&q.file, &q.original) {
                Ok(()) => {
                    if let Some(r) = q.record.take() {
                        r.undone();
                    }
                    stderr_line!(
                        "dbio: the I/O scheduler of {} is {} again",
                        q.disk,
                        q.original
                    )
                }
                Err(e) => stderr_line!(
                    "dbio: warning: could not put back the I/O scheduler of {} ({}): {e}; set it by hand: echo {} > {}",
                    q.disk,
                    q.original,
                    q.original,
                    q.file.display()
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_schedulers_and_the_active_one() {
        let (all, active) = offered("none [mq-deadline] kyber bfq\n");
        assert_eq!(all, ["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(active, "mq-deadline");
        assert!(valid_name("mq-deadline").is_ok());
        assert!(valid_name("none > x").is_err());
        assert!(valid_name("").is_err());
    }
}
