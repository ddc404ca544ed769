//! What commands made or changed outside their results directories, as the results store
//! noted it before it was made ([`crate::safety::cleanup::Leftover`]): a throwaway
//! server's data and socket directories, a schema on a user's server, a disk's I/O
//! scheduler. Doctor lists each — in use while the process that made it runs, else STALE
//! with the command that undoes it by hand; `clean --stale` undoes the stale ones, each
//! only after its own checks that it is still what dbio made.

use std::path::Path;

use super::report::{Action, LeftoverJson};
use super::{Known, canonical};
use crate::safety::cleanup::{
    MYSQL_DATA_DIR, MYSQL_DATABASE, MYSQL_SOCKET_DIR, PG_DATA_DIR, PG_SCHEMA, PG_SOCKET_DIR,
    SCHEDULER,
};
use crate::store::LeftoverRecord;

/// What a leftover of `kind` is, in words.
fn words(kind: &str) -> &'static str {
    match kind {
        PG_DATA_DIR => "a throwaway PostgreSQL server's directory (data directory and log)",
        PG_SOCKET_DIR => "a throwaway PostgreSQL server's socket directory",
        PG_SCHEMA => "the schema of a dbio pg run on a user's server",
        MYSQL_DATA_DIR => "a throwaway MariaDB server's directory (data directory and logs)",
        MYSQL_SOCKET_DIR => "a throwaway MariaDB server's socket directory",
        MYSQL_DATABASE => "the database of a dbio mysql run on a user's server",
        SCHEDULER => "a disk's I/O scheduler, changed by a scheduler sweep",
        _ => "something dbio made",
    }
}

/// Undoes the leftover `r` (its maker is gone): removes or restores it if it is still
/// what dbio made. Ok: what was done; Err: why it was left alone.
fn undo(r: &LeftoverRecord) -> Result<String, String> {
    match r.kind.as_str() {
        SCHEDULER => crate::sweep::scheduler::undo_leftover(&r.detail),
        MYSQL_DATA_DIR | MYSQL_SOCKET_DIR | MYSQL_DATABASE => {
            crate::database::mariadb::leftovers::undo(&r.kind, &r.detail)
        }
        kind => crate::database::pg::leftovers::undo(kind, &r.detail),
    }
}

/// The leftovers whose maker is gone (killed, or ended leaving them): stale.
fn stale(known: &Known) -> Vec<&LeftoverRecord> {
    known
        .leftovers
        .iter()
        .filter(|l| !l.owner_alive())
        .collect()
}

/// Every leftover the store knows, and how many are stale.
pub(super) fn list(known: &Known) -> (Vec<LeftoverJson>, usize) {
    let listed = (known.leftovers.iter())
        .map(|l| LeftoverJson {
            what: l.what.clone(),
            kind: l.kind.clone(),
            description: words(&l.kind),
            pid: l.pid,
            running: l.owner_alive(),
            noted_at: l.created_at.clone(),
            undo: l.undo.clone(),
        })
        .collect();
    (listed, stale(known).len())
}

/// Undoes the stale leftovers (with `paths`, only those under one of them), one action
/// each; returns how many were undone and how many were left (and why, said).
pub(super) fn clean(
    o: &mut Vec<Action>,
    paths: &[std::path::PathBuf],
    known: &Known,
) -> (usize, usize) {
    let (mut undone, mut left) = (0, 0);
    for l in stale(known) {
        if !paths.is_empty()
            && !paths
                .iter()
                .any(|p| Path::new(&l.what).starts_with(canonical(p)))
        {
            continue;
        }
        match undo(l) {
            Ok(done) => {
                crate::safety::cleanup::undone_record(l.id);
                o.push(Action {
                    path: l.what.clone(),
                    done,
                    left: false,
                });
                undone += 1;
            }
            Err(why) => {
                o.push(Action {
                    path: l.what.clone(),
                    done: format!(
                        "LEFT: {}: {why}; undo it by hand when it is yours: {}",
                        words(&l.kind),
                        l.undo
                    ),
                    left: true,
                });
                left += 1;
            }
        }
    }
    (undone, left)
}
