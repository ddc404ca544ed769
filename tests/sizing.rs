//! `dbio size`: seed 003's example reproduced, the textbook arithmetic of RAID levels, bad
//! plans named by key and line, and a device measured by real runs at several spans.

use serde_json::Value;

use crate::util::{Env, f, shm_dir, u};

fn example(name: &str) -> String {
    format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Writes `text` as a plan in the environment; its path.
fn plan(env: &Env, name: &str, text: &str) -> String {
    let p = env.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn the_seed_example_needs_about_410_devices_and_5_arrays() {
    let env = Env::new();
    let r = env.sizing().arg(example("dw-5tb-sizing.toml")).json();
    assert_eq!(r["schema"], "dbio.size.v1");
    let before = u(&r["devices"]["before_spares"]) as f64;
    assert!(
        (before - 410.0).abs() <= 0.05 * 410.0,
        "{before} devices before spares, the seed says 410"
    );
    let d = &r["devices"];
    for k in ["for_iops", "for_bandwidth", "for_capacity"] {
        let n = u(&d[k]) as f64;
        assert!((390.0..=430.0).contains(&n), "{k}: {n}");
    }
    assert_eq!(r["binding"], "capacity");
    assert_eq!(
        u(&d["total"]),
        u(&d["before_spares"]) + u(&d["spares"]),
        "{d}"
    );
    assert_eq!(u(&r["arrays"]["min"]), 5, "{}", r["arrays"]);
    assert_eq!(u(&r["arrays"]["for_bandwidth"]), 5);
    // 1.8 GB/s today, 3.6 tomorrow.
    let host = f(&r["needs"]["host"]["read_mib_per_s"]) + f(&r["needs"]["host"]["write_mib_per_s"]);
    assert!((3600.0..3700.0).contains(&host), "{host}");
    // Sized by capacity alone: about 160 drives in one array, a third of the IOPS needed.
    let cf = &r["capacity_first"];
    assert_eq!(u(&cf["arrays"]), 1);
    assert!((140..=170).contains(&u(&cf["total"])), "{cf}");
    assert!(f(&cf["iops_pct_of_needed"]) < 40.0, "{cf}");

    let out = env.sizing().arg(example("dw-5tb-sizing.toml")).out();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "Requirements to Array & Device Capabilities",
        "(7,200 + 1,175 × 2) × 2 = 19,100 device IOPS",
        "146.0 GiB × 33% × 50% = 24.1 GiB",
        "← binds",
        "Arrays: 5 at least — bandwidth 3,692.2 / 750 MiB/s → 5",
        "Capacity first",
    ] {
        assert!(text.contains(want), "missing {want:?}:\n{text}");
    }
}

const RAID5: &str = r#"
[requirements]
capacity = "2T"
growth = 1.5
[[requirements.class]]
event = "db file sequential read"
size = "16K"
peak_iops = 3000
p99 = "10ms"
[[requirements.class]]
event = "db file parallel write"
size = "8K"
peak_iops = 1000

[device]
capacity = "600G"
raid = "raid5"
iops = 200
mib_per_s = 100

[array]
max_mib_per_s = 2000
max_devices = 24
spares = "5%"
"#;

#[test]
fn raid_levels_give_the_textbook_arithmetic() {
    let env = Env::new();
    let r = env.sizing().arg(plan(&env, "r5.toml", RAID5)).json();
    // (3,000 reads + 1,000 writes × 4) × 1.5 = 10,500 device IOPS; 200 each: 52.5 → 53.
    assert_eq!(f(&r["needs"]["backend_iops"]), 10_500.0);
    assert_eq!(u(&r["devices"]["for_iops"]), 53);
    // (46.875 + 7.8125 / (4/5)) × 1.5 MiB/s at 100 each: 1.
    assert_eq!(f(&r["needs"]["backend_mib_per_s"]), 84.9609375);
    assert_eq!(u(&r["devices"]["for_bandwidth"]), 1);
    // 2 TiB at 4/5 of 600 GiB: 4.27 → 5.
    assert_eq!(u(&r["devices"]["for_capacity"]), 5);
    assert_eq!(r["binding"], "iops");
    // 53 in whole 4+1 groups: 55; 5 % spares: 2.75 → 3.
    let d = &r["devices"];
    assert_eq!(
        (u(&d["before_spares"]), u(&d["spares"]), u(&d["total"])),
        (55, 3, 58)
    );
    assert_eq!(r["device"]["raid"], "RAID 5 (4+1)");
    assert_eq!(f(&r["device"]["write_penalty"]), 4.0);
    // 58 devices, 24 per array: 3; 82 MiB/s of hosts' traffic: 1.
    let a = &r["arrays"];
    assert_eq!(
        (u(&a["min"]), u(&a["for_bandwidth"]), u(&a["for_devices"])),
        (3, 1, 3)
    );

    // RAID 10: writes cost 2, half of each device holds data.
    let r10 = RAID5.replace("raid = \"raid5\"", "raid = \"raid10\"");
    let r = env.sizing().arg(plan(&env, "r10.toml", &r10)).json();
    assert_eq!(f(&r["needs"]["backend_iops"]), 7_500.0);
    assert_eq!(u(&r["devices"]["for_iops"]), 38);
    assert_eq!(u(&r["devices"]["for_capacity"]), 7);
    assert_eq!(
        (u(&r["devices"]["spares"]), u(&r["devices"]["total"])),
        (2, 40)
    );
    // RAID 6 over 8: writes cost 6, 6/8 holds data.
    let r6 = RAID5.replace("raid = \"raid5\"", "raid = \"raid6\"\nraid_group = 8");
    let r = env.sizing().arg(plan(&env, "r6.toml", &r6)).json();
    assert_eq!(f(&r["needs"]["backend_iops"]), 13_500.0);
    assert_eq!(u(&r["devices"]["before_spares"]), 72);
}

#[test]
fn bad_plans_exit_2_naming_key_and_line() {
    let env = Env::new();
    let refused = |text: &str, want: &str| {
        let p = plan(&env, "bad.toml", text);
        let out = env.sizing().arg(&p).out();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{want}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(want), "want {want:?}: {stderr}");
        assert!(out.stdout.is_empty());
    };
    let cases = [
        (
            "iops = 200\n",
            "",
            "bad.toml (line 15): missing 'device.iops'",
        ),
        (
            "mib_per_s = 100\n",
            "",
            "bad.toml (line 15): missing 'device.mib_per_s'",
        ),
        (
            "iops = 200",
            "iops = 0",
            "bad.toml (line 18): invalid value for 'device.iops'",
        ),
        (
            "mib_per_s = 100",
            "mib_per_s = -3",
            "(line 19): invalid value for 'device.mib_per_s'",
        ),
        (
            "capacity = \"600G\"",
            "capacity = \"0\"",
            "(line 16): invalid value for 'device.capacity'",
        ),
        (
            "max_mib_per_s = 2000\n",
            "",
            "bad.toml (line 21): missing 'array.max_mib_per_s'",
        ),
        (
            "max_devices = 24",
            "max_devices = 0",
            "(line 23): invalid value for 'array.max_devices'",
        ),
        (
            "peak_iops = 1000\n",
            "",
            "bad.toml (line 11): missing 'requirements.class.peak_iops'",
        ),
        (
            "capacity = \"2T\"\n",
            "",
            "bad.toml (line 2): missing 'requirements.capacity'",
        ),
        (
            "growth = 1.5",
            "growth = 0",
            "(line 4): invalid value for 'requirements.growth'",
        ),
        (
            "raid = \"raid5\"",
            "raid = \"raid7\"",
            "(line 17): invalid value for 'device.raid'",
        ),
        (
            "spares = \"5%\"",
            "spare = \"5%\"",
            "(line 24): unknown field `spare`",
        ),
        (
            "p99 = \"10ms\"",
            "p99 = \"fast\"",
            "(line 9): invalid value for 'requirements.class.p99'",
        ),
        (
            "iops = 200",
            "iops = 200\nruns = [1]",
            "(line 18): invalid value for 'device.iops'",
        ),
    ];
    for (from, to, want) in cases {
        let text = RAID5.replacen(from, to, 1);
        assert_ne!(text, RAID5, "{from}");
        refused(&text, want);
    }
    let out = env.sizing().arg("no-such-plan.toml").out();
    assert_eq!(out.status.code(), Some(2));
    // Runs that are not in the store.
    let p = plan(
        &env,
        "runs.toml",
        &RAID5.replace("iops = 200\nmib_per_s = 100\n", "runs = [41]\n"),
    );
    let out = env.sizing().arg(&p).out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("runs.toml (line 18): device.runs: no run 41"),
        "{stderr}"
    );
    let out = env.sizing().arg(&p).opt("--runs", 0).out();
    assert_eq!(out.status.code(), Some(2));
}

/// A small job with a latency limit, run at each span.
const JOB: &str = r#"
[dataset]
size = "16M"
files = 2

[[class]]
name = "reads"
event = "db file parallel read"
size = "8K"
batch = 1
sessions = 2
rate = 200
[class.limits]
mean = "100ms"
"#;

#[test]
fn measured_runs_give_the_figures_and_the_largest_passing_span() {
    let Some(dir) = shm_dir() else {
        return;
    };
    let env = Env::new();
    let job = plan(&env, "job.toml", JOB);
    let target = dir.path().join("ds").display().to_string();
    let run = |span: &str, stall: Option<&str>| -> Value {
        let mut run = env
            .run_job(&job)
            .target(&target)
            .opt("--span", span)
            .duration("2s")
            .warmup("0s")
            .arg("--json");
        if let Some(s) = stall {
            // The device holds completions for 900 ms in every second: the limit fails.
            run = run.env("DBIO_FAULT_STALL", s);
        }
        let out = run.out();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    };
    let quarter = run("25%", None);
    let half = run("50%", None);
    let whole = run("100%", Some("1s:900ms"));
    assert_eq!(quarter["verdict"]["pass"], true, "{}", quarter["verdict"]);
    assert_eq!(half["verdict"]["pass"], true, "{}", half["verdict"]);
    assert_eq!(whole["verdict"]["pass"], false, "{}", whole["verdict"]);

    let sizing = RAID5
        .replace(
            "iops = 200\nmib_per_s = 100\n",
            "runs = [1, 2, 3]\nruns_devices = 2\n",
        )
        .replace("raid = \"raid5\"", "raid = \"raid1\"");
    let p = plan(&env, "measured.toml", &sizing);
    let r = env.sizing().arg(&p).json();
    let d = &r["device"];
    assert_eq!(d["source"], "runs");
    assert_eq!(f(&d["usable_surface"]), 0.5);
    let m = &d["measured"];
    assert_eq!(m["figures_from_run"], 2);
    // Reads only, 2 devices under the runs (one device each way, no RAID said for them → the
    // plan's RAID 1, whose penalty touches only writes).
    let iops = f(&half["totals"]["read_iops"]) / 2.0;
    assert!(
        (f(&d["iops"]) - iops).abs() < 1e-9 * iops,
        "{} vs {iops}",
        d["iops"]
    );
    let mib = f(&half["totals"]["read_mib_per_s"]) / 2.0;
    assert!((f(&d["mib_per_s"]) - mib).abs() < 1e-9 * mib.max(1.0));
    let runs = m["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(
        runs.iter()
            .map(|j| j["pass"].as_bool().unwrap())
            .collect::<Vec<_>>(),
        [true, true, false]
    );
    assert!(
        runs[2]["reasons"][0].as_str().unwrap().contains("mean_ms"),
        "{}",
        runs[2]
    );
    // The devices follow from the measured figures: 3,000 reads + 1,000 writes × 2, × 1.5.
    let for_iops = u(&r["devices"]["for_iops"]);
    assert_eq!(for_iops, (7_500.0 / f(&d["iops"]) - 1e-9).ceil() as u64);

    // The text says where each figure came from.
    let out = env.sizing().arg(&p).out();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("measured: IOPS and MiB/s from run 2, the usable surface is the largest span that passed"),
        "{text}"
    );
    assert!(
        text.contains("← figures and usable surface") && text.contains("FAIL: verdict"),
        "{text}"
    );

    // --runs wins over the plan's own figures, and says so.
    let r = env
        .sizing()
        .arg(plan(&env, "stated.toml", RAID5))
        .opt("--runs", "1,3")
        .json();
    assert_eq!(f(&r["device"]["usable_surface"]), 0.25);
    assert_eq!(r["device"]["measured"]["figures_from_run"], 1);
    assert!(
        r["notes"][0].as_str().unwrap().contains("device.iops"),
        "{}",
        r["notes"]
    );

    // Only the failing run: no span meets the requirements.
    let out = env.sizing().arg(&p).opt("--runs", 3).out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("--runs: no run passed") && stderr.contains("run 3 at span 100%"),
        "{stderr}"
    );
    // A run without a verdict cannot say whether a span passed.
    let plain = env
        .run("read-iops")
        .target(&target)
        .size("16M")
        .files(2)
        .duration("1s")
        .warmup("0s")
        .out();
    assert!(plain.status.success());
    let out = env.sizing().arg(&p).opt("--runs", "1,4").out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("different jobs"), "{stderr}");
    let out = env.sizing().arg(&p).opt("--runs", 4).out();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("run 4 (read-iops at span 100%) has no verdict"),
        "{stderr}"
    );
}
