//! What `dbio doctor` found and what `dbio clean --stale` did, each made once as a value —
//! printed with `--json` as it is (`dbio.doctor.v1`, `dbio.clean-stale.v1`; docs/outputs.md)
//! — and as a report of it: the same figures, in words.

use serde::Serialize;

use crate::report::sections::{Block, Item, Level, Report, Section};
use crate::units::{human_bytes, shell_word, thousands};

/// What `dbio doctor` found.
#[derive(Debug, Serialize)]
pub struct Checkup {
    pub schema: &'static str,
    /// Other dbio processes running now.
    pub processes: Vec<ProcessJson>,
    pub data_sets: Vec<DataSetJson>,
    /// Data sets the results store registered whose directory (or manifest) is gone.
    pub gone: Vec<GoneJson>,
    /// Directories where a first preparation was killed: only its lock file is left.
    pub unfinished: Vec<String>,
    /// Bytes on disk of the data sets found.
    pub data_set_bytes: u64,
    pub run_dirs: Vec<RunsJson>,
    /// Results directories whose command is going on now.
    pub running: Vec<RunningJson>,
    /// Results directories of commands that were killed before they finished.
    pub killed: Vec<KilledJson>,
    /// Paths given that hold nothing of dbio's, or do not exist.
    pub notes: Vec<String>,
    /// Mount points a killed file system sweep left.
    pub mounts: Vec<String>,
    /// What commands made or changed outside their results directories.
    pub leftovers: Vec<LeftoverJson>,
    /// Why the results store cannot be read, if it cannot.
    pub store_problem: Option<String>,
    /// What to do, one piece of advice each; empty when nothing needs attention.
    pub needs_attention: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct ProcessJson {
    pub pid: u32,
    /// Stopped (Ctrl-Z, SIGSTOP): it holds its locks until resumed.
    pub stopped: bool,
    /// Its command line, passwords left out.
    pub command: String,
}

#[derive(Debug, Serialize)]
pub struct DataSetJson {
    pub path: String,
    pub bytes: u64,
    pub data_files: usize,
    pub redo_files: usize,
    /// The manifest's state: `ready` or `preparing`.
    pub state: &'static str,
    /// `writing` or `reading` while a run holds it, else null.
    pub in_use: Option<&'static str>,
    /// Who holds it now.
    pub holders: Vec<String>,
    /// Listed files that are missing (the next run recreates them).
    pub missing: usize,
    /// What the results store knows of it: when it was last used, by which test and run.
    pub last_used_at: Option<String>,
    pub last_test: Option<String>,
    pub last_run_id: Option<i64>,
    /// It holds the files of a killed preparation (stale).
    pub killed_preparation: bool,
    /// Temporary files of killed runs (stale).
    pub stray_temp_files: Vec<String>,
    /// What in its manifest is not dbio's: dbio does not act on it.
    pub manifest_changes: Vec<String>,
    /// Listed names where a file that is not dbio's is now: left alone.
    pub left_alone: Vec<Why>,
}

/// A path and why it is as it is.
#[derive(Debug, Serialize)]
pub struct Why {
    pub path: String,
    pub why: String,
}

#[derive(Debug, Serialize)]
pub struct GoneJson {
    pub path: String,
    pub disk_bytes: u64,
    pub last_used_at: String,
}

#[derive(Debug, Serialize)]
pub struct RunsJson {
    pub path: String,
    pub runs: usize,
    pub bytes: u64,
}

#[derive(Debug, Serialize)]
pub struct RunningJson {
    pub path: String,
    /// What made it: a test's name, `sweep`, `matrix`, `calibrate` or `mem`.
    pub kind: String,
    pub holders: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct KilledJson {
    pub path: String,
    /// What made it, as in [`RunningJson::kind`].
    pub kind: String,
    pub started_at: String,
    /// Its points' run directories (null for a kind without points).
    pub point_dirs: Option<usize>,
    /// dbio's own files in it.
    pub own_files: usize,
    /// What in it is not dbio's: it stays, and so does the directory.
    pub left_alone: Vec<Why>,
}

#[derive(Debug, Serialize)]
pub struct LeftoverJson {
    pub what: String,
    pub kind: String,
    /// The kind in words.
    pub description: &'static str,
    /// The dbio process that made it, and whether it still runs (else it is stale).
    pub pid: u32,
    pub running: bool,
    pub noted_at: String,
    /// The command that undoes it by hand.
    pub undo: String,
}

/// What a registered results directory of `kind` is, as words: "a run of read-iops",
/// "a sweep", "a dbio mem run".
pub(super) fn what(kind: &str) -> String {
    match kind {
        "sweep" | "matrix" | "calibrate" => format!("a {kind}"),
        crate::database::compare::DIR_KIND => "a compare through a database".to_string(),
        "mem" => "a dbio mem run".to_string(),
        test => format!("a run of {test}"),
    }
}

/// The report of a checkup: the other processes, then each place looked at, item by item
/// with what is wrong in it under it, then what to do.
pub fn checkup(c: &Checkup) -> Report {
    let mut lead = Section::new("processes", "Other dbio processes").level(Level::Lead);
    if c.processes.is_empty() {
        lead.push(Block::Note("Other dbio processes: none".into()));
    } else {
        lead.push(Block::Note(format!(
            "Other dbio processes ({}; they compete for the same storage and CPUs while a test runs):",
            c.processes.len()
        )));
        lead.push(Block::Outline(
            (c.processes.iter())
                .map(|p| {
                    let stopped = if p.stopped {
                        format!(
                            " (STOPPED: it holds its locks, perhaps the results store, until resumed: `fg` in its terminal or `kill -CONT {}`)",
                            p.pid
                        )
                    } else {
                        String::new()
                    };
                    Item::new(format!("pid {}{stopped}: {}", p.pid, p.command))
                })
                .collect(),
        ));
    }
    let mut sections = vec![
        lead,
        Section::new("data-sets", "Data sets").with(Block::Outline(data_sets(c))),
        Section::new("run-dirs", "Run directories").with(Block::Outline(run_dirs(c))),
    ];
    if !c.mounts.is_empty() {
        sections.push(
            Section::new("mounts", "Mounts").with(Block::Outline(
                (c.mounts.iter())
                    .map(|m| {
                        Item::new(format!(
                            "{m}: STALE: left mounted by a file system sweep that was killed"
                        ))
                    })
                    .collect(),
            )),
        );
    }
    if !c.leftovers.is_empty() {
        let items = (c.leftovers.iter()).map(|l| {
            Item::new(if l.running {
                format!(
                    "{}: {}, in use by dbio pid {} (running)",
                    l.what, l.description, l.pid
                )
            } else {
                format!(
                    "{}: STALE: {} left by dbio pid {} (gone), noted {}; undo by hand: {}",
                    l.what, l.description, l.pid, l.noted_at, l.undo
                )
            })
        });
        sections.push(
            Section::new(
                "leftovers",
                "Made or changed outside the results directories",
            )
            .with(Block::Outline(items.collect())),
        );
    }
    if let Some(problem) = &c.store_problem {
        sections.push(
            Section::new("store", "Results store").with(Block::Outline(vec![Item::new(format!(
                "it cannot be read: {problem}"
            ))])),
        );
    }
    let verdict = if c.needs_attention.is_empty() {
        "Nothing needs attention.".to_string()
    } else {
        format!("Needs attention: {}.", c.needs_attention.join("; "))
    };
    sections.push(Section::new("verdict", "").with(Block::Note(verdict)));
    Report {
        title: String::new(),
        sections,
    }
}

fn data_sets(c: &Checkup) -> Vec<Item> {
    let mut items = Vec::new();
    if c.data_sets.is_empty() && c.gone.is_empty() && c.unfinished.is_empty() {
        items.push(Item::new("none found"));
    }
    for u in &c.unfinished {
        items.push(Item::new(format!(
            "{u}: STALE: a first preparation was killed here — no data set, only its lock file"
        )));
    }
    for d in &c.data_sets {
        let mut item = Item::new(describe(d));
        if d.killed_preparation {
            item.details.push(format!(
                "STALE: files of a killed preparation ({} on disk)",
                human_bytes(d.bytes)
            ));
        }
        for t in &d.stray_temp_files {
            item.details
                .push(format!("STALE: temporary file of a killed run: {t}"));
        }
        for r in &d.manifest_changes {
            item.details.push(format!(
                "CHANGED: the manifest was changed: {r}; dbio does not act on this data set (remove its files yourself)"
            ));
        }
        for f in &d.left_alone {
            item.details
                .push(format!("LEFT ALONE: {} is listed, but {}", f.path, f.why));
        }
        items.push(item);
    }
    for g in &c.gone {
        items.push(Item::new(format!(
            "{}: gone (moved or deleted by hand); it held {} when last used on {} — `dbio clean {}` forgets it",
            g.path,
            human_bytes(g.disk_bytes),
            g.last_used_at,
            shell_word(&g.path)
        )));
    }
    if c.data_sets.len() > 1 {
        items.push(Item::new(format!(
            "in all: {} on disk",
            human_bytes(c.data_set_bytes)
        )));
    }
    items
}

/// A data set's line: its files, size, state and what the results store knows of it.
fn describe(d: &DataSetJson) -> String {
    let mut parts = vec![format!("{} data file(s)", d.data_files)];
    if d.redo_files > 0 {
        parts.push(format!("{} redo log(s)", d.redo_files));
    }
    let holders = d.holders.join(", ");
    let state = match d.in_use {
        Some("writing") => format!("in use by a run that writes: {holders}"),
        Some(_) => format!("in use by a run that reads: {holders}"),
        None if d.state == "preparing" => {
            "incomplete (its preparation was interrupted; the next run recreates it)".to_string()
        }
        None if d.missing > 0 => format!(
            "{} listed file(s) missing (the next run recreates them)",
            d.missing
        ),
        None => "ready, not in use".to_string(),
    };
    let known = match (&d.last_used_at, &d.last_test) {
        (Some(at), Some(test)) if test == "prepare" && d.state == "ready" => {
            format!("; prepared {at}")
        }
        (Some(at), Some(test)) => format!(
            "; last used {at} by {test}{}",
            d.last_run_id.map_or_else(
                || " (that run did not end)".to_string(),
                |id| format!(" (run {id})")
            )
        ),
        _ => String::new(),
    };
    format!(
        "{}: {} on disk in {}, {state}{known}",
        d.path,
        human_bytes(d.bytes),
        parts.join(", "),
    )
}

fn run_dirs(c: &Checkup) -> Vec<Item> {
    let mut items = Vec::new();
    if c.run_dirs.is_empty() && c.running.is_empty() && c.killed.is_empty() {
        items.push(Item::new("none found"));
    }
    for r in &c.run_dirs {
        items.push(Item::new(format!(
            "{}: {} run(s), {}",
            r.path,
            thousands(r.runs as u64),
            human_bytes(r.bytes)
        )));
    }
    for r in &c.running {
        let who = r.holders.join(", ");
        items.push(Item::new(format!(
            "{}: {} going on now{}",
            r.path,
            what(&r.kind),
            if who.is_empty() {
                String::new()
            } else {
                format!(" ({who})")
            }
        )));
    }
    for k in &c.killed {
        let (points, before) = match k.point_dirs {
            Some(n) => (
                format!("{} point run directory(ies) and ", thousands(n as u64)),
                "finished",
            ),
            None => (String::new(), "wrote its results"),
        };
        let mut item = Item::new(format!(
            "{}: STALE: {} started {} was killed before it {before} ({points}{} file(s) of dbio's in it)",
            k.path,
            what(&k.kind),
            k.started_at,
            k.own_files
        ));
        for f in &k.left_alone {
            item.details.push(format!(
                "LEFT ALONE: {} is not dbio's ({}); the directory stays while it is there",
                f.path, f.why
            ));
        }
        items.push(item);
    }
    for n in &c.notes {
        items.push(Item::new(format!("note: {n}")));
    }
    items
}

/// What `dbio clean --stale` did.
#[derive(Debug, Serialize)]
pub struct Cleaned {
    pub schema: &'static str,
    /// One a thing repaired or left, in the order done.
    pub actions: Vec<Action>,
}

/// One thing `dbio clean --stale` removed, restored or left.
#[derive(Debug, Serialize)]
pub struct Action {
    pub path: String,
    /// What was done, or (`left`) why it was left and how to undo it by hand.
    pub done: String,
    pub left: bool,
}

/// The report of `dbio clean --stale`: one line a thing, `path: what was done`; a line
/// saying so when there was nothing stale.
pub fn cleaned(c: &Cleaned, nothing_stale: bool) -> Report {
    let mut lines: Vec<String> = (c.actions.iter())
        .map(|a| format!("{}: {}", a.path, a.done))
        .collect();
    if nothing_stale {
        lines.push("nothing stale found".into());
    }
    Report::lines(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> Checkup {
        Checkup {
            schema: "dbio.doctor.v1",
            processes: Vec::new(),
            data_sets: Vec::new(),
            gone: Vec::new(),
            unfinished: Vec::new(),
            data_set_bytes: 0,
            run_dirs: Vec::new(),
            running: Vec::new(),
            killed: Vec::new(),
            notes: Vec::new(),
            mounts: Vec::new(),
            leftovers: Vec::new(),
            store_problem: None,
            needs_attention: Vec::new(),
        }
    }

    #[test]
    fn a_clean_machine_reads_as_before() {
        let text = crate::report::render(&checkup(&empty()), crate::report::Format::Text);
        assert_eq!(
            text,
            "Other dbio processes: none\n\nData sets\n  none found\n\nRun directories\n  none found\n\nNothing needs attention.\n"
        );
    }

    #[test]
    fn a_stale_data_set_has_its_details_under_it() {
        let mut c = empty();
        c.data_sets.push(DataSetJson {
            path: "/d\u{1b}x".into(),
            bytes: 1 << 20,
            data_files: 2,
            redo_files: 0,
            state: "ready",
            in_use: None,
            holders: Vec::new(),
            missing: 0,
            last_used_at: Some("2026-01-01T00:00:00Z".into()),
            last_test: Some("read-iops".into()),
            last_run_id: Some(7),
            killed_preparation: false,
            stray_temp_files: vec!["/d/t.tmp".into()],
            manifest_changes: Vec::new(),
            left_alone: Vec::new(),
        });
        c.needs_attention.push("do this".into());
        let text = crate::report::render(&checkup(&c), crate::report::Format::Text);
        assert!(
            text.contains("\nData sets\n  /d\\x1bx: 1.0 MiB on disk in 2 data file(s), ready, not in use; last used 2026-01-01T00:00:00Z by read-iops (run 7)\n    STALE: temporary file of a killed run: /d/t.tmp\n"),
            "{text}"
        );
        assert!(text.ends_with("\nNeeds attention: do this.\n"), "{text}");
        let md = crate::report::render(&checkup(&c), crate::report::Format::Md);
        assert!(md.contains("\n## Data sets\n\n- /d\\\\x1bx: "), "{md}");
        assert!(md.contains("\n  - STALE: temporary file"), "{md}");
    }
}
