//! Bitwise operations and shifts (§C.8 of the lowering reference), bitfield extraction and
//! insertion, and bit counting (§C.9).
//!
//! # Sequences (instructions per channel)
//!
//! | opcode | sequence | count |
//! | --- | --- | --- |
//! | AND, OR, XOR | `LSHIFT_{AND,OR,XOR}.i32 a, 0.b00, b` | 1 |
//! | NOT | `LSHIFT_OR.i32 0, 0.b00, a.not` | 1 |
//! | SHL, USHR, ISHR (and legacy SHR) | `LSHIFT_OR` / `RSHIFT_OR[.signed] a, s.b00, 0` | 1 |
//! | UBFE | `m = (~0 << w) ^ ~0` (`LSHIFT_XOR`), `w ≥ 32 → ~0` (CSEL), `RSHIFT_AND v, o.b00, m` | 3 |
//! | IBFE | `x = v >>s o`, `k = −w` (0 for `w ≥ 32`), `(x << k) >>s k`, `w = 0 → 0` | 6 |
//! | BFI | mask as for UBFE shifted by `o`, `MUX.i32.bit (ins << o), base, mask` | 5 |
//! | BREV, POPC | `BITREV.i32`, `POPCOUNT.i32` | 1 |
//! | UMSB | `31 − CLZ(x)` | 2 |
//! | IMSB | `31 − CLZ(x ^ (x >>s 31))` (`RSHIFT_XOR.signed`) | 3 |
//! | LSB | `x = 0 ? −1 : CLZ(BITREV(x))` | 3 |
//!
//! Constant offsets and widths fold into the masks and shift amounts (UBFE with both constant
//! is one `RSHIFT_AND`).
//!
//! # Semantics shared with the interpreter
//!
//! * Shift counts are taken modulo 32 (tgsi.rst masks them with `0x1f`). The hardware reads
//!   the count's low byte (`.b00`) and, like Mesa, we rely on it using the low 5 bits;
//!   constant counts are masked here.
//! * Bitfields, with `o = offset & 31` and `w = min(bits, 32)` (`bits` unsigned):
//!   - `UBFE(v, offset, bits) = (v >> o) & mask(w)`, `mask(32) = ~0`, else `(1 << w) − 1`;
//!   - `IBFE(v, offset, bits) = 0` if `w = 0`, else `(int)v >> o` sign-extended from bit
//!     `w − 1` (for `w = 32`, `(int)v >> o`);
//!   - `BFI(base, ins, offset, bits) = (base & ~m) | ((ins << o) & m)` with
//!     `m = mask(w) << o` (32-bit: bits moved past bit 31 are dropped).
//!
//!   Within tgsi.rst's defined range (`offset + bits ≤ 32`) these are exactly its pseudocode
//!   (width 0 gives 0 for the extracts and `base` for BFI; width 32 at offset 0 gives the whole
//!   value / `ins`). Beyond it they read bits above bit 31 as zeros (UBFE) or as copies of the
//!   sign bit (IBFE) — Direct3D's `ubfe`/`ibfe` — and BFI inserts only the bits that fit; those
//!   results are undefined (tgsi.rst; NIR's `*bitfield_extract`/`bitfield_insert`, Mesa's
//!   mapping of the opcodes), so the interpreter leaves them unconstrained.
//! * UMSB, IMSB, LSB return −1 (`0xFFFFFFFF`) when no bit qualifies (0 for UMSB/LSB; 0 and −1
//!   for IMSB).

use super::Ctx;
use super::int::{componentwise, shift_const, shift_op};
use crate::ir::builder::{byte0, shift_zero};
use crate::ir::{Src, Value};
use crate::tgsi::ast::Instruction;
use crate::tgsi::opcodes::Opcode;
use crate::valhall::Instr;
use crate::valhall::Opcode as V;
use crate::valhall::tables::Condition;

/// Lowers `inst` if it belongs to this family; returns whether it did.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    match opcode {
        Opcode::And => componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().and(s[0], s[1])),
        Opcode::Or => componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().or(s[0], s[1])),
        Opcode::Xor => componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().xor(s[0], s[1])),
        Opcode::Not => componentwise(ctx, inst, opcode, 1, |ctx, s| not(ctx, s[0])),
        Opcode::Shl => shift(ctx, inst, opcode, Shift::Left),
        Opcode::Ushr => shift(ctx, inst, opcode, Shift::Logical),
        Opcode::Ishr => shift(ctx, inst, opcode, Shift::Arithmetic),
        Opcode::Ubfe => componentwise(ctx, inst, opcode, 3, |ctx, s| ubfe(ctx, s[0], s[1], s[2])),
        Opcode::Ibfe => componentwise(ctx, inst, opcode, 3, |ctx, s| ibfe(ctx, s[0], s[1], s[2])),
        Opcode::Bfi => componentwise(ctx, inst, opcode, 4, |ctx, s| bfi(ctx, s[0], s[1], s[2], s[3])),
        Opcode::Brev => componentwise(ctx, inst, opcode, 1, |ctx, s| ctx.builder().op(V::BITREV_I32, &[s[0]])),
        Opcode::Popc => componentwise(ctx, inst, opcode, 1, |ctx, s| ctx.builder().op(V::POPCOUNT_I32, &[s[0]])),
        Opcode::Umsb => componentwise(ctx, inst, opcode, 1, |ctx, s| msb(ctx, s[0])),
        Opcode::Imsb => componentwise(ctx, inst, opcode, 1, |ctx, s| {
            // The highest bit that differs from the sign bit: UMSB of x ^ (x >>s 31).
            let y = shift_op(ctx, V::RSHIFT_XOR_I32, true, s[0], shift_const(31), s[0]);
            msb(ctx, Src::new(y))
        }),
        Opcode::Lsb => componentwise(ctx, inst, opcode, 1, |ctx, s| {
            // The lowest set bit is the number of leading zeros of the reversed value.
            let r = ctx.builder().op(V::BITREV_I32, &[s[0]]);
            let c = ctx.builder().op(V::CLZ_U32, &[Src::new(r)]);
            ctx.builder().csel(false, Condition::Eq, s[0], Src::konst(0), Src::konst(u32::MAX), Src::new(c))
        }),
        _ => return false,
    }
    true
}

/// `~a`.
fn not(ctx: &mut Ctx, a: Src) -> Value {
    match a.operand.as_const() {
        Some(c) => ctx.builder().konst(!c),
        None => ctx.builder().op(V::LSHIFT_OR_I32, &[Src::konst(0), shift_zero(), a.inverted()]),
    }
}

/// `31 − clz(x)`: the index of the highest set bit, −1 for 0.
fn msb(ctx: &mut Ctx, x: Src) -> Value {
    let c = ctx.builder().op(V::CLZ_U32, &[x]);
    ctx.builder().isub(Src::konst(31), c)
}

/// The kinds of 32-bit shift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Shift {
    Left,
    Logical,
    Arithmetic,
}

/// A shift amount source: the count's low byte (`.b00`), or a constant taken modulo 32.
fn count(s: Src) -> Src {
    match s.operand.as_const() {
        Some(c) => shift_const(c & 31),
        None => byte0(s),
    }
}

/// SHL, USHR, ISHR and the legacy SHR: `src0` shifted by `src1` modulo 32.
pub(super) fn shift(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode, kind: Shift) {
    componentwise(ctx, inst, opcode, 2, |ctx, s| {
        let (op, signed) = match kind {
            Shift::Left => (V::LSHIFT_OR_I32, false),
            Shift::Logical => (V::RSHIFT_OR_I32, false),
            Shift::Arithmetic => (V::RSHIFT_OR_I32, true),
        };
        shift_op(ctx, op, signed, s[0], count(s[1]), Src::konst(0))
    });
}

/// `mask(min(bits, 32))`: `(1 << bits) − 1`, all ones from 32 bits up (2 instructions).
fn width_mask(ctx: &mut Ctx, bits: Src) -> Src {
    if let Some(w) = bits.operand.as_const() {
        return Src::konst(if w >= 32 { u32::MAX } else { (1u32 << w) - 1 });
    }
    let ones = Src::konst(u32::MAX);
    // (~0 << bits) ^ ~0
    let m = shift_op(ctx, V::LSHIFT_XOR_I32, false, ones, byte0(bits), ones);
    Src::new(ctx.builder().csel(false, Condition::Ge, bits, Src::konst(32), ones, Src::new(m)))
}

fn ubfe(ctx: &mut Ctx, v: Src, offset: Src, bits: Src) -> Value {
    let mask = width_mask(ctx, bits);
    shift_op(ctx, V::RSHIFT_AND_I32, false, v, count(offset), mask)
}

fn ibfe(ctx: &mut Ctx, v: Src, offset: Src, bits: Src) -> Value {
    if bits.operand.as_const() == Some(0) {
        return ctx.builder().konst(0);
    }
    let x = Src::new(shift_op(ctx, V::RSHIFT_OR_I32, true, v, count(offset), Src::konst(0)));
    // Sign-extend from bit w − 1: shift left, then arithmetically right, by 32 − w.
    let sext = |ctx: &mut Ctx, k: Src| {
        let y = shift_op(ctx, V::LSHIFT_OR_I32, false, x, k, Src::konst(0));
        shift_op(ctx, V::RSHIFT_OR_I32, true, Src::new(y), k, Src::konst(0))
    };
    match bits.operand.as_const() {
        Some(w) if w >= 32 => x.operand.as_value().expect("a shift result"),
        Some(w) => sext(ctx, shift_const(32 - w)),
        None => {
            let neg = ctx.builder().isub(Src::konst(0), bits);
            let k = ctx.builder().csel(false, Condition::Ge, bits, Src::konst(32), Src::konst(0), Src::new(neg));
            let r = sext(ctx, byte0(Src::new(k)));
            ctx.builder().csel(false, Condition::Eq, bits, Src::konst(0), Src::konst(0), Src::new(r))
        }
    }
}

fn bfi(ctx: &mut Ctx, base: Src, ins: Src, offset: Src, bits: Src) -> Value {
    let width = width_mask(ctx, bits);
    let o = count(offset);
    let mask = match (width.operand.as_const(), offset.operand.as_const()) {
        (Some(m), Some(off)) => Src::konst(m << (off & 31)),
        _ => Src::new(shift_op(ctx, V::LSHIFT_OR_I32, false, width, o, Src::konst(0))),
    };
    let shifted = shift_op(ctx, V::LSHIFT_OR_I32, false, ins, o, Src::konst(0));
    let mut mux = Instr::new(V::MUX_I32);
    let _ = mux.set_modifier("mux", MUX_BIT);
    // (shifted & mask) | (base & ~mask)
    ctx.builder().alu(mux, &[Src::new(shifted), base, mask])
}

/// Index of `bit` in the `mux` enum.
pub(super) const MUX_BIT: u8 = 3;
