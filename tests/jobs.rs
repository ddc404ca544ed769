//! Job files (issue 6): classes, open-loop rates, verdicts.

use serde_json::Value;

use crate::util::{Env, f, u};

fn write_job(env: &Env, name: &str, text: &str) -> String {
    let path = env.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn class<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()
}

/// Every limit's PASS/FAIL follows from its numbers, and the class and run verdicts from
/// their limits.
fn assert_verdict_consistent(r: &Value) -> bool {
    let v = &r["verdict"];
    let mut all = true;
    for c in v["classes"].as_array().unwrap() {
        let mut class_pass = true;
        for l in c["limits"].as_array().unwrap() {
            let (req, got) = (f(&l["required"]), f(&l["measured"]));
            let pass = if l["op"] == "<=" {
                got <= req
            } else {
                got >= req
            };
            assert_eq!(l["result"], if pass { "PASS" } else { "FAIL" }, "{l}");
            class_pass &= pass;
        }
        assert_eq!(c["pass"], class_pass, "{c}");
        all &= class_pass;
    }
    assert_eq!(v["pass"], all);
    all
}

#[test]
fn the_data_warehouse_example_runs_and_its_verdict_matches_the_numbers() {
    let env = Env::new();
    let job = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/dw-peak.toml");
    let target = env.join("dw").display().to_string();
    let out = env.output(&[
        "run",
        "--job",
        job,
        "--target",
        &target,
        "--size",
        "512M",
        "--duration",
        "3s",
        "--warmup",
        "1s",
        "--json",
    ]);
    let code = out.status.code();
    assert!(
        matches!(code, Some(0) | Some(3)),
        "{code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["test"], "job");
    assert_eq!(r["config"]["block_size"], 16384);
    let names: Vec<&str> = r["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "multiblock reads",
            "single-block reads",
            "multiblock writes",
            "single-block writes"
        ]
    );
    let reads = class(&r, "multiblock reads");
    assert_eq!(reads["event"], "direct path read");
    assert_eq!(u(&reads["size_bytes"]), 784 << 10);
    assert_eq!(
        r["events"][u(&reads["event_index"]) as usize]["bytes"]
            .as_u64()
            .unwrap()
            % (784 << 10),
        0
    );
    assert_eq!(r["job"]["class"][0]["rate"], 156.0, "the job is embedded");
    let pass = assert_verdict_consistent(&r);
    assert_eq!(
        code,
        Some(if pass { 0 } else { 3 }),
        "exit 3 exactly when a class fails"
    );
}

const TWO_RATES: &str = r#"
[dataset]
size = "256M"
[run]
duration = "4s"
warmup = "1s"
[[class]]
name = "fast"
event = "db file sequential read"
size = "8K"
sessions = 2
rate = 2000
[[class]]
name = "slow"
event = "direct path read"
size = "1M"
sessions = 1
rate = 100
[class.limits]
min_iops = 95
"#;

#[test]
fn open_loop_classes_achieve_their_rates() {
    let Some(dir) = crate::util::shm_dir() else {
        return;
    };
    let env = Env::new();
    let job = write_job(&env, "two.toml", TWO_RATES);
    let target = dir.path().join("ds").display().to_string();
    let r = env.json(&[
        "run",
        "--job",
        &job,
        "--target",
        &target,
        "--out",
        &env.join("runs").display().to_string(),
        "--json",
    ]);
    for (name, rate) in [("fast", 2000.0), ("slow", 100.0)] {
        let c = class(&r, name);
        assert_eq!(c["arrival"], "fixed");
        let got = f(&c["rate_achieved"]);
        assert!(
            (got - rate).abs() <= 0.02 * rate,
            "{name}: {got} of {rate}/s"
        );
        assert!(
            c["service_us"].is_object() && c["lateness_mean_us"].is_number(),
            "{c}"
        );
    }
    assert!(assert_verdict_consistent(&r), "min_iops 95 at 100/s holds");
    let _ = env.output(&["clean", &target]);
}

#[test]
fn a_rate_far_above_capacity_shows_in_latency_not_in_service_time() {
    let env = Env::new();
    let job = write_job(
        &env,
        "over.toml",
        r#"
[dataset]
size = "64M"
[run]
duration = "2s"
warmup = "0s"
[[class]]
name = "flood"
event = "db file sequential read"
size = "8K"
sessions = 1
rate = 5000000
"#,
    );
    let r = env.json(&["run", "--job", &job, "--json"]);
    let c = class(&r, "flood");
    let e = &r["events"][0];
    let (latency_p99, service_p99) = (f(&e["latency_us"]["p99"]), f(&c["service_us"]["p99"]));
    assert!(
        f(&c["rate_achieved"]) < 5_000_000.0 * 0.5,
        "the device cannot keep up"
    );
    assert!(
        latency_p99 > 10.0 * service_p99,
        "latency from the schedule {latency_p99} µs vs service {service_p99} µs"
    );
    assert!(
        f(&c["lateness_mean_us"]) > 1000.0,
        "requests went out late: {c}"
    );
    assert!(f(&e["latency_us"]["mean"]) > f(&c["service_us"]["mean"]));
}

#[test]
fn a_failed_limit_exits_3_and_says_so() {
    let env = Env::new();
    let job = write_job(
        &env,
        "fail.toml",
        r#"
[dataset]
size = "64M"
[run]
duration = "1s"
warmup = "0s"
[[class]]
name = "reads"
event = "db file sequential read"
size = "8K"
[class.limits]
min_iops = 1e12
p99 = "10s"
"#,
    );
    let out = env.output(&["run", "--job", &job]);
    assert_eq!(out.status.code(), Some(3));
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("Requirement vs Actual — FAIL"),
        "{summary}"
    );
    assert!(
        summary
            .lines()
            .any(|l| l.contains("iops") && l.trim_end().ends_with("FAIL"))
    );
    assert!(
        summary
            .lines()
            .any(|l| l.contains("p99_ms") && l.trim_end().ends_with("PASS"))
    );
}

#[test]
fn bad_job_files_name_the_key_and_line() {
    let env = Env::new();
    for (text, needles) in [
        (
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\nsesions = 2\n",
            vec!["sesions", "line 4"],
        ),
        (
            "[run]\nduration = \"fast\"\n[[class]]\nevent = \"direct path read\"\nsize = \"1M\"\n",
            vec!["run.duration", "line 2"],
        ),
        (
            "[[class]]\nevent = \"log file sync\"\nsize = \"8K\"\n",
            vec!["class.event", "line 2"],
        ),
    ] {
        let job = write_job(&env, "bad.toml", text);
        let out = env.output(&["run", "--job", &job]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        for n in needles {
            assert!(err.contains(n), "{n} in {err}");
        }
    }
    let out = env.output(&["run", "read-iops", "--job", "x.toml"]);
    assert_eq!(out.status.code(), Some(2), "a test and a job file");
    let out = env.output(&["run", "--job", "missing.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--job missing.toml: no such file"));
}

#[test]
fn save_job_writes_a_job_that_runs_the_same_io() {
    let env = Env::new();
    let saved = env.join("saved.toml").display().to_string();
    let a = env.json(&crate::util::quick(
        "read-iops",
        &["--sync", "--save-job", &saved],
    ));
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(
        text.contains("event = \"db file sequential read\""),
        "{text}"
    );
    let b = env.json(&["run", "--job", &saved, "--json"]);
    assert_eq!(b["events"][0]["name"], a["events"][0]["name"]);
    assert_eq!(b["config"]["sessions"], a["config"]["sessions"]);
    assert_eq!(b["config"]["duration_s"], a["config"]["duration_s"]);
    assert_eq!(b["config"]["size_bytes"], a["config"]["size_bytes"]);
    assert_eq!(u(&b["config"]["seed"]), u(&a["config"]["seed"]));
}

#[test]
fn matrix_runs_its_points_and_writes_the_grids() {
    let env = Env::new();
    let out = env.output(&[
        "matrix",
        "--matrix",
        "detailed",
        "--size",
        "64M",
        "--num-small",
        "2",
        "--num-large",
        "1",
        "--point-duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: Value = serde_json::from_slice(&out.stdout).unwrap();
    let points: Vec<(u64, u64)> = m["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (u(&p["small"]), u(&p["large"])))
        .collect();
    // Every combination of small 0, 1, 2 and large 0, 1 but the empty one.
    assert_eq!(points, [(1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
    for p in m["points"].as_array().unwrap() {
        assert_eq!(f(&p["small_iops"]) > 0.0, u(&p["small"]) > 0, "{p}");
        assert_eq!(f(&p["large_mib_per_s"]) > 0.0, u(&p["large"]) > 0, "{p}");
        // Each point is an ordinary run with its own result.
        let r: Value = serde_json::from_str(
            &std::fs::read_to_string(env.join(p["run_dir"].as_str().unwrap()).join("result.json"))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(r["test"], "job");
    }
    let best = f(&m["max_small_iops"]["small_iops"]);
    assert!(
        m["points"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| f(&p["small_iops"]) <= best)
    );
    let runs = env.join("dbio-runs");
    let dir = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("_matrix_detailed_"))
        .unwrap();
    let iops = std::fs::read_to_string(dir.join("iops.csv")).unwrap();
    assert_eq!(iops.lines().next(), Some("large\\small,1,2"), "{iops}");
    assert_eq!(iops.lines().count(), 3, "rows for large 0 and 1: {iops}");
    let mbps = std::fs::read_to_string(dir.join("mbps.csv")).unwrap();
    assert_eq!(mbps.lines().next(), Some("large\\small,0,1,2"), "{mbps}");
    assert_eq!(mbps.lines().count(), 2, "one row, large 1: {mbps}");
    for f in ["mbps.csv", "lat.csv", "matrix.txt", "matrix.json"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
}

#[test]
fn a_classic_test_at_a_rate_runs_open_loop() {
    let env = Env::new();
    let r = env.json(&crate::util::quick(
        "read-iops",
        &["--sync", "--rate", "500", "--arrival", "poisson"],
    ));
    assert_eq!(r["test"], "read-iops");
    let c = &r["classes"][0];
    assert_eq!(c["arrival"], "poisson");
    assert_eq!(f(&c["rate_target"]), 500.0);
    assert!(c["service_us"].is_object());
    // Poisson arrivals over 2 s: about 1,000 requests, well within ±25 %.
    assert!((f(&c["rate_achieved"]) - 500.0).abs() < 125.0, "{c}");
    let out = env.output(&crate::util::quick("redo", &["--rate", "100"]));
    assert_eq!(out.status.code(), Some(2), "redo has no open-loop class");
}

#[test]
fn a_curve_loads_the_storage_at_shares_of_its_maximum() {
    let Some(dir) = crate::util::shm_dir() else {
        return;
    };
    let env = Env::new();
    let target = dir.path().join("ds").display().to_string();
    let s = env.json(&[
        "sweep",
        "read-iops",
        "--sync",
        "--curve",
        "--target",
        &target,
        "--size",
        "64M",
        "--sessions",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
    ]);
    assert_eq!(s["param"], "rate");
    let values: Vec<u64> = s["values"].as_array().unwrap().iter().map(u).collect();
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 7, "the maximum, then 6 loads");
    assert_eq!(points[0]["label"], "max");
    let max = values[0];
    assert_eq!(u(&points[0]["value"]), max);
    for (pct, v) in [10, 50, 70, 80, 90, 100].iter().zip(&values[1..]) {
        assert_eq!(*v, (max * pct / 100).max(1));
    }
    // Each load point is an open-loop run at its rate, in the sweep's directory.
    let sweep_dir = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_sweep_read-iops_rate"))
        .expect("sweep directory");
    for (p, v) in points[1..].iter().zip(&values[1..]) {
        let text = std::fs::read_to_string(
            sweep_dir
                .join(p["run_dir"].as_str().unwrap())
                .join("result.json"),
        )
        .unwrap();
        let r: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(f(&r["classes"][0]["rate_target"]), *v as f64);
    }
    let light = &points[1];
    assert!(
        (f(&light["iops"]) - values[1] as f64).abs() <= 0.05 * values[1] as f64,
        "10 % load achieved: {light}"
    );
    let _ = env.output(&["clean", &target]);
}
