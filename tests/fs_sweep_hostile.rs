//! `dbio sweep --param fs=...` attacked: input that used to pass the checks and fail only
//! after mkfs had written the device, a device the kernel keeps read-only, a job file, and a
//! refusal that comes after the first mkfs. Bad input is one `error:` line, exit 2, and the
//! device's bytes unchanged; once a file system was made the exit is 1 and the device is left
//! blank.

use std::path::Path;
use std::process::Output;

use crate::fs_sweep::{blank_device, signatures};
use crate::util::{Env, Loop, sh, skip};

/// `dbio sweep TEST --device DEV --destructive --yes ARGS`.
fn sweep(env: &Env, test: &str, dev: &Loop, args: &[&str]) -> Output {
    env.sweep()
        .arg(test)
        .args(["--device", dev.path(), "--destructive", "--yes"])
        .args(args)
        .sessions(1)
        .duration("1s")
        .warmup("0s")
        .out()
}

/// Refused as bad input (exit 2, one `error:` line naming `words`), the device's bytes
/// unchanged and nothing mounted.
#[track_caller]
fn refused(env: &Env, dev: &Loop, args: &[&str], words: &[&str]) {
    let before = dev.read_all();
    let out = sweep(env, "read-iops", dev, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
    for w in words {
        assert!(errors[0].contains(w), "{args:?}: no {w:?} in {}", errors[0]);
    }
    assert!(!stderr.contains("dbio: mkfs."), "{args:?}: {stderr}");
    assert!(dev.read_all() == before, "{args:?} changed the device");
}

#[test]
fn mount_words_that_fail_only_after_mkfs_are_refused_before_it() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 64 << 20) else {
        return;
    };
    for (fs, words) in [
        ("fs=ext4:exec", &["exec", "noexec"][..]),
        ("fs=ext4:suid", &["suid"]),
        ("fs=ext4:bind", &["bind", "mount(8)"]),
        ("fs=ext4:defaults", &["defaults"]),
        ("fs=ext4:x-systemd.automount", &["x-systemd"]),
        ("fs=ext4:errors=panic", &["errors=panic", "machine"]),
        ("fs=ext4:data=writeback:data=ordered", &["twice"]),
        (
            "fs=ext4:journal_dev=2049",
            &["journal_dev", "another device"],
        ),
    ] {
        refused(&env, &dev, &["--param", fs, "--size", "16M"], words);
    }
    // What dbio always sets may be said again: it runs.
    let out = sweep(
        &env,
        "read-iops",
        &dev,
        &["--param", "fs=ext4:noexec:nosuid", "--size", "16M"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("is blank again"), "{stderr}");
    assert_eq!(signatures(&dev), "");
}

#[test]
fn a_device_too_small_for_mkfs_or_read_only_is_refused_before_anything_is_written() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 64 << 20) else {
        return;
    };
    // mkfs.xfs makes nothing under 300 MiB, mkfs.btrfs nothing under 109 MiB: refused
    // before the ext4 point, not after it (whether or not the tools are installed, the
    // size is checked first only where they are).
    if ["/usr/sbin/mkfs.xfs", "/sbin/mkfs.xfs"]
        .iter()
        .any(|p| Path::new(p).exists())
    {
        refused(
            &env,
            &dev,
            &["--param", "fs=ext4,xfs", "--size", "16M"],
            &["--device", "xfs", "300.0 MiB"],
        );
    } else {
        skip("no mkfs.xfs (.ci/install-deps installs it)");
    }
    // The temp test's spills count against the room (they used to be found missing only
    // once the file system was made).
    let before = dev.read_all();
    let out = sweep(&env, "temp", &dev, &["--param", "fs=ext4"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("temp spills"), "{stderr}");
    assert!(!stderr.contains("dbio: mkfs."), "{stderr}");
    assert!(
        dev.read_all() == before,
        "the temp sweep changed the device"
    );
    // A device the kernel keeps read-only: every mkfs would fail.
    assert!(sh("blockdev", &["--setro", dev.path()]), "blockdev --setro");
    struct Rw<'a>(&'a Loop);
    impl Drop for Rw<'_> {
        fn drop(&mut self) {
            sh("blockdev", &["--setrw", self.0.path()]);
        }
    }
    let _rw = Rw(&dev);
    refused(
        &env,
        &dev,
        &["--param", "fs=ext4", "--size", "16M"],
        &["--device", "read-only"],
    );
}

#[test]
fn a_job_file_with_a_target_sweeps_file_systems_on_the_device() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 64 << 20) else {
        return;
    };
    let elsewhere = env.join("job-target");
    let job = env.join("job.toml");
    std::fs::write(
        &job,
        format!(
            "[dataset]\ntarget = \"{}\"\nsize = \"16M\"\nfiles = 1\n\n[[class]]\nname = \"reads\"\nevent = \"db file sequential read\"\nsize = \"8K\"\nsessions = 1\n",
            elsewhere.display()
        ),
    )
    .unwrap();
    let out = env
        .sweep()
        .job(&job)
        .args([
            "--param",
            "fs=ext4",
            "--device",
            dev.path(),
            "--destructive",
            "--yes",
        ])
        .duration("1s")
        .warmup("0s")
        .out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("mkfs.ext4"), "{stderr}");
    assert!(stderr.contains("is blank again"), "{stderr}");
    // The data set was made on the point's file system, not at the job's target.
    assert!(!elsewhere.exists(), "{stderr}");
    assert_eq!(signatures(&dev), "");
}

#[test]
fn a_refusal_after_the_first_mkfs_is_a_failure_and_leaves_the_device_blank() {
    let env = Env::new();
    // 2 MiB: the 1 MiB data set is within 80 % of the device, but ext4's own metadata
    // leaves less than that free: found only once the file system is made and mounted.
    let Some(dev) = blank_device(&env, 2 << 20) else {
        return;
    };
    let out = sweep(
        &env,
        "read-iops",
        &dev,
        &["--param", "fs=ext4", "--size", "1M", "--files", "1"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The device was written: not "bad input, nothing written" (2), a failure (1).
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("mkfs.ext4"), "{stderr}");
    assert!(stderr.contains("does not fit"), "{stderr}");
    assert!(stderr.contains("is blank again"), "{stderr}");
    assert_eq!(signatures(&dev), "");
    assert!(
        dev.read_all().iter().all(|&b| b == 0),
        "the device is zeroed"
    );
}

#[test]
fn a_device_that_is_no_block_device_is_bad_input() {
    let env = Env::new();
    if !crate::util::is_root() {
        return skip("a file system sweep needs root");
    }
    let image = env.join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let dir = env.join("dir");
    std::fs::create_dir(&dir).unwrap();
    for (device, words) in [
        (
            image.to_str().unwrap(),
            &["--device", "regular file", "losetup"][..],
        ),
        (dir.to_str().unwrap(), &["--device", "directory"]),
        ("/dev/null", &["--device", "character device"]),
        ("no-such-device", &["--device", "no such device"]),
    ] {
        env.sweep()
            .arg("read-iops")
            .args([
                "--param",
                "fs=ext4",
                "--device",
                device,
                "--destructive",
                "--yes",
            ])
            .size("16M")
            .refused_leaving_nothing(words);
    }
    let image = std::fs::read(&image).unwrap();
    assert!(image.iter().all(|&b| b == 0), "the image was written");
}

/// Unmounts a test's bind mount when dropped (even when the test fails).
struct Bound(std::path::PathBuf);

impl Drop for Bound {
    fn drop(&mut self) {
        let p = self.0.to_str().unwrap();
        if !sh("umount", &[p]) {
            sh("umount", &["-l", p]);
        }
    }
}

#[test]
fn a_device_someone_else_mounts_during_a_point_is_left_alone() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 64 << 20) else {
        return;
    };
    let mut child = env
        .sweep()
        .arg("read-iops")
        .args([
            "--param",
            "fs=ext4,ext2",
            "--device",
            dev.path(),
            "--destructive",
            "--yes",
        ])
        .size("16M")
        .sessions(1)
        .duration("3s")
        .warmup("0s")
        .process()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first point's mount, seen in the mount table.
    let source = format!(" {} ", dev.path());
    let t0 = std::time::Instant::now();
    let place = loop {
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let found = table
            .lines()
            .find(|l| l.contains("dbio-sweep-fs-") && l.contains(&source))
            .and_then(|l| l.split(' ').nth(4).map(str::to_string));
        if let Some(p) = found {
            break p;
        }
        if t0.elapsed().as_secs() > 30 || child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!("no mount: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    // Someone else mounts it too (a second mount of the same file system).
    let theirs = env.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    assert!(
        sh("mount", &["--bind", &place, theirs.to_str().unwrap()]),
        "mount --bind {place}"
    );
    let _bound = Bound(theirs.clone());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is mounted"), "{stderr}");
    assert!(stderr.contains("writes nothing more"), "{stderr}");
    // No second mkfs, no erase: their mount still holds the first point's file system.
    assert_eq!(stderr.matches("dbio: mkfs.").count(), 1, "{stderr}");
    assert!(!stderr.contains("blank again"), "{stderr}");
    assert!(signatures(&dev).contains("ext4"), "{stderr}");
    assert!(theirs.join("dbio-data").is_dir(), "{stderr}");
    // dbio's own mount point is gone.
    assert!(!Path::new(&place).exists(), "{stderr}");
}
