//! One run across hosts (`--hosts`, issue 15): two sshd instances of this machine, on
//! 127.0.0.1 and 127.0.0.2, act as two hosts. Each test starts its own, with keys made in
//! its temporary directory, and kills them when it ends. Without sshd or root the tests
//! are skipped through `util::skip` (`.ci/install-deps` installs openssh-server, and CI's
//! `DBIO_TESTS_STRICT=1` makes a missing one a failure).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{Dbio, Env, Running, f, is_root, skip, u};

const SSHD: &str = "/usr/sbin/sshd";

/// Two (or more) sshd instances, one per loopback address, and what a client needs.
struct Hosts {
    env: Env,
    keys: tempfile::TempDir,
    sshds: Vec<Child>,
    /// The ssh client configuration (`--ssh "ssh -F FILE"`).
    config: PathBuf,
    /// A remote dbio that keeps its results store in this test's own place and is marked,
    /// so the test finds its agents among all processes.
    remote: PathBuf,
    mark: String,
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for c in &mut self.sshds {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn run_quiet(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A port free on both 127.0.0.1 and 127.0.0.2.
fn free_port() -> u16 {
    loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        if std::net::TcpListener::bind(("127.0.0.2", port)).is_ok() {
            return port;
        }
    }
}

fn write_script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

impl Hosts {
    /// sshd on `addrs` (loopback addresses), all on one port; None (through `skip`) where
    /// there is no sshd or no root.
    fn start(addrs: &[&str]) -> Option<Hosts> {
        if !Path::new(SSHD).exists() {
            skip(&format!(
                "no {SSHD} (apt-get install openssh-server; .ci/install-deps does)"
            ));
            return None;
        }
        if !is_root() {
            skip("the test sshd needs root");
            return None;
        }
        // sshd wants its privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let keys = tempfile::Builder::new()
            .prefix("dbio-test-ssh-")
            .tempdir()
            .unwrap();
        let k = keys.path();
        for name in ["host_key", "user_key"] {
            let key = k.join(name);
            assert!(
                run_quiet(
                    "ssh-keygen",
                    &["-q", "-t", "ed25519", "-N", "", "-f", key.to_str().unwrap()]
                ),
                "ssh-keygen failed"
            );
        }
        std::fs::copy(k.join("user_key.pub"), k.join("authorized_keys")).unwrap();
        // Every session of the test sshds gets this test's store and mark, pushed binaries
        // too: an agent records its data sets in its host's store, never in the user's.
        let env = Env::new();
        let mark = format!("dbio-cluster-test-{}", fastrand_mark());
        let remote_data = env.data_home.path().join("remote");
        let port = free_port();
        let mut sshds = Vec::new();
        for (i, addr) in addrs.iter().enumerate() {
            let conf = k.join(format!("sshd{i}.conf"));
            std::fs::write(
                &conf,
                format!(
                    "Port {port}\nListenAddress {addr}\nHostKey {}\nAuthorizedKeysFile {}\nStrictModes no\nUsePAM no\nPidFile {}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\nLogLevel ERROR\nSetEnv XDG_DATA_HOME={} DBIO_TEST_MARK={mark}\n",
                    k.join("host_key").display(),
                    k.join("authorized_keys").display(),
                    k.join(format!("sshd{i}.pid")).display(),
                    remote_data.display()
                ),
            )
            .unwrap();
            let child = Command::new(SSHD)
                .args(["-D", "-e", "-f", conf.to_str().unwrap()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start sshd");
            sshds.push(child);
        }
        let config = k.join("ssh_config");
        std::fs::write(
            &config,
            format!(
                "Host *\n  Port {port}\n  IdentityFile {}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n",
                k.join("user_key").display()
            ),
        )
        .unwrap();
        let remote = k.join("dbio-remote");
        write_script(
            &remote,
            &format!(
                "#!/bin/sh\nexport XDG_DATA_HOME={} DBIO_TEST_MARK={mark}\nexec {} \"$@\"\n",
                remote_data.display(),
                dbio_bin().display()
            ),
        );
        // Wait until every sshd listens.
        let t0 = Instant::now();
        for addr in addrs {
            while std::net::TcpStream::connect((*addr, port)).is_err() {
                assert!(
                    t0.elapsed() < Duration::from_secs(10),
                    "sshd never listened"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Some(Hosts {
            env,
            keys,
            sshds,
            config,
            remote,
            mark,
        })
    }

    fn ssh(&self) -> String {
        format!("ssh -F {}", self.config.display())
    }

    /// `cmd` on `--hosts HOSTS` through the test sshds, with this test's stores.
    fn dbio<'e>(&self, hosts: &str, cmd: Dbio<'e>) -> Dbio<'e> {
        cmd.opt("--hosts", hosts)
            .opt("--ssh", self.ssh())
            .path_opt("--remote-dbio", &self.remote)
    }

    /// The same as a child process, to act on while it runs.
    fn spawn(&self, hosts: &str, cmd: Dbio<'_>) -> Child {
        self.dbio(hosts, cmd)
            .process()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// The pids of this test's `dbio agent` processes.
    fn agents(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let marked = environ
                .split(|&b| b == 0)
                .any(|v| v == format!("DBIO_TEST_MARK={}", self.mark).as_bytes());
            if marked && cmdline.split(|&b| b == 0).any(|a| a == b"agent") {
                out.push(pid);
            }
        }
        out
    }
}

fn fastrand_mark() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos()
    )
}

fn dbio_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("dbio")
}

/// A short run on /dev/shm: one session, 32 MiB per host, `duration`.
fn short<'e>(env: &'e Env, test: &str, target: &str, duration: &str) -> Dbio<'e> {
    env.run(test)
        .target(target)
        .size("32M")
        .sessions(1)
        .duration(duration)
        .warmup("200ms")
        .io_mode("none")
        .arg("--json")
}

fn shm(name: &str) -> Option<tempfile::TempDir> {
    let _ = name;
    crate::util::shm_dir()
}

/// Checks what every run across the two hosts must hold.
fn check_merged(r: &Value) {
    let hosts = r["hosts"].as_array().expect("hosts");
    assert_eq!(hosts.len(), 2, "{hosts:?}");
    for (k, e) in r["events"].as_array().unwrap().iter().enumerate() {
        let name = e["name"].as_str().unwrap();
        let per_host: Vec<&Value> = hosts.iter().map(|h| &h["events"][k]).collect();
        let sum: u64 = per_host.iter().map(|h| u(&h["requests"])).sum();
        assert!(sum > 0, "{name}: nothing done");
        assert_eq!(
            u(&e["requests"]),
            sum,
            "{name}: merged requests = sum over hosts"
        );
        for p in ["p50", "p99"] {
            let own: Vec<f64> = per_host.iter().map(|h| f(&h["latency_us"][p])).collect();
            let lo = own.iter().cloned().fold(f64::MAX, f64::min);
            let hi = own.iter().cloned().fold(0.0, f64::max);
            let m = f(&e["latency_us"][p]);
            // Within the hosts' own (HDR buckets: 1 % either way).
            assert!(
                m >= lo * 0.99 - 0.01 && m <= hi * 1.01 + 0.01,
                "{name}: merged {p} {m} not between the hosts' {own:?}"
            );
        }
        let per_second: u64 = (r["timeseries"].as_array().unwrap().iter())
            .filter(|p| p["event"] == name)
            .map(|p| u(&p["requests"]))
            .sum();
        assert_eq!(per_second, sum, "{name}: merged seconds add up");
    }
    for h in hosts {
        assert!(h["clock_offset_us"].is_number(), "{h}");
        let unc = f(&h["clock_uncertainty_us"]);
        assert!(unc > 0.0 && unc < 1_000_000.0, "uncertainty {unc}");
        // Warm-up began within a few ms of the instant given to all.
        let skew = f(&h["start_skew_ms"]);
        assert!(skew.abs() < 50.0, "{}: started {skew} ms off", h["host"]);
    }
}

/// The network sockets process `pid` holds (TCP, UDP, or a named or listening Unix
/// socket), from /proc/PID/fd and /proc/net. (An unnamed socket pair, as a signal
/// handler's self-pipe, reaches nothing outside the process.)
fn network_sockets_of(pid: u32) -> Vec<String> {
    let mut inodes = Vec::new();
    for e in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        if let Ok(t) = std::fs::read_link(e.path()) {
            let t = t.to_string_lossy().into_owned();
            if let Some(i) = t.strip_prefix("socket:[") {
                inodes.push(i.trim_end_matches(']').to_string());
            }
        }
    }
    let mut found = Vec::new();
    for table in ["tcp", "tcp6", "udp", "udp6", "raw", "raw6", "unix"] {
        let text = std::fs::read_to_string(format!("/proc/net/{table}")).unwrap_or_default();
        for l in text.lines().skip(1) {
            let f: Vec<&str> = l.split_whitespace().collect();
            let inode = if table == "unix" { f.get(6) } else { f.get(9) };
            if !inode.is_some_and(|i| inodes.iter().any(|x| x == i)) {
                continue;
            }
            // unix: Flags 00010000 = listening; a path in column 8 = named.
            let counts = table != "unix" || f.get(3) == Some(&"00010000") || f.len() > 7;
            if counts {
                found.push(format!("{table}: {l}"));
            }
        }
    }
    found
}

/// Waits until both agents run; the coordinator's stderr if they never do.
fn wait_agents(h: &Hosts, child: &mut Child, t0: Instant) {
    while h.agents().len() < 2 {
        if t0.elapsed() > Duration::from_secs(30) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("the agents never ran: {}", stderr_of(child));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code();
        }
        if t0.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut s = String::new();
    child.stderr.take().unwrap().read_to_string(&mut s).unwrap();
    s
}

fn stdout_json(child: &mut Child) -> Value {
    stdout_json_or(child, "")
}

/// The JSON on the child's stdout; `stderr` is shown when there is none.
fn stdout_json_or(child: &mut Child, stderr: &str) -> Value {
    let mut s = String::new();
    child.stdout.take().unwrap().read_to_string(&mut s).unwrap();
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}\nstderr: {stderr}"))
}

#[test]
fn two_hosts_one_run_merged_histograms_no_socket() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("x")) else {
        return;
    };
    let target = format!("{}/ds-{{host}}", shm.path().display());
    let mut child = h.spawn(
        "127.0.0.1,127.0.0.2",
        short(&h.env, "read-iops", &target, "2s").sync_(),
    );
    // While it runs: the coordinator holds no socket and listens on nothing.
    let t0 = Instant::now();
    let mut looked = false;
    while t0.elapsed() < Duration::from_secs(30) && child.try_wait().unwrap().is_none() {
        if h.agents().len() == 2 {
            std::thread::sleep(Duration::from_millis(300));
            let sockets = network_sockets_of(child.id());
            assert!(sockets.is_empty(), "the coordinator's sockets: {sockets:?}");
            // Nor does any agent (ssh and sshd do the connecting).
            for agent in h.agents() {
                let sockets = network_sockets_of(agent);
                assert!(sockets.is_empty(), "agent {agent}'s sockets: {sockets:?}");
            }
            looked = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(looked, "the agents never ran");
    let code = wait_exit(&mut child, Duration::from_secs(60));
    let err = stderr_of(&mut child);
    assert_eq!(code, Some(0), "{err}");
    let r = stdout_json(&mut child);
    check_merged(&r);
    // {host} made one data set per host.
    for host in ["127.0.0.1", "127.0.0.2"] {
        let ds = shm.path().join(format!("ds-{host}"));
        assert!(ds.join("dbio-manifest.json").exists(), "{}", ds.display());
    }
    let hosts: Vec<&str> = (r["hosts"].as_array().unwrap().iter())
        .map(|x| x["dataset"]["path"].as_str().unwrap())
        .collect();
    assert_ne!(hosts[0], hosts[1]);
    // One run directory, its summary with a row per host; one run in the store.
    let runs: Vec<PathBuf> = std::fs::read_dir(h.env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let summary = std::fs::read_to_string(runs[0].join("summary.txt")).unwrap();
    assert!(summary.contains("Hosts"), "{summary}");
    for host in ["127.0.0.1", "127.0.0.2"] {
        assert!(
            summary.lines().any(|l| l.starts_with(host)),
            "no row for {host}:\n{summary}"
        );
    }
    let listed = h.env.runs().json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert!(h.agents().is_empty(), "agents left: {:?}", h.agents());
}

#[test]
fn metrics_across_hosts_are_the_merged_seconds() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("m")) else {
        return;
    };
    let target = format!("{}/ds-{{host}}", shm.path().display());
    let file = h.env.join("dbio.prom");
    let mut child = h.spawn(
        "127.0.0.1,127.0.0.2",
        short(&h.env, "read-iops", &target, "3s")
            .sync_()
            .path_opt("--metrics", &file)
            .arg("--metrics-keep"),
    );
    // While it runs, the file is a whole exposition each time it is read.
    let t0 = Instant::now();
    let mut seen = 0;
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(60) {
        if let Ok(text) = std::fs::read_to_string(&file)
            && text.contains("dbio_requests_total")
        {
            crate::steady::check_metrics(&text);
            seen += 1;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let code = wait_exit(&mut child, Duration::from_secs(60));
    let err = stderr_of(&mut child);
    assert_eq!(code, Some(0), "{err}");
    assert!(seen >= 2, "read while the run went: {seen} times");
    let r = stdout_json(&mut child);
    check_merged(&r);
    let samples = crate::steady::check_metrics(&std::fs::read_to_string(&file).unwrap());
    // Both hosts' requests, every second of them: the merged result's.
    assert_eq!(
        crate::steady::requests_total(&samples),
        f(&r["events"][0]["requests"]),
        "{samples:?}"
    );
}

#[test]
fn a_job_file_with_a_hosts_table_runs_on_both() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("j")) else {
        return;
    };
    let job = h.env.join("two.toml");
    std::fs::write(
        &job,
        format!(
            "[dataset]\ntarget = \"{}/j-{{host}}\"\nsize = \"32M\"\n\n[run]\nduration = \"1s\"\nwarmup = \"200ms\"\nio_mode = \"none\"\n\n[hosts]\nnames = \"127.0.0.1,127.0.0.2\"\nssh = \"{}\"\nremote_dbio = \"{}\"\n\n[[class]]\nevent = \"db file sequential read\"\nsessions = 1\n[class.limits]\np99 = \"1s\"\n\n[[class]]\nevent = \"direct path read\"\nsize = \"1M\"\nsessions = 1\n",
            shm.path().display(),
            h.ssh(),
            h.remote.display()
        ),
    )
    .unwrap();
    let out = h.env.run_job(&job).arg("--json").yes().out();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // A job file's ssh runs only with --yes, and each command is shown before it runs.
    for host in ["127.0.0.1", "127.0.0.2"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("dbio: running ") && l.contains(&format!(" {host} -- "))),
            "{err}"
        );
    }
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_merged(&r);
    assert_eq!(r["events"].as_array().unwrap().len(), 2);
    assert_eq!(r["verdict"]["pass"], true, "{}", r["verdict"]);
}

/// A 30 s `read-iops --sync` on both test hosts (targets `TAG-{host}` in `shm`), once the
/// coordinator has merged a first measured second of both (its progress line says
/// "measuring"): on a loaded machine, agents that run may still be preparing, and a stop
/// before the window is "nothing measured", not a partial result. Its stderr is read as it
/// comes.
fn measuring_on_both(h: &Hosts, shm: &tempfile::TempDir, tag: &str) -> Running {
    let target = format!("{}/{tag}-{{host}}", shm.path().display());
    let mut m = Running::spawn(
        h.dbio(
            "127.0.0.1,127.0.0.2",
            short(&h.env, "read-iops", &target, "30s").sync_(),
        )
        .process(),
    );
    m.wait_for("measuring ");
    assert_eq!(h.agents().len(), 2, "both agents measure");
    m
}

#[test]
fn killing_one_agent_stops_the_run_within_5_s_and_leaves_no_agent() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("k")) else {
        return;
    };
    let mut m = measuring_on_both(&h, &shm, "k");
    let victim = h.agents()[0];
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(victim as i32, libc::SIGKILL) };
    let killed = Instant::now();
    let code = wait_exit(&mut m.child, Duration::from_secs(10));
    let took = killed.elapsed();
    let err = m.stderr();
    assert_eq!(code, Some(4), "{err}");
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
    assert!(err.contains("lost"), "{err}");
    let r = stdout_json(&mut m.child);
    assert_eq!(r["partial"], true);
    let reason = r["stop_reason"].as_str().unwrap();
    assert!(reason.contains("127.0.0."), "{reason}");
    // The other host's measurements are kept.
    assert!(u(&r["events"][0]["requests"]) > 0);
    std::thread::sleep(Duration::from_millis(500));
    assert!(h.agents().is_empty(), "agents left: {:?}", h.agents());
}

#[test]
fn ctrl_c_on_the_coordinator_ends_every_agent_within_2_s() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("c")) else {
        return;
    };
    let mut m = measuring_on_both(&h, &shm, "c");
    // SAFETY: kill has no memory effects.
    unsafe { libc::kill(m.child.id() as i32, libc::SIGINT) };
    let sent = Instant::now();
    // The agents are watched while the coordinator still writes its results.
    while !h.agents().is_empty() && sent.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let gone = sent.elapsed();
    let code = wait_exit(&mut m.child, Duration::from_secs(10));
    let err = m.stderr();
    assert_eq!(code, Some(130), "{err}");
    assert!(
        gone < Duration::from_secs(2),
        "agents still there after {gone:?}"
    );
    let r = stdout_json_or(&mut m.child, &err);
    assert_eq!(r["partial"], true);
    assert_eq!(r["stop_reason"], "interrupted");
}

#[test]
fn an_unreachable_host_is_refused_before_anything_starts() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1"]), shm("u")) else {
        return;
    };
    let target = format!("{}/u-{{host}}", shm.path().display());
    // Nothing listens on 127.0.0.3.
    let out = h
        .dbio(
            "127.0.0.1,127.0.0.3",
            short(&h.env, "read-iops", &target, "1s"),
        )
        .out();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    // One line, naming the host (ssh's own complaint is quoted in it, not relayed too).
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("error:") && lines[0].contains("127.0.0.3"),
        "{err}"
    );
    // Nothing was created on the host that answered.
    assert!(
        std::fs::read_dir(shm.path()).unwrap().next().is_none(),
        "{:?}",
        crate::util::files_under(shm.path())
    );
    assert!(!h.env.join("dbio-runs").exists());
    assert!(h.agents().is_empty());
}

#[test]
fn another_dbio_version_there_is_refused_naming_the_host() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("v")) else {
        return;
    };
    let old = h.keys.path().join("dbio-old");
    write_script(
        &old,
        "#!/bin/sh\necho '{\"type\":\"hello\",\"protocol\":1,\"dbio_version\":\"0.0.1\",\"hostname\":\"old\",\"pid\":1}'\ncat > /dev/null\n",
    );
    let target = format!("{}/v-{{host}}", shm.path().display());
    let out = short(&h.env, "read-iops", &target, "1s")
        .path_opt("--remote-dbio", &old)
        .opt("--hosts", "127.0.0.2")
        .opt("--ssh", h.ssh())
        .out();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("127.0.0.2") && err.contains("0.0.1") && err.contains("versions must match"),
        "{err}"
    );
    assert!(std::fs::read_dir(shm.path()).unwrap().next().is_none());
}

#[test]
fn push_leaves_no_binary_behind_and_shared_is_one_data_set() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("p")) else {
        return;
    };
    let tmp_dirs = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("tmp."))
            .collect();
        v.sort();
        v
    };
    let before = tmp_dirs();
    let target = format!("{}/shared", shm.path().display());
    let out = short(&h.env, "read-iops", &target, "1s")
        .sync_()
        .arg("--shared")
        .arg("--push")
        .opt("--hosts", "127.0.0.1,127.0.0.2")
        .opt("--ssh", h.ssh())
        .out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_merged(&r);
    // One data set, prepared by the first host and read by both.
    let hosts = r["hosts"].as_array().unwrap();
    assert_eq!(hosts[0]["dataset"]["path"], hosts[1]["dataset"]["path"]);
    // The first host prepared it before the others opened it.
    assert_eq!(hosts[1]["dataset"]["reused"], true);
    assert_eq!(std::fs::read_dir(shm.path()).unwrap().count(), 1);
    // The pushed binaries' directories are gone.
    assert_eq!(tmp_dirs(), before);
    // The pushed agents recorded the data set in their host's store (this test's), never
    // in the user's.
    let remote_store = h.env.data_home.path().join("remote/dbio/dbio.db");
    assert!(remote_store.is_file(), "{}", remote_store.display());
    let _ = Path::new(&h.keys.path()).exists();
}

#[test]
fn calibrate_across_hosts_runs_every_point_on_both() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("cal")) else {
        return;
    };
    let target = format!("{}/cal-{{host}}", shm.path().display());
    let out = h
        .dbio(
            "127.0.0.1,127.0.0.2",
            h.env
                .cmd("calibrate")
                .target(&target)
                .size("32M")
                .opt("--point-duration", "1s")
                .warmup("200ms")
                .opt("--max-outstanding", 1)
                .io_mode("none")
                .arg("--json"),
        )
        .out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cal = std::fs::read_dir(h.env.join("dbio-runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut points = 0;
    for walk in ["small_reads", "large_reads", "single_session"] {
        for p in c[walk]["curve"].as_array().unwrap() {
            let dir = cal.join(p["run_dir"].as_str().unwrap());
            let r: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                    .unwrap();
            check_merged(&r);
            // The curve shows the merged figures.
            assert_eq!(f(&p["iops"]), f(&r["events"][0]["iops"]), "{walk}");
            points += 1;
        }
    }
    assert_eq!(points, 3, "{c}");
}

/// The data files (by name) process `pid` holds open for writing in `dir`.
fn data_files_written_by(pid: u32, dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return names;
    };
    for e in fds.flatten() {
        let Ok(t) = std::fs::read_link(e.path()) else {
            continue;
        };
        if t.parent() != Some(dir) {
            continue;
        }
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        let info = std::fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            e.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        let flags = info
            .lines()
            .find_map(|l| l.strip_prefix("flags:"))
            .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
            .unwrap_or(0);
        // O_ACCMODE: 0 is O_RDONLY.
        if name.starts_with("dbio-data-") && flags & 3 != 0 {
            names.push(name);
        }
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn shared_writes_each_host_only_its_own_data_files() {
    let (Some(h), Some(shm)) = (Hosts::start(&["127.0.0.1", "127.0.0.2"]), shm("w")) else {
        return;
    };
    let target = format!("{}/shared", shm.path().display());
    let dir = shm.path().join("shared");
    let mut child = h.spawn(
        "127.0.0.1,127.0.0.2",
        short(&h.env, "write-iops", &target, "2s")
            .sync_()
            .arg("--shared")
            .files(4),
    );
    let t0 = Instant::now();
    wait_agents(&h, &mut child, t0);
    // While both write: which data files each agent holds open for writing.
    let mut seen: Vec<Vec<String>> = Vec::new();
    while t0.elapsed() < Duration::from_secs(30) && child.try_wait().unwrap().is_none() {
        let now: Vec<Vec<String>> = (h.agents().into_iter())
            .map(|pid| data_files_written_by(pid, &dir))
            .filter(|v| !v.is_empty())
            .collect();
        if now.len() == 2 {
            seen = now;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    seen.sort();
    let own = |a: &str, b: &str| vec![a.to_string(), b.to_string()];
    assert_eq!(
        seen,
        vec![
            own("dbio-data-001.dbf", "dbio-data-003.dbf"),
            own("dbio-data-002.dbf", "dbio-data-004.dbf")
        ],
        "the files each agent held open for writing"
    );
    let code = wait_exit(&mut child, Duration::from_secs(60));
    let err = stderr_of(&mut child);
    assert_eq!(code, Some(0), "{err}");
    let r = stdout_json(&mut child);
    check_merged(&r);
    // One data set, written by both, each host its region: files i with i % 2 == index.
    let hosts = r["hosts"].as_array().unwrap();
    assert_eq!(hosts[0]["dataset"]["path"], hosts[1]["dataset"]["path"]);
    for (k, x) in hosts.iter().enumerate() {
        let region = &x["dataset"]["region"];
        assert_eq!(u(&region["index"]), k as u64, "{x}");
        assert_eq!(u(&region["of"]), 2, "{x}");
        let files: Vec<&str> = (region["files"].as_array().unwrap().iter())
            .map(|f| f.as_str().unwrap())
            .collect();
        assert_eq!(files, seen[k], "host {k}");
        assert_eq!(u(&x["dataset"]["files"]), 2, "{x}");
        assert!(u(&x["totals"]["requests"]) > 0, "host {k} wrote nothing");
    }
    // The merged result names the whole data set.
    assert_eq!(u(&r["dataset"]["files"]), 4, "{}", r["dataset"]);
    assert!(r["dataset"]["region"].is_null());
    assert_eq!(std::fs::read_dir(shm.path()).unwrap().count(), 1);
    // Released by both: a plain writer may have it now.
    let out = short(&h.env, "write-iops", &target, "1s").files(4).out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(h.agents().is_empty(), "agents left: {:?}", h.agents());
}

/// `--shared` with what cannot be split among hosts: refused before any host is reached,
/// one line naming why, nothing created.
#[test]
fn shared_writes_that_cannot_be_split_are_refused() {
    let env = Env::new();
    let Some(shm) = shm("r") else { return };
    let target = format!("{}/shared", shm.path().display());
    let cases: [(&str, &[&str], &str); 4] = [
        ("redo", &[], "redo logs, which are one set"),
        ("temp", &[], "temp files, which are one set"),
        (
            "write-iops",
            &["--files", "1"],
            "--files 1 is fewer than the 2 hosts",
        ),
        (
            "write-mbps",
            &["--verify"],
            "--verify keeps one sequence table",
        ),
    ];
    for (test, extra, why) in cases {
        // An ssh that cannot reach anything: the refusal comes first.
        let out = short(&env, test, &target, "1s")
            .args(extra)
            .arg("--shared")
            .opt("--hosts", "127.0.0.1,127.0.0.2")
            .opt("--ssh", "ssh -o ConnectTimeout=1 -p 1")
            .out();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{test}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{test}: {err}");
        assert!(
            err.contains("--shared") && err.contains(why),
            "{test}: {err}"
        );
        assert!(!shm.path().join("shared").exists(), "{test}: created");
    }
}
