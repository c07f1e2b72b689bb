//! Parse arbitrary text; when it parses, check it, print it, parse the printed text again and
//! require the same tree (spans cleared).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tgsi2va::tgsi;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(mut program) = tgsi::parse(text) {
        let _ = tgsi::check(&program);
        let printed = tgsi::print(&program);
        let mut reparsed = match tgsi::parse(&printed) {
            Ok(p) => p,
            Err(e) => panic!("printed text does not parse: {e}\n{printed}"),
        };
        program.clear_spans();
        reparsed.clear_spans();
        assert_eq!(program, reparsed, "parse(print(ast)) != ast\n{printed}");
    }
});
