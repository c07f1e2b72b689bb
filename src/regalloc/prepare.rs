//! Preparation of the IR for assignment (on the allocator's own copy of the shader):
//!
//! 1. unreachable blocks are dropped from the layout and from predecessor lists (with their φ
//!    arguments);
//! 2. `preload` instructions move to the top of the entry block (the hardware fills the
//!    registers before the first instruction), and a second preload of the same register
//!    becomes a use of the first;
//! 3. loops with several back edges get one latch block, and loops are laid out contiguously
//!    with their exits after them (`loops.rs`), so divergent lanes reconverge;
//! 4. critical edges (from a block with two successors to a block with two or more
//!    predecessors) are split, so that every edge that may need copies (φ resolution, moved
//!    live ranges) has a block of its own to hold them. A new block for a fall-through edge is
//!    placed right after its source; one for a taken edge right before its target, as Mesa lays
//!    out `if`/`else`. Blocks that end up empty are removed again after assignment.
//!
//! Linear in the size of the shader, except step 3 (the sum of the loop sizes).

use crate::ir::dom::DomTree;
use crate::ir::{Block, InstId, InstKind, Operand, Shader, Terminator, Value};
use smallvec::SmallVec;

/// The prepared shader and its layout.
pub struct Prepared {
    pub shader: Shader,
    /// Reachable blocks in layout order, new blocks included.
    pub layout: Vec<Block>,
    /// Blocks made by edge splitting (indexed by IR block; empty when no edge was split).
    pub split: Vec<bool>,
    /// The dominator tree of `shader` when preparing did not change its control flow (the
    /// tree of the input, which preparing needed anyway); `None` for straight-line code or
    /// when blocks or edges changed.
    pub dom: Option<DomTree>,
}

/// Prepares a copy of `input`.
pub fn prepare(input: &Shader) -> Prepared {
    prepare_owned(input.clone())
}

/// Prepares `shader` in place (no copy: callers that are done with the shader pass it here).
pub fn prepare_owned(mut shader: Shader) -> Prepared {
    // Straight-line code (one block, no edge; most shaders) needs no dominator tree: its block
    // is reachable, it has no loop and no edge to split.
    let straight = shader.blocks.len() == 1 && shader.blocks[0].preds.is_empty();
    let dom = (!straight).then(|| DomTree::compute(&shader));
    let reachable = |b: Block| dom.as_ref().is_none_or(|d| d.is_reachable(b));
    let n = shader.blocks.len();
    // Whether a step below changes the control flow (then `dom` no longer describes it).
    let mut cfg_changed = false;
    // 1. Unreachable predecessors.
    for b in 0..n {
        if !reachable(Block(b as u32)) {
            continue;
        }
        if shader.blocks[b].preds.iter().all(|&p| reachable(p)) {
            continue;
        }
        cfg_changed = true;
        let preds = shader.blocks[b].preds.clone();
        let keep: Vec<bool> = preds.iter().map(|p| reachable(*p)).collect();
        let ids: Vec<_> = shader.blocks[b].insts.clone();
        for id in ids {
            let inst = *shader.inst(id);
            if inst.kind != InstKind::Phi || inst.dead {
                continue;
            }
            let args: Vec<Value> =
                shader.get(inst.args).iter().zip(&keep).filter(|(_, k)| **k).map(|(v, _)| *v).collect();
            let list = shader.list(&args);
            shader.inst_mut(id).args = list;
        }
        shader.blocks[b].preds = preds.into_iter().zip(keep).filter(|(_, k)| *k).map(|(p, _)| p).collect();
    }
    // 2. Preloads first; one value per register.
    let mut first_of: [Option<Value>; 64] = [None; 64];
    let mut renames: Vec<(Value, Value)> = Vec::new();
    // (Inline: a program preloads a few registers.)
    let mut preloads: SmallVec<[InstId; 8]> = SmallVec::new();
    // Preloads left in place at the top of the entry block.
    let mut entry_prefix = 0;
    for b in 0..n {
        let is_preload = |id: &InstId| {
            let inst = shader.inst(*id);
            matches!(inst.kind, InstKind::Preload(_)) && !inst.dead
        };
        // Usually the entry block already starts with its preloads, one per register (or has
        // none): then it stays as it is (the rebuild below would produce the same list), and
        // preloads found in other blocks go right after them.
        if b == 0 && preloads_in_place(&shader, &shader.blocks[0].insts) {
            for &id in &shader.blocks[0].insts {
                let inst = shader.inst(id);
                let InstKind::Preload(r) = inst.kind else { break };
                if inst.dead {
                    break;
                }
                first_of[r as usize] = Some(shader.get(inst.dests)[0]);
                entry_prefix += 1;
            }
            continue;
        }
        if !reachable(Block(b as u32)) || !shader.blocks[b].insts.iter().any(is_preload) {
            continue;
        }
        // The preloads leave the list in place (it is taken out only to read the instructions).
        let mut ids = std::mem::take(&mut shader.blocks[b].insts);
        ids.retain(|&id| {
            let inst = shader.inst(id);
            let InstKind::Preload(r) = inst.kind else { return true };
            if inst.dead {
                return true;
            }
            let v = shader.get(inst.dests)[0];
            match first_of[r as usize] {
                Some(first) => {
                    renames.push((v, first));
                    shader.inst_mut(id).dead = true;
                }
                None => {
                    first_of[r as usize] = Some(v);
                    preloads.push(id);
                }
            }
            false
        });
        shader.blocks[b].insts = ids;
    }
    if !preloads.is_empty() {
        let entry = &mut shader.blocks[0].insts;
        entry.splice(entry_prefix..entry_prefix, preloads);
    }
    if !renames.is_empty() {
        let mut map = vec![None; shader.values.len()];
        for (from, to) in renames {
            map[from.index()] = Some(to);
        }
        shader.rewrite_uses(|v| map[v.index()].map(Operand::Value));
        for b in 0..n {
            if let Terminator::Branch { cond, .. } = &mut shader.blocks[b].term
                && let Some(to) = map[cond.index()]
            {
                *cond = to;
            }
        }
    }
    // 3. Latches and loop layout (`loops.rs`).
    let Some(dom) = dom else {
        // Straight-line code: one block, no loop, no edge to split.
        return Prepared { shader, layout: vec![Block(0)], split: Vec::new(), dom: None };
    };
    let mut layout = super::loops::layout(&mut shader, &dom);
    // (A latch is a new block; without one the control flow is as it was.)
    cfg_changed |= shader.blocks.len() != n;
    let n = shader.blocks.len();
    // 4. Critical edges.
    let mut split = vec![false; n];
    let mut after: Vec<Vec<Block>> = vec![Vec::new(); n];
    let mut before: Vec<Vec<Block>> = vec![Vec::new(); n];
    let mut tail: Vec<Block> = Vec::new();
    for &p in &layout {
        let Terminator::Branch { cond, if_zero, taken, fallthrough } = shader.blocks[p.index()].term else {
            continue;
        };
        let mut new_taken = taken;
        let mut new_fall = fallthrough;
        for (is_taken, s) in [(true, taken), (false, fallthrough)] {
            if shader.blocks[s.index()].preds.len() < 2 {
                continue;
            }
            let mid = shader.add_block();
            cfg_changed = true;
            split.push(true);
            after.push(Vec::new());
            before.push(Vec::new());
            shader.blocks[mid.index()].term = Terminator::Jump(s);
            shader.blocks[mid.index()].preds = vec![p];
            // Replace one occurrence of p in s's predecessors (φ argument order is kept).
            let preds = &mut shader.blocks[s.index()].preds;
            let skip = if !is_taken && taken == fallthrough { 1 } else { 0 };
            if let Some(slot) = preds.iter_mut().filter(|q| **q == p).nth(skip) {
                *slot = mid;
            }
            if is_taken {
                new_taken = mid;
                if s.index() == 0 {
                    tail.push(mid);
                } else {
                    before[s.index()].push(mid);
                }
            } else {
                new_fall = mid;
                after[p.index()].push(mid);
            }
        }
        shader.blocks[p.index()].term = Terminator::Branch { cond, if_zero, taken: new_taken, fallthrough: new_fall };
    }
    let mut full = Vec::with_capacity(shader.blocks.len());
    for b in layout.drain(..) {
        full.extend(before[b.index()].iter().copied());
        full.push(b);
        full.extend(after[b.index()].iter().copied());
    }
    full.extend(tail);
    let dom = (!cfg_changed).then_some(dom);
    Prepared { shader, layout: full, split, dom }
}

/// Whether the live preloads of `insts` come before every other instruction (dead ones
/// included) and load distinct registers: step 2 would leave such a list unchanged.
fn preloads_in_place(shader: &Shader, insts: &[InstId]) -> bool {
    let mut loaded = 0u64;
    let mut prefix = true;
    for &id in insts {
        let inst = shader.inst(id);
        match inst.kind {
            InstKind::Preload(r) if !inst.dead => {
                if !prefix || loaded & (1u64 << r) != 0 {
                    return false;
                }
                loaded |= 1u64 << r;
            }
            _ => prefix = false,
        }
    }
    true
}
