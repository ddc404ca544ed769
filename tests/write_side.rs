//! The database's write side (issue 3): redo with group commit, DBWR, the OLTP mix, temp
//! spills and ASH. Each test runs the real binary and checks numbers that must hold.

use serde_json::Value;

use crate::util::{Dbio, Env, event_named as event, f, files_under, u};

/// A short run of `test` on small redo logs, its result printed as JSON.
fn short<'e>(env: &'e Env, test: &str) -> Dbio<'e> {
    let mut run = env.run(test);
    if test == "redo" || test == "oltp" {
        run = run.opt("--redo-file-size", "8M");
    }
    run.duration("2s").warmup("0s").arg("--json")
}

/// The ASH checks every test with ASH must pass: every state is ON CPU or an event of the
/// run; per second, active sessions add up to about `threads`.
fn assert_ash(r: &Value, busy_threads: (f64, f64)) {
    let ash = &r["ash"];
    assert!(u(&ash["samples"]) > 0, "ASH sampled: {ash}");
    let events: Vec<&str> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    for s in ash["states"].as_array().unwrap() {
        let s = s.as_str().unwrap();
        assert!(s == "ON CPU" || events.contains(&s), "state {s:?}");
    }
    let seconds = ash["seconds"].as_array().unwrap();
    assert!(!seconds.is_empty());
    for sec in seconds {
        let active: f64 = sec["active"].as_object().unwrap().values().map(f).sum();
        assert!(
            active >= busy_threads.0 && active <= busy_threads.1,
            "second {}: {active} active sessions, expected {busy_threads:?}: {sec}",
            sec["t"]
        );
    }
}

/// The "% DB time" column of summary.txt's Top Timed Events.
pub(crate) fn db_time_percentages(summary: &str) -> Vec<(String, f64)> {
    let mut lines = summary
        .lines()
        .skip_while(|l| !l.starts_with("Top Timed Events (DB time"));
    lines.next().expect("AWR-style Top Timed Events");
    let header = lines.next().unwrap();
    assert!(header.ends_with("% DB time"), "{header}");
    lines.next(); // ----
    lines
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let pct: f64 = l.split_whitespace().last().unwrap().parse().unwrap();
            (l[..26].trim().to_string(), pct)
        })
        .collect()
}

#[test]
fn redo_group_commit_emerges_and_every_byte_is_accounted_for() {
    let env = Env::new();
    let r = short(&env, "redo").sessions(16).json();
    let lfs = event(&r, "log file sync");
    let lfpw = event(&r, "log file parallel write");
    let redo = &r["redo"];
    let (commits, writes) = (u(&redo["commits"]), u(&redo["lgwr_writes"]));
    assert_eq!(u(&lfs["waits"]), commits, "one log file sync per commit");
    assert_eq!(
        u(&lfpw["waits"]),
        writes,
        "one log file parallel write per LGWR write"
    );
    assert!(
        commits >= writes && writes > 0,
        "{commits} commits, {writes} writes"
    );
    let per_write = f(&redo["commits_per_lgwr_write"]);
    assert!(
        per_write > 1.0,
        "group commit: {per_write} commits per write"
    );
    assert!((per_write - commits as f64 / writes as f64).abs() < 1e-9);
    // 2 KiB of redo per commit, 512-byte redo blocks: a write is exactly 2 KiB × commits.
    let mean = f(&redo["mean_lgwr_write_bytes"]);
    assert!(
        (mean - 2048.0 * per_write).abs() <= 0.05 * mean,
        "mean LGWR write {mean} vs 2K × {per_write}"
    );
    let a = &redo["accounting"];
    assert_eq!(u(&a["redo_generated_bytes"]), 2048 * u(&a["commits"]));
    assert_eq!(
        u(&a["bytes_written"]),
        u(&a["redo_generated_bytes"]) + u(&a["wastage_bytes"]),
        "written = generated + wastage: {a}"
    );
    assert_eq!(
        u(&a["wastage_bytes"]),
        0,
        "2K commits fill 512-byte blocks exactly"
    );
    assert_eq!(u(&lfs["bytes"]), 0, "a commit moves no bytes itself");
    assert_eq!(
        u(&lfpw["bytes"]),
        u(&r["totals"]["bytes"]),
        "only LGWR writes"
    );
    let t = &r["totals"];
    let secs = f(&r["measured_seconds"]);
    assert!((f(&t["commits_per_s"]) - commits as f64 / secs).abs() < 1e-6 * commits as f64);
    assert!(f(&t["transactions_per_s"]) >= f(&t["commits_per_s"]) * 0.99);
    let redo_mib = u(&redo["redo_bytes"]) as f64 / secs / (1u64 << 20) as f64;
    assert!((f(&t["redo_mib_per_s"]) - redo_mib).abs() < 1e-9);
    // 16 sessions plus LGWR, never more; LGWR idles between writes.
    assert_ash(&r, (14.0, 17.5));
    // The run directory's summary has the AWR table summing to 100 %.
    let run_dir = files_under(&env.join("dbio-runs"))
        .into_iter()
        .find(|p| p.ends_with("summary.txt"))
        .unwrap();
    let summary = std::fs::read_to_string(env.join("dbio-runs").join(run_dir)).unwrap();
    let rows = db_time_percentages(&summary);
    assert!(rows.iter().any(|(n, _)| n == "ON CPU"), "{rows:?}");
    assert!(rows.iter().any(|(n, _)| n == "log file sync"), "{rows:?}");
    let total: f64 = rows.iter().map(|r| r.1).sum();
    assert!(
        (total - 100.0).abs() < 0.5,
        "% DB time sums to {total}: {rows:?}"
    );
    for line in ["Redo MiB:", "Commits:", "Transactions:"] {
        assert!(summary.contains(line), "Load Profile has {line}");
    }
}

#[test]
fn redo_with_a_range_of_redo_sizes_rounds_writes_to_redo_blocks() {
    let env = Env::new();
    let r = short(&env, "redo")
        .sessions(8)
        .opt("--redo-per-commit", "100..3000")
        .opt("--redo-block", "4K")
        .json();
    let a = &r["redo"]["accounting"];
    let (written, generated, wastage) = (
        u(&a["bytes_written"]),
        u(&a["redo_generated_bytes"]),
        u(&a["wastage_bytes"]),
    );
    assert_eq!(written, generated + wastage);
    assert_eq!(written % 4096, 0, "whole redo blocks");
    assert!(
        wastage < 4096 * u(&a["lgwr_writes"]),
        "less than a block per write"
    );
    assert!(wastage > 0, "odd sizes leave part of the last block unused");
    let lfpw = event(&r, "log file parallel write");
    assert_eq!(u(&lfpw["bytes"]) % 4096, 0);
}

#[test]
fn redo_with_64_sessions_completes_on_a_small_machine() {
    let env = Env::new();
    let r = short(&env, "redo")
        .sessions(64)
        .opt("--redo-sync", "fdatasync")
        .io_mode("none")
        .json();
    assert_eq!(r["partial"], false);
    assert_eq!(r["redo"]["sync"], "fdatasync");
    assert!(f(&r["redo"]["commits_per_lgwr_write"]) > 1.0);
    let flags: Vec<&str> = r["config"]["open_flags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(!flags.contains(&"O_DIRECT"), "--io-mode none: {flags:?}");
}

#[test]
fn lgwr_pinning_and_noise_are_recorded() {
    let env = Env::new();
    let r = short(&env, "redo")
        .sessions(4)
        .opt("--lgwr-cpu", 0)
        .opt("--noise-cpu", 0)
        .json();
    assert_eq!(r["redo"]["lgwr_cpu"], 0);
    assert_eq!(r["redo"]["noise_cpu"], 0);
    let out = env.run("redo").opt("--lgwr-cpu", 4096).out();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--lgwr-cpu"), "{err}");
}

#[test]
fn oltp_without_updates_writes_nothing() {
    let env = Env::new();
    let r = short(&env, "oltp")
        .size("64M")
        .sessions(4)
        .opt("--update-pct", 0)
        .json();
    let o = &r["oltp"];
    assert!(u(&o["transactions"]) > 0);
    assert_eq!(u(&o["commits"]), 0);
    for name in [
        "db file parallel write",
        "log file parallel write",
        "log file sync",
    ] {
        assert_eq!(u(&event(&r, name)["requests"]), 0, "{name}");
    }
    assert_eq!(f(&r["totals"]["write_iops"]), 0.0);
    assert_eq!(f(&r["totals"]["commits_per_s"]), 0.0);
    let reads = event(&r, "db file sequential read");
    // Every block of every transaction is read from the data files (no cache).
    assert_eq!(u(&o["logical_reads"]), u(&o["physical_reads"]));
    let (physical, requests) = (u(&o["physical_reads"]), u(&reads["requests"]));
    assert!(
        physical.abs_diff(requests) <= 16 * 4,
        "{physical} vs {requests}"
    );
    assert_ash(&r, (3.0, 4.5));
}

#[test]
fn oltp_with_every_transaction_updating_commits_each_one() {
    let env = Env::new();
    let r = short(&env, "oltp")
        .size("64M")
        .sessions(4)
        .opt("--update-pct", 100)
        .arg("--async-reads")
        .json();
    let o = &r["oltp"];
    assert!(u(&o["transactions"]) > 0);
    assert_eq!(u(&o["commits"]), u(&o["transactions"]));
    assert_eq!(u(&event(&r, "log file sync")["requests"]), u(&o["commits"]));
    let reads = event(&r, "db file parallel read");
    assert!(u(&reads["waits"]) > 0 && u(&reads["requests"]) >= u(&reads["waits"]));
    assert!(
        u(&event(&r, "db file parallel write")["requests"]) > 0,
        "DBWR wrote"
    );
    assert!(
        u(&event(&r, "log file parallel write")["requests"]) > 0,
        "LGWR wrote"
    );
}

#[test]
fn oltp_with_a_cache_larger_than_the_data_set_reads_almost_nothing() {
    let env = Env::new();
    let r = short(&env, "oltp")
        .size("32M")
        .sessions(4)
        .opt("--cache-size", "64M")
        .opt("--writers", 2)
        .json();
    let o = &r["oltp"];
    let (logical, physical) = (u(&o["logical_reads"]), u(&o["physical_reads"]));
    assert!(logical > 0);
    assert!(
        (physical as f64) <= 0.01 * logical as f64,
        "{physical} physical of {logical} logical reads"
    );
    assert!(f(&o["buffer_hit_pct"]) >= 99.0);
    assert_eq!(
        u(&o["cache_loaded_blocks"]),
        32 * 128,
        "the whole data set was loaded"
    );
    assert!(
        u(&event(&r, "db file parallel write")["requests"]) > 0,
        "DBWR still writes"
    );
    assert!(
        r["events"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "free buffer waits")
    );
}

#[test]
fn oltp_with_a_small_cache_makes_sessions_wait_for_free_buffers() {
    let env = Env::new();
    // 256 buffers for 4 sessions pinning 32 blocks each, every transaction dirtying its 32
    // blocks, and a synchronous DBWR writing one block at a time: DBWR cannot keep up, so
    // sessions wait for clean buffers.
    let r = short(&env, "oltp")
        .size("64M")
        .sessions(4)
        .opt("--work-unit", 32)
        .sync_()
        .opt("--cache-size", "2M")
        .opt("--update-pct", 100)
        .arg("--cold-cache")
        .json();
    let fbw = event(&r, "free buffer waits");
    assert!(u(&fbw["waits"]) > 0, "free buffer waits: {fbw}");
    assert_eq!(u(&fbw["bytes"]), 0);
    let o = &r["oltp"];
    assert!(u(&o["physical_reads"]) > 0);
    assert!(o.get("cache_loaded_blocks").is_none(), "--cold-cache");
    let out = env
        .run("oltp")
        .size("64M")
        .opt("--cache-size", "256K")
        .out();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a cache too small for the pinned blocks"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cache-size"));
}

#[test]
fn temp_spills_are_written_read_back_and_removed() {
    let env = Env::new();
    let r = short(&env, "temp")
        .sessions(2)
        .opt("--spill-size", "8M")
        .opt("--temp-io", "1M")
        .json();
    let w = event(&r, "direct path write temp");
    let rd = event(&r, "direct path read temp");
    for e in [w, rd] {
        assert!(u(&e["requests"]) > 0, "{e}");
        assert_eq!(u(&e["bytes"]), u(&e["requests"]) << 20, "1M requests");
    }
    assert_eq!(u(&r["temp"]["temp_io_bytes"]), 1 << 20);
    let left = files_under(&env.join("dbio-data"));
    assert!(
        left.iter().all(|p| !p.contains("temp")),
        "temp files removed: {left:?}"
    );
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(env.join("dbio-data/dbio-manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["temp_files"].as_array().unwrap().len(), 0);
    let out = env.run("temp").opt("--temp-io", "32K").out();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--temp-io"));
}

#[test]
fn classic_tests_have_ash_too() {
    let env = Env::new();
    let r = env.quick("read-iops").sync_().json();
    assert_ash(&r, (1.5, 2.01));
    assert_eq!(r["ash"]["states"][0], "db file sequential read");
}

/// `--group-commit`: the log writer waits until that many commits wait before it writes.
/// With 4 sessions and a group of 4 (waiting up to 1 s for it), every write but those of
/// the run's end carries all four commits: 4 commits per write, where the emerging group
/// commit of the same run carries what happens to arrive while LGWR writes.
#[test]
fn group_commit_makes_the_log_writer_wait_for_the_commits_asked() {
    let env = Env::new();
    let r = short(&env, "redo")
        .sessions(4)
        .opt("--group-commit", "4")
        .opt("--group-commit-wait", "1s")
        .json();
    let redo = &r["redo"];
    assert_eq!(f(&redo["group_commit"]), 4.0, "{redo}");
    assert_eq!(redo["group_commit_wait"], "1s", "{redo}");
    let per_write = f(&redo["commits_per_lgwr_write"]);
    assert!(
        per_write > 3.9 && per_write <= 4.0,
        "4 commits per write asked: {per_write} ({redo})"
    );
    // Commits still wait for their own redo only: one log file sync each.
    assert_eq!(
        u(&event(&r, "log file sync")["waits"]),
        u(&redo["commits"]),
        "{redo}"
    );
    let run_dir = files_under(&env.join("dbio-runs"))
        .into_iter()
        .find(|p| p.ends_with("summary.txt"))
        .expect("a summary");
    let summary = std::fs::read_to_string(env.join("dbio-runs").join(run_dir)).unwrap();
    assert!(
        summary.contains("LGWR waited for 4 commits (or 1s) before a write (--group-commit)"),
        "{summary}"
    );
}

/// A job's `[redo] group_commit` (what `job from-pg` writes): commits on a schedule from
/// two sessions, the log writer waiting for both.
#[test]
fn a_jobs_group_commit_groups_its_scheduled_commits() {
    let env = Env::new();
    let job = env.join("group.toml");
    std::fs::write(
        &job,
        r#"
[dataset]
size = "64M"
[run]
duration = "2s"
warmup = "0s"
[redo]
file_size = "8M"
group_commit = 2
group_commit_wait = "500ms"
[[class]]
name = "log file sync"
event = "log file sync"
size = "2K"
sessions = 2
rate = 400
"#,
    )
    .unwrap();
    let r = env.run_job(&job).arg("--json").json();
    let redo = &r["redo"];
    assert_eq!(f(&redo["group_commit"]), 2.0, "{redo}");
    assert_eq!(redo["group_commit_wait"], "500ms", "{redo}");
    let per_write = f(&redo["commits_per_lgwr_write"]);
    assert!(
        per_write > 1.9 && per_write <= 2.0,
        "2 commits per write asked: {per_write} ({redo})"
    );
}

/// A group that cannot form, or a value that is not a count, is refused before anything
/// is made.
#[test]
fn a_group_commit_that_cannot_form_is_refused() {
    let env = Env::new();
    for (group, words) in [
        (
            "5",
            &["--group-commit", "at most 4 commit(s) wait at once"][..],
        ),
        ("0", &["--group-commit", "from 1 to 1000"][..]),
        ("0.5", &["--group-commit", "from 1 to 1000"][..]),
        ("nan", &["--group-commit", "from 1 to 1000"][..]),
        ("inf", &["--group-commit", "from 1 to 1000"][..]),
        ("-2", &["--group-commit"][..]),
        ("1,5", &["--group-commit", "from 1 to 1000"][..]),
        ("", &["--group-commit"][..]),
    ] {
        env.run("redo")
            .sessions(4)
            .opt("--group-commit", group)
            .refused_leaving_nothing(words);
    }
    env.run("redo")
        .opt("--group-commit-wait", "2ms")
        .refused_leaving_nothing(&["--group-commit-wait", "give --group-commit N too"]);
    for wait in ["0", "1us", "2s", "-1ms", "soon"] {
        env.run("redo")
            .opt("--group-commit", "2")
            .opt("--group-commit-wait", wait)
            .refused_leaving_nothing(&["--group-commit-wait"]);
    }
    // Only a run whose sessions commit has a log writer to group for.
    env.run("read-iops")
        .opt("--group-commit", "2")
        .refused_leaving_nothing(&["--group-commit"]);
}
