//! Memory is checked before anything is made: a run whose buffers, histograms, log buffer,
//! engines and stacks do not fit in the memory available is refused with one line naming
//! memory, what it needs, what is available and the option to lower — and no data set, no
//! run directory, no row in the results store exists afterwards.

use serde_json::Value;

use crate::util::Env;

/// Runs `args` (with `vars` set) and checks the refusal: exit 2, one `error:` line about
/// memory that contains every one of `words`, and nothing made.
fn assert_refused_for_memory(args: &[&str], vars: &[(&str, &str)], words: &[&str]) {
    let env = Env::new();
    let out = env
        .dbio()
        .envs(vars.iter().copied())
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected: {err}");
    assert!(
        lines[0].starts_with("error: memory: this run needs "),
        "{args:?}: {err}"
    );
    assert!(lines[0].contains("is available"), "{args:?}: {err}");
    for w in words {
        assert!(lines[0].contains(w), "{args:?}: no '{w}' in {err}");
    }
    let made: Vec<String> = std::fs::read_dir(env.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(made.is_empty(), "{args:?}: made {made:?}");
    let runs = env.output(&["runs", "--json"]);
    assert!(runs.status.success());
    let listed: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(0), "{listed}");
}

const SMALL_RUN: &[&str] = &[
    "run",
    "read-iops",
    "--sync",
    "--sessions",
    "64",
    "--size",
    "64M",
    "--duration",
    "1s",
    "--warmup",
    "0s",
    "--json",
];

/// A machine with little memory left (the test override of MemAvailable): the same run that
/// passes with enough memory is refused, naming the override and --sessions.
#[test]
fn a_run_larger_than_the_memory_available_is_refused_before_anything_is_made() {
    assert_refused_for_memory(
        SMALL_RUN,
        &[("DBIO_FAULT_MEM_AVAILABLE", "16M")],
        &[
            "DBIO_FAULT_MEM_AVAILABLE",
            "--sessions",
            "latency histograms",
        ],
    );
    // With memory enough, the same run goes.
    let env = Env::new();
    let out = env
        .dbio()
        .env("DBIO_FAULT_MEM_AVAILABLE", "64G")
        .args(SMALL_RUN)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["config"]["sessions"], 64);
    crate::util::assert_consistent(&r);
}

/// Options that make a run huge, on any machine: I/O buffers (requests in flight × request
/// size × sessions) and the log buffer (sessions × redo per commit) are counted.
#[test]
fn options_that_scale_memory_are_refused_with_the_option_to_lower() {
    assert_refused_for_memory(
        &[
            "run",
            "read-mbps",
            "--sessions",
            "1000",
            "--depth",
            "1024",
            "--block-size",
            "1M",
            "--size",
            "1G",
            "--duration",
            "1s",
        ],
        &[],
        &["I/O buffers", "--depth", "--block-size", "MemAvailable"],
    );
    assert_refused_for_memory(
        &[
            "run",
            "read-iops",
            "--async",
            "--sessions",
            "1000",
            "--batch",
            "4096",
            "--block-size",
            "1M",
            "--size",
            "8G",
            "--duration",
            "1s",
        ],
        &[],
        &["I/O buffers", "--batch"],
    );
    assert_refused_for_memory(
        &[
            "run",
            "redo",
            "--sessions",
            "2048",
            "--redo-per-commit",
            "64M",
            "--duration",
            "1s",
        ],
        &[],
        &["log buffer", "--redo-per-commit"],
    );
}

/// The override is input like any other: a value that is no size is refused, named.
#[test]
fn a_bad_memory_override_is_refused_by_name() {
    let env = Env::new();
    let out = env
        .dbio()
        .env("DBIO_FAULT_MEM_AVAILABLE", "lots")
        .args(SMALL_RUN)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: DBIO_FAULT_MEM_AVAILABLE=lots"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(env.path()).unwrap().count(), 0);
}
