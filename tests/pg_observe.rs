//! `dbio pg observe`: what a PostgreSQL server saw while a load ran on it — wait events
//! sampled from pg_stat_activity, I/O and WAL from its statistics — against a throwaway
//! PostgreSQL 15 this test starts (Unix socket only) and stops.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{Env, is_root, skip};

const PG15: &str = "/usr/lib/postgresql/15/bin";

/// A throwaway server in a temporary directory, stopped and removed on drop.
pub struct Server {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl Server {
    /// Starts a server from `bin` with these `-c` settings; None (after a skip) when it cannot.
    pub fn start(bin: &str, settings: &[&str]) -> Option<Server> {
        let bin = PathBuf::from(bin);
        if !bin.join("initdb").exists() {
            skip(&format!(
                "{} missing (PostgreSQL not installed)",
                bin.join("initdb").display()
            ));
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("dbio-pg-test-")
            .tempdir()
            .expect("temp dir");
        let server = Server {
            dir,
            bin,
            port: 54_000 + (std::process::id() % 1000) as u16,
        };
        std::fs::create_dir(server.sock()).unwrap();
        // initdb and postgres refuse to run as root: as root, the server runs as postgres.
        if is_root() {
            let owned = [
                "-R",
                "postgres:postgres",
                &server.dir.path().display().to_string(),
            ]
            .map(String::from);
            if !Command::new("chown")
                .args(&owned)
                .status()
                .is_ok_and(|s| s.success())
            {
                skip("no user postgres to run the server as");
                return None;
            }
        }
        let data = server.data().display().to_string();
        let ok = server
            .as_server_user("initdb")
            .args([
                "-D",
                &data,
                "-U",
                "dbio",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-locale",
                "--no-sync",
            ])
            .stdout(Stdio::null())
            .status()
            .expect("initdb")
            .success();
        assert!(ok, "initdb failed");
        let mut opts = format!(
            "-c listen_addresses= -c unix_socket_directories={} -p {}",
            server.sock().display(),
            server.port
        );
        for s in settings {
            opts.push_str(&format!(" -c {s}"));
        }
        let log = server.dir.path().join("log").display().to_string();
        let ok = server
            .as_server_user("pg_ctl")
            .args(["-D", &data, "-l", &log, "-w", "-o", &opts, "start"])
            .stdout(Stdio::null())
            .status()
            .expect("pg_ctl")
            .success();
        assert!(
            ok,
            "pg_ctl start failed: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        Some(server)
    }

    fn sock(&self) -> PathBuf {
        self.dir.path().join("sock")
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("d")
    }

    fn as_server_user(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if is_root() {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=postgres", "--regid=postgres", "--clear-groups"])
                .arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// The connection URL (a Unix socket).
    pub fn url(&self) -> String {
        format!(
            "postgresql:///postgres?host={}&port={}&user=dbio",
            self.sock().display(),
            self.port
        )
    }

    /// A client program of the server's (psql, pgbench) with `args`.
    pub fn client(&self, program: &str, args: &[&str]) -> Command {
        let mut c = Command::new(self.bin.join(program));
        c.args(args).arg(self.url()).stdout(Stdio::null());
        c
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let data = self.data().display().to_string();
        let _ = self
            .as_server_user("pg_ctl")
            .args(["-D", &data, "-w", "-m", "immediate", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn have(program: &Path) -> bool {
    program.exists()
}

/// A throwaway server with pgbench's tables at `scale` (100,000 accounts each), timing its
/// I/O; None (after a skip) when PostgreSQL or pgbench is missing.
fn pgbench_server(scale: &str, settings: &[&str]) -> Option<Server> {
    let mut all = vec![
        "shared_buffers=16MB",
        "max_connections=20",
        "track_io_timing=on",
        "track_wal_io_timing=on",
    ];
    all.extend_from_slice(settings);
    let pg = Server::start(PG15, &all)?;
    if !have(&pg.bin.join("pgbench")) {
        skip("pgbench missing");
        return None;
    }
    let ok = pg
        .client("pgbench", &["-i", "-s", scale, "-q"])
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success();
    assert!(ok, "pgbench -i failed");
    Some(pg)
}

#[test]
fn observe_sees_waits_io_and_commits_of_a_load() {
    // 5 x 100,000 accounts (about 75 MB): more than shared_buffers, so the load reads.
    let Some(pg) = pgbench_server("5", &[]) else {
        return;
    };
    let mut load = pg
        .client("pgbench", &["-c", "4", "-T", "4"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let env = Env::new();
    let out = env
        .dbio()
        .args([
            "pg",
            "observe",
            "--pg",
            &pg.url(),
            "--seconds",
            "3",
            "--json",
        ])
        .output()
        .unwrap();
    let _ = load.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(p["server"]["version_num"].as_u64().unwrap() >= 150000);
    assert!(
        p["server"].get("io_method").is_none(),
        "15 has no io_method"
    );
    let setting = |name: &str| {
        (p["server"]["settings"].as_array().unwrap().iter())
            .find(|s| s["name"] == name)
            .map(|s| s["value"].as_str().unwrap().to_string())
    };
    assert_eq!(setting("track_io_timing").as_deref(), Some("on"));
    assert_eq!(setting("shared_buffers").as_deref(), Some("16MB"));
    // The sampler ran at about its rate: 3 s at 100 Hz, at least a third of it on a busy machine.
    let samples = p["sampler"]["samples"].as_u64().unwrap();
    assert!(samples >= 100, "{samples} samples");
    let waits = p["waits"].as_array().unwrap();
    assert!(
        waits.iter().any(|w| w["backend_type"] == "client backend"),
        "{waits:?}"
    );
    let total: u64 = waits.iter().map(|w| w["samples"].as_u64().unwrap()).sum();
    assert_eq!(total, p["sampler"]["active_rows"].as_u64().unwrap());
    // The load commits, and every commit flushes WAL: commits and flushes counted.
    let wal = &p["wal"];
    assert!(wal["commits"].as_u64().unwrap() > 100, "{wal}");
    assert!(wal["syncs"].as_u64().unwrap() > 0, "{wal}");
    assert!(wal["commits_per_flush"].as_f64().unwrap() >= 1.0, "{wal}");
    assert_eq!(wal["sync_event"], "WALSync");
    let io = p["io"].as_array().unwrap();
    let row = |bt: &str, object: &str, op: &str| {
        io.iter()
            .find(|i| i["backend_type"] == bt && i["object"] == object && i["op"] == op)
    };
    let fsync = row("all", "wal", "fsync").unwrap_or_else(|| panic!("{io:?}"));
    assert!(fsync["ops"].as_u64().unwrap() > 0);
    // track_wal_io_timing is on: the flushes have a mean wait.
    assert!(fsync["mean_wait_ms"].as_f64().unwrap() > 0.0, "{fsync}");
    let ash = p["ash"].as_array().unwrap();
    assert!(ash.len() >= 2, "{ash:?}");

    // The same as text: the sections of a report.
    let out = env
        .dbio()
        .args(["pg", "observe", "--pg", &pg.url(), "--seconds", "1"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("io_method: none: PostgreSQL 15 has no asynchronous I/O"),
        "{text}"
    );
    assert!(text.contains("I/O by backend type"), "{text}");
    // And as Markdown: the same sections, as headings and pipe tables.
    let out = env
        .dbio()
        .args(["pg", "observe", "--pg", &pg.url(), "--seconds", "1"])
        .args(["--format", "md"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.starts_with("# dbio "), "{md}");
    assert!(
        md.lines()
            .any(|l| l.starts_with('#') && l.contains("I/O by backend type")),
        "{md}"
    );
    assert!(md.lines().any(|l| l.starts_with("|:--|")), "{md}");
}

#[test]
fn observe_refuses_a_server_it_cannot_reach() {
    let env = Env::new();
    let missing = env.join("no-socket-here").display().to_string();
    let out = env
        .dbio()
        .args([
            "pg",
            "observe",
            "--pg",
            &format!("host={missing} port=5 user=x"),
            "--seconds",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: --pg "), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
    let out = env
        .dbio()
        .args(["pg", "observe", "--pg", "postgresql://[", "--seconds", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: --pg "));
}

/// `dbio job from-pg` against a server under a known load: pgbench committing 150
/// transactions a second (`-R 150`): the job's log file sync class is within 10 % of it.
#[test]
fn from_pg_makes_a_job_of_a_known_load() {
    let Some(pg) = pgbench_server("2", &["autovacuum=off"]) else {
        return;
    };
    let mut load = pg
        .client("pgbench", &["-c", "2", "-T", "22", "-R", "150", "-n"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Past pgbench's start; three samples of 4 s (each with its 1 s flush pause) end before
    // pgbench does. pgbench -R keeps its schedule on average: a stall is caught up.
    std::thread::sleep(std::time::Duration::from_secs(2));
    let env = Env::new();
    let out = env
        .dbio()
        .args([
            "job",
            "from-pg",
            "--pg",
            &pg.url(),
            "--interval",
            "4s",
            "--samples",
            "3",
        ])
        .output()
        .unwrap();
    let _ = load.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let job: toml::Table = text.parse().unwrap_or_else(|e| panic!("{e}:\n{text}"));
    let classes = job["class"].as_array().expect("classes");
    let sync = classes
        .iter()
        .find(|c| c["event"].as_str() == Some("log file sync"))
        .unwrap_or_else(|| panic!("no log file sync class:\n{text}"));
    let rate = match &sync["rate"] {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        v => panic!("rate {v}"),
    };
    assert!(
        (rate - 150.0).abs() <= 15.0,
        "commits/s {rate} is not within 10 % of pgbench's 150:\n{text}"
    );
    assert!(text.contains("pg_stat_database.xact_commit"), "{text}");
    // The server's WAL is written, then fdatasync'ed (wal_sync_method's default on Linux):
    // the job's redo is made durable the same way.
    assert_eq!(job["redo"]["sync"].as_str(), Some("fdatasync"), "{text}");
}

#[test]
fn from_pg_refuses_a_server_it_cannot_reach() {
    let env = Env::new();
    let out = env
        .dbio()
        .args([
            "job",
            "from-pg",
            "--pg",
            "postgresql:///postgres?host=/nonexistent&port=1&user=dbio",
            "--interval",
            "1s",
        ])
        .output()
        .unwrap();
    crate::util::refusal_line("from-pg", &out, &["--pg"]);
}
