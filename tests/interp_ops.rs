//! Per-opcode tests of the TGSI reference interpreter against hand-computed values, with the
//! edge cases: ±0, denormals, NaN, ±∞, overflow, shift counts ≥ 32, division by zero, every
//! comparison with NaN; legacy opcodes; 64-bit pairs.
#![allow(clippy::needless_range_loop)]

use tgsi2va::exec::io::{Inputs, RegKey};
use tgsi2va::interp::{self, Accuracy, Run};
use tgsi2va::tgsi::ast::File;

const NAN: u32 = 0x7fc0_0000;
const INF: u32 = 0x7f80_0000;
const NINF: u32 = 0xff80_0000;
const NEG0: u32 = 0x8000_0000;
const TRUE: u32 = 0xffff_ffff;

fn f(x: f32) -> u32 {
    x.to_bits()
}

/// Runs `body` (instructions without numbers) in a shader of `stage` with the declarations
/// `decls`; `inputs` is the inputs JSON.
fn run_prog(stage: &str, decls: &str, body: &str, inputs: &str) -> Run {
    let text = program(stage, decls, body);
    let program = tgsi2va::tgsi::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let inputs = Inputs::from_json(inputs).unwrap();
    interp::run(&program, &inputs).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn program(stage: &str, decls: &str, body: &str) -> String {
    let mut text = format!("{stage}\n{decls}\n");
    let mut n = 0;
    for line in body.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with("IMM") {
            text.push_str(line);
            text.push('\n');
        } else {
            text.push_str(&format!("{n:3}: {line}\n"));
            n += 1;
        }
    }
    text.push_str(&format!("{n:3}: END\n"));
    text
}

fn out(run: &Run, index: u32, lane: usize) -> [u32; 4] {
    run.outputs.outputs[&RegKey::new(File::Output, index)][lane]
}

fn acc(run: &Run, index: u32, lane: usize, c: usize) -> Accuracy {
    run.output_accuracy(RegKey::new(File::Output, index), lane, c)
}

/// A vertex shader with IN[0..1] → OUT[0], TEMP[0..3], ADDR[0].
const VS: &str = "DCL IN[0]\nDCL IN[1]\nDCL IN[2]\nDCL OUT[0], POSITION\nDCL TEMP[0..3]\nDCL ADDR[0]";

/// Runs a binary VS operation on IN[0] and IN[1] (same vector in every lane).
fn bin(op: &str, a: [u32; 4], b: [u32; 4]) -> [u32; 4] {
    let inputs = format!(r#"{{"IN[0]": {}, "IN[1]": {}}}"#, hexv(a), hexv(b));
    let run = run_prog("VERT", VS, &format!("{op} OUT[0], IN[0], IN[1]"), &inputs);
    out(&run, 0, 0)
}

fn un(op: &str, a: [u32; 4]) -> [u32; 4] {
    let inputs = format!(r#"{{"IN[0]": {}}}"#, hexv(a));
    let run = run_prog("VERT", VS, &format!("{op} OUT[0], IN[0]"), &inputs);
    out(&run, 0, 0)
}

fn tern(op: &str, a: [u32; 4], b: [u32; 4], c: [u32; 4]) -> [u32; 4] {
    let inputs = format!(r#"{{"IN[0]": {}, "IN[1]": {}, "IN[2]": {}}}"#, hexv(a), hexv(b), hexv(c));
    let run = run_prog("VERT", VS, &format!("{op} OUT[0], IN[0], IN[1], IN[2]"), &inputs);
    out(&run, 0, 0)
}

fn hexv(v: [u32; 4]) -> String {
    format!(r#"["0x{:08x}", "0x{:08x}", "0x{:08x}", "0x{:08x}"]"#, v[0], v[1], v[2], v[3])
}

fn fv(v: [f32; 4]) -> [u32; 4] {
    v.map(f32::to_bits)
}

#[test]
fn add_mul_signed_zero_and_denormals() {
    assert_eq!(bin("ADD", [NEG0, 0, NEG0, f(1.0)], [NEG0, NEG0, 0, f(-1.0)]), [NEG0, 0, 0, 0]);
    // 2^-140 · 0.5 = 2^-141: a denormal, preserved.
    let d = f32::from_bits(1 << 9); // 2^-140
    assert_eq!(bin("MUL", fv([d, 1e30, -0.0, 3.0]), fv([0.5, 1e30, 5.0, f32::INFINITY]))[0], 1 << 8);
    assert_eq!(bin("MUL", fv([d, 1e30, -0.0, 3.0]), fv([0.5, 1e30, 5.0, f32::INFINITY])), [1 << 8, INF, NEG0, INF]);
    let r = bin("MUL", [0, INF, NAN, 0], [INF, NINF, 0, NEG0]);
    assert!(f32::from_bits(r[0]).is_nan() && f32::from_bits(r[2]).is_nan());
    assert_eq!([r[1], r[3]], [NINF, NEG0]);
    assert_eq!(bin("SUB", fv([1.0, 0.0, 5.0, 1e38]), fv([1.0, 0.0, -5.0, -1e38]))[..3], [0, 0, f(10.0)]);
    assert_eq!(bin("SUB", fv([1e38, 0.0, 0.0, 3e38]), fv([-3e38, 0.0, 0.0, -3e38]))[3], INF, "overflow to ∞");
}

#[test]
fn mad_is_fused() {
    let a = 1.0 + f32::EPSILON;
    let p = a * a; // 1 + 2^-22 after rounding
    let r = tern("MAD", fv([a, 2.0, 0.0, 1.0]), fv([a, 3.0, -1.0, 1.0]), fv([-p, 1.0, -0.0, -1.0]));
    assert_eq!(r, fv([2f32.powi(-46), 7.0, -0.0, 0.0]));
    assert_eq!(
        tern("FMA", fv([a, 0.0, 0.0, 0.0]), fv([a, 0.0, 0.0, 0.0]), fv([-p, 0.0, 0.0, 0.0]))[0],
        f(2f32.powi(-46))
    );
}

#[test]
fn min_max_nan_and_zero() {
    let r = bin("MIN", [NAN, f(1.0), NEG0, NAN], [f(2.0), NAN, 0, NAN]);
    assert_eq!(r[..3], [f(2.0), f(1.0), NEG0]);
    assert!(f32::from_bits(r[3]).is_nan());
    assert_eq!(bin("MAX", [NAN, f(1.0), NEG0, NINF], [f(2.0), NAN, 0, f(-1.0)]), [f(2.0), f(1.0), 0, f(-1.0)]);
}

#[test]
fn float_comparisons_with_nan() {
    let a = [NAN, f(1.0), f(1.0), NEG0];
    let b = [f(1.0), NAN, f(2.0), 0];
    let one = f(1.0);
    assert_eq!(bin("SLT", a, b), [0, 0, one, 0]);
    assert_eq!(bin("SGE", a, b), [0, 0, 0, one]);
    assert_eq!(bin("SGT", a, b), [0, 0, 0, 0]);
    assert_eq!(bin("SLE", a, b), [0, 0, one, one]);
    assert_eq!(bin("SEQ", a, b), [0, 0, 0, one]);
    assert_eq!(bin("SNE", a, b), [one, one, one, 0]);
    assert_eq!(bin("FSLT", a, b), [0, 0, TRUE, 0]);
    assert_eq!(bin("FSGE", a, b), [0, 0, 0, TRUE]);
    assert_eq!(bin("FSEQ", a, b), [0, 0, 0, TRUE]);
    assert_eq!(bin("FSNE", a, b), [TRUE, TRUE, TRUE, 0]);
    // CMP: src0 < 0 ? src1 : src2; NaN and -0 take src2.
    let r = tern("CMP", [NAN, NEG0, f(-1.0), f(1.0)], fv([1.0; 4]), fv([2.0; 4]));
    assert_eq!(r, fv([2.0, 2.0, 1.0, 2.0]));
}

#[test]
fn integer_comparisons_and_select() {
    let m1 = (-1i32) as u32;
    assert_eq!(bin("ISLT", [m1, 1, 5, 0], [0, m1, 5, 1]), [TRUE, 0, 0, TRUE]);
    assert_eq!(bin("USLT", [m1, 1, 5, 0], [0, m1, 5, 1]), [0, TRUE, 0, TRUE]);
    assert_eq!(bin("ISGE", [m1, 1, 5, 0], [0, m1, 5, 1]), [0, TRUE, TRUE, 0]);
    assert_eq!(bin("USGE", [m1, 1, 5, 0], [0, m1, 5, 1]), [TRUE, 0, TRUE, 0]);
    assert_eq!(bin("USEQ", [NAN, 1, NEG0, 0], [NAN, 2, 0, 0]), [TRUE, 0, 0, TRUE], "bitwise");
    assert_eq!(bin("USNE", [NAN, 1, NEG0, 0], [NAN, 2, 0, 0]), [0, TRUE, TRUE, 0]);
    assert_eq!(tern("UCMP", [0, 1, NEG0, TRUE], [1, 1, 1, 1], [2, 2, 2, 2]), [2, 1, 1, 1]);
}

#[test]
fn conversions_saturate_and_nan_is_zero() {
    assert_eq!(un("F2I", [NAN, INF, NINF, f(-2.9)]), [0, i32::MAX as u32, i32::MIN as u32, (-2i32) as u32]);
    assert_eq!(un("F2I", fv([3e9, -3e9, 2.9, -0.0])), [i32::MAX as u32, i32::MIN as u32, 2, 0]);
    assert_eq!(un("F2U", [NAN, INF, f(-5.0), f(3.99)]), [0, u32::MAX, 0, 3]);
    assert_eq!(un("F2U", fv([5e9, -0.5, 4294967040.0, 1e-40])), [u32::MAX, 0, 4294967040, 0]);
    assert_eq!(un("I2F", [(-1i32) as u32, 16777217, i32::MIN as u32, 0]), fv([-1.0, 16777216.0, -2147483648.0, 0.0]));
    assert_eq!(un("U2F", [u32::MAX, 16777219, 1, 0]), fv([4294967296.0, 16777220.0, 1.0, 0.0]));
    // ARL floors, ARR rounds half to even.
    assert_eq!(un("ARL", fv([-0.5, 2.5, 3.99, f32::NAN])), [(-1i32) as u32, 2, 3, 0]);
    assert_eq!(un("ARR", fv([-0.5, 2.5, 3.5, -1.6])), [0, 2, 4, (-2i32) as u32]);
}

#[test]
fn rounding() {
    assert_eq!(un("FLR", fv([-0.5, 2.5, -0.0, 1e30])), fv([-1.0, 2.0, -0.0, 1e30]));
    assert_eq!(un("CEIL", fv([-0.5, 2.5, 0.25, -1.0])), [NEG0, f(3.0), f(1.0), f(-1.0)]);
    assert_eq!(un("TRUNC", fv([-0.5, 2.5, -2.7, 1e-40])), [NEG0, f(2.0), f(-2.0), 0]);
    assert_eq!(un("ROUND", fv([0.5, 1.5, 2.5, -2.5])), fv([0.0, 2.0, 2.0, -2.0]));
    // FRC: x − floor(x); a tiny negative value rounds to 1.0; ∞ gives NaN.
    let r = un("FRC", fv([-0.25, 2.75, -1e-10, f32::INFINITY]));
    assert_eq!(r[..3], fv([0.75, 0.75, 1.0, 0.0])[..3]);
    assert!(f32::from_bits(r[3]).is_nan());
    assert_eq!(un("SSG", [NAN, NEG0, f(-3.0), f(1e-40)]), fv([0.0, 0.0, -1.0, 1.0]));
}

#[test]
fn integer_arithmetic() {
    let m = |x: i32| x as u32;
    assert_eq!(bin("UADD", [u32::MAX, 5, m(-3), 0], [1, m(-7), m(-3), 0]), [0, m(-2), m(-6), 0]);
    assert_eq!(bin("UMUL", [0x10000, 3, m(-2), 7], [0x10000, m(-1), m(-2), 0]), [0, m(-3), 4, 0]);
    assert_eq!(bin("IMUL_HI", [m(-2), 0x40000000, 0x7fffffff, 3], [3, 4, 0x7fffffff, 5]), [m(-1), 1, 0x3fffffff, 0]);
    assert_eq!(bin("UMUL_HI", [u32::MAX, 0x40000000, 2, 3], [u32::MAX, 4, 3, 5]), [0xfffffffe, 1, 0, 0]);
    assert_eq!(tern("UMAD", [2, u32::MAX, 0, 3], [3, 2, 9, 3], [1, 3, 4, m(-9)]), [7, 1, 4, 0]);
    assert_eq!(bin("IMAX", [m(-1), 0, 5, m(-5)], [0, m(-1), 5, m(-6)]), [0, 0, 5, m(-5)]);
    assert_eq!(bin("UMIN", [m(-1), 0, 5, 2], [0, m(-1), 5, 3]), [0, 0, 5, 2]);
    assert_eq!(un("INEG", [i32::MIN as u32, 5, 0, m(-1)]), [i32::MIN as u32, m(-5), 0, 1]);
    assert_eq!(un("IABS", [i32::MIN as u32, m(-5), 0, 7]), [i32::MIN as u32, 5, 0, 7]);
    assert_eq!(un("ISSG", [i32::MIN as u32, m(-5), 0, 7]), [m(-1), m(-1), 0, 1]);
}

#[test]
fn division_by_zero() {
    let m = |x: i32| x as u32;
    // UDIV/UMOD by 0: 0xffffffff (tgsi.rst).
    assert_eq!(bin("UDIV", [7, 0, 9, u32::MAX], [0, 0, 2, 1]), [u32::MAX, u32::MAX, 4, u32::MAX]);
    assert_eq!(bin("UMOD", [7, 0, 9, u32::MAX], [0, 0, 2, 10]), [u32::MAX, u32::MAX, 1, 5]);
    // IDIV by 0: −1 for n ≥ 0, 1 for n < 0 (docs/lowering.md); INT_MIN / -1 wraps; truncation
    // toward zero.
    assert_eq!(
        bin("IDIV", [7, i32::MIN as u32, m(-7), m(-7)], [0, m(-1), 2, m(-2)]),
        [m(-1), i32::MIN as u32, m(-3), 3]
    );
    assert_eq!(bin("IDIV", [m(-7), 0, 1, 2], [0, 0, 1, 1]), [1, m(-1), 1, 2]);
    // MOD by 0: 0xffffffff (Mesa); the sign follows the dividend; INT_MIN % -1 = 0.
    assert_eq!(bin("MOD", [7, i32::MIN as u32, m(-7), 7], [0, m(-1), 2, m(-2)]), [u32::MAX, 0, m(-1), 1]);
}

#[test]
fn shifts_mask_the_count() {
    let m = |x: i32| x as u32;
    assert_eq!(bin("SHL", [1, 1, 1, 3], [33, 32, m(-1), 4]), [2, 1, 0x8000_0000, 48]);
    assert_eq!(bin("USHR", [0x8000_0000, 0x8000_0000, 16, 16], [31, 32, 36, 0]), [1, 0x8000_0000, 1, 16]);
    assert_eq!(bin("ISHR", [m(-8), m(-8), 0x8000_0000, 64], [1, 33, 63, 2]), [m(-4), m(-4), m(-1), 16]);
    assert_eq!(bin("AND", [0xf0f0, 1, 0, TRUE], [0xff00, 3, 1, f(1.0)]), [0xf000, 1, 0, f(1.0)]);
    assert_eq!(bin("OR", [0xf0f0, 1, 0, 0], [0xff00, 2, 0, 1]), [0xfff0, 3, 0, 1]);
    assert_eq!(bin("XOR", [0xf0f0, 1, 0, TRUE], [0xff00, 3, 0, 1]), [0x0ff0, 2, 0, 0xfffffffe]);
    assert_eq!(un("NOT", [0, TRUE, 1, 0x0f0f0f0f]), [TRUE, 0, 0xfffffffe, 0xf0f0f0f0]);
}

#[test]
fn bitfields() {
    let m = |x: i32| x as u32;
    assert_eq!(
        tern("UBFE", [0xabcd1234, 0xabcd1234, 0xffffffff, 5], [8, 28, 0, 0], [8, 4, 32, 0]),
        [0x12, 0xa, TRUE, 0]
    );
    assert_eq!(
        tern("IBFE", [0xabcd1234, 0x0000f000, 0xf0000000, 5], [8, 12, 28, 1], [8, 4, 4, 0]),
        [0x12, m(-1), m(-1), 0]
    );
    let inputs = r#"{"IN[0]": ["0xffffffff", "0x0", "0x12345678", "0x0"], "IN[1]": ["0x0", "0xf", "0x1", "0x0"], "IN[2]": ["0x8", "0x4", "0x0", "0x20"]}"#;
    let run = run_prog("VERT", VS, "BFI OUT[0], IN[0], IN[1], IN[2], IN[2].xxzw", inputs);
    // bits 8..15 of ~0 replaced by 0; 8 bits at 4 of 0 ← 0xf; width 0 → base; width 32 → insert.
    assert_eq!(out(&run, 0, 0), [0xffff00ff, 0xf0, 0x12345678, 0]);
    // Outside tgsi.rst's range (offset + width > 32, a negative offset or width): undefined.
    let inputs = r#"{"IN[0]": ["0xffffff9c", "0x4d2", "0x7", "0x7"], "IN[1]": ["0x4", "0x3", "0xffffffff", "0x0"],
        "IN[2]": ["0x28", "0x20", "0x4", "0xffffffff"]}"#;
    for op in ["UBFE", "IBFE"] {
        let run = run_prog("VERT", VS, &format!("{op} OUT[0], IN[0], IN[1], IN[2]"), inputs);
        assert!((0..4).all(|c| acc(&run, 0, 0, c) == Accuracy::Unconstrained), "{op}");
    }
    let run = run_prog("VERT", VS, "BFI OUT[0], IN[0], IN[0], IN[1], IN[2]", inputs);
    assert!((0..4).all(|c| acc(&run, 0, 0, c) == Accuracy::Unconstrained));
    let run = run_prog("VERT", VS, "UBFE OUT[0], IN[0], IN[1].wwww, IN[2].yyyy", inputs);
    assert_eq!((out(&run, 0, 0)[1], acc(&run, 0, 0, 1)), (1234, Accuracy::Exact), "width 32 at offset 0");
    assert_eq!(un("BREV", [1, 0x80000000, 0xf0, 0]), [0x80000000, 1, 0x0f000000, 0]);
    assert_eq!(un("POPC", [TRUE, 0, 0xf0f0, 1]), [32, 0, 8, 1]);
    assert_eq!(un("LSB", [0, 8, 0x80000000, 3]), [m(-1), 3, 31, 0]);
    assert_eq!(un("UMSB", [0, 8, 0x80000000, 1]), [m(-1), 3, 31, 0]);
    assert_eq!(un("IMSB", [0, TRUE, 0xfffffffe, 0x7fffffff]), [m(-1), m(-1), 0, 30]);
}

#[test]
fn transcendental_special_values_are_exact() {
    let inputs = r#"{"IN[0]": [0, "0x80000000", -1, "0x7f800000"]}"#;
    let body = "RCP OUT[0].x, IN[0].xxxx\nRCP OUT[0].y, IN[0].yyyy\nRSQ OUT[0].z, IN[0].zzzz\nRSQ OUT[0].w, IN[0].wwww";
    let run = run_prog("VERT", VS, body, inputs);
    let r = out(&run, 0, 0);
    assert_eq!([r[0], r[1], r[3]], [INF, NINF, 0]);
    assert!(f32::from_bits(r[2]).is_nan(), "RSQ of a negative number is NaN");
    for c in 0..4 {
        assert_eq!(acc(&run, 0, 0, c), Accuracy::Exact);
    }
    let body =
        "LG2 OUT[0].x, IN[0].xxxx\nLG2 OUT[0].y, IN[0].zzzz\nEX2 OUT[0].z, -IN[0].wwww\nSQRT OUT[0].w, IN[0].yyyy";
    let run = run_prog("VERT", VS, body, inputs);
    let r = out(&run, 0, 0);
    assert_eq!([r[0], r[2], r[3]], [NINF, 0, NEG0]);
    assert!(f32::from_bits(r[1]).is_nan(), "LG2 of a negative number is NaN");
    // POW(x, y) = EX2(y · LG2(x)) with y·LG2(x) = 0 when y = 0: 0^0 is 1, (−2)^2 is NaN, 0^−1
    // is +∞, 0^2 is 0.
    let inputs = r#"{"IN[0]": [0, -2, 0, 0], "IN[1]": [0, 2, -1, 2]}"#;
    let body = "POW OUT[0].x, IN[0].xxxx, IN[1].xxxx\nPOW OUT[0].y, IN[0].yyyy, IN[1].yyyy\nPOW OUT[0].z, IN[0].zzzz, IN[1].zzzz\nPOW OUT[0].w, IN[0].wwww, IN[1].wwww";
    let run = run_prog("VERT", VS, body, inputs);
    let r = out(&run, 0, 0);
    assert!(r[0] == 1f32.to_bits() && f32::from_bits(r[1]).is_nan());
    assert_eq!([r[2], r[3]], [INF, 0]);
}

#[test]
fn transcendental_values_are_approximate_with_bounds() {
    let inputs = r#"{"IN[0]": [3, 2, 10, 0.5]}"#;
    let body =
        "RCP OUT[0].x, IN[0].xxxx\nSQRT OUT[0].y, IN[0].yyyy\nEX2 OUT[0].z, IN[0].zzzz\nLG2 OUT[0].w, IN[0].wwww";
    let run = run_prog("VERT", VS, body, inputs);
    let r = out(&run, 0, 0).map(f32::from_bits);
    assert_eq!(r, [1.0 / 3.0, 2f32.sqrt(), 1024.0, -1.0]);
    for c in 0..4 {
        let Accuracy::Within(e) = acc(&run, 0, 0, c) else { panic!("component {c} must be approximate") };
        assert!(e > 0.0 && e < 1e-3 * r[c].abs().max(1.0), "bound {e} for {}", r[c]);
        // The bound accepts a neighbouring float and rejects a far one.
        let ours = out(&run, 0, 0)[c];
        assert!(acc(&run, 0, 0, c).accepts(ours, ours + 1));
        assert!(!acc(&run, 0, 0, c).accepts(ours, (r[c] * 1.01).to_bits()));
    }
    let inputs = r#"{"IN[0]": [0.5, 0, 0, 0]}"#;
    let run = run_prog("VERT", VS, "SIN OUT[0].x, IN[0].xxxx\nCOS OUT[0].y, IN[0].xxxx\nMOV OUT[0].zw, IN[0]", inputs);
    let r = out(&run, 0, 0);
    assert_eq!(f32::from_bits(r[0]), 0.5f64.sin() as f32);
    assert_eq!(f32::from_bits(r[1]), 0.5f64.cos() as f32);
    assert!(matches!(acc(&run, 0, 0, 0), Accuracy::Within(e) if e >= 2f32.powi(-11)));
    assert_eq!(acc(&run, 0, 0, 2), Accuracy::Exact);
    // From 2^17·π ≈ 411774.8 on, any value in [−1, 1]: 0 within 1.
    let inputs = r#"{"IN[0]": [1300000.5, 411774, 411775, -2000000]}"#;
    let body = "SIN OUT[0].x, IN[0].xxxx\nCOS OUT[0].y, IN[0].yyyy\nSIN OUT[0].z, IN[0].zzzz\nCOS OUT[0].w, IN[0].wwww";
    let run = run_prog("VERT", VS, body, inputs);
    let r = out(&run, 0, 0);
    assert_eq!([r[0], r[2], r[3]], [0, 0, 0]);
    assert_eq!([acc(&run, 0, 0, 0), acc(&run, 0, 0, 2), acc(&run, 0, 0, 3)], [Accuracy::Within(1.0); 3]);
    assert_eq!(f32::from_bits(r[1]), 411774f64.cos() as f32);
    assert!(matches!(acc(&run, 0, 0, 1), Accuracy::Within(e) if e < 0.5));
}

#[test]
fn nan_bits_made_by_float_operations_are_open_to_integer_consumers() {
    let inputs = r#"{"IN[0]": [-1, "0xffc00001", 0, 0], "IN[1]": ["0x1f", 0, 0, 0]}"#;
    let body = "SQRT TEMP[0].x, IN[0].xxxx
        MOV TEMP[0].y, IN[0].yyyy
        MOV OUT[0].x, TEMP[0].xxxx
        USHR OUT[0].y, TEMP[0].xxxx, IN[1].xxxx
        USHR OUT[0].z, TEMP[0].yyyy, IN[1].xxxx
        PK2H OUT[0].w, TEMP[0].xxxx";
    let run = run_prog("VERT", VS, body, inputs);
    let r = out(&run, 0, 0);
    assert!(f32::from_bits(r[0]).is_nan());
    assert_eq!(acc(&run, 0, 0, 0), Accuracy::Exact, "as a float: any NaN");
    assert_eq!(acc(&run, 0, 0, 1), Accuracy::Unconstrained, "the sign of SQRT(−1)'s NaN is not specified");
    assert_eq!((r[2], acc(&run, 0, 0, 2)), (1, Accuracy::Exact), "a moved input NaN keeps its bits");
    assert_eq!(acc(&run, 0, 0, 3), Accuracy::Unconstrained, "PK2H keeps the NaN's sign");
}

#[test]
fn log_mantissa_scales_the_operand_error() {
    // LOG.y = |x| / 2^floor(log2 |x|) is exact scaling: x = 1/300 (≈ 1.71·2^−9) carries RCP's
    // bound, which LOG.y multiplies by 2^9.
    let inputs = r#"{"IN[0]": [300, 0, 0, 0]}"#;
    let run =
        run_prog("VERT", VS, "RCP TEMP[0].x, IN[0].xxxx\nMOV OUT[0].x, TEMP[0]\nLOG OUT[0].yz, TEMP[0].xxxx", inputs);
    let r = out(&run, 0, 0);
    assert_eq!(f32::from_bits(r[1]), f32::from_bits(r[0]) * 512.0);
    let (Accuracy::Within(e_rcp), Accuracy::Within(e_y)) = (acc(&run, 0, 0, 0), acc(&run, 0, 0, 1)) else {
        panic!("RCP and LOG.y must be approximate")
    };
    assert_eq!(e_y, e_rcp * 512.0);
}

#[test]
fn approximation_propagates_and_robust_uses_are_exact() {
    let inputs = r#"{"IN[0]": [3, 0, 0, 0]}"#;
    let body = "RCP TEMP[0].x, IN[0].xxxx
        ADD OUT[0].x, TEMP[0].xxxx, IN[0].xxxx
        SLT OUT[0].y, TEMP[0].xxxx, IN[0].xxxx
        F2I OUT[0].z, TEMP[0].xxxx
        FSEQ OUT[0].w, TEMP[0].xxxx, TEMP[0].xxxx";
    let run = run_prog("VERT", VS, body, inputs);
    assert!(matches!(acc(&run, 0, 0, 0), Accuracy::Within(_)), "1/3 + 3 is approximate");
    assert_eq!(out(&run, 0, 0)[1..3], [f(1.0), 0]);
    assert_eq!(acc(&run, 0, 0, 1), Accuracy::Exact, "1/3 < 3 whatever the approximation");
    assert_eq!(acc(&run, 0, 0, 2), Accuracy::Exact, "F2I(0.333…) = 0 whatever the approximation");
    assert_eq!(acc(&run, 0, 0, 3), Accuracy::Unconstrained, "equality of approximate values is open");
    // A branch on an approximate value that could go either way makes the lane uncertain.
    let inputs = r#"{"IN[0]": [1, 0, 0, 0]}"#;
    let run = run_prog(
        "VERT",
        VS,
        "RCP TEMP[0].x, IN[0].xxxx\nSGE TEMP[0].y, TEMP[0].xxxx, IN[0].xxxx\nMOV OUT[0], TEMP[0].yyyy",
        inputs,
    );
    assert_eq!(acc(&run, 0, 0, 0), Accuracy::Within(1.0), "1/1 ≥ 1 is 1.0, but could be 0.0");
    let body = "RCP TEMP[0].x, IN[0].xxxx\nFSGE TEMP[0].y, TEMP[0].xxxx, IN[0].xxxx\nUIF TEMP[0].yyyy\nMOV OUT[0], IN[0]\nELSE\nMOV OUT[0], IN[1]\nENDIF";
    let run = run_prog("VERT", VS, body, inputs);
    assert_eq!(run.uncertain_lanes, vec![0, 1, 2, 3]);
}

#[test]
fn uninitialised_registers_are_unconstrained() {
    let run = run_prog("VERT", VS, "MOV OUT[0].xy, TEMP[1]\nMOV OUT[0].z, IN[0].xxxx", "{}");
    assert_eq!(acc(&run, 0, 0, 0), Accuracy::Unconstrained);
    assert_eq!(acc(&run, 0, 0, 2), Accuracy::Exact);
    assert_eq!(acc(&run, 0, 0, 3), Accuracy::Unconstrained, "never written");
}

#[test]
fn dot_products_lrp_and_channel_opcodes() {
    let a = fv([1.0, 2.0, 3.0, 4.0]);
    let b = fv([5.0, 6.0, 7.0, 8.0]);
    assert_eq!(bin("DP2", a, b), [f(17.0); 4]);
    assert_eq!(bin("DP3", a, b), [f(38.0); 4]);
    assert_eq!(bin("DP4", a, b), [f(70.0); 4]);
    assert_eq!(bin("DST", a, b), fv([1.0, 12.0, 3.0, 8.0]));
    // LRP = s2 + s0·(s1 − s2).
    assert_eq!(
        tern("LRP", fv([0.25, 1.0, 0.0, 0.5]), fv([4.0, 3.0, 3.0, 1.0]), fv([0.0, 1.0, 1.0, -1.0])),
        fv([1.0, 3.0, 1.0, 0.0])
    );
    // LIT: (1, max(x, 0), x > 0 ? max(y, 0)^clamp(w) : 0, 1); 0^0 = 1.
    let r = un("LIT", fv([0.5, 0.0, 0.0, 0.0]));
    assert_eq!(r, fv([1.0, 0.5, 1.0, 1.0]));
    assert_eq!(un("LIT", fv([-0.5, 4.0, 0.0, 2.0])), fv([1.0, 0.0, 0.0, 1.0]));
    assert_eq!(un("LIT", fv([1.0, 4.0, 0.0, 0.5])), fv([1.0, 1.0, 2.0, 1.0]));
    // EXP: (2^floor(x), x − floor(x), 2^x, 1); LOG: (floor(log2|x|), |x| / 2^that, log2|x|, 1).
    assert_eq!(un("EXP", fv([2.5, 0.0, 0.0, 0.0]))[..2], fv([4.0, 0.5, 0.0, 0.0])[..2]);
    assert_eq!(un("LOG", fv([-12.0, 0.0, 0.0, 0.0])), fv([3.0, 1.5, 12f64.log2() as f32, 1.0]));
    assert_eq!(un("LOG", fv([0.99999994, 0.0, 0.0, 0.0]))[..2], fv([-1.0, 1.9999999, 0.0, 0.0])[..2]);
    assert_eq!(bin("LDEXP", fv([1.5, 1.0, 1.0, -3.0]), [3, (-149i32) as u32, 200, 1]), [f(12.0), 1, INF, f(-6.0)]);
}

#[test]
fn pack_unpack() {
    assert_eq!(un("PK2H", fv([1.0, -2.0, 0.0, 0.0]))[0], 0xc000_3c00);
    assert_eq!(un("PK2H", fv([65520.0, 1e-8, 0.0, 0.0]))[0], 0x0000_7c00, "overflow to ∞, underflow to 0");
    assert_eq!(un("PK2US", fv([1.0, 0.5, 0.0, 0.0]))[0], 0x8000_ffff);
    assert_eq!(un("PK4UB", fv([1.0, 0.5, -1.0, 2.0]))[0], 0xff00_80ff);
    assert_eq!(un("PK4B", fv([1.0, -1.0, 0.5, -2.0]))[0], 0x8140_817f);
    assert_eq!(un("UP2H", [0xc000_3c00, 0, 0, 0]), fv([1.0, -2.0, 1.0, -2.0]));
    assert_eq!(un("UP4UB", [0xff00_80ff, 0, 0, 0]), fv([1.0, 128.0 / 255.0, 0.0, 1.0]));
    assert_eq!(un("UP4B", [0x8140_817f, 0, 0, 0]), fv([1.0, -1.0, 64.0 / 127.0, -1.0]));
    assert_eq!(un("UP2US", [0x8000_ffff, 0, 0, 0]), fv([1.0, 32768.0 / 65535.0, 1.0, 32768.0 / 65535.0]));
}

#[test]
fn saturate_and_legacy_modifiers() {
    let r = un("MOV_SAT", [NAN, NEG0, f(2.0), f(-1.0)]);
    assert_eq!(r, [0, 0, f(1.0), 0], "NaN → 0, −0 → +0");
    assert_eq!(un("MOV_SATNV", fv([-3.0, 0.5, 2.0, -0.5])), fv([-1.0, 0.5, 1.0, -0.5]));
    let inputs = r#"{"IN[0]": [1, 2, 3, 4]}"#;
    let run = run_prog("VERT", VS, "MOV OUT[0]_2X, IN[0]", inputs);
    assert_eq!(out(&run, 0, 0), fv([2.0, 4.0, 6.0, 8.0]));
    let run = run_prog("VERT", VS, "MOV OUT[0], IN[0].x-y01", inputs);
    assert_eq!(out(&run, 0, 0), fv([1.0, -2.0, 0.0, 1.0]));
    let run = run_prog("VERT", VS, "MOV OUT[0], 2*((1-(IN[0]))-.5)", inputs);
    assert_eq!(out(&run, 0, 0), fv([-1.0, -3.0, -5.0, -7.0]));
    let run = run_prog("VERT", VS, "MOV OUT[0], -|IN[0].wzyx|", inputs);
    assert_eq!(out(&run, 0, 0), fv([-4.0, -3.0, -2.0, -1.0]));
    // Integer source negation is two's complement.
    let run =
        run_prog("VERT", VS, "UADD OUT[0], IN[0], -IN[1]", r#"{"IN[0]": ["0x5", 0, 0, 0], "IN[1]": ["0x7", 0, 0, 0]}"#);
    assert_eq!(out(&run, 0, 0)[0], (-2i32) as u32);
}

#[test]
fn legacy_opcodes() {
    let a = fv([1.0, 2.0, 3.0, 4.0]);
    let b = fv([5.0, 6.0, 7.0, 8.0]);
    assert_eq!(bin("SUB", a, b), fv([-4.0; 4]));
    assert_eq!(un("ABS", fv([-1.0, 0.0, -0.0, 2.0])), fv([1.0, 0.0, 0.0, 2.0]));
    assert_eq!(tern("CLAMP", fv([-1.0, 0.5, 9.0, f32::NAN]), fv([0.0; 4]), fv([1.0; 4])), fv([0.0, 0.5, 1.0, 0.0]));
    assert_eq!(bin("XPD", fv([1.0, 0.0, 0.0, 9.0]), fv([0.0, 1.0, 0.0, 9.0])), fv([0.0, 0.0, 1.0, 1.0]));
    assert_eq!(bin("XPD", fv([2.0, 3.0, 4.0, 0.0]), fv([5.0, 6.0, 7.0, 0.0])), fv([-3.0, 6.0, -3.0, 1.0]));
    assert_eq!(bin("DPH", a, b), [f(46.0); 4]);
    assert_eq!(tern("DP2A", a, b, fv([0.5, 9.0, 9.0, 9.0])), [f(17.5); 4]);
    assert_eq!(bin("SFL", a, b), [0; 4]);
    assert_eq!(bin("STR", a, b), [f(1.0); 4]);
    // CND: s2 > 0.5 ? s0 : s1; CND0: s2 < 0 ? s1 : s0 (so NaN takes s0).
    assert_eq!(tern("CND", a, b, fv([0.6, 0.5, f32::NAN, 1.0])), fv([1.0, 6.0, 7.0, 4.0]));
    assert_eq!(tern("CND0", a, b, fv([0.0, -0.5, f32::NAN, -0.0])), fv([1.0, 6.0, 3.0, 4.0]));
    let r = un("SCS", fv([0.0, 0.0, 0.0, 0.0]));
    assert_eq!(r, fv([1.0, 0.0, 0.0, 1.0]));
    assert_eq!(un("NRM", fv([3.0, 0.0, 4.0, 7.0])), fv([0.6, 0.0, 0.8, 1.0]));
    assert_eq!(un("NRM4", fv([0.0, 0.0, 0.0, 2.0])), fv([0.0, 0.0, 0.0, 1.0]));
    // RCC clamps the reciprocal's magnitude to [2^-64, 2^64].
    assert_eq!(un("RCC", fv([0.0, 0.0, 0.0, 0.0]))[0], f(2f32.powi(64)));
    assert_eq!(un("RCC", fv([-1e30, 0.0, 0.0, 0.0]))[0], f(-2f32.powi(-64)));
    // An unconstrained operand (here an uninitialised temporary, 0 bits) stays unconstrained
    // although its nominal reciprocal, +∞, clamps to 2^64.
    let run = run_prog("VERT", VS, "RCC OUT[0], TEMP[2].xxxx", "{}");
    assert_eq!((out(&run, 0, 0)[0], acc(&run, 0, 0, 0)), (f(2f32.powi(64)), Accuracy::Unconstrained));
    // X2D: (s0.x + s1.x·s2.x + s1.y·s2.y, s0.y + s1.x·s2.z + s1.y·s2.w, x, y).
    assert_eq!(
        tern("X2D", fv([1.0, 2.0, 0.0, 0.0]), fv([3.0, 4.0, 0.0, 0.0]), fv([1.0, 2.0, 3.0, 4.0])),
        fv([12.0, 27.0, 12.0, 27.0])
    );
    // RFL: 2·dot(n, v)/dot(n, n)·n − v.
    assert_eq!(bin("RFL", fv([0.0, 2.0, 0.0, 0.0]), fv([1.0, 1.0, 0.0, 0.0])), fv([-1.0, 1.0, 0.0, 1.0]));
    // tgsi.rst's order: 2·dot(n, v) = 2·FLT_MAX overflows before the division, so x = ∞.
    let r = bin("RFL", fv([2.0, 0.0, 0.0, 0.0]), fv([f32::MAX / 2.0, 0.0, 0.0, 0.0]));
    assert_eq!(f32::from_bits(r[0]), f32::INFINITY);
    // SAD: |s0 − s1| + s2 (unsigned).
    assert_eq!(tern("SAD", [1, 9, 0, u32::MAX], [4, 3, 0, 0], [10, 1, 0, 1]), [13, 7, 0, 0]);
    // SHR is the arithmetic shift.
    assert_eq!(bin("SHR", [(-8i32) as u32, 8, 0, 0], [1, 1, 0, 0]), [(-4i32) as u32, 4, 0, 0]);
    // Aliases run as their canonical opcode.
    assert_eq!(bin("DOT3", a, b), [f(38.0); 4]);
    assert_eq!(un("INT", fv([-2.5, 2.5, 0.0, 0.0]))[..2], fv([-2.0, 2.0, 0.0, 0.0])[..2]);
    assert_eq!(un("SGN", fv([-2.5, 2.5, 0.0, 0.0])), fv([-1.0, 1.0, 0.0, 0.0]));
}

#[test]
fn legacy_matrix_opcodes_read_consecutive_registers() {
    let decls = "DCL IN[0]\nDCL OUT[0], POSITION\nDCL CONST[0..3]";
    let inputs = r#"{"IN[0]": [1, 2, 3, 4], "CONST[0]": [1, 0, 0, 0], "CONST[1]": [0, 2, 0, 0], "CONST[2]": [0, 0, 3, 0], "CONST[3]": [1, 1, 1, 1]}"#;
    let run = run_prog("VERT", decls, "M4X4 OUT[0], IN[0], CONST[0]", inputs);
    assert_eq!(out(&run, 0, 0), fv([1.0, 4.0, 9.0, 10.0]));
    let run = run_prog("VERT", decls, "MOV OUT[0], IN[0].wwww\nM3X2 OUT[0], IN[0], CONST[1]", inputs);
    assert_eq!(out(&run, 0, 0), fv([4.0, 9.0, 4.0, 4.0]), "M3X2 writes x and y only");
}

#[test]
fn predicates_select_channels() {
    let text = "VERT\nDCL IN[0]\nDCL IN[1]\nDCL OUT[0], POSITION\nDCL PRED[0]\nIMM[0] FLT32 {    0.5000,     0.5000,     0.5000,     0.5000}\n  0: SLT PRED[0], IN[0], IMM[0]\n  1: MOV OUT[0], IN[1]\n  2: (PRED[0]) MOV OUT[0], IN[0]\n  3: END\n";
    let program = tgsi2va::tgsi::parse(text).unwrap();
    let inputs = Inputs::from_json(r#"{"IN[0]": [0, 1, 0, 1], "IN[1]": [9, 9, 9, 9]}"#).unwrap();
    let run = interp::run(&program, &inputs).unwrap();
    assert_eq!(out(&run, 0, 0), fv([0.0, 9.0, 0.0, 9.0]));
}
