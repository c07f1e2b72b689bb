//! The scalar SSA IR: Valhall instructions on virtual registers.
//!
//! A [`Shader`] is a list of blocks in layout order (block 0 is the entry). Each block holds
//! instructions and ends in a [`Terminator`]. Every [`Value`] is one 32-bit register's worth of
//! data, defined by exactly one instruction. An [`Inst`] is either a machine instruction — a
//! [`MachOp`] (the opcode, instruction modifiers, immediates and flow of a [`valhall::Instr`])
//! with IR operands — or one of a few pseudo-instructions ([`InstKind`]): φ, copy, parallel
//! copy, undef, preload.
//!
//! Why machine instructions: lowering recipes, modifier folding, constant folding (through the
//! emulator's semantics), register allocation and encoding all read the same ISA tables, so
//! there is no second opcode layer to keep in sync (Cranelift's VCode and Mesa's `bi_instr` make
//! the same choice).
//!
//! Operands:
//! * a destination is one value (two for a 64-bit destination), listed in [`Inst::dests`];
//! * a staging operand is a list of values that register allocation places in consecutive
//!   registers, starting at an even register when there are two or more; written staging
//!   operands are definitions, read ones are uses;
//! * a source is a [`Src`]: an [`Operand`] plus the modifier fields of the machine source (neg,
//!   abs, not, swizzle, widen, lane), interpreted by the source's `SrcInfo`.
//!
//! Invariants (checked by [`verify::verify`] after every pass in tests and debug builds): values
//! are defined once and their definition dominates every use; φs come first in their block and
//! have one argument per predecessor, in predecessor order; predecessor lists match the
//! terminators; operand shapes match the machine sources (a 64-bit source reads a pair or a
//! constant or an even uniform); staging list lengths fit their count fields; a
//! pseudo-instruction carries the opcode `NOP`, which no machine instruction has, and uses no
//! operand slot but a copy's first source (so walks over operands need not test the kind).

pub mod builder;
pub mod dom;
pub mod liveness;
pub mod text;
pub mod verify;

use crate::reuse::{self, Shelf};
use crate::valhall::tables::{Clamp, Condition, MAX_IMMEDIATES, MAX_MODIFIERS, ResultType, RoundMode, VectorSize};
use crate::valhall::tables::{INSTRUCTIONS, InstrInfo, IsaEnum};
use crate::valhall::{self, Instr, InstrError, Opcode, Special};
use std::fmt;
use std::sync::{LazyLock, OnceLock};

/// An SSA value: the content of one 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// A basic block; its number is its position in the layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(pub u32);

/// An instruction, by its index in [`Shader::insts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstId(pub u32);

impl Value {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl Block {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl InstId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "block{}", self.0)
    }
}

/// A list of values kept in the shader's pool (no allocation per instruction).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ValueList {
    start: u32,
    len: u32,
}

impl ValueList {
    pub const EMPTY: ValueList = ValueList { start: 0, len: 0 };

    pub fn len(self) -> usize {
        self.len as usize
    }

    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// The first `n` values of the list (`n` at most its length).
    pub fn prefix(self, n: usize) -> ValueList {
        debug_assert!(n <= self.len());
        ValueList { start: self.start, len: n as u32 }
    }
}

/// What a source reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// An unused source slot.
    None,
    /// A 32-bit value.
    Value(Value),
    /// A 64-bit operand (low, high): an even/odd register pair.
    Pair(Value, Value),
    /// A 32-bit constant (zero-extended in 64-bit sources). Legalisation turns it into an
    /// immediate-table entry (possibly with a swizzle or negation) or a register.
    Const(u32),
    /// A push-constant word `uN` (N < 128); in a 64-bit source the pair `uN:uN+1` (N even).
    Uniform(u8),
    /// A special FAU value such as `lane_id.w0`.
    Special(Special),
}

impl Operand {
    /// The values the operand reads.
    pub fn values(self) -> impl Iterator<Item = Value> {
        let (a, b) = match self {
            Operand::Value(v) => (Some(v), None),
            Operand::Pair(lo, hi) => (Some(lo), Some(hi)),
            _ => (None, None),
        };
        a.into_iter().chain(b)
    }

    pub fn as_value(self) -> Option<Value> {
        match self {
            Operand::Value(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_const(self) -> Option<u32> {
        match self {
            Operand::Const(c) => Some(c),
            _ => None,
        }
    }
}

impl From<Value> for Operand {
    fn from(v: Value) -> Operand {
        Operand::Value(v)
    }
}

/// A source: an operand and the modifier fields of the machine source it fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src {
    pub operand: Operand,
    pub neg: bool,
    pub abs: bool,
    pub not: bool,
    /// Index of the source's 2-bit swizzle field.
    pub swizzle: u8,
    /// Index of the source's widen / lanes / half-swizzle / combine field.
    pub widen: u8,
    /// Index of the source's lane field.
    pub lane: u8,
}

impl Src {
    pub const NONE: Src =
        Src { operand: Operand::None, neg: false, abs: false, not: false, swizzle: 0, widen: 0, lane: 0 };

    /// A source with all modifier fields zero (the identity for 32-bit sources).
    pub fn new(operand: impl Into<Operand>) -> Src {
        Src { operand: operand.into(), ..Src::NONE }
    }

    /// A 32-bit constant source.
    pub fn konst(bits: u32) -> Src {
        Src::new(Operand::Const(bits))
    }

    /// An f32 constant source.
    pub fn f32(value: f32) -> Src {
        Src::konst(value.to_bits())
    }

    /// Toggles the negate flag.
    pub fn negated(mut self) -> Src {
        self.neg = !self.neg;
        self
    }

    /// The absolute value (clears a negation).
    pub fn absolute(mut self) -> Src {
        self.abs = true;
        self.neg = false;
        self
    }

    /// Toggles the bitwise-not flag.
    pub fn inverted(mut self) -> Src {
        self.not = !self.not;
        self
    }

    /// Sets the widen-position field (widen, lanes, half-swizzle or combine index).
    pub fn widen(mut self, index: u8) -> Src {
        self.widen = index;
        self
    }

    /// Sets the 2-bit swizzle field.
    pub fn swizzle(mut self, index: u8) -> Src {
        self.swizzle = index;
        self
    }

    /// Sets the lane field.
    pub fn lane(mut self, index: u8) -> Src {
        self.lane = index;
        self
    }

    /// The machine source with the given base and this source's modifier fields.
    pub fn to_machine(self, base: valhall::Base) -> valhall::Src {
        valhall::Src {
            base,
            neg: self.neg,
            abs: self.abs,
            not: self.not,
            swizzle: self.swizzle,
            widen: self.widen,
            lane: self.lane,
        }
    }

    /// The modifier fields of a machine source, with this operand.
    pub fn from_machine(operand: Operand, src: &valhall::Src) -> Src {
        Src {
            operand,
            neg: src.neg,
            abs: src.abs,
            not: src.not,
            swizzle: src.swizzle,
            widen: src.widen,
            lane: src.lane,
        }
    }

    /// Whether the source reads its operand unmodified (as a 32-bit value).
    pub fn is_plain(&self) -> bool {
        !self.neg && !self.abs && !self.not && self.swizzle == 0 && self.widen == 0 && self.lane == 0
    }
}

impl From<Value> for Src {
    fn from(v: Value) -> Src {
        Src::new(v)
    }
}

/// The kind of an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InstKind {
    /// A machine instruction: `mach.opcode` with IR operands.
    Machine,
    /// `dests[0] = φ(args)`, one argument per predecessor, in predecessor order.
    Phi,
    /// `dests[0] = srcs[0]` (any operand kind; modifiers must be plain).
    Copy,
    /// All `args` are read, then `dests[i] = args[i]`.
    ParallelCopy,
    /// `dests[0]` holds an unspecified value.
    Undef,
    /// `dests[0]` is the value the hardware preloads into register `r`.
    Preload(u8),
}

/// The operand-free part of a machine instruction: opcode, flow, instruction modifiers and
/// immediates, as in [`valhall::Instr`] (same field names and accessors). The IR keeps only this
/// part because operands are IR values until registers are assigned; a whole `Instr` is three
/// times the size and every pass copies and scans instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MachOp {
    pub opcode: Opcode,
    /// Index of the `flow` enum (0 = none).
    pub flow: u8,
    /// Encoded index of each instruction modifier, in `info().mods` order.
    pub mods: [u8; MAX_MODIFIERS],
    /// Raw bits of each immediate field.
    pub imms: [u32; MAX_IMMEDIATES],
}

impl MachOp {
    /// A fresh instruction's opcode part: default modifiers, zero immediates, no flow.
    pub fn new(opcode: Opcode) -> MachOp {
        MachOp::of(&Instr::new(opcode))
    }

    /// The operand-free part of `instr`.
    pub fn of(instr: &Instr) -> MachOp {
        MachOp { opcode: instr.opcode, flow: instr.flow, mods: instr.mods, imms: instr.imms }
    }

    /// A whole machine instruction with these fields and default operands.
    pub fn instr(&self) -> Instr {
        let mut instr = Instr::new(self.opcode);
        instr.flow = self.flow;
        instr.mods = self.mods;
        instr.imms = self.imms;
        instr
    }

    /// The table entry of the instruction.
    pub fn info(&self) -> &'static InstrInfo {
        self.opcode.info()
    }

    /// Raw value of the modifier `key` (the first one if the key occurs twice).
    pub fn modifier(&self, key: &str) -> Option<u8> {
        self.info().mod_index(key).map(|i| self.mods[i])
    }

    /// A flag modifier (`None` when the instruction has no modifier `key`).
    pub fn flag(&self, key: &str) -> Option<bool> {
        self.modifier(key).map(|v| v != 0)
    }

    /// A typed enum modifier: `None` when the instruction has no modifier `key` of enum `E`, or
    /// holds a reserved value.
    pub fn get<E: IsaEnum>(&self, key: &str) -> Option<E> {
        E::from_index(self.mods[self.info().enum_mod_index(key, E::ID)?])
    }

    pub fn clamp(&self) -> Option<Clamp> {
        Clamp::from_index(self.mods[ModSlots::of(self.opcode).clamp?])
    }

    pub fn round_mode(&self) -> Option<RoundMode> {
        RoundMode::from_index(self.mods[ModSlots::of(self.opcode).round_mode?])
    }

    pub fn condition(&self) -> Option<Condition> {
        Condition::from_index(self.mods[ModSlots::of(self.opcode).condition?])
    }

    pub fn vector_size(&self) -> Option<VectorSize> {
        VectorSize::from_index(self.mods[ModSlots::of(self.opcode).vector_size?])
    }

    pub fn set_vector_size(&mut self, v: VectorSize) -> Result<(), InstrError> {
        let i = self.slot(ModSlots::of(self.opcode).vector_size, "vector_size")?;
        self.mods[i] = v.index();
        Ok(())
    }

    /// Sets the clamp modifier.
    pub fn set_clamp(&mut self, clamp: Clamp) -> Result<(), InstrError> {
        let i = self.slot(ModSlots::of(self.opcode).clamp, "clamp")?;
        self.mods[i] = clamp.index();
        Ok(())
    }

    /// The index of modifier `name` found in the slot table, or the error naming it.
    fn slot(&self, slot: Option<usize>, name: &str) -> Result<usize, InstrError> {
        slot.ok_or_else(|| InstrError::NoSuch { instr: self.info().name, what: "modifier", name: name.to_string() })
    }

    /// The value of immediate field `name` (sign-extended for signed fields).
    pub fn imm(&self, name: &str) -> Option<i64> {
        let info = self.info();
        let k = info.imm_index(name)?;
        Some(info.imms[k].decode(self.imms[k]))
    }
}

/// Where each opcode keeps the enum modifiers that lowering and the passes read and set most
/// (`Instr::mods` indices, the first modifier with that key and enum, as `Instr::get` finds
/// it). Looking a modifier up by name compares strings on every call, which cost more than
/// building the rest of an instruction.
#[derive(Clone, Copy)]
pub(crate) struct ModSlots {
    pub condition: Option<usize>,
    pub result_type: Option<usize>,
    pub round_mode: Option<usize>,
    pub clamp: Option<usize>,
    pub vector_size: Option<usize>,
}

impl ModSlots {
    pub fn of(opcode: Opcode) -> &'static ModSlots {
        static TABLE: LazyLock<Box<[ModSlots]>> = LazyLock::new(|| {
            INSTRUCTIONS
                .iter()
                .map(|info| ModSlots {
                    condition: info.enum_mod_index("condition", Condition::ID),
                    result_type: info.enum_mod_index("result_type", ResultType::ID),
                    round_mode: info.enum_mod_index("round_mode", RoundMode::ID),
                    clamp: info.enum_mod_index("clamp", Clamp::ID),
                    vector_size: info.enum_mod_index("vector_size", VectorSize::ID),
                })
                .collect()
        });
        &TABLE[opcode as usize]
    }
}

/// One instruction. Every pass copies and scans these: keep it small (the compile-time
/// assertion below fails when it grows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inst {
    pub kind: InstKind,
    /// Opcode, instruction modifiers, immediates and flow of a machine instruction; source
    /// modifier fields live in [`Inst::srcs`]. For pseudo-instructions it is `NOP`.
    pub mach: MachOp,
    /// Destination values (one, or two for a 64-bit destination).
    pub dests: ValueList,
    /// Staging operands in the order of `mach.info().staging`.
    pub staging: [ValueList; 2],
    pub srcs: [Src; 4],
    /// φ arguments and parallel-copy sources.
    pub args: ValueList,
    /// Removed by a pass; skipped by every iteration and dropped by [`Shader::compact`].
    pub dead: bool,
}

const _: () = assert!(std::mem::size_of::<Inst>() <= 140);

impl Inst {
    /// A machine instruction with no operands yet. Only the opcode, flow, modifiers and
    /// immediates of `mach` are kept.
    pub fn machine(mach: Instr) -> Inst {
        Inst::of_op(MachOp::of(&mach))
    }

    /// A machine instruction with no operands yet.
    pub fn of_op(mach: MachOp) -> Inst {
        Inst {
            kind: InstKind::Machine,
            mach,
            dests: ValueList::EMPTY,
            staging: [ValueList::EMPTY; 2],
            srcs: [Src::NONE; 4],
            args: ValueList::EMPTY,
            dead: false,
        }
    }

    /// A pseudo-instruction.
    pub fn pseudo(kind: InstKind) -> Inst {
        Inst {
            kind,
            mach: MachOp::new(Opcode::NOP),
            dests: ValueList::EMPTY,
            staging: [ValueList::EMPTY; 2],
            srcs: [Src::NONE; 4],
            args: ValueList::EMPTY,
            dead: false,
        }
    }

    /// The opcode of a machine instruction. (Pseudo-instructions carry `NOP`, which no machine
    /// instruction in the IR has (verified): comparing `mach.opcode` with any other opcode needs
    /// no test of the kind.)
    pub fn opcode(&self) -> Option<Opcode> {
        (self.mach.opcode != Opcode::NOP).then_some(self.mach.opcode)
    }

    pub fn is_machine(&self) -> bool {
        self.kind == InstKind::Machine
    }

    /// The used sources of a machine instruction (or the copy source).
    pub fn sources(&self) -> &[Src] {
        match self.kind {
            InstKind::Machine => &self.srcs[..self.mach.info().srcs.len()],
            InstKind::Copy => &self.srcs[..1],
            _ => &[],
        }
    }

    /// Whether staging operand `k` is written (a definition).
    pub fn staging_is_write(&self, k: usize) -> bool {
        self.is_machine() && self.mach.info().staging.get(k).is_some_and(|s| s.write)
    }

    /// Whether the instruction has an effect besides its definitions (it must not be deleted
    /// even when its results are unused).
    pub fn has_side_effects(&self) -> bool {
        // Several passes ask this of every instruction: one table lookup per opcode.
        static TABLE: OnceLock<Box<[bool]>> = OnceLock::new();
        let table =
            TABLE.get_or_init(|| INSTRUCTIONS.iter().map(|info| opcode_has_side_effects(info.opcode)).collect());
        self.is_machine() && table[self.mach.opcode as usize]
    }
}

/// Whether a machine instruction of this opcode has an effect besides its definitions.
fn opcode_has_side_effects(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        NOP | BRANCHZ
            | BRANCHZI
            | DISCARD_F32
            | BARRIER
            | ATEST
            | ZS_EMIT
            | BLEND
            | ST_CVT
            | ST_TILE
            | ATOM_I32
            | ATOM_I64
            | ATOM1_RETURN_I32
            | ATOM1_RETURN_I64
            | ATOM_RETURN_I32
            | ATOM_RETURN_I64
    ) || op.is_store()
}

/// How a block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Terminator {
    /// Continue at the block (a fall-through when it is the next block in the layout).
    Jump(Block),
    /// Go to `taken` when `cond` is zero (`if_zero`) or non-zero (otherwise), else to
    /// `fallthrough`.
    Branch { cond: Value, if_zero: bool, taken: Block, fallthrough: Block },
    /// The end of the shader.
    End,
}

impl Terminator {
    /// Successor blocks (taken first for branches).
    pub fn successors(&self) -> impl Iterator<Item = Block> {
        let (a, b) = match *self {
            Terminator::Jump(b) => (Some(b), None),
            Terminator::Branch { taken, fallthrough, .. } => (Some(taken), Some(fallthrough)),
            Terminator::End => (None, None),
        };
        a.into_iter().chain(b)
    }
}

/// A basic block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockData {
    pub insts: Vec<InstId>,
    pub preds: Vec<Block>,
    pub term: Terminator,
}

/// The shader stage an IR shader runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    Vertex,
    Fragment,
    Compute,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Vertex => "vertex",
            Stage::Fragment => "fragment",
            Stage::Compute => "compute",
        }
    }
}

/// What defines a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValueInfo {
    /// The defining instruction (`None` transiently while lowering builds it, and for the
    /// components a narrowed load no longer transfers: `opt::dce`).
    pub def: Option<InstId>,
}

/// A shader in SSA form.
#[derive(Debug, PartialEq, Eq)]
pub struct Shader {
    pub stage: Stage,
    /// Blocks in layout order; block 0 is the entry.
    pub blocks: Vec<BlockData>,
    pub insts: Vec<Inst>,
    pub values: Vec<ValueInfo>,
    pool: Vec<Value>,
}

/// A clone keeps room to grow (a quarter more instructions, values and value-list entries):
/// clones are shaders that passes still edit (the IDVS variants), and a clone without spare
/// capacity would copy a whole arena on its first insertion.
impl Clone for Shader {
    fn clone(&self) -> Shader {
        fn with_room<T: Clone>(shelf: &'static Shelf<T>, v: &[T]) -> Vec<T> {
            let mut out = reuse::take(shelf, v.len() + v.len() / 4 + 16);
            out.extend_from_slice(v);
            out
        }
        Shader {
            stage: self.stage,
            blocks: self.blocks.clone(),
            insts: with_room(&SPARE_INSTS, &self.insts),
            values: with_room(&SPARE_VALUES, &self.values),
            pool: with_room(&SPARE_POOL, &self.pool),
        }
    }
}

// The arenas (and the entry block's list, which holds all of straight-line code) are a
// compile's largest buffers: a dropped shader leaves them for the next one on its thread.
reuse::shelf!(SPARE_INSTS: Inst);
reuse::shelf!(SPARE_VALUES: ValueInfo);
reuse::shelf!(SPARE_POOL: Value);
reuse::shelf!(SPARE_ENTRY_INSTS: InstId);

impl Drop for Shader {
    fn drop(&mut self) {
        reuse::give(&SPARE_INSTS, std::mem::take(&mut self.insts));
        reuse::give(&SPARE_VALUES, std::mem::take(&mut self.values));
        reuse::give(&SPARE_POOL, std::mem::take(&mut self.pool));
        if let Some(entry) = self.blocks.first_mut() {
            reuse::give(&SPARE_ENTRY_INSTS, std::mem::take(&mut entry.insts));
        }
    }
}

impl Shader {
    /// An empty shader with one (entry) block that ends the shader.
    pub fn new(stage: Stage) -> Shader {
        Shader {
            stage,
            blocks: vec![BlockData { insts: Vec::new(), preds: Vec::new(), term: Terminator::End }],
            insts: Vec::new(),
            values: Vec::new(),
            pool: Vec::new(),
        }
    }

    pub fn entry(&self) -> Block {
        Block(0)
    }

    /// An empty shader like [`Shader::new`] with room for `insts` instructions (in the arena and
    /// in the entry block's list) and `values` values (and as many value-list entries), so
    /// that building a shader of a known size does not regrow them.
    pub fn with_capacity(stage: Stage, insts: usize, values: usize) -> Shader {
        let mut shader = Shader::new(stage);
        shader.blocks[0].insts = reuse::take(&SPARE_ENTRY_INSTS, insts);
        shader.insts = reuse::take(&SPARE_INSTS, insts);
        shader.values = reuse::take(&SPARE_VALUES, values);
        shader.pool = reuse::take(&SPARE_POOL, values);
        shader
    }

    /// A new value without a definition yet.
    pub fn new_value(&mut self) -> Value {
        let v = Value(self.values.len() as u32);
        self.values.push(ValueInfo { def: None });
        v
    }

    /// `n` new values.
    pub fn new_values(&mut self, n: usize) -> ValueList {
        let start = self.pool.len() as u32;
        for _ in 0..n {
            let v = self.new_value();
            self.pool.push(v);
        }
        ValueList { start, len: n as u32 }
    }

    /// Stores a list of values in the pool.
    pub fn list(&mut self, values: &[Value]) -> ValueList {
        let start = self.pool.len() as u32;
        self.pool.extend_from_slice(values);
        ValueList { start, len: values.len() as u32 }
    }

    /// The values of a list.
    pub fn get(&self, list: ValueList) -> &[Value] {
        &self.pool[list.start as usize..(list.start + list.len) as usize]
    }

    /// Mutable access to the values of a list (for renaming).
    pub fn get_mut(&mut self, list: ValueList) -> &mut [Value] {
        &mut self.pool[list.start as usize..(list.start + list.len) as usize]
    }

    /// A new block (appended to the layout) that ends the shader until its terminator is set.
    pub fn add_block(&mut self) -> Block {
        self.blocks.push(BlockData { insts: Vec::new(), preds: Vec::new(), term: Terminator::End });
        Block(self.blocks.len() as u32 - 1)
    }

    pub fn block(&self, b: Block) -> &BlockData {
        &self.blocks[b.index()]
    }

    pub fn block_mut(&mut self, b: Block) -> &mut BlockData {
        &mut self.blocks[b.index()]
    }

    pub fn inst(&self, id: InstId) -> &Inst {
        &self.insts[id.index()]
    }

    pub fn inst_mut(&mut self, id: InstId) -> &mut Inst {
        &mut self.insts[id.index()]
    }

    /// Adds an instruction to the arena (not to a block) and records it as the definition of
    /// its destinations and written staging values.
    pub fn add_inst(&mut self, inst: Inst) -> InstId {
        let id = InstId(self.insts.len() as u32);
        self.insts.push(inst);
        self.record_defs(id);
        id
    }

    /// Records `id` as the definer of every value it defines.
    pub fn record_defs(&mut self, id: InstId) {
        let Shader { insts, values, pool, .. } = self;
        let inst = &insts[id.index()];
        let mut record = |list: ValueList| {
            for v in &pool[list.start as usize..(list.start + list.len) as usize] {
                values[v.index()].def = Some(id);
            }
        };
        record(inst.dests);
        if inst.is_machine() {
            for (k, staging) in inst.mach.info().staging.iter().enumerate() {
                if staging.write {
                    record(inst.staging[k]);
                }
            }
        }
    }

    /// Calls `f` for every value the instruction defines, in order: destinations, then written
    /// staging operands.
    #[inline]
    pub fn for_each_def(&self, inst: &Inst, mut f: impl FnMut(Value)) {
        for &v in self.get(inst.dests) {
            f(v);
        }
        // Most instructions have no staging operands: the opcode table is not looked up then.
        if !(inst.staging[0].is_empty() && inst.staging[1].is_empty()) {
            for (k, staging) in inst.mach.info().staging.iter().enumerate() {
                if staging.write {
                    for &v in self.get(inst.staging[k]) {
                        f(v);
                    }
                }
            }
        }
    }

    /// Calls `f` for every value the instruction reads: sources, read staging operands and
    /// φ/parallel-copy arguments.
    #[inline]
    pub fn for_each_use(&self, inst: &Inst, mut f: impl FnMut(Value)) {
        // No test of the instruction's kind: only a machine instruction has staging operands,
        // and the used sources are the first slots up to the first unused one, which for a
        // pseudo-instruction other than a copy is the first (all verified).
        for src in &inst.srcs {
            match src.operand {
                Operand::Value(v) => f(v),
                Operand::Pair(lo, hi) => {
                    f(lo);
                    f(hi);
                }
                Operand::None => break,
                _ => {}
            }
        }
        if !(inst.staging[0].is_empty() && inst.staging[1].is_empty()) {
            let info = inst.mach.info();
            for k in 0..2 {
                if !inst.staging[k].is_empty() && !info.staging.get(k).is_some_and(|s| s.write) {
                    for &v in self.get(inst.staging[k]) {
                        f(v);
                    }
                }
            }
        }
        if !inst.args.is_empty() {
            for &v in self.get(inst.args) {
                f(v);
            }
        }
    }

    /// Appends an instruction at the end of a block.
    pub fn push(&mut self, block: Block, inst: Inst) -> InstId {
        let id = self.add_inst(inst);
        self.blocks[block.index()].insts.push(id);
        id
    }

    /// Sets a block's terminator and records it as a predecessor of its successors. The block
    /// must not have had a terminator with successors before.
    pub fn set_terminator(&mut self, block: Block, term: Terminator) {
        debug_assert!(self.blocks[block.index()].term.successors().next().is_none());
        self.blocks[block.index()].term = term;
        for succ in term.successors() {
            self.blocks[succ.index()].preds.push(block);
        }
    }

    /// Successors of a block.
    pub fn succs(&self, b: Block) -> impl Iterator<Item = Block> {
        self.blocks[b.index()].term.successors()
    }

    /// The live (not dead) instructions of a block.
    pub fn block_insts(&self, b: Block) -> impl Iterator<Item = InstId> + '_ {
        self.blocks[b.index()].insts.iter().copied().filter(|&i| !self.insts[i.index()].dead)
    }

    /// Drops dead instructions from the blocks' lists (the arena keeps them).
    pub fn compact(&mut self) {
        let insts = &self.insts;
        for block in &mut self.blocks {
            block.insts.retain(|i| !insts[i.index()].dead);
        }
    }

    /// Replaces every use of each value by its image under `map` (values map to themselves when
    /// `map` returns `None`). Definitions are unchanged.
    pub fn rewrite_uses(&mut self, map: impl Fn(Value) -> Option<Operand>) {
        let Shader { blocks, insts, pool, .. } = self;
        for block in blocks.iter_mut() {
            for &id in &block.insts {
                rewrite_inst(&mut insts[id.index()], pool, &map);
            }
            if let Terminator::Branch { cond, .. } = &mut block.term {
                *cond = rewrite_value(*cond, &map);
            }
        }
    }

    /// [`Shader::rewrite_uses`] for one instruction (nothing when it is dead).
    pub fn rewrite_inst_uses(&mut self, id: InstId, map: impl Fn(Value) -> Option<Operand>) {
        rewrite_inst(&mut self.insts[id.index()], &mut self.pool, &map);
    }

    /// [`Shader::rewrite_inst_uses`] without the φ and parallel-copy arguments (for a walk that
    /// renames those once every definition has been seen).
    #[inline]
    pub fn rewrite_operand_reads(&mut self, id: InstId, map: impl Fn(Value) -> Option<Operand>) {
        rewrite_operand_reads(&mut self.insts[id.index()], &mut self.pool, &map);
    }

    /// Renumbers the blocks so that they appear in `order` (blocks missing from it follow in
    /// their old order; repeated entries count once). Block 0 must stay first.
    pub fn reorder_blocks(&mut self, order: &[Block]) {
        let n = self.blocks.len();
        let mut new_index = vec![u32::MAX; n];
        let mut sequence = Vec::with_capacity(n);
        for b in order.iter().copied().chain((0..n as u32).map(Block)) {
            if new_index[b.index()] == u32::MAX {
                new_index[b.index()] = sequence.len() as u32;
                sequence.push(b);
            }
        }
        debug_assert_eq!(sequence.first(), Some(&Block(0)), "the entry block must stay first");
        let map = |b: Block| Block(new_index[b.index()]);
        let mut old: Vec<Option<BlockData>> = std::mem::take(&mut self.blocks).into_iter().map(Some).collect();
        self.blocks.reserve(n);
        for b in sequence {
            let mut data = old[b.index()].take().expect("each block once");
            data.term = match data.term {
                Terminator::Jump(t) => Terminator::Jump(map(t)),
                Terminator::Branch { cond, if_zero, taken, fallthrough } => {
                    Terminator::Branch { cond, if_zero, taken: map(taken), fallthrough: map(fallthrough) }
                }
                Terminator::End => Terminator::End,
            };
            for p in &mut data.preds {
                *p = map(*p);
            }
            self.blocks.push(data);
        }
    }

    /// Number of live instructions.
    pub fn inst_count(&self) -> usize {
        self.blocks.iter().map(|b| b.insts.iter().filter(|i| !self.insts[i.index()].dead).count()).sum()
    }
}

fn rewrite_inst(inst: &mut Inst, pool: &mut [Value], map: &impl Fn(Value) -> Option<Operand>) {
    if inst.dead {
        return;
    }
    rewrite_operand_reads(inst, pool, map);
    rewrite_list(inst.args, pool, map);
}

/// The reads of `inst` other than its φ or parallel-copy arguments: sources and read staging
/// operands.
#[inline]
fn rewrite_operand_reads(inst: &mut Inst, pool: &mut [Value], map: &impl Fn(Value) -> Option<Operand>) {
    // The used sources are the first slots, up to the first unused one (verified; instructions
    // without sources leave every slot unused).
    for src in &mut inst.srcs {
        match &mut src.operand {
            Operand::Value(v) => {
                if let Some(op) = map(*v) {
                    src.operand = op;
                }
            }
            Operand::Pair(lo, hi) => {
                *lo = rewrite_value(*lo, map);
                *hi = rewrite_value(*hi, map);
            }
            Operand::None => break,
            _ => {}
        }
    }
    // Most instructions have no staging operands: the opcode table is read only when one does.
    if !(inst.staging[0].is_empty() && inst.staging[1].is_empty()) {
        let staging = inst.mach.info().staging;
        for k in 0..2 {
            if !staging.get(k).is_some_and(|s| s.write) {
                rewrite_list(inst.staging[k], pool, map);
            }
        }
    }
}

fn rewrite_list(l: ValueList, pool: &mut [Value], map: &impl Fn(Value) -> Option<Operand>) {
    if !l.is_empty() {
        for v in &mut pool[l.start as usize..(l.start + l.len) as usize] {
            *v = rewrite_value(*v, map);
        }
    }
}

/// Lists and staging operands must keep naming single values, so a value replaced by a
/// non-value operand keeps its name there.
fn rewrite_value(v: Value, map: &impl Fn(Value) -> Option<Operand>) -> Value {
    match map(v) {
        Some(Operand::Value(w)) => w,
        _ => v,
    }
}
