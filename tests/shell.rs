//! `dbio completions SHELL` and `dbio man` (issue 14): made from the real command line, so
//! every subcommand and run option is in them; the manual page renders with `man`.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::util::{Env, skip};

/// The subcommands `dbio --help` lists.
fn subcommands(env: &Env) -> Vec<String> {
    let out = env.bare().arg("--help").out();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let list: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect();
    assert!(list.len() >= 18, "{help}");
    list
}

#[test]
fn every_shell_completes_the_subcommands_and_run_options() {
    let env = Env::new();
    let commands = subcommands(&env);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = env.cmd("completions").arg(shell).out();
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        // fish names a long option `-l sessions`; the others `--sessions`.
        for option in ["sessions", "io-mode"] {
            assert!(
                script.contains(&format!("--{option}")) || script.contains(&format!("-l {option}")),
                "{shell}: no --{option}"
            );
        }
        for c in &commands {
            assert!(script.contains(c.as_str()), "{shell}: no {c}");
        }
    }
    let out = env.cmd("completions").arg("tcsh").out();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
}

#[test]
fn bash_loads_the_completion_script() {
    if Command::new("bash").arg("--version").output().is_err() {
        return skip("no bash");
    }
    let env = Env::new();
    let script = env.join("dbio.bash");
    std::fs::write(&script, env.cmd("completions").arg("bash").out().stdout).unwrap();
    // Completing `dbio run --sess` offers --sessions.
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {}; COMP_WORDS=(dbio run --sess); COMP_CWORD=2; _dbio dbio --sess run; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .unwrap();
    let offered = String::from_utf8_lossy(&out.stdout);
    assert!(
        offered.lines().any(|l| l == "--sessions"),
        "{offered}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_manual_page_has_every_command_and_renders() {
    let env = Env::new();
    let out = env.cmd("man").out();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains("\n.TH dbio 1 "), "{}", &page[..200]);
    for c in subcommands(&env) {
        assert!(
            page.contains(&format!(".SH \"DBIO {}\"", c.to_uppercase())),
            "no section for {c}"
        );
    }
    assert!(page.contains("\\-\\-sessions") && page.contains(".SH FILES"));
    // `dbio man | man -l -`, as the README says; else groff; else the roff structure above.
    let render = |cmd: &str, args: &[&str]| -> Option<(String, String)> {
        let mut child = Command::new(cmd)
            .args(args)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(page.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some((
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    };
    let rendered = render("man", &["--warnings", "-l", "-"])
        .or_else(|| render("groff", &["-k", "-man", "-Tutf8", "-ww"]));
    match rendered {
        Some((text, warnings)) => {
            assert!(warnings.trim().is_empty(), "warnings: {warnings}");
            let plain: String = text.replace(['\u{2010}', '\u{2212}'], "-");
            assert!(
                plain.contains("DBIO RUN") && plain.contains("--sessions"),
                "{plain}"
            );
        }
        None => skip("neither man nor groff here to render the page"),
    }
}

/// The command between the backticks of `text` that starts with `dbio `, as words (the
/// paths here need no quoting).
fn hint(text: &str, starts: &str) -> Vec<String> {
    let at = text
        .find(&format!("`dbio {starts}"))
        .unwrap_or_else(|| panic!("no `dbio {starts}` hint in: {text}"));
    let rest = &text[at + 1..];
    let command = &rest[..rest.find('`').expect("a closing backtick")];
    command
        .split_whitespace()
        .skip(1)
        .map(String::from)
        .collect()
}

#[test]
fn hints_work_as_printed() {
    let env = Env::new();
    let ok = |args: &[String]| env.bare().args(args).ok();
    let words = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    ok(&words(&[
        "prepare",
        "--size",
        "32M",
        "--files",
        "2",
        "--block-size",
        "16K",
        "-q",
    ]));
    // A data set without verify headers: `dbio verify` says how to make one that has them,
    // as it is (size, block size, files).
    let out = env.verify().out();
    assert_eq!(out.status.code(), Some(2));
    let prepare = hint(&String::from_utf8_lossy(&out.stderr), "prepare");
    assert!(
        prepare.join(" ")
            == "prepare --verify --fresh --target ./dbio-data --size 32M --block-size 16K --files 2",
        "{prepare:?}"
    );
    ok(&prepare);
    ok(&words(&["verify"]));
    // A run's "remove with `dbio clean ...`".
    let out = env
        .run("read-iops")
        .size("32M")
        .files(2)
        .block_size("16K")
        .sessions(1)
        .duration("1s")
        .warmup("0s")
        .arg("--json")
        .out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let clean = hint(&String::from_utf8_lossy(&out.stderr), "clean");
    ok(&clean);
    assert!(!env.join("dbio-data").exists());
}

#[test]
fn one_exit_status_table_in_help_man_page_and_docs() {
    // `dbio --help`'s footer: "  CODE  meaning" lines after "Exit status:".
    let env = Env::new();
    let help = String::from_utf8(env.output(&["--help"]).stdout).unwrap();
    let footer = help
        .split("Exit status:\n")
        .nth(1)
        .expect("an exit status footer");
    let from_help: Vec<(String, String)> = footer
        .lines()
        .filter_map(|l| {
            let (code, meaning) = l.trim_start().split_once("  ")?;
            code.parse::<i32>().ok()?;
            Some((code.to_string(), meaning.to_string()))
        })
        .collect();
    let codes: Vec<&str> = from_help.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(codes, ["0", "1", "2", "3", "4", "130"], "{footer}");
    // The man page's EXIT STATUS section lists the same.
    let man = String::from_utf8(env.output(&["man"]).stdout).unwrap();
    // Its EXAMPLES come before it, each a command dbio has, with what it does.
    let examples = man
        .split(".SH EXAMPLES")
        .nth(1)
        .and_then(|s| s.split(".SH").next())
        .expect("an EXAMPLES section");
    let commands: Vec<&str> = examples
        .lines()
        .filter_map(|l| {
            l.strip_prefix("\\fBdbio ")
                .or_else(|| l.strip_prefix("\\fBdbio\\ "))
        })
        .collect();
    assert!(commands.len() >= 5, "{examples}");
    for c in &commands {
        let name = c.split([' ', '\\']).next().unwrap();
        let help = env.output(&[name, "--help"]);
        assert!(help.status.success(), "dbio {name}: {examples}");
    }
    let section = man
        .split(".SH \"EXIT STATUS\"")
        .nth(1)
        .expect("an EXIT STATUS section");
    for (code, _) in &from_help {
        assert!(
            section.contains(&format!("\\fB{code}\\fR")),
            "{code}: {section}"
        );
    }
    // docs/commands.md's table says the same, code by code.
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md")).unwrap();
    let table = docs
        .split("## Exit status")
        .nth(1)
        .expect("docs: ## Exit status");
    let from_docs: Vec<(String, String)> = table
        .lines()
        .skip_while(|l| !l.starts_with("| status"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[2].to_string())
        })
        .collect();
    assert_eq!(from_docs.len(), from_help.len(), "{from_docs:?}");
    for ((c1, m1), (c2, m2)) in from_help.iter().zip(&from_docs) {
        assert_eq!(c1, c2);
        // The docs may say more; each starts with what the program says first.
        let head = m1.split(':').next().unwrap();
        assert!(m2.starts_with(head), "{c1}: {m1:?} vs {m2:?}");
    }
}
