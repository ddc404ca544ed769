//! A device is the same device at every step: a loop device detached and attached to
//! another file, moved within its file (offset, size limit, capacity), a partition resized,
//! a symlink re-pointed — each between two steps of one command — stops the command with
//! exit 1 and the change in words, and nothing further is written: no `mkfs`, no point's
//! writes, no preconditioning pass, no final erase. The other file's bytes are unchanged.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::aliasing::sha256;
use crate::fs_sweep::leftovers;
use crate::util::{Env, Loop, sh, skip};

const MIB: u64 = 1 << 20;

/// The kernel's `struct loop_info64` (linux/loop.h).
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// Changes the loop device `dev` in place (LOOP_GET_STATUS64, `change`, LOOP_SET_STATUS64),
/// as root can while it is open and in use. Whether the kernel took it.
fn set_status(dev: &Loop, change: impl FnOnce(&mut LoopInfo64)) -> bool {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(&dev.dev).unwrap();
    // SAFETY: an all-zero loop_info64 is valid; the ioctl fills it.
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a struct of the size the ioctls read and write.
    unsafe {
        if libc::ioctl(f.as_raw_fd(), 0x4C05 as _, &mut info) != 0 {
            return false;
        }
        change(&mut info);
        libc::ioctl(f.as_raw_fd(), 0x4C04 as _, &info) == 0
    }
}

/// A dbio child whose stderr is read line by line as it comes.
struct Watched {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Watched {
    fn start(mut cmd: std::process::Command) -> Watched {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start dbio");
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        Watched {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (up to 60 s) for a line holding `text`; fails with what dbio said if it ends
    /// first.
    fn wait_for(&mut self, text: &str) {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(60) {
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(l) => {
                    let found = l.contains(text);
                    self.seen.push(l);
                    if found {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let _ = self.child.kill();
        panic!("no {text:?} from dbio:\n{}", self.seen.join("\n"));
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Its exit status and all it said.
    fn finish(mut self) -> (Option<i32>, String) {
        let status = self.child.wait().unwrap();
        self.seen.extend(self.lines.iter());
        (status.code(), self.seen.join("\n"))
    }
}

/// An image of `bytes` of patterned, signature-free content (a user's file): the file
/// another device is pointed at.
fn foreign_image(env: &Env, name: &str, bytes: u64) -> PathBuf {
    let path = env.join(name);
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut block = vec![0u8; 1 << 16];
    for _ in 0..bytes / block.len() as u64 {
        for b in block.chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b.copy_from_slice(&x.to_le_bytes());
        }
        f.write_all(&block).unwrap();
    }
    f.flush().unwrap();
    path
}

/// The signatures `wipefs` finds in an image file or on a device ("" when none).
fn wipefs(path: &Path) -> String {
    let out = std::process::Command::new("wipefs")
        .arg("--noheadings")
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A sweep of two write-iops points (sessions=1,2) over the block device `target`, each
/// overwriting it.
fn write_sweep(env: &Env, target: &str) -> std::process::Command {
    write_sweep_of(env, target, "1s")
}

/// [`write_sweep`] with points of `duration`.
fn write_sweep_of(env: &Env, target: &str, duration: &str) -> std::process::Command {
    env.sweep()
        .arg("write-iops")
        .param("sessions=1,2")
        .target(target)
        .destructive()
        .yes()
        .duration(duration)
        .warmup("0s")
        .process()
}

/// Detaches `dev` while the sweep holds it (the kernel detaches it once the last holder
/// lets go) and attaches `other` under the same name as soon as it is free, until the
/// sweep ends: what an attacker between two points does. It watches /sys, which opens
/// nothing (an open device is not detached).
fn detach_and_attach_until_done(w: &mut Watched, dev: &Loop, other: &Path) {
    assert!(dev.detach(), "losetup -d {}", dev.path());
    let name = dev.dev.file_name().unwrap().to_str().unwrap().to_string();
    let bound = Path::new("/sys/block").join(name).join("loop");
    while w.running() {
        if !bound.exists() && dev.attach_again(other) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_file_system_sweep_whose_loop_device_is_detached_for_another_file_makes_and_erases_nothing_more()
 {
    let env = Env::new();
    for tool in ["mkfs.ext4", "wipefs"] {
        if !["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
            .iter()
            .any(|d| Path::new(d).join(tool).exists())
        {
            return skip(&format!("no {tool} (.ci/install-deps installs it)"));
        }
    }
    let Some(dev) = Loop::blank(env.path(), "disk.img", 64 * MIB) else {
        return;
    };
    let b = foreign_image(&env, "b.img", 64 * MIB);
    let before = sha256(&b);
    let mut w = Watched::start(
        env.sweep()
            .arg("read-iops")
            .param("fs=ext4,ext4:noatime")
            .arg("--device")
            .arg(dev.path())
            .destructive()
            .yes()
            .size("16M")
            .sessions(1)
            .duration("2s")
            .warmup("0s")
            .process(),
    );
    let pid = w.child.id();
    // The first point runs on its file system.
    w.wait_for("dbio: data set:");
    detach_and_attach_until_done(&mut w, &dev, &b);
    let (code, stderr) = w.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("is no longer the device dbio claimed")
            && stderr.contains("someone detached it"),
        "{stderr}"
    );
    // No second mkfs, no erase: the other file is as it was, with no signature.
    assert_eq!(stderr.matches("dbio: mkfs.").count(), 1, "{stderr}");
    assert!(!stderr.contains("blank again"), "{stderr}");
    assert_eq!(sha256(&b), before, "{stderr}");
    assert_eq!(wipefs(&b), "", "{stderr}");
    assert_eq!(leftovers(pid), Vec::<String>::new(), "nothing left mounted");
    // What the sweep made stays where the claimed device's bytes are, and it says where
    // and how to erase it there.
    let a = env.join("disk.img");
    assert!(wipefs(&a).contains("ext4"), "{stderr}");
    assert!(
        stderr.contains(&format!("the backing file {}", a.display()))
            && stderr.contains("did not erase"),
        "{stderr}"
    );
}

#[test]
fn a_sweep_over_a_loop_device_detached_for_another_file_writes_no_further_point() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "a.img", 16 * MIB) else {
        return;
    };
    let b = foreign_image(&env, "b.img", 16 * MIB);
    let before = sha256(&b);
    let mut w = Watched::start(write_sweep(&env, dev.path()));
    w.wait_for("dbio: data set:");
    detach_and_attach_until_done(&mut w, &dev, &b);
    let (code, stderr) = w.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} is no longer the device dbio claimed",
            dev.path()
        )) && stderr.contains("someone detached it"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("dbio: data set:").count(), 1, "{stderr}");
    assert_eq!(sha256(&b), before, "{stderr}");
}

#[test]
fn a_loop_device_moved_within_its_file_or_resized_stops_the_next_point() {
    let env = Env::new();
    // Each change keeps the device within its file, so the first point runs unhurt.
    let grow = |dev: &Loop, image: &Path| {
        std::fs::OpenOptions::new()
            .write(true)
            .open(image)
            .unwrap()
            .set_len(24 * MIB)
            .unwrap();
        sh("losetup", &["--set-capacity", dev.path()])
    };
    type Change = dyn Fn(&Loop, &Path) -> bool;
    let changes: [(&str, &[&str], &Change, &str); 3] = [
        (
            "offset",
            &["--sizelimit", "16777216"],
            &|dev, _| set_status(dev, |i| i.lo_offset = MIB),
            "its offset in the backing file changed (0 → 1048576 bytes)",
        ),
        (
            "sizelimit",
            &["--sizelimit", "16777216"],
            &|dev, _| set_status(dev, |i| i.lo_sizelimit = 24 * MIB),
            "its size limit changed (16777216 bytes → 25165824 bytes)",
        ),
        (
            "capacity",
            &[],
            &grow,
            "its size changed (16777216 bytes, 16.0 MiB → 25165824 bytes, 24.0 MiB)",
        ),
    ];
    for (name, opts, change, words) in changes {
        // 32 MiB under a 16 MiB size limit; 16 MiB (grown later) without one.
        let image = env.join(&format!("{name}.img"));
        std::fs::File::create(&image)
            .unwrap()
            .set_len(if opts.is_empty() { 16 * MIB } else { 32 * MIB })
            .unwrap();
        let Some(dev) = Loop::with(&image, opts) else {
            return;
        };
        let mut w = Watched::start(write_sweep(&env, dev.path()));
        w.wait_for("dbio: data set:");
        assert!(change(&dev, &image), "{name}: the change was refused");
        let (code, stderr) = w.finish();
        assert_eq!(code, Some(1), "{name}: {stderr}");
        assert!(stderr.contains(words), "{name}: {stderr}");
        assert!(
            stderr.contains("the run stops and touches nothing further"),
            "{name}: {stderr}"
        );
        assert_eq!(
            stderr.matches("dbio: data set:").count(),
            1,
            "{name}: {stderr}"
        );
    }
}

#[test]
fn an_unchanged_device_is_claimed_again_at_every_point() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "a.img", 16 * MIB) else {
        return;
    };
    let link = env.join("db-disk");
    std::os::unix::fs::symlink(&dev.dev, &link).unwrap();
    let out = write_sweep(&env, link.to_str().unwrap()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stderr.matches("dbio: data set:").count(), 2, "{stderr}");
}

#[test]
fn a_target_symlink_pointed_at_another_device_between_points_is_not_followed() {
    let env = Env::new();
    let Some(a) = Loop::blank(env.path(), "a.img", 16 * MIB) else {
        return;
    };
    let b_image = foreign_image(&env, "b.img", 16 * MIB);
    let Some(b) = Loop::new(&b_image, None) else {
        return;
    };
    let before = sha256(&b_image);
    let link = env.join("db-disk");
    std::os::unix::fs::symlink(&a.dev, &link).unwrap();
    // Points of 4 s: the link is re-pointed while the first runs, even on a loaded machine
    // (with 1 s points, a test thread held up for a second re-pointed it after the second
    // point had begun, and the sweep ended 0 with nothing to catch).
    let mut w = Watched::start(write_sweep_of(&env, link.to_str().unwrap(), "4s"));
    w.wait_for("dbio: data set:");
    // Re-pointed in one step (a rename over the link).
    let next = env.join("db-disk.new");
    std::os::unix::fs::symlink(&b.dev, &next).unwrap();
    std::fs::rename(&next, &link).unwrap();
    let second_begun = w.seen.iter().any(|l| l.contains("point 2/2"));
    let (code, stderr) = w.finish();
    assert!(!second_begun, "re-pointed too late to test: {stderr}");
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "is no longer the device dbio claimed: its name now leads to the block device"
        ),
        "{stderr}"
    );
    assert_eq!(sha256(&b_image), before, "{stderr}");
}

/// A 32 MiB image with an MBR partition table: one Linux partition of `sectors` from
/// sector 2048.
fn partitioned_image(env: &Env, sectors: u32) -> PathBuf {
    let path = env.join("parted.img");
    let mut mbr = vec![0u8; 512];
    mbr[446 + 4] = 0x83;
    mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
    mbr[446 + 12..446 + 16].copy_from_slice(&sectors.to_le_bytes());
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(32 * MIB).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&f, &mbr, 0).unwrap();
    path
}

#[test]
fn a_partition_resized_between_points_stops_the_next_point() {
    let env = Env::new();
    for tool in ["partx", "resizepart"] {
        if !["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
            .iter()
            .any(|d| Path::new(d).join(tool).exists())
        {
            return skip(&format!(
                "no {tool} (util-linux; .ci/install-deps installs it)"
            ));
        }
    }
    let image = partitioned_image(&env, 16384);
    let Some(disk) = Loop::with(&image, &["--partscan"]) else {
        return;
    };
    // The kernel reads the table on attach; partx adds what it missed.
    let part = format!("{}p1", disk.path());
    if !Path::new(&part).exists() {
        sh("partx", &["--add", disk.path()]);
    }
    let t0 = Instant::now();
    while !Path::new(&part).exists() {
        assert!(t0.elapsed().as_secs() < 10, "no {part}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut w = Watched::start(write_sweep(&env, &part));
    w.wait_for("dbio: data set:");
    // Longer, from the same start: the first point's writes stay inside.
    assert!(
        sh("resizepart", &[disk.path(), "1", "20480"]),
        "resizepart {}",
        disk.path()
    );
    let (code, stderr) = w.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("its length changed (16384 → 20480 sectors)"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("dbio: data set:").count(), 1, "{stderr}");
}

#[test]
fn preconditioning_stops_at_the_next_pass_when_the_loop_device_moved_within_its_file() {
    let env = Env::new();
    let image = env.join("flash.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(32 * MIB)
        .unwrap();
    let Some(dev) = Loop::with(&image, &["--sizelimit", "16777216"]) else {
        return;
    };
    let mut w = Watched::start(
        env.cmd("precondition")
            .arg(dev.path())
            .args(["--passes", "100", "--destructive", "--yes"])
            .process(),
    );
    w.wait_for("dbio: pass 1 of 100");
    assert!(set_status(&dev, |i| i.lo_offset = MIB), "LOOP_SET_STATUS64");
    let (code, stderr) = w.finish();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("its offset in the backing file changed (0 → 1048576 bytes)"),
        "{stderr}"
    );
    assert!(!stderr.contains("pass 100 of 100"), "{stderr}");
}
