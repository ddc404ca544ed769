//! What keeps dbio from destroying data (SPEC §7).
//!
//! - [`device`]: before a write test touches a block device — not mounted, not in use, no
//!   file system, partition table, LVM, RAID, swap or LUKS signature, and confirmed;
//! - [`cleanup`]: files a run must remove even when a second Ctrl-C ends it at once.

pub mod cleanup;
pub mod device;
