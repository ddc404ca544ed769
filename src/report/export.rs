//! Plain-text exports beside `result.json`, for spreadsheets and plotting tools:
//! `timeseries.csv` (one row per second and event) and `histograms.csv` (the power-of-two
//! microsecond buckets per event, per request and per wait). Both are made only from a
//! [`RunResult`], so they always agree with it: the per-second request counts of an event
//! add up to its `requests`, and its request buckets add up to the same number. Every CSV
//! file dbio writes (these, `sweep.csv`, a matrix's grids) is written by [`Csv`].

use super::result::RunResult;
use super::sections::{bucket_rows, second_rows};

/// `timeseries.csv`: `t_s` is the second of the measured window (from 1; second `t` covers
/// `(t-1, t]`), `requests` and `bytes` are counts completed in it, the rates divide them by
/// the second's length (shorter only for a last, partial second), latencies are in µs and
/// empty when nothing completed.
pub fn timeseries_csv(r: &RunResult) -> String {
    let mut o = Csv::new([
        "t_s",
        "event",
        "requests",
        "bytes",
        "requests_per_s",
        "mib_per_s",
        "mean_us",
        "p99_us",
    ]);
    let opt = |v: Option<f64>| v.map(|v| format!("{v:.3}")).unwrap_or_default();
    for p in second_rows(r) {
        o.row([
            p.t.to_string(),
            p.event.to_string(),
            p.requests.to_string(),
            p.bytes.to_string(),
            format!("{:.3}", p.requests_per_s),
            format!("{:.3}", p.mib_per_s),
            opt(p.mean_us),
            opt(p.p99_us),
        ]);
    }
    o.finish()
}

/// `histograms.csv`: per event and kind (`request`, or `wait` — one period a session was
/// blocked), the power-of-two buckets as `[lower_us, upper_us)` and their counts. The first
/// bucket starts at 0; every other one at half its upper bound.
pub fn histograms_csv(r: &RunResult) -> String {
    let mut o = Csv::new(["event", "kind", "lower_us", "upper_us", "count"]);
    for b in bucket_rows(r) {
        o.row([
            b.event.to_string(),
            b.kind.to_string(),
            b.lower_us.to_string(),
            b.upper_us.to_string(),
            b.count.to_string(),
        ]);
    }
    o.finish()
}

/// A CSV file being written: a header line, then one line per row, fields separated by
/// commas, lines ended by `\n`. A field is quoted as RFC 4180 says — only when it holds
/// a comma, a double quote or a line break, its quotes doubled — so a name from a job file
/// or a path can never add a column or a row.
#[derive(Debug, Clone)]
pub struct Csv {
    text: String,
}

impl Csv {
    /// A file with the `header` line.
    pub fn new<S: AsRef<str>>(header: impl IntoIterator<Item = S>) -> Csv {
        let mut csv = Csv {
            text: String::with_capacity(4096),
        };
        csv.row(header);
        csv
    }

    /// Adds one line.
    pub fn row<S: AsRef<str>>(&mut self, fields: impl IntoIterator<Item = S>) {
        for (i, f) in fields.into_iter().enumerate() {
            if i > 0 {
                self.text.push(',');
            }
            field(&mut self.text, f.as_ref());
        }
        self.text.push('\n');
    }

    /// The file's text.
    pub fn finish(self) -> String {
        self.text
    }
}

/// Writes a CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
fn field(o: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        o.push('"');
        o.push_str(&s.replace('"', "\"\""));
        o.push('"');
    } else {
        o.push_str(s);
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
            let mut name = String::new();
            field(&mut name, &e.name);
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
        let mut c = Csv::new(["a", "b"]);
        c.row(["db file sequential read", "a,b"]);
        c.row(["say \"x\"", "two\nlines"]);
        c.row(["\r", ""]);
        assert_eq!(
            c.finish(),
            "a,b\ndb file sequential read,\"a,b\"\n\"say \"\"x\"\"\",\"two\nlines\"\n\"\r\",\n"
        );
    }
}
