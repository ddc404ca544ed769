//! Live metrics without a port: the run so far in the Prometheus text exposition format
//! (version 0.0.4, the format node_exporter's textfile collector reads), written every
//! second by atomic replace into the file `--metrics` names — the collector (or anything
//! that reads a file) picks it up; it reads only files named `*.prom`. Per event: requests,
//! bytes and errors as counters (`*_total`, typed `counter`), latency as a histogram of
//! classic buckets and as quantiles; the requests in flight; the test, host and run id as
//! labels. Nothing of OpenMetrics alone (`# UNIT`, `_created`, `# EOF`), which that format
//! reads as stray series or comments.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::measure::histogram::Counts;
use crate::measure::sampler::EventTotals;

/// The bucket bounds of the latency histograms, in seconds: powers of two from 4 µs to
/// about 1 s, the buckets a database's own wait histograms use.
const BOUNDS_US: [u64; 19] = [
    4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144,
    524288, 1048576,
];

/// The quantiles written.
const QUANTILES: [f64; 5] = [0.5, 0.9, 0.99, 0.999, 0.9999];

/// Who and what the metrics are about: labels on every sample.
#[derive(Debug, Clone)]
pub struct Labels {
    pub test: String,
    pub host: String,
    pub run_id: String,
}

/// One event's totals so far.
pub struct LiveEvent<'a> {
    pub name: &'a str,
    pub totals: &'a EventTotals,
}

/// The run so far.
pub struct Live<'a> {
    pub labels: &'a Labels,
    pub events: Vec<LiveEvent<'a>>,
    /// Requests issued and not yet completed.
    pub in_flight: u64,
    /// Seconds of the measured window so far.
    pub elapsed_s: f64,
    /// When the run started (seconds since the epoch).
    pub started_unix_s: f64,
}

/// A label value as the format wants it: `\`, `"` and newlines escaped.
fn escaped(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

/// A float as OpenMetrics writes it.
fn num(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else {
        format!("{v}")
    }
}

/// Requests at or under each bound (cumulative), from dbio's histogram counts.
fn cumulative(counts: &Counts) -> [u64; BOUNDS_US.len()] {
    let mut out = [0u64; BOUNDS_US.len()];
    for (i, &c) in counts.0.iter().enumerate() {
        if c == 0 {
            continue;
        }
        let ns = crate::measure::histogram::value_at(i);
        for (k, b) in BOUNDS_US.iter().enumerate() {
            if ns <= b * 1000 {
                out[k] += c;
            }
        }
    }
    out
}

/// The exposition of the run so far.
pub fn render(live: &Live) -> String {
    let l = live.labels;
    let base = format!(
        "test=\"{}\",host=\"{}\",run_id=\"{}\"",
        escaped(&l.test),
        escaped(&l.host),
        escaped(&l.run_id)
    );
    let ev = |name: &str| format!("{base},event=\"{}\"", escaped(name));
    let mut o = String::from(MARKER);
    // In this format a sample's name is its family's (a counter's ends in _total).
    let counter = |o: &mut String, name: &str, help: &str, get: &dyn Fn(&EventTotals) -> u64| {
        let _ = writeln!(o, "# TYPE {name} counter");
        let _ = writeln!(o, "# HELP {name} {help}");
        for e in &live.events {
            let _ = writeln!(o, "{name}{{{}}} {}", ev(e.name), get(e.totals));
        }
    };
    counter(
        &mut o,
        "dbio_requests_total",
        "Requests completed, per wait event.",
        &|t| t.requests,
    );
    counter(
        &mut o,
        "dbio_bytes_total",
        "Bytes transferred, per wait event.",
        &|t| t.bytes,
    );
    counter(
        &mut o,
        "dbio_errors_total",
        "Requests that failed, per wait event.",
        &|t| t.errors,
    );

    let h = "dbio_request_latency_seconds";
    let _ = writeln!(o, "# TYPE {h} histogram");
    let _ = writeln!(
        o,
        "# HELP {h} Latency of each request from issue (or its scheduled time) to completion."
    );
    for e in &live.events {
        let c = cumulative(&e.totals.latency);
        for (k, b) in BOUNDS_US.iter().enumerate() {
            let _ = writeln!(
                o,
                "{h}_bucket{{{},le=\"{}\"}} {}",
                ev(e.name),
                num(*b as f64 / 1e6),
                c[k]
            );
        }
        let total = e.totals.latency.total();
        let _ = writeln!(o, "{h}_bucket{{{},le=\"+Inf\"}} {total}", ev(e.name));
        let _ = writeln!(o, "{h}_count{{{}}} {total}", ev(e.name));
        let _ = writeln!(
            o,
            "{h}_sum{{{}}} {}",
            ev(e.name),
            num(e.totals.latency_sum_ns as f64 / 1e9)
        );
    }

    let q = "dbio_request_latency_quantile_seconds";
    let _ = writeln!(o, "# TYPE {q} summary");
    let _ = writeln!(o, "# HELP {q} Latency percentiles of the run so far.");
    for e in &live.events {
        let total = e.totals.latency.total();
        if total > 0 {
            let hdr = e.totals.latency.to_hdr();
            for p in QUANTILES {
                let v = hdr.value_at_quantile(p) as f64 / 1e9;
                let _ = writeln!(o, "{q}{{{},quantile=\"{p}\"}} {}", ev(e.name), num(v));
            }
        }
        let _ = writeln!(o, "{q}_count{{{}}} {total}", ev(e.name));
        let _ = writeln!(
            o,
            "{q}_sum{{{}}} {}",
            ev(e.name),
            num(e.totals.latency_sum_ns as f64 / 1e9)
        );
    }

    let _ = writeln!(o, "# TYPE dbio_in_flight gauge");
    let _ = writeln!(
        o,
        "# HELP dbio_in_flight Requests issued and not yet completed."
    );
    let _ = writeln!(o, "dbio_in_flight{{{base}}} {}", live.in_flight);
    let _ = writeln!(o, "# TYPE dbio_elapsed_seconds gauge");
    let _ = writeln!(
        o,
        "# HELP dbio_elapsed_seconds Seconds of the measured window so far."
    );
    let _ = writeln!(o, "dbio_elapsed_seconds{{{base}}} {}", num(live.elapsed_s));
    o
}

/// The first lines of every exposition dbio writes to `--metrics`: with the file's owner
/// (the user dbio runs as) and its single link, they are what proves that a file already at
/// that name is an earlier one of dbio's — kept with `--metrics-keep` — which dbio may
/// replace and remove. Any other file there is refused before the run starts.
pub const MARKER: &str = "# TYPE dbio_metrics_file gauge\n# HELP dbio_metrics_file Written by dbio run --metrics: replaced every second, removed at the end unless --metrics-keep.\n";

/// The file `--metrics` names: replaced whole every second (written beside it, then swapped
/// with it, so a reader never sees half a file), removed at the end unless kept — only ever
/// the file dbio put there itself, by its identity.
pub struct MetricsFile {
    path: PathBuf,
    dir: crate::safety::fs::Dir,
    name: String,
    keep: bool,
    /// The file of dbio's at the name: the one claimed (an earlier run's), then the one it
    /// last wrote; None while the name is free.
    ours: Option<crate::sys::FileId>,
    /// Something that is not dbio's took the name: nothing more is written or removed.
    lost: bool,
}

impl MetricsFile {
    /// Checks the place before anything is created or measured: its directory exists, and
    /// the name is free or holds an earlier metrics file of dbio's ([`MARKER`], a regular
    /// file of the user's with one link). A directory, symlink, FIFO, device, hard link, or
    /// a file dbio did not write is refused, and left as it was.
    pub fn claim(path: &Path, keep: bool) -> std::io::Result<MetricsFile> {
        let (dir, name) = crate::safety::fs::split(path)?;
        let dir = crate::safety::fs::Dir::open(&dir)?;
        let ours = dir.claim(&name, MARKER.len(), |head| {
            head.starts_with(MARKER.as_bytes())
        })?;
        Ok(MetricsFile {
            path: path.to_path_buf(),
            dir,
            name,
            keep,
            ours,
            lost: false,
        })
    }

    /// Writes the first exposition (no figures yet): the file is there from now on.
    pub fn start(&mut self) -> std::io::Result<()> {
        self.write(MARKER)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces the file with `text` — only while the file at the name is the one dbio put
    /// there (a file put in its place is left alone, and nothing more is written).
    pub fn write(&mut self, text: &str) -> std::io::Result<()> {
        if self.lost {
            return Ok(());
        }
        match self
            .dir
            .put(&self.name, text.as_bytes(), self.ours.as_ref())
        {
            Ok(id) => {
                self.ours = Some(id);
                Ok(())
            }
            Err(e) => {
                // A refusal: the name holds what is not dbio's.
                if e.raw_os_error().is_none() && e.kind() == std::io::ErrorKind::PermissionDenied {
                    self.lost = true;
                }
                Err(e)
            }
        }
    }

    /// The end of the run: the file goes unless kept — only while it is still the file dbio
    /// wrote last.
    pub fn finish(self) {
        if self.keep || self.lost {
            return;
        }
        if let Some(id) = &self.ours {
            let _ = self.dir.remove_file(&self.name, id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_has_counters_buckets_and_quantiles() {
        let mut t = EventTotals {
            requests: 3,
            bytes: 3 * 8192,
            latency_sum_ns: 300_000,
            ..Default::default()
        };
        let mut counts = Counts::default();
        counts.0[crate::measure::histogram::index_of(100_000)] = 3;
        t.latency = counts;
        let labels = Labels {
            test: "read-iops".into(),
            host: "db\"1".into(),
            run_id: "r1".into(),
        };
        let text = render(&Live {
            labels: &labels,
            events: vec![LiveEvent {
                name: "db file sequential read",
                totals: &t,
            }],
            in_flight: 2,
            elapsed_s: 1.0,
            started_unix_s: 1.7e9,
        });
        assert!(!text.contains("# EOF") && !text.contains("_created") && !text.contains("# UNIT"));
        assert!(
            text.contains("# TYPE dbio_requests_total counter\n"),
            "{text}"
        );
        assert!(text.contains("host=\"db\\\"1\""), "{text}");
        assert!(text.contains(
            "dbio_requests_total{test=\"read-iops\",host=\"db\\\"1\",run_id=\"r1\",event=\"db file sequential read\"} 3"
        ));
        // 100 µs: not in the 64 µs bucket, in the 128 µs one.
        assert!(text.contains("le=\"0.000064\"} 0"), "{text}");
        assert!(text.contains("le=\"0.000128\"} 3"), "{text}");
        assert!(text.contains("le=\"+Inf\"} 3"));
        assert!(text.contains("dbio_in_flight{"));
        assert!(text.contains("quantile=\"0.99\""));
    }
}
