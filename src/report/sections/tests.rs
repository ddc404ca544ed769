use super::*;
use crate::report::fixture::{run_result, storage_map};
use crate::report::result::{
    ClassResultJson, ClassVerdictJson, LimitVerdictJson, StorageJson, VerdictJson,
};

const EVENTS: [&str; 2] = ["db file sequential read", "direct path read"];

fn class(name: &str, event_index: usize, submission: &str, rate: Option<f64>) -> ClassResultJson {
    ClassResultJson {
        name: name.into(),
        event: EVENTS[event_index].into(),
        event_index,
        size_bytes: 8192,
        sizes: None,
        mean_request_bytes: Some(8192.0),
        sessions: 2,
        submission: submission.into(),
        rate_target: rate,
        arrival: if rate.is_some() { "fixed" } else { "closed" }.into(),
        rate_achieved: 100.0,
        lateness_mean_us: None,
        lateness_max_us: None,
        service_us: None,
    }
}

fn section<'a>(report: &'a Report, id: &str) -> Option<&'a Section> {
    report.sections.iter().find(|s| s.id == id)
}

fn tables(s: &Section) -> impl Iterator<Item = &Table> {
    s.blocks.iter().filter_map(|b| match b {
        Block::Table(t) => Some(t),
        _ => None,
    })
}

fn has_caution(s: &Section, needle: &str) -> bool {
    (s.blocks.iter()).any(|b| matches!(b, Block::Caution(c) if c.contains(needle)))
}

#[test]
fn a_job_header_says_mixed_when_its_classes_differ_in_submission() {
    let mut r = run_result(5, &EVENTS, false);
    r.test = "job".into();
    assert!(
        run(&r).title.contains("— job (async) —"),
        "no classes: the config's"
    );
    r.classes = vec![class("a", 0, "sync", None), class("b", 1, "sync", None)];
    assert!(run(&r).title.contains("— job (sync) —"));
    r.classes[1].submission = "async".into();
    let title = run(&r).title;
    assert!(title.contains("— job (mixed) —"), "{title}");
    assert!(crate::report::summary::render(&r).starts_with(&format!("{title}\n")));
}

#[test]
fn top_timed_events_warns_when_it_rests_on_fewer_than_100_samples() {
    // 3 states sampled 10 times a second: 30 active samples a second.
    let few = run_result(3, &EVENTS, true);
    let many = run_result(4, &EVENTS, true);
    let warned = |r: &RunResult| has_caution(section(&run(r), "events").unwrap(), "fewer than 100");
    assert!(warned(&few), "90 samples");
    assert!(!warned(&many), "120 samples");
    // Without ASH (an old result) there is nothing to warn about: % of session time.
    let old = run_result(1, &EVENTS, false);
    let events = run(&old);
    let s = section(&events, "events").unwrap();
    assert!(!has_caution(s, "ASH"));
    assert_eq!(tables(s).next().unwrap().columns[5].label, "% Session time");
}

#[test]
fn open_loop_says_idle_sessions_do_not_count() {
    let mut r = run_result(5, &EVENTS, true);
    fn says(r: &RunResult) -> bool {
        (section(&run(r), "events").unwrap().blocks.iter())
            .any(|b| matches!(b, Block::Note(n) if n.contains("idle sessions do not count")))
    }
    r.classes = vec![class("a", 0, "sync", None)];
    assert!(!says(&r), "closed loop");
    r.classes.push(class("b", 1, "async", Some(500.0)));
    assert!(says(&r), "a class at a rate");
}

#[test]
fn top_timed_events_lists_every_state_by_share_of_db_time() {
    let mut r = run_result(20, &EVENTS, true);
    let ash = r.ash.as_mut().unwrap();
    ash.samples_by_state.insert("ON CPU".into(), 500);
    ash.samples_by_state.insert(EVENTS[1].into(), 300);
    ash.samples_by_state.insert(EVENTS[0].into(), 200);
    let report = run(&r);
    let t = tables(section(&report, "events").unwrap())
        .next()
        .unwrap()
        .clone();
    let rows: Vec<(&str, &str)> = (t.rows.iter())
        .map(|r| (r[0].text.as_str(), r[5].text.as_str()))
        .collect();
    assert_eq!(
        rows,
        [("ON CPU", "50.0"), (EVENTS[1], "30.0"), (EVENTS[0], "20.0")]
    );
    assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
}

#[test]
fn the_verdict_marks_each_limit() {
    let mut r = run_result(5, &EVENTS, false);
    r.verdict = Some(VerdictJson {
        pass: false,
        classes: vec![ClassVerdictJson {
            class: "reads".into(),
            event: EVENTS[0].into(),
            pass: false,
            limits: vec![
                LimitVerdictJson {
                    limit: "p99_ms".into(),
                    op: "<=".into(),
                    required: 10.0,
                    measured: 0.8,
                    result: "PASS".into(),
                },
                LimitVerdictJson {
                    limit: "iops".into(),
                    op: ">=".into(),
                    required: 1e6,
                    measured: 4000.0,
                    result: "FAIL".into(),
                },
            ],
        }],
        failed: Vec::new(),
    });
    let report = run(&r);
    let s = section(&report, "verdict").unwrap();
    assert_eq!(s.title, "Requirement vs Actual — FAIL");
    let t = tables(s).next().unwrap();
    let marks: Vec<(&str, Mark)> = (t.rows.iter())
        .map(|r| (r[2].text.as_str(), r.last().unwrap().mark))
        .collect();
    assert_eq!(marks, [("p99", Mark::Pass), ("IOPS", Mark::Fail)]);
    // Limits in a DBA's words, with their units.
    assert_eq!(t.rows[0][3].text, "≤ 10 ms");
    // A job with requirements answers first.
    assert_eq!(report.sections[0].id, "verdict");
    let html = crate::report::html::render(&r);
    assert!(html.contains("<td class=\"fail\">FAIL</td>"));
    assert!(html.contains("<h2 id=\"verdict\">Requirement vs Actual — FAIL</h2>"));
}

#[test]
fn storage_is_the_tree_dbio_map_draws() {
    let mut r = run_result(5, &EVENTS, true);
    let tree = crate::report::sections::storage::tree(&storage_map());
    let report = run(&r);
    let blocks = &section(&report, "storage").unwrap().blocks;
    assert!(matches!(&blocks[..], [Block::Tree(t)] if *t == tree));
    assert!(tree.contains("└─ vda (254:0) disk") && tree.contains("nr_requests 256"));
    assert!(crate::report::summary::render(&r).contains(&tree));
    // A map from another dbio version is shown as it was written.
    r.storage = Some(StorageJson::Other(serde_json::json!({ "layers": ["vda"] })));
    let report = run(&r);
    let blocks = &section(&report, "storage").unwrap().blocks;
    assert!(matches!(&blocks[..], [Block::Tree(t)] if t.contains("\"layers\"")));
}

#[test]
fn a_stored_map_reads_back_as_a_map_and_anything_else_as_it_was() {
    let map = StorageJson::Map(storage_map());
    let json = serde_json::to_value(&map).unwrap();
    assert_eq!(
        json,
        serde_json::to_value(storage_map()).unwrap(),
        "unchanged"
    );
    let back: StorageJson = serde_json::from_value(json).unwrap();
    assert_eq!(back, map);
    let other: StorageJson = serde_json::from_str(r#"{"device":"vda"}"#).unwrap();
    assert!(matches!(other, StorageJson::Other(_)));
}

/// Every cell of every table reaches the text (unless the column is a detail) and the
/// page, and every field and note both: the renderers only add syntax.
#[test]
fn text_and_html_render_the_same_rows() {
    let mut r = run_result(30, &EVENTS, true);
    r.classes = vec![class("reads", 0, "sync", Some(100.0))];
    let report = run(&r);
    let text = crate::report::summary::text(&report);
    let html = crate::report::html::render(&r);
    let esc = crate::report::html::escape;
    let mut checked = 0;
    for s in &report.sections {
        for b in &s.blocks {
            match b {
                Block::Table(t) => {
                    for row in &t.rows {
                        for (i, cell) in row.iter().enumerate() {
                            let detail = t.columns.get(i).is_some_and(|c| c.detail);
                            assert!(detail || text.contains(&cell.text), "{}", cell.text);
                            assert!(html.contains(&esc(&cell.text)), "{}", cell.text);
                            checked += 1;
                        }
                    }
                }
                Block::Fields(f) => {
                    for (k, v) in f {
                        assert!(text.contains(&format!("{k}: {v}")), "{k}");
                        assert!(html.contains(&esc(v)), "{k}");
                    }
                }
                Block::Note(n) | Block::Caution(n) => {
                    assert!(text.contains(n.as_str()) && html.contains(&esc(n)), "{n}");
                }
                _ => {}
            }
        }
    }
    assert!(checked > 100, "{checked} cells");
}

#[test]
fn the_main_event_is_the_tests_own_whatever_took_longest() {
    let mut r = run_result(
        5,
        &["direct path write temp", "direct path read temp"],
        false,
    );
    for (i, e) in r.events.iter_mut().enumerate() {
        e.wait_time_s = 10.0 * i as f64;
    }
    assert_eq!(r.main_event().unwrap().name, "direct path write temp");
    r.events.swap(0, 1);
    assert_eq!(r.main_event().unwrap().name, "direct path read temp");
}

/// The per-second charts carry their points: a renderer needs the model, not the result.
#[test]
fn per_second_charts_carry_their_points() {
    let r = run_result(30, &EVENTS, true);
    let report = run(&r);
    let charts: Vec<&Lines> = (report.sections.iter())
        .flat_map(|s| &s.blocks)
        .filter_map(|b| match b {
            Block::Chart(Chart::Lines(l)) => Some(l),
            _ => None,
        })
        .collect();
    let iops = charts
        .iter()
        .find(|l| l.title.as_deref() == Some("IOPS"))
        .expect("an IOPS chart");
    assert!(matches!(iops.x, Axis::Seconds(30)), "{:?}", iops.x);
    assert_eq!(iops.series.len(), EVENTS.len());
    assert_eq!(iops.series[0].label, EVENTS[0]);
    let first = &iops.series[0].points;
    assert_eq!(first.len(), 30);
    assert_eq!(first[0].x, 1.0);
    let rows: Vec<SecondRow> = second_rows(&r).filter(|p| p.event == EVENTS[0]).collect();
    assert_eq!(first[0].y, Some(rows[0].requests_per_s));
    let ash = charts.iter().find(|l| l.stacked && l.reference.is_some());
    let ash = ash.expect("the ASH chart, stacked, with the session line");
    assert_eq!(ash.reference.as_ref().unwrap().1, "8 sessions");
    // The page is drawn from the report alone and gets every chart.
    let html = crate::report::html::page(&report);
    assert_eq!(html, crate::report::html::render(&r));
    let text = crate::report::summary::text(&report);
    assert!(
        !text.contains("Average active sessions per second"),
        "{text}"
    );
}

/// A run whose first event fell to a tenth of its rate halfway (judged again from its
/// series, as a run judges itself).
fn collapsed(seconds: u32) -> RunResult {
    let mut r = run_result(seconds, &EVENTS, false);
    for p in (r.timeseries.iter_mut()).filter(|p| p.t > seconds / 2 && p.event == EVENTS[0]) {
        p.requests /= 10;
    }
    r.warnings.clear();
    r.judge_stability();
    r
}

#[test]
fn stability_is_a_section_with_a_verdict_per_event_and_figure() {
    let r = collapsed(20);
    let report = run(&r);
    let s = section(&report, "stability").expect("a stability section");
    assert_eq!(s.title, "Stability — UNSTABLE");
    let t = tables(s).next().unwrap();
    let row = |event: &str, what: &str| {
        (t.rows.iter())
            .find(|row| row[0].text == event && row[1].text == what)
            .unwrap_or_else(|| panic!("no row {event} {what}"))
    };
    let fell = row(EVENTS[0], "requests");
    assert_eq!(fell.last().unwrap().text, "UNSTABLE: fell");
    assert_eq!(fell.last().unwrap().mark, Mark::Fail);
    let st = r.events[0].stability.as_ref().unwrap();
    assert_eq!(fell[5].text, format!("{:.0} %", st.rate.cv_pct));
    assert_eq!(row(EVENTS[1], "requests").last().unwrap().text, "steady");
    assert_eq!(row(EVENTS[0], "p99").last().unwrap().text, "steady");
    // Its warning says how, in the summary.
    let text = crate::report::summary::render(&r);
    assert!(text.contains("Stability — UNSTABLE"), "{text}");
    assert!(
        text.contains(&format!("\"{}\": requests fell from", EVENTS[0])),
        "{text}"
    );
    // A run too short to judge keeps its figures, without a verdict.
    let short = run(&collapsed(4));
    let t = tables(section(&short, "stability").unwrap())
        .next()
        .unwrap();
    assert_eq!(t.rows[0].last().unwrap().text, "not judged: under 5 s");
    // Results of older versions have no stability: no section.
    let mut old = run_result(10, &EVENTS, false);
    old.events.iter_mut().for_each(|e| e.stability = None);
    assert!(section(&run(&old), "stability").is_none());
}

#[test]
fn the_per_second_charts_shade_the_unstable_stretch() {
    let r = collapsed(20);
    let report = run(&r);
    let charts: Vec<&Lines> = (section(&report, "seconds").unwrap().blocks.iter())
        .filter_map(|b| match b {
            Block::Chart(Chart::Lines(l)) => Some(l),
            _ => None,
        })
        .collect();
    let iops = charts[0];
    assert_eq!(iops.title.as_deref(), Some("IOPS"));
    // The second half, in the first event's colour; nothing for the steady event.
    assert_eq!(iops.bands.len(), 1, "{:?}", iops.bands);
    let b = &iops.bands[0];
    assert_eq!((b.from, b.to, b.color), (10.0, 20.0, Color::Palette(0)));
    assert!(
        b.label.contains("off its opening level in seconds 11–20"),
        "{}",
        b.label
    );
    assert_eq!(charts[1].bands, iops.bands, "MiB/s follows the requests");
    assert!(charts[2].bands.is_empty(), "the p99 held");
    let html = crate::report::html::render(&r);
    assert_eq!(html.matches("class=\"band\"").count(), 2, "IOPS and MiB/s");
    assert!(
        !crate::report::html::render(&run_result(20, &EVENTS, false)).contains("class=\"band\"")
    );
}

#[test]
fn compare_marks_a_difference_within_the_runs_per_second_spread() {
    let a = run_result(20, &EVENTS[..1], false);
    let mut b = a.clone();
    let st = a.events[0].stability.as_ref().unwrap();
    // Within one per-second standard deviation: within noise; ten of them: not.
    let sd = st.rate.cv_pct / 100.0 * a.events[0].iops;
    b.events[0].iops = a.events[0].iops + 0.5 * sd;
    let mut c = a.clone();
    c.events[0].iops = a.events[0].iops + 10.0 * sd;
    let report = compare(&[
        ("run 1".into(), &a),
        ("run 2".into(), &b),
        ("run 3".into(), &c),
    ]);
    let s = section(&report, "event-1").unwrap();
    let iops = tables(s)
        .next()
        .unwrap()
        .rows
        .iter()
        .find(|r| r[0].text == "IOPS")
        .unwrap()
        .clone();
    assert!(iops[4].text.ends_with(" ~"), "{:?}", iops[4].text);
    assert!(!iops[5].text.contains('~'), "{:?}", iops[5].text);
    assert!(
        s.blocks
            .iter()
            .any(|b| matches!(b, Block::Note(n) if n.contains("within noise")))
    );
    // An unstable run is said to be so beside its figure.
    let d = collapsed(20);
    let report = compare(&[("run 1".into(), &a), ("run 4".into(), &d)]);
    assert!(has_caution(
        section(&report, "event-1").unwrap(),
        "run 4: its requests moved or swung"
    ));
}
