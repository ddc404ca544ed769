//! Plain-text exports beside `result.json`, for spreadsheets and plotting tools:
//! `timeseries.csv` (one row per second and event) and `histograms.csv` (the power-of-two
//! microsecond buckets per event, per request and per wait). Both are made only from a
//! [`RunResult`], so they always agree with it: the per-second request counts of an event
//! add up to its `requests`, and its request buckets add up to the same number.

use std::fmt::Write;

use super::result::RunResult;
use super::sections::{bucket_rows, second_rows};

/// `timeseries.csv`: `t_s` is the second of the measured window (from 1; second `t` covers
/// `(t-1, t]`), `requests` and `bytes` are counts completed in it, the rates divide them by
/// the second's length (shorter only for a last, partial second), latencies are in µs and
/// empty when nothing completed.
pub fn timeseries_csv(r: &RunResult) -> String {
    let mut o = String::with_capacity(64 * r.timeseries.len() + 128);
    o.push_str("t_s,event,requests,bytes,requests_per_s,mib_per_s,mean_us,p99_us\n");
    let opt = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
    for p in second_rows(r) {
        let _ = writeln!(
            o,
            "{},{},{},{},{:.3},{:.3},{},{}",
            p.t,
            field(p.event),
            p.requests,
            p.bytes,
            p.requests_per_s,
            p.mib_per_s,
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
    for b in bucket_rows(r) {
        let _ = writeln!(
            o,
            "{},{},{},{},{}",
            field(b.event),
            b.kind,
            b.lower_us,
            b.upper_us,
            b.count
        );
    }
    o
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
