//! Folding wait NOPs into their neighbours (§B.4), an optimisation over `deps`, applied as
//! `deps` places each wait (so a block's list is rebuilt once):
//!
//! * M1 — a `NOP` carrying only a wait is not added: its wait moves onto the instruction right
//!   before it in the same block, if that instruction's flow is a wait or none; the waits are
//!   unioned (`wait0` ∪ `wait2` = `wait02`; anything with slot 6 becomes `wait0126`, with slot 7
//!   `wait`). The flow of an instruction takes effect after it issues, so the wait still happens
//!   before the instruction that needed it. The wait never moves past that instruction, which
//!   may be the message producing the awaited register.
//! * M2 — a NOP first in its block, or after an instruction with another flow (`.reconverge`,
//!   `.end`, `.discard`), stays.

use super::deps::nop;
use super::flows;
use crate::regalloc::mach::{MachInst, Origin};

/// Appends a wait for the slots of `mask` (not 0) to a block's instruction list being built:
/// on the last instruction (M1) or as a NOP (M2).
pub fn push_wait(insts: &mut Vec<MachInst>, mask: u8) {
    match insts.last_mut() {
        Some(prev) if flows::is_wait_or_none(prev.instr.flow) => {
            prev.instr.flow = flows::flow_of(flows::mask_of(prev.instr.flow) | mask);
        }
        _ => insts.push(MachInst::new(nop(flows::flow_of(mask)), Origin::Flow)),
    }
}
