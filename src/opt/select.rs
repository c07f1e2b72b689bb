//! If-conversion (Mesa's `nir_opt_peephole_select`): an `if` whose arms only compute values —
//! pure ALU instructions and copies, at most [`LIMIT`] in all — runs both arms unconditionally
//! and picks each result with a `CSEL`. The branch, its arms and the φs of the join go; the
//! block that branched now jumps to the join, which `merge_blocks` then merges into it.
//!
//! Shapes: a diamond (the branch goes to two arm blocks that both jump to the join, its only
//! predecessors) and a triangle (one arm, the other edge goes straight to the join). An arm is
//! a block whose only predecessor is the branching block, without φs, ending in a jump. A join
//! that is the branching block itself (a loop) is left alone.
//!
//! Why: a divergent branch runs both arms anyway, and a uniform one pays a branch, the
//! `.reconverge` flow and the copies that resolve the φs; small arms are cheaper run straight.
//! Arms with messages, side effects or cross-lane operations stay branched (a texture or
//! derivative must not run for lanes that skip it). Linear: each branch is looked at once, and
//! each instruction of an arm moves once.

use super::facts;
use crate::ir::builder::select_parts;
use crate::ir::{Block, InstKind, Operand, Shader, Src, Terminator};

/// The most instructions the arms of one `if` may hold together (Mesa's panfrost uses 64).
pub const LIMIT: usize = 64;

/// Converts every `if` of the shapes above; whether any changed.
pub fn run(shader: &mut Shader) -> bool {
    if shader.blocks.len() < 3 {
        return false;
    }
    let facts = facts::table();
    let mut changed = false;
    for b in 0..shader.blocks.len() {
        let Terminator::Branch { cond, if_zero, taken, fallthrough } = shader.blocks[b].term else { continue };
        let branch = Block(b as u32);
        // The join and, per edge, the arm block on it (None: the edge goes straight there).
        let (join, taken_arm, fall_arm) =
            match (arm_target(shader, branch, taken), arm_target(shader, branch, fallthrough)) {
                (Some(j), Some(k)) if j == k => (j, Some(taken), Some(fallthrough)),
                (Some(j), None) if j == fallthrough => (j, Some(taken), None),
                (None, Some(j)) if j == taken => (j, None, Some(fallthrough)),
                _ => continue,
            };
        if join == branch || shader.blocks[join.index()].preds.len() != 2 {
            continue;
        }
        let arms = [taken_arm, fall_arm];
        let size: usize = arms.iter().flatten().map(|a| shader.blocks[a.index()].insts.len()).sum();
        if size > LIMIT || !arms.iter().flatten().all(|&a| only_values(shader, facts, a)) {
            continue;
        }
        // The predecessor of the join on each edge.
        let taken_pred = taken_arm.unwrap_or(branch);
        let fall_pred = fall_arm.unwrap_or(branch);
        // Each φ of the join becomes, in place, a select on `cond` of its values on the two
        // edges: the taken edge is the one for `cond` zero when `if_zero`, else non-zero.
        let preds = shader.blocks[join.index()].preds.clone();
        let taken_index = preds.iter().position(|&p| p == taken_pred).expect("the join's predecessors");
        let fall_index = preds.iter().position(|&p| p == fall_pred).expect("the join's predecessors");
        for i in 0..shader.blocks[join.index()].insts.len() {
            let id = shader.blocks[join.index()].insts[i];
            let inst = shader.inst(id);
            if inst.dead {
                continue;
            }
            if inst.kind != InstKind::Phi {
                break;
            }
            let args = shader.get(inst.args);
            let (on_taken, on_fall) = (args[taken_index], args[fall_index]);
            let (zero, nonzero) = if if_zero { (on_taken, on_fall) } else { (on_fall, on_taken) };
            let value = |v| Src::new(Operand::Value(v));
            let (mach, srcs) = select_parts(value(cond), value(nonzero), value(zero));
            let inst = shader.inst_mut(id);
            inst.kind = InstKind::Machine;
            inst.mach = mach;
            inst.args = crate::ir::ValueList::EMPTY;
            inst.srcs = srcs;
        }
        // The arms' instructions move to the end of the branching block, in layout order (each
        // reads only what dominates its arm: what dominates the branch, or its own results).
        let mut in_layout = arms;
        in_layout.sort_by_key(|a| a.map(|a| a.0));
        for arm in in_layout.into_iter().flatten() {
            let moved = std::mem::take(&mut shader.blocks[arm.index()].insts);
            shader.blocks[b].insts.extend(moved);
            shader.blocks[arm.index()].preds.clear();
            shader.blocks[arm.index()].term = Terminator::End;
        }
        shader.blocks[b].term = Terminator::Jump(join);
        shader.blocks[join.index()].preds = vec![branch];
        changed = true;
    }
    if changed {
        super::unreachable::run(shader);
    }
    changed
}

/// The block `arm` jumps to when it can be an arm of the branch in `branch`: its only
/// predecessor is `branch`, it has no φ and it ends in a jump.
fn arm_target(shader: &Shader, branch: Block, arm: Block) -> Option<Block> {
    let data = shader.block(arm);
    let Terminator::Jump(next) = data.term else { return None };
    (data.preds.len() == 1 && data.preds[0] == branch).then_some(next)
}

/// Whether every live instruction of `block` only computes a value: a copy, an undefined value
/// or a pure ALU operation (no message, no side effect, no cross-lane read). φs are excluded.
fn only_values(shader: &Shader, facts: &[u8], block: Block) -> bool {
    shader.block(block).insts.iter().map(|&id| shader.inst(id)).filter(|i| !i.dead).all(|inst| match inst.kind {
        InstKind::Copy | InstKind::Undef => true,
        InstKind::Machine => facts::of(facts, inst) & facts::PURE_ALU != 0,
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    const HEAD: &str = "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = preload r61\n";

    #[test]
    fn converts_a_diamond() {
        let mut s = parse(&format!(
            "{HEAD}    branch.z %0, block2, block1\nblock1:\n    %2 = FADD.f32 %0, %1\n    jump block3\nblock2:\n    %3 = copy #0x3F800000\n    jump block3\nblock3:\n    %4 = phi [%2, block1], [%3, block2]\n    STORE.i32.slot0 @%4, %0:%1, offset:0\n    end\n"
        ))
        .unwrap();
        assert!(run(&mut s));
        crate::ir::verify::verify(&s).unwrap();
        // Taken (block2) when %0 is zero: the CSEL picks %3 then.
        assert_eq!(
            print(&s),
            format!(
                "{HEAD}    %2 = FADD.f32 %0, %1\n    %3 = copy #0x3F800000\n    jump block1\nblock1:                    ; preds: block0\n    %4 = CSEL.u32.eq %0, #0x0, %3, %2\n    STORE.i32.slot0 @%4, %0:%1, offset:0\n    end\n"
            )
        );
        assert!(!run(&mut s));
    }

    #[test]
    fn converts_a_triangle_on_either_side() {
        // block1 is the arm, the other edge goes straight to block2; either way %0 = 0 takes
        // the edge from block0, whose φ argument is %1.
        for branch in ["branch.z %0, block2, block1", "branch.nz %0, block1, block2"] {
            let mut s = parse(&format!(
                "{HEAD}    {branch}\nblock1:\n    %2 = FADD.f32 %0, %1\n    jump block2\nblock2:\n    %3 = phi [%1, block0], [%2, block1]\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
            ))
            .unwrap();
            assert!(run(&mut s), "{branch}");
            crate::ir::verify::verify(&s).unwrap();
            let text = print(&s);
            assert!(text.contains("%3 = CSEL.u32.eq %0, #0x0, %1, %2"), "{branch}: {text}");
            assert!(!text.contains("branch"), "{text}");
        }
    }

    #[test]
    fn keeps_arms_with_effects_or_cross_lane_reads_and_arms_over_the_limit() {
        // A store (a side effect) and a cross-lane read in an arm; then arms over the limit.
        for arm in ["    STORE.i32.slot0 @%0, %0:%1, offset:0\n", "    %2 = CLPER.i32.subgroup4 %0, #0x0.b00\n"] {
            let text =
                format!("{HEAD}    branch.z %0, block2, block1\nblock1:\n{arm}    jump block2\nblock2:\n    end\n");
            let mut s = parse(&text).unwrap();
            assert!(!run(&mut s), "{arm}");
        }
        let mut big = String::new();
        for k in 0..=LIMIT {
            big.push_str(&format!("    %{} = FADD.f32 %0, %1\n", k + 2));
        }
        let mut s =
            parse(&format!("{HEAD}    branch.z %0, block2, block1\nblock1:\n{big}    jump block2\nblock2:\n    end\n"))
                .unwrap();
        assert!(!run(&mut s));
    }
}
