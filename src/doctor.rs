//! `dbio doctor` and `dbio clean --stale`.
use std::path::PathBuf;

use crate::error::{ExitCode, Result};

pub fn doctor(_paths: &[PathBuf]) -> Result<ExitCode> {
    Ok(ExitCode::Ok)
}
pub fn clean_stale(_paths: &[PathBuf]) -> Result<ExitCode> {
    Ok(ExitCode::Ok)
}
