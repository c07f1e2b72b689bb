//! Live-out sets of every block.
//!
//! SSA liveness by path exploration (Brandner, Boissinot, Darte, Dupont de Dinechin and
//! Rastello, "Computing Liveness Sets for SSA-Form Programs", 2011): from every use, walk the
//! CFG backwards to the definition, marking the blocks crossed. Each value is processed on its
//! own with a per-block stamp, so the cost is the size of the result (the sum of the live
//! ranges measured in blocks) plus the number of uses — no iteration to a fixed point.
//!
//! Only the live-out sets are stored: the live-in set of a block follows from its live-out set
//! and its own instructions (`live_in(b)` = the values read in `b` or live out of it, minus
//! those defined in `b`), which a consumer walking the block has at hand anyway. Storing one
//! family of sets instead of two halves the cost, which is the size of those sets: blocks ×
//! values live across them.
//!
//! Conventions: a φ's destination is defined at the top of its block and is not live-in; a φ's
//! argument for predecessor P is used at the end of P, so it is live-out of P. A branch
//! condition is used at the end of its block.

use super::{Block, InstKind, Shader, Terminator, Value};

/// Live-out sets of every block; each set is sorted by value number.
#[derive(Clone, Debug, Default)]
pub struct Liveness {
    live_out: Sets,
}

/// One set of values per block, stored back to back (`values[start[b]..start[b + 1]]`).
#[derive(Clone, Debug, Default)]
struct Sets {
    start: Vec<u32>,
    values: Vec<Value>,
}

impl Sets {
    /// Groups (block, value) pairs by block, keeping their order within a block.
    fn from_pairs(nblocks: usize, pairs: &[(u32, Value)]) -> Sets {
        let mut start = vec![0u32; nblocks + 1];
        for &(b, _) in pairs {
            start[b as usize + 1] += 1;
        }
        for b in 0..nblocks {
            start[b + 1] += start[b];
        }
        let mut fill = start.clone();
        let mut values = vec![Value(0); pairs.len()];
        for &(b, v) in pairs {
            values[fill[b as usize] as usize] = v;
            fill[b as usize] += 1;
        }
        Sets { start, values }
    }

    fn get(&self, b: Block) -> &[Value] {
        &self.values[self.start[b.index()] as usize..self.start[b.index() + 1] as usize]
    }
}

impl Liveness {
    pub fn compute(shader: &Shader) -> Liveness {
        let nblocks = shader.blocks.len();
        let nvalues = shader.values.len();
        // Without edges (straight-line code: no block has a predecessor, so no branch either)
        // nothing is live across a block boundary.
        if shader.blocks.iter().all(|b| b.preds.is_empty() && !matches!(b.term, Terminator::Branch { .. })) {
            return Liveness { live_out: Sets { start: vec![0; nblocks + 1], values: Vec::new() } };
        }
        // Block of each value's definition.
        let mut def_block = vec![u32::MAX; nvalues];
        // Uses that may reach outside their block, as (value, block, at block end?) where
        // `at_end` = the use happens after every instruction of the block (a φ argument of a
        // successor, or the branch condition). A use inside the block that defines the value
        // (the definition comes first in SSA, or is a φ at the top) is not recorded: it adds
        // nothing to the live sets.
        let mut raw: Vec<(Value, u32, bool)> = Vec::with_capacity(shader.insts.len());
        for (b, block) in shader.blocks.iter().enumerate() {
            let b32 = b as u32;
            for id in shader.block_insts(Block(b32)) {
                let inst = shader.inst(id);
                if inst.kind == InstKind::Phi {
                    for (&arg, &pred) in shader.get(inst.args).iter().zip(&block.preds) {
                        raw.push((arg, pred.0, true));
                    }
                } else {
                    shader.for_each_use(inst, |v| {
                        if def_block[v.index()] != b32 {
                            raw.push((v, b32, false));
                        }
                    });
                }
                shader.for_each_def(inst, |v| def_block[v.index()] = b32);
            }
            if let Terminator::Branch { cond, .. } = block.term {
                raw.push((cond, b32, true));
            }
        }
        // The same uses chained by value: `last_use[v]` is the last one recorded for v and
        // `earlier_use[i]` the one before use i (`NO_USE` ends a chain). A chain rather than a
        // counting sort: one pass over the values instead of three. The order of the uses of
        // a value does not matter: each adds the blocks on its paths to a set.
        const NO_USE: u32 = u32::MAX;
        let mut last_use = vec![NO_USE; nvalues];
        let mut earlier_use = Vec::with_capacity(raw.len());
        for (i, &(v, _, _)) in raw.iter().enumerate() {
            earlier_use.push(last_use[v.index()]);
            last_use[v.index()] = i as u32;
        }
        // (block, value) pairs in value order, grouped by block at the end.
        let mut live_out: Vec<(u32, Value)> = Vec::with_capacity(raw.len());
        // stamp_in[b] == v+1: v already in live_in(b); stamp_out likewise.
        let mut stamp_in = vec![0u32; nblocks];
        let mut stamp_out = vec![0u32; nblocks];
        let mut work: Vec<u32> = Vec::new();
        for (v, &last) in last_use.iter().enumerate() {
            let value = Value(v as u32);
            let tag = v as u32 + 1;
            let defined_in = def_block[v];
            let mut next = last;
            while next != NO_USE {
                let (_, b, at_end) = raw[next as usize];
                next = earlier_use[next as usize];
                if at_end {
                    if stamp_out[b as usize] != tag {
                        stamp_out[b as usize] = tag;
                        live_out.push((b, value));
                    }
                    if b == defined_in {
                        continue;
                    }
                } else if b == defined_in {
                    // Used in its defining block, after the definition (SSA; a φ is at the top).
                    continue;
                }
                work.push(b);
                while let Some(b) = work.pop() {
                    let bi = b as usize;
                    if stamp_in[bi] == tag {
                        continue;
                    }
                    stamp_in[bi] = tag;
                    for &p in &shader.blocks[bi].preds {
                        let pi = p.index();
                        if stamp_out[pi] != tag {
                            stamp_out[pi] = tag;
                            live_out.push((p.0, value));
                        }
                        if p.0 != defined_in {
                            work.push(p.0);
                        }
                    }
                }
            }
        }
        Liveness { live_out: Sets::from_pairs(nblocks, &live_out) }
    }

    /// The values live at the top of `b` (φ results excluded), sorted: those read in `b` (φ
    /// arguments excepted: they are read at the end of the predecessors) or live out of it,
    /// and not defined in `b`. Derived on request, in time linear in the block and its live-out
    /// set (the allocator derives it on the fly instead).
    pub fn live_in(&self, shader: &Shader, b: Block) -> Vec<Value> {
        let mut defined = Vec::new();
        let mut read = Vec::new();
        for id in shader.block_insts(b) {
            let inst = shader.inst(id);
            if inst.kind != InstKind::Phi {
                shader.for_each_use(inst, |v| read.push(v));
            }
            shader.for_each_def(inst, |v| defined.push(v));
        }
        read.extend_from_slice(self.live_out(b));
        read.sort_unstable();
        read.dedup();
        defined.sort_unstable();
        read.retain(|v| defined.binary_search(v).is_err());
        read
    }

    /// The values live at the end of `b` (φ arguments for successors included), sorted.
    pub fn live_out(&self, b: Block) -> &[Value] {
        self.live_out.get(b)
    }

    /// The sum of the sizes of the live-out sets.
    pub fn live_out_total(&self) -> usize {
        self.live_out.values.len()
    }

    pub fn is_live_out(&self, b: Block, v: Value) -> bool {
        self.live_out(b).binary_search(&v).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::Builder;
    use crate::ir::{Src, Stage};

    #[test]
    fn values_live_across_a_diamond_and_phi_arguments_live_out() {
        let mut s = Shader::new(Stage::Fragment);
        let entry = Block(0);
        let (then, join) = (s.add_block(), s.add_block());
        let mut b = Builder::new(&mut s, entry);
        let x = b.konst(1);
        let y = b.konst(2);
        s.set_terminator(entry, Terminator::Branch { cond: x, if_zero: true, taken: join, fallthrough: then });
        let mut b = Builder::new(&mut s, then);
        let z = b.fadd(x, Src::konst(0));
        s.set_terminator(then, Terminator::Jump(join));
        let mut b = Builder::new(&mut s, join);
        let p = b.phi(&[y, z]);
        let _ = b.fadd(p, x);
        let live = Liveness::compute(&s);
        assert_eq!(live.live_out(Block(0)), [x, y], "x for then/join, y as the φ argument; the branch reads x too");
        assert_eq!(live.live_in(&s, Block(1)), [x]);
        assert_eq!(live.live_out(Block(1)), [x, z]);
        assert_eq!(live.live_in(&s, Block(2)), [x], "the φ result is not live-in");
        assert!(live.live_out(Block(2)).is_empty());
    }

    #[test]
    fn loop_carried_value_is_live_around_the_loop() {
        let mut s = Shader::new(Stage::Fragment);
        let (header, body, exit) = (s.add_block(), s.add_block(), s.add_block());
        let mut b = Builder::new(&mut s, Block(0));
        let init = b.konst(0);
        let limit = b.konst(10);
        s.set_terminator(Block(0), Terminator::Jump(header));
        // header: i = φ(init, next); branch to exit when i == 0
        let next = s.new_value();
        let mut b = Builder::new(&mut s, header);
        let i = b.phi(&[init, next]);
        s.set_terminator(header, Terminator::Branch { cond: i, if_zero: true, taken: exit, fallthrough: body });
        let mut b = Builder::new(&mut s, body);
        let sum = b.iadd(i, limit);
        // Rename `sum` to the pre-allocated `next` so the φ argument is defined in the body.
        let def = s.values[sum.index()].def.unwrap();
        let dests = s.inst(def).dests;
        s.get_mut(dests)[0] = next;
        s.record_defs(def);
        s.set_terminator(body, Terminator::Jump(header));
        let live = Liveness::compute(&s);
        let live_in = |b: Block, v: Value| live.live_in(&s, b).contains(&v);
        assert!(live_in(header, limit) && live_in(body, limit) && live.is_live_out(body, limit));
        assert!(live.is_live_out(body, next), "φ argument of the back edge");
        assert!(!live_in(header, i));
        assert!(live_in(body, i));
        assert!(!live_in(exit, limit));
    }
}
