//! Helpers shared by integration tests (each test crate includes this module with `mod common;`).

pub mod fuzz_checks;
pub mod tgsi_gen;
