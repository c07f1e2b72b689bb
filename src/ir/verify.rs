//! The IR verifier: checks the invariants listed in the module documentation of [`crate::ir`].
//! Passes run it after themselves in tests and debug builds ([`verify_after`]).

use super::dom::DomTree;
use super::{Block, InstKind, Operand, Shader, Terminator, Value};
use crate::valhall::Opcode;

/// Checks a shader; returns every problem found, each naming the pass-independent location.
pub fn verify(shader: &Shader) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let nvalues = shader.values.len();
    // Position of each value's definition: (block, index in block); φs at index 0.
    let mut def_at: Vec<Option<(Block, usize)>> = vec![None; nvalues];
    let dom = DomTree::compute(shader);
    for (b, block) in shader.blocks.iter().enumerate() {
        let block_id = Block(b as u32);
        // Predecessor lists must match the terminators.
        for &p in &block.preds {
            if !shader.succs(p).any(|s| s == block_id) {
                errors.push(format!("{block_id} lists {p} as a predecessor, but {p} does not branch to it"));
            }
        }
        for succ in shader.succs(block_id) {
            if succ.index() >= shader.blocks.len() {
                errors.push(format!("{block_id} branches to the missing {succ}"));
            } else if !shader.block(succ).preds.contains(&block_id) {
                errors.push(format!("{block_id} branches to {succ}, which does not list it as a predecessor"));
            }
        }
        let mut seen_non_phi = false;
        for (i, id) in shader.block_insts(block_id).enumerate() {
            let inst = shader.inst(id);
            if inst.kind == InstKind::Phi {
                if seen_non_phi {
                    errors.push(format!("{block_id}: φ after a non-φ instruction"));
                }
                if inst.args.len() != block.preds.len() {
                    errors.push(format!(
                        "{block_id}: φ has {} arguments for {} predecessors",
                        inst.args.len(),
                        block.preds.len()
                    ));
                }
            } else {
                seen_non_phi = true;
            }
            let mut defs = 0;
            shader.for_each_def(inst, |v| {
                defs += 1;
                if v.index() >= nvalues {
                    errors.push(format!("{block_id}: defines the unknown value {v}"));
                    return;
                }
                if def_at[v.index()].is_some() {
                    errors.push(format!("{block_id}: {v} is defined twice"));
                }
                def_at[v.index()] = Some((block_id, i));
                if shader.values[v.index()].def != Some(id) {
                    errors.push(format!("{block_id}: the definition record of {v} does not point at its definition"));
                }
            });
            check_shapes(shader, block_id, inst, defs, &mut errors);
        }
    }
    // Uses: every used value is defined, and its definition dominates the use.
    let check_use = |errors: &mut Vec<String>, v: Value, block: Block, index: usize, what: &str| match def_at
        .get(v.index())
        .copied()
        .flatten()
    {
        None => errors.push(format!("{block}: {what} uses {v}, which is never defined")),
        Some((db, di)) => {
            let dominates = if db == block { di < index } else { dom.dominates(db, block) };
            if !dominates && dom.is_reachable(block) {
                errors.push(format!("{block}: {what} uses {v} before its definition dominates it"));
            }
        }
    };
    for (b, block) in shader.blocks.iter().enumerate() {
        let block_id = Block(b as u32);
        for (i, id) in shader.block_insts(block_id).enumerate() {
            let inst = shader.inst(id);
            if inst.kind == InstKind::Phi {
                for (&arg, &pred) in shader.get(inst.args).iter().zip(&block.preds) {
                    // A φ argument is used at the end of its predecessor.
                    check_use(&mut errors, arg, pred, usize::MAX, "φ argument");
                }
            } else {
                shader.for_each_use(inst, |v| check_use(&mut errors, v, block_id, i, "instruction"));
            }
        }
        if let Terminator::Branch { cond, .. } = block.term {
            check_use(&mut errors, cond, block_id, usize::MAX, "branch");
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

fn check_shapes(shader: &Shader, block: Block, inst: &super::Inst, defs: usize, errors: &mut Vec<String>) {
    match inst.kind {
        InstKind::Machine => {
            let info = inst.mach.info();
            let name = info.name;
            let dest_width = usize::from(info.dest_registers());
            if inst.dests.len() != dest_width {
                errors.push(format!("{block}: {name} has {} destinations, expected {dest_width}", inst.dests.len()));
            }
            for (k, s) in info.staging.iter().enumerate() {
                let n = inst.staging[k].len();
                if n > 8 || !s.count_range().contains(&(n as u8)) {
                    errors.push(format!("{block}: {name} staging operand {k} has {n} values"));
                }
            }
            for (k, s) in info.srcs.iter().enumerate() {
                let operand = inst.srcs[k].operand;
                let ok = match operand {
                    Operand::None => false,
                    Operand::Pair(..) => s.size == 64,
                    Operand::Value(_) => s.size != 64,
                    Operand::Uniform(u) => s.size != 64 || u % 2 == 0,
                    Operand::Const(_) | Operand::Special(_) => true,
                };
                if !ok {
                    errors.push(format!("{block}: {name} source {k} ({}-bit) cannot read {operand:?}", s.size));
                }
            }
            for src in &inst.srcs[info.srcs.len()..] {
                if src.operand != Operand::None {
                    errors.push(format!("{block}: {name} has an operand in an unused source slot"));
                }
            }
        }
        InstKind::Phi | InstKind::Undef | InstKind::Preload(_) | InstKind::Copy => {
            if defs != 1 {
                errors.push(format!("{block}: {:?} must define one value, defines {defs}", inst.kind));
            }
            if let InstKind::Copy = inst.kind
                && (inst.srcs[0].operand == Operand::None || !inst.srcs[0].is_plain())
            {
                errors.push(format!("{block}: copy needs a plain source"));
            }
            if let InstKind::Preload(r) = inst.kind
                && !(48..64).contains(&r)
            {
                errors.push(format!("{block}: only r48..r63 can be preloaded, not r{r}"));
            }
        }
        InstKind::ParallelCopy => {
            if inst.args.len() != defs {
                errors.push(format!("{block}: parallel copy with {defs} destinations and {} sources", inst.args.len()));
            }
        }
    }
    if (inst.kind == InstKind::Machine) == (inst.mach.opcode == Opcode::NOP) {
        errors.push(format!("{block}: {:?} with opcode {}", inst.kind, inst.mach.info().name));
    }
    if inst.kind != InstKind::Machine {
        // `Shader::for_each_use` and the walks like it read sources and staging operands
        // without testing the kind, which this keeps sound.
        let first_unused = usize::from(inst.kind == InstKind::Copy);
        if inst.srcs[first_unused..].iter().any(|s| s.operand != Operand::None)
            || inst.staging.iter().any(|l| !l.is_empty())
        {
            errors.push(format!("{block}: {:?} has an operand slot only machine instructions use", inst.kind));
        }
    }
    let _ = shader;
}

/// Verifies after a pass and panics with the pass name and the problems (tests, debug builds).
/// A failure here is a compiler bug, never a problem with the input.
pub fn verify_after(shader: &Shader, pass: &str) {
    if cfg!(any(test, debug_assertions))
        && let Err(errors) = verify(shader)
    {
        panic!("IR verification failed after `{pass}`:\n  {}\n{}", errors.join("\n  "), super::text::print(shader));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::parse;

    #[test]
    fn accepts_valid_ir() {
        let s = parse(
            "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = FADD.f32 %0, #0x0\n    branch.z %1, block2, block1\nblock1:\n    jump block2\nblock2:\n    %2 = phi [%1, block0], [%0, block1]\n    end\n",
        )
        .unwrap();
        assert_eq!(verify(&s), Ok(()));
    }

    #[test]
    fn rejects_use_before_definition_and_bad_dominance() {
        let s = parse(
            "fragment shader\nblock0:\n    %1 = FADD.f32 %2, #0x0\n    %2 = copy #0x1\n    branch.z %1, block2, block1\nblock1:\n    %3 = copy #0x2\n    jump block2\nblock2:\n    %4 = FADD.f32 %3, #0x0\n    end\n",
        )
        .unwrap();
        let errors = verify(&s).unwrap_err();
        assert!(errors.iter().any(|e| e.contains("uses %2 before")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("uses %3 before")), "{errors:?}");
    }

    #[test]
    fn rejects_bad_shapes() {
        let s =
            parse("fragment shader\nblock0:\n    %0 = preload r10\n    STORE.i32.slot0 @%0, %0, offset:0\n    end\n");
        // A 64-bit source reading a single value is caught by the verifier, not the parser.
        let s = s.unwrap();
        let errors = verify(&s).unwrap_err();
        assert!(errors.iter().any(|e| e.contains("r10")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("64-bit")), "{errors:?}");
    }

    /// A change that breaks one instruction.
    type Change = fn(&mut crate::ir::Inst);

    /// The verifier's errors for `text` (which must verify as it is) once each `(k, change)`
    /// has changed instruction `k` of block 0.
    fn errors_after(text: &str, changes: &[(usize, Change)]) -> Vec<String> {
        let mut s = parse(text).unwrap();
        assert_eq!(verify(&s), Ok(()));
        for &(k, change) in changes {
            let id = s.blocks[0].insts[k];
            change(&mut s.insts[id.index()]);
        }
        verify(&s).unwrap_err()
    }

    /// The walks that read operands without testing the instruction's kind rely on this.
    #[test]
    fn rejects_operands_in_slots_a_pseudo_instruction_does_not_use() {
        let text = "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = copy %0\n    %2 = undef\n    end\n";
        let errors = errors_after(
            text,
            &[
                (1, |copy| copy.srcs[1] = crate::ir::Src::new(crate::ir::Value(0))),
                (2, |undef| undef.srcs[0] = crate::ir::Src::konst(1)),
            ],
        );
        assert!(errors.iter().any(|e| e.contains("Copy has an operand slot")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("Undef has an operand slot")), "{errors:?}");
    }

    /// Pseudo-instructions carry `NOP` and machine instructions never do, so a test of the
    /// opcode needs no test of the kind.
    #[test]
    fn rejects_a_pseudo_instruction_with_an_opcode_and_a_machine_nop() {
        let text = "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = FADD.f32 %0, %0\n    end\n";
        let errors = errors_after(
            text,
            &[(0, |preload| preload.mach.opcode = Opcode::FADD_F32), (1, |add| add.mach.opcode = Opcode::NOP)],
        );
        assert!(errors.iter().any(|e| e.contains("Preload(60) with opcode FADD")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains("Machine with opcode NOP")), "{errors:?}");
    }
}
