//! Arbitrary text through the whole compiler; never panics, and on success every variant's words decode.
//! The body is shared with `cargo test --test fuzz_smoke` (tests/common/fuzz_checks.rs).
#![no_main]

#[path = "../../tests/common/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::compile(data));
