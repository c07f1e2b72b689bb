//! Fragment-stage models the message instructions share: the framebuffer behind `LD_TILE`
//! (FBFETCH) and interpolation at an explicit position (`LD_VAR_BUF….explicit`,
//! INTERP_OFFSET). docs/emulator.md §3.5 and §6.8 define them; the interpreter implements the
//! same definitions (docs/interpreter.md).

use super::alu::Ctx;
use super::error::{EmuError, ErrorKind, err};
use super::machine::{Machine, Program};
use crate::exec::LANES;

/// Tag of the `rt_conversion.R` sysval: word `RT_CONVERSION_TAG | R` stands for render target
/// R's internal conversion descriptor of 32-bit float data (opaque to the shader).
pub const RT_CONVERSION_TAG: u32 = 0xC0C0_0000;

/// Pixel-indices word of `LD_TILE`/`ST_TILE` (Mesa's `bifrost_pixel_indices`): sample in byte
/// 0, render target in byte 1, x and y in bytes 2 and 3; y = 255 means the current pixel.
const CURRENT_PIXEL: u32 = 0xFF;

/// The varying at an explicit 8.8 fixed-point sample position: source 0 holds x (low half) and
/// y (high half) in 1/256 pixel relative to the pixel's top-left corner. The given per-lane
/// values are the pixel-centre values and the quad is affine, so the value at offset
/// `d = position/256 − 0.5` from the centre is `fma(dy, v2 − v0, fma(dx, v1 − v0, v))`
/// (each step rounded to f32; the quad's coarse derivatives).
pub fn at_offset(values: &[[u32; 4]; LANES], lane: usize, src0: u32) -> [u32; 4] {
    let d = |half: u32| f32::from(half as u16 as i16) / 256.0 - 0.5;
    let (dx, dy) = (d(src0 & 0xFFFF), d(src0 >> 16));
    std::array::from_fn(|c| {
        let f = |l: usize| f32::from_bits(values[l][c]);
        let ddx = f(1) - f(0);
        let ddy = f(2) - f(0);
        dy.mul_add(ddy, dx.mul_add(ddx, f(lane))).to_bits()
    })
}

impl Machine {
    /// `LD_TILE` (FBFETCH): the colour of render target `rt` at the lane's pixel before the
    /// shader ran (`exec::framebuffer`), in the register format (`f32`/`auto` words, `f16`
    /// packed pairs). Sources: pixel indices (current pixel, sample 0), the coverage, and the
    /// render target's conversion descriptor (the `rt_conversion.R` sysval).
    pub(crate) fn ld_tile(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        let instr = p.code[pc].instr;
        if self.stage != super::machine::Stage::Fragment {
            return err(ErrorKind::Fault, "LD_TILE outside a fragment shader");
        }
        let c = Ctx { m: self, p, pc, lane };
        let (indices, _coverage, conversion) = (c.raw(0)?, c.raw(1)?, c.raw(2)?);
        if indices >> 24 != CURRENT_PIXEL || indices >> 16 & 0xFF != 0 || indices & 0xFF != 0 {
            return err(
                ErrorKind::Unsupported,
                format!("LD_TILE pixel indices {indices:#010x}: only the current pixel's sample 0 is modelled"),
            );
        }
        let rt = indices >> 8 & 0xFF;
        if conversion != RT_CONVERSION_TAG | rt {
            return err(
                ErrorKind::Fault,
                format!("LD_TILE of render target {rt} needs its conversion descriptor (sysval `rt_conversion.{rt}`)"),
            );
        }
        let Some(colour) = self.env.framebuffer.get(&rt) else {
            return err(
                ErrorKind::Fault,
                format!("LD_TILE: render target {rt} has no colour output (metadata `outputs`)"),
            );
        };
        let n = super::message::components(&instr);
        let words = &colour[lane][..n];
        let regs = match instr.modifier("register_format").unwrap_or(0) {
            0 | 2 => words.to_vec(),
            3 => words
                .chunks(2)
                .map(|h| {
                    let half = |w: u32| super::fp::convert(super::fp::F32, super::fp::F16, w, super::fp::Round::Rte);
                    half(h[0]) & 0xFFFF | (h.get(1).map_or(0, |&w| half(w)) & 0xFFFF) << 16
                })
                .collect(),
            f => return err(ErrorKind::Unsupported, format!("LD_TILE register format {f} is not modelled")),
        };
        let values: Vec<(u32, u8)> = regs.iter().map(|&w| (w, 0xF)).collect();
        self.write_staging(p, pc, lane, instr.staging[0], &values, slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_offsets_follow_the_quad_plane() {
        let f = |x: f32| x.to_bits();
        // v = 1 + 2·x + 4·y over the quad (lane bit 0 = x, bit 1 = y).
        let values = [[f(1.0); 4], [f(3.0); 4], [f(5.0); 4], [f(7.0); 4]];
        // Position (128, 128) is the centre: the value itself.
        assert_eq!(at_offset(&values, 3, 128 | 128 << 16)[0], f(7.0));
        // (192, 64): dx = +0.25, dy = −0.25 → 7 + 0.5 − 1.
        assert_eq!(at_offset(&values, 3, 192 | 64 << 16)[1], f(6.5));
        // Negative 16-bit positions: (−128, 0) → dx = −1, dy = −0.5 from lane 0: 1 − 2 − 2.
        assert_eq!(at_offset(&values, 0, 0xFF80)[2], f(-3.0));
    }
}
