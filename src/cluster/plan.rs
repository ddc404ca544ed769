//! A run across hosts as the user gave it, checked before any host is reached.

use crate::units::Shown;

use super::transport::Ssh;
use crate::error::{Error, Result};
use crate::options::{RunArgs, Source};
use crate::workload::spec::RunConfig;

/// A run across hosts as the user gave it, validated before any host is reached.
pub struct ClusterPlan {
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
pub fn plan(a: &RunArgs) -> Result<ClusterPlan> {
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
    Ok(ClusterPlan {
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
