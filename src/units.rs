//! Sizes and durations as users type them (SPEC §6): binary sizes `8K`, `1G`, plain bytes;
//! durations `500ms`, `30s`, `10m`, `1h`.

use std::time::Duration;

/// Parses a size: a whole number optionally followed by K, M, G or T (binary, 1K = 1024).
/// `KiB`/`KB` spellings and lower case are accepted and mean the same binary unit.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let s = text.trim();
    if s.is_empty() {
        return Err(
            "empty size; use a number with K, M, G or T (binary: 1K = 1024), e.g. 8K".into(),
        );
    }
    if s.starts_with('-') {
        return Err(format!("'{s}' is negative; sizes must be positive"));
    }
    let digits_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(digits_end);
    if num.is_empty() {
        return Err(format!(
            "'{s}' is not a size; use a number with K, M, G or T (binary: 1K = 1024), e.g. 8K"
        ));
    }
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "unknown unit '{unit}' in '{s}'; use K, M, G or T (binary: 1K = 1024) or plain bytes"
            ));
        }
    };
    let n: u64 = num.parse().map_err(|_| format!("'{s}' is too large"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// Parses a duration: a whole number followed by `ms`, `s`, `m` or `h`; a plain number is
/// seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s.starts_with('-') {
        return Err(format!(
            "'{s}' is negative; durations must be zero or more, e.g. 30s"
        ));
    }
    let digits_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(digits_end);
    if num.is_empty() {
        return Err(format!(
            "'{s}' is not a duration; use e.g. 500ms, 30s, 10m or 1h"
        ));
    }
    let n: u64 = num.parse().map_err(|_| format!("'{s}' is too large"))?;
    let ms_per_unit: u64 = match unit {
        "ms" => 1,
        "" | "s" => 1_000,
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        _ => {
            return Err(format!(
                "unknown unit '{unit}' in '{s}'; use ms, s, m or h, e.g. 30s"
            ));
        }
    };
    let ms = n
        .checked_mul(ms_per_unit)
        .filter(|ms| *ms <= 366 * 24 * 3_600_000)
        .ok_or_else(|| format!("'{s}' is too long (at most a year)"))?;
    Ok(Duration::from_millis(ms))
}

/// Formats a byte count the way it is typed on the command line: `8K`, `256M`, `1G`, or
/// plain bytes when no binary unit divides it.
pub fn size_label(bytes: u64) -> String {
    const UNITS: [(u32, &str); 4] = [(40, "T"), (30, "G"), (20, "M"), (10, "K")];
    for (shift, unit) in UNITS {
        let one = 1u64 << shift;
        if bytes >= one && bytes.is_multiple_of(one) {
            return format!("{}{unit}", bytes / one);
        }
    }
    bytes.to_string()
}

/// Formats a duration as typed: `3s`, `500ms`, `10m`, `1h`.
pub fn duration_label(d: Duration) -> String {
    let ms = d.as_millis() as u64;
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1_000) {
        format!("{}s", ms / 1_000)
    } else {
        format!("{ms}ms")
    }
}

/// `s` as one shell word: as is when it holds only characters no shell treats specially,
/// else in single quotes — so a path in a hint can be pasted as printed.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Human-readable binary size with one decimal: `1.0 GiB`, `8.0 KiB`, `512 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{v:.1} {}", UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_binary() {
        assert_eq!(parse_size("8K").unwrap(), 8192);
        assert_eq!(parse_size("8k").unwrap(), 8192);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("2T").unwrap(), 2 << 40);
    }

    #[test]
    fn bad_sizes_say_why() {
        assert!(parse_size("12Q").unwrap_err().contains("unknown unit 'Q'"));
        assert!(parse_size("-5K").unwrap_err().contains("negative"));
        assert!(parse_size("K").is_err());
        assert!(parse_size("").is_err());
        assert!(
            parse_size("99999999999999999999")
                .unwrap_err()
                .contains("too large")
        );
        assert!(parse_size("20000000T").unwrap_err().contains("too large"));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("-5s").unwrap_err().contains("negative"));
        assert!(parse_duration("5x").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("99999999999h").is_err());
    }

    #[test]
    fn labels_round_trip() {
        for s in ["8K", "256M", "1G", "3T", "1000"] {
            assert_eq!(size_label(parse_size(s).unwrap()), s);
        }
        for s in ["500ms", "3s", "10m", "1h"] {
            assert_eq!(duration_label(parse_duration(s).unwrap()), s);
        }
        assert_eq!(human_bytes(1 << 30), "1.0 GiB");
        assert_eq!(human_bytes(512), "512 B");
    }
}

/// A latency in microseconds, short: `850 µs`, `4.2 ms`, `1.20 s`.
pub fn latency_label(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1_000_000.0 {
        format!("{:.1} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// A size or a range of sizes, typed `2K` or `512..8K`; values are drawn uniformly from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SizeRange {
    pub lo: u64,
    pub hi: u64,
}

impl SizeRange {
    pub fn fixed(v: u64) -> SizeRange {
        SizeRange { lo: v, hi: v }
    }
    /// A value from the range (uniform).
    #[inline]
    pub fn pick(&self, rng: &mut fastrand::Rng) -> u64 {
        if self.lo == self.hi {
            self.lo
        } else {
            rng.u64(self.lo..=self.hi)
        }
    }
    pub fn label(&self) -> String {
        if self.lo == self.hi {
            size_label(self.lo)
        } else {
            format!("{}..{}", size_label(self.lo), size_label(self.hi))
        }
    }
}

/// Parses `2K` or `512..8K`.
pub fn parse_size_range(text: &str) -> Result<SizeRange, String> {
    match text.split_once("..") {
        None => parse_size(text).map(SizeRange::fixed),
        Some((a, b)) => {
            let (lo, hi) = (parse_size(a)?, parse_size(b)?);
            if lo > hi {
                return Err(format!(
                    "'{text}': the range runs backwards; write LOW..HIGH, e.g. 512..8K"
                ));
            }
            Ok(SizeRange { lo, hi })
        }
    }
}

/// A duration or a range of durations, typed `1ms` or `1ms..5ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationRange {
    pub lo: Duration,
    pub hi: Duration,
}

impl DurationRange {
    /// A value from the range (uniform), in nanoseconds.
    #[inline]
    pub fn pick_ns(&self, rng: &mut fastrand::Rng) -> u64 {
        let (lo, hi) = (self.lo.as_nanos() as u64, self.hi.as_nanos() as u64);
        if lo == hi { lo } else { rng.u64(lo..=hi) }
    }
    pub fn label(&self) -> String {
        if self.lo == self.hi {
            duration_label(self.lo)
        } else {
            format!("{}..{}", duration_label(self.lo), duration_label(self.hi))
        }
    }
}

/// Parses `1ms` or `1ms..5ms`.
pub fn parse_duration_range(text: &str) -> Result<DurationRange, String> {
    match text.split_once("..") {
        None => parse_duration(text).map(|d| DurationRange { lo: d, hi: d }),
        Some((a, b)) => {
            let (lo, hi) = (parse_duration(a)?, parse_duration(b)?);
            if lo > hi {
                return Err(format!(
                    "'{text}': the range runs backwards; write LOW..HIGH, e.g. 1ms..5ms"
                ));
            }
            Ok(DurationRange { lo, hi })
        }
    }
}

#[cfg(test)]
mod range_tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_size_range("2K").unwrap(), SizeRange::fixed(2048));
        assert_eq!(
            parse_size_range("512..8K").unwrap(),
            SizeRange { lo: 512, hi: 8192 }
        );
        assert!(
            parse_size_range("8K..512")
                .unwrap_err()
                .contains("backwards")
        );
        assert!(parse_size_range("1..2Q").is_err());
        let r = parse_duration_range("1ms..5ms").unwrap();
        assert_eq!(
            (r.lo, r.hi),
            (Duration::from_millis(1), Duration::from_millis(5))
        );
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..100 {
            let v = SizeRange { lo: 512, hi: 8192 }.pick(&mut rng);
            assert!((512..=8192).contains(&v));
        }
        assert_eq!(SizeRange { lo: 512, hi: 8192 }.label(), "512..8K");
    }
}
