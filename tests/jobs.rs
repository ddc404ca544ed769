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

/// Runs example job `name` (examples/) on a small data set; its exit status and result.
fn run_example(env: &Env, name: &str, size: &str, duration: &str) -> (Option<i32>, Value) {
    let job = format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"));
    let target = env.join("ds").display().to_string();
    let out = env
        .run_job(&job)
        .target(&target)
        .size(size)
        .duration(duration)
        .warmup("1s")
        .arg("--json")
        .out();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0) | Some(3)),
        "{code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, serde_json::from_slice(&out.stdout).unwrap())
}

/// The names of a result's events, in order.
fn event_names(r: &Value) -> Vec<&str> {
    r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect()
}

#[test]
fn the_data_warehouse_example_runs_and_its_verdict_matches_the_numbers() {
    let env = Env::new();
    let (code, r) = run_example(&env, "dw-peak.toml", "512M", "3s");
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
    let r = env
        .run_job(&job)
        .target(&target)
        .out_dir(env.join("runs").display().to_string())
        .json();
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
    let _ = env.clean(&target).out();
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
    let r = env.run_job(&job).json();
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

/// The test engine stalls the device 100 ms in every 500 ms. Closed loop, each session
/// waits out one stalled request and issues nothing meanwhile, so the stall hides in the
/// max (coordinated omission). Open loop, the arrivals due during the stall wait too and
/// their latency from the schedule shows it, while their service time stays small.
#[test]
fn a_stalling_device_shows_in_latency_from_the_schedule_not_in_service_time() {
    let Some(dir) = crate::util::shm_dir() else {
        return;
    };
    let target = dir.path().join("ds").display().to_string();
    let env = Env::new();
    let run = |rate: Option<&str>| {
        let mut text = String::from(
            "[dataset]\nsize = \"64M\"\n[run]\nduration = \"3s\"\nwarmup = \"0s\"\n[[class]]\nname = \"reads\"\nevent = \"db file parallel read\"\nsize = \"8K\"\nbatch = 1\nsessions = 4\n",
        );
        if let Some(rate) = rate {
            text.push_str(&format!("rate = {rate}\n"));
        }
        let job = write_job(&env, "stall.toml", &text);
        let out = env
            .run_job(&job)
            .target(&target)
            .arg("--json")
            .env("DBIO_FAULT_STALL", "500ms:100ms")
            .out();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let open = run(Some("1000"));
    assert!(
        open["config"]["engine_notes"]
            .to_string()
            .contains("DBIO_FAULT_STALL"),
        "the result says the device was a test engine"
    );
    let (c, e) = (class(&open, "reads"), &open["events"][0]);
    assert!((f(&c["rate_achieved"]) - 1000.0).abs() < 50.0, "{c}");
    // A fifth of the time is stalled: a tenth of the arrivals wait 50 ms or more.
    let (latency_p90, service_p90) = (f(&e["latency_us"]["p90"]), f(&c["service_us"]["p90"]));
    assert!(latency_p90 > 20_000.0, "latency p90 {latency_p90} µs: {e}");
    assert!(service_p90 < 5_000.0, "service p90 {service_p90} µs: {c}");
    assert!(
        f(&c["service_us"]["max"]) > 50_000.0,
        "the stalled requests themselves took the stall: {c}"
    );
    // The same device closed loop: the stall is in the max only.
    let closed = run(None);
    let e = &closed["events"][0];
    assert!(f(&e["latency_us"]["max"]) > 50_000.0, "{e}");
    assert!(
        f(&e["latency_us"]["p90"]) < 5_000.0,
        "closed loop hides the stall below the max: {e}"
    );
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
    let out = env.run_job(&job).out();
    assert_eq!(out.status.code(), Some(3));
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.contains("Requirement vs Actual — FAIL"),
        "{summary}"
    );
    assert!(summary.lines().any(|l| l.contains("IOPS")
        && l.contains("≥ 1000000000000")
        && l.trim_end().ends_with("FAIL")));
    assert!(summary.lines().any(|l| l.contains(" p99 ")
        && l.contains("≤ 10000 ms")
        && l.trim_end().ends_with("PASS")));
    // The verdict is the first thing after the title line.
    assert!(
        summary
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("Requirement vs Actual — FAIL")
            || summary
                .lines()
                .nth(2)
                .unwrap()
                .starts_with("Requirement vs Actual — FAIL"),
        "{summary}"
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
            "[[class]]\nevent = \"free buffer waits\"\nsize = \"8K\"\n",
            vec!["class.event", "line 2", "oltp"],
        ),
        (
            "[[class]]\nevent = \"direct path read\"\nsize = { \"1M\" = 1, \"96K\" = \"x\" }\n",
            vec!["class.size", "line 3", "96K"],
        ),
        (
            "[run]\ntest = \"oltp\"\n[oltp]\nwork_unit = 0\n",
            vec!["oltp.work_unit", "line 4"],
        ),
        // An open loop's schedule sets the pace: think or depth beside a rate is refused,
        // not ignored.
        (
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\nrate = 100\nthink = \"1ms\"\n",
            vec!["class.think", "line 5"],
        ),
        (
            "[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\nrate = 100\nthink = \"1ms\"\n",
            vec!["class.think", "line 5"],
        ),
        (
            "[[class]]\nevent = \"direct path read\"\nsize = \"1M\"\nrate = 100\ndepth = 4\n",
            vec!["class.depth", "line 5"],
        ),
        // `false` only turns a switch off.
        (
            "[run]\ntest = \"read-iops\"\nsessions = false\n",
            vec!["run.sessions", "line 3", "--sessions"],
        ),
        // Tables nothing in the job would use.
        (
            "[redo]\nfiles = 4\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
            vec!["redo.files", "line 2", "no class"],
        ),
        (
            "[temp]\nspill_size = \"8M\"\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
            vec!["temp.spill_size", "line 2", "no class"],
        ),
        (
            "[redo]\nsubmission = \"sync\"\n[[class]]\nevent = \"log file parallel write\"\nsize = \"8K\"\n",
            vec!["redo.submission", "line 2"],
        ),
        (
            "[redo]\nsubmission = \"later\"\n[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\n",
            vec!["redo.submission", "line 2", "accepted: sync"],
        ),
        // Limits that cannot be measured, or are not numbers a limit can be.
        (
            "[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\n[class.limits]\nmin_mib_per_s = 1\n",
            vec!["class.limits.min_mib_per_s", "line 5", "min_iops"],
        ),
        (
            "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n[class.limits]\nmin_iops = -5\n",
            vec!["class.limits.min_iops", "line 5"],
        ),
        (
            "[[class]]\nevent = \"direct path read\"\nsize = { \"1M\" = 1e308, \"128K\" = 1e308 }\n",
            vec!["class.size", "line 3", "add up"],
        ),
        // Checks of a class against the others and against the data set name the line too.
        (
            "[[class]]\nevent = \"log file sync\"\nsize = \"2K\"\n[[class]]\nevent = \"log file parallel write\"\nsize = \"8K\"\n",
            vec!["class.event", "line 5", "one log writer"],
        ),
        (
            "[dataset]\nblock_size = \"8K\"\n[[class]]\nevent = \"db file sequential read\"\nsize = { \"8K\" = 1, \"12K\" = 1 }\n",
            vec!["class.size", "line 5", "block size"],
        ),
        (
            "[[class]]\nevent = \"direct path write temp\"\nsize = \"1M\"\nspill = \"1M\"\n[[class]]\nname = \"small spill\"\nevent = \"direct path read temp\"\nsize = \"1M\"\n[temp]\nspill_size = \"512K\"\n",
            vec!["small spill", "smaller than one request"],
        ),
    ] {
        let job = write_job(&env, "bad.toml", text);
        let out = env.run_job(&job).out();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        for n in needles {
            assert!(err.contains(n), "{n} in {err}");
        }
    }
    // The command line: the same rules as the job file's.
    let classes = write_job(
        &env,
        "classes.toml",
        "[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
    );
    for (args, needle) in [
        (
            vec!["run", "redo", "--rate", "10", "--think", "1ms"],
            "--think with --rate",
        ),
        (
            vec!["run", "read-mbps", "--rate", "10", "--depth", "4"],
            "--depth with --rate",
        ),
        (
            vec!["run", "--job", &classes, "--sync"],
            "--sync/--async with --job",
        ),
        (
            vec!["run", "--job", &classes, "--depth", "4"],
            "--depth with --job",
        ),
        (
            vec!["run", "--job", &classes, "--think", "1ms"],
            "--think with --job",
        ),
        // A sweep's points follow the same rules, checked before the first point runs.
        (
            vec!["sweep", "--job", &classes, "--param", "sessions=1,2"],
            "--sessions with --job",
        ),
        (
            vec![
                "sweep",
                "read-mbps",
                "--param",
                "rate=10,20",
                "--depth",
                "4",
            ],
            "--depth with --rate",
        ),
        (
            vec!["sweep", "read-mbps", "--curve", "--depth", "4"],
            "--curve with --depth",
        ),
    ] {
        let out = env.bare().args(&args).out();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert!(
        !env.join("dbio-data").exists(),
        "refused before any data set was made"
    );
    // The noise thread runs beside any job, so [redo] noise_cpu needs no redo class.
    let noise = write_job(
        &env,
        "noise.toml",
        "[dataset]\nsize = \"32M\"\n[run]\nduration = \"1s\"\nwarmup = \"0s\"\n[redo]\nnoise_cpu = 0\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n",
    );
    let out = env.run_job(&noise).quiet().out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = env.clean("./dbio-data").out();
    let out = env.run("read-iops").job("x.toml").out();
    assert_eq!(out.status.code(), Some(2), "a test and a job file");
    let out = env.run_job("missing.toml").out();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--job missing.toml: no such file"));
}

#[test]
fn save_job_writes_a_job_that_runs_the_same_io() {
    let env = Env::new();
    let saved = env.join("saved.toml").display().to_string();
    let a = env
        .quick("read-iops")
        .sync_()
        .opt("--save-job", &saved)
        .json();
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(
        text.contains("event = \"db file sequential read\""),
        "{text}"
    );
    let b = env.run_job(&saved).json();
    assert_eq!(b["events"][0]["name"], a["events"][0]["name"]);
    assert_eq!(b["config"]["sessions"], a["config"]["sessions"]);
    assert_eq!(b["config"]["duration_s"], a["config"]["duration_s"]);
    assert_eq!(b["config"]["size_bytes"], a["config"]["size_bytes"]);
    assert_eq!(u(&b["config"]["seed"]), u(&a["config"]["seed"]));
}

#[test]
fn matrix_runs_its_points_and_writes_the_grids() {
    let env = Env::new();
    let out = env
        .cmd("matrix")
        .opt("--matrix", "detailed")
        .size("64M")
        .opt("--num-small", 2)
        .opt("--num-large", 1)
        .opt("--point-duration", "1s")
        .warmup("0s")
        .arg("--json")
        .out();
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
    let text = std::fs::read_to_string(dir.join("matrix.txt")).unwrap();
    assert!(text.starts_with("Matrix detailed: small 8K"), "{text}");
    // Every point is in the results store, as sweep points are, with its own run directory.
    let runs = env.runs().arg("--json").out();
    assert!(runs.status.success());
    let listed: Value = serde_json::from_slice(&runs.stdout).unwrap();
    let mut listed: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_dir"].as_str().unwrap().to_string())
        .collect();
    let mut dirs: Vec<String> = m["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            std::fs::canonicalize(env.join(p["run_dir"].as_str().unwrap()))
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    listed.sort();
    dirs.sort();
    assert_eq!(listed, dirs);
    // Small reads alone are one outstanding read per session: a synchronous job, listed so.
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    let small_only = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run_dir"] == dirs_of(&env, &m, (1, 0)))
        .unwrap();
    assert_eq!(small_only["submission"], "sync", "{small_only}");
}

/// The canonical run directory of the matrix point (small, large).
fn dirs_of(env: &Env, m: &Value, point: (u64, u64)) -> String {
    let p = m["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| (u(&p["small"]), u(&p["large"])) == point)
        .unwrap();
    std::fs::canonicalize(env.join(p["run_dir"].as_str().unwrap()))
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn a_classic_test_at_a_rate_runs_open_loop() {
    // On tmpfs a request takes microseconds, so 2 sessions keep up with the schedule
    // however busy the machine's disk is (on a loaded disk a 10 ms commit would make
    // them fall behind, and the achieved rate would rightly show it).
    let Some(dir) = crate::util::shm_dir() else {
        return;
    };
    let target = dir.path().join("ds").display().to_string();
    let env = Env::new();
    let r = env
        .quick("read-iops")
        .sync_()
        .rate(500)
        .opt("--arrival", "poisson")
        .target(&target)
        .json();
    assert_eq!(r["test"], "read-iops");
    let c = &r["classes"][0];
    assert_eq!(c["arrival"], "poisson");
    assert_eq!(f(&c["rate_target"]), 500.0);
    assert!(c["service_us"].is_object());
    // Poisson arrivals over 2 s: about 1,000 requests, well within ±25 %.
    assert!((f(&c["rate_achieved"]) - 500.0).abs() < 125.0, "{c}");
    // Commits on a schedule: the redo test at a rate is one "log file sync" class.
    let r = env.quick("redo").rate(200).target(&target).json();
    assert_eq!(r["test"], "redo");
    let c = &r["classes"][0];
    assert_eq!(c["event"], "log file sync");
    assert!((f(&c["rate_achieved"]) - 200.0).abs() < 20.0, "{c}");
    assert_eq!(r["events"][1]["name"], "log file parallel write");
    let out = env.quick("oltp").arg("--json").rate(100).out();
    assert_eq!(
        out.status.code(),
        Some(2),
        "oltp has no one kind of request"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rate"));
}

#[test]
fn a_curve_loads_the_storage_at_shares_of_its_maximum() {
    let Some(dir) = crate::util::shm_dir() else {
        return;
    };
    let env = Env::new();
    let target = dir.path().join("ds").display().to_string();
    let s = env
        .sweep()
        .arg("read-iops")
        .sync_()
        .arg("--curve")
        .target(&target)
        .size("64M")
        .sessions(2)
        .duration("1s")
        .warmup("0s")
        .json();
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
    let _ = env.clean(&target).out();
}

/// The event of class `name`.
fn class_event<'a>(r: &'a Value, name: &str) -> &'a Value {
    &r["events"][u(&class(r, name)["event_index"]) as usize]
}

#[test]
fn redo_and_temp_classes_run_beside_data_classes() {
    // tmpfs: every class can keep its schedule whatever the shared disk is doing.
    let Some(dir) = crate::util::shm_dir() else {
        return;
    };
    let target = dir.path().join("ds");
    let env = Env::new();
    let job = write_job(
        &env,
        "mix.toml",
        r#"
[dataset]
size = "128M"
[run]
duration = "3s"
warmup = "1s"
[redo]
file_size = "16M"
[[class]]
name = "commits"
event = "log file sync"
size = "512..3000"
sessions = 4
rate = 200
[class.limits]
p99 = "10s"
[[class]]
name = "reads"
event = "db file sequential read"
size = "8K"
sessions = 1
rate = 300
[[class]]
name = "sort writes"
event = "direct path write temp"
size = "256K"
spill = "8M"
rate = 50
[[class]]
name = "sort reads"
event = "direct path read temp"
size = "128K"
spill = "4M"
sessions = 2
rate = 100
"#,
    );
    let r = env.run_job(&job).target(target.to_str().unwrap()).json();
    let names = event_names(&r);
    assert_eq!(
        names,
        [
            "log file sync",
            "db file sequential read",
            "direct path write temp",
            "direct path read temp",
            "log file parallel write"
        ],
        "the classes' events, then LGWR's"
    );
    for (name, rate) in [
        ("commits", 200.0),
        ("reads", 300.0),
        ("sort writes", 50.0),
        ("sort reads", 100.0),
    ] {
        let c = class(&r, name);
        let got = f(&c["rate_achieved"]);
        assert!(
            (got - rate).abs() <= 0.1 * rate,
            "{name}: {got} of {rate}/s"
        );
        assert!(c["service_us"].is_object(), "{c}");
    }
    // Each temp request carries its class's size; the reads read what was written first.
    assert_eq!(u(&class_event(&r, "sort writes")["bytes"]) % (256 << 10), 0);
    let reads = class_event(&r, "sort reads");
    assert!(u(&reads["requests"]) > 0);
    assert_eq!(u(&reads["bytes"]), u(&reads["requests"]) * (128 << 10));
    // Commits and LGWR: every commit waited, every redo byte written.
    let redo = &r["redo"];
    assert_eq!(
        u(&redo["commits"]),
        u(&class_event(&r, "commits")["requests"])
    );
    assert_eq!(redo["redo_per_commit"], "512..3000");
    let a = &redo["accounting"];
    assert_eq!(
        u(&a["bytes_written"]),
        u(&a["redo_generated_bytes"]) + u(&a["wastage_bytes"])
    );
    assert!(u(&a["lgwr_writes"]) > 0);
    assert!(assert_verdict_consistent(&r));
    // Temp files are gone; the redo logs stay with the data set.
    let files = crate::util::files_under(&target);
    assert!(!files.iter().any(|f| f.contains("dbio-temp-")), "{files:?}");
    assert!(files.iter().any(|f| f.contains("dbio-redo-")), "{files:?}");
}

#[test]
fn a_log_file_parallel_write_class_is_a_log_writer_at_its_rate() {
    // tmpfs: one writer keeps 100 writes/s of up to 2M whatever the shared disk is doing.
    let Some(dir) = crate::util::shm_dir() else {
        return;
    };
    let target = dir.path().join("ds").display().to_string();
    let env = Env::new();
    let job = write_job(
        &env,
        "lgwr.toml",
        r#"
[dataset]
size = "64M"
[run]
duration = "3s"
warmup = "1s"
[redo]
block = "4K"
file_size = "8M"
[[class]]
name = "redo writes"
event = "log file parallel write"
size = { "16K" = 3, "2M" = 1 }
rate = 100
arrival = "poisson"
[class.limits]
p99 = "10s"
min_iops = 1
"#,
    );
    let r = env.run_job(&job).target(&target).json();
    let names = event_names(&r);
    assert_eq!(
        names,
        ["log file parallel write"],
        "no commits, no LGWR beside it"
    );
    let c = class(&r, "redo writes");
    let e = &r["events"][0];
    let secs = f(&r["measured_seconds"]);
    // The rate counts writes; writes above 1 MiB go out in pieces (requests).
    assert!((f(&c["rate_achieved"]) - 100.0).abs() < 25.0, "{c}");
    assert!((f(&c["rate_achieved"]) - f(&e["waits"]) / secs).abs() < 1e-6);
    assert!(
        u(&e["requests"]) > u(&e["waits"]),
        "2M writes are split: {e}"
    );
    // Mean write: 3:1 of 16K and 2M.
    let mean = f(&e["bytes"]) / f(&e["waits"]);
    let expected = (3.0 * 16384.0 + 2097152.0) / 4.0;
    assert!(
        (mean - expected).abs() < 0.35 * expected,
        "{mean} vs {expected}"
    );
    let a = &r["redo"]["accounting"];
    assert_eq!(
        u(&a["bytes_written"]),
        u(&a["redo_generated_bytes"]) + u(&a["wastage_bytes"])
    );
    assert_eq!(u(&a["wastage_bytes"]), 0, "sizes are whole 4K redo blocks");
    assert!(u(&a["log_switches"]) > 0, "8M logs fill up");
    assert!(u(&a["largest_write_bytes"]) <= 2 << 20);
    assert!(assert_verdict_consistent(&r));
    // The class is judged per LGWR write, as its rate counts them: not per piece.
    let limits = &r["verdict"]["classes"][0]["limits"];
    let measured = |name: &str| {
        let l = limits
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["limit"] == name)
            .unwrap_or_else(|| panic!("{name} in {limits}"));
        f(&l["measured"])
    };
    assert!((measured("iops") - f(&c["rate_achieved"])).abs() < 1e-6);
    assert!((measured("p99_ms") - f(&e["wait_latency_us"]["p99"]) / 1000.0).abs() < 1e-9);
    assert_eq!(
        r["redo"]["pieces"], "async",
        "2M writes go out in pieces together"
    );
}

#[test]
fn weighted_sizes_are_drawn_per_request() {
    // On tmpfs every class gets thousands of draws in 2 s; on a shared disk the
    // single-block class can queue behind 1M scans and draw too few for a 10 % check.
    let Some(dir) = crate::util::shm_dir() else {
        return;
    };
    let env = Env::new();
    let job = write_job(
        &env,
        "sizes.toml",
        r#"
[dataset]
size = "128M"
[run]
duration = "2s"
warmup = "0s"
[[class]]
name = "scans"
event = "direct path read"
size = { "1M" = 3, "128K" = 1 }
[[class]]
name = "batches"
event = "db file parallel read"
size = { "8K" = 1, "64K" = 1 }
batch = 8
[[class]]
name = "single"
event = "db file sequential read"
size = { "8K" = 1, "32K" = 1 }
"#,
    );
    let target = dir.path().join("ds").display().to_string();
    let r = env.run_job(&job).target(&target).json();
    // Each class draws between two sizes, the first with probability p.
    for (name, (a, b, p)) in [
        ("scans", (1048576.0, 131072.0, 0.75)),
        ("batches", (8192.0, 65536.0, 0.5)),
        ("single", (8192.0, 32768.0, 0.5)),
    ] {
        let expected: f64 = p * a + (1.0 - p) * b;
        let c = class(&r, name);
        let e = class_event(&r, name);
        // The mean of n draws lies within 5 standard errors of the expected mean (a
        // false failure once in 1.7 million): as many draws as the machine gave in 2 s,
        // at least 200 (a loaded machine gave 887 of the 1M scans).
        let n = f(&e["requests"]);
        assert!(n >= 200.0, "{e}");
        let sd = (p * (1.0 - p)).sqrt() * (a - b).abs();
        let mean = f(&e["bytes"]) / n;
        assert!(
            (mean - expected).abs() <= 5.0 * sd / n.sqrt(),
            "{name}: mean request {mean} vs {expected} over {n} draws"
        );
        assert!((f(&c["mean_request_bytes"]) - mean).abs() < 1.0);
        assert_eq!(u(&c["size_bytes"]), expected.round() as u64);
        assert_eq!(u(&e["bytes"]) % 8192, 0, "whole blocks");
    }
    assert_eq!(class(&r, "scans")["sizes"], "1M 75% + 128K 25%");
    let summary = std::fs::read_to_string(
        std::fs::read_dir(env.join("dbio-runs"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
            .join("summary.txt"),
    )
    .unwrap();
    assert!(
        summary.contains("scans: sizes 1M 75% + 128K 25%"),
        "{summary}"
    );
}

#[test]
fn save_job_covers_redo_oltp_and_temp() {
    let env = Env::new();
    for (test, extra, form) in [
        (
            "redo",
            vec!["--redo-per-commit", "512..4K", "--redo-block", "4K"],
            "event = \"log file sync\"",
        ),
        (
            "oltp",
            vec!["--update-pct", "60", "--cache-size", "16M"],
            "test = \"oltp\"",
        ),
        (
            "temp",
            vec!["--spill-size", "8M", "--temp-io", "128K"],
            "test = \"temp\"",
        ),
    ] {
        let saved = env.join(&format!("{test}.toml")).display().to_string();
        let a = env
            .quick(test)
            .args(&extra)
            .opt("--save-job", &saved)
            .json();
        let text = std::fs::read_to_string(&saved).unwrap();
        assert!(text.contains(form), "{test}: {text}");
        let b = env.run_job(&saved).json();
        assert_eq!(event_names(&b), event_names(&a), "{test}");
        for key in ["sessions", "duration_s", "seed", "request_bytes"] {
            assert_eq!(b["config"][key], a["config"][key], "{test}: {key}");
        }
        assert!(b["job"].is_object(), "{test}: the job is embedded");
        match test {
            "redo" => {
                assert_eq!(b["redo"]["redo_per_commit"], "512..4K");
                assert_eq!(b["redo"]["redo_block"], 4096);
            }
            "oltp" => {
                assert_eq!(b["test"], "oltp");
                assert_eq!(b["oltp"]["update_pct"], 60);
                assert_eq!(b["oltp"]["cache_buffers"], a["oltp"]["cache_buffers"]);
            }
            _ => {
                assert_eq!(b["test"], "temp");
                assert_eq!(b["temp"], a["temp"]);
            }
        }
        // A job file names a run; typed options still win over it.
        let c = env.run_job(&saved).duration("1s").json();
        assert_eq!(f(&c["config"]["duration_s"]), 1.0, "{test}");
    }
}

#[test]
fn a_job_that_only_reads_may_read_an_existing_file() {
    let env = Env::new();
    let image = env.join("existing.img");
    let data: Vec<u8> = (0..32u32 << 20)
        .map(|i| i.wrapping_mul(2_654_435_761) as u8)
        .collect();
    std::fs::write(&image, &data).unwrap();
    let target = image.display().to_string();
    let reads = write_job(
        &env,
        "reads.toml",
        "[run]\nduration = \"1s\"\nwarmup = \"0s\"\n[[class]]\nevent = \"db file sequential read\"\nsize = \"8K\"\n[[class]]\nevent = \"direct path read\"\nsize = { \"1M\" = 1, \"128K\" = 1 }\n",
    );
    let r = env.run_job(&reads).target(&target).json();
    assert_eq!(r["config"]["open_flags"][0], "O_RDONLY");
    assert!(
        r["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| u(&e["requests"]) > 0)
    );
    assert!(
        std::fs::read(&image).unwrap() == data,
        "the file is unchanged"
    );
    // Sizes are checked against the planned data set first; an existing file can be
    // smaller than a request, which is found when it is opened.
    let big = write_job(
        &env,
        "big.toml",
        "[run]\nduration = \"1s\"\nwarmup = \"0s\"\n[[class]]\nevent = \"db file sequential read\"\nsize = { \"64M\" = 1, \"8K\" = 9 }\n",
    );
    let out = env.run_job(&big).target(&target).out();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("line 6") && err.contains("class.size") && err.contains("does not fit"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // A job that writes wants a data set dbio created.
    let writes = write_job(
        &env,
        "writes.toml",
        "[[class]]\nevent = \"direct path write\"\nsize = \"1M\"\n",
    );
    let out = env.run_job(&writes).target(&target).out();
    assert_eq!(out.status.code(), Some(2));
    assert!(std::fs::read(&image).unwrap() == data);
}

#[test]
fn verify_refuses_a_job_whose_reads_race_its_writes() {
    let env = Env::new();
    let job = write_job(
        &env,
        "race.toml",
        "[[class]]\nname = \"scan\"\nevent = \"direct path read\"\nsize = \"1M\"\n[[class]]\nname = \"writer\"\nevent = \"direct path write\"\nsize = \"1M\"\n",
    );
    let out = env.run_job(&job).verify_data().size("64M").out();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'scan'") && err.contains("'writer'") && err.contains("separate jobs"),
        "{err}"
    );
}

#[test]
fn the_oltp_example_runs_every_kind_of_class() {
    let env = Env::new();
    let (code, r) = run_example(&env, "oltp-peak.toml", "256M", "2s");
    let events = event_names(&r);
    assert_eq!(
        events,
        [
            "log file sync",
            "db file sequential read",
            "db file parallel write",
            "direct path write temp",
            "direct path read temp",
            "log file parallel write"
        ]
    );
    assert!(
        r["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| u(&e["requests"]) > 0)
    );
    assert_eq!(
        class(&r, "index and table reads")["sizes"],
        "8K 90% + 16K 10%"
    );
    let pass = assert_verdict_consistent(&r);
    assert_eq!(code, Some(if pass { 0 } else { 3 }));
}

#[test]
fn lgwr_writes_its_pieces_one_by_one_when_told() {
    let env = Env::new();
    // The redo test's --sync at a rate is one class; its job file says the same in [redo].
    let saved = env.join("redo-sync.toml").display().to_string();
    let a = env
        .quick("redo")
        .sync_()
        .rate(20)
        .opt("--redo-per-commit", "1200K")
        .opt("--redo-file-size", "16M")
        .opt("--save-job", &saved)
        .json();
    assert_eq!(a["redo"]["pieces"], "sync");
    let acc = &a["redo"]["accounting"];
    assert!(
        u(&acc["pieces"]) > u(&acc["lgwr_writes"]),
        "writes over 1 MiB are split: {acc}"
    );
    let text = std::fs::read_to_string(&saved).unwrap();
    assert!(
        text.contains("[redo]") && text.contains("submission = \"sync\""),
        "{text}"
    );
    let b = env.run_job(&saved).json();
    assert_eq!(b["redo"]["pieces"], "sync");
    assert_eq!(event_names(&b), event_names(&a));
    // Without it, LGWR's pieces go out together.
    let together = text.replace("submission = \"sync\"\n", "");
    let job = write_job(&env, "redo-async.toml", &together);
    let c = env.run_job(&job).duration("1s").json();
    assert_eq!(c["redo"]["pieces"], "async");
}
