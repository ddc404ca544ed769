//! One run across many hosts (`--hosts`), over OpenSSH: dbio opens no port of its own.
//!
//! The coordinator (this process) starts `dbio agent` on every host through ssh and speaks
//! a small versioned protocol of JSON lines with it on the agent's stdin and stdout. Every
//! host checks the run before any host prepares anything; the data sets are prepared in
//! parallel; clock offsets are measured over the channel and every host starts at one
//! instant; each second every host sends its per-event histograms, and the coordinator
//! merges histograms, never percentiles. The coordinator writes the one run directory.
//!
//! - [`protocol`]: the messages and the histogram encoding;
//! - [`transport`]: how a host is reached (ssh; a second transport would be another impl);
//! - [`clock`]: offsets from ping-pongs;
//! - [`agent`]: `dbio agent`;
//! - [`coordinator`]: connect, check, prepare, start, stream, stop;
//! - [`merge`]: the cluster's result from the hosts'.
//!
//! Nothing below the commands layer knows of hosts: a run gets generic hooks
//! ([`crate::run::RunHooks`]) and the agent uses them.

pub mod agent;
pub mod clock;
pub mod coordinator;
mod hosts;
pub mod merge;
mod plan;
pub mod protocol;
pub mod transport;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::options::check::HOST_PLACEHOLDER;

/// `--target` with `{host}` replaced by `host` as typed. The name must make one path
/// component: no `/`, no `..`, no NUL or control characters.
pub fn host_target(target: &Path, host: &str) -> Result<PathBuf> {
    let text = target.to_string_lossy();
    if !text.contains(HOST_PLACEHOLDER) {
        return Ok(target.to_path_buf());
    }
    let bad = host.contains('/')
        || host == "."
        || host.contains("..")
        || host.is_empty()
        || host.chars().any(|c| c.is_control());
    if bad {
        return Err(Error::usage(format!(
            "--target {text}: the host name '{}' cannot stand for {HOST_PLACEHOLDER} in a path (no '/', '..' or control characters); use an ~/.ssh/config alias as its name",
            host.escape_debug()
        )));
    }
    Ok(PathBuf::from(text.replace(HOST_PLACEHOLDER, host)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_make_one_path_component() {
        let t = Path::new("/u02/dbio-{host}");
        assert_eq!(
            host_target(t, "db1").unwrap(),
            PathBuf::from("/u02/dbio-db1")
        );
        assert_eq!(
            host_target(t, "oracle@db1").unwrap(),
            PathBuf::from("/u02/dbio-oracle@db1")
        );
        for bad in ["../etc", "a/b", "..", "x\u{7}"] {
            assert!(host_target(t, bad).is_err(), "{bad}");
        }
        assert_eq!(
            host_target(Path::new("/u02/shared"), "../x").unwrap(),
            PathBuf::from("/u02/shared")
        );
    }
}
