//! Common-subexpression elimination over the dominator tree: an instruction equal to one that
//! dominates it (same opcode, modifiers, immediates and sources) is replaced by it. Only pure
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

use super::{Analyses, Outcome};
use crate::ir::{Block, Inst, InstId, InstKind, Operand, Shader, Terminator, Value};
use crate::valhall::Opcode;
use rustc_hash::FxHasher;
use std::hash::Hasher;

/// Whether the instruction takes part: a `copy` of a non-value operand, or a pure
/// single-result ALU instruction.
fn candidate(inst: &Inst) -> bool {
    match inst.kind {
        InstKind::Copy => !matches!(inst.srcs[0].operand, Operand::Value(_)),
        InstKind::Machine => {
            let info = inst.mach.info();
            info.unit.is_alu()
                && !inst.has_side_effects()
                && info.staging.is_empty()
                && inst.dests.len() == 1
                && !matches!(
                    inst.mach.opcode,
                    Opcode::CLPER_I32
                        | Opcode::CLPER_V2U16
                        | Opcode::CLPER_V4U8
                        | Opcode::CLPER_S32
                        | Opcode::CLPER_V2S16
                        | Opcode::CLPER_V4S8
                        | Opcode::CLPER_U64
                        | Opcode::CLPER_S64
                        | Opcode::WMASK
                )
        }
        _ => false,
    }
}

/// Whether two candidates compute the same value: same kind, same machine template (opcode,
/// flow, modifiers, immediates; its operand fields are always reset in the IR) and same
/// sources.
fn same(a: &Inst, b: &Inst) -> bool {
    a.kind == b.kind && a.srcs == b.srcs && a.mach == b.mach
}

/// A hash of the fields that tell candidates apart in practice (equality is decided by
/// [`same`]).
fn hash(inst: &Inst) -> u64 {
    let mut h = FxHasher::default();
    let m = &inst.mach;
    h.write_u32(u32::from(inst.kind == InstKind::Copy) | (m.opcode as u32) << 8 | u32::from(m.flow) << 24);
    for chunk in m.mods.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        h.write_u64(u64::from_le_bytes(word));
    }
    h.write_u64(u64::from(m.imms[0]) | u64::from(m.imms[1]) << 32);
    for src in &inst.srcs {
        let (tag, payload) = match src.operand {
            Operand::None => break,
            Operand::Value(v) => (1u32, u64::from(v.0)),
            Operand::Pair(lo, hi) => (2, u64::from(lo.0) | u64::from(hi.0) << 32),
            Operand::Const(c) => (3, u64::from(c)),
            Operand::Uniform(u) => (4, u64::from(u)),
            Operand::Special(s) => (5, u64::from(s.page) | u64::from(s.entry) << 8 | u64::from(s.high) << 16),
        };
        let mods = u32::from(src.neg) << 3
            | u32::from(src.abs) << 4
            | u32::from(src.not) << 5
            | u32::from(src.swizzle) << 8
            | u32::from(src.widen) << 16
            | u32::from(src.lane) << 24;
        h.write_u32(tag | mods);
        h.write_u64(payload);
    }
    h.finish()
}

/// An available expression: the instruction computing it, its value, the block of its
/// definition, its hash, and the next entry in the same bucket (`u32::MAX`: none).
struct Available {
    inst: InstId,
    value: Value,
    block: Block,
    hash: u64,
    next: u32,
}

pub fn run(shader: &mut Shader) -> bool {
    run_reporting(shader, &mut Analyses::default()).changed
}

/// [`run`], also saying whether a φ argument was renamed and whether a copy was replaced;
/// takes the dominator tree from `analyses` (this pass does not change the CFG).
pub fn run_reporting(shader: &mut Shader, analyses: &mut Analyses) -> Outcome {
    let mut outcome = Outcome::default();
    // Straight-line code needs no dominator tree.
    let dom = (shader.blocks.len() > 1).then(|| analyses.dom(shader));
    let order = match dom {
        Some(dom) => dom.preorder(),
        None => vec![shader.entry()],
    };
    let dominates = |a: Block, b: Block| dom.is_none_or(|d| d.dominates(a, b));
    // A chained hash table sized once from the instruction count (never rehashed): bucket
    // heads index `entries`, whose `next` fields chain the entries of one bucket.
    let buckets = (2 * shader.insts.len()).next_power_of_two().max(16);
    let mut heads: Vec<u32> = vec![u32::MAX; buckets];
    let mut entries: Vec<Available> = Vec::with_capacity(shader.insts.len());
    let mut replace: Vec<Option<Value>> = vec![None; shader.values.len()];
    let mut changed = false;
    let all_visited = order.len() == shader.blocks.len();
    // Instructions with operands the walk does not rename (pairs, staging lists, φ and
    // parallel-copy arguments), renamed once at the end.
    let mut with_lists: Vec<InstId> = Vec::new();
    for b in order {
        for i in 0..shader.blocks[b.index()].insts.len() {
            let id = shader.blocks[b.index()].insts[i];
            let inst = &mut shader.insts[id.index()];
            if inst.dead {
                continue;
            }
            if !inst.args.is_empty()
                || inst.staging.iter().any(|l| !l.is_empty())
                || inst.srcs.iter().any(|s| matches!(s.operand, Operand::Pair(..)))
            {
                with_lists.push(id);
            }
            // Sources first read earlier replacements (there are some only once something
            // changed), so chains collapse in one walk.
            if changed {
                for src in inst.srcs.iter_mut() {
                    if let Operand::Value(v) = src.operand
                        && let Some(r) = replace[v.index()]
                    {
                        src.operand = Operand::Value(r);
                    }
                }
            }
            if !candidate(inst) {
                continue;
            }
            let inst = &shader.insts[id.index()];
            let dest = shader.get(inst.dests)[0];
            let hash = hash(inst);
            // `FxHasher::finish` rotates its best-mixed high bits down to the low ones.
            let head = &mut heads[hash as usize & (buckets - 1)];
            let mut at = *head;
            while at != u32::MAX {
                let e = &entries[at as usize];
                if e.hash == hash && same(&shader.insts[e.inst.index()], inst) {
                    break;
                }
                at = e.next;
            }
            if at == u32::MAX {
                entries.push(Available { inst: id, value: dest, block: b, hash, next: *head });
                *head = entries.len() as u32 - 1;
                continue;
            }
            let e = &mut entries[at as usize];
            if dominates(e.block, b) {
                outcome.copies_replaced |= shader.insts[id.index()].kind == InstKind::Copy;
                replace[dest.index()] = Some(e.value);
                shader.insts[id.index()].dead = true;
                changed = true;
            } else {
                (e.inst, e.value, e.block) = (id, dest, b);
            }
        }
    }
    if changed {
        outcome.phi_args_renamed = phi_arg_replaced(shader, &replace);
        let map = |v: Value| replace[v.index()].map(Operand::Value);
        if all_visited {
            // Every source `Value` was renamed on the way (a definition dominates its non-φ
            // uses, so it is visited first); what is left is what `rewrite_uses` would do.
            for &id in &with_lists {
                shader.rewrite_inst_uses(id, map);
            }
            for block in &mut shader.blocks {
                if let Terminator::Branch { cond, .. } = &mut block.term
                    && let Some(r) = replace[cond.index()]
                {
                    *cond = r;
                }
            }
        } else {
            shader.rewrite_uses(map);
        }
        shader.compact();
    }
    outcome.changed = changed;
    outcome
}

/// Whether a φ reads a value that is being replaced.
fn phi_arg_replaced(shader: &Shader, replace: &[Option<Value>]) -> bool {
    shader.blocks.iter().any(|block| {
        block
            .insts
            .iter()
            .map(|&id| shader.inst(id))
            .take_while(|inst| inst.kind == InstKind::Phi)
            .any(|phi| !phi.dead && shader.get(phi.args).iter().any(|v| replace[v.index()].is_some()))
    })
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
