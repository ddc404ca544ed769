//! What keeps dbio from destroying data (docs/safety.md). One place for each rule:
//!
//! - [`fs`]: every file dbio creates, replaces, writes into or removes — relative to its
//!   directory's descriptor, never through a symlink, created exclusively, published whole
//!   (synced, then renamed into place), and written or removed only with the identity dbio
//!   recorded; a file the user names is replaced only when it is new or dbio's own;
//! - [`input`]: the files a user names as input, read bounded;
//! - [`lock`]: a data set in use is held by `flock` (shared to read, exclusive to prepare
//!   or write); who holds it is read from `/proc/locks`, never from a file;
//! - [`device`] and [`blkid`]: before a write test touches a block device — not mounted,
//!   not in use, no signature (libblkid's database and dbio's own checks), and confirmed;
//!   [`alias`]: nor any other device that maps the same bytes (a second loop device over
//!   the same file, the disk of a partition, a device-mapper table) and is in use;
//!   [`identity`]: a claimed device is proved to be the same backing store (a loop device's
//!   file, offset and size, a partition's start and length, a device-mapper table) right
//!   before every step that writes it;
//! - [`limits`]: what the machine allows (threads, memory maps, memory, free space), so
//!   that every input is checked before anything is created, deleted or measured;
//! - [`cleanup`]: files a run must remove even when a second Ctrl-C ends it at once;
//! - [`places`]: where a data set may be made (never on the kernel's pseudo file systems);
//! - [`exec`]: every program dbio starts, checked first: no user but root (or the one
//!   running dbio) could have written it or any directory above it;
//! - [`secret`]: passwords and secret server settings shown as `****` wherever text goes.
//!
//! The data set's manifest is untrusted input: [`crate::dataset::manifest`] checks every
//! entry (a plain dbio file name and a real identity) before anything acts on it.

pub mod alias;
pub mod blkid;
pub mod cleanup;
pub mod device;
pub mod exec;
pub mod fs;
mod holders;
pub mod identity;
pub mod input;
pub mod limits;
pub mod lock;
pub mod places;
pub mod secret;
pub mod signatures;
