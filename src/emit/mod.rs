//! Emission: the blob (code and padding), its metadata ([`meta`]) and statistics.

pub mod blob;
pub mod meta;
pub mod stats;
