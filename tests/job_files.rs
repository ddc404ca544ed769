//! Every job file dbio writes is read back by `dbio run --job` as it was written: a target,
//! a report's file name or any other text with control characters, quotes, backslashes,
//! line breaks, TOML's own delimiters or comment marks comes back as the same value, and the
//! job runs. Both writers are run end to end: `--save-job` and `dbio job from-*`.

use std::path::Path;

use serde_json::Value;

use crate::util::Env;

/// One directory name holding everything a hand-written quoting gets wrong: an escape
/// (the terminal's ESC), a tab and a line break, quotes of both kinds and TOML's triple
/// quotes, a backslash, a comment mark, `=`, table brackets and non-ASCII.
const HOSTILE: &str = "d\u{1b}x\t\"q\" \\ '''s''' \"\"\"t\"\"\"\n# k = [v] [[c]] ü✓";

/// The job file's text, parsed as TOML.
fn toml_of(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap();
    text.parse()
        .unwrap_or_else(|e| panic!("{} is not TOML ({e}):\n{text}", path.display()))
}

#[test]
fn a_job_file_saved_from_a_target_with_control_characters_runs() {
    let env = Env::new();
    // The issue's own target first, then every hostile character at once.
    for name in ["data\u{1b}x", HOSTILE] {
        let target = env.join(name);
        let saved = env.join("saved.toml");
        let _ = std::fs::remove_file(&saved);
        let a = env
            .run("read-iops")
            .target(&target)
            .size("8M")
            .sessions(1)
            .duration("1s")
            .warmup("0s")
            // A seed of its own: one above i64::MAX is written as its digits, which dbio's
            // job reader takes and a strict TOML parser (`toml_of`, below) does not.
            .opt("--seed", 12345)
            .path_opt("--save-job", &saved)
            .json();
        let t = toml_of(&saved);
        assert_eq!(
            t["dataset"]["target"].as_str(),
            Some(target.to_str().unwrap()),
            "{name:?}"
        );
        // Read back and run as it is: the same data set, the same run.
        let b = env.run_job(&saved).json();
        assert_eq!(b["dataset"]["path"], a["dataset"]["path"], "{name:?}");
        assert_eq!(
            b["dataset"]["path"].as_str(),
            Some(target.to_str().unwrap())
        );
        assert!(b["dataset"]["reused"].as_bool().unwrap(), "{name:?}");
        for key in [
            "sessions",
            "duration_s",
            "seed",
            "size_bytes",
            "request_bytes",
        ] {
            assert_eq!(b["config"][key], a["config"][key], "{name:?}: {key}");
        }
        assert_eq!(b["events"][0]["name"], a["events"][0]["name"]);
    }
}

#[test]
fn a_job_made_from_a_report_with_hostile_names_reads_back_and_runs() {
    let env = Env::new();
    // The report's file name is cited in the job (its comments and `observed.from`).
    let report = env.join(&format!("iostat {HOSTILE}.txt"));
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/capture/iostat-sysstat10.txt"),
        &report,
    )
    .unwrap();
    let target = env.join(HOSTILE);
    let job = env.join("job.toml");
    env.cmd("job")
        .arg("from-iostat")
        .arg(&report)
        .arg("--peak")
        .target(&target)
        .path_opt("-o", &job)
        .ok();
    let t = toml_of(&job);
    assert_eq!(
        t["dataset"]["target"].as_str(),
        Some(target.to_str().unwrap())
    );
    let classes = t["class"].as_array().unwrap();
    let from: Vec<&str> = (classes.iter())
        .map(|c| c["observed"]["from"].as_str().unwrap())
        .collect();
    // A citation is one line: the name's control characters are spaces in it.
    let cited = report
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .replace(|c: char| c.is_control(), " ");
    assert!(from.iter().all(|f| f.contains(&cited)), "{from:?}");
    // It runs (the storage may miss the report's limits: a verdict, not an error), and the
    // job it ran is the one written, value for value.
    let out = env
        .run_job(&job)
        .size("8M")
        .duration("1s")
        .warmup("0s")
        .arg("--json")
        .out();
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        r["dataset"]["path"].as_str(),
        Some(target.to_str().unwrap())
    );
    assert_eq!(
        r["job"]["dataset"]["target"].as_str(),
        Some(target.to_str().unwrap())
    );
    let ran: Vec<&str> = (r["job"]["class"].as_array().unwrap().iter())
        .map(|c| c["observed"]["from"].as_str().unwrap())
        .collect();
    assert_eq!(ran, from);
}
