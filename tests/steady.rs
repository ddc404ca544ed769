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

/// The one directory a run or sweep wrote into `out`.
fn only_dir(out: &std::path::Path) -> std::path::PathBuf {
    let dirs: Vec<_> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
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
    let dir = only_dir(&out);
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
        .out_dir(env.join("out"))
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
    // The verdict section says why.
    let dir = std::fs::read_dir(env.join("out"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(
        summary.contains("Requirement vs Actual — FAIL"),
        "{summary}"
    );
    assert!(
        summary
            .lines()
            .any(|l| l.contains("steady state not reached") && l.trim_end().ends_with("FAIL")),
        "{summary}"
    );
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
    // The value is optional: a test typed after the flag is not taken for it silently.
    env.cmd("run")
        .arg("--steady-state")
        .arg("read-iops")
        .engine("null")
        .target(env.join("ds"))
        .refused_leaving_nothing(&["--steady-state", "is a test"]);
}

/// The metrics file read by a real Prometheus parser: `promtool check metrics` (Debian's
/// `prometheus` package; .ci/install-deps installs it) must accept it without a problem —
/// every family typed and described, counters named `*_total` — and, in the Prometheus text
/// format node_exporter's textfile collector reads, nothing of OpenMetrics alone (`# EOF`,
/// `# UNIT`, `_created` series, which it takes for untyped series of their own). Every sample
/// belongs to a family typed before it, a `*_total` one to a counter. Returns each sample's
/// value by its name and labels.
pub(crate) fn check_metrics(text: &str) -> std::collections::BTreeMap<String, f64> {
    use std::collections::BTreeMap;
    use std::io::Write;
    match std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        Err(_) => crate::util::skip("promtool (Debian package prometheus) is not installed"),
        Ok(mut child) => {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success() && said.trim().is_empty(),
                "promtool check metrics: {said}\n{text}"
            );
        }
    }
    for gone in ["# EOF", "# UNIT", "_created"] {
        assert!(!text.contains(gone), "{gone} in the file: {text}");
    }
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (family, t) = rest.split_once(' ').expect("# TYPE NAME TYPE");
            assert!(types.insert(family.into(), t.into()).is_none(), "{line}");
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("a sample: NAME{...} VALUE");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value in {line}"));
        let name = series.split('{').next().unwrap();
        let t = ["", "_bucket", "_count", "_sum"]
            .iter()
            .find_map(|suffix| types.get(name.strip_suffix(suffix)?))
            .unwrap_or_else(|| panic!("an untyped sample: {line}"));
        if name.ends_with("_total") {
            assert_eq!(t, "counter", "{line}");
        }
        assert!(
            samples.insert(series.to_string(), value).is_none(),
            "twice: {line}"
        );
    }
    for counter in [
        "dbio_requests_total",
        "dbio_bytes_total",
        "dbio_errors_total",
    ] {
        assert_eq!(
            types.get(counter).map(String::as_str),
            Some("counter"),
            "{text}"
        );
    }
    assert!(
        text.starts_with("# TYPE dbio_metrics_file gauge\n"),
        "the marker family first: {text}"
    );
    samples
}

/// The `dbio_requests_total` of the exposition (one event).
pub(crate) fn requests_total(samples: &std::collections::BTreeMap<String, f64>) -> f64 {
    samples
        .iter()
        .filter(|(k, _)| k.starts_with("dbio_requests_total{"))
        .map(|(_, v)| v)
        .sum()
}

/// A null-engine read-iops run of `duration` writing its metrics to `file`, started.
fn metrics_run(env: &Env, file: &std::path::Path, duration: &str) -> std::process::Child {
    env.run("read-iops")
        .engine("null")
        .size("64M")
        .sessions(2)
        .warmup("0s")
        .duration(duration)
        .quiet()
        .path_opt("--metrics", file)
        .process()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn metrics_are_written_every_second_and_go_at_the_end() {
    let env = Env::new();
    let file = env.join("dbio.prom");
    let mut child = metrics_run(&env, &file, "5s");
    let t0 = std::time::Instant::now();
    let mut seen = Vec::new();
    while t0.elapsed() < std::time::Duration::from_secs(30) {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if let Ok(text) = std::fs::read_to_string(&file)
            && text.contains("dbio_requests_total")
        {
            let samples = check_metrics(&text);
            let run_id = samples.keys().find(|k| k.contains("run_id=\"")).unwrap();
            assert!(
                run_id.contains("read-iops_"),
                "the run directory's name: {run_id}"
            );
            assert!(run_id.contains("test=\"read-iops\""), "{run_id}");
            let elapsed = samples
                .iter()
                .find(|(k, _)| k.starts_with("dbio_elapsed_seconds{"))
                .map(|(_, v)| *v)
                .expect("dbio_elapsed_seconds");
            seen.push((elapsed, requests_total(&samples)));
        }
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    seen.dedup_by(|a, b| a.0 == b.0);
    assert!(seen.len() >= 3, "parsed at several seconds: {seen:?}");
    assert!(
        seen.windows(2).all(|w| w[1].0 > w[0].0 && w[1].1 > w[0].1),
        "seconds and requests grow: {seen:?}"
    );
    assert!(!file.exists(), "the metrics file goes at the end");

    // Kept with --metrics-keep: the last second's totals match the result's.
    let r = env
        .run("read-iops")
        .engine("null")
        .size("64M")
        .sessions(2)
        .warmup("0s")
        .duration("2s")
        .path_opt("--metrics", &file)
        .arg("--metrics-keep")
        .json();
    let samples = check_metrics(&std::fs::read_to_string(&file).unwrap());
    assert_eq!(
        requests_total(&samples),
        f(&r["events"][0]["requests"]),
        "running totals add up to the result's"
    );
}

#[test]
fn bad_metrics_places_are_refused_before_anything() {
    let env = Env::new();
    let dir = env.join("adir");
    std::fs::create_dir(&dir).unwrap();
    let fifo = env.join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let link = env.join("link");
    std::os::unix::fs::symlink(env.join("elsewhere"), &link).unwrap();
    for place in [dir, fifo, link, env.join("missing/dbio.prom")] {
        env.run("read-iops")
            .engine("null")
            .size("64M")
            .duration("2s")
            .path_opt("--metrics", &place)
            .refused_leaving_nothing(&["--metrics"]);
    }
    assert!(!env.join("elsewhere").exists());
    env.run("read-iops")
        .engine("null")
        .arg("--metrics-keep")
        .refused_leaving_nothing(&["--metrics"]);
    env.cmd("sweep")
        .arg("read-iops")
        .engine("null")
        .param("sessions=1,2")
        .path_opt("--metrics", env.join("m.prom"))
        .refused_leaving_nothing(&["--metrics"]);
}

#[test]
fn an_interrupted_run_removes_its_metrics_file_too() {
    let env = Env::new();
    let file = env.join("dbio.prom");
    let mut child = metrics_run(&env, &file, "60s");
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(&file).is_ok_and(|t| t.contains("dbio_requests_total")) {
        assert!(t0.elapsed().as_secs() < 30, "no metrics written");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert!(!file.exists(), "the metrics file goes on Ctrl-C too");
}

#[test]
fn a_sweep_says_for_each_point_whether_it_held_steady() {
    let env = Env::new();
    for (rule, duration, held) in [
        ("iops:60:60", "40s", true),
        ("iops:0.0001:0.0001", "6s", false),
    ] {
        let out = env.join(if held { "held" } else { "never" });
        let table = env
            .sweep()
            .arg("read-iops")
            .engine("null")
            .param("sessions=1,2")
            .size("64M")
            .warmup("0s")
            .duration(duration)
            .opt("--round", "1s")
            .opt("--steady-state", rule)
            .out_dir(&out)
            .stdout();
        let dir = only_dir(&out);
        let s: Value =
            serde_json::from_slice(&std::fs::read(dir.join("sweep.json")).unwrap()).unwrap();
        let points = s["points"].as_array().unwrap();
        assert_eq!(points.len(), 2, "{s}");
        for p in points {
            let r: Value = serde_json::from_slice(
                &std::fs::read(dir.join(p["run_dir"].as_str().unwrap()).join("result.json"))
                    .unwrap(),
            )
            .unwrap();
            let (ps, rs) = (&p["steady_state"], &r["steady_state"]);
            assert_eq!(ps["reached"], held, "{rule}: {ps}");
            assert_eq!(ps["reached"], rs["reached"], "{rule}");
            assert_eq!(ps["reached_round"], rs["reached_round"], "{rule}");
            assert_eq!(
                ps["rounds"],
                rs["rounds"].as_array().unwrap().len(),
                "{rule}"
            );
            let label = p["label"].as_str().unwrap();
            let row = table
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{label} ")))
                .unwrap_or_else(|| panic!("no row {label}: {table}"));
            if held {
                let n = ps["reached_round"].as_u64().unwrap();
                assert!(n >= 5, "a window of 5 rounds: {ps}");
                assert!(row.contains(&format!("round {n} of {n}")), "{row}");
                assert_eq!(r["stop_reason"], "steady_state");
            } else {
                assert!(row.contains("not reached (6 rounds)"), "{row}");
            }
        }
    }
}

/// On a (loop) device, writes: every round's figure is there, the window's range and slope
/// are those of the last 5 rounds, and the run ended either after the round that held (then
/// within the rule) or at the end of its budget (then not steady).
#[test]
fn a_steady_state_write_run_on_a_loop_device_reports_its_rounds() {
    let env = Env::new();
    let Some(dev) = crate::util::Loop::blank(env.path(), "disk.img", 64 << 20) else {
        return;
    };
    let r = env
        .run("write-iops")
        .target(dev.path())
        .destructive()
        .yes()
        .sessions(2)
        .warmup("0s")
        .duration("12s")
        .opt("--round", "1s")
        .opt("--steady-state", "iops:20:10")
        .json();
    let s = &r["steady_state"];
    let rounds = rounds(s);
    assert!(rounds.len() >= 5 && rounds.iter().all(|&v| v > 0.0), "{s}");
    let (range, slope) = judge(&rounds);
    assert!((range - f(&s["window_range_pct"])).abs() < 1e-6, "{s}");
    assert!((slope - f(&s["window_slope_pct"])).abs() < 1e-6, "{s}");
    if s["reached"] == true {
        assert_eq!(
            s["reached_round"].as_u64(),
            Some(rounds.len() as u64),
            "{s}"
        );
        assert!(range <= 20.0 && slope <= 10.0, "{s}");
        assert_eq!(r["stop_reason"], "steady_state");
    } else {
        assert_eq!(rounds.len(), 12, "every round of the budget: {s}");
        assert!(range > 20.0 || slope > 10.0, "{s}");
        assert_eq!(r["stop_reason"], "completed");
    }
    let written: f64 = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| f(&e["requests"]))
        .sum();
    assert!(written > 0.0, "{r}");
}

#[test]
fn a_metrics_file_not_named_prom_gets_a_warning() {
    // node_exporter's textfile collector reads only *.prom: another name is collected by
    // nothing there, which the user hears of (the run goes on: anything may read it).
    let env = Env::new();
    for (name, warned) in [("m.txt", true), ("m.prom", false)] {
        let out = env
            .run("read-iops")
            .engine("null")
            .size("64M")
            .sessions(1)
            .warmup("0s")
            .duration("1s")
            .quiet()
            .path_opt("--metrics", env.join(name))
            .arg("--metrics-keep")
            .out();
        assert!(out.status.success(), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let warning = err
            .lines()
            .any(|l| l.starts_with("dbio: warning: --metrics") && l.contains("*.prom"));
        assert_eq!(warning, warned, "{name}: {err}");
        // Either way, a file a Prometheus parser reads.
        check_metrics(&std::fs::read_to_string(env.join(name)).unwrap());
    }
}
