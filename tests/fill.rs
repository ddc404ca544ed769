//! `--fill`: what the data files hold, recorded in the manifest and the result; a data set
//! filled otherwise is recreated, like one of another size.

use std::collections::HashSet;

use crate::util::{Dbio, Env};

fn manifest_fill(env: &Env) -> String {
    let m: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(env.join("dbio-data/dbio-manifest.json")).unwrap(),
    )
    .unwrap();
    m["fill"].as_str().unwrap().to_string()
}

/// A one-second read test on a 64 MiB data set, its result printed as JSON.
fn short(env: &Env) -> Dbio<'_> {
    env.run("read-iops")
        .size("64M")
        .sessions(2)
        .duration("1s")
        .warmup("0s")
        .arg("--json")
}

fn data_file(env: &Env) -> Vec<u8> {
    std::fs::read(env.join("dbio-data/dbio-data-001.dbf")).unwrap()
}

#[test]
fn fill_is_recorded_and_a_different_fill_recreates_the_data_set() {
    let env = Env::new();
    assert!(
        env.prepare()
            .size("64M")
            .fill("compress=2")
            .out()
            .status
            .success()
    );
    assert_eq!(manifest_fill(&env), "compress=2");
    let d = data_file(&env);
    let zeros = d.iter().filter(|&&b| b == 0).count() as f64 / d.len() as f64;
    assert!((0.49..0.52).contains(&zeros), "about half zeros: {zeros}");

    // The same fill is reused; another one recreates.
    let r = short(&env).fill("compress=2").json();
    assert_eq!(r["dataset"]["reused"], true);
    assert_eq!(r["dataset"]["fill"], "compress=2");
    assert_eq!(r["config"]["fill"], "compress=2");
    // Another fill asks for --fresh before anything changes.
    let out = short(&env).fill("dedupe=4").out();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("filled with compress=2, this run wants --fill dedupe=4; add --fresh"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(manifest_fill(&env), "compress=2");
    let out = short(&env).fill("dedupe=4").fresh().out();
    assert!(out.status.success());
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["dataset"]["reused"], false);
    assert_eq!(r["dataset"]["fill"], "dedupe=4");
    assert_eq!(manifest_fill(&env), "dedupe=4");
    // dedupe=4 over the data set: each 4K unit appears about 4 times in all files together.
    let mut all = Vec::new();
    for i in 1..=4 {
        all.extend(std::fs::read(env.join(&format!("dbio-data/dbio-data-{i:03}.dbf"))).unwrap());
    }
    let unique: HashSet<&[u8]> = all.chunks(4096).collect();
    let ratio = all.chunks(4096).count() as f64 / unique.len() as f64;
    assert!((ratio - 4.0).abs() < 0.05, "dedupe ratio {ratio}");

    // Without --fill: random, so the data set is recreated once more (with --fresh).
    let r = short(&env).fresh().json();
    assert_eq!(r["dataset"]["fill"], "random");
    assert_eq!(r["dataset"]["reused"], false);
    // Random bytes are zero 1 time in 256: about 64K of a 16 MiB file.
    assert!(data_file(&env).iter().filter(|&&b| b == 0).count() < 80 << 10);

    let out = env.prepare().size("64M").fill("zero").fresh().out();
    assert!(out.status.success());
    assert!(data_file(&env).iter().all(|&b| b == 0));
}
