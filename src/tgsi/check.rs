//! Semantic checks of a parsed TGSI program (codes `E0100`–`E0199`, `W0100`–`W0199`).
//!
//! Everything is collected, not only the first problem. The checks:
//!
//! * registers: every direct use must fall in a declaration (immediates: an `IMM` with that
//!   index must exist); an indirect use needs some declaration of its file; declarations must
//!   not overlap; declared registers that are never used get a warning;
//! * operands: the counts of the opcode table, sampler/sampler-view/resource operands of the
//!   right file, writable destinations, and for 64-bit operands write masks `xy`, `zw` or
//!   `xyzw` and swizzles made of the pairs `xy`/`zw`;
//! * stages: opcodes (the table's `stages`), semantics and properties that belong to other
//!   shader stages;
//! * control flow: IF/UIF/ELSE/ENDIF, loops, SWITCH/CASE/DEFAULT/ENDSWITCH and BGNSUB/ENDSUB
//!   must nest; BRK/CONT need a loop (BRK also a SWITCH); branch labels that disagree with
//!   the nesting get a warning (the structure always comes from the nesting); END missing or
//!   repeated gets a warning.
//!
//! Shaders produced by Mesa (ureg, glsl-to-tgsi, st_mesa_to_tgsi) always pass without errors:
//! bindless handles in TEMP/CONST registers are accepted where a sampler or resource is
//! expected, texturing with implicit LOD is accepted outside fragment shaders, label
//! conventions of both "target" and "target + 1" are accepted, 64-bit swizzles are checked
//! only in the channel pairs that are read (glsl-to-tgsi writes `.xyyy` for one double), and a
//! sampler view declared next to a used sampler of the same index counts as used.
//!
//! Linear time apart from sorting declarations; no recursion.

use super::ast::*;
use super::opcodes::{FlowRole, Opcode, OperandType, StageMask};
use crate::diag::{Diagnostic, Span};
use rustc_hash::FxHashSet;

/// Checks a parsed program; returns every error and warning found.
pub fn check(program: &Program) -> Vec<Diagnostic> {
    let mut c = Checker {
        program,
        diags: Vec::new(),
        decls: Declared::default(),
        declared_files: [false; File::ALL.len()],
        indirectly_used: [false; File::ALL.len()],
        reported: Default::default(),
        stale_labels: Vec::new(),
        per_vertex: File::ALL.map(|file| per_vertex(program.processor(), file)),
        last_hit: [(1, 0, 0); File::ALL.len()],
    };
    // One walk for the counts the passes below need, checking the properties on the way.
    let (mut declarations, mut immediates) = (0, 0);
    for statement in &program.statements {
        match statement {
            Statement::Declaration(_) => declarations += 1,
            Statement::Immediate(_) => immediates += 1,
            Statement::Property(p) => c.property(p),
            Statement::Instruction(_) => {}
        }
    }
    c.declarations(declarations);
    c.instructions(immediates);
    c.control_flow();
    c.report_stale_labels();
    c.unused();
    c.diags.sort_by_key(|d| (d.primary.span.start, d.severity == crate::diag::Severity::Warning));
    c.diags
}

/// One declared range.
#[derive(Clone, Copy)]
struct Range {
    file: File,
    /// The dimension it is looked up under (0 for per-vertex files).
    dim: u32,
    first: u32,
    last: u32,
    /// The declaration's position among the program's declarations (orders equal ranges).
    decl: usize,
    span: Span,
    /// Has any of its registers been used. Kept here rather than in a list per declaration:
    /// one allocation per shader fewer.
    used: bool,
    /// Among this range and all before it (in sorted order) of its file and dimension, the one
    /// reaching furthest: its `last` and its position in [`Declared::ranges`], so a lookup
    /// needs one binary search.
    cover_last: u32,
    cover: usize,
}

/// Every declared range in one list sorted by (file, dimension, first, declaration), so that
/// a shader's declarations cost one allocation. Dimension 0 (every register of most shaders)
/// has its part of the list per file, read once per register operand; other dimensions
/// (constant buffers 1 and up) are found by binary search.
#[derive(Default)]
struct Declared {
    ranges: Vec<Range>,
    first_dimension: [std::ops::Range<usize>; File::ALL.len()],
}

impl Declared {
    fn ranges(&self, file: File, dim: u32) -> &[Range] {
        if dim == 0 {
            return self.dim0(file);
        }
        let key = (file as usize, dim);
        let start = self.ranges.partition_point(|r| (r.file as usize, r.dim) < key);
        let end = start + self.ranges[start..].partition_point(|r| (r.file as usize, r.dim) == key);
        &self.ranges[start..end]
    }

    #[inline]
    fn dim0(&self, file: File) -> &[Range] {
        self.ranges.get(self.first_dimension[file as usize].clone()).unwrap_or(&[])
    }
}

struct Checker<'a> {
    program: &'a Program,
    diags: Vec<Diagnostic>,
    /// Declared ranges per (file, dimension), sorted by `first`.
    decls: Declared,
    /// Files with at least one declaration (indexed by `File as usize`).
    declared_files: [bool; File::ALL.len()],
    /// Files read or written through an address register: every declaration of such a file
    /// counts as used. A flag rather than marking each declaration, so that many indirect
    /// accesses to a file with many declarations stay linear.
    indirectly_used: [bool; File::ALL.len()],
    /// Undeclared registers already reported (reported once each).
    reported: FxHashSet<(File, u32, u32)>,
    /// Branch labels that disagree with the nesting: (statement span, label, what it points
    /// to, note). Reported as one warning, since old dumps often carry many stale labels.
    stale_labels: Vec<(Span, u32, String, String)>,
    /// [`per_vertex`] of each file for this program's processor (read for every operand).
    per_vertex: [bool; File::ALL.len()],
    /// Per file, the last run of dimension-0 registers [`covering_run`] found: (first, last,
    /// range); operands mostly name the registers of the previous ones, so most lookups
    /// end here. Empty (first > last) before the first.
    last_hit: [(u32, u32, usize); File::ALL.len()],
}

/// Files whose first bracket is a vertex index rather than a declared dimension.
fn per_vertex(processor: Processor, file: File) -> bool {
    matches!(
        (processor, file),
        (Processor::Geom | Processor::TessEval, File::Input) | (Processor::TessCtrl, File::Input | File::Output)
    )
}

fn stage_of(p: Processor) -> StageMask {
    match p {
        Processor::Vert => StageMask::VS,
        Processor::TessCtrl => StageMask::TCS,
        Processor::TessEval => StageMask::TES,
        Processor::Geom => StageMask::GS,
        Processor::Frag => StageMask::FS,
        Processor::Comp | Processor::Task | Processor::Mesh => StageMask::CS,
    }
}

fn stage_names(mask: StageMask) -> String {
    let names = ["vertex", "tessellation control", "tessellation evaluation", "geometry", "fragment", "compute"];
    let list: Vec<&str> = (0..6).filter(|i| mask.0 & (1 << i) != 0).map(|i| names[i]).collect();
    match list.len() {
        0 => "no".to_string(),
        1 => list[0].to_string(),
        _ => format!("{} and {}", list[..list.len() - 1].join(", "), list[list.len() - 1]),
    }
}

fn processor_noun(p: Processor) -> &'static str {
    match p {
        Processor::Vert => "a vertex shader",
        Processor::TessCtrl => "a tessellation control shader",
        Processor::TessEval => "a tessellation evaluation shader",
        Processor::Geom => "a geometry shader",
        Processor::Frag => "a fragment shader",
        Processor::Comp => "a compute shader",
        Processor::Task => "a task shader",
        Processor::Mesh => "a mesh shader",
    }
}

impl<'a> Checker<'a> {
    fn processor(&self) -> Processor {
        self.program.processor()
    }

    /// Files whose first bracket is a vertex index rather than a declared dimension.
    fn per_vertex(&self, file: File) -> bool {
        self.per_vertex[file as usize]
    }

    fn declarations(&mut self, count: usize) {
        let program = self.program;
        self.decls.ranges.reserve_exact(count);
        for (index, d) in program.declarations().enumerate() {
            if d.file == File::Immediate {
                self.diags.push(
                    Diagnostic::error("E0111", d.span, "immediates are not declared with `DCL`")
                        .with_label("`DCL IMM`")
                        .with_help("write the values with `IMM[n] FLT32 {…}` instead"),
                );
                continue;
            }
            let dim = if self.per_vertex(d.file) { 0 } else { d.dimension.unwrap_or(0) };
            self.decls.ranges.push(Range {
                file: d.file,
                dim,
                first: d.first,
                last: d.last,
                decl: index,
                span: d.span,
                used: false,
                cover_last: 0,
                cover: 0,
            });
            self.declared_files[d.file as usize] = true;
            self.semantic(d);
        }
        let processor = self.processor();
        let mut ranges = std::mem::take(&mut self.decls.ranges);
        ranges.sort_unstable_by_key(|r| (r.file as usize, r.dim, r.first, r.decl));
        // Each (file, dimension) group in turn.
        let mut start = 0;
        while let Some(head) = ranges.get(start) {
            let (file, dim) = (head.file, head.dim);
            let end = start + ranges[start..].iter().take_while(|r| r.file == file && r.dim == dim).count();
            if dim == 0 {
                self.decls.first_dimension[file as usize] = start..end;
            }
            let mut widest: Option<(usize, Range)> = None;
            for (position, r) in (start..end).zip(&mut ranges[start..end]) {
                if let Some((_, w)) = widest
                    && r.first <= w.last
                {
                    let reg = register_name(file, dim, r.first.max(w.first), per_vertex(processor, file));
                    self.diags.push(
                        Diagnostic::error("E0110", r.span, format!("{reg} is declared twice"))
                            .with_label("second declaration")
                            .with_secondary(w.span, "first declared here")
                            .with_note("each register may be declared once"),
                    );
                }
                if widest.is_none_or(|(_, w)| r.last > w.last) {
                    widest = Some((position, *r));
                }
                if let Some((at, w)) = widest {
                    r.cover_last = w.last;
                    r.cover = at;
                }
            }
            start = end;
        }
        self.decls.ranges = ranges;
    }

    fn semantic(&mut self, d: &Declaration) {
        let Some(sem) = &d.semantic else { return };
        let p = self.processor();
        use SemanticName as S;
        let (allowed, rule): (bool, &str) = match sem.name {
            S::Face | S::Pcoord | S::Sampleid | S::Samplepos | S::HelperInvocation => (
                p == Processor::Frag && matches!(d.file, File::Input | File::SystemValue),
                "a fragment shader input or system value",
            ),
            S::ThreadId | S::BlockId | S::BlockSize | S::GridSize | S::WorkDim | S::CsUserDataAmd => {
                (p == Processor::Comp && d.file == File::SystemValue, "a compute shader system value")
            }
            S::Vertexid | S::Instanceid | S::VertexidNobase | S::Basevertex | S::Baseinstance | S::Drawid => {
                (p == Processor::Vert && d.file == File::SystemValue, "a vertex shader system value")
            }
            S::Tesscoord => {
                (p == Processor::TessEval && d.file == File::SystemValue, "a tessellation evaluation system value")
            }
            S::Invocationid => {
                (matches!(p, Processor::Geom | Processor::TessCtrl), "a geometry or tessellation control shader value")
            }
            S::Verticesin => {
                (matches!(p, Processor::TessCtrl | Processor::TessEval), "a tessellation shader system value")
            }
            S::Stencil => (p == Processor::Frag && d.file == File::Output, "a fragment shader output"),
            _ => (true, ""),
        };
        if !allowed {
            self.diags.push(
                Diagnostic::error(
                    "E0108",
                    d.span,
                    format!("semantic `{}` on `{}` in {}", sem.name.name(), d.file.name(), processor_noun(p)),
                )
                .with_label("not allowed here")
                .with_note(format!("`{}` is only meaningful as {rule}", sem.name.name())),
            );
        }
        if sem.stream != [0; 4] && !(p == Processor::Geom && d.file == File::Output) {
            self.diags.push(
                Diagnostic::error("E0108", d.span, "`STREAM(…)` outside a geometry shader output")
                    .with_label("not a geometry shader output")
                    .with_note("vertex streams only exist for geometry shader outputs"),
            );
        }
        if p == Processor::Vert && d.file == File::Input {
            self.diags.push(
                Diagnostic::warning("W0104", d.span, "vertex shader inputs take no semantic")
                    .with_label("ignored")
                    .with_note("Mesa accepted this up to 7.8; since 7.9 it rejects it"),
            );
        }
    }

    /// Reports a property that belongs to another shader stage.
    fn property(&mut self, prop: &Property) {
        let p = self.processor();
        use PropertyName as N;
        let (stage, who) = match prop.name.canonical() {
            N::GsInputPrimitive | N::GsOutputPrimitive | N::GsMaxOutputVertices | N::GsInvocations => {
                (Processor::Geom, "geometry")
            }
            N::FsCoordOrigin
            | N::FsCoordPixelCenter
            | N::FsColor0WritesAllCbufs
            | N::FsDepthLayout
            | N::FsEarlyDepthStencil
            | N::FsPostDepthCoverage
            | N::FsBlendEquationAdvanced => (Processor::Frag, "fragment"),
            N::VsProhibitUcps | N::VsWindowSpacePosition | N::VsBlitSgprsAmd => (Processor::Vert, "vertex"),
            N::TcsVerticesOut => (Processor::TessCtrl, "tessellation control"),
            N::TesPrimMode | N::TesSpacing | N::TesVertexOrderCw | N::TesPointMode => {
                (Processor::TessEval, "tessellation evaluation")
            }
            N::CsFixedBlockWidth | N::CsFixedBlockHeight | N::CsFixedBlockDepth | N::CsUserDataComponentsAmd => {
                (Processor::Comp, "compute")
            }
            _ => return,
        };
        if stage != p {
            self.diags.push(
                Diagnostic::error(
                    "E0109",
                    prop.span,
                    format!("property `{}` in {}", prop.name.name(), processor_noun(p)),
                )
                .with_label("not allowed here")
                .with_note(format!("`{}` applies to {who} shaders only", prop.name.name())),
            );
        }
    }

    fn instructions(&mut self, immediates: usize) {
        let program = self.program;
        let imm_count = immediates as i64;
        let stage = stage_of(self.processor());
        // Only geometry shaders look the property up (a walk over every statement).
        let gs_vertices = match self.processor() {
            Processor::Geom => match program.property(PropertyName::GsInputPrimitive) {
                Some(PropertyValue::Primitive(p)) => Some(p.vertex_count()),
                _ => None,
            },
            _ => None,
        };
        for inst in program.instructions() {
            let info = inst.opcode.info();
            if !info.stages.contains(stage) && (info.stages.0 & stage.0) == 0 {
                self.diags.push(
                    Diagnostic::error(
                        "E0107",
                        inst.opcode_span,
                        format!("`{}` is not available in {}", info.name, processor_noun(self.processor())),
                    )
                    .with_label("wrong shader stage")
                    .with_note(format!(
                        "`{}` is only allowed in {} shaders",
                        info.name,
                        stage_names(info.stages)
                    )),
                );
            }
            // EMIT and ENDPRIM without their stream operand are the Mesa ≤ 10.2 form (stream 0).
            let legacy_streamless = matches!(inst.opcode, Opcode::Emit | Opcode::Endprim) && inst.src.is_empty();
            if inst.dst.len() != usize::from(info.num_dst)
                || (inst.src.len() != usize::from(info.num_src) && !legacy_streamless)
                || inst.texture_target.is_some() != info.has_texture_target
            {
                self.diags.push(
                    Diagnostic::error("E0104", inst.span, format!("wrong operands for `{}`", info.name))
                        .with_label(format!("{} destinations and {} sources", inst.dst.len(), inst.src.len()))
                        .with_note(format!("`{}` takes {}", info.name, info.operands)),
                );
            }
            for (i, d) in inst.dst.iter().enumerate() {
                self.use_register(&d.register, d.span, imm_count, gs_vertices);
                if matches!(
                    d.register.file,
                    File::Const
                        | File::Immediate
                        | File::Input
                        | File::SystemValue
                        | File::Sampler
                        | File::SamplerView
                        | File::ConstBuf
                ) {
                    self.diags.push(
                        Diagnostic::error(
                            "E0112",
                            d.span,
                            format!("`{}` registers cannot be written", d.register.file.name()),
                        )
                        .with_label("read-only register file")
                        .with_note("destinations are TEMP, OUT, ADDR, or a resource for STORE"),
                    );
                }
                let ty = info.dst_types.get(i).copied();
                if matches!(ty, Some(OperandType::D | OperandType::I64 | OperandType::U64))
                    && !matches!(d.write_mask.0, 0x3 | 0xc | 0xf)
                {
                    self.diags.push(
                        Diagnostic::error(
                            "E0105",
                            d.span,
                            format!(
                                "`{}` writes 64-bit values: the write mask must be `xy`, `zw` or `xyzw`",
                                info.name
                            ),
                        )
                        .with_label("mask splits a 64-bit channel pair")
                        .with_note("a 64-bit value occupies the channel pair xy or zw"),
                    );
                }
            }
            for (i, s) in inst.src.iter().enumerate() {
                self.use_register(&s.register, s.span, imm_count, gs_vertices);
                let ty = info.src_types.get(i).copied();
                if matches!(ty, Some(OperandType::Samp | OperandType::Sview | OperandType::Res)) {
                    self.operand_kind(inst, s, ty);
                }
                if matches!(ty, Some(OperandType::D | OperandType::I64 | OperandType::U64)) {
                    // The first pair is always read; the second only when a 64-bit result is
                    // written to zw too (Mesa fills unread channels, e.g. `.xyyy`).
                    let wide_dst = info
                        .dst_types
                        .first()
                        .is_some_and(|t| matches!(t, OperandType::D | OperandType::I64 | OperandType::U64));
                    let both = wide_dst
                        && inst.dst.first().is_some_and(|d| d.write_mask.0 & 0xc != 0 && d.write_mask.0 & 0x3 != 0);
                    let pairs_ok =
                        s.swizzle.chunks(2).take(if both { 2 } else { 1 }).all(|p| {
                            matches!((p[0], p[1]), (Component::X, Component::Y) | (Component::Z, Component::W))
                        });
                    if !pairs_ok {
                        self.diags.push(
                            Diagnostic::error(
                                "E0106",
                                s.span,
                                format!(
                                    "`{}` reads 64-bit values: the swizzle must be made of `xy` and `zw` pairs",
                                    info.name
                                ),
                            )
                            .with_label("swizzle splits a 64-bit channel pair")
                            .with_help("use e.g. `.xyxy`, `.zwzw` or `.xyzw`"),
                        );
                    }
                }
            }
            self.matrix_rows(inst, imm_count, gs_vertices);
            for o in &inst.texture_offsets {
                let reg = Register { file: o.file, dimension: None, index: Index::direct(o.index) };
                self.use_register(&reg, o.span, imm_count, gs_vertices);
            }
        }
    }

    /// Matrix products (M4X4 … M3X2) read one row per result component: `src1`, `src1 + 1`, …;
    /// the rows after the first must be declared too.
    fn matrix_rows(&mut self, inst: &Instruction, imm_count: i64, gs_vertices: Option<u32>) {
        let rows = match inst.opcode.canonical() {
            Opcode::M4x4 | Opcode::M3x4 => 4,
            Opcode::M4x3 | Opcode::M3x3 => 3,
            Opcode::M3x2 => 2,
            _ => return,
        };
        let Some(s) = inst.src.get(1) else { return };
        if s.register.index.indirect.is_some() {
            return;
        }
        for k in 1..rows {
            let mut row = s.register;
            row.index.value += k;
            let before = self.diags.len();
            self.use_register(&row, s.span, imm_count, gs_vertices);
            if let Some(d) = self.diags.get_mut(before) {
                let op = inst.opcode.name();
                d.notes.push(format!(
                    "note: `{op}` reads its matrix rows from consecutive registers; row {k} is this one"
                ));
            }
        }
    }

    fn operand_kind(&mut self, inst: &Instruction, s: &SrcOperand, ty: Option<OperandType>) {
        let file = s.register.file;
        // TEMP and CONST may hold bindless handles (ARB_bindless_texture).
        let handle = matches!(file, File::Temp | File::Const);
        let (ok, want) = match ty {
            Some(OperandType::Samp) => (file == File::Sampler || handle, "a sampler (`SAMP[n]`)"),
            Some(OperandType::Sview) => {
                (matches!(file, File::SamplerView | File::LegacyResource) || handle, "a sampler view (`SVIEW[n]`)")
            }
            Some(OperandType::Res) => (
                matches!(
                    file,
                    File::Buffer | File::Image | File::Memory | File::HwAtomic | File::ConstBuf | File::LegacyResource
                ) || handle,
                "a resource (`BUFFER`, `IMAGE`, `MEMORY`, `HWATOMIC` or `CONSTBUF`)",
            ),
            _ => (true, ""),
        };
        if !ok {
            self.diags.push(
                Diagnostic::error(
                    "E0102",
                    s.span,
                    format!("`{}` expects {want} here, found `{}`", inst.opcode.name(), file.name()),
                )
                .with_label("wrong kind of operand")
                .with_note(format!("`{}` takes {}", inst.opcode.name(), inst.opcode.info().operands)),
            );
        }
    }

    /// Marks the declaration of `r` used, or reports it.
    #[inline(always)]
    fn use_register(&mut self, r: &Register, span: Span, imm_count: i64, gs_vertices: Option<u32>) {
        // The common case inline: a direct register of dimension 0 (written `FILE[n]` or
        // `FILE[0][n]`) that a declaration covers. Everything else, and every report, is
        // [`Self::use_register_general`]'s (which gives the same answer for this case).
        if r.index.indirect.is_none()
            && !matches!(r.file, File::Null | File::LegacyLoop)
            && r.dimension.is_none_or(|d| d.value == 0 && d.indirect.is_none() && !self.per_vertex(r.file))
        {
            let index = r.index.value as u32;
            let (first, last, decl) = self.last_hit[r.file as usize];
            let hit = if first <= index && index <= last {
                Some(decl)
            } else {
                covering_run(self.decls.dim0(r.file), index).map(|run| {
                    self.last_hit[r.file as usize] = run;
                    run.2
                })
            };
            if let Some(range) = hit.and_then(|at| self.decls.ranges.get_mut(at)) {
                range.used = true;
                return;
            }
        }
        self.use_register_general(r, span, imm_count, gs_vertices);
    }

    fn use_register_general(&mut self, r: &Register, span: Span, imm_count: i64, gs_vertices: Option<u32>) {
        let file = r.file;
        if matches!(file, File::Null | File::LegacyLoop) {
            return;
        }
        // The address registers of indirect brackets (spelled out rather than chained: this
        // runs for every operand).
        if let Some(ind) = r.index.indirect {
            self.use_address(ind, span, imm_count, gs_vertices);
        }
        if let Some(ind) = r.dimension.and_then(|d| d.indirect) {
            self.use_address(ind, span, imm_count, gs_vertices);
        }
        if file == File::Immediate {
            if r.index.indirect.is_none() && i64::from(r.index.value) >= imm_count {
                self.diags.push(
                    Diagnostic::error("E0101", span, format!("`IMM[{}]` does not exist", r.index.value))
                        .with_label("no such immediate")
                        .with_note(match imm_count {
                            0 => "the shader has no immediates".to_string(),
                            1 => "the shader has 1 immediate, IMM[0]".to_string(),
                            n => format!("the shader has {n} immediates, IMM[0] to IMM[{}]", n - 1),
                        }),
                );
            }
            return;
        }
        let per_vertex = self.per_vertex(file);
        if per_vertex
            && let (Some(n), Some(dim)) = (gs_vertices, r.dimension)
            && dim.indirect.is_none()
            && dim.value as u32 >= n
        {
            self.diags.push(
                Diagnostic::error("E0103", span, format!("vertex {} does not exist", dim.value))
                    .with_label("vertex index out of range")
                    .with_note(format!("the input primitive has {n} vertices")),
            );
        }
        if r.index.indirect.is_some() || r.dimension.is_some_and(|d| d.indirect.is_some() && !per_vertex) {
            match self.declared_files[file as usize] {
                true => self.indirectly_used[file as usize] = true,
                false if !self.reported.insert((file, u32::MAX, u32::MAX)) => {}
                false => self.diags.push(
                    Diagnostic::error("E0100", span, format!("no `{}` register is declared", file.name()))
                        .with_label("indirect access to an undeclared file")
                        .with_help(format!("declare the registers with `DCL {}[…]`", file.name())),
                ),
            }
            return;
        }
        let dim = if per_vertex { 0 } else { r.dimension.map_or(0, |d| d.value as u32) };
        let index = r.index.value as u32;
        let found = covering(self.decls.ranges(file, dim), index);
        match found {
            Some(at) => self.decls.ranges[at].used = true,
            None => {
                if !self.reported.insert((file, dim, index)) {
                    return;
                }
                let name = register_name(file, dim, index, per_vertex);
                self.diags.push(
                    Diagnostic::error("E0100", span, format!("{name} is not declared"))
                        .with_label("undeclared register")
                        .with_help(format!("add `DCL {name}`")),
                );
            }
        }
    }

    fn use_address(&mut self, ind: Indirect, span: Span, imm_count: i64, gs_vertices: Option<u32>) {
        let reg = Register { file: ind.file, dimension: None, index: Index::direct(ind.index) };
        self.use_register(&reg, span, imm_count, gs_vertices);
    }

    fn control_flow(&mut self) {
        #[derive(Clone, Copy, PartialEq, Eq)]
        enum Kind {
            If,
            Loop,
            Switch,
            Sub,
        }
        struct Open<'i> {
            kind: Kind,
            /// The instruction whose label names the end of the current part.
            owner: &'i Instruction,
            opcode: Opcode,
            number: u32,
            span: Span,
            label: Option<u32>,
            else_at: Option<u32>,
            /// Instruction number of the first ENDIF/ELSE for label checks.
            seen_else: bool,
        }
        /// The open constructs, innermost last, with a count per kind so that "is any loop
        /// open?" costs O(1) and every search below is paid for by the pops it leads to.
        struct Stack<'i> {
            items: Vec<Open<'i>>,
            counts: [usize; 4],
        }
        impl<'i> Stack<'i> {
            fn push(&mut self, open: Open<'i>) {
                self.counts[open.kind as usize] += 1;
                self.items.push(open);
            }
            fn pop(&mut self) -> Option<Open<'i>> {
                let open = self.items.pop()?;
                self.counts[open.kind as usize] -= 1;
                Some(open)
            }
            fn any(&self, kind: Kind) -> bool {
                self.counts[kind as usize] > 0
            }
            fn last(&self) -> Option<&Open<'i>> {
                self.items.last()
            }
            fn last_mut(&mut self) -> Option<&mut Open<'i>> {
                self.items.last_mut()
            }
        }
        let program = self.program;
        let mut stack = Stack { items: Vec::new(), counts: [0; 4] };
        // The first END, and any after it (a Vec that stays empty, so no allocation, when the
        // shader has one END).
        let mut first_end: Option<&Instruction> = None;
        let mut more_ends = Vec::new();
        let mut subs = FxHashSet::default();
        let mut calls = Vec::new();
        for (n, inst) in program.instructions().enumerate() {
            let n = n as u32;
            let name = inst.opcode.name();
            let kind_name = |k: Kind| match k {
                Kind::If => "IF",
                Kind::Loop => "BGNLOOP",
                Kind::Switch => "SWITCH",
                Kind::Sub => "BGNSUB",
            };
            let close =
                |stack: &mut Stack<'a>, diags: &mut Vec<Diagnostic>, kind: Kind, what: &str| -> Option<Open<'a>> {
                    let found = if stack.any(kind) { stack.items.iter().rposition(|o| o.kind == kind) } else { None };
                    match found {
                        None => {
                            diags.push(
                                Diagnostic::error(
                                    "E0120",
                                    inst.opcode_span,
                                    format!("`{name}` without a matching `{what}`"),
                                )
                                .with_label("nothing to close")
                                .with_note("control flow comes from the nesting of the instructions"),
                            );
                            None
                        }
                        Some(pos) => {
                            while stack.items.len() > pos + 1 {
                                let inner = stack.pop()?;
                                diags.push(
                                    Diagnostic::error(
                                        "E0128",
                                        inner.span,
                                        format!("`{}` is not closed before `{name}`", inner.opcode.name()),
                                    )
                                    .with_label("unclosed")
                                    .with_secondary(inst.opcode_span, "the enclosing construct ends here"),
                                );
                            }
                            stack.pop()
                        }
                    }
                };
            match inst.opcode.info().flow {
                Some(FlowRole::If) => stack.push(Open {
                    kind: Kind::If,
                    owner: inst,
                    opcode: inst.opcode,
                    number: n,
                    span: inst.opcode_span,
                    label: inst.label,
                    else_at: None,
                    seen_else: false,
                }),
                Some(FlowRole::Else) => match stack.last_mut() {
                    Some(top) if top.kind == Kind::If => {
                        if top.seen_else {
                            self.diags.push(
                                Diagnostic::error("E0129", inst.opcode_span, "second `ELSE` for the same `IF`")
                                    .with_label("another ELSE")
                                    .with_secondary(top.span, "this IF already has an ELSE"),
                            );
                        }
                        top.seen_else = true;
                        let (label, owner) = (top.label, top.owner);
                        top.else_at = Some(n);
                        top.label = inst.label;
                        top.owner = inst;
                        self.label_check(label, n, owner, "the ELSE");
                    }
                    _ => self.diags.push(
                        Diagnostic::error("E0120", inst.opcode_span, "`ELSE` without a matching `IF`")
                            .with_label("not inside an IF")
                            .with_note("control flow comes from the nesting of the instructions"),
                    ),
                },
                Some(FlowRole::EndIf) => {
                    if let Some(open) = close(&mut stack, &mut self.diags, Kind::If, "IF") {
                        self.label_check(open.label, n, open.owner, "the ENDIF");
                    }
                }
                Some(FlowRole::LoopBegin) => stack.push(Open {
                    kind: Kind::Loop,
                    owner: inst,
                    opcode: inst.opcode,
                    number: n,
                    span: inst.opcode_span,
                    label: inst.label,
                    else_at: None,
                    seen_else: false,
                }),
                Some(FlowRole::LoopEnd) => {
                    if let Some(open) = close(&mut stack, &mut self.diags, Kind::Loop, kind_name(Kind::Loop)) {
                        self.label_check(open.label, n, open.owner, "the loop's end");
                        if let Some(l) = inst.label
                            && l != open.number
                            && l != open.number + 1
                        {
                            self.label_warning(inst, l, format!("the loop begins at instruction {}", open.number));
                        }
                    }
                }
                Some(FlowRole::Switch) => stack.push(Open {
                    kind: Kind::Switch,
                    owner: inst,
                    opcode: inst.opcode,
                    number: n,
                    span: inst.opcode_span,
                    label: None,
                    else_at: None,
                    seen_else: false,
                }),
                Some(FlowRole::Case | FlowRole::Default) if stack.last().is_none_or(|o| o.kind != Kind::Switch) => {
                    self.diags.push(
                        Diagnostic::error("E0124", inst.opcode_span, format!("`{name}` outside a `SWITCH`"))
                            .with_label("not directly inside a SWITCH"),
                    );
                }
                Some(FlowRole::EndSwitch) => {
                    close(&mut stack, &mut self.diags, Kind::Switch, "SWITCH");
                }
                Some(FlowRole::SubBegin) => {
                    subs.insert(n);
                    stack.push(Open {
                        kind: Kind::Sub,
                        owner: inst,
                        opcode: inst.opcode,
                        number: n,
                        span: inst.opcode_span,
                        label: None,
                        else_at: None,
                        seen_else: false,
                    })
                }
                Some(FlowRole::SubEnd) => {
                    close(&mut stack, &mut self.diags, Kind::Sub, "BGNSUB");
                }
                Some(FlowRole::Break) if !stack.any(Kind::Loop) && !stack.any(Kind::Switch) => {
                    self.diags.push(
                        Diagnostic::error("E0126", inst.opcode_span, format!("`{name}` outside a loop or `SWITCH`"))
                            .with_label("nothing to break out of"),
                    );
                }
                Some(FlowRole::Continue) if !stack.any(Kind::Loop) => {
                    self.diags.push(
                        Diagnostic::error("E0127", inst.opcode_span, format!("`{name}` outside a loop"))
                            .with_label("nothing to continue"),
                    );
                }
                Some(FlowRole::End) => match first_end {
                    None => first_end = Some(inst),
                    Some(_) => more_ends.push(inst),
                },
                Some(FlowRole::Call) => calls.push(inst),
                _ => {}
            }
        }
        for open in stack.items {
            self.diags.push(
                Diagnostic::error("E0128", open.span, format!("`{}` is never closed", open.opcode.name()))
                    .with_label("unclosed")
                    .with_note("the shader ends before the matching end instruction"),
            );
        }
        for call in calls {
            if let Some(l) = call.label
                && !subs.contains(&l)
                && !(l > 0 && subs.contains(&(l - 1)))
            {
                self.label_warning(call, l, "no BGNSUB starts there".to_string());
            }
        }
        match first_end {
            None => {
                let at = program.statements.last().map_or(program.header.span, Statement::span);
                self.diags.push(
                    Diagnostic::warning("W0102", Span::at(at.end as usize), "the shader has no `END`")
                        .with_label("END expected by here")
                        .with_help("end the main program with `END`"),
                );
            }
            Some(first) => {
                for e in more_ends {
                    self.diags.push(
                        Diagnostic::warning("W0103", e.opcode_span, "more than one `END`")
                            .with_label("another END")
                            .with_secondary(first.opcode_span, "first END"),
                    );
                }
            }
        }
    }

    /// Warns when an IF/UIF/ELSE/BGNLOOP label does not name `target` (or the instruction
    /// after it).
    fn label_check(&mut self, label: Option<u32>, target: u32, owner: &Instruction, what: &str) {
        if let Some(l) = label
            && l != target
            && l != target + 1
        {
            self.label_warning(owner, l, format!("{what} is instruction {target}"));
        }
    }

    fn label_warning(&mut self, inst: &Instruction, label: u32, what: String) {
        self.stale_labels.push((
            inst.span,
            label,
            format!("`{}` points to instruction {label}", inst.opcode.name()),
            format!("{what}; the structure is taken from the nesting, the label is ignored"),
        ));
    }

    /// One W0101 for all disagreeing labels: the first with its explanation, the others as
    /// secondary labels.
    fn report_stale_labels(&mut self) {
        let mut stale = std::mem::take(&mut self.stale_labels);
        stale.sort_by_key(|l| l.0.start);
        let mut labels = stale.into_iter();
        let Some((span, number, label, note)) = labels.next() else { return };
        let mut d = Diagnostic::warning("W0101", span, format!("branch label :{number} disagrees with the nesting"))
            .with_label(label)
            .with_note(note);
        let more = labels.len();
        for (span, _, label, _) in labels {
            d = d.with_secondary(span, label);
        }
        if more > 0 {
            d = d.with_note(format!(
                "{} more label{} in this shader disagree{} with the nesting (marked above); old Mesa dumps often carry stale labels",
                more,
                if more == 1 { "" } else { "s" },
                if more == 1 { "s" } else { "" }
            ));
        }
        self.diags.push(d);
    }

    fn unused(&mut self) {
        let indirect = self.indirectly_used;
        let used = |r: &Range| r.used || indirect[r.file as usize];
        // Used sampler ranges, merged and sorted, for the SVIEW rule below.
        let mut used_samplers: Vec<(u32, u32)> = self
            .decls
            .ranges
            .iter()
            .filter(|&r| used(r) && r.file == File::Sampler)
            .map(|r| (r.first, r.last))
            .collect();
        used_samplers.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(used_samplers.len());
        for (first, last) in used_samplers {
            match merged.last_mut() {
                Some(m) if first <= m.1.saturating_add(1) => m.1 = m.1.max(last),
                _ => merged.push((first, last)),
            }
        }
        let used_samplers = merged;
        // In (file, dimension, first) order; the diagnostics are sorted by position at the end.
        for d in &self.decls.ranges {
            if used(d) {
                continue;
            }
            // ureg declares a sampler view next to each sampler that TEX-style opcodes use
            // (drivers read its return type); that counts as a use.
            if d.file == File::SamplerView && overlaps(&used_samplers, d.first, d.last) {
                continue;
            }
            let what = if d.first == d.last {
                format!("{}[{}]", d.file.name(), d.first)
            } else {
                format!("{}[{}..{}]", d.file.name(), d.first, d.last)
            };
            self.diags.push(
                Diagnostic::warning("W0100", d.span, format!("{what} is declared but never used"))
                    .with_label("unused declaration")
                    .with_note("no instruction reads or writes it"),
            );
        }
    }
}

/// The range (position in [`Declared::ranges`]) covering register `index`, given the declared
/// ranges of its file and dimension.
fn covering(ranges: &[Range], index: u32) -> Option<usize> {
    let upto = ranges.partition_point(|x| x.first <= index);
    let candidate = ranges.get(upto.checked_sub(1)?)?;
    (candidate.cover_last >= index).then_some(candidate.cover)
}

/// [`covering`], with the run of registers around `index` that get the same answer:
/// (first, last, declaration).
#[inline]
fn covering_run(ranges: &[Range], index: u32) -> Option<(u32, u32, usize)> {
    let upto = ranges.partition_point(|x| x.first <= index);
    let candidate = ranges.get(upto.checked_sub(1)?)?;
    if candidate.cover_last < index {
        return None;
    }
    // Every register from the candidate's first up to the next range's first has the same
    // candidate, and is covered up to its `cover_last`.
    let before_next = ranges.get(upto).map_or(u32::MAX, |next| next.first - 1);
    Some((candidate.first, before_next.min(candidate.cover_last), candidate.cover))
}

/// Whether `[first, last]` meets one of the sorted, disjoint `ranges`.
fn overlaps(ranges: &[(u32, u32)], first: u32, last: u32) -> bool {
    let i = ranges.partition_point(|r| r.1 < first);
    ranges.get(i).is_some_and(|r| r.0 <= last)
}

fn register_name(file: File, dim: u32, index: u32, per_vertex: bool) -> String {
    if per_vertex {
        format!("{}[][{index}]", file.name())
    } else if dim != 0 {
        format!("{}[{dim}][{index}]", file.name())
    } else {
        format!("{}[{index}]", file.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every register of the run `covering_run` returns has the lookup of the register asked
    /// for, so the checker's cache of the last run answers as a fresh lookup would.
    #[test]
    fn covering_runs_agree_with_lookups() {
        // Overlapping, nested and repeated ranges (declared twice: errors, but still looked up).
        let declared = [(0, 3), (2, 2), (5, 9), (6, 20), (7, 7), (30, 30), (31, 40), (31, 31), (45, 45)];
        let mut ranges: Vec<Range> = declared
            .iter()
            .enumerate()
            .map(|(decl, &(first, last))| Range {
                file: File::Temp,
                dim: 0,
                first,
                last,
                decl,
                span: Span::at(0),
                used: false,
                cover_last: 0,
                cover: 0,
            })
            .collect();
        ranges.sort_by_key(|r| (r.first, r.decl));
        let mut widest: Option<(u32, usize)> = None;
        for (position, r) in ranges.iter_mut().enumerate() {
            if widest.is_none_or(|(last, _)| r.last > last) {
                widest = Some((r.last, position));
            }
            (r.cover_last, r.cover) = widest.unwrap_or_default();
        }
        let mut runs = 0;
        for index in 0..50 {
            let expected = covering(&ranges, index);
            match covering_run(&ranges, index) {
                Some((first, last, decl)) => {
                    assert!(first <= index && index <= last, "{index}: {first}..{last}");
                    assert_eq!(Some(decl), expected, "{index}");
                    for other in first..=last {
                        assert_eq!(covering(&ranges, other), Some(decl), "{index}: {other}");
                    }
                    runs += 1;
                }
                None => assert_eq!(expected, None, "{index}"),
            }
        }
        assert_eq!(runs, 4 + 16 + 1 + 10 + 1);
    }
}
