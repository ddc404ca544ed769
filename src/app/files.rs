//! The files a user names for dbio to write (`--save-job`, `compare --html`, `dbio job -o`,
//! the wizard's job file): new files only, checked before any work is done and written
//! whole through [`crate::safety::fs`]; anything already at the name is refused (exit 2).

use std::path::Path;

use crate::error::{Error, Result};
use crate::units::Shown;

/// Writes a file the user named (`--save-job`, `compare --html`, the wizard's job file):
/// created new and whole, never over an existing file.
pub(crate) fn write_user_file(path: &Path, bytes: &[u8], option: &str) -> Result<()> {
    user_file(path, bytes, option, false)
}

/// [`write_user_file`] for a file that holds connection details: mode 0600.
pub(crate) fn write_private_user_file(path: &Path, bytes: &[u8], option: &str) -> Result<()> {
    user_file(path, bytes, option, true)
}

fn user_file(path: &Path, bytes: &[u8], option: &str, private: bool) -> Result<()> {
    let written = if private {
        crate::safety::fs::write_new_private_file(path, bytes)
    } else {
        crate::safety::fs::write_new_file(path, bytes)
    };
    written.map_err(|e| user_file_error(path, option, &e))
}

/// Checks, before anything is done, that [`write_user_file`] can write `path`: nothing is
/// at the name (an existing file is refused, never replaced) and its directory is there.
pub(crate) fn check_user_file(path: &Path, option: &str) -> Result<()> {
    crate::safety::fs::check_new_file(path).map_err(|e| user_file_error(path, option, &e))
}

/// Why the file the user named cannot be written, as one line naming the option.
fn user_file_error(path: &Path, option: &str, e: &std::io::Error) -> Error {
    if e.kind() == std::io::ErrorKind::AlreadyExists {
        Error::usage(format!(
            "{option} {}: the file exists; dbio does not overwrite it — choose another name or remove it",
            path.shown()
        ))
    } else {
        Error::usage(format!(
            "{option} {}: cannot write it ({e}); give a new file in a directory you can write to",
            path.shown()
        ))
    }
}
