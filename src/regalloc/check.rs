//! The allocation checker: a symbolic execution of the machine program against the IR it was
//! allocated for (in the spirit of regalloc2's checker).
//!
//! Every register holds an abstract value (an IR value, up to copies: a `copy` result, a
//! parallel-copy result and a spill reload stand for the value they copy) or nothing known. The
//! checker walks each block from its recorded entry locations (the entry block from the
//! preloads), and verifies:
//!
//! 1. every machine instruction made from an IR instruction has the IR's opcode, modifiers and
//!    immediates, and each register operand holds the IR operand's value (sources, 64-bit pairs,
//!    read staging vectors); constants, uniforms and specials are encoded as given;
//! 2. fixed registers: ATEST/ZS_EMIT write r60 and read the coverage in r60, BLEND reads its
//!    colour from r0 and the coverage from r60; vectors and pairs are even-aligned (checked by
//!    `Instr::validate`);
//! 3. only registers of the allowed set are touched (the 32-register mode);
//! 4. a blend-shader call clobbers r0–r15 and r48: nothing read later may have lived there;
//! 5. at the end of every block each live-in location of each successor (φ results: the
//!    argument for this edge) holds the right value, and a branch reads its condition;
//! 6. the preload mask is exactly the set of registers of preloaded values that are read;
//! 7. spill stores and reloads use the slot of their value; each IR machine instruction appears
//!    exactly once.
//!
//! Reading an `undef` value is always correct: it has no content to preserve.

use super::mach::{MachShader, MachTerm, Origin, Reg, regs};
use super::spill::SpillInfo;
use crate::ir::{InstKind, Operand, Shader, Terminator, Value};
use crate::valhall::{Base, Instr, Opcode};

/// Registers an instruction reads or writes.
pub fn registers_touched(i: &Instr) -> u64 {
    let info = i.info();
    let mut m = 0u64;
    if let Some(d) = i.destination() {
        m |= regs::range(d.reg, info.dest_registers()).unwrap_or(0);
    }
    for st in i.staging_operands() {
        m |= regs::range(st.base, st.count).unwrap_or(0);
    }
    for (src, s) in i.sources().iter().zip(info.srcs) {
        if let Some(r) = src.base.register() {
            m |= regs::range(r, if s.size == 64 { 2 } else { 1 }).unwrap_or(0);
        }
    }
    m
}

/// Checks an allocation; returns every problem found.
pub fn check(shader: &Shader, mach: &MachShader, spill: &SpillInfo, allowed: u64) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let nv = shader.values.len();
    // Canonical values (copies stand for their source).
    let mut canon: Vec<Value> = (0..nv as u32).map(Value).collect();
    let dom = crate::ir::dom::DomTree::compute(shader);
    let mut fill_of = vec![None; nv];
    for &(f, v) in &spill.fill_of {
        fill_of[f.index()] = Some(v);
    }
    let mut slot_of = vec![None; nv];
    for &(v, o) in &spill.slot_of {
        slot_of[v.index()] = Some(o);
    }
    for &b in &dom.rpo {
        for id in shader.block_insts(b) {
            let inst = shader.inst(id);
            match inst.kind {
                InstKind::Copy => {
                    if let Operand::Value(src) = inst.srcs[0].operand {
                        let d = shader.get(inst.dests)[0];
                        canon[d.index()] = canon[src.index()];
                    }
                }
                InstKind::ParallelCopy => {
                    for (d, a) in shader.get(inst.dests).iter().zip(shader.get(inst.args)) {
                        canon[d.index()] = canon[a.index()];
                    }
                }
                _ => {}
            }
            shader.for_each_def(inst, |d| {
                if let Some(v) = fill_of[d.index()] {
                    canon[d.index()] = canon[v.index()];
                }
            });
        }
    }
    let c = |v: Value| canon[v.index()];
    // An undefined value has no content: any register may stand for it.
    let mut undefined = vec![false; nv];
    for inst in &shader.insts {
        if !inst.dead && inst.kind == InstKind::Undef {
            for &d in shader.get(inst.dests) {
                undefined[d.index()] = true;
            }
        }
    }
    let mut seen = vec![0u32; shader.insts.len()];
    let mut preload_used = 0u16;
    // Preloads (all at the top of the entry block after `prepare`).
    let mut preload_regs: Vec<(Value, Reg)> = Vec::new();
    for id in shader.block_insts(crate::ir::Block(0)) {
        if let InstKind::Preload(r) = shader.inst(id).kind {
            preload_regs.push((shader.get(shader.inst(id).dests)[0], r));
        }
    }
    // Rule 6: a preload register is in the mask iff its value is read somewhere.
    let mut used = vec![false; nv];
    for block in &shader.blocks {
        for &id in &block.insts {
            let inst = shader.inst(id);
            if !inst.dead {
                shader.for_each_use(inst, |v| used[v.index()] = true);
            }
        }
        if let Terminator::Branch { cond, .. } = block.term {
            used[cond.index()] = true;
        }
    }
    for &(v, r) in &preload_regs {
        if used[v.index()] && r >= 48 {
            preload_used |= 1 << (r - 48);
        }
    }
    for (bi, block) in mach.blocks.iter().enumerate() {
        let Some(irb) = block.ir_block.map(crate::ir::Block) else {
            errors.push(format!("block{bi}: no IR block"));
            continue;
        };
        let mut state: [Option<Value>; 64] = [None; 64];
        // Where each register's value came from at entry, to track preload reads.
        if bi == 0 {
            for &(v, r) in &preload_regs {
                state[r as usize] = Some(c(v));
            }
        }
        for &(v, r) in &block.live_in {
            state[r as usize] = Some(c(v));
        }
        let read = |state: &[Option<Value>; 64], r: Reg, want: Value, what: &str, errors: &mut Vec<String>| {
            if state[r as usize] != Some(c(want)) && !undefined[c(want).index()] {
                errors.push(format!(
                    "block{bi}: {what} reads r{r} for {want}, but r{r} holds {}",
                    state[r as usize].map_or("nothing known".into(), |v| v.to_string())
                ));
            }
        };
        let mut i = 0;
        while i < block.insts.len() {
            let mi = &block.insts[i];
            let instr = &mi.instr;
            let touched = registers_touched(instr);
            if touched & !allowed != 0 {
                errors.push(format!(
                    "block{bi}: {} uses registers outside the allowed set",
                    crate::valhall::print(instr)
                ));
            }
            let text = || crate::valhall::print(instr);
            match mi.origin {
                Origin::Move => {
                    let s = instr.srcs[0].base.register().unwrap_or(0);
                    state[instr.dest.reg as usize] = state[s as usize];
                }
                Origin::Swap(a, b) => {
                    state.swap(a as usize, b as usize);
                }
                Origin::SwapTail | Origin::Flow | Origin::Branch => {}
                Origin::BlendCall => {
                    if instr.opcode == Opcode::BRANCHZI {
                        for r in 0..64 {
                            if regs::BLEND_CLOBBER & regs::bit(r) != 0 {
                                state[r as usize] = None;
                            }
                        }
                    } else if let Some(d) = instr.destination() {
                        state[d.reg as usize] = None;
                    }
                }
                Origin::Ir(id) => {
                    seen[id.index()] += 1;
                    let inst = shader.inst(id);
                    match inst.kind {
                        InstKind::Copy => {
                            let d = shader.get(inst.dests)[0];
                            match inst.srcs[0].operand {
                                Operand::Value(v) => {
                                    if instr.opcode != Opcode::MOV_I32 {
                                        errors.push(format!("block{bi}: copy of {v} is {}", text()));
                                    }
                                    let s = instr.srcs[0].base.register().unwrap_or(0);
                                    read(&state, s, v, "copy", &mut errors);
                                }
                                Operand::Const(k) => {
                                    let ok = match instr.opcode {
                                        Opcode::MOV_I32 => instr.srcs[0].base.immediate_value() == Some(k),
                                        Opcode::IADD_IMM_I32 => {
                                            instr.srcs[0].base == Base::Immediate(0)
                                                && instr.imm("constant").map(|x| x as u32) == Some(k)
                                        }
                                        _ => false,
                                    };
                                    if !ok {
                                        errors.push(format!("block{bi}: constant 0x{k:X} materialised as {}", text()));
                                    }
                                }
                                other => {
                                    let want = super::assign::fau_base(other).ok();
                                    if instr.opcode != Opcode::MOV_I32 || Some(instr.srcs[0].base) != want {
                                        errors.push(format!("block{bi}: copy of {other:?} is {}", text()));
                                    }
                                }
                            }
                            state[instr.dest.reg as usize] = Some(c(d));
                        }
                        InstKind::Machine => {
                            check_machine(
                                shader,
                                inst,
                                instr,
                                &state,
                                &c,
                                &undefined,
                                &slot_of,
                                &fill_of,
                                bi,
                                &mut errors,
                            );
                            // Results.
                            let mut writes: Vec<(Reg, Value)> = Vec::new();
                            let info = instr.info();
                            for (k, &d) in shader.get(inst.dests).iter().enumerate() {
                                writes.push((instr.dest.reg + k as u8, d));
                            }
                            for (k, st) in info.staging.iter().enumerate() {
                                if st.write {
                                    for (j, &d) in shader.get(inst.staging[k]).iter().enumerate() {
                                        writes.push((instr.staging[k].base + j as u8, d));
                                    }
                                }
                            }
                            for (r, d) in writes {
                                if (r as usize) < 64 {
                                    state[r as usize] = Some(c(d));
                                }
                            }
                        }
                        _ => errors.push(format!("block{bi}: machine code for a {:?}", inst.kind)),
                    }
                }
            }
            i += 1;
        }
        // Terminator.
        let ir_term = shader.block(irb).term;
        if let (MachTerm::Branch { cond, .. }, Terminator::Branch { cond: v, .. }) = (block.term, ir_term) {
            read(&state, cond, v, "branch", &mut errors);
        }
        for succ in block.term.successors() {
            let sb = &mach.blocks[succ];
            let Some(sirb) = sb.ir_block.map(crate::ir::Block) else { continue };
            let k = shader.block(sirb).preds.iter().position(|p| *p == irb);
            for &(v, r) in &sb.live_in {
                let def = shader.values[v.index()].def;
                let want = match def.map(|d| shader.inst(d)) {
                    Some(inst) if inst.kind == InstKind::Phi && shader.block_insts(sirb).any(|i| Some(i) == def) => {
                        match k.and_then(|k| shader.get(inst.args).get(k)) {
                            Some(&a) => a,
                            None => continue,
                        }
                    }
                    _ => v,
                };
                read(&state, r, want, &format!("the edge to block{succ}"), &mut errors);
            }
        }
    }
    for &b in &dom.rpo {
        for id in shader.block_insts(b) {
            if shader.inst(id).kind == InstKind::Machine && seen[id.index()] != 1 {
                errors.push(format!("{b}: an IR instruction appears {} times in the machine code", seen[id.index()]));
            }
        }
    }
    if preload_used != mach.preload {
        errors
            .push(format!("preload mask {:#06x}, but the program reads preloads {:#06x}", mach.preload, preload_used));
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

#[allow(clippy::too_many_arguments)]
fn check_machine(
    shader: &Shader,
    inst: &crate::ir::Inst,
    instr: &Instr,
    state: &[Option<Value>; 64],
    c: &dyn Fn(Value) -> Value,
    undefined: &[bool],
    slot_of: &[Option<u32>],
    fill_of: &[Option<Value>],
    bi: usize,
    errors: &mut Vec<String>,
) {
    let info = instr.info();
    let name = info.name;
    let mut err = |m: String| errors.push(format!("block{bi}: {name}: {m}"));
    if instr.opcode != inst.mach.opcode || instr.mods != inst.mach.mods || instr.imms != inst.mach.imms {
        err(format!("opcode, modifiers or immediates differ from the IR: {}", crate::valhall::print(instr)));
    }
    if let Err(e) = instr.validate() {
        err(format!("invalid: {e}"));
    }
    let holds = |r: u8, v: Value| undefined[c(v).index()] || state.get(r as usize).copied().flatten() == Some(c(v));
    for (k, src) in inst.sources().iter().enumerate() {
        let m = instr.srcs[k];
        if src.to_machine(m.base) != m {
            err(format!("source {k} modifiers differ from the IR"));
        }
        match src.operand {
            Operand::Value(v) => match m.base.register() {
                Some(r) if holds(r, v) => {}
                _ => err(format!("source {k} should read {v}")),
            },
            Operand::Pair(lo, hi) => match m.base.register() {
                Some(r) if r % 2 == 0 && holds(r, lo) && holds(r + 1, hi) => {}
                _ => err(format!("source {k} should read the pair {lo}:{hi} from an even register")),
            },
            other => {
                if super::assign::fau_base(other).ok() != Some(m.base) {
                    err(format!("source {k} should be {other:?}"));
                }
            }
        }
    }
    for (k, st) in info.staging.iter().enumerate() {
        let vals = shader.get(inst.staging[k]);
        let g = instr.staging[k];
        if g.count as usize != vals.len() {
            err(format!("staging operand {k} has {} registers, the IR {}", g.count, vals.len()));
            continue;
        }
        if !st.write {
            for (j, &v) in vals.iter().enumerate() {
                if !holds(g.base + j as u8, v) {
                    err(format!("staging register r{} should hold {v}", g.base + j as u8));
                }
            }
        }
    }
    // Fixed registers.
    let reg_of = |k: usize| instr.srcs[k].base.register();
    let bad = match instr.opcode {
        Opcode::ATEST => {
            instr.staging[0].base != 60 || matches!(inst.srcs[0].operand, Operand::Value(_)) && reg_of(0) != Some(60)
        }
        Opcode::ZS_EMIT => {
            instr.staging[0].base != 60 || matches!(inst.srcs[2].operand, Operand::Value(_)) && reg_of(2) != Some(60)
        }
        Opcode::BLEND => {
            instr.staging[0].base != 0 || matches!(inst.srcs[1].operand, Operand::Value(_)) && reg_of(1) != Some(60)
        }
        _ => false,
    };
    if bad {
        err("fixed registers: coverage must be in r60, a BLEND colour in r0-r3".into());
    }
    // Spill code.
    if instr.opcode == Opcode::STORE_I32 {
        let vals = shader.get(inst.staging[0]);
        if let Some(&v) = vals.first()
            && let Some(o) = slot_of[v.index()]
            && instr.imm("offset") == Some(i64::from(o))
            && matches!(inst.srcs[0].operand, Operand::Special(_))
        {
            // A spill store of v to its slot.
        } else if vals.first().is_some_and(|v| slot_of[v.index()].is_some())
            && matches!(inst.srcs[0].operand, Operand::Special(_))
        {
            err("spill store to the wrong slot".into());
        }
    }
    if instr.opcode == Opcode::LOAD_I32
        && let Some(&f) = shader.get(inst.staging[0]).first()
        && let Some(v) = fill_of[f.index()]
        && slot_of[v.index()].map(i64::from) != instr.imm("offset")
    {
        err(format!("reload of {v} from the wrong slot"));
    }
}
