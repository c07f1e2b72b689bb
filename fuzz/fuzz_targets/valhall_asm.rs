//! Arbitrary text through the Valhall assembler; whatever assembles decodes, prints and assembles back to the same words.
//! The body is shared with `cargo test --test fuzz_smoke` (tests/common/fuzz_checks.rs).
#![no_main]

#[path = "../../tests/common/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::valhall_asm(data));
