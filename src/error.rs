//! Errors the user sees and the exit status each one maps to ([`EXIT_STATUSES`], the one
//! table every command follows; `--help`'s footer, the man page's EXIT STATUS and
//! docs/commands.md print it): 2 for bad input (one line naming the option or field, before
//! anything is created), 4 for I/O errors (with what to do), 130 after a signal, 1 for
//! anything else.
//!
//! The rule between 2 and 4 is who can fix it. A path dbio cannot use as asked — it does not
//! exist, is not what the option takes, or dbio may not read or write it (permission denied,
//! a read-only file system) — is bad input (2): the command must change (another path,
//! another user). The storage failing at what dbio asks of a path it may use (an I/O error,
//! no space left, a request the file system refuses) is an I/O error (4). [`Error::io`]
//! decides it by the OS error, in this one place, wherever the path was named.
//!
//! Every error is one line that names what went wrong and says what to do. Internals carry
//! an [`Error`] up to `main`, which prints it and exits with [`Error::exit_code`].

use crate::units::Shown;
use std::fmt;
use std::io;
use std::path::Path;

/// Exit statuses of the `dbio` binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    Ok = 0,
    /// Something unexpected (a bug, or an environment we do not understand).
    Failure = 1,
    /// Bad input: an option, a value, or a target that cannot be used as asked.
    Usage = 2,
    /// Requirements were not met (a verdict failed).
    VerdictFailed = 3,
    /// An I/O error stopped the run or the preparation.
    IoError = 4,
    /// Stopped by SIGINT/SIGTERM/SIGHUP; the partial result was written.
    Interrupted = 130,
}

/// The exit statuses every command follows, with what each means (the rule between 2 and 4
/// is in this module's documentation).
pub const EXIT_STATUSES: &[(ExitCode, &str)] = &[
    (ExitCode::Ok, "success"),
    (
        ExitCode::Failure,
        "failure: the command could not finish (something went wrong part-way)",
    ),
    (
        ExitCode::Usage,
        "bad input: an option, a value or a path dbio cannot use as asked (does not exist, not what the option takes, permission denied, read-only file system); said before anything is created or measured",
    ),
    (
        ExitCode::VerdictFailed,
        "verdict FAIL: the run was made and a requirement of its job was not met",
    ),
    (
        ExitCode::IoError,
        "I/O error: the storage failed at what dbio asked of it (an I/O error, no space left, a request refused); what was measured is kept",
    ),
    (
        ExitCode::Interrupted,
        "interrupted by Ctrl-C, SIGTERM or SIGHUP; the partial result is kept",
    ),
];

/// [`EXIT_STATUSES`] as `--help`'s footer.
pub fn exit_status_help() -> String {
    let mut s = String::from("Exit status:\n");
    for (code, meaning) in EXIT_STATUSES {
        s.push_str(&format!("  {:>3}  {meaning}\n", *code as i32));
    }
    s.push_str("Bad input (2) is a command to change; an I/O error (4) is storage to look at.");
    s
}

/// An error with its class. The message is complete and meant for the user as is.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Other(String),
    /// Stopped by a signal before the work was done.
    #[error("{0}")]
    Interrupted(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn usage(msg: impl fmt::Display) -> Self {
        Error::Usage(msg.to_string())
    }
    pub fn other(msg: impl fmt::Display) -> Self {
        Error::Other(msg.to_string())
    }

    /// An I/O error while doing `what` on `path`, with advice chosen by errno. A refusal
    /// of [`crate::safety::fs`] (something at a name is not dbio's to touch) is a usage
    /// error that already names the path.
    pub fn io(what: &str, path: &Path, err: &io::Error) -> Self {
        if err.raw_os_error().is_none() && err.kind() == io::ErrorKind::PermissionDenied {
            return Error::Usage(err.to_string());
        }
        if let Some(libc::EACCES | libc::EPERM | libc::EROFS) = err.raw_os_error() {
            // A path dbio may not use is bad input (see the rule above), wherever it is met.
            return Error::Usage(format!("{what} {}: {}", path.shown(), io_advice(err)));
        }
        if err.raw_os_error() == Some(libc::EEXIST) {
            return Error::Usage(format!(
                "{what} {}: something is already there, and dbio never writes over what it did not create; remove it yourself or choose another path",
                path.shown()
            ));
        }
        if err.raw_os_error() == Some(libc::ENAMETOOLONG) {
            // A name longer than the system takes is bad input, not an I/O failure.
            return Error::Usage(format!(
                "{what} {}: {} (a path has at most {} bytes, each name in it at most {})",
                crate::units::echoed(&path.to_string_lossy()),
                errno_text(err),
                libc::PATH_MAX,
                255
            ));
        }
        Error::Io(format!("{what} {}: {}", path.shown(), io_advice(err)))
    }

    /// The same error, said of what the user typed: `--target` in front of a message that
    /// starts with the path ("--target /dev/null is neither a directory, …").
    pub fn named(self, typed: &str) -> Self {
        match self {
            Error::Usage(m) => Error::Usage(format!("{typed} {m}")),
            Error::Io(m) => Error::Io(format!("{typed}: {m}")),
            e => e,
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Usage(_) => ExitCode::Usage,
            Error::Io(_) => ExitCode::IoError,
            Error::Other(_) => ExitCode::Failure,
            Error::Interrupted(_) => ExitCode::Interrupted,
        }
    }
}

/// Explains an OS error and says what to do about it.
pub fn io_advice(err: &io::Error) -> String {
    let base = errno_text(err);
    let hint = match err.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "permission denied: run as a user allowed to access it (device nodes usually need root or the 'disk' group), or choose another path"
        }
        Some(libc::ENOSPC) => {
            "no space left: free space, or write less (for a data set, a smaller --size)"
        }
        Some(libc::EDQUOT) => {
            "disk quota exceeded: free space, or write less (for a data set, a smaller --size)"
        }
        Some(libc::EINVAL) => {
            "invalid argument: the file system refused the request; if it does not support O_DIRECT use --io-mode none or asynch, otherwise use a --block-size that is a multiple of its direct-I/O alignment"
        }
        Some(libc::EIO) => "the device reported an I/O error: check `dmesg` and the storage",
        Some(libc::EROFS) => "the file system is read-only: choose a path on a writable one",
        Some(libc::ENOENT) => "it does not exist: check the path",
        Some(libc::ENOTDIR) => "a part of the path is not a directory",
        Some(libc::EMFILE) | Some(libc::ENFILE) => {
            "too many open files: raise the limit (`ulimit -n`) or use fewer --files or --sessions"
        }
        Some(libc::ENOMEM) => "out of memory: use fewer --sessions or a smaller --batch/--depth",
        Some(libc::EBUSY) => "the device or file is busy (in use by something else)",
        Some(libc::EAGAIN) => {
            "resource temporarily unavailable: when setting up Linux AIO this means the system-wide limit fs.aio-max-nr is used up (see /proc/sys/fs/aio-nr); raise it (`sysctl -w fs.aio-max-nr=1048576`), or use fewer --sessions, a smaller --batch/--depth, or --engine uring"
        }
        _ => return base,
    };
    format!("{base} ({hint})")
}

fn errno_text(err: &io::Error) -> String {
    // io::Error's Display appends "(os error N)"; keep it, it helps when searching.
    err.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_names_the_fix() {
        let e = io::Error::from_raw_os_error(libc::ENOSPC);
        assert!(io_advice(&e).contains("smaller --size"));
        let e = io::Error::from_raw_os_error(libc::EINVAL);
        assert!(io_advice(&e).contains("O_DIRECT"));
        let e = io::Error::from_raw_os_error(libc::EAGAIN);
        assert!(io_advice(&e).contains("fs.aio-max-nr"));
        let e = io::Error::from_raw_os_error(libc::EMFILE);
        assert!(io_advice(&e).contains("ulimit -n"));
        let err = Error::io(
            "cannot open",
            Path::new("/x"),
            &io::Error::from_raw_os_error(libc::EIO),
        );
        assert_eq!(err.exit_code(), ExitCode::IoError);
        assert!(err.to_string().starts_with("cannot open /x: "));
        // A path dbio may not use is bad input, whatever the option.
        for errno in [libc::EACCES, libc::EPERM, libc::EROFS] {
            let err = Error::io(
                "cannot open",
                Path::new("/x"),
                &io::Error::from_raw_os_error(errno),
            );
            assert_eq!(err.exit_code(), ExitCode::Usage);
            assert!(err.to_string().starts_with("cannot open /x: "));
        }
    }
}
