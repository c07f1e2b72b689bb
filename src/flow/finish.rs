//! The last flow decisions, once waits are placed:
//!
//! * F1 — blend calls (§A.6.6): a BLEND followed only by its call pair at the end of an exit
//!   block ends the shader: it carries `.end`, `target:0x0`, and the link register gets 0
//!   (`IADD_IMM.i32 r48, 0x0, #0x0`); every other BLEND skips its call pair (`target:0x2`) and
//!   links to the instruction after it (`IADD_IMM.i32 r48, program_counter.w0, #0x8`).
//! * F2 — `.end` (§A.8, §B.4): on the last instruction of every block without successors;
//!   trailing wait-only NOPs are absorbed (`.end` waits for everything but slot 7); an
//!   instruction whose flow is not a wait, or waits on slot 7 (a barrier), keeps it and a
//!   `NOP.end` follows; an empty exit block gets a `NOP.end` landing pad.
//! * F3 — `.reconverge` (§B.5): on the last instruction of every non-empty block that ends in a
//!   conditional branch, or whose single successor has several predecessors; when that
//!   instruction already has a flow, an ALU instruction hands its wait to the instruction
//!   before it if that one's flow is a wait or none, a branch hands its wait to a NOP before
//!   it, anything else gets a `NOP.reconverge` after it.
//! * F4 — `.discard` and TEX `skip` (§B.7, fragment shaders): an instruction uses helpers if
//!   it is a CLPER or a TEX_SINGLE with computed LOD; blocks using helpers and their ancestors
//!   need helpers. With no such block, `.discard` goes on the first instruction; otherwise after
//!   the last helper use of each block needing helpers whose successors do not, and at the top
//!   of a block (with one predecessor) entered from a block that keeps helpers for its other
//!   successor. `.discard` lands on the instruction itself or the next one without flow, else
//!   on a NOP right after the helper use / at the top of the block (dropped at the end of an
//!   exit block). F4 runs before F3, so a discard NOP ending an otherwise empty block that
//!   falls into a join is followed by a `NOP.reconverge`.
//!   A texture instruction gets `skip` when no helper use depends on its result (backward
//!   propagation over the IR's sources and the conditions of branches that lead to helper
//!   uses).

use super::flows;
use crate::ir::{InstKind, Shader, Stage, Terminator};
use crate::regalloc::mach::{MachInst, MachShader, MachTerm, Origin};
use crate::valhall::tables::INSTRUCTION_COUNT;
use crate::valhall::{Base, Opcode};
use std::sync::LazyLock;

use super::deps::nop;

/// Whether an instruction needs helper lanes (derivatives).
pub fn uses_helpers(opcode: Opcode, mods: &[u8]) -> bool {
    match OPCODE_FACTS[opcode as usize].helpers {
        Helpers::Never => false,
        Helpers::Always => true,
        Helpers::ComputedLod(k) => matches!(mods[usize::from(k)], 1 | 5),
    }
}

/// When an opcode needs helper lanes.
#[derive(Clone, Copy, Debug)]
enum Helpers {
    Never,
    /// CLPER.
    Always,
    /// TEX_SINGLE whose `lod_mode` (modifier index) computes the LOD.
    ComputedLod(u8),
}

/// What the flow rules ask of every instruction, per opcode (looked up once instead of by
/// mnemonic and modifier name for each instruction).
#[derive(Clone, Copy, Debug)]
struct OpcodeFacts {
    helpers: Helpers,
    /// Index of the `skip` modifier.
    skip: Option<u8>,
}

static OPCODE_FACTS: LazyLock<Box<[OpcodeFacts; INSTRUCTION_COUNT]>> = LazyLock::new(|| {
    let mut table = Box::new([OpcodeFacts { helpers: Helpers::Never, skip: None }; INSTRUCTION_COUNT]);
    for op in Opcode::ALL {
        let info = op.info();
        let helpers = match info.mod_index("lod_mode") {
            _ if info.name.starts_with("CLPER") => Helpers::Always,
            Some(k) if op == Opcode::TEX_SINGLE => Helpers::ComputedLod(k as u8),
            _ => Helpers::Never,
        };
        table[op as usize] = OpcodeFacts { helpers, skip: info.mod_index("skip").map(|k| k as u8) };
    }
    table
});

pub fn finish(mach: &mut MachShader, ir: Option<&Shader>) {
    blend_calls(mach);
    if mach.stage == Stage::Fragment {
        if let Some(ir) = ir {
            tex_skip(mach, ir);
        }
    }
    ends(mach);
    // `.discard` may need a NOP of its own, even in an otherwise empty block; reconvergence is
    // decided afterwards so that such a NOP falling into a join carries it.
    if mach.stage == Stage::Fragment {
        discard(mach);
    }
    reconverge(mach);
}

fn ends_with_blend_call(insts: &[MachInst]) -> bool {
    let n = insts.len();
    n >= 3
        && insts[n - 3].instr.opcode == Opcode::BLEND
        && insts[n - 2].origin == Origin::BlendCall
        && insts[n - 1].origin == Origin::BlendCall
}

fn blend_calls(mach: &mut MachShader) {
    for block in &mut mach.blocks {
        let exit = block.term == MachTerm::End;
        let n = block.insts.len();
        // Most blocks have no BLEND: find the first one with a plain scan.
        let Some(first) = block.insts.iter().position(|m| m.instr.opcode == Opcode::BLEND) else { continue };
        for k in first..n {
            if block.insts[k].instr.opcode != Opcode::BLEND || block.insts[k].origin == Origin::BlendCall {
                continue;
            }
            let last = exit && k + 3 == n && ends_with_blend_call(&block.insts);
            let blend = &mut block.insts[k].instr;
            // (Field indices looked up by name once.)
            blend.set_imm_at(blend_target_index(), if last { 0 } else { 2 }).expect("BLEND's target holds 0 and 2");
            if last {
                blend.flow = flows::END;
            }
            if k + 1 < n && block.insts[k + 1].origin == Origin::BlendCall {
                let link = &mut block.insts[k + 1].instr;
                if last {
                    link.srcs[0].base = Base::Immediate(0);
                    // (The link is always `IADD_IMM.i32`: `regalloc::assign` builds the pair.)
                    debug_assert_eq!(link.opcode, Opcode::IADD_IMM_I32);
                    link.set_imm_at(link_constant_index(), 0).expect("IADD_IMM's constant holds 0");
                }
            }
        }
    }
}

/// The index of BLEND's `target` immediate.
fn blend_target_index() -> usize {
    static INDEX: LazyLock<usize> =
        LazyLock::new(|| Opcode::BLEND.info().imm_index("target").expect("BLEND has a target field"));
    *INDEX
}

/// The index of the `constant` immediate of `IADD_IMM.i32` (the blend call's link).
fn link_constant_index() -> usize {
    static INDEX: LazyLock<usize> =
        LazyLock::new(|| Opcode::IADD_IMM_I32.info().imm_index("constant").expect("IADD_IMM.i32 has a constant field"));
    *INDEX
}

fn ends(mach: &mut MachShader) {
    for block in &mut mach.blocks {
        if block.term != MachTerm::End || ends_with_blend_call(&block.insts) {
            continue;
        }
        while block.insts.last().is_some_and(|m| {
            m.origin == Origin::Flow
                && m.instr.opcode == Opcode::NOP
                && flows::is_wait_or_none(m.instr.flow)
                && flows::mask_of(m.instr.flow) & flows::SLOT7 == 0
        }) {
            block.insts.pop();
        }
        match block.insts.last_mut() {
            Some(last)
                if flows::is_wait_or_none(last.instr.flow) && flows::mask_of(last.instr.flow) & flows::SLOT7 == 0 =>
            {
                last.instr.flow = flows::END;
            }
            _ => block.insts.push(MachInst::new(nop(flows::END), Origin::Flow)),
        }
    }
}

fn reconverge(mach: &mut MachShader) {
    let n = mach.blocks.len();
    for b in 0..n {
        let needs = match mach.blocks[b].term {
            MachTerm::Branch { .. } => true,
            MachTerm::Jump(t) => mach.blocks[t].preds.len() > 1,
            MachTerm::End => false,
        };
        let block = &mut mach.blocks[b];
        if !needs || block.insts.is_empty() {
            continue;
        }
        let k = block.insts.len() - 1;
        // A wait on an ALU instruction can move onto the one before it, if that one can take
        // it: waiting one instruction earlier is still after every producer (a message's wait
        // may be for its own slot, so a message keeps its wait).
        if k > 0
            && block.insts[k].origin != Origin::Branch
            && flows::is_wait_or_none(block.insts[k].instr.flow)
            && !super::deps::is_message(&block.insts[k].instr)
            && flows::is_wait_or_none(block.insts[k - 1].instr.flow)
        {
            let mask = flows::mask_of(block.insts[k].instr.flow);
            super::merge::fold(&mut block.insts[k - 1].instr, mask);
            block.insts[k].instr.flow = flows::NONE;
        }
        let last = &mut block.insts[k];
        if last.instr.flow == flows::NONE {
            last.instr.flow = flows::RECONVERGE;
        } else if last.origin == Origin::Branch && flows::is_wait_or_none(last.instr.flow) {
            let wait = last.instr.flow;
            last.instr.flow = flows::RECONVERGE;
            block.insts.insert(k, MachInst::new(nop(wait), Origin::Flow));
        } else {
            block.insts.push(MachInst::new(nop(flows::RECONVERGE), Origin::Flow));
        }
    }
}

/// Blocks that need helper lanes: those using helpers and their ancestors.
fn helper_blocks(mach: &MachShader) -> Vec<bool> {
    let n = mach.blocks.len();
    let mut needs: Vec<bool> =
        mach.blocks.iter().map(|b| b.insts.iter().any(|m| uses_helpers(m.instr.opcode, &m.instr.mods))).collect();
    let mut work: Vec<usize> = (0..n).filter(|&b| needs[b]).collect();
    while let Some(b) = work.pop() {
        for &p in &mach.blocks[b].preds {
            if !needs[p] {
                needs[p] = true;
                work.push(p);
            }
        }
    }
    needs
}

/// Places `.discard` on the first instruction at or after position `at` of block `b` that can
/// carry it; else, with `fallback_nop`, on a NOP inserted at `nop_at` (the flow of an
/// instruction takes effect after it, so a NOP after a helper use goes at its index + 1, which
/// is never past a trailing branch since a helper use is not one).
fn place_discard(mach: &mut MachShader, b: usize, at: usize, nop_at: usize, fallback_nop: bool) {
    let block = &mut mach.blocks[b];
    for k in at..block.insts.len() {
        let m = &block.insts[k];
        if m.instr.flow == flows::NONE && m.origin != Origin::Branch && m.origin != Origin::BlendCall {
            block.insts[k].instr.flow = flows::DISCARD;
            return;
        }
    }
    if fallback_nop {
        let pos = nop_at.min(block.insts.len());
        block.insts.insert(pos, MachInst::new(nop(flows::DISCARD), Origin::Flow));
    }
}

fn discard(mach: &mut MachShader) {
    if mach.inst_count() == 0 {
        return;
    }
    // (Tested before building the per-block table: most programs use no helper.)
    let uses = |m: &MachInst| uses_helpers(m.instr.opcode, &m.instr.mods);
    if !mach.blocks.iter().any(|b| b.insts.iter().any(uses)) {
        // No helper is ever needed: terminate them right away.
        let first = mach.blocks.iter().position(|b| !b.insts.is_empty()).unwrap_or(0);
        place_discard(mach, first, 0, 0, false);
        return;
    }
    let needs = helper_blocks(mach);
    let n = mach.blocks.len();
    let mut tops = Vec::new();
    let mut afters = Vec::new();
    for b in 0..n {
        let succ_need = mach.blocks[b].term.successors().any(|s| needs[s]);
        if needs[b] && !succ_need {
            let last_use = mach.blocks[b].insts.iter().rposition(|m| uses_helpers(m.instr.opcode, &m.instr.mods));
            if let Some(h) = last_use {
                afters.push((b, h));
            }
        }
        // Entered from a block that keeps helpers for its other successor.
        if !needs[b]
            && let [p] = mach.blocks[b].preds[..]
            && needs[p]
            && mach.blocks[p].term.successors().any(|s| needs[s])
        {
            tops.push(b);
        }
    }
    for (b, h) in afters {
        let exit = mach.blocks[b].term == MachTerm::End;
        place_discard(mach, b, h, h + 1, !exit);
    }
    for b in tops {
        let exit = mach.blocks[b].term == MachTerm::End;
        place_discard(mach, b, 0, 0, !exit);
    }
}

fn tex_skip(mach: &mut MachShader, ir: &Shader) {
    let facts = &**OPCODE_FACTS;
    // Most programs have no instruction with a `skip` modifier: nothing to analyse.
    let has_skip = |m: &MachInst| facts[m.instr.opcode as usize].skip.is_some();
    if !mach.blocks.iter().any(|b| b.insts.iter().any(has_skip)) {
        return;
    }
    let nv = ir.values.len();
    let mut required = vec![false; nv];
    let mut work = Vec::new();
    let mut block_uses = vec![false; ir.blocks.len()];
    for (b, block) in ir.blocks.iter().enumerate() {
        for &id in &block.insts {
            let inst = ir.inst(id);
            if !inst.dead && inst.kind == InstKind::Machine && uses_helpers(inst.mach.opcode, &inst.mach.mods) {
                block_uses[b] = true;
                ir.for_each_use(inst, |v| {
                    if !required[v.index()] {
                        required[v.index()] = true;
                        work.push(v);
                    }
                });
            }
        }
    }
    // Branch conditions of blocks from which a helper use is reachable.
    let mut needs = block_uses.clone();
    let mut bw: Vec<usize> = (0..ir.blocks.len()).filter(|&b| needs[b]).collect();
    while let Some(b) = bw.pop() {
        for p in &ir.blocks[b].preds {
            if !needs[p.index()] {
                needs[p.index()] = true;
                bw.push(p.index());
            }
        }
    }
    for (b, block) in ir.blocks.iter().enumerate() {
        if let Terminator::Branch { cond, .. } = block.term
            && needs[b]
            && !required[cond.index()]
        {
            required[cond.index()] = true;
            work.push(cond);
        }
    }
    while let Some(v) = work.pop() {
        let Some(def) = ir.values[v.index()].def else { continue };
        let inst = ir.inst(def);
        ir.for_each_use(inst, |u| {
            if !required[u.index()] {
                required[u.index()] = true;
                work.push(u);
            }
        });
    }
    for block in &mut mach.blocks {
        for m in &mut block.insts {
            let Origin::Ir(id) = m.origin else { continue };
            let Some(skip) = facts[m.instr.opcode as usize].skip else { continue };
            let inst = ir.inst(id);
            let mut exec = false;
            ir.for_each_def(inst, |d| exec |= required[d.index()]);
            m.instr.mods[usize::from(skip)] = u8::from(!exec);
        }
    }
}
