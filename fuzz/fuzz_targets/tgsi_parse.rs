//! Parse arbitrary text; when it parses, check it, print it, parse the printed text again and
//! require the same tree (spans cleared).
//! The body is shared with `cargo test --test fuzz_smoke` (tests/common/fuzz_checks.rs).
#![no_main]

#[path = "../../tests/common/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::tgsi_parse(data));
