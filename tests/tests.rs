//! dbio's integration tests: each runs the real binary in a temporary directory and checks
//! what it printed and wrote. One test binary, one module per area (see `util.rs`).

mod util;

mod adversarial;
mod aliasing;
mod cli;
mod cluster;
mod dataset;
mod devices;
mod dist;
mod docs;
mod engines;
mod faults;
mod files;
mod fill;
mod fuzz;
mod jobs;
mod layers;
mod leftovers;
mod mem;
mod mem_signals;
mod memory;
mod places;
mod precondition;
mod progress;
mod report;
mod report_blemishes;
mod results;
mod safety;
mod sections;
mod shell;
mod signals;
mod sizing;
mod skips;
mod span;
mod stopped;
mod storage;
mod store;
mod store_safety;
mod sweep;
mod untrusted;
mod verify;
mod wizard;
mod write_side;
