//! `dbio sweep --param fs=ext4,xfs,ext4:data=writeback --device DEV --destructive`: the
//! file systems a database might live on, compared in one command.
//!
//! Before anything is written: root, the `mkfs.*` tool of every file system (the missing
//! ones named), the checks of every device dbio overwrites (not mounted, not held, not partitioned, not
//! swap, not open elsewhere, no alias in use, no signature; `--destructive`), room for the
//! data set, and the confirmation. Then for each point [`FileSystems::make`] makes the file
//! system with a UUID dbio chose and mounts it on a private mount point of its own (a
//! directory bind-mounted on itself with private propagation, so the mount is seen by no
//! other mount namespace), and [`FileSystems::unmount`] takes it off after the point.
//!
//! The device stays open (not exclusively) for the whole sweep. Before every mkfs (and
//! after it, and after the mount) and before the final erase, the device must still be that
//! device as it was claimed ([`crate::safety::identity`]: for a loop device the same backing
//! file, offset, size limit and flags), free, and hold nothing but file systems dbio made
//! (their UUIDs): a device someone took or changed in between is left alone. When the value is dropped (at the end, on an error, after
//! Ctrl-C) it unmounts what is mounted and erases the signatures of the file systems it
//! made (zeroing where they lie, the device held exclusively from the last check on): the
//! device is left as it was found, blank, apart from its content.

use std::ffi::CString;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::safety::blkid;
use crate::safety::device::{self, Consent};
use crate::safety::exec::Program;
use crate::safety::identity::{Held, Kind};
use crate::safety::signatures;
use crate::units::{Shown, human_bytes};

use crate::options::fs_spec::KINDS;
pub use crate::options::fs_spec::{Spec, parse};

/// What is zeroed at the start of the device at the end: all that dbio's own signature
/// checks read there ([`signatures::SCAN`] and the superblocks at its last start), rounded up.
const HEAD_ZEROED: u64 = signatures::SCAN + (1 << 20);
/// What is zeroed at the end (md 0.90 and 1.0 keep their superblocks in it).
const TAIL_ZEROED: u64 = 1 << 20;

/// After wipefs, how to finish erasing by hand what a sweep left on `dev`: zero as far as
/// dbio's own checks look, which is deeper than wipefs.
pub fn zero_by_hand(dev: &str) -> String {
    let mib = HEAD_ZEROED >> 20;
    format!(
        "zero its first {mib} MiB, `dd if=/dev/zero of={dev} bs=1M count={mib}`: dbio's own checks look deeper than wipefs, at backup superblocks"
    )
}
/// ioctl: whether a block device is read-only (`_IO(0x12, 94)`).
const BLKROGET: libc::Ioctl = 0x125e;

/// `mkfs.KIND`, where the system keeps it (/usr/sbin, /usr/bin, /sbin, /bin), else on PATH,
/// checked ([`Program`]): a program another user could have written does not get to format
/// the device; refused, not passed over.
fn mkfs_tool(kind: &str) -> Result<Option<Program>> {
    Program::find(&format!("mkfs.{kind}")).map_err(|e| Error::usage(format!("--param fs: {e}")))
}

/// The `mkfs` tools of `specs` that `find` does not find, each with its package.
fn missing_tools<T>(specs: &[Spec], find: impl Fn(&str) -> Option<T>) -> Vec<String> {
    let mut missing: Vec<String> = Vec::new();
    for s in specs {
        let (_, package) = KINDS.iter().find(|(k, _)| *k == s.kind).expect("parsed");
        let tool = format!("mkfs.{} (package {package})", s.kind);
        if find(s.kind).is_none() && !missing.contains(&tool) {
            missing.push(tool);
        }
    }
    missing
}

/// The arguments of `mkfs.KIND` that make it on a device holding dbio's previous file
/// system, with the UUID `uuid`, quietly. ext3/ext4 write their inode tables and journal at
/// once: left lazy, a kernel thread writes them during the first minutes of the mount, in
/// the middle of the measurement.
fn mkfs_args(kind: &str, uuid: &str) -> Vec<String> {
    let words: Vec<&str> = match kind {
        "ext2" => vec!["-q", "-F", "-U", uuid, "-E", "lazy_itable_init=0"],
        "ext3" | "ext4" => vec![
            "-q",
            "-F",
            "-U",
            uuid,
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
        ],
        "btrfs" => vec!["-q", "-f", "-U", uuid],
        _ => {
            return vec![
                "-q".into(),
                "-f".into(),
                "-m".into(),
                format!("uuid={uuid}"),
            ];
        }
    };
    words.into_iter().map(str::to_string).collect()
}

/// A random (version 4) UUID: the mark of a file system dbio made.
fn new_uuid() -> String {
    let mut b: [u8; 16] = fastrand::u128(..).to_be_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The device a file system sweep makes its file systems on, and what it has done to it.
pub struct FileSystems {
    device: PathBuf,
    /// The device as claimed, held open (not exclusively: mkfs and mount need it so) for
    /// the whole sweep, and proved to be the same before each step that writes it.
    held: Arc<Held>,
    /// The private mount point (made at the first point).
    place: PathBuf,
    made_place: bool,
    /// The mount point bind-mounted on itself with private propagation.
    bound: bool,
    /// A file system is mounted on the mount point.
    mounted: bool,
    /// Every file system dbio made on the device: (type, UUID).
    made: Vec<(String, String)>,
    /// [`FileSystems::close`] did what dropping does.
    closed: bool,
}

impl FileSystems {
    /// Where the file systems will be mounted: a name nobody has yet under /run (or the
    /// temporary directory), made at the first point.
    pub fn place() -> PathBuf {
        let run = Path::new("/run");
        let parent = match run.metadata() {
            Ok(m) if m.is_dir() && m.uid() == 0 && m.mode() & 0o002 == 0 => run.to_path_buf(),
            _ => std::env::temp_dir(),
        };
        parent.join(format!(
            "dbio-sweep-fs-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ))
    }

    /// Checks everything before the first point and asks: root, the tools, the device, room
    /// for `need` bytes of data set. Nothing is written here.
    pub fn prepare(
        device: &Path,
        place: PathBuf,
        specs: &[Spec],
        need: u64,
        consent: Consent,
    ) -> Result<FileSystems> {
        if crate::safety::fs::effective_uid() != 0 {
            return Err(Error::usage(
                "--param fs makes and mounts file systems, which only root may: run dbio as root",
            ));
        }
        for s in specs {
            mkfs_tool(s.kind)?;
        }
        let missing = missing_tools(specs, |k| mkfs_tool(k).ok().flatten());
        if !missing.is_empty() {
            return Err(Error::usage(format!(
                "--param fs: {} not installed; install {} or leave those file systems out",
                missing.join(" and "),
                if missing.len() == 1 { "it" } else { "them" }
            )));
        }
        // mkfs is given a name, later: it must keep naming this device. Its
        // links resolved once, it lies in a directory only root may change (/dev).
        let given = device;
        let device = &std::fs::canonicalize(given).map_err(|e| match e.kind() {
            // A name that names nothing is a typing error, not an I/O failure.
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => {
                Error::usage(format!(
                    "--device {}: no such device (check the path; a loop device: losetup --find --show IMAGE)",
                    given.shown()
                ))
            }
            _ => Error::io("cannot access --device", given, &e),
        })?;
        let kind = std::fs::metadata(device)
            .map_err(|e| Error::io("cannot access --device", given, &e))?
            .file_type();
        if !std::os::unix::fs::FileTypeExt::is_block_device(&kind) {
            return Err(Error::usage(format!(
                "--device {}: not a block device ({}); a file system sweep needs a blank block device (for an image file, attach it first: losetup --find --show FILE)",
                given.shown(),
                if kind.is_file() {
                    "a regular file"
                } else if kind.is_dir() {
                    "a directory"
                } else {
                    "a character device or other special file"
                }
            )));
        }
        let parent = device.parent().unwrap_or(Path::new("/"));
        let md = parent
            .metadata()
            .map_err(|e| Error::io("cannot stat", parent, &e))?;
        if md.uid() != 0 || md.mode() & 0o022 != 0 {
            return Err(Error::usage(format!(
                "--device {}: it lies in {}, which users other than root may change, so the name mkfs is given could name another device by then; give the device's own name under /dev",
                given.shown(),
                parent.shown()
            )));
        }
        const NAME: &str = "dbio sweep --param fs";
        let claim = device::claim(device, NAME, consent)?;
        let info = claim.info.clone();
        // A device the kernel keeps read-only (losetup -r, a write-protected disk): every
        // mkfs would fail.
        let mut ro: libc::c_int = 0;
        // SAFETY: BLKROGET writes one int through a valid pointer; the descriptor is open.
        let rc = unsafe {
            libc::ioctl(
                std::os::fd::AsRawFd::as_raw_fd(&claim.file),
                BLKROGET,
                &mut ro,
            )
        };
        if rc == 0 && ro != 0 {
            return Err(Error::usage(format!(
                "--device {}: the kernel keeps the device read-only (a loop device attached with losetup -r, blockdev --setro, a write-protected disk), and a file system sweep writes to it",
                given.shown()
            )));
        }
        if info.size == 0 {
            return Err(Error::usage(format!(
                "--device {}: the device holds 0 bytes (a loop device with no file attached, or a drive with no medium)",
                given.shown()
            )));
        }
        if let Some(s) = specs.iter().find(|s| info.size < min_size(s.kind)) {
            return Err(Error::usage(format!(
                "--device {}: it holds {}, and mkfs.{} makes no file system under {}; leave {} out or give a larger device",
                given.shown(),
                human_bytes(info.size),
                s.kind,
                human_bytes(min_size(s.kind)),
                s.kind
            )));
        }
        // The file system's own metadata (journal, log, inode tables) and free space take
        // their share; the run itself checks the exact free space after each mount.
        let room = info.size / 10 * 8;
        if need > room {
            return Err(Error::usage(format!(
                "--device {}: the data set (with its redo logs and temp spills) needs {} and the device holds {}; a file system on it leaves room for about {}: use a smaller --size (or fewer --files), or a larger device",
                device.shown(),
                human_bytes(need),
                human_bytes(info.size),
                human_bytes(room)
            )));
        }
        // Said before asking (a refusal for want of a terminal is one line).
        if consent.yes || std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            stderr_line!(
                "dbio: each point makes its file system on {} (mkfs), mounts it on a private mount point ({}), runs and unmounts it; at the end the device is left as it was found, blank (its file system signatures erased, nothing mounted), apart from its content",
                device.shown(),
                place.shown()
            );
        }
        device::confirm(&info, NAME, consent.yes)?;
        // mkfs and mount need the device exclusively: let go of that (the device stays
        // open, `held`, and is proved to be the same before each write).
        let held = claim.held.clone();
        drop(claim);
        Ok(FileSystems {
            device: device.to_path_buf(),
            held,
            place,
            made_place: false,
            bound: false,
            mounted: false,
            made: Vec::new(),
            closed: false,
        })
    }

    /// The directory the data set of every point is made in.
    pub fn data_dir(place: &Path) -> PathBuf {
        place.join("dbio-data")
    }

    /// Makes `spec` on the device and mounts it; returns the mount options the kernel
    /// reports for it (`rw,nosuid,nodev,noexec,relatime,data=writeback`).
    pub fn make(&mut self, spec: &Spec) -> Result<String> {
        self.let_go_of_place()?;
        self.still_ours()?;
        let tool = mkfs_tool(spec.kind)?
            .ok_or_else(|| Error::other(format!("mkfs.{} is no longer installed", spec.kind)))?;
        let uuid = new_uuid();
        // Recorded before it runs: a mkfs stopped half-way leaves (at most) this signature.
        self.made.push((spec.kind.to_string(), uuid.clone()));
        stderr_line!(
            "dbio: mkfs.{} on {} (UUID {uuid})",
            spec.kind,
            self.device.shown()
        );
        let out = tool
            .command()
            .args(mkfs_args(spec.kind, &uuid))
            .arg(&self.device)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Error::other(format!("cannot run {}: {e}", tool.path().shown())))?;
        if !out.status.success() {
            // The first line says why (mkfs.xfs follows it with its whole usage).
            let why = String::from_utf8_lossy(&out.stderr)
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or_default()
                .trim()
                .to_string();
            // Busy after dbio unmounted its file system: a mount namespace made while it
            // was mounted (a service started with a private /tmp, `unshare -m`) keeps it.
            let holders = crate::sys::mounts_elsewhere(self.held.identity().rdev);
            let held = if why.contains("busy") && !holders.is_empty() {
                format!(
                    "; the previous file system is still mounted in another mount namespace, that of {} (made while it was mounted here): end it, or sweep when no such process starts",
                    holders.join(", ")
                )
            } else {
                String::new()
            };
            return Err(Error::other(format!(
                "mkfs.{} {} failed ({}): {}{held}",
                spec.kind,
                self.device.shown(),
                out.status,
                why.shown()
            )));
        }
        // What mkfs wrote went to the device claimed (a change now still stops the sweep).
        self.held.prove().map_err(Error::other)?;
        let found = self.signatures()?;
        if found.len() != 1
            || found[0].kind != spec.kind
            || found[0].uuid.as_deref() != Some(uuid.as_str())
        {
            return Err(Error::other(format!(
                "after mkfs.{} the device {} holds {}, not the {} file system with UUID {uuid}; dbio stops",
                spec.kind,
                self.device.shown(),
                describe(&found),
                spec.kind
            )));
        }
        self.mount(spec)?;
        // Mounted, the device is held: nobody can make a file system on it any more. But
        // one made between the check above and the mount would be what is mounted now, and
        // the data set would be written into it: checked once more, on what is mounted.
        let mounted = self.signatures()?;
        if mounted.len() != 1 || mounted[0].uuid.as_deref() != Some(uuid.as_str()) {
            self.unmount()?;
            return Err(Error::other(format!(
                "--device {}: what was mounted holds {}, not the {} file system with UUID {uuid} dbio made (someone else made one in between); dbio writes nothing more to it",
                self.device.shown(),
                describe(&mounted),
                spec.kind
            )));
        }
        // The point's data set is written into what is mounted: the device claimed.
        if let Err(changed) = self.held.prove() {
            self.unmount()?;
            return Err(Error::other(changed));
        }
        Ok(self.mount_options())
    }

    /// The signatures on the device now.
    fn signatures(&self) -> Result<Vec<blkid::Signature>> {
        let file = std::fs::File::open(&self.device)
            .map_err(|e| Error::io("cannot open", &self.device, &e))?;
        self.signatures_of(&file)
    }

    /// The signatures on the device, read through `file` (the device open).
    fn signatures_of(&self, file: &std::fs::File) -> Result<Vec<blkid::Signature>> {
        blkid::identify(file, &self.device)
            .map(|(found, _)| found)
            .map_err(|why| Error::other(format!("{}: {why}", self.device.shown())))
    }

    /// Before a write: the same device, nothing else holds it, and nothing on it that dbio
    /// did not make.
    fn still_ours(&self) -> Result<()> {
        self.still_free()?;
        self.foreign(&self.signatures()?)
    }

    /// The same device as claimed, as it was (a failure, exit 1, when not), and nothing else
    /// holds it.
    fn still_free(&self) -> Result<()> {
        self.held.prove().map_err(Error::other)?;
        device::still_free(&self.device, self.held.identity().rdev).map_err(|why| {
            Error::other(format!(
                "--device {}: {why}; dbio writes nothing more to it",
                self.device.shown()
            ))
        })
    }

    /// Refuses signatures among `found` that dbio did not make.
    fn foreign(&self, found: &[blkid::Signature]) -> Result<()> {
        let foreign: Vec<blkid::Signature> = found
            .iter()
            .filter(|s| {
                !self
                    .made
                    .iter()
                    .any(|(k, u)| *k == s.kind && s.uuid.as_deref() == Some(u.as_str()))
            })
            .cloned()
            .collect();
        if !foreign.is_empty() {
            return Err(Error::other(format!(
                "--device {}: it now holds {}, which dbio did not make (someone else has used the device since); dbio writes nothing more to it",
                self.device.shown(),
                describe(&foreign)
            )));
        }
        Ok(())
    }

    /// Mounts the file system just made on the private mount point.
    fn mount(&mut self, spec: &Spec) -> Result<()> {
        let place = cstring(&self.place)?;
        if !self.made_place {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&self.place)
                .map_err(|e| Error::io("cannot make the mount point", &self.place, &e))?;
            self.made_place = true;
        }
        if !self.bound {
            // SAFETY: valid C strings; a bind of the directory on itself, then its
            // propagation made private, so what is mounted on it is seen nowhere else.
            sys_mount(
                Some(&place),
                &place,
                None,
                libc::MS_BIND,
                None,
                "bind the mount point on itself",
            )?;
            self.bound = true;
            crate::safety::cleanup::register_mount(self.place.clone());
            sys_mount(
                None,
                &place,
                None,
                libc::MS_PRIVATE,
                None,
                "make the mount point private",
            )?;
        }
        let (flags, data) = mount_flags(&spec.options);
        let kind = CString::new(spec.kind).expect("a known name");
        let data = CString::new(data).map_err(|_| Error::usage("a mount option with NUL"))?;
        sys_mount(
            Some(&cstring(&self.device)?),
            &place,
            Some(&kind),
            flags,
            Some(&data),
            &format!(
                "mount {} ({}) from {}",
                spec.kind,
                if spec.options.is_empty() {
                    "default options".to_string()
                } else {
                    spec.options.join(",")
                },
                self.device.shown()
            ),
        )?;
        self.mounted = true;
        Ok(())
    }

    /// The options the kernel reports for the mounted file system (mount and super options).
    fn mount_options(&self) -> String {
        let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let point = self.place.display().to_string();
        crate::storage::sysfs::parse_mountinfo(&text)
            .into_iter()
            .rfind(|m| m.mount_point == point)
            .map_or_else(String::new, |m| {
                let mut seen: Vec<&str> = Vec::new();
                for o in m.options.split(',').chain(m.super_options.split(',')) {
                    if !o.is_empty() && !seen.contains(&o) {
                        seen.push(o);
                    }
                }
                format!("{} {}", m.fs_type, seen.join(","))
            })
    }

    /// Unmounts the file system of the point (waiting up to 5 s for it to be let go).
    pub fn unmount(&mut self) -> Result<()> {
        if !self.mounted {
            return Ok(());
        }
        umount(&self.place)?;
        self.mounted = false;
        Ok(())
    }

    /// Unmounts the point's file system and takes the mount point away (the next point makes
    /// it again). Removing the directory also lets go of the copies of the file system that
    /// mount namespaces made while it was mounted hold (a service started with a private
    /// /tmp, `unshare -m`): the kernel detaches mounts on a removed directory in every
    /// namespace. Only unmounted, such a copy keeps the file system alive and the device
    /// busy for the next point's mkfs.
    fn let_go_of_place(&mut self) -> Result<()> {
        self.unmount()?;
        if self.bound {
            umount(&self.place)?;
            self.bound = false;
            crate::safety::cleanup::forget_mount(&self.place);
        }
        if self.made_place {
            std::fs::remove_dir(&self.place)
                .map_err(|e| Error::io("cannot remove the mount point", &self.place, &e))?;
            self.made_place = false;
        }
        Ok(())
    }

    /// Unmounts, takes the mount point away and erases the file systems dbio made: what
    /// dropping does, with what happened as the message.
    fn finish(&mut self) -> std::result::Result<String, Left> {
        self.let_go_of_place()
            .map_err(|e| self.left(e.to_string()))?;
        if self.made.is_empty() {
            return Ok(format!("nothing was written to {}", self.device.shown()));
        }
        // A device that is no longer the one claimed is not erased: what dbio made lies
        // where the claimed device's bytes are, and the device shows other bytes now.
        if let Err(changed) = self.held.prove() {
            return Err(self.changed(&changed.to_string()));
        }
        // Held exclusively from the last check to the end of the erase: nobody can make or
        // mount a file system on the device in between (an erase by a program started later,
        // wipefs, would leave that gap, and erase whatever was made in it). What is opened
        // is proved to be the device claimed, as it was.
        self.still_free().map_err(|e| self.left(e.to_string()))?;
        let file = self
            .held
            .open_for_writing(|path| {
                use std::os::unix::fs::OpenOptionsExt;
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(libc::O_EXCL)
                    .open(path)
                    .map_err(|e| {
                        Error::other(format!(
                            "cannot open {} exclusively to erase it ({e}): someone holds it now; dbio writes nothing more to it",
                            path.shown()
                        ))
                    })
            })
            .map_err(|e| self.left(e.to_string()))?;
        let found = self
            .signatures_of(&file)
            .map_err(|e| self.left(e.to_string()))?;
        self.foreign(&found).map_err(|e| self.left(e.to_string()))?;
        // Even with no signature left (a mkfs stopped before its superblock), what it did
        // write at the ends goes.
        self.zero_ends(&file).map_err(|e| self.left(e))?;
        let left = self
            .signatures_of(&file)
            .map_err(|e| self.left(e.to_string()))?;
        if !left.is_empty() {
            return Err(self.left(format!(
                "{} still holds {}",
                self.device.shown(),
                describe(&left)
            )));
        }
        Ok(format!(
            "{} is blank again (the signatures of the file systems the sweep made are erased: its first {} and last {} are zeroed; nothing is mounted)",
            self.device.shown(),
            human_bytes(HEAD_ZEROED),
            human_bytes(TAIL_ZEROED)
        ))
    }

    /// Why the device is not as it was found, with what to check.
    fn left(&self, why: String) -> Left {
        Left {
            message: format!(
                "the file system sweep could not leave {} as it found it: {why}; check {}`wipefs {}`",
                self.device.shown(),
                if self.place.exists() {
                    format!("`findmnt {}` and ", self.place.shown())
                } else {
                    String::new()
                },
                self.device.shown()
            ),
            changed: false,
        }
    }

    /// The device changed: nothing was erased, and what the sweep made lies where the
    /// claimed device's bytes are — said with how to erase it there.
    fn changed(&self, changed: &str) -> Left {
        let made: Vec<String> = self
            .made
            .iter()
            .map(|(kind, uuid)| format!("{kind} with UUID {uuid}"))
            .collect();
        let id = self.held.identity();
        let attach = match &id.kind {
            Kind::Loop(Some(b)) => format!(
                " (attach it again: `losetup --find --show --offset {}{} {}`)",
                b.offset,
                if b.sizelimit == 0 {
                    String::new()
                } else {
                    format!(" --sizelimit {}", b.sizelimit)
                },
                crate::units::shell_word(&b.file_name)
            ),
            _ => String::new(),
        };
        Left {
            message: format!(
                "the file system sweep did not erase {}: {changed}. The file system(s) it made ({}) are on what the device was when dbio claimed it, {}{attach}: on the device that shows those bytes, run `wipefs -a` and {}",
                self.device.shown(),
                made.join(", "),
                id.storage(),
                zero_by_hand("DEVICE")
            ),
            changed: true,
        }
    }

    /// Ends the sweep's use of the device (as dropping does); an error (exit 1) when the
    /// device is no longer the one claimed (and was left alone).
    pub fn close(mut self) -> Result<()> {
        let done = self.finish();
        self.closed = true;
        match done {
            Ok(done) => stderr_line!("dbio: {done}"),
            Err(left) if left.changed => return Err(Error::other(left.message)),
            Err(left) => stderr_line!("dbio: warning: {}", left.message),
        }
        Ok(())
    }

    /// Zeroes the places where dbio and libblkid look for signatures (the superblocks of
    /// every file system a sweep makes, the first [`signatures::SCAN`] bytes and more, the
    /// end): file system metadata left there (an inode table, a journal block that looks
    /// like a superblock) would make the device look used. `file` is the device, opened
    /// exclusively: nobody else has it while this writes.
    fn zero_ends(&self, file: &std::fs::File) -> std::result::Result<(), String> {
        use std::os::unix::fs::FileExt;
        let size = crate::sys::block_device_size(file).map_err(|e| e.to_string())?;
        let zeros = vec![0u8; 1 << 20];
        let head = HEAD_ZEROED.min(size);
        let tail = size.saturating_sub(TAIL_ZEROED).max(head);
        for (from, to) in [(0, head), (tail, size)] {
            let mut at = from;
            while at < to {
                let n = (to - at).min(zeros.len() as u64) as usize;
                file.write_all_at(&zeros[..n], at)
                    .map_err(|e| format!("cannot zero {} at {at}: {e}", self.device.shown()))?;
                at += n as u64;
            }
        }
        file.sync_all()
            .map_err(|e| format!("cannot flush {}: {e}", self.device.shown()))?;
        let found = signatures::signatures(&signatures::DeviceImage { file, size })
            .map_err(|e| e.to_string())?;
        if let Some(f) = found.first() {
            return Err(format!("{} still holds {f}", self.device.shown()));
        }
        Ok(())
    }
}

impl Drop for FileSystems {
    /// However the sweep ended: nothing left mounted, the device blank again.
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        match self.finish() {
            Ok(done) => stderr_line!("dbio: {done}"),
            Err(left) => stderr_line!("dbio: warning: {}", left.message),
        }
    }
}

/// Why a sweep could not leave its device as it found it, and what to do (one message).
struct Left {
    message: String,
    /// The device is no longer the one claimed.
    changed: bool,
}

/// What file system sweeps that were killed (SIGKILL, a power cut of the shell) left
/// mounted: "/run/dbio-sweep-fs-123-ab12cd34 (xfs from /dev/loop3)", for `dbio doctor`.
pub fn left_mounted() -> Vec<String> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut out: Vec<String> = Vec::new();
    for m in crate::storage::sysfs::parse_mountinfo(&text) {
        let Some(name) = Path::new(&m.mount_point).file_name() else {
            continue;
        };
        let name = name.to_string_lossy();
        let Some(pid) = name
            .strip_prefix("dbio-sweep-fs-")
            .and_then(|rest| rest.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue; // still running
        }
        // The private mount point is a directory bound on itself (its root is not "/");
        // the file system made by the sweep is mounted on it.
        let what = if m.root == "/" {
            format!("{} from {}", m.fs_type.shown(), m.source.shown())
        } else {
            "the private mount point alone".to_string()
        };
        let head = format!("{} (", m.mount_point.shown());
        match out.iter_mut().find(|l| l.starts_with(&head)) {
            Some(l) if m.root == "/" => *l = format!("{head}{what})"),
            Some(_) => {}
            None => out.push(format!("{head}{what})")),
        }
    }
    out
}

/// "the signature of ext4 (UUID ...) and ..." or "no signature".
fn describe(found: &[blkid::Signature]) -> String {
    if found.is_empty() {
        return "no signature".into();
    }
    found
        .iter()
        .map(|s| match &s.uuid {
            Some(u) => format!("the signature of {} (UUID {})", s.kind.shown(), u.shown()),
            None => format!("the signature of {}", s.kind.shown()),
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

fn cstring(p: &Path) -> Result<CString> {
    crate::safety::fs::cstr(p).map_err(|_| Error::usage(format!("{} has a NUL byte", p.shown())))
}

/// mount(2), with `what` naming the step in the error.
fn sys_mount(
    source: Option<&CString>,
    target: &CString,
    kind: Option<&CString>,
    flags: libc::c_ulong,
    data: Option<&CString>,
    what: &str,
) -> Result<()> {
    let Err(e) = crate::sys::mount(
        source.map(CString::as_c_str),
        target,
        kind.map(CString::as_c_str),
        flags,
        data.map(CString::as_c_str),
    ) else {
        return Ok(());
    };
    Err(Error::other(format!(
        "cannot {what} on {}: {e}{}",
        target.to_string_lossy(),
        if e.raw_os_error() == Some(libc::EINVAL) {
            " (an option the file system does not know? the kernel's log, dmesg, says which)"
        } else {
            ""
        }
    )))
}

/// umount(2), retried for up to 5 s while the file system is busy.
fn umount(place: &Path) -> Result<()> {
    let c = cstring(place)?;
    let t0 = std::time::Instant::now();
    loop {
        let Err(e) = crate::sys::umount(&c, 0) else {
            return Ok(());
        };
        if e.raw_os_error() != Some(libc::EBUSY) || t0.elapsed().as_secs() >= 5 {
            return Err(Error::io("cannot unmount", place, &e));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The smallest device each file system's `mkfs` accepts (xfsprogs 5.19 and later refuse
/// less than 300 MiB, btrfs-progs less than 109 MiB); the others make do with a few MiB.
fn min_size(kind: &str) -> u64 {
    match kind {
        "xfs" => 300 << 20,
        "btrfs" => 109 << 20,
        _ => 0,
    }
}

/// The mount(2) flags of the generic options (`noatime`, ...) and the file system's own
/// options as the data string. Always nosuid, nodev and noexec: the file system holds a
/// data set, nothing to run.
fn mount_flags(options: &[String]) -> (libc::c_ulong, String) {
    let mut flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    let mut data = Vec::new();
    for o in options {
        match o.as_str() {
            "noatime" => flags |= libc::MS_NOATIME,
            "nodiratime" => flags |= libc::MS_NODIRATIME,
            "relatime" => flags |= libc::MS_RELATIME,
            "strictatime" => flags |= libc::MS_STRICTATIME,
            "lazytime" => flags |= libc::MS_LAZYTIME,
            "sync" => flags |= libc::MS_SYNCHRONOUS,
            "dirsync" => flags |= libc::MS_DIRSYNC,
            // Always set.
            "rw" | "nosuid" | "nodev" | "noexec" => {}
            other => data.push(other),
        }
    }
    (flags, data.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_options_become_flags_and_data() {
        let s = parse("ext4:data=writeback:noatime").unwrap();
        let (flags, data) = mount_flags(&s.options);
        assert_eq!(data, "data=writeback");
        assert_ne!(flags & libc::MS_NOATIME, 0);
        assert_ne!(flags & libc::MS_NOEXEC, 0);
        // What dbio always sets may be said again; it is no data option.
        let s = parse("xfs:noexec:nosuid:nodev:noatime").unwrap();
        assert_eq!(mount_flags(&s.options).1, "");
    }

    #[test]
    fn missing_mkfs_tools_are_named_with_their_package_once() {
        let specs: Vec<Spec> = ["ext4", "xfs", "xfs:noatime", "btrfs"]
            .iter()
            .map(|t| parse(t).unwrap())
            .collect();
        let only_ext = |k: &str| {
            k.starts_with("ext")
                .then(|| PathBuf::from("/sbin/mkfs.ext4"))
        };
        assert_eq!(
            missing_tools(&specs, only_ext),
            [
                "mkfs.xfs (package xfsprogs)",
                "mkfs.btrfs (package btrfs-progs)"
            ]
        );
        assert!(missing_tools(&specs, |_| Some(PathBuf::from("/x"))).is_empty());
    }

    #[test]
    fn mkfs_is_given_the_uuid_dbio_chose() {
        let u = new_uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4", "version 4: {u}");
        assert_ne!(u, new_uuid());
        for (kind, _) in KINDS {
            let args = mkfs_args(kind, &u).join(" ");
            assert!(args.contains(&u), "{kind}: {args}");
            assert!(args.contains("-q"), "{kind}: {args}");
        }
    }
}
