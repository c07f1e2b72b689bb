//! Dead-code elimination by mark and sweep: instructions with side effects and branch
//! conditions are live; so is every definition a live instruction reads. Everything else is
//! removed — including cycles of φs and updates that only feed each other (a loop counter
//! nobody reads after the loop). Linear in the program size. A single block that ends the
//! shader is marked in one backward walk (a definition precedes its uses there).

use super::{Scratch, facts, filled};
use crate::ir::{InstId, Shader, Terminator, Value};

pub fn run(shader: &mut Shader) -> bool {
    run_in(shader, &mut Scratch::default())
}

/// [`run`] with side tables borrowed from `scratch`.
pub fn run_in(shader: &mut Shader, scratch: &mut Scratch) -> bool {
    let facts = facts::table();
    let mut live_buf = filled(std::mem::take(&mut scratch.flags), shader.insts.len(), false);
    // Sliced to the instruction count, so that indexing it by an instruction needs no second
    // bounds check.
    let live = &mut live_buf[..shader.insts.len()];
    if let [block] = &shader.blocks[..]
        && block.term == Terminator::End
    {
        let changed = straight_line(shader, facts, live);
        scratch.flags = live_buf;
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
            mark_value(shader, cond, live, &mut work);
        }
    }
    while let Some(id) = work.pop() {
        shader.for_each_use(&shader.insts[id.index()], |v| mark_value(shader, v, live, &mut work));
    }
    let changed = sweep(shader, live);
    (scratch.flags, scratch.insts) = (live_buf, work);
    changed
}

/// Marks the definition of `v` live and queues it, the first time.
#[inline]
pub(super) fn mark_value(shader: &Shader, v: Value, live: &mut [bool], work: &mut Vec<InstId>) {
    if let Some(def) = shader.values[v.index()].def
        && !live[def.index()]
    {
        live[def.index()] = true;
        work.push(def);
    }
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
/// second walk.
fn straight_line(shader: &mut Shader, facts: &[u8], live: &mut [bool]) -> bool {
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
            if let Some(def) = shader.values[v.index()].def {
                live[def.index()] = true;
            }
        });
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

    #[test]
    fn removes_dead_chains_keeps_side_effects() {
        let mut s = parse(
            "compute shader\nblock0:\n    %0 = preload r60\n    %1 = FADD.f32 %0, #0x0\n    %2 = FADD.f32 %1, %1\n    %3 = IADD.s32 %0, #0x1\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    BARRIER.slot7\n    end\n",
        )
        .unwrap();
        assert!(run(&mut s));
        assert_eq!(
            print(&s),
            "compute shader\nblock0:\n    %0 = preload r60\n    %3 = IADD.s32 %0, #0x1\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    BARRIER.slot7\n    end\n"
        );
        assert!(!run(&mut s));
    }

    #[test]
    fn removes_dead_phi_cycles() {
        let mut s = parse(
            "compute shader\nblock0:\n    %0 = preload r60\n    jump block1\nblock1:\n    %1 = phi [%0, block0], [%2, block1]\n    %2 = IADD.s32 %1, #0x1\n    branch.z %0, block2, block1\nblock2:\n    end\n",
        )
        .unwrap();
        assert!(run(&mut s));
        crate::ir::verify::verify(&s).unwrap();
        assert!(!print(&s).contains("phi"), "{}", print(&s));
        assert!(print(&s).contains("preload"), "the branch condition keeps its definition");
    }
}
