//! Modifier folding (Mesa's "mod props"):
//!
//! * a stand-alone negate/absolute value `%y = FADD.f32 %x.mods, #-0.0` (no clamp) is folded
//!   into every consumer source that has abs/neg fields and no swizzle: the consumer reads
//!   `%x` with the composed modifiers;
//! * a stand-alone saturate `%y = FADD.f32.clampK %x, #-0.0` whose `%x` comes from an
//!   instruction with a free clamp field, and is read only there, moves the clamp into that
//!   producer;
//! * `FADD.f32 %x, #-0.0` with nothing at all is `%x`.
//!
//! `x + (−0) = x` for every x (NaN payloads aside), so these are exact. FADD.f32 has no
//! rounding-mode field, so `+0 + (−0)` is always `+0`. The sign flags fold only into binary32
//! sources (a 16-bit source applies them per half) and the clamp only into producers of one
//! binary32 result (a v2f16 producer would clamp each half instead of the f32 word); a producer
//! already forwarded in the same round never takes a clamp.

use super::{Analyses, Outcome, is_literal_copy, use_counts};
use crate::ir::builder::NEG_ZERO;
use crate::ir::{Operand, Shader, Src, Value};
use crate::valhall::Opcode;
use crate::valhall::tables::Clamp;

/// Whether the sources of an `FADD.f32` add a plain −0.
fn adds_negative_zero(srcs: &[Src; 4]) -> bool {
    srcs[1].operand == Operand::Const(NEG_ZERO) && srcs[1].is_plain()
}

/// `%y = FADD.f32 src, #-0.0` with the given clamp: returns (src, clamp).
fn negzero_add(shader: &Shader, v: Value) -> Option<(Src, Clamp)> {
    let inst = shader.inst(shader.values[v.index()].def?);
    // An add with flow bits stays as it is: folding it away would lose them.
    if inst.dead || inst.mach.opcode != Opcode::FADD_F32 || inst.mach.flow != 0 {
        return None;
    }
    if !adds_negative_zero(&inst.srcs) || inst.srcs[0].swizzle != 0 {
        return None;
    }
    Some((inst.srcs[0], inst.mach.clamp()?))
}

pub fn run(shader: &mut Shader) -> bool {
    run_reporting(shader, &mut Analyses::default()).changed
}

/// [`run`], also saying whether a saturate was held back because its source has other readers,
/// whether a φ became trivial, whether a source now reads a constant it did not read before,
/// and whether a second run could find more (see [`Outcome`]).
pub fn run_reporting(shader: &mut Shader, analyses: &mut Analyses) -> Outcome {
    // Every rewrite involves an `FADD.f32 x, #-0.0`; this scan is much cheaper than counting uses.
    // Use counts only matter for moving a saturate, which needs a clamped FADD.f32 (only this
    // pass adds clamps to FADD.f32, and only while moving one).
    let mut clamped_add_exists = false;
    // The values defined by an `FADD.f32 x, #-0.0` (flow, clamp and swizzle aside): the walk
    // below looks at the definition of a source only when it is marked here, instead of at
    // every source's definition. Allocated at the first such add.
    let mut negzero_defs = std::mem::take(&mut analyses.scratch.flags);
    negzero_defs.clear();
    for &id in shader.blocks.iter().flat_map(|b| &b.insts) {
        let inst = shader.inst(id);
        if inst.dead || inst.opcode() != Some(Opcode::FADD_F32) {
            continue;
        }
        if adds_negative_zero(&inst.srcs) {
            if negzero_defs.is_empty() {
                negzero_defs.resize(shader.values.len(), false);
            }
            negzero_defs[shader.get(inst.dests)[0].index()] = true;
        }
        clamped_add_exists |= inst.mach.clamp().is_some_and(|c| c != Clamp::None);
    }
    if negzero_defs.is_empty() {
        analyses.scratch.flags = negzero_defs;
        return Outcome::default();
    }
    let mut held_by_uses = false;
    let mut changed = false;
    // Counted before anything changes (empty when no saturate can move).
    let mut uses = std::mem::take(&mut analyses.scratch.counts);
    if clamped_add_exists {
        uses = use_counts(shader, uses);
    } else {
        uses.clear();
    }
    // The value each removed `FADD` stands for; sized at the first removal.
    let mut replace = std::mem::take(&mut analyses.scratch.values);
    replace.clear();
    let mut any_replaced = false;
    let mut constant_moved = false;
    // A source folded to read another `FADD.f32` result could fold again in a second run.
    let mut folded_into_add = false;
    for b in 0..shader.blocks.len() {
        for i in 0..shader.blocks[b].insts.len() {
            let id = shader.blocks[b].insts[i];
            let inst = shader.inst(id);
            if inst.dead || !inst.is_machine() {
                continue;
            }
            // Most instructions are no `FADD.f32` and read no marked value: nothing below
            // applies to them, so they are skipped before their sources are copied.
            let reads_marked =
                inst.srcs.iter().any(|s| matches!(s.operand, Operand::Value(y) if negzero_defs[y.index()]));
            if !reads_marked && inst.mach.opcode != Opcode::FADD_F32 {
                continue;
            }
            let info = inst.mach.info();
            let mut srcs = inst.srcs;
            let mut touched = false;
            for (k, sinfo) in info.srcs.iter().enumerate() {
                let src = srcs[k];
                let Operand::Value(y) = src.operand else { continue };
                if !negzero_defs[y.index()] {
                    continue;
                }
                let Some((inner, Clamp::None)) = negzero_add(shader, y) else { continue };
                // Only a binary32 source takes the f32 sign flags as they are: on a 16-bit source
                // they act on each half, and the f32 negation moved only bit 31.
                let float_mods_ok =
                    sinfo.neg.is_some() && sinfo.abs.is_some() && sinfo.size == 32 && sinfo.lane.is_none();
                let plain_inner = !inner.not && inner.widen == 0 && inner.lane == 0 && inner.swizzle == 0;
                if !plain_inner || src.swizzle != 0 || src.widen != 0 || src.lane != 0 || src.not {
                    continue;
                }
                if !float_mods_ok && (inner.neg || inner.abs) {
                    continue;
                }
                // consumer(neg2, abs2) ∘ inner(neg1, abs1)
                let (neg, abs) = if src.abs { (src.neg, true) } else { (src.neg ^ inner.neg, inner.abs) };
                if (neg || abs) && !float_mods_ok {
                    continue;
                }
                srcs[k] = Src { operand: inner.operand, neg, abs, ..src };
                touched = true;
                match inner.operand {
                    Operand::Value(x) => {
                        constant_moved |= is_literal_copy(shader, x);
                        folded_into_add |= shader.values[x.index()].def.is_some_and(|d| {
                            let def = shader.inst(d);
                            !def.dead && def.opcode() == Some(Opcode::FADD_F32)
                        });
                    }
                    Operand::Const(_) => constant_moved = true,
                    _ => {}
                }
            }
            if touched {
                shader.inst_mut(id).srcs = srcs;
                changed = true;
                // A folded source can make this an add of −0 (`x + (−0 + −0)`): its result is
                // marked like those found before the walk, so that the marks keep covering
                // every value `negzero_add` accepts.
                let inst = shader.inst(id);
                if inst.mach.opcode == Opcode::FADD_F32 && adds_negative_zero(&srcs) {
                    negzero_defs[shader.get(inst.dests)[0].index()] = true;
                }
            }
            // Clamp into the single-use producer, or an empty FADD into its source.
            let inst = shader.inst(id);
            if inst.mach.opcode == Opcode::FADD_F32
                && inst.mach.flow == 0
                && srcs[1].operand == Operand::Const(NEG_ZERO)
                && srcs[1].is_plain()
            {
                let dest = shader.get(inst.dests)[0];
                let src = srcs[0];
                let clamp = inst.mach.clamp().unwrap_or(Clamp::None);
                let Operand::Value(x) = src.operand else { continue };
                if !src.is_plain() {
                    continue;
                }
                if clamp == Clamp::None {
                    constant_moved |= is_literal_copy(shader, x);
                    if replace.is_empty() {
                        replace.resize(shader.values.len(), None);
                    }
                    replace[dest.index()] = Some(x);
                    any_replaced = true;
                    shader.inst_mut(id).dead = true;
                    changed = true;
                    continue;
                }
                if uses[x.index()] != 1 {
                    held_by_uses = true;
                    continue;
                }
                // A producer already removed this round (an empty FADD forwarded to its own
                // source) must not take the clamp: its result is gone, the clamp would be lost.
                let Some(def) = shader.values[x.index()].def else { continue };
                let producer = shader.inst_mut(def);
                if !producer.dead
                    && producer.is_machine()
                    && producer.mach.info().name.ends_with(".f32")
                    && producer.mach.clamp() == Some(Clamp::None)
                    && producer.mach.set_clamp(clamp).is_ok()
                {
                    if replace.is_empty() {
                        replace.resize(shader.values.len(), None);
                    }
                    replace[dest.index()] = Some(x);
                    any_replaced = true;
                    shader.inst_mut(id).dead = true;
                    changed = true;
                }
            }
        }
    }
    let mut phi_made_trivial = false;
    if any_replaced {
        let resolve = |mut v: Value| {
            while let Some(w) = replace[v.index()] {
                v = w;
            }
            v
        };
        phi_made_trivial = super::phi_made_trivial(shader, |v| replace[v.index()].map(|_| resolve(v)));
        shader.rewrite_uses(|v| replace[v.index()].map(|_| Operand::Value(resolve(v))));
        shader.compact();
    }
    let scratch = &mut analyses.scratch;
    (scratch.flags, scratch.counts, scratch.values) = (negzero_defs, uses, replace);
    // Renamed readers and chains of folds can give a second run work, and so can a layout that
    // puts a reader before the producer it folded (a later fold changed the producer).
    let settled = !changed
        || (!any_replaced
            && !folded_into_add
            && (shader.blocks.len() == 1 || analyses.dom(shader).layout_follows_dominance()));
    Outcome { changed, held_by_uses, phi_made_trivial, constant_moved, settled, ..Outcome::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    fn check(input: &str, expected: &str) {
        let mut s = parse(input).unwrap();
        run(&mut s);
        crate::opt::dce::run(&mut s);
        crate::ir::verify::verify(&s).unwrap();
        assert_eq!(print(&s), expected);
    }

    const HEAD: &str = "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = preload r61\n";

    #[test]
    fn negation_and_absolute_value_fold_into_consumers() {
        check(
            &format!(
                "{HEAD}    %2 = FADD.f32 %0.neg, #0x80000000\n    %3 = FADD.f32 %2.abs, #0x80000000\n    %4 = FMA.f32 %2, %3.neg, %1\n    STORE.i32.slot0 @%4, %0:%1, offset:0\n    end\n"
            ),
            &format!(
                "{HEAD}    %4 = FMA.f32 %0.neg, %0.neg.abs, %1\n    STORE.i32.slot0 @%4, %0:%1, offset:0\n    end\n"
            ),
        );
    }

    #[test]
    fn saturate_moves_into_a_single_use_producer() {
        check(
            &format!(
                "{HEAD}    %2 = FMA.f32 %0, %1, #0x80000000\n    %3 = FADD.f32.clamp_0_1 %2, #0x80000000\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
            ),
            &format!(
                "{HEAD}    %2 = FMA.f32.clamp_0_1 %0, %1, #0x80000000\n    STORE.i32.slot0 @%2, %0:%1, offset:0\n    end\n"
            ),
        );
        // Two users: the producer keeps its unclamped result.
        let two = format!(
            "{HEAD}    %2 = FMA.f32 %0, %1, #0x80000000\n    %3 = FADD.f32.clamp_0_1 %2, #0x80000000\n    STORE.i64.slot0 @%3:%2, %0:%1, offset:0\n    end\n"
        );
        check(&two, &two);
    }

    #[test]
    fn adds_with_flow_bits_stay() {
        let saturate = format!(
            "{HEAD}    %2 = FMA.f32 %0, %1, #0x80000000\n    %3 = FADD.f32.clamp_0_1.wait0 %2, #0x80000000\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
        );
        check(&saturate, &saturate);
        let negate = format!(
            "{HEAD}    %2 = FADD.f32.wait0 %0.neg, #0x80000000\n    %3 = FMA.f32 %2, %1, %1\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
        );
        check(&negate, &negate);
    }

    #[test]
    fn a_forwarded_producer_does_not_take_the_clamp() {
        // `ADD_SAT x, -0`: the inner empty FADD goes, the clamp stays (corpus add_sat_negative_zero).
        check(
            &format!(
                "{HEAD}    %2 = FADD.f32 %0, #0x80000000\n    %3 = FADD.f32.clamp_0_1 %2, #0x80000000\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
            ),
            &format!(
                "{HEAD}    %3 = FADD.f32.clamp_0_1 %0, #0x80000000\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
            ),
        );
    }

    #[test]
    fn sixteen_bit_lanes_keep_their_own_modifiers() {
        // The f32 negation flips bit 31 only; a v2f16 source's `.neg` would flip both halves.
        let consumer = format!(
            "{HEAD}    %2 = FADD.f32 %0.neg, #0x80000000\n    %3 = FADD.v2f16 %2.h00, %1\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
        );
        check(&consumer, &consumer);
        // Clamping each half of a v2f16 result is not clamping the f32 word.
        let producer = format!(
            "{HEAD}    %2 = FMA.v2f16 %0, %1, %1\n    %3 = FADD.f32.clamp_0_1 %2, #0x80000000\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
        );
        check(&producer, &producer);
    }

    #[test]
    fn integer_sources_do_not_take_float_modifiers() {
        let input = format!(
            "{HEAD}    %2 = FADD.f32 %0.neg, #0x80000000\n    %3 = IADD.s32 %2, %1\n    STORE.i32.slot0 @%3, %0:%1, offset:0\n    end\n"
        );
        check(&input, &input);
    }
}
