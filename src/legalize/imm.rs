//! Encoding a 32-bit constant as an immediate-table source.
//!
//! The hardware reads constants only from its 32-entry table (§A.3.4), but a source's modifier
//! fields widen what one entry can express. In order of preference (Mesa's):
//!
//! 1. an exact entry;
//! 2. the negation of an entry, on sources with a `neg` field (`-1.0` = `0x3F800000.neg`);
//! 3. a byte of an entry on sources with a byte-select widen (`.b0`–`.b3`) or byte lanes
//!    (`.b00`–`.b33`, shift amounts), zero-extended — used only when that equals the value;
//! 4. a 16-bit half of an entry on sources with a half-select widen (`.h0`/`.h1`);
//! 5. an f32 value exactly representable as an fp16 half of an entry, on 32-bit float sources
//!    whose swizzle converts a half (`2.0` = `0x40000000.h1`), possibly negated.

use crate::valhall::tables::{IMMEDIATES, SrcInfo, WidenKind};
use std::sync::LazyLock;

/// A table entry and the source modifier fields that turn it into the wanted value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoded {
    /// Raw value of the table entry (the IR operand becomes `Const(entry)`).
    pub entry: u32,
    pub neg: bool,
    /// 2-bit swizzle field index.
    pub swizzle: u8,
    /// Widen / lanes field index.
    pub widen: u8,
}

fn table() -> impl Iterator<Item = u32> {
    IMMEDIATES.iter().map(|e| e.0)
}

/// For each byte value, the first entry (in table order) holding it and the byte's position:
/// what the scan for byte-lane sources (shift amounts, lane numbers) would find first.
static FIRST_BYTE: LazyLock<[Option<(u32, u8)>; 256]> = LazyLock::new(|| {
    let mut first = [None; 256];
    for e in table() {
        for k in 0..4u8 {
            let byte = ((e >> (8 * k)) & 0xFF) as usize;
            if first[byte].is_none() {
                first[byte] = Some((e, k));
            }
        }
    }
    first
});

/// The values of the table, contiguous (the table pairs each with its name).
static VALUES: [u32; IMMEDIATES.len()] = {
    let mut values = [0; IMMEDIATES.len()];
    let mut k = 0;
    while k < values.len() {
        values[k] = IMMEDIATES[k].0;
        k += 1;
    }
    values
};

/// Whether `value` is an entry of the table.
pub fn is_entry(value: u32) -> bool {
    // A scan of 32 contiguous words without an early exit compiles to a few vector compares:
    // cheaper than a binary search or a scan of the (value, name) pairs.
    VALUES.iter().fold(false, |found, &e| found | (e == value))
}

/// How source `info` can read `value` from the table, if it can. `signed_widen` tells whether
/// the source's narrow selects sign-extend (then only values whose narrow sign bit is clear
/// may use them).
pub fn encode(value: u32, info: &SrcInfo, signed_widen: bool) -> Option<Encoded> {
    // The identity selectors: a byte-lane source reads its low byte (`.b00`), others the whole
    // value (or `h01` for 16-bit vectors).
    let identity_widen = if info.widen_kind == WidenKind::Lanes { 4 } else { info.default_widen() };
    let plain = Encoded { entry: value, neg: false, swizzle: info.default_swizzle(), widen: identity_widen };
    if info.size == 64 {
        return is_entry(value).then_some(plain);
    }
    if is_entry(value) {
        return Some(plain);
    }
    if info.neg.is_some() && is_entry(value ^ 0x8000_0000) {
        return Some(Encoded { entry: value ^ 0x8000_0000, neg: true, ..plain });
    }
    // lanes_8_bit (b00..b33 = 4..7) replicates one byte; shift amounts and lane numbers (8-bit
    // sources) only read the low byte, so any entry byte equal to the value works.
    if info.widen_kind == WidenKind::Lanes && value < 0x100 {
        if let Some((e, k)) = FIRST_BYTE[value as usize] {
            return Some(Encoded { entry: e, widen: 4 + k, ..plain });
        }
    }
    if info.size == 32 {
        if let Some(widen) = info.widen {
            let values = widen.values.info();
            if info.widen_kind == WidenKind::Widen {
                // swizzles_32_bit: h0 = 2, h1 = 3, b0..b3 = 4..7.
                if value < 0x80 || (value < 0x100 && !signed_widen) {
                    for e in table() {
                        for k in 0..4u8 {
                            if (e >> (8 * k)) & 0xFF == value && values.is_valid(4 + k) {
                                return Some(Encoded { entry: e, widen: 4 + k, ..plain });
                            }
                        }
                    }
                }
                if value < 0x8000 || (value < 0x1_0000 && !signed_widen) {
                    for e in table() {
                        for k in 0..2u8 {
                            if (e >> (16 * k)) & 0xFFFF == value && values.is_valid(2 + k) {
                                return Some(Encoded { entry: e, widen: 2 + k, ..plain });
                            }
                        }
                    }
                }
            }
        }
        // f32 from an fp16 half: widen enum on the 2-bit swizzle field (none 0, h0 1, h1 2).
        if info.swizzle.is_some() && info.float {
            let f = f32::from_bits(value);
            let h = half::f16::from_f32(f);
            if h.to_f32().to_bits() == value {
                let bits = u32::from(h.to_bits());
                for (want, neg) in [(bits, false), (bits ^ 0x8000, true)] {
                    if neg && info.neg.is_none() {
                        continue;
                    }
                    for e in table() {
                        for k in 0..2u8 {
                            if (e >> (16 * k)) & 0xFFFF == want {
                                return Some(Encoded { entry: e, neg, swizzle: 1 + k, widen: 0 });
                            }
                        }
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::valhall::Opcode;

    fn src(op: Opcode, k: usize) -> SrcInfo {
        op.info().srcs[k]
    }

    #[test]
    fn exact_negated_and_half_forms() {
        let fadd = src(Opcode::FADD_F32, 0);
        assert_eq!(encode(0x3F80_0000, &fadd, false).unwrap().entry, 0x3F80_0000);
        let minus_one = encode(0xBF80_0000, &fadd, false).unwrap();
        assert_eq!((minus_one.entry, minus_one.neg), (0x3F80_0000, true));
        let two = encode(2.0f32.to_bits(), &fadd, false).unwrap();
        assert_eq!((two.entry, two.swizzle), (0x4000_0000, 0), "2.0f is itself an entry");
        let four = encode(4.0f32.to_bits(), &fadd, false).unwrap();
        assert_eq!((four.entry, four.swizzle), (0x4400_0000, 2), "0x44000000.h1");
        let minus_half = encode((-0.5f32).to_bits(), &fadd, false).unwrap();
        assert_eq!((minus_half.entry, minus_half.neg, minus_half.swizzle), (0x3800_0000, true, 2));
        assert_eq!(encode(0x1234_5678, &fadd, false), None);
    }

    #[test]
    fn byte_and_lane_selects() {
        let iadd = src(Opcode::IADD_U32, 1);
        let e = encode(16, &iadd, false).unwrap();
        assert_eq!((e.entry >> (8 * (e.widen - 4))) & 0xFF, 16);
        let shift = src(Opcode::LSHIFT_OR_I32, 1);
        let s = encode(24, &shift, false).unwrap();
        assert_eq!((s.entry >> (8 * (s.widen - 4))) & 0xFF, 24);
        assert!((4..8).contains(&s.widen));
        // 0xFA sign-extends as a byte: not for signed widens.
        assert!(encode(0xFA, &iadd, true).is_none() || encode(0xFA, &iadd, true).unwrap().widen < 4);
        let csel = src(Opcode::CSEL_U32, 0);
        assert_eq!(encode(16, &csel, false), None, "CSEL sources have no selects");
    }

    #[test]
    fn first_byte_agrees_with_scanning_the_table() {
        for byte in 0..256u32 {
            let scanned =
                table().flat_map(|e| (0..4u8).map(move |k| (e, k))).find(|&(e, k)| (e >> (8 * k)) & 0xFF == byte);
            assert_eq!(FIRST_BYTE[byte as usize], scanned, "{byte:#x}");
        }
    }

    #[test]
    fn sixty_four_bit_sources_take_exact_entries() {
        let load = src(Opcode::LOAD_I32, 0);
        assert_eq!(load.size, 64);
        assert!(encode(0, &load, false).is_some());
        assert!(encode(0x3F80_0000, &load, false).is_some());
        assert!(encode(5, &load, false).is_none());
    }
}
