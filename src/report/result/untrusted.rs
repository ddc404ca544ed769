//! A result read back from a file or the results store, which anyone may have written: the
//! bounds and checks it passes before anything draws or compares it (the schema itself is
//! the parent module's).

use serde::Deserialize;

use super::*;

/// The largest result.json (or stored result) dbio reads back. A day of per-second history
/// of a few events and devices fits well below it.
pub const MAX_RESULT_BYTES: u64 = 64 << 20;
/// The longest string a result holds (names, paths, messages).
const MAX_STRING_BYTES: usize = 64 << 10;
/// How deep a result's JSON nests (dbio's own nests about six levels).
const MAX_DEPTH: usize = 32;
/// The longest measured window a result may claim: the longest `--duration`, a year.
const MAX_SECONDS: f64 = 366.0 * 86400.0;
/// Events, ASH states, devices, per-second cells: what drawing a result costs is bounded by
/// these, whatever it claims.
const MAX_EVENTS: usize = 64;
const MAX_SERIES: usize = 1024;
const MAX_BUCKETS: usize = 64;
const MAX_CELLS: u64 = 8 << 20;

/// A result read back from a file or the results store, which anyone may have written:
/// bounded in size, depth and string length before it is parsed, then checked with
/// [`RunResult::check_untrusted`]. The error names the field, for a one-line message.
pub fn from_untrusted(bytes: &[u8]) -> Result<RunResult, String> {
    if bytes.len() as u64 > MAX_RESULT_BYTES {
        return Err(format!(
            "{} bytes; a result is at most {} bytes",
            bytes.len(),
            MAX_RESULT_BYTES
        ));
    }
    scan_json(bytes)?;
    #[derive(Deserialize)]
    struct Schema {
        schema: Option<serde_json::Value>,
    }
    let s: Schema = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    match s.schema.as_ref().and_then(|s| s.as_str()) {
        Some(SCHEMA) => {}
        other => {
            return Err(format!(
                "not a dbio result: schema {}, expected {SCHEMA}",
                other.map_or_else(
                    || "missing".to_string(),
                    |s| format!("\"{}\"", crate::units::echoed(s))
                ),
            ));
        }
    }
    let r: RunResult =
        serde_json::from_slice(bytes).map_err(|e| format!("not a valid {SCHEMA} result: {e}"))?;
    r.check_untrusted()?;
    Ok(r)
}

/// One pass over JSON text, allocating nothing: no string longer than [`MAX_STRING_BYTES`],
/// nothing nested deeper than [`MAX_DEPTH`]. Errors name the key the string or level is under.
fn scan_json(b: &[u8]) -> Result<(), String> {
    let mut depth = 0usize;
    let mut i = 0;
    let mut key: &[u8] = b"";
    let key_name = |k: &[u8]| crate::units::echoed(&String::from_utf8_lossy(k));
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i + 1;
                i = start;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let end = i.min(b.len());
                if end - start > MAX_STRING_BYTES {
                    return Err(format!(
                        "'{}': a string of {} bytes (at most {MAX_STRING_BYTES})",
                        key_name(key),
                        end - start
                    ));
                }
                let mut j = end + 1;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if b.get(j) == Some(&b':') {
                    key = &b[start..end];
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!(
                        "'{}': nested deeper than {MAX_DEPTH} levels",
                        key_name(key)
                    ));
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// `what` unless `v` is a finite number at least 0.
fn non_negative(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(format!("'{what}' is {v}; expected a number at least 0"))
    }
}

/// The per-second history of one run (the whole result or one host's part): every `t`
/// within its measured window, and what drawing it costs bounded.
struct Seconds<'a> {
    at: &'a str,
    /// The last second a point may have: the measured window, rounded up, and one more
    /// for a request completing at its edge.
    last: u64,
    cells: u64,
}

impl Seconds<'_> {
    fn new(at: &str, measured: f64) -> Result<Seconds<'_>, String> {
        let field = if at.is_empty() {
            "measured_seconds".to_string()
        } else {
            format!("{at}.measured_seconds")
        };
        non_negative(&field, measured)?;
        if measured > MAX_SECONDS {
            return Err(format!(
                "'{field}' is {measured}; a run measures at most a year ({MAX_SECONDS} s)"
            ));
        }
        Ok(Seconds {
            at,
            last: measured.ceil() as u64 + 1,
            cells: 0,
        })
    }

    /// Series `name`, `series` lines drawn over its seconds `ts`.
    fn series(
        &mut self,
        name: &str,
        series: usize,
        ts: impl Iterator<Item = u32>,
    ) -> Result<(), String> {
        let mut max = 0u64;
        for (i, t) in ts.enumerate() {
            if u64::from(t) > self.last {
                let dot = if self.at.is_empty() { "" } else { "." };
                return Err(format!(
                    "'{}{dot}{name}[{i}].t' is {t}, beyond the measured window ({} s)",
                    self.at,
                    self.last - 1
                ));
            }
            max = max.max(u64::from(t));
        }
        if series > MAX_SERIES {
            return Err(format!(
                "'{}': {series} distinct series; at most {MAX_SERIES}",
                name
            ));
        }
        self.cells += max * series as u64;
        if self.cells > MAX_CELLS {
            return Err(format!(
                "'{name}': {series} series over {max} seconds; a result draws at most {MAX_CELLS} per-second values"
            ));
        }
        Ok(())
    }

    fn os(&mut self, os: &OsStats) -> Result<(), String> {
        let distinct = |names: &mut dyn Iterator<Item = &str>| {
            let mut seen = std::collections::BTreeSet::new();
            for n in names {
                seen.insert(n);
                if seen.len() > MAX_SERIES {
                    break;
                }
            }
            seen.len()
        };
        let cpus = distinct(&mut os.cpu.iter().map(|c| c.cpu.as_str()));
        self.series("os.cpu", cpus.min(4), os.cpu.iter().map(|c| c.t))?;
        let devices = distinct(&mut os.devices.iter().map(|d| d.device.as_str()));
        self.series("os.devices", devices * 4, os.devices.iter().map(|d| d.t))?;
        self.series("os.memory", 2, os.memory.iter().map(|m| m.t))?;
        self.series("os.io_pressure", 2, os.io_pressure.iter().map(|p| p.t))?;
        self.series("os.dbio_cpu", 2, os.dbio_cpu.iter().map(|p| p.t))
    }
}

/// One host's or the run's events: at most [`MAX_EVENTS`], figures finite and at least 0,
/// waits no more than requests, power-of-two buckets whose counts add up without overflow.
fn check_events(at: &str, events: &[EventResult]) -> Result<(), String> {
    if events.len() > MAX_EVENTS {
        return Err(format!(
            "'{at}events': {} events; a result has at most {MAX_EVENTS}",
            events.len()
        ));
    }
    for (i, e) in events.iter().enumerate() {
        let f = |k: &str| format!("{at}events[{i}].{k}");
        for (k, v) in [
            ("iops", e.iops),
            ("mib_per_s", e.mib_per_s),
            ("wait_time_s", e.wait_time_s),
            ("inflight_avg", e.inflight_avg),
            ("submit_mean_us", e.submit_mean_us),
        ] {
            non_negative(&f(k), v)?;
        }
        for (k, l) in [
            ("latency_us", &e.latency_us),
            ("wait_latency_us", &e.wait_latency_us),
        ] {
            for (p, v) in [
                ("mean", l.mean),
                ("p50", l.p50),
                ("p90", l.p90),
                ("p95", l.p95),
                ("p99", l.p99),
                ("p99_9", l.p99_9),
                ("p99_99", l.p99_99),
                ("max", l.max),
            ] {
                non_negative(&f(&format!("{k}.{p}")), v)?;
            }
        }
        if e.waits > e.requests {
            return Err(format!(
                "'{}' is {}, more than its {} requests",
                f("waits"),
                e.waits,
                e.requests
            ));
        }
        for (k, buckets) in [
            ("histogram_micro", &e.histogram_micro),
            ("wait_histogram_micro", &e.wait_histogram_micro),
        ] {
            if buckets.len() > MAX_BUCKETS {
                return Err(format!(
                    "'{}': {} buckets; at most {MAX_BUCKETS}",
                    f(k),
                    buckets.len()
                ));
            }
            let mut sum = 0u64;
            let mut last = 0u64;
            for (j, b) in buckets.iter().enumerate() {
                if !b.lt_us.is_power_of_two() || b.lt_us <= last {
                    return Err(format!(
                        "'{}[{j}].lt_us' is {}; bucket bounds are rising powers of two (<1, <2, <4, ... µs)",
                        f(k),
                        b.lt_us
                    ));
                }
                last = b.lt_us;
                sum = sum
                    .checked_add(b.count)
                    .ok_or_else(|| format!("'{}': its counts add up to more than 2^64", f(k)))?;
            }
        }
    }
    Ok(())
}

impl RunResult {
    /// The checks of a result read back (see [`from_untrusted`]): numbers finite and in
    /// range, every per-second point inside the measured window, and at most so many events,
    /// buckets, series and per-second values that drawing it is bounded. The error names the
    /// field.
    pub fn check_untrusted(&self) -> Result<(), String> {
        let mut s = Seconds::new("", self.measured_seconds)?;
        check_events("", &self.events)?;
        s.series(
            "timeseries",
            self.events.len() * 4,
            self.timeseries.iter().map(|p| p.t),
        )?;
        if let Some(ash) = &self.ash {
            s.series(
                "ash.seconds",
                ash.states.len(),
                ash.seconds.iter().map(|p| p.t),
            )?;
        }
        if let Some(os) = &self.os {
            s.os(os)?;
        }
        if self.hosts.len() > MAX_SERIES {
            return Err(format!(
                "'hosts': {} hosts; at most {MAX_SERIES}",
                self.hosts.len()
            ));
        }
        for (i, h) in self.hosts.iter().enumerate() {
            let at = format!("hosts[{i}]");
            let mut hs = Seconds::new(&at, h.measured_seconds)?;
            check_events(&format!("{at}."), &h.events)?;
            if let Some(os) = &h.os {
                hs.os(os)?;
            }
        }
        Ok(())
    }
}
