//! Exact floating-point helpers: IEEE binary32/binary16 values as bit patterns, rounding of exact
//! values to either format in all four rounding modes, conversions, the NaN rules and clamps of
//! docs/emulator.md, comparisons, and the transcendental kernels behind the SFU instructions.
//!
//! Everything here works on bit patterns and is deterministic on every platform: the only
//! hardware floating-point operations used are IEEE-exact ones (f32/f64 `+`, `*`, `/`, `sqrt`
//! and `mul_add`, all correctly rounded), and every NaN is produced explicitly, never taken from
//! the host's propagation rules.

/// IEEE rounding mode (the ISA's `round_mode` enum, same order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    /// To nearest, ties to even.
    Rte,
    /// Toward +∞.
    Rtp,
    /// Toward −∞.
    Rtn,
    /// Toward zero.
    Rtz,
}

impl Round {
    /// From the `round_mode` enum index.
    pub fn from_index(index: u8) -> Round {
        match index & 3 {
            0 => Round::Rte,
            1 => Round::Rtp,
            2 => Round::Rtn,
            _ => Round::Rtz,
        }
    }
}

/// A binary floating-point format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub exp_bits: u32,
    pub man_bits: u32,
}

pub const F32: Format = Format { exp_bits: 8, man_bits: 23 };
pub const F16: Format = Format { exp_bits: 5, man_bits: 10 };

impl Format {
    pub const fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    pub const fn sign_bit(self) -> u32 {
        1 << (self.exp_bits + self.man_bits)
    }
    pub const fn exp_mask(self) -> u32 {
        ((1 << self.exp_bits) - 1) << self.man_bits
    }
    pub const fn man_mask(self) -> u32 {
        (1 << self.man_bits) - 1
    }
    pub const fn quiet_bit(self) -> u32 {
        1 << (self.man_bits - 1)
    }
    /// The canonical NaN produced by invalid operations.
    pub const fn default_nan(self) -> u32 {
        self.exp_mask() | self.quiet_bit()
    }
    pub const fn inf(self, neg: bool) -> u32 {
        self.exp_mask() | if neg { self.sign_bit() } else { 0 }
    }
    pub const fn max_finite(self, neg: bool) -> u32 {
        (self.exp_mask() - (1 << self.man_bits)) | self.man_mask() | if neg { self.sign_bit() } else { 0 }
    }
    pub const fn zero(self, neg: bool) -> u32 {
        if neg { self.sign_bit() } else { 0 }
    }
    pub const fn one(self) -> u32 {
        (self.bias() as u32) << self.man_bits
    }
    pub fn is_nan(self, bits: u32) -> bool {
        bits & (self.exp_mask() | self.man_mask()) > self.exp_mask()
    }
    pub fn is_inf(self, bits: u32) -> bool {
        bits & (self.exp_mask() | self.man_mask()) == self.exp_mask()
    }
    pub fn is_zero(self, bits: u32) -> bool {
        bits & (self.exp_mask() | self.man_mask()) == 0
    }
    pub fn is_neg(self, bits: u32) -> bool {
        bits & self.sign_bit() != 0
    }
    pub fn quiet(self, bits: u32) -> u32 {
        bits | self.quiet_bit()
    }
    pub fn abs(self, bits: u32) -> u32 {
        bits & !self.sign_bit()
    }
    pub fn neg(self, bits: u32) -> u32 {
        bits ^ self.sign_bit()
    }

    /// A finite value as `(negative, magnitude, exponent)`: value = ±magnitude · 2^exponent.
    /// Infinities and NaNs must be handled before.
    pub fn decompose(self, bits: u32) -> (bool, u128, i32) {
        let neg = self.is_neg(bits);
        let e = ((bits & self.exp_mask()) >> self.man_bits) as i32;
        let m = bits & self.man_mask();
        let emin = 1 - self.bias();
        if e == 0 {
            (neg, u128::from(m), emin - self.man_bits as i32)
        } else {
            (neg, u128::from(m | (1 << self.man_bits)), e - self.bias() - self.man_bits as i32)
        }
    }

    /// Exact value as f64 (every binary16 and binary32 value is an f64).
    pub fn to_f64(self, bits: u32) -> f64 {
        if self == F32 {
            return f64::from(f32::from_bits(bits));
        }
        if self.is_nan(bits) {
            return f64::NAN;
        }
        if self.is_inf(bits) {
            return if self.is_neg(bits) { f64::NEG_INFINITY } else { f64::INFINITY };
        }
        let (neg, mag, exp) = self.decompose(bits);
        let v = mag as f64 * 2f64.powi(exp);
        if neg { -v } else { v }
    }
}

/// Rounds the exact value `(−1)^neg · mag · 2^exp` to `fmt` in mode `mode` (overflow gives ∞ or
/// the largest finite value as IEEE prescribes for the mode; gradual underflow).
pub fn round(fmt: Format, neg: bool, mag: u128, exp: i32, mode: Round) -> u32 {
    if mag == 0 {
        return fmt.zero(neg);
    }
    let man = fmt.man_bits as i64;
    let emin = 1 - i64::from(fmt.bias());
    let bits = 128 - i64::from(mag.leading_zeros());
    let msb = i64::from(exp) + bits - 1;
    let mut ulp = if msb >= emin { msb - man } else { emin - man };
    let shift = ulp - i64::from(exp);
    let mut q: u128;
    if shift <= 0 {
        // Exact: the value has no bits below the unit in the last place.
        q = mag << (-shift) as u32;
    } else {
        let (quot, rem, half_cmp) = if shift >= 129 {
            (0u128, mag, std::cmp::Ordering::Less)
        } else if shift == 128 {
            (0u128, mag, mag.cmp(&(1u128 << 127)))
        } else {
            let s = shift as u32;
            let rem = mag & ((1u128 << s) - 1);
            (mag >> s, rem, rem.cmp(&(1u128 << (s - 1))))
        };
        q = quot;
        let up = match mode {
            Round::Rte => {
                half_cmp == std::cmp::Ordering::Greater || (half_cmp == std::cmp::Ordering::Equal && q & 1 == 1)
            }
            Round::Rtz => false,
            Round::Rtp => !neg && rem != 0,
            Round::Rtn => neg && rem != 0,
        };
        if up {
            q += 1;
            if q >> (man + 1) != 0 {
                q >>= 1;
                ulp += 1;
            }
        }
    }
    let sign = if neg { fmt.sign_bit() } else { 0 };
    if q >> man == 0 {
        // Subnormal (or zero after rounding down).
        return sign | q as u32;
    }
    let biased = ulp + man + i64::from(fmt.bias());
    if biased >= (1 << fmt.exp_bits) - 1 {
        let to_inf = match mode {
            Round::Rte => true,
            Round::Rtz => false,
            Round::Rtp => !neg,
            Round::Rtn => neg,
        };
        return if to_inf { fmt.inf(neg) } else { fmt.max_finite(neg) };
    }
    sign | ((biased as u32) << fmt.man_bits) | (q as u32 & fmt.man_mask())
}

/// An f64 value as `(negative, magnitude, exponent)`; finite values only.
pub fn decompose_f64(v: f64) -> (bool, u128, i32) {
    let bits = v.to_bits();
    let neg = bits >> 63 != 0;
    let e = ((bits >> 52) & 0x7FF) as i32;
    let m = bits & ((1 << 52) - 1);
    if e == 0 { (neg, u128::from(m), -1074) } else { (neg, u128::from(m | (1 << 52)), e - 1075) }
}

/// Rounds an f64 value to `fmt` (single rounding from the f64 value; NaN gives the default
/// NaN, infinities stay infinite).
pub fn from_f64(fmt: Format, v: f64, mode: Round) -> u32 {
    if v.is_nan() {
        return fmt.default_nan();
    }
    if v.is_infinite() {
        return fmt.inf(v < 0.0);
    }
    let (neg, mag, exp) = decompose_f64(v);
    round(fmt, neg, mag, exp, mode)
}

/// Rounds an exact integer to `fmt`.
pub fn from_int(fmt: Format, v: i128, mode: Round) -> u32 {
    round(fmt, v < 0, v.unsigned_abs(), 0, mode)
}

/// Converts between formats: NaNs keep their sign and the top payload bits and become quiet;
/// infinities stay infinite; finite values are rounded in `mode`.
pub fn convert(from: Format, to: Format, bits: u32, mode: Round) -> u32 {
    if from.is_nan(bits) {
        let payload = bits & from.man_mask();
        let shifted = if to.man_bits >= from.man_bits {
            payload << (to.man_bits - from.man_bits)
        } else {
            payload >> (from.man_bits - to.man_bits)
        };
        let sign = if from.is_neg(bits) { to.sign_bit() } else { 0 };
        return sign | to.exp_mask() | to.quiet_bit() | shifted;
    }
    if from.is_inf(bits) {
        return to.inf(from.is_neg(bits));
    }
    let (neg, mag, exp) = from.decompose(bits);
    round(to, neg, mag, exp, mode)
}

/// binary16 → binary32, exact. NaN payloads are shifted into place and keep their quiet bit
/// (a widen is a bit-level operation, not an arithmetic one).
pub fn f16_to_f32_exact(h: u32) -> u32 {
    let h = h & 0xFFFF;
    if F16.is_nan(h) {
        let sign = (h & 0x8000) << 16;
        return sign | 0x7F80_0000 | ((h & 0x3FF) << 13);
    }
    convert(F16, F32, h, Round::Rte)
}

/// Rounds a finite or infinite float to an integer in `mode` and saturates it to
/// `[lo, hi]`; NaN gives 0.
pub fn to_int(fmt: Format, bits: u32, mode: Round, lo: i64, hi: i64) -> i64 {
    if fmt.is_nan(bits) {
        return 0;
    }
    if fmt.is_inf(bits) {
        return if fmt.is_neg(bits) { lo } else { hi };
    }
    let (neg, mag, exp) = fmt.decompose(bits);
    let v = round_to_integer(neg, mag, exp, mode);
    v.clamp(i128::from(lo), i128::from(hi)) as i64
}

/// Rounds ±mag·2^exp to an integer (magnitudes of binary32 fit easily in i128).
fn round_to_integer(neg: bool, mag: u128, exp: i32, mode: Round) -> i128 {
    let mag_int: u128 = if exp >= 0 {
        // binary32 values are below 2^128; saturate anything larger.
        if exp >= 100 { u128::MAX >> 1 } else { mag << exp as u32 }
    } else {
        let s = (-exp) as u32;
        let (q, rem, half_cmp) = if s > 128 {
            (0, mag, std::cmp::Ordering::Less)
        } else if s == 128 {
            (0, mag, mag.cmp(&(1u128 << 127)))
        } else {
            let rem = mag & ((1u128 << s) - 1);
            (mag >> s, rem, rem.cmp(&(1u128 << (s - 1))))
        };
        let up = match mode {
            Round::Rte => half_cmp.is_gt() || (half_cmp.is_eq() && q & 1 == 1),
            Round::Rtz => false,
            Round::Rtp => !neg && rem != 0,
            Round::Rtn => neg && rem != 0,
        };
        q + u128::from(up)
    };
    let m = mag_int.min(u128::MAX >> 1) as i128;
    if neg { -m } else { m }
}

/// Rounds a float to an integral value of the same format (`FROUND`): NaN becomes quiet,
/// infinities and zeros are unchanged, the sign of a zero result is the sign of the input.
pub fn round_integral(fmt: Format, bits: u32, mode: Round) -> u32 {
    if fmt.is_nan(bits) {
        return fmt.quiet(bits);
    }
    if fmt.is_inf(bits) || fmt.is_zero(bits) {
        return bits;
    }
    let (neg, mag, exp) = fmt.decompose(bits);
    if exp >= 0 {
        return bits;
    }
    let v = round_to_integer(neg, mag, exp, mode);
    if v == 0 {
        return fmt.zero(neg);
    }
    round(fmt, neg, v.unsigned_abs(), 0, Round::Rtz)
}

/// `ldexp`: `±mag·2^(exp + scale)` rounded in `mode`; NaN quiet, ∞ and 0 unchanged.
pub fn ldexp(fmt: Format, bits: u32, scale: i32, mode: Round) -> u32 {
    if fmt.is_nan(bits) {
        return fmt.quiet(bits);
    }
    if fmt.is_inf(bits) || fmt.is_zero(bits) {
        return bits;
    }
    let (neg, mag, exp) = fmt.decompose(bits);
    // Far beyond the format's range the result is the same as at ±1000.
    let e = (i64::from(exp) + i64::from(scale)).clamp(-1000, 1000) as i32;
    round(fmt, neg, mag, e, mode)
}

/// The NaN rule of arithmetic: the first NaN operand, made quiet; `None` if no operand is NaN.
pub fn first_nan(fmt: Format, operands: &[u32]) -> Option<u32> {
    operands.iter().find(|&&b| fmt.is_nan(b)).map(|&b| fmt.quiet(b))
}

/// binary32 addition (round to nearest even) with the NaN rules.
pub fn add32(a: u32, b: u32) -> u32 {
    if let Some(n) = first_nan(F32, &[a, b]) {
        return n;
    }
    let r = f32::from_bits(a) + f32::from_bits(b);
    if r.is_nan() { F32.default_nan() } else { r.to_bits() }
}

/// binary32 multiplication with the NaN rules.
pub fn mul32(a: u32, b: u32) -> u32 {
    if let Some(n) = first_nan(F32, &[a, b]) {
        return n;
    }
    let r = f32::from_bits(a) * f32::from_bits(b);
    if r.is_nan() { F32.default_nan() } else { r.to_bits() }
}

/// binary32 fused multiply-add `a·b + c` with one rounding, and the NaN rules.
pub fn fma32(a: u32, b: u32, c: u32) -> u32 {
    if let Some(n) = first_nan(F32, &[a, b, c]) {
        return n;
    }
    let r = f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c));
    if r.is_nan() { F32.default_nan() } else { r.to_bits() }
}

/// binary16 addition (exact in f64, then one rounding).
pub fn add16(a: u32, b: u32) -> u32 {
    if let Some(n) = first_nan(F16, &[a, b]) {
        return n;
    }
    let r = F16.to_f64(a) + F16.to_f64(b);
    if r.is_nan() { F16.default_nan() } else { from_f64(F16, r, Round::Rte) }
}

/// binary16 fused multiply-add, computed exactly in integers and rounded once.
pub fn fma16(a: u32, b: u32, c: u32) -> u32 {
    if let Some(n) = first_nan(F16, &[a, b, c]) {
        return n;
    }
    let (fa, fb, fc) = (F16.to_f64(a), F16.to_f64(b), F16.to_f64(c));
    if fa.is_infinite() || fb.is_infinite() || fc.is_infinite() {
        let r = fa * fb + fc;
        return if r.is_nan() { F16.default_nan() } else { F16.inf(r < 0.0) };
    }
    // Every binary16 value is an integer multiple of 2^-24.
    let scaled = |bits: u32| -> i128 {
        let (neg, mag, exp) = F16.decompose(bits);
        let v = (mag << (exp + 24) as u32) as i128;
        if neg { -v } else { v }
    };
    let product = scaled(a) * scaled(b);
    let sum = product + (scaled(c) << 24);
    if sum == 0 {
        let product_neg = F16.is_neg(a) != F16.is_neg(b);
        let both_zero = product == 0 && F16.is_zero(c);
        let neg = both_zero && product_neg && F16.is_neg(c);
        return F16.zero(neg);
    }
    round(F16, sum < 0, sum.unsigned_abs(), -48, Round::Rte)
}

/// IEEE minNum/maxNum with −0 < +0: a NaN operand yields the other operand; two NaNs give the
/// first one, made quiet.
pub fn min_max(fmt: Format, a: u32, b: u32, max: bool) -> u32 {
    match (fmt.is_nan(a), fmt.is_nan(b)) {
        (true, true) => return fmt.quiet(a),
        (true, false) => return b,
        (false, true) => return a,
        _ => {}
    }
    let (ka, kb) = (total_key(fmt, a), total_key(fmt, b));
    let a_wins = if max { ka >= kb } else { ka <= kb };
    if a_wins { a } else { b }
}

/// A key whose integer order is the IEEE total order of the bit patterns.
pub fn total_key(fmt: Format, bits: u32) -> i64 {
    let width = fmt.exp_bits + fmt.man_bits + 1;
    let bits = bits & ((1u64 << width) - 1) as u32;
    let mag = i64::from(bits & !fmt.sign_bit());
    if fmt.is_neg(bits) { -mag - 1 } else { mag }
}

/// The ISA's `clamp` modifier (SPIR-V semantics: NaN gives the lower bound, −0 stays −0 only
/// for `clamp_m1_1`).
pub fn clamp(fmt: Format, bits: u32, mode: u8) -> u32 {
    let one = fmt.one();
    match mode {
        1 => {
            if fmt.is_nan(bits) || fmt.is_neg(bits) {
                0
            } else {
                bits
            }
        }
        2 => {
            if fmt.is_nan(bits) {
                return one | fmt.sign_bit();
            }
            let mag = fmt.abs(bits);
            if mag > one { one | (bits & fmt.sign_bit()) } else { bits }
        }
        3 => {
            if fmt.is_nan(bits) || fmt.is_neg(bits) {
                0
            } else if bits > one {
                one
            } else {
                bits
            }
        }
        _ => bits,
    }
}

/// Floating-point condition (the `condition` enum): eq, gt, ge, ne, lt, le, gtlt, total.
/// Every ordered comparison is false when an operand is NaN; `ne` is true then; `gtlt` is the
/// ordered not-equal; `total` is IEEE `totalOrder(a, b)` (a ≤ b in the total order).
pub fn float_condition(fmt: Format, cond: u8, a: u32, b: u32) -> bool {
    if cond == 7 {
        return total_key(fmt, a) <= total_key(fmt, b);
    }
    let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
    match cond {
        0 => x == y,
        1 => x > y,
        2 => x >= y,
        3 => x != y,
        4 => x < y,
        5 => x <= y,
        // Ordered not-equal: false when either operand is NaN.
        _ => !x.is_nan() && !y.is_nan() && x != y,
    }
}

// ---------------------------------------------------------------------------------------------
// Transcendental kernels (f64, deterministic: only +, *, / and mul_add).
// ---------------------------------------------------------------------------------------------

const LN2: f64 = std::f64::consts::LN_2;

/// 2^f for |f| ≤ 0.5 (Taylor series of e^(f·ln 2), error below 1e-16 relative).
fn exp2_reduced(f: f64) -> f64 {
    let x = f * LN2;
    let mut term = 1.0f64;
    let mut sum = 1.0f64;
    for k in 1..=18 {
        term = term * x / f64::from(k);
        sum += term;
    }
    sum
}

/// 2^t rounded once to `fmt` (t may be ±∞; NaN gives the default NaN).
pub fn exp2_to(fmt: Format, t: f64) -> u32 {
    if t.is_nan() {
        return fmt.default_nan();
    }
    if t >= 1024.0 {
        return fmt.inf(false);
    }
    if t <= -1100.0 {
        return 0;
    }
    let n = t.round_ties_even();
    let y = exp2_reduced(t - n);
    let (neg, mag, exp) = decompose_f64(y);
    round(fmt, neg, mag, exp + n as i32, Round::Rte)
}

/// log2(m)/(m − 1) for m in [0.75, 1.5), via ln m = 2·atanh(s), s = (m − 1)/(m + 1):
/// log2(m)/(m − 1) = 2/((m + 1)·ln 2) · Σ s^(2k)/(2k + 1). No cancellation near m = 1.
pub fn log2_ratio(m: f64) -> f64 {
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut sum = 0.0f64;
    for k in (0..16).rev() {
        sum = sum * s2 + 1.0 / f64::from(2 * k + 1);
    }
    2.0 / ((m + 1.0) * LN2) * sum
}

/// sin and cos of k·π/32 (k = 0…63), from a Taylor series on the first octant and exact
/// symmetries.
pub fn sincos_table(k: u32) -> (f64, f64) {
    let k = k & 63;
    let quadrant = k / 16;
    let r = k % 16;
    // (sin, cos) of r·π/32 with r in 0..16 (angle up to π/2).
    let base = |r: u32| -> (f64, f64) {
        if r == 0 {
            return (0.0, 1.0);
        }
        if r == 16 {
            return (1.0, 0.0);
        }
        let x = f64::from(r) * (std::f64::consts::PI / 32.0);
        let (mut s, mut c) = (0.0f64, 0.0f64);
        let (mut ts, mut tc) = (x, 1.0f64);
        for k in 0..20 {
            s += ts;
            c += tc;
            let n = f64::from(2 * k + 2);
            ts = -ts * x * x / (n * (n + 1.0));
            tc = -tc * x * x / ((n - 1.0) * n);
        }
        (s, c)
    };
    let (s, c) = base(r);
    // Negation that keeps exact zeros positive.
    let neg = |v: f64| if v == 0.0 { 0.0 } else { -v };
    match quadrant {
        0 => (s, c),
        1 => (c, neg(s)),
        2 => (neg(s), neg(c)),
        _ => (neg(c), s),
    }
}

/// The frexp-style decomposition of a finite non-zero value: (significand in [1, 2) with the
/// input's sign, exponent E), value = significand · 2^E. Exact.
pub fn frexp_unit(fmt: Format, bits: u32) -> (f64, i32) {
    let (neg, mag, exp) = fmt.decompose(bits);
    let bits_len = 128 - mag.leading_zeros() as i32;
    let e = exp + bits_len - 1;
    let m = mag as f64 / 2f64.powi(bits_len - 1);
    (if neg { -m } else { m }, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_matches_host_for_f32() {
        for v in [1.0f64, 1.0 + 2f64.powi(-24), 1.0 + 3.0 * 2f64.powi(-24), 3.4e38, 1e-45, 7e-46, 1e39, -2.5e-40] {
            assert_eq!(from_f64(F32, v, Round::Rte), (v as f32).to_bits(), "{v}");
        }
        assert_eq!(from_f64(F32, 1e39, Round::Rtz), 0x7F7F_FFFF);
        assert_eq!(from_f64(F32, -1e39, Round::Rtp), 0xFF7F_FFFF);
        assert_eq!(from_f64(F32, 1.0 + 2f64.powi(-30), Round::Rtp), 0x3F80_0001);
        assert_eq!(from_f64(F32, -(1.0 + 2f64.powi(-30)), Round::Rtn), 0xBF80_0001);
        assert_eq!(from_f64(F32, 1e-50, Round::Rtp), 1);
        assert_eq!(from_f64(F16, 65520.0, Round::Rte), 0x7C00);
        assert_eq!(from_f64(F16, 65519.0, Round::Rte), 0x7BFF);
        assert_eq!(from_f64(F16, 2f64.powi(-25), Round::Rte), 0);
        assert_eq!(from_f64(F16, 2f64.powi(-25) * 1.5, Round::Rte), 1);
    }

    #[test]
    fn integers() {
        assert_eq!(to_int(F32, 2.5f32.to_bits(), Round::Rte, i64::from(i32::MIN), i64::from(i32::MAX)), 2);
        assert_eq!(to_int(F32, 3.5f32.to_bits(), Round::Rte, 0, 10), 4);
        assert_eq!(to_int(F32, (-2.5f32).to_bits(), Round::Rtn, -10, 10), -3);
        assert_eq!(to_int(F32, (-2.5f32).to_bits(), Round::Rtz, -10, 10), -2);
        assert_eq!(to_int(F32, 1e30f32.to_bits(), Round::Rtz, -10, 10), 10);
        assert_eq!(round_integral(F32, (-0.25f32).to_bits(), Round::Rte), 0x8000_0000);
        assert_eq!(round_integral(F32, 2.5f32.to_bits(), Round::Rte), 2.0f32.to_bits());
    }

    #[test]
    fn kernels() {
        for t in [-3.3f64, -0.5, 0.0, 0.25, 1.0, 7.77] {
            let r = f32::from_bits(exp2_to(F32, t));
            assert!((f64::from(r) - t.exp2()).abs() <= t.exp2() * 1.2e-7, "{t}");
        }
        for k in 0..64 {
            let (s, c) = sincos_table(k);
            let x = f64::from(k) * std::f64::consts::PI / 32.0;
            assert!((s - x.sin()).abs() < 1e-15 && (c - x.cos()).abs() < 1e-15, "{k}");
        }
        for m in [0.75f64, 0.9, 1.0 + 1e-9, 1.2, 1.49] {
            let want = m.log2() / (m - 1.0);
            assert!((log2_ratio(m) - want).abs() < 1e-6 * want.abs() + 1e-12, "{m}");
        }
    }
}
