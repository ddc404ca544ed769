//! SPEC §7.1 for regular files: a write test never writes to an existing file dbio did not
//! create — not as `--target`, not with `--destructive`, not when it sits in the data set
//! directory under a data file's name.

use crate::util::Env;

#[test]
fn a_write_test_on_a_file_dbio_did_not_create_is_refused() {
    let env = Env::new();
    let data: Vec<u8> = (0..(4u32 << 20)).map(|i| (i % 251) as u8).collect();
    let path = env.join("customer.dbf");
    std::fs::write(&path, &data).unwrap();
    for test in ["write-iops", "write-mbps", "redo", "oltp", "temp"] {
        for extra in [&[][..], &["--destructive", "--yes"]] {
            let out = env
                .run(test)
                .target("customer.dbf")
                .duration("1s")
                .args(extra)
                .out();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{test} {extra:?}: {err}");
            assert!(
                err.contains("customer.dbf") && err.contains("directory"),
                "{err}"
            );
        }
    }
    assert_eq!(std::fs::read(&path).unwrap(), data, "the file is unchanged");

    // A file in the way of a data file is not overwritten either.
    std::fs::create_dir(env.join("dbio-data")).unwrap();
    let squatter = env.join("dbio-data/dbio-data-001.dbf");
    std::fs::write(&squatter, &data).unwrap();
    let out = env.prepare().size("64M").out();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("was not created by dbio"));
    assert_eq!(std::fs::read(&squatter).unwrap(), data);
}
