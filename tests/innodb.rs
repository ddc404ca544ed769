//! `dbio run --like innodb`: InnoDB's shapes without a database (docs/events.md, "InnoDB's
//! shapes and names"). The doublewrite doubles the bytes written; each flush method opens
//! and syncs the data files, the doublewrite file and the redo log as MariaDB 10.11 does
//! (seen with strace); the events carry InnoDB's names; sweeps over flush methods and
//! doublewrite name each point.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::util::{Env, only_run_dir, read_json, skip};

const PAGE: u64 = 16 << 10;

/// The events of a result, by name: (requests, bytes).
pub(crate) fn events(r: &Value) -> BTreeMap<String, (u64, u64)> {
    r["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_string(),
                (
                    e["requests"].as_u64().unwrap(),
                    e["bytes"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

pub(crate) fn names(r: &Value) -> Vec<String> {
    events(r).into_keys().collect()
}

/// A small InnoDB-like run of `test` on the environment's data set `ds`.
fn innodb<'e>(env: &'e Env, test: &str) -> crate::util::Dbio<'e> {
    like(env, "innodb", test)
}

/// A small run of `test` with a database's shapes (`--like LIKE`) on the environment's data
/// set `ds`: 64 MiB in 2 files, 2 sessions, 1 s.
pub(crate) fn like<'e>(env: &'e Env, like: &str, test: &str) -> crate::util::Dbio<'e> {
    env.run(test)
        .arg("--like")
        .arg(like)
        .target("ds")
        .size("64M")
        .files(2)
        .sessions(2)
        .duration("1s")
        .warmup("0s")
}

#[test]
fn doublewrite_writes_twice_the_pages_bytes_and_off_writes_them_once() {
    let env = Env::new();
    let r = innodb(&env, "write-iops").opt("--batch", 32).json();
    assert_eq!(r["config"]["like"], "innodb");
    assert_eq!(r["config"]["doublewrite"], true);
    assert_eq!(r["config"]["block_size"], PAGE);
    assert_eq!(r["config"]["io_mode"], "O_DIRECT");
    let ev = events(&r);
    let mut want = vec![
        "innodb flush batch",
        "innodb_data_file sync",
        "innodb_data_file write",
        "innodb_dblwr_file sync",
        "innodb_dblwr_file write",
    ];
    want.sort();
    assert_eq!(names(&r), want, "{ev:?}");
    // The main event is the batch, timed whole.
    assert_eq!(r["events"][0]["name"], "innodb flush batch");
    let (batches, _) = ev["innodb flush batch"];
    let (dw, dw_bytes) = ev["innodb_dblwr_file write"];
    let (pages, page_bytes) = ev["innodb_data_file write"];
    assert!(batches > 0 && pages > 0, "{ev:?}");
    // One doublewrite write per batch carries the batch's 32 pages; pages are 16 KiB each.
    assert_eq!(dw_bytes, dw * 32 * PAGE, "{ev:?}");
    assert_eq!(page_bytes, pages * PAGE, "{ev:?}");
    // Every page is written twice: at the window's two edges a batch per session may be
    // counted on one side only.
    let edge = 2 * 2 * 32 * PAGE;
    assert!(dw_bytes.abs_diff(page_bytes) <= edge, "{ev:?}");
    let written = r["totals"]["bytes"].as_u64().unwrap();
    assert_eq!(
        written,
        dw_bytes + page_bytes,
        "totals count each write once"
    );

    let off = innodb(&env, "write-iops")
        .opt("--batch", 32)
        .opt("--doublewrite", "off")
        .json();
    assert_eq!(off["config"]["doublewrite"], false);
    let ev = events(&off);
    assert_eq!(
        names(&off),
        [
            "innodb flush batch",
            "innodb_data_file sync",
            "innodb_data_file write"
        ],
        "{ev:?}"
    );
    let (pages, page_bytes) = ev["innodb_data_file write"];
    assert_eq!(off["totals"]["bytes"].as_u64().unwrap(), page_bytes);
    assert_eq!(page_bytes, pages * PAGE);
}

#[test]
fn the_other_tests_carry_innodbs_names() {
    let env = Env::new();
    let r = innodb(&env, "read-iops").json();
    assert_eq!(names(&r), ["innodb_data_file read"]);
    assert_eq!(r["config"]["request_bytes"], PAGE);
    let r = innodb(&env, "read-mbps").json();
    assert_eq!(names(&r), ["innodb_data_file read-ahead"]);
    // One request per page, an extent of them in flight.
    assert_eq!(r["config"]["request_bytes"], PAGE);
    assert_eq!(r["config"]["depth"], 64);
    let r = innodb(&env, "redo").json();
    assert_eq!(
        names(&r),
        [
            "innodb trx commit",
            "innodb_log_file sync",
            "innodb_log_file write"
        ]
    );
    assert_eq!(r["redo"]["redo_block"], 4096);
    assert_eq!(r["redo"]["sync"], "fdatasync");
    let ev = events(&r);
    // One sync per log write.
    let (writes, _) = ev["innodb_log_file write"];
    let (syncs, _) = ev["innodb_log_file sync"];
    assert!(writes > 0 && writes.abs_diff(syncs) <= 1, "{ev:?}");
    let summary = std::fs::read_to_string(
        Path::new(r["run_dir"].as_str().unwrap_or_default()).join("summary.txt"),
    )
    .unwrap_or_default();
    if !summary.is_empty() {
        assert!(
            summary.contains("innodb: its shapes and event names"),
            "{summary}"
        );
    }
}

#[test]
fn innodb_and_oracle_io_modes_are_not_mixed() {
    let env = Env::new();
    env.run("write-iops")
        .io_mode("O_DIRECT")
        .refused(&["--io-mode", "O_DIRECT", "--like innodb"]);
    env.run("write-iops")
        .arg("--like")
        .arg("innodb")
        .io_mode("setall")
        .refused(&["--io-mode", "setall", "O_DIRECT_NO_FSYNC"]);
    env.run("oltp")
        .arg("--like")
        .arg("innodb")
        .refused(&["--like", "oltp"]);
    env.run("write-iops")
        .arg("--like")
        .arg("oracle")
        .opt("--doublewrite", "off")
        .refused(&["--doublewrite", "--like innodb"]);
    env.run("redo")
        .arg("--like")
        .arg("innodb")
        .opt("--redo-sync", "dsync")
        .refused(&["--redo-sync", "flush method"]);
    env.run("redo")
        .arg("--like")
        .arg("innodb")
        .rate(100)
        .refused(&["--rate", "--like innodb"]);
}

#[test]
fn a_saved_job_runs_innodbs_shape_again() {
    let env = Env::new();
    innodb(&env, "write-iops")
        .io_mode("fsync")
        .opt("--doublewrite", "off")
        .opt("--save-job", "j.toml")
        .quiet()
        .ok();
    let r = env.run_job("j.toml").json();
    assert_eq!(r["config"]["like"], "innodb");
    assert_eq!(r["config"]["doublewrite"], false);
    assert_eq!(r["config"]["io_mode"], "fsync");
    assert_eq!(r["config"]["block_size"], PAGE);
    assert_eq!(r["config"]["batch"], 128);
    assert_eq!(r["events"][0]["name"], "innodb flush batch");
}

/// What strace saw of one run: the open flags of each kind of file dbio opened in the data
/// set, and the fdatasync and fsync calls and the bytes written to each kind.
#[derive(Debug, Default)]
pub(crate) struct Trace {
    /// "data", "redo" or "dblwr" → the open flags (sorted).
    pub(crate) flags: BTreeMap<String, Vec<String>>,
    pub(crate) fdatasync: BTreeMap<String, u64>,
    pub(crate) fsync: BTreeMap<String, u64>,
    pub(crate) written: BTreeMap<String, u64>,
    /// How many doublewrite files were opened.
    dblwr_files: usize,
}

/// strace's lines with each call whole: a call another thread interrupted ("... <unfinished
/// ...>") is joined with its "<... NAME resumed>" rest.
fn whole_calls(text: &str) -> Vec<String> {
    let mut pending: BTreeMap<&str, String> = BTreeMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let pid = line.split(' ').next().unwrap_or("");
        if let Some(head) = line.strip_suffix(" <unfinished ...>") {
            pending.insert(pid, head.to_string());
        } else if let Some(at) = line.find(" resumed>") {
            let head = pending.remove(pid).unwrap_or_default();
            out.push(format!("{head}{}", &line[at + " resumed>".len()..]));
        } else {
            out.push(line.to_string());
        }
    }
    out
}

/// The path strace -y shows for the fd that starts `args` ("13</x/ds/#123>(deleted), ...").
fn fd_path(args: &str) -> Option<String> {
    Some(args.split('<').nth(1)?.split('>').next()?.to_string())
}

impl Trace {
    /// Reads a trace of a run on the data set `ds`. Unnamed files (`ds/#INODE`) are told
    /// apart by when they were opened (an inode number is reused once a file is gone); the
    /// doublewrite files are those that got writes of `batch` bytes (dbio's manifest is
    /// replaced through unnamed files too).
    fn read(text: &str, ds: &str, batch: u64) -> Trace {
        let calls = whole_calls(text);
        let unnamed = format!("{ds}/#");
        // Each unnamed file opened: its flags; its current opening by path.
        let mut opened: Vec<Vec<String>> = Vec::new();
        let mut current: BTreeMap<String, usize> = BTreeMap::new();
        // (which unnamed file or named kind, call, bytes) in order.
        let mut uses: Vec<(Result<usize, &'static str>, &'static str, u64)> = Vec::new();
        let mut named_flags: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
        let named = |path: &str| -> Option<&'static str> {
            let name = path.strip_prefix(&format!("{ds}/"))?;
            if name.starts_with("dbio-data-") {
                Some("data")
            } else if name.starts_with("dbio-redo-") {
                Some("redo")
            } else {
                None
            }
        };
        for line in &calls {
            let result = line.rsplit(" = ").next().unwrap_or("");
            if line.contains(" openat") {
                let Some(path) = fd_path(result) else {
                    continue;
                };
                let flags = line
                    .split("flags=")
                    .nth(1)
                    .map(|f| f.split([',', '}']).next().unwrap_or(""))
                    .unwrap_or("");
                let mut f: Vec<String> = flags.split('|').map(str::to_string).collect();
                f.sort();
                if path.starts_with(&unnamed) {
                    current.insert(path, opened.len());
                    opened.push(f);
                } else if let Some(kind) = named(&path) {
                    let e = named_flags.entry(kind).or_default();
                    assert!(
                        e.is_empty() || *e == f,
                        "{kind} opened with other flags: {line}"
                    );
                    *e = f;
                }
                continue;
            }
            for call in ["fdatasync", "fsync", "pwrite64"] {
                let Some(at) = line.find(&format!(" {call}(")) else {
                    continue;
                };
                let Some(path) = fd_path(&line[at..]) else {
                    continue;
                };
                let which = if path.starts_with(&unnamed) {
                    match current.get(&path) {
                        Some(&i) => Ok(i),
                        None => continue,
                    }
                } else {
                    match named(&path) {
                        Some(kind) => Err(kind),
                        None => continue,
                    }
                };
                uses.push((which, call, result.trim().parse().unwrap_or(0)));
            }
        }
        let dblwr: BTreeSet<usize> = (uses.iter())
            .filter(|(w, call, n)| w.is_ok() && *call == "pwrite64" && *n == batch)
            .filter_map(|(w, _, _)| w.ok())
            .collect();
        let mut t = Trace {
            dblwr_files: dblwr.len(),
            ..Trace::default()
        };
        for (kind, f) in named_flags {
            t.flags.insert(kind.to_string(), f);
        }
        for &i in &dblwr {
            let e = t.flags.entry("dblwr".into()).or_default();
            assert!(
                e.is_empty() || *e == opened[i],
                "doublewrite files opened differently"
            );
            *e = opened[i].clone();
        }
        for (which, call, n) in uses {
            let kind = match which {
                Ok(i) if dblwr.contains(&i) => "dblwr",
                Ok(_) => continue,
                Err(kind) => kind,
            };
            let map = match call {
                "fdatasync" => &mut t.fdatasync,
                "fsync" => &mut t.fsync,
                _ => &mut t.written,
            };
            *map.entry(kind.to_string()).or_default() += if call == "pwrite64" { n } else { 1 };
        }
        t
    }

    pub(crate) fn has(&self, kind: &str, flag: &str) -> bool {
        self.flags
            .get(kind)
            .unwrap_or_else(|| panic!("no open of the {kind} file seen: {self:?}"))
            .iter()
            .any(|f| f == flag)
    }

    pub(crate) fn syncs(&self, kind: &str) -> u64 {
        self.fdatasync.get(kind).copied().unwrap_or(0)
    }
}

/// Runs `run` (flush batches of `batch` bytes, if it writes them) under strace and reads
/// what it did to the files of the data set `ds`.
pub(crate) fn traced(
    env: &Env,
    run: crate::util::Dbio<'_>,
    name: &str,
    batch: u64,
) -> Option<Trace> {
    if std::process::Command::new("strace")
        .arg("-V")
        .output()
        .is_err()
    {
        skip("strace is not installed (.ci/install-deps installs it)");
        return None;
    }
    let dbio = run.process();
    let log = env.join(&format!("{name}.trace"));
    let mut c = std::process::Command::new("strace");
    c.args(["-f", "-y", "-o"])
        .arg(&log)
        .args([
            "-e",
            "trace=openat,openat2,fsync,fdatasync,pwrite64,pwritev,pwritev2",
        ])
        .arg(dbio.get_program())
        .args(dbio.get_args())
        .current_dir(env.path());
    for (k, v) in dbio.get_envs() {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let out = c.output().expect("run strace");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).expect("trace");
    let ds = env.join("ds").display().to_string();
    Some(Trace::read(&text, &ds, batch))
}

/// One flush method: the flush batch (data files and doublewrite file) and the redo log,
/// each traced, against the note's table.
fn flush_method(method: &str) {
    let env = Env::new();
    let write = innodb(&env, "write-iops")
        .opt("--batch", 16)
        .io_mode(method)
        .engine("sync")
        .quiet();
    let Some(w) = traced(&env, write, "write", 16 * PAGE) else {
        return;
    };
    let redo = innodb(&env, "redo").io_mode(method).engine("sync").quiet();
    let Some(r) = traced(&env, redo, "redo", 0) else {
        return;
    };
    let direct = method != "fsync";
    for kind in ["data", "dblwr"] {
        assert_eq!(w.has(kind, "O_DIRECT"), direct, "{method}: {kind}: {w:?}");
        assert!(
            !w.has(kind, "O_DSYNC"),
            "{method}: {kind} is not O_DSYNC: {w:?}"
        );
    }
    // The redo log is O_DIRECT with every method; only O_DSYNC opens it O_DSYNC.
    assert!(r.has("redo", "O_DIRECT"), "{method}: {r:?}");
    assert_eq!(
        r.has("redo", "O_DSYNC"),
        method == "O_DSYNC",
        "{method}: {r:?}"
    );
    // fdatasync, never fsync.
    assert!(
        w.fsync.is_empty() && r.fsync.is_empty(),
        "{method}: {w:?} {r:?}"
    );
    let data_synced = method != "O_DIRECT_NO_FSYNC";
    assert_eq!(w.syncs("data") > 0, data_synced, "{method}: {w:?}");
    assert_eq!(w.syncs("dblwr") > 0, data_synced, "{method}: {w:?}");
    assert_eq!(r.syncs("redo") > 0, method != "O_DSYNC", "{method}: {r:?}");
}

#[test]
fn flush_method_fsync_buffers_data_and_fdatasyncs_everything() {
    flush_method("fsync");
}

#[test]
fn flush_method_o_dsync_opens_the_log_o_dsync_and_syncs_data() {
    flush_method("O_DSYNC");
}

#[test]
fn flush_method_o_direct_is_direct_and_fdatasyncs_everything() {
    flush_method("O_DIRECT");
}

#[test]
fn flush_method_o_direct_no_fsync_syncs_only_the_log() {
    flush_method("O_DIRECT_NO_FSYNC");
}

#[test]
fn a_doublewrite_batch_writes_the_same_bytes_to_both_files() {
    // With synchronous calls every batch started is written whole, so over the process's
    // life the doublewrite files get exactly the bytes the data files get.
    let env = Env::new();
    let run = innodb(&env, "write-iops")
        .opt("--batch", 16)
        .engine("sync")
        .quiet();
    let Some(t) = traced(&env, run, "bytes", 16 * PAGE) else {
        return;
    };
    assert_eq!(t.dblwr_files, 2, "one doublewrite file per session: {t:?}");
    let (data, dblwr) = (t.written["data"], t.written["dblwr"]);
    assert!(data > 0 && data % (16 * PAGE) == 0, "{t:?}");
    assert_eq!(dblwr, data, "{t:?}");
}

#[test]
fn sweeps_over_flush_methods_and_doublewrite_name_each_point() {
    for (param, labels) in [
        (
            "io-mode=fsync,O_DIRECT_NO_FSYNC",
            ["fsync", "O_DIRECT_NO_FSYNC"],
        ),
        ("doublewrite=on,off", ["on", "off"]),
    ] {
        let env = Env::new();
        let table = env
            .sweep()
            .arg("write-iops")
            .param(param)
            .arg("--like")
            .arg("innodb")
            .opt("--batch", 16)
            .target("ds")
            .size("64M")
            .files(2)
            .sessions(1)
            .duration("1s")
            .warmup("0s")
            .stdout();
        let name = param.split('=').next().unwrap();
        let dir = only_run_dir(&env, &format!("_sweep_write-iops_{name}"));
        let s = read_json(&dir.join("sweep.json"));
        assert_eq!(s["complete"], true, "{s}");
        let points = s["points"].as_array().expect("points");
        let got: Vec<&str> = points
            .iter()
            .map(|p| p["label"].as_str().unwrap())
            .collect();
        assert_eq!(got, labels, "{param}");
        for (p, label) in points.iter().zip(labels) {
            assert_eq!(p["main_event"], "innodb flush batch", "{param}");
            assert!(p["iops"].as_f64().unwrap() > 0.0, "{param}: {p}");
            assert!(table.contains(label), "{table}");
            let r = read_json(&dir.join(p["run_dir"].as_str().unwrap()).join("result.json"));
            let dblwr = names(&r).iter().any(|n| n == "innodb_dblwr_file write");
            match label {
                "on" | "off" => assert_eq!(dblwr, label == "on", "{param}: {label}"),
                m => assert_eq!(r["config"]["io_mode"], m),
            }
        }
    }
}
