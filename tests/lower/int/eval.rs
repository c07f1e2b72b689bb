//! A small evaluator of straight-line IR for the integer-lowering tests: one invocation, the
//! instructions the integer, bitwise and conversion recipes emit, with their modifiers, written
//! from the ISA description independently of the lowering code. Float operations are IEEE
//! binary32 with one rounding (FRCP correctly rounded, or off by `rcp_ulps` units in the last
//! place to show a recipe does not depend on the last bit); float → integer conversions
//! saturate with NaN → 0; shift counts use the low 5 bits of the count byte.

use tgsi2va::emit::meta::{FauSource, Metadata};
use tgsi2va::ir::{Inst, InstKind, Operand, Shader, Src, Terminator};
use tgsi2va::valhall::Opcode as V;
use tgsi2va::valhall::tables::WidenKind;

/// Inputs of a run: `CONST[0][n].c` values by (n, c).
pub struct Run<'a> {
    pub shader: &'a Shader,
    pub meta: &'a Metadata,
    /// How FRCP rounds.
    pub rcp: Rcp,
}

/// FRCP models.
#[derive(Clone, Copy, Debug)]
pub enum Rcp {
    /// Correctly rounded (to nearest even).
    Nearest,
    /// The reciprocal rounded toward zero, then this many ulps further toward zero (−1: the
    /// upper faithful neighbour of an inexact reciprocal).
    TowardZeroMinus(i32),
}

impl Run<'_> {
    /// Runs the shader with `consts[n][c]` as `CONST[0][n].c`; returns the four colour words
    /// given to the first BLEND.
    pub fn colour(&self, consts: &[[u32; 4]]) -> Result<[u32; 4], String> {
        let mut uniforms = [0u32; 128];
        for w in &self.meta.fau {
            if let FauSource::Constant { buffer: 0, index, component } = w.source {
                uniforms[w.word as usize] = consts.get(index as usize).map_or(0, |v| v[component as usize]);
            }
        }
        let mut m = Machine { shader: self.shader, values: vec![0; self.shader.values.len()], uniforms, rcp: self.rcp };
        let mut block = self.shader.entry();
        for _ in 0..self.shader.blocks.len() + 1 {
            for id in self.shader.block_insts(block) {
                let inst = self.shader.inst(id);
                if inst.opcode() == Some(V::BLEND) {
                    let staging = self.shader.get(inst.staging[0]);
                    let mut out = [0; 4];
                    for (o, v) in out.iter_mut().zip(staging) {
                        *o = m.values[v.index()];
                    }
                    return Ok(out);
                }
                m.exec(inst)?;
            }
            match self.shader.block(block).term {
                Terminator::Jump(b) => block = b,
                other => return Err(format!("unsupported terminator {other:?}")),
            }
        }
        Err("no BLEND reached".into())
    }
}

struct Machine<'a> {
    shader: &'a Shader,
    values: Vec<u32>,
    uniforms: [u32; 128],
    rcp: Rcp,
}

fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

fn sext(v: u32, bits: u32) -> u32 {
    (((v << (32 - bits)) as i32) >> (32 - bits)) as u32
}

fn clamp(x: f32, mode: u8) -> f32 {
    // SPIR-V FClamp with IEEE minNum/maxNum: NaN clamps to the lower bound, −0 to +0 in [0, 1].
    let (lo, hi) = match mode {
        0 => return x,
        1 => (0.0f32, f32::INFINITY),
        2 => (-1.0, 1.0),
        _ => (0.0, 1.0),
    };
    let m = if x.is_nan() || x < lo || (x == 0.0 && lo == 0.0) { lo } else { x };
    if m > hi { hi } else { m }
}

fn round_int(x: f32, mode: u8) -> f64 {
    let x = f64::from(x);
    match mode {
        0 => x.round_ties_even(),
        1 => x.ceil(),
        2 => x.floor(),
        _ => x.trunc(),
    }
}

/// f32 → integer with the instruction's rounding, saturating to [lo, hi], NaN → 0.
fn to_int(x: f32, mode: u8, lo: f64, hi: f64) -> i64 {
    if x.is_nan() {
        return 0;
    }
    round_int(x, mode).clamp(lo, hi) as i64
}

/// Integer → f32 with round to nearest even.
fn from_int(v: i64) -> u32 {
    (v as f32).to_bits()
}

impl Machine<'_> {
    fn operand(&self, op: Operand) -> Result<u32, String> {
        Ok(match op {
            Operand::Value(v) => self.values[v.index()],
            Operand::Const(c) => c,
            Operand::Uniform(u) => self.uniforms[u as usize],
            other => return Err(format!("unsupported operand {other:?}")),
        })
    }

    /// Source k as an integer with its widen (extended by `signed`), 16-bit swizzle (lane 0)
    /// or lane select applied.
    fn int(&self, inst: &Inst, k: usize, signed: bool) -> Result<u32, String> {
        let s = &inst.srcs[k];
        let raw = self.operand(s.operand)?;
        let info = &inst.mach.info().srcs[k];
        if info.lane.is_some() {
            return Ok(if info.size == 8 {
                (raw >> (8 * u32::from(s.lane))) & 0xFF
            } else {
                (raw >> (16 * u32::from(s.lane))) & 0xFFFF
            });
        }
        if info.swizzle.is_some() && info.size == 16 {
            // Lane 0 of the swizzle: h00 → h0, h10 → h1, h01 → h0, h11 → h1.
            let h = if s.swizzle & 1 == 1 { raw >> 16 } else { raw & 0xFFFF };
            return Ok(if signed { sext(h, 16) } else { h });
        }
        if info.widen.is_some() && info.widen_kind == WidenKind::Widen {
            let ext = |v: u32, bits: u32| if signed { sext(v, bits) } else { v };
            return Ok(match s.widen {
                0 => raw,
                2 => ext(raw & 0xFFFF, 16),
                3 => ext(raw >> 16, 16),
                b @ 4..=7 => ext((raw >> (8 * u32::from(b - 4))) & 0xFF, 8),
                other => return Err(format!("reserved widen {other}")),
            });
        }
        if info.widen_kind == WidenKind::Lanes {
            if !(4..=7).contains(&s.widen) {
                return Err(format!("{}: shift source without a lane", inst.mach.info().name));
            }
            return Ok((raw >> (8 * u32::from(s.widen - 4))) & 0xFF);
        }
        let v = if s.not { !raw } else { raw };
        Ok(v)
    }

    /// Source k as a float with `.neg`/`.abs`.
    fn flt(&self, inst: &Inst, k: usize) -> Result<f32, String> {
        let s: &Src = &inst.srcs[k];
        let mut x = f(self.operand(s.operand)?);
        if s.abs {
            x = x.abs();
        }
        if s.neg {
            x = -x;
        }
        Ok(x)
    }

    fn exec(&mut self, inst: &Inst) -> Result<(), String> {
        let dests: Vec<usize> = self.shader.get(inst.dests).iter().map(|v| v.index()).collect();
        let r = match inst.kind {
            InstKind::Copy => self.operand(inst.srcs[0].operand)?,
            InstKind::Undef | InstKind::Preload(_) => 0,
            InstKind::Machine => self.machine(inst)?,
            other => return Err(format!("unsupported instruction kind {other:?}")),
        };
        if let Some(&d) = dests.first() {
            self.values[d] = r;
        }
        Ok(())
    }

    fn cond(c: u8, ord: Option<std::cmp::Ordering>) -> bool {
        use std::cmp::Ordering::*;
        match (c, ord) {
            (3, None) => true, // ne is true for NaN
            (_, None) => false,
            (0, Some(o)) => o == Equal,
            (1, Some(o)) => o == Greater,
            (2, Some(o)) => o != Less,
            (3, Some(o)) => o != Equal,
            (4, Some(o)) => o == Less,
            (5, Some(o)) => o != Greater,
            (6, Some(o)) => o != Equal,
            _ => true,
        }
    }

    fn machine(&mut self, inst: &Inst) -> Result<u32, String> {
        use V::*;
        let m = &inst.mach;
        let name = m.info().name;
        let flag = |k: &str| m.flag(k).unwrap_or(false);
        let modifier = |k: &str| m.modifier(k).unwrap_or(0);
        let round = modifier("round_mode");
        Ok(match m.opcode {
            IADD_S32 | IADD_U32 => {
                let s = m.opcode == IADD_S32;
                self.int(inst, 0, s)?.wrapping_add(self.int(inst, 1, s)?)
            }
            ISUB_S32 | ISUB_U32 => {
                let s = m.opcode == ISUB_S32;
                self.int(inst, 0, s)?.wrapping_sub(self.int(inst, 1, s)?)
            }
            IMUL_I32 | IMUL_S32 => {
                let s = m.opcode == IMUL_S32;
                self.int(inst, 0, s)?.wrapping_mul(self.int(inst, 1, s)?)
            }
            HADD_U32 => ((u64::from(self.int(inst, 0, false)?) + u64::from(self.int(inst, 1, false)?)) >> 1) as u32,
            IADD_IMM_I32 => self.int(inst, 0, false)?.wrapping_add(m.imm("constant").unwrap_or(0) as u32),
            IABS_S32 => (self.int(inst, 0, true)? as i32).unsigned_abs(),
            CLZ_U32 => self.int(inst, 0, false)?.leading_zeros(),
            BITREV_I32 => self.int(inst, 0, false)?.reverse_bits(),
            POPCOUNT_I32 => self.int(inst, 0, false)?.count_ones(),
            U16_TO_U32 | U8_TO_U32 => self.int(inst, 0, false)?,
            S16_TO_S32 | S8_TO_S32 => self.int(inst, 0, true)?,
            ICMP_OR_S32 | ICMP_OR_U32 => {
                let s = m.opcode == ICMP_OR_S32;
                let (a, b) = (self.int(inst, 0, s)?, self.int(inst, 1, s)?);
                let ord = if s { (a as i32).cmp(&(b as i32)) } else { a.cmp(&b) };
                let r = Self::cond(modifier("condition"), Some(ord)) || self.int(inst, 2, false)? != 0;
                match modifier("result_type") {
                    0 => u32::from(r),
                    1 => {
                        if r {
                            1.0f32.to_bits()
                        } else {
                            0
                        }
                    }
                    2 => {
                        if r {
                            u32::MAX
                        } else {
                            0
                        }
                    }
                    other => return Err(format!("result type {other}")),
                }
            }
            FCMP_OR_F32 => {
                let (a, b) = (self.flt(inst, 0)?, self.flt(inst, 1)?);
                let r = Self::cond(modifier("condition"), a.partial_cmp(&b)) || self.int(inst, 2, false)? != 0;
                match modifier("result_type") {
                    0 => u32::from(r),
                    1 => {
                        if r {
                            1.0f32.to_bits()
                        } else {
                            0
                        }
                    }
                    2 => {
                        if r {
                            u32::MAX
                        } else {
                            0
                        }
                    }
                    other => return Err(format!("result type {other}")),
                }
            }
            CSEL_S32 | CSEL_U32 | CSEL_F32 => {
                let (a, b) = (self.operand(inst.srcs[0].operand)?, self.operand(inst.srcs[1].operand)?);
                let ord = match m.opcode {
                    CSEL_S32 => Some((a as i32).cmp(&(b as i32))),
                    CSEL_U32 => Some(a.cmp(&b)),
                    _ => f(a).partial_cmp(&f(b)),
                };
                let k = if Self::cond(modifier("condition"), ord) { 2 } else { 3 };
                self.operand(inst.srcs[k].operand)?
            }
            LSHIFT_OR_I32 | LSHIFT_AND_I32 | LSHIFT_XOR_I32 | RSHIFT_OR_I32 | RSHIFT_AND_I32 | RSHIFT_XOR_I32 => {
                let a = self.int(inst, 0, false)?;
                let s = self.int(inst, 1, false)? & 31;
                let b = self.int(inst, 2, false)?;
                let shifted = if name.starts_with('L') {
                    a << s
                } else if flag("signed") {
                    ((a as i32) >> s) as u32
                } else {
                    a >> s
                };
                let r = match m.opcode {
                    LSHIFT_OR_I32 | RSHIFT_OR_I32 => shifted | b,
                    LSHIFT_AND_I32 | RSHIFT_AND_I32 => shifted & b,
                    _ => shifted ^ b,
                };
                if flag("not_result") { !r } else { r }
            }
            MUX_I32 => {
                let (a, b, c) = (self.int(inst, 0, false)?, self.int(inst, 1, false)?, self.int(inst, 2, false)?);
                match modifier("mux") {
                    3 => (a & c) | (b & !c),
                    1 => {
                        if c == 0 {
                            a
                        } else {
                            b
                        }
                    }
                    other => return Err(format!("mux mode {other}")),
                }
            }
            MKVEC_V2I16 => (self.int(inst, 0, false)? & 0xFFFF) | (self.int(inst, 1, false)? & 0xFFFF) << 16,
            MKVEC_V2I8 => {
                let c = self.operand(inst.srcs[2].operand)?;
                (self.int(inst, 0, false)? & 0xFF) | (self.int(inst, 1, false)? & 0xFF) << 8 | (c & 0xFFFF) << 16
            }
            U32_TO_F32 => from_int(i64::from(self.int(inst, 0, false)?)),
            S32_TO_F32 => from_int(i64::from(self.int(inst, 0, true)? as i32)),
            U16_TO_F32 | U8_TO_F32 => from_int(i64::from(self.int(inst, 0, false)?)),
            S8_TO_F32 | S16_TO_F32 => {
                let bits = if m.opcode == S8_TO_F32 { 8 } else { 16 };
                from_int(i64::from(sext(self.int(inst, 0, false)?, bits) as i32))
            }
            F32_TO_S32 => to_int(self.flt(inst, 0)?, round, f64::from(i32::MIN), f64::from(i32::MAX)) as i32 as u32,
            F32_TO_U32 => to_int(self.flt(inst, 0)?, round, 0.0, f64::from(u32::MAX)) as u32,
            FROUND_F32 => {
                let x = self.flt(inst, 0)?;
                if x.is_finite() {
                    // Keep the sign of zero results.
                    let r = round_int(x, round) as f32;
                    if r == 0.0 { (0.0f32).copysign(x).to_bits() } else { r.to_bits() }
                } else {
                    x.to_bits()
                }
            }
            FRCP_F32 => {
                let x = self.flt(inst, 0)?;
                let r = 1.0f32 / x;
                match self.rcp {
                    Rcp::TowardZeroMinus(k) if r.is_finite() && r != 0.0 => {
                        let exact = 1.0 / f64::from(x);
                        let mut t = r.to_bits();
                        if f64::from(r).abs() > exact.abs() {
                            t -= 1;
                        }
                        if f64::from(f32::from_bits(t)) == exact && k < 0 { t } else { (t as i32 - k) as u32 }
                    }
                    _ => r.to_bits(),
                }
            }
            FADD_F32 => clamp(self.flt(inst, 0)? + self.flt(inst, 1)?, modifier("clamp")).to_bits(),
            FMA_F32 => {
                clamp(self.flt(inst, 0)?.mul_add(self.flt(inst, 1)?, self.flt(inst, 2)?), modifier("clamp")).to_bits()
            }
            FMA_RSCALE_F32 => {
                let r = self.flt(inst, 0)?.mul_add(self.flt(inst, 1)?, self.flt(inst, 2)?);
                let d = self.operand(inst.srcs[3].operand)? as i32;
                // Exact for the results the recipes produce (no overflow or underflow).
                clamp((f64::from(r) * 2f64.powi(d)) as f32, modifier("clamp")).to_bits()
            }
            V2F32_TO_V2F16 => {
                let (a, b) = (self.flt(inst, 0)?, self.flt(inst, 1)?);
                if modifier("round_mode") != 0 {
                    return Err("V2F32_TO_V2F16 rounding other than rte".into());
                }
                u32::from(half::f16::from_f32(a).to_bits()) | u32::from(half::f16::from_f32(b).to_bits()) << 16
            }
            F16_TO_F32 => {
                let h = self.int(inst, 0, false)? as u16;
                half::f16::from_bits(h).to_f32().to_bits()
            }
            // The fragment epilogue's alpha test does not matter here.
            ATEST => 0,
            _ => return Err(format!("{name} is not modelled")),
        })
    }
}
