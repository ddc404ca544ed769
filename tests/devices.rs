//! SPEC §7.1 on real (loop) block devices: a write test overwrites a device only with
//! `--destructive`, confirmed, and never one that is mounted, in use or holds anything.
//! These need root and loop devices; elsewhere they are skipped through `util::skip`.

use std::os::unix::fs::OpenOptionsExt;

use crate::util::{Dbio, Env, Loop, Mount, event, sh, skip, u};

const MIB: u64 = 1 << 20;

/// A short `test` on `dev`, printing its result as JSON.
fn on_device<'e>(env: &'e Env, test: &str, dev: &str) -> Dbio<'e> {
    env.run(test)
        .target(dev)
        .sessions(2)
        .duration("1s")
        .warmup("0s")
        .arg("--json")
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_device_holding_ext4_is_refused_with_and_without_destructive() {
    let env = Env::new();
    let image = env.join("ext4.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 * MIB)
        .unwrap();
    if !sh("mkfs.ext4", &["-q", "-F", image.to_str().unwrap()]) {
        return skip("no mkfs.ext4");
    }
    let Some(dev) = Loop::new(&image, None) else {
        return;
    };
    let before = dev.read_all();
    for test in ["write-iops", "write-mbps"] {
        for extra in [&[][..], &["--destructive"], &["--destructive", "--yes"]] {
            on_device(&env, test, dev.path()).args(extra).refused(&[
                dev.path(),
                "ext2/3/4 file system",
                "wipefs",
            ]);
        }
    }
    assert!(dev.read_all() == before, "the device is unchanged");
    assert!(
        std::fs::read(&image).unwrap() == before,
        "the image is unchanged"
    );

    // Mounted: refused for that reason, and not a byte written.
    let _mounted = match Mount::new("ext4", "rw", dev.path(), &env.join("mnt")) {
        Some(m) => m,
        None => return,
    };
    on_device(&env, "write-iops", dev.path())
        .destructive()
        .yes()
        .refused(&["is mounted", "mnt"]);
}

#[test]
fn a_blank_device_is_written_with_destructive_yes_and_only_within_its_size() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "blank.img", 64 * MIB) else {
        return;
    };
    // Without --destructive: refused, naming what would be overwritten and the option.
    on_device(&env, "write-iops", dev.path()).refused(&[
        "--destructive",
        "64.0 MiB",
        "loop device backed by",
    ]);
    // --destructive, but nobody to ask (stdin is not a terminal, even if it says yes) and
    // no --yes: refused.
    on_device(&env, "write-iops", dev.path())
        .destructive()
        .stdin("yes\n")
        .refused(&["--yes", "not a terminal"]);
    // --size beyond the device: refused before anything is asked or written.
    on_device(&env, "write-mbps", dev.path())
        .destructive()
        .yes()
        .size("1G")
        .refused(&["--size 1G", "larger than"]);
    // Tests that need files of their own are not run on a device.
    on_device(&env, "redo", dev.path())
        .destructive()
        .yes()
        .refused(&["redo", "directory"]);
    assert!(
        dev.read_all().iter().all(|&b| b == 0),
        "nothing written yet"
    );

    for test in ["write-iops", "write-mbps"] {
        let out = on_device(&env, test, dev.path()).destructive().yes().out();
        assert!(out.status.success(), "{test}: {}", stderr(&out));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["dataset"]["kind"], "block_device");
        assert_eq!(u(&r["dataset"]["size_bytes"]), 64 * MIB);
        assert_eq!(r["config"]["destructive"], true);
        assert!(u(&event(&r)["requests"]) > 0, "{test}");
        assert!(
            stderr(&out).contains("--destructive --yes"),
            "it says what it overwrites"
        );
    }
    assert!(
        dev.read_all().iter().any(|&b| b != 0),
        "the device was written"
    );

    // --size limits the test to the first SIZE bytes: nothing beyond is touched.
    let Some(dev) = Loop::blank(env.path(), "blank2.img", 64 * MIB) else {
        return;
    };
    let out = on_device(&env, "write-iops", dev.path())
        .destructive()
        .yes()
        .size("16M")
        .out();
    assert!(out.status.success(), "{}", stderr(&out));
    let data = dev.read_all();
    assert!(data[..16 << 20].iter().any(|&b| b != 0));
    assert!(
        data[16 << 20..].iter().all(|&b| b == 0),
        "written beyond --size"
    );
    // No manifest or anything else of dbio's lands anywhere but the run directory.
    assert!(!env.join("dbio-data").exists());
}

#[test]
fn a_device_in_use_or_with_signatures_is_refused() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "busy.img", 32 * MIB) else {
        return;
    };
    // Held exclusively by someone else (here: this test), as a mount or RAID would.
    {
        let _held = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(&dev.dev)
            .unwrap();
        // Found by who has it open (a database holds raw devices open without O_EXCL).
        on_device(&env, "write-iops", dev.path())
            .destructive()
            .yes()
            .refused(&["in use", &format!("open in process {}", std::process::id())]);
    }
    // Signatures written by the real tools, where they exist; a partition table by hand.
    let cases: [(&str, &[&str], &str); 2] = [("mkswap", &[], "swap area"), ("wipefs", &["-a"], "")];
    for (tool, args, what) in cases {
        let mut a = args.to_vec();
        a.push(dev.path());
        if !sh(tool, &a) {
            skip(&format!("{tool} failed on {}: not available?", dev.path()));
            continue;
        }
        if what.is_empty() {
            continue;
        }
        let before = dev.read_all();
        on_device(&env, "write-iops", dev.path())
            .destructive()
            .yes()
            .refused(&[what]);
        assert!(dev.read_all() == before);
    }
    let mut mbr = vec![0u8; 512];
    mbr[446] = 0x80;
    mbr[446 + 4] = 0x83;
    mbr[446 + 8] = 1;
    mbr[446 + 12] = 0xff;
    mbr[510] = 0x55;
    mbr[511] = 0xAA;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&dev.dev)
        .and_then(|f| std::os::unix::fs::FileExt::write_all_at(&f, &mbr, 0))
        .unwrap();
    on_device(&env, "write-mbps", dev.path())
        .destructive()
        .yes()
        .refused(&["MBR partition table"]);
}

#[test]
fn read_tests_on_a_device_need_no_permission_to_write() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "read.img", 32 * MIB) else {
        return;
    };
    let r = on_device(&env, "read-iops", dev.path()).size("8M").json();
    assert_eq!(r["dataset"]["kind"], "block_device");
    assert_eq!(u(&r["dataset"]["size_bytes"]), 8 * MIB);
    assert_eq!(r["config"]["open_flags"][0], "O_RDONLY");
    assert!(dev.read_all().iter().all(|&b| b == 0));
}

#[test]
fn block_size_below_the_sector_size_says_what_to_do() {
    let env = Env::new();
    let image = env.join("4k.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(32 * MIB)
        .unwrap();
    let Some(dev) = Loop::new(&image, Some(4096)) else {
        return;
    };
    on_device(&env, "read-iops", dev.path())
        .block_size(512)
        .refused(&["--block-size 512", "multiple of 4K", "buffered --io-mode"]);
    // The buffered io modes have no alignment to meet.
    let r = on_device(&env, "read-iops", dev.path())
        .block_size(512)
        .io_mode("asynch")
        .json();
    assert!(u(&event(&r)["requests"]) > 0);
}
