//! The hosts of a run across hosts: each one's `dbio agent` started over ssh (with `--push`,
//! this binary copied there first), its stdout read a message a line, its stderr relayed,
//! and what the coordinator knows of it.

use crate::units::Shown;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::clock::{Offset, Sample};
use super::protocol::FromAgent;
use super::transport::Transport;
use crate::error::{Error, Result};
use crate::measure::EventTotals;
use crate::options::RunArgs;
use crate::report::RunResult;
use crate::sys::now_ns;

/// The remote script that receives `--push`'s binary: a private directory of its own.
const PUSH_SCRIPT: &str =
    "umask 077; d=$(mktemp -d) && cat > \"$d/dbio\" && chmod 700 \"$d/dbio\" && echo \"$d\"";

/// What `--push` asks each host first: its glibc ("glibc 2.36"), else the first line of
/// `ldd --version` (musl's names no glibc). It always succeeds where ssh does.
const GLIBC_SCRIPT: &str =
    "getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>&1 | head -n 1; true";

/// What a reader thread heard from a host.
pub(super) enum Heard {
    Line(usize, u64, FromAgent),
    Garbled(usize, String),
    End(usize),
}

/// One host as the coordinator sees it.
pub(super) struct Host {
    pub(super) name: String,
    pub(super) child: Option<Child>,
    pub(super) stdin: Option<ChildStdin>,
    /// The last lines it wrote on stderr (why ssh failed, what the agent said).
    pub(super) stderr: Arc<Mutex<Vec<String>>>,
    /// Its stderr is relayed on ours once it said hello; before, ssh's complaints are only
    /// kept, and the one line that refuses the host quotes the last.
    pub(super) relay: Arc<AtomicBool>,
    pub(super) pushed: Option<String>,
    pub(super) hello: Option<(u32, String, String)>,
    pub(super) heard: Instant,
    pub(super) pings: Vec<Sample>,
    pub(super) sent: std::collections::HashMap<u32, u64>,
    pub(super) offset: Offset,
    /// The instant it started the run, on its own clock.
    pub(super) started_ns: Option<u64>,
    pub(super) state: HostState,
}

/// What a host sent as its result: the result, its per-event totals, its exit status.
pub(super) type HostResult = (RunResult, Vec<EventTotals>, i32);

/// Where a host is in the run. It only moves forward: `Connecting` (its agent starting, or
/// it said hello) → `Checked` (it accepts the run) or `Refused` → `Ready` (its data set is
/// prepared) → `Running` (it started) → `Done` (its result arrived). Before `Done` it may
/// end instead: `Failed` (it said why) or `Ended` (its connection ended without a word).
/// Mid-run the coordinator may give up on a host that has no result: `Lost`, which keeps
/// what it said and what still arrives during the grace.
pub(super) enum HostState {
    Connecting,
    Checked,
    Refused(String),
    Ready,
    Running,
    /// Its result; `ended`: its connection has ended since.
    Done {
        result: Box<HostResult>,
        ended: bool,
    },
    /// It said it failed: why, and its exit status; `checked`: after it accepted the run.
    Failed {
        why: String,
        exit: i32,
        checked: bool,
    },
    /// Its connection ended without a word; `checked`: after it accepted the run.
    Ended {
        checked: bool,
    },
    /// Why it was lost, and what it sent before or after.
    Lost {
        why: String,
        failed: Option<(String, i32)>,
        result: Option<Box<HostResult>>,
    },
}

impl HostState {
    /// It checked the run (and accepts it).
    pub(super) fn on_checked(&mut self) {
        if matches!(self, HostState::Connecting) {
            *self = HostState::Checked;
        }
    }

    /// It refused the run at the check.
    pub(super) fn on_refused(&mut self, why: String) {
        if matches!(self, HostState::Connecting) {
            *self = HostState::Refused(why);
        }
    }

    /// Its data set is prepared.
    pub(super) fn on_ready(&mut self) {
        if matches!(self, HostState::Connecting | HostState::Checked) {
            *self = HostState::Ready;
        }
    }

    /// It started the run.
    pub(super) fn on_started(&mut self) {
        if matches!(self, HostState::Ready) {
            *self = HostState::Running;
        }
    }

    /// Its result arrived.
    pub(super) fn on_result(&mut self, r: HostResult) {
        match self {
            HostState::Lost { result, .. } => *result = Some(Box::new(r)),
            s if !s.is_final() => {
                *s = HostState::Done {
                    result: Box::new(r),
                    ended: false,
                }
            }
            _ => {}
        }
    }

    /// It failed: why, and its exit status.
    pub(super) fn on_failed(&mut self, why: String, exit: i32) {
        match self {
            HostState::Lost { failed, .. } => *failed = Some((why, exit)),
            s if !s.is_final() => {
                let checked = s.checked();
                *s = HostState::Failed { why, exit, checked }
            }
            _ => {}
        }
    }

    /// Its connection ended (its output closed).
    pub(super) fn on_end(&mut self) {
        match self {
            HostState::Done { ended, .. } => *ended = true,
            HostState::Refused(_)
            | HostState::Failed { .. }
            | HostState::Ended { .. }
            | HostState::Lost { .. } => {}
            s => {
                let checked = s.checked();
                *s = HostState::Ended { checked }
            }
        }
    }

    /// The coordinator gave up on it mid-run (it has no result).
    pub(super) fn on_lost(&mut self, why: String) {
        let failed = match self {
            HostState::Failed { why, exit, .. } => Some((why.clone(), *exit)),
            _ => None,
        };
        *self = HostState::Lost {
            why,
            failed,
            result: None,
        };
    }

    /// It refused the run, sent its result or went away: what it says later changes
    /// nothing (but for a host that was lost, see [`HostState::Lost`]).
    fn is_final(&self) -> bool {
        matches!(
            self,
            HostState::Refused(_)
                | HostState::Done { .. }
                | HostState::Failed { .. }
                | HostState::Ended { .. }
                | HostState::Lost { .. }
        )
    }

    /// It accepted the run (and may have gone on since).
    pub(super) fn checked(&self) -> bool {
        match self {
            HostState::Connecting | HostState::Refused(_) => false,
            HostState::Failed { checked, .. } | HostState::Ended { checked } => *checked,
            _ => true,
        }
    }
}

impl Host {
    /// It went away: failed, ended, lost, or its connection ended after its result.
    pub(super) fn gone(&self) -> bool {
        match &self.state {
            HostState::Done { ended, .. } => *ended,
            HostState::Failed { .. } | HostState::Ended { .. } | HostState::Lost { .. } => true,
            _ => false,
        }
    }

    pub(super) fn done(&self) -> bool {
        self.result().is_some() || self.gone()
    }

    /// Its result, if it sent one.
    pub(super) fn result(&self) -> Option<&HostResult> {
        match &self.state {
            HostState::Done { result, .. } => Some(result),
            HostState::Lost { result, .. } => result.as_deref(),
            _ => None,
        }
    }

    /// What it said when it failed, and its exit status.
    pub(super) fn failed(&self) -> Option<(&str, i32)> {
        match &self.state {
            HostState::Failed { why, exit, .. } => Some((why, *exit)),
            HostState::Lost {
                failed: Some((m, e)),
                ..
            } => Some((m, *e)),
            _ => None,
        }
    }

    /// Why it was lost mid-run.
    pub(super) fn lost(&self) -> Option<&str> {
        match &self.state {
            HostState::Lost { why, .. } => Some(why),
            _ => None,
        }
    }

    /// Why it ended, in its own words if it left any.
    pub(super) fn why(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        match tail.last() {
            Some(l) => l.clone(),
            None => "its connection ended".into(),
        }
    }
}
/// `--push` copies this binary, which runs only where the C library is glibc of the version
/// it was built for or later: every host is asked at once, and the first that cannot run
/// it is refused before any host gets anything. A host ssh cannot reach is left to the
/// connect phase, which says why.
pub(super) fn check_glibc(hosts: &[String], ssh: &Arc<dyn Transport>) -> Result<()> {
    let Some(floor) = crate::sys::glibc_floor() else {
        return Ok(());
    };
    let asked: Vec<_> = hosts
        .iter()
        .map(|h| {
            let (ssh, h) = (ssh.clone(), h.clone());
            std::thread::spawn(move || ssh.script(&h, GLIBC_SCRIPT, b""))
        })
        .collect();
    let answers: Vec<_> = asked.into_iter().map(|a| a.join()).collect();
    for (host, answer) in hosts.iter().zip(answers) {
        if let Ok(Ok(text)) = answer
            && let Some(why) = glibc_refusal(host, &text, floor)
        {
            return Err(Error::usage(why));
        }
    }
    Ok(())
}

/// Why `host`, which answered `answer` to [`GLIBC_SCRIPT`], cannot run a binary that needs
/// glibc `floor`; None when it can (or said nothing to judge by).
fn glibc_refusal(host: &str, answer: &str, floor: &str) -> Option<String> {
    let line = answer.lines().map(str::trim).find(|l| !l.is_empty())?;
    let need = crate::sys::glibc_version(floor)?;
    let lower = line.to_ascii_lowercase();
    let advice = "install a dbio built for it there and give its path with --remote-dbio";
    if !(lower.contains("glibc") || lower.contains("gnu libc")) {
        return Some(format!(
            "{host}: no glibc there ('{line}'), and --push copies this dbio, which needs glibc {floor} or later; {advice}"
        ));
    }
    let have = crate::sys::glibc_version(line)?;
    (have < need).then(|| {
        format!(
            "{host}: glibc {}.{} there, and --push copies this dbio, which needs glibc {floor} or later; {advice}",
            have.0, have.1
        )
    })
}

/// Starts every host's agent at once (pushing the binary first with `--push`).
pub(super) fn connect(a: &RunArgs, ssh: &Arc<dyn Transport>, tx: &Sender<Heard>) -> Vec<Host> {
    let started: Vec<_> = (a.hosts.iter().enumerate())
        .map(|(i, name)| {
            let (ssh, name, remote, push) =
                (ssh.clone(), name.clone(), a.remote_dbio.clone(), a.push);
            std::thread::spawn(move || start_agent(i, &name, &*ssh, &remote, push))
        })
        .collect();
    let mut hosts = Vec::new();
    for (i, (h, name)) in started.into_iter().zip(&a.hosts).enumerate() {
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let relay = Arc::new(AtomicBool::new(false));
        let mut host = Host {
            name: name.clone(),
            child: None,
            stdin: None,
            stderr: stderr.clone(),
            relay: relay.clone(),
            pushed: None,
            hello: None,
            heard: Instant::now(),
            pings: Vec::new(),
            sent: Default::default(),
            offset: Offset::default(),
            started_ns: None,
            state: HostState::Connecting,
        };
        match h.join() {
            Ok(Ok((mut child, pushed))) => {
                host.pushed = pushed;
                host.stdin = child.stdin.take();
                read_lines(i, child.stdout.take().expect("piped"), tx.clone());
                relay_stderr(name, child.stderr.take().expect("piped"), stderr, relay);
                host.child = Some(child);
            }
            Ok(Err(why)) => {
                stderr.lock().unwrap_or_else(|e| e.into_inner()).push(why);
                host.state.on_end();
            }
            Err(_) => host.state.on_end(),
        }
        hosts.push(host);
    }
    hosts
}

/// Starts host `name`'s agent: `--remote-dbio agent`, or with `--push` this binary copied
/// into a private directory there, which the agent removes as soon as it runs.
fn start_agent(
    _i: usize,
    name: &str,
    ssh: &dyn Transport,
    remote: &str,
    push: bool,
) -> std::result::Result<(Child, Option<String>), String> {
    if !push {
        let child = ssh
            .spawn(name, &[remote, "agent"])
            .map_err(|e| format!("cannot start the ssh command: {e}"))?;
        return Ok((child, None));
    }
    let me = std::env::current_exe().map_err(|e| format!("cannot find this dbio binary: {e}"))?;
    let bytes = std::fs::read(&me).map_err(|e| format!("cannot read {}: {e}", me.shown()))?;
    let dir = ssh
        .script(name, PUSH_SCRIPT, &bytes)
        .map_err(|e| format!("--push: cannot copy dbio there: {e}"))?;
    let dir = dir.trim().to_string();
    if dir.is_empty() || !dir.starts_with('/') || dir.contains('\n') {
        return Err(format!("--push: the remote mktemp gave '{dir}'"));
    }
    let bin = format!("{dir}/dbio");
    match ssh.spawn(name, &[&bin, "agent", "--pushed", &dir]) {
        Ok(child) => Ok((child, Some(dir))),
        Err(e) => {
            remove_pushed(ssh, name, &dir);
            Err(format!("cannot start the ssh command: {e}"))
        }
    }
}

/// Removes a pushed binary's directory the agent did not remove itself (it never started).
pub(super) fn remove_pushed(ssh: &dyn Transport, name: &str, dir: &str) {
    let q = super::transport::remote_command(&[dir]);
    let script = format!("rm -f {q}/dbio && rmdir {q}");
    if let Err(e) = ssh.script(name, &script, b"") {
        stderr_line!(
            "dbio: {}: could not remove the pushed binary's directory {}: {}",
            name.shown(),
            dir.shown(),
            e.shown()
        );
    }
}

/// A host's stdout, one message a line, with the instant each line arrived.
fn read_lines(i: usize, out: std::process::ChildStdout, tx: Sender<Heard>) {
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines() {
            let Ok(l) = l else { break };
            let heard = match serde_json::from_str::<FromAgent>(&l) {
                Ok(m) => Heard::Line(i, now_ns(), m),
                Err(_) => Heard::Garbled(i, l),
            };
            if tx.send(heard).is_err() {
                return;
            }
        }
        let _ = tx.send(Heard::End(i));
    });
}

/// A host's stderr on ours once `relay` is set, each line named by the host; the last
/// lines kept.
fn relay_stderr(
    name: &str,
    err: std::process::ChildStderr,
    tail: Arc<Mutex<Vec<String>>>,
    relay: Arc<AtomicBool>,
) {
    let name = name.to_string();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines() {
            let Ok(l) = l else { break };
            let l = l.trim_end().to_string();
            if l.is_empty() {
                continue;
            }
            if relay.load(Ordering::Relaxed) {
                stderr_line!("{}: {}", name.shown(), l.shown());
            }
            let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
            if t.len() >= 8 {
                t.remove(0);
            }
            t.push(l);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_refuses_a_host_whose_glibc_is_older_than_this_binary_needs() {
        // getconf's answer, compared as numbers: 2.9 is older than 2.17.
        for old in ["glibc 2.12", "glibc 2.9", "glibc 1.99"] {
            let why = glibc_refusal("db1", old, "2.17").expect(old);
            assert!(why.starts_with("db1: glibc "), "{why}");
            assert!(why.contains(old.trim_start_matches("glibc ")), "{why}");
            assert!(why.contains("needs glibc 2.17 or later"), "{why}");
            assert!(!why.contains('\n'));
        }
        for new in ["glibc 2.17", "glibc 2.28", "glibc 2.36\n", "glibc 3.0"] {
            assert_eq!(glibc_refusal("db1", new, "2.17"), None, "{new}");
        }
        // ldd's first line where getconf does not know.
        assert_eq!(glibc_refusal("db1", "ldd (GNU libc) 2.17", "2.17"), None);
        assert!(glibc_refusal("db1", "ldd (Ubuntu GLIBC 2.35-0ubuntu3) 2.35", "2.36").is_some());
        // musl has no glibc at all.
        let why = glibc_refusal("db2", "musl libc (x86_64)", "2.17").unwrap();
        assert!(
            why.starts_with("db2: no glibc there ('musl libc (x86_64)')"),
            "{why}"
        );
        // Nothing to judge by: the agent's start says what is wrong.
        assert_eq!(glibc_refusal("db1", "\n", "2.17"), None);
    }

    fn result() -> HostResult {
        let r = crate::report::fixture::run_result(2, &["db file sequential read"], false);
        (r, Vec::new(), 0)
    }

    #[test]
    fn a_host_s_state_moves_forward_only() {
        let mut s = HostState::Connecting;
        s.on_ready();
        assert!(matches!(s, HostState::Ready));
        s.on_checked();
        assert!(
            matches!(s, HostState::Ready),
            "a late check does not move it back"
        );
        s.on_started();
        assert!(matches!(s, HostState::Running));
        s.on_result(result());
        s.on_failed("late".into(), 4);
        assert!(matches!(s, HostState::Done { ended: false, .. }));
        s.on_end();
        assert!(matches!(s, HostState::Done { ended: true, .. }));
        // A refusal stays the answer to the check, whatever follows.
        let mut s = HostState::Connecting;
        s.on_refused("no space".into());
        s.on_failed("then it failed".into(), 2);
        s.on_end();
        assert!(matches!(&s, HostState::Refused(why) if why == "no space"));
        assert!(!s.checked());
    }

    #[test]
    fn a_host_that_ends_remembers_whether_it_had_accepted_the_run() {
        let mut before = HostState::Connecting;
        before.on_end();
        assert!(matches!(before, HostState::Ended { checked: false }));
        let mut after = HostState::Connecting;
        after.on_checked();
        after.on_failed("cannot create".into(), 4);
        after.on_end();
        assert!(matches!(
            after,
            HostState::Failed {
                checked: true,
                exit: 4,
                ..
            }
        ));
        assert!(after.checked());
    }

    #[test]
    fn a_lost_host_keeps_why_it_failed_and_a_result_that_still_arrives() {
        let mut s = HostState::Running;
        s.on_failed("EIO".into(), 4);
        s.on_lost("no word from it for 3 s".into());
        s.on_end();
        s.on_result(result());
        let HostState::Lost {
            why,
            failed,
            result,
        } = &s
        else {
            panic!("not lost");
        };
        assert_eq!(why, "no word from it for 3 s");
        assert_eq!(failed.as_ref().map(|f| f.1), Some(4));
        assert!(result.is_some());
    }
}
