//! Emitting instructions into a block: the interface lowering and passes build IR with.
//!
//! A [`Builder`] appends to one block (or inserts before a given position). The generic entry
//! points take a [`valhall::Instr`] template (opcode and modifiers) plus IR sources; the typed
//! helpers below them cover the instructions the lowering recipes use most, with Mesa's
//! conventions (`FMA x, y, -0.0` for multiplication, `.m1` booleans, …).

use super::{Block, Inst, InstId, InstKind, MachOp, ModSlots, Operand, Shader, Src, Value, ValueInfo, ValueList};
use crate::valhall::tables::{Clamp, Condition, INSTRUCTION_COUNT, IsaEnum, ResultType, RoundMode};
use crate::valhall::{Instr, Opcode};
use std::sync::LazyLock;

/// Negative zero, the additive identity that keeps `-0` results (`x + -0 = x` for every x).
pub const NEG_ZERO: u32 = 0x8000_0000;

/// What a fresh instruction of one opcode looks like to the builder.
#[derive(Clone, Copy)]
struct Template {
    /// `MachOp::new(opcode)`.
    mach: MachOp,
    /// One 32-bit destination and no staging operands: [`Builder::clean_alu`] can build it.
    clean: bool,
}

/// The template of `opcode`. Every IR instruction starts from one: a copy of the operand-free
/// part from a table is much cheaper than copying a whole fresh [`Instr`] (three times the
/// size) and then dropping its operand fields.
#[inline(always)]
fn template(opcode: Opcode) -> Template {
    static TEMPLATES: LazyLock<Box<[Template; INSTRUCTION_COUNT]>> = LazyLock::new(|| {
        let nop = Template { mach: MachOp::new(Opcode::NOP), clean: false };
        let mut table = Box::new([nop; INSTRUCTION_COUNT]);
        for op in Opcode::ALL {
            let info = op.info();
            table[op as usize] =
                Template { mach: MachOp::new(op), clean: info.staging.is_empty() && info.dest_registers() == 1 };
        }
        table
    });
    TEMPLATES[opcode as usize]
}

/// Appends instructions to a block.
pub struct Builder<'a> {
    pub shader: &'a mut Shader,
    pub block: Block,
    /// Insert before this index of the block's instruction list instead of appending.
    position: Option<usize>,
}

impl<'a> Builder<'a> {
    /// A builder appending to `block`.
    pub fn new(shader: &'a mut Shader, block: Block) -> Builder<'a> {
        Builder { shader, block, position: None }
    }

    /// A builder inserting before the instruction at `index` of `block`'s list.
    pub fn before(shader: &'a mut Shader, block: Block, index: usize) -> Builder<'a> {
        Builder { shader, block, position: Some(index) }
    }

    /// Puts an instruction already in the arena at the builder's position.
    #[inline]
    fn place(&mut self, id: InstId) {
        let list = &mut self.shader.blocks[self.block.index()].insts;
        match &mut self.position {
            Some(index) => {
                list.insert(*index, id);
                *index += 1;
            }
            None => list.push(id),
        }
    }

    /// Adds a pseudo-instruction whose only definition is its one destination (`copy`,
    /// `preload`, `undef`, φ) and returns that value. The instruction is written straight into
    /// the arena: assembling an `Inst` first would copy its 140 bytes once more.
    #[inline(always)]
    fn single_dest(&mut self, kind: InstKind, src: Src, args: &[Value]) -> Value {
        let id = InstId(self.shader.insts.len() as u32);
        let (dest, dests) = self.new_dest(id);
        let args = if kind == InstKind::Phi { self.shader.list(args) } else { ValueList::EMPTY };
        self.shader.insts.push(Inst {
            kind,
            mach: template(Opcode::NOP).mach,
            dests,
            staging: [ValueList::EMPTY; 2],
            srcs: [src, Src::NONE, Src::NONE, Src::NONE],
            args,
            dead: false,
        });
        self.place(id);
        dest
    }

    /// A new value defined by instruction `id` (about to be added) and its one-value list, as
    /// `Shader::new_values(1)` followed by setting the definition would make them.
    #[inline(always)]
    fn new_dest(&mut self, id: InstId) -> (Value, ValueList) {
        let dest = Value(self.shader.values.len() as u32);
        self.shader.values.push(ValueInfo { def: Some(id) });
        (dest, self.shader.list(&[dest]))
    }

    /// An ALU instruction from the operand-free part of a machine instruction (a [`template`],
    /// modifiers and immediates set); returns its destination. Inlined into each typed helper,
    /// so that the instruction is written straight into the arena.
    /// Only for opcodes whose template is `clean`.
    #[inline(always)]
    fn clean_alu(&mut self, mach: MachOp, srcs: &[Src]) -> Value {
        debug_assert!(template(mach.opcode).clean, "{}: not a plain ALU instruction", mach.info().name);
        debug_assert_eq!(srcs.len(), mach.info().srcs.len(), "{}: wrong number of sources", mach.info().name);
        let id = InstId(self.shader.insts.len() as u32);
        let (dest, dests) = self.new_dest(id);
        // The instruction is built in the arena and its sources copied there afterwards: an
        // `Inst` assembled first is copied whole (140 bytes) once more.
        self.shader.insts.push(Inst {
            kind: InstKind::Machine,
            mach,
            dests,
            staging: [ValueList::EMPTY; 2],
            srcs: [Src::NONE; 4],
            args: ValueList::EMPTY,
            dead: false,
        });
        if let Some(inst) = self.shader.insts.last_mut() {
            // Element by element: a slice copy of unknown length is a `memcpy` call.
            for (o, s) in inst.srcs.iter_mut().zip(srcs) {
                *o = *s;
            }
        }
        self.place(id);
        dest
    }

    /// Emits a machine instruction and returns it. `staging` gives the values of read staging
    /// operands (in `info.staging` order); written staging operands get `write_counts[k]` fresh
    /// values. Destinations are fresh values.
    pub fn emit(&mut self, mach: Instr, srcs: &[Src], staging: &[&[Value]], write_count: usize) -> InstId {
        self.emit_writing(mach, srcs, staging, write_count).0
    }

    /// [`Builder::emit`], also returning the first written staging list (empty without one).
    fn emit_writing(
        &mut self,
        mach: Instr,
        srcs: &[Src],
        staging: &[&[Value]],
        write_count: usize,
    ) -> (InstId, ValueList) {
        let info = mach.info();
        debug_assert_eq!(srcs.len(), info.srcs.len(), "{}: wrong number of sources", info.name);
        let id = InstId(self.shader.insts.len() as u32);
        let first_new = self.shader.values.len();
        let dests = self.shader.new_values(usize::from(info.dest_registers()));
        let mut lists = [ValueList::EMPTY; 2];
        let mut reads = staging.iter();
        let mut written = None;
        for (k, s) in info.staging.iter().enumerate() {
            lists[k] = if s.write {
                let list = self.shader.new_values(write_count);
                written.get_or_insert(list);
                list
            } else {
                let values = reads.next().copied().unwrap_or(&[]);
                self.shader.list(values)
            };
        }
        // Built in the arena, as in `clean_alu`.
        self.shader.insts.push(Inst {
            kind: InstKind::Machine,
            mach: MachOp::of(&mach),
            dests,
            staging: lists,
            srcs: [Src::NONE; 4],
            args: ValueList::EMPTY,
            dead: false,
        });
        if let Some(inst) = self.shader.insts.last_mut() {
            // Element by element: a slice copy of unknown length is a `memcpy` call.
            for (o, s) in inst.srcs.iter_mut().zip(srcs) {
                *o = *s;
            }
        }
        // The values made above are the destinations and written staging values (read staging
        // lists hold existing values): this instruction defines exactly them.
        for v in &mut self.shader.values[first_new..] {
            v.def = Some(id);
        }
        self.place(id);
        (id, written.unwrap_or(ValueList::EMPTY))
    }

    /// Emits an ALU instruction with one 32-bit destination and returns the destination.
    pub fn alu(&mut self, mach: Instr, srcs: &[Src]) -> Value {
        let id = self.emit(mach, srcs, &[], 0);
        self.shader.get(self.shader.inst(id).dests)[0]
    }

    /// Emits an ALU instruction given by opcode with default modifiers.
    pub fn op(&mut self, opcode: Opcode, srcs: &[Src]) -> Value {
        let template = template(opcode);
        if !template.clean {
            return self.alu(template.mach.instr(), srcs);
        }
        self.clean_alu(template.mach, srcs)
    }

    /// Emits a message instruction that writes `write_count` staging registers; returns them.
    pub fn message(&mut self, mach: Instr, srcs: &[Src], reads: &[&[Value]], write_count: usize) -> ValueList {
        self.emit_writing(mach, srcs, reads, write_count).1
    }

    /// `dest = operand`.
    pub fn copy(&mut self, operand: impl Into<Operand>) -> Value {
        self.single_dest(InstKind::Copy, Src::new(operand.into()), &[])
    }

    /// A register holding the 32-bit constant `bits`.
    pub fn konst(&mut self, bits: u32) -> Value {
        self.copy(Operand::Const(bits))
    }

    /// A value holding what the hardware preloaded into `reg`.
    pub fn preload(&mut self, reg: u8) -> Value {
        self.single_dest(InstKind::Preload(reg), Src::NONE, &[])
    }

    /// An unspecified value.
    pub fn undef(&mut self) -> Value {
        self.single_dest(InstKind::Undef, Src::NONE, &[])
    }

    /// A φ with the given arguments (one per predecessor, in predecessor order); inserted at the
    /// current position, which must be among the block's leading φs.
    pub fn phi(&mut self, args: &[Value]) -> Value {
        self.single_dest(InstKind::Phi, Src::NONE, args)
    }

    // ---- Float arithmetic ---------------------------------------------------------------------

    pub fn fadd(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::FADD_F32, &[a.into(), b.into()])
    }

    /// `a * b`, as `FMA a, b, -0.0` (keeps the sign of zero products).
    pub fn fmul(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::FMA_F32, &[a.into(), b.into(), Src::konst(NEG_ZERO)])
    }

    pub fn fma(&mut self, a: impl Into<Src>, b: impl Into<Src>, c: impl Into<Src>) -> Value {
        self.op(Opcode::FMA_F32, &[a.into(), b.into(), c.into()])
    }

    pub fn fmin(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::FMIN_F32, &[a.into(), b.into()])
    }

    pub fn fmax(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::FMAX_F32, &[a.into(), b.into()])
    }

    /// `FADD x, -0.0` with a clamp: a stand-alone saturate (or copy with modifiers).
    pub fn fclamp(&mut self, x: impl Into<Src>, clamp: Clamp) -> Value {
        let mut mach = template(Opcode::FADD_F32).mach;
        set_mod(&mut mach, |s| s.clamp, clamp);
        self.clean_alu(mach, &[x.into(), Src::konst(NEG_ZERO)])
    }

    pub fn fround(&mut self, x: impl Into<Src>, mode: RoundMode) -> Value {
        let mut mach = template(Opcode::FROUND_F32).mach;
        set_mod(&mut mach, |s| s.round_mode, mode);
        self.clean_alu(mach, &[x.into()])
    }

    pub fn frcp(&mut self, x: impl Into<Src>) -> Value {
        self.op(Opcode::FRCP_F32, &[x.into()])
    }

    pub fn frsq(&mut self, x: impl Into<Src>) -> Value {
        self.op(Opcode::FRSQ_F32, &[x.into()])
    }

    /// Float comparison producing `result` (`.f1` 0.0/1.0, `.m1` 0/~0, `.i1` 0/1).
    pub fn fcmp(&mut self, cond: Condition, a: impl Into<Src>, b: impl Into<Src>, result: ResultType) -> Value {
        let mut mach = template(Opcode::FCMP_OR_F32).mach;
        set_mod(&mut mach, |s| s.condition, cond);
        set_mod(&mut mach, |s| s.result_type, result);
        self.clean_alu(mach, &[a.into(), b.into(), Src::konst(0)])
    }

    // ---- Integer arithmetic -------------------------------------------------------------------

    pub fn iadd(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::IADD_S32, &[a.into(), b.into()])
    }

    pub fn isub(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::ISUB_S32, &[a.into(), b.into()])
    }

    pub fn imul(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::IMUL_I32, &[a.into(), b.into()])
    }

    /// `IADD_IMM.i32 x, #imm`.
    pub fn iadd_imm(&mut self, x: impl Into<Src>, imm: u32) -> Value {
        // The template and where its `constant` field lives, found once: setting the field by
        // name compares strings, and a whole `Instr` is three times the size of a `MachOp`.
        static IADD_IMM: LazyLock<(MachOp, usize)> = LazyLock::new(|| {
            let mach = Instr::new(Opcode::IADD_IMM_I32);
            (MachOp::of(&mach), mach.info().imm_index("constant").expect("IADD_IMM.i32 has a constant field"))
        });
        let (mut mach, k) = *IADD_IMM;
        // As `Instr::set_imm`: the field keeps 0 when the value does not fit.
        if let Some(bits) = mach.info().imms[k].encode(i64::from(imm)) {
            mach.imms[k] = bits;
        }
        self.clean_alu(mach, &[x.into()])
    }

    /// Integer comparison; `signed` picks `.s32` over `.u32`.
    pub fn icmp(
        &mut self,
        signed: bool,
        cond: Condition,
        a: impl Into<Src>,
        b: impl Into<Src>,
        result: ResultType,
    ) -> Value {
        let mut mach = template(if signed { Opcode::ICMP_OR_S32 } else { Opcode::ICMP_OR_U32 }).mach;
        set_mod(&mut mach, |s| s.condition, cond);
        set_mod(&mut mach, |s| s.result_type, result);
        self.clean_alu(mach, &[a.into(), b.into(), Src::konst(0)])
    }

    /// `(a cond b) ? t : f` with an integer comparison (`.s32`/`.u32`).
    pub fn csel(&mut self, signed: bool, cond: Condition, a: Src, b: Src, t: Src, f: Src) -> Value {
        let mut mach = template(if signed { Opcode::CSEL_S32 } else { Opcode::CSEL_U32 }).mach;
        set_mod(&mut mach, |s| s.condition, cond);
        self.clean_alu(mach, &[a, b, t, f])
    }

    /// `(a cond b) ? t : f` with a float comparison.
    pub fn csel_f32(&mut self, cond: Condition, a: Src, b: Src, t: Src, f: Src) -> Value {
        let mut mach = template(Opcode::CSEL_F32).mach;
        set_mod(&mut mach, |s| s.condition, cond);
        self.clean_alu(mach, &[a, b, t, f])
    }

    /// `c != 0 ? t : f`.
    pub fn select(&mut self, c: impl Into<Src>, t: impl Into<Src>, f: impl Into<Src>) -> Value {
        let (mach, srcs) = select_parts(c.into(), t.into(), f.into());
        self.clean_alu(mach, &srcs)
    }

    /// The shift/bitwise family: `(a shifted by shift) OP b`, where `shift` is a byte lane
    /// source (lanes field index 4 = `.b00`).
    pub fn shift_op(&mut self, opcode: Opcode, a: Src, shift: Src, b: Src) -> Value {
        self.op(opcode, &[a, shift, b])
    }

    /// `a & b`.
    pub fn and(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::LSHIFT_AND_I32, &[a.into(), shift_zero(), b.into()])
    }

    /// `a | b`.
    pub fn or(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::LSHIFT_OR_I32, &[a.into(), shift_zero(), b.into()])
    }

    /// `a ^ b`.
    pub fn xor(&mut self, a: impl Into<Src>, b: impl Into<Src>) -> Value {
        self.op(Opcode::LSHIFT_XOR_I32, &[a.into(), shift_zero(), b.into()])
    }

    /// `a << s` (s taken modulo 32 by the hardware).
    pub fn shl(&mut self, a: impl Into<Src>, s: impl Into<Src>) -> Value {
        self.op(Opcode::LSHIFT_OR_I32, &[a.into(), byte0(s.into()), Src::konst(0)])
    }

    /// `a >> s`, arithmetic when `signed`.
    pub fn shr(&mut self, signed: bool, a: impl Into<Src>, s: impl Into<Src>) -> Value {
        let mut mach = Instr::new(Opcode::RSHIFT_OR_I32);
        let _ = mach.set_flag("signed", signed);
        self.clean_alu(MachOp::of(&mach), &[a.into(), byte0(s.into()), Src::konst(0)])
    }

    /// Integer → float (`S32_TO_F32` / `U32_TO_F32`, round to nearest even).
    pub fn i2f(&mut self, signed: bool, x: impl Into<Src>) -> Value {
        self.op(if signed { Opcode::S32_TO_F32 } else { Opcode::U32_TO_F32 }, &[x.into()])
    }

    /// Float → integer with the given rounding (`F32_TO_S32` / `F32_TO_U32`).
    pub fn f2i(&mut self, signed: bool, x: impl Into<Src>, mode: RoundMode) -> Value {
        let mut mach = template(if signed { Opcode::F32_TO_S32 } else { Opcode::F32_TO_U32 }).mach;
        set_mod(&mut mach, |s| s.round_mode, mode);
        self.clean_alu(mach, &[x.into()])
    }
}

/// `mach.set(key, value)` for the modifier `slot` picks (nothing when the opcode has none).
#[inline(always)]
fn set_mod<E: IsaEnum>(mach: &mut MachOp, slot: impl Fn(&ModSlots) -> Option<usize>, value: E) {
    if let Some(k) = slot(ModSlots::of(mach.opcode)) {
        mach.mods[k] = value.index();
    }
}

/// The operation and sources of `c != 0 ? t : f`, as [`Builder::select`] emits it:
/// `CSEL.u32.eq c, #0, f, t` (for rewriting an instruction in place).
pub fn select_parts(c: Src, t: Src, f: Src) -> (MachOp, [Src; 4]) {
    let mut mach = template(Opcode::CSEL_U32).mach;
    set_mod(&mut mach, |s| s.condition, Condition::Eq);
    (mach, [c, Src::konst(0), f, t])
}

/// Index of `.b00` in the `lanes_8_bit` enum (the shift-amount field of shifts and CLPER).
pub const LANE_B00: u8 = 4;

/// A shift amount of zero: `0x0.b00`.
pub fn shift_zero() -> Src {
    Src::konst(0).widen(LANE_B00)
}

/// A shift-amount source reading byte 0 (`.b00`).
pub fn byte0(s: Src) -> Src {
    s.widen(LANE_B00)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The opcodes of the typed helpers are plain ALU instructions (`clean_alu` builds them
    /// without checking).
    #[test]
    fn typed_helpers_use_clean_templates() {
        for op in [
            Opcode::FADD_F32,
            Opcode::FROUND_F32,
            Opcode::FCMP_OR_F32,
            Opcode::IADD_IMM_I32,
            Opcode::ICMP_OR_S32,
            Opcode::ICMP_OR_U32,
            Opcode::CSEL_S32,
            Opcode::CSEL_U32,
            Opcode::CSEL_F32,
            Opcode::RSHIFT_OR_I32,
            Opcode::F32_TO_S32,
            Opcode::F32_TO_U32,
        ] {
            assert!(template(op).clean, "{op:?}");
            assert_eq!(template(op).mach, MachOp::new(op), "{op:?}");
        }
    }

    /// The slot table sets exactly what setting the modifier by name sets, on the templates.
    #[test]
    fn modifier_slots_agree_with_setting_by_name() {
        fn agree<E: IsaEnum>(
            op: Opcode,
            values: &[E],
            by_name: fn(&mut Instr, E) -> Result<(), crate::valhall::InstrError>,
            slot: fn(&ModSlots) -> Option<usize>,
        ) {
            for &value in values {
                let (mut named, mut slotted) = (Instr::new(op), template(op).mach);
                let _ = by_name(&mut named, value);
                set_mod(&mut slotted, slot, value);
                assert_eq!(MachOp::of(&named), slotted, "{op:?}");
            }
        }
        for op in Opcode::ALL {
            agree(op, &[Condition::Lt, Condition::Ge, Condition::Ne], Instr::set_condition, |s| s.condition);
            agree(op, &[ResultType::M1, ResultType::F1], Instr::set_result_type, |s| s.result_type);
            agree(op, &[RoundMode::Rtn, RoundMode::Rtz], Instr::set_round_mode, |s| s.round_mode);
            agree(op, &[Clamp::Clamp0_1, Clamp::ClampM1_1], Instr::set_clamp, |s| s.clamp);
        }
    }
}
