//! What is under a data set and what the machine saw: `dbio map` on a loop device and on
//! this machine's disk, `os` and `storage` in a run's result, and `dbio doctor` / `dbio clean
//! --stale` after a run was killed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::util::{Env, f, is_root, skip, u};

/// Taken by the tests here that put load on the machine's disk, so they do not disturb
/// each other's block-layer figures.
static DISK: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn disk() -> std::sync::MutexGuard<'static, ()> {
    DISK.lock().unwrap_or_else(|e| e.into_inner())
}

/// An ext4 file system in a 64 MiB image on a loop device, mounted; unmounted and detached
/// when dropped, also when a test fails. None (through `skip`) when a step cannot be done here.
struct LoopFs {
    image: PathBuf,
    device: Option<String>,
    mnt: PathBuf,
    mounted: bool,
}

impl LoopFs {
    fn new(env: &Env) -> Option<LoopFs> {
        let image = env.join("disk.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(64 << 20)
            .unwrap();
        let mut fs = LoopFs {
            image,
            device: None,
            mnt: env.join("mnt"),
            mounted: false,
        };
        std::fs::create_dir(&fs.mnt).unwrap();
        let ok = |what: &str, c: &mut Command| {
            let out = c.output().ok().filter(|o| o.status.success());
            if out.is_none() {
                skip(&format!("cannot {what} here"));
            }
            out
        };
        ok(
            "make an ext4 file system (mkfs.ext4)",
            Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&fs.image),
        )?;
        let attached = {
            let _one = crate::util::LOSETUP
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            ok(
                "attach a loop device (losetup)",
                Command::new("losetup")
                    .args(["--find", "--show"])
                    .arg(&fs.image),
            )
        };
        let out = attached?;
        fs.device = Some(String::from_utf8_lossy(&out.stdout).trim().to_string());
        ok(
            "mount the loop device",
            Command::new("mount")
                .arg(fs.device.as_ref().unwrap())
                .arg(&fs.mnt),
        )?;
        fs.mounted = true;
        Some(fs)
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(&self.mnt).status();
        }
        if let Some(d) = &self.device {
            let _ = Command::new("losetup").args(["-d", d]).status();
        }
    }
}

#[test]
fn map_names_the_loop_device_its_backing_file_and_the_file_system() {
    if !is_root() {
        return skip("losetup and mount need root");
    }
    let env = Env::new();
    let Some(fs) = LoopFs::new(&env) else {
        return;
    };
    let file = fs.mnt.join("users01.dbf");
    std::fs::write(&file, b"x").unwrap();
    let loop_name = Path::new(fs.device.as_ref().unwrap())
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();

    let j = env.cmd("map").arg(file.to_str().unwrap()).json();
    let map = &j["map"];
    assert_eq!(map["kind"], "file");
    assert_eq!(map["mount"]["fs_type"], "ext4", "{map}");
    assert_eq!(map["mount"]["mount_point"], fs.mnt.to_str().unwrap());
    let dev = &map["devices"][0];
    assert_eq!(dev["name"], loop_name.as_str(), "{map}");
    assert_eq!(dev["layer"], "loop");
    assert_eq!(
        dev["loop"]["backing_file"],
        fs.image.to_str().unwrap(),
        "{map}"
    );
    assert_eq!(dev["disk"]["transport"], "loop");
    assert_eq!(u(&dev["size_bytes"]), 64 << 20);

    let out = env.cmd("map").arg(file.to_str().unwrap()).out();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&loop_name), "{text}");
    assert!(text.contains(fs.image.to_str().unwrap()), "{text}");
    assert!(text.contains("file system ext4"), "{text}");
}

/// The whole disks under block device `dev` (itself when it is one): a partition's disk,
/// and the disks beneath a dm or md device, as sysfs shows them.
fn disks_beneath(dev: &Path) -> Vec<String> {
    let name = dev.file_name().unwrap().to_string_lossy().into_owned();
    if dev.join("partition").exists() {
        return disks_beneath(dev.parent().unwrap());
    }
    let slaves: Vec<PathBuf> = std::fs::read_dir(dev.join("slaves"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::canonicalize(e.path()).ok())
        .collect();
    if slaves.is_empty() {
        return vec![name];
    }
    slaves.iter().flat_map(|s| disks_beneath(s)).collect()
}

/// The disks `/` lives on; empty when it is on no block device (overlay, tmpfs, ...).
fn disks_under_root() -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata("/").unwrap().dev();
    let sys = format!("/sys/dev/block/{}:{}", libc::major(dev), libc::minor(dev));
    match std::fs::canonicalize(sys) {
        Ok(p) => disks_beneath(&p),
        Err(_) => Vec::new(),
    }
}

#[test]
fn map_of_root_names_its_disk_and_the_disks_queue() {
    let under = disks_under_root();
    let Some(disk) = under.first() else {
        return skip("/ is not on a block device here");
    };
    let env = Env::new();
    let j = env.cmd("map").arg("/").json();
    let map = &j["map"];
    let disks: Vec<&serde_json::Value> = {
        fn walk<'a>(n: &'a serde_json::Value, out: &mut Vec<&'a serde_json::Value>) {
            out.push(n);
            for l in n["lower"].as_array().into_iter().flatten() {
                walk(l, out);
            }
        }
        let mut v = Vec::new();
        for d in map["devices"].as_array().unwrap() {
            walk(d, &mut v);
        }
        v
    };
    let found = disks
        .iter()
        .find(|d| d["name"] == disk.as_str())
        .unwrap_or_else(|| panic!("{disk} (sysfs: {under:?}) under /: {map}"));
    let transport = found["disk"]["transport"].as_str().unwrap_or_default();
    assert!(!transport.is_empty(), "{found}");
    if disk.starts_with("vd") {
        assert_eq!(transport, "virtio", "{found}");
    }
    let q = &found["queue"];
    assert!(q["scheduler"].is_string(), "{q}");
    for key in [
        "nr_requests",
        "max_sectors_kb",
        "max_hw_sectors_kb",
        "logical_block_size",
        "physical_block_size",
        "read_ahead_kb",
    ] {
        assert!(u(&q[key]) > 0, "{key}: {q}");
    }
    assert!(q["write_cache"].is_string(), "{q}");

    let out = env.cmd("map").arg("/").out();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(disk.as_str()) && text.contains(&format!("transport {transport}")),
        "{text}"
    );
    assert!(text.contains("queue: scheduler"), "{text}");
}

#[test]
fn a_direct_io_run_records_the_os_the_storage_and_the_block_layer_cross_check() {
    if !is_root() {
        return skip("losetup and mount need root");
    }
    // On a loop device of its own: the machine's disk is shared with everything else
    // (other tests, builds), whose requests would count beside dbio's. A loop device's
    // requests are this run's; a second try or two absorbs the file system's own.
    let env = Env::new();
    let Some(fs) = LoopFs::new(&env) else {
        return;
    };
    let target = fs.mnt.join("data");
    let mut ratios = Vec::new();
    for _ in 0..3 {
        let r = env
            .run("read-iops")
            .target(&target)
            .size("32M")
            .sessions(2)
            .duration("3s")
            .warmup("0s")
            .json();
        let os = &r["os"];
        assert!(!os["cpu"].as_array().unwrap().is_empty(), "{os}");
        assert!(
            os["cpu"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["cpu"] == "all")
        );
        assert_eq!(
            os["memory"].as_array().unwrap().len(),
            3,
            "one row a second"
        );
        assert!(!os["dbio_cpu"].as_array().unwrap().is_empty());
        let storage = &r["storage"];
        assert!(storage["mount"]["fs_type"].is_string(), "{storage}");
        assert_ne!(storage["memory_backed"], true, "{storage}");
        let top = storage["devices"][0]["name"].as_str().unwrap();
        assert!(top.starts_with("loop"), "{storage}");
        assert!(
            os["devices"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["device"] == top && f(&d["r_s"]) > 0.0),
            "{os}"
        );
        let c = &os["cross_check"];
        assert_eq!(c["device"], top);
        assert_eq!(u(&c["dbio_requests"]), u(&r["totals"]["requests"]));
        let ratio = f(&c["ratio"]);
        ratios.push(ratio);
        if (ratio - 1.0).abs() <= 0.10 {
            break;
        }
    }
    assert!(
        ratios.last().is_some_and(|r| (r - 1.0).abs() <= 0.10),
        "device/dbio request ratio off by more than 10 % in every try: {ratios:?}"
    );
    eprintln!("cross-check ratios: {ratios:?}");
    let runs = env.join("dbio-runs");
    let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap();
    let summary = std::fs::read_to_string(run.path().join("summary.txt")).unwrap();
    assert!(summary.contains("Operating system"), "{summary}");
    assert!(summary.contains("Block devices"), "{summary}");
    assert!(summary.contains("Cross-check"), "{summary}");
}

/// A run killed with SIGKILL: its lock is gone with it, so doctor sees the data set ready
/// and not in use. Unnamed temp files went with the process; named ones (a file system
/// without O_TMPFILE) are stale until `dbio clean --stale` removes them.
#[test]
fn doctor_finds_what_a_killed_run_left_and_clean_stale_repairs_it() {
    for (test, extra, named) in [
        ("read-iops", &[][..], false),
        ("temp", &["--spill-size", "8M"][..], false),
        ("temp", &["--spill-size", "8M"][..], true),
    ] {
        let _disk = disk();
        let env = Env::new();
        let prepared = env.prepare().target("data").size("64M").out();
        assert!(prepared.status.success());
        let mut child = env
            .run(test)
            .target("data")
            .size("64M")
            .sessions(2)
            .duration("60s")
            .warmup("0s")
            .args(extra)
            .env("DBIO_TEST_NO_TMPFILE", if named { "1" } else { "0" })
            .process()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        crate::util::wait_locked(&env.join("data"), child.id());
        std::thread::sleep(Duration::from_millis(1000)); // measuring by now
        child.kill().unwrap(); // SIGKILL: nothing is cleaned up
        child.wait().unwrap();
        let manifest = env.join("data/dbio-manifest.json");

        let out = env.doctor().arg("data").out();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if named {
            assert_eq!(out.status.code(), Some(1), "{test}: {stdout}");
            assert!(stdout.contains("STALE"), "{test}: {stdout}");
            assert!(stdout.contains("dbio-temp-001.tmp"), "{stdout}");
            assert!(stdout.contains("dbio clean --stale"), "{test}: {stdout}");
            let out = env.cmd("clean").arg("--stale").arg("data").out();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        } else {
            assert_eq!(out.status.code(), Some(0), "{test}: {stdout}");
            assert!(stdout.contains("ready, not in use"), "{test}: {stdout}");
        }
        let out = env.doctor().arg("data").out();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{test}: {stdout}");
        let m: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
        assert!(m["in_use"].is_null());
        assert!(m["temp_files"].as_array().unwrap().is_empty());
        // Data files stay; temporary files are gone.
        let names: Vec<String> = std::fs::read_dir(env.join("data"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        if test != "temp" {
            assert!(names.iter().any(|n| n.ends_with(".dbf")), "{names:?}");
        }
        assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    }
}
