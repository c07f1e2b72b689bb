//! Per-instruction tests of the emulator's arithmetic against hand-computed values, with the
//! edge cases of docs/emulator.md §5–§6: ±0, denormals, NaN payloads, ±∞, overflow,
//! saturation, shift counts ≥ the lane width, every condition with NaN, every result type,
//! every clamp and rounding mode.

use tgsi2va::emu::{ErrorKind, Machine, Program, Stage};

/// Runs `text` (ending with `NOP.end`) in a compute machine with r1, r2, … = `srcs` in every
/// lane; returns the machine.
fn machine(text: &str, srcs: &[u32]) -> Machine {
    let program = Program::assemble(&format!("{text}\nNOP.end")).unwrap_or_else(|e| panic!("{text}: {e}"));
    let mut m = Machine::new(Stage::Compute);
    for (i, &v) in srcs.iter().enumerate() {
        m.set_reg_all(i + 1, v);
    }
    m.run(&program).unwrap_or_else(|e| panic!("{text}: {e}"));
    m
}

/// r0 of lane 0 after `text` with r1… = `srcs`.
fn one(text: &str, srcs: &[u32]) -> u32 {
    machine(text, srcs).reg(0)[0]
}

/// r0:r1 of lane 0 as a 64-bit value.
fn one64(text: &str, srcs: &[u32]) -> u64 {
    let m = machine(text, srcs);
    u64::from(m.reg(0)[0]) | u64::from(m.reg(1)[0]) << 32
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

fn h(x: f32) -> u32 {
    u32::from(half::f16::from_f32(x).to_bits())
}

const QNAN: u32 = 0x7FC0_0000;
const NEG_ZERO: u32 = 0x8000_0000;
const INF: u32 = 0x7F80_0000;
const NEG_INF: u32 = 0xFF80_0000;
const MAX: u32 = 0x7F7F_FFFF;

#[test]
fn fadd_values_and_zeros() {
    assert_eq!(one("FADD.f32 r0, r1, r2", &[f(1.5), f(2.25)]), f(3.75));
    assert_eq!(one("FADD.f32 r0, r1, r2", &[NEG_ZERO, NEG_ZERO]), NEG_ZERO);
    assert_eq!(one("FADD.f32 r0, r1, r2", &[NEG_ZERO, 0]), 0);
    assert_eq!(one("FADD.f32 r0, r1, r2", &[f(1.0), f(-1.0)]), 0, "exact cancellation gives +0");
    assert_eq!(one("FADD.f32 r0, r1, r2", &[1, 1]), 2, "denormals are preserved");
    assert_eq!(one("FADD.f32 r0, r1, r2", &[0x0080_0000, 0x8000_0001]), 0x007F_FFFF);
    assert_eq!(one("FADD.f32 r0, r1, r2", &[MAX, MAX]), INF, "overflow rounds to infinity");
    assert_eq!(one("FADD.f32 r0, r1, r2", &[f(1.0), f(2f32.powi(-24))]), f(1.0), "tie to even");
    assert_eq!(one("FADD.f32 r0, r1, r2", &[f(1.0), f(3.0 * 2f32.powi(-24))]), 0x3F80_0002);
}

#[test]
fn fadd_nans_and_infinities() {
    assert_eq!(one("FADD.f32 r0, r1, r2", &[INF, NEG_INF]), QNAN, "invalid operation: default NaN");
    assert_eq!(one("FADD.f32 r0, r1, r2", &[0x7F80_0001, f(1.0)]), 0x7FC0_0001, "signalling NaN is quieted");
    assert_eq!(one("FADD.f32 r0, r1, r2", &[f(1.0), 0xFFC0_1234]), 0xFFC0_1234, "payload and sign kept");
    assert_eq!(one("FADD.f32 r0, r1, r2", &[0x7FC0_0002, 0x7FC0_0003]), 0x7FC0_0002, "first NaN wins");
    assert_eq!(one("FADD.f32 r0, r1, r2", &[INF, f(-1e38)]), INF);
}

#[test]
fn float_source_modifiers() {
    assert_eq!(one("FADD.f32 r0, r1.neg, r2", &[f(1.0), f(3.0)]), f(2.0));
    assert_eq!(one("FADD.f32 r0, r1.abs, r2", &[f(-1.0), f(3.0)]), f(4.0));
    assert_eq!(one("FADD.f32 r0, r1.neg.abs, r2", &[f(1.0), f(3.0)]), f(2.0));
    assert_eq!(one("FADD.f32 r0, r1.neg, 0x0", &[QNAN]), 0xFFC0_0000, ".neg flips a NaN's sign bit");
    assert_eq!(one("FADD.f32 r0, r1.neg, 0x0.neg", &[0]), NEG_ZERO, "stand-alone fneg of +0");
    // .h0/.h1 on a 32-bit float source converts that binary16 half.
    assert_eq!(one("FADD.f32 r0, r1.h1, r2.h0", &[h(2.5) << 16 | h(7.0), h(0.25)]), f(2.75));
    // Immediate table with half selects and neg.
    assert_eq!(one("FADD.f32 r0, r1, 0x38000000.h1", &[f(1.0)]), f(1.5));
    assert_eq!(one("FADD.f32 r0, r1, 0x3F800000.neg", &[f(1.0)]), 0);
}

#[test]
fn clamps() {
    let c = |clamp: &str, x: u32| one(&format!("FADD.f32.{clamp} r0, r1, 0x0.neg"), &[x]);
    assert_eq!(c("clamp_0_1", f(2.0)), f(1.0));
    assert_eq!(c("clamp_0_1", f(-3.0)), 0);
    assert_eq!(c("clamp_0_1", QNAN), 0, "NaN clamps to the lower bound");
    assert_eq!(c("clamp_0_1", 0xFFC0_0000), 0);
    assert_eq!(c("clamp_0_1", NEG_ZERO), 0, "-0 with clamp_0_1 gives +0");
    assert_eq!(c("clamp_0_1", f(0.5)), f(0.5));
    assert_eq!(c("clamp_m1_1", QNAN), f(-1.0));
    assert_eq!(c("clamp_m1_1", NEG_ZERO), NEG_ZERO, "-0 stays -0 with clamp_m1_1");
    assert_eq!(c("clamp_m1_1", f(-7.0)), f(-1.0));
    assert_eq!(c("clamp_m1_1", INF), f(1.0));
    assert_eq!(c("clamp_0_inf", f(-5.0)), 0);
    assert_eq!(c("clamp_0_inf", QNAN), 0);
    assert_eq!(c("clamp_0_inf", NEG_ZERO), 0);
    assert_eq!(c("clamp_0_inf", INF), INF);
    assert_eq!(one("FMAX.f32.clamp_0_1 r0, r1, r2", &[f(0.25), f(3.0)]), f(1.0));
}

#[test]
fn fma_single_rounding_and_nans() {
    let a = 1.0f32 + 2f32.powi(-12);
    let exact = (f64::from(a) * f64::from(a) - 1.0) as f32;
    assert_eq!(one("FMA.f32 r0, r1, r2, r3", &[f(a), f(a), f(-1.0)]), f(exact));
    assert_ne!(f(exact), f(a * a - 1.0), "the test case distinguishes fused from unfused");
    assert_eq!(one("FMA.f32 r0, r1, r2, r3", &[0, INF, f(1.0)]), QNAN, "0·∞ is invalid");
    assert_eq!(one("FMA.f32 r0, r1, r2, r3", &[0, INF, 0x7FC0_0042]), 0x7FC0_0042, "a NaN operand wins");
    assert_eq!(one("FMA.f32 r0, r1, r2, 0x0.neg", &[f(-2.0), 0]), NEG_ZERO, "MUL keeps -0");
    assert_eq!(one("FMA.f32 r0, r1, r2, 0x0.neg", &[f(2.0), 0]), 0);
    assert_eq!(one("FMA.f32 r0, r1, r2, r3.neg", &[f(3.0), f(4.0), f(2.0)]), f(10.0));
    assert_eq!(one("FMA.f32.clamp_0_1 r0, r1, r2, r3", &[f(3.0), f(4.0), f(2.0)]), f(1.0));
    assert_eq!(one("FMA.f32 r0, r1, r2, r3", &[0x0080_0000, f(0.5), 0]), 0x0040_0000, "denormal result");
}

#[test]
fn fmin_fmax() {
    assert_eq!(one("FMIN.f32 r0, r1, r2", &[QNAN, f(1.0)]), f(1.0));
    assert_eq!(one("FMAX.f32 r0, r1, r2", &[f(1.0), 0x7F80_0001]), f(1.0), "signalling NaN ignored too");
    assert_eq!(one("FMIN.f32 r0, r1, r2", &[0x7F80_0001, 0x7FC0_0003]), 0x7FC0_0001, "two NaNs: first, quieted");
    assert_eq!(one("FMIN.f32 r0, r1, r2", &[0, NEG_ZERO]), NEG_ZERO);
    assert_eq!(one("FMAX.f32 r0, r1, r2", &[NEG_ZERO, 0]), 0);
    assert_eq!(one("FMAX.f32 r0, r1, r2", &[1, 2]), 2, "denormals compare");
    assert_eq!(one("FMIN.f32 r0, r1, r2", &[NEG_INF, f(-1e30)]), NEG_INF);
    assert_eq!(one("FMAX.f32 r0, r1.neg, r2", &[f(3.0), f(-5.0)]), f(-3.0));
}

#[test]
fn half_precision_arithmetic() {
    let v = |lo: f32, hi: f32| h(lo) | h(hi) << 16;
    assert_eq!(one("FADD.v2f16 r0, r1, r2", &[v(1.0, 2.0), v(2.0, 0.5)]), v(3.0, 2.5));
    assert_eq!(one("FADD.v2f16 r0, r1, r2", &[v(65504.0, 1.0), v(65504.0, 0.0)]), 0x7C00 | h(1.0) << 16);
    assert_eq!(one("FADD.v2f16 r0, r1.h10, r2", &[v(1.0, 2.0), v(0.0, 0.0)]), v(2.0, 1.0), "swap lanes");
    assert_eq!(one("FADD.v2f16 r0, r1.h11, r2.neg", &[v(1.0, 2.0), v(0.5, 0.5)]), v(1.5, 1.5));
    assert_eq!(one("FMIN.v2f16 r0, r1, r2", &[0x7E00 | h(4.0) << 16, v(1.0, 3.0)]), v(1.0, 3.0));
    // fp16 FMA rounds once: (1 + 2^-6)^2 - 1 = 2^-5 + 2^-12 exactly.
    let a = 1.0 + 2f32.powi(-6);
    assert_eq!(one("FMA.v2f16 r0, r1, r1, r2", &[v(a, 2.0), v(-1.0, 1.0)]), v(2f32.powi(-5) + 2f32.powi(-12), 5.0));
    assert_eq!(one("FMA.v2f16 r0, r1, r2, r3", &[v(0.0, 1.0), 0x7C00 | h(1.0) << 16, 0]), 0x7E00 | h(1.0) << 16);
    assert_eq!(one("FADD.v2f16.clamp_0_1 r0, r1, r2", &[v(-1.0, 5.0), 0]), v(0.0, 1.0));
    assert_eq!(one("FADD_IMM.v2f16 r0, r1, #0x3C004000", &[v(1.0, 1.0)]), v(3.0, 2.0));
}

#[test]
fn fround_modes() {
    let r = |mode: &str, x: f32| one(&format!("FROUND.f32{mode} r0, r1"), &[f(x)]);
    assert_eq!(r("", 2.5), f(2.0));
    assert_eq!(r("", 3.5), f(4.0));
    assert_eq!(r("", -0.5), NEG_ZERO);
    assert_eq!(r(".rtp", 2.1), f(3.0));
    assert_eq!(r(".rtp", -0.5), NEG_ZERO);
    assert_eq!(r(".rtn", -2.1), f(-3.0));
    assert_eq!(r(".rtn", 0.3), 0);
    assert_eq!(r(".rtz", -2.9), f(-2.0));
    assert_eq!(r(".rtz", -0.3), NEG_ZERO);
    assert_eq!(r(".rtn", 1e30), f(1e30));
    assert_eq!(r(".rtn", f32::from_bits(1)), 0);
    assert_eq!(r(".rtp", f32::from_bits(1)), f(1.0));
    assert_eq!(one("FROUND.f32.rtn r0, r1", &[INF]), INF);
    assert_eq!(one("FROUND.f32.rtn r0, r1", &[0x7F80_0001]), 0x7FC0_0001);
    assert_eq!(one("FROUND.f32.rtn r0, r1.neg", &[f(2.5)]), f(-3.0));
    assert_eq!(one("FROUND.v2f16.rtp r0, r1", &[h(1.25) | h(-1.75) << 16]), h(2.0) | h(-1.0) << 16);
}

#[test]
fn float_to_int_conversions() {
    let s = |t: &str, x: u32| one(&format!("F32_TO_S32{t} r0, r1"), &[x]);
    assert_eq!(s("", f(2.5)), 2, "round to nearest even by default");
    assert_eq!(s(".rtz", f(-1.5)), (-1i32) as u32);
    assert_eq!(s(".rtn", f(-1.5)), (-2i32) as u32);
    assert_eq!(s(".rtp", f(1.2)), 2);
    assert_eq!(s("", QNAN), 0, "NaN converts to 0");
    assert_eq!(s("", f(3e9)), 0x7FFF_FFFF, "saturates");
    assert_eq!(s("", f(-3e9)), 0x8000_0000);
    assert_eq!(s("", INF), 0x7FFF_FFFF);
    assert_eq!(s("", NEG_INF), 0x8000_0000);
    assert_eq!(s(".rtz", f(-2147483648.0)), 0x8000_0000);
    let u = |t: &str, x: u32| one(&format!("F32_TO_U32{t} r0, r1"), &[x]);
    assert_eq!(u(".rtz", f(-1.0)), 0);
    assert_eq!(u(".rtz", f(-0.9)), 0);
    assert_eq!(u("", f(5e9)), 0xFFFF_FFFF);
    assert_eq!(u("", QNAN), 0);
    assert_eq!(u(".rtz", f(4294967040.0)), 4294967040);
    assert_eq!(one("F32_TO_S32.rtz r0, r1.neg", &[f(7.9)]), (-7i32) as u32);
    assert_eq!(one("F16_TO_S32.rtz r0, r1.h10", &[h(-3.75) << 16]), (-3i32) as u32);
    assert_eq!(one("F16_TO_U32 r0, r1.h00", &[0x7C00]), 0xFFFF_FFFF);
    assert_eq!(one("V2F16_TO_V2S16.rtz r0, r1", &[h(40000.0) | h(-2.5) << 16]), 0x7FFF | 0xFFFE << 16);
    assert_eq!(one("V2F16_TO_V2U16.rtz r0, r1", &[h(-5.0) | 0x7E00 << 16]), 0);
}

#[test]
fn int_to_float_conversions() {
    assert_eq!(one("S32_TO_F32 r0, r1", &[16_777_217]), f(16_777_216.0));
    assert_eq!(one("S32_TO_F32.rtp r0, r1", &[16_777_217]), f(16_777_218.0));
    assert_eq!(one("S32_TO_F32 r0, r1", &[(-5i32) as u32]), f(-5.0));
    assert_eq!(one("U32_TO_F32 r0, r1", &[u32::MAX]), f(4_294_967_296.0));
    assert_eq!(one("U32_TO_F32.rtz r0, r1", &[u32::MAX]), f(4_294_967_040.0));
    assert_eq!(one("S32_TO_F32 r0, r1.h1", &[0xFFFE_0000]), f(-2.0), "widen sign-extends");
    assert_eq!(one("U32_TO_F32 r0, r1.b3", &[0xFF00_0000]), f(255.0), "widen zero-extends");
    assert_eq!(one("S16_TO_F32 r0, r1.h10", &[0x8000_0000]), f(-32768.0));
    assert_eq!(one("U16_TO_F32 r0, r1.h00", &[0x1234_FFFF]), f(65535.0));
    assert_eq!(one("S8_TO_F32 r0, r1.b2", &[0x0080_0000]), f(-128.0));
    assert_eq!(one("U8_TO_F32 r0, r1.b2", &[0x0080_0000]), f(128.0));
    assert_eq!(one("V2U16_TO_V2F16 r0, r1", &[0xFFFF_0003]), h(3.0) | 0x7C00 << 16, "65535 overflows binary16");
    assert_eq!(one("V2U16_TO_V2F16.rtz r0, r1", &[0xFFFF_0003]), h(3.0) | 0x7BFF << 16);
    assert_eq!(one("V2S16_TO_V2F16 r0, r1", &[0xFFFF_0801]), h(2048.0) | h(-1.0) << 16, "2049 rounds to even");
    assert_eq!(one("V2S8_TO_V2F16 r0, r1.b30", &[0x8000_0007]), h(-128.0) | h(7.0) << 16);
    assert_eq!(one("V2U8_TO_V2F16 r0, r1.b30", &[0x8000_0007]), h(128.0) | h(7.0) << 16);
}

#[test]
fn integer_widening_conversions() {
    assert_eq!(one("S16_TO_S32 r0, r1.h10", &[0x8000_1234]), 0xFFFF_8000);
    assert_eq!(one("U16_TO_U32 r0, r1.h10", &[0x8000_1234]), 0x8000);
    assert_eq!(one("U16_TO_U32 r0, r1.h00", &[0x8000_1234]), 0x1234);
    assert_eq!(one("S8_TO_S32 r0, r1.b1", &[0x0000_F000]), 0xFFFF_FFF0);
    assert_eq!(one("U8_TO_U32 r0, r1.b3", &[0xAB00_0000]), 0xAB);
    assert_eq!(one("V2S8_TO_V2S16 r0, r1.b20", &[0x0080_00FF]), 0xFF80 | 0xFFFF << 16, "b20: lane 0 from byte 2");
    assert_eq!(one("V2U8_TO_V2U16 r0, r1.b20", &[0x0080_00FF]), 0x0080 | 0x00FF << 16);
}

#[test]
fn half_conversions() {
    assert_eq!(one("F16_TO_F32 r0, r1.h1", &[h(-2.5) << 16]), f(-2.5));
    assert_eq!(one("F16_TO_F32 r0, r1.h0", &[0x0001]), f(2f32.powi(-24)), "binary16 denormal, exact");
    assert_eq!(one("F16_TO_F32 r0, r1.h0", &[0x7C01]), 0x7FC0_2000, "payload shifted, quieted");
    assert_eq!(one("F16_TO_F32 r0, r1.h0.neg", &[h(1.0)]), f(-1.0));
    let pack = |a: f32, b: f32| h(a) | h(b) << 16;
    assert_eq!(one("V2F32_TO_V2F16 r0, r1, r2", &[f(1.0), f(-2.0)]), pack(1.0, -2.0));
    assert_eq!(one("V2F32_TO_V2F16 r0, r1, r2", &[f(1e5), f(-1e5)]), 0x7C00 | 0xFC00 << 16);
    assert_eq!(one("V2F32_TO_V2F16.rtz r0, r1, r2", &[f(1e5), f(1.0 + 2f32.powi(-11))]), 0x7BFF | h(1.0) << 16);
    assert_eq!(one("V2F32_TO_V2F16.rtp r0, r1, r2", &[f(1.0 + 2f32.powi(-20)), 0]), 0x3C01);
    assert_eq!(one("V2F32_TO_V2F16.clamp_0_1 r0, r1, r2.neg", &[f(7.0), f(1.0)]), h(1.0));
    assert_eq!(one("V2F32_TO_V2F16 r0, r1, r2", &[f(2f32.powi(-25)), f(3.0 * 2f32.powi(-26))]), 1 << 16);
    assert_eq!(one("V2F32_TO_V2F16 r0, r1, r2", &[0x7F80_1000, 0xFFC0_0000]), 0x7E00 | 0xFE00 << 16);
}

#[test]
fn integer_add_sub_saturate() {
    assert_eq!(one("IADD.s32 r0, r1, r2", &[0x7FFF_FFFF, 1]), 0x8000_0000, "wraps");
    assert_eq!(one("IADD.s32.saturate r0, r1, r2", &[0x7FFF_FFFF, 1]), 0x7FFF_FFFF);
    assert_eq!(one("IADD.s32.saturate r0, r1, r2", &[0x8000_0000, u32::MAX]), 0x8000_0000);
    assert_eq!(one("IADD.u32.saturate r0, r1, r2", &[u32::MAX, 1]), u32::MAX);
    assert_eq!(one("ISUB.u32.saturate r0, r1, r2", &[1, 2]), 0);
    assert_eq!(one("ISUB.u32 r0, r1, r2", &[1, 2]), u32::MAX);
    assert_eq!(one("ISUB.s32.saturate r0, r1, r2", &[0x8000_0000, 1]), 0x8000_0000);
    assert_eq!(one("IADD.v2u16.saturate r0, r1, r2", &[0xFFFF_0001, 0x0001_0002]), 0xFFFF_0003);
    assert_eq!(one("IADD.v2s16.saturate r0, r1, r2", &[0x7FFF_8000, 0x0001_FFFF]), 0x7FFF_8000);
    assert_eq!(one("IADD.v4s8.saturate r0, r1, r2", &[0x7F80_0102, 0x01FF_0101]), 0x7F80_0203);
    assert_eq!(one("IADD.v4u8 r0, r1, r2", &[0xFF00_0000, 0x0100_0000]), 0);
    assert_eq!(one("IADD.s32 r0, r1.h1, r2.b0", &[0xFFFF_0000, 0x0000_00FF]), (-2i32) as u32, "sign-extending widens");
    assert_eq!(one("IADD.u32 r0, r1.h1, r2.b0", &[0xFFFF_0000, 0x0000_00FF]), 0xFFFF + 0xFF);
    assert_eq!(one("IADD.v2u16 r0, r1.h10, r2", &[0x0001_0002, 0]), 0x0002_0001);
    assert_eq!(one("IADD_IMM.i32 r0, r1, #0xFFFFFFFF", &[0]), u32::MAX);
    assert_eq!(one("IADD_IMM.v2i16 r0, r1, #0x00010001", &[0xFFFF_0001]), 0x0000_0002);
    assert_eq!(one("IADD_IMM.v4i8 r0, r1, #0x01010101", &[0xFF7F_0001]), 0x0080_0102);
    assert_eq!(one("ISUB.u32 r0, 0x1F1E1D1C.b3, r1", &[3]), 28);
}

#[test]
fn integer_multiply_and_halving_add() {
    assert_eq!(one("IMUL.i32 r0, r1, r2", &[0x1_0001, 0x1_0001]), 0x0002_0001);
    assert_eq!(one("IMUL.i32 r0, r1, r2", &[u32::MAX, u32::MAX]), 1);
    assert_eq!(one("IMUL.s32.saturate r0, r1, r2", &[0x4000_0000, 4]), 0x7FFF_FFFF);
    assert_eq!(one("IMUL.s32.saturate r0, r1, r2", &[0x4000_0000, (-4i32) as u32]), 0x8000_0000);
    assert_eq!(one("IMUL.i32.saturate r0, r1, r2", &[0x1_0000, 0x1_0000]), u32::MAX, "unsigned saturation");
    assert_eq!(one("IMUL.v2i16 r0, r1, r2", &[0x0003_0100, 0x0005_0100]), 0x000F_0000);
    assert_eq!(one("IMUL.v4s8 r0, r1, r2", &[0x02FF_0304, 0x03FF_0202]), 0x0601_0608);
    assert_eq!(one("HADD.u32 r0, r1, r2", &[u32::MAX, 1]), 0x8000_0000, "no intermediate overflow");
    assert_eq!(one("HADD.u32.rhadd r0, r1, r2", &[u32::MAX, 0]), 0x8000_0000);
    assert_eq!(one("HADD.u32 r0, r1, r2", &[u32::MAX, 0]), 0x7FFF_FFFF);
    assert_eq!(one("HADD.s32 r0, r1, r2", &[u32::MAX, (-2i32) as u32]), (-2i32) as u32, "rounds down");
    assert_eq!(one("HADD.s32.rhadd r0, r1, r2", &[u32::MAX, (-2i32) as u32]), u32::MAX);
    assert_eq!(one("HADD.v2s16 r0, r1, r2", &[0x8000_7FFF, 0x8000_7FFF]), 0x8000_7FFF);
    assert_eq!(one("IDP.v4u8 r0, r1, r2, r3", &[0x0101_0101, 0xFF02_0304, 10]), 10 + 4 + 3 + 2 + 255);
    assert_eq!(one("IDP.v4s8 r0, r1, r2, r3", &[0x0101_0101, 0xFF02_0304, 10]), 10 + 4 + 3 + 2 - 1);
    assert_eq!(one("IDP.v4u8.saturate r0, r1, r2, r3", &[0xFFFF_FFFF, 0xFFFF_FFFF, u32::MAX]), u32::MAX);
}

#[test]
fn shifts_and_bitwise() {
    assert_eq!(one("LSHIFT_OR.i32 r0, r1, r2.b00, 0x0", &[1, 4]), 16);
    assert_eq!(one("LSHIFT_OR.i32 r0, r1, r2.b00, 0x0", &[1, 33]), 2, "counts are taken mod 32");
    assert_eq!(one("LSHIFT_OR.i32 r0, r1, r2.b00, 0x0", &[1, 32]), 1);
    assert_eq!(one("RSHIFT_OR.i32 r0, r1, r2.b00, 0x0", &[0x8000_0000, 31]), 1);
    assert_eq!(one("RSHIFT_OR.i32.signed r0, r1, r2.b00, 0x0", &[(-8i32) as u32, 1]), (-4i32) as u32);
    assert_eq!(one("RSHIFT_OR.i32.signed r0, r1, r2.b00, 0x0", &[0x8000_0000, 63]), u32::MAX);
    assert_eq!(one("RSHIFT_OR.i32 r0, r1, r2.b11, 0x0", &[0x1000, 0x0800]), 0x10, "b11 selects byte 1");
    assert_eq!(one("LSHIFT_AND.i32 r0, r1, 0x0.b00, r2", &[0xF0F0, 0xFF00]), 0xF000);
    assert_eq!(one("LSHIFT_XOR.i32 r0, r1, 0x0.b00, r2", &[0xF0F0, 0xFF00]), 0x0FF0);
    assert_eq!(one("LSHIFT_OR.i32 r0, 0x0, 0x0.b00, r1.not", &[0x1234_5678]), !0x1234_5678u32);
    assert_eq!(one("LSHIFT_AND.i32 r0, r1, 0x0.b00, r2.not", &[0xFF, 0x0F]), 0xF0);
    assert_eq!(one("LSHIFT_OR.i32.not_result r0, r1, 0x0.b00, r2", &[0xF0, 0x0F]), !0xFFu32);
    assert_eq!(one("LSHIFT_OR.v2i16 r0, r1, r2.b00, 0x0", &[0x0001_0001, 17]), 0x0002_0002, "mod 16");
    assert_eq!(one("RSHIFT_OR.v2i16.signed r0, r1, r2.b00, 0x0", &[0x8000_0010, 4]), 0xF800_0001);
    assert_eq!(one("LSHIFT_OR.v4i8 r0, r1, r2.b00, 0x0", &[0x0101_0101, 9]), 0x0202_0202, "mod 8");
    assert_eq!(one("RSHIFT_AND.v4i8 r0, r1, r2.b00, 0xFFFFFFFF", &[0x8040_2010, 4]), 0x0804_0201);
    assert_eq!(one("LSHIFT_OR.i32 r0, r1.h1, r2.b00, 0x0", &[0xABCD_0000, 4]), 0xABCD0, "widen of A");
}

#[test]
fn bit_counting_and_moves() {
    assert_eq!(one("CLZ.u32 r0, r1", &[0]), 32);
    assert_eq!(one("CLZ.u32 r0, r1", &[1]), 31);
    assert_eq!(one("CLZ.u32 r0, r1", &[0x8000_0000]), 0);
    assert_eq!(one("CLZ.v2u16 r0, r1", &[0x0001_0000]), 16 | 15 << 16);
    assert_eq!(one("CLZ.v4u8 r0, r1", &[0x0080_0100]), 0x0800_0708);
    assert_eq!(one("POPCOUNT.i32 r0, r1", &[0xF0F0_0001]), 9);
    assert_eq!(one("BITREV.i32 r0, r1", &[1]), 0x8000_0000);
    assert_eq!(one("NOT_OLD.i32 r0, r1", &[0x0F0F_0F0F]), 0xF0F0_F0F0);
    assert_eq!(one("IABS.s32 r0, r1", &[(-5i32) as u32]), 5);
    assert_eq!(one("IABS.s32 r0, r1", &[0x8000_0000]), 0x8000_0000, "|INT_MIN| wraps");
    assert_eq!(one("IABS.v2s16 r0, r1", &[0xFFFF_8000]), 0x0001_8000);
    assert_eq!(one("IABS.v4s8 r0, r1", &[0x80FF_0102]), 0x8001_0102);
    assert_eq!(one("MOV.i32 r0, r1", &[0xDEAD_BEEF]), 0xDEAD_BEEF);
    assert_eq!(one("MKVEC.v2i16 r0, r1.h10, r2.h00", &[0x1111_2222, 0x3333_4444]), 0x4444_1111);
    assert_eq!(one("MKVEC.v2i8 r0, r1.b3, r2.b0, r3", &[0xAA00_0000, 0x0000_00BB, 0x1234_CCDD]), 0xCCDD_BBAA);
}

#[test]
fn mux_modes() {
    assert_eq!(one("MUX.i32.bit r0, r1, r2, r3", &[0xFFFF_0000, 0x0000_FFFF, 0x00FF_FF00]), 0x00FF_00FF);
    assert_eq!(one("MUX.i32 r0, r1, r2, r3", &[1, 2, 0]), 1, "int_zero: zero mask picks A");
    assert_eq!(one("MUX.i32 r0, r1, r2, r3", &[1, 2, 5]), 2);
    assert_eq!(one("MUX.i32.fp_zero r0, r1, r2, r3", &[1, 2, NEG_ZERO]), 1);
    assert_eq!(one("MUX.i32.fp_zero r0, r1, r2, r3", &[1, 2, 1]), 2, "a denormal is not zero");
    assert_eq!(one("MUX.i32.neg r0, r1, r2, r3", &[1, 2, 0x8000_0000]), 1);
    assert_eq!(one("MUX.i32.neg r0, r1, r2, r3", &[1, 2, 0x7FFF_FFFF]), 2);
    assert_eq!(one("MUX.v2i16 r0, r1, r2, r3", &[0x1111_2222, 0x3333_4444, 0x0000_0001]), 0x1111_4444);
    assert_eq!(one("MUX.v4i8.neg r0, r1, r2, r3", &[0x1111_1111, 0x2222_2222, 0x8000_8000]), 0x1122_1122);
}

/// Reference condition on two f32 values (independent of the emulator's implementation).
fn fcond(cond: &str, a: f32, b: f32) -> bool {
    match cond {
        "eq" => a == b,
        "gt" => a > b,
        "ge" => a >= b,
        "ne" => a != b,
        "lt" => a < b,
        "le" => a <= b,
        "gtlt" => a.partial_cmp(&b).is_some_and(|o| o != std::cmp::Ordering::Equal),
        _ => a.total_cmp(&b) != std::cmp::Ordering::Greater,
    }
}

const CONDITIONS: [&str; 8] = ["eq", "gt", "ge", "ne", "lt", "le", "gtlt", "total"];

#[test]
fn fcmp_every_condition_and_result_type() {
    let values = [0.0, -0.0, 1.0, -1.0, 2.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, 1e-45];
    for cond in CONDITIONS {
        for &a in &values {
            for &b in &values {
                let want = fcond(cond, a, b);
                for (rt, t) in [("i1", 1), ("f1", f(1.0)), ("m1", u32::MAX), ("u1", 1)] {
                    let got = one(&format!("FCMP_OR.f32.{cond}.{rt} r0, r1, r2, 0x0"), &[f(a), f(b)]);
                    assert_eq!(got, if want { t } else { 0 }, "{cond}.{rt} {a:?} {b:?}");
                }
            }
        }
    }
    // NaN: ordered conditions false, ne true, gtlt false.
    assert_eq!(one("FCMP_OR.f32.ne.m1 r0, r1, r1, 0x0", &[QNAN]), u32::MAX);
    assert_eq!(one("FCMP_OR.f32.eq.m1 r0, r1, r1, 0x0", &[QNAN]), 0);
    assert_eq!(one("FCMP_OR.f32.gtlt.m1 r0, r1, r2, 0x0", &[QNAN, f(1.0)]), 0);
    // Total order: -0 < +0 and NaNs order by sign and payload.
    assert_eq!(one("FCMP_OR.f32.total.i1 r0, r1, r2, 0x0", &[0, NEG_ZERO]), 0);
    assert_eq!(one("FCMP_OR.f32.total.i1 r0, r1, r2, 0x0", &[0xFFC0_0000, NEG_INF]), 1);
}

#[test]
fn fcmp_third_source_and_vectors() {
    assert_eq!(one("FCMP_OR.f32.lt.i1 r0, r1, r2, r3", &[f(2.0), f(1.0), 1]), 1, "OR with the third source");
    assert_eq!(one("FCMP_AND.f32.lt.i1 r0, r1, r2, r3", &[f(0.0), f(1.0), 0]), 0, "AND with the third source");
    assert_eq!(one("FCMP_AND.f32.lt.f1 r0, r1, r2, r3", &[f(0.0), f(1.0), f(1.0)]), f(1.0));
    let v = |a: f32, b: f32| h(a) | h(b) << 16;
    assert_eq!(one("FCMP_OR.v2f16.lt.m1 r0, r1, r2, 0x0", &[v(1.0, 3.0), v(2.0, 2.0)]), 0x0000_FFFF);
    assert_eq!(one("FCMP_OR.v2f16.ge.f1 r0, r1, r2, 0x0", &[v(1.0, 3.0), v(2.0, 2.0)]), 0x3C00_0000);
    assert_eq!(one("FCMP_OR.v2f16.ne.i1 r0, r1, r2, 0x0", &[0x7E00 | h(1.0) << 16, v(0.0, 1.0)]), 1);
    assert_eq!(one("FCMP_OR.f32.lt.m1 r0, r1.abs, r2.neg, 0x0", &[f(-3.0), f(-4.0)]), u32::MAX);
}

#[test]
fn icmp_every_condition_and_result_type() {
    let values: [u32; 6] = [0, 1, 2, 0x7FFF_FFFF, 0x8000_0000, u32::MAX];
    for cond in &CONDITIONS[..7] {
        for &a in &values {
            for &b in &values {
                for (signed, ty) in [(false, "u32"), (true, "s32")] {
                    let (x, y) =
                        if signed { (i64::from(a as i32), i64::from(b as i32)) } else { (i64::from(a), i64::from(b)) };
                    let want = match *cond {
                        "eq" => x == y,
                        "gt" => x > y,
                        "ge" => x >= y,
                        "ne" | "gtlt" => x != y,
                        "lt" => x < y,
                        _ => x <= y,
                    };
                    for (rt, t) in [("i1", 1), ("f1", f(1.0)), ("m1", u32::MAX), ("u1", 1)] {
                        let got = one(&format!("ICMP_OR.{ty}.{cond}.{rt} r0, r1, r2, 0x0"), &[a, b]);
                        assert_eq!(got, if want { t } else { 0 }, "{ty}.{cond}.{rt} {a:#x} {b:#x}");
                    }
                }
            }
        }
    }
}

#[test]
fn icmp_vectors_multi_and_total() {
    assert_eq!(one("ICMP_OR.v2s16.lt.m1 r0, r1, r2, 0x0", &[0x8000_0001, 0x0000_0000]), 0xFFFF_0000);
    assert_eq!(one("ICMP_OR.v2u16.lt.i1 r0, r1, r2, 0x0", &[0x8000_0001, 0x0000_0002]), 0x0000_0001);
    assert_eq!(one("ICMP_OR.v4s8.gt.m1 r0, r1, r2, 0x0", &[0x0180_7F00, 0x0000_0000]), 0xFF00_FF00);
    assert_eq!(one("ICMP_AND.v4u8.ne.i1 r0, r1, r2, r3", &[0x0102_0304, 0, 0x0100_0100]), 0x0100_0100);
    // 64-bit signed compare a < b of (hi, lo) pairs: low half u1, high half MULTI with the low
    // result as the third source.
    let lt64 = |a: i64, b: i64| {
        let m = machine(
            "ICMP_MULTI.u32.lt.u1 r5, r1, r3, 0x0\nICMP_MULTI.s32.lt.m1 r0, r2, r4, r5",
            &[a as u32, (a >> 32) as u32, b as u32, (b >> 32) as u32],
        );
        m.reg(0)[0]
    };
    for (a, b) in [(1i64, 2i64), (-1, 0), (0x1_0000_0000, 0xFFFF_FFFF), (5, 5), (-(1 << 40), 3), (7, -7)] {
        assert_eq!(lt64(a, b), if a < b { u32::MAX } else { 0 }, "{a} < {b}");
    }
    // `total` has no integer meaning.
    let p = Program::assemble("ICMP_OR.u32.total.i1 r0, r1, r2, 0x0\nNOP.end").unwrap();
    let mut m = Machine::new(Stage::Compute);
    m.set_reg_all(1, 0);
    m.set_reg_all(2, 0);
    assert_eq!(m.run(&p).unwrap_err().kind, ErrorKind::Unsupported);
    // f1 in 8-bit lanes does not exist.
    let p = Program::assemble("ICMP_OR.v4u8.eq.f1 r0, r1, r2, 0x0\nNOP.end").unwrap();
    assert_eq!(m.run(&p).unwrap_err().kind, ErrorKind::Unsupported);
}

#[test]
fn csel_every_type() {
    assert_eq!(one("CSEL.u32.eq r0, r1, 0x0, r2, r3", &[0, 10, 20]), 10);
    assert_eq!(one("CSEL.u32.eq r0, r1, 0x0, r2, r3", &[5, 10, 20]), 20);
    assert_eq!(one("CSEL.s32.lt r0, r1, r2, r1, r2", &[(-3i32) as u32, 2]), (-3i32) as u32, "IMIN");
    assert_eq!(one("CSEL.u32.lt r0, r1, r2, r1, r2", &[(-3i32) as u32, 2]), 2, "UMIN");
    assert_eq!(one("CSEL.s32.gt r0, r1, r2, r1, r2", &[(-3i32) as u32, 2]), 2, "IMAX");
    assert_eq!(one("CSEL.f32.lt r0, r1, 0x0, r2, r3", &[f(-1.0), 7, 8]), 7);
    assert_eq!(one("CSEL.f32.lt r0, r1, 0x0, r2, r3", &[QNAN, 7, 8]), 8, "NaN: lt false");
    assert_eq!(one("CSEL.f32.ne r0, r1, r1, r2, r3", &[QNAN, 7, 8]), 7, "NaN: ne true");
    assert_eq!(one("CSEL.f32.eq r0, r1, r2, r3, r4", &[0, NEG_ZERO, 7, 8]), 7, "-0 == +0");
    assert_eq!(
        one("CSEL.v2u16.gt r0, r1, r2, r3, r4", &[0x0001_0005, 0x0002_0004, 0xAAAA_BBBB, 0xCCCC_DDDD]),
        0xCCCC_BBBB
    );
    assert_eq!(
        one("CSEL.v2s16.gt r0, r1, r2, r3, r4", &[0xFFFF_0005, 0x0002_0004, 0xAAAA_BBBB, 0xCCCC_DDDD]),
        0xCCCC_BBBB
    );
    let v = |a: f32, b: f32| h(a) | h(b) << 16;
    assert_eq!(
        one("CSEL.v2f16.le r0, r1, r2, r3, r4", &[v(1.0, 3.0), v(1.0, 2.0), 0xAAAA_BBBB, 0xCCCC_DDDD]),
        0xCCCC_BBBB
    );
}

#[test]
fn frexp_all_modes() {
    assert_eq!(one("FREXPM.f32 r0, r1", &[f(12.0)]), f(0.75));
    assert_eq!(one("FREXPE.f32 r0, r1", &[f(12.0)]), 4);
    assert_eq!(one("FREXPM.f32.log r0, r1", &[f(12.0)]), f(0.75));
    assert_eq!(one("FREXPE.f32.log r0, r1", &[f(12.0)]), 4);
    assert_eq!(one("FREXPM.f32.log r0, r1", &[f(10.0)]), f(1.25));
    assert_eq!(one("FREXPE.f32.log r0, r1", &[f(10.0)]), 3);
    assert_eq!(one("FREXPM.f32.sqrt r0, r1", &[f(8.0)]), f(0.5));
    assert_eq!(one("FREXPE.f32.sqrt r0, r1", &[f(8.0)]), 2, "8 = 0.5 · 4^2");
    assert_eq!(one("FREXPE.f32 r0, r1", &[1]), (-148i32) as u32, "denormal input");
    assert_eq!(one("FREXPM.f32 r0, r1", &[f(-3.0)]), f(-0.75));
    assert_eq!(one("FREXPE.f32 r0, r1", &[0]), 0);
    assert_eq!(one("FREXPM.f32 r0, r1", &[NEG_ZERO]), NEG_ZERO);
    assert_eq!(one("FREXPM.f32 r0, r1", &[INF]), INF);
    assert_eq!(one("FREXPE.f32 r0, r1", &[0x7F80_0001]), 0);
    assert_eq!(one("FREXPE.v2f16 r0, r1", &[h(3.0) | h(0.25) << 16]), 2 | 0xFFFF << 16);
    assert_eq!(one("FREXPM.v2f16 r0, r1", &[h(3.0) | h(0.25) << 16]), h(0.75) | h(0.5) << 16);
}

#[test]
fn reciprocal_and_rsqrt() {
    assert_eq!(one("FRCP.f32 r0, r1", &[f(3.0)]), f(1.0 / 3.0));
    assert_eq!(one("FRCP.f32 r0, r1", &[f(-0.1)]), f(1.0 / -0.1));
    assert_eq!(one("FRCP.f32 r0, r1", &[0]), INF);
    assert_eq!(one("FRCP.f32 r0, r1", &[NEG_ZERO]), NEG_INF);
    assert_eq!(one("FRCP.f32 r0, r1", &[NEG_INF]), NEG_ZERO);
    assert_eq!(one("FRCP.f32 r0, r1", &[1]), INF, "1/denormal overflows");
    assert_eq!(one("FRCP.f32 r0, r1", &[f(2f32.powi(127))]), 0x0040_0000, "denormal result 2^-127");
    assert_eq!(one("FRCP.f32 r0, r1", &[0x7F80_0005]), 0x7FC0_0005);
    assert_eq!(one("FRCP.f32 r0, r1.neg", &[f(4.0)]), f(-0.25));
    assert_eq!(one("FRSQ.f32 r0, r1", &[f(4.0)]), f(0.5));
    assert_eq!(one("FRSQ.f32 r0, r1", &[f(2.0)]), f(1.0 / 2f32.sqrt()));
    assert_eq!(one("FRSQ.f32 r0, r1", &[f(-1.0)]), QNAN);
    assert_eq!(one("FRSQ.f32 r0, r1", &[NEG_ZERO]), NEG_INF);
    assert_eq!(one("FRSQ.f32 r0, r1", &[INF]), 0);
    assert_eq!(one("FRSQ.f32 r0, r1.abs", &[f(-16.0)]), f(0.25));
    assert_eq!(one("FRCP.f16 r0, r1", &[h(4.0) | h(-0.5) << 16]), h(0.25) | h(-2.0) << 16);
    assert_eq!(one("FRSQ.f16 r0, r1", &[h(4.0) | h(16.0) << 16]), h(0.5) | h(0.25) << 16);
    assert_eq!(one("FRCP_APPROX.f32 r0, r1", &[f(8.0)]), f(0.125));
    assert_eq!(one("FRSQ_APPROX.f32 r0, r1", &[f(8.0)]), f(2f32.sqrt()), "rsq of FREXPM.sqrt(8) = 0.5");
}

#[test]
fn ldexp_and_rscale() {
    assert_eq!(one("LDEXP.f32 r0, r1, r2", &[f(1.5), 3]), f(12.0));
    assert_eq!(one("LDEXP.f32 r0, r1, r2", &[f(1.5), (-149i32) as u32]), 2, "tie to even in the denormals");
    assert_eq!(one("LDEXP.f32.rtz r0, r1, r2", &[f(1.5), (-149i32) as u32]), 1);
    assert_eq!(one("LDEXP.f32.rtp r0, r1, r2", &[f(1.0), (-1000i32) as u32]), 1);
    assert_eq!(one("LDEXP.f32 r0, r1, r2", &[f(1.0), 200]), INF);
    assert_eq!(one("LDEXP.f32.rtz r0, r1, r2", &[f(1.0), 200]), MAX);
    assert_eq!(one("LDEXP.f32 r0, r1, r2", &[0, 200]), 0, "zero stays zero");
    assert_eq!(one("LDEXP.f32 r0, r1, r2", &[INF, (-500i32) as u32]), INF);
    assert_eq!(one("LDEXP.f32 r0, r1.neg, r2", &[f(1.0), 1]), f(-2.0));
    assert_eq!(one("LDEXP.v2f16 r0, r1, r2", &[h(1.0) | h(3.0) << 16, 2 | 0xFFFF << 16]), h(4.0) | h(1.5) << 16);
    assert_eq!(one("FMA_RSCALE.f32 r0, r1, r2, r3, r4", &[f(3.0), f(2.0), f(1.0), 4]), f(112.0));
    assert_eq!(one("FMA_RSCALE.f32 r0, r1, r2, 0x0.neg, 0xFFFFFFFF", &[f(3.0), f(3.0)]), f(4.5));
    assert_eq!(one("FMA_RSCALE.f32.clamp_0_1 r0, r1, r2, r3, r4", &[f(3.0), f(2.0), f(1.0), 4]), f(1.0));
    assert_eq!(one("FMA_RSCALE.f32 r0, r1, r2, r3, r4", &[INF, 0, f(1.0), 1]), QNAN);
    assert_eq!(one("FMA_RSCALE_N.f32 r0, r1, r2, r3, r4", &[INF, 0, f(1.0), 1]), f(2.0), "0·∞ is 0");
    assert_eq!(one("FMA_RSCALE_LEFT.f32 r0, r1, r2, r3, r4", &[f(5.0), 0, f(1.0), 1]), f(12.0), "product = A");
    assert_eq!(one("FMA_RSCALE_SCALE16.f32 r0, r1, r2, r3, r4", &[f(1.0), f(1.0), 0, 0x1234_FFFF]), f(0.5));
}

#[test]
fn flush_modes() {
    assert_eq!(one("FLUSH.f32.flush_nan r0, r1", &[QNAN]), 0);
    assert_eq!(one("FLUSH.f32.quiet_nan r0, r1", &[0x7F80_0001]), 0x7FC0_0001);
    assert_eq!(one("FLUSH.f32.quiet_nan.ftz r0, r1", &[0x8000_0001]), NEG_ZERO);
    assert_eq!(one("FLUSH.f32.quiet_nan r0, r1", &[0x8000_0001]), 0x8000_0001);
    assert_eq!(one("FLUSH.f32.quiet_nan.flush_inf r0, r1", &[NEG_INF]), 0xFF7F_FFFF);
    assert_eq!(one("FLUSH.v2f16.flush_nan.ftz r0, r1", &[0x0001 | 0x7E00 << 16]), 0);
}

#[test]
fn sixty_four_bit_integers() {
    assert_eq!(one64("IADD.u64 r0, r2, r4", &[0, 0xFFFF_FFFF, 0, 1, 0]), 0x1_0000_0000);
    assert_eq!(one64("IADD.u64.saturate r0, r2, r4", &[0, u32::MAX, u32::MAX, 1, 0]), u64::MAX);
    assert_eq!(one64("ISUB.s64.saturate r0, r2, r4", &[0, 0, 0x8000_0000, 1, 0]), i64::MIN as u64);
    assert_eq!(one64("IADD.s64 r0, r2, r4.w0", &[0, 10, 0, u32::MAX, 7]), 9, "w0 sign-extends for .s64");
    assert_eq!(one64("SHADDX.u64 r0, r2, r4.w0, shift:0x2", &[0, 0x1000, 1, 3, 0]), 0x1_0000_100C);
    assert_eq!(one64("SHADDX.s64 r0, r2, r4.w0, shift:0x2", &[0, 0x1000, 1, u32::MAX, 0]), 0x1_0000_0FFC);
    assert_eq!(one64("IMULD.u64 r0, r2.w0, r4.w0", &[0, u32::MAX, 0, u32::MAX, 0]), 0xFFFF_FFFE_0000_0001);
    assert_eq!(one64("SEG_ADD.u64.preserve_null r0, r2, r4.w0", &[0, 0, 0, 16, 0]), 0);
    assert_eq!(one64("SEG_ADD.u64.neg r0, r2, r4.w0", &[0, 0x100, 1, 16, 0]), 0x1_0000_00F0);
    assert_eq!(one64("NOT_OLD.i64 r0, r2", &[0, 0xF0F0_F0F0, 0x0F0F_0F0F]), 0xF0F0_F0F0_0F0F_0F0F);
    assert_eq!(one64("LSHIFT_OR.i64 r0, r2, r4.b00, r6", &[0, 1, 0, 40, 0, 0, 0]), 1 << 40);
    assert_eq!(one64("RSHIFT_OR.i64.signed r0, r2, r4.b00, r6", &[0, 0, 0x8000_0000, 63, 0, 0, 0]), u64::MAX);
    assert_eq!(one64("LSHIFT_OR.i64 r0, r2, r4.b00, r6", &[0, 1, 0, 65, 0, 0, 0]), 2, "mod 64");
}

#[test]
fn sfu_tables() {
    for k in 0..64u32 {
        let angle = f64::from(k) * std::f64::consts::PI / 32.0;
        // Multiples of π/2 are exact (the host's sin(π) is not).
        let exact = |v: f64| if k % 16 == 0 { v.round() as f32 + 0.0 } else { v as f32 };
        assert_eq!(one("FSIN_TABLE.u6 r0, r1", &[k + 64 * 5]), f(exact(angle.sin())), "sin {k}");
        assert_eq!(one("FCOS_TABLE.u6 r0, r1", &[k]), f(exact(angle.cos())), "cos {k}");
    }
    for k in 0..16u32 {
        assert_eq!(one("FEXP_TABLE.u4 r0, r1", &[k]), f((f64::from(k) / 16.0).exp2() as f32));
    }
    // 2^2.5 from the 8:24 fixed point and its float twin.
    let x = 2.5f32 * 16_777_216.0;
    assert_eq!(one("FEXP.f32 r0, r1, r2", &[x as u32, f(x)]), f(2.5f64.exp2() as f32));
    assert_eq!(one("FEXP.f32 r0, r1, r2", &[0x7FFF_FFFF, INF]), INF);
    assert_eq!(one("FEXP.f32 r0, r1, r2", &[0x8000_0000, f(-1e30)]), 0);
    assert_eq!(one("FEXP.f32 r0, r1, r2", &[0, 0x7FC0_1234]), 0x7FC0_1234);
    assert_eq!(one("FLOGD.f32 r0, r1", &[f(1.0)]), f((1.0 / std::f64::consts::LN_2) as f32));
    assert_eq!(one("FLOGD.f32 r0, r1", &[0]), INF);
    assert_eq!(one("FLOGD.f32 r0, r1", &[f(-2.0)]), QNAN);
    assert_eq!(one("FLOG_TABLE.f32 r0, r1", &[f(10.0)]), f(1.25f64.log2() as f32));
    assert_eq!(one("FADD_LSCALE.f32 r0, 0x3F800000.neg, r1", &[f(10.0)]), f(0.25));
    assert_eq!(one("FADD_LSCALE.f32 r0, 0x3F800000.neg, r1", &[0]), f(-1.0));
}

#[test]
fn undefined_instructions_are_reported() {
    for text in ["FPCLASS.f32 r0, r1", "FATAN_ASSIST.f32 r0, r1, r2", "FSINCOS_OFFSET.u6 r0, r1"] {
        let p = Program::assemble(&format!("{text}\nNOP.end")).unwrap();
        let mut m = Machine::new(Stage::Compute);
        m.set_reg_all(1, 0);
        m.set_reg_all(2, 0);
        let e = m.run(&p).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Unsupported, "{text}: {e}");
        assert_eq!(e.index, Some(0));
    }
}

#[test]
fn per_lane_values_and_write_masks() {
    let p = Program::assemble("IADD.u32 r0, r1, r2\nIADD_IMM.i32 r3.h1, r1, #0xABCD0000\nNOP.end").unwrap();
    let mut m = Machine::new(Stage::Compute);
    m.set_reg_lanes(1, [1, 2, 3, 4]);
    m.set_reg_lanes(2, [10, 20, 30, 40]);
    m.set_reg_all(3, 0x1111_2222);
    m.run(&p).unwrap();
    assert_eq!(m.reg(0), [11, 22, 33, 44]);
    assert_eq!(m.reg(3), [0xABCD_2222, 0xABCD_2222, 0xABCD_2222, 0xABCD_2222], ".h1 writes the high half only");
}

#[test]
fn fau_values() {
    let p = Program::assemble(
        "IADD.u32 r0, u1, 0x0\nMOV.i32 r1, lane_id.w0\nMOV.i32 r2, core_id.w0\nMOV.i32 r3, program_counter.w0\nIADD.u32 r4, 0x7060504.b2, 0x0\nNOP.end",
    )
    .unwrap();
    let mut m = Machine::new(Stage::Compute);
    m.uniforms[1] = Some(77);
    m.run(&p).unwrap();
    assert_eq!(m.reg(0), [77; 4]);
    assert_eq!(m.reg(1), [0, 1, 2, 3]);
    assert_eq!(m.reg(2), [0; 4]);
    assert_eq!(m.reg(3)[0], (tgsi2va::emu::memory::CODE_BASE + 4 * 8) as u32, "address of the next instruction");
    assert_eq!(m.reg(4), [6; 4]);
    // A uniform the metadata does not describe.
    let p = Program::assemble("IADD.u32 r0, u2, 0x0\nNOP.end").unwrap();
    assert_eq!(m.run(&p).unwrap_err().kind, ErrorKind::Metadata);
}
