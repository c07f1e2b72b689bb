//! Integer arithmetic (§C.6, §C.7 of the lowering reference), integer comparisons and UCMP
//! (§C.5), the legacy integer opcodes, and the 64-bit integer opcodes on 32-bit channel pairs
//! (§C.17).
//!
//! Operands are read by the opcode table's operand types ([`source`]): integer operands get
//! integer `-`/`|x|`, untyped ones (UCMP's values) float modifiers applied like MOV.
//!
//! # Sequences (instructions per channel)
//!
//! | opcode | sequence | count |
//! | --- | --- | --- |
//! | UADD, UMUL, INEG, IABS | `IADD.s32`, `IMUL.i32`, `ISUB.s32 0, x`, `IABS.s32` | 1 |
//! | UMAD | `IMUL.i32` + `IADD.s32` | 2 |
//! | IMIN, IMAX, UMIN, UMAX | `CSEL.{s,u}32.{lt,gt} a, b, a, b` | 1 |
//! | ISSG | `max(x, -1)`, then `min(·, 1)`, both CSEL | 2 |
//! | ISLT … USNE | `ICMP_OR.{s,u}32.cond.m1` | 1 |
//! | UCMP | `CSEL.u32.eq s0, 0, s2, s1` | 1 |
//! | UMUL_HI | four 16×16 products on widened halves, five adds ([`umul_hi`]) | 9 |
//! | IMUL_HI | the same with sign-extended high halves ([`imul_hi`]) | 11 |
//! | UDIV / UMOD (variable) | §C.7 reciprocal, Newton step, quotient, 2 corrections, ÷0 select | 34 / 32 |
//! | IDIV / MOD (variable) | `IABS` both, unsigned core, sign fix, ÷0 select | 39 / 36 |
//! | UDIV by a constant | 2ᵏ: 1; ≥ 2³¹: 1; else multiply-high by a magic number ([`magic`]) | ≤ 11 |
//! | UMOD by a constant | 2ᵏ: 1; ≥ 2³¹: 2; else the quotient, `IMUL`, `ISUB` | ≤ 13 |
//! | IDIV, MOD by a constant | ±1 and 0: ≤ 1; else `IABS`, the unsigned sequence, sign fix | ≤ 14 / 16 |
//! | SAD | two `ISUB`, `CSEL.u32.ge`, `IADD` | 4 |
//!
//! The multiply-high sequence (Mesa: 4 × `U16_TO_U32`, 4 × `IMUL`, 12 shift/add/compare
//! instructions) uses the 16-bit widening of `IMUL` and `IADD` sources instead: with
//! `a = ah·2¹⁶ + al`, `b = bh·2¹⁶ + bl`, `lo = al·bl`, `m1 = ah·bl`, `m2 = al·bh`,
//! `hi = ah·bh + m1.h1 + m2.h1 + ((lo.h1 + m1.h0 + m2.h0) >> 16)`, where the inner sum is below
//! 3·2¹⁶ and its `>> 16` is the `.h1` widening of the last addition's source. The signed variant
//! multiplies sign-extended high halves (`IMUL.s32 a.h1, …` against zero-extended low halves in
//! registers) and adds the high halves of the cross products sign-extended (`IADD.s32 ….h1`).
//!
//! Division (§C.7): `r0 = F32_TO_U32.rtz(FRCP(U32_TO_F32 d) · 4294966784.0)`, one Newton step
//! `r1 = r0 + umulhi(r0, r0·(−d))`, `q = umulhi(n, r1)`, `r = n − q·d`, then twice
//! `if r ≥ d { q += 1; r −= d }` (as CSELs; the last step updates only what is asked for).
//! This is Mesa's (and LLVM's AMDGPU) algorithm with a shorter multiply-high; `tests/lower_int.rs`
//! evaluates the emitted IR on edge cases, every 16-bit divisor with its worst numerators and
//! tens of thousands of random pairs — also with any faithful FRCP or one up to 64 ulps low —
//! and finds it exact. Division by zero takes a final select, so it does not depend on what the
//! conversion of the infinite reciprocal gives.
//!
//! 64-bit opcodes (instructions per pair): U64ADD 4, I64NEG 3, I64ABS 5, I64SSG 4, U64MUL 14,
//! 64-bit min/max 4, U64SEQ/U64SNE and the ordered comparisons 3, shifts by a variable 8 (9 for
//! I64SHR) and by a constant ≤ 3, U2I64 0–1, I2I64 1. U64DIV/U64MOD ([`udiv64`]): when both
//! high words are zero, the 32-bit sequence (issued: about 40 instructions); otherwise a
//! restoring division loop ([`udiv64_loop`]: 12 setup instructions, 21 per iteration,
//! `64 − clz64(n)` iterations: about 760 issued for a 32-bit dividend, 1500 for a full one —
//! Mesa also emits a loop); 3 for the division-by-zero select. I64DIV/I64MOD add 10 for the
//! absolute values and 5 for the sign fix. An exact reciprocal-based 64-bit sequence would
//! issue some 250 instructions whatever the operands, at 5× the code size.
//!
//! # Semantics shared with the interpreter (docs/lowering.md and these choices)
//!
//! * UDIV, UMOD by 0: `0xFFFFFFFF`. IDIV by 0: −1 for a non-negative dividend, 1 for a
//!   negative one (`|n| / 0 = 0xFFFFFFFF`, then the sign fix). MOD by 0: `0xFFFFFFFF`.
//! * IDIV truncates toward zero; `INT_MIN / −1 = INT_MIN`. MOD is the truncated remainder (the
//!   sign of the dividend, C's `%`, LLVM's `srem`); `INT_MIN % −1 = 0`.
//! * SAD: `|s0 − s1| + s2` on unsigned operands (the opcode's operand types), i.e.
//!   `max − min`, the sum wrapping. The opcode table's recipe (`IABS(s0 − s1)`) differs when the
//!   difference is 2³¹ or more; the semantics win, as for XPD.
//! * Legacy SHR is an arithmetic shift right (ISHR). ARA is rejected: TGSI never defined it.
//! * 64-bit operands: channel pair p of a source is its swizzled channels 2p (low word) and 2p+1
//!   (high word); `-`/`|x|` on a 64-bit integer operand are 64-bit negation/absolute value. A
//!   64-bit result of pair p goes to channels 2p, 2p+1 (the write mask applies per channel);
//!   a 32-bit result of pair p (comparisons, I642F, U642F) goes to the (p+1)-th channel the write
//!   mask enables (tgsi.rst writes them to x and z, or x and y); the 32-bit operand of pair p
//!   (shift counts, F2I64 & co.) is the source's swizzled channel p (x, then y).
//! * 64-bit shift counts are taken modulo 64.
//! * 64-bit division and remainder follow the 32-bit rules: U64DIV/U64MOD by 0 all ones,
//!   I64DIV by 0 −1 (n ≥ 0) or 1 (n < 0), I64MOD by 0 all ones; I64DIV truncates;
//!   `INT64_MIN / −1 = INT64_MIN`, I64MOD has the dividend's sign, `INT64_MIN % −1 = 0`.

use super::Ctx;
use super::operand::{self, Kind, Lanes, fsrc, fsrc_lanes, isrc, isrc_lanes, write};
use crate::ir::builder::{LANE_B00, byte0};
use crate::ir::{Inst, InstId, InstKind, Operand, Src, Terminator, Value};
use crate::tgsi::ast::Instruction;
use crate::tgsi::opcodes::{Opcode, OperandType};
use crate::valhall::Instr;
use crate::valhall::Opcode as V;
use crate::valhall::tables::{Condition, ResultType, RoundMode};

/// Index of `.h0` / `.h1` in `swizzles_32_bit` (the widen field of 32-bit integer sources).
const WIDEN_H0: u8 = 2;
const WIDEN_H1: u8 = 3;

/// `4294966784.0`, i.e. 2³² − 512: scales the float reciprocal so that the integer estimate
/// stays below 2³²/d (§C.7).
const RCP_SCALE: u32 = 0x4F7F_FFFE;

/// Lowers `inst` if it belongs to this family; returns whether it did.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    use Condition::*;
    match opcode {
        Opcode::Uadd => componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().iadd(s[0], s[1])),
        Opcode::Umul => componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().imul(s[0], s[1])),
        Opcode::Umad => componentwise(ctx, inst, opcode, 3, |ctx, s| {
            let p = ctx.builder().imul(s[0], s[1]);
            ctx.builder().iadd(p, s[2])
        }),
        Opcode::UmulHi => componentwise(ctx, inst, opcode, 2, |ctx, s| umul_hi(ctx, s[0], s[1])),
        Opcode::ImulHi => componentwise(ctx, inst, opcode, 2, |ctx, s| imul_hi(ctx, s[0], s[1])),
        Opcode::Imin => {
            componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().csel(true, Lt, s[0], s[1], s[0], s[1]))
        }
        Opcode::Imax => {
            componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().csel(true, Gt, s[0], s[1], s[0], s[1]))
        }
        Opcode::Umin => {
            componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().csel(false, Lt, s[0], s[1], s[0], s[1]))
        }
        Opcode::Umax => {
            componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().csel(false, Gt, s[0], s[1], s[0], s[1]))
        }
        Opcode::Ineg => componentwise(ctx, inst, opcode, 1, |ctx, s| ctx.builder().isub(Src::konst(0), s[0])),
        Opcode::Iabs => componentwise(ctx, inst, opcode, 1, |ctx, s| ctx.builder().op(V::IABS_S32, &[s[0]])),
        Opcode::Issg => componentwise(ctx, inst, opcode, 1, |ctx, s| {
            // min(max(x, -1), 1)
            let m1 = Src::konst(u32::MAX);
            let lo = Src::new(ctx.builder().csel(true, Gt, s[0], m1, s[0], m1));
            ctx.builder().csel(true, Lt, lo, Src::konst(1), lo, Src::konst(1))
        }),
        Opcode::Udiv => componentwise(ctx, inst, opcode, 2, |ctx, s| udiv(ctx, s[0], s[1], false)),
        Opcode::Umod => componentwise(ctx, inst, opcode, 2, |ctx, s| udiv(ctx, s[0], s[1], true)),
        Opcode::Idiv => componentwise(ctx, inst, opcode, 2, |ctx, s| idiv(ctx, s[0], s[1])),
        Opcode::Mod => componentwise(ctx, inst, opcode, 2, |ctx, s| imod(ctx, s[0], s[1])),
        Opcode::Islt => compare(ctx, inst, opcode, true, Lt),
        Opcode::Isge => compare(ctx, inst, opcode, true, Ge),
        Opcode::Uslt => compare(ctx, inst, opcode, false, Lt),
        Opcode::Usge => compare(ctx, inst, opcode, false, Ge),
        Opcode::Useq => compare(ctx, inst, opcode, false, Eq),
        Opcode::Usne => compare(ctx, inst, opcode, false, Ne),
        Opcode::Ucmp => {
            componentwise(ctx, inst, opcode, 3, |ctx, s| ctx.builder().csel(false, Eq, s[0], Src::konst(0), s[2], s[1]))
        }
        Opcode::Sad => componentwise(ctx, inst, opcode, 3, |ctx, s| {
            // Unsigned |a − b| = a ≥ b ? a − b : b − a.
            let ab = ctx.builder().isub(s[0], s[1]);
            let ba = ctx.builder().isub(s[1], s[0]);
            let d = ctx.builder().csel(false, Ge, s[0], s[1], Src::new(ab), Src::new(ba));
            ctx.builder().iadd(d, s[2])
        }),
        Opcode::Shr => super::bits::shift(ctx, inst, opcode, super::bits::Shift::Arithmetic),
        Opcode::Ara => ctx.unsupported(
            "ARA",
            "TGSI never defined ARA (an NV_vertex_program2 address-register add; Mesa removed it in 10.5 \
             without any driver implementing it); use UADD on the ADDR register",
        ),
        // ---- 64-bit integers on 32-bit pairs ----
        Opcode::U64add => pairwise(ctx, inst, opcode, |ctx, s| add64(ctx, s[0], s[1])),
        Opcode::I64neg => pairwise(ctx, inst, opcode, |ctx, s| neg64(ctx, s[0])),
        Opcode::I64abs => pairwise(ctx, inst, opcode, |ctx, s| abs64(ctx, s[0])),
        Opcode::I64ssg => pairwise(ctx, inst, opcode, |ctx, s| ssg64(ctx, s[0])),
        Opcode::U64mul => pairwise(ctx, inst, opcode, |ctx, s| mul64(ctx, s[0], s[1])),
        Opcode::U64min => pairwise(ctx, inst, opcode, |ctx, s| minmax64(ctx, s[0], s[1], false, Lt)),
        Opcode::U64max => pairwise(ctx, inst, opcode, |ctx, s| minmax64(ctx, s[0], s[1], false, Gt)),
        Opcode::I64min => pairwise(ctx, inst, opcode, |ctx, s| minmax64(ctx, s[0], s[1], true, Lt)),
        Opcode::I64max => pairwise(ctx, inst, opcode, |ctx, s| minmax64(ctx, s[0], s[1], true, Gt)),
        Opcode::U64seq => compare64(ctx, inst, false, Eq),
        Opcode::U64sne => compare64(ctx, inst, false, Ne),
        Opcode::U64slt => compare64(ctx, inst, false, Lt),
        Opcode::U64sge => compare64(ctx, inst, false, Ge),
        Opcode::I64slt => compare64(ctx, inst, true, Lt),
        Opcode::I64sge => compare64(ctx, inst, true, Ge),
        Opcode::U64shl => shift64_op(ctx, inst, opcode, Shift64::Left),
        Opcode::U64shr => shift64_op(ctx, inst, opcode, Shift64::Logical),
        Opcode::I64shr => shift64_op(ctx, inst, opcode, Shift64::Arithmetic),
        Opcode::U2i64 => widen64(ctx, inst, opcode, false),
        Opcode::I2i64 => widen64(ctx, inst, opcode, true),
        Opcode::U64div => pairwise(ctx, inst, opcode, |ctx, s| div64(ctx, s[0], s[1], false, false)),
        Opcode::U64mod => pairwise(ctx, inst, opcode, |ctx, s| div64(ctx, s[0], s[1], false, true)),
        Opcode::I64div => pairwise(ctx, inst, opcode, |ctx, s| div64(ctx, s[0], s[1], true, false)),
        Opcode::I64mod => pairwise(ctx, inst, opcode, |ctx, s| div64(ctx, s[0], s[1], true, true)),
        _ => return false,
    }
    true
}

// ---- Operands ---------------------------------------------------------------------------------

/// Source `k` of `inst` for destination channel `c` as a plain source, read by the opcode's
/// operand type: integer `-`/`|x|` for integer operands, float modifiers applied (like MOV) for
/// float and untyped ones.
pub(super) fn source(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode, k: usize, c: usize) -> Src {
    match opcode.info().src_types.get(k) {
        Some(OperandType::I | OperandType::U) => isrc(ctx, inst, k, c),
        _ => {
            let s = fsrc(ctx, inst, k, c);
            operand::apply_float_mods(ctx, s)
        }
    }
}

/// [`source`] through the source's [`Lanes`].
#[inline]
fn source_lanes(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode, lanes: &mut Lanes, k: usize, c: usize) -> Src {
    match opcode.info().src_types.get(k) {
        Some(OperandType::I | OperandType::U) => isrc_lanes(ctx, inst, lanes, k, c),
        _ => {
            let s = fsrc_lanes(ctx, inst, lanes, k, c);
            operand::apply_float_mods(ctx, s)
        }
    }
}

/// How the destination of `opcode` is written: float results get `_SAT`.
pub(super) fn dst_kind(opcode: Opcode) -> Kind {
    match opcode.info().dst_types.first() {
        Some(OperandType::F) => Kind::Float,
        _ => Kind::Int,
    }
}

/// Lowers a component-wise opcode with `n` sources read by [`source`]; `f` computes one channel.
pub(super) fn componentwise(
    ctx: &mut Ctx,
    inst: &Instruction,
    opcode: Opcode,
    n: usize,
    f: impl Fn(&mut Ctx, &[Src]) -> Value,
) {
    let mut out = [None; 4];
    let mut lanes = Lanes::UNREAD;
    for c in inst.dst[0].write_mask.components() {
        let mut srcs = [Src::NONE; 4];
        for (k, s) in srcs.iter_mut().enumerate().take(n) {
            *s = source_lanes(ctx, inst, opcode, &mut lanes[k], k, c.index());
        }
        out[c.index()] = Some(f(ctx, &srcs[..n]));
    }
    write(ctx, inst, 0, out, dst_kind(opcode));
}

fn compare(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode, signed: bool, cond: Condition) {
    componentwise(ctx, inst, opcode, 2, |ctx, s| ctx.builder().icmp(signed, cond, s[0], s[1], ResultType::M1));
}

/// A 16-bit half of a plain 32-bit operand as the source of a 32-bit integer instruction: the
/// `.h0`/`.h1` widening (zero- or sign-extended by the instruction's type), folded for
/// constants (`signed` sign-extends the folded half).
pub(super) fn half(s: Src, high: bool, signed: bool) -> Src {
    debug_assert!(s.is_plain(), "half of a modified source");
    match s.operand {
        Operand::Const(c) => {
            let h = if high { c >> 16 } else { c & 0xFFFF };
            Src::konst(if signed { h as u16 as i16 as i32 as u32 } else { h })
        }
        _ => s.widen(if high { WIDEN_H1 } else { WIDEN_H0 }),
    }
}

/// The low half of a plain operand zero-extended into a register value (constants folded).
fn low_half_value(ctx: &mut Ctx, s: Src) -> Src {
    match s.operand {
        Operand::Const(c) => Src::konst(c & 0xFFFF),
        // U16_TO_U32 with `.h00`: lane 0 is the low half.
        _ => Src::new(ctx.builder().op(V::U16_TO_U32, &[s])),
    }
}

/// A constant shift amount: `#n.b00` (the count byte of a shift instruction).
pub(super) fn shift_const(n: u32) -> Src {
    Src::konst(n).widen(LANE_B00)
}

/// `a + b` with `IADD.u32` (zero-extending widened sources).
fn iadd_u(ctx: &mut Ctx, a: Src, b: Src) -> Value {
    ctx.builder().op(V::IADD_U32, &[a, b])
}

/// The 32-bit instruction `opcode` (a shift or bitwise operation) on `a`, shift `s`, `b`.
pub(super) fn shift_op(ctx: &mut Ctx, opcode: V, signed: bool, a: Src, s: Src, b: Src) -> Value {
    let mut mach = Instr::new(opcode);
    if signed {
        let _ = mach.set_flag("signed", true);
    }
    ctx.builder().alu(mach, &[a, s, b])
}

/// `a >> n` (constant `n`), arithmetic when `signed`.
fn shr_const(ctx: &mut Ctx, signed: bool, a: Src, n: u32) -> Value {
    shift_op(ctx, V::RSHIFT_OR_I32, signed, a, shift_const(n), Src::konst(0))
}

// ---- Multiply high ----------------------------------------------------------------------------

/// The high 32 bits of the unsigned 64-bit product `a·b` (9 instructions: 4 `IMUL`, 5 `IADD`).
pub(super) fn umul_hi(ctx: &mut Ctx, a: Src, b: Src) -> Value {
    let (al, ah) = (half(a, false, false), half(a, true, false));
    let (bl, bh) = (half(b, false, false), half(b, true, false));
    let lo = ctx.builder().imul(al, bl);
    let m1 = ctx.builder().imul(ah, bl);
    let m2 = ctx.builder().imul(al, bh);
    let hh = ctx.builder().imul(ah, bh);
    umul_hi_sum(ctx, [lo, m1, m2, hh], V::IADD_U32)
}

/// `hh + m1.h1 + m2.h1 + ((lo.h1 + m1.h0 + m2.h0) >> 16)`; `hi_add` extends `m1.h1`, `m2.h1`.
fn umul_hi_sum(ctx: &mut Ctx, [lo, m1, m2, hh]: [Value; 4], hi_add: V) -> Value {
    let t1 = iadd_u(ctx, Src::new(lo).widen(WIDEN_H1), Src::new(m1).widen(WIDEN_H0));
    let t2 = iadd_u(ctx, Src::new(t1), Src::new(m2).widen(WIDEN_H0));
    let s1 = ctx.builder().op(hi_add, &[Src::new(hh), Src::new(m1).widen(WIDEN_H1)]);
    let s2 = ctx.builder().op(hi_add, &[Src::new(s1), Src::new(m2).widen(WIDEN_H1)]);
    ctx.builder().op(hi_add, &[Src::new(s2), Src::new(t2).widen(WIDEN_H1)])
}

/// The high 32 bits of the signed 64-bit product `a·b` (11 instructions).
pub(super) fn imul_hi(ctx: &mut Ctx, a: Src, b: Src) -> Value {
    // Zero-extended low halves in registers, for products with a sign-extended high half.
    let al_reg = low_half_value(ctx, a);
    let bl_reg = low_half_value(ctx, b);
    let (al, ah) = (half(a, false, false), half(a, true, true));
    let (bl, bh) = (half(b, false, false), half(b, true, true));
    let lo = ctx.builder().imul(al, bl);
    let m1 = ctx.builder().op(V::IMUL_S32, &[ah, bl_reg]);
    let m2 = ctx.builder().op(V::IMUL_S32, &[al_reg, bh]);
    let hh = ctx.builder().op(V::IMUL_S32, &[ah, bh]);
    umul_hi_sum(ctx, [lo, m1, m2, hh], V::IADD_S32)
}

// ---- Division ---------------------------------------------------------------------------------

/// UDIV (`remainder` false) or UMOD; division by zero gives `0xFFFFFFFF`.
fn udiv(ctx: &mut Ctx, n: Src, d: Src, remainder: bool) -> Value {
    if let Some(dc) = d.operand.as_const() {
        if dc == 0 {
            return ctx.builder().konst(u32::MAX);
        }
        return udiv_const(ctx, n, dc, remainder);
    }
    let r = udiv_core(ctx, n, d, remainder);
    ctx.builder().csel(false, Condition::Eq, d, Src::konst(0), Src::konst(u32::MAX), Src::new(r))
}

/// IDIV: truncating; by zero −1 (n ≥ 0) or 1 (n < 0).
fn idiv(ctx: &mut Ctx, n: Src, d: Src) -> Value {
    use Condition::*;
    if let Some(dc) = d.operand.as_const() {
        let dc = dc as i32;
        if dc == 0 {
            return ctx.builder().csel(true, Lt, n, Src::konst(0), Src::konst(1), Src::konst(u32::MAX));
        }
        if dc == 1 {
            return operand::to_value(ctx, n);
        }
        if dc == -1 {
            return ctx.builder().isub(Src::konst(0), n);
        }
        let an = ctx.builder().op(V::IABS_S32, &[n]);
        let q = udiv_const(ctx, Src::new(an), dc.unsigned_abs(), false);
        let nq = ctx.builder().isub(Src::konst(0), q);
        let (neg, pos) = if dc > 0 { (nq, q) } else { (q, nq) };
        return ctx.builder().csel(true, Lt, n, Src::konst(0), Src::new(neg), Src::new(pos));
    }
    let an = ctx.builder().op(V::IABS_S32, &[n]);
    let ad = ctx.builder().op(V::IABS_S32, &[d]);
    let q = udiv_core(ctx, Src::new(an), Src::new(ad), false);
    let q = ctx.builder().csel(false, Eq, Src::new(ad), Src::konst(0), Src::konst(u32::MAX), Src::new(q));
    let sign = ctx.builder().xor(n, d);
    let nq = ctx.builder().isub(Src::konst(0), q);
    ctx.builder().csel(true, Lt, Src::new(sign), Src::konst(0), Src::new(nq), Src::new(q))
}

/// MOD: the truncated remainder (sign of the dividend); by zero `0xFFFFFFFF`.
fn imod(ctx: &mut Ctx, n: Src, d: Src) -> Value {
    use Condition::*;
    let constant = d.operand.as_const().map(|c| c as i32);
    let r = match constant {
        Some(0) => return ctx.builder().konst(u32::MAX),
        Some(1 | -1) => return ctx.builder().konst(0),
        Some(dc) => {
            let an = ctx.builder().op(V::IABS_S32, &[n]);
            udiv_const(ctx, Src::new(an), dc.unsigned_abs(), true)
        }
        None => {
            let an = ctx.builder().op(V::IABS_S32, &[n]);
            let ad = ctx.builder().op(V::IABS_S32, &[d]);
            udiv_core(ctx, Src::new(an), Src::new(ad), true)
        }
    };
    let nr = ctx.builder().isub(Src::konst(0), r);
    let signed = ctx.builder().csel(true, Lt, n, Src::konst(0), Src::new(nr), Src::new(r));
    if constant.is_some() {
        return signed;
    }
    ctx.builder().csel(false, Eq, d, Src::konst(0), Src::konst(u32::MAX), Src::new(signed))
}

/// The §C.7 sequence for a variable divisor: the quotient or the remainder of `n / d` (exact for
/// every `d ≠ 0`; the callers select the division-by-zero result).
fn udiv_core(ctx: &mut Ctx, n: Src, d: Src, remainder: bool) -> Value {
    use Condition::Ge;
    // Reciprocal estimate r0 ≈ 2^32/d from below, refined by one Newton step.
    let fd = ctx.builder().i2f(false, d);
    let rf = ctx.builder().frcp(fd);
    let sf = ctx.builder().fmul(rf, Src::konst(RCP_SCALE));
    let r0 = ctx.builder().f2i(false, sf, RoundMode::Rtz);
    let nd = ctx.builder().isub(Src::konst(0), d);
    let e = ctx.builder().imul(r0, nd);
    let h = umul_hi(ctx, Src::new(r0), Src::new(e));
    let r1 = ctx.builder().iadd(r0, h);
    // Quotient estimate (at most 2 too small) and remainder.
    let q = umul_hi(ctx, n, Src::new(r1));
    let p = ctx.builder().imul(q, d);
    let r = Src::new(ctx.builder().isub(n, p));
    let step_r = |ctx: &mut Ctx, r: Src| {
        let less = ctx.builder().isub(r, d);
        Src::new(ctx.builder().csel(false, Ge, r, d, Src::new(less), r))
    };
    let step_q = |ctx: &mut Ctx, r: Src, q: Src| {
        let more = ctx.builder().iadd_imm(q, 1);
        Src::new(ctx.builder().csel(false, Ge, r, d, Src::new(more), q))
    };
    let out = if remainder {
        let r = step_r(ctx, r);
        step_r(ctx, r)
    } else {
        let q = step_q(ctx, r, Src::new(q));
        let r = step_r(ctx, r);
        step_q(ctx, r, q)
    };
    out.operand.as_value().expect("a CSEL result")
}

/// How to divide by a constant that is not a power of two (Granlund and Montgomery, 1994).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Magic {
    /// `umulhi(n >> pre, m) >> post`.
    Mul { pre: u32, m: u32, post: u32 },
    /// `HADD(n, umulhi(n, m)) >> post` (a 33-bit multiplier `2³² + m`).
    MulAdd { m: u32, post: u32 },
}

/// The multiply-high recipe for dividing any 32-bit value by `d` (2 < d < 2³¹, not a power of
/// two): the smallest `p ≥ 32` with `m = ⌈2^p / d⌉ < 2³²` and `m·d − 2^p ≤ 2^(p−N)` (N = 32,
/// or 32 − z after pre-shifting an even divisor by z), which makes `⌊n·m / 2^p⌋ = ⌊n / d⌋` for
/// every `n < 2^N`; else the 33-bit multiplier form.
pub fn magic(d: u32) -> Magic {
    debug_assert!(d > 2 && !d.is_power_of_two() && d < 1 << 31);
    let find = |d: u64, bits: u32| {
        let l = 64 - (d - 1).leading_zeros(); // ⌈log2 d⌉
        (32..=32 + l).find_map(|p| {
            let m = (1u128 << p).div_ceil(u128::from(d));
            let err = m * u128::from(d) - (1u128 << p);
            (m < 1 << 32 && err <= 1u128 << (p - bits)).then_some((m as u32, p - 32))
        })
    };
    if let Some((m, post)) = find(u64::from(d), 32) {
        return Magic::Mul { pre: 0, m, post };
    }
    let z = d.trailing_zeros();
    if z > 0
        && let Some((m, post)) = find(u64::from(d >> z), 32 - z)
    {
        return Magic::Mul { pre: z, m, post };
    }
    let l = 32 - (d - 1).leading_zeros();
    let m = ((1u128 << (32 + l)).div_ceil(u128::from(d)) - (1u128 << 32)) as u32;
    Magic::MulAdd { m, post: l - 1 }
}

/// `n / d` or `n % d` for a constant `d ≠ 0` (unsigned).
fn udiv_const(ctx: &mut Ctx, n: Src, d: u32, remainder: bool) -> Value {
    use Condition::Ge;
    if d == 1 {
        return if remainder { ctx.builder().konst(0) } else { operand::to_value(ctx, n) };
    }
    if d.is_power_of_two() {
        return if remainder {
            ctx.builder().and(n, Src::konst(d - 1))
        } else {
            shr_const(ctx, false, n, d.trailing_zeros())
        };
    }
    if d >= 1 << 31 {
        // The quotient is 0 or 1.
        return if remainder {
            let less = ctx.builder().isub(n, Src::konst(d));
            ctx.builder().csel(false, Ge, n, Src::konst(d), Src::new(less), n)
        } else {
            ctx.builder().icmp(false, Ge, n, Src::konst(d), ResultType::I1)
        };
    }
    let q = match magic(d) {
        Magic::Mul { pre, m, post } => {
            let x = if pre == 0 { n } else { Src::new(shr_const(ctx, false, n, pre)) };
            let t = umul_hi(ctx, x, Src::konst(m));
            if post == 0 { t } else { shr_const(ctx, false, Src::new(t), post) }
        }
        Magic::MulAdd { m, post } => {
            let t = umul_hi(ctx, n, Src::konst(m));
            let s = ctx.builder().op(V::HADD_U32, &[n, Src::new(t)]);
            if post == 0 { s } else { shr_const(ctx, false, Src::new(s), post) }
        }
    };
    if !remainder {
        return q;
    }
    let p = ctx.builder().imul(q, Src::konst(d));
    ctx.builder().isub(n, p)
}

// ---- 64-bit integers --------------------------------------------------------------------------

/// A 64-bit operand as two plain 32-bit sources.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pair {
    pub lo: Src,
    pub hi: Src,
}

impl Pair {
    fn of((lo, hi): (Value, Value)) -> Pair {
        Pair { lo: Src::new(lo), hi: Src::new(hi) }
    }

    fn konst(v: u64) -> Pair {
        Pair { lo: Src::konst(v as u32), hi: Src::konst((v >> 32) as u32) }
    }

    fn as_const(self) -> Option<u64> {
        Some(u64::from(self.lo.operand.as_const()?) | u64::from(self.hi.operand.as_const()?) << 32)
    }
}

/// Pair `p` of 64-bit source `k`: its swizzled channels 2p (low) and 2p+1 (high), with `|x|`
/// and `-` applied as 64-bit integer operations.
pub(super) fn src64(ctx: &mut Ctx, inst: &Instruction, k: usize, p: usize) -> Pair {
    let src = &inst.src[k];
    let lo = operand::base_operand(ctx, &src.register, operand::component(src, 2 * p));
    let hi = operand::base_operand(ctx, &src.register, operand::component(src, 2 * p + 1));
    let mut v = Pair { lo: Src::new(lo), hi: Src::new(hi) };
    if src.absolute {
        v = match v.as_const() {
            Some(c) => Pair::konst((c as i64).unsigned_abs()),
            None => Pair::of(abs64(ctx, v)),
        };
    }
    if src.negate {
        v = match v.as_const() {
            Some(c) => Pair::konst(c.wrapping_neg()),
            None => Pair::of(neg64(ctx, v)),
        };
    }
    v
}

/// The channels a 32-bit result of pair p is written to: the (p+1)-th enabled channel.
pub(super) fn narrow_channels(inst: &Instruction) -> Vec<usize> {
    inst.dst[0].write_mask.components().map(|c| c.index()).take(2).collect()
}

/// Whether pair `p` of a 64-bit destination has an enabled channel.
pub(super) fn pair_enabled(inst: &Instruction, p: usize) -> bool {
    inst.dst[0].write_mask.components().any(|c| c.index() / 2 == p)
}

/// Lowers a pair-wise 64-bit opcode whose sources are all 64-bit: `f` computes (low, high) of
/// one pair from the pairs of the sources.
fn pairwise(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode, f: impl Fn(&mut Ctx, &[Pair]) -> (Value, Value)) {
    let n = opcode.info().num_src as usize;
    let mut out = [None; 4];
    for p in 0..2 {
        if !pair_enabled(inst, p) {
            continue;
        }
        let none = Pair { lo: Src::NONE, hi: Src::NONE };
        let mut srcs = [none; 4];
        for (k, s) in srcs.iter_mut().enumerate().take(n) {
            *s = src64(ctx, inst, k, p);
        }
        let (lo, hi) = f(ctx, &srcs[..n]);
        out[2 * p] = Some(lo);
        out[2 * p + 1] = Some(hi);
    }
    write(ctx, inst, 0, out, Kind::Int);
}

/// `a + b` (4 instructions).
fn add64(ctx: &mut Ctx, a: Pair, b: Pair) -> (Value, Value) {
    let lo = ctx.builder().iadd(a.lo, b.lo);
    let carry = ctx.builder().icmp(false, Condition::Lt, lo, a.lo, ResultType::I1);
    let hi = ctx.builder().iadd(a.hi, b.hi);
    let hi = ctx.builder().iadd(hi, carry);
    (lo, hi)
}

/// `−a` (3 instructions): the borrow `a.lo ≠ 0` as an `.m1` mask (−1) is the high word's
/// starting value.
pub(super) fn neg64(ctx: &mut Ctx, a: Pair) -> (Value, Value) {
    let lo = ctx.builder().isub(Src::konst(0), a.lo);
    let borrow = ctx.builder().icmp(false, Condition::Ne, a.lo, Src::konst(0), ResultType::M1);
    let hi = ctx.builder().isub(borrow, a.hi);
    (lo, hi)
}

/// `|a|` (5 instructions).
pub(super) fn abs64(ctx: &mut Ctx, v: Pair) -> (Value, Value) {
    let (nlo, nhi) = neg64(ctx, v);
    let lo = ctx.builder().csel(true, Condition::Lt, v.hi, Src::konst(0), Src::new(nlo), v.lo);
    let hi = ctx.builder().csel(true, Condition::Lt, v.hi, Src::konst(0), Src::new(nhi), v.hi);
    (lo, hi)
}

/// The sign −1, 0 or 1 as a 64-bit value (4 instructions).
fn ssg64(ctx: &mut Ctx, a: Pair) -> (Value, Value) {
    let any = ctx.builder().or(a.lo, a.hi);
    let nonzero = ctx.builder().icmp(false, Condition::Ne, any, Src::konst(0), ResultType::I1);
    let lo = shift_op(ctx, V::RSHIFT_OR_I32, true, a.hi, shift_const(31), Src::new(nonzero));
    let hi = shr_const(ctx, true, a.hi, 31);
    (lo, hi)
}

/// The low 64 bits of `a·b` (14 instructions).
fn mul64(ctx: &mut Ctx, a: Pair, b: Pair) -> (Value, Value) {
    let lo = ctx.builder().imul(a.lo, b.lo);
    let hi = umul_hi(ctx, a.lo, b.lo);
    let c1 = ctx.builder().imul(a.lo, b.hi);
    let c2 = ctx.builder().imul(a.hi, b.lo);
    let hi = ctx.builder().iadd(hi, c1);
    let hi = ctx.builder().iadd(hi, c2);
    (lo, hi)
}

/// Minimum (`Lt`) or maximum (`Gt`) (4 instructions): the high word is the minimum/maximum of
/// the high words; the low word comes from the low words' minimum/maximum when the high words
/// are equal, else from the operand whose high word wins.
fn minmax64(ctx: &mut Ctx, a: Pair, b: Pair, signed: bool, cond: Condition) -> (Value, Value) {
    let by_lo = ctx.builder().csel(false, cond, a.lo, b.lo, a.lo, b.lo);
    let by_hi = ctx.builder().csel(signed, cond, a.hi, b.hi, a.lo, b.lo);
    let lo = ctx.builder().csel(false, Condition::Eq, a.hi, b.hi, Src::new(by_lo), Src::new(by_hi));
    let hi = ctx.builder().csel(signed, cond, a.hi, b.hi, a.hi, b.hi);
    (lo, hi)
}

/// `a cond b` as a `~0`/`0` mask (3 instructions).
fn cmp64(ctx: &mut Ctx, a: Pair, b: Pair, signed: bool, cond: Condition) -> Value {
    use Condition::*;
    match cond {
        Eq | Ne => {
            let l = ctx.builder().icmp(false, cond, a.lo, b.lo, ResultType::M1);
            let h = ctx.builder().icmp(false, cond, a.hi, b.hi, ResultType::M1);
            if cond == Eq { ctx.builder().and(l, h) } else { ctx.builder().or(l, h) }
        }
        _ => {
            // Decided by the high words unless they are equal.
            let l = ctx.builder().icmp(false, cond, a.lo, b.lo, ResultType::M1);
            let h = ctx.builder().icmp(signed, cond, a.hi, b.hi, ResultType::M1);
            ctx.builder().csel(false, Eq, a.hi, b.hi, Src::new(l), Src::new(h))
        }
    }
}

fn compare64(ctx: &mut Ctx, inst: &Instruction, signed: bool, cond: Condition) {
    // tgsi.rst: pair xy's result goes to x, pair zw's to z; the other channel of a pair only
    // when its first is masked off (as the interpreter does).
    let mask = inst.dst[0].write_mask;
    let enabled = |c: usize| mask.components().any(|m| m.index() == c);
    let mut out = [None; 4];
    for p in 0..2 {
        if !pair_enabled(inst, p) {
            continue;
        }
        let a = src64(ctx, inst, 0, p);
        let b = src64(ctx, inst, 1, p);
        let c = if enabled(2 * p) { 2 * p } else { 2 * p + 1 };
        out[c] = Some(cmp64(ctx, a, b, signed, cond));
    }
    write(ctx, inst, 0, out, Kind::Int);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shift64 {
    Left,
    Logical,
    Arithmetic,
}

fn shift64_op(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode, kind: Shift64) {
    let mut out = [None; 4];
    for p in 0..2 {
        if !pair_enabled(inst, p) {
            continue;
        }
        let a = src64(ctx, inst, 0, p);
        let s = source(ctx, inst, opcode, 1, p);
        let (lo, hi) = shift64(ctx, a, s, kind);
        out[2 * p] = Some(lo);
        out[2 * p + 1] = Some(hi);
    }
    write(ctx, inst, 0, out, Kind::Int);
}

/// A 64-bit shift by `s mod 64` (constant counts: at most 3 instructions; variable: 8, 9 for
/// the arithmetic shift). The hardware takes 32-bit shift counts modulo 32; the bits crossing
/// between the words move with a double shift by 1 and by `31 − s` so that a count of 0 moves
/// none; bit 5 of the count selects the cross-word case.
fn shift64(ctx: &mut Ctx, a: Pair, s: Src, kind: Shift64) -> (Value, Value) {
    use Shift64::*;
    let signed = kind == Arithmetic;
    if let Some(c) = s.operand.as_const() {
        return shift64_const(ctx, a, c & 63, kind);
    }
    let sb = byte0(s);
    // (near, far): the word the bits shift within, and the word they shift out of into it.
    let (near, far) = if kind == Left { (a.hi, a.lo) } else { (a.lo, a.hi) };
    let inv = ctx.builder().isub(Src::konst(31), s);
    let (main, cross) =
        if kind == Left { (V::LSHIFT_OR_I32, V::RSHIFT_OR_I32) } else { (V::RSHIFT_OR_I32, V::LSHIFT_OR_I32) };
    // far shifted within itself (the whole result word when s ≥ 32), near's own part.
    let far_shifted = shift_op(ctx, main, signed, far, sb, Src::konst(0));
    let near_shifted = shift_op(ctx, main, false, near, sb, Src::konst(0));
    let spill = shift_op(ctx, cross, false, far, shift_const(1), Src::konst(0));
    let near_word = shift_op(ctx, cross, false, Src::new(spill), byte0(Src::new(inv)), Src::new(near_shifted));
    let big = ctx.builder().and(s, Src::konst(32));
    let near_out = ctx.builder().csel(
        false,
        Condition::Eq,
        Src::new(big),
        Src::konst(0),
        Src::new(near_word),
        Src::new(far_shifted),
    );
    let fill = if signed { Src::new(shr_const(ctx, true, far, 31)) } else { Src::konst(0) };
    let far_out = ctx.builder().csel(false, Condition::Eq, Src::new(big), Src::konst(0), Src::new(far_shifted), fill);
    if kind == Left { (far_out, near_out) } else { (near_out, far_out) }
}

fn shift64_const(ctx: &mut Ctx, a: Pair, c: u32, kind: Shift64) -> (Value, Value) {
    use Shift64::*;
    let signed = kind == Arithmetic;
    let (near, far) = if kind == Left { (a.hi, a.lo) } else { (a.lo, a.hi) };
    let (main, cross) =
        if kind == Left { (V::LSHIFT_OR_I32, V::RSHIFT_OR_I32) } else { (V::RSHIFT_OR_I32, V::LSHIFT_OR_I32) };
    let (near_out, far_out) = if c == 0 {
        (operand::to_value(ctx, near), operand::to_value(ctx, far))
    } else if c < 32 {
        let near_shifted = shift_op(ctx, main, false, near, shift_const(c), Src::konst(0));
        let near_out = shift_op(ctx, cross, false, far, shift_const(32 - c), Src::new(near_shifted));
        (near_out, shift_op(ctx, main, signed, far, shift_const(c), Src::konst(0)))
    } else {
        let near_out = if c == 32 {
            operand::to_value(ctx, far)
        } else {
            shift_op(ctx, main, signed, far, shift_const(c - 32), Src::konst(0))
        };
        let far_out = if signed { shr_const(ctx, true, far, 31) } else { ctx.builder().konst(0) };
        (near_out, far_out)
    };
    if kind == Left { (far_out, near_out) } else { (near_out, far_out) }
}

/// U2I64 (zero extension) and I2I64 (sign extension) of channel p of the source into pair p.
fn widen64(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode, signed: bool) {
    let mut out = [None; 4];
    for p in 0..2 {
        if !pair_enabled(inst, p) {
            continue;
        }
        let x = source(ctx, inst, opcode, 0, p);
        let hi = if signed { shr_const(ctx, true, x, 31) } else { ctx.builder().konst(0) };
        out[2 * p] = Some(operand::to_value(ctx, x));
        out[2 * p + 1] = Some(hi);
    }
    write(ctx, inst, 0, out, Kind::Int);
}

// ---- 64-bit division ---------------------------------------------------------------------------

/// U64DIV (`signed` false, `remainder` false), U64MOD, I64DIV, I64MOD of one pair.
///
/// The unsigned core is a restoring shift-subtract loop ([`udiv64_loop`]); signed operations
/// divide the absolute values and fix the sign (the quotient negative when the signs differ,
/// the remainder with the dividend's sign). By zero, as the 32-bit opcodes: U64DIV, U64MOD and
/// I64MOD give all ones, I64DIV −1 for n ≥ 0 and 1 for n < 0 (the unsigned all-ones quotient
/// through the sign fix). Constant divisors: 0 folds, unsigned powers of two are shifts/masks.
fn div64(ctx: &mut Ctx, n: Pair, d: Pair, signed: bool, remainder: bool) -> (Value, Value) {
    use Condition::*;
    match d.as_const() {
        Some(0) if signed && !remainder => {
            let lo = ctx.builder().csel(true, Lt, n.hi, Src::konst(0), Src::konst(1), Src::konst(u32::MAX));
            let hi = ctx.builder().csel(true, Lt, n.hi, Src::konst(0), Src::konst(0), Src::konst(u32::MAX));
            return (lo, hi);
        }
        Some(0) => {
            let ones = ctx.builder().konst(u32::MAX);
            return (ones, ones);
        }
        Some(dc) if !signed && dc.is_power_of_two() => {
            let k = dc.trailing_zeros();
            if !remainder {
                return shift64_const(ctx, n, k, Shift64::Logical);
            }
            let (ml, mh) = ((dc - 1) as u32, ((dc - 1) >> 32) as u32);
            let lo =
                if ml == u32::MAX { operand::to_value(ctx, n.lo) } else { ctx.builder().and(n.lo, Src::konst(ml)) };
            let hi = if mh == 0 { ctx.builder().konst(0) } else { ctx.builder().and(n.hi, Src::konst(mh)) };
            return (lo, hi);
        }
        _ => {}
    }
    let (un, ud) = if signed { (Pair::of(abs64(ctx, n)), Pair::of(abs64(ctx, d))) } else { (n, d) };
    let (q, r) = udiv64(ctx, un, ud);
    let by_zero = ctx.builder().or(d.lo, d.hi);
    let zero_select = |ctx: &mut Ctx, v: (Value, Value)| -> (Value, Value) {
        let ones = Src::konst(u32::MAX);
        let lo = ctx.builder().csel(false, Eq, Src::new(by_zero), Src::konst(0), ones, Src::new(v.0));
        let hi = ctx.builder().csel(false, Eq, Src::new(by_zero), Src::konst(0), ones, Src::new(v.1));
        (lo, hi)
    };
    let sign_fix = |ctx: &mut Ctx, v: (Value, Value), negative: Src| -> (Value, Value) {
        let (nl, nh) = neg64(ctx, Pair::of(v));
        let lo = ctx.builder().csel(true, Lt, negative, Src::konst(0), Src::new(nl), Src::new(v.0));
        let hi = ctx.builder().csel(true, Lt, negative, Src::konst(0), Src::new(nh), Src::new(v.1));
        (lo, hi)
    };
    match (signed, remainder) {
        (false, false) => zero_select(ctx, q),
        (false, true) => zero_select(ctx, r),
        (true, false) => {
            let q = zero_select(ctx, q);
            let signs = ctx.builder().xor(n.hi, d.hi);
            sign_fix(ctx, q, Src::new(signs))
        }
        (true, true) => {
            let r = sign_fix(ctx, r, n.hi);
            zero_select(ctx, r)
        }
    }
}

/// Unsigned 64-bit `(n / d, n % d)`: when both high words are zero, the 32-bit sequence
/// (§C.7, [`udiv_core`]); otherwise [`udiv64_loop`]. A branch picks the path (lanes of both
/// kinds run both), and φs at the join merge the results.
fn udiv64(ctx: &mut Ctx, n: Pair, d: Pair) -> (Pair2, Pair2) {
    let wide = ctx.builder().or(n.hi, d.hi);
    let pre = ctx.block;
    let slow = ctx.new_block();
    let fast = ctx.new_block();
    let join = ctx.new_block();
    ctx.shader.set_terminator(pre, Terminator::Branch { cond: wide, if_zero: true, taken: fast, fallthrough: slow });
    ctx.switch_to(slow);
    let (lq, lr) = udiv64_loop(ctx, n, d);
    let slow_end = ctx.block;
    ctx.shader.set_terminator(slow_end, Terminator::Jump(join));
    ctx.switch_to(fast);
    let q32 = udiv_core(ctx, n.lo, d.lo, false);
    let r32 = udiv_core(ctx, n.lo, d.lo, true);
    let zero = ctx.builder().konst(0);
    ctx.shader.set_terminator(fast, Terminator::Jump(join));
    ctx.switch_to(join);
    let preds = ctx.shader.block(join).preds.clone();
    let mut merge = |from_slow: Value, from_fast: Value| -> Value {
        let args: Vec<Value> = preds.iter().map(|&p| if p == fast { from_fast } else { from_slow }).collect();
        let list = ctx.shader.list(&args);
        let mut phi = Inst::pseudo(InstKind::Phi);
        phi.dests = ctx.shader.new_values(1);
        phi.args = list;
        let id = ctx.shader.push(join, phi);
        ctx.shader.get(ctx.shader.inst(id).dests)[0]
    };
    let q = (merge(lq.0, q32), merge(lq.1, zero));
    let r = (merge(lr.0, r32), merge(lr.1, zero));
    (q, r)
}

/// Unsigned 64-bit `(n / d, n % d)` by restoring division, one quotient bit per iteration.
///
/// The dividend is first shifted left by its leading zero count k (`q = n << k`), so the loop
/// runs `64 − k` times (0 for n = 0). Each iteration shifts the 65-bit `carry:r` and `q` left
/// as one (the top bit of `q` enters `r`), subtracts `d` from `r` where `carry:r ≥ d`, and
/// shifts that outcome into `q` as the new low bit. The iteration count differs per lane; the
/// loop runs until every lane is done. 19 instructions per iteration plus the exit test; the
/// result for d = 0 is meaningless (the callers select).
fn udiv64_loop(ctx: &mut Ctx, n: Pair, d: Pair) -> (Pair2, Pair2) {
    use Condition::*;
    let (dl, dh) = (Src::new(operand::to_value(ctx, d.lo)), Src::new(operand::to_value(ctx, d.hi)));
    // k = clz64(n): 32 + clz(lo) when the high word is zero.
    let clz_hi = ctx.builder().op(V::CLZ_U32, &[n.hi]);
    let clz_lo = ctx.builder().op(V::CLZ_U32, &[n.lo]);
    let clz_lo = ctx.builder().iadd_imm(clz_lo, 32);
    let k = ctx.builder().csel(false, Eq, n.hi, Src::konst(0), Src::new(clz_lo), Src::new(clz_hi));
    let q0 = shift64(ctx, n, Src::new(k), Shift64::Left);
    let count0 = ctx.builder().isub(Src::konst(64), k);
    let zero = ctx.builder().konst(0);
    let init = [zero, zero, q0.0, q0.1, count0];

    let pre = ctx.block;
    let header = ctx.new_block();
    let body = ctx.new_block();
    let exit = ctx.new_block();
    ctx.shader.set_terminator(pre, Terminator::Jump(header));
    ctx.switch_to(header);
    let phis: Vec<(InstId, Value)> = (0..init.len())
        .map(|_| {
            let mut phi = Inst::pseudo(InstKind::Phi);
            phi.dests = ctx.shader.new_values(1);
            let id = ctx.shader.push(header, phi);
            (id, ctx.shader.get(ctx.shader.inst(id).dests)[0])
        })
        .collect();
    let [rl, rh, ql, qh, count] = [0, 1, 2, 3, 4].map(|i| Src::new(phis[i].1));
    let more = ctx.builder().icmp(true, Gt, count, Src::konst(0), ResultType::M1);
    ctx.shader.set_terminator(header, Terminator::Branch { cond: more, if_zero: true, taken: exit, fallthrough: body });

    ctx.switch_to(body);
    let top = |ctx: &mut Ctx, x: Src| Src::new(shr_const(ctx, false, x, 31));
    let carry = top(ctx, rh);
    let rl_top = top(ctx, rl);
    let rh1 = shift_op(ctx, V::LSHIFT_OR_I32, false, rh, shift_const(1), rl_top);
    let qh_top = top(ctx, qh);
    let rl1 = shift_op(ctx, V::LSHIFT_OR_I32, false, rl, shift_const(1), qh_top);
    let ql_top = top(ctx, ql);
    let qh1 = shift_op(ctx, V::LSHIFT_OR_I32, false, qh, shift_const(1), ql_top);
    // carry:r ≥ d, with the carry ORed into both word comparisons.
    let ge_word = |ctx: &mut Ctx, a: Value, b: Src| {
        let mut mach = Instr::new(V::ICMP_OR_U32);
        let _ = mach.set_condition(Ge);
        let _ = mach.set_result_type(ResultType::M1);
        ctx.builder().alu(mach, &[Src::new(a), b, carry])
    };
    let ge_hi = ge_word(ctx, rh1, dh);
    let ge_lo = ge_word(ctx, rl1, dl);
    let ge = ctx.builder().csel(false, Eq, Src::new(rh1), dh, Src::new(ge_lo), Src::new(ge_hi));
    let sub_lo = ctx.builder().and(dl, Src::new(ge));
    let sub_hi = ctx.builder().and(dh, Src::new(ge));
    let rl2 = ctx.builder().isub(rl1, sub_lo);
    let borrow = ctx.builder().icmp(false, Lt, rl1, Src::new(sub_lo), ResultType::M1);
    let rh2 = ctx.builder().isub(rh1, sub_hi);
    let rh2 = ctx.builder().iadd(rh2, borrow);
    let bit = shr_const(ctx, false, Src::new(ge), 31);
    let ql1 = shift_op(ctx, V::LSHIFT_OR_I32, false, ql, shift_const(1), Src::new(bit));
    let count1 = ctx.builder().iadd_imm(count, u32::MAX);
    let next = [rl2, rh2, ql1, qh1, count1];
    ctx.shader.set_terminator(body, Terminator::Jump(header));
    // Header φs: (pre, body) in predecessor order.
    for (k, &(id, _)) in phis.iter().enumerate() {
        let list = ctx.shader.list(&[init[k], next[k]]);
        ctx.shader.inst_mut(id).args = list;
    }
    ctx.switch_to(exit);
    let v = |s: Src| s.operand.as_value().expect("a φ");
    ((v(ql), v(qh)), (v(rl), v(rh)))
}

/// A 64-bit result: (low word, high word).
type Pair2 = (Value, Value);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_are_exact_on_edges() {
        for d in (3u32..3000).filter(|d| !d.is_power_of_two()).chain([7, 641, 6700417, 0x7FFF_FFFF, 1_000_000]) {
            let eval = |n: u32| -> u32 {
                match magic(d) {
                    Magic::Mul { pre, m, post } => (((u64::from(n >> pre) * u64::from(m)) >> 32) >> post) as u32,
                    Magic::MulAdd { m, post } => {
                        let t = ((u64::from(n) * u64::from(m)) >> 32) as u32;
                        (((u64::from(n) + u64::from(t)) >> 1) >> post) as u32
                    }
                }
            };
            for n in [0, 1, d - 1, d, d + 1, u32::MAX, u32::MAX - 1, u32::MAX / d * d, u32::MAX / d * d - 1] {
                assert_eq!(eval(n), n / d, "{n} / {d} with {:?}", magic(d));
            }
        }
    }
}
