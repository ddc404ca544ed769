//! `--save-job FILE`: the job file equivalent to a run typed on the command line — its
//! classes where classes express it (read-iops, read-mbps, write-iops, write-mbps, redo, and
//! any test at a `--rate`), else the test with every option that shapes it (oltp, temp,
//! `--keep-inflight`). Every value is written by its option's own definition
//! ([`super::Opt::get`]) and into the file by the one job-file writer
//! ([`super::job::write::JobToml`]), so `--job` reads back exactly what was run — a target
//! with control characters, quotes or line breaks included.

use super::job::write::{JobToml, Value};
use super::{OPTIONS, Opt, RunArgs, Source};
use crate::error::{Error, Result};
use crate::workload::Test;
use crate::workload::spec::{ClassSpec, RunConfig};

/// An option's value as the job file holds it: switches and counts bare, the rest text.
fn toml_value<'a>(o: &Opt, text: &'a str) -> Value<'a> {
    if o.is_switch() {
        return Value::Bool(text == "true");
    }
    match text.parse::<u64>() {
        Ok(n)
            if text.bytes().all(|b| b.is_ascii_digit())
                && matches!(o.value, Some("N" | "CPU" | "PCT")) =>
        {
            Value::Int(n)
        }
        _ => Value::Str(text),
    }
}

/// Writes `[table]` and its `(key, value)` lines, unless it has none.
fn table(w: &mut JobToml, table: &str, lines: &[(&str, String, &Opt)]) {
    if lines.is_empty() {
        return;
    }
    w.blank();
    w.table(table);
    for (k, text, o) in lines {
        w.set(k, toml_value(o, text), "");
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
    // [redo] only where the run has a log (write-mbps has one only as PostgreSQL's COPY).
    if key.starts_with("redo.") && key != "redo.noise_cpu" && !cfg.uses_redo() {
        return false;
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
    // the database's sizes under --like innodb or postgres).
    let mut a = super::check::like_database(typed, cfg.test)?;
    a.seed = Some(cfg.seed);
    a.size = Some(cfg.dataset.size);
    let mut w = JobToml::new();
    w.comment(&format!("Equivalent of `dbio run {}`", cfg.test.name()));
    for name in ["dataset", "run", "redo", "oltp", "temp"] {
        let mut lines: Vec<(&str, String, &Opt)> = Vec::new();
        let mut first: Vec<(&str, &str)> = Vec::new();
        if name == "run" && test_form {
            first.push(("test", cfg.test.name()));
        }
        for opt in OPTIONS.iter().filter(|x| shapes(x, cfg, test_form)) {
            let key = opt.key.expect("options written have a key");
            let Some((t, k)) = key.split_once('.') else {
                continue;
            };
            if t != name {
                continue;
            }
            // A span over all of each file is the default: left out.
            if key == "dataset.span" && cfg.span.is_full() {
                continue;
            }
            if let Some(text) = (opt.get)(&a) {
                lines.push((k, text, opt));
            }
        }
        let mut last: Vec<(&str, &str)> = Vec::new();
        if name == "redo"
            && !test_form
            && cfg.test == Test::Redo
            && cfg.redo.submission == crate::engine::Submission::Sync
        {
            // The redo test's --sync: LGWR writes the pieces of a write one by one.
            last.push(("submission", "sync"));
        }
        if lines.is_empty() && first.is_empty() && last.is_empty() {
            continue;
        }
        w.blank();
        w.table(name);
        for (k, v) in &first {
            w.set(k, Value::Str(v), "");
        }
        for (k, text, o) in &lines {
            w.set(k, toml_value(o, text), "");
        }
        for (k, v) in &last {
            w.set(k, Value::Str(v), "");
        }
    }
    for c in &classes {
        w.blank();
        write_class(&mut w, c);
    }
    Ok(w.finish())
}

/// One `[[class]]` as a job file writes it.
fn write_class(w: &mut JobToml, c: &ClassSpec) {
    w.array_table("class");
    w.set("name", Value::Str(&c.name), "");
    w.set("event", Value::Str(c.event.name()), "");
    w.set("size", Value::Toml(c.sizes.toml()), "");
    w.set("sessions", Value::Int(c.sessions as u64), "");
    w.set("submission", Value::Str(c.submission.name()), "");
    if let Some(b) = c.batch {
        w.set("batch", Value::Int(b as u64), "");
    }
    if let Some(d) = c.depth {
        w.set("depth", Value::Int(d as u64), "");
    }
    if let Some(s) = c.spill {
        w.set("spill", Value::Str(&crate::units::size_label(s)), "");
    }
    if let Some(t) = c.think {
        w.set("think", Value::Str(&t.label()), "");
    }
    if let Some(rate) = c.rate {
        w.set("rate", Value::Num(rate), "");
        let arrival = if c.poisson { "poisson" } else { "fixed" };
        w.set("arrival", Value::Str(arrival), "");
    }
    if !c.limits.is_empty() {
        w.table("class.limits");
        for (stat, d) in &c.limits.latency {
            w.set(stat, Value::Str(&crate::units::duration_label(*d)), "");
        }
        if let Some(v) = c.limits.min_iops {
            w.set("min_iops", Value::Num(v), "");
        }
        if let Some(v) = c.limits.min_mib_per_s {
            w.set("min_mib_per_s", Value::Num(v), "");
        }
    }
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
    let mut w = JobToml::new();
    w.comment(title);
    for name in ["dataset", "run", "redo", "temp"] {
        let mut lines: Vec<(&str, String, &Opt)> = Vec::new();
        for opt in OPTIONS.iter().filter(|x| x.with_classes) {
            let Some((t, k)) = opt.key.and_then(|key| key.split_once('.')) else {
                continue;
            };
            let wanted = match (t, k) {
                _ if t != name => false,
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
                lines.push((k, text, opt));
            }
        }
        table(&mut w, name, &lines);
    }
    for c in &cfg.classes {
        w.blank();
        write_class(&mut w, c);
    }
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts no hand-written quoting gets right: control characters, quotes, backslashes,
    /// line breaks, TOML's own delimiters, comment and table marks, non-ASCII.
    const HOSTILE: &[&str] = &[
        "data\u{1b}x",
        "tab\there \"quoted\" back\\slash",
        "two\nlines\r\nand '''three'''",
        "\"\"\" # not = a [comment] [[class]]",
        "ünïcödé ✓ 日本 \u{202e}bidi\u{7f}",
    ];

    /// A job of one class named `name` on the data set `target`, read as `dbio run --job`
    /// reads it.
    fn job_of(name: &str, target: &str) -> (RunConfig, RunArgs) {
        let mut w = JobToml::new();
        w.table("dataset");
        w.set("target", Value::Str(target), "");
        w.set("size", Value::Str("64M"), "");
        w.array_table("class");
        w.set("name", Value::Str(name), "");
        w.set("event", Value::Str("db file sequential read"), "");
        w.set("sessions", Value::Int(2), "");
        w.set("rate", Value::Num(12.5), "");
        let job = super::super::job::parse(&w.finish(), "job.toml").unwrap();
        let mut a = RunArgs::defaults(None);
        job.apply(&mut a).unwrap();
        (
            super::super::check::run_config_with(&a, Some(job)).unwrap(),
            a,
        )
    }

    #[test]
    fn every_text_of_a_job_reads_back_as_it_was() {
        for s in HOSTILE {
            let target = format!("/tmp/{s}");
            let (cfg, a) = job_of(s, &target);
            assert_eq!(cfg.classes[0].name, *s);
            // What the wizard saves and what a run across hosts sends each host.
            for text in [
                classes_job_file(&cfg, &a, s),
                run_job_file(&cfg, &a).unwrap(),
            ] {
                let (back, b) = {
                    let job = super::super::job::parse(&text, "back.toml")
                        .unwrap_or_else(|e| panic!("{s:?}: {e}\n{text}"));
                    let mut b = RunArgs::defaults(None);
                    job.apply(&mut b).unwrap();
                    (
                        super::super::check::run_config_with(&b, Some(job)).unwrap(),
                        b,
                    )
                };
                assert_eq!(back.classes[0].name, *s, "{text}");
                assert_eq!(b.target, std::path::Path::new(&target), "{text}");
                assert_eq!(back.classes[0].rate, Some(12.5), "{text}");
            }
        }
    }
    /// What a run across hosts sends each host is a job file the host's dbio accepts, for
    /// every classic test: a write-iops with Oracle's shapes sent `doublewrite = on`, which
    /// only --like innodb takes, and every host refused the run.
    #[test]
    fn every_test_sent_to_a_host_is_a_job_the_host_accepts() {
        for test in Test::CLASSIC {
            let mut a = RunArgs::defaults(Some(test));
            a.target = std::path::PathBuf::from("/tmp/dbio-save-test");
            let cfg = super::super::check::run_config_with(&a, None).unwrap();
            let text = run_job_file(&cfg, &a).unwrap();
            let job = super::super::job::parse(&text, "sent.toml")
                .unwrap_or_else(|e| panic!("{test:?}: {e}\n{text}"));
            let mut b = RunArgs::defaults(None);
            job.apply(&mut b)
                .unwrap_or_else(|e| panic!("{test:?}: {e}\n{text}"));
            let back = super::super::check::run_config_with(&b, Some(job))
                .unwrap_or_else(|e| panic!("{test:?}: {e}\n{text}"));
            assert_eq!(back.test, cfg.test, "{text}");
        }
    }
}
