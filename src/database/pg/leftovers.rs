//! What a killed `dbio pg run` leaves, as noted before it was made
//! ([`crate::safety::cleanup::Leftover`]): a throwaway server's directory (data directory
//! and log) and its socket directory, and a schema on a user's server. `dbio clean --stale`
//! undoes each through [`undo`] — only after proving it is still what dbio made: the
//! directory's device, inode and owner as recorded and nothing in it but a server's files
//! (a postmaster still running from it is stopped first), the schema's mark and its lock.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::safety::cleanup::{DirectoryDetail, PG_DATA_DIR, PG_SCHEMA, PG_SOCKET_DIR};

/// A run's schema as recorded.
#[derive(Debug, Deserialize)]
struct SchemaDetail {
    schema: String,
    /// A key=value string without a password.
    conn: String,
}

/// Undoes a leftover of `kind` (one of the pg kinds) as its `detail` records it. Ok: what
/// was done; Err: why it was left alone.
pub fn undo(kind: &str, detail: &str) -> Result<String, String> {
    match kind {
        PG_DATA_DIR | PG_SOCKET_DIR => {
            remove_dir(&DirectoryDetail::parse(detail)?, kind == PG_DATA_DIR)
        }
        PG_SCHEMA => {
            let d: SchemaDetail = serde_json::from_str(detail)
                .map_err(|e| format!("its record is unreadable ({e})"))?;
            drop_schema(&d)
        }
        _ => Err(format!("dbio does not know how to undo a {kind}")),
    }
}

/// Whether `name` is something a throwaway server puts in its directory: the data
/// directory and log (`data`), or a socket and its lock file (`socket`).
fn server_file(name: &str, data: bool, md: &std::fs::Metadata) -> bool {
    if data {
        (name == "data" && md.is_dir()) || (name == "postgres.log" && md.is_file())
    } else {
        let Some(rest) = name.strip_prefix(".s.PGSQL.") else {
            return false;
        };
        let (port, lock) = match rest.strip_suffix(".lock") {
            Some(p) => (p, true),
            None => (rest, false),
        };
        !port.is_empty()
            && port.bytes().all(|b| b.is_ascii_digit())
            && if lock {
                md.is_file()
            } else {
                md.file_type().is_socket()
            }
    }
}

/// Removes a throwaway server's directory if it is still the one dbio made (a postmaster
/// still running from it stopped first).
fn remove_dir(d: &DirectoryDetail, data: bool) -> Result<String, String> {
    crate::database::throwaway::remove_server_dir(
        d,
        &|name, md| server_file(name, data, md),
        &|| {
            if data {
                stop_postmaster(&d.path.join("data"), d.uid)
            } else {
                Ok(())
            }
        },
        if data {
            "the throwaway server's directory"
        } else {
            "the throwaway server's socket directory"
        },
    )
}

/// Stops the postmaster running from the data directory `data`, if one does: the process
/// `postmaster.pid` names, when it runs as `uid` with `data` on its command line. A fast
/// shutdown first, then immediate, then kill.
fn stop_postmaster(data: &Path, uid: u32) -> Result<(), String> {
    let Ok(text) = std::fs::read(data.join("postmaster.pid")) else {
        return Ok(());
    };
    let first = text.split(|&b| b == b'\n').next().unwrap_or_default();
    let Some(pid) = std::str::from_utf8(first)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .filter(|&p| p > 1)
    else {
        return Ok(());
    };
    crate::database::throwaway::stop_left_server(
        pid,
        uid,
        data,
        "postgres",
        &[
            (libc::SIGINT, Duration::from_secs(30)),
            (libc::SIGQUIT, Duration::from_secs(10)),
            (libc::SIGKILL, Duration::from_secs(10)),
        ],
    )
}

/// Drops a run's schema left on a user's server, as `dbio pg clean` would (its mark, its
/// lock, RESTRICT).
fn drop_schema(d: &SchemaDetail) -> Result<String, String> {
    let mut config = super::connect::config(&d.conn).map_err(|e| e.to_string())?;
    let mut c = super::connect::connect(&mut config, "--pg").map_err(|e| e.to_string())?;
    match super::schema::drop_one(&mut c, &d.schema) {
        Ok(true) => Ok(format!(
            "dropped schema {} at {}",
            d.schema,
            super::connect::describe(&config)
        )),
        Ok(false) => Ok(format!(
            "schema {} at {} is gone already",
            d.schema,
            super::connect::describe(&config)
        )),
        Err(why) => Err(why),
    }
}
