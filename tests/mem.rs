//! `dbio mem`: the latency curve, the NUMA matrix, loaded latency and shared-memory
//! placement. Small working sets and budgets keep these fast; the figures themselves are
//! checked against a reference chase in `bench/mem-vs-c.sh`, not here.

use std::path::Path;

use serde_json::Value;

use crate::util::{Dbio, Env, f, files_under, shm_dir, u};

/// A quick full run: every part, small sizes, short budgets.
fn quick(env: &Env) -> Dbio<'_> {
    env.mem()
        .opt("--max-size", "8M")
        .budget("20ms")
        .opt("--numa-size", "4M")
        .opt("--loaded-size", "4M")
        .arg("--json")
}

fn matrix(v: &Value) -> Vec<Vec<Value>> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a matrix: {v}"))
        .iter()
        .map(|r| r.as_array().expect("a row").clone())
        .collect()
}

#[test]
fn a_run_has_the_curve_the_matrix_and_loaded_latency() {
    let env = Env::new();
    let r = quick(&env).json();
    assert_eq!(r["schema"], "dbio.mem.v1");
    assert_eq!(r["pages"], "4k");
    assert_eq!(r["page_size"]["used"], "4k");
    assert_eq!(r["partial"], false);

    // The curve: sizes ascending from 4K to the largest, two per doubling, every figure
    // inside its own min..max.
    let curve = r["curve"].as_array().expect("curve");
    let sizes: Vec<u64> = curve.iter().map(|p| u(&p["size_bytes"])).collect();
    assert!(sizes.len() >= 6, "{sizes:?}");
    assert_eq!(sizes.first(), Some(&4096));
    assert_eq!(sizes.last(), Some(&(8 << 20)));
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "{sizes:?}");
    assert_eq!(sizes.len(), 23, "4K..8M, two points per doubling");
    for p in curve {
        let ns = f(&p["ns"]);
        assert!(ns > 0.0 && ns.is_finite(), "{p}");
        assert!(f(&p["min_ns"]) <= ns && ns <= f(&p["max_ns"]), "{p}");
        assert!(u(&p["reps"]) >= 1 && u(&p["loads"]) > 0, "{p}");
        assert!(f(&p["spread_pct"]) >= 0.0);
    }
    // Cache levels come from sysfs and are named on the curve.
    let caches = r["topology"]["caches"].as_array().unwrap();
    let levels: Vec<&str> = r["levels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(levels.len(), caches.len() + 1);
    assert_eq!(levels.last(), Some(&"memory"));
    let l1 = caches.first().map_or(0, |c| u(&c["size_bytes"]));
    for p in curve {
        if u(&p["size_bytes"]) <= l1 {
            assert_eq!(p["level"], levels[0], "{p}");
        }
    }

    // The NUMA matrix: nodes × nodes, local distance 10 on the diagonal, an interleave figure.
    let numa = &r["numa"];
    let nodes = numa["nodes"].as_array().unwrap().len();
    assert!(nodes >= 1);
    for key in ["distance", "latency_ns", "bandwidth_gib_s"] {
        let m = matrix(&numa[key]);
        assert_eq!(m.len(), nodes, "{key}");
        assert!(m.iter().all(|row| row.len() == nodes), "{key}");
    }
    let distance = matrix(&numa["distance"]);
    for (i, row) in distance.iter().enumerate() {
        assert_eq!(u(&row[i]), 10);
    }
    let cpu_node = r["topology"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| {
            n["cpus"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| u(c) == u(&r["config"]["cpu"]))
        })
        .expect("the chasing CPU's node");
    let local = &matrix(&numa["latency_ns"])[cpu_node][cpu_node];
    assert!(f(local) > 0.0, "{local}");
    assert!(f(&matrix(&numa["bandwidth_gib_s"])[cpu_node][cpu_node]) > 0.0);
    assert!(f(&numa["interleave_ns"]) > 0.0);
    assert_eq!(
        numa["interleave_ns_by_cpu_node"].as_array().unwrap().len(),
        nodes
    );
    // Bound memory was found where it was bound.
    assert!(f(&matrix(&numa["placement_pct"])[cpu_node][cpu_node]) >= 90.0);

    // Loaded latency: 0, 1, ... reading threads; none read nothing, the others something.
    let loaded = r["loaded"].as_array().unwrap();
    let threads: Vec<u64> = loaded.iter().map(|p| u(&p["threads"])).collect();
    assert_eq!(threads[0], 0);
    assert!(threads.windows(2).all(|w| w[0] < w[1]), "{threads:?}");
    assert_eq!(f(&loaded[0]["bandwidth_gib_s"]), 0.0);
    for p in loaded {
        assert!(f(&p["latency_ns"]) > 0.0, "{p}");
        let rounds: Vec<f64> = p["round_ns"].as_array().unwrap().iter().map(f).collect();
        assert_eq!(rounds.len(), 3, "{p}");
        assert_eq!(rounds[1], f(&p["latency_ns"]), "the middle round: {p}");
        // A reading thread reads something, unless other work took its CPU and the point
        // says so (not stable, preempted): then its figure is not one to judge.
        if u(&p["threads"]) > 0 && p["stable"] != false {
            assert!(f(&p["bandwidth_gib_s"]) > 0.0, "{p}");
        }
        if u(&p["threads"]) > 0 && f(&p["bandwidth_gib_s"]) == 0.0 {
            assert!(u(&p["preempted_reps"]) > 0, "{p}");
        }
    }
    let cpus = r["host"]["cpus"].as_u64().unwrap();
    if cpus >= 2 {
        assert!(
            threads.len() >= 2,
            "another CPU can load memory: {threads:?}"
        );
    }

    // The run directory holds the same result, the summary and the report.
    let runs = env.join("dbio-runs");
    let files = files_under(&runs);
    assert_eq!(files.len(), 3, "{files:?}");
    let dir = runs.join(Path::new(&files[0]).parent().unwrap());
    assert!(
        dir.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("_mem_4k_8M")
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(written, r);
    let summary = std::fs::read_to_string(dir.join("summary.txt")).unwrap();
    for part in [
        "Latency by working set",
        "NUMA matrix",
        "Loaded latency",
        "Levels:",
    ] {
        assert!(summary.contains(part), "{part}:\n{summary}");
    }
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("NUMA matrix") && html.contains("L1d"));
    assert!(
        !html.contains("<script") && !html.contains("http"),
        "self-contained"
    );

    // Recorded in the store, and `dbio runs` lists it without breaking.
    let out = env.runs().out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Memory runs (dbio mem)") && text.contains("latency"),
        "{text}"
    );
    // In Markdown too: a heading and a pipe table (it printed them as text).
    let out = env.runs().args(["--format", "md"]).out();
    assert!(out.status.success());
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.starts_with("# Memory runs (dbio mem)\n"), "{md}");
    assert!(
        md.lines()
            .any(|l| l.starts_with("|--:|") || l.starts_with("|:--|")),
        "{md}"
    );
    let out = env.runs().arg("--json").out();
    assert!(out.status.success());
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        serde_json::json!([])
    );
}

#[test]
fn parts_and_sizes_can_be_chosen() {
    let env = Env::new();
    let r = env
        .mem()
        .sizes("1M,16K,16K")
        .only("curve")
        .budget("20ms")
        .json();
    let sizes: Vec<u64> = r["curve"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(&p["size_bytes"]))
        .collect();
    assert_eq!(sizes, [16 << 10, 1 << 20], "sorted, duplicates dropped");
    assert!(r["numa"].is_null() && r["loaded"].is_null());
    assert_eq!(r["config"]["parts"], serde_json::json!(["curve"]));

    let r = env
        .mem()
        .only("loaded")
        .opt("--loaded-size", "2M")
        .opt("--load-threads", 0)
        .budget("20ms")
        .json();
    assert!(r["curve"].is_null());
    let loaded = r["loaded"].as_array().unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0]["threads"], 0);
}

/// Where transparent huge pages are on, a run with them records them; where they are off,
/// `--pages thp` is refused naming the setting (either way the test checks something).
#[test]
fn transparent_huge_pages_are_recorded() {
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    let env = Env::new();
    let thp_run = || {
        env.mem()
            .opt("--pages", "thp")
            .sizes("8M")
            .only("curve")
            .budget("20ms")
            .arg("--json")
    };
    if thp.is_empty() || thp.contains("[never]") {
        thp_run().refused(&["--pages thp", "transparent_hugepage"]);
        assert!(!env.join("dbio-runs").exists(), "nothing created");
    } else {
        let r = thp_run().json();
        assert_eq!(r["pages"], "thp");
        assert_eq!(r["page_size"]["bytes"], 2 << 20);
        let backed = f(&r["page_size"]["huge_backed_pct"]);
        assert!((0.0..=100.0).contains(&backed), "{backed}");
    }
}

#[test]
fn huge_pages_are_refused_without_a_reserve_or_fall_back_when_asked() {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let free = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("HugePages_Free:"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(0);
    let env = Env::new();
    let huge = || env.mem().opt("--pages", "huge").sizes("1M").only("curve");
    if free > 0 {
        // A reserve exists: one huge page holds the 1 MiB working set, and it is used.
        let r = huge().budget("20ms").json();
        assert_eq!(r["pages"], "huge", "{r}");
        assert!(r["page_size"]["fallback"].is_null(), "{r}");
    } else {
        huge().refused(&["--pages huge", "vm.nr_hugepages", "--allow-fallback"]);
        assert!(!env.join("dbio-runs").exists(), "nothing created");

        let r = huge().arg("--allow-fallback").budget("20ms").json();
        assert_ne!(r["pages"], "huge");
        assert_eq!(r["page_size"]["requested"], "huge");
        assert!(
            r["page_size"]["fallback"]
                .as_str()
                .unwrap()
                .contains("vm.nr_hugepages")
        );
    }
}

/// Seed 000's check: a 64 MiB file in /dev/shm, every page accounted for by node.
#[test]
fn shm_accounts_for_every_page_of_a_tmpfs_file() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let file = shm.path().join("sga");
    std::fs::write(&file, vec![7u8; 64 << 20]).unwrap();
    let r = env.mem().arg("--shm").arg(file.to_str().unwrap()).json();
    assert_eq!(r["schema"], "dbio.mem.v1");
    let placed = &r["shm"]["file"];
    assert_eq!(u(&placed["pages"]), 16384);
    assert_eq!(u(&placed["page_bytes"]), 4096);
    assert_eq!(u(&placed["pages_not_in_memory"]), 0);
    let by_node = r["pages_by_node"].as_object().expect("pages_by_node");
    assert!(!by_node.is_empty());
    assert_eq!(by_node.values().map(u).sum::<u64>(), 16384, "{by_node:?}");
    let nodes: Vec<String> = r["topology"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].to_string())
        .collect();
    assert!(
        by_node.keys().all(|k| nodes.contains(k)),
        "{by_node:?} vs {nodes:?}"
    );
    assert_eq!(placed["mount"]["fs_type"], "tmpfs");
    assert!(r["curve"].is_null());
    let runs = files_under(&env.join("dbio-runs"));
    let html = runs
        .iter()
        .find(|f| f.ends_with("report.html"))
        .expect("report.html");
    let html = std::fs::read_to_string(env.join("dbio-runs").join(html)).unwrap();
    assert!(
        html.contains("Where the pages are") && html.contains("16,384"),
        "{html}"
    );

    // A sparse file: only the pages written are in memory, and mapping it allocated none.
    let sparse = shm.path().join("sparse");
    let f2 = std::fs::File::create(&sparse).unwrap();
    f2.set_len(64 << 20).unwrap();
    use std::os::unix::fs::FileExt;
    f2.write_all_at(&[1u8; 1 << 20], 8 << 20).unwrap();
    let r = env.mem().arg("--shm").arg(sparse.to_str().unwrap()).json();
    let in_memory: u64 = r["pages_by_node"]
        .as_object()
        .unwrap()
        .values()
        .map(u)
        .sum();
    assert_eq!(in_memory, 256);
    assert_eq!(u(&r["shm"]["file"]["pages_not_in_memory"]), 16384 - 256);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&sparse).unwrap().blocks() * 512, 1 << 20);
    assert_eq!(std::fs::read(&sparse).unwrap().len(), 64 << 20, "unchanged");
}

/// A SysV shared memory segment of this test process, found by `--pid`.
#[test]
fn pid_finds_sysv_shared_memory_by_node() {
    let env = Env::new();
    let len = 8 << 20;
    // SAFETY: a private segment, attached, written, then detached and removed.
    let (id, p) = unsafe {
        let id = libc::shmget(libc::IPC_PRIVATE, len, libc::IPC_CREAT | 0o600);
        assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
        let p = libc::shmat(id, std::ptr::null(), 0);
        assert_ne!(p as isize, -1);
        std::ptr::write_bytes(p as *mut u8, 1, len);
        (id, p)
    };
    let pid = std::process::id().to_string();
    let out = env.mem().opt("--pid", &pid).arg("--json").out();
    // SAFETY: attached above.
    unsafe {
        libc::shmdt(p);
        libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut());
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let segments = r["shm"]["process"]["segments"].as_array().unwrap();
    let key = format!("/SYSV{:08x} (deleted)", 0);
    let seg = segments
        .iter()
        .find(|s| s["kind"] == "sysv" && s["name"] == key.as_str())
        .unwrap_or_else(|| panic!("no SysV segment in {segments:?}"));
    let pages: u64 = seg["pages_by_node"]
        .as_object()
        .unwrap()
        .values()
        .map(u)
        .sum();
    assert_eq!(pages * u(&seg["page_bytes"]), len as u64);
    let total: u64 = r["pages_by_node"]
        .as_object()
        .unwrap()
        .values()
        .map(u)
        .sum();
    assert!(total >= pages);
}

#[test]
fn bad_input_is_refused_with_one_line_naming_the_option() {
    let env = Env::new();
    let cases: &[(&[&str], &str)] = &[
        (&["--max-size", "0"], "--max-size"),
        (&["--max-size", "-1G"], "--max-size"),
        (&["--max-size", "1T"], "--max-size"),
        (&["--max-size", "1X"], "--max-size"),
        (&["--min-size", "512"], "--min-size"),
        (&["--min-size", "1G", "--max-size", "1M"], "--min-size"),
        (&["--sizes", "16K,abc"], "--sizes"),
        (&["--sizes", "100"], "--sizes"),
        (&["--sizes", "1M", "--max-size", "2M"], "--max-size"),
        (&["--budget", "0"], "--budget"),
        (&["--budget", "5m"], "--budget"),
        (&["--points-per-doubling", "0"], "--points-per-doubling"),
        (&["--pages", "2m"], "--pages"),
        (&["--cpu", "99999"], "--cpu"),
        (&["--cpu", "-1"], "--cpu"),
        (&["--seed", "-3"], "--seed"),
        (&["--load-threads", "9999"], "--load-threads"),
        (&["--load-threads", "-1"], "--load-threads"),
        (&["--numa-size", "512K"], "--numa-size"),
        (&["--loaded-size", "100T"], "--loaded-size"),
        (&["--only", "disk"], "--only"),
        (&["--shm", "/nonexistent/dbio-shm"], "--shm"),
        (&["--shm", "/dev/shm"], "--shm"),
        (&["--shm", "/dev/shm/x", "--max-size", "1M"], "--max-size"),
        (&["--pid", "0"], "--pid"),
        (&["--pid", "-5"], "--pid"),
        (&["--pid", "4194304999"], "--pid"),
        (&["--pid", "999999999"], "--pid"),
        (&["--topology", "--out", "x"], "--out"),
    ];
    for (args, option) in cases {
        env.mem().args(*args).refused(&[option]);
    }
    assert!(
        !env.join("dbio-runs").exists(),
        "nothing created for bad input"
    );
}

/// The parts that only read the topology, on seed 001's machine: 4 nodes, every remote
/// distance 21 (the second hop is not in the table).
#[test]
fn topology_of_a_four_node_machine() {
    let env = Env::new();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mem-sysfs/four_node_2hop");
    let run = |args: &[&str]| env.mem().args(args).env("DBIO_MEM_SYSROOT", &fixture).out();
    let out = run(&["--topology", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t: Value = serde_json::from_slice(&out.stdout).unwrap();
    let topo = &t["topology"];
    let ids: Vec<u64> = topo["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| u(&n["id"]))
        .collect();
    assert_eq!(ids, [0, 1, 2, 3]);
    let d = matrix(&topo["distance"]);
    for (i, row) in d.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            assert_eq!(u(v), if i == j { 10 } else { 21 });
        }
    }
    assert_eq!(u(&topo["nodes"][3]["cpus"][0]), 24);
    let caches: Vec<u64> = topo["caches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| u(&c["size_bytes"]))
        .collect();
    assert_eq!(caches, [32 << 10, 256 << 10, 16 << 20]);
    assert_eq!(t["thp"], "always");

    let text = String::from_utf8_lossy(&run(&["--topology"]).stdout).into_owned();
    assert!(
        text.contains("NUMA: 4 node(s)") && text.contains("Distances"),
        "{text}"
    );
    assert!(text.contains("L3 16.0 MiB (shared by CPUs 0-7)"), "{text}");

    // Nothing can be measured on a captured tree.
    let out = run(&["--only", "curve"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("DBIO_MEM_SYSROOT"));
}

/// Ctrl-C stops a run within 2 s, keeps what was measured and exits 130.
#[test]
fn a_signal_keeps_the_partial_result() {
    let env = Env::new();
    let child = env
        .mem()
        .opt("--max-size", "64M")
        .budget("10s")
        .opt("--numa-size", "4M")
        .arg("--json")
        .process()
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(
        t.elapsed().as_secs_f64() < 2.5,
        "stopped in {:?}",
        t.elapsed()
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["partial"], true);
    assert_eq!(r["stop_reason"], "interrupted");
    assert!(!r["curve"].as_array().unwrap().is_empty());
}

/// On a terminal, a progress line says which part and size is being measured.
#[test]
fn a_terminal_shows_what_is_being_measured() {
    let env = Env::new();
    let args = [
        "mem",
        "--max-size",
        "2M",
        "--budget",
        "50ms",
        "--numa-size",
        "2M",
        "--loaded-size",
        "2M",
    ];
    let Some(tty) = crate::progress::under_pty(&env, &args) else {
        return;
    };
    assert!(tty.contains("\x1b[2K"), "drawn in place: {tty}");
    // Redrawn at most 8 times a second: the short loaded part may not show.
    for part in [
        "dbio mem: latency curve",
        "KiB (last ",
        "NUMA matrix: CPU node",
    ] {
        assert!(tty.contains(part), "{part}: {tty}");
    }
    let mut quiet = args.to_vec();
    quiet.push("-q");
    let tty = crate::progress::under_pty(&env, &quiet).unwrap();
    assert!(!tty.contains("dbio mem: latency curve"), "{tty}");
}
