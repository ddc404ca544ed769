//! The data set: created once, described by a manifest, reused, recreated on demand, removed
//! by `dbio clean` and nothing else.

use std::os::unix::fs::MetadataExt;

use crate::util::{Env, assert_consistent, event, files_under, u};

fn inode(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).unwrap().ino()
}

#[test]
fn prepare_then_runs_reuse_it() {
    let env = Env::new();
    let out = env.prepare().size("64M").files(2).block_size("4K").out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        files_under(&env.join("dbio-data")),
        [
            "dbio-data-001.dbf",
            "dbio-data-002.dbf",
            "dbio-lock",
            "dbio-manifest.json"
        ]
    );
    for f in ["dbio-data-001.dbf", "dbio-data-002.dbf"] {
        let p = env.join("dbio-data").join(f);
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 32 << 20);
        // Incompressible: random bytes, not zeros.
        let head = std::fs::read(&p).unwrap();
        assert!(
            head[..65536].iter().filter(|&&b| b == 0).count() < 1024,
            "{f} looks unfilled"
        );
    }
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.join("dbio-data/dbio-manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(m["schema"], "dbio.dataset.v1");
    assert_eq!(m["state"], "ready");
    assert_eq!(u(&m["size_bytes"]), 64 << 20);
    assert!(m["in_use"].is_null());

    let first = inode(&env.join("dbio-data/dbio-data-001.dbf"));
    let r = env
        .run("read-iops")
        .size("64M")
        .files(2)
        .block_size("4K")
        .duration("1s")
        .warmup("0s")
        .json();
    assert_consistent(&r);
    assert_eq!(r["dataset"]["reused"], true);
    assert_eq!(
        first,
        inode(&env.join("dbio-data/dbio-data-001.dbf")),
        "reused, not rewritten"
    );
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.join("dbio-data/dbio-manifest.json")).unwrap(),
    )
    .unwrap();
    assert!(
        m["in_use"].is_null(),
        "no PID marks: a lock holds a data set in use"
    );

    // --fresh recreates; a different shape asks for --fresh and changes nothing first.
    let r = env
        .run("read-iops")
        .size("64M")
        .files(2)
        .block_size("4K")
        .duration("1s")
        .warmup("0s")
        .fresh()
        .json();
    assert_eq!(r["dataset"]["reused"], false);
    let before = inode(&env.join("dbio-data/dbio-data-001.dbf"));
    let reshape = || {
        env.run("read-iops")
            .size("96M")
            .files(3)
            .duration("1s")
            .warmup("0s")
            .arg("--json")
    };
    let out = reshape().out();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("it holds 64M in 2 file(s) of block size 4K") && err.contains("--fresh"),
        "{err}"
    );
    assert_eq!(before, inode(&env.join("dbio-data/dbio-data-001.dbf")));
    assert_eq!(files_under(&env.join("dbio-data")).len(), 4);
    let r = reshape().fresh().json();
    assert_eq!(r["dataset"]["reused"], false);
    assert_eq!(u(&r["dataset"]["size_bytes"]), 96 << 20);
    assert_eq!(
        files_under(&env.join("dbio-data")).len(),
        5,
        "three files, the manifest and the lock, the old ones gone"
    );
}

#[test]
fn clean_removes_the_data_set_and_nothing_else() {
    let env = Env::new();
    env.quick("write-iops").json();
    std::fs::write(env.join("dbio-data/notes.txt"), "mine").unwrap();
    let out = env.cmd("clean").out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        files_under(&env.join("dbio-data")),
        ["notes.txt"],
        "only dbio's files removed"
    );
    assert_eq!(
        std::fs::read_to_string(env.join("dbio-data/notes.txt")).unwrap(),
        "mine"
    );
    // Nothing left to clean: a clear error, and the foreign file stays.
    let out = env.cmd("clean").out();
    assert_eq!(out.status.code(), Some(2));
    assert!(env.join("dbio-data/notes.txt").exists());

    // A data set in a directory dbio created: clean removes the directory too.
    let env = Env::new();
    env.quick("read-iops").json();
    assert!(env.clean("dbio-data").out().status.success());
    assert!(
        !env.join("dbio-data").exists(),
        "no file behind: {:?}",
        files_under(&env.join("dbio-data"))
    );
}

#[test]
fn read_tests_read_an_existing_file_without_changing_it() {
    let env = Env::new();
    let data: Vec<u8> = (0..(8u32 << 20))
        .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8)
        .collect();
    let path = env.join("existing.dat");
    std::fs::write(&path, &data).unwrap();
    let mtime = std::fs::metadata(&path).unwrap().mtime_nsec();
    for test in ["read-iops", "read-mbps"] {
        for sub in ["--sync", "--async"] {
            let r = env
                .run(test)
                .arg(sub)
                .target("existing.dat")
                .sessions(2)
                .duration("1s")
                .warmup("0s")
                .json();
            assert_consistent(&r);
            assert_eq!(r["dataset"]["kind"], "file");
            assert_eq!(r["config"]["open_flags"][0], "O_RDONLY");
            assert!(u(&event(&r)["requests"]) > 0);
        }
    }
    assert_eq!(std::fs::read(&path).unwrap(), data, "the file is unchanged");
    assert_eq!(std::fs::metadata(&path).unwrap().mtime_nsec(), mtime);
    assert!(!env.join("dbio-data").exists());
    let out = env.run("write-iops").target("existing.dat").out();
    assert_eq!(
        out.status.code(),
        Some(2),
        "write tests refuse a file dbio did not create"
    );
    assert_eq!(std::fs::read(&path).unwrap(), data);
}
