//! The results store is a file dbio writes: it and the files SQLite keeps beside it are
//! opened only as plain files of the user's (never through a link, a FIFO, a hard link or
//! another user's file); a SQLite database dbio did not create is left byte for byte as it
//! was; a wait for a locked store ends within 2 s of a signal; the directory of a killed
//! run is found from anywhere and cleaned; a store that cannot be read makes doctor say so.

use std::io::BufRead;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Dbio, Env, assert_refused, is_root, skip, wait_locked};

/// A read run of `duration` on a small data set, recording into `db`.
fn read_run<'e>(env: &'e Env, db: &str, duration: &str) -> Dbio<'e> {
    env.run("read-iops")
        .size("16M")
        .sessions(1)
        .duration(duration)
        .warmup("0s")
        .arg("--json")
        .db(db)
}

/// A short read run on a small data set, recording into `db`.
fn small_run<'e>(env: &'e Env, db: &str) -> Dbio<'e> {
    read_run(env, db, "1s")
}

/// A store of dbio's at `db`, made by a real command.
fn dbio_store(env: &Env, db: &str) {
    env.prepare().size("16M").target("seed-data").db(db).ok();
    assert!(Path::new(db).is_file());
}

/// `cmd` with a deadline: a FIFO or a lock must never make it hang.
fn output_within(cmd: Dbio<'_>, limit: Duration) -> Output {
    let line = cmd.line();
    let mut child = cmd
        .process()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{line} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A refusal ([`assert_refused`]) naming `name` and saying `why`, and nothing of a run made.
#[track_caller]
fn refused_making_nothing(env: &Env, out: &Output, name: &str, why: &str) {
    assert_refused(out, &[name, why]);
    for made in ["dbio-data", "dbio-runs"] {
        assert!(
            !env.join(made).exists(),
            "{name}: {made} was created before the refusal"
        );
    }
}

fn sidecars(db: &str) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|s| PathBuf::from(format!("{db}{s}")))
        .collect()
}

#[test]
fn a_symbolic_link_at_the_store_is_never_followed() {
    let env = Env::new();
    let victim = env.db("victim.txt");
    std::fs::write(&victim, b"the user's own file\n").unwrap();
    let gone = env.db("nothing-here");
    for (target, what) in [(&victim, "to a file"), (&gone, "dangling")] {
        let db = env.db("linked.db");
        symlink(target, &db).unwrap();
        let out = small_run(&env, &db).out();
        refused_making_nothing(&env, &out, &db, "symbolic link");
        let out = env.runs().db(&db).out();
        refused_making_nothing(&env, &out, &db, "symbolic link");
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"the user's own file\n",
            "{what}"
        );
        assert!(
            !Path::new(&gone).exists(),
            "{what}: nothing made at the target"
        );
        for s in sidecars(&victim).iter().chain(&sidecars(&gone)) {
            assert!(!s.exists(), "{what}: {}", s.display());
        }
        std::fs::remove_file(&db).unwrap();
    }
}

#[test]
fn a_link_beside_the_store_is_never_followed() {
    let env = Env::new();
    let db = env.db("dbio.db");
    dbio_store(&env, &db);
    let store = std::fs::read(&db).unwrap();
    let victim = env.db("victim.txt");
    std::fs::write(&victim, b"keep me\n").unwrap();
    let gone = env.db("nothing-here");
    for suffix in ["-wal", "-shm", "-journal"] {
        for (target, what) in [(&victim, "to a file"), (&gone, "dangling")] {
            let link = format!("{db}{suffix}");
            symlink(target, &link).unwrap();
            for cmd in [small_run(&env, &db), env.runs().db(&db)] {
                let out = cmd.out();
                refused_making_nothing(&env, &out, &link, "symbolic link");
            }
            assert_eq!(
                std::fs::read(&victim).unwrap(),
                b"keep me\n",
                "{suffix} {what}"
            );
            assert!(
                !Path::new(&gone).exists(),
                "{suffix} {what}: nothing made there"
            );
            assert_eq!(std::fs::read(&db).unwrap(), store, "{suffix} {what}");
            std::fs::remove_file(&link).unwrap();
        }
    }
    // Without the links the same store is dbio's again: a run is recorded in it.
    small_run(&env, &db).ok();
    let listed = env.runs().db(&db).json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
}

#[test]
fn a_hard_link_a_fifo_or_another_users_store_is_refused() {
    let env = Env::new();
    let db = env.db("dbio.db");
    dbio_store(&env, &db);

    let other_name = env.db("other-name.db");
    std::fs::hard_link(&db, &other_name).unwrap();
    let out = small_run(&env, &db).out();
    refused_making_nothing(&env, &out, &db, "hard link");
    std::fs::remove_file(&other_name).unwrap();

    // A FIFO where SQLite keeps its WAL: refused at once, never opened or waited on.
    let wal = format!("{db}-wal");
    let c = std::ffi::CString::new(wal.clone()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for cmd in [
        small_run(&env, &db),
        env.runs().db(&db),
        env.doctor().db(&db),
    ] {
        let out = output_within(cmd, Duration::from_secs(10));
        refused_making_nothing(&env, &out, &wal, "not a regular file");
    }
    std::fs::remove_file(&wal).unwrap();

    if !is_root() {
        return skip("giving the store to another user needs root");
    }
    let c = std::ffi::CString::new(db.clone()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
    let before = std::fs::read(&db).unwrap();
    for cmd in [small_run(&env, &db), env.runs().db(&db)] {
        let out = cmd.out();
        refused_making_nothing(&env, &out, &db, "another user");
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// Someone's own SQLite database given as the store: refused by every command before any
/// statement that writes, and left as it was, with no -wal, -shm or -journal beside it.
#[test]
fn a_database_dbio_did_not_create_is_left_as_it_was() {
    let env = Env::new();
    for wal in [false, true] {
        let db = env.db(if wal { "app-wal.db" } else { "app.db" });
        {
            let conn = rusqlite::Connection::open(&db).unwrap();
            if wal {
                let mode: String = conn
                    .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
                    .unwrap();
                assert_eq!(mode, "wal");
            }
            conn.execute_batch(
                "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
                 INSERT INTO customers (name) VALUES ('Ada'), ('Grace');",
            )
            .unwrap();
        }
        for s in sidecars(&db) {
            assert!(!s.exists(), "the app closed cleanly: {}", s.display());
        }
        let before = std::fs::read(&db).unwrap();
        for cmd in [
            small_run(&env, &db),
            env.runs().db(&db),
            env.show("1").db(&db),
            env.doctor().db(&db),
            env.prepare().size("16M").db(&db),
        ] {
            let args = cmd.line();
            let out = cmd.out();
            refused_making_nothing(&env, &out, &db, "dbio did not create");
            assert_eq!(
                std::fs::read(&db).unwrap(),
                before,
                "{args:?}: bytes changed"
            );
            for s in sidecars(&db) {
                assert!(!s.exists(), "{args:?} left {}", s.display());
            }
        }
    }
    // An empty file is not a store dbio made either.
    let empty = env.db("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let out = small_run(&env, &empty).out();
    refused_making_nothing(&env, &out, &empty, "empty file");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}

/// Lines of a child's stderr, as they come.
fn stderr_lines(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines().map_while(|l| l.ok()) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Another process holds a write transaction on the store: dbio says what it waits for,
/// and a signal during that wait ends it within 2 s, as during a run.
#[test]
fn a_signal_ends_a_wait_for_a_locked_store_within_2s() {
    for (sig, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let env = Env::new();
        let db = env.db("dbio.db");
        dbio_store(&env, &db);
        let holder = rusqlite::Connection::open(&db).unwrap();
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        let mut child = read_run(&env, &db, "60s")
            .process()
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = stderr_lines(&mut child);
        let t0 = Instant::now();
        let waiting = loop {
            let line = lines
                .recv_timeout(Duration::from_secs(30).saturating_sub(t0.elapsed()))
                .unwrap_or_else(|_| panic!("{name}: dbio never said it waits"));
            if line.contains("waiting for the results store") {
                break line;
            }
        };
        assert!(waiting.contains(&db), "{waiting}");
        // SAFETY: kill on our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let sent = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(
                sent.elapsed() < Duration::from_secs(5),
                "{name}: still running 5 s after the signal"
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        let took = sent.elapsed();
        assert!(
            took < Duration::from_secs(2),
            "{name}: ended after {took:?}"
        );
        assert_eq!(status.code(), Some(130), "{name}");
        let rest: Vec<String> = lines.try_iter().collect();
        assert_eq!(
            rest.iter().filter(|l| l.contains("waiting for")).count(),
            0,
            "the wait is said once: {rest:?}"
        );
        assert!(
            !rest.iter().any(|l| l.contains("panicked")),
            "{name}: {rest:?}"
        );
        holder.execute_batch("ROLLBACK").unwrap();
    }
}

/// Another program holds the store for longer than dbio waits: `dbio runs` and `dbio
/// doctor` give up after one wait of 10 s (not one per statement), say the store is held
/// and how to free it — not that it is damaged or should be moved aside — and change
/// nothing.
#[test]
fn a_store_held_longer_than_the_wait_is_said_as_held_once() {
    let env = Env::new();
    let db = env.db("dbio.db");
    dbio_store(&env, &db);
    // Read before the lock is taken: closing any descriptor of the file drops this
    // process's POSIX locks on it.
    let before = std::fs::read(&db).unwrap();
    let holder = rusqlite::Connection::open(&db).unwrap();
    // An exclusive lock on the database file: even readers of a WAL database wait.
    holder
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE held (x);")
        .unwrap();
    let t0 = Instant::now();
    let children: Vec<_> = [env.runs().db(&db), env.doctor().db(&db)]
        .into_iter()
        .map(|c| {
            c.process()
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(17),
        "one wait of 10 s each, side by side: {took:?} {outs:?}"
    );
    let (runs, doctor) = (&outs[0], &outs[1]);
    let err = String::from_utf8_lossy(&runs.stderr);
    assert_eq!(runs.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&db)
            && err.contains("locked by another process")
            && err.contains("kill -CONT"),
        "{err}"
    );
    assert!(!err.contains("damaged") && !err.contains("aside"), "{err}");
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(1), "{text}");
    assert!(text.contains("held by another process"), "{text}");
    assert!(!text.contains("move it aside"), "{text}");
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// The run directory named in dbio's registry that a run of `pid` created, once it is there.
fn wait_run_dir(env: &Env) -> PathBuf {
    let t0 = Instant::now();
    loop {
        if let Some(d) = std::fs::read_dir(env.join("dbio-runs"))
            .ok()
            .and_then(|mut rd| rd.next())
        {
            return std::fs::canonicalize(d.unwrap().path()).unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no run directory");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A run killed mid-measurement leaves its run directory: `dbio doctor` run anywhere lists
/// it (and not while the run is alive), `dbio clean --stale` removes dbio's files from it
/// and the directory, leaving anything else and then the directory too.
#[test]
fn the_directory_of_a_killed_run_is_found_from_anywhere_and_cleaned() {
    let env = Env::new();
    assert!(env.prepare().size("16M").out().status.success());
    let elsewhere = tempfile::tempdir().unwrap();
    let doctor =
        |args: &[&str]| -> Output { env.bare().args(args).current_dir(elsewhere.path()).out() };
    let mut child = env
        .run("read-iops")
        .size("16M")
        .sessions(1)
        .duration("60s")
        .warmup("0s")
        .arg("--json")
        .process()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_locked(&env.join("dbio-data"), child.id());
    let run_dir = wait_run_dir(&env);
    let shown = run_dir.display().to_string();
    // Alive: its directory is in use, not stale.
    std::thread::sleep(Duration::from_millis(300));
    let out = doctor(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("{shown}: a run of read-iops going on now")),
        "{text}"
    );
    assert!(!text.contains("STALE"), "{text}");
    assert_eq!(out.status.code(), Some(0), "{text}");

    child.kill().unwrap();
    child.wait().unwrap();
    assert!(run_dir.is_dir());
    assert!(!run_dir.join("result.json").exists());
    let out = doctor(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("{shown}: STALE: a run of read-iops")),
        "{text}"
    );
    assert!(text.contains("dbio clean --stale"), "{text}");

    // What a killed write of results could leave is dbio's; a planted file is not.
    let temp_name = ".result.json.4242-0badcafe.tmp";
    std::fs::write(run_dir.join(temp_name), b"{").unwrap();
    std::fs::write(run_dir.join("notes.txt"), b"mine").unwrap();
    let out = doctor(&["clean", "--stale"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!run_dir.join(temp_name).exists());
    assert_eq!(std::fs::read(run_dir.join("notes.txt")).unwrap(), b"mine");
    let out = doctor(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "LEFT ALONE: {} is not dbio's",
            run_dir.join("notes.txt").display()
        )),
        "{text}"
    );

    std::fs::remove_file(run_dir.join("notes.txt")).unwrap();
    let out = doctor(&["clean", "--stale"]);
    assert!(out.status.success());
    assert!(
        !run_dir.exists(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = doctor(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains(&shown), "{text}");

    // A run that ends is recorded and its directory is nothing to report.
    let out = small_run(
        &env,
        &env.data_home
            .path()
            .join("dbio/dbio.db")
            .display()
            .to_string(),
    )
    .out();
    assert!(out.status.success());
    let out = doctor(&["doctor"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A store that cannot be read (garbage, a directory at its name) is not "nothing to
/// report": doctor says so and exits 1.
#[test]
fn doctor_says_when_the_store_cannot_be_read() {
    for kind in ["garbage", "directory"] {
        let env = Env::new();
        let store = env.data_home.path().join("dbio/dbio.db");
        std::fs::create_dir_all(store.parent().unwrap()).unwrap();
        if kind == "garbage" {
            std::fs::write(&store, b"not a database at all\n".repeat(50)).unwrap();
        } else {
            std::fs::create_dir(&store).unwrap();
        }
        let out = env.doctor().out();
        let text = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kind}: {text}{stderr}");
        assert!(!stderr.contains("panicked"), "{kind}: {stderr}");
        assert!(
            text.contains(&store.display().to_string()) && text.contains("cannot be read"),
            "{kind}: {text}"
        );
        assert!(!text.contains("Nothing needs attention"), "{kind}: {text}");
    }
}

/// Every command that opens the store, against `db`.
fn every_command<'e>(env: &'e Env, db: &str) -> Vec<Dbio<'e>> {
    vec![
        env.runs().db(db),
        env.show("1").db(db),
        env.cmd("compare").args(["1", "2"]).db(db),
        env.doctor().db(db),
        env.cmd("clean").arg("--stale").db(db),
        small_run(env, db),
        env.mem().only("curve").sizes("16K").budget("10ms").db(db),
        env.sweep()
            .arg("read-iops")
            .param("sessions=1,2")
            .size("16M")
            .duration("1s")
            .warmup("0s")
            .db(db),
        env.prepare().size("16M").db(db),
    ]
}

/// The store and the files beside it, name and bytes (None: not there).
fn store_files(db: &str) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    std::iter::once(PathBuf::from(db))
        .chain(sidecars(db))
        .map(|p| {
            let bytes = std::fs::read(&p).ok();
            (p, bytes)
        })
        .collect()
}

/// Someone's database in WAL mode, left by a program that was killed: its -wal (holding
/// rows not yet in the database) and its -shm are there. Every command refuses it, and
/// all three files keep every byte — the look that decides takes no lock and reads no WAL.
#[test]
fn a_foreign_wal_database_left_with_its_wal_and_shm_is_not_touched() {
    let env = Env::new();
    let live = env.db("live.db");
    let db = env.db("app.db");
    {
        let conn = rusqlite::Connection::open(&live).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        conn.execute_batch("CREATE TABLE t (x); PRAGMA wal_autocheckpoint = 0;")
            .unwrap();
        for i in 0..100 {
            conn.execute("INSERT INTO t VALUES (?1)", [i]).unwrap();
        }
        // What a crash leaves: the three files as they are while the program has them open.
        for suffix in ["", "-wal", "-shm"] {
            std::fs::copy(format!("{live}{suffix}"), format!("{db}{suffix}")).unwrap();
        }
    }
    let before = store_files(&db);
    for (p, bytes) in &before[..3] {
        assert!(bytes.is_some(), "{} is there", p.display());
    }
    assert!(
        before[1].1.as_ref().unwrap().len() > 4096,
        "rows in the WAL"
    );
    for cmd in every_command(&env, &db) {
        let args = cmd.line();
        let out = cmd.out();
        refused_making_nothing(&env, &out, &db, "dbio did not create");
        assert!(store_files(&db) == before, "{args:?} changed a file");
    }
}

/// Tables named as dbio's first ones and schema version 1 do not make a file dbio's: an
/// older store is known only by its exact schema. A real one (dbio's first schema, no
/// application id) is still upgraded.
#[test]
fn tables_with_dbio_names_do_not_make_an_older_store() {
    let env = Env::new();
    let db = env.db("ci.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY, x);
             CREATE TABLE run_events (a); CREATE TABLE run_warnings (b);
             PRAGMA user_version = 1;",
        )
        .unwrap();
    let before = store_files(&db);
    assert_eq!(before[0].1.as_ref().unwrap().len(), 16384);
    for cmd in every_command(&env, &db) {
        let args = cmd.line();
        let out = cmd.out();
        refused_making_nothing(&env, &out, &db, "dbio did not create");
        assert!(store_files(&db) == before, "{args:?} changed a file");
    }

    let old = env.db("old.db");
    {
        let conn = rusqlite::Connection::open(&old).unwrap();
        conn.execute_batch(dbio::store::schema::MIGRATIONS[0].sql)
            .unwrap();
        conn.execute_batch("PRAGMA user_version = 1").unwrap();
    }
    small_run(&env, &old).ok();
    let listed = env.runs().db(&old).json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let conn = rusqlite::Connection::open(&old).unwrap();
    let (version, id): (u32, i32) = conn
        .query_row(
            "SELECT user_version, application_id FROM pragma_user_version, pragma_application_id",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(version, dbio::store::schema::current_version());
    assert_eq!(id, dbio::store::schema::APPLICATION_ID);
}

/// The store's directory must be writable by the user alone: anyone else who can write
/// there could put a link where SQLite opens the -wal or -shm. A shared directory (even a
/// sticky one like /tmp) or one of another user's is refused before anything is made.
#[test]
fn a_store_in_a_directory_others_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let shared = env.data_home.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let db = shared.join("dbio.db").display().to_string();
    for (mode, why) in [
        (0o1777, "written by its group and by everyone (mode 1777)"),
        (0o777, "written by its group and by everyone (mode 0777)"),
        (0o775, "written by its group (mode 0775)"),
        (0o757, "written by everyone (mode 0757)"),
    ] {
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(mode)).unwrap();
        for cmd in [small_run(&env, &db), env.runs().db(&db)] {
            let out = cmd.out();
            refused_making_nothing(&env, &out, &shared.display().to_string(), why);
            assert!(
                std::fs::read_dir(&shared).unwrap().next().is_none(),
                "{mode:o}: nothing made in it"
            );
        }
    }
    // Private again: the same store is made and a run recorded.
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
    small_run(&env, &db).ok();
    assert_eq!(env.runs().db(&db).json().as_array().unwrap().len(), 1);
    let before = store_files(&db);
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    env.runs().db(&db).refused(&[&db, "mode 1777"]);
    assert!(store_files(&db) == before, "the store was not opened");

    if !is_root() {
        return skip("a directory of another user's needs root");
    }
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
    let c = std::ffi::CString::new(shared.display().to_string()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
    env.runs()
        .db(&db)
        .refused(&[&db, "belongs to another user (uid 65534"]);
    assert!(store_files(&db) == before);
}

/// Text read back from the store is shown escaped in every listing (a name holding
/// terminal commands cannot clear the screen or forge a line), and a count that no run
/// has is refused naming the run and the column, never wrapped into a huge number.
#[test]
fn listings_from_the_store_trust_nothing_in_it() {
    let env = Env::new();
    let db = env.db("dbio.db");
    small_run(&env, &db).ok();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch(
        "UPDATE runs SET test = 'read-iops' || char(27) || '[2J' || char(13),
                         engine = 'uring' || char(10) || 'forged line',
                         main_event = 'ev' || char(27) || '[1m' WHERE id = 1;
         UPDATE run_events SET event = 'ev' || char(27) || '[1m' WHERE run_id = 1;
         UPDATE data_sets SET last_test = 'x' || char(27) || ']0;title' || char(7);",
    )
    .unwrap();
    for args in [vec!["runs", "--db", &db], vec!["doctor", "--db", &db]] {
        let out = env.bare().args(&args).out();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: {stdout}");
        assert!(
            !stdout.contains(['\x1b', '\r', '\x07']),
            "{args:?}: raw control characters: {stdout:?}"
        );
        if args[0] == "runs" {
            assert!(stdout.contains("read-iops\\x1b[2J\\r"), "{stdout}");
            assert!(stdout.contains("ev\\x1b[1m"), "{stdout}");
            assert!(stdout.contains("uring\\nforged line"), "{stdout}");
            assert_eq!(stdout.lines().count(), 2, "header and one run: {stdout}");
        } else {
            assert!(stdout.contains("by x\\x1b]0;title\\x07"), "{stdout}");
        }
    }

    conn.execute_batch("UPDATE runs SET sessions = -1 WHERE id = 1")
        .unwrap();
    for args in [
        vec!["runs", "--db", &db],
        vec!["runs", "--json", "--db", &db],
    ] {
        let stderr = env.bare().args(&args).refused(&["run 1 has sessions = -1"]);
        assert!(!stderr.contains("18446744073709551615"), "{stderr}");
    }
    conn.execute_batch(
        "UPDATE runs SET sessions = 1 WHERE id = 1; UPDATE data_sets SET disk_bytes = -5;",
    )
    .unwrap();
    let out = env.doctor().db(&db).out();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("has disk_bytes = -5"), "{stdout}");
    assert!(!stdout.contains("18446744073709551615"), "{stdout}");
}
