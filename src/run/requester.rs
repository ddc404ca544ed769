//! The two seams of a measured window for a run whose requests dbio's engines do not issue
//! (a test through a database): *who issues the requests* ([`Requester`]: one session's
//! loop, one thread each, under the same harness as an engine session — set up, start gate,
//! run, a failure stops the run) and *what else is observed* ([`Observer`]: called at the
//! measured window's two edges, the same instants dbio's own figures start and end).
//! Everything else — warm-up, the window, stop on signals, per-second history, stall
//! accounting, the result — is the window's ([`super::window`]), the same as `dbio run`'s.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::measure::Recorder;

/// How a [`Requester`] sees the run's end.
pub struct Halt<'a> {
    pub(super) halt: &'a AtomicBool,
    pub(super) stop: &'a AtomicBool,
    pub(super) failed: &'a AtomicBool,
}

impl Halt<'_> {
    /// Stop issuing requests: the window ended (planned, or stopped).
    pub fn halted(&self) -> bool {
        self.halt.load(Ordering::Relaxed)
    }

    /// The user stopped the run (a signal), not a failure of another thread: an error
    /// heard now is the interruption's, not a failure of its own.
    pub fn user_stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst) && !self.failed.load(Ordering::SeqCst)
    }
}

/// Why a session of a [`Requester`] ended early: what it heard, and when.
#[derive(Debug, Clone)]
pub struct Lost {
    /// When (`sys::now_ns`).
    pub at_ns: u64,
    /// The server's (or the client's) message, one line, secrets redacted.
    pub text: String,
    /// The connection is gone (the server closed it, or it broke).
    pub closed: bool,
    /// The text is the server's own message (not the client's "connection closed").
    pub server_said: bool,
}

/// One session's loop when the requests are not dbio's engine's: it issues requests until
/// [`Halt::halted`], timing each one into `rec` (slot 0; `Recorder::request`, and
/// `transaction`/`commit` for a committing test). Made (connected, prepared) before the
/// run, so that a failure to set up is refused before anything is measured; run on a
/// thread of its own. Per request it allocates nothing and takes no lock beyond what its
/// client library does.
pub trait Requester: Send {
    /// Runs until halted. An error ends the session ([`Lost`]) and stops the run, unless
    /// the user stopped it ([`Halt::user_stopped`]): then it is the interruption's.
    fn run(&mut self, rec: &Recorder, halt: &Halt) -> Result<(), Lost>;
}

/// What else is observed over the measured window (a database's waits and statistics).
/// The window calls it on its own thread at the two edges of the measured window — the
/// instants dbio's own figures start and end — so both cover the same time. Each call must
/// be short (a snapshot, a flag); what it gathers is read by its owner after the run, and
/// a failure is kept for then, never stops the window.
pub trait Observer {
    /// The measured window starts now (the warm-up is over).
    fn window_started(&mut self);
    /// The measured window ended now (planned, steady, or stopped), before the threads are
    /// joined.
    fn window_ended(&mut self);
}
