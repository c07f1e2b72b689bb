//! Conversions between integers and floats (§C.10 of the lowering reference), the packing
//! opcodes (fp16, unorm16, snorm8, unorm8) and the 64-bit integer conversions on channel pairs.
//!
//! # Sequences (instructions per channel or per packed value)
//!
//! | opcode | sequence | count |
//! | --- | --- | --- |
//! | I2F, U2F | `S32_TO_F32`, `U32_TO_F32` (round to nearest even) | 1 |
//! | F2I, F2U | `F32_TO_S32.rtz`, `F32_TO_U32.rtz` | 1 |
//! | PK2H | `V2F32_TO_V2F16 x, y` | 1 |
//! | UP2H | `F16_TO_F32 x.h0`, `F16_TO_F32 x.h1` | 2 |
//! | PK2US | per half `FADD.clamp_0_1`, `× 65535.0`, `F32_TO_U32.rte`; `MKVEC.v2i16` | 7 |
//! | PK4UB, PK4B | per byte clamp, `× 255.0` / `× 127.0`, `F32_TO_{U,S}32.rte`; 2 × `MKVEC.v2i8` | 14 |
//! | UP2US | per half `U16_TO_F32`, `× (1/65535)` | 4 |
//! | UP4UB, UP4B | per byte `U8_TO_F32` / `S8_TO_F32`, `× (1/255)` / `× (1/127)` (clamped to −1) | 8 |
//! | F2U64 | split at 2³² in float (exact), two `F32_TO_U32`, saturation select | 6 |
//! | F2I64 | truncate, floor split, low word from `F32_TO_S32` or the split, saturation | 10 |
//! | U642F | normalise with `CLZ` (sticky bit kept), `U32_TO_F32`, scale by `FMA_RSCALE` | 11 |
//! | I642F | 64-bit `|x|`, U642F, sign by `MUX.i32.bit` | 17 |
//!
//! # Semantics shared with the interpreter
//!
//! * Float → integer (F2I, F2U, F2I64, F2U64) rounds toward zero and saturates; NaN gives 0.
//!   The 32-bit conversions are single hardware conversions: like the framework's ARL, they
//!   rely on `F32_TO_S32`/`F32_TO_U32` saturating with NaN → 0 (the project's emulator models
//!   them so; the ISA description leaves it open, §F.6 of the reference).
//! * Integer → float rounds to nearest even, also for the 64-bit sources.
//! * PK2H: `f32_to_f16` rounds to nearest even; UP2H is exact. x and z of UP2H/UP2US get the
//!   low half, y and w the high half (tgsi.rst).
//! * PK2US / PK4UB: `unorm(x) = rte(fl(clamp(x, 0, 1) · M))` with M = 65535 / 255, where `fl`
//!   is the f32 product (one rounding) and `rte` rounds to the nearest integer, ties to even;
//!   NaN gives 0. PK4B: `snorm(x) = rte(fl(clamp(x, −1, 1) · 127))` as a two's complement byte;
//!   NaN gives 0 — the float → normalised conversion rule of texel formats and of Mesa's
//!   `float_to_snorm` on the CPU drivers, not the `clamp_m1_1` modifier's −1 (one more `CSEL`
//!   undoes it). Component i goes to
//!   bits 16i (PK2US) or 8i (PK4B, PK4UB); the result is replicated.
//! * UP2US / UP4UB / UP4B (TBD in tgsi.rst) are the inverses, as Mesa's `unorm_to_float` /
//!   `snorm_to_float` compute them: `fl(u · fl(1/M))` with M = 65535 / 255; for snorm bytes
//!   `max(fl(s · fl(1/127)), −1.0)` (so −128 → −1.0). Channel i takes the i-th field (UP2US: x,
//!   y from the two halves and z, w repeating them).

use super::Ctx;
use super::alu::replicate;
use super::int::{self, Pair, componentwise, src64};
use super::operand::{self, Kind, fsrc, isrc, write};
use crate::ir::builder::NEG_ZERO;
use crate::ir::{Src, Value};
use crate::tgsi::ast::Instruction;
use crate::tgsi::opcodes::Opcode;
use crate::valhall::Instr;
use crate::valhall::Opcode as V;
use crate::valhall::tables::{Clamp, Condition, RoundMode};

/// Lowers `inst` if it belongs to this family; returns whether it did.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    match opcode {
        Opcode::I2f => componentwise(ctx, inst, opcode, 1, |ctx, s| ctx.builder().i2f(true, s[0])),
        Opcode::U2f => componentwise(ctx, inst, opcode, 1, |ctx, s| ctx.builder().i2f(false, s[0])),
        Opcode::F2i => float_to_int(ctx, inst, true),
        Opcode::F2u => float_to_int(ctx, inst, false),
        Opcode::Pk2h => {
            let (x, y) = (fsrc(ctx, inst, 0, 0), fsrc(ctx, inst, 0, 1));
            let v = ctx.builder().op(V::V2F32_TO_V2F16, &[x, y]);
            replicate(ctx, inst, v, Kind::Int);
        }
        Opcode::Pk2us => {
            let (x, y) = (fsrc(ctx, inst, 0, 0), fsrc(ctx, inst, 0, 1));
            let lo = to_norm(ctx, x, false, 65535.0);
            let hi = to_norm(ctx, y, false, 65535.0);
            let v = ctx.builder().op(V::MKVEC_V2I16, &[Src::new(lo), Src::new(hi)]);
            replicate(ctx, inst, v, Kind::Int);
        }
        Opcode::Pk4ub | Opcode::Pk4b => {
            let signed = opcode == Opcode::Pk4b;
            let scale = if signed { 127.0 } else { 255.0 };
            let bytes: Vec<Value> = (0..4)
                .map(|c| {
                    let x = fsrc(ctx, inst, 0, c);
                    to_norm(ctx, x, signed, scale)
                })
                .collect();
            let b = |v: Value| Src::new(v);
            let high = ctx.builder().op(V::MKVEC_V2I8, &[b(bytes[2]), b(bytes[3]), Src::konst(0)]);
            let v = ctx.builder().op(V::MKVEC_V2I8, &[b(bytes[0]), b(bytes[1]), b(high)]);
            replicate(ctx, inst, v, Kind::Int);
        }
        Opcode::Up2h => unpack(ctx, inst, 2, |ctx, x, i| ctx.builder().op(V::F16_TO_F32, &[x.lane(i as u8)])),
        Opcode::Up2us => unpack(ctx, inst, 2, |ctx, x, i| {
            // U16_TO_F32 converts lane 0 of its 16-bit swizzle: .h00 or .h11.
            let f = ctx.builder().op(V::U16_TO_F32, &[x.swizzle(if i == 0 { 0 } else { 3 })]);
            ctx.builder().fmul(f, Src::f32(1.0 / 65535.0))
        }),
        Opcode::Up4ub => unpack(ctx, inst, 4, |ctx, x, i| {
            let f = ctx.builder().op(V::U8_TO_F32, &[x.lane(i as u8)]);
            ctx.builder().fmul(f, Src::f32(1.0 / 255.0))
        }),
        Opcode::Up4b => unpack(ctx, inst, 4, |ctx, x, i| {
            let f = ctx.builder().op(V::S8_TO_F32, &[x.lane(i as u8)]);
            let mut mach = Instr::new(V::FMA_F32);
            let _ = mach.set_clamp(Clamp::ClampM1_1);
            ctx.builder().alu(mach, &[Src::new(f), Src::f32(1.0 / 127.0), Src::konst(NEG_ZERO)])
        }),
        Opcode::F2u64 | Opcode::F2i64 => float_to_int64(ctx, inst, opcode == Opcode::F2i64),
        Opcode::U642f | Opcode::I642f => int64_to_float(ctx, inst, opcode == Opcode::I642f),
        _ => return false,
    }
    true
}

/// F2I, F2U: one conversion, the source's float modifiers folded into it.
fn float_to_int(ctx: &mut Ctx, inst: &Instruction, signed: bool) {
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        let x = fsrc(ctx, inst, 0, c.index());
        out[c.index()] = Some(ctx.builder().f2i(signed, x, RoundMode::Rtz));
    }
    write(ctx, inst, 0, out, Kind::Int);
}

/// A float clamped to [0, 1] (or [−1, 1]), scaled by `scale` and rounded to the nearest integer
/// (3 instructions).
fn to_norm(ctx: &mut Ctx, x: Src, signed: bool, scale: f32) -> Value {
    let clamped = ctx.builder().fclamp(x, if signed { Clamp::ClampM1_1 } else { Clamp::Clamp0_1 });
    let scaled = ctx.builder().fmul(clamped, Src::f32(scale));
    let int = ctx.builder().f2i(signed, scaled, RoundMode::Rte);
    if !signed {
        return int;
    }
    // clamp_m1_1 sends NaN to −1; the snorm conversion gives 0 (x == x is false for NaN).
    let x = Src { neg: false, abs: false, ..x };
    ctx.builder().csel_f32(Condition::Eq, x, x, Src::new(int), Src::konst(0))
}

/// UP2H, UP2US, UP4B, UP4UB: channel c of the result is field `c % fields` of `src.x`;
/// `f(x, i)` converts field i. Fields are converted once even when two channels share them.
fn unpack(ctx: &mut Ctx, inst: &Instruction, fields: usize, f: impl Fn(&mut Ctx, Src, usize) -> Value) {
    let x = isrc(ctx, inst, 0, 0);
    let x = match x.operand {
        // A constant is copied to a register rather than given a lane select (constant folding
        // takes it from there).
        crate::ir::Operand::Const(_) => Src::new(operand::to_value(ctx, x)),
        _ => x,
    };
    let mut done: [Option<Value>; 4] = [None; 4];
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        let i = c.index() % fields;
        let v = match done[i] {
            Some(v) => v,
            None => {
                let v = f(ctx, x, i);
                done[i] = Some(v);
                v
            }
        };
        out[c.index()] = Some(v);
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// `2^-32` and `-2^32` as f32.
const TWO_M32: u32 = 0x2F80_0000;
const MINUS_TWO_32: u32 = 0xCF80_0000;

/// F2U64 / F2I64 of channel p of the source into pair p.
fn float_to_int64(ctx: &mut Ctx, inst: &Instruction, signed: bool) {
    let mut out = [None; 4];
    for p in 0..2 {
        if !int::pair_enabled(inst, p) {
            continue;
        }
        let x = fsrc(ctx, inst, 0, p);
        let (lo, hi) = if signed { f2i64(ctx, x) } else { f2u64(ctx, x) };
        out[2 * p] = Some(lo);
        out[2 * p + 1] = Some(hi);
    }
    write(ctx, inst, 0, out, Kind::Int);
}

/// Float → u64, truncating and saturating, NaN → 0 (6 instructions). `hi = ⌊x / 2³²⌋` and
/// `lo = x − hi·2³²` are exact in f32 for x ≥ 0; negative inputs give 0 in both words.
fn f2u64(ctx: &mut Ctx, x: Src) -> (Value, Value) {
    let hf = ctx.builder().fmul(x, Src::konst(TWO_M32));
    let hi = ctx.builder().f2i(false, hf, RoundMode::Rtz);
    let rf = ctx.builder().fround(hf, RoundMode::Rtz);
    let lof = ctx.builder().fma(rf, Src::konst(MINUS_TWO_32), x);
    let lo = ctx.builder().f2i(false, lof, RoundMode::Rtz);
    // ≥ 2^64 (and +∞): the high word saturated, the low word must too.
    let lo = ctx.builder().csel(
        false,
        Condition::Eq,
        Src::new(hi),
        Src::konst(u32::MAX),
        Src::konst(u32::MAX),
        Src::new(lo),
    );
    (lo, hi)
}

/// Float → i64, truncating and saturating, NaN → 0 (10 instructions). With `t = trunc(x)`:
/// `hi = ⌊t / 2³²⌋`, and the low word `t − hi·2³²` is exact in f32 when `|t| ≥ 2³¹` (t is then a
/// multiple of 2⁸) or `t ≥ 0`; for `|t| < 2³¹` it is `F32_TO_S32(t)`, which saturates exactly
/// when `|t| ≥ 2³¹` — so the low word is `F32_TO_S32(t)` unless that saturated.
fn f2i64(ctx: &mut Ctx, x: Src) -> (Value, Value) {
    use Condition::*;
    let t = ctx.builder().fround(x, RoundMode::Rtz);
    let hf = ctx.builder().fmul(t, Src::konst(TWO_M32));
    let rf = ctx.builder().fround(hf, RoundMode::Rtn);
    let hi = ctx.builder().f2i(true, rf, RoundMode::Rtz);
    let lof = ctx.builder().fma(rf, Src::konst(MINUS_TWO_32), t);
    let split = ctx.builder().f2i(false, lof, RoundMode::Rtz);
    let small = ctx.builder().f2i(true, t, RoundMode::Rtz);
    // small + 0x80000001 ≤ 1 (unsigned) exactly for INT_MAX and INT_MIN.
    let k = ctx.builder().iadd_imm(small, 0x8000_0001);
    let lo = ctx.builder().csel(false, Le, Src::new(k), Src::konst(1), Src::new(split), Src::new(small));
    // ≥ 2^63 (and +∞): saturate the low word too. (The high word 0x7FFFFFFF only arises so:
    // the largest f32 below 2^63 is 2^63 − 2^39.)
    let lo = ctx.builder().csel(false, Eq, Src::new(hi), Src::konst(0x7FFF_FFFF), Src::konst(u32::MAX), Src::new(lo));
    (lo, hi)
}

/// I642F / U642F: pair p of the source to the (p+1)-th enabled channel.
fn int64_to_float(ctx: &mut Ctx, inst: &Instruction, signed: bool) {
    let mut out = [None; 4];
    for (p, c) in int::narrow_channels(inst).into_iter().enumerate() {
        let v = src64(ctx, inst, 0, p);
        out[c] = Some(if signed { i64_to_f32(ctx, v) } else { u64_to_f32(ctx, v) });
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// u64 → f32, round to nearest even (11 instructions). With `n = clz(hi)` (hi ≠ 0), the top 32
/// significant bits `m = (hi << n) | (lo >> (32 − n))`, with a sticky bit for the bits of `lo`
/// left out, round like the whole value; the result is `f32(m) · 2^(32 − n)`.
fn u64_to_f32(ctx: &mut Ctx, v: Pair) -> Value {
    use crate::ir::builder::byte0;
    let n = ctx.builder().op(V::CLZ_U32, &[v.hi]);
    let k = ctx.builder().isub(Src::konst(31), n);
    let rest = int::shift_op(ctx, V::LSHIFT_OR_I32, false, v.lo, byte0(Src::new(n)), Src::konst(0));
    let sticky = ctx.builder().icmp(false, Condition::Ne, rest, Src::konst(0), crate::valhall::tables::ResultType::I1);
    let top = int::shift_op(ctx, V::LSHIFT_OR_I32, false, v.hi, byte0(Src::new(n)), Src::new(sticky));
    let half = int::shift_op(ctx, V::RSHIFT_OR_I32, false, v.lo, int::shift_const(1), Src::konst(0));
    let m = int::shift_op(ctx, V::RSHIFT_OR_I32, false, Src::new(half), byte0(Src::new(k)), Src::new(top));
    let f = ctx.builder().i2f(false, m);
    // f · 2 · 2^(31 − n)
    let scaled = ctx.builder().op(V::FMA_RSCALE_F32, &[Src::new(f), Src::f32(2.0), Src::konst(NEG_ZERO), Src::new(k)]);
    let small = ctx.builder().i2f(false, v.lo);
    ctx.builder().csel(false, Condition::Eq, v.hi, Src::konst(0), Src::new(small), Src::new(scaled))
}

/// i64 → f32: the magnitude's conversion with the sign bit of the input (17 instructions).
fn i64_to_f32(ctx: &mut Ctx, v: Pair) -> Value {
    let (lo, hi) = int::abs64(ctx, v);
    let magnitude = u64_to_f32(ctx, Pair { lo: Src::new(lo), hi: Src::new(hi) });
    let mut mux = Instr::new(V::MUX_I32);
    let _ = mux.set_modifier("mux", super::bits::MUX_BIT);
    // (v.hi & 0x80000000) | (magnitude & 0x7FFFFFFF)
    ctx.builder().alu(mux, &[v.hi, Src::new(magnitude), Src::konst(0x8000_0000)])
}
