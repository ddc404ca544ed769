//! `--save-job FILE`: the job file equivalent to a run typed on the command line — its
//! classes where classes express it (read-iops, read-mbps, write-iops, write-mbps, redo, and
//! any test at a `--rate`), else the test with every option that shapes it (oltp, temp,
//! `--keep-inflight`). Every value is written by its option's own definition
//! ([`super::Opt::get`]), so `--job` reads back exactly what was run.

use super::{OPTIONS, Opt, RunArgs, Source};
use crate::error::{Error, Result};
use crate::workload::Test;
use crate::workload::spec::{ClassSpec, RunConfig};

/// A TOML value: numbers and switches bare, the rest quoted.
fn toml_value(o: &Opt, text: &str) -> String {
    let bare = o.is_switch()
        || (!text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit())
            && matches!(o.value, Some("N" | "CPU" | "PCT")));
    if bare {
        text.to_string()
    } else {
        format!("{text:?}")
    }
}

/// Whether option `o` goes into the job file of `cfg`: what shapes the run — the data set,
/// the timing, the engine — and, in a test's job file, the options of that test; beside
/// classes, only what a job of classes uses.
fn shapes(o: &Opt, cfg: &RunConfig, test_form: bool) -> bool {
    let Some(key) = o.key else {
        return false;
    };
    if key == "run.submission" || key == "run.sessions" {
        return test_form;
    }
    if key == "redo.submission" || key.starts_with("hosts.") {
        return false;
    }
    if cfg.test == Test::Job {
        // Beside classes: what a job uses, and [redo]/[temp] only when a class does.
        return o.with_classes
            && match key.split_once('.').map(|(t, _)| t) {
                Some("redo") => key == "redo.noise_cpu" || cfg.uses_redo(),
                Some("temp") => cfg.uses_temp(),
                _ => true,
            };
    }
    if key.starts_with("dataset.") || key.starts_with("run.") && o.with_classes {
        return o.applies.to(cfg.test);
    }
    if test_form {
        o.applies.to(cfg.test)
    } else {
        o.with_classes && o.applies.to(cfg.test)
    }
}

/// The job file equivalent to a run typed on the command line.
pub fn job_file(cfg: &RunConfig, typed: &RunArgs) -> Result<String> {
    if cfg.job.is_some() {
        return Err(Error::usage(
            "--save-job with --job: the job file is already there",
        ));
    }
    write(cfg, typed, true)
}

/// The job file of any run, `--job` with typed overrides included: what a run across many
/// hosts sends each host. `a` is the run's arguments as given (a job file's values are
/// applied under what was typed, as the run itself did).
pub fn run_job_file(cfg: &RunConfig, a: &RunArgs) -> Result<String> {
    write(cfg, a, false)
}

/// The job file of `cfg`; `classic_as_class`: a classic test is written as the class that
/// expresses it where one does (`--save-job`), else as the test with its options (the same
/// test runs elsewhere, under its own name).
fn write(cfg: &RunConfig, a: &RunArgs, classic_as_class: bool) -> Result<String> {
    let mut merged = a.clone();
    if let Some(path) = &a.job {
        super::job::load(path)?.apply(&mut merged)?;
    }
    let typed = &merged;
    let class = match cfg.classes.as_slice() {
        _ if cfg.test == Test::Job => None,
        [] if classic_as_class => crate::workload::presets::classic_class(cfg),
        [] => None,
        [one] => Some(one.clone()),
        _ => None,
    };
    let classes: Vec<ClassSpec> = if cfg.test == Test::Job {
        cfg.classes.clone()
    } else {
        class.clone().into_iter().collect()
    };
    let test_form = classes.is_empty();
    // What was run: the values as typed, with what the run resolved (seed, size, and
    // InnoDB's sizes under --like innodb).
    let mut a = if typed.like == crate::workload::event::Like::Innodb {
        super::check::like_innodb(typed, cfg.test)?
    } else {
        typed.clone()
    };
    a.seed = Some(cfg.seed);
    a.size = Some(cfg.dataset.size);
    let mut o = format!("# Equivalent of `dbio run {}`\n", cfg.test.name());
    for table in ["dataset", "run", "redo", "oltp", "temp"] {
        let mut lines = String::new();
        if table == "run" && test_form {
            lines.push_str(&format!("test = \"{}\"\n", cfg.test.name()));
        }
        for opt in OPTIONS.iter().filter(|x| shapes(x, cfg, test_form)) {
            let key = opt.key.expect("options written have a key");
            let Some((t, k)) = key.split_once('.') else {
                continue;
            };
            if t != table {
                continue;
            }
            // A span over all of each file is the default: left out.
            if key == "dataset.span" && cfg.span.is_full() {
                continue;
            }
            if let Some(text) = (opt.get)(&a) {
                lines.push_str(&format!("{k} = {}\n", toml_value(opt, &text)));
            }
        }
        if table == "redo"
            && !test_form
            && cfg.test == Test::Redo
            && cfg.redo.submission == crate::engine::Submission::Sync
        {
            // The redo test's --sync: LGWR writes the pieces of a write one by one.
            lines.push_str("submission = \"sync\"\n");
        }
        if !lines.is_empty() {
            o.push_str(&format!("\n[{table}]\n{lines}"));
        }
    }
    for c in &classes {
        o.push('\n');
        o.push_str(&class_toml(c));
    }
    Ok(o)
}

/// One `[[class]]` as a job file writes it.
pub fn class_toml(c: &ClassSpec) -> String {
    let mut o = format!(
        "[[class]]\nname = {:?}\nevent = \"{}\"\nsize = {}\nsessions = {}\nsubmission = \"{}\"\n",
        c.name,
        c.event.name(),
        c.sizes.toml(),
        c.sessions,
        c.submission.name()
    );
    if let Some(b) = c.batch {
        o.push_str(&format!("batch = {b}\n"));
    }
    if let Some(d) = c.depth {
        o.push_str(&format!("depth = {d}\n"));
    }
    if let Some(s) = c.spill {
        o.push_str(&format!("spill = \"{}\"\n", crate::units::size_label(s)));
    }
    if let Some(t) = c.think {
        o.push_str(&format!("think = \"{}\"\n", t.label()));
    }
    if let Some(rate) = c.rate {
        o.push_str(&format!(
            "rate = {rate}\narrival = \"{}\"\n",
            if c.poisson { "poisson" } else { "fixed" }
        ));
    }
    if !c.limits.is_empty() {
        o.push_str("[class.limits]\n");
        for (stat, d) in &c.limits.latency {
            o.push_str(&format!(
                "{stat} = \"{}\"\n",
                crate::units::duration_label(*d)
            ));
        }
        if let Some(v) = c.limits.min_iops {
            o.push_str(&format!("min_iops = {v}\n"));
        }
        if let Some(v) = c.limits.min_mib_per_s {
            o.push_str(&format!("min_mib_per_s = {v}\n"));
        }
    }
    o
}

/// The job file of a job of classes (`cfg.job`), with the options as `a` holds them (the
/// job file's values under what was typed): `[dataset]` and `[run]` with every option a
/// job of classes uses, `[redo]` and `[temp]` when a class issues redo or temp I/O, then
/// every class with its limits. Reading it back runs the same job.
pub fn classes_job_file(cfg: &RunConfig, a: &RunArgs, title: &str) -> String {
    use crate::workload::Event;
    let uses_redo = cfg.classes.iter().any(|c| c.event.is_redo());
    let commits = cfg.classes.iter().any(|c| c.event == Event::LogFileSync);
    let uses_temp = cfg.classes.iter().any(|c| c.event.is_temp());
    let mut a = a.clone();
    a.seed = Some(cfg.seed);
    a.size = Some(cfg.dataset.size);
    let mut o = format!("# {title}\n");
    for table in ["dataset", "run", "redo", "temp"] {
        let mut lines = String::new();
        for opt in OPTIONS.iter().filter(|x| x.with_classes) {
            let Some((t, k)) = opt.key.and_then(|key| key.split_once('.')) else {
                continue;
            };
            let wanted = match (t, k) {
                _ if t != table => false,
                ("redo", "submission") => commits && a.source(opt.name) != Source::Default,
                ("redo", "noise_cpu") => true,
                ("redo", _) => uses_redo,
                ("temp", _) => uses_temp,
                // What a job of classes uses of [dataset] and [run]: every option that
                // shapes any run, and the others only when set.
                _ => {
                    matches!(opt.applies, super::Applies::All)
                        || a.source(opt.name) != Source::Default
                }
            };
            if !wanted || (opt.name == "span" && cfg.span.is_full()) {
                continue;
            }
            if let Some(text) = (opt.get)(&a) {
                lines.push_str(&format!("{k} = {}\n", toml_value(opt, &text)));
            }
        }
        if !lines.is_empty() {
            o.push_str(&format!("\n[{table}]\n{lines}"));
        }
    }
    for c in &cfg.classes {
        o.push('\n');
        o.push_str(&class_toml(c));
    }
    o
}
