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
        let old = std::mem::take(&mut block.insts);
        let mut new: Vec<crate::regalloc::MachInst> = Vec::with_capacity(old.len());
        for mi in old {
            let is_wait_nop = mi.origin == Origin::Flow
                && mi.instr.opcode == Opcode::NOP
                && mi.instr.flow != flows::NONE
                && flows::is_wait_or_none(mi.instr.flow);
            if is_wait_nop
                && let Some(prev) = new.last_mut()
                && flows::is_wait_or_none(prev.instr.flow)
            {
                let mask = flows::mask_of(prev.instr.flow) | flows::mask_of(mi.instr.flow);
                prev.instr.flow = flows::flow_of(mask);
                continue;
            }
            new.push(mi);
        }
        block.insts = new;
    }
}
