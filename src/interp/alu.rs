//! The arithmetic, logic and conversion opcodes: one lane's result from one lane's sources.
//!
//! Every definition here is the specification the compiler must match; docs/interpreter.md
//! lists them. Float operations are IEEE-754 binary32 with round-to-nearest-even, denormals
//! preserved, one rounding per step named here.

use super::value::{self as v, Val, approx, ulp};

/// What a result is, for saturation and modulation (floats only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Float,
    Int,
    Double,
}

pub struct Out {
    pub values: [Val; 4],
    pub kind: Kind,
    /// 64-bit results: which channel pairs (xy, zw) are written.
    pub pairs: Option<[bool; 2]>,
}

type V4 = [Val; 4];

fn out(values: V4, kind: Kind) -> Option<Out> {
    Some(Out { values, kind, pairs: None })
}

fn map1(a: V4, f: impl Fn(Val) -> Val) -> V4 {
    a.map(f)
}

fn map2(a: V4, b: V4, f: impl Fn(Val, Val) -> Val) -> V4 {
    std::array::from_fn(|c| f(a[c], b[c]))
}

fn map3(a: V4, b: V4, c3: V4, f: impl Fn(Val, Val, Val) -> Val) -> V4 {
    std::array::from_fn(|c| f(a[c], b[c], c3[c]))
}

fn rep(x: Val) -> V4 {
    [x; 4]
}

fn one() -> Val {
    Val::f(1.0)
}

/// Float comparison giving 1.0 / 0.0; an outcome an approximation could flip is within 1.0.
fn set_f(a: Val, b: Val, op: fn(f64, f64) -> bool) -> Val {
    let (t, robust) = v::compare(a, b, op);
    let bits = if t { 1.0f32 } else { 0.0 }.to_bits();
    Val { bits, err: if robust { 0.0 } else { 1.0 } }
}

/// Float comparison giving ~0 / 0.
fn set_m(a: Val, b: Val, op: fn(f64, f64) -> bool) -> Val {
    let (t, robust) = v::compare(a, b, op);
    Val { bits: if t { !0 } else { 0 }, err: if robust { 0.0 } else { f32::INFINITY } }
}

fn lt(a: f64, b: f64) -> bool {
    a < b
}
fn ge(a: f64, b: f64) -> bool {
    a >= b
}
fn gt(a: f64, b: f64) -> bool {
    a > b
}
fn le(a: f64, b: f64) -> bool {
    a <= b
}
fn eq(a: f64, b: f64) -> bool {
    a == b
}
fn ne(a: f64, b: f64) -> bool {
    a != b
}

/// `cond ? a : b` where the condition may not be robust: the result is then either value.
fn select(cond: bool, robust: bool, a: Val, b: Val) -> Val {
    let (chosen, other) = if cond { (a, b) } else { (b, a) };
    if robust {
        return chosen;
    }
    if chosen.bits == other.bits && chosen.is_exact() && other.is_exact() {
        return chosen;
    }
    let (x, y) = (chosen.float() as f64, other.float() as f64);
    if !(x.is_finite() && y.is_finite()) {
        return Val::unknown(chosen.bits);
    }
    let e = (chosen.err as f64).max((x - y).abs() + other.err as f64);
    // Arms that differ only in the sign of a zero leave that sign open: the bound must not be
    // 0 (exact bits).
    let e = if e == 0.0 { v::ulp(0.0) } else { e };
    Val { bits: chosen.bits, err: v::err32(e) }
}

fn int2(a: Val, b: Val, f: impl Fn(u32, u32) -> u32) -> Val {
    Val::derived(f(a.bits, b.bits), &[a, b])
}

fn int1(a: Val, f: impl Fn(u32) -> u32) -> Val {
    Val::derived(f(a.bits), &[a])
}

fn int3(a: Val, b: Val, c: Val, f: impl Fn(u32, u32, u32) -> u32) -> Val {
    Val::derived(f(a.bits, b.bits, c.bits), &[a, b, c])
}

fn mask(b: bool) -> u32 {
    if b { !0 } else { 0 }
}

// ---------------------------------------------------------------------------------------------
// Approximate operations (docs/interpreter.md: bounds)

/// Error of a monotone function `f` over an operand interval, which must lie inside `domain`
/// (open interval); `None` when it does not.
fn propagate(a: Val, r: f32, f: impl Fn(f64) -> f64, domain: (f64, f64)) -> Option<f64> {
    if a.is_exact() {
        return Some(0.0);
    }
    let (lo, hi) = a.interval()?;
    if !(lo > domain.0 && hi < domain.1) {
        return None;
    }
    let r = r as f64;
    let e = (f(lo) - r).abs().max((f(hi) - r).abs());
    e.is_finite().then_some(e)
}

/// An exact operand that is ±0, ±∞ or NaN: approximate operations give exact special results.
fn special(a: Val) -> bool {
    a.is_exact() && (a.float() == 0.0 || !a.float().is_finite())
}

pub fn rcp(a: Val) -> Val {
    let x = a.float();
    let r = 1.0 / x;
    if special(a) {
        return Val::f(r);
    }
    let e_in = if x > 0.0 {
        propagate(a, r, |t| 1.0 / t, (0.0, f64::INFINITY))
    } else {
        propagate(a, r, |t| 1.0 / t, (f64::NEG_INFINITY, 0.0))
    };
    approx(r, 3.0 * ulp(r), e_in.unwrap_or(f64::INFINITY), false)
}

pub fn rsq(a: Val) -> Val {
    let x = a.float() as f64;
    let r = (1.0 / x.sqrt()) as f32;
    let r = if a.float() == 0.0 { 1.0 / a.float() } else { r };
    if special(a) {
        return Val::f(r);
    }
    let e_in = propagate(a, r, |t| 1.0 / t.sqrt(), (0.0, f64::INFINITY));
    approx(r, 2.0 * ulp(r), e_in.unwrap_or(f64::INFINITY), false)
}

pub fn sqrt(a: Val) -> Val {
    let r = a.float().sqrt();
    if special(a) {
        return Val::f(r);
    }
    let e_in = propagate(a, r, f64::sqrt, (0.0, f64::INFINITY));
    approx(r, 5.0 * ulp(r), e_in.unwrap_or(f64::INFINITY), false)
}

/// `a / b`: the correctly rounded quotient, within 3 ulp; divisors of magnitude outside
/// [2^-126, 2^126] (other than 0 and ∞) make it unconstrained.
pub fn div(a: Val, b: Val) -> Val {
    let (x, y) = (a.float(), b.float());
    let r = x / y;
    let ay = y.abs();
    if ay.is_finite() && ay != 0.0 && !(2f32.powi(-126)..=2f32.powi(126)).contains(&ay) {
        return Val::unknown(r.to_bits());
    }
    let e_in = if a.is_exact() && b.is_exact() {
        0.0
    } else {
        match (a.interval(), b.interval()) {
            (Some((alo, ahi)), Some((blo, bhi))) if blo > 0.0 || bhi < 0.0 => {
                let rr = r as f64;
                [alo / blo, alo / bhi, ahi / blo, ahi / bhi].iter().map(|q| (q - rr).abs()).fold(0.0, f64::max)
            }
            _ => f64::INFINITY,
        }
    };
    approx(r, 3.0 * ulp(r), e_in, false)
}

fn ex2_bound(x: f32, r: f32) -> f64 {
    (3.0 + 2.0 * (x.abs() as f64)) * ulp(r)
}

pub fn ex2(a: Val) -> Val {
    let x = a.float();
    let r = (x as f64).exp2() as f32;
    if special(a) {
        return Val::f(r);
    }
    let e_in = propagate(a, r, f64::exp2, (f64::NEG_INFINITY, f64::INFINITY));
    approx(r, ex2_bound(x, r), e_in.unwrap_or(f64::INFINITY), r.is_infinite() && x.is_finite())
}

fn lg2_bound(x: f32, r: f32) -> f64 {
    if (0.5..=2.0).contains(&x) { 2f64.powi(-21) } else { 3.0 * ulp(r) }
}

pub fn lg2(a: Val) -> Val {
    let x = a.float();
    let r = (x as f64).log2() as f32;
    if special(a) {
        return Val::f(r);
    }
    let e_in = propagate(a, r, f64::log2, (0.0, f64::INFINITY));
    approx(r, lg2_bound(x, r), e_in.unwrap_or(f64::INFINITY), false)
}

/// `x^y` defined as `exp2(y · log2(x))` with the product taken as 0 when y is ±0 or x is 1
/// (docs/lowering.md): so `x^0 = 1` and `1^y = 1` for every x and y (∞ and NaN included),
/// x < 0 gives NaN, `(±0)^y` is +0 for y > 0 and +∞ for y < 0; with the error of the
/// exp2/log2 chain.
pub fn pow(a: Val, b: Val) -> Val {
    let (x, y) = (a.float(), b.float());
    if (y == 0.0 && b.is_exact()) || (x == 1.0 && a.is_exact()) {
        return Val::f(1.0);
    }
    let l = (x as f64).log2();
    let t = (y as f64) * l;
    let r = t.exp2() as f32;
    if special(a) && b.is_exact() || special(b) && a.is_exact() && !(x.is_finite() && x > 0.0) {
        return Val::f(r);
    }
    bounded_pow(a, b, x, y, l, t, r)
}

fn bounded_pow(a: Val, b: Val, x: f32, y: f32, l: f64, t: f64, r: f32) -> Val {
    let t32 = t as f32;
    let bound = if r.is_finite() && r != 0.0 {
        let e_l = lg2_bound(x, l as f32);
        let e_t = (y as f64).abs() * e_l + ulp(t32);
        (r as f64).abs() * (e_t * std::f64::consts::LN_2) * 1.01 + ex2_bound(t32, r)
    } else {
        0.0
    };
    let e_in = if a.is_exact() && b.is_exact() {
        0.0
    } else {
        match (a.interval(), b.interval()) {
            (Some((xlo, xhi)), Some((ylo, yhi))) if xlo > 0.0 => {
                let rr = r as f64;
                let f = |p: f64, q: f64| (q * p.log2()).exp2();
                [f(xlo, ylo), f(xlo, yhi), f(xhi, ylo), f(xhi, yhi)].iter().map(|z| (z - rr).abs()).fold(0.0, f64::max)
            }
            _ => f64::INFINITY,
        }
    };
    approx(r, bound, e_in, r.is_infinite() && t.is_finite())
}

fn trig_bound(x: f32) -> f64 {
    2f64.powi(-11) + (x.abs() as f64) * 2f64.powi(-20)
}

/// Beyond this |x| (2^17·π) the compiled range reduction no longer bounds SIN/COS: any value in
/// [−1, 1] (docs/interpreter.md; `src/lower/transcendental.rs`).
const TRIG_RANGE: f64 = 131072.0 * std::f64::consts::PI;

pub fn sin(a: Val) -> Val {
    trig(a, f64::sin)
}

pub fn cos(a: Val) -> Val {
    trig(a, f64::cos)
}

fn trig(a: Val, f: fn(f64) -> f64) -> Val {
    let x = a.float();
    if x.is_finite() && !a.is_unknown() && (x.abs() as f64) + a.err as f64 >= TRIG_RANGE {
        // 0 ± 1: exactly the interval [−1, 1].
        return Val { bits: 0, err: 1.0 };
    }
    let r = f(x as f64) as f32;
    approx(r, trig_bound(x), if a.is_unknown() { f64::INFINITY } else { a.err as f64 }, false)
}

// ---------------------------------------------------------------------------------------------
// Exact helpers

/// `DPn`: `a.x·b.x`, then fused multiply-adds in component order.
/// The dot-product convention (docs/lowering.md): `fma(a.x, b.x, fma(a.y, b.y, …
/// fma(a[n−1], b[n−1], add)))`, the last component innermost, one rounding per step; `add` is
/// DPH's `b.w`, DP2A's `c.x`, X2D's `s0`, and −0.0 otherwise (so the innermost step is a plain
/// rounded product).
pub fn dot_add(a: &V4, b: &V4, n: usize, add: Val) -> Val {
    let mut acc = add;
    for c in (0..n).rev() {
        acc = v::fma(a[c], b[c], acc);
    }
    acc
}

pub fn dot(a: &V4, b: &V4, n: usize) -> Val {
    dot_add(a, b, n, Val::exact(0x8000_0000))
}

/// Signed division by zero (docs/lowering.md): the unsigned rule (all ones, i.e. −1) with the
/// quotient's sign fix, so −1 for a non-negative dividend and +1 for a negative one.
fn idiv_by_zero(n: i64) -> i64 {
    if n < 0 { 1 } else { -1 }
}

fn floor(x: f32) -> f32 {
    x.floor()
}

/// `x · 2^n`, correctly rounded.
pub fn ldexp32(x: f32, n: i32) -> f32 {
    let n = n.clamp(-400, 400);
    ((x as f64) * 2f64.powi(n)) as f32
}

pub fn ldexp64(x: f64, n: i32) -> f64 {
    let mut n = n.clamp(-2200, 2200);
    let mut x = x;
    while n > 1000 {
        x *= 2f64.powi(1000);
        n -= 1000;
    }
    while n < -1000 {
        x *= 2f64.powi(-1000);
        n += 1000;
    }
    x * 2f64.powi(n)
}

/// frexp: `d = m · 2^e` with `|m|` in [0.5, 1); zero, ∞ and NaN give (d, 0).
pub fn frexp(d: f64) -> (f64, i32) {
    if d == 0.0 || !d.is_finite() {
        return (d, 0);
    }
    let bits = d.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        let (m, e) = frexp(d * 2f64.powi(64));
        return (m, e - 64);
    }
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, exp - 1022)
}

/// `floor(log2 |x|)` computed exactly from the exponent (−∞ for 0, +∞ for ∞, NaN for NaN).
fn exact_log2_floor(x: f32) -> f32 {
    let a = x.abs();
    if a == 0.0 {
        return f32::NEG_INFINITY;
    }
    if !a.is_finite() {
        return a;
    }
    let (_, e) = frexp(a as f64);
    (e - 1) as f32
}

fn f2h(x: f32) -> u32 {
    half::f16::from_f32(x).to_bits() as u32
}

fn h2f(h: u32) -> f32 {
    half::f16::from_bits(h as u16).to_f32()
}

fn unorm(x: f32, scale: f32) -> u32 {
    if x.is_nan() { 0 } else { (x.clamp(0.0, 1.0) * scale).round_ties_even() as u32 }
}

fn snorm(x: f32, scale: f32) -> u32 {
    if x.is_nan() { 0 } else { (x.clamp(-1.0, 1.0) * scale).round_ties_even() as i32 as u32 }
}

/// A conversion from an exact integer to float through an IEEE division by `d`: within one
/// ulp (a hardware multiply by the reciprocal is accepted).
fn unpack_div(i: f32, d: f32, src: Val) -> Val {
    let r = i / d;
    if !src.is_exact() {
        return Val::unknown(r.to_bits());
    }
    Val { bits: r.to_bits(), err: v::err32(ulp(r)) }
}

fn pair(s: V4, p: usize) -> u64 {
    s[2 * p].bits as u64 | (s[2 * p + 1].bits as u64) << 32
}

fn pair_exact(s: &[V4], p: usize) -> bool {
    let exact = |v: Val| v.is_exact() && !v.is_open_nan();
    s.iter().all(|x| exact(x[2 * p]) && exact(x[2 * p + 1]))
}

fn put(r: &mut V4, p: usize, bits: u64, exact: bool) {
    let err = if exact { 0.0 } else { f32::INFINITY };
    r[2 * p] = Val { bits: bits as u32, err };
    r[2 * p + 1] = Val { bits: (bits >> 32) as u32, err };
}

fn dmin(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { a } else { b };
    }
    a.min(b)
}

fn dmax(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return b;
    }
    if b.is_nan() {
        return a;
    }
    if a == b {
        return if a.is_sign_negative() { b } else { a };
    }
    a.max(b)
}

/// A bitfield opcode's result `bits`: unconstrained outside tgsi.rst's defined range
/// (`offset < 0`, `width < 0` or `offset + width > 32`, signed operands; NIR's
/// `*bitfield_extract`/`bitfield_insert`, which Mesa maps these opcodes to, leave it undefined
/// too), else exact when every operand is.
fn bitfield_result(bits: u32, offset: Val, width: Val, others: &[Val]) -> Val {
    let (o, w) = (offset.int() as i64, width.int() as i64);
    if o < 0 || w < 0 || o + w > 32 {
        return Val::unknown(bits);
    }
    let mut deps = others.to_vec();
    deps.extend([offset, width]);
    Val::derived(bits, &deps)
}

/// The bits the interpreter reports (Mesa's tgsi_exec); outside the defined range they are
/// only a placeholder (see [`bitfield_result`]).
fn bfe(value: u32, offset: u32, width: u32, signed: bool) -> u32 {
    let offset = offset & 0x1f;
    if width == 32 && offset == 0 {
        return value;
    }
    let width = width & 0x1f;
    if width == 0 {
        return 0;
    }
    if width + offset < 32 {
        let shifted = value << (32 - width - offset);
        if signed { ((shifted as i32) >> (32 - width)) as u32 } else { shifted >> (32 - width) }
    } else if signed {
        ((value as i32) >> offset) as u32
    } else {
        value >> offset
    }
}

fn bfi(base: u32, insert: u32, offset: u32, width: u32) -> u32 {
    let offset = offset & 0x1f;
    if width == 32 {
        return insert;
    }
    let width = width & 0x1f;
    let mask = ((1u32 << width).wrapping_sub(1)) << offset;
    ((insert << offset) & mask) | (base & !mask)
}

fn imsb(x: u32) -> u32 {
    let y = if (x as i32) < 0 { !x } else { x };
    if y == 0 { !0 } else { 31 - y.leading_zeros() }
}

fn umsb(x: u32) -> u32 {
    if x == 0 { !0 } else { 31 - x.leading_zeros() }
}

fn lsb(x: u32) -> u32 {
    if x == 0 { !0 } else { x.trailing_zeros() }
}

fn sign_f(x: f32) -> f32 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// The result of `op` for one lane, or `None` when `op` is not an ALU opcode.
pub fn compute(op: crate::tgsi::opcodes::Opcode, s: &[V4], wmask: u8) -> Option<Out> {
    use crate::tgsi::opcodes::Opcode as O;
    let a = s.first().copied().unwrap_or([Val::ZERO; 4]);
    let b = s.get(1).copied().unwrap_or([Val::ZERO; 4]);
    let c = s.get(2).copied().unwrap_or([Val::ZERO; 4]);
    let f = Kind::Float;
    let i = Kind::Int;
    match op {
        // ---- float, componentwise
        O::Mov | O::Swz => out(a, f),
        O::Negate => out(map1(a, v::neg), f),
        O::Abs => out(map1(a, v::abs), f),
        O::Add => out(map2(a, b, v::add), f),
        O::Sub => out(map2(a, b, v::sub), f),
        O::Mul => out(map2(a, b, v::mul), f),
        O::Mad | O::Fma => out(map3(a, b, c, v::fma), f),
        O::Lrp => out(map3(a, b, c, |t, y, x| v::fma(t, v::sub(y, x), x)), f),
        O::Min => out(map2(a, b, v::min), f),
        O::Max => out(map2(a, b, v::max), f),
        O::Clamp => out(map3(a, b, c, |x, lo, hi| v::min(v::max(x, lo), hi)), f),
        O::Slt => out(map2(a, b, |x, y| set_f(x, y, lt)), f),
        O::Sge => out(map2(a, b, |x, y| set_f(x, y, ge)), f),
        O::Sgt => out(map2(a, b, |x, y| set_f(x, y, gt)), f),
        O::Sle => out(map2(a, b, |x, y| set_f(x, y, le)), f),
        O::Seq => out(map2(a, b, |x, y| set_f(x, y, eq)), f),
        O::Sne => out(map2(a, b, |x, y| set_f(x, y, ne)), f),
        O::Sfl => out(rep(Val::f(0.0)), f),
        O::Str => out(rep(one()), f),
        O::Fslt => out(map2(a, b, |x, y| set_m(x, y, lt)), i),
        O::Fsge => out(map2(a, b, |x, y| set_m(x, y, ge)), i),
        O::Fseq => out(map2(a, b, |x, y| set_m(x, y, eq)), i),
        O::Fsne => out(map2(a, b, |x, y| set_m(x, y, ne)), i),
        O::Cmp => out(
            map3(a, b, c, |x, p, q| {
                let (t, r) = v::compare(x, Val::f(0.0), lt);
                select(t, r, p, q)
            }),
            f,
        ),
        O::Cnd => out(
            map3(a, b, c, |p, q, x| {
                let (t, r) = v::compare(x, Val::f(0.5), gt);
                select(t, r, p, q)
            }),
            f,
        ),
        O::Cnd0 => out(
            map3(a, b, c, |p, q, x| {
                let (t, r) = v::compare(x, Val::f(0.0), lt);
                select(t, r, q, p)
            }),
            f,
        ),
        O::Flr => out(map1(a, |x| v::monotone(x, floor)), f),
        O::Ceil => out(map1(a, |x| v::monotone(x, f32::ceil)), f),
        O::Trunc => out(map1(a, |x| v::monotone(x, f32::trunc)), f),
        O::Round => out(map1(a, |x| v::monotone(x, f32::round_ties_even)), f),
        O::Frc => out(
            map1(a, |x| {
                let fl = v::monotone(x, floor);
                if x.is_exact() || fl.is_exact() {
                    v::sub(x, Val::f(fl.float()))
                } else {
                    Val::unknown((x.float() - fl.float()).to_bits())
                }
            }),
            f,
        ),
        O::Ssg => out(map1(a, |x| v::monotone(x, sign_f)), f),
        O::Ldexp => out(
            map2(a, b, |x, n| {
                let r = ldexp32(x.float(), n.int());
                if !n.is_exact() { Val::unknown(r.to_bits()) } else { v::monotone(x, |t| ldexp32(t, n.int())) }
            }),
            f,
        ),
        O::Div => out(map2(a, b, div), f),
        // ---- float, replicated scalar
        O::Rcp => out(rep(rcp(a[0])), f),
        O::Rsq => out(rep(rsq(a[0])), f),
        O::Sqrt => out(rep(sqrt(a[0])), f),
        O::Ex2 => out(rep(ex2(a[0])), f),
        O::Lg2 => out(rep(lg2(a[0])), f),
        O::Pow => out(rep(pow(a[0], b[0])), f),
        O::Sin => out(rep(sin(a[0])), f),
        O::Cos => out(rep(cos(a[0])), f),
        O::Dp2 => out(rep(dot(&a, &b, 2)), f),
        O::Dp3 => out(rep(dot(&a, &b, 3)), f),
        O::Dp4 => out(rep(dot(&a, &b, 4)), f),
        O::Dph => out(rep(dot_add(&a, &b, 3, b[3])), f),
        O::Dp2a => out(rep(dot_add(&a, &b, 2, c[0])), f),
        O::Rcc => {
            let r = rcp(a[0]);
            let x = r.float();
            let (lo, hi) = (2f32.powi(-64), 2f32.powi(64));
            let clamped = if x > 0.0 {
                x.clamp(lo, hi)
            } else if x < 0.0 {
                x.clamp(-hi, -lo)
            } else if x == 0.0 {
                // rcp(±∞) = ±0: the magnitude clamps to 2^-64, keeping the sign.
                lo.copysign(x)
            } else {
                x
            };
            // An overflowing reciprocal clamps to the same 2^64 over the operand's whole
            // interval only when that interval keeps one sign and stays within 2^-64 of 0.
            let tiny = 2f64.powi(-64);
            let err = match a[0].interval() {
                _ if a[0].is_unknown() => f32::INFINITY,
                Some((l, h)) if clamped != x && r.is_unknown() && x.is_infinite() => {
                    if (l > 0.0 && h <= tiny) || (h < 0.0 && l >= -tiny) { 0.0 } else { f32::INFINITY }
                }
                _ => r.err,
            };
            out(rep(Val { bits: clamped.to_bits(), err }), f)
        }
        // ---- float, per-channel formulas
        O::Dst => out([one(), v::mul(a[1], b[1]), a[2], b[3]], f),
        O::Lit => {
            let y = v::max(a[0], Val::f(0.0));
            // min(max(w, −128), 128) with maxNum/minNum: a NaN exponent clamps to −128.
            let clampw = |w: Val| v::min(v::max(w, Val::f(-128.0)), Val::f(128.0));
            let (pos, robust) = v::compare(a[0], Val::f(0.0), gt);
            let p = pow(v::max(a[1], Val::f(0.0)), clampw(a[3]));
            let z = select(pos, robust, p, Val::f(0.0));
            out([one(), y, z, one()], f)
        }
        O::Exp => {
            let x = a[0];
            let fl = v::monotone(x, floor);
            let p = ex2(fl);
            let frac = if fl.is_exact() { v::sub(x, Val::f(fl.float())) } else { Val::unknown(0) };
            out([p, frac, ex2(x), one()], f)
        }
        O::Log => {
            let ax = v::abs(a[0]);
            let e = v::stepwise(ax, |t| exact_log2_floor(t).to_bits());
            let m = {
                let t = ax.float();
                let ef = exact_log2_floor(t);
                let r = if ef.is_finite() { ldexp32(t, -(ef as i32)) } else { t / ef.exp2() };
                // An exact scaling by 2^−e: the operand's error scales with it.
                let err = if !e.is_exact() {
                    f32::INFINITY
                } else if ax.is_exact() {
                    0.0
                } else {
                    v::err32(ax.err as f64 * (-(ef as f64)).exp2())
                };
                Val { bits: r.to_bits(), err }
            };
            out([e, m, lg2(ax), one()], f)
        }
        O::Xpd => {
            let cross = |p: usize, q: usize| v::fma(a[p], b[q], v::neg(v::mul(a[q], b[p])));
            out([cross(1, 2), cross(2, 0), cross(0, 1), one()], f)
        }
        O::Scs => out([cos(a[0]), sin(a[0]), Val::f(0.0), one()], f),
        O::Nrm => {
            let r = rsq(dot(&a, &a, 3));
            out([v::mul(a[0], r), v::mul(a[1], r), v::mul(a[2], r), one()], f)
        }
        O::Nrm4 => {
            let r = rsq(dot(&a, &a, 4));
            out(map1(a, |x| v::mul(x, r)), f)
        }
        O::Rfl => {
            let d1 = dot(&a, &b, 3);
            let d0 = dot(&a, &a, 3);
            // (2·d1) / d0 in tgsi.rst's order (the compiler too): 2·d1 may overflow alone.
            let q = div(v::mul(Val::f(2.0), d1), d0);
            let r = |k: usize| v::fma(q, a[k], v::neg(b[k]));
            out([r(0), r(1), r(2), one()], f)
        }
        O::X2d => {
            let x = dot_add(&b, &c, 2, a[0]);
            let y = dot_add(&b, &[c[2], c[3], c[2], c[3]], 2, a[1]);
            out([x, y, x, y], f)
        }
        // ---- pack / unpack
        O::Pk2h => {
            // A half NaN keeps the sign of the float NaN: open NaN bits stay open.
            let half = |x: Val| if x.is_open_nan() { Val::unknown(f2h(x.float())) } else { v::stepwise(x, f2h) };
            let (lo, hi) = (half(a[0]), half(a[1]));
            out(rep(Val::derived(lo.bits | hi.bits << 16, &[lo, hi])), i)
        }
        O::Pk2us => {
            let g = |x: Val| v::stepwise(x, |t| unorm(t, 65535.0));
            let (lo, hi) = (g(a[0]), g(a[1]));
            out(rep(Val::derived(lo.bits | hi.bits << 16, &[lo, hi])), i)
        }
        O::Pk4b | O::Pk4ub => {
            let g = |x: Val| {
                if op == O::Pk4b {
                    v::stepwise(x, |t| snorm(t, 127.0) & 0xff)
                } else {
                    v::stepwise(x, |t| unorm(t, 255.0))
                }
            };
            let parts = a.map(g);
            let bits = parts.iter().enumerate().fold(0u32, |acc, (k, p)| acc | (p.bits & 0xff) << (8 * k));
            out(rep(Val::derived(bits, &parts)), i)
        }
        O::Up2h => {
            let x = a[0];
            let lo = Val::derived(h2f(x.bits & 0xffff).to_bits(), &[x]);
            let hi = Val::derived(h2f(x.bits >> 16).to_bits(), &[x]);
            out([lo, hi, lo, hi], f)
        }
        O::Up2us => {
            let x = a[0];
            let lo = unpack_div((x.bits & 0xffff) as f32, 65535.0, x);
            let hi = unpack_div((x.bits >> 16) as f32, 65535.0, x);
            out([lo, hi, lo, hi], f)
        }
        O::Up4ub => {
            let x = a[0];
            out(std::array::from_fn(|k| unpack_div(((x.bits >> (8 * k)) & 0xff) as f32, 255.0, x)), f)
        }
        O::Up4b => {
            let x = a[0];
            out(
                std::array::from_fn(|k| {
                    let byte = ((x.bits >> (8 * k)) & 0xff) as u8 as i8 as f32;
                    let q = unpack_div(byte, 127.0, x);
                    if q.float() < -1.0 { Val { bits: (-1.0f32).to_bits(), err: q.err } } else { q }
                }),
                f,
            )
        }
        // ---- conversions
        O::Arl => out(map1(a, |x| v::stepwise(x, |t| v::f2i(t.floor()))), i),
        O::Arr => out(map1(a, |x| v::stepwise(x, |t| v::f2i(t.round_ties_even()))), i),
        O::Uarl => out(a, i),
        O::F2i => out(map1(a, |x| v::stepwise(x, v::f2i)), i),
        O::F2u => out(map1(a, |x| v::stepwise(x, v::f2u)), i),
        O::I2f => out(map1(a, |x| Val::derived((x.int() as f32).to_bits(), &[x])), f),
        O::U2f => out(map1(a, |x| Val::derived((x.bits as f32).to_bits(), &[x])), f),
        // ---- integer
        O::Uadd => out(map2(a, b, |x, y| int2(x, y, u32::wrapping_add)), i),
        O::Umul => out(map2(a, b, |x, y| int2(x, y, u32::wrapping_mul)), i),
        O::Umad => out(map3(a, b, c, |x, y, z| int3(x, y, z, |p, q, r| p.wrapping_mul(q).wrapping_add(r))), i),
        O::ImulHi => out(map2(a, b, |x, y| int2(x, y, |p, q| ((p as i32 as i64 * q as i32 as i64) >> 32) as u32)), i),
        O::UmulHi => out(map2(a, b, |x, y| int2(x, y, |p, q| ((p as u64 * q as u64) >> 32) as u32)), i),
        O::Idiv => out(
            map2(a, b, |x, y| {
                int2(x, y, |p, q| {
                    if q == 0 { idiv_by_zero(p as i32 as i64) as u32 } else { (p as i32).wrapping_div(q as i32) as u32 }
                })
            }),
            i,
        ),
        O::Udiv => out(map2(a, b, |x, y| int2(x, y, |p, q| p.checked_div(q).unwrap_or(!0))), i),
        O::Mod => out(
            map2(a, b, |x, y| int2(x, y, |p, q| if q == 0 { !0 } else { (p as i32).wrapping_rem(q as i32) as u32 })),
            i,
        ),
        O::Umod => out(map2(a, b, |x, y| int2(x, y, |p, q| p.checked_rem(q).unwrap_or(!0))), i),
        O::Imax => out(map2(a, b, |x, y| int2(x, y, |p, q| (p as i32).max(q as i32) as u32)), i),
        O::Imin => out(map2(a, b, |x, y| int2(x, y, |p, q| (p as i32).min(q as i32) as u32)), i),
        O::Umax => out(map2(a, b, |x, y| int2(x, y, u32::max)), i),
        O::Umin => out(map2(a, b, |x, y| int2(x, y, u32::min)), i),
        O::Ineg => out(map1(a, |x| int1(x, |p| (p as i32).wrapping_neg() as u32)), i),
        O::Iabs => out(map1(a, |x| int1(x, |p| (p as i32).wrapping_abs() as u32)), i),
        O::Issg => out(map1(a, |x| int1(x, |p| (p as i32).signum() as u32)), i),
        O::Isge => out(map2(a, b, |x, y| int2(x, y, |p, q| mask(p as i32 >= q as i32))), i),
        O::Islt => out(map2(a, b, |x, y| int2(x, y, |p, q| mask((p as i32) < q as i32))), i),
        O::Usge => out(map2(a, b, |x, y| int2(x, y, |p, q| mask(p >= q))), i),
        O::Uslt => out(map2(a, b, |x, y| int2(x, y, |p, q| mask(p < q))), i),
        O::Useq => out(map2(a, b, |x, y| int2(x, y, |p, q| mask(p == q))), i),
        O::Usne => out(map2(a, b, |x, y| int2(x, y, |p, q| mask(p != q))), i),
        O::Ucmp => out(
            map3(a, b, c, |x, p, q| {
                let chosen = if x.bits != 0 { p } else { q };
                if x.is_exact() || (p.bits == q.bits && p.is_exact() && q.is_exact()) {
                    chosen
                } else {
                    Val::unknown(chosen.bits)
                }
            }),
            Kind::Int,
        ),
        O::Sad => out(map3(a, b, c, |x, y, z| int3(x, y, z, |p, q, r| (p.max(q) - p.min(q)).wrapping_add(r))), i),
        // ---- bitwise
        O::Not => out(map1(a, |x| int1(x, |p| !p)), i),
        O::And => out(map2(a, b, |x, y| int2(x, y, |p, q| p & q)), i),
        O::Or => out(map2(a, b, |x, y| int2(x, y, |p, q| p | q)), i),
        O::Xor => out(map2(a, b, |x, y| int2(x, y, |p, q| p ^ q)), i),
        O::Shl => out(map2(a, b, |x, y| int2(x, y, |p, q| p << (q & 31))), i),
        O::Ushr => out(map2(a, b, |x, y| int2(x, y, |p, q| p >> (q & 31))), i),
        O::Ishr | O::Shr => out(map2(a, b, |x, y| int2(x, y, |p, q| ((p as i32) >> (q & 31)) as u32)), i),
        O::Ibfe | O::Ubfe => out(
            std::array::from_fn(|k| {
                let r = bfe(a[k].bits, b[k].bits, c[k].bits, op == O::Ibfe);
                bitfield_result(r, b[k], c[k], &[a[k]])
            }),
            i,
        ),
        O::Bfi => {
            let d = s.get(3).copied().unwrap_or([Val::ZERO; 4]);
            out(
                std::array::from_fn(|k| {
                    let r = bfi(a[k].bits, b[k].bits, c[k].bits, d[k].bits);
                    bitfield_result(r, c[k], d[k], &[a[k], b[k]])
                }),
                i,
            )
        }
        O::Brev => out(map1(a, |x| int1(x, u32::reverse_bits)), i),
        O::Popc => out(map1(a, |x| int1(x, u32::count_ones)), i),
        O::Lsb => out(map1(a, |x| int1(x, lsb)), i),
        O::Imsb => out(map1(a, |x| int1(x, imsb)), i),
        O::Umsb => out(map1(a, |x| int1(x, umsb)), i),
        // ---- 64-bit
        _ => compute64(op, s, wmask),
    }
}

/// Double and 64-bit integer opcodes. Channel pairs: xy is pair 0, zw pair 1.
fn compute64(op: crate::tgsi::opcodes::Opcode, s: &[V4], wmask: u8) -> Option<Out> {
    use crate::tgsi::opcodes::Opcode as O;
    let a = s.first().copied().unwrap_or([Val::ZERO; 4]);
    let b = s.get(1).copied().unwrap_or([Val::ZERO; 4]);
    let mut r = [Val::ZERO; 4];
    let full = [wmask & 3 == 3, wmask & 12 == 12];
    let any = [wmask & 3 != 0, wmask & 12 != 0];
    let d = |x: u64| f64::from_bits(x);
    // 64-bit result of a unary/binary/ternary function per pair.
    let mut pairs_op = |pairs: [bool; 2], f: &dyn Fn(usize) -> u64, kind: Kind| -> Option<Out> {
        for p in 0..2 {
            if pairs[p] {
                put(&mut r, p, f(p), pair_exact(s, p));
            }
        }
        Some(Out { values: r, kind, pairs: Some(pairs) })
    };
    let fd = |x: f64| x.to_bits();
    match op {
        O::Dabs => pairs_op(full, &|p| fd(d(pair(a, p)).abs()), Kind::Double),
        O::Dneg => pairs_op(full, &|p| fd(-d(pair(a, p))), Kind::Double),
        O::Dadd => pairs_op(any, &|p| fd(d(pair(a, p)) + d(pair(b, p))), Kind::Double),
        O::Dmul => pairs_op(any, &|p| fd(d(pair(a, p)) * d(pair(b, p))), Kind::Double),
        O::Ddiv => pairs_op(any, &|p| fd(d(pair(a, p)) / d(pair(b, p))), Kind::Double),
        O::Dmax => pairs_op(any, &|p| fd(dmax(d(pair(a, p)), d(pair(b, p)))), Kind::Double),
        O::Dmin => pairs_op(any, &|p| fd(dmin(d(pair(a, p)), d(pair(b, p)))), Kind::Double),
        O::Dmad => {
            let c = s.get(2).copied().unwrap_or([Val::ZERO; 4]);
            pairs_op(full, &|p| fd(d(pair(a, p)) * d(pair(b, p)) + d(pair(c, p))), Kind::Double)
        }
        O::Dfma => {
            let c = s.get(2).copied().unwrap_or([Val::ZERO; 4]);
            pairs_op(full, &|p| fd(d(pair(a, p)).mul_add(d(pair(b, p)), d(pair(c, p)))), Kind::Double)
        }
        O::Drcp => pairs_op(full, &|p| fd(1.0 / d(pair(a, p))), Kind::Double),
        O::Dsqrt => pairs_op(full, &|p| fd(d(pair(a, p)).sqrt()), Kind::Double),
        O::Drsq => pairs_op(full, &|p| fd(1.0 / d(pair(a, p)).sqrt()), Kind::Double),
        O::Dfrac => pairs_op(full, &|p| fd(d(pair(a, p)) - d(pair(a, p)).floor()), Kind::Double),
        O::Dtrunc => pairs_op(full, &|p| fd(d(pair(a, p)).trunc()), Kind::Double),
        O::Dceil => pairs_op(full, &|p| fd(d(pair(a, p)).ceil()), Kind::Double),
        O::Dflr => pairs_op(full, &|p| fd(d(pair(a, p)).floor()), Kind::Double),
        O::Dround => pairs_op(full, &|p| fd(d(pair(a, p)).round_ties_even()), Kind::Double),
        O::Dssg => pairs_op(
            full,
            &|p| {
                let x = d(pair(a, p));
                fd(if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                })
            },
            Kind::Double,
        ),
        O::Dldexp => {
            for p in 0..2 {
                if any[p] {
                    let n = b[2 * p];
                    let exact = pair_exact(&[a], p) && n.is_exact();
                    put(&mut r, p, fd(ldexp64(d(pair(a, p)), n.int())), exact);
                }
            }
            Some(Out { values: r, kind: Kind::Double, pairs: Some(any) })
        }
        O::Dslt
        | O::Dsge
        | O::Dseq
        | O::Dsne
        | O::U64seq
        | O::U64sne
        | O::I64slt
        | O::U64slt
        | O::I64sge
        | O::U64sge => {
            let mut vals = [Val::unknown(0); 4];
            for p in 0..2 {
                if !any[p] {
                    continue;
                }
                let (x, y) = (pair(a, p), pair(b, p));
                let t = match op {
                    O::Dslt => d(x) < d(y),
                    O::Dsge => d(x) >= d(y),
                    O::Dseq => d(x) == d(y),
                    O::Dsne => d(x) != d(y),
                    O::U64seq => x == y,
                    O::U64sne => x != y,
                    O::I64slt => (x as i64) < y as i64,
                    O::U64slt => x < y,
                    O::I64sge => x as i64 >= y as i64,
                    _ => x >= y,
                };
                let ch = if wmask & (1 << (2 * p)) != 0 { 2 * p } else { 2 * p + 1 };
                vals[ch] = Val { bits: mask(t), err: if pair_exact(&[a, b], p) { 0.0 } else { f32::INFINITY } };
            }
            Some(Out { values: vals, kind: Kind::Int, pairs: None })
        }
        // 64-bit to 32-bit conversions: the k-th enabled channel receives pair k.
        O::D2f | O::D2i | O::D2u | O::U642f | O::I642f => {
            let mut vals = [Val::unknown(0); 4];
            let mut k = 0;
            for ch in 0..4 {
                if wmask & (1 << ch) == 0 || k >= 2 {
                    continue;
                }
                let x = pair(a, k);
                let bits = match op {
                    O::D2f => (d(x) as f32).to_bits(),
                    O::D2i => d(x) as i32 as u32,
                    O::D2u => d(x) as u32,
                    O::U642f => (x as f32).to_bits(),
                    _ => (x as i64 as f32).to_bits(),
                };
                vals[ch] = Val { bits, err: if pair_exact(&[a], k) { 0.0 } else { f32::INFINITY } };
                k += 1;
            }
            let kind = if matches!(op, O::D2f | O::U642f | O::I642f) { Kind::Float } else { Kind::Int };
            Some(Out { values: vals, kind, pairs: None })
        }
        // 32-bit to 64-bit conversions: pair p from source channel p.
        O::F2d | O::I2d | O::U2d | O::F2u64 | O::F2i64 | O::U2i64 | O::I2i64 => {
            for p in 0..2 {
                if !full[p] {
                    continue;
                }
                let x = a[p];
                let bits = match op {
                    O::F2d => fd(x.float() as f64),
                    O::I2d => fd(x.int() as f64),
                    O::U2d => fd(x.bits as f64),
                    O::F2u64 => x.float() as u64,
                    O::F2i64 => x.float() as i64 as u64,
                    O::U2i64 => x.bits as u64,
                    _ => x.int() as i64 as u64,
                };
                let exact = x.is_exact()
                    || (matches!(op, O::F2u64 | O::F2i64) && v::stepwise(x, |t| (t as i64 as u64) as u32).is_exact());
                put(&mut r, p, bits, exact);
            }
            let kind = if matches!(op, O::F2d | O::I2d | O::U2d) { Kind::Double } else { Kind::Int };
            Some(Out { values: r, kind, pairs: Some(full) })
        }
        O::D2u64 => pairs_op(full, &|p| d(pair(a, p)) as u64, Kind::Int),
        O::D2i64 => pairs_op(full, &|p| d(pair(a, p)) as i64 as u64, Kind::Int),
        O::U642d => pairs_op(full, &|p| fd(pair(a, p) as f64), Kind::Double),
        O::I642d => pairs_op(full, &|p| fd(pair(a, p) as i64 as f64), Kind::Double),
        O::I64abs => pairs_op(full, &|p| (pair(a, p) as i64).wrapping_abs() as u64, Kind::Int),
        O::I64neg => pairs_op(full, &|p| (pair(a, p) as i64).wrapping_neg() as u64, Kind::Int),
        O::I64ssg => pairs_op(full, &|p| (pair(a, p) as i64).signum() as u64, Kind::Int),
        O::U64add => pairs_op(any, &|p| pair(a, p).wrapping_add(pair(b, p)), Kind::Int),
        O::U64mul => pairs_op(any, &|p| pair(a, p).wrapping_mul(pair(b, p)), Kind::Int),
        O::U64min => pairs_op(any, &|p| pair(a, p).min(pair(b, p)), Kind::Int),
        O::U64max => pairs_op(any, &|p| pair(a, p).max(pair(b, p)), Kind::Int),
        O::I64min => pairs_op(any, &|p| (pair(a, p) as i64).min(pair(b, p) as i64) as u64, Kind::Int),
        O::I64max => pairs_op(any, &|p| (pair(a, p) as i64).max(pair(b, p) as i64) as u64, Kind::Int),
        O::U64div => pairs_op(any, &|p| pair(a, p).checked_div(pair(b, p)).unwrap_or(!0), Kind::Int),
        O::U64mod => pairs_op(any, &|p| pair(a, p).checked_rem(pair(b, p)).unwrap_or(!0), Kind::Int),
        O::I64div => pairs_op(
            any,
            &|p| {
                let (x, y) = (pair(a, p) as i64, pair(b, p) as i64);
                if y == 0 { idiv_by_zero(x) as u64 } else { x.wrapping_div(y) as u64 }
            },
            Kind::Int,
        ),
        O::I64mod => pairs_op(
            any,
            &|p| {
                let (x, y) = (pair(a, p) as i64, pair(b, p) as i64);
                if y == 0 { !0 } else { x.wrapping_rem(y) as u64 }
            },
            Kind::Int,
        ),
        O::U64shl | O::U64shr | O::I64shr => {
            for p in 0..2 {
                if !any[p] {
                    continue;
                }
                // The count of pair p is source 1's channel p (x for xy, y for zw: tgsi.rst).
                let n = b[p];
                let x = pair(a, p);
                let k = n.bits & 0x3f;
                let bits = match op {
                    O::U64shl => x << k,
                    O::U64shr => x >> k,
                    _ => ((x as i64) >> k) as u64,
                };
                put(&mut r, p, bits, pair_exact(&[a], p) && n.is_exact());
            }
            Some(Out { values: r, kind: Kind::Int, pairs: Some(any) })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An open choice between +0 and −0 is not exact (tests/diff_cases/select_between_signed_zeros).
    #[test]
    fn open_selects_between_signed_zeros_leave_the_sign_open() {
        let chosen = select(false, false, Val::f(0.0), Val::f(-0.0));
        assert_eq!(chosen.bits, (-0f32).to_bits());
        assert!(chosen.err > 0.0 && chosen.err.is_finite());
        assert_eq!(select(false, true, Val::f(0.0), Val::f(-0.0)), Val::f(-0.0), "a robust choice is exact");
        assert_eq!(select(true, false, Val::f(1.0), Val::f(1.0)), Val::f(1.0), "equal arms are exact");
    }

    #[test]
    fn bitfields_follow_tgsi_exec() {
        assert_eq!(bfe(0xabcd_1234, 8, 8, false), 0x12);
        assert_eq!(bfe(0x0000_8000, 12, 4, true), 0xffff_fff8);
        assert_eq!(bfe(0x1234_5678, 0, 32, false), 0x1234_5678);
        assert_eq!(bfe(0xf000_0000, 28, 8, true), 0xffff_ffff, "width+offset ≥ 32: plain shift");
        assert_eq!(bfi(0xffff_ffff, 0, 4, 8), 0xffff_f00f);
        assert_eq!(bfi(1, 7, 0, 32), 7);
        assert_eq!(imsb(0), !0);
        assert_eq!(imsb(!0), !0);
        assert_eq!(imsb(0xffff_fffe), 0);
        assert_eq!(umsb(1), 0);
        assert_eq!(lsb(8), 3);
    }

    #[test]
    fn frexp_cases() {
        assert_eq!(frexp(8.0), (0.5, 4));
        assert_eq!(frexp(-3.0), (-0.75, 2));
        assert_eq!(frexp(0.0), (0.0, 0));
        let (m, e) = frexp(f64::from_bits(1));
        assert_eq!((m, e), (0.5, -1073));
    }

    #[test]
    fn log_exponent_is_exact() {
        assert_eq!(exact_log2_floor(0.999_999_94), -1.0);
        assert_eq!(exact_log2_floor(1.0), 0.0);
        assert_eq!(exact_log2_floor(f32::from_bits(1)), -149.0);
    }
}
