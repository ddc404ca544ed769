//! Bad input: one line naming the option and what is accepted, exit status 2, no panic.

use crate::util::Env;

fn assert_usage_error(args: &[&str], must_mention: &str) {
    let env = Env::new();
    let out = env.output(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: exit status; stderr: {stderr}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line expected, got:\n{stderr}"
    );
    assert!(
        stderr.contains(must_mention),
        "{args:?}: {stderr:?} should mention {must_mention:?}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{args:?}: {stderr}"
    );
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    assert!(
        !env.join("dbio-data").exists(),
        "{args:?}: no data set created for bad input"
    );
}

#[test]
fn bad_values_exit_2_with_one_line() {
    assert_usage_error(&["run", "read-iops", "--sessions", "0"], "--sessions");
    assert_usage_error(
        &["run", "read-iops", "--block-size", "3000"],
        "power of two",
    );
    assert_usage_error(
        &["run", "read-iops", "--io-mode", "fast"],
        "none, directio, asynch, setall",
    );
    assert_usage_error(&["run", "read-iops", "--duration", "-5s"], "--duration");
    assert_usage_error(&["run", "read-iops", "--size", "12Q"], "unknown unit 'Q'");
    assert_usage_error(
        &["run", "read-iops", "--engine", "io_uring"],
        "auto, uring, aio, sync",
    );
    assert_usage_error(&["run", "read-iops", "--duration", "0s"], "--duration");
    assert_usage_error(&["run", "fastest"], "read-iops");
    assert_usage_error(&["run", "read-iops", "--sync", "--async"], "--async");
    assert_usage_error(&["run", "read-iops", "--size", "1K"], "--size");
    assert_usage_error(&["run", "read-iops", "--mbrc", "0"], "--mbrc");
}

#[test]
fn missing_target_says_what_to_do() {
    let env = Env::new();
    let out = env.output(&["run", "read-iops", "--target", "no/such/dir"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no/such/dir") && stderr.contains("create it or choose another --target"),
        "{stderr}"
    );
}

#[test]
fn help_and_version_work() {
    let env = Env::new();
    let out = env.output(&["run", "--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for opt in [
        "--target",
        "--size",
        "--block-size",
        "--files",
        "--sessions",
        "--duration",
        "--warmup",
        "--sync",
        "--async",
        "--io-mode",
        "--engine",
        "--batch",
        "--depth",
        "--mbrc",
        "--out",
        "--json",
        "--seed",
        "--fresh",
    ] {
        assert!(help.contains(opt), "help lacks {opt}");
    }
    let out = env.output(&["--version"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
}

/// Commands that take a path, not `--target`, speak of the path as typed.
#[test]
fn commands_without_target_do_not_speak_of_it() {
    assert_usage_error(&["map", "/nonexistent/dbio-test"], "/nonexistent/dbio-test");
    assert_usage_error(&["clean", "/dev/null"], "not a data set directory");
    for args in [
        ["map", "/nonexistent/dbio-test"].as_slice(),
        ["clean", "/dev/null"].as_slice(),
        ["verify", "/dev/null"].as_slice(),
    ] {
        let out = Env::new().output(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("--target"), "{args:?}: {stderr}");
    }
    // `dbio run` names its own option.
    assert_usage_error(
        &["run", "read-iops", "--target", "/dev/null"],
        "--target /dev/null is neither",
    );
}
