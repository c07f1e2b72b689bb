//! Lowering: a checked TGSI program → a scalar SSA [`ir::Shader`] plus what the metadata needs.
//!
//! ```text
//! Program ─prologue (inputs, system values)─► per instruction: read sources (swizzle,
//!   modifiers, indirect), one recipe per opcode family, write destinations (mask, saturate)
//!   ─► epilogue (fragment ATEST/ZS_EMIT/BLEND, vertex position transform and stores)
//! ```
//!
//! * Registers become SSA values through [`ssa::SsaState`]: TGSI's control flow is structured,
//!   so each construct (IF, loop, SWITCH, inlined subroutine, the main program) is a frame and
//!   φs are placed at its joins.
//! * Blocks are created in any order and laid out in the order they become current, which is
//!   program order; unreachable blocks (code after BRK/CONT/RET) are removed afterwards.
//! * Opcode families live in their own files (`alu`, `transcendental`, `int`, `bits`,
//!   `convert`, `texture`, `memory`); `io` handles the per-stage ABI (docs/metadata.md).
//! * Every opcode either lowers or is rejected with an error naming it, its line and why.

mod alu;
mod bits;
mod convert;
mod decls;
mod int;
mod io;
mod memory;
mod operand;
mod ssa;
mod subgroup;
pub mod support;
mod texture;
mod transcendental;

use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::emit::meta;
use crate::ir::{Block, Inst, InstId, InstKind, Shader, Stage, Terminator, Value};
use crate::tgsi::ast::{File, Instruction, Processor, Program, Statement};
use crate::tgsi::opcodes::{FlowRole, Opcode};
use operand::is_variable_file;
use rustc_hash::FxHashMap;
use ssa::{Snapshot, SsaState, Var};

pub use io::FauLayout;

/// Registers with an index below this have their variables in a dense table.
const DENSE_REGISTERS: usize = 4096;

/// A target GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gpu {
    /// Arm's name, e.g. `Mali-G57`.
    pub name: &'static str,
    /// Valhall architecture version (9 or 10).
    pub arch: u32,
}

impl Gpu {
    pub const ALL: [Gpu; 8] = [
        Gpu { name: "Mali-G57", arch: 9 },
        Gpu { name: "Mali-G68", arch: 9 },
        Gpu { name: "Mali-G77", arch: 9 },
        Gpu { name: "Mali-G78", arch: 9 },
        Gpu { name: "Mali-G310", arch: 10 },
        Gpu { name: "Mali-G510", arch: 10 },
        Gpu { name: "Mali-G610", arch: 10 },
        Gpu { name: "Mali-G710", arch: 10 },
    ];

    /// The default target: v9, Mali-G57.
    pub const DEFAULT: Gpu = Gpu::ALL[0];

    /// Parses `v9`, `v10`, `G57`, `Mali-G57`, `mali-g610`, … (case-insensitive).
    pub fn parse(text: &str) -> Option<Gpu> {
        let lower = text.to_ascii_lowercase();
        match lower.as_str() {
            "v9" | "valhall" => return Some(Gpu::DEFAULT),
            "v10" => return Some(Gpu::ALL[6]),
            _ => {}
        }
        let model = lower.strip_prefix("mali-").unwrap_or(&lower);
        Gpu::ALL.into_iter().find(|g| g.name[5..].eq_ignore_ascii_case(model))
    }
}

/// Lowering options.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub gpu: Gpu,
}

impl Default for Options {
    fn default() -> Options {
        Options { gpu: Gpu::DEFAULT }
    }
}

/// The result of lowering.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub shader: Shader,
    /// The metadata lowering knows (the back end adds variants and register counts).
    pub meta: meta::Metadata,
    /// Some constant-buffer load sits in the entry block for its readers' sake (work for
    /// [`crate::opt::sink`]).
    pub hoisted_loads: bool,
}

/// Lowers a checked program.
pub fn lower(program: &Program, options: &Options) -> Result<Lowered, Diagnostics> {
    let stage = match program.processor() {
        Processor::Vert => Stage::Vertex,
        Processor::Frag => Stage::Fragment,
        Processor::Comp => Stage::Compute,
        other => {
            let message = format!("{} shaders cannot run on Valhall through this compiler", other.name());
            return Err(Diagnostic::error("E0300", program.header.span, message)
                .with_note(
                    "Mali Valhall has no geometry or tessellation stage in hardware (panfrost does not expose \
                     them either); tgsi2va compiles vertex (VERT), fragment (FRAG) and compute (COMP) shaders",
                )
                .into());
        }
    };
    let mut ctx = Ctx::new(program, stage, options);
    ctx.run();
    if ctx.errors.is_empty() { Ok(ctx.finish()) } else { Err(Diagnostics(ctx.errors)) }
}

/// A set of variables as flags indexed by variable.
struct SeenVars(Vec<bool>);

impl SeenVars {
    /// Adds `var`; returns whether it was new (as `HashSet::insert`).
    fn insert(&mut self, var: Var) -> bool {
        let i = var.0 as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, false);
        }
        !std::mem::replace(&mut self.0[i], true)
    }
}

/// A construct being lowered.
enum Construct {
    If {
        header: Block,
        else_block: Block,
        /// Set at ELSE: the end of the then-branch and its state.
        then: Option<(Block, Snapshot)>,
    },
    Loop {
        header: Block,
        exit: Block,
        /// Variables the loop may write; header φs, one per variable.
        written: Vec<Var>,
        phis: Vec<InstId>,
        /// Values of `written` on each edge into the header, in predecessor order.
        header_edges: Vec<Vec<Option<Value>>>,
        /// Values of `written` on each edge into the exit (BRK), in predecessor order.
        exit_edges: Vec<Vec<Option<Value>>>,
    },
    Switch {
        exit: Block,
        /// First block of each CASE/DEFAULT body, in order.
        bodies: Vec<Block>,
        next_body: usize,
        exit_edges: Vec<Snapshot>,
        /// State on the edges from the dispatch chain: the entry state.
        entered: bool,
    },
    /// An inlined subroutine, or the main program.
    Routine { exit: Block, exit_edges: Vec<Snapshot> },
}

/// The lowering context: the program, the shader being built and the current position.
pub(crate) struct Ctx<'p> {
    pub program: &'p Program,
    pub insts: Vec<&'p Instruction>,
    pub stage: Stage,
    pub options: Options,
    pub shader: Shader,
    /// The block instructions are appended to.
    pub block: Block,
    /// Blocks in the order they became current.
    layout: Vec<Block>,
    /// Where the main program stops: its top-level END, or the first BGNSUB, or the end.
    main_end: usize,
    pub ssa: SsaState,
    /// First variable of each register (4 consecutive variables, x y z w), by file and index
    /// (`u32::MAX`: none yet) for indices below [`DENSE_REGISTERS`]: every source and
    /// destination component asks, so this is a table rather than a map.
    reg_vars: Vec<Vec<u32>>,
    /// The same for registers with larger or negative indices.
    sparse_reg_vars: FxHashMap<(File, i64), Var>,
    /// The stand-in for undefined values (one zero shared by every variable), once made.
    undef: Option<Value>,
    constructs: Vec<Construct>,
    /// For every control-flow opening instruction, the index of its closing one; for IF also
    /// the ELSE (`else_of`). Empty when the program has no opening instruction.
    end_of: Vec<usize>,
    /// BGNSUB instruction indices by their label position.
    subs: FxHashMap<usize, usize>,
    /// Subroutines being inlined (to reject recursion).
    call_stack: Vec<usize>,
    /// Hidden iteration counters of open REP loops.
    rep_counters: Vec<Var>,
    /// IMM[n] values.
    pub imms: Vec<[u32; 4]>,
    pub fau: FauLayout,
    pub io: io::IoState,
    pub meta_out: meta::Metadata,
    pub errors: Vec<Diagnostic>,
    /// Instruction being lowered (for diagnostics).
    pub current: usize,
    /// A reusable buffer for joins.
    scratch_vars: Vec<Var>,
    /// The declarations indexed for lookups by register.
    pub decls: decls::Declarations<'p>,
}

impl<'p> Ctx<'p> {
    fn new(program: &'p Program, stage: Stage, options: &Options) -> Ctx<'p> {
        // One walk over the statements for the instructions, immediates and declarations, the
        // end of the main program and whether any construct needs pairing.
        let mut insts: Vec<&Instruction> = Vec::with_capacity(program.statements.len());
        let mut imms = Vec::new();
        let mut reg_vars = vec![Vec::new(); File::ALL.len()];
        let mut declared_vars = 0;
        let mut main_end = None;
        let mut depth = 0i32;
        let mut openings = 0usize;
        for statement in &program.statements {
            match statement {
                Statement::Instruction(i) => {
                    let info = i.opcode.info();
                    // The main program stops at the first END or BGNSUB outside constructs.
                    match info.flow {
                        Some(FlowRole::If | FlowRole::LoopBegin | FlowRole::Switch) => depth += 1,
                        Some(FlowRole::EndIf | FlowRole::LoopEnd | FlowRole::EndSwitch) => depth -= 1,
                        Some(FlowRole::End | FlowRole::SubBegin) if depth <= 0 && main_end.is_none() => {
                            main_end = Some(insts.len());
                        }
                        _ => {}
                    }
                    let canonical_flow = info.canonical.map_or(info.flow, |c| c.info().flow);
                    if let Some(FlowRole::If | FlowRole::LoopBegin | FlowRole::Switch | FlowRole::SubBegin) =
                        canonical_flow
                    {
                        openings += 1;
                    }
                    insts.push(i);
                }
                Statement::Immediate(i) => imms.push(i.words),
                // The variable tables, sized from the declarations (registers without one
                // still work).
                Statement::Declaration(d) if is_variable_file(d.file) => {
                    let end = (d.last as usize + 1).min(DENSE_REGISTERS);
                    let table: &mut Vec<u32> = &mut reg_vars[d.file as usize];
                    if table.len() < end {
                        table.resize(end, u32::MAX);
                    }
                    declared_vars += 4 * end.saturating_sub(d.first as usize);
                }
                _ => {}
            }
        }
        // Recipes average 3–4 IR instructions per TGSI statement (the samples: 3.3); reserving
        // for that avoids most regrowth of the arenas while the shader is built (the constant
        // covers small shaders with long recipes: texturing, 64-bit division). Straight-line
        // code all lands in the entry block, so its list gets the same room.
        let shader = Shader::with_capacity(stage, 4 * insts.len() + 256, 5 * insts.len() + 256);
        // Blocks become current about three times per control-flow construct.
        let mut layout = Vec::with_capacity(3 * openings + 4);
        layout.push(Block(0));
        Ctx {
            program,
            // Filled by `match_constructs`.
            end_of: if openings > 0 { vec![usize::MAX; insts.len()] } else { Vec::new() },
            main_end: main_end.unwrap_or(insts.len()),
            insts,
            stage,
            options: *options,
            shader,
            block: Block(0),
            layout,
            ssa: SsaState::with_capacity(declared_vars + 16),
            reg_vars,
            sparse_reg_vars: FxHashMap::default(),
            undef: None,
            constructs: Vec::new(),
            subs: FxHashMap::default(),
            call_stack: Vec::new(),
            rep_counters: Vec::new(),
            imms,
            fau: FauLayout::default(),
            io: io::IoState::default(),
            meta_out: meta::Metadata::default(),
            errors: Vec::new(),
            current: 0,
            scratch_vars: Vec::new(),
            decls: decls::Declarations::new(program),
        }
    }

    fn run(&mut self) {
        if !self.end_of.is_empty() {
            self.match_constructs();
        }
        io::prologue(self);
        // The main program is a routine whose exit is the epilogue block.
        let epilogue = self.shader.add_block();
        self.ssa.open();
        self.constructs.push(Construct::Routine { exit: epilogue, exit_edges: Vec::new() });
        self.lower_range(0, self.main_end);
        self.close_routine();
        if self.errors.is_empty() {
            io::epilogue(self);
        }
        io::finish_metadata(self);
    }

    /// Pairs every opening instruction with its closing one (the checker guarantees nesting;
    /// unbalanced input is rejected there).
    fn match_constructs(&mut self) {
        let mut stack: Vec<usize> = Vec::new();
        for (i, inst) in self.insts.iter().enumerate() {
            match inst.opcode.canonical().info().flow {
                Some(FlowRole::If | FlowRole::LoopBegin | FlowRole::Switch | FlowRole::SubBegin) => stack.push(i),
                Some(FlowRole::EndIf | FlowRole::LoopEnd | FlowRole::EndSwitch | FlowRole::SubEnd) => {
                    if let Some(open) = stack.pop() {
                        self.end_of[open] = i;
                        if inst.opcode.info().flow == Some(FlowRole::SubEnd) {
                            self.subs.insert(open, open);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    // ---- Blocks -------------------------------------------------------------------------------

    /// A new block (not yet current).
    pub fn new_block(&mut self) -> Block {
        self.shader.add_block()
    }

    /// Makes `block` current; layout follows this order.
    pub fn switch_to(&mut self, block: Block) {
        // Blocks start empty; a little room up front saves their first regrowths.
        self.shader.block_mut(block).insts.reserve(8);
        self.block = block;
        self.layout.push(block);
    }

    /// Ends the current block with `term` and continues in a fresh, unreachable block (code
    /// after BRK, CONT or RET).
    fn end_block_unreachable(&mut self, term: Terminator) {
        self.shader.set_terminator(self.block, term);
        let dead = self.new_block();
        self.switch_to(dead);
    }

    pub fn builder(&mut self) -> crate::ir::builder::Builder<'_> {
        crate::ir::builder::Builder::new(&mut self.shader, self.block)
    }

    /// A builder appending to the end of the entry block (values that must dominate every use:
    /// inputs, system values, undefined stand-ins).
    pub fn entry_builder(&mut self) -> crate::ir::builder::Builder<'_> {
        let at = self.shader.block(Block(0)).insts.len();
        crate::ir::builder::Builder::before(&mut self.shader, Block(0), at)
    }

    // ---- Variables ----------------------------------------------------------------------------

    /// The variable of component `c` (0–3) of a register.
    #[inline]
    pub fn var(&mut self, file: File, index: i64, c: usize) -> Var {
        // Every source and destination component asks: the common case first.
        if let Ok(i) = usize::try_from(index)
            && let Some(&first) = self.reg_vars[file as usize].get(i)
            && first != u32::MAX
        {
            return Var(first + c as u32);
        }
        self.new_var_of(file, index, c)
    }

    /// [`Ctx::var`] of a register met for the first time (or with a large or negative index).
    #[inline(never)]
    fn new_var_of(&mut self, file: File, index: i64, c: usize) -> Var {
        let base = match usize::try_from(index) {
            Ok(i) if i < DENSE_REGISTERS => {
                let table = &mut self.reg_vars[file as usize];
                if table.len() <= i {
                    table.resize(i + 1, u32::MAX);
                }
                match table[i] {
                    u32::MAX => {
                        let first = self.new_register_vars();
                        self.reg_vars[file as usize][i] = first.0;
                        first
                    }
                    first => Var(first),
                }
            }
            _ => match self.sparse_reg_vars.get(&(file, index)) {
                Some(&v) => v,
                None => {
                    let first = self.new_register_vars();
                    self.sparse_reg_vars.insert((file, index), first);
                    first
                }
            },
        };
        Var(base.0 + c as u32)
    }

    /// Four consecutive new variables (x y z w of one register); returns the first.
    fn new_register_vars(&mut self) -> Var {
        self.ssa.new_vars(4)
    }

    /// The current value of a variable (an undefined stand-in when never written).
    #[inline]
    pub fn read_var(&mut self, var: Var) -> Value {
        match self.ssa.read(var) {
            Some(v) => v,
            None => self.undef_value(),
        }
    }

    /// The value of a variable never written on some path. TGSI leaves it undefined; we read 0
    /// (one shared zero), so the hardware never reads a register nothing wrote and results do not
    /// depend on leftovers.
    #[inline(never)]
    fn undef_value(&mut self) -> Value {
        match self.undef {
            Some(zero) => zero,
            None => {
                let zero = self.entry_builder().konst(0);
                self.undef = Some(zero);
                zero
            }
        }
    }

    fn value_or_undef(&mut self, value: Option<Value>) -> Value {
        match value {
            Some(v) => v,
            None => self.undef_value(),
        }
    }

    /// A φ in `block` (placed after the existing φs) with the given arguments.
    fn phi(&mut self, block: Block, args: &[Value]) -> Value {
        if args.iter().all(|&a| a == args[0]) && !args.is_empty() {
            return args[0];
        }
        // Joins get their φs before anything else, so the position is usually the end.
        let list = &self.shader.block(block).insts;
        let at = if list.last().is_none_or(|&i| self.shader.inst(i).kind == InstKind::Phi) {
            list.len()
        } else {
            self.shader.block_insts(block).take_while(|&i| self.shader.inst(i).kind == InstKind::Phi).count()
        };
        crate::ir::builder::Builder::before(&mut self.shader, block, at).phi(args)
    }

    // ---- Diagnostics --------------------------------------------------------------------------

    pub fn inst_span(&self) -> Span {
        self.insts.get(self.current).map_or(Span::default(), |i| i.span)
    }

    /// Rejects the current instruction: `what` is unsupported, `why` says why.
    pub fn unsupported(&mut self, what: &str, why: &str) {
        let span = self.inst_span();
        let opcode_span = self.insts.get(self.current).map_or(span, |i| i.opcode_span);
        self.errors.push(
            Diagnostic::error("E0301", opcode_span, format!("{what} cannot be compiled for Valhall"))
                .with_label("not supported")
                .with_note(why.to_string()),
        );
    }

    // ---- Walking the program ------------------------------------------------------------------

    fn lower_range(&mut self, start: usize, end: usize) {
        let mut pc = start;
        while pc < end {
            self.current = pc;
            let inst = self.insts[pc];
            let opcode = inst.opcode.canonical();
            match opcode.info().flow {
                Some(FlowRole::SubBegin) => {
                    // A subroutine body met in line: only reached through CAL.
                    pc = self.end_of[pc].saturating_add(1);
                    continue;
                }
                Some(FlowRole::End) => {
                    self.routine_return();
                    if self.constructs.len() == 1 {
                        return;
                    }
                }
                Some(_) => self.control_flow(pc, opcode),
                None => self.instruction(inst, opcode),
            }
            if self.errors.len() >= 50 {
                return;
            }
            pc += 1;
        }
    }

    fn instruction(&mut self, inst: &'p Instruction, opcode: Opcode) {
        if inst.predicate.is_some() {
            return self
                .unsupported("a predicated instruction", "legacy predicates (PRED registers) are not supported");
        }
        match opcode {
            // NOP, and the unassigned opcode numbers (`UNKnnn`), which the opcode table defines
            // as doing nothing (the interpreter agrees).
            Opcode::Nop => return,
            _ if opcode.info().status == crate::tgsi::opcodes::Status::Gap => return,
            Opcode::Clock => {
                return self.unsupported(
                    "CLOCK",
                    "Valhall reads the shader clock with LD_GCLK.u64 (primary opcode 0x44, source \
                     `cycle_counter`), which this compiler's ISA tables (isa/valhall.isa, from the Mesa \
                     25.0 description) do not contain, so it cannot be encoded",
                );
            }
            _ => {}
        }
        let lowered = alu::lower(self, inst, opcode)
            || int::lower(self, inst, opcode)
            || subgroup::lower(self, inst, opcode)
            || bits::lower(self, inst, opcode)
            || convert::lower(self, inst, opcode)
            || transcendental::lower(self, inst, opcode)
            || texture::lower(self, inst, opcode)
            || memory::lower(self, inst, opcode)
            || io::lower(self, inst, opcode);
        if !lowered {
            let name = inst.opcode.name();
            let info = inst.opcode.info();
            let doubles =
                info.dst_types.iter().chain(info.src_types).any(|t| *t == crate::tgsi::opcodes::OperandType::D);
            let why = match info.status {
                _ if doubles => "double precision: Valhall has no binary64 arithmetic (no FP64 unit, no \
                                 encoding in the ISA) and panfrost exposes no doubles; this compiler does not \
                                 emulate binary64 in software — compute in 32-bit float"
                    .to_string(),
                crate::tgsi::opcodes::Status::Current | crate::tgsi::opcodes::Status::Gap => {
                    "this opcode has no Valhall lowering (see docs/tgsi-support.md)".to_string()
                }
                _ => match opcode {
                    Opcode::Index => "INDEX (an EXT_vertex_shader array lookup) was never given semantics by any \
                                      Mesa release, and no driver implemented it"
                        .to_string(),
                    Opcode::Noise1 | Opcode::Noise2 | Opcode::Noise3 | Opcode::Noise4 => {
                        "TGSI never specified the NOISE opcodes (GLSL noise*() has no defined value) and Mesa \
                         removed them in 7.7 without any driver implementing them"
                            .to_string()
                    }
                    Opcode::Pusha | Opcode::Popa => "the NV_vertex_program3 address-register stack was never \
                                                     specified by TGSI nor implemented by any driver"
                        .to_string(),
                    _ => format!("legacy opcode with no defined meaning here ({})", inst.opcode.info().recipe),
                },
            };
            self.unsupported(name, &why);
        }
    }

    fn control_flow(&mut self, pc: usize, opcode: Opcode) {
        let inst = self.insts[pc];
        // ENDREP's canonical form is ENDLOOP, but it also counts the REP down.
        let opcode = if inst.opcode == Opcode::Endrep { Opcode::Endrep } else { opcode };
        match opcode {
            Opcode::If | Opcode::Uif => {
                let cond = operand::condition(self, inst, opcode == Opcode::If);
                let header = self.block;
                let then_block = self.new_block();
                let else_block = self.new_block();
                self.shader.set_terminator(
                    header,
                    Terminator::Branch { cond, if_zero: true, taken: else_block, fallthrough: then_block },
                );
                self.ssa.open();
                self.constructs.push(Construct::If { header, else_block, then: None });
                self.switch_to(then_block);
            }
            Opcode::Else => {
                let Some(Construct::If { then, else_block, .. }) = self.constructs.last_mut() else {
                    return self.unsupported("ELSE", "ELSE outside IF");
                };
                let else_block = *else_block;
                *then = Some((self.block, Snapshot::default()));
                let snap = self.ssa.snapshot();
                if let Some(Construct::If { then: Some((_, s)), .. }) = self.constructs.last_mut() {
                    *s = snap;
                }
                self.ssa.restore_entry();
                self.switch_to(else_block);
            }
            Opcode::Endif => self.end_if(),
            Opcode::Bgnloop => self.begin_loop(pc, &[]),
            Opcode::Bgnfor => self.begin_for(pc),
            Opcode::Endfor => self.end_for(),
            Opcode::Rep => self.begin_rep(pc),
            Opcode::Endrep => self.end_rep(),
            Opcode::Breakc => {
                let cond = operand::condition(self, inst, false);
                self.break_if(cond, true);
            }
            Opcode::Ifc => self.unsupported("IFC", "its comparison was never specified by any Mesa release"),
            Opcode::Callnz => self.unsupported("CALLNZ", "TGSI text cannot name its call target"),
            Opcode::Loop | Opcode::EndloopLegacy => {
                self.unsupported(inst.opcode.name(), "the Mesa 7.5 NV loop has no operands to give it a count")
            }
            Opcode::Endloop => self.end_loop(),
            Opcode::Brk => self.brk(),
            Opcode::Cont => self.cont(),
            Opcode::Switch => self.begin_switch(pc),
            Opcode::Case | Opcode::Default => self.switch_label(),
            Opcode::Endswitch => self.end_switch(),
            Opcode::Cal => self.call(pc),
            Opcode::Ret => self.routine_return(),
            Opcode::Kill | Opcode::KillIf | Opcode::Demote => io::kill(self, inst, opcode),
            Opcode::Nop => {}
            Opcode::Barrier | Opcode::Membar => io::barrier(self, inst, opcode),
            Opcode::Emit | Opcode::Endprim => {
                self.unsupported(inst.opcode.name(), "only geometry shaders emit vertices")
            }
            Opcode::Bra => self.unsupported(
                "BRA",
                "BRA is an unstructured branch of NV programs that TGSI never implemented; the compiler needs \
                 structured control flow (IF/UIF, BGNLOOP, SWITCH, CAL)",
            ),
            _ => self.unsupported(inst.opcode.name(), "this control-flow form is not supported"),
        }
    }

    fn end_if(&mut self) {
        let Some(Construct::If { header, else_block, then }) = self.constructs.pop() else {
            return self.unsupported("ENDIF", "ENDIF outside IF");
        };
        let n = self.ssa.logged_count();
        let logged: Vec<Var> = self.ssa.logged().collect();
        let merged: Vec<Value> = match then {
            None => {
                // No ELSE: the else block is the join, reached from the header and the then end.
                let then_end = self.block;
                self.shader.set_terminator(then_end, Terminator::Jump(else_block));
                self.switch_to(else_block);
                let _ = header;
                (0..n)
                    .map(|k| {
                        let var = logged[k];
                        let entry = self.ssa.entry_value(k);
                        let entry = self.value_or_undef(entry);
                        let now = self.read_var(var);
                        self.phi(else_block, &[entry, now])
                    })
                    .collect()
            }
            Some((then_end, then_state)) => {
                let else_end = self.block;
                let join = self.new_block();
                self.shader.set_terminator(then_end, Terminator::Jump(join));
                self.shader.set_terminator(else_end, Terminator::Jump(join));
                self.switch_to(join);
                (0..n)
                    .map(|k| {
                        let var = logged[k];
                        let from_then = self.ssa.value_at(&then_state, k);
                        let from_then = self.value_or_undef(from_then);
                        let from_else = self.read_var(var);
                        self.phi(join, &[from_then, from_else])
                    })
                    .collect()
            }
        };
        self.ssa.close();
        for (var, value) in logged.into_iter().zip(merged) {
            self.ssa.write(var, value);
        }
    }

    /// Variables the instructions in `start..end` may write (following CAL into subroutines).
    fn written_in(&mut self, start: usize, end: usize, visiting: &mut Vec<usize>) -> Vec<Var> {
        let mut vars = Vec::new();
        // Variables are small dense indices: a table of flags rather than a hash set.
        let mut seen = SeenVars(Vec::new());
        let mut dst_vars = Vec::new();
        for pc in start..end.min(self.insts.len()) {
            let inst = self.insts[pc];
            if inst.opcode.canonical() == Opcode::Cal
                && let Some(sub) = self.sub_for(inst)
                && !visiting.contains(&sub)
            {
                visiting.push(sub);
                let inner = self.written_in(sub + 1, self.end_of[sub], visiting);
                visiting.pop();
                for v in inner {
                    if seen.insert(v) {
                        vars.push(v);
                    }
                }
            }
            if inst.opcode.canonical() == Opcode::Demote
                && let Some(v) = self.io.demoted
                && seen.insert(v)
            {
                vars.push(v);
            }
            for dst in &inst.dst {
                dst_vars.clear();
                operand::dst_vars(self, dst, &mut dst_vars);
                for &v in &dst_vars {
                    if seen.insert(v) {
                        vars.push(v);
                    }
                }
            }
        }
        vars
    }

    fn begin_loop(&mut self, pc: usize, extra: &[Var]) {
        let end = self.end_of[pc];
        let mut written = self.written_in(pc + 1, end, &mut Vec::new());
        for &v in extra {
            if !written.contains(&v) {
                written.push(v);
            }
        }
        let preheader = self.block;
        let header = self.new_block();
        let exit = self.new_block();
        self.shader.set_terminator(preheader, Terminator::Jump(header));
        let entry: Vec<Option<Value>> = written.iter().map(|&v| self.ssa.read(v)).collect();
        self.switch_to(header);
        let mut phis = Vec::with_capacity(written.len());
        for &var in &written {
            let mut phi = Inst::pseudo(InstKind::Phi);
            phi.dests = self.shader.new_values(1);
            let id = self.shader.push(header, phi);
            let value = self.shader.get(self.shader.inst(id).dests)[0];
            self.ssa.write(var, value);
            phis.push(id);
        }
        self.constructs.push(Construct::Loop {
            header,
            exit,
            written,
            phis,
            header_edges: vec![entry],
            exit_edges: Vec::new(),
        });
    }

    /// The innermost loop, or `None` (with an error) when there is none.
    fn loop_state(&mut self) -> Option<(Block, Block, Vec<Option<Value>>)> {
        let ssa = &self.ssa;
        let found = self.constructs.iter().rev().find_map(|c| match c {
            Construct::Loop { header, exit, written, .. } => {
                Some((*header, *exit, written.iter().map(|&v| ssa.read(v)).collect()))
            }
            _ => None,
        });
        if found.is_none() {
            self.unsupported("BRK/CONT", "it is not inside a loop");
        }
        found
    }

    fn brk(&mut self) {
        // BRK leaves the innermost loop or SWITCH, whichever is closer.
        let target_is_switch = self
            .constructs
            .iter()
            .rev()
            .find(|c| matches!(c, Construct::Loop { .. } | Construct::Switch { .. }))
            .is_some_and(|c| matches!(c, Construct::Switch { .. }));
        if target_is_switch {
            return self.switch_break();
        }
        let Some((_, exit, values)) = self.loop_state() else { return };
        if let Some(Construct::Loop { exit_edges, .. }) =
            self.constructs.iter_mut().rev().find(|c| matches!(c, Construct::Loop { .. }))
        {
            exit_edges.push(values);
        }
        self.end_block_unreachable(Terminator::Jump(exit));
    }

    fn cont(&mut self) {
        let Some((header, _, values)) = self.loop_state() else { return };
        if let Some(Construct::Loop { header_edges, .. }) =
            self.constructs.iter_mut().rev().find(|c| matches!(c, Construct::Loop { .. }))
        {
            header_edges.push(values);
        }
        self.end_block_unreachable(Terminator::Jump(header));
    }

    fn end_loop(&mut self) {
        let Some((header, ..)) = self.loop_state() else { return };
        let latch_values = match self.constructs.last() {
            Some(Construct::Loop { written, .. }) => written.iter().map(|&v| self.ssa.read(v)).collect(),
            _ => return self.unsupported("ENDLOOP", "the innermost open construct is not a loop"),
        };
        self.shader.set_terminator(self.block, Terminator::Jump(header));
        let Some(Construct::Loop { exit, written, phis, mut header_edges, exit_edges, .. }) = self.constructs.pop()
        else {
            return;
        };
        header_edges.push(latch_values);
        // Header φs: one argument per header predecessor, in predecessor order (the edges were
        // recorded in the same order the predecessors were added).
        // One argument buffer for all φs (a join may merge many variables).
        let mut args: Vec<Value> = Vec::with_capacity(header_edges.len().max(exit_edges.len()));
        for (k, &phi) in phis.iter().enumerate() {
            args.clear();
            for edge in &header_edges {
                let v = self.value_or_undef(edge[k]);
                args.push(v);
            }
            let list = self.shader.list(&args);
            self.shader.inst_mut(phi).args = list;
        }
        self.switch_to(exit);
        for (k, &var) in written.iter().enumerate() {
            let value = if exit_edges.is_empty() {
                // An infinite loop: the exit is unreachable.
                self.undef_value()
            } else {
                args.clear();
                for edge in &exit_edges {
                    let v = self.value_or_undef(edge[k]);
                    args.push(v);
                }
                self.phi(exit, &args)
            };
            self.ssa.write(var, value);
        }
    }

    /// Leaves the innermost loop when `cond` is non-zero (`when_nonzero`) or zero.
    fn break_if(&mut self, cond: Value, when_nonzero: bool) {
        let leave = self.new_block();
        let stay = self.new_block();
        self.shader.set_terminator(
            self.block,
            Terminator::Branch { cond, if_zero: !when_nonzero, taken: leave, fallthrough: stay },
        );
        self.switch_to(leave);
        self.brk();
        // `brk` continues in an unreachable block: close it.
        self.shader.set_terminator(self.block, Terminator::Jump(stay));
        self.switch_to(stay);
    }

    /// Legacy `BGNFOR dst, src`: `dst.xyz = floor(src.xyz)` as (index, count, step); the body is
    /// skipped while the count is not positive.
    fn begin_for(&mut self, pc: usize) {
        let inst = self.insts[pc];
        let mut values = [None; 4];
        for (c, v) in values.iter_mut().enumerate().take(3) {
            let x = operand::fsrc(self, inst, 0, c);
            let floor = self.builder().fround(x, crate::valhall::tables::RoundMode::Rtn);
            *v = Some(self.builder().f2i(true, floor, crate::valhall::tables::RoundMode::Rtz));
        }
        operand::write(self, inst, 0, values, operand::Kind::Int);
        self.begin_loop(pc, &[]);
        let count = operand::dst_component(self, inst, 1);
        let positive = self.builder().icmp(
            true,
            crate::valhall::tables::Condition::Gt,
            count,
            crate::ir::Src::konst(0),
            crate::valhall::tables::ResultType::M1,
        );
        self.break_if(positive, false);
    }

    /// Legacy `ENDFOR dst`: `dst.x += dst.z`, `dst.y -= 1`, back to the loop head.
    fn end_for(&mut self) {
        let inst = self.insts[self.current];
        let (index, step, count) = (
            operand::dst_component(self, inst, 0),
            operand::dst_component(self, inst, 2),
            operand::dst_component(self, inst, 1),
        );
        let next = self.builder().iadd(index, step);
        let left = self.builder().iadd_imm(count, u32::MAX);
        let mut values = [None; 4];
        values[0] = Some(next);
        values[1] = Some(left);
        operand::write_all_channels(self, inst, 0, values);
        self.end_loop();
    }

    /// Legacy `REP src`: repeat the body `trunc(src.x)` times (a hidden counter; the count is
    /// a float, converted like F2I).
    fn begin_rep(&mut self, pc: usize) {
        let inst = self.insts[pc];
        let count = operand::isrc(self, inst, 0, 0);
        let count = self.builder().f2i(true, count, crate::valhall::tables::RoundMode::Rtz);
        let counter = self.ssa.new_var();
        self.ssa.write(counter, count);
        self.rep_counters.push(counter);
        self.begin_loop(pc, &[counter]);
        let now = self.read_var(counter);
        let positive = self.builder().icmp(
            true,
            crate::valhall::tables::Condition::Gt,
            now,
            crate::ir::Src::konst(0),
            crate::valhall::tables::ResultType::M1,
        );
        self.break_if(positive, false);
    }

    fn end_rep(&mut self) {
        let Some(counter) = self.rep_counters.pop() else {
            return self.unsupported("ENDREP", "it does not close a REP");
        };
        let now = self.read_var(counter);
        let left = self.builder().iadd_imm(now, u32::MAX);
        self.ssa.write(counter, left);
        self.end_loop();
    }

    fn begin_switch(&mut self, pc: usize) {
        let inst = self.insts[pc];
        let selector = operand::read_raw(self, inst, 0, 0);
        let end = self.end_of[pc];
        // CASE/DEFAULT labels of this SWITCH (not of nested ones).
        let mut labels: Vec<(usize, Option<u32>)> = Vec::new();
        let mut depth = 0;
        for i in pc + 1..end {
            match self.insts[i].opcode.info().flow {
                Some(FlowRole::Switch) => depth += 1,
                Some(FlowRole::EndSwitch) => depth -= 1,
                Some(FlowRole::Case) if depth == 0 => {
                    let value = operand::case_value(self, self.insts[i]);
                    labels.push((i, Some(value)));
                }
                Some(FlowRole::Default) if depth == 0 => labels.push((i, None)),
                _ => {}
            }
        }
        let exit = self.new_block();
        let bodies: Vec<Block> = labels.iter().map(|_| self.new_block()).collect();
        // Dispatch chain: one comparison and branch per CASE value, then DEFAULT or the exit.
        for (k, &(_, value)) in labels.iter().enumerate() {
            if let Some(value) = value {
                let cond = self.builder().icmp(
                    false,
                    crate::valhall::tables::Condition::Eq,
                    selector,
                    crate::ir::Src::konst(value),
                    crate::valhall::tables::ResultType::M1,
                );
                let next = self.new_block();
                self.shader.set_terminator(
                    self.block,
                    Terminator::Branch { cond, if_zero: false, taken: bodies[k], fallthrough: next },
                );
                self.switch_to(next);
            }
        }
        let default = labels.iter().position(|(_, v)| v.is_none()).map(|k| bodies[k]);
        self.ssa.open();
        let mut exit_edges = Vec::new();
        match default {
            Some(d) => self.shader.set_terminator(self.block, Terminator::Jump(d)),
            None => {
                self.shader.set_terminator(self.block, Terminator::Jump(exit));
                exit_edges.push(self.ssa.snapshot());
            }
        }
        // Instructions before the first label are unreachable.
        let dead = self.new_block();
        self.switch_to(dead);
        self.constructs.push(Construct::Switch { exit, bodies, next_body: 0, exit_edges, entered: false });
    }

    fn switch_label(&mut self) {
        let Some(Construct::Switch { bodies, next_body, entered, .. }) = self.constructs.last_mut() else {
            return self.unsupported("CASE/DEFAULT", "it is not directly inside a SWITCH");
        };
        let body = bodies[*next_body];
        let first = !*entered;
        *next_body += 1;
        *entered = true;
        // Fall-through from the previous body (unreachable before the first label).
        let fallthrough = self.ssa.snapshot();
        let from = self.block;
        self.shader.set_terminator(from, Terminator::Jump(body));
        self.ssa.restore_entry();
        self.switch_to(body);
        if first {
            return;
        }
        // Predecessors: the dispatch edge (entry state) then the fall-through edge, unless the
        // body has no dispatch edge (a label shared with the previous one's fall-through).
        let preds = self.shader.block(body).preds.clone();
        let logged: Vec<Var> = self.ssa.logged().collect();
        let values: Vec<Value> = (0..logged.len())
            .map(|k| {
                let args: Vec<Value> = preds
                    .iter()
                    .map(|&p| {
                        let v = if p == from { self.ssa.value_at(&fallthrough, k) } else { self.ssa.entry_value(k) };
                        self.value_or_undef(v)
                    })
                    .collect();
                self.phi(body, &args)
            })
            .collect();
        for (var, value) in logged.into_iter().zip(values) {
            self.ssa.write(var, value);
        }
    }

    fn switch_break(&mut self) {
        let frames = self.frames_through(|c| matches!(c, Construct::Switch { .. }));
        let snap = self.ssa.snapshot_through(frames);
        let exit = match self.constructs.iter_mut().rev().find(|c| matches!(c, Construct::Switch { .. })) {
            Some(Construct::Switch { exit, exit_edges, .. }) => {
                exit_edges.push(snap);
                *exit
            }
            _ => return,
        };
        self.end_block_unreachable(Terminator::Jump(exit));
    }

    /// The number of SSA frames from the innermost construct matching `target` (inclusive) to
    /// the top: IF, SWITCH and routines open frames, loops do not.
    fn frames_through(&self, target: impl Fn(&Construct) -> bool) -> usize {
        let mut count = 0;
        for c in self.constructs.iter().rev() {
            if !matches!(c, Construct::Loop { .. }) {
                count += 1;
            }
            if target(c) {
                break;
            }
        }
        count
    }

    fn end_switch(&mut self) {
        let snap = self.ssa.snapshot();
        let Some(Construct::Switch { exit, mut exit_edges, .. }) = self.constructs.pop() else {
            return self.unsupported("ENDSWITCH", "it does not close a SWITCH");
        };
        self.shader.set_terminator(self.block, Terminator::Jump(exit));
        exit_edges.push(snap);
        self.switch_to(exit);
        self.merge_edges(exit, &exit_edges);
    }

    /// At a join reached by `edges` (snapshots of the innermost frame, in predecessor order):
    /// φs for every logged variable, then closes the frame and writes the merged values.
    fn merge_edges(&mut self, join: Block, edges: &[Snapshot]) {
        let logged: Vec<Var> = self.ssa.logged().collect();
        let mut values: Vec<Value> = Vec::with_capacity(logged.len());
        // One argument buffer for all φs (the main program's exit merges every variable).
        let mut args: Vec<Value> = Vec::with_capacity(edges.len());
        for k in 0..logged.len() {
            if edges.is_empty() {
                values.push(self.undef_value());
                continue;
            }
            args.clear();
            for edge in edges {
                let v = self.ssa.value_at(edge, k);
                let v = self.value_or_undef(v);
                args.push(v);
            }
            values.push(self.phi(join, &args));
        }
        self.ssa.close();
        for (var, value) in logged.into_iter().zip(values) {
            self.ssa.write(var, value);
        }
    }

    fn sub_for(&self, inst: &Instruction) -> Option<usize> {
        let label = inst.label? as usize;
        // Mesa's translators point CAL at the BGNSUB or at the instruction after it.
        [label, label.wrapping_sub(1)]
            .into_iter()
            .find(|&i| self.insts.get(i).is_some_and(|x| x.opcode.info().flow == Some(FlowRole::SubBegin)))
    }

    fn call(&mut self, _pc: usize) {
        let inst = self.insts[self.current];
        let Some(sub) = self.sub_for(inst) else {
            return self.unsupported("CAL", "its label does not name a BGNSUB");
        };
        if self.call_stack.contains(&sub) {
            return self.unsupported("CAL", "recursive subroutine calls cannot be inlined");
        }
        let exit = self.new_block();
        self.ssa.open();
        self.constructs.push(Construct::Routine { exit, exit_edges: Vec::new() });
        self.call_stack.push(sub);
        let saved = self.current;
        self.lower_range(sub + 1, self.end_of[sub]);
        self.current = saved;
        self.call_stack.pop();
        self.close_routine();
    }

    /// RET (or END in main): leave the innermost routine.
    fn routine_return(&mut self) {
        let frames = self.frames_through(|c| matches!(c, Construct::Routine { .. }));
        let snap = self.ssa.snapshot_through(frames);
        let exit = match self.constructs.iter_mut().rev().find(|c| matches!(c, Construct::Routine { .. })) {
            Some(Construct::Routine { exit, exit_edges, .. }) => {
                exit_edges.push(snap);
                *exit
            }
            _ => return,
        };
        self.end_block_unreachable(Terminator::Jump(exit));
    }

    fn close_routine(&mut self) {
        // Fall off the end of the routine (inner constructs are closed here).
        let Some(Construct::Routine { exit, mut exit_edges, .. }) = self.constructs.pop() else { return };
        self.shader.set_terminator(self.block, Terminator::Jump(exit));
        // Without other edges (the main program, usually) no snapshot is needed to tell.
        let now = (!exit_edges.is_empty()).then(|| self.ssa.snapshot());
        self.switch_to(exit);
        match now {
            Some(now) if !exit_edges.iter().all(|e| *e == now) => {
                exit_edges.push(now);
                self.merge_edges(exit, &exit_edges);
            }
            // Every edge has the current state (the main program: END, then the fall-through
            // from the unreachable block after it), so no φ is needed.
            _ => self.merge_current(),
        }
    }

    /// [`Ctx::merge_edges`] for a join whose edges all have the current state: closes the frame
    /// and gives the variables that are still undefined their stand-in.
    fn merge_current(&mut self) {
        let mut undefined = std::mem::take(&mut self.scratch_vars);
        undefined.clear();
        undefined.extend(self.ssa.logged().filter(|&v| self.ssa.read(v).is_none()));
        let zero = if undefined.is_empty() { None } else { Some(self.undef_value()) };
        self.ssa.close();
        if let Some(zero) = zero {
            for &var in &undefined {
                self.ssa.write(var, zero);
            }
        }
        self.scratch_vars = undefined;
    }

    /// Lays blocks out in program order, removes unreachable ones and returns the shader.
    fn finish(self) -> Lowered {
        let hoisted_loads = self.io.hoisted_loads();
        let Ctx { mut shader, layout, meta_out, .. } = self;
        let n = shader.blocks.len();
        let in_order = layout.len() == n && layout.iter().enumerate().all(|(i, b)| b.index() == i);
        if !in_order {
            shader.reorder_blocks(&layout);
        }
        // Returns at once when every block is reachable (the common case).
        crate::opt::unreachable::run(&mut shader);
        Lowered { shader, meta: meta_out, hoisted_loads }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lowers one shader from text; panics with the diagnostics on failure.
    pub(crate) fn lower_text(text: &str) -> Lowered {
        let program = crate::tgsi::parse(text).expect("parses");
        lower(&program, &Options::default()).unwrap_or_else(|d| panic!("{:?}", d.0))
    }

    #[test]
    fn straight_line_fragment_shader() {
        let lowered = lower_text(
            "FRAG\nDCL IN[0], GENERIC[0], PERSPECTIVE\nDCL OUT[0], COLOR\nDCL CONST[0][0]\nDCL TEMP[0]\n  0: MUL TEMP[0], IN[0], CONST[0][0]\n  1: ADD_SAT OUT[0], TEMP[0], -IN[0].wzyx\n  2: END\n",
        );
        crate::ir::verify::verify(&lowered.shader).unwrap();
        let text = crate::ir::text::print(&lowered.shader);
        assert!(text.contains("ATEST"), "{text}");
        assert!(text.contains("BLEND"), "{text}");
        assert!(text.contains("LD_VAR_BUF_IMM.f32.slot0.v4.src_f32.center.store"), "{text}");
    }

    #[test]
    fn samples_lower_to_valid_ir() {
        let files = crate::test_support::sample_files();
        let (mut ok, mut failed) = (0, Vec::new());
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let program = crate::tgsi::parse(&text).unwrap();
            match lower(&program, &Options::default()) {
                Ok(l) => {
                    if let Err(e) = crate::ir::verify::verify(&l.shader) {
                        panic!("{}: invalid IR: {e:?}\n{}", f.display(), crate::ir::text::print(&l.shader));
                    }
                    ok += 1;
                }
                Err(d) => failed.push(format!("{}: {}", f.display(), d.0[0].message)),
            }
        }
        eprintln!("{ok} lowered; {} not yet:\n{}", failed.len(), failed.join("\n"));
    }
}
