//! Signatures on a block device, from util-linux's libblkid — the database `mkfs`, `wipefs`
//! and `blkid` use (file systems, oracleasm, zfs_member, ceph, bcache, LVM2, md, drbd,
//! VMFS, crypto, swap, partition tables, ...). The library is loaded at run time
//! (`libblkid.so.1`), so building dbio needs no C library; where it is missing, `wipefs
//! --no-act` is asked instead. With neither, nothing can be probed, and a write is refused.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// How the device was probed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prober {
    /// libblkid, loaded at run time.
    Library,
    /// `wipefs --no-act`.
    Wipefs,
}

impl std::fmt::Display for Prober {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Prober::Library => "libblkid",
            Prober::Wipefs => "wipefs --no-act",
        })
    }
}

/// The signature types found on the device (`oracleasm`, `ext4`, `gpt`, ...) and who
/// found them; an error says why the device could not be probed at all.
pub fn probe(file: &File, path: &Path) -> Result<(Vec<String>, Prober), String> {
    identify(file, path).map(|(found, by)| (found.into_iter().map(|s| s.kind).collect(), by))
}

/// One signature: its type and, where it has one, its UUID (a file system's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub kind: String,
    pub uuid: Option<String>,
}

/// Every signature on the device with its UUID, and who found them: what tells a file
/// system dbio made (with a UUID it chose) from one someone else made since.
pub fn identify(file: &File, path: &Path) -> Result<(Vec<Signature>, Prober), String> {
    let library = match Library::load() {
        Ok(lib) => return lib.probe(file).map(|t| (t, Prober::Library)),
        Err(why) => why,
    };
    match wipefs(path) {
        Ok(t) => Ok((t, Prober::Wipefs)),
        Err(why) => Err(format!(
            "no signature probe is available ({library}; {why}); install util-linux's libblkid (package libblkid1) or wipefs"
        )),
    }
}

type NewProbe = unsafe extern "C" fn() -> *mut c_void;
type FreeProbe = unsafe extern "C" fn(*mut c_void);
type SetDevice = unsafe extern "C" fn(*mut c_void, c_int, i64, i64) -> c_int;
type Enable = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
type DoProbe = unsafe extern "C" fn(*mut c_void) -> c_int;
type Lookup =
    unsafe extern "C" fn(*mut c_void, *const c_char, *mut *const c_char, *mut usize) -> c_int;

/// The libblkid functions dbio calls.
struct Library {
    new_probe: NewProbe,
    free_probe: FreeProbe,
    set_device: SetDevice,
    enable_superblocks: Enable,
    set_superblocks_flags: Enable,
    enable_partitions: Enable,
    set_partitions_flags: Enable,
    do_probe: DoProbe,
    lookup_value: Lookup,
}

const SUBLKS_UUID: c_int = 1 << 3;
const SUBLKS_TYPE: c_int = 1 << 5;
const SUBLKS_USAGE: c_int = 1 << 7;
const SUBLKS_MAGIC: c_int = 1 << 9;
const SUBLKS_BADCSUM: c_int = 1 << 10;
const PARTS_FORCE_GPT: c_int = 1 << 1;
const PARTS_MAGIC: c_int = 1 << 3;

impl Library {
    fn load() -> Result<Library, String> {
        let name = c"libblkid.so.1";
        // SAFETY: dlopen with a valid C string; the handle is never closed (the library
        // stays loaded for the process, as a linked one would).
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err("libblkid.so.1 cannot be loaded".into());
        }
        let sym = |s: &CStr| -> Result<*mut c_void, String> {
            // SAFETY: a valid handle and C string.
            let p = unsafe { libc::dlsym(handle, s.as_ptr()) };
            if p.is_null() {
                Err(format!("libblkid.so.1 has no {}", s.to_string_lossy()))
            } else {
                Ok(p)
            }
        };
        // SAFETY: each symbol is the libblkid function of that name, whose C signature the
        // type states (blkid.h of util-linux 2.x, stable since 2.15).
        unsafe {
            Ok(Library {
                new_probe: std::mem::transmute::<*mut c_void, NewProbe>(sym(c"blkid_new_probe")?),
                free_probe: std::mem::transmute::<*mut c_void, FreeProbe>(sym(
                    c"blkid_free_probe",
                )?),
                set_device: std::mem::transmute::<*mut c_void, SetDevice>(sym(
                    c"blkid_probe_set_device",
                )?),
                enable_superblocks: std::mem::transmute::<*mut c_void, Enable>(sym(
                    c"blkid_probe_enable_superblocks",
                )?),
                set_superblocks_flags: std::mem::transmute::<*mut c_void, Enable>(sym(
                    c"blkid_probe_set_superblocks_flags",
                )?),
                enable_partitions: std::mem::transmute::<*mut c_void, Enable>(sym(
                    c"blkid_probe_enable_partitions",
                )?),
                set_partitions_flags: std::mem::transmute::<*mut c_void, Enable>(sym(
                    c"blkid_probe_set_partitions_flags",
                )?),
                do_probe: std::mem::transmute::<*mut c_void, DoProbe>(sym(c"blkid_do_probe")?),
                lookup_value: std::mem::transmute::<*mut c_void, Lookup>(sym(
                    c"blkid_probe_lookup_value",
                )?),
            })
        }
    }

    /// Every signature libblkid finds, as `wipefs` lists them: each superblock (file
    /// system, RAID or volume member, crypto, swap) and partition table.
    fn probe(&self, file: &File) -> Result<Vec<Signature>, String> {
        // SAFETY: the probe is created, used with our open descriptor (which outlives it)
        // and freed here; lookup_value's data points into the probe and is copied at once.
        unsafe {
            let pr = (self.new_probe)();
            if pr.is_null() {
                return Err("libblkid could not create a probe".into());
            }
            let result = (|| {
                if (self.set_device)(pr, file.as_raw_fd(), 0, 0) != 0 {
                    return Err("libblkid could not read the device".to_string());
                }
                (self.enable_superblocks)(pr, 1);
                (self.set_superblocks_flags)(
                    pr,
                    SUBLKS_UUID | SUBLKS_TYPE | SUBLKS_USAGE | SUBLKS_MAGIC | SUBLKS_BADCSUM,
                );
                (self.enable_partitions)(pr, 1);
                (self.set_partitions_flags)(pr, PARTS_FORCE_GPT | PARTS_MAGIC);
                let mut found = Vec::new();
                loop {
                    match (self.do_probe)(pr) {
                        0 => {}
                        1 => break,
                        _ => return Err("libblkid failed while probing the device".to_string()),
                    }
                    let value = |key: &CStr| {
                        let mut data: *const c_char = std::ptr::null();
                        ((self.lookup_value)(pr, key.as_ptr(), &mut data, std::ptr::null_mut())
                            == 0
                            && !data.is_null())
                        .then(|| CStr::from_ptr(data).to_string_lossy().into_owned())
                    };
                    if let Some(kind) = value(c"TYPE").or_else(|| value(c"PTTYPE")) {
                        let uuid = value(c"UUID").or_else(|| value(c"PTUUID"));
                        found.push(Signature { kind, uuid });
                    }
                    if found.len() > 64 {
                        break;
                    }
                }
                Ok(found)
            })();
            (self.free_probe)(pr);
            result
        }
    }
}

/// The signatures `wipefs --no-act` lists for `path`, with their UUIDs.
fn wipefs(path: &Path) -> Result<Vec<Signature>, String> {
    let wipefs = crate::safety::exec::Program::find("wipefs")
        .map_err(|e| e.to_string())?
        .ok_or("wipefs is not installed")?;
    let out = wipefs
        .command()
        .args(["--no-act", "--noheadings", "--output", "TYPE,UUID"])
        .arg(path)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("wipefs cannot be run ({e})"))?;
    if !out.status.success() {
        return Err(format!(
            "wipefs failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let kind = words.next()?.to_string();
            let uuid = words.next().map(str::to_string);
            Some(Signature { kind, uuid })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    fn image(bytes: &[(u64, &[u8])]) -> (tempfile::TempDir, std::path::PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("disk.img");
        let f = File::create(&p).unwrap();
        f.set_len(16 << 20).unwrap();
        for (at, b) in bytes {
            f.write_all_at(b, *at).unwrap();
        }
        (t, p)
    }

    #[test]
    fn an_asm_disk_and_a_blank_one_as_libblkid_and_wipefs_see_them() {
        let (_t, asm) = image(&[(32, b"ORCLDISKDATA01")]);
        let (_u, blank) = image(&[]);
        for path in [&asm, &blank] {
            let f = File::open(path).unwrap();
            let lib = Library::load().map(|l| l.probe(&f));
            let cmd = wipefs(path);
            let want: Vec<String> = if path == &asm {
                vec!["oracleasm".into()]
            } else {
                vec![]
            };
            let kinds = |s: Vec<Signature>| s.into_iter().map(|s| s.kind).collect::<Vec<_>>();
            match lib {
                Ok(found) => assert_eq!(kinds(found.unwrap()), want),
                Err(_) => stderr_line!("skipped: no libblkid.so.1"),
            }
            match cmd {
                Ok(found) => assert_eq!(kinds(found), want),
                Err(e) => stderr_line!("skipped: {e}"),
            }
        }
    }
}
