//! Float arithmetic, dot products, comparisons, selection, rounding and the legacy float
//! opcodes (§C.1, §C.2, §C.4, §C.5 of the lowering reference).
//!
//! Rounding conventions where TGSI leaves them open (docs/lowering.md, shared with the
//! interpreter): MAD is fused; DPn is the fused chain `fma(a.x, b.x, fma(a.y, b.y, … a.n·b.n))`
//! (Mesa's order); LRP is `fma(t, y − x, x)`; MUL is one rounding (`FMA a, b, −0.0`).

use super::Ctx;
use super::operand::{self, Kind, Lanes, fsrc, fsrc_lanes, write};
use crate::ir::builder::NEG_ZERO;
use crate::ir::{Src, Value};
use crate::tgsi::ast::Instruction;
use crate::tgsi::opcodes::Opcode;
use crate::valhall::tables::{Condition, ResultType, RoundMode};

/// Lowers `inst` if it belongs to this family; returns whether it did.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    match opcode {
        Opcode::Mov | Opcode::Swz => componentwise(ctx, inst, |ctx, s| plain_value(ctx, s[0]), 1),
        Opcode::Negate => componentwise(ctx, inst, |ctx, s| plain_value(ctx, s[0].negated()), 1),
        Opcode::Add => componentwise(ctx, inst, |ctx, s| ctx.builder().fadd(s[0], s[1]), 2),
        Opcode::Sub => componentwise(ctx, inst, |ctx, s| ctx.builder().fadd(s[0], s[1].negated()), 2),
        Opcode::Mul => componentwise(ctx, inst, |ctx, s| ctx.builder().fmul(s[0], s[1]), 2),
        Opcode::Mad | Opcode::Fma => componentwise(ctx, inst, |ctx, s| ctx.builder().fma(s[0], s[1], s[2]), 3),
        Opcode::Min => componentwise(ctx, inst, |ctx, s| ctx.builder().fmin(s[0], s[1]), 2),
        Opcode::Max => componentwise(ctx, inst, |ctx, s| ctx.builder().fmax(s[0], s[1]), 2),
        Opcode::Abs => componentwise(ctx, inst, |ctx, s| ctx.builder().fadd(s[0].absolute(), Src::konst(NEG_ZERO)), 1),
        Opcode::Clamp => componentwise(
            ctx,
            inst,
            |ctx, s| {
                let lo = ctx.builder().fmax(s[0], s[1]);
                ctx.builder().fmin(lo, s[2])
            },
            3,
        ),
        Opcode::Lrp => componentwise(
            ctx,
            inst,
            |ctx, s| {
                // s0·s1 + (1 − s0)·s2 = s2 + s0·(s1 − s2)
                let diff = ctx.builder().fadd(s[1], s[2].negated());
                ctx.builder().fma(s[0], diff, s[2])
            },
            3,
        ),
        Opcode::M4x4 => matrix(ctx, inst, 4, 4),
        Opcode::M4x3 => matrix(ctx, inst, 3, 4),
        Opcode::M3x4 => matrix(ctx, inst, 4, 3),
        Opcode::M3x3 => matrix(ctx, inst, 3, 3),
        Opcode::M3x2 => matrix(ctx, inst, 2, 3),
        Opcode::X2d => x2d(ctx, inst),
        Opcode::Dp2 => dot(ctx, inst, 2, None),
        Opcode::Dp3 => dot(ctx, inst, 3, None),
        Opcode::Dp4 => dot(ctx, inst, 4, None),
        Opcode::Dph => {
            // DP3 plus src1.w.
            let w = fsrc(ctx, inst, 1, 3);
            dot(ctx, inst, 3, Some(w))
        }
        Opcode::Dp2a => {
            let add = fsrc(ctx, inst, 2, 0);
            dot(ctx, inst, 2, Some(add))
        }
        Opcode::Slt => compare(ctx, inst, Condition::Lt, false, ResultType::F1),
        Opcode::Sge => compare(ctx, inst, Condition::Ge, false, ResultType::F1),
        Opcode::Seq => compare(ctx, inst, Condition::Eq, false, ResultType::F1),
        Opcode::Sne => compare(ctx, inst, Condition::Ne, false, ResultType::F1),
        Opcode::Sgt => compare(ctx, inst, Condition::Lt, true, ResultType::F1),
        Opcode::Sle => compare(ctx, inst, Condition::Ge, true, ResultType::F1),
        Opcode::Fslt => compare(ctx, inst, Condition::Lt, false, ResultType::M1),
        Opcode::Fsge => compare(ctx, inst, Condition::Ge, false, ResultType::M1),
        Opcode::Fseq => compare(ctx, inst, Condition::Eq, false, ResultType::M1),
        Opcode::Fsne => compare(ctx, inst, Condition::Ne, false, ResultType::M1),
        Opcode::Sfl => constant_result(ctx, inst, 0.0),
        Opcode::Str => constant_result(ctx, inst, 1.0),
        Opcode::Cmp => componentwise(
            ctx,
            inst,
            |ctx, s| {
                // (a < 0) ? b : c
                let a = operand::apply_float_mods(ctx, s[0]);
                let (b, c) = (operand::apply_float_mods(ctx, s[1]), operand::apply_float_mods(ctx, s[2]));
                ctx.builder().csel_f32(Condition::Lt, a, Src::konst(0), b, c)
            },
            3,
        ),
        Opcode::Cnd => componentwise(
            ctx,
            inst,
            |ctx, s| {
                // (c > 0.5) ? a : b
                let c = operand::apply_float_mods(ctx, s[2]);
                let (a, b) = (operand::apply_float_mods(ctx, s[0]), operand::apply_float_mods(ctx, s[1]));
                ctx.builder().csel_f32(Condition::Gt, c, Src::f32(0.5), a, b)
            },
            3,
        ),
        Opcode::Cnd0 => componentwise(
            ctx,
            inst,
            |ctx, s| {
                // (c < 0) ? b : a — as CMP with its sources swapped, so a NaN c selects a
                let c = operand::apply_float_mods(ctx, s[2]);
                let (a, b) = (operand::apply_float_mods(ctx, s[0]), operand::apply_float_mods(ctx, s[1]));
                ctx.builder().csel_f32(Condition::Lt, c, Src::konst(0), b, a)
            },
            3,
        ),
        Opcode::Ssg => componentwise(
            ctx,
            inst,
            |ctx, s| {
                let pos = ctx.builder().fcmp(Condition::Lt, Src::konst(0), s[0], ResultType::F1);
                let neg = ctx.builder().fcmp(Condition::Lt, s[0], Src::konst(0), ResultType::F1);
                ctx.builder().fadd(pos, Src::new(neg).negated())
            },
            1,
        ),
        Opcode::Flr => round(ctx, inst, RoundMode::Rtn),
        Opcode::Ceil => round(ctx, inst, RoundMode::Rtp),
        Opcode::Trunc => round(ctx, inst, RoundMode::Rtz),
        Opcode::Round => round(ctx, inst, RoundMode::Rte),
        Opcode::Frc => componentwise(
            ctx,
            inst,
            |ctx, s| {
                let floor = ctx.builder().fround(s[0], RoundMode::Rtn);
                ctx.builder().fadd(s[0], Src::new(floor).negated())
            },
            1,
        ),
        Opcode::Arl => to_address(ctx, inst, Some(RoundMode::Rtn)),
        Opcode::Arr => to_address(ctx, inst, Some(RoundMode::Rte)),
        Opcode::Uarl => to_address(ctx, inst, None),
        Opcode::Xpd => cross(ctx, inst),
        _ => return false,
    }
    true
}

/// A value equal to the source with its float modifiers applied (a copy for constants).
fn plain_value(ctx: &mut Ctx, src: Src) -> Value {
    operand::to_value(ctx, src)
}

/// Lowers a component-wise float opcode with `n` sources: `f` computes one channel from the
/// channel's sources (modifiers kept on the sources).
pub fn componentwise(ctx: &mut Ctx, inst: &Instruction, f: impl Fn(&mut Ctx, &[Src]) -> Value, n: usize) {
    let mut out = [None; 4];
    let mask = inst.dst[0].write_mask;
    let mut lanes = Lanes::UNREAD;
    for c in mask.components() {
        let mut srcs = [Src::NONE; 4];
        for (k, s) in srcs.iter_mut().enumerate().take(n) {
            *s = fsrc_lanes(ctx, inst, &mut lanes[k], k, c.index());
        }
        out[c.index()] = Some(f(ctx, &srcs[..n]));
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// Writes one value to every enabled channel (replicated-scalar opcodes).
pub fn replicate(ctx: &mut Ctx, inst: &Instruction, value: Value, kind: Kind) {
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        out[c.index()] = Some(value);
    }
    write(ctx, inst, 0, out, kind);
}

fn constant_result(ctx: &mut Ctx, inst: &Instruction, value: f32) {
    let v = ctx.builder().konst(value.to_bits());
    replicate(ctx, inst, v, Kind::Float);
}

/// `DPn`: the fused chain of [`dot_chain`] over sources 0 and 1, replicated.
fn dot(ctx: &mut Ctx, inst: &Instruction, n: usize, add: Option<Src>) {
    let (mut a, mut b) = ([Src::NONE; 4], [Src::NONE; 4]);
    let mut lanes = Lanes::UNREAD;
    // All of src0 before src1: reading a source may emit instructions (same order as before).
    for (c, a) in a.iter_mut().enumerate().take(n) {
        *a = fsrc_lanes(ctx, inst, &mut lanes[0], 0, c);
    }
    for (c, b) in b.iter_mut().enumerate().take(n) {
        *b = fsrc_lanes(ctx, inst, &mut lanes[1], 1, c);
    }
    let value = dot_chain(ctx, &a[..n], &b[..n], add);
    replicate(ctx, inst, value, Kind::Float);
}

/// The dot-product convention (docs/lowering.md): `fma(a[0], b[0], fma(a[1], b[1], …
/// fma(a[n−1], b[n−1], add)))` — the last component innermost, `add` (−0.0 when absent) as
/// its addend, one rounding per step. This is Mesa's order for imprecise dot products and lets
/// DPH/DP2A take their addend for free.
pub(super) fn dot_chain(ctx: &mut Ctx, a: &[Src], b: &[Src], add: Option<Src>) -> Value {
    let mut acc = add.unwrap_or(Src::konst(NEG_ZERO));
    for (x, y) in a.iter().zip(b).rev() {
        acc = Src::new(ctx.builder().fma(*x, *y, acc));
    }
    match acc.operand {
        crate::ir::Operand::Value(v) if acc.is_plain() => v,
        _ => operand::to_value(ctx, acc),
    }
}

/// Legacy D3D matrix products (M4X4, M4X3, M3X4, M3X3, M3X2): result channel k is the
/// `cols`-component dot product of src0 with the register `k` after src1 (same file,
/// dimension, address and swizzle/modifiers), for the first `rows` channels; the other
/// channels are not written.
fn matrix(ctx: &mut Ctx, inst: &Instruction, rows: usize, cols: usize) {
    let mut out = [None; 4];
    let mask = inst.dst[0].write_mask;
    let a: Vec<Src> = (0..cols).map(|c| fsrc(ctx, inst, 0, c)).collect();
    for k in mask.components().map(|c| c.index()).filter(|&k| k < rows) {
        let mut row_inst = inst.clone();
        row_inst.src[1].register.index.value += k as i32;
        let b: Vec<Src> = (0..cols).map(|c| fsrc(ctx, &row_inst, 1, c)).collect();
        out[k] = Some(dot_chain(ctx, &a, &b, None));
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// Legacy X2D: `x = s0.x + s1.x·s2.x + s1.y·s2.y`, `y = s0.y + s1.x·s2.z + s1.y·s2.w`, z = x,
/// w = y, each a DP2A-style chain (`fma(s1.x, s2.x, fma(s1.y, s2.y, s0.x))`).
fn x2d(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    let mask = inst.dst[0].write_mask;
    let mut rows: [Option<Value>; 2] = [None; 2];
    for c in mask.components().map(|c| c.index()) {
        let r = c % 2;
        if rows[r].is_none() {
            let s1 = [fsrc(ctx, inst, 1, 0), fsrc(ctx, inst, 1, 1)];
            let s2 = [fsrc(ctx, inst, 2, 2 * r), fsrc(ctx, inst, 2, 2 * r + 1)];
            let add = fsrc(ctx, inst, 0, r);
            rows[r] = Some(dot_chain(ctx, &s1, &s2, Some(add)));
        }
        out[c] = rows[r];
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// Float comparisons: `.f1` (1.0/0.0) for SLT & co., `.m1` (~0/0) for FSLT & co.
fn compare(ctx: &mut Ctx, inst: &Instruction, cond: Condition, swap: bool, result: ResultType) {
    let kind = if result == ResultType::F1 { Kind::Float } else { Kind::Int };
    let mut out = [None; 4];
    let mut lanes = Lanes::UNREAD;
    for c in inst.dst[0].write_mask.components() {
        let mut a = fsrc_lanes(ctx, inst, &mut lanes[0], 0, c.index());
        let mut b = fsrc_lanes(ctx, inst, &mut lanes[1], 1, c.index());
        if swap {
            std::mem::swap(&mut a, &mut b);
        }
        out[c.index()] = Some(ctx.builder().fcmp(cond, a, b, result));
    }
    write(ctx, inst, 0, out, kind);
}

fn round(ctx: &mut Ctx, inst: &Instruction, mode: RoundMode) {
    componentwise(ctx, inst, |ctx, s| ctx.builder().fround(s[0], mode), 1);
}

/// ARL (floor), ARR (round to nearest even), UARL (already an integer) into an address register.
fn to_address(ctx: &mut Ctx, inst: &Instruction, mode: Option<RoundMode>) {
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        let v = match mode {
            Some(mode) => {
                let x = fsrc(ctx, inst, 0, c.index());
                let rounded = ctx.builder().fround(x, mode);
                ctx.builder().f2i(true, rounded, RoundMode::Rtz)
            }
            None => {
                let x = operand::isrc(ctx, inst, 0, c.index());
                operand::to_value(ctx, x)
            }
        };
        out[c.index()] = Some(v);
    }
    write(ctx, inst, 0, out, Kind::Int);
}

/// Legacy XPD: the cross product in xyz (`x = s0.y·s1.z − s1.y·s0.z`, …), 1.0 in w.
fn cross(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        let i = c.index();
        out[i] = Some(if i == 3 {
            ctx.builder().konst(1.0f32.to_bits())
        } else {
            let (j, k) = ((i + 1) % 3, (i + 2) % 3);
            let a_j = fsrc(ctx, inst, 0, j);
            let b_k = fsrc(ctx, inst, 1, k);
            let b_j = fsrc(ctx, inst, 1, j);
            let a_k = fsrc(ctx, inst, 0, k);
            let t = ctx.builder().fmul(b_j, a_k);
            ctx.builder().fma(a_j, b_k, Src::new(t).negated())
        });
    }
    write(ctx, inst, 0, out, Kind::Float);
}
