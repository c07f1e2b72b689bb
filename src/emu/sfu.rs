//! Special functions: reciprocal, reciprocal square root, the exponent/logarithm helpers, the
//! trigonometric tables and the cube-map face helpers, as bit-pattern functions. Their
//! definitions and precision are documented in docs/emulator.md §6.

use super::fp::{self, F16, F32, Format, Round};

/// `FRCP`: 1/x correctly rounded (to nearest even). ±0 → ±∞, ±∞ → ±0, NaN → quiet NaN.
/// (f64 division is correctly rounded and 53 ≥ 2·24 + 2, so the second rounding is exact.)
pub fn rcp(fmt: Format, x: u32) -> u32 {
    if fmt.is_nan(x) {
        return fmt.quiet(x);
    }
    if fmt.is_zero(x) {
        return fmt.inf(fmt.is_neg(x));
    }
    if fmt.is_inf(x) {
        return fmt.zero(fmt.is_neg(x));
    }
    fp::from_f64(fmt, 1.0 / fmt.to_f64(x), Round::Rte)
}

/// `FRSQ`: 1/√x correctly rounded. +0 → +∞, −0 → −∞, +∞ → +0, x < 0 → default NaN.
pub fn rsq(fmt: Format, x: u32) -> u32 {
    if fmt.is_nan(x) {
        return fmt.quiet(x);
    }
    if fmt.is_zero(x) {
        return fmt.inf(fmt.is_neg(x));
    }
    if fmt.is_neg(x) {
        return fmt.default_nan();
    }
    if fmt.is_inf(x) {
        return 0;
    }
    let mut r = fp::from_f64(fmt, 1.0 / fmt.to_f64(x).sqrt(), Round::Rte);
    // Correct the candidate with exact comparisons against the rounding midpoints.
    for _ in 0..4 {
        if above_midpoint(fmt, x, r, r + 1) {
            r += 1;
        } else if r > 1 && !above_midpoint(fmt, x, r - 1, r) {
            r -= 1;
        } else {
            break;
        }
    }
    r
}

/// Whether x^(−1/2) lies above the midpoint of the positive values `lo` and `hi`
/// (compares m²·x with 1 exactly; the midpoint can never be hit exactly).
fn above_midpoint(fmt: Format, x: u32, lo: u32, hi: u32) -> bool {
    let (_, ml, el) = fmt.decompose(lo);
    let (_, mh, eh) = fmt.decompose(hi);
    let e = el.min(eh);
    let mid = (ml << (el - e) as u32) + (mh << (eh - e) as u32); // midpoint = mid · 2^(e−1)
    let (_, mx, ex) = fmt.decompose(x);
    let product = mid * mid * mx; // < 2^(2·26 + 24)
    // m²x = product · 2^(2(e−1) + ex); above the midpoint ⇔ m²x < 1.
    let t = -(2 * (e - 1) + ex);
    if t < 0 {
        false
    } else if t >= 127 {
        true
    } else {
        product < 1u128 << t
    }
}

/// The three FREXP decompositions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Frexp {
    /// `frexp()`: |m| in [0.5, 1), x = m·2^e.
    Plain,
    /// `.sqrt`: |m| in [0.25, 1), x = m·4^e.
    Sqrt,
    /// `.log`: |m| in [0.75, 1.5), x = m·2^e.
    Log,
}

/// (mantissa as a float of `fmt`, exponent) of x. Zero, ∞ and NaN give (x, 0) (NaN made
/// quiet).
pub fn frexp(fmt: Format, x: u32, mode: Frexp) -> (u32, i32) {
    if fmt.is_nan(x) {
        return (fmt.quiet(x), 0);
    }
    if fmt.is_zero(x) || fmt.is_inf(x) {
        return (x, 0);
    }
    let (m, e) = fp::frexp_unit(fmt, x);
    let (m, e) = match mode {
        Frexp::Plain => (m / 2.0, e + 1),
        Frexp::Sqrt => {
            if e.rem_euclid(2) == 0 {
                (m / 4.0, e.div_euclid(2) + 1)
            } else {
                (m / 2.0, (e + 1).div_euclid(2))
            }
        }
        Frexp::Log => {
            if m.abs() >= 1.5 {
                (m / 2.0, e + 1)
            } else {
                (m, e)
            }
        }
    };
    (fp::from_f64(fmt, m, Round::Rte), e)
}

/// `FLOGD.f32`: log2(m)/(m − 1) for the `.log` mantissa m of x (1/ln 2 at m = 1), rounded
/// once. x = ±0 and +∞ give +∞ (so that the §C.3 sequence yields −∞ and +∞), x < 0 gives the
/// default NaN.
pub fn flogd(x: u32) -> u32 {
    if F32.is_nan(x) {
        return F32.quiet(x);
    }
    if F32.is_zero(x) || (F32.is_inf(x) && !F32.is_neg(x)) {
        return F32.inf(false);
    }
    if F32.is_neg(x) {
        return F32.default_nan();
    }
    let (m, _) = frexp(F32, x, Frexp::Log);
    let m = f64::from(f32::from_bits(m));
    let v = if m == 1.0 { 1.0 / std::f64::consts::LN_2 } else { fp::log2_ratio(m) };
    fp::from_f64(F32, v, Round::Rte)
}

/// `FLOG_TABLE.f32`: log2 of the `.log` mantissa of x, rounded once (so that
/// `FLOG_TABLE(x) + FREXPE.log(x)` = log2 x). ±0 → −∞, +∞ → +∞, x < 0 → default NaN.
pub fn flog_table(x: u32) -> u32 {
    if F32.is_nan(x) {
        return F32.quiet(x);
    }
    if F32.is_zero(x) {
        return F32.inf(true);
    }
    if F32.is_neg(x) {
        return F32.default_nan();
    }
    if F32.is_inf(x) {
        return x;
    }
    let (m, _) = frexp(F32, x, Frexp::Log);
    let m = f64::from(f32::from_bits(m));
    fp::from_f64(F32, fp::log2_ratio(m) * (m - 1.0), Round::Rte)
}

/// `FADD_LSCALE.f32`: A + L(B), where L(B) is the `.log` mantissa of B for finite non-zero B
/// and B itself otherwise, rounded once with the usual NaN rules.
pub fn fadd_lscale(a: u32, b: u32) -> u32 {
    let l = if F32.is_nan(b) || F32.is_zero(b) || F32.is_inf(b) { b } else { frexp(F32, b, Frexp::Log).0 };
    fp::add32(a, l)
}

/// `FEXP.f32`: 2^(A/2^24) for the 8:24 fixed-point A; B is the same argument as a float
/// scaled by 2^24. NaN B → quiet NaN; when B is infinite or |B| ≥ 2^31 (A saturated) the
/// result is 2^(B/2^24) (∞ or 0 or the exact power). Rounded once to nearest.
pub fn fexp(a: u32, b: u32) -> u32 {
    if F32.is_nan(b) {
        return F32.quiet(b);
    }
    let bf = f64::from(f32::from_bits(b));
    let t = if bf.is_infinite() || bf.abs() >= 2f64.powi(31) { bf } else { f64::from(a as i32) };
    fp::exp2_to(F32, t * 2f64.powi(-24))
}

/// `FEXP_TABLE.u4`: 2^(k/16) for the low 4 bits k of the source.
pub fn fexp_table(x: u32) -> u32 {
    fp::exp2_to(F32, f64::from(x & 15) / 16.0)
}

/// `FSIN_TABLE.u6`: sin(k·π/32) for the low 6 bits k of the source (binary32).
pub fn sin_table(x: u32) -> u32 {
    fp::from_f64(F32, fp::sincos_table(x).0, Round::Rte)
}

/// `FCOS_TABLE.u6`: cos(k·π/32) for the low 6 bits k of the source.
pub fn cos_table(x: u32) -> u32 {
    fp::from_f64(F32, fp::sincos_table(x).1, Round::Rte)
}

/// `CUBEFACE1`: max(|x|, |y|, |z|) with the maxNum NaN rule (a NaN operand is ignored).
pub fn cubeface1(x: u32, y: u32, z: u32) -> u32 {
    let m = fp::min_max(F32, F32.abs(x), F32.abs(y), true);
    fp::min_max(F32, m, F32.abs(z), true)
}

/// `CUBEFACE2_V9`: the face (0 +X, 1 −X, 2 +Y, 3 −Y, 4 +Z, 5 −Z) in bits 29–31: the first axis
/// (x, y, z) whose magnitude equals the maximum, by its sign (−0 counts as positive) — the rule
/// of `exec::texture::cube_project`.
pub fn cubeface2(x: u32, y: u32, z: u32) -> u32 {
    let ma = f32::from_bits(cubeface1(x, y, z));
    let (fx, fy, fz) = (f32::from_bits(x), f32::from_bits(y), f32::from_bits(z));
    let face = if fx.abs() == ma {
        if fx >= 0.0 { 0 } else { 1 }
    } else if fy.abs() == ma {
        if fy >= 0.0 { 2 } else { 3 }
    } else if fz >= 0.0 {
        4
    } else {
        5
    };
    face << 29
}

/// `CUBE_SSEL` (`s`) and `CUBE_TSEL` (`!s`): the face coordinate from the two candidate axes
/// `a`, `b` (sources 0 and 1) and the face in bits 29–31 of `face`; faces 6 and 7 are `None`.
/// With the compiler's operands (S: z, x; T: y, z) this is `cube_project`'s (sc, tc).
pub fn cube_select(s: bool, a: u32, b: u32, face: u32) -> Option<u32> {
    let neg = |v: u32| v ^ 0x8000_0000;
    let f = face >> 29;
    Some(match (s, f) {
        (true, 0) => neg(a),
        (true, 1) => a,
        (true, 2..=4) => b,
        (true, 5) => neg(b),
        (false, 0 | 1 | 4 | 5) => neg(a),
        (false, 2) => b,
        (false, 3) => neg(b),
        _ => return None,
    })
}

/// Reciprocal for binary16 lanes.
pub fn rcp16(x: u32) -> u32 {
    rcp(F16, x & 0xFFFF)
}

/// Reciprocal square root for binary16 lanes.
pub fn rsq16(x: u32) -> u32 {
    rsq(F16, x & 0xFFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsq_is_correctly_rounded() {
        let mut seed = 0x1234_5678u32;
        for _ in 0..20000 {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let x = (seed >> 1) % 0x7F80_0000; // positive finite
            if x == 0 {
                continue;
            }
            let r = rsq(F32, x);
            let y = 1.0 / f64::from(f32::from_bits(x)).sqrt();
            let err = (f64::from(f32::from_bits(r)) - y).abs();
            let up = (f64::from(f32::from_bits(r + 1)) - y).abs();
            let down = (f64::from(f32::from_bits(r - 1)) - y).abs();
            assert!(err <= up && err <= down, "rsq({x:#x}) = {r:#x}");
        }
        assert_eq!(rsq(F32, 4.0f32.to_bits()), 0.5f32.to_bits());
        assert_eq!(rsq(F32, 0x8000_0000), 0xFF80_0000);
    }

    #[test]
    fn frexp_modes() {
        let x = 12.0f32.to_bits(); // 1.5 · 2^3
        assert_eq!(frexp(F32, x, Frexp::Plain), (0.75f32.to_bits(), 4));
        assert_eq!(frexp(F32, x, Frexp::Log), (0.75f32.to_bits(), 4));
        assert_eq!(frexp(F32, 5.0f32.to_bits(), Frexp::Log), (1.25f32.to_bits(), 2));
        assert_eq!(frexp(F32, x, Frexp::Sqrt), (0.75f32.to_bits(), 2)); // 0.75 · 4^2
        assert_eq!(frexp(F32, 8.0f32.to_bits(), Frexp::Sqrt), (0.5f32.to_bits(), 2));
        assert_eq!(frexp(F32, 1, Frexp::Plain), (0.5f32.to_bits(), -148));
    }
}
