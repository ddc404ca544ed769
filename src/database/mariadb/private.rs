//! The one database a run makes, `dbio_<run id>`: created (refused when it exists), marked
//! as dbio's by its COMMENT (`dbio <version> run <id>`; on MySQL, which has no database
//! comments, by a table `dbio_mark` carrying it), and dropped at the end, on errors and
//! after a signal. `dbio mysql clean` drops only `dbio_*` databases carrying that mark.
//!
//! A run owns its database while it lives: before creating it, the run takes the named
//! lock `dbio_<run id>` (`GET_LOCK`) on a connection of its own held for the run's whole
//! life; `dbio mysql clean` takes the same lock first and leaves a held database alone.

use mysql::Conn;
use mysql::prelude::Queryable;

use crate::error::{Error, Result};
use crate::safety::cleanup::{Leftover, MYSQL_DATABASE, Recorded};

use super::connect::{Target, error_text, server_code};

/// The mark: `dbio <version> run <id>`.
pub fn mark(run_id: &str) -> String {
    format!("dbio {} run {run_id}", env!("CARGO_PKG_VERSION"))
}

/// Whether `comment` is dbio's mark.
fn is_mark(comment: &str) -> bool {
    let w: Vec<&str> = comment.split(' ').collect();
    matches!(w.as_slice(), ["dbio", v, "run", id] if !v.is_empty() && !id.is_empty())
}

/// The database's name for run `run_id` (lowercase letters, digits and `_`).
pub fn name(run_id: &str) -> String {
    crate::database::pg::schema::name(run_id)
}

/// Whether `name` is a name dbio gives its databases: needs no quoting in SQL.
fn is_dbio_name(name: &str) -> bool {
    name.starts_with("dbio_")
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

fn sql_err(what: &str, e: &mysql::Error) -> Error {
    Error::other(format!("{what}: {}", error_text(e)))
}

/// Takes `name`'s lock on `c` without waiting; false when another connection holds it.
fn try_lock(c: &mut Conn, name: &str) -> Result<bool> {
    let got: Option<Option<i64>> = c
        .exec_first("SELECT GET_LOCK(?, 0)", (name,))
        .map_err(|e| sql_err("GET_LOCK", &e))?;
    Ok(got.flatten() == Some(1))
}

fn unlock(c: &mut Conn, name: &str) {
    let _: std::result::Result<Option<Option<i64>>, _> =
        c.exec_first("SELECT RELEASE_LOCK(?)", (name,));
}

/// Who holds `name`'s lock: "connection 12 (user@host)" as far as this user may see.
fn holder(c: &mut Conn, name: &str) -> String {
    let id: Option<Option<u64>> = c
        .exec_first("SELECT IS_USED_LOCK(?)", (name,))
        .ok()
        .flatten();
    match id.flatten() {
        Some(id) => format!("connection {id}"),
        None => "a connection".into(),
    }
}

/// The leftover record of database `name` on the server `t` reaches.
fn leftover(name: &str, t: &Target) -> Leftover {
    let url = t.url();
    Leftover {
        kind: MYSQL_DATABASE,
        what: what(name, t),
        undo: format!(
            "dbio mysql clean --mysql {}",
            crate::units::shell_word(&url)
        ),
        detail: serde_json::json!({ "database": name, "url": url }).to_string(),
    }
}

/// How a database is named in the leftover records: `dbio_x at user@host:port/db`.
pub fn what(name: &str, t: &Target) -> String {
    format!("{name} at {}", t.describe())
}

/// The run's database while it exists: its lock held on a connection of its own, dropped
/// when this is dropped.
pub struct Private {
    pub name: String,
    target: Target,
    holder: Option<Conn>,
    record: Option<Recorded>,
    dropped: bool,
}

impl Private {
    /// Takes the lock, notes the leftover, then creates and marks the database; refused
    /// when one of that name exists or its lock is held.
    pub fn create(target: &Target, run_id: &str) -> Result<Private> {
        let name = name(run_id);
        let mut t = target.clone();
        let mut holder = t.connect("--mysql")?;
        if !try_lock(&mut holder, &name)? {
            return Err(Error::other(format!(
                "database {name} is held by another session ({}); dbio never uses a database it did not make",
                self::holder(&mut holder, &name)
            )));
        }
        let exists: Option<String> = holder
            .exec_first(
                "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
                (&name,),
            )
            .map_err(|e| sql_err("information_schema.SCHEMATA", &e))?;
        if exists.is_some() {
            return Err(Error::usage(format!(
                "database {name} exists already; dbio never uses a database it did not make"
            )));
        }
        let record = Recorded::note(&leftover(&name, target));
        let m = mark(run_id);
        let made = holder
            .query_drop(format!(
                "CREATE DATABASE {name} CHARACTER SET latin1 COMMENT '{m}'"
            ))
            .or_else(|e| {
                // MySQL has no database comment: the mark is a table's.
                if server_code(&e) != Some(1064) {
                    return Err(e);
                }
                holder.query_drop(format!("CREATE DATABASE {name} CHARACTER SET latin1"))?;
                holder.query_drop(format!(
                    "CREATE TABLE {name}.dbio_mark (id int PRIMARY KEY) COMMENT '{m}'"
                ))
            });
        if let Err(e) = made {
            let _ = drop_marked(&mut holder, &name);
            record.undone();
            return Err(sql_err(&format!("cannot create database {name}"), &e));
        }
        Ok(Private {
            name,
            target: t,
            holder: Some(holder),
            record: Some(record),
            dropped: false,
        })
    }

    /// Drops it (if it still carries the mark) and lets its lock go; a second call does
    /// nothing. What could not be dropped stays a noted leftover.
    pub fn drop_now(&mut self) -> Result<()> {
        if self.dropped {
            return Ok(());
        }
        self.dropped = true;
        let target = &mut self.target;
        crate::database::drop_private(&self.name, self.holder.take(), &mut self.record, || {
            target.connect("--mysql")
        })
    }

    /// It lives in a throwaway server's data directory, removed with the server (or named
    /// as that directory's leftover): it is no leftover of its own.
    pub fn goes_with_the_server(&mut self) {
        if let Some(r) = self.record.take() {
            r.undone();
        }
    }
}

impl crate::database::Holding for Conn {
    fn alive(mut self) -> Option<Conn> {
        self.ping().is_ok().then_some(self)
    }

    fn try_lock(&mut self, name: &str) -> Result<bool> {
        try_lock(self, name)
    }

    fn holder(&mut self, name: &str) -> String {
        holder(self, name)
    }

    fn drop_marked(&mut self, name: &str) -> std::result::Result<bool, String> {
        drop_marked(self, name)
    }

    fn unlock(&mut self, name: &str) {
        unlock(self, name)
    }
}

impl Drop for Private {
    fn drop(&mut self) {
        if let Err(e) = self.drop_now() {
            stderr_line!(
                "dbio: warning: database {} could not be dropped ({e}); `dbio mysql clean` drops it",
                self.name
            );
        }
    }
}

/// The mark database `name` carries, if any (its comment, or its `dbio_mark` table's).
fn mark_of(c: &mut Conn, name: &str) -> std::result::Result<Option<String>, String> {
    let comment: Option<Option<String>> = c
        .exec_first(
            "SELECT SCHEMA_COMMENT FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
            (name,),
        )
        .or_else(|e| {
            // MySQL's SCHEMATA has no SCHEMA_COMMENT column.
            if server_code(&e) == Some(1054) {
                c.exec_first(
                    "SELECT NULL FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
                    (name,),
                )
            } else {
                Err(e)
            }
        })
        .map_err(|e| error_text(&e))?;
    let Some(comment) = comment else {
        return Ok(None);
    };
    if let Some(m) = comment.filter(|m| is_mark(m)) {
        return Ok(Some(m));
    }
    let table: Option<String> = c
        .exec_first(
            "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'dbio_mark'",
            (name,),
        )
        .map_err(|e| error_text(&e))?;
    Ok(table.filter(|m| is_mark(m)).or(Some(String::new())))
}

/// Drops database `name` if it carries dbio's mark. The caller holds its lock. Ok(true):
/// dropped; Ok(false): not dbio's or not there (left alone); Err: why it was left.
fn drop_marked(c: &mut Conn, name: &str) -> std::result::Result<bool, String> {
    if !is_dbio_name(name) {
        return Ok(false);
    }
    match mark_of(c, name)? {
        None => Ok(false),
        Some(m) if m.is_empty() => Ok(false),
        Some(_) => {
            // The name was checked: [a-z0-9_] after dbio_.
            c.query_drop(format!("DROP DATABASE {name}"))
                .map_err(|e| error_text(&e))?;
            Ok(true)
        }
    }
}

/// What `dbio mysql clean` did with each marked database.
#[derive(Debug, Default)]
pub struct Cleaned {
    pub dropped: Vec<String>,
    pub left: Vec<(String, String)>,
}

/// Drops database `name` (dbio's, by its mark) unless a running run holds it.
pub fn drop_one(c: &mut Conn, name: &str) -> std::result::Result<bool, String> {
    match try_lock(c, name) {
        Ok(true) => {}
        Ok(false) => return Err(format!("in use by a running run ({})", holder(c, name))),
        Err(e) => return Err(e.to_string()),
    }
    let r = drop_marked(c, name);
    unlock(c, name);
    r
}

/// `dbio mysql clean`: drops every `dbio_*` database carrying dbio's mark that no running
/// run holds; says why each other marked one was left.
pub fn clean(c: &mut Conn) -> Result<Cleaned> {
    let names: Vec<String> = c
        .query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'dbio\\_%' ORDER BY 1")
        .map_err(|e| sql_err("information_schema.SCHEMATA", &e))?;
    let mut out = Cleaned::default();
    for name in names {
        match drop_one(c, &name) {
            Ok(true) => out.dropped.push(name),
            Ok(false) => {}
            Err(why) => out.left.push((name, why)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dbio_marks_and_names_are_dbios() {
        assert!(is_mark(&mark("20261124T051500_ab12")));
        assert!(!is_mark("dbio"));
        assert!(!is_mark("my shop"));
        assert!(is_dbio_name(&name("20261124T051500_ab12")));
        assert!(!is_dbio_name("dbio_X"));
        assert!(!is_dbio_name("shop"));
        assert!(!is_dbio_name("dbio_a`b"));
    }
}
