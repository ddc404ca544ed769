//! `dbio agent`: one host's part of a run across hosts, started by the coordinator over ssh
//! (hidden from help). It speaks only the protocol on stdout (its stderr reaches the
//! coordinator's, line by line, named by host) and reads the coordinator's lines on stdin.
//!
//! stdin closing means the coordinator is gone: the run is stopped as Ctrl-C stops it, and
//! the agent is gone within 2 s whatever it was doing — no agent outlives its coordinator.
//! A run reaches the agent as a job file's text and is checked by the very checks of
//! `dbio run`; the agent then runs it through `run::run` with hooks that hold the start for
//! the coordinator's instant and stream every second. It writes no run directory.

use crate::units::Shown;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::protocol::{
    Assignment, FromAgent, PROTOCOL_VERSION, ToAgent, WireInterval, WireTotals, line,
};
use crate::error::{Error, ExitCode, Result};
use crate::options::{RunArgs, Source};
use crate::run::{Preflight, RunHooks};
use crate::workload::spec::RunConfig;

/// How long an agent whose coordinator is gone may take to end.
const GONE_GRACE: Duration = Duration::from_millis(1500);

/// The agent's stdout: one whole line per message, whichever thread sends it.
#[derive(Clone)]
struct Out {
    out: Arc<Mutex<std::io::Stdout>>,
    stop: Arc<AtomicBool>,
}

impl Out {
    fn send(&self, msg: &FromAgent) {
        let text = line(msg) + "\n";
        let mut o = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if o.write_all(text.as_bytes())
            .and_then(|()| o.flush())
            .is_err()
        {
            // Nobody reads: the coordinator is gone.
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// Runs the agent until its run ends or its coordinator goes. `pushed`: the private
/// directory `--push` copied this binary into, removed at once (the running program stays
/// alive), so nothing is left on the host even after `kill -9`.
pub fn main(
    pushed: Option<&Path>,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&crate::dataset::DataSet, &str),
) -> Result<ExitCode> {
    if let Some(dir) = pushed {
        remove_pushed(dir);
    }
    crate::clock::calibrate();
    let out = Out {
        out: Arc::new(Mutex::new(std::io::stdout())),
        stop: stop.clone(),
    };
    out.send(&FromAgent::Hello {
        protocol: PROTOCOL_VERSION,
        dbio_version: env!("CARGO_PKG_VERSION").into(),
        hostname: crate::report::result::HostJson::current().hostname,
        pid: std::process::id(),
    });
    let done = Arc::new(AtomicBool::new(false));
    let rx = Arc::new(Mutex::new(read_stdin(out.clone(), stop.clone())));
    {
        let (out, done) = (out.clone(), done.clone());
        std::thread::Builder::new()
            .name("dbio-alive".into())
            .spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    out.send(&FromAgent::Alive);
                    std::thread::sleep(Duration::from_secs(1));
                }
            })
            .map_err(|e| Error::other(format!("cannot start a thread: {e}")))?;
    }
    let code = serve(&out, &rx, stop, on_data_set);
    done.store(true, Ordering::Relaxed);
    code
}

fn serve(
    out: &Out,
    rx: &Arc<Mutex<Receiver<ToAgent>>>,
    stop: &Arc<AtomicBool>,
    on_data_set: &dyn Fn(&crate::dataset::DataSet, &str),
) -> Result<ExitCode> {
    let Some(ToAgent::Check(a)) = next(rx, stop) else {
        return Ok(ExitCode::Interrupted);
    };
    let (mut cfg, mut pre) = match check(&a) {
        Ok(c) => c,
        Err(e) => {
            out.send(&FromAgent::Refused {
                message: e.to_string(),
            });
            return Ok(e.exit_code());
        }
    };
    out.send(&FromAgent::Checked);
    if !matches!(next(rx, stop), Some(ToAgent::Run)) {
        return Ok(ExitCode::Interrupted);
    }
    if a.shared && a.index == 0 {
        // One data set for all: this host prepares it (held exclusively while it does),
        // then opens it as every other host does.
        if let Err(e) = crate::run::prepare_data_set(&cfg, stop, pre.space.clone()) {
            out.send(&FromAgent::Failed {
                message: e.to_string(),
                exit: e.exit_code() as i32,
            });
            return Ok(e.exit_code());
        }
    }
    if a.shared {
        // Prepared above by the first host (with --fresh if asked): every host's run opens
        // it as it is.
        cfg.dataset.fresh = false;
        if cfg.writes() {
            // Each host writes its own region of it: the data files i with i % hosts == index.
            pre.region = Some(crate::run::Region {
                index: a.index,
                of: a.hosts,
            });
        }
    }
    pre.hooks = Arc::new(hooks(out, rx, stop));
    match crate::run::run(&cfg, &pre, stop, &|ds| on_data_set(ds, cfg.test.name())) {
        Ok(o) => {
            out.send(&FromAgent::Final {
                totals: o.totals.iter().map(WireTotals::of).collect(),
                result: Box::new(o.result),
                exit: o.exit as i32,
            });
            Ok(o.exit)
        }
        Err(e) => {
            out.send(&FromAgent::Failed {
                message: e.to_string(),
                exit: e.exit_code() as i32,
            });
            Ok(e.exit_code())
        }
    }
}

/// The next message for the main thread; None when the coordinator is gone or stopped.
fn next(rx: &Mutex<Receiver<ToAgent>>, stop: &AtomicBool) -> Option<ToAgent> {
    let rx = rx.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(ToAgent::Stop) => return None,
            Ok(m) => return Some(m),
            Err(RecvTimeoutError::Timeout) if !stop.load(Ordering::Relaxed) => {}
            Err(_) => return None,
        }
    }
}

/// The run's hooks: hold the start until the coordinator's instant, stream every second.
fn hooks(out: &Out, rx: &Arc<Mutex<Receiver<ToAgent>>>, stop: &Arc<AtomicBool>) -> RunHooks {
    let (o1, o2, o3) = (out.clone(), out.clone(), out.clone());
    let (rx, stop) = (rx.clone(), stop.clone());
    RunHooks {
        wait_for_start: Some(Box::new(move || {
            o1.send(&FromAgent::Ready);
            match next(&rx, &stop) {
                Some(ToAgent::Start { at_ns }) => Some(at_ns),
                _ => None,
            }
        })),
        on_start: Some(Box::new(move |at_ns| {
            o2.send(&FromAgent::Started { at_ns });
        })),
        on_second: Some(Box::new(move |t, intervals| {
            o3.send(&FromAgent::Second {
                t,
                events: intervals.iter().map(WireInterval::of).collect(),
            });
        })),
        no_run_dir: true,
        ..Default::default()
    }
}

/// Reads the coordinator's lines: pings are answered here at once (the clock must not
/// wait for the run), a stop sets the stop flag, the rest goes to the main thread. At the
/// end of stdin the run is stopped and the process ends within [`GONE_GRACE`].
fn read_stdin(out: Out, stop: Arc<AtomicBool>) -> Receiver<ToAgent> {
    let (tx, rx) = mpsc::channel();
    let flag = stop.clone();
    let spawned = std::thread::Builder::new()
        .name("dbio-stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            for l in stdin.lock().lines() {
                let Ok(l) = l else { break };
                match serde_json::from_str::<ToAgent>(&l) {
                    Ok(ToAgent::Ping { seq }) => out.send(&FromAgent::Pong {
                        seq,
                        now_ns: crate::sys::now_ns(),
                    }),
                    Ok(m) => {
                        if matches!(m, ToAgent::Stop) {
                            stop.store(true, Ordering::Relaxed);
                        }
                        let _ = tx.send(m);
                    }
                    Err(e) => {
                        stderr_line!(
                            "dbio agent: a line from the coordinator is not understood: {e}"
                        )
                    }
                }
            }
            // The coordinator is gone: stop, and end even if the run cannot.
            stop.store(true, Ordering::Relaxed);
            drop(tx);
            std::thread::sleep(GONE_GRACE);
            crate::safety::cleanup::remove_registered();
            // SAFETY: _exit ends the process without running anything else.
            unsafe { libc::_exit(ExitCode::Interrupted as i32) };
        });
    if spawned.is_err() {
        flag.store(true, Ordering::Relaxed);
    }
    rx
}

/// `--push`: this binary runs from `dir/dbio`; both go now. Only if `dir/dbio` is this
/// very program (anything else there is left alone).
fn remove_pushed(dir: &Path) {
    let me = std::fs::read_link("/proc/self/exe").ok();
    let bin = dir.join("dbio");
    if me.as_deref() != Some(bin.as_path()) {
        stderr_line!(
            "dbio agent: {} is not this program; left alone",
            bin.shown()
        );
        return;
    }
    if let Err(e) = std::fs::remove_file(&bin).and_then(|()| std::fs::remove_dir(dir)) {
        stderr_line!("dbio agent: cannot remove {}: {e}", dir.shown());
    }
}

/// Checks the assignment as `dbio run` checks a run: both validation stages, and the
/// space for a data set this host will create. Creates nothing.
fn check(a: &Assignment) -> Result<(RunConfig, Preflight)> {
    let job = crate::options::job::parse(&a.job, "the run sent by the coordinator")?;
    if let Some(v) = job
        .values
        .iter()
        .find(|v| v.option.group == crate::options::Group::Cluster)
    {
        return Err(Error::usage(format!(
            "{}: a host of a cluster run does not start hosts of its own ({})",
            v.at,
            v.option.key.unwrap_or_default()
        )));
    }
    let mut args = RunArgs::defaults(None);
    job.apply(&mut args)?;
    // What differs on this host, set as typed values.
    let target = super::host_target(&args.target, &a.host)?;
    args.set("target", &target.display().to_string(), Source::Typed)
        .map_err(Error::usage)?;
    if let Some(seed) = args.seed {
        let own = seed.wrapping_add(a.index as u64).to_string();
        args.set("seed", &own, Source::Typed)
            .map_err(Error::usage)?;
    }
    args.set("quiet", "true", Source::Typed)
        .map_err(Error::usage)?;
    let cfg = crate::options::check::run_config_with(&args, Some(job))?;
    let pre = crate::options::environment::check(&cfg)?;
    // A data set this host creates must fit before any host starts.
    // (A shared data set is created by the first host only.)
    let another_creates = a.shared && a.index > 0;
    let creates = !another_creates
        && cfg.uses_data_files()
        && !cfg.dataset.target.join("dbio-manifest.json").exists()
        && !std::fs::metadata(&cfg.dataset.target).is_ok_and(|m| !m.is_dir());
    if creates {
        let at = crate::dataset::space_path(&cfg.dataset.target);
        let mut space = pre.space.clone();
        space
            .add(
                &at,
                cfg.dataset.size,
                0,
                "the data set",
                "use a smaller --size or another --target",
            )
            .map_err(|e| Error::io("cannot read the free space of", &at, &e))?;
        space.check().map_err(Error::usage)?;
    }
    Ok((cfg, pre))
}
