//! The one schema a run makes, `dbio_<run id>`: created (refused when it exists), marked
//! with a comment as dbio's, and dropped at the end, on errors and after a signal. `dbio pg
//! clean` drops only `dbio_*` schemas carrying that mark.
//!
//! A run owns its schema while it lives: before creating it, the run takes a session-level
//! advisory lock keyed on its name, on a connection of its own held for the run's whole
//! life; `dbio pg clean` takes the same lock first and leaves a held schema alone, naming
//! who holds it. Drops are RESTRICT: an object outside the schema that depends on one in it
//! (a user's view over its table, a foreign key to it) is named, never dropped.

use postgres::{Client, Config};

use crate::error::{Error, Result};
use crate::safety::cleanup::{Leftover, PG_SCHEMA, Recorded};

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

/// The advisory lock class of a run's schema ("dbio"): `pg_try_advisory_lock(CLASS, key)`,
/// seen in `pg_locks` as classid = CLASS, objid = key, objsubid = 2.
const LOCK_CLASS: i32 = 0x6462_696f;

/// The lock key of schema `name` (FNV-1a of the name, kept positive).
fn lock_key(name: &str) -> i32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (h & 0x7fff_ffff) as i32
}

/// Takes the schema's lock on `c` without waiting; false when another session holds it.
fn try_lock(c: &mut Client, name: &str) -> Result<bool> {
    c.query_one(
        "SELECT pg_try_advisory_lock($1, $2)",
        &[&LOCK_CLASS, &lock_key(name)],
    )
    .map(|r| r.get(0))
    .map_err(|e| Error::other(connect::error_text(&e)))
}

/// Lets the schema's lock go on `c` (a closed connection lets it go by itself).
fn unlock(c: &mut Client, name: &str) {
    let _ = c.query_one(
        "SELECT pg_advisory_unlock($1, $2)",
        &[&LOCK_CLASS, &lock_key(name)],
    );
}

/// Who holds schema `name`'s lock, in words: "dbio pid 812 (backend pid 4411, application
/// 'dbio pid 812')", as far as this role may see.
fn holder(c: &mut Client, name: &str) -> String {
    let row = c.query_opt(
        "SELECT a.pid, coalesce(a.application_name, ''), coalesce(a.backend_start::text, '')
         FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
           AND l.classid::int8 = $1::int8 AND l.objid::int8 = $2::int8
         LIMIT 1",
        &[&i64::from(LOCK_CLASS), &i64::from(lock_key(name))],
    );
    match row {
        Ok(Some(r)) => {
            let pid: Option<i32> = r.get(0);
            let app: String = r.get(1);
            let since: String = r.get(2);
            let mut words = vec![format!(
                "backend pid {}",
                pid.map_or("?".into(), |p| p.to_string())
            )];
            if !app.is_empty() {
                words.push(format!("application '{}'", crate::units::shown(&app)));
            }
            if !since.is_empty() {
                words.push(format!("connected {since}"));
            }
            words.join(", ")
        }
        _ => "a session this role cannot see".into(),
    }
}

/// The leftover record of schema `name` on the server `config` reaches.
fn leftover(name: &str, config: &Config) -> Leftover {
    let conn = connect::conninfo(config);
    Leftover {
        kind: PG_SCHEMA,
        what: what(name, config),
        undo: format!("dbio pg clean --pg {}", crate::units::shell_word(&conn)),
        detail: serde_json::json!({ "schema": name, "conn": conn }).to_string(),
    }
}

/// How a schema is named in the leftover records: `dbio_x at user@host:port/db`.
pub fn what(name: &str, config: &Config) -> String {
    format!("{name} at {}", connect::describe(config))
}

/// The schema of a run while it exists: its lock held on a connection of its own for the
/// run's whole life (so `dbio pg clean` leaves it alone, and a session's broken connection
/// cannot take the lock with it), and dropped when this is dropped.
pub struct Schema {
    pub name: String,
    config: Config,
    /// The connection holding the schema's advisory lock.
    holder: Option<Client>,
    /// Its leftover record, made before the schema was.
    record: Option<Recorded>,
    dropped: bool,
}

impl Schema {
    /// Takes the schema's lock on a connection of its own, notes it as a leftover, then
    /// creates and marks it; refused when a schema of that name exists or its lock is held.
    pub fn create(config: &Config, run_id: &str) -> Result<Schema> {
        let name = name(run_id);
        let mut own = config.clone();
        own.application_name(&format!("dbio pid {}", std::process::id()));
        let mut holder = own
            .connect(postgres::NoTls)
            .map_err(|e| Error::other(connect::error_text(&e)))?;
        if !try_lock(&mut holder, &name)? {
            return Err(Error::other(format!(
                "schema {name} is held by another session ({}); dbio never uses a schema it did not make",
                self::holder(&mut holder, &name)
            )));
        }
        let exists: bool = holder
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
        let record = Recorded::note(&leftover(&name, config));
        // One transaction: the schema exists with its mark, or not at all.
        let sql = format!(
            "BEGIN; CREATE SCHEMA {name}; COMMENT ON SCHEMA {name} IS '{}'; COMMIT",
            mark(run_id)
        );
        if let Err(e) = holder.batch_execute(&sql) {
            let _ = holder.batch_execute("ROLLBACK");
            record.undone();
            return Err(Error::other(format!(
                "cannot create schema {name}: {}",
                connect::error_text(&e)
            )));
        }
        Ok(Schema {
            name,
            config: config.clone(),
            holder: Some(holder),
            record: Some(record),
            dropped: false,
        })
    }

    /// Drops it (its tables, then it, with RESTRICT: an object outside it that depends on
    /// them is named, never dropped) and lets its lock go. Errors are returned once; a
    /// second call does nothing. What could not be dropped stays a noted leftover.
    pub fn drop_now(&mut self) -> Result<()> {
        if self.dropped {
            return Ok(());
        }
        self.dropped = true;
        let config = &self.config;
        crate::database::drop_private(&self.name, self.holder.take(), &mut self.record, || {
            (config.connect(postgres::NoTls)).map_err(|e| Error::other(connect::error_text(&e)))
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

impl crate::database::Holding for Client {
    fn alive(mut self) -> Option<Client> {
        (!self.is_closed() && self.is_valid(std::time::Duration::from_secs(5)).is_ok())
            .then_some(self)
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

impl Drop for Schema {
    fn drop(&mut self) {
        if let Err(e) = self.drop_now() {
            stderr_line!(
                "dbio: warning: schema {} could not be dropped ({e}); `dbio pg clean` drops it",
                self.name
            );
        }
    }
}

/// Whether `name` is a name dbio gives its schemas (`dbio_` then `[a-z0-9_]`): such a name
/// needs no quoting in SQL.
fn is_dbio_name(name: &str) -> bool {
    name.starts_with("dbio_")
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The objects outside schema `name` that depend on an object in it (a view over its
/// table, a foreign key to it, a column of its row type), each as "view public.v (on table
/// dbio_x.blocks)".
fn dependents(c: &mut Client, name: &str) -> Result<Vec<String>, String> {
    const SQL: &str = "
        WITH ns AS (SELECT oid FROM pg_namespace WHERE nspname = $1),
        inside AS (
            SELECT 'pg_class'::regclass::oid AS classid, c.oid AS objid
              FROM pg_class c, ns WHERE c.relnamespace = ns.oid
            UNION ALL SELECT 'pg_type'::regclass::oid, t.oid
              FROM pg_type t, ns WHERE t.typnamespace = ns.oid
            UNION ALL SELECT 'pg_proc'::regclass::oid, p.oid
              FROM pg_proc p, ns WHERE p.pronamespace = ns.oid
        ),
        deps AS (
            SELECT d.refclassid, d.refobjid,
                CASE d.classid
                    WHEN 'pg_class'::regclass THEN
                        (SELECT relnamespace FROM pg_class WHERE oid = d.objid)
                    WHEN 'pg_rewrite'::regclass THEN
                        (SELECT c.relnamespace FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
                         WHERE r.oid = d.objid)
                    WHEN 'pg_constraint'::regclass THEN
                        (SELECT connamespace FROM pg_constraint WHERE oid = d.objid)
                    WHEN 'pg_type'::regclass THEN
                        (SELECT typnamespace FROM pg_type WHERE oid = d.objid)
                    WHEN 'pg_proc'::regclass THEN
                        (SELECT pronamespace FROM pg_proc WHERE oid = d.objid)
                    WHEN 'pg_trigger'::regclass THEN
                        (SELECT c.relnamespace FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                         WHERE t.oid = d.objid)
                    WHEN 'pg_attrdef'::regclass THEN
                        (SELECT c.relnamespace FROM pg_attrdef a JOIN pg_class c ON c.oid = a.adrelid
                         WHERE a.oid = d.objid)
                    WHEN 'pg_statistic_ext'::regclass THEN
                        (SELECT stxnamespace FROM pg_statistic_ext WHERE oid = d.objid)
                    WHEN 'pg_policy'::regclass THEN
                        (SELECT c.relnamespace FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid
                         WHERE p.oid = d.objid)
                END AS home,
                CASE d.classid
                    WHEN 'pg_rewrite'::regclass THEN pg_describe_object('pg_class'::regclass,
                        (SELECT ev_class FROM pg_rewrite WHERE oid = d.objid), 0)
                    ELSE pg_describe_object(d.classid, d.objid, 0)
                END AS what
            FROM pg_depend d
            JOIN inside i ON d.refclassid = i.classid AND d.refobjid = i.objid
            WHERE d.deptype IN ('n', 'a')
        )
        SELECT DISTINCT what || ' (on ' || pg_describe_object(refclassid, refobjid, 0) || ')'
        FROM deps, ns
        WHERE home IS DISTINCT FROM ns.oid
        ORDER BY 1";
    c.query(SQL, &[&name])
        .map(|rows| rows.iter().map(|r| r.get::<_, String>(0)).collect())
        .map_err(|e| connect::error_text(&e))
}

/// Drops schema `name` if it carries dbio's mark: first its tables, then it, both with
/// RESTRICT, in one transaction. An object outside it that depends on one of them is named
/// and nothing is dropped; so is anything left in it that dbio does not drop. The caller
/// holds the schema's lock. Ok(true): dropped; Ok(false): not dbio's (left alone); Err:
/// why it was left.
fn drop_marked(c: &mut Client, name: &str) -> std::result::Result<bool, String> {
    let row = c
        .query_opt(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
            &[&name],
        )
        .map_err(|e| connect::error_text(&e))?;
    let Some(row) = row else {
        return Ok(false);
    };
    let comment: Option<String> = row.get(0);
    if !comment.as_deref().is_some_and(is_mark) || !is_dbio_name(name) {
        return Ok(false);
    }
    let outside = dependents(c, name)?;
    if !outside.is_empty() {
        return Err(format!(
            "objects outside it depend on it, and dbio drops nothing of yours: {}; drop or change them first",
            outside.join(", ")
        ));
    }
    let tables: Vec<String> = c
        .query(
            "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
             ORDER BY 1",
            &[&name],
        )
        .map_err(|e| connect::error_text(&e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    // The name was checked above ([a-z0-9_] after dbio_); the tables' are quoted by format().
    let mut sql = String::from("BEGIN; SET LOCAL lock_timeout = '10s'; ");
    if !tables.is_empty() {
        sql.push_str(&format!("DROP TABLE {} RESTRICT; ", tables.join(", ")));
    }
    sql.push_str(&format!("DROP SCHEMA {name} RESTRICT; COMMIT"));
    if let Err(e) = c.batch_execute(&sql) {
        let _ = c.batch_execute("ROLLBACK");
        let detail = e
            .as_db_error()
            .and_then(|d| d.detail())
            .map(|d| format!(" ({})", d.replace('\n', "; ")))
            .unwrap_or_default();
        return Err(format!("{}{detail}", connect::error_text(&e)));
    }
    Ok(true)
}

/// What `dbio pg clean` did with each marked schema.
#[derive(Debug, Default)]
pub struct Cleaned {
    pub dropped: Vec<String>,
    /// Schemas left, and why.
    pub left: Vec<(String, String)>,
}

/// Drops schema `name` (dbio's, by its mark) unless a running run holds it. Ok(true):
/// dropped; Ok(false): not dbio's or not there; Err: why it was left.
pub fn drop_one(c: &mut Client, name: &str) -> std::result::Result<bool, String> {
    match try_lock(c, name) {
        Ok(true) => {}
        Ok(false) => {
            return Err(format!("in use by a running run ({})", holder(c, name)));
        }
        Err(e) => return Err(e.to_string()),
    }
    let r = drop_marked(c, name);
    unlock(c, name);
    r
}

/// `dbio pg clean`: drops every `dbio_*` schema carrying dbio's mark that no running run
/// holds; goes on past one it may not drop, and says why each was left.
pub fn clean(c: &mut Client) -> Result<Cleaned> {
    let rows = c
        .query(
            "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'dbio\\_%' ORDER BY 1",
            &[],
        )
        .map_err(|e| Error::other(connect::error_text(&e)))?;
    let mut out = Cleaned::default();
    for r in rows {
        let name: String = r.get(0);
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
    fn only_dbio_marks_are_marks() {
        assert!(is_mark(&mark("20261124T051500_ab12")));
        assert!(!is_mark("dbio"));
        assert!(!is_mark("made by me"));
        assert!(!is_mark("dbio 1.0 run x extra"));
        assert_eq!(name("20261124T051500-ab12"), "dbio_20261124t051500_ab12");
    }
}
