//! The bodies of the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`), as plain functions so that
//! `cargo test --test fuzz_smoke` runs the same properties on a fixed corpus and on
//! proptest-generated inputs. Each function panics when a property is violated; any input is
//! acceptable (errors are fine, panics in the library are not).
//!
//! This file depends only on `tgsi2va` (the fuzz crate includes it with `#[path]`).

#![allow(dead_code)]

use tgsi2va::tgsi;
use tgsi2va::valhall::tables::WidenKind;
use tgsi2va::valhall::{Base, Instr, Opcode, asm, decode, decode_permissive, disassemble_word, encode, print};

/// `tgsi_parse`: whatever parses is checked and printed, and the printed text parses back to
/// the same tree (spans cleared).
pub fn tgsi_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mut program) = tgsi::parse(text) else { return };
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

/// Why Mesa's text of a valid instruction does not assemble back to the same word, if it is one
/// of the cases docs/valhall.md (Appendix B) documents.
pub fn documented_exception(i: &Instr) -> Option<&'static str> {
    let info = i.info();
    if i.opcode == Opcode::TEX_DUAL {
        return Some("B.8: TEX_DUAL's register widths are ambiguous");
    }
    for (k, m) in info.mods.iter().enumerate() {
        let v = i.mods[k];
        if m.hidden && v != 0 {
            return Some("B.8: fields Mesa's text does not show (TEX_GRADIENT bits 12 and 15) are not printed");
        }
        if m.text == "lod_mode" && matches!(m.kind, tgsi2va::valhall::tables::ModKind::Flag) && v == 1 {
            return Some("B.8: gradient lod flags print as .lod_mode");
        }
        if m.key == "nan_mode" && v == 0 {
            return Some("B.7: nan_mode none is read as a flow");
        }
        if m.key == "varying_texture_register_width" && v >= 2 {
            return Some("B.8: 16.32 / 32.32 contain a dot");
        }
    }
    for (src, s) in i.sources().iter().zip(info.srcs) {
        if src.base == Base::Immediate(21) {
            return Some("B.4: immediate entry 21 assembles to entry 0");
        }
        if matches!(src.base, Base::Special(_)) && s.size == 64 && s.widen_kind == WidenKind::Widen {
            return Some("a special value's .w0 on a 64-bit widen source reads as the widen w0");
        }
    }
    None
}

/// A strictly decoded word's text assembles back to the word (unless documented otherwise).
fn text_round_trip(word: u64, instr: &Instr) {
    let text = print(instr);
    match asm::assemble_line(&text) {
        Ok(w) if w == word => {}
        _ if documented_exception(instr).is_some() => {}
        other => panic!("`{text}` ({word:#018x}) assembled to {other:?}"),
    }
}

/// `valhall_asm`: arbitrary text through the assembler; when it assembles, every word decodes
/// (strictly, or permissively for reserved field values the assembler lets through), its text
/// assembles to the same word, and a strictly decoded instruction re-encodes to it.
pub fn valhall_asm(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(words) = asm::assemble(text) else { return };
    for word in words {
        match decode(word) {
            Ok(instr) => {
                assert_eq!(encode(&instr), Ok(word), "decode/encode of {word:#018x} from {text:?}");
                text_round_trip(word, &instr);
            }
            Err(_) => {
                // The assembler accepted something strict decoding rejects (a reserved value):
                // it must still be readable.
                let instr = decode_permissive(word)
                    .unwrap_or_else(|e| panic!("assembled word {word:#018x} from {text:?} does not decode: {e}"));
                let _ = print(&instr);
            }
        }
    }
}

/// `valhall_decode`: arbitrary 8-byte words never panic the decoders or the disassembler; a
/// strictly decoded word re-encodes to itself and its text assembles back to it.
pub fn valhall_decode(data: &[u8]) {
    for chunk in data.chunks_exact(8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        if let Ok(instr) = decode_permissive(word) {
            let _ = disassemble_word(word);
            let _ = asm::assemble_line(&print(&instr));
        }
        if let Ok(instr) = decode(word) {
            assert_eq!(encode(&instr), Ok(word), "decode/encode of {word:#018x}");
            text_round_trip(word, &instr);
        }
    }
}

/// `compile`: arbitrary text through the whole compiler never panics; on success every word of
/// every variant decodes strictly and the metadata's variants lie inside the blob.
pub fn compile(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(compiled) = tgsi2va::compile::compile(text, &tgsi2va::compile::Options::default()) else { return };
    assert!(!compiled.meta.variants.is_empty(), "no variant\n{text}");
    for v in &compiled.meta.variants {
        let (start, end) = (v.offset as usize, (v.offset + v.size) as usize);
        assert!(end <= compiled.blob.len() && v.size % 8 == 0, "variant {} outside the blob", v.name);
        for (k, chunk) in compiled.blob[start..end].chunks_exact(8).enumerate() {
            let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
            if let Err(e) = decode(word) {
                panic!("variant {} word {k} ({word:#018x}) does not decode: {e}\n{text}", v.name);
            }
        }
    }
}
