//! What dbio reads that someone else wrote — job files, result files, names on disk — is
//! untrusted: a job file starts no program unless the command line allows it, a crafted
//! result.json is refused in bounded time and memory, and whatever dbio prints shows control
//! characters escaped.

use std::process::Output;

use crate::util::Env;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 2 with exactly one line, `error: ...`, holding every word of `words`.
fn assert_refused(out: &Output, words: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    for w in words {
        assert!(err.contains(w), "no {w:?} in {err}");
    }
}

/// A job file of one class on a small data set in `env`, with `hosts` as its [hosts] table.
fn job_with_hosts(env: &Env, hosts: &str) -> String {
    let job = env.join("shared.toml");
    std::fs::write(
        &job,
        format!(
            "[dataset]\ntarget = \"{}\"\nsize = \"8M\"\n\n[run]\nduration = \"1s\"\nwarmup = \"0s\"\n\n[hosts]\n{hosts}\n[[class]]\nevent = \"db file sequential read\"\nsessions = 1\n",
            env.join("data").display()
        ),
    )
    .unwrap();
    job.display().to_string()
}

#[test]
fn a_job_files_ssh_command_runs_only_when_the_command_line_allows_it() {
    let env = Env::new();
    let marker = env.join("PWNED");
    let ssh = format!("sh -c 'echo ran >> {}' stand-in", marker.display());
    let job = job_with_hosts(&env, &format!("names = \"127.0.0.1\"\nssh = \"{ssh}\"\n"));
    let out = env.output(&["run", "--job", &job]);
    assert_refused(
        &out,
        &["shared.toml (line 10)", "hosts.names", "--yes", "--hosts"],
    );
    assert!(!marker.exists(), "the job file's command ran");
    assert!(
        !env.join("data").exists(),
        "nothing is created before a refusal"
    );
    // --hosts typed allows reaching the hosts, not the job file's own ssh command.
    let out = env.output(&["run", "--job", &job, "--hosts", "127.0.0.1"]);
    assert_refused(&out, &["(line 11)", "hosts.ssh", &ssh, "--ssh", "--yes"]);
    assert!(!marker.exists(), "the job file's command ran");

    // With --yes it runs, and its command line is printed before it does.
    let out = env.output(&["run", "--job", &job, "--yes"]);
    let err = stderr(&out);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    assert_eq!(ran, "ran\n", "{err}");
    let shown = err
        .lines()
        .find(|l| l.starts_with("dbio: running "))
        .unwrap_or_else(|| panic!("the command is not shown: {err}"));
    assert!(
        shown.contains("sh -c") && shown.contains(" 127.0.0.1 -- "),
        "{shown}"
    );
    // The stand-in is no agent: the run fails, but not as a refusal of the job file.
    assert!(!out.status.success(), "{err}");
    assert!(!err.contains("starts no program"), "{err}");
}

#[test]
fn a_job_files_push_and_remote_binary_need_the_same_permission() {
    let env = Env::new();
    let job = job_with_hosts(&env, "names = \"127.0.0.1\"\npush = true\n");
    let out = env.output(&["run", "--job", &job, "--hosts", "127.0.0.1"]);
    assert_refused(&out, &["hosts.push", "--push", "--yes"]);
    let job = job_with_hosts(&env, "names = \"127.0.0.1\"\nremote_dbio = \"/tmp/x\"\n");
    let out = env.output(&["run", "--job", &job, "--hosts", "127.0.0.1"]);
    assert_refused(&out, &["hosts.remote_dbio", "/tmp/x", "--remote-dbio"]);
    // The same option typed replaces the job file's value, which then runs nothing. A
    // --yes still only goes with --destructive or --job.
    let out = env.output(&["run", "read-iops", "--yes"]);
    assert_refused(&out, &["--yes", "--destructive"]);
}
