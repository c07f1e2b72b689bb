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
//! * D7 — a loop whose body waits for a slot its preheader leaves busy waits for it at the end
//!   of the preheader instead (once, not on every iteration; see [`loop_entry_waits`]).
//!
//! A wait is a `NOP` carrying the flow, placed right before the instruction (folded into the
//! instruction before it where [`merge`](super::merge) allows); a wait after an instruction is
//! its own flow. Waiting clears the slots.

use super::{flows, merge};
use crate::ir::Stage;
use crate::regalloc::mach::{MachInst, MachShader, Origin};
use crate::valhall::tables::INSTRUCTION_COUNT;
use crate::valhall::{Base, Instr, Opcode};
use std::sync::LazyLock;

/// The outstanding messages of the three general slots. Per slot k: the registers its
/// messages write (`regs[k]`), and bit k of `varying` / `memory` / `busy` when a varying load /
/// memory access / any message is outstanding (bit sets so that a wait is a few mask
/// operations per instruction).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct State {
    regs: [u64; 3],
    varying: u8,
    memory: u8,
    busy: u8,
}

/// The general slots (bits 0–2 of a wait mask).
const GENERAL: u8 = 0b111;

impl State {
    fn union(&self, other: &State) -> State {
        State {
            regs: [self.regs[0] | other.regs[0], self.regs[1] | other.regs[1], self.regs[2] | other.regs[2]],
            varying: self.varying | other.varying,
            memory: self.memory | other.memory,
            busy: self.busy | other.busy,
        }
    }

    /// Clears the general slots of wait mask `mask`.
    fn wait(&mut self, mask: u8) {
        if mask & GENERAL == 0 {
            return;
        }
        for (k, regs) in self.regs.iter_mut().enumerate() {
            if mask & (1 << k) != 0 {
                *regs = 0;
            }
        }
        self.varying &= !mask;
        self.memory &= !mask;
        self.busy &= !mask;
    }
}

/// Whether an instruction is a message (asynchronous, completes through a slot).
pub fn is_message(i: &Instr) -> bool {
    !i.unit().is_alu()
}

/// Registers read by an instruction (sources and read staging vectors).
pub fn reads(i: &Instr) -> u64 {
    registers_of(i, op_facts(i.opcode)).0
}

/// Registers written by an instruction.
pub fn writes(i: &Instr) -> u64 {
    registers_of(i, op_facts(i.opcode)).1
}

/// `n` registers from `base` as a mask; nothing if they run past r63 (`regs::range`, without
/// its `Option`: this runs for every operand).
#[inline]
fn span(base: u8, n: u8) -> u64 {
    let (base, n) = (u32::from(base), u32::from(n));
    if n == 0 || base + n > 64 {
        return 0;
    }
    (u64::MAX >> (64 - n)) << base
}

/// The registers an instruction reads and writes.
fn registers_of(i: &Instr, facts: &OpFacts) -> (u64, u64) {
    let mut reads = 0;
    for (k, src) in i.srcs[..usize::from(facts.sources)].iter().enumerate() {
        if let Base::Register(r) | Base::Discard(r) = src.base {
            reads |= span(r, 1 + (facts.wide_sources >> k & 1));
        }
    }
    let mut writes = if facts.dest_width > 0 { span(i.dest.reg, facts.dest_width) } else { 0 };
    for (k, st) in i.staging[..usize::from(facts.staging)].iter().enumerate() {
        if facts.staging_writes >> k & 1 != 0 {
            writes |= span(st.base, st.count);
        } else {
            reads |= span(st.base, st.count);
        }
    }
    (reads, writes)
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
    /// Number of staging operands, and which of them are written (bit k for operand k).
    staging: u8,
    staging_writes: u8,
    /// Index of the `slot` modifier.
    slot: Option<u8>,
    /// Index of the `update_mode` modifier of a varying load.
    update_mode: Option<u8>,
    memory: MemoryClass,
    /// An ALU instruction without fixed waits: its effect is only the registers it touches.
    plain_alu: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemoryClass {
    None,
    /// Always ordered against other memory accesses.
    Always,
    /// `LD_BUFFER*`: unless it reads a constant UBO handle.
    Buffer,
}

fn op_facts(op: Opcode) -> &'static OpFacts {
    &op_facts_table()[op as usize]
}

/// [`OpFacts`] of every opcode, indexed by opcode (hoisted out of per-instruction loops).
fn op_facts_table() -> &'static [OpFacts; INSTRUCTION_COUNT] {
    static FACTS: LazyLock<Box<[OpFacts; INSTRUCTION_COUNT]>> = LazyLock::new(|| {
        let none = OpFacts {
            message: false,
            varying: false,
            sources: 0,
            wide_sources: 0,
            dest_width: 0,
            staging: 0,
            staging_writes: 0,
            slot: None,
            update_mode: None,
            memory: MemoryClass::None,
            plain_alu: false,
        };
        let mut table = Box::new([none; INSTRUCTION_COUNT]);
        for op in Opcode::ALL {
            let info = op.info();
            let name = info.name;
            let memory = if op.is_buffer_load() {
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
            let wide = info.srcs.iter().enumerate().filter(|(_, s)| s.size == 64);
            let fixed = is_fixed_function(op) || matches!(op, Opcode::ATEST | Opcode::ZS_EMIT | Opcode::BARRIER);
            table[op as usize] = OpFacts {
                plain_alu: info.unit.is_alu() && !varying && memory == MemoryClass::None && !fixed,
                message: !info.unit.is_alu(),
                varying,
                sources: info.srcs.len() as u8,
                wide_sources: wide.fold(0, |m, (k, _)| m | 1 << k),
                dest_width: info.dest_registers(),
                staging: info.staging.len() as u8,
                staging_writes: info.written_staging(),
                slot: info.mod_index("slot").map(|k| k as u8),
                update_mode: info.mod_index("update_mode").filter(|_| varying).map(|k| k as u8),
                memory,
            };
        }
        table
    });
    &FACTS
}

/// A varying load that updates the hidden per-quad state (`.store` / `.clobber`).
fn serialises_varyings(i: &Instr, facts: &OpFacts) -> bool {
    facts.update_mode.is_some_and(|k| matches!(i.mods[usize::from(k)], 0 | 3))
}

/// A memory access ordered against other memory accesses (rule D4).
pub fn is_memory(i: &Instr) -> bool {
    memory_access(i, op_facts(i.opcode))
}

fn memory_access(i: &Instr, facts: &OpFacts) -> bool {
    match facts.memory {
        MemoryClass::None => false,
        MemoryClass::Always => true,
        // A UBO load (constant handle of table 0) is read-only.
        MemoryClass::Buffer => {
            !matches!(i.srcs[1].base, Base::Immediate(_))
                || i.srcs[1].base.immediate_value().is_some_and(|h| !crate::valhall::is_constant_buffer_handle(h))
        }
    }
}

fn is_fixed_function(op: Opcode) -> bool {
    matches!(op, Opcode::BLEND | Opcode::LD_TILE | Opcode::ST_TILE)
}

/// What the simulation needs to know about one instruction (computed once per instruction, as
/// the fixed point visits blocks several times).
///
/// The registers of a plain ALU instruction matter only while a message is outstanding, which
/// is not the case for most of them: they are looked up the first time the simulation needs
/// them (`registers_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Effect {
    /// Registers read or written (valid unless `registers_pending`).
    touched: u64,
    writes: u64,
    /// `touched` and `writes` are not computed yet (plain ALU instructions only).
    registers_pending: bool,
    /// Bit of the general slot of a message (0 for ALU instructions, slot 7 or no slot).
    slot_bit: u8,
    /// Which outstanding kinds of message the instruction waits for: `GENERAL` or 0 each, to
    /// mask `State::varying` (D3), `State::memory` (D4) and `State::busy` (D5).
    on_varying: u8,
    on_memory: u8,
    on_busy: u8,
    varying: bool,
    memory: bool,
    /// Waits the instruction always needs before it (D6).
    fixed_waits: u8,
    /// Slots its own flow waits for after it (taken into account for messages only).
    waits_after: u8,
}

impl Effect {
    /// What `general` gives for a plain ALU instruction, without its tests and registers (most
    /// instructions are these).
    const PLAIN_ALU: Effect = Effect {
        touched: 0,
        writes: 0,
        registers_pending: true,
        slot_bit: 0,
        on_varying: 0,
        on_memory: 0,
        on_busy: 0,
        varying: false,
        memory: false,
        fixed_waits: 0,
        waits_after: 0,
    };

    fn of(i: &Instr, facts: &OpFacts, fragment: bool) -> Effect {
        if facts.plain_alu {
            return Effect::PLAIN_ALU;
        }
        let (reads, writes) = registers_of(i, facts);
        Effect::general(i, facts, fragment, reads, writes)
    }

    /// Computes the registers of a pending effect (of instruction `i`).
    fn resolve_registers(&mut self, i: &Instr) {
        if self.registers_pending {
            let (reads, writes) = registers_of(i, op_facts(i.opcode));
            (self.touched, self.writes, self.registers_pending) = (reads | writes, writes, false);
        }
    }

    /// [`Effect::of`] for any instruction, given the registers it reads and writes.
    fn general(i: &Instr, facts: &OpFacts, fragment: bool, reads: u64, writes: u64) -> Effect {
        let mut fixed_waits = 0;
        if fragment {
            if is_fixed_function(i.opcode) {
                fixed_waits |= 0b111 | flows::SLOT6 | flows::SLOT7;
            }
            if matches!(i.opcode, Opcode::ATEST | Opcode::ZS_EMIT) {
                fixed_waits |= 0b111 | flows::SLOT6;
            }
        }
        let all_if = |b: bool| if b { GENERAL } else { 0 };
        let memory = memory_access(i, facts);
        let slot = if facts.message { slot_of(i, facts) } else { None };
        Effect {
            touched: reads | writes,
            writes,
            registers_pending: false,
            slot_bit: slot.map_or(0, |k| 1 << k),
            on_varying: all_if(serialises_varyings(i, facts)),
            on_memory: all_if(memory),
            on_busy: all_if(i.opcode == Opcode::BARRIER),
            varying: facts.varying,
            memory,
            fixed_waits,
            waits_after: if facts.message { flows::mask_of(i.flow) } else { 0 },
        }
    }

    /// The waits needed right before the instruction in state `s` (slot mask, see [`flows`]).
    fn waits_before(&self, s: &State) -> u8 {
        let hit = |k: usize| u8::from(s.regs[k] & self.touched != 0) << k;
        self.fixed_waits
            | hit(0)
            | hit(1)
            | hit(2)
            | self.on_varying & s.varying
            | self.on_memory & s.memory
            | self.on_busy & s.busy
    }

    /// Issues the instruction: a message occupies its slot; its own flow then takes effect.
    fn issue(&self, s: &mut State) {
        if self.slot_bit != 0 {
            let k = self.slot_bit.trailing_zeros() as usize;
            s.regs[k] |= self.writes;
            s.busy |= self.slot_bit;
            if self.varying {
                s.varying |= self.slot_bit;
            }
            if self.memory {
                s.memory |= self.slot_bit;
            }
        }
        s.wait(self.waits_after);
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

/// Simulates a block (instructions `insts`, their effects `effects`) from `entry`, recording
/// the waits before each instruction in `masks`.
fn simulate(insts: &[MachInst], effects: &mut [Effect], entry: State, masks: &mut [u8]) -> State {
    let mut s = entry;
    for ((mi, e), record) in insts.iter().zip(effects).zip(masks) {
        // Nothing outstanding (a slot's registers and kinds are set only with its `busy` bit):
        // only the fixed waits apply, and an instruction that takes no slot changes nothing.
        if s.busy == 0 && e.slot_bit == 0 {
            *record = e.fixed_waits;
            continue;
        }
        e.resolve_registers(&mi.instr);
        let mask = e.waits_before(&s);
        s.wait(mask);
        *record = mask;
        e.issue(&mut s);
    }
    s
}

/// The data-flow facts of one block (one record per block, so the pass allocates little).
#[derive(Clone, Debug, Default)]
struct BlockFlow {
    /// Its instructions' indices in the effect and mask lists.
    insts: std::ops::Range<usize>,
    entry: State,
    exit: State,
    /// Varying-load slots waited for at its end (D3).
    end_waits: u8,
    simulated: bool,
}

/// Assigns slots and inserts the wait NOPs.
pub fn insert(mach: &mut MachShader) {
    let fragment = mach.stage == Stage::Fragment;
    // Slots, and what each instruction does to the state (one pass: the effects read the slots).
    // The list starts as plain ALU effects (a fill, cheaper than building each one): only the
    // other instructions write theirs, and plain ALU instructions take no slot.
    let mut blocks: Vec<BlockFlow> = Vec::with_capacity(mach.blocks.len());
    let mut effects = vec![Effect::PLAIN_ALU; mach.inst_count()];
    let facts_table = op_facts_table();
    let (mut next, mut at) = (0u8, 0usize);
    for b in &mut mach.blocks {
        let start = at;
        for mi in &mut b.insts {
            let facts = &facts_table[mi.instr.opcode as usize];
            if !facts.plain_alu {
                assign_slot(&mut mi.instr, facts, fragment, &mut next);
                effects[at] = Effect::of(&mi.instr, facts, fragment);
            }
            at += 1;
        }
        blocks.push(BlockFlow { insts: start..at, ..BlockFlow::default() });
    }
    // Fixed point over the CFG. A block whose entry state did not change since it was last
    // simulated keeps its exit state. Each simulation records the waits before every
    // instruction; the last simulation of a block ran from its final entry state, so its record
    // is the answer. A loop whose body waits for slots its preheader leaves busy gets those
    // waits at the end of the preheader instead (D7), and the fixed point runs once more.
    let mut masks = vec![0u8; effects.len()];
    fixed_point(mach, &mut blocks, &mut effects, &mut masks, &[]);
    if let Some(hoisted) = loop_entry_waits(mach, &blocks, &masks) {
        for flow in &mut blocks {
            *flow = BlockFlow { insts: flow.insts.clone(), ..BlockFlow::default() };
        }
        fixed_point(mach, &mut blocks, &mut effects, &mut masks, &hoisted);
    }
    // Place the waits: folded into the instruction before (M1) in place; the few that need a
    // NOP of their own are inserted afterwards, rebuilding only those blocks.
    let mut nops: Vec<(usize, u8)> = Vec::new();
    for (b, block) in mach.blocks.iter_mut().enumerate() {
        let masks = &masks[blocks[b].insts.clone()];
        let vmask = blocks[b].end_waits;
        if vmask == 0 && masks.iter().all(|&m| m == 0) {
            continue;
        }
        let insts = &mut block.insts;
        let len = insts.len();
        let ends_in_branch = insts.last().is_some_and(|m| m.origin == Origin::Branch);
        nops.clear();
        for (k, &mask) in masks.iter().enumerate() {
            // Outstanding varying loads are waited for before a trailing branch, else after the
            // last instruction (D3).
            let mask = if ends_in_branch && k + 1 == len { mask | vmask } else { mask };
            if mask != 0 {
                wait_before(insts, k, mask, &mut nops);
            }
        }
        if vmask != 0 && !ends_in_branch {
            wait_before(insts, len, vmask, &mut nops);
        }
        if !nops.is_empty() {
            let old = std::mem::take(insts);
            insts.reserve_exact(len + nops.len());
            let mut pending = nops.iter().peekable();
            for (k, mi) in old.into_iter().enumerate() {
                while let Some(&(_, flow)) = pending.next_if(|&&(at, _)| at == k) {
                    insts.push(MachInst::new(nop(flow), Origin::Flow));
                }
                insts.push(mi);
            }
            for &(_, flow) in pending {
                insts.push(MachInst::new(nop(flow), Origin::Flow));
            }
        }
    }
}

/// Iterates the data-flow to its fixed point, recording the waits before every instruction in
/// `masks`. `hoisted` (empty, or one mask per block) adds waits at the end of loop preheaders.
fn fixed_point(mach: &MachShader, blocks: &mut [BlockFlow], effects: &mut [Effect], masks: &mut [u8], hoisted: &[u8]) {
    let mut changed = true;
    while changed {
        changed = false;
        for (b, block) in mach.blocks.iter().enumerate() {
            let mut s = State::default();
            for &p in &block.preds {
                s = s.union(&blocks[p].exit);
            }
            let flow = &mut blocks[b];
            if flow.simulated && flow.entry == s {
                continue;
            }
            flow.simulated = true;
            flow.entry = s;
            let range = flow.insts.clone();
            let mut out = simulate(&block.insts, &mut effects[range.clone()], s, &mut masks[range]);
            // Outstanding varying loads are waited for at the end of a block (D3), and before a
            // loop the slots its body would wait for (D7).
            let end = out.varying | hoisted.get(b).map_or(0, |&h| h & out.busy);
            flow.end_waits = end;
            out.wait(end);
            if out != flow.exit {
                flow.exit = out;
                changed = true;
            }
        }
    }
}

/// D7: the slots to wait for at the end of each loop preheader, or `None` when no loop waits
/// for a slot its preheader leaves busy. A message issued before a loop and waited for inside
/// it would otherwise keep a wait in the body on every iteration (often a NOP of its own, at
/// the top of a block after a `.reconverge`), as the loop header's entry state is the union of
/// the preheader's exit and the back edges'. Waiting for a slot waits for every message
/// outstanding on it, so when the first iteration reaches the body's wait, that wait covered
/// the earlier message too: hoisted, it only comes sooner. (It costs more only when every
/// wait for the slot in the body is on a path the loop rarely takes.)
///
/// A loop is the blocks from its header (a block with a predecessor laid out at or after it)
/// to the last of those predecessors: TGSI's loops are structured, and layout keeps each body
/// contiguous. The header's other predecessors are its preheaders, each with the header as its
/// only successor (critical edges are split).
fn loop_entry_waits(mach: &MachShader, blocks: &[BlockFlow], masks: &[u8]) -> Option<Vec<u8>> {
    let mut hoisted: Option<Vec<u8>> = None;
    for (h, header) in mach.blocks.iter().enumerate() {
        let Some(&latch) = header.preds.iter().filter(|&&p| p >= h).max() else { continue };
        let entering = header.preds.iter().filter(|&&p| p < h).fold(0, |busy, &p| busy | blocks[p].exit.busy);
        if entering == 0 {
            continue;
        }
        let body = blocks[h].insts.start..blocks[latch].insts.end;
        let waited =
            masks[body].iter().fold(0, |m, &w| m | w) | blocks[h..=latch].iter().fold(0, |m, f| m | f.end_waits);
        let hoist = entering & waited & GENERAL;
        if hoist == 0 {
            continue;
        }
        let waits = hoisted.get_or_insert_with(|| vec![0; mach.blocks.len()]);
        for &p in header.preds.iter().filter(|&&p| p < h) {
            waits[p] |= hoist;
        }
    }
    hoisted
}

/// Gives a message its slot (and the fixed flows of ATEST and BARRIER, D5/D6).
fn assign_slot(i: &mut Instr, facts: &OpFacts, fragment: bool, next: &mut u8) {
    let Some(k) = facts.slot.filter(|_| facts.message) else {
        if i.opcode == Opcode::ATEST && fragment {
            i.flow = 1; // .wait0 after ATEST (D6)
        }
        return;
    };
    let slot = match i.opcode {
        Opcode::BARRIER => 7,
        Opcode::ZS_EMIT => 0,
        _ => {
            let s = *next;
            *next = (*next + 1) % 3;
            s
        }
    };
    // The slot enum has 8 values (3 bits): every slot number fits.
    i.mods[usize::from(k)] = slot;
    if i.opcode == Opcode::BARRIER {
        i.flow = flows::WAIT;
    }
}

/// Places a wait for the slots of `mask` before instruction `k` of a block (`k` = its length:
/// after the last one): folded into instruction `k - 1` (M1) or recorded in `nops` as a NOP to
/// insert before `k` (M2), in increasing `k`.
fn wait_before(insts: &mut [MachInst], k: usize, mask: u8, nops: &mut Vec<(usize, u8)>) {
    match k.checked_sub(1).map(|p| &mut insts[p].instr) {
        Some(prev) if merge::can_fold(prev) => merge::fold(prev, mask),
        _ => nops.push((k, flows::flow_of(mask))),
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
    use crate::regalloc::mach::regs;
    use crate::valhall::Staging;

    /// `span` is `regs::range` with nothing for a group running past r63.
    #[test]
    fn span_is_the_register_range() {
        for base in 0..=255u8 {
            for n in 0..=255u8 {
                assert_eq!(span(base, n), regs::range(base, n).unwrap_or(0), "{base} {n}");
            }
        }
    }

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
                // `insert` skips `assign_slot` for plain ALU instructions: it changes nothing.
                if op_facts(op).plain_alu {
                    let (mut slotted, mut next) = (i, 1);
                    assign_slot(&mut slotted, op_facts(op), true, &mut next);
                    assert_eq!((slotted, next), (i, 1), "{op}");
                }
                assert_eq!(op_facts(op).varying, is_varying(&i), "{op}");
                // The shortcut for plain ALU instructions gives what the general rules give.
                for fragment in [false, true] {
                    let (facts, (r, w)) = (op_facts(op), registers_of(&i, op_facts(op)));
                    let mut effect = Effect::of(&i, facts, fragment);
                    assert_eq!(effect.registers_pending, facts.plain_alu, "{op}");
                    effect.resolve_registers(&i);
                    assert_eq!(effect, Effect::general(&i, facts, fragment, r, w), "{op}");
                }
            }
        }
    }
}
