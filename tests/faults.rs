//! Real faults (SPEC §7.4): a full file system, a file dbio may not read, too few file
//! descriptors, a device that fails requests. Each gets one line that says what to do and
//! the right exit status, and leaves nothing behind; `--continue-on-error` counts errors
//! per event and goes on.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;

use crate::util::{Env, Loop, Mount, event, files_under, is_root, skip, u};

fn error_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(String::from)
        .collect()
}

#[test]
fn a_full_file_system_refuses_the_data_set_and_leaves_nothing() {
    if !is_root() {
        return skip("mounting a tmpfs needs root");
    }
    let env = Env::new();
    let Some(_small) = Mount::new("tmpfs", "size=20m", "tmpfs", &env.join("small")) else {
        return;
    };
    let out = env.prepare().target("small/data").size("64M").out();
    let errors = error_lines(&out);
    assert_eq!(out.status.code(), Some(2), "{errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("64M")
            && errors[0].contains("20.0 MiB free")
            && errors[0].contains("smaller --size"),
        "{errors:?}"
    );
    assert!(files_under(&env.join("small")).is_empty());
    assert!(!env.join("small/data").exists(), "no directory left either");
}

#[test]
fn too_few_file_descriptors_say_raise_ulimit_and_leave_nothing() {
    let env = Env::new();
    // SAFETY: setrlimit between fork and exec touches only this process's limits.
    let out = unsafe {
        env.prepare()
            .size("64M")
            .files(64)
            .process()
            .pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 24,
                    rlim_max: 24,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
            .output()
            .unwrap()
    };
    let errors = error_lines(&out);
    assert_eq!(out.status.code(), Some(4), "{errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("too many open files") && errors[0].contains("ulimit -n"),
        "{errors:?}"
    );
    let left = files_under(&env.join("dbio-data"));
    assert!(left.is_empty(), "partial files left: {left:?}");
}

/// Runs `dbio run read-iops --target TARGET` as nobody (root bypasses permissions); None
/// when privileges cannot be dropped here.
fn read_as_nobody(env: &Env, target: &std::path::Path) -> Option<std::process::Output> {
    let target = target.to_str().unwrap();
    as_nobody(
        env,
        &[
            "run",
            "read-iops",
            "--target",
            target,
            "--duration",
            "1s",
            "--warmup",
            "0s",
        ],
    )
}

/// Runs `dbio ARGS` as nobody in `env`'s directory; None when privileges cannot be dropped.
fn as_nobody(env: &Env, args: &[&str]) -> Option<std::process::Output> {
    if !is_root() {
        skip("needs root to drop privileges to nobody");
        return None;
    }
    std::fs::set_permissions(env.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("dbio"))
        .args(args)
        // nobody cannot write the test's store: no store at all, never the user's.
        .env("XDG_DATA_HOME", "/nonexistent")
        .env_remove("DBIO_DB")
        .current_dir(env.path())
        .output();
    let Ok(out) = out else {
        skip("no setpriv");
        return None;
    };
    if error_lines(&out).iter().any(|e| e.contains("setpriv")) {
        skip("setpriv cannot drop privileges here");
        return None;
    }
    Some(out)
}

#[test]
fn a_permission_error_is_bad_input_on_every_path_option() {
    // Issue 32: the same fault gave 4 for --target and 2 for --out. A path dbio may not use
    // is bad input (2) wherever it is named, said before anything is made.
    let env = Env::new();
    // A directory nobody may not write in, and a file nobody may not read.
    let ro = env.join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let secret = env.join("secret");
    std::fs::write(&secret, b"[run]\ntest = \"read-iops\"\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let run = [
        "run",
        "read-iops",
        "--size",
        "16M",
        "--duration",
        "1s",
        "--warmup",
        "0s",
    ];
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("ro/data", [&run[..], &["--target", "ro/data"]].concat()),
        ("secret", [&run[..], &["--target", "secret"]].concat()),
        ("ro/runs", [&run[..], &["--out", "ro/runs"]].concat()),
        (
            "ro/m.prom",
            [&run[..], &["--metrics", "ro/m.prom"]].concat(),
        ),
        (
            "ro/j.toml",
            [&run[..], &["--save-job", "ro/j.toml"]].concat(),
        ),
        ("ro/dbio.db", [&run[..], &["--db", "ro/dbio.db"]].concat()),
        ("secret", vec!["run", "--job", "secret", "--duration", "1s"]),
        (
            "ro/data",
            vec!["prepare", "--size", "16M", "--target", "ro/data"],
        ),
        (
            "ro/data",
            vec![
                "sweep",
                "read-iops",
                "--param",
                "sessions=1,2",
                "--target",
                "ro/data",
                "--size",
                "16M",
                "--duration",
                "1s",
            ],
        ),
        ("ro/data", vec!["precondition", "ro/data"]),
        ("secret", vec!["job", "from-iostat", "secret"]),
        ("secret", vec!["size", "secret"]),
    ];
    for (path, args) in cases {
        let Some(out) = as_nobody(&env, &args) else {
            return;
        };
        let errors = error_lines(&out);
        assert_eq!(out.status.code(), Some(2), "dbio {args:?}: {errors:?}");
        assert_eq!(errors.len(), 1, "dbio {args:?}: {errors:?}");
        assert!(errors[0].contains(path), "dbio {args:?}: {errors:?}");
        // Nothing made: the data set, a run directory, a job or metrics file, a store.
        let mut left = files_under(env.path());
        left.retain(|f| f != "secret");
        assert_eq!(left, Vec::<String>::new(), "dbio {args:?}");
    }
}

#[test]
fn a_file_dbio_may_not_read_gets_a_permission_hint() {
    let env = Env::new();
    let secret = env.join("secret.dat");
    std::fs::write(&secret, vec![1u8; 1 << 20]).unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let Some(out) = read_as_nobody(&env, &secret) else {
        return;
    };
    let errors = error_lines(&out);
    // A path dbio may not use is bad input (crate::error's rule).
    assert_eq!(out.status.code(), Some(2), "{errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("secret.dat")
            && errors[0].contains("Permission denied")
            && errors[0].contains("run as a user allowed to access it"),
        "{errors:?}"
    );
}

#[test]
fn a_device_node_without_permission_gets_a_permission_hint() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "dev.img", 16 << 20) else {
        return;
    };
    // Device nodes are root:disk 0660: nobody may not open them.
    let Some(out) = read_as_nobody(&env, &dev.dev) else {
        return;
    };
    let errors = error_lines(&out);
    assert_eq!(out.status.code(), Some(2), "{errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains(dev.path()) && errors[0].contains("Permission denied"),
        "{errors:?}"
    );
}

#[test]
fn a_device_failing_mid_run_with_eio_stops_cleanly_with_a_partial_result() {
    let env = Env::new();
    // The fault engine lets 500 completions through, then fails every one with EIO.
    let out = env
        .quick("read-iops")
        .arg("--json")
        .env("DBIO_FAULT_EIO_AFTER", "500")
        .out();
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["partial"], true);
    assert_eq!(r["stop_reason"], "error");
    let e = event(&r);
    assert!(u(&e["errors"]) >= 1, "{e}");
    assert!(
        u(&e["requests"]) <= 500 * 2,
        "only the good completions were measured"
    );
    let errors = r["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|l| l.as_str().unwrap().contains("Input/output error")
                && l.as_str().unwrap().contains("db file parallel read")),
        "{errors:?}"
    );
    assert!(
        r["config"]["engine_notes"]
            .to_string()
            .contains("DBIO_FAULT_EIO_AFTER")
    );
    // With --continue-on-error the run goes on to the end and counts every failure.
    let out = env
        .quick("read-iops")
        .arg("--json")
        .arg("--continue-on-error")
        .env("DBIO_FAULT_EIO_AFTER", "500")
        .out();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        r["partial"],
        false,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        u(&event(&r)["errors"]) > 1000,
        "every failed completion counted"
    );
}

/// A loop device over a sparse 64 MiB image on an 8 MiB tmpfs: once the tmpfs is full,
/// writes fail with ENOSPC — a device that fails requests, for real.
#[test]
fn continue_on_error_counts_failed_requests_and_goes_on() {
    if !is_root() {
        return skip("needs root for a tmpfs and a loop device");
    }
    let env = Env::new();
    let Some(_small) = Mount::new("tmpfs", "size=8m", "tmpfs", &env.join("small")) else {
        return;
    };
    let image = env.join("small/back.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let Some(dev) = Loop::new(&image, None) else {
        return;
    };
    let run = |extra: &[&str]| {
        let out = env
            .run("write-iops")
            .target(dev.path())
            .destructive()
            .yes()
            .sessions(2)
            .duration("2s")
            .warmup("0s")
            .arg("--json")
            .args(extra)
            .out();
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
        });
        (out.status.code(), r)
    };
    // Default: the first failed request stops the run; partial result, exit 4.
    let (code, r) = run(&[]);
    assert_eq!(code, Some(4));
    assert_eq!(r["partial"], true);
    assert_eq!(r["stop_reason"], "error");
    assert!(u(&event(&r)["errors"]) >= 1);
    let first = r["errors"][0].as_str().unwrap();
    assert!(first.contains("No space left"), "{first}");
    assert!(r["measured_seconds"].as_f64().unwrap() < 1.5);

    // --continue-on-error: the whole window, every failure counted, still exit 4.
    let (code, r) = run(&["--continue-on-error"]);
    assert_eq!(code, Some(4));
    assert_eq!(r["partial"], false, "{r}");
    assert_eq!(r["config"]["continue_on_error"], true);
    assert!(r["measured_seconds"].as_f64().unwrap() > 1.9);
    let e = event(&r);
    assert!(u(&e["errors"]) > 10, "errors counted: {}", e["errors"]);
    let warned = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .any(|w| w.contains("--continue-on-error") && w.contains("No space left"));
    assert!(warned, "{}", r["warnings"]);
    drop(dev);
}
