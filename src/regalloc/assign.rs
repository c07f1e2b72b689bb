//! Register assignment on SSA form, with live-range splitting at constraints.
//!
//! Blocks are visited in reverse post-order (every block after its dominators and after all its
//! forward predecessors). Inside a block the allocator keeps the current location of every live
//! value (`loc`) and the owner of every register (`owner`) and walks the instructions once:
//!
//! 1. **Operand constraints.** A read staging vector or 64-bit pair must sit in consecutive
//!    registers from an even base; some operands are fixed (ATEST/ZS_EMIT coverage and results
//!    in r60, BLEND colour in r0–r3 and coverage in r60). If the values are not already there, a
//!    base is chosen (most values already in place, fewest registers to clear) and the values are
//!    moved or copied there by a parallel copy placed before the instruction. A value that stays
//!    live keeps its register and a temporary copy is read.
//! 2. **Clobber zones.** Across a `BLEND` no value may stay in r0–r15 or r48; values living
//!    there are moved out by the same parallel copy.
//! 3. **Results.** Registers are chosen for the results among those not holding a value that
//!    outlives the instruction (registers of values dying here are reused); vectors and pairs
//!    take an even base. A hint (the register a later vector, φ or fixed operand wants) is
//!    preferred. If no aligned range is free, values are evicted from the cheapest range.
//! 4. **Copies** from the IR are coalesced: a `copy` of a value that dies there reuses its
//!    register and emits nothing.
//!
//! At block boundaries: a block with one predecessor starts with the predecessor's final
//! locations. A join block starts with the locations of its first visited predecessor, and its
//! φ results get registers (preferably where an argument already is). Every edge into a join
//! then gets a parallel copy at the end of the predecessor (critical edges were split by
//! `prepare`, so the predecessor has no other successor) that puts each live-in value and φ
//! argument where the join expects it; back edges get theirs when the loop body is done.
//!
//! The cost is linear in the number of instructions (each step looks at a constant number of
//! registers, at most 64) plus the size of the live sets at block boundaries.
//!
//! Each block is walked twice: the first walk records each value's last read or definition in
//! the block (and, for straight-line code, the read vectors), decoding every machine
//! instruction's operands once; the second assigns. Most instructions are *plain*: no read
//! vector and no fixed operand (see `Assigner::simple`). The first walk lists no reads for
//! them, and `process_plain` assigns one from a single walk over its operands (registers, and
//! which operands die there) when its results fit without an eviction, building its machine
//! instruction from its parts; it makes the choices the general path (`process_machine`)
//! would, which debug builds check (the dying operands against `through_mask`, the
//! instruction against the opcode's template). The others, and plain instructions whose
//! results need an eviction, take the general path.

use super::mach::{MachBlock, MachInst, MachTerm, Origin, Reg, regs};
use super::parcopy;
use crate::ir::liveness::Liveness;
use crate::ir::{Block, Inst, InstId, InstKind, Operand, Shader, Terminator, Value};
use crate::valhall::tables::{IMMEDIATES, MAX_SOURCES, MAX_STAGING};
use crate::valhall::{self, Base, Dest, Instr, Opcode, Special, Staging};
use smallvec::SmallVec;

const NONE: u8 = u8::MAX;
const NOT_VISITED: (u32, u32) = (u32::MAX, 0);
const NO_VALUE: u32 = u32::MAX;

/// Why assignment failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AssignError {
    /// The register file (in this mode) is too small at some point: spill more or use 64.
    OutOfRegisters(String),
    /// The input breaks the contract (reported to the caller).
    Invalid(String),
    /// The register demand measured so far exceeds the limit set with
    /// [`Assigner::with_demand_limit`]: the attempt was abandoned (see `super::allocate_owned`).
    OverDemandLimit,
}

/// The result of assignment: one machine block per prepared IR block, in layout order.
pub struct Assigned {
    pub blocks: Vec<MachBlock>,
    pub preload: u16,
    /// The largest register demand of an instruction of the visited (reachable) blocks, as
    /// `spill::demand_within` defines it.
    pub max_demand: u32,
}

pub struct Assigner<'a> {
    shader: &'a Shader,
    live: &'a Liveness,
    allowed: u64,
    /// Per-value state, indexed by value number.
    vals: Vec<ValueState>,
    owner: [u32; 64],
    /// Registers whose `owner` is set.
    owned: u64,
    /// Owned registers whose value is already dead: results of φs nobody reads (every other
    /// value is freed at its last read or never placed), marked `UNREAD_PHI`.
    dead_owned: u64,
    /// The number of registers in `owned & !dead_owned`, kept by `set` and `clear` (counting
    /// the bits of a mask is a software routine on the baseline x86-64 target).
    live_regs: u32,
    /// Registers some not-yet-defined value would like.
    hint_mask: u64,
    /// Number of the current block in visiting order (from 1): `ValueState::block`.
    block_stamp: u32,
    /// Read vectors each value belongs to (group index, position).
    /// (Flat arrays rather than a vector per value or group: most values are in none.)
    /// Read vectors (staging reads, 64-bit pairs): the values of vector `g` are
    /// `group_values[groups[g].start..groups[g].end]`.
    group_values: Vec<Value>,
    groups: Vec<Group>,
    /// The read vectors of each value, as lists in vector order threaded through this array
    /// from `ValueState::first_member` (no array over all values: most are in no vector).
    member_of: Vec<Member>,
    /// Per instruction (by index): a machine instruction without read vector (staging read
    /// of two or more values, 64-bit pair) and fixed operand (`BLEND`, `ATEST`, `ZS_EMIT`),
    /// which `process_plain` handles.
    simple: Vec<bool>,
    /// Per block (by index); one array rather than one per field (fewer allocations).
    block_state: Vec<BlockState>,
    /// Where each live-out value of a visited block is at its end, in live-out order: block `b`
    /// has `exit_regs[exit.0..exit.1]` of its `BlockState` (`NOT_VISITED` before its visit).
    /// One array for all blocks rather than a vector per block.
    exit_regs: Vec<(Value, Reg)>,
    preload: u16,
    /// See [`Assigned::max_demand`].
    max_demand: u32,
    /// The assignment stops with [`AssignError::OverDemandLimit`] once `max_demand` exceeds this.
    demand_limit: u32,
    /// The read vectors are still to be collected (by the first walk of `process_block`).
    groups_pending: bool,
    /// Scratch: what the instructions of the current block read (see `process_block`).
    use_buf: Vec<Value>,
    use_start_buf: Vec<u32>,
}

/// What the allocator knows about one value. One array of these rather than an array per
/// field: the fields of a value are read together (a cache line, a bounds check).
#[derive(Clone, Copy)]
struct ValueState {
    /// Current register (`NONE`: none).
    loc: u8,
    /// Preferred register (`NONE`: none).
    hint: u8,
    /// Scratch for `edge_copies`: the register at the end of a block (`NONE` between calls).
    exit_reg: u8,
    /// `LIVE_OUT`, `READ`, `DEFINED`, `UNREAD_PHI` about block number `block` (stale, i.e.
    /// all clear, for any other block).
    flags: u8,
    block: u32,
    /// Position of the last use (or the definition) in block `block`, when `READ` or `DEFINED`.
    last_pos: u32,
    /// The block whose φ defines the value (u32::MAX: not a φ).
    phi_of: u32,
    /// The first of the value's read vectors in `Assigner::member_of` (`NO_MEMBER`: none).
    first_member: u32,
}

impl ValueState {
    const UNSEEN: ValueState = ValueState {
        loc: NONE,
        hint: NONE,
        exit_reg: NONE,
        flags: 0,
        block: 0,
        last_pos: 0,
        phi_of: u32::MAX,
        first_member: NO_MEMBER,
    };
}

impl ValueState {
    /// Records a read or definition (`flag`) at position `pos` of block number `stamp`: the
    /// last one of the block is the position `Assigner::dies_at` compares with.
    #[inline]
    fn touch(&mut self, stamp: u32, flag: u8, pos: u32) {
        if self.block != stamp {
            self.block = stamp;
            self.flags = flag;
        } else {
            self.flags |= flag;
        }
        self.last_pos = pos;
    }
}

/// A read vector: its values are `Assigner::group_values[start..end]`; `base` is its chosen
/// first register (`NONE` while undecided).
#[derive(Clone, Copy)]
struct Group {
    start: u32,
    end: u32,
    base: u8,
}

/// What the allocator keeps per block.
#[derive(Clone, Default)]
struct BlockState {
    /// Where the live-in values and φ results are at its start (set when it is visited).
    entry: Option<Vec<(Value, Reg)>>,
    /// Its range of `Assigner::exit_regs` (`NOT_VISITED` before its visit).
    exit: (u32, u32),
    /// Its machine instructions.
    out: Vec<MachInst>,
}

/// A value's place in a read vector, and the index of its next one.
#[derive(Clone, Copy)]
struct Member {
    group: u32,
    pos: u8,
    next: u32,
}

const NO_MEMBER: u32 = u32::MAX;

/// Live out of the current block.
const LIVE_OUT: u8 = 1;
/// Read in the current block (as a φ argument excepted).
const READ: u8 = 2;
/// Defined in the current block.
const DEFINED: u8 = 4;
/// A φ result of the current block that is never read.
const UNREAD_PHI: u8 = 8;

/// The values of a read vector: a staging list of the shader or the two halves of a pair.
#[derive(Clone, Copy)]
enum VectorValues<'s> {
    List(&'s [Value]),
    Pair([Value; 2]),
}

impl VectorValues<'_> {
    fn as_slice(&self) -> &[Value] {
        match self {
            VectorValues::List(values) => values,
            VectorValues::Pair(pair) => pair,
        }
    }
}

fn fixed_read(op: Opcode) -> Option<(usize, Reg)> {
    match op {
        Opcode::ATEST => Some((0, 60)),
        Opcode::ZS_EMIT => Some((2, 60)),
        Opcode::BLEND => Some((1, 60)),
        _ => None,
    }
}

/// The even bases `b` whose `n` registers `b..b + n` all lie in `mask`, as a mask of bases
/// (a bit test per base instead of a loop over the register file).
fn aligned_bases(mask: u64, n: u8) -> u64 {
    let mut bases = mask & 0x5555_5555_5555_5555;
    for k in 1..u32::from(n) {
        bases &= mask >> k;
    }
    bases
}

/// The immediate table as (value, index) sorted by value, equal values by index: a binary
/// search instead of a walk over the 32 entries for every constant operand.
static IMMEDIATES_BY_VALUE: [(u32, u8); IMMEDIATES.len()] = {
    let mut table = [(0u32, 0u8); IMMEDIATES.len()];
    let mut i = 0;
    while i < table.len() {
        table[i] = (IMMEDIATES[i].0, i as u8);
        i += 1;
    }
    // (Insertion sort, stable: the first of equal values stays first.)
    let mut i = 1;
    while i < table.len() {
        let mut j = i;
        while j > 0 && table[j - 1].0 > table[j].0 {
            let t = table[j - 1];
            table[j - 1] = table[j];
            table[j] = t;
            j -= 1;
        }
        i += 1;
    }
    table
};

/// The immediate-table index of a constant (first exact match).
pub fn immediate_index(bits: u32) -> Option<u8> {
    let at = IMMEDIATES_BY_VALUE.partition_point(|e| e.0 < bits);
    let found = IMMEDIATES_BY_VALUE.get(at).filter(|e| e.0 == bits).map(|e| e.1);
    debug_assert_eq!(found, IMMEDIATES.iter().position(|e| e.0 == bits).map(|i| i as u8));
    found
}

/// The machine base of a non-register operand.
#[inline]
pub fn fau_base(op: Operand) -> Result<Base, AssignError> {
    match op {
        Operand::Const(c) => immediate_index(c)
            .map(Base::Immediate)
            .ok_or_else(|| AssignError::Invalid(format!("constant 0x{c:X} is not in the immediate table"))),
        Operand::Uniform(u) => Ok(Base::Uniform(u)),
        Operand::Special(s) => Ok(Base::Special(s)),
        _ => Err(AssignError::Invalid("register operand where a FAU operand was expected".into())),
    }
}

impl<'a> Assigner<'a> {
    pub fn new(shader: &'a Shader, live: &'a Liveness, allowed: u64) -> Assigner<'a> {
        let nv = shader.values.len();
        let nb = shader.blocks.len();
        let longest = shader.blocks.iter().map(|b| b.insts.len()).max().unwrap_or(0);
        let mut a = Assigner {
            shader,
            live,
            allowed,
            vals: vec![ValueState::UNSEEN; nv],
            owner: [NO_VALUE; 64],
            owned: 0,
            dead_owned: 0,
            live_regs: 0,
            hint_mask: 0,
            block_stamp: 0,
            group_values: Vec::with_capacity(32),
            groups: Vec::with_capacity(16),
            member_of: Vec::new(),
            simple: vec![false; shader.insts.len()],
            block_state: vec![BlockState { entry: None, exit: NOT_VISITED, out: Vec::new() }; nb],
            // Sized once from what they will hold (growing them costs more than the slack).
            exit_regs: Vec::with_capacity(live.live_out_total()),
            preload: 0,
            max_demand: 0,
            demand_limit: u32::MAX,
            groups_pending: false,
            use_buf: Vec::with_capacity(3 * longest),
            use_start_buf: Vec::with_capacity(longest + 1),
        };
        // Straight-line code (one block, no edge; most shaders) has its vectors collected by
        // the first walk over its block, before any value gets a register: one walk fewer.
        a.groups_pending = nb == 1 && shader.blocks[0].preds.is_empty();
        if !a.groups_pending {
            a.collect_groups();
        }
        a
    }

    /// Makes the assignment give up with [`AssignError::OverDemandLimit`] as soon as an
    /// instruction's register demand exceeds `limit` (a caller that would discard such an
    /// assignment learns it early instead of at the end).
    pub fn with_demand_limit(mut self, limit: u32) -> Assigner<'a> {
        self.demand_limit = limit;
        self
    }

    /// Records the read vectors and fixed operands as placement hints.
    fn collect_groups(&mut self) {
        let s = self.shader;
        for (bi, block) in s.blocks.iter().enumerate() {
            for &id in &block.insts {
                let inst = s.inst(id);
                if !inst.dead {
                    self.note_groups(bi as u32, id, inst);
                }
            }
        }
        self.link_groups();
    }

    /// What [`Self::collect_groups`] records about the live instruction `inst` (`id`) of block
    /// `bi`.
    #[inline]
    fn note_groups(&mut self, bi: u32, id: InstId, inst: &Inst) {
        let s = self.shader;
        match inst.kind {
            InstKind::Phi => {
                for v in s.get(inst.dests) {
                    self.vals[v.index()].phi_of = bi;
                }
            }
            InstKind::Machine => {
                let op = inst.mach.opcode;
                let info = inst.mach.info();
                // No read vector, no fixed operand.
                let mut simple = !matches!(op, Opcode::BLEND | Opcode::ATEST | Opcode::ZS_EMIT);
                // (Without staging values only a BLEND has a read vector to record.)
                let no_staging = inst.staging[0].is_empty() && inst.staging[1].is_empty();
                for (k, st) in info.staging.iter().enumerate() {
                    if st.write || no_staging && op != Opcode::BLEND {
                        continue;
                    }
                    let vals = s.get(inst.staging[k]);
                    if vals.len() >= 2 {
                        simple = false;
                    }
                    let fixed = (op == Opcode::BLEND).then_some(0u8);
                    if vals.len() >= 2 || fixed.is_some() {
                        self.add_group(vals, fixed);
                    }
                }
                for src in &inst.srcs[..info.srcs.len()] {
                    if let Operand::Pair(lo, hi) = src.operand {
                        self.add_group(&[lo, hi], None);
                        simple = false;
                    }
                }
                self.simple[id.index()] = simple;
                if let Some((k, r)) = fixed_read(op)
                    && let Operand::Value(v) = inst.srcs[k].operand
                    && self.vals[v.index()].hint == NONE
                {
                    self.vals[v.index()].hint = r;
                }
            }
            _ => {}
        }
    }

    /// Threads each value's read vectors (after every instruction went through `note_groups`).
    fn link_groups(&mut self) {
        // Each value's vectors: the lists are built back to front, so that each ends up in
        // vector order (by position within a vector).
        self.member_of.reserve_exact(self.group_values.len());
        for g in (0..self.groups.len()).rev() {
            let Group { start, end, .. } = self.groups[g];
            let lo = start as usize;
            for k in (lo..end as usize).rev() {
                let st = &mut self.vals[self.group_values[k].index()];
                let next = st.first_member;
                st.first_member = self.member_of.len() as u32;
                self.member_of.push(Member { group: g as u32, pos: (k - lo) as u8, next });
            }
        }
    }

    fn add_group(&mut self, values: &[Value], fixed: Option<u8>) {
        for (i, v) in values.iter().enumerate() {
            if let Some(base) = fixed
                && self.vals[v.index()].hint == NONE
            {
                self.vals[v.index()].hint = base + i as u8;
                self.hint_mask |= regs::bit(base + i as u8);
            }
        }
        let start = self.group_values.len() as u32;
        self.group_values.extend_from_slice(values);
        self.groups.push(Group { start, end: self.group_values.len() as u32, base: fixed.unwrap_or(NONE) });
    }

    /// The values of read vector `g`.
    fn group(&self, g: usize) -> &[Value] {
        let Group { start, end, .. } = self.groups[g];
        &self.group_values[start as usize..end as usize]
    }

    /// Where the live-out values of `b` are at its end, once `b` has been visited.
    fn exit_of(&self, b: Block) -> Option<&[(Value, Reg)]> {
        let (start, end) = self.block_state[b.index()].exit;
        ((start, end) != NOT_VISITED).then(|| &self.exit_regs[start as usize..end as usize])
    }

    fn owner_of(&self, r: Reg) -> Option<Value> {
        let o = self.owner[r as usize];
        (o != NO_VALUE).then_some(Value(o))
    }

    /// The flags of `v` about the current block.
    fn flags(&self, v: Value) -> u8 {
        let st = &self.vals[v.index()];
        if st.block == self.block_stamp { st.flags } else { 0 }
    }

    /// Sets `flag` on `v` for the current block.
    fn mark(&mut self, v: Value, flag: u8) {
        let stamp = self.block_stamp;
        let st = &mut self.vals[v.index()];
        if st.block != stamp {
            st.block = stamp;
            st.flags = 0;
        }
        st.flags |= flag;
    }

    /// Whether `v` is live into the current block: read in it or live out of it, and not
    /// defined in it (see `ir::liveness`).
    fn live_in(&self, v: Value) -> bool {
        let f = self.flags(v);
        f & (LIVE_OUT | READ) != 0 && f & DEFINED == 0
    }

    /// Whether `v` is dead after the instruction at position `pos` of the current block.
    fn dies_at(&self, v: Value, pos: u32) -> bool {
        let st = &self.vals[v.index()];
        st.block == self.block_stamp
            && st.flags & LIVE_OUT == 0
            && st.flags & (READ | DEFINED) != 0
            && st.last_pos <= pos
    }

    fn set(&mut self, v: Value, r: Reg) {
        let bit = regs::bit(r);
        let was_live = self.owned & !self.dead_owned & bit != 0;
        self.vals[v.index()].loc = r;
        self.owner[r as usize] = v.0;
        self.owned |= bit;
        let unread_phi = self.flags(v) & UNREAD_PHI != 0;
        if unread_phi {
            self.dead_owned |= bit;
        } else {
            self.dead_owned &= !bit;
        }
        self.live_regs = self.live_regs + u32::from(!unread_phi) - u32::from(was_live);
    }

    fn clear(&mut self, v: Value) {
        let r = self.vals[v.index()].loc;
        if r != NONE && self.owner[r as usize] == v.0 {
            let bit = regs::bit(r);
            self.live_regs -= u32::from(self.owned & !self.dead_owned & bit != 0);
            self.owner[r as usize] = NO_VALUE;
            self.owned &= !bit;
            self.dead_owned &= !bit;
        }
        self.vals[v.index()].loc = NONE;
    }

    /// The number of registers of `through` as `through_mask` computed it with `dying`.
    fn through_count(&self, through: u64, dying: u32) -> u32 {
        debug_assert_eq!(self.live_regs, (self.owned & !self.dead_owned).count_ones(), "live register count");
        debug_assert_eq!(self.live_regs - dying, through.count_ones());
        let _ = through;
        self.live_regs - dying
    }

    fn owned_mask(&self) -> u64 {
        self.owned
    }

    /// Registers holding values that are still needed after position `pos`, where the
    /// instruction reads `read`. Values are freed at their last read, so apart from unread φ
    /// results (`dead_owned`) only values read at `pos` can die there: this looks at those
    /// instead of at every owned register.
    /// Also returns the number of registers it leaves out for that reason (of the values
    /// dying at `pos`).
    fn through_mask(&self, pos: u32, read: &[Value]) -> (u64, u32) {
        let mut m = self.owned & !self.dead_owned;
        let mut dying = 0;
        for &v in read {
            let r = self.vals[v.index()].loc;
            if r != NONE && self.owner[r as usize] == v.0 && m & regs::bit(r) != 0 && self.dies_at(v, pos) {
                m &= !regs::bit(r);
                dying += 1;
            }
        }
        debug_assert_eq!(m, self.through_mask_by_scan(pos), "through mask at {pos}");
        (m, dying)
    }

    /// [`Self::through_mask`] by testing every owned register (checks the invariant in debug
    /// builds).
    fn through_mask_by_scan(&self, pos: u32) -> u64 {
        let mut m = 0;
        let mut rest = self.owned;
        while rest != 0 {
            let r = rest.trailing_zeros();
            rest &= rest - 1;
            if !self.dies_at(Value(self.owner[r as usize]), pos) {
                m |= 1u64 << r;
            }
        }
        m
    }

    /// Lowest free register of `avail`, preferring those nobody hinted.
    fn lowest(&self, avail: u64) -> Option<Reg> {
        let unhinted = avail & !self.hint_mask;
        let pick = if unhinted != 0 { unhinted } else { avail };
        (pick != 0).then(|| pick.trailing_zeros() as Reg)
    }

    /// A register for a new definition of `v` from `avail`, following hints.
    #[inline]
    fn pick_single(&self, v: Value, avail: u64) -> Option<Reg> {
        let st = &self.vals[v.index()];
        let h = st.hint;
        if h != NONE && avail & regs::bit(h) != 0 {
            return Some(h);
        }
        // (Most values are in no read vector: that case stays in line.)
        if st.first_member == NO_MEMBER {
            return self.lowest(avail);
        }
        self.pick_in_vectors(st.first_member, avail)
    }

    /// [`Self::pick_single`] for a value in read vectors (`k`: its first membership).
    #[inline(never)]
    fn pick_in_vectors(&self, mut k: u32, avail: u64) -> Option<Reg> {
        // First member of an undecided read vector: find a free aligned range for the vector.
        while k != NO_MEMBER {
            let Member { group: g, pos: i, next } = self.member_of[k as usize];
            k = next;
            let group_base = self.groups[g as usize].base;
            if group_base != NONE {
                let want = group_base.wrapping_add(i);
                if want < 64 && avail & regs::bit(want) != 0 {
                    return Some(want);
                }
                continue;
            }
            let n = self.group(g as usize).len() as u8;
            let owned = self.owned_mask();
            let mut base = 0u8;
            while base + n <= 64 {
                let me = regs::bit(base + i);
                if let Some(range) = regs::range(base, n)
                    && range & self.allowed == range
                    && avail & me != 0
                    && (range & !me) & (owned | self.hint_mask) == 0
                {
                    return Some(base + i);
                }
                base += 2;
            }
        }
        self.lowest(avail)
    }

    /// Lowest even base of `n` registers inside `avail`, preferring a range nobody hinted.
    fn pick_range(&self, n: u8, avail: u64) -> Option<Reg> {
        match n {
            0 => return Some(0),
            65.. => return None,
            _ => {}
        }
        let fits = aligned_bases(avail, n);
        let unhinted = fits & aligned_bases(!self.hint_mask, n);
        let pick = if unhinted != 0 { unhinted } else { fits };
        (pick != 0).then(|| pick.trailing_zeros() as Reg)
    }

    /// Called when `v` gets register `r`: fixes the base of its read vectors and hints the
    /// other members.
    #[inline]
    fn note_def(&mut self, v: Value, r: Reg) {
        self.hint_mask &= !regs::bit(r);
        let k = self.vals[v.index()].first_member;
        if k != NO_MEMBER {
            self.note_def_in_vectors(k, r);
        }
    }

    /// [`Self::note_def`] for a value in read vectors (`k`: its first membership).
    #[inline(never)]
    fn note_def_in_vectors(&mut self, mut k: u32, r: Reg) {
        while k != NO_MEMBER {
            let Member { group: g, pos: i, next } = self.member_of[k as usize];
            k = next;
            let group = &mut self.groups[g as usize];
            if group.base != NONE || r < i || (r - i) % 2 != 0 {
                continue;
            }
            let base = r - i;
            let (start, end) = (group.start as usize, group.end as usize);
            if regs::range(base, (end - start) as u8).is_none_or(|m| m & self.allowed != m) {
                continue;
            }
            group.base = base;
            for (j, w) in self.group_values[start..end].iter().enumerate() {
                let st = &mut self.vals[w.index()];
                if st.hint == NONE && st.loc == NONE {
                    st.hint = base + j as u8;
                    self.hint_mask |= regs::bit(base + j as u8);
                }
            }
        }
    }

    /// Runs the assignment over the prepared shader, visiting `rpo` (the reverse post-order of
    /// its reachable blocks), and lays the blocks out in `layout` order.
    pub fn run(mut self, layout: &[Block], rpo: &[Block]) -> Result<Assigned, AssignError> {
        let s = self.shader;
        for &b in rpo {
            self.process_block(b)?;
        }
        let mut blocks = Vec::with_capacity(layout.len());
        // (Inline for small programs: one allocation fewer per assignment.)
        let mut pos_of: SmallVec<[usize; 16]> = SmallVec::from_elem(usize::MAX, s.blocks.len());
        for (i, b) in layout.iter().enumerate() {
            pos_of[b.index()] = i;
        }
        for &b in layout {
            let term = match s.block(b).term {
                Terminator::Jump(t) => MachTerm::Jump(pos_of[t.index()]),
                Terminator::Branch { cond, if_zero, taken, fallthrough } => {
                    let cond = self
                        .exit_of(b)
                        .and_then(|e| e.iter().find(|(v, _)| *v == cond).map(|(_, r)| *r))
                        .ok_or_else(|| AssignError::Invalid(format!("branch condition of {b} has no register")))?;
                    MachTerm::Branch {
                        cond,
                        if_zero,
                        taken: pos_of[taken.index()],
                        fallthrough: pos_of[fallthrough.index()],
                    }
                }
                Terminator::End => MachTerm::End,
            };
            let mut mb = MachBlock::new(term);
            let state = &mut self.block_state[b.index()];
            mb.insts = std::mem::take(&mut state.out);
            mb.live_in = state.entry.take().unwrap_or_default();
            mb.ir_block = Some(b.0);
            blocks.push(mb);
        }
        Ok(Assigned { blocks, preload: self.preload, max_demand: self.max_demand })
    }

    fn process_block(&mut self, b: Block) -> Result<(), AssignError> {
        let s = self.shader;
        self.block_stamp += 1;
        for &v in self.live.live_out(b) {
            self.mark(v, LIVE_OUT);
        }
        // Positions are indices into the block's list, dead instructions included (they are
        // skipped; copying the live ones into a buffer first cost more).
        let insts: &[InstId] = &s.block(b).insts;
        // The values each instruction reads, kept for `process_machine`: instruction `pos`
        // reads `uses[use_start[pos]..use_start[pos + 1]]`.
        let mut uses = std::mem::take(&mut self.use_buf);
        let mut use_start = std::mem::take(&mut self.use_start_buf);
        uses.clear();
        use_start.clear();
        // The φs are at the top (IR invariant); `phi_end` bounds them all the same.
        let mut phi_end = 0;
        let mut phis = 0;
        let stamp = self.block_stamp;
        let collect_groups = std::mem::take(&mut self.groups_pending);
        for (pos, &id) in insts.iter().enumerate() {
            let inst = s.inst(id);
            use_start.push(uses.len() as u32);
            if inst.dead {
                continue;
            }
            let pos = pos as u32;
            // A machine instruction is decoded here once: its sources and read staging
            // operands are read, its destination and written staging operands defined. (Those
            // with a fixed operand, never plain, take the general route below.)
            if inst.kind == InstKind::Machine
                && !matches!(inst.mach.opcode, Opcode::BLEND | Opcode::ATEST | Opcode::ZS_EMIT)
            {
                let vals: &mut [ValueState] = &mut self.vals;
                // Whether it has a read vector: a pair, or a staging read of several values.
                let mut vector = false;
                for src in &inst.srcs {
                    match src.operand {
                        Operand::Value(v) => vals[v.index()].touch(stamp, READ, pos),
                        Operand::Pair(lo, hi) => {
                            vals[lo.index()].touch(stamp, READ, pos);
                            vals[hi.index()].touch(stamp, READ, pos);
                            vector = true;
                        }
                        Operand::None => break,
                        _ => {}
                    }
                }
                if !(inst.staging[0].is_empty() && inst.staging[1].is_empty()) {
                    let info = inst.mach.info();
                    for (k, &list) in inst.staging.iter().enumerate() {
                        // (As `Shader::for_each_use` and `for_each_def` classify them.)
                        let write = info.staging.get(k).is_some_and(|st| st.write);
                        let values = s.get(list);
                        for &v in values {
                            vals[v.index()].touch(stamp, if write { DEFINED } else { READ }, pos);
                        }
                        vector |= !write && values.len() >= 2;
                    }
                }
                debug_assert!(inst.args.is_empty(), "a machine instruction with arguments");
                for &v in s.get(inst.dests) {
                    vals[v.index()].touch(stamp, DEFINED, pos);
                }
                // A plain instruction (see `process_plain`) is assigned from its operands, the
                // others from the values listed in `uses`.
                let plain = !vector;
                if !plain {
                    s.for_each_use(inst, |v| uses.push(v));
                }
                if collect_groups {
                    // `note_groups` finds nothing to record in the plain case.
                    if plain {
                        self.simple[id.index()] = true;
                    } else {
                        self.note_groups(b.0, id, inst);
                    }
                }
                debug_assert_eq!(self.simple[id.index()], plain, "a plain instruction is simple");
                continue;
            }
            if collect_groups {
                self.note_groups(b.0, id, inst);
            }
            // (A slice rather than `self.vals` in the closures: its bounds stay in registers.)
            let vals: &mut [ValueState] = &mut self.vals;
            if inst.kind == InstKind::Phi {
                phi_end = pos as usize + 1;
                phis += 1;
            } else {
                s.for_each_use(inst, |v| {
                    vals[v.index()].touch(stamp, READ, pos);
                    uses.push(v);
                });
            }
            s.for_each_def(inst, |v| vals[v.index()].touch(stamp, DEFINED, pos));
        }
        if collect_groups {
            self.link_groups();
        }
        use_start.push(uses.len() as u32);
        // Entry state.
        self.owner = [NO_VALUE; 64];
        self.owned = 0;
        self.dead_owned = 0;
        self.live_regs = 0;
        let preds: &[Block] = &s.block(b).preds;
        let processed: SmallVec<[Block; 4]> = preds.iter().copied().filter(|p| self.exit_of(*p).is_some()).collect();
        let first_exit = processed.first().and_then(|&first| self.exit_of(first)).unwrap_or_default();
        let mut entry: Vec<(Value, Reg)> = Vec::with_capacity(first_exit.len() + phis);
        for &(v, r) in first_exit {
            if self.live_in(v) {
                entry.push((v, r));
            }
        }
        for &(v, r) in &entry {
            self.set(v, r);
        }
        // φ results.
        for (pos, &id) in insts[..phi_end].iter().enumerate() {
            let inst = s.inst(id);
            if inst.dead || inst.kind != InstKind::Phi {
                continue;
            }
            let d = s.get(inst.dests)[0];
            let args = s.get(inst.args);
            let avail = self.allowed & !self.owned_mask();
            let mut choice = None;
            for (k, p) in preds.iter().enumerate() {
                if let Some(exit) = self.exit_of(*p)
                    && let Some(&(_, r)) = exit.iter().find(|(v, _)| *v == args[k])
                    && avail & regs::bit(r) != 0
                {
                    choice = Some(r);
                    break;
                }
            }
            let r = match choice {
                Some(r) => r,
                None => self
                    .pick_single(d, avail)
                    .ok_or_else(|| AssignError::OutOfRegisters(format!("no register for the φ {d} in {b}")))?,
            };
            if self.dies_at(d, pos as u32) {
                self.mark(d, UNREAD_PHI);
            }
            self.set(d, r);
            self.note_def(d, r);
            entry.push((d, r));
            for &a in args {
                if self.vals[a.index()].loc == NONE && self.vals[a.index()].hint == NONE {
                    self.vals[a.index()].hint = r;
                }
            }
        }
        self.block_state[b.index()].entry = Some(entry);
        for &p in processed.iter().filter(|_| preds.len() > 1) {
            self.edge_copies(p, b)?;
        }
        // Instructions.
        // Room for some moves (live-range splits, edge copies) besides the instructions.
        let mut out = Vec::with_capacity(insts.len() + insts.len() / 8 + 4);
        for (pos, &id) in insts.iter().enumerate() {
            let inst = s.inst(id);
            if inst.dead || inst.kind == InstKind::Phi {
                continue;
            }
            let plain_read: SmallVec<[Value; 4]>;
            let read = if self.is_plain(id, inst) {
                if self.process_plain(b, pos as u32, id, inst, &mut out)? {
                    continue;
                }
                // (The first walk listed no reads for it.)
                let mut list = SmallVec::new();
                s.for_each_use(inst, |v| list.push(v));
                plain_read = list;
                &plain_read[..]
            } else {
                &uses[use_start[pos] as usize..use_start[pos + 1] as usize]
            };
            self.process_inst(b, pos as u32, id, inst, read, &mut out)?;
        }
        self.block_state[b.index()].out = out;
        self.use_buf = uses;
        self.use_start_buf = use_start;
        // Exit state.
        let start = self.exit_regs.len() as u32;
        for &v in self.live.live_out(b) {
            let r = self.vals[v.index()].loc;
            if r == NONE {
                return Err(AssignError::Invalid(format!("{v} is live out of {b} but has no register")));
            }
            self.exit_regs.push((v, r));
        }
        self.block_state[b.index()].exit = (start, self.exit_regs.len() as u32);
        for succ in s.succs(b) {
            if self.block_state[succ.index()].entry.is_some() {
                self.edge_copies(b, succ)?;
            }
        }
        Ok(())
    }

    /// The parallel copy on the edge `p → s` (appended to `p`, which has no other successor).
    fn edge_copies(&mut self, p: Block, s_block: Block) -> Result<(), AssignError> {
        let s = self.shader;
        let (start, end) = self.block_state[p.index()].exit;
        let exit: &[(Value, Reg)] =
            if (start, end) == NOT_VISITED { &[] } else { &self.exit_regs[start as usize..end as usize] };
        let entry = self.block_state[s_block.index()].entry.as_deref().unwrap_or_default();
        let pred_index = s.block(s_block).preds.iter().position(|q| *q == p);
        // Register of each value at the end of `p` (the first entry wins), reset below.
        let vals = &mut self.vals;
        for &(w, r) in exit.iter().rev() {
            vals[w.index()].exit_reg = r;
        }
        let mut copies: SmallVec<[(Reg, Reg); 16]> = SmallVec::new();
        let mut used = 0u64;
        for &(_, r) in exit {
            used |= regs::bit(r);
        }
        let mut result = Ok(());
        for &(v, r) in entry {
            used |= regs::bit(r);
            let src_value = if vals[v.index()].phi_of == s_block.0 {
                let Some(def) = s.values[v.index()].def else {
                    result = Err(AssignError::Invalid(format!("{v} has no definition")));
                    break;
                };
                let args = s.get(s.inst(def).args);
                match pred_index.and_then(|k| args.get(k)) {
                    Some(a) => *a,
                    None => continue,
                }
            } else {
                v
            };
            let src = vals[src_value.index()].exit_reg;
            if src == NONE {
                result = Err(AssignError::Invalid(format!("{src_value} is not available at the end of {p}")));
                break;
            }
            if src != r {
                copies.push((r, src));
            }
        }
        for &(w, _) in exit {
            vals[w.index()].exit_reg = NONE;
        }
        result?;
        if copies.is_empty() {
            return Ok(());
        }
        if s.succs(p).count() > 1 {
            return Err(AssignError::Invalid(format!("regalloc: copies needed on the critical edge {p} → {s_block}")));
        }
        let free = self.allowed & !used;
        let temp = (free != 0).then(|| free.trailing_zeros() as Reg);
        parcopy::emit(&copies, temp, &mut self.block_state[p.index()].out);
        Ok(())
    }

    /// Assigns the instruction `inst` (`id`) at position `pos` of block `b`, which reads
    /// `read` (its operands as `Shader::for_each_use` lists them).
    fn process_inst(
        &mut self,
        b: Block,
        pos: u32,
        id: InstId,
        inst: &Inst,
        read: &[Value],
        out: &mut Vec<MachInst>,
    ) -> Result<(), AssignError> {
        let s = self.shader;
        if inst.kind == InstKind::Phi {
            return Ok(());
        }
        // (A plain instruction gets here when `process_plain` found no free register for a
        // result.)
        let (through, dying) = self.through_mask(pos, read);
        self.note_demand(inst, through, dying);
        if self.max_demand > self.demand_limit {
            return Err(AssignError::OverDemandLimit);
        }
        match inst.kind {
            InstKind::Phi => Ok(()),
            InstKind::Preload(r) => {
                let d = s.get(inst.dests)[0];
                if self.owner[r as usize] != NO_VALUE {
                    return Err(AssignError::Invalid(format!("preload r{r} after r{r} was written")));
                }
                if self.allowed & regs::bit(r) == 0 {
                    return Err(AssignError::OutOfRegisters(format!("preload r{r} outside the register set")));
                }
                if self.dies_at(d, pos) {
                    return Ok(());
                }
                self.set(d, r);
                self.note_def(d, r);
                if r >= 48 {
                    self.preload |= 1 << (r - 48);
                }
                Ok(())
            }
            InstKind::Undef => {
                let d = s.get(inst.dests)[0];
                if self.dies_at(d, pos) {
                    return Ok(());
                }
                let avail = self.allowed & !self.owned_mask();
                let r = self
                    .pick_single(d, avail)
                    .ok_or_else(|| AssignError::OutOfRegisters(format!("no register for {d} in {b}")))?;
                self.set(d, r);
                self.note_def(d, r);
                Ok(())
            }
            InstKind::Copy => self.process_copy(b, pos, id, inst, out),
            InstKind::ParallelCopy => self.process_pcopy(b, pos, inst, through, out),
            InstKind::Machine => self.process_machine(b, pos, id, read, through, out),
        }
    }

    /// Whether `inst` is a plain instruction: a simple machine instruction (see
    /// `Assigner::simple`: no read vector, no fixed operand), so it reads its sources and at
    /// most one value per staging operand. Most instructions are; `process_plain` assigns them.
    #[inline(always)]
    fn is_plain(&self, id: InstId, inst: &Inst) -> bool {
        inst.kind == InstKind::Machine && self.simple[id.index()]
    }

    /// Assigns the plain instruction `inst` (`id`, see [`Self::is_plain`]) at position `pos`
    /// of block `b` as `process_machine` would when its results need no eviction (nothing to
    /// relocate, so no parallel copy), from one walk over its sources: it finds their
    /// registers and which of them die here (what `through_mask` finds from the values read).
    /// Returns `false`, having changed nothing, when a result needs an eviction (then
    /// `process_inst` takes it). An instruction with staging operands (a few) goes to
    /// [`Self::process_plain_staging`].
    #[inline(always)]
    fn process_plain(
        &mut self,
        b: Block,
        pos: u32,
        id: InstId,
        inst: &Inst,
        out: &mut Vec<MachInst>,
    ) -> Result<bool, AssignError> {
        let info = inst.mach.info();
        if !info.staging.is_empty() {
            return self.process_plain_staging(b, pos, id, inst, out);
        }
        // The source loop and the instruction built below repeat `process_plain_staging`'s on
        // purpose: shared through inlined helpers, they measured 0.3-0.8 M instructions dearer
        // over the benchmark profile (2026-11-22), in the allocator's hottest path.
        let srcs = &inst.srcs[..info.srcs.len()];
        let mut through = self.owned & !self.dead_owned;
        let mut dying = 0;
        let mut m_srcs = [valhall::Src::EMPTY; MAX_SOURCES];
        for (k, src) in srcs.iter().enumerate() {
            let base = match src.operand {
                Operand::Value(v) => {
                    let l = self.vals[v.index()].loc;
                    if l == NONE {
                        return Err(AssignError::Invalid(format!(
                            "{v} is read by {} in {b} before it has a register",
                            info.name
                        )));
                    }
                    // (A value read twice dies once.)
                    if self.owner[l as usize] == v.0 && through & regs::bit(l) != 0 && self.dies_at(v, pos) {
                        through &= !regs::bit(l);
                        dying += 1;
                    }
                    Base::Register(l)
                }
                Operand::Uniform(u) => Base::Uniform(u),
                Operand::None => return Err(AssignError::Invalid(format!("{}: missing source {k}", info.name))),
                other => fau_base(other)?,
            };
            m_srcs[k] = src.to_machine(base);
        }
        self.debug_check_through(inst, pos, through, dying);
        // The result as `process_machine` places it when no eviction is needed.
        let dests = self.shader.get(inst.dests);
        let mut dest = if info.dest { Dest::full(0) } else { Dest::NONE };
        if !dests.is_empty() {
            let Some(base) = self.pick_result(dests, self.allowed & !through) else { return Ok(false) };
            if regs::range(base, dests.len() as u8).is_none() {
                return Ok(false);
            }
            dest = Dest::full(base);
        }
        // The demand as `note_demand` measures it.
        let defs = dests.len() as u32;
        let slack = u32::from(defs >= 2);
        debug_assert_eq!(slack, super::spill::vector_slack(inst));
        self.max_demand = self.max_demand.max(self.through_count(through, dying) + u32::max(defs, dying) + slack);
        if self.max_demand > self.demand_limit {
            return Err(AssignError::OverDemandLimit);
        }
        // The machine instruction is built from its parts in one go (rather than from the
        // opcode's template, patched): every field is set here.
        let mach = &inst.mach;
        let m = Instr {
            opcode: mach.opcode,
            flow: mach.flow,
            dest,
            // (No staging operand.)
            staging: [Staging::default(); MAX_STAGING],
            srcs: m_srcs,
            imms: mach.imms,
            mods: mach.mods,
        };
        debug_assert_eq!(m, {
            let mut t = mach.instr();
            t.srcs[..srcs.len()].copy_from_slice(&m_srcs[..srcs.len()]);
            t.dest = dest;
            t
        });
        out.push(MachInst::new(m, Origin::Ir(id)));
        self.free_dying_regs(through, dying);
        self.place_results(dests, dest.reg, pos);
        Ok(true)
    }

    /// [`Self::process_plain`] for an instruction with staging operands: assigns the plain
    /// instruction `inst` (`id`, see [`Self::is_plain`]) at position `pos`
    /// of block `b` as `process_machine` would when its results need no eviction (nothing to
    /// relocate, so no parallel copy), from one walk over its operands: it finds their
    /// registers and which of them die here (what `through_mask` finds from the values read).
    /// Returns `false`, having changed nothing, when a result needs an eviction (then
    /// `process_inst` takes it).
    // Kept out of line: its staging arrays would make the common case build its instruction
    // on the stack and copy it.
    #[inline(never)]
    fn process_plain_staging(
        &mut self,
        b: Block,
        pos: u32,
        id: InstId,
        inst: &Inst,
        out: &mut Vec<MachInst>,
    ) -> Result<bool, AssignError> {
        let s = self.shader;
        let info = inst.mach.info();
        let srcs = &inst.srcs[..info.srcs.len()];
        let unplaced =
            |v: Value| AssignError::Invalid(format!("{v} is read by {} in {b} before it has a register", info.name));
        let (mut through, mut dying) = (self.owned & !self.dead_owned, 0);
        let mut m_srcs = [valhall::Src::EMPTY; MAX_SOURCES];
        for (k, src) in srcs.iter().enumerate() {
            let base = match src.operand {
                Operand::Value(v) => {
                    Base::Register(self.plain_read(v, pos, &mut through, &mut dying).ok_or_else(|| unplaced(v))?)
                }
                Operand::Uniform(u) => Base::Uniform(u),
                Operand::None => return Err(AssignError::Invalid(format!("{}: missing source {k}", info.name))),
                other => fau_base(other)?,
            };
            m_srcs[k] = src.to_machine(base);
        }
        let mut m_staging = [Staging::default(); MAX_STAGING];
        for (k, st) in info.staging.iter().enumerate() {
            // (At most one value: a longer read is a vector.)
            if let (false, Some(&v)) = (st.write, s.get(inst.staging[k]).first()) {
                let l = self.plain_read(v, pos, &mut through, &mut dying).ok_or_else(|| unplaced(v))?;
                m_staging[k] = Staging::new(l, 1);
            }
        }
        self.debug_check_through(inst, pos, through, dying);
        // Results as `process_machine` places them: the destination, then the written staging
        // operands, each in registers outside `through` and the earlier ones.
        let avail = self.allowed & !through;
        let dests = s.get(inst.dests);
        let mut dest = if info.dest { Dest::full(0) } else { Dest::NONE };
        let mut def_mask = 0u64;
        if !dests.is_empty() {
            let Some(base) = self.pick_result(dests, avail) else { return Ok(false) };
            let Some(range) = regs::range(base, dests.len() as u8) else { return Ok(false) };
            def_mask = range;
            dest = Dest::full(base);
        }
        let mut defs = dests.len() as u32;
        let mut slack = u32::from(defs >= 2);
        for (k, st) in info.staging.iter().enumerate() {
            let list = s.get(inst.staging[k]);
            slack += u32::from(list.len() >= 2);
            if st.write && !list.is_empty() {
                defs += list.len() as u32;
                let Some(base) = self.pick_result(list, avail & !def_mask) else { return Ok(false) };
                let Some(range) = regs::range(base, list.len() as u8) else { return Ok(false) };
                def_mask |= range;
                m_staging[k] = Staging::new(base, list.len() as u8);
            }
        }
        // The demand as `note_demand` measures it.
        debug_assert_eq!(slack, super::spill::vector_slack(inst));
        self.max_demand = self.max_demand.max(self.through_count(through, dying) + u32::max(defs, dying) + slack);
        if self.max_demand > self.demand_limit {
            return Err(AssignError::OverDemandLimit);
        }
        // The machine instruction is built from its parts in one go (rather than from the
        // opcode's template, patched): every field is set here.
        let mach = &inst.mach;
        let m = Instr {
            opcode: mach.opcode,
            flow: mach.flow,
            dest,
            staging: m_staging,
            srcs: m_srcs,
            imms: mach.imms,
            mods: mach.mods,
        };
        debug_assert_eq!(m, {
            let mut t = mach.instr();
            t.srcs[..srcs.len()].copy_from_slice(&m_srcs[..srcs.len()]);
            for (k, st) in m_staging.iter().enumerate().take(info.staging.len()) {
                t.staging[k] = Staging::new(st.base, inst.staging[k].len() as u8);
            }
            if !dests.is_empty() {
                t.dest = dest;
            }
            t
        });
        out.push(MachInst::new(m, Origin::Ir(id)));
        self.free_dying_regs(through, dying);
        self.place_results(dests, dest.reg, pos);
        for (k, st) in info.staging.iter().enumerate() {
            if st.write {
                self.place_results(s.get(inst.staging[k]), m_staging[k].base, pos);
            }
        }
        Ok(true)
    }

    /// The register of `v`, read by the plain instruction at `pos` (`None`: it has none);
    /// takes it out of `through` and counts it in `dying` when `v` dies there (a value read
    /// twice dies once).
    #[inline(always)]
    fn plain_read(&self, v: Value, pos: u32, through: &mut u64, dying: &mut u32) -> Option<Reg> {
        let l = self.vals[v.index()].loc;
        if l == NONE {
            return None;
        }
        if self.owner[l as usize] == v.0 && *through & regs::bit(l) != 0 && self.dies_at(v, pos) {
            *through &= !regs::bit(l);
            *dying += 1;
        }
        Some(l)
    }

    /// Debug builds: the registers live across the plain instruction `inst` at `pos` and the
    /// count of those dying there are what `through_mask` finds from the values it reads.
    #[inline(always)]
    fn debug_check_through(&self, inst: &Inst, pos: u32, through: u64, dying: u32) {
        if cfg!(debug_assertions) {
            let mut read = Vec::new();
            self.shader.for_each_use(inst, |v| read.push(v));
            assert_eq!((through, dying), self.through_mask(pos, &read), "plain instruction at {pos}");
        }
    }

    /// Frees the registers of the operands dying at the current instruction: the live registers
    /// `through` leaves out (see `through_mask`), `dying` of them. What `clear` does for each,
    /// with the masks and the count updated once (these registers are live and owned by the
    /// value placed there).
    #[inline(always)]
    fn free_dying_regs(&mut self, through: u64, dying: u32) {
        let dying_regs = self.owned & !self.dead_owned & !through;
        let mut rest = dying_regs;
        while rest != 0 {
            let r = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let v = self.owner[r] as usize;
            debug_assert_eq!(usize::from(self.vals[v].loc), r, "owner and location agree");
            self.vals[v].loc = NONE;
            self.owner[r] = NO_VALUE;
        }
        debug_assert_eq!(dying_regs.count_ones(), dying);
        self.owned &= !dying_regs;
        self.live_regs -= dying;
    }

    /// Registers for the results `vals` (one value, or a vector from an even base) inside
    /// `avail`, as `process_machine` chooses them when no eviction is needed.
    #[inline(always)]
    fn pick_result(&self, vals: &[Value], avail: u64) -> Option<Reg> {
        let n = vals.len() as u8;
        if n == 1 {
            return self.pick_single(vals[0], avail);
        }
        self.hinted_base(vals, avail).or_else(|| self.pick_range(n, avail))
    }

    /// The base a result vector's hints ask for, when that range is free in `avail`: the first
    /// value with a hint fixes it (a vector whose first component nobody reads still follows
    /// the others, e.g. a texture result feeding a `BLEND` colour at r1–r3).
    #[inline(always)]
    fn hinted_base(&self, vals: &[Value], avail: u64) -> Option<Reg> {
        let n = vals.len() as u8;
        let (j, h) = vals.iter().enumerate().find_map(|(j, v)| {
            let h = self.vals[v.index()].hint;
            (h != NONE).then_some((j as u8, h))
        })?;
        let base = h.checked_sub(j).filter(|b| b % 2 == 0)?;
        regs::range(base, n).filter(|m| m & avail == *m).map(|_| base)
    }

    /// Gives the results `vals` their registers from `base` on (those still needed after `pos`).
    #[inline(always)]
    fn place_results(&mut self, vals: &[Value], base: Reg, pos: u32) {
        for (j, &v) in vals.iter().enumerate() {
            if !self.dies_at(v, pos) {
                let r = base + j as u8;
                self.set_result(v, r);
                self.note_def(v, r);
            }
        }
    }

    /// [`Self::set`] for the result of a machine instruction, which is never an unread φ.
    #[inline(always)]
    fn set_result(&mut self, v: Value, r: Reg) {
        debug_assert_eq!(self.flags(v) & UNREAD_PHI, 0);
        let bit = regs::bit(r);
        let was_live = self.owned & !self.dead_owned & bit != 0;
        self.vals[v.index()].loc = r;
        self.owner[r as usize] = v.0;
        self.owned |= bit;
        self.dead_owned &= !bit;
        self.live_regs = self.live_regs + 1 - u32::from(was_live);
    }

    /// Records the register demand of the instruction at `pos` (which reads `read`; `through`
    /// holds the values that outlive it), defined as in `spill`: the values live across it
    /// plus the larger of its results and its operands that die there, plus alignment slack,
    /// or 17 for a `BLEND`. Every live value has a register here, so the values live across
    /// are the registers of `through`; measuring it here spares a separate walk of the
    /// program (see `super::allocate_owned`).
    fn note_demand(&mut self, inst: &Inst, through: u64, dying: u32) {
        let extra = if inst.is_machine() && inst.mach.opcode == Opcode::BLEND {
            17
        } else {
            // `dying`: the operands that die here, the live registers `through` leaves out (one
            // register per value).
            let mut defs = inst.dests.len() as u32;
            if inst.is_machine() {
                for (k, st) in inst.mach.info().staging.iter().enumerate() {
                    if st.write {
                        defs += inst.staging[k].len() as u32;
                    }
                }
            }
            u32::max(defs, dying) + super::spill::vector_slack(inst)
        };
        self.max_demand = self.max_demand.max(self.through_count(through, dying) + extra);
    }

    fn process_copy(
        &mut self,
        b: Block,
        pos: u32,
        id: InstId,
        inst: &Inst,
        out: &mut Vec<MachInst>,
    ) -> Result<(), AssignError> {
        let s = self.shader;
        let d = s.get(inst.dests)[0];
        let operand = inst.srcs[0].operand;
        if let Operand::Value(v) = operand {
            let l = self.vals[v.index()].loc;
            if l == NONE {
                return Err(AssignError::Invalid(format!("{v} is used before it has a register")));
            }
            if self.dies_at(v, pos) {
                // Coalesced: the copy takes over the register.
                self.clear(v);
                if self.dies_at(d, pos) {
                    return Ok(());
                }
                self.set(d, l);
                self.note_def(d, l);
                return Ok(());
            }
        }
        if self.dies_at(d, pos) {
            // An unused constant: nothing to materialise. A copy of a live value: nothing either.
            return Ok(());
        }
        // The source (if a value) outlives the copy: a dying one was coalesced above.
        let (through, _) = self.through_mask(pos, &[]);
        let avail = self.allowed & !through;
        let r = self
            .pick_single(d, avail)
            .ok_or_else(|| AssignError::OutOfRegisters(format!("no register for {d} in {b}")))?;
        let mut instr = match operand {
            Operand::Value(v) => parcopy::mov(r, self.vals[v.index()].loc),
            Operand::Const(c) => match immediate_index(c) {
                Some(i) => {
                    let mut m = Instr::new(Opcode::MOV_I32);
                    m.srcs[0].base = Base::Immediate(i);
                    m
                }
                None => {
                    let mut m = Instr::new(Opcode::IADD_IMM_I32);
                    m.srcs[0].base = Base::Immediate(0);
                    m.set_imm("constant", i64::from(c)).map_err(|e| AssignError::Invalid(e.to_string()))?;
                    m
                }
            },
            Operand::Uniform(_) | Operand::Special(_) => {
                let mut m = Instr::new(Opcode::MOV_I32);
                m.srcs[0].base = fau_base(operand)?;
                m
            }
            Operand::Pair(..) | Operand::None => {
                return Err(AssignError::Invalid("copy of a 64-bit or empty operand".into()));
            }
        };
        instr.dest = Dest::full(r);
        out.push(MachInst::new(instr, Origin::Ir(id)));
        if let Operand::Value(v) = operand {
            self.free_dying(&[v], pos);
        }
        self.set(d, r);
        self.note_def(d, r);
        Ok(())
    }

    /// Frees the registers of the values in `read` (what the instruction at `pos` reads) that
    /// die there.
    fn free_dying(&mut self, read: &[Value], pos: u32) {
        for &v in read {
            if self.dies_at(v, pos) {
                self.clear(v);
            }
        }
    }

    /// A parallel copy; `through` holds the values that outlive it.
    fn process_pcopy(
        &mut self,
        b: Block,
        pos: u32,
        inst: &Inst,
        through: u64,
        out: &mut Vec<MachInst>,
    ) -> Result<(), AssignError> {
        let s = self.shader;
        let dests = s.get(inst.dests);
        let args = s.get(inst.args);
        let mut taken = 0u64;
        let mut plan: Vec<(Value, Reg, Option<Reg>)> = Vec::new(); // (dest, reg, copy from)
        let mut moves = Vec::new();
        for (i, (&d, &a)) in dests.iter().zip(args).enumerate() {
            let l = self.vals[a.index()].loc;
            if l == NONE {
                return Err(AssignError::Invalid(format!("{a} is used before it has a register")));
            }
            let single = args.iter().filter(|&&x| x == a).count() == 1;
            if self.dies_at(a, pos) && single && taken & regs::bit(l) == 0 {
                taken |= regs::bit(l);
                plan.push((d, l, None));
            } else {
                plan.push((d, NONE, Some(l)));
            }
            let _ = i;
        }
        for entry in plan.iter_mut() {
            if entry.1 != NONE {
                continue;
            }
            let d = entry.0;
            let avail = self.allowed & !through & !taken;
            let r = self
                .pick_single(d, avail)
                .ok_or_else(|| AssignError::OutOfRegisters(format!("no register for {d} in {b}")))?;
            taken |= regs::bit(r);
            entry.1 = r;
            if let Some(src) = entry.2 {
                moves.push((r, src));
            }
        }
        let busy = self.owned_mask() | taken;
        let free = self.allowed & !busy & !moves.iter().fold(0u64, |m, &(d, s)| m | regs::bit(d) | regs::bit(s));
        parcopy::emit(&moves, (free != 0).then(|| free.trailing_zeros() as Reg), out);
        self.free_dying(args, pos);
        for (d, r, _) in plan {
            if self.dies_at(d, pos) {
                continue;
            }
            self.set(d, r);
            self.note_def(d, r);
        }
        Ok(())
    }

    // Kept out of line: inlined, its large frame would be set up for every instruction,
    // including those `process_plain` handles.
    #[inline(never)]
    fn process_machine(
        &mut self,
        b: Block,
        pos: u32,
        id: InstId,
        uses: &[Value],
        through: u64,
        out: &mut Vec<MachInst>,
    ) -> Result<(), AssignError> {
        let s = self.shader;
        let inst = s.inst(id);
        let info = inst.mach.info();
        let op = inst.mach.opcode;
        let err_regs = |what: &str| AssignError::OutOfRegisters(format!("{what} of {} in {b}", info.name));
        // (Small vectors are read through slices once built: each access to a `SmallVec` tests
        // where its items are.)
        for &v in uses {
            if self.vals[v.index()].loc == NONE {
                return Err(AssignError::Invalid(format!(
                    "{v} is read by {} in {b} before it has a register",
                    info.name
                )));
            }
        }
        let count = |v: Value| uses.iter().filter(|&&w| w == v).count();
        let zone = if op == Opcode::BLEND { regs::BLEND_CLOBBER } else { 0 };
        // Read vectors and fixed reads → targets (value, register).
        let mut targets: SmallVec<[(Value, Reg); 8]> = SmallVec::new();
        let mut target_mask = 0u64;
        // Where each read vector ends up: (staging index or source index + 2, base).
        let mut group_at: SmallVec<[(usize, Reg); 4]> = SmallVec::new();
        // (staging index, its values, the fixed base register if any).
        type ReadVector<'s> = (usize, VectorValues<'s>, Option<u8>);
        let mut vectors: SmallVec<[ReadVector; 4]> = SmallVec::new();
        for (k, st) in info.staging.iter().enumerate() {
            if st.write {
                continue;
            }
            let vals = s.get(inst.staging[k]);
            let fixed = (op == Opcode::BLEND).then_some(0u8);
            if vals.len() >= 2 || fixed.is_some() {
                vectors.push((k, VectorValues::List(vals), fixed));
            }
        }
        for (k, src) in inst.sources().iter().enumerate() {
            if let Operand::Pair(lo, hi) = src.operand {
                vectors.push((k + 2, VectorValues::Pair([lo, hi]), None));
            }
        }
        let fixed_def: Option<Reg> = matches!(op, Opcode::ATEST | Opcode::ZS_EMIT).then_some(60);
        let mut reserved = zone | fixed_def.map_or(0, regs::bit);
        if let Some((k, r)) = fixed_read(op)
            && let Operand::Value(_) = inst.srcs[k].operand
        {
            reserved |= regs::bit(r);
        }
        for (slot, vals, fixed) in &vectors {
            let vals = vals.as_slice();
            let n = vals.len() as u8;
            let l0 = self.vals[vals[0].index()].loc;
            let in_place = fixed.is_none_or(|f| f == l0)
                && l0 % 2 == 0
                && vals.iter().enumerate().all(|(i, v)| self.vals[v.index()].loc == l0.wrapping_add(i as u8))
                && regs::range(l0, n).is_some_and(|m| m & target_mask == 0);
            let base = if in_place {
                l0
            } else if let Some(f) = *fixed {
                f
            } else {
                // Score of a base: 4 per value already in place, minus 2 per other register
                // holding a value that outlives the instruction and 1 per other owned register.
                // Computed as the penalty of the whole range (from running sums over the
                // register file; `through` lies in `owned`) plus, for the bases where values
                // are in place, 4 and their penalty back.
                let owned = self.owned;
                debug_assert_eq!(through & !owned, 0);
                debug_assert_eq!(owned, (0..64).filter(|&r| self.owner[r] != NO_VALUE).fold(0, |m, r| m | 1 << r));
                let penalty = |r: u8| ((owned >> r) & 1) as i32 + ((through >> r) & 1) as i32;
                let mut in_place_at: SmallVec<[(u8, i32); 8]> = SmallVec::new();
                let mut in_place_bases = 0u64;
                for (i, v) in vals.iter().enumerate() {
                    let l = self.vals[v.index()].loc;
                    if l != NONE && l as usize >= i && (l as usize - i) % 2 == 0 {
                        let b = l - i as u8;
                        in_place_at.push((b, 4 + penalty(l)));
                        in_place_bases |= regs::bit(b);
                    }
                }
                let candidates = aligned_bases(self.allowed & !(target_mask | reserved), n);
                // The best score, the lowest base among equals.
                let score_all = || {
                    // penalty_below[r]: the summed penalty of r0..r.
                    let mut penalty_below = [0i32; 65];
                    for r in 0..64u8 {
                        penalty_below[r as usize + 1] = penalty_below[r as usize] + penalty(r);
                    }
                    let mut best: Option<(i32, u8)> = None;
                    let mut rest = candidates;
                    while rest != 0 {
                        let base = rest.trailing_zeros() as u8;
                        rest &= rest - 1;
                        let mut score = penalty_below[base as usize] - penalty_below[(base + n) as usize];
                        if in_place_bases & regs::bit(base) != 0 {
                            score += in_place_at.iter().filter(|(b, _)| *b == base).map(|(_, s)| s).sum::<i32>();
                        }
                        if best.is_none_or(|(s, _)| score > s) {
                            best = Some((score, base));
                        }
                    }
                    best.map(|(_, base)| base)
                };
                // A base without a value in place scores at most 0, which the ranges holding no
                // value reach: when there is one, the first of those competes only with the
                // (at most n) bases where values are in place, scored one by one.
                let unowned = candidates & aligned_bases(!owned, n);
                if unowned != 0 {
                    let mut best = (0, unowned.trailing_zeros() as u8);
                    let mut rest = in_place_bases & candidates;
                    while rest != 0 {
                        let base = rest.trailing_zeros() as u8;
                        rest &= rest - 1;
                        let bonus = in_place_at.iter().filter(|(b, _)| *b == base).map(|(_, s)| s).sum::<i32>();
                        let score = bonus - (base..base + n).map(penalty).sum::<i32>();
                        // (Ties go to the lower base, as in `score_all`.)
                        if score > best.0 || score == best.0 && base < best.1 {
                            best = (score, base);
                        }
                    }
                    debug_assert_eq!(Some(best.1), score_all(), "the base of a staging vector");
                    best.1
                } else {
                    score_all().ok_or_else(|| err_regs("no room for a staging vector"))?
                }
            };
            for (i, &v) in vals.iter().enumerate() {
                let r = base + i as u8;
                if self.vals[v.index()].loc != r || in_place && fixed.is_some() {
                    targets.push((v, r));
                }
            }
            let range = regs::range(base, n).ok_or_else(|| err_regs("staging vector past r63"))?;
            target_mask |= range;
            group_at.push((*slot, base));
        }
        let mut fixed_src: Option<(usize, Reg)> = None;
        if let Some((k, r)) = fixed_read(op)
            && let Operand::Value(v) = inst.srcs[k].operand
        {
            if target_mask & regs::bit(r) != 0 {
                return Err(AssignError::Invalid(format!("{}: fixed operand r{r} overlaps a vector", info.name)));
            }
            if self.vals[v.index()].loc != r {
                targets.push((v, r));
            }
            target_mask |= regs::bit(r);
            fixed_src = Some((k, r));
        }
        let targets: &[(Value, Reg)] = &targets;
        // Values that move into their target (they die here and are read once).
        let movers_buf: SmallVec<[Value; 8]> = targets
            .iter()
            .filter(|(v, r)| self.vals[v.index()].loc != *r && self.dies_at(*v, pos) && count(*v) == 1)
            .map(|(v, _)| *v)
            .collect();
        let movers: &[Value] = &movers_buf;
        // Definitions: (is staging, index, values); the destination and at most two staging
        // operands.
        let mut def_array: [(bool, usize, &[Value]); 3] = [(false, 0, &[]); 3];
        let mut n_defs = 0;
        let dests = s.get(inst.dests);
        if !dests.is_empty() {
            def_array[0] = (false, 0, dests);
            n_defs = 1;
        }
        for (k, st) in info.staging.iter().enumerate() {
            if st.write {
                def_array[n_defs] = (true, k, s.get(inst.staging[k]));
                n_defs += 1;
            }
        }
        let def_lists = &def_array[..n_defs];
        let mut def_mask = 0u64;
        let mut def_base: [Reg; 3] = [0; 3];
        let mut evict_for_defs = 0u64;
        for (i, (_, _, vals)) in def_lists.iter().enumerate() {
            let n = vals.len() as u8;
            if n == 0 {
                continue;
            }
            let avail = self.allowed & !through & !zone & !def_mask;
            let base = if let Some(f) = fixed_def {
                f
            } else if n == 1 {
                match self.pick_single(vals[0], avail) {
                    Some(r) => r,
                    None => self
                        .evict_range(1, zone | def_mask, through)
                        .ok_or_else(|| err_regs("no register for a result"))?,
                }
            } else {
                match self.hinted_base(vals, avail).or_else(|| self.pick_range(n, avail)) {
                    Some(r) => r,
                    None => self
                        .evict_range(n, zone | def_mask, through)
                        .ok_or_else(|| err_regs("no room for a result vector"))?,
                }
            };
            let range = regs::range(base, n).ok_or_else(|| err_regs("result vector past r63"))?;
            evict_for_defs |= range & through;
            def_mask |= range;
            def_base[i] = base;
        }
        // Values to relocate: occupants of target registers (unless moving there themselves),
        // values outliving the instruction inside the clobber zone or the result registers.
        let mut evict: SmallVec<[Value; 8]> = SmallVec::new();
        let push_evict = |v: Value, evict: &mut SmallVec<[Value; 8]>| {
            if !evict.contains(&v) {
                evict.push(v);
            }
        };
        for &(v, r) in targets {
            if let Some(w) = self.owner_of(r)
                && w != v
                && !movers.contains(&w)
            {
                push_evict(w, &mut evict);
            }
        }
        let mut outliving = (zone | evict_for_defs | fixed_def.map_or(0, regs::bit)) & through;
        while outliving != 0 {
            let r = outliving.trailing_zeros() as Reg;
            outliving &= outliving - 1;
            if let Some(w) = self.owner_of(r) {
                push_evict(w, &mut evict);
            }
        }
        // Build the parallel copy.
        let mut copies: SmallVec<[(Reg, Reg); 8]> = SmallVec::new();
        let mut new_loc: SmallVec<[(Value, Reg); 8]> = SmallVec::new();
        for &(v, r) in targets {
            let l = self.vals[v.index()].loc;
            if l == r {
                continue;
            }
            copies.push((r, l));
            if movers.contains(&v) {
                new_loc.push((v, r));
            }
        }
        let mut chosen = 0u64;
        let owned = self.owned_mask();
        for &w in &evict {
            let l = self.vals[w.index()].loc;
            let avail = self.allowed & !owned & !target_mask & !zone & !def_mask & !chosen;
            let r = self.pick_single(w, avail).ok_or_else(|| err_regs("no register to move a live value to"))?;
            chosen |= regs::bit(r);
            copies.push((r, l));
            new_loc.push((w, r));
        }
        if !copies.is_empty() {
            let mut busy = owned | chosen | target_mask;
            for &(d, s) in &copies {
                busy |= regs::bit(d) | regs::bit(s);
            }
            let free = self.allowed & !busy;
            parcopy::emit(&copies, (free != 0).then(|| free.trailing_zeros() as Reg), out);
        }
        for &(v, _) in &new_loc {
            self.clear(v);
        }
        for &(v, r) in &new_loc {
            self.set(v, r);
        }
        // The machine instruction.
        let mut m = inst.mach.instr();
        for (k, src) in inst.sources().iter().enumerate() {
            let base = match src.operand {
                Operand::Value(v) => match fixed_src {
                    Some((fk, r)) if fk == k => Base::Register(r),
                    _ => Base::Register(self.vals[v.index()].loc),
                },
                Operand::Pair(..) => {
                    let base = group_at.iter().find(|(slot, _)| *slot == k + 2).map(|g| g.1).unwrap_or(0);
                    Base::Register(base)
                }
                Operand::None => return Err(AssignError::Invalid(format!("{}: missing source {k}", info.name))),
                other => fau_base(other)?,
            };
            m.srcs[k] = src.to_machine(base);
        }
        for (k, st) in info.staging.iter().enumerate() {
            let n = inst.staging[k].len() as u8;
            if st.write {
                continue;
            }
            let base = if let Some(g) = group_at.iter().find(|(slot, _)| *slot == k) {
                g.1
            } else if n == 1 {
                self.vals[s.get(inst.staging[k])[0].index()].loc
            } else {
                0
            };
            m.staging[k] = Staging::new(base, n);
        }
        for (i, (is_staging, k, vals)) in def_lists.iter().enumerate() {
            if *is_staging {
                m.staging[*k] = Staging::new(if vals.is_empty() { 0 } else { def_base[i] }, vals.len() as u8);
            } else {
                m.dest = Dest::full(def_base[i]);
            }
        }
        out.push(MachInst::new(m, Origin::Ir(id)));
        if op == Opcode::BLEND {
            self.blend_call(&m, out);
        }
        // After the instruction.
        self.free_dying(uses, pos);
        for (i, (_, _, vals)) in def_lists.iter().enumerate() {
            for (j, &v) in vals.iter().enumerate() {
                let r = def_base[i] + j as u8;
                if self.dies_at(v, pos) {
                    continue;
                }
                self.set(v, r);
                self.note_def(v, r);
            }
        }
        Ok(())
    }

    /// A range of `n` registers (even base when n ≥ 2) outside `forbid`, evicting as few values
    /// outliving the instruction as possible (they are relocated by the caller).
    fn evict_range(&self, n: u8, forbid: u64, through: u64) -> Option<Reg> {
        let free_elsewhere = (self.allowed & !self.owned_mask()).count_ones();
        let mut best: Option<(u32, Reg)> = None;
        let step = if n >= 2 { 2 } else { 1 };
        let mut base = 0u8;
        while base + n <= 64 {
            if let Some(range) = regs::range(base, n)
                && range & self.allowed == range
                && range & forbid == 0
            {
                let cost = (range & through).count_ones();
                if cost <= free_elsewhere && best.is_none_or(|(c, _)| cost < c) {
                    best = Some((cost, base));
                }
            }
            base += step;
        }
        best.map(|(_, b)| b)
    }

    /// The blend-shader call pair after a BLEND (the return address is fixed up at layout for
    /// the last BLEND).
    fn blend_call(&self, blend: &Instr, out: &mut Vec<MachInst>) {
        // (Built once: setting the fields by name compares strings.)
        static TEMPLATES: std::sync::OnceLock<(Instr, Instr)> = std::sync::OnceLock::new();
        let (link, call) = TEMPLATES.get_or_init(|| {
            let mut link = Instr::new(Opcode::IADD_IMM_I32);
            link.dest = Dest::full(48);
            let pc = Special::of("program_counter", false);
            link.srcs[0].base = Base::Special(pc);
            let _ = link.set_imm("constant", 8);
            let mut call = Instr::new(Opcode::BRANCHZI);
            call.srcs[0].base = Base::Immediate(0);
            let _ = call.set_flag("eq", true);
            let _ = call.set_flag("absolute", true);
            (link, call)
        });
        out.push(MachInst::new(*link, Origin::BlendCall));
        let mut call = *call;
        let mut desc = match blend.srcs[0].base {
            Base::Special(sp) => sp,
            _ => Special { page: 0, entry: 0, high: false },
        };
        desc.high = true;
        call.srcs[1].base = Base::Special(desc);
        out.push(MachInst::new(call, Origin::BlendCall));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn immediate_index_finds_the_first_entry_of_each_value() {
        for (i, &(bits, _)) in IMMEDIATES.iter().enumerate() {
            let first = IMMEDIATES.iter().position(|e| e.0 == bits).unwrap();
            assert_eq!(immediate_index(bits), Some(first as u8), "entry {i} (0x{bits:08X})");
        }
        // The zero appears twice: the first entry wins.
        assert_eq!(immediate_index(0), Some(0));
        assert_eq!(immediate_index(0x3F80_0000), Some(16));
        for bits in [1, 0x3F80_0001, 0xFFFF_FFFE, 0x4000_0001, 0x0102_0304] {
            assert_eq!(immediate_index(bits), None, "0x{bits:08X} is not in the table");
        }
    }
}
