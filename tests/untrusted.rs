//! What dbio reads that someone else wrote — job files, result files, names on disk — is
//! untrusted: a job file starts no program unless the command line allows it, a crafted
//! result.json is refused in bounded time and memory, and whatever dbio prints shows control
//! characters escaped.

use std::process::Output;

use crate::util::{Env, assert_refused};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A job file of one class on a small data set in `env`, with `hosts` as its [hosts] table.
fn job_with_hosts(env: &Env, hosts: &str) -> String {
    let job = env.join("shared.toml");
    std::fs::write(
        &job,
        format!(
            "[dataset]\ntarget = \"{}\"\nsize = \"8M\"\n\n[run]\nduration = \"1s\"\nwarmup = \"0s\"\n\n[hosts]\n{hosts}\n[[class]]\nevent = \"db file sequential read\"\nsessions = 1\n",
            env.join("data").display()
        ),
    )
    .unwrap();
    job.display().to_string()
}

#[test]
fn a_job_files_ssh_command_runs_only_when_the_command_line_allows_it() {
    let env = Env::new();
    let marker = env.join("PWNED");
    let ssh = format!("sh -c 'echo ran >> {}' stand-in", marker.display());
    let job = job_with_hosts(&env, &format!("names = \"127.0.0.1\"\nssh = \"{ssh}\"\n"));
    env.run_job(&job)
        .refused(&["shared.toml (line 10)", "hosts.names", "--yes", "--hosts"]);
    assert!(!marker.exists(), "the job file's command ran");
    assert!(
        !env.join("data").exists(),
        "nothing is created before a refusal"
    );
    // --hosts typed allows reaching the hosts, not the job file's own ssh command.
    env.run_job(&job).opt("--hosts", "127.0.0.1").refused(&[
        "(line 11)",
        "hosts.ssh",
        &ssh,
        "--ssh",
        "--yes",
    ]);
    assert!(!marker.exists(), "the job file's command ran");

    // With --yes it runs, and its command line is printed before it does.
    let out = env.run_job(&job).yes().out();
    let err = stderr(&out);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(ran, "ran\n", "{err}");
    let shown = err
        .lines()
        .find(|l| l.starts_with("dbio: running "))
        .unwrap_or_else(|| panic!("the command is not shown: {err}"));
    assert!(
        shown.contains("sh -c") && shown.contains(" 127.0.0.1 -- "),
        "{shown}"
    );
    // The stand-in is no agent: the run fails, but not as a refusal of the job file.
    assert!(!out.status.success(), "{err}");
    assert!(!err.contains("starts no program"), "{err}");
}

#[test]
fn a_job_files_push_and_remote_binary_need_the_same_permission() {
    let env = Env::new();
    let job = job_with_hosts(&env, "names = \"127.0.0.1\"\npush = true\n");
    env.run_job(&job)
        .opt("--hosts", "127.0.0.1")
        .refused(&["hosts.push", "--push", "--yes"]);
    let job = job_with_hosts(&env, "names = \"127.0.0.1\"\nremote_dbio = \"/tmp/x\"\n");
    env.run_job(&job).opt("--hosts", "127.0.0.1").refused(&[
        "hosts.remote_dbio",
        "/tmp/x",
        "--remote-dbio",
    ]);
    // The same option typed replaces the job file's value, which then runs nothing. A
    // --yes still only goes with --destructive or --job.
    env.run("read-iops")
        .yes()
        .refused(&["--yes", "--destructive"]);
}

/// A real result of a one-second run on a small data set in `env` (recorded in its store
/// as run 1), and its run directory.
fn real_result(env: &Env) -> (serde_json::Value, std::path::PathBuf) {
    let target = env.join("data");
    let r = env
        .run("read-iops")
        .target(&target)
        .size("8M")
        .files(1)
        .sessions(1)
        .duration("1s")
        .warmup("0s")
        .io_mode("none")
        .json();
    let runs = env.join("dbio-runs");
    let dir = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    (r, dir)
}

/// `dbio report DIR` on `text` as result.json: refused with one line naming `field`, in
/// little time.
fn report_refuses(env: &Env, name: &str, text: &[u8], field: &str) {
    let dir = env.join(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("result.json"), text).unwrap();
    let t = std::time::Instant::now();
    let out = env.report(&dir).out();
    assert!(t.elapsed().as_secs() < 10, "{name}: {:?}", t.elapsed());
    assert_refused(&out, &[field]);
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        1,
        "{name}: a report was written"
    );
}

#[test]
fn crafted_result_files_are_refused_naming_the_field_in_bounded_time() {
    let env = Env::new();
    let (r, run_dir) = real_result(&env);
    // The real one reads back.
    let out = env.report(&run_dir).out();
    assert!(out.status.success(), "{}", stderr(&out));

    let crafted = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = r.clone();
        f(&mut v);
        serde_json::to_vec(&v).unwrap()
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "t-far",
            crafted(&|v| v["timeseries"][0]["t"] = 4_000_000_000u64.into()),
            "timeseries[0].t",
        ),
        (
            "t-huge",
            crafted(&|v| v["timeseries"][0]["t"] = serde_json::json!(1e15)),
            "t",
        ),
        (
            "seconds-huge",
            crafted(&|v| v["measured_seconds"] = serde_json::json!(1e15)),
            "measured_seconds",
        ),
        (
            "seconds-negative",
            crafted(&|v| v["measured_seconds"] = serde_json::json!(-1.0)),
            "measured_seconds",
        ),
        (
            "iops-negative",
            crafted(&|v| v["events"][0]["iops"] = serde_json::json!(-5.0)),
            "events[0].iops",
        ),
        (
            "buckets-many",
            crafted(&|v| {
                let b: Vec<_> = (0..100_000)
                    .map(|i| serde_json::json!({"lt_us": 1u64 << (i % 64), "count": 0}))
                    .collect();
                v["events"][0]["histogram_micro"] = b.into();
            }),
            "events[0].histogram_micro",
        ),
        (
            "buckets-not-powers",
            crafted(&|v| v["events"][0]["histogram_micro"][1]["lt_us"] = 3.into()),
            "events[0].histogram_micro[1].lt_us",
        ),
        (
            "counts-overflowing",
            crafted(&|v| {
                v["events"][0]["histogram_micro"][0]["count"] = u64::MAX.into();
                v["events"][0]["histogram_micro"][1]["count"] = u64::MAX.into();
            }),
            "events[0].histogram_micro",
        ),
        (
            "waits-over-requests",
            crafted(&|v| {
                let n = v["events"][0]["requests"].as_u64().unwrap();
                v["events"][0]["waits"] = (n + 1).into();
            }),
            "events[0].waits",
        ),
        (
            "string-huge",
            crafted(&|v| v["test"] = "x".repeat(1 << 20).into()),
            "'test'",
        ),
        (
            "nested",
            crafted(&|v| {
                v["job"] = serde_json::from_str(&format!("{}{}", "[".repeat(100), "]".repeat(100)))
                    .unwrap()
            }),
            "job",
        ),
        ("not-json", b"{\"schema\": ".to_vec(), "not JSON"),
        (
            "number-inf",
            b"{\"schema\": \"dbio.result.v1\", \"measured_seconds\": 1e999}".to_vec(),
            "result.json",
        ),
    ];
    for (name, text, field) in &cases {
        report_refuses(&env, name, text, field);
    }

    // Too large to be a result: refused before it is read (sparse, so the test writes nothing).
    let dir = env.join("huge");
    std::fs::create_dir(&dir).unwrap();
    let f = std::fs::File::create(dir.join("result.json")).unwrap();
    f.set_len(2 << 30).unwrap();
    let t = std::time::Instant::now();
    env.report(&dir).refused(&["bytes", "at most"]);
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());

    // A FIFO: refused at once, never waited on.
    let dir = env.join("fifo");
    std::fs::create_dir(&dir).unwrap();
    let fifo = dir.join("result.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let t = std::time::Instant::now();
    env.report(&dir).refused(&["not a regular file"]);
    assert!(t.elapsed().as_secs() < 10, "{:?}", t.elapsed());

    // A link: refused, its target untouched.
    let dir = env.join("link");
    std::fs::create_dir(&dir).unwrap();
    std::os::unix::fs::symlink(run_dir.join("result.json"), dir.join("result.json")).unwrap();
    env.report(&dir).refused(&["symbolic link"]);
}

#[test]
fn a_crafted_result_in_the_store_is_refused_by_show_and_compare() {
    let env = Env::new();
    let (r, _) = real_result(&env);
    let db = env.data_home.path().join("dbio/dbio.db");
    let mut v = r.clone();
    v["timeseries"][0]["t"] = 4_000_000_000u64.into();
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute(
        "UPDATE runs SET result_json = ?1 WHERE id = 1",
        [serde_json::to_string(&v).unwrap()],
    )
    .unwrap();
    drop(conn);
    for args in [&["show", "1"][..], &["compare", "1", "1"]] {
        let t = std::time::Instant::now();
        let out = env.bare().args(args).out();
        assert!(t.elapsed().as_secs() < 10, "{args:?}: {:?}", t.elapsed());
        assert_refused(&out, &["run 1", "timeseries[0].t"]);
    }
}

/// Whether `bytes` hold a raw ESC, or a line break inside `name`'s escaped form would have
/// split: no ESC at all, and every line that mentions the name's start mentions its end.
fn assert_shown_escaped(what: &str, bytes: &[u8]) {
    assert!(
        !bytes.contains(&0x1b),
        "{what}: a raw ESC in {}",
        String::from_utf8_lossy(bytes)
    );
    let text = String::from_utf8_lossy(bytes);
    for l in text.lines().filter(|l| l.contains("odd-name")) {
        assert!(
            l.contains("odd-name\\x1b[2J\\nsecond-line"),
            "{what}: the name is not shown escaped on one line: {l:?}\n{text}"
        );
    }
    assert!(
        !text.lines().any(|l| l.starts_with("second-line")),
        "{what}: a line break inside the name reached the output:\n{text}"
    );
}

#[test]
fn a_target_named_with_control_characters_is_shown_escaped_everywhere() {
    let env = Env::new();
    let target = env.join("odd-name\x1b[2J\nsecond-line");
    let t = target.to_str().unwrap();
    let out = env
        .run("read-iops")
        .target(t)
        .size("8M")
        .files(1)
        .sessions(1)
        .duration("1s")
        .warmup("0s")
        .io_mode("none")
        .out();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("odd-name"), "{}", stderr(&out));
    assert_shown_escaped("run stderr", &out.stderr);
    assert_shown_escaped("run stdout", &out.stdout);
    let runs = env.join("dbio-runs");
    let dir = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let summary = std::fs::read(dir.join("summary.txt")).unwrap();
    assert!(String::from_utf8_lossy(&summary).contains("odd-name"));
    assert_shown_escaped("summary.txt", &summary);
    let html = std::fs::read(dir.join("report.html")).unwrap();
    assert!(!html.contains(&0x1b), "report.html holds a raw ESC");
    let show = env.show("1").out();
    assert!(show.status.success(), "{}", stderr(&show));
    assert_shown_escaped("show", &show.stdout);

    // A refusal names it escaped, on one line.
    env.run("read-iops")
        .target(t)
        .size("100M")
        .files(1)
        .duration("1s")
        .refused(&["odd-name\\x1b[2J\\nsecond-line"]);

    let doctor = env.doctor().current_dir("/").out();
    assert!(String::from_utf8_lossy(&doctor.stdout).contains("odd-name"));
    assert_shown_escaped("doctor", &doctor.stdout);
    assert_shown_escaped("doctor stderr", &doctor.stderr);

    let clean = env.clean(t).out();
    assert!(clean.status.success(), "{}", stderr(&clean));
    let mut both = clean.stdout.clone();
    both.extend_from_slice(&clean.stderr);
    assert!(String::from_utf8_lossy(&both).contains("odd-name"));
    assert_shown_escaped("clean", &both);
    assert!(!target.exists());
}

#[test]
fn a_huge_option_value_is_echoed_cut_and_escaped() {
    let env = Env::new();
    let huge = format!("\x1b]0;x\x07{}", "9".repeat(100_000));
    for args in [
        vec!["run", "read-iops", "--size", huge.as_str()],
        vec![
            "run",
            "read-iops",
            "--target",
            huge.as_str(),
            "--duration",
            "1s",
        ],
        vec!["run", "read-iops", "--hosts", huge.as_str()],
    ] {
        let out = env.bare().args(&args).out();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{}", &err[..err.len().min(300)]);
        assert_eq!(err.lines().count(), 1, "{}", &err[..err.len().min(3000)]);
        assert!(err.len() < 1000, "{} bytes: {}", err.len(), &err[..300]);
        assert!(
            !err.as_bytes().contains(&0x1b) && !err.as_bytes().contains(&0x07),
            "{err}"
        );
        assert!(err.contains(&format!("--{}", &args[2][2..])), "{err}");
    }
    // The same from a job file: cut, and the key and line named.
    let job = env.join("big.toml");
    std::fs::write(
        &job,
        format!(
            "[run]\nduration = \"{}\"\n[[class]]\nevent = \"db file sequential read\"\n",
            "9".repeat(100_000)
        ),
    )
    .unwrap();
    let out = env.run_job(&job).out();
    assert_refused(
        &out,
        &["big.toml (line 2)", "run.duration", "(100000 bytes)"],
    );
    assert!(stderr(&out).len() < 1000, "{}", stderr(&out).len());
}

#[test]
fn job_file_numbers_that_overflow_name_their_key_and_line() {
    let env = Env::new();
    let job = env.join("over.toml");
    let cases = [
        (
            "[run]\nsessions = 99999999999999999999999\n",
            "run.sessions",
            "(line 2)",
        ),
        (
            "[run]\nseed = 18446744073709551616\n",
            "run.seed",
            "(line 2)",
        ),
        ("[run]\nseed = -1\n", "run.seed", "(line 2)"),
        (
            "[run]\nduration = \"1s\"\n\n[[class]]\nevent = \"db file sequential read\"\nsessions = 99999999999999999999999\n",
            "class.sessions",
            "(line 6)",
        ),
        (
            "[[class]]\nevent = \"db file sequential read\"\nsessions = 4294967296\n",
            "class.sessions",
            "(line 3)",
        ),
    ];
    for (text, key, line) in cases {
        let text = if text.contains("[[class]]") {
            text.to_string()
        } else {
            format!("{text}[[class]]\nevent = \"db file sequential read\"\n")
        };
        std::fs::write(&job, &text).unwrap();
        env.run_job(&job).refused(&["over.toml", line, key]);
    }
}
