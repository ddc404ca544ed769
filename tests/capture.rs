//! `dbio job from-awr` and `from-iostat`: report excerpts written for these tests (the
//! Statspack figures are those of a published OLTP benchmark run) become jobs whose classes,
//! rates and sizes are the reports' within 1 %, and the jobs run.

use std::path::{Path, PathBuf};

use crate::util::{Env, refusal_line, shm_dir, skip};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/capture")
        .join(name)
        .display()
        .to_string()
}

/// The job `dbio job ARGS` prints, parsed.
fn job(env: &Env, args: &[&str]) -> (toml::Table, String) {
    let out = env.output(args);
    assert!(
        out.status.success(),
        "dbio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let table: toml::Table = text
        .parse()
        .unwrap_or_else(|e| panic!("not TOML ({e}):\n{text}"));
    (table, text)
}

fn classes(t: &toml::Table) -> Vec<&toml::Table> {
    t["class"]
        .as_array()
        .expect("classes")
        .iter()
        .map(|c| c.as_table().unwrap())
        .collect()
}

fn class<'a>(t: &'a toml::Table, event: &str) -> &'a toml::Table {
    classes(t)
        .into_iter()
        .find(|c| c["event"].as_str() == Some(event))
        .unwrap_or_else(|| panic!("no class {event} in {t:#?}"))
}

fn rate(c: &toml::Table) -> f64 {
    match &c["rate"] {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        v => panic!("rate {v}"),
    }
}

fn within(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= want * 0.01,
        "{what}: {got} is not within 1 % of {want}"
    );
}

#[test]
fn a_statspack_report_becomes_its_classes_rates_and_sizes() {
    let env = Env::new();
    let (t, text) = job(&env, &["job", "from-awr", &fixture("statspack-10g.txt")]);
    let secs = 9.78 * 60.0;
    let seq = class(&t, "db file sequential read");
    within(rate(seq), 838_810.0 / secs, "db file sequential read/s");
    assert_eq!(seq["size"].as_str(), Some("8K"));
    // The mean wait, from the total time: 1,635 s over 838,810 waits.
    assert_eq!(seq["limits"]["mean"].as_str(), Some("1.95ms"), "{text}");
    // Little's law: 1,429/s × 1.95 ms = 2.8 in flight; twice that for bursts → 6 sessions.
    assert_eq!(seq["sessions"].as_integer(), Some(6));
    let sync = class(&t, "log file sync");
    within(rate(sync), 93_100.0 / secs, "log file sync/s");
    // Redo per commit: redo bytes/s ÷ commits/s.
    let per_commit: f64 = sync["size"].as_str().unwrap().parse().unwrap();
    within(
        per_commit,
        1_138_491.64 / (93_100.0 / secs),
        "redo per commit",
    );
    within(
        rate(class(&t, "db file parallel write")),
        153_334.0 / secs,
        "db file parallel write/s",
    );
    // One log writer per job: log file parallel write is said, not a class, beside commits.
    assert!(
        !classes(&t)
            .iter()
            .any(|c| c["event"].as_str() == Some("log file parallel write"))
    );
    assert!(
        text.contains("log file parallel write (159/s in the report)"),
        "{text}"
    );
    // Every figure cites its line; what the report does not say is marked.
    assert!(text.contains("statspack-10g.txt line 57: Wait Events: db file sequential read"));
    assert!(text.contains("assumed: the reports do not say how big the data is"));
    assert!(text.contains("assumed: the reports do not give a multiblock request"));
}

#[test]
fn an_awr_report_gives_background_events_histograms_and_iostat_sizes() {
    let env = Env::new();
    let (t, text) = job(&env, &["job", "from-awr", &fixture("awr-11g.txt")]);
    let secs = 60.10 * 60.0;
    within(
        rate(class(&t, "db file sequential read")),
        9_123_456.0 / secs,
        "sequential reads/s",
    );
    // The 99th percentile where the histogram reaches 99 %: <16ms for single-block reads.
    assert_eq!(
        class(&t, "db file sequential read")["limits"]["p99"].as_str(),
        Some("16.0ms"),
        "{text}"
    );
    // direct path read: the IOStat by Function's Direct Reads, 6.07762 MB/s over 12.7 req/s.
    let direct = class(&t, "direct path read");
    assert_eq!(
        direct["size"].as_str(),
        Some("488K"),
        "6.07762 MiB / 12.7 = 490K, in whole 8K blocks"
    );
    // DBWR: 342.1 write requests/s over 65.0 batches/s → batches of 5, rate in blocks/s.
    let dbwr = class(&t, "db file parallel write");
    let batches = 234_567.0 / secs;
    assert_eq!(dbwr["batch"].as_integer(), Some(5));
    within(rate(dbwr), batches * 5.0, "DBWR blocks/s");
    // Temp events come with a [temp] section; the idle SQL*Net event is not I/O.
    assert!(t.contains_key("temp"));
    class(&t, "direct path read temp");
    assert!(!text.contains("SQL*Net"));
}

#[test]
fn awr_19c_text_and_html_give_the_same_job() {
    let env = Env::new();
    let (text_job, text) = job(&env, &["job", "from-awr", &fixture("awr-19c.txt")]);
    let (html_job, html) = job(&env, &["job", "from-awr", &fixture("awr-19c.html")]);
    let secs = 30.05 * 60.0;
    for t in [&text_job, &html_job] {
        within(
            rate(class(t, "db file sequential read")),
            1_234_567.0 / secs,
            "sequential reads/s",
        );
        within(
            rate(class(t, "log file sync")),
            567_890.0 / secs,
            "commits/s",
        );
        within(
            rate(class(t, "db file parallel write")),
            98_765.0 / secs,
            "DBWR batches/s",
        );
        // Waits written with their units: 1.90ms, 886.95us.
        assert_eq!(
            class(t, "db file sequential read")["limits"]["mean"].as_str(),
            Some("1.90ms")
        );
        assert_eq!(
            class(t, "db file parallel write")["limits"]["mean"].as_str(),
            Some("0.887ms")
        );
    }
    assert!(html.contains("awr-19c.html line"), "{html}");
    // The wrapped event name is one event (not an I/O class dbio issues, so no class).
    assert!(!text.contains("incomplete"), "{text}");
}

#[test]
fn several_reports_average_or_give_the_peak_and_grow() {
    let env = Env::new();
    let a = fixture("awr-11g.txt");
    let b = fixture("awr-19c.txt");
    let (avg, _) = job(&env, &["job", "from-awr", &a, &b]);
    let (peak, _) = job(
        &env,
        &["job", "from-awr", &a, &b, "--peak", "--growth", "1.5"],
    );
    let (sa, sb) = (60.10 * 60.0, 30.05 * 60.0);
    within(
        rate(class(&avg, "log file sync")),
        (2_345_678.0 + 567_890.0) / (sa + sb),
        "average commits/s",
    );
    within(
        rate(class(&peak, "log file sync")),
        2_345_678.0 / sa * 1.5,
        "peak commits/s × 1.5",
    );
}

#[test]
fn a_job_from_a_report_runs_and_the_requirements_size() {
    let Some(shm) = shm_dir() else {
        return skip("no /dev/shm");
    };
    let env = Env::new();
    let file = env.join("job.toml");
    let data = shm.path().join("data");
    let out = env.output(&[
        "job",
        "from-awr",
        &fixture("awr-19c.txt"),
        "--target",
        data.to_str().unwrap(),
        "--size",
        "128M",
        "--requirements",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = env.output(&[
        "run",
        "--job",
        file.to_str().unwrap(),
        "--duration",
        "2s",
        "--warmup",
        "0s",
        "--json",
    ]);
    // PASS or FAIL against the report's waits: both are a verdict (exit 0 or 3).
    assert!(
        matches!(run.status.code(), Some(0) | Some(3)),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let names: Vec<&str> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for e in [
        "db file sequential read",
        "direct path read",
        "db file parallel write",
        "log file sync",
    ] {
        assert!(names.contains(&e), "{e} not run: {names:?}");
    }
    // What the report said of each class is in the result's job and beside the verdict.
    let observed = &r["job"]["class"][0]["observed"];
    within(
        observed["rate"].as_f64().unwrap(),
        1_234_567.0 / (30.05 * 60.0),
        "the report's rate kept",
    );
    let summary = crate::util::files_under(env.path())
        .into_iter()
        .find(|f| f.ends_with("summary.txt"))
        .expect("a summary.txt");
    let summary = std::fs::read_to_string(env.path().join(summary)).unwrap();
    let row = summary
        .lines()
        .find(|l| l.starts_with("db file sequential read") && l.contains("685/s at 1.9ms"))
        .unwrap_or_else(|| panic!("no report-vs-here row:\n{summary}"));
    assert!(row.contains("PASS") || row.contains("FAIL"), "{row}");
    // The same file with a device and an array is a sizing plan.
    let mut plan = std::fs::read_to_string(&file).unwrap();
    plan.push_str(
        "\n[device]\nname = \"ssd\"\ncapacity = \"1T\"\nraid = \"raid1\"\niops = 20000\nmib_per_s = 500\n\n[array]\nname = \"a\"\nmax_mib_per_s = 4000\nmax_devices = 24\n",
    );
    let plan_file = env.join("plan.toml");
    std::fs::write(&plan_file, plan).unwrap();
    let sized = env.output(&["size", plan_file.to_str().unwrap(), "--json"]);
    assert!(
        sized.status.success(),
        "{}",
        String::from_utf8_lossy(&sized.stderr)
    );
    let s: serde_json::Value = serde_json::from_slice(&sized.stdout).unwrap();
    assert!(s.to_string().contains("db file sequential read"), "{s}");
}

#[test]
fn iostat_output_of_two_sysstat_layouts_becomes_guessed_classes() {
    let env = Env::new();
    // sysstat 10: the first report (since boot) is left out; sdb's 8K reads at 1,200 and
    // 1,800/s average 1,500/s; small writes of sda and sdb add up.
    let (t, text) = job(
        &env,
        &["job", "from-iostat", &fixture("iostat-sysstat10.txt")],
    );
    let seq = class(&t, "db file sequential read");
    within(rate(seq), 1500.0, "reads/s");
    assert_eq!(seq["size"].as_str(), Some("8K"));
    within(
        rate(class(&t, "db file parallel write")),
        121.0,
        "small writes/s",
    );
    assert!(text.contains("guessed"), "{text}");
    let (t, _) = job(
        &env,
        &[
            "job",
            "from-iostat",
            &fixture("iostat-sysstat10.txt"),
            "--device",
            "sdb",
            "--peak",
        ],
    );
    within(
        rate(class(&t, "db file sequential read")),
        1800.0,
        "peak reads/s",
    );
    within(
        rate(class(&t, "db file parallel write")),
        140.0,
        "peak writes/s",
    );
    // sysstat 12: rareq-sz layout; 1M reads are multiblock, 128K writes direct path.
    let (t, _) = job(
        &env,
        &["job", "from-iostat", &fixture("iostat-sysstat12.txt")],
    );
    within(
        rate(class(&t, "db file sequential read")),
        2000.0,
        "nvme reads/s",
    );
    within(rate(class(&t, "direct path read")), 300.0, "1M reads/s");
    assert_eq!(class(&t, "direct path read")["size"].as_str(), Some("1M"));
    assert_eq!(
        class(&t, "direct path write")["size"].as_str(),
        Some("128K")
    );
}

#[test]
fn what_is_not_a_report_is_one_line_and_exit_2() {
    let env = Env::new();
    let write = |name: &str, text: &str| -> PathBuf {
        let p = env.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let empty = write("empty.txt", "");
    let no_interval = write("no-elapsed.txt", "Load Profile\nTop 5 Timed Events\n");
    let no_io = write(
        "no-io.txt",
        "   Elapsed:   60.00 (mins)\n\nTop 5 Timed Events\nEvent                 Waits    Time (s)\n--------------------- -------- --------\nlatch free               1,000        10\n",
    );
    let cases: [(&Path, &[&str]); 3] = [
        (&empty, &["empty.txt", "Elapsed"]),
        (&no_interval, &["no-elapsed.txt", "Elapsed"]),
        (&no_io, &["no-io.txt", "no wait event of an I/O class"]),
    ];
    for (file, words) in cases {
        let out = env.output(&["job", "from-awr", file.to_str().unwrap()]);
        refusal_line("from-awr", &out, words);
    }
    let out = env.output(&["job", "from-iostat", empty.to_str().unwrap()]);
    refusal_line("from-iostat", &out, &["empty.txt", "Device"]);
    let out = env.output(&["job", "from-awr", env.path().to_str().unwrap()]);
    refusal_line("a directory", &out, &["not a regular file"]);
    let out = env.output(&[
        "job",
        "from-iostat",
        &fixture("iostat-sysstat12.txt"),
        "--device",
        "sdz",
    ]);
    refusal_line("an unknown device", &out, &["--device sdz"]);
    for growth in ["0", "-1", "x", "inf"] {
        let out = env.output(&[
            "job",
            "from-awr",
            &fixture("awr-11g.txt"),
            "--growth",
            growth,
        ]);
        assert_eq!(out.status.code(), Some(2), "--growth {growth}");
    }
}

#[test]
fn an_existing_output_file_is_never_replaced() {
    let env = Env::new();
    let file = env.join("mine.toml");
    std::fs::write(&file, "precious").unwrap();
    let out = env.output(&[
        "job",
        "from-awr",
        &fixture("awr-11g.txt"),
        "-o",
        file.to_str().unwrap(),
    ]);
    refusal_line("-o over a file", &out, &["--output", "exists"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
}

/// A job written with `-o` is summed up on stdout as a report — text, `--format md` or
/// `--json` (`dbio.job-from.v1`) — with the figures of the file itself; without `-o` the job
/// file is what stdout carries, and `--json` is refused before any report is read.
#[test]
fn a_job_written_to_a_file_is_summed_up_in_text_markdown_and_json() {
    let env = Env::new();
    let awr = fixture("awr-19c.txt");
    let file = |n: &str| env.join(n).display().to_string();
    let text = env
        .cmd("job")
        .args(["from-awr", &awr, "-o", &file("a.toml")])
        .stdout();
    let md = env
        .cmd("job")
        .args(["from-awr", &awr, "-o", &file("b.toml"), "--format", "md"])
        .stdout();
    let j = env
        .cmd("job")
        .args(["from-awr", &awr, "-o", &file("c.toml")])
        .json();
    assert_eq!(j["schema"], "dbio.job-from.v1", "{j}");
    assert_eq!(j["job_file"], file("c.toml"));
    // Its classes are the file's, value for value.
    let job: toml::Table = std::fs::read_to_string(env.join("c.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let in_file = serde_json::to_value(&job["class"]).unwrap();
    assert_eq!(j["classes"], in_file);
    assert_eq!(j["dataset"], serde_json::to_value(&job["dataset"]).unwrap());
    let classes = j["classes"].as_array().unwrap();
    assert!(!classes.is_empty(), "{j}");
    // Each class is a row of the text and of the Markdown, with its rate and sessions.
    for c in classes {
        let (name, rate, sessions) = (
            c["name"].as_str().unwrap(),
            c["rate"].to_string(),
            c["sessions"].to_string(),
        );
        let row = |out: &str, sep: &str| {
            out.lines().any(|l| {
                let cells: Vec<&str> = l.split(sep).map(str::trim).collect();
                cells.contains(&name)
                    && cells.contains(&rate.as_str())
                    && cells.contains(&sessions.as_str())
            })
        };
        assert!(
            text.lines()
                .any(|l| l.starts_with(name) && l.contains(&rate)),
            "{name} {rate}: {text}"
        );
        assert!(row(&md, "|"), "{name} {rate} {sessions}: {md}");
    }
    assert!(
        text.contains("a.toml") && md.contains("b.toml"),
        "{text}{md}"
    );
    // Without -o: the job on stdout as before; --json (or --format md) is refused.
    let job_text = env.cmd("job").args(["from-awr", &awr]).stdout();
    assert!(job_text.contains("[[class]]"), "{job_text}");
    for extra in [["--json", ""], ["--format", "md"]] {
        let args: Vec<&str> = ["from-awr", awr.as_str()]
            .into_iter()
            .chain(extra.into_iter().filter(|a| !a.is_empty()))
            .collect();
        let out = env.cmd("job").args(args).out();
        refusal_line("--json without -o", &out, &["-o FILE"]);
    }
}
