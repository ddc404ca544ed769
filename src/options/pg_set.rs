//! What `--pg-set NAME=VALUE` may set on a throwaway server: measurement settings only.
//!
//! The server runs on a private Unix socket, as a user that owns nothing else, and runs
//! nothing but PostgreSQL. A setting is taken only when it is on [`ALLOWED`] — memory,
//! I/O, WAL, checkpoints, vacuum, planner costs and methods, statistics, the server's own
//! log — an allow-list, so a setting a new PostgreSQL adds is refused until it is judged
//! here. [`denied`] says, first and apart from the list, why the settings that would open
//! the server, make it run a program or load code, or write outside the run directory are
//! refused: a second line of defence should one ever be added to the list by mistake.
//!
//! The value reaches postgres as one argument (`-c NAME=VALUE`, no shell, no configuration
//! file parsed): it cannot carry a second setting; control characters (a newline, which a
//! configuration file would end the setting at) are refused all the same.

/// The longest name PostgreSQL gives a setting (NAMEDATALEN - 1).
const MAX_NAME: usize = 63;
/// The longest value taken (no measurement setting needs more).
const MAX_VALUE: usize = 1024;

/// The settings `--pg-set` takes (PostgreSQL 15 to 18), by what they are about.
pub const ALLOWED: &[&str] = &[
    // Memory.
    "shared_buffers",
    "huge_pages",
    "huge_page_size",
    "shared_memory_type",
    "dynamic_shared_memory_type",
    "min_dynamic_shared_memory",
    "work_mem",
    "maintenance_work_mem",
    "autovacuum_work_mem",
    "temp_buffers",
    "hash_mem_multiplier",
    "vacuum_buffer_usage_limit",
    "commit_timestamp_buffers",
    "multixact_member_buffers",
    "multixact_offset_buffers",
    "notify_buffers",
    "serializable_buffers",
    "subtransaction_buffers",
    "transaction_buffers",
    // Disk, kernel resources, connections.
    "temp_file_limit",
    "max_files_per_process",
    "max_connections",
    // Asynchronous I/O and parallelism.
    "io_method",
    "io_workers",
    "io_max_concurrency",
    "io_combine_limit",
    "io_max_combine_limit",
    "effective_io_concurrency",
    "maintenance_io_concurrency",
    "backend_flush_after",
    "file_copy_method",
    "max_worker_processes",
    "max_parallel_workers",
    "max_parallel_workers_per_gather",
    "max_parallel_maintenance_workers",
    "parallel_leader_participation",
    "debug_io_direct",
    // Background writer.
    "bgwriter_delay",
    "bgwriter_lru_maxpages",
    "bgwriter_lru_multiplier",
    "bgwriter_flush_after",
    // WAL.
    "fsync",
    "synchronous_commit",
    "wal_sync_method",
    "full_page_writes",
    "wal_log_hints",
    "wal_compression",
    "wal_init_zero",
    "wal_recycle",
    "wal_buffers",
    "wal_writer_delay",
    "wal_writer_flush_after",
    "wal_skip_threshold",
    "wal_level",
    "commit_delay",
    "commit_siblings",
    // Checkpoints.
    "checkpoint_timeout",
    "checkpoint_completion_target",
    "checkpoint_flush_after",
    "checkpoint_warning",
    "max_wal_size",
    "min_wal_size",
    // Vacuum.
    "vacuum_cost_delay",
    "vacuum_cost_limit",
    "vacuum_cost_page_dirty",
    "vacuum_cost_page_hit",
    "vacuum_cost_page_miss",
    "autovacuum",
    "autovacuum_analyze_scale_factor",
    "autovacuum_analyze_threshold",
    "autovacuum_freeze_max_age",
    "autovacuum_max_workers",
    "autovacuum_multixact_freeze_max_age",
    "autovacuum_naptime",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_vacuum_max_threshold",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_threshold",
    "autovacuum_worker_slots",
    // Planner costs and methods.
    "seq_page_cost",
    "random_page_cost",
    "cpu_tuple_cost",
    "cpu_index_tuple_cost",
    "cpu_operator_cost",
    "effective_cache_size",
    "parallel_setup_cost",
    "parallel_tuple_cost",
    "min_parallel_table_scan_size",
    "min_parallel_index_scan_size",
    "synchronize_seqscans",
    "default_toast_compression",
    "enable_async_append",
    "enable_bitmapscan",
    "enable_distinct_reordering",
    "enable_gathermerge",
    "enable_group_by_reordering",
    "enable_hashagg",
    "enable_hashjoin",
    "enable_incremental_sort",
    "enable_indexonlyscan",
    "enable_indexscan",
    "enable_material",
    "enable_memoize",
    "enable_mergejoin",
    "enable_nestloop",
    "enable_parallel_append",
    "enable_parallel_hash",
    "enable_partition_pruning",
    "enable_partitionwise_aggregate",
    "enable_partitionwise_join",
    "enable_presorted_aggregate",
    "enable_self_join_elimination",
    "enable_seqscan",
    "enable_sort",
    "enable_tidscan",
    // Statistics.
    "track_io_timing",
    "track_wal_io_timing",
    "track_counts",
    "track_activities",
    "track_activity_query_size",
    "track_commit_timestamp",
    "track_cost_delay_timing",
    // The server's own log (its stderr, a file in the run directory).
    "log_checkpoints",
    "log_autovacuum_min_duration",
    "log_temp_files",
    "log_lock_waits",
    "log_min_duration_statement",
    "log_min_messages",
    "log_statement",
];

/// Why `name` is never set on a throwaway server, whatever [`ALLOWED`] says.
pub fn denied(name: &str) -> Option<&'static str> {
    const OPENS: &str = "opens the server to other users or hosts (dbio's throwaway server listens on its private Unix socket only)";
    const RUNS: &str = "makes the server run a program";
    const LOADS: &str = "makes the server load code";
    const FILES: &str = "makes the server read or write files outside its run directory";
    if name.ends_with("_command") {
        return Some(RUNS);
    }
    if name.starts_with("ssl") || name.starts_with("unix_socket") || name.starts_with("bonjour") {
        return Some(OPENS);
    }
    if name.starts_with("include") || name.starts_with("syslog") {
        return Some(FILES);
    }
    Some(match name {
        "listen_addresses" | "port" | "hba_file" | "ident_file" | "krb_server_keyfile"
        | "primary_conninfo" | "primary_slot_name" => OPENS,
        "archive_mode" | "archive_library" => RUNS,
        "shared_preload_libraries"
        | "session_preload_libraries"
        | "local_preload_libraries"
        | "dynamic_library_path"
        | "jit"
        | "jit_provider"
        | "extension_destdir"
        | "extension_control_path"
        | "oauth_validator_libraries" => LOADS,
        "config_file"
        | "data_directory"
        | "external_pid_file"
        | "log_directory"
        | "log_filename"
        | "logging_collector"
        | "log_destination"
        | "event_source"
        | "stats_temp_directory" => FILES,
        _ => return None,
    })
}

/// Whether `--pg-set NAME=VALUE` may be given to a throwaway server; why not, naming the
/// setting, else. `name` as typed (any case).
pub fn check(name: &str, value: &str) -> Result<(), String> {
    super::server_set::AllowList {
        max_name: MAX_NAME,
        underscore_first: true,
        what_a_name_is: "(a plain identifier: letters, digits and '_'), e.g. io_method=worker",
        allowed: ALLOWED,
        denied,
        what_the_list_is: "measurement settings dbio sets on its throwaway server (memory, I/O, WAL, checkpoints, vacuum, planner, statistics; the list is in docs/safety.md)",
        value_needed: false,
        max_value: MAX_VALUE,
    }
    .check(name, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measurement_settings_pass_and_what_opens_runs_or_loads_does_not() {
        for (n, v) in [
            ("io_method", "worker"),
            ("IO_METHOD", "io_uring"),
            ("effective_io_concurrency", "64"),
            ("shared_buffers", "256MB"),
            ("wal_sync_method", "open_datasync"),
            ("commit_delay", "100"),
            ("debug_io_direct", "data,wal"),
            ("random_page_cost", "1.1"),
        ] {
            assert_eq!(check(n, v), Ok(()), "{n}={v}");
        }
        for (n, says) in [
            ("listen_addresses", "opens the server"),
            ("port", "opens the server"),
            ("unix_socket_directories", "opens the server"),
            ("unix_socket_permissions", "opens the server"),
            ("unix_socket_group", "opens the server"),
            ("hba_file", "opens the server"),
            ("ident_file", "opens the server"),
            ("ssl", "opens the server"),
            ("ssl_passphrase_command", "run a program"),
            ("archive_command", "run a program"),
            ("archive_library", "run a program"),
            ("archive_mode", "run a program"),
            ("restore_command", "run a program"),
            ("archive_cleanup_command", "run a program"),
            ("recovery_end_command", "run a program"),
            ("some_future_command", "run a program"),
            ("shared_preload_libraries", "load code"),
            ("session_preload_libraries", "load code"),
            ("local_preload_libraries", "load code"),
            ("dynamic_library_path", "load code"),
            ("jit_provider", "load code"),
            ("config_file", "outside its run directory"),
            ("data_directory", "outside its run directory"),
            ("external_pid_file", "outside its run directory"),
            ("log_directory", "outside its run directory"),
            ("log_filename", "outside its run directory"),
            ("logging_collector", "outside its run directory"),
            ("include", "outside its run directory"),
            ("include_dir", "outside its run directory"),
            ("Listen_Addresses", "opens the server"),
        ] {
            let e = check(n, "x").unwrap_err();
            assert!(
                e.contains(&n.to_ascii_lowercase()) && e.contains(says),
                "{n}: {e}"
            );
        }
        // The deny-list and the allow-list never meet.
        for n in ALLOWED {
            assert_eq!(denied(n), None, "{n}");
            assert!(check(n, "1").is_ok(), "{n}");
        }
        // Not on the list: refused, named.
        let e = check("geqo", "off").unwrap_err();
        assert!(e.contains("geqo is not one of"), "{e}");
        // Not a plain identifier: an extension's setting, quotes, spaces, '=' ...
        for n in [
            "auto_explain.log_min_duration",
            "a b",
            "a-b",
            "1abc",
            "",
            "x\"y",
        ] {
            assert!(
                check(n, "1").unwrap_err().contains("not a setting's name"),
                "{n}"
            );
        }
        assert!(check(&"a".repeat(64), "1").is_err());
    }

    #[test]
    fn a_value_cannot_carry_a_second_setting() {
        for v in [
            "on\narchive_command='x'",
            "on\rx",
            "a\tb",
            "a\u{0}b",
            "a\u{85}b",
        ] {
            let e = check("fsync", v).unwrap_err();
            assert!(
                e.contains("fsync") && e.contains("control character"),
                "{v:?}: {e}"
            );
        }
        assert!(check("shared_buffers", &"9".repeat(2000)).is_err());
        // '=' and quotes in a value are the value's (postgres gets one argument).
        assert!(check("debug_io_direct", "data,wal").is_ok());
    }
}
