//! Optimisation passes, one per file. Each is `run(&mut Shader) -> bool` (whether it changed
//! anything) and keeps the IR valid; [`crate::ir::verify::verify_after`] checks that in tests
//! and debug builds.

pub mod unreachable;
