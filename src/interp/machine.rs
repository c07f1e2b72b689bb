//! The executing machine: registers, per-lane masks, structured control flow, operand fetch
//! and store, and the dispatch of every instruction.
//!
//! Control flow keeps a stack of frames (IF, loop, SWITCH, subroutine call). The execution
//! mask of the quad is recomputed from the frames at every control-flow instruction:
//! `exec = ¬killed ∧ ¬ended ∧ ⋀ frame masks`. When no lane is active the machine jumps
//! straight to the next instruction of the innermost frame that can reactivate lanes (its
//! ELSE, ENDIF, loop end, next CASE, ENDSUB), so inactive code costs nothing and every
//! executed instruction costs time linear in the program size at most.

use super::alu::{self, Kind};
use super::program::Prepared;
use super::value::{self as v, Val};
use super::{Accuracy, InterpError, Options, Run};
use crate::diag::Span;
use crate::exec::LANES;
use crate::exec::io::{Inputs, Outputs, RegKey};
use crate::tgsi::ast::*;
use crate::tgsi::opcodes::{FlowRole, Opcode, OperandType};
use std::collections::{BTreeMap, HashMap};

/// A register's value in every lane.
pub type Reg = [[Val; 4]; LANES];

/// Bytes of shared memory (`MEMORY, SHARED`) the model provides.
pub const SHARED_BYTES: usize = 64 * 1024;

const ALL: u8 = 0xf;

#[derive(Clone, Debug)]
enum Frame {
    If { at: usize, then_mask: u8, else_mask: u8, in_else: bool },
    Loop { begin: usize, end: usize, entry: u8, brk: u8, cont: u8, counter: Counter },
    Switch { at: usize, entry: u8, brk: u8, running: u8, matches: Vec<u8> },
    Call { entry: u8, ret: u8, return_to: usize, end: usize },
}

#[derive(Clone, Debug)]
enum Counter {
    None,
    /// REP: iterations left per lane.
    Rep([i64; LANES]),
    /// BGNFOR: the LOOP register that counts.
    For(Register),
}

impl Frame {
    fn mask(&self) -> u8 {
        match self {
            Frame::If { then_mask, else_mask, in_else, .. } => {
                if *in_else {
                    *else_mask
                } else {
                    *then_mask
                }
            }
            Frame::Loop { entry, brk, cont, .. } => entry & !brk & !cont,
            Frame::Switch { entry, brk, running, .. } => entry & !brk & running,
            Frame::Call { entry, ret, .. } => entry & !ret,
        }
    }
}

pub struct Machine<'p, 'a> {
    pub p: &'p Prepared<'a>,
    pub inputs: &'p Inputs,
    options: Options,
    pub regs: HashMap<(File, u32), Vec<Reg>>,
    frames: Vec<Frame>,
    pub exec: u8,
    pub killed: u8,
    pub demoted: u8,
    ended: u8,
    /// Lanes whose results can no longer be trusted (see [`Run::uncertain_lanes`]).
    pub tainted: u8,
    pub buffers: BTreeMap<u32, Vec<Val>>,
    pub shared: Vec<Val>,
    pub images: BTreeMap<u32, super::mem::ImageState>,
    steps: u64,
    pc: usize,
    /// The instruction being executed.
    pub cur: usize,
}

impl<'p, 'a> Machine<'p, 'a> {
    pub fn new(p: &'p Prepared<'a>, inputs: &'p Inputs, options: &Options) -> Result<Machine<'p, 'a>, InterpError> {
        let mut regs: HashMap<(File, u32), Vec<Reg>> = HashMap::new();
        for (&(file, dim), &size) in &p.sizes {
            let from_inputs =
                matches!(file, File::Input | File::SystemValue | File::Const | File::Temp | File::LegacyTempArray);
            let mut storage = Vec::with_capacity(size as usize);
            for index in 0..size {
                let reg: Reg = match file {
                    File::Immediate => {
                        let w = p.immediates.get(index as usize).copied().unwrap_or([0; 4]);
                        [w.map(Val::exact); LANES]
                    }
                    File::LegacyImmediateArray => {
                        let w = p.immediate_arrays.get(&index).copied().unwrap_or([0; 4]);
                        [w.map(Val::exact); LANES]
                    }
                    _ if from_inputs => {
                        let key = if file == File::Const {
                            RegKey::with_dimension(file, dim, index)
                        } else {
                            RegKey { file, dimension: None, index }
                        };
                        match inputs.registers.get(&key) {
                            Some(lanes) => lanes.map(|l| l.map(Val::exact)),
                            // Inputs, system values and constants not given are zero; TEMP
                            // registers never written are undefined.
                            None if matches!(file, File::Temp | File::LegacyTempArray) => [[Val::unknown(0); 4]; LANES],
                            None => [[Val::ZERO; 4]; LANES],
                        }
                    }
                    // Outputs, ADDR, LOOP and PRED registers start undefined.
                    _ => [[Val::unknown(0); 4]; LANES],
                };
                storage.push(reg);
            }
            regs.insert((file, dim), storage);
        }
        let mut buffers = BTreeMap::new();
        for &b in &p.buffers {
            let words = inputs.buffers.get(&b).map(|w| w.iter().copied().map(Val::exact).collect()).unwrap_or_default();
            buffers.insert(b, words);
        }
        Ok(Machine {
            p,
            inputs,
            options: *options,
            regs,
            frames: Vec::new(),
            exec: ALL,
            killed: 0,
            demoted: 0,
            ended: 0,
            tainted: 0,
            buffers,
            shared: vec![Val::unknown(0); SHARED_BYTES / 4],
            images: super::mem::images(p, inputs)?,
            steps: 0,
            pc: 0,
            cur: 0,
        })
    }

    pub fn inst(&self) -> &'a Instruction {
        self.p.insts[self.cur]
    }

    pub fn op_span(&self) -> Span {
        self.inst().opcode_span
    }

    pub fn lanes(mask: u8) -> impl Iterator<Item = usize> {
        (0..LANES).filter(move |l| mask & (1 << l) != 0)
    }

    fn recompute(&mut self) {
        let mut m = ALL & !self.killed & !self.ended;
        for f in &self.frames {
            m &= f.mask();
        }
        self.exec = m;
    }

    /// Where execution resumes when no lane is active: the next instruction of the innermost
    /// frame that can make lanes active again.
    fn resume_point(&self) -> Option<usize> {
        Some(match self.frames.last()? {
            Frame::If { at, in_else, .. } => {
                if *in_else {
                    self.p.links[*at].end
                } else {
                    self.p.links[*at].target
                }
            }
            Frame::Loop { end, .. } => *end,
            Frame::Switch { at, .. } => {
                let links = &self.p.links[*at];
                links.cases.iter().copied().find(|&c| c >= self.pc).unwrap_or(links.target)
            }
            Frame::Call { end, .. } => *end,
        })
    }

    pub fn run(mut self) -> Result<Run, InterpError> {
        let n = self.p.insts.len();
        loop {
            if self.exec == 0 {
                match self.resume_point() {
                    Some(at) => self.pc = self.pc.max(at),
                    None => break,
                }
            }
            if self.pc >= n {
                break;
            }
            self.steps += 1;
            if self.steps > self.options.step_limit {
                return Err(InterpError::StepLimit {
                    steps: self.options.step_limit,
                    span: self.p.insts[self.pc].span,
                });
            }
            self.cur = self.pc;
            self.pc += 1;
            let certain = self.tainted == 0;
            self.step()?;
            if certain && self.tainted != 0 {
                self.uncertain_writes();
            }
        }
        if self.tainted != 0 {
            self.uncertain_writes();
        }
        Ok(self.finish())
    }

    fn innermost_breakable(&mut self) -> Option<&mut Frame> {
        self.frames
            .iter_mut()
            .rev()
            .take_while(|f| !matches!(f, Frame::Call { .. }))
            .find(|f| matches!(f, Frame::Loop { .. } | Frame::Switch { .. }))
    }

    fn innermost_loop(&mut self) -> Option<&mut Frame> {
        self.frames
            .iter_mut()
            .rev()
            .take_while(|f| !matches!(f, Frame::Call { .. }))
            .find(|f| matches!(f, Frame::Loop { .. }))
    }

    fn brk(&mut self, lanes: u8) {
        match self.innermost_breakable() {
            Some(Frame::Loop { brk, .. }) | Some(Frame::Switch { brk, .. }) => *brk |= lanes,
            _ => {}
        }
        self.recompute();
    }

    /// Executes the instruction at `self.cur`.
    fn step(&mut self) -> Result<(), InterpError> {
        let inst = self.inst();
        let op = inst.opcode.canonical();
        let links = &self.p.links[self.cur];
        match op {
            Opcode::If | Opcode::Uif => {
                let cond = self.condition(0, op == Opcode::Uif)?;
                let entry = self.exec;
                self.frames.push(Frame::If {
                    at: self.cur,
                    then_mask: entry & cond,
                    else_mask: entry & !cond,
                    in_else: false,
                });
                self.recompute();
            }
            Opcode::Else => {
                if let Some(Frame::If { in_else, .. }) = self.frames.last_mut() {
                    *in_else = true;
                }
                self.recompute();
            }
            Opcode::Endif => {
                if matches!(self.frames.last(), Some(Frame::If { .. })) {
                    self.frames.pop();
                }
                self.recompute();
            }
            Opcode::Bgnloop | Opcode::Rep | Opcode::Bgnfor => {
                let end = links.target;
                let entry = self.exec;
                let mut counter = Counter::None;
                let mut skip = 0u8;
                if op == Opcode::Rep {
                    let src = self.src(0)?;
                    let mut left = [0i64; LANES];
                    for l in Self::lanes(entry) {
                        let c = src[l][0];
                        left[l] = v::f2i(c.float()) as i32 as i64;
                        let c = v::stepwise(c, v::f2i);
                        if !c.is_exact() {
                            self.tainted |= 1 << l;
                        }
                        if left[l] <= 0 {
                            skip |= 1 << l;
                        }
                    }
                    counter = Counter::Rep(left);
                } else if op == Opcode::Bgnfor {
                    let src = self.src(0)?;
                    for l in Self::lanes(entry) {
                        let vals: [Val; 4] = std::array::from_fn(|c| {
                            let x = src[l][c];
                            v::stepwise(x, |f| v::f2i(f.floor()))
                        });
                        for c in 0..3 {
                            self.write(0, l, c, vals[c], Kind::Int)?;
                        }
                        if vals[1].int() <= 0 {
                            skip |= 1 << l;
                        }
                    }
                    counter = Counter::For(inst.dst[0].register);
                }
                self.frames.push(Frame::Loop { begin: self.cur, end, entry, brk: skip, cont: 0, counter });
                self.recompute();
            }
            Opcode::Endloop | Opcode::Endfor => self.loop_end()?,
            Opcode::Brk => {
                let lanes = self.exec;
                self.brk(lanes);
            }
            Opcode::Breakc => {
                let cond = self.condition(0, true)?;
                self.brk(self.exec & cond);
            }
            Opcode::Cont => {
                let lanes = self.exec;
                if let Some(Frame::Loop { cont, .. }) = self.innermost_loop() {
                    *cont |= lanes;
                }
                self.recompute();
            }
            Opcode::Switch => {
                let sel = self.src(0)?;
                let entry = self.exec;
                let cases = links.cases.clone();
                let mut matches = Vec::with_capacity(cases.len());
                let mut any = 0u8;
                for &c in &cases {
                    let case = self.p.insts[c];
                    if case.opcode.info().flow == Some(FlowRole::Default) {
                        matches.push(0);
                        continue;
                    }
                    let value = self.src_of(case, 0)?;
                    let mut m = 0u8;
                    for l in Self::lanes(entry) {
                        if sel[l][0].bits == value[l][0].bits {
                            m |= 1 << l;
                        }
                        if !sel[l][0].is_exact() || !value[l][0].is_exact() {
                            self.tainted |= 1 << l;
                        }
                    }
                    any |= m;
                    matches.push(m);
                }
                for (k, &c) in cases.iter().enumerate() {
                    if self.p.insts[c].opcode.info().flow == Some(FlowRole::Default) {
                        matches[k] = entry & !any;
                    }
                }
                self.frames.push(Frame::Switch { at: self.cur, entry, brk: 0, running: 0, matches });
                self.recompute();
            }
            Opcode::Case | Opcode::Default => {
                let cur = self.cur;
                if let Some(Frame::Switch { at, running, matches, .. }) = self.frames.last_mut()
                    && let Some(k) = self.p.links[*at].cases.iter().position(|&c| c == cur)
                {
                    *running |= matches[k];
                }
                self.recompute();
            }
            Opcode::Endswitch => {
                if matches!(self.frames.last(), Some(Frame::Switch { .. })) {
                    self.frames.pop();
                }
                self.recompute();
            }
            Opcode::Cal => {
                if self.frames.iter().filter(|f| matches!(f, Frame::Call { .. })).count()
                    >= self.options.call_depth_limit
                {
                    return Err(InterpError::runtime(
                        self.op_span(),
                        format!("subroutine calls nest deeper than {}", self.options.call_depth_limit),
                    ));
                }
                let sub = links.target;
                let end = self.p.links[sub].target;
                self.frames.push(Frame::Call { entry: self.exec, ret: 0, return_to: self.cur + 1, end });
                self.pc = sub + 1;
                self.recompute();
            }
            Opcode::Ret => {
                let lanes = self.exec;
                match self.frames.iter_mut().rev().find(|f| matches!(f, Frame::Call { .. })) {
                    Some(Frame::Call { ret, .. }) => *ret |= lanes,
                    _ => self.ended |= lanes,
                }
                self.recompute();
            }
            Opcode::Bgnsub => {
                // Reached by falling through: subroutine bodies only run through CAL.
                self.pc = links.target + 1;
            }
            Opcode::Endsub => {
                // Leave the subroutine: drop frames opened inside it (a RET inside a loop).
                while let Some(f) = self.frames.pop() {
                    if let Frame::Call { return_to, .. } = f {
                        self.pc = return_to;
                        break;
                    }
                }
                self.recompute();
            }
            Opcode::End => {
                self.ended |= self.exec;
                self.recompute();
            }
            Opcode::Kill => {
                self.killed |= self.exec;
                self.recompute();
            }
            Opcode::KillIf => {
                let s = self.src(0)?;
                let mut kill = 0u8;
                for l in Self::lanes(self.exec) {
                    let mut robust = true;
                    let mut k = false;
                    for c in 0..4 {
                        let (lt, r) = v::compare(s[l][c], Val::f(0.0), |a, b| a < b);
                        k |= lt;
                        robust &= r;
                    }
                    if !robust {
                        self.tainted |= 1 << l;
                    }
                    if k {
                        kill |= 1 << l;
                    }
                }
                self.killed |= kill;
                self.recompute();
            }
            Opcode::Demote => self.demoted |= self.exec,
            Opcode::Nop | Opcode::Barrier | Opcode::Membar => {}
            Opcode::Unk67
            | Opcode::Unk81
            | Opcode::Unk82
            | Opcode::Unk93
            | Opcode::Unk113
            | Opcode::Unk114
            | Opcode::Unk115
            | Opcode::Unk165
            | Opcode::Unk212 => {}
            _ => self.operation(op)?,
        }
        Ok(())
    }

    fn loop_end(&mut self) -> Result<(), InterpError> {
        let Some(Frame::Loop { begin, counter, .. }) = self.frames.last().cloned() else {
            return Ok(());
        };
        // Counted loops: update the counters of the lanes that reached the end.
        let mut stop = 0u8;
        match counter {
            Counter::None => {}
            Counter::Rep(mut left) => {
                for l in Self::lanes(self.exec) {
                    left[l] -= 1;
                    if left[l] <= 0 {
                        stop |= 1 << l;
                    }
                }
                if let Some(Frame::Loop { counter, .. }) = self.frames.last_mut() {
                    *counter = Counter::Rep(left);
                }
            }
            Counter::For(reg) => {
                for l in Self::lanes(self.exec) {
                    let x = self.read_reg(&reg, l, 0)?;
                    let y = self.read_reg(&reg, l, 1)?;
                    let z = self.read_reg(&reg, l, 2)?;
                    let nx = Val::derived(x.int().wrapping_add(z.int()) as u32, &[x, z]);
                    let ny = Val::derived(y.int().wrapping_sub(1) as u32, &[y]);
                    self.write_reg(&reg, l, 0, nx)?;
                    self.write_reg(&reg, l, 1, ny)?;
                    if ny.int() <= 0 {
                        stop |= 1 << l;
                    }
                }
            }
        }
        if let Some(Frame::Loop { brk, cont, .. }) = self.frames.last_mut() {
            *brk |= stop;
            *cont = 0;
        }
        self.recompute();
        if self.exec == 0 {
            self.frames.pop();
            self.recompute();
        } else {
            self.pc = begin + 1;
        }
        Ok(())
    }

    /// The lanes (among the active ones) where source `i`'s x component is true: a float
    /// `!= 0.0` or, for `integer`, bits `!= 0`. Lanes where an approximation could change the
    /// outcome are tainted.
    fn condition(&mut self, i: usize, integer: bool) -> Result<u8, InterpError> {
        let s = self.src(i)?;
        let mut m = 0u8;
        for l in Self::lanes(self.exec) {
            let x = s[l][0];
            let t = if integer {
                if !x.is_exact() {
                    self.tainted |= 1 << l;
                }
                x.bits != 0
            } else {
                match v::truth(x) {
                    Some(t) => t,
                    None => {
                        self.tainted |= 1 << l;
                        x.float() != 0.0
                    }
                }
            };
            if t {
                m |= 1 << l;
            }
        }
        Ok(m)
    }

    // -----------------------------------------------------------------------------------------
    // Registers

    /// The integer value of an address component in `lane`, or `None` when it is not exact.
    pub(super) fn address(&self, ind: &Indirect, lane: usize) -> Option<i64> {
        let reg = Register { file: ind.file, dimension: None, index: Index::direct(ind.index) };
        let v = self.read_direct(&reg, lane, ind.component.index());
        v.is_exact().then_some(v.int() as i64)
    }

    fn read_direct(&self, reg: &Register, lane: usize, c: usize) -> Val {
        let dim = reg.dimension.map_or(0, |d| d.value.max(0) as u32);
        self.regs
            .get(&(reg.file, dim))
            .and_then(|r| r.get(reg.index.value.max(0) as usize))
            .map_or(Val::ZERO, |r| r[lane][c])
    }

    /// Resolves a register reference in `lane`: `Ok(Some((dim, index)))` when in range,
    /// `Ok(None)` when out of range, `Err(())` when the address is not exact.
    fn locate(&self, reg: &Register, lane: usize) -> Result<Option<(u32, u32)>, ()> {
        let mut dim = 0i64;
        if let Some(d) = reg.dimension {
            dim = d.value as i64;
            if let Some(ind) = &d.indirect {
                dim += self.address(ind, lane).ok_or(())?;
            }
        }
        let mut index = reg.index.value as i64;
        if let Some(ind) = &reg.index.indirect {
            index += self.address(ind, lane).ok_or(())?;
        }
        let file = reg.file;
        if file == File::Null {
            return Ok(None);
        }
        let dim_ok = u32::try_from(dim).ok();
        let Some(dim) = dim_ok else { return Ok(None) };
        let in_range = if reg.index.indirect.is_some() || reg.dimension.is_some_and(|d| d.indirect.is_some()) {
            self.p.in_range(file, dim, index, reg.index.array_id)
        } else {
            index >= 0 && (index as u64) < self.p.size(file, dim) as u64
        };
        Ok(in_range.then_some((dim, index as u32)))
    }

    pub fn read_reg(&self, reg: &Register, lane: usize, c: usize) -> Result<Val, InterpError> {
        Ok(match self.locate(reg, lane) {
            Ok(Some((dim, index))) => {
                self.regs.get(&(reg.file, dim)).and_then(|r| r.get(index as usize)).map_or(Val::ZERO, |r| r[lane][c])
            }
            Ok(None) => Val::ZERO,
            Err(()) => Val::unknown(0),
        })
    }

    fn write_reg(&mut self, reg: &Register, lane: usize, c: usize, val: Val) -> Result<(), InterpError> {
        let val = if self.tainted & (1 << lane) != 0 { Val::unknown(val.bits) } else { val };
        match self.locate(reg, lane) {
            Ok(Some((dim, index))) => {
                if let Some(r) = self.regs.get_mut(&(reg.file, dim)).and_then(|r| r.get_mut(index as usize)) {
                    r[lane][c] = val;
                }
            }
            Ok(None) => {}
            Err(()) => self.tainted |= 1 << lane,
        }
        Ok(())
    }

    /// Source operand `i` of the current instruction in every lane, swizzled and modified.
    pub fn src(&self, i: usize) -> Result<Reg, InterpError> {
        self.src_of(self.inst(), i)
    }

    pub fn src_of(&self, inst: &Instruction, i: usize) -> Result<Reg, InterpError> {
        let s = inst.src.get(i).ok_or_else(|| InterpError::runtime(inst.span, "missing source operand"))?;
        let ty = inst.opcode.info().src_types.get(i).copied();
        self.fetch(s, ty, 0)
    }

    /// Fetches an operand; `offset` is added to the register index (matrix rows).
    pub fn fetch(&self, s: &SrcOperand, ty: Option<OperandType>, offset: i32) -> Result<Reg, InterpError> {
        let mut reg = s.register;
        reg.index.value = reg.index.value.saturating_add(offset);
        let mut out = [[Val::ZERO; 4]; LANES];
        for (lane, o) in out.iter_mut().enumerate() {
            let mut raw = [Val::ZERO; 4];
            for (c, r) in raw.iter_mut().enumerate() {
                *r = self.read_reg(&reg, lane, c)?;
            }
            *o = modify(s, ty, raw);
        }
        Ok(out)
    }

    /// Writes component `c` of destination `d` in `lane` (the write mask, predicate, legacy
    /// modulation and saturation are applied here). `kind` says whether the result is a float.
    pub fn write(&mut self, d: usize, lane: usize, c: usize, val: Val, kind: Kind) -> Result<(), InterpError> {
        let inst = self.inst();
        let Some(dst) = inst.dst.get(d) else { return Ok(()) };
        if self.exec & (1 << lane) == 0 || !dst.write_mask.has(Component::ALL[c]) {
            return Ok(());
        }
        if let Some(pred) = &inst.predicate {
            let reg =
                Register { file: File::LegacyPredicate, dimension: None, index: Index::direct(pred.index as i32) };
            let p = self.read_reg(&reg, lane, pred.swizzle[c].index())?;
            let t = match v::truth(p) {
                Some(t) => t,
                None => {
                    self.tainted |= 1 << lane;
                    p.float() != 0.0
                }
            };
            if t == pred.negate {
                return Ok(());
            }
        }
        let mut val = val;
        // NaN bits made by float arithmetic are unspecified; moves and selections keep their
        // operand's bits (and its marking).
        let moves =
            matches!(inst.opcode, Opcode::Mov | Opcode::Swz | Opcode::Cmp | Opcode::Ucmp | Opcode::Cnd | Opcode::Cnd0);
        if kind == Kind::Float && !moves {
            val = val.open_nan();
        }
        if kind == Kind::Float {
            if let Some(m) = dst.modulate {
                val = v::mul(val, Val::f(m.factor()));
            }
            val = match inst.saturate {
                Saturate::None => val,
                Saturate::ZeroOne => v::monotone(val, |x| if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) + 0.0 }),
                Saturate::MinusPlusOne => v::monotone(val, |x| if x.is_nan() { -1.0 } else { x.clamp(-1.0, 1.0) }),
            };
        }
        let reg = dst.register;
        self.write_reg(&reg, lane, c, val)
    }

    /// Writes a whole result vector (per enabled channel) in every active lane.
    pub fn write_all(&mut self, results: &Reg, kind: Kind) -> Result<(), InterpError> {
        for l in Self::lanes(self.exec) {
            for c in 0..4 {
                self.write(0, l, c, results[l][c], kind)?;
            }
        }
        Ok(())
    }

    /// Writes 64-bit results: pairs (xy, zw) of `results`, saturating doubles as doubles.
    pub fn write_pairs(&mut self, results: &Reg, kind: Kind, pairs: [bool; 2]) -> Result<(), InterpError> {
        let sat = self.inst().saturate != Saturate::None;
        for l in Self::lanes(self.exec) {
            for (p, &on) in pairs.iter().enumerate() {
                if !on {
                    continue;
                }
                let (mut lo, mut hi) = (results[l][2 * p], results[l][2 * p + 1]);
                if kind == Kind::Double && sat {
                    let d = f64::from_bits(lo.bits as u64 | (hi.bits as u64) << 32);
                    let s = if d.is_nan() || d < 0.0 { 0.0 } else { d.min(1.0) };
                    let bits = s.to_bits();
                    lo = Val::derived(bits as u32, &[lo, hi]);
                    hi = Val::derived((bits >> 32) as u32, &[lo, hi]);
                }
                self.write(0, l, 2 * p, lo, Kind::Int)?;
                self.write(0, l, 2 * p + 1, hi, Kind::Int)?;
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Operations

    fn operation(&mut self, op: Opcode) -> Result<(), InterpError> {
        if super::tex::is_texture(op) {
            return self.texture(op);
        }
        if super::mem::is_memory(op) {
            return self.memory(op);
        }
        match op {
            Opcode::Ddx | Opcode::Ddy | Opcode::DdxFine | Opcode::DdyFine => self.derivative(op),
            Opcode::ReadHelper => {
                let helpers = self.demoted | self.uncovered();
                let r: Reg = std::array::from_fn(|l| [Val::exact(if helpers & (1 << l) != 0 { !0 } else { 0 }); 4]);
                self.write_all(&r, Kind::Int)
            }
            Opcode::VoteAny
            | Opcode::VoteAll
            | Opcode::VoteEq
            | Opcode::Ballot
            | Opcode::ReadFirst
            | Opcode::ReadInvoc => self.subgroup(op),
            Opcode::Clock => {
                // Monotonic but unspecified: any value is accepted.
                let r: Reg = [[Val::unknown(0); 4]; LANES];
                self.write_all(&r, Kind::Int)
            }
            Opcode::Fbfetch => self.fbfetch(),
            Opcode::InterpCentroid | Opcode::InterpSample | Opcode::InterpOffset => self.interpolate(op),
            Opcode::SamplePos => {
                let r: Reg = [[Val::f(0.5), Val::f(0.5), Val::unknown(0), Val::unknown(0)]; LANES];
                self.write_all(&r, Kind::Float)
            }
            Opcode::SampleInfo => {
                let r: Reg = [[Val::exact(1), Val::ZERO, Val::ZERO, Val::ZERO]; LANES];
                self.write_all(&r, Kind::Int)
            }
            Opcode::M4x4 | Opcode::M4x3 | Opcode::M3x4 | Opcode::M3x3 | Opcode::M3x2 => self.matrix(op),
            Opcode::Dfracexp => self.dfracexp(),
            _ => {
                let inst = self.inst();
                let info = inst.opcode.info();
                let mut srcs = Vec::with_capacity(inst.src.len());
                for i in 0..inst.src.len() {
                    srcs.push(self.src(i)?);
                }
                let mask = inst.dst.first().map_or(0, |d| d.write_mask.0);
                let mut results = [[Val::ZERO; 4]; LANES];
                let mut kind = Kind::Float;
                let mut pairs = None;
                for l in Self::lanes(self.exec) {
                    let lane_srcs: Vec<[Val; 4]> = srcs.iter().map(|s| s[l]).collect();
                    let out = alu::compute(op, &lane_srcs, mask).ok_or_else(|| {
                        InterpError::unsupported(
                            self.op_span(),
                            format!("`{}` is not supported by the interpreter", info.name),
                        )
                    })?;
                    results[l] = out.values;
                    kind = out.kind;
                    pairs = out.pairs;
                }
                if self.exec == 0 {
                    return Ok(());
                }
                match pairs {
                    Some(p) => self.write_pairs(&results, kind, p),
                    None => self.write_all(&results, kind),
                }
            }
        }
    }

    fn derivative(&mut self, op: Opcode) -> Result<(), InterpError> {
        let s = self.src(0)?;
        // Inactive lanes contribute zero, as the hardware's cross-lane permute returns zero
        // for them. A killed lane's contribution is open: GL leaves derivatives after a
        // non-uniform discard undefined (on Valhall the lane may still run as a helper). So is
        // an uncertain lane's: it may have taken another path.
        let val = |l: usize| -> [Val; 4] {
            if (self.killed | self.tainted) & (1 << l) != 0 {
                [Val::unknown(0); 4]
            } else if self.exec & (1 << l) != 0 {
                s[l]
            } else {
                [Val::f(0.0); 4]
            }
        };
        let mut r = [[Val::ZERO; 4]; LANES];
        for (l, out) in r.iter_mut().enumerate() {
            let (a, b) = match op {
                Opcode::Ddx => (0, 1),
                Opcode::Ddy => (0, 2),
                Opcode::DdxFine => (l & 2, (l & 2) | 1),
                _ => (l & 1, (l & 1) | 2),
            };
            let (va, vb) = (val(a), val(b));
            *out = std::array::from_fn(|c| v::sub(vb[c], va[c]));
        }
        self.write_all(&r, Kind::Float)
    }

    /// Lanes without a covered sample (helper invocations): those whose `SAMPLEMASK` system
    /// value, when the shader declares one, has no bit set in its low 16 bits (the hardware's
    /// r61; the emulator uses the same input).
    fn uncovered(&self) -> u8 {
        let Some(d) = self.p.declarations.iter().find(|d| {
            d.file == File::SystemValue && d.semantic.as_ref().is_some_and(|s| s.name == SemanticName::Samplemask)
        }) else {
            return 0;
        };
        let key = RegKey { file: File::SystemValue, dimension: None, index: d.first };
        let Some(lanes) = self.inputs.registers.get(&key) else { return 0 };
        (0..LANES).filter(|&l| lanes[l][0] & 0xFFFF == 0).fold(0, |m, l| m | 1 << l)
    }

    /// The subgroup is the quad's active lanes (invocation = lane). VOTE_*, READ_FIRST and
    /// READ_INVOC are component-wise; BALLOT reads `src.x` and writes the lane mask to x and z.
    ///
    /// Helper lanes may or may not take part (on Valhall a discarded lane counts until the
    /// hardware terminates it, which the compiler places): a demoted lane in `exec` (its source
    /// known) and a killed lane (its source unknown, it may still run as a helper) are *optional*
    /// members. A result is exact only if every choice of optional members gives it; the votes
    /// are monotone in the member set, so the fewest and the most members decide.
    fn subgroup(&mut self, op: Opcode) -> Result<(), InterpError> {
        let s = self.src(0)?;
        // Killed and uncertain lanes may or may not take part, with unknown sources.
        let unseen_lanes = self.killed | self.tainted;
        let sure: Vec<usize> = Self::lanes(self.exec & !self.demoted & !unseen_lanes).collect();
        let optional: Vec<usize> = Self::lanes(self.exec & self.demoted & !unseen_lanes).collect();
        let unseen = unseen_lanes != 0;
        let exact_in = |c: usize| sure.iter().chain(&optional).all(|&l| s[l][c].is_exact());
        let val = |bits: u32, exact: bool| Val { bits, err: if exact { 0.0 } else { f32::INFINITY } };
        let mut r = [[Val::ZERO; 4]; LANES];
        match op {
            Opcode::Ballot => {
                let mask =
                    |lanes: &[usize]| lanes.iter().filter(|&&l| s[l][0].bits != 0).fold(0u32, |m, &l| m | 1 << l);
                let fewest = mask(&sure);
                let exact = exact_in(0) && !unseen && fewest | mask(&optional) == fewest;
                let lo = val(fewest, exact);
                r = [[lo, Val::ZERO, lo, Val::ZERO]; LANES];
            }
            Opcode::VoteAny | Opcode::VoteAll | Opcode::VoteEq => {
                for c in 0..4 {
                    let vote = |lanes: &mut dyn Iterator<Item = usize>| -> bool {
                        let mut lanes = lanes.peekable();
                        let first = lanes.peek().map(|&l| s[l][c].bits);
                        match op {
                            Opcode::VoteAny => lanes.any(|l| s[l][c].bits != 0),
                            Opcode::VoteAll => lanes.all(|l| s[l][c].bits != 0),
                            _ => lanes.all(|l| Some(s[l][c].bits) == first),
                        }
                    };
                    let fewest = vote(&mut sure.iter().copied());
                    let most = vote(&mut sure.iter().chain(&optional).copied());
                    // ANY can only turn true with more members, ALL and EQ only false; unknown
                    // killed members may do either.
                    let settled = if op == Opcode::VoteAny { fewest } else { !fewest };
                    let exact = exact_in(c) && (settled || (fewest == most && !unseen));
                    let v = val(if fewest { !0 } else { 0 }, exact);
                    for lane in r.iter_mut() {
                        lane[c] = v;
                    }
                }
            }
            Opcode::ReadFirst => {
                if let Some(&first) = sure.first() {
                    for c in 0..4 {
                        // Optional members before the first sure lane must agree with it.
                        let before = |l: usize| l < first;
                        let agree = optional.iter().filter(|&&l| before(l)).all(|&l| s[l][c].bits == s[first][c].bits);
                        let unseen_before = Self::lanes(unseen_lanes).any(before);
                        let exact = s[first][c].is_exact() && agree && !unseen_before;
                        for lane in r.iter_mut() {
                            lane[c] = val(s[first][c].bits, exact);
                        }
                    }
                } else {
                    r = [[Val::unknown(0); 4]; LANES];
                }
            }
            _ => {
                let inv = self.src(1)?;
                let active = self.exec;
                for l in Self::lanes(active) {
                    let i = inv[l][0];
                    let from = i.bits as usize;
                    r[l] = if i.is_exact() && from < LANES && active & !self.tainted & (1 << from) != 0 {
                        s[from]
                    } else {
                        [Val::unknown(0); 4]
                    };
                }
            }
        }
        self.write_all(&r, Kind::Int)
    }

    /// FBFETCH `OUT[i]`: the framebuffer colour of the output's render target (its COLOR
    /// index) at the lane's pixel, from [`crate::exec::framebuffer`].
    fn fbfetch(&mut self) -> Result<(), InterpError> {
        let inst = self.inst();
        let s = &inst.src[0];
        let index = s.register.index.value.max(0) as u32;
        let rt = self
            .p
            .declarations
            .iter()
            .find(|d| d.file == File::Output && (d.first..=d.last).contains(&index))
            .and_then(|d| {
                d.semantic.as_ref().filter(|s| s.name == SemanticName::Color).map(|s| s.index + index - d.first)
            })
            .ok_or_else(|| InterpError::runtime(inst.span, "FBFETCH reads an output that is not declared COLOR"))?;
        let key = RegKey { file: File::Output, dimension: None, index };
        let r: Reg = std::array::from_fn(|l| {
            let raw = crate::exec::framebuffer::colour(self.inputs, key, rt, l).map(Val::exact);
            modify(s, Some(OperandType::F), raw)
        });
        self.write_all(&r, Kind::Float)
    }

    /// INTERP_CENTROID, INTERP_SAMPLE, INTERP_OFFSET (docs/interpreter.md, the varying model):
    /// the given inputs are the values at the pixel centres, which are also the centroid and
    /// the only sample (single-sampled, fully covered). An offset `(ox, oy)` is quantised as the
    /// hardware's 8.8 sample position `q = i16(rte(fma(o, 256, 128)))` and interpolated on the
    /// quad's plane: `fma(dy, v2 − v0, fma(dx, v1 − v0, v))` with `d = q/256 − 0.5`. Flat inputs
    /// are returned unchanged.
    fn interpolate(&mut self, op: Opcode) -> Result<(), InterpError> {
        let inst = self.inst();
        let s = &inst.src[0];
        if op != Opcode::InterpOffset || self.is_flat_input(&s.register) {
            let r = self.src(0)?;
            return self.write_all(&r, Kind::Float);
        }
        let off = self.src(1)?;
        let mut raw = [[Val::ZERO; 4]; LANES];
        for (lane, r) in raw.iter_mut().enumerate() {
            for (c, x) in r.iter_mut().enumerate() {
                *x = self.read_reg(&s.register, lane, c)?;
            }
        }
        let mut r = [[Val::ZERO; 4]; LANES];
        for l in 0..LANES {
            let d = |o: Val| -> Val {
                if !o.is_exact() {
                    return Val::unknown(0);
                }
                Val::f(offset_position(o.float()) as f32 / 256.0 - 0.5)
            };
            let (dx, dy) = (d(off[l][0]), d(off[l][1]));
            let out: [Val; 4] = std::array::from_fn(|c| {
                let ddx = v::sub(raw[1][c], raw[0][c]);
                let ddy = v::sub(raw[2][c], raw[0][c]);
                v::fma(dy, ddy, v::fma(dx, ddx, raw[l][c]))
            });
            r[l] = modify(s, Some(OperandType::F), out);
        }
        self.write_all(&r, Kind::Float)
    }

    /// Whether `reg` is an input declared with constant (flat) interpolation.
    fn is_flat_input(&self, reg: &Register) -> bool {
        let index = reg.index.value.max(0) as u32;
        self.p.declarations.iter().any(|d| {
            d.file == File::Input
                && (d.first..=d.last).contains(&index)
                && d.interpolation == Some(Interpolation::Constant)
        })
    }

    fn matrix(&mut self, op: Opcode) -> Result<(), InterpError> {
        let (rows, cols) = match op {
            Opcode::M4x4 => (4, 4),
            Opcode::M4x3 => (3, 4),
            Opcode::M3x4 => (4, 3),
            Opcode::M3x3 => (3, 3),
            _ => (2, 3),
        };
        let a = self.src(0)?;
        let inst = self.inst();
        let mut r = [[Val::unknown(0); 4]; LANES];
        let mut row_vals = Vec::with_capacity(rows);
        for k in 0..rows {
            row_vals.push(self.fetch(&inst.src[1], Some(OperandType::F), k as i32)?);
        }
        for l in 0..LANES {
            for (k, row) in row_vals.iter().enumerate() {
                r[l][k] = alu::dot(&a[l], &row[l], cols);
            }
        }
        for l in Self::lanes(self.exec) {
            for (c, &val) in r[l].iter().enumerate().take(rows) {
                self.write(0, l, c, val, Kind::Float)?;
            }
        }
        Ok(())
    }

    fn dfracexp(&mut self) -> Result<(), InterpError> {
        let s = self.src(0)?;
        let inst = self.inst();
        let m0 = inst.dst.first().map_or(0, |d| d.write_mask.0);
        let m1: Vec<usize> =
            inst.dst.get(1).map_or(Vec::new(), |d| d.write_mask.components().map(|c| c.index()).collect());
        for l in Self::lanes(self.exec) {
            for p in 0..2 {
                let (lo, hi) = (s[l][2 * p], s[l][2 * p + 1]);
                let d = f64::from_bits(lo.bits as u64 | (hi.bits as u64) << 32);
                let (m, e) = alu::frexp(d);
                let deps = [lo, hi];
                if m0 & (3 << (2 * p)) == 3 << (2 * p) {
                    self.write(0, l, 2 * p, Val::derived(m.to_bits() as u32, &deps), Kind::Int)?;
                    self.write(0, l, 2 * p + 1, Val::derived((m.to_bits() >> 32) as u32, &deps), Kind::Int)?;
                }
                if let Some(&c) = m1.get(p) {
                    self.write(1, l, c, Val::derived(e as u32, &deps), Kind::Int)?;
                }
            }
        }
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Results

    fn finish(self) -> Run {
        let mut outputs = Outputs::default();
        let mut accuracy = BTreeMap::new();
        for d in &self.p.declarations {
            if d.file != File::Output {
                continue;
            }
            for index in d.first..=d.last {
                let key = RegKey::new(File::Output, index);
                let reg = self.regs.get(&(File::Output, 0)).and_then(|r| r.get(index as usize));
                let Some(reg) = reg else { continue };
                outputs.outputs.insert(key, reg.map(|l| l.map(|x| x.bits)));
                let mut acc = reg.map(|l| l.map(|x| Accuracy::from_err(x.err)));
                for (l, a) in acc.iter_mut().enumerate() {
                    if self.tainted & (1 << l) != 0 {
                        *a = [Accuracy::Unconstrained; 4];
                    }
                }
                accuracy.insert(key, acc);
            }
        }
        let gone = self.killed | self.demoted;
        outputs.killed = (0..LANES as u32).filter(|l| gone & (1 << l) != 0).collect();
        let mut buffer_accuracy = BTreeMap::new();
        for (&b, words) in &self.buffers {
            outputs.buffers.insert(b, words.iter().map(|w| w.bits).collect());
            buffer_accuracy.insert(b, words.iter().map(|w| Accuracy::from_err(w.err)).collect());
        }
        let mut image_accuracy = BTreeMap::new();
        for (&unit, state) in &self.images {
            outputs.images.insert(unit, crate::exec::bytes_to_words(&state.data));
            image_accuracy.insert(unit, state.err.iter().map(|&e| Accuracy::from_err(e)).collect());
        }
        Run {
            outputs,
            accuracy,
            buffer_accuracy,
            image_accuracy,
            uncertain_lanes: (0..LANES as u32).filter(|l| self.tainted & (1 << l) != 0).collect(),
            steps: self.steps,
        }
    }
}

/// Applies the swizzle and the source modifiers of `s` (by operand type) to a raw register.
/// The 8.8 fixed-point sample position (relative to the pixel's top-left corner) of an
/// interpolation offset `o` (relative to its centre), as the compiler computes it for
/// `LD_VAR_BUF….explicit`: `fma(o, 256, 128)` rounded to f32, converted to an integer rounding
/// to nearest even with saturation (NaN → 0), of which the low 16 bits are a signed value.
pub fn offset_position(o: f32) -> i16 {
    let t = o.mul_add(256.0, 128.0).round_ties_even();
    // `as` saturates (and makes NaN 0), like F32_TO_S32.
    let q = t as i32;
    q as i16
}

pub fn modify(s: &SrcOperand, ty: Option<OperandType>, raw: [Val; 4]) -> [Val; 4] {
    use OperandType as T;
    let mut x: [Val; 4] = std::array::from_fn(|c| raw[s.swizzle[c].index()]);
    match ty {
        Some(T::I | T::U) => {
            for val in &mut x {
                let mut i = val.int();
                if s.absolute {
                    i = i.wrapping_abs();
                }
                if s.negate {
                    i = i.wrapping_neg();
                }
                // An integer read of NaN bits a float operation left open is unconstrained.
                let exact = val.is_exact() && !val.is_open_nan();
                *val = Val { bits: i as u32, err: if exact { 0.0 } else { f32::INFINITY } };
            }
        }
        Some(T::D) => {
            for p in 0..2 {
                let hi = &mut x[2 * p + 1];
                if s.absolute {
                    hi.bits &= 0x7fff_ffff;
                }
                if s.negate {
                    hi.bits ^= 0x8000_0000;
                }
            }
        }
        Some(T::I64 | T::U64) => {
            for val in &mut x {
                if val.is_open_nan() {
                    *val = Val::unknown(val.bits);
                }
            }
            for p in 0..2 {
                let mut i = (x[2 * p].bits as u64 | (x[2 * p + 1].bits as u64) << 32) as i64;
                if s.absolute {
                    i = i.wrapping_abs();
                }
                if s.negate {
                    i = i.wrapping_neg();
                }
                x[2 * p].bits = i as u32;
                x[2 * p + 1].bits = (i as u64 >> 32) as u32;
            }
        }
        Some(T::Res | T::Sview | T::Samp) => {}
        _ => match &s.legacy {
            None => {
                for val in &mut x {
                    if s.absolute {
                        *val = v::abs(*val);
                    }
                    if s.negate {
                        *val = v::neg(*val);
                    }
                }
            }
            Some(legacy) => {
                if let Some(ext) = legacy.extended_swizzle {
                    for (c, e) in ext.iter().enumerate() {
                        let base = match e.source {
                            ExtendedComponent::Component(k) => raw[k.index()],
                            ExtendedComponent::Zero => Val::f(0.0),
                            ExtendedComponent::One => Val::f(1.0),
                        };
                        x[c] = if e.negate { v::neg(base) } else { base };
                    }
                }
                for val in &mut x {
                    if s.negate {
                        *val = v::neg(*val);
                    }
                    if legacy.complement {
                        *val = v::sub(Val::f(1.0), *val);
                    }
                    if legacy.bias {
                        *val = v::sub(*val, Val::f(0.5));
                    }
                    if legacy.scale2 {
                        *val = v::mul(*val, Val::f(2.0));
                    }
                    if s.absolute {
                        *val = v::abs(*val);
                    }
                    if legacy.outer_negate {
                        *val = v::neg(*val);
                    }
                }
            }
        },
    }
    x
}
