//! `dbio pg`: dbio's tests through a real PostgreSQL, beside what the storage gives.
//! (On this branch only the hidden `dbio pg observe`; the run, compare and clean commands
//! come with the server and the tests.)

pub mod compare;
pub mod observe;

use clap::{Args, Subcommand};

#[derive(Debug, Args)]
pub struct PgArgs {
    #[command(subcommand)]
    pub command: PgCommand,
}

#[derive(Debug, Subcommand)]
pub enum PgCommand {
    /// Watch a server for a while and print what it saw: wait events, I/O per backend type,
    /// WAL and commits, settings.
    #[command(hide = true)]
    Observe(observe::ObserveArgs),
}
