//! What a run reports: the events named as SPEC §3–4 says, numbers that agree with each
//! other, the engine and io mode recorded as used, the run directory and its files.

use crate::util::{Env, assert_consistent, event, f, u};

/// The event each test measures, by submission.
fn expected_event(test: &str, sync: bool) -> &'static str {
    match (test, sync) {
        ("read-iops", false) => "db file parallel read",
        ("read-iops", true) => "db file sequential read",
        ("read-mbps", false) => "direct path read",
        ("read-mbps", true) => "db file scattered read",
        ("write-iops", _) => "db file parallel write",
        ("write-mbps", _) => "direct path write",
        _ => unreachable!(),
    }
}

#[test]
fn every_test_submission_and_engine() {
    let env = Env::new();
    for test in ["read-iops", "read-mbps", "write-iops", "write-mbps"] {
        for sync in [true, false] {
            for engine in ["sync", "aio", "uring"] {
                let submission = if sync { "--sync" } else { "--async" };
                let r = env.quick(test).arg(submission).engine(engine).json();
                let what = format!("{test} {submission} --engine {engine}");
                assert_consistent(&r);
                let e = event(&r);
                assert_eq!(e["name"], expected_event(test, sync), "{what}");
                assert_eq!(r["test"], test);
                assert_eq!(
                    r["config"]["submission"],
                    if sync { "sync" } else { "async" }
                );
                assert_eq!(r["config"]["engine_requested"], engine);
                let used = if sync { "sync" } else { engine };
                assert_eq!(r["config"]["engine"], used, "{what}: engine used");
                assert!(!r["config"]["engine_reason"].as_str().unwrap().is_empty());
                // Which of the kernel's interfaces the engine used is said.
                let features = r["config"]["engine_features"].to_string();
                let expected = match used {
                    "uring" => "io_uring ring: ",
                    "aio" => "io_submit/io_getevents",
                    _ => "pread/pwrite",
                };
                assert!(features.contains(expected), "{what}: {features}");
                assert_eq!(
                    r["config"]["open_flags"][1], "O_DIRECT",
                    "{what}: setall opens O_DIRECT"
                );
                assert_eq!(r["partial"], false);
                let expected_bytes = match test {
                    "read-iops" | "write-iops" => 8192,
                    _ => 1 << 20,
                };
                assert_eq!(u(&r["config"]["request_bytes"]), expected_bytes, "{what}");
                let sync_event = sync && test.starts_with("read");
                if sync_event {
                    assert_eq!(
                        e["waits"], e["requests"],
                        "{what}: a synchronous request is a wait"
                    );
                    assert_eq!(e["wait_latency_us"], e["latency_us"], "{what}");
                }
                let ran_sync_warning = r["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|w| w.as_str().unwrap().contains("ran synchronously"));
                assert_eq!(
                    ran_sync_warning,
                    !sync && engine == "sync",
                    "{what}: warnings {}",
                    r["warnings"]
                );
                let writes = test.starts_with("write");
                assert_eq!(f(&r["totals"]["write_iops"]) > 0.0, writes, "{what}");
                assert_eq!(f(&r["totals"]["read_iops"]) > 0.0, !writes, "{what}");
                assert!(
                    f(&r["cpu"]["cpu_s_per_1k_requests"]) > 0.0,
                    "{what}: dbio's own CPU cost"
                );
            }
        }
    }
}

#[test]
fn io_modes_set_flags_and_submission() {
    let env = Env::new();
    for (mode, direct, asynchronous) in [
        ("none", false, false),
        ("directio", true, false),
        ("asynch", false, true),
        ("setall", true, true),
    ] {
        for test in ["read-iops", "write-iops"] {
            let r = env.quick(test).io_mode(mode).json();
            assert_consistent(&r);
            let flags: Vec<&str> = r["config"]["open_flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(flags.contains(&"O_DIRECT"), direct, "{mode}: {flags:?}");
            assert!(
                flags.contains(&"O_DSYNC"),
                "{mode}: data files are O_DSYNC: {flags:?}"
            );
            assert_eq!(r["config"]["io_mode"], mode);
            assert_eq!(
                r["config"]["engine"] != "sync",
                asynchronous,
                "{mode} {test}: engine {}",
                r["config"]["engine"]
            );
            let warned = r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w.as_str().unwrap().contains("ran synchronously"));
            assert_eq!(
                warned, !asynchronous,
                "{mode} {test}: an async test in a sync io mode is flagged"
            );
        }
    }
}

#[test]
fn keep_inflight_holds_the_queue_depth() {
    let env = Env::new();
    let r = env
        .quick("read-iops")
        .opt("--batch", 16)
        .arg("--keep-inflight")
        .engine("uring")
        .json();
    assert_consistent(&r);
    let e = event(&r);
    assert_eq!(e["name"], "db file parallel read");
    assert_eq!(r["config"]["keep_inflight"], true);
    // Two sessions with 16 each in flight: about 32 on average, never more.
    assert!(
        f(&e["inflight_avg"]) <= 32.5,
        "inflight {}",
        e["inflight_avg"]
    );
    assert!(
        f(&e["inflight_avg"]) > 8.0,
        "inflight {}",
        e["inflight_avg"]
    );
}

#[test]
fn run_directory_holds_result_and_summary() {
    let env = Env::new();
    let out = env
        .run("read-iops")
        .size("256M")
        .sessions(3)
        .duration("1s")
        .warmup("0s")
        .out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    for part in [
        "Top Timed Events",
        "Load Profile",
        "db file parallel read",
        "p99.9",
        "Read requests:",
    ] {
        assert!(summary.contains(part), "summary lacks {part}:\n{summary}");
    }
    let runs: Vec<_> = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1);
    let name = runs[0].file_name().unwrap().to_string_lossy().to_string();
    // <yyyymmddThhmmss>_<test>_<sync|async|mixed>_<N>sessions_<size>_<duration>
    let parts: Vec<&str> = name.split('_').collect();
    assert_eq!(parts.len(), 6, "{name}");
    assert_eq!(parts[0].len(), 15, "{name}");
    assert_eq!(parts[0].as_bytes()[8], b'T', "{name}");
    assert_eq!(
        &parts[1..],
        ["read-iops", "async", "3sessions", "256M", "1s"],
        "{name}"
    );
    let written = std::fs::read_to_string(runs[0].join("summary.txt")).unwrap();
    assert_eq!(written, summary, "the printed summary is summary.txt");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(runs[0].join("result.json")).unwrap())
            .unwrap();
    assert_consistent(&r);
    assert_eq!(u(&r["config"]["sessions"]), 3);
}

#[test]
fn warmup_is_not_measured() {
    let env = Env::new();
    let r = env
        .run("read-iops")
        .sync_()
        .size("256M")
        .sessions(1)
        .duration("1s")
        .warmup("1s")
        .json();
    assert_consistent(&r);
    let secs = f(&r["measured_seconds"]);
    assert!(
        (secs - 1.0).abs() < 0.05,
        "measured {secs} s of a 1 s window after 1 s warm-up"
    );
    assert_eq!(
        r["timeseries"].as_array().unwrap().len(),
        1,
        "one second of history"
    );
}
