//! Common-subexpression elimination over the dominator tree: an instruction equal to one that
//! dominates it (same opcode, modifiers, immediates and sources) is replaced by it. Only pure
//! single-result ALU instructions and constant materialisations take part; cross-lane
//! operations (CLPER, WMASK) are excluded because their results depend on the active lanes.
//! A scoped hash table makes it linear in the program size.

use crate::ir::dom::DomTree;
use crate::ir::{Block, Inst, InstKind, Operand, Shader, Src, Value};
use crate::valhall::{Instr, Opcode};
use std::collections::HashMap;

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    kind: u8,
    mach: Instr,
    srcs: [Src; 4],
}

fn key(shader: &Shader, inst: &Inst) -> Option<Key> {
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
            let _ = shader;
            pure.then_some(Key { kind: 0, mach: inst.mach, srcs: inst.srcs })
        }
        _ => None,
    }
}

pub fn run(shader: &mut Shader) -> bool {
    let dom = DomTree::compute(shader);
    let mut table: HashMap<Key, Value> = HashMap::new();
    let mut replace: Vec<Option<Value>> = vec![None; shader.values.len()];
    let mut changed = false;
    // Iterative pre-order walk; on leaving a block its entries are removed.
    let Some(&entry) = dom.rpo.first() else { return false };
    let mut stack: Vec<(Block, usize, Vec<Key>)> = vec![(entry, 0, Vec::new())];
    let mut entered = vec![false; shader.blocks.len()];
    while let Some((block, child, inserted)) = stack.last_mut() {
        let b = *block;
        if !entered[b.index()] {
            entered[b.index()] = true;
            for id in shader.block_insts(b).collect::<Vec<_>>() {
                let mut inst = *shader.inst(id);
                // Sources first read earlier replacements, so chains collapse in one walk.
                let mut renamed = false;
                for src in inst.srcs.iter_mut() {
                    if let Operand::Value(v) = src.operand
                        && let Some(r) = replace[v.index()]
                    {
                        src.operand = Operand::Value(r);
                        renamed = true;
                    }
                }
                if renamed {
                    shader.inst_mut(id).srcs = inst.srcs;
                }
                let Some(k) = key(shader, &inst) else { continue };
                let dest = shader.get(inst.dests)[0];
                match table.get(&k) {
                    Some(&earlier) => {
                        replace[dest.index()] = Some(earlier);
                        shader.inst_mut(id).dead = true;
                        changed = true;
                    }
                    None => {
                        table.insert(k.clone(), dest);
                        inserted.push(k);
                    }
                }
            }
        }
        let children = dom.children(b);
        if *child < children.len() {
            let next = children[*child];
            *child += 1;
            stack.push((next, 0, Vec::new()));
        } else {
            for k in inserted.drain(..) {
                table.remove(&k);
            }
            stack.pop();
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
