//! Preparing a program for execution: the checker, the constructs without a meaning, the
//! matching of control-flow instructions and the register layout. Done once per run, in time
//! linear in the program size (plus sorting the declarations).

use super::InterpError;
use crate::diag::{Diagnostics, Span};
use crate::exec::image::{Format, Shape};
use crate::tgsi::ast::*;
use crate::tgsi::opcodes::{FlowRole, Opcode, OperandType};
use std::collections::HashMap;

/// Where control goes from a control-flow instruction.
#[derive(Clone, Debug, Default)]
pub struct Links {
    /// IF/UIF: the ELSE (or the ENDIF when there is none). ELSE: the ENDIF. Loop begin: the
    /// loop end. Loop end: the loop begin. SWITCH: the ENDSWITCH. CASE/DEFAULT: the next
    /// CASE/DEFAULT/ENDSWITCH of the same SWITCH. BGNSUB: the ENDSUB. CAL: the BGNSUB.
    pub target: usize,
    /// IF/UIF: the ENDIF.
    pub end: usize,
    /// SWITCH: its CASE and DEFAULT instructions in order.
    pub cases: Vec<usize>,
}

/// A declared register range.
#[derive(Clone, Copy, Debug)]
pub struct Range {
    pub first: u32,
    pub last: u32,
    pub array_id: u32,
}

/// A declared image: `DCL IMAGE[i], target, format`.
#[derive(Clone, Copy, Debug)]
pub struct ImageDecl {
    pub target: TextureTarget,
    pub shape: Shape,
    /// `None` for `PIPE_FORMAT_NONE` (the bound image decides).
    pub format: Option<Format>,
}

/// A sampler view (SVIEW or legacy RES declared with a return type).
#[derive(Clone, Copy, Debug)]
pub struct View {
    pub target: TextureTarget,
    pub return_type: ReturnType,
}

pub struct Prepared<'a> {
    pub insts: Vec<&'a Instruction>,
    pub links: Vec<Links>,
    /// Declared ranges per (file, dimension).
    pub ranges: HashMap<(File, u32), Vec<Range>>,
    /// Register count per (file, dimension): one more than the largest declared index.
    pub sizes: HashMap<(File, u32), u32>,
    pub declarations: Vec<&'a Declaration>,
    pub immediates: Vec<[u32; 4]>,
    /// IMMX arrays: values per element index.
    pub immediate_arrays: HashMap<u32, [u32; 4]>,
    pub views: HashMap<u32, View>,
    pub buffers: Vec<u32>,
    pub images: HashMap<u32, ImageDecl>,
    pub processor: Processor,
}

fn unsupported(span: Span, message: impl Into<String>) -> InterpError {
    InterpError::unsupported(span, message)
}

impl<'a> Prepared<'a> {
    pub fn new(program: &'a Program) -> Result<Prepared<'a>, InterpError> {
        let diags = crate::tgsi::check(program);
        if diags.iter().any(|d| d.is_error()) {
            return Err(InterpError::Check(Diagnostics(diags.into_iter().filter(|d| d.is_error()).collect())));
        }
        let processor = program.processor();
        if !matches!(processor, Processor::Vert | Processor::Frag | Processor::Comp) {
            return Err(unsupported(
                program.header.span,
                format!("{} shaders are not supported: the interpreter runs VERT, FRAG and COMP", processor.name()),
            ));
        }
        let mut p = Prepared {
            insts: program.instructions().collect(),
            links: Vec::new(),
            ranges: HashMap::new(),
            sizes: HashMap::new(),
            declarations: program.declarations().collect(),
            immediates: program.immediates().map(|i| i.words).collect(),
            immediate_arrays: HashMap::new(),
            views: HashMap::new(),
            buffers: Vec::new(),
            images: HashMap::new(),
            processor,
        };
        p.declare()?;
        p.validate()?;
        p.link()?;
        Ok(p)
    }

    fn declare(&mut self) -> Result<(), InterpError> {
        for d in &self.declarations {
            let dim = d.dimension.unwrap_or(0);
            match d.file {
                File::Image => {
                    let decl = image_decl(d)?;
                    for i in d.first..=d.last {
                        self.images.insert(i, decl);
                    }
                }
                File::HwAtomic | File::ConstBuf => {
                    return Err(unsupported(
                        d.span,
                        format!(
                            "`{}` registers are not supported: the interpreter has no model of them",
                            d.file.name()
                        ),
                    ));
                }
                File::Memory => {
                    if let Some(ResourceDecl::Memory { kind }) = d.resource
                        && kind != MemoryKind::Shared
                    {
                        return Err(unsupported(
                            d.span,
                            format!("`MEMORY, {}` is not supported: only SHARED memory is modelled", kind.name()),
                        ));
                    }
                }
                File::LegacyResource => match &d.resource {
                    Some(ResourceDecl::SamplerView { target, return_types }) => {
                        for i in d.first..=d.last {
                            self.views.insert(i, View { target: target.canonical(), return_type: return_types[0] });
                        }
                    }
                    _ => {
                        return Err(unsupported(
                            d.span,
                            "writable `RES` resources (Mesa 9.0 – 11.1) are not supported: they are images",
                        ));
                    }
                },
                File::SamplerView => {
                    if let Some(ResourceDecl::SamplerView { target, return_types }) = &d.resource {
                        for i in d.first..=d.last {
                            self.views.insert(i, View { target: target.canonical(), return_type: return_types[0] });
                        }
                    }
                }
                File::Buffer => self.buffers.extend(d.first..=d.last),
                File::LegacyImmediateArray => {
                    if let Some(ResourceDecl::ImmediateArray { values }) = &d.resource {
                        for (i, v) in values.iter().enumerate() {
                            self.immediate_arrays.insert(d.first + i as u32, *v);
                        }
                    }
                }
                _ => {}
            }
            self.ranges.entry((d.file, dim)).or_default().push(Range {
                first: d.first,
                last: d.last,
                array_id: d.array_id.unwrap_or(0),
            });
            let size = self.sizes.entry((d.file, dim)).or_insert(0);
            *size = (*size).max(d.last.saturating_add(1));
        }
        self.buffers.sort_unstable();
        self.buffers.dedup();
        let imm = self.immediates.len() as u32;
        if imm > 0 {
            self.sizes.insert((File::Immediate, 0), imm);
            self.ranges.insert((File::Immediate, 0), vec![Range { first: 0, last: imm - 1, array_id: 0 }]);
        }
        for r in self.ranges.values_mut() {
            r.sort_by_key(|r| r.first);
        }
        Ok(())
    }

    /// Rejects, before anything runs, every construct without a defined meaning.
    fn validate(&self) -> Result<(), InterpError> {
        for inst in &self.insts {
            let op = inst.opcode.canonical();
            let name = inst.opcode.name();
            let span = inst.opcode_span;
            let no_meaning = |why: &str| Err(unsupported(span, format!("`{name}` {why}")));
            match op {
                Opcode::Index => return no_meaning("(EXT_vertex_shader) was never given semantics"),
                Opcode::Noise1 | Opcode::Noise2 | Opcode::Noise3 | Opcode::Noise4 => {
                    return no_meaning("was never specified or implemented (GLSL noise)");
                }
                Opcode::Pusha | Opcode::Popa => return no_meaning("(an address stack) was never specified"),
                Opcode::Ara => return no_meaning("(NV address-register add) was never specified"),
                Opcode::Bra => return no_meaning("is an unstructured branch, which has no defined target in TGSI"),
                Opcode::Ifc => return no_meaning("(D3D ifc) was never specified: its comparison is unknown"),
                Opcode::Loop | Opcode::EndloopLegacy => {
                    return no_meaning("(the Mesa 7.5 NV counted loop) carries no loop operands in text");
                }
                Opcode::Callnz => {
                    return no_meaning("has no call target: the text form of CALLNZ never carried a label");
                }
                Opcode::Emit | Opcode::Endprim => return no_meaning("belongs to geometry shaders"),
                Opcode::Cal if inst.label.is_none() => return no_meaning("has no target label"),
                _ => {}
            }
            if inst.texture_target.map(TextureTarget::canonical) == Some(TextureTarget::Unknown) {
                return Err(unsupported(span, format!("`{name}` with texture target UNKNOWN has no meaning")));
            }
            let info = inst.opcode.info();
            for (i, s) in inst.src.iter().enumerate() {
                self.operand_file(s.register.file, s.span)?;
                let ty = info.src_types.get(i).copied();
                // Bindless images (a handle in TEMP/CONST) are modelled for the memory opcodes.
                let bindless_image = i == 0 && super::mem::is_memory(op) && op != Opcode::Resq;
                if matches!(ty, Some(OperandType::Samp | OperandType::Sview | OperandType::Res))
                    && matches!(s.register.file, File::Temp | File::Const)
                    && !bindless_image
                {
                    return Err(unsupported(
                        s.span,
                        "bindless handles (a sampler or resource in TEMP/CONST) are not supported",
                    ));
                }
                for ind in
                    [s.register.index.indirect, s.register.dimension.and_then(|d| d.indirect)].into_iter().flatten()
                {
                    self.operand_file(ind.file, s.span)?;
                }
                // Indirect SAMP, SVIEW (tex.rs), IMAGE and BUFFER (mem.rs) indices are resolved
                // per lane; other resources, and indirect dimensions, are not modelled.
                let indirect_dimension = s.register.dimension.is_some_and(|d| d.indirect.is_some());
                if matches!(ty, Some(OperandType::Samp | OperandType::Sview | OperandType::Res))
                    && s.register.file != File::Image
                    && (indirect_dimension
                        || (s.register.index.indirect.is_some()
                            && !matches!(s.register.file, File::Sampler | File::SamplerView | File::Buffer)))
                {
                    return Err(unsupported(
                        s.span,
                        "indirectly addressed resources other than SAMP, SVIEW, IMAGE and BUFFER (and indirect \
                         dimensions) are not supported",
                    ));
                }
            }
            for d in &inst.dst {
                self.operand_file(d.register.file, d.span)?;
            }
            for o in &inst.texture_offsets {
                self.operand_file(o.file, o.span)?;
            }
        }
        Ok(())
    }

    fn operand_file(&self, file: File, span: Span) -> Result<(), InterpError> {
        match file {
            File::HwAtomic => Err(unsupported(span, "`HWATOMIC` operands are not supported")),
            File::ConstBuf => Err(unsupported(span, "`CONSTBUF` operands are not supported")),
            _ => Ok(()),
        }
    }

    /// Matches IF/ELSE/ENDIF, loops, switches and subroutines (the checker guarantees they
    /// nest), and resolves CAL labels.
    fn link(&mut self) -> Result<(), InterpError> {
        let n = self.insts.len();
        self.links = vec![Links::default(); n];
        let mut stack: Vec<usize> = Vec::new();
        let mut switch_cases: Vec<Vec<usize>> = Vec::new();
        let bad = |i: usize, insts: &[&Instruction]| {
            InterpError::runtime(insts[i].opcode_span, format!("`{}` does not nest", insts[i].opcode.name()))
        };
        for i in 0..n {
            let inst = self.insts[i];
            match inst.opcode.info().flow {
                Some(FlowRole::If) | Some(FlowRole::LoopBegin) | Some(FlowRole::SubBegin) => stack.push(i),
                Some(FlowRole::Switch) => {
                    stack.push(i);
                    switch_cases.push(Vec::new());
                }
                Some(FlowRole::Else) => {
                    let open = *stack.last().ok_or_else(|| bad(i, &self.insts))?;
                    self.links[open].target = i;
                    *stack.last_mut().ok_or_else(|| bad(i, &self.insts))? = i;
                }
                Some(FlowRole::EndIf) => {
                    let open = stack.pop().ok_or_else(|| bad(i, &self.insts))?;
                    if self.insts[open].opcode.info().flow == Some(FlowRole::Else) {
                        self.links[open].target = i;
                    } else {
                        self.links[open].target = i;
                        self.links[open].end = i;
                    }
                }
                Some(FlowRole::LoopEnd) => {
                    let open = stack.pop().ok_or_else(|| bad(i, &self.insts))?;
                    self.links[open].target = i;
                    self.links[i].target = open;
                }
                Some(FlowRole::SubEnd) => {
                    let open = stack.pop().ok_or_else(|| bad(i, &self.insts))?;
                    self.links[open].target = i;
                }
                Some(FlowRole::Case) | Some(FlowRole::Default) => {
                    switch_cases.last_mut().ok_or_else(|| bad(i, &self.insts))?.push(i);
                }
                Some(FlowRole::EndSwitch) => {
                    let open = stack.pop().ok_or_else(|| bad(i, &self.insts))?;
                    let cases = switch_cases.pop().unwrap_or_default();
                    self.links[open].target = i;
                    for w in 0..cases.len() {
                        self.links[cases[w]].target = cases.get(w + 1).copied().unwrap_or(i);
                    }
                    self.links[open].cases = cases;
                }
                _ => {}
            }
        }
        if let Some(&open) = stack.last() {
            return Err(bad(open, &self.insts));
        }
        // An IF whose target is an ELSE ends where the ELSE ends.
        for i in 0..n {
            if self.insts[i].opcode.info().flow == Some(FlowRole::If) {
                let t = self.links[i].target;
                if self.insts.get(t).is_some_and(|x| x.opcode.info().flow == Some(FlowRole::Else)) {
                    self.links[i].end = self.links[t].target;
                }
            }
        }
        for i in 0..n {
            let inst = self.insts[i];
            if inst.opcode.info().flow == Some(FlowRole::Call) {
                let Some(label) = inst.label else { continue };
                let label = label as usize;
                let is_sub =
                    |j: usize| self.insts.get(j).is_some_and(|x| x.opcode.info().flow == Some(FlowRole::SubBegin));
                let target = if is_sub(label) {
                    label
                } else if label > 0 && is_sub(label - 1) {
                    label - 1
                } else {
                    return Err(unsupported(
                        inst.opcode_span,
                        format!(
                            "`{}` :{label} does not name a BGNSUB (neither instruction {label} nor the one before it)",
                            inst.opcode.name()
                        ),
                    ));
                };
                self.links[i].target = target;
            }
        }
        Ok(())
    }

    /// Whether `index` is inside the declaration with `array_id` (any declaration of the
    /// file when it is 0).
    pub fn in_range(&self, file: File, dim: u32, index: i64, array_id: u32) -> bool {
        if index < 0 {
            return false;
        }
        let Some(ranges) = self.ranges.get(&(file, dim)) else { return false };
        let index = index as u64;
        ranges
            .iter()
            .any(|r| (array_id == 0 || r.array_id == array_id) && (r.first as u64..=r.last as u64).contains(&index))
    }

    pub fn size(&self, file: File, dim: u32) -> u32 {
        self.sizes.get(&(file, dim)).copied().unwrap_or(0)
    }
}

/// The model of a `DCL IMAGE` (RAW images, shadow targets and formats OpenGL does not allow for
/// images are rejected, as the compiler rejects them).
fn image_decl(d: &Declaration) -> Result<ImageDecl, InterpError> {
    let Some(ResourceDecl::Image { target, format, raw, .. }) = d.resource else {
        return Err(unsupported(d.span, "an IMAGE declaration without a target"));
    };
    if raw {
        return Err(unsupported(d.span, "RAW images (byte-addressed, without a format) are not modelled"));
    }
    let shape = Shape::of_target(target)
        .ok_or_else(|| unsupported(d.span, format!("images of target {} have no meaning", target.name())))?;
    let name = crate::tgsi::formats::FORMATS.get(usize::from(format.0)).copied().unwrap_or("NONE");
    let format =
        match name {
            "NONE" => None,
            _ => Some(Format::by_name(name).ok_or_else(|| {
                unsupported(d.span, format!("PIPE_FORMAT_{name} is not an image format OpenGL allows"))
            })?),
        };
    Ok(ImageDecl { target: target.canonical(), shape, format })
}
