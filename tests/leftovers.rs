//! What the commands that write a results directory besides `dbio run` leave behind —
//! `dbio mem`, `dbio sweep`, `dbio matrix`, `dbio calibrate`: an `--out` that cannot hold
//! results is bad input (exit 2) before anything is made or measured, and nothing is left;
//! a command killed mid-way leaves a directory `dbio doctor` lists from anywhere and `dbio
//! clean --stale` removes, never removing what is not dbio's. And the sizing plan's TOML
//! errors name their key and line.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Dbio, Env, Killed, Mount, assert_refused, is_root, shm_dir, skip, tree};

/// `dbio mem` measuring a second or so.
fn mem_briefly<'e>(env: &'e Env, out: &str) -> Dbio<'e> {
    env.mem()
        .sizes("1M")
        .only("curve")
        .budget("50ms")
        .out_dir(out)
}

/// Each command that makes a results directory of its own, writing into `out`, its data
/// set (if any) at `target`.
fn commands<'e>(env: &'e Env, target: &str, out: &str) -> Vec<Dbio<'e>> {
    vec![
        mem_briefly(env, out),
        env.sweep()
            .arg("read-iops")
            .param("sessions=1,2")
            .size("64M")
            .duration("1s")
            .warmup("0s")
            .target(target)
            .out_dir(out),
        env.cmd("matrix")
            .size("64M")
            .opt("--num-small", 1)
            .opt("--num-large", 1)
            .opt("--point-duration", "1s")
            .warmup("0s")
            .target(target)
            .out_dir(out),
        env.cmd("calibrate")
            .size("64M")
            .opt("--point-duration", "1s")
            .warmup("0s")
            .opt("--max-outstanding", 1)
            .target(target)
            .out_dir(out),
    ]
}

/// Runs `cmd` and checks the refusal: bad input naming `--out`, quick, nothing new under the
/// working directory or the results store's directory, no data set made at `target`.
/// Returns what it printed on stderr.
fn refused_at_out(cmd: Dbio<'_>, target: &Path) -> String {
    let what = cmd.line();
    let out = cmd.refused_leaving_nothing(&["--out"]);
    assert!(!target.exists(), "{what}: the data set was made");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A file, a path below a file, a read-only and a full file system as `--out` of `dbio
/// mem`, `sweep`, `matrix` and `calibrate`: refused before anything is made, measured or
/// recorded, and the directories made for it are gone again.
#[test]
fn an_out_that_cannot_hold_results_is_refused_by_every_command() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let target = shm.path().join("ds");
    let t = target.to_str().unwrap();
    std::fs::write(env.join("a-file"), b"x").unwrap();
    for out in ["a-file", "a-file/runs"] {
        for cmd in commands(&env, t, out) {
            refused_at_out(cmd, &target);
        }
    }
    assert_eq!(std::fs::read(env.join("a-file")).unwrap(), b"x");
    if !is_root() {
        return skip("a read-only and a full file system for --out need root (mounts)");
    }
    let Some(_ro) = Mount::new("tmpfs", "ro,size=1m", "tmpfs", &env.join("ro")) else {
        return;
    };
    let Some(_full) = Mount::new("tmpfs", "size=4m", "tmpfs", &env.join("full")) else {
        return;
    };
    // Filled to the last block.
    let mut filler = std::fs::File::create(env.join("full/filler")).unwrap();
    use std::io::Write;
    while filler.write_all(&[7u8; 1 << 12]).is_ok() {}
    drop(filler);
    let filled = std::fs::read(env.join("full/filler")).unwrap();
    for out in ["ro", "ro/a/b", "full", "full/a/b"] {
        for cmd in commands(&env, t, out) {
            let what = cmd.line();
            let err = refused_at_out(cmd, &target);
            assert!(
                err.contains("read-only") || err.contains("No space left"),
                "{what}: {err}"
            );
        }
    }
    assert_eq!(
        std::fs::read(env.join("full/filler")).unwrap(),
        filled,
        "the foreign file changed"
    );
    // With room again, `dbio mem` keeps its directory there, with no probe file in it.
    std::fs::remove_file(env.join("full/filler")).unwrap();
    let out = mem_briefly(&env, "full/a/b").out();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dirs: Vec<PathBuf> = std::fs::read_dir(env.join("full/a/b"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    assert_eq!(
        tree(&dirs[0]),
        ["report.html", "result.json", "summary.txt"],
        "{}",
        dirs[0].display()
    );
}

/// `dbio doctor` or `clean` run from a directory of their own, with `env`'s store.
fn doctor_elsewhere(env: &Env, elsewhere: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = env.bare().args(args).current_dir(elsewhere).out();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), text)
}

/// Waits (up to 60 s) until `doctor` (run elsewhere) says `want`, while `child` runs.
fn wait_doctor_says(env: &Env, elsewhere: &Path, child: &mut Child, want: &str) -> String {
    let t0 = Instant::now();
    loop {
        let (code, text) = doctor_elsewhere(env, elsewhere, &["doctor"]);
        if text.contains(want) {
            assert_eq!(code, Some(0), "{text}");
            assert!(!text.contains("STALE"), "{text}");
            return text;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "dbio ended before doctor said {want:?}: {text}"
        );
        assert!(t0.elapsed() < Duration::from_secs(60), "{text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The one directory in `dir`, canonical, once there is one (up to 60 s).
fn wait_one_dir(dir: &Path) -> PathBuf {
    let t0 = Instant::now();
    loop {
        if let Some(d) = std::fs::read_dir(dir)
            .ok()
            .and_then(|mut rd| rd.next())
            .and_then(|e| e.ok())
        {
            return std::fs::canonicalize(d.path()).unwrap();
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "nothing in {dir:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn sigkill(child: &mut Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A `dbio mem` killed mid-measurement leaves its directory: `dbio doctor` run anywhere
/// says it is going on while it is, then lists it (exit 1), and `dbio clean --stale`
/// removes it, after which doctor has nothing to say.
#[test]
fn a_killed_mem_run_is_found_from_anywhere_and_cleaned() {
    let env = Env::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let mut child = Killed(
        env.mem()
            .sizes("64M,128M,256M")
            .only("curve")
            .budget("30s")
            .out_dir("runs")
            .quiet()
            .process()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let dir = wait_one_dir(&env.join("runs"));
    let shown = dir.display().to_string();
    wait_doctor_says(
        &env,
        elsewhere.path(),
        &mut child,
        &format!("{shown}: a dbio mem run going on now"),
    );
    sigkill(&mut child);
    assert!(dir.is_dir());
    let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["doctor"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(&format!("{shown}: STALE: a dbio mem run started")),
        "{text}"
    );
    assert!(text.contains("dbio clean --stale"), "{text}");
    let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["clean", "--stale"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!dir.exists(), "{text}");
    let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["doctor"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains(&shown), "{text}");
}

/// A sweep killed between its points: while it runs (even stopped) it is "going on now",
/// never stale; killed, `dbio doctor` run anywhere lists its directory (exit 1). `dbio
/// clean --stale` removes dbio's files from it — the sweep's own and its points' run
/// directories that hold only dbio's files — and leaves a point directory holding a file
/// of someone else's, and that file, and the sweep directory holding them; once those are
/// gone, the directory goes too. The finished point stays recorded in the results store.
#[test]
fn a_killed_sweep_is_found_from_anywhere_and_cleaned_of_dbios_files_only() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = shm.path().join("ds");
    let mut child = Killed(
        env.sweep()
            .arg("read-iops")
            .param("sessions=1,2")
            .size("64M")
            .duration("1s")
            .warmup("0s")
            .target(&target)
            .out_dir("runs")
            .quiet()
            .process()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let dir = wait_one_dir(&env.join("runs"));
    let shown = dir.display().to_string();
    // The first point written and the second one's directory made: the sweep is stopped
    // (it holds its locks) while the second point measures, after the store writes that
    // begin a point.
    let t0 = Instant::now();
    let point_dirs = |d: &Path| {
        std::fs::read_dir(d)
            .map(|rd| rd.flatten().filter(|e| e.path().is_dir()).count())
            .unwrap_or(0)
    };
    while !dir.join("sweep.json").exists() || point_dirs(&dir) < 2 {
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended");
        assert!(t0.elapsed() < Duration::from_secs(60), "no second point");
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    let pid = child.id() as i32;
    // SAFETY: a signal to our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    wait_stopped(pid);
    // A process paused in the middle of a write to the results store holds it (SQLite's
    // lock): doctor then says so and names the stopped dbio. Such a moment is not the one
    // this test is about: resume it a moment and stop it again.
    let want = format!("{shown}: a sweep going on now");
    let text = loop {
        let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["doctor"]);
        if !text.contains("locked by another process") {
            break text;
        }
        assert_eq!(code, Some(1), "{text}");
        assert!(
            text.contains(&format!("pid {pid} (STOPPED"))
                && text.contains("held by another process"),
            "{text}"
        );
        assert!(t0.elapsed() < Duration::from_secs(120), "{text}");
        // SAFETY: signals to our own child.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        wait_stopped(pid);
    };
    let text = if text.contains(&want) {
        text
    } else {
        wait_doctor_says(&env, elsewhere.path(), &mut child, &want)
    };
    assert!(!text.contains("STALE"), "{text}");
    // The paused sweep is named as stopped.
    assert!(text.contains(&format!("pid {pid} (STOPPED")), "{text}");
    sigkill(&mut child);

    let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["doctor"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(&format!("{shown}: STALE: a sweep started")),
        "{text}"
    );
    assert!(text.contains("dbio clean --stale"), "{text}");
    let points: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    let finished: Vec<&PathBuf> = points
        .iter()
        .filter(|p| p.join("result.json").is_file())
        .collect();
    assert_eq!(finished.len(), 1, "{points:?}");
    let finished = finished[0].clone();
    let recorded = || {
        let runs = env.runs().json();
        runs.as_array().unwrap().len()
    };
    assert_eq!(recorded(), 1);

    // Someone's files: one in the sweep directory, one in the finished point's.
    std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
    std::fs::write(finished.join("notes.txt"), b"also mine").unwrap();
    let kept = tree(&finished);
    let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["clean", "--stale"]);
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"mine");
    assert_eq!(tree(&finished), kept, "a point holding a foreign file");
    for f in ["sweep.json", "sweep.csv", "sweep.html"] {
        assert!(!dir.join(f).exists(), "{f}: {text}");
    }
    let left: Vec<String> = tree(&dir);
    let point_name = finished.file_name().unwrap().to_str().unwrap();
    let mut want: Vec<String> = kept
        .iter()
        .map(|f| format!("{point_name}/{f}"))
        .chain([point_name.to_string(), "notes.txt".to_string()])
        .collect();
    want.sort();
    assert_eq!(left, want, "{text}");
    let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["doctor"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains(&format!(
            "LEFT ALONE: {} is not dbio's",
            dir.join("notes.txt").display()
        )),
        "{text}"
    );

    // Once someone's files are gone, the rest goes: the finished point's files and the
    // directories. Its record stays in the store.
    std::fs::remove_file(dir.join("notes.txt")).unwrap();
    std::fs::remove_file(finished.join("notes.txt")).unwrap();
    let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["clean", "--stale"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!dir.exists(), "{text}: {:?}", tree(&dir));
    assert!(env.join("runs").is_dir(), "--out itself stays");
    let (code, text) = doctor_elsewhere(&env, elsewhere.path(), &["doctor"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(!text.contains(&shown), "{text}");
    assert_eq!(recorded(), 1);
}

/// A sweep that ends is nothing for doctor to report: its directory is finished in the
/// registry, its points recorded.
#[test]
fn a_sweep_that_ends_leaves_nothing_to_report() {
    let Some(shm) = shm_dir() else { return };
    let env = Env::new();
    let target = shm.path().join("ds");
    env.sweep()
        .arg("read-iops")
        .param("sessions=1,2")
        .size("64M")
        .duration("1s")
        .warmup("0s")
        .target(&target)
        .out_dir("runs")
        .ok();
    let out = env.doctor().out();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("STALE"), "{text}");
}

/// Numbers the TOML reader cannot hold, and a table without a key it must have, are said
/// as every other error of a sizing plan: one line naming the key and its line, exit 2.
#[test]
fn sizing_plan_overflows_name_their_key_and_line() {
    let env = Env::new();
    let plan = |iops: &str, event: bool, devices: &str| {
        format!(
            "[requirements]\ncapacity = \"1T\"\n[[requirements.class]]\n{}size = \"8K\"\npeak_iops = {iops}\n[device]\ncapacity = \"100G\"\nraid = \"none\"\niops = 200\nmib_per_s = 100\n[array]\nmax_mib_per_s = 1000\nmax_devices = {devices}\n",
            if event {
                "event = \"db file sequential read\"\n"
            } else {
                ""
            }
        )
    };
    let big = "99999999999999999999999";
    let cases = [
        (
            plan("100", true, big),
            "(line 14): invalid value for 'array.max_devices': the number is out of range",
        ),
        (
            plan(&format!("-{big}"), true, "10"),
            "(line 6): invalid value for 'requirements.class.peak_iops': the number is out of range",
        ),
        (
            plan("100", false, "10"),
            "(line 3): missing 'requirements.class.event'",
        ),
    ];
    // The plan is good otherwise.
    std::fs::write(env.join("good.toml"), plan("100", true, "10")).unwrap();
    env.sizing().arg("good.toml").ok();
    for (i, (text, want)) in cases.iter().enumerate() {
        let name = format!("plan{i}.toml");
        std::fs::write(env.join(&name), text).unwrap();
        let err = assert_refused(&env.sizing().arg(&name).out(), &[]);
        assert!(
            err.starts_with(&format!("error: {name} {want}")),
            "{want}: {err}"
        );
    }
}

/// Waits until the kernel shows `pid` stopped (state T in /proc/PID/stat): a SIGSTOP is
/// delivered a moment after kill returns, and doctor reads the state as it is.
fn wait_stopped(pid: i32) {
    let t0 = Instant::now();
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rsplit(") ").next().and_then(|r| r.chars().next());
        if state == Some('T') || t0.elapsed() > Duration::from_secs(10) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
