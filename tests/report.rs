//! What a run writes beside result.json: report.html (self-contained, with its charts) and
//! the CSV exports, whose totals agree with result.json; `dbio report` draws them again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::util::{Env, u};

/// Runs a short test and returns its run directory and result.json.
fn one_run(env: &Env, test: &str) -> (PathBuf, serde_json::Value) {
    let r = env.quick(test).json();
    let runs: Vec<PathBuf> = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1);
    (runs[0].clone(), r)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// CSV rows as maps from header name to field (no field here holds a comma).
fn csv(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header row").split(',').collect();
    lines
        .map(|l| {
            let fields: Vec<&str> = l.split(',').collect();
            assert_eq!(fields.len(), header.len(), "row {l:?}");
            header
                .iter()
                .zip(fields)
                .map(|(h, f)| (h.to_string(), f.to_string()))
                .collect()
        })
        .collect()
}

fn num(row: &BTreeMap<String, String>, key: &str) -> f64 {
    row[key]
        .parse()
        .unwrap_or_else(|e| panic!("{key} = {:?}: {e}", row[key]))
}

#[test]
fn report_html_is_self_contained_and_names_the_events() {
    let env = Env::new();
    let (dir, r) = one_run(&env, "read-iops");
    let html = read(&dir.join("report.html"));
    let event = r["events"][0]["name"].as_str().unwrap();
    assert_eq!(event, "db file parallel read");
    for part in [
        "<!DOCTYPE html>",
        "Top Timed Events",
        "Load Profile",
        "Latency histograms",
        "Per second",
        event,
        r["host"]["hostname"].as_str().unwrap(),
    ] {
        assert!(html.contains(part), "report.html lacks {part}");
    }
    // One histogram per event, then IOPS, MiB/s and latency per second, then ASH, then the
    // OS charts (CPU, devices, memory, ...).
    assert!(r["ash"].is_object(), "every run samples ASH");
    assert!(html.contains("Active sessions by state (ASH)"));
    assert!(r["os"].is_object(), "every run samples the OS");
    let charts = html.matches("<svg").count();
    assert!(charts > 5, "{charts} charts");
    assert_eq!(html.matches("</svg>").count(), charts);
    for needle in ["http://", "https://", "<script", "<link", "url("] {
        assert!(!html.contains(needle), "{needle} in report.html");
    }
    for tag in html.split('<').skip(1).filter_map(|t| t.split('>').next()) {
        assert!(
            !tag.contains("src=") && !tag.contains("href="),
            "an element loads something: <{tag}>"
        );
    }
}

#[test]
fn csv_totals_agree_with_result_json() {
    let env = Env::new();
    let (dir, r) = one_run(&env, "read-iops");
    let ts = csv(&read(&dir.join("timeseries.csv")));
    let hist = csv(&read(&dir.join("histograms.csv")));
    assert_eq!(ts.len(), r["timeseries"].as_array().unwrap().len());
    assert!(ts[0].contains_key("requests_per_s") && ts[0].contains_key("p99_us"));
    for e in r["events"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let rows: Vec<_> = ts.iter().filter(|row| row["event"] == name).collect();
        let per_second: f64 = rows.iter().map(|row| num(row, "requests")).sum();
        assert_eq!(
            per_second as u64,
            u(&e["requests"]),
            "{name}: per-second requests"
        );
        let bytes: f64 = rows.iter().map(|row| num(row, "bytes")).sum();
        assert_eq!(bytes as u64, u(&e["bytes"]), "{name}: per-second bytes");
        // Whole seconds: the rate is the count.
        assert_eq!(num(rows[0], "requests_per_s"), num(rows[0], "requests"));
        for (kind, total) in [("request", u(&e["requests"])), ("wait", u(&e["waits"]))] {
            let buckets: Vec<_> = hist
                .iter()
                .filter(|row| row["event"] == name && row["kind"] == kind)
                .collect();
            let sum: f64 = buckets.iter().map(|row| num(row, "count")).sum();
            assert_eq!(sum as u64, total, "{name}: {kind} buckets add up");
            assert_eq!(num(buckets[0], "lower_us"), 0.0);
            assert!(
                buckets
                    .windows(2)
                    .all(|w| num(w[1], "lower_us") == num(w[0], "upper_us")),
                "{name}: {kind} buckets are contiguous"
            );
        }
    }
}

#[test]
fn report_command_draws_the_same_files_again() {
    let env = Env::new();
    let (dir, _) = one_run(&env, "write-mbps");
    let names = ["report.html", "timeseries.csv", "histograms.csv"];
    let first: Vec<String> = names.iter().map(|n| read(&dir.join(n))).collect();
    for n in names {
        std::fs::remove_file(dir.join(n)).unwrap();
    }
    let out = env.report(dir.to_str().unwrap()).out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (n, before) in names.iter().zip(&first) {
        assert_eq!(&read(&dir.join(n)), before, "{n} drawn again differs");
    }
}

#[test]
fn report_command_refuses_what_is_not_a_run() {
    let env = Env::new();
    std::fs::create_dir(env.join("empty")).unwrap();
    std::fs::create_dir(env.join("other")).unwrap();
    std::fs::write(env.join("other/result.json"), r#"{"schema":"fio.v3"}"#).unwrap();
    for (dir, says) in [
        ("missing", "not a run directory"),
        ("empty", "result.json"),
        ("other", "dbio.result.v1"),
    ] {
        let out = env.report(dir).out();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{dir}: {err}");
        assert_eq!(err.lines().count(), 1, "{dir}: one line: {err}");
        assert!(err.contains(says), "{dir}: {err}");
    }
    assert!(!env.join("other/report.html").exists());
}
