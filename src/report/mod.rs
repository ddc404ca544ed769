//! What is made of the measurements: `result.json` (the contract), `summary.txt` (the
//! report a DBA reads), and the run directory that holds them.

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

/// Writes `result.json` and `summary.txt` into `dir`. Returns the summary text.
pub fn write_run(dir: &Path, r: &RunResult) -> Result<String> {
    let json = serde_json::to_string_pretty(r)
        .map_err(|e| Error::other(format!("cannot serialize the result: {e}")))?;
    let p = dir.join("result.json");
    std::fs::write(&p, json + "\n").map_err(|e| Error::io("cannot write", &p, &e))?;
    let summary = summary::render(r);
    let p = dir.join("summary.txt");
    std::fs::write(&p, &summary).map_err(|e| Error::io("cannot write", &p, &e))?;
    Ok(summary)
}
