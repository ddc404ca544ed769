//! Every request goes through an engine: the test engines (`DBIO_FAULT_EIO_AFTER`,
//! `DBIO_FAULT_STALL`) reach the synchronous events too; `--engine null` does no I/O and
//! says so; the result says which clock timed the run.

use serde_json::Value;

use crate::util::{Env, event_named as event, f, shm_dir, u};

/// `dbio run TEST` on a small data set in `dir`, without warm-up, 1 s and 2 sessions unless
/// `extra` says otherwise, JSON out; extra environment `env_vars`. Returns the exit status,
/// the result and stderr.
fn run(
    env: &Env,
    dir: &std::path::Path,
    env_vars: &[(&str, &str)],
    test: &str,
    extra: &[&str],
) -> (Option<i32>, Value, String) {
    let target = dir.join("data");
    let mut run = env
        .run(test)
        .target(&target)
        .size("64M")
        .warmup("0s")
        .arg("--json")
        .args(extra);
    if matches!(test, "redo" | "oltp") {
        run = run.opt("--redo-file-size", "8M");
    }
    if !extra.contains(&"--duration") {
        run = run.duration("1s");
    }
    if !extra.contains(&"--sessions") {
        run = run.sessions(2);
    }
    let run = run.envs(env_vars);
    let line = run.line();
    let out = run.out();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let r = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{line}: no JSON ({e}):\n{stderr}"));
    (out.status.code(), r, stderr)
}

#[test]
fn eio_from_the_test_engine_stops_synchronous_events_with_exit_4() {
    let env = Env::new();
    let Some(dir) = shm_dir() else { return };
    // Each synchronous event, and who issues it: sessions' preads and preadvs, LGWR's pieces
    // written one after another, OLTP's single-block reads.
    for (test, extra, failing) in [
        ("read-iops", &["--sync"][..], "db file sequential read"),
        ("read-mbps", &["--sync"][..], "db file scattered read"),
        ("redo", &["--sync"][..], "log file parallel write"),
        (
            "oltp",
            &["--sync", "--update-pct", "0"][..],
            "db file sequential read",
        ),
    ] {
        let (code, r, stderr) = run(
            &env,
            dir.path(),
            &[("DBIO_FAULT_EIO_AFTER", "50")],
            test,
            extra,
        );
        assert_eq!(code, Some(4), "{test} {extra:?}: {stderr}");
        assert_eq!(r["partial"], true, "{test}");
        assert_eq!(r["stop_reason"], "error", "{test}");
        let e = event(&r, failing);
        assert!(u(&e["errors"]) >= 1, "{test}: {e}");
        // Each thread's engine lets its first 50 completions through.
        assert!(
            u(&e["requests"]) <= 2 * 50,
            "{test}: only good ones count: {e}"
        );
        // (Committing sessions fail too when their log writer does.)
        let errors = r["errors"].as_array().unwrap();
        assert!(
            errors.iter().any(|l| {
                let l = l.as_str().unwrap();
                l.contains(failing) && l.contains("Input/output error")
            }),
            "{test}: {errors:?}"
        );
        assert!(
            r["config"]["engine_notes"]
                .to_string()
                .contains("DBIO_FAULT_EIO_AFTER"),
            "{test}: {}",
            r["config"]["engine_notes"]
        );
    }
}

/// A thread that panics (a bug) stops the run — it never hangs it — whichever thread it is:
/// sessions in preparation-free loops, or LGWR while sessions wait for their commits.
#[test]
fn a_panicking_thread_stops_the_run_and_never_hangs_it() {
    let env = Env::new();
    let Some(dir) = shm_dir() else { return };
    for (test, extra, who) in [
        ("read-iops", &["--sync", "--duration", "30s"][..], "session"),
        ("read-iops", &["--duration", "30s"][..], "session"),
        ("redo", &["--duration", "30s"][..], "LGWR"),
    ] {
        let t0 = std::time::Instant::now();
        let (code, r, stderr) = run(
            &env,
            dir.path(),
            &[("DBIO_FAULT_PANIC_AFTER", "100")],
            test,
            extra,
        );
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(20),
            "{test} {extra:?}: stopped long before its 30 s"
        );
        assert_eq!(code, Some(4), "{test} {extra:?}: {stderr}");
        assert_eq!(r["partial"], true, "{test}");
        assert_eq!(r["stop_reason"], "error", "{test}");
        let errors = r["errors"].to_string();
        assert!(
            errors.contains(who) && errors.contains("panicked (a bug in dbio"),
            "{test}: {errors}"
        );
    }
}

#[test]
fn a_stalling_device_holds_synchronous_reads() {
    let env = Env::new();
    let Some(dir) = shm_dir() else { return };
    // The device stalls 100 ms in every 300 ms: a session reading one block after another
    // meets every stall, and its read that completes in one waits for its end.
    let (code, r, stderr) = run(
        &env,
        dir.path(),
        &[("DBIO_FAULT_STALL", "300ms:100ms")],
        "read-iops",
        &["--sync", "--sessions", "1"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let e = event(&r, "db file sequential read");
    let max = f(&e["latency_us"]["max"]);
    // Held by one stall (up to its 100 ms), never by two: below the 300 ms period. (The
    // session sleeps through the stall, so on a loaded machine its wake-up may come late;
    // how late is a timing figure, not this test's business.)
    assert!((80_000.0..300_000.0).contains(&max), "max {max} µs");
    assert!(f(&e["latency_us"]["p50"]) < 1_000.0, "{e}");
}

#[test]
fn the_null_engine_does_no_io_and_says_so() {
    let env = Env::new();
    let Some(dir) = shm_dir() else { return };
    // A write test first, so the data files exist; then the same writes with no I/O.
    let (code, _, stderr) = run(&env, dir.path(), &[], "write-iops", &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let data = dir.path().join("data");
    let files = || -> Vec<Vec<u8>> {
        let mut names: Vec<_> = std::fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "dbf"))
            .collect();
        names.sort();
        names.iter().map(|p| std::fs::read(p).unwrap()).collect()
    };
    let before = files();
    for (test, extra, name) in [
        ("write-iops", &[][..], "db file parallel write"),
        ("write-iops", &["--sync"][..], "db file parallel write"),
        ("read-iops", &["--sync"][..], "db file sequential read"),
        ("read-iops", &[][..], "db file parallel read"),
        ("read-mbps", &["--sync"][..], "db file scattered read"),
        ("redo", &[][..], "log file parallel write"),
        ("oltp", &[][..], "db file parallel write"),
    ] {
        let mut args = vec!["--engine", "null"];
        args.extend_from_slice(extra);
        let (code, r, stderr) = run(&env, dir.path(), &[], test, &args);
        assert_eq!(code, Some(0), "{test} {extra:?}: {stderr}");
        assert_eq!(r["config"]["engine"], "null", "{test}");
        assert!(
            r["config"]["engine_reason"]
                .as_str()
                .unwrap()
                .contains("no I/O"),
            "{}",
            r["config"]["engine_reason"]
        );
        assert!(
            r["warnings"].as_array().unwrap().iter().any(|w| w
                .as_str()
                .unwrap()
                .contains("not what the storage delivers")),
            "{test}: {}",
            r["warnings"]
        );
        let e = event(&r, name);
        assert!(u(&e["requests"]) > 0, "{test}: {e}");
        assert_eq!(u(&e["errors"]), 0, "{test}: {e}");
    }
    assert!(before == files(), "the null engine changed the data files");
    // Never the default, never chosen by auto.
    let (_, r, _) = run(&env, dir.path(), &[], "read-iops", &["--sync"]);
    assert_eq!(r["config"]["engine"], "sync");
    let (_, r, _) = run(&env, dir.path(), &[], "read-iops", &[]);
    assert_ne!(r["config"]["engine"], "null");
}

#[test]
fn verify_is_refused_with_the_null_engine() {
    let env = Env::new();
    let out = env
        .run("read-iops")
        .engine("null")
        .verify_data()
        .size("64M")
        .out();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--verify") && err.contains("--engine null"),
        "{err}"
    );
    assert!(
        !env.join("dbio-data").exists(),
        "refused before anything was created"
    );
}

#[test]
fn the_result_names_the_clock_that_timed_the_run() {
    let env = Env::new();
    let Some(dir) = shm_dir() else { return };
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    let tsc = source.trim() == "tsc" && cfg!(target_arch = "x86_64");
    let (_, r, _) = run(&env, dir.path(), &[], "read-iops", &["--sync"]);
    let clock = r["config"]["clock"].as_str().unwrap();
    assert_eq!(clock.starts_with("tsc ("), tsc, "{clock} ({source})");
    assert_eq!(clock.starts_with("clock_gettime"), !tsc, "{clock}");
    let (_, r, _) = run(
        &env,
        dir.path(),
        &[("DBIO_CLOCK_MONOTONIC", "1")],
        "read-iops",
        &["--sync"],
    );
    let clock = r["config"]["clock"].as_str().unwrap();
    assert!(
        clock.starts_with("clock_gettime(CLOCK_MONOTONIC)"),
        "{clock}"
    );
    if tsc {
        assert!(clock.contains("DBIO_CLOCK_MONOTONIC"), "{clock}");
    }
}

#[test]
fn io_uring_registers_the_files_of_every_test_on_a_disk_file_system() {
    // Issue 32: every redo run (on ext4 or anywhere) said "io_uring: files not registered
    // (Invalid argument)": its foreground sessions, which have no files, asked the kernel
    // to register an empty table. On the disk's own file system (not tmpfs), every test.
    let env = Env::new();
    let dir = env.path();
    let (_, probe, _) = run(&env, dir, &[], "read-iops", &["--engine", "uring"]);
    if probe["config"]["engine"] != "uring" {
        return crate::util::skip("io_uring is not usable here");
    }
    for test in ["read-iops", "write-iops", "redo", "oltp", "temp"] {
        let (code, r, stderr) = run(&env, dir, &[], test, &["--engine", "uring"]);
        assert_eq!(code, Some(0), "{test}: {stderr}");
        assert_eq!(r["config"]["engine"], "uring", "{test}");
        assert_eq!(
            r["config"]["engine_notes"],
            serde_json::json!([]),
            "{test}: {stderr}"
        );
    }
}
