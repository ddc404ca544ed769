//! The coordinator of a run across hosts: connect every host (its `dbio agent` over ssh),
//! have each check the run, prepare the data sets, measure clock offsets, start all hosts
//! at one instant, merge their per-second lines as they come, and on a fault stop them all.
//!
//! Phases, each for all hosts at once:
//! 1. **connect**: the agent's hello (protocol and dbio version must match);
//! 2. **check**: both validation stages and the data set's space on every host — any
//!    refusal ends the run before any host has created anything (exit 2, one line naming
//!    the host);
//! 3. **prepare**: the data sets, in parallel (`--shared`: the first host, then the rest);
//! 4. **clock**: ping-pongs, the smallest round trip kept ([`super::clock`]);
//! 5. **start** at one instant, given to each host on its own clock;
//! 6. **stream**: per-second lines merged; a host that ends or says nothing for 3 s is
//!    lost: the others are stopped and their results kept (partial, exit 4); Ctrl-C stops
//!    all (exit 130);
//! 7. **end**: stdin closed (no agent outlives its coordinator), the merged result written.

use crate::units::Shown;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::clock::{self, Offset, Sample};
use super::merge::{self, Ending, HostOutcome, Seconds};
use super::protocol::{Assignment, FromAgent, PROTOCOL_VERSION, ToAgent, line};
use super::transport::{Ssh, Transport};
use crate::error::{Error, ExitCode, Result};
use crate::measure::EventTotals;
use crate::options::{RunArgs, Source};
use crate::progress::{self, Progress};
use crate::report::RunResult;
use crate::run::RunOutcome;
use crate::sys::now_ns;
use crate::workload::spec::RunConfig;

/// A host that says nothing for this long is lost (agents say something every second).
const SILENCE: Duration = Duration::from_secs(3);
/// How long the hosts have to say hello and to check the run.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// After a stop, how long the other hosts have to send what they measured.
const FINAL_GRACE_LOST: Duration = Duration::from_millis(1800);
const FINAL_GRACE_INTERRUPTED: Duration = Duration::from_millis(1200);
/// How long after the start instant is given it lies: every host hears of it in time.
const START_MARGIN: Duration = Duration::from_millis(300);

/// The remote script that receives `--push`'s binary: a private directory of its own.
const PUSH_SCRIPT: &str =
    "umask 077; d=$(mktemp -d) && cat > \"$d/dbio\" && chmod 700 \"$d/dbio\" && echo \"$d\"";

/// What `--push` asks each host first: its glibc ("glibc 2.36"), else the first line of
/// `ldd --version` (musl's names no glibc). It always succeeds where ssh does.
const GLIBC_SCRIPT: &str =
    "getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>&1 | head -n 1; true";

/// A run across hosts as the user gave it, validated before any host is reached.
pub struct Plan {
    pub args: RunArgs,
    /// Each host's run, checked here as `dbio run` would (stage 1).
    pub first: RunConfig,
    /// The run as a job file: what every host gets.
    pub job: String,
}

/// The arguments with the job file's values applied under what was typed.
fn merged(a: &RunArgs) -> Result<RunArgs> {
    let mut m = a.clone();
    if let Some(p) = &a.job {
        crate::options::job::load(p)?.apply(&mut m)?;
    }
    Ok(m)
}

/// Whether `a` (with its job file) is a run across hosts.
pub fn wanted(a: &RunArgs) -> Result<bool> {
    Ok(!merged(a)?.hosts.is_empty())
}

/// Everything that can be checked here before any host is reached: the options, each
/// host's target, `--out`, the ssh command.
pub fn plan(a: &RunArgs) -> Result<Plan> {
    let m = merged(a)?;
    Ssh::new(&m.ssh).map_err(Error::usage)?;
    let pattern = m
        .target
        .to_string_lossy()
        .contains(crate::options::check::HOST_PLACEHOLDER);
    if m.shared && pattern {
        return Err(Error::usage(format!(
            "--shared means one data set every host sees: --target {} names one per host; leave {{host}} out",
            m.target.shown()
        )));
    }
    let mut first = None;
    for h in &m.hosts {
        let mut one = a.clone();
        let t = super::host_target(&m.target, h)?;
        one.set("target", &t.display().to_string(), Source::Typed)
            .map_err(Error::usage)?;
        let cfg = crate::options::check::run_config(&one)?;
        first.get_or_insert(cfg);
    }
    let first = first.ok_or_else(|| Error::usage("--hosts: no host given"))?;
    if m.shared && first.writes() {
        shared_writes(&first, m.hosts.len())?;
    }
    crate::report::check_out(&first.out)?;
    let job = crate::options::save::run_job_file(&first, a)?;
    Ok(Plan {
        args: m,
        first,
        job,
    })
}

/// `--shared` with a run that writes: each host writes its own region of the data set, the
/// data files `i` with `i % hosts == index` — what cannot be split so is refused.
fn shared_writes(first: &RunConfig, hosts: usize) -> Result<()> {
    let one_set = if first.uses_redo() {
        Some("redo logs")
    } else if first.uses_temp() {
        Some("temp files")
    } else {
        None
    };
    let why = if let Some(what) = one_set {
        format!("it writes {what}, which are one set, not split among hosts")
    } else if first.dataset.verify {
        "--verify keeps one sequence table for the whole data set, which hosts writing at once cannot share".to_string()
    } else if (first.dataset.files as usize) < hosts {
        format!(
            "each host writes its own data files (file i by host i mod {hosts}), and --files {} is fewer than the {hosts} hosts; use --files {hosts} or more",
            first.dataset.files
        )
    } else {
        return Ok(());
    };
    Err(Error::usage(format!(
        "--shared with {}: {why}; give each host its own data set with {{host}} in --target (e.g. /u02/dbio-{{host}})",
        first.test.name()
    )))
}

/// What a reader thread heard from a host.
enum Heard {
    Line(usize, u64, FromAgent),
    Garbled(usize, String),
    End(usize),
}

/// One host as the coordinator sees it.
struct Host {
    name: String,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    /// The last lines it wrote on stderr (why ssh failed, what the agent said).
    stderr: Arc<Mutex<Vec<String>>>,
    /// Its stderr is relayed on ours once it said hello; before, ssh's complaints are only
    /// kept, and the one line that refuses the host quotes the last.
    relay: Arc<AtomicBool>,
    pushed: Option<String>,
    hello: Option<(u32, String, String)>,
    checked: Option<std::result::Result<(), String>>,
    ready: bool,
    heard: Instant,
    pings: Vec<Sample>,
    sent: std::collections::HashMap<u32, u64>,
    offset: Offset,
    started_ns: Option<u64>,
    result: Option<(RunResult, Vec<EventTotals>, i32)>,
    failed: Option<(String, i32)>,
    ended: bool,
    /// Why it was lost mid-run.
    lost: Option<String>,
}

impl Host {
    fn gone(&self) -> bool {
        self.ended || self.failed.is_some() || self.lost.is_some()
    }

    fn done(&self) -> bool {
        self.result.is_some() || self.gone()
    }

    /// Why it ended, in its own words if it left any.
    fn why(&self) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        match tail.last() {
            Some(l) => l.clone(),
            None => "its connection ended".into(),
        }
    }
}

struct Cluster<'a> {
    hosts: Vec<Host>,
    rx: Receiver<Heard>,
    stop: &'a AtomicBool,
    seconds: Seconds,
    /// Per-second lines received, and the latest any arrived after its second closed.
    lines: u64,
    latest_ms: f64,
    start_ns: u64,
    interrupted: bool,
    lost: Option<(String, String)>,
}

/// Runs a run across hosts to its end; the run directory is the coordinator's.
pub fn run(p: &Plan, stop: &Arc<AtomicBool>) -> Result<RunOutcome> {
    crate::clock::calibrate();
    let started_at = crate::sys::utc_now_rfc3339();
    let ssh = Ssh::new(&p.args.ssh).map_err(Error::usage)?;
    let cfg = &p.first;
    let tail = format!(
        "{}_{}_{}hosts_{}sessions_{}_{}",
        cfg.test.name(),
        cfg.submission_label(),
        p.args.hosts.len(),
        cfg.sessions,
        crate::units::size_label(cfg.dataset.size),
        crate::units::duration_label(cfg.duration)
    );
    // Made, proved writable, registered and locked before any host is started; removed
    // again when the run ends without a result.
    let place = crate::report::RunPlace::make(&cfg.out, None, &started_at, &tail, cfg.test.name())?;
    let outcome = run_hosts(p, stop, ssh, &place.dir, &started_at);
    if outcome.is_err() {
        place.remove();
    }
    outcome
}

/// The run across hosts, its merged result written into `dir`.
fn run_hosts(
    p: &Plan,
    stop: &Arc<AtomicBool>,
    ssh: Ssh,
    dir: &crate::safety::fs::Dir,
    started_at: &str,
) -> Result<RunOutcome> {
    // What a job file starts (allowed by --yes) is shown before it runs.
    let from_job = crate::options::OPTIONS.iter().any(|o| {
        o.group == crate::options::Group::Cluster && matches!(p.args.source(o.name), Source::Job(_))
    });
    let ssh: Arc<dyn Transport> = Arc::new(if from_job { ssh.announced() } else { ssh });
    if p.args.push {
        check_glibc(&p.args.hosts, &ssh)?;
    }
    let (tx, rx) = mpsc::channel();
    let hosts = connect(&p.args, &ssh, &tx);
    drop(tx);
    let mut c = Cluster {
        hosts,
        rx,
        stop,
        seconds: Seconds::default(),
        lines: 0,
        latest_ms: 0.0,
        start_ns: 0,
        interrupted: false,
        lost: None,
    };
    let outcome = c.phases(p);
    c.close(&ssh);
    let ending = outcome?;
    let n = c.hosts.len();
    eprintln!(
        "dbio: {n} host(s): {} per-second line(s) merged, the latest {:.0} ms after its second closed",
        c.lines, c.latest_ms
    );
    finish(p, c, ending, started_at, dir)
}

/// `--push` copies this binary, which runs only where the C library is glibc of the version
/// it was built for or later: every host is asked at once, and the first that cannot run
/// it is refused before any host gets anything. A host ssh cannot reach is left to the
/// connect phase, which says why.
fn check_glibc(hosts: &[String], ssh: &Arc<dyn Transport>) -> Result<()> {
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
fn connect(a: &RunArgs, ssh: &Arc<dyn Transport>, tx: &Sender<Heard>) -> Vec<Host> {
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
            checked: None,
            ready: false,
            heard: Instant::now(),
            pings: Vec::new(),
            sent: Default::default(),
            offset: Offset::default(),
            started_ns: None,
            result: None,
            failed: None,
            ended: false,
            lost: None,
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
                host.ended = true;
            }
            Err(_) => host.ended = true,
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
fn remove_pushed(ssh: &dyn Transport, name: &str, dir: &str) {
    let q = super::transport::remote_command(&[dir]);
    let script = format!("rm -f {q}/dbio && rmdir {q}");
    if let Err(e) = ssh.script(name, &script, b"") {
        eprintln!(
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
                eprintln!("{}: {}", name.shown(), l.shown());
            }
            let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
            if t.len() >= 8 {
                t.remove(0);
            }
            t.push(l);
        }
    });
}

impl Cluster<'_> {
    fn send(&mut self, i: usize, msg: &ToAgent) {
        let h = &mut self.hosts[i];
        if let Some(w) = h.stdin.as_mut() {
            let text = line(msg) + "\n";
            if w.write_all(text.as_bytes())
                .and_then(|()| w.flush())
                .is_err()
            {
                h.stdin = None;
            }
        }
    }

    fn send_all(&mut self, msg: &ToAgent) {
        for i in 0..self.hosts.len() {
            self.send(i, msg);
        }
    }

    /// Handles what arrives within `wait`. False when nothing did.
    fn pump(&mut self, wait: Duration) -> bool {
        let heard = match self.rx.recv_timeout(wait) {
            Ok(h) => h,
            Err(RecvTimeoutError::Timeout) => return false,
            Err(RecvTimeoutError::Disconnected) => {
                for h in &mut self.hosts {
                    h.ended = true;
                }
                std::thread::sleep(wait);
                return false;
            }
        };
        match heard {
            Heard::End(i) => self.hosts[i].ended = true,
            Heard::Garbled(i, l) => {
                let h = &self.hosts[i];
                eprintln!("{}: {}", h.name.shown(), l.trim_end().shown());
                h.stderr.lock().unwrap_or_else(|e| e.into_inner()).push(l);
            }
            Heard::Line(i, at, m) => {
                self.hosts[i].heard = Instant::now();
                self.on_message(i, at, m);
            }
        }
        true
    }

    fn on_message(&mut self, i: usize, at: u64, m: FromAgent) {
        let h = &mut self.hosts[i];
        match m {
            FromAgent::Hello {
                protocol,
                dbio_version,
                hostname,
                ..
            } => {
                h.relay.store(true, Ordering::Relaxed);
                h.hello = Some((protocol, dbio_version, hostname));
            }
            FromAgent::Alive => {}
            FromAgent::Checked => h.checked = Some(Ok(())),
            FromAgent::Refused { message } => h.checked = Some(Err(message)),
            FromAgent::Ready => h.ready = true,
            FromAgent::Pong { seq, now_ns } => {
                if let Some(sent) = h.sent.remove(&seq) {
                    h.pings.push(Sample {
                        sent_ns: sent,
                        agent_ns: now_ns,
                        heard_ns: at,
                    });
                }
            }
            FromAgent::Started { at_ns } => h.started_ns = Some(at_ns),
            FromAgent::Second { t, events } => {
                let intervals: std::result::Result<Vec<_>, _> =
                    events.iter().map(|e| e.interval()).collect();
                match intervals {
                    Ok(v) => {
                        self.seconds.add(t, v);
                        self.lines += 1;
                    }
                    Err(e) => eprintln!("{}: a second's line cannot be read: {e}", h.name),
                }
            }
            FromAgent::Final {
                result,
                totals,
                exit,
            } => {
                let t: std::result::Result<Vec<_>, _> = totals.iter().map(|t| t.totals()).collect();
                match t {
                    Ok(t) => h.result = Some((*result, t, exit)),
                    Err(e) => {
                        h.failed = Some((format!("its result cannot be read: {e}"), 1));
                    }
                }
            }
            FromAgent::Failed { message, exit } => h.failed = Some((message, exit)),
        }
    }

    /// Handles messages until `done` holds for every host still there, the stop flag is
    /// set, or `deadline` passes. True when every host is done.
    fn until(&mut self, deadline: Option<Instant>, done: impl Fn(&Host) -> bool) -> bool {
        loop {
            if self.hosts.iter().all(|h| h.gone() || done(h)) {
                return true;
            }
            if self.stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            self.pump(Duration::from_millis(50));
        }
    }

    /// The first host that ended before it said hello, or said it in another version.
    fn check_hello(&self) -> Result<()> {
        for h in &self.hosts {
            match &h.hello {
                None if h.gone() || h.ended => {
                    return Err(Error::usage(format!(
                        "{}: cannot start dbio agent there: {}",
                        h.name,
                        h.why()
                    )));
                }
                None => {
                    return Err(Error::usage(format!(
                        "{}: no answer from dbio agent within {} s",
                        h.name,
                        CONNECT_TIMEOUT.as_secs()
                    )));
                }
                Some((protocol, version, _))
                    if *protocol != PROTOCOL_VERSION || version != env!("CARGO_PKG_VERSION") =>
                {
                    return Err(Error::usage(format!(
                        "{}: dbio {version} there (protocol {protocol}), {} here (protocol {PROTOCOL_VERSION}): the versions must match; install this version there, give its path with --remote-dbio, or use --push",
                        h.name,
                        env!("CARGO_PKG_VERSION")
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Every phase up to the end of the run; the error of the first host that could not.
    fn phases(&mut self, p: &Plan) -> Result<Ending> {
        let interrupted =
            || Error::Interrupted("interrupted before the run started; nothing measured".into());
        // 1. connect
        let deadline = Some(Instant::now() + CONNECT_TIMEOUT);
        if !self.until(deadline, |h| h.hello.is_some()) && self.stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        self.check_hello()?;
        // 2. check, every host before any prepares
        let n = self.hosts.len();
        for i in 0..n {
            let a = Assignment {
                job: p.job.clone(),
                host: self.hosts[i].name.clone(),
                index: i,
                hosts: n,
                shared: p.args.shared,
            };
            self.send(i, &ToAgent::Check(Box::new(a)));
        }
        let deadline = Some(Instant::now() + CONNECT_TIMEOUT);
        if !self.until(deadline, |h| h.checked.is_some()) && self.stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        for h in &self.hosts {
            match &h.checked {
                Some(Ok(())) => {}
                Some(Err(why)) => return Err(Error::usage(format!("{}: {why}", h.name))),
                None if h.gone() => {
                    return Err(Error::usage(format!(
                        "{}: it ended before checking the run: {}",
                        h.name,
                        h.why()
                    )));
                }
                None => {
                    return Err(Error::usage(format!(
                        "{}: no answer to the check within {} s",
                        h.name,
                        CONNECT_TIMEOUT.as_secs()
                    )));
                }
            }
        }
        // 3. prepare (a shared data set: the first host prepares it, then the others open it)
        let order: Vec<Vec<usize>> = if p.args.shared {
            vec![vec![0], (1..n).collect()]
        } else {
            vec![(0..n).collect()]
        };
        for group in order {
            for &i in &group {
                self.send(i, &ToAgent::Run);
            }
            self.until_quiet_or(|h| h.ready, &group)?;
        }
        // 4. clock
        for seq in 0..clock::SAMPLES {
            for i in 0..n {
                self.hosts[i].sent.insert(seq, now_ns());
                self.send(i, &ToAgent::Ping { seq });
            }
            let deadline = Some(Instant::now() + Duration::from_secs(2));
            self.until(deadline, |h| !h.sent.contains_key(&seq));
            if self.stop.load(Ordering::Relaxed) {
                return Err(interrupted());
            }
        }
        let mut margin = START_MARGIN;
        for h in &mut self.hosts {
            h.offset = clock::offset(&h.pings).ok_or_else(|| {
                Error::Io(format!(
                    "{}: it did not answer the clock's pings: {}",
                    h.name,
                    h.why()
                ))
            })?;
            margin = margin.max(Duration::from_nanos(h.offset.uncertainty_ns * 4));
        }
        // 5. start, one instant for all
        self.start_ns = now_ns() + margin.as_nanos() as u64;
        for i in 0..n {
            let at_ns = self.hosts[i].offset.to_agent(self.start_ns);
            self.send(i, &ToAgent::Start { at_ns });
        }
        // 6. stream until every host has sent its result, or a fault
        Ok(self.stream(p))
    }

    /// Waits until every host of `group` satisfies `ready`; a host that fails or goes
    /// silent stops all, and its error is the run's.
    fn until_quiet_or(&mut self, ready: impl Fn(&Host) -> bool, group: &[usize]) -> Result<()> {
        loop {
            if let Some(h) = group.iter().map(|&i| &self.hosts[i]).find(|h| h.gone()) {
                let (why, exit) = match &h.failed {
                    Some((m, e)) => (m.clone(), *e),
                    None => (format!("it ended: {}", h.why()), ExitCode::IoError as i32),
                };
                let msg = format!("{}: {why}", h.name);
                return Err(match exit {
                    2 => Error::Usage(msg),
                    4 => Error::Io(msg),
                    130 => Error::Interrupted(msg),
                    _ => Error::Other(msg),
                });
            }
            if let Some(h) = self
                .hosts
                .iter()
                .find(|h| h.heard.elapsed() > SILENCE && !h.gone())
            {
                return Err(Error::Io(format!(
                    "{}: no word from it for {} s while preparing",
                    h.name,
                    SILENCE.as_secs()
                )));
            }
            if group.iter().all(|&i| ready(&self.hosts[i])) {
                return Ok(());
            }
            if self.stop.load(Ordering::Relaxed) {
                return Err(Error::Interrupted(
                    "interrupted before the run started; nothing measured".into(),
                ));
            }
            self.pump(Duration::from_millis(50));
        }
    }

    /// The measured run: seconds merged as they come, progress drawn, faults handled.
    fn stream(&mut self, p: &Plan) -> Ending {
        let display = Progress::line(progress::wanted(p.first.quiet));
        let total_s = (p.first.warmup + p.first.duration).as_secs_f64();
        let mut stopping: Option<Instant> = None;
        let mut drawn = 0u32;
        loop {
            if self.hosts.iter().all(Host::done) {
                break;
            }
            if let Some(at) = stopping
                && at.elapsed() > self.grace()
            {
                break;
            }
            if stopping.is_none() {
                if self.stop.load(Ordering::Relaxed) {
                    self.interrupted = true;
                } else if let Some(h) = self
                    .hosts
                    .iter()
                    .find(|h| h.result.is_none() && (h.gone() || h.heard.elapsed() > SILENCE))
                {
                    let why = match &h.failed {
                        Some((m, _)) => m.clone(),
                        None if h.gone() => format!("its connection ended ({})", h.why()),
                        None => format!("no word from it for {} s", SILENCE.as_secs()),
                    };
                    self.lost = Some((h.name.clone(), why));
                }
                if self.interrupted || self.lost.is_some() {
                    if let Some((name, why)) = &self.lost {
                        eprintln!(
                            "dbio: {} lost: {}; stopping every host",
                            name.shown(),
                            why.shown()
                        );
                        let lost = name.clone();
                        if let Some(h) = self.hosts.iter_mut().find(|h| h.name == lost) {
                            h.lost = Some(why.clone());
                        }
                    }
                    self.send_all(&ToAgent::Stop);
                    stopping = Some(Instant::now());
                }
            }
            self.pump(Duration::from_millis(50));
            let complete = (self.seconds.reported.iter())
                .filter(|&(_, &k)| k >= self.hosts.iter().filter(|h| !h.gone()).count())
                .map(|(&t, _)| t)
                .max()
                .unwrap_or(0);
            if complete > drawn {
                drawn = complete;
                let closed = self.start_ns as f64
                    + (p.first.warmup.as_secs_f64() + f64::from(complete)) * 1e9;
                self.latest_ms = self.latest_ms.max((now_ns() as f64 - closed) / 1e6);
                if display.is_drawn() {
                    display.set_message(self.progress_line(complete, total_s));
                }
            }
        }
        display.clear();
        Ending {
            lost: self.lost.clone(),
            interrupted: self.interrupted,
        }
    }

    fn grace(&self) -> Duration {
        if self.lost.is_some() {
            FINAL_GRACE_LOST
        } else {
            FINAL_GRACE_INTERRUPTED
        }
    }

    /// `measuring 3/10 s | 4 hosts | db file sequential read: 123,456 IOPS ...`.
    fn progress_line(&self, t: u32, total_s: f64) -> String {
        let mut l = format!(
            "measuring {t}/{total_s:.0} s | {} hosts",
            self.hosts.iter().filter(|h| !h.gone()).count()
        );
        let names: Vec<String> = (self.hosts.iter())
            .find_map(|h| {
                h.result
                    .as_ref()
                    .map(|(r, _, _)| r.events.iter().map(|e| e.name.clone()).collect())
            })
            .unwrap_or_default();
        if let Some(events) = self.seconds.by_t.get(&t) {
            for (k, e) in events
                .iter()
                .enumerate()
                .filter(|(_, e)| e.requests > 0)
                .take(3)
            {
                let name = names
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| format!("event {}", k + 1));
                l.push_str(&format!(
                    " | {name}: {} IOPS {:.1} MiB/s p99 {}",
                    crate::units::thousands(e.requests),
                    e.bytes as f64 / (1u64 << 20) as f64,
                    crate::units::latency_label(
                        e.latency.to_hdr().value_at_quantile(0.99) as f64 / 1000.0
                    )
                ));
            }
        }
        l
    }

    /// Ends every agent: stdin closed (an agent whose coordinator is gone ends within 2 s),
    /// then its ssh waited for, and killed if it lingers. A pushed binary whose agent
    /// never started is removed here.
    fn close(&mut self, ssh: &Arc<dyn Transport>) {
        for h in &mut self.hosts {
            h.stdin = None;
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        for h in &mut self.hosts {
            if let Some(c) = h.child.as_mut() {
                loop {
                    match c.try_wait() {
                        Ok(Some(_)) | Err(_) => break,
                        Ok(None) if Instant::now() >= deadline => {
                            let _ = c.kill();
                            let _ = c.wait();
                            break;
                        }
                        Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                    }
                }
            }
            if let (Some(dir), None) = (&h.pushed, &h.hello) {
                remove_pushed(&**ssh, &h.name, dir);
            }
        }
    }
}

/// The merged result, written into the coordinator's run directory.
fn finish(
    p: &Plan,
    c: Cluster,
    ending: Ending,
    started_at: &str,
    dir: &crate::safety::fs::Dir,
) -> Result<RunOutcome> {
    let outcomes: Vec<HostOutcome> = (c.hosts.iter())
        .map(|h| HostOutcome {
            name: h.name.clone(),
            hostname: h.hello.as_ref().map(|x| x.2.clone()).unwrap_or_default(),
            offset: h.offset,
            start_skew_ns: h
                .started_ns
                .map(|a| h.offset.from_agent(a) as i64 - c.start_ns as i64),
            result: h.result.as_ref().map(|(r, t, _)| (r.clone(), t.clone())),
            lost: h.lost.clone(),
        })
        .collect();
    let target = p.args.target.display().to_string();
    let Some(result) = merge::merge(&outcomes, &c.seconds, &target, started_at, &ending) else {
        let why = (c.hosts.iter())
            .find_map(|h| h.failed.as_ref().map(|(m, _)| format!("{}: {m}", h.name)))
            .unwrap_or_else(|| "no host sent a result".into());
        return Err(if ending.interrupted {
            Error::Interrupted(format!("interrupted; {why}"))
        } else {
            Error::Io(why)
        });
    };
    let worst_host = (c.hosts.iter())
        .filter_map(|h| h.result.as_ref().map(|r| r.2))
        .chain(
            c.hosts
                .iter()
                .filter_map(|h| h.failed.as_ref().map(|f| f.1)),
        )
        .any(|e| e == ExitCode::IoError as i32);
    let exit = if ending.lost.is_some() || worst_host {
        ExitCode::IoError
    } else if ending.interrupted {
        ExitCode::Interrupted
    } else if result.verdict.as_ref().is_some_and(|v| !v.pass) {
        ExitCode::VerdictFailed
    } else {
        ExitCode::Ok
    };
    let (run_dir, summary, write_error) = match crate::report::write_run(dir, &result) {
        Ok(summary) => (dir.path().to_path_buf(), summary, None),
        Err(e) => (
            dir.path().to_path_buf(),
            crate::report::summary::render(&result),
            Some(e),
        ),
    };
    Ok(RunOutcome {
        result,
        run_dir,
        summary,
        exit: if write_error.is_some() {
            ExitCode::IoError
        } else {
            exit
        },
        write_error,
        totals: Vec::new(),
    })
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
}
