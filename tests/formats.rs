//! `--format md`: the same report as text, as Markdown. The figures of `dbio run`, `dbio
//! sweep` and `dbio calibrate` in Markdown are those of their text (and of their JSON),
//! `dbio runs`, `show` and `compare` take the option too, and a bad value is refused.

use crate::util::{Env, f, only_run_dir, read_json, shm_dir};
use serde_json::Value;
use std::path::Path;

/// Every figure of `text` (digits, with `,` and `.` inside), in order.
fn figures(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let inner = matches!(c, ',' | '.')
            && !cur.is_empty()
            && chars.get(i + 1).is_some_and(|n| n.is_ascii_digit());
        if c.is_ascii_digit() || inner {
            cur.push(c);
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Markdown without its fenced JSON (the options, which text leaves out).
fn without_json(md: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for l in md.lines() {
        if l.starts_with("```json") {
            inside = true;
        } else if inside && l.starts_with("```") {
            inside = false;
        } else if !inside {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// `12,345` from 12345.4.
fn whole(v: f64) -> String {
    let s = (v.round() as u64).to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Microseconds as reports write them: `3.21`, `45.6`, `1,234`.
fn us(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        whole(v)
    }
}

fn ok(env: &Env, args: &[&str]) -> String {
    let out = env.output(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_run_in_markdown_has_the_figures_of_its_summary() {
    let Some(shm) = shm_dir() else {
        return crate::util::skip("no /dev/shm");
    };
    let env = Env::new();
    let data = shm.path().join("data").display().to_string();
    let db = env.db("md.db");
    let md = ok(
        &env,
        &[
            "run",
            "read-iops",
            "--target",
            &data,
            "--size",
            "32M",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--engine",
            "null",
            "--format",
            "md",
            "--db",
            &db,
        ],
    );
    let dir = only_run_dir(&env, "_read-iops_");
    let text = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    assert!(md.starts_with("# dbio "), "{md}");
    assert!(md.contains("\n## Top Timed Events"), "{md}");
    assert!(md.contains("\n| Event | Waits |"), "a pipe table: {md}");
    assert!(md.contains("|:--|--:|"), "aligned columns: {md}");
    let (mut a, mut b) = (figures(&text), figures(&without_json(&md)));
    assert!(a.len() > 40, "{text}");
    a.sort();
    b.sort();
    assert_eq!(a, b, "the same figures:\n{text}\n----\n{md}");
    // show and compare print the stored run the same way; text stays the default.
    let show_md = ok(&env, &["show", "1", "--db", &db, "--format", "md"]);
    assert_eq!(show_md, md, "show --format md is the run's Markdown");
    assert_eq!(ok(&env, &["show", "1", "--db", &db]), text);
    let cmp = ok(&env, &["compare", "1", "1", "--db", &db, "--format", "md"]);
    assert!(cmp.starts_with("# Compared runs"), "{cmp}");
    assert!(cmp.contains("| IOPS |"), "{cmp}");
    let runs = ok(&env, &["runs", "--db", &db, "--format", "md"]);
    let lines: Vec<&str> = runs.lines().collect();
    assert_eq!(lines.len(), 3, "header, alignment, one run: {runs}");
    assert!(lines[0].starts_with("| ID | Started |") && lines[2].starts_with("| 1 |"));

    // A bad value: one line naming the option, exit 2, nothing run.
    let out = env.output(&["runs", "--db", &db, "--format", "html"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error:") && stderr.contains("--format"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

/// The rows of the points table of a sweep's output holding `event`, as figures.
fn sweep_rows(out: &str, event: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| l.contains(event))
        .map(figures)
        .collect()
}

/// The figures a sweep prints for its points (label, IOPS, MiB/s, mean, p50, p99), from
/// sweep.json.
fn sweep_expected(s: &Value) -> Vec<Vec<String>> {
    s["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let l = &p["latency_us"];
            vec![
                p["label"].as_str().unwrap().to_string(),
                whole(f(&p["iops"])),
                format!("{:.1}", f(&p["mib_per_s"])),
                us(f(&l["mean"])),
                us(f(&l["p50"])),
                us(f(&l["p99"])),
            ]
        })
        .collect()
}

#[test]
fn sweep_in_markdown_and_text_prints_the_figures_of_sweep_json() {
    let Some(shm) = shm_dir() else {
        return crate::util::skip("no /dev/shm");
    };
    let env = Env::new();
    let data = shm.path().join("data").display().to_string();
    let mut outputs = Vec::new();
    for format in ["md", "text"] {
        let out = ok(
            &env,
            &[
                "sweep",
                "read-iops",
                "--param",
                "sessions=1,2",
                "--target",
                &data,
                "--size",
                "32M",
                "--duration",
                "1s",
                "--warmup",
                "0s",
                "--engine",
                "null",
                "--format",
                format,
            ],
        );
        let dir = only_run_dir(&env, "_sweep_");
        let s = read_json(&dir.join("sweep.json"));
        std::fs::remove_dir_all(&dir).unwrap();
        let rows = sweep_rows(&out, "db file parallel read");
        assert_eq!(rows, sweep_expected(&s), "{format}:\n{out}");
        outputs.push(out);
    }
    let (md, text) = (&outputs[0], &outputs[1]);
    assert!(md.starts_with("# dbio ") && md.contains("over sessions: 2 of 2 point(s)"));
    assert!(md.contains("\n| sessions | IOPS | MiB/s |"), "{md}");
    assert!(
        text.contains("over sessions: 2 of 2 point(s)") && !text.contains('|'),
        "{text}"
    );
}

#[test]
fn calibrate_in_markdown_and_text_prints_the_figures_of_calibrate_json() {
    let Some(shm) = shm_dir() else {
        return crate::util::skip("no /dev/shm");
    };
    let env = Env::new();
    let data = shm.path().join("data").display().to_string();
    for format in ["md", "text"] {
        let out = ok(
            &env,
            &[
                "calibrate",
                "--target",
                &data,
                "--size",
                "32M",
                "--point-duration",
                "300ms",
                "--warmup",
                "0s",
                "--max-outstanding",
                "2",
                "--engine",
                "null",
                "--format",
                format,
            ],
        );
        let dir = only_run_dir(&env, "_calibrate");
        let c = read_json(&dir.join("calibrate.json"));
        std::fs::remove_dir_all(&dir).unwrap();
        let mut want = Vec::new();
        for walk in ["small_reads", "large_reads", "single_session"] {
            for p in c[walk]["curve"].as_array().unwrap() {
                let l = &p["latency_us"];
                want.push(vec![
                    p["outstanding"].to_string(),
                    p["sessions"].to_string(),
                    p["per_session"].to_string(),
                    whole(f(&p["iops"])),
                    format!("{:.1}", f(&p["mib_per_s"])),
                    whole(f(&l["p95"])),
                    whole(f(&l["p99"])),
                ]);
            }
        }
        assert!(want.len() >= 3, "{c}");
        // The rows of the curves: the lines with `S×P` in them.
        let rows: Vec<Vec<String>> = out
            .lines()
            .filter(|l| l.contains('×') && !l.contains("Sessions×"))
            .map(figures)
            .collect();
        assert_eq!(rows, want, "{format}:\n{out}");
        let mib = format!("{:.1}", f(&c["max_mib_per_s"]["mib_per_s"]));
        let answer = out
            .lines()
            .find(|l| l.contains("Max large-read MiB/s"))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(answer.contains(&mib), "{answer} vs {mib}");
        if format == "md" {
            assert!(
                out.starts_with("# dbio ") && out.contains("\n## Answers\n"),
                "{out}"
            );
        }
    }
}

#[test]
fn size_and_mem_topology_in_markdown_have_the_figures_of_text() {
    let env = Env::new();
    let plan = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/dw-5tb-sizing.toml");
    let plan = plan.to_str().unwrap();
    let text = ok(&env, &["size", plan]);
    let md = ok(&env, &["size", plan, "--format", "md"]);
    assert!(md.contains("| Class | Event |"), "{md}");
    assert_eq!(
        figures(&md),
        figures(&text),
        "dbio size: md and text figures"
    );
    let text = ok(&env, &["mem", "--topology"]);
    let md = ok(&env, &["mem", "--topology", "--format", "md"]);
    assert!(md.starts_with("# "), "{md}");
    // The memory available moves between the two calls (22.5 GiB, then 22.6): left out.
    let steady = |s: &str| {
        let mut f = figures(s);
        let at = s.find(" GiB available").expect("memory available");
        let before = figures(&s[..at]).len();
        f.remove(before - 1);
        f
    };
    assert_eq!(
        steady(&md),
        steady(&text),
        "dbio mem --topology: md and text figures"
    );
}

/// Runs `dbio args...` three times — as text, `--format md` and `--json` — and returns the
/// three outputs (each must succeed).
fn three_ways(env: &Env, args: &[&str]) -> (String, String, Value) {
    let text = ok(env, args);
    let md = ok(env, &[args, &["--format", "md"]].concat());
    let json = env.json(&[args, &["--json"]].concat());
    (text, md, json)
}

/// The commands that look at or change data sets and run directories print their result
/// through the one output: text, Markdown with the figures of the text, and JSON (its
/// `schema` named) with the numbers the text shows.
#[test]
fn data_set_commands_print_text_markdown_and_json_with_the_same_figures() {
    let env = Env::new();
    let quiet = |args: &[&str]| {
        let out = env.output(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
    };
    let size = ["--size", "8M"];
    for d in ["dsa", "dsb", "dsc"] {
        quiet(&[&["prepare", "--target", d, "--verify"][..], &size].concat());
    }

    // prepare (the data set is there: reused, the same line every time).
    let (text, md, j) = three_ways(&env, &[&["prepare", "--target", "dsa"][..], &size].concat());
    assert_eq!(j["schema"], "dbio.prepare.v1", "{j}");
    assert_eq!(j["size_bytes"], 8 << 20);
    assert_eq!(j["reused"], true);
    assert!(
        text.contains(&format!("in {} file(s)", j["files"])),
        "{text}\n{j}"
    );
    assert_eq!(figures(&md), figures(&text), "{text}\n----\n{md}");

    // verify: its summary line is the text's last line (the seconds differ run to run).
    let (text, md, j) = three_ways(&env, &["verify", "dsa"]);
    assert_eq!(j["schema"], "dbio.verify.v1", "{j}");
    assert_eq!(j["bad"], serde_json::json!([]));
    let summary = j["summary"].as_str().unwrap();
    let fixed = |s: &str| s.split(" in ").next().unwrap().to_string();
    assert_eq!(
        fixed(text.lines().last().unwrap()),
        fixed(summary),
        "{text}"
    );
    assert_eq!(fixed(md.lines().last().unwrap()), fixed(summary), "{md}");
    assert!(
        summary.contains(&format!("{} file(s)", j["files"])),
        "{summary}"
    );

    // A run, then report, map and doctor on what it left.
    let run = env.json(&[
        "run",
        "read-iops",
        "--target",
        "dsa",
        "--size",
        "8M",
        "--sessions",
        "1",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
    ]);
    assert_eq!(run["test"], "read-iops");
    let dir = only_run_dir(&env, "_read-iops_");
    let dir = dir.to_str().unwrap();
    let (text, md, j) = three_ways(&env, &["report", dir]);
    assert_eq!(j["schema"], "dbio.report.v1", "{j}");
    let written: Vec<&str> = (j["written"].as_array().unwrap().iter())
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(written.iter().any(|w| w.ends_with("/report.html")), "{j}");
    let wrote: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("wrote "))
        .collect();
    assert_eq!(wrote, written, "{text}");
    assert_eq!(
        md.lines().filter(|l| l.starts_with("wrote ")).count(),
        written.len(),
        "{md}"
    );

    let (text, md, j) = three_ways(&env, &["map", "dsa"]);
    assert!(j["map"]["path"].as_str().unwrap().ends_with("/dsa"), "{j}");
    assert_eq!(j["map"]["kind"], "directory", "{j}");
    assert!(
        md.contains("\n```\n") || md.starts_with("```"),
        "the tree, fenced: {md}"
    );
    assert_eq!(figures(&md), figures(&text), "{text}\n----\n{md}");

    let (text, md, j) = three_ways(&env, &["doctor", "dsa", "dbio-runs"]);
    // The dbio processes of other tests come and go between the three calls: their lines are
    // left out of the comparison.
    let own = |s: &str| {
        s.lines()
            .filter(|l| {
                !l.starts_with("Other dbio processes")
                    && !l.trim_start().starts_with("pid ")
                    && !l.starts_with("- pid ")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (text, md) = (own(&text), own(&md));
    assert_eq!(j["schema"], "dbio.doctor.v1", "{j}");
    let sets = j["data_sets"].as_array().unwrap();
    assert_eq!(sets.len(), 1, "{j}");
    assert_eq!(sets[0]["data_files"], 4);
    assert!(text.contains("in 4 data file(s), ready"), "{text}");
    assert!(md.contains("\n## Data sets\n"), "{md}");
    assert!(md.contains("in 4 data file(s), ready"), "{md}");
    assert_eq!(figures(&md), figures(&text), "{text}\n----\n{md}");

    // clean --stale (nothing stale), then clean of three like data sets, one way each.
    let (text, md, j) = three_ways(&env, &["clean", "--stale", "dsa"]);
    assert_eq!(j["schema"], "dbio.clean-stale.v1", "{j}");
    assert_eq!(j["actions"], serde_json::json!([]));
    assert_eq!(
        (text.trim(), md.trim()),
        ("nothing stale found", "nothing stale found")
    );
    let text = ok(&env, &["clean", "dsa"]);
    let md = ok(&env, &["clean", "dsb", "--format", "md"]);
    let j = env.json(&["clean", "dsc", "--json"]);
    assert_eq!(j["schema"], "dbio.clean.v1", "{j}");
    assert_eq!(
        (&j["done"], &j["removed_dir"]),
        (&"removed".into(), &true.into())
    );
    // A data set made with --verify has its verify table: one file more than its data.
    let files = j["files"].as_u64().unwrap();
    assert!(
        text.starts_with(&format!("removed {files} file(s), 8.0 MiB from dsa")),
        "{text}\n{j}"
    );
    assert_eq!(figures(&md), figures(&text), "{text}\n----\n{md}");
    for d in ["dsa", "dsb", "dsc"] {
        assert!(!env.join(d).exists(), "{d} removed");
    }
}
