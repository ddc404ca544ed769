//! Measured, not assumed: a device's capabilities from runs in the results store — the
//! requirements' job run at several `--span` values on one device (or LUN).
//!
//! - A run **passes** when its verdict passed and every latency limit of the plan's classes
//!   holds for the run's events of the same name; a partial run does not pass.
//! - The **usable surface** is the largest span among the passing runs.
//! - **Per-device IOPS and MiB/s** come from the passing run at that span (the one with the
//!   most device IOPS, if several): device IOPS = (read IOPS + write IOPS × the write penalty
//!   of the RAID under the runs) / devices under the runs; device MiB/s = (read MiB/s + write
//!   MiB/s / its data fraction) / devices — the figures the arithmetic of `arith.rs` divides by.

use serde::Serialize;

use super::arith::{Load, Raid};
use super::plan::Class;
use crate::report::RunResult;
use crate::workload::span;

/// One run as the sizing judged it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgedRun {
    pub id: i64,
    /// The fraction of each data file the run used (result.json `config.span`).
    pub span: f64,
    pub pass: bool,
    /// Why it did not pass (failed limits, partial run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// What the hosts saw during the run.
    pub host: Load,
    /// Per device, under the RAID of the runs.
    pub iops_per_device: f64,
    pub mib_per_s_per_device: f64,
}

/// The capabilities the runs gave, and where each came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    pub iops: f64,
    pub mib_per_s: f64,
    pub usable_surface: f64,
    /// The run the IOPS and MiB/s come from: a passing run at the usable surface.
    pub figures_from_run: i64,
    /// Devices under the target the runs used, and their RAID.
    pub runs_devices: u32,
    pub runs_raid: String,
    pub runs_write_penalty: f64,
    pub runs_data_fraction: f64,
    pub runs: Vec<JudgedRun>,
    /// Runs that disagree with the usable surface: a smaller span that failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Why a run (or the whole set) cannot be used: one line.
pub type Refusal = String;

/// Judges `runs` (id and result) against the plan's `classes`; `raid` and `devices` are what
/// the runs were made on.
pub fn measure(
    runs: &[(i64, RunResult)],
    classes: &[Class],
    raid: Raid,
    devices: u32,
) -> Result<Measured, Refusal> {
    let Some((first_id, first)) = runs.first() else {
        return Err("no runs given".into());
    };
    let job = |r: &RunResult| {
        let mut j = r.job.clone();
        // The span may be the one thing the runs' job files differ in.
        if let Some(d) = j
            .as_mut()
            .and_then(|j| j.get_mut("dataset"))
            .and_then(|d| d.as_object_mut())
        {
            d.remove("span");
        }
        (r.test.clone(), j)
    };
    let mut judged = Vec::with_capacity(runs.len());
    for (id, r) in runs {
        if job(r) != job(first) {
            return Err(format!(
                "runs {first_id} and {id} ran different jobs ({} and {}): the runs must be the requirements' one job at several spans",
                describe(first),
                describe(r)
            ));
        }
        let Some(verdict) = &r.verdict else {
            return Err(format!(
                "run {id} ({}) has no verdict: make the runs with a job file whose classes have limits (`dbio run --job FILE --span S`)",
                describe(r)
            ));
        };
        let mut reasons = Vec::new();
        if r.partial {
            reasons.push(format!("partial run ({})", r.stop_reason));
        }
        for c in &verdict.classes {
            for l in c.limits.iter().filter(|l| l.result != "PASS") {
                reasons.push(format!(
                    "verdict: class '{}' {} {} {} (measured {})",
                    c.class,
                    l.limit,
                    l.op,
                    short(l.required),
                    short(l.measured)
                ));
            }
        }
        reasons.extend(plan_limits_broken(r, classes));
        let host = Load {
            read_iops: r.totals.read_iops,
            write_iops: r.totals.write_iops,
            read_mib_per_s: r.totals.read_mib_per_s,
            write_mib_per_s: r.totals.write_mib_per_s,
        };
        let n = f64::from(devices);
        judged.push(JudgedRun {
            id: *id,
            span: r.config.span,
            pass: reasons.is_empty(),
            reasons,
            host,
            iops_per_device: host.backend_iops(raid) / n,
            mib_per_s_per_device: host.backend_mib_per_s(raid) / n,
        });
    }
    let best = judged
        .iter()
        .filter(|j| j.pass)
        .max_by(|a, b| {
            a.span
                .total_cmp(&b.span)
                .then(a.iops_per_device.total_cmp(&b.iops_per_device))
        })
        .ok_or_else(|| {
            let each: Vec<String> = judged
                .iter()
                .map(|j| {
                    format!(
                        "run {} at span {}: {}",
                        j.id,
                        span::label(j.span),
                        j.reasons.first().map_or("", String::as_str)
                    )
                })
                .collect();
            format!(
                "no run passed, so no span of the device meets the requirements ({}); measure smaller spans",
                each.join("; ")
            )
        })?;
    let best = best.clone();
    if best.iops_per_device <= 0.0 || best.mib_per_s_per_device <= 0.0 {
        return Err(format!(
            "run {} measured no reads or writes to size with",
            best.id
        ));
    }
    // A device does not get better as it fills: a smaller span that failed says the
    // measurements are noisy (or the runs differ in something else).
    let warnings = judged
        .iter()
        .filter(|j| !j.pass && j.span < best.span)
        .map(|j| {
            format!(
                "run {} failed at span {}, below the usable surface {}: repeat the runs (alternately) before trusting it",
                j.id,
                span::label(j.span),
                span::label(best.span)
            )
        })
        .collect();
    Ok(Measured {
        iops: best.iops_per_device,
        mib_per_s: best.mib_per_s_per_device,
        usable_surface: best.span,
        figures_from_run: best.id,
        runs_devices: devices,
        runs_raid: raid.label(),
        runs_write_penalty: raid.write_penalty(),
        runs_data_fraction: raid.data_fraction(),
        runs: judged,
        warnings,
    })
}

/// A figure with at most two decimals: `100`, `385.41`.
fn short(v: f64) -> String {
    let t = format!("{v:.2}");
    t.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `job at span 25%` or `read-iops at span 100%`.
fn describe(r: &RunResult) -> String {
    format!("{} at span {}", r.test, span::label(r.config.span))
}

/// The plan's latency limits a run's events of the same names break.
fn plan_limits_broken(r: &RunResult, classes: &[Class]) -> Vec<String> {
    let mut broken = Vec::new();
    for c in classes {
        for e in r.events.iter().filter(|e| e.name == c.event.name()) {
            for (stat, most) in &c.limits {
                let l = &e.latency_us;
                let measured = match *stat {
                    "mean" => l.mean,
                    "p50" => l.p50,
                    "p90" => l.p90,
                    "p95" => l.p95,
                    _ => l.p99,
                };
                let most_us = most.as_secs_f64() * 1e6;
                if measured > most_us {
                    let (m, l) = two_ms(measured, most_us);
                    broken.push(format!(
                        "plan class '{}': \"{}\" {stat} {m} ms > {l} ms",
                        c.name, e.name
                    ));
                }
            }
        }
    }
    broken
}

/// Two latencies in µs as milliseconds, with enough decimals (2 to 6) that they read
/// differently: 0.120 against 0.115 is not "0.12 ms > 0.12 ms".
fn two_ms(a_us: f64, b_us: f64) -> (String, String) {
    let at = |d: usize| (format!("{:.d$}", a_us / 1e3), format!("{:.d$}", b_us / 1e3));
    (2..=6)
        .map(at)
        .find(|(a, b)| a != b)
        .unwrap_or_else(|| at(6))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::result::{ClassVerdictJson, LimitVerdictJson, VerdictJson};
    use crate::workload::Event;

    /// A job run at `span` with `reads`/`writes` per second and its verdict.
    fn run(span: f64, reads: f64, writes: f64, pass: bool, p99_us: f64) -> RunResult {
        let mut r = crate::store::tests::sample("job", "db file parallel read", reads, p99_us);
        r.config.span = span;
        r.totals.read_iops = reads;
        r.totals.write_iops = writes;
        r.totals.read_mib_per_s = reads / 128.0;
        r.totals.write_mib_per_s = writes / 128.0;
        r.job = Some(serde_json::json!({ "dataset": { "span": span.to_string() } }));
        r.verdict = Some(VerdictJson {
            pass,
            classes: vec![ClassVerdictJson {
                class: "reads".into(),
                event: "db file parallel read".into(),
                pass,
                limits: vec![LimitVerdictJson {
                    limit: "p99_ms".into(),
                    op: "<=".into(),
                    required: 10.0,
                    measured: p99_us / 1e3,
                    result: if pass { "PASS" } else { "FAIL" }.into(),
                }],
            }],
            failed: Vec::new(),
        });
        r
    }

    fn class(p99_ms: u64) -> Class {
        Class {
            name: "reads".into(),
            event: Event::DbFileParallelRead,
            size_bytes: 8192,
            peak_iops: 100.0,
            peak_mib_per_s: 100.0 / 128.0,
            limits: vec![("p99", std::time::Duration::from_millis(p99_ms))],
        }
    }

    #[test]
    fn the_largest_passing_span_gives_the_surface_and_the_figures() {
        let runs = vec![
            (3, run(0.25, 4000.0, 1000.0, true, 2000.0)),
            (4, run(0.5, 3000.0, 1000.0, true, 5000.0)),
            (5, run(1.0, 2000.0, 500.0, false, 30_000.0)),
        ];
        let m = measure(&runs, &[class(10)], Raid::Raid1, 2).unwrap();
        assert_eq!(m.usable_surface, 0.5);
        assert_eq!(m.figures_from_run, 4);
        // (3,000 + 1,000 × 2) / 2 devices.
        assert_eq!(m.iops, 2500.0);
        // (3,000/128 + 1,000/128 / 0.5) / 2.
        assert!((m.mib_per_s - 5000.0 / 128.0 / 2.0).abs() < 1e-9);
        assert!(!m.runs[2].pass && m.runs[2].reasons[0].contains("p99_ms"));
        // The plan's own, tighter limit fails the 50 % run too.
        let m = measure(&runs, &[class(4)], Raid::None, 1).unwrap();
        assert_eq!(
            (m.usable_surface, m.figures_from_run, m.iops),
            (0.25, 3, 5000.0)
        );
        assert!(m.runs[1].reasons[0].contains("plan class 'reads'"));
        assert!(m.warnings.is_empty());
        // A smaller span failing below a larger one that passed is worth a word.
        let noisy = vec![
            (6, run(0.25, 4000.0, 0.0, false, 30_000.0)),
            (7, run(0.5, 4000.0, 0.0, true, 2000.0)),
        ];
        let m = measure(&noisy, &[], Raid::None, 1).unwrap();
        assert_eq!(m.usable_surface, 0.5);
        assert!(
            m.warnings[0].contains("run 6 failed at span 25%"),
            "{:?}",
            m.warnings
        );
    }

    #[test]
    fn runs_without_a_verdict_of_other_jobs_or_all_failing_are_refused() {
        let mut plain = run(0.5, 1.0, 0.0, true, 1.0);
        plain.verdict = None;
        assert!(
            measure(&[(7, plain)], &[], Raid::None, 1)
                .unwrap_err()
                .contains("run 7 (job at span 50%) has no verdict")
        );
        let mut other = run(1.0, 1.0, 0.0, true, 1.0);
        other.test = "read-iops".into();
        let e = measure(
            &[(1, run(0.5, 1.0, 0.0, true, 1.0)), (2, other)],
            &[],
            Raid::None,
            1,
        )
        .unwrap_err();
        assert!(e.contains("different jobs"), "{e}");
        let e = measure(
            &[(1, run(0.5, 1.0, 0.0, false, 50_000.0))],
            &[],
            Raid::None,
            1,
        )
        .unwrap_err();
        assert!(
            e.contains("no run passed") && e.contains("run 1 at span 50%"),
            "{e}"
        );
    }

    #[test]
    fn limits_broken_read_differently_from_the_limit() {
        assert_eq!(two_ms(120.0, 115.0), ("0.120".into(), "0.115".into()));
        assert_eq!(two_ms(2500.0, 1000.0), ("2.50".into(), "1.00".into()));
    }
}
