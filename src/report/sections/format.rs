//! How figures are written in every report: one place, so the text summary, the HTML page
//! and a comparison never show the same figure two ways.

pub use crate::units::thousands;

/// Microseconds with sensible precision: `3.21`, `45.6`, `1,234`.
pub fn us(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        thousands(v.round() as u64)
    }
}

/// A rate with two decimals and thousands separators: `56,750.63`.
pub fn decimal(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let cents = (v.abs() * 100.0).round() as u64;
    let sign = if v < 0.0 && cents > 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", thousands(cents / 100), cents % 100)
}

/// A figure with a precision that suits its size: `3.21`, `45.67`, `1,234.5`.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v < 100.0 {
        format!("{v:.2}")
    } else {
        let tenths = (v * 10.0).round() as u64;
        format!("{}.{}", thousands(tenths / 10), tenths % 10)
    }
}

/// `v / base` as `1.500×`; `-` when there is no base or it is zero.
pub fn ratio(v: Option<f64>, base: Option<f64>) -> String {
    match (v, base) {
        (Some(v), Some(b)) if b > 0.0 && v.is_finite() => format!("{:.3}×", v / b),
        _ => "-".into(),
    }
}

/// `a / b`, 0 when `b` is not positive.
pub fn share(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// A latency in µs as people say it: `512µs`, `1.02ms`, `16.4ms`, `1.05s`.
pub fn latency_label(us: f64) -> String {
    let three = |v: f64| {
        if v >= 100.0 {
            format!("{v:.0}")
        } else if v >= 10.0 {
            format!("{v:.1}").trim_end_matches(".0").to_string()
        } else {
            let s = format!("{v:.2}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
    };
    if us >= 1e6 {
        format!("{}s", three(us / 1e6))
    } else if us >= 1e3 {
        format!("{}ms", three(us / 1e3))
    } else {
        format!("{}µs", three(us))
    }
}

/// The upper bound of a power-of-two latency bucket, as the histogram table's columns and
/// the histogram chart's axis both write it: `512µs`, `2.05ms`, `131ms`, `2.1s`.
pub fn bucket_label(lt_us: u64) -> String {
    latency_label(lt_us as f64)
}

/// At most `n` characters, the last one `…` when cut.
pub fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(decimal(56750.634), "56,750.63");
        assert_eq!(decimal(2057.6), "2,057.60");
        assert_eq!(decimal(0.0), "0.00");
        assert_eq!(us(3.214), "3.21");
        assert_eq!(us(1234.4), "1,234");
        assert_eq!(number(7.8125), "7.81");
        assert_eq!(number(1500.0), "1,500.0");
        assert_eq!(ratio(Some(3.0), Some(2.0)), "1.500×");
        assert_eq!(ratio(Some(3.0), Some(0.0)), "-");
        assert_eq!(ratio(None, Some(1.0)), "-");
        assert_eq!(bucket_label(512), "512µs");
        assert_eq!(bucket_label(2048), "2.05ms");
        assert_eq!(bucket_label(4096), "4.1ms");
        assert_eq!(bucket_label(131072), "131ms");
        assert_eq!(bucket_label(2_000_000), "2s");
        assert_eq!(bucket_label(2_097_152), "2.1s");
        assert_eq!(clip("direct path write temp", 8), "direct …");
    }
}
