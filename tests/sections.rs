//! Every report shows the same sections (issue 13): the text summary and report.html agree
//! on Top Timed Events, a job's report.html has its classes and verdict, and the storage
//! section is the tree `dbio map` draws.

use std::path::{Path, PathBuf};

use crate::util::Env;

/// The only run directory under `./dbio-runs`.
fn run_dir(env: &Env) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].clone()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The part of report.html from the heading with anchor `id` to the next section's.
fn html_section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<h2 id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id} in report.html"));
    let rest = &html[start..];
    let end = rest[1..].find("<h2 ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// The cells of every body row of the first table in `html`, tags stripped.
fn table_rows(html: &str) -> Vec<Vec<String>> {
    let table = &html[html.find("<table").expect("a table")..];
    let table = &table[..table.find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(2) // before the first row, the header
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| {
                    let text = &cell[cell.find('>').unwrap() + 1..];
                    text[..text.find("</td>").unwrap()].to_string()
                })
                .collect()
        })
        .collect()
}

#[test]
fn a_job_that_misses_min_iops_exits_3_and_its_report_shows_fail_in_a_verdict_table() {
    let env = Env::new();
    let job = env.join("fail.toml");
    std::fs::write(
        &job,
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
[[class]]
name = "scans"
event = "direct path read"
size = "128K"
submission = "async"
"#,
    )
    .unwrap();
    let out = env.run_job(job.to_str().unwrap()).out();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = run_dir(&env);
    let html = read(&dir.join("report.html"));

    let verdict = html_section(&html, "verdict");
    assert!(
        verdict.contains("Requirement vs Actual — FAIL"),
        "{verdict}"
    );
    let rows = table_rows(verdict);
    let row = |limit: &str| {
        rows.iter()
            .find(|r| r.iter().any(|c| c == limit))
            .unwrap_or_else(|| panic!("no {limit} row: {rows:?}"))
    };
    assert_eq!(row("IOPS").last().unwrap(), "FAIL", "{rows:?}");
    assert_eq!(row("IOPS")[0], "reads");
    assert_eq!(row("p99").last().unwrap(), "PASS", "{rows:?}");
    assert!(
        verdict.contains("<td class=\"fail\">FAIL</td>"),
        "{verdict}"
    );

    // The classes are on the page too, and the header says the classes differ.
    let classes = table_rows(html_section(&html, "classes"));
    let names: Vec<&str> = classes.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(names, ["reads", "scans"]);
    let summary = read(&dir.join("summary.txt"));
    for text in [&html, &summary] {
        assert!(text.contains("— job (mixed) —"), "{text}");
    }
    assert!(summary.contains("Requirement vs Actual — FAIL"));
}

#[test]
fn text_and_html_show_the_same_top_timed_events_and_the_same_storage_tree() {
    let env = Env::new();
    env.quick("read-iops").json();
    let dir = run_dir(&env);
    let summary = read(&dir.join("summary.txt"));
    let html = read(&dir.join("report.html"));

    let text_rows = crate::write_side::db_time_percentages(&summary);
    let html_rows: Vec<(String, f64)> = table_rows(html_section(&html, "events"))
        .into_iter()
        .map(|r| (r[0].clone(), r[5].parse().unwrap()))
        .collect();
    assert_eq!(text_rows, html_rows);
    assert!(
        text_rows.iter().any(|(n, _)| n == "ON CPU"),
        "{text_rows:?}"
    );

    // 2 sessions for 2 s at 10 Hz: at most 40 active samples, and both formats say so.
    for text in [&summary, &html] {
        assert!(text.contains("fewer than 100"), "{text}");
    }

    // The storage section is the tree `dbio map` prints, not a dump of the map's keys.
    let map = env.cmd("map").arg("dbio-data").out();
    assert!(map.status.success());
    let map = String::from_utf8_lossy(&map.stdout);
    let tree: Vec<&str> = map
        .lines()
        .skip(1) // the path, as typed
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(tree.len() >= 2, "{map}");
    let storage = html_section(&html, "storage");
    assert!(storage.contains("<pre class=\"tree\">"), "{storage}");
    for line in &tree {
        let escaped = line
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;");
        assert!(storage.contains(&escaped), "{line:?} not in {storage}");
        assert!(summary.contains(line), "{line:?} not in the summary");
    }
    assert!(!storage.contains("memory_backed"), "{storage}");
}

#[test]
fn enough_ash_samples_carry_no_warning() {
    let env = Env::new();
    env.quick("read-iops").opt("--ash-hz", 100).json();
    let summary = read(&run_dir(&env).join("summary.txt"));
    assert!(summary.contains("Top Timed Events (DB time"), "{summary}");
    assert!(!summary.contains("fewer than 100"), "{summary}");
}
