//! Constant folding: a pure ALU instruction whose sources are all constants becomes
//! `copy #result`.
//!
//! The result comes from the emulator's own arithmetic ([`crate::emu::ConstEvaluator`]) applied
//! to the instruction as it stands — source swizzles, widens, lanes and float modifiers, the
//! clamp, the rounding mode, 16-bit lanes, denormals and NaN rules included — so a folded value
//! is bit for bit what the instruction would compute. What the evaluator does not model (64-bit
//! operands or results, messages, cross-lane operations, unmodelled opcodes) stays.
//!
//! A source counts as constant when it is `#k` or reads a value defined by `copy #k` (or folded
//! earlier in this pass), so chains fold in one visit when definitions come before uses in the
//! layout. Instructions carrying flow bits are left alone (their wait or reconvergence must stay).
//! One visit per instruction: linear.

use super::{Scratch, facts};
use crate::emu::ConstEvaluator;
use crate::ir::{Inst, InstKind, Operand, Shader, Src};
use crate::valhall::Base;
use std::cell::Cell;

/// The source words of a foldable (machine) instruction, or `None`. `known` is empty until
/// the first constant copy.
fn constant_sources(inst: &Inst, known: &[Option<u32>]) -> Option<[u32; 4]> {
    let mut words = [0u32; 4];
    // The used sources are the first slots, up to the first unused one (an IR invariant).
    for (k, src) in inst.srcs.iter().enumerate() {
        words[k] = match src.operand {
            Operand::Const(c) => c,
            Operand::Value(v) => (*known.get(v.index())?)?,
            Operand::None => break,
            _ => return None,
        };
    }
    Some(words)
}

fn foldable(facts: &[u8], inst: &Inst) -> bool {
    inst.is_machine()
        && !inst.dead
        && inst.mach.flow == 0
        && inst.dests.len() == 1
        && facts[inst.mach.opcode as usize] & facts::FOLDABLE != 0
}

thread_local! {
    /// An evaluator kept for the next run on this thread: building one (an emulated machine)
    /// costs more than most runs. Nothing of an evaluation outlives it (each sets the FAU words
    /// its sources read and replaces the program).
    static EVALUATOR: Cell<Option<ConstEvaluator>> = const { Cell::new(None) };
}

pub fn run(shader: &mut Shader) -> bool {
    run_in(shader, &mut Scratch::default())
}

/// [`run`] with side tables borrowed from `scratch`.
pub fn run_in(shader: &mut Shader, scratch: &mut Scratch) -> bool {
    let facts = facts::table();
    // Sized at the first constant (many shaders fold nothing).
    let mut known = std::mem::take(&mut scratch.words);
    known.clear();
    let mut evaluator: Option<ConstEvaluator> = None;
    let mut changed = false;
    for b in 0..shader.blocks.len() {
        for i in 0..shader.blocks[b].insts.len() {
            let id = shader.blocks[b].insts[i];
            let inst = shader.inst(id);
            if inst.dead {
                continue;
            }
            if inst.kind == InstKind::Copy {
                if let (Operand::Const(c), true) = (inst.srcs[0].operand, inst.srcs[0].is_plain()) {
                    if known.is_empty() {
                        known.resize(shader.values.len(), None);
                    }
                    known[shader.get(inst.dests)[0].index()] = Some(c);
                }
                continue;
            }
            if !foldable(facts, inst) {
                continue;
            }
            let Some(words) = constant_sources(inst, &known) else { continue };
            let evaluator = evaluator.get_or_insert_with(|| EVALUATOR.take().unwrap_or_default());
            let mut mach = inst.mach.instr();
            for (k, src) in inst.sources().iter().enumerate() {
                mach.srcs[k] = src.to_machine(Base::Uniform(0));
            }
            let Some(result) = evaluator.eval(&mach, words) else { continue };
            let dests = inst.dests;
            let dest = shader.get(dests)[0];
            let mut srcs = [Src::NONE; 4];
            srcs[0] = Src::konst(result);
            *shader.inst_mut(id) = Inst { dests, srcs, ..Inst::pseudo(InstKind::Copy) };
            if known.is_empty() {
                known.resize(shader.values.len(), None);
            }
            known[dest.index()] = Some(result);
            changed = true;
        }
    }
    if evaluator.is_some() {
        EVALUATOR.set(evaluator);
    }
    scratch.words = known;
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    const HEAD: &str = "fragment shader\nblock0:\n    %0 = preload r60\n";
    const TAIL: &str = "    STORE.i32.slot0 @%9, %0:%0, offset:0\n    end\n";

    fn check(body: &str, expected: &str) {
        let mut s = parse(&format!("{HEAD}{body}{TAIL}")).unwrap();
        run(&mut s);
        crate::ir::verify::verify(&s).unwrap();
        assert_eq!(print(&s), format!("{HEAD}{expected}{TAIL}"));
    }

    #[test]
    fn the_clamp_and_source_modifiers_apply() {
        // 1.0625 + (−0), saturated: 1.0.
        check("    %9 = FADD.f32.clamp_0_1 #0x3F880000, #0x80000000\n", "    %9 = copy #0x3F800000\n");
        // −|−2| · 3 + 0.5 = −5.5.
        check("    %9 = FMA.f32 #0xC0000000.neg.abs, #0x40400000, #0x3F000000\n", "    %9 = copy #0xC0B00000\n");
    }

    #[test]
    fn rounding_modes_and_half_lanes_apply() {
        // floor(−1.5) = −2.
        check("    %9 = FROUND.f32.rtn #0xBFC00000\n", "    %9 = copy #0xC0000000\n");
        // The high half of 0xBC00_3C00 (−1.0 as binary16) widened to binary32.
        check("    %9 = F16_TO_F32 #0xBC003C00.h1\n", "    %9 = copy #0xBF800000\n");
        // 1.5 and 0.1 to binary16, rounded to nearest: 0x3E00 and 0x2E66.
        check("    %9 = V2F32_TO_V2F16 #0x3FC00000, #0x3DCCCCCD\n", "    %9 = copy #0x2E663E00\n");
    }

    #[test]
    fn chains_fold_in_one_visit() {
        check(
            "    %1 = copy #0x40000000\n    %2 = FMA.f32 %1, %1, #0x80000000\n    %9 = F32_TO_S32.rtz %2\n",
            "    %1 = copy #0x40000000\n    %2 = copy #0x40800000\n    %9 = copy #0x4\n",
        );
    }

    #[test]
    fn non_constant_sources_and_unmodelled_instructions_stay() {
        for body in [
            // A run-time value, a push constant, a lane-dependent value.
            "    %9 = FADD.f32 %0, #0x3F800000\n",
            "    %9 = FADD.f32 u0, #0x3F800000\n",
            "    %9 = IADD.u32 lane_id.w0, #0x1\n",
            // The emulator does not define FPCLASS's result.
            "    %9 = FPCLASS.f32 #0x3F800000\n",
            // Flow bits stay with their instruction.
            "    %9 = FADD.f32.wait0 #0x3F800000, #0x3F800000\n",
        ] {
            check(body, body);
        }
    }
}
