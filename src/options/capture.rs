//! The values of `dbio job from-*`'s own options (how the job is shaped, and what is
//! sampled) and of `dbio pg observe`'s, read by the option table's rows.

use std::path::PathBuf;
use std::time::Duration;

/// What every `dbio job from-*` takes, and what `from-iostat` and `from-pg` take beside.
#[derive(Debug, Clone, Default)]
pub struct Shaping {
    /// `--peak`: the busiest report's rate per class instead of the average.
    pub peak: bool,
    /// `--growth`: every rate multiplied by it.
    pub growth: f64,
    /// `--requirements`: also the [requirements] block `dbio size` reads.
    pub requirements: bool,
    /// `--size`: the data set size the job names.
    pub size: Option<u64>,
    /// `--target`: the data set directory the job names.
    pub target: Option<String>,
    /// `--output`: where the job is written instead of stdout.
    pub output: Option<PathBuf>,
    /// `from-iostat --device`: only these devices, in the order given.
    pub devices: Vec<String>,
    /// `from-pg --interval`: how long each sample watches the server.
    pub interval: Duration,
    /// `from-pg --samples`.
    pub samples: u32,
}

/// `dbio pg observe`'s own options.
#[derive(Debug, Clone, Default)]
pub struct Observe {
    /// `--seconds`: how long to watch.
    pub seconds: u32,
    /// `--hz`: samples of pg_stat_activity a second.
    pub hz: u32,
}
