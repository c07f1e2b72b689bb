//! tmp
pub mod tables;
