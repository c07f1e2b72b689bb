//! The semantic conventions of docs/lowering.md ("Semantics shared with the interpreter") and
//! docs/interpreter.md, one test per convention: each runs a small shader through the TGSI
//! interpreter and through the compiler + Valhall emulator, on inputs chosen so that another
//! reading of the convention gives another answer, and checks both results against the value
//! computed by hand. A drift on either side (or in the documents' definition) fails here.

use tgsi2va::exec::io::{Inputs, RegKey};

/// An expected 32-bit result: exact bits, any NaN, or not checked.
#[derive(Clone, Copy)]
enum E {
    Bits(u32),
    Nan,
    Any,
}

impl std::fmt::Debug for E {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            E::Bits(b) => write!(f, "{b:#010x} ({})", f32::from_bits(*b)),
            E::Nan => write!(f, "a NaN"),
            E::Any => write!(f, "anything"),
        }
    }
}

fn f(x: f32) -> E {
    E::Bits(x.to_bits())
}

fn u(x: u32) -> E {
    E::Bits(x)
}

fn i(x: i32) -> E {
    E::Bits(x as u32)
}

/// A fragment shader with `CONST[0][0..7]` (given by `consts`, as 32-bit patterns) running
/// `lines`, whose results land in `OUT[0]`.
fn frag(lines: &[&str]) -> String {
    let mut t = String::from("FRAG\nDCL OUT[0], COLOR\nDCL CONST[0][0..7]\nDCL TEMP[0..3], LOCAL\n");
    for (n, l) in lines.iter().chain(&["END"]).enumerate() {
        t += &format!("{n:3}: {l}\n");
    }
    t
}

fn inputs(consts: &[[u32; 4]]) -> Inputs {
    let mut json = String::from("{");
    for (n, c) in consts.iter().enumerate() {
        if n > 0 {
            json.push(',');
        }
        json += &format!("\"CONST[0][{n}]\": [\"{:#x}\", \"{:#x}\", \"{:#x}\", \"{:#x}\"]", c[0], c[1], c[2], c[3]);
    }
    json.push('}');
    Inputs::from_json(&json).unwrap()
}

/// Runs `lines` in both executors and checks `OUT[0]` of every lane against `expected`.
fn check(what: &str, lines: &[&str], consts: &[[u32; 4]], expected: [E; 4]) {
    let text = frag(lines);
    let program = tgsi2va::tgsi::parse(&text).unwrap_or_else(|d| panic!("{what}: parse: {:?}", d.0));
    let inputs = inputs(consts);
    let run = tgsi2va::interp::run(&program, &inputs).unwrap_or_else(|e| panic!("{what}: interp: {e}"));
    let options = tgsi2va::compile::Options { contract: false, ..Default::default() };
    let compiled = tgsi2va::compile::compile(&text, &options).unwrap_or_else(|d| panic!("{what}: compile: {:?}", d.0));
    let emu = tgsi2va::emu::run(&compiled.blob, &compiled.meta, &inputs).unwrap_or_else(|e| panic!("{what}: {e}"));
    let out = RegKey::parse("OUT[0]").unwrap();
    for (who, lanes) in [("interpreter", run.outputs.outputs[&out]), ("emulator", emu.outputs[&out])] {
        for lane in lanes {
            for (c, (&got, want)) in lane.iter().zip(expected).enumerate() {
                let ok = match want {
                    E::Bits(b) => got == b,
                    E::Nan => f32::from_bits(got).is_nan(),
                    E::Any => true,
                };
                assert!(
                    ok,
                    "{what}: {who} gives {got:#010x} ({}) in .{}, expected {want:?}\n{text}",
                    f32::from_bits(got),
                    ['x', 'y', 'z', 'w'][c]
                );
            }
        }
    }
}

fn bits(v: [f32; 4]) -> [u32; 4] {
    v.map(f32::to_bits)
}

const P12: f32 = 1.0 + 1.0 / 4096.0; // 1 + 2^-12: its square is 1 + 2^-11 + 2^-24 (a rounding tie)

/// `fma(a.x, b.x, fma(a.y, b.y, … fma(a[n−1], b[n−1], −0)))`: the last component innermost.
/// In x-first order, `a.x·b.x` would be rounded on its own (to 1 + 2^-11) and the result
/// would lose the 2^-24.
#[test]
fn dot_products_are_fused_chains_last_component_innermost() {
    let exact = 1.0 / 2048.0 + 1.0 / 16_777_216.0; // 2^-11 + 2^-24
    let c = [bits([P12, 1.0, 0.0, 0.0]), bits([P12, -1.0, 0.0, 0.0])];
    check("DP2", &["DP2 OUT[0], CONST[0][0], CONST[0][1]"], &c, [f(exact); 4]);
    let c = [bits([P12, 0.0, 1.0, 0.0]), bits([P12, 0.0, -1.0, 0.0])];
    check("DP3", &["DP3 OUT[0], CONST[0][0], CONST[0][1]"], &c, [f(exact); 4]);
    let c = [bits([P12, 0.0, 0.0, 1.0]), bits([P12, 0.0, 0.0, -1.0])];
    check("DP4", &["DP4 OUT[0], CONST[0][0], CONST[0][1]"], &c, [f(exact); 4]);
    // Order-sensitive sums: x-first gives 0 (2^24 + 1 rounds to 2^24), last-first 2.
    let big = 16_777_216.0;
    let c = [bits([1.0; 4]), bits([big, 1.0, 1.0, -big])];
    check("DP4 order", &["DP4 OUT[0], CONST[0][0], CONST[0][1]"], &c, [f(2.0); 4]);
}

/// DPH and DP2A take their addend (`s1.w`, `s2.x`) as the innermost term of the chain, not as
/// a rounded ADD after the dot product (which would give 2^-11).
#[test]
fn dph_and_dp2a_fuse_their_addend() {
    let exact = 1.0 / 2048.0 + 1.0 / 16_777_216.0;
    let c = [bits([P12, 0.0, 0.0, 7.0]), bits([P12, 0.0, 0.0, -1.0])];
    check("DPH", &["DPH OUT[0], CONST[0][0], CONST[0][1]"], &c, [f(exact); 4]);
    let c = [bits([P12, 0.0, 0.0, 0.0]), bits([P12, 0.0, 0.0, 0.0]), bits([-1.0, 0.0, 0.0, 0.0])];
    check("DP2A", &["DP2A OUT[0], CONST[0][0], CONST[0][1], CONST[0][2]"], &c, [f(exact); 4]);
}

/// The legacy matrix opcodes are DPn chains over the rows src1, src1+1, …, writing only their
/// result channels; X2D is a DP2A-style chain per result (`s0` innermost).
#[test]
fn matrix_and_x2d_follow_the_dot_convention() {
    let exact = 1.0 / 2048.0 + 1.0 / 16_777_216.0;
    let c = [
        bits([P12, 1.0, 1.0, 0.0]),
        bits([P12, 0.0, -1.0, 5.0]),
        bits([1.0, 1.0, 1.0, 1.0]),
        bits([0.0, 0.0, 0.5, 0.0]),
        bits([0.0, 0.0, 0.0, 9.0]),
    ];
    check(
        "M3X3",
        &["MOV OUT[0], CONST[0][4].wwww", "M3X3 OUT[0], CONST[0][0], CONST[0][1]"],
        &c,
        [f(exact), f(2.0 + P12), f(0.5), f(9.0)],
    );
    let c = [
        bits([P12, 0.0, 0.0, 1.0]),
        bits([P12, 0.0, 0.0, -1.0]),
        bits([1.0, 1.0, 1.0, 1.0]),
        bits([0.0, 0.0, 0.0, 0.5]),
        bits([2.0, 0.0, 0.0, 0.0]),
    ];
    check("M4X4", &["M4X4 OUT[0], CONST[0][0], CONST[0][1]"], &c, [f(exact), f(1.0 + P12), f(0.5), f(2.0 * P12)]);
    let c = [bits([-1.0, 0.5, 0.0, 0.0]), bits([P12, 0.0, 0.0, 0.0]), bits([P12, 0.0, 2.0, 0.0])];
    check(
        "X2D",
        &["X2D OUT[0], CONST[0][0], CONST[0][1], CONST[0][2]"],
        &c,
        [f(exact), f(0.5 + 2.0 * P12), f(exact), f(0.5 + 2.0 * P12)],
    );
}

/// UDIV/UMOD by 0 give 0xFFFFFFFF (tgsi.rst); IDIV by 0 gives −1 for n ≥ 0 and 1 for n < 0;
/// MOD by 0 gives 0xFFFFFFFF; `INT_MIN / −1 = INT_MIN`, `INT_MIN % −1 = 0`.
#[test]
fn integer_division_by_zero_and_overflow() {
    let z = [[7, (-7i32) as u32, 0x8000_0000, 0], [0, 0, u32::MAX, 0]];
    check(
        "UDIV/UMOD/IDIV",
        &[
            "UDIV OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx",
            "UMOD OUT[0].y, CONST[0][0].xxxx, CONST[0][1].xxxx",
            "IDIV OUT[0].z, CONST[0][0].xxxx, CONST[0][1].xxxx",
            "IDIV OUT[0].w, CONST[0][0].yyyy, CONST[0][1].yyyy",
        ],
        &z,
        [u(u32::MAX), u(u32::MAX), i(-1), i(1)],
    );
    check(
        "MOD",
        &[
            "MOD OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx",
            "MOD OUT[0].y, CONST[0][0].yyyy, CONST[0][1].yyyy",
            "IDIV OUT[0].z, CONST[0][0].zzzz, CONST[0][1].zzzz",
            "MOD OUT[0].w, CONST[0][0].zzzz, CONST[0][1].zzzz",
        ],
        &z,
        [u(u32::MAX), u(u32::MAX), u(0x8000_0000), u(0)],
    );
}

/// 64-bit division follows the 32-bit rules: U64DIV/U64MOD/I64MOD by 0 give all ones, I64DIV
/// by 0 gives −1 or 1 by the dividend's sign; I64MOD has the dividend's sign.
#[test]
fn int64_division_by_zero_and_signs() {
    let neg7 = (-7i64) as u64;
    let c = [[7, 0, neg7 as u32, (neg7 >> 32) as u32], [0, 0, 0, 0], [2, 0, 0, 0]];
    check("U64DIV by 0", &["U64DIV OUT[0], CONST[0][0], CONST[0][1]"], &c, [u(u32::MAX); 4]);
    check("U64MOD by 0", &["U64MOD OUT[0], CONST[0][0], CONST[0][1]"], &c, [u(u32::MAX); 4]);
    check("I64DIV by 0", &["I64DIV OUT[0], CONST[0][0], CONST[0][1]"], &c, [i(-1), i(-1), i(1), i(0)]);
    check("I64MOD by 0", &["I64MOD OUT[0], CONST[0][0], CONST[0][1]"], &c, [u(u32::MAX); 4]);
    // −7 / 2 = −3 (truncation), −7 % 2 = −1 (the dividend's sign).
    let m3 = (-3i64) as u64;
    check(
        "I64DIV/I64MOD signs",
        &["I64DIV OUT[0].xy, CONST[0][0].zwzw, CONST[0][2]", "I64MOD OUT[0].zw, CONST[0][0].zwzw, CONST[0][2]"],
        &c,
        [u(m3 as u32), u((m3 >> 32) as u32), u(u32::MAX), u(u32::MAX)],
    );
}

/// SAD is `|s0 − s1| + s2` on unsigned operands (max − min), not `IABS` of the wrapped
/// difference (which gives 0x7FFFFFFF + 1 for the first case).
#[test]
fn sad_is_an_unsigned_absolute_difference() {
    let c = [[0, 0x8000_0001, 1, 5], [9, 2, 0, 3]];
    check(
        "SAD",
        &[
            "SAD OUT[0].x, CONST[0][0].xxxx, CONST[0][0].yyyy, CONST[0][0].zzzz",
            "SAD OUT[0].y, CONST[0][1].yyyy, CONST[0][1].xxxx, CONST[0][1].wwww",
            "MOV OUT[0].zw, CONST[0][1]",
        ],
        &c,
        [u(0x8000_0002), u(10), u(0), u(3)],
    );
}

/// Shift counts are taken modulo 32 (tgsi.rst masks them with 0x1f), 64-bit ones modulo 64.
#[test]
fn shift_counts_are_masked() {
    let c = [[1, 0x8000_0000, 0x8000_0000, 33], [63, 32, u32::MAX, 0]];
    check(
        "SHL/USHR/ISHR",
        &[
            "SHL OUT[0].x, CONST[0][0].xxxx, CONST[0][0].wwww",
            "USHR OUT[0].y, CONST[0][0].yyyy, CONST[0][1].xxxx",
            "ISHR OUT[0].z, CONST[0][0].zzzz, CONST[0][1].yyyy",
            "ISHR OUT[0].w, CONST[0][0].zzzz, CONST[0][1].zzzz",
        ],
        &c,
        [u(2), u(1), u(0x8000_0000), u(u32::MAX)],
    );
    let c = [[1, 0, 65, 0]];
    check("U64SHL", &["U64SHL OUT[0], CONST[0][0].xyxy, CONST[0][0].zzzz"], &c, [u(2), u(0), u(2), u(0)]);
}

/// Float → integer conversions truncate, saturate to the range and give 0 for NaN.
#[test]
fn float_to_int_saturates_and_maps_nan_to_zero() {
    let c = [bits([f32::NAN, 3e9, -3e9, -2.7]), bits([f32::NAN, 5e9, -1.5, 2.7])];
    check("F2I", &["F2I OUT[0], CONST[0][0]"], &c, [u(0), u(0x7FFF_FFFF), u(0x8000_0000), i(-2)]);
    check("F2U", &["F2U OUT[0], CONST[0][1]"], &c, [u(0), u(u32::MAX), u(0), u(2)]);
}

/// POW: `x^0 = 1` and `1^y = 1` whatever the other operand (NaN included); a negative base
/// gives NaN; `0^y` is +0 for y > 0 and +∞ for y < 0.
#[test]
fn pow_special_cases() {
    let c = [bits([0.0, f32::NAN, 1.0, -2.0]), bits([0.0, 0.0, f32::NAN, 2.0]), bits([0.0, -1.0, 2.0, 0.0])];
    check(
        "POW",
        &[
            "POW OUT[0].x, CONST[0][0].xxxx, CONST[0][1].xxxx",
            "POW OUT[0].y, CONST[0][0].yyyy, CONST[0][1].yyyy",
            "POW OUT[0].z, CONST[0][0].zzzz, CONST[0][1].zzzz",
            "POW OUT[0].w, CONST[0][0].wwww, CONST[0][1].wwww",
        ],
        &c,
        [f(1.0), f(1.0), f(1.0), E::Nan],
    );
    check(
        "POW of zero",
        &["POW OUT[0].xy, CONST[0][2].xxxx, CONST[0][2].yyyy", "POW OUT[0].zw, CONST[0][2].xxxx, CONST[0][2].zzzz"],
        &c,
        [f(f32::INFINITY), f(f32::INFINITY), f(0.0), f(0.0)],
    );
}

/// LIT: y = max(x, 0); z = x > 0 ? max(y, 0)^clamp(w, −128, 128) : 0 with a NaN exponent
/// clamping to −128 (maxNum), so 0.5^NaN = 2^128 = +∞; w = 0 gives 1, also for y = 0.
#[test]
fn lit_corner_cases() {
    let c = [bits([1.0, 0.5, 0.0, f32::NAN]), bits([2.0, 0.0, 0.0, 0.0]), bits([-1.0, 4.0, 0.0, 2.0])];
    check("LIT NaN w", &["LIT OUT[0], CONST[0][0]"], &c, [f(1.0), f(1.0), f(f32::INFINITY), f(1.0)]);
    check("LIT 0^0", &["LIT OUT[0], CONST[0][1]"], &c, [f(1.0), f(2.0), f(1.0), f(1.0)]);
    check("LIT x ≤ 0", &["LIT OUT[0], CONST[0][2]"], &c, [f(1.0), f(0.0), f(0.0), f(1.0)]);
}

/// RCC clamps the magnitude of `rcp(x)` to [2^-64, 2^64] keeping the sign: ±∞ → ±2^-64,
/// ±0 → ±2^64; NaN stays NaN.
#[test]
fn rcc_clamps_both_ends() {
    let c = [bits([f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0]), bits([f32::NAN, 0.0, 0.0, 0.0])];
    let (lo, hi) = (2f32.powi(-64), 2f32.powi(64));
    check(
        "RCC",
        &[
            "RCC OUT[0].x, CONST[0][0].xxxx",
            "RCC OUT[0].y, CONST[0][0].yyyy",
            "RCC OUT[0].z, CONST[0][0].zzzz",
            "RCC OUT[0].w, CONST[0][0].wwww",
        ],
        &c,
        [f(lo), f(-lo), f(hi), f(-hi)],
    );
    check("RCC NaN", &["RCC OUT[0], CONST[0][1].xxxx"], &c, [E::Nan; 4]);
}

/// EXP = (2^⌊x⌋, x − ⌊x⌋, 2^x, 1) with x and y exact; LOG = (⌊log2|x|⌋, |x|/2^that, log2|x|, 1)
/// with x and y exact, and (−∞, NaN) for 0.
#[test]
fn exp_and_log_exact_parts() {
    let c = [bits([-2.5, 0.0, 0.0, 0.0]), bits([-12.0, 0.0, 0.0, 0.0]), bits([0.0, 0.0, 0.0, 0.0])];
    check("EXP", &["EXP OUT[0], CONST[0][0].xxxx"], &c, [f(0.125), f(0.5), E::Any, f(1.0)]);
    check("LOG", &["LOG OUT[0], CONST[0][1].xxxx"], &c, [f(3.0), f(1.5), E::Any, f(1.0)]);
    check("LOG 0", &["LOG OUT[0], CONST[0][2].xxxx"], &c, [f(f32::NEG_INFINITY), E::Nan, f(f32::NEG_INFINITY), f(1.0)]);
}

/// NaN handling of selection and comparison: MIN/MAX yield the other operand, CMP takes s2,
/// SSG gives 0, ordered comparisons are false, SNE true, `_SAT` gives 0.
#[test]
fn nan_rules() {
    let c = [bits([f32::NAN, 1.0, 2.0, 0.0])];
    check(
        "MIN/MAX/CMP/SSG",
        &[
            "MIN OUT[0].x, CONST[0][0].xxxx, CONST[0][0].yyyy",
            "MAX OUT[0].y, CONST[0][0].zzzz, CONST[0][0].xxxx",
            "CMP OUT[0].z, CONST[0][0].xxxx, CONST[0][0].yyyy, CONST[0][0].zzzz",
            "SSG OUT[0].w, CONST[0][0].xxxx",
        ],
        &c,
        [f(1.0), f(2.0), f(2.0), f(0.0)],
    );
    check(
        "SLT/SNE/SAT",
        &[
            "SLT OUT[0].x, CONST[0][0].xxxx, CONST[0][0].yyyy",
            "SGE OUT[0].y, CONST[0][0].xxxx, CONST[0][0].yyyy",
            "SNE OUT[0].z, CONST[0][0].xxxx, CONST[0][0].xxxx",
            "MOV_SAT OUT[0].w, CONST[0][0].xxxx",
        ],
        &c,
        [f(0.0), f(0.0), f(1.0), f(0.0)],
    );
}
