//! How measurements are taken (docs/measurement.md): sessions record into lock-free counters and
//! histograms; a sampler reads them once a second and at the end.

pub mod ash;
pub mod histogram;
pub mod os;
pub mod recorder;
pub mod sampler;
pub mod stability;
pub mod stall;

pub use histogram::{Counts, LiveHistogram};
pub use recorder::{EventSlot, Recorder, SessionCounters, Window};
pub use sampler::{DbTotals, EventTotals, Interval, Sampler, SecondPoint, second_length_s};
