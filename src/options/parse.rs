//! The parsers of option values: each takes the text as typed (command line, job file or
//! sweep) and says in its error what is accepted.

use crate::units;

pub(crate) fn switch(text: &str) -> Result<bool, String> {
    match text {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("'{text}': true or false")),
    }
}

/// A path (`--target`, `--out`, `--metrics`): not empty — an empty path names nothing, and
/// would otherwise be read as the current directory by some calls and as no file by
/// others — nor only blanks (`--target ' '`, a slip of the shell, would make a directory
/// named by a space) — and without a NUL byte (a job file's string may hold one; no path can).
/// `accepted` says what to give instead.
pub fn path(text: &str, accepted: &str) -> Result<std::path::PathBuf, String> {
    if text.is_empty() {
        return Err(format!("an empty path; give {accepted}"));
    }
    if text.trim().is_empty() {
        return Err(format!(
            "'{text}' is only blanks, not a path; give {accepted}"
        ));
    }
    if text.contains('\0') {
        return Err(format!("a path with a NUL byte; give {accepted}"));
    }
    Ok(std::path::PathBuf::from(text))
}

/// A whole number in `lo..=hi`.
pub(crate) fn count(text: &str, lo: u64, hi: u64) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(v) if (lo..=hi).contains(&v) => Ok(v),
        _ => Err(format!("'{text}' is not a whole number from {lo} to {hi}")),
    }
}

/// A size above 0.
pub fn positive_size(text: &str) -> Result<u64, String> {
    match units::parse_size(text)? {
        0 => Err("must be larger than 0".into()),
        v => Ok(v),
    }
}

/// A database block size: a power of two from 512 to 1M.
pub fn block_size(text: &str) -> Result<u64, String> {
    let v = units::parse_size(text)?;
    if !v.is_power_of_two() || !(512..=1 << 20).contains(&v) {
        return Err("must be a power of two from 512 to 1M, e.g. 8K".into());
    }
    Ok(v)
}

/// A temp request size: 48K to 4M, in 512-byte units.
pub fn temp_io(text: &str) -> Result<u64, String> {
    let v = units::parse_size(text)?;
    if !(48 << 10..=4 << 20).contains(&v) || v % 512 != 0 {
        return Err("must be from 48K to 4M, a multiple of 512, e.g. 240K".into());
    }
    Ok(v)
}

/// Requests per second, open loop.
pub fn rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && v <= 10_000_000.0 => Ok(v),
        _ => Err("requests per second, above 0 and at most 10,000,000, e.g. 2000".into()),
    }
}

/// One of `names` (case-insensitive); the error lists them.
pub(crate) fn one_of<T: Copy>(text: &str, names: &[(&str, T)]) -> Result<T, String> {
    names
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(text.trim()))
        .map(|(_, v)| *v)
        .ok_or_else(|| {
            let all: Vec<&str> = names.iter().map(|(n, _)| *n).collect();
            format!("'{text}'; accepted: {}", all.join(", "))
        })
}

/// `--hosts h1,h2,...`: ssh destinations, each at most once.
pub fn hosts(text: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for h in text.split(',').map(str::trim) {
        if h.is_empty() {
            return Err(
                "a comma-separated list of ssh destinations, e.g. db1,db2 (no empty names)".into(),
            );
        }
        if h.starts_with('-') || h.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "'{h}' is not an ssh destination (no leading '-', spaces or control characters)"
            ));
        }
        if out.iter().any(|o| o == h) {
            return Err(format!("'{h}' is given twice"));
        }
        out.push(h.to_string());
    }
    if out.len() > 1024 {
        return Err("at most 1024 hosts".into());
    }
    Ok(out)
}

pub(crate) fn size_text(v: u64) -> String {
    units::size_label(v)
}

/// `--mysql-set NAME=VALUE`: a setting of the throwaway MariaDB server, one
/// [`super::mysql_set`] takes; the name with `_` for `-`, in lower case.
pub fn mysql_setting(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "'{}': NAME=VALUE, e.g. innodb_flush_method=fsync",
            crate::units::echoed(text)
        ));
    };
    let name = name.trim().replace('-', "_");
    super::mysql_set::check(&name, value)?;
    Ok((name.to_ascii_lowercase(), value.to_string()))
}

/// `--pg-set NAME=VALUE`: a setting of the throwaway server, one [`super::pg_set`] takes.
pub fn pg_setting(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!(
            "'{}': NAME=VALUE, e.g. io_method=worker",
            crate::units::echoed(text)
        ));
    };
    let name = name.trim();
    super::pg_set::check(name, value)?;
    Ok((name.to_ascii_lowercase(), value.to_string()))
}

/// A test's name (`dbio runs --test`).
pub(crate) fn test_name(text: &str) -> Result<crate::workload::Test, String> {
    use crate::workload::Test;
    Test::from_name(text).ok_or_else(|| {
        format!(
            "'{text}'; accepted: {}, job",
            Test::CLASSIC.map(Test::name).join(", ")
        )
    })
}

/// A comma-separated list, each item parsed by `item` (`--sizes 16K,1G`, `--runs 1,3`).
pub(crate) fn list<T>(
    text: &str,
    item: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    text.split(',').map(item).collect()
}

/// A CPU's number, as the kernel counts them.
pub(crate) fn cpu(text: &str) -> Result<usize, String> {
    count(text, 0, 1 << 20).map(|c| c as usize)
}

/// The time budget of each figure of `dbio mem`: 10ms to 60s.
pub(crate) fn budget(text: &str) -> Result<std::time::Duration, String> {
    let d = units::parse_duration(text)?;
    if d < std::time::Duration::from_millis(10) || d > std::time::Duration::from_secs(60) {
        return Err("must be from 10ms to 60s, e.g. 300ms".into());
    }
    Ok(d)
}

/// How long each sample of `dbio job from-pg` watches the server: 1s to 24h.
pub(crate) fn interval(text: &str) -> Result<std::time::Duration, String> {
    let d = units::parse_duration(text)?;
    if d < std::time::Duration::from_secs(1) || d > std::time::Duration::from_secs(86400) {
        return Err(format!("'{text}' must be from 1s to 24h"));
    }
    Ok(d)
}

/// What every rate of a job is multiplied by: above 0, at most 1000.
pub(crate) fn growth(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number (e.g. 1.5)"))?;
    if !v.is_finite() || v <= 0.0 || v > 1000.0 {
        return Err(format!("'{text}' must be above 0 and at most 1000"));
    }
    Ok(v)
}

/// The data set size a job names: above 0.
pub(crate) fn job_size(text: &str) -> Result<u64, String> {
    match units::parse_size(text)? {
        0 => Err("a data set of 0 bytes".into()),
        v => Ok(v),
    }
}
