//! Where the run description used to live. It is now `crate::workload::spec` (what a run
//! is) and `crate::options` (how the command line, job files and sweeps build it); these
//! names remain so that code written against them keeps compiling.

pub use crate::dataset::DataSetSpec;
pub use crate::engine::{IoMode, Submission};
pub use crate::workload::spec::{
    OltpOptions, RedoOptions, RedoSync, RunConfig, TempOptions, rand_seed,
};
