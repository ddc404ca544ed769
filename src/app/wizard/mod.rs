//! `dbio wizard`: the guided mode, as the in-database benchmark dbio grew from starts with an
//! interactive script. It asks, on a terminal, what the user wants to learn,
//! where, how big, sync or async, how many sessions and for how long — every question with
//! a default and the reason for it — then shows the equivalent job file and `dbio run`
//! command, saves the job file, runs it as `dbio run` does and offers to remove the data
//! set.
//!
//! Nothing here has rules of its own: every answer is checked by its option's parser (the
//! option table, [`crate::options::OPTIONS`]) or by the job file parser; the run is built
//! as [`crate::options::RunArgs`] with the answers as typed values, validated and run by
//! [`crate::app::check_run`] and [`crate::app::run_checked`] (the path of `dbio run`), and
//! its job file is written by [`crate::options::save`]. Nothing is created before the last
//! answer, so Ctrl-C or Esc at any question leaves nothing behind.

mod ask;
pub mod goals;
mod place;

use crate::units::Shown;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::error::{Error, ExitCode, Result};
use crate::options::{RunArgs, RunConfig, Source};
use crate::units::{human_bytes, shell_word, size_label};
use crate::workload::Test;
use ask::Ask;
use goals::{EXAMPLES, GOALS, NEEDS};

/// What the wizard says (exit 2) when standard input, or standard error where the questions
/// are drawn, is not a terminal.
pub const NO_TERMINAL: &str = "dbio wizard asks its questions on a terminal (standard input and standard error), and this is not one; use `dbio run TEST` with options instead (`dbio run --help` lists them)";

/// The wizard's defaults where the option table's are for a long, careful run: a first try
/// should take about a minute, data set included.
const SIZE: &str = "256M";
const DURATION: &str = "30s";

/// `dbio wizard`.
pub fn wizard(stop: &Arc<AtomicBool>, db: Option<&Path>) -> Result<ExitCode> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Err(Error::usage(NO_TERMINAL));
    }
    let ask = Ask { stop };
    stderr_line!(
        "dbio wizard: a few questions, each with a default (Enter takes it) and the reason for it.\nCtrl-C or Esc stops it; nothing is created before the last answer.\n"
    );
    let labels: Vec<String> = GOALS.iter().map(|g| g.label.to_string()).collect();
    let goal = &GOALS[ask.choose(
        "What do you want to learn?",
        "read IOPS if unsure: single-block reads are what a database waits on most",
        &labels,
        0,
    )?];
    let run = match goal.test {
        Some(test) => a_test(&ask, goal, test)?,
        None => requirements(&ask)?,
    };
    crate::report::Output::Report(crate::report::Format::Text)
        .emit(&equivalent(&run.job_text, &run.command), &())?;
    let file = job_file_name(&ask, &run.file_stem)?;
    let code = match run.form {
        Form::Test { args, mut cfg, pre } => {
            // Written by `--save-job`'s own code, then run as `dbio run` runs.
            cfg.save_job = Some(file.clone());
            crate::app::run_checked(&args, &cfg, &pre, stop, db)?
        }
        Form::Classes => {
            crate::app::write_user_file(&file, run.job_text.as_bytes(), "the job file")?;
            stderr_line!("dbio: wrote the job file {}", file.shown());
            let mut args = RunArgs::defaults(None);
            args.job = Some(file.clone());
            let (cfg, pre) = crate::app::check_run(&args)?;
            crate::app::run_checked(&args, &cfg, &pre, stop, db)?
        }
    };
    stderr_line!(
        "dbio: run it again with `dbio run --job {}`",
        shell_word(&file.display().to_string())
    );
    if code != ExitCode::Interrupted {
        offer_clean(&ask, &run.target, db)?;
    }
    Ok(code)
}

/// What the answers come to, shown before anything is made: the job file and the command.
fn equivalent(job_text: &str, command: &str) -> crate::report::Report {
    use crate::report::sections::{Block, Section};
    crate::report::Report {
        title: String::new(),
        sections: vec![
            Section::new("job", "The equivalent job file:")
                .with(Block::Tree(job_text.trim_end().to_string())),
            Section::new("command", "The equivalent command:")
                .with(Block::Tree(format!("  {command}"))),
        ],
    }
}

/// A run the answers describe, checked, with its job file's text.
struct Prepared {
    form: Form,
    job_text: String,
    command: String,
    /// The job file's default name, without `.toml`.
    file_stem: String,
    /// The data set's directory.
    target: PathBuf,
}

enum Form {
    /// A test with the answers as typed options: run as `dbio run TEST ... --save-job FILE`.
    Test {
        args: Box<RunArgs>,
        cfg: Box<RunConfig>,
        pre: Box<crate::run::Preflight>,
    },
    /// A job of classes: saved, then run as `dbio run --job FILE`.
    Classes,
}

/// The answers as typed options: (option name, text as typed).
type Answers = Vec<(&'static str, String)>;

/// Sets the `answers` in `a` as typed on the command line, each by its option's parser.
fn apply(a: &mut RunArgs, answers: &Answers) -> Result<()> {
    for (name, text) in answers {
        a.set(name, text, Source::Typed)
            .map_err(|why| Error::usage(format!("--{name} {text}: {why}")))?;
    }
    Ok(())
}

/// A check of an answer by option `name`'s own parser.
fn option_check(name: &'static str) -> impl Fn(&str) -> std::result::Result<(), String> + Clone {
    move |text| RunArgs::defaults(None).set(name, text, Source::Typed)
}

/// The value `a` has for option `name`, as typed.
fn value_of(a: &RunArgs, name: &str) -> String {
    let o = crate::options::find(name).expect("a known option");
    (o.get)(a).unwrap_or_default()
}

/// The questions for a classic test.
fn a_test(ask: &Ask, goal: &goals::Goal, test: Test) -> Result<Prepared> {
    let base = RunArgs::defaults(Some(test));
    let mut answers = data_set_questions(ask, &base, SIZE, test.uses_data_files(), true)?;
    let forms: Vec<String> = goal.forms.iter().map(|f| f.to_string()).collect();
    if ask.choose(
        "Asynchronous or synchronous I/O?",
        "async is what a database does with filesystemio_options=setall, the usual setting on Linux",
        &forms,
        0,
    )? == 1
    {
        answers.push(("sync", "true".into()));
    }
    let sessions = ask.text(
        "How many sessions?",
        "8 concurrent sessions, like a small busy database; more sessions put more requests in flight",
        &value_of(&base, "sessions"),
        option_check("sessions"),
    )?;
    answers.push(("sessions", sessions));
    let duration = duration_question(ask, DURATION)?;
    answers.push(("duration", duration));
    // The seed is chosen now, so that the command and the job file both repeat this run.
    answers.push(("seed", crate::workload::spec::rand_seed().to_string()));
    test_run(test, answers)
}

/// The run of `test` with the `answers`, as the command and the job file show it.
fn test_run(test: Test, mut answers: Answers) -> Result<Prepared> {
    let base = RunArgs::defaults(Some(test));
    // What equals the option table's default is left out of the command. An option whose
    // value the table cannot read back (a switch such as --sync, which a job file says as
    // `submission`) cannot be seen to equal it, and is kept.
    answers.retain(|(name, text)| {
        let o = crate::options::find(name).expect("a known option");
        let mut d = RunArgs::defaults(Some(test));
        if d.set(name, text, Source::Typed).is_err() {
            return true;
        }
        match ((o.get)(&d), (o.get)(&base)) {
            (Some(answer), Some(default)) => answer != default,
            _ => true,
        }
    });
    let mut args = base;
    apply(&mut args, &answers)?;
    let (cfg, pre) = crate::app::check_run(&args)?;
    let job_text = crate::options::save::job_file(&cfg, &args)?;
    Ok(Prepared {
        job_text,
        command: command_line(test, &answers),
        file_stem: format!("dbio-{}", test.name()),
        target: cfg.dataset.target.clone(),
        form: Form::Test {
            args: Box::new(args),
            cfg: Box::new(cfg),
            pre: Box::new(pre),
        },
    })
}

/// `dbio run TEST --flag value ...`, as a shell takes it.
fn command_line(test: Test, answers: &Answers) -> String {
    let mut c = format!("dbio run {}", test.name());
    for (name, text) in answers {
        let o = crate::options::find(name).expect("a known option");
        if o.is_switch() {
            c.push_str(&format!(" --{name}"));
        } else {
            c.push_str(&format!(" --{name} {}", shell_word(text)));
        }
    }
    c
}

fn duration_question(ask: &Ask, default: &str) -> Result<String> {
    ask.text(
        "How long should it measure?",
        "after a 5 s warm-up: long enough for steady percentiles, short enough for a first try",
        default,
        option_check("duration"),
    )
}

/// Where the data set goes and how big it is: the place shown (free space, `dbio map`),
/// and a data set already there reused, or replaced only when the user says so. `adopt`:
/// a test takes an existing data set's block size and file count (it has no other reason
/// to choose them); a job keeps its own.
fn data_set_questions(
    ask: &Ask,
    base: &RunArgs,
    default_size: &str,
    sized: bool,
    adopt: bool,
) -> Result<Answers> {
    loop {
        let target = ask.text(
            "Where should the data set go?",
            "a directory on the storage you want to measure (made if its parent exists); dbio writes only its own files there",
            &value_of(base, "target"),
            |t: &str| {
                crate::dataset::check_target_dir(Path::new(t)).map_err(|e| e.to_string())
            },
        )?;
        let place = place::look(Path::new(&target), base.block_size);
        for line in &place.lines {
            stderr_line!("  {line}");
        }
        if !ask.confirm("Put the data set there?", "no asks for another place", true)? {
            continue;
        }
        let mut answers: Answers = vec![("target", target.clone())];
        if !sized {
            return Ok(answers);
        }
        let mut a = base.clone();
        if let (true, Some(e)) = (adopt, place.existing) {
            answers.push(("block-size", size_label(e.block_size)));
            answers.push(("files", e.files.to_string()));
            apply(&mut a, &answers)?;
        }
        let reuse = place
            .existing
            .filter(|e| e.block_size == a.block_size && e.files == a.files);
        let (default, reason) = match reuse {
            Some(e) => (
                size_label(e.size),
                "the size of the data set already there: it is reused, not made again".to_string(),
            ),
            None if a.source("size") != Source::Default => (
                value_of(&a, "size"),
                "the job file's size; for figures that count, several times the storage's cache"
                    .to_string(),
            ),
            None => (
                default_size.to_string(),
                format!(
                    "{default_size} is made in seconds; for figures that count, several times the storage's cache"
                ),
            ),
        };
        let free = place.free;
        let size = ask.text(
            "How big should the data set be?",
            &reason,
            &default,
            move |t: &str| {
                let bytes = crate::options::positive_size(t)?;
                match free {
                    Some(f) if bytes > f => Err(format!(
                        "only {} are free there; a smaller size, or another place",
                        human_bytes(f)
                    )),
                    _ => Ok(()),
                }
            },
        )?;
        answers.push(("size", size));
        apply(&mut a, &answers)?;
        let spec = crate::options::check::data_set(&a)?;
        if let Some(e) = place.existing
            && (e.size, e.block_size, e.files) != (spec.size, spec.block_size, spec.files)
        {
            let replace = ask.confirm(
                &format!(
                    "{target} holds a data set of {} (block {}, {} files), this run needs {} (block {}, {} files); replace it?",
                    size_label(e.size),
                    size_label(e.block_size),
                    e.files,
                    size_label(spec.size),
                    size_label(spec.block_size),
                    spec.files
                ),
                "yes removes its files first and makes the new one; no asks again",
                false,
            )?;
            if !replace {
                continue;
            }
            answers.push(("fresh", "true".into()));
        }
        return Ok(answers);
    }
}

/// Option `name`'s value in `a` when a job file set it, else `default`.
fn value_of_or(a: &RunArgs, name: &str, default: &str) -> String {
    match a.source(name) {
        Source::Default => default.to_string(),
        _ => value_of(a, name),
    }
}

/// "Does my storage meet these requirements?": a shipped example job, or classes made from
/// a few questions each; the data set and the duration asked as for a test.
fn requirements(ask: &Ask) -> Result<Prepared> {
    let mut labels: Vec<String> = EXAMPLES
        .iter()
        .map(|e| format!("{} ({})", e.label, e.file))
        .collect();
    labels.push("My own: a few questions per I/O class".into());
    let pick = ask.choose(
        "Which requirements?",
        "an example shows the form; yours say what your database needs",
        &labels,
        0,
    )?;
    let (text, origin) = match EXAMPLES.get(pick) {
        Some(e) => (e.text.to_string(), e.file),
        None => (own_classes(ask)?, "your classes"),
    };
    let job = crate::options::job::parse(&text, origin)?;
    let mut base = RunArgs::defaults(None);
    job.apply(&mut base)?;
    let mut answers = data_set_questions(ask, &base, SIZE, true, false)?;
    answers.push((
        "duration",
        duration_question(ask, &value_of_or(&base, "duration", DURATION))?,
    ));
    let mut args = base;
    apply(&mut args, &answers)?;
    let cfg = crate::options::check::run_config_with(&args, Some(job))?;
    crate::options::environment::check(&cfg)?;
    let job_text = crate::options::save::classes_job_file(
        &cfg,
        &args,
        &format!("Requirements from {origin}, made by `dbio wizard`"),
    );
    Ok(Prepared {
        job_text,
        command: "dbio run --job FILE (the job file, saved next)".into(),
        file_stem: "dbio-requirements".into(),
        target: cfg.dataset.target.clone(),
        form: Form::Classes,
    })
}

/// Classes with limits from a few questions each, as a job file's text.
fn own_classes(ask: &Ask) -> Result<String> {
    let labels: Vec<String> = NEEDS.iter().map(|n| n.label.to_string()).collect();
    let chosen = ask.choose_many(
        "Which I/O does your database need? (space ticks, Enter goes on)",
        "an OLTP database reads single blocks and commits; add what else its busy hour does",
        &labels,
        &[0, 1],
    )?;
    let mut text = String::new();
    for i in chosen {
        let n = &NEEDS[i];
        let rate = ask.text(
            &format!("{}: how many {} per second?", n.label, n.per_second),
            "the rate at the busiest hour (an AWR report's Load Profile has it)",
            n.rate,
            class_check(n.event, "rate"),
        )?;
        let sessions = ask.text(
            &format!("{}: how many sessions issue them?", n.label),
            "sessions share the rate; more sessions let more requests wait at once",
            n.sessions,
            class_check(n.event, "sessions"),
        )?;
        let p99 = ask.text(
            &format!(
                "{}: the most a request may take, at the 99th percentile?",
                n.label
            ),
            "the latency your users can live with, e.g. 10ms for single-block reads",
            n.p99,
            class_check(n.event, "limits.p99"),
        )?;
        let name = n.label.split(" (").next().unwrap_or(n.label);
        text.push_str(&format!(
            "[[class]]\nname = \"{name}\"\nevent = \"{}\"\nsessions = {sessions}\nrate = {rate}\narrival = \"poisson\"\n[class.limits]\np99 = \"{p99}\"\n\n",
            n.event.name()
        ));
    }
    Ok(text)
}

/// A check of a class's `key` by the job file parser itself.
fn class_check(
    event: crate::workload::Event,
    key: &'static str,
) -> impl Fn(&str) -> std::result::Result<(), String> + Clone {
    move |text| {
        let value = match key {
            "limits.p99" => format!("{text:?}"),
            _ if text.parse::<f64>().is_ok() => text.to_string(),
            _ => return Err(format!("'{text}' is not a number")),
        };
        let (table, key) = match key.split_once('.') {
            Some((_, k)) => ("[class.limits]\n", k),
            None => ("", key),
        };
        let snippet = format!(
            "[[class]]\nevent = \"{}\"\n{table}{key} = {value}\n",
            event.name()
        );
        crate::options::job::parse(&snippet, "answer")
            .map(|_| ())
            .map_err(|e| {
                let e = e.to_string();
                match e.split_once("': ") {
                    Some((_, why)) => why.to_string(),
                    None => e,
                }
            })
    }
}

/// The job file's name: asked, a new file (dbio never writes over one).
fn job_file_name(ask: &Ask, stem: &str) -> Result<PathBuf> {
    let default = (1..)
        .map(|n| match n {
            1 => format!("./{stem}.toml"),
            n => format!("./{stem}-{n}.toml"),
        })
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .expect("a free name");
    let name = ask.text(
        "Save the job file as?",
        "a new file (dbio never writes over one); `dbio run --job FILE` runs it again",
        &default,
        |t: &str| {
            let p = Path::new(t);
            if t.is_empty() {
                return Err("a file name, e.g. ./my-job.toml".into());
            }
            if std::fs::symlink_metadata(p).is_ok() {
                return Err(format!(
                    "{t} exists; dbio never writes over a file — give another name"
                ));
            }
            match p.parent() {
                Some(d) if !d.as_os_str().is_empty() && !d.is_dir() => {
                    Err(format!("{} is not a directory", d.shown()))
                }
                _ => Ok(()),
            }
        },
    )?;
    Ok(PathBuf::from(name))
}

/// After the run: remove the data set now (as `dbio clean` does), or keep it.
fn offer_clean(ask: &Ask, target: &Path, db: Option<&Path>) -> Result<()> {
    if !target.is_dir() {
        return Ok(());
    }
    let remove = ask.confirm(
        &format!("Remove the data set in {} now?", target.shown()),
        &format!(
            "no keeps it for the next run (making it again takes time); `dbio clean {}` removes it later",
            shell_word(&target.display().to_string())
        ),
        false,
    )?;
    if remove {
        crate::app::clean(
            &crate::cli::CleanArgs {
                paths: vec![target.to_path_buf()],
                options: crate::options::cli::CleanOptions(RunArgs::defaults_for(
                    crate::options::Command::Clean,
                )),
            },
            db,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_and_the_job_file_describe_the_same_run() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("dbio-data").display().to_string();
        let answers: Answers = vec![
            ("target", target),
            ("size", "64M".into()),
            ("sync", "true".into()),
            ("sessions", "3".into()),
            ("duration", "2s".into()),
            ("seed", "42".into()),
        ];
        let mut a = RunArgs::defaults(Some(Test::ReadIops));
        apply(&mut a, &answers).unwrap();
        let cfg = crate::options::check::run_config(&a).unwrap();
        let job = crate::options::save::job_file(&cfg, &a).unwrap();
        // The command, parsed as dbio parses it, writes the same job file.
        let line = command_line(Test::ReadIops, &answers);
        let words: Vec<&str> = line.split(' ').collect();
        let cli = crate::cli::Cli::parse_with_sources(words).unwrap();
        let crate::cli::Command::Run(typed) = cli.command else {
            panic!("not a run: {line}");
        };
        let again = crate::options::check::run_config(&typed.0).unwrap();
        assert_eq!(
            crate::options::save::job_file(&again, &typed.0).unwrap(),
            job
        );
        // The job file, read back, is the same run.
        let parsed = crate::options::job::parse(&job, "wizard.toml").unwrap();
        let mut from_job = RunArgs::defaults(None);
        parsed.apply(&mut from_job).unwrap();
        let c = crate::options::check::run_config_with(&from_job, Some(parsed)).unwrap();
        assert_eq!(
            (
                c.seed,
                c.dataset.size,
                c.sessions,
                c.duration,
                c.classes[0].event
            ),
            (
                42,
                64 << 20,
                3,
                std::time::Duration::from_secs(2),
                crate::workload::Event::DbFileSequentialRead
            )
        );
    }

    #[test]
    fn each_test_runs_in_the_form_chosen() {
        use crate::engine::Submission;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("dbio-data").display().to_string();
        for goal in GOALS {
            let Some(test) = goal.test else { continue };
            for sync in [false, true] {
                // The answers the questions give for this form (as `a_test` pushes them).
                let mut answers: Answers = vec![("target", target.clone())];
                if test.uses_data_files() {
                    answers.push(("size", "64M".into()));
                }
                if sync {
                    answers.push(("sync", "true".into()));
                }
                answers.push(("sessions", "8".into()));
                answers.push(("duration", "2s".into()));
                answers.push(("seed", "7".into()));
                let run = test_run(test, answers).unwrap();
                let want = if sync {
                    Submission::Sync
                } else {
                    Submission::Async
                };
                let Form::Test { cfg, .. } = &run.form else {
                    panic!("{test:?}: not a test");
                };
                // The run made.
                assert_eq!(cfg.submission, want, "{test:?} sync={sync}");
                if test.uses_redo() {
                    assert_eq!(cfg.redo.submission, want, "{test:?} sync={sync}");
                }
                // The command printed, parsed as dbio parses it.
                let words: Vec<&str> = run.command.split(' ').collect();
                let cli = crate::cli::Cli::parse_with_sources(words).unwrap();
                let crate::cli::Command::Run(typed) = cli.command else {
                    panic!("not a run: {}", run.command);
                };
                assert_eq!(typed.0.sync, sync, "{}", run.command);
                // The job file printed and saved, read back.
                let job = crate::options::job::parse(&run.job_text, "wizard.toml").unwrap();
                let mut a = RunArgs::defaults(None);
                job.apply(&mut a).unwrap();
                let c = crate::options::check::run_config_with(&a, Some(job)).unwrap();
                // An event that is sync or async by definition (log file sync) keeps it.
                for class in c
                    .classes
                    .iter()
                    .filter(|c| c.event.fixed_submission().is_none())
                {
                    assert_eq!(class.submission, want, "sync={sync}\n{}", run.job_text);
                }
                if test.uses_redo() {
                    assert_eq!(c.redo.submission, want, "{}", run.job_text);
                }
            }
        }
    }

    #[test]
    fn an_example_job_is_written_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        for e in EXAMPLES {
            let job = crate::options::job::parse(e.text, e.file).unwrap();
            let mut a = RunArgs::defaults(None);
            job.apply(&mut a).unwrap();
            let t = dir.path().join("d").display().to_string();
            apply(&mut a, &vec![("target", t), ("size", "64M".into())]).unwrap();
            let cfg = crate::options::check::run_config_with(&a, Some(job)).unwrap();
            let text = crate::options::save::classes_job_file(&cfg, &a, "test");
            let back = crate::options::job::parse(&text, "back.toml")
                .unwrap_or_else(|err| panic!("{err}\n{text}"));
            let mut b = RunArgs::defaults(None);
            back.apply(&mut b).unwrap();
            let again = crate::options::check::run_config_with(&b, Some(back)).unwrap();
            assert_eq!(again.classes.len(), cfg.classes.len(), "{text}");
            for (x, y) in again.classes.iter().zip(&cfg.classes) {
                assert_eq!(
                    (
                        &x.name,
                        x.event,
                        x.sizes.label(),
                        x.sessions,
                        x.rate,
                        x.poisson,
                        &x.limits,
                        x.batch,
                        x.spill
                    ),
                    (
                        &y.name,
                        y.event,
                        y.sizes.label(),
                        y.sessions,
                        y.rate,
                        y.poisson,
                        &y.limits,
                        y.batch,
                        y.spill
                    ),
                    "{text}"
                );
            }
            assert_eq!(
                (
                    again.seed,
                    again.dataset.size,
                    again.dataset.block_size,
                    again.duration,
                    again.redo.block,
                    again.redo.file_size
                ),
                (
                    cfg.seed,
                    cfg.dataset.size,
                    cfg.dataset.block_size,
                    cfg.duration,
                    cfg.redo.block,
                    cfg.redo.file_size
                )
            );
        }
    }

    #[test]
    fn class_answers_are_checked_by_the_job_parser() {
        let rate = class_check(crate::workload::Event::DbFileSequentialRead, "rate");
        assert!(rate("500").is_ok());
        assert!(rate("-5").is_err());
        assert!(rate("fast").unwrap_err().contains("not a number"));
        let sessions = class_check(crate::workload::Event::LogFileSync, "sessions");
        assert!(sessions("8").is_ok());
        assert!(sessions("0").unwrap_err().contains("1 to 4096"));
        let p99 = class_check(crate::workload::Event::LogFileSync, "limits.p99");
        assert!(p99("5ms").is_ok());
        assert!(p99("5").unwrap_err().contains("no unit"));
    }
}
