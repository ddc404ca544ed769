//! `dbio pg` on a user's server, tried as a hostile or unlucky user would: a run owns its
//! schema while it lives (`pg clean` leaves it, and names what depends on a schema instead
//! of dropping it); a password never leaves dbio; `--pg` changes nothing on the server (no
//! checkpoint, no statistics reset); a run whose sessions the server cuts off keeps its
//! partial result; and what a killed run leaves — a schema, a throwaway server's
//! directories — is named by `dbio doctor` and undone by `dbio clean --stale`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::pg::{UserServer, env, pg_bin, processes_with};
use crate::util::{self, Env, Killed};

/// Waits (up to 60 s) until `cond` holds while `child` runs.
fn wait_until(child: &mut Killed, what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "dbio ended before {what}"
        );
        assert!(t0.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `dbio pg run TEST --pg URL` (or any other arguments) as a child, quiet.
fn spawn_pg_run(e: &Env, args: &[&str]) -> Killed {
    Killed(
        e.process()
            .args(["pg", "run"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn pg_clean_leaves_a_running_runs_schema_and_names_what_depends_on_a_schema() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let s = UserServer::start(&bin, &e);
    let url = s.url("owner");
    let mut run = spawn_pg_run(
        &e,
        &[
            "read-iops",
            "--sync",
            "--sessions",
            "2",
            "--size",
            "16M",
            "--duration",
            "6s",
            "--warmup",
            "0s",
            "--json",
            "--pg",
            &url,
        ],
    );
    wait_until(&mut run, "the run made its schema", || {
        !s.dbio_schemas().is_empty()
    });
    let running = s.dbio_schemas()[0].clone();
    // Two schemas a killed run would leave: one a user's view depends on, one free.
    let mut c = s.client("owner").unwrap();
    c.batch_execute(
        "CREATE SCHEMA dbio_viewed; COMMENT ON SCHEMA dbio_viewed IS 'dbio 0.1.0 run 1_a';
         CREATE TABLE dbio_viewed.blocks (id bigint PRIMARY KEY, pad text);
         CREATE VIEW public.mine_over_dbio AS SELECT id FROM dbio_viewed.blocks;
         CREATE SCHEMA dbio_zfree; COMMENT ON SCHEMA dbio_zfree IS 'dbio 0.1.0 run 2_b';
         CREATE TABLE dbio_zfree.blocks (id bigint PRIMARY KEY);",
    )
    .unwrap();
    let out = e.output(&["pg", "clean", "--pg", &url]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(&format!("left schema {running}: in use by a running run")),
        "{stdout}"
    );
    // Who holds it: the run's own connection, named after its dbio.
    assert!(
        stdout.contains(&format!("application 'dbio pid {}'", run.id())),
        "{stdout}"
    );
    assert!(
        stdout.contains("left schema dbio_viewed:") && stdout.contains("view mine_over_dbio"),
        "{stdout}"
    );
    // It went on past both.
    assert!(stdout.contains("dropped schema dbio_zfree"), "{stdout}");
    let schemas = s.dbio_schemas();
    assert!(schemas.contains(&running), "{schemas:?}");
    assert!(schemas.contains(&"dbio_viewed".to_string()), "{schemas:?}");
    assert!(!schemas.contains(&"dbio_zfree".to_string()), "{schemas:?}");
    let view: i64 = c
        .query_one("SELECT count(*) FROM public.mine_over_dbio", &[])
        .unwrap()
        .get(0);
    assert_eq!(view, 0, "the user's view is still there");
    // The run was not disturbed: it completes and drops its own schema.
    let st = run.wait().unwrap();
    assert_eq!(st.code(), Some(0), "{st:?}");
    assert_eq!(s.dbio_schemas(), vec!["dbio_viewed".to_string()]);
    // Once the view is gone, the schema is dropped.
    c.batch_execute("DROP VIEW public.mine_over_dbio").unwrap();
    let out = e.output(&["pg", "clean", "--pg", &url]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(s.dbio_schemas().is_empty());
}

/// A pg_hba.conf: `owner` over the socket without a password, everyone else with one.
const HBA: &str = "local all owner trust\nlocal all all scram-sha-256\n";

/// The processes whose parent is `pid`, with their command lines.
fn children_of(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid)
            && let Ok(cmd) = std::fs::read(entry.path().join("cmdline"))
        {
            out.push(text(&cmd).replace('\0', " "));
        }
    }
    out
}

/// Every file under `dir` (not following links) whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    util::tree(dir)
        .into_iter()
        .filter(|rel| {
            let p = dir.join(rel);
            std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_file())
                && std::fs::read(&p)
                    .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .collect()
}

#[test]
fn a_password_never_leaves_dbio_and_comes_from_where_libpq_finds_it() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    const PW: &str = "Pw7fq-Secret";
    // Settings that hold secrets or run programs, on the server's command line.
    let s = UserServer::start_with(
        &bin,
        &e,
        Some(HBA),
        &[
            "archive_command=test -f /nonexistent/ArchSecret42",
            "primary_conninfo=host=nowhere password=ConnSecret42",
        ],
    );
    let mut c = s.client("owner").unwrap();
    c.batch_execute(&format!(
        "CREATE ROLE keyed LOGIN PASSWORD '{PW}'; GRANT CREATE ON DATABASE postgres TO keyed;"
    ))
    .unwrap();
    let dir = s.dir.display().to_string();
    let kv = format!("host={dir} port=5433 user=keyed dbname=postgres");
    let url = format!(
        "postgresql://keyed:{PW}@{}:5433/postgres",
        dir.replace('/', "%2F")
    );
    // A run with the password in a URL, watched while it goes: its children's command
    // lines, and doctor's list of dbio processes.
    let mut run = Killed(
        e.process()
            .args(["pg", "run", "redo", "--pg", &url, "--sessions", "2"])
            .args(["--duration", "3s", "--warmup", "0s"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = run.id();
    let mut seen_doctor = false;
    while run.try_wait().unwrap().is_none() {
        for cmd in children_of(pid) {
            assert!(!cmd.contains(PW), "a child's command line: {cmd}");
        }
        if !seen_doctor {
            let out = e.output(&["doctor"]);
            let t = text(&out.stdout);
            assert!(!t.contains(PW), "{t}");
            if t.contains("keyed:****@") {
                seen_doctor = true;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let status = run.wait().unwrap();
    let read = |r: &mut dyn std::io::Read| {
        let mut b = Vec::new();
        r.read_to_end(&mut b).unwrap();
        text(&b)
    };
    let stdout = read(run.stdout.as_mut().unwrap());
    let stderr = read(run.stderr.as_mut().unwrap());
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        seen_doctor,
        "doctor never listed the run with its password masked"
    );
    assert!(
        !stdout.contains(PW) && !stderr.contains(PW),
        "{stdout}{stderr}"
    );
    // Settings that hold secrets are masked in what the run recorded.
    let run_dir = util::only_run_dir(&e, "pg-redo");
    let r = util::read_json(&run_dir.join("result.json"));
    let settings = r["pg"]["server"]["settings"].to_string();
    assert!(settings.contains("archive_command"), "{settings}");
    for secret in ["ArchSecret42", "ConnSecret42"] {
        assert!(!settings.contains(secret), "{settings}");
        assert_eq!(files_holding(&run_dir, secret), Vec::<String>::new());
    }
    // The run's files say where the server is and who connects: only their owner reads them.
    for f in util::tree(&run_dir) {
        let mode = std::fs::metadata(run_dir.join(&f))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{f}: {mode:o}");
    }
    // A wrong password in a URL: refused, not echoed.
    let wrong = url.replace(PW, "WrongPw-31337");
    let out = e.output(&["pg", "clean", "--pg", &wrong]);
    let err = util::refusal_line("a wrong password", &out, &["--pg", "password"]);
    assert!(!err.contains("WrongPw-31337"), "{err}");
    // A URL dbio cannot read: its password not echoed either.
    let bad = format!("postgresql://keyed:{PW}@[/x");
    let out = e.output(&["pg", "clean", "--pg", &bad]);
    let err = util::refusal_line("a bad URL", &out, &["--pg", "keyed:****@"]);
    assert!(!err.contains(PW), "{err}");

    // PGPASSWORD.
    let out = e
        .dbio()
        .args(["pg", "clean", "--pg", &kv])
        .env("PGPASSWORD", PW)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // None at all, and no terminal to ask on: bad input, saying where a password goes.
    let out = e
        .dbio()
        .args(["pg", "clean", "--pg", &kv])
        .env_remove("PGPASSWORD")
        .env("PGPASSFILE", e.join("no-such-file"))
        .output()
        .unwrap();
    util::refusal_line("no password", &out, &["--pg", "PGPASSWORD"]);
    // A password file only its owner may read; a 0644 one is ignored with a warning.
    let file = e.join("pgpass");
    std::fs::write(&file, format!("{dir}:5433:postgres:keyed:{PW}\n")).unwrap();
    for (mode, works) in [(0o600, true), (0o644, false)] {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        let out = e
            .dbio()
            .args(["pg", "clean", "--pg", &kv])
            .env_remove("PGPASSWORD")
            .env("PGPASSFILE", &file)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        if works {
            assert_eq!(out.status.code(), Some(0), "{err}");
        } else {
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(err.contains("group or world access"), "{err}");
        }
    }

    // The job `job from-pg` writes: no password in the command line it records, 0600.
    let load = {
        let mut c = s.client("owner").unwrap();
        std::thread::spawn(move || {
            c.batch_execute("CREATE TABLE churn (i int)").unwrap();
            let t0 = Instant::now();
            while t0.elapsed() < Duration::from_secs(4) {
                c.batch_execute("INSERT INTO churn VALUES (1)").unwrap();
            }
        })
    };
    let job = e.join("from-pg.toml");
    let out = e
        .dbio()
        .args(["job", "from-pg", "--pg", &url, "--samples", "1"])
        .args(["--interval", "2s", "--output"])
        .arg(&job)
        .output()
        .unwrap();
    load.join().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&job).unwrap();
    assert!(!written.contains(PW), "{written}");
    assert!(written.contains("keyed:****@"), "{written}");
    let mode = std::fs::metadata(&job).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the job file holds connection details");
    assert!(!text(&out.stderr).contains(PW));

    // Nothing dbio wrote holds the password: the run directories, the job, the results
    // store (its file's bytes, free pages included).
    let mine: Vec<String> = files_holding(e.path(), PW)
        .into_iter()
        .filter(|p| !p.starts_with("user-pg") && p != "pgpass")
        .collect();
    assert_eq!(mine, Vec::<String>::new());
    assert_eq!(files_holding(e.data_home.path(), PW), Vec::<String>::new());
}

/// `pg_stat_bgwriter.checkpoints_req` and `pg_stat_database.stats_reset` of the server.
fn checkpoint_and_reset(s: &UserServer) -> (i64, Option<String>) {
    let mut c = s.client("owner").unwrap();
    let row = c
        .query_one(
            "SELECT (SELECT checkpoints_req FROM pg_stat_bgwriter),
                    (SELECT stats_reset::text FROM pg_stat_database WHERE datname = 'postgres')",
            &[],
        )
        .unwrap();
    (row.get(0), row.get(1))
}

#[test]
fn a_users_server_gets_no_checkpoint_and_no_statistics_reset() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let s = UserServer::start(&bin, &e);
    let before = checkpoint_and_reset(&s);
    // A write test, as its summary shows it: its table is not "read-only".
    let out = e
        .dbio()
        .args([
            "pg",
            "run",
            "write-iops",
            "--sessions",
            "2",
            "--size",
            "16M",
        ])
        .args([
            "--duration",
            "2s",
            "--warmup",
            "0s",
            "--pg",
            &s.url("owner"),
        ])
        .output()
        .unwrap();
    let summary = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        checkpoint_and_reset(&s),
        before,
        "a checkpoint was requested or statistics reset on the user's server"
    );
    let r = util::read_json(&util::only_run_dir(&e, "pg-write-iops").join("result.json"));
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("no CHECKPOINT on your server"),
        "{warnings}"
    );
    assert!(
        summary.contains("no CHECKPOINT on your server"),
        "{summary}"
    );
    assert!(summary.contains("PostgreSQL table"), "{summary}");
    assert!(!summary.contains("read-only"), "{summary}");
}

#[test]
fn sessions_the_server_cuts_off_keep_a_partial_result() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let s = UserServer::start(&bin, &e);
    let mut run = spawn_pg_run(
        &e,
        &[
            "read-iops",
            "--sync",
            "--sessions",
            "2",
            "--size",
            "16M",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--json",
            "--pg",
            &s.url("owner"),
        ],
    );
    let mut c = s.client("owner").unwrap();
    let active = |c: &mut postgres::Client| -> i64 {
        c.query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dbio' AND query LIKE '%blocks WHERE id%'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    wait_until(&mut run, "the sessions ran", || active(&mut c) >= 2);
    std::thread::sleep(Duration::from_secs(1));
    // Every connection of dbio's: the sessions, the observer, the schema's holder.
    let n: i64 = c
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name LIKE 'dbio%'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(n >= 3, "{n}");
    let st = run.wait().unwrap();
    assert_eq!(st.code(), Some(4), "{st:?}");
    let r = util::read_json(&util::only_run_dir(&e, "pg-read-iops").join("result.json"));
    assert_eq!(r["partial"], true, "{r}");
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("the server closed 2 sessions' connections at")
            && warnings.contains("terminating connection due to administrator command"),
        "{warnings}"
    );
    assert!(util::u(&r["events"][0]["requests"]) > 0);
    // The schema was dropped on a new connection.
    assert!(s.dbio_schemas().is_empty(), "{:?}", s.dbio_schemas());
}

#[test]
fn a_server_stopped_mid_run_keeps_the_partial_result_and_the_schema_is_a_named_leftover() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let mut s = UserServer::start(&bin, &e);
    let mut run = spawn_pg_run(
        &e,
        &[
            "redo",
            "--sessions",
            "2",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--json",
            "--pg",
            &s.url("owner"),
        ],
    );
    let mut c = s.client("owner").unwrap();
    wait_until(&mut run, "the sessions committed", || {
        c.query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'dbio' AND query LIKE 'INSERT%'",
            &[],
        )
        .map(|r| r.get::<_, i64>(0))
        .unwrap_or(0)
            >= 2
    });
    let schema = s.dbio_schemas()[0].clone();
    drop(c);
    std::thread::sleep(Duration::from_secs(1));
    s.stop();
    let st = run.wait().unwrap();
    assert_eq!(st.code(), Some(4), "{st:?}");
    let r = util::read_json(&util::only_run_dir(&e, "pg-redo").join("result.json"));
    assert_eq!(r["partial"], true);
    let warnings = r["warnings"].to_string();
    assert!(
        warnings.contains("the server closed 2 sessions' connections at"),
        "{warnings}"
    );
    assert!(
        warnings.contains(&format!("schema {schema} could not be dropped")),
        "{warnings}"
    );
    // The schema it could not drop is a leftover doctor names, with the command.
    let (code, out) = doctor(&e, &["doctor"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.lines().any(|l| l.contains(&schema)
            && l.contains("STALE")
            && l.contains("dbio pg clean --pg")),
        "{out}"
    );
}

/// `dbio doctor` or `dbio clean --stale` (`args`) run with `e`'s store: exit status and
/// stdout.
fn doctor(e: &Env, args: &[&str]) -> (Option<i32>, String) {
    let out = e.output(args);
    (out.status.code(), text(&out.stdout))
}

#[test]
fn a_killed_run_on_a_users_server_leaves_a_schema_doctor_names_and_clean_drops() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let s = UserServer::start(&bin, &e);
    let mut run = spawn_pg_run(
        &e,
        &[
            "read-iops",
            "--sync",
            "--sessions",
            "2",
            "--size",
            "16M",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--json",
            "--pg",
            &s.url("owner"),
        ],
    );
    wait_until(&mut run, "the run made its schema", || {
        !s.dbio_schemas().is_empty()
    });
    let schema = s.dbio_schemas()[0].clone();
    run.kill().unwrap();
    run.wait().unwrap();
    let (code, out) = doctor(&e, &["doctor"]);
    assert_eq!(code, Some(1), "{out}");
    let line = out
        .lines()
        .find(|l| l.contains(&schema))
        .unwrap_or_else(|| panic!("{schema} not named: {out}"));
    assert!(line.contains("STALE"), "{line}");
    let conn = format!(
        "host={} port=5433 user=owner dbname=postgres",
        s.dir.display()
    );
    assert!(
        line.contains(&format!("dbio pg clean --pg '{conn}'")),
        "{line}"
    );
    // Doctor with a path lists it too.
    let (code, out) = doctor(&e, &["doctor", "/nonexistent"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&schema), "{out}");
    let (code, out) = doctor(&e, &["clean", "--stale"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(&format!("dropped schema {schema}")), "{out}");
    assert!(s.dbio_schemas().is_empty());
    let (code, out) = doctor(&e, &["doctor"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains(&schema), "{out}");
}

/// The process id of the postmaster of the throwaway server a run under `here` started
/// (`postgres -D here/…`), if one runs now.
fn postmaster_under(here: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .find(|p| {
            std::fs::read(p.path().join("cmdline")).is_ok_and(|c| {
                let c = text(&c).replace('\0', " ");
                c.contains("postgres -D") && c.contains(here)
            })
        })
        .and_then(|p| p.file_name().to_str()?.parse::<u32>().ok())
}

/// The socket directory of the throwaway server `run` starts under `here`, from the
/// postmaster's command line (`-k DIR`), once it runs.
fn socket_dir(run: &mut Killed, here: &str) -> String {
    let mut sock = None;
    wait_until(run, "the server started", || {
        sock = processes_with(here).iter().find_map(|cmd| {
            let w: Vec<&str> = cmd.split_whitespace().collect();
            w.iter()
                .position(|x| *x == "-k")
                .and_then(|i| w.get(i + 1))
                .map(|d| d.to_string())
        });
        sock.is_some()
    });
    sock.unwrap()
}

#[test]
fn a_killed_run_on_a_throwaway_server_leaves_directories_doctor_names_and_clean_removes() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let mut run = spawn_pg_run(
        &e,
        &[
            "read-iops",
            "--sync",
            "--sessions",
            "2",
            "--size",
            "16M",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--json",
            "--pg-bin",
            &bin,
        ],
    );
    let here = e.path().display().to_string();
    let sock = socket_dir(&mut run, &here);
    assert!(sock.starts_with("/tmp/dbio-pg-"), "{sock}");
    run.kill().unwrap();
    run.wait().unwrap();
    // The postmaster follows its parent (parent-death signal).
    let t0 = Instant::now();
    while !processes_with(&here).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "postgres outlived dbio"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let runs = util::only_run_dir(&e, "pg-read-iops");
    let data = std::fs::canonicalize(&runs).unwrap().join("pg");
    assert!(data.is_dir() && Path::new(&sock).is_dir());
    let (code, out) = doctor(&e, &["doctor"]);
    assert_eq!(code, Some(1), "{out}");
    for dir in [data.display().to_string(), sock.clone()] {
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("  {dir}:")))
            .unwrap_or_else(|| panic!("{dir} not named: {out}"));
        assert!(
            line.contains("STALE") && line.contains(&format!("rm -rf {dir}")),
            "{line}"
        );
    }
    let (code, out) = doctor(&e, &["clean", "--stale"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!data.exists() && !Path::new(&sock).exists(), "{out}");
    assert!(!runs.exists(), "the killed run's directory: {out}");
    let (code, out) = doctor(&e, &["doctor"]);
    assert_eq!(code, Some(0), "{out}");
}

/// Ctrl-C while the throwaway server is being made: initdb (and the bootstrap server it
/// started) is stopped there and then, no postmaster is started after the signal, the run
/// exits 130 saying where it stopped, and nothing is left for `doctor` to name.
#[test]
fn a_signal_while_initdb_runs_stops_it_there_and_starts_no_server() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let mut run = Killed(
        e.process()
            .args([
                "pg",
                "run",
                "read-iops",
                "--size",
                "16M",
                "--duration",
                "5s",
            ])
            .args(["--warmup", "0s", "--pg-bin", &bin])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let here = e.path().display().to_string();
    wait_until(&mut run, "initdb ran", || {
        processes_with(&here).iter().any(|c| c.contains("initdb "))
    });
    // SAFETY: signalling our own child, which has not been reaped.
    unsafe { libc::kill(run.id() as i32, libc::SIGINT) };
    let mut postmaster = None;
    while run.try_wait().unwrap().is_none() {
        postmaster = postmaster.or(processes_with(&here)
            .into_iter()
            .find(|c| c.contains("postgres -D")));
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut err = String::new();
    std::io::Read::read_to_string(run.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(130), "{err}");
    assert_eq!(postmaster, None, "a server was started after Ctrl-C: {err}");
    assert!(err.contains("interrupted while initdb ran"), "{err}");
    let t0 = Instant::now();
    while !processes_with(&here).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "initdb outlived dbio"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (code, out) = doctor(&e, &["doctor"]);
    assert_eq!(code, Some(0), "{out}");
}

/// A throwaway server killed mid-run takes the run's schema with it: the run ends on the
/// lost server, the server's directories go, and no schema record is left that `doctor`
/// would name and `clean --stale` could never undo.
#[test]
fn a_throwaway_server_killed_mid_run_leaves_no_schema_record() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let mut run = spawn_pg_run(
        &e,
        &[
            "write-iops",
            "--size",
            "16M",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--pg-bin",
            &bin,
        ],
    );
    let here = e.path().display().to_string();
    socket_dir(&mut run, &here);
    // The run's schema is noted before it is made: doctor names it, in use, while it lives.
    wait_until(&mut run, "doctor names the run's schema", || {
        let (_, out) = doctor(&e, &["doctor"]);
        out.lines()
            .any(|l| l.trim_start().starts_with("dbio_") && l.contains("(running)"))
    });
    // A throwaway server is restarted after the load (to empty its cache): a postmaster
    // killed before or during that restart is simply replaced (seen in CI: the run then
    // measured its 60 s and ended 0). So whichever postmaster runs is killed, again every
    // 200 ms, until the run ends: one of them is the one the measured window runs on.
    let t0 = Instant::now();
    let code = loop {
        if let Some(status) = run.try_wait().unwrap() {
            break status.code();
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "dbio never ended");
        if let Some(postmaster) = postmaster_under(&here) {
            // SAFETY: the postmaster of this test's server, a process id just read.
            unsafe { libc::kill(postmaster as i32, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(matches!(code, Some(1) | Some(4)), "{code:?}");
    // (Other dbio processes on the machine may make doctor exit 1: what it names is looked at.)
    let (_, out) = doctor(&e, &["doctor"]);
    assert!(!out.contains("STALE") && !out.contains("dbio_"), "{out}");
}

#[test]
fn clean_stale_leaves_a_socket_directory_that_holds_what_no_server_made() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let mut run = spawn_pg_run(
        &e,
        &[
            "redo",
            "--sessions",
            "1",
            "--duration",
            "60s",
            "--warmup",
            "0s",
            "--json",
            "--pg-bin",
            &bin,
        ],
    );
    let here = e.path().display().to_string();
    let sock = socket_dir(&mut run, &here);
    run.kill().unwrap();
    run.wait().unwrap();
    let t0 = Instant::now();
    while !processes_with(&here).is_empty() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "postgres outlived dbio"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Someone's file lands in the socket directory: it is not removed, and neither is
    // the directory; the rest is cleaned, and clean says what it left (exit 1).
    let foreign = Path::new(&sock).join("notes.txt");
    std::fs::write(&foreign, b"mine").unwrap();
    let (code, out) = doctor(&e, &["clean", "--stale"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&format!("{sock}: LEFT")), "{out}");
    assert_eq!(std::fs::read(&foreign).unwrap(), b"mine");
    std::fs::remove_file(&foreign).unwrap();
    let (code, out) = doctor(&e, &["clean", "--stale"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!Path::new(&sock).exists());
}

#[test]
fn a_throwaway_server_gets_nothing_of_the_callers_environment() {
    let Some((bin, _)) = pg_bin() else { return };
    let e = env();
    let mut run = Killed(
        e.process()
            .args(["pg", "run", "redo", "--sessions", "1", "--duration", "60s"])
            .args(["--warmup", "0s", "--pg-bin", &bin])
            .env("PGOPTIONS", "-c work_mem=64kB")
            .env("DBIO_TEST_CALLERS_SECRET", "leaked")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let here = e.path().display().to_string();
    socket_dir(&mut run, &here);
    let environ: Vec<String> = (postmaster_under(&here).into_iter())
        .filter_map(|pid| std::fs::read(format!("/proc/{pid}/environ")).ok())
        .map(|b| text(&b))
        .collect();
    // Stopped as Ctrl-C stops it: the server and its directories go with the run.
    // SAFETY: kill has no memory preconditions; the child is ours and still running.
    unsafe { libc::kill(run.id() as i32, libc::SIGINT) };
    let _ = run.wait();
    assert!(!environ.is_empty(), "no process of the server was found");
    for env in &environ {
        let mut names: Vec<&str> = env
            .split('\0')
            .filter(|v| !v.is_empty())
            .map(|v| v.split('=').next().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["LC_ALL", "PATH"], "{env:?}");
    }
}
