//! The database a run goes through: `dbio pg run`.

use crate::options::parse::*;
use crate::options::{Group, Many, Opt, heading};
use std::path::PathBuf;

/// Every row of this part: what its rows share.
const ROW: Opt = Opt {
    heading: heading::PG,
    group: Group::Pg,
    ..Opt::DEFAULT
};

pub(super) const PG: &[Opt] = &[
    Opt {
        name: "pg",
        value: Some("URL"),
        help: "An existing PostgreSQL server: a URL (postgresql://user@host/db, postgresql:///db?host=/run/postgresql) or a key=value string (host=/tmp port=5432 user=me); PGHOST, PGPORT, PGUSER and PGDATABASE fill what it leaves out. Its settings are never changed (session-level SET only); everything dbio makes lives in one schema dbio_<run id>, dropped at the end.",
        conflicts: &["pg-bin"],
        set: |a, t| {
            if t.trim().is_empty() {
                return Err(
                    "a URL or key=value string, e.g. postgresql:///postgres?host=/run/postgresql"
                        .into(),
                );
            }
            a.pg = Some(t.to_string());
            Ok(())
        },
        get: |a| a.pg.clone(),
        ..ROW
    },
    Opt {
        name: "pg-bin",
        value: Some("DIR"),
        help: "Start a throwaway PostgreSQL server from the binaries in DIR (initdb, postgres; e.g. /usr/lib/postgresql/15/bin): made in the run directory as the system user dbio when dbio runs as root (a user that owns nothing else; the packages create it), on a private Unix socket only, with settings for a measurement; stopped and removed at the end, on errors and on signals. DIR and every directory above it must belong to root (or you) and be writable by no one else.",
        conflicts: &["pg"],
        set: |a, t| {
            if t.is_empty() {
                return Err("a directory holding initdb and postgres".into());
            }
            a.pg_bin = Some(PathBuf::from(t));
            Ok(())
        },
        get: |a| a.pg_bin.as_ref().map(|p| p.display().to_string()),
        ..ROW
    },
    Opt {
        name: "pg-set",
        value: Some("NAME=VALUE"),
        help: "A setting of the throwaway server (--pg-bin), e.g. io_method=worker or shared_buffers=256MB; may be given more than once, and wins over dbio's own. Measurement settings only (memory, I/O, WAL, checkpoints, vacuum, planner, statistics): one that opens the server, runs a program or loads code is refused.",
        conflicts: &["pg"],
        requires: Some("pg-bin"),
        many: Many::Repeat,
        set: |a, t| {
            a.pg_set.push(pg_setting(t)?);
            Ok(())
        },
        get: |a| {
            (!a.pg_set.is_empty()).then(|| {
                let v: Vec<String> = a.pg_set.iter().map(|(n, v)| format!("{n}={v}")).collect();
                v.join(" ")
            })
        },
        ..ROW
    },
];
