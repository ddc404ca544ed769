//! SPEC §7.3: SIGINT, SIGTERM and SIGHUP stop a run within 2 s with a partial result; a
//! second signal exits at once and still removes the run's temporary files; after SIGKILL
//! the manifest says which run was using the data set, and the next run carries on.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Env, files_under, u};

fn spawn(env: &Env, args: &[&str]) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .current_dir(env.path())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(child.id() as i32, sig) };
}

fn manifest(env: &Env) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(env.join("dbio-data/dbio-manifest.json")).unwrap(),
    )
    .unwrap()
}

const LONG_READ: [&str; 11] = [
    "run",
    "read-iops",
    "--size",
    "64M",
    "--sessions",
    "2",
    "--duration",
    "60s",
    "--warmup",
    "1s",
    "--json",
];

#[test]
fn sigterm_and_sighup_stop_within_2s_with_a_partial_result() {
    let env = Env::new();
    assert!(env.output(&["prepare", "--size", "64M"]).status.success());
    for (sig, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        let child = spawn(&env, &LONG_READ);
        std::thread::sleep(Duration::from_millis(2000));
        let sent = Instant::now();
        signal(&child, sig);
        let out = child.wait_with_output().unwrap();
        let took = sent.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "{name}: stopped after {took:?}"
        );
        assert_eq!(out.status.code(), Some(130), "{name}");
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["partial"], true, "{name}");
        assert_eq!(r["stop_reason"], "interrupted", "{name}");
        assert!(u(&r["events"][0]["requests"]) > 0, "{name}");
        assert!(manifest(&env)["in_use"].is_null(), "{name}");
    }
}

#[test]
fn a_second_signal_exits_at_once_and_removes_temporary_files() {
    let env = Env::new();
    let mut fast_path_seen = false;
    // The second signal must land before the first one's orderly stop finishes (tens of
    // ms); a few tries make that certain without making the test slow.
    for _ in 0..3 {
        let child = spawn(
            &env,
            &[
                "run",
                "temp",
                "--spill-size",
                "16M",
                "--sessions",
                "2",
                "--duration",
                "60s",
                "--warmup",
                "0s",
                "--json",
            ],
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while !files_under(&env.join("dbio-data"))
            .iter()
            .any(|f| f.starts_with("dbio-temp-"))
        {
            assert!(Instant::now() < deadline, "no temp files appeared");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        let sent = Instant::now();
        signal(&child, libc::SIGINT);
        std::thread::sleep(Duration::from_millis(2));
        signal(&child, libc::SIGINT);
        let out = child.wait_with_output().unwrap();
        assert!(sent.elapsed() < Duration::from_secs(2));
        assert_eq!(out.status.code(), Some(130));
        let left: Vec<String> = files_under(&env.join("dbio-data"))
            .into_iter()
            .filter(|f| f.starts_with("dbio-temp-"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
        if out.stdout.is_empty() {
            // Exited at once: no result, but the files are gone and it said so.
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("stopped at once; removed 2 temporary file(s)"),
                "{err}"
            );
            fast_path_seen = true;
            break;
        }
    }
    assert!(
        fast_path_seen,
        "the second signal never arrived before the orderly stop"
    );
    // The next run cleans up after the abrupt one and works.
    let out = env.output(&[
        "run",
        "temp",
        "--spill-size",
        "16M",
        "--sessions",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn after_sigkill_the_manifest_names_the_run_and_the_next_run_carries_on() {
    let env = Env::new();
    assert!(env.output(&["prepare", "--size", "64M"]).status.success());
    let mut child = spawn(&env, &LONG_READ);
    std::thread::sleep(Duration::from_millis(2000));
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let m = manifest(&env);
    assert_eq!(m["in_use"]["pid"], child.id(), "{m}");
    assert_eq!(m["in_use"]["test"], "read-iops");
    // The kernel released the lock with the process: the data set is usable again.
    let mut args = LONG_READ.to_vec();
    args[7] = "1s";
    args[9] = "0s";
    let r = env.json(&args);
    assert_eq!(r["dataset"]["reused"], true);
    assert!(manifest(&env)["in_use"].is_null());
}
