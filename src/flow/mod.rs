//! Flow control after register allocation: branches, dependency waits, reconvergence, helper
//! termination and the end of the program.
//!
//! ```text
//!  MachShader ─layout (branches, trampolines)─►
//!             ─deps (slots, wait NOPs: correctness; merge folds each into its neighbour)─►
//!             ─finish (.reconverge, .discard, TEX skip, .end, blend return addresses)─► MachShader
//! ```
//!
//! The rules, each with its source in `valhall-abi-and-lowering.md`, are listed in
//! `docs/backend.md` ("Flow rules") and at the top of each pass.

pub mod deps;
pub mod finish;
pub mod layout;
pub mod merge;

use crate::regalloc::MachShader;

/// Flow field values (indices of the ISA's `flow` enum).
pub mod flows {
    pub const NONE: u8 = 0;
    pub const WAIT0126: u8 = 8;
    pub const WAIT: u8 = 9;
    pub const RECONVERGE: u8 = 10;
    pub const DISCARD: u8 = 13;
    pub const END: u8 = 15;

    /// Slot mask bits: 0–2 general slots, bit 3 slot 6, bit 4 slot 7.
    pub const SLOT6: u8 = 1 << 3;
    pub const SLOT7: u8 = 1 << 4;

    /// Whether a flow value is a wait (or none).
    pub fn is_wait_or_none(flow: u8) -> bool {
        flow <= WAIT
    }

    /// The slots a flow value waits for.
    pub fn mask_of(flow: u8) -> u8 {
        match flow {
            1..=7 => flow,
            WAIT0126 => 0b111 | SLOT6,
            WAIT => 0b111 | SLOT6 | SLOT7,
            _ => 0,
        }
    }

    /// The smallest flow value waiting for at least the slots of `mask`.
    pub fn flow_of(mask: u8) -> u8 {
        if mask & SLOT7 != 0 {
            WAIT
        } else if mask & SLOT6 != 0 {
            WAIT0126
        } else {
            mask & 0b111
        }
    }
}

/// Runs every flow pass. `ir` is the IR the program was allocated from (for the helper and
/// TEX `skip` analyses); `None` skips them (`skip` stays clear, `.discard` on the first
/// instruction of fragment shaders is then not placed).
pub fn run(mach: &mut MachShader, ir: Option<&crate::ir::Shader>) {
    layout::materialize(mach);
    deps::insert(mach);
    finish::finish(mach, ir);
}
