//! Branch materialisation (§B.6): a block whose fall-through successor is not the next block in
//! the layout gets a trampoline block holding an unconditional jump; then every taken edge
//! becomes a `BRANCHZ` at the end of its block (`BRANCHZ.eq cond` for branch-if-zero,
//! `BRANCHZ cond` for non-zero, `BRANCHZ.eq 0x0` for a jump) whose `target` names the block.
//! Offsets (instructions, relative to the next instruction) are filled in by `emit`.

use crate::regalloc::mach::{MachBlock, MachInst, MachShader, MachTerm, Origin};
use crate::valhall::{Base, Instr, Opcode, Src};

fn branchz(cond: Option<u8>, if_zero: bool, target: usize) -> MachInst {
    let mut b = Instr::new(Opcode::BRANCHZ);
    b.srcs[0] = Src::new(match cond {
        Some(r) => Base::Register(r),
        None => Base::Immediate(0),
    });
    let _ = b.set_flag("eq", if_zero || cond.is_none());
    MachInst { instr: b, origin: Origin::Branch, target: Some(target) }
}

pub fn materialize(mach: &mut MachShader) {
    if mach.laid_out {
        return;
    }
    let renumbered = insert_trampolines(mach);
    for i in 0..mach.blocks.len() {
        match mach.blocks[i].term {
            MachTerm::Jump(t) if t != i + 1 => mach.blocks[i].insts.push(branchz(None, true, t)),
            MachTerm::Branch { cond, if_zero, taken, .. } => {
                mach.blocks[i].insts.push(branchz(Some(cond), if_zero, taken));
            }
            _ => {}
        }
    }
    // The branches are instructions: the terminators, and so the predecessors, change only with
    // trampolines.
    if renumbered {
        mach.recompute_preds();
    }
    mach.laid_out = true;
}

/// Puts a trampoline right after every branch block whose fall-through successor is not the
/// next block, renumbering every block reference in one pass. Returns whether it inserted any.
fn insert_trampolines(mach: &mut MachShader) -> bool {
    let needs =
        |i: usize, b: &MachBlock| matches!(b.term, MachTerm::Branch { fallthrough, .. } if fallthrough != i + 1);
    if !mach.blocks.iter().enumerate().any(|(i, b)| needs(i, b)) {
        return false;
    }
    let mut new_index = Vec::with_capacity(mach.blocks.len());
    let mut inserted = 0;
    for (i, b) in mach.blocks.iter().enumerate() {
        new_index.push(i + inserted);
        inserted += usize::from(needs(i, b));
    }
    let old = std::mem::take(&mut mach.blocks);
    mach.blocks.reserve(old.len() + inserted);
    for (i, mut b) in old.into_iter().enumerate() {
        let trampoline = needs(i, &b);
        let f = |t: usize| new_index[t];
        b.term = match b.term {
            MachTerm::Jump(t) => MachTerm::Jump(f(t)),
            MachTerm::Branch { cond, if_zero, taken, fallthrough } => {
                MachTerm::Branch { cond, if_zero, taken: f(taken), fallthrough: f(fallthrough) }
            }
            MachTerm::End => MachTerm::End,
        };
        for inst in &mut b.insts {
            if let Some(t) = inst.target.as_mut() {
                *t = f(*t);
            }
        }
        let loop_depth = b.loop_depth;
        if let MachTerm::Branch { cond, if_zero, taken, fallthrough } = b.term
            && trampoline
        {
            let at = mach.blocks.len() + 1;
            b.term = MachTerm::Branch { cond, if_zero, taken, fallthrough: at };
            mach.blocks.push(b);
            let mut t = MachBlock::new(MachTerm::Jump(fallthrough));
            t.loop_depth = loop_depth;
            mach.blocks.push(t);
        } else {
            mach.blocks.push(b);
        }
    }
    true
}
