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
//! Linear in the program size plus the φ worklist (each φ is revisited once per argument that
//! resolves to a removed φ, at a cost logarithmic in the number of pending φs).

use super::{Scratch, filled};
use crate::ir::{InstId, InstKind, Operand, Shader, Src, Value};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub fn run(shader: &mut Shader) -> bool {
    run_in(shader, &mut Scratch::default())
}

/// [`run`] with side tables borrowed from `scratch`.
pub fn run_in(shader: &mut Shader, scratch: &mut Scratch) -> bool {
    let n = shader.values.len();
    // Replacement of each value by a value (register copies and trivial φs).
    let mut forward = filled(std::mem::take(&mut scratch.values), n, None);
    let mut changed = false;
    let mut phis = std::mem::take(&mut scratch.insts);
    phis.clear();
    // Values defined by a copy of a constant, uniform or special (`propagate_constants`);
    // empty until the first one.
    let mut constant = std::mem::take(&mut scratch.operands);
    constant.clear();
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
                    } else if inst.srcs[0].is_plain()
                        && matches!(inst.srcs[0].operand, Operand::Const(_) | Operand::Uniform(_) | Operand::Special(_))
                    {
                        if constant.is_empty() {
                            constant.resize(n, None);
                        }
                        constant[shader.get(inst.dests)[0].index()] = Some(inst.srcs[0].operand);
                    }
                }
                InstKind::Phi => phis.push(id),
                _ => {}
            }
        }
    }
    if !phis.is_empty() {
        changed |= remove_trivial_phis(shader, &mut forward, &phis).removed > 0;
    }
    if changed {
        for v in 0..n {
            if forward[v].is_some() {
                forward[v] = Some(resolve(&mut forward, Value(v as u32)));
            }
        }
        shader.rewrite_uses(|v| forward[v.index()].map(Operand::Value));
    }
    // Without constant copies there is nothing to propagate.
    changed |= !constant.is_empty() && propagate_constants(shader, &constant);
    (scratch.values, scratch.insts, scratch.operands) = (forward, phis, constant);
    changed
}

/// The value `v` stands for after the replacements in `forward`. The values on the way are
/// pointed straight at it (the same replacement, found in one step next time), so long copy
/// chains stay linear.
fn resolve(forward: &mut [Option<Value>], v: Value) -> Value {
    let mut root = v;
    while let Some(w) = forward[root.index()] {
        root = w;
    }
    let mut at = v;
    while let Some(w) = forward[at.index()] {
        if w != root {
            forward[at.index()] = Some(root);
        }
        at = w;
    }
    root
}

/// What [`remove_trivial_phis`] did.
struct PhiWork {
    removed: usize,
    /// φ examinations (linear in the φs and their arguments, also for long chains).
    visits: usize,
}

/// Removes trivial φs (their arguments other than the φ itself are one value) to a fixed point,
/// recording each in `forward`. The result is that of sweeping `phis` in order until a sweep
/// removes nothing — which φ of a cycle such as `%1 = φ(%2, %2)`, `%2 = φ(%1, %2)` goes
/// depends on that order — but a φ is only examined again when one of its arguments has come
/// to stand for another value since its last examination: a sweep would find the others
/// unchanged. Each unresolved value keeps the list of φ arguments that resolve to it; when
/// its φ is removed, those φs are due again (later in the current sweep, or in the next one)
/// and the list moves to the replacement.
fn remove_trivial_phis(shader: &mut Shader, forward: &mut [Option<Value>], phis: &[InstId]) -> PhiWork {
    const NONE: u32 = u32::MAX;
    let mut work = PhiWork { removed: 0, visits: 0 };
    // The first sweep is a plain one: usually it removes nothing and the lists below are never
    // needed. A φ needs another look only if a φ at its position or after it was removed
    // (a removal before it was seen when it was examined), so the worklist starts with the
    // positions up to the last removal.
    let mut last_removed = None;
    for (pos, &id) in phis.iter().enumerate() {
        work.visits += 1;
        if remove_if_trivial(shader, forward, id).is_some() {
            work.removed += 1;
            last_removed = Some(pos);
        }
    }
    let Some(last_removed) = last_removed else { return work };
    let n = forward.len();
    // Linked lists of φ positions by resolved argument: `head`/`tail` per value, `next` per entry.
    let (mut head, mut tail) = (vec![NONE; n], vec![NONE; n]);
    let mut entry_phi: Vec<u32> = Vec::new();
    let mut next: Vec<u32> = Vec::new();
    for (pos, &id) in phis.iter().enumerate() {
        if shader.inst(id).dead {
            continue;
        }
        for &arg in shader.get(shader.inst(id).args) {
            let r = resolve(forward, arg).index();
            let e = entry_phi.len() as u32;
            entry_phi.push(pos as u32);
            next.push(NONE);
            if tail[r] == NONE {
                head[r] = e;
            } else {
                next[tail[r] as usize] = e;
            }
            tail[r] = e;
        }
    }
    // Positions due in the current sweep (a min-heap, so the sweep keeps `phis` order) and in
    // the next.
    let mut current: BinaryHeap<Reverse<u32>> = (0..=last_removed as u32).map(Reverse).collect();
    let mut due_now: Vec<bool> = (0..phis.len()).map(|pos| pos <= last_removed).collect();
    let mut due_next = vec![false; phis.len()];
    let mut upcoming: Vec<u32> = Vec::new();
    loop {
        while let Some(Reverse(pos)) = current.pop() {
            due_now[pos as usize] = false;
            let id = phis[pos as usize];
            if shader.inst(id).dead {
                continue;
            }
            work.visits += 1;
            let Some(u) = remove_if_trivial(shader, forward, id) else { continue };
            work.removed += 1;
            let dest = shader.get(shader.inst(id).dests)[0];
            // The φs reading `dest` are due again; their arguments now resolve to `u`.
            let mut e = head[dest.index()];
            while e != NONE {
                let user = entry_phi[e as usize];
                if user > pos {
                    if !due_now[user as usize] {
                        due_now[user as usize] = true;
                        current.push(Reverse(user));
                    }
                } else if !due_next[user as usize] {
                    due_next[user as usize] = true;
                    upcoming.push(user);
                }
                e = next[e as usize];
            }
            if head[dest.index()] != NONE {
                if tail[u.index()] == NONE {
                    head[u.index()] = head[dest.index()];
                } else {
                    next[tail[u.index()] as usize] = head[dest.index()];
                }
                tail[u.index()] = tail[dest.index()];
                head[dest.index()] = NONE;
                tail[dest.index()] = NONE;
            }
        }
        if upcoming.is_empty() {
            break;
        }
        for pos in upcoming.drain(..) {
            due_next[pos as usize] = false;
            due_now[pos as usize] = true;
            current.push(Reverse(pos));
        }
    }
    work
}

/// If the φ `id` is trivial (its arguments other than itself resolve to one value), records
/// that replacement in `forward`, kills it and returns the replacement.
fn remove_if_trivial(shader: &mut Shader, forward: &mut [Option<Value>], id: InstId) -> Option<Value> {
    let inst = shader.inst(id);
    if inst.dead {
        return None;
    }
    let dest = shader.get(inst.dests)[0];
    let mut unique: Option<Value> = None;
    for &arg in shader.get(inst.args) {
        let arg = resolve(forward, arg);
        if arg == dest || Some(arg) == unique {
            continue;
        }
        if unique.is_some() {
            return None;
        }
        unique = Some(arg);
    }
    let u = unique?;
    forward[dest.index()] = Some(u);
    shader.inst_mut(id).dead = true;
    Some(u)
}

/// Machine sources reading a `copy` of a constant, uniform or special (`constant`, by value)
/// read it directly.
fn propagate_constants(shader: &mut Shader, constant: &[Option<Operand>]) -> bool {
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

    /// A chain of `n + 1` φs, each trivial once the one before it has gone, laid out in the
    /// reverse order: a sweep in layout order removes one φ per sweep.
    fn reversed_phi_chain(n: usize) -> String {
        // block0, then J_n, T_n, …, J_0, T_0; J_k holds `q_k` (value 2 + k).
        let j = |k: usize| 1 + 2 * (n - k);
        let t = |k: usize| 2 + 2 * (n - k);
        let mut blocks = vec![String::new(); 2 * n + 3];
        blocks[0] = format!(
            "block0:\n    %0 = preload r60\n    %1 = preload r61\n    branch.z %1, block{}, block{}\n",
            j(0),
            t(0)
        );
        for k in 0..=n {
            let first = if k == 0 { "%0, block0".to_string() } else { format!("%{}, block{}", k + 1, j(k - 1)) };
            let tail = if k == n {
                format!("    STORE.i32.slot0 @%{}, %0:%0, offset:0\n    end\n", k + 2)
            } else {
                format!("    branch.z %1, block{}, block{}\n", j(k + 1), t(k + 1))
            };
            blocks[j(k)] = format!("block{}:\n    %{} = phi [{first}], [%0, block{}]\n{tail}", j(k), k + 2, t(k));
            blocks[t(k)] = format!("block{}:\n    jump block{}\n", t(k), j(k));
        }
        format!("fragment shader\n{}", blocks.concat())
    }

    #[test]
    fn long_reversed_phi_chains_stay_linear() {
        let n = 2000;
        let mut s = parse(&reversed_phi_chain(n)).unwrap();
        crate::ir::verify::verify(&s).unwrap();
        let phis: Vec<_> = (0..s.blocks.len())
            .flat_map(|b| s.blocks[b].insts.clone())
            .filter(|&id| s.inst(id).kind == InstKind::Phi)
            .collect();
        assert_eq!(phis.len(), n + 1);
        let mut forward = vec![None; s.values.len()];
        let work = remove_trivial_phis(&mut s, &mut forward, &phis);
        assert_eq!(work.removed, n + 1);
        // Sweeping every φ until nothing changes would take n + 1 sweeps: (n + 1)² visits. Here:
        // the plain first sweep, a second over the φs left, then one visit per removal.
        assert!(work.visits <= 3 * (n + 1), "{} visits", work.visits);
        let mut s = parse(&reversed_phi_chain(n)).unwrap();
        assert!(run(&mut s));
        crate::ir::verify::verify(&s).unwrap();
        let text = print(&s);
        assert!(!text.contains("phi"), "{text}");
        assert!(text.contains("STORE.i32.slot0 @%0, %0:%0"), "{text}");
    }

    #[test]
    fn trivial_phis_chain() {
        check(
            "fragment shader\nblock0:\n    %0 = preload r60\n    jump block1\nblock1:\n    %1 = phi [%0, block0], [%2, block2]\n    branch.z %0, block3, block2\nblock2:\n    %2 = phi [%1, block1]\n    jump block1\nblock3:\n    %3 = FADD.f32 %1, #0x0\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    end\n",
            "fragment shader\nblock0:\n    %0 = preload r60\n    jump block1\nblock1:                    ; preds: block0, block2\n    branch.z %0, block3, block2\nblock2:                    ; preds: block1\n    jump block1\nblock3:                    ; preds: block1\n    %3 = FADD.f32 %0, #0x0\n    STORE.i32.slot0 @%3, %0:%0, offset:0\n    end\n",
        );
    }
}
