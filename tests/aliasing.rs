//! A write test never overwrites bytes another device maps while that device is in use: a
//! second loop device over the image of a mounted one (at any offset that overlaps), a loop
//! device over a mounted device, a device or backing file a program only has mapped (mmap),
//! a device whose file system starts at an offset;
//! and `--destructive` means a block device, nothing else. Root and loop devices are needed
//! (through `util::Loop`); elsewhere the tests say why they were skipped (and fail under `DBIO_TESTS_STRICT=1`).

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::util::{Dbio, Env, Loop, Mount, files_under, sh, skip};

const MIB: u64 = 1 << 20;

/// A second loop device over `image` with `losetup` options (`-o`, `--sizelimit`), once
/// loop devices are known to work here (a `Loop` was made): failing now is a failure.
fn attach(image: &Path, opts: &[&str]) -> Loop {
    let _one = crate::util::LOSETUP
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let out = std::process::Command::new("losetup")
        .args(["--find", "--show"])
        .args(opts)
        .arg(image)
        .output()
        .expect("losetup");
    assert!(
        out.status.success(),
        "losetup {opts:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Loop::attached(
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()),
        image,
    )
}

/// A 1-second write-iops on `dev` with --destructive --yes.
fn destroy<'e>(env: &'e Env, dev: &str) -> Dbio<'e> {
    env.run("write-iops")
        .target(dev)
        .destructive()
        .yes()
        .sessions(2)
        .duration("1s")
        .warmup("0s")
        .arg("--json")
}

pub(crate) fn sha256(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum");
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// An ext4 made on `dev` with every table written now (no lazy initialisation that would
/// change the image later behind the test's back); false when there is no mkfs.ext4.
pub(crate) fn mkfs_ext4(dev: &str) -> bool {
    let ok = sh(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            dev,
        ],
    );
    if !ok {
        skip("no mkfs.ext4");
    }
    ok
}

fn blank_image(env: &Env, name: &str, size: u64) -> PathBuf {
    let image = env.join(name);
    std::fs::File::create(&image)
        .unwrap()
        .set_len(size)
        .unwrap();
    image
}

/// The reported attack: an ext4 at 1 MiB of an image (`losetup -o 1M`) is mounted, and a
/// second loop device over the same image — at offset 0 (no signature at its start, no
/// holder, not mounted itself), or at the same offset — is given to a write test.
#[test]
fn a_second_loop_over_the_image_of_a_mounted_loop_is_refused() {
    let env = Env::new();
    let image = blank_image(&env, "image.img", 64 * MIB);
    let Some(b) = Loop::new(&image, None) else {
        return;
    };
    let a = attach(&image, &["-o", "1048576"]);
    if !mkfs_ext4(a.path()) {
        return;
    }
    let mnt = env.join("mnt");
    let Some(_mounted) = Mount::new("ext4", "rw,noatime", a.path(), &mnt) else {
        return;
    };
    let data: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 253) as u8).collect();
    std::fs::write(mnt.join("customer.dbf"), &data).unwrap();
    assert!(sh("sync", &[]));
    let (image_sha, file_sha) = (sha256(&image), sha256(&mnt.join("customer.dbf")));
    let c = attach(&image, &["-o", "1048576"]);
    for dev in [&b, &c] {
        destroy(&env, dev.path()).refused(&[
            dev.path(),
            "same backing file",
            "image.img",
            &format!("as {}", a.path()),
            &format!("is mounted at {}", mnt.display()),
        ]);
    }
    assert_eq!(sha256(&image), image_sha, "the image is unchanged");
    assert_eq!(sha256(&mnt.join("customer.dbf")), file_sha);
    assert_eq!(std::fs::read(mnt.join("customer.dbf")).unwrap(), data);
}

/// The other device is not mounted but open in a program (a database on a raw device):
/// refused while it is open, written once it is closed (an idle alias is nobody's data).
#[test]
fn a_second_loop_over_the_image_of_a_loop_open_in_a_program_is_refused() {
    let env = Env::new();
    let image = blank_image(&env, "raw.img", 16 * MIB);
    let Some(a) = Loop::new(&image, None) else {
        return;
    };
    let b = attach(&image, &[]);
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&a.dev)
        .unwrap();
    destroy(&env, b.path()).size("8M").refused(&[
        &format!("as {}", a.path()),
        &format!("is open in process {}", std::process::id()),
    ]);
    assert!(
        std::fs::read(&image).unwrap().iter().all(|&x| x == 0),
        "nothing written"
    );
    drop(held);
    let out = destroy(&env, b.path()).size("8M").out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read(&image).unwrap().iter().any(|&x| x != 0),
        "written once nothing else uses the bytes"
    );
}

/// Loop devices over ranges of one file that do not overlap are different storage: the
/// one past a mounted one's size limit may be written, and only within its range; one
/// whose range reaches into the mounted one's by a single MiB is refused.
#[test]
fn a_loop_over_a_range_another_loop_does_not_map_is_allowed_and_an_overlapping_one_is_not() {
    let env = Env::new();
    let image = blank_image(&env, "shared.img", 64 * MIB);
    // Loop devices work here: an idle one over the whole image (an alias nobody uses).
    let Some(_idle) = Loop::new(&image, None) else {
        return;
    };
    let a = attach(&image, &["-o", "1048576", "--sizelimit", "16777216"]);
    if !mkfs_ext4(a.path()) {
        return;
    }
    let mnt = env.join("mnt");
    let Some(_mounted) = Mount::new("ext4", "rw,noatime", a.path(), &mnt) else {
        return;
    };
    std::fs::write(mnt.join("f"), b"in the file system").unwrap();
    assert!(sh("sync", &[]));
    let head = |n: u64| {
        let f = std::fs::File::open(&image).unwrap();
        let mut b = vec![0u8; n as usize];
        f.read_exact_at(&mut b, 0).unwrap();
        b
    };
    let before = head(32 * MIB);
    // 16 MiB .. 24 MiB: the last MiB of the mounted range (1 MiB .. 17 MiB) is in it.
    let overlapping = attach(&image, &["-o", "16777216", "--sizelimit", "8388608"]);
    destroy(&env, overlapping.path()).refused(&[
        &format!("as {}", a.path()),
        "bytes 16.0 MiB..17.0 MiB",
        "is mounted",
    ]);
    drop(overlapping);
    let past = attach(&image, &["-o", "33554432"]);
    let out = destroy(&env, past.path()).size("8M").out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(head(32 * MIB) == before, "the first 32 MiB are unchanged");
    assert_eq!(std::fs::read(mnt.join("f")).unwrap(), b"in the file system");
    let f = std::fs::File::open(&image).unwrap();
    let mut written = vec![0u8; 8 << 20];
    f.read_exact_at(&mut written, 32 * MIB).unwrap();
    assert!(written.iter().any(|&x| x != 0), "the run wrote its range");
}

/// A file system where a partition would start, on a device with no partition table
/// (an ext4 image copied in at 1 MiB, or at sector 63), nothing mounted: still data.
#[test]
fn a_file_system_at_a_partition_start_of_an_unpartitioned_device_is_refused() {
    let env = Env::new();
    let fs = blank_image(&env, "fs.img", 8 * MIB);
    if !mkfs_ext4(fs.to_str().unwrap()) {
        return;
    }
    let fs_bytes = std::fs::read(&fs).unwrap();
    for (offset, words) in [
        (MIB, ["ext2/3/4", "at byte 1048576"]),
        (32256, ["ext2/3/4", "at byte 32256"]),
    ] {
        let image = blank_image(&env, &format!("at{offset}.img"), 32 * MIB);
        std::fs::File::options()
            .write(true)
            .open(&image)
            .unwrap()
            .write_all_at(&fs_bytes, offset)
            .unwrap();
        let Some(dev) = Loop::new(&image, None) else {
            return;
        };
        let before = dev.read_all();
        destroy(&env, dev.path()).refused(&[dev.path(), words[0], words[1]]);
        assert!(dev.read_all() == before, "the device is unchanged");
    }
}

/// `losetup /dev/loopC /dev/loopA` while loopA is mounted: loopC is loopA's bytes.
#[test]
fn a_loop_over_a_mounted_loop_is_refused() {
    let env = Env::new();
    let image = blank_image(&env, "lower.img", 32 * MIB);
    let Some(a) = Loop::new(&image, None) else {
        return;
    };
    if !mkfs_ext4(a.path()) {
        return;
    }
    let mnt = env.join("mnt");
    let Some(_mounted) = Mount::new("ext4", "rw,noatime", a.path(), &mnt) else {
        return;
    };
    assert!(sh("sync", &[]));
    let before = sha256(&image);
    let c = attach(&a.dev, &[]);
    destroy(&env, c.path()).refused(&[
        c.path(),
        &format!("as {}", a.path()),
        &format!("is mounted at {}", mnt.display()),
    ]);
    assert_eq!(sha256(&image), before, "the image is unchanged");
}

/// `--destructive` with a regular file, a directory or a path that does not exist as
/// `--target`: refused before anything is made.
#[test]
fn destructive_needs_an_existing_block_device() {
    let env = Env::new();
    std::fs::write(env.join("plain.dbf"), b"somebody's data").unwrap();
    std::fs::create_dir(env.join("dir")).unwrap();
    let before = files_under(env.path());
    for (target, kind) in [
        ("plain.dbf", "a regular file"),
        ("dir", "a directory"),
        ("missing", "does not exist"),
    ] {
        for test in ["write-iops", "read-iops"] {
            env.run(test)
                .target(target)
                .destructive()
                .yes()
                .size("8M")
                .duration("1s")
                .refused(&[
                    &format!("--target {target}"),
                    "with --destructive the target must be an existing block device",
                    kind,
                ]);
        }
    }
    assert_eq!(files_under(env.path()), before, "nothing created");
    assert_eq!(
        std::fs::read(env.join("plain.dbf")).unwrap(),
        b"somebody's data"
    );
    assert!(!env.join("missing").exists());
    assert!(files_under(env.data_home.path()).is_empty(), "no store");
}

/// `len` bytes of a file or device mapped shared into this process (as a program that
/// mmaps and then closes its descriptor), unmapped when dropped. This process is not
/// dbio's, so dbio sees a user holding the bytes through the mapping alone.
struct Mapped {
    addr: *mut libc::c_void,
    len: usize,
}

impl Mapped {
    fn new(path: &Path, len: usize) -> Mapped {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        // SAFETY: a valid descriptor; the kernel chooses the address; the mapping is only
        // unmapped in drop and never read or written through here.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        assert_ne!(addr, libc::MAP_FAILED, "mmap {}", path.display());
        drop(f); // only the mapping is left
        Mapped { addr, len }
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new, unmapped once.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

fn all_zero(path: &Path) -> bool {
    std::fs::read(path).unwrap().iter().all(|&x| x == 0)
}

/// A program that mapped a device or a file and closed its descriptor still uses the bytes:
/// another loop device over the same image (mapped), the image itself (mapped under a name
/// since deleted), and the loop device under a loop-over-loop target (mapped) each refuse
/// the write; with the mappings gone the same device is written.
#[test]
fn a_device_or_backing_file_only_mapped_by_a_program_is_in_use() {
    let env = Env::new();
    let image = blank_image(&env, "mapped.img", 16 * MIB);
    let Some(a) = Loop::new(&image, None) else {
        return;
    };
    let b = attach(&image, &["-o", "1048576"]);
    let c = attach(&a.dev, &[]);
    let me = format!("is mapped by process {}", std::process::id());
    {
        let _m = Mapped::new(&b.dev, MIB as usize);
        destroy(&env, a.path()).size("8M").refused(&[
            a.path(),
            "same backing file",
            &format!("as {}", b.path()),
            &me,
        ]);
        assert!(all_zero(&image), "nothing written");
    }
    {
        // Through a second name for the image, deleted once mapped: /proc/PID/maps shows
        // "(deleted)" and only the file's device and inode tell it is the image.
        let link = env.join("link.img");
        std::fs::hard_link(&image, &link).unwrap();
        let _m = Mapped::new(&link, MIB as usize);
        std::fs::remove_file(&link).unwrap();
        destroy(&env, a.path()).size("8M").refused(&[
            a.path(),
            "its backing file",
            "mapped.img",
            &me,
        ]);
        assert!(all_zero(&image), "nothing written");
    }
    {
        let _m = Mapped::new(&a.dev, MIB as usize);
        destroy(&env, c.path())
            .size("8M")
            .refused(&[c.path(), &format!("as {}", a.path()), &me]);
        assert!(all_zero(&image), "nothing written");
    }
    let out = destroy(&env, a.path()).size("8M").out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all_zero(&image), "written once nothing maps the bytes");
}

/// `mkfs.ext4 -E offset=4194304`: a file system 4 MiB into a device with a blank start (no
/// partition table, not at a usual partition start) is still somebody's data.
#[test]
fn a_file_system_at_any_offset_of_an_unpartitioned_device_is_refused() {
    let env = Env::new();
    let image = blank_image(&env, "offset.img", 32 * MIB);
    let img = image.to_str().unwrap();
    if !sh(
        "mkfs.ext4",
        &["-q", "-F", "-E", "offset=4194304", img, "16M"],
    ) {
        return skip("no mkfs.ext4");
    }
    let Some(dev) = Loop::new(&image, None) else {
        return;
    };
    let before = sha256(&image);
    destroy(&env, dev.path()).refused(&[
        dev.path(),
        "ext2/3/4",
        "at byte 4194304",
        "4.0 MiB into the device",
    ]);
    assert_eq!(sha256(&image), before, "the device is unchanged");
}
