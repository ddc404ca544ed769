//! `dbio sweep --param fs=... --device DEV --destructive`: one point per file system made on
//! a loop device, nothing left mounted, the device blank again, and every refusal before
//! anything is written.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use crate::util::{Env, Loop, Mount, is_root, read_json, sh, skip};

/// A blank loop device of `bytes` for a file system sweep, with the tools the sweep and its
/// tests need; None (through `skip`) without them.
pub(crate) fn blank_device(env: &Env, bytes: u64) -> Option<Loop> {
    for tool in ["mkfs.ext4", "mkfs.xfs", "wipefs", "blockdev"] {
        let found = ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
            .iter()
            .any(|d| Path::new(d).join(tool).exists());
        if !found {
            skip(&format!("no {tool} (.ci/install-deps installs it)"));
            return None;
        }
    }
    Loop::blank(env.path(), "disk.img", bytes)
}

/// The signatures `wipefs` lists on the device (none on a blank one).
pub(crate) fn signatures(dev: &Loop) -> String {
    let out = std::process::Command::new("wipefs")
        .args(["--noheadings", dev.path()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// What the sweep of process `pid` could have left: mounts and directories of its private
/// mount point.
pub(crate) fn leftovers(pid: u32) -> Vec<String> {
    let prefix = format!("dbio-sweep-fs-{pid}-");
    let mut found: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.contains(&prefix))
        .map(str::to_string)
        .collect();
    for dir in [PathBuf::from("/run"), std::env::temp_dir()] {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            found.extend(
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| n.starts_with(&prefix)),
            );
        }
    }
    found
}

/// `dbio sweep read-iops --param PARAM --device DEV --destructive --yes` on a 32 MiB data
/// set, as a command.
fn fs_sweep(env: &Env, dev: &Loop, param: &str, duration: &str) -> std::process::Command {
    env.sweep()
        .arg("read-iops")
        .param(param)
        .arg("--device")
        .arg(dev.path())
        .destructive()
        .yes()
        .size("32M")
        .sessions(2)
        .duration(duration)
        .warmup("0s")
        .process()
}

/// Runs the sweep to the end: its output and its process id.
fn sweep(env: &Env, dev: &Loop, param: &str, duration: &str) -> (Output, u32) {
    let child = fs_sweep(env, dev, param, duration)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (child.wait_with_output().unwrap(), pid)
}

#[test]
fn each_file_system_is_made_measured_and_the_device_left_blank() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 384 << 20) else {
        return;
    };
    let (out, pid) = sweep(&env, &dev, "fs=ext4,xfs,ext4:data=writeback", "1s");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("is blank again"), "{stderr}");
    assert_eq!(leftovers(pid), Vec::<String>::new(), "nothing left mounted");
    assert_eq!(signatures(&dev), "", "no file system signature left");
    let dirs: Vec<PathBuf> = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_sweep_read-iops_fs"))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let s = read_json(&dirs[0].join("sweep.json"));
    assert_eq!(s["complete"], true, "{s}");
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "{s}");
    for (p, (kind, option)) in
        points
            .iter()
            .zip([("ext4", ""), ("xfs", ""), ("ext4", "data=writeback")])
    {
        let fs = p["file_system"].as_str().unwrap();
        assert!(fs.starts_with(&format!("{kind} ")), "{fs}");
        assert!(fs.contains("nosuid") && fs.contains("noexec"), "{fs}");
        assert!(fs.contains(option), "{fs}");
        // The point's own result saw its file system under the data set.
        let r = read_json(
            &dirs[0]
                .join(p["run_dir"].as_str().unwrap())
                .join("result.json"),
        );
        assert!(
            r["storage"].to_string().contains(&format!("\"{kind}\"")),
            "{kind}: {}",
            r["storage"]
        );
        assert!(p["iops"].as_f64().unwrap() > 0.0, "{p}");
    }
    // The data sets went with their file systems: the store lists none.
    let doctor = env.doctor().stdout();
    assert!(!doctor.contains("dbio-sweep-fs-"), "{doctor}");
    // The device is blank by dbio's own checks too: the next sweep accepts it.
    let (again, _) = sweep(&env, &dev, "fs=ext2", "1s");
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    assert_eq!(signatures(&dev), "");
}

#[test]
fn ctrl_c_mid_sweep_leaves_nothing_mounted_and_the_device_blank() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 384 << 20) else {
        return;
    };
    let out = interrupted(&env, &dev, 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(signatures(&dev), "", "{stderr}");
    assert!(stderr.contains("is blank again"), "{stderr}");
}

/// A refused file system sweep: exit 2 with `words`, nothing written to the device (its
/// bytes unchanged), nothing mounted, nothing made.
fn refused(env: &Env, dev: &Loop, extra: &[&str], words: &[&str]) {
    let before = dev.read_all();
    env.sweep()
        .arg("read-iops")
        .args(extra)
        .size("32M")
        .refused_leaving_nothing(words);
    assert!(dev.read_all() == before, "{extra:?} changed the device");
}

#[test]
fn a_file_system_sweep_is_refused_before_anything_is_written() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 64 << 20) else {
        return;
    };
    let d = dev.path();
    refused(
        &env,
        &dev,
        &["--param", "fs=ext4"],
        &["--param fs", "--device"],
    );
    refused(
        &env,
        &dev,
        &["--param", "sessions=1,2", "--device", d],
        &["--device", "--param fs"],
    );
    refused(
        &env,
        &dev,
        &["--param", "fs=ext4", "--device", d, "--target", "ds"],
        &["--target"],
    );
    refused(
        &env,
        &dev,
        &["--param", "fs=ext4", "--device", d],
        &["--device", "--destructive"],
    );
    refused(
        &env,
        &dev,
        &[
            "--param",
            "fs=ext4,zfs",
            "--device",
            d,
            "--destructive",
            "--yes",
        ],
        &["zfs", "ext2, ext3, ext4, xfs, btrfs"],
    );
    refused(
        &env,
        &dev,
        &[
            "--param",
            "fs=ext4:ro",
            "--device",
            d,
            "--destructive",
            "--yes",
        ],
        &["ro"],
    );
    refused(
        &env,
        &dev,
        &[
            "--param",
            "fs=ext4:data=x;y",
            "--device",
            d,
            "--destructive",
            "--yes",
        ],
        &["mount option"],
    );
    // A device node where others may replace it by the time mkfs is given its name.
    let node = env.join("node");
    let md = std::fs::metadata(d).unwrap();
    let made = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string; mknod makes a block device node with the loop's number.
    let rc = unsafe { libc::mknod(made.as_ptr(), libc::S_IFBLK | 0o600, md.rdev()) };
    assert_eq!(rc, 0, "mknod");
    std::fs::set_permissions(env.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let n = node.to_str().unwrap();
    refused(
        &env,
        &dev,
        &[
            "--param",
            "fs=ext4",
            "--device",
            n,
            "--destructive",
            "--yes",
        ],
        &["--device", "under /dev"],
    );
    std::fs::set_permissions(env.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::remove_file(&node).unwrap();
    // Not confirmed: stdin is no terminal and --yes is missing.
    refused(
        &env,
        &dev,
        &["--param", "fs=ext4", "--device", d, "--destructive"],
        &["--yes"],
    );
    // A file system that cannot be made on a device this small (xfs: 300 MiB), before the
    // first point: ext4 would have fitted.
    refused(
        &env,
        &dev,
        &[
            "--param",
            "fs=ext4,xfs",
            "--device",
            d,
            "--destructive",
            "--yes",
        ],
        &["xfs", "300.0 MiB", "64.0 MiB"],
    );
    // A data set larger than a file system on the device can hold.
    env.sweep()
        .arg("read-iops")
        .args([
            "--param",
            "fs=ext4",
            "--device",
            d,
            "--destructive",
            "--yes",
        ])
        .size("128M")
        .refused_leaving_nothing(&["--size", "64.0 MiB"]);
    assert_eq!(signatures(&dev), "");
}

#[test]
fn a_device_that_is_mounted_or_holds_a_file_system_is_left_alone() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 64 << 20) else {
        return;
    };
    let d = dev.path().to_string();
    assert!(sh("mkfs.ext4", &["-q", "-F", &d]));
    let args = [
        "--param",
        "fs=ext4",
        "--device",
        &d,
        "--destructive",
        "--yes",
    ];
    // Someone's file system, not mounted: its signature is named, nothing changes.
    refused(&env, &dev, &args, &["ext2/3/4", "wipefs"]);
    // Mounted: refused, and still mounted afterwards.
    let Some(mount) = Mount::new("ext4", "rw", &d, &env.join("mnt")) else {
        return;
    };
    std::fs::write(mount.0.join("theirs"), b"keep").unwrap();
    env.sweep()
        .arg("read-iops")
        .args(args)
        .size("16M")
        .refused(&["mounted"]);
    assert_eq!(std::fs::read(mount.0.join("theirs")).unwrap(), b"keep");
    drop(mount);
    assert!(signatures(&dev).contains("ext4"), "their file system stays");
}

#[test]
fn a_mount_option_the_file_system_rejects_stops_the_sweep_leaving_the_device_blank() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 384 << 20) else {
        return;
    };
    let (out, pid) = sweep(&env, &dev, "fs=ext4,xfs:data=writeback", "1s");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot mount xfs (data=writeback)"),
        "{stderr}"
    );
    assert_eq!(leftovers(pid), Vec::<String>::new());
    assert_eq!(signatures(&dev), "");
}

#[test]
fn without_root_a_file_system_sweep_is_refused() {
    if !is_root() {
        return skip("needs root to drop privileges to nobody");
    }
    let env = Env::new();
    let Some(dev) = blank_device(&env, 64 << 20) else {
        return;
    };
    let before = dev.read_all();
    // A store of nobody's own (one it may not write is refused first, as bad input too).
    let store = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(store.path(), Some(65534), Some(65534)).unwrap();
    let db = store.path().join("dbio.db");
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(assert_cmd::cargo::cargo_bin("dbio"))
        .arg("--db")
        .arg(&db)
        .args(["sweep", "read-iops"])
        .args(["--param", "fs=ext4", "--device", dev.path()])
        .args([
            "--destructive",
            "--yes",
            "--size",
            "16M",
            "--out",
            "/nonexistent",
        ])
        .current_dir("/")
        .output();
    let Ok(out) = out else {
        return skip("no setpriv");
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("only root"), "{stderr}");
    assert!(dev.read_all() == before);
}

/// Starts a 30 s file system sweep of ext4 then xfs and waits until its first file system
/// is mounted; the child and its process id.
fn mounted_sweep(env: &Env, dev: &Loop) -> (std::process::Child, u32) {
    let mut child = fs_sweep(env, dev, "fs=ext4,xfs", "30s")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let t0 = std::time::Instant::now();
    while !leftovers(pid).iter().any(|l| l.contains(" ext4 ")) {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            panic!(
                "the sweep ended before it mounted ext4: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert!(t0.elapsed().as_secs() < 60, "the sweep never mounted ext4");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1000));
    (child, pid)
}

/// A sweep stopped by `ctrl_c` SIGINTs once its first file system is mounted: it exits 130
/// and leaves nothing mounted, no mount point. Its output.
fn interrupted(env: &Env, dev: &Loop, ctrl_c: usize) -> Output {
    let (child, pid) = mounted_sweep(env, dev);
    for _ in 0..ctrl_c {
        // SAFETY: kill has no memory preconditions; the child is ours and still running.
        unsafe { libc::kill(pid as i32, libc::SIGINT) };
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert_eq!(leftovers(pid), Vec::<String>::new(), "{stderr}");
    out
}

/// The mount point of sweep `pid` (under /run or the temporary directory).
fn place_of(pid: u32) -> PathBuf {
    let prefix = format!("dbio-sweep-fs-{pid}-");
    [PathBuf::from("/run"), std::env::temp_dir()]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|rd| rd.flatten())
        .find(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .expect("the sweep's mount point")
}

#[test]
fn a_second_ctrl_c_detaches_the_mount_at_once() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 384 << 20) else {
        return;
    };
    let out = interrupted(&env, &dev, 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Either the first Ctrl-C finished the job, or the second detached the mount and
    // said what is left on the device.
    let blank = signatures(&dev).is_empty();
    assert!(
        (blank && stderr.contains("is blank again")) || stderr.contains("`wipefs -a` it"),
        "{stderr}"
    );
}

/// `cmd` run by `program` with `first` arguments before it (`nsenter -t PID -m --`): the
/// same arguments, environment and directory.
fn wrapped(program: &str, first: &[&str], cmd: &std::process::Command) -> std::process::Command {
    let mut c = std::process::Command::new(program);
    c.args(first).arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        c.current_dir(d);
    }
    c
}

/// A process holding a mount namespace of its own (`unshare --mount`, private
/// propagation): what is mounted in it is seen by no other test, and goes when it is
/// killed (when dropped).
struct Namespace(std::process::Child);

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn doctor_names_what_a_killed_file_system_sweep_left_mounted() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 384 << 20) else {
        return;
    };
    // The sweep runs in a mount namespace of its own, so that what it leaves mounted is
    // seen by this test's doctor only (other tests' doctors look at the whole host).
    let sweep = env
        .sweep()
        .arg("read-iops")
        .param("fs=ext4")
        .arg("--device")
        .arg(dev.path())
        .destructive()
        .yes()
        .size("32M")
        .sessions(2)
        .duration("60s")
        .warmup("0s")
        .process();
    // The shell says "ended" when the sweep ends before it is killed (a refusal). The new
    // namespace starts with a copy of every mount of the host, other tests' loop devices
    // among them: a copy would keep such a file system alive after its test unmounts it
    // (its device busy for the next mkfs), so the copies are let go of first.
    let script = "for m in $(awk '$1 ~ /^\\/dev\\/loop/ {print $2}' /proc/self/mounts); do umount -l \"$m\"; done; \
                  \"$@\" >/dev/null 2>ns-stderr; echo ended >ns-ended; exec sleep 300";
    let unshare = [
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        "sh",
    ];
    let Ok(child) = wrapped("unshare", &unshare, &sweep).spawn() else {
        return skip("no unshare");
    };
    let ns = Namespace(child);
    let holder = ns.0.id();
    let mountinfo = || std::fs::read_to_string(format!("/proc/{holder}/mountinfo")).unwrap();
    let t0 = std::time::Instant::now();
    let pid = loop {
        assert!(
            !env.join("ns-ended").exists(),
            "the sweep ended before it mounted: {}",
            std::fs::read_to_string(env.join("ns-stderr")).unwrap_or_default()
        );
        let children = std::fs::read_to_string(format!("/proc/{holder}/task/{holder}/children"))
            .unwrap_or_default();
        let pid = children
            .split_whitespace()
            .next()
            .map(|p| p.parse::<u32>().unwrap());
        if let Some(pid) = pid
            && mountinfo().contains(&format!("dbio-sweep-fs-{pid}-"))
            && mountinfo().contains(" ext4 ")
        {
            break pid;
        }
        assert!(t0.elapsed().as_secs() < 60, "the sweep never mounted ext4");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::thread::sleep(std::time::Duration::from_millis(1000));
    // SAFETY: kill has no memory preconditions; the sweep is our child's child.
    unsafe { libc::kill(pid as i32, libc::SIGKILL) };
    let t0 = std::time::Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(t0.elapsed().as_secs() < 10, "the sweep did not die");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let h = holder.to_string();
    let inside = ["-t", h.as_str(), "-m", "--"];
    let out = wrapped("nsenter", &inside, &env.doctor().process())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let place = place_of(pid);
    let p = place.to_str().unwrap();
    assert!(
        text.contains(&format!("{p} (ext4 from {})", dev.path())),
        "{text}"
    );
    assert!(text.contains("unmount it twice"), "{text}");
    // As the advice says: unmount twice (io_uring lets go of the files a moment after
    // the process is gone), remove the directory, erase the device.
    for _ in 0..2 {
        let t0 = std::time::Instant::now();
        while !in_namespace(holder, "umount", &[p]) {
            assert!(t0.elapsed().as_secs() < 10, "cannot unmount {p}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
    std::fs::remove_dir(&place).unwrap();
    assert!(sh("wipefs", &["-a", dev.path()]));
    let out = wrapped("nsenter", &inside, &env.doctor().process())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("Mounts"),
        "nothing left once cleaned: {text}"
    );
    drop(ns);
}

/// Runs `program ARGS` in the mount namespace held by process `holder`; true on success.
fn in_namespace(holder: u32, program: &str, args: &[&str]) -> bool {
    std::process::Command::new("nsenter")
        .args(["-t", &holder.to_string(), "-m", "--", program])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// On a terminal the sweep says what it will do to the device and asks; anything but `yes`
/// leaves the device as it was.
#[test]
fn on_a_terminal_the_sweep_asks_and_no_leaves_the_device_alone() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 64 << 20) else {
        return;
    };
    let before = dev.read_all();
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_dbio"));
    c.args([
        "sweep",
        "read-iops",
        "--param",
        "fs=ext4",
        "--device",
        dev.path(),
    ])
    .args(["--destructive", "--size", "16M"])
    .current_dir(env.path())
    .env("XDG_DATA_HOME", env.data_home.path())
    .env("TERM", "xterm")
    .env_remove("DBIO_DB");
    let mut p = rexpect::session::spawn_command(c, Some(60_000)).expect("dbio on a pty");
    p.exp_string("each point makes its file system on").unwrap();
    p.exp_string("left as it was found, blank").unwrap();
    p.exp_string("Type 'yes' to continue: ").unwrap();
    p.send("no\r").unwrap();
    p.flush().unwrap();
    p.exp_string("not confirmed; nothing written to").unwrap();
    p.exp_eof().unwrap();
    match p.process().wait().unwrap() {
        rexpect::process::WaitStatus::Exited(_, code) => assert_eq!(code, 2),
        other => panic!("{other:?}"),
    }
    assert!(dev.read_all() == before, "the device changed");
    assert_eq!(signatures(&dev), "");
    assert!(!env.join("dbio-runs").exists(), "no sweep directory");
}

/// A mount namespace made while the first point's ext4 is mounted (a service started with a
/// private /tmp, `unshare -m`) holds a copy of it. The sweep takes its mount point away
/// between points, which lets go of that copy, so the next point's mkfs finds the device
/// free (it failed with "Device or resource busy"), and the device is blank at the end.
#[test]
fn a_namespace_made_during_a_point_does_not_keep_the_device_from_the_next() {
    let env = Env::new();
    let Some(dev) = blank_device(&env, 384 << 20) else {
        return;
    };
    let mut child = crate::util::Killed(
        fs_sweep(&env, &dev, "fs=ext4,xfs", "3s")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let pid = child.id();
    let t0 = std::time::Instant::now();
    while !leftovers(pid).iter().any(|l| l.contains(" ext4 ")) {
        assert!(t0.elapsed().as_secs() < 60, "the sweep never mounted ext4");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The new namespace lets go at once of its copies of every other loop device's mount
    // (other tests' file systems), keeping only this sweep's.
    let script = format!(
        "for m in $(awk '$1 ~ /^\\/dev\\/loop/ && $2 !~ /dbio-sweep-fs-{pid}-/ {{print $2}}' /proc/self/mounts); do umount -l \"$m\"; done; \
         echo ready >ns-ready; exec sleep 300"
    );
    let Ok(ns) = std::process::Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .current_dir(env.path())
        .spawn()
    else {
        return skip("no unshare");
    };
    let ns = Namespace(ns);
    let holder = ns.0.id();
    let mountinfo = || std::fs::read_to_string(format!("/proc/{holder}/mountinfo")).unwrap();
    while !env.join("ns-ready").exists() {
        assert!(t0.elapsed().as_secs() < 60, "the namespace never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        mountinfo().contains(&format!("dbio-sweep-fs-{pid}-")),
        "the namespace holds a copy of the sweep's ext4"
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("fs=xfs") && stderr.contains("is blank again"),
        "{stderr}"
    );
    assert!(signatures(&dev).is_empty(), "{stderr}");
    assert!(
        !mountinfo().contains(&format!("dbio-sweep-fs-{pid}-")),
        "the copy is let go of"
    );
    drop(ns);
}
