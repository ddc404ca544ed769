//! The command builder of `util.rs` says what it runs, and its checks fail when they should:
//! a refusal check passes only a refusal, naming every word it is given.

use crate::util::Env;

#[test]
fn options_are_added_in_the_order_they_are_typed() {
    let env = Env::new();
    let run = env
        .run("read-iops")
        .size("64M")
        .sessions(2)
        .duration(1)
        .sync_()
        .target("ds")
        .arg("--json");
    assert_eq!(
        run.line(),
        "dbio run read-iops --size 64M --sessions 2 --duration 1 --sync --target ds --json"
    );
    assert_eq!(
        env.quick("redo").line(),
        "dbio run redo --size 256M --sessions 2 --duration 2s --warmup 0s"
    );
}

#[test]
fn json_adds_the_flag_once_and_parses_stdout() {
    let env = Env::new();
    assert_eq!(env.runs().json(), serde_json::json!([]));
    assert_eq!(env.runs().arg("--json").json(), serde_json::json!([]));
}

#[test]
fn a_refusal_names_its_words() {
    let env = Env::new();
    let line = env
        .run("read-iops")
        .sessions(0)
        .refused_leaving_nothing(&["--sessions"]);
    assert!(String::from_utf8_lossy(&line.stderr).starts_with("error: "));
}

#[test]
#[should_panic(expected = "--no-such-word")]
fn a_refusal_without_a_word_fails_the_check() {
    Env::new()
        .run("read-iops")
        .sessions(0)
        .refused(&["--no-such-word"]);
}

#[test]
#[should_panic(expected = "left: Some(0)")]
fn a_command_that_succeeds_is_no_refusal() {
    Env::new().runs().refused(&[]);
}
