//! The server's facts: its version, `io_method` with the values this build allows (from
//! `pg_settings.enumvals`: a build without liburing has no `io_uring`), and every setting
//! that shapes the I/O of a run, with where each came from.

use crate::report::result_pg::{PgServer, PgSetting};

/// The settings recorded with every run (those this server has; the rest are left out).
/// Any other setting given on the server's command line is recorded too, with its value
/// redacted when it holds a secret ([`crate::safety::secret::redact_setting`]).
pub const SETTINGS: &[&str] = &[
    "io_method",
    "io_workers",
    "io_combine_limit",
    "io_max_combine_limit",
    "io_max_concurrency",
    "effective_io_concurrency",
    "maintenance_io_concurrency",
    "shared_buffers",
    "debug_io_direct",
    "data_checksums",
    "block_size",
    "wal_block_size",
    "wal_level",
    "wal_sync_method",
    "wal_buffers",
    "wal_writer_delay",
    "wal_compression",
    "full_page_writes",
    "synchronous_commit",
    "fsync",
    "commit_delay",
    "commit_siblings",
    "checkpoint_timeout",
    "checkpoint_completion_target",
    "checkpoint_flush_after",
    "backend_flush_after",
    "bgwriter_flush_after",
    "bgwriter_delay",
    "bgwriter_lru_maxpages",
    "max_wal_size",
    "max_connections",
    "max_parallel_workers_per_gather",
    "track_io_timing",
    "track_wal_io_timing",
    "autovacuum",
    "huge_pages",
];

/// Reads the server's facts on `client`.
pub fn read(client: &mut postgres::Client) -> Result<PgServer, postgres::Error> {
    let row = client.query_one(
        "SELECT current_setting('server_version_num')::int4, version()",
        &[],
    )?;
    let version_num = row.get::<_, i32>(0).max(0) as u32;
    let version: String = row.get(1);
    let names: Vec<String> = SETTINGS.iter().map(|s| s.to_string()).collect();
    // pg_settings shows only what this user may see; data_directory needs
    // pg_read_all_settings or superuser.
    let rows = client.query(
        "SELECT name::text, current_setting(name), source::text, enumvals::text[] \
         FROM pg_catalog.pg_settings \
         WHERE name = ANY($1) OR name = 'data_directory' OR source = 'command line' \
         ORDER BY name",
        &[&names],
    )?;
    let mut server = PgServer {
        version_num,
        version,
        ..PgServer::default()
    };
    for r in rows {
        let name: String = r.get(0);
        // A secret (a password, a program to run, a connection string) is never shown.
        let value = crate::safety::secret::redact_setting(&name, &r.get::<_, String>(1));
        let source: String = r.get(2);
        let enumvals: Option<Vec<String>> = r.get(3);
        match name.as_str() {
            "data_directory" => server.data_directory = Some(value),
            "io_method" => {
                server.io_method = Some(value.clone());
                server.io_method_allowed = enumvals.unwrap_or_default();
                server.settings.push(PgSetting {
                    name,
                    value,
                    source,
                });
            }
            _ => server.settings.push(PgSetting {
                name,
                value,
                source,
            }),
        }
    }
    Ok(server)
}
