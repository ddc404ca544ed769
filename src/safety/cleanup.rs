//! Files that must not outlive the process, even when a second Ctrl-C ends it at once:
//! a run's temporary files, and the data files of a preparation still being filled.
//!
//! Whoever creates such files registers them here and forgets them once they are removed
//! (or complete); the signal thread in `app.rs` removes whatever is registered before it
//! exits. Registering is rare (once per file per run), so a mutex is fine.

use std::path::PathBuf;
use std::sync::Mutex;

static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn paths() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PATHS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remember `files` for removal on an abrupt exit.
pub fn register(files: impl IntoIterator<Item = PathBuf>) {
    paths().extend(files);
}

/// `files` were removed or are complete: no longer remove them on exit.
pub fn forget<'a>(files: impl IntoIterator<Item = &'a PathBuf>) {
    let mut p = paths();
    for f in files {
        p.retain(|q| q != f);
    }
}

/// The files registered now.
pub fn registered() -> Vec<PathBuf> {
    paths().clone()
}

/// Removes every registered file (those already gone are skipped) and forgets them.
/// Returns how many were removed.
pub fn remove_registered() -> usize {
    let mut p = paths();
    let n = p.iter().filter(|f| std::fs::remove_file(f).is_ok()).count();
    p.clear();
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_files_are_removed_and_forgotten_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.tmp"), dir.path().join("b.tmp"));
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        register([a.clone(), b.clone(), dir.path().join("never-created")]);
        forget([&b]);
        assert!(registered().contains(&a) && !registered().contains(&b));
        assert!(remove_registered() >= 1);
        assert!(!a.exists() && b.exists());
        assert!(!registered().contains(&a));
    }
}
