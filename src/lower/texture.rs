//! Texturing, texture queries and derivatives (§C.11 and §C.12 of the lowering reference).
//!
//! # Opcodes
//!
//! | TGSI | Valhall |
//! | --- | --- |
//! | TEX, TXP, TXB, TXL, TEX_LZ, TEX2, TXB2, TXL2; SAMPLE, SAMPLE_B, SAMPLE_C, SAMPLE_C_LZ, SAMPLE_L | `TEX_SINGLE` |
//! | TXD, SAMPLE_D | `TEX_GRADIENT.derivative_enable` → `TEX_SINGLE.grdesc`; cube maps: ALU LOD → `TEX_SINGLE.explicit` |
//! | TXF, TXF_LZ; SAMPLE_I, SAMPLE_I_MS | `TEX_FETCH` (sampler 0) |
//! | TG4; GATHER4 | `TEX_GATHER` |
//! | LODQ, LOD | two `TEX_GRADIENT.force_delta_enable` (fragment shaders), `S16_TO_F32` |
//! | TXQ, TXQ_LZ; SVIEWINFO | `texture_size.U` sysval words (no instruction), shifted by the level |
//! | TXQS, SAMPLE_INFO | `texture_samples.U` sysval word (multisample targets), else 1 |
//! | DDX, DDY (coarse), DDX_FINE, DDY_FINE | two `CLPER.i32.subgroup4` and an `FADD` |
//!
//! Aliases and renamed legacy opcodes arrive canonicalised (TEXLD → TEX, TEXLDB → TXB, TEXLDD →
//! TXD, DSX → DDX, the 7.11–8.0 LOAD → SAMPLE_I and RESINFO → SVIEWINFO on `RES` views, TXQ_LZ =
//! TXQ at level 0).
//!
//! Rejected, with the reason in the diagnostic: SAMPLE_POS (no Valhall shader can read a
//! resource's sample positions), SAMPLE_INFO of the render target (no such driver value), the
//! 7.11–8.0 LOAD_MS (no sample operand), TXD on shadow cube arrays (no operand for the
//! reference), LOD queries and sampling (as opposed to fetching) of buffer and multisample
//! textures, and the combinations TGSI itself declares illegal (below).
//!
//! # Explicit derivatives and LOD queries (§C.12.4)
//!
//! * **TXD/SAMPLE_D**: `TEX_GRADIENT` (u32 results, write mask `rg`, `derivative_enable`,
//!   `lod_clamp_disable`, `lod_bias_disable`, no array/shadow/offset) reads `ddx.s, ddy.s,
//!   ddx.t, ddy.t, ddx.r, ddy.r` (two words per coordinate of the target) and returns the
//!   two-word gradient descriptor, which `TEX_SINGLE.grdesc` takes as its last two staging
//!   words. Cube maps never reach the texture unit with derivatives in the production
//!   compiler (panfrost's `lower_txd_cube_map`): the LOD of `cube_gradient_lod` is computed by
//!   ALU instructions (face width from `texture_size.U`, `LG2` of the transcendental module)
//!   and sampled with `.explicit`. Works in every stage (no quad needed).
//! * **LODQ/LOD** (fragment shaders; 0 elsewhere): see [`lod_query`].
//!
//! # Texture units and handles
//!
//! TEX-style opcodes use texture *and* sampler `u` of their `SAMP[u]` operand; SAMPLE-style
//! opcodes use texture `v` of `SVIEW[v]` and sampler `s` of `SAMP[s]`; fetches use sampler 0
//! (docs/metadata.md). With constant indices below 1024 the 64-bit handle source is the narrow
//! packed word `4 << 27 | texture << 16 | 3 << 11 | sampler` (high word 0), pushed as a literal
//! pair (`uN`); an indirect index uses `.wide_indices` with the pair (sampler handle `3 << 24 |
//! s`, texture handle `4 << 24 | t`). Every unit an instruction may reach is recorded in the
//! metadata's `textures` with its target and the return type of its `SVIEW` declaration. The
//! result register type is `f`, `u` or `s` from that return type (`f` when no view is declared),
//! 32 bits wide.
//!
//! # Staging vector (what the emulator reads)
//!
//! In this order, absent entries dropped (§C.12.2):
//!
//! 1. X — s (float) or the integer x of fetches. **Cube maps**: `face << 29 | (bits(s) &
//!    0x1FFFFFFF)`, s in [0, 1]; the reader restores s as `from_bits(X & 0x1FFFFFFF |
//!    0x20000000)`, which is exact for every s the cube sequence produces except s = 0 (read back
//!    as 2⁻⁶³; the other values are at least 2⁻⁵⁰), a difference that changes neither a texel
//!    index nor an implicit LOD (f32 differences of coordinates at least 2⁻³⁰ apart absorb it).
//! 2. Y — t (not for 1D and buffers).
//! 3. Z — r (3D only).
//! 4. array layer — the float coordinate for sampling and gathering (the texture unit rounds and
//!    clamps it), the integer layer for fetches.
//! 5. shadow reference (float).
//! 6. offset word (sets `.texel_offset`): bytes 0–2 the signed texel offsets in x, y, z (only the
//!    target's dimensions), byte 2 the sample index of multisample fetches and byte 3 the level
//!    of fetches (each `min(value, 255)` unsigned, so out-of-range values stay out of range).
//! 7. LOD or bias word (`.explicit`, `.computed_bias`): signed 8.8 in bits 0–15, bits 16–31 zero.
//! 8. the two gradient-descriptor words (`.grdesc`).
//!
//! # Semantics (shared with the interpreter, defined by `src/exec/texture.rs`)
//!
//! * **LOD and bias** are converted exactly as [`lod_to_fixed88`]: `FMA.clamp_m1_1 l, 1/16, -0`,
//!   `FMA ×4096`, `F32_TO_S32.rtz`, low 16 bits. Constants are converted at compile time; an
//!   explicit LOD whose 8.8 value is 0 uses `.zero` (no word), a constant zero bias `.computed`.
//! * **Implicit LOD** (TEX, TXP, TXB, TEX2, TXB2, SAMPLE, SAMPLE_B, SAMPLE_C) exists only in
//!   fragment shaders; elsewhere the LOD is 0 and a bias is used as the explicit LOD (Mesa's
//!   `lower_invalid_implicit_lod`: `lod = 0 + bias`). Fragment shaders using it, or derivatives, set
//!   `flags.needs_helper_threads`.
//! * **TXP** multiplies s, t, r and the shadow reference by `rcp(q)` (one `FRCP`, then one
//!   `FMUL` each, as Mesa's projector lowering does), not the array layer; it is rejected on
//!   arrays and cube maps, where GL has no projective lookup.
//! * **RECT** coordinates are passed unnormalised; the texture's RECT-ness (the sampler's
//!   unnormalised-coordinates bit) is a property of the bound texture, as in the model.
//! * **Cube maps** are projected as Mesa's backend does (§C.12.5): `CUBEFACE1` gives
//!   `ma = max(|x|, |y|, |z|)`, `CUBEFACE2_V9` the face (ties go to x, then y), `CUBE_SSEL` and
//!   `CUBE_TSEL` the face coordinates, `h = FRCP(ma) · 0.5`, `s = FMA.clamp_0_1(sc, h, 0.5)`,
//!   likewise t, and `MUX` packs the face into s's top three bits. That sequence computes exactly
//!   the model's [`cube_project`] (docs/emulator.md, tested over 4,000 directions with ties and
//!   zeros), except for a lane whose direction is zero or NaN: the model's s/t are NaN there
//!   (texel 0 after its NaN-to-0 index clamp) while the clamp modifier gives 0 (also texel 0),
//!   so the fetched texel agrees but an implicit LOD over such a quad may not. (Assumed of the
//!   emulator, as docs/lowering.md does: `FRCP.f32` is the correctly rounded reciprocal, the
//!   cube instructions follow the emulator's table, clamp modifiers send NaN to their lower
//!   bound, 0 for `clamp_0_1`.)
//! * **Texel offsets** are only passed (the model's `sample`/`gather` take none): the texture
//!   unit adds them to the integer texel coordinates — `floor(s·w) + offset` before the edge
//!   clamp when sampling, `i0 + offset` when gathering, `x + offset` when fetching.
//! * **Shadow reference** placement (tgsi.rst): with at most two coordinate components
//!   (layer included) `src0.z`; with three `src0.w`; with four (cube arrays) `src1.x` for TEX2
//!   and TG4, `src1.y` for TXB2/TXL2; TXB and TXL always read `src0.z` (so they reject shadow
//!   targets with three or more components); SAMPLE_C* read `src3.x`.
//! * **Gather** (TG4, GATHER4) reads level 0; the component is TG4's constant `src1.x`, or
//!   GATHER4's sampler swizzle `.x` (llvmpipe's convention). Shadow gathers compare.
//! * **SAMPLE\*** results are swizzled by the `SVIEW` operand's swizzle (tgsi.rst).
//! * **TXQ/SVIEWINFO** follow `Texture::query_size`: width/height/depth are `max(size >>
//!   min(level, 31), 1)` with the level taken as unsigned, layers and levels unshifted, zeros in
//!   the unused components, buffers `(width, 0, 0, 1)`. SVIEWINFO of a level `>= levels`
//!   (unsigned) gives 0 for width, height, depth and layers (tgsi.rst; one `CSEL` each). The sysval `texture_size.U` is read as
//!   its documented components: x width, y height (layers for 1D arrays), z depth (3D) or layers
//!   (2D arrays, cube arrays in cubes), w levels.
//! * **Derivatives**: DDX/DDY are coarse (lanes 1 − 0 and 2 − 0 of the quad), the `_FINE` forms
//!   use the lane's own row/column; lanes outside the active mask contribute 0 (`CLPER`'s
//!   inactive result).
//!
//! [`cube_project`]: crate::exec::texture::cube_project

use super::Ctx;
use super::operand::{self, Kind, fsrc, isrc, to_value, write};
use crate::emit::meta::TextureBinding;
use crate::exec::texture::lod_to_fixed88;
use crate::ir::builder::{LANE_B00, NEG_ZERO, byte0};
use crate::ir::{InstKind, Operand, Src, Stage, Value};
use crate::tgsi::ast::{File, Index, Instruction, Register, ResourceDecl, ReturnType, TextureTarget};
use crate::tgsi::opcodes::Opcode;
use crate::valhall::tables::{
    Clamp, Condition, Dimension, FetchComponent, LodMode, Mux, RegisterType, RegisterWidth, RoundMode, Slot,
    SubgroupSize, WriteMask,
};
use crate::valhall::{Instr, IsaEnum, Opcode as Op, Special};
use std::collections::HashMap;

/// Lowers `inst` if it belongs to this family; returns whether it did.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    use Opcode as O;
    match opcode {
        O::Tex | O::Txp | O::Txb | O::Txl | O::TexLz | O::Tex2 | O::Txb2 | O::Txl2 | O::Tg4 => {
            tex_sample(ctx, inst, opcode)
        }
        O::Sample | O::SampleB | O::SampleC | O::SampleCLz | O::SampleL | O::Gather4 => view_sample(ctx, inst, opcode),
        O::Txf | O::TxfLz => tex_fetch(ctx, inst, opcode),
        O::SampleI | O::SampleIMs => view_fetch(ctx, inst, opcode),
        O::Txq | O::TxqLz | O::Sviewinfo => size_query(ctx, inst, opcode),
        O::Ddx | O::Ddy | O::DdxFine | O::DdyFine => derivative(ctx, inst, opcode),
        O::Txd => tex_sample(ctx, inst, opcode),
        O::SampleD => view_sample(ctx, inst, opcode),
        O::Lodq | O::Lod => lod_query(ctx, inst, opcode),
        O::Txqs | O::SampleInfo => sample_count(ctx, inst, opcode),
        O::SamplePos => ctx.unsupported(
            inst.opcode.name(),
            "a resource's sample positions are nowhere a Valhall shader can read them: the only sample-position \
             table is the framebuffer's (the `sample` FAU special, which panfrost reads for gl_SamplePosition), \
             and tgsi.rst notes that no driver implements SAMPLE_POS",
        ),
        _ => return false,
    }
    true
}

// ---- Targets ----------------------------------------------------------------------------------

/// The geometry of a texture target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Buffer,
    D1,
    D2,
    D3,
    Cube,
    Rect,
}

/// A texture target, taken apart.
#[derive(Clone, Copy, Debug)]
struct Target {
    tgsi: TextureTarget,
    shape: Shape,
    array: bool,
    shadow: bool,
    msaa: bool,
}

impl Target {
    fn of(tgsi: TextureTarget) -> Option<Target> {
        use TextureTarget as T;
        let tgsi = tgsi.canonical();
        let (shape, array, shadow, msaa) = match tgsi {
            T::Buffer => (Shape::Buffer, false, false, false),
            T::Tex1D => (Shape::D1, false, false, false),
            T::Tex2D => (Shape::D2, false, false, false),
            T::Tex3D => (Shape::D3, false, false, false),
            T::Cube => (Shape::Cube, false, false, false),
            T::Rect => (Shape::Rect, false, false, false),
            T::Shadow1D => (Shape::D1, false, true, false),
            T::Shadow2D => (Shape::D2, false, true, false),
            T::ShadowRect => (Shape::Rect, false, true, false),
            T::Array1D => (Shape::D1, true, false, false),
            T::Array2D => (Shape::D2, true, false, false),
            T::ShadowArray1D => (Shape::D1, true, true, false),
            T::ShadowArray2D => (Shape::D2, true, true, false),
            T::ShadowCube => (Shape::Cube, false, true, false),
            T::Msaa2D => (Shape::D2, false, false, true),
            T::ArrayMsaa2D => (Shape::D2, true, false, true),
            T::CubeArray => (Shape::Cube, true, false, false),
            T::ShadowCubeArray => (Shape::Cube, true, true, false),
            _ => return None,
        };
        Some(Target { tgsi, shape, array, shadow, msaa })
    }

    /// Spatial coordinate components in the source (a cube map's direction has three).
    fn coords(self) -> usize {
        match self.shape {
            Shape::Buffer | Shape::D1 => 1,
            Shape::D2 | Shape::Rect => 2,
            Shape::D3 | Shape::Cube => 3,
        }
    }

    /// Dimensions a texel offset applies to.
    fn offset_dims(self) -> usize {
        match self.shape {
            Shape::Cube => 0,
            _ => self.coords(),
        }
    }

    /// Coordinate components including the array layer.
    fn components(self) -> usize {
        self.coords() + usize::from(self.array)
    }

    fn dimension(self) -> Dimension {
        match self.shape {
            Shape::Buffer | Shape::D1 => Dimension::D1d,
            Shape::D2 | Shape::Rect => Dimension::D2d,
            Shape::D3 => Dimension::D3d,
            Shape::Cube => Dimension::Cube,
        }
    }

    fn name(self) -> &'static str {
        self.tgsi.name()
    }
}

/// The target operand of a TEX-style instruction.
fn instruction_target(ctx: &mut Ctx, inst: &Instruction) -> Option<Target> {
    let found = inst.texture_target.and_then(Target::of);
    if found.is_none() {
        let what = match inst.texture_target {
            Some(t) => format!("{} on target {}", inst.opcode.name(), t.name()),
            None => format!("{} without a texture target", inst.opcode.name()),
        };
        ctx.unsupported(&what, "the target decides the coordinate layout; UNKNOWN has none");
    }
    found
}

/// The `DCL SVIEW` (or legacy `DCL RES`) declaration covering view `unit`.
fn view_declaration(ctx: &Ctx, unit: i64) -> Option<(TextureTarget, ReturnType)> {
    match &ctx.decls.view(unit)?.resource {
        Some(ResourceDecl::SamplerView { target, return_types }) => Some((*target, return_types[0])),
        _ => None,
    }
}

/// The target of a SAMPLE-style view operand, from its declaration.
fn view_target(ctx: &mut Ctx, inst: &Instruction, view: &Register) -> Option<Target> {
    if !matches!(view.file, File::SamplerView | File::LegacyResource) {
        ctx.unsupported(
            &format!("{} with a {} operand", inst.opcode.name(), view.file.name()),
            "its second operand must be a sampler view (SVIEW)",
        );
        return None;
    }
    let unit = i64::from(view.index.value);
    let found = view_declaration(ctx, unit).and_then(|(t, _)| Target::of(t));
    if found.is_none() {
        ctx.unsupported(
            &format!("{} on an undeclared sampler view", inst.opcode.name()),
            "the target comes from the view's DCL SVIEW declaration",
        );
    }
    found
}

// ---- Texture units and handles ----------------------------------------------------------------

/// How the instruction names its texture and sampler.
struct Binding {
    /// The 64-bit texture/sampler source.
    handle: Src,
    wide: bool,
    register_type: RegisterType,
}

impl Binding {
    /// Whether results are integers (no float saturation).
    fn kind(&self) -> Kind {
        if self.register_type == RegisterType::F { Kind::Float } else { Kind::Int }
    }
}

const TEXTURE_TABLE: u32 = 4;
const SAMPLER_TABLE: u32 = 3;

/// The units a register operand may name: itself, or the declared range of an indirect one.
fn units(ctx: &mut Ctx, reg: &Register) -> Vec<u32> {
    match reg.index.indirect {
        None => vec![reg.index.value.max(0) as u32],
        Some(_) => {
            let (first, last) = operand::array_range(ctx, reg.file, &reg.index);
            (first.max(0)..=last.max(0)).map(|u| u as u32).collect()
        }
    }
}

/// Records every unit `texture` may name in the metadata (target, view return type) and
/// returns the units and the result register type (from the first unit's view).
fn record_units(ctx: &mut Ctx, texture: &Register, target: Target) -> Option<(Vec<u32>, RegisterType)> {
    if texture.index.indirect.is_none() && texture.index.value < 0 {
        let what = format!("{}[{}]", texture.file.name(), texture.index.value);
        ctx.unsupported(&what, "resource indices are not negative");
        return None;
    }
    let units = units(ctx, texture);
    let mut register_type = None;
    for &unit in &units {
        let return_type = view_declaration(ctx, i64::from(unit)).map(|(_, rt)| rt);
        register_type.get_or_insert(match return_type {
            Some(ReturnType::Sint) => RegisterType::S,
            Some(ReturnType::Uint) => RegisterType::U,
            _ => RegisterType::F,
        });
        ctx.io.textures.entry(unit).or_insert_with(|| TextureBinding {
            unit,
            target: target.name().to_string(),
            return_type: return_type.map(|r| r.name().to_string()),
        });
    }
    Some((units, register_type.unwrap_or(RegisterType::F)))
}

/// Records the units of `texture` in the metadata and builds the handle. `sampler` is `None`
/// for fetches (sampler 0).
fn bind(ctx: &mut Ctx, texture: &Register, sampler: Option<&Register>, target: Target) -> Option<Binding> {
    if let Some(s) = sampler.filter(|s| s.index.indirect.is_none() && s.index.value < 0) {
        ctx.unsupported(&format!("{}[{}]", s.file.name(), s.index.value), "resource indices are not negative");
        return None;
    }
    let (_, register_type) = record_units(ctx, texture, target)?;
    let direct = |r: &Register| (r.index.indirect.is_none() && r.index.value < 1024).then_some(r.index.value as u32);
    let texture_index = direct(texture);
    let sampler_index = match sampler {
        Some(s) => direct(s),
        None => Some(0),
    };
    if let (Some(t), Some(s)) = (texture_index, sampler_index) {
        let word = TEXTURE_TABLE << 27 | t << 16 | SAMPLER_TABLE << 11 | s;
        let handle = match ctx.fau.literal_pair(word, 0) {
            Some(w) => Src::new(Operand::Uniform(w)),
            None => {
                let lo = ctx.builder().konst(word);
                let hi = ctx.builder().konst(0);
                Src::new(Operand::Pair(lo, hi))
            }
        };
        return Some(Binding { handle, wide: false, register_type });
    }
    // Wide form: full handles, sampler in the low word. TEX-style opcodes index both with the
    // same operand: compute the index once.
    let texture_index = texture.index.indirect.map(|_| operand::address(ctx, &texture.index));
    let handle_of = |ctx: &mut Ctx, reg: Option<&Register>, table: u32| -> Value {
        match reg {
            None => ctx.builder().konst(table << 24),
            Some(r) if r.index.indirect.is_none() => ctx.builder().konst(table << 24 | r.index.value as u32),
            Some(r) => {
                let index = match texture_index {
                    Some(i) if r == texture => i,
                    _ => operand::address(ctx, &r.index),
                };
                ctx.builder().or(index, Src::konst(table << 24))
            }
        }
    };
    let lo = handle_of(ctx, sampler, SAMPLER_TABLE);
    let hi = handle_of(ctx, Some(texture), TEXTURE_TABLE);
    Some(Binding { handle: Src::new(Operand::Pair(lo, hi)), wide: true, register_type })
}

// ---- Emitting the message ---------------------------------------------------------------------

/// A texture message to emit.
struct Message {
    op: Op,
    target: Target,
    shadow: bool,
    lod_mode: Option<LodMode>,
    component: Option<FetchComponent>,
    offset: bool,
    /// Texel components to return (bit c = component c).
    mask: u8,
}

fn set<E: IsaEnum>(mach: &mut Instr, key: &str, value: E) {
    let r = mach.set(key, value);
    debug_assert!(r.is_ok(), "{key}: {r:?}");
}

fn set_flag(mach: &mut Instr, key: &str, on: bool) {
    let r = mach.set_flag(key, on);
    debug_assert!(r.is_ok(), "{key}: {r:?}");
}

/// Emits the message; returns the texel components it returns (packed in component order).
fn emit(ctx: &mut Ctx, m: &Message, binding: &Binding, staging: &[Value]) -> [Option<Value>; 4] {
    let mut mach = Instr::new(m.op);
    set(&mut mach, "slot", Slot::Slot0);
    set(&mut mach, "register_type", if m.shadow { RegisterType::F } else { binding.register_type });
    set(&mut mach, "register_width", RegisterWidth::R32);
    if let Some(mask) = WriteMask::from_index(m.mask) {
        set(&mut mach, "write_mask", mask);
    }
    set(&mut mach, "dimension", m.target.dimension());
    set_flag(&mut mach, "wide_indices", binding.wide);
    set_flag(&mut mach, "array_enable", m.target.array);
    set_flag(&mut mach, "texel_offset", m.offset);
    if m.shadow {
        set_flag(&mut mach, "shadow", true);
    }
    if let Some(mode) = m.lod_mode {
        set(&mut mach, "lod_mode", mode);
    }
    if let Some(component) = m.component {
        set(&mut mach, "fetch_component", component);
    }
    let count = m.mask.count_ones() as usize;
    let list = ctx.builder().message(mach, &[binding.handle], &[staging], count);
    let mut out = [None; 4];
    let mut next = ctx.shader.get(list).iter().copied();
    for (c, slot) in out.iter_mut().enumerate() {
        if m.mask & (1 << c) != 0 {
            *slot = next.next();
        }
    }
    out
}

/// The texel components the destination needs, given the result swizzle.
fn needed(inst: &Instruction, swizzle: &[usize; 4]) -> u8 {
    inst.dst
        .first()
        .filter(|d| d.register.file != File::Null)
        .map_or(0, |d| d.write_mask.components().fold(0, |m, c| m | 1 << swizzle[c.index()]))
}

/// Writes texel component `swizzle[c]` to each enabled destination channel c.
fn write_texels(ctx: &mut Ctx, inst: &Instruction, texels: [Option<Value>; 4], swizzle: &[usize; 4], kind: Kind) {
    let mut out = [None; 4];
    for (c, slot) in out.iter_mut().enumerate() {
        *slot = texels[swizzle[c]];
    }
    write(ctx, inst, 0, out, kind);
}

const IDENTITY: [usize; 4] = [0, 1, 2, 3];

/// The swizzle of a source operand as component indices.
fn swizzle_of(inst: &Instruction, k: usize) -> [usize; 4] {
    std::array::from_fn(|c| inst.src[k].swizzle[c].index())
}

/// The constant a plain source holds: an IR constant, or a value copied from one (a `MOV` of an
/// immediate into a temporary).
fn constant(ctx: &Ctx, src: Src) -> Option<u32> {
    if !src.is_plain() {
        return None;
    }
    match src.operand {
        Operand::Const(bits) => Some(bits),
        Operand::Value(v) => {
            let inst = ctx.shader.inst(ctx.shader.values[v.index()].def?);
            (inst.kind == InstKind::Copy && inst.srcs[0].is_plain()).then_some(inst.srcs[0].operand.as_const()?)
        }
        _ => None,
    }
}

// ---- Level of detail --------------------------------------------------------------------------

/// How a sampling instruction chooses its level.
#[derive(Clone, Copy, Debug)]
enum Lod {
    Zero,
    Implicit,
    Bias(Src),
    Explicit(Src),
    /// Explicit derivatives: the gradient-descriptor vector `ddx.s, ddy.s, ddx.t, ddy.t, ddx.r,
    /// ddy.r`, its first `n` entries used (two per coordinate).
    Gradient([Src; 6], usize),
}

/// The explicit-derivative sources of TXD (`src1`, `src2`) or SAMPLE_D (`src3`, `src4`) in the
/// order of the gradient descriptor's staging vector.
fn gradient_sources(ctx: &mut Ctx, inst: &Instruction, target: Target, kx: usize, ky: usize) -> ([Src; 6], usize) {
    let mut g = [Src::konst(0); 6];
    for c in 0..target.coords() {
        g[2 * c] = fsrc(ctx, inst, kx, c);
        g[2 * c + 1] = fsrc(ctx, inst, ky, c);
    }
    (g, 2 * target.coords())
}

/// The LOD mode and the LOD/bias or gradient-descriptor words of a sampling instruction.
fn lod_setup(ctx: &mut Ctx, lod: Lod, target: Target, binding: &Binding) -> (LodMode, Vec<Value>) {
    let fragment = ctx.stage == Stage::Fragment;
    match lod {
        Lod::Zero => (LodMode::Zero, vec![]),
        Lod::Implicit if !fragment => (LodMode::Zero, vec![]),
        // No implicit LOD to bias: the bias is the LOD (Mesa's lower_invalid_implicit_lod).
        Lod::Bias(bias) if !fragment => lod_setup(ctx, Lod::Explicit(bias), target, binding),
        Lod::Implicit => {
            ctx.io.flags.needs_helper_threads = true;
            (LodMode::Computed, vec![])
        }
        Lod::Bias(bias) => {
            ctx.io.flags.needs_helper_threads = true;
            match fixed88_word(ctx, bias) {
                None => (LodMode::Computed, vec![]),
                Some(word) => (LodMode::ComputedBias, vec![word]),
            }
        }
        Lod::Explicit(level) => match fixed88_word(ctx, level) {
            None => (LodMode::Zero, vec![]),
            Some(word) => (LodMode::Explicit, vec![word]),
        },
        Lod::Gradient(g, n) => {
            let derivatives: Vec<Value> = g[..n].iter().map(|&d| to_value(ctx, d)).collect();
            let flags = ["derivative_enable", "lod_clamp_disable", "lod_bias_disable"];
            let descriptor = gradient_message(ctx, target, binding, &derivatives, 0b11, &flags);
            (LodMode::Grdesc, descriptor)
        }
    }
}

/// Emits a `TEX_GRADIENT` (u32 results, the components of `mask`, the given control flags) and
/// returns its result registers.
fn gradient_message(
    ctx: &mut Ctx,
    target: Target,
    binding: &Binding,
    staging: &[Value],
    mask: u8,
    flags: &[&str],
) -> Vec<Value> {
    let mut mach = Instr::new(Op::TEX_GRADIENT);
    set(&mut mach, "slot", Slot::Slot0);
    set(&mut mach, "register_type", RegisterType::U);
    set(&mut mach, "register_width", RegisterWidth::R32);
    if let Some(m) = WriteMask::from_index(mask) {
        set(&mut mach, "write_mask", m);
    }
    set(&mut mach, "dimension", target.dimension());
    set_flag(&mut mach, "wide_indices", binding.wide);
    for flag in flags {
        set_flag(&mut mach, flag, true);
    }
    let list = ctx.builder().message(mach, &[binding.handle], &[staging], mask.count_ones() as usize);
    ctx.shader.get(list).to_vec()
}

/// The signed 8.8 word of a float LOD or bias (`lod_to_fixed88`), or `None` when it is the
/// constant 0.
fn fixed88_word(ctx: &mut Ctx, value: Src) -> Option<Value> {
    if let Some(bits) = constant(ctx, Src { neg: false, abs: false, ..value }) {
        let mut x = f32::from_bits(bits);
        if value.abs {
            x = x.abs();
        }
        if value.neg {
            x = -x;
        }
        let fixed = lod_to_fixed88(x);
        return (fixed != 0).then(|| ctx.builder().konst(fixed as u32 & 0xFFFF));
    }
    let mut scale = Instr::new(Op::FMA_F32);
    let r = scale.set_clamp(Clamp::ClampM1_1);
    debug_assert!(r.is_ok());
    let mut b = ctx.builder();
    let scaled = b.alu(scale, &[value, Src::f32(0.0625), Src::konst(NEG_ZERO)]);
    let fixed = b.fmul(scaled, Src::f32(4096.0));
    let int = b.f2i(true, fixed, RoundMode::Rtz);
    Some(b.and(int, Src::konst(0xFFFF)))
}

// ---- Coordinates ------------------------------------------------------------------------------

/// The offset word: texel offsets in bytes 0–2, the sample index in byte 2, the level in byte 3;
/// `Some(None)` when it is zero (no word, no `.texel_offset`), `None` when the offsets are
/// rejected.
fn offset_word(
    ctx: &mut Ctx,
    inst: &Instruction,
    target: Target,
    sample: Option<Src>,
    level: Option<Src>,
) -> Option<Option<Value>> {
    let mut fixed_bits = 0u32;
    let mut terms: Vec<Value> = Vec::new();
    let mut byte = |ctx: &mut Ctx, value: Src, shift: u32, mask: u32| match constant(ctx, value) {
        Some(bits) => fixed_bits |= (bits << shift) & mask,
        None => {
            let v = to_value(ctx, value);
            let term =
                ctx.builder().shift_op(Op::LSHIFT_AND_I32, Src::new(v), byte0(Src::konst(shift)), Src::konst(mask));
            terms.push(term);
        }
    };
    if inst.texture_offsets.len() > 1 {
        ctx.unsupported(
            &format!("{} with {} texel offsets", inst.opcode.name(), inst.texture_offsets.len()),
            "one offset applies to the whole footprint (independent gather offsets are lowered before TGSI)",
        );
        return None;
    }
    if let Some(offset) = inst.texture_offsets.first() {
        match target.shape {
            Shape::Cube | Shape::Buffer => {
                ctx.unsupported(
                    &format!("texel offsets on a {} texture", target.name()),
                    "GL defines texel offsets only for 1D, 2D, 3D and rectangle textures",
                );
                return None;
            }
            _ => {}
        }
        let reg = Register { file: offset.file, dimension: None, index: Index::direct(offset.index) };
        for j in 0..target.offset_dims() {
            let operand = operand::base_operand(ctx, &reg, offset.swizzle[j]);
            byte(ctx, Src::new(operand), 8 * j as u32, 0xFF << (8 * j));
        }
    }
    // The sample index (byte 2) and the level (byte 3) as min(value, 255) unsigned: negative and
    // large values stay out of range (no sample or level has index 255).
    for (value, shift) in [(sample, 16), (level, 24)] {
        let Some(value) = value else { continue };
        match constant(ctx, value) {
            Some(bits) => fixed_bits |= bits.min(255) << shift,
            None => {
                let l = to_value(ctx, value);
                let clamped = ctx.builder().csel(
                    false,
                    Condition::Gt,
                    Src::new(l),
                    Src::konst(255),
                    Src::konst(255),
                    Src::new(l),
                );
                terms.push(ctx.builder().shl(clamped, Src::konst(shift)));
            }
        }
    }
    let mut word: Option<Value> = None;
    for term in terms {
        word = Some(match word {
            None if fixed_bits == 0 => term,
            None => ctx.builder().or(term, Src::konst(fixed_bits)),
            Some(w) => ctx.builder().or(term, w),
        });
    }
    if word.is_none() && fixed_bits != 0 {
        word = Some(ctx.builder().konst(fixed_bits));
    }
    Some(word)
}

/// Cube-map face selection and projection (§C.12.5), equal to `exec::texture::cube_project`
/// (module docs); returns X (`face << 29` over the low 29 bits of s) and t.
fn cube_coords(ctx: &mut Ctx, x: Value, y: Value, z: Value) -> (Value, Value) {
    let mut b = ctx.builder();
    let (x, y, z) = (Src::new(x), Src::new(y), Src::new(z));
    let ma = b.alu(Instr::new(Op::CUBEFACE1), &[x, y, z]);
    // The face index in bits 29..31, as the texture instruction reads it.
    let face_word = b.alu(Instr::new(Op::CUBEFACE2_V9), &[x, y, z]);
    // ±X: sc = ∓z, tc = −y.  ±Y: sc = x, tc = ±z.  ±Z: sc = ±x, tc = −y.
    let sc = b.alu(Instr::new(Op::CUBE_SSEL), &[z, x, Src::new(face_word)]);
    let tc = b.alu(Instr::new(Op::CUBE_TSEL), &[y, z, Src::new(face_word)]);
    let rcp = b.frcp(ma);
    let half_rcp = b.fmul(rcp, Src::f32(0.5));
    let project = |b: &mut crate::ir::builder::Builder, c: Value| {
        let mut fma = Instr::new(Op::FMA_F32);
        let r = fma.set_clamp(Clamp::Clamp0_1);
        debug_assert!(r.is_ok());
        b.alu(fma, &[Src::new(c), Src::new(half_rcp), Src::f32(0.5)])
    };
    let s = project(&mut b, sc);
    let t = project(&mut b, tc);
    let mut mux = Instr::new(Op::MUX_I32);
    set(&mut mux, "mux", Mux::Bit);
    let packed = b.alu(mux, &[Src::new(s), Src::new(face_word), Src::konst(0x1FFF_FFFF)]);
    (packed, t)
}

// ---- Sampling and gathering -------------------------------------------------------------------

/// What a sampling-style instruction does.
#[derive(Clone, Copy, Debug)]
enum Sampling {
    Single(Lod),
    Gather(u8),
}

/// A sampling or gather request, its sources already chosen.
struct SampleSpec {
    target: Target,
    shadow: bool,
    op: Sampling,
    /// Spatial coordinates (a cube map's direction), then the layer.
    coords: Vec<Src>,
    layer: Option<Src>,
    reference: Option<Src>,
    /// TXP's divisor.
    project: Option<Src>,
    swizzle: [usize; 4],
}

fn sample(ctx: &mut Ctx, inst: &Instruction, spec: SampleSpec, binding: Binding) {
    let mask = needed(inst, &spec.swizzle);
    if mask == 0 {
        return;
    }
    let (mut coords, mut reference) = (spec.coords, spec.reference);
    if let Some(q) = spec.project {
        let rcp = ctx.builder().frcp(q);
        for c in coords.iter_mut().chain(reference.iter_mut()) {
            *c = Src::new(ctx.builder().fmul(*c, rcp));
        }
    }
    let mut staging: Vec<Value> = Vec::new();
    if spec.target.shape == Shape::Cube {
        let dir: Vec<Value> = coords.iter().map(|&c| to_value(ctx, c)).collect();
        let (x, t) = cube_coords(ctx, dir[0], dir[1], dir[2]);
        staging.extend([x, t]);
    } else {
        for &c in &coords {
            staging.push(to_value(ctx, c));
        }
    }
    for src in [spec.layer, reference].into_iter().flatten() {
        staging.push(to_value(ctx, src));
    }
    let Some(offset) = offset_word(ctx, inst, spec.target, None, None) else { return };
    staging.extend(offset);
    let (op, lod_mode, component) = match spec.op {
        Sampling::Single(lod) => {
            let (mode, words) = lod_setup(ctx, lod, spec.target, &binding);
            staging.extend(words);
            (Op::TEX_SINGLE, Some(mode), None)
        }
        Sampling::Gather(c) => (Op::TEX_GATHER, None, FetchComponent::from_index(c)),
    };
    let message =
        Message { op, target: spec.target, shadow: spec.shadow, lod_mode, component, offset: offset.is_some(), mask };
    let texels = emit(ctx, &message, &binding, &staging);
    let kind = if spec.shadow { Kind::Float } else { binding.kind() };
    write_texels(ctx, inst, texels, &spec.swizzle, kind);
}

/// Rejects sampling (as opposed to fetching) targets that have no filtering.
fn check_sampleable(ctx: &mut Ctx, inst: &Instruction, target: Target) -> bool {
    let why = match target.shape {
        Shape::Buffer => "buffer textures can only be fetched (TXF, SAMPLE_I)",
        _ if target.msaa => "multisample textures can only be fetched (TXF, SAMPLE_I_MS)",
        _ => return true,
    };
    ctx.unsupported(&format!("{} on a {} texture", inst.opcode.name(), target.name()), why);
    false
}

/// Rejects gathers outside 2D, 2D array and cube (array) targets (tgsi.rst).
fn check_gatherable(ctx: &mut Ctx, inst: &Instruction, target: Target) -> bool {
    if matches!(target.shape, Shape::D2 | Shape::Cube) && !target.msaa {
        return true;
    }
    ctx.unsupported(
        &format!("{} on a {} texture", inst.opcode.name(), target.name()),
        "gathers work on 2D, 2D array, cube and cube array textures only",
    );
    false
}

/// TEX, TXP, TXB, TXL, TEX_LZ, TEX2, TXB2, TXL2, TG4.
fn tex_sample(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    use Opcode as O;
    let Some(target) = instruction_target(ctx, inst) else { return };
    if !check_sampleable(ctx, inst, target) {
        return;
    }
    let n = target.components();
    let reject = |ctx: &mut Ctx, why: &str| {
        ctx.unsupported(&format!("{} on a {} texture", inst.opcode.name(), target.name()), why);
    };
    match opcode {
        O::Tex if target.shadow && n == 4 => {
            return reject(ctx, "the reference of a shadow cube array does not fit in src0; TGSI uses TEX2");
        }
        O::Txd if target.shadow && n == 4 => {
            return reject(
                ctx,
                "the reference of a shadow cube array does not fit in src0 and TXD has no further operand for it \
                 (GLSL has no textureGrad on samplerCubeArrayShadow)",
            );
        }
        O::Txb | O::Txl if n == 4 => {
            return reject(ctx, "src0.w holds the layer of a cube array; TGSI uses TXB2/TXL2");
        }
        O::Txb | O::Txl if target.shadow && n == 3 => {
            return reject(
                ctx,
                "TXB/TXL read the shadow reference from src0.z (tgsi.rst), which holds a coordinate or the \
                 layer of this target; TGSI uses TXB2/TXL2",
            );
        }
        O::Txp if target.array || target.shape == Shape::Cube => {
            return reject(ctx, "projective lookups exist only for non-array, non-cube targets");
        }
        O::Tg4 if !check_gatherable(ctx, inst, target) => return,
        _ => {}
    }
    let sampler_k = inst.src.len() - 1;
    let sampler = inst.src[sampler_k].register;
    let coords: Vec<Src> = (0..target.coords()).map(|j| fsrc(ctx, inst, 0, j)).collect();
    let layer = target.array.then(|| fsrc(ctx, inst, 0, target.coords()));
    let reference = target.shadow.then(|| match opcode {
        O::Txb | O::Txl => fsrc(ctx, inst, 0, 2),
        O::Txb2 | O::Txl2 if n == 4 => fsrc(ctx, inst, 1, 1),
        _ if n == 4 => fsrc(ctx, inst, 1, 0),
        _ if n == 3 => fsrc(ctx, inst, 0, 3),
        _ => fsrc(ctx, inst, 0, 2),
    });
    let op = match opcode {
        O::Tex | O::Txp | O::Tex2 => Sampling::Single(Lod::Implicit),
        O::TexLz => Sampling::Single(Lod::Zero),
        O::Txb => Sampling::Single(Lod::Bias(fsrc(ctx, inst, 0, 3))),
        O::Txl => Sampling::Single(Lod::Explicit(fsrc(ctx, inst, 0, 3))),
        O::Txb2 => Sampling::Single(Lod::Bias(fsrc(ctx, inst, 1, 0))),
        O::Txl2 => Sampling::Single(Lod::Explicit(fsrc(ctx, inst, 1, 0))),
        O::Txd => {
            let Some(lod) = derivative_lod(ctx, inst, target, &sampler, 1, 2) else { return };
            Sampling::Single(lod)
        }
        _ => {
            // TG4: the component is src1.x, a constant (unused by shadow gathers).
            let component = if target.shadow {
                0
            } else {
                let src = operand::base_operand(ctx, &inst.src[1].register, inst.src[1].swizzle[0]);
                match constant(ctx, Src::new(src)) {
                    Some(c) if c < 4 => c as u8,
                    _ => {
                        return ctx.unsupported(
                            "TG4 with a component that is not a constant 0–3",
                            "the gathered component is a field of the instruction",
                        );
                    }
                }
            };
            Sampling::Gather(component)
        }
    };
    let project = (opcode == O::Txp).then(|| fsrc(ctx, inst, 0, 3));
    let Some(binding) = bind(ctx, &sampler, Some(&sampler), target) else { return };
    let spec = SampleSpec { target, shadow: target.shadow, op, coords, layer, reference, project, swizzle: IDENTITY };
    sample(ctx, inst, spec, binding);
}

/// SAMPLE, SAMPLE_B, SAMPLE_C, SAMPLE_C_LZ, SAMPLE_L, GATHER4.
fn view_sample(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    use Opcode as O;
    let view = inst.src[1].register;
    let Some(target) = view_target(ctx, inst, &view) else { return };
    if !check_sampleable(ctx, inst, target) {
        return;
    }
    if opcode == O::Gather4 && !check_gatherable(ctx, inst, target) {
        return;
    }
    let sampler = inst.src[2].register;
    let coords: Vec<Src> = (0..target.coords()).map(|j| fsrc(ctx, inst, 0, j)).collect();
    let layer = target.array.then(|| fsrc(ctx, inst, 0, target.coords()));
    let shadow = matches!(opcode, O::SampleC | O::SampleCLz);
    let reference = shadow.then(|| fsrc(ctx, inst, 3, 0));
    let op = match opcode {
        O::Sample | O::SampleC => Sampling::Single(Lod::Implicit),
        O::SampleCLz => Sampling::Single(Lod::Zero),
        O::SampleB => Sampling::Single(Lod::Bias(fsrc(ctx, inst, 3, 0))),
        O::SampleL => Sampling::Single(Lod::Explicit(fsrc(ctx, inst, 3, 0))),
        O::SampleD => {
            let Some(lod) = derivative_lod(ctx, inst, target, &view, 3, 4) else { return };
            Sampling::Single(lod)
        }
        _ => Sampling::Gather(inst.src[2].swizzle[0].index() as u8),
    };
    let Some(binding) = bind(ctx, &view, Some(&sampler), target) else { return };
    let spec = SampleSpec { target, shadow, op, coords, layer, reference, project: None, swizzle: swizzle_of(inst, 1) };
    sample(ctx, inst, spec, binding);
}

/// The level of detail of TXD/SAMPLE_D (derivatives in sources `kx`, `ky`): a gradient
/// descriptor, except on cube maps, where the production compiler never reaches the texture
/// unit with derivatives (panfrost's `lower_txd_cube_map`) but samples with the explicit LOD of
/// [`cube_gradient_lod`].
fn derivative_lod(
    ctx: &mut Ctx,
    inst: &Instruction,
    target: Target,
    texture: &Register,
    kx: usize,
    ky: usize,
) -> Option<Lod> {
    let (g, n) = gradient_sources(ctx, inst, target, kx, ky);
    if target.shape != Shape::Cube {
        return Some(Lod::Gradient(g, n));
    }
    let (units, _) = record_units(ctx, texture, target)?;
    let width = sysval_word(ctx, inst, "texture_size", texture, &units, 0)?;
    let p = [0, 1, 2].map(|c| fsrc(ctx, inst, 0, c));
    Some(Lod::Explicit(Src::new(cube_gradient_lod(ctx, p, g, width))))
}

/// The LOD of a cube-map lookup with explicit derivatives of the direction `p` (Mesa's
/// `lower_gradient_cube_map`, instruction for instruction the interpreter's
/// `cube_gradient_lod`): with Q the direction reordered so that Q.z is the major axis (z if
/// `|z| ≥ max(|x|, |y|)`, else y if `|y| ≥ max(|x|, |z|)`, else x) and dQ likewise,
/// `d = rcp(Q.z) · (dQ.xy − (Q.xy · rcp(Q.z)) · dQ.z)` per direction, `M = max(d_x·d_x,
/// d_y·d_y)` and `lod = 0.5 · log2(L · (L · M)) − 1` with L the face width.
fn cube_gradient_lod(ctx: &mut Ctx, p: [Src; 3], g: [Src; 6], width: Src) -> Value {
    let p = p.map(|c| to_value(ctx, c));
    let g = g.map(|c| to_value(ctx, c));
    let mut b = ctx.builder();
    let mag = |b: &mut crate::ir::builder::Builder, v: Value| b.fadd(Src::new(v).absolute(), Src::konst(NEG_ZERO));
    let (ax, ay, az) = (mag(&mut b, p[0]), mag(&mut b, p[1]), mag(&mut b, p[2]));
    let max_xy = b.fmax(ax, ay);
    let max_xz = b.fmax(ax, az);
    // The component of `v` that becomes Q.<k>: (z major: x y z, y major: x z y, x major: y z x).
    let pick = |b: &mut crate::ir::builder::Builder, v: [Value; 3], k: usize| -> Value {
        let (z_major, y_major, x_major) = [(0, 0, 1), (1, 2, 2), (2, 1, 0)][k];
        let not_z = if y_major == x_major {
            v[y_major]
        } else {
            b.csel_f32(Condition::Ge, Src::new(ay), Src::new(max_xz), Src::new(v[y_major]), Src::new(v[x_major]))
        };
        b.csel_f32(Condition::Ge, Src::new(az), Src::new(max_xy), Src::new(v[z_major]), Src::new(not_z))
    };
    let q = [0, 1, 2].map(|k| pick(&mut b, p, k));
    let rcp = b.frcp(q[2]);
    let scaled = [b.fmul(q[0], rcp), b.fmul(q[1], rcp)];
    let mut squares = Vec::new();
    for d in [[g[0], g[2], g[4]], [g[1], g[3], g[5]]] {
        let dq = [0, 1, 2].map(|k| pick(&mut b, d, k));
        let e: Vec<Value> = (0..2)
            .map(|i| {
                let inner = b.fma(scaled[i], Src::new(dq[2]).negated(), dq[i]);
                b.fmul(rcp, inner)
            })
            .collect();
        let sq = b.fmul(e[0], e[0]);
        squares.push(b.fma(e[1], e[1], sq));
    }
    let m = b.fmax(squares[0], squares[1]);
    let l = b.i2f(false, width);
    let lm = b.fmul(l, m);
    let llm = b.fmul(l, lm);
    let lg = super::transcendental::lg2(ctx, Src::new(llm));
    ctx.builder().fma(lg, Src::f32(0.5), Src::f32(-1.0))
}

// ---- Queries of the level of detail and of the sample count ---------------------------------

/// LODQ (`SAMP` operand and target) and LOD (`SVIEW`, `SAMP`): x = the level the lookup
/// accesses (`Texture::query_lod`: nearest level of the clamped LOD), y = the unclamped
/// LOD; LOD's z, w are 0 (LODQ's are undefined; 0 too). In fragment shaders two `TEX_GRADIENT`s
/// with force-delta-enable take the quad's implicit LOD of the coordinates (no layer, §C.12.4),
/// the second with lod-clamp-disable; each 8.8 result becomes `S16_TO_F32 · 1/256`; x is
/// rounded as `FROUND.rtn(v/256 + 0.5)`, ties up like the model's level selection (Mesa
/// rounds to nearest even). Elsewhere there is no implicit LOD and both are 0 (Mesa's
/// `lower_invalid_implicit_lod`).
fn lod_query(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    let (target, texture, sampler) = if opcode == Opcode::Lod {
        let view = inst.src[1].register;
        let Some(target) = view_target(ctx, inst, &view) else { return };
        (target, view, inst.src[2].register)
    } else {
        let Some(target) = instruction_target(ctx, inst) else { return };
        let k = inst.src.len() - 1;
        (target, inst.src[k].register, inst.src[k].register)
    };
    if target.shape == Shape::Buffer || target.msaa {
        return ctx.unsupported(
            &format!("{} on a {} texture", inst.opcode.name(), target.name()),
            "buffer and multisample textures have no mip levels, hence no level of detail",
        );
    }
    let Some(binding) = bind(ctx, &texture, Some(&sampler), target) else { return };
    let mask = needed(inst, &IDENTITY);
    let mut out = [None; 4];
    for (c, slot) in out.iter_mut().enumerate().skip(2) {
        if mask & (1 << c) != 0 {
            *slot = Some(ctx.builder().konst(0));
        }
    }
    if mask & 3 != 0 && ctx.stage != Stage::Fragment {
        for (c, slot) in out.iter_mut().enumerate().take(2) {
            if mask & (1 << c) != 0 {
                *slot = Some(ctx.builder().konst(0));
            }
        }
    } else if mask & 3 != 0 {
        ctx.io.flags.needs_helper_threads = true;
        let coords: Vec<Value> = (0..target.coords())
            .map(|j| {
                let c = fsrc(ctx, inst, 0, j);
                to_value(ctx, c)
            })
            .collect();
        let staging = if target.shape == Shape::Cube {
            let (x, t) = cube_coords(ctx, coords[0], coords[1], coords[2]);
            vec![x, t]
        } else {
            coords
        };
        let fixed = |ctx: &mut Ctx, clamp_disabled: bool| -> Value {
            let flags: &[&str] =
                if clamp_disabled { &["force_delta_enable", "lod_clamp_disable"] } else { &["force_delta_enable"] };
            let word = gradient_message(ctx, target, &binding, &staging, 1, flags)[0];
            ctx.builder().op(Op::S16_TO_F32, &[Src::new(word)])
        };
        if mask & 1 != 0 {
            let lod = fixed(ctx, false);
            let mut b = ctx.builder();
            let half_up = b.fma(lod, Src::f32(1.0 / 256.0), Src::f32(0.5));
            out[0] = Some(b.fround(half_up, RoundMode::Rtn));
        }
        if mask & 2 != 0 {
            let lod = fixed(ctx, true);
            out[1] = Some(ctx.builder().fmul(lod, Src::f32(1.0 / 256.0)));
        }
    }
    write(ctx, inst, 0, out, Kind::Float);
}

/// TXQS (`SAMP` operand and target) and SAMPLE_INFO (`SVIEW` operand, its swizzle applied):
/// `(n, 0, 0, 0)` with n the sample count, the `texture_samples.U` sysval of multisample
/// targets (docs/metadata.md) and 1 for the others (tgsi.rst). TXQS's y, z, w are undefined
/// (0 here).
fn sample_count(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    let (target, texture, swizzle) = if opcode == Opcode::SampleInfo {
        let source = inst.src[0].register;
        if !matches!(source.file, File::SamplerView | File::LegacyResource) {
            return ctx.unsupported(
                &format!("SAMPLE_INFO of a {} operand (the render target)", source.file.name()),
                "the render target's sample count is not among the values the driver provides (docs/metadata.md)",
            );
        }
        let Some(target) = view_target(ctx, inst, &source) else { return };
        (target, source, swizzle_of(inst, 0))
    } else {
        let Some(target) = instruction_target(ctx, inst) else { return };
        let k = inst.src.len() - 1;
        (target, inst.src[k].register, IDENTITY)
    };
    let Some((units, _)) = record_units(ctx, &texture, target) else { return };
    let mask = needed(inst, &swizzle);
    if mask == 0 {
        return;
    }
    let mut counts = [None; 4];
    for (c, slot) in counts.iter_mut().enumerate() {
        if mask & (1 << c) == 0 {
            continue;
        }
        *slot = Some(if c > 0 {
            ctx.builder().konst(0)
        } else if target.msaa {
            let Some(n) = sysval_word(ctx, inst, "texture_samples", &texture, &units, 0) else { return };
            to_value(ctx, n)
        } else {
            ctx.builder().konst(1)
        });
    }
    write_texels(ctx, inst, counts, &swizzle, Kind::Int);
}

// ---- Fetches ----------------------------------------------------------------------------------

/// Where a fetch takes its level or sample from.
#[derive(Clone, Copy, Debug)]
enum FetchLevel {
    Zero,
    Level(Src),
    Sample(Src),
}

fn fetch(ctx: &mut Ctx, inst: &Instruction, target: Target, level: FetchLevel, binding: Binding, swizzle: [usize; 4]) {
    let mask = needed(inst, &swizzle);
    if mask == 0 {
        return;
    }
    let (sample, level) = match level {
        FetchLevel::Zero => (None, None),
        FetchLevel::Level(l) => (None, Some(l)),
        FetchLevel::Sample(s) => (Some(s), None),
    };
    let mut staging: Vec<Value> = Vec::new();
    for j in 0..target.components() {
        let c = isrc(ctx, inst, 0, j);
        staging.push(to_value(ctx, c));
    }
    let Some(offset) = offset_word(ctx, inst, target, sample, level) else { return };
    staging.extend(offset);
    let message = Message {
        op: Op::TEX_FETCH,
        target,
        shadow: false,
        lod_mode: None,
        component: None,
        offset: offset.is_some(),
        mask,
    };
    let texels = emit(ctx, &message, &binding, &staging);
    let kind = binding.kind();
    write_texels(ctx, inst, texels, &swizzle, kind);
}

/// Rejects fetches from cube and shadow targets (tgsi.rst: "may not be a CUBE or SHADOW").
fn check_fetchable(ctx: &mut Ctx, inst: &Instruction, target: Target) -> bool {
    if target.shape != Shape::Cube && !target.shadow {
        return true;
    }
    ctx.unsupported(
        &format!("{} on a {} texture", inst.opcode.name(), target.name()),
        "tgsi.rst: the texture of a texel fetch may not be a CUBE or SHADOW target",
    );
    false
}

/// The level or sample operand of a fetch: src0.w, except for buffers (ignored) and
/// multisample targets (the sample index).
fn fetch_level(ctx: &mut Ctx, inst: &Instruction, target: Target, lz: bool) -> FetchLevel {
    if target.shape == Shape::Buffer {
        return FetchLevel::Zero;
    }
    if target.msaa {
        return FetchLevel::Sample(isrc(ctx, inst, 0, 3));
    }
    if lz { FetchLevel::Zero } else { FetchLevel::Level(isrc(ctx, inst, 0, 3)) }
}

/// TXF, TXF_LZ.
fn tex_fetch(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    let Some(target) = instruction_target(ctx, inst) else { return };
    if !check_fetchable(ctx, inst, target) {
        return;
    }
    let level = fetch_level(ctx, inst, target, opcode == Opcode::TxfLz);
    let sampler = inst.src[1].register;
    let Some(binding) = bind(ctx, &sampler, None, target) else { return };
    fetch(ctx, inst, target, level, binding, IDENTITY);
}

/// SAMPLE_I, SAMPLE_I_MS.
fn view_fetch(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    let view = inst.src[1].register;
    let Some(target) = view_target(ctx, inst, &view) else { return };
    if !check_fetchable(ctx, inst, target) {
        return;
    }
    let level = match opcode {
        Opcode::SampleIMs if inst.src.len() < 3 => {
            return ctx.unsupported(
                inst.opcode.name(),
                "the Mesa 7.11–8.0 form has no sample-index operand, and where it took the sample from is not \
                 recorded",
            );
        }
        Opcode::SampleIMs if !target.msaa => {
            return ctx.unsupported(
                &format!("{} on a {} view", inst.opcode.name(), target.name()),
                "it fetches one sample of a multisample view",
            );
        }
        Opcode::SampleIMs => FetchLevel::Sample(isrc(ctx, inst, 2, 0)),
        _ if target.msaa => FetchLevel::Zero,
        _ => fetch_level(ctx, inst, target, false),
    };
    let Some(binding) = bind(ctx, &view, None, target) else { return };
    fetch(ctx, inst, target, level, binding, swizzle_of(inst, 1));
}

// ---- Size queries -----------------------------------------------------------------------------

/// The sysval name of a texture unit's size vector (`texture_size.U`) or sample count
/// (`texture_samples.U`), interned.
fn sysval_name(prefix: &'static str, unit: u32) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashMap<(&'static str, u32), &'static str>>> = OnceLock::new();
    let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    names.entry((prefix, unit)).or_insert_with(|| Box::leak(format!("{prefix}.{unit}").into_boxed_str()))
}

/// Word `component` of the sysval vector `prefix.U` of the texture `texture` names, selected by
/// its index when it is indirect (`units` as `record_units` returns them).
fn sysval_word(
    ctx: &mut Ctx,
    inst: &Instruction,
    prefix: &'static str,
    texture: &Register,
    units: &[u32],
    component: u32,
) -> Option<Src> {
    let mut words = Vec::new();
    for &unit in units {
        match ctx.fau.sysval(sysval_name(prefix, unit), component) {
            Some(w) => words.push(Operand::Uniform(w)),
            None => {
                ctx.unsupported(inst.opcode.name(), "the push-constant table is full");
                return None;
            }
        }
    }
    Some(match texture.index.indirect {
        None => Src::new(words[0]),
        Some(_) => {
            let index = operand::address(ctx, &texture.index);
            Src::new(operand::select_chain(ctx, index, i64::from(units[0]), &words))
        }
    })
}

/// TXQ, TXQ_LZ, SVIEWINFO: `Texture::query_size` from the `texture_size.U` sysval.
fn size_query(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    let (target, texture, level) = match opcode {
        Opcode::Sviewinfo => {
            let view = inst.src[1].register;
            let Some(target) = view_target(ctx, inst, &view) else { return };
            (target, view, Some(isrc(ctx, inst, 0, 0)))
        }
        _ => {
            let Some(target) = instruction_target(ctx, inst) else { return };
            let k = inst.src.len() - 1;
            let level = (opcode == Opcode::Txq).then(|| isrc(ctx, inst, 0, 0));
            (target, inst.src[k].register, level)
        }
    };
    let mask = needed(inst, &IDENTITY);
    // Record the units like any other access (the driver supplies the sysval from them).
    let Some((units, _)) = record_units(ctx, &texture, target) else { return };
    if mask == 0 {
        return;
    }
    let word = |ctx: &mut Ctx, component: u32| sysval_word(ctx, inst, "texture_size", &texture, &units, component);
    #[derive(Clone, Copy)]
    enum Part {
        Zero,
        One,
        Size(u32),
        Layers,
        Levels,
    }
    let parts: [Part; 4] = match (target.shape, target.array) {
        (Shape::Buffer, _) => [Part::Size(0), Part::Zero, Part::Zero, Part::One],
        (Shape::D1, false) => [Part::Size(0), Part::Zero, Part::Zero, Part::Levels],
        (Shape::D1, true) => [Part::Size(0), Part::Layers, Part::Zero, Part::Levels],
        (Shape::D3, _) => [Part::Size(0), Part::Size(1), Part::Size(2), Part::Levels],
        (_, false) => [Part::Size(0), Part::Size(1), Part::Zero, Part::Levels],
        (_, true) => [Part::Size(0), Part::Size(1), Part::Layers, Part::Levels],
    };
    let sized = (0..4).any(|c| mask & (1 << c) != 0 && matches!(parts[c], Part::Size(_)));
    // Shift amount min(level, 31), the level taken as unsigned.
    let shift: Option<Src> = match level {
        _ if target.shape == Shape::Buffer || !sized => None,
        None => None,
        Some(l) => match constant(ctx, l) {
            Some(0) => None,
            Some(bits) => Some(Src::konst(bits.min(31))),
            None => {
                let l = Src::new(to_value(ctx, l));
                Some(Src::new(ctx.builder().csel(false, Condition::Gt, l, Src::konst(31), Src::konst(31), l)))
            }
        },
    };
    // max(size >> shift, 1)
    let minified = |ctx: &mut Ctx, size: Src| -> Value {
        match shift {
            None => to_value(ctx, size),
            Some(s) => {
                let shifted = ctx.builder().shr(false, size, s);
                ctx.builder().csel(
                    false,
                    Condition::Eq,
                    Src::new(shifted),
                    Src::konst(0),
                    Src::konst(1),
                    Src::new(shifted),
                )
            }
        }
    };
    let mut out = [None; 4];
    for c in 0..4 {
        if mask & (1 << c) == 0 {
            continue;
        }
        out[c] = Some(match parts[c] {
            Part::Zero => ctx.builder().konst(0),
            Part::One => ctx.builder().konst(1),
            Part::Size(component) => {
                let Some(size) = word(ctx, component) else { return };
                minified(ctx, size)
            }
            Part::Layers | Part::Levels => {
                // The layer count follows the dimensions: y for 1D arrays, z otherwise.
                let component = match parts[c] {
                    Part::Layers if target.shape == Shape::D1 => 1,
                    Part::Layers => 2,
                    _ => 3,
                };
                let Some(w) = word(ctx, component) else { return };
                to_value(ctx, w)
            }
        });
    }
    // SVIEWINFO of a level outside [0, levels) (unsigned) gives 0 for the sizes and the layer
    // count (tgsi.rst); the level count stays.
    let checked = opcode == Opcode::Sviewinfo && target.shape != Shape::Buffer;
    if let Some(l) = level.filter(|&l| checked && constant(ctx, l) != Some(0)) {
        let sizes = (0..3).filter(|&c| out[c].is_some() && matches!(parts[c], Part::Size(_) | Part::Layers));
        let sizes: Vec<usize> = sizes.collect();
        if !sizes.is_empty() {
            let Some(levels) = word(ctx, 3) else { return };
            for c in sizes {
                let Some(v) = out[c] else { continue };
                out[c] = Some(ctx.builder().csel(false, Condition::Lt, l, levels, Src::new(v), Src::konst(0)));
            }
        }
    }
    write(ctx, inst, 0, out, Kind::Int);
}

// ---- Derivatives ------------------------------------------------------------------------------

/// DDX, DDY (coarse: lanes 1 − 0 and 2 − 0 of the quad), DDX_FINE, DDY_FINE (the lane's own row
/// or column), as `CLPER.i32.subgroup4` of both lanes and an `FADD`.
fn derivative(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    if ctx.stage != Stage::Fragment {
        return ctx.unsupported(inst.opcode.name(), "derivatives exist only across the quad of a fragment shader");
    }
    ctx.io.flags.needs_helper_threads = true;
    let mask = needed(inst, &IDENTITY);
    if mask == 0 {
        return;
    }
    // Lane bit 0 is x, bit 1 is y.
    let (axis, fine) = match opcode {
        Opcode::Ddx => (1, false),
        Opcode::Ddy => (2, false),
        Opcode::DdxFine => (1, true),
        _ => (2, true),
    };
    let (first, second) = if fine {
        let lane_id = Operand::Special(Special::of("lane_id", false));
        let mut b = ctx.builder();
        let lane = b.copy(lane_id);
        let first = b.and(lane, Src::konst(3 & !axis));
        let second = b.iadd_imm(first, axis);
        (Src::new(first), Src::new(second))
    } else {
        (Src::konst(0), Src::konst(axis))
    };
    let mut done: [Option<Value>; 4] = [None; 4];
    let mut out = [None; 4];
    for (c, slot) in out.iter_mut().enumerate() {
        if mask & (1 << c) == 0 {
            continue;
        }
        let component = inst.src[0].swizzle[c].index();
        if let Some(d) = done[component] {
            *slot = Some(d);
            continue;
        }
        let src = fsrc(ctx, inst, 0, c);
        let v = to_value(ctx, src);
        let read = |ctx: &mut Ctx, lane: Src| {
            let mut clper = Instr::new(Op::CLPER_I32);
            set(&mut clper, "subgroup_size", SubgroupSize::Subgroup4);
            ctx.builder().alu(clper, &[Src::new(v), lane.widen(LANE_B00)])
        };
        let a = read(ctx, first);
        let b = read(ctx, second);
        let d = ctx.builder().fadd(b, Src::new(a).negated());
        done[component] = Some(d);
        *slot = Some(d);
    }
    write(ctx, inst, 0, out, Kind::Float);
}
