//! The programs dbio starts (docs/safety.md, "Programs dbio starts"): one that another user
//! could have written — in a directory others may write, or found through one on PATH — is
//! refused before anything is created (exit 2, one line naming the path and why) and never
//! runs. (`--pg-bin`'s programs: tests/pg.rs; the checker itself: src/safety/exec.rs.)

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::util::{self, Env};

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A directory anyone may write (as /tmp is), in a place only root or this user may change,
/// holding stand-ins called `names` that leave their name in `mark` when they run.
fn open_dir(progs: &Path, mark: &Path, names: &[&str]) -> PathBuf {
    let open = progs.join("open");
    std::fs::create_dir(&open).unwrap();
    for name in names {
        let f = open.join(name);
        std::fs::write(
            &f,
            format!("#!/bin/sh\necho {name} >> '{}'\n", mark.display()),
        )
        .unwrap();
        chmod(&f, 0o755);
    }
    chmod(&open, 0o777);
    open
}

/// Where a stand-in running as any user can leave its mark.
fn marks(env: &Env) -> PathBuf {
    let dir = env.join("marks");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o777);
    dir.join("ran")
}

/// Whether `tool` is in one of the directories dbio looks in before PATH.
fn system_has(tool: &str) -> bool {
    ["/usr/sbin", "/usr/bin", "/sbin", "/bin"]
        .iter()
        .any(|d| Path::new(d).join(tool).exists())
}

/// PATH with `dir` first.
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn an_ssh_command_another_user_could_have_written_is_refused_and_never_runs() {
    let env = Env::new();
    let Some(progs) = util::program_dir() else {
        return;
    };
    let mark = marks(&env);
    let open = open_dir(progs.path(), &mark, &["fake-ssh", "dbio-test-ssh"]);
    let why = format!(
        "{} is writable by group and other (mode 0777): dbio runs no program another user could have replaced",
        open.display()
    );
    let target = format!("{}/d-{{host}}", env.path().display());
    let by_path = open.join("fake-ssh").display().to_string();
    for (ssh, push) in [
        (by_path.as_str(), false),
        // A bare name found on PATH only (none in /usr/sbin, /usr/bin, /sbin, /bin).
        ("dbio-test-ssh", false),
        ("dbio-test-ssh -F /dev/null", true),
    ] {
        let mut cmd = env
            .run("read-iops")
            .target(&target)
            .size("32M")
            .duration("1s")
            .opt("--hosts", "db1,db2")
            .opt("--ssh", ssh)
            .env("PATH", path_with(&open));
        if push {
            cmd = cmd.arg("--push");
        }
        cmd.refused_leaving_nothing(&["--ssh", &why]);
        assert!(
            !mark.exists(),
            "{ssh}: {:?} ran",
            std::fs::read_to_string(&mark)
        );
    }
}

#[test]
fn a_mkfs_another_user_could_have_written_is_refused_and_never_runs() {
    if !util::is_root() {
        util::skip("a file system sweep needs root");
        return;
    }
    // Only where the system has no mkfs.btrfs of its own (.ci/install-deps installs none):
    // the one on PATH is the one dbio would run.
    if system_has("mkfs.btrfs") {
        util::skip("mkfs.btrfs is installed: the stand-in on PATH would not be the one found");
        return;
    }
    let env = Env::new();
    let Some(dev) = crate::fs_sweep::blank_device(&env, 128 << 20) else {
        return;
    };
    let Some(progs) = util::program_dir() else {
        return;
    };
    let mark = marks(&env);
    let open = open_dir(progs.path(), &mark, &["mkfs.btrfs"]);
    let before = dev.read_all();
    env.sweep()
        .arg("read-iops")
        .args(["--param", "fs=btrfs", "--device", dev.path()])
        .destructive()
        .yes()
        .size("32M")
        .env("PATH", path_with(&open))
        .refused_leaving_nothing(&[
            "--param fs",
            &format!("{} is writable by group and other", open.display()),
        ]);
    assert!(!mark.exists(), "{:?} ran", std::fs::read_to_string(&mark));
    assert!(dev.read_all() == before, "the device changed");
}

/// Every program dbio starts goes through `safety::exec` (`Program::command`): outside it,
/// no source under `src/` makes a `std::process::Command` itself (`Command::new`) or calls
/// libc's `exec*`, `posix_spawn`, `system`, `popen` or `fork` (test modules left out).
/// This reads the sources, as a reviewer would.
#[test]
fn no_source_starts_a_program_but_through_safety_exec() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    util::rust_files(&root, &mut files);
    let forbidden = [
        "Command::new",
        "libc::exec",
        "libc::posix_spawn",
        "libc::system",
        "libc::popen",
        "libc::fork",
    ];
    let mut found = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        if rel == "safety/exec.rs" {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        // What only tests compile ends the code: a `#[cfg(test)]` block.
        let code = match text.find("#[cfg(test)]\nmod ") {
            Some(i) => &text[..i],
            None => &text[..],
        };
        for (n, line) in code.lines().enumerate() {
            // clap's Command is a command line's description, not a program.
            let line = line
                .split("//")
                .next()
                .unwrap_or("")
                .replace("clap::Command::new", "");
            for w in forbidden {
                if line.contains(w) {
                    found.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "programs started outside safety::exec:\n{}",
        found.join("\n")
    );
    // The scan sees what it must.
    let exec = std::fs::read_to_string(root.join("safety/exec.rs")).unwrap();
    assert!(exec.contains("Command::new"));
}
