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
pub(crate) fn pg_bin() -> Option<(String, u32)> {
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
pub(crate) fn env() -> Env {
    let e = Env::new();
    std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    e
}

/// Processes whose command line holds `needle` (dbio's postmaster names its data directory).
pub(crate) fn processes_with(needle: &str) -> Vec<String> {
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

/// The user id of user `name`.
fn uid_of(name: &str) -> Option<u32> {
    let c = std::ffi::CString::new(name).unwrap();
    // SAFETY: getpwnam returns static storage or NULL; read at once.
    unsafe {
        let pw = libc::getpwnam(c.as_ptr());
        (!pw.is_null()).then(|| (*pw).pw_uid)
    }
}

/// The process ids and real user ids of the postgres processes whose command line holds
/// `needle`.
fn server_uids(needle: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if !(cmd.contains(needle) && cmd.contains("postgres")) {
            continue;
        }
        let status = std::fs::read_to_string(entry.path().join("status")).unwrap_or_default();
        if let Some(uid) = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().next()?.parse().ok())
        {
            out.push((pid, uid));
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

pub(crate) fn run_pg(e: &Env, args: &[&str]) -> serde_json::Value {
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
    // Each request is a statement, named for what it is; the wait its I/O is named after
    // PostgreSQL's own event (config.engine_notes), and the waits sampled are PostgreSQL's.
    for (test, mode, statement, events) in [
        ("read-iops", "--sync", "index lookup", &["DataFileRead"][..]),
        // 18 names the wait by its io_method: AioIoCompletion (worker), DataFileRead (sync).
        (
            "read-iops",
            "--async",
            "prefetched batch",
            &["DataFilePrefetch", "AioIoCompletion", "DataFileRead"][..],
        ),
        (
            "read-mbps",
            "--sync",
            "range scan chunk",
            &["DataFileRead"][..],
        ),
        ("write-iops", "--sync", "row update", &["DataFileWrite"][..]),
        (
            "write-mbps",
            "--sync",
            "bulk load chunk",
            &["DataFileExtend"][..],
        ),
        ("redo", "--sync", "row insert + commit", &[wal_sync][..]),
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
        assert_eq!(ev["name"], statement, "{test} {mode}");
        let note = r["config"]["engine_notes"][0].as_str().unwrap();
        assert!(
            events
                .iter()
                .any(|e| note.ends_with(&format!("the database's {e}"))),
            "{test} {mode}: {note}"
        );
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
pub(crate) struct UserServer {
    pub(crate) dir: PathBuf,
    child: Child,
}

impl UserServer {
    pub(crate) fn start(bin: &str, e: &Env) -> UserServer {
        UserServer::start_with(bin, e, None, &[])
    }

    /// A user's server with `hba` as its pg_hba.conf (when given) and `settings` (`-c`
    /// NAME=VALUE) on its command line; the role `owner` (a superuser) connects without a
    /// password over its socket unless `hba` says otherwise.
    pub(crate) fn start_with(
        bin: &str,
        e: &Env,
        hba: Option<&str>,
        settings: &[&str],
    ) -> UserServer {
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
        if let Some(hba) = hba {
            let f = data.join("pg_hba.conf");
            std::fs::write(&f, hba).unwrap();
            owner(&f);
        }
        let mut extra = Vec::new();
        for s in settings {
            extra.push("-c");
            extra.push(s);
        }
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
            .args(&extra)
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

    pub(crate) fn url(&self, user: &str) -> String {
        format!(
            "host={} port=5433 user={user} dbname=postgres",
            self.dir.display()
        )
    }

    pub(crate) fn client(&self, user: &str) -> Result<postgres::Client, postgres::Error> {
        postgres::Client::connect(&self.url(user), postgres::NoTls)
    }

    /// A checksum of the user's table and of every setting.
    pub(crate) fn fingerprint(&self) -> (String, String) {
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

    pub(crate) fn dbio_schemas(&self) -> Vec<String> {
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

impl UserServer {
    /// Stops the server (fast shutdown) and waits for it.
    pub(crate) fn stop(&mut self) {
        // SAFETY: signalling our own child: fast shutdown.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let _ = self.child.wait();
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
    assert_eq!(r["events"][0]["name"], "index lookup");
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

    // --json says what was dropped (the same as the lines); --format md, that nothing was left.
    c.batch_execute(
        "CREATE SCHEMA dbio_left3; COMMENT ON SCHEMA dbio_left3 IS 'dbio 0.1.0 run 3_z';",
    )
    .unwrap();
    let done = e.json(&["pg", "clean", "--pg", &url, "--json"]);
    assert_eq!(done["schema"], "dbio.pg-clean.v1", "{done}");
    assert_eq!(done["dropped"], serde_json::json!(["dbio_left3"]), "{done}");
    assert_eq!(done["left"], serde_json::json!([]), "{done}");
    assert!(
        done["server"].as_str().unwrap().starts_with("owner@"),
        "{done}"
    );
    assert_eq!(s.dbio_schemas(), vec!["dbio_not_ours".to_string()]);
    let out = e.output(&["pg", "clean", "--pg", &url, "--format", "md"]);
    assert!(out.status.success());
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.starts_with("no dbio schema at owner@"), "{md}");

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
    // As root, the server runs as the system user dbio, which owns nothing else: never as
    // postgres (the owner of the host's real clusters), never as root.
    if util::is_root() {
        let dbio = uid_of("dbio").expect("user dbio (.ci/install-deps creates it)");
        let uids = server_uids(&here);
        assert!(!uids.is_empty());
        for (pid, uid) in &uids {
            assert_eq!(*uid, dbio, "process {pid} of the server runs as uid {uid}");
        }
        assert_ne!(Some(dbio), uid_of("postgres"));
    }
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
    // A setting this version does not know (io_method came with 18), or a value it refuses.
    let set = if major >= 18 {
        "io_method=no_such_method"
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

/// `--pg-bin` directories another user could have written, or reaching into one: refused
/// (exit 2, one line naming the path and why) before anything runs or is created. The
/// programs there are stand-ins that leave a mark when run, as root or as any user.
#[test]
fn a_pg_bin_another_user_could_have_written_is_refused_and_runs_nothing() {
    let Some((bin, _)) = pg_bin() else { return };
    if !util::is_root() {
        util::skip("owners other than this user need root");
        return;
    }
    let Some(progs) = util::program_dir() else {
        return;
    };
    let e = env();
    // The mark may be left by any user a stand-in could run as.
    let marks = e.join("marks");
    std::fs::create_dir(&marks).unwrap();
    std::fs::set_permissions(&marks, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mark = marks.join("ran");
    let p = progs.path();
    let chmod = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    // Stand-ins for initdb and postgres: whichever runs leaves its name in the mark.
    let fake = |dir: &Path| {
        std::fs::create_dir_all(dir).unwrap();
        chmod(dir, 0o755);
        for prog in ["initdb", "postgres"] {
            let f = dir.join(prog);
            std::fs::write(
                &f,
                format!(
                    "#!/bin/sh\necho {prog} >> '{}'\necho 'postgres (PostgreSQL) 15.1'\n",
                    mark.display()
                ),
            )
            .unwrap();
            chmod(&f, 0o755);
        }
    };
    // Links to the real programs.
    let farm = |dir: &Path| {
        std::fs::create_dir_all(dir).unwrap();
        chmod(dir, 0o755);
        for prog in ["initdb", "postgres"] {
            std::os::unix::fs::symlink(Path::new(&bin).join(prog), dir.join(prog)).unwrap();
        }
    };
    let mut cases: Vec<(PathBuf, PathBuf, &str)> = Vec::new();

    let open = p.join("open");
    fake(&open);
    chmod(&open, 0o777);
    cases.push((
        open.clone(),
        open.clone(),
        "writable by group and other (mode 0777)",
    ));

    let sticky = p.join("sticky");
    fake(&sticky);
    chmod(&sticky, 0o1777);
    cases.push((sticky.clone(), sticky, "(mode 1777)"));

    let open_farm = p.join("open-farm");
    farm(&open_farm);
    chmod(&open_farm, 0o777);
    cases.push((open_farm.clone(), open_farm, "writable by group and other"));

    let group_file = p.join("group-file");
    fake(&group_file);
    chmod(&group_file.join("initdb"), 0o775);
    cases.push((
        group_file.clone(),
        group_file.join("initdb"),
        "writable by group",
    ));

    let nobody = p.join("nobody");
    fake(&nobody);
    std::os::unix::fs::chown(&nobody, Some(65534), Some(65534)).unwrap();
    cases.push((nobody.clone(), nobody, "uid 65534"));

    let nobody_file = p.join("nobody-file");
    fake(&nobody_file);
    std::os::unix::fs::chown(nobody_file.join("postgres"), Some(65534), None).unwrap();
    cases.push((
        nobody_file.clone(),
        nobody_file.join("postgres"),
        "uid 65534",
    ));

    let parent = p.join("parent");
    fake(&parent.join("bin"));
    chmod(&parent, 0o777);
    cases.push((
        parent.join("bin"),
        parent.clone(),
        "writable by group and other",
    ));

    // Links in a safe directory into an open one; a --pg-bin that is such a link.
    let links = p.join("links");
    std::fs::create_dir(&links).unwrap();
    for prog in ["initdb", "postgres"] {
        std::os::unix::fs::symlink(open.join(prog), links.join(prog)).unwrap();
    }
    cases.push((links, open.clone(), "writable by group and other"));
    let dir_link = p.join("bin-link");
    std::os::unix::fs::symlink(&open, &dir_link).unwrap();
    cases.push((dir_link, open.clone(), "writable by group and other"));
    // A link to the real programs, itself in an open directory.
    let open_links = p.join("open-links");
    std::fs::create_dir(&open_links).unwrap();
    chmod(&open_links, 0o777);
    std::os::unix::fs::symlink(&bin, open_links.join("bin")).unwrap();
    cases.push((
        open_links.join("bin"),
        open_links,
        "writable by group and other",
    ));

    // initdb runs the postgres beside its own file: a farm whose initdb lies beside a
    // postgres anyone may write, though its own postgres is safe.
    let beside = p.join("beside");
    fake(&beside);
    chmod(&beside.join("postgres"), 0o777);
    let safe = p.join("safe");
    fake(&safe);
    let farm2 = p.join("farm2");
    std::fs::create_dir(&farm2).unwrap();
    std::os::unix::fs::symlink(beside.join("initdb"), farm2.join("initdb")).unwrap();
    std::os::unix::fs::symlink(safe.join("postgres"), farm2.join("postgres")).unwrap();
    cases.push((
        farm2,
        beside.join("postgres"),
        "writable by group and other",
    ));

    for (given, named, why) in &cases {
        let given = given.display().to_string();
        let out = e.output(&["pg", "run", "redo", "--duration", "1s", "--pg-bin", &given]);
        let line = util::refusal_line(
            &given,
            &out,
            &[
                "--pg-bin",
                &format!("{} ", named.display()),
                why,
                "dbio runs no program another user could have replaced",
            ],
        );
        assert!(
            !mark.exists(),
            "{given}: {:?} ran ({line})",
            std::fs::read_to_string(&mark)
        );
        assert!(
            !e.join("dbio-runs").exists(),
            "{given}: {:?}",
            util::tree(e.path())
        );
    }
    assert!(processes_with(&e.path().display().to_string()).is_empty());
}

/// `--pg-set` takes measurement settings only: one that would open the server, make it
/// run a program or load code, write outside its run directory, or smuggle a second
/// setting in its value is refused before anything is made or started.
#[test]
fn settings_that_open_the_server_or_run_programs_are_refused_before_anything() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let mark = e.join("ran").display().to_string();
    let here = e.path().display().to_string();
    for (set, name, why) in [
        (
            "listen_addresses=*".to_string(),
            "listen_addresses",
            "opens the server",
        ),
        ("port=5433".into(), "port", "opens the server"),
        (
            "unix_socket_directories=/tmp".into(),
            "unix_socket_directories",
            "opens the server",
        ),
        (
            "unix_socket_permissions=0777".into(),
            "unix_socket_permissions",
            "opens the server",
        ),
        (
            "hba_file=/etc/passwd".into(),
            "hba_file",
            "opens the server",
        ),
        ("ssl=on".into(), "ssl", "opens the server"),
        (
            format!("archive_command=touch {mark}"),
            "archive_command",
            "run a program",
        ),
        ("archive_mode=on".into(), "archive_mode", "run a program"),
        (
            format!("restore_command=touch {mark}"),
            "restore_command",
            "run a program",
        ),
        (
            "shared_preload_libraries=auto_explain".into(),
            "shared_preload_libraries",
            "load code",
        ),
        (
            "dynamic_library_path=/tmp".into(),
            "dynamic_library_path",
            "load code",
        ),
        (
            "config_file=/tmp/x.conf".into(),
            "config_file",
            "outside its run directory",
        ),
        (
            "include=/etc/passwd".into(),
            "include",
            "outside its run directory",
        ),
        (
            "log_directory=/tmp".into(),
            "log_directory",
            "outside its run directory",
        ),
        (
            "logging_collector=on".into(),
            "logging_collector",
            "outside its run directory",
        ),
        (
            "LISTEN_ADDRESSES=*".into(),
            "listen_addresses",
            "opens the server",
        ),
        (
            "auto_explain.log_min_duration=0".into(),
            "auto_explain.log_min_duration",
            "not a setting's name",
        ),
        (
            "geqo=off".into(),
            "geqo",
            "not one of the measurement settings",
        ),
        (
            format!("fsync=on\narchive_command=touch {mark}"),
            "fsync",
            "control character",
        ),
    ] {
        let out = e.output(&[
            "pg",
            "run",
            "redo",
            "--duration",
            "1s",
            "--pg-bin",
            &bin,
            "--pg-set",
            &set,
        ]);
        util::refusal_line(&set, &out, &["--pg-set", name, why]);
        assert!(
            !e.join("dbio-runs").exists(),
            "{set}: {:?}",
            util::tree(e.path())
        );
        assert!(processes_with(&here).is_empty(), "{set}");
    }
    assert!(!Path::new(&mark).exists());
}

#[test]
fn compare_json_has_both_sides_ratios_and_findings_and_show_finds_it() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let c = e.json(&[
        "pg",
        "compare",
        "read-iops",
        "--sync",
        "--sessions",
        "2",
        "--size",
        "16M",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
        "--pg-bin",
        &bin,
    ]);
    assert_eq!(c["schema"], "dbio.db-compare.v1", "{c}");
    assert_eq!(c["command"], "pg compare");
    assert_eq!(c["test"], "read-iops");
    // Both sides, whole: the plain test of the shape table, and the test through PostgreSQL.
    let storage = &c["storage"]["result"];
    let database = &c["database"]["result"];
    assert_eq!(storage["test"], "read-iops");
    assert_eq!(storage["config"]["submission"], "sync");
    assert_eq!(database["test"], "pg read-iops");
    assert_eq!(c["database"]["event"], "index lookup");
    // The storage side issues PostgreSQL's shape (8 KiB buffered preads, --like postgres)
    // with the server's wal_sync_method, and says so.
    assert_eq!(c["storage"]["event"], "DataFileRead");
    assert_eq!(storage["config"]["like"], "postgres");
    assert_eq!(storage["config"]["io_mode"], "fdatasync");
    assert_eq!(storage["config"]["block_size"], 8192);
    assert!(
        c["storage_shape"].as_str().is_some_and(
            |s| s.starts_with("PostgreSQL's I/O shapes (--like postgres --io-mode fdatasync")
        ),
        "{}",
        c["storage_shape"]
    );
    assert_eq!(
        storage["config"]["sessions"],
        database["config"]["sessions"]
    );
    // The ratios are the database's figure over the storage's: its own blocks read against
    // the storage's 8 KiB reads.
    let figures = c["figures"].as_array().unwrap();
    let iops = figures
        .iter()
        .find(|f| f["figure"] == "Blocks read/s")
        .unwrap();
    let (s, d) = (util::f(&iops["storage"]), util::f(&iops["database"]));
    assert!(s > 0.0 && d > 0.0, "{iops}");
    assert!((util::f(&iops["ratio"]) - d / s).abs() < 1e-9, "{iops}");
    assert_eq!(
        util::f(&iops["storage"]),
        util::f(&storage["events"][0]["iops"])
    );
    assert!(
        c["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["text"].as_str().unwrap().starts_with("PostgreSQL read")),
        "{}",
        c["findings"]
    );
    // Recorded: its runs by their ids, itself as c<ID>, found again by `dbio show`.
    let id = util::u(&c["id"]);
    for side in ["storage", "database"] {
        let run = util::u(&c[side]["run_id"]);
        let shown = e.json(&["show", &run.to_string(), "--json"]);
        assert_eq!(shown["test"], c[side]["result"]["test"], "{side}");
    }
    let again = e.json(&["show", &format!("c{id}"), "--json"]);
    assert_eq!(again["figures"], c["figures"]);
    assert_eq!(again["id"], c["id"]);
    let text = e.output(&["show", &format!("c{id}")]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("The storage gives, the database gets") && text.contains("DataFileRead"),
        "{text}"
    );
    let runs = String::from_utf8_lossy(&e.output(&["runs"]).stdout).to_string();
    assert!(runs.contains(&format!("c{id} ")), "{runs}");
    // In Markdown too: the compare's tables, and the compare listed after the runs.
    let md = e.output(&["show", &format!("c{id}"), "--format", "md"]);
    assert!(md.status.success());
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains(c["database"]["event"].as_str().unwrap())
            && md.lines().any(|l| l.starts_with("|:--|")),
        "{md}"
    );
    let runs = String::from_utf8_lossy(&e.output(&["runs", "--format", "md"]).stdout).to_string();
    assert!(
        runs.contains("Compares through a database") && runs.contains(&format!("| c{id} ")),
        "{runs}"
    );
    // Its directory holds both runs and compare.json.
    let dir = std::path::PathBuf::from(c["storage"]["run_dir"].as_str().unwrap());
    let holder = dir.parent().unwrap();
    assert!(
        holder.join("compare.json").is_file(),
        "{:?}",
        util::tree(holder)
    );
    assert!(
        Path::new(c["database"]["run_dir"].as_str().unwrap()).starts_with(holder),
        "{c}"
    );
    let unknown = e.output(&["show", "c999"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(processes_with(&e.path().display().to_string()).is_empty());
    assert!(
        server_dirs(e.path()).is_empty(),
        "{:?}",
        server_dirs(e.path())
    );
}
