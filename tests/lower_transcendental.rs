//! The transcendental lowering family (src/lower/transcendental.rs).
//!
//! * Precise output: every `tests/lower/transcendental/NAME.tgsi` is lowered and its IR text
//!   compared with `NAME.ir` (`BLESS=1 cargo test --test lower_transcendental` rewrites them;
//!   review the diff by hand). Every lowered shader also passes `ir::verify` and a check that
//!   source modifiers only sit on sources that have them.
//! * Accuracy: a small evaluator runs the lowered IR in f32 with the SFU contract of the module
//!   documentation (correctly rounded FRCP/FRSQ, FEXP of the 8.24 operand, FLOGD/FADD_LSCALE/
//!   FREXP* of the [0.75, 1.5) log reduction, sin/cos tables of kπ/32, all from f64
//!   references) and measures the error of each sequence against f64 references over many
//!   inputs. The bounds asserted here are the ones documented in the module; the measured
//!   maxima are printed (`--nocapture`).

use pretty_assertions::assert_eq;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tgsi2va::emit::meta::FauSource;
use tgsi2va::ir::{InstKind, Operand, Shader, Src, Value};
use tgsi2va::valhall::Opcode as Op;
use tgsi2va::valhall::tables::{Clamp, Condition, Mux, RoundMode};

// ---- Lowering helpers -----------------------------------------------------------------------

fn lower_text(text: &str) -> tgsi2va::lower::Lowered {
    let program = tgsi2va::tgsi::parse(text).unwrap_or_else(|e| panic!("parse: {e:?}\n{text}"));
    let lowered = tgsi2va::lower::lower(&program, &Default::default())
        .unwrap_or_else(|d| panic!("lowering failed: {:?}\n{text}", d.0));
    if let Err(errors) = tgsi2va::ir::verify::verify(&lowered.shader) {
        panic!("invalid IR: {errors:#?}\n{}", tgsi2va::ir::text::print(&lowered.shader));
    }
    check_modifiers(&lowered.shader);
    lowered
}

/// `.neg`/`.abs` only on sources with those fields, no other source modifiers.
fn check_modifiers(shader: &Shader) {
    for inst in &shader.insts {
        if inst.dead || inst.kind != InstKind::Machine {
            continue;
        }
        let info = inst.mach.info();
        for (k, (src, si)) in inst.srcs.iter().zip(info.srcs).enumerate() {
            assert!(!src.neg || si.neg.is_some(), "{}: source {k} cannot be negated", info.name);
            assert!(!src.abs || si.abs.is_some(), "{}: source {k} has no absolute value", info.name);
            assert!(!src.not && src.swizzle == 0 && src.widen == 0 && src.lane == 0, "{}: source {k}", info.name);
        }
    }
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lower/transcendental")
}

/// Lowers `NAME.tgsi` and compares the IR text with `NAME.ir`.
fn golden(name: &str) {
    let dir = data_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.tgsi"))).expect("shader file");
    let got = tgsi2va::ir::text::print(&lower_text(&text).shader);
    let path = dir.join(format!("{name}.ir"));
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
        return;
    }
    let want =
        std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{} missing (run with BLESS=1)", path.display()));
    assert_eq!(want, got, "{name}: lowered IR differs from {}", path.display());
}

macro_rules! golden_tests {
    ($($name:ident),* $(,)?) => {
        /// One precise-output test per data file.
        mod ir_text {
            $(#[test] fn $name() { super::golden(stringify!($name)); })*
        }
        const GOLDEN: &[&str] = &[$(stringify!($name)),*];
    };
}

golden_tests!(
    rcp,
    rsq,
    sqrt,
    div,
    ex2,
    lg2,
    pow,
    exp,
    log,
    sin,
    cos,
    scs,
    lit,
    dst,
    nrm,
    nrm4,
    rcc,
    rfl,
    ldexp,
    sat_and_mask,
    modifiers,
    immediates,
    aliases,
    partial_masks,
);

#[test]
fn every_data_file_is_tested() {
    for entry in std::fs::read_dir(data_dir()).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        assert!(GOLDEN.contains(&stem.as_str()), "{} is not listed in golden_tests!", path.display());
    }
}

// ---- The SFU contract in f64 ----------------------------------------------------------------

mod sfu {
    /// `v = M·2^e` with M an odd integer (finite non-zero f64).
    pub fn decompose(v: f64) -> (u64, i32) {
        let bits = v.abs().to_bits();
        let exp = (bits >> 52) as i32;
        let frac = bits & ((1 << 52) - 1);
        let (m, e) = if exp == 0 { (frac, -1074) } else { (frac | 1 << 52, exp - 1075) };
        let z = m.trailing_zeros();
        (m >> z, e + z as i32)
    }

    /// Orders `x^(-1/2)` against `mid` (x, mid > 0 finite; never equal for the midpoints used).
    fn rsq_above(x: f32, mid: f64) -> bool {
        // x^(-1/2) > mid  ⟺  mid²·x < 1
        let (m, p) = decompose(mid);
        let (xm, q) = decompose(f64::from(x));
        let lhs = u128::from(m) * u128::from(m) * u128::from(xm);
        let s = -(2 * p + q);
        if s < 0 {
            return false;
        }
        if s >= 127 {
            return true;
        }
        lhs < 1u128 << s
    }

    /// Correctly rounded `1/√x`.
    pub fn rsq(x: f32) -> f32 {
        if x.is_nan() || x < 0.0 {
            return f32::NAN;
        }
        if x == 0.0 {
            return 1.0 / x;
        }
        if x == f32::INFINITY {
            return 0.0;
        }
        let r0 = (1.0 / f64::from(x).sqrt()) as f32;
        let up = f32::from_bits(r0.to_bits() + 1);
        let down = f32::from_bits(r0.to_bits() - 1);
        if rsq_above(x, (f64::from(r0) + f64::from(up)) / 2.0) {
            up
        } else if !rsq_above(x, (f64::from(down) + f64::from(r0)) / 2.0) {
            down
        } else {
            r0
        }
    }

    /// FEXP: `2^(fixed/2^24)` correctly rounded; the float operand decides NaN and saturation.
    pub fn fexp(fixed: i32, f: f32) -> f32 {
        if f.is_nan() {
            return f32::NAN;
        }
        if f >= 2f32.powi(31) {
            return f32::INFINITY;
        }
        if f < -(2f32.powi(31)) {
            return 0.0;
        }
        (f64::from(fixed) / 2f64.powi(24)).exp2() as f32
    }

    /// `|x| = m·2^e`, m in [0.5, 1) (frexp) or [0.75, 1.5) (log reduction); `None` for 0, ∞, NaN.
    pub fn frexp(x: f32, log: bool) -> Option<(f64, i32)> {
        if x == 0.0 || !x.is_finite() {
            return None;
        }
        let (m, e) = decompose(f64::from(x));
        let bits = 64 - m.leading_zeros() as i32;
        let (mut m, mut e) = (m as f64 / 2f64.powi(bits), e + bits);
        if log && m < 0.75 {
            m *= 2.0;
            e -= 1;
        }
        Some((m, e))
    }

    pub fn frexpe(x: f32, log: bool) -> i32 {
        frexp(x, log).map_or(0, |(_, e)| e)
    }

    pub fn frexpm(x: f32, log: bool) -> f32 {
        frexp(x, log).map_or(x, |(m, _)| (m as f32).copysign(x))
    }

    /// FADD_LSCALE: `a + b·2^-E`, E the log-reduction exponent of b, one rounding.
    pub fn fadd_lscale(a: f32, b: f32) -> f32 {
        match frexp(b, true) {
            Some((m, _)) => (f64::from(a) + m.copysign(f64::from(b))) as f32,
            None => a + b,
        }
    }

    /// FLOGD: `log2(m)/(m − 1)` of the log reduction, correctly rounded.
    pub fn flogd(x: f32) -> f32 {
        if x.is_nan() || x < 0.0 {
            return f32::NAN;
        }
        if x == 0.0 || x == f32::INFINITY {
            return f32::INFINITY;
        }
        let (m, _) = frexp(x, true).unwrap();
        if m == 1.0 { std::f64::consts::LOG2_E as f32 } else { (m.log2() / (m - 1.0)) as f32 }
    }

    /// (sin, cos) of kπ/32, correctly rounded, exact symmetries.
    pub fn sincos_table(k: u32) -> (f32, f32) {
        let k = k & 63;
        let r = f64::from(k % 16) * std::f64::consts::PI / 32.0;
        let (s, c) = if k % 16 == 0 { (0.0f32, 1.0f32) } else { (r.sin() as f32, r.cos() as f32) };
        match k / 16 {
            0 => (s, c),
            1 => (c, -s),
            2 => (-s, -c),
            _ => (-c, s),
        }
    }
}

// ---- An evaluator for straight-line lowered IR ------------------------------------------------

/// A lowered single-instruction fragment shader: inputs are `CONST[0][0]`, outputs the colour
/// vector given to BLEND.
struct Program {
    shader: Shader,
    /// The input component of each push word.
    uniforms: HashMap<u8, usize>,
    /// The instructions to evaluate, in order: copies and supported machine instructions.
    code: Vec<tgsi2va::ir::InstId>,
    outputs: Vec<Value>,
}

fn float(bits: u32) -> f32 {
    f32::from_bits(bits)
}

fn max_num(a: f32, b: f32) -> f32 {
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

fn min_num(a: f32, b: f32) -> f32 {
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

fn clamp(x: f32, c: Option<Clamp>) -> f32 {
    match c.unwrap_or(Clamp::None) {
        Clamp::None => x,
        Clamp::Clamp0Inf => max_num(x, 0.0),
        Clamp::ClampM1_1 => min_num(max_num(x, -1.0), 1.0),
        Clamp::Clamp0_1 => min_num(max_num(x, 0.0), 1.0),
    }
}

fn ldexp(x: f32, n: i32) -> f32 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    (f64::from(x) * 2f64.powi(n.clamp(-400, 400))) as f32
}

fn round_mode(x: f64, mode: RoundMode) -> f64 {
    match mode {
        RoundMode::Rte => x.round_ties_even(),
        RoundMode::Rtp => x.ceil(),
        RoundMode::Rtn => x.floor(),
        RoundMode::Rtz => x.trunc(),
    }
}

fn f32_to_s32(x: f32, mode: RoundMode) -> i32 {
    if x.is_nan() {
        return 0;
    }
    round_mode(f64::from(x), mode).clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
}

fn condition(cond: Condition, a: f32, b: f32) -> bool {
    match cond {
        Condition::Eq => a == b,
        Condition::Gt => a > b,
        Condition::Ge => a >= b,
        Condition::Ne => a != b,
        Condition::Lt => a < b,
        Condition::Le => a <= b,
        Condition::Gtlt => !a.is_nan() && !b.is_nan() && a != b,
        Condition::Total => unimplemented!(),
    }
}

impl Program {
    fn new(text: &str) -> Program {
        let lowered = lower_text(text);
        let mut uniforms = HashMap::new();
        for w in &lowered.meta.fau {
            if let FauSource::Constant { buffer: 0, index: 0, component } = w.source {
                uniforms.insert(w.word as u8, component as usize);
            }
        }
        let shader = lowered.shader;
        let blend = shader
            .insts
            .iter()
            .find(|i| !i.dead && i.opcode().is_some_and(|o| o.info().name.starts_with("BLEND")))
            .expect("BLEND");
        let outputs = shader.get(blend.staging[0]).to_vec();
        let code = (0..shader.blocks.len())
            .flat_map(|b| shader.block_insts(tgsi2va::ir::Block(b as u32)))
            .filter(|&id| {
                let inst = shader.inst(id);
                inst.kind == InstKind::Copy || inst.opcode().is_some_and(|o| SUPPORTED.contains(&o))
            })
            .collect();
        Program { shader, uniforms, code, outputs }
    }

    /// The program of `OPCODE OUT[0], CONST[0][0]…` with the given source list.
    fn op(line: &str) -> Program {
        Program::new(&format!("FRAG\nDCL OUT[0], COLOR\nDCL CONST[0][0]\n  0: {line}\n  1: END\n"))
    }

    fn src(&self, vals: &[Option<u32>], s: &Src, input: &[f32; 4]) -> u32 {
        let mut b = match s.operand {
            Operand::Value(v) => vals[v.index()].unwrap_or_else(|| panic!("{v} not computed")),
            Operand::Const(c) => c,
            Operand::Uniform(w) => input[self.uniforms[&w]].to_bits(),
            other => panic!("unexpected operand {other:?}"),
        };
        if s.abs {
            b &= 0x7FFF_FFFF;
        }
        if s.neg {
            b ^= 0x8000_0000;
        }
        b
    }

    fn run(&self, input: [f32; 4]) -> [f32; 4] {
        let sh = &self.shader;
        let mut vals: Vec<Option<u32>> = vec![None; sh.values.len()];
        for &id in &self.code {
            let inst = sh.inst(id);
            let dest = sh.get(inst.dests)[0];
            let result = match inst.kind {
                InstKind::Copy => Some(self.src(&vals, &inst.srcs[0], &input)),
                _ => self.machine(inst, &vals, &input),
            };
            vals[dest.index()] = result;
        }
        let mut out = [0.0; 4];
        for (o, v) in out.iter_mut().zip(&self.outputs) {
            *o = float(vals[v.index()].expect("output computed"));
        }
        out
    }

    fn machine(&self, inst: &tgsi2va::ir::Inst, vals: &[Option<u32>], input: &[f32; 4]) -> Option<u32> {
        let m = &inst.mach;
        let n = m.info().srcs.len();
        let s: Vec<u32> = inst.srcs[..n].iter().map(|x| self.src(vals, x, input)).collect();
        let f = |k: usize| float(s[k]);
        let c = m.clamp();
        let mode = m.round_mode().unwrap_or(RoundMode::Rte);
        let r = match m.opcode {
            Op::FADD_F32 => clamp(f(0) + f(1), c),
            Op::FMA_F32 => clamp(f(0).mul_add(f(1), f(2)), c),
            Op::FMIN_F32 => clamp(min_num(f(0), f(1)), c),
            Op::FMAX_F32 => clamp(max_num(f(0), f(1)), c),
            Op::FROUND_F32 => {
                let x = f(0);
                if x.is_finite() { (round_mode(f64::from(x), mode) as f32).copysign(x) } else { x }
            }
            Op::FRCP_F32 => 1.0 / f(0),
            Op::FRSQ_F32 => sfu::rsq(f(0)),
            Op::FMA_RSCALE_F32 => clamp(ldexp(f(0).mul_add(f(1), f(2)), s[3] as i32), c),
            Op::FMA_RSCALE_N_F32 => {
                let p = if f(0) == 0.0 || f(1) == 0.0 { 0.0 + f(2) } else { f(0).mul_add(f(1), f(2)) };
                clamp(ldexp(p, s[3] as i32), c)
            }
            Op::F32_TO_S32 => return Some(f32_to_s32(f(0), mode) as u32),
            Op::S32_TO_F32 => s[0] as i32 as f32,
            Op::FEXP_F32 => clamp(sfu::fexp(s[0] as i32, f(1)), c),
            Op::FREXPE_F32 => return Some(sfu::frexpe(f(0), m.flag("log") == Some(true)) as u32),
            Op::FREXPM_F32 => sfu::frexpm(f(0), m.flag("log") == Some(true)),
            Op::FADD_LSCALE_F32 => clamp(sfu::fadd_lscale(f(0), f(1)), c),
            Op::FLOGD_F32 => sfu::flogd(f(0)),
            Op::FSIN_TABLE_U6 => sfu::sincos_table(s[0]).0,
            Op::FCOS_TABLE_U6 => sfu::sincos_table(s[0]).1,
            Op::CSEL_F32 => {
                let cond = m.condition().unwrap();
                return Some(if condition(cond, f(0), f(1)) { s[2] } else { s[3] });
            }
            Op::MUX_I32 => {
                assert_eq!(m.get::<Mux>("mux"), Some(Mux::Bit));
                return Some((s[0] & s[2]) | (s[1] & !s[2]));
            }
            Op::LDEXP_F32 => ldexp(f(0), s[1] as i32),
            other => unreachable!("{other:?} is not in SUPPORTED"),
        };
        Some(r.to_bits())
    }
}

/// The machine instructions [`Program::machine`] evaluates.
const SUPPORTED: &[Op] = &[
    Op::FADD_F32,
    Op::FMA_F32,
    Op::FMIN_F32,
    Op::FMAX_F32,
    Op::FROUND_F32,
    Op::FRCP_F32,
    Op::FRSQ_F32,
    Op::FMA_RSCALE_F32,
    Op::FMA_RSCALE_N_F32,
    Op::F32_TO_S32,
    Op::S32_TO_F32,
    Op::FEXP_F32,
    Op::FREXPE_F32,
    Op::FREXPM_F32,
    Op::FADD_LSCALE_F32,
    Op::FLOGD_F32,
    Op::FSIN_TABLE_U6,
    Op::FCOS_TABLE_U6,
    Op::CSEL_F32,
    Op::MUX_I32,
    Op::LDEXP_F32,
];

// ---- Error measurement ------------------------------------------------------------------------

/// The spacing of f32 values at the magnitude of `v` (subnormal spacing below 2^-126).
fn ulp(v: f64) -> f64 {
    let a = v.abs();
    if a < 2f64.powi(-126) {
        return 2f64.powi(-149);
    }
    2f64.powi(a.log2().floor() as i32 - 23)
}

/// `|got − want|` in ulps of `want`; 0 when both are the same infinity; ∞ for NaN or a wrong
/// infinity.
fn ulp_error(got: f32, want: f64) -> f64 {
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() && want.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if want.is_infinite() || got.is_infinite() {
        return if f64::from(got) == want { 0.0 } else { f64::INFINITY };
    }
    (f64::from(got) - want).abs() / ulp(want)
}

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// Float draws from the shared generator.
trait FloatDraws {
    /// A float with a uniformly chosen exponent in `[lo, hi)` and random significand bits.
    fn float_exp(&mut self, lo: i32, hi: i32) -> f32;
}

impl FloatDraws for Rng {
    fn float_exp(&mut self, lo: i32, hi: i32) -> f32 {
        let e = lo + (self.next() % (hi - lo) as u64) as i32;
        let m = 1.0 + (self.next() & 0x7F_FFFF) as f64 / 2f64.powi(23);
        (m * 2f64.powi(e)) as f32
    }
}

/// The largest value of `err(x)` over `inputs` and where it occurs.
fn worst(inputs: impl IntoIterator<Item = f32>, mut err: impl FnMut(f32) -> f64) -> (f64, f32) {
    let mut w = (0.0, 0.0);
    for x in inputs {
        let e = err(x);
        assert!(!e.is_nan(), "error at {x:e} ({:#010x}) is NaN", x.to_bits());
        if e > w.0 {
            w = (e, x);
        }
    }
    w
}

/// The step of the dense sweeps: every float with `TRANS_EXHAUSTIVE=1`, else every 7th.
fn dense_stride() -> u32 {
    if exhaustive() { 1 } else { 7 }
}

fn exhaustive() -> bool {
    std::env::var_os("TRANS_EXHAUSTIVE").is_some()
}

/// `n` random samples, ten times as many with `TRANS_EXHAUSTIVE=1`.
fn samples(n: usize) -> std::ops::Range<usize> {
    0..if exhaustive() { 10 * n } else { n }
}

/// Every f32 in `[lo, hi)` (both positive), stepping by `stride` bit patterns.
fn every(lo: f32, hi: f32, stride: u32) -> impl Iterator<Item = f32> {
    (lo.to_bits()..hi.to_bits()).step_by(stride as usize).map(f32::from_bits)
}

fn same(got: f32, want: f32) -> bool {
    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan())
}

// Documented bounds (src/lower/transcendental.rs).
const SQRT_ULP: f64 = 1.5;
const DIV_ULP: f64 = 1.5;
const EX2_ULP: f64 = 0.85;
const LG2_ULP: f64 = 1.5;
/// POW: `POW_ULP_BASE + POW_ULP_PER_UNIT·|log2 result|` ulps.
const POW_ULP_BASE: f64 = 0.85;
const POW_ULP_PER_UNIT: f64 = 2.78;
/// SIN, COS: `TRIG_ABS + TRIG_ABS_PER_UNIT·|x|` absolute, for |x| < TRIG_RANGE.
const TRIG_ABS: f64 = 1.98e-5;
const TRIG_ABS_PER_UNIT: f64 = 2.8e-8;
const TRIG_RANGE: f32 = 411_774.0;

// ---- Accuracy and special cases, per opcode ---------------------------------------------------

#[test]
fn contract_helpers() {
    // The exact reciprocal square root against easy cases and a double-rounding-prone one.
    assert_eq!(sfu::rsq(4.0), 0.5);
    assert_eq!(sfu::rsq(0.25), 2.0);
    for x in [2.0f32, 3.0, 1e-40, 7.5e37, 0.3] {
        let r = sfu::rsq(x);
        let t = 1.0 / f64::from(x).sqrt();
        assert!((f64::from(r) - t).abs() <= ulp(t) / 2.0 * (1.0 + 1e-9), "{x}");
    }
    assert_eq!(sfu::frexpe(1.5, true), 1);
    assert_eq!(sfu::frexpm(1.5, true), 0.75);
    assert_eq!(sfu::frexpe(1.4999999, true), 0);
    assert_eq!(sfu::frexpm(-6.0, false), -0.75);
    assert_eq!(sfu::frexpe(-6.0, false), 3);
    assert_eq!(sfu::frexpe(f32::from_bits(1), false), -148);
    assert_eq!(sfu::fadd_lscale(-1.0, 3.0), -0.25);
    assert_eq!(sfu::sincos_table(16), (1.0, 0.0));
    assert_eq!(sfu::sincos_table(32 + 64), (-0.0, -1.0));
}

#[test]
fn rcp_rsq_specials() {
    let rcp = Program::op("RCP OUT[0], CONST[0][0].xxxx");
    let rsq = Program::op("RSQ OUT[0], CONST[0][0].xxxx");
    for (x, r, q) in [
        (4.0f32, 0.25f32, 0.5f32),
        (0.0, f32::INFINITY, f32::INFINITY),
        (-0.0, f32::NEG_INFINITY, f32::NEG_INFINITY),
        (f32::INFINITY, 0.0, 0.0),
        (-4.0, -0.25, f32::NAN),
        (f32::NAN, f32::NAN, f32::NAN),
    ] {
        assert!(same(rcp.run([x; 4])[0], r), "RCP {x}");
        assert!(same(rsq.run([x; 4])[3], q), "RSQ {x}");
    }
}

#[test]
fn sqrt_accuracy() {
    let p = Program::op("SQRT OUT[0], CONST[0][0].xxxx");
    let err = |x: f32| ulp_error(p.run([x; 4])[0], f64::from(x).sqrt());
    // Every float of [1, 4): both exponent parities, every significand.
    let (dense, at) = worst(every(1.0, 4.0, dense_stride()), err);
    let mut rng = Rng::new(0x5EED_0001);
    let (random, at2) = worst(samples(200_000).map(|_| rng.float_exp(-149, 128)), err);
    eprintln!("SQRT: max {dense:.4} ulp on [1, 4) (at {at:e}), {random:.4} ulp on random floats (at {at2:e})");
    assert!(dense.max(random) <= SQRT_ULP);
    for (x, want) in
        [(0.0f32, 0.0f32), (-0.0, -0.0), (f32::INFINITY, f32::INFINITY), (-1.0, f32::NAN), (f32::NAN, f32::NAN)]
    {
        assert!(same(p.run([x; 4])[0], want), "SQRT {x}");
    }
}

#[test]
fn div_accuracy() {
    let p = Program::op("DIV OUT[0], CONST[0][0].xxxx, CONST[0][0].yyyy");
    let mut rng = Rng::new(0x5EED_0002);
    let mut max = (0.0f64, 0.0f32, 0.0f32);
    for _ in samples(300_000) {
        let a = rng.float_exp(-100, 100) * if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
        let b = rng.float_exp(-126, 126) * if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
        let want = f64::from(a) / f64::from(b);
        if !(2f64.powi(-149)..2f64.powi(127)).contains(&want.abs()) {
            continue;
        }
        let e = ulp_error(p.run([a, b, 0.0, 0.0])[0], want);
        if e > max.0 {
            max = (e, a, b);
        }
    }
    // Significands of both operands near 1 and 2, where rcp's rounding error is largest.
    for i in 0..2000u32 {
        for j in 0..64u32 {
            let a = f32::from_bits(0x3FFF_FFFF - i * 997);
            let b = f32::from_bits(0x3F80_0000 + j * 0x1_FFFF);
            let e = ulp_error(p.run([a, b, 0.0, 0.0])[0], f64::from(a) / f64::from(b));
            if e > max.0 {
                max = (e, a, b);
            }
        }
    }
    eprintln!("DIV: max {:.4} ulp (at {:e} / {:e})", max.0, max.1, max.2);
    assert!(max.0 <= DIV_ULP);
    let r = p.run([0.0, 0.0, 0.0, 0.0])[0];
    assert!(r.is_nan(), "0/0");
    assert_eq!(p.run([1.0, 0.0, 0.0, 0.0])[0], f32::INFINITY);
    assert_eq!(p.run([3.0, f32::INFINITY, 0.0, 0.0])[0], 0.0);
}

#[test]
fn ex2_accuracy() {
    let p = Program::op("EX2 OUT[0], CONST[0][0].xxxx");
    let err = |x: f32| ulp_error(p.run([x; 4])[0], f64::from(x).exp2());
    let mut rng = Rng::new(0x5EED_0003);
    // |x| < 1: the 8.24 quantisation matters; 1 ≤ |x| < 128: exact fixed point.
    let small = samples(400_000).map(|_| rng.float_exp(-30, 0) * if rng.next() & 1 == 0 { 1.0 } else { -1.0 });
    let (e_small, at_small) = worst(small.collect::<Vec<_>>(), err);
    let large = samples(200_000).map(|_| (rng.unit() * 256.0 - 128.0) as f32);
    let (e_large, at_large) = worst(large.collect::<Vec<_>>(), err);
    // Below −128 the 8.24 operand saturates and FEXP flushes the (subnormal) result to +0.
    for _ in 0..1000 {
        let x = -128.0 - (rng.unit() * 100.0) as f32;
        assert!(same(p.run([x; 4])[0], if x == -128.0 { 2f32.powi(-128) } else { 0.0 }), "EX2 {x}");
    }
    let (e_dense, at_dense) = worst(every(0.5, 1.0, 7), err);
    eprintln!(
        "EX2: max {e_small:.4} ulp for |x| < 1 (at {at_small:e}), {e_dense:.4} on [0.5, 1) (at {at_dense:e}), \
         {e_large:.4} on [-128, 128) (at {at_large:e})"
    );
    assert!(e_small.max(e_large).max(e_dense) <= EX2_ULP);
    for (x, want) in [
        (0.0f32, 1.0f32),
        (-0.0, 1.0),
        (1.0, 2.0),
        (-1.0, 0.5),
        (127.0, 2f32.powi(127)),
        (128.0, f32::INFINITY),
        (1e30, f32::INFINITY),
        (f32::INFINITY, f32::INFINITY),
        (-128.0, 2f32.powi(-128)),
        (-127.5, (-127.5f64).exp2() as f32),
        (-149.0, 0.0),
        (-1e30, 0.0),
        (f32::NEG_INFINITY, 0.0),
        (f32::NAN, f32::NAN),
    ] {
        assert!(same(p.run([x; 4])[0], want), "EX2 {x}: {}", p.run([x; 4])[0]);
    }
}

#[test]
fn lg2_accuracy() {
    let p = Program::op("LG2 OUT[0], CONST[0][0].xxxx");
    let err = |x: f32| ulp_error(p.run([x; 4])[0], f64::from(x).log2());
    // Every float of [0.5, 2): both branches of the reduction around 1 and 0.75.
    let (dense, at) = worst(every(0.5, 2.0, dense_stride()), err);
    let mut rng = Rng::new(0x5EED_0004);
    let random: Vec<f32> = samples(300_000).map(|_| f32::from_bits(1 + (rng.next() as u32 % 0x7F7F_FFFF))).collect();
    let (e_random, at2) = worst(random, err);
    eprintln!(
        "LG2: max {dense:.4} ulp on [0.5, 2) (at {at:e}), {e_random:.4} ulp on random positive floats (at {at2:e})"
    );
    assert!(dense.max(e_random) <= LG2_ULP);
    for (x, want) in [
        (1.0f32, 0.0f32),
        (2.0, 1.0),
        (0.5, -1.0),
        (2f32.powi(-149), -149.0),
        (2f32.powi(127), 127.0),
        (0.0, f32::NEG_INFINITY),
        (-0.0, f32::NEG_INFINITY),
        (f32::INFINITY, f32::INFINITY),
        (-1.0, f32::NAN),
        (f32::NEG_INFINITY, f32::NAN),
        (f32::NAN, f32::NAN),
    ] {
        assert!(same(p.run([x; 4])[0], want), "LG2 {x}: {}", p.run([x; 4])[0]);
    }
}

#[test]
fn pow_accuracy() {
    let p = Program::op("POW OUT[0], CONST[0][0].xxxx, CONST[0][0].yyyy");
    let mut rng = Rng::new(0x5EED_0005);
    let mut max = (0.0f64, 0.0f32, 0.0f32);
    let mut max_ratio = 0.0f64;
    for i in samples(300_000) {
        // A base over the whole positive range, and an exponent giving |log2 result| ≤ 126.
        let x = if i % 4 == 0 {
            rng.float_exp(-2, 2)
        } else {
            f32::from_bits(0x0080_0000 + (rng.next() as u32 % 0x7EFF_FFFF))
        };
        let l = f64::from(x).log2();
        if l == 0.0 {
            continue;
        }
        let t = (rng.unit() * 2.0 - 1.0) * 126.0 * if i % 3 == 0 { rng.unit().powi(4) } else { 1.0 };
        let y = (t / l) as f32;
        let t = f64::from(y) * l;
        let want = t.exp2();
        let e = ulp_error(p.run([x, y, 0.0, 0.0])[0], want);
        let bound = POW_ULP_BASE + POW_ULP_PER_UNIT * t.abs();
        assert!(e <= bound, "POW {x:e}^{y:e}: {e} ulp > {bound}");
        max_ratio = max_ratio.max((e - POW_ULP_BASE).max(0.0) / t.abs().max(1e-30));
        if e > max.0 {
            max = (e, x, y);
        }
    }
    eprintln!(
        "POW: max {:.2} ulp (at {:e}^{:e}); max (err − {POW_ULP_BASE})/|log2 r| = {max_ratio:.3} ulp per unit",
        max.0, max.1, max.2
    );
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    for (x, y, want) in [
        // x^0 = 1 and 1^y = 1 for every x, y (FMA_RSCALE_N).
        (0.0f32, 0.0f32, 1.0f32),
        (inf, 0.0, 1.0),
        (nan, 0.0, 1.0),
        (-2.0, -0.0, 1.0),
        (1.0, inf, 1.0),
        (1.0, nan, 1.0),
        (1.0, -inf, 1.0),
        // Zero and infinite bases.
        (0.0, 2.0, 0.0),
        (0.0, -2.0, inf),
        (-0.0, 3.0, 0.0),
        (inf, 2.0, inf),
        (inf, -2.0, 0.0),
        (2.0, inf, inf),
        (0.5, inf, 0.0),
        (2.0, -inf, 0.0),
        // Negative bases and NaN.
        (-2.0, 2.0, nan),
        (-2.0, 0.5, nan),
        (2.0, nan, nan),
        (nan, 1.0, nan),
        // Exact powers.
        (2.0, 10.0, 1024.0),
        (4.0, 0.5, 2.0),
        (2.0, -126.0, 2f32.powi(-126)),
        (2.0, -128.0, 2f32.powi(-128)),
        (2.0, -149.0, 0.0),
    ] {
        let got = p.run([x, y, 0.0, 0.0])[0];
        assert!(same(got, want), "POW {x}^{y}: {got}, want {want}");
    }
}

/// The absolute error of SIN/COS at x, and the bound.
fn trig_case(p: &Program, x: f32, f: fn(f64) -> f64, channel: usize) -> (f64, f64) {
    let got = p.run([x; 4])[channel];
    let err = (f64::from(got) - f(f64::from(x))).abs();
    (err, TRIG_ABS + TRIG_ABS_PER_UNIT * f64::from(x.abs()))
}

#[test]
fn sin_cos_accuracy() {
    let sin = Program::op("SIN OUT[0], CONST[0][0].xxxx");
    let cos = Program::op("COS OUT[0], CONST[0][0].xxxx");
    let scs = Program::op("SCS OUT[0], CONST[0][0].xxxx");
    let mut rng = Rng::new(0x5EED_0006);
    let mut inputs: Vec<f32> =
        samples(100_000).map(|_| (rng.unit() * 4.0 - 2.0) as f32 * std::f32::consts::PI).collect();
    inputs.extend(samples(60_000).map(|_| (rng.unit() * 2.0 - 1.0) as f32 * TRIG_RANGE));
    inputs.extend(samples(30_000).map(|_| rng.float_exp(-40, 18) * if rng.next() & 1 == 0 { 1.0 } else { -1.0 }));
    // The worst reduction remainders: x = (k ± 1/2)·π/32.
    inputs.extend((-4000..4000).flat_map(|k| {
        let c = (f64::from(k) + 0.5) * std::f64::consts::PI / 32.0;
        [c as f32, f32::from_bits((c as f32).to_bits() + 1), f32::from_bits((c as f32).to_bits().wrapping_sub(1))]
    }));
    inputs.retain(|x| x.abs() < TRIG_RANGE);
    for (name, p, f, channel) in [("SIN", &sin, f64::sin as fn(f64) -> f64, 0), ("COS", &cos, f64::cos, 0)] {
        let (mut small, mut ratio, mut at) = (0.0f64, 0.0f64, 0.0f32);
        for &x in &inputs {
            let (err, bound) = trig_case(p, x, f, channel);
            assert!(err <= bound, "{name}({x:e}): error {err:e} > {bound:e}");
            if x.abs() <= 2.0 * std::f32::consts::PI && err > small {
                small = err;
                at = x;
            }
            ratio = ratio.max((err - TRIG_ABS).max(0.0) / f64::from(x.abs()));
        }
        eprintln!(
            "{name}: max abs error {small:.4e} on [-2π, 2π] (at {at:e}); max (err − {TRIG_ABS:e})/|x| = {ratio:.3e} on |x| < {TRIG_RANGE}"
        );
    }
    // SCS shares the reduction: bit for bit COS and SIN.
    for &x in inputs.iter().step_by(10) {
        let r = scs.run([x; 4]);
        assert!(same(r[0], cos.run([x; 4])[0]) && same(r[1], sin.run([x; 4])[0]), "SCS {x:e}");
    }
    // Exact values, NaN for infinities and NaN, bounded output beyond the range.
    assert!(same(sin.run([0.0; 4])[0], 0.0));
    assert!(same(cos.run([0.0; 4])[0], 1.0));
    assert!(same(sin.run([1e-10; 4])[0], 1e-10));
    for x in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        assert!(sin.run([x; 4])[0].is_nan() && cos.run([x; 4])[0].is_nan(), "{x}");
        let r = scs.run([x; 4]);
        assert!(r[0].is_nan() && r[1].is_nan() && r[2] == 0.0 && r[3] == 1.0, "SCS {x}");
    }
    for x in [5e5f32, 1e7, -3e9, 1e20, f32::MAX, -f32::MAX] {
        for p in [&sin, &cos] {
            let r = p.run([x; 4])[0];
            assert!((-1.0..=1.0).contains(&r), "{x}: {r}");
        }
    }
}

#[test]
fn exp_channels() {
    let p = Program::op("EXP OUT[0], CONST[0][0].xxxx");
    let ex2 = Program::op("EX2 OUT[0], CONST[0][0].xxxx");
    let mut rng = Rng::new(0x5EED_0007);
    let mut inputs: Vec<f32> = (0..100_000).map(|_| (rng.unit() * 300.0 - 160.0) as f32).collect();
    inputs.extend([
        0.0,
        -0.0,
        0.5,
        -0.5,
        127.9,
        128.0,
        -149.0,
        -150.5,
        1e-30,
        -1e-30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]);
    for x in inputs {
        let r = p.run([x; 4]);
        let fl = x.floor();
        let want_x = if fl.is_nan() {
            f32::NAN
        } else if fl < -128.0 {
            0.0 // flushed: the 8.24 operand saturates
        } else {
            f64::from(fl).exp2() as f32
        };
        assert!(same(r[0], want_x), "EXP.x {x}: {}", r[0]);
        assert!(same(r[1], x - fl), "EXP.y {x}: {}", r[1]);
        assert!(same(r[2], ex2.run([x; 4])[0]), "EXP.z {x}");
        assert_eq!(r[3], 1.0);
    }
}

#[test]
fn log_channels() {
    let p = Program::op("LOG OUT[0], CONST[0][0].xxxx");
    let lg2 = Program::op("LG2 OUT[0], |CONST[0][0].xxxx|");
    let mut rng = Rng::new(0x5EED_0008);
    let mut inputs: Vec<f32> = (0..200_000).map(|_| f32::from_bits(rng.next() as u32 & 0x7F7F_FFFF | 1)).collect();
    inputs.extend([1.0, -1.0, 0.75, 1.5, f32::from_bits(1), f32::MAX, -f32::MAX, 0.9999999]);
    for x in inputs {
        let x = if rng.next() & 1 == 0 { x } else { -x };
        let r = p.run([x; 4]);
        let (m, e) = sfu::frexp(x, false).unwrap();
        assert_eq!(r[0], (e - 1) as f32, "LOG.x {x:e}");
        assert_eq!(r[1], (2.0 * m) as f32, "LOG.y {x:e}");
        assert!(same(r[2], lg2.run([x; 4])[0]), "LOG.z {x:e}");
        assert_eq!(r[3], 1.0);
    }
    let inf = f32::INFINITY;
    for (x, want) in [
        (0.0f32, [-inf, f32::NAN, -inf, 1.0]),
        (-0.0, [-inf, f32::NAN, -inf, 1.0]),
        (inf, [inf, f32::NAN, inf, 1.0]),
        (-inf, [inf, f32::NAN, inf, 1.0]),
        (f32::NAN, [f32::NAN, f32::NAN, f32::NAN, 1.0]),
    ] {
        let r = p.run([x; 4]);
        assert!((0..4).all(|c| same(r[c], want[c])), "LOG {x}: {r:?}");
    }
}

#[test]
fn lit_channels() {
    let p = Program::op("LIT OUT[0], CONST[0][0]");
    let pow = Program::op("POW OUT[0], CONST[0][0].xxxx, CONST[0][0].yyyy");
    let mut rng = Rng::new(0x5EED_0009);
    for _ in 0..50_000 {
        let x = (rng.unit() * 2.0 - 0.5) as f32;
        let y = (rng.unit() * 4.0 - 1.0) as f32;
        let w = (rng.unit() * 400.0 - 200.0) as f32;
        let r = p.run([x, y, 0.0, w]);
        let z = if x > 0.0 { pow.run([y.max(0.0), w.clamp(-128.0, 128.0), 0.0, 0.0])[0] } else { 0.0 };
        assert_eq!(r, [1.0, x.max(0.0), z, 1.0], "LIT {x} {y} {w}");
    }
    let inf = f32::INFINITY;
    for (src, z) in [
        ([1.0f32, 0.0, 0.0, 0.0], 1.0f32),
        ([1.0, -3.0, 0.0, 0.0], 1.0),
        ([1.0, 0.0, 0.0, 2.0], 0.0),
        ([1.0, 0.0, 0.0, -2.0], inf),
        ([1.0, 2.0, 0.0, 1000.0], 2f32.powi(128)),
        ([1.0, 2.0, 0.0, f32::NAN], 2f32.powi(-128)),
        ([0.0, 2.0, 0.0, 1.0], 0.0),
        ([f32::NAN, 2.0, 0.0, 1.0], 0.0),
        ([1.0, f32::NAN, 0.0, 3.0], 0.0),
    ] {
        let r = p.run(src);
        assert!(same(r[2], z), "LIT {src:?}: {r:?}");
        assert!(same(r[1], src[0].max(0.0)) && r[0] == 1.0 && r[3] == 1.0, "LIT {src:?}: {r:?}");
    }
}

#[test]
fn rcc_clamps() {
    let p = Program::op("RCC OUT[0], CONST[0][0].xxxx");
    let (lo, hi) = (2f32.powi(-64), 2f32.powi(64));
    for (x, want) in [
        (2.0f32, 0.5f32),
        (-4.0, -0.25),
        (0.0, hi),
        (-0.0, -hi),
        (1e-30, hi),
        (-1e-30, -hi),
        (f32::INFINITY, lo),
        (f32::NEG_INFINITY, -lo),
        (1e30, lo),
        (-1e30, -lo),
        (2f32.powi(64), lo),
        (2f32.powi(-64), hi),
        (f32::NAN, f32::NAN),
    ] {
        assert!(same(p.run([x; 4])[0], want), "RCC {x}: {}", p.run([x; 4])[0]);
    }
}

#[test]
fn exact_compositions() {
    let mut rng = Rng::new(0x5EED_000A);
    let dst = Program::new(
        "FRAG\nDCL OUT[0], COLOR\nDCL CONST[0][0..1]\n  0: DST OUT[0], CONST[0][0], CONST[0][0].wzyx\n  1: END\n",
    );
    let nrm = Program::op("NRM OUT[0], CONST[0][0]");
    let nrm4 = Program::op("NRM4 OUT[0], CONST[0][0]");
    let rfl = Program::op("RFL OUT[0], CONST[0][0], CONST[0][0].yzxw");
    let ldexp = Program::new(
        "FRAG\nDCL OUT[0], COLOR\nDCL CONST[0][0]\nIMM[0] INT32 {3, -2, 200, -300}\n  0: LDEXP OUT[0], CONST[0][0], IMM[0]\n  1: END\n",
    );
    let fma = |a: f32, b: f32, c: f32| a.mul_add(b, c);
    for _ in 0..20_000 {
        let v: [f32; 4] = std::array::from_fn(|_| (rng.unit() * 20.0 - 10.0) as f32);
        assert_eq!(dst.run(v), [1.0, v[1] * v[2], v[2], v[0]]);
        let d3 = fma(v[0], v[0], fma(v[1], v[1], fma(v[2], v[2], -0.0)));
        let r3 = sfu::rsq(d3);
        assert_eq!(nrm.run(v), [v[0] * r3, v[1] * r3, v[2] * r3, 1.0]);
        let d4 = fma(v[0], v[0], fma(v[1], v[1], fma(v[2], v[2], fma(v[3], v[3], -0.0))));
        let r4 = sfu::rsq(d4);
        assert_eq!(nrm4.run(v), v.map(|c| c * r4));
        let b = [v[1], v[2], v[0]];
        let d1 = fma(v[0], b[0], fma(v[1], b[1], fma(v[2], b[2], -0.0)));
        let q = 2.0 * (d1 * (1.0 / d3));
        assert_eq!(rfl.run(v), [fma(q, v[0], -b[0]), fma(q, v[1], -b[1]), fma(q, v[2], -b[2]), 1.0]);
        let l = ldexp.run(v);
        assert_eq!(l, [v[0] * 8.0, v[1] * 0.25, v[2] * 2f32.powi(100) * 2f32.powi(100), 0.0 * v[3]]);
    }
}

/// No sample is rejected because of an opcode of this family (other families may still be
/// missing), and the IR of those that lower is valid.
#[test]
fn samples_have_no_transcendental_rejections() {
    const FAMILY: &[&str] = &[
        "RCP",
        "RSQ",
        "SQRT",
        "DIV",
        "EX2",
        "LG2",
        "POW",
        "EXP",
        "LOG",
        "SIN",
        "COS",
        "SCS",
        "LIT",
        "DST",
        "NRM",
        "NRM4",
        "RCC",
        "RFL",
        "LDEXP",
        "RECIP",
        "RECIPSQRT",
        "EXPBASE2",
        "LOGBASE2",
        "POWER",
        "EXPP",
        "LOGP",
        "SINCOS",
    ];
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tgsi-samples")];
    let mut seen = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "tgsi") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let program = tgsi2va::tgsi::parse(&text).unwrap();
            seen += 1;
            match tgsi2va::lower::lower(&program, &Default::default()) {
                Ok(l) => tgsi2va::ir::verify::verify(&l.shader).unwrap(),
                Err(d) => {
                    for diag in &d.0 {
                        let name = diag.message.split(' ').next().unwrap_or("");
                        assert!(!FAMILY.contains(&name), "{}: {}", path.display(), diag.message);
                    }
                }
            }
        }
    }
    assert!(seen > 50);
}
