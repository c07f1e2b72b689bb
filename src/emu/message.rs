//! Message (asynchronous) instructions other than texturing: varyings, attributes, buffer
//! addresses and loads, memory loads/stores/atomics, the fragment outputs (`ATEST`,
//! `ZS_EMIT`, `BLEND`) and `BARRIER`; images (`LD_TEX*`, `LEA_TEX*`, `ST_CVT`) are in
//! `image.rs`.
//!
//! Every message executes completely when it issues; what is asynchronous is *visibility*: the
//! registers it writes are pending on its slot until a wait on that slot (docs/emulator.md §4),
//! and its memory accesses stay outstanding for the memory-ordering rule.

use super::alu::{Ctx, sext};
use super::error::{EmuError, ErrorKind, err};
use super::exec::lanes;
use super::fp::{self, F16, F32, Round};
use super::machine::{BLEND_DESCRIPTOR_TAG, Effects, FLOW_WAIT, FLOW_WAIT0126, Machine, Program, REGS, Stage};
use super::memory::{Memory, Place, RegionKind, UBO_BASE, UBO_STRIDE, idvs_record, ssbo_address};
use crate::exec::LANES;
use crate::valhall::tables::Opcode;
use crate::valhall::{Instr, Staging};

/// The `memory_access` value `.force`: the access happens even in a discarded thread.
const HINT_FORCE: u8 = 3;

fn fault<T>(message: impl Into<String>) -> Result<T, EmuError> {
    err(ErrorKind::Fault, message)
}

/// Number of components of a `vector_size` value.
pub(crate) fn components(instr: &Instr) -> usize {
    usize::from(instr.modifier("vector_size").unwrap_or(0)) + 1
}

/// Packs 16-bit values two per register.
fn pack16(halves: &[u32]) -> Vec<u32> {
    halves.chunks(2).map(|c| (c[0] & 0xFFFF) | (c.get(1).copied().unwrap_or(0) & 0xFFFF) << 16).collect()
}

/// Converts 32-bit words to a register format (`register_format` enum): 32-bit formats keep
/// the words, `f16` rounds binary32 to binary16 (nearest even), `s16`/`u16` keep the low 16
/// bits; 16-bit formats pack two components per register.
pub(crate) fn to_register_format(words: &[u32], format: u8) -> Result<Vec<u32>, EmuError> {
    match format {
        0 | 2 | 4 | 6 => Ok(words.to_vec()),
        3 => Ok(pack16(&words.iter().map(|&w| fp::convert(F32, F16, w, Round::Rte)).collect::<Vec<_>>())),
        5 | 7 => Ok(pack16(words)),
        _ => err(ErrorKind::Decode, format!("reserved register format {format}")),
    }
}

impl Machine {
    /// Reads a staging group (with the hazard checks; `allow_undefined` for don't-care data).
    pub(crate) fn read_staging(
        &self,
        p: &Program,
        lane: usize,
        group: Staging,
        allow_undefined: bool,
    ) -> Result<Vec<u32>, EmuError> {
        group.registers().map(|r| self.read_reg(p, lane, usize::from(r), 3, allow_undefined)).collect()
    }

    /// Writes a staging group (byte masks per register, 0xF = whole register) and marks it
    /// pending on `slot`.
    pub(crate) fn write_staging(
        &mut self,
        p: &Program,
        pc: usize,
        lane: usize,
        group: Staging,
        values: &[(u32, u8)],
        slot: u8,
    ) -> Result<(), EmuError> {
        if usize::from(group.count) != values.len() {
            return fault(format!(
                "the staging group {} has {} registers, the operation writes {}",
                describe_group(group),
                group.count,
                values.len()
            ));
        }
        for (r, &(v, bytes)) in group.registers().zip(values) {
            let reg = usize::from(r);
            let m = (0..4).fold(0u32, |acc, b| if bytes >> b & 1 == 1 { acc | 0xFF << (8 * b) } else { acc });
            let old = if reg < REGS { self.regs[lane][reg] } else { 0 };
            let halves = u8::from(bytes & 3 != 0) | u8::from(bytes & 12 != 0) << 1;
            self.write_reg(p, lane, reg, (old & !m) | (v & m), 3)?;
            self.defined[lane][reg] &= halves | !3;
            self.defined[lane][reg] |= halves;
        }
        self.set_pending(lane, usize::from(group.base)..usize::from(group.base) + usize::from(group.count), slot, pc);
        Ok(())
    }

    fn write_staging_words(
        &mut self,
        p: &Program,
        pc: usize,
        lane: usize,
        group: Staging,
        words: &[u32],
        slot: u8,
    ) -> Result<(), EmuError> {
        let values: Vec<(u32, u8)> = words.iter().map(|&w| (w, 0xF)).collect();
        self.write_staging(p, pc, lane, group, &values, slot)
    }

    /// Executes a message instruction.
    pub(crate) fn message(
        &mut self,
        p: &Program,
        pc: usize,
        active: [bool; LANES],
        fx: &mut Effects,
    ) -> Result<(), EmuError> {
        use Opcode::*;
        let instr = p.code[pc].instr;
        let op = instr.opcode;
        let slot = instr.modifier("slot").unwrap_or(0);
        if slot == 7 && op != BARRIER {
            return err(ErrorKind::Flow, "slot 7 is reserved for BARRIER");
        }
        match op {
            BARRIER => return self.barrier(p, pc, active),
            TEX_FETCH | TEX_SINGLE | TEX_GATHER | TEX_GRADIENT => return self.texture(p, pc, active),
            _ => {}
        }
        // Indices the hardware requires to be uniform across the warp (ABI §A.4; the ISA: the
        // LD_ATTR index "must not diverge within a warp").
        let uniform_source = match op {
            LD_VAR_BUF_F32 | LD_VAR_BUF_F16 => Some(1),
            LD_ATTR | LD_TEX | LEA_TEX => Some(2),
            _ => None,
        };
        if let Some(k) = uniform_source {
            let mut seen: Option<u32> = None;
            for lane in lanes(active) {
                let v = Ctx { m: self, p, pc, lane }.raw(k).map_err(|e| e.lane(lane))?;
                if seen.is_some_and(|s| s != v) {
                    return Err(EmuError::new(
                        ErrorKind::Fault,
                        format!("source {k} (an index) diverges within the warp: the hardware needs it uniform"),
                    )
                    .lane(lane));
                }
                seen = Some(v);
            }
        }
        for lane in lanes(active) {
            self.message_lane(p, pc, lane, slot, fx).map_err(|e| e.lane(lane))?;
        }
        Ok(())
    }

    fn message_lane(
        &mut self,
        p: &Program,
        pc: usize,
        lane: usize,
        slot: u8,
        fx: &mut Effects,
    ) -> Result<(), EmuError> {
        use Opcode::*;
        let instr = p.code[pc].instr;
        let op = instr.opcode;
        let name = instr.info().name;
        match op {
            LD_VAR_BUF_IMM_F32 | LD_VAR_BUF_IMM_F16 | LD_VAR_BUF_F32 | LD_VAR_BUF_F16 => {
                self.ld_var_buf(p, pc, lane, slot)
            }
            LD_VAR_SPECIAL => self.ld_var_special(p, pc, lane, slot),
            LD_ATTR_IMM | LD_ATTR => self.ld_attr(p, pc, lane, slot),
            LEA_BUF_IMM | LEA_BUFFER => {
                let c = Ctx { m: self, p, pc, lane };
                let (table, index, offset) = if op == LEA_BUF_IMM {
                    let table = instr.imm("table").unwrap_or(0) as u32;
                    (if table >= 12 { table + 48 } else { table }, instr.imm("index").unwrap_or(0) as u32, c.raw(0)?)
                } else {
                    let h = c.raw(1)?;
                    (h >> 24, h & 0xFF_FFFF, c.raw(0)?)
                };
                let addr = self.buffer_address(table, index, offset)?;
                self.write_staging_words(p, pc, lane, instr.staging[0], &[addr as u32, (addr >> 32) as u32], slot)
            }
            LD_BUFFER_I8 | LD_BUFFER_I16 | LD_BUFFER_I24 | LD_BUFFER_I32 | LD_BUFFER_I48 | LD_BUFFER_I64
            | LD_BUFFER_I96 | LD_BUFFER_I128 => {
                let c = Ctx { m: self, p, pc, lane };
                let (offset, h) = (c.raw(0)?, c.raw(1)?);
                let (table, index) = (h >> 24, h & 0xFF_FFFF);
                if table != 0 && table != 6 {
                    return fault(format!(
                        "LD_BUFFER handle {h:#x} names table {table}; only UBOs (0) and SSBOs (6) are buffers"
                    ));
                }
                let addr = self.buffer_address(table, index, offset)?;
                let kind = if table == 0 { RegionKind::Ubo(index) } else { RegionKind::Ssbo(index) };
                let size = self.memory.region(kind).map_or(0, |r| r.data.len());
                if u64::from(offset) + access_bytes(name) as u64 > size as u64 {
                    // LD_BUFFER is bounds-checked against the descriptor's size (robust buffer
                    // access): a read outside the buffer returns zeros.
                    let zeros = vec![0u32; usize::from(instr.staging[0].count)];
                    return self.write_staging_words(p, pc, lane, instr.staging[0], &zeros, slot);
                }
                self.load(p, pc, lane, slot, addr, table == 6)
            }
            LOAD_I8 | LOAD_I16 | LOAD_I24 | LOAD_I32 | LOAD_I48 | LOAD_I64 | LOAD_I96 | LOAD_I128 => {
                let c = Ctx { m: self, p, pc, lane };
                let addr = c.raw64(0)?.wrapping_add(instr.imm("offset").unwrap_or(0) as u64);
                self.load(p, pc, lane, slot, addr, true)
            }
            STORE_I8 | STORE_I16 | STORE_I24 | STORE_I32 | STORE_I48 | STORE_I64 | STORE_I96 | STORE_I128 => {
                let c = Ctx { m: self, p, pc, lane };
                let addr = c.raw64(0)?.wrapping_add(instr.imm("offset").unwrap_or(0) as u64);
                let size = access_bytes(name);
                let hint = instr.modifier("memory_access").unwrap_or(0);
                let group = instr.staging[0];
                if usize::from(group.count) != size.div_ceil(4) {
                    return fault(format!(
                        "{name} stores {size} bytes from {} registers; it needs {}",
                        group.count,
                        size.div_ceil(4)
                    ));
                }
                let idvs = Memory::is_idvs(addr);
                let words = self.read_staging(p, lane, group, idvs)?;
                if self.discarded[lane] && hint != HINT_FORCE {
                    // Only `.force` accesses happen in discarded (helper) threads.
                    return Ok(());
                }
                let bytes = super::memory::words_to_bytes(&words);
                let place = self.memory.write(addr, &bytes[..size], hint)?;
                self.track_memory(p, pc, lane, slot, place, addr, size, true)
            }
            ATOM_I32 | ATOM_I64 | ATOM1_RETURN_I32 | ATOM1_RETURN_I64 | ATOM_RETURN_I32 | ATOM_RETURN_I64 => {
                self.atomic(p, pc, lane, slot)
            }
            ATEST => self.atest(p, pc, lane),
            ZS_EMIT => self.zs_emit(p, pc, lane, slot),
            BLEND => self.blend(p, pc, lane, fx),
            LD_VAR | LD_VAR_IMM | LD_VAR_FLAT | LD_VAR_FLAT_IMM => err(
                ErrorKind::Unsupported,
                format!("{name}: software-buffer varyings are not modelled (Gallium on Valhall uses LD_VAR_BUF*)"),
            ),
            LD_TEX_IMM | LD_TEX => self.image_load(p, pc, lane, slot),
            LEA_TEX_IMM | LEA_TEX => self.image_address(p, pc, lane, slot),
            ST_CVT => self.store_converted(p, pc, lane, slot),
            LEA_ATTR_IMM | LEA_ATTR => err(
                ErrorKind::Unsupported,
                format!("{name}: attribute addresses and conversion descriptors are not modelled"),
            ),
            LD_TILE => self.ld_tile(p, pc, lane, slot),
            ST_TILE => err(ErrorKind::Unsupported, format!("{name}: tile-buffer stores are not modelled")),
            _ => err(ErrorKind::Unsupported, format!("{name} is not modelled")),
        }
    }

    /// The address of byte `offset` of entry `index` of resource table `table`.
    fn buffer_address(&self, table: u32, index: u32, offset: u32) -> Result<u64, EmuError> {
        match table {
            0 => {
                if self.memory.region(RegionKind::Ubo(index)).is_none() {
                    return fault(format!("UBO {index} (table 0) is not bound"));
                }
                Ok(UBO_BASE + u64::from(index) * UBO_STRIDE + u64::from(offset))
            }
            6 => {
                if self.memory.region(RegionKind::Ssbo(index)).is_none() {
                    return fault(format!("SSBO {index} (table 6) is not bound"));
                }
                Ok(ssbo_address(index) + u64::from(offset))
            }
            61 => {
                if index != 0 {
                    return fault(format!("table 61 has only entry 0 (the IDVS buffer), not {index}"));
                }
                if u64::from(offset) >= super::memory::IDVS_RECORDS {
                    return fault(format!("IDVS linear index {offset} is beyond the emulated buffer"));
                }
                Ok(idvs_record(u64::from(offset)))
            }
            _ => fault(format!("resource table {table} has no buffers the emulator knows")),
        }
    }

    /// LOAD / LD_BUFFER: reads, places the data per `load_lane_*` and `unsigned`.
    fn load(&mut self, p: &Program, pc: usize, lane: usize, slot: u8, addr: u64, track: bool) -> Result<(), EmuError> {
        let instr = p.code[pc].instr;
        let name = instr.info().name;
        let size = access_bytes(name);
        let bytes = self.memory.read(addr, size)?;
        let unsigned = instr.flag("unsigned").unwrap_or(false);
        let lane_mode =
            instr.info().mods.iter().position(|m| m.key.starts_with("load_lane")).map_or(0, |i| instr.mods[i]);
        let raw = u128::from_le_bytes({
            let mut b = [0u8; 16];
            b[..size].copy_from_slice(&bytes);
            b
        });
        let bits = 8 * size as u32;
        let extended = |to: u32| -> u128 {
            let m = if bits >= 128 { u128::MAX } else { (1u128 << bits) - 1 };
            let v = raw & m;
            let v = if !unsigned && bits < 128 && v >> (bits - 1) & 1 == 1 { v | !m } else { v };
            if to >= 128 { v } else { v & ((1u128 << to) - 1) }
        };
        let words = |v: u128, n: usize| -> Vec<(u32, u8)> { (0..n).map(|i| ((v >> (32 * i)) as u32, 0xF)).collect() };
        let values: Vec<(u32, u8)> = match (size, lane_mode) {
            (1, 0..=3) => vec![((raw as u32) << (8 * u32::from(lane_mode)), 1 << lane_mode)],
            (1, 4 | 5) | (2, 0 | 1) => {
                let half = if size == 1 { lane_mode - 4 } else { lane_mode };
                vec![((extended(16) as u32) << (16 * u32::from(half)), 0b11 << (2 * half))]
            }
            (1, 6) | (2, 2) | (3, 0) | (4, 0) => words(extended(32), 1),
            (1, 7) | (2, 3) | (4, 1) => words(extended(64), 2),
            (6, 4) => words(extended(64), 2),
            (8, 7) => words(raw, 2),
            (12, 6) => words(raw, 3),
            (16, 7) => words(raw, 4),
            _ => return err(ErrorKind::Decode, format!("{name}: reserved load lane {lane_mode}")),
        };
        self.write_staging(p, pc, lane, instr.staging[0], &values, slot)?;
        if track {
            let (r, _) = self.memory.locate(addr, size)?;
            if !matches!(self.memory.regions[r].kind, RegionKind::Ubo(_)) {
                self.track_memory(p, pc, lane, slot, Place::Region(r), addr, size, false)?;
            }
        }
        Ok(())
    }

    fn atomic(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        use Opcode::*;
        let instr = p.code[pc].instr;
        let op = instr.opcode;
        let wide = matches!(op, ATOM_I64 | ATOM1_RETURN_I64 | ATOM_RETURN_I64);
        let size = if wide { 8 } else { 4 };
        let c = Ctx { m: self, p, pc, lane };
        let addr = c.raw64(0)?.wrapping_add(instr.imm("offset").unwrap_or(0) as u64);
        if addr % size as u64 != 0 {
            return fault(format!("{size}-byte atomic at {addr:#x} is not aligned"));
        }
        let words = |v: u64| -> Vec<u32> { if wide { vec![v as u32, (v >> 32) as u32] } else { vec![v as u32] } };
        let value = |ws: &[u32]| -> u64 { ws.iter().rev().fold(0u64, |acc, &w| acc << 32 | u64::from(w)) };
        let old_bytes = self.memory.read(addr, size)?;
        let old = value(&super::memory::bytes_to_words(&old_bytes));
        let (new, result_group) = match op {
            ATOM1_RETURN_I32 | ATOM1_RETURN_I64 => {
                let one = 1u64;
                let new = match instr.modifier("atomic_operation_with_1").unwrap_or(0) {
                    0 => old.wrapping_add(one),
                    1 => old.wrapping_sub(one),
                    2 => old.max(one),
                    3 => {
                        if wide {
                            (old as i64).max(1) as u64
                        } else {
                            u64::from(((old as u32 as i32).max(1)) as u32)
                        }
                    }
                    4 => old | one,
                    v => return err(ErrorKind::Decode, format!("reserved atomic_operation_with_1 {v}")),
                };
                let group = instr.staging[0];
                (new, if group.count == 0 { None } else { Some(group) })
            }
            _ => {
                let (read_group, result_group) = if matches!(op, ATOM_I32 | ATOM_I64) {
                    (instr.staging[0], None)
                } else {
                    (instr.staging[1], Some(instr.staging[0]))
                };
                let operands = self.read_staging(p, lane, read_group, false)?;
                let n = if wide { 2 } else { 1 };
                let compare = instr.flag("compare").unwrap_or(false);
                let need = if compare { 2 * n } else { n };
                if operands.len() != need {
                    return fault(format!(
                        "{} reads {} staging registers; the operation needs {need}",
                        instr.info().name,
                        operands.len()
                    ));
                }
                let a = value(&operands[..n]);
                let atom_op = instr.modifier("atomic_operation").unwrap_or(0);
                let signed = |v: u64| if wide { v as i64 } else { i64::from(v as u32 as i32) };
                let m = if wide { u64::MAX } else { u64::from(u32::MAX) };
                let new = match (atom_op, compare) {
                    (15, true) => {
                        if old == value(&operands[n..]) {
                            a
                        } else {
                            old
                        }
                    }
                    (_, true) => return err(ErrorKind::Unsupported, ".compare is only defined with axchg"),
                    (2, _) => old.wrapping_add(a),
                    (8, _) => {
                        if signed(a) < signed(old) {
                            a
                        } else {
                            old
                        }
                    }
                    (9, _) => {
                        if signed(a) > signed(old) {
                            a
                        } else {
                            old
                        }
                    }
                    (10, _) => old.min(a),
                    (11, _) => old.max(a),
                    (12, _) => old & a,
                    (13, _) => old | a,
                    (14, _) => old ^ a,
                    (15, _) => a,
                    (v, _) => return err(ErrorKind::Decode, format!("reserved atomic_operation {v}")),
                } & m;
                (new, result_group)
            }
        };
        // A discarded lane's atomic does not update memory; it returns the current value.
        if !self.discarded[lane] {
            let place = self.memory.write(addr, &super::memory::words_to_bytes(&words(new))[..size], 0)?;
            self.track_memory(p, pc, lane, slot, place, addr, size, true)?;
        }
        if let Some(group) = result_group {
            self.write_staging_words(p, pc, lane, group, &words(old), slot)?;
        }
        Ok(())
    }

    fn require_fragment(&self, what: &str) -> Result<(), EmuError> {
        if self.stage != Stage::Fragment {
            return fault(format!("{what} outside a fragment shader"));
        }
        Ok(())
    }

    /// The hidden varying state rules (docs/emulator.md §4.5).
    fn varying_state(&mut self, lane: usize, sample: u8, update: u8) -> Result<(), EmuError> {
        match update {
            0 | 3 => {
                if self.vary_out[lane] != 0 {
                    return err(
                        ErrorKind::Flow,
                        format!(
                            "varying load with .store/.clobber while varying loads on slots {:#05b} are outstanding: wait on them first",
                            self.vary_out[lane]
                        ),
                    );
                }
                self.vary_state[lane] = if update == 0 { Some(sample) } else { None };
            }
            1 => {
                if self.vary_state[lane] != Some(sample) {
                    return err(ErrorKind::Flow, ".retrieve without an earlier .store of the same sample mode");
                }
            }
            _ => return err(ErrorKind::Decode, "reserved update mode"),
        }
        Ok(())
    }

    fn ld_var_buf(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        use Opcode::*;
        self.require_fragment("LD_VAR_BUF")?;
        let instr = p.code[pc].instr;
        let op = instr.opcode;
        let c = Ctx { m: self, p, pc, lane };
        let src0 = c.raw(0)?;
        let offset = match op {
            LD_VAR_BUF_IMM_F32 | LD_VAR_BUF_IMM_F16 => instr.imm("index").unwrap_or(0) as u32,
            _ => c.raw(1)?,
        };
        let sample = instr.modifier("sample_mode").unwrap_or(0);
        let update = instr.modifier("update_mode").unwrap_or(0);
        let format = instr.modifier("source_format").unwrap_or(0);
        let half_regs = matches!(op, LD_VAR_BUF_IMM_F16 | LD_VAR_BUF_F16);
        if format > 3 {
            return err(ErrorKind::Decode, format!("reserved source format {format}"));
        }
        self.varying_state(lane, sample, update)?;
        let n = components(&instr);
        let Some(v) = self.env.varyings.iter().find(|v| v.offset <= offset && offset < v.offset + 16) else {
            return fault(format!("no varying at byte offset {offset} of the record (metadata `varyings`)"));
        };
        if offset % 4 != 0 {
            return fault(format!("varying byte offset {offset} is not a multiple of 4"));
        }
        let first = ((offset - v.offset) / 4) as usize;
        if first + n > 4 {
            return fault(format!("{n} components from byte offset {offset} run past the 16-byte varying slot"));
        }
        let flat = format <= 1;
        if flat != v.flat {
            return fault(format!(
                "the varying at offset {} is {} but the load uses {}",
                v.offset,
                if v.flat { "flat" } else { "interpolated" },
                ["src_flat32", "src_flat16", "src_f32", "src_f16"][usize::from(format)]
            ));
        }
        // The varying model (docs/emulator.md §3.5): centre, centroid and samples coincide.
        let mut words: Vec<u32> = if sample == 3 && !flat {
            super::fragment::at_offset(&v.values, lane, src0)[first..first + n].to_vec()
        } else {
            v.values[lane][first..first + n].to_vec()
        };
        if format % 2 == 1 {
            // binary16 in memory.
            for w in &mut words {
                *w = fp::f16_to_f32_exact(fp::convert(F32, F16, *w, Round::Rte));
            }
        }
        let regs = if half_regs { to_register_format(&words, 3)? } else { words };
        self.write_staging_words(p, pc, lane, instr.staging[0], &regs, slot)?;
        self.vary_out[lane] |= 1 << slot;
        Ok(())
    }

    fn ld_var_special(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        self.require_fragment("LD_VAR_SPECIAL")?;
        let instr = p.code[pc].instr;
        Ctx { m: self, p, pc, lane }.raw(0)?;
        let index = instr.imm("index").unwrap_or(0) as usize;
        let n = components(&instr);
        if index + n > 4 {
            return fault(format!(
                "special varyings {index}..{} do not exist (0 point x, 1 point y, 2 frag w, 3 frag z)",
                index + n
            ));
        }
        let sample = instr.modifier("sample_mode").unwrap_or(0);
        let update = instr.modifier("update_mode").unwrap_or(0);
        self.varying_state(lane, sample, update)?;
        let words = self.env.var_specials[lane][index..index + n].to_vec();
        let regs = to_register_format(&words, instr.modifier("register_format").unwrap_or(0))?;
        self.write_staging_words(p, pc, lane, instr.staging[0], &regs, slot)?;
        self.vary_out[lane] |= 1 << slot;
        Ok(())
    }

    fn ld_attr(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        if self.stage != Stage::Vertex {
            return fault("LD_ATTR outside a vertex shader");
        }
        let instr = p.code[pc].instr;
        let c = Ctx { m: self, p, pc, lane };
        let (vertex, instance) = (c.raw(0)?, c.raw(1)?);
        let (table, index) = if instr.opcode == Opcode::LD_ATTR_IMM {
            (instr.imm("table").unwrap_or(0) as u32, instr.imm("index").unwrap_or(0) as u32)
        } else {
            let h = c.raw(2)?;
            (h >> 24, h & 0xFF_FFFF)
        };
        if table != 1 {
            return fault(format!("attributes live in table 1, not table {table}"));
        }
        let Some(attr) = self.env.attributes.get(&index) else {
            return fault(format!("attribute {index} is not described by the metadata"));
        };
        let matches = |j: usize| self.env.vertex_ids[j] == vertex && self.env.instance_ids[j] == instance;
        let Some(source) = (if matches(lane) { Some(lane) } else { (0..LANES).find(|&j| matches(j)) }) else {
            return fault(format!("no vertex with ID {vertex} and instance {instance} in the emulated draw"));
        };
        let n = components(&instr);
        let words = attr.values[source][..n].to_vec();
        let format = instr.modifier("register_format").unwrap_or(0);
        let regs = to_register_format(&words, format)?;
        self.write_staging_words(p, pc, lane, instr.staging[0], &regs, slot)
    }

    fn atest(&mut self, p: &Program, pc: usize, lane: usize) -> Result<(), EmuError> {
        self.require_fragment("ATEST")?;
        if self.capture.atest[lane] {
            return err(ErrorKind::Flow, "second ATEST in a fragment thread");
        }
        if self.capture.zs_emit[lane] || self.capture.blend[lane] {
            return err(ErrorKind::Flow, "ATEST after ZS_EMIT or BLEND (it must come first)");
        }
        if !matches!(self.prev_flow[lane], Some(FLOW_WAIT0126 | FLOW_WAIT)) {
            return err(ErrorKind::Flow, "ATEST must immediately follow an instruction with .wait0126 (or .wait)");
        }
        let instr = p.code[pc].instr;
        let c = Ctx { m: self, p, pc, lane };
        let coverage = c.raw(0)?;
        c.flt(1)?;
        let datum = c.raw(2)?;
        if datum != super::machine::ATEST_DATUM as u32 {
            return fault("ATEST's third source is not atest_datum.w0");
        }
        self.capture.coverage[lane] = Some(coverage);
        self.capture.atest[lane] = true;
        self.write_staging_words(p, pc, lane, instr.staging[0], &[coverage], 0)
    }

    fn zs_emit(&mut self, p: &Program, pc: usize, lane: usize, slot: u8) -> Result<(), EmuError> {
        self.require_fragment("ZS_EMIT")?;
        if !self.capture.atest[lane] {
            return err(ErrorKind::Flow, "ZS_EMIT before ATEST");
        }
        if self.capture.blend[lane] {
            return err(ErrorKind::Flow, "ZS_EMIT after BLEND");
        }
        if !matches!(self.prev_flow[lane], Some(FLOW_WAIT0126 | FLOW_WAIT)) {
            return err(ErrorKind::Flow, "ZS_EMIT must immediately follow an instruction with .wait0126 (or .wait)");
        }
        let instr = p.code[pc].instr;
        let c = Ctx { m: self, p, pc, lane };
        let (z, stencil) = (instr.flag("z").unwrap_or(false), instr.flag("stencil").unwrap_or(false));
        let depth = if z { Some(c.raw(0)?) } else { None };
        let s = if stencil { Some(c.raw(1)?) } else { None };
        let coverage = c.raw(2)?;
        if let Some(d) = depth {
            self.capture.depth[lane] = Some(d);
        }
        if let Some(s) = s {
            self.capture.stencil[lane] = Some(s);
        }
        self.capture.zs_emit[lane] = true;
        self.write_staging_words(p, pc, lane, instr.staging[0], &[coverage], slot)
    }

    fn blend(&mut self, p: &Program, pc: usize, lane: usize, fx: &mut Effects) -> Result<(), EmuError> {
        self.require_fragment("BLEND")?;
        if !self.capture.atest[lane] {
            return err(ErrorKind::Flow, "BLEND before ATEST");
        }
        if self.prev_flow[lane] != Some(FLOW_WAIT) {
            return err(ErrorKind::Flow, "BLEND must immediately follow an instruction with .wait");
        }
        let instr = p.code[pc].instr;
        let c = Ctx { m: self, p, pc, lane };
        let descriptor = c.raw64(0)?;
        let coverage = c.raw(1)?;
        let word0 = descriptor as u32;
        if word0 & 0xFFFF_FF00 != BLEND_DESCRIPTOR_TAG {
            return fault(format!("BLEND's first source {descriptor:#x} is not a blend descriptor"));
        }
        let rt = word0 & 0xFF;
        let n = components(&instr);
        let format = instr.modifier("register_format").unwrap_or(0);
        let group = instr.staging[0];
        let regs = self.read_staging(p, lane, group, false)?;
        let mut colour = [0, 0, 0, 1.0f32.to_bits()];
        match format {
            0 | 2 | 4 | 6 => {
                if regs.len() != n {
                    return fault(format!("BLEND of {n} 32-bit components reads {} registers", regs.len()));
                }
                colour[..n].copy_from_slice(&regs);
            }
            3 | 5 | 7 => {
                if regs.len() != n.div_ceil(2) {
                    return fault(format!("BLEND of {n} 16-bit components reads {} registers", regs.len()));
                }
                for (i, c) in colour.iter_mut().enumerate().take(n) {
                    let h = (regs[i / 2] >> (16 * (i % 2))) & 0xFFFF;
                    *c = match format {
                        3 => fp::f16_to_f32_exact(h),
                        5 => sext(h, 16) as u32,
                        _ => h,
                    };
                }
            }
            _ => return err(ErrorKind::Decode, format!("reserved register format {format}")),
        }
        if coverage != 0 {
            self.capture.colour.entry(rt).or_insert([None; LANES])[lane] = Some(colour);
        }
        self.capture.blend[lane] = true;
        let target = instr.imm("target").unwrap_or(0) as usize;
        if target != 0 {
            fx.next[lane] = Some(pc + 1 + target);
        }
        Ok(())
    }

    fn barrier(&mut self, p: &Program, pc: usize, active: [bool; LANES]) -> Result<(), EmuError> {
        let instr = p.code[pc].instr;
        if instr.modifier("slot") != Some(7) {
            return err(ErrorKind::Flow, "BARRIER must use slot 7");
        }
        if instr.flow != FLOW_WAIT {
            return err(ErrorKind::Flow, "BARRIER must carry the .wait flow");
        }
        for lane in lanes(active) {
            let busy = self.slots_busy[lane] & 0b111;
            if busy != 0 {
                return Err(EmuError::new(
                    ErrorKind::Flow,
                    format!("BARRIER while messages on slots {busy:#05b} are outstanding: wait for them first"),
                )
                .lane(lane));
            }
            let group = self.env.workgroup[lane];
            if let Some(j) = (0..LANES).find(|&j| {
                !active[j] && self.status[j] == super::machine::Status::Running && self.env.workgroup[j] == group
            }) {
                return Err(EmuError::new(
                    ErrorKind::Flow,
                    format!("divergent barrier: lane {j} of the same workgroup is at instruction {}", self.pc[j]),
                )
                .lane(lane));
            }
        }
        Ok(())
    }
}

/// Bytes accessed by a `LOAD`/`STORE`/`LD_BUFFER` mnemonic.
pub(crate) fn access_bytes(name: &str) -> usize {
    let bits: usize = name.rsplit('i').next().and_then(|s| s.parse().ok()).unwrap_or(32);
    bits / 8
}

fn describe_group(group: Staging) -> String {
    if group.count <= 1 {
        format!("@r{}", group.base)
    } else {
        format!("@r{}..r{}", group.base, group.base + group.count - 1)
    }
}
