//! Other names for a device's bytes. A block device is one view of some storage: a disk, a
//! range of a disk (a partition, a device-mapper segment), or a range of a file (a loop
//! device). Two devices that map the same storage and overlapping bytes are aliases, and
//! writing one overwrites the other: a second loop device over the image file of a mounted
//! loop device, a loop device over a mounted device, a partition of a disk that a multipath
//! or LVM device claims, the same LUN seen through a second path.
//!
//! [`conflict`] resolves the target to the storage it finally maps (down through
//! partitions, loop devices and device-mapper tables, to a disk or to a file by device and
//! inode — which survive renames and deletes), does the same for every other block device
//! of the system, and for each one that overlaps asks whether it is in use: mounted (itself
//! or as swap), held by another layer, open in another process, or claimed exclusively.
//! Everything is read under a [`SysRoot`] and asked of a [`Machine`], so the logic is tested
//! against fabricated trees.

mod host;
mod layout;

use std::collections::BTreeSet;

use crate::safety::holders::User;
use crate::storage::sysfs::SysRoot;
use crate::units::human_bytes;

pub use super::identity::Backing;
pub use host::{Host, loop_from_sysfs};
pub use layout::{Layout, Mapping, linear_segments, parse_devno};

/// The storage under a block device, compared by identity.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Store {
    /// A disk (a device with nothing below it), by device number.
    Disk(u64),
    /// A disk by its world-wide name: the same LUN seen through two paths is one store.
    Lun(String),
    /// A regular file (under a loop device), by its file system's device and inode.
    File { dev: u64, ino: u64 },
}

/// Bytes `start..end` of a store; `end` is `u64::MAX` for a loop device without a size
/// limit (it grows with its file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extent {
    pub store: Store,
    pub start: u64,
    pub end: u64,
    /// The store for people: "/dev/sda", "/work/x.img".
    pub label: String,
}

impl Extent {
    fn overlap(&self, o: &Extent) -> Option<(u64, u64)> {
        let (s, e) = (self.start.max(o.start), self.end.min(o.end));
        (self.store == o.store && s < e).then_some((s, e))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopStatus {
    pub backing: Backing,
    pub offset: u64,
    /// 0: no limit.
    pub sizelimit: u64,
    /// The backing file's name, for messages.
    pub file_name: String,
}

/// What cannot be read from sysfs alone. [`Host`] asks the running system.
pub trait Machine {
    /// What loop device `name` is attached to (None: it cannot be told).
    fn loop_status(&self, sys: &SysRoot, name: &str) -> Option<LoopStatus>;
    /// The device-mapper table of `name` as `dmsetup table` prints it (None: unknown).
    fn dm_table(&self, sys: &SysRoot, name: &str) -> Option<String>;
    /// Another process holding block device `devno` open or mapped.
    fn device_opened_by(&self, devno: u64) -> Option<User>;
    /// Another process holding the regular file `dev`/`ino` open or mapped.
    fn file_opened_by(&self, dev: u64, ino: u64) -> Option<User>;
    /// Whether opening device `name` exclusively fails (something claimed it).
    fn claimed(&self, name: &str) -> bool;
    /// The device number of a mount or swap source path, when it is a block device.
    fn block_devno(&self, path: &str) -> Option<u64>;
}

/// Why the target may not be written: another device maps the same bytes and is in use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// Kernel name of the other device.
    pub other: String,
    pub label: String,
    pub file: bool,
    pub start: u64,
    pub end: u64,
    /// "is mounted at /mnt/x", "is open in process 12 (...)", ...
    pub why: String,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let end = if self.end == u64::MAX {
            "the end of the file".to_string()
        } else {
            human_bytes(self.end)
        };
        write!(
            f,
            "it maps the same {} ({}, bytes {}..{end}) as /dev/{}, which {}",
            if self.file { "backing file" } else { "disk" },
            self.label,
            human_bytes(self.start),
            self.other,
            self.why
        )
    }
}

/// The first other block device that maps bytes of `target` and is in use; an error says
/// why that cannot be told (and the caller refuses).
pub fn conflict<M: Machine>(
    sys: &SysRoot,
    machine: &M,
    target: &str,
) -> Result<Option<Conflict>, String> {
    let layout = Layout { sys, machine };
    let mut chain = BTreeSet::new();
    let mine = layout.mapping(target, 0, &mut chain)?;
    // The target's own backing file, open in a program (a virtual machine's disk image).
    for e in &mine.extents {
        if let Store::File { dev, ino } = e.store
            && let Some(user) = machine.file_opened_by(dev, ino)
        {
            return Err(format!("its backing file {} {user}", e.label));
        }
    }
    for other in layout.all() {
        if other == target {
            continue;
        }
        let theirs = match layout.mapping(&other, 0, &mut BTreeSet::new()) {
            Ok(m) => m,
            // Gone while looking: it maps nothing any more.
            Err(_) if layout.dir(&other).is_none() => continue,
            Err(why) => {
                return Err(format!(
                    "whether /dev/{other} maps the same bytes cannot be told: {why}"
                ));
            }
        };
        let shared = mine.extents.iter().find_map(|a| {
            theirs
                .extents
                .iter()
                .find_map(|b| a.overlap(b).map(|r| (a, r)))
        });
        let Some((e, (start, end))) = shared else {
            continue;
        };
        let Some(devno) = layout.devno(&other) else {
            continue;
        };
        if let Some(why) = layout.in_use(&other, devno, &chain) {
            return Ok(Some(Conflict {
                other,
                label: e.label.clone(),
                file: matches!(e.store, Store::File { .. }),
                start,
                end,
                why,
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const MIB: u64 = 1 << 20;

    /// A fabricated sysfs/procfs tree and what the machine would say beyond it.
    struct Tree {
        dir: tempfile::TempDir,
        loops: HashMap<String, LoopStatus>,
        tables: HashMap<String, String>,
        open: Vec<u64>,
        mapped: Vec<u64>,
        claimed: Vec<String>,
    }

    impl Tree {
        fn new() -> Tree {
            let t = Tree {
                dir: tempfile::tempdir().unwrap(),
                loops: HashMap::new(),
                tables: HashMap::new(),
                open: Vec::new(),
                mapped: Vec::new(),
                claimed: Vec::new(),
            };
            for d in ["sys/class/block", "sys/dev/block", "proc/self"] {
                std::fs::create_dir_all(t.dir.path().join(d)).unwrap();
            }
            t.write("proc/self/mountinfo", "");
            t
        }

        fn write(&self, rel: &str, text: &str) {
            let p = self.dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }

        /// A device at `sys/devices/{path}` (its last part is the name), `maj:min`, bytes.
        fn dev(&self, path: &str, devno: &str, bytes: u64) -> String {
            let name = path.rsplit('/').next().unwrap().to_string();
            let dir = self.dir.path().join("sys/devices").join(path);
            std::fs::create_dir_all(dir.join("holders")).unwrap();
            std::fs::create_dir_all(dir.join("slaves")).unwrap();
            std::fs::write(dir.join("dev"), format!("{devno}\n")).unwrap();
            std::fs::write(dir.join("size"), format!("{}\n", bytes / 512)).unwrap();
            let root = self.dir.path();
            std::os::unix::fs::symlink(&dir, root.join("sys/class/block").join(&name)).unwrap();
            std::os::unix::fs::symlink(&dir, root.join("sys/dev/block").join(devno)).unwrap();
            format!("sys/devices/{path}")
        }

        fn part(&self, disk: &str, name: &str, devno: &str, start: u64, bytes: u64) {
            let d = self.dev(&format!("{disk}/{name}"), devno, bytes);
            self.write(&format!("{d}/partition"), "1");
            self.write(&format!("{d}/start"), &(start / 512).to_string());
        }

        /// `upper` is built on `lower` (slaves/ and holders/ links).
        fn stack(&self, upper: &str, lower: &str) {
            let root = self.dir.path();
            let u = root.join("sys/class/block").join(upper);
            let l = root.join("sys/class/block").join(lower);
            std::os::unix::fs::symlink(&l, u.join("slaves").join(lower)).unwrap();
            std::os::unix::fs::symlink(&u, l.join("holders").join(upper)).unwrap();
        }

        fn loop_dev(&self, n: u32, file: u64, offset: u64, sizelimit: u64) -> String {
            let d = self.dev(
                &format!("virtual/block/loop{n}"),
                &format!("7:{n}"),
                64 * MIB,
            );
            self.write(
                &format!("{d}/loop/backing_file"),
                &format!("/img/{file}.img"),
            );
            self.write(&format!("{d}/loop/offset"), &offset.to_string());
            self.write(&format!("{d}/loop/sizelimit"), &sizelimit.to_string());
            format!("loop{n}")
        }

        fn mount(&self, devno: &str, at: &str) {
            let mut m =
                std::fs::read_to_string(self.dir.path().join("proc/self/mountinfo")).unwrap();
            m.push_str(&format!(
                "40 1 {devno} / {at} rw,relatime - ext4 /dev/x rw\n"
            ));
            self.write("proc/self/mountinfo", &m);
        }

        fn check(&self, target: &str) -> Result<Option<Conflict>, String> {
            conflict(&SysRoot::at(self.dir.path()), self, target)
        }

        fn why(&self, target: &str) -> String {
            match self.check(target) {
                Ok(Some(c)) => c.to_string(),
                other => panic!("{target}: no conflict: {other:?}"),
            }
        }
    }

    impl Machine for Tree {
        fn loop_status(&self, _: &SysRoot, name: &str) -> Option<LoopStatus> {
            self.loops.get(name).cloned()
        }
        fn dm_table(&self, _: &SysRoot, name: &str) -> Option<String> {
            self.tables.get(name).cloned()
        }
        fn device_opened_by(&self, devno: u64) -> Option<User> {
            let user = |mapped| User {
                pid: 4242,
                cmd: "asm_pmon_+ASM1".to_string(),
                mapped,
            };
            if self.mapped.contains(&devno) {
                return Some(user(true));
            }
            self.open.contains(&devno).then(|| user(false))
        }
        fn file_opened_by(&self, _: u64, ino: u64) -> Option<User> {
            (ino == 99 || ino == 98).then(|| User {
                pid: 77,
                cmd: "qemu-system-x86_64".to_string(),
                mapped: ino == 98,
            })
        }
        fn claimed(&self, name: &str) -> bool {
            self.claimed.iter().any(|c| c == name)
        }
        fn block_devno(&self, _: &str) -> Option<u64> {
            None
        }
    }

    fn file_loop(t: &mut Tree, n: u32, ino: u64, offset: u64, sizelimit: u64) -> String {
        let name = t.loop_dev(n, ino, offset, sizelimit);
        t.loops.insert(
            name.clone(),
            LoopStatus {
                backing: Backing::File { dev: 2049, ino },
                offset,
                sizelimit,
                file_name: format!("/img/{ino}.img"),
            },
        );
        name
    }

    #[test]
    fn loops_over_one_file_conflict_where_their_ranges_overlap_and_the_other_is_used() {
        let mut t = Tree::new();
        file_loop(&mut t, 0, 5, MIB, 16 * MIB); // mounted: bytes 1..17 MiB
        file_loop(&mut t, 1, 5, 0, 0); // whole file
        file_loop(&mut t, 2, 5, 32 * MIB, 0); // past loop0
        file_loop(&mut t, 3, 5, 16 * MIB, 8 * MIB); // 16..24 MiB
        file_loop(&mut t, 4, 6, MIB, 16 * MIB); // another file
        assert_eq!(t.check("loop1"), Ok(None), "nothing in use yet");
        t.mount("7:0", "/mnt/x");
        assert_eq!(
            t.why("loop1"),
            "it maps the same backing file (/img/5.img, bytes 1.0 MiB..17.0 MiB) as /dev/loop0, which is mounted at /mnt/x"
        );
        assert!(t.why("loop3").contains("bytes 16.0 MiB..17.0 MiB"));
        assert_eq!(t.check("loop2"), Ok(None), "past the size limit");
        assert_eq!(t.check("loop4"), Ok(None), "another inode");
        // Without a size limit, a loop device grows with its file: conservatively, it maps
        // everything from its offset on.
        let mut t = Tree::new();
        file_loop(&mut t, 0, 5, MIB, 0);
        file_loop(&mut t, 2, 5, 32 * MIB, 0);
        t.open.push(libc::makedev(7, 0));
        assert!(
            t.why("loop2")
                .contains("(/img/5.img, bytes 32.0 MiB..the end of the file) as /dev/loop0, which is open in process 4242 (asm_pmon_+ASM1)"),
            "{}",
            t.why("loop2")
        );
        // Claimed exclusively, or held by another layer.
        let mut t = Tree::new();
        file_loop(&mut t, 0, 5, 0, 0);
        file_loop(&mut t, 1, 5, 0, 0);
        t.claimed.push("loop0".into());
        assert!(t.why("loop1").contains("is claimed by another program"));
        t.claimed.clear();
        t.dev("virtual/block/dm-0", "253:0", 64 * MIB);
        t.write("sys/devices/virtual/block/dm-0/dm/name", "vg-lv");
        t.stack("dm-0", "loop0");
        assert!(t.why("loop1").contains("which is in use by dm-0"));
        // The target's backing file is open in a program.
        let mut t = Tree::new();
        file_loop(&mut t, 0, 99, 0, 0);
        assert_eq!(
            t.check("loop0"),
            Err("its backing file /img/99.img is open in process 77 (qemu-system-x86_64)".into())
        );
        // Only mapped (the descriptor closed after mmap): the same.
        let mut t = Tree::new();
        file_loop(&mut t, 0, 98, 0, 0);
        assert_eq!(
            t.check("loop0"),
            Err("its backing file /img/98.img is mapped by process 77 (qemu-system-x86_64)".into())
        );
        // The other loop device over the file is only mapped.
        let mut t = Tree::new();
        file_loop(&mut t, 0, 5, MIB, 0);
        file_loop(&mut t, 1, 5, 0, 0);
        t.mapped.push(libc::makedev(7, 0));
        assert!(
            t.why("loop1")
                .ends_with("as /dev/loop0, which is mapped by process 4242 (asm_pmon_+ASM1)"),
            "{}",
            t.why("loop1")
        );
    }

    #[test]
    fn a_loop_over_a_device_maps_that_device_s_bytes() {
        let mut t = Tree::new();
        file_loop(&mut t, 0, 5, MIB, 0);
        let c = t.loop_dev(3, 0, 0, 0);
        t.loops.insert(
            c,
            LoopStatus {
                backing: Backing::Block(libc::makedev(7, 0)),
                offset: 4096,
                sizelimit: 0,
                file_name: "/dev/loop0".into(),
            },
        );
        assert_eq!(t.check("loop3"), Ok(None));
        t.mount("7:0", "/mnt/a");
        assert_eq!(
            t.why("loop3"),
            "it maps the same backing file (/img/5.img, bytes 1.0 MiB..the end of the file) as /dev/loop0, which is mounted at /mnt/a"
        );
        // A loop over a disk's partition: the disk's bytes.
        let mut t = Tree::new();
        t.dev("pci/block/sdb", "8:16", 100 * MIB);
        t.part("pci/block/sdb", "sdb1", "8:17", MIB, 10 * MIB);
        let c = t.loop_dev(1, 0, 0, 0);
        t.loops.insert(
            c,
            LoopStatus {
                backing: Backing::Block(libc::makedev(8, 16)),
                offset: 5 * MIB,
                sizelimit: MIB,
                file_name: "/dev/sdb".into(),
            },
        );
        t.mount("8:17", "/u01");
        assert!(
            t.why("loop1")
                .contains("(/dev/sdb, bytes 5.0 MiB..6.0 MiB) as /dev/sdb1")
        );
    }

    #[test]
    fn partitions_alias_their_disk_and_overlapping_partitions_only() {
        let mut t = Tree::new();
        t.dev("pci/block/sda", "8:0", 100 * MIB);
        t.part("pci/block/sda", "sda1", "8:1", MIB, 10 * MIB);
        t.part("pci/block/sda", "sda2", "8:2", 11 * MIB, 10 * MIB);
        // A stale, overlapping partition (a table rewritten under a running system).
        t.part("pci/block/sda", "sda3", "8:3", 20 * MIB, 10 * MIB);
        t.mount("8:1", "/");
        t.claimed.push("sda".into()); // a disk is claimed when a partition is
        assert_eq!(t.check("sda3"), Ok(None), "its neighbour is mounted: fine");
        t.mount("8:2", "/home");
        assert!(t.why("sda3").contains(
            "(/dev/sda, bytes 20.0 MiB..21.0 MiB) as /dev/sda2, which is mounted at /home"
        ));
        // The disk held by a multipath device: a partition of it belongs to that user.
        let t = Tree::new();
        t.dev("pci/block/sda", "8:0", 100 * MIB);
        t.part("pci/block/sda", "sda1", "8:1", MIB, 10 * MIB);
        t.dev("virtual/block/dm-0", "253:0", 100 * MIB);
        t.stack("dm-0", "sda");
        assert!(
            t.why("sda1")
                .contains("as /dev/sda, which is in use by dm-0")
        );
    }

    #[test]
    fn device_mapper_tables_map_ranges_of_their_devices() {
        let mut t = Tree::new();
        t.dev("pci/block/sda", "8:0", 100 * MIB);
        t.part("pci/block/sda", "sda2", "8:2", MIB, 90 * MIB);
        // Three logical volumes on the physical volume sda2.
        for (n, table) in [
            (0, "0 20480 linear 8:2 0\n"),
            (3, "0 20480 linear 8:2 20480\n"),
            (4, "0 2048 linear 8:2 40960\n2048 2048 linear 8:2 22528\n"),
        ] {
            let name = format!("dm-{n}");
            t.dev(
                &format!("virtual/block/{name}"),
                &format!("253:{n}"),
                10 * MIB,
            );
            t.write(
                &format!("sys/devices/virtual/block/{name}/dm/name"),
                "vg-lv",
            );
            t.stack(&name, "sda2");
            t.tables.insert(name, table.into());
        }
        t.mount("253:0", "/u01");
        // On sda: dm-0 is 1..11 MiB, dm-3 11..21 MiB (next to each other), dm-4 21..22 MiB
        // and 12..13 MiB (inside dm-3).
        assert_eq!(t.check("dm-3"), Ok(None), "a sibling volume elsewhere");
        t.mount("253:3", "/u02");
        assert!(
            t.why("dm-4").contains(
                "(/dev/sda, bytes 12.0 MiB..13.0 MiB) as /dev/dm-3, which is mounted at /u02"
            ),
            "{}",
            t.why("dm-4")
        );
        // Without the tables (no dmsetup), a volume maps its devices whole: refused.
        t.tables.clear();
        assert!(t.why("dm-4").contains("which is mounted at /u01"));
    }

    #[test]
    fn striped_and_raid_layers_map_their_devices_whole() {
        let t = Tree::new();
        t.dev("pci/block/sda", "8:0", 100 * MIB);
        t.dev("pci/block/sdb", "8:16", 100 * MIB);
        t.dev("virtual/block/md0", "9:0", 200 * MIB);
        t.stack("md0", "sda");
        t.stack("md0", "sdb");
        t.part("virtual/block/md0", "md0p1", "259:0", MIB, 10 * MIB);
        t.part("virtual/block/md0", "md0p2", "259:1", 150 * MIB, 10 * MIB);
        t.mount("259:0", "/data");
        // Where md0p2's bytes lie on the disks is not known: it touches both disks whole.
        assert!(
            t.why("md0p2")
                .contains("as /dev/md0p1, which is mounted at /data")
        );
    }

    #[test]
    fn one_lun_through_two_paths_is_one_disk() {
        let t = Tree::new();
        for (path, devno) in [("pci/block/sdb", "8:16"), ("pci/block/sdc", "8:32")] {
            let d = t.dev(path, devno, 100 * MIB);
            t.write(
                &format!("{d}/device/wwid"),
                "naa.600a0b800026b2820000a0a64d2b8d37",
            );
        }
        let d = t.dev("pci/block/sdd", "8:48", 100 * MIB);
        t.write(
            &format!("{d}/device/wwid"),
            "naa.600a0b800026b2820000a0a64d2b8d38",
        );
        t.mount("8:16", "/u01");
        assert!(
            t.why("sdc").contains(
                "the same disk (/dev/sdc, WWID naa.600a0b800026b2820000a0a64d2b8d37, bytes 0 B..100.0 MiB) as /dev/sdb, which is mounted at /u01"
            ),
            "{}",
            t.why("sdc")
        );
        assert_eq!(t.check("sdd"), Ok(None));
    }

    #[test]
    fn unreadable_loops_and_layer_cycles_are_refusals() {
        let mut t = Tree::new();
        file_loop(&mut t, 0, 5, 0, 0);
        t.loop_dev(1, 0, 0, 0); // attached, but what to cannot be read
        let e = t.check("loop0").unwrap_err();
        assert!(
            e.contains("/dev/loop1") && e.contains("cannot be read"),
            "{e}"
        );
        let mut t = Tree::new();
        let c = t.loop_dev(1, 0, 0, 0);
        t.loops.insert(
            c,
            LoopStatus {
                backing: Backing::Block(libc::makedev(7, 1)),
                offset: 0,
                sizelimit: 0,
                file_name: "/dev/loop1".into(),
            },
        );
        assert!(t.check("loop1").unwrap_err().contains("layers"));
        // A detached loop device maps nothing.
        let mut t = Tree::new();
        file_loop(&mut t, 0, 5, 0, 0);
        t.dev("virtual/block/loop7", "7:7", 0);
        std::fs::create_dir_all(t.dir.path().join("sys/devices/virtual/block/loop7/loop")).unwrap();
        t.open.push(libc::makedev(7, 7));
        assert_eq!(t.check("loop0"), Ok(None));
    }

    #[test]
    fn linear_tables_parse_and_others_do_not() {
        assert_eq!(
            linear_segments("0 2048 linear 8:2 100\n2048 8 linear 8:3 0\n"),
            Some(vec![
                (libc::makedev(8, 2), 51200, MIB),
                (libc::makedev(8, 3), 0, 4096)
            ])
        );
        // Out of order lines are put in order; a gap or another target type is not linear.
        assert!(linear_segments("2048 8 linear 8:3 0\n0 2048 linear 8:2 100\n").is_some());
        assert_eq!(
            linear_segments("0 2048 linear 8:2 0\n4096 8 linear 8:3 0\n"),
            None
        );
        assert_eq!(linear_segments("0 4096 striped 2 128 8:2 0 8:3 0\n"), None);
        assert_eq!(linear_segments(""), None);
        assert_eq!(linear_segments("0 x linear 8:2 0"), None);
    }
}
