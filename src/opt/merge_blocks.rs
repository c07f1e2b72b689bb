//! Merges a block into its predecessor when it is that block's only successor and has no other
//! predecessor (straight-line code split by lowering, e.g. at a routine's exit). The merged
//! block's φs have one argument and become copies of it. Each block merges at most once per
//! sweep and its instructions move once; sweeps repeat until one merges nothing (so the pass is
//! idempotent). A merged-away block is left without successors, so removing it changes no
//! other block's predecessors: only the removal of blocks unreachable on entry can enable a
//! further merge, and there are at most three sweeps. Linear.

use crate::ir::{Block, InstKind, Operand, Shader, Src, Terminator};

/// Merges to a fixed point (see the module documentation).
pub fn run(shader: &mut Shader) -> bool {
    let mut changed = false;
    while sweep(shader) {
        changed = true;
    }
    changed
}

/// One merging sweep over the layout, then the removal of the blocks it left unreachable.
fn sweep(shader: &mut Shader) -> bool {
    let mut changed = false;
    let mut b = 0;
    while b < shader.blocks.len() {
        let Terminator::Jump(s) = shader.blocks[b].term else {
            b += 1;
            continue;
        };
        if s.index() == b || s == Block(0) || shader.blocks[s.index()].preds.len() != 1 {
            b += 1;
            continue;
        }
        // φs of a single-predecessor block are copies.
        let moved = std::mem::take(&mut shader.blocks[s.index()].insts);
        for &id in &moved {
            let inst = *shader.inst(id);
            if inst.kind == InstKind::Phi {
                let arg = shader.get(inst.args)[0];
                let i = shader.inst_mut(id);
                i.kind = InstKind::Copy;
                i.srcs[0] = Src::new(Operand::Value(arg));
                i.args = crate::ir::ValueList::EMPTY;
            }
        }
        shader.blocks[b].insts.extend(moved);
        let term = shader.blocks[s.index()].term;
        shader.blocks[b].term = term;
        shader.blocks[s.index()].term = Terminator::End;
        shader.blocks[s.index()].preds.clear();
        for succ in term.successors() {
            for p in &mut shader.blocks[succ.index()].preds {
                if *p == s {
                    *p = Block(b as u32);
                }
            }
        }
        changed = true;
        // Stay on `b`: its new successor may merge too.
    }
    if changed {
        super::unreachable::run(shader);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    #[test]
    fn merges_straight_line_chains() {
        let mut s = parse(
            "fragment shader\nblock0:\n    %0 = preload r60\n    jump block1\nblock1:\n    %1 = phi [%0, block0]\n    jump block2\nblock2:\n    %2 = FADD.f32 %1, %1\n    branch.z %2, block4, block3\nblock3:\n    jump block4\nblock4:\n    end\n",
        )
        .unwrap();
        assert!(run(&mut s));
        crate::ir::verify::verify(&s).unwrap();
        assert_eq!(
            print(&s),
            "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = copy %0\n    %2 = FADD.f32 %1, %1\n    branch.z %2, block2, block1\nblock1:                    ; preds: block0\n    jump block2\nblock2:                    ; preds: block0, block1\n    end\n"
        );
    }
}
