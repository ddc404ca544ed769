//! `dbio wizard` (issue 14), driven through a pseudo-terminal as a user would: the defaults
//! run a job and write its job file; Ctrl-C at a question leaves nothing behind; without a
//! terminal it points to `dbio run`.

use std::process::Stdio;

use rexpect::session::PtySession;

use crate::util::{Env, files_under};

/// `dbio wizard` on a pseudo-terminal in `env`'s directory, with `env`'s results store.
fn wizard(env: &Env) -> PtySession {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_dbio"));
    c.arg("wizard")
        .current_dir(env.path())
        .env("XDG_DATA_HOME", env.data_home.path())
        .env("TERM", "xterm")
        .env("COLUMNS", "160")
        .env("LINES", "50")
        .env_remove("DBIO_DB");
    rexpect::session::spawn_command(c, Some(60_000)).expect("dbio wizard on a pty")
}

/// Waits for `question`, then answers it (`""`: Enter, the default).
fn answer(p: &mut PtySession, question: &str, text: &str) {
    p.exp_string(question)
        .unwrap_or_else(|e| panic!("waiting for {question:?}: {e}"));
    // The prompt has put the terminal in raw mode by the time it is drawn.
    p.send(&format!("{text}\r")).unwrap();
    p.flush().unwrap();
}

/// The exit status of the wizard, once it ends.
fn exit_code(p: &mut PtySession) -> i32 {
    p.exp_eof().expect("the wizard ends");
    match p.process().wait().expect("its status") {
        rexpect::process::WaitStatus::Exited(_, code) => code,
        other => panic!("the wizard did not exit: {other:?}"),
    }
}

#[test]
fn the_defaults_run_a_job_and_write_its_job_file() {
    let env = Env::new();
    let mut p = wizard(&env);
    answer(&mut p, "What do you want to learn?", "");
    answer(&mut p, "Where should the data set go?", "");
    // The place is described before the user settles on it.
    p.exp_string("free").unwrap();
    answer(&mut p, "Put the data set there?", "");
    answer(&mut p, "How big should the data set be?", "");
    answer(&mut p, "Asynchronous or synchronous I/O?", "");
    answer(&mut p, "How many sessions?", "");
    // The one answer that is not the default: a short window keeps the test fast.
    answer(&mut p, "How long should it measure?", "1s");
    p.exp_string("The equivalent command:").unwrap();
    let (_, command) = p.exp_regex(r"dbio run read-iops [^\r\n]*").unwrap();
    answer(&mut p, "Save the job file as?", "");
    answer(&mut p, "Remove the data set in ./dbio-data now?", "");
    assert_eq!(exit_code(&mut p), 0);

    // The job file is the run's: same seed, size, sessions and window as result.json.
    let job = std::fs::read_to_string(env.join("dbio-read-iops.toml")).expect("the job file");
    let runs = files_under(&env.join("dbio-runs"));
    let result = runs
        .iter()
        .find(|f| f.ends_with("result.json"))
        .expect("a run directory with result.json");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.join("dbio-runs").join(result)).unwrap())
            .unwrap();
    let seed = r["config"]["seed"].as_u64().expect("a seed");
    assert!(job.contains(&format!("seed = {seed}\n")), "{job}");
    assert!(
        job.contains("size = \"256M\"\n") && job.contains("duration = \"1s\"\n"),
        "{job}"
    );
    assert!(
        job.contains("sessions = 8\n") && job.contains("event = \"db file parallel read\""),
        "{job}"
    );
    assert_eq!(r["config"]["sessions"], 8);
    assert_eq!(r["config"]["size_bytes"], 256u64 << 20);
    assert_eq!(r["measured_seconds"].as_f64().map(f64::round), Some(1.0));
    // The command says the same.
    assert!(
        command.contains("--size 256M")
            && command.contains("--duration 1s")
            && command.contains(&format!("--seed {seed}")),
        "{command}"
    );
    // Recorded in the results store like `dbio run`; the data set kept (the default).
    let listed = env.runs().json();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["test"], "read-iops");
    assert!(env.join("dbio-data").is_dir());
}

#[test]
fn sync_prints_and_runs_the_sync_test() {
    // Issue 32: "sync: one block at a time" printed and ran the async test.
    let env = Env::new();
    let mut p = wizard(&env);
    answer(&mut p, "What do you want to learn?", "");
    answer(&mut p, "Where should the data set go?", "");
    answer(&mut p, "Put the data set there?", "");
    answer(&mut p, "How big should the data set be?", "16M");
    p.exp_string("Asynchronous or synchronous I/O?").unwrap();
    p.exp_string("sync: one block at a time").unwrap();
    // Down to the second form (sync), then Enter.
    p.send("\x1b[B").unwrap();
    p.flush().unwrap();
    p.send("\r").unwrap();
    p.flush().unwrap();
    answer(&mut p, "How many sessions?", "2");
    answer(&mut p, "How long should it measure?", "1s");
    p.exp_string("The equivalent job file:").unwrap();
    p.exp_string("The equivalent command:").unwrap();
    let (_, command) = p.exp_regex(r"dbio run read-iops [^\r\n]*").unwrap();
    answer(&mut p, "Save the job file as?", "");
    answer(&mut p, "Remove the data set in ./dbio-data now?", "");
    assert_eq!(exit_code(&mut p), 0);

    assert!(command.contains(" --sync"), "{command}");
    let job = std::fs::read_to_string(env.join("dbio-read-iops.toml")).expect("the job file");
    assert!(
        job.contains("event = \"db file sequential read\"") && !job.contains("parallel read"),
        "{job}"
    );
    let runs = files_under(&env.join("dbio-runs"));
    let result = runs
        .iter()
        .find(|f| f.ends_with("result.json"))
        .expect("a run directory with result.json");
    let r: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.join("dbio-runs").join(result)).unwrap())
            .unwrap();
    assert_eq!(r["config"]["submission"], "sync", "{r}");
    let events: Vec<&str> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(events, ["db file sequential read"], "{r}");
}

#[test]
fn ctrl_c_at_a_question_leaves_nothing_behind() {
    // At the first question, and at the last one before anything is made (the job file's
    // name: everything is decided and checked by then).
    for last in ["What do you want to learn?", "Save the job file as?"] {
        let env = Env::new();
        let mut p = wizard(&env);
        if last != "What do you want to learn?" {
            answer(&mut p, "What do you want to learn?", "");
            answer(&mut p, "Where should the data set go?", "");
            answer(&mut p, "Put the data set there?", "");
            answer(&mut p, "How big should the data set be?", "");
            answer(&mut p, "Asynchronous or synchronous I/O?", "");
            answer(&mut p, "How many sessions?", "");
            answer(&mut p, "How long should it measure?", "");
        }
        p.exp_string(last).unwrap();
        p.send_control('c').unwrap();
        p.exp_string("nothing was created").unwrap();
        assert_eq!(exit_code(&mut p), 130, "Ctrl-C at {last:?}");
        assert_eq!(files_under(env.path()), Vec::<String>::new(), "{last}");
        assert_eq!(
            files_under(env.data_home.path()),
            Vec::<String>::new(),
            "{last}"
        );
    }
}

#[test]
fn without_a_terminal_it_points_to_dbio_run() {
    let env = Env::new();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dbio"))
        .arg("wizard")
        .current_dir(env.path())
        .env("XDG_DATA_HOME", env.data_home.path())
        .env_remove("DBIO_DB")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("terminal") && err.contains("`dbio run TEST`"),
        "{err}"
    );
    assert_eq!(files_under(env.path()), Vec::<String>::new());
}
