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
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::clock::{self, Sample};
use super::hosts::{Heard, Host, HostState, check_glibc, connect, remove_pushed};
use super::merge::{self, Ending, HostOutcome, Seconds};
pub use super::plan::{ClusterPlan, plan, wanted};
use super::protocol::{Assignment, FromAgent, PROTOCOL_VERSION, ToAgent, line};
use super::transport::{Ssh, Transport};
use crate::error::{Error, ExitCode, Result};
use crate::options::Source;
use crate::progress::{self, Progress};
use crate::run::{RunHooks, RunOutcome};
use crate::sys::now_ns;

/// A host that says nothing for this long is lost (agents say something every second).
const SILENCE: Duration = Duration::from_secs(3);
/// How long the hosts have to say hello and to check the run.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// After a stop, how long the other hosts have to send what they measured.
const FINAL_GRACE_LOST: Duration = Duration::from_millis(1800);
const FINAL_GRACE_INTERRUPTED: Duration = Duration::from_millis(1200);
/// How long after the start instant is given it lies: every host hears of it in time.
const START_MARGIN: Duration = Duration::from_millis(300);

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
    hooks: &'a RunHooks,
    /// The last second handed to `hooks.on_second`, and the last each host sent.
    told: u32,
    last_second: Vec<u32>,
}

/// Runs a run across hosts to its end; the run directory is the coordinator's.
///
/// `hooks` hears the merged run as a local run's caller would: its run directory, its
/// events, and each second once every host still in the run has sent it (the seconds left
/// incomplete by a lost host, at the end).
pub fn run(p: &ClusterPlan, stop: &Arc<AtomicBool>, hooks: &RunHooks) -> Result<RunOutcome> {
    crate::clock::calibrate();
    let started_at = crate::sys::utc_now_rfc3339();
    let ssh = Ssh::new(&p.args.ssh).map_err(Error::usage)?;
    let cfg = &p.first;
    let tail = crate::run::run_dir_name(cfg, Some(p.args.hosts.len()), cfg.dataset.size);
    // Made, proved writable, registered and locked before any host is started; removed
    // again when the run ends without a result.
    let place = crate::report::RunPlace::make(&cfg.out, None, &started_at, &tail, cfg.test.name())?;
    if let Some(f) = &hooks.on_run_dir {
        f(place.dir.path());
    }
    if let Some(f) = &hooks.on_events {
        // Every host runs this configuration: its events, in the order of their slots.
        let plan = crate::workload::plan(
            cfg,
            cfg.dataset.files as usize,
            cfg.dataset.file_size(),
            cfg.dataset.block_size,
        )?;
        let names: Vec<&'static str> = plan.events.iter().map(|e| e.name()).collect();
        f(&names);
    }
    let outcome = run_hosts(p, stop, ssh, &place.dir, &started_at, hooks);
    if outcome.is_err() {
        place.remove();
    }
    outcome
}

/// The run across hosts, its merged result written into `dir`.
fn run_hosts(
    p: &ClusterPlan,
    stop: &Arc<AtomicBool>,
    ssh: Ssh,
    dir: &crate::safety::fs::Dir,
    started_at: &str,
    hooks: &RunHooks,
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
        hooks,
        told: 0,
        last_second: Vec::new(),
    };
    c.last_second = vec![0; c.hosts.len()];
    let outcome = c.phases(p);
    c.close(&ssh);
    let ending = outcome?;
    let n = c.hosts.len();
    stderr_line!(
        "dbio: {n} host(s): {} per-second line(s) merged, the latest {:.0} ms after its second closed",
        c.lines,
        c.latest_ms
    );
    finish(p, c, ending, started_at, dir)
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
                    h.state.on_end();
                }
                std::thread::sleep(wait);
                return false;
            }
        };
        match heard {
            Heard::End(i) => self.hosts[i].state.on_end(),
            Heard::Garbled(i, l) => {
                let h = &self.hosts[i];
                stderr_line!("{}: {}", h.name.shown(), l.trim_end().shown());
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
            FromAgent::Checked => h.state.on_checked(),
            FromAgent::Refused { message } => h.state.on_refused(message),
            FromAgent::Ready => h.state.on_ready(),
            FromAgent::Pong { seq, now_ns } => {
                if let Some(sent) = h.sent.remove(&seq) {
                    h.pings.push(Sample {
                        sent_ns: sent,
                        agent_ns: now_ns,
                        heard_ns: at,
                    });
                }
            }
            FromAgent::Started { at_ns } => {
                h.started_ns = Some(at_ns);
                h.state.on_started();
            }
            FromAgent::Second { t, events } => {
                let intervals: std::result::Result<Vec<_>, _> =
                    events.iter().map(|e| e.interval()).collect();
                match intervals {
                    Ok(v) => {
                        self.seconds.add(t, v);
                        self.lines += 1;
                        self.last_second[i] = self.last_second[i].max(t);
                    }
                    Err(e) => {
                        stderr_line!("{}: a second's line cannot be read: {e}", h.name)
                    }
                }
            }
            FromAgent::Final {
                result,
                totals,
                exit,
            } => {
                let t: std::result::Result<Vec<_>, _> = totals.iter().map(|t| t.totals()).collect();
                match t {
                    Ok(t) => h.state.on_result((*result, t, exit)),
                    Err(e) => {
                        h.state
                            .on_failed(format!("its result cannot be read: {e}"), 1);
                    }
                }
            }
            FromAgent::Failed { message, exit } => h.state.on_failed(message, exit),
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
                None if h.gone() => {
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
    fn phases(&mut self, p: &ClusterPlan) -> Result<Ending> {
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
        let checked = |h: &Host| !matches!(h.state, HostState::Connecting);
        if !self.until(deadline, checked) && self.stop.load(Ordering::Relaxed) {
            return Err(interrupted());
        }
        for h in &self.hosts {
            match &h.state {
                _ if h.state.checked() => {}
                HostState::Refused(why) => return Err(Error::usage(format!("{}: {why}", h.name))),
                _ if h.gone() => {
                    return Err(Error::usage(format!(
                        "{}: it ended before checking the run: {}",
                        h.name,
                        h.why()
                    )));
                }
                _ => {
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
            self.until_quiet_or(|h| matches!(h.state, HostState::Ready), &group)?;
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
                let (why, exit) = match h.failed() {
                    Some((m, e)) => (m.to_string(), e),
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
    fn stream(&mut self, p: &ClusterPlan) -> Ending {
        let display = Progress::line(progress::wanted(p.first.progress, p.first.quiet));
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
                    .find(|h| h.result().is_none() && (h.gone() || h.heard.elapsed() > SILENCE))
                {
                    let why = match h.failed() {
                        Some((m, _)) => m.to_string(),
                        None if h.gone() => format!("its connection ended ({})", h.why()),
                        None => format!("no word from it for {} s", SILENCE.as_secs()),
                    };
                    self.lost = Some((h.name.clone(), why));
                }
                if self.interrupted || self.lost.is_some() {
                    if let Some((name, why)) = &self.lost {
                        stderr_line!(
                            "dbio: {} lost: {}; stopping every host",
                            name.shown(),
                            why.shown()
                        );
                        let lost = name.clone();
                        if let Some(h) = self.hosts.iter_mut().find(|h| h.name == lost) {
                            h.state.on_lost(why.clone());
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
            self.tell_seconds(self.merged_until());
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
        // What arrived of the last seconds, complete or not (a lost host's are short).
        self.tell_seconds(self.seconds.by_t.keys().copied().max().unwrap_or(0));
        Ending {
            lost: self.lost.clone(),
            interrupted: self.interrupted,
        }
    }

    /// The last second every host has sent, or will never send more of: a host that is
    /// done (its result in, or gone) has sent all its seconds; one still running has sent
    /// those up to its last.
    fn merged_until(&self) -> u32 {
        let running = (self.hosts.iter().zip(&self.last_second)).filter(|(h, _)| !h.done());
        running
            .map(|(_, &t)| t)
            .min()
            .unwrap_or_else(|| self.seconds.by_t.keys().copied().max().unwrap_or(0))
    }

    /// Hands the merged seconds up to `upto` that were not handed yet to `on_second`.
    fn tell_seconds(&mut self, upto: u32) {
        let Some(f) = &self.hooks.on_second else {
            return;
        };
        if upto <= self.told {
            return;
        }
        for (&t, events) in self.seconds.by_t.range(self.told + 1..=upto) {
            f(t, events);
        }
        self.told = upto;
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
        // A host that sent its result and closed its connection still counts: only failed
        // and lost ones do not.
        let mut l = format!(
            "measuring {t}/{total_s:.0} s | {} hosts",
            (self.hosts.iter())
                .filter(|h| h.result().is_some() || !h.gone())
                .count()
        );
        let names: Vec<String> = (self.hosts.iter())
            .find_map(|h| {
                h.result()
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
    p: &ClusterPlan,
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
            result: h.result().map(|(r, t, _)| (r.clone(), t.clone())),
            lost: h.lost().map(str::to_string),
        })
        .collect();
    let target = p.args.target.display().to_string();
    let Some(result) = merge::merge(&outcomes, &c.seconds, &target, started_at, &ending) else {
        let why = (c.hosts.iter())
            .find_map(|h| h.failed().map(|(m, _)| format!("{}: {m}", h.name)))
            .unwrap_or_else(|| "no host sent a result".into());
        return Err(if ending.interrupted {
            Error::Interrupted(format!("interrupted; {why}"))
        } else {
            Error::Io(why)
        });
    };
    let worst_host = (c.hosts.iter())
        .filter_map(|h| h.result().map(|r| r.2))
        .chain(c.hosts.iter().filter_map(|h| h.failed().map(|f| f.1)))
        .any(|e| e == ExitCode::IoError as i32);
    let exit = crate::run::exit_code(
        ending.lost.is_some() || worst_host,
        ending.interrupted,
        &result,
    );
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
