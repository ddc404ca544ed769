//! The results store: every run recorded, listed, shown again after its run directory is
//! gone, and compared with others. Every test names its store with `--db` inside the
//! test's temporary directories.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{Env, f, u};

/// Runs `dbio run TEST extra...` recording into `db`; returns its result.json.
fn run(env: &Env, db: &str, test: &str, extra: &[&str]) -> Value {
    env.quick(test).args(extra).db(db).json()
}

/// `dbio runs --json [args...]` against `db`.
fn runs(env: &Env, db: &str, args: &[&str]) -> Vec<Value> {
    env.runs()
        .arg("--json")
        .db(db)
        .args(args)
        .json()
        .as_array()
        .expect("a JSON array")
        .clone()
}

fn ids(listed: &[Value]) -> Vec<u64> {
    listed.iter().map(|r| u(&r["id"])).collect()
}

#[test]
fn three_runs_are_listed_and_filtered() {
    let env = Env::new();
    let db = env.db("three.db");
    let results = [
        run(&env, &db, "read-iops", &["--sync"]),
        run(
            &env,
            &db,
            "read-iops",
            &["--sync", "--block-size", "4K", "--fresh"],
        ),
        run(&env, &db, "write-iops", &["--fresh"]),
    ];

    let listed = runs(&env, &db, &[]);
    assert_eq!(listed.len(), 3, "{listed:?}");
    let all_ids = ids(&listed);
    assert!(all_ids.windows(2).all(|w| w[0] < w[1]), "oldest first");
    for (row, r) in listed.iter().zip(&results) {
        let e = &r["events"][0];
        assert_eq!(row["test"], r["test"]);
        assert_eq!(row["started_at"], r["started_at"]);
        assert_eq!(row["block_size"], r["config"]["block_size"]);
        assert_eq!(row["sessions"], r["config"]["sessions"]);
        assert_eq!(row["engine"], r["config"]["engine"]);
        assert_eq!(row["main_event"], e["name"]);
        assert_eq!(f(&row["iops"]), f(&e["iops"]));
        assert_eq!(f(&row["mib_per_s"]), f(&e["mib_per_s"]));
        assert_eq!(f(&row["p99_us"]), f(&e["latency_us"]["p99"]));
        let dir = PathBuf::from(row["run_dir"].as_str().unwrap());
        let on_disk: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                .unwrap();
        assert_eq!(&on_disk, r, "run_dir points at this run's directory");
    }
    assert_eq!(u(&listed[1]["block_size"]), 4096);

    assert_eq!(ids(&runs(&env, &db, &["--last", "1"])), &all_ids[2..]);
    assert_eq!(ids(&runs(&env, &db, &["--last", "2"])), &all_ids[1..]);
    assert_eq!(
        ids(&runs(&env, &db, &["--test", "read-iops"])),
        &all_ids[..2]
    );
    assert_eq!(
        ids(&runs(&env, &db, &["--test", "read-iops", "--last", "1"])),
        &all_ids[1..2]
    );
    assert!(runs(&env, &db, &["--test", "read-mbps"]).is_empty());

    let text = env.runs().db(&db).stdout();
    assert_eq!(text.lines().count(), 4, "a header and three runs:\n{text}");
    assert!(
        text.lines().nth(3).unwrap().contains("write-iops"),
        "{text}"
    );
}

/// The cells after `figure` on its line in `event`'s table of `dbio compare` (a ratio's
/// "within noise" mark, `~`, and what it means, "better"/"worse"/"same", left out).
fn compare_row(text: &str, event: &str, figure: &str) -> Vec<String> {
    let table = text
        .split("\n\n")
        .find(|t| t.starts_with(event))
        .unwrap_or_else(|| panic!("no table for {event}:\n{text}"));
    let line = table
        .lines()
        .find(|l| l.starts_with(figure))
        .unwrap_or_else(|| panic!("no {figure} row:\n{table}"));
    line[figure.len()..]
        .split_whitespace()
        .filter(|c| !["~", "better", "worse", "same"].contains(c))
        .map(|c| c.replace([',', '×'], ""))
        .collect()
}

#[test]
fn compare_prints_both_runs_and_the_ratio_to_the_first() {
    let env = Env::new();
    let db = env.db("compare.db");
    let first = run(&env, &db, "read-iops", &["--sync"]);
    let second = run(
        &env,
        &db,
        "read-iops",
        &["--sync", "--block-size", "4K", "--fresh"],
    );
    let listed = ids(&runs(&env, &db, &[]));
    let (a, b) = (listed[0].to_string(), listed[1].to_string());

    let html = env.join("compare.html").display().to_string();
    let text = env
        .cmd("compare")
        .args([&a, &b])
        .db(&db)
        .opt("--html", &html)
        .stdout();
    let page = std::fs::read_to_string(&html).expect("--html wrote the page");
    assert!(page.contains("<html"), "an HTML page");
    for label in [format!("run {a}"), format!("run {b}")] {
        assert!(page.contains(&label), "{label} is on the page");
    }
    assert!(text.contains(&format!("ratios are to run {a}")), "{text}");
    let (e1, e2) = (&first["events"][0], &second["events"][0]);
    let event = e1["name"].as_str().unwrap();
    assert_eq!(event, "db file sequential read");
    for (figure, pick) in [
        ("IOPS", &["iops"][..]),
        ("MiB/s", &["mib_per_s"][..]),
        ("p50 (µs)", &["latency_us", "p50"][..]),
        ("p99 (µs)", &["latency_us", "p99"][..]),
    ] {
        let value = |e: &Value| f(pick.iter().fold(e, |v, k| &v[*k]));
        let (v1, v2) = (value(e1), value(e2));
        let cells = compare_row(&text, event, figure);
        assert_eq!(cells.len(), 3, "{figure}: {cells:?}\n{text}");
        let printed: Vec<f64> = cells.iter().map(|c| c.parse().unwrap()).collect();
        // Figures are printed to 2 decimals below 100, to 1 above; the ratio to 3.
        assert!(
            (printed[0] - v1).abs() <= 0.05 + 1e-9,
            "{figure}: {printed:?} vs {v1}"
        );
        assert!(
            (printed[1] - v2).abs() <= 0.05 + 1e-9,
            "{figure}: {printed:?} vs {v2}"
        );
        let ratio = v2 / v1;
        assert!(
            (printed[2] - ratio).abs() <= 0.0005 + 1e-9,
            "{figure}: printed ratio {} vs {ratio} from the result.json files\n{text}",
            printed[2]
        );
        // The ratio says what it means for the figure: more IOPS is better, more latency worse.
        let line = (text.lines().skip_while(|l| !l.starts_with(event)))
            .find(|l| l.starts_with(figure))
            .unwrap();
        let more_is_better = figure == "IOPS" || figure == "MiB/s";
        let expected = if ratio == 1.0 {
            "same"
        } else if (ratio > 1.0) == more_is_better {
            "better"
        } else {
            "worse"
        };
        assert!(line.contains(expected), "{figure}: {expected}: {line}");
    }
    // Run directories and result.json files compare as ids do, mixed with ids; runs named
    // by their directories need no store.
    let mut dirs: Vec<_> = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    let by_id: Value = serde_json::from_str(
        &env.cmd("compare")
            .args([&a, &b])
            .arg("--json")
            .db(&db)
            .stdout(),
    )
    .unwrap();
    let mixed: Value = serde_json::from_str(
        &env.cmd("compare")
            .arg(&dirs[0])
            .arg(&b)
            .arg("--json")
            .db(&db)
            .stdout(),
    )
    .unwrap();
    let no_store = env.join("no-such-dir/none.db").display().to_string();
    let files: Value = serde_json::from_str(
        &env.cmd("compare")
            .arg(dirs[0].join("result.json"))
            .arg(&dirs[1])
            .arg("--json")
            .db(&no_store)
            .stdout(),
    )
    .unwrap();
    for other in [&mixed, &files] {
        assert_eq!(other["events"], by_id["events"], "{other}");
    }
    assert_eq!(
        by_id["events"][0]["figures"][0]["verdicts"][0],
        if f(&e2["iops"]) >= f(&e1["iops"]) {
            if f(&e2["iops"]) == f(&e1["iops"]) {
                "same"
            } else {
                "better"
            }
        } else {
            "worse"
        }
    );
    assert!(!std::path::Path::new(&no_store).exists());
    // What is neither an id nor a run directory is one line, exit 2.
    env.cmd("compare")
        .arg(&a)
        .arg(env.join("no-such-run"))
        .db(&db)
        .refused(&["no-such-run"]);
}

#[test]
fn a_deleted_run_directory_does_not_break_runs_or_show() {
    let env = Env::new();
    let db = env.db("deleted.db");
    run(&env, &db, "read-iops", &["--sync"]);
    let listed = runs(&env, &db, &[]);
    let id = u(&listed[0]["id"]).to_string();
    let dir = PathBuf::from(listed[0]["run_dir"].as_str().unwrap());
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    let result_json = std::fs::read_to_string(dir.join("result.json")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();

    assert_eq!(runs(&env, &db, &[]), listed);
    assert_eq!(env.show(&id).db(&db).stdout(), summary);
    assert_eq!(env.show(&id).arg("--json").db(&db).stdout(), result_json);
}

#[test]
fn an_unknown_id_is_one_line_and_exit_2() {
    let env = Env::new();
    let db = env.db("empty.db");
    for args in [
        &["show", "42", "--db", &db][..],
        &["compare", "1", "2", "--db", &db][..],
    ] {
        env.bare().args(args).refused(&["no run"]);
    }
    assert!(
        !std::path::Path::new(&db).exists(),
        "looking did not create a store"
    );
}

/// A store that cannot be written is known before the run: refused in one line naming
/// `--db`, exit 2, before anything is created or measured (it used to cost the run's
/// record after the run, with exit 0; issue 32, item 6).
#[test]
fn a_store_that_cannot_be_written_is_refused_before_the_run() {
    let env = Env::new();
    let not_a_dir = env.db("plain-file");
    std::fs::write(&not_a_dir, "not a directory").unwrap();
    let db = format!("{not_a_dir}/dbio.db");
    let out = env.quick("read-iops").arg("--json").sync_().db(&db).out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("error: --db") && lines[0].contains(&db),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // Nothing was made: no data set, no run directory; the file in the way is unchanged.
    assert!(!env.join("dbio-data").exists());
    assert!(!env.join("dbio-runs").exists());
    assert_eq!(
        std::fs::read_to_string(&not_a_dir).unwrap(),
        "not a directory"
    );
}

/// A file that is not a store (or a damaged one) is never repaired or replaced: the error
/// says where it is and how to move it aside, and the file is left as it was.
#[test]
fn a_damaged_store_says_where_it_is_and_how_to_move_it_aside() {
    let env = Env::new();
    let db = env.db("damaged.db");
    let garbage = b"this is not an SQLite database, and it is not dbio's to fix\n".repeat(100);
    std::fs::write(&db, &garbage).unwrap();
    let out = env.runs().db(&db).out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&db) && stderr.contains(&format!("mv {db} {db}.bad")),
        "{stderr}"
    );
    // A run still keeps its results, and warns once with the same advice.
    let out = env.quick("read-iops").arg("--json").sync_().db(&db).out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("not recorded") && stderr.contains("Move it aside"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        garbage,
        "the file is untouched"
    );
}

/// A reader that goes away (`dbio run … | head -c1`) does not lose the run: it is recorded
/// in the store and its directory is complete.
#[test]
fn a_run_whose_stdout_is_closed_early_is_still_recorded() {
    let env = Env::new();
    let db = env.db("closed.db");
    let mut child = env
        .quick("read-iops")
        .arg("--json")
        .sync_()
        .db(&db)
        .process()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run dbio");
    drop(child.stdout.take()); // the reader is gone before dbio prints anything
    let out = child.wait_with_output().expect("dbio ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "a closed stdout is not a crash: {stderr}"
    );
    let listed = runs(&env, &db, &[]);
    assert_eq!(listed.len(), 1, "recorded once: {listed:?}\n{stderr}");
    assert_eq!(listed[0]["test"], "read-iops");
    let dirs: Vec<_> = std::fs::read_dir(env.join("dbio-runs")).unwrap().collect();
    assert_eq!(dirs.len(), 1);
    let dir = dirs[0].as_ref().unwrap().path();
    for f in ["result.json", "summary.txt", "report.html"] {
        assert!(dir.join(f).is_file(), "{f} in {}", dir.display());
    }
}
