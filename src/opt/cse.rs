//! Common-subexpression elimination over the dominator tree: an instruction equal to one that
//! dominates it (same opcode, modifiers, immediates and sources) is replaced by it. It runs once
//! per variant, after legalisation (which adds copies of constants and FAU words, and can make
//! constants equal), not in the optimiser's pipeline: before the IDVS split it merged what this
//! run merges anyway (measured: docs/backend.md, "Compile speed"). Only pure
//! single-result ALU instructions and constant materialisations take part; cross-lane
//! operations (CLPER, WMASK) are excluded because their results depend on the active lanes.
//!
//! Blocks are visited in dominator-tree pre-order with one table of available expressions. An
//! entry whose block does not dominate the current block is stale (its subtree is finished)
//! and is overwritten instead of removed on the way back up, so each instruction costs one
//! hash-table probe: linear in the program size. The table is sized once from the instruction
//! count and never grows. Entries name the instruction that computes
//! the expression; its sources were already renamed when it was entered and do not change
//! during the walk, so it can be compared directly.

use super::{Analyses, facts};
use crate::ir::{Block, Inst, InstId, InstKind, Operand, Shader, Terminator, Value};
use rustc_hash::FxHasher;
use smallvec::SmallVec;
use std::hash::Hasher;

/// Whether two candidates compute the same value: same kind, same machine template (opcode,
/// flow, modifiers, immediates) and same sources.
fn same(a: &Inst, b: &Inst) -> bool {
    a.kind == b.kind && a.mach == b.mach && a.srcs.iter().zip(&b.srcs).all(|(x, y)| x == y)
}

/// A hash of the fields that tell candidates apart in practice (equality is decided by
/// [`same`]): the opcode, flow and immediates, and each used source's operand. Instruction and
/// source modifiers are left out (equal instructions differing only there are rare and cost a
/// comparison). The sources are renamed by `replace` (empty: nothing renamed yet) in the same
/// look, so the hash is that of the renamed instruction.
#[inline(always)]
fn rename_and_hash(inst: &mut Inst, replace: &[Option<Value>]) -> u64 {
    let rename = |v: &mut Value| {
        if let Some(Some(r)) = replace.get(v.index()) {
            *v = *r;
        }
    };
    let mut h = FxHasher::default();
    let m = &inst.mach;
    h.write_u64(
        u64::from(inst.kind == InstKind::Copy)
            | (m.opcode as u64) << 8
            | u64::from(m.flow) << 24
            | u64::from(m.imms[0]) << 32,
    );
    h.write_u32(m.imms[1]);
    for src in &mut inst.srcs {
        let word = match &mut src.operand {
            Operand::None => break,
            Operand::Value(v) => {
                rename(v);
                1 | u64::from(v.0) << 8
            }
            Operand::Pair(lo, hi) => {
                rename(lo);
                rename(hi);
                2 | u64::from(lo.0) << 8 | u64::from(hi.0) << 36
            }
            Operand::Const(c) => 3 | u64::from(*c) << 8,
            Operand::Uniform(u) => 4 | u64::from(*u) << 8,
            Operand::Special(s) => 5 | u64::from(s.page) << 8 | u64::from(s.entry) << 16 | u64::from(s.high) << 24,
        };
        h.write_u64(word);
    }
    h.finish()
}

/// An available expression: the instruction computing it (its one destination is the value),
/// the block of its definition, its hash, and the next entry in the same bucket (its index + 1;
/// 0: none).
#[derive(Clone, Copy)]
pub(super) struct Available {
    inst: InstId,
    block: Block,
    hash: u64,
    next: u32,
}

pub fn run(shader: &mut Shader) -> bool {
    run_in(shader, &mut Analyses::default())
}

/// [`run`], with the dominator tree and side tables from `analyses` (this pass does not change
/// the CFG). It creates no dead code: a duplicate's sources are also the sources of the
/// instruction that replaces it.
pub fn run_in(shader: &mut Shader, analyses: &mut Analyses) -> bool {
    // Straight-line code needs no dominator tree.
    if shader.blocks.len() > 1 {
        analyses.dom(shader);
    }
    let Analyses { dom, scratch, .. } = analyses;
    let dom = if shader.blocks.len() > 1 { dom.as_ref() } else { None };
    let entry = [shader.entry()];
    let order: &[Block] = match dom {
        Some(dom) => dom.preorder(),
        None => &entry,
    };
    let dominates = |a: Block, b: Block| dom.is_none_or(|d| d.dominates(a, b));
    let facts = facts::table();
    // A chained hash table sized once from the number of instructions in the blocks (never
    // rehashed): bucket heads index `entries` (plus one, so that an empty table is all zeros),
    // whose `next` fields chain the entries of one bucket. There is at most one entry per
    // expression (a stale one is overwritten), so the bucket count does not affect the result.
    let listed: usize = shader.blocks.iter().map(|b| b.insts.len()).sum();
    let buckets = (2 * listed).next_power_of_two().max(16);
    let mut heads_buf = super::filled(std::mem::take(&mut scratch.counts), buckets, 0);
    // Sliced to its known length, so that the masked bucket index needs no bounds check.
    let heads = &mut heads_buf[..buckets];
    let mut entries = std::mem::take(&mut scratch.available);
    entries.clear();
    entries.reserve(listed);
    // The replacement of each value; sized at the first replacement (many runs find none).
    let mut replace = std::mem::take(&mut scratch.values);
    replace.clear();
    let mut changed = false;
    let all_visited = order.len() == shader.blocks.len();
    // φs and parallel copies: their arguments can be defined later in the walk (around a loop),
    // so they are renamed at the end.
    let mut with_args: SmallVec<[InstId; 16]> = SmallVec::new();
    for &b in order {
        // The list is taken out while the walk edits the instructions it names.
        let mut list = std::mem::take(&mut shader.blocks[b.index()].insts);
        // The walk compacts the list as it goes (what `Shader::compact` would do in a second
        // walk): `list[..kept]` holds the live instructions seen so far.
        let mut kept = 0;
        for r in 0..list.len() {
            let id = list[r];
            let inst = &shader.insts[id.index()];
            // A candidate is a `copy` of a non-value operand or a pure single-result ALU
            // instruction ([`facts::PURE_ALU`]); renaming a source never changes that (values
            // are renamed to values).
            let candidate = match inst.kind {
                _ if inst.dead => continue,
                InstKind::Machine => facts[inst.mach.opcode as usize] & facts::PURE_ALU != 0 && inst.dests.len() == 1,
                InstKind::Copy => !matches!(inst.srcs[0].operand, Operand::Value(_)),
                InstKind::Phi | InstKind::ParallelCopy => {
                    with_args.push(id);
                    false
                }
                InstKind::Undef | InstKind::Preload(_) => false,
            };
            list[kept] = id;
            kept += 1;
            // Every use first reads the earlier replacements (there are some only once
            // something changed; a definition dominates its non-φ uses, so it was visited
            // first), so chains collapse in one walk. A candidate is renamed while it is hashed.
            if !candidate {
                if changed {
                    shader.rewrite_operand_reads(id, |v| replace[v.index()].map(Operand::Value));
                }
                continue;
            }
            let hash = rename_and_hash(&mut shader.insts[id.index()], &replace);
            let inst = &shader.insts[id.index()];
            debug_assert_eq!(hash, rename_and_hash(&mut inst.clone(), &[]), "renamed while hashed");
            // `FxHasher::finish` rotates its best-mixed high bits down to the low ones.
            let head = &mut heads[hash as usize & (buckets - 1)];
            let mut at = *head;
            while at != 0 {
                let e = &entries[at as usize - 1];
                if e.hash == hash && same(&shader.insts[e.inst.index()], inst) {
                    break;
                }
                at = e.next;
            }
            if at == 0 {
                entries.push(Available { inst: id, block: b, hash, next: *head });
                *head = entries.len() as u32;
                continue;
            }
            let e = &mut entries[at as usize - 1];
            if dominates(e.block, b) {
                if replace.is_empty() {
                    replace.resize(shader.values.len(), None);
                }
                let dest = shader.get(inst.dests)[0];
                replace[dest.index()] = Some(shader.get(shader.insts[e.inst.index()].dests)[0]);
                shader.insts[id.index()].dead = true;
                kept -= 1;
                changed = true;
            } else {
                (e.inst, e.block) = (id, b);
            }
        }
        list.truncate(kept);
        shader.blocks[b.index()].insts = list;
    }
    if changed {
        if all_visited {
            // What is left is what `rewrite_uses` would do: φ and parallel-copy arguments and
            // branch conditions.
            for &id in &with_args {
                let inst = &shader.insts[id.index()];
                if !inst.dead {
                    for v in shader.get_mut(inst.args) {
                        if let Some(r) = replace[v.index()] {
                            *v = r;
                        }
                    }
                }
            }
            for block in &mut shader.blocks {
                if let Terminator::Branch { cond, .. } = &mut block.term
                    && let Some(r) = replace[cond.index()]
                {
                    *cond = r;
                }
            }
        } else {
            shader.rewrite_uses(|v| replace[v.index()].map(Operand::Value));
            // The blocks the walk did not visit (unreachable ones) lost nothing; this only
            // keeps `compact`'s guarantee for them.
            shader.compact();
        }
    }
    (scratch.counts, scratch.available, scratch.values) = (heads_buf, entries, replace);
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    #[test]
    fn merges_dominated_duplicates_only() {
        let mut s2 = parse(
            "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = FADD.f32 %0, #0x3F800000\n    %2 = FADD.f32 %0, #0x3F800000\n    %3 = FADD.f32 %1, %2\n    branch.z %3, block2, block1\nblock1:\n    %4 = FADD.f32 %0, #0x3F800000\n    %5 = copy #0x12345678\n    jump block2\nblock2:\n    %6 = copy #0x12345678\n    %7 = FADD.f32 %6, %3\n    end\n",
        )
        .unwrap();
        assert!(run(&mut s2));
        crate::ir::verify::verify(&s2).unwrap();
        let text = print(&s2);
        assert!(text.contains("%3 = FADD.f32 %1, %1"), "{text}");
        assert!(!text.contains("%4 ="), "block1's copy of %1 is dominated by block0: {text}");
        assert!(text.contains("%6 = copy #0x12345678"), "block1 does not dominate block2: {text}");
    }
}
