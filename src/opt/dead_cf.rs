//! Dead-code elimination that also removes control flow nothing depends on: empty `if`s and
//! loops without an effect whose results nobody reads (what Mesa's `nir_opt_dead_cf` removes).
//! It is the aggressive form of [`super::dce`] (Cytron et al., "Efficiently Computing Static
//! Single Assignment Form and the Control Dependence Graph", §7.1), and narrows loads as it
//! does: instructions with side effects and the blocks that end the shader are live; a live
//! instruction makes live the definitions it reads and the branches its block is control
//! dependent on; a live branch makes its condition and its block live; a live φ makes live the
//! branches (or blocks) its incoming edges come from. A branch left dead jumps straight to its immediate post-dominator, and the
//! blocks only it reached go.
//!
//! Invariants the rewrite relies on (both follow from the marking): a dead branch's immediate
//! post-dominator has no live φ, and no block with a live φ gains or loses a predecessor, so
//! every live φ keeps its arguments. A branch that reaches no `end` on some side (an endless
//! loop), or whose sides end in different `end`s, is kept.
//!
//! Removing a loop nothing depends on also removes a loop that would not terminate, as Mesa
//! does. It runs on each IDVS variant after the split, where the stores a variant drops leave
//! the control flow that only computed them. Linear for structured CFGs: each block is
//! control dependent on the branches of the constructs it sits in at its own level.

use super::dce::{self, mark_value};
use super::facts;
use crate::ir::dom::{NO_POSTDOM, postdominators};
use crate::ir::{Block, InstId, InstKind, Shader, Terminator};

/// Removes dead instructions and dead control flow; whether anything changed.
pub fn run(shader: &mut Shader) -> bool {
    let removed = run_reporting(shader);
    removed.code || removed.control_flow
}

/// What [`run_reporting`] removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Removed {
    /// Instructions.
    pub code: bool,
    /// Branches (the CFG changed: analyses computed from it are stale).
    pub control_flow: bool,
}

/// [`run`], saying whether the CFG changed.
pub fn run_reporting(shader: &mut Shader) -> Removed {
    // Straight-line code has no control flow to remove.
    if shader.blocks.len() == 1 {
        return Removed { code: dce::run(shader), control_flow: false };
    }
    let n = shader.blocks.len();
    let exit = n as u32;
    let ipdom = postdominators(shader);
    let marks = mark(shader, &ipdom);
    // Dead branches jump to their immediate post-dominator.
    let mut redirected: Vec<(usize, Block)> = Vec::new();
    for (b, block) in shader.blocks.iter_mut().enumerate() {
        if let Terminator::Branch { .. } = block.term
            && !marks.branch[b]
        {
            debug_assert!(ipdom[b] != NO_POSTDOM && ipdom[b] != exit);
            let target = Block(ipdom[b]);
            block.term = Terminator::Jump(target);
            redirected.push((b, target));
        }
    }
    let narrowed = dce::narrow_all(shader, &marks.loads, &marks.read);
    let code = dce::sweep(shader, &marks.inst) || narrowed;
    if !redirected.is_empty() {
        repair_predecessors(shader, &redirected);
        // Removes what the redirected branches no longer reach, then merges the chains of
        // jumps they leave.
        super::unreachable::run(shader);
        super::merge_blocks::run(shader);
    }
    Removed { code, control_flow: !redirected.is_empty() }
}

/// What the marking found live: instructions, blocks and branches (by block); the values read
/// and the live loads `dce` may narrow.
struct Marks {
    inst: Vec<bool>,
    block: Vec<bool>,
    branch: Vec<bool>,
    read: Vec<bool>,
    loads: Vec<InstId>,
}

/// The marking of the module documentation, from the roots to a fixed point.
fn mark(shader: &Shader, ipdom: &[u32]) -> Marks {
    let n = shader.blocks.len();
    let exit = n as u32;
    let control_deps = ControlDeps::compute(shader, ipdom);
    let facts = facts::table();
    let mut marks = Marks {
        inst: vec![false; shader.insts.len()],
        block: vec![false; n],
        branch: vec![false; n],
        read: vec![false; shader.values.len()],
        loads: Vec::new(),
    };
    let mut block_of = vec![0u32; shader.insts.len()];
    let mut insts: Vec<InstId> = Vec::new();
    let mut blocks: Vec<u32> = Vec::new();
    for (b, block) in shader.blocks.iter().enumerate() {
        for &id in &block.insts {
            block_of[id.index()] = b as u32;
            let inst = shader.inst(id);
            if !inst.dead && facts::of(facts, inst) & facts::SIDE_EFFECTS != 0 {
                marks.inst[id.index()] = true;
                insts.push(id);
            }
        }
        match block.term {
            Terminator::End => blocks.push(b as u32),
            Terminator::Branch { .. } => {
                let kept = ipdom[b] == NO_POSTDOM
                    || ipdom[b] == exit
                    || shader.succs(Block(b as u32)).any(|s| ipdom[s.index()] == NO_POSTDOM);
                if kept {
                    blocks.push(b as u32);
                    marks.branch[b] = true;
                }
            }
            Terminator::Jump(_) => {
                // A block in an endless loop: kept with everything deciding whether it runs.
                if ipdom[b] == NO_POSTDOM {
                    blocks.push(b as u32);
                }
            }
        }
    }
    // Blocks and branches found live by a root are processed like the others below.
    let mut branch_conds: Vec<u32> = blocks.iter().copied().filter(|&b| marks.branch[b as usize]).collect();
    loop {
        if let Some(b) = branch_conds.pop() {
            if let Terminator::Branch { cond, .. } = shader.blocks[b as usize].term {
                mark_value(shader, cond, &mut marks.inst, &mut marks.read, &mut insts);
            }
            if !marks.block[b as usize] {
                blocks.push(b);
            }
        } else if let Some(b) = blocks.pop() {
            if marks.block[b as usize] {
                continue;
            }
            marks.block[b as usize] = true;
            for &a in control_deps.of(b) {
                if !marks.branch[a as usize] {
                    marks.branch[a as usize] = true;
                    branch_conds.push(a);
                }
            }
        } else if let Some(id) = insts.pop() {
            let b = block_of[id.index()];
            if !marks.block[b as usize] {
                blocks.push(b);
            }
            let inst = shader.inst(id);
            shader.for_each_use(inst, |v| mark_value(shader, v, &mut marks.inst, &mut marks.read, &mut insts));
            if facts::of(facts, inst) & facts::NARROWABLE != 0 {
                marks.loads.push(id);
            }
            if inst.kind == InstKind::Phi {
                for &p in &shader.blocks[b as usize].preds {
                    if let Terminator::Branch { .. } = shader.blocks[p.index()].term {
                        if !marks.branch[p.index()] {
                            marks.branch[p.index()] = true;
                            branch_conds.push(p.0);
                        }
                    } else if !marks.block[p.index()] {
                        blocks.push(p.0);
                    }
                }
            }
        } else {
            break;
        }
    }
    marks
}

/// For each block, the blocks whose branch decides whether it runs: `b` is control dependent
/// on the branch of `a` when one side of it always leads to `b` and the other may avoid it
/// (the blocks from a successor up the post-dominator tree to `a`'s immediate
/// post-dominator, exclusive). Stored as one list per block in a single array.
struct ControlDeps {
    start: Vec<u32>,
    deps: Vec<u32>,
}

impl ControlDeps {
    fn compute(shader: &Shader, ipdom: &[u32]) -> ControlDeps {
        let n = shader.blocks.len();
        let exit = n as u32;
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (a, block) in shader.blocks.iter().enumerate() {
            let Terminator::Branch { taken, fallthrough, .. } = block.term else { continue };
            let stop = ipdom[a];
            if stop == NO_POSTDOM || stop == exit {
                continue;
            }
            for s in [taken, fallthrough] {
                let mut r = s.0;
                while r != stop && r != NO_POSTDOM && r != exit {
                    pairs.push((r, a as u32));
                    r = ipdom[r as usize];
                }
            }
        }
        let mut start = vec![0u32; n + 1];
        for &(b, _) in &pairs {
            start[b as usize + 1] += 1;
        }
        for b in 0..n {
            start[b + 1] += start[b];
        }
        let mut fill = start.clone();
        let mut deps = vec![0u32; pairs.len()];
        for &(b, a) in &pairs {
            deps[fill[b as usize] as usize] = a;
            fill[b as usize] += 1;
        }
        ControlDeps { start, deps }
    }

    fn of(&self, b: u32) -> &[u32] {
        &self.deps[self.start[b as usize] as usize..self.start[b as usize + 1] as usize]
    }
}

/// After the redirections: each target gains its redirected block as a predecessor, and every
/// block loses the predecessors that no longer jump to it (blocks with a live φ are never among
/// either, see the module documentation). Blocks left unreachable keep their lists for
/// [`super::unreachable`].
fn repair_predecessors(shader: &mut Shader, redirected: &[(usize, Block)]) {
    let Shader { blocks, insts, .. } = shader;
    let has_phi = |block: &crate::ir::BlockData| block.insts.iter().any(|id| insts[id.index()].kind == InstKind::Phi);
    for b in 0..blocks.len() {
        let target = Block(b as u32);
        let mut preds = std::mem::take(&mut blocks[b].preds);
        let before = preds.len();
        preds.retain(|p| blocks[p.index()].term.successors().any(|s| s == target));
        debug_assert!(preds.len() == before || !has_phi(&blocks[b]), "block{b} has a live φ and loses a predecessor");
        blocks[b].preds = preds;
    }
    for &(a, target) in redirected {
        if !blocks[target.index()].preds.contains(&Block(a as u32)) {
            debug_assert!(!has_phi(&blocks[target.index()]), "{target} has a live φ and gains a predecessor");
            blocks[target.index()].preds.push(Block(a as u32));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    const HEAD: &str = "vertex shader\nblock0:\n    %0 = preload r60\n    %1 = preload r61\n";

    /// Runs the pass on `text`, which it must change; checks the result and that a second run
    /// finds nothing, and returns the printed result.
    fn cleaned(text: &str) -> String {
        let mut s = parse(text).unwrap();
        assert!(run(&mut s));
        crate::ir::verify::verify(&s).unwrap();
        assert!(!run(&mut s));
        print(&s)
    }

    #[test]
    fn removes_an_effect_free_loop_before_a_store() {
        // A loop summing into %3, which nothing reads after it; the store after the loop keeps
        // only its own operands.
        let out = cleaned(&format!(
            "{HEAD}    %2 = copy #0x0\n    jump block1\nblock1:\n    %3 = phi [%2, block0], [%4, block2]\n    %5 = ICMP_OR.u32.ge.m1 %3, %0, #0x0\n    branch.z %5, block2, block3\nblock2:\n    %4 = IADD.s32 %3, #0x1000000.b3\n    jump block1\nblock3:\n    STORE.i32.slot0 @%1, %0:%1, offset:0\n    end\n"
        ));
        assert_eq!(out, format!("{HEAD}    STORE.i32.slot0 @%1, %0:%1, offset:0\n    end\n"));
    }

    #[test]
    fn removes_empty_ifs_and_keeps_ifs_with_effects() {
        // block1 computes only what nobody reads; block3's store decides whether block2 stays.
        let text = format!(
            "{HEAD}    branch.z %0, block2, block1\nblock1:\n    %2 = FADD.f32 %0, %1\n    jump block2\nblock2:\n    branch.z %1, block4, block3\nblock3:\n    STORE.i32.slot0 @%1, %0:%1, offset:0\n    jump block4\nblock4:\n    end\n"
        );
        assert_eq!(
            cleaned(&text),
            format!(
                "{HEAD}    branch.z %1, block2, block1\nblock1:                    ; preds: block0\n    STORE.i32.slot0 @%1, %0:%1, offset:0\n    jump block2\nblock2:                    ; preds: block0, block1\n    end\n"
            )
        );
    }

    #[test]
    fn narrows_loads_as_dce_does() {
        // The if only computed the attribute's last components; it goes, and so do they.
        let out = cleaned(&format!(
            "{HEAD}    %2, %3, %4, %5 = LD_ATTR_IMM.v4.f32.slot0 %0, %1, index:0x0, table:0x1\n    branch.z %0, block2, block1\nblock1:\n    %6 = FADD.f32 %4, %5\n    jump block2\nblock2:\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
        ));
        assert_eq!(
            out,
            format!(
                "{HEAD}    %2, %3 = LD_ATTR_IMM.v2.f32.slot0 %0, %1, index:0x0, table:0x1\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
            )
        );
    }

    #[test]
    fn keeps_branches_a_live_phi_reads() {
        let text = format!(
            "{HEAD}    %2 = copy #0x1\n    branch.z %0, block2, block1\nblock1:\n    %3 = copy #0x2\n    jump block2\nblock2:\n    %4 = phi [%2, block0], [%3, block1]\n    STORE.i32.slot0 @%4, %0:%1, offset:0\n    end\n"
        );
        let mut s = parse(&text).unwrap();
        let before = print(&s);
        assert!(!run(&mut s));
        assert_eq!(print(&s), before);
    }

    #[test]
    fn keeps_loops_that_do_not_reach_the_end() {
        // An endless loop (no edge leaves it) stays, even with nothing live inside.
        let text = format!(
            "{HEAD}    branch.z %0, block2, block1\nblock1:\n    %2 = FADD.f32 %0, %1\n    jump block1\nblock2:\n    STORE.i32.slot0 @%1, %0:%1, offset:0\n    end\n"
        );
        let mut s = parse(&text).unwrap();
        run(&mut s);
        crate::ir::verify::verify(&s).unwrap();
        let after = print(&s);
        assert!(after.contains("branch.z %0"), "{after}");
        assert!(!after.contains("FADD"), "{after}");
    }
}
