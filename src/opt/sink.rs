//! Sinking of constant-address buffer loads toward their readers.
//!
//! Lowering loads each `CONST` vec4 that has a constant address but no room in the push table
//! once, in the entry block, where the load dominates every reader (`lower::io::constant`).
//! That also keeps the load out of every loop, but in a long shader it keeps all four results
//! live from the entry to the last reader: a shader reading a hundred such constants, each in a
//! few nearby statements, needs a hundred registers for them and spills. This pass moves each
//! such load to the latest block that dominates all its readers and is in no loop, right before
//! its first reader there (at the block's end when its readers are all in later blocks). So a
//! load still runs at most once, and its results live only from the first reader to the last.
//!
//! A candidate is a machine `LD_BUFFER` of a constant buffer (its handle a constant of table 0:
//! memory nothing writes, so moving the load past stores, atomics and barriers is safe) that
//! reads no value (its address is a constant or an FAU word; its results are its written
//! staging vector), in a block outside every loop. A φ reads its argument at the end of the matching predecessor. A load whose
//! readers include an unreachable block stays where it is. The pass changes no edge and no
//! instruction, only where loads sit. It is linear: one walk over the program, a dominance
//! test per read of a candidate, and climbs of the dominator tree whose steps are capped by the
//! program's size (see `run`).

use super::Analyses;
use crate::ir::dom::{DomTree, loop_depths};
use crate::ir::{Block, InstId, InstKind, Operand, Shader, Terminator};

const NONE: u32 = u32::MAX;

/// Whether `inst` is a load this pass may move (see the module documentation).
fn is_candidate(shader: &Shader, id: InstId) -> bool {
    let inst = shader.inst(id);
    !inst.dead
        && inst.is_machine()
        && inst.mach.opcode.is_buffer_load()
        && (0..2).all(|k| inst.staging[k].is_empty() || inst.staging_is_write(k))
        && inst.srcs.iter().all(|s| !matches!(s.operand, Operand::Value(_) | Operand::Pair(..)))
        // Only constant buffers: nothing writes them, so no store, atomic or barrier orders
        // the load (a storage-buffer load must stay before the stores after it).
        && matches!(inst.srcs[1].operand, Operand::Const(h) if crate::valhall::is_constant_buffer_handle(h))
}

/// The nearest dominator of `b` among `m` and its dominators (both reachable): `m` itself when
/// it dominates `b` (one test), else found by climbing from `m`, at most `*steps` steps (each
/// taken one is subtracted); `None` when they run out.
fn meet(dom: &DomTree, mut m: Block, b: Block, steps: &mut usize) -> Option<Block> {
    while !dom.dominates(m, b) {
        *steps = steps.checked_sub(1)?;
        m = dom.idom(m)?;
    }
    Some(m)
}

/// Moves the candidate loads (see the module documentation); whether any moved.
pub fn run(shader: &mut Shader, analyses: &mut Analyses) -> bool {
    // The candidates and, per value, the candidate defining it.
    let mut candidates: Vec<(InstId, Block)> = Vec::new();
    for (b, block) in shader.blocks.iter().enumerate() {
        for &id in &block.insts {
            if is_candidate(shader, id) {
                candidates.push((id, Block(b as u32)));
            }
        }
    }
    if candidates.is_empty() {
        return false;
    }
    let dom = analyses.dom(shader);
    let depths = loop_depths(shader, dom);
    candidates.retain(|&(_, b)| dom.is_reachable(b) && depths[b.index()] == 0);
    let mut candidate_of = vec![NONE; shader.values.len()];
    for (c, &(id, _)) in candidates.iter().enumerate() {
        shader.for_each_def(shader.inst(id), |v| candidate_of[v.index()] = c as u32);
    }
    // The nearest common dominator of each candidate's reading blocks (`None`: no reader yet);
    // `stay` when a reader is unreachable. A common dominator only climbs, one step at a time,
    // and the steps of all candidates together are capped by the program's size, so that the
    // pass stays linear however deep the dominator tree (a long run of `IF`s makes it deep): a
    // candidate whose climb would exceed the cap stays where it is.
    let mut common: Vec<Option<Block>> = vec![None; candidates.len()];
    let mut stay = vec![false; candidates.len()];
    let mut steps = 4 * (shader.blocks.len() + shader.insts.len());
    let mut read_in = |c: u32, b: Block, common: &mut Vec<Option<Block>>| {
        let c = c as usize;
        if stay[c] || !dom.is_reachable(b) {
            stay[c] = true;
            return;
        }
        match common[c].map_or(Some(b), |m| meet(dom, m, b, &mut steps)) {
            Some(m) => common[c] = Some(m),
            None => stay[c] = true,
        }
    };
    for (b, block) in shader.blocks.iter().enumerate() {
        let here = Block(b as u32);
        for &id in &block.insts {
            let inst = shader.inst(id);
            if inst.dead {
                continue;
            }
            if inst.kind == InstKind::Phi {
                for (&arg, &pred) in shader.get(inst.args).iter().zip(&block.preds) {
                    if candidate_of[arg.index()] != NONE {
                        read_in(candidate_of[arg.index()], pred, &mut common);
                    }
                }
            } else {
                shader.for_each_use(inst, |v| {
                    if candidate_of[v.index()] != NONE {
                        read_in(candidate_of[v.index()], here, &mut common);
                    }
                });
            }
        }
        if let Terminator::Branch { cond, .. } = block.term
            && candidate_of[cond.index()] != NONE
        {
            read_in(candidate_of[cond.index()], here, &mut common);
        }
    }
    // Each candidate's block: the latest dominator of its readers outside every loop, found by
    // climbing from their common dominator (the load's own block qualifies, so the climb ends).
    let mut target = vec![NONE; candidates.len()];
    let mut touched: Vec<Block> = Vec::new();
    for (c, &(_, home)) in candidates.iter().enumerate() {
        let Some(mut t) = common[c].filter(|_| !stay[c]) else { continue };
        while depths[t.index()] != 0 {
            t = dom.idom(t).unwrap_or(home);
        }
        target[c] = t.0;
        touched.extend([home, t]);
    }
    touched.sort_unstable();
    touched.dedup();
    // Rebuild the touched blocks: a moving load is dropped where it was and put before the
    // first instruction of its new block that reads it, else at the block's end.
    let mut by_target: Vec<(u32, usize)> =
        (0..candidates.len()).filter(|&c| target[c] != NONE).map(|c| (target[c], c)).collect();
    by_target.sort_unstable();
    let mut placed = vec![false; candidates.len()];
    let mut changed = false;
    for &b in &touched {
        let old = std::mem::take(&mut shader.blocks[b.index()].insts);
        let mut new = Vec::with_capacity(old.len() + 4);
        let moving_here = |v: crate::ir::Value| {
            let c = candidate_of[v.index()];
            (c != NONE && target[c as usize] == b.0).then_some(c as usize)
        };
        for &id in &old {
            let inst = shader.inst(id);
            if !inst.dead {
                // A moving load leaves its old place (its new block puts it back).
                let mut own = NONE;
                shader.for_each_def(inst, |d| own = candidate_of[d.index()]);
                if own != NONE && candidates[own as usize].0 == id && target[own as usize] != NONE {
                    continue;
                }
                if inst.kind != InstKind::Phi {
                    shader.for_each_use(inst, |v| {
                        if let Some(c) = moving_here(v)
                            && !placed[c]
                        {
                            placed[c] = true;
                            new.push(candidates[c].0);
                        }
                    });
                }
            }
            new.push(id);
        }
        let first = by_target.partition_point(|&(t, _)| t < b.0);
        for &(t, c) in &by_target[first..] {
            if t != b.0 {
                break;
            }
            if !placed[c] {
                placed[c] = true;
                new.push(candidates[c].0);
            }
        }
        changed |= new != old;
        shader.blocks[b.index()].insts = new;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    fn sunk(text: &str) -> String {
        let mut s = parse(text).unwrap();
        run(&mut s, &mut Analyses::default());
        crate::ir::verify::verify(&s).unwrap();
        print(&s)
    }

    /// The pass finds nothing to move in `text` and leaves it as it was.
    fn assert_stays(text: &str) {
        let mut s = parse(text).unwrap();
        assert!(!run(&mut s, &mut Analyses::default()));
        assert_eq!(print(&s), text);
    }

    /// Straight-line code: the load moves down to its first reader.
    #[test]
    fn a_load_moves_to_its_first_reader() {
        let text = "compute shader\nblock0:\n    %0 = preload r60\n    %1, %2, %3, %4 = LD_BUFFER.i128.unsigned.slot0 #0x1E0, #0x0\n    %5 = IADD.s32 %0, #0x1\n    %6 = IADD.s32 %5, %2\n    STORE.i32.slot0 @%6, %0:%0, offset:0\n    end\n";
        assert_eq!(
            sunk(text),
            "compute shader\nblock0:\n    %0 = preload r60\n    %5 = IADD.s32 %0, #0x1\n    %1, %2, %3, %4 = LD_BUFFER.i128.unsigned.slot0 #0x1E0, #0x0\n    %6 = IADD.s32 %5, %2\n    STORE.i32.slot0 @%6, %0:%0, offset:0\n    end\n"
        );
    }

    /// Read only in the `then` block: the load moves there.
    #[test]
    fn a_load_read_in_one_branch_moves_into_it() {
        let text = "compute shader\nblock0:\n    %0 = preload r60\n    %1, %2, %3, %4 = LD_BUFFER.i128.unsigned.slot0 #0x1E0, #0x0\n    branch.z %0, block2, block1\nblock1:\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    jump block2\nblock2:\n    end\n";
        let out = sunk(text);
        let (entry, rest) = out.split_once("block1:").unwrap();
        assert!(!entry.contains("LD_BUFFER") && rest.contains("LD_BUFFER"), "{out}");
    }

    /// Read only inside a loop: the load stays before the loop (it would run every iteration).
    #[test]
    fn a_load_is_not_moved_into_a_loop() {
        let text = "compute shader\nblock0:\n    %0 = preload r60\n    %1, %2, %3, %4 = LD_BUFFER.i128.unsigned.slot0 #0x1E0, #0x0\n    %9 = IADD.s32 %0, #0x1\n    jump block1\nblock1:\n    %5 = phi [%0, block0], [%6, block1]\n    %6 = IADD.s32 %5, %1\n    STORE.i32.slot0 @%6, %0:%0, offset:0\n    branch.z %6, block2, block1\nblock2:\n    end\n";
        let out = sunk(text);
        let (entry, rest) = out.split_once("block1:").unwrap();
        assert!(entry.contains("LD_BUFFER") && !rest.contains("LD_BUFFER"), "{out}");
        // It went to the end of the entry block, after the unrelated add.
        assert!(entry.find("IADD").unwrap() < entry.find("LD_BUFFER").unwrap(), "{out}");
    }

    /// Readers in both branches: the load stays in the block that dominates both, at its end.
    #[test]
    fn a_load_read_in_both_branches_stays_above_them() {
        let text = "compute shader\nblock0:\n    %0 = preload r60\n    %1, %2, %3, %4 = LD_BUFFER.i128.unsigned.slot0 #0x1E0, #0x0\n    %9 = IADD.s32 %0, #0x1\n    branch.z %0, block2, block1\nblock1:\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    jump block3\nblock2:\n    STORE.i32.slot0 @%4, %9:%9, offset:0\n    jump block3\nblock3:\n    end\n";
        let out = sunk(text);
        let (entry, _) = out.split_once("block1:").unwrap();
        assert!(entry.find("IADD").unwrap() < entry.find("LD_BUFFER").unwrap(), "{out}");
    }

    /// A storage-buffer load (table 6) is not a candidate: the store after it writes the
    /// memory it reads.
    #[test]
    fn a_storage_buffer_load_stays_before_a_store() {
        let text = "compute shader\nblock0:\n    %0 = preload r60\n    %1, %2, %3, %4 = LD_BUFFER.i128.unsigned.slot0 #0x0, #0x6000000\n    STORE.i32.slot0 @%0, %0:%0, offset:0\n    %6 = IADD.s32 %0, %2\n    STORE.i32.slot0 @%6, %0:%0, offset:0\n    end\n";
        assert_stays(text);
    }

    /// A load that reads a value is not a candidate.
    #[test]
    fn a_load_with_a_computed_address_stays() {
        let text = "compute shader\nblock0:\n    %0 = preload r60\n    %1, %2, %3, %4 = LD_BUFFER.i128.unsigned.slot0 %0, #0x0\n    %5 = IADD.s32 %0, #0x1\n    %6 = IADD.s32 %5, %2\n    STORE.i32.slot0 @%6, %0:%0, offset:0\n    end\n";
        assert_stays(text);
    }
}
