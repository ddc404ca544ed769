//! `dbio run --steady-state`: the window cut into rounds ends once the last 5 rounds hold
//! steady (a clean end), says so in result.json and the summary, and a job with limits
//! that never got steady cannot pass.

use crate::util::Env;
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Range and slope excursion of the last 5 rounds, in % of their average.
fn judge(rounds: &[f64]) -> (f64, f64) {
    let w = &rounds[rounds.len() - 5..];
    let avg = w.iter().sum::<f64>() / 5.0;
    let max = w.iter().copied().fold(f64::MIN, f64::max);
    let min = w.iter().copied().fold(f64::MAX, f64::min);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in w.iter().enumerate() {
        sxy += (i as f64 - 2.0) * (y - avg);
        sxx += (i as f64 - 2.0).powi(2);
    }
    (
        (max - min) / avg * 100.0,
        (sxy / sxx).abs() * 5.0 / avg * 100.0,
    )
}

fn rounds(s: &Value) -> Vec<f64> {
    s["rounds"].as_array().unwrap().iter().map(f).collect()
}

#[test]
fn a_steady_run_ends_cleanly_after_the_round_that_held() {
    let env = Env::new();
    let r = env
        .run("read-iops")
        .engine("null")
        .size("64M")
        .sessions(2)
        .warmup("0s")
        .duration("60s")
        .opt("--round", "1s")
        .opt("--steady-state", "iops:60:60")
        .json();
    let s = &r["steady_state"];
    assert_eq!(s["metric"], "iops");
    assert_eq!((f(&s["range_pct"]), f(&s["slope_pct"])), (60.0, 60.0));
    assert_eq!(f(&s["round_s"]), 1.0);
    assert_eq!(s["reached"], true, "{s}");
    let n = s["reached_round"].as_u64().expect("reached_round") as usize;
    let rounds = rounds(s);
    assert!(n >= 5, "5 rounds are judged together: {s}");
    assert_eq!(
        rounds.len(),
        n,
        "the run ends after the round that held: {s}"
    );
    assert!(rounds.iter().all(|&v| v > 0.0), "{s}");
    let (range, slope) = judge(&rounds);
    assert!(
        (range - f(&s["window_range_pct"])).abs() < 1e-6,
        "{range} {s}"
    );
    assert!(
        (slope - f(&s["window_slope_pct"])).abs() < 1e-6,
        "{slope} {s}"
    );
    assert!(range <= 60.0 && slope <= 60.0, "{s}");
    // A clean end, early: not interrupted, measured about the rounds' length.
    assert_eq!(r["stop_reason"], "steady_state");
    assert_eq!(r["partial"], false);
    let secs = f(&r["measured_seconds"]);
    assert!(
        secs >= n as f64 && secs < n as f64 + 1.5,
        "{secs} s, {n} rounds"
    );
    assert!(
        !r["warnings"].to_string().contains("interrupted"),
        "{}",
        r["warnings"]
    );
    // docs/result-json.md names the field and every key of it.
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/result-json.md"),
    )
    .unwrap();
    assert!(doc.contains("| `steady_state` |"));
    for k in s.as_object().unwrap().keys() {
        assert!(
            doc.contains(&format!("| `{k}` |")),
            "`{k}` not in docs/result-json.md"
        );
    }
}

#[test]
fn a_run_that_never_holds_steady_says_so() {
    let env = Env::new();
    let out = env.join("out");
    env.run("read-iops")
        .engine("null")
        .size("64M")
        .sessions(2)
        .warmup("0s")
        .duration("6s")
        .opt("--round", "1s")
        .opt("--steady-state", "iops:0.0001:0.0001")
        .out_dir(&out)
        .quiet()
        .ok();
    let dir = std::fs::read_dir(&out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let r: Value =
        serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap();
    let s = &r["steady_state"];
    assert_eq!(s["reached"], false, "{s}");
    assert!(s["reached_round"].is_null(), "{s}");
    assert_eq!(rounds(s).len(), 6, "one figure per whole round: {s}");
    assert!(f(&s["window_range_pct"]) > 0.0001, "{s}");
    assert_eq!(r["stop_reason"], "completed");
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(summary.contains("Steady state — not reached"), "{summary}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Steady state — not reached"));
    assert!(html.contains("<svg"), "the rounds are drawn");
}

#[test]
fn a_job_with_limits_that_never_held_steady_fails() {
    let env = Env::new();
    let job = env.join("limits.toml");
    std::fs::write(
        &job,
        r#"
[dataset]
size = "64M"
[run]
duration = "5s"
warmup = "0s"
[[class]]
name = "reads"
event = "db file sequential read"
size = "8K"
[class.limits]
p99 = "10s"
"#,
    )
    .unwrap();
    let out = env
        .run_job(&job)
        .engine("null")
        .opt("--round", "1s")
        .opt("--steady-state", "iops:0.0001:0.0001")
        .arg("--json")
        .out();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = &r["verdict"];
    assert_eq!(v["pass"], false, "{v}");
    assert_eq!(v["classes"][0]["pass"], true, "the limit itself held: {v}");
    assert_eq!(v["failed"][0], "steady state not reached", "{v}");
    assert_eq!(r["steady_state"]["reached"], false);
}

#[test]
fn bad_steady_state_values_are_refused_before_anything() {
    let env = Env::new();
    let bad: &[(&[(&str, &str)], &str)] = &[
        (&[("--round", "0s")], "--round"),
        (&[("--steady-state", "bogus:20:10")], "--steady-state"),
        (&[("--steady-state", "iops:20")], "--steady-state"),
        (&[("--steady-state", "iops:0:10")], "--steady-state"),
        (&[("--steady-state", "iops:20:x")], "--steady-state"),
        // 30 s cannot hold 5 rounds of 10 s.
        (
            &[("--steady-state", "iops:20:10"), ("--duration", "30s")],
            "--round",
        ),
    ];
    for (opts, word) in bad {
        let mut c = env.run("read-iops").engine("null").target(env.join("ds"));
        for (k, v) in *opts {
            c = c.opt(k, v);
        }
        c.refused_leaving_nothing(&[word]);
    }
}
