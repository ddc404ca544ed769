//! The database's figures of a `dbio pg run` are PostgreSQL's own over the measured window:
//! checked against counters the test reads itself, on a connection of its own, from a
//! "user's server" (PostgreSQL 15, `--pg`) with `pg_stat_statements` loaded.
//!
//! PostgreSQL's cumulative statistics (`pg_stat_database`, ...) reach other connections
//! only when a backend flushes them (at most once a second): they cannot show, from
//! outside, what happened up to an instant. `pg_stat_statements` can: it counts each
//! statement's blocks and calls as the statement ends. So the test polls it (every few
//! milliseconds, with the server's clock) through the whole run, and takes its value at the
//! window's start (`pg.edges.start_s` in result.json, the machine's clock) and at the end
//! (after dbio has ended: the sessions stop at the window's end). dbio's figures must match
//! those deltas within 5 %: statements, blocks read and their mean wait, blocks written
//! (a relation extend is a block written in PostgreSQL 15's pg_stat_statements) and commits.
//! The WAL is checked against the server's WAL insert position, read at the same polls.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::pg::{UserServer, env, pg_bin};
use crate::util;

/// One poll: the server's clock (Unix seconds), then, summed over the statements whose text
/// matches the first pattern, calls, shared_blks_read, shared_blks_written and
/// blk_read_time (ms); the server's WAL insert position (bytes); the calls of the
/// statements that match the second pattern (those that commit); blk_write_time (ms).
type Poll = [f64; 8];
const CALLS: usize = 1;
const READ: usize = 2;
const WRITTEN: usize = 3;
const READ_MS: usize = 4;
const LSN: usize = 5;
const COMMITS: usize = 6;
const WRITE_MS: usize = 7;

const POLL_SQL: &str = "SELECT extract(epoch FROM clock_timestamp())::float8, \
     coalesce(sum(calls) FILTER (WHERE query ~ $1), 0)::float8, \
     coalesce(sum(shared_blks_read) FILTER (WHERE query ~ $1), 0)::float8, \
     coalesce(sum(shared_blks_written) FILTER (WHERE query ~ $1), 0)::float8, \
     coalesce(sum(blk_read_time) FILTER (WHERE query ~ $1), 0)::float8, \
     (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::float8, \
     coalesce(sum(calls) FILTER (WHERE query ~ $2), 0)::float8, \
     coalesce(sum(blk_write_time) FILTER (WHERE query ~ $1), 0)::float8 \
     FROM pg_stat_statements";

/// The polls of the statements whose text matches `pattern` (and `commits`), until `done`.
fn poll(s: &UserServer, pattern: &str, commits: &str, done: &AtomicBool) -> Vec<Poll> {
    let mut c = s.client("owner").unwrap();
    let q = c.prepare(POLL_SQL).unwrap();
    let mut one = || {
        let r = c.query_one(&q, &[&pattern, &commits]).unwrap();
        std::array::from_fn(|i| r.get::<_, f64>(i))
    };
    let mut out = Vec::new();
    while !done.load(Ordering::Relaxed) {
        out.push(one());
        std::thread::sleep(Duration::from_millis(3));
    }
    out.push(one());
    out
}

/// The last poll at or before `t` (Unix seconds).
fn at(polls: &[Poll], t: f64) -> Poll {
    *polls
        .iter()
        .rev()
        .find(|p| p[0] <= t)
        .unwrap_or_else(|| panic!("no poll before {t}: first at {:?}", polls.first()))
}

fn within(what: &str, dbio: f64, server: f64, pct: f64) {
    assert!(server > 0.0, "{what}: the server counted nothing");
    let ratio = dbio / server;
    eprintln!("{what}: dbio {dbio}, the server {server} ({ratio:.3}×)");
    assert!(
        (ratio - 1.0).abs() <= pct / 100.0,
        "{what}: dbio {dbio} against the server's {server} ({ratio:.3}×)"
    );
}

/// dbio's time waited in `n` operations (ms) against pg_stat_statements' `full`:
/// pg_stat_database keeps each operation's time in whole microseconds (PostgreSQL 15's
/// bufmgr.c: INSTR_TIME_GET_MICROSEC), pg_stat_statements the full time, up to 1 µs an
/// operation apart (10 % of a 5 µs write into the page cache). dbio's figure is within 5 %
/// of the range they span.
fn timed(what: &str, doing: &str, dbio: f64, full: f64, n: f64) {
    let whole_us = full - n * 0.001;
    let server = if dbio < whole_us {
        whole_us
    } else {
        full.min(dbio)
    };
    within(
        &format!("{what}: time {doing} (ms; the server's {full:.1}, {whole_us:.1} in whole µs)"),
        dbio,
        server,
        5.0,
    );
}

#[test]
fn the_databases_reads_writes_and_commits_are_its_own_counters_over_the_window() {
    let Some((bin, major)) = pg_bin() else { return };
    if major != 15 {
        // pg_stat_io (16+) is checked by hand with bench/pg18.sh.
        util::skip("the counters are checked on PostgreSQL 15");
        return;
    }
    let e = env();
    // A table four times shared_buffers: the reads go to the storage. 4 MB of buffers, not
    // the user's server's usual 16: PostgreSQL 15 counts the backends' writes when its
    // checkpointer takes their sync requests, up to half of shared_buffers' pages late (dbio
    // says so in a caution where that is over 5 % of the window's writes); 256 is under 5 %
    // of a 5 s write-iops window's here (on a slower machine the caution says by how much).
    let s = UserServer::start_with(
        &bin,
        &e,
        None,
        &[
            "shared_buffers=4MB",
            "shared_preload_libraries=pg_stat_statements",
            "track_io_timing=on",
            // PostgreSQL 15 counts the writes of every backend in one counter
            // (pg_stat_bgwriter.buffers_backend): an autovacuum worker's among them, which
            // pg_stat_statements does not see. Without it, the backends that write are the
            // run's sessions.
            "autovacuum=off",
        ],
    );
    s.client("owner")
        .unwrap()
        .batch_execute("CREATE EXTENSION pg_stat_statements")
        .unwrap();
    let url = s.url("owner");
    // (test, mode, the statements' text, what the test does: reads, writes blocks, commits)
    for (test, mode, pattern, reads, writes, commits) in [
        (
            "read-iops",
            "--sync",
            "SELECT length\\(pad\\) FROM dbio_",
            true,
            false,
            false,
        ),
        (
            "read-iops",
            "--async",
            "= ANY\\(\\$1::bigint\\[\\]\\)",
            true,
            false,
            false,
        ),
        ("read-mbps", "--sync", "ctid >= ", true, false, false),
        ("write-iops", "--sync", "^UPDATE dbio_", true, true, true),
        ("write-mbps", "--sync", "^COPY dbio_", false, true, true),
        (
            "redo",
            "--sync",
            "^INSERT INTO dbio_.*commits VALUES",
            false,
            false,
            true,
        ),
    ] {
        let done = Arc::new(AtomicBool::new(false));
        let (r, polls) = std::thread::scope(|scope| {
            // A COPY session's TRUNCATE (when its table is full) commits too.
            let commits = if test == "write-mbps" {
                "^(COPY|TRUNCATE) dbio_"
            } else {
                pattern
            };
            let poller = scope.spawn(|| poll(&s, pattern, commits, &done));
            let r = e.json(&[
                "pg",
                "run",
                test,
                mode,
                "--sessions",
                "2",
                "--size",
                "16M",
                // Half a second past a whole one: a backend publishes its counters about once
                // a second, and a window that starts mid-way between two publications has
                // half a second of each session's warm-up pending unless flushed.
                "--warmup",
                "1500ms",
                "--duration",
                "5s",
                "--json",
                "--pg",
                &url,
            ]);
            done.store(true, Ordering::Relaxed);
            (r, poller.join().unwrap())
        });
        let what = format!("{test} {mode}");
        let pg = &r["pg"];
        let edges = &pg["edges"];
        assert_eq!(edges["sessions_flushed"], 2, "{what}: {edges}");
        // The one caution a window may get here: the backends' writes counted late on 15, by
        // at most the share it states (a slow machine writes fewer in the window).
        let mut late_pct = 0.0f64;
        for c in pg["cautions"].as_array().into_iter().flatten() {
            let c = c.as_str().unwrap();
            let pct = (c.strip_suffix(" %; a longer window narrows it."))
                .and_then(|c| c.rsplit(' ').next())
                .and_then(|n| n.parse::<f64>().ok());
            assert!(
                c.contains("counts the backends' writes when its checkpointer") && pct.is_some(),
                "{what}: {c}"
            );
            late_pct = late_pct.max(pct.unwrap());
        }
        let (start, end) = (util::f(&edges["start_s"]), util::f(&edges["end_s"]));
        assert!(
            start <= util::f(&edges["first_s"]) && util::f(&edges["first_s"]) < end,
            "{what}: {edges}"
        );
        // The statements' counters: those that ended after the window's start (the sessions
        // stop at its end: their last statements end after it). The WAL insert position:
        // at dbio's first snapshot (once the sessions flushed) and at the window's end.
        let (before, after) = (at(&polls, start), *polls.last().unwrap());
        let server = |i: usize| after[i] - before[i];
        // dbio's requests are the statements that ended in the window (a statement in
        // flight at each edge may fall on either side).
        let requests = util::f(&r["events"][0]["requests"]);
        within(&format!("{what}: statements"), requests, server(CALLS), 5.0);
        let io = pg["io"].as_array().unwrap();
        let client = |op: &str, f: &dyn Fn(&serde_json::Value) -> f64| {
            io.iter()
                .find(|i| i["backend_type"] == "client backend" && i["op"] == op)
                .map_or(0.0, f)
        };
        let ops = |i: &serde_json::Value| util::f(&i["ops"]);
        if reads {
            within(
                &format!("{what}: blocks read"),
                client("read", &ops),
                server(READ),
                5.0,
            );
        }
        // The time the sessions waited, as the Top Timed Events show it beside the samples:
        // in reads (where they were timed in more than a few µs: a write test's reads come
        // from the page cache) and in writes.
        let waited = |event: &str| {
            (pg["waits"].as_array().unwrap().iter())
                .find(|w| w["backend_type"] == "client backend" && w["wait_event"] == event)
                .map_or(0.0, |w| util::f(&w["timed_s"]) * 1000.0)
        };
        if reads && test.starts_with("read") {
            let dbio = waited("DataFileRead");
            timed(
                &what,
                "in DataFileRead",
                dbio,
                server(READ_MS),
                server(READ),
            );
        }
        if writes {
            // PostgreSQL 15 counts a page added to a relation as a block written.
            within(
                &format!("{what}: blocks written (extends included)"),
                client("write", &ops) + client("extend", &ops),
                server(WRITTEN),
                (late_pct + 0.5).max(5.0),
            );
            // The time they waited: the writes' (an extend is not timed).
            let n = server(WRITTEN) - client("extend", &ops);
            timed(
                &what,
                "in DataFileWrite",
                waited("DataFileWrite"),
                server(WRITE_MS),
                n,
            );
        }
        if commits {
            // Each update, insert, COPY and TRUNCATE commits on its own.
            within(
                &format!("{what}: commits"),
                util::f(&pg["wal"]["commits"]),
                server(COMMITS),
                5.0,
            );
        }
        if writes || commits {
            within(
                &format!("{what}: WAL bytes"),
                util::f(&pg["wal"]["bytes"]),
                at(&polls, end)[LSN] - at(&polls, util::f(&edges["first_s"]))[LSN],
                5.0,
            );
        }
    }
}
