//! `dbio pg`: the five tests through a real PostgreSQL 15 — a throwaway server dbio starts
//! (`--pg-bin`) and a "user's server" the test starts itself (`--pg`), whose table and
//! settings must be the same afterwards. Nothing of dbio's may be left: no schema, no
//! postgres process, no data directory, after a normal end and after SIGINT.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{self, Env};

/// The binaries of the oldest PostgreSQL installed from 15 on (Debian's, as
/// `.ci/install-deps` installs them), with its major version; or a skip.
fn pg_bin() -> Option<(String, u32)> {
    let mut found: Vec<(u32, String)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|d| {
            let major: u32 = d.file_name().to_str()?.parse().ok()?;
            let bin = d.path().join("bin");
            (major >= 15 && bin.join("initdb").is_file() && bin.join("postgres").is_file())
                .then(|| (major, bin.display().to_string()))
        })
        .collect();
    found.sort();
    match found.into_iter().next() {
        Some((major, bin)) => Some((bin, major)),
        None => {
            util::skip(
                "PostgreSQL 15 or later is not installed (/usr/lib/postgresql/N/bin; .ci/install-deps installs it)",
            );
            None
        }
    }
}

/// An environment whose directory the server's unprivileged user may enter.
fn env() -> Env {
    let e = Env::new();
    std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    e
}

/// Processes whose command line holds `needle` (dbio's postmaster names its data directory).
fn processes_with(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
        {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) && cmd.contains("postgres") {
                out.push(cmd);
            }
        }
    }
    out
}

/// Directories named `pg` (a throwaway server's) anywhere under `dir`.
fn server_dirs(dir: &Path) -> Vec<String> {
    util::tree(dir)
        .into_iter()
        .filter(|p| p.ends_with("/pg") || p.contains("/pg/"))
        .collect()
}

fn run_pg(e: &Env, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["pg", "run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "--warmup", "1s"]);
    e.json(&all)
}

#[test]
fn the_five_tests_run_on_a_throwaway_server_and_leave_nothing() {
    let Some((bin, major)) = pg_bin() else { return };
    let bin = bin.as_str();
    let wal_sync = if major >= 18 { "WalSync" } else { "WALSync" };
    let e = env();
    for (test, mode, events) in [
        ("read-iops", "--sync", &["DataFileRead"][..]),
        // 18 names the wait by its io_method: AioIoCompletion (worker), DataFileRead (sync).
        (
            "read-iops",
            "--async",
            &["DataFilePrefetch", "AioIoCompletion", "DataFileRead"][..],
        ),
        ("read-mbps", "--sync", &["DataFileRead"][..]),
        ("write-iops", "--sync", &["DataFileWrite"][..]),
        ("write-mbps", "--sync", &["DataFileExtend"][..]),
        ("redo", "--sync", &[wal_sync][..]),
    ] {
        let r = run_pg(
            &e,
            &[
                test,
                mode,
                "--sessions",
                "2",
                "--size",
                "64M",
                "--duration",
                "2s",
                "--pg-bin",
                bin,
            ],
        );
        assert_eq!(r["test"], format!("pg {test}"), "{test}");
        assert_eq!(r["stop_reason"], "completed", "{test}");
        let ev = &r["events"][0];
        let name = ev["name"].as_str().unwrap();
        assert!(events.contains(&name), "{test} {mode}: event {name}");
        let requests = util::u(&ev["requests"]);
        assert!(requests > 0, "{test} {mode}: no request measured");
        // Every request is in the histogram and in the per-second series.
        let series: u64 = r["timeseries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| util::u(&p["requests"]))
            .sum();
        assert_eq!(series, requests, "{test} {mode}: series vs total");
        assert!(util::f(&ev["latency_us"]["mean"]) > 0.0);
        if test == "redo" {
            assert!(util::f(&r["totals"]["commits_per_s"]) > 0.0);
        }
        if test.starts_with("read") {
            // PostgreSQL 15 has no direct I/O: the table's pages are dropped from the page cache.
            assert!(
                r["config"]["io_mode"]
                    .as_str()
                    .unwrap()
                    .contains("posix_fadvise"),
                "{}",
                r["config"]["io_mode"]
            );
        }
        assert!(
            processes_with(&e.path().display().to_string()).is_empty(),
            "{test}: a postgres of dbio's is left"
        );
        assert!(
            server_dirs(e.path()).is_empty(),
            "{test}: {:?}",
            server_dirs(e.path())
        );
    }
}

/// A server the test starts itself: the "user's server".
struct UserServer {
    dir: PathBuf,
    child: Child,
}

impl UserServer {
    fn start(bin: &str, e: &Env) -> UserServer {
        let dir = e.join("user-pg");
        std::fs::create_dir(&dir).unwrap();
        let owner = |p: &Path| {
            if util::is_root() {
                assert!(util::sh(
                    "chown",
                    &["postgres:postgres", &p.display().to_string()]
                ));
            }
        };
        owner(&dir);
        let as_user = |prog: &str| {
            let mut c = if util::is_root() {
                let mut c = Command::new("setpriv");
                c.args([
                    "--reuid=postgres",
                    "--regid=postgres",
                    "--clear-groups",
                    prog,
                ]);
                c
            } else {
                Command::new(prog)
            };
            c.stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            c
        };
        let data = dir.join("data");
        let st = as_user(&format!("{bin}/initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-U", "owner", "-A", "trust", "--no-locale", "--no-sync"])
            .status()
            .unwrap();
        assert!(st.success(), "initdb");
        let child = as_user(&format!("{bin}/postgres"))
            .arg("-D")
            .arg(&data)
            .arg("-k")
            .arg(&dir)
            .args([
                "-c",
                "listen_addresses=",
                "-p",
                "5433",
                "-c",
                "shared_buffers=16MB",
            ])
            .spawn()
            .unwrap();
        let s = UserServer { dir, child };
        let until = Instant::now() + Duration::from_secs(30);
        while s.client("owner").is_err() {
            assert!(Instant::now() < until, "the user's server did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    }

    fn url(&self, user: &str) -> String {
        format!(
            "host={} port=5433 user={user} dbname=postgres",
            self.dir.display()
        )
    }

    fn client(&self, user: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Client::connect(&self.url(user), postgres::NoTls)
    }

    /// A checksum of the user's table and of every setting.
    fn fingerprint(&self) -> (String, String) {
        let mut c = self.client("owner").unwrap();
        let t: String = c
            .query_one(
                "SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM mine t",
                &[],
            )
            .unwrap()
            .get(0);
        let s: String = c
            .query_one(
                "SELECT md5(string_agg(name || '=' || coalesce(setting, '') || '/' || source, ',' ORDER BY name)) FROM pg_settings",
                &[],
            )
            .unwrap()
            .get(0);
        (t, s)
    }

    fn dbio_schemas(&self) -> Vec<String> {
        let mut c = self.client("owner").unwrap();
        c.query(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'dbio\\_%' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
    }
}

impl Drop for UserServer {
    fn drop(&mut self) {
        // SAFETY: signalling our own child: fast shutdown.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let _ = self.child.wait();
    }
}

#[test]
fn a_users_server_keeps_its_table_settings_and_nothing_of_dbio() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let s = UserServer::start(&bin, &e);
    let mut c = s.client("owner").unwrap();
    c.batch_execute(
        "CREATE TABLE mine (id int PRIMARY KEY, v text);
         INSERT INTO mine SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
         CREATE ROLE guest LOGIN;
         REVOKE CREATE ON DATABASE postgres FROM PUBLIC;
         CREATE SCHEMA dbio_not_ours;",
    )
    .unwrap();
    let before = s.fingerprint();
    let url = s.url("owner");
    let r = run_pg(
        &e,
        &[
            "read-iops",
            "--sync",
            "--sessions",
            "2",
            "--size",
            "16M",
            "--duration",
            "2s",
            "--pg",
            &url,
        ],
    );
    assert_eq!(r["events"][0]["name"], "DataFileRead");
    assert!(util::u(&r["events"][0]["requests"]) > 0);
    assert_eq!(
        s.fingerprint(),
        before,
        "the user's table or settings changed"
    );
    assert_eq!(s.dbio_schemas(), vec!["dbio_not_ours".to_string()]);

    // A role without CREATE on the database: one line, exit 2, nothing made.
    let out = e.output(&[
        "pg",
        "run",
        "redo",
        "--duration",
        "1s",
        "--pg",
        &s.url("guest"),
    ]);
    util::refusal_line("no CREATE privilege", &out, &["--pg", "CREATE"]);
    // An unreachable server: the same.
    let nowhere = format!("host={} port=5999 user=owner", e.path().display());
    let out = e.output(&["pg", "run", "redo", "--duration", "1s", "--pg", &nowhere]);
    util::refusal_line("unreachable", &out, &["--pg", "cannot connect"]);
    assert_eq!(s.dbio_schemas(), vec!["dbio_not_ours".to_string()]);

    // clean drops only schemas carrying dbio's mark.
    c.batch_execute("CREATE SCHEMA dbio_left; COMMENT ON SCHEMA dbio_left IS 'dbio 0.1.0 run 1_x'; CREATE TABLE dbio_left.t (i int);")
        .unwrap();
    let out = e.output(&["pg", "clean", "--pg", &url]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("dropped schema dbio_left"));
    assert_eq!(s.dbio_schemas(), vec!["dbio_not_ours".to_string()]);

    // PGHOST, PGPORT and PGUSER say where the server is when --pg does not.
    c.batch_execute(
        "CREATE SCHEMA dbio_left2; COMMENT ON SCHEMA dbio_left2 IS 'dbio 0.1.0 run 2_y';",
    )
    .unwrap();
    let out = e
        .dbio()
        .args(["pg", "clean"])
        .env("PGHOST", s.dir.display().to_string())
        .env("PGPORT", "5433")
        .env("PGUSER", "owner")
        .env("PGDATABASE", "postgres")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("dropped schema dbio_left2"));
    assert_eq!(s.dbio_schemas(), vec!["dbio_not_ours".to_string()]);

    // SIGINT mid-run: the run's schema is dropped.
    let mut child = e
        .process()
        .args([
            "pg",
            "run",
            "read-iops",
            "--sync",
            "--sessions",
            "2",
            "--size",
            "16M",
        ])
        .args([
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--json",
            "--pg",
            &url,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while s.dbio_schemas().len() < 2 {
        assert!(Instant::now() < until, "the run made no schema");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130), "{st:?}");
    assert_eq!(s.dbio_schemas(), vec!["dbio_not_ours".to_string()]);
    assert_eq!(s.fingerprint(), before);
}

#[test]
fn sigint_mid_run_stops_and_removes_the_throwaway_server() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let mut child = e
        .process()
        .args([
            "pg",
            "run",
            "read-iops",
            "--sync",
            "--sessions",
            "2",
            "--size",
            "32M",
        ])
        .args([
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--json",
            "--pg-bin",
            &bin,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let here = e.path().display().to_string();
    let until = Instant::now() + Duration::from_secs(60);
    // The server is up and the run is measuring (the server restarts once after loading).
    while processes_with(&here).is_empty() {
        assert!(Instant::now() < until, "no server started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(6));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130), "{st:?}");
    assert!(
        processes_with(&here).is_empty(),
        "{:?}",
        processes_with(&here)
    );
    assert!(
        server_dirs(e.path()).is_empty(),
        "{:?}",
        server_dirs(e.path())
    );
}

#[test]
fn a_bad_pg_option_is_one_line_before_anything_is_made() {
    let e = env();
    let out = e.output(&["pg", "run", "redo", "--pg-bin", "/nonexistent/bin"]);
    util::refusal_line("no binaries", &out, &["--pg-bin", "initdb"]);
    let out = e.output(&[
        "pg", "run", "redo", "--pg-bin", "/x", "--pg-set", "nonsense",
    ]);
    util::refusal_line("bad --pg-set", &out, &["--pg-set", "NAME=VALUE"]);
    let out = e.output(&["pg", "run", "redo", "--pg", "host=/x", "--pg-bin", "/x"]);
    util::refusal_line("both", &out, &["--pg"]);
    let out = e
        .dbio()
        .args(["pg", "run", "redo"])
        .env_remove("PGHOST")
        .env_remove("PGDATABASE")
        .output()
        .unwrap();
    util::refusal_line("no server", &out, &["--pg", "--pg-bin"]);
    assert!(!e.join("dbio-runs").exists());
}

#[test]
fn a_setting_the_server_refuses_is_one_line_and_leaves_nothing() {
    let Some((bin, major)) = pg_bin() else { return };
    let e = env();
    // A setting this version does not know (io_method came with 18; this one with none).
    let set = if major >= 18 {
        "no_such_setting_here=1"
    } else {
        "io_method=worker"
    };
    let out = e.output(&[
        "pg",
        "run",
        "redo",
        "--duration",
        "1s",
        "--pg-bin",
        &bin,
        "--pg-set",
        set,
    ]);
    let name = set.split('=').next().unwrap();
    util::refusal_line("a refused setting", &out, &["--pg-bin", name]);
    assert!(!e.join("dbio-runs").exists(), "{:?}", util::tree(e.path()));
    assert!(processes_with(&e.path().display().to_string()).is_empty());
}
