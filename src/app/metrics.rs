//! `dbio run --metrics FILE`: the run's live figures in the Prometheus text format,
//! replaced every second from the seconds the run closes (running totals per event), and
//! removed at the end unless `--metrics-keep`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::measure::{EventTotals, Interval};
use crate::report::openmetrics::{Labels, Live, LiveEvent, MetricsFile, render};
use crate::run::RunHooks;
use crate::units::Shown;

struct State {
    file: Option<MetricsFile>,
    labels: Labels,
    names: Vec<&'static str>,
    totals: Vec<EventTotals>,
    started_unix_s: f64,
    /// The first error writing the file (told once, at the end).
    error: Option<String>,
}

/// The metrics file of a run: hooks that keep it up to date, and its end.
pub struct Metrics {
    state: Arc<Mutex<State>>,
}

impl Metrics {
    /// Checks the place before anything is created: the name must be free or hold an
    /// earlier metrics file of dbio's ([`MetricsFile::claim`]). Nothing is written yet.
    pub fn claim(path: &Path, keep: bool, test: &str) -> Result<Metrics> {
        let file = MetricsFile::claim(path, keep).map_err(|e| bad(path, &e))?;
        if path.extension().is_none_or(|x| x != "prom") {
            // Said, not refused: anything else may read the file.
            stderr_line!(
                "dbio: warning: --metrics {}: node_exporter's textfile collector reads only files named *.prom; this one it will not collect",
                path.shown()
            );
        }
        let started_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Ok(Metrics {
            state: Arc::new(Mutex::new(State {
                file: Some(file),
                labels: Labels {
                    test: test.to_string(),
                    host: crate::report::result::HostJson::current().hostname,
                    run_id: String::new(),
                },
                names: Vec::new(),
                totals: Vec::new(),
                started_unix_s,
                error: None,
            })),
        })
    }

    /// Writes the first, empty exposition: the file is there from now on.
    pub fn start(&self) -> Result<()> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match s.file.as_mut() {
            Some(f) => f.start().map_err(|e| bad(f.path(), &e)),
            None => Ok(()),
        }
    }

    /// The hooks that feed it: the run directory's name (the run id), the events, and
    /// each closed second.
    pub fn hooks(&self) -> RunHooks {
        let (s1, s2, s3) = (self.state.clone(), self.state.clone(), self.state.clone());
        RunHooks {
            on_run_dir: Some(Box::new(move |dir| {
                let mut s = s1.lock().unwrap_or_else(|e| e.into_inner());
                s.labels.run_id = dir
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
            })),
            on_events: Some(Box::new(move |names| {
                let mut s = s2.lock().unwrap_or_else(|e| e.into_inner());
                s.names = names.to_vec();
                s.totals = vec![EventTotals::default(); names.len()];
            })),
            on_second: Some(Box::new(move |t, intervals| {
                let mut s = s3.lock().unwrap_or_else(|e| e.into_inner());
                second(&mut s, t, intervals);
            })),
            ..Default::default()
        }
    }

    /// The end of the run, however it ended: the file goes unless kept; a failure to write
    /// it is told.
    pub fn finish(self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = s.file.take() {
            f.finish();
        }
        if let Some(e) = &s.error {
            stderr_line!("dbio: warning: --metrics: {e}");
        }
    }
}

/// `--metrics PATH` cannot be used, and why: bad input, named.
fn bad(path: &Path, e: &std::io::Error) -> Error {
    Error::usage(format!(
        "invalid value '{}' for '--metrics': {e}",
        path.shown()
    ))
}

/// Second `t` closed: adds it to the running totals and replaces the file.
fn second(s: &mut State, t: u32, intervals: &[Interval]) {
    if s.totals.len() < intervals.len() {
        s.totals.resize_with(intervals.len(), EventTotals::default);
    }
    let mut busy_ns = 0u64;
    for (total, i) in s.totals.iter_mut().zip(intervals) {
        total.requests += i.requests;
        total.bytes += i.bytes;
        total.errors += i.errors;
        total.latency_sum_ns += i.latency_sum_ns;
        total.latency.add(&i.latency);
        busy_ns += i.latency_sum_ns;
    }
    let events = (s.totals.iter().enumerate())
        .map(|(k, totals)| LiveEvent {
            name: s.names.get(k).copied().unwrap_or("unknown"),
            totals,
        })
        .collect();
    let text = render(&Live {
        labels: &s.labels,
        events,
        // The second's mean concurrency: the time requests were in flight over its length.
        in_flight: (busy_ns as f64 / 1e9).round() as u64,
        elapsed_s: f64::from(t),
        started_unix_s: s.started_unix_s,
    });
    if let Some(f) = s.file.as_mut()
        && let Err(e) = f.write(&text)
        && s.error.is_none()
    {
        s.error = Some(format!("cannot write {}: {e}", f.path().shown()));
    }
}
