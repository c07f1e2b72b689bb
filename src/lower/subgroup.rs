//! Subgroup (inter-lane) opcodes: VOTE_ANY, VOTE_ALL, VOTE_EQ, BALLOT, READ_FIRST, READ_INVOC.
//!
//! **The TGSI subgroup is the 2×2 quad** (docs/lowering.md): every cross-lane instruction uses
//! `.subgroup4`, so a lane sees the four lanes of its quad (invocation = `lane_id & 3`), as the
//! interpreter and the emulator model it. Mesa lowers ballot to `WMASK` and read_invocation to
//! `CLPER` over the whole warp; the quad is the subgroup both executors can compare.
//!
//! | opcode | sequence (per enabled channel c; `A` = `WMASK.subgroup4 #~0`, the active lanes) | instr. |
//! | --- | --- | --- |
//! | BALLOT | `WMASK.subgroup4 src.x` → x and z; y, w = 0 | 1 |
//! | VOTE_ANY | `ICMP_OR.u32.ne.m1 WMASK(src.c), 0` | 2 |
//! | VOTE_ALL | `ICMP_OR.u32.eq.m1 WMASK(src.c), A` | 2 (+1 for A) |
//! | READ_FIRST | `CLPER.i32.subgroup4 src.c, f.b00`, `f = CLZ(BITREV(A))` | 1 (+3 for A, f) |
//! | READ_INVOC | `CLPER.i32.subgroup4 src.c, src1.x.b00` | 1 |
//! | VOTE_EQ | READ_FIRST, `ICMP_OR.u32.eq.m1 src.c, first`, then VOTE_ALL of that | 4 (+3) |
//!
//! A, f are computed once per instruction (CSE never merges cross-lane instructions: their
//! results depend on the lanes active where they run).
//!
//! Semantics shared with the interpreter: VOTE_*, READ_FIRST and READ_INVOC are component-wise
//! (channel c reads `src.c`); a value is "set" when its 32 bits are non-zero; VOTE_EQ compares
//! bit patterns; BALLOT reads `src.x` and writes the 64-bit lane mask (bit i = quad lane i) to
//! the pairs xy and zw. READ_INVOC reads the lane `src1.x` of the quad; an inactive lane or an
//! index ≥ 4 gives an unconstrained value (the hardware returns 0 for an inactive lane and uses
//! the index modulo 4).

use super::Ctx;
use super::int::source;
use super::operand::{Kind, write};
use crate::ir::builder::LANE_B00;
use crate::ir::{Src, Value};
use crate::tgsi::ast::Instruction;
use crate::tgsi::opcodes::Opcode;
use crate::valhall::Instr;
use crate::valhall::Opcode as V;
use crate::valhall::tables::{Condition, ResultType, SubgroupSize};

/// Lowers `inst` if it is a subgroup opcode; returns whether it did.
pub fn lower(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) -> bool {
    match opcode {
        Opcode::Ballot => ballot(ctx, inst),
        Opcode::VoteAny | Opcode::VoteAll | Opcode::VoteEq | Opcode::ReadFirst | Opcode::ReadInvoc => {
            componentwise(ctx, inst, opcode)
        }
        _ => return false,
    }
    true
}

/// `WMASK.subgroup4 x`: bit i set when quad lane i is active and its `x` is non-zero.
fn wmask(ctx: &mut Ctx, x: Src) -> Value {
    let mut mach = Instr::new(V::WMASK);
    let _ = mach.set("subgroup_size", SubgroupSize::Subgroup4);
    ctx.builder().alu(mach, &[x])
}

/// `CLPER.i32.subgroup4 value, lane.b00`: `value` in quad lane `lane` (0 when it is inactive).
fn read_lane(ctx: &mut Ctx, value: Src, lane: Src) -> Value {
    let value = super::operand::to_value(ctx, value);
    let mut mach = Instr::new(V::CLPER_I32);
    let _ = mach.set("subgroup_size", SubgroupSize::Subgroup4);
    ctx.builder().alu(mach, &[Src::new(value), lane.widen(LANE_B00)])
}

fn ballot(ctx: &mut Ctx, inst: &Instruction) {
    let x = source(ctx, inst, Opcode::Ballot, 0, 0);
    let mask = wmask(ctx, x);
    let zero = ctx.builder().konst(0);
    write(ctx, inst, 0, [Some(mask), Some(zero), Some(mask), Some(zero)], Kind::Int);
}

/// The per-instruction lane facts: the active mask and the first active lane.
#[derive(Default)]
struct Lanes {
    active: Option<Value>,
    first: Option<Value>,
}

impl Lanes {
    fn active(&mut self, ctx: &mut Ctx) -> Value {
        *self.active.get_or_insert_with(|| wmask(ctx, Src::konst(u32::MAX)))
    }

    fn first(&mut self, ctx: &mut Ctx) -> Value {
        if let Some(f) = self.first {
            return f;
        }
        let active = self.active(ctx);
        let reversed = ctx.builder().op(V::BITREV_I32, &[Src::new(active)]);
        let f = ctx.builder().op(V::CLZ_U32, &[Src::new(reversed)]);
        self.first = Some(f);
        f
    }
}

fn componentwise(ctx: &mut Ctx, inst: &Instruction, opcode: Opcode) {
    let mut lanes = Lanes::default();
    let invocation = (opcode == Opcode::ReadInvoc).then(|| source(ctx, inst, opcode, 1, 0));
    let mut out = [None; 4];
    for c in inst.dst[0].write_mask.components() {
        let x = source(ctx, inst, opcode, 0, c.index());
        let v = match opcode {
            Opcode::VoteAny => {
                let m = wmask(ctx, x);
                ctx.builder().icmp(false, Condition::Ne, m, Src::konst(0), ResultType::M1)
            }
            Opcode::VoteAll => {
                let m = wmask(ctx, x);
                let active = lanes.active(ctx);
                ctx.builder().icmp(false, Condition::Eq, m, Src::new(active), ResultType::M1)
            }
            Opcode::VoteEq => {
                let first = lanes.first(ctx);
                let value = read_lane(ctx, x, Src::new(first));
                let x = super::operand::to_value(ctx, x);
                let same = ctx.builder().icmp(false, Condition::Eq, x, Src::new(value), ResultType::M1);
                let m = wmask(ctx, Src::new(same));
                let active = lanes.active(ctx);
                ctx.builder().icmp(false, Condition::Eq, m, Src::new(active), ResultType::M1)
            }
            Opcode::ReadFirst => {
                let first = lanes.first(ctx);
                read_lane(ctx, x, Src::new(first))
            }
            _ => read_lane(ctx, x, invocation.unwrap_or(Src::konst(0))),
        };
        out[c.index()] = Some(v);
    }
    write(ctx, inst, 0, out, Kind::Int);
}
