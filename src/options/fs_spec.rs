//! The values of `--param fs`: a file system dbio makes and the mount options it is mounted
//! with, checked when parsed — every word that would fail only after `mkfs` has written the
//! device is refused before anything is written (`crate::sweep::filesystem` makes and
//! mounts them).

use crate::units::Shown;

/// The file systems a sweep can make, and the package of their `mkfs`.
pub const KINDS: [(&str, &str); 5] = [
    ("ext2", "e2fsprogs"),
    ("ext3", "e2fsprogs"),
    ("ext4", "e2fsprogs"),
    ("xfs", "xfsprogs"),
    ("btrfs", "btrfs-progs"),
];

/// One value of `--param fs`: a file system and its mount options, `ext4:data=writeback`
/// (several options separated by further colons: `xfs:noatime:logbsize=256k`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub kind: &'static str,
    pub options: Vec<String>,
}

/// Parses `FS[:OPTION...]`; every option is a plain word (`data=writeback`, `noatime`).
pub fn parse(text: &str) -> std::result::Result<Spec, String> {
    let mut parts = text.split(':');
    let name = parts.next().unwrap_or_default();
    let Some(&(kind, _)) = KINDS.iter().find(|(k, _)| *k == name) else {
        return Err(format!(
            "'{}' is not a file system dbio makes; accepted: {}, each optionally followed by mount options (ext4:data=writeback)",
            name.shown(),
            KINDS.map(|k| k.0).join(", ")
        ));
    };
    let options: Vec<String> = parts.map(str::to_string).collect();
    for o in &options {
        let plain = !o.is_empty()
            && o.len() <= 64
            && o.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '=' | '.' | '-')
            });
        if !plain {
            return Err(format!(
                "'{}' is not a mount option (a word such as data=writeback or noatime)",
                o.shown()
            ));
        }
        if o == "ro" {
            return Err("ro: the data set is written into the file system; leave out ro".into());
        }
        if let Some(why) = refused_option(o) {
            return Err(format!("{o}: {why}"));
        }
    }
    if options.len() > 16 {
        return Err("more than 16 mount options".into());
    }
    // The same option twice (data=writeback:data=ordered): the kernel keeps the last, and
    // the point would be named after an option it did not run with.
    for (i, o) in options.iter().enumerate() {
        let key = |o: &str| o.split('=').next().unwrap_or_default().to_string();
        if let Some(other) = options[..i].iter().find(|p| key(p) == key(o)) {
            return Err(format!(
                "{other} and {o}: an option given twice; give each once"
            ));
        }
    }
    Ok(Spec { kind, options })
}

/// Why a word cannot be one of a sweep's mount options, or None. The words of mount(8) and
/// fstab that are no file system's option make mount(2) fail only after mkfs has written
/// the device; suid, dev and exec would undo what dbio always adds; errors=panic would let
/// an error of the test file system stop the whole machine.
fn refused_option(o: &str) -> Option<&'static str> {
    const NOT_OPTIONS: [&str; 23] = [
        "defaults",
        "auto",
        "noauto",
        "user",
        "nouser",
        "users",
        "owner",
        "group",
        "nofail",
        "_netdev",
        "remount",
        "bind",
        "rbind",
        "move",
        "loop",
        "shared",
        "private",
        "slave",
        "unbindable",
        "rshared",
        "rprivate",
        "rslave",
        "runbindable",
    ];
    if matches!(o, "suid" | "dev" | "exec") {
        return Some("dbio always mounts the file systems it makes nosuid, nodev and noexec");
    }
    // An external log or journal, a further device (a name taken relative to the working
    // directory, or a device number): the kernel would open a device dbio did not check.
    let key = o.split('=').next().unwrap_or_default();
    if o.contains('=')
        && matches!(
            key,
            "logdev" | "rtdev" | "device" | "journal_path" | "journal_dev"
        )
    {
        return Some("it names another device, which dbio has not checked and does not touch");
    }
    if o.starts_with("errors=panic") {
        return Some(
            "an error of the file system would stop the whole machine; use errors=remount-ro or errors=continue",
        );
    }
    if NOT_OPTIONS.contains(&o) || o.starts_with("x-") || o.starts_with("make-") {
        return Some("a word of mount(8) or fstab, not an option of the file system");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_systems_and_their_options_parse() {
        let s = parse("ext4:data=writeback:noatime").unwrap();
        assert_eq!(s.kind, "ext4");
        assert_eq!(s.options, ["data=writeback", "noatime"]);
        assert_eq!(parse("xfs").unwrap().options, Vec::<String>::new());
        assert!(
            parse("zfs")
                .unwrap_err()
                .contains("ext2, ext3, ext4, xfs, btrfs")
        );
        assert!(parse("ext4:").is_err(), "an empty option");
        assert!(parse("ext4:data=writeback;rm").is_err());
        assert!(parse("ext4:ro").unwrap_err().contains("ro"));
        assert!(parse("../../bin/sh").is_err());
    }

    #[test]
    fn words_that_fail_only_after_mkfs_are_refused_when_parsed() {
        for o in [
            "exec",
            "suid",
            "dev",
            "remount",
            "bind",
            "defaults",
            "x-systemd.automount",
        ] {
            let e = parse(&format!("ext4:{o}")).unwrap_err();
            assert!(e.starts_with(&format!("{o}: ")), "{o}: {e}");
        }
        assert!(parse("ext4:errors=panic").unwrap_err().contains("machine"));
        for o in [
            "xfs:logdev=vda",
            "btrfs:device=sdb",
            "ext4:journal_dev=2049",
        ] {
            assert!(parse(o).unwrap_err().contains("another device"), "{o}");
        }
        assert!(
            parse("ext4:data=writeback:data=ordered")
                .unwrap_err()
                .contains("twice")
        );
        // What dbio always sets may be said again.
        assert!(parse("xfs:noexec:nosuid:nodev:noatime").is_ok());
        assert!(parse("ext4:errors=remount-ro:data=journal").is_ok());
    }
}
