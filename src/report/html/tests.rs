use super::*;
use crate::report::fixture::run_result;
use crate::report::sections::format::{decimal, us};

const EVENTS: [&str; 4] = [
    "db file sequential read",
    "db file parallel read",
    "direct path read",
    "log file parallel write",
];

#[test]
fn one_hour_report_stays_under_two_megabytes() {
    let r = run_result(3600, &EVENTS, true);
    let html = render(&r);
    stderr_line!(
        "one-hour report with 4 events, ASH and OS: {} bytes",
        html.len()
    );
    assert!(html.len() < 2_000_000, "{} bytes", html.len());
    // Histograms (4) + IOPS, MiB/s, latency (3) + ASH (1) + CPU, 4 device charts, PSI (6).
    assert_eq!(html.matches("<svg").count(), 14);
    assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
}

#[test]
fn report_has_every_section_and_event() {
    let html = render(&run_result(30, &EVENTS, true));
    for part in [
        "Configuration",
        "Top Timed Events",
        "Load Profile",
        "Latency percentiles",
        "Per wait (µs)",
        "Latency histograms",
        "Per second",
        "Active sessions by state (ASH)",
        "Operating system",
        "Storage",
        "nr_requests",
        "Configuration findings",
        "max_sectors_kb",
        "Warnings",
    ] {
        assert!(html.contains(part), "report lacks {part}");
    }
    for e in EVENTS {
        assert!(
            html.matches(e).count() >= 5,
            "{e} is named in tables, legends and charts"
        );
    }
    let plain = render(&run_result(30, &EVENTS[..1], false));
    for absent in [
        "(ASH)",
        "Operating system",
        "id=\"storage\"",
        "Configuration findings",
    ] {
        assert!(!plain.contains(absent), "{absent} without data");
    }
}

#[test]
fn nothing_is_loaded_from_anywhere() {
    for html in [
        render(&run_result(30, &EVENTS, true)),
        compare_html(&[
            ("a".into(), &run_result(10, &EVENTS, false)),
            ("b".into(), &run_result(10, &EVENTS, false)),
        ]),
    ] {
        for needle in ["http:", "https:", "<script", "<link", "url(", "@import"] {
            assert!(!html.contains(needle), "{needle} in the page");
        }
        // Text from the run may say `src=` (escaped); no element may have such an attribute.
        for tag in html.split('<').skip(1).filter_map(|t| t.split('>').next()) {
            for attr in ["src=", "href=", "action=", "xlink:"] {
                assert!(!tag.contains(attr), "<{tag}>");
            }
        }
    }
}

#[test]
fn text_from_the_run_is_escaped() {
    let html = render(&run_result(5, &EVENTS[..1], true));
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<img"));
    assert!(!html.contains("<b>\"x\""));
    assert!(html.contains("/data/&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;"));
    assert!(html.contains("an &quot;async&quot; test &lt;ran&gt; synchronously"));
    assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

#[test]
fn comparison_shows_ratios_to_the_first_run_and_one_histogram_per_event() {
    let base = run_result(10, &EVENTS[..2], false);
    let mut faster = run_result(10, &EVENTS[1..3], false);
    let shared = &base.events[1];
    let e = &mut faster.events[0];
    assert_eq!(e.name, shared.name);
    e.iops = shared.iops * 2.0;
    e.latency_us.p99 = shared.latency_us.p99 / 4.0;
    let html = compare_html(&[("before".into(), &base), ("after <new>".into(), &faster)]);
    assert!(html.contains("after &lt;new&gt;"));
    // Three events over both runs; each gets a table and a histogram with both runs.
    for e in &EVENTS[..3] {
        assert!(html.contains(&format!("<h3>{e}</h3>")), "{e}");
    }
    assert_eq!(html.matches("<svg").count(), 3);
    assert!(html.contains("2.000×"), "IOPS doubled");
    assert!(html.contains("0.250×"), "p99 quartered");
    assert!(
        html.contains("not in this run"),
        "the second run lacks the first event"
    );
    // The shared event's histogram has bars of both runs, with their labels.
    assert!(html.contains("<title>before: "));
    assert!(html.contains("<title>after &lt;new&gt;: "));
}

#[test]
fn numbers_read_well() {
    assert_eq!(decimal(56750.634), "56,750.63");
    assert_eq!(decimal(0.0), "0.00");
    assert_eq!(us(3.214), "3.21");
    assert_eq!(us(1234.4), "1,234");
}
