//! The cluster's result from its hosts': histograms are added up and percentiles taken from
//! the sum (the cluster's p99 is the p99 of all its requests), counts are summed, and every
//! host keeps its own figures in `hosts`. Nothing here reads a percentile of a host to make
//! one of the cluster.

use std::collections::BTreeMap;

use crate::measure::{EventTotals, Interval};
use crate::report::RunResult;
use crate::report::result::{
    self as rj, AshJson, AshSecondJson, CpuJson, HostRunJson, SecondJson, Totals,
};
use crate::warnings::Warning;
use crate::workload::Event;

use super::clock::{Offset, WARN_UNCERTAINTY_NS};

/// What one host brought back.
#[derive(Debug, Clone)]
pub struct HostOutcome {
    /// As typed in `--hosts`.
    pub name: String,
    pub hostname: String,
    pub offset: Offset,
    /// When its warm-up began after the instant given to all, ns (None: never started).
    pub start_skew_ns: Option<i64>,
    /// Its result and per-event totals (None: it was lost before it sent them).
    pub result: Option<(RunResult, Vec<EventTotals>)>,
    /// Why it was lost, if it was.
    pub lost: Option<String>,
}

/// How the run across hosts ended.
#[derive(Debug, Clone, Default)]
pub struct Ending {
    /// The host lost mid-run and why.
    pub lost: Option<(String, String)>,
    /// Ctrl-C (or another signal) on the coordinator.
    pub interrupted: bool,
}

/// Adds `b` into `a`.
fn add(a: &mut EventTotals, b: &EventTotals) {
    a.requests += b.requests;
    a.bytes += b.bytes;
    a.latency_sum_ns += b.latency_sum_ns;
    a.latency_max_ns = a.latency_max_ns.max(b.latency_max_ns);
    a.latency.add(&b.latency);
    a.waits += b.waits;
    a.wait_sum_ns += b.wait_sum_ns;
    a.wait_max_ns = a.wait_max_ns.max(b.wait_max_ns);
    a.wait_latency.add(&b.wait_latency);
    a.submit_calls += b.submit_calls;
    a.submit_ns += b.submit_ns;
    a.errors += b.errors;
    a.service_sum_ns += b.service_sum_ns;
    a.service_max_ns = a.service_max_ns.max(b.service_max_ns);
    a.service.add(&b.service);
    a.late_sum_ns += b.late_sum_ns;
    a.late_max_ns = a.late_max_ns.max(b.late_max_ns);
}

/// The seconds of every host, merged: per second, per event.
#[derive(Debug, Default)]
pub struct Seconds {
    pub by_t: BTreeMap<u32, Vec<Interval>>,
    /// How many hosts reported each second.
    pub reported: BTreeMap<u32, usize>,
}

impl Seconds {
    /// Adds host's second `t`.
    pub fn add(&mut self, t: u32, events: Vec<Interval>) {
        *self.reported.entry(t).or_default() += 1;
        let slot = self.by_t.entry(t).or_default();
        if slot.len() < events.len() {
            slot.resize_with(events.len(), Interval::default);
        }
        for (s, e) in slot.iter_mut().zip(events) {
            s.requests += e.requests;
            s.bytes += e.bytes;
            s.errors += e.errors;
            s.latency_sum_ns += e.latency_sum_ns;
            s.latency.add(&e.latency);
        }
    }

    /// result.json's `timeseries` of the merged seconds.
    fn json(&self, names: &[String]) -> Vec<SecondJson> {
        let mut out = Vec::new();
        for (&t, events) in &self.by_t {
            for (e, name) in events.iter().zip(names) {
                let some = e.requests > 0;
                out.push(SecondJson {
                    t,
                    event: name.clone(),
                    requests: e.requests,
                    bytes: e.bytes,
                    mean_us: some.then(|| e.latency_sum_ns as f64 / e.requests as f64 / 1000.0),
                    p99_us: some
                        .then(|| e.latency.to_hdr().value_at_quantile(0.99) as f64 / 1000.0),
                    // Each host's own warnings say when it did not run.
                    not_running_s: None,
                });
            }
        }
        out
    }
}

fn per_s(x: f64, secs: f64) -> f64 {
    if secs > 0.0 { x / secs } else { 0.0 }
}

/// The cluster's result: `hosts` holds every host's own; the rest is merged. `target` is
/// `--target` as typed (with `{host}`), `started_at` the coordinator's start.
pub fn merge(
    hosts: &[HostOutcome],
    seconds: &Seconds,
    target: &str,
    started_at: &str,
    ending: &Ending,
) -> Option<RunResult> {
    let with: Vec<&(RunResult, Vec<EventTotals>)> =
        hosts.iter().filter_map(|h| h.result.as_ref()).collect();
    let (template, _) = with.first()?;
    let mut r = template.clone();
    // The merged result is the coordinator's: its binary, not the first host's.
    r.dbio_build = Some(crate::report::result::DbioBuildJson::this());
    let secs = with
        .iter()
        .map(|(h, _)| h.measured_seconds)
        .fold(0.0, f64::max);
    let names: Vec<String> = template.events.iter().map(|e| e.name.clone()).collect();
    let mut sums: Vec<EventTotals> = vec![EventTotals::default(); names.len()];
    for (_, totals) in &with {
        for (s, t) in sums.iter_mut().zip(totals) {
            add(s, t);
        }
    }
    r.events = names
        .iter()
        .zip(&sums)
        .map(|(n, t)| rj::event_result(n, t, secs))
        .collect();
    let pairs: Vec<(Event, &rj::EventResult)> = (r.events.iter())
        .filter_map(|e| Event::from_name(&e.name).map(|ev| (ev, e)))
        .collect();
    let mut totals = Totals::from_events(&pairs, secs);
    let sum_opt = |f: fn(&Totals) -> Option<f64>| {
        let v: Vec<f64> = with.iter().filter_map(|(h, _)| f(&h.totals)).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    totals.commits_per_s = sum_opt(|t| t.commits_per_s);
    totals.transactions_per_s = sum_opt(|t| t.transactions_per_s);
    totals.redo_mib_per_s = sum_opt(|t| t.redo_mib_per_s);
    r.totals = totals;
    r.measured_seconds = secs;
    r.started_at = started_at.to_string();
    r.host = rj::HostJson::current();
    r.config.target = target.to_string();
    r.dataset.path = target.to_string();
    r.dataset.disk_bytes = with.iter().map(|(h, _)| h.dataset.disk_bytes).sum();
    if r.dataset.region.is_some() {
        // One data set written in regions, one per host: the whole of it is theirs together.
        r.dataset.size_bytes = with.iter().map(|(h, _)| h.dataset.size_bytes).sum();
        r.dataset.files = with.iter().map(|(h, _)| h.dataset.files).sum();
        r.dataset.region = None;
        r.config.size_bytes = r.dataset.size_bytes;
        r.config.files = r.dataset.files as u32;
    }
    r.config.sessions = with.iter().map(|(h, _)| h.config.sessions).sum();
    let (user, system) = with.iter().fold((0.0, 0.0), |(u, s), (h, _)| {
        (u + h.cpu.user_s, s + h.cpu.system_s)
    });
    r.cpu = CpuJson {
        user_s: user,
        system_s: system,
        cpu_s_per_1k_requests: (r.totals.requests > 0)
            .then(|| (user + system) / (r.totals.requests as f64 / 1000.0)),
    };
    r.timeseries = seconds.json(&names);
    r.ash = merge_ash(with.iter().filter_map(|(h, _)| h.ash.as_ref()));
    merge_workload(&mut r, &with, secs);
    r.os = None;
    r.storage = None;
    r.lint = Vec::new();
    r.verify = None;
    // Warnings and errors, each named by its host; the cluster's own first.
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    for h in hosts {
        if h.offset.uncertainty_ns > WARN_UNCERTAINTY_NS {
            warnings.push(Warning::ClockUncertain {
                host: h.name.clone(),
                uncertainty_ms: h.offset.uncertainty_ns as f64 / 1e6,
            });
        }
    }
    for h in hosts {
        if let Some(why) = &h.lost {
            errors.push(format!("{}: lost during the run: {why}", h.name));
        }
        if let Some((hr, _)) = &h.result {
            for w in &hr.warnings {
                let w = Warning::OnHost {
                    host: h.name.clone(),
                    warning: Box::new(w.clone()),
                };
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
            errors.extend(hr.errors.iter().map(|e| format!("{}: {e}", h.name)));
        }
    }
    r.warnings = warnings;
    r.errors = errors;
    // The cluster's own per-second series, judged as one host's would be.
    r.judge_stability();
    let any_partial = with.iter().any(|(h, _)| h.partial);
    (r.partial, r.stop_reason) = match &ending.lost {
        Some((host, why)) => (true, format!("host lost: {host} ({why})")),
        None if ending.interrupted => (true, "interrupted".into()),
        None if !r.errors.is_empty() => (true, "error".into()),
        None if any_partial => (true, template.stop_reason.clone()),
        None => (false, "completed".into()),
    };
    r.hosts = hosts.iter().filter_map(host_json).collect();
    Some(r)
}

/// One host's object in `hosts`.
fn host_json(h: &HostOutcome) -> Option<HostRunJson> {
    let (r, _) = h.result.as_ref()?;
    Some(HostRunJson {
        host: h.name.clone(),
        hostname: h.hostname.clone(),
        clock_offset_us: h.offset.offset_ns as f64 / 1000.0,
        clock_uncertainty_us: h.offset.uncertainty_ns as f64 / 1000.0,
        start_skew_ms: h.start_skew_ns.map(|ns| ns as f64 / 1e6),
        partial: r.partial || h.lost.is_some(),
        stop_reason: match &h.lost {
            Some(why) => format!("lost: {why}"),
            None => r.stop_reason.clone(),
        },
        measured_seconds: r.measured_seconds,
        dataset: r.dataset.clone(),
        seed: r.config.seed,
        events: r.events.clone(),
        totals: r.totals.clone(),
        cpu: r.cpu.clone(),
        warnings: r.warnings.clone(),
        errors: r.errors.clone(),
        os: r.os.clone(),
        storage: r.storage.clone(),
        lint: r.lint.clone(),
    })
}

/// Active sessions of all hosts: samples add up (DB time of the cluster), per second the
/// average active sessions add up.
fn merge_ash<'a>(all: impl Iterator<Item = &'a AshJson>) -> Option<AshJson> {
    let mut out: Option<AshJson> = None;
    let mut seconds: BTreeMap<u32, BTreeMap<String, f64>> = BTreeMap::new();
    for a in all {
        let o = out.get_or_insert_with(|| AshJson {
            hz: a.hz,
            ..AshJson::default()
        });
        o.samples += a.samples;
        for (k, v) in &a.samples_by_state {
            *o.samples_by_state.entry(k.clone()).or_default() += v;
        }
        for s in &a.seconds {
            let slot = seconds.entry(s.t).or_default();
            for (k, v) in &s.active {
                *slot.entry(k.clone()).or_default() += v;
            }
        }
    }
    let mut o = out?;
    let mut states: Vec<(&String, &u64)> = o.samples_by_state.iter().collect();
    states.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    o.states = states.into_iter().map(|(k, _)| k.clone()).collect();
    o.seconds = seconds
        .into_iter()
        .map(|(t, active)| AshSecondJson { t, active })
        .collect();
    Some(o)
}

/// Redo, OLTP, classes and the verdict of the cluster: counts summed, ratios and rates
/// recomputed, limits judged against the merged events.
fn merge_workload(r: &mut RunResult, with: &[&(RunResult, Vec<EventTotals>)], secs: f64) {
    if let Some(redo) = r.redo.as_mut() {
        let all: Vec<&rj::RedoJson> = with.iter().filter_map(|(h, _)| h.redo.as_ref()).collect();
        redo.commits = all.iter().map(|x| x.commits).sum();
        redo.lgwr_writes = all.iter().map(|x| x.lgwr_writes).sum();
        redo.redo_bytes = all.iter().map(|x| x.redo_bytes).sum();
        let written: f64 = all
            .iter()
            .map(|x| x.mean_lgwr_write_bytes * x.lgwr_writes as f64)
            .sum();
        redo.commits_per_lgwr_write = per_s(redo.commits as f64, redo.lgwr_writes as f64);
        redo.mean_lgwr_write_bytes = per_s(written, redo.lgwr_writes as f64);
        let a = &mut redo.accounting;
        let sum = |f: fn(&rj::RedoAccountingJson) -> u64| -> u64 {
            all.iter().map(|x| f(&x.accounting)).sum()
        };
        a.commits = sum(|x| x.commits);
        a.redo_generated_bytes = sum(|x| x.redo_generated_bytes);
        a.bytes_written = sum(|x| x.bytes_written);
        a.wastage_bytes = sum(|x| x.wastage_bytes);
        a.lgwr_writes = sum(|x| x.lgwr_writes);
        a.pieces = sum(|x| x.pieces);
        a.log_switches = sum(|x| x.log_switches);
        a.largest_write_bytes = all
            .iter()
            .map(|x| x.accounting.largest_write_bytes)
            .max()
            .unwrap_or(0);
    }
    if let Some(o) = r.oltp.as_mut() {
        let all: Vec<&rj::OltpJson> = with.iter().filter_map(|(h, _)| h.oltp.as_ref()).collect();
        o.transactions = all.iter().map(|x| x.transactions).sum();
        o.commits = all.iter().map(|x| x.commits).sum();
        o.logical_reads = all.iter().map(|x| x.logical_reads).sum();
        o.physical_reads = all.iter().map(|x| x.physical_reads).sum();
        o.buffer_hit_pct = if o.logical_reads > 0 {
            100.0 * (1.0 - o.physical_reads as f64 / o.logical_reads as f64)
        } else {
            0.0
        };
    }
    let events = r.events.clone();
    for c in &mut r.classes {
        let Some(e) = events.get(c.event_index) else {
            continue;
        };
        c.sessions *= with.len();
        c.rate_target = c.rate_target.map(|x| x * with.len() as f64);
        c.rate_achieved = if c.event == Event::LogFileParallelWrite.name() {
            per_s(e.waits as f64, secs)
        } else {
            e.iops
        };
    }
    let classes = r.classes.clone();
    if let Some(v) = r.verdict.as_mut() {
        for cv in &mut v.classes {
            let Some(c) = classes.iter().find(|c| c.name == cv.class) else {
                continue;
            };
            let Some(e) = events.get(c.event_index) else {
                continue;
            };
            let per_write = c.event == Event::LogFileParallelWrite.name();
            let l = if per_write {
                &e.wait_latency_us
            } else {
                &e.latency_us
            };
            for limit in &mut cv.limits {
                let ms = |us: f64| {
                    if e.requests > 0 {
                        us / 1000.0
                    } else {
                        f64::INFINITY
                    }
                };
                limit.measured = match limit.limit.as_str() {
                    "mean_ms" => ms(l.mean),
                    "p50_ms" => ms(l.p50),
                    "p90_ms" => ms(l.p90),
                    "p95_ms" => ms(l.p95),
                    "p99_ms" => ms(l.p99),
                    // A minimum rate is the class's over the whole cluster.
                    "iops" => c.rate_achieved,
                    "mib_per_s" => e.mib_per_s,
                    _ => limit.measured,
                };
                let pass = if limit.op == "<=" {
                    limit.measured <= limit.required
                } else {
                    limit.measured >= limit.required
                };
                limit.result = if pass { "PASS" } else { "FAIL" }.into();
            }
            cv.pass = cv.limits.iter().all(|l| l.result == "PASS");
        }
        v.pass = v.classes.iter().all(|c| c.pass);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::LiveHistogram;

    fn totals(values: &[u64]) -> EventTotals {
        let live = LiveHistogram::new();
        for &v in values {
            live.record(v);
        }
        let mut t = EventTotals {
            requests: values.len() as u64,
            bytes: values.len() as u64 * 8192,
            latency_sum_ns: values.iter().sum(),
            latency_max_ns: *values.iter().max().unwrap(),
            waits: values.len() as u64,
            ..EventTotals::default()
        };
        live.add_to(&mut t.latency);
        live.add_to(&mut t.wait_latency);
        t.wait_sum_ns = t.latency_sum_ns;
        t.wait_max_ns = t.latency_max_ns;
        t
    }

    fn host(name: &str, t: EventTotals) -> HostOutcome {
        let mut r = crate::store::tests::sample("read-iops", "db file sequential read", 1.0, 1.0);
        r.events = vec![rj::event_result("db file sequential read", &t, 2.0)];
        HostOutcome {
            name: name.into(),
            hostname: name.into(),
            offset: Offset::default(),
            start_skew_ns: Some(0),
            result: Some((r, vec![t])),
            lost: None,
        }
    }

    #[test]
    fn histograms_are_merged_never_percentiles() {
        // One fast host (100 µs) and one slow host (10 ms), with 99 and 1 requests: the
        // cluster's p50 is the fast host's, its p99 is not the mean of the two p99s.
        let fast = host("h1", totals(&[100_000; 99]));
        let slow = host("h2", totals(&[10_000_000; 1]));
        let r = merge(
            &[fast, slow],
            &Seconds::default(),
            "/x-{host}",
            "now",
            &Ending::default(),
        )
        .unwrap();
        let e = &r.events[0];
        assert_eq!(e.requests, 100);
        assert!(
            (e.latency_us.p50 - 100.0).abs() < 1.0,
            "{}",
            e.latency_us.p50
        );
        assert!(
            (e.latency_us.p99 - 100.0).abs() < 1.0,
            "{}",
            e.latency_us.p99
        );
        assert!(e.latency_us.max >= 9_900.0);
        assert_eq!(r.hosts.len(), 2);
        assert_eq!(r.hosts[1].events[0].requests, 1);
        assert!(!r.partial);
        let lost = Ending {
            lost: Some(("h2".into(), "its agent ended".into())),
            interrupted: false,
        };
        let r = merge(
            &[host("h1", totals(&[1_000]))],
            &Seconds::default(),
            "/x",
            "now",
            &lost,
        )
        .unwrap();
        assert!(
            r.partial && r.stop_reason.contains("h2"),
            "{}",
            r.stop_reason
        );
    }
}
