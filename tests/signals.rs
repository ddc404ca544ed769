//! SPEC §7.3: SIGINT, SIGTERM and SIGHUP stop a run within 2 s with a partial result; a
//! second signal exits at once and leaves no temporary file; after SIGKILL the data set's
//! lock is gone with the process, and the next run starts at once, without clean-up.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Dbio, Env, files_under, u, unnamed_open_files, wait_locked};

/// `cmd` in the background, its output piped.
fn spawn(cmd: Dbio<'_>) -> Child {
    cmd.process()
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

/// `test` on a 64 MiB data set, 2 sessions, for `duration` after `warmup`.
fn run<'e>(env: &'e Env, test: &str, duration: &str, warmup: &str) -> Dbio<'e> {
    env.run(test)
        .size("64M")
        .sessions(2)
        .duration(duration)
        .warmup(warmup)
        .arg("--json")
}

/// A read run of a minute.
fn long_read(env: &Env) -> Dbio<'_> {
    run(env, "read-iops", "60s", "1s")
}

#[test]
fn sigterm_and_sighup_stop_within_2s_with_a_partial_result() {
    let env = Env::new();
    assert!(env.prepare().size("64M").out().status.success());
    for (sig, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        let child = spawn(long_read(&env));
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

/// The temp test's spills: unnamed (they vanish with the process whatever ends it), or —
/// as on a file system without O_TMPFILE — named, and removed by the second signal.
#[test]
fn a_second_signal_exits_at_once_and_leaves_no_temporary_file() {
    let env = Env::new();
    let temp_run = |duration| {
        env.run("temp")
            .opt("--spill-size", "16M")
            .sessions(2)
            .duration(duration)
            .warmup("0s")
            .arg("--json")
    };
    for named in [false, true] {
        let vars: &[(&str, &str)] = if named {
            &[("DBIO_TEST_NO_TMPFILE", "1")]
        } else {
            &[]
        };
        let mut fast_path_seen = false;
        // The second signal must land before the first one's orderly stop finishes (tens of
        // ms); a few tries make that certain without making the test slow.
        for _ in 0..3 {
            let child = spawn(temp_run("60s").envs(vars));
            let deadline = Instant::now() + Duration::from_secs(20);
            let temp_files = || {
                if named {
                    files_under(&env.join("dbio-data"))
                        .iter()
                        .filter(|f| f.starts_with("dbio-temp-"))
                        .count()
                } else {
                    unnamed_open_files(child.id())
                }
            };
            while temp_files() < 2 {
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
                .filter(|f| !f.ends_with(".dbf") && f != "dbio-manifest.json" && f != "dbio-lock")
                .collect();
            assert!(left.is_empty(), "temporary files left: {left:?}");
            if out.stdout.is_empty() {
                // Exited at once: no result, and nothing left behind.
                let err = String::from_utf8_lossy(&out.stderr);
                if named {
                    assert!(
                        err.contains("stopped at once; removed 2 temporary file(s)"),
                        "{err}"
                    );
                }
                fast_path_seen = true;
                break;
            }
        }
        assert!(
            fast_path_seen,
            "the second signal never arrived before the orderly stop"
        );
        // The next run works.
        let out = temp_run("1s").out();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn after_sigkill_the_next_run_starts_at_once_without_clean_up() {
    let env = Env::new();
    assert!(env.prepare().size("64M").out().status.success());
    let mut child = spawn(long_read(&env));
    wait_locked(&env.join("dbio-data"), child.id());
    std::thread::sleep(Duration::from_millis(1000));
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    // Nothing was written to mark the run: the kernel released its lock with the process.
    let m = manifest(&env);
    assert!(m["in_use"].is_null(), "{m}");
    let out = env.doctor().arg("dbio-data").out();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("ready, not in use"), "{stdout}");
    // A write test, which needs the data set to itself, starts at once too.
    let r = run(&env, "write-iops", "1s", "0s").json();
    assert_eq!(r["dataset"]["reused"], true);
}
