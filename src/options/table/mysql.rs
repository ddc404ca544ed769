//! The database a run goes through: `dbio mysql run` (MariaDB, or MySQL by URL).

use crate::options::parse::*;
use crate::options::{Applies, Group, Opt, heading};
use std::path::PathBuf;

pub(super) const MYSQL: &[Opt] = &[
    Opt {
        name: "mysql",
        short: None,
        key: None,
        value: Some("URL"),
        default: None,
        help: "An existing MariaDB 10.6+ or MySQL 8 server: mysql://user@host[:port]/db or mysql://user@localhost/db?socket=/run/mysqld/mysqld.sock. No password in the URL: MYSQL_PWD, or a prompt on the terminal. Its settings are never changed and its counters never reset; everything dbio makes lives in one database dbio_<run id> (marked by its COMMENT), dropped at the end.",
        heading: heading::MYSQL,
        group: Group::Mysql,
        applies: Applies::All,
        with_classes: false,
        conflicts: &["mysql-bin"],
        requires: None,
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
    },
    Opt {
        name: "mysql-bin",
        short: None,
        key: None,
        value: Some("DIR"),
        default: None,
        help: "Start a throwaway MariaDB server from the mariadbd in DIR (e.g. /usr/sbin; mariadb-install-db and my_print_defaults from DIR/../bin): made in the run directory as the system user dbio when dbio runs as root, on a private Unix socket only (--skip-networking), with performance_schema on and settings for a measurement; stopped and removed at the end, on errors and on signals. The programs and every directory above them must belong to root (or you) and be writable by no one else.",
        heading: heading::MYSQL,
        group: Group::Mysql,
        applies: Applies::All,
        with_classes: false,
        conflicts: &["mysql"],
        requires: None,
        set: |a, t| {
            if t.is_empty() {
                return Err("a directory holding mariadbd, e.g. /usr/sbin".into());
            }
            a.mysql_bin = Some(PathBuf::from(t));
            Ok(())
        },
        get: |a| a.mysql_bin.as_ref().map(|p| p.display().to_string()),
    },
    Opt {
        name: "mysql-set",
        short: None,
        key: None,
        value: Some("NAME=VALUE"),
        default: None,
        help: "A setting of the throwaway server (--mysql-bin), e.g. innodb_flush_method=fsync, innodb_doublewrite=0, innodb_buffer_pool_size=64M, innodb_use_native_aio=0; may be given more than once, and wins over dbio's own. InnoDB measurement settings only: one that opens the server, runs a program, loads code or names files is refused.",
        heading: heading::MYSQL,
        group: Group::Mysql,
        applies: Applies::All,
        with_classes: false,
        conflicts: &["mysql"],
        requires: Some("mysql-bin"),
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
    },
];
