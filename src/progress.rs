//! Live progress on a terminal: a bar with bytes and rate while a data
//! set is filled, and one line refreshed 4 times a second during a run. Drawn on stderr, and
//! (`--progress auto`, the default) only when stderr is a terminal — whatever stdout is, so
//! `dbio run ... | tee log` still shows it — and `--quiet` was not given; `--progress always`
//! draws it on whatever stderr is, `--progress never` nowhere. Workers only bump counters;
//! the display reads them.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};

/// How often the display is redrawn.
pub const TICK: Duration = Duration::from_millis(250);

/// When progress is drawn (`--progress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum When {
    /// When stderr is a terminal.
    #[default]
    Auto,
    /// On whatever stderr is (a file, a pipe).
    Always,
    Never,
}

impl When {
    pub fn parse(text: &str) -> Result<When, String> {
        match text {
            "auto" => Ok(When::Auto),
            "always" => Ok(When::Always),
            "never" => Ok(When::Never),
            _ => Err(format!("'{text}': auto, always or never")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            When::Auto => "auto",
            When::Always => "always",
            When::Never => "never",
        }
    }
}

/// Whether to draw progress at all: `--quiet` never does.
pub fn wanted(when: When, quiet: bool) -> bool {
    match when {
        _ if quiet => false,
        When::Never => false,
        When::Always => true,
        When::Auto => std::io::stderr().is_terminal(),
    }
}

/// Where a display is drawn: the terminal on stderr, or (`--progress always`) stderr whatever
/// it is — indicatif hides what it draws on anything but a terminal, so that is drawn as on
/// an 80-column terminal.
fn stderr_target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr_with_hz(8)
    } else {
        ProgressDrawTarget::term_like_with_hz(Box::new(Stderr), 8)
    }
}

/// Stderr drawn on as a terminal: the same escapes indicatif writes to one.
#[derive(Debug)]
struct Stderr;

impl Stderr {
    fn put(&self, s: &str) -> std::io::Result<()> {
        std::io::stderr().lock().write_all(s.as_bytes())
    }
}

impl TermLike for Stderr {
    fn width(&self) -> u16 {
        80
    }
    fn move_cursor_up(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            self.put(&format!("\x1b[{n}A"))
        } else {
            Ok(())
        }
    }
    fn move_cursor_down(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            self.put(&format!("\x1b[{n}B"))
        } else {
            Ok(())
        }
    }
    fn move_cursor_right(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            self.put(&format!("\x1b[{n}C"))
        } else {
            Ok(())
        }
    }
    fn move_cursor_left(&self, n: usize) -> std::io::Result<()> {
        if n > 0 {
            self.put(&format!("\x1b[{n}D"))
        } else {
            Ok(())
        }
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.put(&format!("{s}\n"))
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.put(s)
    }
    fn clear_line(&self) -> std::io::Result<()> {
        self.put("\r\x1b[2K")
    }
    fn flush(&self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
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
        let bar = ProgressBar::with_draw_target(None, stderr_target());
        bar.set_style(ProgressStyle::with_template("{msg}").expect("valid template"));
        Progress { bar: Some(bar) }
    }

    /// A byte bar with rate (filling a data set).
    pub fn bytes(enabled: bool, total: u64, what: &str) -> Progress {
        if !enabled {
            return Progress::none();
        }
        let bar = ProgressBar::with_draw_target(Some(total), stderr_target());
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
