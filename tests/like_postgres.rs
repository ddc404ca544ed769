//! `dbio run --like postgres`: PostgreSQL 15's shapes without a database (docs/events.md,
//! "PostgreSQL's shapes and names"). Data files and WAL are buffered (no O_DIRECT); the
//! checkpointer writes page after page into the page cache and fsyncs each data file it
//! wrote; the WAL is written in whole 8 KiB blocks and fdatasync'ed (wal_sync_method
//! fdatasync) or opened O_DSYNC (open_datasync); a COPY (write-mbps) adds pages one by one
//! and writes its ring's pages back — seen with strace; the events carry PostgreSQL's
//! wait-event names.

use crate::innodb::{events, names, traced};
use crate::util::{Env, skip};

const PAGE: u64 = 8 << 10;

/// A small PostgreSQL-like run of `test` on the environment's data set `ds`.
fn postgres<'e>(env: &'e Env, test: &str) -> crate::util::Dbio<'e> {
    crate::innodb::like(env, "postgres", test)
}

#[test]
fn the_checkpointer_writes_pages_one_by_one_then_fsyncs_each_file_it_wrote() {
    let env = Env::new();
    let r = postgres(&env, "write-iops").opt("--batch", 32).json();
    assert_eq!(r["config"]["like"], "postgres");
    assert_eq!(r["config"]["io_mode"], "fdatasync");
    assert_eq!(r["config"]["block_size"], PAGE);
    assert_eq!(r["config"]["submission"], "sync");
    assert!(r["config"]["doublewrite"].is_null(), "{}", r["config"]);
    assert_eq!(names(&r), ["DataFileSync", "DataFileWrite"]);
    assert_eq!(r["events"][0]["name"], "DataFileWrite");
    let ev = events(&r);
    let (pages, page_bytes) = ev["DataFileWrite"];
    let (syncs, sync_bytes) = ev["DataFileSync"];
    assert!(pages > 0 && syncs > 0, "{ev:?}");
    // One 8 KiB pwrite per page, each its own wait; the fsyncs carry no bytes.
    assert_eq!(page_bytes, pages * PAGE, "{ev:?}");
    assert_eq!(r["events"][0]["waits"], pages);
    assert_eq!(sync_bytes, 0);
    assert_eq!(r["totals"]["bytes"].as_u64().unwrap(), page_bytes);
    // 32 random pages of two files touch both: two fsyncs a batch, give or take the batch
    // of each session the window's edges cut.
    let batches = pages / 32;
    assert!(
        syncs.abs_diff(2 * batches) <= 2 * 2 * 2,
        "{syncs} fsyncs for {batches} batches: {ev:?}"
    );
}

#[test]
fn write_iops_is_buffered_and_fsynced_as_a_checkpoint() {
    let env = Env::new();
    let run = postgres(&env, "write-iops")
        .opt("--batch", 16)
        .engine("sync")
        .quiet();
    let Some(t) = traced(&env, run, "write", 0) else {
        return;
    };
    assert!(
        !t.has("data", "O_DIRECT") && !t.has("data", "O_DSYNC"),
        "data files go through the page cache: {t:?}"
    );
    // fsync, as PostgreSQL's checkpointer does (pg_fsync), never fdatasync.
    assert!(t.fsync.get("data").copied().unwrap_or(0) > 0, "{t:?}");
    assert_eq!(t.syncs("data"), 0, "{t:?}");
    let written = t.written["data"];
    assert!(written > 0 && written % PAGE == 0, "{t:?}");
}

#[test]
fn redo_writes_whole_wal_blocks_and_fdatasyncs_them() {
    let env = Env::new();
    let r = postgres(&env, "redo").json();
    assert_eq!(
        names(&r),
        ["WALSync", "WALWrite", "commit (WAL flush)"],
        "{}",
        r["events"]
    );
    assert_eq!(r["events"][0]["name"], "commit (WAL flush)");
    assert_eq!(r["redo"]["redo_block"], PAGE);
    assert_eq!(r["redo"]["sync"], "fdatasync");
    let ev = events(&r);
    let (commits, _) = ev["commit (WAL flush)"];
    let (writes, wal_bytes) = ev["WALWrite"];
    let (syncs, _) = ev["WALSync"];
    // One fdatasync per WAL write; commits wait for them together (group commit).
    assert!(writes > 0 && writes.abs_diff(syncs) <= 1, "{ev:?}");
    assert!(commits >= writes, "{ev:?}");
    assert_eq!(wal_bytes % PAGE, 0, "whole WAL blocks: {ev:?}");

    let run = postgres(&env, "redo").engine("sync").quiet();
    let Some(t) = traced(&env, run, "redo", 0) else {
        return;
    };
    assert!(
        !t.has("redo", "O_DIRECT") && !t.has("redo", "O_DSYNC"),
        "the WAL is buffered: {t:?}"
    );
    assert!(t.syncs("redo") > 0 && t.fsync.is_empty(), "{t:?}");
}

#[test]
fn open_datasync_opens_the_wal_o_dsync_and_never_syncs_it() {
    let env = Env::new();
    let r = postgres(&env, "redo").io_mode("open_datasync").json();
    assert_eq!(r["config"]["io_mode"], "open_datasync");
    assert_eq!(names(&r), ["WALWrite", "commit (WAL flush)"]);
    assert_eq!(r["redo"]["sync"], "dsync");
    let run = postgres(&env, "redo")
        .io_mode("open_datasync")
        .engine("sync")
        .quiet();
    let Some(t) = traced(&env, run, "redo", 0) else {
        return;
    };
    assert!(
        t.has("redo", "O_DSYNC") && !t.has("redo", "O_DIRECT"),
        "{t:?}"
    );
    assert_eq!(t.syncs("redo"), 0, "{t:?}");
    assert!(t.fsync.is_empty(), "{t:?}");
}

#[test]
fn read_iops_reads_8k_pages_buffered_with_the_page_cache_kept_out() {
    let env = Env::new();
    let r = postgres(&env, "read-iops").json();
    assert_eq!(names(&r), ["DataFileRead"]);
    assert_eq!(r["config"]["request_bytes"], PAGE);
    let (reads, bytes) = events(&r)["DataFileRead"];
    assert!(reads > 0 && bytes == reads * PAGE, "{}", r["events"]);
    let flags: Vec<&str> = (r["config"]["open_flags"].as_array().unwrap().iter())
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(!flags.contains(&"O_DIRECT"), "{flags:?}");
    assert!(
        flags
            .iter()
            .any(|f| f.contains("buffered, page cache dropped (posix_fadvise)")),
        "{flags:?}"
    );
    // The page cache is kept out: the device under the data set read (at least) about as
    // many requests as the sessions did, where a cached data set reads none. (Other
    // programs' reads only add to the device's.)
    let devices = r["os"]["devices"].as_array().cloned().unwrap_or_default();
    let Some(top) = devices.first().map(|d| d["device"].clone()) else {
        skip("no block device statistics under the test's directory");
        return;
    };
    let device_reads: f64 = (devices.iter())
        .filter(|d| d["device"] == top)
        .map(|d| d["r_s"].as_f64().unwrap())
        .sum();
    assert!(
        device_reads >= 0.5 * reads as f64,
        "the device read {device_reads:.0} requests for the sessions' {reads}: {devices:?}"
    );
}

#[test]
fn read_mbps_scans_8k_pages_and_the_kernels_read_ahead_serves_them() {
    let env = Env::new();
    let r = postgres(&env, "read-mbps").json();
    assert_eq!(names(&r), ["DataFileRead (scan)"]);
    assert_eq!(r["config"]["request_bytes"], PAGE);
    assert_eq!(r["config"]["depth"], 1, "one pread at a time");
    let (reads, bytes) = events(&r)["DataFileRead (scan)"];
    assert!(reads > 0 && bytes == reads * PAGE, "{}", r["events"]);
    let flags = r["config"]["open_flags"].to_string();
    assert!(
        !flags.contains("O_DIRECT") && flags.contains("page cache dropped (posix_fadvise)"),
        "{flags}"
    );
    let devices = r["os"]["devices"].as_array().cloned().unwrap_or_default();
    let Some(top) = devices.first().map(|d| d["device"].clone()) else {
        skip("no block device statistics under the test's directory");
        return;
    };
    let of_top = || devices.iter().filter(|d| d["device"] == top);
    let requests: f64 = of_top().map(|d| d["r_s"].as_f64().unwrap()).sum();
    let mib: f64 = of_top().map(|d| d["rmib_s"].as_f64().unwrap()).sum();
    // The storage read what the sessions read (the cache kept out), in requests larger
    // than a page: the kernel read ahead of the scan.
    assert!(
        mib * 1048576.0 >= 0.5 * bytes as f64,
        "the device read {mib:.0} MiB for the sessions' {bytes} bytes: {devices:?}"
    );
    assert!(
        requests > 0.0 && mib * 1048576.0 / requests >= 2.0 * PAGE as f64,
        "{devices:?}"
    );
}

/// 16 MiB: PostgreSQL 15's bulk-write ring (BAS_BULKWRITE), whose pages a COPY writes back.
const RING: u64 = 16 << 20;
/// A COPY's events, by name: its pages added and written back, and its WAL.
const COPY_EVENTS: [&str; 5] = [
    "DataFileExtend",
    "DataFileWrite",
    "WALSync",
    "WALWrite",
    "commit (WAL flush)",
];

#[test]
fn a_copy_extends_page_by_page_and_writes_the_ring_back() {
    let env = Env::new();
    // 64 MiB in 2 files for 2 sessions: a 32 MiB stripe each, twice the ring.
    let r = postgres(&env, "write-mbps").json();
    assert_eq!(r["config"]["like"], "postgres");
    assert_eq!(r["config"]["block_size"], PAGE);
    assert_eq!(r["config"]["request_bytes"], PAGE);
    assert_eq!(r["config"]["submission"], "sync");
    assert_eq!(r["config"]["depth"], 1, "one pwrite at a time");
    let flags = r["config"]["open_flags"].to_string();
    assert!(!flags.contains("O_DIRECT"), "{flags}");
    assert_eq!(names(&r), COPY_EVENTS);
    let ev = events(&r);
    let (extends, extend_bytes) = ev["DataFileExtend"];
    let (writes, write_bytes) = ev["DataFileWrite"];
    // One 8 KiB pwrite per page, each its own wait; a page is written back only after the
    // ring's worth of pages were added behind it: surely so once the window alone added
    // more than a ring per session (a loaded machine may not get that far: seen in CI,
    // 1,536 pages in the window and no write-back).
    assert!(extends > 0, "{ev:?}");
    if extends > 2 * RING / PAGE {
        assert!(writes > 0, "{ev:?}");
    }
    assert_eq!(extend_bytes, extends * PAGE, "{ev:?}");
    assert_eq!(write_bytes, writes * PAGE, "{ev:?}");
    assert!(writes < extends, "{ev:?}");
    for e in r["events"].as_array().unwrap() {
        if e["name"] != "WALWrite" {
            assert_eq!(e["waits"], e["requests"], "{e}");
        }
    }
    // The COPY's WAL: a page of it per page added (the window cuts at most a page of each
    // of the 2 sessions), a commit per 128 pages, written by the log writer and synced.
    let redo = &r["redo"];
    let logged = redo["redo_bytes"].as_u64().unwrap();
    assert!(logged.abs_diff(extend_bytes) <= 2 * PAGE, "{logged} {ev:?}");
    assert_eq!(redo["redo_per_commit"], "1M", "{redo}");
    let (commits, _) = ev["commit (WAL flush)"];
    assert!(
        (commits * 128).abs_diff(extends) <= 2 * 128,
        "a commit per 128 pages: {ev:?}"
    );
    let (wal_writes, wal_bytes) = ev["WALWrite"];
    let (wal_syncs, _) = ev["WALSync"];
    assert!(
        wal_writes > 0 && wal_syncs > 0 && wal_bytes % PAGE == 0,
        "{ev:?}"
    );
    let a = &redo["accounting"];
    assert_eq!(
        a["bytes_written"].as_u64().unwrap(),
        a["redo_generated_bytes"].as_u64().unwrap() + a["wastage_bytes"].as_u64().unwrap(),
        "{a}"
    );
    assert_eq!(
        r["totals"]["bytes"].as_u64().unwrap(),
        extend_bytes + write_bytes + wal_bytes
    );

    // Seen with strace: buffered data files, never synced (the WAL is), 8 KiB pwrites; each session's are its new
    // pages in ascending offsets of its own stripe, each (once the ring is full) after the
    // write-back of the page a ring before it, and the stripe starts again when full.
    // Long enough to pass the ring even under strace on a busy machine.
    let run = env
        .run("write-mbps")
        .arg("--like")
        .arg("postgres")
        .target("ds")
        .size("64M")
        .files(2)
        .sessions(2)
        .duration("3s")
        .warmup("0s")
        .engine("sync")
        .quiet();
    let Some(t) = traced(&env, run, "copy", 0) else {
        return;
    };
    assert!(
        !t.has("data", "O_DIRECT") && !t.has("data", "O_DSYNC"),
        "data files go through the page cache: {t:?}"
    );
    assert!(t.fsync.is_empty() && t.syncs("data") == 0, "{t:?}");
    assert!(
        t.syncs("redo") > 0 && !t.has("redo", "O_DIRECT"),
        "the WAL is buffered and fdatasynced: {t:?}"
    );
    let text = std::fs::read_to_string(env.join("copy.trace")).unwrap();
    let (pages, backs) = copy_writes(&text);
    assert!(pages > 0 && backs < pages, "{pages} {backs}");
    // Write-backs once a session has added a ring's pages (2 sessions).
    if pages > 2 * RING / PAGE {
        assert!(backs > 0, "{pages} {backs}");
    }
}

/// The data file `pwrite`s of a traced COPY, per thread: (pages added, pages written back).
/// Panics on a write of another size, or one that is neither the next page of the thread's
/// stripe, nor its first page again (the table emptied), nor the page a ring before the next.
fn copy_writes(trace: &str) -> (u64, u64) {
    // thread -> (file, the stripe's first page, the next page's offset)
    let mut threads: std::collections::BTreeMap<&str, (String, u64, u64)> = Default::default();
    let (mut pages, mut backs) = (0, 0);
    for line in trace.lines() {
        let Some((pid, call)) = line.split_once(char::is_whitespace) else {
            continue;
        };
        let Some(args) = call.trim_start().strip_prefix("pwrite64(") else {
            continue;
        };
        let file = args.split_once('<').and_then(|(_, r)| r.split_once('>'));
        let Some((file, rest)) = file.filter(|(f, _)| f.contains("dbio-data")) else {
            continue;
        };
        // ..., LEN, OFFSET) = N   or   ..., LEN, OFFSET <unfinished ...>
        let end = rest
            .find(" <unfinished")
            .or_else(|| rest.rfind(')'))
            .unwrap();
        let nums: Vec<u64> = (rest[..end].rsplitn(3, ", ").take(2))
            .map(|n| n.trim().parse().expect(line))
            .collect();
        let (offset, len) = (nums[0], nums[1]);
        assert_eq!(len, PAGE, "{line}");
        let t = threads
            .entry(pid)
            .or_insert_with(|| (file.to_string(), offset, offset));
        assert_eq!(t.0, file, "a session writes its own stripe: {line}");
        if offset + RING == t.2 {
            backs += 1;
        } else if offset == t.2 || offset == t.1 {
            pages += 1;
            t.2 = offset + PAGE;
        } else {
            panic!("neither the next page, the stripe's first nor a ring back: {line}");
        }
    }
    (pages, backs)
}

#[test]
fn a_saved_copy_runs_again() {
    let env = Env::new();
    postgres(&env, "write-mbps")
        .opt("--save-job", "j.toml")
        .quiet()
        .ok();
    let r = env.run_job("j.toml").json();
    assert_eq!(r["config"]["like"], "postgres");
    assert_eq!(r["config"]["depth"], 1);
    assert_eq!(names(&r), COPY_EVENTS);
}

#[test]
fn a_copy_refuses_what_it_does_not_do() {
    let env = Env::new();
    for (flag, value) in [("--depth", "4"), ("--mbrc", "8")] {
        postgres(&env, "write-mbps")
            .opt(flag, value)
            .refused_leaving_nothing(&[flag, "--like postgres write-mbps", "one 8 KiB page"]);
    }
    postgres(&env, "write-mbps")
        .arg("--async")
        .refused(&["--async", "--like postgres"]);
    crate::innodb::like(&env, "innodb", "write-mbps")
        .refused_leaving_nothing(&["write-mbps", "--like innodb"]);
    // The COPY's WAL per commit: one size, up to a page of WAL per page.
    for wal in ["2M", "64", "128K..256K", "0"] {
        postgres(&env, "write-mbps")
            .opt("--redo-per-commit", wal)
            .refused_leaving_nothing(&["--redo-per-commit"]);
    }
    // Only PostgreSQL's write-mbps logs.
    env.run("write-mbps")
        .opt("--redo-per-commit", "1M")
        .refused_leaving_nothing(&["--redo-per-commit", "--like postgres"]);
}

/// A COPY whose rows do not fill their pages logs less WAL than it writes pages: with
/// `--redo-per-commit 128K` (what `pg compare write-mbps` passes from the server's own WAL
/// per commit: dbio's table has one 1,000-byte row a page) a 1 KiB of WAL a page.
#[test]
fn a_copy_logs_the_wal_it_is_given() {
    let env = Env::new();
    let r = postgres(&env, "write-mbps")
        .opt("--redo-per-commit", "128K")
        .json();
    let ev = events(&r);
    let (extends, _) = ev["DataFileExtend"];
    let logged = r["redo"]["redo_bytes"].as_u64().unwrap();
    assert!(
        logged.abs_diff(extends * 1024) <= 2 * 1024,
        "1 KiB of WAL a page: {logged} for {extends} pages"
    );
    assert_eq!(r["redo"]["redo_per_commit"], "128K");
}

#[test]
fn wal_sync_methods_go_only_with_like_postgres() {
    let env = Env::new();
    env.run("redo")
        .io_mode("fdatasync")
        .refused(&["--io-mode", "fdatasync", "--like postgres"]);
    env.run("redo")
        .arg("--like")
        .arg("innodb")
        .io_mode("open_datasync")
        .refused(&["--io-mode", "open_datasync", "O_DIRECT_NO_FSYNC"]);
    for other in ["O_DIRECT", "setall", "fsync"] {
        env.run("write-iops")
            .arg("--like")
            .arg("postgres")
            .io_mode(other)
            .refused(&["--io-mode", other, "fdatasync, open_datasync"]);
    }
    env.run("write-iops")
        .arg("--like")
        .arg("postgres")
        .opt("--doublewrite", "off")
        .refused(&["--doublewrite", "--like postgres"]);
    env.run("read-iops")
        .arg("--like")
        .arg("postgres")
        .arg("--async")
        .refused(&["--async", "--like postgres"]);
    env.run("redo")
        .arg("--like")
        .arg("postgres")
        .opt("--redo-sync", "dsync")
        .refused(&["--redo-sync", "open_datasync"]);
    env.run("redo")
        .arg("--like")
        .arg("postgres")
        .rate(100)
        .refused(&["--rate", "--like postgres"]);
    env.run("redo")
        .arg("--like")
        .arg("sybase")
        .refused(&["--like", "sybase", "postgres"]);
}

#[test]
fn a_saved_job_runs_postgres_shape_again() {
    let env = Env::new();
    postgres(&env, "write-iops")
        .io_mode("open_datasync")
        .opt("--save-job", "j.toml")
        .quiet()
        .ok();
    let r = env.run_job("j.toml").json();
    assert_eq!(r["config"]["like"], "postgres");
    assert_eq!(r["config"]["io_mode"], "open_datasync");
    assert_eq!(r["config"]["block_size"], PAGE);
    assert_eq!(r["config"]["batch"], 128);
    assert_eq!(r["events"][0]["name"], "DataFileWrite");
}
