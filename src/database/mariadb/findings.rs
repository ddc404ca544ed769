//! What InnoDB's figures mean, in words: how the flush method opened and synced the files,
//! what doublewrite cost, whether I/O was asynchronous, how many commits shared a log
//! write, whether the page cache answered the reads.

use std::collections::BTreeMap;

use crate::database::Asked;
use crate::database::pg::observe::findings::latency_words;
use crate::report::result_mysql::{MysqlInnodb, MysqlSection};

/// InnoDB's figures from the counter deltas over `interval_s`.
pub fn innodb(d: &BTreeMap<String, f64>, interval_s: f64) -> MysqlInnodb {
    let get = |k: &str| d.get(k).copied().map(|v| v as u64);
    let s = |k: &str| get(&format!("status.{k}")).unwrap_or(0);
    let per_s = |v: u64| {
        if interval_s > 0.0 {
            v as f64 / interval_s
        } else {
            0.0
        }
    };
    let (commits, commits_source) = match get("metrics.trx_rw_commits") {
        Some(c) => (c, "INNODB_METRICS trx_rw_commits".to_string()),
        None => (
            s("Com_insert") + s("Com_update") + s("Com_delete") + s("Com_commit"),
            "committing statements (Com_insert + Com_update + Com_delete + Com_commit)".to_string(),
        ),
    };
    let log_writes = s("Innodb_log_writes");
    let pages_written = s("Innodb_pages_written");
    let dblwr_pages = s("Innodb_dblwr_pages_written");
    MysqlInnodb {
        data_reads: s("Innodb_data_reads"),
        data_read_bytes: s("Innodb_data_read"),
        data_writes: s("Innodb_data_writes"),
        data_written_bytes: s("Innodb_data_written"),
        data_fsyncs: s("Innodb_data_fsyncs"),
        pages_read: s("Innodb_pages_read"),
        pages_written,
        read_ahead_pages: s("Innodb_buffer_pool_read_ahead"),
        dblwr_pages,
        dblwr_batches: s("Innodb_dblwr_writes"),
        dblwr_pages_metric: get("metrics.innodb_dblwr_pages_written"),
        log_writes,
        log_bytes: s("Innodb_os_log_written"),
        commits,
        commits_source,
        commits_per_log_write: (log_writes > 0 && commits > 0)
            .then(|| commits as f64 / log_writes as f64),
        dblwr_per_page: (pages_written > 0).then(|| dblwr_pages as f64 / pages_written as f64),
        reads_per_s: per_s(s("Innodb_data_reads")),
        writes_per_s: per_s(s("Innodb_data_writes")),
        fsyncs_per_s: per_s(s("Innodb_data_fsyncs")),
        log_writes_per_s: per_s(log_writes),
        commits_per_s: per_s(commits),
        process_read_bytes: get("proc.read_bytes"),
        process_write_bytes: get("proc.write_bytes"),
    }
}

/// What the flush method does to the files, in words (MariaDB 10.6+, MySQL 8).
pub fn flush_method_words(method: &str) -> Option<&'static str> {
    Some(match method.to_ascii_uppercase().as_str() {
        "FSYNC" | "LITTLESYNC" => {
            "innodb_flush_method=fsync: data files are opened without O_DIRECT, so every page write went through the page cache and an fsync (fdatasync) made it durable; reads may be answered by the page cache"
        }
        "NOSYNC" => {
            "innodb_flush_method=nosync: data files go through the page cache and commits do not sync the redo log"
        }
        "O_DSYNC" => {
            "innodb_flush_method=O_DSYNC: the redo log is written O_DSYNC (no separate sync per commit) and data files O_DIRECT"
        }
        "O_DIRECT" => {
            "innodb_flush_method=O_DIRECT: data files are opened O_DIRECT (page reads and writes bypass the page cache); each flush batch and each commit ends with fdatasync"
        }
        "O_DIRECT_NO_FSYNC" => {
            "innodb_flush_method=O_DIRECT_NO_FSYNC: data files O_DIRECT and never synced; the redo log still is at each commit"
        }
        _ => return None,
    })
}

/// The findings and the cautions of a run.
pub fn findings(p: &MysqlSection, asked: &Asked) -> (Vec<String>, Vec<String>) {
    let (mut found, mut cautions) = (Vec::new(), Vec::new());
    let i = &p.innodb;
    let method = p.setting("innodb_flush_method").unwrap_or("");
    if let Some(w) = flush_method_words(method) {
        found.push(w.to_string());
    }
    // Doublewrite.
    let dw = p.setting("innodb_doublewrite").unwrap_or("");
    if i.dblwr_pages > 0 {
        found.push(format!(
            "doublewrite doubled the bytes written: {} of {} page writes went first through the doublewrite buffer, in {} batches ({:.0} pages each: one large sequential write and an fdatasync before the pages' own writes)",
            i.dblwr_pages,
            i.pages_written,
            i.dblwr_batches,
            i.dblwr_pages as f64 / i.dblwr_batches.max(1) as f64
        ));
    } else if matches!(dw, "OFF" | "0") && i.pages_written > 0 {
        found.push(format!(
            "doublewrite off: each of the {} pages was written once",
            i.pages_written
        ));
    }
    // Asynchronous I/O.
    match p.setting("innodb_use_native_aio") {
        Some("OFF" | "0") => found.push(
            "native AIO off: reads ran synchronously, and page writes as pwrite in InnoDB's thread pool".into(),
        ),
        Some(_) => {
            if let Some(a) = &p.server.aio_in_use {
                found.push(format!(
                    "asynchronous I/O: {a} (read-ahead and page writes; a page a session misses is still read synchronously by its own thread)"
                ));
            }
        }
        None => {}
    }
    // Commits.
    if i.log_writes > 0 && i.commits > 0 {
        found.push(format!(
            "{:.2} commits per log write ({} commits, {} redo writes: group commit {}); commits counted by {}",
            i.commits as f64 / i.log_writes as f64,
            i.commits,
            i.log_writes,
            if i.commits > i.log_writes { "at work" } else { "did not share writes" },
            i.commits_source
        ));
    }
    // Reads.
    if let Some(f) = p.data_file()
        && f.reads > 0
        && let Some(us) = f.mean_read_us
    {
        found.push(format!(
            "a data-file read took {} in InnoDB (performance_schema, {} reads; asynchronous reads are timed at submission)",
            latency_words(us),
            f.reads
        ));
    }
    if asked.mean_read_us.is_some() && i.data_reads > 0 {
        // The page cache answered when the process read fewer bytes than InnoDB asked for.
        if let Some(rb) = i.process_read_bytes
            && (rb as f64) < 0.5 * i.data_read_bytes as f64
        {
            cautions.push(format!(
                "the server process read {} bytes from storage for {} bytes InnoDB read: the page cache answered most reads (innodb_flush_method={method})",
                rb, i.data_read_bytes
            ));
        }
    }
    (found, cautions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_commit_and_doublewrite_are_said_in_words() {
        let mut d = BTreeMap::new();
        for (k, v) in [
            ("status.Innodb_log_writes", 100.0),
            ("metrics.trx_rw_commits", 250.0),
            ("status.Innodb_pages_written", 400.0),
            ("status.Innodb_dblwr_pages_written", 380.0),
            ("status.Innodb_dblwr_writes", 4.0),
        ] {
            d.insert(k.to_string(), v);
        }
        let i = innodb(&d, 2.0);
        assert_eq!(i.commits_per_log_write, Some(2.5));
        assert_eq!(i.commits_per_s, 125.0);
        let p = MysqlSection {
            innodb: i,
            server: crate::report::result_mysql::MysqlServer {
                settings: vec![("innodb_flush_method".into(), "fsync".into())],
                ..Default::default()
            },
            ..Default::default()
        };
        let asked = Asked {
            test: "redo".into(),
            asynchronous: false,
            depth: 1,
            sessions: 8,
            session_set: Vec::new(),
            cache: crate::database::CacheControl::DirectIo,
            mean_read_us: None,
            load_continues: false,
        };
        let (f, _) = findings(&p, &asked);
        let all = f.join("\n");
        assert!(all.contains("2.50 commits per log write"), "{all}");
        assert!(
            all.contains("doublewrite doubled the bytes written: 380 of 400"),
            "{all}"
        );
        assert!(
            all.contains("every page write went through the page cache and an fsync"),
            "{all}"
        );
    }
}
