//! Control-flow orders and the dominator tree.
//!
//! Dominators use the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast
//! Dominance Algorithm") over the reverse post-order; for the reducible, structured CFGs that
//! TGSI produces it converges in two passes, so the cost is linear in the number of blocks and
//! edges. Dominance queries are O(1) through pre/post numbers of the dominator tree.

use super::{Block, Shader};

/// Dominator tree and block orders of a shader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomTree {
    /// Reverse post-order of the blocks reachable from the entry.
    pub rpo: Vec<Block>,
    /// Position of each block in `rpo` (`u32::MAX` when unreachable).
    rpo_index: Vec<u32>,
    /// Immediate dominator of each block (the entry is its own; unreachable blocks have
    /// [`NO_BLOCK`]).
    idom: Vec<Block>,
    /// Children in the dominator tree, in RPO order: `children[child_start[b]..child_start[b + 1]]`.
    child_start: Vec<u32>,
    children: Vec<Block>,
    pre: Vec<u32>,
    post: Vec<u32>,
    /// The reachable blocks in dominator-tree pre-order (children in RPO order).
    preorder: Vec<Block>,
    /// Every reachable block comes after its immediate dominator in the layout.
    layout_follows_dominance: bool,
}

impl DomTree {
    pub fn compute(shader: &Shader) -> DomTree {
        let n = shader.blocks.len();
        // Few allocations (this runs several times per compile): `rpo_index` doubles as the
        // visited marks of the depth-first search and one stack serves both walks.
        let mut rpo_index = vec![u32::MAX; n];
        let mut stack: Vec<(Block, usize)> = Vec::with_capacity(n);
        let rpo = rpo_into(shader, &mut rpo_index, &mut stack);
        for (i, b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = i as u32;
        }
        let mut idom = vec![NO_BLOCK; n];
        let entry = shader.entry();
        idom[entry.index()] = entry;
        iterate_idoms(&rpo, &rpo_index, &mut idom, |b| shader.block(b).preds.iter().copied());
        // `child_start[d]` first counts up to the end of `d`'s children, then (filling them
        // backwards, so they stay in RPO order) down to their start.
        let mut child_start = vec![0u32; n + 1];
        for &b in rpo.iter().skip(1) {
            let d = idom[b.index()];
            if d != NO_BLOCK {
                child_start[d.index()] += 1;
            }
        }
        for b in 1..=n {
            child_start[b] += child_start[b - 1];
        }
        let mut children = vec![entry; child_start[n] as usize];
        for &b in rpo.iter().skip(1).rev() {
            let d = idom[b.index()];
            if d != NO_BLOCK {
                child_start[d.index()] -= 1;
                children[child_start[d.index()] as usize] = b;
            }
        }
        let (mut pre, mut post) = (vec![u32::MAX; n], vec![u32::MAX; n]);
        let mut counter = 0;
        let mut preorder = Vec::with_capacity(rpo.len());
        stack.clear();
        stack.push((entry, 0));
        pre[entry.index()] = counter;
        preorder.push(entry);
        counter += 1;
        while let Some((b, i)) = stack.pop() {
            let kids = &children[child_start[b.index()] as usize..child_start[b.index() + 1] as usize];
            if let Some(&c) = kids.get(i) {
                stack.push((b, i + 1));
                pre[c.index()] = counter;
                preorder.push(c);
                counter += 1;
                stack.push((c, 0));
            } else {
                post[b.index()] = counter;
                counter += 1;
            }
        }
        let layout_follows_dominance =
            rpo.iter().skip(1).all(|&b| idom[b.index()] != NO_BLOCK && idom[b.index()].index() < b.index());
        DomTree { rpo, rpo_index, idom, child_start, children, pre, post, preorder, layout_follows_dominance }
    }

    /// Whether `a` dominates `b` (every block dominates itself). False for unreachable blocks.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        let (pa, pb) = (self.pre[a.index()], self.pre[b.index()]);
        pa != u32::MAX && pb != u32::MAX && pa <= pb && self.post[b.index()] <= self.post[a.index()]
    }

    pub fn idom(&self, b: Block) -> Option<Block> {
        let d = self.idom[b.index()];
        (d != NO_BLOCK && d != b).then_some(d)
    }

    /// Children of `b` in the dominator tree.
    pub fn children(&self, b: Block) -> &[Block] {
        &self.children[self.child_start[b.index()] as usize..self.child_start[b.index() + 1] as usize]
    }

    pub fn is_reachable(&self, b: Block) -> bool {
        self.rpo_index[b.index()] != u32::MAX
    }

    /// Position of `b` in the reverse post-order.
    pub fn rpo_number(&self, b: Block) -> u32 {
        self.rpo_index[b.index()]
    }

    /// Whether every reachable block comes after its immediate dominator in the layout (so a
    /// definition precedes its non-φ uses in a walk of the blocks in layout order).
    pub fn layout_follows_dominance(&self) -> bool {
        self.layout_follows_dominance
    }

    /// The blocks in dominator-tree pre-order (every block after its dominators), recorded
    /// while numbering the tree.
    pub fn preorder(&self) -> &[Block] {
        &self.preorder
    }
}

/// No block: the immediate dominator of a block the root does not reach.
const NO_BLOCK: Block = Block(u32::MAX);

/// Cooper, Harvey and Kennedy's iteration, shared by the dominators and the post-dominators:
/// the immediate dominators of the nodes of `order`, a reverse post-order of some graph whose
/// first node is the root, where `preds(b)` are the predecessors of `b` in that graph and
/// `index` each node's position in `order`. `idom` comes in with the root as its own and every
/// other node [`NO_BLOCK`]; predecessors without one yet are skipped.
fn iterate_idoms<I: Iterator<Item = Block>>(
    order: &[Block],
    index: &[u32],
    idom: &mut [Block],
    preds: impl Fn(Block) -> I,
) {
    let mut changed = true;
    while changed {
        changed = false;
        for &b in &order[1..] {
            let mut new = NO_BLOCK;
            for p in preds(b) {
                if idom[p.index()] == NO_BLOCK {
                    continue;
                }
                new = if new == NO_BLOCK { p } else { intersect(idom, index, p, new) };
            }
            if new != NO_BLOCK && idom[b.index()] != new {
                idom[b.index()] = new;
                changed = true;
            }
        }
    }
}

/// The nearest common dominator of `a` and `b`, both with dominators already.
fn intersect(idom: &[Block], index: &[u32], mut a: Block, mut b: Block) -> Block {
    while a != b {
        while index[a.index()] > index[b.index()] {
            a = idom[a.index()];
        }
        while index[b.index()] > index[a.index()] {
            b = idom[b.index()];
        }
    }
    a
}

/// No immediate post-dominator in [`postdominators`]: the block reaches no `end` (an endless
/// loop).
pub const NO_POSTDOM: u32 = NO_BLOCK.0;

/// Immediate post-dominators, computed like the dominators (Cooper, Harvey and Kennedy) over
/// the reversed CFG from a virtual exit that every block ending the shader jumps to. Entry `b`
/// is a block index, `blocks.len()` when it is the virtual exit (the block ends the shader, or
/// its paths end in different `end`s), or [`NO_POSTDOM`] when `b` reaches no `end`. Linear for
/// structured CFGs, like [`DomTree::compute`].
pub fn postdominators(shader: &Shader) -> Vec<u32> {
    let n = shader.blocks.len();
    // The virtual exit is node `n`.
    let exit = Block(n as u32);
    let ends: Vec<Block> =
        (0..n as u32).map(Block).filter(|&b| shader.block(b).term == super::Terminator::End).collect();
    // Reverse post-order of the reversed CFG, whose successors are the ending blocks for the
    // exit and the predecessors for a block.
    let mut index = vec![u32::MAX; n + 1];
    let mut order = post_order(exit, &mut index, &mut Vec::new(), |b, k| {
        if b == exit { ends.get(k).copied() } else { shader.block(b).preds.get(k).copied() }
    });
    order.reverse();
    for (i, &b) in order.iter().enumerate() {
        index[b.index()] = i as u32;
    }
    let mut ipdom = vec![NO_BLOCK; n + 1];
    ipdom[n] = exit;
    // A block's predecessors in the reversed CFG: its successors, and the exit if it ends.
    iterate_idoms(&order, &index, &mut ipdom, |b| {
        let block = shader.block(b);
        block.term.successors().chain((block.term == super::Terminator::End).then_some(exit))
    });
    ipdom.truncate(n);
    ipdom.into_iter().map(|d| d.0).collect()
}

/// Reverse post-order from the entry (iterative depth-first search).
pub fn reverse_post_order(shader: &Shader) -> Vec<Block> {
    let n = shader.blocks.len();
    rpo_into(shader, &mut vec![u32::MAX; n], &mut Vec::with_capacity(n))
}

/// [`reverse_post_order`] with caller-provided scratch: `marks` (one per block, all
/// `u32::MAX`; visited blocks get 0) and an empty `stack`.
fn rpo_into(shader: &Shader, marks: &mut [u32], stack: &mut Vec<(Block, usize)>) -> Vec<Block> {
    // Successors are taken last first.
    let mut post = post_order(shader.entry(), marks, stack, |b, k| {
        let n = shader.succs(b).count();
        if k < n { shader.succs(b).nth(n - 1 - k) } else { None }
    });
    post.reverse();
    post
}

/// The nodes reached from `root`, in post-order (iterative depth-first search, shared by the
/// CFG and the reversed CFG): `child(b, k)` is the `k`-th child of `b` to visit, `None` after
/// the last. `marks` has one entry per node, `u32::MAX` until the node is visited (then 0);
/// `stack` comes in empty.
fn post_order(
    root: Block,
    marks: &mut [u32],
    stack: &mut Vec<(Block, usize)>,
    child: impl Fn(Block, usize) -> Option<Block>,
) -> Vec<Block> {
    let mut post = Vec::with_capacity(marks.len());
    // (node, index of its next child)
    stack.push((root, 0));
    marks[root.index()] = 0;
    while let Some((b, next)) = stack.last_mut() {
        let c = child(*b, *next);
        *next += 1;
        match c {
            Some(c) if marks[c.index()] == u32::MAX => {
                marks[c.index()] = 0;
                stack.push((c, 0));
            }
            Some(_) => {}
            None => {
                post.push(*b);
                stack.pop();
            }
        }
    }
    post
}

/// Loop nesting depth of every block: the number of natural loops containing it. A loop is
/// identified by its header, the target of back edges `latch → header` where the header
/// dominates the latch. Each loop
/// body is walked once, so the cost is the sum of the loop sizes (blocks × nesting depth).
pub fn loop_depths(shader: &Shader, dom: &DomTree) -> Vec<u32> {
    let n = shader.blocks.len();
    let mut depth = vec![0u32; n];
    // `stamp[b] == generation` marks blocks already found in the current loop.
    let mut stamp = vec![0u32; n];
    let mut generation = 0;
    let mut work = Vec::new();
    for &header in &dom.rpo {
        // All back edges into one header form one loop.
        work.extend(shader.block(header).preds.iter().copied().filter(|&p| dom.dominates(header, p)));
        if work.is_empty() {
            continue;
        }
        generation += 1;
        stamp[header.index()] = generation;
        depth[header.index()] += 1;
        while let Some(b) = work.pop() {
            if stamp[b.index()] == generation {
                continue;
            }
            stamp[b.index()] = generation;
            depth[b.index()] += 1;
            work.extend(shader.block(b).preds.iter().copied().filter(|p| dom.is_reachable(*p)));
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Stage, Terminator};

    /// entry → (then | else) → join → loop header ⇄ body → exit
    fn diamond_and_loop() -> Shader {
        let mut s = Shader::new(Stage::Fragment);
        let c = s.new_value();
        let [then, els, join, header, body, exit] = [(); 6].map(|_| s.add_block());
        s.set_terminator(Block(0), Terminator::Branch { cond: c, if_zero: true, taken: els, fallthrough: then });
        s.set_terminator(then, Terminator::Jump(join));
        s.set_terminator(els, Terminator::Jump(join));
        s.set_terminator(join, Terminator::Jump(header));
        s.set_terminator(header, Terminator::Branch { cond: c, if_zero: true, taken: exit, fallthrough: body });
        s.set_terminator(body, Terminator::Jump(header));
        s
    }

    #[test]
    fn postdominators_with_a_virtual_exit() {
        let s = diamond_and_loop();
        let ipdom = postdominators(&s);
        let exit = s.blocks.len() as u32;
        // Blocks: 0 entry, 1 then, 2 else, 3 join, 4 header, 5 body, 6 exit (ends the shader).
        assert_eq!(ipdom, vec![3, 3, 3, 4, 6, 4, exit]);
        // Block 1 ends the shader (the virtual exit post-dominates it); block 2 goes to block 1
        // or into an endless loop (block 3, which has no post-dominator), so only the way
        // out counts for it and for the entry.
        let mut s = Shader::new(Stage::Fragment);
        let c = s.new_value();
        let [a, b, spin] = [(); 3].map(|_| s.add_block());
        s.set_terminator(Block(0), Terminator::Branch { cond: c, if_zero: true, taken: a, fallthrough: b });
        s.set_terminator(b, Terminator::Branch { cond: c, if_zero: true, taken: spin, fallthrough: a });
        s.set_terminator(spin, Terminator::Jump(spin));
        assert_eq!(postdominators(&s), vec![1, 4, 1, NO_POSTDOM]);
    }

    #[test]
    fn dominators() {
        let s = diamond_and_loop();
        let dom = DomTree::compute(&s);
        assert_eq!(dom.rpo.len(), 7);
        assert_eq!(dom.idom(Block(3)), Some(Block(0)), "the join is dominated by the branch, not an arm");
        assert!(dom.dominates(Block(0), Block(6)));
        assert!(dom.dominates(Block(4), Block(5)));
        assert!(!dom.dominates(Block(1), Block(3)));
        assert!(!dom.dominates(Block(5), Block(4)));
        assert!(dom.layout_follows_dominance());
        let pre = dom.preorder();
        assert_eq!(pre[0], Block(0));
        for (i, &b) in pre.iter().enumerate() {
            if let Some(d) = dom.idom(b) {
                assert!(pre[..i].contains(&d));
            }
        }
    }

    #[test]
    fn layout_against_dominance() {
        let mut s = diamond_and_loop();
        // The loop body (block 5) before its header (block 4), which dominates it.
        s.reorder_blocks(&[Block(0), Block(1), Block(2), Block(3), Block(5), Block(4), Block(6)]);
        assert!(!DomTree::compute(&s).layout_follows_dominance());
    }

    #[test]
    fn loop_nesting() {
        let s = diamond_and_loop();
        let dom = DomTree::compute(&s);
        assert_eq!(loop_depths(&s, &dom), vec![0, 0, 0, 0, 1, 1, 0]);
    }

    #[test]
    fn unreachable_blocks() {
        let mut s = Shader::new(Stage::Fragment);
        let dead = s.add_block();
        let dom = DomTree::compute(&s);
        assert!(!dom.is_reachable(dead));
        assert!(!dom.dominates(Block(0), dead));
    }
}
