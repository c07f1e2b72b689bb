//! Reading sources and writing destinations.
//!
//! * Source component for destination channel `c` is `swizzle[c]`; replicated-scalar opcodes
//!   read channel 0 (`.x` after the swizzle).
//! * `-` and `|x|` mean float negation/absolute value for float operands (kept as IR source
//!   modifiers so the consumer folds them), integer negation/absolute value for integer
//!   operands (TGSI's rule: the operand type decides).
//! * Register files: TEMP/OUT/ADDR components are SSA variables; IMM components are constants;
//!   `CONST[k][n]` with constant indices are push-constant words; IN and SV come from the stage
//!   ABI ([`super::io`]). An indirect bracket selects among the elements of the register's
//!   array with a chain of CSELs; out-of-range indices read 0 and writes to them are dropped
//!   (the interpreter does the same). Indirect constant-buffer reads load from the UBO.
//! * Every source is read before any destination component is written ([`write`] takes all
//!   channels at once), as TGSI requires.

use super::Ctx;
use super::ssa::Var;
use crate::ir::builder::NEG_ZERO;
use crate::ir::{Operand, Src, Value};
use crate::tgsi::ast::{
    Component, Declaration, DstOperand, ExtendedComponent, File, Index, Instruction, LegacySourceModifiers, Register,
    ResourceDecl, Saturate, SrcOperand,
};
use crate::valhall::tables::{Clamp, Condition, ResultType};

/// How a source's `-`/`|x|` and a destination's saturation apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Float,
    Int,
}

/// The source component read for destination channel `c`.
pub fn component(src: &SrcOperand, c: usize) -> Component {
    src.swizzle[c]
}

/// Source `k` of `inst` for destination channel `c`, with float modifiers kept on the [`Src`].
pub fn fsrc(ctx: &mut Ctx, inst: &Instruction, k: usize, c: usize) -> Src {
    let src = &inst.src[k];
    if let Some(legacy) = &src.legacy {
        return legacy_fsrc(ctx, src, legacy, c);
    }
    let operand = base_operand(ctx, &src.register, component(src, c));
    // `|x|` first, then `-`: the modifiers land on the source as written.
    fold_const_mods(Src { operand, neg: src.negate, abs: src.absolute, ..Src::NONE })
}

/// A source operand of the instruction being lowered, resolved at its first read: file, index
/// and indirection are looked at once, and each destination lane then reads its channel.
/// Sources that need more than a table lookup per lane (indirect, legacy modifiers, constants
/// loaded from a UBO, system values) stay [`Lanes::General`] and take the per-lane path of [`fsrc`]/[`isrc`].
///
/// Resolving does what the first lane's read did before (load an input, create a register's
/// variables), at the same point, so the instructions emitted and their order are unchanged.
#[derive(Clone, Copy, Debug)]
pub enum Lanes {
    /// Not read yet.
    Unread,
    /// A direct TEMP/OUT/ADDR register: its first variable (x; y, z, w follow).
    Vars(Var),
    /// A direct `IMM[n]`.
    Consts([u32; 4]),
    /// A direct `IN[n]`, loaded.
    Values([Value; 4]),
    /// A direct `CONST[buffer][index]` placed in the push-constant table at word `first`.
    Uniforms {
        buffer: u32,
        index: u32,
        first: u8,
    },
    General,
}

impl Lanes {
    /// `Unread` for each of the (up to four) sources of an instruction.
    pub const UNREAD: [Lanes; 4] = [Lanes::Unread; 4];

    /// The operand of lane `c` of `src` before modifiers; `None` when the source takes the
    /// general path. Every lane of most sources comes here: inlined into the readers.
    #[inline(always)]
    fn operand(&mut self, ctx: &mut Ctx, src: &SrcOperand, c: usize) -> Option<Operand> {
        let comp = src.swizzle[c].index();
        if let Lanes::Unread = self {
            *self = resolve(ctx, src, comp);
        }
        match *self {
            Lanes::Vars(x) => Some(Operand::Value(ctx.read_var(Var(x.0 + comp as u32)))),
            Lanes::Consts(row) => Some(Operand::Const(row[comp])),
            Lanes::Values(values) => Some(Operand::Value(values[comp])),
            Lanes::Uniforms { buffer, index, first } => {
                Some(Operand::Uniform(ctx.fau.constant_word(first, buffer, index, comp as u32)))
            }
            Lanes::General | Lanes::Unread => None,
        }
    }
}

/// How the lanes of `src` are read (see [`Lanes`]); `comp` is the component the first lane
/// reads.
#[inline(never)]
fn resolve(ctx: &mut Ctx, src: &SrcOperand, comp: usize) -> Lanes {
    let reg = &src.register;
    if src.legacy.is_some() || reg.index.indirect.is_some() {
        return Lanes::General;
    }
    if is_variable_file(reg.file) {
        return Lanes::Vars(ctx.var(reg.file, i64::from(reg.index.value), 0));
    }
    match reg.file {
        File::Immediate => Lanes::Consts(ctx.imms.get(reg.index.value as usize).copied().unwrap_or([0; 4])),
        File::Input if reg.dimension.is_none_or(|d| d.indirect.is_none()) => {
            Lanes::Values(super::io::input_vec4(ctx, i64::from(reg.index.value)))
        }
        // As `io::constant` reads a direct constant: a push word, else (table full) a UBO load,
        // which the general path does.
        File::Const if reg.dimension.is_none_or(|d| d.indirect.is_none()) => {
            let buffer = reg.dimension.map_or(0, |d| d.value.max(0) as u32);
            let index = reg.index.value.max(0) as u32;
            match ctx.fau.constant(buffer, index, comp as u32) {
                Some(w) => Lanes::Uniforms { buffer, index, first: w - comp as u8 },
                None => Lanes::General,
            }
        }
        _ => Lanes::General,
    }
}

/// [`fsrc`] through the source's [`Lanes`] (`lanes` belongs to source `k` of `inst`).
/// Inlined into the per-lane loops: a call per lane and source cost more than the lookup.
#[inline(always)]
pub fn fsrc_lanes(ctx: &mut Ctx, inst: &Instruction, lanes: &mut Lanes, k: usize, c: usize) -> Src {
    let src = &inst.src[k];
    match lanes.operand(ctx, src, c) {
        Some(operand) => fold_const_mods(Src { operand, neg: src.negate, abs: src.absolute, ..Src::NONE }),
        None => fsrc(ctx, inst, k, c),
    }
}

/// [`isrc`] through the source's [`Lanes`] (`lanes` belongs to source `k` of `inst`).
#[inline(always)]
pub fn isrc_lanes(ctx: &mut Ctx, inst: &Instruction, lanes: &mut Lanes, k: usize, c: usize) -> Src {
    let src = &inst.src[k];
    match lanes.operand(ctx, src, c) {
        Some(operand) => int_mods(ctx, operand, src.negate, src.absolute),
        None => isrc(ctx, inst, k, c),
    }
}

/// A float source with the modifiers of Mesa ≤ 7.7, applied from the inside out as the
/// interpreter does: extended swizzle (a component, 0 or 1, each optionally negated), plain
/// negate, `1 − x`, `x − 0.5`, `2·x` (each one rounded f32 operation), `|x|`, outer negate.
fn legacy_fsrc(ctx: &mut Ctx, src: &SrcOperand, legacy: &LegacySourceModifiers, c: usize) -> Src {
    let (operand, ext_negate) = match legacy.extended_swizzle {
        Some(ext) => match ext[c].source {
            ExtendedComponent::Component(comp) => (base_operand(ctx, &src.register, comp), ext[c].negate),
            ExtendedComponent::Zero => (Operand::Const(0), ext[c].negate),
            ExtendedComponent::One => (Operand::Const(1.0f32.to_bits()), ext[c].negate),
        },
        None => (base_operand(ctx, &src.register, component(src, c)), false),
    };
    let mut v = Src::new(operand);
    if ext_negate != src.negate {
        v = v.negated();
    }
    if legacy.complement {
        v = Src::new(ctx.builder().fadd(Src::f32(1.0), v.negated()));
    }
    if legacy.bias {
        v = Src::new(ctx.builder().fadd(v, Src::f32(-0.5)));
    }
    if legacy.scale2 {
        v = Src::new(ctx.builder().fmul(v, Src::f32(2.0)));
    }
    if src.absolute {
        v = v.absolute();
    }
    if legacy.outer_negate {
        v = v.negated();
    }
    fold_const_mods(v)
}

/// A plain source equal to `src` with its float modifiers applied.
pub fn apply_float_mods(ctx: &mut Ctx, src: Src) -> Src {
    if !src.neg && !src.abs {
        return src;
    }
    let src = fold_const_mods(src);
    if !src.neg && !src.abs {
        return src;
    }
    Src::new(ctx.builder().fadd(src, Src::konst(NEG_ZERO)))
}

/// Folds neg/abs into a constant operand.
fn fold_const_mods(src: Src) -> Src {
    match src.operand {
        Operand::Const(bits) if src.neg || src.abs => {
            let mut bits = bits;
            if src.abs {
                bits &= 0x7FFF_FFFF;
            }
            if src.neg {
                bits ^= 0x8000_0000;
            }
            Src::konst(bits)
        }
        _ => src,
    }
}

/// Source `k` as an integer operand: `-` is integer negation, `|x|` integer absolute value.
pub fn isrc(ctx: &mut Ctx, inst: &Instruction, k: usize, c: usize) -> Src {
    let src = &inst.src[k];
    let operand = base_operand(ctx, &src.register, component(src, c));
    int_mods(ctx, operand, src.negate, src.absolute)
}

/// An integer operand with TGSI's integer `-` and `|x|` applied.
#[inline]
fn int_mods(ctx: &mut Ctx, operand: Operand, negate: bool, absolute: bool) -> Src {
    if let Operand::Const(bits) = operand {
        let mut v = bits as i32;
        if absolute {
            v = v.wrapping_abs();
        }
        if negate {
            v = v.wrapping_neg();
        }
        return Src::konst(v as u32);
    }
    let mut value = Src::new(operand);
    if absolute {
        value = Src::new(ctx.builder().op(crate::valhall::Opcode::IABS_S32, &[value]));
    }
    if negate {
        value = Src::new(ctx.builder().isub(Src::konst(0), value));
    }
    value
}

/// A value holding the source operand (registers stay as they are; constants, uniforms and
/// specials are copied into a register). For operands used where only registers are allowed.
pub fn to_value(ctx: &mut Ctx, src: Src) -> Value {
    match src.operand {
        Operand::Value(v) if src.is_plain() => v,
        _ if src.is_plain() => ctx.builder().copy(src.operand),
        _ => {
            let plain = apply_float_mods(ctx, src);
            to_value(ctx, plain)
        }
    }
}

/// The raw 32 bits of source `k`, channel `c` of its swizzle, ignoring modifiers (SWITCH
/// selectors, CASE values are read through [`case_value`]).
pub fn read_raw(ctx: &mut Ctx, inst: &Instruction, k: usize, c: usize) -> Value {
    let src = &inst.src[k];
    let operand = base_operand(ctx, &src.register, component(src, c));
    to_value(ctx, Src::new(operand))
}

/// The constant value of a CASE label (its source must be an immediate or constant-foldable).
pub fn case_value(ctx: &mut Ctx, inst: &Instruction) -> u32 {
    let src = &inst.src[0];
    match base_operand(ctx, &src.register, component(src, 0)) {
        Operand::Const(bits) => bits,
        _ => {
            ctx.unsupported("CASE", "its value must be an immediate (IMM[n])");
            0
        }
    }
}

/// The branch condition of IF (float: `x != 0.0`, so NaN is true and −0 false) or UIF
/// (integer: `x != 0`), as a value that is zero exactly when the branch is not taken.
pub fn condition(ctx: &mut Ctx, inst: &Instruction, float: bool) -> Value {
    if float {
        let x = fsrc(ctx, inst, 0, 0);
        ctx.builder().fcmp(Condition::Ne, x, Src::konst(0), ResultType::M1)
    } else {
        let x = isrc(ctx, inst, 0, 0);
        to_value(ctx, x)
    }
}

// ---- Register files ---------------------------------------------------------------------------

/// The operand holding component `comp` of a register (before modifiers).
#[inline]
pub fn base_operand(ctx: &mut Ctx, reg: &Register, comp: Component) -> Operand {
    // Most sources are TEMP components and immediates: those are table lookups, inlined into
    // the callers; everything else (and anything indirect) takes the general path.
    if reg.index.indirect.is_none() {
        let c = comp.index();
        if is_variable_file(reg.file) {
            let var = ctx.var(reg.file, i64::from(reg.index.value), c);
            return Operand::Value(ctx.read_var(var));
        }
        if reg.file == File::Immediate {
            return Operand::Const(ctx.imms.get(reg.index.value as usize).map_or(0, |v| v[c]));
        }
    }
    register_operand(ctx, reg, comp)
}

/// [`base_operand`] of any register.
#[inline(never)]
fn register_operand(ctx: &mut Ctx, reg: &Register, comp: Component) -> Operand {
    let c = comp.index();
    match reg.file {
        File::Immediate | File::LegacyImmediateArray => {
            // Constants: `IMM`, and the `DCL IMMX[a..b] {…}` arrays of Mesa 7.9 – 8.0. An
            // indirect read selects among every element of the file.
            let immx = reg.file == File::LegacyImmediateArray;
            let word = |ctx: &Ctx, i: i64| {
                if !immx {
                    return usize::try_from(i).ok().and_then(|i| ctx.imms.get(i)).map_or(0, |v| v[c]);
                }
                match ctx.decls.covering(File::LegacyImmediateArray, i) {
                    Some(Declaration { first, resource: Some(ResourceDecl::ImmediateArray { values }), .. }) => {
                        values.get((i - i64::from(*first)) as usize).map_or(0, |v| v[c])
                    }
                    _ => 0,
                }
            };
            match reg.index.indirect {
                None => Operand::Const(word(ctx, i64::from(reg.index.value))),
                Some(_) => {
                    let (first, last) =
                        if immx { ctx.decls.span(File::LegacyImmediateArray) } else { (0, ctx.imms.len() as i64 - 1) };
                    let idx = address(ctx, &reg.index);
                    let elements: Vec<Operand> = (first..=last).map(|i| Operand::Const(word(ctx, i))).collect();
                    Operand::Value(select_chain(ctx, idx, first, &elements))
                }
            }
        }
        File::Const => super::io::constant(ctx, reg, c),
        File::Input => super::io::input(ctx, reg, c),
        File::SystemValue => super::io::system_value(ctx, reg, c),
        File::Temp | File::Output | File::Address | File::LegacyTempArray | File::LegacyLoop => {
            match reg.index.indirect {
                None => {
                    let var = ctx.var(reg.file, i64::from(reg.index.value), c);
                    Operand::Value(ctx.read_var(var))
                }
                Some(_) => {
                    let (first, last) = array_range(ctx, reg.file, &reg.index);
                    let idx = address(ctx, &reg.index);
                    let elements: Vec<Operand> = (first..=last)
                        .map(|i| {
                            let var = ctx.var(reg.file, i, c);
                            Operand::Value(ctx.read_var(var))
                        })
                        .collect();
                    Operand::Value(select_chain(ctx, idx, first, &elements))
                }
            }
        }
        other => {
            ctx.unsupported(
                &format!("reading a {} register as a value", other.name()),
                "this file holds no data values",
            );
            Operand::Const(0)
        }
    }
}

/// The value of an indirect bracket's index: address register component plus the offset.
pub fn address(ctx: &mut Ctx, index: &Index) -> Value {
    match address_base(ctx, index) {
        None => ctx.builder().konst(index.value as u32),
        Some(base) => offset_address(ctx, base, index.value),
    }
}

/// The value of the address register an indirect index reads (before its constant offset is
/// added), or `None` for a direct index.
pub fn address_base(ctx: &mut Ctx, index: &Index) -> Option<Value> {
    let ind = index.indirect?;
    let reg = Register { file: ind.file, dimension: None, index: Index::direct(ind.index) };
    let base = base_operand(ctx, &reg, ind.component);
    Some(to_value(ctx, Src::new(base)))
}

/// `base + offset`, the index [`address`] computes from [`address_base`]'s value.
pub fn offset_address(ctx: &mut Ctx, base: Value, offset: i32) -> Value {
    if offset == 0 { base } else { ctx.builder().iadd_imm(base, offset as u32) }
}

/// `elements[idx - first]`, or 0 when `idx` is out of range, as a chain of CSELs.
pub fn select_chain(ctx: &mut Ctx, idx: Value, first: i64, elements: &[Operand]) -> Value {
    let mut result = ctx.builder().konst(0);
    for (i, &e) in elements.iter().enumerate().rev() {
        let key = Src::konst((first + i as i64) as u32);
        result = ctx.builder().csel(false, Condition::Eq, Src::new(idx), key, Src::new(e), Src::new(result));
    }
    result
}

/// The register range an indirect access may touch: the declaration with the bracket's
/// ArrayID, else the declaration containing the base index, else every declared register of
/// the file.
pub fn array_range(ctx: &mut Ctx, file: File, index: &Index) -> (i64, i64) {
    if index.array_id != 0
        && let Some(d) = ctx.decls.array(file, index.array_id)
    {
        return (i64::from(d.first), i64::from(d.last));
    }
    if let Some(d) = ctx.decls.covering_if(file, i64::from(index.value), |d| d.array_id.is_some()) {
        return (i64::from(d.first), i64::from(d.last));
    }
    ctx.decls.span(file)
}

// ---- Destinations -----------------------------------------------------------------------------

/// Appends the variables a destination operand may write to `vars` (for loop write sets).
pub fn dst_vars(ctx: &mut Ctx, dst: &DstOperand, vars: &mut Vec<Var>) {
    let reg = &dst.register;
    if !is_variable_file(reg.file) {
        return;
    }
    let range = match reg.index.indirect {
        None => (i64::from(reg.index.value), i64::from(reg.index.value)),
        Some(_) => array_range(ctx, reg.file, &reg.index),
    };
    for i in range.0..=range.1 {
        for c in dst.write_mask.components() {
            vars.push(ctx.var(reg.file, i, c.index()));
        }
    }
}

/// Whether registers of `file` are SSA variables (TEMP, OUT, ADDR and the legacy files).
pub fn is_variable_file(file: File) -> bool {
    matches!(file, File::Temp | File::Output | File::Address | File::LegacyTempArray | File::LegacyLoop)
}

/// Writes the channels of destination `k` that its write mask enables. `values[c]` is the
/// result for channel c (`None` for channels the opcode leaves unwritten). Float results get
/// the instruction's saturation and legacy modulation.
pub fn write(ctx: &mut Ctx, inst: &Instruction, k: usize, values: [Option<Value>; 4], kind: Kind) {
    let Some(dst) = inst.dst.get(k) else { return };
    let reg = &dst.register;
    if reg.file == File::Null {
        return;
    }
    if !is_variable_file(reg.file) {
        ctx.unsupported(
            &format!("writing a {} register", reg.file.name()),
            "only TEMP, OUT and ADDR registers can be written",
        );
        return;
    }
    let mut finished = [None; 4];
    // Most destinations are written as computed: no modulation, no saturation.
    let adjust = kind == Kind::Float && (dst.modulate.is_some() || inst.saturate != Saturate::None);
    for (c, value) in values.iter().enumerate() {
        if dst.write_mask.0 & (1 << c) == 0 {
            continue;
        }
        let Some(mut v) = *value else { continue };
        if adjust {
            if let Some(m) = dst.modulate {
                v = ctx.builder().fmul(v, Src::f32(m.factor()));
            }
            v = saturate(ctx, v, inst.saturate);
        }
        finished[c] = Some(v);
    }
    match reg.index.indirect {
        None if finished.iter().all(Option::is_none) => {}
        None => {
            // A register's four variables are consecutive.
            let x = ctx.var(reg.file, i64::from(reg.index.value), 0);
            for (c, v) in finished.iter().enumerate() {
                if let Some(v) = *v {
                    ctx.ssa.write(Var(x.0 + c as u32), v);
                }
            }
        }
        Some(_) => {
            let (first, last) = array_range(ctx, reg.file, &reg.index);
            let idx = address(ctx, &reg.index);
            for i in first..=last {
                for (c, v) in finished.iter().enumerate() {
                    let Some(v) = *v else { continue };
                    let var = ctx.var(reg.file, i, c);
                    let old = ctx.read_var(var);
                    let new = ctx.builder().csel(
                        false,
                        Condition::Eq,
                        Src::new(idx),
                        Src::konst(i as u32),
                        Src::new(v),
                        Src::new(old),
                    );
                    ctx.ssa.write(var, new);
                }
            }
        }
    }
}

/// The current value of channel `c` of destination 0's register (legacy loop registers whose
/// instructions read their own destination).
pub fn dst_component(ctx: &mut Ctx, inst: &Instruction, c: usize) -> Value {
    let reg = inst.dst[0].register;
    let base = base_operand(ctx, &reg, Component::ALL[c]);
    to_value(ctx, Src::new(base))
}

/// Writes `values` to destination `k` ignoring its write mask (legacy loop registers).
pub fn write_all_channels(ctx: &mut Ctx, inst: &Instruction, k: usize, values: [Option<Value>; 4]) {
    let reg = inst.dst[k].register;
    for (c, v) in values.iter().enumerate() {
        if let Some(v) = *v {
            let var = ctx.var(reg.file, i64::from(reg.index.value), c);
            ctx.ssa.write(var, v);
        }
    }
}

/// Applies `_SAT` (clamp to [0, 1]) or legacy `_SATNV` (clamp to [−1, 1]) to a float result
/// with an `FADD x, -0.0` carrying the clamp; the modifier-folding pass moves the clamp into the
/// producer when that is the clamp's only user.
pub fn saturate(ctx: &mut Ctx, v: Value, sat: Saturate) -> Value {
    let clamp = match sat {
        Saturate::None => return v,
        Saturate::ZeroOne => Clamp::Clamp0_1,
        Saturate::MinusPlusOne => Clamp::ClampM1_1,
    };
    ctx.builder().fclamp(v, clamp)
}
