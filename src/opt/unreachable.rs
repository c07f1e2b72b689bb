//! Removes blocks the entry cannot reach, with their φ arguments in the blocks they jumped to.

use crate::ir::{Block, InstKind, Shader, Terminator, Value};

pub fn run(shader: &mut Shader) -> bool {
    let n = shader.blocks.len();
    // Straight-line code once `merge_blocks` has merged it (most shaders): the entry ends the
    // shader and nothing jumps to it, so it is the only reachable block. Dropping the others
    // needs no walk and no renumbering (they follow it in the layout).
    if shader.blocks[0].term == Terminator::End && shader.blocks[0].preds.is_empty() {
        if n == 1 {
            return false;
        }
        let Shader { blocks, insts, .. } = shader;
        for id in blocks[1..].iter().flat_map(|b| &b.insts) {
            insts[id.index()].dead = true;
        }
        blocks.truncate(1);
        return true;
    }
    // A block with a predecessor laid out before it is reachable when that one is, so by
    // induction from the entry every block is when each has such a predecessor (straight code
    // and most structured code, as lowering lays it out): no walk needed.
    if shader.blocks.iter().enumerate().skip(1).all(|(b, data)| data.preds.iter().any(|p| p.index() < b)) {
        return false;
    }
    let mut reachable = vec![false; n];
    let mut work = Vec::with_capacity(n);
    work.push(Block(0));
    reachable[0] = true;
    let mut reached = 1;
    while let Some(b) = work.pop() {
        for s in shader.succs(b) {
            if !reachable[s.index()] {
                reachable[s.index()] = true;
                reached += 1;
                work.push(s);
            }
        }
    }
    if reached == n {
        return false;
    }
    // Drop dead predecessors and the matching φ arguments (without copying lists that stay).
    let mut keep: Vec<bool> = Vec::new();
    let mut args: Vec<Value> = Vec::new();
    for b in 0..n {
        if !reachable[b] || shader.blocks[b].preds.iter().all(|p| reachable[p.index()]) {
            continue;
        }
        keep.clear();
        keep.extend(shader.blocks[b].preds.iter().map(|p| reachable[p.index()]));
        for i in 0..shader.blocks[b].insts.len() {
            let id = shader.blocks[b].insts[i];
            let inst = shader.inst(id);
            if inst.dead {
                continue;
            }
            if inst.kind != InstKind::Phi {
                break;
            }
            args.clear();
            args.extend(shader.get(inst.args).iter().zip(&keep).filter(|(_, k)| **k).map(|(a, _)| *a));
            let list = shader.list(&args);
            shader.inst_mut(id).args = list;
        }
        shader.blocks[b].preds.retain(|p| reachable[p.index()]);
    }
    // Remove the dead blocks: move them to the end of the layout, then truncate.
    let order: Vec<Block> = (0..n as u32).map(Block).filter(|b| reachable[b.index()]).collect();
    let live = order.len();
    let Shader { blocks, insts, .. } = shader;
    for (block, _) in blocks.iter_mut().zip(&reachable).filter(|(_, live)| !**live) {
        for id in &block.insts {
            insts[id.index()].dead = true;
        }
        block.preds.clear();
    }
    shader.reorder_blocks(&order);
    shader.blocks.truncate(live);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    #[test]
    fn removes_dead_blocks_and_their_phi_arguments() {
        let mut s = parse(
            "fragment shader\nblock0:\n    %0 = copy #0x1\n    jump block2\nblock1:\n    %1 = copy #0x2\n    jump block2\nblock2:\n    %2 = phi [%0, block0], [%1, block1]\n    end\n",
        )
        .unwrap();
        assert!(run(&mut s));
        assert_eq!(
            print(&s),
            "fragment shader\nblock0:\n    %0 = copy #0x1\n    jump block1\nblock1:                    ; preds: block0\n    %2 = phi [%0, block0]\n    end\n"
        );
        assert!(!run(&mut s));
    }

    /// Reachable blocks are kept whether or not a predecessor comes earlier in the layout
    /// (block 1 is reached only from block 2 here), and a block reached from nothing goes.
    #[test]
    fn blocks_reached_only_from_later_ones_stay() {
        let text = "fragment shader\nblock0:\n    %0 = copy #0x1\n    jump block2\nblock1:\n    %1 = copy #0x2\n    end\nblock2:\n    branch.nz %0, block1, block3\nblock3:\n    end\n";
        let mut s = parse(text).unwrap();
        let before = print(&s);
        assert!(!run(&mut s));
        assert_eq!(print(&s), before);
        let mut s = parse(&text.replace("branch.nz %0, block1, block3", "jump block3")).unwrap();
        assert!(run(&mut s));
        crate::ir::verify::verify(&s).unwrap();
        assert!(!print(&s).contains("#0x2"));
    }

    #[test]
    fn an_entry_that_ends_the_shader_is_all_that_stays() {
        let mut s = parse(
            "fragment shader\nblock0:\n    %0 = copy #0x1\n    end\nblock1:\n    %1 = copy #0x2\n    jump block2\nblock2:\n    %2 = phi [%1, block1]\n    end\n",
        )
        .unwrap();
        assert!(run(&mut s));
        crate::ir::verify::verify(&s).unwrap();
        assert_eq!(print(&s), "fragment shader\nblock0:\n    %0 = copy #0x1\n    end\n");
        assert!(!run(&mut s));
    }
}
