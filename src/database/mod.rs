//! Tests through a real database.

pub mod pg;
