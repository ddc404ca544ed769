//! `--span`: the active surface. Writes with a span leave the rest of every data file
//! byte for byte as it was; reads with a span never reach it (a data set whose rest is
//! corrupted reads clean under `--verify`); the span is recorded, swept and refused where
//! it cannot hold a request or would be ignored.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{Env, f, shm_dir, u};

/// Two 8 MiB data files.
const DATA: [&str; 4] = ["--size", "16M", "--files", "2"];

fn data_files(target: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(target)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "dbf"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 2, "{files:?}");
    files
}

/// Each data file split where `fraction` of it ends: (first part, the rest).
fn split(target: &Path, fraction: f64) -> Vec<(Vec<u8>, Vec<u8>)> {
    data_files(target)
        .iter()
        .map(|p| {
            let mut bytes = std::fs::read(p).unwrap();
            let cut = (bytes.len() as f64 * fraction) as usize;
            let rest = bytes.split_off(cut);
            (bytes, rest)
        })
        .collect()
}

/// A short run on the data set at `target`, result.json parsed (any exit status).
fn run(env: &Env, target: &str, args: &[&str]) -> (Option<i32>, Value, String) {
    let mut run = env
        .cmd("run")
        .args(args)
        .target(target)
        .duration("1s")
        .warmup("0s")
        .arg("--json");
    if args[0] != "--job" {
        run = run.sessions(2);
    }
    let run = run.args(DATA);
    let line = run.line();
    let out = run.out();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{line}: stdout is not JSON ({e}): {stderr}"));
    (out.status.code(), json, stderr)
}

#[test]
fn writes_with_a_span_leave_the_rest_of_every_file_untouched() {
    let Some(dir) = shm_dir() else {
        return;
    };
    let env = Env::new();
    let target = dir.path().join("ds");
    let t = target.display().to_string();
    assert!(env.prepare().target(&t).args(DATA).out().status.success());
    let job = env.join("writes.toml");
    std::fs::write(
        &job,
        r#"
[dataset]
span = "25%"
[[class]]
name = "dbwr"
event = "db file parallel write"
size = "8K"
sessions = 2
[[class]]
name = "loads"
event = "direct path write"
size = "1M"
sessions = 2
"#,
    )
    .unwrap();
    let job = job.display().to_string();
    for args in [
        &["write-iops", "--span", "25%"][..],
        &["write-iops", "--span", "0.25", "--keep-inflight"],
        &["write-iops", "--span", "25%", "--sync"],
        &["write-mbps", "--span", "25%"],
        &["oltp", "--span", "25%", "--update-pct", "100"],
        &["--job", &job],
    ] {
        let before = split(&target, 0.25);
        let (code, r, stderr) = run(&env, &t, args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        assert_eq!(f(&r["config"]["span"]), 0.25, "{args:?}");
        assert!(f(&r["totals"]["write_iops"]) > 0.0, "{args:?}");
        let after = split(&target, 0.25);
        for (i, ((head0, rest0), (head1, rest1))) in before.iter().zip(&after).enumerate() {
            assert!(
                rest0 == rest1,
                "{args:?}: file {i} changed beyond the first 25 %"
            );
            assert!(
                head0 != head1,
                "{args:?}: file {i}: nothing written in the span"
            );
        }
    }
    // The same write without a span reaches the rest.
    let before = split(&target, 0.25);
    let (code, _, stderr) = run(&env, &t, &["write-iops"]);
    assert_eq!(code, Some(0), "{stderr}");
    let after = split(&target, 0.25);
    assert!(before.iter().zip(&after).any(|(b, a)| b.1 != a.1));
}

#[test]
fn reads_with_a_span_never_reach_the_rest_of_a_file() {
    let Some(dir) = shm_dir() else {
        return;
    };
    let env = Env::new();
    let target = dir.path().join("ds");
    let t = target.display().to_string();
    assert!(
        env.prepare()
            .target(&t)
            .verify_data()
            .args(DATA)
            .out()
            .status
            .success()
    );
    // Everything after the first 25 % of each file is garbage: a read there is a bad block.
    for p in data_files(&target) {
        let mut bytes = std::fs::read(&p).unwrap();
        let cut = bytes.len() / 4;
        bytes[cut..].fill(0xA5);
        std::fs::write(&p, bytes).unwrap();
    }
    let job = env.join("reads.toml");
    std::fs::write(
        &job,
        r#"
[[class]]
event = "db file sequential read"
size = "8K"
sessions = 2
[[class]]
event = "direct path read"
size = "1M"
[[class]]
event = "db file parallel read"
size = { "8K" = 50, "16K" = 50 }
"#,
    )
    .unwrap();
    let job = job.display().to_string();
    for args in [
        &["read-iops", "--sync"][..],
        &["read-iops"],
        &["read-iops", "--keep-inflight"],
        &["read-mbps"],
        &["read-mbps", "--sync"],
        &["--job", &job],
    ] {
        let mut with = args.to_vec();
        with.extend_from_slice(&["--span", "25%", "--verify"]);
        let (code, r, stderr) = run(&env, &t, &with);
        assert_eq!(code, Some(0), "{with:?}: {stderr}");
        assert_eq!(
            u(&r["verify"]["blocks_bad"]),
            0,
            "{with:?}: {}",
            r["verify"]
        );
        assert!(u(&r["verify"]["blocks_checked"]) > 0, "{with:?}");
    }
    // Without the span the same reads find the garbage.
    let (code, r, _) = run(&env, &t, &["read-iops", "--sync", "--verify"]);
    assert_eq!(code, Some(4));
    assert!(u(&r["verify"]["blocks_bad"]) > 0, "{}", r["verify"]);
}

#[test]
fn a_span_is_recorded_saved_and_shown() {
    let env = Env::new();
    let job = env.join("saved.toml").display().to_string();
    let (code, r, stderr) = run(
        &env,
        "dbio-data",
        &["read-iops", "--span", "0.5", "--save-job", &job],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(f(&r["config"]["span"]), 0.5);
    let saved = std::fs::read_to_string(&job).unwrap();
    assert!(saved.contains("span = \"50%\""), "{saved}");
    let again = env.run_job(&job).duration("1s").json();
    assert_eq!(f(&again["config"]["span"]), 0.5);
    let summary = env.show("2").out();
    let text = String::from_utf8_lossy(&summary.stdout);
    assert!(
        text.contains(
            "Span 50%: every request falls in the first 4.0 MiB of each data file (of 8.0 MiB)"
        ),
        "{text}"
    );
    // A whole-file run says nothing about a span.
    let (_, r, _) = run(&env, "dbio-data", &["read-iops"]);
    assert_eq!(f(&r["config"]["span"]), 1.0);
    let text = String::from_utf8_lossy(&env.show("3").out().stdout).into_owned();
    assert!(!text.contains("Span"), "{text}");
}

#[test]
fn a_sweep_over_span_runs_each_span_and_charts_it() {
    let env = Env::new();
    let out = env
        .sweep()
        .arg("read-iops")
        .param("span=25%,50%,100%")
        .size("16M")
        .sessions(1)
        .duration("1s")
        .warmup("0s")
        .out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("over span: 3 of 3 point(s)"), "{table}");
    let dir = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("_sweep_read-iops_span"))
        .expect("the sweep directory");
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sweep.json")).unwrap()).unwrap();
    assert_eq!(s["param"], "span");
    let points = s["points"].as_array().unwrap();
    for (p, (label, span)) in points
        .iter()
        .zip([("25%", 0.25), ("50%", 0.5), ("100%", 1.0)])
    {
        assert_eq!(p["label"], label);
        assert!(f(&p["iops"]) > 0.0);
        let r: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(p["run_dir"].as_str().unwrap()).join("result.json"))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(f(&r["config"]["span"]), span);
    }
    let csv = std::fs::read_to_string(dir.join("sweep.csv")).unwrap();
    let firsts: Vec<&str> = csv.lines().map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(firsts, ["span", "0.25", "0.5", "1"]);
    let html = std::fs::read_to_string(dir.join("sweep.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("IOPS by span") && html.contains("25%"));
}

#[test]
fn a_span_that_cannot_be_used_is_refused_before_anything_is_created() {
    let env = Env::new();
    for bad in ["0", "0%", "-10%", "150%", "1.5", "half", ""] {
        env.run("read-iops")
            .opt("--span", bad)
            .refused(&["'--span <FRACTION>'"]);
    }
    // 10 % of a 1 MiB file is 100 KiB: no 1 MiB scan request fits.
    env.run("read-mbps").size("4M").opt("--span", "10%").refused(&[
        "invalid value '10%' for '--span': the first 10% of each data file is 96K, which cannot hold 1M",
    ]);
    // Four writers per file, each in its own region of 1 MiB requests: 4 MiB of 8 MiB.
    env.run("write-mbps")
        .size("16M")
        .files(2)
        .sessions(8)
        .opt("--span", "40%")
        .refused(&["4 session(s) per file"]);
    env.run("redo")
        .opt("--span", "50%")
        .refused(&["the redo test does not use it"]);
    env.sweep()
        .arg("read-iops")
        .param("span=0,50%")
        .refused(&["span=0"]);
    let job = env.join("small.toml");
    std::fs::write(
        &job,
        "[dataset]\nsize = \"8M\"\nfiles = 2\n\nspan = \"10%\"\n[[class]]\nevent = \"direct path read\"\nsize = \"1M\"\n",
    )
    .unwrap();
    env.run_job(&job)
        .refused(&["small.toml (line 5): invalid value '10%' for 'dataset.span'"]);
    // Typed on the command line, the span is the option's.
    env.run_job(&job)
        .opt("--span", "20%")
        .refused(&["for '--span'"]);
    assert!(!env.join("dbio-data").exists(), "nothing was created");
}

#[test]
fn a_sweep_goes_on_past_a_point_that_misses_its_limits() {
    let env = Env::new();
    let job = env.join("limited.toml");
    std::fs::write(
        &job,
        "[dataset]\nsize = \"16M\"\nfiles = 2\n[[class]]\nevent = \"db file parallel read\"\nsize = \"8K\"\nbatch = 1\nsessions = 2\nrate = 200\n[class.limits]\nmean = \"100ms\"\n",
    )
    .unwrap();
    // The device holds completions for 900 ms in every second: every point fails.
    let out = env
        .sweep()
        .job(&job)
        .param("span=50%,100%")
        .duration("2s")
        .warmup("0s")
        .env("DBIO_FAULT_STALL", "1s:900ms")
        .out();
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{table}");
    assert!(table.contains("over span: 2 of 2 point(s)"), "{table}");
}
