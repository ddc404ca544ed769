//! What is made of the measurements: `result.json` (the contract), `summary.txt` (the
//! report a DBA reads), `report.html` (the same with charts), the CSV exports, the run
//! directory that holds them, and comparisons of runs.

pub mod compare;
pub mod export;
#[cfg(test)]
pub(crate) mod fixture;
pub mod html;
pub mod os;
pub mod result;
pub mod summary;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
pub use result::RunResult;

/// Creates `<out>/<yyyymmddThhmmss>_<test>_<sync|async>_<N>s_<size>_<duration>/` (SPEC §6),
/// adding `-2`, `-3`, ... if a run in the same second took the name.
pub fn create_run_dir(out: &Path, started_at: &str, name_tail: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(out)
        .map_err(|e| Error::io("cannot create the output directory", out, &e))?;
    let stamp: String = started_at
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(15)
        .collect();
    let base = format!("{stamp}_{name_tail}");
    for n in 1.. {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{base}-{n}")
        };
        let dir = out.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io("cannot create the run directory", &dir, &e)),
        }
    }
    unreachable!()
}

/// Writes `result.json`, `summary.txt` and the files [`write_derived`] makes into `dir`.
/// Returns the summary text.
pub fn write_run(dir: &Path, r: &RunResult) -> Result<String> {
    let json = serde_json::to_string_pretty(r)
        .map_err(|e| Error::other(format!("cannot serialize the result: {e}")))?;
    write_file(&dir.join("result.json"), &(json + "\n"))?;
    let summary = summary::render(r);
    write_file(&dir.join("summary.txt"), &summary)?;
    write_derived(dir, r)?;
    Ok(summary)
}

/// The files made from `result.json` alone, which `dbio report` can make again:
/// `report.html`, `timeseries.csv` and `histograms.csv`. Returns their paths.
pub fn write_derived(dir: &Path, r: &RunResult) -> Result<Vec<PathBuf>> {
    let files = [
        ("report.html", html::render(r)),
        ("timeseries.csv", export::timeseries_csv(r)),
        ("histograms.csv", export::histograms_csv(r)),
    ];
    let mut written = Vec::with_capacity(files.len());
    for (name, text) in files {
        let p = dir.join(name);
        write_file(&p, &text)?;
        written.push(p);
    }
    Ok(written)
}

/// Reads `<dir>/result.json`, refusing anything that is not a `dbio.result.v1` result with
/// a usage error naming the file.
pub fn read_run(dir: &Path) -> Result<RunResult> {
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "{} is not a run directory (expected a directory holding result.json)",
            dir.display()
        )));
    }
    let p = dir.join("result.json");
    let text = std::fs::read_to_string(&p).map_err(|e| {
        Error::usage(format!(
            "cannot read {}: {e} (expected a dbio run directory)",
            p.display()
        ))
    })?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::usage(format!("{} is not JSON: {e}", p.display())))?;
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(result::SCHEMA) => {}
        other => {
            return Err(Error::usage(format!(
                "{} is not a dbio result: schema {}, expected {}",
                p.display(),
                other.map_or_else(|| "missing".to_string(), |s| format!("\"{s}\"")),
                result::SCHEMA
            )));
        }
    }
    serde_json::from_value(value).map_err(|e| {
        Error::usage(format!(
            "{} is not a valid {} result: {e}",
            p.display(),
            result::SCHEMA
        ))
    })
}

fn write_file(p: &Path, text: &str) -> Result<()> {
    std::fs::write(p, text).map_err(|e| Error::io("cannot write", p, &e))
}
