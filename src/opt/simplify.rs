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
//!
//! `x + (+0)` and `x · 0` are not identities (`−0 + 0 = +0`, `∞ · 0 = NaN`) and stay. The
//! replaced instruction becomes a `copy` of the kept operand, which `copy_prop` forwards. One
//! visit per instruction: linear.

use super::{Outcome, facts};
use crate::ir::{Inst, InstKind, Operand, Shader, Src};
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

/// The identity of a shift-and-combine with a zero shift, as `copy x`.
fn shift_identity(inst: &Inst) -> Option<Inst> {
    // The operands first: looking up the modifier by name costs more, and most shifts fail here.
    if inst.srcs[1].operand != Operand::Const(0) {
        return None;
    }
    let b = inst.srcs[2];
    let b_value = b.operand.as_const()?;
    if b.neg || b.abs || b.swizzle != 0 || b.widen != 0 || b.lane != 0 {
        return None;
    }
    if inst.mach.flag("not_result") == Some(true) {
        return None;
    }
    let b_value = if b.not { !b_value } else { b_value };
    let and = matches!(inst.mach.opcode, Opcode::LSHIFT_AND_I32 | Opcode::RSHIFT_AND_I32);
    let identity = if and { u32::MAX } else { 0 };
    if b_value != identity {
        return None;
    }
    copy_of(inst, inst.srcs[0])
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
    )
}

/// The simplified form of an instruction, if one applies (only opcodes of [`has_identities`]).
fn simplify(inst: &Inst) -> Option<Inst> {
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
            shift_identity(inst)
        }
        CSEL_U32 | CSEL_S32 | CSEL_F32 if inst.srcs[2] == inst.srcs[3] => copy_of(inst, inst.srcs[2]),
        _ => None,
    }
}

pub fn run(shader: &mut Shader) -> bool {
    run_reporting(shader).changed
}

/// [`run`], also saying whether an instruction became a copy.
pub fn run_reporting(shader: &mut Shader) -> Outcome {
    let facts = facts::table();
    let (mut changed, mut copies_made) = (false, false);
    let Shader { blocks, insts, .. } = shader;
    for &id in blocks.iter().flat_map(|b| &b.insts) {
        let inst = &mut insts[id.index()];
        if inst.dead || inst.dests.len() != 1 {
            continue;
        }
        // Most instructions have no identity: one table lookup skips them. The opcode list
        // behind the bit is kept beside `simplify`'s rules; debug builds check they agree.
        if facts::of(facts, inst) & facts::SIMPLIFIABLE == 0 {
            debug_assert!(simplify(inst).is_none(), "{} has a rule but no SIMPLIFIABLE bit", inst.mach.info().name);
            continue;
        }
        if let Some(new) = simplify(inst) {
            // A copy cannot carry flow bits; such instructions stay.
            if new.kind == InstKind::Copy && inst.mach.flow != 0 {
                continue;
            }
            copies_made |= new.kind == InstKind::Copy;
            *inst = new;
            changed = true;
        }
    }
    Outcome { changed, copies_made, ..Outcome::default() }
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
        ] {
            check(body, body);
        }
    }
}
