//! The commands of a test through a database that are more than a run: `dbio pg compare`
//! (both runs and their compare, recorded) and `dbio show c<ID>` (a recorded compare).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::cli::ShowArgs;
use crate::error::{Error, ExitCode, Result};
use crate::options::RunArgs;
use crate::store::Store;
use crate::units::Shown;

use super::record::{record_id, recorded_in_store};

/// A database's compare: its command, its page size, whose shapes the storage side runs
/// (`--like`), and its run given the directory its run directory goes in.
pub(super) type DbRun = (
    &'static str,
    u64,
    crate::workload::event::Like,
    fn(
        &RunArgs,
        Option<Arc<crate::safety::fs::Dir>>,
        &Arc<AtomicBool>,
    ) -> Result<crate::run::RunOutcome>,
);

/// PostgreSQL's (`dbio pg compare`).
pub(super) const PG: DbRun = (
    "pg",
    crate::database::pg::load::PAGE,
    crate::workload::event::Like::Postgres,
    crate::database::pg::run_in,
);
/// MariaDB/MySQL's (`dbio mysql compare`).
pub(super) const MYSQL: DbRun = (
    "mysql",
    crate::database::mariadb::load::PAGE,
    crate::workload::event::Like::Innodb,
    crate::database::mariadb::run_in,
);

/// `dbio pg compare`, `dbio mysql compare`: both runs recorded like runs, then the compare
/// with their ids (`dbio show c<ID>`), written into its directory; the one report (or
/// `--json`, the compare itself) printed.
pub(super) fn compare(
    a: &RunArgs,
    stop: &Arc<AtomicBool>,
    db: Option<&Path>,
    (command, page, like, run_in): DbRun,
) -> Result<ExitCode> {
    use crate::database::compare;
    let mut done = compare::compare_runs(a, (command, page, like), stop, &|a, held| {
        run_in(a, held, stop)
    })?;
    done.compared.database.run_id = record_id(db, &done.database).0;
    done.compared.storage.run_id = record_id(db, &done.storage).0;
    let c = &mut done.compared;
    let json = |c: &compare::Compared| {
        serde_json::to_string_pretty(c).map_err(|e| Error::other(e.to_string()))
    };
    let record = crate::store::CompareRecord {
        started_at: c.started_at.clone(),
        command: c.command.clone(),
        test: c.test.clone(),
        submission: c.submission.clone(),
        storage_run_id: c.storage.run_id,
        database_run_id: c.database.run_id,
        dir: done.dir.display().to_string(),
        schema: c.schema.clone(),
        json: json(c)?,
    };
    c.id = recorded_in_store(db, "compare c{id}", &done.dir, |store| {
        let id = store.record_compare(&record, &done.dir)?;
        let mut with_id = c.clone();
        with_id.id = Some(id);
        store.update_compare_json(id, &json(&with_id)?)?;
        Ok(id)
    })
    .0;
    if let Err(e) = compare::write(&done.dir, c) {
        stderr_line!("dbio: warning: {e}");
    }
    crate::report::Output::new(a.json, a.format).emit(&compare::report(c), c)?;
    stderr_line!("dbio: compare in {}", done.dir.shown());
    // The worse of the two: the database's, unless it was fine.
    Ok(if done.database.exit == ExitCode::Ok {
        done.storage.exit
    } else {
        done.database.exit
    })
}

/// `dbio show c<ID>`: a compare through a database, as recorded (`--json`: its
/// compare.json).
pub(super) fn show_compare(store: &Store, id: i64, a: &ShowArgs) -> Result<ExitCode> {
    let text = store.compare_json(id)?.ok_or_else(|| {
        Error::usage(format!(
            "ID c{id}: no such compare in {} (`dbio runs` lists them)",
            store.path().shown()
        ))
    })?;
    let out = crate::report::Output::new(a.options.0.json, a.options.0.format);
    // `--json` prints compare.json as it was recorded, even one this version cannot read.
    let stored: Box<serde_json::value::RawValue> = serde_json::from_str(&text)
        .map_err(|e| Error::other(format!("compare c{id} in the store cannot be read: {e}")))?;
    let report = if out.is_json() {
        crate::report::Report::default()
    } else {
        let c: crate::database::compare::Compared = serde_json::from_str(&text)
            .map_err(|e| Error::other(format!("compare c{id} in the store cannot be read: {e}")))?;
        crate::database::compare::report(&c)
    };
    out.emit(&report, &stored)?;
    Ok(ExitCode::Ok)
}

/// The compares `dbio runs` lists after the runs (all of them, as for memory runs, when no
/// test is asked for).
pub(super) fn compares(
    store: &Store,
    a: &crate::cli::RunsArgs,
) -> Result<Vec<crate::store::CompareListing>> {
    match a.options.0.only_test {
        None if !a.options.0.json => store.compares(a.options.0.last.map(|n| n as usize)),
        _ => Ok(Vec::new()),
    }
}
