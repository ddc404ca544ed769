//! SPEC §7.1 on real (loop) block devices: a write test overwrites a device only with
//! `--destructive`, confirmed, and never one that is mounted, in use or holds anything.
//! These need root and loop devices; elsewhere they are skipped through `util::skip`.

use std::os::unix::fs::OpenOptionsExt;

use crate::util::{Env, Loop, Mount, event, sh, skip, u};

const MIB: u64 = 1 << 20;

/// A short write test on `dev` with `extra` options.
fn write_test<'a>(test: &'a str, dev: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        test,
        "--target",
        dev,
        "--sessions",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
    ];
    v.extend_from_slice(extra);
    v
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 2, one `error:` line containing every one of `words`.
fn assert_refused(out: &std::process::Output, words: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    for w in words {
        assert!(lines[0].contains(w), "{w:?} missing in: {}", lines[0]);
    }
    assert!(out.stdout.is_empty(), "no result for a refused run");
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
            let out = env.output(&write_test(test, dev.path(), extra));
            assert_refused(&out, &[dev.path(), "ext2/3/4 file system", "wipefs"]);
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
    let out = env.output(&write_test(
        "write-iops",
        dev.path(),
        &["--destructive", "--yes"],
    ));
    assert_refused(&out, &["is mounted", "mnt"]);
}

#[test]
fn a_blank_device_is_written_with_destructive_yes_and_only_within_its_size() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "blank.img", 64 * MIB) else {
        return;
    };
    // Without --destructive: refused, naming what would be overwritten and the option.
    let out = env.output(&write_test("write-iops", dev.path(), &[]));
    assert_refused(
        &out,
        &["--destructive", "64.0 MiB", "loop device backed by"],
    );
    // --destructive, but nobody to ask (stdin is not a terminal, even if it says yes) and
    // no --yes: refused.
    let out = env
        .dbio()
        .args(write_test("write-iops", dev.path(), &["--destructive"]))
        .write_stdin("yes\n")
        .output()
        .unwrap();
    assert_refused(&out, &["--yes", "not a terminal"]);
    // --size beyond the device: refused before anything is asked or written.
    let out = env.output(&write_test(
        "write-mbps",
        dev.path(),
        &["--destructive", "--yes", "--size", "1G"],
    ));
    assert_refused(&out, &["--size 1G", "larger than"]);
    // Tests that need files of their own are not run on a device.
    let out = env.output(&write_test("redo", dev.path(), &["--destructive", "--yes"]));
    assert_refused(&out, &["redo", "directory"]);
    assert!(
        dev.read_all().iter().all(|&b| b == 0),
        "nothing written yet"
    );

    for test in ["write-iops", "write-mbps"] {
        let out = env.output(&write_test(test, dev.path(), &["--destructive", "--yes"]));
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
    let out = env.output(&write_test(
        "write-iops",
        dev.path(),
        &["--destructive", "--yes", "--size", "16M"],
    ));
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
        let out = env.output(&write_test(
            "write-iops",
            dev.path(),
            &["--destructive", "--yes"],
        ));
        // Found by who has it open (a database holds raw devices open without O_EXCL).
        assert_refused(
            &out,
            &["in use", &format!("open in process {}", std::process::id())],
        );
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
        let out = env.output(&write_test(
            "write-iops",
            dev.path(),
            &["--destructive", "--yes"],
        ));
        assert_refused(&out, &[what]);
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
    let out = env.output(&write_test(
        "write-mbps",
        dev.path(),
        &["--destructive", "--yes"],
    ));
    assert_refused(&out, &["MBR partition table"]);
}

#[test]
fn read_tests_on_a_device_need_no_permission_to_write() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "read.img", 32 * MIB) else {
        return;
    };
    let r = env.json(&write_test("read-iops", dev.path(), &["--size", "8M"]));
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
    let out = env.output(&write_test(
        "read-iops",
        dev.path(),
        &["--block-size", "512"],
    ));
    assert_refused(
        &out,
        &["--block-size 512", "multiple of 4K", "buffered --io-mode"],
    );
    // The buffered io modes have no alignment to meet.
    let r = env.json(&write_test(
        "read-iops",
        dev.path(),
        &["--block-size", "512", "--io-mode", "asynch"],
    ));
    assert!(u(&event(&r)["requests"]) > 0);
}
