//! The database a run goes through: `dbio mysql run` (MariaDB, or MySQL by URL).

use crate::options::parse::*;
use crate::options::{Group, Many, Opt, heading};
use std::path::PathBuf;

/// Every row of this part: what its rows share.
const ROW: Opt = Opt {
    heading: heading::MYSQL,
    group: Group::Mysql,
    ..Opt::DEFAULT
};

pub(super) const MYSQL: &[Opt] = &[
    Opt {
        name: "mysql",
        value: Some("URL"),
        help: "An existing MariaDB 10.6+ or MySQL 8 server: mysql://user@host[:port]/db or mysql://user@localhost/db?socket=/run/mysqld/mysqld.sock. No password in the URL: MYSQL_PWD, or a prompt on the terminal. Its settings are never changed and its counters never reset; everything dbio makes lives in one database dbio_<run id> (marked by its COMMENT), dropped at the end.",
        conflicts: &["mysql-bin"],
        set: |a, t| {
            if t.trim().is_empty() {
                return Err(
                    "a URL, e.g. mysql://dbio@localhost/mysql?socket=/run/mysqld/mysqld.sock"
                        .into(),
                );
            }
            a.mysql = Some(t.to_string());
            Ok(())
        },
        get: |a| a.mysql.clone(),
        ..ROW
    },
    Opt {
        name: "mysql-bin",
        value: Some("DIR"),
        help: "Start a throwaway MariaDB server from the mariadbd in DIR (e.g. /usr/sbin; mariadb-install-db and my_print_defaults from DIR/../bin): made in the run directory as the system user dbio when dbio runs as root, on a private Unix socket only (--skip-networking), with performance_schema on and settings for a measurement; stopped and removed at the end, on errors and on signals. The programs and every directory above them must belong to root (or you) and be writable by no one else.",
        conflicts: &["mysql"],
        set: |a, t| {
            if t.is_empty() {
                return Err("a directory holding mariadbd, e.g. /usr/sbin".into());
            }
            a.mysql_bin = Some(PathBuf::from(t));
            Ok(())
        },
        get: |a| a.mysql_bin.as_ref().map(|p| p.display().to_string()),
        ..ROW
    },
    Opt {
        name: "mysql-set",
        value: Some("NAME=VALUE"),
        help: "A setting of the throwaway server (--mysql-bin), e.g. innodb_flush_method=fsync, innodb_doublewrite=0, innodb_buffer_pool_size=64M, innodb_use_native_aio=0; may be given more than once, and wins over dbio's own. InnoDB measurement settings only: one that opens the server, runs a program, loads code or names files is refused.",
        conflicts: &["mysql"],
        requires: Some("mysql-bin"),
        many: Many::Repeat,
        set: |a, t| {
            a.mysql_set.push(mysql_setting(t)?);
            Ok(())
        },
        get: |a| {
            (!a.mysql_set.is_empty()).then(|| {
                let v: Vec<String> = a
                    .mysql_set
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                v.join(" ")
            })
        },
        ..ROW
    },
];
