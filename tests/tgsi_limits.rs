//! Resource limits: huge inputs give errors or linear work, never a crash, an overflow or
//! stack exhaustion. No timing assertions.

use tgsi2va::tgsi;

#[test]
fn a_million_instructions_parse_and_check() {
    let mut text = String::with_capacity(40_000_000);
    text.push_str("FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL TEMP[0..3]\n");
    text.push_str("IMM[0] FLT32 {    0.5000,     1.0000,     0.0000,     0.0000}\n");
    for i in 0..1_000_000u32 {
        let line = match i % 4 {
            0 => format!("{i:3}: MAD TEMP[0], IN[0], IMM[0].xxxx, TEMP[1]\n"),
            1 => format!("{i:3}: MUL TEMP[1].xy, TEMP[0].xyyy, IMM[0].yyyy\n"),
            2 => format!("{i:3}: ADD_SAT TEMP[2], -TEMP[1], |TEMP[0].wzyx|\n"),
            _ => format!("{i:3}: MOV TEMP[3], TEMP[2]\n"),
        };
        text.push_str(&line);
    }
    text.push_str("1000000: MOV OUT[0], TEMP[3]\n1000001: END\n");
    let program = tgsi::parse(&text).expect("parses");
    assert_eq!(program.instructions().count(), 1_000_002);
    let diags = tgsi::check(&program);
    assert!(diags.is_empty(), "{:?}", diags.first());
    assert_eq!(tgsi::print(&program), text);
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let depth = 10_000;
    let mut text = String::from("FRAG\nDCL TEMP[0]\n");
    for _ in 0..depth {
        text.push_str("IF TEMP[0].xxxx\nBGNLOOP\n");
    }
    for _ in 0..depth {
        text.push_str("ENDLOOP\nENDIF\n");
    }
    text.push_str("END\n");
    let program = tgsi::parse(&text).expect("parses");
    assert!(tgsi::check(&program).iter().all(|d| !d.is_error()));
    let printed = tgsi::print(&program);
    // The innermost instruction is indented by two spaces per level.
    let inner = printed.lines().nth(2 + 2 * depth).unwrap();
    assert!(inner.ends_with(&format!("{}ENDLOOP", "  ".repeat(2 * depth - 1))), "{}", &inner[..40]);
    // Unbalanced the other way: 10,000 closers without openers.
    let closers = format!("FRAG\n{}END\n", "ENDIF\n".repeat(depth));
    let program = tgsi::parse(&closers).expect("parses");
    assert_eq!(tgsi::check(&program).iter().filter(|d| d.is_error()).count(), depth);
}

#[test]
fn out_of_range_numbers_are_errors() {
    for (text, what) in [
        ("FRAG\nMOV TEMP[70000], TEMP[0]\n", "index 70000"),
        ("FRAG\nDCL TEMP[70000]\n", "declaration 70000"),
        ("FRAG\nMOV TEMP[0], CONST[ADDR[0].x+40000]\n", "offset 40000"),
        ("FRAG\nMOV TEMP[0], CONST[ADDR[70000].x]\n", "address index"),
        ("FRAG\nDCL IN[0], GENERIC[70000]\n", "semantic index"),
        ("FRAG\nPROPERTY FS_DEPTH_LAYOUT 4294967296\n", "property value"),
        ("FRAG\nIMM[0] UINT32 {4294967296, 0, 0, 0}\n", "UINT32"),
        ("FRAG\nIMM[0] INT64 {9223372036854775808, 0}\n", "INT64"),
        ("FRAG\nIMM[0] UINT64 {18446744073709551616, 0}\n", "UINT64"),
    ] {
        let errors = tgsi::parse(text).expect_err(what);
        assert_eq!(errors.0[0].code, "E0024", "{what}: {:?}", errors.0[0]);
    }
    // Extremes that do fit.
    tgsi::parse("FRAG\nMOV TEMP[32767], CONST[ADDR[0].x-32768]\nDCL TEMP[65535]\n").expect("limits fit");
}

#[test]
fn huge_tokens_and_lines_are_linear_errors() {
    let digits = "9".repeat(1 << 20);
    let text = format!("FRAG\nMOV TEMP[{digits}], TEMP[0]\nIMM[0] FLT32 {{{digits}, 0, 0, 0}}\n");
    let errors = tgsi::parse(&text).expect_err("huge index");
    assert_eq!(errors.0[0].code, "E0024");
    let long_word = "A".repeat(1 << 20);
    let errors = tgsi::parse(&format!("FRAG\n{long_word} TEMP[0]\n")).expect_err("long word");
    assert_eq!(errors.0[0].code, "E0003");
    let long_line = format!("FRAG\nDCL TEMP[0]{}\n", " ".repeat(1 << 22));
    tgsi::parse(&long_line).expect("trailing blanks");
    // Many errors: stops after 50.
    let junk = "MOVE TEMP[0], TEMP[1]\n".repeat(100_000);
    let errors = tgsi::parse(&format!("FRAG\n{junk}")).expect_err("junk");
    assert_eq!(errors.0.len(), 51);
    assert_eq!(errors.0[50].code, "E0099");
}

#[test]
fn nul_and_non_ascii_bytes_are_errors() {
    for text in ["FRAG\n\0MOV TEMP[0], TEMP[1]\n", "FRAG\nMOV TEMP[0], TÉMP[1]\n", "FRAG\n\u{feff}END\n"] {
        assert!(tgsi::parse(text).is_err(), "{text:?}");
    }
}

#[test]
fn checker_is_linear_on_adversarial_nesting() {
    let n = 200_000;
    // Many openers closed by the wrong kind, BRKs under deep IFs, calls to many subroutines,
    // unused sampler views next to samplers: each would be quadratic if searched naively.
    let mut text = String::from("FRAG\nDCL TEMP[0]\n");
    text.push_str(&"IF TEMP[0].xxxx\n".repeat(n));
    text.push_str(&"BRK\nCONT\n".repeat(n));
    text.push_str(&"ENDLOOP\n".repeat(n));
    text.push_str(&"CAL :7\n".repeat(n));
    for i in 0..2000 {
        text.push_str(&format!("DCL SVIEW[{i}], 2D, FLOAT\nDCL SAMP[{i}]\n"));
    }
    text.push_str("END\n");
    let program = tgsi::parse(&text).expect("parses");
    let diags = tgsi::check(&program);
    assert!(diags.iter().filter(|d| d.code == "E0126").count() == n);
    assert!(diags.iter().filter(|d| d.code == "E0120").count() == n);
}
