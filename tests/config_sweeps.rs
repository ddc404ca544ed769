//! Configuration sweeps: one point per io mode or engine, each an ordinary run whose
//! result says which open flags and engine it used, and the sweep saying the same.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::Env;

/// The one sweep directory under `<env>/dbio-runs` whose name contains `what`.
fn sweep_dir(env: &Env, what: &str) -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(env.join("dbio-runs"))
        .expect("dbio-runs")
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(what))
        .collect();
    assert_eq!(dirs.len(), 1, "one {what} directory: {dirs:?}");
    dirs[0].clone()
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

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
    let dir = sweep_dir(env, &format!("_sweep_read-iops_{name}"));
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
