//! Dead-code elimination by mark and sweep: instructions with side effects and branch
//! conditions are live; so is every definition a live instruction reads. Everything else is
//! removed — including cycles of φs and updates that only feed each other (a loop counter
//! nobody reads after the loop). Linear in the program size. A single block that ends the
//! shader is marked in one backward walk (a definition precedes its uses there).
//!
//! Dead components go too: a live load of several components (varyings, attributes, texels:
//! [`facts::NARROWABLE`]) whose last ones nobody reads transfers only up to the last one read,
//! as Mesa's vector shrinking leaves it. The leading components stay: a load starts at its
//! first one.

use super::{Scratch, facts, filled};
use crate::ir::{InstId, Shader, Terminator, Value};
use crate::valhall::tables::{IsaEnum, VectorSize};

pub fn run(shader: &mut Shader) -> bool {
    run_in(shader, &mut Scratch::default())
}

/// [`run`] with side tables borrowed from `scratch`.
pub fn run_in(shader: &mut Shader, scratch: &mut Scratch) -> bool {
    let facts = facts::table();
    let mut live_buf = filled(std::mem::take(&mut scratch.flags), shader.insts.len(), false);
    let mut read = filled(std::mem::take(&mut scratch.reads), shader.values.len(), false);
    // Sliced to the instruction count, so that indexing it by an instruction needs no second
    // bounds check.
    let live = &mut live_buf[..shader.insts.len()];
    if let [block] = &shader.blocks[..]
        && block.term == Terminator::End
    {
        let changed = straight_line(shader, facts, live, &mut read);
        (scratch.flags, scratch.reads) = (live_buf, read);
        return changed;
    }
    let mut work = std::mem::take(&mut scratch.insts);
    work.clear();
    work.reserve(shader.insts.len());
    for block in &shader.blocks {
        for &id in &block.insts {
            let inst = &shader.insts[id.index()];
            if !inst.dead && facts::of(facts, inst) & facts::SIDE_EFFECTS != 0 && !live[id.index()] {
                live[id.index()] = true;
                work.push(id);
            }
        }
        if let Terminator::Branch { cond, .. } = block.term {
            mark_value(shader, cond, live, &mut read, &mut work);
        }
    }
    let mut loads = Vec::new();
    while let Some(id) = work.pop() {
        let inst = &shader.insts[id.index()];
        shader.for_each_use(inst, |v| mark_value(shader, v, live, &mut read, &mut work));
        if facts::of(facts, inst) & facts::NARROWABLE != 0 {
            loads.push(id);
        }
    }
    let mut changed = narrow_all(shader, &loads, &read);
    changed |= sweep(shader, live);
    (scratch.flags, scratch.insts, scratch.reads) = (live_buf, work, read);
    changed
}

/// Marks `v` read and its definition live, queueing the definition the first time.
#[inline]
pub(super) fn mark_value(shader: &Shader, v: Value, live: &mut [bool], read: &mut [bool], work: &mut Vec<InstId>) {
    read[v.index()] = true;
    if let Some(def) = shader.values[v.index()].def
        && !live[def.index()]
    {
        live[def.index()] = true;
        work.push(def);
    }
}

/// [`narrow`] for each of `loads`; whether any changed.
pub(super) fn narrow_all(shader: &mut Shader, loads: &[InstId], read: &[bool]) -> bool {
    let mut changed = false;
    for &id in loads {
        changed |= narrow(shader, id, read);
    }
    changed
}

/// Drops the trailing components of the live load `id` that no value marked `read` is; whether
/// it did. Loads that pack two components in a register (16-bit formats) are left alone.
fn narrow(shader: &mut Shader, id: InstId, read: &[bool]) -> bool {
    let inst = shader.inst(id);
    let list = inst.staging[0];
    let Some(size) = inst.mach.vector_size() else { return false };
    let components = usize::from(size.index()) + 1;
    if list.len() != components {
        return false;
    }
    // A live load has a reader, so at least its first component stays.
    let needed = shader.get(list).iter().rposition(|v| read[v.index()]).map_or(1, |k| k + 1);
    if needed == components {
        return false;
    }
    for k in needed..components {
        let v = shader.get(list)[k];
        shader.values[v.index()].def = None;
    }
    let inst = shader.inst_mut(id);
    inst.staging[0] = list.prefix(needed);
    let size = VectorSize::from_index((needed - 1) as u8).expect("1 to 3 components");
    let _ = inst.mach.set_vector_size(size);
    true
}

/// Kills every listed instruction that is not `live` and drops it from its block's list as it
/// goes (what `Shader::compact` would do in a second walk); a live instruction is never dead,
/// so the lists keep exactly the live ones. Whether an instruction died.
pub(super) fn sweep(shader: &mut Shader, live: &[bool]) -> bool {
    let mut changed = false;
    let Shader { blocks, insts, .. } = shader;
    for block in blocks.iter_mut() {
        block.insts.retain(|&id| {
            let inst = &mut insts[id.index()];
            if live[id.index()] {
                return true;
            }
            changed |= !inst.dead;
            inst.dead = true;
            false
        });
    }
    changed
}

/// Straight-line code (most shaders): every use follows its definition, so one walk backwards
/// decides every instruction, without a worklist or a second sweep. The same walk compacts the
/// list (the kept instructions gather at its end, in order), which spares `Shader::compact`'s
/// second walk; and every reader of a load comes before the load in the walk, so the load is
/// narrowed when the walk reaches it.
fn straight_line(shader: &mut Shader, facts: &[u8], live: &mut [bool], read: &mut [bool]) -> bool {
    let mut list = std::mem::take(&mut shader.blocks[0].insts);
    // `list[kept..]`: the instructions kept so far.
    let mut kept = list.len();
    let mut changed = false;
    for r in (0..list.len()).rev() {
        let id = list[r];
        let inst = &shader.insts[id.index()];
        if inst.dead {
            continue;
        }
        if !(live[id.index()] || facts::of(facts, inst) & facts::SIDE_EFFECTS != 0) {
            shader.insts[id.index()].dead = true;
            changed = true;
            continue;
        }
        shader.for_each_use(inst, |v| {
            read[v.index()] = true;
            if let Some(def) = shader.values[v.index()].def {
                live[def.index()] = true;
            }
        });
        // (Only a message writes a staging operand.)
        if !inst.staging[0].is_empty() && facts::of(facts, inst) & facts::NARROWABLE != 0 {
            changed |= narrow(shader, id, read);
        }
        kept -= 1;
        list[kept] = id;
    }
    list.drain(..kept);
    shader.blocks[0].insts = list;
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    /// The IR `text` after a run that changes it (checked by the verifier), which a second run
    /// leaves as it is.
    fn after_dce(text: &str) -> String {
        let mut s = parse(text).unwrap();
        assert!(run(&mut s), "nothing removed from {text}");
        crate::ir::verify::verify(&s).unwrap();
        let out = print(&s);
        assert!(!run(&mut s), "a second run changed {out}");
        out
    }

    #[test]
    fn removes_dead_chains_keeps_side_effects() {
        let text = after_dce(
            "compute shader\nblock0:\n    %0 = preload r60\n    %1 = FADD.f32 %0, #0x0\n    %2 = FADD.f32 %1, %1\n    %3 = IADD.s32 %0, #0x1\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    BARRIER.slot7\n    end\n",
        );
        assert_eq!(
            text,
            "compute shader\nblock0:\n    %0 = preload r60\n    %3 = IADD.s32 %0, #0x1\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    BARRIER.slot7\n    end\n"
        );
    }

    #[test]
    fn narrows_loads_to_the_last_component_read() {
        let text = after_dce(
            "fragment shader\nblock0:\n    %0 = preload r61\n    %1, %2, %3, %4 = LD_VAR_BUF_IMM.f32.slot0.v4.src_f32.center.store %0, index:0x0\n    %5, %6, %7, %8 = LD_VAR_BUF_IMM.f32.slot0.v4.src_f32.center.store %0, index:0x10\n    %9 = FADD.f32 %1, %7\n    STORE.i32.slot0 @%9, %0:%0, offset:0\n    end\n",
        );
        // A leading component nobody reads stays (%6): a load starts at its first component.
        assert_eq!(
            text,
            "fragment shader\nblock0:\n    %0 = preload r61\n    %1 = LD_VAR_BUF_IMM.f32.slot0.src_f32.center.store %0, index:0x0\n    %5, %6, %7 = LD_VAR_BUF_IMM.f32.slot0.v3.src_f32.center.store %0, index:0x10\n    %9 = FADD.f32 %1, %7\n    STORE.i32.slot0 @%9, %0:%0, offset:0\n    end\n"
        );
    }

    #[test]
    fn narrows_across_blocks_and_leaves_packed_loads() {
        // The general path: a component read only in another block, or by a φ, is kept.
        let text = after_dce(
            "vertex shader\nblock0:\n    %0 = preload r60\n    %1 = preload r61\n    %2, %3, %4, %5 = LD_ATTR_IMM.v4.f32.slot0 %0, %1, index:0x0, table:0x1\n    %6, %7 = LD_ATTR_IMM.v4.f16.slot0 %0, %1, index:0x1, table:0x1\n    branch.z %2, block2, block1\nblock1:                    ; preds: block0\n    jump block2\nblock2:                    ; preds: block0, block1\n    %8 = phi [%3, block0], [%2, block1]\n    STORE.i32.slot0 @%8, %0:%6, offset:0\n    end\n",
        );
        assert!(text.contains("%2, %3 = LD_ATTR_IMM.v2.f32.slot0 %0, %1"), "{text}");
        // Two 16-bit components per register: not narrowed (%7 is never read).
        assert!(text.contains("%6, %7 = LD_ATTR_IMM.v4.f16.slot0"), "{text}");
    }

    #[test]
    fn removes_dead_phi_cycles() {
        let text = after_dce(
            "compute shader\nblock0:\n    %0 = preload r60\n    jump block1\nblock1:\n    %1 = phi [%0, block0], [%2, block1]\n    %2 = IADD.s32 %1, #0x1\n    branch.z %0, block2, block1\nblock2:\n    end\n",
        );
        assert!(!text.contains("phi"), "{text}");
        assert!(text.contains("preload"), "the branch condition keeps its definition");
    }
}
