//! Property tests of the ISA layer:
//!
//! * `decode(encode(i)) == i` for random valid instructions of every opcode;
//! * `assemble(disassemble(w)) == w` for their words, except the documented cases where Mesa's
//!   text cannot express the word (Appendix B items 4, 7, 8 and the 64-bit widen special);
//! * random words never make the decoders, the disassembler or the assembler panic, and every
//!   strictly decoded word re-encodes to itself.

mod common;

use common::fuzz_checks::documented_exception;
use common::rng::Rng;
use proptest::prelude::*;
use tgsi2va::valhall::{
    Instr, Opcode, Staging, asm, decode, decode_permissive, disassemble_word, encode, encode_raw, print_exact,
};

/// A random valid instruction of opcode `Opcode::ALL[index]` from a proptest seed.
fn random_instr(index: usize, seed: u64) -> Instr {
    common::random_instr::random_instr(Opcode::ALL[index % Opcode::ALL.len()], &mut Rng::new(seed))
}

fn check_text_round_trip(word: u64, instr: &Instr) -> Result<(), TestCaseError> {
    let text = disassemble_word(word).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let back = asm::assemble_line(&text);
    match (back, documented_exception(instr)) {
        (Ok(w), _) if w == word => Ok(()),
        (_, Some(_)) => Ok(()),
        (other, None) => Err(TestCaseError::fail(format!("`{text}` ({word:#018x}) assembled to {other:?}"))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

    #[test]
    fn decode_inverts_encode(index in 0usize..252, seed in any::<u64>()) {
        let instr = random_instr(index, seed);
        prop_assert_eq!(instr.validate(), Ok(()));
        let word = encode(&instr).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(decode(word), Ok(instr));
    }

    #[test]
    fn assembly_inverts_disassembly(index in 0usize..252, seed in any::<u64>()) {
        let instr = random_instr(index, seed);
        let word = encode(&instr).map_err(|e| TestCaseError::fail(e.to_string()))?;
        check_text_round_trip(word, &instr)?;
    }

    /// The exact text (every flag by its unique key) assembles back to the word, except where
    /// Mesa's text itself cannot express a field; hidden and renamed flags always can.
    #[test]
    fn exact_text_round_trips(index in 0usize..252, seed in any::<u64>()) {
        let instr = random_instr(index, seed);
        let word = encode(&instr).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let text = print_exact(&instr);
        let back = asm::assemble_line(&text);
        // The same instruction without the renamed and hidden flags: its documented exceptions
        // (if any) are the ones left.
        let mut plain = instr;
        for (k, m) in instr.info().mods.iter().enumerate() {
            if m.hidden || m.text != m.key {
                plain.mods[k] = 0;
            }
        }
        if documented_exception(&plain).is_none() {
            prop_assert_eq!(back, Ok(word), "{}", text);
        }
    }

    #[test]
    fn random_words_never_panic(word in any::<u64>()) {
        if let Ok(instr) = decode(word) {
            prop_assert_eq!(encode(&instr), Ok(word));
        }
        if let Ok(instr) = decode_permissive(word) {
            let _ = encode_raw(&instr);
            let text = disassemble_word(word).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let _ = asm::assemble_line(&text);
        }
    }

    /// Words of a known opcode with random field contents (the bits Mesa reads): decoding,
    /// printing and re-assembling behave.
    #[test]
    fn decoded_words_reassemble(index in 0usize..252, bits in any::<u64>()) {
        let (mask, value) = Opcode::ALL[index].info().opcode_pattern();
        let word = (bits & !mask & !(1 << 63)) | value;
        let permissive = decode_permissive(word).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let canonical = encode_raw(&permissive).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(disassemble_word(word), disassemble_word(canonical));
        if let Ok(instr) = decode(canonical) {
            prop_assert_eq!(encode(&instr), Ok(canonical));
            check_text_round_trip(canonical, &instr)?;
        }
    }

    #[test]
    fn random_text_never_panics(line in "[A-Z_]{1,8}(\\.[a-z0-9_]{1,6}){0,3}( [@^a-z0-9:.#_-]{0,12}(, [@^a-z0-9:.#_x-]{0,12}){0,4})?") {
        let _ = asm::assemble_line(&line);
    }

    #[test]
    fn mutated_vector_text_never_panics(index in 0usize..244, cut in 0usize..80, junk in "[ -~]{0,6}") {
        let vectors = include_str!("isa/assembler-cases.txt");
        let line = vectors.lines().filter(|l| !l.starts_with('#')).nth(index).unwrap_or("NOP ");
        let text = line.get(27..).unwrap_or("NOP ");
        let mut mutated = String::new();
        for (k, c) in text.char_indices() {
            if k == cut { mutated.push_str(&junk); }
            mutated.push(c);
        }
        let _ = asm::assemble_line(&mutated);
    }
}

#[test]
fn every_opcode_has_a_valid_default() {
    for op in Opcode::ALL {
        let i = Instr::new(op);
        assert_eq!(i.validate(), Ok(()), "{op}");
        let w = encode(&i).unwrap_or_else(|e| panic!("{op}: {e}"));
        assert_eq!(decode(w), Ok(i), "{op}");
    }
}

/// `TEX_GRADIENT`'s four control flags: the decoder accepts them, the disassembler prints
/// Mesa's text (bits 12 and 15 not at all, 13 and 14 as `.lod_mode`), the exact text names
/// each, and it assembles back.
#[test]
fn gradient_control_flags() {
    let mut i = Instr::new(Opcode::TEX_GRADIENT);
    i.staging[0] = Staging { base: 4, count: 2 };
    i.staging[1] = Staging { base: 8, count: 4 };
    i.set_modifier("register_width", 1).unwrap();
    for key in ["force_delta_enable", "lod_bias_disable", "lod_clamp_disable", "derivative_enable"] {
        let mut one = i;
        one.set_flag(key, true).unwrap();
        let word = encode(&one).unwrap();
        assert_eq!(decode(word), Ok(one), "{key}");
        let bit = match key {
            "force_delta_enable" => 12,
            "lod_bias_disable" => 13,
            "lod_clamp_disable" => 14,
            _ => 15,
        };
        assert_eq!(word ^ encode(&i).unwrap(), 1 << bit, "{key}");
        let mesa = disassemble_word(word).unwrap();
        let expected_mesa = match bit {
            12 | 15 => "TEX_GRADIENT.slot0.f.32.1d @r4:r5, @r8:r9:r10:r11, r0",
            _ => "TEX_GRADIENT.slot0.f.32.1d.lod_mode @r4:r5, @r8:r9:r10:r11, r0",
        };
        assert_eq!(mesa, expected_mesa, "{key}");
        let exact = print_exact(&one);
        assert_eq!(exact, format!("TEX_GRADIENT.slot0.f.32.1d.{key} @r4:r5, @r8:r9:r10:r11, r0"));
        assert_eq!(asm::assemble_line(&exact), Ok(word), "{key}");
    }
    // Mesa's `.lod_mode` names two flags: ambiguous, as in Mesa's assembler.
    let e = asm::assemble_line("TEX_GRADIENT.slot0.f.32.1d.lod_mode @r4:r5, @r8:r9:r10:r11, r0").unwrap_err();
    assert!(e.to_string().contains("ambiguous"), "{e}");
    // All four, in any order.
    let all = asm::assemble_line(
        "TEX_GRADIENT.slot0.u.32.rg.2d.derivative_enable.lod_clamp_disable.lod_bias_disable @r4:r5, @r8:r9:r10:r11, r0",
    )
    .unwrap();
    assert_eq!(all >> 12 & 0xF, 0b1110);
    assert_eq!(
        disassemble_word(all).unwrap(),
        "TEX_GRADIENT.slot0.u.32.rg.2d.lod_mode.lod_mode @r4:r5, @r8:r9:r10:r11, r0"
    );
}
