//! Arithmetic (FMA, CVT and SFU unit) instructions: operand decoding (swizzles, widens, lanes,
//! float modifiers) and the semantics of every modelled ALU instruction, one lane at a time.
//! Cross-lane instructions (`CLPER`, `WMASK`) are in `exec.rs`.

use super::error::{EmuError, ErrorKind, err};
use super::fp::{self, F16, F32, Format, Round};
use super::machine::{Machine, Program, SWZ8_BYTES, SWZ16_BYTES, bytes_used, halves_of};
use super::sfu::{self, Frexp};
use crate::valhall::Instr;
use crate::valhall::tables::{EnumId, INSTRUCTION_COUNT, Opcode, SrcInfo, WidenKind};
use std::sync::LazyLock;

/// The result of an ALU instruction for one lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Out {
    None,
    W32(u32),
    W64(u64),
}

/// Evaluation context: one lane of one instruction.
pub(crate) struct Ctx<'a> {
    pub m: &'a Machine,
    pub p: &'a Program,
    pub pc: usize,
    pub lane: usize,
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, EmuError> {
    err(ErrorKind::Unsupported, what)
}

/// Whether the instruction's integer operands are signed (widens sign-extend): a signed
/// mnemonic ([`name_is_signed`]) or a set `signed` flag. The legaliser folds constants by the
/// same rule. The mnemonic test reads text, so it is looked up per opcode once, with the
/// position of the flag.
pub fn is_signed(opcode: Opcode, mods: &[u8]) -> bool {
    type Signed = (bool, Option<usize>);
    static SIGNED: LazyLock<Box<[Signed; INSTRUCTION_COUNT]>> = LazyLock::new(|| {
        let mut table = Box::new([(false, None); INSTRUCTION_COUNT]);
        for op in Opcode::ALL {
            let info = op.info();
            table[op as usize] = (name_is_signed(info.name), info.mod_index("signed"));
        }
        table
    });
    let (by_name, flag) = SIGNED[opcode as usize];
    by_name || flag.is_some_and(|k| mods[k] != 0)
}

/// Whether an instruction of this name reads its integer operands as signed, so that narrow
/// selects (`.h0`, `.b1`, …) sign-extend: signed types (`.s32`, `.v2s16`, …) and conversions
/// from signed integers. `.i32`-style operations have separate signed opcodes (`IMUL.i32` 0xA0
/// and `IMUL.s32` 0xA8), so they zero-extend (unless a `signed` flag says otherwise, see
/// [`is_signed`], the rule the legaliser folds constants by).
fn name_is_signed(name: &str) -> bool {
    let (base, ty) = name.split_once('.').unwrap_or((name, ""));
    ty.starts_with('s')
        || ty.starts_with("v2s")
        || ty.starts_with("v4s")
        || ["S8_", "S16_", "S32_", "V2S8_", "V2S16_"].iter().any(|p| base.starts_with(p))
}

/// Lane width in bits of the instruction's type (8, 16, 32 or 64).
pub(crate) fn lane_width(instr: &Instr) -> u32 {
    let name = instr.info().name;
    let ty = name.split_once('.').map_or("", |(_, t)| t);
    if ty.starts_with("v4") {
        8
    } else if ty.starts_with("v2") {
        16
    } else if ty.ends_with("64") {
        64
    } else {
        32
    }
}

pub(crate) fn mask(w: u32) -> u32 {
    if w >= 32 { u32::MAX } else { (1 << w) - 1 }
}

pub(crate) fn get_lane(x: u32, w: u32, i: u32) -> u32 {
    if w >= 32 { x } else { (x >> (i * w)) & mask(w) }
}

pub(crate) fn sext(v: u32, w: u32) -> i64 {
    let v = i64::from(v & mask(w));
    if w < 64 && v >> (w - 1) & 1 == 1 { v - (1i64 << w) } else { v }
}

fn ext(v: u32, w: u32, signed: bool) -> u32 {
    if signed { sext(v, w) as u32 } else { v & mask(w) }
}

/// Builds a 32-bit value from `32/w` lanes.
pub(crate) fn map_lanes(w: u32, mut f: impl FnMut(u32) -> u32) -> u32 {
    let mut r = 0;
    for i in 0..32 / w {
        r |= (f(i) & mask(w)) << (i * w);
    }
    r
}

fn try_map_lanes(w: u32, mut f: impl FnMut(u32) -> Result<u32, EmuError>) -> Result<u32, EmuError> {
    let mut r = 0;
    for i in 0..32 / w {
        r |= (f(i)? & mask(w)) << (i * w);
    }
    Ok(r)
}

/// `swizzles_16_bit`: two 16-bit lanes from halves (0–3) or bytes (4–13, extended).
fn swz16(raw: u32, idx: u8, signed: bool) -> u32 {
    let (lo, hi) = (raw & 0xFFFF, raw >> 16);
    match idx {
        0 => lo | lo << 16,
        1 => hi | lo << 16,
        2 => raw,
        3 => hi | hi << 16,
        _ => {
            let (x, y) = SWZ16_BYTES[usize::from(idx.min(13) - 4)];
            let byte = |b: u8| (raw >> (8 * u32::from(b))) & 0xFF;
            (ext(byte(x), 8, signed) & 0xFFFF) | (ext(byte(y), 8, signed) & 0xFFFF) << 16
        }
    }
}

/// `swizzles_32_bit`: none, h0, h1, b0–b3, extended to 32 bits.
fn widen32(raw: u32, idx: u8, signed: bool) -> u32 {
    match idx {
        2 => ext(raw & 0xFFFF, 16, signed),
        3 => ext(raw >> 16, 16, signed),
        4..=7 => ext(raw >> (8 * u32::from(idx - 4)), 8, signed),
        _ => raw,
    }
}

/// `swizzles_8_bit`: byte permutation.
fn swz8(raw: u32, idx: u8) -> u32 {
    let d = SWZ8_BYTES[usize::from(idx.min(11))];
    map_lanes(8, |i| raw >> (8 * u32::from(d[i as usize])))
}

/// `swizzles_64_bit` applied to a 64-bit value: none, h0, h1, b0–b3, w0 of the low word,
/// extended to 64 bits.
fn widen64(v: u64, idx: u8, signed: bool) -> u64 {
    let lo = v as u32;
    let e = |x: u32, w: u32| if signed { sext(x, w) as u64 } else { u64::from(x & mask(w)) };
    match idx {
        2 => e(lo, 16),
        3 => e(lo >> 16, 16),
        4..=7 => e(lo >> (8 * u32::from(idx - 4)), 8),
        8 => e(lo, 32),
        _ => v,
    }
}

/// Float source modifiers on a value made of `w`-bit float lanes.
fn float_mods(v: u32, w: u32, neg: bool, abs: bool) -> u32 {
    let sign = if w == 16 { 0x8000_8000 } else { 0x8000_0000 };
    let v = if abs { v & !sign } else { v };
    if neg { v ^ sign } else { v }
}

impl<'a> Ctx<'a> {
    pub fn ins(&self) -> &'a Instr {
        &self.p.code[self.pc].instr
    }

    fn sinfo(&self, k: usize) -> &'static SrcInfo {
        &self.ins().info().srcs[k]
    }

    /// The base word of source k, checking the register bytes it uses.
    pub fn raw(&self, k: usize) -> Result<u32, EmuError> {
        let (info, src) = (self.sinfo(k), &self.ins().srcs[k]);
        let halves = halves_of(bytes_used(info, src));
        self.m.base_word(self.p, self.pc, self.lane, src.base, halves)
    }

    /// The full 32-bit base word of source k (every byte used).
    pub fn raw_full(&self, k: usize) -> Result<u32, EmuError> {
        self.m.base_word(self.p, self.pc, self.lane, self.ins().srcs[k].base, 3)
    }

    /// The 64-bit value of a 64-bit source, before its widen.
    pub fn raw64(&self, k: usize) -> Result<u64, EmuError> {
        let (info, src) = (self.sinfo(k), &self.ins().srcs[k]);
        let low_only = info.widen.is_some_and(|f| f.values == EnumId::Swizzles64Bit) && src.widen != 0;
        let halves = if low_only { halves_of(bytes_used(info, src)) } else { 3 };
        self.m.base_pair(self.p, self.pc, self.lane, src.base, halves, low_only)
    }

    /// Source k as an integer operand: swizzle, widen (extended by the instruction's
    /// signedness), half-swizzle or lane select applied.
    pub fn int(&self, k: usize) -> Result<u32, EmuError> {
        let raw = self.raw(k)?;
        let (info, src) = (self.sinfo(k), &self.ins().srcs[k]);
        let signed = is_signed(self.ins().opcode, &self.ins().mods);
        if let Some(f) = info.lane {
            return Ok(match f.values {
                EnumId::Lane8Bit => (raw >> (8 * u32::from(src.lane & 3))) & 0xFF,
                _ => (raw >> (16 * u32::from(src.lane & 1))) & 0xFFFF,
            });
        }
        if let Some(f) = info.swizzle {
            return Ok(match f.values {
                EnumId::Swizzles16Bit => swz16(raw, src.swizzle, signed),
                _ => match src.swizzle {
                    1 => raw & 0xFFFF,
                    2 => raw >> 16,
                    _ => raw,
                },
            });
        }
        if let Some(f) = info.widen {
            return Ok(match (info.widen_kind, f.values) {
                (WidenKind::HalfSwizzle, _) => {
                    let byte = |b: u8| (raw >> (8 * u32::from(b & 3))) & 0xFF;
                    (ext(byte(src.widen), 8, signed) & 0xFFFF) | (ext(byte(src.widen >> 2), 8, signed) & 0xFFFF) << 16
                }
                (WidenKind::Widen, EnumId::Swizzles32Bit) => widen32(raw, src.widen, signed),
                (WidenKind::Widen, EnumId::Swizzles16Bit) => swz16(raw, src.widen, signed),
                (WidenKind::Widen, EnumId::Swizzles8Bit) => swz8(raw, src.widen),
                _ => raw,
            });
        }
        Ok(raw)
    }

    /// Source k as a float operand: swizzle (a 32-bit `.h0`/`.h1` converts that binary16 half
    /// to binary32, exactly), lane select, then `.abs` and `.neg`.
    pub fn flt(&self, k: usize) -> Result<u32, EmuError> {
        let raw = self.raw(k)?;
        let (info, src) = (self.sinfo(k), &self.ins().srcs[k]);
        let mut w = if info.size == 16 { 16 } else { 32 };
        let v = if info.lane.is_some() {
            w = 16;
            (raw >> (16 * u32::from(src.lane & 1))) & 0xFFFF
        } else if let Some(f) = info.swizzle {
            match f.values {
                EnumId::Swizzles16Bit => swz16(raw, src.swizzle, false),
                _ => match src.swizzle {
                    1 => fp::f16_to_f32_exact(raw & 0xFFFF),
                    2 => fp::f16_to_f32_exact(raw >> 16),
                    _ => raw,
                },
            }
        } else {
            raw
        };
        Ok(float_mods(v, w, src.neg, src.abs))
    }

    /// Source k of a binary32 operand whose table entry says 16 bits (`V2F32_TO_V2F16`).
    fn f32_wide(&self, k: usize) -> Result<u32, EmuError> {
        let src = &self.ins().srcs[k];
        Ok(float_mods(self.raw_full(k)?, 32, src.neg, src.abs))
    }

    /// A 64-bit source with its widen applied.
    pub fn int64(&self, k: usize) -> Result<u64, EmuError> {
        let v = self.raw64(k)?;
        let (info, src) = (self.sinfo(k), &self.ins().srcs[k]);
        if info.widen.is_some_and(|f| f.values == EnumId::Swizzles64Bit) {
            return Ok(widen64(v, src.widen, is_signed(self.ins().opcode, &self.ins().mods)));
        }
        Ok(v)
    }

    /// The two byte values (x, y) a `lanes_8_bit` source selects (b00 … b33).
    pub fn lanes(&self, k: usize) -> Result<(u32, u32), EmuError> {
        let raw = self.raw(k)?;
        let src = &self.ins().srcs[k];
        if !(4..=7).contains(&src.widen) {
            return err(ErrorKind::Decode, format!("source {k} has a reserved lanes value {}", src.widen));
        }
        let b = (raw >> (8 * u32::from(src.widen - 4))) & 0xFF;
        Ok((b, b))
    }

    fn imm(&self, name: &str) -> u32 {
        self.ins().imm(name).unwrap_or(0) as u32
    }

    fn modifier(&self, key: &str) -> u8 {
        self.ins().modifier(key).unwrap_or(0)
    }

    fn flag(&self, key: &str) -> bool {
        self.ins().flag(key).unwrap_or(false)
    }

    fn round(&self) -> Round {
        Round::from_index(self.modifier("round_mode"))
    }

    fn clamp(&self, fmt: Format, w: u32, v: u32) -> u32 {
        let c = self.modifier("clamp");
        if c == 0 {
            return v;
        }
        if w == 16 { map_lanes(16, |i| fp::clamp(fmt, get_lane(v, 16, i), c)) } else { fp::clamp(fmt, v, c) }
    }
}

/// Evaluates ALU instructions on given source words with exactly the arithmetic of a run: the
/// optimiser's constant folder calls it so that a folded value is what the hardware computes.
/// Source `k` reads FAU word `uk`, holding `words[k]`, through the source's own swizzle, widen,
/// lane and float modifiers; the instruction's clamp and rounding mode apply as in a run.
pub struct ConstEvaluator {
    machine: Box<Machine>,
    program: Program,
}

impl Default for ConstEvaluator {
    fn default() -> ConstEvaluator {
        ConstEvaluator { machine: Box::new(Machine::new(super::Stage::Compute)), program: Program::default() }
    }
}

impl ConstEvaluator {
    /// The 32-bit result of `instr` (operand fields ignored) on `words`; `None` for anything
    /// but a single-lane ALU instruction with 32-bit sources and a 32-bit result that the
    /// emulator models.
    pub fn eval(&mut self, instr: &Instr, words: [u32; 4]) -> Option<u32> {
        use crate::valhall::Base;
        let info = instr.info();
        let cross_lane = matches!(instr.opcode, Opcode::WMASK) || info.name.starts_with("CLPER");
        if !instr.opcode.unit().is_alu() || cross_lane || info.srcs.iter().any(|s| s.size == 64) {
            return None;
        }
        let mut ins = *instr;
        for (k, src) in ins.srcs.iter_mut().enumerate().take(info.srcs.len()) {
            src.base = Base::Uniform(k as u8);
            self.machine.uniforms[k] = Some(words[k]);
        }
        self.program.code.clear();
        self.program.code.push(super::Inst { word: 0, instr: ins, text: String::new() });
        match eval(&Ctx { m: &self.machine, p: &self.program, pc: 0, lane: 0 }) {
            Ok(Out::W32(v)) => Some(v),
            _ => None,
        }
    }
}

/// Integer condition (`condition` enum); `total` has no integer meaning.
fn int_condition(cond: u8, a: i64, b: i64) -> Result<bool, EmuError> {
    Ok(match cond {
        0 => a == b,
        1 => a > b,
        2 => a >= b,
        3 | 6 => a != b,
        4 => a < b,
        5 => a <= b,
        _ => return unsupported("the `total` condition is only defined for floating-point comparisons"),
    })
}

/// Condition `cond` between lanes `x` and `y` of `w` bits, compared as floats, signed or
/// unsigned integers (the comparison of FCMP/ICMP and CSEL).
fn lane_condition(cond: u8, float: bool, signed: bool, w: u32, x: u32, y: u32) -> Result<bool, EmuError> {
    if float {
        Ok(fp::float_condition(float_format(w), cond, x, y))
    } else if signed {
        int_condition(cond, sext(x, w), sext(y, w))
    } else {
        int_condition(cond, i64::from(x), i64::from(y))
    }
}

/// The boolean encoding of a `result_type` in a lane of `w` bits.
fn bool_value(result_type: u8, w: u32, value: bool) -> Result<u32, EmuError> {
    if !value {
        return Ok(0);
    }
    Ok(match result_type {
        0 | 3 => 1,
        2 => mask(w),
        _ => match w {
            32 => 0x3F80_0000,
            16 => 0x3C00,
            _ => return unsupported("result type f1 in 8-bit lanes"),
        },
    })
}

/// Add, subtract or multiply with optional saturation on one lane of `w` bits.
fn int_arith(op: char, w: u32, signed: bool, sat: bool, a: u32, b: u32) -> u32 {
    let (x, y): (i128, i128) = if signed {
        (i128::from(sext(a, w)), i128::from(sext(b, w)))
    } else {
        (i128::from(a & mask(w)), i128::from(b & mask(w)))
    };
    let r = match op {
        '+' => x + y,
        '-' => x - y,
        _ => x * y,
    };
    let r = if sat {
        let (lo, hi) = if signed { (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1) } else { (0, (1i128 << w) - 1) };
        r.clamp(lo, hi)
    } else {
        r
    };
    (r as u32) & mask(w)
}

/// The same on 64-bit values.
fn int_arith64(op: char, signed: bool, sat: bool, a: u64, b: u64) -> u64 {
    let (x, y): (i128, i128) =
        if signed { (i128::from(a as i64), i128::from(b as i64)) } else { (i128::from(a), i128::from(b)) };
    let r = if op == '+' { x + y } else { x - y };
    let r = if sat {
        if signed { r.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) } else { r.clamp(0, i128::from(u64::MAX)) }
    } else {
        r
    };
    r as u64
}

/// A shift-and-combine lane: `((a shift s) op b')`, `b' = !b` with `.not`, optionally inverted.
#[allow(clippy::too_many_arguments)]
fn shift_op(w: u32, left: bool, arith: bool, comb: u16, a: u64, s: u32, b: u64, not_result: bool) -> u64 {
    let m = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let s = s & (w - 1);
    let a = a & m;
    let shifted = if left {
        a << s
    } else if arith {
        let signed = if w == 64 { a as i64 } else { ((a << (64 - w)) as i64) >> (64 - w) };
        (signed >> s) as u64
    } else {
        a >> s
    };
    let r = match comb {
        0 => shifted & b,
        1 => shifted | b,
        _ => shifted ^ b,
    };
    (if not_result { !r } else { r }) & m
}

/// `MUX` condition on one lane of the mask.
fn mux_pick(mode: u8, w: u32, mask_lane: u32) -> Result<bool, EmuError> {
    Ok(match mode {
        0 => mask_lane >> (w - 1) & 1 == 1,
        1 => mask_lane == 0,
        _ => match w {
            32 => F32.is_zero(mask_lane),
            16 => F16.is_zero(mask_lane),
            _ => return unsupported("MUX.fp_zero on 8-bit lanes"),
        },
    })
}

/// FLUSH of one value.
fn flush(fmt: Format, v: u32, nan_mode: u8, ftz: bool, flush_inf: bool) -> Result<u32, EmuError> {
    if fmt.is_nan(v) {
        return match nan_mode {
            0 => Ok(v),
            1 => Ok(0),
            2 => Ok(fmt.quiet(v)),
            _ => err(ErrorKind::Decode, "reserved nan_mode"),
        };
    }
    let exp = v & fmt.exp_mask();
    if ftz && exp == 0 {
        return Ok(v & fmt.sign_bit());
    }
    if flush_inf && fmt.is_inf(v) {
        return Ok(fmt.max_finite(fmt.is_neg(v)));
    }
    Ok(v)
}

/// Float lanes of the instruction's type.
fn float_format(w: u32) -> Format {
    if w == 16 { F16 } else { F32 }
}

/// Evaluates an ALU instruction for one lane.
pub(crate) fn eval(c: &Ctx) -> Result<Out, EmuError> {
    use Opcode::*;
    let ins = c.ins();
    let op = ins.opcode;
    let name = ins.info().name;
    let w = lane_width(ins);
    let signed = is_signed(ins.opcode, &ins.mods);
    let w32 = |v: u32| Ok(Out::W32(v));
    match op {
        NOP => Ok(Out::None),
        MOV_I32 => w32(c.raw(0)?),

        // ---------------- integer arithmetic ----------------
        IADD_U32 | IADD_S32 | IADD_V2U16 | IADD_V2S16 | IADD_V4U8 | IADD_V4S8 | ISUB_U32 | ISUB_S32 | ISUB_V2U16
        | ISUB_V2S16 | ISUB_V4U8 | ISUB_V4S8 | IMUL_I32 | IMUL_S32 | IMUL_V2I16 | IMUL_V2S16 | IMUL_V4I8
        | IMUL_V4S8 => {
            let (a, b) = (c.int(0)?, c.int(1)?);
            let o = if name.starts_with("IADD") {
                '+'
            } else if name.starts_with("ISUB") {
                '-'
            } else {
                '*'
            };
            let sat = c.flag("saturate");
            w32(map_lanes(w, |i| int_arith(o, w, signed, sat, get_lane(a, w, i), get_lane(b, w, i))))
        }
        HADD_U32 | HADD_S32 | HADD_V2U16 | HADD_V2S16 | HADD_V4U8 | HADD_V4S8 => {
            let (a, b) = (c.int(0)?, c.int(1)?);
            let round_up = i64::from(c.flag("rhadd"));
            w32(map_lanes(w, |i| {
                let (x, y) = if signed {
                    (sext(get_lane(a, w, i), w), sext(get_lane(b, w, i), w))
                } else {
                    (i64::from(get_lane(a, w, i)), i64::from(get_lane(b, w, i)))
                };
                ((x + y + round_up) >> 1) as u32
            }))
        }
        IADD_IMM_I32 | IADD_IMM_V2I16 | IADD_IMM_V4I8 => {
            let (a, b) = (c.raw(0)?, c.imm("constant"));
            w32(map_lanes(w, |i| get_lane(a, w, i).wrapping_add(get_lane(b, w, i))))
        }
        FADD_IMM_F32 => w32(fp::add32(c.raw(0)?, c.imm("constant"))),
        FADD_IMM_V2F16 => {
            let (a, b) = (c.raw(0)?, c.imm("constant"));
            w32(map_lanes(16, |i| fp::add16(get_lane(a, 16, i), get_lane(b, 16, i))))
        }
        IABS_S32 | IABS_V2S16 | IABS_V4S8 => {
            let a = c.int(0)?;
            w32(map_lanes(w, |i| sext(get_lane(a, w, i), w).unsigned_abs() as u32))
        }
        CLZ_U32 | CLZ_V2U16 | CLZ_V4U8 => {
            let a = c.int(0)?;
            w32(map_lanes(w, |i| {
                let v = get_lane(a, w, i);
                v.leading_zeros() - (32 - w)
            }))
        }
        POPCOUNT_I32 => w32(c.raw(0)?.count_ones()),
        BITREV_I32 => w32(c.raw(0)?.reverse_bits()),
        NOT_OLD_I32 => w32(!c.raw(0)?),
        NOT_OLD_I64 => Ok(Out::W64(!c.raw64(0)?)),
        MKVEC_V2I16 => w32((c.int(0)? & 0xFFFF) | (c.int(1)? & 0xFFFF) << 16),
        MKVEC_V2I8 => w32((c.int(0)? & 0xFF) | (c.int(1)? & 0xFF) << 8 | (c.raw(2)? & 0xFFFF) << 16),
        IDP_V4S8 | IDP_V4U8 => {
            let (a, b, acc) = (c.raw(0)?, c.raw(1)?, c.raw(2)?);
            let s = op == IDP_V4S8;
            let lane = |x: u32, i: u32| if s { sext(get_lane(x, 8, i), 8) } else { i64::from(get_lane(x, 8, i)) };
            let dot: i64 = (0..4).map(|i| lane(a, i) * lane(b, i)).sum();
            let total = dot + if s { i64::from(acc as i32) } else { i64::from(acc) };
            let r = if c.flag("saturate") {
                if s {
                    total.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as u32
                } else {
                    total.clamp(0, i64::from(u32::MAX)) as u32
                }
            } else {
                total as u32
            };
            w32(r)
        }

        // ---------------- shifts and bitwise ----------------
        RSHIFT_AND_I32 | RSHIFT_OR_I32 | RSHIFT_XOR_I32 | LSHIFT_AND_I32 | LSHIFT_OR_I32 | LSHIFT_XOR_I32
        | RSHIFT_AND_V2I16 | RSHIFT_OR_V2I16 | RSHIFT_XOR_V2I16 | LSHIFT_AND_V2I16 | LSHIFT_OR_V2I16
        | LSHIFT_XOR_V2I16 | RSHIFT_AND_V4I8 | RSHIFT_OR_V4I8 | RSHIFT_XOR_V4I8 | LSHIFT_AND_V4I8 | LSHIFT_OR_V4I8
        | LSHIFT_XOR_V4I8 => {
            let a = c.int(0)?;
            let (sx, sy) = c.lanes(1)?;
            let b_src = &ins.srcs[2];
            let b = c.raw(2)?;
            let b = if b_src.not { !b } else { b };
            let (left, comb) = shift_kind(name);
            let arith = c.flag("signed");
            let not_result = c.flag("not_result");
            let lanes = 32 / w;
            w32(map_lanes(w, |i| {
                let s = if i < lanes / 2 || lanes == 1 { sx } else { sy };
                shift_op(
                    w,
                    left,
                    arith,
                    comb,
                    u64::from(get_lane(a, w, i)),
                    s,
                    u64::from(get_lane(b, w, i)),
                    not_result,
                ) as u32
            }))
        }
        RSHIFT_AND_I64 | RSHIFT_OR_I64 | RSHIFT_XOR_I64 | LSHIFT_AND_I64 | LSHIFT_OR_I64 | LSHIFT_XOR_I64 => {
            let a = c.int64(0)?;
            let (s, _) = c.lanes(1)?;
            let b = c.raw64(2)?;
            let b = if ins.srcs[2].not { !b } else { b };
            let (left, comb) = shift_kind(name);
            Ok(Out::W64(shift_op(64, left, c.flag("signed"), comb, a, s, b, c.flag("not_result"))))
        }
        MUX_I32 | MUX_V2I16 | MUX_V4I8 => {
            let (a, b, m) = (c.int(0)?, c.int(1)?, c.int(2)?);
            let mode = c.modifier("mux");
            if mode == 3 {
                return w32((a & m) | (b & !m));
            }
            let mut r = 0;
            for i in 0..32 / w {
                let pick = mux_pick(mode, w, get_lane(m, w, i))?;
                r |= get_lane(if pick { a } else { b }, w, i) << (i * w);
            }
            w32(r)
        }

        // ---------------- comparisons and selects ----------------
        ICMP_OR_U32 | ICMP_AND_U32 | ICMP_MULTI_U32 | ICMP_OR_V2U16 | ICMP_AND_V2U16 | ICMP_OR_V4U8 | ICMP_AND_V4U8
        | ICMP_OR_S32 | ICMP_AND_S32 | ICMP_MULTI_S32 | ICMP_OR_V2S16 | ICMP_AND_V2S16 | ICMP_OR_V4S8
        | ICMP_AND_V4S8 | FCMP_OR_F32 | FCMP_AND_F32 | FCMP_OR_V2F16 | FCMP_AND_V2F16 => {
            let float = name.starts_with("FCMP");
            let (a, b) = if float { (c.flt(0)?, c.flt(1)?) } else { (c.int(0)?, c.int(1)?) };
            let third = c.raw(2)?;
            let cond = c.modifier("condition");
            let rt = c.modifier("result_type");
            let combine = if name.contains("_AND") {
                1
            } else if name.contains("_MULTI") {
                2
            } else {
                0
            };
            try_map_lanes(w, |i| {
                let (x, y) = (get_lane(a, w, i), get_lane(b, w, i));
                let r = lane_condition(cond, float, signed, w, x, y)?;
                let t = get_lane(third, w, i) != 0;
                let r = match combine {
                    0 => r || t,
                    1 => r && t,
                    _ => {
                        if x == y {
                            t
                        } else {
                            r
                        }
                    }
                };
                bool_value(rt, w, r)
            })
            .map(Out::W32)
        }
        CSEL_U32 | CSEL_S32 | CSEL_F32 | CSEL_V2U16 | CSEL_V2S16 | CSEL_V2F16 => {
            let (a, b, t, f) = (c.raw(0)?, c.raw(1)?, c.raw(2)?, c.raw(3)?);
            let cond = c.modifier("condition");
            let float = name.starts_with("CSEL.f") || name.starts_with("CSEL.v2f");
            try_map_lanes(w, |i| {
                let (x, y) = (get_lane(a, w, i), get_lane(b, w, i));
                let r = lane_condition(cond, float, signed, w, x, y)?;
                Ok(get_lane(if r { t } else { f }, w, i))
            })
            .map(Out::W32)
        }

        // ---------------- floating point ----------------
        FADD_F32 => w32(c.clamp(F32, 32, fp::add32(c.flt(0)?, c.flt(1)?))),
        FADD_V2F16 => {
            let (a, b) = (c.flt(0)?, c.flt(1)?);
            w32(c.clamp(F16, 16, map_lanes(16, |i| fp::add16(get_lane(a, 16, i), get_lane(b, 16, i)))))
        }
        FMIN_F32 | FMAX_F32 => w32(c.clamp(F32, 32, fp::min_max(F32, c.flt(0)?, c.flt(1)?, op == FMAX_F32))),
        FMIN_V2F16 | FMAX_V2F16 => {
            let (a, b) = (c.flt(0)?, c.flt(1)?);
            let max = op == FMAX_V2F16;
            w32(c.clamp(F16, 16, map_lanes(16, |i| fp::min_max(F16, get_lane(a, 16, i), get_lane(b, 16, i), max))))
        }
        FMA_F32 => w32(c.clamp(F32, 32, fp::fma32(c.flt(0)?, c.flt(1)?, c.flt(2)?))),
        FMA_V2F16 => {
            let (a, b, d) = (c.flt(0)?, c.flt(1)?, c.flt(2)?);
            w32(c.clamp(
                F16,
                16,
                map_lanes(16, |i| fp::fma16(get_lane(a, 16, i), get_lane(b, 16, i), get_lane(d, 16, i))),
            ))
        }
        FMA_RSCALE_F32 | FMA_RSCALE_N_F32 | FMA_RSCALE_LEFT_F32 | FMA_RSCALE_SCALE16_F32 => {
            let (a, b, d) = (c.flt(0)?, c.flt(1)?, c.flt(2)?);
            let scale = c.raw(3)?;
            let zero_operand = F32.is_zero(a) || F32.is_zero(b);
            let r = match op {
                FMA_RSCALE_N_F32 if zero_operand => fp::add32(F32.zero(F32.is_neg(a) != F32.is_neg(b)), d),
                FMA_RSCALE_LEFT_F32 if zero_operand => fp::add32(a, d),
                _ => fp::fma32(a, b, d),
            };
            let scale = if op == FMA_RSCALE_SCALE16_F32 { sext(scale, 16) as i32 } else { scale as i32 };
            w32(c.clamp(F32, 32, fp::ldexp(F32, r, scale, Round::Rte)))
        }
        LDEXP_F32 => w32(fp::ldexp(F32, c.flt(0)?, c.raw(1)? as i32, c.round())),
        LDEXP_V2F16 => {
            let (a, e) = (c.flt(0)?, c.raw(1)?);
            let mode = c.round();
            w32(map_lanes(16, |i| fp::ldexp(F16, get_lane(a, 16, i), sext(get_lane(e, 16, i), 16) as i32, mode)))
        }
        FROUND_F32 => w32(fp::round_integral(F32, c.flt(0)?, c.round())),
        FROUND_V2F16 => {
            let (a, mode) = (c.flt(0)?, c.round());
            w32(map_lanes(16, |i| fp::round_integral(F16, get_lane(a, 16, i), mode)))
        }
        FLUSH_F32 | FLUSH_V2F16 => {
            let a = c.flt(0)?;
            let (nan, ftz, inf) = (c.modifier("nan_mode"), c.flag("ftz"), c.flag("flush_inf"));
            let fmt = float_format(w);
            try_map_lanes(if w == 16 { 16 } else { 32 }, |i| flush(fmt, get_lane(a, w, i), nan, ftz, inf)).map(Out::W32)
        }
        FEXP_F32 => w32(c.clamp(F32, 32, sfu::fexp(c.raw(0)?, c.flt(1)?))),
        FADD_LSCALE_F32 => w32(c.clamp(F32, 32, sfu::fadd_lscale(c.flt(0)?, c.flt(1)?))),

        // ---------------- conversions ----------------
        F32_TO_S32 => w32(fp::to_int(F32, c.flt(0)?, c.round(), i64::from(i32::MIN), i64::from(i32::MAX)) as u32),
        F32_TO_U32 => w32(fp::to_int(F32, c.flt(0)?, c.round(), 0, i64::from(u32::MAX)) as u32),
        F16_TO_S32 => {
            w32(fp::to_int(F16, c.flt(0)? & 0xFFFF, c.round(), i64::from(i32::MIN), i64::from(i32::MAX)) as u32)
        }
        F16_TO_U32 => w32(fp::to_int(F16, c.flt(0)? & 0xFFFF, c.round(), 0, i64::from(u32::MAX)) as u32),
        V2F16_TO_V2S16 | V2F16_TO_V2U16 => {
            let (a, mode) = (c.flt(0)?, c.round());
            let (lo, hi) = if op == V2F16_TO_V2S16 { (-32768, 32767) } else { (0, 65535) };
            w32(map_lanes(16, |i| fp::to_int(F16, get_lane(a, 16, i), mode, lo, hi) as u32))
        }
        S32_TO_F32 => w32(fp::from_int(F32, i128::from(c.int(0)? as i32), c.round())),
        U32_TO_F32 => w32(fp::from_int(F32, i128::from(c.int(0)?), c.round())),
        S16_TO_S32 => w32(sext(c.int(0)?, 16) as u32),
        U16_TO_U32 => w32(c.int(0)? & 0xFFFF),
        S16_TO_F32 => w32(fp::from_int(F32, i128::from(sext(c.int(0)?, 16)), Round::Rte)),
        U16_TO_F32 => w32(fp::from_int(F32, i128::from(c.int(0)? & 0xFFFF), Round::Rte)),
        S8_TO_S32 => w32(sext(c.int(0)?, 8) as u32),
        U8_TO_U32 => w32(c.int(0)? & 0xFF),
        S8_TO_F32 => w32(fp::from_int(F32, i128::from(sext(c.int(0)?, 8)), Round::Rte)),
        U8_TO_F32 => w32(fp::from_int(F32, i128::from(c.int(0)? & 0xFF), Round::Rte)),
        V2S8_TO_V2S16 | V2U8_TO_V2U16 => w32(c.int(0)?),
        V2S8_TO_V2F16 | V2U8_TO_V2F16 | V2S16_TO_V2F16 | V2U16_TO_V2F16 => {
            let a = c.int(0)?;
            let mode = if ins.info().mods.iter().any(|m| m.key == "round_mode") { c.round() } else { Round::Rte };
            w32(map_lanes(16, |i| {
                let v = get_lane(a, 16, i);
                let n = if signed { sext(v, 16) } else { i64::from(v) };
                fp::from_int(F16, i128::from(n), mode)
            }))
        }
        F16_TO_F32 => {
            let h = c.flt(0)? & 0xFFFF;
            w32(if F16.is_nan(h) { F32.quiet(fp::f16_to_f32_exact(h)) } else { fp::f16_to_f32_exact(h) })
        }
        V2F32_TO_V2F16 => {
            let (a, b, mode) = (c.f32_wide(0)?, c.f32_wide(1)?, c.round());
            let lo = fp::convert(F32, F16, a, mode);
            let hi = fp::convert(F32, F16, b, mode);
            w32(c.clamp(F16, 16, lo | hi << 16))
        }

        // ---------------- special functions ----------------
        FRCP_F32 | FRCP_APPROX_F32 => w32(sfu::rcp(F32, c.flt(0)?)),
        FRSQ_F32 => w32(sfu::rsq(F32, c.flt(0)?)),
        FRSQ_APPROX_F32 => w32(sfu::rsq(F32, sfu::frexp(F32, c.flt(0)?, Frexp::Sqrt).0)),
        FRCP_F16 => {
            let a = c.flt(0)?;
            w32(map_lanes(16, |i| sfu::rcp16(get_lane(a, 16, i))))
        }
        FRSQ_F16 => {
            let a = c.flt(0)?;
            w32(map_lanes(16, |i| sfu::rsq16(get_lane(a, 16, i))))
        }
        FLOGD_F32 => w32(sfu::flogd(c.flt(0)?)),
        FLOG_TABLE_F32 => w32(sfu::flog_table(c.flt(0)?)),
        FSIN_TABLE_U6 => w32(sfu::sin_table(c.raw(0)?)),
        FCOS_TABLE_U6 => w32(sfu::cos_table(c.raw(0)?)),
        FEXP_TABLE_U4 => w32(sfu::fexp_table(c.raw(0)?)),
        FREXPM_F32 | FREXPE_F32 | FREXPM_V2F16 | FREXPE_V2F16 => {
            let mode = match (c.flag("sqrt"), c.flag("log")) {
                (false, false) => Frexp::Plain,
                (true, false) => Frexp::Sqrt,
                (false, true) => Frexp::Log,
                (true, true) => return unsupported("FREXP with both .sqrt and .log"),
            };
            let a = c.flt(0)?;
            let mantissa = matches!(op, FREXPM_F32 | FREXPM_V2F16);
            if w == 16 {
                w32(map_lanes(16, |i| {
                    let (m, e) = sfu::frexp(F16, get_lane(a, 16, i), mode);
                    if mantissa { m } else { e as u32 }
                }))
            } else {
                let (m, e) = sfu::frexp(F32, a, mode);
                w32(if mantissa { m } else { e as u32 })
            }
        }
        CUBEFACE1 => w32(sfu::cubeface1(c.flt(0)?, c.flt(1)?, c.flt(2)?)),
        CUBEFACE2_V9 => w32(sfu::cubeface2(c.flt(0)?, c.flt(1)?, c.flt(2)?)),
        CUBE_SSEL | CUBE_TSEL => {
            let face = c.raw(2)?;
            match sfu::cube_select(op == CUBE_SSEL, c.flt(0)?, c.flt(1)?, face) {
                Some(v) => w32(v),
                None => err(ErrorKind::Fault, format!("cube face {} (bits 29–31 of source 2) is not 0–5", face >> 29)),
            }
        }

        // ---------------- 64-bit ----------------
        IADD_U64 | IADD_S64 | ISUB_U64 | ISUB_S64 => {
            let (a, b) = (c.int64(0)?, c.int64(1)?);
            let o = if name.starts_with("IADD") { '+' } else { '-' };
            Ok(Out::W64(int_arith64(o, signed, c.flag("saturate"), a, b)))
        }
        SEG_ADD_U64 => {
            let (a, b) = (c.raw64(0)?, c.int64(1)?);
            if c.flag("preserve_null") && a == 0 {
                return Ok(Out::W64(0));
            }
            Ok(Out::W64(if c.flag("neg") { a.wrapping_sub(b) } else { a.wrapping_add(b) }))
        }
        SHADDX_U64 | SHADDX_S64 => {
            let (a, b) = (c.raw64(0)?, c.int64(1)?);
            Ok(Out::W64(a.wrapping_add(b << c.imm("shift"))))
        }
        IMULD_U64 => {
            let (a, b) = (c.int64(0)? as u32, c.int64(1)? as u32);
            Ok(Out::W64(u64::from(a) * u64::from(b)))
        }

        FSINCOS_OFFSET_U6 | FPCLASS_F32 | FPCLASS_F16 | FATAN_ASSIST_F32 => {
            unsupported(format!("{name}: the ISA description does not define its result"))
        }
        _ => unsupported(format!("{name} is not an ALU instruction")),
    }
}

/// (left shift, combine 0 AND / 1 OR / 2 XOR) from a shift mnemonic.
fn shift_kind(name: &str) -> (bool, u16) {
    let left = name.starts_with('L');
    let comb = if name.contains("_AND") {
        0
    } else if name.contains("_OR") {
        1
    } else {
        2
    };
    (left, comb)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-opcode table gives the rule as written: a signed mnemonic or a set `signed` flag.
    #[test]
    fn is_signed_is_the_mnemonic_or_the_flag() {
        for op in Opcode::ALL {
            let mut instr = Instr::new(op);
            for flag in [0, 1] {
                if let Some(k) = op.info().mod_index("signed") {
                    instr.mods[k] = flag;
                }
                let rule = name_is_signed(op.info().name) || instr.flag("signed") == Some(true);
                assert_eq!(is_signed(instr.opcode, &instr.mods), rule, "{op} signed flag {flag}");
            }
        }
    }
}
