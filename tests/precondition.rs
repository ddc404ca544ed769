//! `dbio precondition`: a data set's data files, or a checked block device, written over
//! in sequential 128 KiB writes a given number of times; the manifest and later results say
//! so; a mounted device and bad input are refused with nothing written.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;

use serde_json::Value;

use crate::util::{Env, Loop, Mount, refusal_line, sh, skip, u};

const MIB: u64 = 1 << 20;

fn digest(path: &Path) -> u64 {
    let mut h = DefaultHasher::new();
    std::fs::read(path).unwrap().hash(&mut h);
    h.finish()
}

fn data_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dbf"))
        .collect();
    v.sort();
    v
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("dbio-manifest.json")).unwrap()).unwrap()
}

/// Sectors the kernel counted as written to block device `dev` (/sys/block/NAME/stat).
fn sectors_written(dev: &str) -> u64 {
    let name = Path::new(dev).file_name().unwrap().to_str().unwrap();
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().nth(6).unwrap().parse().unwrap()
}

/// Checks what `--json` printed for `passes` complete passes over `size` bytes.
fn assert_passes(j: &Value, size: u64, passes: u64) {
    assert_eq!(u(&j["size_bytes"]), size, "{j}");
    assert_eq!(u(&j["bytes_written"]), passes * size, "{j}");
    assert_eq!(u(&j["request_bytes"]), 128 << 10, "{j}");
    assert_eq!(j["complete"], true, "{j}");
    let ps = j["passes"].as_array().unwrap();
    assert_eq!(ps.len() as u64, passes, "{j}");
    for p in ps {
        assert_eq!(u(&p["bytes"]), size, "{j}");
        assert_eq!(p["complete"], true, "{j}");
        assert!(p["seconds"].as_f64().unwrap() > 0.0, "{j}");
        let rate = size as f64 / MIB as f64 / p["seconds"].as_f64().unwrap();
        let said = p["mib_s"].as_f64().unwrap();
        assert!((said - rate).abs() <= rate * 1e-6, "{said} vs {rate}: {j}");
    }
}

#[test]
fn a_data_set_is_written_over_twice_and_later_results_say_so() {
    let env = Env::new();
    let out = env.output(&["prepare", "--size", "16M", "--files", "2", "-q"]);
    assert!(out.status.success(), "{out:?}");
    let ds = env.join("dbio-data");
    // Foreign files beside the data set and inside its directory must not change.
    std::fs::write(env.join("foreign.dbf"), vec![7u8; 1 << 20]).unwrap();
    std::fs::write(ds.join("notes.txt"), b"the DBA's notes").unwrap();
    let foreign = [env.join("foreign.dbf"), ds.join("notes.txt")];
    let foreign_before: Vec<u64> = foreign.iter().map(|p| digest(p)).collect();
    let files = data_files(&ds);
    assert_eq!(files.len(), 2);
    let before: Vec<(u64, u64)> = files
        .iter()
        .map(|p| (digest(p), std::fs::metadata(p).unwrap().len()))
        .collect();

    let j = env.json(&["precondition", "--passes", "2", "--json"]);
    assert_passes(&j, 16 * MIB, 2);
    assert_eq!(j["kind"], "directory");

    for (p, (hash, len)) in files.iter().zip(&before) {
        assert_eq!(std::fs::metadata(p).unwrap().len(), *len, "{p:?} size");
        assert_ne!(digest(p), *hash, "{p:?} was written over");
    }
    let foreign_after: Vec<u64> = foreign.iter().map(|p| digest(p)).collect();
    assert_eq!(foreign_before, foreign_after, "foreign files unchanged");
    assert_eq!(data_files(&ds), files, "no data file made or removed");

    // The manifest records it.
    let m = manifest(&ds);
    let pc = &m["preconditioned"];
    assert_eq!(u(&pc["bytes"]), 32 * MIB, "{m}");
    assert_eq!(u(&pc["passes_asked"]), 2, "{m}");
    assert_eq!(pc["passes"].as_array().unwrap().len(), 2, "{m}");

    // A later run on it says so in result.json and in its summary.
    let r = env.json(&[
        "run",
        "read-iops",
        "--size",
        "16M",
        "--files",
        "2",
        "--sessions",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
    ]);
    assert_eq!(r["dataset"]["preconditioned"], *pc, "{}", r["dataset"]);
    let runs: Vec<_> = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1);
    let summary = std::fs::read_to_string(runs[0].join("summary.txt")).unwrap();
    let line = summary
        .lines()
        .find(|l| l.contains("Preconditioned"))
        .unwrap_or_else(|| panic!("no Preconditioned line:\n{summary}"));
    assert!(
        line.contains("2 pass(es) of sequential 128K writes") && line.contains("MiB/s"),
        "{line}"
    );

    // Data files made again are fresh: the mark goes with the old ones.
    let out = env.output(&["prepare", "--size", "32M", "--files", "2", "--fresh", "-q"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        manifest(&ds).get("preconditioned").is_none(),
        "{}",
        manifest(&ds)
    );
}

#[test]
fn bad_passes_and_targets_are_refused_with_nothing_written() {
    let env = Env::new();
    let out = env.output(&["prepare", "--size", "8M", "--files", "1", "-q"]);
    assert!(out.status.success(), "{out:?}");
    let ds = env.join("dbio-data");
    let files = data_files(&ds);
    let before: Vec<u64> = files.iter().map(|p| digest(p)).collect();
    let manifest_before = std::fs::read(ds.join("dbio-manifest.json")).unwrap();
    for bad in ["0", "101", "-1", "x", "2x", ""] {
        let out = env.output(&["precondition", &format!("--passes={bad}")]);
        refusal_line(&format!("--passes {bad:?}"), &out, &["--passes"]);
    }
    let out = env.output(&["precondition", "nowhere"]);
    refusal_line("a missing target", &out, &["nowhere", "does not exist"]);
    let out = env.output(&["precondition", files[0].to_str().unwrap()]);
    refusal_line("a data file", &out, &["is a file"]);
    // A directory that holds no data set: nothing made in it.
    std::fs::create_dir(env.join("empty")).unwrap();
    let out = env.output(&["precondition", "empty"]);
    refusal_line("no data set", &out, &["holds no dbio data set"]);
    assert_eq!(std::fs::read_dir(env.join("empty")).unwrap().count(), 0);

    let after: Vec<u64> = files.iter().map(|p| digest(p)).collect();
    assert_eq!(before, after, "nothing written");
    assert_eq!(
        std::fs::read(ds.join("dbio-manifest.json")).unwrap(),
        manifest_before
    );
}

#[test]
fn a_data_set_with_verify_headers_is_refused() {
    let env = Env::new();
    let out = env.output(&["prepare", "--size", "8M", "--files", "1", "--verify", "-q"]);
    assert!(out.status.success(), "{out:?}");
    let files = data_files(&env.join("dbio-data"));
    let before = digest(&files[0]);
    let out = env.output(&["precondition"]);
    refusal_line("--verify data set", &out, &["--verify", "verify header"]);
    assert_eq!(digest(&files[0]), before);
}

#[test]
fn a_loop_device_is_written_twice_its_size_and_a_mounted_one_is_refused() {
    let env = Env::new();
    let Some(dev) = Loop::blank(env.path(), "blank.img", 32 * MIB) else {
        return;
    };
    // Without --destructive, and without --yes where nobody can be asked: refused, nothing
    // written.
    let out = env.output(&["precondition", dev.path()]);
    refusal_line("no --destructive", &out, &["--destructive", "32.0 MiB"]);
    let out = env.output(&["precondition", dev.path(), "--destructive"]);
    refusal_line("no --yes", &out, &["--yes", "not a terminal"]);
    assert!(dev.read_all().iter().all(|&b| b == 0), "nothing written");

    let sectors = sectors_written(dev.path());
    let j = env.json(&[
        "precondition",
        dev.path(),
        "--destructive",
        "--yes",
        "--json",
    ]);
    assert_passes(&j, 32 * MIB, 2);
    assert_eq!(j["kind"], "block_device");
    let written = (sectors_written(dev.path()) - sectors) * 512;
    assert!(
        written >= 64 * MIB,
        "the kernel counted {written} bytes written"
    );
    assert!(
        dev.read_all().iter().filter(|&&b| b == 0).count() < (1 << 20),
        "the device holds the new data"
    );

    // The same device with a file system on it, mounted: refused, not a byte written.
    let image = env.join("blank.img");
    drop(dev);
    if !sh("mkfs.ext4", &["-q", "-F", image.to_str().unwrap()]) {
        return skip("no mkfs.ext4");
    }
    let Some(dev) = Loop::new(&image, None) else {
        return;
    };
    let Some(_mounted) = Mount::new("ext4", "ro", dev.path(), &env.join("mnt")) else {
        return;
    };
    let before = digest(&dev.dev);
    let out = env.output(&[
        "precondition",
        dev.path(),
        "--destructive",
        "--yes",
        "--json",
    ]);
    refusal_line("mounted", &out, &["is mounted", "mnt"]);
    assert_eq!(digest(&dev.dev), before, "nothing written");
}

#[test]
fn ctrl_c_stops_between_writes_and_says_which_pass_was_partial() {
    let env = Env::new();
    let out = env.output(&["prepare", "--size", "64M", "--files", "2", "-q"]);
    assert!(out.status.success(), "{out:?}");
    let ds = env.join("dbio-data");
    let child = env
        .process()
        .args(["precondition", "--passes", "100", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::util::wait_locked(&ds, child.id());
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill on a child of this process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let j: Value = serde_json::from_slice(&out.stdout).expect("JSON even when stopped");
    assert_eq!(j["complete"], false, "{j}");
    let passes = j["passes"].as_array().unwrap();
    let last = passes.last().expect("a pass was begun");
    assert_eq!(last["complete"], false, "{j}");
    assert!(u(&last["bytes"]) < 64 * MIB, "{j}");
    assert!(u(&j["bytes_written"]) < 100 * 64 * MIB, "{j}");
    assert!(err.contains("PARTIAL (stopped by a signal)"), "{err}");
    assert!(err.contains("stopped by a signal:"), "{err}");
    // The manifest records the passes made, or nothing when none was complete.
    let m = manifest(&ds);
    let complete = u(&j["passes_complete"]);
    if complete == 0 {
        assert!(m.get("preconditioned").is_none(), "{m}");
    } else {
        assert_eq!(m["preconditioned"]["passes"], j["passes"], "{m}");
    }
    // Still a usable data set: a later precondition of one pass completes.
    let j = env.json(&["precondition", "--passes", "1", "--json"]);
    assert_passes(&j, 64 * MIB, 1);
}
