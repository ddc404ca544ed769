//! The commands: each turns validated arguments into work and decides what to print.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};

use crate::cli::{CleanArgs, Cli, Command, MapArgs, PrepareArgs, RunArgs};
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
        Command::Clean(a) if a.stale => crate::doctor::clean_stale(&a.paths),
        Command::Clean(a) => clean(&a),
        Command::Map(a) => map(&a),
        Command::Doctor(a) => crate::doctor::doctor(&a.paths),
    }
}

/// SIGINT, SIGTERM and SIGHUP set the stop flag (runs end within 2 s and keep their partial
/// result); a second SIGINT/SIGTERM exits at once.
fn install_signal_handlers() -> Result<Arc<AtomicBool>> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register_conditional_shutdown(
            sig,
            ExitCode::Interrupted as i32,
            Arc::clone(&stop),
        )
        .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&stop)))
        .map_err(|e| Error::other(format!("cannot install signal handlers: {e}")))?;
    }
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
    let path = match a.paths.as_slice() {
        [] => std::path::PathBuf::from("./dbio-data"),
        [p] => p.clone(),
        _ => {
            return Err(Error::usage(
                "dbio clean takes one data set directory (or several with --stale)",
            ));
        }
    };
    let r = dataset::clean(&path)?;
    println!(
        "removed {} data file(s), {} from {}{}",
        r.files,
        human_bytes(r.bytes),
        path.display(),
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

/// `dbio map PATH`: the storage stack and its findings.
fn map(a: &MapArgs) -> Result<ExitCode> {
    std::fs::metadata(&a.path).map_err(|e| Error::io("cannot map", &a.path, &e))?;
    let (map, findings) = crate::storage::survey(&a.path, Some(a.block_size));
    let mut out = std::io::stdout().lock();
    if a.json {
        #[derive(serde::Serialize)]
        struct MapOutput<'a> {
            map: &'a crate::storage::StorageMap,
            lint: &'a [crate::report::result::LintJson],
        }
        let json = MapOutput {
            map: &map,
            lint: &findings,
        };
        let text = serde_json::to_string_pretty(&json).map_err(|e| Error::other(e.to_string()))?;
        let _ = writeln!(out, "{text}");
    } else {
        let _ = write!(out, "{}", crate::storage::map::render(&map));
        if !findings.is_empty() {
            let _ = writeln!(out, "\nFindings");
            for l in &findings {
                let _ = writeln!(
                    out,
                    "- {} [{}] {}: {}",
                    l.severity, l.rule, l.subject, l.message
                );
            }
        }
    }
    Ok(ExitCode::Ok)
}
