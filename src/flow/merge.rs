//! Folding wait NOPs into their neighbours (§B.4), an optimisation over `deps`.
//!
//! * M1 — a `NOP` carrying only a wait is removed and its wait moved onto the instruction right
//!   before it in the same block, if that instruction's flow is a wait or none; the waits are
//!   unioned (`wait0` ∪ `wait2` = `wait02`; anything with slot 6 becomes `wait0126`, with slot 7
//!   `wait`). The flow of an instruction takes effect after it issues, so the wait still happens
//!   before the instruction that needed it. The wait never moves past that instruction, which
//!   may be the message producing the awaited register.
//! * M2 — a NOP first in its block, or after an instruction with another flow (`.reconverge`,
//!   `.end`, `.discard`), stays.

use super::flows;
use crate::regalloc::mach::{MachShader, Origin};
use crate::valhall::Opcode;

pub fn merge(mach: &mut MachShader) {
    for block in &mut mach.blocks {
        // Compaction in place: `kept` instructions stay at the front, a folded NOP is dropped.
        let insts = &mut block.insts;
        let mut kept = 0;
        for k in 0..insts.len() {
            let mi = insts[k];
            let is_wait_nop = mi.origin == Origin::Flow
                && mi.instr.opcode == Opcode::NOP
                && mi.instr.flow != flows::NONE
                && flows::is_wait_or_none(mi.instr.flow);
            if is_wait_nop && kept > 0 && flows::is_wait_or_none(insts[kept - 1].instr.flow) {
                let prev = &mut insts[kept - 1].instr;
                prev.flow = flows::flow_of(flows::mask_of(prev.flow) | flows::mask_of(mi.instr.flow));
                continue;
            }
            insts[kept] = mi;
            kept += 1;
        }
        insts.truncate(kept);
    }
}
