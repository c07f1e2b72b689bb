//! Legalisation: after it, every machine instruction can be encoded once registers are
//! assigned (the back end's input contract, docs/backend.md).
//!
//! 1. Additions of a constant that is not in the immediate table become `IADD_IMM.i32` /
//!    `FADD_IMM.f32` (Mesa's `va_optimize`): the constant rides in the instruction.
//! 2. Every constant source is encoded through the immediate table ([`imm::encode`]); a constant
//!    that cannot be is materialised with a `copy` right before its user (CSE merges repeats).
//!    Re-encoding folds the source's selections and negation into the 32-bit value it reads
//!    (narrow selects of signed operations sign-extend), which is exact only for 32-bit, 64-bit
//!    and byte-lane sources; a source of 16-bit lanes (`U16_TO_F32 #c.h11`, `F16_TO_F32 #c.h0`)
//!    keeps every modifier field and reads the raw constant, from the table if it is an entry,
//!    else from a register.
//! 3. The FAU limits of the hardware (one FAU page, at most two distinct 32-bit words counting
//!    table constants, one 64-bit uniform slot, one special value, no uniform-plus-special in
//!    ALU instructions, no page-1/page-3 special with a table constant) are enforced by moving
//!    operands into registers: one operand when one move is enough (of those, the one read most
//!    often by the instructions around it, so that the CSE after legalisation merges its
//!    copies), else the last FAU source first.

pub mod imm;

use crate::ir::builder::Builder;
use crate::ir::{Block, Inst, InstId, InstKind, Operand, Shader, Src, Value};
use crate::valhall::tables::{INSTRUCTION_COUNT, MAX_SOURCES, SrcInfo, WidenKind};
use crate::valhall::{Base, Instr, Opcode};
use smallvec::SmallVec;
use std::sync::OnceLock;

/// Legalises every machine instruction of the shader. A block's instruction list stays in
/// place until an instruction needs an operand materialised; from there on the list is rebuilt
/// in one pass, materialised operands right before their reader.
///
/// Legalisation removes no use of any value and every instruction it adds is read; a CSE merge
/// afterwards keeps the operands of the instruction it removes read by the one it keeps. So
/// after legalisation and CSE, DCE finds work only if it would have found some before
/// legalisation (the optimiser leaves none, nor does the IDVS split, which ends with DCE).
#[inline(never)] // A symbol of its own in profiles.
pub fn run(shader: &mut Shader) {
    for b in 0..shader.blocks.len() {
        let block = Block(b as u32);
        let n = shader.blocks[b].insts.len();
        // In place: the steps append what they materialise to the end of the list.
        let mut done = 0;
        while done < n && shader.blocks[b].insts.len() == n {
            let id = shader.blocks[b].insts[done];
            if let Some(summary) = work_of(shader.inst(id)) {
                legalize(shader, block, id, summary, Around::InPlace { at: done, end: n });
            }
            done += 1;
        }
        if shader.blocks[b].insts.len() == n {
            continue;
        }
        // Instruction `done - 1` got operands materialised (now at `n..`): move them before it,
        // then legalise the rest in a rebuilt list.
        let old = std::mem::take(&mut shader.blocks[b].insts);
        let list = &mut shader.blocks[b].insts;
        list.reserve(old.len() + (n - done) / 2 + 4);
        list.extend_from_slice(&old[..done - 1]);
        list.extend_from_slice(&old[n..]);
        list.push(old[done - 1]);
        for (i, &id) in old.iter().enumerate().take(n).skip(done) {
            if let Some(summary) = work_of(shader.inst(id)) {
                legalize(shader, block, id, summary, Around::Rebuilt { after: &old[i + 1..n] });
            }
            shader.blocks[b].insts.push(id);
        }
    }
}

/// How many instructions before and after one that breaks an FAU rule are searched for other
/// readers of the operand it could move (see [`source_to_move`]).
const NEARBY: usize = 4;

/// Where the instruction being legalised is in its block's list.
#[derive(Clone, Copy)]
enum Around<'a> {
    /// At `at` in the list, which is unchanged up to `end`.
    InPlace { at: usize, end: usize },
    /// The list is being rebuilt: it holds what came before (with the copies materialised for
    /// it); `after` is what comes next.
    Rebuilt { after: &'a [InstId] },
}

impl Around<'_> {
    /// Up to [`NEARBY`] instructions before and after, the copies materialised so far included.
    fn nearby(self, shader: &Shader, block: Block) -> SmallVec<[InstId; 2 * NEARBY]> {
        let list = &shader.blocks[block.index()].insts;
        let (before, after) = match self {
            Around::InPlace { at, end } => (&list[..at], &list[at + 1..end]),
            Around::Rebuilt { after } => (&list[..], after),
        };
        let before = &before[before.len().saturating_sub(NEARBY)..];
        before.iter().chain(&after[..after.len().min(NEARBY)]).copied().collect()
    }
}

/// What [`legalize`] has to do for an instruction (`None`: nothing), from one walk over its used
/// sources: most instructions read registers and table entries only and skip the call.
#[inline(always)]
fn work_of(inst: &Inst) -> Option<Summary> {
    if inst.dead || !inst.is_machine() {
        return None;
    }
    let facts = op_facts(inst.mach.opcode);
    let summary = Summary::of(&inst.srcs[..usize::from(facts.n_srcs)], facts);
    // Without step 1 or 2 work, every constant is an entry that `imm::encode` keeps as it is,
    // so `fuse_immediate_add` and `encode_constants` would change nothing; steps 1 and 2 only
    // turn constants into other entries or registers, so an instruction with at most one FAU
    // operand before them has at most one after them.
    (summary.rewrite != 0 || !summary.within_limits()).then_some(summary)
}

/// Legalises one instruction (`summary` is its [`work_of`]); operands it materialises are
/// appended to `block`'s list.
#[inline(never)]
fn legalize(shader: &mut Shader, block: Block, id: InstId, summary: Summary, around: Around) {
    if summary.rewrite != 0 {
        // A fused instruction has other sources: all of them are looked at again.
        let rewrite = if fuse_immediate_add(shader, id) { u8::MAX } else { summary.rewrite };
        encode_constants(shader, block, id, rewrite);
    }
    if !summary.within_limits() {
        enforce_fau_limits(shader, block, id, around);
    }
}

/// What legalisation needs to know about an opcode (computed once per opcode).
#[derive(Clone, Copy, Debug, Default)]
struct OpFacts {
    n_srcs: u8,
    /// Per source: whether it has byte lanes, and the swizzle and widen fields with which a
    /// table entry reads its own value ([`Summary::of`]).
    lanes: [bool; MAX_SOURCES],
    identity: [(u8, u8); MAX_SOURCES],
    /// Per source: 64 bits wide.
    wide: [bool; MAX_SOURCES],
}

fn op_facts(op: Opcode) -> &'static OpFacts {
    // Built on first use of each opcode: a program uses a few dozen of them, and building all
    // of them up front would cost a one-shot compile of a small shader more than legalising it.
    static TABLE: [OnceLock<OpFacts>; INSTRUCTION_COUNT] = [const { OnceLock::new() }; INSTRUCTION_COUNT];
    TABLE[op as usize].get_or_init(|| {
        let info = op.info();
        let mut facts = OpFacts { n_srcs: info.srcs.len() as u8, ..OpFacts::default() };
        for (k, s) in info.srcs.iter().enumerate() {
            facts.lanes[k] = s.widen_kind == WidenKind::Lanes;
            facts.identity[k] = (s.default_swizzle(), s.default_widen());
            facts.wide[k] = s.size == 64;
        }
        facts
    })
}

/// One walk over an instruction's used sources.
#[derive(Clone, Copy, Debug, Default)]
struct Summary {
    /// Sources steps 1 and 2 may rewrite (bit k for source k): constants other than an entry
    /// read through the identity fields without `neg`/`abs` (which `imm::encode` keeps as they
    /// are: it tries the exact entry first), and byte-lane sources left at the reserved 0.
    rewrite: u8,
    /// Sources reading the FAU (constants, uniforms, specials).
    fau: u8,
    /// A special, or a 64-bit uniform pair at an odd word, is read.
    special_or_odd_pair: bool,
}

impl Summary {
    #[inline(always)]
    fn of(srcs: &[Src], facts: &OpFacts) -> Summary {
        let mut summary = Summary::default();
        for (k, src) in srcs.iter().enumerate() {
            let bit = 1 << k;
            match src.operand {
                Operand::Const(c) => {
                    summary.fau += 1;
                    let kept = !facts.lanes[k]
                        && (src.swizzle, src.widen) == facts.identity[k]
                        && !src.neg
                        && !src.abs
                        && imm::is_entry(c);
                    if !kept {
                        summary.rewrite |= bit;
                    }
                    continue;
                }
                Operand::Uniform(u) => {
                    summary.fau += 1;
                    summary.special_or_odd_pair |= facts.wide[k] && u % 2 == 1;
                }
                Operand::Special(_) => {
                    summary.fau += 1;
                    summary.special_or_odd_pair = true;
                }
                _ => {}
            }
            if facts.lanes[k] && src.widen == 0 {
                summary.rewrite |= bit;
            }
        }
        summary
    }

    /// No FAU limit can fail: at most one FAU operand, neither a special nor a misaligned pair
    /// (what [`enforce_fau_limits`] would find without probing).
    fn within_limits(&self) -> bool {
        self.fau <= 1 && !self.special_or_odd_pair
    }
}

/// The 32-bit value a constant source reads once its modifiers apply (for the sources of
/// [`folds_exactly`]); `signed` makes narrow selects sign-extend.
fn effective_value(src: &Src, info: &SrcInfo, signed: bool) -> u32 {
    let Operand::Const(mut c) = src.operand else { return 0 };
    // Narrow selects first (they pick part of the table word), then float neg/abs.
    if src.widen != 0
        && let Some(f) = info.widen
    {
        let index = src.widen;
        match (info.widen_kind, f.values.info().name(index)) {
            (WidenKind::Lanes, _) if (4..8).contains(&index) => c = (c >> (8 * (index - 4))) & 0xFF,
            (WidenKind::Widen, Some(name)) if info.size == 32 => {
                let (shift, bits) = match name {
                    "h0" => (0, 16),
                    "h1" => (16, 16),
                    "b0" => (0, 8),
                    "b1" => (8, 8),
                    "b2" => (16, 8),
                    "b3" => (24, 8),
                    _ => (0, 32),
                };
                if bits < 32 {
                    let narrow = (c >> shift) & ((1 << bits) - 1);
                    let sign = signed && narrow >> (bits - 1) == 1;
                    c = if sign { narrow | !((1 << bits) - 1) } else { narrow };
                }
            }
            _ => {}
        }
    }
    if info.size == 32 && info.float && info.swizzle.is_some() && src.swizzle != info.default_swizzle() {
        let half = if src.swizzle == 1 { c & 0xFFFF } else { c >> 16 };
        c = half::f16::from_bits(half as u16).to_f32().to_bits();
    }
    if src.abs {
        c &= 0x7FFF_FFFF;
    }
    if src.neg {
        c ^= 0x8000_0000;
    }
    c
}

/// Whether [`effective_value`] models what the source reads exactly, so that the constant may
/// be re-encoded with other modifier fields: 64-bit and byte-lane sources, and 32-bit sources
/// without a lane field whose selections are the 32-bit widens, the half-to-f32 swizzle of
/// float sources, or none. Sources of 16-bit (or 8-bit) lanes read the constant lane by lane
/// (`F16_TO_F32 #c.h0` reads the low half even with lane index 0) and negate each lane, which
/// re-encoding the 32-bit value would not preserve.
fn folds_exactly(src: &Src, info: &SrcInfo) -> bool {
    if info.size == 64 || info.widen_kind == WidenKind::Lanes {
        return true;
    }
    if info.size != 32 || info.lane.is_some() {
        return false;
    }
    let widen_ok = src.widen == info.default_widen() || info.widen_kind == WidenKind::Widen;
    let swizzle_ok = src.swizzle == info.default_swizzle() || (info.float && info.swizzle.is_some());
    widen_ok && swizzle_ok
}

/// `IADD x, #c` → `IADD_IMM.i32 x, #c` and `FADD x, #c` → `FADD_IMM.f32 x, #c` when `c` is not
/// in the table and nothing else (modifiers, saturation, clamp) is in the way. Returns whether
/// it fused.
fn fuse_immediate_add(shader: &mut Shader, id: InstId) -> bool {
    let op = shader.inst(id).mach.opcode;
    let (is_int, is_float) = (matches!(op, Opcode::IADD_S32 | Opcode::IADD_U32), op == Opcode::FADD_F32);
    if !is_int && !is_float {
        return false;
    }
    let inst = *shader.inst(id);
    if is_int && inst.mach.flag("saturate") == Some(true) {
        return false;
    }
    if is_float && inst.mach.clamp() != Some(crate::valhall::tables::Clamp::None) {
        return false;
    }
    let info = inst.mach.info();
    for (c, other) in [(1usize, 0usize), (0, 1)] {
        let (k, x) = (inst.srcs[c], inst.srcs[other]);
        let Operand::Const(value) = k.operand else { continue };
        if !k.is_plain() || !x.is_plain() || matches!(x.operand, Operand::Const(_)) {
            continue;
        }
        if imm::encode(value, &info.srcs[c], crate::emu::is_signed(inst.mach.opcode, &inst.mach.mods)).is_some() {
            return false;
        }
        let mut mach = Instr::new(if is_int { Opcode::IADD_IMM_I32 } else { Opcode::FADD_IMM_F32 });
        let _ = mach.set_imm("constant", i64::from(value));
        mach.flow = inst.mach.flow;
        let mut fused = Inst::machine(mach);
        fused.dests = inst.dests;
        fused.srcs[0] = x;
        *shader.inst_mut(id) = fused;
        return true;
    }
    false
}

/// Encodes the constant sources and fixes the byte-lane sources of bit set `rewrite` (the
/// others are kept as they are: [`Summary::rewrite`]).
fn encode_constants(shader: &mut Shader, block: Block, id: InstId, rewrite: u8) {
    // (Called only when `Summary` found a constant or byte-lane source to rewrite.)
    let inst = shader.inst(id);
    let info = inst.mach.info();
    let has_const = inst.srcs[..info.srcs.len()].iter().any(|s| matches!(s.operand, Operand::Const(_)));
    let signed = has_const && crate::emu::is_signed(inst.mach.opcode, &inst.mach.mods);
    let mut srcs = inst.srcs;
    // A byte-lane source (shift amounts, lane numbers) left at the reserved 0 reads its low
    // byte: the IR convention for a plain source.
    for (k, sinfo) in info.srcs.iter().enumerate() {
        if sinfo.widen_kind == WidenKind::Lanes && srcs[k].widen == 0 {
            srcs[k].widen = 4;
        }
    }
    let mut b = Builder::new(shader, block);
    for (k, sinfo) in info.srcs.iter().enumerate() {
        let src = srcs[k];
        let Operand::Const(raw) = src.operand else { continue };
        if rewrite >> k & 1 == 0 {
            // An entry read through the identity fields without `neg`/`abs`: what follows
            // would give it back unchanged.
            debug_assert!(
                !folds_exactly(&src, sinfo)
                    || imm::encode(effective_value(&src, sinfo, signed), sinfo, signed).is_some_and(|e| {
                        (Operand::Const(e.entry), e.neg, e.swizzle, e.widen)
                            == (src.operand, src.neg, src.swizzle, src.widen)
                    }),
                "a kept constant source would be re-encoded: {src:?}"
            );
            continue;
        }
        if !folds_exactly(&src, sinfo) {
            // Selections of 16-bit halves or lanes (and a negation at that granularity) read
            // the constant the same way from the table or from a register: keep every field.
            let operand = if imm::is_entry(raw) { Operand::Const(raw) } else { Operand::Value(b.konst(raw)) };
            srcs[k] = Src { operand, ..src };
            continue;
        }
        let value = effective_value(&src, sinfo, signed);
        if let Some(e) = imm::encode(value, sinfo, signed) {
            srcs[k] = Src {
                operand: Operand::Const(e.entry),
                neg: e.neg,
                abs: false,
                not: src.not,
                swizzle: e.swizzle,
                widen: e.widen,
                lane: src.lane,
            };
            continue;
        }
        srcs[k] = if sinfo.size == 64 {
            let lo = b.konst(value);
            let hi = b.konst(0);
            Src { operand: Operand::Pair(lo, hi), ..identity_source(sinfo, src) }
        } else {
            let v = b.konst(value);
            Src { operand: Operand::Value(v), ..identity_source(sinfo, src) }
        };
    }
    shader.inst_mut(id).srcs = srcs;
}

/// A register source reading the whole 32-bit value (or its low byte for lane sources), keeping
/// only the `not` flag and lane field of `src`.
fn identity_source(info: &SrcInfo, src: Src) -> Src {
    let widen = if info.widen_kind == WidenKind::Lanes { 4 } else { 0 };
    Src {
        operand: Operand::None,
        neg: false,
        abs: false,
        not: src.not,
        swizzle: info.default_swizzle(),
        widen,
        lane: src.lane,
    }
}

/// The machine instruction `inst` would become, its FAU operands kept and every other operand
/// (and source `in_register`, if given) read from some register: enough to check the FAU rules.
fn probe(inst: &Inst, in_register: Option<usize>) -> Instr {
    let info = inst.mach.info();
    let mut mach = inst.mach.instr();
    for (k, sinfo) in info.srcs.iter().enumerate() {
        let register = Base::Register(if sinfo.size == 64 { 2 * k as u8 } else { k as u8 });
        let base = match inst.srcs[k].operand {
            _ if in_register == Some(k) => register,
            Operand::Const(c) => {
                Base::Immediate(crate::valhall::tables::IMMEDIATES.iter().position(|e| e.0 == c).unwrap_or(0) as u8)
            }
            Operand::Uniform(u) => Base::Uniform(u),
            Operand::Special(s) => Base::Special(s),
            _ => register,
        };
        mach.srcs[k] = inst.srcs[k].to_machine(base);
    }
    mach
}

/// The FAU source of `inst` (which breaks an FAU rule) to move into a register: among the
/// sources whose move alone makes the instruction legal, the uniform word or constant read most
/// often by the instructions around it in its block (`nearby`, including the copies already
/// materialised) — the CSE after legalisation merges the copies of one operand, so one register
/// serves all its readers: a matrix times a uniform vector moves the vector's four words, not
/// its sixteen matrix words — the last of them on a tie; failing that, `last` (the last FAU
/// source). Looking a bounded distance around keeps the choice linear.
fn source_to_move(shader: &Shader, inst: &Inst, last: usize, nearby: &[InstId]) -> usize {
    let is_fau = |s: &Src| matches!(s.operand, Operand::Uniform(_) | Operand::Const(_) | Operand::Special(_));
    // Readers that can share a register holding the operand: copies already materialised, and
    // instructions reading two distinct FAU operands or more (one alone breaks no rule).
    let several = |i: &Inst| {
        let mut fau = i.sources().iter().filter(|s| is_fau(s)).map(|s| s.operand);
        fau.next().is_some_and(|first| fau.any(|o| o != first))
    };
    let sharers: SmallVec<[&Inst; 2 * NEARBY]> = nearby
        .iter()
        .map(|&id| shader.inst(id))
        .filter(|i| !i.dead && (i.kind == InstKind::Copy || several(i)))
        .collect();
    let mut candidates: SmallVec<[(usize, usize); MAX_SOURCES]> = SmallVec::new();
    for (k, src) in inst.sources().iter().enumerate() {
        if is_fau(src) {
            let reads = sharers.iter().map(|i| i.sources().iter().filter(|s| s.operand == src.operand).count()).sum();
            candidates.push((reads, k));
        }
    }
    // Most reads first, then the later source; the first whose move suffices is taken (the
    // hardware check is the expensive part).
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.iter().find(|&&(_, k)| !violates(&probe(inst, Some(k)))).map_or(last, |&(_, k)| k)
}

fn violates(mach: &Instr) -> bool {
    if mach.check_hardware_rules().is_err() {
        return true;
    }
    // Mesa's extra rule: a page-1/page-3 special never shares an instruction with a table
    // constant (table entries are read on page 0).
    let special_page = mach.sources().iter().find_map(|s| match s.base {
        Base::Special(sp) if sp.page != 0 => Some(sp.page),
        _ => None,
    });
    special_page.is_some() && mach.sources().iter().any(|s| matches!(s.base, Base::Immediate(_)))
}

fn enforce_fau_limits(shader: &mut Shader, block: Block, id: InstId, around: Around) {
    for _ in 0..4 {
        let inst = shader.inst(id);
        // The last FAU-reading source; without one there is nothing to move (and nothing to
        // check).
        let info = inst.mach.info();
        let mut last = None;
        // The distinct constant values and uniform words (at most two of each are kept), and
        // whether every uniform is in one 64-bit slot, evenly aligned when 64 bits are read.
        let (mut constants, mut distinct) = ([0u32; 2], 0);
        let (mut uniforms, mut distinct_uniforms) = ([0u8; 2], 0);
        let (mut slot, mut simple) = (None, true);
        for (k, src) in inst.sources().iter().enumerate() {
            match src.operand {
                Operand::Const(c) => {
                    last = Some(k);
                    if !constants[..distinct.min(2)].contains(&c) {
                        if distinct < 2 {
                            constants[distinct] = c;
                        }
                        distinct += 1;
                    }
                }
                Operand::Uniform(u) => {
                    last = Some(k);
                    simple &= slot.is_none_or(|s| s == u >> 1) && (info.srcs[k].size != 64 || u % 2 == 0);
                    slot = Some(u >> 1);
                    if !uniforms[..distinct_uniforms.min(2)].contains(&u) {
                        if distinct_uniforms < 2 {
                            uniforms[distinct_uniforms] = u;
                        }
                        distinct_uniforms += 1;
                    }
                }
                Operand::Special(_) => (last, simple) = (Some(k), false),
                _ => {}
            }
        }
        let Some(k) = last else {
            return;
        };
        // Table constants (entries once encoded) have no page, and uniforms of one 64-bit slot
        // share theirs: with no special and at most two distinct words, no rule can fail
        // (`Instr::check_hardware_rules`). This is the common case, so it skips the probe.
        if simple && distinct + distinct_uniforms <= 2 {
            debug_assert!(!violates(&probe(inst, None)), "{:?}", inst.mach.opcode);
            return;
        }
        if !violates(&probe(inst, None)) {
            return;
        }
        let k = source_to_move(shader, inst, k, &around.nearby(shader, block));
        let src = inst.srcs[k];
        let sinfo = &info.srcs[k];
        let mut b = Builder::new(shader, block);
        let operand = if sinfo.size == 64 {
            let (lo, hi): (Value, Value) = match src.operand {
                Operand::Uniform(u) => (b.copy(Operand::Uniform(u)), b.copy(Operand::Uniform(u + 1))),
                Operand::Special(s) => {
                    let high = crate::valhall::Special { high: true, ..s };
                    (b.copy(Operand::Special(s)), b.copy(Operand::Special(high)))
                }
                other => (b.copy(other), b.konst(0)),
            };
            Operand::Pair(lo, hi)
        } else {
            Operand::Value(b.copy(src.operand))
        };
        shader.inst_mut(id).srcs[k] = Src { operand, ..src };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::text::{parse, print};

    fn check(input: &str, expected: &str) {
        let mut s = parse(input).unwrap();
        run(&mut s);
        crate::ir::verify::verify(&s).unwrap();
        assert_eq!(print(&s), expected);
    }

    const HEAD: &str = "fragment shader\nblock0:\n    %0 = preload r60\n    %1 = preload r61\n";

    #[test]
    fn constants_use_the_table_or_fuse() {
        check(
            &format!(
                "{HEAD}    %2 = FADD.f32 %0, #0xBF800000\n    %3 = FMA.f32 %0, #0x40000000, #0x80000000\n    %4 = FADD.f32 %1, #0x12345678\n    %5 = IADD.s32 %1, #0x10\n    %6 = IADD.s32 %1, #0x10000\n    end\n"
            ),
            &format!(
                "{HEAD}    %2 = FADD.f32 %0, #0x3F800000.neg\n    %3 = FMA.f32 %0, #0x40000000, #0x0.neg\n    %4 = FADD_IMM.f32 %1, #0x12345678\n    %5 = IADD.s32 %1, #0x13121110.b0\n    %6 = IADD_IMM.i32 %1, #0x10000\n    end\n"
            ),
        );
    }

    #[test]
    fn unencodable_constants_are_materialised() {
        check(
            &format!("{HEAD}    %2 = CSEL.u32.eq %0, #0x5, %1, #0x12345678\n    end\n"),
            &format!(
                "{HEAD}    %3 = copy #0x5\n    %4 = copy #0x12345678\n    %2 = CSEL.u32.eq %0, %3, %1, %4\n    end\n"
            ),
        );
    }

    #[test]
    fn constants_read_through_16_bit_lanes_keep_their_selection() {
        // Neither 0x20001 nor 0x80000000 is an entry: a register holds the constant and each
        // reader keeps its half selection (a negated 0 would be -0 in the selected half).
        check(
            &format!(
                "{HEAD}    %2 = U16_TO_F32 #0x20001.h00\n    %3 = U16_TO_F32 #0x20001.h11\n    %4 = F16_TO_F32 #0x80000000.h0\n    end\n"
            ),
            &format!(
                "{HEAD}    %5 = copy #0x20001\n    %2 = U16_TO_F32 %5.h00\n    %6 = copy #0x20001\n    %3 = U16_TO_F32 %6.h11\n    %7 = copy #0x80000000\n    %4 = F16_TO_F32 %7.h0\n    end\n"
            ),
        );
        // A table entry stays in the table with its selection.
        check(
            &format!("{HEAD}    %2 = F16_TO_F32 #0x3C000000.h1\n    end\n"),
            &format!("{HEAD}    %2 = F16_TO_F32 #0x3C000000.h1\n    end\n"),
        );
    }

    #[test]
    fn narrow_selects_of_signed_operations_sign_extend() {
        // 0xFFFF as a signed half is -1 (an entry); unsigned it is 65535 (the low half of one).
        check(
            &format!("{HEAD}    %2 = IADD.s32 %1, #0x1234FFFF.h0\n    %3 = IADD.u32 %1, #0x1234FFFF.h0\n    end\n"),
            &format!("{HEAD}    %2 = IADD.s32 %1, #0xFFFFFFFF\n    %3 = IADD.u32 %1, #0xFFFFFFFF.h0\n    end\n"),
        );
    }

    /// Every sample, after lowering and optimisation (DCE has nothing left to do, as the
    /// optimiser's fixed point promises), then legalisation and CSE: DCE finds nothing, and no
    /// φ is trivial (CSE merging a φ's arguments into one value would leave a φ that only
    /// `copy_prop`, which does not run again, removes: a move the allocator would then place).
    #[test]
    fn no_dead_code_nor_trivial_phi_after_legalisation_and_cse() {
        let files = crate::test_support::sample_files();
        let mut checked = 0;
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let Ok(program) = crate::tgsi::parse(&text) else { continue };
            let Ok(lowered) = crate::lower::lower(&program, &crate::lower::Options::default()) else { continue };
            let mut shader = lowered.shader;
            crate::opt::optimize(&mut shader, &crate::opt::Options::default());
            let mut settled = shader.clone();
            assert!(!crate::opt::dce::run(&mut settled), "{}: DCE after the optimiser", f.display());
            run(&mut shader);
            crate::opt::cse::run(&mut shader);
            assert!(!crate::opt::dce::run(&mut shader), "{}: DCE found work", f.display());
            for block in &shader.blocks {
                for &id in &block.insts {
                    let inst = shader.inst(id);
                    if inst.dead || !matches!(inst.kind, InstKind::Phi) {
                        continue;
                    }
                    let dest = shader.get(inst.dests)[0];
                    let mut others: Vec<Value> = shader.get(inst.args).iter().copied().filter(|&a| a != dest).collect();
                    others.sort_unstable_by_key(|v| v.index());
                    others.dedup();
                    assert!(others.len() > 1, "{}: a trivial φ after CSE: {id:?}", f.display());
                }
            }
            checked += 1;
        }
        assert!(checked > 50);
    }

    #[test]
    fn fau_limits_move_operands_to_registers() {
        // Two uniform slots and three words: moving one uniform is enough (moving the constant
        // first, as the last FAU source, would have needed a second move).
        check(
            &format!("{HEAD}    %2 = FMA.f32 u0, u4, #0x3F800000\n    end\n"),
            &format!("{HEAD}    %3 = copy u4\n    %2 = FMA.f32 u0, %3, #0x3F800000\n    end\n"),
        );
        // Of two single moves, the uniform word read more often goes to a register (the CSE
        // after legalisation merges its copies); with equal counts, the last source.
        check(
            &format!("{HEAD}    %2 = FADD.f32 u0, u4\n    %3 = FADD.f32 u0, u6\n    end\n"),
            &format!(
                "{HEAD}    %4 = copy u0\n    %2 = FADD.f32 %4, u4\n    %5 = copy u0\n    %3 = FADD.f32 %5, u6\n    end\n"
            ),
        );
        check(
            &format!("{HEAD}    %2 = FADD.f32 u0, u4\n    end\n"),
            &format!("{HEAD}    %3 = copy u4\n    %2 = FADD.f32 u0, %3\n    end\n"),
        );
        // One 64-bit slot, two words: fine.
        let ok = format!("{HEAD}    %2 = FADD.f32 u0, u1\n    end\n");
        check(&ok, &ok);
    }
}
