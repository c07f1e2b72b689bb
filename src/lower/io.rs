//! The per-stage ABI (docs/metadata.md): inputs, system values, constants, outputs, kill and
//! barriers, and the metadata that describes them.

use super::Ctx;
use super::operand;
use crate::emit::meta::{self, FauSource, FauWord};
use crate::ir::{Block, Operand, Src, Stage, Value};
use crate::tgsi::ast::{
    Declaration, File, Instruction, Interpolation, Location, PixelCenter, Program, PropertyName, PropertyValue,
    Register, SemanticName,
};
use crate::tgsi::opcodes::Opcode;
use crate::valhall::Instr;
use crate::valhall::tables::{
    Condition, MemoryAccess, RegisterFormat, ResultType, RoundMode, SampleMode, Slot, SourceFormat, UpdateMode,
    VectorSize,
};
use crate::valhall::{Opcode as Op, Special};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// Number of 32-bit FAU words the hardware provides.
pub const FAU_WORDS: usize = 128;

/// The push-constant (FAU) table being built: which word holds what.
#[derive(Clone, Debug, Default)]
pub struct FauLayout {
    words: Vec<Option<FauSource>>,
    /// First word of each group (a constant vec4 or a sysval vec4 or pair of vec4s). At most
    /// `FAU_WORDS / 4` groups fit, so a list searched in order beats hashing the names.
    groups: Vec<(GroupKey, u8)>,
    /// The same for `CONST[buffer][index]` with small buffer and index, by buffer then index
    /// (`NO_GROUP`: none yet): every constant operand asks, so this is a table.
    constant_groups: Vec<Vec<u8>>,
    literals: FxHashMap<(u32, u32), u8>,
}

/// No group yet in [`FauLayout::constant_groups`] (words are below [`FAU_WORDS`]).
const NO_GROUP: u8 = u8::MAX;
/// Constant buffers and indices below these have their groups in the dense table.
const DENSE_BUFFERS: u32 = 32;
const DENSE_CONSTANTS: u32 = 4096;

#[derive(Clone, Debug, PartialEq, Eq)]
enum GroupKey {
    Constant(u32, u32),
    Sysval(&'static str),
    /// Two sysvals interleaved component by component (scale.x, offset.x, scale.y, …) so that
    /// one instruction can read a pair from one 64-bit slot.
    Interleaved(&'static str, &'static str),
}

impl FauLayout {
    fn alloc(&mut self, n: usize, align: usize) -> Option<u8> {
        let start = self.words.len().div_ceil(align) * align;
        if start + n > FAU_WORDS {
            return None;
        }
        if self.words.capacity() == 0 {
            self.words.reserve(FAU_WORDS);
        }
        self.words.resize(start + n, None);
        Some(start as u8)
    }

    fn group(&mut self, key: GroupKey, size: usize) -> Option<u8> {
        self.aligned_group(key, size, 4)
    }

    fn aligned_group(&mut self, key: GroupKey, size: usize, align: usize) -> Option<u8> {
        if let Some(&(_, w)) = self.groups.iter().find(|(k, _)| *k == key) {
            return Some(w);
        }
        let w = self.alloc(size, align)?;
        self.groups.push((key, w));
        Some(w)
    }

    /// The word holding `CONST[buffer][index].component` (None when the table is full).
    pub fn constant(&mut self, buffer: u32, index: u32, component: u32) -> Option<u8> {
        let (b, i) = (buffer as usize, index as usize);
        // The common case first: a word of a group already placed.
        if let Some(&base) = self.constant_groups.get(b).and_then(|groups| groups.get(i))
            && base != NO_GROUP
        {
            let w = base + component as u8;
            if self.words[w as usize].is_none() {
                self.words[w as usize] = Some(FauSource::Constant { buffer, index, component });
            }
            return Some(w);
        }
        let base = if buffer < DENSE_BUFFERS && index < DENSE_CONSTANTS {
            if self.constant_groups.len() <= b {
                self.constant_groups.resize(b + 1, Vec::new());
            }
            if self.constant_groups[b].len() <= i {
                // Room for the usual handful of constants up front, not one index at a time.
                self.constant_groups[b].resize((i + 1).max(16), NO_GROUP);
            }
            match self.constant_groups[b][i] {
                NO_GROUP => {
                    let w = self.alloc(4, 4)?;
                    self.constant_groups[b][i] = w;
                    w
                }
                w => w,
            }
        } else {
            self.group(GroupKey::Constant(buffer, index), 4)?
        };
        let w = base + component as u8;
        if self.words[w as usize].is_none() {
            self.words[w as usize] = Some(FauSource::Constant { buffer, index, component });
        }
        Some(w)
    }

    /// [`FauLayout::constant`] of a constant whose group is placed at word `first` (what it
    /// returned, minus the component, for another component of the same constant).
    #[inline]
    pub fn constant_word(&mut self, first: u8, buffer: u32, index: u32, component: u32) -> u8 {
        let w = first + component as u8;
        if self.words[w as usize].is_none() {
            self.words[w as usize] = Some(FauSource::Constant { buffer, index, component });
        }
        w
    }

    /// The word holding component `component` of a sysval vec4.
    pub fn sysval(&mut self, name: &'static str, component: u32) -> Option<u8> {
        let base = self.group(GroupKey::Sysval(name), 4)?;
        let w = base + component as u8;
        if self.words[w as usize].is_none() {
            self.words[w as usize] = Some(FauSource::Sysval { name: name.to_string(), component });
        }
        Some(w)
    }

    /// The even word of the 64-bit slot holding components 0 and 1 of a 64-bit sysval (only
    /// those two words are placed).
    pub fn sysval_pair_words(&mut self, name: &'static str) -> Option<u8> {
        let w = self.aligned_group(GroupKey::Sysval(name), 2, 2)?;
        for c in 0..2 {
            if self.words[usize::from(w) + c].is_none() {
                self.words[usize::from(w) + c] =
                    Some(FauSource::Sysval { name: name.to_string(), component: c as u32 });
            }
        }
        Some(w)
    }

    /// The even word of the 64-bit slot holding `(a.c, b.c)`.
    pub fn sysval_pair(&mut self, a: &'static str, b: &'static str, component: u32) -> Option<u8> {
        let base = self.group(GroupKey::Interleaved(a, b), 8)?;
        let w = base + 2 * component as u8;
        if self.words[w as usize].is_none() {
            self.words[w as usize] = Some(FauSource::Sysval { name: a.to_string(), component });
            self.words[w as usize + 1] = Some(FauSource::Sysval { name: b.to_string(), component });
        }
        Some(w)
    }

    /// The even word of a 64-bit slot holding the literal pair `(lo, hi)`.
    pub fn literal_pair(&mut self, lo: u32, hi: u32) -> Option<u8> {
        if let Some(&w) = self.literals.get(&(lo, hi)) {
            return Some(w);
        }
        let w = self.alloc(2, 2)?;
        self.words[w as usize] = Some(FauSource::Literal { value: lo });
        self.words[w as usize + 1] = Some(FauSource::Literal { value: hi });
        self.literals.insert((lo, hi), w);
        Some(w)
    }

    /// The words in use, for the metadata (the layout is left empty).
    pub fn take_meta(&mut self) -> Vec<FauWord> {
        let mut words = Vec::with_capacity(self.words.len());
        for (w, source) in self.words.drain(..).enumerate() {
            if let Some(source) = source {
                words.push(FauWord { word: w as u32, source });
            }
        }
        words
    }
}

/// Values by register index: a table for the usual small indices (every read of an input asks),
/// a map beyond.
#[derive(Debug)]
struct ByIndex<V> {
    dense: Vec<Option<V>>,
    sparse: FxHashMap<i64, V>,
}

/// Indices below this live in [`ByIndex::dense`].
const DENSE_INDICES: usize = 256;

impl<V> Default for ByIndex<V> {
    fn default() -> ByIndex<V> {
        ByIndex { dense: Vec::new(), sparse: FxHashMap::default() }
    }
}

impl<V: Copy> ByIndex<V> {
    fn get(&self, index: i64) -> Option<V> {
        match usize::try_from(index) {
            Ok(i) if i < DENSE_INDICES => self.dense.get(i).copied().flatten(),
            _ => self.sparse.get(&index).copied(),
        }
    }

    fn insert(&mut self, index: i64, value: V) {
        match usize::try_from(index) {
            Ok(i) if i < DENSE_INDICES => {
                if self.dense.len() <= i {
                    // Room for the usual handful of registers at once, not one index at a time.
                    self.dense.resize((i + 1).max(16), None);
                }
                self.dense[i] = Some(value);
            }
            _ => {
                self.sparse.insert(index, value);
            }
        }
    }
}

/// Preloaded values by register (r0–r63).
#[derive(Debug)]
struct Preloads([u32; 64]);

const NOT_PRELOADED: u32 = u32::MAX;

impl Default for Preloads {
    fn default() -> Preloads {
        Preloads([NOT_PRELOADED; 64])
    }
}

/// Input values loaded so far, preloads, and the metadata being collected.
#[derive(Debug, Default)]
pub struct IoState {
    /// Loaded `IN[i]` components.
    inputs: ByIndex<[Value; 4]>,
    /// Loaded `SV[i]` components.
    system_values: ByIndex<[Value; 4]>,
    /// The value of each preloaded register (`NOT_PRELOADED`: none yet). A fixed table: every
    /// input load asks, and a list would be allocated per shader for a handful of entries.
    preloads: Preloads,
    /// Constant vec4s loaded from UBOs when the FAU table is full: (buffer, index) → values.
    loaded_constants: FxHashMap<(u32, u32), [Value; 4]>,
    /// Indirectly addressed constant vec4s loaded so far, by the block they were loaded in and
    /// their address (see [`IndirectConstant`]).
    indirect_constants: FxHashMap<(Block, IndirectConstant), [Value; 4]>,
    pub flags: meta::Flags,
    pub attributes: Vec<meta::Attribute>,
    pub varyings: Vec<meta::Varying>,
    pub outputs: Vec<meta::Output>,
    pub system_value_meta: Vec<meta::SystemValue>,
    pub textures: BTreeMap<u32, meta::TextureBinding>,
    pub ubos: std::collections::BTreeSet<u32>,
    /// The hidden "demoted so far" variable (see [`demote_flag`]).
    pub demoted: Option<super::ssa::Var>,
    /// frag_w (`LD_VAR_SPECIAL` 2, in the entry block), once loaded.
    frag_w: Option<Value>,
    /// The fixed varying slots of the fragment inputs (see [`fixed_slots`]), computed once.
    fixed_input_slots: Option<std::rc::Rc<[u32]>>,
}

impl IoState {
    /// Whether some constant vec4 was loaded from a UBO (in the entry block: [`constant`]).
    pub fn hoisted_loads(&self) -> bool {
        !self.loaded_constants.is_empty()
    }
}

/// The declaration covering register `index` of `file`.
fn declaration<'p>(ctx: &Ctx<'p>, file: File, index: i64) -> Option<&'p Declaration> {
    ctx.decls.covering(file, index)
}

/// The value the hardware preloads into `reg`.
pub fn preload(ctx: &mut Ctx, reg: u8) -> Value {
    // Registers are r0–r63: the callers name them.
    let slot = usize::from(reg);
    match ctx.io.preloads.0[slot] {
        NOT_PRELOADED => {
            let v = ctx.entry_builder().preload(reg);
            ctx.io.preloads.0[slot] = v.0;
            v
        }
        v => Value(v),
    }
}

/// Nothing is loaded eagerly: inputs and system values are loaded into the entry block on
/// first use, so unused declarations cost nothing. Varyings declared without a semantic are
/// rejected here, once per declaration.
pub fn prologue(ctx: &mut Ctx) {
    reject_varyings_without_semantic(ctx);
    demote_flag(ctx);
    if ctx.stage == Stage::Fragment {
        // The coverage mask and the varying context are always preloaded on v9+.
        preload(ctx, 60);
        preload(ctx, 61);
    }
}

/// A varying's record offset comes from its semantic (§A.5.3), so a fragment input or vertex
/// output declared without one has no place: taken as GENERIC[0], every such register would
/// share one slot (Mesa's own scan reads the zeroed semantic as POSITION).
fn reject_varyings_without_semantic(ctx: &mut Ctx) {
    let (file, what, example) = match ctx.stage {
        Stage::Fragment => (File::Input, "a fragment input without a semantic", "DCL IN[0], GENERIC[0], PERSPECTIVE"),
        Stage::Vertex => (File::Output, "a vertex output without a semantic", "DCL OUT[1], GENERIC[0]"),
        Stage::Compute => return,
    };
    let program = ctx.program;
    for d in program.declarations().filter(|d| d.file == file && d.semantic.is_none()) {
        ctx.errors.push(
            crate::diag::Diagnostic::error("E0301", d.span, format!("{what} cannot be compiled for Valhall"))
                .with_label("no semantic")
                .with_note(format!(
                    "a varying is matched between stages by its semantic (GENERIC[n], COLOR[n], …), which also \
                     gives its place in the varying record; declare one, e.g. `{example}`"
                )),
        );
    }
}

// ---- Constants --------------------------------------------------------------------------------

/// Component `c` of a `CONST` register: a push word when the address is constant and the
/// table has room, else a load from the UBO.
pub fn constant(ctx: &mut Ctx, reg: &Register, c: usize) -> Operand {
    let buffer_direct = reg.dimension.is_none_or(|d| d.indirect.is_none());
    let buffer = reg.dimension.map_or(0, |d| d.value.max(0) as u32);
    if buffer_direct && reg.index.indirect.is_none() {
        let index = reg.index.value.max(0) as u32;
        if let Some(w) = ctx.fau.constant(buffer, index, c as u32) {
            return Operand::Uniform(w);
        }
        let values = match ctx.io.loaded_constants.get(&(buffer, index)) {
            Some(&v) => v,
            None => {
                let offset = ctx.entry_builder().konst(16 * index);
                let v = load_ubo_vec4(ctx, true, buffer, Src::new(offset), Src::konst(buffer));
                ctx.io.loaded_constants.insert((buffer, index), v);
                v
            }
        };
        return Operand::Value(values[c]);
    }
    // Indirect. UBOs are read-only while the shader runs, so a vec4 read again at the same
    // address in the same block (the other components of a source, the same element in a later
    // instruction) reuses the first load.
    let index_base = operand::address_base(ctx, &reg.index);
    let handle_base = reg.dimension.and_then(|d| operand::address_base(ctx, &d));
    let handle_offset = reg.dimension.map_or(0, |d| d.value);
    let key = IndirectConstant { index_base, index_offset: reg.index.value, handle_base, handle_offset };
    if let Some(values) = ctx.io.indirect_constants.get(&(ctx.block, key)) {
        return Operand::Value(values[c]);
    }
    // Byte offset = 16 · index.
    let idx = match index_base {
        Some(base) => operand::offset_address(ctx, base, reg.index.value),
        None => ctx.builder().konst(reg.index.value as u32),
    };
    let offset = ctx.builder().shl(idx, Src::konst(4));
    let handle = match handle_base {
        Some(base) => Src::new(operand::offset_address(ctx, base, handle_offset)),
        None => {
            ctx.io.ubos.insert(buffer);
            Src::konst(buffer)
        }
    };
    let values = load_ubo_vec4(ctx, false, buffer, Src::new(offset), handle);
    ctx.io.indirect_constants.insert((ctx.block, key), values);
    Operand::Value(values[c])
}

/// The address of an indirectly addressed `CONST` vec4: for the index and for the buffer, the
/// address register's value (`None`: direct) and the constant offset (a direct buffer's number).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct IndirectConstant {
    index_base: Option<Value>,
    index_offset: i32,
    handle_base: Option<Value>,
    handle_offset: i32,
}

/// `LD_BUFFER.i128.unsigned` of 16 bytes at `offset` of the UBO `handle` (table 0).
fn load_ubo_vec4(ctx: &mut Ctx, in_entry: bool, buffer: u32, offset: Src, handle: Src) -> [Value; 4] {
    ctx.io.ubos.insert(buffer);
    let mut mach = Instr::new(Op::LD_BUFFER_I128);
    let _ = mach.set_flag("unsigned", true);
    let _ = mach.set_slot(Slot::Slot0);
    let list = if in_entry {
        ctx.entry_builder().message(mach, &[offset, handle], &[], 4)
    } else {
        ctx.builder().message(mach, &[offset, handle], &[], 4)
    };
    let values = ctx.shader.get(list);
    [values[0], values[1], values[2], values[3]]
}

// ---- Inputs -----------------------------------------------------------------------------------

/// Component `c` of an `IN` register.
pub fn input(ctx: &mut Ctx, reg: &Register, c: usize) -> Operand {
    if reg.index.indirect.is_some() || reg.dimension.is_some_and(|d| d.indirect.is_some()) {
        let (first, last) = operand::array_range(ctx, File::Input, &reg.index);
        let idx = operand::address(ctx, &reg.index);
        let elements: Vec<Operand> = (first..=last).map(|i| Operand::Value(input_vec4(ctx, i)[c])).collect();
        return Operand::Value(operand::select_chain(ctx, idx, first, &elements));
    }
    Operand::Value(input_vec4(ctx, i64::from(reg.index.value))[c])
}

pub(super) fn input_vec4(ctx: &mut Ctx, index: i64) -> [Value; 4] {
    if let Some(v) = ctx.io.inputs.get(index) {
        return v;
    }
    let values = match ctx.stage {
        Stage::Vertex => load_attribute(ctx, index),
        Stage::Fragment => load_fragment_input(ctx, index),
        Stage::Compute => {
            ctx.unsupported("reading IN in a compute shader", "compute shaders have no inputs; use SV or memory");
            let zero = ctx.entry_builder().konst(0);
            [zero; 4]
        }
    };
    ctx.io.inputs.insert(index, values);
    values
}

fn load_attribute(ctx: &mut Ctx, index: i64) -> [Value; 4] {
    let vertex_id = preload(ctx, 60);
    let instance_id = preload(ctx, 61);
    // The fixed fields are set by name once (each lookup compares strings).
    // (and where the `index` immediate lives).
    static TEMPLATE: LazyLock<(Instr, usize)> = LazyLock::new(|| {
        let mut mach = Instr::new(Op::LD_ATTR_IMM);
        let _ = mach.set_vector_size(VectorSize::V4);
        let _ = mach.set_register_format(RegisterFormat::F32);
        let _ = mach.set_slot(Slot::Slot0);
        let _ = mach.set_imm("table", 1);
        (mach, mach.info().imm_index("index").expect("LD_ATTR_IMM has an index field"))
    });
    let (mut mach, index_field) = *TEMPLATE;
    let _ = mach.set_imm_at(index_field, index);
    if !(0..16).contains(&index) {
        ctx.unsupported("an attribute index above 15", "attribute loads use the 4-bit immediate index");
    }
    let list = ctx.entry_builder().message(mach, &[Src::new(vertex_id), Src::new(instance_id)], &[], 4);
    ctx.io.attributes.push(meta::Attribute {
        index: index as u32,
        register: indexed_name("IN", index),
        format: "f32".into(),
        components: 4,
    });
    let v = ctx.shader.get(list);
    [v[0], v[1], v[2], v[3]]
}

/// Mesa's varying slot of a non-generic semantic (`None` for GENERIC and for semantics that
/// are not varyings).
fn fixed_slot(name: SemanticName, index: u32) -> Option<u32> {
    Some(match name {
        SemanticName::Color => 1 + index.min(1),
        SemanticName::Fog => 3,
        SemanticName::Texcoord => 4 + index.min(7),
        SemanticName::Bcolor => 13 + index.min(1),
        SemanticName::Edgeflag => 15,
        SemanticName::Clipvertex => 16,
        SemanticName::Clipdist => 17 + index.min(1),
        SemanticName::PrimId => 21,
        SemanticName::ViewportIndex => 23,
        SemanticName::Pcoord => 25,
        _ => return None,
    })
}

/// Byte offsets of the varyings: fixed slots first in slot order, then GENERIC[n].
fn varying_offset(fixed: &[u32], semantic: SemanticName, index: u32) -> Option<u32> {
    if semantic == SemanticName::Generic {
        return Some(16 * (fixed.len() as u32 + index));
    }
    let slot = fixed_slot(semantic, index)?;
    Some(16 * fixed.iter().filter(|&&s| s < slot).count() as u32)
}

/// The fixed slots of the varying declarations of the fragment inputs, sorted and unique.
fn fixed_slots(ctx: &mut Ctx) -> std::rc::Rc<[u32]> {
    if let Some(slots) = &ctx.io.fixed_input_slots {
        return slots.clone();
    }
    let mut slots: Vec<u32> = ctx
        .program
        .declarations()
        .filter(|d| d.file == File::Input)
        .filter_map(|d| d.semantic.as_ref())
        .filter_map(|s| fixed_slot(s.name, s.index))
        .collect();
    slots.sort_unstable();
    slots.dedup();
    let slots: std::rc::Rc<[u32]> = slots.into();
    ctx.io.fixed_input_slots = Some(slots.clone());
    slots
}

fn load_fragment_input(ctx: &mut Ctx, index: i64) -> [Value; 4] {
    let decl = declaration(ctx, File::Input, index);
    let Some(decl) = decl else {
        ctx.unsupported("an undeclared input", "fragment inputs need a declaration with a semantic");
        let zero = ctx.entry_builder().konst(0);
        return [zero; 4];
    };
    let semantic = &decl.semantic;
    let name = semantic.as_ref().map_or(SemanticName::Generic, |s| s.name);
    match name {
        SemanticName::Position => {
            ctx.io.system_value_meta.push(meta::SystemValue {
                register: indexed_name("IN", index),
                semantic: "POSITION".into(),
                source: "preload".into(),
            });
            return frag_coord(ctx);
        }
        SemanticName::Face => {
            ctx.io.flags.reads_face = true;
            let flags = preload(ctx, 58);
            let face = ctx.entry_builder().csel(
                false,
                Condition::Eq,
                Src::new(flags),
                Src::konst(0),
                Src::f32(1.0),
                Src::f32(-1.0),
            );
            let zero = ctx.entry_builder().konst(0);
            let one = ctx.entry_builder().konst(1.0f32.to_bits());
            ctx.io.system_value_meta.push(meta::SystemValue {
                register: indexed_name("IN", index),
                semantic: "FACE".into(),
                source: "preload".into(),
            });
            return [face, zero, zero, one];
        }
        SemanticName::Layer => {
            // gl_Layer is no varying either: the hardware preloads it.
            ctx.io.system_value_meta.push(meta::SystemValue {
                register: indexed_name("IN", index),
                semantic: "LAYER".into(),
                source: "preload".into(),
            });
            let layer = layer_id(ctx);
            let zero = ctx.entry_builder().konst(0);
            return [layer, zero, zero, zero];
        }
        SemanticName::Pcoord => {
            // The point coordinate is no varying: the metadata names the register that holds
            // it, so a driver (or the emulator) knows what LD_VAR_SPECIAL 0–1 must return.
            ctx.io.system_value_meta.push(meta::SystemValue {
                register: indexed_name("IN", index),
                semantic: "PCOORD".into(),
                source: "special".into(),
            });
            let list = load_var_special(ctx, 0, 2);
            let v = ctx.shader.get(list).to_vec();
            let zero = ctx.entry_builder().konst(0);
            let one = ctx.entry_builder().konst(1.0f32.to_bits());
            return [v[0], v[1], zero, one];
        }
        _ => {}
    }
    let Some(varying) = varying(ctx, index) else {
        ctx.unsupported(&format!("a fragment input with semantic {}", name.name()), "it is not a varying");
        let zero = ctx.entry_builder().konst(0);
        return [zero; 4];
    };
    let sample_mode = match varying.location {
        Location::Center => SampleMode::Center,
        Location::Centroid => SampleMode::Centroid,
        Location::Sample => SampleMode::Sample,
    };
    let context = preload(ctx, 61);
    load_varying(ctx, &varying, sample_mode, Src::new(context), true)
}

/// Where a varying input lives and how it is interpolated.
struct VaryingInput {
    /// Byte offset in the varying record.
    offset: u32,
    interpolation: Interpolation,
    location: Location,
}

/// The varying behind `IN[index]` of a fragment shader (`None` for inputs that are not
/// varyings: POSITION, FACE, PCOORD, undeclared ones). Records it in the metadata once.
fn varying(ctx: &mut Ctx, index: i64) -> Option<VaryingInput> {
    let decl = declaration(ctx, File::Input, index)?;
    let (name, sem_index) = decl.semantic.as_ref().map_or((SemanticName::Generic, 0), |s| (s.name, s.index));
    // Registers of a range share the semantic with consecutive indices.
    let sem_index = sem_index + (index - i64::from(decl.first)) as u32;
    if matches!(name, SemanticName::Position | SemanticName::Face | SemanticName::Pcoord) {
        return None;
    }
    let fixed = fixed_slots(ctx);
    let offset = varying_offset(&fixed, name, sem_index)?;
    let interpolation = decl.interpolation.unwrap_or(Interpolation::Perspective);
    let location = decl.location.unwrap_or(Location::Center);
    let register = indexed_name("IN", index);
    if !ctx.io.varyings.iter().any(|v| v.register == register) {
        ctx.io.varyings.push(meta::Varying {
            register,
            semantic: semantic_text(name, sem_index),
            offset,
            components: 4,
            interpolation: match interpolation {
                Interpolation::Constant => "flat",
                Interpolation::Linear => "linear",
                Interpolation::Perspective | Interpolation::Color => "perspective",
            }
            .into(),
            location: location.name().to_ascii_lowercase(),
        });
    }
    Some(VaryingInput { offset, interpolation, location })
}

/// `LD_VAR_BUF[_IMM].f32.v4` of a varying with the given sample mode and source 0 (r61, or the
/// sample index / 8.8 position of the INTERP_* opcodes), in the entry block or at the current
/// position. Flat varyings use `src_flat32` (their sample mode is irrelevant); linear ones are
/// multiplied by frag_w (docs/metadata.md).
fn load_varying(ctx: &mut Ctx, v: &VaryingInput, sample_mode: SampleMode, src0: Src, in_entry: bool) -> [Value; 4] {
    let flat = v.interpolation == Interpolation::Constant;
    let offset = v.offset;
    // The fixed fields are set by name once (each lookup compares strings).
    static TEMPLATES: LazyLock<[Instr; 2]> = LazyLock::new(|| {
        [Op::LD_VAR_BUF_IMM_F32, Op::LD_VAR_BUF_F32].map(|op| {
            let mut mach = Instr::new(op);
            let _ = mach.set_slot(Slot::Slot0);
            let _ = mach.set_vector_size(VectorSize::V4);
            let _ = mach.set("update_mode", UpdateMode::Store);
            mach
        })
    });
    let mut mach = TEMPLATES[usize::from(offset >= 256)];
    let _ = mach.set("source_format", if flat { SourceFormat::SrcFlat32 } else { SourceFormat::SrcF32 });
    let _ = mach.set("sample_mode", sample_mode);
    let mut srcs = [src0, Src::NONE];
    let mut count = 1;
    if offset < 256 {
        let _ = mach.set_imm("index", i64::from(offset));
    } else {
        let off = ctx.entry_builder().konst(offset);
        srcs[1] = Src::new(off);
        count = 2;
    }
    let srcs = &srcs[..count];
    let list = if in_entry {
        ctx.entry_builder().message(mach, srcs, &[], 4)
    } else {
        ctx.builder().message(mach, srcs, &[], 4)
    };
    let mut values: [Value; 4] = {
        let v = ctx.shader.get(list);
        [v[0], v[1], v[2], v[3]]
    };
    if v.interpolation == Interpolation::Linear {
        // No linear interpolation in hardware: the vertex shader multiplied by clip w, the
        // loaded value is multiplied by frag_w (1 / clip w) here.
        let w = frag_w(ctx);
        for x in &mut values {
            *x = if in_entry { ctx.entry_builder().fmul(*x, w) } else { ctx.builder().fmul(*x, w) };
        }
    }
    values
}

fn semantic_text(name: SemanticName, index: u32) -> String {
    if index != 0 || matches!(name, SemanticName::Generic | SemanticName::Texcoord) {
        indexed_name(name.name(), i64::from(index))
    } else {
        name.name().to_string()
    }
}

/// `NAME[index]`, as `format!` would print it but without the formatting machinery (the
/// metadata names every register it describes, which was a large part of lowering's cost).
fn indexed_name(name: &str, index: i64) -> String {
    let mut digits = [0u8; 20];
    let mut rest = index.unsigned_abs();
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let mut text = String::with_capacity(name.len() + 3 + digits.len() - start);
    text.push_str(name);
    text.push('[');
    if index < 0 {
        text.push('-');
    }
    text.extend(digits[start..].iter().map(|&d| char::from(d)));
    text.push(']');
    text
}

/// `LD_VAR_SPECIAL` of `count` components of special varying `index` (0 point coord, 2 frag w,
/// 3 frag z).
fn load_var_special(ctx: &mut Ctx, index: i64, count: usize) -> crate::ir::ValueList {
    let context = preload(ctx, 61);
    let mut mach = Instr::new(Op::LD_VAR_SPECIAL);
    let _ = mach.set_slot(Slot::Slot0);
    if count == 2 {
        let _ = mach.set_vector_size(VectorSize::V2);
    }
    let _ = mach.set_register_format(RegisterFormat::F32);
    let _ = mach.set("sample_mode", SampleMode::Center);
    let _ = mach.set("update_mode", UpdateMode::Clobber);
    let _ = mach.set_imm("index", index);
    let source = if index == 0 { Src::konst(0) } else { Src::new(context) };
    ctx.entry_builder().message(mach, &[source], &[], count)
}

/// The sample ID: `(r61 >> 16) & 0x1F` (higher bits of r61 read back garbage).
fn sample_id(ctx: &mut Ctx) -> Value {
    let r61 = preload(ctx, 61);
    let shifted = ctx.entry_builder().shr(false, r61, Src::konst(16));
    ctx.entry_builder().and(shifted, Src::konst(0x1F))
}

/// The layer (or view index) of a fragment: byte 0 of r62.
fn layer_id(ctx: &mut Ctx) -> Value {
    let r62 = preload(ctx, 62);
    ctx.entry_builder().op(Op::U8_TO_U32, &[Src::new(r62).lane(0)])
}

/// gl_SamplePosition: entry `sample_id` of the driver's sample-position table, whose 64-bit
/// address is the `sample` FAU special. An entry is two signed 16-bit coordinates in 1/256 of
/// a pixel (x in the low half). The address add keeps its carry (the table's placement is the
/// driver's).
fn sample_position(ctx: &mut Ctx) -> [Value; 2] {
    let id = sample_id(ctx);
    let offset = ctx.entry_builder().shl(id, Src::konst(2));
    let base = |high: bool| Src::new(Operand::Special(Special::of("sample", high)));
    let mut b = ctx.entry_builder();
    let lo = b.iadd(base(false), offset);
    let carry = b.icmp(false, Condition::Lt, lo, base(false), ResultType::I1);
    let hi = b.iadd(base(true), carry);
    let list = b.message(super::memory::global_load(1, 0), &[Src::new(Operand::Pair(lo, hi))], &[], 1);
    let word = ctx.shader.get(list)[0];
    [0, 1].map(|half| {
        let mut b = ctx.entry_builder();
        let fixed = b.op(Op::S16_TO_F32, &[Src::new(word).swizzle(half)]);
        b.fmul(fixed, Src::f32(1.0 / 256.0))
    })
}

fn frag_w(ctx: &mut Ctx) -> Value {
    if let Some(w) = ctx.io.frag_w {
        return w;
    }
    let list = load_var_special(ctx, 2, 1);
    let w = ctx.shader.get(list)[0];
    ctx.io.frag_w = Some(w);
    w
}

/// gl_FragCoord: pixel x, y (+0.5 unless the shader asks for integer centres), z, w.
fn frag_coord(ctx: &mut Ctx) -> [Value; 4] {
    ctx.io.flags.reads_frag_coord = true;
    let pixel = preload(ctx, 59);
    let integer_centers = ctx.program.property(PropertyName::FsCoordPixelCenter)
        == Some(PropertyValue::PixelCenter(PixelCenter::Integer));
    let mut xy = [pixel; 2];
    for (c, v) in xy.iter_mut().enumerate() {
        // U16_TO_F32 reads one 16-bit half: h00 (index 0) low, h10 (index 1) high.
        let f = ctx.entry_builder().op(Op::U16_TO_F32, &[Src::new(pixel).swizzle(c as u8)]);
        *v = if integer_centers { f } else { ctx.entry_builder().fadd(f, Src::f32(0.5)) };
    }
    let z = {
        let list = load_var_special(ctx, 3, 1);
        ctx.shader.get(list)[0]
    };
    let w = frag_w(ctx);
    [xy[0], xy[1], z, w]
}

// ---- System values ----------------------------------------------------------------------------

/// Component `c` of an `SV` register.
pub fn system_value(ctx: &mut Ctx, reg: &Register, c: usize) -> Operand {
    let index = i64::from(reg.index.value);
    if let Some(v) = ctx.io.system_values.get(index) {
        return Operand::Value(v[c]);
    }
    let Some(decl) = declaration(ctx, File::SystemValue, index) else {
        ctx.unsupported("an undeclared system value", "SV registers need a declaration with a semantic");
        return Operand::Const(0);
    };
    let name = decl.semantic.as_ref().map_or(SemanticName::Generic, |s| s.name);
    let values = load_system_value(ctx, name);
    let source = match name {
        SemanticName::GridSize | SemanticName::BlockSize | SemanticName::Basevertex | SemanticName::Baseinstance => {
            "sysval"
        }
        SemanticName::Drawid if ctx.options.gpu.arch < 10 => "sysval",
        SemanticName::SubgroupSize => "constant",
        SemanticName::Samplepos => "sample_positions",
        SemanticName::SubgroupInvocation
        | SemanticName::SubgroupEqMask
        | SemanticName::SubgroupGeMask
        | SemanticName::SubgroupGtMask
        | SemanticName::SubgroupLeMask
        | SemanticName::SubgroupLtMask => "lane_id",
        _ => "preload",
    };
    ctx.io.system_value_meta.push(meta::SystemValue {
        register: indexed_name("SV", index),
        semantic: name.name().into(),
        source: source.into(),
    });
    match values {
        Some(v) => {
            ctx.io.system_values.insert(index, v);
            Operand::Value(v[c])
        }
        None => {
            ctx.unsupported(&format!("system value {}", name.name()), "it is not available in this stage");
            // Reported once per register, not once per component read.
            let zero = ctx.entry_builder().konst(0);
            ctx.io.system_values.insert(index, [zero; 4]);
            Operand::Const(0)
        }
    }
}

fn load_system_value(ctx: &mut Ctx, name: SemanticName) -> Option<[Value; 4]> {
    let zero = ctx.entry_builder().konst(0);
    let b = |ctx: &mut Ctx, op: Op, src: Src| ctx.entry_builder().op(op, &[src]);
    Some(match (ctx.stage, name) {
        (Stage::Compute, SemanticName::ThreadId) => {
            let r55 = preload(ctx, 55);
            let r56 = preload(ctx, 56);
            let x = b(ctx, Op::U16_TO_U32, Src::new(r55).swizzle(0));
            let y = b(ctx, Op::U16_TO_U32, Src::new(r55).swizzle(1));
            let z = b(ctx, Op::U16_TO_U32, Src::new(r56).swizzle(0));
            [x, y, z, zero]
        }
        (Stage::Compute, SemanticName::BlockId) => [preload(ctx, 57), preload(ctx, 58), preload(ctx, 59), zero],
        (Stage::Compute, SemanticName::GridSize) => sysval_vec3(ctx, "num_workgroups", zero),
        (Stage::Compute, SemanticName::BlockSize) => {
            let fixed =
                [PropertyName::CsFixedBlockWidth, PropertyName::CsFixedBlockHeight, PropertyName::CsFixedBlockDepth]
                    .map(|p| match ctx.program.property(p) {
                        Some(PropertyValue::Uint(v)) => Some(v),
                        _ => None,
                    });
            if let [Some(x), Some(y), Some(z)] = fixed {
                let mut e = ctx.entry_builder();
                [e.konst(x), e.konst(y), e.konst(z), zero]
            } else {
                sysval_vec3(ctx, "workgroup_size", zero)
            }
        }
        (Stage::Vertex, SemanticName::Vertexid) => [preload(ctx, 60), zero, zero, zero],
        (Stage::Vertex, SemanticName::Instanceid) => [preload(ctx, 61), zero, zero, zero],
        (Stage::Vertex, SemanticName::VertexidNobase) => {
            let id = preload(ctx, 60);
            let base = sysval_vec3(ctx, "first_vertex", zero)[0];
            let v = ctx.entry_builder().isub(id, base);
            [v, zero, zero, zero]
        }
        (Stage::Vertex, SemanticName::Basevertex) => [sysval_vec3(ctx, "first_vertex", zero)[0], zero, zero, zero],
        (Stage::Vertex, SemanticName::Baseinstance) => [sysval_vec3(ctx, "base_instance", zero)[0], zero, zero, zero],
        (Stage::Vertex, SemanticName::Drawid) if ctx.options.gpu.arch >= 10 => [preload(ctx, 62), zero, zero, zero],
        (Stage::Vertex, SemanticName::Drawid) => [sysval_vec3(ctx, "draw_id", zero)[0], zero, zero, zero],
        (Stage::Fragment, SemanticName::Sampleid) => [sample_id(ctx), zero, zero, zero],
        (Stage::Fragment, SemanticName::Layer) => [layer_id(ctx), zero, zero, zero],
        (Stage::Fragment, SemanticName::Samplepos) => {
            let [x, y] = sample_position(ctx);
            [x, y, zero, zero]
        }
        (Stage::Fragment, SemanticName::Samplemask) => {
            let r61 = preload(ctx, 61);
            let mask = b(ctx, Op::U16_TO_U32, Src::new(r61).swizzle(0));
            [mask, zero, zero, zero]
        }
        (Stage::Fragment, SemanticName::Face) => {
            ctx.io.flags.reads_face = true;
            let flags = preload(ctx, 58);
            let face = ctx.entry_builder().icmp(false, Condition::Eq, flags, Src::konst(0), ResultType::M1);
            [face, zero, zero, zero]
        }
        (Stage::Fragment, SemanticName::Position) => frag_coord(ctx),
        (Stage::Fragment, SemanticName::HelperInvocation) => [helper_invocation(ctx, true), zero, zero, zero],
        // The subgroup is the quad (src/lower/subgroup.rs): invocation = lane_id & 3.
        (_, SemanticName::SubgroupSize) => [ctx.entry_builder().konst(4), zero, zero, zero],
        (
            _,
            SemanticName::SubgroupInvocation
            | SemanticName::SubgroupEqMask
            | SemanticName::SubgroupGeMask
            | SemanticName::SubgroupGtMask
            | SemanticName::SubgroupLeMask
            | SemanticName::SubgroupLtMask,
        ) => {
            let lane_id = Operand::Special(Special::of("lane_id", false));
            let mut e = ctx.entry_builder();
            let lane = e.copy(lane_id);
            let inv = e.and(lane, Src::konst(3));
            let v = match name {
                SemanticName::SubgroupInvocation => inv,
                SemanticName::SubgroupEqMask => e.shl(Src::konst(1), inv),
                SemanticName::SubgroupGeMask => {
                    let m = e.shl(Src::konst(0xF), inv);
                    e.and(m, Src::konst(0xF))
                }
                SemanticName::SubgroupGtMask => {
                    let m = e.shl(Src::konst(0xE), inv);
                    e.and(m, Src::konst(0xF))
                }
                SemanticName::SubgroupLeMask => {
                    let m = e.shl(Src::konst(2), inv);
                    e.iadd_imm(m, u32::MAX)
                }
                _ => {
                    let m = e.shl(Src::konst(1), inv);
                    e.iadd_imm(m, u32::MAX)
                }
            };
            [v, zero, zero, zero]
        }
        _ => return None,
    })
}

fn sysval_vec3(ctx: &mut Ctx, name: &'static str, zero: Value) -> [Value; 4] {
    let mut out = [zero; 4];
    for (c, slot) in out.iter_mut().take(3).enumerate() {
        match ctx.fau.sysval(name, c as u32) {
            Some(w) => *slot = ctx.entry_builder().copy(Operand::Uniform(w)),
            None => ctx.unsupported("a system value", "the push-constant table is full"),
        }
    }
    out
}

// ---- Kill and barriers ------------------------------------------------------------------------

/// KILL / DEMOTE (unconditional) and KILL_IF (any component < 0) → `DISCARD.f32`.
pub fn kill(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    if ctx.stage != Stage::Fragment {
        return ctx.unsupported(inst.opcode.name(), "only fragment shaders can kill");
    }
    ctx.io.flags.can_discard = true;
    let discard = |ctx: &mut Ctx, cond: Condition, a: Src, b: Src| {
        let mut mach = Instr::new(Op::DISCARD_F32);
        let _ = mach.set_condition(cond);
        ctx.builder().emit(mach, &[a, b], &[], 0);
    };
    match opcode {
        Opcode::KillIf => {
            // One DISCARD per distinct source component.
            let mut seen = Vec::new();
            for c in 0..4 {
                let comp = inst.src[0].swizzle[c];
                if seen.contains(&comp) {
                    continue;
                }
                seen.push(comp);
                let x = operand::fsrc(ctx, inst, 0, c);
                discard(ctx, Condition::Lt, x, Src::konst(0));
            }
        }
        _ => {
            if opcode == Opcode::Demote
                && let Some(var) = ctx.io.demoted
            {
                let all = ctx.builder().konst(u32::MAX);
                ctx.ssa.write(var, all);
            }
            discard(ctx, Condition::Eq, Src::konst(0), Src::konst(0))
        }
    }
}

/// BARRIER → `BARRIER.slot7` (compute); MEMBAR needs no instruction (memory accesses are
/// already ordered conservatively by the flow pass).
pub fn barrier(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    if opcode == Opcode::Membar {
        return;
    }
    if ctx.stage != Stage::Compute {
        return ctx.unsupported(inst.opcode.name(), "workgroup barriers exist only in compute shaders");
    }
    ctx.io.flags.uses_barrier = true;
    let mut mach = Instr::new(Op::BARRIER);
    let _ = mach.set_slot(Slot::Slot7);
    ctx.builder().emit(mach, &[], &[], 0);
}

/// Opcodes of this module reached through [`super::Ctx::instruction`]: the fragment-stage
/// opcodes READ_HELPER, FBFETCH and INTERP_CENTROID/INTERP_SAMPLE/INTERP_OFFSET.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    if !matches!(
        opcode,
        Opcode::ReadHelper | Opcode::Fbfetch | Opcode::InterpCentroid | Opcode::InterpSample | Opcode::InterpOffset
    ) {
        return false;
    }
    if ctx.stage != Stage::Fragment {
        ctx.unsupported(inst.opcode.name(), "it exists only in fragment shaders");
        return true;
    }
    match opcode {
        Opcode::ReadHelper => {
            let helper = helper_invocation(ctx, false);
            let mut out = [None; 4];
            for c in inst.dst[0].write_mask.components() {
                out[c.index()] = Some(helper);
            }
            operand::write(ctx, inst, 0, out, operand::Kind::Int);
        }
        Opcode::Fbfetch => fbfetch(ctx, inst),
        _ => interpolate(ctx, inst, opcode),
    }
    true
}

/// Whether the lane is a helper invocation (~0) or not (0): no covered sample (Mesa's
/// `sample_mask_in == 0`, the low half of r61), or — for READ_HELPER (`current`) — demoted
/// by a DEMOTE executed so far.
fn helper_invocation(ctx: &mut Ctx, at_entry: bool) -> Value {
    let r61 = preload(ctx, 61);
    let mask = ctx.entry_builder().op(Op::U16_TO_U32, &[Src::new(r61).swizzle(0)]);
    let uncovered = ctx.entry_builder().icmp(false, Condition::Eq, mask, Src::konst(0), ResultType::M1);
    match ctx.io.demoted {
        Some(var) if !at_entry => {
            let demoted = ctx.read_var(var);
            ctx.builder().or(uncovered, demoted)
        }
        _ => uncovered,
    }
}

/// The hidden "demoted so far" flag READ_HELPER needs, created (0 in the entry block) when the
/// program has both DEMOTE and READ_HELPER. Loops list it among the variables they may write.
pub fn demote_flag(ctx: &mut Ctx) {
    let has = |op: Opcode| ctx.insts.iter().any(|i| i.opcode.canonical() == op);
    if ctx.stage == Stage::Fragment && has(Opcode::Demote) && has(Opcode::ReadHelper) {
        let var = ctx.ssa.new_var();
        let zero = ctx.entry_builder().konst(0);
        ctx.ssa.write(var, zero);
        ctx.io.demoted = Some(var);
    }
}

/// The sysval name of a render target's conversion descriptor (`rt_conversion.R`).
fn rt_conversion_name(rt: u32) -> &'static str {
    const NAMES: [&str; 8] = [
        "rt_conversion.0",
        "rt_conversion.1",
        "rt_conversion.2",
        "rt_conversion.3",
        "rt_conversion.4",
        "rt_conversion.5",
        "rt_conversion.6",
        "rt_conversion.7",
    ];
    NAMES[rt as usize % 8]
}

/// FBFETCH `OUT[i]` of a COLOR output: `LD_TILE.v4.f32` of the current pixel of render target
/// rt = the COLOR index (pixel indices `0xFF << 24 | rt << 8`, sample 0), the coverage r60 and
/// the render target's conversion descriptor, a `rt_conversion.R` sysval (Mesa:
/// `bi_emit_ld_tile`, PAN_SYSVAL_RT_CONVERSION). `flags.reads_tile_buffer` tells the driver.
fn fbfetch(ctx: &mut Ctx, inst: &Instruction) {
    let src = &inst.src[0];
    let reg = src.register;
    if reg.file != File::Output || reg.index.indirect.is_some() {
        return ctx.unsupported("FBFETCH", "its operand must be a directly addressed OUT register");
    }
    let index = i64::from(reg.index.value);
    let rt = declaration(ctx, File::Output, index).and_then(|d| {
        d.semantic
            .as_ref()
            .filter(|s| s.name == SemanticName::Color)
            .map(|s| s.index + (index - i64::from(d.first)) as u32)
    });
    let Some(rt) = rt else {
        return ctx.unsupported("FBFETCH", "it only reads COLOR outputs (tgsi.rst)");
    };
    if rt > 7 {
        return ctx.unsupported("FBFETCH", "Valhall has 8 render targets (COLOR[0] to COLOR[7])");
    }
    let Some(word) = ctx.fau.sysval(rt_conversion_name(rt), 0) else {
        return ctx.unsupported("FBFETCH", "the push-constant table is full");
    };
    ctx.io.flags.reads_tile_buffer = true;
    let coverage = preload(ctx, 60);
    let mut mach = Instr::new(Op::LD_TILE);
    let _ = mach.set_slot(Slot::Slot0);
    let _ = mach.set_vector_size(VectorSize::V4);
    let _ = mach.set_register_format(RegisterFormat::F32);
    let indices = Src::konst(0xFF00_0000 | rt << 8);
    let list = ctx.builder().message(mach, &[indices, Src::new(coverage), Src::new(Operand::Uniform(word))], &[], 4);
    let colour = ctx.shader.get(list).to_vec();
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        let mut v = Src::new(colour[src.swizzle[c.index()].index()]);
        if src.absolute {
            v = v.absolute();
        }
        if src.negate {
            v = v.negated();
        }
        out[c.index()] = Some(operand::to_value(ctx, v));
    }
    operand::write(ctx, inst, 0, out, operand::Kind::Float);
}

/// INTERP_CENTROID / INTERP_SAMPLE / INTERP_OFFSET of a varying input: `LD_VAR_BUF` with sample
/// mode `centroid` (source 0 = r61), `sample` with the index in the high half of source 0
/// (`MKVEC.v2i16 #0, s`), or `explicit` with the 8.8 fixed-point position relative to the
/// pixel's top-left corner (`q = F32_TO_S32.rte(FMA o, 256, 128)`, both in one
/// `MKVEC.v2i16`), as Mesa's `bi_varying_src0_for_barycentric` (with f32 instead of f16
/// arithmetic). Flat inputs are read as they are.
fn interpolate(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    let src = &inst.src[0];
    let reg = src.register;
    if reg.file != File::Input || reg.index.indirect.is_some() || reg.dimension.is_some() {
        return ctx.unsupported(
            inst.opcode.name(),
            "its first operand must be a directly addressed IN register (the varying's offset is an \
             immediate of the load)",
        );
    }
    let index = i64::from(reg.index.value);
    let Some(v) = varying(ctx, index) else {
        return ctx.unsupported(
            inst.opcode.name(),
            "only varyings can be interpolated at another location (not POSITION, FACE or PCOORD inputs)",
        );
    };
    let values = if v.interpolation == Interpolation::Constant {
        input_vec4(ctx, index)
    } else {
        let (mode, src0) = match opcode {
            Opcode::InterpCentroid => (SampleMode::Centroid, Src::new(preload(ctx, 61))),
            Opcode::InterpSample => {
                let s = operand::isrc(ctx, inst, 1, 0);
                let s = operand::to_value(ctx, s);
                (SampleMode::Sample, Src::new(ctx.builder().op(Op::MKVEC_V2I16, &[Src::konst(0), Src::new(s)])))
            }
            _ => {
                let mut q = [None; 2];
                for (c, slot) in q.iter_mut().enumerate() {
                    let o = operand::fsrc(ctx, inst, 1, c);
                    let t = ctx.builder().fma(o, Src::f32(256.0), Src::f32(128.0));
                    *slot = Some(ctx.builder().f2i(true, t, RoundMode::Rte));
                }
                let [Some(x), Some(y)] = q else { return };
                (SampleMode::Explicit, Src::new(ctx.builder().op(Op::MKVEC_V2I16, &[Src::new(x), Src::new(y)])))
            }
        };
        load_varying(ctx, &v, mode, src0, false)
    };
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        let mut s = Src::new(values[src.swizzle[c.index()].index()]);
        if src.absolute {
            s = s.absolute();
        }
        if src.negate {
            s = s.negated();
        }
        out[c.index()] = Some(operand::to_value(ctx, s));
    }
    operand::write(ctx, inst, 0, out, operand::Kind::Float);
}

// ---- Outputs ----------------------------------------------------------------------------------

/// The output registers with their semantics, in declaration order (walked, not collected:
/// the epilogue reads them once or twice).
fn output_decls<'p>(program: &'p Program) -> impl Iterator<Item = (i64, SemanticName, u32)> + 'p {
    program.declarations().filter(|d| d.file == File::Output).flat_map(|d| {
        let (name, index) = d.semantic.as_ref().map_or((SemanticName::Generic, 0), |s| (s.name, s.index));
        (d.first..=d.last).enumerate().map(move |(k, i)| (i64::from(i), name, index + k as u32))
    })
}

fn read_output(ctx: &mut Ctx, index: i64, c: usize) -> Value {
    let var = ctx.var(File::Output, index, c);
    ctx.read_var(var)
}

/// The stage's output sequence, at the end of the main program.
pub fn epilogue(ctx: &mut Ctx) {
    match ctx.stage {
        Stage::Fragment => fragment_outputs(ctx),
        Stage::Vertex => vertex_outputs(ctx),
        Stage::Compute => {}
    }
}

fn fragment_outputs(ctx: &mut Ctx) {
    // A handful of colour outputs at most: kept inline.
    let mut colors: SmallVec<[(u32, i64); 8]> = SmallVec::new();
    let (mut depth, mut stencil, mut sample_mask) = (None, None, None);
    for (index, name, sem) in output_decls(ctx.program) {
        match name {
            SemanticName::Color => colors.push((sem, index)),
            SemanticName::Position => depth = Some(index),
            SemanticName::Stencil => stencil = Some(index),
            SemanticName::Samplemask => sample_mask = Some(index),
            _ => {}
        }
    }
    colors.sort_unstable();
    let mut coverage = preload(ctx, 60);
    if let Some(index) = sample_mask {
        let mask = read_output(ctx, index, 0);
        coverage = ctx.builder().and(coverage, mask);
        ctx.io.flags.writes_coverage = true;
        ctx.io.outputs.push(meta::Output {
            register: indexed_name("OUT", index),
            semantic: "SAMPLEMASK".into(),
            kind: "sample_mask".into(),
            rt: None,
        });
    }
    // ATEST: alpha of render target 0 (1.0 without colour 0).
    let alpha = match colors.iter().find(|(rt, _)| *rt == 0) {
        Some(&(_, index)) => Src::new(read_output(ctx, index, 3)),
        None => Src::f32(1.0),
    };
    let atest = Instr::new(Op::ATEST);
    let id = ctx.builder().emit(atest, &[Src::new(coverage), alpha, Src::new(Operand::Special(*ATEST_DATUM))], &[], 1);
    coverage = ctx.shader.get(ctx.shader.inst(id).staging[0])[0];
    if depth.is_some() || stencil.is_some() {
        let mut zs = Instr::new(Op::ZS_EMIT);
        let _ = zs.set_slot(Slot::Slot0);
        let z = match depth {
            Some(index) => {
                let _ = zs.set_flag("z", true);
                ctx.io.flags.writes_depth = true;
                ctx.io.outputs.push(meta::Output {
                    register: indexed_name("OUT", index),
                    semantic: "POSITION".into(),
                    kind: "depth".into(),
                    rt: None,
                });
                Src::new(read_output(ctx, index, 2))
            }
            None => Src::konst(0),
        };
        let s = match stencil {
            Some(index) => {
                let _ = zs.set_flag("stencil", true);
                ctx.io.flags.writes_stencil = true;
                ctx.io.outputs.push(meta::Output {
                    register: indexed_name("OUT", index),
                    semantic: "STENCIL".into(),
                    kind: "stencil".into(),
                    rt: None,
                });
                Src::new(read_output(ctx, index, 1))
            }
            None => Src::konst(0),
        };
        let id = ctx.builder().emit(zs, &[z, s, Src::new(coverage)], &[], 1);
        coverage = ctx.shader.get(ctx.shader.inst(id).staging[0])[0];
    }
    for &(rt, index) in &colors {
        if rt > 7 {
            ctx.unsupported("a colour output above COLOR[7]", "Valhall has 8 render targets");
            continue;
        }
        let color: [Value; 4] = std::array::from_fn(|c| read_output(ctx, index, c));
        // The fixed fields are set by name once (each lookup compares strings).
        static BLEND: LazyLock<Instr> = LazyLock::new(|| {
            let mut blend = Instr::new(Op::BLEND);
            let _ = blend.set_slot(Slot::Slot0);
            let _ = blend.set_vector_size(VectorSize::V4);
            let _ = blend.set_register_format(RegisterFormat::Auto);
            blend
        });
        let descriptor = blend_descriptor(rt);
        ctx.builder().emit(*BLEND, &[Src::new(descriptor), Src::new(coverage)], &[&color], 0);
        ctx.io.outputs.push(meta::Output {
            register: indexed_name("OUT", index),
            semantic: semantic_text(SemanticName::Color, rt),
            kind: "color".into(),
            rt: Some(rt),
        });
    }
}

/// The special FAU value `blend_descriptor_{rt}` (rt ≤ 7), named once rather than formatted
/// and looked up per render target.
fn blend_descriptor(rt: u32) -> Operand {
    static DESCRIPTORS: LazyLock<[Operand; 8]> = LazyLock::new(|| {
        std::array::from_fn(|rt| Operand::Special(Special::of(&format!("blend_descriptor_{rt}"), false)))
    });
    DESCRIPTORS[rt as usize]
}

/// The special FAU value `atest_datum`, looked up by name once.
static ATEST_DATUM: LazyLock<Special> = LazyLock::new(|| Special::of("atest_datum", false));

fn vertex_outputs(ctx: &mut Ctx) {
    let program = ctx.program;
    // Every output is described once: as an output, or as a varying.
    ctx.io.outputs.reserve(2);
    ctx.io.varyings.reserve(output_decls(program).count());
    let index_reg = preload(ctx, 59);
    let (lo, hi) = record_address(ctx, index_reg);
    // The extended record (point size, layer) at linear index + 4, addressed once if needed.
    let mut extended = None;
    let mut extended_record = |ctx: &mut Ctx| {
        *extended.get_or_insert_with(|| {
            let linear = ctx.builder().iadd_imm(index_reg, 4);
            record_address(ctx, linear)
        })
    };
    let fixed = {
        let mut slots: Vec<u32> = output_decls(program).filter_map(|(_, name, sem)| fixed_slot(name, sem)).collect();
        slots.sort_unstable();
        slots.dedup();
        slots
    };
    for (index, name, sem) in output_decls(program) {
        match name {
            SemanticName::Position => {
                let pos: [Value; 4] = std::array::from_fn(|c| read_output(ctx, index, c));
                let screen = viewport_transform(ctx, pos);
                store(ctx, &screen, (lo, hi), 0, MemoryAccess::Istream);
                ctx.io.outputs.push(meta::Output {
                    register: indexed_name("OUT", index),
                    semantic: "POSITION".into(),
                    kind: "position".into(),
                    rt: None,
                });
            }
            SemanticName::Psize | SemanticName::Layer => {
                // The extended record (linear index + 4, ABI §A.5.3): the point size as fp16 in
                // bytes 0–1, the layer in byte 2.
                let value = read_output(ctx, index, 0);
                let (op, offset, value, semantic, kind) = if name == SemanticName::Psize {
                    ctx.io.flags.writes_point_size = true;
                    let half = ctx.builder().op(Op::V2F32_TO_V2F16, &[Src::new(value), Src::new(value)]);
                    (Op::STORE_I16, 0, half, "PSIZE", "point_size")
                } else {
                    (Op::STORE_I8, 2, value, "LAYER", "layer")
                };
                let record = extended_record(ctx);
                store_sized(ctx, op, &[value], record, offset, MemoryAccess::Istream);
                ctx.io.outputs.push(meta::Output {
                    register: indexed_name("OUT", index),
                    semantic: semantic.into(),
                    kind: kind.into(),
                    rt: None,
                });
            }
            _ => {
                let Some(offset) = varying_offset(&fixed, name, sem) else {
                    ctx.unsupported(&format!("a vertex output with semantic {}", name.name()), "it is not a varying");
                    continue;
                };
                // Up to the highest component the program writes (`STORE.i32` … `.i128`, ABI
                // §A.5.3, as Mesa's `bi_emit_store_vary`): padding the store to four components
                // made the allocator gather zeros into every staging vector. A hole below the
                // highest component reads the shared zero; a varying nothing writes is neither
                // stored nor listed.
                let components = (0..4)
                    .rev()
                    .find(|&c| {
                        let var = ctx.var(File::Output, index, c);
                        ctx.ssa.read(var).is_some()
                    })
                    .map_or(0, |c| c + 1);
                if components == 0 {
                    continue;
                }
                let mut values: SmallVec<[Value; 4]> = SmallVec::new();
                for c in 0..components {
                    let value = read_output(ctx, index, c);
                    values.push(value);
                }
                store(ctx, &values, (lo, hi), offset, MemoryAccess::Estream);
                ctx.io.varyings.push(meta::Varying {
                    register: indexed_name("OUT", index),
                    semantic: semantic_text(name, sem),
                    offset,
                    components: components as u32,
                    interpolation: "perspective".into(),
                    location: "center".into(),
                });
            }
        }
    }
}

/// `LEA_BUF_IMM` of IDVS record `linear` (table 61): the record's 64-bit address.
fn record_address(ctx: &mut Ctx, linear: Value) -> (Value, Value) {
    static LEA: LazyLock<Instr> = LazyLock::new(|| {
        let mut lea = Instr::new(Op::LEA_BUF_IMM);
        let _ = lea.set_slot(Slot::Slot0);
        let _ = lea.set_imm("table", 13);
        let _ = lea.set_imm("index", 0);
        lea
    });
    let list = ctx.builder().message(*LEA, &[Src::new(linear)], &[], 2);
    let v = ctx.shader.get(list);
    (v[0], v[1])
}

/// Screen-space position (docs/metadata.md): `w' = clamp(1/w, ±32768)`, `x' = fma(x·w',
/// scale.x, offset.x)`, likewise y and z.
fn viewport_transform(ctx: &mut Ctx, pos: [Value; 4]) -> [Value; 4] {
    let rcp = ctx.builder().frcp(pos[3]);
    let lo = ctx.builder().fmax(rcp, Src::f32(-32768.0));
    let w = ctx.builder().fmin(lo, Src::f32(32768.0));
    let mut out = [w; 4];
    for c in 0..3 {
        let scaled = ctx.builder().fmul(pos[c], w);
        match ctx.fau.sysval_pair("viewport_scale", "viewport_offset", c as u32) {
            Some(word) => {
                out[c] =
                    ctx.builder().fma(scaled, Src::new(Operand::Uniform(word)), Src::new(Operand::Uniform(word + 1)));
            }
            None => {
                ctx.unsupported("the position output", "the push-constant table is full");
                out[c] = scaled;
            }
        }
    }
    out
}

/// `STORE.i{32·n}` of `values` at `address + offset`.
fn store(ctx: &mut Ctx, values: &[Value], address: (Value, Value), offset: u32, access: MemoryAccess) {
    let op = match values.len() {
        1 => Op::STORE_I32,
        2 => Op::STORE_I64,
        3 => Op::STORE_I96,
        _ => Op::STORE_I128,
    };
    store_sized(ctx, op, values, address, offset, access);
}

fn store_sized(ctx: &mut Ctx, op: Op, values: &[Value], address: (Value, Value), offset: u32, access: MemoryAccess) {
    /// A store with its slot and memory access set, and where its `offset` immediate lives.
    struct Template {
        mach: Instr,
        access: MemoryAccess,
        offset: usize,
    }
    const OPS: [Op; 5] = [Op::STORE_I16, Op::STORE_I32, Op::STORE_I64, Op::STORE_I96, Op::STORE_I128];
    const ACCESSES: [MemoryAccess; 2] = [MemoryAccess::Istream, MemoryAccess::Estream];
    // The fields are set by name once per opcode and access (each lookup compares strings).
    static TEMPLATES: LazyLock<Vec<Template>> = LazyLock::new(|| {
        let mut templates = Vec::with_capacity(OPS.len() * ACCESSES.len());
        for op in OPS {
            for access in ACCESSES {
                let mut mach = Instr::new(op);
                let _ = mach.set_slot(Slot::Slot0);
                let _ = mach.set("memory_access", access);
                templates.push(Template {
                    mach,
                    access,
                    offset: mach.info().imm_index("offset").expect("stores have an offset field"),
                });
            }
        }
        templates
    });
    let mach = match TEMPLATES.iter().find(|t| t.mach.opcode == op && t.access == access) {
        Some(template) => {
            let mut mach = template.mach;
            let _ = mach.set_imm_at(template.offset, i64::from(offset));
            mach
        }
        None => {
            let mut mach = Instr::new(op);
            let _ = mach.set_slot(Slot::Slot0);
            let _ = mach.set("memory_access", access);
            let _ = mach.set_imm("offset", i64::from(offset));
            mach
        }
    };
    ctx.builder().emit(mach, &[Src::new(Operand::Pair(address.0, address.1))], &[values], 0);
}

/// Fills the metadata lowering knows.
pub fn finish_metadata(ctx: &mut Ctx) {
    let m = &mut ctx.meta_out;
    m.format_version = meta::FORMAT_VERSION;
    m.stage = ctx.stage.name().into();
    m.gpu = ctx.options.gpu.name.into();
    m.arch = ctx.options.gpu.arch;
    m.fau = ctx.fau.take_meta();
    m.attributes = std::mem::take(&mut ctx.io.attributes);
    m.attributes.sort_by_key(|a| a.index);
    m.varyings = std::mem::take(&mut ctx.io.varyings);
    m.varyings.sort_by_key(|v| v.offset);
    m.outputs = std::mem::take(&mut ctx.io.outputs);
    m.system_values = std::mem::take(&mut ctx.io.system_value_meta);
    m.textures = ctx.io.textures.values().cloned().collect();
    m.ubos = ctx.io.ubos.iter().copied().collect();
    m.flags = ctx.io.flags;
    let [early_depth_stencil, width, height, depth] = ctx.program.property_values([
        PropertyName::FsEarlyDepthStencil,
        PropertyName::CsFixedBlockWidth,
        PropertyName::CsFixedBlockHeight,
        PropertyName::CsFixedBlockDepth,
    ]);
    m.flags.early_fragment_tests = matches!(early_depth_stencil, Some(PropertyValue::Uint(v)) if v != 0);
    if ctx.stage == Stage::Compute {
        let dims = [width, height, depth].map(|value| match value {
            Some(PropertyValue::Uint(v)) => Some(v),
            _ => None,
        });
        if let [Some(x), Some(y), Some(z)] = dims {
            m.local_size = Some([x, y, z]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::indexed_name;

    #[test]
    fn indexed_names_read_like_format() {
        for index in [0i64, 7, 10, 99, 100, 1_234_567, -1, -42, i64::MIN, i64::MAX] {
            assert_eq!(indexed_name("OUT", index), format!("OUT[{index}]"));
        }
        assert_eq!(indexed_name("GENERIC", 3), "GENERIC[3]");
    }
}
