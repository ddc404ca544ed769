//! Live progress on a terminal: a bar with bytes and rate while a data
//! set is filled, and one line refreshed 4 times a second during a run. Drawn on stderr, and
//! only when both stdout and stderr are terminals and `--quiet` was not given, so nothing of
//! it reaches a pipe or a file. Workers only bump counters; the display reads them.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How often the display is redrawn.
pub const TICK: Duration = Duration::from_millis(250);

/// Whether to draw progress at all.
pub fn wanted(quiet: bool) -> bool {
    !quiet && std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

/// A progress display, or nothing.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// No display.
    pub fn none() -> Progress {
        Progress { bar: None }
    }

    /// One status line (runs).
    pub fn line(enabled: bool) -> Progress {
        if !enabled {
            return Progress::none();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
        bar.set_style(ProgressStyle::with_template("{msg}").expect("valid template"));
        Progress { bar: Some(bar) }
    }

    /// A byte bar with rate (filling a data set).
    pub fn bytes(enabled: bool, total: u64, what: &str) -> Progress {
        if !enabled {
            return Progress::none();
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr_with_hz(8));
        bar.set_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        bar.set_message(what.to_string());
        Progress { bar: Some(bar) }
    }

    pub fn is_drawn(&self) -> bool {
        self.bar.is_some()
    }

    pub fn set_message(&self, msg: String) {
        if let Some(b) = &self.bar {
            b.set_message(msg);
        }
    }

    pub fn set_position(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.set_position(n);
        }
    }

    /// Removes the display from the terminal.
    pub fn clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Runs `work` while a byte bar follows `written` (filled by the workers), 4 times a second.
pub fn follow_bytes<T>(
    enabled: bool,
    total: u64,
    what: &str,
    written: &AtomicU64,
    work: impl FnOnce() -> T,
) -> T {
    if !enabled {
        return work();
    }
    let bar = Progress::bytes(true, total, what);
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Relaxed) {
                bar.set_position(written.load(Relaxed));
                std::thread::sleep(TICK);
            }
        });
        let out = work();
        done.store(true, Relaxed);
        out
    })
}
