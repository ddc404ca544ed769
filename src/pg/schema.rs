//! The one schema a run makes, `dbio_<run id>`: created (refused when it exists), marked
//! with a comment as dbio's, and dropped at the end, on errors and after a signal. `dbio pg
//! clean` drops only `dbio_*` schemas carrying that mark.

use postgres::{Client, Config};

use crate::error::{Error, Result};

use super::connect;

/// The comment that marks a schema as dbio's: `dbio <version> run <id>`.
pub fn mark(run_id: &str) -> String {
    format!("dbio {} run {run_id}", env!("CARGO_PKG_VERSION"))
}

/// Whether `comment` is dbio's mark.
fn is_mark(comment: &str) -> bool {
    let mut w = comment.split(' ');
    matches!(
        (w.next(), w.next(), w.next(), w.next(), w.next()),
        (Some("dbio"), Some(v), Some("run"), Some(id), None)
            if !v.is_empty() && !id.is_empty()
    )
}

/// The schema's name for run `run_id` (lowercase letters, digits and `_` only).
pub fn name(run_id: &str) -> String {
    let id: String = run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("dbio_{id}")
}

/// The schema of a run while it exists: dropped when this is dropped (on its own
/// connection, so a session's broken connection cannot keep it).
pub struct Schema {
    pub name: String,
    config: Config,
    dropped: bool,
}

impl Schema {
    /// Creates and marks the schema; refused when a schema of that name exists.
    pub fn create(client: &mut Client, config: &Config, run_id: &str) -> Result<Schema> {
        let name = name(run_id);
        let exists: bool = client
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
                &[&name],
            )
            .map_err(|e| Error::other(connect::error_text(&e)))?
            .get(0);
        if exists {
            return Err(Error::usage(format!(
                "schema {name} exists already; dbio never uses a schema it did not make (drop it, or let the next run id differ)"
            )));
        }
        // One transaction: the schema exists with its mark, or not at all.
        let sql = format!(
            "BEGIN; CREATE SCHEMA {name}; COMMENT ON SCHEMA {name} IS '{}'; COMMIT",
            mark(run_id)
        );
        client.batch_execute(&sql).map_err(|e| {
            let _ = client.batch_execute("ROLLBACK");
            Error::other(format!(
                "cannot create schema {name}: {}",
                connect::error_text(&e)
            ))
        })?;
        Ok(Schema {
            name,
            config: config.clone(),
            dropped: false,
        })
    }

    /// Drops it with everything in it. Errors are returned once; a second call does nothing.
    pub fn drop_now(&mut self) -> Result<()> {
        if self.dropped {
            return Ok(());
        }
        self.dropped = true;
        let mut c = self
            .config
            .connect(postgres::NoTls)
            .map_err(|e| Error::other(connect::error_text(&e)))?;
        drop_marked(&mut c, &self.name).map(|_| ())
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        if let Err(e) = self.drop_now() {
            eprintln!(
                "dbio: warning: schema {} could not be dropped ({e}); `dbio pg clean` drops it",
                self.name
            );
        }
    }
}

/// Drops schema `name` if it carries dbio's mark. True when it was dropped.
fn drop_marked(c: &mut Client, name: &str) -> Result<bool> {
    let row = c
        .query_opt(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
            &[&name],
        )
        .map_err(|e| Error::other(connect::error_text(&e)))?;
    let Some(row) = row else {
        return Ok(false);
    };
    let comment: Option<String> = row.get(0);
    if !comment.as_deref().is_some_and(is_mark) {
        return Ok(false);
    }
    // The name was read from the catalog and is dbio_ followed by [a-z0-9_] only.
    if !name.starts_with("dbio_")
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Ok(false);
    }
    c.batch_execute(&format!("DROP SCHEMA {name} CASCADE"))
        .map_err(|e| {
            Error::other(format!(
                "cannot drop schema {name}: {}",
                connect::error_text(&e)
            ))
        })?;
    Ok(true)
}

/// `dbio pg clean`: drops every `dbio_*` schema carrying dbio's mark; returns their names.
pub fn clean(c: &mut Client) -> Result<Vec<String>> {
    let rows = c
        .query(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'dbio\\_%' ORDER BY 1",
            &[],
        )
        .map_err(|e| Error::other(connect::error_text(&e)))?;
    let mut dropped = Vec::new();
    for r in rows {
        let name: String = r.get(0);
        if drop_marked(c, &name)? {
            dropped.push(name);
        }
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dbio_marks_are_marks() {
        assert!(is_mark(&mark("20261124T051500_ab12")));
        assert!(!is_mark("dbio"));
        assert!(!is_mark("made by me"));
        assert!(!is_mark("dbio 1.0 run x extra"));
        assert_eq!(name("20261124T051500-ab12"), "dbio_20261124t051500_ab12");
    }
}
