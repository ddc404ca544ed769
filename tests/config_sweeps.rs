//! Configuration sweeps: one point per io mode or engine, each an ordinary run whose
//! result says which open flags and engine it used, and the sweep saying the same.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{Env, Loop, Mount, only_run_dir, read_json, sh, skip};

/// Runs `dbio sweep read-iops --param PARAM` on a small data set and returns the sweep's
/// directory, its sweep.json, each point's result.json and what it printed.
fn sweep(env: &Env, param: &str) -> (PathBuf, Value, Vec<Value>, String) {
    let table = env
        .sweep()
        .arg("read-iops")
        .param(param)
        .size("64M")
        .sessions(2)
        .duration("1s")
        .warmup("0s")
        .stdout();
    let name = param.split('=').next().unwrap();
    let dir = only_run_dir(env, &format!("_sweep_read-iops_{name}"));
    let s = read_json(&dir.join("sweep.json"));
    assert_eq!(s["param"], name);
    assert_eq!(s["complete"], true, "{s}");
    let results = s["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| read_json(&dir.join(p["run_dir"].as_str().unwrap()).join("result.json")))
        .collect();
    (dir, s, results, table)
}

/// The point's open flags as sweep.json has them.
fn flags(p: &Value) -> Vec<&str> {
    p["open_flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect()
}

#[test]
fn io_mode_sweep_runs_each_mode_with_its_open_flags() {
    let env = Env::new();
    let modes = ["none", "directio", "asynch", "setall"];
    let (dir, s, results, table) = sweep(&env, &format!("io-mode={}", modes.join(",")));
    assert_eq!(s["values"], serde_json::json!(modes), "values stay words");
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 4, "{s}");
    for ((p, r), mode) in points.iter().zip(&results).zip(modes) {
        assert_eq!(p["value"], mode);
        assert_eq!(
            r["config"]["io_mode"], mode,
            "the point ran as --io-mode {mode}"
        );
        assert_eq!(p["open_flags"], r["config"]["open_flags"], "{mode}");
        assert_eq!(p["engine"], r["config"]["engine"], "{mode}");
        let direct = flags(p).contains(&"O_DIRECT");
        assert_eq!(
            direct,
            matches!(mode, "directio" | "setall"),
            "{mode}: O_DIRECT exactly for directio and setall: {:?}",
            flags(p)
        );
        assert!(flags(p).contains(&"O_DSYNC"), "{mode}: {:?}", flags(p));
        if matches!(mode, "none" | "directio") {
            assert_eq!(p["engine"], "sync", "{mode} submits one call at a time");
        }
        // The table shows the same, on the mode's own row.
        let row = table
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{mode} ")))
            .unwrap_or_else(|| panic!("no row for {mode}:\n{table}"));
        let engine = p["engine"].as_str().unwrap();
        assert!(row.contains(&format!(" {engine} ")), "{row}");
        assert!(row.contains(&flags(p).join("|")), "{row}");
    }
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("io-mode,iops,") && lines[0].ends_with(",engine,open_flags"));
    for (line, (p, mode)) in lines[1..].iter().zip(points.iter().zip(modes)) {
        assert!(line.starts_with(&format!("{mode},")), "{line}");
        let engine = p["engine"].as_str().unwrap();
        assert!(
            line.ends_with(&format!(",{engine},{}", flags(p).join("|"))),
            "{line}"
        );
    }
}

#[test]
fn engine_sweep_runs_each_engine() {
    let env = Env::new();
    let engines = ["sync", "aio", "uring"];
    let (_, s, results, _) = sweep(&env, &format!("engine={}", engines.join(",")));
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 3, "{s}");
    for ((p, r), engine) in points.iter().zip(&results).zip(engines) {
        assert_eq!(p["value"], engine);
        assert_eq!(r["config"]["engine_requested"], engine);
        assert_eq!(p["engine"], r["config"]["engine"], "{engine}");
        assert_eq!(p["open_flags"], r["config"]["open_flags"], "{engine}");
        // An engine the kernel lacks falls back, and the result says why.
        if p["engine"] != engine {
            let why = r["config"]["engine_reason"].as_str().unwrap();
            assert!(!why.is_empty(), "{engine} fell back without a reason");
        }
    }
    assert_eq!(points[0]["engine"], "sync");
}

#[test]
fn unknown_modes_and_engines_are_refused_before_anything_runs() {
    let env = Env::new();
    for (param, words) in [
        (
            "io-mode=none,fast",
            &["--param", "io-mode=fast", "setall"][..],
        ),
        ("engine=auto,sync", &["--param", "engine=auto", "uring"][..]),
        ("engine=sync,sync", &["--param", "twice"][..]),
    ] {
        env.sweep()
            .arg("read-iops")
            .param(param)
            .size("64M")
            .refused_leaving_nothing(words);
    }
}

/// A loop device with ext4 mounted on it (the data set's own file system) and the
/// schedulers its queue offers; None (through `skip`) without root, loop devices, mkfs.ext4
/// or a choice of schedulers.
fn scheduler_disk(env: &Env) -> Option<(Loop, Mount, String, Vec<String>)> {
    let dev = Loop::blank(env.path(), "disk.img", 256 << 20)?;
    if !sh("mkfs.ext4", &["-q", "-F", dev.path()]) {
        skip("no mkfs.ext4");
        return None;
    }
    let mount = Mount::new("ext4", "rw", dev.path(), &env.join("mnt"))?;
    let name = dev.path().trim_start_matches("/dev/").to_string();
    let (offered, _) = schedulers(&name);
    if offered.len() < 2 {
        skip(&format!("{name} offers one I/O scheduler: {offered:?}"));
        return None;
    }
    Some((dev, mount, name, offered))
}

/// What /sys/block/NAME/queue/scheduler offers, and the active one.
fn schedulers(name: &str) -> (Vec<String>, String) {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    let all = text
        .split_whitespace()
        .map(|w| w.trim_matches(['[', ']']).to_string())
        .collect();
    let active = text
        .split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(['[', ']']).to_string())
        .unwrap();
    (all, active)
}

fn set_scheduler(name: &str, s: &str) {
    std::fs::write(format!("/sys/block/{name}/queue/scheduler"), s).unwrap();
}

/// Puts back, when dropped, the scheduler a loop device had before the test changed it (a
/// detached loop device keeps its queue settings for the next test that attaches it).
struct Restore(String, String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(format!("/sys/block/{}/queue/scheduler", self.0), &self.1);
    }
}

#[test]
fn scheduler_sweep_runs_each_scheduler_and_puts_the_original_back() {
    let env = Env::new();
    let Some((_dev, mount, name, offered)) = scheduler_disk(&env) else {
        return;
    };
    let _restore = Restore(name.clone(), schedulers(&name).1);
    // Start from the last one offered, so that each point really changes it.
    let original = offered.last().unwrap().clone();
    set_scheduler(&name, &original);
    let swept: Vec<&str> = offered[..offered.len() - 1]
        .iter()
        .map(|s| s.as_str())
        .collect();
    let out = env
        .sweep()
        .arg("read-iops")
        .param(format!("scheduler={}", swept.join(",")))
        .target(mount.0.join("data"))
        .size("32M")
        .sessions(2)
        .duration("1s")
        .warmup("0s")
        .ok();
    assert_eq!(schedulers(&name).1, original, "the original is back");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("the I/O scheduler of {name} is {original} again")),
        "{stderr}"
    );
    let dir = only_run_dir(&env, "_sweep_read-iops_scheduler");
    let s = read_json(&dir.join("sweep.json"));
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), swept.len(), "{s}");
    for (p, sched) in points.iter().zip(&swept) {
        assert_eq!(p["value"], *sched);
        assert_eq!(p["scheduler"], format!("{name}={sched}"));
        // The point's own result saw the scheduler in its storage map.
        let r = read_json(&dir.join(p["run_dir"].as_str().unwrap()).join("result.json"));
        let text = r["storage"].to_string();
        let want = format!("\"scheduler\":\"{sched}\"");
        assert!(text.contains(&want), "{sched}: {text}");
    }
}

#[test]
fn scheduler_sweep_stopped_by_ctrl_c_puts_the_original_back() {
    let env = Env::new();
    let Some((_dev, mount, name, offered)) = scheduler_disk(&env) else {
        return;
    };
    let _restore = Restore(name.clone(), schedulers(&name).1);
    let original = offered[0].clone();
    set_scheduler(&name, &original);
    let others: Vec<&str> = offered[1..].iter().map(|s| s.as_str()).collect();
    let child = env
        .sweep()
        .arg("read-iops")
        .param(format!("scheduler={}", others.join(",")))
        .target(mount.0.join("data"))
        .size("32M")
        .sessions(2)
        .duration("30s")
        .warmup("0s")
        .process()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the first point runs with its scheduler set.
    let t0 = std::time::Instant::now();
    while schedulers(&name).1 == original {
        assert!(
            t0.elapsed().as_secs() < 60,
            "the sweep never set a scheduler"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill has no memory preconditions; the child is ours and still running.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert_eq!(
        schedulers(&name).1,
        original,
        "the original is back after Ctrl-C"
    );
}

#[test]
fn a_scheduler_the_disk_does_not_offer_is_refused_naming_those_it_does() {
    let env = Env::new();
    let Some((_dev, mount, name, offered)) = scheduler_disk(&env) else {
        return;
    };
    let _restore = Restore(name.clone(), schedulers(&name).1);
    let before = schedulers(&name).1;
    let data = mount.0.join("data");
    let line = env
        .sweep()
        .arg("read-iops")
        .param(format!("scheduler={},no-such-scheduler", offered[0]))
        .target(&data)
        .size("32M")
        .refused(&[
            "--param",
            "scheduler=no-such-scheduler",
            &offered.join(", "),
        ]);
    assert!(line.contains(&name), "{line}");
    assert_eq!(schedulers(&name).1, before, "nothing changed");
    assert!(!data.exists(), "no data set made");
    assert!(!env.join("dbio-runs").exists(), "no sweep directory made");
    // A data set on the system's own disk (the root file system) or in memory: refused.
    env.sweep()
        .arg("read-iops")
        .param(format!("scheduler={}", offered[0]))
        .target(env.join("beside"))
        .size("32M")
        .refused(&["--param scheduler"]);
    assert!(!env.join("beside").exists());
    // A name that is no scheduler at all never reaches sysfs.
    env.sweep()
        .arg("read-iops")
        .param("scheduler=none>x")
        .target(&data)
        .refused(&["--param", "scheduler=none>x"]);
}

#[test]
fn a_killed_scheduler_sweep_leaves_a_scheduler_doctor_names_and_clean_restores() {
    let env = Env::new();
    let Some((_dev, mount, name, offered)) = scheduler_disk(&env) else {
        return;
    };
    let _restore = Restore(name.clone(), schedulers(&name).1);
    let original = offered[0].clone();
    set_scheduler(&name, &original);
    let swept = offered[1].clone();
    let mut child = crate::util::Killed(
        env.sweep()
            .arg("read-iops")
            .param(format!("scheduler={swept}"))
            .target(mount.0.join("data"))
            .size("32M")
            .sessions(2)
            .duration("60s")
            .warmup("0s")
            .process()
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let t0 = std::time::Instant::now();
    while schedulers(&name).1 == original {
        assert!(
            t0.elapsed().as_secs() < 60,
            "the sweep never set a scheduler"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(schedulers(&name).1, swept, "kill -9 leaves it changed");
    let file = format!("/sys/block/{name}/queue/scheduler");
    let doctor = |args: &[&str]| {
        let out = env.bare().args(args).out();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = doctor(&["doctor"]);
    assert_eq!(code, Some(1), "{out}");
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("  {name}:")))
        .unwrap_or_else(|| panic!("{name} not named: {out}"));
    assert!(
        line.contains("STALE") && line.contains(&format!("echo {original} > {file}")),
        "{line}"
    );
    // Changed by someone else since: not dbio's to restore.
    let third = offered
        .iter()
        .find(|s| **s != original && **s != swept)
        .cloned();
    if let Some(third) = &third {
        set_scheduler(&name, third);
        let (code, out) = doctor(&["clean", "--stale"]);
        assert_eq!(code, Some(1), "{out}");
        assert!(out.contains(&format!("{name}: LEFT")), "{out}");
        assert_eq!(&schedulers(&name).1, third, "left alone");
        set_scheduler(&name, &swept);
    }
    let (code, out) = doctor(&["clean", "--stale"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(schedulers(&name).1, original, "restored: {out}");
    let (code, out) = doctor(&["doctor"]);
    assert!(!out.contains(&format!("  {name}:")), "{out}");
    // doctor looks at the whole machine: another test running beside this one (a killed
    // preparation, a run across hosts) may need attention too, but nothing a gone command
    // changed (the scheduler, restored) may.
    let attention = out
        .lines()
        .filter(|l| l.starts_with("Needs attention"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        code == Some(0)
            || (code == Some(1)
                && !attention.contains("made or changed by commands that are gone")),
        "{out}"
    );
}
