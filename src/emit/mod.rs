//! Emission: the blob (code and padding), its metadata ([`meta`]) and statistics.

pub mod meta;
