//! Every run judges itself (SPEC §5 rule 7): how steady each event was over the window, and
//! whether the device did work that was not dbio's. A run whose rate is made to fall
//! halfway — its reads throttled by a cgroup while another reader starts on the same loop
//! device — warns about both, with figures that agree with its per-second series; a run
//! that keeps its rate on /dev/shm warns about neither; a device's request limits are
//! findings only for a run whose requests exceed them.

use std::io::Read;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{Env, Loop, event, f, is_root, shm_dir, skip, u};

/// The warnings of a result.
fn warnings(r: &Value) -> Vec<String> {
    (r["warnings"].as_array().unwrap().iter())
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Checks an event's `stability.rate` against its per-second series, recomputed here from
/// `timeseries` as docs/measurement.md says: each second's requests over the time dbio ran
/// in it, seconds shorter than half left out.
fn assert_rate_agrees(r: &Value, e: &Value) {
    let secs = f(&r["measured_seconds"]);
    let rates: Vec<f64> = (r["timeseries"].as_array().unwrap().iter())
        .filter(|p| p["event"] == e["name"])
        .filter_map(|p| {
            let t = u(&p["t"]) as f64;
            let len =
                (secs - (t - 1.0)).clamp(0.0, 1.0) - p["not_running_s"].as_f64().unwrap_or(0.0);
            (len >= 0.5).then(|| u(&p["requests"]) as f64 / len)
        })
        .collect();
    let s = &e["stability"]["rate"];
    let n = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / n;
    let sd = (rates.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    assert_eq!(u(&s["seconds"]), rates.len() as u64, "{s}");
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(0.0, f64::max);
    for (key, want) in [
        ("min", min),
        ("max", max),
        ("median", median(&rates)),
        ("mean", mean),
        ("cv_pct", sd / mean * 100.0),
    ] {
        assert!(close(f(&s[key]), want), "{key}: {} vs {want} ({s})", s[key]);
    }
    let edge = u(&s["edge_s"]) as usize;
    assert!(close(f(&s["first"]), median(&rates[..edge])), "{s}");
    assert!(
        close(f(&s["last"]), median(&rates[rates.len() - edge..])),
        "{s}"
    );
}

/// A rate in the words of a warning: thousands separated.
fn rate_words(v: f64) -> String {
    let s = (v.round() as u64).to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    format!("{out}/s")
}

/// The quiet case: an open-loop rate on /dev/shm keeps every second's count, whatever else
/// the machine does. Its rate is judged steady and nothing warns of it, and a data set in
/// memory has no device whose work could be someone else's.
#[test]
fn a_run_that_keeps_its_rate_on_shm_warns_about_neither() {
    let Some(shm) = shm_dir() else {
        return;
    };
    let env = Env::new();
    let r = env
        .run("read-iops")
        .target(shm.path().join("ds").to_str().unwrap())
        .size("16M")
        .files(1)
        .sessions(2)
        .rate(2000)
        .duration("6s")
        .warmup("1s")
        .json();
    let e = event(&r);
    let s = &e["stability"]["rate"];
    assert_eq!(s["judged"], true, "{s}");
    assert_eq!(s["unstable"], false, "{s}");
    assert!(
        f(&s["cv_pct"]) < 20.0 && f(&s["trend_pct"]).abs() < 20.0,
        "{s}"
    );
    assert_rate_agrees(&r, e);
    let w = warnings(&r);
    assert!(
        !w.iter().any(|w| w.contains("requests fell")
            || w.contains("requests rose")
            || w.contains("requests swung")),
        "{w:?}"
    );
    assert!(!w.iter().any(|w| w.contains("not dbio's")), "{w:?}");
    assert!(
        r["os"]["cross_check"].is_null(),
        "memory-backed: no cross-check"
    );
    // The summary shows it. (Its p99 is not asserted: on a machine busy with other work,
    // a second's p99 in memory is the scheduler's, and it may well move.)
    let summary = std::fs::read_to_string(run_dir(&env).join("summary.txt")).unwrap();
    let row = (summary.lines())
        .find(|l| l.starts_with(e["name"].as_str().unwrap()) && l.contains(" requests "))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(row.trim_end().ends_with("steady"), "{row}");
}

/// The one run directory under the environment's `dbio-runs`.
fn run_dir(env: &Env) -> PathBuf {
    let runs = env.join("dbio-runs");
    let mut dirs: Vec<PathBuf> = (std::fs::read_dir(&runs).unwrap())
        .map(|d| d.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

/// A block-I/O cgroup made by a test, limiting reads or writes of one device; the processes
/// in it are moved back out and it is removed when dropped.
struct Throttle {
    dir: PathBuf,
    parent: PathBuf,
}

impl Throttle {
    /// A group limiting reads (or `writes`) of `dev` (major, minor) to `iops` a second, with
    /// cgroup v2's io controller (`io.max`) or v1's blkio throttling, whichever is mounted
    /// with it; None (through `skip`) where neither is.
    fn new(dev: (u32, u32), iops: u32, writes: bool) -> Option<Throttle> {
        let (v2_key, v1_file) = if writes {
            ("wiops", "blkio.throttle.write_iops_device")
        } else {
            ("riops", "blkio.throttle.read_iops_device")
        };
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
        // One group per throttle: tests of one process run side by side.
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let name = format!(
            "dbio-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        for line in mounts.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(dir), Some(fs), Some(opts)) = (f.get(1), f.get(2), f.get(3)) else {
                continue;
            };
            let parent = PathBuf::from(dir);
            let (file, limit) = if *fs == "cgroup2"
                && std::fs::read_to_string(parent.join("cgroup.controllers"))
                    .is_ok_and(|c| c.split_whitespace().any(|c| c == "io"))
            {
                // The io controller must be on for the root's children.
                let _ = std::fs::write(parent.join("cgroup.subtree_control"), "+io");
                ("io.max", format!("{}:{} {v2_key}={iops}", dev.0, dev.1))
            } else if *fs == "cgroup"
                && opts.split(',').any(|o| o == "blkio")
                && parent.join(v1_file).exists()
            {
                (v1_file, format!("{}:{} {iops}", dev.0, dev.1))
            } else {
                continue;
            };
            let dir = parent.join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let t = Throttle { dir, parent };
            if std::fs::write(t.dir.join(file), &limit).is_ok() {
                return Some(t);
            }
        }
        skip("no cgroup with block-I/O throttling (cgroup v2 io.max, or v1 blkio)");
        None
    }

    /// Moves process `pid` (all its threads) into the group.
    fn enter(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).unwrap();
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let procs = std::fs::read_to_string(self.dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            let _ = std::fs::write(self.parent.join("cgroup.procs"), pid);
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A loop device over an image of `bytes` in memory, its reads (or `writes`) throttled to
/// `iops` a second for the processes a test puts in the group. Dropped in this order: the
/// group, the device, the image.
struct Throttled {
    throttle: Throttle,
    dev: Loop,
    _shm: tempfile::TempDir,
}

fn throttled_loop(bytes: u64, iops: u32, writes: bool) -> Option<Throttled> {
    if !is_root() {
        skip("loop devices and cgroups need root");
        return None;
    }
    let shm = shm_dir()?;
    let image = shm.path().join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(bytes)
        .unwrap();
    let dev = Loop::new(&image, None)?;
    let rdev = std::fs::metadata(&dev.dev).unwrap().rdev();
    let throttle = Throttle::new((libc::major(rdev), libc::minor(rdev)), iops, writes)?;
    Some(Throttled {
        throttle,
        dev,
        _shm: shm,
    })
}

/// Another program's reader of `dev`: 1 MiB direct reads from its start, over and over,
/// until stopped.
struct Neighbour {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Neighbour {
    fn start(dev: &Path) -> Neighbour {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(dev)
            .unwrap();
        let size = file.metadata().unwrap().len().max(
            // A block device's size is its seek end.
            std::fs::read_to_string(format!(
                "/sys/class/block/{}/size",
                dev.file_name().unwrap().to_str().unwrap()
            ))
            .map(|s| s.trim().parse::<u64>().unwrap_or(0) * 512)
            .unwrap_or(0),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let halt = stop.clone();
        let thread = std::thread::spawn(move || {
            const MIB: usize = 1 << 20;
            let mut raw = vec![0u8; 2 * MIB];
            let at = raw.as_ptr().align_offset(4096);
            let buf = &mut raw[at..at + MIB];
            let (mut off, mut read) = (0u64, 0u64);
            while !halt.load(Ordering::Relaxed) {
                if off + MIB as u64 > size {
                    off = 0;
                }
                read += file.read_at(buf, off).unwrap() as u64;
                off += MIB as u64;
            }
            read
        });
        Neighbour {
            stop,
            thread: Some(thread),
        }
    }

    /// Stops it; the bytes it read.
    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for Neighbour {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Waits until the `--metrics` file says the measured window has run `secs` seconds (or
/// the run ended): the window's own clock, not the test's.
fn wait_for_window(metrics: &Path, secs: f64, child: &mut std::process::Child) {
    let t0 = Instant::now();
    loop {
        let text = std::fs::read_to_string(metrics).unwrap_or_default();
        let elapsed = text
            .lines()
            .find(|l| l.starts_with("dbio_elapsed_seconds"))
            .and_then(|l| l.split_whitespace().last()?.parse::<f64>().ok());
        if elapsed.is_some_and(|e| e >= secs) || child.try_wait().unwrap().is_some() {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the run never got to its window"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A read-iops run on a loop device over an image in memory: after 3 s of its window its
/// reads are throttled to 1,000 a second (from hundreds of thousands) and another reader
/// starts on the same device. It warns that its rate fell — the figures in the warning and
/// in `stability` are those of its per-second series — and that most of the device's work
/// was not its own, with the cross-check's ratio showing it in bytes.
#[test]
fn a_rate_that_falls_halfway_warns_about_stability_and_the_neighbour() {
    let Some(Throttled { throttle, dev, .. }) = throttled_loop(128 << 20, 1000, false) else {
        return;
    };
    let env = Env::new();
    let metrics = env.join("live.prom");
    let mut child = env
        .run("read-iops")
        .target(dev.path())
        .size("128M")
        .sessions(4)
        .duration("10s")
        .warmup("1s")
        .path_opt("--metrics", &metrics)
        .arg("--json")
        .process()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_window(&metrics, 3.0, &mut child);
    throttle.enter(child.id());
    let neighbour = Neighbour::start(&dev.dev);
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let neighbour_read = neighbour.stop();
    drop(throttle);
    assert!(status.success(), "{stderr}");
    assert!(neighbour_read > 0);
    let r: Value = serde_json::from_slice(&stdout).unwrap();
    let w = warnings(&r);
    let e = event(&r);
    let name = e["name"].as_str().unwrap();

    // Stability: the rate fell, in figures its series gives.
    let s = &e["stability"]["rate"];
    assert_eq!(
        (&s["judged"], &s["unstable"]),
        (&Value::Bool(true), &Value::Bool(true)),
        "{s}"
    );
    assert_rate_agrees(&r, e);
    assert!(f(&s["last"]) < f(&s["first"]) / 2.0, "{s}");
    assert!(f(&s["trend_pct"]) < -20.0, "{s}");
    let fell = format!(
        "\"{name}\": requests fell from {} in the first {} s to {} in the last {} s",
        rate_words(f(&s["first"])),
        u(&s["edge_s"]),
        rate_words(f(&s["last"])),
        u(&s["edge_s"])
    );
    assert!(
        w.iter()
            .any(|w| w.starts_with(&fell)
                && w.ends_with("the average describes no moment of this run")),
        "{fell}\n{w:?}"
    );
    // The unstable stretch runs to the end of the window.
    let stretches = s["stretches"].as_array().unwrap();
    let last = stretches.last().unwrap();
    assert_eq!(u(&last[1]), u(&s["seconds"]), "{s}");

    // The neighbour: the device read more bytes than dbio; the ratio shows it.
    let c = &r["os"]["cross_check"];
    assert_eq!(c["device"], dev.dev.file_name().unwrap().to_str().unwrap());
    let reads = &c["reads"];
    assert_eq!(u(&reads["dbio_bytes"]), u(&e["bytes"]));
    let (dbio_b, dev_b) = (
        u(&reads["dbio_bytes"]) as f64,
        u(&reads["device_bytes"]) as f64,
    );
    assert!(dev_b > 1.1 * dbio_b, "{c}");
    assert_eq!(c["ratio_of"], "read bytes", "{c}");
    assert!(
        (f(&c["ratio"]) - dev_b / dbio_b).abs() < 1e-9 * dev_b / dbio_b,
        "{c}"
    );
    let all_dev = dev_b + u(&c["writes"]["device_bytes"]) as f64;
    let not_dbio = 100.0 * (dev_b - dbio_b) / all_dev;
    assert!((f(&c["not_dbio_pct"]) - not_dbio).abs() < 1e-6, "{c}");
    let neighbour = format!(
        "the device {} did ",
        dev.dev.file_name().unwrap().to_str().unwrap()
    );
    assert!(
        w.iter().any(|w| w.starts_with(&neighbour)
            && w.contains(&format!(
                "{:.0} % of its work over the window was not dbio's",
                f(&c["not_dbio_pct"])
            ))),
        "{w:?}"
    );

    // The summary and report.html show both; the chart marks the stretch.
    let dir = run_dir(&env);
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(summary.contains("Stability — UNSTABLE"), "{summary}");
    assert!(summary.contains("UNSTABLE: fell"), "{summary}");
    assert!(summary.contains(&fell), "{summary}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("class=\"band\""),
        "the per-second chart marks the stretch"
    );
}

/// A device's request limits are named only for a run whose requests exceed them: on a loop
/// device whose max_sectors_kb is 64, 8 KiB reads give no finding and no word of them,
/// 1 MiB reads give the finding, and the cross-check says the block layer split them there.
#[test]
fn request_limits_are_findings_only_when_the_runs_requests_exceed_them() {
    if !is_root() {
        return skip("loop devices need root");
    }
    let Some(shm) = shm_dir() else {
        return;
    };
    let image = shm.path().join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let Some(dev) = Loop::new(&image, None) else {
        return;
    };
    let name = dev.dev.file_name().unwrap().to_str().unwrap().to_string();
    let limit = format!("/sys/block/{name}/queue/max_sectors_kb");
    if std::fs::write(&limit, "64").is_err() {
        return skip("cannot set max_sectors_kb of a loop device here");
    }
    let env = Env::new();
    let run = |test: &str| {
        env.run(test)
            .target(dev.path())
            .size("64M")
            .sessions(1)
            .duration("2s")
            .warmup("0s")
            .json()
    };
    let rules = |r: &Value| -> Vec<String> {
        (r["lint"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter())
        .map(|l| l["rule"].as_str().unwrap().to_string())
        .collect()
    };
    let small = run("read-iops");
    assert!(
        !rules(&small)
            .iter()
            .any(|r| r == "max_sectors_kb" || r == "max_segments"),
        "{}",
        small["lint"]
    );
    assert!(
        !warnings(&small)
            .iter()
            .any(|w| w.contains("max_sectors_kb")),
        "{:?}",
        warnings(&small)
    );
    let large = run("read-mbps");
    let finding = (large["lint"].as_array().unwrap().iter())
        .find(|l| l["rule"] == "max_sectors_kb")
        .unwrap_or_else(|| panic!("{}", large["lint"]));
    assert_eq!(finding["subject"], name.as_str());
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("this run's requests of up to 1M"),
        "{message}"
    );
    let c = &large["os"]["cross_check"];
    assert_eq!(c["ratio_of"], "requests", "{c}");
    assert!(
        f(&c["ratio"]) > 8.0,
        "1 MiB in pieces of at most 64 KiB: {c}"
    );
    let w = warnings(&large);
    assert!(
        w.iter().any(|w| w.contains("split dbio's requests")
            && w.contains(&format!("exceeds {name}'s max_sectors_kb 64"))),
        "{w:?}"
    );
}

/// A DBWR batch that outlasts the window (256 blocks on a device throttled to 40 writes a
/// second: over 6 s a batch, in a 2 s window): the event's requests are counted, but no
/// whole wait ended inside the window, and the run says so in words instead of showing a
/// wait latency of nothing.
#[test]
fn an_event_whose_waits_all_outlast_the_window_says_so() {
    let Some(Throttled { throttle, dev, .. }) = throttled_loop(96 << 20, 40, true) else {
        return;
    };
    if !crate::aliasing::mkfs_ext4(dev.path()) {
        return;
    }
    let env = Env::new();
    let mnt = env.join("mnt");
    let Some(_mounted) = crate::util::Mount::new("ext4", "rw,noatime", dev.path(), &mnt) else {
        return;
    };
    // The data set is written before the run is throttled.
    env.prepare().target(&mnt).size("64M").ok();
    let mut child = env
        .run("write-iops")
        .target(&mnt)
        .size("64M")
        .sessions(1)
        .duration("2s")
        .warmup("0s")
        .arg("--batch=256")
        .arg("--json")
        .process()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    throttle.enter(child.id());
    let mut stdout = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let r: Value = serde_json::from_slice(&stdout).unwrap();
    let e = (r["events"].as_array().unwrap().iter())
        .find(|e| e["name"] == "db file parallel write")
        .expect("db file parallel write");
    assert!(e["requests"].as_u64().unwrap() > 0, "{e}");
    assert_eq!(e["waits"].as_u64(), Some(0), "{e}");
    let said = warnings(&r);
    assert!(
        said.iter()
            .any(|w| w.starts_with("\"db file parallel write\"")
                && w.contains("none of its waits")
                && w.contains("not measured")),
        "{said:#?}"
    );
}
