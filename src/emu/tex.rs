//! Texturing: `TEX_SINGLE`, `TEX_FETCH`, `TEX_GATHER` and `TEX_GRADIENT` on the procedural
//! texture model of `exec::texture` (the contract shared with the TGSI interpreter).
//!
//! Staging input (ABI §C.12.2), in order, absent entries dropped: X, Y, Z, array layer, shadow
//! reference, offset word (texel offsets in bytes 0–2, `TEX_FETCH` sample index in byte 2
//! outside 3D, level in byte 3), LOD word (signed 8.8 in bits 0–15), two gradient-descriptor
//! words. Cube maps pass `s` with the face in bits 29–31. Results are packed by the write mask.
//!
//! `TEX_GRADIENT` with `derivative_enable` reads the derivative vector `ddx.s, ddy.s, ddx.t,
//! ddy.t, ddx.r, ddy.r` (two words per coordinate of the dimension) and returns the gradient
//! descriptor: word 0 the 8.8 LOD of `Texture::gradient_lod` (clamped to the level range unless
//! `lod_clamp_disable`), word 1 zero (the model has no anisotropy); `TEX_SINGLE.grdesc` samples
//! at the LOD of word 0. With `force_delta_enable` it reads the coordinates (X, Y, Z as for
//! sampling, no layer) and returns the quad's implicit 8.8 LOD the same way (a fragment quad is
//! required). `lod_bias_disable` has no effect (the model has no sampler bias).

use super::error::{EmuError, ErrorKind, err};
use super::exec::lanes;
use super::fp::{self, F16, F32, Round};
use super::machine::{Machine, Program, Stage};
use crate::exec::LANES;
use crate::exec::texture::{Dim, SampleCoords, Texture};
use crate::valhall::tables::Opcode;

fn fault<T>(message: impl Into<String>) -> Result<T, EmuError> {
    err(ErrorKind::Fault, message)
}

/// The texture unit (table 4 index) and sampler (table 3 index) of a 64-bit texture operand.
fn decode_handles(v: u64, wide: bool) -> Result<(u32, u32), EmuError> {
    let (lo, hi) = (v as u32, (v >> 32) as u32);
    if wide {
        let (st, si) = (lo >> 24, lo & 0xFF_FFFF);
        let (tt, ti) = (hi >> 24, hi & 0xFF_FFFF);
        if tt != 4 || st != 3 {
            return texture_tables(tt, st);
        }
        return Ok((ti, si));
    }
    if hi != 0 {
        return fault(format!("narrow texture operand {v:#x} has a non-zero high word"));
    }
    let (tt, ti, st, si) = (lo >> 27, (lo >> 16) & 0x7FF, (lo >> 11) & 0x1F, lo & 0x7FF);
    if tt != 4 || st != 3 {
        return texture_tables(tt, st);
    }
    Ok((ti, si))
}

fn texture_tables<T>(texture_table: u32, sampler_table: u32) -> Result<T, EmuError> {
    if texture_table == 5 {
        return err(ErrorKind::Unsupported, "sampling images (table 5) is not modelled");
    }
    fault(format!(
        "texture operand names texture table {texture_table} and sampler table {sampler_table}; textures are table 4, samplers table 3"
    ))
}

/// One decoded request of one lane.
#[derive(Clone, Copy, Debug, Default)]
struct Request {
    words: [u32; 9],
    unit: u32,
}

impl Machine {
    pub(crate) fn texture(&mut self, p: &Program, pc: usize, active: [bool; LANES]) -> Result<(), EmuError> {
        use Opcode::*;
        let instr = p.code[pc].instr;
        let op = instr.opcode;
        let slot = instr.modifier("slot").unwrap_or(0);
        let dimension = instr.modifier("dimension").unwrap_or(0);
        let array = instr.flag("array_enable").unwrap_or(false);
        let shadow = instr.flag("shadow").unwrap_or(false);
        let offsets = instr.flag("texel_offset").unwrap_or(false);
        let lod_mode = if op == TEX_SINGLE { instr.modifier("lod_mode").unwrap_or(0) } else { 0 };
        // TEX_GRADIENT's control flags (lod_bias_disable is moot: the model has no sampler bias).
        let force_delta = instr.flag("force_delta_enable").unwrap_or(false);
        let derivatives = instr.flag("derivative_enable").unwrap_or(false);
        let clamp_disabled = instr.flag("lod_clamp_disable").unwrap_or(false);
        if force_delta && derivatives {
            return err(
                ErrorKind::Unsupported,
                "TEX_GRADIENT with both force_delta_enable and derivative_enable is not modelled",
            );
        }
        if op == TEX_GATHER && instr.flag("integer_coordinates").unwrap_or(false) {
            return err(ErrorKind::Unsupported, "TEX_GATHER with integer coordinates is not modelled");
        }
        if matches!(lod_mode, 2 | 3 | 7) {
            return err(ErrorKind::Decode, format!("reserved lod_mode {lod_mode}"));
        }
        // Layout of the staging input.
        let coords = match dimension {
            0 => 1,
            1 | 3 => 2,
            _ => 3,
        };
        let mut layout: Vec<&str> = Vec::new();
        let gradient_inputs = op == TEX_GRADIENT && !force_delta;
        if gradient_inputs {
            if !derivatives {
                return err(
                    ErrorKind::Unsupported,
                    "TEX_GRADIENT needs derivative_enable (bit 15) or force_delta_enable (bit 12)",
                );
            }
            layout.extend(std::iter::repeat_n("gradient", 2 * coords));
        } else {
            layout.extend(["x", "y", "z"].iter().take(coords));
            if array && op != TEX_GRADIENT {
                layout.push("layer");
            }
            if shadow && op != TEX_GRADIENT {
                layout.push("reference");
            }
            if offsets && op != TEX_GRADIENT {
                layout.push("offsets");
            }
            if matches!(lod_mode, 4 | 5) {
                layout.push("lod");
            }
            if lod_mode == 6 {
                layout.push("descriptor");
                layout.push("descriptor");
            }
        }
        let read_group = instr.staging[1];
        if usize::from(read_group.count) != layout.len() {
            return fault(format!(
                "{} reads {} staging registers but its modifiers call for {} ({})",
                instr.info().name,
                read_group.count,
                layout.len(),
                layout.join(", ")
            ));
        }
        // Read every lane's request (inactive lanes: their current registers, for quad LODs).
        let mut requests = [Request::default(); LANES];
        for lane in 0..LANES {
            let is_active = active[lane];
            for (i, r) in read_group.registers().enumerate() {
                requests[lane].words[i] = if is_active {
                    self.read_reg(p, lane, usize::from(r), 3, false).map_err(|e| e.lane(lane))?
                } else {
                    self.regs[lane][usize::from(r)]
                };
            }
            if is_active {
                let c = super::alu::Ctx { m: self, p, pc, lane };
                let handle = c.raw64(0).map_err(|e| e.lane(lane))?;
                let (unit, _sampler) =
                    decode_handles(handle, instr.flag("wide_indices").unwrap_or(false)).map_err(|e| e.lane(lane))?;
                requests[lane].unit = unit;
            }
        }
        let field = |lane: usize, name: &str| -> Option<u32> {
            layout.iter().position(|&n| n == name).map(|i| requests[lane].words[i])
        };
        let needs_quad = lod_mode == 1 || lod_mode == 5 || force_delta;
        if needs_quad && self.stage != Stage::Fragment {
            return fault("implicit level of detail needs a fragment quad");
        }
        for lane in lanes(active) {
            let unit = requests[lane].unit;
            let Some(texture) = self.env.textures.get(&unit).cloned() else {
                return Err(EmuError::new(ErrorKind::Fault, format!("texture unit {unit} is not bound")).lane(lane));
            };
            check_dimension(&texture, dimension, array, op == TEX_FETCH, op != TEX_GRADIENT)
                .map_err(|e| e.lane(lane))?;
            let rect = texture.dim == Dim::Rect;
            let coords_of = |l: usize| -> [f32; 3] {
                let x = field(l, "x").unwrap_or(0);
                let s = if dimension == 3 { cube_s(x) } else { f32::from_bits(x) };
                [s, f32::from_bits(field(l, "y").unwrap_or(0)), f32::from_bits(field(l, "z").unwrap_or(0))]
            };
            let quad_lod = || {
                let quad: [[f32; 3]; 4] = std::array::from_fn(|l| {
                    let c = coords_of(l);
                    if dimension == 3 { [c[0], c[1], 0.0] } else { c }
                });
                texture.implicit_lod(&quad)
            };
            let offset_word = field(lane, "offsets").unwrap_or(0);
            let off = |i: u32| i32::from((offset_word >> (8 * i)) as u8 as i8);
            let (ox, oy, oz) = (off(0), off(1), if dimension == 2 { off(2) } else { 0 });
            let texel: [u32; 4] = match op {
                TEX_FETCH => {
                    let ints = |name: &str| field(lane, name).unwrap_or(0) as i32;
                    let level = if offsets { offset_word >> 24 } else { 0 };
                    // Byte 2 is the sample index outside 3D (a multisample fetch).
                    let sample = if dimension == 2 { 0 } else { (offset_word >> 16) & 0xFF };
                    let layer = if array { field(lane, "layer").unwrap_or(0) } else { 0 };
                    let (x, y, z) =
                        (ints("x").wrapping_add(ox), ints("y").wrapping_add(oy), ints("z").wrapping_add(oz));
                    texture.texel_sample(level, layer, x, y, z, sample)
                }
                TEX_GRADIENT => {
                    let lod = if force_delta {
                        quad_lod()
                    } else {
                        let g: Vec<f32> = (0..2 * coords).map(|i| f32::from_bits(requests[lane].words[i])).collect();
                        let mut ddx = [0.0f32; 3];
                        let mut ddy = [0.0f32; 3];
                        for c in 0..coords {
                            ddx[c] = g[2 * c];
                            ddy[c] = g[2 * c + 1];
                        }
                        texture.gradient_lod(ddx, ddy)
                    };
                    let lod = if clamp_disabled { lod } else { lod.clamp(0, (texture.level_count() as i32 - 1) * 256) };
                    [lod as i16 as u16 as u32, 0, 0, 0]
                }
                _ => {
                    let c = coords_of(lane);
                    let x = field(lane, "x").unwrap_or(0);
                    let coords = SampleCoords {
                        s: c[0],
                        t: c[1],
                        r: c[2],
                        layer: f32::from_bits(field(lane, "layer").unwrap_or(0)),
                        face: if dimension == 3 { x >> 29 } else { 0 },
                        reference: field(lane, "reference").map(f32::from_bits),
                        offset: [0; 3],
                    };
                    if dimension == 3 && coords.face > 5 {
                        return Err(
                            EmuError::new(ErrorKind::Fault, format!("cube face {} is not 0–5", coords.face)).lane(lane)
                        );
                    }
                    if op == TEX_GATHER {
                        let component = usize::from(instr.modifier("fetch_component").unwrap_or(0));
                        gather(&texture, coords, component, ox, oy)
                    } else {
                        let lod88 = |w: u32| i32::from(w as u16 as i16);
                        let lod = match lod_mode {
                            0 => 0,
                            1 => quad_lod(),
                            4 => lod88(field(lane, "lod").unwrap_or(0)),
                            5 => quad_lod().saturating_add(lod88(field(lane, "lod").unwrap_or(0))),
                            _ => lod88(field(lane, "descriptor").unwrap_or(0)),
                        };
                        sample(&texture, coords, lod, ox, oy, oz, rect)
                    }
                }
            };
            let mut regs = pack_result(&instr, texel)?;
            if self.discarded[lane] && instr.flag("skip").unwrap_or(false) {
                // A helper skips the lookup: mark what a derivative must not depend on.
                regs.fill(SKIPPED_RESULT);
            }
            let group = instr.staging[0];
            self.write_staging(p, pc, lane, group, &regs.iter().map(|&w| (w, 0xF)).collect::<Vec<_>>(), slot)
                .map_err(|e| e.lane(lane))?;
        }
        Ok(())
    }
}

/// What a texture instruction with `skip` leaves in a discarded lane's result registers: an
/// arbitrary finite pattern (−6.2·10^18), so that a derivative wrongly depending on it shows
/// up in `verify`.
pub(crate) const SKIPPED_RESULT: u32 = 0xDEAD_5C1D;

/// `s` of a cube coordinate packed with the face in bits 29–31: the low 29 bits of an f32 in
/// [0, 1] whose bit 29 is set for every value ≥ 2^−63 (smaller values read as such; 0 as 0).
fn cube_s(word: u32) -> f32 {
    let low = word & 0x1FFF_FFFF;
    if low == 0 { 0.0 } else { f32::from_bits(low | 0x2000_0000) }
}

fn check_dimension(
    texture: &Texture,
    dimension: u8,
    array: bool,
    fetch: bool,
    check_array: bool,
) -> Result<(), EmuError> {
    let ok = match (dimension, texture.dim) {
        (0, Dim::D1 | Dim::Buffer) => true,
        (1, Dim::D2 | Dim::Rect) => true,
        (1, Dim::Cube) => fetch,
        (2, Dim::D3) => true,
        (3, Dim::Cube) => !fetch,
        _ => false,
    };
    if !ok {
        return fault(format!(
            "the instruction's dimension {} does not match the bound {:?} texture",
            ["1d", "2d", "3d", "cube"][usize::from(dimension & 3)],
            texture.dim
        ));
    }
    let want_array = texture.array || (fetch && texture.dim == Dim::Cube);
    if check_array && array != want_array && texture.dim != Dim::Buffer {
        return fault(format!(
            "array_enable is {} but the bound texture is {}an array",
            if array { "set" } else { "clear" },
            if want_array { "" } else { "not " }
        ));
    }
    Ok(())
}

/// `Texture::sample` with the texel offsets of the request.
fn sample(t: &Texture, c: SampleCoords, lod: i32, ox: i32, oy: i32, oz: i32, _rect: bool) -> [u32; 4] {
    t.sample(SampleCoords { offset: [ox, oy, oz], ..c }, lod)
}

/// `Texture::gather` with the texel offsets of the request.
fn gather(t: &Texture, c: SampleCoords, component: usize, ox: i32, oy: i32) -> [u32; 4] {
    t.gather(SampleCoords { offset: [ox, oy, 0], ..c }, component)
}

/// The result registers: the components selected by the write mask, packed in order; 32-bit
/// results one per register, 16-bit results two per register (`f`: binary32 rounded to
/// binary16, `u`/`s`: the low 16 bits).
fn pack_result(instr: &crate::valhall::Instr, texel: [u32; 4]) -> Result<Vec<u32>, EmuError> {
    let mask = instr.modifier("write_mask").unwrap_or(15);
    if mask == 0 {
        return err(ErrorKind::Decode, "reserved write mask 0");
    }
    let selected: Vec<u32> = (0..4).filter(|c| mask >> c & 1 == 1).map(|c| texel[c]).collect();
    let wide = instr.modifier("register_width").unwrap_or(1) == 1;
    if wide {
        return Ok(selected);
    }
    let float = instr.modifier("register_type").unwrap_or(1) == 1;
    let halves: Vec<u32> =
        selected.iter().map(|&v| if float { fp::convert(F32, F16, v, Round::Rte) } else { v & 0xFFFF }).collect();
    Ok(halves.chunks(2).map(|c| c[0] | c.get(1).copied().unwrap_or(0) << 16).collect())
}
