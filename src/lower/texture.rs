//! Lowering of the `texture` opcode family (see docs/lowering.md).

use super::Ctx;
use crate::tgsi::ast::Instruction;
use crate::tgsi::opcodes::Opcode;

/// Lowers `inst` if it belongs to this family; returns whether it did.
pub fn lower(_ctx: &mut Ctx, _inst: &Instruction, _opcode: Opcode) -> bool {
    false
}
