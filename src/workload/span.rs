//! `--span FRACTION` (`[dataset] span`): the active surface. Every request of a run falls in
//! the first FRACTION of each data file or device, the way a drive filled to that level is
//! used (docs/sizing.md: a 146 GB drive met the latency limits only on its first 33 %).
//!
//! The span is applied once, to the shape every pattern draws its offsets from
//! ([`super::plan`]): random blocks, scans, direct path writers' regions, DBWR and OLTP
//! blocks all see files that end where the span ends. Redo logs and temp files are not data
//! files and keep their whole size.

/// Parts per million in a whole file.
const WHOLE: u32 = 1_000_000;

/// A fraction of each data file, above 0 and at most all of it (parts per million).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span(u32);

impl Default for Span {
    fn default() -> Span {
        Span::FULL
    }
}

impl Span {
    /// The whole file.
    pub const FULL: Span = Span(WHOLE);

    /// Parses `33%`, `0.33` or `1` (clap value parser of `--span`; also a sweep's values).
    pub fn parse(text: &str) -> std::result::Result<Span, String> {
        let t = text.trim();
        let (number, scale) = match t.strip_suffix('%') {
            Some(n) => (n.trim(), 100.0),
            None => (t, 1.0),
        };
        let fraction = number
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .map(|v| v / scale);
        match fraction {
            Some(f) if f > 0.0 && f <= 1.0 => {
                let ppm = (f * f64::from(WHOLE)).round() as u32;
                if ppm == 0 {
                    Err(format!("'{t}' is below 0.0001 % of a file"))
                } else {
                    Ok(Span(ppm))
                }
            }
            _ => Err(format!(
                "'{t}': a fraction of each data file above 0 and at most 100 %, e.g. 33% or 0.33"
            )),
        }
    }

    /// The span as parts per million (a sweep's values are whole numbers).
    pub fn ppm(self) -> u32 {
        self.0
    }

    /// The span of `ppm` parts per million (as [`Span::ppm`] gave it).
    pub fn from_ppm(ppm: u32) -> Span {
        Span(ppm.clamp(1, WHOLE))
    }

    /// The fraction of each file, 0 < f ≤ 1 (result.json `config.span`).
    pub fn fraction(self) -> f64 {
        f64::from(self.0) / f64::from(WHOLE)
    }

    pub fn is_full(self) -> bool {
        self.0 == WHOLE
    }

    /// As people write it: `25%`, `33.3%`.
    pub fn label(self) -> String {
        label(self.fraction())
    }

    /// The bytes of a file of `file_size` that requests may touch: the span of it, in whole
    /// `unit`s (blocks); the whole file, as it is, for the full span.
    pub fn of(self, file_size: u64, unit: u64) -> u64 {
        if self.is_full() {
            return file_size;
        }
        let bytes = (u128::from(file_size) * u128::from(self.0) / u128::from(WHOLE)) as u64;
        bytes / unit.max(1) * unit.max(1)
    }
}

/// A fraction as a percentage: `25%`, `33.3%`, `0.05%`.
pub fn label(fraction: f64) -> String {
    let pct = fraction * 100.0;
    let text = format!("{pct:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_parse_as_percent_or_fraction() {
        assert_eq!(Span::parse("33%").unwrap(), Span(330_000));
        assert_eq!(Span::parse("0.33").unwrap(), Span(330_000));
        assert_eq!(Span::parse(" 25 % ").unwrap(), Span(250_000));
        assert_eq!(Span::parse("1").unwrap(), Span::FULL);
        assert_eq!(Span::parse("100%").unwrap(), Span::FULL);
        for bad in [
            "0", "0%", "-5%", "101%", "1.5", "abc", "", "NaN", "inf", "1e-9",
        ] {
            assert!(Span::parse(bad).is_err(), "{bad}");
        }
        assert!(Span::parse("150%").unwrap_err().contains("at most 100 %"));
    }

    #[test]
    fn a_span_is_whole_units_of_the_file() {
        let s = Span::parse("25%").unwrap();
        assert_eq!(s.of(64 << 20, 8192), 16 << 20);
        // 1/3 of 1 MiB in 8K blocks: 349525 bytes → 42 whole blocks.
        assert_eq!(
            Span::parse("33.3333%").unwrap().of(1 << 20, 8192),
            42 * 8192
        );
        assert_eq!(Span::FULL.of(1 << 20, 8192), 1 << 20);
        assert_eq!(s.label(), "25%");
        assert_eq!(Span::parse("0.333").unwrap().label(), "33.3%");
        assert_eq!(Span::from_ppm(s.ppm()), s);
        assert!((s.fraction() - 0.25).abs() < 1e-12);
    }
}
