//! Arbitrary 8-byte words through the decoders and the disassembler; strictly decoded words re-encode and their text assembles back.
//! The body is shared with `cargo test --test fuzz_smoke` (tests/common/fuzz_checks.rs).
#![no_main]

#[path = "../../tests/common/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::valhall_decode(data));
