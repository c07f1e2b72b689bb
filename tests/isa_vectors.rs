//! Mesa's encoding vectors (tests/isa/assembler-cases.txt), our own vectors covering every
//! instruction (tests/isa/own-cases.txt), both directions, and Mesa's rejection vectors
//! (tests/isa/negative-cases.txt). Every failing line is reported, not just the first.

use tgsi2va::valhall::{self, asm, decode, disassemble_word, encode};

/// A vector line: 8 bytes in memory order, four spaces, the exact disassembly.
struct Vector {
    line: usize,
    word: u64,
    text: String,
}

fn vectors(file: &str) -> Vec<Vector> {
    let path = format!("{}/tests/isa/{file}", env!("CARGO_MANIFEST_DIR"));
    let content = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let mut out = Vec::new();
    for (i, line) in content.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (hex, text) =
            line.split_once("    ").unwrap_or_else(|| panic!("{file}:{}: no four-space separator", i + 1));
        let bytes: Vec<u8> = hex
            .split(' ')
            .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|_| panic!("{file}:{}: bad byte `{b}`", i + 1)))
            .collect();
        assert_eq!(bytes.len(), 8, "{file}:{}: expected 8 bytes", i + 1);
        let word = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
        out.push(Vector { line: i + 1, word, text: text.to_string() });
    }
    out
}

fn check_all(file: &str, min: usize, check: impl Fn(&Vector) -> Result<(), String>) {
    let vectors = vectors(file);
    assert!(vectors.len() >= min, "{file}: only {} vectors", vectors.len());
    let failures: Vec<String> = vectors
        .iter()
        .filter_map(|v| check(v).err().map(|e| format!("{file}:{}: `{}`: {e}", v.line, v.text)))
        .collect();
    assert!(failures.is_empty(), "{} of {} vectors fail:\n{}", failures.len(), vectors.len(), failures.join("\n"));
}

fn assembles(v: &Vector) -> Result<(), String> {
    match asm::assemble_line(&v.text) {
        Ok(w) if w == v.word => Ok(()),
        Ok(w) => Err(format!("assembled to {:02x?}, expected {:02x?}", w.to_le_bytes(), v.word.to_le_bytes())),
        Err(e) => Err(format!("rejected: {e}")),
    }
}

fn disassembles(v: &Vector) -> Result<(), String> {
    match disassemble_word(v.word) {
        Ok(t) if t == v.text => Ok(()),
        Ok(t) => Err(format!("disassembled to `{t}`")),
        Err(e) => Err(format!("not decoded: {e}")),
    }
}

/// Strict decoding round-trips (Mesa's vectors include words with reserved fields, which the
/// strict decoder rejects; those must still disassemble, checked above).
fn decodes_strictly_or_reserved(v: &Vector) -> Result<(), String> {
    match decode(v.word) {
        Ok(i) => match encode(&i) {
            Ok(w) if w == v.word => Ok(()),
            other => Err(format!("decode then encode gave {other:?}")),
        },
        Err(valhall::DecodeError::Invalid(valhall::InstrError::Reserved { .. })) => Ok(()),
        Err(e) => Err(format!("strict decode failed: {e}")),
    }
}

#[test]
fn mesa_vectors_assemble() {
    check_all("assembler-cases.txt", 244, assembles);
}

#[test]
fn mesa_vectors_disassemble() {
    check_all("assembler-cases.txt", 244, disassembles);
}

#[test]
fn mesa_vectors_decode_strictly() {
    check_all("assembler-cases.txt", 244, decodes_strictly_or_reserved);
}

#[test]
fn own_vectors_assemble() {
    // TEX_DUAL cannot be assembled: `.16`/`.32` name both of its register widths (Appendix B
    // item 8); its vectors are checked for that rejection instead.
    check_all("own-cases.txt", 252, |v| {
        if v.text.starts_with("TEX_DUAL") {
            match asm::assemble_line(&v.text) {
                Err(e) if e.message.contains("ambiguous") => Ok(()),
                other => Err(format!("expected the documented ambiguity error, got {other:?}")),
            }
        } else {
            assembles(v)
        }
    });
}

#[test]
fn own_vectors_disassemble() {
    check_all("own-cases.txt", 252, disassembles);
}

#[test]
fn own_vectors_decode_strictly() {
    check_all("own-cases.txt", 252, |v| match decode(v.word) {
        Ok(i) if encode(&i) == Ok(v.word) => Ok(()),
        Ok(_) => Err("encode(decode(w)) != w".into()),
        Err(e) => Err(format!("strict decode failed: {e}")),
    });
}

#[test]
fn own_vectors_cover_every_instruction() {
    let mut seen = std::collections::HashSet::new();
    for v in vectors("own-cases.txt") {
        if let Ok(i) = decode(v.word) {
            seen.insert(i.opcode);
        }
    }
    let missing: Vec<&str> = valhall::Opcode::ALL.iter().filter(|op| !seen.contains(op)).map(|op| op.name()).collect();
    assert!(missing.is_empty(), "instructions without an own vector: {missing:?}");
}

#[test]
fn negative_cases_are_rejected_with_a_column() {
    let path = format!("{}/tests/isa/negative-cases.txt", env!("CARGO_MANIFEST_DIR"));
    let content = std::fs::read_to_string(path).expect("negative-cases.txt");
    let mut failures = Vec::new();
    let mut count = 0;
    for (i, line) in content.lines().enumerate() {
        if line.is_empty() || i == 0 {
            continue; // line 1 names the file's origin
        }
        count += 1;
        match asm::assemble_line(line) {
            Ok(w) => failures.push(format!("line {}: `{line}` assembled to {w:#018x}", i + 1)),
            Err(e) => {
                if e.column() == 0 || e.column() > line.len() + 1 || e.message.is_empty() {
                    failures.push(format!("line {}: `{line}`: bad error position {e}", i + 1));
                }
            }
        }
    }
    assert_eq!(count, 30, "25 instruction lines and 5 comment lines");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
