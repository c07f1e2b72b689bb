//! The lowering recipes of valhall-abi-and-lowering.md §C, run on the emulator exactly as the
//! document writes them: they must compute what they claim. The precision bounds checked here
//! are the ones docs/emulator.md §6 states.

#![allow(clippy::needless_range_loop)] // lanes are indexed in parallel arrays

use tgsi2va::emu::{Machine, Program, Stage};
use tgsi2va::exec::LANES;
use tgsi2va::exec::texture::cube_project;

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// A float uniform in `[lo, hi)`.
fn uniform(rng: &mut Rng, lo: f64, hi: f64) -> f32 {
    (lo + (hi - lo) * rng.unit()) as f32
}

fn program(text: &str) -> Program {
    Program::assemble(&format!("{text}\nNOP.end")).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `p` with the given per-lane inputs in registers; returns the machine.
fn run(p: &Program, inputs: &[(usize, [u32; LANES])]) -> Machine {
    let mut m = Machine::new(Stage::Compute);
    for &(reg, values) in inputs {
        m.set_reg_lanes(reg, values);
    }
    m.run(p).unwrap_or_else(|e| panic!("{e}"));
    m
}

/// Evaluates a one-input float recipe on many inputs (four per run).
fn eval_f32(p: &Program, input: usize, output: usize, xs: &[f32]) -> Vec<f32> {
    let mut out = Vec::new();
    for chunk in xs.chunks(LANES) {
        let mut lanes = [0u32; LANES];
        for (l, x) in chunk.iter().enumerate() {
            lanes[l] = x.to_bits();
        }
        let m = run(p, &[(input, lanes)]);
        out.extend(m.reg(output)[..chunk.len()].iter().map(|&b| f32::from_bits(b)));
    }
    out
}

/// Error of `got` in units in the last place of the exact value (f32 spacing at `exact`).
fn ulps(got: f32, exact: f64) -> f64 {
    if exact == 0.0 {
        return if got == 0.0 { 0.0 } else { f64::INFINITY };
    }
    let e = exact.abs().log2().floor().max(-126.0) as i32;
    let ulp = 2f64.powi(e - 23);
    (f64::from(got) - exact).abs() / ulp
}

const EX2: &str = "IADD_IMM.i32   r2, 0x0, #0x18
FMA_RSCALE.f32 r1, r0, 0x3F800000, 0x0.neg, r2
F32_TO_S32     r3, r1
FEXP.f32       r4, r3, r1";

const LG2: &str = "FREXPE.f32.log  r1, r0
S32_TO_F32      r2, r1
FADD_LSCALE.f32 r3, 0x3F800000.neg, r0
FLOGD.f32       r4, r0
FMA.f32         r5, r4, r3, r2";

#[test]
fn ex2_sequence() {
    let p = program(EX2);
    let mut rng = Rng::new(0x1234_5678_9abc);
    let mut xs: Vec<f32> = (0..4000).map(|_| uniform(&mut rng, -149.0, 128.0)).collect();
    xs.extend((0..2000).map(|_| uniform(&mut rng, -1.0, 1.0)));
    xs.extend((0..500).map(|_| uniform(&mut rng, -1e-6, 1e-6)));
    let ys = eval_f32(&p, 0, 4, &xs);
    let mut worst = 0.0f64;
    for (&x, &y) in xs.iter().zip(&ys) {
        let exact = f64::from(x).exp2();
        let e = ulps(y, exact);
        worst = worst.max(e);
        assert!(e <= 1.0, "2^{x} = {y}, exact {exact}: {e} ulp");
    }
    assert!(worst > 0.0);
    // Special cases come from the float operand.
    let special = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 128.0, 1e30, -150.0, -1e30, 0.0, -0.0, 3.0, -126.0];
    let ys = eval_f32(&p, 0, 4, &special);
    assert_eq!(ys[0], f32::INFINITY);
    assert_eq!(ys[1].to_bits(), 0);
    assert!(ys[2].is_nan());
    assert_eq!(ys[3], f32::INFINITY);
    assert_eq!(ys[4], f32::INFINITY);
    assert_eq!(ys[5].to_bits(), 0, "2^-150 rounds to even (zero)");
    assert_eq!(ys[6].to_bits(), 0);
    assert_eq!(ys[7], 1.0);
    assert_eq!(ys[8], 1.0);
    assert_eq!(ys[9], 8.0);
    assert_eq!(ys[10], 2f32.powi(-126));
}

#[test]
fn lg2_sequence() {
    let p = program(LG2);
    let mut rng = Rng::new(0xfeed_beef);
    let mut xs: Vec<f32> = (0..5000).map(|_| f32::from_bits(rng.next_u32() % 0x7F80_0000)).collect();
    xs.extend((0..2000).map(|_| uniform(&mut rng, 0.5, 2.0)));
    xs.extend((0..500).map(|_| uniform(&mut rng, 0.999, 1.001)));
    let ys = eval_f32(&p, 0, 5, &xs);
    for (&x, &y) in xs.iter().zip(&ys) {
        if x == 0.0 {
            continue;
        }
        let exact = f64::from(x).log2();
        let e = ulps(y, exact);
        assert!(e <= 1.5, "log2({x:e}) = {y}, exact {exact}: {e} ulp");
    }
    let special = [0.0, -0.0, f32::INFINITY, -1.0, f32::NAN, 1.0, 1024.0, 2f32.powi(-149), f32::NEG_INFINITY];
    let ys = eval_f32(&p, 0, 5, &special);
    assert_eq!(ys[0], f32::NEG_INFINITY);
    assert_eq!(ys[1], f32::NEG_INFINITY);
    assert_eq!(ys[2], f32::INFINITY);
    assert!(ys[3].is_nan());
    assert!(ys[4].is_nan());
    assert_eq!(ys[5].to_bits(), 0);
    assert_eq!(ys[6], 10.0);
    assert_eq!(ys[7], -149.0);
    assert!(ys[8].is_nan());
}

#[test]
fn pow_sequence() {
    // POW = EX2(y · LG2(x)); y in r7.
    let text = format!(
        "{LG2}
IADD_IMM.i32   r2, 0x0, #0x18
FMA_RSCALE.f32 r6, r7, r5, 0x0.neg, r2
F32_TO_S32     r8, r6
FEXP.f32       r9, r8, r6"
    );
    let p = program(&text);
    let mut rng = Rng::new(42);
    for _ in 0..1500 {
        let x: [f32; 4] = std::array::from_fn(|_| uniform(&mut rng, 0.01, 100.0));
        let y: [f32; 4] = std::array::from_fn(|_| uniform(&mut rng, -8.0, 8.0));
        let m = run(&p, &[(0, x.map(f32::to_bits)), (7, y.map(f32::to_bits))]);
        for l in 0..LANES {
            let got = f32::from_bits(m.reg(9)[l]);
            let t = f64::from(y[l]) * f64::from(x[l]).log2();
            let exact = t.exp2();
            // Bound: 1.5 ulp per unit of |y·log2 x| (the LG2 error amplified by the exponent).
            let bound = 1.5 * t.abs().max(1.0);
            assert!(ulps(got, exact) <= bound, "{}^{} = {got}, exact {exact}", x[l], y[l]);
        }
    }
    let m = run(&p, &[(0, [2.0f32.to_bits(); 4]), (7, [10.0f32.to_bits(); 4])]);
    assert_eq!(f32::from_bits(m.reg(9)[0]), 1024.0, "exact powers stay exact");
}

const SINCOS: &str = "IADD_IMM.i32 r10, 0x0, #0x3F22F98C
IADD_IMM.i32 r11, 0x0, #0x49400000
FMA.f32  r1, r0, r10, r11
FADD.f32 r2, r1, r11.neg
IADD_IMM.i32 r12, 0x0, #0xBFC90FD0
FMA.f32  r3, r2, r12, r0
FSIN_TABLE.u6 r4, r1
FCOS_TABLE.u6 r5, r1
FMA_RSCALE.f32 r6, r3, r3, 0x0.neg, 0xFFFFFFFF
FMA.f32 r7, r6.neg, r4, 0x0.neg
FMA.f32.clamp_m1_1 r8, r3, r5, r7
FADD.f32 r9, r8, r4
FMA.f32 r13, r6.neg, r5, 0x0.neg
FMA.f32.clamp_m1_1 r14, r3, r4.neg, r13
FADD.f32 r15, r14, r5";

#[test]
fn sin_cos_sequence() {
    let p = program(SINCOS);
    let mut rng = Rng::new(7);
    for (range, bound) in [(std::f64::consts::PI, 2.5e-5), (100.0, 1.2e-4)] {
        let xs: Vec<f32> = (0..6000).map(|_| uniform(&mut rng, -range, range)).collect();
        let sins = eval_f32(&p, 0, 9, &xs);
        let coss = eval_f32(&p, 0, 15, &xs);
        let mut worst = 0.0f64;
        for ((&x, &s), &c) in xs.iter().zip(&sins).zip(&coss) {
            let (es, ec) = (f64::from(x).sin(), f64::from(x).cos());
            let err = (f64::from(s) - es).abs().max((f64::from(c) - ec).abs());
            worst = worst.max(err);
            assert!(err <= bound, "sin/cos({x}) = {s}, {c}; exact {es}, {ec}");
        }
        assert!(worst > 1e-7, "the tables are crude, the correction is second order");
    }
    let ys = eval_f32(&p, 0, 9, &[0.0, std::f32::consts::FRAC_PI_2]);
    assert_eq!(ys[0], 0.0);
    assert!((ys[1] - 1.0).abs() < 1e-6);
}

#[test]
fn div_and_sqrt_sequences() {
    let div = program("FRCP.f32 r2, r1\nFMA.f32  r3, r0, r2, 0x0.neg");
    let sqrt = program("FRSQ.f32 r1, r0\nFRCP.f32 r1, r1");
    let mut rng = Rng::new(99);
    for _ in 0..2000 {
        let a: [f32; 4] = std::array::from_fn(|_| uniform(&mut rng, -1e6, 1e6));
        let b: [f32; 4] = std::array::from_fn(|_| uniform(&mut rng, -1e3, 1e3));
        let m = run(&div, &[(0, a.map(f32::to_bits)), (1, b.map(f32::to_bits))]);
        for l in 0..LANES {
            let exact = f64::from(a[l]) / f64::from(b[l]);
            assert!(ulps(f32::from_bits(m.reg(3)[l]), exact) <= 1.5, "{} / {}", a[l], b[l]);
        }
        let x: [f32; 4] = std::array::from_fn(|_| f32::from_bits(rng.next_u32() % 0x7F80_0000));
        let m = run(&sqrt, &[(0, x.map(f32::to_bits))]);
        for l in 0..LANES {
            let exact = f64::from(x[l]).sqrt();
            assert!(ulps(f32::from_bits(m.reg(1)[l]), exact) <= 1.5, "sqrt {}", x[l]);
        }
    }
}

/// §C.6 `umul_high` into `dst` from `a`, `b`, using scratch registers r40–r53.
fn umul_high(dst: u32, a: u32, b: u32) -> String {
    format!(
        "U16_TO_U32 r40, r{a}.h00
U16_TO_U32 r41, r{a}.h10
U16_TO_U32 r42, r{b}.h00
U16_TO_U32 r43, r{b}.h10
IMUL.i32 r44, r40, r42
IMUL.i32 r45, r40, r43
IMUL.i32 r46, r41, r42
IMUL.i32 r47, r41, r43
LSHIFT_OR.i32 r48, r45, 0x13121110.b00, 0x0
IADD.s32 r49, r44, r48
ICMP_OR.u32.lt.i1 r50, r49, r44, 0x0
IADD.s32 r47, r47, r50
RSHIFT_OR.i32 r51, r45, 0x13121110.b00, 0x0
IADD.s32 r47, r47, r51
LSHIFT_OR.i32 r48, r46, 0x13121110.b00, 0x0
IADD.s32 r52, r49, r48
ICMP_OR.u32.lt.i1 r50, r52, r49, 0x0
IADD.s32 r47, r47, r50
RSHIFT_OR.i32 r51, r46, 0x13121110.b00, 0x0
IADD.s32 r{dst}, r47, r51"
    )
}

#[test]
fn umul_high_sequence() {
    let p = program(&umul_high(9, 0, 1));
    let mut rng = Rng::new(5);
    let mut cases: Vec<(u32, u32)> = (0..4000).map(|_| (rng.next_u32(), rng.next_u32())).collect();
    cases.extend([(u32::MAX, u32::MAX), (0, u32::MAX), (0xFFFF, 0xFFFF), (0x1_0000, 0x1_0000), (0x8000_0000, 2)]);
    for chunk in cases.chunks(LANES) {
        let mut a = [0; LANES];
        let mut b = [0; LANES];
        for (l, &(x, y)) in chunk.iter().enumerate() {
            a[l] = x;
            b[l] = y;
        }
        let m = run(&p, &[(0, a), (1, b)]);
        for l in 0..chunk.len() {
            assert_eq!(m.reg(9)[l], ((u64::from(a[l]) * u64::from(b[l])) >> 32) as u32, "{:#x} * {:#x}", a[l], b[l]);
        }
    }
}

#[test]
fn unsigned_division_sequence() {
    let text = format!(
        "U32_TO_F32 r2, r1
FRCP.f32   r2, r2
IADD_IMM.i32 r3, 0x0, #0x4F7FFFFE
FMA.f32    r2, r2, r3, 0x0.neg
F32_TO_U32.rtz r2, r2
ISUB.s32   r3, 0x0, r1
IMUL.i32   r3, r2, r3
{}
IADD.s32   r2, r2, r4
{}
IMUL.i32   r6, r5, r1
ISUB.s32   r6, r0, r6
ICMP_OR.u32.ge.m1 r7, r6, r1, 0x0
IADD_IMM.i32 r8, r5, #0x1
CSEL.u32.eq  r5, r7, 0x0, r5, r8
ISUB.s32     r9, r6, r1
CSEL.u32.eq  r6, r7, 0x0, r6, r9
ICMP_OR.u32.ge.m1 r7, r6, r1, 0x0
IADD_IMM.i32 r8, r5, #0x1
CSEL.u32.eq  r5, r7, 0x0, r5, r8
ISUB.s32     r9, r6, r1
CSEL.u32.eq  r6, r7, 0x0, r6, r9",
        umul_high(4, 2, 3),
        umul_high(5, 0, 2)
    );
    let p = program(&text);
    let mut rng = Rng::new(1234);
    let mut cases: Vec<(u32, u32)> = Vec::new();
    for _ in 0..3000 {
        let n = rng.next_u32();
        let d = match rng.next_u32() % 4 {
            0 => rng.next_u32() % 16 + 1,
            1 => rng.next_u32() % 65536 + 1,
            _ => rng.next_u32().max(1),
        };
        cases.push((n, d));
    }
    cases.extend([
        (u32::MAX, 1),
        (u32::MAX, u32::MAX),
        (0, 7),
        (u32::MAX, 0x8000_0000),
        (0x8000_0000, 3),
        (6, 7),
        (7, 7),
    ]);
    cases.extend((1..=64).map(|d| (u32::MAX - d, d)));
    for chunk in cases.chunks(LANES) {
        let mut n = [1; LANES];
        let mut d = [1; LANES];
        for (l, &(x, y)) in chunk.iter().enumerate() {
            n[l] = x;
            d[l] = y;
        }
        let m = run(&p, &[(0, n), (1, d)]);
        for l in 0..chunk.len() {
            assert_eq!(m.reg(5)[l], n[l] / d[l], "{} / {}", n[l], d[l]);
            assert_eq!(m.reg(6)[l], n[l] % d[l], "{} % {}", n[l], d[l]);
        }
    }
    // Division by zero produces something, without a fault.
    run(&p, &[(0, [5, 0, u32::MAX, 1]), (1, [0; LANES])]);
}

#[test]
fn sixty_four_bit_add_sequence() {
    let p = program("IADD.s32 r4, r0, r2\nICMP_OR.u32.lt.i1 r6, r4, r0, 0x0\nIADD.s32 r5, r1, r3\nIADD.s32 r5, r6, r5");
    let mut rng = Rng::new(77);
    for _ in 0..500 {
        let a: [u64; 4] = std::array::from_fn(|_| u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32()));
        let b: [u64; 4] = std::array::from_fn(|_| u64::from(rng.next_u32()) << 32 | u64::from(rng.next_u32()));
        let m = run(
            &p,
            &[
                (0, a.map(|v| v as u32)),
                (1, a.map(|v| (v >> 32) as u32)),
                (2, b.map(|v| v as u32)),
                (3, b.map(|v| (v >> 32) as u32)),
            ],
        );
        for l in 0..LANES {
            let got = u64::from(m.reg(4)[l]) | u64::from(m.reg(5)[l]) << 32;
            assert_eq!(got, a[l].wrapping_add(b[l]));
        }
    }
}

#[test]
fn bit_field_sequences() {
    // UBFE(v, off, bits) of §C.9; r0 = v, r1 = off, r2 = bits.
    let ubfe = program(
        "RSHIFT_OR.i32  r3, r0, r1.b00, 0x0
LSHIFT_OR.i32  r4, 0x03020100.b1, r2.b00, 0x0
IADD_IMM.i32   r4, r4, #0xFFFFFFFF
ICMP_OR.u32.eq.m1 r5, r2, 0x80002000.b1, 0x0
CSEL.u32.eq    r4, r5, 0x0, r4, 0xFFFFFFFF
LSHIFT_AND.i32 r6, r3, 0x0.b00, r4",
    );
    // UMSB = 31 - clz(x); LSB = umsb(x & -x); IMSB.
    let msb = program(
        "CLZ.u32 r1, r0
ISUB.u32 r1, 0x1F1E1D1C.b3, r1
ISUB.s32 r2, 0x0, r0
LSHIFT_AND.i32 r2, r0, 0x0.b00, r2
CLZ.u32 r2, r2
ISUB.u32 r2, 0x1F1E1D1C.b3, r2
ICMP_OR.s32.lt.m1 r3, r0, 0x0, 0x0
LSHIFT_OR.i32 r4, 0x0, 0x0.b00, r0.not
CSEL.u32.eq r5, r3, 0x0, r0, r4
CLZ.u32 r5, r5
ISUB.u32 r5, 0x1F1E1D1C.b3, r5",
    );
    let mut rng = Rng::new(3);
    for _ in 0..500 {
        let v: [u32; 4] = std::array::from_fn(|_| rng.next_u32());
        let off: [u32; 4] = std::array::from_fn(|_| rng.next_u32() % 32);
        let bits: [u32; 4] = std::array::from_fn(|i| (rng.next_u32() % 33).min(32 - off[i]));
        let m = run(&ubfe, &[(0, v), (1, off), (2, bits)]);
        for l in 0..LANES {
            let mask = if bits[l] == 32 { u32::MAX } else { (1u32 << bits[l]) - 1 };
            assert_eq!(m.reg(6)[l], (v[l] >> off[l]) & mask, "ubfe({:#x}, {}, {})", v[l], off[l], bits[l]);
        }
        let x: [u32; 4] = std::array::from_fn(|i| if i == 0 { 0 } else { rng.next_u32() >> (rng.next_u32() % 32) });
        let m = run(&msb, &[(0, x)]);
        for l in 0..LANES {
            let umsb = if x[l] == 0 { -1 } else { 31 - x[l].leading_zeros() as i32 };
            let lsb = if x[l] == 0 { -1 } else { x[l].trailing_zeros() as i32 };
            let y = if (x[l] as i32) < 0 { !x[l] } else { x[l] };
            let imsb = if y == 0 { -1 } else { 31 - y.leading_zeros() as i32 };
            assert_eq!(m.reg(1)[l] as i32, umsb);
            assert_eq!(m.reg(2)[l] as i32, lsb);
            assert_eq!(m.reg(5)[l] as i32, imsb);
        }
    }
}

#[test]
fn derivatives_with_clper() {
    let fine = |axis_mask: u32, axis: u32| {
        program(&format!(
            "MOV.i32 r4, lane_id.w0
IADD_IMM.i32 r5, 0x0, #{axis_mask:#X}
LSHIFT_AND.i32 r6, r4, 0x0.b00, r5
IADD_IMM.i32 r7, r6, #{axis:#X}
CLPER.i32.subgroup4 r8, r0, r6.b00
CLPER.i32.subgroup4 r9, r0, r7.b00
FADD.f32 r10, r9, r8.neg"
        ))
    };
    let ddx = fine(2, 1);
    let ddy = fine(1, 2);
    let coarse_x = program(
        "CLPER.i32.subgroup4 r8, r0, 0x0.b00\nCLPER.i32.subgroup4 r9, r0, 0x03020100.b11\nFADD.f32 r10, r9, r8.neg",
    );
    let coarse_y = program(
        "CLPER.i32.subgroup4 r8, r0, 0x0.b00\nCLPER.i32.subgroup4 r9, r0, 0x03020100.b22\nFADD.f32 r10, r9, r8.neg",
    );
    let abs_x = program("CLPER.i32.subgroup4.xor r9, r0, 0x03020100.b11\nFADD.f32 r10, r9, r0.neg");
    // v = 3x + 5y + x·y per lane (x = lane & 1, y = lane >> 1).
    let v: [f32; 4] = [0.0, 3.0, 5.0, 9.0];
    let bits = v.map(f32::to_bits);
    let get = |p: &Program| run(p, &[(0, bits)]).reg(10).map(f32::from_bits);
    assert_eq!(get(&ddx), [3.0, 3.0, 4.0, 4.0]);
    assert_eq!(get(&ddy), [5.0, 6.0, 5.0, 6.0]);
    assert_eq!(get(&coarse_x), [3.0; 4]);
    assert_eq!(get(&coarse_y), [5.0; 4]);
    assert_eq!(get(&abs_x), [3.0, -3.0, 4.0, -4.0]);
}

#[test]
fn cube_sequence_matches_cube_project() {
    let p = program(
        "CUBEFACE1    r3, r0, r1, r2
CUBEFACE2_V9 r4, r0, r1, r2
CUBE_SSEL    r5, r2, r0, r4
CUBE_TSEL    r6, r1, r2, r4
FRCP.f32     r3, r3
FMA.f32      r3, r3, 0x38000000.h1, 0x0.neg
FMA.f32.clamp_0_1 r5, r3, r5, 0x38000000.h1
FMA.f32.clamp_0_1 r13, r3, r6, 0x38000000.h1
IADD_IMM.i32 r7, 0x0, #0x1FFFFFFF
MUX.i32.bit  r12, r5, r4, r7",
    );
    let mut rng = Rng::new(2024);
    let mut dirs: Vec<[f32; 3]> = (0..4000).map(|_| std::array::from_fn(|_| uniform(&mut rng, -10.0, 10.0))).collect();
    dirs.extend([
        [1.0, 1.0, 1.0],
        [-1.0, 1.0, -1.0],
        [0.0, 0.0, -0.0],
        [-0.0, 2.0, 2.0],
        [0.0, -3.0, 3.0],
        [1e-30, -1e-30, 0.0],
        [5.0, 0.0, 0.0],
        [0.0, 0.0, 0.0],
        [-0.0, 0.0, 0.0],
        [3.0, -3.0, 0.0],
    ]);
    for chunk in dirs.chunks(LANES) {
        let mut regs = [[0u32; LANES]; 3];
        for (l, d) in chunk.iter().enumerate() {
            for c in 0..3 {
                regs[c][l] = d[c].to_bits();
            }
        }
        let m = run(&p, &[(0, regs[0]), (1, regs[1]), (2, regs[2])]);
        for (l, d) in chunk.iter().enumerate() {
            let (face, s, t) = cube_project(d[0], d[1], d[2]);
            assert_eq!(m.reg(4)[l] >> 29, face, "face of {d:?}");
            assert_eq!(m.reg(12)[l] >> 29, face);
            let same = |got: u32, want: f32| f32::from_bits(got) == want || (want.is_nan() && got == 0);
            assert!(same(m.reg(5)[l], s), "s of {d:?}: {} vs {s}", f32::from_bits(m.reg(5)[l]));
            assert!(same(m.reg(13)[l], t), "t of {d:?}");
            assert_eq!(m.reg(12)[l] & 0x1FFF_FFFF, m.reg(5)[l] & 0x1FFF_FFFF);
        }
    }
}
