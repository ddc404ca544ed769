//! Sizes and durations as users type them: binary sizes (1K = 1024) `8K`, `1G`, `1.5G`, plain
//! bytes; durations `500us`, `0.5ms`, `1.5s`, `1m30s`, `10m`, `1h`. One parser for each,
//! used by every option, job-file key and plan.

use std::time::Duration;

/// Parses a size — the one parser of every size dbio reads (options, job files, plans): a
/// number optionally followed by K, M, G or T (binary, 1K = 1024; `KiB`/`KB` and lower case
/// mean the same), e.g. `8K`, `1G`, `1.5G`, `4096`. The result must be whole bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let s = text.trim();
    let hint = "use a number with K, M, G or T (binary: 1K = 1024), e.g. 8K or 1.5G";
    if s.is_empty() {
        return Err(format!("empty size; {hint}"));
    }
    if s.starts_with('-') {
        return Err(format!("'{s}' is negative; sizes must be positive"));
    }
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let Some((whole, frac)) = decimal(num) else {
        return Err(format!("'{s}' is not a size; {hint}"));
    };
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
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
    let bytes = scaled(whole, frac, 1u128 << shift).ok_or_else(|| format!("'{s}' is too large"))?;
    if bytes.1 {
        return Err(format!("'{s}' is not a whole number of bytes"));
    }
    u64::try_from(bytes.0).map_err(|_| format!("'{s}' is too large"))
}

/// A decimal number's whole part and fraction digits: `1.5` → (1, "5"); None when it is
/// not one (empty, two points, no digits).
fn decimal(num: &str) -> Option<(u128, &str)> {
    let (whole, frac) = num.split_once('.').unwrap_or((num, ""));
    if (whole.is_empty() && frac.is_empty()) || frac.contains('.') {
        return None;
    }
    let w = if whole.is_empty() {
        0
    } else {
        whole.parse::<u128>().ok()?
    };
    Some((w, frac))
}

/// `whole.frac × unit`, exactly: the integer result and whether a remainder was dropped.
/// None on overflow.
fn scaled(whole: u128, frac: &str, unit: u128) -> Option<(u128, bool)> {
    let mut v = whole.checked_mul(unit)?;
    let digits = frac.len().min(30) as u32;
    if digits > 0 {
        let f: u128 = frac[..digits as usize].parse().ok()?;
        let den = 10u128.checked_pow(digits)?;
        let num = f.checked_mul(unit)?;
        v = v.checked_add(num / den)?;
        return Some((v, num % den != 0));
    }
    Some((v, false))
}

/// Parses a duration — the one parser of every duration dbio reads (options, job files,
/// limits): one or more parts of a number and a unit, `ns`, `us` (or `µs`), `ms`, `s`,
/// `m` (or `min`) and `h`, e.g. `500us`, `0.5ms`, `1.5s`, `1m30s`, `2h`; a plain number is
/// seconds. At most a year.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    let hint = "use e.g. 500us, 10ms, 1.5s, 1m30s or 1h";
    if s.starts_with('-') {
        return Err(format!(
            "'{s}' is negative; durations must be zero or more, e.g. 30s"
        ));
    }
    if s.is_empty() {
        return Err(format!("empty duration; {hint}"));
    }
    let mut rest = s;
    let mut total: u128 = 0;
    let mut units_seen = 0;
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(end);
        let Some((whole, frac)) = decimal(num) else {
            return Err(format!("'{s}' is not a duration; {hint}"));
        };
        let uend = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(uend);
        let ns_per: u128 = match unit.trim() {
            "" if units_seen == 0 && next.is_empty() => 1_000_000_000,
            "ns" => 1,
            "us" | "µs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" | "min" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => {
                return Err(format!("unknown unit '{unit}' in '{s}'; {hint}"));
            }
        };
        let (ns, _) = scaled(whole, frac, ns_per)
            .ok_or_else(|| format!("'{s}' is too long (at most a year)"))?;
        total = total
            .checked_add(ns)
            .ok_or_else(|| format!("'{s}' is too long (at most a year)"))?;
        units_seen += 1;
        rest = next;
    }
    if total > 366 * 24 * 3_600_000_000_000 {
        return Err(format!("'{s}' is too long (at most a year)"));
    }
    Ok(Duration::from_nanos(total as u64))
}

/// [`parse_duration`] for a latency: a unit is required (`10` alone would be ten seconds,
/// never what a latency limit means).
pub fn parse_latency(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return Err(format!(
            "'{t}' has no unit; give one, e.g. 500us, 10ms or 1.5s"
        ));
    }
    parse_duration(t)
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

/// Formats a duration as typed: `3s`, `500ms`, `10m`, `1h`, `250us`, `1500ns` — what
/// [`parse_duration`] reads back to the same value.
pub fn duration_label(d: Duration) -> String {
    let ns = d.as_nanos();
    let units: [(u128, &str); 6] = [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
        (1, "ns"),
    ];
    if ns == 0 {
        return "0s".into();
    }
    for (per, unit) in units {
        if ns.is_multiple_of(per) {
            return format!("{}{unit}", ns / per);
        }
    }
    unreachable!("every duration is a whole number of ns")
}

/// `s` as one shell word: as is when it holds only characters no shell treats specially,
/// else in single quotes — so a path in a hint can be pasted as printed.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&b));
    if plain {
        s.to_string()
    } else if s.chars().any(unsafe_to_show) {
        // Bash's $'...' quoting: the word still pastes back as typed, and the terminal
        // sees no control character.
        let mut out = String::from("$'");
        for c in s.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                c if unsafe_to_show(c) => out.push_str(&escaped(c)),
                c => out.push(c),
            }
        }
        out.push('\'');
        out
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Whether printing `c` as is could move the cursor, clear or retitle the terminal, hide
/// text or reorder it: C0 and C1 control characters, DEL, and the Unicode bidirectional
/// controls.
fn unsafe_to_show(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `c` as an escape a reader can type back: `\n`, `\r`, `\t`, `\x1b`, `\u{85}`.
fn escaped(c: char) -> String {
    match c {
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        c if (c as u32) < 0x80 => format!("\\x{:02x}", c as u32),
        c => format!("\\u{{{:x}}}", c as u32),
    }
}

/// Text from outside dbio (a path, a host or event name, a file's contents) made safe to
/// print on a terminal or into a text report: every control character escaped (`\x1b`,
/// `\n`, `\u{9b}`, ...), so a name can neither forge lines nor send terminal commands.
/// Everything dbio prints that it did not write itself goes through here.
pub fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(unsafe_to_show) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_to_show(c) {
            out.push_str(&escaped(c));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// How long a value echoed in a message may be, in characters.
pub const ECHO_CHARS: usize = 200;

/// A value echoed back in a message (an option's value, a job file's): [`shown`], and cut to
/// [`ECHO_CHARS`] characters with its length in bytes after it when longer.
pub fn echoed(s: &str) -> String {
    match s.char_indices().nth(ECHO_CHARS) {
        None => shown(s).into_owned(),
        Some((end, _)) => format!("{}… ({} bytes)", shown(&s[..end]), s.len()),
    }
}

/// `msg` with `value` in it cut as [`echoed`] cuts it, when `value` is long.
pub fn value_cut(msg: String, value: &str) -> String {
    if value.chars().count() > ECHO_CHARS {
        msg.replace(value, &echoed(value))
    } else {
        msg
    }
}

/// A message made one safe line of bounded length: [`shown`], every value longer than
/// [`ECHO_CHARS`] that `echoes` lists cut as [`echoed`] cuts it, and, when the line is still
/// longer than about 900 bytes, its middle left out (its start names the option, its end
/// says what to do).
pub fn one_line(msg: &str, echoes: &[&str]) -> String {
    let mut m = msg.to_string();
    for v in echoes {
        if v.chars().count() > ECHO_CHARS {
            m = m.replace(v, &echoed(v));
        }
    }
    // Values are quoted ('...') in messages: a long one is cut even when the message holds
    // it changed (clap drops terminal escapes from what it echoes).
    if m.len() > ECHO_CHARS * 4 && m.matches('\'').count() >= 2 {
        m = m
            .split('\'')
            .enumerate()
            .map(|(i, part)| {
                if i % 2 == 1 && part.chars().count() > ECHO_CHARS {
                    echoed(part)
                } else {
                    part.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("'");
    }
    let m = shown(&m).into_owned();
    const HEAD: usize = 500;
    const TAIL: usize = 360;
    if m.len() <= HEAD + TAIL + 40 {
        return m;
    }
    let mut h = HEAD;
    while !m.is_char_boundary(h) {
        h -= 1;
    }
    let mut t = m.len() - TAIL;
    while !m.is_char_boundary(t) {
        t += 1;
    }
    format!("{} … ({} bytes left out) … {}", &m[..h], t - h, &m[t..])
}

/// [`shown`] for paths and other things printed with `{}`: `path.shown()` instead of
/// `path.shown()`.
pub trait Shown {
    fn shown(&self) -> ShownText<'_>;
}

/// A path or name that prints with [`shown`].
pub struct ShownText<'a>(std::borrow::Cow<'a, str>);

impl std::fmt::Display for ShownText<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(&shown(&self.0))
    }
}

impl Shown for std::path::Path {
    fn shown(&self) -> ShownText<'_> {
        ShownText(self.to_string_lossy())
    }
}

impl Shown for std::path::PathBuf {
    fn shown(&self) -> ShownText<'_> {
        ShownText(self.to_string_lossy())
    }
}

impl Shown for str {
    fn shown(&self) -> ShownText<'_> {
        ShownText(std::borrow::Cow::Borrowed(self))
    }
}

impl Shown for String {
    fn shown(&self) -> ShownText<'_> {
        ShownText(std::borrow::Cow::Borrowed(self.as_str()))
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
    fn control_characters_are_shown_escaped_and_long_values_cut() {
        assert_eq!(shown("/data/plain"), "/data/plain");
        assert_eq!(
            shown("a\x1b[2J\nb\r\x07\x7f\u{9b}"),
            "a\\x1b[2J\\nb\\r\\x07\\x7f\\u{9b}"
        );
        assert_eq!(shown("x\u{202e}y"), "x\\u{202e}y");
        assert_eq!(shown("µs é"), "µs é");
        let long = "é".repeat(100_000);
        let e = echoed(&long);
        assert!(e.len() < 1000, "{}", e.len());
        assert!(e.ends_with("… (200000 bytes)"), "{e}");
        assert_eq!(shell_word("a\nb'c"), "$'a\\nb\\'c'");
        assert_eq!(shell_word("a b"), "'a b'");
        let p = std::path::Path::new("/t/\x1b]0;x\x07");
        assert_eq!(p.shown().to_string(), "/t/\\x1b]0;x\\x07");
    }

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
    fn fractions_and_compound_durations() {
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("500us").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("500µs").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("0.5ms").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("1h2m3s").unwrap(), Duration::from_secs(3723));
        assert_eq!(parse_duration("250ns").unwrap(), Duration::from_nanos(250));
        assert!(parse_duration("1.2.3s").is_err());
        assert!(parse_duration("5s3").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("").is_err());
        assert_eq!(parse_size("1.5G").unwrap(), 3 << 29);
        assert_eq!(parse_size("0.5K").unwrap(), 512);
        assert!(parse_size("0.3K").unwrap_err().contains("whole number"));
        assert!(parse_size("1..2K").is_err());
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
        for s in ["500ms", "3s", "10m", "1h", "250us", "7ns", "0s"] {
            assert_eq!(duration_label(parse_duration(s).unwrap()), s);
        }
        assert_eq!(duration_label(Duration::from_millis(1500)), "1500ms");
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
