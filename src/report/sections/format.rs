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

/// The upper bound of a power-of-two latency bucket: `512us`, `2.0ms`, `131ms`, `2s`.
pub fn bucket_label(lt_us: u64) -> String {
    if lt_us >= 1_000_000 && lt_us.is_multiple_of(1_000_000) {
        format!("{}s", lt_us / 1_000_000)
    } else if lt_us >= 1024 {
        let ms = lt_us as f64 / 1000.0;
        if ms >= 100.0 {
            format!("{ms:.0}ms")
        } else {
            format!("{ms:.1}ms")
        }
    } else {
        format!("{lt_us}us")
    }
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
        assert_eq!(bucket_label(512), "512us");
        assert_eq!(bucket_label(2048), "2.0ms");
        assert_eq!(bucket_label(131072), "131ms");
        assert_eq!(bucket_label(2_000_000), "2s");
        assert_eq!(clip("direct path write temp", 8), "direct …");
    }
}
