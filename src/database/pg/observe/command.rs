//! `dbio pg observe --pg URL --seconds N`: watch a server for a while, whatever runs on it,
//! and print what it saw (the pg section of a result; `--json` for its JSON, `--format md`
//! for Markdown). Hidden: it is
//! the observer of `dbio pg run` on its own, for tests and for a look at a busy server.

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;

use super::{CacheControl, Observer, RunContext};
use crate::error::{Error, ExitCode, Result};
use crate::report::sections::{Report, pg_sections};

#[derive(Debug, Clone, Args)]
pub struct ObserveArgs {
    /// The options of the table it takes: `--pg` (required), `--seconds`, `--hz`, `--json` (the
    /// section's JSON), `--format`.
    #[command(flatten)]
    pub options: crate::options::cli::PgObserveOptions,
}

/// Parses `--pg` (a URL or key=value pairs; a password in it is never echoed).
pub fn config(text: &str) -> Result<postgres::Config> {
    postgres::Config::from_str(text).map_err(|e| {
        Error::usage(format!(
            "--pg {}: not a PostgreSQL URL or key=value connection string: {}",
            crate::units::echoed(&crate::safety::secret::redact(text)),
            crate::safety::secret::redact(&e.to_string())
        ))
    })
}

/// Watches the server for `--seconds` (or until a signal), then prints what it saw.
pub fn observe(a: &ObserveArgs, stop: &Arc<AtomicBool>) -> Result<ExitCode> {
    let a = &a.options.0;
    let pg = a.pg.as_deref().ok_or_else(|| {
        Error::usage("--pg: the server to watch is required (a URL or key=value pairs)")
    })?;
    let mut config = config(pg)?;
    crate::database::pg::connect::fill_password(&mut config);
    // An unreachable server is bad input, refused before anything is watched.
    config.connect(postgres::NoTls).map_err(|e| {
        Error::usage(format!(
            "--pg {}: cannot connect: {}",
            crate::units::echoed(&crate::safety::secret::redact(pg)),
            super::pg_error("connecting", &e)
        ))
    })?;
    let observer = Observer::start(&config, a.observe.hz)?;
    let end = Instant::now() + Duration::from_secs(u64::from(a.observe.seconds));
    while Instant::now() < end && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(
            Duration::from_millis(50).min(end.saturating_duration_since(Instant::now())),
        );
    }
    let ctx = RunContext {
        test: "observe".into(),
        asynchronous: false,
        depth: 0,
        sessions: 0,
        session_set: Vec::new(),
        cache: CacheControl::NotControlled("only watched, nothing run".into()),
        mean_read_us: None,
        load_continues: true,
    };
    let section = observer.finish(&ctx)?;
    let report = Report {
        title: format!("dbio {} — PostgreSQL observed", env!("CARGO_PKG_VERSION")),
        sections: pg_sections(&section),
    };
    crate::report::Output::new(a.json, a.format).emit(&report, &section)?;
    Ok(if stop.load(Ordering::Relaxed) {
        ExitCode::Interrupted
    } else {
        ExitCode::Ok
    })
}
