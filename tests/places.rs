//! Where a run may put its data set (`--target`) and its results (`--out`): a place that
//! cannot be used is bad input — exit 2, one `error:` line naming the option — refused
//! before anything is created or measured, and nothing is recorded in the results store.

use std::path::{Path, PathBuf};

use crate::util::{Dbio, Env, Mount, is_root, shm_dir, skip, tree};

/// A run of `duration` on `target` with results in `out`: with 30 s, refused in well
/// under that, or it measured.
fn a_run<'e>(env: &'e Env, target: &str, out: &str, duration: &str) -> Dbio<'e> {
    env.run("read-iops")
        .target(target)
        .size("8M")
        .files(1)
        .sessions(1)
        .duration(duration)
        .warmup("0s")
        .out_dir(out)
}

/// The file system type `path`'s mount has, from the mount table (longest mount point
/// that holds it).
fn fs_type(path: &str) -> Option<String> {
    let table = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    table
        .lines()
        .filter_map(|l| {
            let point = l.split(' ').nth(4)?;
            let kind = l.split_once(" - ")?.1.split(' ').next()?;
            let holds =
                path == point || path.starts_with(&format!("{}/", point.trim_end_matches('/')));
            holds.then(|| (point.len(), kind.to_string()))
        })
        .max()
        .map(|(_, k)| k)
}

/// The kernel's pseudo file systems never get a data set: /proc, /sys and a devtmpfs /dev
/// are refused, for `dbio run` and `dbio prepare`; /dev/shm (tmpfs) stays allowed.
#[test]
fn no_data_set_on_the_kernels_file_systems() {
    let env = Env::new();
    let name = format!("dbio-places-test-{}", std::process::id());
    let mut targets = vec![format!("/proc/{name}"), format!("/sys/{name}")];
    if fs_type("/dev").as_deref() == Some("devtmpfs") {
        targets.push(format!("/dev/{name}"));
    } else {
        eprintln!("/dev is not devtmpfs here: only /proc and /sys are tried");
    }
    if Path::new("/sys/fs/cgroup").is_dir() {
        targets.push(format!("/sys/fs/cgroup/{name}"));
    }
    for t in &targets {
        let out = a_run(&env, t, "out", "30s").refused_leaving_nothing(&["--target"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("the kernel") && err.contains("/dev/shm"),
            "{t}: {err}"
        );
        assert!(
            std::fs::symlink_metadata(t).is_err(),
            "{t} was created: {err}"
        );
        env.prepare()
            .target(t)
            .size("8M")
            .files(1)
            .refused_leaving_nothing(&["--target"]);
        assert!(std::fs::symlink_metadata(t).is_err(), "prepare made {t}");
    }
    // /dev/shm is tmpfs, memory: a data set may be made there.
    let Some(shm) = shm_dir() else { return };
    let ds = shm.path().join("ds");
    let ds = ds.to_str().unwrap();
    let prep = env.prepare().target(ds).size("8M").files(1).out();
    assert!(
        prep.status.success(),
        "{}",
        String::from_utf8_lossy(&prep.stderr)
    );
    assert!(Path::new(ds).join("dbio-manifest.json").is_file());
}

/// A `--target` the system cannot use is bad input, not an I/O error: a symbolic link to
/// nothing, a path through a regular file or a FIFO, a name over 255 bytes, a path over
/// 4095 bytes.
#[test]
fn unusable_targets_are_bad_input() {
    let env = Env::new();
    std::os::unix::fs::symlink("/nonexistent/dbio-places", env.join("dangling")).unwrap();
    std::fs::write(env.join("a-file"), b"not a directory").unwrap();
    let fifo = std::ffi::CString::new(env.join("a-fifo").to_str().unwrap()).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    let long_name = "n".repeat(256);
    let long_path = vec!["abcdefgh"; 520].join("/");
    let cases: [(&str, &str); 5] = [
        ("dangling", "does not exist"),
        ("a-file/ds", "not a directory"),
        ("a-fifo/ds", "not a directory"),
        (&long_name, "at most 255"),
        (&long_path, "at most 4095"),
    ];
    for (target, says) in cases {
        let what = &target[..target.len().min(40)];
        let out = a_run(&env, target, "out", "30s").refused_leaving_nothing(&["--target"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{what}: {err}");
        assert!(err.len() < 600, "{what}: a line one can read: {err}");
    }
    assert_eq!(
        std::fs::read(env.join("a-file")).unwrap(),
        b"not a directory"
    );
}

/// `--out` is proved writable before anything is prepared or measured: a file, a
/// read-only file system and a full one are refused (exit 2), and the directories dbio
/// made for the run — the run directory, `--out` and its parents — are gone again.
#[test]
fn an_out_that_cannot_hold_results_is_refused_before_measuring() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let target = shm.path().join("ds");
    let target = target.to_str().unwrap();
    std::fs::write(env.join("a-file"), b"x").unwrap();
    a_run(&env, target, "a-file", "30s").refused_leaving_nothing(&["--out"]);
    a_run(&env, target, "a-file/runs", "30s").refused_leaving_nothing(&["--out"]);
    if !is_root() {
        // Without root: a directory without write permission.
        let ro = env.join("ro");
        std::fs::create_dir(&ro).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        a_run(&env, target, "ro/runs", "30s").refused_leaving_nothing(&["--out"]);
        assert!(!Path::new(target).exists(), "the data set was made");
        return skip("a read-only and a full file system for --out need root (mounts)");
    }
    let Some(_ro) = Mount::new("tmpfs", "ro,size=1m", "tmpfs", &env.join("ro")) else {
        return;
    };
    let Some(_full) = Mount::new("tmpfs", "size=4m", "tmpfs", &env.join("full")) else {
        return;
    };
    // Filled to the last block.
    let mut filler = std::fs::File::create(env.join("full/filler")).unwrap();
    use std::io::Write;
    while filler.write_all(&[7u8; 1 << 12]).is_ok() {}
    drop(filler);
    let filled = std::fs::read(env.join("full/filler")).unwrap();
    for (out, what) in [
        ("ro", "a read-only --out"),
        ("ro/a/b", "below a read-only --out"),
        ("full", "a full --out"),
        ("full/a/b", "--out made in a full file system"),
    ] {
        let err = a_run(&env, target, out, "30s").refused_leaving_nothing(&["--out"]);
        let err = String::from_utf8_lossy(&err.stderr).into_owned();
        assert!(
            err.contains("read-only") || err.contains("No space left"),
            "{what}: {err}"
        );
        assert!(!Path::new(target).exists(), "{what}: the data set was made");
    }
    assert_eq!(
        std::fs::read(env.join("full/filler")).unwrap(),
        filled,
        "the foreign file changed"
    );
    // With room again, the same run goes (quickly) and keeps its directory.
    std::fs::remove_file(env.join("full/filler")).unwrap();
    let out = a_run(&env, target, "full/a/b", "1s").out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dirs: Vec<PathBuf> = std::fs::read_dir(env.join("full/a/b"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    assert!(dirs[0].join("result.json").is_file());
    assert!(
        !tree(&dirs[0]).iter().any(|f| f.contains("probe")),
        "{:?}",
        tree(&dirs[0])
    );
}
