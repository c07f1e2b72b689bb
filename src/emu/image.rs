//! Images: `LD_TEX_IMM`/`LD_TEX` (converted texel loads), `LEA_TEX_IMM`/`LEA_TEX` (texel
//! address and conversion descriptor) and `ST_CVT` (converted stores), on resource table 5 as
//! the ABI sets it up (docs/metadata.md), with the shared image model of `exec::image`.
//!
//! * Coordinates come as two packed words (16:16, §C.13 of the lowering reference), decoded by
//!   `TexelCoord::from_packed` for the shape of the image the descriptor describes.
//! * `LD_TEX` reads the texel and converts it to the register format: `auto` is the format's
//!   class (f32 for float/UNORM/SNORM formats, s32 for SINT, u32 for UINT); an explicit 32-bit
//!   format must be that class, a 16-bit one (f16, s16, u16) narrows it and packs two
//!   components per register. A texel out of bounds reads zero in every component.
//! * `LEA_TEX` writes {address low, address high, conversion descriptor}. The address is the
//!   texel's byte in the image's region, or the image's sink when the texel is out of bounds
//!   (docs/emulator.md). The conversion descriptor is the emulator's own word
//!   [`CONVERSION_TAG`]` | format id`: the hardware's internal descriptor format is not
//!   documented, and `ST_CVT` accepts only what `LEA_TEX` produced.
//! * `ST_CVT` reads `vector_size` components in the register format (`auto`: the descriptor
//!   format's class), packs them with the descriptor's format and stores the texel at the
//!   address plus the immediate offset.
//!
//! Atomics on image texels are the ordinary `ATOM*` messages on the `LEA_TEX` address.

use super::alu::Ctx;
use super::error::{EmuError, ErrorKind, err};
use super::fp;
use super::machine::{Machine, Program};
use super::memory::{IMAGE_SINK, Memory, Place, RegionKind, image_base};
use super::message::{components, to_register_format};
use crate::emit::meta::Metadata;
use crate::exec::image::{Class, Format, Image, TexelCoord};
use crate::exec::io::Inputs;
use crate::valhall::tables::Opcode;

/// The high bits of the emulator's conversion descriptors (`LEA_TEX`); the low byte is the
/// format id (`exec::image::Format::id`).
pub const CONVERSION_TAG: u32 = 0xC7D0_0000;

/// Register formats (the `register_format` enum).
const AUTO: u8 = 0;
const F32: u8 = 2;
const F16: u8 = 3;
const S32: u8 = 4;
const S16: u8 = 5;
const U32: u8 = 6;
const U16: u8 = 7;

fn fault<T>(message: impl Into<String>) -> Result<T, EmuError> {
    err(ErrorKind::Fault, message)
}

/// Binds the images of a run (docs/metadata.md): every image the metadata lists and every image
/// the inputs describe; a listed image the inputs do not describe is an error (the metadata
/// names only the table entry, the inputs give its format and size).
pub fn map_images(memory: &mut Memory, meta: &Metadata, inputs: &Inputs) -> Result<(), EmuError> {
    for &unit in &meta.images {
        if !inputs.images.contains_key(&unit) {
            return err(
                ErrorKind::Inputs,
                format!("the shader uses image {unit} (table 5) but the inputs describe no image {unit} (\"images\")"),
            );
        }
    }
    for (&unit, image) in &inputs.images {
        memory.map_image(unit, image.clone())?;
    }
    Ok(())
}

/// Checks a register format against a format class; returns the 32-bit form and whether the
/// registers hold 16-bit halves.
fn register_class(register_format: u8, format: Format) -> Result<bool, EmuError> {
    let class = format.class();
    let (wanted, half) = match register_format {
        AUTO => return Ok(false),
        F32 => (Class::Float, false),
        F16 => (Class::Float, true),
        S32 => (Class::Sint, false),
        S16 => (Class::Sint, true),
        U32 => (Class::Uint, false),
        U16 => (Class::Uint, true),
        v => return err(ErrorKind::Decode, format!("reserved register format {v}")),
    };
    if wanted != class {
        return err(
            ErrorKind::Unsupported,
            format!(
                "register format {} with an image of format {}: conversions between number classes are not modelled",
                ["auto", "?", "f32", "f16", "s32", "s16", "u32", "u16"][usize::from(register_format)],
                format.name()
            ),
        );
    }
    Ok(half)
}

impl Machine {
    /// The image a table/index pair names.
    fn image_entry(&self, table: u32, index: u32) -> Result<&Image, EmuError> {
        if table != 5 {
            return fault(format!("image instructions read table 5 (images), not table {table}"));
        }
        self.memory
            .images
            .get(&index)
            .ok_or_else(|| EmuError::new(ErrorKind::Fault, format!("image {index} (table 5) is not bound")))
    }

    /// (image unit, texel coordinates) of an `LD_TEX*`/`LEA_TEX*` in `lane`.
    fn image_operands(&self, p: &Program, pc: usize, lane: usize) -> Result<(u32, TexelCoord), EmuError> {
        let instr = p.code[pc].instr;
        let c = Ctx { m: self, p, pc, lane };
        let (w0, w1) = (c.raw_full(0)?, c.raw_full(1)?);
        let (table, index) = if matches!(instr.opcode, Opcode::LD_TEX_IMM | Opcode::LEA_TEX_IMM) {
            let table = instr.imm("table").unwrap_or(0) as u32;
            (if table >= 12 { table + 48 } else { table }, instr.imm("index").unwrap_or(0) as u32)
        } else {
            let h = c.raw(2)?;
            (h >> 24, h & 0xFF_FFFF)
        };
        let image = self.image_entry(table, index)?;
        Ok((index, TexelCoord::from_packed(image.shape(), w0, w1)))
    }

    /// `LD_TEX_IMM` / `LD_TEX`.
    pub(crate) fn image_load(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        let instr = p.code[pc].instr;
        let (unit, coord) = self.image_operands(p, pc, lane)?;
        let image = &self.memory.images[&unit];
        let format = image.format;
        let register_format = instr.modifier("register_format").unwrap_or(0);
        let half = register_class(register_format, format)?;
        let bytes = format.texel_bytes();
        let texel = match image.offset(coord) {
            Some(offset) => {
                let region = self.memory.region(RegionKind::Image(unit)).expect("bound images are mapped");
                let texel = format.unpack(&region.data[offset..offset + bytes]);
                let addr = image_base(unit) + offset as u64;
                let (r, _) = self.memory.locate(addr, bytes)?;
                self.track_memory(p, pc, lane, slot, Place::Region(r), addr, bytes, false)?;
                texel
            }
            None => [0; 4],
        };
        let n = components(&instr);
        let words = if half {
            let narrowed: Vec<u32> =
                texel[..n].iter().map(|&w| if format.class() == Class::Float { w } else { w & 0xFFFF }).collect();
            to_register_format(&narrowed, register_format)?
        } else {
            texel[..n].to_vec()
        };
        let values: Vec<(u32, u8)> = words.iter().map(|&w| (w, 0xF)).collect();
        self.write_staging(p, pc, lane, instr.staging[0], &values, slot)
    }

    /// `LEA_TEX_IMM` / `LEA_TEX`.
    pub(crate) fn image_address(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        let instr = p.code[pc].instr;
        let (unit, coord) = self.image_operands(p, pc, lane)?;
        let image = &self.memory.images[&unit];
        let address = match image.offset(coord) {
            Some(offset) => image_base(unit) + offset as u64,
            None => image_base(unit) + IMAGE_SINK,
        };
        let descriptor = CONVERSION_TAG | u32::from(image.format.id());
        let values = [(address as u32, 0xF), ((address >> 32) as u32, 0xF), (descriptor, 0xF)];
        self.write_staging(p, pc, lane, instr.staging[0], &values, slot)
    }

    /// `ST_CVT`.
    pub(crate) fn store_converted(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        let instr = p.code[pc].instr;
        let c = Ctx { m: self, p, pc, lane };
        let addr = c.raw64(0)?.wrapping_add(instr.imm("offset").unwrap_or(0) as u64);
        let descriptor = c.raw(1)?;
        let format = (descriptor & 0xFFFF_FF00 == CONVERSION_TAG)
            .then(|| Format::from_id(descriptor as u8))
            .flatten()
            .ok_or_else(|| {
                EmuError::new(
                    ErrorKind::Fault,
                    format!("ST_CVT's descriptor {descriptor:#x} is not a conversion descriptor from LEA_TEX"),
                )
            })?;
        if instr.modifier("memory_access").unwrap_or(0) != 0 {
            return err(ErrorKind::Unsupported, "ST_CVT with a memory-access hint is not modelled");
        }
        let register_format = instr.modifier("register_format").unwrap_or(0);
        let half = register_class(register_format, format)?;
        let n = components(&instr);
        let channels = format.info().channels.len();
        if n < channels {
            return fault(format!(
                "ST_CVT stores {n} components to a texel of {} with {channels} channels",
                format.name()
            ));
        }
        let group = instr.staging[0];
        let needed = if half { n.div_ceil(2) } else { n };
        if usize::from(group.count) != needed {
            return fault(format!("ST_CVT of {n} components reads {} registers; it needs {needed}", group.count));
        }
        let regs = self.read_staging(p, lane, group, false)?;
        let mut values = [0u32; 4];
        for (i, v) in values.iter_mut().enumerate().take(n) {
            *v = if half {
                let h = (regs[i / 2] >> (16 * (i % 2))) & 0xFFFF;
                match format.class() {
                    Class::Float => fp::f16_to_f32_exact(h),
                    Class::Sint => super::alu::sext(h, 16) as u32,
                    Class::Uint => h,
                }
            } else {
                regs[i]
            };
        }
        if self.discarded[lane] {
            // Stores of discarded (helper) threads do not happen.
            return Ok(());
        }
        let bytes = format.pack(values);
        let place = self.memory.write(addr, &bytes, 0)?;
        self.track_memory(p, pc, lane, slot, place, addr, bytes.len(), true)
    }
}
