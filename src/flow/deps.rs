//! Dependency slots and waits (correctness; `merge` then removes most of the NOPs).
//!
//! Slots (§B.2): `ATEST` and `ZS_EMIT` use slot 0, `BARRIER` slot 7, every other message
//! instruction takes slots 0, 1, 2 round-robin in layout order.
//!
//! A forward data-flow over the CFG (union at joins, iterated to a fixed point) tracks, per
//! general slot, the registers still being written by outstanding messages and whether a
//! varying load or a memory access is outstanding. Before each instruction it computes the
//! slots to wait for (§B.3):
//!
//! * D1 — RAW/WAW: the instruction reads (sources, read staging vectors, branch conditions) or
//!   writes (destinations, written staging vectors) a register a pending message writes;
//! * D2 — WAR on staging sources is left to the hardware (no wait);
//! * D3 — a varying load with `.store` or `.clobber` waits for every slot with a varying load
//!   outstanding; at the end of every block outstanding varying loads are waited for;
//! * D4 — a memory access (LOAD/STORE/atomics, LD_BUFFER unless its handle is a constant UBO
//!   handle, LD_TEX*, ST_CVT) waits for every slot with a memory access outstanding;
//! * D5 — BARRIER waits for every busy general slot, and carries `.wait` itself;
//! * D6 — fragment shaders: `.wait` (0,1,2,6,7) right before BLEND, LD_TILE, ST_TILE;
//!   `.wait0126` right before ATEST and ZS_EMIT; `.wait0` right after ATEST.
//!
//! A wait is a `NOP` carrying the flow, placed right before the instruction (folded into the
//! instruction before it where [`merge`](super::merge) allows); a wait after an instruction is
//! its own flow. Waiting clears the slots.

use super::{flows, merge};
use crate::ir::Stage;
use crate::regalloc::mach::{MachShader, Origin, regs};
use crate::valhall::tables::{INSTRUCTION_COUNT, MAX_STAGING};
use crate::valhall::{Base, Instr, Opcode};
use std::sync::LazyLock;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Slot {
    regs: u64,
    varying: bool,
    memory: bool,
    busy: bool,
}

type State = [Slot; 3];

fn union(a: &State, b: &State) -> State {
    let mut s = *a;
    for k in 0..3 {
        s[k].regs |= b[k].regs;
        s[k].varying |= b[k].varying;
        s[k].memory |= b[k].memory;
        s[k].busy |= b[k].busy;
    }
    s
}

/// Whether an instruction is a message (asynchronous, completes through a slot).
pub fn is_message(i: &Instr) -> bool {
    !i.unit().is_alu()
}

/// Registers read by an instruction (sources and read staging vectors).
pub fn reads(i: &Instr) -> u64 {
    reads_of(i, &op_facts(i.opcode))
}

/// Registers written by an instruction.
pub fn writes(i: &Instr) -> u64 {
    writes_of(i, &op_facts(i.opcode))
}

/// `n` registers from `base` as a mask; nothing if they run past r63.
fn span(base: u8, n: u8) -> u64 {
    regs::range(base, n).unwrap_or(0)
}

fn reads_of(i: &Instr, facts: &OpFacts) -> u64 {
    let mut m = 0;
    for (k, src) in i.srcs[..usize::from(facts.sources)].iter().enumerate() {
        if let Base::Register(r) | Base::Discard(r) = src.base {
            m |= span(r, 1 + (facts.wide_sources >> k & 1));
        }
    }
    for (st, write) in i.staging.iter().zip(facts.staging_writes) {
        if write == Some(false) {
            m |= span(st.base, st.count);
        }
    }
    m
}

fn writes_of(i: &Instr, facts: &OpFacts) -> u64 {
    let mut m = if facts.dest_width > 0 { span(i.dest.reg, facts.dest_width) } else { 0 };
    for (st, write) in i.staging.iter().zip(facts.staging_writes) {
        if write == Some(true) {
            m |= span(st.base, st.count);
        }
    }
    m
}

/// A varying load (V or VT unit).
pub fn is_varying(i: &Instr) -> bool {
    matches!(i.unit(), crate::valhall::Unit::V | crate::valhall::Unit::Vt)
}

/// What the pass needs to know about an opcode, looked up once per opcode rather than by
/// modifier name and mnemonic for every instruction.
#[derive(Clone, Copy, Debug)]
struct OpFacts {
    /// A message (not an ALU instruction).
    message: bool,
    /// A varying load (V or VT unit).
    varying: bool,
    /// Number of sources, and which of them are 64-bit (bit k for source k).
    sources: u8,
    wide_sources: u8,
    /// Registers of the destination (0 without one, 2 for 64-bit types).
    dest_width: u8,
    /// Per staging operand: whether it is written (`None` when absent).
    staging_writes: [Option<bool>; MAX_STAGING],
    /// Index of the `slot` modifier.
    slot: Option<u8>,
    /// Index of the `update_mode` modifier of a varying load.
    update_mode: Option<u8>,
    memory: MemoryClass,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemoryClass {
    None,
    /// Always ordered against other memory accesses.
    Always,
    /// `LD_BUFFER*`: unless it reads a constant UBO handle.
    Buffer,
}

fn op_facts(op: Opcode) -> OpFacts {
    static FACTS: LazyLock<Box<[OpFacts; INSTRUCTION_COUNT]>> = LazyLock::new(|| {
        let none = OpFacts {
            message: false,
            varying: false,
            sources: 0,
            wide_sources: 0,
            dest_width: 0,
            staging_writes: [None; MAX_STAGING],
            slot: None,
            update_mode: None,
            memory: MemoryClass::None,
        };
        let mut table = Box::new([none; INSTRUCTION_COUNT]);
        for op in Opcode::ALL {
            let info = op.info();
            let name = info.name;
            let memory = if name.starts_with("LD_BUFFER") {
                MemoryClass::Buffer
            } else if name.starts_with("LOAD.")
                || name.starts_with("STORE.")
                || name.starts_with("ATOM")
                || name.starts_with("LD_TEX")
                || name == "ST_CVT"
            {
                MemoryClass::Always
            } else {
                MemoryClass::None
            };
            let varying = matches!(info.unit, crate::valhall::Unit::V | crate::valhall::Unit::Vt);
            let mut staging_writes = [None; MAX_STAGING];
            for (k, st) in info.staging.iter().enumerate() {
                staging_writes[k] = Some(st.write);
            }
            let wide = info.srcs.iter().enumerate().filter(|(_, s)| s.size == 64);
            table[op as usize] = OpFacts {
                message: !info.unit.is_alu(),
                varying,
                sources: info.srcs.len() as u8,
                wide_sources: wide.fold(0, |m, (k, _)| m | 1 << k),
                dest_width: if !info.dest {
                    0
                } else if info.type_size == 64 {
                    2
                } else {
                    1
                },
                staging_writes,
                slot: info.mod_index("slot").map(|k| k as u8),
                update_mode: info.mod_index("update_mode").filter(|_| varying).map(|k| k as u8),
                memory,
            };
        }
        table
    });
    FACTS[op as usize]
}

/// A varying load that updates the hidden per-quad state (`.store` / `.clobber`).
fn serialises_varyings(i: &Instr, facts: &OpFacts) -> bool {
    facts.update_mode.is_some_and(|k| matches!(i.mods[usize::from(k)], 0 | 3))
}

/// A memory access ordered against other memory accesses (rule D4).
pub fn is_memory(i: &Instr) -> bool {
    memory_access(i, &op_facts(i.opcode))
}

fn memory_access(i: &Instr, facts: &OpFacts) -> bool {
    match facts.memory {
        MemoryClass::None => false,
        MemoryClass::Always => true,
        // A UBO load (constant handle of table 0) is read-only.
        MemoryClass::Buffer => {
            !matches!(i.srcs[1].base, Base::Immediate(_))
                || i.srcs[1].base.immediate_value().is_some_and(|h| h >> 24 != 0)
        }
    }
}

fn is_fixed_function(op: Opcode) -> bool {
    matches!(op, Opcode::BLEND | Opcode::LD_TILE | Opcode::ST_TILE)
}

/// What the simulation needs to know about one instruction (computed once per instruction, as
/// the fixed point visits blocks several times).
#[derive(Clone, Copy, Debug)]
struct Effect {
    /// Registers read or written.
    touched: u64,
    writes: u64,
    /// General slot of a message (`None` for ALU instructions, slot 7 or no slot).
    slot: Option<usize>,
    message: bool,
    varying: bool,
    memory: bool,
    serialises_varyings: bool,
    barrier: bool,
    /// Waits the instruction always needs before it (D6).
    fixed_waits: u8,
    /// Slots its own flow waits for after it.
    waits_after: u8,
}

impl Effect {
    fn of(i: &Instr, fragment: bool) -> Effect {
        let writes = writes_of(i, &op_facts(i.opcode));
        let mut fixed_waits = 0;
        if fragment {
            if is_fixed_function(i.opcode) {
                fixed_waits |= 0b111 | flows::SLOT6 | flows::SLOT7;
            }
            if matches!(i.opcode, Opcode::ATEST | Opcode::ZS_EMIT) {
                fixed_waits |= 0b111 | flows::SLOT6;
            }
        }
        let facts = op_facts(i.opcode);
        let message = facts.message;
        Effect {
            touched: reads_of(i, &facts) | writes,
            writes,
            slot: if message { slot_of(i, &facts) } else { None },
            message,
            varying: facts.varying,
            memory: memory_access(i, &facts),
            serialises_varyings: serialises_varyings(i, &facts),
            barrier: i.opcode == Opcode::BARRIER,
            fixed_waits,
            waits_after: flows::mask_of(i.flow),
        }
    }

    /// The waits needed right before the instruction in state `s` (slot mask, see [`flows`]).
    fn waits_before(&self, s: &State) -> u8 {
        let mut mask = self.fixed_waits;
        for (k, slot) in s.iter().enumerate() {
            if slot.regs & self.touched != 0
                || self.serialises_varyings && slot.varying
                || self.memory && slot.memory
                || self.barrier && slot.busy
            {
                mask |= 1 << k;
            }
        }
        mask
    }

    fn issue(&self, s: &mut State) {
        if !self.message {
            return;
        }
        if let Some(k) = self.slot {
            let slot = &mut s[k];
            slot.regs |= self.writes;
            slot.busy = true;
            slot.varying |= self.varying;
            slot.memory |= self.memory;
        }
        // The flow of the instruction itself takes effect after it.
        apply_wait(s, self.waits_after);
    }
}

fn apply_wait(s: &mut State, mask: u8) {
    for (k, slot) in s.iter_mut().enumerate() {
        if mask & (1 << k) != 0 {
            *slot = Slot::default();
        }
    }
}

/// The general slot of a message (None for slot 7 or instructions without a slot).
fn slot_of(i: &Instr, facts: &OpFacts) -> Option<usize> {
    if i.opcode == Opcode::ATEST {
        return Some(0);
    }
    match facts.slot.map(|k| i.mods[usize::from(k)]) {
        Some(k) if k < 3 => Some(k as usize),
        _ => None,
    }
}

/// Simulates a block from `entry`, recording the waits before each instruction in `masks`.
fn simulate(effects: &[Effect], entry: State, masks: &mut [u8]) -> State {
    let mut s = entry;
    for (e, record) in effects.iter().zip(masks) {
        let mask = e.waits_before(&s);
        apply_wait(&mut s, mask);
        *record = mask;
        e.issue(&mut s);
    }
    s
}

/// Outstanding varying loads are waited for at the end of a block (D3): the slot mask.
fn varying_mask(s: &State) -> u8 {
    let mut vmask = 0;
    for (k, slot) in s.iter().enumerate() {
        if slot.varying {
            vmask |= 1 << k;
        }
    }
    vmask
}

/// Assigns slots and inserts the wait NOPs.
pub fn insert(mach: &mut MachShader) {
    let fragment = mach.stage == Stage::Fragment;
    // Slots.
    let mut next = 0u8;
    for b in &mut mach.blocks {
        for mi in &mut b.insts {
            let i = &mut mi.instr;
            let facts = op_facts(i.opcode);
            let slot_modifier = facts.slot;
            if !facts.message || slot_modifier.is_none() {
                if i.opcode == Opcode::ATEST && fragment {
                    i.flow = 1; // .wait0 after ATEST (D6)
                }
                continue;
            }
            let slot = match i.opcode {
                Opcode::BARRIER => 7,
                Opcode::ZS_EMIT => 0,
                _ => {
                    let s = next;
                    next = (next + 1) % 3;
                    s
                }
            };
            if let Some(k) = slot_modifier {
                // The slot enum has 8 values (3 bits): every slot number fits.
                i.mods[usize::from(k)] = slot;
            }
            if i.opcode == Opcode::BARRIER {
                i.flow = flows::WAIT;
            }
        }
    }
    // Fixed point over the CFG. A block whose entry state did not change since it was last
    // simulated keeps its exit state. Each simulation records the waits before every
    // instruction; the last simulation of a block ran from its final entry state, so its record
    // is the answer.
    let n = mach.blocks.len();
    let mut start = Vec::with_capacity(n + 1);
    let mut effects = Vec::with_capacity(mach.inst_count());
    for b in &mach.blocks {
        start.push(effects.len());
        effects.extend(b.insts.iter().map(|mi| Effect::of(&mi.instr, fragment)));
    }
    start.push(effects.len());
    let mut masks = vec![0u8; effects.len()];
    let mut entry: Vec<State> = vec![State::default(); n];
    let mut exit: Vec<State> = vec![State::default(); n];
    let mut end_waits = vec![0u8; n];
    let mut simulated = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for b in 0..n {
            let mut s = State::default();
            for &p in &mach.blocks[b].preds {
                s = union(&s, &exit[p]);
            }
            if simulated[b] && entry[b] == s {
                continue;
            }
            simulated[b] = true;
            entry[b] = s;
            let range = start[b]..start[b + 1];
            let mut out = simulate(&effects[range.clone()], s, &mut masks[range]);
            end_waits[b] = varying_mask(&out);
            apply_wait(&mut out, end_waits[b]);
            if out != exit[b] {
                exit[b] = out;
                changed = true;
            }
        }
    }
    // Insert the NOPs.
    for (b, block) in mach.blocks.iter_mut().enumerate() {
        let masks = &masks[start[b]..start[b + 1]];
        let vmask = end_waits[b];
        if vmask == 0 && masks.iter().all(|&m| m == 0) {
            continue; // No wait in this block: keep its list as it is.
        }
        let old = std::mem::take(&mut block.insts);
        let ends_in_branch = old.last().is_some_and(|m| m.origin == Origin::Branch);
        let mut new = Vec::with_capacity(old.len() + 4);
        let last = old.len();
        for (k, (mi, &mask)) in old.into_iter().zip(masks).enumerate() {
            let mut mask = mask;
            if vmask != 0 && ends_in_branch && k + 1 == last {
                mask |= vmask;
            }
            if mask != 0 {
                merge::push_wait(&mut new, mask);
            }
            new.push(mi);
        }
        if vmask != 0 && !ends_in_branch {
            merge::push_wait(&mut new, vmask);
        }
        block.insts = new;
    }
}

/// A `NOP` with the given flow.
pub fn nop(flow: u8) -> Instr {
    let mut i = Instr::new(Opcode::NOP);
    i.flow = flow;
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::valhall::Staging;

    /// The per-opcode facts give the registers the table entry describes, for every opcode and
    /// operands at every position (including pairs and groups running past r63).
    #[test]
    fn register_sets_follow_the_table() {
        for op in Opcode::ALL {
            let info = op.info();
            for base in [0u8, 1, 7, 62, 63] {
                let mut i = Instr::new(op);
                i.dest.reg = base;
                for k in 0..info.staging.len() {
                    i.staging[k] = Staging::new(base ^ 2, 1 + (base % 4));
                }
                for k in 0..info.srcs.len() {
                    i.srcs[k].base = if k == 1 { Base::Discard(base ^ 1) } else { Base::Register(base + k as u8 % 2) };
                }
                let range = |b: u8, n: u8| regs::range(b, n).unwrap_or(0);
                let mut want_reads = 0;
                for (src, s) in i.sources().iter().zip(info.srcs) {
                    if let Some(r) = src.base.register() {
                        want_reads |= range(r, if s.size == 64 { 2 } else { 1 });
                    }
                }
                let mut want_writes = 0;
                if info.dest {
                    want_writes |= range(i.dest.reg, if info.type_size == 64 { 2 } else { 1 });
                }
                for (k, st) in info.staging.iter().enumerate() {
                    let regs = range(i.staging[k].base, i.staging[k].count);
                    if st.write { want_writes |= regs } else { want_reads |= regs }
                }
                assert_eq!((reads(&i), writes(&i)), (want_reads, want_writes), "{op} at r{base}");
                assert_eq!(op_facts(op).message, is_message(&i), "{op}");
                assert_eq!(op_facts(op).varying, is_varying(&i), "{op}");
            }
        }
    }
}
