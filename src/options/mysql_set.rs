//! What `--mysql-set NAME=VALUE` may set on a throwaway MariaDB server: InnoDB measurement
//! settings only.
//!
//! The server runs on a private Unix socket (`--skip-networking`), as a user that owns
//! nothing else. A setting is taken only when it is on [`ALLOWED`] — the buffer pool, flush
//! method, doublewrite, asynchronous I/O, redo, page cleaning and read-ahead — an
//! allow-list, so a setting a new release adds is refused until it is judged here.
//! [`denied`] says, first and apart from the list, why the settings that would open the
//! server, make it run a program or load code, or read and write files outside the run
//! directory are refused: a second line of defence should one ever be added to the list.
//!
//! The value reaches mariadbd as one argument (`--NAME=VALUE`, no shell, `--no-defaults`
//! first so no option file is read): it cannot carry a second option; control characters
//! are refused all the same.

/// The longest name taken.
const MAX_NAME: usize = 64;
/// The longest value taken.
const MAX_VALUE: usize = 256;

/// The settings `--mysql-set` takes (MariaDB 10.6 to 11.x), by what they are about.
pub const ALLOWED: &[&str] = &[
    // Memory.
    "innodb_buffer_pool_size",
    "innodb_buffer_pool_size_max",
    "innodb_buffer_pool_chunk_size",
    "innodb_log_buffer_size",
    "innodb_adaptive_hash_index",
    "innodb_old_blocks_time",
    "innodb_old_blocks_pct",
    "innodb_change_buffering",
    "innodb_change_buffer_max_size",
    // How files are opened and synced.
    "innodb_flush_method",
    "innodb_doublewrite",
    "innodb_use_native_aio",
    "innodb_linux_aio",
    "innodb_data_file_buffering",
    "innodb_data_file_write_through",
    "innodb_log_file_buffering",
    "innodb_log_file_write_through",
    "innodb_flush_log_at_trx_commit",
    "innodb_flush_log_at_timeout",
    "innodb_use_atomic_writes",
    "innodb_checksum_algorithm",
    // Redo.
    "innodb_log_file_size",
    "innodb_log_write_ahead_size",
    // Page cleaning and I/O threads.
    "innodb_io_capacity",
    "innodb_io_capacity_max",
    "innodb_flush_neighbors",
    "innodb_flush_sync",
    "innodb_lru_scan_depth",
    "innodb_lru_flush_size",
    "innodb_max_dirty_pages_pct",
    "innodb_max_dirty_pages_pct_lwm",
    "innodb_adaptive_flushing",
    "innodb_adaptive_flushing_lwm",
    "innodb_read_io_threads",
    "innodb_write_io_threads",
    // Read-ahead.
    "innodb_read_ahead_threshold",
    "innodb_random_read_ahead",
    // Purge and statistics.
    "innodb_purge_threads",
    "innodb_stats_persistent",
    "innodb_stats_auto_recalc",
    // Connections and caches.
    "max_connections",
    "table_open_cache",
    "thread_cache_size",
    "thread_handling",
    "max_allowed_packet",
];

/// Why `name` is never set on a throwaway server, whatever [`ALLOWED`] says.
pub fn denied(name: &str) -> Option<&'static str> {
    const OPENS: &str = "opens the server to other users or hosts (dbio's throwaway server listens on its private Unix socket only)";
    const RUNS: &str = "makes the server run a program or statements of its own";
    const LOADS: &str = "makes the server load code";
    const FILES: &str = "makes the server read or write files outside its run directory";
    if name.starts_with("ssl") || name.starts_with("tls") || name.contains("socket") {
        return Some(OPENS);
    }
    if name.starts_with("plugin") || name.ends_with("_plugin") || name.starts_with("load") {
        return Some(LOADS);
    }
    if name.starts_with("init_") {
        return Some(RUNS);
    }
    if name.ends_with("_dir")
        || name.ends_with("_file")
        || name.ends_with("_path")
        || name.ends_with("_directory")
        || name.starts_with("log_bin")
        || name.starts_with("defaults")
    {
        return Some(FILES);
    }
    Some(match name {
        "port"
        | "bind_address"
        | "skip_networking"
        | "networking"
        | "extra_port"
        | "proxy_protocol_networks"
        | "skip_grant_tables"
        | "named_pipe"
        | "user"
        | "mysqlx"
        | "admin_address" => OPENS,
        "event_scheduler" => RUNS,
        "datadir"
        | "basedir"
        | "tmpdir"
        | "log_error"
        | "general_log"
        | "slow_query_log"
        | "secure_file_priv"
        | "local_infile"
        | "pid_file"
        | "innodb_data_file_path"
        | "innodb_temp_data_file_path"
        | "innodb_undo_directory"
        | "innodb_tmpdir"
        | "innodb_log_group_home_dir"
        | "innodb_data_home_dir" => FILES,
        _ => return None,
    })
}

/// Whether `--mysql-set NAME=VALUE` may be given to a throwaway server; why not, naming the
/// setting, else. `name` with `_` (the caller turned `-` into `_`), any case.
pub fn check(name: &str, value: &str) -> Result<(), String> {
    super::server_set::AllowList {
        max_name: MAX_NAME,
        underscore_first: false,
        what_a_name_is: "(letters, digits and '_'), e.g. innodb_flush_method=fsync",
        allowed: ALLOWED,
        denied,
        what_the_list_is: "InnoDB measurement settings dbio sets on its throwaway server (buffer pool, flush method, doublewrite, AIO, redo, page cleaning, read-ahead; the list is in docs/safety.md)",
        value_needed: true,
        max_value: MAX_VALUE,
    }
    .check(name, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innodb_settings_pass_and_what_opens_runs_or_loads_does_not() {
        for (n, v) in [
            ("innodb_flush_method", "fsync"),
            ("INNODB_DOUBLEWRITE", "0"),
            ("innodb_buffer_pool_size", "64M"),
            ("innodb_use_native_aio", "0"),
            ("innodb_linux_aio", "aio"),
            ("innodb_flush_log_at_trx_commit", "2"),
        ] {
            assert_eq!(check(n, v), Ok(()), "{n}={v}");
        }
        for (n, says) in [
            ("port", "opens the server"),
            ("bind_address", "opens the server"),
            ("socket", "opens the server"),
            ("skip_networking", "opens the server"),
            ("ssl_cert", "opens the server"),
            ("user", "opens the server"),
            ("skip_grant_tables", "opens the server"),
            ("plugin_load_add", "load code"),
            ("plugin_dir", "load code"),
            ("init_file", "run a program"),
            ("init_connect", "run a program"),
            ("datadir", "outside its run directory"),
            ("tmpdir", "outside its run directory"),
            ("log_error", "outside its run directory"),
            ("general_log_file", "outside its run directory"),
            ("secure_file_priv", "outside its run directory"),
            ("log_bin", "outside its run directory"),
            ("innodb_data_home_dir", "outside its run directory"),
            ("Bind_Address", "opens the server"),
        ] {
            let e = check(n, "x").unwrap_err();
            assert!(
                e.contains(&n.to_ascii_lowercase()) && e.contains(says),
                "{n}: {e}"
            );
        }
        for n in ALLOWED {
            assert_eq!(denied(n), None, "{n}");
            assert!(check(n, "1").is_ok(), "{n}");
        }
        let e = check("query_cache_size", "1M").unwrap_err();
        assert!(e.contains("query_cache_size is not one of"), "{e}");
        for n in ["a b", "a-b", "1abc", "", "x\"y", "a.b"] {
            assert!(
                check(n, "1").unwrap_err().contains("not a setting's name"),
                "{n}"
            );
        }
        for v in ["O_DIRECT\n--init-file=/x", "a\tb", "a\u{0}b"] {
            assert!(
                check("innodb_flush_method", v)
                    .unwrap_err()
                    .contains("control character")
            );
        }
    }
}
