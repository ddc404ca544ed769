//! The running system as a [`Machine`]: loop devices through their ioctl, the rest from
//! `/proc` and `/sys`.

use std::os::unix::fs::{FileTypeExt, MetadataExt};

use crate::safety::holders::User;
use crate::storage::sysfs::SysRoot;

use super::{Backing, LoopStatus, Machine, parse_devno};

/// The running system.
pub struct Host;

impl Host {
    /// The kernel's own record (LOOP_GET_STATUS64): the backing file's device and inode,
    /// which hold even when the file was renamed or deleted.
    fn loop_ioctl(name: &str) -> Option<LoopStatus> {
        let f = std::fs::File::open(format!("/dev/{name}")).ok()?;
        let md = f.metadata().ok()?;
        if !md.file_type().is_block_device() {
            return None;
        }
        let b = crate::safety::identity::loop_status(&f).ok()??;
        Some(LoopStatus {
            backing: b.backing,
            offset: b.offset,
            sizelimit: b.sizelimit,
            file_name: b.file_name,
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
        crate::safety::identity::dm_table(devno)
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
