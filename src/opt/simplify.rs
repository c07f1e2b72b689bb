//! Algebraic identities, each exact for every value of the other operands (NaNs, signed zeros,
//! denormals and overflow included):
//!
//! * `FMA.f32 a, ±1, c` (either factor) → `FADD.f32 ±a, c`: `a·1` is exact, so both round
//!   `a + c` once; the NaN rules see the same NaN operands; the clamp and flow are kept. A
//!   following `FADD x, −0` is then `mod_fold`'s.
//! * `IADD.u32/s32 x, 0` (either order), `ISUB.u32/s32 x, 0`, `IADD_IMM.i32 x, 0`,
//!   `IMUL.i32/s32 x, 1` (either order) → `copy x`; 32-bit lanes only, where a plain source is
//!   the whole word (saturation cannot trigger: nothing overflows).
//! * `{L,R}SHIFT_{AND,OR,XOR}.i32 x, 0, b` with `b` (after its `.not`) the identity of the
//!   combine — all ones for AND, zero for OR and XOR — and no `.not_result` → `copy x`.
//! * `CSEL.{u32,s32,f32} a, b, x, x` (both results the same plain operand) → `copy x`, whatever
//!   the comparison gives (`select` leaves these when both arms of an `if` computed equal
//!   constants).
//! * A 32-bit shift-and-combine with constant operands that reads one byte or half-word of a
//!   value → the conversion reading it: `(x >> 8k) & 0xFF` → `U8_TO_U32 x.bk`, `x & 0xFFFF`
//!   and `x >> 16` → `U16_TO_U32` of the half, arithmetic `x >> 24` / `x >> 16` →
//!   `S8_TO_S32` / `S16_TO_S32`, `x << 16` → `MKVEC.v2i16 #0, x.h0` (see [`extraction`]).
//! * `U32_TO_F32`/`S32_TO_F32` of such a conversion → the byte or half-word converted straight
//!   to binary32 (`U8_TO_F32 x.bk`, …; see [`conversion_of_conversion`]).
//! * A byte or half-word conversion whose source byte or half-word is one of another value
//!   (through a constant shift by whole bytes, a `MKVEC.v2i16` or the low bytes of a byte or
//!   half-word conversion) reads the other value's part: `U8_TO_F32 (x >> 8).b0` →
//!   `U8_TO_F32 x.b1`, `U8_TO_U32 (U16_TO_U32 x.h1).b0` → `U8_TO_U32 x.b2` (see
//!   [`read_through`]).
//!
//! The last two rules read past a source's definition (the run then reports work for `dce`).
//!
//! `x + (+0)` and `x · 0` are not identities (`−0 + 0 = +0`, `∞ · 0 = NaN`) and stay. An
//! identity's instruction becomes a `copy` of the kept operand, which `copy_prop` forwards; a
//! byte or half-word read is rewritten in place. One visit per instruction, where the rules
//! apply in turn to what the previous one made (a bounded chain): linear.

use super::{Outcome, facts};
use crate::ir::builder::LANE_B00;
use crate::ir::{Inst, InstKind, Operand, Shader, Src, Value, ValueInfo};
use crate::valhall::Instr;
use crate::valhall::Opcode;
use crate::valhall::tables::Clamp;

const ONE: u32 = 0x3F80_0000;

/// The constant a source reads, if it is a constant with no modifiers.
fn plain_const(src: &Src) -> Option<u32> {
    if src.is_plain() { src.operand.as_const() } else { None }
}

/// The binary32 value a float source reads, if it is a constant without a widen or swizzle.
fn float_const(src: &Src) -> Option<u32> {
    let c = src.operand.as_const()?;
    if src.not || src.swizzle != 0 || src.widen != 0 || src.lane != 0 {
        return None;
    }
    let c = if src.abs { c & 0x7FFF_FFFF } else { c };
    Some(if src.neg { c ^ 0x8000_0000 } else { c })
}

/// `copy src` for a plain source.
fn copy_of(inst: &Inst, src: Src) -> Option<Inst> {
    if !src.is_plain() {
        return None;
    }
    let mut srcs = [Src::NONE; 4];
    srcs[0] = src;
    Some(Inst { dests: inst.dests, srcs, ..Inst::pseudo(InstKind::Copy) })
}

/// `FMA.f32 a, ±1, c` → `FADD.f32 ±a, c`.
fn fma_by_one(inst: &Inst) -> Option<Inst> {
    let [a, b, c, _] = &inst.srcs;
    let (other, one) = match (float_const(a), float_const(b)) {
        (_, Some(k)) if k & 0x7FFF_FFFF == ONE => (*a, k),
        (Some(k), _) if k & 0x7FFF_FFFF == ONE => (*b, k),
        _ => return None,
    };
    let other = if one == ONE { other } else { other.negated() };
    let mut mach = Instr::new(Opcode::FADD_F32);
    mach.flow = inst.mach.flow;
    mach.set_clamp(inst.mach.clamp().unwrap_or(Clamp::None)).ok()?;
    Some(Inst { dests: inst.dests, srcs: [other, *c, Src::NONE, Src::NONE], ..Inst::machine(mach) })
}

/// The word a shift-and-combine's third source (the combine operand) reads, if it is a constant
/// read whole, with its `.not` applied.
fn combine_const(src: &Src) -> Option<u32> {
    let c = src.operand.as_const()?;
    if src.neg || src.abs || src.swizzle != 0 || src.widen != 0 || src.lane != 0 {
        return None;
    }
    Some(if src.not { !c } else { c })
}

/// `inst` as `opcode` on `srcs`, with the same results and flow.
fn rewritten(inst: &Inst, opcode: Opcode, srcs: [Src; 4]) -> Inst {
    let mut mach = Instr::new(opcode);
    mach.flow = inst.mach.flow;
    Inst { dests: inst.dests, srcs, ..Inst::machine(mach) }
}

/// The identity of a shift-and-combine with a zero shift, as `copy x`.
fn shift_identity(inst: &Inst) -> Option<Inst> {
    // The operands first: looking up the modifier by name costs more, and most shifts fail here.
    if inst.srcs[1].operand != Operand::Const(0) {
        return None;
    }
    let b_value = combine_const(&inst.srcs[2])?;
    if inst.mach.flag("not_result") == Some(true) {
        return None;
    }
    let and = matches!(inst.mach.opcode, Opcode::LSHIFT_AND_I32 | Opcode::RSHIFT_AND_I32);
    let identity = if and { u32::MAX } else { 0 };
    if b_value != identity {
        return None;
    }
    copy_of(inst, inst.srcs[0])
}

/// The shift amount of a shift's second source when it is a constant read as `#k.b00` (the
/// lowering's form: the amount is byte 0).
fn shift_amount(src: &Src) -> Option<u32> {
    let k = src.operand.as_const()?;
    let plain_but_lanes = !src.neg && !src.abs && !src.not && src.swizzle == 0 && src.lane == 0;
    (plain_but_lanes && src.widen == LANE_B00).then_some(k & 0xFF)
}

/// A shift-and-combine with constant operands that reads one byte or half-word of its first
/// operand, as the conversion that reads it directly: `U8_TO_U32`/`S8_TO_S32` with a byte lane,
/// `U16_TO_U32`/`S16_TO_S32` with a half-word swizzle, and `x << 16` as `MKVEC.v2i16 #0, x.h0`.
/// Shifts run on the SFU pipe, conversions on the CVT pipe at four times its rate, and a mask
/// of 0xFF or 0xFFFF (which no immediate-table entry holds) needs no register. Mesa's NIR does
/// the same (`extract_u8`/`extract_u16`).
fn extraction(inst: &Inst) -> Option<Inst> {
    use Opcode::*;
    let [x, amount, combine, _] = &inst.srcs;
    if !matches!(x.operand, Operand::Value(_)) || !x.is_plain() {
        return None;
    }
    let s = shift_amount(amount)?;
    let c = combine_const(combine)?;
    let op = inst.mach.opcode;
    // `(x shift s) & mask`: OR and XOR with zero keep every bit.
    let mask = match op {
        LSHIFT_AND_I32 | RSHIFT_AND_I32 => c,
        LSHIFT_OR_I32 | LSHIFT_XOR_I32 | RSHIFT_OR_I32 | RSHIFT_XOR_I32 if c == 0 => u32::MAX,
        _ => return None,
    };
    if inst.mach.flag("not_result") == Some(true) {
        return None;
    }
    let left = matches!(op, LSHIFT_AND_I32 | LSHIFT_OR_I32 | LSHIFT_XOR_I32);
    let (opcode, srcs) = match (left, s) {
        (true, 0) => byte_or_half(*x, 0, mask, false)?,
        (true, 16) if mask | 0xFFFF == u32::MAX => (MKVEC_V2I16, [Src::konst(0), x.swizzle(0)]),
        (true, _) => return None,
        (false, _) => {
            let signed = inst.mach.flag("signed") == Some(true);
            // A logical shift clears the bits it shifts in: they are masked either way.
            let mask = if signed || s >= 32 { mask } else { mask & (u32::MAX >> s) };
            byte_or_half(*x, s, mask, signed)?
        }
    };
    Some(rewritten(inst, opcode, [srcs[0], srcs[1], Src::NONE, Src::NONE]))
}

/// `(x >> s) & mask` (arithmetic shift when `signed`) as a conversion of one byte or half-word
/// of `x`, with its sources.
fn byte_or_half(x: Src, s: u32, mask: u32, signed: bool) -> Option<(Opcode, [Src; 2])> {
    use Opcode::*;
    let (opcode, src) = match (s, mask) {
        (0 | 8 | 16 | 24, 0xFF) => (U8_TO_U32, x.lane((s / 8) as u8)),
        (0 | 16, 0xFFFF) => (U16_TO_U32, x.swizzle((s / 16) as u8)),
        // The byte or half-word the shift leaves, sign- or zero-extended by the shift.
        (24, u32::MAX) => (if signed { S8_TO_S32 } else { U8_TO_U32 }, x.lane(3)),
        (16, u32::MAX) => (if signed { S16_TO_S32 } else { U16_TO_U32 }, x.swizzle(1)),
        _ => return None,
    };
    Some((opcode, [src, Src::NONE]))
}

/// The live machine instruction without flow bits that defines `v`: the only definitions a rule
/// may read past (a rule that reads past one with flow bits would lose them for the reader).
fn definition<'a>(v: Value, insts: &'a [Inst], values: &[ValueInfo]) -> Option<&'a Inst> {
    let def = &insts[values[v.index()].def?.index()];
    (!def.dead && def.is_machine() && def.mach.flow == 0).then_some(def)
}

/// `U32_TO_F32`/`S32_TO_F32` of a byte or half-word conversion, as the conversion of that byte
/// or half-word straight to binary32 (`U8_TO_F32`, `S8_TO_F32`, `U16_TO_F32`, `S16_TO_F32`),
/// as Mesa's NIR does (`u2f32` of `extract_u8`): both are exact, whatever the rounding mode.
/// A zero-extended value converts alike signed or unsigned; a sign-extended one only signed.
/// The byte conversion is left for `dce` if nothing else reads it.
fn conversion_of_conversion(inst: &Inst, insts: &[Inst], values: &[ValueInfo]) -> Option<Inst> {
    use Opcode::*;
    let x = inst.srcs[0];
    let Operand::Value(v) = x.operand else { return None };
    if !x.is_plain() {
        return None;
    }
    let def = definition(v, insts, values)?;
    let signed = inst.mach.opcode == S32_TO_F32;
    let opcode = match def.mach.opcode {
        U8_TO_U32 => U8_TO_F32,
        U16_TO_U32 => U16_TO_F32,
        S8_TO_S32 if signed => S8_TO_F32,
        S16_TO_S32 if signed => S16_TO_F32,
        _ => return None,
    };
    Some(rewritten(inst, opcode, [def.srcs[0], Src::NONE, Src::NONE, Src::NONE]))
}

/// The value a source reads with at most a part selected (lane or swizzle): no sign, bitwise
/// or widen modifier.
fn selected_value(src: &Src) -> Option<Value> {
    let Operand::Value(v) = src.operand else { return None };
    (!src.neg && !src.abs && !src.not && src.widen == 0).then_some(v)
}

/// How a conversion reads its source: one byte (`U8_TO_*`, `S8_TO_*`: the lane field) or one
/// half-word (`U16_TO_*`, `S16_TO_*`: the swizzle field). A part is rewritten as the byte lane
/// or as the swizzle 0 (low half) or 1 (high half).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Byte(u8),
    Half(u8),
}

impl Part {
    /// The part of its source a conversion reads, if the source is a value read with only that
    /// selection.
    fn read_by(inst: &Inst) -> Option<(Part, Value)> {
        use Opcode::*;
        let src = &inst.srcs[0];
        let v = selected_value(src)?;
        let part = match inst.mach.opcode {
            U8_TO_U32 | S8_TO_S32 | U8_TO_F32 | S8_TO_F32 if src.swizzle == 0 => Part::Byte(src.lane),
            // (A 16-bit swizzle selects lane 0's half: h00 and h01 the low one, h10 and h11
            // the high one.)
            U16_TO_U32 | S16_TO_S32 | U16_TO_F32 | S16_TO_F32 if src.lane == 0 => Part::Half(src.swizzle & 1),
            _ => return None,
        };
        Some((part, v))
    }

    /// Its first byte and its width in bytes.
    fn bytes(self) -> (u32, u32) {
        match self {
            Part::Byte(k) => (u32::from(k), 1),
            Part::Half(h) => (2 * u32::from(h), 2),
        }
    }

    /// The part `bytes` bytes up (down when negative), if it is one.
    fn moved(self, bytes: i32) -> Option<Part> {
        let (first, width) = self.bytes();
        let first = u32::try_from(first as i32 + bytes).ok()?;
        match self {
            Part::Byte(_) if first <= 3 => Some(Part::Byte(first as u8)),
            Part::Half(_) if first == 0 || first == 2 => Some(Part::Half((first / width) as u8)),
            _ => None,
        }
    }

    /// `x` read as this part.
    fn of(self, x: Src) -> Src {
        match self {
            Part::Byte(k) => x.lane(k),
            Part::Half(h) => x.swizzle(h),
        }
    }
}

/// The source that reads `part` of the result of `def` directly, if `part` of that result is a
/// part of one of its operands: a constant shift by whole bytes that keeps the part inside the
/// word, combined with a constant whose bytes under the part leave it as it is (zero for OR and
/// XOR, all ones for AND); a half-word that a `MKVEC.v2i16` took from a value; or the low bytes of a
/// byte or half-word conversion, which are the byte or half-word it converted (zero- or
/// sign-extension only writes above them).
fn part_of_operand(def: &Inst, part: Part) -> Option<Src> {
    use Opcode::*;
    let op = def.mach.opcode;
    match op {
        LSHIFT_AND_I32 | LSHIFT_OR_I32 | LSHIFT_XOR_I32 | RSHIFT_AND_I32 | RSHIFT_OR_I32 | RSHIFT_XOR_I32 => {
            let [x, amount, combine, _] = &def.srcs;
            if !matches!(x.operand, Operand::Value(_)) || !x.is_plain() {
                return None;
            }
            let s = shift_amount(amount)?;
            let c = combine_const(combine)?;
            if s % 8 != 0 || s >= 32 || def.mach.flag("not_result") == Some(true) {
                return None;
            }
            let (first, width) = part.bytes();
            let under = (c >> (8 * first)) & (u32::MAX >> (32 - 8 * width));
            let neutral = if matches!(op, LSHIFT_AND_I32 | RSHIFT_AND_I32) { u32::MAX >> (32 - 8 * width) } else { 0 };
            if under != neutral {
                return None;
            }
            let bytes = (s / 8) as i32;
            let left = matches!(op, LSHIFT_AND_I32 | LSHIFT_OR_I32 | LSHIFT_XOR_I32);
            Some(part.moved(if left { -bytes } else { bytes })?.of(*x))
        }
        MKVEC_V2I16 => {
            // Half h of the result is source h's selected half.
            let (first, _) = part.bytes();
            let src = def.srcs[(first / 2) as usize];
            let v = selected_value(&src)?;
            // (Only the swizzles the rules write; h01 and h11 are left alone.)
            let half = src.swizzle;
            if src.lane != 0 || half > 1 {
                return None;
            }
            let x = Src::new(v);
            match part {
                Part::Half(_) => Some(x.swizzle(half)),
                Part::Byte(k) => Some(x.lane(2 * half + k % 2)),
            }
        }
        U8_TO_U32 | S8_TO_S32 | U16_TO_U32 | S16_TO_S32 => {
            let (inner, _) = Part::read_by(def)?;
            let x = Src::new(def.srcs[0].operand);
            match (inner, part) {
                (Part::Byte(j), Part::Byte(0)) => Some(x.lane(j)),
                (Part::Half(j), Part::Half(0)) => Some(x.swizzle(j)),
                (Part::Half(j), Part::Byte(k)) if k <= 1 => Some(x.lane(2 * j + k)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A conversion of one byte or half-word of a value that is a byte or half-word of another
/// value (see [`part_of_operand`]), as the same conversion of the other value's part: the
/// intermediate instruction is left for `dce` if nothing else reads it.
fn read_through(inst: &Inst, insts: &[Inst], values: &[ValueInfo]) -> Option<Inst> {
    let (part, v) = Part::read_by(inst)?;
    let src = part_of_operand(definition(v, insts, values)?, part)?;
    Some(rewritten(inst, inst.mach.opcode, [src, Src::NONE, Src::NONE, Src::NONE]))
}

/// Whether `new` no longer reads a value `old` read (a rule that reads past a source leaves
/// that source's definition with a reader fewer, perhaps none).
fn drops_a_read(old: &Inst, new: &Inst) -> bool {
    let reads = |inst: &Inst, v: Operand| inst.srcs.iter().any(|s| s.operand == v);
    old.srcs.iter().any(|s| matches!(s.operand, Operand::Value(_)) && !reads(new, s.operand))
}

/// Whether [`simplify`] has a rule for the opcode (its `facts::SIMPLIFIABLE` bit).
pub(super) fn has_identities(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        FMA_F32
            | IADD_U32
            | IADD_S32
            | ISUB_U32
            | ISUB_S32
            | IADD_IMM_I32
            | IMUL_I32
            | IMUL_S32
            | LSHIFT_AND_I32
            | LSHIFT_OR_I32
            | LSHIFT_XOR_I32
            | RSHIFT_AND_I32
            | RSHIFT_OR_I32
            | RSHIFT_XOR_I32
            | CSEL_U32
            | CSEL_S32
            | CSEL_F32
            | U32_TO_F32
            | S32_TO_F32
            | U8_TO_U32
            | S8_TO_S32
            | U8_TO_F32
            | S8_TO_F32
            | U16_TO_U32
            | S16_TO_S32
            | U16_TO_F32
            | S16_TO_F32
    )
}

/// The simplified form of an instruction, if one applies (only opcodes of [`has_identities`]);
/// `insts` and `values` are the shader's, for rules that look at a source's definition.
fn simplify(inst: &Inst, insts: &[Inst], values: &[ValueInfo]) -> Option<Inst> {
    use Opcode::*;
    let [a, b, _, _] = &inst.srcs;
    let konst = |s: &Src, k: u32| plain_const(s) == Some(k);
    match inst.mach.opcode {
        FMA_F32 => fma_by_one(inst),
        IADD_U32 | IADD_S32 if konst(b, 0) => copy_of(inst, *a),
        IADD_U32 | IADD_S32 if konst(a, 0) => copy_of(inst, *b),
        ISUB_U32 | ISUB_S32 if konst(b, 0) => copy_of(inst, *a),
        IADD_IMM_I32 if inst.mach.imm("constant") == Some(0) => copy_of(inst, *a),
        IMUL_I32 | IMUL_S32 if konst(b, 1) => copy_of(inst, *a),
        IMUL_I32 | IMUL_S32 if konst(a, 1) => copy_of(inst, *b),
        LSHIFT_AND_I32 | LSHIFT_OR_I32 | LSHIFT_XOR_I32 | RSHIFT_AND_I32 | RSHIFT_OR_I32 | RSHIFT_XOR_I32 => {
            shift_identity(inst).or_else(|| extraction(inst))
        }
        CSEL_U32 | CSEL_S32 | CSEL_F32 if inst.srcs[2] == inst.srcs[3] => copy_of(inst, inst.srcs[2]),
        U32_TO_F32 | S32_TO_F32 => conversion_of_conversion(inst, insts, values),
        U8_TO_U32 | S8_TO_S32 | U8_TO_F32 | S8_TO_F32 | U16_TO_U32 | S16_TO_S32 | U16_TO_F32 | S16_TO_F32 => {
            read_through(inst, insts, values)
        }
        _ => None,
    }
}

/// Rules applied after the first in one visit (each reads one definition further up).
const MAX_CHAIN: usize = 3;

pub fn run(shader: &mut Shader) -> bool {
    run_reporting(shader).changed
}

/// [`run`], also saying whether an instruction became a copy or stopped reading a value that
/// may now be dead, and whether a second run would find nothing (`settled`).
pub fn run_reporting(shader: &mut Shader) -> Outcome {
    let facts = facts::table();
    let mut outcome = Outcome { settled: true, ..Outcome::default() };
    let Shader { blocks, insts, values, .. } = shader;
    for &id in blocks.iter().flat_map(|b| &b.insts) {
        let inst = &insts[id.index()];
        if inst.dead || inst.dests.len() != 1 {
            continue;
        }
        // Most instructions have no identity: one table lookup skips them. The opcode list
        // behind the bit is kept beside `simplify`'s rules; debug builds check they agree.
        if facts::of(facts, inst) & facts::SIMPLIFIABLE == 0 {
            debug_assert!(
                simplify(inst, insts, values).is_none(),
                "{} has a rule but no SIMPLIFIABLE bit",
                inst.mach.info().name
            );
            continue;
        }
        if let Some(mut new) = simplify(inst, insts, values) {
            // What a rule made can be another's (a byte read of a shift becomes a conversion
            // that reads through the shift's operand): a few more steps, each reading further
            // up the chain of definitions.
            let mut steps = 0;
            while let Some(next) = simplify(&new, insts, values) {
                if steps == MAX_CHAIN {
                    // (Left for the next run, which the scheduler is told to make.)
                    outcome.settled = false;
                    break;
                }
                new = next;
                steps += 1;
            }
            // A copy cannot carry flow bits; such instructions stay.
            if new.kind == InstKind::Copy && inst.mach.flow != 0 {
                continue;
            }
            outcome.copies_made |= new.kind == InstKind::Copy;
            outcome.reads_dropped |= drops_a_read(inst, &new);
            insts[id.index()] = new;
            outcome.changed = true;
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    const HEAD: &str = "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = preload r61\n";
    const TAIL: &str = "    STORE.i32.slot0 @%9, %0:%0, offset:0\n    end\n";

    fn check(body: &str, expected: &str) {
        let mut s = parse(&format!("{HEAD}{body}{TAIL}")).unwrap();
        run(&mut s);
        crate::ir::verify::verify(&s).unwrap();
        assert_eq!(print(&s), format!("{HEAD}{expected}{TAIL}"), "{body}");
    }

    #[test]
    fn multiplication_by_one_becomes_an_add() {
        check("    %9 = FMA.f32.clamp_0_1 %0.abs, #0x3F800000, %1\n", "    %9 = FADD.f32.clamp_0_1 %0.abs, %1\n");
        check("    %9 = FMA.f32 #0x3F800000.neg, %0, #0x80000000\n", "    %9 = FADD.f32 %0.neg, #0x80000000\n");
        check("    %9 = FMA.f32 %0, #0xBF800000.abs, %1\n", "    %9 = FADD.f32 %0, %1\n");
    }

    #[test]
    fn integer_identities_become_copies() {
        for body in [
            "    %9 = IADD.s32 %0, #0x0\n",
            "    %9 = IADD.u32 #0x0, %0\n",
            "    %9 = ISUB.s32 %0, #0x0\n",
            "    %9 = IADD_IMM.i32 %0, #0x0\n",
            "    %9 = IMUL.i32 #0x1, %0\n",
            "    %9 = LSHIFT_AND.i32 %0, #0x0.b00, #0xFFFFFFFF\n",
            "    %9 = LSHIFT_OR.i32 %0, #0x0.b00, #0x0\n",
            "    %9 = RSHIFT_XOR.i32 %0, #0x0.b00, #0xFFFFFFFF.not\n",
        ] {
            check(body, "    %9 = copy %0\n");
        }
    }

    #[test]
    fn selects_of_one_operand_become_copies() {
        check("    %9 = CSEL.u32.eq %0, #0x0, #0x3F800000, #0x3F800000\n", "    %9 = copy #0x3F800000\n");
        check("    %9 = CSEL.f32.lt %0, %1, %1, %1\n", "    %9 = copy %1\n");
    }

    /// The word an instruction of `body` (one line defining %9 from %0) computes for `x` in %0,
    /// with the emulator's arithmetic.
    fn evaluate(inst: &Inst, x: u32) -> u32 {
        let mut mach = inst.mach.instr();
        let mut words = [0; 4];
        for (k, src) in inst.sources().iter().enumerate() {
            mach.srcs[k] = src.to_machine(crate::valhall::Base::Uniform(0));
            words[k] = match src.operand {
                Operand::Const(c) => c,
                _ => x,
            };
        }
        crate::emu::ConstEvaluator::default().eval(&mach, words).expect("an evaluable ALU instruction")
    }

    #[test]
    fn byte_and_half_word_reads_become_conversions() {
        for (body, expected) in [
            ("LSHIFT_AND.i32 %0, #0x0.b00, #0xFF", "U8_TO_U32 %0.b0"),
            ("RSHIFT_AND.i32 %0, #0x8.b00, #0xFF", "U8_TO_U32 %0.b1"),
            ("RSHIFT_AND.i32.signed %0, #0x10.b00, #0xFF", "U8_TO_U32 %0.b2"),
            ("RSHIFT_OR.i32 %0, #0x18.b00, #0x0", "U8_TO_U32 %0.b3"),
            ("RSHIFT_AND.i32 %0, #0x18.b00, #0xFFFF", "U8_TO_U32 %0.b3"),
            ("RSHIFT_XOR.i32.signed %0, #0x18.b00, #0x0", "S8_TO_S32 %0.b3"),
            ("LSHIFT_AND.i32 %0, #0x0.b00, #0xFFFF0000.not", "U16_TO_U32 %0.h00"),
            ("RSHIFT_OR.i32 %0, #0x10.b00, #0x0", "U16_TO_U32 %0.h10"),
            ("RSHIFT_AND.i32.signed %0, #0x10.b00, #0xFFFF", "U16_TO_U32 %0.h10"),
            ("RSHIFT_OR.i32.signed %0, #0x10.b00, #0x0", "S16_TO_S32 %0.h10"),
            ("LSHIFT_OR.i32 %0, #0x10.b00, #0x0", "MKVEC.v2i16 #0x0.h00, %0.h00"),
            ("LSHIFT_AND.i32 %0, #0x10.b00, #0xFFFF0000", "MKVEC.v2i16 #0x0.h00, %0.h00"),
        ] {
            let text = |line: &str| format!("{HEAD}    %9 = {line}\n{TAIL}");
            let before = parse(&text(body)).unwrap();
            let mut after = parse(&text(body)).unwrap();
            run(&mut after);
            crate::ir::verify::verify(&after).unwrap();
            assert_eq!(print(&after), text(expected), "{body}");
            // The same word for every input (the rewrite is exact, not only for these values).
            let (old, new) = (&before.insts[2], &after.insts[2]);
            for k in 0..4096u32 {
                let x = k.wrapping_mul(0x9E37_79B9) ^ (k << 7);
                assert_eq!(evaluate(old, x), evaluate(new, x), "{body} on {x:#x}");
            }
        }
    }

    /// `%8 = producer` and `%9 = consumer`: one run rewrites the consumer to `expected`, which
    /// no longer reads %8, and computes what the pair did for every input (4,096 words through
    /// the emulator's arithmetic).
    fn assert_reads_through(producer: &str, consumer: &str, expected: &str) {
        let text = |last: &str| format!("{HEAD}    %8 = {producer}\n    %9 = {last}\n{TAIL}");
        let before = parse(&text(consumer)).unwrap();
        let mut after = before.clone();
        assert!(run_reporting(&mut after).reads_dropped, "{producer}; {consumer}");
        crate::ir::verify::verify(&after).unwrap();
        assert_eq!(print(&after), text(expected), "{producer}; {consumer}");
        let (def, old, new) = (&before.insts[2], &before.insts[3], &after.insts[3]);
        for k in 0..4096u32 {
            let x = k.wrapping_mul(0x9E37_79B9) ^ (k << 7);
            assert_eq!(evaluate(old, evaluate(def, x)), evaluate(new, x), "{producer}; {consumer} on {x:#x}");
        }
    }

    #[test]
    fn float_conversions_of_byte_and_half_word_conversions_read_the_byte_or_half_word() {
        for (producer, consumer, expected) in [
            ("U8_TO_U32 %0.b2", "U32_TO_F32", "U8_TO_F32 %0.b2"),
            ("U8_TO_U32 %0.b3", "S32_TO_F32", "U8_TO_F32 %0.b3"),
            ("U16_TO_U32 %0.h10", "U32_TO_F32", "U16_TO_F32 %0.h10"),
            ("S8_TO_S32 %0.b1", "S32_TO_F32", "S8_TO_F32 %0.b1"),
            ("S16_TO_S32 %0.h00", "S32_TO_F32", "S16_TO_F32 %0.h00"),
        ] {
            assert_reads_through(producer, &format!("{consumer} %8"), expected);
        }
        // A sign-extended value converted as unsigned is not the byte's value.
        let body = "    %8 = S8_TO_S32 %0.b1\n    %9 = U32_TO_F32 %8\n";
        check(body, body);
    }

    #[test]
    fn byte_and_half_word_conversions_read_through_shifts_and_conversions() {
        for (producer, consumer, expected) in [
            ("RSHIFT_OR.i32 %0, #0x8.b00, #0x0", "U8_TO_F32 %8.b0", "U8_TO_F32 %0.b1"),
            ("RSHIFT_XOR.i32.signed %0, #0x8.b00, #0x0", "U8_TO_U32 %8.b2", "U8_TO_U32 %0.b3"),
            ("RSHIFT_AND.i32 %0, #0x8.b00, #0xFF00", "S8_TO_S32 %8.b1", "S8_TO_S32 %0.b2"),
            ("RSHIFT_XOR.i32 %0, #0x10.b00, #0xFF0000", "U16_TO_F32 %8.h00", "U16_TO_F32 %0.h10"),
            ("LSHIFT_OR.i32 %0, #0x8.b00, #0xFF", "U8_TO_U32 %8.b2", "U8_TO_U32 %0.b1"),
            ("LSHIFT_XOR.i32 %0, #0x10.b00, #0xFF", "S16_TO_S32 %8.h10", "S16_TO_S32 %0.h00"),
            ("U16_TO_U32 %0.h10", "U8_TO_F32 %8.b1", "U8_TO_F32 %0.b3"),
            ("S16_TO_S32 %0.h00", "S16_TO_F32 %8.h00", "S16_TO_F32 %0.h00"),
            ("S8_TO_S32 %0.b2", "U8_TO_U32 %8.b0", "U8_TO_U32 %0.b2"),
            ("MKVEC.v2i16 #0x0.h00, %0.h00", "S16_TO_F32 %8.h10", "S16_TO_F32 %0.h00"),
            ("MKVEC.v2i16 %0.h10, %1.h00", "U16_TO_U32 %8.h00", "U16_TO_U32 %0.h10"),
            ("MKVEC.v2i16 %1.h00, %0.h10", "U8_TO_U32 %8.b3", "U8_TO_U32 %0.b3"),
            ("MKVEC.v2i16 %0.h10, %1.h00", "S8_TO_S32 %8.b0", "S8_TO_S32 %0.b2"),
            ("MKVEC.v2i16 %1.h00, %0.h10", "U16_TO_F32 %8.h11", "U16_TO_F32 %0.h10"),
            ("RSHIFT_OR.i32 %0, #0x10.b00, #0xFF0000", "S16_TO_S32 %8.h01", "S16_TO_S32 %0.h10"),
        ] {
            assert_reads_through(producer, consumer, expected);
        }
        for (producer, consumer) in [
            // A shift by part of a byte; a byte shifted out of the word; an odd number of bytes
            // under a half-word read; a combine that changes the byte; an inverted result; the
            // zero- or sign-extended half of a conversion; a computed amount.
            ("RSHIFT_OR.i32 %0, #0x4.b00, #0x0", "U8_TO_U32 %8.b0"),
            ("RSHIFT_OR.i32 %0, #0x10.b00, #0x0", "U8_TO_U32 %8.b2"),
            ("LSHIFT_OR.i32 %0, #0x8.b00, #0x0", "U8_TO_U32 %8.b0"),
            ("RSHIFT_OR.i32 %0, #0x8.b00, #0x0", "U16_TO_U32 %8.h00"),
            ("RSHIFT_AND.i32 %0, #0x8.b00, #0x7F", "U8_TO_U32 %8.b0"),
            ("RSHIFT_OR.i32 %0, #0x8.b00, #0x100", "U8_TO_U32 %8.b1"),
            ("RSHIFT_OR.i32.not_result %0, #0x8.b00, #0x0", "U8_TO_U32 %8.b0"),
            ("U16_TO_U32 %0.h10", "U8_TO_U32 %8.b2"),
            ("S8_TO_S32 %0.b1", "U8_TO_U32 %8.b1"),
            ("U8_TO_U32 %0.b1", "U16_TO_U32 %8.h00"),
            ("RSHIFT_OR.i32 %0, %1.b00, #0x0", "U8_TO_U32 %8.b0"),
            // A constant half of a MKVEC.
            ("MKVEC.v2i16 #0x0.h00, %0.h00", "U16_TO_U32 %8.h00"),
        ] {
            // (The producer may change by another rule; the conversion must not.)
            let mut s = parse(&format!("{HEAD}    %8 = {producer}\n    %9 = {consumer}\n{TAIL}")).unwrap();
            run(&mut s);
            let out = print(&s);
            assert!(out.contains(&format!("    %9 = {consumer}\n")), "{producer}; {consumer}: {out}");
        }
    }

    /// The rules apply to what another made in the same visit: an `AND` of a shift with 0xFF
    /// becomes a byte conversion of the shift, then of the shifted value, and the float
    /// conversion of it reads that byte.
    #[test]
    fn rules_chain_within_one_run() {
        let mut s = parse(&format!(
            "{HEAD}    %7 = RSHIFT_OR.i32 %0, #0x8.b00, #0x0\n    %8 = LSHIFT_AND.i32 %7, #0x0.b00, #0xFF\n    %9 = U32_TO_F32 %8\n{TAIL}"
        ))
        .unwrap();
        assert!(run_reporting(&mut s).reads_dropped);
        assert!(super::super::dce::run(&mut s));
        let out = print(&s);
        assert!(out.contains("    %0 = preload r60\n    %9 = U8_TO_F32 %0.b1\n    STORE"), "{out}");
    }

    /// A chain of byte reads longer than one visit follows is finished by a later run, which the
    /// run asks for; the optimiser's debug check of skipped passes holds.
    #[test]
    fn long_chains_finish_in_a_later_run() {
        let body = "    %3 = LSHIFT_OR.i32 %0, #0x8.b00, #0x0\n    %4 = RSHIFT_OR.i32 %3, #0x8.b00, #0x0\n    %5 = LSHIFT_OR.i32 %4, #0x8.b00, #0x0\n    %6 = RSHIFT_OR.i32 %5, #0x8.b00, #0x0\n    %7 = LSHIFT_OR.i32 %6, #0x8.b00, #0x0\n    %9 = U8_TO_U32 %7.b1\n";
        let mut s = parse(&format!("{HEAD}{body}{TAIL}")).unwrap();
        let outcome = run_reporting(&mut s);
        assert!(outcome.changed && !outcome.settled);
        assert!(print(&s).contains("%9 = U8_TO_U32 %3.b1\n"), "{}", print(&s));
        assert!(run_reporting(&mut s).settled);
        assert!(print(&s).contains("%9 = U8_TO_U32 %0.b0\n"), "{}", print(&s));
        let mut s = parse(&format!("{HEAD}{body}{TAIL}")).unwrap();
        super::super::optimize(&mut s, &super::super::Options::default());
        let out = print(&s);
        assert!(out.contains("U8_TO_U32 %0.b0\n") && !out.contains("SHIFT"), "{out}");
    }

    #[test]
    fn non_identities_stay() {
        for body in [
            // −0 + (+0) = +0; ∞ · 0 = NaN; a half-word read is not the whole word.
            "    %9 = FADD.f32 %0, #0x0\n",
            "    %9 = FMA.f32 %0, #0x0, #0x80000000\n",
            "    %9 = FMA.f32 %0, #0x3F800000.h1, %1\n",
            "    %9 = IADD.s32 %0.h1, #0x0\n",
            "    %9 = IADD.v2s16 %0, #0x0\n",
            "    %9 = LSHIFT_OR.i32 %0, #0x1.b00, #0x0\n",
            "    %9 = LSHIFT_AND.i32 %0, #0x0.b00, #0x0\n",
            "    %9 = LSHIFT_OR.i32.not_result %0, #0x0.b00, #0x0\n",
            "    %9 = CSEL.u32.eq %0, #0x0, %1, %0\n",
            // Not one whole byte or half-word, a computed amount, an inverted result, a left
            // shift other than by 16, a narrower mask after a left shift.
            "    %9 = RSHIFT_AND.i32 %0, #0x8.b00, #0xFFFF\n",
            "    %9 = RSHIFT_AND.i32 %0, #0x4.b00, #0xFF\n",
            "    %9 = RSHIFT_AND.i32 %0, #0x8.b00, #0x7F\n",
            "    %9 = RSHIFT_OR.i32.signed %0, #0x8.b00, #0x0\n",
            "    %9 = RSHIFT_OR.i32 %0, %1.b00, #0x0\n",
            "    %9 = RSHIFT_OR.i32.not_result %0, #0x18.b00, #0x0\n",
            "    %9 = LSHIFT_OR.i32 %0, #0x18.b00, #0x0\n",
            "    %9 = LSHIFT_AND.i32 %0, #0x10.b00, #0xFF0000\n",
            "    %9 = LSHIFT_AND.i32 %0.h1, #0x0.b00, #0xFF\n",
        ] {
            check(body, body);
        }
    }
}
