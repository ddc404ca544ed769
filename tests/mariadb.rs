//! `dbio mysql`: tests through a real MariaDB — a throwaway server dbio starts
//! (`--mysql-bin`) and a "user's server" the test starts itself (`--mysql`), whose table and
//! global variables must be the same afterwards. Nothing of dbio's may be left: no
//! database, no mariadbd, no server directory, after a normal end and after SIGINT.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use serde_json::Value;

use crate::util::{self, Env};

/// Debian's MariaDB (`.ci/install-deps` installs it), or a skip.
fn mysql_bin() -> Option<&'static str> {
    let ok = Path::new("/usr/sbin/mariadbd").is_file()
        && Path::new("/usr/bin/mariadb-install-db").is_file();
    if !ok {
        util::skip("MariaDB is not installed (/usr/sbin/mariadbd; .ci/install-deps installs it)");
        return None;
    }
    if !util::is_root() {
        util::skip("a throwaway MariaDB needs root here (it runs as the system user dbio)");
        return None;
    }
    Some("/usr/sbin")
}

/// An environment whose directory the server's unprivileged user may enter.
fn env() -> Env {
    let e = Env::new();
    std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    e
}

/// mariadbd processes whose command line holds `needle`.
fn servers_with(needle: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) && cmd.contains("mariadbd") {
                out.push(cmd);
            }
        }
    }
    out
}

/// Runs `dbio mysql run TEST ARGS --json` on a throwaway server under `e`; its result.
fn throwaway(e: &Env, test: &str, args: &[&str]) -> Value {
    let out = e
        .dbio()
        .args([
            "mysql",
            "run",
            test,
            "--mysql-bin",
            "/usr/sbin",
            "--duration",
            "3s",
        ])
        .args(["--warmup", "1s", "--json", "--out"])
        .arg(e.join("runs"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dbio mysql run {test} {args:?} failed ({:?}):\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing of the server is left: no process, no directory in the run's.
    let runs = e.join("runs").display().to_string();
    assert_eq!(servers_with(&runs), Vec::<String>::new());
    for run in std::fs::read_dir(e.join("runs")).unwrap().flatten() {
        assert!(!run.path().join("mysql").exists(), "{:?} left", run.path());
    }
    serde_json::from_slice(&out.stdout).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn a_random_read_is_one_data_file_read_and_the_server_is_gone_after() {
    let Some(_) = mysql_bin() else { return };
    let e = env();
    let r = throwaway(
        &e,
        "read-iops",
        &["--sync", "--size", "192M", "--sessions", "4"],
    );
    let ev = &r["events"][0];
    // The sessions' statements are named for what they are; the I/O they wait on by
    // InnoDB's own name.
    assert_eq!(ev["name"], "index lookup");
    let notes = r["config"]["engine_notes"].to_string();
    assert!(
        notes.contains("wait/io/file/innodb/innodb_data_file read"),
        "{notes}"
    );
    let requests = u(&ev["requests"]) as f64;
    let m = &r["mysql"];
    let file = (m["files"].as_array().unwrap().iter())
        .find(|f| f["event"] == "wait/io/file/innodb/innodb_data_file")
        .expect("data-file I/O from performance_schema");
    let reads = u(&file["reads"]) as f64;
    assert!(requests > 100.0, "{requests} requests");
    // Rates, each over its own interval: the server's statistics are read when the window
    // has begun (the query takes its time, longer on a loaded machine), so its interval is
    // a little shorter than the sessions' window. A lookup whose page is in the buffer pool
    // reads nothing: the pool's share of the table is taken off.
    let lookups_per_s = requests / util::f(&r["measured_seconds"]);
    let reads_per_s = reads / util::f(&m["interval_s"]);
    let setting = |name: &str| {
        (m["server"]["settings"].as_array().unwrap().iter())
            .find(|s| s[0] == name)
            .and_then(|s| s[1].as_str()?.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{name} in {}", m["server"]["settings"]))
    };
    let pool_share = setting("innodb_buffer_pool_size") / (192.0 * 1024.0 * 1024.0);
    let expected = lookups_per_s * (1.0 - pool_share);
    assert!(
        (reads_per_s - expected).abs() <= 0.04 * lookups_per_s,
        "{lookups_per_s:.0} lookups/s, {reads_per_s:.0} data-file reads/s in performance_schema \
         ({expected:.0} expected with {:.1}% of the table in the buffer pool)",
        100.0 * pool_share
    );
    // The sessions' waits under InnoDB's own names.
    assert!(
        (m["waits"].as_array().unwrap().iter())
            .any(|w| w["event"] == "wait/io/file/innodb/innodb_data_file"),
        "{}",
        m["waits"]
    );
    assert!(
        m["cache"].as_str().unwrap().contains("O_DIRECT"),
        "{}",
        m["cache"]
    );
    assert_eq!(r["config"]["block_size"], 16384);
}

#[test]
fn redo_at_8_sessions_shares_log_writes() {
    let Some(_) = mysql_bin() else { return };
    let e = env();
    let r = throwaway(&e, "redo", &["--sessions", "8", "--size", "16M"]);
    let i = &r["mysql"]["innodb"];
    let per = i["commits_per_log_write"]
        .as_f64()
        .expect("commits per log write");
    assert!(per > 1.0, "{per} commits per log write: {i}");
    assert!(u(&i["commits"]) > 100, "{i}");
    assert_eq!(i["commits_source"], "INNODB_METRICS trx_rw_commits");
    let found = r["mysql"]["findings"].to_string();
    assert!(found.contains("commits per log write"), "{found}");
}

#[test]
fn doublewrite_doubles_the_bytes_and_its_pages_match_innodb_metrics() {
    let Some(_) = mysql_bin() else { return };
    let e = env();
    let r = throwaway(&e, "write-iops", &["--sessions", "4", "--size", "64M"]);
    let i = &r["mysql"]["innodb"];
    let (pages, dblwr) = (u(&i["pages_written"]), u(&i["dblwr_pages"]));
    let metric = u(&i["dblwr_pages_metric"]);
    assert!(dblwr > 100, "{i}");
    // Status and INNODB_METRICS are read one after the other while pages are written.
    assert!(
        (metric as f64 - dblwr as f64).abs() <= 0.05 * dblwr as f64,
        "Innodb_dblwr_pages_written {dblwr}, INNODB_METRICS innodb_dblwr_pages_written {metric}"
    );
    let ratio = u(&i["data_written_bytes"]) as f64 / (pages * 16384) as f64;
    assert!((1.7..=2.3).contains(&ratio), "{ratio}: {i}");
    let found = r["mysql"]["findings"].to_string();
    assert!(
        found.contains("doublewrite doubled the bytes written"),
        "{found}"
    );
}

#[test]
fn bad_input_is_refused_before_anything_is_made() {
    let Some(_) = mysql_bin() else { return };
    let e = env();
    for (args, says) in [
        (
            vec![
                "--mysql-bin",
                "/usr/sbin",
                "--mysql-set",
                "bind_address=0.0.0.0",
            ],
            "bind_address opens the server",
        ),
        (
            vec![
                "--mysql-bin",
                "/usr/sbin",
                "--mysql-set",
                "init_file=/tmp/x.sql",
            ],
            "init_file",
        ),
        (
            vec![
                "--mysql-bin",
                "/usr/sbin",
                "--mysql-set",
                "innodb_flush_method",
            ],
            "NAME=VALUE",
        ),
        (
            vec!["--mysql", "mysql://root:hunter2@localhost/mysql"],
            "MYSQL_PWD",
        ),
        (vec!["--mysql-bin", "/nonexistent"], "no mariadbd"),
        (vec![], "--mysql or --mysql-bin"),
    ] {
        let out = e
            .dbio()
            .args(["mysql", "run", "read-iops", "--out"])
            .arg(e.join("runs"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert!(!e.join("runs").exists(), "{args:?} made the run directory");
    }
}

/// A user's table's checksum and the server's global variables.
type Fingerprint = (Vec<(String, Option<u64>)>, Vec<(String, String)>);

/// A MariaDB server the test starts itself (as user nobody, on its own socket: not dbio's user): the user's.
struct UsersServer {
    dir: PathBuf,
    child: Child,
}

impl UsersServer {
    fn start(e: &Env) -> UsersServer {
        let dir = e.join("users-server");
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let st = Command::new("chown")
            .args(["-R", "nobody:nogroup"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(st.success());
        let as_dbio = |prog: &str| {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", prog]);
            c
        };
        let st = as_dbio("/usr/bin/mariadb-install-db")
            .args([
                "--no-defaults",
                "--basedir=/usr",
                "--auth-root-authentication-method=normal",
            ])
            .arg(format!("--datadir={}", dir.join("data").display()))
            .args(["--skip-test-db", "--skip-name-resolve"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        let child = as_dbio("/usr/sbin/mariadbd")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .arg(format!("--socket={}", dir.join("sock").display()))
            .arg("--skip-networking")
            .arg(format!("--log-error={}", dir.join("error.log").display()))
            .arg(format!("--tmpdir={}", dir.join("tmp").display()))
            .args(["--performance-schema=ON", "--innodb-buffer-pool-size=16M"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let s = UsersServer { dir, child };
        let until = Instant::now() + Duration::from_secs(60);
        while s.conn_opt().is_none() {
            assert!(Instant::now() < until, "the test's server did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        s
    }

    fn url(&self) -> String {
        format!(
            "mysql://root@localhost/mysql?socket={}",
            self.dir.join("sock").display()
        )
    }

    fn conn_opt(&self) -> Option<mysql::Conn> {
        let o = mysql::OptsBuilder::new()
            .socket(Some(self.dir.join("sock").display().to_string()))
            .user(Some("root"));
        mysql::Conn::new(o).ok()
    }

    fn conn(&self) -> mysql::Conn {
        self.conn_opt().expect("connect to the test's server")
    }

    fn dbio_databases(&self) -> Vec<String> {
        self.conn()
            .query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'dbio%' ORDER BY 1")
            .unwrap()
    }

    /// The user's table's checksum and every global variable.
    fn fingerprint(&self) -> Fingerprint {
        let mut c = self.conn();
        let sum = c.query("CHECKSUM TABLE shop.orders").unwrap();
        let vars = c.query("SHOW GLOBAL VARIABLES").unwrap();
        (sum, vars)
    }
}

impl Drop for UsersServer {
    fn drop(&mut self) {
        // SAFETY: signalling the test's own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

#[test]
fn a_users_server_is_left_as_it_was_even_after_ctrl_c() {
    let Some(_) = mysql_bin() else { return };
    if Command::new("setpriv").arg("--version").output().is_err() {
        util::skip("setpriv is not installed");
        return;
    }
    let e = env();
    let s = UsersServer::start(&e);
    s.conn()
        .query_drop(
            "CREATE DATABASE shop; CREATE TABLE shop.orders (id int PRIMARY KEY, item varchar(20)); \
             INSERT INTO shop.orders VALUES (1, 'tea'), (2, 'milk'); \
             CREATE DATABASE dbio_not_ours",
        )
        .unwrap();
    let before = s.fingerprint();
    let url = s.url();
    let run = |extra: &[&str]| {
        let mut c = e.process();
        c.args([
            "mysql",
            "run",
            "read-iops",
            "--sync",
            "--sessions",
            "2",
            "--size",
            "16M",
        ])
        .args(["--warmup", "0s", "--json", "--mysql", &url, "--out"])
        .arg(e.join("runs"))
        .args(extra);
        c
    };
    let out = run(&["--duration", "2s"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["mysql"]["server"]["throwaway"], false);
    assert_eq!(s.dbio_databases(), vec!["dbio_not_ours".to_string()]);
    assert_eq!(s.fingerprint(), before);

    // SIGINT mid-run: the run's database is dropped.
    let mut child = run(&["--duration", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    while s.dbio_databases().len() < 2 {
        assert!(Instant::now() < until, "the run made no database");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130), "{st:?}");
    assert_eq!(s.dbio_databases(), vec!["dbio_not_ours".to_string()]);
    assert_eq!(s.fingerprint(), before);

    // `mysql clean` drops what carries dbio's mark, and only that.
    s.conn()
        .query_drop(format!(
            "CREATE DATABASE dbio_left1 COMMENT 'dbio {} run left1'",
            env!("CARGO_PKG_VERSION")
        ))
        .unwrap();
    let out = e
        .dbio()
        .args(["mysql", "clean", "--mysql", &url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("dropped database dbio_left1"));
    assert_eq!(s.dbio_databases(), vec!["dbio_not_ours".to_string()]);
    assert_eq!(s.fingerprint(), before);
    // --json says the same; --format md that nothing is left to drop.
    s.conn()
        .query_drop(format!(
            "CREATE DATABASE dbio_left2 COMMENT 'dbio {} run left2'",
            env!("CARGO_PKG_VERSION")
        ))
        .unwrap();
    let done = e.json(&["mysql", "clean", "--mysql", &url, "--json"]);
    assert_eq!(done["schema"], "dbio.mysql-clean.v1", "{done}");
    assert_eq!(done["dropped"], serde_json::json!(["dbio_left2"]), "{done}");
    assert_eq!(done["left"], serde_json::json!([]), "{done}");
    let out = e.output(&["mysql", "clean", "--mysql", &url, "--format", "md"]);
    assert!(out.status.success());
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.starts_with("no dbio database at "), "{md}");
    assert_eq!(s.dbio_databases(), vec!["dbio_not_ours".to_string()]);
}

#[test]
fn the_compare_shows_both_sides_and_innodbs_findings() {
    let Some(_) = mysql_bin() else { return };
    let e = env();
    let out = e
        .dbio()
        .args([
            "mysql",
            "compare",
            "read-iops",
            "--sync",
            "--size",
            "64M",
            "--sessions",
            "2",
        ])
        .args([
            "--duration",
            "2s",
            "--warmup",
            "1s",
            "--mysql-bin",
            "/usr/sbin",
            "--json",
            "--out",
        ])
        .arg(e.join("runs"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["command"], "mysql compare");
    let figure = |name: &str| {
        (c["figures"].as_array().unwrap().iter())
            .find(|f| f["figure"] == name)
            .unwrap_or_else(|| panic!("no {name}: {}", c["figures"]))
            .clone()
    };
    // Blocks with blocks: the storage's page reads beside InnoDB's own pages read.
    let blocks = figure("Blocks read/s");
    assert!(
        blocks["storage"].as_f64().unwrap() > 0.0 && blocks["database"].as_f64().unwrap() > 0.0,
        "{blocks}"
    );
    // Both sides read one InnoDB page per request.
    for side in ["storage", "database"] {
        assert_eq!(
            c[side]["result"]["config"]["request_bytes"], 16384,
            "{side}: {}",
            c[side]["result"]["config"]
        );
    }
    assert!(
        figure("Read wait, InnoDB's timing (µs)")["database"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let found = c["findings"].to_string();
    assert!(found.contains("innodb_flush_method=O_DIRECT"), "{found}");
    assert!(
        found.contains("MariaDB read") && found.contains("raw"),
        "{found}"
    );
    // The storage side ran InnoDB's shape (a page read by the session), opened as the
    // server's flush method opens its data files, and the compare says so.
    let storage = &c["storage"]["result"];
    assert_eq!(storage["config"]["like"], "innodb", "{}", storage["config"]);
    assert_eq!(storage["config"]["io_mode"], "O_DIRECT");
    assert_eq!(
        storage["events"][0]["name"], "innodb_data_file read",
        "{}",
        storage["events"]
    );
    let said = c["storage_shape"].as_str().unwrap_or_default();
    assert!(said.contains("--like innodb --io-mode O_DIRECT"), "{said}");
}
