//! Block order for reconvergence (part of `prepare`).
//!
//! The hardware (and the emulator) runs the lanes at the lowest program counter first, so
//! divergent lanes meet again at a block only if every block that can still reach it lies
//! before it in the layout. This pass establishes that for loops:
//!
//! 1. **One latch per loop.** A loop whose header is entered by back edges from several blocks
//!    (a `CONT` besides the loop end) gets a new latch block: every back edge goes to it and it
//!    jumps to the header; the header's φs take their back-edge arguments through new φs in the
//!    latch. Lanes that continue early wait at the latch for the others, as TGSI's `CONT`
//!    requires (continued lanes are parked until the loop end).
//! 2. **Loops are contiguous.** Blocks are placed in a base order (the IR order when every
//!    forward edge goes forward in it, as lowering produces and block merging keeps; else the
//!    reverse post-order), except that the blocks of each natural loop are gathered right after
//!    its header and the latch made by step 1 comes last. A block outside the loop (a loop exit
//!    merged into the block that breaks) is thus placed after the loop, where lanes that left
//!    wait until the loop is done.
//!
//! Invariants afterwards: forward edges go forward in the returned order, each loop occupies a
//! contiguous range starting at its header, and a loop with several back edges before this
//! pass has exactly one, from the last block of its range. Cost: the sum of the loop sizes
//! (blocks × nesting depth) plus the size of the shader.

use crate::ir::dom::DomTree;
use crate::ir::{Block, Inst, InstKind, Shader, Terminator, Value};

/// Adds latches (step 1) and returns the reachable blocks, latches included, in layout order.
pub fn layout(shader: &mut Shader, dom: &DomTree) -> Vec<Block> {
    let n = shader.blocks.len();
    // Innermost loop (by header) of each block, and the loop enclosing each header's loop.
    let mut inner: Vec<Option<Block>> = vec![None; n];
    let mut parent: Vec<Option<Block>> = vec![None; n];
    let mut is_header = vec![false; n];
    let mut stamp = vec![0u32; n];
    let mut generation = 0;
    let mut work = Vec::new();
    // Outer headers come first in reverse post-order, so inner loops overwrite `inner` later.
    for &h in &dom.rpo {
        work.extend(shader.block(h).preds.iter().copied().filter(|&p| dom.dominates(h, p)));
        if work.is_empty() {
            continue;
        }
        generation += 1;
        is_header[h.index()] = true;
        parent[h.index()] = inner[h.index()];
        inner[h.index()] = Some(h);
        stamp[h.index()] = generation;
        while let Some(b) = work.pop() {
            if stamp[b.index()] == generation {
                continue;
            }
            stamp[b.index()] = generation;
            inner[b.index()] = Some(h);
            work.extend(shader.block(b).preds.iter().copied().filter(|p| dom.is_reachable(*p)));
        }
    }

    let base = base_order(shader, dom);
    if generation == 0 {
        // No loop: the base order as it is.
        return base;
    }

    let mut latches = Vec::new();
    for &h in &dom.rpo {
        if is_header[h.index()]
            && let Some(latch) = add_latch(shader, dom, h)
        {
            latches.push((h, latch));
        }
    }

    // Members of each region in base order: index `n` is the top level, `h` the loop headed by h
    // (h itself first). A header also stands for its whole loop in its parent's list.
    let slot = |region: Option<Block>| region.map_or(n, |h| h.index());
    let mut members: Vec<Vec<Block>> = vec![Vec::new(); n + 1];
    for &b in &base {
        if is_header[b.index()] {
            members[slot(parent[b.index()])].push(b);
        }
        members[slot(inner[b.index()])].push(b);
    }
    for (h, latch) in latches {
        members[h.index()].push(latch);
    }

    let mut order = Vec::with_capacity(shader.blocks.len());
    // (region, index of its next member)
    let mut stack = vec![(n, 0usize)];
    while let Some(top) = stack.len().checked_sub(1) {
        let (region, next) = stack[top];
        let Some(&b) = members[region].get(next) else {
            stack.pop();
            continue;
        };
        stack[top].1 += 1;
        if b.index() < n && is_header[b.index()] && b.index() != region {
            stack.push((b.index(), 0));
        } else {
            order.push(b);
        }
    }
    order
}

/// The IR order of the reachable blocks if every forward (non-back) edge goes forward in it,
/// else the reverse post-order.
fn base_order(shader: &Shader, dom: &DomTree) -> Vec<Block> {
    let ir: Vec<Block> = (0..shader.blocks.len() as u32).map(Block).filter(|&b| dom.is_reachable(b)).collect();
    let mut position = vec![usize::MAX; shader.blocks.len()];
    for (k, b) in ir.iter().enumerate() {
        position[b.index()] = k;
    }
    let forward =
        ir.iter().all(|&b| shader.succs(b).all(|s| dom.dominates(s, b) || position[s.index()] > position[b.index()]));
    if forward { ir } else { dom.rpo.clone() }
}

/// Routes the back edges into `header` through a new latch block when they come from more than
/// one block; returns the latch.
fn add_latch(shader: &mut Shader, dom: &DomTree, header: Block) -> Option<Block> {
    let preds = shader.block(header).preds.clone();
    let back: Vec<bool> = preds.iter().map(|&p| dom.dominates(header, p)).collect();
    let mut sources: Vec<Block> = preds.iter().zip(&back).filter(|(_, b)| **b).map(|(p, _)| *p).collect();
    let back_preds = sources.clone();
    sources.sort_unstable();
    sources.dedup();
    if sources.len() < 2 {
        return None;
    }
    let latch = shader.add_block();
    let phis: Vec<_> = shader.block_insts(header).filter(|&id| shader.inst(id).kind == InstKind::Phi).collect();
    for id in phis {
        let args: Vec<Value> = shader.get(shader.inst(id).args).to_vec();
        let from_back: Vec<Value> = args.iter().zip(&back).filter(|(_, b)| **b).map(|(a, _)| *a).collect();
        // A dead φ only needs one argument per predecessor.
        let merged = if shader.inst(id).dead {
            from_back[0]
        } else {
            let mut phi = Inst::pseudo(InstKind::Phi);
            phi.dests = shader.new_values(1);
            phi.args = shader.list(&from_back);
            let latch_phi = shader.push(latch, phi);
            shader.get(shader.inst(latch_phi).dests)[0]
        };
        let mut kept: Vec<Value> = args.iter().zip(&back).filter(|(_, b)| !**b).map(|(a, _)| *a).collect();
        kept.push(merged);
        let list = shader.list(&kept);
        shader.inst_mut(id).args = list;
    }
    for &p in &sources {
        let retarget = |b: Block| if b == header { latch } else { b };
        let term = &mut shader.block_mut(p).term;
        *term = match *term {
            Terminator::Jump(t) => Terminator::Jump(retarget(t)),
            Terminator::Branch { cond, if_zero, taken, fallthrough } => {
                Terminator::Branch { cond, if_zero, taken: retarget(taken), fallthrough: retarget(fallthrough) }
            }
            Terminator::End => Terminator::End,
        };
    }
    let mut header_preds: Vec<Block> = preds.iter().zip(&back).filter(|(_, b)| !**b).map(|(p, _)| *p).collect();
    header_preds.push(latch);
    shader.block_mut(header).preds = header_preds;
    let latch_data = shader.block_mut(latch);
    latch_data.preds = back_preds;
    latch_data.term = Terminator::Jump(header);
    Some(latch)
}
