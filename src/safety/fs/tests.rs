//! The tests of [`super`]: links, FIFOs and foreign files at every name dbio writes.

use super::*;
use std::os::unix::fs::symlink;

fn dir() -> (tempfile::TempDir, Dir) {
    let t = tempfile::tempdir().unwrap();
    let d = Dir::open(t.path()).unwrap();
    (t, d)
}

#[test]
fn names_must_be_one_plain_component() {
    let (_t, d) = dir();
    for bad in ["", ".", "..", "a/b", "../x", "/etc/passwd"] {
        assert!(d.write_new(bad, b"x").is_err(), "{bad:?}");
        assert!(d.create_file(bad, 0).is_err(), "{bad:?}");
    }
}

#[test]
fn whole_files_are_new_or_replaced_never_written_through_links() {
    let (t, d) = dir();
    let victim = t.path().join("victim");
    std::fs::write(&victim, b"foreign").unwrap();
    symlink(&victim, t.path().join("link")).unwrap();
    std::fs::hard_link(&victim, t.path().join("hard")).unwrap();
    for name in ["link", "hard", "victim"] {
        assert!(d.write_new(name, b"dbio").is_err(), "{name}");
    }
    assert!(d.replace("link", b"dbio").is_err());
    assert!(d.replace("hard", b"dbio").is_err());
    assert_eq!(std::fs::read(&victim).unwrap(), b"foreign");
    d.write_new("result.json", b"one").unwrap();
    d.replace("result.json", b"two").unwrap();
    assert_eq!(std::fs::read(t.path().join("result.json")).unwrap(), b"two");
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(t.path()).unwrap().flatten().collect();
    assert_eq!(names.len(), 4, "{names:?}");
}

#[test]
fn exclusive_creation_refuses_planted_names_and_fifos_are_not_waited_on() {
    let (t, d) = dir();
    let victim = t.path().join("victim");
    std::fs::write(&victim, b"foreign").unwrap();
    symlink(&victim, t.path().join("dbio-data-001.dbf")).unwrap();
    assert!(d.create_file("dbio-data-001.dbf", 0).is_err());
    let fifo = CString::new(t.path().join("fifo").as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    assert!(d.read_head("fifo", 10).is_err());
    assert!(d.open_file("fifo", libc::O_RDONLY, None).is_err());
    assert!(
        d.open_file("dbio-data-001.dbf", libc::O_RDONLY, None)
            .is_err()
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"foreign");
}

#[test]
fn files_are_written_and_removed_only_with_their_identity() {
    let (t, d) = dir();
    let f = d.create_file("mine", 0).unwrap();
    let id = entry_of(&f).unwrap().id;
    drop(f);
    assert!(d.open_file("mine", libc::O_RDWR, Some(&id)).is_ok());
    assert!(d.open_file("mine", libc::O_RDWR, None).is_err());
    // Replaced behind dbio's back: another file at the same name (made first, so it
    // cannot reuse the inode within the same clock tick).
    std::fs::write(t.path().join("other"), b"foreign").unwrap();
    std::fs::rename(t.path().join("other"), t.path().join("mine")).unwrap();
    assert!(d.open_file("mine", libc::O_RDWR, Some(&id)).is_err());
    assert!(d.remove_file("mine", &id).is_err());
    assert_eq!(std::fs::read(t.path().join("mine")).unwrap(), b"foreign");
    let g = d.create_file("ours", 0).unwrap();
    let gid = entry_of(&g).unwrap().id;
    assert!(d.remove_file("ours", &gid).unwrap());
    assert!(!d.remove_file("ours", &gid).unwrap());
}

#[test]
fn unnamed_files_appear_only_when_linked() {
    let (t, d) = dir();
    match d.create_unnamed(0) {
        Ok(mut f) => {
            f.write_all(b"data").unwrap();
            assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
            d.link(&f, "named").unwrap();
            assert!(d.link(&f, "named").is_err());
            assert_eq!(std::fs::read(t.path().join("named")).unwrap(), b"data");
        }
        Err(e) => assert_eq!(e.kind(), io::ErrorKind::Unsupported),
    }
}

fn fifo(path: &Path) {
    let c = cstr(path).unwrap();
    // SAFETY: a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn a_claimed_output_is_new_or_dbios_and_nothing_else_is_touched() {
    let (t, d) = dir();
    let ours = |head: &[u8]| head.starts_with(b"# dbio");
    assert_eq!(d.claim("new", 6, ours).unwrap(), None);
    // Not dbio's: another's content, a link to it, a hard link, a FIFO, a directory.
    std::fs::write(t.path().join("mine"), b"# mine").unwrap();
    symlink(t.path().join("mine"), t.path().join("link")).unwrap();
    std::fs::write(t.path().join("marked"), b"# dbio").unwrap();
    std::fs::hard_link(t.path().join("marked"), t.path().join("twice")).unwrap();
    fifo(&t.path().join("fifo"));
    std::fs::create_dir(t.path().join("dir")).unwrap();
    for name in ["mine", "link", "marked", "twice", "fifo", "dir"] {
        let e = d.claim(name, 6, ours).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{name}: {e}");
    }
    assert_eq!(std::fs::read(t.path().join("mine")).unwrap(), b"# mine");
    // dbio's own, with one link: claimed, replaced, then replaced again by identity.
    std::fs::remove_file(t.path().join("twice")).unwrap();
    let id = d.claim("marked", 6, ours).unwrap().expect("dbio's");
    let id = d.put("marked", b"# dbio 2", Some(&id)).unwrap();
    let id = d.put("marked", b"# dbio 3", Some(&id)).unwrap();
    assert_eq!(std::fs::read(t.path().join("marked")).unwrap(), b"# dbio 3");
    // Someone's file put at the name since: moved back, untouched, refused.
    std::fs::write(t.path().join("theirs"), b"theirs").unwrap();
    std::fs::rename(t.path().join("theirs"), t.path().join("marked")).unwrap();
    let e = d.put("marked", b"# dbio 4", Some(&id)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
    assert_eq!(std::fs::read(t.path().join("marked")).unwrap(), b"theirs");
    assert!(d.remove_file("marked", &id).is_err());
    // A name taken after a claim found it free is not taken over either.
    std::fs::write(t.path().join("new"), b"theirs").unwrap();
    assert!(d.put("new", b"# dbio", None).is_err());
    assert_eq!(std::fs::read(t.path().join("new")).unwrap(), b"theirs");
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}
