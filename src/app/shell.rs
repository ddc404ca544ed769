//! What a shell and `man` need, made from the real command line ([`crate::cli::Cli`]) so that
//! they never drift from what dbio parses: completion scripts (`dbio completions SHELL`,
//! clap_complete) and the manual page (`dbio man`, clap_mangen).

use std::io::Write;

use clap::CommandFactory;
use clap_mangen::roff::{Roff, bold, roman};

use crate::cli::Cli;
use crate::error::{Error, Result};

/// The completion script of `shell` for `dbio`, as text.
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "dbio", &mut out);
    out
}

/// The manual page `dbio(1)` in roff: the program, its global options and commands, then a
/// section per command with its synopsis, description and options (under their headings).
pub fn man_page() -> Result<Vec<u8>> {
    let fail = |e: std::io::Error| Error::other(format!("cannot render the manual page: {e}"));
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let top = clap_mangen::Man::new(cmd.clone()).manual("dbio manual");
    let mut page = Vec::new();
    top.render_title(&mut page).map_err(fail)?;
    top.render_name_section(&mut page).map_err(fail)?;
    top.render_synopsis_section(&mut page).map_err(fail)?;
    top.render_description_section(&mut page).map_err(fail)?;
    top.render_options_section(&mut page).map_err(fail)?;
    let subs: Vec<&clap::Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    // The commands, each described in its own section below (one page, not one per command).
    let mut list = Roff::new();
    list.control("SH", ["COMMANDS"]);
    for sub in &subs {
        list.control("TP", []);
        list.text([bold(format!("dbio {}", sub.get_name()))]);
        list.text([roman(
            sub.get_about().map(|a| a.to_string()).unwrap_or_default(),
        )]);
    }
    list.to_writer(&mut page).map_err(fail)?;
    for sub in subs {
        let mut sub = sub.clone();
        // The global options are described once, above.
        for global in ["db", "help", "version"] {
            if sub.get_arguments().any(|a| a.get_id() == global) {
                sub = sub.mut_arg(global, |a| a.hide(true));
            }
        }
        let name = sub
            .get_bin_name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("dbio {}", sub.get_name()));
        let man = clap_mangen::Man::new(sub);
        let mut part = Vec::new();
        man.render_synopsis_section(&mut part).map_err(fail)?;
        man.render_description_section(&mut part).map_err(fail)?;
        man.render_options_section(&mut part).map_err(fail)?;
        let _ = writeln!(page, ".SH \"{}\"", name.to_uppercase());
        page.extend_from_slice(&demote_sections(&part));
    }
    page.extend_from_slice(FILES.as_bytes());
    let mut examples = Roff::new();
    examples.control("SH", ["EXAMPLES"]);
    for (line, what) in EXAMPLES {
        examples.control("TP", []);
        examples.text([bold(*line)]);
        examples.text([roman(*what)]);
    }
    examples.to_writer(&mut page).map_err(fail)?;
    let mut status = Roff::new();
    status.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in crate::error::EXIT_STATUSES {
        status.control("TP", []);
        status.text([bold((*code as i32).to_string())]);
        status.text([roman(*meaning)]);
    }
    status.control("PP", []);
    status.text([roman(
        "Every command follows this table. Bad input (2) is a command to change: a path dbio cannot use as asked is bad input wherever it is named. An I/O error (4) is storage to look at.",
    )]);
    status.to_writer(&mut page).map_err(fail)?;
    top.render_version_section(&mut page).map_err(fail)?;
    Ok(page)
}

/// A command's own sections become sub-sections of its section: `.SH X` → `.SS X`, and its
/// SYNOPSIS and DESCRIPTION headings go (the synopsis line and the text say it).
fn demote_sections(roff: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(roff);
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        match line.strip_prefix(".SH ") {
            Some("SYNOPSIS" | "DESCRIPTION") => out.push_str(".PP\n"),
            Some(heading) => {
                out.push_str(".SS ");
                out.push_str(heading);
                out.push('\n');
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out.into_bytes()
}

/// The man page's EXAMPLES: what a DBA or a storage engineer types first.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "dbio run read-iops",
        "Random single-block reads as a database's sessions issue them (db file parallel read; --sync: db file sequential read) on a 1 GiB data set in ./dbio-data, kept for the next run.",
    ),
    (
        "dbio run read-iops --target /u02/oradata/dbio --size 20G --duration 5m",
        "The same on the data files' own file system, with a data set larger than the caches.",
    ),
    (
        "dbio run redo --sessions 16",
        "Commits with group commit: log file sync as the sessions wait for it, log file parallel write as LGWR writes.",
    ),
    (
        "dbio sweep read-iops --param sessions=1,4,16,64",
        "One run per value, and where the latency turns.",
    ),
    (
        "dbio run --job /usr/share/doc/dbio/examples/oltp-peak.toml",
        "A job file of classes with requirements: the verdict (PASS or FAIL, exit 3) comes first.",
    ),
    (
        "dbio compare 7 9",
        "Two recorded runs (dbio runs lists them) event by event, each ratio better or worse; run directories work too.",
    ),
    (
        "dbio map /u02/oradata",
        "What sits under a data file: file system, volumes, partitions, devices, and findings.",
    ),
    (
        "dbio pg compare read-iops --pg-bin /usr/lib/postgresql/15/bin",
        "The test through a throwaway PostgreSQL, then the same I/O without it, side by side.",
    ),
    (
        "dbio clean",
        "Removes the data set a run left in ./dbio-data (dbio doctor names anything else left behind).",
    ),
];

/// Where dbio keeps things, and the environment it reads.
const FILES: &str = r#".SH FILES
.TP
\fB./dbio\-data\fR
The data set a run creates and keeps for the next run (\fB\-\-target\fR); \fBdbio clean\fR removes it.
.TP
\fB./dbio\-runs/\fR
One directory per run: result.json, summary.txt, report.html and CSV exports (\fB\-\-out\fR).
.TP
\fB$XDG_DATA_HOME/dbio/dbio.db\fR (else \fB~/.local/share/dbio/dbio.db\fR)
The results store every run is recorded in (\fB\-\-db\fR, \fBDBIO_DB\fR); \fBdbio runs\fR lists it.
.SH ENVIRONMENT
.TP
\fBDBIO_DB\fR
The results store, as \fB\-\-db\fR.
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_sections_become_sub_sections() {
        let out = demote_sections(b".SH SYNOPSIS\n\\fBdbio run\\fR\n.SH OPTIONS\n.TP\nx\n");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            ".PP\n\\fBdbio run\\fR\n.SS OPTIONS\n.TP\nx\n"
        );
    }
}
