//! Register demand and spilling to thread-local storage.
//!
//! **Demand** at an instruction is the number of registers it needs at once: the values that
//! outlive it, plus the larger of its results and its operands that die there, plus one
//! register of alignment slack per vector or pair; a `BLEND` also needs the 17 registers a blend
//! shader clobbers (r0–r15, r48) clear of values that outlive it. One backward walk per block
//! computes it.
//!
//! **Spilling** ("spill everywhere", with Belady's furthest-next-use choice): where the demand
//! exceeds the budget, the values that outlive the instruction, are not read by it, and are not
//! themselves spill code are candidates; the one whose next use is furthest away goes to memory
//! until the demand fits. A spilled value is stored right after its definition
//! (`STORE.i32.force` to `thread_local_pointer + offset`, one 16-byte aligned slot per value)
//! and every instruction that reads it gets a fresh value loaded just before it (`LOAD.i32`;
//! for φ arguments and branch conditions at the end of the predecessor). The walk repeats on
//! the rewritten program until the demand fits everywhere (spill code only adds short live
//! ranges, so one or two rounds suffice).
//!
//! Each round is linear in the program size times the register-file size.

use crate::ir::liveness::Liveness;
use crate::ir::{Block, Inst, InstKind, Operand, Shader, Src, Terminator, Value};
use crate::valhall::{Instr, Opcode, Special};

/// Spill bookkeeping (also read by the checker).
#[derive(Clone, Debug, Default)]
pub struct SpillInfo {
    /// Slot offset of each spilled value.
    pub slot_of: Vec<(Value, u32)>,
    /// Each reload value and the value it reloads.
    pub fill_of: Vec<(Value, Value)>,
    pub spills: u32,
    pub fills: u32,
    /// End of the spill area (bytes of TLS used, caller's base included).
    pub tls_end: u32,
}

/// Slack registers for a vector operand (alignment).
pub(super) fn vector_slack(inst: &Inst) -> u32 {
    if !inst.is_machine() {
        return 0;
    }
    let mut n = 0;
    for k in 0..inst.mach.info().staging.len() {
        if inst.staging[k].len() >= 2 {
            n += 1;
        }
    }
    n += inst.sources().iter().filter(|s| matches!(s.operand, Operand::Pair(..))).count() as u32;
    if inst.dests.len() >= 2 {
        n += 1;
    }
    n
}

/// The demand of a shader measured against a budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Demand {
    /// The largest demand, which fits the budget.
    Fits(u32),
    /// The demand exceeds the budget somewhere; the values the first round of [`spill`] with
    /// that budget chooses (the walk that finds the excess is the one that picks them, so they
    /// are handed to `spill` rather than found again).
    Exceeds(Vec<Value>),
}

/// The largest demand of the blocks `blocks` of the shader (`live` is its liveness).
pub fn demand_of(shader: &Shader, live: &Liveness, blocks: &[Block]) -> u32 {
    if blocks.is_empty() {
        return 0;
    }
    let mut walker = Walker::new(shader);
    let mut victims = Vec::new();
    blocks.iter().map(|&b| walker.walk(shader, live, b, u32::MAX, &mut victims)).max().unwrap_or(0)
}

/// The largest demand of the shader (`live` is its liveness) when it is at most `budget`, else
/// the first spilling round's choice.
pub fn demand_within(shader: &Shader, live: &Liveness, budget: u32) -> Demand {
    let mut walker = Walker::new(shader);
    let mut worst = 0;
    let mut victims = Vec::new();
    for b in 0..shader.blocks.len() {
        worst = worst.max(walker.walk(shader, live, Block(b as u32), budget, &mut victims));
    }
    // Without victims the budget never acted, so `worst` is the true largest demand; demand
    // left above the budget means there was nothing to spill at that point.
    if victims.is_empty() && worst <= budget { Demand::Fits(worst) } else { Demand::Exceeds(victims) }
}

/// `Walker::state` bits of a value.
const LIVE: u8 = 1;
const SPILLED: u8 = 2;
const NO_SPILL: u8 = 4;

struct Walker {
    /// `LIVE`, `SPILLED`, `NO_SPILL` of each value (one array: they are tested together).
    state: Vec<u8>,
    next_use: Vec<u32>,
    /// Scratch for `walk`: the block's instructions and its live set, an instruction's
    /// definitions and (distinct) uses; reused across blocks and instructions.
    insts: Vec<crate::ir::InstId>,
    set: Vec<Value>,
    defs: Vec<Value>,
    uses: Vec<Value>,
}

impl Walker {
    fn new(shader: &Shader) -> Walker {
        let n = shader.values.len();
        Walker {
            state: vec![0; n],
            next_use: vec![u32::MAX; n],
            insts: Vec::new(),
            set: Vec::new(),
            defs: Vec::new(),
            uses: Vec::new(),
        }
    }

    /// Walks block `b` backwards; where the demand exceeds `budget`, chooses values to spill
    /// (pushed to `victims`). Returns the largest demand left in the block.
    fn walk(&mut self, s: &Shader, live_sets: &Liveness, b: Block, budget: u32, victims: &mut Vec<Value>) -> u32 {
        let mut insts = std::mem::take(&mut self.insts);
        insts.clear();
        insts.extend(s.block_insts(b));
        let mut set = std::mem::take(&mut self.set);
        set.clear();
        let mut defs = std::mem::take(&mut self.defs);
        let mut uses = std::mem::take(&mut self.uses);
        for &v in live_sets.live_out(b) {
            if self.state[v.index()] & (SPILLED | LIVE) == 0 {
                self.state[v.index()] |= LIVE;
                self.next_use[v.index()] = u32::MAX;
                set.push(v);
            }
        }
        let mut worst = 0;
        let mut count = set.len() as u32;
        if let Terminator::Branch { cond, .. } = s.block(b).term {
            self.next_use[cond.index()] = insts.len() as u32;
        }
        for (pos, &id) in insts.iter().enumerate().rev() {
            let inst = s.inst(id);
            if inst.kind == InstKind::Phi {
                continue;
            }
            defs.clear();
            s.for_each_def(inst, |v| defs.push(v));
            uses.clear();
            s.for_each_use(inst, |v| {
                if !uses.contains(&v) {
                    uses.push(v);
                }
            });
            let live_defs = defs.iter().filter(|v| self.state[v.index()] & LIVE != 0).count() as u32;
            let through = count - live_defs;
            // (A spilled value is never live.)
            let dying = uses.iter().filter(|v| self.state[v.index()] & LIVE == 0).count() as u32;
            let extra = if inst.is_machine() && inst.mach.opcode == Opcode::BLEND {
                17
            } else {
                (defs.len() as u32).max(dying) + vector_slack(inst)
            };
            let mut demand = through + extra;
            if demand > budget {
                // Candidates: live through the instruction, not read by it.
                set.retain(|v| self.state[v.index()] & LIVE != 0);
                let mut cands: Vec<Value> = set
                    .iter()
                    .copied()
                    .filter(|v| {
                        self.state[v.index()] & (LIVE | NO_SPILL | SPILLED) == LIVE
                            && !defs.contains(v)
                            && !uses.contains(v)
                    })
                    .collect();
                cands.sort_by_key(|v| (std::cmp::Reverse(self.next_use[v.index()]), v.0));
                for v in cands {
                    if demand <= budget {
                        break;
                    }
                    self.state[v.index()] = (self.state[v.index()] | SPILLED) & !LIVE;
                    count -= 1;
                    demand -= 1;
                    victims.push(v);
                }
            }
            worst = worst.max(demand);
            for &d in &defs {
                if self.state[d.index()] & LIVE != 0 {
                    self.state[d.index()] &= !LIVE;
                    count -= 1;
                }
            }
            for &u in &uses {
                self.next_use[u.index()] = pos as u32;
                if self.state[u.index()] & (LIVE | SPILLED) == 0 {
                    self.state[u.index()] |= LIVE;
                    set.push(u);
                    count += 1;
                }
            }
        }
        for &v in &set {
            self.state[v.index()] &= !LIVE;
        }
        self.insts = insts;
        self.set = set;
        self.defs = defs;
        self.uses = uses;
        worst
    }
}

fn tls_pointer() -> Special {
    Special::of("thread_local_pointer", false)
}

/// `STORE.i32.force @v, thread_local_pointer.w0, offset:o`.
fn store(shader: &mut Shader, v: Value, offset: u32) -> Inst {
    let mut m = Instr::new(Opcode::STORE_I32);
    let _ = m.set_modifier("memory_access", 3);
    let _ = m.set_imm("offset", i64::from(offset));
    let mut inst = Inst::machine(m);
    inst.staging[0] = shader.list(&[v]);
    inst.srcs[0] = Src::new(Operand::Special(tls_pointer()));
    inst
}

/// `f = LOAD.i32.unsigned thread_local_pointer.w0, offset:o`.
fn load(shader: &mut Shader, offset: u32) -> (Inst, Value) {
    let mut m = Instr::new(Opcode::LOAD_I32);
    let _ = m.set_flag("unsigned", true);
    let _ = m.set_imm("offset", i64::from(offset));
    let mut inst = Inst::machine(m);
    let list = shader.new_values(1);
    let f = shader.get(list)[0];
    inst.staging[0] = list;
    inst.srcs[0] = Src::new(Operand::Special(tls_pointer()));
    (inst, f)
}

/// Spills until the demand fits `budget` everywhere (or gives up after a few rounds). `live` is
/// the liveness of `shader` as passed in; `first` the victims of the first round when
/// [`demand_within`] already chose them (with the same budget, on `shader` with a fresh `info`).
/// Returns the liveness of the spilled shader, or `None` when nothing was spilled (`live` still
/// holds); an error when the spill area would not fit the 16-bit offsets.
pub fn spill(
    shader: &mut Shader,
    budget: u32,
    info: &mut SpillInfo,
    live: &Liveness,
    mut first: Option<Vec<Value>>,
) -> Result<Option<Liveness>, String> {
    let mut no_spill: Vec<Value> = info.fill_of.iter().map(|f| f.0).collect();
    no_spill.extend(info.slot_of.iter().map(|s| s.0));
    let mut rewritten: Option<Liveness> = None;
    for _round in 0..8 {
        let live = match &rewritten {
            Some(l) => l,
            None => live,
        };
        let victims = match first.take() {
            Some(victims) => victims,
            None => {
                let mut walker = Walker::new(shader);
                for &v in &no_spill {
                    walker.state[v.index()] |= NO_SPILL;
                }
                let mut victims = Vec::new();
                for b in 0..shader.blocks.len() {
                    walker.walk(shader, live, Block(b as u32), budget, &mut victims);
                }
                victims
            }
        };
        if victims.is_empty() {
            return Ok(rewritten);
        }
        let mut batch = Vec::with_capacity(victims.len());
        for v in victims {
            let offset = info.tls_end.div_ceil(16) * 16;
            if offset > 0x7FF0 {
                return Err("the spill area exceeds the 32 KiB reach of a TLS offset".into());
            }
            info.tls_end = offset + 16;
            info.slot_of.push((v, offset));
            no_spill.push(v);
            batch.push((v, offset));
        }
        let fills = rewrite(shader, &batch, info);
        no_spill.extend(fills);
        rewritten = Some(Liveness::compute(shader));
    }
    Ok(rewritten)
}

/// Stores each victim after its definition and reloads it before every reader; returns the
/// reload values. One pass over the program.
fn rewrite(shader: &mut Shader, victims: &[(Value, u32)], info: &mut SpillInfo) -> Vec<Value> {
    let mut slot: Vec<Option<u32>> = vec![None; shader.values.len()];
    for &(v, o) in victims {
        slot[v.index()] = Some(o);
    }
    let mut fills = Vec::new();
    for b in 0..shader.blocks.len() {
        let old = std::mem::take(&mut shader.blocks[b].insts);
        let mut new = Vec::with_capacity(old.len() + 4);
        let mut pending_stores: Vec<(Value, u32)> = Vec::new();
        let mut i = 0;
        while i < old.len() {
            let id = old[i];
            let inst = *shader.inst(id);
            if inst.dead {
                new.push(id);
                i += 1;
                continue;
            }
            if inst.kind != InstKind::Phi {
                let mut readers: Vec<Value> = Vec::new();
                shader.for_each_use(&inst, |u| {
                    if slot.get(u.index()).copied().flatten().is_some() && !readers.contains(&u) {
                        readers.push(u);
                    }
                });
                for v in readers {
                    let (ld, f) = load(shader, slot.get(v.index()).copied().flatten().unwrap_or(0));
                    new.push(shader.add_inst(ld));
                    replace_use(shader, id, v, f);
                    info.fills += 1;
                    info.fill_of.push((f, v));
                    fills.push(f);
                }
            }
            new.push(id);
            shader.for_each_def(&inst, |d| {
                if let Some(o) = slot.get(d.index()).copied().flatten() {
                    pending_stores.push((d, o));
                }
            });
            // Stores go after the group of φs / preloads the definition belongs to.
            let next_same = old.get(i + 1).is_some_and(|&n| {
                let k = shader.inst(n).kind;
                matches!(inst.kind, InstKind::Phi | InstKind::Preload(_)) && k == inst.kind
            });
            if !next_same {
                for (d, o) in pending_stores.drain(..) {
                    let st = store(shader, d, o);
                    new.push(shader.add_inst(st));
                    info.spills += 1;
                }
            }
            i += 1;
        }
        shader.blocks[b].insts = new;
        // φ arguments of successors and the branch condition: reload at the end of the block.
        let mut end_reads: Vec<Value> = Vec::new();
        if let Terminator::Branch { cond, .. } = shader.blocks[b].term
            && slot.get(cond.index()).copied().flatten().is_some()
        {
            end_reads.push(cond);
        }
        let succs: Vec<Block> = shader.succs(Block(b as u32)).collect();
        let mut phi_uses = Vec::new();
        for s in &succs {
            for &id in &shader.blocks[s.index()].insts {
                let inst = shader.inst(id);
                if inst.kind == InstKind::Phi && !inst.dead {
                    for (j, &a) in shader.get(inst.args).iter().enumerate() {
                        if slot.get(a.index()).copied().flatten().is_some()
                            && shader.blocks[s.index()].preds[j].index() == b
                        {
                            phi_uses.push((id, j, a));
                            if !end_reads.contains(&a) {
                                end_reads.push(a);
                            }
                        }
                    }
                }
            }
        }
        for v in end_reads {
            let (ld, f) = load(shader, slot.get(v.index()).copied().flatten().unwrap_or(0));
            let lid = shader.add_inst(ld);
            shader.blocks[b].insts.push(lid);
            if let Terminator::Branch { cond, .. } = &mut shader.blocks[b].term
                && *cond == v
            {
                *cond = f;
            }
            for &(id, j, a) in &phi_uses {
                if a == v {
                    let args = shader.inst(id).args;
                    shader.get_mut(args)[j] = f;
                }
            }
            info.fills += 1;
            info.fill_of.push((f, v));
            fills.push(f);
        }
    }
    fills
}

fn replace_use(shader: &mut Shader, id: crate::ir::InstId, from: Value, to: Value) {
    let mut inst = *shader.inst(id);
    let n = inst.sources().len();
    for src in &mut inst.srcs[..n] {
        src.operand = match src.operand {
            Operand::Value(x) if x == from => Operand::Value(to),
            Operand::Pair(lo, hi) => Operand::Pair(if lo == from { to } else { lo }, if hi == from { to } else { hi }),
            other => other,
        };
    }
    for k in 0..2 {
        if inst.is_machine() && !inst.staging_is_write(k) {
            for x in shader.get_mut(inst.staging[k]) {
                if *x == from {
                    *x = to;
                }
            }
        }
    }
    if inst.kind == InstKind::ParallelCopy {
        for x in shader.get_mut(inst.args) {
            if *x == from {
                *x = to;
            }
        }
    }
    *shader.inst_mut(id) = inst;
}
