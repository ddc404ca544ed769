//! Sweeps and calibration: many ordinary runs summed up as one answer. Points are short and
//! the data sets small; nothing here asserts on timing beyond "the chosen point kept the
//! latency limit".

use std::path::Path;

use serde_json::Value;

use crate::util::{Env, f, files_under, only_run_dir, read_json, shm_dir};

/// The event with the most wait time, as the sweep's figures use.
fn main_event(r: &Value) -> &Value {
    r["events"]
        .as_array()
        .unwrap()
        .iter()
        .max_by(|a, b| f(&a["wait_time_s"]).total_cmp(&f(&b["wait_time_s"])))
        .expect("an event")
}

#[test]
fn sweep_over_sessions_writes_a_table_json_csv_and_a_chart() {
    let env = Env::new();
    let out = env
        .sweep()
        .arg("read-iops")
        .param("sessions=1,2")
        .size("64M")
        .duration("1s")
        .warmup("0s")
        .out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "dbio sweep failed: {stderr}");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("over sessions: 2 of 2 point(s)"), "{table}");
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.contains("db file parallel read"))
        .collect();
    assert_eq!(rows.len(), 2, "{table}");
    assert!(rows[0].trim_start().starts_with('1') && rows[1].trim_start().starts_with('2'));

    let dir = only_run_dir(&env, "_sweep_read-iops_sessions");
    let s = read_json(&dir.join("sweep.json"));
    assert_eq!(s["schema"], "dbio.sweep.v1");
    assert_eq!(s["param"], "sessions");
    assert_eq!(s["complete"], true);
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for (p, sessions) in points.iter().zip([1, 2]) {
        assert_eq!(p["value"], sessions);
        let r = read_json(&dir.join(p["run_dir"].as_str().unwrap()).join("result.json"));
        assert_eq!(
            r["config"]["sessions"], sessions,
            "each point is its own run"
        );
        let e = main_event(&r);
        assert_eq!(p["main_event"], e["name"]);
        assert_eq!(p["iops"], e["iops"], "IOPS equal the point's result.json");
        assert_eq!(p["mib_per_s"], e["mib_per_s"]);
        for k in ["mean", "p50", "p95", "p99", "max"] {
            assert_eq!(p["latency_us"][k], e["latency_us"][k], "{k}");
        }
        assert_eq!(p["totals"]["read_iops"], r["totals"]["read_iops"]);
    }
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(lines[0].starts_with("sessions,iops,mib_per_s,mean_us,p50_us"));
    for (line, p) in lines[1..].iter().zip(points) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[0], p["value"].to_string());
        assert_eq!(cells[1].parse::<f64>().unwrap(), f(&p["iops"]), "{line}");
        assert_eq!(cells[6].parse::<f64>().unwrap(), f(&p["latency_us"]["p99"]));
    }
    let html = std::fs::read_to_string(dir.join("sweep.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("IOPS by sessions"));
    assert!(!html.contains("<script") && !html.contains("http://"));
    // Both points ran and are recorded like any run.
    let files = files_under(&dir);
    assert_eq!(
        files.iter().filter(|f| f.ends_with("result.json")).count(),
        2
    );
    let runs = env.runs().json();
    assert_eq!(runs.as_array().unwrap().len(), 2);
}

#[test]
fn sweep_rejects_unknown_parameters_and_bad_values() {
    let env = Env::new();
    for (param, names) in [
        ("bogus=1", "sessions, block-size, temp-io, depth, batch"),
        ("block-size=3K", "power of two"),
        ("sessions=1,1", "twice"),
    ] {
        let out = env.sweep().arg("read-iops").param(param).out();
        assert_eq!(out.status.code(), Some(2), "--param {param}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.contains("--param") && stderr.contains(names),
            "{stderr}"
        );
    }
    // A combination `dbio run` refuses is refused before any point runs.
    let out = env
        .sweep()
        .arg("read-mbps")
        .param("block-size=8K,1M")
        .opt("--mbrc", 128)
        .duration("1s")
        .out();
    assert_eq!(out.status.code(), Some(2));
    assert!(!env.join("dbio-runs").exists(), "nothing ran");
}

fn calibrate(env: &Env, target: &Path, extra: &[&str]) -> Value {
    let data = target.join("data").display().to_string();
    env.cmd("calibrate")
        .target(&data)
        .size("64M")
        .opt("--point-duration", "300ms")
        .warmup("0s")
        .arg("--json")
        .args(extra)
        .json()
}

#[test]
fn calibrate_walks_up_and_the_chosen_point_keeps_the_limit() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let c = calibrate(&env, shm.path(), &["--max-outstanding", "8"]);
    assert_eq!(c["schema"], "dbio.calibrate.v1");
    assert_eq!(c["complete"], true);
    assert_eq!(c["limit"]["stat"], "p95");
    assert_eq!(f(&c["limit"]["us"]), 10_000.0);
    let small = c["small_reads"]["curve"].as_array().unwrap();
    assert!(!small.is_empty());
    assert_eq!(c["small_reads"]["event"], "db file parallel read");
    let outstanding: Vec<u64> = small
        .iter()
        .map(|p| p["outstanding"].as_u64().unwrap())
        .collect();
    assert_eq!(outstanding[0], 1, "the walk starts at 1 outstanding");
    assert!(outstanding.iter().all(|&o| o <= 8), "{outstanding:?}");
    for p in small {
        assert_eq!(
            p["outstanding"].as_u64().unwrap(),
            p["sessions"].as_u64().unwrap() * p["per_session"].as_u64().unwrap()
        );
    }
    let best = &c["max_iops"];
    assert!(best.is_object(), "a max-IOPS point: {c}");
    assert!(f(&best["latency_us"]["p95"]) <= 10_000.0, "the limit holds");
    assert_eq!(best["within_limit"], true);
    assert!(small.iter().any(|p| p["run_dir"] == best["run_dir"]));
    assert!(!c["large_reads"]["curve"].as_array().unwrap().is_empty());
    assert_eq!(c["large_reads"]["event"], "direct path read");
    assert!(f(&c["max_mib_per_s"]["mib_per_s"]) > 0.0);
    assert!(f(&c["single_session_mib_per_s"]) > 0.0);
    assert_eq!(c["single_session"]["curve"][0]["sessions"], 1);
    let dir = only_run_dir(&env, "_calibrate");
    let on_disk = read_json(&dir.join("calibrate.json"));
    assert_eq!(on_disk["small_reads"], c["small_reads"]);

    // A limit nothing can keep: no answer rather than one over the limit, and the walk
    // stops at its first point.
    let c = calibrate(
        &env,
        shm.path(),
        &["--max-latency", "p99=1us", "--max-outstanding", "2"],
    );
    assert!(c["max_iops"].is_null(), "{}", c["max_iops"]);
    let small = c["small_reads"]["curve"].as_array().unwrap();
    assert_eq!(small.len(), 1);
    assert_eq!(small[0]["within_limit"], false);
    assert!(
        c["small_reads"]["stopped_because"]
            .as_str()
            .unwrap()
            .contains("crossed the limit")
    );
    let out = env
        .clean(shm.path().join("data").display().to_string())
        .out();
    assert!(out.status.success());
}

#[test]
fn calibrate_rejects_a_bad_limit() {
    let env = Env::new();
    let out = env.cmd("calibrate").opt("--max-latency", "p97=1ms").out();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--max-latency") && stderr.contains("p95"),
        "{stderr}"
    );
}
