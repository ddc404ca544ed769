//! Bad input: one line naming the option and what is accepted, exit status 2, no panic.

use crate::util::Env;

/// Bad input is refused with one line naming the option and leaves everything as it was (no
/// data set, nothing recorded).
#[test]
fn bad_values_exit_2_with_one_line() {
    let env = Env::new();
    env.run("read-iops")
        .sessions(0)
        .refused_leaving_nothing(&["--sessions"]);
    env.run("read-iops")
        .block_size(3000)
        .refused_leaving_nothing(&["power of two"]);
    env.run("read-iops")
        .io_mode("fast")
        .refused_leaving_nothing(&["none, directio, asynch, setall"]);
    env.run("read-iops")
        .duration("-5s")
        .refused_leaving_nothing(&["--duration"]);
    env.run("read-iops")
        .size("12Q")
        .refused_leaving_nothing(&["unknown unit 'Q'"]);
    env.run("read-iops")
        .engine("io_uring")
        .refused_leaving_nothing(&["auto, uring, aio, sync"]);
    env.run("read-iops")
        .duration("0s")
        .refused_leaving_nothing(&["--duration"]);
    env.run("fastest").refused_leaving_nothing(&["read-iops"]);
    env.run("read-iops")
        .sync_()
        .async_()
        .refused_leaving_nothing(&["--async"]);
    env.run("read-iops")
        .size("1K")
        .refused_leaving_nothing(&["--size"]);
    env.run("read-iops")
        .opt("--mbrc", 0)
        .refused_leaving_nothing(&["--mbrc"]);
}

#[test]
fn missing_target_says_what_to_do() {
    let env = Env::new();
    let out = env.run("read-iops").target("no/such/dir").out();
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
    let out = env.cmd("run").arg("--help").out();
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
    let out = env.bare().arg("--version").out();
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
}

/// Commands that take a path, not `--target`, speak of the path as typed.
#[test]
fn commands_without_target_do_not_speak_of_it() {
    let env = Env::new();
    env.cmd("map")
        .arg("/nonexistent/dbio-test")
        .refused_leaving_nothing(&["/nonexistent/dbio-test"]);
    env.clean("/dev/null")
        .refused_leaving_nothing(&["not a data set directory"]);
    for args in [
        ["map", "/nonexistent/dbio-test"].as_slice(),
        ["clean", "/dev/null"].as_slice(),
        ["verify", "/dev/null"].as_slice(),
    ] {
        let out = Env::new().bare().args(args).out();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("--target"), "{args:?}: {stderr}");
    }
    // `dbio run` names its own option.
    env.run("read-iops")
        .target("/dev/null")
        .refused_leaving_nothing(&["--target /dev/null is neither"]);
}

/// `dbio … 2>&1 | head -c 20`: stdout and stderr are a pipe nobody reads any more. The run
/// goes on to its end (exit 0, its run directory and store record made), where `eprintln!` panicked with exit 101 on the first line after the reader left.
#[test]
fn a_run_whose_output_pipe_closed_ends_normally() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let env = Env::new();
    let mut fds = [0; 2];
    // SAFETY: a new pipe; both ends are owned below.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: descriptors just made, owned here only.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    let status = env
        .run("read-iops")
        .engine("null")
        .size("64M")
        .duration("1s")
        .process()
        .arg("--warmup=0s")
        .stdout(write.try_clone().unwrap())
        .stderr(write)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "{status}");
    let runs = env.json(&["runs", "--json"]);
    assert_eq!(runs.as_array().map(|a| a.len()), Some(1), "{runs}");
    let dirs: Vec<_> = std::fs::read_dir(env.path().join("dbio-runs"))
        .unwrap()
        .flatten()
        .filter(|d| d.path().join("result.json").is_file())
        .collect();
    assert_eq!(dirs.len(), 1, "one run directory with its result.json");
}
