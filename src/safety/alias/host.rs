//! The running system as a [`Machine`]: loop devices through their ioctl, the rest from
//! `/proc` and `/sys`.

use std::os::unix::fs::{FileTypeExt, MetadataExt};

use crate::safety::holders::User;
use crate::storage::sysfs::SysRoot;

use super::{Backing, LoopStatus, Machine, parse_devno};

/// The running system.
pub struct Host;

#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

impl Host {
    /// The kernel's own record (LOOP_GET_STATUS64): the backing file's device and inode,
    /// which hold even when the file was renamed or deleted.
    fn loop_ioctl(name: &str) -> Option<LoopStatus> {
        use std::os::fd::AsRawFd;
        let f = std::fs::File::open(format!("/dev/{name}")).ok()?;
        let md = f.metadata().ok()?;
        if !md.file_type().is_block_device() {
            return None;
        }
        // SAFETY: an all-zero loop_info64 is valid; the ioctl fills it (its size is the
        // kernel's struct loop_info64) and reads nothing from it.
        let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and a pointer to a struct of the size the ioctl writes.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
        if rc != 0 {
            return None;
        }
        let name_len = info.lo_file_name.iter().position(|&b| b == 0).unwrap_or(64);
        let file_name = String::from_utf8_lossy(&info.lo_file_name[..name_len]).into_owned();
        let dev = libc::makedev(
            ((info.lo_device >> 8) & 0xfff) as u32,
            ((info.lo_device & 0xff) | ((info.lo_device >> 12) & 0xfff00)) as u32,
        );
        let rdev = libc::makedev(
            ((info.lo_rdevice >> 8) & 0xfff) as u32,
            ((info.lo_rdevice & 0xff) | ((info.lo_rdevice >> 12) & 0xfff00)) as u32,
        );
        Some(LoopStatus {
            // A regular file has no rdev; a block device is known by it.
            backing: if info.lo_rdevice != 0 {
                Backing::Block(rdev)
            } else {
                Backing::File {
                    dev,
                    ino: info.lo_inode,
                }
            },
            offset: info.lo_offset,
            sizelimit: info.lo_sizelimit,
            file_name,
        })
    }
}

/// A loop device as sysfs shows it: the backing file by name (which is then looked up).
pub fn loop_from_sysfs(sys: &SysRoot, name: &str) -> Option<LoopStatus> {
    let at = |r: &str| format!("sys/class/block/{name}/loop/{r}");
    let file_name = sys.read(&at("backing_file"))?;
    let md = std::fs::metadata(&file_name).ok()?;
    Some(LoopStatus {
        backing: if md.file_type().is_block_device() {
            Backing::Block(md.rdev())
        } else {
            Backing::File {
                dev: md.dev(),
                ino: md.ino(),
            }
        },
        offset: sys.read_u64(&at("offset")).unwrap_or(0),
        sizelimit: sys.read_u64(&at("sizelimit")).unwrap_or(0),
        file_name,
    })
}

impl Machine for Host {
    fn loop_status(&self, sys: &SysRoot, name: &str) -> Option<LoopStatus> {
        let mut st = Host::loop_ioctl(name).or_else(|| loop_from_sysfs(sys, name))?;
        // sysfs has the whole name; the kernel's record only its first 63 bytes.
        if let Some(full) = sys.read(&format!("sys/class/block/{name}/loop/backing_file")) {
            st.file_name = full;
        }
        Some(st)
    }

    fn dm_table(&self, sys: &SysRoot, name: &str) -> Option<String> {
        let devno = parse_devno(&sys.read(&format!("sys/class/block/{name}/dev"))?)?;
        // Not there, or refused (another user could have written it): no table, and the
        // device counts as all of the devices below it, which asks more of them, not less.
        let dmsetup = crate::safety::exec::Program::find("dmsetup").ok()??;
        let out = dmsetup
            .command()
            .args(["table", "-j"])
            .arg(libc::major(devno).to_string())
            .arg("-m")
            .arg(libc::minor(devno).to_string())
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn device_opened_by(&self, devno: u64) -> Option<User> {
        crate::safety::holders::opened_by(&[devno])
            .into_iter()
            .next()
    }

    fn file_opened_by(&self, dev: u64, ino: u64) -> Option<User> {
        crate::safety::holders::opened_by_file(dev, ino)
            .into_iter()
            .next()
    }

    fn claimed(&self, name: &str) -> bool {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL)
            .open(format!("/dev/{name}"))
            .is_err_and(|e| e.raw_os_error() == Some(libc::EBUSY))
    }

    fn block_devno(&self, path: &str) -> Option<u64> {
        let md = std::fs::metadata(path).ok()?;
        md.file_type().is_block_device().then(|| md.rdev())
    }
}
