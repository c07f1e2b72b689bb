//! The machine: four lanes of 64 registers, the FAU, memory, the per-stage environment, and
//! the scheduler that runs a decoded program with per-lane program counters while checking
//! the flow rules (docs/emulator.md §2–§4).

use super::error::{EmuError, ErrorKind, err};
use super::memory::{CODE_BASE, Memory, Place, SAMPLE_POSITIONS_BASE};
use crate::exec::LANES;
use crate::exec::texture::Texture;
use crate::valhall::tables::{Opcode, SrcInfo, WidenKind};
use crate::valhall::{Base, Instr, decode, disassemble_word};
use std::collections::BTreeMap;

/// General registers per lane.
pub const REGS: usize = 64;

/// Default step limit of [`Options::max_steps`].
pub const DEFAULT_MAX_STEPS: u64 = 1_000_000;

/// Value of `atest_datum` (both words): ATEST checks its third source holds it.
pub const ATEST_DATUM: u64 = 0xA7E5_7DA7_A7E5_7DA7;
/// High 24 bits of word 0 of `blend_descriptor_N` (fixed-function blending to render target N
/// in the low byte); word 1 (the blend shader's address) is 0: no blend shader.
pub const BLEND_DESCRIPTOR_TAG: u32 = 0xB1E0_D500;

/// The shader stage a program runs as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Vertex,
    Fragment,
    Compute,
}

impl Stage {
    pub fn parse(name: &str) -> Option<Stage> {
        match name {
            "vertex" => Some(Stage::Vertex),
            "fragment" => Some(Stage::Fragment),
            "compute" => Some(Stage::Compute),
            _ => None,
        }
    }
}

/// One decoded instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inst {
    pub word: u64,
    pub instr: Instr,
    /// Mesa-syntax disassembly, for messages.
    pub text: String,
}

/// A decoded program (one variant).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    pub code: Vec<Inst>,
}

/// Bits of `TEX_GRADIENT` the ISA tables do not model (force-delta-enable 12,
/// derivative-enable 15); the emulator reads them from the raw word.
pub const TEX_GRADIENT_EXTRA_BITS: u64 = (1 << 12) | (1 << 15);

/// Decodes one word strictly (docs/emulator.md §5: reserved values, stray bits and unknown
/// opcodes are errors), accepting the `TEX_GRADIENT` bits 12 and 15 the tables do not model.
pub fn decode_word(word: u64) -> Result<Instr, String> {
    match decode(word) {
        Ok(i) => Ok(i),
        Err(e) => {
            if word & TEX_GRADIENT_EXTRA_BITS != 0 {
                if let Ok(i) = decode(word & !TEX_GRADIENT_EXTRA_BITS) {
                    if i.opcode == Opcode::TEX_GRADIENT {
                        return Ok(i);
                    }
                }
            }
            Err(e.to_string())
        }
    }
}

impl Program {
    /// Decodes words; the first word that does not decode, or breaks the hardware's operand rules
    /// (encoding spec §2.7 H2–H7: FAU words, slots, specials, aligned 64-bit operands), is an
    /// error naming its index.
    pub fn from_words(words: &[u64]) -> Result<Program, EmuError> {
        let mut code = Vec::with_capacity(words.len());
        for (i, &word) in words.iter().enumerate() {
            let text = || disassemble_word(word).unwrap_or_else(|_| "<undecodable>".to_string());
            let instr = decode_word(word).map_err(|reason| {
                EmuError::new(ErrorKind::Decode, format!("word {word:#018x} does not decode: {reason}")).at(i, text())
            })?;
            instr.check_hardware_rules().map_err(|e| {
                EmuError::new(ErrorKind::Decode, format!("breaks a hardware FAU/operand rule: {e}")).at(i, text())
            })?;
            code.push(Inst { word, instr, text: crate::valhall::print(&instr) });
        }
        Ok(Program { code })
    }

    /// Decodes little-endian bytes (a whole number of 8-byte words).
    pub fn from_bytes(bytes: &[u8]) -> Result<Program, EmuError> {
        if bytes.len() % 8 != 0 {
            return err(ErrorKind::Blob, format!("code size {} is not a multiple of 8", bytes.len()));
        }
        let words: Vec<u64> =
            bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
        Program::from_words(&words)
    }

    /// Assembles Mesa-syntax text (one instruction per line).
    pub fn assemble(text: &str) -> Result<Program, EmuError> {
        let words = crate::valhall::assemble(text).map_err(|d| {
            let message = d.0.iter().map(|x| x.message.clone()).collect::<Vec<_>>().join("; ");
            EmuError::new(ErrorKind::Decode, format!("assembly failed: {message}"))
        })?;
        Program::from_words(&words)
    }
}

/// How a lane stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    /// Reached `.end` (or `BLEND….end`).
    Ended,
    /// Discarded by `DISCARD` and then terminated: by an instruction with the `.discard` flow,
    /// or because every running lane of the quad was discarded.
    Killed,
    /// Not part of the run (see [`Machine::live`]).
    Absent,
}

/// An outstanding asynchronous register write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    pub slot: u8,
    /// Instruction index of the producer.
    pub producer: usize,
}

/// An outstanding memory access (for the memory-ordering rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemAccess {
    pub lane: usize,
    pub slot: u8,
    pub place: Place,
    pub start: u64,
    pub end: u64,
    pub write: bool,
    pub producer: usize,
    /// The issue step (accesses of one instruction never conflict with each other).
    pub step: u64,
}

/// Run-time options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Instructions issued (per group of active lanes) before giving up.
    pub max_steps: u64,
    /// Read never-written registers as zero instead of reporting them.
    pub allow_undefined: bool,
    /// 32 (only r0–r15 and r48–r63 may be used) or 64.
    pub work_registers: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options { max_steps: DEFAULT_MAX_STEPS, allow_undefined: false, work_registers: 64 }
    }
}

/// Vertex attribute data for `LD_ATTR*`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttributeData {
    /// Register format the data is stored in: `f32` or `auto` (raw 32-bit words).
    pub format: String,
    /// Per lane (vertex) the four 32-bit components.
    pub values: [[u32; 4]; LANES],
}

/// One 16-byte slot of the fragment shader's varying record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VaryingData {
    pub offset: u32,
    /// `flat` (must be read with `src_flat*`) or interpolated (`src_f*`).
    pub flat: bool,
    /// 0 center, 1 centroid, 2 sample (validated; the model makes them equal).
    pub location: u8,
    /// Per lane, already interpolated.
    pub values: [[u32; 4]; LANES],
}

/// Everything the message instructions read besides registers and memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Env {
    pub attributes: BTreeMap<u32, AttributeData>,
    pub vertex_ids: [u32; LANES],
    pub instance_ids: [u32; LANES],
    pub varyings: Vec<VaryingData>,
    /// `LD_VAR_SPECIAL` values per lane: point x, point y, fragment w, fragment z.
    pub var_specials: [[u32; 4]; LANES],
    pub textures: BTreeMap<u32, Texture>,
    /// Workgroup of each lane (compute: shared memory and barriers).
    pub workgroup: [u32; LANES],
    /// `thread_local_pointer` of each lane.
    pub tls_pointer: [u64; LANES],
    /// `workgroup_local_pointer` of each lane.
    pub wls_pointer: [u64; LANES],
    /// Render target → per lane the colour `LD_TILE` reads (`exec::framebuffer`).
    pub framebuffer: BTreeMap<u32, [[u32; 4]; LANES]>,
}

/// What the fragment outputs did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Capture {
    /// Render target → per lane the colour written by the last `BLEND`.
    pub colour: BTreeMap<u32, [Option<[u32; 4]>; LANES]>,
    pub depth: [Option<u32>; LANES],
    pub stencil: [Option<u32>; LANES],
    /// The coverage `ATEST` received (source 0).
    pub coverage: [Option<u32>; LANES],
    pub atest: [bool; LANES],
    pub zs_emit: [bool; LANES],
    pub blend: [bool; LANES],
}

/// The emulated machine. Tests prepare one with [`Machine::new`], set registers, uniforms,
/// memory and environment, then call [`Machine::run`].
#[derive(Clone, Debug)]
pub struct Machine {
    pub stage: Stage,
    pub options: Options,
    pub regs: [[u32; REGS]; LANES],
    /// Per register, which 16-bit halves hold a defined value (bit 0 low, bit 1 high).
    pub defined: [[u8; REGS]; LANES],
    /// FAU words u0–u127; `None` = not described by the metadata (reading it is an error).
    pub uniforms: [Option<u32>; 128],
    pub memory: Memory,
    pub env: Env,
    pub capture: Capture,
    /// Which lanes take part in the run (all by default).
    pub live: [bool; LANES],
    pub status: [Status; LANES],
    /// Lanes a `DISCARD` hit. They keep running as helpers (no stores, atomics or outputs, still
    /// read by `CLPER`) until they are terminated ([`Status::Killed`]) or end.
    pub discarded: [bool; LANES],
    pub pc: [usize; LANES],
    /// Instructions issued by the last run.
    pub steps: u64,
    pub(crate) pending: [[Option<Pending>; REGS]; LANES],
    pub(crate) mem_out: Vec<MemAccess>,
    /// Per lane, the slots holding outstanding varying loads (bit mask).
    pub(crate) vary_out: [u8; LANES],
    /// Per lane, the slots with anything outstanding (bit mask over slots 0–7).
    pub(crate) slots_busy: [u8; LANES],
    /// Hidden varying state per lane: the sample mode saved by the last `.store`.
    pub(crate) vary_state: [Option<u8>; LANES],
    /// Flow of the previous instruction each lane executed (`None` at the start).
    pub(crate) prev_flow: [Option<u8>; LANES],
}

/// Per-lane effects of one instruction, collected before they are applied.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Effects {
    /// Branch target (instruction index), per lane.
    pub next: [Option<usize>; LANES],
    /// `DISCARD` hit the lane.
    pub discard: [bool; LANES],
}

impl Machine {
    pub fn new(stage: Stage) -> Machine {
        Machine {
            stage,
            options: Options::default(),
            regs: [[0; REGS]; LANES],
            defined: [[0; REGS]; LANES],
            uniforms: [None; 128],
            memory: Memory::default(),
            env: Env::default(),
            capture: Capture::default(),
            live: [true; LANES],
            status: [Status::Running; LANES],
            discarded: [false; LANES],
            pc: [0; LANES],
            steps: 0,
            pending: [[None; REGS]; LANES],
            mem_out: Vec::new(),
            vary_out: [0; LANES],
            slots_busy: [0; LANES],
            vary_state: [None; LANES],
            prev_flow: [None; LANES],
        }
    }

    /// Sets a register in one lane (and marks it defined).
    pub fn set_reg(&mut self, lane: usize, reg: usize, value: u32) {
        self.regs[lane][reg] = value;
        self.defined[lane][reg] = 3;
    }

    /// Sets a register in every lane.
    pub fn set_reg_all(&mut self, reg: usize, value: u32) {
        for lane in 0..LANES {
            self.set_reg(lane, reg, value);
        }
    }

    /// Sets a register to a per-lane value.
    pub fn set_reg_lanes(&mut self, reg: usize, values: [u32; LANES]) {
        for (lane, v) in values.into_iter().enumerate() {
            self.set_reg(lane, reg, v);
        }
    }

    /// A register of every lane.
    pub fn reg(&self, reg: usize) -> [u32; LANES] {
        std::array::from_fn(|l| self.regs[l][reg])
    }

    /// Lanes a `DISCARD` hit (whether they then ran on as helpers or were terminated).
    pub fn killed(&self) -> Vec<u32> {
        (0..LANES).filter(|&l| self.discarded[l]).map(|l| l as u32).collect()
    }

    /// Runs `program` from instruction 0 in every live lane until every lane has ended or been
    /// terminated. Registers and memory keep their state between runs; captures start afresh.
    pub fn run(&mut self, program: &Program) -> Result<(), EmuError> {
        for lane in 0..LANES {
            self.status[lane] = if self.live[lane] { Status::Running } else { Status::Absent };
            self.discarded[lane] = false;
            self.pc[lane] = 0;
            self.pending[lane] = [None; REGS];
            self.vary_out[lane] = 0;
            self.slots_busy[lane] = 0;
            self.vary_state[lane] = None;
            self.prev_flow[lane] = None;
        }
        self.mem_out.clear();
        self.steps = 0;
        self.capture = Capture::default();
        if program.code.is_empty() {
            for lane in 0..LANES {
                if self.status[lane] == Status::Running {
                    self.status[lane] = Status::Ended;
                }
            }
            return Ok(());
        }
        loop {
            let running: Vec<usize> = (0..LANES).filter(|&l| self.status[l] == Status::Running).collect();
            let Some(pc) = running.iter().map(|&l| self.pc[l]).min() else {
                return Ok(());
            };
            if pc >= program.code.len() {
                let last = program.code.len() - 1;
                return Err(EmuError::new(
                    ErrorKind::Flow,
                    "execution ran past the last instruction: the program is missing .end",
                )
                .at(last, program.code[last].text.clone()));
            }
            self.steps += 1;
            if self.steps > self.options.max_steps {
                return Err(EmuError::new(
                    ErrorKind::Limit,
                    format!("more than {} instructions issued (infinite loop?)", self.options.max_steps),
                )
                .at(pc, program.code[pc].text.clone()));
            }
            let mut active = [false; LANES];
            for &l in &running {
                active[l] = self.pc[l] == pc;
            }
            let inst = &program.code[pc];
            self.step(program, pc, active).map_err(|e| e.at(pc, inst.text.clone()))?;
        }
    }

    fn step(&mut self, program: &Program, pc: usize, active: [bool; LANES]) -> Result<(), EmuError> {
        let inst = &program.code[pc];
        let flow = inst.instr.flow;
        let effects = self.execute(program, pc, active)?;
        let waits = wait_mask(flow);
        let is_branch = matches!(inst.instr.opcode, Opcode::BRANCHZ | Opcode::BRANCHZI | Opcode::BLEND);
        // Divergence of a branch among the lanes that continue.
        let mut targets = Vec::new();
        for lane in (0..LANES).filter(|&l| active[l]) {
            targets.push(effects.next[lane].unwrap_or(pc + 1));
        }
        targets.dedup();
        if is_branch && targets.len() > 1 && flow != FLOW_RECONVERGE {
            return err(ErrorKind::Flow, "divergent branch without .reconverge");
        }
        for lane in (0..LANES).filter(|&l| active[l]) {
            self.discarded[lane] |= effects.discard[lane];
            if flow == FLOW_DISCARD && self.discarded[lane] {
                self.status[lane] = Status::Killed;
                continue;
            }
            self.prev_flow[lane] = Some(flow);
            // The dependency slots belong to the warp: a wait completes the slot's messages of
            // every lane, also of lanes this instruction does not run for (docs/emulator.md §4).
            for other in 0..LANES {
                self.apply_wait(other, waits);
            }
            if flow == FLOW_END {
                self.apply_wait(lane, 0x7F);
                self.finish_lane(lane)?;
                self.status[lane] = Status::Ended;
                continue;
            }
            let next = effects.next[lane].unwrap_or(pc + 1);
            if next > program.code.len() || (effects.next[lane].is_some() && next == program.code.len()) {
                return Err(EmuError::new(
                    ErrorKind::Flow,
                    format!("branch target {next} is outside the program (0..{})", program.code.len()),
                )
                .lane(lane));
            }
            self.pc[lane] = next;
        }
        // A fall-through into lanes waiting at the next instruction joins divergent lanes.
        if flow != FLOW_RECONVERGE && flow != FLOW_END {
            let fell: Vec<usize> = (0..LANES)
                .filter(|&l| active[l] && self.status[l] == Status::Running && self.pc[l] == pc + 1)
                .filter(|&l| effects.next[l].is_none())
                .collect();
            let waiting = (0..LANES).any(|l| !active[l] && self.status[l] == Status::Running && self.pc[l] == pc + 1);
            if !fell.is_empty() && waiting {
                return err(
                    ErrorKind::Flow,
                    format!(
                        "lanes fall through into instruction {} where divergent lanes wait: the instruction needs .reconverge",
                        pc + 1
                    ),
                );
            }
        }
        // Discarded lanes are only kept for their neighbours: once every running lane of the
        // quad is discarded, the hardware terminates them all.
        let running = || (0..LANES).filter(|&l| self.status[l] == Status::Running);
        if running().all(|l| self.discarded[l]) {
            for lane in running().collect::<Vec<_>>() {
                self.status[lane] = Status::Killed;
            }
        }
        Ok(())
    }

    /// End-of-thread checks (a discarded lane may end without having run `ATEST`).
    fn finish_lane(&mut self, lane: usize) -> Result<(), EmuError> {
        if self.stage == Stage::Fragment && !self.discarded[lane] && !self.capture.atest[lane] {
            return Err(EmuError::new(ErrorKind::Flow, "fragment thread ends without ATEST").lane(lane));
        }
        Ok(())
    }

    /// Clears everything outstanding on the slots of `mask` for a lane.
    pub(crate) fn apply_wait(&mut self, lane: usize, mask: u8) {
        if mask == 0 {
            return;
        }
        for p in self.pending[lane].iter_mut() {
            if p.is_some_and(|p| mask >> p.slot & 1 == 1) {
                *p = None;
            }
        }
        self.mem_out.retain(|a| !(a.lane == lane && mask >> a.slot & 1 == 1));
        self.vary_out[lane] &= !mask;
        self.slots_busy[lane] &= !mask;
    }

    // -----------------------------------------------------------------------------------------
    // Register and FAU access (with the hazard and definedness checks).
    // -----------------------------------------------------------------------------------------

    fn check_reg_number(&self, reg: usize) -> Result<(), EmuError> {
        if reg >= REGS {
            return err(ErrorKind::Fault, format!("register r{reg} does not exist"));
        }
        if self.options.work_registers == 32 && (16..48).contains(&reg) {
            return err(
                ErrorKind::Fault,
                format!("r{reg} is not available with 32 work registers (only r0–r15 and r48–r63)"),
            );
        }
        Ok(())
    }

    fn hazard(&self, program: &Program, lane: usize, reg: usize, what: &str) -> Result<(), EmuError> {
        if let Some(p) = self.pending[lane][reg] {
            let producer = program.code.get(p.producer).map_or("?", |i| i.text.trim_end());
            return Err(EmuError::new(
                ErrorKind::Flow,
                format!(
                    "{what} r{reg} while instruction {} `{producer}` still writes it on slot {}: missing wait on slot {}",
                    p.producer, p.slot, p.slot
                ),
            )
            .lane(lane));
        }
        Ok(())
    }

    /// Reads a register for an instruction; `halves` are the 16-bit halves it uses.
    pub(crate) fn read_reg(
        &self,
        program: &Program,
        lane: usize,
        reg: usize,
        halves: u8,
        allow_undefined: bool,
    ) -> Result<u32, EmuError> {
        self.check_reg_number(reg)?;
        self.hazard(program, lane, reg, "reads")?;
        if !self.options.allow_undefined && !allow_undefined && self.defined[lane][reg] & halves != halves {
            return Err(EmuError::new(
                ErrorKind::Undefined,
                format!("reads r{reg}, which holds no defined value (never written and not preloaded)"),
            )
            .lane(lane));
        }
        Ok(self.regs[lane][reg])
    }

    /// Writes a register (whole or one half, `mask` 1 = low, 2 = high, 3 = both).
    pub(crate) fn write_reg(
        &mut self,
        program: &Program,
        lane: usize,
        reg: usize,
        value: u32,
        mask: u8,
    ) -> Result<(), EmuError> {
        self.check_reg_number(reg)?;
        self.hazard(program, lane, reg, "overwrites")?;
        let keep = match mask {
            1 => 0xFFFF_0000,
            2 => 0x0000_FFFF,
            3 => 0,
            _ => return err(ErrorKind::Fault, format!("destination write mask {mask} is invalid")),
        };
        self.regs[lane][reg] = (self.regs[lane][reg] & keep) | (value & !keep);
        self.defined[lane][reg] |= mask;
        Ok(())
    }

    /// Marks registers as written asynchronously by the instruction at `pc` on `slot`.
    pub(crate) fn set_pending(&mut self, lane: usize, regs: std::ops::Range<usize>, slot: u8, pc: usize) {
        for r in regs {
            if r < REGS {
                self.pending[lane][r] = Some(Pending { slot, producer: pc });
            }
        }
        self.slots_busy[lane] |= 1 << slot;
    }

    /// A uniform word.
    pub(crate) fn uniform(&self, index: u8) -> Result<u32, EmuError> {
        self.uniforms.get(usize::from(index)).copied().flatten().ok_or_else(|| {
            EmuError::new(
                ErrorKind::Metadata,
                format!("reads u{index}, which the metadata's FAU table does not describe"),
            )
        })
    }

    /// Both words of a special FAU value, per lane.
    pub(crate) fn special(&self, page: u8, entry: u8, lane: usize, pc: usize) -> Result<u64, EmuError> {
        let unsupported =
            |name: &str| err(ErrorKind::Unsupported, format!("the special FAU value `{name}` is not modelled"));
        match (page, entry) {
            (0, 2) => Ok(0),
            (0, 4) => unsupported("framebuffer_size"),
            (0, 5) => Ok(ATEST_DATUM),
            (0, 6) => Ok(SAMPLE_POSITIONS_BASE),
            (0, 8..=15) => Ok(u64::from(BLEND_DESCRIPTOR_TAG | u32::from(entry - 8))),
            (1, 1) => Ok(self.env.tls_pointer[lane]),
            (1, 3) => Ok(self.env.wls_pointer[lane]),
            (1, 7) => unsupported("resource_table_pointer"),
            (3, 1) => Ok(lane as u64),
            (3, 3) => Ok(0),
            (3, 15) => Ok(CODE_BASE + 8 * (pc as u64 + 1)),
            _ => err(ErrorKind::Fault, format!("special FAU entry {entry} of page {page} is reserved")),
        }
    }

    /// The 32-bit word a source base reads (before swizzles), checking the halves it uses.
    pub(crate) fn base_word(
        &self,
        program: &Program,
        pc: usize,
        lane: usize,
        base: Base,
        halves: u8,
    ) -> Result<u32, EmuError> {
        match base {
            Base::Register(r) | Base::Discard(r) => self.read_reg(program, lane, usize::from(r), halves, false),
            Base::Uniform(u) => self.uniform(u),
            Base::Immediate(_) => Ok(base.immediate_value().unwrap_or(0)),
            Base::Special(s) => {
                let v = self.special(s.page, s.entry, lane, pc)?;
                Ok(if s.high { (v >> 32) as u32 } else { v as u32 })
            }
        }
    }

    /// The 64-bit value of a 64-bit source (an even register pair, an even uniform pair, a
    /// zero-extended immediate, or both words of a special value); `halves` apply to the low
    /// word, the high word is needed unless `low_only`.
    pub(crate) fn base_pair(
        &self,
        program: &Program,
        pc: usize,
        lane: usize,
        base: Base,
        low_halves: u8,
        low_only: bool,
    ) -> Result<u64, EmuError> {
        match base {
            Base::Register(r) | Base::Discard(r) => {
                if r % 2 == 1 {
                    return err(ErrorKind::Fault, format!("64-bit operand r{r} is not an even register"));
                }
                let lo = self.read_reg(program, lane, usize::from(r), low_halves, false)?;
                let hi = if low_only { 0 } else { self.read_reg(program, lane, usize::from(r) + 1, 3, false)? };
                Ok(u64::from(lo) | u64::from(hi) << 32)
            }
            Base::Uniform(u) => {
                if u % 2 == 1 {
                    return err(ErrorKind::Fault, format!("64-bit operand u{u} is not an even uniform word"));
                }
                let lo = self.uniform(u)?;
                let hi = if low_only { 0 } else { self.uniform(u + 1)? };
                Ok(u64::from(lo) | u64::from(hi) << 32)
            }
            Base::Immediate(_) => Ok(u64::from(base.immediate_value().unwrap_or(0))),
            Base::Special(s) => {
                if s.high {
                    return err(ErrorKind::Fault, "a 64-bit operand names the high word of a special value");
                }
                self.special(s.page, s.entry, lane, pc)
            }
        }
    }

    /// Records a memory access and checks it against outstanding conflicting ones
    /// (docs/emulator.md §4.4).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn track_memory(
        &mut self,
        program: &Program,
        pc: usize,
        lane: usize,
        slot: u8,
        place: Place,
        start: u64,
        len: usize,
        write: bool,
    ) -> Result<(), EmuError> {
        let end = start + len as u64;
        if let Some(other) = self
            .mem_out
            .iter()
            .find(|a| a.step != self.steps && a.place == place && a.start < end && start < a.end && (a.write || write))
        {
            let producer = program.code.get(other.producer).map_or("?", |i| i.text.trim_end());
            return Err(EmuError::new(
                ErrorKind::Flow,
                format!(
                    "{} of {start:#x}..{end:#x} while instruction {} `{producer}` (lane {}) still {} it on slot {}: missing wait",
                    if write { "write" } else { "read" },
                    other.producer,
                    other.lane,
                    if other.write { "writes" } else { "reads" },
                    other.slot
                ),
            )
            .lane(lane));
        }
        self.mem_out.push(MemAccess { lane, slot, place, start, end, write, producer: pc, step: self.steps });
        self.slots_busy[lane] |= 1 << slot;
        Ok(())
    }
}

pub(crate) const FLOW_WAIT0126: u8 = 8;
pub(crate) const FLOW_WAIT: u8 = 9;
pub(crate) const FLOW_RECONVERGE: u8 = 10;
pub(crate) const FLOW_DISCARD: u8 = 13;
pub(crate) const FLOW_END: u8 = 15;

/// The slots a flow value waits on (bit mask over slots 0–7).
pub fn wait_mask(flow: u8) -> u8 {
    match flow {
        0..=7 => flow,
        8 => 0b0100_0111,
        9 => 0b1100_0111,
        _ => 0,
    }
}

/// Which bytes (bit mask, byte 0 = bit 0) of a 32-bit register word a source uses, from its
/// swizzle, widen, lane and combine fields.
pub(crate) fn bytes_used(info: &SrcInfo, src: &crate::valhall::Src) -> u8 {
    use crate::valhall::tables::EnumId;
    let half = |h: u8| if h == 0 { 0b0011 } else { 0b1100 };
    let byte = |b: u8| 1u8 << (b & 3);
    if let Some(f) = info.lane {
        return match f.values {
            EnumId::Lane8Bit => byte(src.lane),
            _ => half(src.lane),
        };
    }
    if let Some(f) = info.swizzle {
        return match f.values {
            EnumId::Widen => match src.swizzle {
                1 => half(0),
                2 => half(1),
                _ => 0xF,
            },
            _ => match src.swizzle {
                0 => half(0),
                3 => half(1),
                _ => 0xF,
            },
        };
    }
    if let Some(f) = info.widen {
        let w = src.widen;
        return match (info.widen_kind, f.values) {
            (WidenKind::Lanes, _) => byte(w.saturating_sub(4)),
            (WidenKind::HalfSwizzle, _) => byte(w & 3) | byte(w >> 2),
            (WidenKind::Combine, _) => match w {
                1 => half(0),
                2 => half(1),
                _ => 0xF,
            },
            (_, EnumId::Swizzles32Bit) | (_, EnumId::Swizzles64Bit) => match w {
                2 => half(0),
                3 => half(1),
                4..=7 => byte(w - 4),
                _ => 0xF,
            },
            (_, EnumId::Swizzles16Bit) => match w {
                0 => half(0),
                3 => half(1),
                1 | 2 => 0xF,
                _ => {
                    let (x, y) = SWZ16_BYTES[usize::from(w.min(13) - 4)];
                    byte(x) | byte(y)
                }
            },
            (_, EnumId::Swizzles8Bit) => {
                let d = SWZ8_BYTES[usize::from(w.min(11))];
                d.iter().fold(0, |acc, &b| acc | byte(b))
            }
            _ => 0xF,
        };
    }
    0xF
}

/// The 16-bit halves covered by a byte mask.
pub(crate) fn halves_of(bytes: u8) -> u8 {
    u8::from(bytes & 0b0011 != 0) | u8::from(bytes & 0b1100 != 0) << 1
}

/// Byte pairs of the `swizzles_16_bit` byte forms (indices 4–13): lane 0 takes byte x, lane 1
/// byte y.
pub(crate) const SWZ16_BYTES: [(u8, u8); 10] =
    [(0, 0), (2, 0), (0, 2), (2, 2), (1, 1), (3, 1), (1, 3), (3, 3), (0, 1), (2, 3)];

/// Source byte of each result byte for the `swizzles_8_bit` values 0–11.
pub(crate) const SWZ8_BYTES: [[u8; 4]; 12] = [
    [0, 1, 2, 3],
    [3, 2, 1, 0],
    [0, 1, 0, 1],
    [2, 3, 2, 3],
    [0, 0, 0, 0],
    [1, 1, 1, 1],
    [2, 2, 2, 2],
    [3, 3, 3, 3],
    [2, 3, 0, 1],
    [1, 0, 3, 2],
    [0, 0, 1, 1],
    [2, 2, 3, 3],
];
