//! Input hardening (SPEC §7.4): arbitrary text into the unit parsers and arbitrary command
//! lines into the parser and validation never panic; sizes never overflow; absurd values
//! are refused with a message. Bounded to a few seconds so it runs in every `cargo test`.

use dbio::cli::{Cli, Command};
use dbio::units;
use proptest::prelude::*;

use clap::Parser;

use crate::util::Env;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Nothing written into the source tree; a failure prints its input.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text that looks like what people type, and text that does not.
fn unit_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[-+ ]?[0-9]{0,25}(\\.[0-9]{0,3})?[a-zA-Z]{0,4}",
        "[0-9]{0,22}[KMGTkmgt]?(\\.\\.[0-9]{0,22}[KMGT]?)?",
        "[0-9]{0,22}(ms|s|m|h|min)?(\\.\\.[0-9]{0,22}(ms|s|m|h)?)?",
    ]
}

proptest! {
    #![proptest_config(config(3000))]

    #[test]
    fn unit_parsers_never_panic(s in unit_text()) {
        if let Ok(v) = units::parse_size(&s) {
            // Whatever is accepted round-trips through its label.
            prop_assert_eq!(units::parse_size(&units::size_label(v)), Ok(v));
        }
        if let Ok(d) = units::parse_duration(&s) {
            prop_assert!(d.as_secs() <= 366 * 24 * 3600);
        }
        if let Ok(r) = units::parse_size_range(&s) {
            prop_assert!(r.lo <= r.hi);
        }
        if let Ok(r) = units::parse_duration_range(&s) {
            prop_assert!(r.lo <= r.hi);
        }
    }
}

/// Options and values, sensible and not, to build command lines from.
fn arg() -> impl Strategy<Value = String> {
    let opts = prop::sample::select(vec![
        "--target",
        "--size",
        "--block-size",
        "--files",
        "--fresh",
        "--seed",
        "--fill",
        "--sessions",
        "--duration",
        "--warmup",
        "--sync",
        "--async",
        "--io-mode",
        "--engine",
        "--batch",
        "--keep-inflight",
        "--depth",
        "--mbrc",
        "--out",
        "--ash-hz",
        "--redo-per-commit",
        "--think",
        "--redo-block",
        "--redo-files",
        "--redo-file-size",
        "--redo-sync",
        "--lgwr-cpu",
        "--noise-cpu",
        "--writers",
        "--work-unit",
        "--update-pct",
        "--hotspot-pct",
        "--hotspot-size",
        "--async-reads",
        "--cache-size",
        "--cold-cache",
        "--spill-size",
        "--temp-io",
        "--json",
        "--destructive",
        "--yes",
        "--continue-on-error",
        "--buffered",
        "--help-not",
        "-x",
        "--",
    ]);
    let values = prop::sample::select(vec![
        "0",
        "1",
        "7",
        "512",
        "4K",
        "8K",
        "1M",
        "64M",
        "1G",
        "99999999999T",
        "18446744073709551615",
        "18446744073709551616",
        "-1",
        "1s",
        "0s",
        "500ms",
        "10m",
        "1h",
        "9999999999h",
        "512..8K",
        "8K..512",
        "1ms..5ms",
        "..",
        "random",
        "zero",
        "compress=2",
        "compress=0",
        "dedupe=4",
        "dedupe=99999",
        "setall",
        "none",
        "uring",
        "aio",
        "sync",
        "fdatasync",
        "",
        " ",
        "é",
        "1e9",
        "0x10",
        "4294967296",
        "65536",
        "65537",
        "dsync",
        "/tmp/dbio-fuzz-never-used",
    ]);
    prop_oneof![
        opts.prop_map(String::from),
        values.prop_map(String::from),
        any::<String>(),
    ]
}

fn argv() -> impl Strategy<Value = Vec<String>> {
    let head = prop::sample::select(vec![
        vec!["dbio", "run", "read-iops"],
        vec!["dbio", "run", "write-mbps"],
        vec!["dbio", "run", "redo"],
        vec!["dbio", "run", "oltp"],
        vec!["dbio", "run", "temp"],
        vec!["dbio", "prepare"],
        vec!["dbio", "clean"],
        vec!["dbio"],
    ]);
    (head, prop::collection::vec(arg(), 0..8))
        .prop_map(|(h, rest)| h.into_iter().map(String::from).chain(rest).collect())
}

proptest! {
    #![proptest_config(config(1500))]

    #[test]
    fn command_lines_never_panic(args in argv()) {
        let Ok(cli) = Cli::try_parse_from(&args) else {
            return Ok(());
        };
        match cli.command {
            Command::Run(a) => {
                if let Ok(cfg) = dbio::options::check::run_config(&a.0) {
                    prop_assert!(cfg.sessions >= 1 && cfg.sessions <= 65536);
                    prop_assert!(cfg.dataset.size >= cfg.dataset.block_size);
                    prop_assert!(cfg.multiblock_bytes() <= cfg.dataset.file_size());
                }
            }
            Command::Prepare(a) => {
                let _ = dbio::options::check::data_set(&a.dataset.0);
            }
            _ => {}
        }
    }
}

fn assert_refused(args: &[&str], must_mention: &[&str]) {
    let env = Env::new();
    let out = env.output(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    for m in must_mention {
        assert!(err.contains(m), "{args:?}: {err:?} should mention {m:?}");
    }
    assert!(!err.contains("panicked"), "{args:?}: {err}");
}

#[test]
fn absurd_values_are_refused_with_a_message() {
    assert_refused(
        &["run", "read-iops", "--size", "99999999999T"],
        &["--size", "too large"],
    );
    assert_refused(
        &["prepare", "--size", "18446744073709551616"],
        &["--size", "too large"],
    );
    assert_refused(
        &["run", "read-iops", "--sessions", "65537"],
        &["--sessions", "65536"],
    );
    assert_refused(
        &["run", "read-iops", "--duration", "9999999999h"],
        &["--duration"],
    );
    assert_refused(&["prepare", "--size", "1000T"], &["not fit", "free"]);
    assert_refused(
        &["run", "read-iops", "--fill", "compress=0"],
        &["--fill", "compress=RATIO"],
    );
    assert_refused(&["run", "read-iops", "--yes"], &["--destructive"]);
}
