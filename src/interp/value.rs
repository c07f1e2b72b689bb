//! One 32-bit component value together with its accuracy, and the float arithmetic that
//! propagates accuracy (docs/interpreter.md, "Exact and approximate values").
//!
//! Every component the interpreter holds is a [`Val`]: the 32-bit pattern and `err`, an
//! absolute error bound on the value *as a 32-bit float*:
//!
//! * `err == 0` — exact: the value is fully defined by the semantics, bit for bit;
//! * `0 < err < ∞` — approximate: the true (reference) result lies within `err` of the value
//!   (the value itself is computed as accurately as possible);
//! * `err == ∞` — unconstrained: the semantics leave the value open (undefined results,
//!   uninitialised registers, values that depend on an approximate value in a way no bound
//!   describes, e.g. an integer conversion near a step).
//!
//! The helpers below implement first-order running error analysis: each float operation
//! with an inexact operand adds the operand errors scaled by the operation's sensitivity,
//! plus half an ulp… rounded up to one ulp of the result for the rounding of the operation.

/// The smallest normal f32; approximate results get this much absolute slack so that a
/// hardware implementation may flush denormal results of approximate operations.
pub const FLUSH_SLACK: f64 = 1.175_494_350_822_287_5e-38;

/// A component value and its absolute error bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Val {
    pub bits: u32,
    pub err: f32,
}

impl Val {
    pub const ZERO: Val = Val { bits: 0, err: 0.0 };

    pub fn exact(bits: u32) -> Val {
        Val { bits, err: 0.0 }
    }

    pub fn f(x: f32) -> Val {
        Val { bits: x.to_bits(), err: 0.0 }
    }

    pub fn i(x: i32) -> Val {
        Val { bits: x as u32, err: 0.0 }
    }

    pub fn unknown(bits: u32) -> Val {
        Val { bits, err: f32::INFINITY }
    }

    pub fn float(self) -> f32 {
        f32::from_bits(self.bits)
    }

    pub fn int(self) -> i32 {
        self.bits as i32
    }

    pub fn is_exact(self) -> bool {
        self.err == 0.0
    }

    pub fn is_unknown(self) -> bool {
        self.err == f32::INFINITY
    }

    /// A value with the given bits whose accuracy is "exact if all `deps` are exact, else
    /// unconstrained" — the rule for every non-float (integer, bitwise, boolean) result. A NaN
    /// whose bits are open ([`Val::open_nan`]) counts as inexact here: its bits are read.
    pub fn derived(bits: u32, deps: &[Val]) -> Val {
        Val { bits, err: if deps.iter().all(|d| d.is_exact() && !d.is_open_nan()) { 0.0 } else { f32::INFINITY } }
    }

    /// A NaN made by float arithmetic: exact as a float (every NaN matches every NaN), but its
    /// bits (sign, payload) are unspecified, so integer and bitwise consumers of them are
    /// unconstrained. Encoded as the error bound −0.0, which every float rule treats as 0.
    /// Other values are returned unchanged.
    pub fn open_nan(self) -> Val {
        if self.float().is_nan() && self.is_exact() { Val { bits: self.bits, err: -0.0 } } else { self }
    }

    /// Whether this is a NaN whose bits are unspecified ([`Val::open_nan`]).
    pub fn is_open_nan(self) -> bool {
        self.err == 0.0 && self.err.is_sign_negative() && self.float().is_nan()
    }

    /// The interval `[lo, hi]` the value stands for, or `None` when unconstrained or NaN
    /// with an error (no interval describes it).
    pub fn interval(self) -> Option<(f64, f64)> {
        let x = self.float() as f64;
        if self.is_unknown() || (x.is_nan() && self.err > 0.0) {
            return None;
        }
        let e = self.err as f64;
        Some((x - e, x + e))
    }
}

/// One unit in the last place at `x` (the spacing of f32 values around it).
pub fn ulp(x: f32) -> f64 {
    let a = x.abs();
    if !a.is_finite() {
        return f64::INFINITY;
    }
    if a < f32::MIN_POSITIVE {
        return 2f64.powi(-149);
    }
    let exp = ((a.to_bits() >> 23) as i32) - 127;
    2f64.powi(exp - 23)
}

/// The smallest magnitude that rounds to an infinity in binary32 (round to nearest even):
/// the largest finite value plus half its ulp, `2^128 − 2^103`.
pub const OVERFLOW: f64 = 340_282_356_779_733_661_637_539_395_458_142_568_448.0;

/// Whether a value within `e` of the finite `x` can round to an infinity: the interval reaches
/// [`OVERFLOW`].
pub fn may_overflow(x: f32, e: f64) -> bool {
    (x.abs() as f64) + e >= OVERFLOW
}

/// The next f32 towards +∞ (NaN and +∞ unchanged).
pub fn next_up(x: f32) -> f32 {
    if x.is_nan() || x == f32::INFINITY {
        return x;
    }
    if x == 0.0 {
        return f32::from_bits(1);
    }
    let b = x.to_bits();
    f32::from_bits(if x > 0.0 { b + 1 } else { b - 1 })
}

/// The next f32 towards −∞.
pub fn next_down(x: f32) -> f32 {
    -next_up(-x)
}

/// Rounds an f64 error bound up to an f32 (∞ stays ∞, NaN becomes ∞).
pub fn err32(e: f64) -> f32 {
    if e.is_nan() {
        return f32::INFINITY;
    }
    if e == 0.0 {
        return 0.0;
    }
    let f = e as f32;
    if (f as f64) < e { next_up(f) } else { f }
}

/// A float result `r` of an operation whose operands carried the error `e_in` (already
/// scaled by the operation's sensitivity). Exact operands give an exact result; inexact ones
/// add one ulp for the operation's own rounding. A non-finite result from inexact operands
/// is unconstrained, and so is one that may be infinite ([`bounded`]).
pub fn result(r: f32, e_in: f64) -> Val {
    if e_in == 0.0 {
        return Val::f(r);
    }
    if !r.is_finite() || !e_in.is_finite() {
        return Val::unknown(r.to_bits());
    }
    bounded(r, e_in + ulp(r))
}

/// The finite `r` within `e`, unless that interval reaches the overflow threshold: then another
/// executor's value may be ±∞ (`pow(FLT_MAX, 1)` as `exp2(1 · log2 FLT_MAX)`, where `log2`
/// rounds up to 128), and no interval bounds what is computed from an infinity (`∞ · 0`), so
/// the value is unconstrained.
fn bounded(r: f32, e: f64) -> Val {
    if may_overflow(r, e) { Val::unknown(r.to_bits()) } else { Val { bits: r.to_bits(), err: err32(e) } }
}

/// An approximate operation's result: the value `r` (computed as accurately as possible),
/// the operation's own bound `bound` and the propagated operand error `e_in`. Special results
/// (NaN, ±∞) from operands that are themselves exact are exact; an infinite result from a
/// finite exact operand (overflow) is unconstrained, since an approximation may round either
/// way near the top of the range.
pub fn approx(r: f32, bound: f64, e_in: f64, overflow: bool) -> Val {
    if !e_in.is_finite() {
        return Val::unknown(r.to_bits());
    }
    if r.is_nan() {
        return if e_in == 0.0 { Val::f(r) } else { Val::unknown(r.to_bits()) };
    }
    if r.is_infinite() {
        return if e_in == 0.0 && !overflow { Val::f(r) } else { Val::unknown(r.to_bits()) };
    }
    bounded(r, bound + e_in + FLUSH_SLACK)
}

/// `−a` (a float negation: on a NaN the bits are open, since the hardware applies the modifier
/// inside a float operation, which may quiet a signalling NaN).
pub fn neg(a: Val) -> Val {
    Val { bits: a.bits ^ 0x8000_0000, err: a.err }.open_nan()
}

/// `|a|` (a float absolute value: on a NaN the bits are open, as for [`neg`]).
pub fn abs(a: Val) -> Val {
    Val { bits: a.bits & 0x7fff_ffff, err: a.err }.open_nan()
}

pub fn add(a: Val, b: Val) -> Val {
    let r = a.float() + b.float();
    result(r, a.err as f64 + b.err as f64)
}

pub fn sub(a: Val, b: Val) -> Val {
    add(a, neg(b))
}

pub fn mul(a: Val, b: Val) -> Val {
    let (x, y) = (a.float() as f64, b.float() as f64);
    let (ea, eb) = (a.err as f64, b.err as f64);
    let r = a.float() * b.float();
    let e = if ea == 0.0 && eb == 0.0 { 0.0 } else { x.abs() * eb + y.abs() * ea + ea * eb };
    result(r, zero_sign_open(r, e, ea + eb))
}

/// A zero result computed from an approximate operand has an open sign (0 × ±tiny, ±0 + ±0):
/// its bound must not be 0 (exact bits), so it becomes the smallest positive one, which
/// [`result`] turns into one ulp of 0 (both zeros compare equal).
fn zero_sign_open(r: f32, e: f64, operand_errors: f64) -> f64 {
    if r == 0.0 && e == 0.0 && operand_errors > 0.0 { f64::MIN_POSITIVE } else { e }
}

/// Fused multiply-add `a·b + c` with a single rounding.
pub fn fma(a: Val, b: Val, c: Val) -> Val {
    let (x, y) = (a.float() as f64, b.float() as f64);
    let (ea, eb) = (a.err as f64, b.err as f64);
    let r = a.float().mul_add(b.float(), c.float());
    let e = if ea == 0.0 && eb == 0.0 { 0.0 } else { x.abs() * eb + y.abs() * ea + ea * eb };
    result(r, zero_sign_open(r, e + c.err as f64, ea + eb + c.err as f64))
}

/// IEEE minNum with −0 < +0: NaN operands are ignored (NaN only if both are NaN).
pub fn fmin(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { a } else { b };
    }
    if a < b { a } else { b }
}

/// IEEE maxNum with −0 < +0.
pub fn fmax(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { b } else { a };
    }
    if a > b { a } else { b }
}

/// min/max are 1-Lipschitz in each operand: the error is the larger operand error, except
/// that a NaN operand with an error makes the result unconstrained.
pub fn min(a: Val, b: Val) -> Val {
    minmax(a, b, fmin)
}

pub fn max(a: Val, b: Val) -> Val {
    minmax(a, b, fmax)
}

fn minmax(a: Val, b: Val, f: fn(f32, f32) -> f32) -> Val {
    let r = f(a.float(), b.float());
    if a.is_exact() && b.is_exact() {
        return Val::f(r);
    }
    if a.interval().is_none() || b.interval().is_none() {
        return Val::unknown(r.to_bits());
    }
    Val { bits: r.to_bits(), err: a.err.max(b.err) }
}

/// Applies a monotone (or piecewise monotone with a jump, like floor) function to an inexact
/// value by evaluating it at the interval ends: the error is the largest distance from the
/// nominal result. Used for rounding functions and clamps.
pub fn monotone(a: Val, f: impl Fn(f32) -> f32) -> Val {
    let r = f(a.float());
    if a.is_exact() {
        return Val::f(r);
    }
    let Some((lo, hi)) = a.interval() else { return Val::unknown(r.to_bits()) };
    let (flo, fhi) = (f(round_down(lo)), f(round_up(hi)));
    if !(flo.is_finite() && fhi.is_finite() && r.is_finite()) {
        return Val::unknown(r.to_bits());
    }
    let e = ((fhi as f64) - (r as f64)).abs().max(((r as f64) - (flo as f64)).abs());
    Val { bits: r.to_bits(), err: err32(e) }
}

/// The f32 nearest below / above an f64 (for interval ends).
pub fn round_down(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) > x { next_down(f) } else { f }
}

pub fn round_up(x: f64) -> f32 {
    let f = x as f32;
    if (f as f64) < x { next_up(f) } else { f }
}

/// A comparison of two floats whose outcome must be the same everywhere in the operands'
/// intervals to count as exact. Returns (outcome at the nominal values, robust).
pub fn compare(a: Val, b: Val, op: fn(f64, f64) -> bool) -> (bool, bool) {
    let nominal = op(a.float() as f64, b.float() as f64);
    if a.is_exact() && b.is_exact() {
        return (nominal, true);
    }
    let (Some((alo, ahi)), Some((blo, bhi))) = (a.interval(), b.interval()) else {
        return (nominal, false);
    };
    // Ordered comparisons are monotone in each operand: checking the four corners decides
    // whether the outcome can change; equality can only be robustly false (disjoint
    // intervals).
    let corners = [op(alo, blo), op(alo, bhi), op(ahi, blo), op(ahi, bhi)];
    let same = corners.iter().all(|&c| c == nominal);
    let overlap = alo <= bhi && blo <= ahi;
    let eq_like = op(0.0, 0.0) != op(0.0, 1.0) && op(0.0, 0.0) != op(1.0, 0.0);
    (nominal, same && !(eq_like && overlap))
}

/// An integer-valued function of a float (conversions, ARL): exact when the function is
/// constant over the operand's interval, unconstrained otherwise.
pub fn stepwise(a: Val, f: impl Fn(f32) -> u32) -> Val {
    let r = f(a.float());
    if a.is_exact() {
        return Val::exact(r);
    }
    match a.interval() {
        Some((lo, hi)) if f(round_down(lo)) == r && f(round_up(hi)) == r => Val::exact(r),
        _ => Val::unknown(r),
    }
}

/// Whether a float value is certainly non-zero / certainly zero (`None`: can't tell).
pub fn truth(a: Val) -> Option<bool> {
    let x = a.float();
    if a.is_exact() {
        return Some(x != 0.0);
    }
    let (lo, hi) = a.interval()?;
    if lo > 0.0 || hi < 0.0 || x.is_nan() { Some(true) } else { None }
}

/// Float to signed integer, truncating; saturates out-of-range values, NaN gives 0.
pub fn f2i(x: f32) -> u32 {
    x as i32 as u32
}

/// Float to unsigned integer, truncating; saturates (negative values give 0), NaN gives 0.
pub fn f2u(x: f32) -> u32 {
    x as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_products_of_approximate_operands_have_an_open_sign() {
        // An approximate −0 (say a sine of −0 within its bound) times an exact +0.
        let approx_zero = Val { bits: (-0f32).to_bits(), err: 1e-7 };
        let product = mul(Val::f(0.0), approx_zero);
        assert_eq!(product.bits, (-0f32).to_bits());
        assert!(product.err > 0.0, "the sign of the zero is not exact");
        let sum = fma(Val::f(0.0), approx_zero, Val::f(-0.0));
        assert!(sum.err > 0.0);
        // Exact operands keep exact zeros, sign included.
        assert_eq!(mul(Val::f(0.0), Val::f(-0.0)).err, 0.0);
    }

    #[test]
    fn overflow_is_the_rounding_boundary_of_the_largest_value() {
        assert_eq!(OVERFLOW, 2f64.powi(128) - 2f64.powi(103));
        assert_eq!(OVERFLOW as f32, f32::INFINITY, "ties round to even: up, to ∞");
        assert_eq!(next_down_f64(OVERFLOW) as f32, f32::MAX);
        assert!(may_overflow(f32::MAX, ulp(f32::MAX) / 2.0));
        assert!(!may_overflow(f32::MAX, ulp(f32::MAX) / 4.0));
        assert!(may_overflow(-f32::MAX, 1e38));
        // Arithmetic whose inexact result may round to ∞ leaves it open.
        let near_max = Val { bits: (f32::MAX / 2.0).to_bits(), err: 1.0 };
        assert!(add(near_max, near_max).is_unknown());
        assert!(!add(near_max, Val::f(1.0)).is_unknown());
        assert!(approx(f32::MAX, 1e34, 0.0, false).is_unknown());
        assert!(!approx(1e38, 1e34, 0.0, false).is_unknown());
    }

    /// The f64 below `x` (positive, finite).
    fn next_down_f64(x: f64) -> f64 {
        f64::from_bits(x.to_bits() - 1)
    }

    #[test]
    fn float_modifiers_leave_nan_bits_open() {
        let signalling = Val::exact(0x7F80_0001);
        assert!(neg(signalling).is_open_nan() && abs(neg(signalling)).is_open_nan());
        assert_eq!(neg(Val::f(-0.0)), Val::f(0.0), "other values keep exact bits");
        assert_eq!(abs(Val::f(-2.0)), Val::f(2.0));
    }

    #[test]
    fn ulps() {
        assert_eq!(ulp(1.0), 2f64.powi(-23));
        assert_eq!(ulp(0.0), 2f64.powi(-149));
        assert_eq!(ulp(-2.0), 2f64.powi(-22));
    }

    #[test]
    fn exact_stays_exact() {
        let v = add(Val::f(1.0), Val::f(2.0));
        assert_eq!(v, Val::f(3.0));
        let v = mul(Val { bits: 2f32.to_bits(), err: 0.5 }, Val::f(3.0));
        assert_eq!(v.float(), 6.0);
        assert!(v.err >= 1.5);
    }

    #[test]
    fn min_max_zero_and_nan() {
        assert!(fmin(0.0, -0.0).is_sign_negative());
        assert!(fmax(-0.0, 0.0).is_sign_positive());
        assert_eq!(fmin(f32::NAN, 2.0), 2.0);
        assert_eq!(fmax(3.0, f32::NAN), 3.0);
    }

    #[test]
    fn robust_compare() {
        let a = Val { bits: 1f32.to_bits(), err: 0.25 };
        assert_eq!(compare(a, Val::f(2.0), |x, y| x < y), (true, true));
        assert_eq!(compare(a, Val::f(1.1), |x, y| x < y), (true, false));
        assert_eq!(compare(a, Val::f(1.1), |x, y| x == y), (false, false));
        assert_eq!(compare(a, Val::f(3.0), |x, y| x != y), (true, true));
    }

    #[test]
    fn conversions_saturate() {
        assert_eq!(f2i(f32::NAN), 0);
        assert_eq!(f2i(3e9), i32::MAX as u32);
        assert_eq!(f2i(-3e9), i32::MIN as u32);
        assert_eq!(f2u(-1.0), 0);
        assert_eq!(f2u(5e9), u32::MAX);
        assert_eq!(f2i(-2.7), -2i32 as u32);
    }
}
