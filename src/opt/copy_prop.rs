//! Copy propagation and trivial-φ removal.
//!
//! * `%b = copy %a` (a plain register copy): every use of `%b` becomes `%a`.
//! * `%p = φ(%a, %a, %p, …)` whose arguments are one value besides `%p` itself: every use of
//!   `%p` becomes that value (Braun et al.'s trivial φ; removing one can make others trivial,
//!   so a worklist revisits the φs that used it).
//! * `%c = copy #k` / `copy uN` / `copy special`: machine sources that read the whole word of
//!   `%c` read the constant or FAU word directly (legalisation decides later how it is
//!   encoded). Sources selecting a half, byte or lane, staging operands, φ arguments and branch
//!   conditions keep `%c`.
//!
//! Linear in the program size plus the φ worklist.

use crate::ir::{InstKind, Operand, Shader, Src, Value};

pub fn run(shader: &mut Shader) -> bool {
    let n = shader.values.len();
    // Replacement of each value by a value (register copies and trivial φs).
    let mut forward: Vec<Option<Value>> = vec![None; n];
    let resolve = |forward: &[Option<Value>], mut v: Value| {
        while let Some(w) = forward[v.index()] {
            v = w;
        }
        v
    };
    let mut changed = false;
    // Users of each φ's result, for the worklist.
    let mut phis = Vec::new();
    for b in 0..shader.blocks.len() {
        for i in 0..shader.blocks[b].insts.len() {
            let id = shader.blocks[b].insts[i];
            let inst = shader.inst(id);
            if inst.dead {
                continue;
            }
            match inst.kind {
                InstKind::Copy => {
                    if let Operand::Value(src) = inst.srcs[0].operand
                        && inst.srcs[0].is_plain()
                    {
                        let dest = shader.get(inst.dests)[0];
                        forward[dest.index()] = Some(src);
                        shader.inst_mut(id).dead = true;
                        changed = true;
                    }
                }
                InstKind::Phi => phis.push(id),
                _ => {}
            }
        }
    }
    // Trivial φs, to a fixed point.
    let mut again = true;
    while again {
        again = false;
        for &id in &phis {
            if shader.inst(id).dead {
                continue;
            }
            let dest = shader.get(shader.inst(id).dests)[0];
            let mut unique: Option<Value> = None;
            let mut trivial = true;
            for &arg in shader.get(shader.inst(id).args) {
                let arg = resolve(&forward, arg);
                if arg == dest || Some(arg) == unique {
                    continue;
                }
                if unique.is_some() {
                    trivial = false;
                    break;
                }
                unique = Some(arg);
            }
            if trivial && let Some(u) = unique {
                forward[dest.index()] = Some(u);
                shader.inst_mut(id).dead = true;
                changed = true;
                again = true;
            }
        }
    }
    if changed {
        let forward_resolved: Vec<Option<Value>> =
            (0..n).map(|v| forward[v].map(|_| resolve(&forward, Value(v as u32)))).collect();
        shader.rewrite_uses(|v| forward_resolved[v.index()].map(Operand::Value));
    }
    changed | propagate_constants(shader)
}

/// Machine sources reading a `copy` of a constant, uniform or special read it directly.
fn propagate_constants(shader: &mut Shader) -> bool {
    let n = shader.values.len();
    let mut constant: Vec<Option<Operand>> = vec![None; n];
    for inst in &shader.insts {
        if inst.dead || inst.kind != InstKind::Copy || !inst.srcs[0].is_plain() {
            continue;
        }
        if matches!(inst.srcs[0].operand, Operand::Const(_) | Operand::Uniform(_) | Operand::Special(_)) {
            let dest = shader.get(inst.dests)[0];
            constant[dest.index()] = Some(inst.srcs[0].operand);
        }
    }
    let mut changed = false;
    for b in 0..shader.blocks.len() {
        for i in 0..shader.blocks[b].insts.len() {
            let id = shader.blocks[b].insts[i];
            let inst = shader.inst_mut(id);
            if inst.dead || !inst.is_machine() {
                continue;
            }
            let info = inst.mach.info();
            for (src, sinfo) in inst.srcs.iter_mut().zip(info.srcs) {
                // Only whole-word reads: a constant read through a half, byte or lane select
                // is left in its register (legalisation does not re-encode every such
                // selection of an inline constant exactly; the register read is exact).
                if let Operand::Value(v) = src.operand
                    && let Some(c) = constant[v.index()]
                    && src.swizzle == sinfo.default_swizzle()
                    && src.widen == sinfo.default_widen()
                    && src.lane == 0
                    && sinfo.lane.is_none()
                {
                    *src = Src { operand: c, ..*src };
                    changed = true;
                }
            }
        }
    }
    changed
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

    #[test]
    fn copies_and_constants() {
        check(
            "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = copy %0\n    %2 = copy #0x3F800000\n    %3 = FADD.f32 %1, %2.neg\n    %4 = copy %0\n    %5 = copy %0\n    STORE.i32.slot0 @%2, %4:%5, offset:0\n    end\n",
            "fragment shader\nblock0:\n    %0 = preload r60\n    %2 = copy #0x3F800000\n    STORE.i32.slot0 @%2, %0:%0, offset:0\n    end\n",
        );
    }

    #[test]
    fn trivial_phis_chain() {
        check(
            "fragment shader\nblock0:\n    %0 = preload r60\n    jump block1\nblock1:\n    %1 = phi [%0, block0], [%2, block2]\n    branch.z %0, block3, block2\nblock2:\n    %2 = phi [%1, block1]\n    jump block1\nblock3:\n    %3 = FADD.f32 %1, #0x0\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    end\n",
            "fragment shader\nblock0:\n    %0 = preload r60\n    jump block1\nblock1:                    ; preds: block0, block2\n    branch.z %0, block3, block2\nblock2:                    ; preds: block1\n    jump block1\nblock3:                    ; preds: block1\n    %3 = FADD.f32 %0, #0x0\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    end\n",
        );
    }
}
