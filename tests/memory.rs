//! Memory is checked before anything is made: a run whose buffers, histograms, log buffer,
//! engines and stacks do not fit in the memory available is refused with one line naming
//! memory, what it needs, what is available and the option to lower — and no data set, no
//! run directory, no row in the results store exists afterwards.

use crate::util::{Dbio, Env};

/// Checks the refusal of `run`: bad input, about memory — what the run needs and what is
/// available — naming each of `words`, and nothing made or recorded.
#[track_caller]
fn assert_refused_for_memory(run: Dbio<'_>, words: &[&str]) {
    let out = run.refused_leaving_nothing(words);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: memory: this run needs "), "{err}");
    assert!(err.contains("is available"), "{err}");
}

/// A small run of 64 sessions.
fn small_run(env: &Env) -> Dbio<'_> {
    env.run("read-iops")
        .sync_()
        .sessions(64)
        .size("64M")
        .duration("1s")
        .warmup("0s")
}

/// A machine with little memory left (the test override of MemAvailable): the same run that
/// passes with enough memory is refused, naming the override and --sessions.
#[test]
fn a_run_larger_than_the_memory_available_is_refused_before_anything_is_made() {
    assert_refused_for_memory(
        small_run(&Env::new())
            .env("DBIO_FAULT_MEM_AVAILABLE", "16M")
            .arg("--json"),
        &[
            "DBIO_FAULT_MEM_AVAILABLE",
            "--sessions",
            "latency histograms",
        ],
    );
    // With memory enough, the same run goes.
    let env = Env::new();
    let r = small_run(&env)
        .env("DBIO_FAULT_MEM_AVAILABLE", "64G")
        .json();
    assert_eq!(r["config"]["sessions"], 64);
    crate::util::assert_consistent(&r);
}

/// Options that make a run huge, on any machine: I/O buffers (requests in flight × request
/// size × sessions) and the log buffer (sessions × redo per commit) are counted.
#[test]
fn options_that_scale_memory_are_refused_with_the_option_to_lower() {
    let env = Env::new();
    assert_refused_for_memory(
        env.run("read-mbps")
            .sessions(1000)
            .depth(1024)
            .block_size("1M")
            .size("1G")
            .duration("1s"),
        &["I/O buffers", "--depth", "--block-size", "MemAvailable"],
    );
    assert_refused_for_memory(
        env.run("read-iops")
            .async_()
            .sessions(1000)
            .opt("--batch", 4096)
            .block_size("1M")
            .size("8G")
            .duration("1s"),
        &["I/O buffers", "--batch"],
    );
    assert_refused_for_memory(
        env.run("redo")
            .sessions(2048)
            .opt("--redo-per-commit", "64M")
            .duration("1s"),
        &["log buffer", "--redo-per-commit"],
    );
}

/// The override is input like any other: a value that is no size is refused, named.
#[test]
fn a_bad_memory_override_is_refused_by_name() {
    let env = Env::new();
    let out = small_run(&env)
        .env("DBIO_FAULT_MEM_AVAILABLE", "lots")
        .arg("--json")
        .refused_leaving_nothing(&["DBIO_FAULT_MEM_AVAILABLE=lots"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: DBIO_FAULT_MEM_AVAILABLE=lots"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(env.path()).unwrap().count(), 0);
}
