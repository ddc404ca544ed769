//! `dbio mem` and `dbio size` report through the shared renderers: what summary.txt,
//! report.html and the printed sizing show is the result's figures, row for row.

use std::path::Path;

use serde_json::Value;

use crate::util::{Env, f, files_under, u};

/// The rows of the first table after the line `title`: the lines between its rule
/// (dashes) and the next blank line.
fn table_after<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| *l != title);
    assert!(lines.next().is_some(), "no {title:?} in:\n{text}");
    lines
        .skip_while(|l| !l.starts_with("---"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_mem_curve_is_drawn_and_tabled_from_the_result() {
    let env = Env::new();
    let r = env.json(&[
        "mem",
        "--sizes",
        "16K,64K,1M",
        "--only",
        "curve",
        "--budget",
        "20ms",
        "--json",
    ]);
    let curve = r["curve"].as_array().expect("a curve");
    assert_eq!(curve.len(), 3);
    let runs = env.join("dbio-runs");
    let files = files_under(&runs);
    let dir = runs.join(Path::new(&files[0]).parent().unwrap());
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();

    // summary.txt: one row per point, with its figures.
    let rows = table_after(&summary, "Latency by working set");
    assert_eq!(rows.len(), curve.len(), "{summary}");
    for (row, p) in rows.iter().zip(curve) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        // Size is two words ("16.0 KiB"); then ns/load, spread, min, max, reps, level.
        let ns: f64 = cells[2].parse().unwrap();
        assert!(
            (ns - f(&p["ns"])).abs() <= f(&p["ns"]) * 0.01,
            "{row} vs {p}"
        );
        assert_eq!(cells[6].parse::<u64>().unwrap(), u(&p["reps"]), "{row}");
        assert_eq!(cells[7], p["level"].as_str().unwrap(), "{row}");
    }
    assert!(summary.contains("\nLevels: "), "{summary}");

    // report.html: one chart, on a log size axis, a dot per point with its figures as
    // the tip, a whisker where the repetitions spread, a dashed mark per cache size.
    assert_eq!(html.matches("<svg").count(), 1, "{html}");
    assert!(html.contains("working set (log scale)") && html.contains("ns per load (log scale)"));
    let tips: Vec<&str> = html
        .split("<circle ")
        .skip(1)
        .map(|c| {
            c.split("<title>")
                .nth(1)
                .unwrap()
                .split("</title>")
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(tips.len(), curve.len());
    for (tip, p) in tips.iter().zip(curve) {
        assert!(
            tip.contains(&format!("{:.2} ns per load", f(&p["ns"])))
                && tip.contains(p["level"].as_str().unwrap()),
            "{tip} vs {p}"
        );
    }
    let whiskers = html
        .split("<path class=\"ln\" stroke=")
        .skip(1)
        .filter(|p| p.split('>').next().unwrap().ends_with("\"/"))
        .count();
    let spread = curve
        .iter()
        .filter(|p| f(&p["max_ns"]) > f(&p["min_ns"]))
        .count();
    assert_eq!(whiskers, spread);
    let sizes: Vec<f64> = curve.iter().map(|p| f(&p["size_bytes"])).collect();
    let (lo, hi) = (sizes[0] / 1.15, sizes[sizes.len() - 1] * 1.15);
    let marked = r["topology"]["caches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| (lo..=hi).contains(&f(&c["size_bytes"])))
        .count();
    assert_eq!(html.matches("<path class=\"mark\"").count(), marked);
    assert!(!html.contains("<script") && !html.contains("http"));

    // `dbio runs` lists the run in the memory runs' table.
    let out = env.output(&["runs"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let rows = table_after(&text, "Memory runs (dbio mem)");
    assert_eq!(rows.len(), 1, "{text}");
    let cells: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(cells[0], "1", "{text}");
    assert!(cells.contains(&r["pages"].as_str().unwrap()), "{text}");
}

#[test]
fn the_sizing_prints_the_figures_of_its_json() {
    let env = Env::new();
    let plan = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/dw-5tb-sizing.toml");
    let r: Value = env.json(&["size", plan, "--json"]);
    let out = env.output(&["size", plan]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // The sections in order.
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("no {s:?}:\n{text}"));
    assert!(
        at("Requirements (the peak") < at("\nDevice and array")
            && at("\nDevice and array") < at("\nRequirements to Array & Device Capabilities")
            && at("\nRequirements to Array & Device Capabilities") < at("\nCapacity first")
    );
    // A row per class.
    let classes = table_after(&text, "Requirements (the peak, as the database issues it)");
    assert_eq!(
        classes.len(),
        r["requirements"]["classes"].as_array().unwrap().len()
    );
    // A row per constraint with its device count; the binding one is marked.
    let rows = table_after(&text, "Requirements to Array & Device Capabilities");
    assert_eq!(rows.len(), 3, "{text}");
    for (row, (title, key)) in rows.iter().zip([
        ("IOPS", "for_iops"),
        ("Bandwidth", "for_bandwidth"),
        ("Capacity", "for_capacity"),
    ]) {
        assert!(row.starts_with(title), "{row}");
        let devices = u(&r["devices"][key]).to_string();
        let binds = r["binding"].as_str().unwrap().eq_ignore_ascii_case(title);
        let cells: Vec<&str> = row.split_whitespace().collect();
        let last = if binds {
            assert_eq!(cells[cells.len() - 2..], ["←", "binds"], "{row}");
            cells[cells.len() - 3]
        } else {
            cells[cells.len() - 1]
        };
        assert_eq!(last, devices, "{row}");
    }
    assert!(
        text.contains(&format!("= {}\n", u(&r["devices"]["total"]))),
        "devices in total: {text}"
    );
}
