//! Data verification (`--verify`, `dbio verify`): runs that write and read a data set with
//! headers find nothing wrong; blocks changed behind dbio's back — torn, misdirected, or an
//! older copy put back (a lost write) — are found and named by file and block.

use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::util::{Dbio, Env, event, u};

const BS: u64 = 8192;

/// A tiny data set: one 4 MiB file of 512 blocks, so short runs touch every block.
const SMALL: [&str; 4] = ["--size", "4M", "--files", "1"];

/// A short run: 2 sessions, 1 s, no warm-up, result.json on stdout.
fn short<'e>(env: &'e Env, test: &str) -> Dbio<'e> {
    env.run(test)
        .sessions(2)
        .duration("1s")
        .warmup("0s")
        .arg("--json")
}

/// [`short`] on the tiny data set.
fn small<'e>(env: &'e Env, test: &str) -> Dbio<'e> {
    short(env, test).args(SMALL)
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
    let w = short(&env, "write-iops").size("16M").verify_data().json();
    assert_eq!(w["config"]["verify"], true);
    assert!(u(&w["verify"]["blocks_written"]) > 0, "{}", w["verify"]);
    assert_eq!(w["verify"]["sequences_saved"], true);
    assert!(env.join("dbio-data/dbio-verify.seq").exists());

    let r = short(&env, "read-iops").size("16M").verify_data().json();
    assert!(u(&r["verify"]["blocks_checked"]) > 0, "{}", r["verify"]);
    assert_eq!(u(&r["verify"]["blocks_bad"]), 0, "{}", r["verify"]);
    assert_eq!(u(&event(&r)["errors"]), 0);
    assert!(u(&event(&r)["requests"]) > 0);

    let out = env.verify().arg("dbio-data").out();
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
        let r = short(&env, test)
            .size("16M")
            .verify_data()
            .args(extra)
            .json();
        let v = &r["verify"];
        assert_eq!(u(&v["blocks_bad"]), 0, "{test} {extra:?}: {v}");
        assert!(
            u(&v["blocks_checked"]) + u(&v["blocks_written"]) > 0,
            "{test} {extra:?}: {v}"
        );
    }
    let out = env.verify().arg("dbio-data").out();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn dbio_verify_names_a_misdirected_block() {
    let env = Env::new();
    assert!(
        env.prepare()
            .verify_data()
            .size("8M")
            .files(2)
            .out()
            .status
            .success()
    );
    let file = env.join("dbio-data/dbio-data-002.dbf");
    // Block 3's contents land on block 7, as a misdirected write would put them.
    write_block(&file, 7, &read_block(&file, 3));

    let out = env.verify().arg("dbio-data").out();
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
    assert!(
        env.prepare()
            .verify_data()
            .args(SMALL)
            .out()
            .status
            .success()
    );
    let file = env.join("dbio-data/dbio-data-001.dbf");
    let mut b = read_block(&file, 9);
    b[5000..5004].iter_mut().for_each(|x| *x ^= 0xa5);
    write_block(&file, 9, &b);

    // Going on after errors: every read of the bad block is a failed request.
    let out = small(&env, "read-iops")
        .verify_data()
        .sync_()
        .arg("--continue-on-error")
        .out();
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
    let out = small(&env, "read-iops")
        .verify_data()
        .opt("--batch", 64)
        .out();
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
    assert!(
        env.prepare()
            .verify_data()
            .args(SMALL)
            .out()
            .status
            .success()
    );
    let file = env.join("dbio-data/dbio-data-001.dbf");
    let before = std::fs::read(&file).unwrap();

    small(&env, "write-iops").verify_data().json();
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

    let out = env.verify().arg("dbio-data").out();
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
    assert!(
        env.prepare()
            .verify_data()
            .args(SMALL)
            .out()
            .status
            .success()
    );
    small(&env, "write-iops").json();
    let out = env.verify().arg("dbio-data").out();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--verify --fresh"), "{err}");
    assert!(!env.join("dbio-data/dbio-verify.seq").exists());

    // A --verify run asks for --fresh before it recreates the data set with headers.
    let out = small(&env, "read-iops").verify_data().out();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("carry no verify headers") && err.contains("--fresh"),
        "{err}"
    );
    let r = small(&env, "read-iops").verify_data().fresh().json();
    assert_eq!(u(&r["verify"]["blocks_bad"]), 0);
    assert!(env.verify().arg("dbio-data").out().status.success());

    // dbio clean removes the sequence file with the rest.
    assert!(env.clean("dbio-data").out().status.success());
    assert!(!env.join("dbio-data").exists());
}

#[test]
fn verify_refuses_what_it_cannot_check() {
    let env = Env::new();
    let out = env
        .prepare()
        .verify_data()
        .fill("dedupe=4")
        .size("4M")
        .out();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--verify"));
    let out = env.verify().arg("nowhere").out();
    assert_eq!(out.status.code(), Some(2));
}
