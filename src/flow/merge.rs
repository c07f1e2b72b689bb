//! Folding wait NOPs into their neighbours (§B.4), an optimisation over `deps`, applied as
//! `deps` places each wait (so a block's list is rebuilt only for the NOPs that remain):
//!
//! * M1 — a `NOP` carrying only a wait is not added: its wait moves onto the instruction right
//!   before it in the same block, if that instruction's flow is a wait or none; the waits are
//!   unioned (`wait0` ∪ `wait2` = `wait02`; anything with slot 6 becomes `wait0126`, with slot 7
//!   `wait`). The flow of an instruction takes effect after it issues, so the wait still happens
//!   before the instruction that needed it. The wait never moves past that instruction, which
//!   may be the message producing the awaited register.
//! * M2 — a NOP first in its block, or after an instruction with another flow (`.reconverge`,
//!   `.end`, `.discard`), stays.

use super::flows;
use crate::valhall::Instr;

/// Whether a wait before the instruction after `prev` can move onto `prev` (M1).
pub fn can_fold(prev: &Instr) -> bool {
    flows::is_wait_or_none(prev.flow)
}

/// Adds the slots of `mask` to the wait of `prev` (which [`can_fold`] accepted).
pub fn fold(prev: &mut Instr, mask: u8) {
    prev.flow = flows::flow_of(flows::mask_of(prev.flow) | mask);
}
