//! Common-subexpression elimination over the dominator tree: an instruction equal to one that
//! dominates it (same opcode, modifiers, immediates and sources) is replaced by it. Only pure
//! single-result ALU instructions and constant materialisations take part; cross-lane
//! operations (CLPER, WMASK) are excluded because their results depend on the active lanes.
//!
//! Blocks are visited in dominator-tree pre-order with one table of available expressions. An
//! entry whose block does not dominate the current block is stale (its subtree is finished)
//! and is overwritten instead of removed on the way back up, so each instruction costs one
//! hash-table probe: linear in the program size.

use crate::ir::dom::DomTree;
use crate::ir::{Block, Inst, InstKind, Operand, Shader, Src, Value};
use crate::valhall::{Instr, Opcode};
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::{BuildHasher, Hash, Hasher};

/// What makes two instructions compute the same value. Equality compares every field; the
/// hash covers only those that differ in practice (operand fields of `mach` are always reset
/// in the IR), which keeps hashing cheap.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Key {
    kind: u8,
    mach: Instr,
    srcs: [Src; 4],
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u32(u32::from(self.kind) | (self.mach.opcode as u32) << 8 | u32::from(self.mach.flow) << 24);
        for m in self.mach.mods.chunks(8) {
            let mut word = [0u8; 8];
            word[..m.len()].copy_from_slice(m);
            h.write_u64(u64::from_le_bytes(word));
        }
        for &imm in &self.mach.imms {
            h.write_u32(imm);
        }
        for src in &self.srcs {
            let (tag, payload) = match src.operand {
                Operand::None => (0u64, 0u64),
                Operand::Value(v) => (1, u64::from(v.0)),
                Operand::Pair(lo, hi) => (2, u64::from(lo.0) | u64::from(hi.0) << 32),
                Operand::Const(c) => (3, u64::from(c)),
                Operand::Uniform(u) => (4, u64::from(u)),
                Operand::Special(s) => (5, u64::from(s.page) | u64::from(s.entry) << 8 | u64::from(s.high) << 16),
            };
            let mods = u64::from(src.neg)
                | u64::from(src.abs) << 1
                | u64::from(src.not) << 2
                | u64::from(src.swizzle) << 8
                | u64::from(src.widen) << 16
                | u64::from(src.lane) << 24;
            h.write_u64(tag | mods << 8);
            h.write_u64(payload);
        }
    }
}

fn key(inst: &Inst) -> Option<Key> {
    match inst.kind {
        InstKind::Copy if !matches!(inst.srcs[0].operand, Operand::Value(_)) => {
            Some(Key { kind: 1, mach: inst.mach, srcs: inst.srcs })
        }
        InstKind::Machine => {
            let info = inst.mach.info();
            let pure = info.unit.is_alu()
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
                );
            pure.then_some(Key { kind: 0, mach: inst.mach, srcs: inst.srcs })
        }
        _ => None,
    }
}

/// An available expression: its key, the value computing it, the block of its definition, and
/// the next entry with the same hash (`u32::MAX`: none).
struct Available {
    key: Key,
    value: Value,
    block: Block,
    next: u32,
}

pub fn run(shader: &mut Shader) -> bool {
    let dom = DomTree::compute(shader);
    // Keys are large, so the hash table holds only their hashes; entries with equal hashes are
    // chained.
    let mut heads: FxHashMap<u64, u32> = FxHashMap::default();
    let mut entries: Vec<Available> = Vec::new();
    let mut replace: Vec<Option<Value>> = vec![None; shader.values.len()];
    let mut changed = false;
    for b in dom.preorder() {
        for i in 0..shader.blocks[b.index()].insts.len() {
            let id = shader.blocks[b.index()].insts[i];
            let inst = shader.inst_mut(id);
            if inst.dead {
                continue;
            }
            // Sources first read earlier replacements, so chains collapse in one walk.
            for src in inst.srcs.iter_mut() {
                if let Operand::Value(v) = src.operand
                    && let Some(r) = replace[v.index()]
                {
                    src.operand = Operand::Value(r);
                }
            }
            let Some(key) = key(inst) else { continue };
            let dests = inst.dests;
            let dest = shader.get(dests)[0];
            let hash = FxBuildHasher.hash_one(&key);
            let head = heads.entry(hash).or_insert(u32::MAX);
            let mut at = *head;
            while at != u32::MAX && entries[at as usize].key != key {
                at = entries[at as usize].next;
            }
            if at == u32::MAX {
                entries.push(Available { key, value: dest, block: b, next: *head });
                *head = entries.len() as u32 - 1;
                continue;
            }
            let e = &mut entries[at as usize];
            if dom.dominates(e.block, b) {
                replace[dest.index()] = Some(e.value);
                shader.inst_mut(id).dead = true;
                changed = true;
            } else {
                (e.value, e.block) = (dest, b);
            }
        }
    }
    if changed {
        shader.rewrite_uses(|v| replace[v.index()].map(Operand::Value));
        shader.compact();
    }
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
