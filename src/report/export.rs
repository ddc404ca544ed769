//! Plain-text exports beside `result.json`, for spreadsheets and plotting tools:
//! `timeseries.csv` (one row per second and event) and `histograms.csv` (the power-of-two
//! microsecond buckets per event, per request and per wait). Both are made only from a
//! [`RunResult`], so they always agree with it: the per-second request counts of an event
//! add up to its `requests`, and its request buckets add up to the same number.

use std::fmt::Write;

use super::result::{BucketJson, RunResult};

const MIB: f64 = (1u64 << 20) as f64;

/// Length in seconds of second `t` (from 1) of a measured window of `measured_seconds`:
/// 1, except for a last second cut short by the window's end or a stop.
pub fn second_length_s(t: u32, measured_seconds: f64) -> f64 {
    let len = measured_seconds - f64::from(t.saturating_sub(1));
    if len > 0.0 && len < 1.0 { len } else { 1.0 }
}

/// `timeseries.csv`: `t_s` is the second of the measured window (from 1; second `t` covers
/// `(t-1, t]`), `requests` and `bytes` are counts completed in it, the rates divide them by
/// the second's length (shorter only for a last, partial second), latencies are in µs and
/// empty when nothing completed.
pub fn timeseries_csv(r: &RunResult) -> String {
    let mut o = String::with_capacity(64 * r.timeseries.len() + 128);
    o.push_str("t_s,event,requests,bytes,requests_per_s,mib_per_s,mean_us,p99_us\n");
    for p in &r.timeseries {
        let len = second_length_s(p.t, r.measured_seconds);
        let opt = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
        let _ = writeln!(
            o,
            "{},{},{},{},{:.3},{:.3},{},{}",
            p.t,
            field(&p.event),
            p.requests,
            p.bytes,
            p.requests as f64 / len,
            p.bytes as f64 / MIB / len,
            opt(p.mean_us),
            opt(p.p99_us)
        );
    }
    o
}

/// `histograms.csv`: per event and kind (`request`, or `wait` — one period a session was
/// blocked), the power-of-two buckets as `[lower_us, upper_us)` and their counts. The first
/// bucket starts at 0; every other one at half its upper bound.
pub fn histograms_csv(r: &RunResult) -> String {
    let mut o = String::from("event,kind,lower_us,upper_us,count\n");
    for e in &r.events {
        for (kind, buckets) in [
            ("request", &e.histogram_micro),
            ("wait", &e.wait_histogram_micro),
        ] {
            for b in buckets {
                let _ = writeln!(
                    o,
                    "{},{kind},{},{},{}",
                    field(&e.name),
                    lower_us(b),
                    b.lt_us,
                    b.count
                );
            }
        }
    }
    o
}

/// The lower bound of a power-of-two bucket: 0 for `< 1 µs`, else half the upper bound.
pub fn lower_us(b: &BucketJson) -> u64 {
    if b.lt_us <= 1 { 0 } else { b.lt_us / 2 }
}

/// A CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_last_second_has_its_own_length() {
        assert_eq!(second_length_s(1, 2.0), 1.0);
        assert_eq!(second_length_s(2, 2.0), 1.0);
        assert!((second_length_s(3, 2.5) - 0.5).abs() < 1e-9);
        assert!((second_length_s(1, 0.25) - 0.25).abs() < 1e-9);
    }

    #[test]
    fn csv_totals_agree_with_the_result() {
        let r = crate::report::fixture::run_result(100, &["db file parallel read", "x,y"], false);
        let ts = timeseries_csv(&r);
        let hist = histograms_csv(&r);
        for e in &r.events {
            let name = field(&e.name);
            let per_second: u64 = ts
                .lines()
                .skip(1)
                .filter_map(|l| l.strip_prefix(&format!("{},{name},", l.split(',').next()?)))
                .map(|rest| rest.split(',').next().unwrap().parse::<u64>().unwrap())
                .sum();
            assert_eq!(per_second, e.requests, "{}", e.name);
            let count = |kind: &str| -> u64 {
                hist.lines()
                    .filter_map(|l| l.strip_prefix(&format!("{name},{kind},")))
                    .map(|rest| rest.rsplit(',').next().unwrap().parse::<u64>().unwrap())
                    .sum()
            };
            assert_eq!(count("request"), e.requests, "{}", e.name);
            let waits: u64 = e.wait_histogram_micro.iter().map(|b| b.count).sum();
            assert_eq!(count("wait"), waits, "{}", e.name);
        }
        assert_eq!(ts.lines().count(), 1 + 100 * 2);
        assert!(hist.contains("db file parallel read,request,0,1,0\n"));
        assert!(hist.contains("db file parallel read,request,64,128,"));
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(field("db file sequential read"), "db file sequential read");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
