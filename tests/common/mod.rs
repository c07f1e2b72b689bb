//! Helpers shared by integration tests (each test crate includes this module with `mod common;`).

pub mod tgsi_gen;
pub mod fuzz_checks;
