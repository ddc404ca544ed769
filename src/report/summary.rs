//! `summary.txt`: the run as a database performance report (SPEC §6). Made only from a
//! [`RunResult`], so a stored result can be shown again exactly.

use std::fmt::Write;

use super::result::{AshJson, EventResult, LatencyJson, RunResult};
use crate::units::{human_bytes, size_label};

/// Renders the summary of `r`.
pub fn render(r: &RunResult) -> String {
    let mut o = String::new();
    let c = &r.config;
    let d = &r.dataset;
    let _ = writeln!(
        o,
        "dbio {} — {} ({}) — {}",
        r.dbio_version, r.test, c.submission, r.started_at
    );
    if d.files == 0 {
        let _ = writeln!(
            o,
            "Target {}: {} of {} files only (no data files)",
            d.path,
            human_bytes(c.size_bytes),
            if r.test == "temp" { "temp" } else { "redo log" }
        );
    } else {
        let _ = writeln!(
            o,
            "Target {}: {} in {} file(s), block {}{}",
            d.path,
            human_bytes(d.size_bytes),
            d.files,
            size_label(d.block_size),
            match d.kind.as_str() {
                "directory" if d.reused => ", data set reused".to_string(),
                "directory" => format!(", data set created in {:.1} s", d.prepare_seconds),
                _ => ", read-only".to_string(),
            }
        );
        if c.span < 1.0 {
            let per_file = d.size_bytes / d.files as u64;
            let span = crate::workload::span::Span::from_ppm((c.span * 1e6).round() as u32);
            let active = span.of(per_file, d.block_size);
            let _ = writeln!(
                o,
                "Span {}: every request falls in the first {} of each data file (of {})",
                span.label(),
                human_bytes(active),
                human_bytes(per_file)
            );
        }
    }
    let _ = writeln!(
        o,
        "{} session(s), io mode {} ({}), engine {} — {}",
        c.sessions,
        c.io_mode,
        c.open_flags.join(" "),
        c.engine,
        c.engine_reason
    );
    if c.request_bytes > 0 && r.classes.is_empty() {
        let _ = writeln!(
            o,
            "Request {}{}, seed {}",
            size_label(c.request_bytes),
            shape_note(r),
            c.seed
        );
    } else {
        let _ = writeln!(o, "Seed {}", c.seed);
    }
    let _ = writeln!(
        o,
        "Measured {:.1} s after {:.1} s warm-up{}",
        r.measured_seconds,
        c.warmup_s,
        if r.partial {
            format!(" — PARTIAL ({})", r.stop_reason)
        } else {
            String::new()
        }
    );

    top_timed_events(&mut o, r);
    load_profile(&mut o, r);
    if let Some(redo) = &r.redo {
        let a = &redo.accounting;
        let _ = writeln!(
            o,
            "\nRedo (redo per commit {}, redo block {}, {} x {} log files, {})",
            redo.redo_per_commit,
            size_label(redo.redo_block),
            redo.redo_files,
            human_bytes(redo.redo_file_size),
            redo.sync
        );
        let _ = writeln!(
            o,
            "Commits {} / LGWR writes {} = {:.2} commits per write; mean LGWR write {}",
            thousands(redo.commits),
            thousands(redo.lgwr_writes),
            redo.commits_per_lgwr_write,
            human_bytes(redo.mean_lgwr_write_bytes.round() as u64)
        );
        let _ = writeln!(
            o,
            "Whole run: {} generated + {} wastage = {} written in {} writes ({} pieces, largest {}), {} log switches",
            human_bytes(a.redo_generated_bytes),
            human_bytes(a.wastage_bytes),
            human_bytes(a.bytes_written),
            thousands(a.lgwr_writes),
            thousands(a.pieces),
            human_bytes(a.largest_write_bytes),
            a.log_switches
        );
    }
    if let Some(ol) = &r.oltp {
        let _ = writeln!(
            o,
            "\nOLTP: work unit {} blocks, {}% updates{}{}, {} DBWR; {} transactions, {} commits",
            ol.work_unit,
            ol.update_pct,
            if ol.hotspot_pct > 0 {
                format!(
                    ", {}% of accesses to a {} hot spot",
                    ol.hotspot_pct,
                    human_bytes(ol.hotspot_size_bytes)
                )
            } else {
                String::new()
            },
            if ol.async_reads { ", async reads" } else { "" },
            ol.writers,
            thousands(ol.transactions),
            thousands(ol.commits)
        );
        let _ = writeln!(
            o,
            "Logical reads {}, physical reads {}, buffer hit {:.1}%{}",
            thousands(ol.logical_reads),
            thousands(ol.physical_reads),
            ol.buffer_hit_pct,
            match (ol.cache_buffers, ol.cache_loaded_blocks) {
                (Some(b), Some(l)) => format!(
                    " (cache of {} buffers, {} loaded before the run)",
                    thousands(b as u64),
                    thousands(l)
                ),
                (Some(b), None) =>
                    format!(" (cache of {} buffers, started cold)", thousands(b as u64)),
                _ => " (no buffer cache: every read is physical)".into(),
            }
        );
    }
    if !r.classes.is_empty() {
        let _ = writeln!(o, "\nI/O classes");
        let _ = writeln!(
            o,
            "{:<24} {:<24} {:>7} {:>8} {:>11} {:>11} {:>11} {:>11}",
            "Class",
            "Event",
            "Size",
            "Sessions",
            "Target/s",
            "Achieved/s",
            "Late (ms)",
            "Svc p99 ms"
        );
        for c in &r.classes {
            let _ = writeln!(
                o,
                "{:<24} {:<24} {:>7} {:>8} {:>11} {:>11.1} {:>11} {:>11}",
                clip(&c.name, 24),
                clip(&c.event, 24),
                match &c.sizes {
                    // A mix or a range: its mean, listed in full below the table.
                    Some(_) => format!("~{}K", (c.size_bytes + 512) / 1024),
                    None => size_label(c.size_bytes),
                },
                c.sessions,
                c.rate_target
                    .map_or("closed".to_string(), |r| format!("{r:.1}")),
                c.rate_achieved,
                c.lateness_mean_us
                    .map_or("-".to_string(), |v| format!("{:.3}", v / 1000.0)),
                c.service_us
                    .as_ref()
                    .map_or("-".to_string(), |l| format!("{:.3}", l.p99 / 1000.0)),
            );
        }
    }
    for c in r.classes.iter().filter(|c| c.sizes.is_some()) {
        let _ = writeln!(
            o,
            "  {}: sizes {}; mean {} expected{}",
            c.name,
            c.sizes.as_deref().unwrap_or_default(),
            human_bytes(c.size_bytes),
            c.mean_request_bytes.map_or(String::new(), |b| format!(
                ", {} measured",
                human_bytes(b.round() as u64)
            ))
        );
    }
    if let Some(v) = &r.verdict {
        let _ = writeln!(
            o,
            "\nRequirement vs Actual — {}",
            if v.pass { "PASS" } else { "FAIL" }
        );
        let _ = writeln!(
            o,
            "{:<24} {:<12} {:>14} {:>12} {:>6}",
            "Class", "Limit", "Required", "Actual", ""
        );
        for c in &v.classes {
            for l in &c.limits {
                let _ = writeln!(
                    o,
                    "{:<24} {:<12} {:>14} {:>12.3} {:>6}",
                    clip(&c.class, 24),
                    l.limit,
                    format!("{} {}", l.op, l.required),
                    l.measured,
                    l.result
                );
            }
        }
    }
    if let Some(t) = &r.temp {
        let _ = writeln!(
            o,
            "\nTemp: each session spills {} in {} requests, then reads it back",
            human_bytes(t.spill_size_bytes),
            size_label(t.temp_io_bytes)
        );
    }

    let _ = writeln!(o, "\nLatency per request (µs)");
    latency_table(
        &mut o,
        r.events
            .iter()
            .map(|e| (e.name.as_str(), &e.latency_us, e.requests)),
    );
    let async_waits = r.events_waiting_apart();
    if !async_waits.is_empty() {
        let _ = writeln!(o, "\nLatency per wait (µs)");
        latency_table(
            &mut o,
            async_waits
                .iter()
                .map(|e| (e.name.as_str(), &e.wait_latency_us, e.waits)),
        );
    }

    let _ = writeln!(
        o,
        "\nWait Event Histogram (% of requests completing in < N µs)"
    );
    for e in &r.events {
        let total: u64 = e.histogram_micro.iter().map(|b| b.count).sum();
        if total == 0 {
            continue;
        }
        let first = e
            .histogram_micro
            .iter()
            .position(|b| b.count > 0)
            .unwrap_or(0);
        let last = e
            .histogram_micro
            .iter()
            .rposition(|b| b.count > 0)
            .unwrap_or(0);
        let cells: Vec<String> = e.histogram_micro[first..=last]
            .iter()
            .map(|b| {
                format!(
                    "<{}: {:.1}%",
                    bucket_label(b.lt_us),
                    100.0 * b.count as f64 / total as f64
                )
            })
            .collect();
        let _ = writeln!(o, "{:<26} {}", e.name, cells.join("  "));
    }

    let inflight: Vec<String> = r
        .events
        .iter()
        .map(|e| format!("{} {:.1}", e.name, e.inflight_avg))
        .collect();
    let _ = writeln!(
        o,
        "\nIn flight on average (IOPS × mean latency): {}",
        inflight.join(", ")
    );
    let cpu = &r.cpu;
    let _ = writeln!(
        o,
        "dbio CPU: {:.2} s user + {:.2} s system{}",
        cpu.user_s,
        cpu.system_s,
        match cpu.cpu_s_per_1k_requests {
            Some(v) => format!(" = {v:.4} CPU s per 1,000 requests"),
            None => String::new(),
        }
    );
    if let Some(v) = &r.verify {
        let _ = writeln!(
            o,
            "Verify: {} blocks read and checked, {} bad; {} blocks written with headers{}",
            thousands(v.blocks_checked),
            thousands(v.blocks_bad),
            thousands(v.blocks_written),
            if v.sequences_saved {
                "; write sequences saved for `dbio verify`"
            } else {
                ""
            }
        );
        for line in &v.bad_blocks {
            let _ = writeln!(o, "  bad: {line}");
        }
    }
    if d.kind == "directory" {
        let _ = writeln!(
            o,
            "Data set kept in {} ({} on disk: data, redo and temp files); remove with `dbio clean {}`",
            d.path,
            human_bytes(d.disk_bytes.max(d.size_bytes)),
            crate::units::shell_word(&d.path)
        );
    }
    if d.kind == "block_device" && r.config.destructive {
        let _ = writeln!(
            o,
            "Overwrote {} of block device {} (--destructive)",
            human_bytes(d.size_bytes),
            d.path
        );
    }
    super::os::render(&mut o, r);
    if !r.errors.is_empty() {
        let _ = writeln!(o, "\nErrors");
        for e in &r.errors {
            let _ = writeln!(o, "- {e}");
        }
    }
    if !r.warnings.is_empty() {
        let _ = writeln!(o, "\nWarnings");
        for w in &r.warnings {
            let _ = writeln!(o, "- {w}");
        }
    }
    o
}

/// DB time as ASH sampled it: the base of "% of DB time".
pub struct DbTime<'a> {
    ash: &'a AshJson,
    /// Active samples (any state but idle).
    pub samples: u64,
}

impl<'a> DbTime<'a> {
    /// None when the result has no ASH samples.
    pub fn of(r: &'a RunResult) -> Option<DbTime<'a>> {
        let ash = r.ash.as_ref().filter(|a| a.samples > 0)?;
        Some(DbTime {
            ash,
            samples: ash.samples_by_state.values().sum(),
        })
    }

    /// Seconds of DB time (active samples / sampling rate).
    pub fn seconds(&self) -> f64 {
        self.samples as f64 / f64::from(self.ash.hz.max(1))
    }

    /// Seconds spent in `state` ("ON CPU" or an event name), as sampled.
    pub fn seconds_in(&self, state: &str) -> f64 {
        self.ash.samples_by_state.get(state).copied().unwrap_or(0) as f64
            / f64::from(self.ash.hz.max(1))
    }

    /// Share of DB time in `state`, in percent (all states sum to 100).
    pub fn pct(&self, state: &str) -> f64 {
        let n = self.ash.samples_by_state.get(state).copied().unwrap_or(0);
        if self.samples > 0 {
            100.0 * n as f64 / self.samples as f64
        } else {
            0.0
        }
    }

    pub fn hz(&self) -> u32 {
        self.ash.hz
    }
}

/// The AWR-style table. With ASH: DB time is the sampled active time, and "% DB time" is each
/// state's share of the samples (so the column sums to 100 %); ON CPU is a row of its own.
/// Without ASH (an old result): % of session time.
fn top_timed_events(o: &mut String, r: &RunResult) {
    let by_time = r.events_by_wait_time();
    let avg_ms = |e: &EventResult| {
        if e.waits > 0 {
            e.wait_time_s * 1000.0 / e.waits as f64
        } else {
            0.0
        }
    };
    let Some(db) = DbTime::of(r) else {
        let session_time = r.config.sessions as f64 * r.measured_seconds;
        let _ = writeln!(o, "\nTop Timed Events");
        let _ = writeln!(
            o,
            "{:<26} {:>12} {:>14} {:>10} {:>9} {:>8}",
            "Event", "Waits", "Requests", "Time (s)", "Avg (ms)", "% Sess"
        );
        let _ = writeln!(o, "{}", "-".repeat(84));
        for e in &by_time {
            let pct = if session_time > 0.0 {
                100.0 * e.wait_time_s / session_time
            } else {
                0.0
            };
            let _ = writeln!(
                o,
                "{:<26} {:>12} {:>14} {:>10.2} {:>9.3} {:>8.1}",
                e.name,
                thousands(e.waits),
                thousands(e.requests),
                e.wait_time_s,
                avg_ms(e),
                pct
            );
        }
        return;
    };
    let share = |state: &str| db.pct(state);
    let _ = writeln!(
        o,
        "\nTop Timed Events (DB time {:.1} s: {} active samples at {} Hz)",
        db.seconds(),
        thousands(db.samples),
        db.hz()
    );
    let _ = writeln!(
        o,
        "{:<26} {:>12} {:>14} {:>10} {:>14} {:>10}",
        "Event", "Waits", "Requests", "Time (s)", "Avg wait (ms)", "% DB time"
    );
    let _ = writeln!(o, "{}", "-".repeat(91));
    let cpu_s = db.seconds_in("ON CPU");
    let mut rows: Vec<(String, String, String, f64, String, f64)> = by_time
        .iter()
        .map(|e| {
            (
                e.name.clone(),
                thousands(e.waits),
                thousands(e.requests),
                e.wait_time_s,
                format!("{:.3}", avg_ms(e)),
                share(&e.name),
            )
        })
        .collect();
    rows.push((
        "ON CPU".into(),
        String::new(),
        String::new(),
        cpu_s,
        String::new(),
        share("ON CPU"),
    ));
    rows.sort_by(|a, b| b.5.total_cmp(&a.5).then(b.3.total_cmp(&a.3)));
    for (name, waits, requests, time, avg, pct) in rows {
        let _ = writeln!(
            o,
            "{name:<26} {waits:>12} {requests:>14} {time:>10.2} {avg:>14} {pct:>10.1}"
        );
    }
}

/// Per-second rates, as a database's Load Profile shows them.
fn load_profile(o: &mut String, r: &RunResult) {
    let t = &r.totals;
    let secs = r.measured_seconds;
    let per_s = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
    let _ = writeln!(o, "\nLoad Profile                       Per Second");
    let _ = writeln!(o, "{}", "-".repeat(46));
    let mut rows = vec![
        ("Read requests", t.read_iops),
        ("Write requests", t.write_iops),
        ("Read MiB", t.read_mib_per_s),
        ("Write MiB", t.write_mib_per_s),
        ("Redo MiB", t.redo_mib_per_s.unwrap_or(0.0)),
        ("Commits", t.commits_per_s.unwrap_or(0.0)),
    ];
    if let Some(tx) = t.transactions_per_s {
        rows.push(("Transactions", tx));
    }
    if let Some(ol) = &r.oltp {
        rows.push(("Logical reads (blocks)", per_s(ol.logical_reads)));
        rows.push(("Physical reads (blocks)", per_s(ol.physical_reads)));
    }
    for (label, v) in rows {
        let _ = writeln!(o, "{:<28} {:>17}", format!("{label}:"), fixed2(v));
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// The knobs that shaped this run's events: batch for the batch events, depth and MBRC for
/// the multiblock ones.
fn shape_note(r: &RunResult) -> String {
    let c = &r.config;
    let mut parts = Vec::new();
    for e in &r.events {
        match e.name.as_str() {
            "db file parallel read" | "db file parallel write" if c.keep_inflight => {
                parts.push(format!("{} kept in flight", c.batch))
            }
            "db file parallel read" | "db file parallel write" => {
                parts.push(format!("batch {}", c.batch))
            }
            "direct path read" | "direct path write" => {
                parts.push(format!("depth {}, mbrc {}", c.depth, c.mbrc))
            }
            "db file scattered read" => parts.push(format!("mbrc {}", c.mbrc)),
            _ => {}
        }
    }
    parts.dedup();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join("; "))
    }
}

fn latency_table<'a>(o: &mut String, rows: impl Iterator<Item = (&'a str, &'a LatencyJson, u64)>) {
    let _ = writeln!(
        o,
        "{:<26} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "Event", "mean", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "max"
    );
    for (name, l, n) in rows {
        if n == 0 {
            let _ = writeln!(o, "{name:<26} (no requests)");
            continue;
        }
        let _ = writeln!(
            o,
            "{:<26} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            name,
            us(l.mean),
            us(l.p50),
            us(l.p90),
            us(l.p95),
            us(l.p99),
            us(l.p99_9),
            us(l.p99_99),
            us(l.max)
        );
    }
}

/// Microseconds with sensible precision: `3.21`, `45.6`, `1,234`.
fn us(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        thousands(v.round() as u64)
    }
}

fn bucket_label(lt_us: u64) -> String {
    if lt_us >= 1_000_000 && lt_us.is_multiple_of(1_000_000) {
        format!("{}s", lt_us / 1_000_000)
    } else if lt_us >= 1024 {
        format!("{}ms", fixed_trim(lt_us as f64 / 1000.0))
    } else {
        format!("{lt_us}us")
    }
}

fn fixed_trim(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn fixed2(v: f64) -> String {
    let whole = v.trunc() as u64;
    format!(
        "{}.{:02}",
        thousands(whole),
        ((v - v.trunc()) * 100.0).round().min(99.0) as u64
    )
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(fixed2(2057.6), "2,057.60");
        assert_eq!(us(3.214), "3.21");
        assert_eq!(us(1234.4), "1,234");
        assert_eq!(bucket_label(512), "512us");
        assert_eq!(bucket_label(2048), "2.0ms");
    }
}
