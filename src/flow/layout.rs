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
    // Trampolines for fall-through edges that do not fall through.
    let mut i = 0;
    while i < mach.blocks.len() {
        if let MachTerm::Branch { cond, if_zero, taken, fallthrough } = mach.blocks[i].term
            && fallthrough != i + 1
        {
            let at = i + 1;
            shift_targets(mach, at);
            let fallthrough = if fallthrough >= at { fallthrough + 1 } else { fallthrough };
            let taken = if taken >= at { taken + 1 } else { taken };
            let mut t = MachBlock::new(MachTerm::Jump(fallthrough));
            t.loop_depth = mach.blocks[i].loop_depth;
            mach.blocks.insert(at, t);
            mach.blocks[i].term = MachTerm::Branch { cond, if_zero, taken, fallthrough: at };
        }
        i += 1;
    }
    for i in 0..mach.blocks.len() {
        match mach.blocks[i].term {
            MachTerm::Jump(t) if t != i + 1 => mach.blocks[i].insts.push(branchz(None, true, t)),
            MachTerm::Branch { cond, if_zero, taken, .. } => {
                mach.blocks[i].insts.push(branchz(Some(cond), if_zero, taken));
            }
            _ => {}
        }
    }
    mach.recompute_preds();
    mach.laid_out = true;
}

/// Renumbers block references for a block inserted at `at`.
fn shift_targets(mach: &mut MachShader, at: usize) {
    let f = |t: usize| if t >= at { t + 1 } else { t };
    for b in &mut mach.blocks {
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
    }
}
