//! Per-opcode facts that several passes test on every instruction, computed once from the ISA
//! tables into one byte per opcode (one indexed load instead of walking `InstrInfo` each time).

use crate::ir::Inst;
use crate::valhall::tables::INSTRUCTIONS;
use crate::valhall::{Instr, Opcode};
use std::sync::OnceLock;

/// The instruction has an effect besides its definitions ([`Inst::has_side_effects`]).
pub const SIDE_EFFECTS: u8 = 1;
/// A pure single-unit ALU operation without staging operands whose result does not depend on
/// the active lanes: `cse` may merge two equal ones.
pub const PURE_ALU: u8 = 2;
/// No side effects, no staging operands, at least one source: `const_fold` may evaluate it.
pub const FOLDABLE: u8 = 4;
/// An opcode `simplify` has an identity for (the other instructions are skipped unread).
pub const SIMPLIFIABLE: u8 = 8;
/// A load whose only effect is writing its `vector_size` components to its written staging
/// operand: `dce` drops the trailing components nobody reads (varyings, attributes, texels).
pub const NARROWABLE: u8 = 16;

/// The facts of every opcode, indexed by `Opcode as usize`.
pub fn table() -> &'static [u8] {
    static TABLE: OnceLock<Box<[u8]>> = OnceLock::new();
    // `NOP` stands for every pseudo-instruction in the IR (verified), so it has no facts.
    TABLE.get_or_init(|| {
        INSTRUCTIONS.iter().map(|info| if info.opcode == Opcode::NOP { 0 } else { compute(info.opcode) }).collect()
    })
}

/// The facts of an instruction (none for pseudo-instructions).
#[inline]
pub fn of(table: &[u8], inst: &Inst) -> u8 {
    // Pseudo-instructions carry `NOP`, whose facts are none.
    table[inst.mach.opcode as usize]
}

fn compute(op: Opcode) -> u8 {
    let info = op.info();
    let side_effects = Inst::machine(Instr::new(op)).has_side_effects();
    let cross_lane = matches!(
        op,
        Opcode::CLPER_I32
            | Opcode::CLPER_V2U16
            | Opcode::CLPER_V4U8
            | Opcode::CLPER_S32
            | Opcode::CLPER_V2S16
            | Opcode::CLPER_V4S8
            | Opcode::CLPER_U64
            | Opcode::CLPER_S64
            | Opcode::WMASK
    );
    let mut facts = 0;
    if side_effects {
        facts |= SIDE_EFFECTS;
    }
    if info.unit.is_alu() && !side_effects && info.staging.is_empty() && !cross_lane {
        facts |= PURE_ALU;
    }
    if !side_effects && info.staging.is_empty() && !info.srcs.is_empty() {
        facts |= FOLDABLE;
    }
    if super::simplify::has_identities(op) {
        facts |= SIMPLIFIABLE;
    }
    if narrowable(op) {
        facts |= NARROWABLE;
    }
    facts
}

/// The loads of [`NARROWABLE`]. The other instructions with a `vector_size` modifier store
/// (`ST_CVT`, `ST_TILE`, `BLEND`) or compute an address for a store (`LEA_ATTR`, `LEA_TEX`).
fn narrowable(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::LD_VAR_IMM
            | Opcode::LD_VAR
            | Opcode::LD_VAR_FLAT_IMM
            | Opcode::LD_VAR_FLAT
            | Opcode::LD_VAR_SPECIAL
            | Opcode::LD_VAR_BUF_IMM_F32
            | Opcode::LD_VAR_BUF_IMM_F16
            | Opcode::LD_VAR_BUF_F32
            | Opcode::LD_VAR_BUF_F16
            | Opcode::LD_ATTR_IMM
            | Opcode::LD_ATTR
            | Opcode::LD_TEX_IMM
            | Opcode::LD_TEX
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::MachOp;

    #[test]
    fn facts_match_the_tables() {
        let table = table();
        assert_eq!(table.len(), Opcode::ALL.len());
        // `NOP` stands for the pseudo-instructions (no machine `NOP` is in the IR, verified).
        for op in Opcode::ALL.into_iter().filter(|&op| op != Opcode::NOP) {
            let inst = Inst::machine(Instr::new(op));
            let facts = of(table, &inst);
            assert_eq!(facts & SIDE_EFFECTS != 0, inst.has_side_effects(), "{op:?}");
            if facts & PURE_ALU != 0 {
                assert!(op.info().unit.is_alu() && op.info().staging.is_empty(), "{op:?}");
            }
        }
        for op in Opcode::ALL.into_iter().filter(|&op| narrowable(op)) {
            let info = op.info();
            assert!(!Inst::machine(Instr::new(op)).has_side_effects(), "{op:?}");
            assert!(MachOp::new(op).vector_size().is_some(), "{op:?} has no vector_size");
            assert_eq!(info.staging.iter().filter(|s| s.write).count(), 1, "{op:?}");
            assert!(info.staging[0].write && info.dest_registers() == 0, "{op:?}");
        }
        assert_ne!(table[Opcode::FADD_F32 as usize] & PURE_ALU, 0);
        assert_eq!(table[Opcode::CLPER_I32 as usize] & PURE_ALU, 0);
        assert_eq!(of(table, &Inst::pseudo(crate::ir::InstKind::Copy)), 0);
    }
}
