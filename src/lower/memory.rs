//! Memory access (§C.13–§C.15 of the lowering reference): `LOAD`, `STORE`, the `ATOM*` family
//! and `RESQ` on shader buffers, shared memory, constant buffers and images; `IMG2HND` and
//! `SAMP2HND`.
//!
//! Resources and how they are reached:
//!
//! | TGSI resource | load | store / atomic address |
//! | --- | --- | --- |
//! | `BUFFER[i]` (SSBO) | `LD_BUFFER` with handle `6<<24 \| i` | the pushed address `buffer_address.i` (constant `i` < 32) plus the byte offset; else `LEA_BUFFER` (byte offset, handle) |
//! | `CONSTBUF[k]` (UBO as raw bytes) | `LD_BUFFER` with handle `k` | read-only |
//! | `MEMORY[i], SHARED` | `LOAD` on `workgroup_local_pointer` + offset | the same address |
//! | `IMAGE[i]` | `LD_TEX_IMM` (i < 16, `table:0x5`) or `LD_TEX` with handle `5<<24 \| i` | `LEA_TEX_IMM` / `LEA_TEX` → address + conversion descriptor; stores with `ST_CVT` |
//! | a register (bindless image) | `LD_TEX` with the handle read from the register's first swizzled component | `LEA_TEX` with that handle |
//!
//! * **Bytes.** Channel c of a buffer/shared `LOAD` or `STORE` is the 32-bit word at byte address
//!   `address.x + 4c` (the interpreter uses exactly that). Addresses are assumed 4-byte aligned,
//!   as every TGSI producer emits them; Valhall accesses of up to 16 bytes need only 4-byte
//!   alignment. The resource swizzle of `LOAD` (`BUFFER[0].yx`) picks which word feeds each
//!   destination channel.
//! * **Access sizes.** A `LOAD` reads the span of words from the lowest to the highest one any
//!   written channel needs, in one access (at most 16 bytes, so it never splits); words inside
//!   the span that nobody needs lie between two needed ones, so no access reaches memory the
//!   shader did not address. A `STORE` writes one access per run of consecutive write-mask
//!   channels (`.xyw` → 8 bytes at +0 and 4 bytes at +12), so unwritten words are never touched.
//! * **Shared memory** has no segment on Valhall: the address is the 64-bit
//!   `workgroup_local_pointer` plus the byte offset, built as a fresh even/odd register pair
//!   (low word `pointer.w0 + offset`, high word `pointer.w1`; the workgroup-local window never
//!   crosses a 4 GiB boundary, so there is no carry). Constant offsets go into the instruction's
//!   immediate when they fit (16-bit signed for `LOAD`/`STORE`, 8-bit unsigned for atomics).
//!   Every `MEMORY[i], SHARED` declaration names the same workgroup memory from byte 0 (TGSI
//!   producers declare one). `GLOBAL`, `PRIVATE` and `INPUT` memory are rejected.
//! * **Images** take integer texel coordinates packed 16:16 into two sources: 1D and buffer
//!   images `(x, 0)`, 2D/RECT `(x | y<<16, 0)`, 3D `(x | y<<16, z)`, 1D arrays
//!   `(x, layer<<16)` with the layer in `.y`, 2D arrays, cubes and cube arrays
//!   `(x | y<<16, layer<<16)` with the layer (cube: face, cube array: 6·cube + face) in `.z`,
//!   2D MSAA `(x | y<<16, sample)` and 2D MSAA arrays `(x | y<<16, sample | layer<<16)` with the
//!   sample index in `.w` (tgsi_to_nir's convention). Loads convert to the register format of
//!   the declared format's class (float, unorm and snorm formats `f32`, signed `s32`, unsigned
//!   `u32`; `.auto`, the descriptor's own type, when the format is `NONE`). Stores use `.auto`:
//!   the descriptor's format decides the conversion, so a view whose format differs from the
//!   declared one but has the same texel size receives the register bits unchanged, as OpenGL's
//!   format compatibility requires. Only the formats OpenGL allows for images are accepted. A
//!   store writes a whole texel (`ST_CVT`), so its write mask must be x, xy, xyz or xyzw and
//!   cover the declared format's channels.
//! * **Atomics** operate on 32-bit words at `address.x` (`offset.x` for images: texel
//!   coordinates); the old value goes to every enabled destination channel. `ATOM_RETURN`
//!   returns it, `ATOM` is used when the destination is `NULL`, and an operand that is the
//!   constant 1 (or −1 for `ATOMUADD`) uses the `ATOM1_RETURN` form (`ainc`, `adec`, `aumax1`,
//!   `asmax1`, `aor1`). `ATOMCAS` is `ATOM_RETURN.compare.axchg` reading {new value, comparand}.
//!   `ATOMFADD`, `ATOMINC_WRAP` and `ATOMDEC_WRAP` have no Valhall operation: they are a
//!   compare-and-swap loop (load the word, compute the new value, `compare.axchg`, retry until
//!   the returned value equals the one the new value was computed from). The wrapping atomics
//!   follow the implementations behind the opcodes (NIR's `inc_wrap`/`dec_wrap`, what
//!   EXT_shader_image_load_store's `imageAtomicIncWrap`/`DecWrap` reach through Gallium; see
//!   docs/interpreter.md for where tgsi.rst's prose differs): `ATOMINC_WRAP` stores
//!   `old <u src ? old + 1 : 0`, `ATOMDEC_WRAP` stores `old − 1 <u src ? old − 1 : src` (that
//!   is `old == 0 || old > src ? src : old − 1`), and both return `old`.
//! * **Side effects in fragment shaders.** When the shader keeps helper lanes alive
//!   (derivatives, implicit-LOD texturing, LOD queries), stores and atomics run only in lanes
//!   whose input sample mask (r61 bits 0–15) is non-zero, i.e. not in helper invocations; a
//!   helper lane's atomic result is 0. Otherwise the back end terminates helper lanes before the
//!   first instruction and no guard is needed.
//! * **Memory qualifiers** (`COHERENT`, `VOLATILE`, `RESTRICT`, `STREAM_CACHE_POLICY`) change no
//!   instruction: Valhall has no cache-policy bits on these messages, and the flow pass orders
//!   every memory access conservatively (each waits for all outstanding memory accesses, §B.3
//!   rule 4), which is at least as strong as `COHERENT`/`VOLATILE` require. `MEMBAR` is likewise
//!   empty (lowered with the barriers in `io`).
//! * **Queries and handles.** `RESQ` reads driver-computed push words: `buffer_size.I`
//!   (component 0 = size in bytes of `BUFFER[I]`) and `image_size.I` (x width, y height or 1D
//!   array layers, z depth or layers or cubes, w samples, exactly as `RESQ` returns them).
//!   A bindless handle is a resource handle `table << 24 | index` in the low word of the 64-bit
//!   TGSI handle: `IMG2HND` gives `(5<<24 | i, 0)`; `SAMP2HND` gives the pair a texture
//!   instruction with `.wide_indices` reads, `(3<<24 | u, 4<<24 | u)` = (sampler handle,
//!   texture handle).
//!
//! Metadata: the SSBOs and images used go to `ssbos` and `images`; `wls_size` is the largest
//! byte a constant shared-memory address touches, or 32768 (the OpenGL minimum of
//! `MAX_COMPUTE_SHARED_MEMORY_SIZE`, hence the most a portable shader may use) when any shared
//! address is computed at run time.

use super::Ctx;
use super::operand::{self, Kind};
use crate::ir::{Inst, InstKind, Operand, Src, Stage, Terminator, Value};
use crate::tgsi::ast::{
    Component, Declaration, DstOperand, File, Index, Instruction, MemoryKind, Register, ResourceDecl, TextureTarget,
    WriteMask,
};
use crate::tgsi::formats::FORMATS;
use crate::tgsi::opcodes::{Opcode, OperandType};
use crate::valhall::tables::{
    AtomicOperation, AtomicOperationWith1, Condition, RegisterFormat, ResultType, Slot, VectorSize,
};
use crate::valhall::{Instr, Opcode as Op, Special};

/// Resource table numbers (docs/metadata.md).
const TABLE_UBO: u32 = 0;
const TABLE_SAMPLER: u32 = 3;
const TABLE_TEXTURE: u32 = 4;
const TABLE_IMAGE: u32 = 5;
const TABLE_SSBO: u32 = 6;

/// Indices are 24 bits wide in a handle.
const MAX_INDEX: u32 = 1 << 24;

/// `wls_size` when a shared-memory address is only known at run time.
const DYNAMIC_WLS_SIZE: u32 = 32768;

/// Immediate offset ranges: `LOAD`/`STORE` (16-bit signed), atomics and `ST_CVT` (8-bit
/// unsigned).
const LOAD_STORE_OFFSETS: (i64, i64) = (-0x8000, 0x7FFF);
const ATOMIC_OFFSETS: (i64, i64) = (0, 0xFF);

fn handle(table: u32, index: u32) -> u32 {
    table << 24 | index
}

/// Lowers `inst` if it belongs to this family; returns whether it did.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    match opcode {
        Opcode::Load => load(ctx, inst),
        Opcode::Store => store(ctx, inst),
        Opcode::Atomuadd
        | Opcode::Atomxchg
        | Opcode::Atomcas
        | Opcode::Atomand
        | Opcode::Atomor
        | Opcode::Atomxor
        | Opcode::Atomumin
        | Opcode::Atomumax
        | Opcode::Atomimin
        | Opcode::Atomimax
        | Opcode::Atomfadd
        | Opcode::AtomincWrap
        | Opcode::AtomdecWrap => atomic(ctx, inst, opcode),
        Opcode::Resq => resq(ctx, inst),
        Opcode::Img2hnd => img2hnd(ctx, inst),
        Opcode::Samp2hnd => samp2hnd(ctx, inst),
        _ => return false,
    }
    true
}

// ---- Resources --------------------------------------------------------------------------------

/// A byte-addressed memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Space {
    /// An SSBO (table 6).
    Buffer,
    /// A constant buffer read with byte addresses (table 0).
    ConstBuf,
    /// Workgroup-local memory.
    Shared,
}

/// The number class of an image format, which decides the register format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// Float, unorm and snorm formats: f32 in registers.
    Float,
    Sint,
    Uint,
}

/// The formats OpenGL allows for image units (ARB_shader_image_load_store), with their channel
/// count and class.
const IMAGE_FORMATS: [(&str, u8, Class); 39] = [
    ("R32G32B32A32_FLOAT", 4, Class::Float),
    ("R16G16B16A16_FLOAT", 4, Class::Float),
    ("R32G32_FLOAT", 2, Class::Float),
    ("R16G16_FLOAT", 2, Class::Float),
    ("R11G11B10_FLOAT", 3, Class::Float),
    ("R32_FLOAT", 1, Class::Float),
    ("R16_FLOAT", 1, Class::Float),
    ("R16G16B16A16_UNORM", 4, Class::Float),
    ("R10G10B10A2_UNORM", 4, Class::Float),
    ("R8G8B8A8_UNORM", 4, Class::Float),
    ("R16G16_UNORM", 2, Class::Float),
    ("R8G8_UNORM", 2, Class::Float),
    ("R16_UNORM", 1, Class::Float),
    ("R8_UNORM", 1, Class::Float),
    ("R16G16B16A16_SNORM", 4, Class::Float),
    ("R8G8B8A8_SNORM", 4, Class::Float),
    ("R16G16_SNORM", 2, Class::Float),
    ("R8G8_SNORM", 2, Class::Float),
    ("R16_SNORM", 1, Class::Float),
    ("R8_SNORM", 1, Class::Float),
    ("R32G32B32A32_SINT", 4, Class::Sint),
    ("R16G16B16A16_SINT", 4, Class::Sint),
    ("R8G8B8A8_SINT", 4, Class::Sint),
    ("R32G32_SINT", 2, Class::Sint),
    ("R16G16_SINT", 2, Class::Sint),
    ("R8G8_SINT", 2, Class::Sint),
    ("R32_SINT", 1, Class::Sint),
    ("R16_SINT", 1, Class::Sint),
    ("R8_SINT", 1, Class::Sint),
    ("R32G32B32A32_UINT", 4, Class::Uint),
    ("R16G16B16A16_UINT", 4, Class::Uint),
    ("R10G10B10A2_UINT", 4, Class::Uint),
    ("R8G8B8A8_UINT", 4, Class::Uint),
    ("R32G32_UINT", 2, Class::Uint),
    ("R16G16_UINT", 2, Class::Uint),
    ("R8G8_UINT", 2, Class::Uint),
    ("R32_UINT", 1, Class::Uint),
    ("R16_UINT", 1, Class::Uint),
    ("R8_UINT", 1, Class::Uint),
];

/// A declared image format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ImageFormat {
    name: &'static str,
    channels: u8,
    class: Class,
}

/// How an image is named: immediate table index, or a handle in a register/constant.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ImageIndex {
    /// Entry `index` (< 16) of the table whose 4-bit immediate encoding is `table` (tables 0–11
    /// as themselves, 60–63 as 12–15): the `_IMM` instruction forms.
    Imm { table: u32, index: u32 },
    /// A resource handle `table << 24 | index`.
    Handle(Src),
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Image {
    index: ImageIndex,
    /// Canonical target.
    target: TextureTarget,
    /// `None` for `PIPE_FORMAT_NONE` (the descriptor decides).
    format: Option<ImageFormat>,
}

impl Image {
    fn register_format(&self) -> RegisterFormat {
        match self.format.map(|f| f.class) {
            None => RegisterFormat::Auto,
            Some(Class::Float) => RegisterFormat::F32,
            Some(Class::Sint) => RegisterFormat::S32,
            Some(Class::Uint) => RegisterFormat::U32,
        }
    }
}

/// A resolved resource operand.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Resource {
    /// Byte-addressed memory; `handle` is the resource handle (unused for shared memory).
    Linear {
        space: Space,
        handle: Src,
    },
    Image(Image),
}

/// The declaration covering `index` of `file`.
fn declaration<'p>(ctx: &Ctx<'p>, file: File, index: i64) -> Option<&'p Declaration> {
    ctx.decls.covering(file, index)
}

/// Adds `index` to a sorted list without duplicates.
fn note(list: &mut Vec<u32>, index: u32) {
    if let Err(at) = list.binary_search(&index) {
        list.insert(at, index);
    }
}

/// The handle of a resource register of table `table`: a constant for a direct index, else the
/// address register plus the offset plus `table << 24`. Records the indices in `list_of` (the
/// declared range of an indirect access).
fn resource_handle(ctx: &mut Ctx, reg: &Register, table: u32, what: &str) -> Option<(Src, Vec<u32>)> {
    if reg.dimension.is_some() {
        ctx.unsupported(&format!("a two-dimensional {what} reference"), "resources take one index");
        return None;
    }
    match reg.index.indirect {
        None => {
            let index = reg.index.value;
            if index < 0 || index as u32 >= MAX_INDEX {
                ctx.unsupported(&format!("{what}[{index}]"), "resource indices must lie in 0 .. 2^24");
                return None;
            }
            Some((Src::konst(handle(table, index as u32)), vec![index as u32]))
        }
        Some(ind) => {
            let (first, last) = operand::array_range(ctx, reg.file, &reg.index);
            // One addition: address register + (table << 24 | offset).
            let areg = Register { file: ind.file, dimension: None, index: Index::direct(ind.index) };
            let base = operand::base_operand(ctx, &areg, ind.component);
            let base = operand::to_value(ctx, Src::new(base));
            let h = ctx.builder().iadd_imm(base, handle(table, 0).wrapping_add(reg.index.value as u32));
            let indices = (first.max(0)..=last.max(-1)).map(|i| i as u32).collect();
            Some((Src::new(h), indices))
        }
    }
}

/// Resolves the resource operand `reg` of the current instruction; `handle_comp` is the
/// component holding a bindless handle. Bindless images take their target and format from the
/// instruction's memory items (`inst.memory`).
fn resource(ctx: &mut Ctx, inst: &Instruction, reg: &Register, handle_comp: Component) -> Option<Resource> {
    match reg.file {
        File::Buffer => {
            let (handle, indices) = resource_handle(ctx, reg, TABLE_SSBO, "BUFFER")?;
            for i in indices {
                note(&mut ctx.meta_out.ssbos, i);
            }
            Some(Resource::Linear { space: Space::Buffer, handle })
        }
        File::ConstBuf => {
            let (handle, indices) = resource_handle(ctx, reg, TABLE_UBO, "CONSTBUF")?;
            ctx.io.ubos.extend(indices);
            Some(Resource::Linear { space: Space::ConstBuf, handle })
        }
        File::Memory => {
            if reg.index.indirect.is_some() || reg.dimension.is_some() {
                ctx.unsupported("indirect MEMORY addressing", "MEMORY declarations are not arrays");
                return None;
            }
            let kind =
                match declaration(ctx, File::Memory, i64::from(reg.index.value)).and_then(|d| d.resource.as_ref()) {
                    Some(ResourceDecl::Memory { kind }) => *kind,
                    _ => {
                        ctx.unsupported(
                            &format!("the undeclared MEMORY[{}]", reg.index.value),
                            "shared memory is declared with `DCL MEMORY[i], SHARED`",
                        );
                        return None;
                    }
                };
            if kind != MemoryKind::Shared {
                ctx.unsupported(
                    &format!("`MEMORY, {}` access", kind.name()),
                    "only SHARED memory has an address space here (GLOBAL, PRIVATE and INPUT memory were OpenCL-only; Gallium drivers receive SHARED only)",
                );
                return None;
            }
            if ctx.stage != Stage::Compute {
                ctx.unsupported("shared memory", "workgroup-local memory exists only in compute shaders");
                return None;
            }
            Some(Resource::Linear { space: Space::Shared, handle: Src::konst(0) })
        }
        File::Image => {
            let decl = if reg.index.indirect.is_none() {
                declaration(ctx, File::Image, i64::from(reg.index.value))
            } else {
                let (first, _) = operand::array_range(ctx, File::Image, &reg.index);
                declaration(ctx, File::Image, first)
            };
            let (target, format, raw) = match decl.and_then(|d| d.resource.as_ref()) {
                Some(&ResourceDecl::Image { target, format, raw, .. }) => (target, format, raw),
                _ => (inst.memory.texture, inst.memory.format, false),
            };
            if raw {
                ctx.unsupported(
                    "a RAW image",
                    "RAW images (byte addressing, no format conversion) have no Valhall access path; use a BUFFER",
                );
                return None;
            }
            let (handle, indices) = resource_handle(ctx, reg, TABLE_IMAGE, "IMAGE")?;
            for &i in &indices {
                note(&mut ctx.meta_out.images, i);
            }
            let index = match (reg.index.indirect, indices.first()) {
                (None, Some(_)) => image_index(handle),
                _ => ImageIndex::Handle(handle),
            };
            image(ctx, index, target, format.0)
        }
        File::HwAtomic => {
            ctx.unsupported(
                "a HWATOMIC counter",
                "Valhall has no hardware atomic counters; the state tracker lowers atomic counters to BUFFERs for such drivers",
            );
            None
        }
        File::Temp | File::Const => {
            // Bindless image: the handle is the low word of the 64-bit TGSI handle (a register, a
            // push word or a constant, all valid message sources).
            let handle = Src::new(operand::base_operand(ctx, reg, handle_comp));
            image(ctx, image_index(handle), inst.memory.texture, inst.memory.format.0)
        }
        other => {
            ctx.unsupported(
                &format!("a {} resource", other.name()),
                "memory opcodes take BUFFER, IMAGE, MEMORY or CONSTBUF, or a bindless image handle in TEMP or CONST",
            );
            None
        }
    }
}

/// The immediate form of a constant image handle whose table has a 4-bit encoding and whose
/// index is below 16 (`LD_TEX_IMM`, `LEA_TEX_IMM`), else the handle itself.
fn image_index(handle: Src) -> ImageIndex {
    if let Operand::Const(h) = handle.operand {
        let (table, index) = (h >> 24, h & (MAX_INDEX - 1));
        let encoded = match table {
            0..=11 => Some(table),
            60..=63 => Some(table - 48),
            _ => None,
        };
        if let Some(table) = encoded
            && index < 16
        {
            return ImageIndex::Imm { table, index };
        }
    }
    ImageIndex::Handle(handle)
}

/// Checks an image's target and format.
fn image(ctx: &mut Ctx, index: ImageIndex, target: TextureTarget, format: u16) -> Option<Resource> {
    let target = target.canonical();
    use TextureTarget as T;
    if !matches!(
        target,
        T::Buffer
            | T::Tex1D
            | T::Tex2D
            | T::Tex3D
            | T::Cube
            | T::Rect
            | T::Array1D
            | T::Array2D
            | T::Msaa2D
            | T::ArrayMsaa2D
            | T::CubeArray
    ) {
        ctx.unsupported(&format!("an image of target {}", target.name()), "images cannot be shadow or UNKNOWN targets");
        return None;
    }
    let name = FORMATS.get(usize::from(format)).copied().unwrap_or("NONE");
    let format = if name == "NONE" {
        None
    } else {
        match IMAGE_FORMATS.iter().find(|(n, ..)| *n == name) {
            Some(&(name, channels, class)) => Some(ImageFormat { name, channels, class }),
            None => {
                ctx.unsupported(
                    &format!("an image of format PIPE_FORMAT_{name}"),
                    "image load/store supports the formats OpenGL allows for images (32/16/8-bit FLOAT, UNORM, SNORM, SINT, UINT with 1, 2 or 4 channels, R11G11B10_FLOAT, R10G10B10A2_UNORM/UINT)",
                );
                return None;
            }
        }
    };
    Some(Resource::Image(Image { index, target, format }))
}

// ---- Sources ----------------------------------------------------------------------------------

/// Source `k`, channel `c`, as an operand of its declared type: integer modifiers for integer
/// operands, float modifiers (applied) for float and untyped ones.
fn typed_src(ctx: &mut Ctx, inst: &Instruction, k: usize, c: usize) -> Src {
    let ty = inst.opcode.info().src_types.get(k).copied();
    match ty {
        Some(OperandType::U | OperandType::I) => operand::isrc(ctx, inst, k, c),
        _ => {
            let s = operand::fsrc(ctx, inst, k, c);
            operand::apply_float_mods(ctx, s)
        }
    }
}

/// Source `k`, channel `c`, in a register (staging operands cannot be constants).
fn src_value(ctx: &mut Ctx, inst: &Instruction, k: usize, c: usize) -> Value {
    let s = typed_src(ctx, inst, k, c);
    operand::to_value(ctx, s)
}

/// The destination's result kind (saturation only for float results).
fn dst_kind(inst: &Instruction) -> Kind {
    match inst.opcode.info().dst_types.first() {
        Some(OperandType::F) => Kind::Float,
        _ => Kind::Int,
    }
}

fn has_result(dst: &DstOperand) -> bool {
    dst.register.file != File::Null && dst.write_mask.0 != 0
}

// ---- Addresses --------------------------------------------------------------------------------

/// A 64-bit address plus an immediate byte offset. The address is a register pair or, for a
/// buffer whose address is pushed, the even FAU word of the pair.
#[derive(Clone, Copy, Debug)]
struct Address {
    base: Operand,
    offset: i64,
}

impl Address {
    fn pair(lo: Value, hi: Value, offset: i64) -> Address {
        Address { base: Operand::Pair(lo, hi), offset }
    }

    fn src(&self) -> Src {
        Src::new(self.base)
    }
}

fn wls(high: bool) -> Operand {
    Operand::Special(Special::of("workgroup_local_pointer", high))
}

/// `workgroup_local_pointer + byte + extra`: a constant total within `range` goes into the
/// immediate. Records the bytes touched (up to `extra + len`) for `wls_size`.
fn shared_address(ctx: &mut Ctx, byte: Src, extra: u32, len: u32, range: (i64, i64)) -> Address {
    match byte.operand {
        Operand::Const(a) => {
            let total = i64::from(a) + i64::from(extra);
            let end = u32::try_from(total + i64::from(len)).unwrap_or(u32::MAX);
            ctx.meta_out.wls_size = ctx.meta_out.wls_size.max(end);
            if (range.0..=range.1).contains(&total) {
                let lo = ctx.builder().copy(wls(false));
                let hi = ctx.builder().copy(wls(true));
                Address::pair(lo, hi, total)
            } else {
                let lo = ctx.builder().iadd(Src::new(wls(false)), Src::konst(total as u32));
                let hi = ctx.builder().copy(wls(true));
                Address::pair(lo, hi, 0)
            }
        }
        _ => {
            ctx.meta_out.wls_size = ctx.meta_out.wls_size.max(DYNAMIC_WLS_SIZE);
            // A register: the special pointer word already takes the FAU slot.
            let byte = operand::to_value(ctx, byte);
            let lo = ctx.builder().iadd(Src::new(wls(false)), byte);
            let hi = ctx.builder().copy(wls(true));
            Address::pair(lo, hi, i64::from(extra))
        }
    }
}

/// The 64-bit address of byte `byte` of the buffer `handle`. A buffer named by a constant
/// index has its address pushed (the sysval `buffer_address.I`, as Mesa's SSBO sysval): a
/// constant byte within `range` then needs no instruction (the access reads the FAU pair and
/// takes the byte as its immediate), any other byte is added to it in three ALU instructions
/// (low word, carry, high word), where `LEA_BUFFER` would be a message to the load/store unit.
/// A buffer chosen at run time, or one whose address no longer fits the table, takes
/// `LEA_BUFFER`.
fn buffer_address(ctx: &mut Ctx, byte: Src, handle: Src, range: (i64, i64)) -> Address {
    if let Some(w) = pushed_buffer_address(ctx, handle) {
        let (lo, hi) = (Src::new(Operand::Uniform(w)), Src::new(Operand::Uniform(w + 1)));
        if let Operand::Const(b) = byte.operand
            && (range.0..=range.1).contains(&i64::from(b))
        {
            return Address { base: Operand::Uniform(w), offset: i64::from(b) };
        }
        let mut b = ctx.builder();
        let low = b.iadd(lo, byte);
        let carry = b.icmp(false, Condition::Lt, low, lo, ResultType::I1);
        let high = b.iadd(hi, carry);
        return Address::pair(low, high, 0);
    }
    let mut mach = Instr::new(Op::LEA_BUFFER);
    let _ = mach.set_slot(Slot::Slot0);
    let list = ctx.builder().message(mach, &[byte, handle], &[], 2);
    let v = ctx.shader.get(list);
    Address::pair(v[0], v[1], 0)
}

/// The even FAU word holding the address of the shader buffer a constant `handle` names, if
/// the buffer's index has a sysval name and the table has room.
fn pushed_buffer_address(ctx: &mut Ctx, handle: Src) -> Option<u8> {
    let Operand::Const(h) = handle.operand else { return None };
    if h >> 24 != TABLE_SSBO {
        return None;
    }
    let name = BUFFER_ADDRESS.get((h & (MAX_INDEX - 1)) as usize)?;
    ctx.fau.sysval_pair_words(name)
}

/// The address of word `byte` of byte-addressed memory for stores and atomics.
fn linear_address(ctx: &mut Ctx, space: Space, handle: Src, byte: Src, len: u32, range: (i64, i64)) -> Address {
    match space {
        Space::Shared => shared_address(ctx, byte, 0, len, range),
        Space::Buffer | Space::ConstBuf => buffer_address(ctx, byte, handle, range),
    }
}

/// A 32-bit value holding `lo & 0xFFFF | hi << 16` (`MKVEC.v2i16 lo.h00, hi.h00`), folded for
/// constants.
fn pack16(ctx: &mut Ctx, lo: Src, hi: Src) -> Src {
    if let (Operand::Const(a), Operand::Const(b)) = (lo.operand, hi.operand) {
        return Src::konst((a & 0xFFFF) | (b << 16));
    }
    let v = ctx.builder().op(Op::MKVEC_V2I16, &[lo.swizzle(0), hi.swizzle(0)]);
    Src::new(v)
}

/// The two packed coordinate sources of an image access (§C.13) from source `k`.
fn image_coords(ctx: &mut Ctx, inst: &Instruction, k: usize, target: TextureTarget) -> (Src, Src) {
    use TextureTarget as T;
    let c = |ctx: &mut Ctx, i: usize| operand::isrc(ctx, inst, k, i);
    match target {
        T::Buffer | T::Tex1D => (c(ctx, 0), Src::konst(0)),
        T::Array1D => {
            let x = c(ctx, 0);
            let layer = c(ctx, 1);
            (x, pack16(ctx, Src::konst(0), layer))
        }
        T::Tex2D | T::Rect => {
            let (x, y) = (c(ctx, 0), c(ctx, 1));
            (pack16(ctx, x, y), Src::konst(0))
        }
        T::Tex3D => {
            let (x, y, z) = (c(ctx, 0), c(ctx, 1), c(ctx, 2));
            (pack16(ctx, x, y), z)
        }
        T::Array2D | T::Cube | T::CubeArray => {
            let (x, y, layer) = (c(ctx, 0), c(ctx, 1), c(ctx, 2));
            let xy = pack16(ctx, x, y);
            (xy, pack16(ctx, Src::konst(0), layer))
        }
        T::Msaa2D => {
            let (x, y, sample) = (c(ctx, 0), c(ctx, 1), c(ctx, 3));
            (pack16(ctx, x, y), sample)
        }
        _ => {
            // 2D MSAA array (the other targets were rejected when the image was resolved).
            let (x, y, layer, sample) = (c(ctx, 0), c(ctx, 1), c(ctx, 2), c(ctx, 3));
            let xy = pack16(ctx, x, y);
            (xy, pack16(ctx, sample, layer))
        }
    }
}

/// `LEA_TEX_IMM` / `LEA_TEX`: the texel's 64-bit address and its conversion descriptor.
fn image_address(ctx: &mut Ctx, image: &Image, coords: (Src, Src)) -> (Address, Value) {
    let list = match image.index {
        ImageIndex::Imm { table, index } => {
            let mut mach = Instr::new(Op::LEA_TEX_IMM);
            let _ = mach.set_slot(Slot::Slot0);
            let _ = mach.set_imm("table", i64::from(table));
            let _ = mach.set_imm("index", i64::from(index));
            ctx.builder().message(mach, &[coords.0, coords.1], &[], 3)
        }
        ImageIndex::Handle(h) => {
            let mut mach = Instr::new(Op::LEA_TEX);
            let _ = mach.set_slot(Slot::Slot0);
            ctx.builder().message(mach, &[coords.0, coords.1, h], &[], 3)
        }
    };
    let v = ctx.shader.get(list);
    (Address::pair(v[0], v[1], 0), v[2])
}

// ---- Helper lanes -----------------------------------------------------------------------------

/// Whether helper lanes of a fragment shader stay alive past the start of the shader: some
/// instruction needs quad neighbours (derivatives, implicit-LOD texturing, LOD queries).
fn keeps_helpers(ctx: &Ctx) -> bool {
    ctx.stage == Stage::Fragment
        && ctx.insts.iter().any(|i| {
            let op = i.opcode.canonical();
            op.info().implicit_lod
                || matches!(
                    op,
                    Opcode::Ddx | Opcode::Ddy | Opcode::DdxFine | Opcode::DdyFine | Opcode::Lodq | Opcode::Lod
                )
        })
}

/// Runs `body` (which emits a store or an atomic) only in lanes that are not helper
/// invocations, when the shader keeps helper lanes alive; `body`'s result is 0 in helper lanes.
fn side_effect(ctx: &mut Ctx, body: impl FnOnce(&mut Ctx) -> Option<Value>) -> Option<Value> {
    if !keeps_helpers(ctx) {
        return body(ctx);
    }
    // gl_HelperInvocation = (sample mask in == 0); the mask is r61 bits 0–15. Computed once, in
    // the entry block.
    let r61 = super::io::preload(ctx, 61);
    let mask_src = Src::new(r61).swizzle(0);
    let mask = entry_value(ctx, |i| i.opcode() == Some(Op::U16_TO_U32) && i.srcs[0] == mask_src)
        .unwrap_or_else(|| ctx.entry_builder().op(Op::U16_TO_U32, &[mask_src]));
    let header = ctx.block;
    let then_block = ctx.new_block();
    let join = ctx.new_block();
    ctx.shader
        .set_terminator(header, Terminator::Branch { cond: mask, if_zero: true, taken: join, fallthrough: then_block });
    ctx.switch_to(then_block);
    let result = body(ctx);
    let end = ctx.block;
    ctx.shader.set_terminator(end, Terminator::Jump(join));
    ctx.switch_to(join);
    // Predecessors of the join: the header (helper lanes), then the body.
    let v = result?;
    let zero = entry_value(ctx, |i| i.kind == InstKind::Copy && i.srcs[0] == Src::konst(0))
        .unwrap_or_else(|| ctx.entry_builder().konst(0));
    Some(ctx.builder().phi(&[zero, v]))
}

/// The first value an instruction of the entry block matching `pred` defines.
fn entry_value(ctx: &Ctx, pred: impl Fn(&Inst) -> bool) -> Option<Value> {
    let shader = &ctx.shader;
    shader.block_insts(shader.entry()).map(|id| shader.inst(id)).find(|i| pred(i)).map(|i| shader.get(i.dests)[0])
}

// ---- LOAD -------------------------------------------------------------------------------------

fn load(ctx: &mut Ctx, inst: &Instruction) {
    let dst = &inst.dst[0];
    let Some(res) = resource(ctx, inst, &inst.src[0].register, inst.src[0].swizzle[0]) else { return };
    if !has_result(dst) {
        return;
    }
    // Destination channel c reads word/component `swizzle[c]` of the resource.
    let swizzle = match res {
        Resource::Image(Image { index: ImageIndex::Handle(_), .. }) if is_data_file(inst.src[0].register.file) => {
            crate::tgsi::ast::IDENTITY_SWIZZLE
        }
        _ => inst.src[0].swizzle,
    };
    let needed: Vec<usize> = dst.write_mask.components().map(|c| swizzle[c.index()].index()).collect();
    let (first, last) = (*needed.iter().min().expect("mask not empty"), *needed.iter().max().expect("mask not empty"));
    let kind = dst_kind(inst);
    let words: Vec<Value> = match res {
        Resource::Linear { space, handle } => {
            let n = last - first + 1;
            let byte = operand::isrc(ctx, inst, 1, 0);
            let extra = 4 * first as u32;
            let values = match space {
                Space::Buffer | Space::ConstBuf => {
                    let offset = match byte.operand {
                        Operand::Const(a) => Src::konst(a.wrapping_add(extra)),
                        _ if extra == 0 => byte,
                        _ => {
                            let v = operand::to_value(ctx, byte);
                            Src::new(ctx.builder().iadd_imm(v, extra))
                        }
                    };
                    ld_buffer(ctx, n, offset, handle)
                }
                Space::Shared => {
                    let address = shared_address(ctx, byte, extra, 4 * n as u32, LOAD_STORE_OFFSETS);
                    load_global(ctx, n, address)
                }
            };
            // Word w of the span is values[w - first].
            let mut all = vec![values[0]; 4];
            for (w, v) in values.into_iter().enumerate() {
                all[first + w] = v;
            }
            all
        }
        Resource::Image(image) => {
            let coords = image_coords(ctx, inst, 1, image.target);
            let values = ld_tex(ctx, &image, coords, last + 1);
            let mut all = vec![values[0]; 4];
            all[..values.len()].copy_from_slice(&values);
            all
        }
    };
    let mut out = [None; 4];
    for c in dst.write_mask.components() {
        out[c.index()] = Some(words[swizzle[c.index()].index()]);
    }
    operand::write(ctx, inst, 0, out, kind);
}

/// Register files that hold data rather than name a resource (bindless handles).
fn is_data_file(file: File) -> bool {
    !matches!(file, File::Buffer | File::Image | File::Memory | File::ConstBuf | File::HwAtomic)
}

/// `LD_BUFFER.i{32·n}.unsigned` at byte `offset` of buffer `handle`.
fn ld_buffer(ctx: &mut Ctx, n: usize, offset: Src, handle: Src) -> Vec<Value> {
    let op = [Op::LD_BUFFER_I32, Op::LD_BUFFER_I64, Op::LD_BUFFER_I96, Op::LD_BUFFER_I128][n - 1];
    let mut mach = Instr::new(op);
    let _ = mach.set_flag("unsigned", true);
    let _ = mach.set_slot(Slot::Slot0);
    let list = ctx.builder().message(mach, &[offset, handle], &[], n);
    ctx.shader.get(list).to_vec()
}

/// `LOAD.i{32·n}.unsigned` from a 64-bit address.
fn load_global(ctx: &mut Ctx, n: usize, address: Address) -> Vec<Value> {
    let list = ctx.builder().message(global_load(n, address.offset), &[address.src()], &[], n);
    ctx.shader.get(list).to_vec()
}

/// `LOAD.i{32·n}.unsigned` (slot 0) of the bytes at `offset` past the 64-bit address it reads.
pub(super) fn global_load(n: usize, offset: i64) -> Instr {
    let op = [Op::LOAD_I32, Op::LOAD_I64, Op::LOAD_I96, Op::LOAD_I128][n - 1];
    let mut mach = Instr::new(op);
    let _ = mach.set_flag("unsigned", true);
    let _ = mach.set_slot(Slot::Slot0);
    let _ = mach.set_imm("offset", offset);
    mach
}

fn vector_size(n: usize) -> VectorSize {
    [VectorSize::None, VectorSize::V2, VectorSize::V3, VectorSize::V4][n - 1]
}

/// `LD_TEX_IMM` / `LD_TEX`: the first `n` components of a texel, converted to the image's
/// register format.
fn ld_tex(ctx: &mut Ctx, image: &Image, coords: (Src, Src), n: usize) -> Vec<Value> {
    let list = match image.index {
        ImageIndex::Imm { table, index } => {
            let mut mach = Instr::new(Op::LD_TEX_IMM);
            set_tex_format(&mut mach, image, n);
            let _ = mach.set_imm("table", i64::from(table));
            let _ = mach.set_imm("index", i64::from(index));
            ctx.builder().message(mach, &[coords.0, coords.1], &[], n)
        }
        ImageIndex::Handle(h) => {
            let mut mach = Instr::new(Op::LD_TEX);
            set_tex_format(&mut mach, image, n);
            ctx.builder().message(mach, &[coords.0, coords.1, h], &[], n)
        }
    };
    ctx.shader.get(list).to_vec()
}

fn set_tex_format(mach: &mut Instr, image: &Image, n: usize) {
    let _ = mach.set_slot(Slot::Slot0);
    let _ = mach.set_vector_size(vector_size(n));
    let _ = mach.set_register_format(image.register_format());
}

// ---- STORE ------------------------------------------------------------------------------------

fn store(ctx: &mut Ctx, inst: &Instruction) {
    let dst = &inst.dst[0];
    let Some(res) = resource(ctx, inst, &dst.register, Component::X) else { return };
    let mask = dst.write_mask;
    if mask.0 == 0 {
        return;
    }
    match res {
        Resource::Linear { space: Space::ConstBuf, .. } => {
            ctx.unsupported("a STORE to a constant buffer", "constant buffers are read-only")
        }
        Resource::Linear { space, handle } => {
            let byte = operand::isrc(ctx, inst, 0, 0);
            let byte = match byte.operand {
                Operand::Const(_) => byte,
                _ => Src::new(operand::to_value(ctx, byte)),
            };
            let data: Vec<Option<Value>> =
                (0..4).map(|c| mask.has(Component::ALL[c]).then(|| src_value(ctx, inst, 1, c))).collect();
            let runs = runs(mask);
            let end = 4 * runs.last().map_or(0, |r| r.1) as u32;
            // The last run's immediate must fit too.
            let last_extra = 4 * runs.last().map_or(0, |r| r.0) as i64;
            let range = (LOAD_STORE_OFFSETS.0, LOAD_STORE_OFFSETS.1 - last_extra);
            side_effect(ctx, |ctx| {
                let address = linear_address(ctx, space, handle, byte, end, range);
                for &(first, last) in &runs {
                    let values: Vec<Value> = (first..last).map(|c| data[c].expect("masked channel")).collect();
                    store_global(ctx, &values, address, 4 * first as i64);
                }
                None
            });
        }
        Resource::Image(image) => {
            // ST_CVT writes a whole texel: the mask must be x, xy, xyz or xyzw and cover the
            // format's channels.
            let n = 8 - mask.0.leading_zeros() as usize;
            let prefix = mask.0 == (1u8 << n) - 1;
            let covers = image.format.is_none_or(|f| usize::from(f.channels) <= n);
            if !prefix || !covers {
                let why = match image.format {
                    Some(f) if prefix => format!(
                        "Valhall image stores (ST_CVT) write whole texels: all {} channels of {} must be written",
                        f.channels, f.name
                    ),
                    _ => "Valhall image stores (ST_CVT) write whole texels: the write mask must be x, xy, xyz or xyzw"
                        .to_string(),
                };
                return ctx.unsupported("an image STORE with a partial write mask", &why);
            }
            let coords = image_coords(ctx, inst, 0, image.target);
            let data: Vec<Value> = (0..n).map(|c| src_value(ctx, inst, 1, c)).collect();
            side_effect(ctx, |ctx| {
                let (address, descriptor) = image_address(ctx, &image, coords);
                let mut mach = Instr::new(Op::ST_CVT);
                let _ = mach.set_slot(Slot::Slot0);
                let _ = mach.set_vector_size(vector_size(n));
                let _ = mach.set_register_format(RegisterFormat::Auto);
                let _ = mach.set_imm("offset", 0);
                ctx.builder().emit(mach, &[address.src(), Src::new(descriptor)], &[&data], 0);
                None
            });
        }
    }
}

/// The runs of consecutive channels of a write mask, as half-open ranges.
fn runs(mask: WriteMask) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for c in mask.components().map(Component::index) {
        match out.last_mut() {
            Some(run) if run.1 == c => run.1 = c + 1,
            _ => out.push((c, c + 1)),
        }
    }
    out
}

/// `STORE.i{32·n}` of `values` at `address + extra`.
fn store_global(ctx: &mut Ctx, values: &[Value], address: Address, extra: i64) {
    let op = [Op::STORE_I32, Op::STORE_I64, Op::STORE_I96, Op::STORE_I128][values.len() - 1];
    let mut mach = Instr::new(op);
    let _ = mach.set_slot(Slot::Slot0);
    let _ = mach.set_imm("offset", address.offset + extra);
    ctx.builder().emit(mach, &[address.src()], &[values], 0);
}

// ---- Atomics ----------------------------------------------------------------------------------

/// What the hardware does for one TGSI atomic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Atom {
    /// `ATOM` / `ATOM_RETURN` with an operand.
    Op(AtomicOperation),
    /// `ATOM1_RETURN` (the operand is the constant 1 or −1).
    One(AtomicOperationWith1),
    /// `ATOM_RETURN.compare.axchg`.
    CompareExchange,
    /// A compare-and-swap loop computing the new value.
    Loop(LoopOp),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoopOp {
    FAdd,
    IncWrap,
    DecWrap,
}

fn atomic(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    let Some(res) = resource(ctx, inst, &inst.src[0].register, inst.src[0].swizzle[0]) else { return };
    let dst = &inst.dst[0];
    let want = has_result(dst);
    // Operands (all sources are read before anything is written). The float operand of
    // ATOMFADD keeps its modifiers for the FADD in the loop.
    let operand = if opcode == Opcode::Atomfadd { operand::fsrc(ctx, inst, 2, 0) } else { typed_src(ctx, inst, 2, 0) };
    let constant = operand.operand.as_const();
    let atom = match (opcode, constant) {
        (Opcode::Atomuadd, Some(1)) => Atom::One(AtomicOperationWith1::Ainc),
        (Opcode::Atomuadd, Some(u32::MAX)) => Atom::One(AtomicOperationWith1::Adec),
        (Opcode::Atomuadd, _) => Atom::Op(AtomicOperation::Aadd),
        (Opcode::Atomxchg, _) => Atom::Op(AtomicOperation::Axchg),
        (Opcode::Atomcas, _) => Atom::CompareExchange,
        (Opcode::Atomand, _) => Atom::Op(AtomicOperation::Aand),
        (Opcode::Atomor, Some(1)) => Atom::One(AtomicOperationWith1::Aor1),
        (Opcode::Atomor, _) => Atom::Op(AtomicOperation::Aor),
        (Opcode::Atomxor, _) => Atom::Op(AtomicOperation::Axor),
        (Opcode::Atomumin, _) => Atom::Op(AtomicOperation::Aumin),
        (Opcode::Atomumax, Some(1)) => Atom::One(AtomicOperationWith1::Aumax1),
        (Opcode::Atomumax, _) => Atom::Op(AtomicOperation::Aumax),
        (Opcode::Atomimin, _) => Atom::Op(AtomicOperation::Asmin),
        (Opcode::Atomimax, Some(1)) => Atom::One(AtomicOperationWith1::Asmax1),
        (Opcode::Atomimax, _) => Atom::Op(AtomicOperation::Asmax),
        (Opcode::Atomfadd, _) => Atom::Loop(LoopOp::FAdd),
        (Opcode::AtomincWrap, _) => Atom::Loop(LoopOp::IncWrap),
        _ => Atom::Loop(LoopOp::DecWrap),
    };
    // Staging operands must be registers; loop operands may stay constants.
    let staged: Vec<Value> = match atom {
        Atom::Op(_) => vec![operand::to_value(ctx, operand)],
        // {new value, comparand}: src3 then src2.
        Atom::CompareExchange => {
            let new = src_value(ctx, inst, 3, 0);
            let cmp = operand::to_value(ctx, operand);
            vec![new, cmp]
        }
        Atom::One(_) | Atom::Loop(_) => Vec::new(),
    };
    let target = match res {
        Resource::Linear { space: Space::ConstBuf, .. } => {
            return ctx.unsupported(
                &format!("{} on a constant buffer", inst.opcode.name()),
                "constant buffers are read-only",
            );
        }
        Resource::Linear { space, handle } => {
            let byte = operand::isrc(ctx, inst, 1, 0);
            let byte = match byte.operand {
                Operand::Const(_) => byte,
                _ => Src::new(operand::to_value(ctx, byte)),
            };
            Target::Linear { space, handle, byte }
        }
        Resource::Image(image) => {
            let float_ok = matches!(opcode, Opcode::Atomxchg | Opcode::Atomfadd);
            if let Some(f) = image.format
                && !(matches!(f.name, "R32_UINT" | "R32_SINT") || (float_ok && f.name == "R32_FLOAT"))
            {
                let why = if float_ok {
                    "image atomics need a single-channel 32-bit format (R32_UINT, R32_SINT or R32_FLOAT)"
                } else {
                    "integer image atomics need a single-channel 32-bit integer format (R32_UINT or R32_SINT)"
                };
                return ctx.unsupported(&format!("{} on an image of format {}", inst.opcode.name(), f.name), why);
            }
            let coords = image_coords(ctx, inst, 1, image.target);
            Target::Image { image, coords }
        }
    };
    let result = side_effect(ctx, |ctx| {
        let address = match target {
            Target::Linear { space, handle, byte } => linear_address(ctx, space, handle, byte, 4, ATOMIC_OFFSETS),
            Target::Image { image, coords } => image_address(ctx, &image, coords).0,
        };
        let old = match atom {
            Atom::Loop(op) => Some(cas_loop(ctx, address, op, operand)),
            _ => emit_atomic(ctx, atom, address, &staged, want),
        };
        old.filter(|_| want)
    });
    if let Some(v) = result {
        let mut out = [None; 4];
        for c in dst.write_mask.components() {
            out[c.index()] = Some(v);
        }
        operand::write(ctx, inst, 0, out, dst_kind(inst));
    }
}

/// Where an atomic operates, before its address is formed.
#[derive(Clone, Copy, Debug)]
enum Target {
    Linear { space: Space, handle: Src, byte: Src },
    Image { image: Image, coords: (Src, Src) },
}

/// One atomic instruction; returns the old value when `want` (or when the operation must
/// return it).
fn emit_atomic(ctx: &mut Ctx, atom: Atom, address: Address, staged: &[Value], want: bool) -> Option<Value> {
    let (mach, writes) = match atom {
        Atom::Op(op) if want || op == AtomicOperation::Axchg => {
            let mut mach = Instr::new(Op::ATOM_RETURN_I32);
            let _ = mach.set("atomic_operation", op);
            (mach, 1)
        }
        Atom::Op(op) => {
            let mut mach = Instr::new(Op::ATOM_I32);
            let _ = mach.set("atomic_operation", op);
            (mach, 0)
        }
        Atom::One(op) => {
            let mut mach = Instr::new(Op::ATOM1_RETURN_I32);
            let _ = mach.set("atomic_operation_with_1", op);
            (mach, usize::from(want))
        }
        Atom::CompareExchange => {
            let mut mach = Instr::new(Op::ATOM_RETURN_I32);
            let _ = mach.set("atomic_operation", AtomicOperation::Axchg);
            let _ = mach.set_flag("compare", true);
            (mach, 1)
        }
        Atom::Loop(_) => unreachable!("loops are emitted by cas_loop"),
    };
    let mut mach = mach;
    let _ = mach.set_slot(Slot::Slot0);
    let _ = mach.set_imm("offset", address.offset);
    let reads: Vec<&[Value]> = if staged.is_empty() { Vec::new() } else { vec![staged] };
    let list = ctx.builder().message(mach, &[address.src()], &reads, writes);
    ctx.shader.get(list).first().copied()
}

/// A compare-and-swap loop: `old = LOAD; do { new = f(old); seen = CAS(old → new); again =
/// seen != old; old = seen } while again`. Returns the TGSI result, the old value.
fn cas_loop(ctx: &mut Ctx, address: Address, op: LoopOp, operand: Src) -> Value {
    let init = load_global(ctx, 1, address)[0];
    let pre = ctx.block;
    let header = ctx.new_block();
    let exit = ctx.new_block();
    ctx.shader.set_terminator(pre, Terminator::Jump(header));
    ctx.switch_to(header);
    let mut phi = Inst::pseudo(InstKind::Phi);
    phi.dests = ctx.shader.new_values(1);
    let phi_id = ctx.shader.push(header, phi);
    let old = ctx.shader.get(ctx.shader.inst(phi_id).dests)[0];
    let new = match op {
        LoopOp::FAdd => ctx.builder().fadd(old, operand),
        LoopOp::IncWrap => {
            // old <u src ? old + 1 : 0.
            let inc = ctx.builder().iadd_imm(old, 1);
            ctx.builder().csel(false, Condition::Lt, Src::new(old), operand, Src::new(inc), Src::konst(0))
        }
        LoopOp::DecWrap => {
            // old − 1 <u src ? old − 1 : src (old = 0 wraps to 2³²−1, which is never below src).
            let dec = ctx.builder().iadd_imm(old, u32::MAX);
            ctx.builder().csel(false, Condition::Lt, Src::new(dec), operand, Src::new(dec), operand)
        }
    };
    let seen = emit_atomic(ctx, Atom::CompareExchange, address, &[new, old], true).expect("compare-exchange returns");
    let again = ctx.builder().icmp(false, Condition::Ne, seen, Src::new(old), ResultType::M1);
    ctx.shader
        .set_terminator(header, Terminator::Branch { cond: again, if_zero: false, taken: header, fallthrough: exit });
    // Header predecessors: the preheader, then the header itself (the back edge).
    let args = ctx.shader.list(&[init, seen]);
    ctx.shader.inst_mut(phi_id).args = args;
    ctx.switch_to(exit);
    old
}

// ---- Queries and handles ----------------------------------------------------------------------

/// Static names of the per-resource sysvals (the FAU table keys on `&'static str`).
macro_rules! sysval_names {
    ($prefix:literal, $($i:literal)*) => { [$(concat!($prefix, $i)),*] };
}

static BUFFER_SIZE: [&str; 32] = sysval_names!("buffer_size.",
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
static BUFFER_ADDRESS: [&str; 32] = sysval_names!("buffer_address.",
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
static IMAGE_SIZE: [&str; 64] = sysval_names!("image_size.",
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
    32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63);

fn resq(ctx: &mut Ctx, inst: &Instruction) {
    let reg = inst.src[0].register;
    let (names, file_name): (&[&'static str], &str) = match reg.file {
        File::Buffer => (&BUFFER_SIZE, "BUFFER"),
        File::Image => (&IMAGE_SIZE, "IMAGE"),
        other => {
            return ctx.unsupported(
                &format!("RESQ on a {} resource", other.name()),
                "RESQ queries BUFFER sizes and IMAGE dimensions",
            );
        }
    };
    if reg.index.indirect.is_some() || reg.dimension.is_some() {
        return ctx.unsupported(
            &format!("RESQ on an indirect {file_name}"),
            "resource sizes are push constants chosen per resource",
        );
    }
    let index = reg.index.value;
    let Some(&name) = usize::try_from(index).ok().and_then(|i| names.get(i)) else {
        let why = format!("RESQ reads the size of {file_name}[0..{}] only", names.len() - 1);
        return ctx.unsupported(&format!("RESQ on {file_name}[{index}]"), &why);
    };
    // The driver fills the size from the binding: list it with the resources used.
    let list = if reg.file == File::Buffer { &mut ctx.meta_out.ssbos } else { &mut ctx.meta_out.images };
    note(list, index as u32);
    let components = if reg.file == File::Buffer { 1 } else { 4 };
    let dst = &inst.dst[0];
    let mut out = [None; 4];
    for c in dst.write_mask.components().map(Component::index) {
        // Buffers: the size in x, 0 elsewhere. Images: what RESQ returns, per component.
        let v = if c < components {
            match ctx.fau.sysval(name, c as u32) {
                Some(w) => ctx.entry_builder().copy(Operand::Uniform(w)),
                None => return ctx.unsupported("RESQ", "the push-constant table is full"),
            }
        } else {
            ctx.builder().konst(0)
        };
        out[c] = Some(v);
    }
    operand::write(ctx, inst, 0, out, Kind::Int);
}

/// Writes a 64-bit handle `(lo, hi)` to the destination: even channels get the low word, odd
/// ones the high word (a 64-bit value occupies xy or zw).
fn write_handle(ctx: &mut Ctx, inst: &Instruction, lo: Src, hi: Src) {
    let dst = &inst.dst[0];
    let lo = operand::to_value(ctx, lo);
    let hi = operand::to_value(ctx, hi);
    let mut out = [None; 4];
    for c in dst.write_mask.components().map(Component::index) {
        out[c] = Some(if c % 2 == 0 { lo } else { hi });
    }
    operand::write(ctx, inst, 0, out, Kind::Int);
}

fn img2hnd(ctx: &mut Ctx, inst: &Instruction) {
    let reg = inst.src[0].register;
    if reg.file != File::Image {
        return ctx.unsupported(&format!("IMG2HND of a {} register", reg.file.name()), "IMG2HND takes an IMAGE");
    }
    let Some((handle, indices)) = resource_handle(ctx, &reg, TABLE_IMAGE, "IMAGE") else { return };
    for i in indices {
        note(&mut ctx.meta_out.images, i);
    }
    write_handle(ctx, inst, handle, Src::konst(0));
}

fn samp2hnd(ctx: &mut Ctx, inst: &Instruction) {
    let reg = inst.src[0].register;
    if reg.file != File::Sampler {
        return ctx.unsupported(&format!("SAMP2HND of a {} register", reg.file.name()), "SAMP2HND takes a SAMP");
    }
    let Some((sampler, _)) = resource_handle(ctx, &reg, TABLE_SAMPLER, "SAMP") else { return };
    // The texture of the same unit: table 4 instead of table 3.
    let texture = match sampler.operand {
        Operand::Const(h) => Src::konst(h + ((TABLE_TEXTURE - TABLE_SAMPLER) << 24)),
        _ => Src::new(ctx.builder().iadd_imm(sampler, (TABLE_TEXTURE - TABLE_SAMPLER) << 24)),
    };
    write_handle(ctx, inst, sampler, texture);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_formats_exist() {
        for (name, ..) in IMAGE_FORMATS {
            assert!(crate::tgsi::formats::by_name(name).is_some(), "{name}");
        }
    }

    #[test]
    fn runs_of_masks() {
        assert_eq!(runs(WriteMask(0b1111)), vec![(0, 4)]);
        assert_eq!(runs(WriteMask(0b1011)), vec![(0, 2), (3, 4)]);
        assert_eq!(runs(WriteMask(0b0101)), vec![(0, 1), (2, 3)]);
        assert_eq!(runs(WriteMask(0b1000)), vec![(3, 4)]);
    }

    #[test]
    fn sysval_names() {
        assert_eq!(BUFFER_SIZE[7], "buffer_size.7");
        assert_eq!(IMAGE_SIZE[63], "image_size.63");
    }
}
