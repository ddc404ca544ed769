//! The binary as it is shipped: what `dbio --version` and result.json say of it, and that
//! `--push` copies it only to hosts whose glibc can run it. `DBIO_TEST_BIN=dist/out/...`
//! runs these (and every other test) against the portable build.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::util::Env;

/// `dbio --version`: "dbio VERSION (commit C, TARGET[, glibc >= F])" as its parts.
fn version_parts(env: &Env) -> (String, String, String, Option<String>) {
    let out = env.bare().arg("--version").out();
    assert!(out.status.success());
    let line = String::from_utf8(out.stdout).unwrap();
    let line = line.trim();
    let rest = line.strip_prefix("dbio ").expect(line);
    let (version, rest) = rest.split_once(" (commit ").expect(line);
    let inner = rest.strip_suffix(')').expect(line);
    let mut parts = inner.split(", ");
    let commit = parts.next().unwrap().to_string();
    let target = parts.next().expect(line).to_string();
    let floor = parts
        .next()
        .map(|g| g.strip_prefix("glibc >= ").expect(line).to_string());
    assert_eq!(parts.next(), None, "{line}");
    (version.to_string(), commit, target, floor)
}

/// The newest glibc symbol version the binary at `bin` asks for, read with objdump.
fn newest_glibc_symbol(bin: &Path) -> Option<(u32, u32)> {
    let out = Command::new("objdump").arg("-T").arg(bin).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split("GLIBC_")
        .skip(1)
        .filter_map(|t| {
            let v: String = t
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            let mut p = v.split('.');
            Some((p.next()?.parse().ok()?, p.next()?.parse().ok()?))
        })
        .max()
}

fn test_bin() -> std::path::PathBuf {
    std::env::var_os("DBIO_TEST_BIN")
        .map(Into::into)
        .unwrap_or_else(|| assert_cmd::cargo::cargo_bin("dbio"))
}

#[test]
fn version_names_commit_target_and_glibc_floor_and_result_json_agrees() {
    let env = Env::new();
    let (version, commit, target, floor) = version_parts(&env);
    assert_eq!(version, env!("CARGO_PKG_VERSION"));
    assert!(
        commit == "unknown" || (commit.len() >= 7 && commit.bytes().all(|b| b.is_ascii_hexdigit())),
        "{commit}"
    );
    // Cargo's own build is of this checkout's HEAD (build.rs reruns when it moves).
    if std::env::var_os("DBIO_TEST_BIN").is_none()
        && let Ok(out) = Command::new("git")
            .args(["rev-parse", "--short=7", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
        && out.status.success()
    {
        assert_eq!(commit, String::from_utf8_lossy(&out.stdout).trim());
    }
    assert!(target.contains("linux"), "{target}");
    let floor = floor.expect("a glibc build names the oldest glibc it runs on");
    let need: Vec<u32> = floor.split('.').map(|p| p.parse().unwrap()).collect();
    assert_eq!(need.len(), 2, "{floor}");
    // The claim holds: no symbol newer than the floor is asked of glibc.
    if let Some(newest) = newest_glibc_symbol(&test_bin()) {
        assert!(
            newest <= (need[0], need[1]),
            "the binary asks for GLIBC_{}.{} but says glibc >= {floor}",
            newest.0,
            newest.1
        );
    }

    let r: Value = env
        .run("read-iops")
        .size("64M")
        .sessions(1)
        .duration("1s")
        .warmup("0s")
        .json();
    let b = &r["dbio_build"];
    assert_eq!(b["version"], version.as_str());
    assert_eq!(r["dbio_version"], version.as_str());
    assert_eq!(b["commit"], commit.as_str());
    assert_eq!(
        b["target"].as_str().unwrap().replace("-unknown-", "-"),
        target
    );
    assert_eq!(b["glibc_floor"], floor.as_str());
}

/// An ssh stand-in: runs the remote command here, logs it as "HOST COMMAND", and answers
/// the glibc question with `answers` (host → first line) instead.
/// It lives in `progs` (a [`util::program_dir`]): dbio runs no program from /tmp.
fn fake_ssh(env: &Env, progs: &Path, answers: &[(&str, &str)]) -> (String, std::path::PathBuf) {
    let log = env.join("ssh.log");
    let mut cases = String::new();
    for (host, answer) in answers {
        cases.push_str(&format!("    {host}) echo '{answer}' ;;\n"));
    }
    let script = format!(
        "#!/bin/sh\nwhile [ \"$#\" -gt 0 ] && [ \"$1\" != -- ]; do host=$1; shift; done\nshift\n\
         echo \"$host $*\" >> '{}'\n\
         case \"$*\" in *GNU_LIBC_VERSION*)\n  case $host in\n{cases}  esac\n  exit 0 ;;\nesac\n\
         exec sh -c \"$*\"\n",
        log.display()
    );
    let path = progs.join("fake-ssh");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (path.display().to_string(), log)
}

fn push_run(env: &Env, ssh: &str, target: &Path) -> std::process::Output {
    let target = format!("{}/d-{{host}}", target.display());
    env.run("read-iops")
        .target(&target)
        .size("32M")
        .sessions(1)
        .duration("1s")
        .warmup("0s")
        .io_mode("none")
        .arg("--json")
        .opt("--hosts", "db1,db2")
        .opt("--ssh", ssh)
        .arg("--push")
        .out()
}

#[test]
fn push_refuses_a_host_whose_glibc_is_too_old_before_any_host_gets_anything() {
    let env = Env::new();
    let (_, _, _, floor) = version_parts(&env);
    let floor = floor.expect("a glibc build");
    let target = env.join("data");
    std::fs::create_dir(&target).unwrap();
    let Some(progs) = crate::util::program_dir() else {
        return;
    };
    for (answers, refused, says) in [
        (
            [("db1", "glibc 99.0"), ("db2", "glibc 2.5")],
            "db2",
            "glibc 2.5 there",
        ),
        (
            [("db1", "musl libc (x86_64)"), ("db2", "glibc 9.0")],
            "db1",
            "no glibc there ('musl libc (x86_64)')",
        ),
    ] {
        let (ssh, log) = fake_ssh(&env, progs.path(), &answers);
        let out = push_run(&env, &ssh, &target);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 1, "{err}");
        assert!(
            lines[0].starts_with(&format!("error: {refused}: {says}")),
            "{err}"
        );
        assert!(
            lines[0].contains(&format!("needs glibc {floor} or later")),
            "{err}"
        );
        // Every host was asked, and nothing else was done on any: no binary copied, no
        // agent started, no data set, no run directory.
        let asked = std::fs::read_to_string(&log).unwrap();
        let asked: Vec<&str> = asked.lines().collect();
        assert_eq!(asked.len(), 2, "{asked:?}");
        assert!(
            asked.iter().all(|l| l.contains("GNU_LIBC_VERSION")),
            "{asked:?}"
        );
        assert!(std::fs::read_dir(&target).unwrap().next().is_none());
        assert!(!env.join("dbio-runs").exists());
        std::fs::remove_file(&log).unwrap();
    }
}
