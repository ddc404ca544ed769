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
//! those deltas within 5 %.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::pg::{UserServer, env, pg_bin};
use crate::util;

/// One poll of pg_stat_statements: (server clock in Unix seconds, calls, blocks read).
type Poll = (f64, f64, f64);

/// The polls of the statements whose text matches `pattern`, until `done`.
fn poll(s: &UserServer, pattern: &str, done: &AtomicBool) -> Vec<Poll> {
    let mut c = s.client("owner").unwrap();
    let q = c
        .prepare(
            "SELECT extract(epoch FROM clock_timestamp())::float8, \
             coalesce(sum(calls), 0)::float8, coalesce(sum(shared_blks_read), 0)::float8 \
             FROM pg_stat_statements WHERE query ~ $1",
        )
        .unwrap();
    let mut out = Vec::new();
    while !done.load(Ordering::Relaxed) {
        let r = c.query_one(&q, &[&pattern]).unwrap();
        out.push((r.get(0), r.get(1), r.get(2)));
        std::thread::sleep(Duration::from_millis(3));
    }
    let r = c.query_one(&q, &[&pattern]).unwrap();
    out.push((r.get(0), r.get(1), r.get(2)));
    out
}

/// The last poll at or before `t` (Unix seconds).
fn at(polls: &[Poll], t: f64) -> Poll {
    *polls
        .iter()
        .rev()
        .find(|p| p.0 <= t)
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

#[test]
fn the_databases_reads_and_commits_are_its_own_counters_over_the_window() {
    let Some((bin, major)) = pg_bin() else { return };
    if major != 15 {
        // pg_stat_io (16+) is checked by hand with bench/pg18.sh.
        util::skip("the counters are checked on PostgreSQL 15");
        return;
    }
    let e = env();
    // A table four times shared_buffers (16 MB): the reads go to the storage.
    let s = UserServer::start_with(
        &bin,
        &e,
        None,
        &[
            "shared_preload_libraries=pg_stat_statements",
            "track_io_timing=on",
        ],
    );
    s.client("owner")
        .unwrap()
        .batch_execute("CREATE EXTENSION pg_stat_statements")
        .unwrap();
    let url = s.url("owner");
    // (test, mode, the statements' text, what is compared)
    for (test, mode, pattern, reads) in [
        (
            "read-iops",
            "--sync",
            "SELECT length\\(pad\\) FROM dbio_",
            true,
        ),
        (
            "read-iops",
            "--async",
            "= ANY\\(\\$1::bigint\\[\\]\\)",
            true,
        ),
        ("read-mbps", "--sync", "ctid >= ", true),
        ("write-iops", "--sync", "^UPDATE dbio_", false),
        (
            "redo",
            "--sync",
            "^INSERT INTO dbio_.*commits VALUES",
            false,
        ),
    ] {
        let done = Arc::new(AtomicBool::new(false));
        let polls = std::thread::scope(|scope| {
            let poller = scope.spawn(|| poll(&s, pattern, &done));
            let r = e.json(&[
                "pg",
                "run",
                test,
                mode,
                "--sessions",
                "2",
                "--size",
                "64M",
                // Half a second past a whole one: a backend publishes its counters about once
                // a second, and a window that starts mid-way between two publications has
                // half a second of each session's warm-up pending unless flushed.
                "--warmup",
                "1500ms",
                "--duration",
                "3s",
                "--json",
                "--pg",
                &url,
            ]);
            done.store(true, Ordering::Relaxed);
            (r, poller.join().unwrap())
        });
        let (r, polls) = polls;
        let what = format!("{test} {mode}");
        let pg = &r["pg"];
        let edges = &pg["edges"];
        assert_eq!(edges["sessions_flushed"], 2, "{what}: {edges}");
        let (start, end) = (util::f(&edges["start_s"]), util::f(&edges["end_s"]));
        assert!(
            start <= util::f(&edges["first_s"]) && util::f(&edges["first_s"]) < end,
            "{what}: {edges}"
        );
        let (before, after) = (at(&polls, start), *polls.last().unwrap());
        let calls = after.1 - before.1;
        // The sessions' statements: dbio's requests are those that ended in the window
        // (a statement in flight at each edge may fall on either side).
        let requests = util::f(&r["events"][0]["requests"]);
        within(&format!("{what}: statements"), requests, calls, 5.0);
        let io = pg["io"].as_array().unwrap();
        let client = |op: &str| {
            io.iter()
                .find(|i| i["backend_type"] == "client backend" && i["op"] == op)
                .map_or(0.0, |i| util::f(&i["ops"]))
        };
        if reads {
            within(
                &format!("{what}: blocks read"),
                client("read"),
                after.2 - before.2,
                5.0,
            );
        } else {
            // Each update and each insert commits on its own.
            within(
                &format!("{what}: commits"),
                util::f(&pg["wal"]["commits"]),
                calls,
                5.0,
            );
        }
    }
}
