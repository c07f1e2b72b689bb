//! 64-bit word → instruction.
//!
//! The decoder looks the primary opcode (bits 48..56) up in the table's buckets and, when the
//! bucket holds several instructions, picks the one whose secondary opcode matches (build.rs
//! guarantees at most one does). It then reads every field of that instruction into a fixed-size
//! [`Instr`]; nothing is allocated.
//!
//! * [`decode`] is strict: it also rejects bit 63, reserved values, invalid operands, and any
//!   bit outside the instruction's fields or different from a fixed value (placeholder byte,
//!   staging control bits, FAU page without uniform operands). When it succeeds,
//!   `encode(&decode(w)?) == Ok(w)`.
//! * [`decode_permissive`] accepts every word Mesa's disassembler decodes: it fails only for
//!   unknown opcodes, does not check the secondary opcode of single-instruction buckets (as
//!   Mesa), and keeps reserved values so the disassembler can print them.

use super::encode::encode_raw;
use super::inst::{Base, Dest, Instr, InstrError, Src, Staging};
use super::tables::*;

/// Why a word is not a (valid) instruction.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("unknown primary opcode {0:#05x}")]
    UnknownOpcode(u16),
    #[error("primary opcode {primary:#05x} has no instruction with secondary opcode {value:#x}")]
    UnknownSecondary { primary: u16, value: u16 },
    #[error("bit 63 is set (reserved)")]
    Bit63,
    #[error(transparent)]
    Invalid(#[from] InstrError),
    #[error("{instr}: bits {bits:#018x} are not part of any field or differ from their fixed value")]
    StrayBits { instr: &'static str, bits: u64 },
}

fn find(word: u64, strict: bool) -> Result<Opcode, DecodeError> {
    let primary = ((word >> 48) & 0x1FF) as u16;
    let bucket = Opcode::with_primary(primary);
    match bucket {
        [] => Err(DecodeError::UnknownOpcode(primary)),
        [only] if !strict => Ok(*only),
        _ => {
            for &op in bucket {
                let (mask, value) = op.info().opcode_pattern();
                if word & mask == value {
                    return Ok(op);
                }
            }
            let value = bucket[0].info().secondary.map_or(0, |s| ((word >> s.shift) as u16) & s.mask);
            Err(DecodeError::UnknownSecondary { primary, value })
        }
    }
}

fn field(word: u64, start: u8, width: u8) -> u64 {
    (word >> start) & ((1u64 << width) - 1)
}

/// Reads every field of `opcode`'s layout from `word`.
fn fill(word: u64, opcode: Opcode) -> Instr {
    let info = opcode.info();
    let page = field(word, 57, 2) as u8;
    let mut instr = Instr {
        opcode,
        flow: field(word, 59, 4) as u8,
        dest: Dest::NONE,
        staging: [Staging::default(); MAX_STAGING],
        srcs: [Src::EMPTY; MAX_SOURCES],
        imms: [0; MAX_IMMEDIATES],
        mods: [0; MAX_MODIFIERS],
    };
    if info.dest {
        instr.dest = Dest { reg: field(word, 40, 6) as u8, mask: field(word, 46, 2) as u8 };
    }
    for (k, s) in info.staging.iter().enumerate() {
        let count = field(word, s.count_start, 3) as u8;
        instr.staging[k] = Staging {
            base: field(word, s.base_start, 6) as u8,
            count: if s.count_minus_one { count + 1 } else { count },
        };
    }
    for (k, s) in info.srcs.iter().enumerate() {
        let byte = field(word, 8 * s.slot, 8) as u8;
        let flag = |bit: Option<u8>| bit.is_some_and(|b| field(word, b, 1) == 1);
        let value = |f: Option<SrcField>| f.map_or(0, |f| field(word, f.start, f.width) as u8);
        instr.srcs[k] = Src {
            base: Base::from_byte(byte, page),
            neg: flag(s.neg),
            abs: flag(s.abs),
            not: flag(s.not),
            swizzle: value(s.swizzle),
            widen: value(s.widen),
            lane: value(s.lane),
        };
    }
    for (k, f) in info.imms.iter().enumerate() {
        instr.imms[k] = field(word, f.start, f.width) as u32;
    }
    for (k, m) in info.mods.iter().enumerate() {
        instr.mods[k] = field(word, m.start, m.width) as u8;
    }
    instr
}

/// Decodes a word that encodes a valid instruction.
pub fn decode(word: u64) -> Result<Instr, DecodeError> {
    if word >> 63 != 0 {
        return Err(DecodeError::Bit63);
    }
    let instr = fill(word, find(word, true)?);
    instr.validate()?;
    let again = encode_raw(&instr)?;
    if again != word {
        return Err(DecodeError::StrayBits { instr: instr.info().name, bits: again ^ word });
    }
    Ok(instr)
}

/// Decodes any word Mesa's disassembler decodes, keeping reserved values.
pub fn decode_permissive(word: u64) -> Result<Instr, DecodeError> {
    Ok(fill(word, find(word, false)?))
}
