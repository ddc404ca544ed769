//! The database instance's shared memory: what sessions and background threads (LGWR, DBWR)
//! share during a run — the log buffer, the dirty-block queue, the optional buffer cache and
//! the ASH slots every thread publishes its state in. Everything in it is lock-free.

use std::sync::atomic::AtomicUsize;

use crate::measure::ash::{AshBoard, AshSlot};

use super::cache::{BufferCache, DirtyQueue};
use super::log_buffer::RedoLog;

pub struct Instance {
    /// The log buffer and the commit handshake with LGWR (tests redo, oltp).
    pub redo: Option<RedoLog>,
    /// Blocks (no cache) or buffers (with a cache) waiting for DBWR.
    pub dirty: Option<DirtyQueue>,
    pub cache: Option<BufferCache>,
    /// One slot per thread: sessions first, then LGWR, then DBWRs.
    pub ash: AshBoard,
    /// Sessions still in their loop; background threads finish their work and stop at 0.
    pub sessions_running: AtomicUsize,
    pub sessions: usize,
    /// `--verify`: the last write sequence of every data block, and what was found.
    pub verify: Option<crate::verify::Verifier>,
}

impl Instance {
    /// An instance with only ASH slots (tests without background threads).
    pub fn new(sessions: usize, threads: usize) -> Instance {
        Instance {
            redo: None,
            dirty: None,
            cache: None,
            ash: AshBoard::new(threads),
            sessions_running: AtomicUsize::new(sessions),
            sessions,
            verify: None,
        }
    }

    /// The ASH slot of session `id`.
    pub fn session_ash(&self, id: usize) -> &AshSlot {
        self.ash.slot(id)
    }

    /// The ASH slot of LGWR.
    pub fn lgwr_ash(&self) -> &AshSlot {
        self.ash.slot(self.sessions)
    }

    /// The ASH slot of DBWR `k`.
    pub fn dbwr_ash(&self, k: usize) -> &AshSlot {
        self.ash.slot(self.sessions + 1 + k)
    }
}
