//! Data verification (`--verify`, `dbio verify`): runs that write and read a data set with
//! headers find nothing wrong; blocks changed behind dbio's back — torn, misdirected, or an
//! older copy put back (a lost write) — are found and named by file and block.

use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::util::{Env, event, u};

const BS: u64 = 8192;

/// A tiny data set: one 4 MiB file of 512 blocks, so short runs touch every block.
const SMALL: [&str; 4] = ["--size", "4M", "--files", "1"];

/// A short run: 2 sessions, 1 s, no warm-up, result.json on stdout.
fn quick<'a>(test: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        test,
        "--sessions",
        "2",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--json",
    ];
    v.extend_from_slice(extra);
    v
}

fn read_block(path: &Path, block: u64) -> Vec<u8> {
    let f = std::fs::File::open(path).unwrap();
    let mut b = vec![0u8; BS as usize];
    f.read_exact_at(&mut b, block * BS).unwrap();
    b
}

/// Overwrites a block behind dbio's back.
fn write_block(path: &Path, block: u64, data: &[u8]) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(data, block * BS).unwrap();
    f.sync_all().unwrap();
}

fn run_json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn runs_with_verify_find_no_bad_blocks_and_dbio_verify_agrees() {
    let env = Env::new();
    let w = env.json(&quick("write-iops", &["--size", "16M", "--verify"]));
    assert_eq!(w["config"]["verify"], true);
    assert!(u(&w["verify"]["blocks_written"]) > 0, "{}", w["verify"]);
    assert_eq!(w["verify"]["sequences_saved"], true);
    assert!(env.join("dbio-data/dbio-verify.seq").exists());

    let r = env.json(&quick("read-iops", &["--size", "16M", "--verify"]));
    assert!(u(&r["verify"]["blocks_checked"]) > 0, "{}", r["verify"]);
    assert_eq!(u(&r["verify"]["blocks_bad"]), 0, "{}", r["verify"]);
    assert_eq!(u(&event(&r)["errors"]), 0);
    assert!(u(&event(&r)["requests"]) > 0);

    let out = env.output(&["verify", "dbio-data"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("2,048 blocks") && stdout(&out).contains("no bad blocks"),
        "{}",
        stdout(&out)
    );
    // The summary says what was checked.
    let runs = crate::util::files_under(&env.join("dbio-runs"));
    let summary = runs
        .iter()
        .find(|p| p.contains("read-iops") && p.ends_with("summary.txt"));
    let text = std::fs::read_to_string(env.join("dbio-runs").join(summary.unwrap())).unwrap();
    assert!(
        text.contains("Verify: ") && text.contains(" 0 bad"),
        "{text}"
    );
}

#[test]
fn every_event_checks_what_it_reads_and_seals_what_it_writes() {
    let env = Env::new();
    let size = ["--size", "16M", "--verify"];
    for (test, extra) in [
        ("write-mbps", &[][..]),
        ("read-mbps", &["--sync"][..]),
        ("read-mbps", &[][..]),
        ("write-iops", &["--keep-inflight"][..]),
        ("read-iops", &["--sync"][..]),
        ("oltp", &["--update-pct", "100"][..]),
        (
            "oltp",
            &["--async-reads", "--cache-size", "4M", "--writers", "2"][..],
        ),
    ] {
        let mut args = quick(test, &size);
        args.extend_from_slice(extra);
        let r = env.json(&args);
        let v = &r["verify"];
        assert_eq!(u(&v["blocks_bad"]), 0, "{test} {extra:?}: {v}");
        assert!(
            u(&v["blocks_checked"]) + u(&v["blocks_written"]) > 0,
            "{test} {extra:?}: {v}"
        );
    }
    let out = env.output(&["verify", "dbio-data"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn dbio_verify_names_a_misdirected_block() {
    let env = Env::new();
    let mut prepare = vec!["prepare", "--verify"];
    prepare.extend_from_slice(&["--size", "8M", "--files", "2"]);
    assert!(env.output(&prepare).status.success());
    let file = env.join("dbio-data/dbio-data-002.dbf");
    // Block 3's contents land on block 7, as a misdirected write would put them.
    write_block(&file, 7, &read_block(&file, 3));

    let out = env.output(&["verify", "dbio-data"]);
    assert_ne!(out.status.code(), Some(0));
    let text = stdout(&out);
    let bad: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(": misdirected"))
        .collect();
    assert_eq!(bad.len(), 1, "{text}");
    assert!(
        bad[0].starts_with("dbio-data-002.dbf block 7: misdirected")
            && bad[0].contains("block 3 of dbio-data-002.dbf"),
        "{text}"
    );
    assert!(text.contains("1 bad block"), "{text}");
}

#[test]
fn a_read_run_reports_a_torn_block() {
    let env = Env::new();
    let mut prepare = vec!["prepare", "--verify"];
    prepare.extend_from_slice(&SMALL);
    assert!(env.output(&prepare).status.success());
    let file = env.join("dbio-data/dbio-data-001.dbf");
    let mut b = read_block(&file, 9);
    b[5000..5004].iter_mut().for_each(|x| *x ^= 0xa5);
    write_block(&file, 9, &b);

    // Going on after errors: every read of the bad block is a failed request.
    let mut args = quick("read-iops", &SMALL);
    args.extend_from_slice(&["--verify", "--sync", "--continue-on-error"]);
    let out = env.output(&args);
    assert_eq!(out.status.code(), Some(4));
    let r = run_json(&out);
    let v = &r["verify"];
    assert!(u(&v["blocks_bad"]) > 0, "{v}");
    assert_eq!(u(&event(&r)["errors"]), u(&v["blocks_bad"]));
    let lines = v["bad_blocks"].as_array().unwrap();
    assert_eq!(lines.len(), 1, "one bad block, listed once: {v}");
    assert!(
        lines[0]
            .as_str()
            .unwrap()
            .starts_with("dbio-data-001.dbf block 9: torn"),
        "{v}"
    );

    // Stopping at the first: the run's error names the file and the block.
    let mut args = quick("read-iops", &SMALL);
    args.extend_from_slice(&["--verify", "--batch", "64"]);
    let out = env.output(&args);
    assert_eq!(out.status.code(), Some(4));
    let r = run_json(&out);
    let err = r["errors"][0].as_str().unwrap();
    assert!(
        err.contains("dbio-data-001.dbf") && err.contains("block 9: torn"),
        "{err}"
    );
}

#[test]
fn dbio_verify_finds_a_lost_write() {
    let env = Env::new();
    let mut prepare = vec!["prepare", "--verify"];
    prepare.extend_from_slice(&SMALL);
    assert!(env.output(&prepare).status.success());
    let file = env.join("dbio-data/dbio-data-001.dbf");
    let before = std::fs::read(&file).unwrap();

    let mut args = quick("write-iops", &SMALL);
    args.push("--verify");
    env.json(&args);
    let after = std::fs::read(&file).unwrap();
    // A block dbio has rewritten since: put its old contents back, as if the write was lost.
    let block = (0..512u64)
        .find(|&b| {
            let r = (b * BS) as usize..((b + 1) * BS) as usize;
            before[r.clone()] != after[r]
        })
        .expect("the run rewrote some block");
    let r = (block * BS) as usize..((block + 1) * BS) as usize;
    write_block(&file, block, &before[r]);

    let out = env.output(&["verify", "dbio-data"]);
    assert_ne!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("dbio-data-001.dbf block {block}: stale"))),
        "{text}"
    );
    assert!(text.contains("1 bad block"), "{text}");
}

#[test]
fn a_write_without_verify_leaves_the_data_set_unverifiable() {
    let env = Env::new();
    let mut prepare = vec!["prepare", "--verify"];
    prepare.extend_from_slice(&SMALL);
    assert!(env.output(&prepare).status.success());
    env.json(&quick("write-iops", &SMALL));
    let out = env.output(&["verify", "dbio-data"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--verify --fresh"), "{err}");
    assert!(!env.join("dbio-data/dbio-verify.seq").exists());

    // A --verify run asks for --fresh before it recreates the data set with headers.
    let mut args = quick("read-iops", &SMALL);
    args.push("--verify");
    let out = env.output(&args);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("carry no verify headers") && err.contains("--fresh"),
        "{err}"
    );
    args.push("--fresh");
    let r = env.json(&args);
    assert_eq!(u(&r["verify"]["blocks_bad"]), 0);
    assert!(env.output(&["verify", "dbio-data"]).status.success());

    // dbio clean removes the sequence file with the rest.
    assert!(env.output(&["clean", "dbio-data"]).status.success());
    assert!(!env.join("dbio-data").exists());
}

#[test]
fn verify_refuses_what_it_cannot_check() {
    let env = Env::new();
    let out = env.output(&["prepare", "--verify", "--fill", "dedupe=4", "--size", "4M"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--verify"));
    let out = env.output(&["verify", "nowhere"]);
    assert_eq!(out.status.code(), Some(2));
}
