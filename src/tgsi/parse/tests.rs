//! Parser unit tests.
