//! TGSI printer: Mesa's `tgsi_dump` format, byte for byte (docs/tgsi-text-format.md §6).
//!
//! What the tree keeps beyond Mesa's token model is printed where Mesa's printer would put
//! it (see `docs/tgsi.md`, "Printer"): a sampling location without an interpolation mode, an
//! interpolation mode on any declaration, per-channel SVIEW return types, ArrayIDs on direct
//! brackets, BGNSUB labels, and the legacy forms (`FRAG1.1`, unindexed `IMM`, predicates,
//! `_SATNV`, destination modulation, 7.x source modifiers, `CYLWRAP_`, IMMX/RES declarations).
//!
//! Floating-point immediates use Mesa's `%10.4f` (FLT32) and `%10.8f` (FLT64) whenever that
//! text reads back to the same bits, which is always the case for text Mesa printed. A value
//! that `%10.4f` would round (e.g. `0.12345678`) is printed with the shortest decimal that
//! reads back exactly, and a NaN with a payload as its bit pattern (`0x7fc00001`), so that
//! `parse(print(tree)) == tree` holds for every tree the parser produces.

use super::ast::*;
use super::formats::FORMATS;
use super::opcodes::Opcode;
use super::parse::num;
use std::fmt::Write;

/// Printer options.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Print FLT32 immediates as `0x%08x` bit patterns (Mesa's `TGSI_DUMP_FLOAT_AS_HEX`).
    pub float_as_hex: bool,
    /// Print floating-point immediates exactly as Mesa does (`%10.4f` / `%10.8f`) even when
    /// that loses bits. Off by default: such values are printed with the shortest decimal
    /// that reads back exactly.
    pub mesa_float_rounding: bool,
}

/// Prints a program in Mesa's dump format.
pub fn print(program: &Program) -> String {
    print_with(program, PrintOptions::default())
}

/// Prints a program with options.
pub fn print_with(program: &Program, options: PrintOptions) -> String {
    let mut p = Printer { out: String::with_capacity(program.statements.len() * 40 + 16), options, program };
    p.run();
    p.out
}

struct Printer<'a> {
    out: String,
    options: PrintOptions,
    program: &'a Program,
}

impl Printer<'_> {
    fn run(&mut self) {
        let header = &self.program.header;
        self.out.push_str(header.processor.name());
        if let Some((major, minor)) = header.legacy_version {
            let _ = write!(self.out, "{major}.{minor}");
        }
        self.out.push('\n');
        let mut immediates = 0u32;
        let mut instructions = 0u32;
        let mut level: i64 = 0;
        for statement in &self.program.statements {
            match statement {
                Statement::Property(p) => self.property(p),
                Statement::Declaration(d) => self.declaration(d),
                Statement::Immediate(i) => {
                    self.immediate(i, immediates);
                    immediates += 1;
                }
                Statement::Instruction(i) => {
                    let (before, after) = indentation(i.opcode);
                    level -= before;
                    self.instruction(i, instructions, level);
                    level += after;
                    instructions += 1;
                }
            }
        }
    }

    fn property(&mut self, p: &Property) {
        self.out.push_str("PROPERTY ");
        self.out.push_str(p.name.name());
        self.out.push(' ');
        match p.value {
            PropertyValue::Primitive(v) => self.out.push_str(v.name()),
            PropertyValue::CoordOrigin(CoordOrigin::UpperLeft) => self.out.push_str("UPPER_LEFT"),
            PropertyValue::CoordOrigin(CoordOrigin::LowerLeft) => self.out.push_str("LOWER_LEFT"),
            PropertyValue::PixelCenter(PixelCenter::HalfInteger) => self.out.push_str("HALF_INTEGER"),
            PropertyValue::PixelCenter(PixelCenter::Integer) => self.out.push_str("INTEGER"),
            PropertyValue::Shader(s) => self.out.push_str(s.name()),
            PropertyValue::Uint(v) => {
                let _ = write!(self.out, "{}", v as i32);
            }
        }
        self.out.push('\n');
    }

    fn declaration(&mut self, d: &Declaration) {
        let out = &mut self.out;
        out.push_str("DCL ");
        out.push_str(d.file.name());
        if per_vertex_brackets(self.program.processor(), d) {
            out.push_str("[]");
        }
        if let Some(dim) = d.dimension {
            let _ = write!(out, "[{dim}]");
        }
        if d.first == d.last {
            let _ = write!(out, "[{}]", d.first);
        } else {
            let _ = write!(out, "[{}..{}]", d.first, d.last);
        }
        if d.usage_mask != WriteMask::XYZW {
            out.push('.');
            push_mask(out, d.usage_mask);
        }
        if let Some(id) = d.array_id {
            let _ = write!(out, ", ARRAY({id})");
        }
        if d.local {
            out.push_str(", LOCAL");
        }
        if let Some(s) = &d.semantic {
            out.push_str(", ");
            out.push_str(s.name.name());
            if s.index != 0 || matches!(s.name, SemanticName::Generic | SemanticName::Texcoord) {
                let _ = write!(out, "[{}]", s.index);
            }
            if s.stream != [0; 4] {
                let [x, y, z, w] = s.stream;
                let _ = write!(out, ", STREAM({x}, {y}, {z}, {w})");
            }
        }
        match &d.resource {
            Some(ResourceDecl::Image { target, format, writable, raw }) => {
                out.push_str(", ");
                out.push_str(target.name());
                if d.file != File::LegacyResource || *format != Format(0) {
                    out.push_str(", ");
                    push_format(out, *format);
                }
                if *writable {
                    out.push_str(", WR");
                }
                if *raw {
                    out.push_str(", RAW");
                }
            }
            Some(ResourceDecl::Buffer { atomic }) => {
                if *atomic {
                    out.push_str(", ATOMIC");
                }
            }
            Some(ResourceDecl::Memory { kind }) => {
                out.push_str(", ");
                out.push_str(kind.name());
            }
            Some(ResourceDecl::SamplerView { target, return_types }) => {
                out.push_str(", ");
                out.push_str(target.name());
                let [x, y, z, w] = *return_types;
                if x == y && y == z && z == w {
                    out.push_str(", ");
                    out.push_str(x.name());
                } else {
                    for t in return_types {
                        out.push_str(", ");
                        out.push_str(t.name());
                    }
                }
            }
            Some(ResourceDecl::ImmediateArray { .. }) | None => {}
        }
        if let Some(i) = d.interpolation {
            out.push_str(", ");
            out.push_str(i.name());
        }
        if let Some(l) = d.location.filter(|&l| l != Location::Center) {
            out.push_str(", ");
            out.push_str(l.name());
        }
        if d.cylindrical_wrap.0 != 0 {
            out.push_str(", CYLWRAP_");
            for c in d.cylindrical_wrap.components() {
                out.push(c.letter().to_ascii_uppercase());
            }
        }
        if d.invariant {
            out.push_str(", INVARIANT");
        }
        if let Some(ResourceDecl::ImmediateArray { values }) = &d.resource {
            out.push_str(" {");
            for (i, group) in values.iter().enumerate() {
                out.push_str(if i == 0 { "{" } else { ", {" });
                for (j, &bits) in group.iter().enumerate() {
                    if j > 0 {
                        out.push_str(", ");
                    }
                    push_flt32(out, bits, self.options);
                }
                out.push('}');
            }
            out.push('}');
        }
        out.push('\n');
    }

    fn immediate(&mut self, imm: &Immediate, index: u32) {
        let out = &mut self.out;
        if imm.indexed {
            let _ = write!(out, "IMM[{index}] ");
        } else {
            out.push_str("IMM ");
        }
        out.push_str(imm.ty.name());
        out.push_str(if imm.legacy_spaced_braces { " { " } else { " {" });
        let w = imm.words;
        let wide = |i: usize| u64::from(w[2 * i]) | u64::from(w[2 * i + 1]) << 32;
        match imm.ty {
            ImmediateType::Flt32 => {
                for (i, &bits) in w.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    push_flt32(out, bits, self.options);
                }
            }
            ImmediateType::Uint32 => {
                let _ = write!(out, "{}, {}, {}, {}", w[0], w[1], w[2], w[3]);
            }
            ImmediateType::Int32 => {
                let _ = write!(out, "{}, {}, {}, {}", w[0] as i32, w[1] as i32, w[2] as i32, w[3] as i32);
            }
            ImmediateType::Flt64 => {
                push_flt64(out, wide(0), self.options);
                out.push_str(", ");
                push_flt64(out, wide(1), self.options);
            }
            ImmediateType::Uint64 => {
                let _ = write!(out, "{}, {}", wide(0), wide(1));
            }
            ImmediateType::Int64 => {
                let _ = write!(out, "{}, {}", wide(0) as i64, wide(1) as i64);
            }
        }
        out.push_str(if imm.legacy_spaced_braces { " }\n" } else { "}\n" });
    }

    fn instruction(&mut self, inst: &Instruction, number: u32, level: i64) {
        let out = &mut self.out;
        let _ = write!(out, "{number:3}: ");
        for _ in 0..level.max(0) {
            out.push_str("  ");
        }
        if let Some(p) = &inst.predicate {
            out.push('(');
            if p.negate {
                out.push('!');
            }
            let _ = write!(out, "PRED[{}]", p.index);
            if p.swizzle != IDENTITY_SWIZZLE {
                out.push('.');
                push_swizzle(out, &p.swizzle);
            }
            out.push_str(") ");
        }
        out.push_str(inst.opcode.name());
        match inst.saturate {
            Saturate::None => {}
            Saturate::ZeroOne => out.push_str("_SAT"),
            Saturate::MinusPlusOne => out.push_str("_SATNV"),
        }
        if inst.precise {
            out.push_str("_PRECISE");
        }
        let mut first = true;
        let mut sep = |out: &mut String| {
            out.push_str(if first { " " } else { ", " });
            first = false;
        };
        for d in &inst.dst {
            sep(out);
            push_register(out, &d.register);
            if let Some(m) = d.modulate {
                out.push_str(m.suffix());
            }
            if d.write_mask != WriteMask::XYZW {
                out.push('.');
                push_mask(out, d.write_mask);
            }
        }
        for s in &inst.src {
            sep(out);
            push_src(out, s);
        }
        if let Some(t) = inst.texture_target {
            out.push_str(", ");
            out.push_str(t.name());
        }
        for o in &inst.texture_offsets {
            out.push_str(", ");
            out.push_str(o.file.name());
            let _ = write!(out, "[{}].", o.index);
            for c in o.swizzle {
                out.push(c.letter());
            }
        }
        let m = inst.memory;
        for (bit, name) in MemoryQualifier::NAMES.iter().enumerate() {
            if m.qualifiers & (1 << bit) != 0 {
                out.push_str(", ");
                out.push_str(name);
            }
        }
        if m.texture != TextureTarget::Buffer {
            out.push_str(", ");
            out.push_str(m.texture.name());
        }
        if m.format != Format(0) {
            out.push_str(", ");
            push_format(out, m.format);
        }
        if let Some(label) = inst.label {
            let _ = write!(out, " :{label}");
        }
        out.push('\n');
    }
}

/// Indentation levels removed before and added after an instruction.
pub fn indentation(opcode: Opcode) -> (i64, i64) {
    match opcode {
        Opcode::If | Opcode::Uif | Opcode::Bgnloop | Opcode::Bgnsub | Opcode::Bgnfor => (0, 1),
        Opcode::Else => (1, 1),
        Opcode::Endif | Opcode::Endloop | Opcode::Endsub | Opcode::Endfor => (1, 0),
        _ => (0, 0),
    }
}

/// The printer's `[]` for per-vertex inputs (GS, TCS, TES) and TCS outputs.
fn per_vertex_brackets(processor: Processor, d: &Declaration) -> bool {
    let patch = d.semantic.as_ref().is_some_and(|s| s.name.is_patch());
    match (d.file, processor) {
        (File::Input, Processor::Geom) => true,
        (File::Input, Processor::TessCtrl | Processor::TessEval) => !patch,
        (File::Output, Processor::TessCtrl) => !patch,
        _ => false,
    }
}

fn push_mask(out: &mut String, mask: WriteMask) {
    for c in mask.components() {
        out.push(c.letter());
    }
}

fn push_swizzle(out: &mut String, swizzle: &[Component]) {
    for c in swizzle {
        out.push(c.letter());
    }
}

fn push_format(out: &mut String, format: Format) {
    match FORMATS.get(usize::from(format.0)) {
        Some(name) => {
            out.push_str("PIPE_FORMAT_");
            out.push_str(name);
        }
        None => {
            let _ = write!(out, "{}", format.0);
        }
    }
}

fn push_index(out: &mut String, index: &Index) {
    out.push('[');
    match index.indirect {
        Some(ind) => {
            let _ = write!(out, "{}[{}].{}", ind.file.name(), ind.index, ind.component.letter());
            if index.value > 0 {
                let _ = write!(out, "+{}", index.value);
            } else if index.value < 0 {
                let _ = write!(out, "{}", index.value);
            }
        }
        None => {
            let _ = write!(out, "{}", index.value);
        }
    }
    out.push(']');
    if index.array_id != 0 {
        let _ = write!(out, "({})", index.array_id);
    }
}

fn push_register(out: &mut String, r: &Register) {
    out.push_str(r.file.name());
    if let Some(dim) = &r.dimension {
        push_index(out, dim);
    }
    push_index(out, &r.index);
}

fn push_src(out: &mut String, s: &SrcOperand) {
    let Some(legacy) = &s.legacy else {
        if s.negate {
            out.push('-');
        }
        if s.absolute {
            out.push('|');
        }
        push_register(out, &s.register);
        if s.swizzle != IDENTITY_SWIZZLE {
            out.push('.');
            push_swizzle(out, &s.swizzle);
        }
        if s.absolute {
            out.push('|');
        }
        return;
    };
    if legacy.outer_negate {
        out.push_str("-(");
    }
    if s.absolute {
        out.push('|');
    }
    if legacy.scale2 {
        out.push_str("2*(");
    }
    if legacy.bias {
        out.push('(');
    }
    if legacy.complement {
        out.push_str("1-(");
    }
    if s.negate {
        out.push('-');
    }
    push_register(out, &s.register);
    let ext_plain = legacy
        .extended_swizzle
        .is_some_and(|e| e.iter().all(|i| !i.negate && matches!(i.source, ExtendedComponent::Component(_))));
    if s.swizzle != IDENTITY_SWIZZLE || ext_plain {
        out.push('.');
        push_swizzle(out, &s.swizzle);
    }
    if let Some(ext) = &legacy.extended_swizzle {
        out.push('.');
        for item in ext {
            if item.negate {
                out.push('-');
            }
            out.push(match item.source {
                ExtendedComponent::Component(c) => c.letter(),
                ExtendedComponent::Zero => '0',
                ExtendedComponent::One => '1',
            });
        }
    }
    if legacy.complement {
        out.push(')');
    }
    if legacy.bias {
        out.push_str(")-.5");
    }
    if legacy.scale2 {
        out.push(')');
    }
    if s.absolute {
        out.push('|');
    }
    if legacy.outer_negate {
        out.push(')');
    }
}

/// A FLT32 immediate value as Mesa prints it (see the module documentation).
pub fn push_flt32(out: &mut String, bits: u32, options: PrintOptions) {
    if options.float_as_hex {
        let _ = write!(out, "0x{bits:08x}");
        return;
    }
    let value = f32::from_bits(bits);
    if value.is_nan() {
        if bits & 0x7fff_ffff == 0x7fc0_0000 || options.mesa_float_rounding {
            out.push_str(if bits >> 31 != 0 { "      -nan" } else { "       nan" });
        } else {
            let _ = write!(out, "0x{bits:08x}");
        }
        return;
    }
    let start = out.len();
    let _ = write!(out, "{:10.4}", f64::from(value));
    let reads_back =
        options.mesa_float_rounding || num::c_float_to_f32_bits(out[start..].trim_start().as_bytes()) == Some(bits);
    if !reads_back {
        out.truncate(start);
        let _ = write!(out, "{value:>10}");
    }
}

/// A FLT64 immediate value: `%10.8f`, or the shortest exact decimal when that would round.
pub fn push_flt64(out: &mut String, bits: u64, options: PrintOptions) {
    let value = f64::from_bits(bits);
    if value.is_nan() {
        out.push_str(if bits >> 63 != 0 { "      -nan" } else { "       nan" });
        return;
    }
    let start = out.len();
    let _ = write!(out, "{value:10.8}");
    let reads_back =
        options.mesa_float_rounding || num::c_float_to_f64_bits(out[start..].trim_start().as_bytes()) == Some(bits);
    if !reads_back {
        out.truncate(start);
        let _ = write!(out, "{value:>10}");
    }
}
