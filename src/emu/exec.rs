//! Instruction dispatch: ALU results and their destinations, branches, `DISCARD`, and the
//! cross-lane instructions `CLPER` and `WMASK`. Message instructions are in `message.rs` and
//! `texture.rs`.

use super::alu::{self, Ctx, Out};
use super::error::{EmuError, ErrorKind, err};
use super::fp::{self, F32};
use super::machine::{Effects, Machine, Program, Stage};
use super::memory::CODE_BASE;
use crate::exec::LANES;
use crate::valhall::tables::Opcode;

impl Machine {
    /// Executes the instruction at `pc` for the `active` lanes.
    pub(crate) fn execute(&mut self, p: &Program, pc: usize, active: [bool; LANES]) -> Result<Effects, EmuError> {
        use Opcode::*;
        let instr = &p.code[pc].instr;
        let mut fx = Effects::default();
        match instr.opcode {
            BRANCHZ | BRANCHZI => self.branch(p, pc, active, &mut fx)?,
            DISCARD_F32 => {
                if self.stage != Stage::Fragment {
                    return err(ErrorKind::Fault, "DISCARD outside a fragment shader");
                }
                for lane in lanes(active) {
                    let c = Ctx { m: self, p, pc, lane };
                    let (a, b) = (c.flt(0).map_err(|e| e.lane(lane))?, c.flt(1).map_err(|e| e.lane(lane))?);
                    let cond = instr.modifier("condition").unwrap_or(0);
                    fx.discard[lane] = fp::float_condition(F32, cond, a, b);
                }
            }
            CLPER_I32 | CLPER_S32 | CLPER_V2U16 | CLPER_V2S16 | CLPER_V4U8 | CLPER_V4S8 | CLPER_U64 | CLPER_S64 => {
                self.clper(p, pc, active)?
            }
            WMASK => self.wmask(p, pc, active)?,
            op if op.unit().is_alu() => {
                let mut results = [Out::None; LANES];
                for lane in lanes(active) {
                    let c = Ctx { m: self, p, pc, lane };
                    results[lane] = alu::eval(&c).map_err(|e| e.lane(lane))?;
                }
                for lane in lanes(active) {
                    self.write_out(p, pc, lane, results[lane]).map_err(|e| e.lane(lane))?;
                }
            }
            _ => self.message(p, pc, active, &mut fx)?,
        }
        Ok(fx)
    }

    /// Writes an ALU result to the destination.
    pub(crate) fn write_out(&mut self, p: &Program, pc: usize, lane: usize, out: Out) -> Result<(), EmuError> {
        let instr = &p.code[pc].instr;
        let Some(dest) = instr.destination() else {
            return Ok(());
        };
        let reg = usize::from(dest.reg);
        match out {
            Out::None => Ok(()),
            Out::W32(v) => self.write_reg(p, lane, reg, v, dest.mask),
            Out::W64(v) => {
                if reg % 2 == 1 || dest.mask != 3 {
                    return err(
                        ErrorKind::Fault,
                        format!("64-bit result needs a whole even register pair, not r{reg}"),
                    );
                }
                if reg + 1 >= super::machine::REGS {
                    return err(ErrorKind::Fault, format!("64-bit result r{reg}:r{} runs past r63", reg + 1));
                }
                self.write_reg(p, lane, reg, v as u32, 3)?;
                self.write_reg(p, lane, reg + 1, (v >> 32) as u32, 3)
            }
        }
    }

    fn branch(&mut self, p: &Program, pc: usize, active: [bool; LANES], fx: &mut Effects) -> Result<(), EmuError> {
        let instr = &p.code[pc].instr;
        let eq = instr.flag("eq").unwrap_or(false);
        for lane in lanes(active) {
            let c = Ctx { m: self, p, pc, lane };
            let v = c.raw(0).map_err(|e| e.lane(lane))?;
            let v = match instr.srcs[0].widen {
                0 => v,
                1 => v & 0xFFFF,
                2 => v >> 16,
                _ => return err(ErrorKind::Unsupported, "branch combine modes `and` and `lowbits` are not modelled"),
            };
            if (v == 0) != eq {
                continue;
            }
            let target = if instr.opcode == Opcode::BRANCHZ {
                pc as i64 + 1 + instr.imm("offset").unwrap_or(0)
            } else {
                let t = c.raw(1).map_err(|e| e.lane(lane))?;
                let addr = if instr.flag("absolute").unwrap_or(false) {
                    (CODE_BASE & !0xFFFF_FFFF) | u64::from(t)
                } else {
                    (CODE_BASE + 8 * (pc as u64 + 1)).wrapping_add(t as i32 as i64 as u64)
                };
                let index = addr.wrapping_sub(CODE_BASE);
                if addr % 8 != 0 || addr < CODE_BASE || index / 8 >= p.code.len() as u64 {
                    return Err(EmuError::new(
                        ErrorKind::Flow,
                        format!(
                            "BRANCHZI to address {addr:#x}, outside the program (code at {CODE_BASE:#x}; blend shaders are not modelled)"
                        ),
                    )
                    .lane(lane));
                }
                (index / 8) as i64
            };
            if target < 0 || target >= p.code.len() as i64 {
                return Err(EmuError::new(
                    ErrorKind::Flow,
                    format!("branch target {target} is outside the program (0..{})", p.code.len()),
                )
                .lane(lane));
            }
            fx.next[lane] = Some(target as usize);
        }
        Ok(())
    }

    fn clper(&mut self, p: &Program, pc: usize, active: [bool; LANES]) -> Result<(), EmuError> {
        let instr = &p.code[pc].instr;
        let wide = matches!(instr.opcode, Opcode::CLPER_U64 | Opcode::CLPER_S64);
        let size = 2usize << instr.modifier("subgroup_size").unwrap_or(3);
        let lane_op = instr.modifier("lane_operation").unwrap_or(0);
        let inactive = inactive_value(instr.modifier("inactive_result").unwrap_or(0), wide)?;
        let mut values = [0u64; LANES];
        let mut selectors = [0usize; LANES];
        for lane in lanes(active) {
            let c = Ctx { m: self, p, pc, lane };
            values[lane] = if wide { c.raw64(0) } else { c.raw(0).map(u64::from) }.map_err(|e| e.lane(lane))?;
            selectors[lane] = c.lanes(1).map_err(|e| e.lane(lane))?.0 as usize;
        }
        let mut results = [0u64; LANES];
        for lane in lanes(active) {
            let base = lane - lane % size.clamp(1, LANES);
            let rel = lane - base;
            let sel = selectors[lane];
            let target = match lane_op {
                0 => Some(sel & (size - 1)),
                1 => Some((rel ^ sel) & (size - 1)),
                2 => rel.checked_sub(sel),
                _ => Some(rel + sel).filter(|&t| t < size),
            };
            results[lane] = match target.map(|t| base + t) {
                Some(t) if t < LANES && active[t] => values[t],
                _ => inactive,
            };
        }
        for lane in lanes(active) {
            let out = if wide { Out::W64(results[lane]) } else { Out::W32(results[lane] as u32) };
            self.write_out(p, pc, lane, out).map_err(|e| e.lane(lane))?;
        }
        Ok(())
    }

    fn wmask(&mut self, p: &Program, pc: usize, active: [bool; LANES]) -> Result<(), EmuError> {
        let instr = &p.code[pc].instr;
        let size = 2usize << instr.modifier("subgroup_size").unwrap_or(3);
        let mut nonzero = [false; LANES];
        for lane in lanes(active) {
            let c = Ctx { m: self, p, pc, lane };
            nonzero[lane] = c.raw(0).map_err(|e| e.lane(lane))? != 0;
        }
        for lane in lanes(active) {
            let base = lane - lane % size.min(LANES);
            let mut mask = 0u32;
            for j in base..(base + size).min(LANES) {
                if active[j] && nonzero[j] {
                    mask |= 1 << (j - base);
                }
            }
            self.write_out(p, pc, lane, Out::W32(mask)).map_err(|e| e.lane(lane))?;
        }
        Ok(())
    }
}

/// The lanes set in a mask.
pub(crate) fn lanes(active: [bool; LANES]) -> impl Iterator<Item = usize> {
    (0..LANES).filter(move |&l| active[l])
}

/// The value `CLPER` returns for an inactive lane (`inactive_result` enum).
fn inactive_value(index: u8, wide: bool) -> Result<u64, EmuError> {
    if wide {
        return Ok(match index {
            0 => 0,
            1 => u64::MAX,
            2 => 1,
            4 => 1 << 63,
            5 => i64::MAX as u64,
            10 => 1f64.to_bits(),
            12 => f64::NEG_INFINITY.to_bits(),
            13 => f64::INFINITY.to_bits(),
            _ => return err(ErrorKind::Unsupported, format!("inactive_result {index} on a 64-bit CLPER")),
        });
    }
    Ok(u64::from(match index {
        0 => 0u32,
        1 => u32::MAX,
        2 => 1,
        3 => 0x0001_0001,
        4 => 0x8000_0000,
        5 => 0x7FFF_FFFF,
        6 => 0x8000_8000,
        7 => 0x7FFF_7FFF,
        8 => 0x8080_8080,
        9 => 0x7F7F_7F7F,
        10 => 0x3F80_0000,
        11 => 0x3C00_3C00,
        12 => 0xFF80_0000,
        13 => 0x7F80_0000,
        14 => 0xFC00_FC00,
        15 => 0x7C00_7C00,
        _ => return err(ErrorKind::Decode, format!("reserved inactive_result {index}")),
    }))
}
