//! Small things a DBA noticed in report.html and the summary: labels cut at a chart's edge,
//! histogram bounds written two ways, an open loop's ASH chart scaled to sessions that were
//! never active, and a read test's data set said to hold redo and temp files.

use std::path::PathBuf;

use crate::util::{Dbio, Env, f};

/// One short run `cmd` in `env`: its result.json, report.html and summary.txt.
fn run(env: &Env, cmd: Dbio<'_>) -> (serde_json::Value, String, String) {
    let r = cmd.json();
    let runs: Vec<PathBuf> = std::fs::read_dir(env.join("dbio-runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let read = |name: &str| std::fs::read_to_string(runs[0].join(name)).unwrap();
    (r, read("report.html"), read("summary.txt"))
}

/// Undoes the escaping report.html applies to text.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The value of attribute `name` in a tag's attribute text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let at = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[at..].split('"').next()
}

/// A chart's text element: its attributes and its text.
struct Label {
    attrs: String,
    text: String,
}

/// Every `<svg>` of `html`: (viewBox width, its text elements).
fn charts(html: &str) -> Vec<(f64, Vec<Label>)> {
    html.split("<svg")
        .skip(1)
        .map(|rest| {
            let (open, body) = rest.split_once('>').unwrap();
            let body = body.split("</svg>").next().unwrap();
            let view: Vec<f64> = attr(open, "viewBox")
                .expect("a viewBox")
                .split(' ')
                .map(|v| v.parse().unwrap())
                .collect();
            let labels = body
                .split("<text")
                .skip(1)
                .map(|t| {
                    let (attrs, rest) = t.split_once('>').unwrap();
                    let text = rest.split("</text>").next().unwrap();
                    Label {
                        attrs: attrs.to_string(),
                        text: unescape(text),
                    }
                })
                .collect();
            (view[2], labels)
        })
        .collect()
}

/// The chart following the heading that contains `heading`.
fn chart_after<'a>(html: &'a str, heading: &str) -> &'a str {
    let at = html
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"));
    let start = at + html[at..].find("<svg").unwrap();
    let end = start + html[start..].find("</svg>").unwrap() + "</svg>".len();
    &html[start..end]
}

/// The y axis's tick labels of one chart (right-aligned left of the plot), as numbers.
fn y_ticks(svg: &str) -> Vec<f64> {
    let (_, labels) = charts(svg).remove(0);
    labels
        .iter()
        .filter(|l| attr(&l.attrs, "text-anchor") == Some("end") && !l.attrs.contains("class="))
        .map(|l| {
            l.text
                .parse::<f64>()
                .unwrap_or_else(|e| panic!("{:?}: {e}", l.text))
        })
        .collect()
}

#[test]
fn every_chart_label_stays_inside_its_chart() {
    let env = Env::new();
    let (_, html, _) = run(&env, env.quick("read-iops"));
    let all = charts(&html);
    assert!(all.len() > 5, "{} charts", all.len());
    let mut marks = 0;
    for (width, labels) in &all {
        for l in labels {
            let x: f64 = attr(&l.attrs, "x").unwrap().parse().unwrap();
            // At most 0.6 em a character: 11 px text, 12 px captions.
            let em = if l.attrs.contains("class=\"cap\"") {
                12.0
            } else {
                11.0
            };
            let w = l.text.chars().count() as f64 * 0.6 * em;
            let (left, right) = match attr(&l.attrs, "text-anchor").unwrap_or("start") {
                "middle" => (x - w / 2.0, x + w / 2.0),
                "end" => (x - w, x),
                _ => (x, x + w),
            };
            assert!(
                left >= 0.0 && right <= *width,
                "{:?} spans {left:.1}..{right:.1} of a {width} wide chart",
                l.text
            );
            marks += usize::from(l.attrs.contains("class=\"mark\""));
        }
    }
    assert!(marks >= 3, "the percentile markers were drawn: {marks}");
}

#[test]
fn histogram_table_and_chart_write_the_bucket_bounds_alike() {
    let env = Env::new();
    let (_, html, _) = run(&env, env.quick("read-iops"));
    // The table's columns: "<4.1ms" is the bucket below 4.1ms.
    let table: Vec<String> = html
        .split("<th>")
        .skip(1)
        .filter_map(|t| t.split("</th>").next())
        .filter_map(|t| unescape(t).strip_prefix('<').map(str::to_string))
        .collect();
    assert!(table.len() >= 2, "bucket columns: {table:?}");
    // The chart's latency axis: centred labels without a class (bars' values have one).
    let svg = chart_after(&html, "Latency histograms");
    let (_, labels) = charts(svg).remove(0);
    let axis: Vec<&str> = labels
        .iter()
        .filter(|l| attr(&l.attrs, "text-anchor") == Some("middle") && !l.attrs.contains("class="))
        .map(|l| l.text.as_str())
        .collect();
    assert!(axis.len() >= 3, "axis labels: {axis:?}");
    // The leftmost tick is the first bucket's lower bound; every other tick is a column's
    // upper bound, written the same way.
    for a in &axis[1..] {
        assert!(
            table.iter().any(|t| t == a),
            "axis label {a:?} is not a table column: {table:?}"
        );
    }
}

#[test]
fn ash_of_an_open_loop_run_is_scaled_to_what_was_active() {
    let env = Env::new();
    let (r, html, _) = run(
        &env,
        env.run("read-iops")
            .size("64M")
            .sessions(8)
            .rate(100)
            .duration("2s")
            .warmup("0s"),
    );
    assert_eq!(f(&r["classes"][0]["rate_target"]), 100.0, "an open loop");
    let active = r["ash"]["seconds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s["active"]
                .as_object()
                .unwrap()
                .values()
                .map(f)
                .sum::<f64>()
        })
        .fold(0.0, f64::max);
    assert!(
        active < 8.0,
        "the run kept {active} of its 8 sessions active"
    );
    let svg = chart_after(&html, "(ASH)");
    let top = y_ticks(svg).into_iter().fold(0.0, f64::max);
    assert!(
        top >= active,
        "the axis ({top}) holds what was active ({active})"
    );
    assert!(
        top < 8.0,
        "the axis goes up to {top}, the session count is 8"
    );
    assert!(top >= 1.0, "at least one session: {top}");
    assert!(
        !svg.contains("8 sessions"),
        "the pool's line is off the scale"
    );

    // A closed loop's ASH keeps its session count as the scale, and its line.
    let env = Env::new();
    let (_, html, _) = run(&env, env.quick("read-iops"));
    let svg = chart_after(&html, "(ASH)");
    let top = y_ticks(svg).into_iter().fold(0.0, f64::max);
    assert!(top >= 2.0, "a closed loop of 2 sessions: axis to {top}");
    assert!(svg.contains(">2 sessions</text>"), "the session line");
}

/// The summary's line about the data set kept on disk.
fn kept_line(summary: &str) -> &str {
    summary
        .lines()
        .find(|l| l.contains("Data set kept in"))
        .unwrap_or_else(|| panic!("no data set line in:\n{summary}"))
}

#[test]
fn the_summary_says_what_the_data_set_holds() {
    let env = Env::new();
    let (r, html, summary) = run(&env, env.quick("read-iops"));
    assert!(r["redo"].is_null() && r["temp"].is_null(), "a read test");
    let line = kept_line(&summary);
    assert!(line.contains("on disk: data files)"), "{line}");
    assert!(!line.contains("redo") && !line.contains("temp"), "{line}");
    assert!(
        html.contains("on disk: data files)"),
        "report.html says so too"
    );

    let env = Env::new();
    let (r, _, summary) = run(&env, env.quick("redo"));
    assert!(r["redo"].is_object(), "a redo test");
    let line = kept_line(&summary);
    assert!(
        line.contains("on disk: data files and redo logs)"),
        "{line}"
    );
    assert!(!line.contains("temp"), "{line}");
}
