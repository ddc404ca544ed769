//! SPEC §7: writes only go to files dbio created; a stopped run keeps its partial result and
//! leaves nothing but the data set; targets that cannot be used get one clear line.

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use crate::util::{Env, Mount, files_under, is_root, skip, u};

#[test]
fn write_tests_never_touch_files_dbio_did_not_create() {
    let env = Env::new();
    std::fs::create_dir(env.join("dbio-data")).unwrap();
    let foreign = env.join("dbio-data/customer.dbf");
    std::fs::write(&foreign, vec![7u8; 1 << 20]).unwrap();
    let before = std::fs::metadata(&foreign).unwrap();
    for test in ["write-iops", "write-mbps"] {
        for sub in ["--sync", "--async"] {
            env.quick(test).arg(sub).json();
        }
    }
    let after = std::fs::metadata(&foreign).unwrap();
    assert_eq!(std::fs::read(&foreign).unwrap(), vec![7u8; 1 << 20]);
    assert_eq!(
        (before.ino(), before.mtime_nsec(), before.len()),
        (after.ino(), after.mtime_nsec(), after.len())
    );

    // A data file replaced behind dbio's back is no longer dbio's: refused, left alone.
    let victim = env.join("dbio-data/dbio-data-001.dbf");
    std::fs::remove_file(&victim).unwrap();
    std::fs::write(&victim, vec![9u8; 64 << 20]).unwrap();
    let out = env.quick("write-iops").arg("--json").out();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("dbio-data-001.dbf"));
    assert!(std::fs::read(&victim).unwrap().iter().all(|&b| b == 9));
}

#[test]
fn sigint_stops_quickly_and_keeps_a_partial_result() {
    for test in ["read-iops", "write-mbps"] {
        let env = Env::new();
        // Prepare first so the signal lands in the measured window.
        assert!(env.prepare().size("256M").out().status.success());
        let before = files_under(&env.join("dbio-data"));
        let mut child = crate::util::Running::spawn(
            env.run(test)
                .size("256M")
                .sessions(4)
                .duration("60s")
                .warmup("1s")
                .arg("--json")
                .process(),
        );
        // A second into the measured window (not a fixed time from the start, which a
        // loaded machine spends preparing).
        child.wait_for("measuring");
        std::thread::sleep(Duration::from_millis(1000));
        let sent = Instant::now();
        // SAFETY: kill on our own child's pid.
        unsafe { libc::kill(child.child.id() as i32, libc::SIGINT) };
        let (code, stdout) = child.finish();
        let took = sent.elapsed();
        let stderr = child.stderr();
        assert!(
            took < Duration::from_secs(2),
            "{test}: stopped after {took:?}"
        );
        assert_eq!(code, Some(130), "{test}: {stderr}");
        let r: serde_json::Value = serde_json::from_slice(&stdout).expect("partial result printed");
        assert_eq!(r["partial"], true);
        assert_eq!(r["stop_reason"], "interrupted");
        let secs = r["measured_seconds"].as_f64().unwrap();
        assert!(secs > 0.5 && secs < 3.0, "{test}: measured {secs}");
        assert!(u(&r["events"][0]["requests"]) > 0);
        // Nothing left behind but the data set and the run directory.
        assert_eq!(files_under(&env.join("dbio-data")), before, "{test}");
        let mut all = files_under(env.path());
        all.retain(|p| !p.starts_with("dbio-data/"));
        assert!(
            all.iter().all(|p| p.starts_with("dbio-runs/")),
            "{test}: {all:?}"
        );
        let names: Vec<&str> = all.iter().map(|p| p.rsplit('/').next().unwrap()).collect();
        assert_eq!(
            names,
            [
                "histograms.csv",
                "report.html",
                "result.json",
                "summary.txt",
                "timeseries.csv"
            ],
            "{test}: one run directory with the partial result"
        );
        let m: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(env.join("dbio-data/dbio-manifest.json")).unwrap(),
        )
        .unwrap();
        assert!(m["in_use"].is_null(), "{test}: in-use mark cleared");
    }
}

#[test]
fn read_only_target_gets_one_line() {
    if !is_root() {
        return skip("mounting a read-only file system needs root");
    }
    let env = Env::new();
    let Some(mounted) = Mount::new("tmpfs", "ro,size=1M", "tmpfs", &env.join("ro")) else {
        return;
    };
    let out = env.run("read-iops").target("ro/data").out();
    drop(mounted);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A path dbio may not write is bad input (crate::error's rule), not an I/O error.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("read-only") && stderr.contains("--target"),
        "{stderr}"
    );
}

#[test]
fn file_system_refusing_o_direct_gets_one_line() {
    if !is_root() {
        return skip("mounting ramfs needs root");
    }
    let env = Env::new();
    let mnt = env.join("ramfs");
    // ramfs has no O_DIRECT: open(O_DIRECT) fails with EINVAL. The guard unmounts it even
    // when io_uring's deferred teardown still holds it busy for a moment (umount -l).
    let Some(_mounted) = Mount::new("ramfs", "rw", "ramfs", &mnt) else {
        return;
    };
    let direct = env
        .run("read-iops")
        .target("ramfs/data")
        .size("16M")
        .duration("1s")
        .warmup("0s")
        .out();
    let buffered = env
        .run("read-iops")
        .target("ramfs/data")
        .size("16M")
        .duration("1s")
        .warmup("0s")
        .io_mode("asynch")
        .arg("--json")
        .out();
    let cleaned = env.clean("ramfs/data").out();
    let left = files_under(&mnt);
    let stderr = String::from_utf8_lossy(&direct.stderr);
    assert_eq!(direct.status.code(), Some(4), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("O_DIRECT") && errors[0].contains("--io-mode none"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
    assert!(
        buffered.status.success(),
        "buffered io mode works there: {}",
        String::from_utf8_lossy(&buffered.stderr)
    );
    assert!(cleaned.status.success());
    assert!(left.is_empty(), "{left:?}");
}
