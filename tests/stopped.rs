//! Time dbio itself did not run (stopped, starved of CPU, suspended) is not storage time:
//! the result says so, marks the seconds, and ASH makes up no samples for it.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::util::{Env, f, shm_dir, u};

/// A read-iops run of `duration` on /dev/shm; with `stop`, SIGSTOP for `stop.1` once
/// `stop.0` of the measured window has passed, then SIGCONT. Returns the result and the
/// run's summary.txt.
fn run(duration: &str, stop: Option<(Duration, Duration)>) -> Option<(Value, String)> {
    run_after_warmup(duration, "0s", stop)
}

/// [`run`] with a warm-up of `warmup`; `stop.0` counts from the start of the warm-up.
fn run_after_warmup(
    duration: &str,
    warmup: &str,
    stop: Option<(Duration, Duration)>,
) -> Option<(Value, String)> {
    let shm = shm_dir()?;
    let env = Env::new();
    let target = shm.path().join("ds");
    let mut child = env
        .run("read-iops")
        .target(target.to_str().unwrap())
        .size("16M")
        .files(1)
        .sessions(1)
        .duration(duration)
        .warmup(warmup)
        .arg("--json")
        .process()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    // The data set is described just before the threads start.
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut err = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        err.push_str(&line);
        err.push('\n');
        if line.starts_with("dbio: data set:") {
            break;
        }
    }
    if let Some((after, pause)) = stop {
        std::thread::sleep(after);
        // SAFETY: signals to our own child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        std::thread::sleep(pause);
        assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    }
    let rest = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    let out = child.wait_with_output().unwrap();
    let rest = rest.join().unwrap();
    err.push_str(&rest.join("\n"));
    assert!(out.status.success(), "{err}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let dir = rest
        .iter()
        .find_map(|l| l.strip_prefix("dbio: results in "))
        .expect("the run says where its results are");
    let summary = std::fs::read_to_string(env.join(dir.trim()).join("summary.txt")).unwrap();
    Some((r, summary))
}

/// The "did not run" warnings of a result.
fn not_running(r: &Value) -> Vec<String> {
    r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.starts_with("dbio did not run for"))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_run_stopped_for_3_s_says_so_and_makes_up_no_ash_samples() {
    let Some((r, summary)) = run("6s", Some((Duration::from_secs(2), Duration::from_secs(3))))
    else {
        return;
    };
    let warned = not_running(&r);
    assert_eq!(warned.len(), 1, "{}", r["warnings"]);
    // "dbio did not run for 3.0 s (seconds 3–5 of the measured window: ..."
    let secs: f64 = warned[0]
        .trim_start_matches("dbio did not run for ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((2.5..=4.5).contains(&secs), "{}", warned[0]);
    assert!(
        warned[0].contains("of the measured window"),
        "{}",
        warned[0]
    );
    assert!(summary.contains(&warned[0]), "{summary}");
    // The seconds are marked, and add up to the stop.
    let points = r["timeseries"].as_array().unwrap();
    let marked: Vec<(u64, f64)> = points
        .iter()
        .filter(|p| !p["not_running_s"].is_null())
        .map(|p| (u(&p["t"]), f(&p["not_running_s"])))
        .collect();
    assert!(marked.len() >= 3, "{marked:?}");
    let total: f64 = marked.iter().map(|m| m.1).sum();
    assert!((total - secs).abs() < 0.05, "{marked:?} vs {secs}");
    assert!(marked.iter().all(|m| m.1 <= 1.0 && m.0 >= 2), "{marked:?}");
    // The seconds the warning names are the marked ones.
    let (first, last) = (marked[0].0, marked[marked.len() - 1].0);
    let named = if first == last {
        format!("second {first} ")
    } else {
        format!("seconds {first}–{last} ")
    };
    assert!(warned[0].contains(&named), "{} vs {marked:?}", warned[0]);
    // ASH sampled only while dbio ran: about (6 − 3) s × 10 Hz, not 60.
    let ash = &r["ash"];
    let hz = f(&ash["hz"]);
    let running = f(&r["measured_seconds"]) - secs;
    let samples = f(&ash["samples"]);
    assert!(
        (samples - running * hz).abs() <= 0.1 * running * hz + 5.0,
        "{samples} ASH samples for {running:.1} s running at {hz} Hz"
    );
}

#[test]
fn an_undisturbed_run_raises_no_such_alarm() {
    let Some((r, summary)) = run("3s", None) else {
        return;
    };
    assert!(not_running(&r).is_empty(), "{}", r["warnings"]);
    assert!(!summary.contains("did not run"), "{summary}");
    let points = r["timeseries"].as_array().unwrap();
    assert!(points.iter().all(|p| p.get("not_running_s").is_none()));
    let samples = f(&r["ash"]["samples"]);
    let want = f(&r["measured_seconds"]) * f(&r["ash"]["hz"]);
    assert!(
        (samples - want).abs() <= 0.1 * want + 3.0,
        "{samples} ASH samples, {want} expected"
    );
}

/// A stop that begins in the warm-up and lasts into the measured window: the part inside
/// the window is reported and its seconds marked, the part in the warm-up is named apart
/// and not counted, and ASH makes up no samples for either.
#[test]
fn a_stop_from_the_warm_up_into_the_window_is_reported_for_its_part_inside() {
    // Warm-up 2 s; stopped from 1 s to 4 s: 1 s of warm-up, then seconds 1–2 of the window.
    let Some((r, summary)) = run_after_warmup(
        "4s",
        "2s",
        Some((Duration::from_secs(1), Duration::from_secs(3))),
    ) else {
        return;
    };
    let warned = not_running(&r);
    assert_eq!(warned.len(), 1, "{}", r["warnings"]);
    // "dbio did not run for 2.0 s (seconds 1–2 of the measured window, and 1.0 s before it
    // in the warm-up: ..."
    let secs: f64 = warned[0]
        .trim_start_matches("dbio did not run for ")
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1.5..=2.6).contains(&secs), "{}", warned[0]);
    let before: f64 = warned[0]
        .split(", and ")
        .nth(1)
        .and_then(|w| w.split_once(" s before it in the warm-up"))
        .map(|(n, _)| n)
        .unwrap_or_else(|| panic!("the warm-up part is named: {}", warned[0]))
        .parse()
        .unwrap();
    assert!((0.4..=1.5).contains(&before), "{}", warned[0]);
    assert!((secs + before - 3.0).abs() < 0.3, "{}", warned[0]);
    assert!(summary.contains(&warned[0]), "{summary}");
    // The window's first seconds are marked, and add up to the part inside it.
    let points = r["timeseries"].as_array().unwrap();
    let marked: Vec<(u64, f64)> = points
        .iter()
        .filter(|p| !p["not_running_s"].is_null())
        .map(|p| (u(&p["t"]), f(&p["not_running_s"])))
        .collect();
    assert_eq!(marked.first().map(|m| m.0), Some(1), "{marked:?}");
    assert!(marked.iter().all(|m| m.0 <= 3 && m.1 <= 1.0), "{marked:?}");
    let total: f64 = marked.iter().map(|m| m.1).sum();
    assert!((total - secs).abs() < 0.05, "{marked:?} vs {secs}");
    let last = marked[marked.len() - 1].0;
    assert!(
        warned[0].contains(&format!("seconds 1–{last} of the measured window")),
        "{} vs {marked:?}",
        warned[0]
    );
    // ASH sampled only while dbio ran in the window: about (4 − 2) s × 10 Hz, not 40.
    let hz = f(&r["ash"]["hz"]);
    let running = f(&r["measured_seconds"]) - secs;
    let samples = f(&r["ash"]["samples"]);
    assert!(
        (samples - running * hz).abs() <= 0.1 * running * hz + 5.0,
        "{samples} ASH samples for {running:.1} s running at {hz} Hz"
    );
}
