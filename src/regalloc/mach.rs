//! The machine program: what register allocation produces and every later pass works on.
//!
//! A [`MachShader`] is a list of [`MachBlock`]s in layout order (block 0 is the entry). Each block
//! holds [`valhall::Instr`]s on physical registers and ends in a symbolic [`MachTerm`].
//!
//! Invariants (checked by [`super::check`] in tests and debug builds, relied on by `flow` and
//! `emit`):
//! * every instruction is valid for [`valhall::encode`] except for its flow (set by `flow`) and,
//!   for branches, its offset (set at layout from [`MachInst::target`]);
//! * registers lie in the allowed set of the mode ([`MachShader::work_registers`] 32 ⇒ r0–r15 ∪
//!   r48–r63 only);
//! * until [`crate::flow`] materialises them, control flow is only in the terminators: no block
//!   holds a `BRANCHZ`; after it, a block ends with at most one `BRANCHZ` whose `target` names the
//!   destination block, and [`MachBlock::term`] still describes the successors;
//! * `preds` lists the predecessors of each block (recomputed by [`MachShader::recompute_preds`]
//!   whenever terminators change).

use crate::ir::{InstId, Stage, Value};
use crate::valhall::Instr;

/// A physical register number (0–63).
pub type Reg = u8;

/// Where a machine instruction came from (for the checker, statistics and flow rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The IR instruction (machine instruction, or a materialised `copy`).
    Ir(InstId),
    /// A register move lowered from a parallel copy (live-range split, φ resolution).
    Move,
    /// The first instruction of an XOR swap of two registers (a parallel-copy cycle without a
    /// free register); the next two instructions are [`Origin::SwapTail`].
    Swap(Reg, Reg),
    /// The second and third instructions of an XOR swap.
    SwapTail,
    /// The blend-shader call pair after a `BLEND` (`IADD_IMM r48`, `BRANCHZI`).
    BlendCall,
    /// A branch materialised at layout.
    Branch,
    /// A `NOP` carrying flow (waits, `.end`, `.reconverge`, `.discard`).
    Flow,
}

/// One machine instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MachInst {
    pub instr: Instr,
    pub origin: Origin,
    /// Destination block of a materialised branch (its offset is computed at layout).
    pub target: Option<usize>,
}

impl MachInst {
    pub fn new(instr: Instr, origin: Origin) -> MachInst {
        MachInst { instr, origin, target: None }
    }
}

/// How a block ends, with block indices of the machine program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MachTerm {
    /// Continue at the block (falls through when it is the next block).
    Jump(usize),
    /// Go to `taken` when register `cond` is zero (`if_zero`) or non-zero, else to
    /// `fallthrough`.
    Branch { cond: Reg, if_zero: bool, taken: usize, fallthrough: usize },
    /// End of the shader.
    End,
}

impl MachTerm {
    pub fn successors(&self) -> impl Iterator<Item = usize> {
        let (a, b) = match *self {
            MachTerm::Jump(t) => (Some(t), None),
            MachTerm::Branch { taken, fallthrough, .. } => (Some(taken), Some(fallthrough)),
            MachTerm::End => (None, None),
        };
        a.into_iter().chain(b)
    }
}

/// A block of the machine program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachBlock {
    pub insts: Vec<MachInst>,
    pub term: MachTerm,
    pub preds: Vec<usize>,
    /// Where each live-in value (φ results included) is at the top of the block.
    pub live_in: Vec<(Value, Reg)>,
    /// The IR block this block comes from (`None` for blocks made by edge splitting or layout).
    pub ir_block: Option<u32>,
    /// Loop nesting depth (for statistics and spill costs).
    pub loop_depth: u32,
}

impl MachBlock {
    pub fn new(term: MachTerm) -> MachBlock {
        MachBlock { insts: Vec::new(), term, preds: Vec::new(), live_in: Vec::new(), ir_block: None, loop_depth: 0 }
    }
}

/// The machine program of one variant and what the allocator found out about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MachShader {
    pub stage: Stage,
    pub blocks: Vec<MachBlock>,
    /// 32 (only r0–r15 and r48–r63 are used) or 64.
    pub work_registers: u32,
    /// Bit k: r(48+k) must be preloaded.
    pub preload: u16,
    /// Spill stores and fills inserted.
    pub spills: u32,
    pub fills: u32,
    /// Bytes of thread-local storage (the caller's scratch plus spill slots).
    pub tls_size: u32,
    /// Natural loops of the program.
    pub loops: u32,
    /// Whether branches have been materialised (see the module invariants).
    pub laid_out: bool,
}

impl MachShader {
    /// Recomputes every block's predecessor list from the terminators.
    pub fn recompute_preds(&mut self) {
        for b in &mut self.blocks {
            b.preds.clear();
        }
        for i in 0..self.blocks.len() {
            let term = self.blocks[i].term;
            for s in term.successors() {
                self.blocks[s].preds.push(i);
            }
        }
    }

    /// Number of instructions.
    pub fn inst_count(&self) -> usize {
        self.blocks.iter().map(|b| b.insts.len()).sum()
    }

    /// The program as text, one block per paragraph (for debugging and tests).
    pub fn print(&self) -> String {
        let mut out = String::new();
        for (i, b) in self.blocks.iter().enumerate() {
            out.push_str(&format!("block{i}:\n"));
            for inst in &b.insts {
                out.push_str("    ");
                out.push_str(&crate::valhall::print(&inst.instr));
                if let Some(t) = inst.target {
                    out.push_str(&format!("  -> block{t}"));
                }
                out.push('\n');
            }
            match b.term {
                MachTerm::Jump(t) => out.push_str(&format!("    ; jump block{t}\n")),
                MachTerm::Branch { cond, if_zero, taken, fallthrough } => out.push_str(&format!(
                    "    ; branch.{} r{cond}, block{taken}, block{fallthrough}\n",
                    if if_zero { "z" } else { "nz" }
                )),
                MachTerm::End => out.push_str("    ; end\n"),
            }
        }
        out
    }
}

/// Register sets as bit masks.
pub mod regs {
    /// All 64 registers.
    pub const ALL: u64 = u64::MAX;
    /// The 32-register mode: r0–r15 and r48–r63.
    pub const SPLIT32: u64 = 0xFFFF | (0xFFFF << 48);
    /// Registers a blend shader may clobber: r0–r15 and r48.
    pub const BLEND_CLOBBER: u64 = 0xFFFF | (1 << 48);

    pub fn bit(r: u8) -> u64 {
        1u64 << r
    }

    /// `n` registers from `base`, or `None` if they run past r63.
    pub fn range(base: u8, n: u8) -> Option<u64> {
        if u32::from(base) + u32::from(n) > 64 {
            return None;
        }
        if n == 0 {
            return Some(0);
        }
        Some((u64::MAX >> (64 - u32::from(n))) << base)
    }
}
