//! dbio against a hostile directory, a clumsy user and a full disk (SPEC §7, issue 12).
//!
//! Every test plants something where dbio writes — symlinks and hard links at every name,
//! edited manifests, files renamed under a running test, a full or read-only file system,
//! signals at each phase — and then checks what must hold: no byte of a foreign file
//! changes, a refusal is exit 2 with one line, and every result.json that exists parses.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::util::{
    Dbio, Env, Loop, Mount, files_under, is_root, refusal_line, shm_dir, skip, wait_locked,
};

/// A file that is not dbio's, whose bytes must never change.
struct Victim {
    path: PathBuf,
    bytes: Vec<u8>,
}

impl Victim {
    fn new(path: PathBuf) -> Victim {
        let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        // Only its owner may write it: as root, a file an unprivileged user could not write.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        Victim { path, bytes }
    }

    fn assert_intact(&self, what: &str) {
        let now = std::fs::read(&self.path).unwrap_or_default();
        assert!(
            now == self.bytes,
            "{what}: the foreign file {} changed",
            self.path.display()
        );
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every result.json under `dir` parses as a dbio result.
fn assert_results_parse(dir: &Path) {
    for f in files_under(dir) {
        let planted = std::fs::symlink_metadata(dir.join(&f)).is_ok_and(|m| m.is_symlink());
        if f.ends_with("result.json") && !planted {
            let text = std::fs::read_to_string(dir.join(&f)).unwrap();
            let v: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{f} is not whole JSON: {e}"));
            assert_eq!(v["schema"], "dbio.result.v1", "{f}");
        }
    }
}

/// A small `test` on `target` (one 8 MiB file) for `duration`, its result printed as JSON.
fn small_run<'e>(env: &'e Env, test: &str, target: &str, duration: &str) -> Dbio<'e> {
    env.run(test)
        .target(target)
        .size("8M")
        .files(1)
        .sessions(1)
        .duration(duration)
        .warmup("0s")
        .arg("--json")
}

/// A small write test on `target` (one 8 MiB file), 1 s.
fn write_run<'e>(env: &'e Env, target: &str) -> Dbio<'e> {
    small_run(env, "write-iops", target, "1s")
}

fn plant(kind: &str, victim: &Path, at: &Path) {
    let _ = std::fs::remove_file(at);
    match kind {
        "symlink" => symlink(victim, at).unwrap(),
        _ => std::fs::hard_link(victim, at).unwrap(),
    }
}

/// A symlink or a hard link to a foreign file at each name dbio creates in a data set:
/// dbio refuses (or writes around it) and the file's bytes never change.
#[test]
fn links_at_every_name_dbio_creates_change_no_foreign_byte() {
    /// (name, how to make dbio create it, environment)
    type Case<'a> = (&'a str, &'a [&'a str], &'a [(&'a str, &'a str)]);
    let cases: [Case; 7] = [
        ("dbio-manifest.json", &[], &[]),
        (".dbio-manifest.json.tmp", &[], &[]),
        ("dbio-data-001.dbf", &[], &[]),
        ("dbio-verify.seq", &["--verify"], &[]),
        (".dbio-verify.seq.tmp", &["--verify"], &[]),
        ("dbio-redo-01.log", &["redo"], &[]),
        (
            "dbio-temp-001.tmp",
            &["temp"],
            &[("DBIO_TEST_NO_TMPFILE", "1")],
        ),
    ];
    for kind in ["symlink", "hardlink"] {
        for (name, how, vars) in cases {
            let env = Env::new();
            let victim = Victim::new(env.join("victim"));
            std::fs::create_dir(env.join("ds")).unwrap();
            plant(kind, &victim.path, &env.join("ds").join(name));
            let run = match how {
                ["redo"] => small_run(&env, "redo", "ds", "1s"),
                ["temp"] => small_run(&env, "temp", "ds", "1s").opt("--spill-size", "1M"),
                extra => write_run(&env, "ds").args(extra),
            };
            let out = run.envs(vars).out();
            let what = format!("{kind} at {name}");
            assert!(
                matches!(out.status.code(), Some(0) | Some(2)),
                "{what}: {}",
                stderr(&out)
            );
            if out.status.code() == Some(2) {
                refusal_line(&what, &out, &[]);
            }
            victim.assert_intact(&what);
            // Cleaning up never touches it either.
            let _ = env.clean("ds").out();
            victim.assert_intact(&format!("{what}, after clean"));
            assert_results_parse(&env.join("dbio-runs"));
        }
    }
}

/// Links planted in place of files dbio created, after the fact: a write test, `verify`
/// and `clean` refuse to act through them.
#[test]
fn links_in_place_of_dbio_files_are_never_written_or_removed() {
    for name in ["dbio-data-001.dbf", "dbio-verify.seq", "dbio-manifest.json"] {
        for kind in ["symlink", "hardlink"] {
            let env = Env::new();
            let victim = Victim::new(env.join("victim"));
            let prepared = env
                .prepare()
                .target("ds")
                .size("8M")
                .files(1)
                .verify_data()
                .out();
            assert!(prepared.status.success(), "{}", stderr(&prepared));
            plant(kind, &victim.path, &env.join("ds").join(name));
            let what = format!("{kind} in place of {name}");
            refusal_line(&what, &write_run(&env, "ds").verify_data().out(), &[]);
            let _ = env.verify().arg("ds").out();
            let _ = env.clean("ds").out();
            victim.assert_intact(&what);
            assert!(
                std::fs::symlink_metadata(env.join("ds").join(name)).is_ok(),
                "{what}: the planted link was removed"
            );
        }
    }
}

/// Run directories, reports, job files and comparisons: planted names are never followed.
#[test]
fn links_where_results_go_are_never_followed() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let victim = Victim::new(env.join("victim"));
    let target = shm.path().join("ds");
    let target = target.to_str().unwrap();
    // Run directories for the coming seconds, prepared with links where results go.
    let runs = env.join("dbio-runs");
    std::fs::create_dir(&runs).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    for s in 0..6 {
        let stamp =
            humantime::format_rfc3339_seconds(std::time::UNIX_EPOCH + Duration::from_secs(now + s))
                .to_string();
        let stamp: String = stamp
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(15)
            .collect();
        let dir = runs.join(format!("{stamp}_read-iops_async_1sessions_8M_1s"));
        std::fs::create_dir(&dir).unwrap();
        for f in [
            "result.json",
            "summary.txt",
            "report.html",
            "timeseries.csv",
            "histograms.csv",
        ] {
            symlink(&victim.path, dir.join(f)).unwrap();
        }
    }
    let read = || small_run(&env, "read-iops", target, "1s");
    let saved = env.join("job.toml");
    symlink(&victim.path, &saved).unwrap();
    refusal_line(
        "--save-job at a link",
        &read().opt("--save-job", "job.toml").out(),
        &["--save-job", "exists"],
    );
    let out = read().out();
    assert!(out.status.success(), "{}", stderr(&out));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["test"], "read-iops");
    victim.assert_intact("run directories planted ahead");
    assert_results_parse(&runs);
    // `dbio report` replaces only its own files.
    let run_dir = stderr(&out)
        .lines()
        .find_map(|l| {
            l.strip_prefix("dbio: results in ")
                .map(|s| env.join(s.trim()))
        })
        .expect("the run says where its results are");
    let report = run_dir.join("report.html");
    std::fs::remove_file(&report).unwrap();
    symlink(&victim.path, &report).unwrap();
    refusal_line(
        "report over a link",
        &env.report(run_dir.to_str().unwrap()).out(),
        &["symbolic link"],
    );
    // `compare --html` never writes through a link.
    let db = env.data_home.path().join("dbio/dbio.db");
    let db = db.to_str().unwrap();
    assert!(read().out().status.success());
    symlink(&victim.path, env.join("cmp.html")).unwrap();
    refusal_line(
        "compare --html at a link",
        &env.cmd("compare")
            .arg("1")
            .arg("2")
            .db(db)
            .opt("--html", "cmp.html")
            .out(),
        &["--html", "exists"],
    );
    victim.assert_intact("report and compare");
    let _ = env.clean(target).out();
}

fn manifest_of(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("dbio-manifest.json")).unwrap()).unwrap()
}

fn set_manifest(dir: &Path, m: &serde_json::Value) {
    std::fs::write(dir.join("dbio-manifest.json"), m.to_string()).unwrap();
}

/// An edited manifest is never acted on: entries naming paths, entries without identity,
/// entries with the identity of a file moved in are refused, reported by doctor and left
/// alone by clean.
#[test]
fn a_tampered_manifest_is_refused_and_nothing_it_names_is_touched() {
    for tamper in [
        "parent",
        "absolute",
        "inode 0",
        "moved in",
        "user's temp name",
    ] {
        let env = Env::new();
        let victim = Victim::new(env.join("victim"));
        let ds = env.join("ds");
        let prepared = env.prepare().target("ds").size("8M").files(1).out();
        assert!(prepared.status.success(), "{}", stderr(&prepared));
        let mut m = manifest_of(&ds);
        let entry = |name: &str, ino: u64| serde_json::json!({"name": name, "size_bytes": 4096, "dev": 1, "ino": ino, "btime_ns": null});
        // The foreign file the tampered entry points at, with its bytes to keep.
        let mut kept = vec![];
        match tamper {
            "parent" => m["files"]
                .as_array_mut()
                .unwrap()
                .push(entry("../victim", 5)),
            "absolute" => m["redo_files"]
                .as_array_mut()
                .unwrap()
                .push(entry(victim.path.to_str().unwrap(), 5)),
            "inode 0" => {
                let user = Victim::new(ds.join("dbio-data-002.dbf"));
                m["files"]
                    .as_array_mut()
                    .unwrap()
                    .push(entry("dbio-data-002.dbf", 0));
                kept.push(user);
            }
            "user's temp name" => {
                let user = Victim::new(ds.join("dbio-temp-001.tmp"));
                m["temp_files"]
                    .as_array_mut()
                    .unwrap()
                    .push(entry("dbio-temp-001.tmp", 0));
                kept.push(user);
            }
            _ => {
                if !is_root() {
                    skip("moving another user's file in needs root");
                    continue;
                }
                // Another user's file, moved in at a data file's name, its identity recorded.
                let moved = Victim::new(env.join("theirs"));
                std::os::unix::fs::chown(&moved.path, Some(65534), Some(65534)).unwrap();
                std::fs::rename(ds.join("dbio-data-001.dbf"), env.join("ours.dbf")).unwrap();
                std::fs::rename(&moved.path, ds.join("dbio-data-001.dbf")).unwrap();
                let md = std::fs::metadata(ds.join("dbio-data-001.dbf")).unwrap();
                use std::os::unix::fs::MetadataExt;
                m["files"][0]["ino"] = md.ino().into();
                m["files"][0]["dev"] = md.dev().into();
                m["files"][0]["btime_ns"] = serde_json::Value::Null;
                kept.push(Victim {
                    path: ds.join("dbio-data-001.dbf"),
                    bytes: moved.bytes.clone(),
                });
            }
        }
        set_manifest(&ds, &m);
        for test in ["write-iops", "temp"] {
            let out = small_run(&env, test, "ds", "1s")
                .env("DBIO_TEST_NO_TMPFILE", "1")
                .out();
            refusal_line(tamper, &out, &[]);
        }
        let doctor = env.doctor().arg("ds").out();
        let text = String::from_utf8_lossy(&doctor.stdout);
        assert_eq!(doctor.status.code(), Some(1), "{tamper}: {text}");
        assert!(
            text.contains("CHANGED") || text.contains("LEFT ALONE"),
            "{tamper}: {text}"
        );
        assert_eq!(
            env.verify().arg("ds").out().status.code(),
            Some(2),
            "{tamper}"
        );
        let _ = env.cmd("clean").arg("--stale").arg("ds").out();
        let clean = env.clean("ds").out();
        if matches!(tamper, "parent" | "absolute") {
            // A path entry names nothing in the data set: all of dbio's files go, the entry
            // is named as ignored, and nothing remains.
            assert!(clean.status.success(), "{tamper}: {}", stderr(&clean));
            assert!(stderr(&clean).contains("ignored"), "{}", stderr(&clean));
            assert!(!ds.exists(), "{tamper}");
        } else {
            assert_ne!(clean.status.code(), Some(0), "{tamper}: {}", stderr(&clean));
        }
        victim.assert_intact(tamper);
        for k in &kept {
            k.assert_intact(tamper);
        }
    }
}

/// A mistyped size, an overflowing spill, an impossible --out, an absurd session count and
/// a rate too small to schedule: refused in well under a second, nothing changed on disk.
#[test]
fn bad_input_is_refused_before_anything_changes() {
    let env = Env::new();
    let prepared = env.prepare().target("ds").size("16M").files(1).out();
    assert!(prepared.status.success());
    std::fs::write(env.join("a-file"), b"x").unwrap();
    let snapshot = || -> Vec<(String, Vec<u8>)> {
        files_under(env.path())
            .into_iter()
            .map(|f| {
                let bytes = std::fs::read(env.join(&f)).unwrap();
                (f, bytes)
            })
            .collect()
    };
    let before = snapshot();
    let base = |test| env.run(test).target("ds").duration("1s").warmup("0s");
    let cases: [(&[&str], &[&str]); 9] = [
        (&["--size", "100T"], &["--fresh"]),
        (&["--size", "100T", "--fresh"], &["not fit", "--size"]),
        (
            &["--size", "16M", "--files", "1", "--block-size", "4K"],
            &["--fresh"],
        ),
        (
            &["--size", "16M", "--files", "1", "--out", "a-file"],
            &["--out", "not a directory"],
        ),
        (
            &["--size", "16M", "--files", "1", "--out", "a-file/runs"],
            &["--out", "not a directory"],
        ),
        (
            &["--size", "16M", "--files", "1", "--sessions", "65536"],
            &["--sessions"],
        ),
        (
            &["--size", "16M", "--files", "1", "--rate", "1e-11"],
            &["--rate", "least rate"],
        ),
        (
            &["--size", "16M", "--files", "1", "--rate", "1e300"],
            &["--rate"],
        ),
        (&["--size", "18446744073709551616"], &["--size"]),
    ];
    for (extra, words) in cases {
        let run = base("read-iops").args(extra);
        let t0 = Instant::now();
        let out = run.out();
        let took = t0.elapsed();
        if extra.contains(&"65536") && out.status.success() {
            continue; // a machine that can run 65536 sessions
        }
        refusal_line(&format!("{extra:?}"), &out, words);
        assert!(took < Duration::from_secs(1), "{extra:?} took {took:?}");
        assert!(snapshot() == before, "{extra:?} changed files");
    }
    refusal_line(
        "an overflowing spill",
        &base("temp").opt("--spill-size", "8388608T").out(),
        &["spill"],
    );
    assert!(snapshot() == before, "the spill changed files");
}

/// A read test opens nothing for writing and changes nothing: it runs on a full file
/// system and on a read-only mount.
#[test]
fn read_tests_run_on_a_full_and_on_a_read_only_file_system() {
    if !is_root() {
        return skip("mounting a tmpfs needs root");
    }
    let env = Env::new();
    let Some(_fs) = Mount::new("tmpfs", "size=24m", "tmpfs", &env.join("small")) else {
        return;
    };
    let prepared = env.prepare().target("small/ds").size("16M").files(2).out();
    assert!(prepared.status.success(), "{}", stderr(&prepared));
    let manifest = std::fs::read(env.join("small/ds/dbio-manifest.json")).unwrap();
    // Fill what is left.
    let mut ballast = std::fs::File::create(env.join("small/ballast")).unwrap();
    use std::io::Write;
    while ballast.write_all(&[7u8; 1 << 16]).is_ok() {}
    drop(ballast);
    let reads = |what: &str| {
        for test in ["read-iops", "read-mbps"] {
            let out = env
                .run(test)
                .target("small/ds")
                .size("16M")
                .files(2)
                .sessions(2)
                .duration("1s")
                .warmup("0s")
                .arg("--json")
                .out();
            assert!(out.status.success(), "{what}, {test}: {}", stderr(&out));
        }
        assert_eq!(
            std::fs::read(env.join("small/ds/dbio-manifest.json")).unwrap(),
            manifest,
            "{what}: the manifest changed"
        );
    };
    reads("a full file system");
    assert!(crate::util::sh(
        "mount",
        &["-o", "remount,ro", env.join("small").to_str().unwrap()]
    ));
    reads("a read-only mount");
    let out = write_run(&env, "small/ds").out();
    assert_ne!(
        out.status.code(),
        Some(0),
        "a write test on a read-only mount"
    );
}

fn spawn(cmd: Dbio<'_>) -> std::process::Child {
    cmd.process()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Two runs that write on one data set: the second is refused at once, naming the holder;
/// after kill -9, the next run starts without clean-up.
#[test]
fn a_data_set_in_use_is_refused_naming_its_holder_until_its_run_dies() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let target = shm.path().join("ds");
    let target = target.to_str().unwrap();
    let mut first = spawn(small_run(&env, "write-iops", target, "60s"));
    wait_locked(Path::new(target), first.id());
    for test in ["write-iops", "read-iops"] {
        let run = small_run(&env, test, target, "1s");
        let t0 = Instant::now();
        let out = run.out();
        refusal_line(
            test,
            &out,
            &["in use by", &format!("pid {}", first.id()), "write-iops"],
        );
        assert!(t0.elapsed() < Duration::from_secs(1));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    let t0 = Instant::now();
    let out = write_run(&env, target).out();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(t0.elapsed() < Duration::from_secs(5));
}

/// `dbio doctor` run from `/` lists a data set a killed run left anywhere, and a data set
/// removed by hand is reported as gone, not as an error.
#[test]
fn doctor_from_anywhere_lists_what_a_killed_run_left() {
    let env = Env::new();
    let target = env.join("somewhere/deep/ds");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    let target = target.to_str().unwrap().to_string();
    let mut child = spawn(small_run(&env, "write-iops", &target, "60s"));
    wait_locked(Path::new(&target), child.id());
    std::thread::sleep(Duration::from_millis(1000));
    child.kill().unwrap();
    child.wait().unwrap();
    let doctor = |dir: &str| {
        let out = env.doctor().current_dir(dir).out();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = doctor("/");
    assert!(text.contains(&target), "{text}");
    assert!(text.contains("that run did not end"), "{text}");
    // The killed run's directory is stale (exit 1) until `dbio clean --stale` removes it.
    let runs = std::fs::canonicalize(env.join("dbio-runs")).unwrap();
    assert!(
        text.contains(&format!("{}/", runs.display()))
            && text.contains("STALE: a run of write-iops"),
        "{text}"
    );
    assert_eq!(code, Some(1), "{text}");
    let out = env.cmd("clean").arg("--stale").current_dir("/").out();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&runs).unwrap().count(), 0);
    let (code, text) = doctor("/");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains(&target), "{text}");
    // Removed by hand: gone, and `dbio clean PATH` forgets it.
    std::fs::remove_dir_all(&target).unwrap();
    let (code, text) = doctor("/");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("gone (moved or deleted by hand)"), "{text}");
    let out = env.clean(&target).out();
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, text) = doctor("/");
    assert!(!text.contains(&target), "{text}");
}

/// An Oracle ASM disk — a signature dbio's own list does not know, libblkid does — is never
/// written, even with --destructive --yes.
#[test]
fn a_device_holding_an_asm_disk_header_is_never_written() {
    let env = Env::new();
    let image = env.join("asm.img");
    let mut bytes = vec![0u8; 16 << 20];
    bytes[32..46].copy_from_slice(b"ORCLDISKDATA01");
    std::fs::write(&image, &bytes).unwrap();
    let Some(dev) = Loop::new(&image, None) else {
        return;
    };
    for test in ["write-iops", "write-mbps"] {
        let out = env
            .run(test)
            .target(dev.path())
            .destructive()
            .yes()
            .duration("1s")
            .warmup("0s")
            .out();
        refusal_line(test, &out, &["oracleasm"]);
    }
    assert!(dev.read_all() == bytes, "the ASM disk changed");
}

/// `dbio clean` by a user who cannot remove the files says what remains and fails.
#[test]
fn clean_by_a_user_who_may_not_remove_fails_and_says_what_remains() {
    if !is_root() {
        return skip("needs root to drop privileges to nobody");
    }
    let env = Env::new();
    std::fs::set_permissions(env.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let prepared = env.prepare().target("ds").size("8M").files(2).out();
    assert!(prepared.status.success());
    let before = files_under(&env.join("ds"));
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("dbio"))
        .args(["clean", "ds"])
        .env("XDG_DATA_HOME", "/nonexistent")
        .env_remove("DBIO_DB")
        .current_dir(env.path())
        .output();
    let Ok(out) = out else {
        return skip("no setpriv");
    };
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("not removed") || err.contains("belongs to another user"),
        "{err}"
    );
    assert_eq!(files_under(&env.join("ds")), before, "{err}");
}

/// Signals at each phase (preparing, warm-up, measuring) and SIGKILL: a foreign file in the
/// data set directory is untouched, no half-written file is left, every result parses and
/// the next run works without clean-up.
#[test]
fn signals_at_every_phase_leave_nothing_half_done() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let ds = shm.path().join("ds");
    std::fs::create_dir(&ds).unwrap();
    let notes = Victim::new(ds.join("notes.txt"));
    let target = ds.to_str().unwrap();
    // (signal, wait after the lock, warm-up): preparing 1 GiB, in warm-up, measuring.
    let phases: [(i32, u64, &str); 6] = [
        (libc::SIGINT, 0, "0s"),
        (libc::SIGINT, 300, "5s"),
        (libc::SIGINT, 800, "0s"),
        (libc::SIGKILL, 0, "0s"),
        (libc::SIGKILL, 300, "5s"),
        (libc::SIGKILL, 800, "0s"),
    ];
    for (sig, after_ms, warmup) in phases {
        for (test, extra) in [
            ("write-iops", &[][..]),
            ("temp", &["--spill-size", "4M"][..]),
        ] {
            let mut child = spawn(
                env.run(test)
                    .target(target)
                    .size("1G")
                    .sessions(2)
                    .duration("60s")
                    .warmup(warmup)
                    .args(extra),
            );
            wait_locked(&ds, child.id());
            std::thread::sleep(Duration::from_millis(after_ms));
            // SAFETY: a signal to our own child.
            unsafe { libc::kill(child.id() as i32, sig) };
            let status = child.wait().unwrap();
            let what = format!("{test}, signal {sig} {after_ms} ms after the start");
            if sig == libc::SIGINT {
                assert_eq!(status.code(), Some(130), "{what}");
            }
            notes.assert_intact(&what);
            let odd: Vec<String> = files_under(&ds)
                .into_iter()
                .filter(|f| {
                    !(f.starts_with("dbio-data-") && f.ends_with(".dbf"))
                        && f != "dbio-manifest.json"
                        && f != "dbio-lock"
                        && f != "notes.txt"
                })
                .collect();
            assert!(odd.is_empty(), "{what}: left {odd:?}");
            assert_results_parse(&env.join("dbio-runs"));
        }
    }
    let out = env
        .run("read-iops")
        .target(target)
        .size("1G")
        .duration("1s")
        .warmup("0s")
        .out();
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = env.clean(target).out();
    notes.assert_intact("after clean");
}

/// A file swapped with a link to a foreign file again and again while write tests start:
/// dbio opens either its own file or refuses; the foreign file never changes.
#[test]
fn renames_racing_a_write_test_never_redirect_it() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let ds = shm.path().join("ds");
    let target = ds.to_str().unwrap().to_string();
    assert!(write_run(&env, &target).out().status.success());
    for kind in ["symlink", "hardlink"] {
        let victim = Victim::new(shm.path().join(format!("victim-{kind}")));
        let decoy = ds.join("decoy");
        plant(kind, &victim.path, &decoy);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let stop = stop.clone();
            let (a, b) = (
                std::ffi::CString::new(ds.join("dbio-data-001.dbf").to_str().unwrap()).unwrap(),
                std::ffi::CString::new(decoy.to_str().unwrap()).unwrap(),
            );
            std::thread::spawn(move || {
                let mut swaps = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // SAFETY: valid C strings; RENAME_EXCHANGE swaps the two names.
                    unsafe {
                        libc::renameat2(
                            libc::AT_FDCWD,
                            a.as_ptr(),
                            libc::AT_FDCWD,
                            b.as_ptr(),
                            libc::RENAME_EXCHANGE,
                        )
                    };
                    swaps += 1;
                    std::thread::sleep(Duration::from_micros(200));
                }
                swaps
            })
        };
        for _ in 0..4 {
            let out = write_run(&env, &target).out();
            assert!(
                matches!(out.status.code(), Some(0) | Some(2)),
                "{kind}: {}",
                stderr(&out)
            );
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(swapper.join().unwrap() > 100);
        // Put the names back as they were.
        if std::fs::symlink_metadata(&decoy).is_ok_and(|m| m.len() > 1 << 20) {
            std::fs::rename(&decoy, ds.join("tmp-swap")).unwrap();
            std::fs::rename(ds.join("dbio-data-001.dbf"), &decoy).unwrap();
            std::fs::rename(ds.join("tmp-swap"), ds.join("dbio-data-001.dbf")).unwrap();
        }
        std::fs::remove_file(&decoy).unwrap();
        victim.assert_intact(kind);
        assert_results_parse(&env.join("dbio-runs"));
    }
    let _ = env.clean(&target).out();
}

/// `dbio report DIR` redraws only files dbio wrote: a user's own `report.html` or CSV beside
/// a copied result.json is refused, not replaced.
#[test]
fn dbio_report_never_replaces_a_users_own_files() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let target = shm.path().join("ds");
    let out = write_run(&env, target.to_str().unwrap()).out();
    assert!(out.status.success(), "{}", stderr(&out));
    let run = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let user = env.join("userweb");
    std::fs::create_dir(&user).unwrap();
    std::fs::copy(run.join("result.json"), user.join("result.json")).unwrap();
    let mine = Victim::new(user.join("report.html"));
    let csv = Victim::new(user.join("timeseries.csv"));
    let out = env.report(user.to_str().unwrap()).out();
    refusal_line(
        "report over a user's files",
        &out,
        &["not a file dbio wrote"],
    );
    mine.assert_intact("report.html");
    csv.assert_intact("timeseries.csv");
    // dbio's own files are redrawn.
    let out = env.report(run.to_str().unwrap()).out();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A block device another process has open (as a database opens its raw devices: read-write,
/// not exclusive) is never written, and the refusal names the process.
#[test]
fn a_device_another_process_has_open_is_never_written() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "inuse.img", 16 << 20) else {
        return;
    };
    let before = dev.read_all();
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&dev.dev)
        .unwrap();
    let out = env
        .run("write-iops")
        .target(dev.path())
        .destructive()
        .yes()
        .size("8M")
        .duration("1s")
        .warmup("0s")
        .out();
    refusal_line(
        "a device held open",
        &out,
        &[&format!("open in process {}", std::process::id())],
    );
    drop(held);
    assert!(dev.read_all() == before, "the device changed");
    // Through a symlink (/dev/disk/by-id/...), a free blank device is written as asked.
    let link = env.join("disk-link");
    symlink(&dev.dev, &link).unwrap();
    let out = env
        .run("write-iops")
        .target(link.to_str().unwrap())
        .destructive()
        .yes()
        .size("8M")
        .sessions(1)
        .duration("1s")
        .warmup("0s")
        .out();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The points of a sweep go below the sweep directory dbio holds open: a directory swapped
/// for a symlink while the sweep runs is never followed.
#[test]
fn sweep_points_never_follow_a_directory_swapped_for_a_link() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let target = shm.path().join("ds");
    let out_dir = env.join("shared-out");
    let elsewhere = env.join("elsewhere");
    std::fs::create_dir_all(&out_dir).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    let child = spawn(
        env.sweep()
            .arg("read-iops")
            .param("sessions=1,2")
            .target(&target)
            .size("64M")
            .files(1)
            .duration("1s")
            .warmup("0s")
            .out_dir(&out_dir),
    );
    let t0 = Instant::now();
    let sweep_dir = loop {
        if let Some(d) = std::fs::read_dir(&out_dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().contains("_sweep_"))
        {
            break d;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "no sweep directory");
        std::thread::sleep(Duration::from_millis(5));
    };
    let moved = env.join("moved-sweep");
    std::fs::rename(&sweep_dir, &moved).unwrap();
    symlink(&elsewhere, &sweep_dir).unwrap();
    let mut child = child;
    assert!(child.wait().unwrap().success());
    assert!(
        files_under(&elsewhere).is_empty(),
        "{:?}",
        files_under(&elsewhere)
    );
    let points = files_under(&moved)
        .into_iter()
        .filter(|f| f.ends_with("result.json"))
        .count();
    assert_eq!(points, 2, "{:?}", files_under(&moved));
}

/// Results are not lost when `--out` fills during the run: the run is still recorded in
/// the store and printed, and exits 4 saying so; no file is half-written.
#[test]
fn a_full_out_keeps_the_results_in_the_store() {
    if !is_root() {
        return skip("mounting a tmpfs needs root");
    }
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let Some(_fs) = Mount::new("tmpfs", "size=8m", "tmpfs", &env.join("out")) else {
        return;
    };
    let target = shm.path().join("ds");
    let child = env
        .run("read-iops")
        .target(&target)
        .size("16M")
        .files(1)
        .sessions(1)
        .duration("3s")
        .warmup("0s")
        .out_dir(env.join("out"))
        .process()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let mut filler = std::fs::File::create(env.join("out/filler")).unwrap();
    use std::io::Write;
    while filler.write_all(&[0u8; 1 << 16]).is_ok() {}
    drop(filler);
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("recorded as run 1"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Top Timed Events"));
    assert_results_parse(&env.join("out"));
    let runs = env.runs().arg("--json").out();
    let listed: serde_json::Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
}

/// A named temp file (a file system without O_TMPFILE) whose manifest cannot be rewritten
/// is removed again, never left unrecorded.
#[test]
fn a_temp_file_that_cannot_be_recorded_is_not_left_behind() {
    let env = Env::new();
    let prepared = env.prepare().target("ds").size("8M").files(1).out();
    assert!(prepared.status.success());
    // A second name for the manifest: dbio refuses to replace a hard-linked file.
    std::fs::hard_link(
        env.join("ds/dbio-manifest.json"),
        env.join("manifest-backup"),
    )
    .unwrap();
    let out = small_run(&env, "temp", "ds", "1s")
        .opt("--spill-size", "1M")
        .env("DBIO_TEST_NO_TMPFILE", "1")
        .out();
    refusal_line("manifest not rewritable", &out, &["hard link"]);
    let left: Vec<String> = files_under(&env.join("ds"))
        .into_iter()
        .filter(|f| f.starts_with("dbio-temp-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// Commands made of runs check every point before their directory appears.
#[test]
fn commands_made_of_runs_create_nothing_before_their_checks() {
    let env = Env::new();
    for args in [
        &["matrix", "--target", "/nonexistent/x/y", "--out", "out"][..],
        &["calibrate", "--target", "/nonexistent/x/y", "--out", "out"][..],
        &[
            "sweep",
            "read-iops",
            "--param",
            "sessions=1,2",
            "--target",
            "/nonexistent/x/y",
            "--out",
            "out",
        ][..],
        &[
            "sweep",
            "read-iops",
            "--param",
            "sessions=1,60000",
            "--out",
            "out",
            "--size",
            "16M",
        ][..],
    ] {
        let out = env.bare().args(args).out();
        refusal_line(&format!("{args:?}"), &out, &[]);
        assert!(files_under(&env.join("out")).is_empty(), "{args:?}");
        assert!(!env.join("dbio-data").exists(), "{args:?}");
    }
    // A batch larger than the data set's blocks cannot be drawn.
    let out = env
        .run("read-iops")
        .block_size("1M")
        .opt("--batch", 4096)
        .size("8M")
        .files(1)
        .duration("1s")
        .warmup("0s")
        .out();
    refusal_line("a huge batch", &out, &["--batch 4096"]);
    // A job file that is a directory, a save-job path that cannot be written.
    let out = env
        .run("read-iops")
        .opt("--save-job", "/")
        .duration("1s")
        .out();
    refusal_line("--save-job /", &out, &["--save-job"]);
}

/// A process holding a data set's lock may be named anything: its command line is printed
/// on one line, control characters shown as `?`.
#[test]
fn a_lock_holders_name_cannot_break_the_one_line_error() {
    if Command::new("perl").arg("-v").output().is_err() {
        return skip("no perl");
    }
    let env = Env::new();
    let prepared = env.prepare().target("ds").size("8M").files(1).out();
    assert!(prepared.status.success());
    let lock = env.join("ds/dbio-lock");
    let mut holder = Command::new("perl")
        .arg("-e")
        .arg(format!(
            "use Fcntl ':flock'; open(my $f, '<', '{}') or die; flock($f, LOCK_SH) or die; $0 = \"x\\nerror: fake \\e[31mRED\"; print \"held\\n\"; $| = 1; sleep 30",
            lock.display()
        ))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    use std::io::BufRead;
    std::io::BufReader::new(holder.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let out = write_run(&env, "ds").out();
    holder.kill().unwrap();
    holder.wait().unwrap();
    refusal_line(
        "a strange holder",
        &out,
        &["in use by", "x\\nerror: fake \\x1b[31mRED"],
    );
    // `dbio doctor | head -1` ends quietly.
    let piped = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} doctor ds | head -1",
            assert_cmd::cargo::cargo_bin("dbio").display()
        ))
        .current_dir(env.path())
        .env("XDG_DATA_HOME", env.data_home.path())
        .env_remove("DBIO_DB")
        .output()
        .unwrap();
    assert!(!stderr(&piped).contains("panicked"), "{}", stderr(&piped));
}

/// A first preparation killed before its manifest exists leaves no data (the files were
/// still unnamed), only its lock file: `dbio doctor` reports it, `dbio clean` removes it,
/// and the directory too only if dbio created it. The user's own file stays.
#[test]
fn a_killed_first_preparation_leaves_nothing_clean_cannot_remove() {
    let env = Env::new();
    let own = env.join("own");
    std::fs::create_dir(&own).unwrap();
    let notes = Victim::new(own.join("notes.txt"));
    for (target, dbio_made_it) in [(env.join("new"), true), (own.clone(), false)] {
        let t = target.to_str().unwrap();
        // 8 GiB on the test's disk: far longer to fill than the wait for the lock.
        let mut child = spawn(env.prepare().target(t).size("8G"));
        wait_locked(&target, child.id());
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(
            !target.join("dbio-manifest.json").exists(),
            "{t}: killed before its manifest"
        );
        let doctor = env.doctor().arg(t).out();
        let text = String::from_utf8_lossy(&doctor.stdout);
        assert_eq!(doctor.status.code(), Some(1), "{text}");
        assert!(
            text.contains("STALE: a first preparation was killed here")
                && text.contains(&format!("`dbio clean {t}`")),
            "{text}"
        );
        let out = env.clean(t).out();
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(target.exists(), !dbio_made_it, "{t}");
        let left: Vec<String> = files_under(&target);
        assert!(!left.contains(&"dbio-lock".to_string()), "{t}: {left:?}");
        let doctor = env.doctor().arg(t).out();
        assert_eq!(doctor.status.code(), Some(0), "{t}");
    }
    notes.assert_intact("after clean");
    // A killed first preparation, then a complete one: the directory is still dbio's.
    let target = env.join("again");
    let t = target.to_str().unwrap();
    let mut child = spawn(env.prepare().target(t).size("8G"));
    wait_locked(&target, child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    let out = env.prepare().target(t).size("16M").out();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.clean(t).out();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!target.exists(), "the directory dbio created is removed");
}

/// Commands that look at a directory (`verify`, `clean`, `doctor`) create nothing in one
/// that holds no data set — not even a lock file — and change nothing in it.
#[test]
fn looking_at_a_foreign_directory_creates_nothing_in_it() {
    let env = Env::new();
    let dir = env.join("someone");
    std::fs::create_dir(&dir).unwrap();
    let notes = Victim::new(dir.join("notes.txt"));
    let d = dir.to_str().unwrap();
    for args in [
        ["verify", d].as_slice(),
        ["clean", d].as_slice(),
        ["clean", "--stale", d].as_slice(),
        ["doctor", d].as_slice(),
        ["map", d].as_slice(),
    ] {
        let out = env.bare().args(args).out();
        assert_eq!(
            files_under(&dir),
            ["notes.txt"],
            "{args:?}: {}",
            stderr(&out)
        );
        notes.assert_intact(&format!("{args:?}"));
    }
    for args in [["verify", d], ["clean", d]] {
        let out = env.bare().args(args).out();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("holds no dbio data set"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// Waits (up to 60 s) until the manifest in `dir` says a preparation of `size_bytes` is under
/// way, as one killed now leaves it.
fn wait_preparing(dir: &Path, size_bytes: u64) {
    let t0 = Instant::now();
    while !std::fs::read_to_string(dir.join("dbio-manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|m| m["state"] == "preparing" && m["size_bytes"] == size_bytes)
    {
        assert!(t0.elapsed() < Duration::from_secs(60), "never preparing");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A preparation killed on a file system without O_TMPFILE (first, and with --fresh) leaves
/// a manifest that is dbio's own: doctor says incomplete, never CHANGED; the next run
/// recreates it, `clean --stale` and `clean` remove it.
#[test]
fn a_killed_preparation_without_tmpfile_is_incomplete_not_changed() {
    let env = Env::new();
    let victim = Victim::new(env.join("victim"));
    let ds = env.join("ds");
    let t = ds.to_str().unwrap();
    let no_tmpfile = [("DBIO_TEST_NO_TMPFILE", "1")];
    let killed = |prepare: Dbio<'_>, size: u64| {
        let mut child = spawn(prepare.envs(&no_tmpfile));
        wait_preparing(&ds, size);
        child.kill().unwrap();
        child.wait().unwrap();
        let doctor = env.doctor().arg(t).out();
        let text = String::from_utf8_lossy(&doctor.stdout).into_owned();
        assert!(text.contains("incomplete"), "{text}");
        assert!(!text.contains("CHANGED"), "{text}");
        text
    };
    // A killed first preparation: the next run recreates it.
    killed(env.prepare().target(t).size("2G"), 2 << 30);
    let out = env.prepare().target(t).size("16M").out();
    assert!(out.status.success(), "{}", stderr(&out));
    // A killed --fresh: `clean --stale` removes its files, then the next run recreates it.
    let text = killed(env.prepare().target(t).size("2G").fresh(), 2 << 30);
    assert!(
        text.contains("STALE: files of a killed preparation"),
        "{text}"
    );
    let out = env.cmd("clean").arg("--stale").arg(t).out();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("the file of a killed preparation"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(files_under(&ds), ["dbio-lock", "dbio-manifest.json"]);
    let out = env.prepare().target(t).size("16M").out();
    assert!(out.status.success(), "{}", stderr(&out));
    // Killed again: `dbio clean` removes it all.
    killed(env.prepare().target(t).size("2G").fresh(), 2 << 30);
    let out = env.clean(t).out();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!ds.exists());
    victim.assert_intact("killed preparations");
}

/// A first preparation killed before its manifest exists is in the registry from the
/// moment its directory is made: `dbio doctor` run elsewhere lists it as STALE, and a
/// store that cannot be written does not fail a preparation.
#[test]
fn doctor_anywhere_lists_a_killed_first_preparation() {
    let env = Env::new();
    let ds = env.join("ds");
    let t = ds.to_str().unwrap();
    let mut child = spawn(env.prepare().target(t).size("8G"));
    wait_locked(&ds, child.id());
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(files_under(&ds), ["dbio-lock"]);
    let doctor = env.doctor().current_dir("/").out();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert_eq!(doctor.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("{t}: STALE: a first preparation was killed here")),
        "{text}"
    );
    let out = env.clean(t).current_dir("/").out();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!ds.exists());
    let doctor = env.doctor().current_dir("/").out();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(!text.contains(t), "forgotten: {text}");
    // A store that cannot be written: the preparation still succeeds.
    let out = env
        .bare()
        .db("/proc/dbio.db")
        .arg("prepare")
        .target(t)
        .size("8M")
        .out();
    assert!(out.status.success(), "{}", stderr(&out));
    let _ = env.clean(t).out();
}

/// `dbio clean` of a manifest with a wrong field names the field as a field, not as a file
/// in the directory, removes dbio's files and exits 0 when nothing remains; 1 when a file
/// that is not dbio's is left at a listed name.
#[test]
fn clean_names_manifest_fields_as_fields_and_exits_1_only_when_something_remains() {
    let env = Env::new();
    let ds = env.join("ds");
    let out = env.prepare().target("ds").size("16M").out();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut m = manifest_of(&ds);
    m["size_bytes"] = 4096.into();
    set_manifest(&ds, &m);
    let out = env.clean("ds").out();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        !err.contains("ds/size_bytes") && !err.contains("left"),
        "{err}"
    );
    assert!(err.contains("its size_bytes is 4096"), "{err}");
    assert!(!ds.exists());
    // A foreign file at a name the manifest lists stays, and clean says so with exit 1.
    let out = env.prepare().target("ds").size("16M").out();
    assert!(out.status.success(), "{}", stderr(&out));
    let notes = Victim::new(ds.join("notes.txt"));
    let mut m = manifest_of(&ds);
    m["files"].as_array_mut().unwrap().push(
        serde_json::json!({"name": "notes.txt", "size_bytes": 4096, "dev": 1, "ino": 5, "btime_ns": null}),
    );
    set_manifest(&ds, &m);
    let out = env.clean("ds").out();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("notes.txt alone"), "{}", stderr(&out));
    notes.assert_intact("clean");
    assert_eq!(files_under(&ds), ["notes.txt"]);
}

/// doctor's hint for a registered data set whose manifest was deleted by hand works as
/// printed: `dbio clean PATH` forgets it and removes nothing that is not dbio's.
#[test]
fn clean_forgets_a_registered_data_set_whose_manifest_is_gone() {
    let env = Env::new();
    let ds = env.join("ds");
    let t = ds.to_str().unwrap();
    let out = env.prepare().target(t).size("16M").out();
    assert!(out.status.success(), "{}", stderr(&out));
    for name in files_under(&ds) {
        std::fs::remove_file(ds.join(name)).unwrap();
    }
    let notes = Victim::new(ds.join("notes.txt"));
    let doctor = env.doctor().current_dir("/").out();
    let text = String::from_utf8_lossy(&doctor.stdout);
    let hint = format!("`dbio clean {t}` forgets it");
    assert!(text.contains("gone") && text.contains(&hint), "{text}");
    let out = env.clean(t).current_dir("/").out();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("forgotten"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    notes.assert_intact("clean of a data set whose manifest is gone");
    assert_eq!(files_under(&ds), ["notes.txt"]);
    let doctor = env.doctor().current_dir("/").out();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(!text.contains(t), "{text}");
    // Not registered any more: a directory that holds no data set is refused, as before.
    let out = env.clean(t).out();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
