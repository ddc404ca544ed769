//! The commands: each turns validated arguments into work and decides what to print.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crate::cli::{CleanArgs, Cli, Command, PrepareArgs, RunArgs};
use crate::config::{DataSetSpec, RunConfig, rand_seed};
use crate::dataset::{self, FillOptions};
use crate::error::{Error, ExitCode, Result};
use crate::units::human_bytes;

/// Runs the command line. Returns the exit status.
pub fn main(cli: Cli) -> Result<ExitCode> {
    let stop = install_signal_handlers()?;
    match cli.command {
        Command::Run(a) => run(&a, &stop),
        Command::Prepare(a) => prepare(&a, &stop),
        Command::Clean(a) => clean(&a),
    }
}

/// SIGINT, SIGTERM and SIGHUP set the stop flag (runs end within 2 s and keep their partial
/// result); a second one exits at once, after removing the files registered in
/// [`crate::safety::cleanup`] (a run's temporary files, a preparation's partial files).
fn install_signal_handlers() -> Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static RECEIVED: AtomicUsize = AtomicUsize::new(0);
    let sigs = [SIGINT, SIGTERM, SIGHUP];
    let stop = Arc::new(AtomicBool::new(false));
    let fail = |e: std::io::Error| Error::other(format!("cannot install signal handlers: {e}"));
    for sig in sigs {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(fail)?;
        // SAFETY: the action only increments an atomic, which is async-signal-safe.
        unsafe {
            signal_hook::low_level::register(sig, || {
                RECEIVED.fetch_add(1, Ordering::SeqCst);
            })
        }
        .map_err(fail)?;
    }
    // The second signal is handled on a thread, not in the handler: removing files is not
    // something a signal handler may do.
    let mut signals = signal_hook::iterator::Signals::new(sigs).map_err(fail)?;
    std::thread::Builder::new()
        .name("dbio-signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if RECEIVED.load(Ordering::SeqCst) >= 2 {
                    let n = crate::safety::cleanup::remove_registered();
                    if n > 0 {
                        eprintln!("dbio: stopped at once; removed {n} temporary file(s)");
                    }
                    // SAFETY: _exit ends the process without running anything else.
                    unsafe { libc::_exit(ExitCode::Interrupted as i32) };
                }
            }
        })
        .map_err(fail)?;
    Ok(stop)
}

fn run(a: &RunArgs, stop: &Arc<AtomicBool>) -> Result<ExitCode> {
    let cfg = RunConfig::from_args(a)?;
    let outcome = crate::run::run(&cfg, stop)?;
    let mut out = std::io::stdout().lock();
    if cfg.json {
        let json = serde_json::to_string_pretty(&outcome.result)
            .map_err(|e| Error::other(e.to_string()))?;
        let _ = writeln!(out, "{json}");
    } else {
        let _ = write!(out, "{}", outcome.summary);
    }
    eprintln!("dbio: results in {}", outcome.run_dir.display());
    Ok(outcome.exit)
}

fn prepare(a: &PrepareArgs, stop: &Arc<AtomicBool>) -> Result<ExitCode> {
    let spec = DataSetSpec::from_args(&a.dataset)?;
    let written = AtomicU64::new(0);
    let seed = a.dataset.seed.unwrap_or_else(rand_seed);
    let fill = FillOptions {
        seed,
        buffered: a.buffered,
        written: &written,
        stop,
    };
    let ds = dataset::prepare(&dataset::Prepare {
        target: &spec.target,
        data: Some(&spec),
        redo: None,
        fresh: spec.fresh,
        fill: &fill,
    })?;
    if !ds.reused && ds.prepare_seconds > 0.0 {
        println!(
            "prepared {} in {:.1} s ({:.0} MiB/s, {})",
            human_bytes(ds.size_bytes()),
            ds.prepare_seconds,
            ds.size_bytes() as f64 / (1u64 << 20) as f64 / ds.prepare_seconds,
            ds.fill_method.as_deref().unwrap_or("")
        );
    }
    println!("{}", ds.describe());
    Ok(ExitCode::Ok)
}

fn clean(a: &CleanArgs) -> Result<ExitCode> {
    let r = dataset::clean(&a.path)?;
    println!(
        "removed {} data file(s), {} from {}{}",
        r.files,
        human_bytes(r.bytes),
        a.path.display(),
        if r.removed_dir {
            " and the directory"
        } else {
            ""
        }
    );
    for p in &r.skipped {
        eprintln!(
            "dbio: left {} alone: it changed since dbio created it",
            p.display()
        );
    }
    Ok(ExitCode::Ok)
}
