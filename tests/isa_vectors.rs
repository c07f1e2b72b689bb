//! Mesa's encoding vectors (tests/isa/assembler-cases.txt) and our own vectors covering every
//! instruction (tests/isa/own-cases.txt), both directions, and Mesa's rejection vectors
//! (tests/isa/negative-cases.txt). build.rs generates one named test per line
//! (`mesa_003_mov_i32`, `own_417_tex_fetch`, `negative_012_fadd`, …) calling `vector` or
//! `rejected` below.

use tgsi2va::valhall::{self, asm, decode, disassemble_word, encode};

/// Parses a vector line: 8 bytes in memory order, four spaces, the exact disassembly.
fn parse(file: &str, line_no: usize, line: &str) -> (u64, String) {
    let (hex, text) = line.split_once("    ").unwrap_or_else(|| panic!("{file}:{line_no}: no four-space separator"));
    let mut bytes = [0u8; 8];
    let parts: Vec<&str> = hex.split(' ').collect();
    assert_eq!(parts.len(), 8, "{file}:{line_no}: expected 8 bytes");
    for (b, h) in bytes.iter_mut().zip(parts) {
        *b = u8::from_str_radix(h, 16).unwrap_or_else(|_| panic!("{file}:{line_no}: bad byte `{h}`"));
    }
    (u64::from_le_bytes(bytes), text.to_string())
}

/// Checks one vector both ways: the text assembles to the bytes, the bytes disassemble to the
/// text (trailing spaces included), and strict decoding round-trips (Mesa's vectors may hold
/// reserved fields, which the strict decoder rejects).
fn vector(file: &str, line_no: usize, line: &str) {
    let (word, text) = parse(file, line_no, line);
    let at = format!("{file}:{line_no}: `{text}`");
    match disassemble_word(word) {
        Ok(t) => assert_eq!(t, text, "{at}: disassembly differs"),
        Err(e) => panic!("{at}: not decoded: {e}"),
    }
    if text.starts_with("TEX_DUAL") {
        // `.16`/`.32` name both register widths of TEX_DUAL (Appendix B item 8).
        match asm::assemble_line(&text) {
            Err(e) => assert!(e.message.contains("ambiguous"), "{at}: {e}"),
            Ok(w) => panic!("{at}: TEX_DUAL assembled to {w:#018x}, expected the documented ambiguity"),
        }
    } else {
        match asm::assemble_line(&text) {
            Ok(w) => assert_eq!(w.to_le_bytes(), word.to_le_bytes(), "{at}: assembled bytes differ"),
            Err(e) => panic!("{at}: rejected: {e}"),
        }
    }
    match decode(word) {
        Ok(i) => assert_eq!(encode(&i), Ok(word), "{at}: encode(decode(w)) != w"),
        Err(valhall::DecodeError::Invalid(valhall::InstrError::Reserved { .. })) if file != "own-cases.txt" => {}
        Err(e) => panic!("{at}: strict decode failed: {e}"),
    }
}

/// A rejection vector: the assembler refuses it with an error pointing into the line.
fn rejected(file: &str, line_no: usize, line: &str) {
    match asm::assemble_line(line) {
        Ok(w) => panic!("{file}:{line_no}: `{line}` assembled to {w:#018x}"),
        Err(e) => {
            assert!(e.column() >= 1 && e.column() <= line.len() + 1, "{file}:{line_no}: bad column in {e}");
            assert!(!e.message.is_empty());
        }
    }
}

include!(concat!(env!("OUT_DIR"), "/isa_case_tests.rs"));

fn count_vectors(file: &str) -> usize {
    let path = format!("{}/tests/isa/{file}", env!("CARGO_MANIFEST_DIR"));
    let content = std::fs::read_to_string(path).expect("vector file");
    content.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).count()
}

#[test]
fn vector_files_are_complete() {
    assert_eq!(count_vectors("assembler-cases.txt"), 244);
    assert_eq!(count_vectors("own-cases.txt"), 504);
    // 25 instruction lines and 5 comment lines after the origin line, all rejected.
    let path = format!("{}/tests/isa/negative-cases.txt", env!("CARGO_MANIFEST_DIR"));
    let content = std::fs::read_to_string(path).expect("negative-cases.txt");
    assert_eq!(content.lines().skip(1).filter(|l| !l.is_empty()).count(), 30);
}

#[test]
fn own_vectors_cover_every_instruction() {
    let path = format!("{}/tests/isa/own-cases.txt", env!("CARGO_MANIFEST_DIR"));
    let content = std::fs::read_to_string(path).expect("own-cases.txt");
    let mut seen = std::collections::HashSet::new();
    for (i, line) in content.lines().enumerate().filter(|(_, l)| !l.is_empty() && !l.starts_with('#')) {
        let (word, _) = parse("own-cases.txt", i + 1, line);
        if let Ok(instr) = decode(word) {
            seen.insert(instr.opcode);
        }
    }
    let missing: Vec<&str> = valhall::Opcode::ALL.iter().filter(|op| !seen.contains(op)).map(|op| op.name()).collect();
    assert!(missing.is_empty(), "instructions without an own vector: {missing:?}");
}
