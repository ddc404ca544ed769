//! Helpers that make each test read like a usage example: a temporary working directory,
//! `dbio` run inside it, its JSON parsed.
//!
//! A command is built as it would be typed and ends with how the test looks at it:
//!
//! ```text
//! let r = env.run("read-iops").size("64M").sessions(2).duration("1s").json();
//! let out = env.prepare().target("ds").size("8M").out();
//! env.run("read-iops").sessions(0).refused(&["--sessions"]);
//! env.run("read-iops").target("/proc/x").refused_leaving_nothing(&["--target"]);
//! ```
//!
//! [`assert_refused`] is the one check of a refusal of bad input (exit 2, one `error:` line
//! naming the words, nothing on stdout); `refused_leaving_nothing` adds that nothing was
//! created, removed or recorded. `env.json(&[..])`, `env.output(&[..])` and [`quick`] still
//! take an argv.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// A temporary working directory; `dbio` runs inside it, so the default data set
/// (`./dbio-data`) and runs (`./dbio-runs`) land here and vanish with it. The results store
/// goes to a second temporary directory (`XDG_DATA_HOME`), never to the user's own.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub data_home: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let temp = || {
            tempfile::Builder::new()
                .prefix("dbio-test-")
                .tempdir()
                .expect("temp dir")
        };
        Env {
            dir: temp(),
            data_home: temp(),
        }
    }

    /// A results store file of this environment, for `--db`.
    pub fn db(&self, name: &str) -> String {
        self.data_home.path().join(name).display().to_string()
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// `dbio` with the working directory set to this environment.
    /// `DBIO_TEST_BIN=PATH` tests that binary (e.g. the portable build) instead of cargo's.
    pub fn dbio(&self) -> Command {
        let mut c = match std::env::var_os("DBIO_TEST_BIN") {
            Some(bin) => Command::new(bin),
            None => Command::cargo_bin("dbio").expect("dbio binary"),
        };
        c.current_dir(self.path())
            .env("XDG_DATA_HOME", self.data_home.path())
            .env_remove("DBIO_DB");
        c
    }

    /// The same `dbio` as a plain process, for tests that hold its pipes themselves.
    pub fn process(&self) -> std::process::Command {
        let bin = std::env::var_os("DBIO_TEST_BIN")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| assert_cmd::cargo::cargo_bin("dbio"));
        let mut c = std::process::Command::new(bin);
        c.current_dir(self.path())
            .env("XDG_DATA_HOME", self.data_home.path())
            .env_remove("DBIO_DB");
        c
    }

    /// Runs `dbio args...`, expects exit 0, returns stdout parsed as JSON. The argv form of
    /// [`Dbio::json`], kept for tests that build their command lines as slices.
    #[allow(dead_code)]
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.dbio().args(args).output().expect("run dbio");
        assert!(
            out.status.success(),
            "dbio {args:?} failed ({:?}):\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("dbio {args:?}: stdout is not JSON ({e})"))
    }

    /// Runs `dbio args...` and returns everything it did (the argv form of [`Dbio::out`]).
    #[allow(dead_code)]
    pub fn output(&self, args: &[&str]) -> Output {
        self.dbio().args(args).output().expect("run dbio")
    }
}

/// A `dbio` command line being built, run in its [`Env`]: the test says what it runs the way
/// a user would type it — `env.run("read-iops").size("64M").sessions(2).json()` — and ends
/// with how it looks at the outcome: [`json`](Dbio::json) (exit 0, stdout parsed),
/// [`ok`](Dbio::ok) (exit 0, the output), [`out`](Dbio::out) (whatever happened),
/// [`refused`](Dbio::refused) (a refusal of bad input). Options are added in the order the
/// methods are called; [`arg`](Dbio::arg) and [`args`](Dbio::args) add anything else.
#[must_use = "a command does nothing until it is run (json, ok, out, refused, ...)"]
pub struct Dbio<'e> {
    env: &'e Env,
    args: Vec<OsString>,
    vars: Vec<(OsString, OsString)>,
    dir: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
}

impl Env {
    /// `dbio COMMAND`, to be completed with options.
    pub fn cmd(&self, command: &str) -> Dbio<'_> {
        Dbio {
            env: self,
            args: vec![command.into()],
            vars: Vec::new(),
            dir: None,
            stdin: None,
        }
    }

    /// `dbio` with no arguments yet (for `--version`, `--help`, a bare command line).
    pub fn bare(&self) -> Dbio<'_> {
        Dbio {
            args: Vec::new(),
            ..self.cmd("")
        }
    }

    /// `dbio run TEST`.
    pub fn run(&self, test: &str) -> Dbio<'_> {
        self.cmd("run").arg(test)
    }

    /// `dbio run --job JOB`.
    pub fn run_job(&self, job: impl AsRef<OsStr>) -> Dbio<'_> {
        self.cmd("run").job(job)
    }

    /// `dbio run TEST` as [`quick`]: 256 MiB, 2 sessions, 2 s, no warm-up.
    pub fn quick(&self, test: &str) -> Dbio<'_> {
        self.run(test)
            .size("256M")
            .sessions(2)
            .duration("2s")
            .warmup("0s")
    }

    /// `dbio prepare`.
    pub fn prepare(&self) -> Dbio<'_> {
        self.cmd("prepare")
    }

    /// `dbio clean TARGET`.
    pub fn clean(&self, target: impl AsRef<OsStr>) -> Dbio<'_> {
        self.cmd("clean").arg(target)
    }

    /// `dbio runs`.
    pub fn runs(&self) -> Dbio<'_> {
        self.cmd("runs")
    }

    /// `dbio show RUN`.
    pub fn show(&self, run: impl AsRef<OsStr>) -> Dbio<'_> {
        self.cmd("show").arg(run)
    }

    /// `dbio report DIR`.
    pub fn report(&self, dir: impl AsRef<OsStr>) -> Dbio<'_> {
        self.cmd("report").arg(dir)
    }

    /// `dbio verify`.
    pub fn verify(&self) -> Dbio<'_> {
        self.cmd("verify")
    }

    /// `dbio sweep`.
    pub fn sweep(&self) -> Dbio<'_> {
        self.cmd("sweep")
    }

    /// `dbio mem`.
    pub fn mem(&self) -> Dbio<'_> {
        self.cmd("mem")
    }

    /// `dbio size`.
    pub fn sizing(&self) -> Dbio<'_> {
        self.cmd("size")
    }

    /// `dbio doctor`.
    pub fn doctor(&self) -> Dbio<'_> {
        self.cmd("doctor")
    }

    /// What a refusal must leave as it was: every name under the working directory and under
    /// the results store's directory, and the runs the store lists (`runs --json`, which
    /// creates nothing).
    pub fn state(&self) -> (Vec<String>, Vec<String>, Vec<u8>) {
        let runs = self.runs().arg("--json").out();
        assert!(
            runs.status.success(),
            "dbio runs --json: {}",
            String::from_utf8_lossy(&runs.stderr)
        );
        (tree(self.path()), tree(self.data_home.path()), runs.stdout)
    }
}

impl<'e> Dbio<'e> {
    /// Adds one argument as it is.
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_owned());
        self
    }

    /// Adds arguments as they are.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// `NAME VALUE`, for any option with a value.
    pub fn opt(self, name: &str, value: impl std::fmt::Display) -> Self {
        self.arg(name).arg(value.to_string())
    }

    /// `NAME PATH`, for an option whose value is a path.
    pub fn path_opt(self, name: &str, path: impl AsRef<OsStr>) -> Self {
        self.arg(name).arg(path)
    }

    pub fn size(self, v: impl std::fmt::Display) -> Self {
        self.opt("--size", v)
    }
    pub fn sessions(self, v: impl std::fmt::Display) -> Self {
        self.opt("--sessions", v)
    }
    pub fn duration(self, v: impl std::fmt::Display) -> Self {
        self.opt("--duration", v)
    }
    pub fn warmup(self, v: impl std::fmt::Display) -> Self {
        self.opt("--warmup", v)
    }
    pub fn depth(self, v: impl std::fmt::Display) -> Self {
        self.opt("--depth", v)
    }
    pub fn engine(self, v: impl std::fmt::Display) -> Self {
        self.opt("--engine", v)
    }
    pub fn io_mode(self, v: impl std::fmt::Display) -> Self {
        self.opt("--io-mode", v)
    }
    pub fn files(self, v: impl std::fmt::Display) -> Self {
        self.opt("--files", v)
    }
    pub fn block_size(self, v: impl std::fmt::Display) -> Self {
        self.opt("--block-size", v)
    }
    pub fn fill(self, v: impl std::fmt::Display) -> Self {
        self.opt("--fill", v)
    }
    pub fn rate(self, v: impl std::fmt::Display) -> Self {
        self.opt("--rate", v)
    }
    pub fn param(self, v: impl std::fmt::Display) -> Self {
        self.opt("--param", v)
    }
    pub fn sizes(self, v: impl std::fmt::Display) -> Self {
        self.opt("--sizes", v)
    }
    pub fn only(self, v: impl std::fmt::Display) -> Self {
        self.opt("--only", v)
    }
    pub fn budget(self, v: impl std::fmt::Display) -> Self {
        self.opt("--budget", v)
    }
    /// `--target DIR`: where the data set is.
    pub fn target(self, dir: impl AsRef<OsStr>) -> Self {
        self.path_opt("--target", dir)
    }
    /// `--out DIR`: where the run directory goes.
    pub fn out_dir(self, dir: impl AsRef<OsStr>) -> Self {
        self.path_opt("--out", dir)
    }
    /// `--db FILE`: the results store.
    pub fn db(self, file: impl AsRef<OsStr>) -> Self {
        self.path_opt("--db", file)
    }
    /// `--job FILE`.
    pub fn job(self, file: impl AsRef<OsStr>) -> Self {
        self.path_opt("--job", file)
    }
    pub fn async_(self) -> Self {
        self.arg("--async")
    }
    pub fn sync_(self) -> Self {
        self.arg("--sync")
    }
    pub fn yes(self) -> Self {
        self.arg("--yes")
    }
    pub fn destructive(self) -> Self {
        self.arg("--destructive")
    }
    pub fn fresh(self) -> Self {
        self.arg("--fresh")
    }
    pub fn verify_data(self) -> Self {
        self.arg("--verify")
    }
    pub fn quiet(self) -> Self {
        self.arg("--quiet")
    }

    /// Sets an environment variable for this run.
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.vars
            .push((name.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Sets environment variables for this run.
    pub fn envs(mut self, vars: &[(&str, &str)]) -> Self {
        for (k, v) in vars {
            self = self.env(k, v);
        }
        self
    }

    /// Runs in `dir` instead of the environment's working directory.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Feeds `bytes` to its stdin.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// The command line, for messages.
    pub fn line(&self) -> String {
        let words: Vec<String> = self
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        format!("dbio {}", words.join(" "))
    }

    /// The command as an `assert_cmd` command, for tests that drive it further.
    pub fn command(&self) -> Command {
        let mut c = self.env.dbio();
        c.args(&self.args);
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        if let Some(d) = &self.dir {
            c.current_dir(d);
        }
        if let Some(s) = &self.stdin {
            c.write_stdin(s.clone());
        }
        c
    }

    /// The command as a plain process, for tests that hold its pipes themselves.
    pub fn process(&self) -> std::process::Command {
        let mut c = self.env.process();
        c.args(&self.args);
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        if let Some(d) = &self.dir {
            c.current_dir(d);
        }
        c
    }

    /// Runs it; everything it did, whatever the exit status.
    pub fn out(self) -> Output {
        self.command().output().expect("run dbio")
    }

    /// Runs it and expects exit 0 (stderr in the failure).
    #[track_caller]
    pub fn ok(self) -> Output {
        let line = self.line();
        let out = self.out();
        assert!(
            out.status.success(),
            "{line} failed ({:?}):\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Runs it with `--json` (added unless it is there), expects exit 0 and returns stdout
    /// parsed.
    #[track_caller]
    pub fn json(self) -> Value {
        let this = if self.args.iter().any(|a| a == "--json") {
            self
        } else {
            self.arg("--json")
        };
        let line = this.line();
        let out = this.ok();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{line}: stdout is not JSON ({e})"))
    }

    /// Runs it, expects exit 0 and returns stdout as text.
    #[track_caller]
    pub fn stdout(self) -> String {
        String::from_utf8_lossy(&self.ok().stdout).into_owned()
    }

    /// Runs it and checks it is refused as bad input ([`assert_refused`]); the error line.
    #[track_caller]
    pub fn refused(self, words: &[&str]) -> String {
        let line = self.line();
        refusal_line(&line, &self.out(), words)
    }

    /// Runs it and checks it is refused as bad input ([`assert_refused`]) quickly (in well
    /// under 20 s: nothing was measured) and that it left everything as it was: nothing
    /// created or removed under the working directory or the results store's directory, no
    /// run recorded ([`Env::state`]). Returns what it printed.
    #[track_caller]
    pub fn refused_leaving_nothing(self, words: &[&str]) -> Output {
        let env = self.env;
        let line = self.line();
        let before = env.state();
        let t0 = Instant::now();
        let out = self.out();
        let took = t0.elapsed();
        refusal_line(&line, &out, words);
        assert!(
            took < Duration::from_secs(20),
            "{line}: took {took:?}, as if measured"
        );
        let after = env.state();
        assert_eq!(
            (&after.0, &after.1),
            (&before.0, &before.1),
            "{line}: something was created or removed (working directory, results store)"
        );
        assert_eq!(
            String::from_utf8_lossy(&after.2),
            String::from_utf8_lossy(&before.2),
            "{line}: a run was recorded"
        );
        out
    }
}

/// A short run on a small data set: 2 sessions, 256 MiB, no warm-up. The argv form of
/// [`Env::quick`], kept for tests that build their command lines as slices.
#[allow(dead_code)]
pub fn quick<'a>(test: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        test,
        "--size",
        "256M",
        "--sessions",
        "2",
        "--duration",
        "2s",
        "--warmup",
        "0s",
        "--json",
    ];
    v.extend_from_slice(extra);
    v
}

/// The one event of a single-event test.
pub fn event(r: &Value) -> &Value {
    let events = r["events"].as_array().expect("events");
    assert_eq!(events.len(), 1, "one event expected: {events:?}");
    &events[0]
}

/// The event called `name` of a result.
pub fn event_named<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no event {name:?} in {}", r["events"]))
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Checks the arithmetic every result must satisfy (SPEC §6): bytes = requests × request
/// size; IOPS and MiB/s follow from the measured seconds; the power-of-two histogram and the
/// per-second history add up to the request count; percentiles are monotone.
pub fn assert_consistent(r: &Value) {
    assert_eq!(r["schema"], "dbio.result.v1");
    let secs = f(&r["measured_seconds"]);
    assert!(secs > 0.0, "measured_seconds {secs}");
    let request_bytes = u(&r["config"]["request_bytes"]);
    for e in r["events"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let requests = u(&e["requests"]);
        assert!(requests > 0, "{name}: no requests");
        assert_eq!(u(&e["bytes"]), requests * request_bytes, "{name}: bytes");
        assert!(
            (f(&e["iops"]) - requests as f64 / secs).abs() < 1e-6 * requests as f64,
            "{name}: iops"
        );
        let mib = u(&e["bytes"]) as f64 / secs / (1u64 << 20) as f64;
        assert!(
            (f(&e["mib_per_s"]) - mib).abs() < 1e-6 * mib.max(1.0),
            "{name}: mib_per_s"
        );
        let hist: u64 = e["histogram_micro"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| u(&b["count"]))
            .sum();
        assert_eq!(hist, requests, "{name}: histogram_micro counts");
        let lt: Vec<u64> = e["histogram_micro"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| u(&b["lt_us"]))
            .collect();
        assert_eq!(lt[0], 1, "{name}: buckets start at <1 µs");
        assert!(
            lt.windows(2).all(|w| w[1] == 2 * w[0]),
            "{name}: power-of-two buckets"
        );
        // A batch whose requests all finished in the window but whose wait did not end there
        // (a DBWR batch of 2 s on a disk another workload saturated: 130-230 ms a write) has
        // no wait to time; accepted only when the run itself says so of this event.
        let said = (r["warnings"].as_array().into_iter().flatten())
            .filter_map(|w| w.as_str())
            .any(|w| w.starts_with(&format!("\"{name}\": ")) && w.contains("none of its waits"));
        let no_wait_ended = u(&e["waits"]) == 0 && said;
        for key in ["latency_us", "wait_latency_us"] {
            if key == "wait_latency_us" && no_wait_ended {
                continue;
            }
            let l = &e[key];
            let p: Vec<f64> = ["p50", "p90", "p95", "p99", "p99_9", "p99_99", "max"]
                .iter()
                .map(|k| f(&l[k]))
                .collect();
            assert!(
                p.windows(2).all(|w| w[0] <= w[1]),
                "{name}: {key} percentiles not monotone: {p:?}"
            );
            assert!(
                f(&l["mean"]) > 0.0 && f(&l["mean"]) <= p[6],
                "{name}: {key} mean {} (max {}): {e}\nwarnings: {}",
                l["mean"],
                p[6],
                r["warnings"]
            );
        }
        let waits = u(&e["waits"]);
        assert!(
            (waits > 0 || no_wait_ended) && waits <= requests,
            "{name}: waits {waits} vs requests {requests}"
        );
        let per_second: u64 = r["timeseries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["event"] == *name)
            .map(|p| u(&p["requests"]))
            .sum();
        assert_eq!(per_second, requests, "{name}: per-second requests add up");
        let inflight = f(&e["iops"]) * f(&e["latency_us"]["mean"]) / 1e6;
        assert!(
            (f(&e["inflight_avg"]) - inflight).abs() <= 0.01 * inflight.max(0.01),
            "{name}: inflight_avg is IOPS × mean"
        );
        assert_eq!(u(&e["errors"]), 0, "{name}: errors");
    }
    let t = &r["totals"];
    let iops: f64 = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| f(&e["iops"]))
        .sum();
    assert!((f(&t["read_iops"]) + f(&t["write_iops"]) - iops).abs() < 1e-6 * iops);
}

/// Files in `dir` (recursively), relative paths, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out.sort();
    out
}

/// How many tests (or parts of tests) were skipped so far in this test binary.
static SKIPPED: AtomicUsize = AtomicUsize::new(0);

/// The one way a test gives up because the machine lacks something it needs (root, a loop
/// device, /dev/shm, sshd, a tool): every early return for a missing precondition goes
/// through here (tests/skips.rs checks that none goes around it).
///
/// With `DBIO_TESTS_STRICT=1` (CI, where `.ci/install-deps` installed everything) a missing
/// precondition is a failure: this panics. Otherwise it counts the skip and says so on the
/// real stderr, which libtest does not capture (it captures only the print macros), so a
/// skipped test is seen even though it passes. Returns `()` so a test can `return skip(..)`.
pub fn skip(why: &str) {
    if std::env::var_os("DBIO_TESTS_STRICT").is_some_and(|v| v == "1") {
        panic!("precondition missing: {why} (DBIO_TESTS_STRICT=1)");
    }
    let n = SKIPPED.fetch_add(1, Ordering::SeqCst) + 1;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(std::io::stderr(), "skipped ({n} so far): {test}: {why}");
}

/// A new directory for programs a test has dbio run (an ssh stand-in, a `--pg-bin`): dbio
/// runs no program another user could have replaced, so not one under /tmp (writable by
/// everyone, sticky or not). It is made under cargo's target directory, else /run, the
/// first where every directory from `/` down belongs to root or this user and no other may
/// write; None (through `skip`) where there is none.
pub fn program_dir() -> Option<tempfile::TempDir> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let safe = |dir: &Path| -> bool {
        let Ok(dir) = std::fs::canonicalize(dir) else {
            return false;
        };
        dir.ancestors().all(|d| {
            std::fs::metadata(d)
                .is_ok_and(|m| (m.uid() == 0 || m.uid() == me) && m.mode() & 0o022 == 0)
        })
    };
    for base in [Path::new(env!("CARGO_TARGET_TMPDIR")), Path::new("/run")] {
        if !safe(base) {
            continue;
        }
        if let Ok(d) = tempfile::Builder::new()
            .prefix("dbio-test-programs-")
            .tempdir_in(base)
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            return Some(d);
        }
    }
    skip(&format!(
        "no directory only root or this user may change for test programs ({} nor /run)",
        env!("CARGO_TARGET_TMPDIR")
    ));
    None
}

/// Whether the tests run as root (loop devices, mounts, dropping privileges need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Runs a command quietly; true when it succeeded.
pub fn sh(cmd: &str, args: &[&str]) -> bool {
    std::process::Command::new(cmd)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A mount made by a test, unmounted when dropped (even when the test fails).
pub struct Mount(pub PathBuf);

impl Mount {
    /// `mount -t TYPE -o OPTIONS SOURCE DIR`; None (through [`skip`]) when that fails.
    pub fn new(fstype: &str, options: &str, source: &str, dir: &Path) -> Option<Mount> {
        std::fs::create_dir_all(dir).unwrap();
        let d = dir.to_str().unwrap();
        if sh("mount", &["-t", fstype, "-o", options, source, d]) {
            Some(Mount(dir.to_path_buf()))
        } else {
            skip(&format!("cannot mount {fstype} on {d} here"));
            None
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if !sh("umount", &[self.0.to_str().unwrap()]) {
            sh("umount", &["-l", self.0.to_str().unwrap()]);
        }
    }
}

/// Held while a test attaches a loop device. `losetup --find` asks the kernel for a free
/// device and opens it; when two race for the same one, the loser holds it open a moment
/// while the winner's test already runs dbio on it, and dbio rightly refuses a device
/// another program has open. One attach at a time in this process avoids that.
pub static LOSETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A loop device over an image file, detached when dropped (even when the test fails) —
/// only while it is still attached to an image this value attached: a device the kernel
/// detached by itself (`losetup -d` while dbio held it) may be another test's by then.
pub struct Loop {
    pub dev: PathBuf,
    /// The images attached through this value, by (device, inode).
    images: std::sync::Mutex<Vec<(u64, u64)>>,
}

/// (device, inode) of a file, as loop_info64 encodes the device (`huge_encode_dev`).
fn loop_key(image: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(image).ok()?;
    let (major, minor) = (
        u64::from(libc::major(md.dev())),
        u64::from(libc::minor(md.dev())),
    );
    Some((
        (minor & 0xff) | (major << 8) | ((minor & !0xff) << 12),
        md.ino(),
    ))
}

impl Loop {
    /// Attaches `image`, optionally with a logical sector size; None (through [`skip`]) when
    /// loop devices are not available.
    pub fn new(image: &Path, sector_size: Option<u32>) -> Option<Loop> {
        let size = sector_size.map(|s| s.to_string());
        let opts: Vec<&str> = match &size {
            Some(s) => vec!["--sector-size", s],
            None => Vec::new(),
        };
        Loop::with(image, &opts)
    }

    /// Attaches `image` with further `losetup` options (`-P`, `--offset N`); None (through
    /// [`skip`]) when loop devices are not available.
    pub fn with(image: &Path, opts: &[&str]) -> Option<Loop> {
        if !is_root() {
            skip("loop devices need root");
            return None;
        }
        let out = {
            let _one = LOSETUP.lock().unwrap_or_else(|e| e.into_inner());
            std::process::Command::new("losetup")
                .args(["--find", "--show"])
                .args(opts)
                .arg(image)
                .output()
        };
        match out {
            Ok(o) if o.status.success() => Some(Loop::attached(
                PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
                image,
            )),
            _ => {
                skip("cannot attach a loop device here (losetup --find --show)");
                None
            }
        }
    }

    /// The loop device `dev`, just attached to `image` by the caller (under [`LOSETUP`]).
    pub fn attached(dev: PathBuf, image: &Path) -> Loop {
        Loop {
            dev,
            images: std::sync::Mutex::new(loop_key(image).into_iter().collect()),
        }
    }

    /// A blank image of `size` bytes in `dir`, attached.
    pub fn blank(dir: &Path, name: &str, size: u64) -> Option<Loop> {
        let image = dir.join(name);
        std::fs::File::create(&image)
            .unwrap()
            .set_len(size)
            .unwrap();
        Loop::new(&image, None)
    }

    pub fn path(&self) -> &str {
        self.dev.to_str().unwrap()
    }

    /// The device's whole content.
    pub fn read_all(&self) -> Vec<u8> {
        std::fs::read(&self.dev).unwrap()
    }

    /// What the kernel says the device is attached to (LOOP_GET_STATUS64): the backing
    /// file's (device, inode) as loop_info64 encodes them; None when attached to nothing.
    pub fn backing(&self) -> Option<(u64, u64)> {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(&self.dev).ok()?;
        // struct loop_info64: 232 bytes, lo_device and lo_inode first.
        let mut info = [0u64; 29];
        // SAFETY: a valid descriptor and a buffer of the size the ioctl writes.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), 0x4C05 as _, info.as_mut_ptr()) };
        (rc == 0).then_some((info[0], info[1]))
    }

    /// `losetup -d`: detached now, or (while someone holds it open) once they let go.
    pub fn detach(&self) -> bool {
        let _one = LOSETUP.lock().unwrap_or_else(|e| e.into_inner());
        sh("losetup", &["-d", self.path()])
    }

    /// `losetup DEV IMAGE`: this device attached to `image` (it must be detached).
    pub fn attach_again(&self, image: &Path) -> bool {
        let _one = LOSETUP.lock().unwrap_or_else(|e| e.into_inner());
        let ok = sh("losetup", &[self.path(), image.to_str().unwrap()]);
        if ok && let Some(key) = loop_key(image) {
            self.images
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(key);
        }
        ok
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _one = LOSETUP.lock().unwrap_or_else(|e| e.into_inner());
        let ours = self.images.lock().unwrap_or_else(|e| e.into_inner());
        // Attached to nothing, or to another's file: not this value's to detach.
        if self.backing().is_some_and(|b| ours.contains(&b)) {
            sh("losetup", &["-d", self.path()]);
        }
    }
}

/// A data set directory on /dev/shm (tmpfs) for this test, removed with it; `None` (through
/// [`skip`]) where there is no /dev/shm.
pub fn shm_dir() -> Option<tempfile::TempDir> {
    if !std::path::Path::new("/dev/shm").is_dir() {
        skip("no /dev/shm");
        return None;
    }
    Some(
        tempfile::Builder::new()
            .prefix("dbio-test-")
            .tempdir_in("/dev/shm")
            .expect("temp dir in /dev/shm"),
    )
}

/// Waits (up to 60 s) until process `pid` holds the lock of the data set in `dir` (a flock
/// on its `dbio-lock` file), as /proc/locks shows it: a run has its data set by then.
pub fn wait_locked(dir: &Path, pid: u32) {
    use std::os::unix::fs::MetadataExt;
    let t0 = std::time::Instant::now();
    loop {
        if let Ok(md) = std::fs::metadata(dir.join("dbio-lock")) {
            let (major, minor) = (libc::major(md.dev()), libc::minor(md.dev()));
            let want = format!("{major:02x}:{minor:02x}:{}", md.ino());
            let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
            if locks.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.get(1) == Some(&"FLOCK")
                    && f.get(4) == Some(&pid.to_string().as_str())
                    && f.get(5) == Some(&want.as_str())
            }) {
                return;
            }
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "pid {pid} never locked {}",
            dir.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Files process `pid` holds open that have no name (O_TMPFILE, or deleted), as
/// /proc/PID/fd shows them.
pub fn unnamed_open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .filter(|t| t.to_string_lossy().ends_with(" (deleted)"))
                .count()
        })
        .unwrap_or(0)
}

/// Every entry under `dir` (directories too), relative, sorted; symlinks not followed.
pub fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            out.push(p.strip_prefix(base).unwrap().display().to_string());
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                walk(base, &p, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Checks that `out` is a refusal of bad input: exit 2, exactly one line on stderr,
/// `error: ` naming each of `words`, nothing on stdout. Returns that line.
#[track_caller]
pub fn assert_refused(out: &Output, words: &[&str]) -> String {
    refusal_line("refused", out, words)
}

/// [`assert_refused`] with `what` naming the case in a failure.
#[track_caller]
pub fn refusal_line(what: &str, out: &Output, words: &[&str]) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{what}: one line expected: {err}");
    assert!(lines[0].starts_with("error: "), "{what}: {err}");
    for w in words {
        assert!(
            lines[0].contains(w),
            "{what}: {w:?} missing in: {}",
            lines[0]
        );
    }
    assert!(out.stdout.is_empty(), "{what}: printed {:?}", out.stdout);
    lines[0].to_string()
}

/// The `.rs` files under `dir`, recursively (the tests that read the sources as a reviewer
/// would: layers, literals, docs).
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// A child dbio that is killed (and reaped) when this is dropped, also when the test
/// fails: a stopped or long run must not outlive its test and write where the test's
/// directories were.
pub struct Killed(pub std::process::Child);

impl std::ops::Deref for Killed {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Killed {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The one run or sweep directory under `<env>/dbio-runs` whose name contains `what`.
pub fn only_run_dir(env: &Env, what: &str) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(env.join("dbio-runs"))
        .expect("dbio-runs")
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(what))
        .collect();
    assert_eq!(dirs.len(), 1, "one {what} directory: {dirs:?}");
    dirs[0].clone()
}

/// The JSON file at `p`, parsed; a missing or broken file names itself.
pub fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A dbio process started with `--progress always`, its stderr read as it comes: a test
/// waits for a phase ("measuring") instead of sleeping a fixed time, which a loaded machine
/// (builds, tests beside it) outlasts.
pub struct Running {
    pub child: std::process::Child,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Running {
    /// Starts `cmd` with stdout and stderr piped and progress drawn on stderr.
    pub fn spawn(mut cmd: std::process::Command) -> Running {
        use std::io::Read;
        let mut child = cmd
            .args(["--progress", "always"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                (sink.lock().unwrap()).push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Running {
            child,
            stderr,
            reader: Some(reader),
        }
    }

    /// Waits until stderr shows `text` (a progress line's phase); panics with what it
    /// printed if the process ends or a minute passes first.
    pub fn wait_for(&mut self, text: &str) {
        let t0 = Instant::now();
        while !self.stderr.lock().unwrap().contains(text) {
            if t0.elapsed() > Duration::from_secs(60) || self.child.try_wait().unwrap().is_some() {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("never showed {text:?}: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything written on stderr (call once the process has ended).
    pub fn stderr(&mut self) -> String {
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        self.stderr.lock().unwrap().clone()
    }

    /// Waits for the process; its exit code and stdout.
    pub fn finish(&mut self) -> (Option<i32>, Vec<u8>) {
        use std::io::Read;
        let mut out = Vec::new();
        if let Some(mut o) = self.child.stdout.take() {
            o.read_to_end(&mut out).unwrap();
        }
        (self.child.wait().unwrap().code(), out)
    }
}
