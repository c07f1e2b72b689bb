//! Reciprocal, square root, division, exponentials, logarithms, powers, sine and cosine, and the
//! legacy opcodes built from them: RCP, RSQ, SQRT, DIV, EX2, LG2, POW, EXP, LOG, SIN, COS, SCS,
//! LIT, DST, NRM, NRM4, RCC, RFL and LDEXP (aliases such as RECIP, EXPP, LOGP, POWER and SINCOS
//! arrive as these). The sequences are the Valhall recipes of §C.3 of the lowering reference
//! (Mesa's), with the changes listed under "Differences from Mesa".
//!
//! # What the bounds assume: the SFU contract
//!
//! The emulator implements these operations as stated; the accuracy figures below follow from
//! them, and `tests/lower_transcendental.rs` runs the lowered IR under exactly this model.
//!
//! | instruction | result |
//! | --- | --- |
//! | `FRCP.f32 x`, `FRSQ.f32 x` | `1/x`, `1/√x` correctly rounded (IEEE specials: `rsq(−0) = −∞`, `rsq(x < 0) = NaN`); subnormals kept |
//! | `FEXP.f32 fixed, f` | NaN if `f` is NaN; +∞ if `f ≥ 2^31`; +0 if `f < −2^31`; else `2^(fixed·2^-24)` correctly rounded (subnormal results kept) |
//! | `FREXPE.f32[.log] x` | the integer e with `\|x\| = m·2^e`, m in [0.5, 1) (default) or [0.75, 1.5) (`.log`); 0 for ±0, ±∞, NaN; independent of the sign |
//! | `FREXPM.f32 x` | `sign(x)·m` of the default decomposition |
//! | `FADD_LSCALE.f32 a, b` | `a + b·2^-e`, e = `FREXPE.log(b)`, one rounding (`a + b` for b = ±0, ±∞, NaN); so `FADD_LSCALE −1, x = m − 1`, exact |
//! | `FLOGD.f32 x` | `log2(m)/(m − 1)` (1/ln 2 at m = 1) correctly rounded, m of the `.log` decomposition; NaN for NaN and x < 0 (also −∞); +∞ for ±0 and +∞ |
//! | `FSIN_TABLE.u6 v`, `FCOS_TABLE.u6 v` | `sin(kπ/32)`, `cos(kπ/32)` correctly rounded, `k = v & 63` (0 and ±1 exact) |
//! | `FMA_RSCALE.f32 a, b, c, d` | `round(a·b + c)·2^d` (FMA then LDEXP), then the clamp |
//! | `FMA_RSCALE_N.f32` | the same, with `a·b` taken as 0 when a or b is ±0, whatever the other (∞, NaN) |
//! | clamps, `CSEL.f32`, `MUX.i32.bit` | as the ISA says: `clamp_m1_1(NaN) = −1`; ordered comparisons; `(A & mask) \| (B & ~mask)` |
//!
//! With a FEXP within u ulp instead of 0.5, EX2 below becomes u + 0.35 ulp; with a FLOGD within
//! u ulp, LG2 becomes about 0.5 + 2u ulp; POW's slope is `ln 2·(2·LG2 + 1)` ulp per unit of
//! `|log2 result|`.
//!
//! # Opcodes
//!
//! Instruction counts are IR machine instructions as lowered (constants `#…` are mapped to the
//! immediate table or materialised by legalisation; result constants such as LIT's 1.0 are
//! copies). "ulp" is the spacing of f32 at the exact result (2^-149 below 2^-126); errors are
//! against the exact mathematical value, so a comparison with a correctly rounded reference
//! needs another 0.5 ulp.
//!
//! | TGSI | sequence | instr. | accuracy (measured max) |
//! | --- | --- | --- | --- |
//! | RCP | `FRCP x` | 1 | correctly rounded |
//! | RSQ | `FRSQ x` (no implicit \|x\|) | 1 | correctly rounded |
//! | SQRT | `FRCP(FRSQ x)` | 2 | < 1.5 ulp (1.4882, every float of [1, 4)) |
//! | DIV | `FRCP b; FMA a, r, −0` per channel | 2/ch | < 1.5 ulp for 2^-126 ≤ \|b\| ≤ 2^126, \|a/b\| < 2^127 (1.4753) |
//! | EX2 | `FMA_RSCALE x, 1, −0, 24; F32_TO_S32 (rte); FEXP` | 3 | ≤ 0.85 ulp on [−128, 128) (0.8454); 0.5 ulp when x is a multiple of 2^-24 (\|x\| ≥ 0.5); +0 below −128; +∞ from 128 |
//! | LG2 | `FREXPE.log; S32_TO_F32; FADD_LSCALE −1, x; FLOGD; FMA` | 5 | < 1.5 ulp for every x > 0, subnormals included (1.4931, every float of [0.5, 2)); on [0.75, 1.5) this is relative to a small result; powers of two and log2 1 = +0 exact |
//! | POW | LG2 of x; `FMA_RSCALE_N y, l, −0, 24; F32_TO_S32; FEXP` | 8 | ≤ 0.85 + 2.78·\|t\| ulp, t = y·log2 x in [−128, 128) (measured slope 1.55 ulp per unit of \|t\|; 161.5 ulp at t ≈ −117); +0 for t < −128 |
//! | EXP | x: `FROUND.rtn`, EX2 of it; y: `FADD x, −⌊x⌋`; z: EX2 | 8 | x exact (+0 for ⌊x⌋ < −128); y one rounding (as FRC); z as EX2 |
//! | LOG | LG2 of \|x\|; `d = z − z`; x: `FROUND.rtn(m − 1) + e`, CSEL on d; y: `FMA \|FREXPM x\|, 2, d` | 11 | x, y exact; z as LG2 |
//! | SIN, COS | reduction `x_u6 = FMA x, 1/π, 1.5·2^18; q = x_u6 − 1.5·2^18; e = FMA q, −π, x`; tables at x_u6; `FMA_RSCALE e, e, −0, −1`; `FMA`, `FMA`, `FADD.clamp_m1_1`; `CSEL e == e` | 10 | ≤ 1.98e-5 + 2.8e-8·\|x\| absolute for \|x\| < 2^17·π ≈ 411774 (1.9885e-5 on [−2π, 2π]; slope 2.779e-8); beyond: some value in [−1, 1]; NaN for ±∞, NaN |
//! | SCS | one reduction, COS in x, SIN in y, (0, 1) | 14 | bit-identical to COS, SIN |
//! | LIT | `FMAX x, 0`; `FMAX y, 0`, LG2; `FMAX w, −128`, `FMIN w, 128`; `FMA_RSCALE_N w', l, −0, 24`; `F32_TO_S32`; `FEXP`; `CSEL.gt` | 13 | z bit-identical to POW(max(y, 0), clamp(w, −128, 128)) |
//! | DST | `FMA s0.y, s1.y, −0`, copies | 1 | exact (one rounding) |
//! | NRM, NRM4 | DP3/DP4 (fused chain), `FRSQ`, one FMUL per channel | 7, 9 | exact given FRSQ |
//! | RCC | `FRCP; FMAX \|r\|, 2^-64; FMIN 2^64; MUX.bit` sign of r; `CSEL r == r` | 5 | exact given FRCP |
//! | RFL | two DP3, `FRCP`, `FADD d1, d1`, `FMUL`, FMA per channel | 12 | exact given FRCP |
//! | LDEXP | `LDEXP.f32 x, n` per channel | 1/ch | correctly rounded (rte) |
//!
//! The SIN/COS error is the dropped cubic term (\|e\|³/6 ≤ (π/64)³/6 = 1.971e-5) plus roundings
//! of the tables and the sum, plus `|x|/π·|π_f32 − π|` from the reduction. The POW slope is
//! `ln 2·(2·1.5 + 1)`: LG2's relative error (≤ 3·2^-24), the product's rounding (2^-24) and the
//! 8.24 quantisation (2^-25 absolute), amplified by `2^t`'s derivative.
//!
//! # Semantics shared with the interpreter
//!
//! * RSQ is `1/√x` without `|x|`: x < 0 → NaN, −0 → −∞. SQRT is `rcp(rsq(x))`, so −0 → −0.
//! * DIV is `a·rcp(b)`, two roundings (bit-exact with `a * (1.0 / b)` in f32).
//! * LG2 has IEEE log2's special values (±0 → −∞, +∞ → +∞, x < 0 → NaN).
//! * EX2 (and EXP.x, EXP.z) gives +0 below −128: results under 2^-128 are flushed.
//! * POW is `2^(y·log2 x)` with the product taken as 0 when y = ±0 or x = 1, so `x^0 = 1` and
//!   `1^y = 1` for every x and y, ∞ and NaN included (IEEE pow; Mesa's NIR gives NaN for 0^0,
//!   ∞^0, NaN^0, 1^∞, 1^NaN). Otherwise a negative base (−∞ too) gives NaN — no integer
//!   exponent special case; `(±0)^y` is +0 for y > 0 and +∞ for y < 0; results under 2^-128
//!   are +0.
//! * LIT: `y = max(x, 0)` (maxNum: NaN → 0); `z = x > 0 ? max(y, 0)^clamp(w, −128, 128) : 0`
//!   with POW's rules (so w = 0 gives 1, also for y ≤ 0) and `clamp = min(max(w, −128), 128)`
//!   with minNum/maxNum, so a NaN exponent clamps to −128; x NaN gives z = 0.
//! * EXP: x = 2^⌊x⌋ exactly, y = `x − ⌊x⌋` with one rounding; LOG: x = ⌊log2 |x|⌋ and
//!   y = `|x|·2^-⌊log2 |x|⌋` exactly, (−∞, NaN) for x = ±0, (+∞, NaN) for ±∞.
//! * SIN, COS of ±∞ and NaN are NaN; for \|x\| ≥ 2^17·π the result is unconstrained in [−1, 1].
//! * RCC clamps `rcp(x)` to ±[2^-64, 2^64] keeping its sign: ±∞ → ±2^-64, ±0 → ±2^64, NaN
//!   stays NaN.
//! * NRM/NRM4 scale each channel by `rsq(DPn(s, s))` (DPn as in docs/lowering.md); RFL is
//!   `fma(q, s0, −s1)` with `q = (2·dot3(s0, s1))·rcp(dot3(s0, s0))`.
//!
//! # Differences from Mesa
//!
//! * SIN/COS reduce with 1/π and π (immediate-table entries 18 and 20) and the bias 1.5·2^18,
//!   which gives the same table index as Mesa's `2/3.14159`, `−3.14159/2` and 1.5·2^19 but an
//!   exact-π reduction (error slope 2.8e-8·|x| instead of 8.4e-7·|x|) and one materialised
//!   constant instead of three. The clamp sits on the final sum instead of the correction, so
//!   the result stays in [−1, 1] (Mesa: [−2, 2]), and a CSEL restores NaN for ±∞ and NaN inputs
//!   (Mesa returns −1 or 0 there because `clamp_m1_1(NaN) = −1`): one more instruction.
//! * POW uses FMA_RSCALE_N instead of FMA_RSCALE (IEEE `x^0` and `1^y`, see above).
//! * LOG computes x and y exactly from the reduction instead of `floor(log2 |x|)` and a division.
//! * LIT clamps w with FMAX and FMIN (a `clamp_m1_1` on `w·2^-7` would save one instruction
//!   but flushes denormal exponents to 0, turning `0^w` into 1).
//! * RCC, SCS, NRM, NRM4 and RFL no longer exist in Mesa; they follow their legacy definitions.

use super::Ctx;
use super::alu::{componentwise, replicate};
use super::operand::{Kind, fsrc, isrc, to_value, write};
use crate::ir::builder::NEG_ZERO;
use crate::ir::{Src, Value};
use crate::tgsi::ast::Instruction;
use crate::tgsi::opcodes::Opcode;
use crate::valhall::Instr;
use crate::valhall::Opcode as Op;
use crate::valhall::tables::{Clamp, Condition, Mux, RoundMode};

/// 1/π as f32 (immediate-table entry 18): turns radians into half turns.
const INV_PI: u32 = 0x3EA2_F983;
/// π as f32 (immediate-table entry 20).
const PI: u32 = 0x4049_0FDB;
/// 1.5·2^18: adding it rounds a number of half turns to a multiple of 1/32 (ulp of [2^18, 2^19))
/// and leaves that multiple, modulo 64, in the low 6 mantissa bits: the table index k of the
/// angle k·π/32.
const SINCOS_BIAS: u32 = 0x48C0_0000;
/// 2^-64 and 2^64, RCC's bounds (5.42101e-20 and 1.84467e19 in NV_vertex_program1_1).
const RCC_MIN: u32 = 0x1F80_0000;
const RCC_MAX: u32 = 0x5F80_0000;
const ONE: u32 = 0x3F80_0000;
const MINUS_ONE: u32 = 0xBF80_0000;
const TWO: u32 = 0x4000_0000;
const SIGN_BIT: u32 = 0x8000_0000;

/// Lowers `inst` if it belongs to this family; returns whether it did.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    match opcode {
        Opcode::Rcp => scalar(ctx, inst, 1, |ctx, s| ctx.builder().frcp(s[0])),
        Opcode::Rsq => scalar(ctx, inst, 1, |ctx, s| ctx.builder().frsq(s[0])),
        Opcode::Sqrt => scalar(ctx, inst, 1, |ctx, s| sqrt(ctx, s[0])),
        Opcode::Rcc => scalar(ctx, inst, 1, |ctx, s| rcc(ctx, s[0])),
        Opcode::Div => componentwise(ctx, inst, |ctx, s| div(ctx, s[0], s[1]), 2),
        Opcode::Ex2 => scalar(ctx, inst, 1, |ctx, s| ex2(ctx, s[0])),
        Opcode::Lg2 => scalar(ctx, inst, 1, |ctx, s| lg2(ctx, s[0])),
        Opcode::Pow => scalar(ctx, inst, 2, |ctx, s| pow(ctx, s[0], s[1])),
        Opcode::Sin => scalar(ctx, inst, 1, |ctx, s| {
            let r = reduce(ctx, s[0]);
            sin_of(ctx, &r)
        }),
        Opcode::Cos => scalar(ctx, inst, 1, |ctx, s| {
            let r = reduce(ctx, s[0]);
            cos_of(ctx, &r)
        }),
        Opcode::Scs => scs(ctx, inst),
        Opcode::Exp => exp(ctx, inst),
        Opcode::Log => log(ctx, inst),
        Opcode::Lit => lit(ctx, inst),
        Opcode::Dst => dst(ctx, inst),
        Opcode::Nrm => normalize(ctx, inst, 3),
        Opcode::Nrm4 => normalize(ctx, inst, 4),
        Opcode::Rfl => reflect(ctx, inst),
        Opcode::Ldexp => ldexp(ctx, inst),
        _ => return false,
    }
    true
}

// ---- Driving the opcodes ----------------------------------------------------------------------

/// A replicated-scalar opcode with `n` sources read from `.x` (after the swizzle).
fn scalar(ctx: &mut Ctx, inst: &Instruction, n: usize, f: impl Fn(&mut Ctx, &[Src]) -> Value) {
    if inst.dst[0].write_mask.components().next().is_none() {
        return;
    }
    let mut srcs = [Src::NONE; 4];
    for (k, s) in srcs.iter_mut().enumerate().take(n) {
        *s = fsrc(ctx, inst, k, 0);
    }
    let value = f(ctx, &srcs[..n]);
    replicate(ctx, inst, value, Kind::Float);
}

/// Whether channel `c` (0–3) of destination 0 is written.
fn writes(inst: &Instruction, c: usize) -> bool {
    inst.dst[0].write_mask.0 & (1 << c) != 0
}

/// A register holding the f32 constant with bits `bits`.
fn constant(ctx: &mut Ctx, bits: u32) -> Value {
    ctx.builder().konst(bits)
}

/// Source `src` without its sign modifiers, for instructions that only look at the magnitude
/// (FREXPE/FREXPM have no `.neg`/`.abs` fields; the exponent does not depend on the sign).
fn magnitude_source(src: Src) -> Src {
    Src { neg: false, abs: false, ..src }
}

// ---- Building blocks --------------------------------------------------------------------------

/// `FMA_RSCALE*` (`op`): `a·b + c`, then scaled by 2^`shift`, then `clamp`.
fn rscale(ctx: &mut Ctx, op: Op, [a, b, c]: [Src; 3], shift: i32, clamp: Clamp) -> Value {
    let mut mach = Instr::new(op);
    if clamp != Clamp::None {
        let _ = mach.set_clamp(clamp);
    }
    ctx.builder().alu(mach, &[a, b, c, Src::konst(shift as u32)])
}

/// `FADD a, b` with a clamp on the result.
fn fadd_clamped(ctx: &mut Ctx, a: Src, b: Src, clamp: Clamp) -> Value {
    let mut mach = Instr::new(Op::FADD_F32);
    let _ = mach.set_clamp(clamp);
    ctx.builder().alu(mach, &[a, b])
}

/// `x == x ? value : x`: restores the NaN of `x` in a result computed through a clamp.
fn keep_nan(ctx: &mut Ctx, x: Value, value: Value) -> Value {
    ctx.builder().csel_f32(Condition::Eq, Src::new(x), Src::new(x), Src::new(value), Src::new(x))
}

/// `√x = rcp(rsq(x))`.
fn sqrt(ctx: &mut Ctx, x: Src) -> Value {
    let r = ctx.builder().frsq(x);
    ctx.builder().frcp(r)
}

/// `a / b = a · rcp(b)`.
fn div(ctx: &mut Ctx, a: Src, b: Src) -> Value {
    let r = ctx.builder().frcp(b);
    ctx.builder().fmul(a, r)
}

/// RCC: `rcp(x)` with its magnitude clamped to [2^-64, 2^64], sign kept, NaN kept.
fn rcc(ctx: &mut Ctx, x: Src) -> Value {
    let r = ctx.builder().frcp(x);
    let low = ctx.builder().fmax(Src::new(r).absolute(), Src::konst(RCC_MIN));
    let both = ctx.builder().fmin(low, Src::konst(RCC_MAX));
    let mut mux = Instr::new(Op::MUX_I32);
    let _ = mux.set("mux", Mux::Bit);
    let signed = ctx.builder().alu(mux, &[Src::new(r), Src::new(both), Src::konst(SIGN_BIT)]);
    keep_nan(ctx, r, signed)
}

/// `2^(t·2^-24)` from `t` (a float holding the exponent times 2^24): the 8.24 fixed-point
/// operand rounded to nearest even, and the float for FEXP's special cases.
fn exp_fixed(ctx: &mut Ctx, t: Value) -> Value {
    let fixed = ctx.builder().f2i(true, t, RoundMode::Rte);
    ctx.builder().op(Op::FEXP_F32, &[Src::new(fixed), Src::new(t)])
}

/// `2^x`.
fn ex2(ctx: &mut Ctx, x: Src) -> Value {
    let t = rscale(ctx, Op::FMA_RSCALE_F32, [x, Src::konst(ONE), Src::konst(NEG_ZERO)], 24, Clamp::None);
    exp_fixed(ctx, t)
}

/// The pieces of `log2 x = FLOGD(x)·(m − 1) + e`, `|x| = m·2^e` with m in [0.75, 1.5).
struct Log2 {
    /// e as a float.
    e: Value,
    /// m − 1, in [−0.25, 0.5).
    m1: Value,
    value: Value,
}

fn lg2_parts(ctx: &mut Ctx, x: Src) -> Log2 {
    let mut frexpe = Instr::new(Op::FREXPE_F32);
    let _ = frexpe.set_flag("log", true);
    let e = ctx.builder().alu(frexpe, &[magnitude_source(x)]);
    let e = ctx.builder().i2f(true, e);
    let m1 = ctx.builder().op(Op::FADD_LSCALE_F32, &[Src::konst(MINUS_ONE), x]);
    let d = ctx.builder().op(Op::FLOGD_F32, &[x]);
    let value = ctx.builder().fma(d, m1, e);
    Log2 { e, m1, value }
}

/// `log2 x`.
pub(super) fn lg2(ctx: &mut Ctx, x: Src) -> Value {
    lg2_parts(ctx, x).value
}

/// `x^y = 2^(y·log2 x)`, the product taken as 0 when y or log2 x is 0 (FMA_RSCALE_N).
fn pow(ctx: &mut Ctx, x: Src, y: Src) -> Value {
    let l = lg2(ctx, x);
    let t = rscale(ctx, Op::FMA_RSCALE_N_F32, [y, Src::new(l), Src::konst(NEG_ZERO)], 24, Clamp::None);
    exp_fixed(ctx, t)
}

/// The shared part of SIN and COS: `x = q·π + e` with q a multiple of 1/32, the table values
/// of q and `e²/2`.
struct Reduced {
    e: Value,
    sin: Value,
    cos: Value,
    half_e2: Value,
}

fn reduce(ctx: &mut Ctx, x: Src) -> Reduced {
    let x_u6 = ctx.builder().fma(x, Src::konst(INV_PI), Src::konst(SINCOS_BIAS));
    let q = ctx.builder().fadd(x_u6, Src::konst(SINCOS_BIAS ^ SIGN_BIT));
    let e = ctx.builder().fma(q, Src::konst(PI ^ SIGN_BIT), x);
    let sin = ctx.builder().op(Op::FSIN_TABLE_U6, &[Src::new(x_u6)]);
    let cos = ctx.builder().op(Op::FCOS_TABLE_U6, &[Src::new(x_u6)]);
    let half_e2 = rscale(ctx, Op::FMA_RSCALE_F32, [Src::new(e), Src::new(e), Src::konst(NEG_ZERO)], -1, Clamp::None);
    Reduced { e, sin, cos, half_e2 }
}

/// `sin(q + e) ≈ sin q + e·cos q − (e²/2)·sin q`, clamped to [−1, 1], NaN for x = ±∞ or NaN.
fn sin_of(ctx: &mut Ctx, r: &Reduced) -> Value {
    let quad = ctx.builder().fma(Src::new(r.half_e2).negated(), r.sin, Src::konst(NEG_ZERO));
    let corr = ctx.builder().fma(r.e, r.cos, quad);
    let s = fadd_clamped(ctx, Src::new(corr), Src::new(r.sin), Clamp::ClampM1_1);
    keep_nan(ctx, r.e, s)
}

/// `cos(q + e) ≈ cos q − e·sin q − (e²/2)·cos q`, clamped to [−1, 1], NaN for x = ±∞ or NaN.
fn cos_of(ctx: &mut Ctx, r: &Reduced) -> Value {
    let quad = ctx.builder().fma(Src::new(r.half_e2).negated(), r.cos, Src::konst(NEG_ZERO));
    let corr = ctx.builder().fma(r.e, Src::new(r.sin).negated(), quad);
    let c = fadd_clamped(ctx, Src::new(corr), Src::new(r.cos), Clamp::ClampM1_1);
    keep_nan(ctx, r.e, c)
}

/// `fma(a.x, b.x, fma(a.y, b.y, … a.n·b.n))` over sources `ka`, `kb` (docs/lowering.md).
fn dot(ctx: &mut Ctx, inst: &Instruction, ka: usize, kb: usize, n: usize) -> Value {
    let mut acc = Src::konst(NEG_ZERO);
    for c in (0..n).rev() {
        let a = fsrc(ctx, inst, ka, c);
        let b = fsrc(ctx, inst, kb, c);
        acc = Src::new(ctx.builder().fma(a, b, acc));
    }
    acc.operand.as_value().expect("n >= 1")
}

// ---- Opcodes with channel-dependent results ---------------------------------------------------

/// SCS: (cos x, sin x, 0, 1), one shared reduction.
fn scs(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    if writes(inst, 0) || writes(inst, 1) {
        let x = fsrc(ctx, inst, 0, 0);
        let r = reduce(ctx, x);
        if writes(inst, 0) {
            out[0] = Some(cos_of(ctx, &r));
        }
        if writes(inst, 1) {
            out[1] = Some(sin_of(ctx, &r));
        }
    }
    if writes(inst, 2) {
        out[2] = Some(constant(ctx, 0));
    }
    if writes(inst, 3) {
        out[3] = Some(constant(ctx, ONE));
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// EXP: (2^⌊x⌋, x − ⌊x⌋, 2^x, 1).
fn exp(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    let x = fsrc(ctx, inst, 0, 0);
    if writes(inst, 0) || writes(inst, 1) {
        let floor = ctx.builder().fround(x, RoundMode::Rtn);
        if writes(inst, 0) {
            out[0] = Some(ex2(ctx, Src::new(floor)));
        }
        if writes(inst, 1) {
            out[1] = Some(ctx.builder().fadd(x, Src::new(floor).negated()));
        }
    }
    if writes(inst, 2) {
        out[2] = Some(ex2(ctx, x));
    }
    if writes(inst, 3) {
        out[3] = Some(constant(ctx, ONE));
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// LOG: (⌊log2 |x|⌋, |x|/2^⌊log2 |x|⌋, log2 |x|, 1). x and y are exact (from the exponent and
/// significand); the LG2 result supplies their values for |x| = 0, ∞ and NaN.
fn log(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    let x = fsrc(ctx, inst, 0, 0);
    if writes(inst, 0) || writes(inst, 1) || writes(inst, 2) {
        let lg = lg2_parts(ctx, x.absolute());
        let z = lg.value;
        if writes(inst, 0) || writes(inst, 1) {
            // 0 when log2 |x| is finite, NaN when it is ±∞ or NaN.
            let d = ctx.builder().fadd(z, Src::new(z).negated());
            if writes(inst, 0) {
                // ⌊log2 |x|⌋ = e + ⌊m − 1⌋ (m − 1 in [−0.25, 0.5)).
                let below = ctx.builder().fround(lg.m1, RoundMode::Rtn);
                let floor = ctx.builder().fadd(lg.e, below);
                out[0] = Some(ctx.builder().csel_f32(
                    Condition::Eq,
                    Src::new(d),
                    Src::konst(0),
                    Src::new(floor),
                    Src::new(z),
                ));
            }
            if writes(inst, 1) {
                let m = ctx.builder().op(Op::FREXPM_F32, &[magnitude_source(x)]);
                out[1] = Some(ctx.builder().fma(Src::new(m).absolute(), Src::konst(TWO), d));
            }
        }
        if writes(inst, 2) {
            out[2] = Some(z);
        }
    }
    if writes(inst, 3) {
        out[3] = Some(constant(ctx, ONE));
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// LIT: (1, max(x, 0), x > 0 ? max(y, 0)^clamp(w, −128, 128) : 0, 1).
fn lit(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    if writes(inst, 1) || writes(inst, 2) {
        let x = fsrc(ctx, inst, 0, 0);
        let y = ctx.builder().fmax(x, Src::konst(0));
        if writes(inst, 1) {
            out[1] = Some(y);
        }
        if writes(inst, 2) {
            let base_src = fsrc(ctx, inst, 0, 1);
            let w = fsrc(ctx, inst, 0, 3);
            let base = ctx.builder().fmax(base_src, Src::konst(0));
            let l = lg2(ctx, Src::new(base));
            // clamp(w, −128, 128) with maxNum/minNum (NaN → −128). Not w·2^-7 under a clamp:
            // that flushes a denormal w to 0, and 0^w must stay 0 (+∞ for w < 0), not 1.
            let w = ctx.builder().fmax(w, Src::f32(-128.0));
            let w = ctx.builder().fmin(w, Src::f32(128.0));
            let t =
                rscale(ctx, Op::FMA_RSCALE_N_F32, [Src::new(w), Src::new(l), Src::konst(NEG_ZERO)], 24, Clamp::None);
            let p = exp_fixed(ctx, t);
            // max(x, 0) > 0 exactly when x > 0 (NaN: false).
            out[2] =
                Some(ctx.builder().csel_f32(Condition::Gt, Src::new(y), Src::konst(0), Src::new(p), Src::konst(0)));
        }
    }
    if writes(inst, 0) || writes(inst, 3) {
        let one = constant(ctx, ONE);
        for c in [0, 3] {
            if writes(inst, c) {
                out[c] = Some(one);
            }
        }
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// DST: (1, s0.y·s1.y, s0.z, s1.w).
fn dst(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    if writes(inst, 0) {
        out[0] = Some(constant(ctx, ONE));
    }
    if writes(inst, 1) {
        let (a, b) = (fsrc(ctx, inst, 0, 1), fsrc(ctx, inst, 1, 1));
        out[1] = Some(ctx.builder().fmul(a, b));
    }
    if writes(inst, 2) {
        let a = fsrc(ctx, inst, 0, 2);
        out[2] = Some(to_value(ctx, a));
    }
    if writes(inst, 3) {
        let b = fsrc(ctx, inst, 1, 3);
        out[3] = Some(to_value(ctx, b));
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// NRM (`n` = 3: xyz scaled, w = 1) and NRM4 (`n` = 4): `s · rsq(dot(s, s))`.
fn normalize(ctx: &mut Ctx, inst: &Instruction, n: usize) {
    let mut out = [None; 4];
    if (0..n).any(|c| writes(inst, c)) {
        let d = dot(ctx, inst, 0, 0, n);
        let r = ctx.builder().frsq(d);
        for (c, slot) in out.iter_mut().enumerate().take(n) {
            if writes(inst, c) {
                let s = fsrc(ctx, inst, 0, c);
                *slot = Some(ctx.builder().fmul(s, r));
            }
        }
    }
    if n == 3 && writes(inst, 3) {
        out[3] = Some(constant(ctx, ONE));
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// RFL: `q·s0 − s1` in xyz with `q = 2·dot3(s0, s1)/dot3(s0, s0)`, w = 1.
fn reflect(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    if (0..3).any(|c| writes(inst, c)) {
        let d1 = dot(ctx, inst, 0, 1, 3);
        let d0 = dot(ctx, inst, 0, 0, 3);
        let r = ctx.builder().frcp(d0);
        // (2·d1)·rcp(d0), doubled first (exact, or ∞ when 2·d1 overflows, as the definition
        // says; scaling the product instead would keep q finite).
        let twice = ctx.builder().fadd(d1, d1);
        let q = ctx.builder().fmul(twice, r);
        for (c, slot) in out.iter_mut().enumerate().take(3) {
            if writes(inst, c) {
                let (a, b) = (fsrc(ctx, inst, 0, c), fsrc(ctx, inst, 1, c));
                *slot = Some(ctx.builder().fma(q, a, b.negated()));
            }
        }
    }
    if writes(inst, 3) {
        out[3] = Some(constant(ctx, ONE));
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// LDEXP: `s0 · 2^s1` per component, s1 an integer.
fn ldexp(ctx: &mut Ctx, inst: &Instruction) {
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        let x = fsrc(ctx, inst, 0, c.index());
        let n = isrc(ctx, inst, 1, c.index());
        out[c.index()] = Some(ctx.builder().op(Op::LDEXP_F32, &[x, n]));
    }
    write(ctx, inst, 0, out, Kind::Float);
}
