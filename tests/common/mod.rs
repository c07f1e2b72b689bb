//! Helpers shared by integration tests. A test crate includes the whole tree with `mod common;`,
//! or one file with `#[path = "common/NAME.rs"] mod NAME;` (`files.rs` and `rng.rs` stand alone).

pub mod fuzz_checks;
pub mod random_instr;
pub mod rng;
pub mod tgsi_gen;
