//! `dbio mem` and signals: SIGINT, SIGTERM and SIGHUP end it within 2 s whatever it is
//! doing — filling a buffer of GiBs, building the random chain through it, a NUMA matrix
//! cell, loaded latency with its reading threads — with exit status 130 and a whole, partial
//! result (the debug binary is the one tested, so the 2 s hold for the slow build too).

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{Env, files_under};

/// Starts `dbio mem args... --json --out runs`, sends `signal` after `after`, and returns
/// how long it took to end, its exit status and its JSON result (checked to be the one
/// written to the run directory, next to the other two files of a run and nothing else).
fn stop_mem(args: &[&str], after: Duration, signal: i32) -> (Duration, Option<i32>, Value) {
    let env = Env::new();
    let child = env
        .mem()
        .args(args)
        .arg("--json")
        .out_dir("runs")
        .process()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    // SAFETY: signalling our own child, which has not been waited for.
    unsafe { libc::kill(child.id() as i32, signal) };
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let r: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e}): {stderr}"));
    let files = files_under(&env.join("runs"));
    assert_eq!(files.len(), 3, "{args:?}: {files:?}");
    let names: Vec<&str> = files
        .iter()
        .map(|f| f.rsplit('/').next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["report.html", "result.json", "summary.txt"],
        "{files:?}"
    );
    let written: Value =
        serde_json::from_slice(&std::fs::read(env.join("runs").join(&files[1])).unwrap())
            .unwrap_or_else(|e| panic!("{args:?}: result.json is not whole JSON: {e}"));
    assert_eq!(written["partial"], r["partial"]);
    assert_eq!(written["elapsed_s"], r["elapsed_s"]);
    (took, out.status.code(), r)
}

/// Ends within 2 s with 130, marked partial, warning that a signal stopped it.
fn assert_stopped(what: &str, (took, code, r): (Duration, Option<i32>, Value)) -> Value {
    assert!(took < Duration::from_secs(2), "{what}: stopped in {took:?}");
    assert_eq!(code, Some(130), "{what}");
    assert_eq!(r["partial"], true, "{what}");
    assert_eq!(r["stop_reason"], "interrupted", "{what}");
    assert!(
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("stopped by a signal")),
        "{what}: {}",
        r["warnings"]
    );
    r
}

/// The largest curve buffer the machine can spare: 4 GiB, less where memory is short (a
/// GiB still takes seconds to fill and chain in a debug build).
fn big_size() -> &'static str {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let avail_kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    match avail_kib >> 20 {
        // 4 GiB at most: these tests run beside the others, which need memory too.
        g if g >= 12 => "4G",
        g if g >= 6 => "2G",
        _ => "1G",
    }
}

/// The NUMA matrix at its default size (a buffer of hundreds of MiB per cell, filled and
/// chained) stops at once, and so does loaded latency (its reading threads' buffers).
#[test]
fn sigint_stops_the_numa_matrix_and_loaded_latency_within_2s() {
    for only in ["numa", "loaded"] {
        let r = assert_stopped(
            only,
            stop_mem(
                &["--only", only, "-q"],
                Duration::from_secs(1),
                libc::SIGINT,
            ),
        );
        assert!(
            r["curve"].is_null() || r["curve"].as_array().is_some_and(|c| c.is_empty()),
            "{only}: {}",
            r["curve"]
        );
    }
}

/// A signal while a curve buffer of GiBs is being faulted in (0.2 s after the start) ends
/// the run without a point measured, and no figure is made up for the buffer never filled.
#[test]
fn sigint_stops_filling_a_buffer_of_gibs_within_2s() {
    let size = big_size();
    let r = assert_stopped(
        size,
        stop_mem(
            &["--sizes", size, "--only", "curve", "--pages", "thp", "-q"],
            Duration::from_millis(200),
            libc::SIGINT,
        ),
    );
    assert_eq!(r["curve"], serde_json::json!([]), "{size}");
    assert!(r["page_size"]["huge_backed_pct"].is_null(), "{r}");
    assert!(
        !r["warnings"]
            .to_string()
            .contains("backed only 0 % of the curve's buffer"),
        "{}",
        r["warnings"]
    );
}

/// The largest point of a big curve: a signal while its chain is built or chased.
#[test]
fn sigterm_stops_building_the_chain_of_a_big_curve_within_2s() {
    let size = big_size();
    for after in [1500, 3000] {
        assert_stopped(
            &format!("{size} at {after} ms"),
            stop_mem(
                &["--sizes", size, "--only", "curve", "-q"],
                Duration::from_millis(after),
                libc::SIGTERM,
            ),
        );
    }
}

/// SIGHUP (the terminal closed) with the matrix and loaded latency, at several moments.
#[test]
fn sighup_stops_the_matrix_and_loaded_latency_within_2s() {
    for after in [500, 1500, 3000] {
        assert_stopped(
            &format!("HUP at {after} ms"),
            stop_mem(
                &["--only", "numa,loaded", "-q"],
                Duration::from_millis(after),
                libc::SIGHUP,
            ),
        );
    }
}
