//! BUFFER, shared MEMORY and IMAGE access: LOAD, STORE, the atomics, RESQ, and the bindless
//! handles of IMG2HND and SAMP2HND.
//!
//! Buffers and shared memory: addresses are byte addresses; channel c of a LOAD/STORE accesses
//! the 32-bit word at `(address + 4c) / 4` (the low two bits are ignored). Accesses outside the
//! buffer (or the shared memory) read 0 and are not written; an atomic outside does nothing and
//! returns 0.
//!
//! Images follow the shared model of `exec::image` (formats, coordinates, out-of-bounds rules):
//! a LOAD unpacks the texel to the format's register class and applies the resource swizzle, a
//! STORE packs the written channels into the texel (unwritten channels keep their bits), the
//! atomics work on the 32-bit texel of an R32 format. A coordinate that the hardware's 16-bit
//! coordinate packing would wrap onto another texel (x or y ≥ 2¹⁶ in a 2D image, say) has no
//! defined outcome: loads give unconstrained values, stores and atomics make the whole image
//! unconstrained. A bindless image is named by the handle `5 << 24 | i` in the low word of the
//! 64-bit handle (the first swizzled component of the resource register), as IMG2HND makes it;
//! SAMP2HND gives `(3 << 24 | u, 4 << 24 | u)` (docs/metadata.md).
//!
//! Stores and atomics are performed by the active lanes that are not helpers, in lane order
//! 0..3; loads by every active lane. The wrapping atomics follow the implementations behind
//! the opcode (docs/interpreter.md): ATOMINC_WRAP stores `old >= src ? 0 : old + 1`,
//! ATOMDEC_WRAP `old == 0 || old > src ? src : old − 1`, and both return `old`.

use super::InterpError;
use super::alu::Kind;
use super::machine::{Machine, Reg};
use super::program::{ImageDecl, Prepared};
use super::value::{self as v, Val};
use crate::exec::LANES;
use crate::exec::image::{Channel, Format, Image, Shape, TexelCoord};
use crate::exec::io::Inputs;
use crate::exec::texture::Dim;
use crate::tgsi::ast::*;
use crate::tgsi::opcodes::Opcode;
use std::collections::BTreeMap;

/// Resource table of images and of samplers/textures in bindless handles (docs/metadata.md).
const IMAGE_TABLE: u32 = 5;
const SAMPLER_TABLE: u32 = 3;
const TEXTURE_TABLE: u32 = 4;

/// The format of an image declared with `PIPE_FORMAT_NONE` when the inputs do not give one.
pub const NONE_FORMAT_DEFAULT: &str = "R32G32B32A32_FLOAT";

pub fn is_memory(op: Opcode) -> bool {
    use Opcode as O;
    matches!(
        op,
        O::Load
            | O::Store
            | O::Resq
            | O::Img2hnd
            | O::Samp2hnd
            | O::Atomuadd
            | O::Atomfadd
            | O::Atomxchg
            | O::Atomcas
            | O::Atomand
            | O::Atomor
            | O::Atomxor
            | O::Atomumin
            | O::Atomumax
            | O::Atomimin
            | O::Atomimax
            | O::AtomincWrap
            | O::AtomdecWrap
    )
}

/// An image as the interpreter holds it.
#[derive(Clone, Debug)]
pub struct ImageState {
    pub image: Image,
    pub decl: ImageDecl,
    /// The packed texels (`exec::image` layout).
    pub data: Vec<u8>,
    /// The accuracy of each 32-bit word of `data` (0 exact, a float bound, or +∞).
    pub err: Vec<f32>,
}

/// The images of a program: the inputs' image for each declared unit, else the default image
/// of the declared target and format (seeded with the unit).
pub fn images(p: &Prepared, inputs: &Inputs) -> Result<BTreeMap<u32, ImageState>, InterpError> {
    let mut out = BTreeMap::new();
    for (&unit, &decl) in &p.images {
        let span = p
            .declarations
            .iter()
            .find(|d| d.file == File::Image && (d.first..=d.last).contains(&unit))
            .map_or_else(Default::default, |d| d.span);
        let image = match inputs.images.get(&unit) {
            Some(image) => image.clone(),
            None => {
                let format = decl.format.or_else(|| Format::by_name(NONE_FORMAT_DEFAULT)).expect("a known format");
                Image::default_for(decl.target, format, unit).expect("declared targets have a shape")
            }
        };
        if image.shape() != decl.shape {
            return Err(InterpError::runtime(
                span,
                format!(
                    "IMAGE[{unit}] is declared {} but the inputs describe a {:?} image",
                    decl.target.name(),
                    image.shape()
                ),
            ));
        }
        if decl.format.is_some_and(|f| f != image.format) {
            return Err(InterpError::runtime(
                span,
                format!("IMAGE[{unit}] is declared with a format other than the inputs' {}", image.format.name()),
            ));
        }
        let data = image.initial_data();
        let err = vec![0.0; data.len().div_ceil(4)];
        out.insert(unit, ImageState { image, decl, data, err });
    }
    Ok(out)
}

#[derive(Clone, Copy, PartialEq)]
enum Space {
    Buffer(u32),
    Shared,
}

/// What a memory operand names.
#[derive(Clone, Copy, PartialEq)]
enum Resource {
    Linear(Space),
    /// A declared image (`IMAGE[i]`, possibly indirect).
    Image,
    /// A bindless image handle held in a data register.
    Bindless,
}

/// Where an image access lands in one lane.
enum Texel {
    /// Byte offset of the texel in image `unit`.
    At { unit: u32, offset: usize },
    /// Out of bounds: loads read 0, stores and atomics do nothing.
    Outside,
    /// The image or the texel is not known exactly.
    Unknown,
}

impl Machine<'_, '_> {
    fn resource(&self, reg: &Register) -> Result<Resource, InterpError> {
        match reg.file {
            File::Buffer => Ok(Resource::Linear(Space::Buffer(reg.index.value.max(0) as u32))),
            File::Memory => Ok(Resource::Linear(Space::Shared)),
            File::Image => Ok(Resource::Image),
            File::Temp | File::Const => Ok(Resource::Bindless),
            f => Err(InterpError::unsupported(
                self.op_span(),
                format!(
                    "memory access to `{}` is not supported (BUFFER, IMAGE, shared MEMORY and bindless image handles in TEMP or CONST are)",
                    f.name()
                ),
            )),
        }
    }

    fn words(&mut self, space: Space) -> &mut Vec<Val> {
        match space {
            Space::Buffer(b) => self.buffers.entry(b).or_default(),
            Space::Shared => &mut self.shared,
        }
    }

    fn load_word(&mut self, space: Space, byte: u64) -> Val {
        let words = self.words(space);
        words.get((byte / 4) as usize).copied().unwrap_or(Val::ZERO)
    }

    fn store_word(&mut self, space: Space, byte: u64, val: Val) {
        let words = self.words(space);
        if let Some(w) = words.get_mut((byte / 4) as usize) {
            *w = val;
        }
    }

    /// The memory a linear resource operand names in `lane`: `space` itself, or for an
    /// indirectly addressed `BUFFER` the buffer its index selects there (`None` when the address
    /// register is not exact or the index names no declared buffer).
    fn lane_space(&self, reg: &Register, space: Space, lane: usize) -> Option<Space> {
        if reg.file != File::Buffer || reg.index.indirect.is_none() {
            return Some(space);
        }
        let index = u32::try_from(self.resource_index(reg, lane)?).ok()?;
        self.buffers.contains_key(&index).then_some(Space::Buffer(index))
    }

    /// A store or atomic on a buffer that is not known: it may touch any word of any buffer.
    fn unknown_buffers(&mut self) {
        let ids: Vec<u32> = self.buffers.keys().copied().collect();
        for b in ids {
            self.unknown_address(Space::Buffer(b));
        }
    }

    /// An address that is not exact: the access may touch any word.
    fn unknown_address(&mut self, space: Space) {
        for w in self.words(space).iter_mut() {
            w.err = f32::INFINITY;
        }
    }

    /// Once a lane's control flow (or addressing) is uncertain it may run stores and atomics
    /// the nominal run skipped, or skip those it ran: every word of every resource the program
    /// writes (a directly named BUFFER, shared MEMORY; any image, and with an indirect or
    /// bindless resource all of them) becomes unconstrained. Called when the first lane becomes
    /// uncertain (so later loads see it) and again when the run ends.
    pub fn uncertain_writes(&mut self) {
        let (mut buffers, mut all_buffers, mut shared, mut images) = (Vec::new(), false, false, false);
        for inst in &self.p.insts {
            let reg = match inst.opcode {
                Opcode::Store => inst.dst.first().map(|d| d.register),
                Opcode::Load | Opcode::Resq | Opcode::Img2hnd | Opcode::Samp2hnd => None,
                op if is_memory(op) => inst.src.first().map(|s| s.register),
                _ => None,
            };
            let Some(reg) = reg else { continue };
            match reg.file {
                File::Buffer if reg.index.indirect.is_none() => buffers.push(reg.index.value.max(0) as u32),
                File::Buffer => all_buffers = true,
                File::Memory => shared = true,
                _ => images = true,
            }
        }
        if all_buffers {
            self.unknown_buffers();
        } else {
            for b in buffers {
                self.unknown_address(Space::Buffer(b));
            }
        }
        if shared {
            self.unknown_address(Space::Shared);
        }
        if images {
            for state in self.images.values_mut() {
                state.err.iter_mut().for_each(|e| *e = f32::INFINITY);
            }
        }
    }

    pub fn memory(&mut self, op: Opcode) -> Result<(), InterpError> {
        use Opcode as O;
        let inst = self.inst();
        match op {
            O::Load => match self.resource(&inst.src[0].register)? {
                Resource::Linear(space) => self.load_linear(space),
                _ => self.image_load(),
            },
            O::Store => match self.resource(&inst.dst[0].register)? {
                Resource::Linear(space) => self.store_linear(space),
                _ => self.image_store(),
            },
            O::Resq => self.resq(),
            O::Img2hnd | O::Samp2hnd => self.handle(op),
            _ => self.atomic(op),
        }
    }

    fn load_linear(&mut self, space: Space) -> Result<(), InterpError> {
        let swizzle = self.inst().src[0].swizzle;
        let addr = self.src(1)?;
        let reg = self.inst().src[0].register;
        let mut r: Reg = [[Val::ZERO; 4]; LANES];
        for l in Machine::lanes(self.exec) {
            let Some(space) = self.lane_space(&reg, space, l) else {
                r[l] = [Val::unknown(0); 4];
                continue;
            };
            let a = addr[l][0];
            let mut loaded = [Val::ZERO; 4];
            for (c, w) in loaded.iter_mut().enumerate() {
                *w = self.load_word(space, a.bits as u64 + 4 * c as u64);
            }
            r[l] = std::array::from_fn(|c| {
                let w = loaded[swizzle[c].index()];
                if a.is_exact() { w } else { Val::unknown(w.bits) }
            });
        }
        self.write_all(&r, Kind::Int)
    }

    fn store_linear(&mut self, space: Space) -> Result<(), InterpError> {
        let mask = self.inst().dst[0].write_mask;
        let addr = self.src(0)?;
        let value = self.src(1)?;
        let reg = self.inst().dst[0].register;
        for l in Machine::lanes(self.exec & !self.demoted) {
            let Some(space) = self.lane_space(&reg, space, l) else {
                self.unknown_buffers();
                continue;
            };
            let a = addr[l][0];
            if !a.is_exact() {
                self.unknown_address(space);
                continue;
            }
            for c in mask.components() {
                let mut val = value[l][c.index()];
                if self.tainted & (1 << l) != 0 {
                    val.err = f32::INFINITY;
                }
                self.store_word(space, a.bits as u64 + 4 * c.index() as u64, val);
            }
        }
        Ok(())
    }

    fn resq(&mut self) -> Result<(), InterpError> {
        let reg = self.inst().src[0].register;
        match self.resource(&reg)? {
            Resource::Linear(Space::Buffer(_)) if reg.index.indirect.is_some() => Err(InterpError::unsupported(
                self.op_span(),
                "`RESQ` of an indirectly addressed BUFFER (the compiler reads sizes from push constants chosen per buffer)",
            )),
            Resource::Linear(Space::Buffer(b)) => {
                let bytes = self.buffers.get(&b).map_or(0, |w| w.len() as u32 * 4);
                let r: Reg = [[Val::exact(bytes), Val::unknown(0), Val::unknown(0), Val::unknown(0)]; LANES];
                self.write_all(&r, Kind::Int)
            }
            Resource::Linear(Space::Shared) => {
                Err(InterpError::unsupported(self.op_span(), "`RESQ` of MEMORY has no meaning"))
            }
            Resource::Bindless => Err(InterpError::unsupported(self.op_span(), "`RESQ` of a bindless image handle")),
            Resource::Image => {
                let mut r: Reg = [[Val::ZERO; 4]; LANES];
                for l in Machine::lanes(self.exec) {
                    r[l] = match self.image_unit(&reg, l)? {
                        Some(unit) => match self.images.get(&unit) {
                            Some(s) => s.image.query_size().map(Val::exact),
                            None => [Val::unknown(0); 4],
                        },
                        None => [Val::unknown(0); 4],
                    };
                }
                self.write_all(&r, Kind::Int)
            }
        }
    }

    /// IMG2HND / SAMP2HND: the 64-bit handle goes to xy and zw (low word in x/z).
    fn handle(&mut self, op: Opcode) -> Result<(), InterpError> {
        let reg = self.inst().src[0].register;
        let mut r: Reg = [[Val::ZERO; 4]; LANES];
        for l in Machine::lanes(self.exec) {
            let Some(index) = self.resource_index(&reg, l) else {
                r[l] = [Val::unknown(0); 4];
                continue;
            };
            let index = index as u32;
            let (lo, hi) = if op == Opcode::Img2hnd {
                ((IMAGE_TABLE << 24).wrapping_add(index), 0)
            } else {
                ((SAMPLER_TABLE << 24).wrapping_add(index), (TEXTURE_TABLE << 24).wrapping_add(index))
            };
            r[l] = [Val::exact(lo), Val::exact(hi), Val::exact(lo), Val::exact(hi)];
        }
        self.write_all(&r, Kind::Int)
    }

    /// The index a (possibly indirect) resource register names in `lane`; `None` when the
    /// address register is not exact.
    fn resource_index(&self, reg: &Register, lane: usize) -> Option<i64> {
        let mut index = i64::from(reg.index.value);
        if let Some(ind) = &reg.index.indirect {
            let areg = Register { file: ind.file, dimension: None, index: Index::direct(ind.index) };
            let a = self.read_reg(&areg, lane, ind.component.index()).ok()?;
            if !a.is_exact() {
                return None;
            }
            index += i64::from(a.int());
        }
        Some(index)
    }

    /// The image unit a resource operand names in `lane` (`IMAGE[i]` or a bindless handle in the
    /// register's first swizzled component); `None` when it is not known exactly or names no
    /// declared image.
    fn image_unit(&self, reg: &Register, lane: usize) -> Result<Option<u32>, InterpError> {
        if reg.file == File::Image {
            let unit = self.resource_index(reg, lane).and_then(|i| u32::try_from(i).ok());
            return Ok(unit.filter(|u| self.images.contains_key(u)));
        }
        let component = self.inst().src.first().map_or(0, |s| s.swizzle[0].index());
        let component = if self.inst().opcode.canonical() == Opcode::Store { 0 } else { component };
        let h = self.read_reg(reg, lane, component)?;
        if !h.is_exact() {
            return Ok(None);
        }
        let (table, unit) = (h.bits >> 24, h.bits & 0xFF_FFFF);
        if table != IMAGE_TABLE || !self.images.contains_key(&unit) {
            return Err(InterpError::runtime(
                self.op_span(),
                format!("the bindless handle {:#x} names no declared image (images are 5 << 24 | i)", h.bits),
            ));
        }
        Ok(Some(unit))
    }

    /// The shape an instruction addresses an image with: the declaration's, or for a bindless
    /// handle the instruction's target (which must match the image).
    fn access_shape(&self, reg: &Register, unit: u32) -> Result<Shape, InterpError> {
        let state = &self.images[&unit];
        if reg.file == File::Image {
            return Ok(state.decl.shape);
        }
        let shape = Shape::of_target(self.inst().memory.texture)
            .ok_or_else(|| InterpError::unsupported(self.op_span(), "a bindless image access needs an image target"))?;
        if shape != state.decl.shape {
            return Err(InterpError::runtime(
                self.op_span(),
                format!(
                    "the instruction addresses IMAGE[{unit}] as {} but it is declared {}",
                    self.inst().memory.texture.name(),
                    state.decl.target.name()
                ),
            ));
        }
        Ok(shape)
    }

    /// The texel an image access reaches in `lane` with the address `a`.
    fn texel(&self, reg: &Register, a: [Val; 4], lane: usize) -> Result<Texel, InterpError> {
        let Some(unit) = self.image_unit(reg, lane)? else { return Ok(Texel::Unknown) };
        let shape = self.access_shape(reg, unit)?;
        let used = match (shape.dim, shape.array) {
            (Dim::Buffer, _) | (Dim::D1, false) => 1,
            (Dim::D1, true) | (Dim::D2 | Dim::Rect, false) => 2,
            _ => 3,
        };
        if a[..used].iter().any(|v| !v.is_exact()) || (shape.msaa && !a[3].is_exact()) {
            return Ok(Texel::Unknown);
        }
        let image = &self.images[&unit].image;
        let coord = TexelCoord::from_tgsi(shape, a.map(|v| v.bits));
        let (w0, w1) = coord.to_packed(shape);
        let offset = image.offset(coord);
        if offset != image.offset(TexelCoord::from_packed(image.shape(), w0, w1)) {
            // The 16-bit coordinate packing would reach another texel.
            return Ok(Texel::Unknown);
        }
        Ok(offset.map_or(Texel::Outside, |offset| Texel::At { unit, offset }))
    }

    fn image_load(&mut self) -> Result<(), InterpError> {
        let reg = self.inst().src[0].register;
        // The swizzle of a bindless handle register selects the handle, not channels.
        let swizzle =
            if reg.file == File::Image { self.inst().src[0].swizzle } else { crate::tgsi::ast::IDENTITY_SWIZZLE };
        let addr = self.src(1)?;
        let mut r: Reg = [[Val::ZERO; 4]; LANES];
        for l in Machine::lanes(self.exec) {
            let texel = match self.texel(&reg, addr[l], l)? {
                Texel::At { unit, offset } => self.images[&unit].read(offset),
                Texel::Outside => [Val::ZERO; 4],
                Texel::Unknown => [Val::unknown(0); 4],
            };
            r[l] = std::array::from_fn(|c| texel[swizzle[c].index()]);
        }
        self.write_all(&r, Kind::Int)
    }

    fn image_store(&mut self) -> Result<(), InterpError> {
        let reg = self.inst().dst[0].register;
        let mask = self.inst().dst[0].write_mask;
        let addr = self.src(0)?;
        let value = self.src(1)?;
        for l in Machine::lanes(self.exec & !self.demoted) {
            match self.texel(&reg, addr[l], l)? {
                Texel::At { unit, offset } => {
                    let tainted = self.tainted & (1 << l) != 0;
                    if let Some(state) = self.images.get_mut(&unit) {
                        state.write(offset, value[l], mask.0, tainted);
                    }
                }
                Texel::Outside => {}
                Texel::Unknown => self.unknown_image(&reg, l),
            }
        }
        Ok(())
    }

    /// A store or atomic whose texel is not known: every image it may reach becomes
    /// unconstrained.
    fn unknown_image(&mut self, reg: &Register, lane: usize) {
        let known = self.image_unit(reg, lane).ok().flatten();
        for (unit, state) in self.images.iter_mut() {
            if known.is_none_or(|k| k == *unit) {
                state.err.iter_mut().for_each(|e| *e = f32::INFINITY);
            }
        }
    }

    fn atomic(&mut self, op: Opcode) -> Result<(), InterpError> {
        let inst = self.inst();
        let reg = inst.src[0].register;
        let resource = self.resource(&reg)?;
        let offset = self.src(1)?;
        let value = self.src(2)?;
        let third = if op == Opcode::Atomcas { Some(self.src(3)?) } else { None };
        let mut r: Reg = [[Val::ZERO; 4]; LANES];
        let lanes: Vec<usize> = Machine::lanes(self.exec).collect();
        for l in lanes {
            if self.demoted & (1 << l) != 0 {
                r[l] = [Val::unknown(0); 4];
                continue;
            }
            let tainted = self.tainted & (1 << l) != 0;
            let operands = (value[l][0], third.map(|t| t[l][0]));
            match resource {
                Resource::Linear(space) => {
                    let Some(space) = self.lane_space(&reg, space, l) else {
                        self.unknown_buffers();
                        r[l] = [Val::unknown(0); 4];
                        continue;
                    };
                    let a = offset[l][0];
                    if !a.is_exact() {
                        self.unknown_address(space);
                        r[l] = [Val::unknown(0); 4];
                        continue;
                    }
                    let byte = a.bits as u64;
                    if (byte / 4) >= self.words(space).len() as u64 {
                        continue;
                    }
                    let old = self.load_word(space, byte);
                    let new = atomic_value(op, old, operands.0, operands.1);
                    self.store_word(space, byte, if tainted { Val::unknown(new.bits) } else { new });
                    r[l] = [old; 4];
                }
                Resource::Image | Resource::Bindless => {
                    let texel = self.texel(&reg, offset[l], l)?;
                    if let Texel::At { unit, .. } = texel {
                        self.check_atomic_format(op, self.images[&unit].image.format)?;
                    }
                    match texel {
                        Texel::At { unit, offset } => {
                            let state = self.images.get_mut(&unit).expect("resolved unit");
                            let word = offset / 4;
                            let bits = u32::from_le_bytes(state.data[offset..offset + 4].try_into().expect("4 bytes"));
                            let old = Val { bits, err: state.err[word] };
                            let new = atomic_value(op, old, operands.0, operands.1);
                            state.data[offset..offset + 4].copy_from_slice(&new.bits.to_le_bytes());
                            state.err[word] = if tainted { f32::INFINITY } else { new.err };
                            r[l] = [old; 4];
                        }
                        Texel::Outside => {}
                        Texel::Unknown => {
                            self.unknown_image(&reg, l);
                            r[l] = [Val::unknown(0); 4];
                        }
                    }
                }
            }
        }
        self.write_all(&r, Kind::Int)
    }

    /// Image atomics need a single 32-bit channel: R32_UINT or R32_SINT, and R32_FLOAT for
    /// ATOMXCHG and ATOMFADD (tgsi.rst, GL 4.6 §8.26).
    fn check_atomic_format(&self, op: Opcode, format: Format) -> Result<(), InterpError> {
        let float_ok = matches!(op, Opcode::Atomxchg | Opcode::Atomfadd);
        let ok = matches!(format.name(), "R32_UINT" | "R32_SINT") || (float_ok && format.name() == "R32_FLOAT");
        if ok {
            return Ok(());
        }
        Err(InterpError::unsupported(
            self.op_span(),
            format!(
                "`{}` on an image of format {}: image atomics need a 32-bit single-channel format",
                op.name(),
                format.name()
            ),
        ))
    }
}

/// The value an atomic stores, from the old value, the operand and (ATOMCAS) the new value.
fn atomic_value(op: Opcode, old: Val, x: Val, third: Option<Val>) -> Val {
    use Opcode as O;
    let (o, s) = (old.bits, x.bits);
    match op {
        O::Atomuadd => Val::derived(o.wrapping_add(s), &[old, x]),
        O::Atomfadd => v::add(old, x),
        O::Atomxchg => x,
        O::Atomcas => {
            let src = third.unwrap_or(Val::ZERO);
            let chosen = if o == s { src } else { old };
            if old.is_exact() && x.is_exact() { chosen } else { Val::unknown(chosen.bits) }
        }
        O::Atomand => Val::derived(o & s, &[old, x]),
        O::Atomor => Val::derived(o | s, &[old, x]),
        O::Atomxor => Val::derived(o ^ s, &[old, x]),
        O::Atomumin => Val::derived(o.min(s), &[old, x]),
        O::Atomumax => Val::derived(o.max(s), &[old, x]),
        O::Atomimin => Val::derived((o as i32).min(s as i32) as u32, &[old, x]),
        O::Atomimax => Val::derived((o as i32).max(s as i32) as u32, &[old, x]),
        O::AtomincWrap => Val::derived(if o >= s { 0 } else { o + 1 }, &[old, x]),
        _ => Val::derived(if o == 0 || o > s { s } else { o - 1 }, &[old, x]),
    }
}

impl ImageState {
    /// The texel at `offset`, unpacked, with the accuracy of its words.
    fn read(&self, offset: usize) -> [Val; 4] {
        let format = self.image.format;
        let bytes = format.texel_bytes();
        let values = format.unpack(&self.data[offset..offset + bytes]);
        let words = offset / 4..(offset + bytes).div_ceil(4);
        let float32 = format.info().channels.iter().all(|c| *c == Channel::F32);
        let whole = if self.err[words.clone()].iter().all(|&e| e == 0.0) { 0.0 } else { f32::INFINITY };
        std::array::from_fn(|c| {
            let err = match format.info().channels.get(c) {
                Some(_) if float32 => self.err[offset / 4 + c],
                Some(_) => whole,
                None => 0.0,
            };
            Val { bits: values[c], err }
        })
    }

    /// Stores the channels of `mask` of `values` into the texel at `offset`.
    fn write(&mut self, offset: usize, values: [Val; 4], mask: u8, tainted: bool) {
        let format = self.image.format;
        let bytes = format.texel_bytes();
        let merged = format.merge(&self.data[offset..offset + bytes], values.map(|v| v.bits), mask);
        self.data[offset..offset + bytes].copy_from_slice(&merged);
        let channels = format.info().channels.len();
        let written = (0..channels).filter(|&c| mask >> c & 1 == 1);
        if format.info().channels.iter().all(|c| *c == Channel::F32) {
            for c in written {
                self.err[offset / 4 + c] = if tainted { f32::INFINITY } else { values[c].err };
            }
            return;
        }
        let inexact = tainted || written.clone().any(|c| values[c].err != 0.0);
        let covers = (0..channels).all(|c| mask >> c & 1 == 1) && bytes >= 4;
        for e in &mut self.err[offset / 4..(offset + bytes).div_ceil(4)] {
            *e = match (inexact, covers) {
                (true, _) => f32::INFINITY,
                (false, true) => 0.0,
                (false, false) => *e,
            };
        }
    }
}
