//! Contraction: `FADD a, (p · q)` where the product is a plain multiply (`FMA p, q, -0.0`)
//! read only by this add becomes `FMA p, q, a`. This skips the product's rounding, so it is
//! off when the shader must be exact (`opt::Options::contract`).

use super::{Outcome, Scratch, use_counts};
use crate::ir::builder::NEG_ZERO;
use crate::ir::{Operand, Shader, Src, Value};
use crate::valhall::Instr;
use crate::valhall::Opcode;
use crate::valhall::tables::Clamp;

pub fn run(shader: &mut Shader) -> bool {
    run_reporting(shader, &mut Scratch::default()).changed
}

/// [`run`], also saying whether a product was held back because it has other readers and
/// whether a fused instruction reads only constants and copies of constants or FAU words.
pub fn run_reporting(shader: &mut Shader, scratch: &mut Scratch) -> Outcome {
    // Contraction needs an add and a plain product (`FMA p, q, #-0.0`, the only way one can
    // appear during the run too); this scan is much cheaper than counting uses.
    let (mut product_exists, mut add_exists) = (false, false);
    for &id in shader.blocks.iter().flat_map(|b| &b.insts) {
        let inst = shader.inst(id);
        match inst.opcode() {
            _ if inst.dead => {}
            Some(Opcode::FMA_F32) => {
                product_exists |= inst.srcs[2].operand == Operand::Const(NEG_ZERO) && inst.srcs[2].is_plain();
            }
            Some(Opcode::FADD_F32) => add_exists = true,
            _ => {}
        }
    }
    if !product_exists || !add_exists {
        return Outcome::default();
    }
    let mut held_by_uses = false;
    // Counted when an add first reads a product, before the first fusion: a fusion moves the
    // product's reads of its factors to the fused instruction and leaves every other count as
    // it was, so these are the counts at the start of the run.
    let mut uses: Vec<u32> = Vec::new();
    let mut counted = false;
    let multiply = |shader: &Shader, v: Value| -> Option<(Src, Src)> {
        let inst = shader.inst(shader.values[v.index()].def?);
        let plain_mul = !inst.dead
            && inst.mach.opcode == Opcode::FMA_F32
            // Its flow bits would be lost: the fused instruction keeps the add's.
            && inst.mach.flow == 0
            && inst.mach.clamp() == Some(Clamp::None)
            && inst.srcs[2].operand == Operand::Const(NEG_ZERO)
            && inst.srcs[2].is_plain();
        plain_mul.then_some((inst.srcs[0], inst.srcs[1]))
    };
    let mut changed = false;
    let mut constant_fused = false;
    let constant = |shader: &Shader, src: &Src| match src.operand {
        Operand::Value(v) => super::is_constant_copy(shader, v),
        _ => true,
    };
    for b in 0..shader.blocks.len() {
        for i in 0..shader.blocks[b].insts.len() {
            let id = shader.blocks[b].insts[i];
            if shader.inst(id).dead || shader.inst(id).opcode() != Some(Opcode::FADD_F32) {
                continue;
            }
            let inst = *shader.inst(id);
            for (m, other) in [(1usize, 0usize), (0, 1)] {
                let src = inst.srcs[m];
                let Operand::Value(v) = src.operand else { continue };
                if src.abs || src.swizzle != 0 {
                    continue;
                }
                let Some((p, q)) = multiply(shader, v) else { continue };
                if !counted {
                    uses = use_counts(shader, std::mem::take(&mut scratch.counts));
                    counted = true;
                }
                if uses[v.index()] != 1 {
                    held_by_uses = true;
                    continue;
                }
                let p = if src.neg { p.negated() } else { p };
                let mut mach = Instr::new(Opcode::FMA_F32);
                let _ = mach.set_clamp(inst.mach.clamp().unwrap_or(Clamp::None));
                mach.flow = inst.mach.flow;
                let fused = shader.inst_mut(id);
                *fused =
                    crate::ir::Inst { srcs: [p, q, inst.srcs[other], Src::NONE], ..crate::ir::Inst::machine(mach) };
                fused.dests = inst.dests;
                let def = shader.values[v.index()].def.expect("checked");
                shader.inst_mut(def).dead = true;
                constant_fused |= [p, q, inst.srcs[other]].iter().all(|s| constant(shader, s));
                changed = true;
                break;
            }
        }
    }
    if changed {
        shader.compact();
    }
    if counted {
        scratch.counts = uses;
    }
    Outcome { changed, held_by_uses, constant_fused, ..Outcome::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    #[test]
    fn contracts_single_use_products() {
        let mut s = parse(
            "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = preload r61\n    %2 = FMA.f32 %0, %1, #0x80000000\n    %3 = FADD.f32.clamp_0_1 %1, %2.neg\n    %4 = FMA.f32 %0, %0, #0x80000000\n    %5 = FADD.f32 %4, %4\n    STORE.i64.slot0 @%3:%5, %0:%1, offset:0\n    end\n",
        )
        .unwrap();
        assert!(run(&mut s));
        crate::ir::verify::verify(&s).unwrap();
        assert_eq!(
            print(&s),
            "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = preload r61\n    %3 = FMA.f32.clamp_0_1 %0.neg, %1, %1\n    %4 = FMA.f32 %0, %0, #0x80000000\n    %5 = FADD.f32 %4, %4\n    STORE.i64.slot0 @%3:%5, %0:%1, offset:0\n    end\n"
        );
    }

    /// The scheduler in `opt::optimize` relies on this: moving a factor or the addend between
    /// these sources keeps a whole-word read whole-word.
    #[test]
    fn fused_sources_share_their_defaults() {
        let fadd = Opcode::FADD_F32.info().srcs;
        let fma = Opcode::FMA_F32.info().srcs;
        for s in [&fadd[0], &fadd[1], &fma[0], &fma[1], &fma[2]] {
            assert_eq!((s.size, s.default_swizzle(), s.default_widen(), s.lane.is_none()), (32, 0, 0, true));
        }
    }

    #[test]
    fn reports_constant_fusions() {
        let mut s = parse(
            "fragment shader\nblock0:\n    %0 = copy #0x40000000\n    %1 = FMA.f32 %0, #0x40400000, #0x80000000\n    %2 = FADD.f32 %1, #0x3F800000\n    STORE.i32.slot0 @%2, %0:%0, offset:0\n    end\n",
        )
        .unwrap();
        let outcome = run_reporting(&mut s, &mut Scratch::default());
        assert!(outcome.changed && outcome.constant_fused, "{}", print(&s));
    }

    #[test]
    fn a_product_with_flow_bits_is_not_fused() {
        let text = "fragment shader\nblock0:\n    %0 = copy #0x40000000\n    %1 = FMA.f32.wait0 %0, #0x40400000, #0x80000000\n    %2 = FADD.f32 %1, #0x3F800000\n    STORE.i32.slot0 @%2, %0:%0, offset:0\n    end\n";
        let mut s = parse(text).unwrap();
        let outcome = run_reporting(&mut s, &mut Scratch::default());
        assert!(!outcome.changed, "{}", print(&s));
        assert!(print(&s).contains("FMA.f32.wait0"), "{}", print(&s));
    }
}
