//! What is made of the measurements: `result.json` (the contract), the sections every
//! report has, computed once ([`sections`]), and their renderers — `summary.txt` (the report
//! a DBA reads, [`summary`]), its Markdown ([`markdown`], `--format md`), `report.html`
//! (the same with charts, [`html`]), the CSV exports ([`export`]) and comparisons of runs
//! ([`compare`]) — and the run directory that holds them. [`render`] writes any
//! [`Report`] (a run's, a sweep's, `dbio runs`'...) in a [`Format`]; [`Output::emit`] is
//! the one way a command's result (its report or its JSON) reaches stdout.

pub mod compare;
pub mod export;
#[cfg(test)]
pub(crate) mod fixture;
pub mod html;
pub mod markdown;
pub mod openmetrics;
pub mod output;
pub mod result;
pub mod result_mysql;
pub mod result_pg;
pub mod sections;
mod stability;
pub mod summary;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::safety::fs::Dir;
use crate::units::Shown;
pub use output::Output;
pub use result::RunResult;
pub use sections::Report;

/// How a report printed to stdout is written (`--format`): fixed-width text or Markdown.
/// A command that writes an HTML page keeps its own option for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Aligned columns, as `summary.txt`.
    #[default]
    Text,
    /// Markdown: pipe tables, headings, fenced trees.
    Md,
}

impl Format {
    /// The names `--format` takes, in order.
    pub const NAMES: &'static [&'static str] = &["text", "md"];

    /// Parses `--format`'s value.
    pub fn parse(s: &str) -> std::result::Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "md" | "markdown" => Ok(Format::Md),
            _ => Err(format!(
                "{}: not a format; one of {}",
                crate::units::echoed(s),
                Format::NAMES.join(", ")
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Md => "md",
        }
    }
}

/// A report in `format`: every command that prints a report prints it through here.
pub fn render(report: &Report, format: Format) -> String {
    match format {
        Format::Text => summary::text(report),
        Format::Md => markdown::markdown(report),
    }
}

/// Checks, creating nothing, that `--out` can hold run directories: it is a writable
/// directory, or the nearest part of its path that exists is one. Returns that existing
/// directory (for free-space checks).
pub fn check_out(out: &Path) -> Result<PathBuf> {
    let bad = |why: String| {
        Error::usage(format!(
            "--out {}: {why}; choose a directory you can write to",
            out.shown()
        ))
    };
    let mut at = out.to_path_buf();
    loop {
        match std::fs::metadata(&at) {
            Ok(md) if md.is_dir() => break,
            Ok(_) => return Err(bad(format!("{} is not a directory", at.shown()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                at = match at.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
            }
            Err(e) => return Err(bad(crate::error::io_advice(&e))),
        }
    }
    let c = std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(at.as_os_str()))
        .map_err(|_| bad("the path holds a NUL byte".into()))?;
    // SAFETY: a valid C string; access only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(bad(format!(
            "{} cannot be written: {}",
            at.shown(),
            crate::error::io_advice(&e)
        )));
    }
    Ok(at)
}

/// What hears of a results directory dbio makes (a run's, a sweep's, `dbio mem`'s, ...):
/// the results store's registry, so that `dbio doctor` run anywhere lists the directory of
/// a command that was killed. It must not fail the command.
pub type RunDirHook = Box<dyn Fn(&Path, RunDirEvent<'_>) + Send + Sync>;

/// What happened to a registered results directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunDirEvent<'a> {
    /// Made and proved writable, before anything is measured: of this kind (a test's name
    /// for a run, or `sweep`, `matrix`, `calibrate`, `mem`: `dbio doctor` knows what each holds).
    Made(&'a str),
    /// The command that made it ended and left its results there.
    Finished,
    /// Removed again: nothing was written into it.
    Removed,
}

static RUN_DIRS: std::sync::OnceLock<RunDirHook> = std::sync::OnceLock::new();

/// Sets the [`RunDirHook`] (once per process; later calls are ignored).
pub fn on_run_dir(hook: RunDirHook) {
    let _ = RUN_DIRS.set(hook);
}

fn tell_run_dirs(path: &Path, event: RunDirEvent<'_>) {
    if let Some(hook) = RUN_DIRS.get() {
        hook(path, event);
    }
}

/// A results directory made for one command (a run, a sweep, `dbio mem`, ...), proved
/// writable, registered in the results store and locked while the command goes, with the
/// `--out` directories made for it. When the command fails before writing anything, it is
/// removed again ([`RunPlace::remove`]) with what was made for it.
#[derive(Debug)]
pub struct RunPlace {
    pub out: std::sync::Arc<Dir>,
    /// It, open: shared with the runs of a command's points, made in it.
    pub dir: std::sync::Arc<Dir>,
    /// `--out` and its parents, where this run made them.
    made_out: Vec<PathBuf>,
    /// Directories made inside it ([`RunPlace::make_subdir`]), removed with it while empty.
    made_inside: Vec<String>,
    /// Its absolute path, as registered.
    abs: PathBuf,
    /// The lock held on it while the command goes: `dbio doctor` tells a running command's
    /// directory from a killed one's by it, never by a PID written down.
    _lock: Option<std::os::fd::OwnedFd>,
    /// Whether the registry heard of it.
    registered: bool,
}

impl RunPlace {
    /// Makes the directory `<yyyymmddThhmmss>_<name_tail>` in `held` (a command made of
    /// runs holds its directory) or in `--out` `out` (made, with its missing parents, when
    /// missing), then proves it writable: a file is created in it, written and removed. A
    /// place that cannot hold results is refused as bad input, and what was made for it is
    /// removed. Then it is locked and registered as of `kind` ([`RunDirEvent::Made`]).
    pub fn make(
        out: &Path,
        held: Option<std::sync::Arc<Dir>>,
        started_at: &str,
        name_tail: &str,
        kind: &str,
    ) -> Result<RunPlace> {
        let (out_dir, made_out) = match held {
            Some(d) => (d, Vec::new()),
            None => {
                let (d, made) = Dir::create_missing(out).map_err(|e| {
                    Error::usage(format!(
                        "--out {}: cannot create the output directory: {}; choose a directory you can write to",
                        out.shown(),
                        crate::error::io_advice(&e)
                    ))
                })?;
                (std::sync::Arc::new(d), made)
            }
        };
        let dir = match create_run_dir(&out_dir, started_at, name_tail) {
            Ok(d) => d,
            Err(e) => {
                crate::safety::fs::remove_made(&made_out);
                // Its class is the error's own (a directory dbio may not write is bad
                // input, the storage failing an I/O error: crate::error's rule).
                return Err(match e {
                    Error::Io(m) => Error::Io(format!("--out {}: {m}", out.shown())),
                    Error::Usage(m) => Error::usage(format!(
                        "--out {}: {m}; choose a directory you can write to",
                        out.shown()
                    )),
                    e => e,
                });
            }
        };
        let abs = std::fs::canonicalize(dir.path()).unwrap_or_else(|_| dir.path().into());
        let mut place = RunPlace {
            out: out_dir,
            dir: std::sync::Arc::new(dir),
            made_out,
            made_inside: Vec::new(),
            abs,
            _lock: None,
            registered: false,
        };
        if let Err(e) = place.dir.probe_writable() {
            let at = place.dir.path().shown().to_string();
            place.remove();
            return Err(Error::usage(format!(
                "--out {}: cannot write results into {at}: {}; choose a directory you can write to",
                out.shown(),
                crate::error::io_advice(&e)
            )));
        }
        place._lock = place.dir.dup().ok().filter(|fd| {
            crate::safety::lock::try_lock(fd, crate::safety::lock::Mode::Exclusive).unwrap_or(false)
        });
        tell_run_dirs(&place.abs, RunDirEvent::Made(kind));
        place.registered = true;
        Ok(place)
    }

    /// Its absolute path, as registered.
    pub fn path(&self) -> &Path {
        &self.abs
    }

    /// Makes the directory `name` inside it (for its points' run directories); removed
    /// with it while empty.
    pub fn make_subdir(&mut self, name: &str) -> Result<Dir> {
        let d = self
            .dir
            .create_dir(name)
            .map_err(|e| Error::io("cannot create", &self.dir.join(name), &e))?;
        self.made_inside.push(name.to_string());
        Ok(d)
    }

    /// The command ended and its results are written here: registered as finished, and no
    /// longer locked.
    pub fn finish(self) {
        tell_run_dirs(&self.abs, RunDirEvent::Finished);
    }

    /// The command ended, well or not: removed ([`RunPlace::remove`]) when nothing was
    /// written into it, else finished ([`RunPlace::finish`]) with what it holds.
    pub fn close(self) {
        if !self.remove_empty() {
            self.finish();
        }
    }

    /// Removes it while empty (with the directories made inside it, while empty), then
    /// the `--out` directories made for it: a command that failed before writing anything
    /// leaves nothing behind, and the registry forgets it. True when it was removed.
    pub fn remove(self) -> bool {
        self.remove_empty()
    }

    fn remove_empty(&self) -> bool {
        for sub in self.made_inside.iter().rev() {
            let _ = self.dir.remove_empty_dir(sub);
        }
        let removed = (self.dir.path().file_name().and_then(|n| n.to_str()))
            .is_some_and(|name| self.out.remove_empty_dir(name).is_ok());
        if removed && self.registered {
            tell_run_dirs(&self.abs, RunDirEvent::Removed);
        }
        crate::safety::fs::remove_made(&self.made_out);
        removed
    }
}

/// Creates `<out>/<yyyymmddThhmmss>_<name_tail>/` (docs/outputs.md), adding `-2`, `-3`, ... if a
/// run in the same second took the name. Returns it open.
fn create_run_dir(out: &Dir, started_at: &str, name_tail: &str) -> Result<Dir> {
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
        match out.create_dir(&name) {
            Ok(dir) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(Error::io(
                    "cannot create the run directory",
                    &out.join(&name),
                    &e,
                ));
            }
        }
    }
    unreachable!()
}

/// Writes `result.json`, `summary.txt` and the files [`write_derived`] makes into the new
/// run directory `dir`, each whole (a full disk leaves no half-written file). Returns the
/// summary text.
pub fn write_run(dir: &Dir, r: &RunResult) -> Result<String> {
    let json = serde_json::to_string_pretty(r)
        .map_err(|e| Error::other(format!("cannot serialize the result: {e}")))?;
    let private = holds_connection(r);
    written(dir, "result.json", &(json + "\n"), false, private)?;
    let summary = summary::render(r);
    written(dir, "summary.txt", &summary, false, private)?;
    derived(dir, r, false)?;
    Ok(summary)
}

/// Whether the files of `r` say where a database is and who connects to it (a run through
/// PostgreSQL): then only their owner may read them (mode 0600).
fn holds_connection(r: &RunResult) -> bool {
    r.pg.is_some()
        || r.mysql.is_some()
        || matches!(r.dataset.kind.as_str(), "postgresql" | "mariadb")
}

/// The files made from `result.json` alone, which `dbio report` makes again (replacing
/// them): `report.html`, `timeseries.csv` and `histograms.csv`. Returns their paths.
pub fn write_derived(dir: &Dir, r: &RunResult) -> Result<Vec<PathBuf>> {
    derived(dir, r, true)
}

fn derived(dir: &Dir, r: &RunResult, replace: bool) -> Result<Vec<PathBuf>> {
    let files = [
        ("report.html", html::render(r)),
        ("timeseries.csv", export::timeseries_csv(r)),
        ("histograms.csv", export::histograms_csv(r)),
    ];
    let private = holds_connection(r);
    let mut paths = Vec::with_capacity(files.len());
    if !replace {
        for (name, text) in files {
            written(dir, name, &text, false, private)?;
            paths.push(dir.join(name));
        }
        return Ok(paths);
    }
    // Replaced only when what is there is dbio's own (a user's file of that name in a
    // directory holding a result.json is left alone): every one is claimed before any is
    // written, and each is then replaced only while it is the file claimed.
    let mut claimed = Vec::with_capacity(files.len());
    for (name, text) in &files {
        let id = dir
            .claim(name, DBIO_HEAD, |old| written_by_dbio(old, text))
            .map_err(|e| Error::io("cannot replace", &dir.join(name), &e))?;
        claimed.push(id);
    }
    for ((name, text), id) in files.iter().zip(&claimed) {
        let put = if private {
            dir.put_private(name, text.as_bytes(), id.as_ref())
        } else {
            dir.put(name, text.as_bytes(), id.as_ref())
        };
        put.map_err(|e| Error::io("cannot write", &dir.join(name), &e))?;
        paths.push(dir.join(name));
    }
    Ok(paths)
}

/// How much of an earlier file [`written_by_dbio`] looks at.
const DBIO_HEAD: usize = 4096;

/// Whether `old` (the first [`DBIO_HEAD`] bytes of a file) is an earlier version of the
/// file `new` dbio makes: the same first line (the CSV header), or for the report the page
/// head dbio writes.
fn written_by_dbio(old: &[u8], new: &str) -> bool {
    let first = |b: &[u8]| b.split(|&c| c == b'\n').next().map(<[u8]>::to_vec);
    if new.starts_with("<!DOCTYPE html>") {
        return old.starts_with(b"<!DOCTYPE html>")
            && old
                .windows(b"content=\"dbio\"".len())
                .any(|w| w == b"content=\"dbio\"");
    }
    // A header longer than what was read cannot be told: not dbio's.
    old.contains(&b'\n') && first(old) == first(new.as_bytes())
}

/// Reads `<dir>/result.json`, refusing anything that is not a `dbio.result.v1` result with
/// a usage error naming the file. The file is untrusted: a regular file (not a link, a FIFO
/// or a device: opening it never blocks), read up to [`result::MAX_RESULT_BYTES`], and
/// checked ([`result::from_untrusted`]) before any report is made of it.
pub fn read_run(dir: &Path) -> Result<RunResult> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    if !dir.is_dir() {
        return Err(Error::usage(format!(
            "{} is not a run directory (expected a directory holding result.json)",
            dir.shown()
        )));
    }
    let p = dir.join("result.json");
    let cannot = |why: String| {
        Error::usage(format!(
            "cannot read {}: {why} (expected a dbio run directory)",
            p.shown()
        ))
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&p)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => cannot("it is a symbolic link".into()),
            _ => cannot(e.to_string()),
        })?;
    let meta = file.metadata().map_err(|e| cannot(e.to_string()))?;
    if !meta.is_file() {
        return Err(cannot("it is not a regular file".into()));
    }
    if meta.len() > result::MAX_RESULT_BYTES {
        return Err(Error::usage(format!(
            "{}: {} bytes; a result is at most {} bytes",
            p.shown(),
            meta.len(),
            result::MAX_RESULT_BYTES
        )));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(result::MAX_RESULT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| cannot(e.to_string()))?;
    result::from_untrusted(&bytes).map_err(|why| Error::usage(format!("{}: {why}", p.shown())))
}

/// Writes one file of a run directory whole: new, or replacing dbio's own.
pub fn write_file(dir: &Dir, name: &str, text: &str, replace: bool) -> Result<()> {
    written(dir, name, text, replace, false)
}

/// [`write_file`]; `private`: mode 0600 (it holds connection details).
fn written(dir: &Dir, name: &str, text: &str, replace: bool, private: bool) -> Result<()> {
    let r = match (replace, private) {
        (true, false) => dir.replace(name, text.as_bytes()),
        (false, false) => dir.write_new(name, text.as_bytes()),
        (true, true) => dir.replace_private(name, text.as_bytes()),
        (false, true) => dir.write_new_private(name, text.as_bytes()),
    };
    r.map_err(|e| Error::io("cannot write", &dir.join(name), &e))
}
