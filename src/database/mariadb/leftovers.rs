//! What a killed `dbio mysql run` leaves, as noted before it was made: a throwaway
//! server's directory and its socket directory, and a database on a user's server. `dbio
//! clean --stale` undoes each through [`undo`] — only after proving it is still what dbio
//! made: the directory's identity, owner and contents (a mariadbd still running from it is
//! stopped first), the database's mark and its lock.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use crate::safety::cleanup::{DirectoryDetail, MYSQL_DATA_DIR, MYSQL_DATABASE, MYSQL_SOCKET_DIR};

#[derive(Debug, Deserialize)]
struct DatabaseDetail {
    database: String,
    /// A URL without a password.
    url: String,
}

/// Undoes a leftover of `kind` (one of the mysql kinds). Ok: what was done; Err: why it was
/// left alone.
pub fn undo(kind: &str, detail: &str) -> Result<String, String> {
    match kind {
        MYSQL_DATA_DIR | MYSQL_SOCKET_DIR => {
            let d = DirectoryDetail::parse(detail)?;
            let data = kind == MYSQL_DATA_DIR;
            crate::database::throwaway::remove_server_dir(
                &d,
                &|name, md| server_file(name, data, md),
                &|| {
                    if data {
                        stop_server(&d.path, d.uid)
                    } else {
                        Ok(())
                    }
                },
                if data {
                    "the throwaway MariaDB server's directory"
                } else {
                    "the throwaway MariaDB server's socket directory"
                },
            )
        }
        MYSQL_DATABASE => {
            let d: DatabaseDetail = serde_json::from_str(detail)
                .map_err(|e| format!("its record is unreadable ({e})"))?;
            drop_database(&d)
        }
        _ => Err(format!("dbio does not know how to undo a {kind}")),
    }
}

/// Whether `name` is something a throwaway server puts in its directory (`data`) or its
/// socket directory.
fn server_file(name: &str, data: bool, md: &std::fs::Metadata) -> bool {
    if data {
        match name {
            "data" | "tmp" => md.is_dir(),
            "error.log" | "install.log" | "mariadbd.pid" => md.is_file(),
            _ => false,
        }
    } else {
        (name == super::server::SOCKET && md.file_type().is_socket())
            || (name == format!("{}.lock", super::server::SOCKET) && md.is_file())
    }
}

/// Stops the mariadbd running from the directory `dir`, if one does: the process its pid
/// file names, when it runs as `uid` with `dir` on its command line. SIGTERM, then kill.
fn stop_server(dir: &Path, uid: u32) -> Result<(), String> {
    let Ok(text) = std::fs::read_to_string(dir.join("mariadbd.pid")) else {
        return Ok(());
    };
    let Some(pid) = text.trim().parse::<u32>().ok().filter(|&p| p > 1) else {
        return Ok(());
    };
    crate::database::throwaway::stop_left_server(
        pid,
        uid,
        dir,
        "mariadbd",
        &[
            (libc::SIGTERM, Duration::from_secs(60)),
            (libc::SIGKILL, Duration::from_secs(10)),
        ],
    )
}

/// Drops a run's database left on a user's server, as `dbio mysql clean` would.
fn drop_database(d: &DatabaseDetail) -> Result<String, String> {
    let mut t = super::connect::Target::parse(&d.url).map_err(|e| e.to_string())?;
    let mut c = t.connect("--mysql").map_err(|e| e.to_string())?;
    match super::private::drop_one(&mut c, &d.database) {
        Ok(true) => Ok(format!(
            "dropped database {} at {}",
            d.database,
            t.describe()
        )),
        Ok(false) => Ok(format!(
            "database {} at {} is gone already",
            d.database,
            t.describe()
        )),
        Err(why) => Err(why),
    }
}
