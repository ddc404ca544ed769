//! Live progress (issue 4): drawn on a terminal, absent from pipes and with `--quiet`.

use std::process::Command;

use crate::util::{Env, skip};

/// Runs `dbio args` under a pseudo-terminal (util-linux `script`), returns what the terminal
/// received; None when `script` is not installed.
pub fn under_pty(env: &Env, args: &[&str]) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        skip("util-linux `script` is not installed");
        return None;
    }
    let bin = assert_cmd::cargo::cargo_bin("dbio");
    let cmd = format!("{} {}", bin.display(), args.join(" "));
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(env.path())
        .env("XDG_DATA_HOME", env.data_home.path())
        .env_remove("DBIO_DB")
        .output()
        .expect("run script");
    assert!(out.status.success(), "{cmd}: {:?}", out.status);
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

const RUN: &[&str] = &[
    "run",
    "read-iops",
    "--size",
    "64M",
    "--sessions",
    "2",
    "--duration",
    "3s",
    "--warmup",
    "1s",
];

#[test]
fn a_terminal_gets_a_live_progress_line() {
    let env = Env::new();
    let mut args = RUN.to_vec();
    args.push("--fresh");
    let Some(tty) = under_pty(&env, &args) else {
        return;
    };
    assert!(tty.contains("preparing the data set"), "prepare bar: {tty}");
    // The line is redrawn in place (erase line, then the new text), several times a second.
    assert!(tty.contains("\x1b[2K"), "drawn in place");
    let draws: Vec<&str> = tty.split("measuring ").skip(1).collect();
    assert!(
        draws.len() >= 6,
        "about 4 redraws a second over 3 s: {draws:?}"
    );
    assert!(
        draws.iter().any(|d| d.contains("db file parallel read:")
            && d.contains("IOPS")
            && d.contains("p99")),
        "current figures shown: {draws:?}"
    );
    let elapsed: std::collections::BTreeSet<&str> =
        draws.iter().filter_map(|d| d.split('/').next()).collect();
    assert!(elapsed.len() >= 4, "elapsed time advances: {elapsed:?}");
    assert!(tty.contains("warm-up"));
    assert!(tty.contains("Top Timed Events"), "the summary follows");
}

#[test]
fn quiet_or_piped_output_has_no_control_characters() {
    let env = Env::new();
    let mut args = RUN.to_vec();
    args.push("--quiet");
    if let Some(tty) = under_pty(&env, &args) {
        assert!(!tty.contains("measuring"), "--quiet: {tty}");
    }
    let out = env.output(RUN);
    assert!(out.status.success());
    for (name, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(text);
        assert!(
            !text.contains('\x1b') && !text.contains('\r'),
            "{name} of a piped run has control characters: {text:?}"
        );
        assert!(!text.contains("measuring"), "{name}: {text}");
    }
}

#[test]
fn stdout_piped_with_stderr_on_a_terminal_still_shows_progress() {
    // Issue 32: `dbio run ... | tee log` lost the progress line although stderr was the
    // terminal. `--progress never` draws none there; the report still goes to the pipe.
    let env = Env::new();
    let mut args = RUN.to_vec();
    args.extend(["|", "cat"]);
    let Some(tty) = under_pty(&env, &args) else {
        return;
    };
    assert!(
        tty.contains("measuring "),
        "progress on the terminal: {tty}"
    );
    assert!(tty.contains("\x1b[2K"), "drawn in place: {tty}");
    assert!(
        tty.contains("Top Timed Events"),
        "the report through cat: {tty}"
    );

    let mut args = RUN.to_vec();
    args.extend(["--progress", "never", "|", "cat"]);
    let tty = under_pty(&env, &args).unwrap();
    assert!(!tty.contains("measuring "), "--progress never: {tty}");
    assert!(!tty.contains('\x1b'), "--progress never: {tty:?}");
    assert!(tty.contains("Top Timed Events"), "{tty}");
}

#[test]
fn progress_always_draws_on_a_file_and_quiet_conflicts_with_it() {
    let env = Env::new();
    let mut args = RUN.to_vec();
    args.extend(["--progress", "always"]);
    let out = env.output(&args);
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("measuring ") && err.contains("\x1b[2K"),
        "{err:?}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains('\x1b'),
        "only stderr is drawn on: {stdout:?}"
    );
    // A value it does not know, or --quiet with it: bad input, one line naming it.
    let mut args = RUN.to_vec();
    args.extend(["--progress", "sometimes"]);
    let out = env.output(&args);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--progress") && err.contains("auto, always or never"),
        "{err}"
    );
    let mut args = RUN.to_vec();
    args.extend(["--progress", "always", "--quiet"]);
    let out = env.output(&args);
    assert_eq!(out.status.code(), Some(2));
}
